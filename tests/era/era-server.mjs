// SPDX-License-Identifier: MIT
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
//                 "first" resultType complete as the first member, anything else
//                 resultType complete last; MRTR (SEP-2322) tools, each checking
//                 the client's retry itself and answering "ok" or "bad: why":
//                 "confirm" one elicitation round with an awkward requestState,
//                 "rounds" three rounds (keys r1..r3, state "n"), "state-only" a round
//                 with requestState and no inputRequests, "forever" input_required on
//                 every round, "empty" input_required with neither field, "unrelated"
//                 bad when it carries inputResponses or requestState; prompts/get "p"
//                 one elicitation round; tools/list with params {"ask":true}
//                 input_required (which no list may be); resources/read mem://gone
//                 -32602 and mem://old -32002 (resource not found in each era)
//   listen        modern, advertising tools.listChanged and prompts.listChanged, with
//                 subscriptions/listen (tests/check_listen.c): the acknowledgement honours
//                 tools only; tools "grow" (adds tool "extra" and sends tools/list_changed
//                 on every open listen), "stranger" (a list_changed for subscription
//                 999999), "end" (ends every listen with its result), "cancel" (ends every
//                 listen with notifications/cancelled); notifications/cancelled from the
//                 client ends the listen it names
//   listen-refuse like listen, but subscriptions/listen is -32601
//   subs          resource subscriptions in both eras: capabilities.resources.subscribe;
//                 modern: subscriptions/listen records each listen's resourceSubscriptions
//                 (acknowledged as asked), notifications/cancelled ends one; legacy:
//                 resources/subscribe and resources/unsubscribe; tool "touch" {uri}
//                 sends notifications/resources/updated {uri} to every subscriber of
//                 uri; tool "subs" answers the subscribed URIs, sorted, joined with ","
//                 ("open=N" after them for the open listens)
// PIDFILE=FILE appends the server's pid to FILE.  TTL_MS=N (and SCOPE=public|private,
// default public) give tools/list results ttlMs N and that cacheScope.
import { appendFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

const mode = process.argv[2] || 'modern';
let discovers = 0;
const subs = new Set(); // open listens: the request ids
let grown = false;
const listens = new Map(); // mode subs: open listen id -> its resourceSubscriptions
const legacySubs = new Set(); // mode subs, legacy: resources/subscribe
if (process.env.PIDFILE) appendFileSync(process.env.PIDFILE, `${process.pid}\n`);
const SUB = 'io.modelcontextprotocol/subscriptionId';
const note = (method, id, params = {}) => send({ jsonrpc: '2.0', method, params: { ...params, _meta: { [SUB]: id } } });
const minted = new Map(); // requestState -> the id of the request it answered
const STATE = 'st\u00e9 "q" \\ / \u2028 {"nested":1}';
const send = (m) => process.stdout.write(JSON.stringify(m) + '\n');
const rl = createInterface({ input: process.stdin });
rl.on('line', (line) => {
  if (process.env.LOG) appendFileSync(process.env.LOG, line + '\n');
  let m;
  try { m = JSON.parse(line); } catch { return; }
  if (m.id === undefined) { // notifications
    if (m.method === 'notifications/cancelled') {
      subs.delete(m.params?.requestId);
      listens.delete(m.params?.requestId);
    }
    return;
  }
  const ok = (result) => send({ jsonrpc: '2.0', id: m.id, result });
  const fail = (code, message, data) => send({ jsonrpc: '2.0', id: m.id, error: { code, message, data } });
  if (m.method === 'server/discover') {
    discovers++;
    if (mode === 'retry-once' && discovers === 1)
      return fail(-32022, 'Unsupported protocol version', { supported: ['2026-07-28'], requested: '2026-07-28' });
    if (mode === 'legacy-32022') return fail(-32022, 'Unsupported', { supported: ['2025-11-25'], requested: '2026-07-28' });
    if (mode === 'alien-32022') return fail(-32022, 'Unsupported', { supported: ['2099-01-01'], requested: '2026-07-28' });
    const versions = mode === 'legacy-list' ? ['2025-11-25'] : ['2026-07-28'];
    const capabilities = mode.startsWith('listen') ? { tools: { listChanged: true }, prompts: { listChanged: true } }
      : mode === 'subs' ? { tools: {}, resources: { subscribe: true } } : { tools: {} };
    return ok({ supportedVersions: versions, capabilities, resultType: 'complete', ttlMs: 0,
                cacheScope: 'private', _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'era', version: '1' } } });
  }
  if (m.method === 'initialize')
    return ok({ protocolVersion: m.params.protocolVersion === '2025-06-18' ? '2025-06-18' : '2025-11-25',
                capabilities: mode === 'subs' ? { tools: {}, resources: { subscribe: true } } : { tools: {} },
                serverInfo: { name: 'era', version: '1' } });
  const p = m.params || {}, ir = p.inputResponses, rs = p.requestState;
  const text = (t) => ok({ content: [{ type: 'text', text: t }], resultType: 'complete' });
  const ask = (inputRequests, requestState) => {
    if (requestState !== undefined) minted.set(requestState, m.id);
    ok({ resultType: 'input_required', ...(inputRequests && { inputRequests }), ...(requestState !== undefined && { requestState }) });
  };
  const elicit = (message) => ({ method: 'elicitation/create', params: { message, requestedSchema: { type: 'object',
    properties: { ok: { type: 'boolean' }, who: { type: 'string', default: 'dflt' } } } } });
  // A retry: the state echoed exactly, a new id, only this round's answers.
  const retryProblem = (state, keys) => {
    if (rs !== state) return `requestState ${JSON.stringify(rs)} != ${JSON.stringify(state)}`;
    if (state !== undefined && minted.get(state) === m.id) return 'the retry reused the id';
    const got = Object.keys(ir || {}).sort().join(',');
    if (got !== keys.join(',')) return `inputResponses keys ${got} != ${keys.join(',')}`;
    return null;
  };
  if (mode === 'subs') {
    if (m.method === 'subscriptions/listen') {
      const uris = m.params?.notifications?.resourceSubscriptions || [];
      listens.set(m.id, uris);
      return note('notifications/subscriptions/acknowledged', m.id, { notifications: { resourceSubscriptions: uris } });
    }
    if (m.method === 'resources/subscribe') { legacySubs.add(p.uri); return ok({}); }
    if (m.method === 'resources/unsubscribe') { legacySubs.delete(p.uri); return ok({}); }
    if (m.method === 'tools/call' && p.name === 'touch') {
      const uri = p.arguments?.uri;
      for (const [id, uris] of listens)
        if (uris.includes(uri)) note('notifications/resources/updated', id, { uri });
      if (legacySubs.has(uri)) send({ jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri } });
      return text('touched');
    }
    if (m.method === 'tools/call' && p.name === 'subs') {
      const all = new Set(legacySubs);
      for (const uris of listens.values()) for (const u of uris) all.add(u);
      return text(`${[...all].sort().join(',')} open=${listens.size}`);
    }
  }
  if (m.method === 'subscriptions/listen' && mode === 'listen') {
    subs.add(m.id);
    return note('notifications/subscriptions/acknowledged', m.id, { notifications: { toolsListChanged: true } });
  }
  if (mode === 'listen' && m.method === 'tools/call' && ['grow', 'stranger', 'end', 'cancel'].includes(m.params.name)) {
    const name = m.params.name;
    if (name === 'grow') {
      grown = true;
      for (const id of subs) note('notifications/tools/list_changed', id);
    } else if (name === 'stranger') {
      note('notifications/tools/list_changed', 999999);
    } else {
      for (const id of subs) {
        if (name === 'end') send({ jsonrpc: '2.0', id, result: { resultType: 'complete', _meta: { [SUB]: id } } });
        else send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'shutting down' } });
      }
      subs.clear();
    }
    return ok({ content: [{ type: 'text', text: name }], resultType: 'complete' });
  }
  if (m.method === 'resources/read') {
    if (p.uri === 'mem://gone') return fail(-32602, 'Resource not found', { uri: p.uri }); // 2026-07-28
    if (p.uri === 'mem://old') return fail(-32002, 'Resource not found', { uri: p.uri }); // 2025
    return ok({ contents: [{ uri: p.uri, text: 'here' }], resultType: 'complete' });
  }
  if (m.method === 'tools/list' && p.ask) return ask({ e: elicit('list?') }, 'l');
  if (m.method === 'prompts/get' && p.name === 'p') {
    if (!ir) return ask({ e: elicit('prompt?') }, 'ps');
    const bad = retryProblem('ps', ['e']);
    return ok({ messages: [{ role: 'user', content: { type: 'text', text: bad ? `bad: ${bad}` : `ok ${JSON.stringify(ir.e)}` } }], resultType: 'complete' });
  }
  if (m.method === 'tools/call') {
    const name = m.params.name, content = [{ type: 'text', text: name }];
    if (name === 'confirm') {
      if (!ir) return ask({ c: elicit('Confirm?') }, STATE);
      const bad = retryProblem(STATE, ['c']);
      return text(bad ? `bad: ${bad}` : `ok ${JSON.stringify(ir.c)}`);
    }
    if (name === 'rounds') {
      const n = rs === undefined ? 0 : Number(rs);
      if (n > 0) {
        const bad = retryProblem(rs, [`r${n}`]);
        if (bad) return text(`bad: ${bad}`);
        if (ir[`r${n}`].action !== 'accept') return text(`bad: round ${n} ${JSON.stringify(ir)}`);
      }
      if (n === 3) return text('ok 3 rounds');
      return ask({ [`r${n + 1}`]: elicit(`round ${n + 1}`) }, String(n + 1));
    }
    if (name === 'state-only') {
      if (rs === undefined) return ask(undefined, 'shed');
      const bad = ir !== undefined ? 'inputResponses on a state-only round' : retryProblem('shed', []);
      return text(bad ? `bad: ${bad}` : 'ok shed');
    }
    if (name === 'forever') return ask(undefined, `f${m.id}`);
    if (name === 'empty') return ok({ resultType: 'input_required' });
    if (name === 'unrelated')
      return text(ir !== undefined || rs !== undefined ? 'bad: carried another call\'s input' : 'ok unrelated');
    if (name === 'plain') return ok({ content });
    if (name === 'first') return ok({ resultType: 'complete', content });
    if (name === 'weird') return ok({ content, resultType: 'weird' });
    if (name === 'ask') return ok({ resultType: 'input_required', inputRequests: { a: { method: 'roots/list', params: {} } }, requestState: 's' });
    return ok({ content, resultType: 'complete' });
  }
  if (m.method === 'tools/list') {
    const tools = [{ name: 'plain', inputSchema: { type: 'object' } }];
    if (grown) tools.push({ name: 'extra', inputSchema: { type: 'object' } });
    // TTL_MS / SCOPE: the list is cacheable (SEP-2549) for that long, in that scope.
    const cache = process.env.TTL_MS ? { ttlMs: Number(process.env.TTL_MS), cacheScope: process.env.SCOPE || 'public' } : {};
    return ok({ tools, resultType: 'complete', ...cache });
  }
  fail(-32601, 'Method not found');
});
