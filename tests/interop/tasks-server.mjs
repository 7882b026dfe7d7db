// SPDX-License-Identifier: MIT
// tests/interop/tasks-server.mjs: a scripted stdio MCP server with task tools in
// both eras, for tests/check_tasks.c.  argv[2]:
//   modern  2026-07-28 with the io.modelcontextprotocol/tasks extension (SEP-2663):
//           server/discover advertises it; a tools/call from a client that
//           declared it in _meta.clientCapabilities.extensions answers
//           {resultType:"task"}; tasks/get, tasks/update, tasks/cancel; tasks/result
//           is -32601 (removed by the extension)
//   legacy  2025-11-25 task utility: capabilities.tasks {list, cancel,
//           requests.tools.call}; tools/list names each tool's execution.taskSupport;
//           a tools/call with params.task answers {task:{...}}; a required tool called
//           without task is -32601; tasks/get, tasks/result, tasks/list, tasks/cancel
// Tools (each task advances one step per tasks/get, poll interval 20 ms or $POLL):
//   slow     working "step 1".."step 3", then completed: "slow done <args.n>"
//   ask      working, then input_required (modern: inputRequests {q1: elicitation};
//            legacy: tasks/result sends elicitation/create to the client), then
//            completed: "got <the answer's content as JSON>"
//   boom     working, then failed: modern error {code:-32050,message:"disk full"};
//            legacy: tasks/result answers that JSON-RPC error
//   forever  working until tasks/cancel, then cancelled
//   opt      legacy taskSupport "optional": a task like slow when asked, else direct
//   quick    no task: "quick done" directly
//   pushy    modern: pollIntervalMs 5000; advances on its own (30 ms a step,
//            "step 1".."step 3", then completed "pushy done") once a
//            subscriptions/listen names it in taskIds, pushing each state
//            (notifications/tasks) to the listens that do
// subscriptions/listen (modern): acknowledged and kept open until the client
// cancels it; notifications/tasks go to the listens naming the task in
// notifications.taskIds.  LISTEN=refuse: refused with -32021 instead.
// POLL=ms: the poll interval asked for instead of 20 ms (pushy keeps 5000).
// prompts/get (modern) answers a task too: invalid, the extension allows
// tasks only on tools/call.
// Every line received is appended to $LOG (the tests read the client's requests
// from the server's side).  With $STATE, the tasks are kept in that file after each
// request, and read back at start: a new process knows the tasks of the last one
// (tests of `mcpconn tasks`, where each run starts the server anew).
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

const mode = process.argv[2] || 'modern';
const POLL = Number(process.env.POLL) || 20; // the poll interval asked for (ms)
const modern = mode === 'modern';
const EXT = 'io.modelcontextprotocol/tasks';
const send = (m) => process.stdout.write(JSON.stringify(m) + '\n');
const tasks = new Map(); // taskId -> {tool, args, status, polls, message, answer, waiters}
let next = 1, outId = 1000;
const pendingOut = new Map(); // our request id -> callback (legacy elicitation)
const now = () => new Date().toISOString();

const view = (id) => {
  const t = tasks.get(id);
  const v = { taskId: id, status: t.status, createdAt: t.created, lastUpdatedAt: now() };
  if (t.message) v.statusMessage = t.message;
  if (modern) { v.ttlMs = null; v.pollIntervalMs = t.tool === 'pushy' ? 5000 : POLL; } else { v.ttl = null; v.pollInterval = POLL; }
  if (modern && t.status === 'completed') v.result = t.result;
  if (modern && t.status === 'failed') v.error = { code: -32050, message: 'disk full' };
  if (modern && t.status === 'input_required')
    v.inputRequests = { q1: { method: 'elicitation/create', params: { message: 'Which colour?',
      requestedSchema: { type: 'object', properties: { colour: { type: 'string' } } } } } };
  return v;
};
const text = (t) => ({ content: [{ type: 'text', text: t }] });
const wake = (t) => { const ws = t.waiters; t.waiters = []; for (const w of ws) w(); };
const finish = (t, status, result) => {
  t.status = status; t.result = result; t.message = undefined;
  wake(t);
};
// One step of a task's script, on each tasks/get.
const step = (t) => {
  if (['completed', 'failed', 'cancelled'].includes(t.status)) return;
  t.polls++;
  if (t.tool === 'slow' || t.tool === 'opt') {
    if (t.polls <= 3) { t.message = `step ${t.polls}`; return; }
    return finish(t, 'completed', text(`slow done ${t.args?.n ?? ''}`));
  }
  if (t.tool === 'boom') {
    if (t.polls === 1) { t.message = 'working hard'; return; }
    t.status = 'failed'; t.message = 'disk full';
    return wake(t);
  }
  if (t.tool === 'ask') {
    if (t.answer !== undefined) return finish(t, 'completed', text(`got ${JSON.stringify(t.answer)}`));
    if (t.polls >= 2 && t.status === 'working') { t.status = 'input_required'; t.message = 'waiting for a colour'; wake(t); }
  }
};
const SUB = 'io.modelcontextprotocol/subscriptionId';
const listens = new Map(); // listen request id -> its taskIds
const push = (id) => {
  for (const [lid, ids] of listens)
    if (ids.includes(id))
      send({ jsonrpc: '2.0', method: 'notifications/tasks', params: { ...view(id), _meta: { [SUB]: lid } } });
};
// pushy: advances on a timer once watched, pushing each state.
const run = (id) => {
  const t = tasks.get(id);
  if (t.running) return;
  t.running = true;
  const tick = setInterval(() => {
    t.polls++;
    if (t.status !== 'working') { clearInterval(tick); return; }
    if (t.polls <= 3) t.message = `step ${t.polls}`;
    else { finish(t, 'completed', text('pushy done')); clearInterval(tick); }
    push(id);
  }, 30);
};
const create = (tool, args) => {
  const id = `task-${next++}-${tool}`;
  tasks.set(id, { tool, args, status: 'working', polls: 0, created: now(), waiters: [] });
  return id;
};

const STATE = process.env.STATE;
if (STATE) {
  try {
    const s = JSON.parse(readFileSync(STATE, 'utf8'));
    next = s.next;
    for (const [k, v] of s.tasks) tasks.set(k, { ...v, waiters: [] });
  } catch { /* no state yet */ }
}
const save = () => writeFileSync(STATE, JSON.stringify({ next, tasks: [...tasks].map(([k, v]) => [k, { ...v, waiters: undefined }]) }));

const rl = createInterface({ input: process.stdin });
rl.on('line', (line) => { handle(line); if (STATE) save(); });
const handle = (line) => {
  if (process.env.LOG) appendFileSync(process.env.LOG, line + '\n');
  let m;
  try { m = JSON.parse(line); } catch { return; }
  if (m.method === undefined && m.id !== undefined) { // a response to our request
    const cb = pendingOut.get(m.id);
    pendingOut.delete(m.id);
    if (cb) cb(m);
    return;
  }
  if (m.id === undefined) { // notifications: logged; a cancel ends a listen
    if (m.method === 'notifications/cancelled') listens.delete(m.params?.requestId);
    return;
  }
  const ok = (result) => send({ jsonrpc: '2.0', id: m.id, result: modern ? { resultType: 'complete', ...result } : result });
  const raw = (result) => send({ jsonrpc: '2.0', id: m.id, result });
  const fail = (code, message) => send({ jsonrpc: '2.0', id: m.id, error: { code, message } });
  const p = m.params || {};
  const task = () => tasks.get(p.taskId);
  switch (m.method) {
    case 'server/discover':
      if (!modern) return fail(-32601, 'Method not found');
      return ok({ supportedVersions: ['2026-07-28'], capabilities: { tools: {}, extensions: { [EXT]: {} } },
                  ttlMs: 0, cacheScope: 'private', _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'tasks', version: '1' } } });
    case 'initialize':
      return ok({ protocolVersion: '2025-11-25', serverInfo: { name: 'tasks', version: '1' },
                  capabilities: { tools: {}, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } } });
    case 'tools/list': {
      const sup = { slow: 'required', ask: 'required', boom: 'required', forever: 'required', opt: 'optional' };
      const tools = ['slow', 'ask', 'boom', 'forever', 'opt', 'quick'].map((name) => ({ name, inputSchema: { type: 'object' },
        ...(sup[name] && { execution: { taskSupport: sup[name] } }) }));
      return ok({ tools, ...(modern && { ttlMs: 0, cacheScope: 'private' }) });
    }
    case 'tools/call': {
      const name = p.name;
      if (name === 'quick') return ok(text('quick done'));
      if (modern) {
        const declared = p._meta?.['io.modelcontextprotocol/clientCapabilities']?.extensions?.[EXT];
        if (!declared) return ok(text(`${name} done (direct)`));
        const id = create(name, p.arguments);
        return raw({ resultType: 'task', ...view(id) });
      }
      const wantsTask = p.task !== undefined;
      if (name === 'opt' && !wantsTask) return ok(text('opt done (direct)'));
      if (!wantsTask) return fail(-32601, `tool ${name} requires task augmentation`);
      const id = create(name, p.arguments);
      return ok({ task: view(id) });
    }
    case 'subscriptions/listen': {
      if (!modern) return fail(-32601, 'Method not found');
      if (process.env.LISTEN === 'refuse')
        return send({ jsonrpc: '2.0', id: m.id, error: { code: -32021, message: 'no push here',
          data: { requiredCapabilities: { extensions: { [EXT]: {} } } } } });
      const ids = p.notifications?.taskIds ?? [];
      listens.set(m.id, ids);
      send({ jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged',
             params: { notifications: { taskIds: ids }, _meta: { [SUB]: m.id } } });
      for (const id of ids) if (tasks.get(id)?.tool === 'pushy') run(id);
      return;
    }
    case 'prompts/get': // modern: a task where the extension allows none
      if (!modern) return fail(-32601, 'Method not found');
      return raw({ resultType: 'task', ...view(create('prompt', {})) });
    case 'tasks/get': {
      const t = task();
      if (!t) return fail(-32602, `no task ${p.taskId}`);
      step(t);
      return ok(view(p.taskId));
    }
    case 'tasks/update': {
      if (!modern) return fail(-32601, 'Method not found');
      const t = task();
      if (!t) return fail(-32602, `no task ${p.taskId}`);
      const r = p.inputResponses?.q1;
      if (r) { t.answer = r.content ?? r; t.status = 'working'; t.message = 'thanks'; }
      return ok({});
    }
    case 'tasks/cancel': {
      const t = task();
      if (!t) return fail(-32602, `no task ${p.taskId}`);
      if (!['completed', 'failed', 'cancelled'].includes(t.status)) {
        t.status = 'cancelled'; t.message = 'cancelled by request';
        wake(t);
      }
      return modern ? ok({}) : ok(view(p.taskId));
    }
    case 'tasks/list':
      if (modern) return fail(-32601, 'Method not found');
      return ok({ tasks: [...tasks.keys()].map(view) });
    case 'tasks/result': {
      if (modern) return fail(-32601, 'Method not found');
      const t = task();
      if (!t) return fail(-32602, `no task ${p.taskId}`);
      const meta = { 'io.modelcontextprotocol/related-task': { taskId: p.taskId } };
      const answer = () => {
        if (t.status === 'completed') return ok({ ...t.result, _meta: meta });
        if (t.status === 'failed') return send({ jsonrpc: '2.0', id: m.id, error: { code: -32050, message: 'disk full' } });
        if (t.status === 'cancelled') return fail(-32603, 'task cancelled');
        if (t.status === 'input_required' && t.tool === 'ask' && !t.asked) {
          t.asked = true;
          const rid = outId++;
          pendingOut.set(rid, (resp) => {
            t.answer = resp.result?.content ?? resp.error;
            finish(t, 'completed', text(`got ${JSON.stringify(t.answer)}`));
          });
          send({ jsonrpc: '2.0', id: rid, method: 'elicitation/create', params: { message: 'Which colour?',
            requestedSchema: { type: 'object', properties: { colour: { type: 'string' } } }, _meta: meta } });
        }
        t.waiters.push(answer);
      };
      // Blocks until terminal; a working task advances meanwhile on its own.
      if (t.status === 'working') {
        const tick = setInterval(() => { step(t); if (t.status !== 'working') clearInterval(tick); }, 20);
      }
      return answer();
    }
    default:
      return fail(-32601, 'Method not found');
  }
};
