// SPDX-License-Identifier: MIT
// tests/interop/v2-dual-stdio.mjs: a server on the official TypeScript SDK v2
// (@modelcontextprotocol/server) serving both eras over stdio (serveStdio);
// LEGACY=reject makes it modern-only (initialize gets -32022); it
// records nothing itself: tests/era/tee-stdin.sh records what it is sent.
// Tool "grow" adds a tool "extra" at runtime (list_changed); "steps"
// (tests/interop/steps-tool.mjs) reports progress and, with hold, waits to
// be cancelled ($ABORT_LOG).
import { McpServer, acceptedContent, fromJsonSchema, inputRequired } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { registerSteps } from './steps-tool.mjs';
serveStdio(() => {
  const server = new McpServer({ name: 'v2-dual', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.registerTool('echo', { description: 'echo', inputSchema: fromJsonSchema({type:'object',properties:{text:{type:'string'}},required:['text']}) },
    async ({ text }) => ({ content: [{ type: 'text', text }] }));
  // Multi-round-trip (SEP-2322): on 2026-07-28 an input_required result the
  // client answers and retries; on 2025-11-25 the SDK's legacy shim sends
  // the same elicitation as a server->client request.
  server.registerTool('confirm', { description: 'asks the user first', inputSchema:
      fromJsonSchema({ type: 'object', properties: {} }) },
    async (_args, ctx) => {
      const got = acceptedContent(ctx.mcpReq.inputResponses, 'c');
      if (got === undefined)
        return inputRequired({ inputRequests: { c: inputRequired.elicit({ message: 'Go on?',
          requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } } }) },
          requestState: 'v2-state' });
      return { content: [{ type: 'text', text: `confirmed ${JSON.stringify(got)}` }] };
    });
  registerSteps(server); // progress; with hold, waits to be cancelled
  // A tool added at runtime: the SDK sends tools/list_changed, on a modern
  // connection only on an open subscriptions/listen (tests/check_listen.c).
  server.registerTool('grow', { description: 'adds the tool "extra"', inputSchema:
      fromJsonSchema({ type: 'object', properties: {} }) },
    async () => {
      server.registerTool('extra', { description: 'added at runtime', inputSchema:
          fromJsonSchema({ type: 'object', properties: {} }) },
        async () => ({ content: [{ type: 'text', text: 'extra' }] }));
      return { content: [{ type: 'text', text: 'grown' }] };
    });
  return server;
}, process.env.LEGACY ? { legacy: process.env.LEGACY } : {});
