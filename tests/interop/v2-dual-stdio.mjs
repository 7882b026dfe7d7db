// SPDX-License-Identifier: MIT
// tests/interop/v2-dual-stdio.mjs: a server on the official TypeScript SDK v2
// (@modelcontextprotocol/server) serving both eras over stdio (serveStdio);
// LEGACY=reject makes it modern-only (initialize gets -32022); it
// records nothing itself: tests/era/tee-stdin.sh records what it is sent.
// Tool "grow" adds a tool "extra" at runtime (list_changed); "steps"
// reports progress and, with hold, waits to be cancelled ($ABORT_LOG).
import { McpServer, acceptedContent, fromJsonSchema, inputRequired } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import fs from 'node:fs';
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
  // Progress (notifications/progress to the request's progressToken, one
  // per step), then the result; with "hold" it then waits until the
  // request is aborted (the client cancelled it: notifications/cancelled,
  // or its HTTP stream closed) and appends "aborted" to $ABORT_LOG.
  server.registerTool('steps', { description: 'reports progress', inputSchema: fromJsonSchema({
      type: 'object', properties: { n: { type: 'integer' }, hold: { type: 'boolean' } } }) },
    async ({ n, hold }, ctx) => {
      const total = n ?? 3, token = ctx.mcpReq._meta?.progressToken;
      for (let i = 1; i <= total; i++)
        if (token !== undefined)
          await ctx.mcpReq.notify({ method: 'notifications/progress',
            params: { progressToken: token, progress: i, total, message: `step ${i}` } });
      if (hold) {
        const sig = ctx.mcpReq.signal;
        await new Promise((r) => (sig.aborted ? r() : sig.addEventListener('abort', r)));
        if (process.env.ABORT_LOG) fs.appendFileSync(process.env.ABORT_LOG, 'aborted\n');
      }
      return { content: [{ type: 'text', text: `stepped ${total}` }] };
    });
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
