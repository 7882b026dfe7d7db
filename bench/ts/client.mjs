// SPDX-License-Identifier: MIT
// client.mjs: the TypeScript SDK client of mcpconn's benchmark.  It follows
// the contract of `mcpconn bench` (bench/README.md): same options, same
// sequence, same checks, same one-line JSON result, so bench/run can put
// the clients side by side.
//
//   node client.mjs --stdio '<server command line>' [common options]
//   node client.mjs --url <URL> [--http1.1 | --http2 | --h2c]
//                   [--insecure | --cacert FILE] [common options]
//   common: --calls N (5000) --concurrency C (1) --threads T (1)
//           --warmup W (200) --payload-bytes B (32) --tool NAME (echo)
//           --timeout-ms T (30000) --max-seconds S (300) --servers K
//           --latency-out FILE
//           --sdk 1|2 (1)  which SDK: 1 is @modelcontextprotocol/sdk 1.x,
//                          2 is @modelcontextprotocol/client 2.x
//           --protocol auto|modern|legacy  (--sdk 2 only; default auto)
//                          the v2 client's versionNegotiation mode: auto
//                          probes with server/discover and falls back to
//                          initialize, modern pins 2026-07-28, legacy is
//                          the plain 2025 handshake.  The 1.x client speaks
//                          the legacy era only.
//
// Both SDKs run the same harness below; only the imports, the Client
// options and callTool's signature differ.  The JSON line carries the
// revision negotiated ("protocol"), as mcpconn's does.
//
// Differences that come from the platform, not from the benchmark:
//  - JavaScript runs on one thread: --threads is accepted, and the C calls in
//    flight are C async loops on the event loop; "threads" reports 1.
//  - Node's fetch speaks HTTP/1.1 only, so for h2 and h2c the SDK's
//    StreamableHTTPClientTransport is given a fetch built on node:http2 (one
//    session, one stream per request) through its `fetch` option.
//  - --servers K connects K clients, each with its own transport, and sends
//    call i to client i mod K (the SDK has no manager).
import fs from 'node:fs';
import http2 from 'node:http2';
import { setMaxListeners } from 'node:events';

// --sdk is read before the rest of the options: it picks the imports.
const SDK_MAJOR = (() => {
  const a = process.argv.indexOf('--sdk');
  return a >= 0 ? process.argv[a + 1] : '1';
})();
if (SDK_MAJOR !== '1' && SDK_MAJOR !== '2') {
  process.stderr.write(`ts bench: --sdk wants 1 or 2, not '${SDK_MAJOR}'\n`);
  process.exit(2);
}
const SDK_PACKAGE = SDK_MAJOR === '2' ? '@modelcontextprotocol/client' : '@modelcontextprotocol/sdk';
const { Client, StdioClientTransport, StreamableHTTPClientTransport } = SDK_MAJOR === '2'
  ? { ...(await import('@modelcontextprotocol/client')), ...(await import('@modelcontextprotocol/client/stdio')) }
  : {
      ...(await import('@modelcontextprotocol/sdk/client/index.js')),
      ...(await import('@modelcontextprotocol/sdk/client/stdio.js')),
      ...(await import('@modelcontextprotocol/sdk/client/streamableHttp.js'))
    };
const SDK_VERSION = JSON.parse(fs.readFileSync(
  new URL(`./node_modules/${SDK_PACKAGE}/package.json`, import.meta.url))).version;

function log(msg) {
  process.stderr.write(`ts bench: ${msg}\n`);
}

function usageError(msg) {
  log(msg);
  process.exit(2);
}

const cfg = {
  stdio: null, url: null, http: 'default', insecure: false, cacert: null,
  calls: 5000, concurrency: 1, threads: 1, warmup: 200, payload: 32, tool: 'echo',
  timeoutMs: 30000, maxSeconds: 300, servers: 0, latencyOut: null, protocol: null
};
{
  const a = process.argv.slice(2);
  const num = (name, v, lo, hi) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < lo || n > hi) usageError(`${name} wants an integer from ${lo} to ${hi}`);
    return n;
  };
  for (let i = 0; i < a.length; i++) {
    const o = a[i], v = a[i + 1];
    switch (o) {
      case '--stdio': cfg.stdio = v; i++; break;
      case '--url': cfg.url = v; i++; break;
      case '--cacert': cfg.cacert = v; i++; break;
      case '--tool': cfg.tool = v; i++; break;
      case '--latency-out': cfg.latencyOut = v; i++; break;
      case '--sdk': i++; break; // read above
      case '--protocol':
        if (!['auto', 'modern', 'legacy'].includes(v)) usageError(`--protocol wants auto, modern or legacy, not '${v}'`);
        cfg.protocol = v; i++; break;
      case '--calls': cfg.calls = num(o, v, 1, 1e8); i++; break;
      case '--concurrency': cfg.concurrency = num(o, v, 1, 1e5); i++; break;
      case '--threads': cfg.threads = num(o, v, 1, 1024); i++; break;
      case '--warmup': cfg.warmup = num(o, v, 0, 1e8); i++; break;
      case '--payload-bytes': cfg.payload = num(o, v, 0, 8 << 20); i++; break;
      case '--timeout-ms': cfg.timeoutMs = num(o, v, 1, 2 ** 31 - 1); i++; break;
      case '--max-seconds': cfg.maxSeconds = num(o, v, 1, 86400); i++; break;
      case '--servers': cfg.servers = num(o, v, 1, 256); i++; break;
      case '--http1.1': cfg.http = 'h1'; break;
      case '--http2': cfg.http = 'h2'; break;
      case '--h2c': cfg.http = 'h2'; break;
      case '--insecure': cfg.insecure = true; break;
      default: usageError(`unknown option '${o}'`);
    }
  }
  if (!cfg.stdio === !cfg.url) usageError('give exactly one of --stdio and --url');
  if (cfg.concurrency < cfg.threads) cfg.concurrency = cfg.threads;
  if (SDK_MAJOR === '1' && cfg.protocol && cfg.protocol !== 'legacy') {
    usageError(`--protocol ${cfg.protocol}: the 1.x SDK client speaks the legacy era only`);
  }
  cfg.protocol ??= SDK_MAJOR === '2' ? 'auto' : 'legacy';
}

// The v2 client's versionNegotiation for --protocol.
const NEGOTIATION = { auto: 'auto', legacy: 'legacy', modern: { pin: '2026-07-28' } }[cfg.protocol];
// callTool's signature: (params, resultSchema, options) in 1.x,
// (params, options) in 2.x.
const callTool = SDK_MAJOR === '2'
  ? (c, params, options) => c.callTool(params, options)
  : (c, params, options) => c.callTool(params, undefined, options);

// The revision a 1.x client negotiated: it keeps it nowhere readable, so
// look at the initialize result on its way in, during connect only (the tap
// is removed before the first call).
function tapInitialize(transport, sink) {
  let handler;
  Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    enumerable: true,
    get: () => handler,
    set: (fn) => {
      handler = fn && ((m, extra) => {
        if (typeof m?.result?.protocolVersion === 'string') sink.protocol ??= m.result.protocolVersion;
        return fn(m, extra);
      });
      sink.inner = fn;
    }
  });
  return () => {
    delete transport.onmessage;
    transport.onmessage = sink.inner;
  };
}

// T_i: "<i>:" padded with 'x' to B bytes.
function textOf(i) {
  const p = `${i}:`;
  return p.length >= cfg.payload ? p : p + 'x'.repeat(cfg.payload - p.length);
}

// A fetch over one node:http2 session, for the SDK's `fetch` option.
function http2Fetch(origin, tlsOpts) {
  let session = null;
  const get = () => {
    if (!session || session.closed || session.destroyed) {
      session = http2.connect(origin, tlsOpts);
      session.on('error', (e) => log(`http2 session: ${e.message}`));
    }
    return session;
  };
  const fn = async (url, init = {}) => {
    const u = new URL(url);
    const headers = { ':method': init.method ?? 'GET', ':path': u.pathname + u.search };
    new Headers(init.headers).forEach((v, k) => { headers[k] = v; });
    const body = init.body ?? null;
    const stream = get().request(headers, { endStream: body === null });
    if (body !== null) stream.end(body);
    const signal = init.signal;
    if (signal) {
      // One listener per request in flight: 1000 in flight is not a leak.
      setMaxListeners(0, signal);
      // The SDK passes one signal to every request: drop our listener when
      // the stream ends, or they pile up.
      const abort = () => stream.close(http2.constants.NGHTTP2_CANCEL);
      if (signal.aborted) abort();
      else {
        signal.addEventListener('abort', abort, { once: true });
        stream.once('close', () => signal.removeEventListener('abort', abort));
      }
    }
    const h = await new Promise((resolve, reject) => {
      stream.once('response', resolve);
      stream.once('error', reject);
      stream.once('close', () => reject(new Error('stream closed before a response')));
    });
    const status = h[':status'];
    const out = new Headers();
    for (const [k, v] of Object.entries(h)) {
      if (!k.startsWith(':')) out.append(k, Array.isArray(v) ? v.join(', ') : String(v));
    }
    const nullBody = status === 204 || status === 205 || status === 304;
    if (nullBody) {
      stream.resume();
      return new Response(null, { status, headers: out });
    }
    // Not Readable.toWeb(): in Node 20 it throws when data arrives after the
    // reader cancelled (the SDK cancels SSE streams it is done with).
    let done = false;
    const webBody = new ReadableStream({
      start(ctrl) {
        stream.on('data', (d) => { if (!done) ctrl.enqueue(new Uint8Array(d)); });
        stream.on('end', () => { if (!done) { done = true; ctrl.close(); } });
        stream.on('close', () => { if (!done) { done = true; ctrl.error(new Error('stream reset')); } });
        stream.on('error', (e) => { if (!done) { done = true; ctrl.error(e); } });
      },
      cancel() {
        done = true;
        stream.close(http2.constants.NGHTTP2_CANCEL);
      }
    });
    return new Response(webBody, { status, headers: out });
  };
  fn.close = () => session?.close();
  return fn;
}

let transportLabel = 'stdio';
const fetches = [];

function makeTransport() {
  if (cfg.stdio) {
    return new StdioClientTransport({
      command: '/bin/sh', args: ['-c', `exec ${cfg.stdio}`], stderr: 'inherit'
    });
  }
  const url = new URL(cfg.url);
  const tls = url.protocol === 'https:';
  const h2 = cfg.http === 'h2' || (tls && cfg.http === 'default');
  transportLabel = h2 ? (tls ? 'h2' : 'h2c') : 'http1.1';
  if (!h2) {
    if (tls && cfg.cacert) usageError('--cacert with HTTP/1.1 over TLS: set NODE_EXTRA_CA_CERTS instead');
    if (tls && cfg.insecure) process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
    return new StreamableHTTPClientTransport(url);
  }
  const tlsOpts = tls
    ? { ALPNProtocols: ['h2'], rejectUnauthorized: !cfg.insecure, ...(cfg.cacert ? { ca: fs.readFileSync(cfg.cacert) } : {}) }
    : {};
  const f = http2Fetch(url.origin, tlsOpts);
  fetches.push(f);
  return new StreamableHTTPClientTransport(url, { fetch: f });
}

const now = () => process.hrtime.bigint();
const stopIssuing = now() + BigInt(cfg.maxSeconds) * 1_000_000_000n;

let clients = [];
let ok = 0, errors = 0, errorLogs = 0;
const start = new Array(cfg.calls).fill(0n);
const end = new Array(cfg.calls).fill(0n);

function countError(i, what) {
  errors++;
  if (errorLogs++ < 5) log(`call ${i} failed: ${what}`);
}

async function oneCall(i, measuring, base) {
  const expect = textOf(i);
  const c = clients[cfg.servers ? i % cfg.servers : 0];
  const t0 = now();
  let res;
  try {
    res = await callTool(c, { name: cfg.tool, arguments: { text: expect } }, { timeout: cfg.timeoutMs });
  } catch (e) {
    countError(i, e.message);
    return;
  }
  const t1 = now();
  const got = res?.content?.[0]?.text;
  if (res?.isError || got !== expect) {
    countError(i, res?.isError ? 'tool error' : 'content[0].text is not the text sent');
    return;
  }
  ok++;
  if (measuring) {
    start[i - base] = t0;
    end[i - base] = t1;
  }
}

async function phase(begin, endIndex, measuring) {
  let next = begin;
  const loop = async () => {
    for (;;) {
      if (now() >= stopIssuing) return;
      const i = next++;
      if (i >= endIndex) return;
      await oneCall(i, measuring, begin);
    }
  };
  await Promise.all(Array.from({ length: cfg.concurrency }, loop));
}

function pct(sorted, p) {
  let rank = Math.ceil((p / 100) * sorted.length);
  rank = Math.min(Math.max(rank, 1), sorted.length);
  return sorted[rank - 1];
}

async function main() {
  const n = Math.max(cfg.servers, 1);
  const t0 = now();
  const negotiated = [];
  try {
    clients = await Promise.all(Array.from({ length: n }, async () => {
      if (SDK_MAJOR === '2') {
        const c = new Client({ name: 'ts-sdk-bench', version: SDK_VERSION },
          { versionNegotiation: { mode: NEGOTIATION } });
        await c.connect(makeTransport(), { timeout: cfg.timeoutMs });
        negotiated.push(c.getNegotiatedProtocolVersion());
        return c;
      }
      const c = new Client({ name: 'ts-sdk-bench', version: SDK_VERSION });
      const t = makeTransport(), sink = {};
      const untap = tapInitialize(t, sink);
      await c.connect(t, { timeout: cfg.timeoutMs });
      untap();
      negotiated.push(sink.protocol);
      return c;
    }));
  } catch (e) {
    log(`connect failed: ${e.message}`);
    process.exit(3);
  }
  const initMs = Number(now() - t0) / 1e6;
  if (new Set(negotiated).size > 1) log(`the ${n} clients negotiated different revisions: ${negotiated.join(' ')}`);

  await phase(0, cfg.warmup, false);
  if (errors) log(`${errors} of ${cfg.warmup} warm-up calls failed`);
  ok = 0;
  errors = 0;
  const cpu0 = process.cpuUsage();
  await phase(cfg.warmup, cfg.warmup + cfg.calls, true);
  const cpu = process.cpuUsage(cpu0);

  const closeAll = Promise.all(clients.map((c) => c.close().catch(() => {})));
  await Promise.race([closeAll, new Promise((r) => setTimeout(r, 5000))]);
  for (const f of fetches) f.close();

  let first = 0n, last = 0n, sum = 0;
  const lat = [];
  for (let k = 0; k < cfg.calls; k++) {
    if (!end[k]) continue;
    if (!first || start[k] < first) first = start[k];
    if (end[k] > last) last = end[k];
    const l = Number(end[k] - start[k]);
    lat.push(l);
    sum += l;
  }
  if (cfg.latencyOut) fs.writeFileSync(cfg.latencyOut, lat.map((l) => (l / 1e3).toFixed(3)).join('\n') + '\n');
  const wall = lat.length ? Number(last - first) / 1e9 : 0;
  lat.sort((a, b) => a - b);
  const us = (v) => Number((v / 1e3).toFixed(1));
  const errorsTotal = cfg.calls - ok;
  const out = {
    client: `ts-sdk/${SDK_VERSION}`,
    transport: transportLabel,
    protocol: negotiated[0] ?? null,
    calls: cfg.calls,
    concurrency: cfg.concurrency,
    threads: 1,
    ok,
    errors: errorsTotal,
    wall_s: Number(wall.toFixed(6)),
    calls_per_s: wall > 0 ? Number((lat.length / wall).toFixed(1)) : 0,
    lat_us: lat.length
      ? { mean: us(sum / lat.length), p50: us(pct(lat, 50)), p90: us(pct(lat, 90)), p99: us(pct(lat, 99)), max: us(lat[lat.length - 1]) }
      : { mean: 0, p50: 0, p90: 0, p99: 0, max: 0 },
    init_ms: Number(initMs.toFixed(3)),
    rss_peak_kb: process.resourceUsage().maxRSS,
    cpu_s: Number(((cpu.user + cpu.system) / 1e6).toFixed(3))
  };
  process.stdout.write(JSON.stringify(out) + '\n', () => process.exit(errorsTotal === 0 ? 0 : 1));
}

main().catch((e) => {
  log(e.stack ?? String(e));
  process.exit(1);
});
