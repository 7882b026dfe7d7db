// SPDX-License-Identifier: MIT
// tests/interop/v2-dual-http.mjs: a server on the official TypeScript SDK v2
// (@modelcontextprotocol/server createMcpHandler, its own code for both
// eras) behind plain node:http (tests/interop/fetch-bridge.mjs) on
// 127.0.0.1 and a free port, for
// tests/check_era_http.c.  Prints "MCPCONN_TEST_PORT=<port>" once listening;
// exits when stdin closes.
//   LEGACY=reject   modern-only (legacy requests are refused)
//   RECORD=FILE     appends one JSON line per HTTP request: its method, the
//                   HTTP version, the MCP headers and the body, so tests see
//                   the wire (and "broken" for a request BREAK broke)
//   H2=1            HTTP/2 over cleartext (h2c, prior knowledge; node:http2)
//                   instead of HTTP/1.1
//   BREAK=LIST      breaks response streams, for tests/check_era_http.c: a
//                   comma-separated list of HOW@METHOD or HOW@METHOD:NAME
//                   (NAME: params.name, or params.uri), each entry breaking
//                   one arrival of that request (the first; an entry given
//                   twice, the first two).  The request is served (a tool
//                   runs), then instead of its answer: HOW "reset" sends a
//                   200 event-stream head and a comment, then resets
//                   (HTTP/1.1: the connection closes; HTTP/2: RST_STREAM
//                   INTERNAL_ERROR); "eof" ends the event stream there,
//                   without the response; "pass" serves it as usual (to
//                   break a later arrival and not this one).
// Tool "steps" (tests/interop/steps-tool.mjs) reports progress and, with
// hold, waits to be cancelled ($ABORT_LOG).  Tool "safe" echoes like "echo"
// and is annotated idempotentHint; "touch" {uri} publishes
// notifications/resources/updated for uri to the listens subscribed to it
// (resources.subscribe is advertised).
// Tools "grow" (adds the tool "extra" to every instance made from then on
// and publishes tools/list_changed to the open subscriptions/listen
// streams) and "drop" (breaks every open listen stream off, no result),
// for tests/check_listen.c.
import http from 'node:http';
import http2 from 'node:http2';
import fs from 'node:fs';
import { listenAndReport, pipeResponse, readBody, toRequest } from './fetch-bridge.mjs';
import { registerSteps } from './steps-tool.mjs';
import { McpServer, acceptedContent, createMcpHandler, fromJsonSchema, inputRequired } from '@modelcontextprotocol/server';

let grown = false;
const listens = new Set(); // the responses of open subscriptions/listen POSTs
const factory = () => {
  const server = new McpServer({ name: 'v2-dual-http', version: '1.0.0' },
                               { capabilities: { tools: {}, resources: { subscribe: true } } });
  const text = fromJsonSchema({ type: 'object', properties: { text: { type: 'string' } },
                                required: ['text'] });
  server.registerTool('echo', { description: 'echo', inputSchema: text },
    async ({ text }) => ({ content: [{ type: 'text', text }] }));
  server.registerTool('safe', { description: 'echo, safe to repeat', inputSchema: text,
                                annotations: { idempotentHint: true } },
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
  registerSteps(server); // progress; with hold, waits to be cancelled
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
  server.registerTool('touch', { description: 'resources/updated for uri', inputSchema:
      fromJsonSchema({ type: 'object', properties: { uri: { type: 'string' } } }) },
    async ({ uri }) => { handler.notify.resourceUpdated(uri);
                         return { content: [{ type: 'text', text: 'touched' }] }; });
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
const h2 = process.env.H2 === '1';
const breaks = new Map(); // "METHOD" or "METHOD:NAME" -> the HOWs left, in order
for (const e of (process.env.BREAK || '').split(',').filter(Boolean)) {
  const at = e.indexOf('@');
  const key = e.slice(at + 1);
  if (!breaks.has(key)) breaks.set(key, []);
  breaks.get(key).push(e.slice(0, at));
}
// The HOW that breaks this request's answer, or undefined.
const breakOf = (body) => {
  let m;
  try { m = JSON.parse(body); } catch { return undefined; }
  const name = m?.params?.name ?? m?.params?.uri;
  for (const key of [name !== undefined ? `${m.method}:${name}` : null, m?.method]) {
    const left = key && breaks.get(key);
    if (left && left.length) return left.shift();
  }
  return undefined;
};
const serve = async (req, res) => {
  const body = await readBody(req);
  let broken = req.method === 'POST' ? breakOf(body.toString('utf8')) : undefined;
  if (broken === 'pass') broken = undefined; // this arrival is served as usual
  if (record) {
    const h = {};
    for (const [k, v] of Object.entries(req.headers))
      if (k.startsWith('mcp-')) h[k] = v;
    fs.appendFileSync(record, JSON.stringify({ method: req.method, http: req.httpVersion,
                                               headers: h, body: body.toString('utf8'),
                                               broken }) + '\n');
  }
  let out;
  try {
    out = await handler.fetch(toRequest(req, body));
  } catch (e) {
    res.writeHead(500).end(String(e));
    return;
  }
  if (broken) {
    // Served (the tool ran, its answer is in out.body), but the answer
    // never arrives: a proxy that dropped the stream, a crashed worker.
    if (out.body) await out.body.cancel().catch(() => {});
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    if (broken === 'eof') { res.end(); return; }
    res.write(': about to break\n\n', () => {
      if (h2) res.stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
      else res.socket.destroy();
    });
    return;
  }
  const listen = req.headers['mcp-method'] === 'subscriptions/listen';
  if (listen) { listens.add(res); res.on('close', () => listens.delete(res)); }
  await pipeResponse(req, res, out, h2);
};
const srv = h2 ? http2.createServer(serve) : http.createServer(serve);
listenAndReport(srv);
