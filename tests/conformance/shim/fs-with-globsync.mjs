// SPDX-License-Identifier: MIT
// fs-with-globsync.mjs: node:fs plus a small globSync for Node 20.  The
// conformance CLI uses it only as globSync('**/checks.json', {cwd}) (its
// tier-check command); this supports '**', '*', '?' and literal segments,
// relative to options.cwd, returning relative paths like Node 22 does.
import fs from 'node:fs';
import path from 'node:path';

export * from 'node:fs';
export default fs;

function segmentRegExp(seg) {
  let re = '^';
  for (const ch of seg) {
    if (ch === '*') re += '[^/]*';
    else if (ch === '?') re += '[^/]';
    else re += ch.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(re + '$');
}

export function globSync(pattern, options = {}) {
  const cwd = options.cwd ? String(options.cwd) : process.cwd();
  const patterns = Array.isArray(pattern) ? pattern : [pattern];
  const out = new Set();
  const walk = (rel, segs) => {
    if (segs.length === 0) {
      if (rel) out.add(rel);
      return;
    }
    const [seg, ...rest] = segs;
    const abs = path.join(cwd, rel);
    let entries;
    try {
      entries = fs.readdirSync(abs, { withFileTypes: true });
    } catch {
      return;
    }
    if (seg === '**') {
      walk(rel, rest);
      for (const e of entries)
        if (e.isDirectory()) walk(rel ? path.join(rel, e.name) : e.name, segs);
      return;
    }
    const re = segmentRegExp(seg);
    for (const e of entries) {
      if (!re.test(e.name)) continue;
      const next = rel ? path.join(rel, e.name) : e.name;
      if (rest.length === 0 || e.isDirectory()) walk(next, rest);
    }
  };
  for (const p of patterns) walk('', String(p).split('/').filter((s) => s !== ''));
  return [...out].sort();
}
