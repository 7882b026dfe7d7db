// SPDX-License-Identifier: MIT
// sdk-tasks-server.mjs: a stdio MCP server on the official TypeScript SDK
// (@modelcontextprotocol/sdk, its experimental 2025-11-25 task support:
// McpServer.experimental.tasks.registerToolTask and InMemoryTaskStore, which
// answer tasks/get, tasks/result, tasks/list and tasks/cancel), for
// tests/check_tasks.c.  Tools, each execution.taskSupport "required":
//   sdk-slow  {n}  working for ~150 ms (statusMessage "busy"), then completed
//                  with "sdk slow done <n>"
//   sdk-boom       working, then failed with a tool error "sdk disk full"
//   sdk-forever    working until cancelled (tasks/cancel)
// Every line received is appended to $LOG.
import { appendFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import { z } from 'zod';

if (process.env.LOG) {
  process.stdin.on('data', (d) => appendFileSync(process.env.LOG, d));
}
const taskStore = new InMemoryTaskStore();
const server = new McpServer({ name: 'sdk-tasks', version: '1' }, {
  capabilities: { tools: {}, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
  taskStore,
});
const later = (ms, fn) => setTimeout(() => fn().catch(() => {}), ms);
const handler = (work) => ({
  createTask: async (args, extra) => {
    const task = await extra.taskStore.createTask({ ttl: 60000, pollInterval: 20 });
    work(task.taskId, args, extra.taskStore);
    return { task };
  },
  getTask: async (_args, extra) => extra.taskStore.getTask(extra.taskId),
  getTaskResult: async (_args, extra) => extra.taskStore.getTaskResult(extra.taskId),
});
server.experimental.tasks.registerToolTask('sdk-slow', {
  inputSchema: { n: z.number().optional() }, execution: { taskSupport: 'required' },
}, handler((id, args, store) => {
  later(30, () => store.updateTaskStatus(id, 'working', 'busy'));
  later(150, () => store.storeTaskResult(id, 'completed', { content: [{ type: 'text', text: `sdk slow done ${args?.n ?? ''}` }] }));
}));
server.experimental.tasks.registerToolTask('sdk-boom', { inputSchema: {}, execution: { taskSupport: 'required' } },
  handler((id, _args, store) => later(60, () => store.storeTaskResult(id, 'failed',
    { content: [{ type: 'text', text: 'sdk disk full' }], isError: true }))));
server.experimental.tasks.registerToolTask('sdk-forever', { inputSchema: {}, execution: { taskSupport: 'required' } },
  handler(() => {}));
await server.connect(new StdioServerTransport());
