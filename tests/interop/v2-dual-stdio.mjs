// tests/interop/v2-dual-stdio.mjs: a server on the official TypeScript SDK v2
// (@modelcontextprotocol/server) serving both eras over stdio (serveStdio);
// LEGACY=reject makes it modern-only (initialize gets -32022); it
// records nothing itself: tests/era/tee-stdin.sh records what it is sent.
import { McpServer, fromJsonSchema } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
serveStdio(() => {
  const server = new McpServer({ name: 'v2-dual', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.registerTool('echo', { description: 'echo', inputSchema: fromJsonSchema({type:'object',properties:{text:{type:'string'}},required:['text']}) },
    async ({ text }) => ({ content: [{ type: 'text', text }] }));
  return server;
}, process.env.LEGACY ? { legacy: process.env.LEGACY } : {});
