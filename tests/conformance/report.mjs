// SPDX-License-Identifier: MIT
// tests/conformance/report.mjs: the per-scenario table of a run.sh run.
//
//   node report.mjs BASELINE OUTDIR [SUMMARY]
//
// OUTDIR/runs.tsv (written by run.sh) has one line per suite invocation:
//   label <TAB> kind <TAB> what <TAB> dir <TAB> exit code <TAB> seconds
// kind "requirements": what is a revision whose frozen set ran into dir;
// kind "scenario": what is one scenario's name, run alone into dir.
//
// For every scenario it reads the checks.json the suite wrote, collapses
// repeated check ids to their worst status, and judges:
//   pass              no FAILURE or WARNING
//   expected-failure  every failing check (or the scenario) is listed in
//                     BASELINE (expected-failures.yml)
//   FAIL              a failing check that is not listed
//   STALE             listed in BASELINE but passing: take the entry out
//   MISSING           the suite wrote no checks.json for it
// Not-scored scenarios (requirements' not_scored) are judged the same way,
// so that a regression there is seen too, although the suite's own exit
// code ignores them.  Exit status 1 when any line is FAIL, STALE or MISSING.
import { readFileSync, readdirSync, existsSync, writeFileSync } from 'node:fs';
import { join, dirname, basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';

const here = dirname(fileURLToPath(import.meta.url));
const [baselinePath, outdir, summaryPath] = process.argv.slice(2);
if (!baselinePath || !outdir) {
  console.error('usage: node report.mjs BASELINE OUTDIR [SUMMARY]');
  process.exit(2);
}

const baseline = YAML.parse(readFileSync(baselinePath, 'utf8')) ?? {};
const wholeScenario = new Set();
const checkEntries = new Map(); // scenario -> Set of check ids
for (const e of baseline.client ?? []) {
  const s = String(e);
  const i = s.indexOf(':');
  if (i < 0) wholeScenario.add(s);
  else {
    const sc = s.slice(0, i);
    if (!checkEntries.has(sc)) checkEntries.set(sc, new Set());
    checkEntries.get(sc).add(s.slice(i + 1));
  }
}

const reqDir = join(here, 'node_modules/@modelcontextprotocol/conformance/requirements');
function requirementSet(rev) {
  const y = YAML.parse(readFileSync(join(reqDir, `${rev}.yaml`), 'utf8'));
  const scored = (y.client ?? []).map(String);
  const notScored = (y.not_scored ?? []).filter((n) => n.leg === 'client').map((n) => n.scenario);
  return { scored, notScored };
}

// dir/<scenario>-<ISO timestamp>/checks.json; the newest if several.
function checksOf(dir, scenario) {
  const d = join(dir, dirname(scenario));
  if (!existsSync(d)) return null;
  const base = basename(scenario);
  const re = new RegExp(`^${base.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}-\\d{4}-\\d\\d-\\d\\dT`);
  const hits = readdirSync(d)
    .filter((n) => re.test(n) && existsSync(join(d, n, 'checks.json')))
    .sort();
  if (!hits.length) return null;
  return JSON.parse(readFileSync(join(d, hits[hits.length - 1], 'checks.json'), 'utf8'));
}

const severity = { FAILURE: 3, WARNING: 2, SUCCESS: 1, INFO: 0, SKIPPED: 0 };
function judge(scenario, checks) {
  if (!checks) return { result: 'MISSING', ok: 0, fail: 0, warn: 0, failing: [] };
  const worst = new Map();
  for (const c of checks) {
    const prev = worst.get(c.id);
    if (!prev || severity[c.status] > severity[prev]) worst.set(c.id, c.status);
  }
  // Counted as the suite's own summary counts them (every check); judged
  // by check id (the worst status of each).
  const ok = checks.filter((c) => c.status === 'SUCCESS').length;
  const fail = checks.filter((c) => c.status === 'FAILURE').length;
  const warn = checks.filter((c) => c.status === 'WARNING').length;
  const failing = [...worst].filter(([, s]) => s === 'FAILURE' || s === 'WARNING').map(([id]) => id);
  let result;
  if (wholeScenario.has(scenario)) result = failing.length ? 'expected-failure' : 'STALE';
  else if (checkEntries.has(scenario)) {
    const listed = checkEntries.get(scenario);
    if (failing.some((id) => !listed.has(id))) result = 'FAIL';
    else if ([...listed].some((id) => worst.get(id) === 'SUCCESS')) result = 'STALE';
    else result = failing.length ? 'expected-failure' : 'pass';
  } else result = failing.length ? 'FAIL' : 'pass';
  return { result, ok, fail, warn, failing };
}

const runs = readFileSync(join(outdir, 'runs.tsv'), 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => {
    const [label, kind, what, dir, rc, secs] = l.split('\t');
    return { label, kind, what, dir, rc: Number(rc), secs };
  });

const rows = [];
const pad = (s, n) => String(s).padEnd(n);
let bad = 0;
console.log(
  `${pad('run', 16)} ${pad('scenario', 42)} ${pad('scored', 7)} ${pad('ok/fail/warn', 13)} result`
);
for (const run of runs) {
  let list;
  if (run.kind === 'requirements') {
    const { scored, notScored } = requirementSet(run.what);
    list = [...scored.map((s) => [s, true]), ...notScored.map((s) => [s, false])];
  } else {
    list = [[run.what, false]];
  }
  const tally = { scored: [0, 0, 0], other: [0, 0, 0] };
  for (const [scenario, scored] of list) {
    const j = judge(scenario, checksOf(run.dir, scenario));
    const t = scored ? tally.scored : tally.other;
    t[1]++;
    if (j.result === 'pass') t[0]++;
    if (j.result === 'expected-failure') t[2]++;
    if (!['pass', 'expected-failure'].includes(j.result)) bad++;
    const tag = run.kind === 'requirements' ? (scored ? 'yes' : 'no') : 'alone';
    const detail = j.failing.length ? `  (${j.failing.join(', ')})` : '';
    console.log(
      `${pad(run.label, 16)} ${pad(scenario, 42)} ${pad(tag, 7)} ${pad(`${j.ok}/${j.fail}/${j.warn}`, 13)} ${j.result}${detail}`
    );
    rows.push([run.label, scenario, tag, j.result, j.ok, j.fail, j.warn].join('\t'));
  }
  run.tally = tally;
}
console.log('');
for (const run of runs) {
  const { scored, other } = run.tally;
  const count = ([pass, all, xfail]) =>
    `${pass}/${all} pass` + (xfail ? ` (+${xfail} expected failure${xfail > 1 ? 's' : ''})` : '');
  const what =
    run.kind === 'requirements'
      ? `scored ${count(scored)}, not scored ${count(other)}`
      : count(other);
  const name = run.kind === 'requirements' ? `requirements ${run.label}` : `${run.label} ${run.what}`;
  console.log(`${pad(name, 52)} ${what}; suite exit ${run.rc}, ${run.secs} s`);
}
if (summaryPath) writeFileSync(summaryPath, rows.join('\n') + '\n');
process.exit(bad ? 1 : 0);
