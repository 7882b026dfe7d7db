// SPDX-License-Identifier: MIT
// tests/era/era-http.mjs: a legacy (2025-11-25) Streamable HTTP server on
// plain node:http, sessionless, JSON answers, that answers the modern probe
// (a POST whose body is server/discover) the way deployed legacy servers
// do (docs: ../shared/reference §2.4), for tests/check_era_http.c.
//   PROBE=text400     400 text/plain (go-sdk 1.6 on an unknown version)
//   PROBE=rpc32600    400 JSON-RPC -32600 "Missing session ID" (Python SDK v1)
//   PROBE=rpc32601    200 JSON-RPC -32601 method not found
//   PROBE=404         404 "Invalid session ID" (a hosted server)
//   PROBE=legacylist  200 DiscoverResult listing 2025-11-25 only (go-sdk 1.7)
//   PROBE=close       the connection is destroyed, no answer (not legacy
//                     evidence: a network error)
//   PROBE=503         503 text/plain (not evidence: a server error)
// Then: initialize, notifications/initialized, tools/list, tools/call
// "echo".  Every POST body is appended to $RECORD, one line each.  Prints
// MCPCONN_TEST_PORT=<port>; exits when stdin closes.
import fs from 'node:fs';
import http from 'node:http';

const probe = process.env.PROBE || 'text400';
const record = process.env.RECORD;
const reply = (res, status, obj, type = 'application/json') => {
  const body = typeof obj === 'string' ? obj : JSON.stringify(obj);
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
};
const ok = (id, result) => ({ jsonrpc: '2.0', id, result });
const fail = (id, code, message) => ({ jsonrpc: '2.0', id, error: { code, message } });

const srv = http.createServer((req, res) => {
  if (req.method !== 'POST') return res.writeHead(405, { Allow: 'POST' }).end();
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    if (record) fs.appendFileSync(record, body.replace(/\n/g, ' ') + '\n');
    let m;
    try { m = JSON.parse(body); } catch { return reply(res, 400, 'bad json', 'text/plain'); }
    if (m.method === 'server/discover') {
      switch (probe) {
        case 'text400': return reply(res, 400, 'Bad Request: unsupported protocol version\n', 'text/plain');
        case 'rpc32600': return reply(res, 400, fail(m.id, -32600, 'Missing session ID'));
        case 'rpc32601': return reply(res, 200, fail(m.id, -32601, 'Method not found'));
        case '404': return reply(res, 404, 'Invalid session ID\n', 'text/plain');
        case 'legacylist':
          return reply(res, 200, ok(m.id, { supportedVersions: ['2025-11-25'], capabilities: { tools: {} },
                                            serverInfo: { name: 'era-http', version: '1' } }));
        case 'close': return req.socket.destroy();
        case '503': return reply(res, 503, 'busy\n', 'text/plain');
      }
    }
    if (m.id === undefined) return res.writeHead(202).end();
    if (m.method === 'initialize')
      return reply(res, 200, ok(m.id, { protocolVersion: '2025-11-25', capabilities: { tools: {} },
                                        serverInfo: { name: 'era-http', version: '1' } }));
    if (m.method === 'tools/list')
      return reply(res, 200, ok(m.id, { tools: [{ name: 'echo', inputSchema: { type: 'object' } }] }));
    if (m.method === 'tools/call' && m.params?.name === 'echo')
      return reply(res, 200, ok(m.id, { content: [{ type: 'text', text: m.params.arguments?.text ?? '' }] }));
    if (m.method === 'ping') return reply(res, 200, ok(m.id, {}));
    return reply(res, 200, fail(m.id, -32601, 'Method not found'));
  });
});
srv.listen(0, '127.0.0.1', () => process.stdout.write(`MCPCONN_TEST_PORT=${srv.address().port}\n`));
process.stdin.on('end', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));
process.stdin.resume();
