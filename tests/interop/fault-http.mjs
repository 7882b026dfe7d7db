// SPDX-License-Identifier: MIT
// fault-http.mjs: a minimal Streamable HTTP server (plain node:http) that
// misbehaves on purpose, for tests/check_http_faults.c.  POST /mcp/<scenario>
// picks the fault; the tool name picks stall or echo.  GET /stats returns
// counters as JSON.  Prints MCPCONN_TEST_PORT=<port> first; exits when its
// stdin closes.
import http from 'node:http';

const stats = { posts: 0, gets: 0, resumeGets: 0, lastEventIds: [], toolCalls: 0, reinitHeld: 0, sessionless: 0 };
// reinit-hold: sessions are checked (404 for a stale one, 400 without one);
// the tool `expire` forgets the session; a re-initialize is answered only
// after 1.5 s, so a request sent meanwhile shows whether it waited.
let sessionSeq = 0;
let liveSession = null;
let pendingId = null; // priming-cut: the id of the cut tools/call
let port = 0;

const json = (res, status, obj, headers = {}) => {
  const body = JSON.stringify(obj);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), ...headers });
  res.end(body);
};
const result = (id, text) => ({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text }] } });
const sse = (res) => res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });

const server = http.createServer((req, res) => {
  const [path, scenario] = [req.url.split('?')[0], req.url.split('/')[2] || ''];
  if (req.method === 'GET' && path === '/stats') return json(res, 200, stats);
  if (req.method === 'DELETE') return res.writeHead(200).end();
  if (req.method === 'GET') {
    stats.gets++;
    const last = req.headers['last-event-id'];
    if (scenario === 'priming-cut' && last) {
      stats.resumeGets++;
      stats.lastEventIds.push(last);
      sse(res);
      if (last === 'e1' && pendingId !== null) res.write(`id: e2\nevent: message\ndata: ${JSON.stringify(result(pendingId, 'resumed'))}\n\n`);
      return res.end();
    }
    return res.writeHead(405, { Allow: 'POST, DELETE' }).end();
  }
  if (req.method !== 'POST') return res.writeHead(405).end();
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    stats.posts++;
    if (scenario === 'unauthorized') {
      return json(res, 401, { error: 'invalid_token' }, {
        'WWW-Authenticate': `Bearer resource_metadata="http://127.0.0.1:${port}/.well-known/oauth-protected-resource"`,
      });
    }
    let msg;
    try { msg = JSON.parse(body); } catch { return json(res, 400, { error: 'bad json' }); }
    if (scenario === 'reinit-hold') {
      if (msg.method === 'initialize') {
        const sid = `hold-session-${++sessionSeq}`;
        const answer = () => {
          liveSession = sid;
          json(res, 200, { jsonrpc: '2.0', id: msg.id, result: {
            protocolVersion: '2025-11-25', capabilities: { tools: {} },
            serverInfo: { name: 'fault-http', version: '1.0.0' } } }, { 'Mcp-Session-Id': sid });
        };
        if (sessionSeq === 1) return answer();
        stats.reinitHeld++;
        return setTimeout(answer, 1500);
      }
      const sid = req.headers['mcp-session-id'];
      if (!sid) {
        // The era probe (server/discover) has no session by design: a
        // legacy server refuses it like this and the client runs initialize.
        if (msg.method !== 'server/discover') stats.sessionless++;
        return json(res, 400, { error: 'missing Mcp-Session-Id' });
      }
      if (sid !== liveSession) return json(res, 404, { error: 'session expired' });
      if (msg.id === undefined) return res.writeHead(202).end();
      stats.toolCalls++;
      if (msg.params?.name === 'expire') { liveSession = null; return json(res, 200, result(msg.id, 'expired')); }
      return json(res, 200, result(msg.id, 'echo'));
    }
    if (msg.method === 'initialize') {
      return json(res, 200, { jsonrpc: '2.0', id: msg.id, result: {
        protocolVersion: '2025-11-25', capabilities: { tools: {} },
        serverInfo: { name: 'fault-http', version: '1.0.0' } } }, { 'Mcp-Session-Id': 'fault-session-1' });
    }
    if (msg.id === undefined) return res.writeHead(202).end(); // notifications
    if (msg.method !== 'tools/call') return json(res, 200, { jsonrpc: '2.0', id: msg.id, result: {} });
    stats.toolCalls++;
    const tool = msg.params?.name;
    if (tool === 'echo') return json(res, 200, result(msg.id, 'echo'));
    if (scenario === 'malformed-sse') {
      sse(res);
      res.write(': a comment line\n\n');
      res.write('event: message\ndata: {not json\n\n');
      res.write('event: other\ndata: {"jsonrpc":"2.0","method":"x/other"}\n\n');
      res.write(`event: message\ndata: ${JSON.stringify(result(msg.id, 'ok'))}\n\n`);
      return res.end();
    }
    if (scenario === 'stall') { sse(res); return res.write(': stalled\n\n'); } // never ends
    if (scenario === 'priming-cut') {
      pendingId = msg.id;
      sse(res);
      res.write('id: e1\nretry: 200\ndata:\n\n');
      return res.end();
    }
    if (scenario === 'http-500') {
      res.writeHead(500, { 'Content-Type': 'text/plain' });
      return res.end('boom');
    }
    return json(res, 404, { error: `unknown scenario ${scenario}` });
  });
});

server.listen(0, '127.0.0.1', () => {
  port = server.address().port;
  process.stdout.write(`MCPCONN_TEST_PORT=${port}\n`);
});
process.stdin.on('end', () => process.exit(0));
process.stdin.on('close', () => process.exit(0));
process.stdin.resume();
