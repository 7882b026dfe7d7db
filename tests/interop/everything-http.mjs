// SPDX-License-Identifier: MIT
// everything-http.mjs: runs @modelcontextprotocol/server-everything's own
// Streamable HTTP transport (dist/transports/streamableHttp.js, unchanged)
// for tests/check_interop_http.c, on 127.0.0.1 and a free port instead of
// its fixed PORT (default 3001) on every interface.  Prints
// "MCPCONN_TEST_PORT=<port>" once listening; exits when stdin closes.
//
//   node everything-http.mjs [ENTRY]   ENTRY: server-everything's dist/index.js
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const entry = process.argv[2] ||
  path.join(here, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const transport = path.join(path.dirname(entry), 'transports/streamableHttp.js');

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const cb = args.find((a) => typeof a === 'function');
  this.once('listening', () => {
    process.stdout.write(`MCPCONN_TEST_PORT=${this.address().port}\n`);
  });
  return cb ? listen.call(this, 0, '127.0.0.1', cb) : listen.call(this, 0, '127.0.0.1');
};
process.stdin.on('end', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));
process.stdin.resume();
await import(pathToFileURL(transport).href);
