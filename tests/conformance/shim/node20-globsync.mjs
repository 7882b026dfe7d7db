// SPDX-License-Identifier: MIT
// node20-globsync.mjs: lets @modelcontextprotocol/conformance (0.1.16 and
// 0.2.0-alpha.12 alike) run on Node 20.  Its CLI does
// `import { globSync } from "fs"`, an export Node 20 lacks (it arrived in
// Node 22), so the module fails to link before it runs.
// Passed with `node --import ./shim/node20-globsync.mjs`, this registers a
// resolve hook that hands the conformance package a copy of "fs" which also
// exports globSync.  Nothing under node_modules is touched; on a Node that
// has fs.globSync the hook is not installed at all.
import fs from 'node:fs';
import { register } from 'node:module';

if (typeof fs.globSync !== 'function') {
  register('./globsync-hooks.mjs', import.meta.url);
}
