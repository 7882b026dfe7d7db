// SPDX-License-Identifier: MIT
// http-server.mjs: a Streamable HTTP server built on the official
// TypeScript SDK (@modelcontextprotocol/sdk, pinned in package.json), for
// `bench/run --node-http` (by default the HTTP cases use the C server,
// tests/mcp-h2-test-server, which this one cannot keep up with).  Both
// clients (mcpconn and bench/ts/client.mjs) and h2load are measured against
// the same process in a case.
//
//   node http-server.mjs --proto h1|h2c|tls [--json] [--cert C --key K]
//                        [--max-seconds S]
//
//   h1    node:http (HTTP/1.1, cleartext)
//   h2c   node:http2 createServer (HTTP/2 with prior knowledge, cleartext)
//   tls   node:http2 createSecureServer({allowHTTP1: true}): h2 by ALPN, or
//         HTTP/1.1 over TLS
//   --json  answer POSTed requests with application/json instead of an SSE
//           stream (enableJsonResponse)
//
// Stateful Streamable HTTP at /mcp: initialize creates a session with its own
// McpServer and transport.  One tool, echo {text}, answers the text unchanged
// (the same contract as the C demo server's echo).
//
// The server reads and parses each POST body itself and hands it to the
// transport (parsedBody), for every client alike.  A request that carries
// the header x-bench-unique-id (only h2load's do: it sends one fixed body)
// gets its JSON-RPC id replaced by a fresh number, because the SDK routes
// responses by id and h2load cannot vary the body.
//
// It listens on 127.0.0.1, port 0, prints "MCPBENCH_PORT=<port>" once
// listening, and exits when its stdin closes or after --max-seconds.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import http2 from 'node:http2';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

const args = process.argv.slice(2);
const opt = { proto: 'h1', json: false, cert: null, key: null, maxSeconds: 1800 };
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  if (a === '--proto') opt.proto = args[++i];
  else if (a === '--json') opt.json = true;
  else if (a === '--cert') opt.cert = fs.readFileSync(args[++i]);
  else if (a === '--key') opt.key = fs.readFileSync(args[++i]);
  else if (a === '--max-seconds') opt.maxSeconds = Number(args[++i]);
  else {
    console.error(`http-server: unknown argument ${a}`);
    process.exit(2);
  }
}
if (!['h1', 'h2c', 'tls'].includes(opt.proto) || (opt.proto === 'tls' && !(opt.cert && opt.key))) {
  console.error('http-server: --proto h1|h2c|tls (tls needs --cert and --key)');
  process.exit(2);
}

function makeServer() {
  const server = new McpServer({ name: 'mcpconn-bench-server', version: '1.0.0' });
  server.registerTool('echo', {
    description: 'Returns the given text unchanged.',
    inputSchema: { text: z.string() }
  }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
  return server;
}

const sessions = new Map(); // session id -> transport
let uniqueId = 1e9;

async function readBody(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : undefined;
}

function sendJson(res, status, obj) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(obj));
}

async function handle(req, res) {
  if (!req.url.startsWith('/mcp')) return sendJson(res, 404, { error: 'not found' });
  const sid = req.headers['mcp-session-id'];
  if (req.method === 'POST') {
    const body = await readBody(req);
    if (req.headers['x-bench-unique-id'] && body && body.id !== undefined) body.id = uniqueId++;
    if (sid) {
      const t = sessions.get(sid);
      if (!t) return sendJson(res, 404, { jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null });
      return t.handleRequest(req, res, body);
    }
    if (!body || body.method !== 'initialize') {
      return sendJson(res, 400, { jsonrpc: '2.0', error: { code: -32000, message: 'Bad Request: no session' }, id: null });
    }
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: opt.json,
      onsessioninitialized: (id) => sessions.set(id, transport),
      onsessionclosed: (id) => sessions.delete(id)
    });
    await makeServer().connect(transport);
    return transport.handleRequest(req, res, body);
  }
  if (req.method === 'GET' || req.method === 'DELETE') {
    const t = sid && sessions.get(sid);
    if (!t) return sendJson(res, sid ? 404 : 400, { jsonrpc: '2.0', error: { code: -32000, message: 'no session' }, id: null });
    return t.handleRequest(req, res);
  }
  res.writeHead(405, { allow: 'GET, POST, DELETE' });
  res.end();
}

async function handler(req, res) {
  try {
    await handle(req, res);
  } catch (e) {
    console.error('http-server:', e);
    if (!res.headersSent) sendJson(res, 500, { jsonrpc: '2.0', error: { code: -32603, message: String(e) }, id: null });
  }
}

// h2load opens 1000 streams on one connection.
const h2settings = { maxConcurrentStreams: 4096 };
const server =
  opt.proto === 'tls'
    ? http2.createSecureServer({ cert: opt.cert, key: opt.key, allowHTTP1: true, settings: h2settings }, handler)
    : opt.proto === 'h2c'
      ? http2.createServer({ settings: h2settings }, handler)
      : http.createServer({ keepAliveTimeout: 60000 }, handler);
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`MCPBENCH_PORT=${server.address().port}\n`);
});
setTimeout(() => process.exit(0), opt.maxSeconds * 1000).unref();
process.stdin.on('end', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));
process.stdin.resume();
