// SPDX-License-Identifier: MIT
// report.mjs: turns the raw runs of bench/run into medians, ratios and
// target verdicts (sides: mcpconn, ts = the TS SDK 1.x client "v1", ts2 =
// the 2.x client "v2", h2load, ref, era = mcpconn in the eras section): bench/results/latest.json (machine-readable), the
// generated part of docs/PERFORMANCE.md (between its markers) and
// docs/performance-latency.png (gnuplot, bench/latency.gp).
//
//   node report.mjs --work DIR --src DIR --reps N --elapsed S --mcpconn CMD
//                   [--quick] [--no-docs]
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const argv = process.argv.slice(2);
const opt = { quick: false, docs: true };
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === '--quick') opt.quick = true;
  else if (a === '--no-docs') opt.docs = false;
  else opt[a.replace(/^--/, '')] = argv[++i];
}
const WORK = opt.work, SRC = opt.src;
const RUNS = path.join(WORK, 'runs');

const median = (xs) => {
  const v = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (!v.length) return null;
  const m = v.length >> 1;
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
};
const round = (x, d = 1) => (x === null || x === undefined ? null : Number(x.toFixed(d)));
const read = (f) => { try { return fs.readFileSync(f, 'utf8'); } catch { return null; } };

// All runs of one case and side: [{rep, rc, result|null, lat file}].
function runsOf(id, side) {
  const out = [];
  for (const f of fs.readdirSync(RUNS)) {
    const m = f.match(/^(.+)\.([a-z0-9]+)\.(\d+)\.rc$/);
    if (!m || m[1] !== id || m[2] !== side) continue;
    const base = path.join(RUNS, f.slice(0, -3));
    const rc = Number(read(f && `${base}.rc`));
    let result = null;
    if (side === 'h2load') result = parseH2load(read(`${base}.txt`) ?? '');
    else {
      try { result = JSON.parse((read(`${base}.json`) ?? '').trim()); } catch { result = null; }
    }
    // The first line that says why a run failed, for the table.
    const why = rc !== 0 || !result
      ? (read(`${base}.err`) ?? read(`${base}.txt`) ?? '').split('\n').find((l) => /fail|error|not available|refused|timed out/i.test(l)) ?? `exit ${rc}`
      : null;
    out.push({ rep: Number(m[3]), rc, result, lat: `${base}.lat`, why });
  }
  return out.sort((a, b) => a.rep - b.rep);
}

function parseH2load(text) {
  const fin = text.match(/finished in ([\d.]+)(m?s), ([\d.]+) req\/s/);
  const req = text.match(/requests: (\d+) total, \d+ started, \d+ done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout/);
  const tfr = text.match(/time for request:\s+(\S+)\s+(\S+)\s+(\S+)/);
  if (!fin || !req) return null;
  const toUs = (s) => {
    const m = s.match(/^([\d.]+)(us|ms|s)$/);
    return m ? Number(m[1]) * (m[2] === 'us' ? 1 : m[2] === 'ms' ? 1e3 : 1e6) : null;
  };
  const total = Number(req[1]), ok = Number(req[2]);
  return {
    client: 'h2load', calls: total, ok, errors: total - ok,
    calls_per_s: Number(fin[3]), lat_us: { mean: tfr ? toUs(tfr[3]) : null }
  };
}

function summarize(runs) {
  const good = runs.filter((r) => r.result);
  const res = good.map((r) => r.result);
  const failed = runs.filter((r) => r.rc !== 0 || !r.result || r.result.errors > 0).length;
  const why = runs.find((r) => r.why)?.why?.trim().slice(0, 160) ?? null;
  if (!res.length) return { runs: runs.length, failed, calls_per_s: null, why };
  const cps = median(res.map((r) => r.calls_per_s));
  // The run whose throughput is the median one gives the latency curve.
  let medRun = good[0];
  for (const r of good) {
    if (Math.abs(r.result.calls_per_s - cps) < Math.abs(medRun.result.calls_per_s - cps)) medRun = r;
  }
  return {
    runs: runs.length,
    failed,
    errors_total: res.reduce((s, r) => s + (r.errors ?? 0), 0),
    calls_per_s: round(cps),
    calls_per_s_all: res.map((r) => r.calls_per_s),
    lat_us: {
      mean: round(median(res.map((r) => r.lat_us?.mean))),
      p50: round(median(res.map((r) => r.lat_us?.p50))),
      p90: round(median(res.map((r) => r.lat_us?.p90))),
      p99: round(median(res.map((r) => r.lat_us?.p99))),
      max: round(median(res.map((r) => r.lat_us?.max)))
    },
    init_ms: round(median(res.map((r) => r.init_ms)), 2),
    // The revision negotiated (the clients say it in their JSON line);
    // several when runs differed.
    protocol: [...new Set(res.map((r) => r.protocol).filter(Boolean))].join(' ') || null,
    rss_peak_kb: median(res.map((r) => r.rss_peak_kb)),
    cpu_s_per_1000: round(median(res.map((r) => (r.cpu_s / r.calls) * 1000)), 4),
    client: res[0].client,
    transport: res[0].transport,
    latency_file: medRun.lat,
    why
  };
}

// ---- gather ------------------------------------------------------------------
const caseLines = (read(path.join(WORK, 'cases.txt')) ?? '').trim().split('\n').filter(Boolean);
// Runs of one repetition ran back to back, under the same load: the median
// of their ratios is steadier than the ratio of the medians.
function pairedRatio(mcRuns, otherRuns) {
  const pairs = [];
  for (const r of mcRuns) {
    const o = otherRuns.find((x) => x.rep === r.rep);
    if (r.result?.calls_per_s && o?.result?.calls_per_s) pairs.push(r.result.calls_per_s / o.result.calls_per_s);
  }
  return { pairs: pairs.map((x) => round(x, 2)), ratio: pairs.length ? round(median(pairs), 2) : null };
}
// mcpconn against one TS client (ts: v1, ts2: v2), into c with suffix sfx.
function compare(c, mcRuns, mc, side, sfx) {
  const o = c[side];
  const p = pairedRatio(mcRuns, runsOf(c.id, side));
  c[`ratio_pairs${sfx}`] = p.pairs;
  c[`ratio_calls_per_s${sfx}`] = p.ratio;
  c[`ratio_of_medians${sfx}`] = mc.calls_per_s && o.calls_per_s ? round(mc.calls_per_s / o.calls_per_s, 2) : null;
  c[`ratio_rss${sfx}`] = mc.rss_peak_kb && o.rss_peak_kb ? round(o.rss_peak_kb / mc.rss_peak_kb, 1) : null;
  c[`ratio_cpu${sfx}`] = mc.cpu_s_per_1000 && o.cpu_s_per_1000 ? round(o.cpu_s_per_1000 / mc.cpu_s_per_1000, 1) : null;
}
const cases = caseLines.map((l) => {
  const [id, title, calls] = l.split('|');
  const mc = summarize(runsOf(id, 'mcpconn'));
  const ts = summarize(runsOf(id, 'ts'));
  const ts2 = summarize(runsOf(id, 'ts2'));
  const h2 = runsOf(id, 'h2load');
  const c = { id, title, calls: Number(calls), mcpconn: mc, ts, ts2 };
  if (h2.length) c.h2load = summarize(h2);
  const mcRuns = runsOf(id, 'mcpconn');
  compare(c, mcRuns, mc, 'ts', '');
  compare(c, mcRuns, mc, 'ts2', '_v2');
  if (h2.length) {
    const hp = [];
    for (const r of mcRuns) {
      const o = h2.find((x) => x.rep === r.rep);
      if (r.result?.calls_per_s && o?.result?.calls_per_s) hp.push(r.result.calls_per_s / o.result.calls_per_s);
    }
    if (hp.length) c.ratio_h2load = round(median(hp), 2);
  }
  return c;
});
const refIds = ['ref-pipe-seq', 'ref-pipe-64', 'ref-tcp-seq', 'ref-tcp-64', 'ref-server-seq', 'ref-server-64'];
const refTitles = {
  'ref-pipe-seq': 'pipe ping-pong, trivial echo child, sequential',
  'ref-pipe-64': 'pipe ping-pong, trivial echo child, 64 in flight',
  'ref-tcp-seq': 'loopback TCP ping-pong, echo child, sequential',
  'ref-tcp-64': 'loopback TCP ping-pong, echo child, 64 in flight',
  'ref-server-seq': 'raw client (no JSON parsing) vs the demo server over pipes, sequential',
  'ref-server-64': 'raw client (no JSON parsing) vs the demo server over pipes, 64 in flight'
};
const refs = refIds.map((id) => ({ id, title: refTitles[id], ...summarize(runsOf(id, 'ref')) }));
const ref = Object.fromEntries(refs.map((r) => [r.id, r]));
// mcpconn alone against the (dual-era) demo server in each MCP era.
const eraTitles = {
  'era-legacy-seq': 'mcpconn vs the demo server, legacy (2025-11-25), sequential',
  'era-modern-seq': 'mcpconn vs the demo server, modern (2026-07-28), sequential',
  'era-legacy-64': 'mcpconn vs the demo server, legacy (2025-11-25), 64 in flight',
  'era-modern-64': 'mcpconn vs the demo server, modern (2026-07-28), 64 in flight'
};
// mcpconn is side 'era'; the TS clients ran beside it (v1 in the legacy
// era only), rotating.
const eras = Object.keys(eraTitles).map((id) => {
  const e = { id, title: eraTitles[id], ...summarize(runsOf(id, 'era')) };
  for (const [side, key] of [['ts', 'v1'], ['ts2', 'v2']]) {
    const o = runsOf(id, side);
    if (!o.length) continue;
    e[key] = summarize(o);
    e[`ratio_${key}`] = pairedRatio(runsOf(id, 'era'), o).ratio;
  }
  return e;
}).filter((e) => e.runs);
const byId = Object.fromEntries(cases.map((c) => [c.id, c]));

// ---- callgrind -----------------------------------------------------------------
function cgParse(file) {
  const text = read(file);
  if (!text) return null;
  const fns = new Map();
  let total = null;
  for (const line of text.split('\n')) {
    const tot = line.match(/^\s*([\d,]+)\s+\(100\.0%\)\s+PROGRAM TOTALS/);
    if (tot) total = Number(tot[1].replace(/,/g, ''));
    // The function summary: "Ir (pct)  file:function [object]"; the
    // annotated source and call edges ("=> ...") are skipped.
    const m = line.match(/^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(\S+)\s+\[[^\]]+\]\s*$/);
    if (!m) continue;
    const ir = Number(m[1].replace(/,/g, ''));
    const name = m[2].replace(/^.*:/, '').replace(/'\d+$/, '');
    fns.set(name, Math.max(fns.get(name) ?? 0, ir));
  }
  return { total, fns };
}
let callgrind = null;
{
  const a = cgParse(path.join(WORK, 'callgrind.1000.incl.txt'));
  const b = cgParse(path.join(WORK, 'callgrind.3000.incl.txt'));
  const sa = cgParse(path.join(WORK, 'callgrind.1000.self.txt'));
  const sb = cgParse(path.join(WORK, 'callgrind.3000.self.txt'));
  if (a?.total && b?.total) {
    const per = (x, y) => Math.round((y - x) / 2000);
    const top = (A, B, n) => [...B.fns.entries()]
      .map(([k, v]) => [k, per(A.fns.get(k) ?? 0, v)])
      .filter(([k, v]) => v > 0 && !/^(0x|start_thread|clone|\(below main\))/.test(k))
      .sort((x, y) => y[1] - x[1]).slice(0, n)
      .map(([fn, ir]) => ({ fn, ir_per_call: ir }));
    const fnPer = (k) => per(a.fns.get(k) ?? 0, b.fns.get(k) ?? 0);
    callgrind = {
      library_ir_per_call: fnPer('mcp_client_call_tool') + fnPer('reader_main'),
      harness_check_ir_per_call: fnPer('record'),
      what: 'instructions executed by the client process per stdio tools/call (sequential, echo, 32-byte text): (Ir(3000 calls) - Ir(1000 calls)) / 2000, so start-up and shutdown cancel out; the server is not traced',
      ir_per_call: per(a.total, b.total),
      inclusive_top: top(a, b, 25),
      self_top: sa && sb ? top(sa, sb, 20) : []
    };
    // The same count with the client in the modern era (2026-07-28).
    const ma = cgParse(path.join(WORK, 'callgrind.modern.1000.incl.txt'));
    const mb = cgParse(path.join(WORK, 'callgrind.modern.3000.incl.txt'));
    if (ma?.total && mb?.total) {
      callgrind.modern_ir_per_call = per(ma.total, mb.total);
      callgrind.modern_library_ir_per_call =
        per(ma.fns.get('mcp_client_call_tool') ?? 0, mb.fns.get('mcp_client_call_tool') ?? 0) +
        per(ma.fns.get('reader_main') ?? 0, mb.fns.get('reader_main') ?? 0);
    }
  }
}

// ---- targets ---------------------------------------------------------------------
const targets = [];
const t = (name, value, goal, met, note) => targets.push({ name, value, goal, met, note });
{
  const s = byId['stdio-seq'];
  if (s) {
    t('stdio sequential vs TS SDK (calls/s)', s.ratio_calls_per_s, '>= 10x', s.ratio_calls_per_s >= 10);
    const pipe = ref['ref-pipe-seq']?.calls_per_s, srv = ref['ref-server-seq']?.calls_per_s;
    if (pipe && s.mcpconn.calls_per_s) {
      t('stdio sequential vs raw pipe ping-pong (calls/s)', round(s.mcpconn.calls_per_s / pipe, 3), '>= 0.75x',
        s.mcpconn.calls_per_s / pipe >= 0.75,
        srv ? `a raw client that does no JSON work reaches ${round(srv / pipe, 2)}x of the pipe against the same demo server (the server's own limit); mcpconn reaches ${round(s.mcpconn.calls_per_s / srv, 2)}x of that` : undefined);
    }
  }
  for (const id of ['stdio-64', 'h1-json-64', 'h1-sse-64', 'h2-64', 'h2c-64']) {
    const c = byId[id];
    if (c) t(`${id}: 64 in flight vs TS SDK (calls/s)`, c.ratio_calls_per_s, '>= 10x', c.ratio_calls_per_s >= 10);
  }
  // The same goals against the 2.x client, in the era it negotiated.
  for (const id of ['stdio-seq', 'stdio-64', 'h1-json-64', 'h1-sse-64', 'h2-64', 'h2c-64']) {
    const c = byId[id];
    if (c?.ts2.runs) {
      t(`${id} vs TS SDK v2 (calls/s; v2 ${c.ts2.protocol ?? 'n/a'}, mcpconn ${c.mcpconn.protocol ?? 'n/a'})`,
        c.ratio_calls_per_s_v2, '>= 10x', c.ratio_calls_per_s_v2 >= 10);
    }
  }
  const h = byId['h2-1000'];
  if (h) {
    const all = h.mcpconn.failed === 0 && h.mcpconn.runs > 0;
    t('HTTP/2 1000 in flight: every call answered', all ? 'yes' : `no (${h.mcpconn.failed} of ${h.mcpconn.runs} runs had errors)`, 'all', all);
    if (h.ratio_h2load !== undefined) t('HTTP/2 1000 in flight vs h2load (calls/s)', h.ratio_h2load, '>= 0.5x', h.ratio_h2load >= 0.5);
  }
  const m = byId['manager-10'];
  if (m) t('RSS with 10 servers: TS SDK / mcpconn', m.ratio_rss, '>= 20x', m.ratio_rss >= 20);
  if (m?.ts2.runs) t('RSS with 10 servers: TS SDK v2 / mcpconn', m.ratio_rss_v2, '>= 20x', m.ratio_rss_v2 >= 20);
}

// ---- results file -------------------------------------------------------------------
const ver = (cmd, args) => { try { return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim().split('\n')[0]; } catch { return null; } };
const meta = {
  date: new Date().toISOString(),
  quick: opt.quick,
  reps: Number(opt.reps),
  elapsed_s: Number(opt.elapsed),
  host: {
    cpus: os.cpus().length, cpu_model: os.cpus()[0]?.model, mem_gb: round(os.totalmem() / 2 ** 30, 1),
    kernel: os.release(), loadavg_at_end: os.loadavg().map((x) => round(x, 2))
  },
  versions: {
    mcpconn: cases.find((c) => c.mcpconn.client)?.mcpconn.client ?? null,
    ts_sdk: cases.find((c) => c.ts.client)?.ts.client ?? null,
    ts_sdk_v2: cases.find((c) => c.ts2.client)?.ts2.client ?? eras.find((e) => e.v2?.client)?.v2.client ?? null,
    node: process.version,
    h2load: ver('h2load', ['--version']),
    git: ver('git', ['-C', SRC, 'describe', '--always', '--dirty'])
  },
  mcpconn_command: opt.mcpconn,
  // The server of the HTTP cases (bench/run writes it): the C test server,
  // or the TS SDK one with --node-http.
  http_server: (read(path.join(WORK, 'http-server.txt')) ?? '').trim() || null
};
const results = { meta, cases, references: refs, eras, callgrind, targets };
fs.mkdirSync(path.join(SRC, 'bench', 'results'), { recursive: true });
const resultsFile = path.join(SRC, 'bench', 'results', opt.quick ? 'quick.json' : 'latest.json');
fs.writeFileSync(resultsFile, JSON.stringify(results, (k, v) => (k === 'latency_file' ? undefined : v), 1) + '\n');

// ---- console summary -------------------------------------------------------------------
const fmt = (x) => (x === null || x === undefined ? 'n/a' : String(x));
const lines = [];
// v1: @modelcontextprotocol/sdk 1.x (legacy era only); v2: @modelcontextprotocol/client 2.x
// (in the era it negotiated, shown under its calls/s).
const era = (s) => (s.protocol ? ` (${s.protocol})` : '');
const na = (s) => (s.calls_per_s === null && s.why ? `n/a (${s.why.replace(/\|/g, '/')})` : fmt(s.calls_per_s));
const ratio = (r) => (r ? `**${r}x**` : 'n/a');
lines.push('| case | mcpconn calls/s | TS v1 calls/s | TS v2 calls/s (era) | mcpconn / v1 | mcpconn / v2 | p50 / p99 µs mcpconn; v1; v2 | peak RSS KB mcpconn / v1 / v2 | CPU s per 1000 calls mcpconn / v1 / v2 | h2load calls/s | failed runs mcpconn / v1 / v2 |');
lines.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
for (const c of cases) {
  const mc = c.mcpconn, ts = c.ts, ts2 = c.ts2;
  const lat = (s) => `${fmt(s.lat_us?.p50)} / ${fmt(s.lat_us?.p99)}`;
  lines.push(`| ${c.id}: ${c.title} | ${na(mc)} | ${na(ts)} | ${na(ts2)}${era(ts2)} | ${ratio(c.ratio_calls_per_s)} | ${ratio(c.ratio_calls_per_s_v2)} | ` +
    `${lat(mc)}; ${lat(ts)}; ${lat(ts2)} | ${fmt(mc.rss_peak_kb)} / ${fmt(ts.rss_peak_kb)} / ${fmt(ts2.rss_peak_kb)} | ` +
    `${fmt(mc.cpu_s_per_1000)} / ${fmt(ts.cpu_s_per_1000)} / ${fmt(ts2.cpu_s_per_1000)} | ` +
    `${c.h2load ? `${fmt(c.h2load.calls_per_s)} (mcpconn ${fmt(c.ratio_h2load)}x)` : ''} | ${mc.failed}/${mc.runs} / ${ts.failed}/${ts.runs} / ${ts2.failed}/${ts2.runs} |`);
}
const refLines = ['| reference | calls/s | p50 µs | p99 µs | CPU s per 1000 |', '|---|---:|---:|---:|---:|'];
for (const r of refs) refLines.push(`| ${r.id}: ${r.title} | ${fmt(r.calls_per_s)} | ${fmt(r.lat_us?.p50)} | ${fmt(r.lat_us?.p99)} | ${fmt(r.cpu_s_per_1000)} |`);
const eraLines = ['| era | mcpconn calls/s | TS v1 calls/s | TS v2 calls/s | mcpconn / v1 | mcpconn / v2 | p50 / p99 µs mcpconn; v1; v2 | peak RSS KB mcpconn / v1 / v2 | CPU s per 1000 mcpconn / v1 / v2 | failed runs mcpconn / v1 / v2 |',
  '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|'];
for (const e of eras) {
  const v1 = e.v1, v2 = e.v2, dash = '–';
  const f = (s, g) => (s ? g(s) : dash);
  eraLines.push(`| ${e.id}: ${e.title} | ${fmt(e.calls_per_s)} | ${f(v1, na)} | ${f(v2, (s) => na(s) + era(s))} | ` +
    `${v1 ? ratio(e.ratio_v1) : dash} | ${v2 ? ratio(e.ratio_v2) : dash} | ` +
    `${fmt(e.lat_us?.p50)} / ${fmt(e.lat_us?.p99)}; ${f(v1, (s) => `${fmt(s.lat_us?.p50)} / ${fmt(s.lat_us?.p99)}`)}; ${f(v2, (s) => `${fmt(s.lat_us?.p50)} / ${fmt(s.lat_us?.p99)}`)} | ` +
    `${fmt(e.rss_peak_kb)} / ${f(v1, (s) => fmt(s.rss_peak_kb))} / ${f(v2, (s) => fmt(s.rss_peak_kb))} | ` +
    `${fmt(e.cpu_s_per_1000)} / ${f(v1, (s) => fmt(s.cpu_s_per_1000))} / ${f(v2, (s) => fmt(s.cpu_s_per_1000))} | ` +
    `${e.failed}/${e.runs} / ${f(v1, (s) => `${s.failed}/${s.runs}`)} / ${f(v2, (s) => `${s.failed}/${s.runs}`)} |`);
}
const tLines = ['| target | where it stands | goal | met |', '|---|---|---|---|'];
for (const x of targets) tLines.push(`| ${x.name} | ${fmt(x.value)}${x.note ? ` (${x.note})` : ''} | ${x.goal} | ${x.met ? 'yes' : '**no**'} |`);
const cgLines = [];
if (callgrind) {
  cgLines.push(`Client instructions per stdio call: **${callgrind.ir_per_call}** (${callgrind.what}). ` +
    `Of these, **${callgrind.library_ir_per_call}** are the library's mcp_client_call_tool (on the stdio path the caller reads its own answer, ` +
    `so this includes reading and routing it) and ${callgrind.harness_check_ir_per_call} the benchmark's own check of each result ` +
    `(mcp_tool_result_text() on the result, compared with T_i).` +
    (callgrind.modern_ir_per_call ? ` That is the legacy era (2025-11-25); in the modern era (2026-07-28, every request carrying its _meta) ` +
      `it is **${callgrind.modern_ir_per_call}** (library: ${callgrind.modern_library_ir_per_call}).` : ''), '');
  cgLines.push('| function (inclusive) | instructions per call |', '|---|---:|');
  for (const f of callgrind.inclusive_top.slice(0, 18)) cgLines.push(`| ${f.fn} | ${f.ir_per_call} |`);
}
const httpCases = cases.some((c) => /^h[12]/.test(c.id));
process.stdout.write([...(meta.http_server && httpCases ? [`HTTP server: ${meta.http_server}`, ''] : []), ...lines, '', ...refLines, '', ...(eras.length ? [...eraLines, ''] : []), ...tLines, '', ...cgLines, ''].join('\n'));

// ---- plot -----------------------------------------------------------------------------------
let plotted = false;
if (opt.docs && !opt.quick) {
  const plotDir = path.join(WORK, 'plot');
  fs.mkdirSync(plotDir, { recursive: true });
  const series = [];
  for (const [id, side] of [['stdio-seq', 'mcpconn'], ['stdio-seq', 'ts'], ['stdio-seq', 'ts2'], ['h2-seq', 'mcpconn'],
    ['h2-seq', 'ts'], ['h2-seq', 'ts2'], ['stdio-64', 'mcpconn'], ['stdio-64', 'ts'], ['stdio-64', 'ts2'],
    ['h2-64', 'mcpconn'], ['h2-64', 'ts'], ['h2-64', 'ts2']]) {
    const f = byId[id]?.[side]?.latency_file;
    const text = f && read(f);
    const v = text ? text.trim().split('\n').map(Number).filter(Number.isFinite).sort((a, b) => a - b) : [];
    const out = path.join(plotDir, `${id}.${side}.dat`);
    const step = Math.max(1, Math.floor(v.length / 600));
    const rows = [];
    for (let i = 0; i < v.length; i += step) rows.push(`${v[i]} ${((i + 1) / v.length) * 100}`);
    if (v.length) rows.push(`${v[v.length - 1]} 100`);
    fs.writeFileSync(out, rows.join('\n') + '\n');
    series.push(out);
  }
  try {
    execFileSync('gnuplot', ['-e', `dir='${plotDir}'; out='${path.join(SRC, 'docs', 'performance-latency.png')}'`,
      path.join(SRC, 'bench', 'latency.gp')], { stdio: ['ignore', 'inherit', 'inherit'] });
    plotted = true;
  } catch (e) {
    process.stderr.write(`report: no plot (gnuplot: ${e.message.split('\n')[0]}); apt-get install gnuplot-nox\n`);
  }
}

// ---- docs/PERFORMANCE.md ---------------------------------------------------------------------------
if (opt.docs && !opt.quick) {
  const doc = path.join(SRC, 'docs', 'PERFORMANCE.md');
  const begin = '<!-- bench:begin (generated by bench/run; edits between these markers are overwritten) -->';
  const end = '<!-- bench:end -->';
  const gen = [
    begin,
    '',
    `Run of ${meta.date.slice(0, 10)}: ${meta.reps} repetitions per case and client, rotating (mcpconn, v1, v2), medians shown; ` +
    `${meta.host.cpus} CPUs (${meta.host.cpu_model}), load average at the end ${meta.host.loadavg_at_end.join(' ')}; ` +
    `${meta.versions.mcpconn} (git ${meta.versions.git}), ${meta.versions.ts_sdk} (v1) and ${meta.versions.ts_sdk_v2 ?? 'no v2'} (v2) on Node ${meta.versions.node}, ${meta.versions.h2load ?? 'no h2load'}. ` +
    `Took ${meta.elapsed_s} s. Raw numbers: [bench/results/latest.json](../bench/results/latest.json).`,
    '',
    ...(meta.http_server && httpCases
      ? [`HTTP cases: every client (mcpconn, the TS SDK clients, h2load) against the same server process, ${meta.http_server}` +
        (/^tests\//.test(meta.http_server)
          ? '; h2load, which does no MCP work, shows what that server can serve.'
          : '; this server, not the clients, is the ceiling: compare CPU seconds per 1000 calls.'), '']
      : []),
    '### mcpconn and the TypeScript SDK clients, case by case',
    '',
    'v1 is the SDK 1.x client (`@modelcontextprotocol/sdk`, the legacy era only: mcpconn is pinned to it with `--protocol legacy` in these cases); ' +
    'v2 is the 2.x client (`@modelcontextprotocol/client`, `versionNegotiation: auto`), in the era it negotiated (in parentheses): ' +
    'modern against the demo server, legacy against the C HTTP server. The eras section below compares all three in the same era.',
    '',
    ...lines,
    '',
    '### Physical limits',
    '',
    ...refLines,
    '',
    ...(eras.length ? ['### MCP eras (the demo server speaks both; v1 only the legacy one)', '', ...eraLines, ''] : []),
    '### Targets (issue #6)',
    '',
    ...tLines,
    '',
    ...(plotted ? ['### Latency distribution', '', '![latency CDF](performance-latency.png)', ''] : []),
    ...(cgLines.length ? ['### Instruction count (callgrind)', '', ...cgLines, ''] : []),
    end
  ].join('\n');
  let text = read(doc) ?? `# Performance\n\n${begin}\n${end}\n`;
  const i = text.indexOf(begin.slice(0, 18)), j = text.indexOf(end);
  text = i >= 0 && j > i ? text.slice(0, i) + gen + text.slice(j + end.length) : text + '\n' + gen + '\n';
  fs.writeFileSync(doc, text);
  process.stderr.write(`report: wrote ${resultsFile}, ${doc}${plotted ? ', docs/performance-latency.png' : ''}\n`);
} else {
  process.stderr.write(`report: wrote ${resultsFile}\n`);
}
