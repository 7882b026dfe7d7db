// SPDX-License-Identifier: MIT
// h2-session.mjs: opens an MCP session on the bench HTTP/2 server for
// h2load (which cannot initialize one itself) and prints its id.
//
//   node h2-session.mjs <http[s]://127.0.0.1:PORT/mcp>
//
// initialize, then notifications/initialized, over node:http2 (h2c for
// http, h2 without certificate checks for https: the server is ours, on
// loopback).  The session stays open on the server after we exit.
import http2 from 'node:http2';

const url = new URL(process.argv[2]);
const session = http2.connect(url.origin, { rejectUnauthorized: false });
session.on('error', (e) => { console.error(`h2-session: ${e.message}`); process.exit(1); });
setTimeout(() => { console.error('h2-session: timed out'); process.exit(1); }, 10000).unref();

function post(body, sid) {
  return new Promise((resolve, reject) => {
    const headers = {
      ':method': 'POST', ':path': url.pathname,
      'content-type': 'application/json', accept: 'application/json, text/event-stream',
      ...(sid ? { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' } : {})
    };
    const s = session.request(headers);
    let h = null, data = '';
    s.on('response', (r) => { h = r; });
    s.on('data', (d) => { data += d; });
    s.on('end', () => resolve({ h, data }));
    s.on('error', reject);
    s.end(JSON.stringify(body));
  });
}

const init = await post({
  jsonrpc: '2.0', id: 1, method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'h2load', version: '0' } }
});
const sid = init.h?.['mcp-session-id'];
if (!sid) { console.error(`h2-session: no session id (status ${init.h?.[':status']}): ${init.data}`); process.exit(1); }
await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, sid);
process.stdout.write(`${sid}\n`);
session.close();
