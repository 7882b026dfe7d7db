/* SPDX-License-Identifier: MIT */
/*
 * tests/soak/soak: the fault-injection soak of the manager.
 *
 * Eight host threads call tools through the public manager API
 * (mcp_manager_call_tool, "SERVER/echo" with a unique text, and now and
 * then add, notify (notifications before the answer) or grow (list_changed:
 * the manager re-lists under load)) on six servers while a chaos driver
 * breaks them:
 *
 *   demo    bin/mcpconn-demo-server, stdio
 *   fault1  tests/mcp-fault-server --chaos, stdio (crash, garbage lines,
 *   fault2  stall, stderr flood, hung call; fault2 also floods 1 MiB of
 *           stderr at every start)
 *   h2a     tests/mcp-h2-test-server /mcp, HTTP/2 cleartext (h2c), --chaos
 *   h2b     the same with the standalone GET stream on (the server says 405)
 *           and every 3rd answer as an SSE stream (--sse-every 3)
 *   tls     h2b over TLS (h2 by ALPN, a throwaway CA made with openssl)
 *   (HTTP --chaos: garbage body, stalled response, dropped connection,
 *   RST_STREAM, 503, expired session answered 404.)
 *
 * The driver, every 0.15-0.6 s, picks one of: kill -9 a stdio server;
 * SIGSTOP one for 0.3-1.5 s (a stall); kill -9 an HTTP server and restart
 * it on the same port; drop every connection of an HTTP server (SIGUSR2);
 * expire its sessions (SIGUSR1); mcp_manager_reconnect() a server.  A
 * server stopped by the circuit breaker is reconnected by hand, as a host
 * would (counted as breaker-reset).
 *
 * Checked at the end (exit status 1 when one fails, with the reason):
 *  - every call issued returned exactly once: issued == succeeded +
 *    failed-with-error, lost == 0 (a call still running 60 s after the end
 *    is lost; the soak then reports it and exits without waiting);
 *  - a success carries its own request's answer (the echo of its unique
 *    text, its sum; no cross-talk);
 *  - a failure has err.status == the returned status and a non-empty
 *    message, and is never an HTTP 400 (the test server says 400 only to
 *    a malformed request or one without its session id);
 *  - every server answered at least one call;
 *  - no leak: open fds (/proc/self/fd), threads (/proc/self/task) and child
 *    processes (/proc/<pid>/stat with our ppid, zombies included) are the
 *    same before the manager started and after mcp_manager_free() and the
 *    HTTP peers stopped.  Heap leaks: LeakSanitizer in ASan builds.
 * The whole run is bounded: a SIGALRM at duration + 240 s ends it with a
 * "hang" verdict.
 *
 * Knobs: --seconds N or MCP_SOAK_SECONDS (default 60), --seed N or
 * MCP_SOAK_SEED (default: from the clock; always printed; a seed fixes the
 * fault schedule of the driver and of every server, not the thread
 * interleaving), --verbose (the manager's log on stderr).  Peers come from
 * MCP_DEMO_SERVER, MCP_FAULT_SERVER and MCP_H2_TEST_SERVER, as make check
 * sets them; scratch files go under MCP_TEST_TMPDIR (or /tmp).
 *   make check TESTS=tests/soak/soak MCP_SOAK_SECONDS=600
 * Not in the valgrind set (too slow to mean anything there).
 *
 * Hostile mode (--hostile, or MCP_SOAK_HOSTILE=1; tests/soak/soak-hostile
 * is the same program with it on, run by make check for 20 s): the servers
 * are the demo server and tests/mcp-hostile-server (MCP_HOSTILE_SERVER) in
 * each of its modes, one server per mode, all stdio with a 1 MiB message
 * limit: cursor (repeated, huge and endless nextCursor on every re-list,
 * which the `relist` tool triggers), flood (2 000 pings and 2 000
 * notifications before each answer), oversize (1.5 MiB answers),
 * bad-utf8, non-object (results that are not objects), malformed
 * (readable id: result and error, NUL, deep nesting, id N.0, neither),
 * stop-reading (after 10 answers: 400 000 pings, and it never reads
 * stdin again) and escape (ESC, BEL, U+202E in texts).  The driver
 * kills, stalls and reconnects them.  The checks are the ones above, and:
 *  - an answer must be right: the escape server's text comes back exactly
 *    (escapes included); a bad-utf8 answer is valid UTF-8 (replaced) if
 *    it is a success; a non-object result is never a success;
 *  - a server that answers at once (oversize, bad-utf8, non-object,
 *    malformed) must get a prompt error, not MCP_ETIMEDOUT at the full
 *    deadline (the library dropped the answer and waited);
 *  - no call returns more than 1.5 s after its deadline (a caller blocked
 *    on a full pipe, say);
 *  - peak RSS (VmHWM in /proc/self/status) stays under 256 MiB; in an
 *    ASan or TSan build, where RSS counts shadow memory and the
 *    allocator's quarantine of freed blocks rather than what the library
 *    holds, the sanitizer allocator's live heap sampled after every call
 *    and driver step is held to the same ceiling instead;
 *  - no error message or manager log line is longer than 8 KiB (server
 *    text quoted into them must be bounded);
 *  - demo, flood, cursor and escape each answer at least one call.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mcpconn.h"

#define NTHREADS 8
#define NSERVERS 6     /* the normal soak */
#define MAX_SERVERS 10 /* hostile mode: demo and the eight hostile modes */
#define LATE_SLACK_MS 1500
#define RSS_CEILING_KB (256 * 1024)
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SOAK_SANITIZER 1
/* The sanitizer allocator's bytes in live blocks (libasan and libtsan). */
size_t __sanitizer_get_current_allocated_bytes(void);
#endif
#define HOSTILE_MAX_MESSAGE (1024 * 1024)
#define TEXT_BOUND 8192 /* longest error message or log line hostile mode accepts */
#define CALL_TIMEOUT_MS 3000
#define LOST_AFTER_MS 60000 /* a call still running this long after the end is lost */

/* ---- small helpers ---------------------------------------------------------- */

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#ifdef SOAK_SANITIZER
/* The largest live heap seen by sample_heap() (KiB). */
static atomic_long heap_peak_kb;
#endif

static void sample_heap(void) {
#ifdef SOAK_SANITIZER
  long kb = (long)(__sanitizer_get_current_allocated_bytes() / 1024);
  long prev = atomic_load(&heap_peak_kb);
  while (kb > prev && !atomic_compare_exchange_weak(&heap_peak_kb, &prev, kb)) {
  }
#endif
}

static void sleep_ms(int64_t ms) {
  struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
  }
}

static uint64_t mix(uint64_t z) { /* splitmix64 */
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static uint64_t rnd(uint64_t *s) { return mix(*s += 0x9e3779b97f4a7c15ull); }

static int64_t rnd_between(uint64_t *s, int64_t lo, int64_t hi) {
  return lo + (int64_t)(rnd(s) % (uint64_t)(hi - lo + 1));
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
#include <stdarg.h>
static void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "soak: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  exit(1);
}

static int count_dir(const char *path) {
  DIR *d = opendir(path);
  if (!d) return -1;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)))
    if (e->d_name[0] != '.') n++;
  closedir(d);
  return n - (strcmp(path, "/proc/self/fd") == 0); /* the DIR's own fd */
}

/* Reads /proc/<pid>/stat: state and parent. */
static bool proc_stat(pid_t pid, char *state, pid_t *ppid) {
  char path[64], buf[512];
  snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  ssize_t n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  char *p = strrchr(buf, ')'); /* the command name may hold spaces */
  int pp;
  if (!p || sscanf(p + 1, " %c %d", state, &pp) != 2) return false;
  *ppid = (pid_t)pp;
  return true;
}

/* Our child processes (zombies included); with |argv|, the pid of the
 * first live one whose command line is exactly argv, else 0. */
static int children(const char *const *argv, pid_t *match) {
  DIR *d = opendir("/proc");
  if (!d) return -1;
  int n = 0;
  if (match) *match = 0;
  pid_t self = getpid();
  struct dirent *e;
  while ((e = readdir(d))) {
    char *end;
    long pid = strtol(e->d_name, &end, 10);
    if (*end || pid <= 0) continue;
    char state;
    pid_t ppid;
    if (!proc_stat((pid_t)pid, &state, &ppid) || ppid != self) continue;
    n++;
    if (!argv || !match || *match || state == 'Z') continue;
    char path[64], cmd[4096];
    snprintf(path, sizeof(path), "/proc/%ld/cmdline", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    ssize_t len = read(fd, cmd, sizeof(cmd));
    close(fd);
    size_t off = 0;
    bool same = len > 0;
    for (size_t i = 0; same && argv[i]; i++) {
      size_t l = strlen(argv[i]) + 1;
      same = off + l <= (size_t)len && memcmp(cmd + off, argv[i], l) == 0;
      off += l;
    }
    if (same && off == (size_t)len) *match = (pid_t)pid;
  }
  closedir(d);
  return n;
}

/* ---- HTTP peers (our own children) ------------------------------------------ */

typedef struct http_peer {
  char *argv[16];
  int port;
  pid_t pid;
  int stdin_fd; /* closing it stops the server */
} http_peer;

/* Starts |p| (on p->port, 0 the first time); false when it did not listen. */
static bool peer_start_once(http_peer *p) {
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0) die("pipe: %s", strerror(errno));
  char port[16];
  snprintf(port, sizeof(port), "%d", p->port);
  size_t n = 0;
  while (p->argv[n]) n++;
  p->argv[n] = (char *)"--port";
  p->argv[n + 1] = port;
  pid_t pid = fork();
  if (pid < 0) die("fork: %s", strerror(errno));
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    execv(p->argv[0], p->argv);
    _exit(127);
  }
  p->argv[n] = p->argv[n + 1] = NULL;
  close(in[0]);
  close(out[1]);
  char buf[64];
  size_t got = 0;
  for (;;) { /* "PORT <n>\n", or EOF when it could not listen */
    ssize_t r = read(out[0], buf + got, sizeof(buf) - 1 - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += (size_t)r;
    if (memchr(buf, '\n', got) || got == sizeof(buf) - 1) break;
  }
  buf[got] = '\0';
  close(out[0]);
  int port_read = 0;
  if (sscanf(buf, "PORT %d", &port_read) != 1) {
    close(in[1]);
    waitpid(pid, NULL, 0);
    return false;
  }
  p->port = port_read;
  p->pid = pid;
  p->stdin_fd = in[1];
  return true;
}

/* Restarts on the same port; a port briefly held elsewhere is retried. */
static void peer_start(http_peer *p) {
  for (int i = 0; i < 200; i++) {
    if (peer_start_once(p)) return;
    sleep_ms(50);
  }
  die("%s could not listen on port %d", p->argv[0], p->port);
}

static void peer_kill(http_peer *p) {
  if (!p->pid) return;
  kill(p->pid, SIGKILL);
  waitpid(p->pid, NULL, 0);
  close(p->stdin_fd);
  p->pid = 0;
}

/* Stops it the polite way (stdin EOF), SIGKILL after 10 s. */
static void peer_stop(http_peer *p) {
  if (!p->pid) return;
  close(p->stdin_fd);
  int64_t end = now_ms() + 10000;
  while (waitpid(p->pid, NULL, WNOHANG) == 0) {
    if (now_ms() > end) {
      kill(p->pid, SIGKILL);
      waitpid(p->pid, NULL, 0);
      break;
    }
    sleep_ms(10);
  }
  p->pid = 0;
}

/* ---- state ------------------------------------------------------------------- */

enum {
  F_KILL_STDIO,
  F_STALL_STDIO,
  F_KILL_HTTP,
  F_DROP_HTTP,
  F_EXPIRE_HTTP,
  F_RECONNECT,
  F_BREAKER_RESET,
  F_NONE_TARGET,
  NFAULTS
};
static const char *const fault_names[NFAULTS] = {
    "kill-9-stdio", "stall-stdio", "kill-9-http",   "drop-http",
    "expire-http",  "reconnect",   "breaker-reset", "skipped (server down)"};

typedef struct srv_def {
  const char *name;
  bool http;
  const char *argv[12]; /* stdio */
  http_peer peer;       /* http */
  char tool[64];        /* "name/echo" */
  /* Hostile mode: */
  const char *hostile; /* mcp-hostile-server --mode, or NULL */
  const char *suffix;  /* the server appends this to an echo */
  bool utf8_prefix;    /* a success is valid UTF-8 starting with the text */
  bool prompt;         /* answers at once: a full-deadline timeout is a bug */
  bool must_succeed;   /* must answer at least one call */
} srv_def;

static struct {
  mcp_manager *m;
  srv_def s[MAX_SERVERS];
  int n; /* servers in use */
  bool hostile;
  atomic_long prompt_timeouts, late, long_texts;
  uint64_t seed;
  atomic_bool stop;
  atomic_long issued, succeeded, failed, unclear, wrong, bad_requests;
  atomic_long per_server_ok[MAX_SERVERS];
  atomic_long per_status[32]; /* by -status */
  atomic_long log_lines;
  atomic_llong max_latency_ms;
  atomic_llong started[NTHREADS]; /* ms; 0 when the thread is between calls */
  /* The cancel token of each thread's current call (NULL: none), fired at
   * random by the canceller thread. */
  pthread_mutex_t slot_lock[NTHREADS];
  mcp_cancel *slot[NTHREADS];
  atomic_long cancels_fired, short_timeouts;
  long faults[NFAULTS];
  bool verbose;
} g;

/* Hostile mode: an error message or log line quoting a server's text
 * (a 200 KiB cursor, say) without bound. */
static void check_text_bound(const char *what, const char *text) {
  size_t n = text ? strlen(text) : 0;
  if (!g.hostile || n <= TEXT_BOUND) return;
  if (atomic_fetch_add(&g.long_texts, 1) < 3)
    fprintf(stderr, "soak: UNBOUNDED TEXT: a %s of %zu bytes: %.160s...\n", what, n, text);
}

static void on_log(void *user, mcp_log_level level, const char *msg) {
  (void)user;
  atomic_fetch_add(&g.log_lines, 1);
  check_text_bound("log line", msg);
  if (g.verbose) fprintf(stderr, "[log %d] %s\n", (int)level, msg);
}

/* ---- host threads ------------------------------------------------------------ */

/* True when |s| is well-formed UTF-8 (no overlong forms, no surrogates). */
static bool utf8_valid(const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  while (*p) {
    unsigned char c = *p;
    size_t len = c < 0x80             ? 1
                 : (c & 0xe0) == 0xc0 ? 2
                 : (c & 0xf0) == 0xe0 ? 3
                 : (c & 0xf8) == 0xf0 ? 4
                                      : 0;
    if (!len) return false;
    uint32_t v = len == 1 ? c : (uint32_t)(c & (0x7f >> len));
    for (size_t i = 1; i < len; i++) {
      if ((p[i] & 0xc0) != 0x80) return false;
      v = (v << 6) | (p[i] & 0x3f);
    }
    static const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
    if (v < min[len] || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return false;
    p += len;
  }
  return true;
}

/* True when |result| is a tool result whose first text is |want| (with
 * |prefix|: starts with it). */
static bool text_matches(const char *result, const char *want, bool prefix) {
  json_object *r = json_tokener_parse(result), *content, *text;
  bool ok = r && json_object_is_type(r, json_type_object) &&
            json_object_object_get_ex(r, "content", &content) &&
            json_object_is_type(content, json_type_array) &&
            json_object_array_length(content) > 0 &&
            json_object_object_get_ex(json_object_array_get_idx(content, 0), "text", &text) &&
            (prefix ? strncmp(json_object_get_string(text), want, strlen(want)) == 0
                    : strcmp(json_object_get_string(text), want) == 0);
  json_object_put(r);
  return ok;
}

static bool echo_matches(const char *result, const char *want) {
  return text_matches(result, want, false);
}

/* Hostile mode: is |result| the right answer of server |s| to |text|? */
static bool hostile_matches(const srv_def *s, const char *result, const char *text) {
  if (!utf8_valid(result)) return false; /* the library promises UTF-8 */
  if (s->utf8_prefix) return text_matches(result, text, true);
  if (s->suffix) {
    char want[256];
    snprintf(want, sizeof(want), "%s%s", text, s->suffix);
    return echo_matches(result, want);
  }
  return echo_matches(result, text);
}

static void *host_thread(void *arg) {
  int t = (int)(intptr_t)arg;
  uint64_t rs = mix(g.seed * 31 + (uint64_t)t) | 1;
  mcp_call_options *o = mcp_call_options_new();
  if (!o) die("out of memory");
  for (long n = 0; !atomic_load(&g.stop); n++) {
    int si = (int)(rnd(&rs) % (uint64_t)g.n);
    char text[96], args[160], tool[80];
    snprintf(text, sizeof(text), "t%d-%ld-%016" PRIx64, t, n, rnd(&rs));
    snprintf(args, sizeof(args), "{\"text\":\"%s\"}", text);
    snprintf(tool, sizeof(tool), "%s", g.s[si].tool);
    uint64_t what = rnd(&rs) % 64;
    if (g.hostile) {
      /* The cursor server re-lists (list_changed) on `relist`. */
      if (g.s[si].hostile && !strcmp(g.s[si].hostile, "cursor") && what < 8) {
        snprintf(tool, sizeof(tool), "%s/relist", g.s[si].name);
        snprintf(text, sizeof(text), "relist");
        snprintf(args, sizeof(args), "{}");
      }
    } else if (si == 1 || si == 2) {
      /* Fault servers: sometimes notifications before the answer, or
       * `grow` (list_changed: the manager re-lists while calls run). */
      if (what == 0) {
        snprintf(tool, sizeof(tool), "%s/grow", g.s[si].name);
        snprintf(text, sizeof(text), "grow");
        snprintf(args, sizeof(args), "{}");
      } else if (what < 8) {
        snprintf(tool, sizeof(tool), "%s/notify", g.s[si].name);
        snprintf(text, sizeof(text), "sent %d notifications", (int)what);
        snprintf(args, sizeof(args), "{\"count\":%d}", (int)what);
      }
    } else if (si >= 3 && what < 8) {
      snprintf(tool, sizeof(tool), "%s/add", g.s[si].name);
      snprintf(text, sizeof(text), "%d", (int)(what * 1000 + (uint64_t)t));
      snprintf(args, sizeof(args), "{\"a\":%d,\"b\":%d}", (int)(what * 1000), t);
    }
    char *result = NULL;
    mcp_error err = MCP_ERROR_INIT;
    int64_t t0 = now_ms();
    atomic_store(&g.started[t], t0);
    atomic_fetch_add(&g.issued, 1);
    /* One call in 8 with a deadline of 1-100 ms (timeouts racing replies),
     * one in 8 with a cancel token the canceller may fire at any moment. */
    uint64_t kind = rnd(&rs) % 8;
    int64_t timeout = kind == 0 ? rnd_between(&rs, 1, 100) : CALL_TIMEOUT_MS;
    mcp_call_options_set_timeout_ms(o, timeout);
    if (kind == 0) atomic_fetch_add(&g.short_timeouts, 1);
    mcp_cancel *tok = kind == 1 ? mcp_cancel_new() : NULL;
    if (kind == 1 && !tok) die("out of memory");
    mcp_call_options_set_cancel(o, tok);
    pthread_mutex_lock(&g.slot_lock[t]);
    g.slot[t] = tok;
    pthread_mutex_unlock(&g.slot_lock[t]);
    mcp_status st = mcp_manager_call_tool(g.m, tool, args, o, &result, &err);
    int64_t dt = now_ms() - t0;
    sample_heap();
    atomic_store(&g.started[t], 0);
    pthread_mutex_lock(&g.slot_lock[t]);
    g.slot[t] = NULL;
    pthread_mutex_unlock(&g.slot_lock[t]);
    mcp_call_options_set_cancel(o, NULL);
    mcp_cancel_unref(tok);
    long long prev = atomic_load(&g.max_latency_ms);
    while (dt > prev && !atomic_compare_exchange_weak(&g.max_latency_ms, &prev, dt)) {
    }
    if (g.hostile && dt > timeout + LATE_SLACK_MS) {
      if (atomic_fetch_add(&g.late, 1) < 5)
        fprintf(stderr,
                "soak: LATE: a call to %s with a %" PRId64 " ms deadline returned after "
                "%" PRId64 " ms (%s)\n",
                g.s[si].name, timeout, dt, mcp_strerror(st));
    }
    if (g.hostile && st == MCP_ETIMEDOUT && g.s[si].prompt && kind >= 2) {
      if (atomic_fetch_add(&g.prompt_timeouts, 1) < 5)
        fprintf(stderr,
                "soak: TIMED OUT instead of a prompt error: %s answered at once, the "
                "call waited %" PRId64 " ms: %s\n",
                g.s[si].name, dt, err.message ? err.message : "(no message)");
    }
    bool right = result &&
                 (g.hostile && strcmp(text, "relist") != 0 ? hostile_matches(&g.s[si], result, text)
                                                           : echo_matches(result, text));
    if (st == MCP_OK) {
      if (right) {
        atomic_fetch_add(&g.succeeded, 1);
        atomic_fetch_add(&g.per_server_ok[si], 1);
      } else {
        atomic_fetch_add(&g.wrong, 1);
        if (atomic_load(&g.wrong) <= 5)
          fprintf(stderr, "soak: WRONG RESULT from %s for \"%s\": %.300s\n", tool, text,
                  result ? result : "(null)");
      }
    } else if (err.status == st && err.message && err.message[0]) {
      atomic_fetch_add(&g.failed, 1);
      check_text_bound("call's error message", err.message);
      if (err.http_status == 400) { /* our servers say 400 only to a bad request */
        atomic_fetch_add(&g.bad_requests, 1);
        fprintf(stderr, "soak: HTTP 400 from %s: %s\n", g.s[si].name, err.message);
      }
      if (-st > 0 && -st < 32) atomic_fetch_add(&g.per_status[-st], 1);
      if (g.verbose)
        fprintf(stderr, "[call] %s: %s: %s\n", g.s[si].name, mcp_strerror(st), err.message);
    } else {
      if (atomic_fetch_add(&g.unclear, 1) < 5)
        fprintf(stderr,
                "soak: UNCLEAR ERROR from %s: returned %d (%s), err.status %d, message %s\n",
                g.s[si].name, (int)st, mcp_strerror(st), (int)err.status,
                err.message ? err.message : "(null)");
    }
    mcp_free(result);
    mcp_error_clear(&err);
    if (rnd(&rs) % 64 == 0) { /* the read side of the API, under the same chaos */
      char *js = NULL;
      if (mcp_manager_servers(g.m, &js, NULL) == MCP_OK) mcp_free(js);
      mcp_tool_list *l = mcp_manager_tools(g.m);
      mcp_tool_list_unref(l);
    }
  }
  mcp_call_options_free(o);
  return NULL;
}

/* Fires the token of a random thread's call every 0-5 ms. */
static void *canceller(void *arg) {
  uint64_t rs = mix(g.seed * 131 + 7) | 1;
  (void)arg;
  while (!atomic_load(&g.stop)) {
    sleep_ms(rnd_between(&rs, 0, 5));
    int t = (int)(rnd(&rs) % NTHREADS);
    pthread_mutex_lock(&g.slot_lock[t]);
    if (g.slot[t] && !mcp_cancel_is_fired(g.slot[t])) {
      mcp_cancel_fire(g.slot[t]);
      atomic_fetch_add(&g.cancels_fired, 1);
    }
    pthread_mutex_unlock(&g.slot_lock[t]);
  }
  return NULL;
}

/* ---- chaos driver ------------------------------------------------------------ */

static void reconnect_failed(void) {
  char *js = NULL;
  if (mcp_manager_servers(g.m, &js, NULL) != MCP_OK) return;
  json_object *arr = json_tokener_parse(js);
  mcp_free(js);
  for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
    json_object *s = json_object_array_get_idx(arr, i), *state, *name;
    if (json_object_object_get_ex(s, "state", &state) &&
        strcmp(json_object_get_string(state), "failed") == 0 &&
        json_object_object_get_ex(s, "name", &name)) {
      if (g.verbose)
        fprintf(stderr, "[chaos] %s failed; reconnecting by hand\n", json_object_get_string(name));
      if (mcp_manager_reconnect(g.m, json_object_get_string(name), NULL) == MCP_OK)
        g.faults[F_BREAKER_RESET]++;
    }
  }
  json_object_put(arr);
}

static void chaos(int64_t end) {
  uint64_t rs = mix(g.seed) | 1;
  /* weights: kill-stdio 2, stall 2, kill-http 1, drop 2, expire 2, reconnect 1 */
  static const int pick[] = {F_KILL_STDIO, F_KILL_STDIO, F_STALL_STDIO, F_STALL_STDIO, F_KILL_HTTP,
                             F_DROP_HTTP,  F_DROP_HTTP,  F_EXPIRE_HTTP, F_EXPIRE_HTTP, F_RECONNECT};
  /* Hostile mode: every server is stdio. */
  static const int pick_stdio[] = {F_KILL_STDIO, F_STALL_STDIO, F_RECONNECT, F_KILL_STDIO};
  while (now_ms() < end) {
    if (g.hostile) {
      sleep_ms(rnd_between(&rs, 300, 1200));
      reconnect_failed();
      int f = pick_stdio[rnd(&rs) % 4];
      srv_def *s = &g.s[rnd(&rs) % (uint64_t)g.n];
      if (g.verbose) fprintf(stderr, "[chaos] %s %s\n", fault_names[f], s->name);
      pid_t pid = 0;
      if (f != F_RECONNECT) children(s->argv, &pid);
      if (f == F_RECONNECT) {
        if (mcp_manager_reconnect(g.m, s->name, NULL) == MCP_OK) g.faults[f]++;
      } else if (!pid) {
        g.faults[F_NONE_TARGET]++;
      } else if (f == F_KILL_STDIO) {
        kill(pid, SIGKILL);
        g.faults[f]++;
      } else {
        kill(pid, SIGSTOP);
        sleep_ms(rnd_between(&rs, 300, 1500));
        char state;
        pid_t ppid;
        if (proc_stat(pid, &state, &ppid) && ppid == getpid()) kill(pid, SIGCONT);
        g.faults[f]++;
      }
      continue;
    }
    sample_heap();
    sleep_ms(rnd_between(&rs, 150, 600)); /* the schedule, not a wait for an event */
    reconnect_failed();
    int f = pick[rnd(&rs) % (sizeof(pick) / sizeof(pick[0]))];
    int stdio_idx[] = {0, 1, 2}, http_idx[] = {3, 4, 5};
    srv_def *s = &g.s[f <= F_STALL_STDIO ? stdio_idx[rnd(&rs) % 3]
                      : f == F_RECONNECT ? (int)(rnd(&rs) % NSERVERS)
                                         : http_idx[rnd(&rs) % 3]];
    if (g.verbose) fprintf(stderr, "[chaos] %s %s\n", fault_names[f], s->name);
    switch (f) {
    case F_KILL_STDIO:
    case F_STALL_STDIO: {
      pid_t pid;
      children(s->argv, &pid);
      if (!pid) {
        g.faults[F_NONE_TARGET]++;
        break;
      }
      if (f == F_KILL_STDIO) {
        kill(pid, SIGKILL); /* the library reaps it */
      } else {
        kill(pid, SIGSTOP);
        sleep_ms(rnd_between(&rs, 300, 1500));
        char state;
        pid_t ppid;
        if (proc_stat(pid, &state, &ppid) && ppid == getpid()) kill(pid, SIGCONT);
      }
      g.faults[f]++;
      break;
    }
    case F_KILL_HTTP:
      peer_kill(&s->peer);
      sleep_ms(rnd_between(&rs, 100, 800));
      peer_start(&s->peer);
      g.faults[f]++;
      break;
    case F_DROP_HTTP:
    case F_EXPIRE_HTTP:
      kill(s->peer.pid, f == F_DROP_HTTP ? SIGUSR2 : SIGUSR1);
      g.faults[f]++;
      break;
    case F_RECONNECT:
      if (mcp_manager_reconnect(g.m, s->name, NULL) == MCP_OK) g.faults[f]++;
      break;
    }
  }
}

/* ---- main --------------------------------------------------------------------- */

/* VmHWM of /proc/self/status (KiB), or -1. */
static long peak_rss_kb(void) {
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long kb = -1;
  while (fgets(line, sizeof(line), f))
    if (sscanf(line, "VmHWM: %ld kB", &kb) == 1) break;
  fclose(f);
  return kb;
}

static void on_alarm(int sig) {
  (void)sig;
  static const char msg[] = "soak: VERDICT: FAIL (hang: the run did not end in time)\n";
  if (write(2, msg, sizeof(msg) - 1) < 0) {
  }
  _exit(1);
}

static void *warm_up(void *arg) { return arg; }

static const char *env_or_die(const char *name) {
  const char *v = getenv(name);
  if (!v || !*v)
    die("%s is not set (make check sets it; see the header of tests/soak/soak.c)", name);
  return v;
}

static void make_pki(const char *dir) {
  char cmd[4096];
  const char *ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
  snprintf(cmd, sizeof(cmd),
           "cd '%s' && exec >pki.log 2>&1 && "
           "printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\n"
           "basicConstraints=CA:FALSE\\nextendedKeyUsage=serverAuth\\n' >srv.ext && "
           "openssl req -x509 %s -keyout ca.key -out ca.pem -days 2 "
           "-subj /CN=mcpconn-soak-ca -addext basicConstraints=critical,CA:TRUE "
           "-addext keyUsage=critical,keyCertSign,cRLSign && "
           "openssl req -new %s -keyout server.key -out server.csr -subj /CN=localhost && "
           "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
           "-out server.pem -days 2 -extfile srv.ext",
           dir, ec, ec);
  if (system(cmd) != 0) die("openssl could not make the test certificates (see %s/pki.log)", dir);
}

int main(int argc, char **argv) {
  long seconds = 60;
#ifdef SOAK_HOSTILE_DEFAULT
  g.hostile = true;
  seconds = 20;
#endif
  const char *e = getenv("MCP_SOAK_HOSTILE");
  if (e && !strcmp(e, "1")) g.hostile = true;
  e = getenv("MCP_SOAK_SECONDS");
  if (e && *e) seconds = atol(e);
  g.seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 16);
  if ((e = getenv("MCP_SOAK_SEED")) && *e) g.seed = strtoull(e, NULL, 10);
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--seconds") && i + 1 < argc) seconds = atol(argv[++i]);
    else if (!strcmp(argv[i], "--seed") && i + 1 < argc) g.seed = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--verbose")) g.verbose = true;
    else if (!strcmp(argv[i], "--hostile")) g.hostile = true;
    else die("usage: soak [--seconds N] [--seed N] [--verbose] [--hostile]");
  }
  if (seconds < 1) seconds = 1;
  g.seed %= 1000000000ull; /* short enough to type back */
  g.n = g.hostile ? 9 : NSERVERS;
  printf("soak: %sseed %" PRIu64 ", %ld s, %d threads, %d servers "
         "(rerun: %sMCP_SOAK_SEED=%" PRIu64 " MCP_SOAK_SECONDS=%ld)\n",
         g.hostile ? "hostile mode, " : "", g.seed, seconds, NTHREADS, g.n,
         g.hostile ? "MCP_SOAK_HOSTILE=1 " : "", g.seed, seconds);
  fflush(stdout);
  signal(SIGPIPE, SIG_IGN);
  signal(SIGALRM, on_alarm);
  alarm((unsigned)seconds + 240);

  const char *demo = env_or_die("MCP_DEMO_SERVER");
  const char *fault = env_or_die("MCP_FAULT_SERVER");
  const char *h2 = g.hostile ? NULL : env_or_die("MCP_H2_TEST_SERVER");
  const char *hostile = g.hostile ? env_or_die("MCP_HOSTILE_SERVER") : NULL;
  const char *base = getenv("MCP_TEST_TMPDIR");
  char dir[512], flog[600], tmp[600];
  snprintf(dir, sizeof(dir), "%s/soak.XXXXXX", base && *base ? base : "/tmp");
  if (!mkdtemp(dir)) die("mkdtemp %s: %s", dir, strerror(errno));
  snprintf(flog, sizeof(flog), "%s/faults.log", dir);
  if (!g.hostile) make_pki(dir);

  static char seeds[NSERVERS][24];
  for (int i = 0; i < NSERVERS; i++)
    snprintf(seeds[i], sizeof(seeds[i]), "%" PRIu64, g.seed * 16 + (uint64_t)i + 1);
  static char cert[600], key[600], ca[600];
  snprintf(cert, sizeof(cert), "%s/server.pem", dir);
  snprintf(key, sizeof(key), "%s/server.key", dir);
  snprintf(ca, sizeof(ca), "%s/ca.pem", dir);
  g.s[0] = (srv_def){.name = "demo", .argv = {demo, NULL}, .must_succeed = true};
  if (g.hostile) {
    static const struct {
      const char *mode, *suffix;
      bool utf8_prefix, prompt, must_succeed;
    } hm[] = {{"cursor", NULL, false, false, true},
              {"flood", NULL, false, false, true},
              {"oversize", NULL, false, true, false},
              {"bad-utf8", NULL, true, true, false},
              {"non-object", NULL, false, true, false},
              {"malformed", NULL, false, true, false},
              {"stop-reading", NULL, false, false, false},
              {"escape",
               "\x1b[2J\x1b]0;pwned\x07 \xe2\x80\xae \xc2\x9b"
               "31m",
               false, false, true}};
    for (int i = 1; i < g.n; i++) {
      srv_def *d = &g.s[i];
      *d = (srv_def){.name = hm[i - 1].mode,
                     .hostile = hm[i - 1].mode,
                     .suffix = hm[i - 1].suffix,
                     .utf8_prefix = hm[i - 1].utf8_prefix,
                     .prompt = hm[i - 1].prompt,
                     .must_succeed = hm[i - 1].must_succeed,
                     .argv = {hostile, "--mode", hm[i - 1].mode, "--fault-log", flog, NULL}};
    }
  } else {
    g.s[1] = (srv_def){
        .name = "fault1",
        .argv = {fault, "--chaos", seeds[1], "--chaos-permille", "10", "--fault-log", flog, NULL}};
    g.s[2] = (srv_def){.name = "fault2",
                       .argv = {fault, "--chaos", seeds[2], "--chaos-permille", "10", "--fault-log",
                                flog, "--stderr-flood", "1048576", NULL}};
    for (int i = 3; i < NSERVERS; i++) {
      g.s[i].http = true;
      char **a = g.s[i].peer.argv;
      int n = 0;
      a[n++] = (char *)h2;
      a[n++] = (char *)"--chaos";
      a[n++] = seeds[i];
      a[n++] = (char *)"--chaos-permille";
      a[n++] = (char *)"20";
      a[n++] = (char *)"--fault-log";
      a[n++] = flog;
      if (i != 3) { /* h2b and tls: every 3rd answer as an event stream */
        a[n++] = (char *)"--sse-every";
        a[n++] = (char *)"3";
      }
      if (i == 5) {
        a[n++] = (char *)"--tls";
        a[n++] = cert;
        a[n++] = key;
      }
    }
    g.s[3].name = "h2a";
    g.s[4].name = "h2b";
    g.s[5].name = "tls";
    for (int i = 0; i < NSERVERS; i++) g.s[i].must_succeed = true;
  }
  for (int i = 0; i < g.n; i++) snprintf(g.s[i].tool, sizeof(g.s[i].tool), "%s/echo", g.s[i].name);

  /* The baseline: nothing of the manager's, nor of the peers, exists yet.
   * One thread made and joined first, so that a runtime that starts a
   * helper thread with the first pthread_create (TSan) has done so. */
  pthread_t warm;
  if (pthread_create(&warm, NULL, warm_up, NULL) != 0 || pthread_join(warm, NULL) != 0)
    die("pthread_create");
  int fds0 = count_dir("/proc/self/fd"), threads0 = count_dir("/proc/self/task");
  int kids0 = children(NULL, NULL);

  for (int i = 0; i < g.n; i++)
    if (g.s[i].http) peer_start(&g.s[i].peer);

  mcp_manager_options *mo = mcp_manager_options_new();
  if (!mo) die("out of memory");
  mcp_manager_options_set_discovery(mo, false, false);
  mcp_manager_options_set_cache_dir(mo, NULL);
  mcp_manager_options_set_timeout_ms(mo, 10000);
  mcp_manager_options_set_startup_gate_ms(mo, 10000);
  mcp_manager_options_set_log(mo, on_log, NULL);
  for (int i = 0; i < g.n; i++) {
    mcp_client_options *co = mcp_client_options_new();
    if (!co) die("out of memory");
    if (!g.s[i].http) {
      if (mcp_client_options_set_stdio(co, g.s[i].argv) != MCP_OK) die("set_stdio");
      if (g.hostile) mcp_client_options_set_max_message_bytes(co, HOSTILE_MAX_MESSAGE);
    } else {
      char url[128];
      snprintf(url, sizeof(url), "%s://%s:%d/mcp", i == 5 ? "https" : "http", "127.0.0.1",
               g.s[i].peer.port);
      if (mcp_client_options_set_http(co, url, MCP_HTTP_TRANSPORT_STREAMABLE) != MCP_OK)
        die("set_http %s", url);
      mcp_client_options_set_http_version(co, MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
      mcp_client_options_set_http_listener(co, i == 4);
      if (i == 5 && mcp_client_options_set_ca(co, ca, NULL) != MCP_OK) die("set_ca");
    }
    if (mcp_manager_options_add_server(mo, g.s[i].name, co) != MCP_OK)
      die("add_server %s", g.s[i].name);
    mcp_client_options_free(co);
  }
  mcp_error err = MCP_ERROR_INIT;
  if (mcp_manager_start(mo, &g.m, &err) != MCP_OK) die("mcp_manager_start: %s", err.message);
  mcp_manager_options_free(mo);
  char *js = NULL;
  if (mcp_manager_servers(g.m, &js, NULL) == MCP_OK) {
    printf("soak: servers at start: %s\n", js);
    mcp_free(js);
  }
  fflush(stdout);

  int64_t t_start = now_ms(), end = t_start + seconds * 1000;
  pthread_t th[NTHREADS], cth;
  for (int i = 0; i < NTHREADS; i++) pthread_mutex_init(&g.slot_lock[i], NULL);
  for (int i = 0; i < NTHREADS; i++)
    if (pthread_create(&th[i], NULL, host_thread, (void *)(intptr_t)i) != 0) die("pthread_create");
  if (pthread_create(&cth, NULL, canceller, NULL) != 0) die("pthread_create");
  chaos(end);
  atomic_store(&g.stop, true);
  pthread_join(cth, NULL);

  /* Every thread must come back; one stuck in a call past LOST_AFTER_MS
   * means a call that never ended. */
  int64_t lost_at = now_ms() + LOST_AFTER_MS;
  long lost_threads = 0;
  for (int i = 0; i < NTHREADS; i++) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t left = lost_at - now_ms();
    if (left < 0) left = 0;
    ts.tv_sec += (time_t)(left / 1000);
    ts.tv_nsec += (long)(left % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
      ts.tv_sec++;
      ts.tv_nsec -= 1000000000L;
    }
    if (pthread_timedjoin_np(th[i], NULL, &ts) != 0) {
      lost_threads++;
      fprintf(stderr, "soak: thread %d is stuck in a call started %" PRId64 " ms ago\n", i,
              now_ms() - (int64_t)atomic_load(&g.started[i]));
    }
  }
  long issued = atomic_load(&g.issued), ok = atomic_load(&g.succeeded),
       failed = atomic_load(&g.failed), unclear = atomic_load(&g.unclear),
       wrong = atomic_load(&g.wrong);
  long lost = issued - ok - failed - unclear - wrong;
  printf("soak: calls issued %ld, succeeded %ld, failed-with-error %ld, lost %ld "
         "(unclear errors %ld, wrong results %ld, HTTP 400 %ld), max latency %lld ms, "
         "%.0f calls/s\n",
         issued, ok, failed, lost, unclear, wrong, atomic_load(&g.bad_requests),
         (long long)atomic_load(&g.max_latency_ms),
         (double)issued * 1000.0 / (double)(now_ms() - t_start));
  if (lost_threads) {
    printf("soak: VERDICT: FAIL (%ld calls never returned; not freeing the manager)\n", lost);
    fflush(stdout);
    _exit(1);
  }

  int64_t t_free = now_ms();
  mcp_manager_free(g.m);
  int64_t free_ms = now_ms() - t_free;
  for (int i = 0; i < g.n; i++)
    if (g.s[i].http) peer_stop(&g.s[i].peer);

  int fds1 = count_dir("/proc/self/fd"), threads1 = count_dir("/proc/self/task");
  /* A joined thread can stay listed in /proc a moment after pthread_join();
   * a thread still there after 3 s is a leak.  How long it took is shown. */
  int64_t settle0 = now_ms();
  while (threads1 != threads0 && now_ms() - settle0 < 3000) {
    sleep_ms(10);
    threads1 = count_dir("/proc/self/task");
  }
  int64_t settle_ms = now_ms() - settle0;
  int kids1 = children(NULL, NULL);

  printf("soak: errors by status:");
  for (int i = 1; i < 32; i++)
    if (atomic_load(&g.per_status[i]))
      printf(" %s %ld", mcp_strerror((mcp_status)-i), atomic_load(&g.per_status[i]));
  printf("\nsoak: successes by server:");
  for (int i = 0; i < g.n; i++) printf(" %s %ld", g.s[i].name, atomic_load(&g.per_server_ok[i]));
  printf("\nsoak: calls with a 1-100 ms deadline %ld, cancel tokens fired %ld",
         atomic_load(&g.short_timeouts), atomic_load(&g.cancels_fired));
  printf("\nsoak: faults by the driver:");
  long total_faults = 0;
  for (int i = 0; i < NFAULTS; i++) {
    printf(" %s %ld%s", fault_names[i], g.faults[i], i + 1 < NFAULTS ? "," : "");
    if (i != F_NONE_TARGET) total_faults += g.faults[i];
  }
  printf("\nsoak: faults by the servers:");
  FILE *f = fopen(flog, "r");
  const char *kinds[] = {"stdio-crash", "stdio-garbage", "stdio-stall", "stdio-stderr-flood",
                         "stdio-hang",  "http-garbage",  "http-stall",  "http-drop",
                         "http-reset",  "http-503",      "http-expire"};
  long kc[sizeof(kinds) / sizeof(kinds[0])] = {0};
  char line[128];
  /* Hostile mode: "hostile-<mode>-<variant>", counted by kind as seen. */
  enum { NHK = 48 };
  char hk[NHK][128];
  long hc[NHK] = {0};
  int nhk = 0;
  while (f && fgets(line, sizeof(line), f)) {
    line[strcspn(line, "\n")] = '\0';
    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
      if (!strcmp(line, kinds[k])) kc[k]++;
    if (strncmp(line, "hostile-", 8) != 0) continue;
    int k = 0;
    while (k < nhk && strcmp(hk[k], line + 8) != 0) k++;
    if (k == nhk && nhk < NHK) snprintf(hk[nhk++], sizeof(hk[0]), "%s", line + 8);
    if (k < nhk) hc[k]++;
  }
  for (int k = 0; k < nhk; k++) {
    printf(" %s %ld,", hk[k], hc[k]);
    total_faults += hc[k];
  }
  if (f) fclose(f);
  for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
    printf(" %s %ld%s", kinds[k], kc[k], k + 1 < sizeof(kinds) / sizeof(kinds[0]) ? "," : "");
    total_faults += kc[k];
  }
  printf("\nsoak: manager log lines %ld; mcp_manager_free took %" PRId64 " ms\n",
         atomic_load(&g.log_lines), free_ms);
  printf("soak: fds %d -> %d, threads %d -> %d (settled in %" PRId64 " ms), child processes "
         "%d -> %d\n",
         fds0, fds1, threads0, threads1, settle_ms, kids0, kids1);
#ifdef SOAK_SANITIZER
  long hwm_kb = atomic_load(&heap_peak_kb);
  printf("soak: peak live heap %ld KiB (sanitizer build; RSS %ld KiB not judged)", hwm_kb,
         peak_rss_kb());
#else
  long hwm_kb = peak_rss_kb();
  printf("soak: peak RSS %ld KiB", hwm_kb);
#endif
  if (g.hostile)
    printf(" (ceiling %d); calls past their deadline + %d ms %ld; prompt answers that timed "
           "out %ld; messages over %d bytes %ld",
           RSS_CEILING_KB, LATE_SLACK_MS, atomic_load(&g.late), atomic_load(&g.prompt_timeouts),
           TEXT_BOUND, atomic_load(&g.long_texts));
  printf("\n");

  /* Every check that failed, so one run shows them all. */
  char whybuf[1024] = "";
  const char *reasons[16];
  int nr = 0;
  if (lost) reasons[nr++] = "lost calls";
  if (unclear) reasons[nr++] = "failures without a clear error";
  if (wrong)
    reasons[nr++] = g.hostile ? "wrong answers taken as successes (another call's result, "
                                "invalid UTF-8, a result that is not an object)"
                              : "successes with another call's result";
  if (atomic_load(&g.bad_requests))
    reasons[nr++] = "HTTP 400: the client sent a request the server could not take";
  if (fds1 != fds0) reasons[nr++] = "file descriptors leaked";
  if (threads1 != threads0) reasons[nr++] = "threads leaked";
  if (kids1 != kids0) reasons[nr++] = "child processes leaked";
  if (!total_faults) reasons[nr++] = "no fault was injected";
  if (g.hostile && hwm_kb > RSS_CEILING_KB) reasons[nr++] = "peak memory above 256 MiB";
  if (g.hostile && atomic_load(&g.late)) reasons[nr++] = "calls returned long after their deadline";
  if (g.hostile && atomic_load(&g.long_texts))
    reasons[nr++] = "error messages or log lines that quote a server's text without bound";
  if (g.hostile && atomic_load(&g.prompt_timeouts))
    reasons[nr++] = "answers the library dropped (the calls timed out instead of failing at once)";
  for (int i = 0; i < nr; i++)
    snprintf(whybuf + strlen(whybuf), sizeof(whybuf) - strlen(whybuf), "%s%s", i ? "; " : "",
             reasons[i]);
  for (int i = 0; i < g.n; i++)
    if (g.s[i].must_succeed && !atomic_load(&g.per_server_ok[i]))
      snprintf(whybuf + strlen(whybuf), sizeof(whybuf) - strlen(whybuf),
               "%sserver %s never answered", whybuf[0] ? "; " : "", g.s[i].name);
  const char *why = whybuf[0] ? whybuf : NULL;
  snprintf(tmp, sizeof(tmp), "rm -rf '%s'", dir);
  if (!why && system(tmp) != 0) fprintf(stderr, "soak: could not remove %s\n", dir);
  printf("soak: VERDICT: %s%s%s (seed %" PRIu64 ")\n", why ? "FAIL (" : "PASS", why ? why : "",
         why ? ")" : "", g.seed);
  return why ? 1 : 0;
}
