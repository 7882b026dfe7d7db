// SPDX-License-Identifier: MIT
// globsync-hooks.mjs: module resolve hook (see node20-globsync.mjs).  Only
// imports of "fs" made from inside @modelcontextprotocol/conformance are
// redirected; everything else resolves as usual.
const replacement = new URL('./fs-with-globsync.mjs', import.meta.url).href;

export async function resolve(specifier, context, nextResolve) {
  if ((specifier === 'fs' || specifier === 'node:fs') && context.parentURL &&
      context.parentURL.includes('/node_modules/@modelcontextprotocol/conformance/')) {
    return { url: replacement, shortCircuit: true };
  }
  return nextResolve(specifier, context);
}
