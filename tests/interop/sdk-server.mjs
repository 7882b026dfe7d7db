// SPDX-License-Identifier: MIT
// sdk-server.mjs: an MCP server built on the official TypeScript SDK
// (@modelcontextprotocol/sdk, pinned in package.json), for
// tests/check_interop_http.c.  One process serves one transport flavour:
//
//   node sdk-server.mjs [--legacy-sse] [--tls CERT KEY] [--json] [--stateless]
//
//   (default)      Streamable HTTP at /mcp over node:http (HTTP/1.1),
//                  stateful (Mcp-Session-Id), responses as SSE streams
//   --json         Streamable HTTP answering requests with application/json
//   --stateless    no sessions: a fresh server per POST; GET/DELETE get 405
//   --tls C K      node:http2 createSecureServer({allowHTTP1: true}) with the
//                  PEM certificate C and key K: h2 by ALPN, or HTTP/1.1
//   --legacy-sse   the 2024-11-05 HTTP+SSE transport (SSEServerTransport):
//                  GET /sse opens the stream and names /messages?sessionId=
//                  in its endpoint event; POST /sse answers 405, so a client
//                  given /sse in AUTO mode falls back to it
//
// It listens on 127.0.0.1, port 0, and prints "MCPCONN_TEST_PORT=<port>" on
// stdout once listening.  It exits when its stdin closes (the test's end).
//
// Tools (all modes): echo {message}; add {a, b}; whoami (session id and the
// HTTP version of the request); stats (counters of what the server saw);
// notify_later {message} (sends notifications/message outside any request,
// once this session's GET stream is open: it can only arrive over the GET
// listener); progress {steps} (progress notifications on the request's own
// stream, then a result; with hold: true the result waits for a call of
// release); ask {message} (an elicitation/create request to
// the client, answered over a separate POST); expire_session (after
// answering, forgets every session and closes its transport, like a server
// restart: the next request with the old id gets 404).  Every GET stream
// starts with a notifications/message "GET stream open for <session id>".
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import http2 from 'node:http2';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

const args = process.argv.slice(2);
const opt = { legacy: false, json: false, stateless: false, tls: null };
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--legacy-sse') opt.legacy = true;
  else if (args[i] === '--json') opt.json = true;
  else if (args[i] === '--stateless') opt.stateless = true;
  else if (args[i] === '--tls') {
    opt.tls = { cert: fs.readFileSync(args[i + 1]), key: fs.readFileSync(args[i + 2]) };
    i += 2;
  } else {
    console.error(`sdk-server: unknown argument ${args[i]}`);
    process.exit(2);
  }
}

const stats = {
  posts: 0, gets: 0, deletes: 0, lastEventIds: 0, notFound: 0, notFoundPost: 0, notFoundGet: 0,
  sessionsCreated: 0, sessionsDeleted: 0, expired: 0, http: {}
};
const sessions = new Map(); // session id -> { transport, server, getReady }
const legacy = new Map();   // legacy session id -> SSEServerTransport
let heldRelease;            // ends the wait of a progress call with hold
let held = new Promise((r) => { heldRelease = r; });

function newGetLatch() {
  let resolve;
  const promise = new Promise((r) => { resolve = r; });
  return { promise, resolve };
}

function makeServer(httpVersionOf) {
  const server = new McpServer(
    { name: 'mcpconn-sdk-test-server', version: '1.0.0' },
    { capabilities: { logging: {} } }
  );
  server.registerTool('echo', {
    description: 'Echoes the message',
    inputSchema: { message: z.string() }
  }, async ({ message }) => ({ content: [{ type: 'text', text: `Echo: ${message}` }] }));

  server.registerTool('add', {
    description: 'Adds two numbers',
    inputSchema: { a: z.number(), b: z.number() }
  }, async ({ a, b }) => ({
    content: [{ type: 'text', text: String(a + b) }],
    structuredContent: { sum: a + b }
  }));

  server.registerTool('whoami', { description: 'Session id and HTTP version' },
    async (extra) => ({
      content: [{
        type: 'text',
        text: JSON.stringify({ session: extra.sessionId ?? null, http: httpVersionOf(extra) })
      }]
    }));

  server.registerTool('stats', { description: 'What the server saw so far' },
    async () => ({ content: [{ type: 'text', text: JSON.stringify(stats) }] }));

  server.registerTool('notify_later', {
    description: 'Sends notifications/message over the GET stream',
    inputSchema: { message: z.string() }
  }, async ({ message }, extra) => {
    const s = sessions.get(extra.sessionId);
    if (!s) return { content: [{ type: 'text', text: 'no session' }], isError: true };
    (async () => {
      const timer = setTimeout(() => s.getReady.resolve(false), 10000);
      const ok = await s.getReady.promise;
      clearTimeout(timer);
      if (!ok) return;
      // No relatedRequestId: the SDK routes it to the standalone GET stream.
      await server.server.notification({
        method: 'notifications/message',
        params: { level: 'info', logger: 'sdk-server', data: message }
      });
    })().catch((e) => console.error('notify_later:', e));
    return { content: [{ type: 'text', text: 'scheduled' }] };
  });

  server.registerTool('progress', {
    description: 'Sends progress notifications, then answers (after release, with hold)',
    inputSchema: { steps: z.number().int(), hold: z.boolean().optional() }
  }, async ({ steps, hold }, extra) => {
    const token = extra._meta?.progressToken;
    for (let i = 1; i <= steps; i++) {
      if (token !== undefined) {
        await extra.sendNotification({
          method: 'notifications/progress',
          params: { progressToken: token, progress: i, total: steps, message: `step ${i}` }
        });
      }
    }
    // With hold, the answer waits until the client calls release: a test
    // can see every progress callback run before the call completes.
    if (hold) {
      const timer = setTimeout(() => heldRelease(), 30000);
      await held;
      clearTimeout(timer);
      held = new Promise((r) => { heldRelease = r; });
    }
    return { content: [{ type: 'text', text: `done ${steps}` }] };
  });

  server.registerTool('release', { description: 'Lets a held progress call answer' },
    async () => {
      heldRelease();
      return { content: [{ type: 'text', text: 'released' }] };
    });

  server.registerTool('ask', {
    description: 'Asks the client through elicitation/create',
    inputSchema: { message: z.string() }
  }, async ({ message }, extra) => {
    const r = await server.server.elicitInput({
      message,
      requestedSchema: {
        type: 'object',
        properties: { color: { type: 'string', default: 'blue' } }
      }
    }, { relatedRequestId: extra.requestId });
    return { content: [{ type: 'text', text: `${r.action} ${JSON.stringify(r.content ?? {})}` }] };
  });

  server.registerTool('expire_session', { description: 'Forgets every session' },
    async () => {
      // Like a restart that lost its state: from now on the old ids get 404.
      // The transports (and their GET streams) close once this answer is out.
      const dropped = [...sessions.values()];
      for (const [id] of sessions) {
        sessions.delete(id);
        stats.expired++;
      }
      setTimeout(() => { for (const s of dropped) s.transport.close().catch(() => {}); }, 50);
      return { content: [{ type: 'text', text: 'expired' }] };
    });
  return server;
}

function countHttp(req) {
  stats.http[req.httpVersion] = (stats.http[req.httpVersion] ?? 0) + 1;
}

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

const isInitialize = (m) => m && !Array.isArray(m) && m.method === 'initialize';
const lastHttpVersion = new Map(); // session id -> HTTP version of its last request

async function handleStreamable(req, res, path) {
  if (path !== '/mcp') return sendJson(res, 404, { error: 'not found' });
  countHttp(req);
  const sid = req.headers['mcp-session-id'];
  if (opt.stateless) {
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST' });
      return res.end();
    }
    stats.posts++;
    const body = await readBody(req);
    const server = makeServer(() => req.httpVersion);
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: opt.json
    });
    res.on('close', () => { transport.close().catch(() => {}); server.close().catch(() => {}); });
    await server.connect(transport);
    return transport.handleRequest(req, res, body);
  }
  if (sid) lastHttpVersion.set(sid, req.httpVersion);
  if (req.method === 'POST') {
    stats.posts++;
    const body = await readBody(req);
    if (sid && sessions.has(sid)) return sessions.get(sid).transport.handleRequest(req, res, body);
    if (sid) {
      stats.notFound++;
      stats.notFoundPost++;
      return sendJson(res, 404, { jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null });
    }
    if (!isInitialize(body)) {
      return sendJson(res, 400, { jsonrpc: '2.0', error: { code: -32000, message: 'Bad Request: no session' }, id: null });
    }
    const server = makeServer((extra) => lastHttpVersion.get(extra.sessionId) ?? req.httpVersion);
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: opt.json,
      onsessioninitialized: (id) => {
        stats.sessionsCreated++;
        sessions.set(id, { transport, server, getReady: newGetLatch() });
        lastHttpVersion.set(id, req.httpVersion);
      },
      onsessionclosed: (id) => {
        stats.sessionsDeleted++;
        sessions.delete(id);
      }
    });
    await server.connect(transport);
    return transport.handleRequest(req, res, body);
  }
  if (req.method === 'GET' || req.method === 'DELETE') {
    if (req.method === 'GET') stats.gets++;
    else stats.deletes++;
    if (!sid) return sendJson(res, 400, { jsonrpc: '2.0', error: { code: -32000, message: 'Bad Request: no session' }, id: null });
    const s = sessions.get(sid);
    if (!s) {
      stats.notFound++;
      if (req.method === 'GET') stats.notFoundGet++;
      return sendJson(res, 404, { jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null });
    }
    if (req.method === 'GET') {
      if (req.headers['last-event-id']) stats.lastEventIds++;
      // The stream is registered by the time its headers go out; greet
      // each new GET stream with a notification naming its session.
      const writeHead = res.writeHead.bind(res);
      res.writeHead = (status, ...rest) => {
        const r = writeHead(status, ...rest);
        if (status === 200) {
          setImmediate(() => {
            s.getReady.resolve(true);
            s.server.server.notification({
              method: 'notifications/message',
              params: { level: 'info', logger: 'sdk-server', data: `GET stream open for ${sid}` }
            }).catch(() => {});
          });
        }
        return r;
      };
    }
    return s.transport.handleRequest(req, res);
  }
  res.writeHead(405, { allow: 'GET, POST, DELETE' });
  res.end();
}

async function handleLegacy(req, res, path, query) {
  countHttp(req);
  if (path === '/sse' && req.method === 'GET') {
    stats.gets++;
    const transport = new SSEServerTransport('/messages', res);
    legacy.set(transport.sessionId, transport);
    stats.sessionsCreated++;
    res.on('close', () => legacy.delete(transport.sessionId));
    const server = makeServer(() => req.httpVersion);
    return server.connect(transport);
  }
  if (path === '/messages' && req.method === 'POST') {
    stats.posts++;
    const transport = legacy.get(query.get('sessionId') ?? '');
    if (!transport) return sendJson(res, 404, { error: 'unknown session' });
    const body = await readBody(req);
    return transport.handlePostMessage(req, res, body);
  }
  if (path === '/sse') {
    res.writeHead(405, { allow: 'GET' });
    return res.end();
  }
  return sendJson(res, 404, { error: 'not found' });
}

async function handler(req, res) {
  const url = new URL(req.url, 'http://localhost');
  try {
    if (opt.legacy) await handleLegacy(req, res, url.pathname, url.searchParams);
    else await handleStreamable(req, res, url.pathname);
  } catch (e) {
    console.error('sdk-server:', e);
    if (!res.headersSent) sendJson(res, 500, { jsonrpc: '2.0', error: { code: -32603, message: String(e) }, id: null });
  }
}

const httpServer = opt.tls
  ? http2.createSecureServer({ cert: opt.tls.cert, key: opt.tls.key, allowHTTP1: true }, handler)
  : http.createServer(handler);
httpServer.listen(0, '127.0.0.1', () => {
  process.stdout.write(`MCPCONN_TEST_PORT=${httpServer.address().port}\n`);
});
process.stdin.on('end', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));
process.stdin.resume();
