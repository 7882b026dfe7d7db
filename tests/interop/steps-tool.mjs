// SPDX-License-Identifier: MIT
// tests/interop/steps-tool.mjs: the tool "steps" of the SDK v2 test servers
// (tests/interop/v2-dual-stdio.mjs, tests/interop/v2-dual-http.mjs), one
// copy for both: registerSteps(server) adds it to an McpServer.
// Progress (notifications/progress to the request's progressToken, one per
// step), then the result; with "hold" it then waits until the request is
// aborted (the client cancelled it: notifications/cancelled, or its HTTP
// stream closed) and appends "aborted" to $ABORT_LOG.
import fs from 'node:fs';
import { fromJsonSchema } from '@modelcontextprotocol/server';

export const registerSteps = (server) => {
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
};
