// tests/era/era-server.mjs: a scripted stdio MCP server for tests/check_era.c.
// It answers the era probe (server/discover) the way argv[2] says, serves
// initialize (legacy, 2025-11-25) and tools/call, and appends every line it
// receives to $LOG.  Modes:
//   retry-once    first server/discover: -32022 {supported:["2026-07-28"]}, then a result
//   legacy-list   server/discover: a result listing only 2025-11-25 (go-sdk's stateful default)
//   legacy-32022  server/discover: -32022 {supported:["2025-11-25"]}
//   alien-32022   server/discover: -32022 {supported:["2099-01-01"]}
//   modern        server/discover: a result with 2026-07-28; tools/call by tool name:
//                 "plain" no resultType, "weird" resultType "weird", "ask" input_required,
//                 anything else resultType complete
import { appendFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

const mode = process.argv[2] || 'modern';
let discovers = 0;
const send = (m) => process.stdout.write(JSON.stringify(m) + '\n');
const rl = createInterface({ input: process.stdin });
rl.on('line', (line) => {
  if (process.env.LOG) appendFileSync(process.env.LOG, line + '\n');
  let m;
  try { m = JSON.parse(line); } catch { return; }
  if (m.id === undefined) return; // notifications
  const ok = (result) => send({ jsonrpc: '2.0', id: m.id, result });
  const fail = (code, message, data) => send({ jsonrpc: '2.0', id: m.id, error: { code, message, data } });
  if (m.method === 'server/discover') {
    discovers++;
    if (mode === 'retry-once' && discovers === 1)
      return fail(-32022, 'Unsupported protocol version', { supported: ['2026-07-28'], requested: '2026-07-28' });
    if (mode === 'legacy-32022') return fail(-32022, 'Unsupported', { supported: ['2025-11-25'], requested: '2026-07-28' });
    if (mode === 'alien-32022') return fail(-32022, 'Unsupported', { supported: ['2099-01-01'], requested: '2026-07-28' });
    const versions = mode === 'legacy-list' ? ['2025-11-25'] : ['2026-07-28'];
    return ok({ supportedVersions: versions, capabilities: { tools: {} }, resultType: 'complete', ttlMs: 0,
                cacheScope: 'private', _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'era', version: '1' } } });
  }
  if (m.method === 'initialize')
    return ok({ protocolVersion: m.params.protocolVersion === '2025-06-18' ? '2025-06-18' : '2025-11-25',
                capabilities: { tools: {} }, serverInfo: { name: 'era', version: '1' } });
  if (m.method === 'tools/call') {
    const name = m.params.name, content = [{ type: 'text', text: name }];
    if (name === 'plain') return ok({ content });
    if (name === 'weird') return ok({ content, resultType: 'weird' });
    if (name === 'ask') return ok({ resultType: 'input_required', inputRequests: { a: { method: 'roots/list', params: {} } }, requestState: 's' });
    return ok({ content, resultType: 'complete' });
  }
  if (m.method === 'tools/list') return ok({ tools: [{ name: 'plain', inputSchema: { type: 'object' } }], resultType: 'complete' });
  fail(-32601, 'Method not found');
});
