// SPDX-License-Identifier: MIT
// tests/interop/v2-tasks-server.mjs: task tools on the official TypeScript SDK
// v2 server (@modelcontextprotocol/server createMcpHandler, both eras, over
// HTTP through tests/interop/fetch-bridge.mjs), for tests/check_tasks_http.c.
// The SDK ships the task wire schemas and the Streamable HTTP header checks
// (Mcp-Name = params.taskId on tasks/*) but no task store, so the tasks live
// here, in the consumer's own handlers:
//   2026-07-28  the io.modelcontextprotocol/tasks extension (SEP-2663):
//               server/discover advertises it; a tools/call from a client that
//               declared it answers {resultType:"task"}; tasks/get, tasks/update,
//               tasks/cancel (the SDK answers tasks/result and tasks/list -32601
//               itself: removed in this era)
//   2025-11-25  the task utility: capabilities.tasks, tools' execution.taskSupport
//               "required"; tools/call with params.task answers {task}; tasks/get,
//               tasks/result (elicits during it for "ask"), tasks/list, tasks/cancel
// Tools (a task advances one step per tasks/get; poll interval 20 ms):
//   slow {n}  working "step 1".."step 3", then completed "slow done <n>"
//   ask       working, then input_required (modern: inputRequests {q1}; legacy:
//             an elicitation/create during tasks/result), then "got <answer>"
//   boom      working, then failed {code:-32050, message:"disk full"}
//   forever   working until tasks/cancel
// Over HTTP (the default) prints "MCPCONN_TEST_PORT=<port>" once listening;
// exits when stdin closes.  With argv[2] "stdio": the same server over stdio.
//   RECORD=FILE  one JSON line per HTTP request: method, HTTP version, the mcp-*
//                headers, the body, and the HTTP status the SDK answered
//   H2=1         HTTP/2 over cleartext (h2c, prior knowledge) instead of HTTP/1.1
import http from 'node:http';
import http2 from 'node:http2';
import fs from 'node:fs';
import { listenAndReport, pipeResponse, readBody, toRequest } from './fetch-bridge.mjs';
import { Server, createMcpHandler } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';

const EXT = 'io.modelcontextprotocol/tasks';
const CC = 'io.modelcontextprotocol/clientCapabilities';
const tasks = new Map(); // taskId -> {tool, args, status, polls, message, result, answer}
let next = 1;
const now = () => new Date().toISOString();
const text = (t) => ({ content: [{ type: 'text', text: t }] });
const terminal = (t) => ['completed', 'failed', 'cancelled'].includes(t.status);
const fail = (code, message) => Object.assign(new Error(message), { code });

const view = (id, modern) => {
  const t = tasks.get(id);
  const v = { taskId: id, status: t.status, createdAt: t.created, lastUpdatedAt: now() };
  if (t.message) v.statusMessage = t.message;
  if (modern) { v.ttlMs = null; v.pollIntervalMs = 20; } else { v.ttl = null; v.pollInterval = 20; }
  if (modern && t.status === 'completed') v.result = t.result;
  if (modern && t.status === 'failed') v.error = { code: -32050, message: 'disk full' };
  if (modern && t.status === 'input_required')
    v.inputRequests = { q1: { method: 'elicitation/create', params: { message: 'Which colour?',
      requestedSchema: { type: 'object', properties: { colour: { type: 'string' } } } } } };
  return v;
};
const step = (t) => {
  if (terminal(t)) return;
  t.polls++;
  if (t.tool === 'slow') {
    if (t.polls <= 3) { t.message = `step ${t.polls}`; return; }
    t.status = 'completed'; t.message = undefined; t.result = text(`slow done ${t.args?.n ?? ''}`);
  } else if (t.tool === 'boom') {
    if (t.polls === 1) { t.message = 'working hard'; return; }
    t.status = 'failed'; t.message = 'disk full';
  } else if (t.tool === 'ask') {
    if (t.answer !== undefined) {
      t.status = 'completed'; t.message = undefined; t.result = text(`got ${JSON.stringify(t.answer)}`);
    } else if (t.polls >= 2 && t.status === 'working') {
      t.status = 'input_required'; t.message = 'waiting for a colour';
    }
  }
};
const TOOLS = ['slow', 'ask', 'boom', 'forever'];
// Params pass through as sent (the SDK checks the envelope itself).
const taskParams = { params: z.looseObject({ taskId: z.string() }) };
const anyParams = { params: z.looseObject({}) };
const lookup = (params) => {
  const t = tasks.get(params.taskId);
  if (!t) throw fail(-32602, `no task ${params.taskId}`);
  return t;
};

const factory = (ctx) => {
  const modernEra = ctx?.era !== 'legacy';
  const caps = modernEra ? { tools: {}, extensions: { [EXT]: {} } }
    : { tools: {}, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } };
  const server = new Server({ name: 'v2-tasks', version: '1.0.0' }, { capabilities: caps });
  server.setRequestHandler('tools/list', async () => ({
    tools: TOOLS.map((name) => ({ name, inputSchema: { type: 'object' },
                                  execution: { taskSupport: 'required' } })) }));
  const isModern = () => modernEra;
  server.setRequestHandler('tools/call', async (req, rctx) => {
    const p = req.params;
    if (!TOOLS.includes(p.name)) throw fail(-32602, `unknown tool ${p.name}`);
    const modern = modernEra;
    // The SDK lifts the request's _meta envelope off params into mcpReq.envelope.
    if (modern && !rctx.mcpReq.envelope?.[CC]?.extensions?.[EXT]) return text(`${p.name} done (direct)`);
    if (!modern && p.task === undefined) throw fail(-32601, `tool ${p.name} requires task augmentation`);
    const id = `task-${next++}-${p.name}`;
    tasks.set(id, { tool: p.name, args: p.arguments, status: 'working', polls: 0, created: now() });
    if (modern) return { resultType: 'task', ...view(id, true) };
    // The SDK validates every tools/call result against CallToolResult; on
    // 2025-11-25 it refuses a body with `task` and no `content` ("another
    // result family cannot default into an empty tools/call success"), so the
    // CreateTaskResult carries an empty content array to pass.
    return { content: [], task: view(id, false) };
  });
  server.setRequestHandler('tasks/get', taskParams, async (p) => {
    const t = lookup(p);
    step(t);
    return view(p.taskId, isModern(p));
  });
  server.setRequestHandler('tasks/update', taskParams, async (p, rctx) => {
    if (!isModern(p)) throw fail(-32601, 'Method not found');
    const t = lookup(p);
    // The SDK lifts inputResponses off params (as for a multi-round-trip
    // retry) into mcpReq.inputResponses.
    const r = (p.inputResponses ?? rctx.mcpReq.inputResponses)?.q1;
    if (r && t.status === 'input_required') { t.answer = r.content ?? r; t.status = 'working'; t.message = 'thanks'; }
    return {};
  });
  server.setRequestHandler('tasks/cancel', taskParams, async (p) => {
    const t = lookup(p);
    if (!terminal(t)) { t.status = 'cancelled'; t.message = 'cancelled by request'; }
    return isModern(p) ? {} : view(p.taskId, false);
  });
  if (!modernEra) {
    server.setRequestHandler('tasks/list', anyParams, async () => ({
      tasks: [...tasks.keys()].map((id) => view(id, false)) }));
    server.setRequestHandler('tasks/result', taskParams, async (p, rctx) => {
      const t = lookup(p);
      const meta = { 'io.modelcontextprotocol/related-task': { taskId: p.taskId } };
      for (;;) {
        if (t.status === 'completed') return { ...t.result, _meta: meta };
        if (t.status === 'failed') throw fail(-32050, 'disk full');
        if (t.status === 'cancelled') throw fail(-32603, 'task cancelled');
        if (t.status === 'input_required' && t.tool === 'ask') {
          const got = await rctx.mcpReq.send({ method: 'elicitation/create', params: {
            message: 'Which colour?', _meta: meta,
            requestedSchema: { type: 'object', properties: { colour: { type: 'string' } } } } });
          t.answer = got.content; t.status = 'completed'; t.message = undefined;
          t.result = text(`got ${JSON.stringify(t.answer)}`);
          continue;
        }
        await new Promise((r) => setTimeout(r, 20));
        step(t);
      }
    });
  }
  return server;
};
if (process.argv[2] === 'stdio') {
  // The same factory over stdio (one connection, so a 2025-11-25 tasks/result
  // can send its elicitation: createMcpHandler serves each legacy HTTP request
  // alone, without a session, and cannot).  LOG=FILE gets every line received.
  if (process.env.LOG) process.stdin.on('data', (d) => fs.appendFileSync(process.env.LOG, d));
  serveStdio(factory);
} else {
  serveHttp();
}

function serveHttp() {
  const handler = createMcpHandler(factory);
  const record = process.env.RECORD;
  const h2 = process.env.H2 === '1';

  const serve = async (req, res) => {
    const body = await readBody(req);
    let out;
    try {
      out = await handler.fetch(toRequest(req, body));
    } catch (e) {
      out = new Response(String(e), { status: 500 });
    }
    if (record) {
      const h = {};
      for (const [k, v] of Object.entries(req.headers))
        if (k.startsWith('mcp-')) h[k] = v;
      fs.appendFileSync(record, JSON.stringify({ method: req.method, http: req.httpVersion, headers: h,
                                                 body: body.toString('utf8'), status: out.status }) + '\n');
    }
    await pipeResponse(req, res, out, h2);
  };
  listenAndReport(h2 ? http2.createServer(serve) : http.createServer(serve));
}
