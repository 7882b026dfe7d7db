// SPDX-License-Identifier: MIT
// tests/interop/v2-dual-http.mjs: a server on the official TypeScript SDK v2
// (@modelcontextprotocol/server createMcpHandler, its own code for both
// eras) behind plain node:http on 127.0.0.1 and a free port, for
// tests/check_era_http.c.  Prints "MCPCONN_TEST_PORT=<port>" once listening;
// exits when stdin closes.
//   LEGACY=reject   modern-only (legacy requests are refused)
//   RECORD=FILE     appends one JSON line per HTTP request: its method, the
//                   MCP headers and the body, so tests see the wire
// Tools "grow" (adds the tool "extra" to every instance made from then on
// and publishes tools/list_changed to the open subscriptions/listen
// streams) and "drop" (breaks every open listen stream off, no result),
// for tests/check_listen.c.
import http from 'node:http';
import fs from 'node:fs';
import { McpServer, acceptedContent, createMcpHandler, fromJsonSchema, inputRequired } from '@modelcontextprotocol/server';

let grown = false;
const listens = new Set(); // the responses of open subscriptions/listen POSTs
const factory = () => {
  const server = new McpServer({ name: 'v2-dual-http', version: '1.0.0' },
                               { capabilities: { tools: {}, resources: {} } });
  const text = fromJsonSchema({ type: 'object', properties: { text: { type: 'string' } },
                                required: ['text'] });
  server.registerTool('echo', { description: 'echo', inputSchema: text },
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
  // A name outside the header-safe set: its Mcp-Name goes base64-encoded.
  server.registerTool('écho', { description: 'echo, with an accent', inputSchema: text },
    async ({ text }) => ({ content: [{ type: 'text', text: 'é' + text }] }));
  server.registerTool('slow', { description: 'waits for ms', inputSchema:
      fromJsonSchema({ type: 'object', properties: { ms: { type: 'integer' } } }) },
    async ({ ms }) => { await new Promise((r) => setTimeout(r, ms ?? 1000));
                        return { content: [{ type: 'text', text: 'slept' }] }; });
  // x-mcp-header (SEP-2243): the SDK checks that each Mcp-Param-* header
  // matches the argument, and refuses a call whose headers are missing.
  server.registerTool('route', { description: 'routes on headers', inputSchema: fromJsonSchema({
      type: 'object', properties: {
        region: { type: 'string', 'x-mcp-header': 'Region' },
        n: { type: 'integer', 'x-mcp-header': 'N' },
        flag: { type: 'boolean', 'x-mcp-header': 'Flag' },
        note: { type: 'string' } } }) },
    async ({ region }) => ({ content: [{ type: 'text', text: `routed ${region}` }] }));
  // An annotation that is no HTTP token: clients must leave the tool out.
  server.registerTool('badhdr', { description: 'invalid x-mcp-header', inputSchema: fromJsonSchema({
      type: 'object', properties: { a: { type: 'string', 'x-mcp-header': 'has space' } } }) },
    async () => ({ content: [{ type: 'text', text: 'should not be called' }] }));
  server.registerTool('grow', { description: 'adds the tool "extra"', inputSchema:
      fromJsonSchema({ type: 'object', properties: {} }) },
    async () => { grown = true; handler.notify.toolsChanged();
                  return { content: [{ type: 'text', text: 'grown' }] }; });
  server.registerTool('drop', { description: 'breaks the listen streams off', inputSchema:
      fromJsonSchema({ type: 'object', properties: {} }) },
    async () => { for (const r of listens) r.destroy(); listens.clear();
                  return { content: [{ type: 'text', text: 'dropped' }] }; });
  if (grown)
    server.registerTool('extra', { description: 'added at runtime', inputSchema:
        fromJsonSchema({ type: 'object', properties: {} }) },
      async () => ({ content: [{ type: 'text', text: 'extra' }] }));
  server.registerResource('note', 'mem://note', { mimeType: 'text/plain' },
    async (uri) => ({ contents: [{ uri: uri.href, text: 'a note' }] }));
  return server;
};
const handler = createMcpHandler(factory, process.env.LEGACY ? { legacy: process.env.LEGACY } : {});
const record = process.env.RECORD;

const srv = http.createServer(async (req, res) => {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const body = Buffer.concat(chunks);
  if (record) {
    const h = {};
    for (const [k, v] of Object.entries(req.headers))
      if (k.startsWith('mcp-')) h[k] = v;
    fs.appendFileSync(record, JSON.stringify({ method: req.method, headers: h,
                                               body: body.toString('utf8') }) + '\n');
  }
  const url = `http://${req.headers.host}${req.url}`;
  const init = { method: req.method, headers: req.headers };
  if (req.method !== 'GET' && req.method !== 'HEAD') init.body = body;
  let out;
  try {
    out = await handler.fetch(new Request(url, init));
  } catch (e) {
    res.writeHead(500).end(String(e));
    return;
  }
  res.writeHead(out.status, Object.fromEntries(out.headers.entries()));
  const listen = req.headers['mcp-method'] === 'subscriptions/listen';
  if (listen) { listens.add(res); res.on('close', () => listens.delete(res)); }
  if (!out.body) { res.end(); return; }
  const reader = out.body.getReader();
  req.on('close', () => reader.cancel().catch(() => {}));
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      res.write(value);
    }
  } catch { /* the client went away */ }
  res.end();
});
srv.listen(0, '127.0.0.1', () => {
  process.stdout.write(`MCPCONN_TEST_PORT=${srv.address().port}\n`);
});
process.stdin.on('end', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));
process.stdin.resume();
