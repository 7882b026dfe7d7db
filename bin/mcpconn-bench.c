/* SPDX-License-Identifier: MIT */
/*
 * mcpconn-bench.c: `mcpconn bench`, the library's own load generator.
 *
 * It connects to one MCP server (stdio or Streamable HTTP), or to several
 * copies of it through the manager (--servers), makes W warm-up calls, then
 * N tools/call requests of one tool with {"text": T_i}, T_i being "<i>:"
 * padded with 'x' to B bytes, keeping at most C requests in flight from T
 * host threads (closed loop), and checks that every result's
 * content[0].text is T_i (which proves responses reach their own caller
 * under concurrency).  It prints one JSON line of results on stdout
 * (bench/README.md describes every field) and logs on stderr.
 *
 * Shape: the C in-flight slots are split over the T threads.  A thread with
 * one slot makes blocking calls (mcp_client_call_tool); a thread with more
 * issues mcp_client_call_tool_async and sleeps on its own condition variable
 * while its window is full; each completion callback (a library worker
 * thread) stamps the time, checks the text and frees a slot.  Manager mode
 * has blocking calls only, so there each slot is a thread.
 *
 * Timing: latency runs from the API call to the result being in the
 * caller's hands (return of the blocking call, entry of the callback); wall
 * time from the first measured request to the last measured response.  CPU
 * time and peak RSS come from getrusage(RUSAGE_SELF), so a stdio server's
 * own costs are not counted.
 *
 * Bounds: every call has a timeout (--timeout-ms), and no call is started
 * after --max-seconds; calls that were never made count as errors.
 *
 * Uses the public API (mcpconn.h) only (mcp_tool_result_text() reads the
 * results), and json-c for the manager's server list.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <json-c/json.h>

#include "mcpconn-bench.h"
#include "mcpconn-text.h"
#include "mcpconn.h"

#define BENCH_EXIT_OK 0
#define BENCH_EXIT_ERRORS 1
#define BENCH_EXIT_USAGE 2
#define BENCH_EXIT_CONNECT 3

/* Errors quoted on stderr before the rest are only counted. */
#define BENCH_MAX_ERROR_LOGS 5
/* Longest --payload-bytes accepted (the demo server takes 16 MiB lines). */
#define BENCH_MAX_PAYLOAD (8L * 1024 * 1024)
/* Largest --calls, --warmup, --concurrency, --threads and --servers. */
#define BENCH_MAX_CALLS 100000000L
#define BENCH_MAX_CONCURRENCY 100000L
#define BENCH_MAX_THREADS 1024L
#define BENCH_MAX_SERVERS 256L

typedef enum bench_http {
  BENCH_HTTP_DEFAULT, /* http: HTTP/1.1; https: h2 by ALPN */
  BENCH_HTTP_1_1,
  BENCH_HTTP_2,
  BENCH_HTTP_H2C
} bench_http;

typedef struct bench_cfg {
  const char *stdio_cmd; /* --stdio, run with /bin/sh -c 'exec ...' */
  const char *url;       /* --url */
  bench_http http;
  bool insecure;
  const char *cacert;
  long calls;
  long concurrency;
  long threads;
  long warmup;
  long payload;
  const char *tool;
  long timeout_ms;
  long max_seconds;
  long servers;            /* > 0: manager mode with this many servers */
  const char *latency_out; /* file for every measured latency, or NULL */
  const char *protocol;    /* --protocol: era mode, or NULL (auto) */
  bool verbose;
} bench_cfg;

struct bench;

/* One host thread issuing calls. */
typedef struct bench_thread {
  struct bench *b;
  pthread_t tid;
  long window; /* requests this thread keeps in flight */
  /* Async mode: |inflight| and |waiting| are guarded by |mu|. */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  long inflight;
  bool waiting;
} bench_thread;

/* One async call, from issue to its callback. */
typedef struct bench_slot {
  bench_thread *th;
  long index;
  int64_t start_ns; /* CLOCK_MONOTONIC */
} bench_slot;

typedef struct bench {
  const bench_cfg *cfg;
  const char *transport; /* "stdio", "http1.1", "h2", "h2c" */
  char protocol[32];     /* the revision negotiated (the first server's) */
  mcp_client *client;    /* single-server mode */
  mcp_manager *manager;  /* --servers mode */
  char **call_names;     /* manager mode: "s<k>/<tool>" for each server */
  /* The current phase issues indices [phase_begin, phase_end). */
  long phase_begin, phase_end;
  bool measuring;
  atomic_long next;        /* next index to issue */
  int64_t stop_issuing_ns; /* CLOCK_MONOTONIC; no call starts after it */
  /* Per measured call (index - warmup): start and end, ns CLOCK_MONOTONIC;
   * end == 0 means it did not succeed. */
  int64_t *start_ns, *end_ns;
  atomic_long ok, errors, error_logs;
} bench;

/* ---- small helpers ------------------------------------------------------- */

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...) {
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof(line), fmt, ap);
  va_end(ap);
  /* The line may quote a server's error message. */
  fputs("mcpconn bench: ", stderr);
  safe_puts(stderr, line, SAFE_LINE);
  fputc('\n', stderr);
}

static void on_lib_log(void *user, mcp_log_level level, const char *msg) {
  const bench_cfg *cfg = user;
  if (level < MCP_LOG_WARN && !cfg->verbose) return;
  static const char *const names[] = {"debug", "info", "warn", "error"};
  fprintf(stderr, "mcpconn bench: [%s] ", level >= 0 && level <= 3 ? names[level] : "?");
  safe_puts(stderr, msg, SAFE_LINE);
  fputc('\n', stderr);
}

/*
 * Writes T_i ("<i>:" padded with 'x' to |payload| bytes; never shorter than
 * the prefix) into |buf| of |cap| bytes.  Returns its length.
 */
static size_t make_text(char *buf, size_t cap, long i, long payload) {
  /* By hand: snprintf was a tenth of this loop's instructions per call. */
  char digits[24];
  size_t nd = 0;
  unsigned long u = i < 0 ? 0UL - (unsigned long)i : (unsigned long)i;
  do digits[nd++] = (char)('0' + u % 10);
  while ((u /= 10) != 0);
  if (cap < nd + 3) {
    buf[0] = '\0';
    return 0;
  }
  size_t len = 0;
  if (i < 0) buf[len++] = '-';
  while (nd) buf[len++] = digits[--nd];
  buf[len++] = ':';
  if ((long)len < payload && (size_t)payload < cap) {
    memset(buf + len, 'x', (size_t)payload - len);
    len = (size_t)payload;
  }
  buf[len] = '\0';
  return len;
}

/* Builds {"text":"T_i"} in |buf|.  T_i needs no escaping. */
static void make_args(char *buf, size_t cap, long i, long payload) {
  memcpy(buf, "{\"text\":\"", 9);
  size_t len = make_text(buf + 9, cap - 12, i, payload);
  memcpy(buf + 9 + len, "\"}", 3);
}

/* Room for the arguments of any call. */
static size_t args_cap(const bench_cfg *cfg) { return (size_t)cfg->payload + 64; }

/*
 * True when |result_json|'s text is T_i: mcp_tool_result_text() joins the
 * "text" of every text item with "\n", and T_i has no "\n", so equal texts
 * mean exactly one text item and that it is T_i (as a host would read a
 * result: the whole document checked, escapes decoded).
 */
static bool result_ok(const char *result_json, long i, long payload, char *expect, size_t cap,
                      const char **why) {
  *why = "result is not a JSON object";
  if (!result_json) return false;
  char *text = NULL;
  size_t tlen = 0;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_tool_result_text(result_json, (size_t)-1, &text, &tlen, &err);
  mcp_error_clear(&err);
  if (st != MCP_OK) {
    *why = st == MCP_ENOMEM ? "out of memory reading the result"
                            : "result has no content[0].text (mcp_tool_result_text failed)";
    return false;
  }
  size_t elen = make_text(expect, cap, i, payload);
  *why = "content[0].text is not the text sent (misrouted response?)";
  bool ok = tlen == elen && memcmp(text, expect, elen) == 0;
  mcp_free(text);
  return ok;
}

static void count_error(bench *b, long i, const char *what) {
  atomic_fetch_add(&b->errors, 1);
  if (atomic_fetch_add(&b->error_logs, 1) < BENCH_MAX_ERROR_LOGS)
    logf_("call %ld failed: %s", i, what);
}

/* Records the outcome of call |i| that started at |start| and ended at
 * |end|, checking the result (see result_ok()). */
static void record(bench *b, long i, int64_t start, int64_t end, mcp_status st,
                   const char *result_json, const mcp_error *err) {
  char expect[64];
  char *ebuf = expect;
  size_t cap = args_cap(b->cfg);
  if (cap > sizeof(expect) && !(ebuf = malloc(cap))) {
    count_error(b, i, "out of memory checking the result");
    return;
  }
  const char *why = NULL;
  char msg[512];
  if (st != MCP_OK) {
    snprintf(msg, sizeof(msg), "%s%s%s", mcp_strerror(st), err && err->message ? ": " : "",
             err && err->message ? err->message : "");
    count_error(b, i, msg);
  } else if (!result_ok(result_json, i, b->cfg->payload, ebuf, cap, &why)) {
    count_error(b, i, why);
  } else {
    atomic_fetch_add(&b->ok, 1);
    if (b->measuring) {
      long k = i - b->phase_begin;
      b->start_ns[k] = start;
      b->end_ns[k] = end;
    }
  }
  if (ebuf != expect) free(ebuf);
}

/* Takes the next index to issue, or returns -1 when the phase is done. */
static long take_index(bench *b) {
  if (now_ns() >= b->stop_issuing_ns) return -1;
  long i = atomic_fetch_add(&b->next, 1);
  return i < b->phase_end ? i : -1;
}

/* ---- blocking calls ------------------------------------------------------- */

static void sync_call(bench *b, long i, char *args) {
  const bench_cfg *cfg = b->cfg;
  make_args(args, args_cap(cfg), i, cfg->payload);
  mcp_error err = MCP_ERROR_INIT;
  char *result = NULL;
  int64_t t0 = now_ns();
  mcp_status st;
  if (b->manager)
    st = mcp_manager_call_tool(b->manager, b->call_names[i % cfg->servers], args, NULL, &result,
                               &err);
  else st = mcp_client_call_tool(b->client, cfg->tool, args, NULL, &result, &err);
  int64_t t1 = now_ns();
  record(b, i, t0, t1, st, result, &err);
  mcp_free(result);
  mcp_error_clear(&err);
}

/* ---- async calls ------------------------------------------------------------ */

static void on_done(void *user, mcp_status status, const char *result_json, const mcp_error *err) {
  int64_t t1 = now_ns();
  bench_slot *s = user;
  bench_thread *th = s->th;
  record(th->b, s->index, s->start_ns, t1, status, result_json, err);
  free(s);
  pthread_mutex_lock(&th->mu);
  th->inflight--;
  if (th->waiting) pthread_cond_signal(&th->cv);
  pthread_mutex_unlock(&th->mu);
}

static void async_loop(bench_thread *th, char *args) {
  bench *b = th->b;
  const bench_cfg *cfg = b->cfg;
  bool exhausted = false;
  pthread_mutex_lock(&th->mu);
  for (;;) {
    while (!exhausted && th->inflight < th->window) {
      long i = take_index(b);
      if (i < 0) {
        exhausted = true;
        break;
      }
      th->inflight++;
      pthread_mutex_unlock(&th->mu);
      mcp_status st = MCP_ENOMEM;
      mcp_error err = MCP_ERROR_INIT;
      bench_slot *s = malloc(sizeof(*s));
      if (s) {
        s->th = th;
        s->index = i;
        make_args(args, args_cap(cfg), i, cfg->payload);
        s->start_ns = now_ns();
        st = mcp_client_call_tool_async(b->client, cfg->tool, args, NULL, on_done, s, &err);
      }
      if (st != MCP_OK) {
        /* Refused: the callback never runs. */
        free(s);
        record(b, i, 0, 0, st, NULL, &err);
      }
      mcp_error_clear(&err);
      pthread_mutex_lock(&th->mu);
      if (st != MCP_OK) th->inflight--;
    }
    if (exhausted && th->inflight == 0) break;
    th->waiting = true;
    pthread_cond_wait(&th->cv, &th->mu);
    th->waiting = false;
  }
  pthread_mutex_unlock(&th->mu);
}

static void *thread_main(void *arg) {
  bench_thread *th = arg;
  bench *b = th->b;
  char *args = malloc(args_cap(b->cfg));
  if (!args) {
    logf_("out of memory");
    return NULL;
  }
  if (th->window == 1) {
    long i;
    while ((i = take_index(b)) >= 0) sync_call(b, i, args);
  } else {
    async_loop(th, args);
  }
  free(args);
  return NULL;
}

/*
 * Runs indices [begin, end) with the configured threads and windows.
 * Returns 0, or -1 when a thread could not start (the calls it would have
 * made are then made by the others).
 */
static int run_phase(bench *b, long begin, long end, bool measuring) {
  const bench_cfg *cfg = b->cfg;
  b->phase_begin = begin;
  b->phase_end = end;
  b->measuring = measuring;
  atomic_store(&b->next, begin);
  long nthreads = b->manager ? cfg->concurrency : cfg->threads;
  bench_thread *th = calloc((size_t)nthreads, sizeof(*th));
  if (!th) return -1;
  long started = 0;
  for (long k = 0; k < nthreads; k++) {
    th[k].b = b;
    th[k].window = b->manager
                       ? 1
                       : cfg->concurrency / cfg->threads + (k < cfg->concurrency % cfg->threads);
    pthread_mutex_init(&th[k].mu, NULL);
    pthread_cond_init(&th[k].cv, NULL);
    if (pthread_create(&th[k].tid, NULL, thread_main, &th[k]) != 0) {
      logf_("could not start thread %ld of %ld", k + 1, nthreads);
      pthread_mutex_destroy(&th[k].mu);
      pthread_cond_destroy(&th[k].cv);
      break;
    }
    started++;
  }
  /* With no thread at all, nobody issues: do it here. */
  if (started == 0) {
    th[0].window = 1;
    thread_main(&th[0]);
  }
  for (long k = 0; k < started; k++) {
    pthread_join(th[k].tid, NULL);
    pthread_mutex_destroy(&th[k].mu);
    pthread_cond_destroy(&th[k].cv);
  }
  free(th);
  return started == nthreads ? 0 : -1;
}

/* ---- results ----------------------------------------------------------------- */

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted |v| (n > 0). */
static double pct(const int64_t *v, size_t n, double p) {
  size_t rank = (size_t)(p / 100.0 * (double)n + 0.999999);
  if (rank < 1) rank = 1;
  if (rank > n) rank = n;
  return (double)v[rank - 1];
}

static double tv_s(struct timeval tv) { return (double)tv.tv_sec + (double)tv.tv_usec / 1e6; }

static double cpu_now_s(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return tv_s(ru.ru_utime) + tv_s(ru.ru_stime);
}

/* ---- command line ------------------------------------------------------------- */

static void usage(FILE *f) {
  fprintf(f, "usage: mcpconn bench --stdio '<server command line>' [options]\n"
             "       mcpconn bench --url <http|https URL> [--http1.1 | --http2 | --h2c]\n"
             "                     [--insecure | --cacert FILE] [options]\n"
             "\n"
             "Connects, makes W warm-up calls, then N tools/call of TOOL with\n"
             "{\"text\": \"<i>:xxx...\"} (B bytes), keeping C calls in flight from T\n"
             "threads, checks every answer, and prints one JSON line of results.\n"
             "\n"
             "options:\n"
             "  --calls N          measured calls (5000)\n"
             "  --concurrency C    calls kept in flight, closed loop (1: sequential)\n"
             "  --threads T        host threads issuing calls (1); C is split over them\n"
             "  --warmup W         calls before measuring (200)\n"
             "  --payload-bytes B  length of each text (32)\n"
             "  --tool NAME        tool to call (echo); it must answer its \"text\"\n"
             "  --timeout-ms T     timeout of each call and of connect (30000)\n"
             "  --max-seconds S    start no call after S seconds (300)\n"
             "  --servers K        K copies of the server through the manager; calls\n"
             "                     go round-robin, one thread per in-flight call\n"
             "  --latency-out FILE write every measured latency (us), one a line\n"
             "  --protocol MODE    MCP era: auto (probe, the default), modern\n"
             "                     (2026-07-28), legacy (initialize) or a revision\n"
             "  --verbose          library logs at every level on stderr\n"
             "\n"
             "--stdio runs /bin/sh -c 'exec <command line>'.  https URLs use HTTP/2\n"
             "(ALPN) unless --http1.1; http URLs HTTP/1.1 unless --h2c (or --http2).\n"
             "Exit status: 0 all calls ok, 1 some failed, 2 usage, 3 connect failed.\n");
}

static bool parse_long(const char *opt, const char *s, long lo, long hi, long *out) {
  char *end = NULL;
  errno = 0;
  long v = s ? strtol(s, &end, 10) : 0;
  if (!s || !*s || *end || errno || v < lo || v > hi) {
    logf_("%s wants an integer from %ld to %ld, not '%s'", opt, lo, hi, s ? s : "");
    return false;
  }
  *out = v;
  return true;
}

/* Returns 0, or the exit code of a usage error (-1 for --help). */
static int parse_args(int argc, char **argv, bench_cfg *cfg) {
  int i = 1;
  if (i < argc && strcmp(argv[i], "bench") == 0) i++;
  for (; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NUM(name, lo, hi, field) \
  if (strcmp(a, name) == 0) { \
    if (!parse_long(a, v, lo, hi, &cfg->field)) return BENCH_EXIT_USAGE; \
    i++; \
    continue; \
  }
#define STR(name, field) \
  if (strcmp(a, name) == 0) { \
    if (!v) { \
      logf_("%s needs a value", a); \
      return BENCH_EXIT_USAGE; \
    } \
    cfg->field = v; \
    i++; \
    continue; \
  }
    NUM("--calls", 1, BENCH_MAX_CALLS, calls)
    NUM("--concurrency", 1, BENCH_MAX_CONCURRENCY, concurrency)
    NUM("--threads", 1, BENCH_MAX_THREADS, threads)
    NUM("--warmup", 0, BENCH_MAX_CALLS, warmup)
    NUM("--payload-bytes", 0, BENCH_MAX_PAYLOAD, payload)
    NUM("--timeout-ms", 1, INT_MAX, timeout_ms)
    NUM("--max-seconds", 1, 86400, max_seconds)
    NUM("--servers", 1, BENCH_MAX_SERVERS, servers)
    STR("--stdio", stdio_cmd)
    STR("--url", url)
    STR("--tool", tool)
    STR("--cacert", cacert)
    STR("--latency-out", latency_out)
    STR("--protocol", protocol)
#undef NUM
#undef STR
    if (strcmp(a, "--http1.1") == 0) {
      cfg->http = BENCH_HTTP_1_1;
    } else if (strcmp(a, "--http2") == 0) {
      cfg->http = BENCH_HTTP_2;
    } else if (strcmp(a, "--h2c") == 0) {
      cfg->http = BENCH_HTTP_H2C;
    } else if (strcmp(a, "--insecure") == 0) {
      cfg->insecure = true;
    } else if (strcmp(a, "--verbose") == 0) {
      cfg->verbose = true;
    } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      return -1;
    } else {
      logf_("unknown option '%s' (see --help)", a);
      return BENCH_EXIT_USAGE;
    }
  }
  if (cfg->protocol) {
    mcp_client_options *t = mcp_client_options_new();
    mcp_status st = t ? mcp_client_options_set_protocol(t, cfg->protocol) : MCP_ENOMEM;
    mcp_client_options_free(t);
    if (st != MCP_OK || !*cfg->protocol) {
      logf_("--protocol wants auto, modern, legacy or an MCP revision, not '%s'", cfg->protocol);
      return BENCH_EXIT_USAGE;
    }
  }
  if (!cfg->stdio_cmd == !cfg->url) {
    logf_("give exactly one of --stdio and --url (see --help)");
    return BENCH_EXIT_USAGE;
  }
  if (cfg->url && strncmp(cfg->url, "http://", 7) != 0 && strncmp(cfg->url, "https://", 8) != 0) {
    logf_("--url must start with http:// or https://");
    return BENCH_EXIT_USAGE;
  }
  if (cfg->stdio_cmd && (cfg->http != BENCH_HTTP_DEFAULT || cfg->insecure || cfg->cacert)) {
    logf_("HTTP and TLS options go with --url only");
    return BENCH_EXIT_USAGE;
  }
  bool tls = cfg->url && strncmp(cfg->url, "https://", 8) == 0;
  if (!tls && (cfg->insecure || cfg->cacert)) {
    logf_("--insecure and --cacert need an https URL");
    return BENCH_EXIT_USAGE;
  }
  if (tls && cfg->http == BENCH_HTTP_H2C) {
    logf_("--h2c needs an http URL (use --http2 for https)");
    return BENCH_EXIT_USAGE;
  }
  if (cfg->concurrency < cfg->threads) {
    logf_("--concurrency %ld is below --threads %ld: using %ld", cfg->concurrency, cfg->threads,
          cfg->threads);
    cfg->concurrency = cfg->threads;
  }
  return 0;
}

/* Sets transport options on |o| and returns the transport's label. */
static const char *setup_transport(const bench_cfg *cfg, mcp_client_options *o, mcp_status *st) {
  if (cfg->stdio_cmd) {
    char *line = malloc(strlen(cfg->stdio_cmd) + 6);
    if (!line) {
      *st = MCP_ENOMEM;
      return "stdio";
    }
    strcpy(line, "exec ");
    strcat(line, cfg->stdio_cmd);
    const char *const argv[] = {"/bin/sh", "-c", line, NULL};
    *st = mcp_client_options_set_stdio(o, argv);
    free(line);
    return "stdio";
  }
  bool tls = strncmp(cfg->url, "https://", 8) == 0;
  *st = mcp_client_options_set_http(o, cfg->url, MCP_HTTP_TRANSPORT_STREAMABLE);
  const char *label;
  if (cfg->http == BENCH_HTTP_1_1 || (!tls && cfg->http == BENCH_HTTP_DEFAULT)) {
    mcp_client_options_set_http_version(o, MCP_HTTP_VERSION_1_1);
    label = "http1.1";
  } else {
    /* Prior knowledge on https means "h2 by ALPN or fail", so the label is
     * never a guess. */
    mcp_client_options_set_http_version(o, MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
    label = tls ? "h2" : "h2c";
  }
  if (*st == MCP_OK && cfg->cacert) *st = mcp_client_options_set_ca(o, cfg->cacert, NULL);
  if (cfg->insecure) mcp_client_options_set_insecure(o, true);
  return label;
}

/* Connects the client, or starts the manager; returns an exit code. */
static int connect_all(bench *b, double *init_ms) {
  const bench_cfg *cfg = b->cfg;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = MCP_ENOMEM;
  int rc = BENCH_EXIT_CONNECT;
  mcp_manager_options *mo = NULL;
  char *servers_json = NULL;
  mcp_client_options *o = mcp_client_options_new();
  if (!o) goto out;
  b->transport = setup_transport(cfg, o, &st);
  if (st != MCP_OK) goto out;
  mcp_client_options_set_timeout_ms(o, cfg->timeout_ms);
  if (cfg->protocol && (st = mcp_client_options_set_protocol(o, cfg->protocol))) goto out;
  mcp_client_options_set_log(o, on_lib_log, (void *)cfg);
  st = mcp_client_options_set_client_info(o, "mcpconn-bench", MCP_VERSION);
  if (st != MCP_OK) goto out;

  int64_t t0 = now_ns();
  if (cfg->servers == 0) {
    st = mcp_client_connect(o, &b->client, &err);
    *init_ms = (double)(now_ns() - t0) / 1e6;
    if (st == MCP_OK) {
      rc = 0;
      snprintf(b->protocol, sizeof(b->protocol), "%s", mcp_client_protocol_version(b->client));
    }
    goto out;
  }

  /* Manager mode: K servers named s0..s<K-1>, no discovery, no cache; the
   * startup gate is the timeout, so every server has settled on return. */
  mo = mcp_manager_options_new();
  b->call_names = calloc((size_t)cfg->servers, sizeof(char *));
  if (!mo || !b->call_names) {
    st = MCP_ENOMEM;
    goto out;
  }
  mcp_manager_options_set_discovery(mo, false, false);
  mcp_manager_options_set_cache_dir(mo, NULL);
  mcp_manager_options_set_startup_gate_ms(mo, cfg->timeout_ms);
  mcp_manager_options_set_timeout_ms(mo, cfg->timeout_ms);
  mcp_manager_options_set_log(mo, on_lib_log, (void *)cfg);
  for (long k = 0; k < cfg->servers; k++) {
    char name[32];
    snprintf(name, sizeof(name), "s%ld", k);
    st = mcp_manager_options_add_server(mo, name, o);
    size_t len = strlen(name) + strlen(cfg->tool) + 2;
    b->call_names[k] = malloc(len);
    if (st == MCP_OK && !b->call_names[k]) st = MCP_ENOMEM;
    if (st != MCP_OK) goto out;
    snprintf(b->call_names[k], len, "%s/%s", name, cfg->tool);
  }
  t0 = now_ns();
  st = mcp_manager_start(mo, &b->manager, &err);
  *init_ms = (double)(now_ns() - t0) / 1e6;
  if (st != MCP_OK) goto out;
  /* Every server must be ready, or the calls would measure reconnects. */
  st = mcp_manager_servers(b->manager, &servers_json, &err);
  if (st != MCP_OK) goto out;
  json_object *arr = json_tokener_parse(servers_json);
  long ready = 0;
  for (size_t k = 0; arr && k < json_object_array_length(arr); k++) {
    json_object *state = NULL, *v = NULL, *s = json_object_array_get_idx(arr, k);
    if (json_object_object_get_ex(s, "state", &state) &&
        strcmp(json_object_get_string(state), "ready") == 0)
      ready++;
    if (k == 0 && json_object_object_get_ex(s, "protocolVersion", &v) && v)
      snprintf(b->protocol, sizeof(b->protocol), "%s", json_object_get_string(v));
  }
  json_object_put(arr);
  if (ready != cfg->servers) {
    logf_("only %ld of %ld servers are ready: %s", ready, cfg->servers, servers_json);
    goto out;
  }
  rc = 0;
out:
  if (rc != 0)
    logf_("connect failed: %s%s%s", mcp_strerror(st), err.message ? ": " : "",
          err.message ? err.message : "");
  mcp_free(servers_json);
  mcp_error_clear(&err);
  mcp_manager_options_free(mo);
  mcp_client_options_free(o);
  return rc;
}

static void disconnect_all(bench *b) {
  mcp_client_free(b->client);
  b->client = NULL;
  mcp_manager_free(b->manager);
  b->manager = NULL;
  if (b->call_names)
    for (long k = 0; k < b->cfg->servers; k++) free(b->call_names[k]);
  free(b->call_names);
  b->call_names = NULL;
}

/* ---- main ------------------------------------------------------------------- */

int mcpconn_bench_main(int argc, char **argv) {
  bench_cfg cfg = {
      .calls = 5000,
      .concurrency = 1,
      .threads = 1,
      .warmup = 200,
      .payload = 32,
      .tool = "echo",
      .timeout_ms = 30000,
      .max_seconds = 300,
  };
  int rc = parse_args(argc, argv, &cfg);
  if (rc != 0) return rc < 0 ? BENCH_EXIT_OK : rc;

  bench b = {.cfg = &cfg};
  b.start_ns = calloc((size_t)cfg.calls, sizeof(int64_t));
  b.end_ns = calloc((size_t)cfg.calls, sizeof(int64_t));
  int64_t *lat = calloc((size_t)cfg.calls, sizeof(int64_t));
  if (!b.start_ns || !b.end_ns || !lat) {
    logf_("out of memory for %ld calls", cfg.calls);
    rc = BENCH_EXIT_USAGE;
    goto out;
  }

  double init_ms = 0;
  int64_t began = now_ns();
  b.stop_issuing_ns = began + (int64_t)cfg.max_seconds * 1000000000;
  rc = connect_all(&b, &init_ms);
  if (rc != 0) goto out;

  run_phase(&b, 0, cfg.warmup, false);
  long warm_errors = atomic_exchange(&b.errors, 0);
  atomic_store(&b.ok, 0);
  if (warm_errors) logf_("%ld of %ld warm-up calls failed", warm_errors, cfg.warmup);

  double cpu0 = cpu_now_s();
  run_phase(&b, cfg.warmup, cfg.warmup + cfg.calls, true);
  double cpu_s = cpu_now_s() - cpu0;
  disconnect_all(&b);

  /* Calls never made (deadline) or lost count as errors. */
  long ok = atomic_load(&b.ok);
  long errors = cfg.calls - ok;
  if (errors > atomic_load(&b.errors))
    logf_("%ld calls were not made before --max-seconds", errors - atomic_load(&b.errors));

  int64_t first = INT64_MAX, last = 0;
  size_t n = 0;
  double sum = 0;
  for (long k = 0; k < cfg.calls; k++) {
    if (!b.end_ns[k]) continue;
    if (b.start_ns[k] < first) first = b.start_ns[k];
    if (b.end_ns[k] > last) last = b.end_ns[k];
    lat[n] = b.end_ns[k] - b.start_ns[k];
    sum += (double)lat[n];
    n++;
  }
  double wall_s = n ? (double)(last - first) / 1e9 : 0;
  if (cfg.latency_out) {
    FILE *f = fopen(cfg.latency_out, "w");
    if (!f) {
      logf_("cannot write %s: %s", cfg.latency_out, strerror(errno));
    } else {
      for (size_t k = 0; k < n; k++) fprintf(f, "%.3f\n", (double)lat[k] / 1e3);
      fclose(f);
    }
  }
  qsort(lat, n, sizeof(int64_t), cmp_i64);
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  double us = 1e3;
  printf("{\"client\":\"mcpconn/%s\",\"transport\":\"%s\",\"protocol\":\"%s\",\"calls\":%ld,"
         "\"concurrency\":%ld,\"threads\":%ld,\"ok\":%ld,\"errors\":%ld,"
         "\"wall_s\":%.6f,\"calls_per_s\":%.1f,\"lat_us\":{\"mean\":%.1f,"
         "\"p50\":%.1f,\"p90\":%.1f,\"p99\":%.1f,\"max\":%.1f},"
         "\"init_ms\":%.3f,\"rss_peak_kb\":%ld,\"cpu_s\":%.3f}\n",
         mcp_version(), b.transport, b.protocol, cfg.calls, cfg.concurrency,
         cfg.servers ? cfg.concurrency : cfg.threads, ok, errors, wall_s,
         wall_s > 0 ? (double)n / wall_s : 0.0, n ? sum / (double)n / us : 0.0,
         n ? pct(lat, n, 50) / us : 0.0, n ? pct(lat, n, 90) / us : 0.0,
         n ? pct(lat, n, 99) / us : 0.0, n ? (double)lat[n - 1] / us : 0.0, init_ms,
         (long)ru.ru_maxrss, cpu_s);
  fflush(stdout);
  rc = errors == 0 ? BENCH_EXIT_OK : BENCH_EXIT_ERRORS;
out:
  disconnect_all(&b);
  free(lat);
  free(b.start_ns);
  free(b.end_ns);
  return rc;
}
