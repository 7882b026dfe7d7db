/* SPDX-License-Identifier: MIT */
/*
 * check_demo_fast.c: the demo server's fast path (fast_echo() in
 * bin/demo_fast.c, which answers plain echo calls from a scan of the line
 * instead of a json-c tree) must answer exactly what the general
 * path answers.  Runs the server twice over the same input, once with
 * --no-fast-path, and compares the two outputs byte for byte: hand-written
 * edge cases, thousands of generated requests (member order, white space,
 * extra members, escapes, ids of every kind, other tools and methods), and
 * byte-level mutations of them (truncation, flipped, inserted and deleted
 * bytes).  It also checks that the fast path did answer most of the plain
 * requests, so the comparison is not vacuous.  All of it in each of the
 * server's --protocol modes (dual, legacy, modern), with modern _meta of
 * every shape among the generated requests.
 *
 * Then the eras themselves: what the server answers to modern and legacy
 * requests in each mode, and the client's verdict on it (auto ends modern
 * on the default server, legacy on --protocol legacy), with what the
 * client sent read back from the server's side (tests/era/tee-stdin.sh).
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_util.h"
#include "mcpconn.h"

static uint64_t rng = 0x9E3779B97F4A7C15ULL;
static uint64_t next_rand(void) { /* splitmix64 */
  uint64_t z = (rng += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}
static int pick(int n) { return (int)(next_rand() % (uint64_t)n); }

typedef struct buf {
  char *p;
  size_t n, cap;
} buf;

static void put(buf *b, const char *s, size_t n) {
  if (b->n + n + 1 > b->cap) {
    b->cap = (b->n + n + 1) * 2;
    b->p = realloc(b->p, b->cap);
    ck_assert_ptr_nonnull(b->p);
  }
  memcpy(b->p + b->n, s, n);
  b->n += n;
  b->p[b->n] = '\0';
}
static void puts_(buf *b, const char *s) { put(b, s, strlen(s)); }

static const char *const WS[] = {"", "", "", " ", "\t", "  ", "\r", " \r "};
static void ws(buf *b) { puts_(b, WS[pick(8)]); }

static const char *const IDS[] = {"1",
                                  "42",
                                  "0",
                                  "-7",
                                  "123456789012345678",
                                  "1234567890123456789",
                                  "01",
                                  "-0",
                                  "1.5",
                                  "1e3",
                                  "\"abc\"",
                                  "\"\"",
                                  "null",
                                  "true",
                                  "[1]",
                                  "{}",
                                  "9",
                                  "-123"};
static const char *const TEXTS[] = {"\"hello\"",
                                    "\"\"",
                                    "\"a b c\"",
                                    "\"x\\ny\"",
                                    "\"q\\\"q\"",
                                    "\"s\\/s\"",
                                    "\"\\u0041\"",
                                    "\"caf\xc3\xa9\"",
                                    "\"\xff\xfe\"",
                                    "\"back\\\\slash\"",
                                    "\"tab\\t\"",
                                    "5",
                                    "null",
                                    "[\"a\"]",
                                    "{\"text\":\"nested\"}",
                                    "\"ctl\x01\"",
                                    "true",
                                    "\"12345678901234567890123456789012\""};
static const char *const NAMES[] = {"\"echo\"", "\"echo\"", "\"echo\"", "\"ech\\u006f\"",
                                    "\"Echo\"", "\"add\"",  "\"fail\"", "\"nope\"",
                                    "5",        "\"echo \""};
static const char *const METHODS[] = {
    "\"tools/call\"", "\"tools/call\"", "\"tools/call\"", "\"tools\\/call\"",
    "\"ping\"",       "\"tools/list\"", "\"other\"",      "1"};
#define MODERN_META \
  "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"," \
  "\"io.modelcontextprotocol/clientCapabilities\":{}}"
static const char *const EXTRAS[] = {"\"_meta\":{\"progressToken\":7}",
                                     MODERN_META,
                                     MODERN_META,
                                     "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"
                                     "\"2025-11-25\",\"io.modelcontextprotocol/"
                                     "clientCapabilities\":{}}",
                                     "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"
                                     "\"2026-07-28\"}",
                                     "\"_meta\":{\"io.modelcontextprotocol/clientCapabilities\":{"
                                     "},\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                                     "\"progressToken\":1}",
                                     "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":7,"
                                     "\"io.modelcontextprotocol/clientCapabilities\":{}}",
                                     "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"
                                     "\"2026-07-28\",\"io.modelcontextprotocol/"
                                     "clientCapabilities\":[]}",
                                     "\"_meta\":{\"io.modelcontextprotocol\\/protocolVersion\":"
                                     "\"2026-07-28\",\"io.modelcontextprotocol/"
                                     "clientCapabilities\":{}}",
                                     "\"_meta\":7",
                                     "\"x\":[1,2.5,-3,true,false,null,{\"a\":[]}]",
                                     "\"y\":\"esc\\\\aped\\n\"",
                                     "\"z\":1e5",
                                     "\"w\":\"\\ud83d\\ude00\"",
                                     "\"deep\":[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]",
                                     "\"n\":-0.25",
                                     "\"e\\u0078tra\":1",
                                     "\"big\":12345678901234567890123"};
#define N_EXTRAS ((int)(sizeof(EXTRAS) / sizeof(EXTRAS[0])))

/* One member "key":value into the object being built. */
static void member(buf *b, bool *first, const char *key, const char *val) {
  if (!*first) {
    puts_(b, ",");
    ws(b);
  }
  *first = false;
  puts_(b, key);
  ws(b);
  puts_(b, ":");
  ws(b);
  puts_(b, val);
  ws(b);
}

/* A generated request: mostly well-formed plain echo calls, with every
 * part sometimes varied, dropped, repeated or joined by an extra member. */
static void gen_request(buf *b) {
  buf args = {0}, params = {0};
  bool first = true;
  /* arguments */
  puts_(&args, "{");
  ws(&args);
  int order = pick(2);
  if (order && pick(8)) member(&args, &first, "\"text\"", pick(3) ? TEXTS[0] : TEXTS[pick(18)]);
  if (!pick(4)) member(&args, &first, "\"other\"", IDS[pick(18)]);
  if (!order && pick(8)) member(&args, &first, "\"text\"", pick(3) ? TEXTS[2] : TEXTS[pick(18)]);
  if (!pick(20)) member(&args, &first, "\"text\"", TEXTS[pick(18)]); /* repeated */
  puts_(&args, "}");
  /* params */
  first = true;
  puts_(&params, "{");
  ws(&params);
  const char *name = pick(3) ? "\"echo\"" : NAMES[pick(10)];
  if (pick(2)) {
    member(&params, &first, "\"name\"", name);
    if (pick(10)) member(&params, &first, "\"arguments\"", pick(15) ? args.p : "[]");
  } else {
    if (pick(10)) member(&params, &first, "\"arguments\"", pick(15) ? args.p : "null");
    member(&params, &first, "\"name\"", name);
  }
  if (!pick(5)) {
    const char *e = EXTRAS[pick(N_EXTRAS)];
    const char *colon = strchr(e, ':');
    char key[64];
    snprintf(key, sizeof(key), "%.*s", (int)(colon - e), e);
    member(&params, &first, key, colon + 1);
  }
  puts_(&params, "}");
  /* the message, members in a random order */
  first = true;
  ws(b);
  puts_(b, "{");
  ws(b);
  int perm[5] = {0, 1, 2, 3, 4};
  for (int i = 4; i > 0; i--) {
    int j = pick(i + 1), t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  for (int k = 0; k < 5; k++) {
    switch (perm[k]) {
    case 0:
      if (pick(20)) member(b, &first, "\"jsonrpc\"", pick(15) ? "\"2.0\"" : "\"1.0\"");
      break;
    case 1:
      if (pick(20)) member(b, &first, "\"id\"", pick(2) ? IDS[pick(2)] : IDS[pick(18)]);
      break;
    case 2: member(b, &first, "\"method\"", pick(3) ? METHODS[0] : METHODS[pick(8)]); break;
    case 3:
      if (pick(15)) member(b, &first, "\"params\"", params.p);
      break;
    case 4:
      if (!pick(6)) {
        const char *e = EXTRAS[pick(N_EXTRAS)];
        const char *colon = strchr(e, ':');
        char key[64];
        snprintf(key, sizeof(key), "%.*s", (int)(colon - e), e);
        member(b, &first, key, colon + 1);
      }
      break;
    }
  }
  if (!pick(30)) member(b, &first, "\"id\"", "5"); /* repeated id */
  puts_(b, "}");
  ws(b);
  free(args.p);
  free(params.p);
}

/* A byte-level mutation of |line| (no newlines are introduced). */
static void mutate(buf *out, const char *line, size_t n) {
  static const char bytes[] = "{}[]\",:\\ 0-9.eEtfnu\x01\x7f\xc3";
  put(out, line, n);
  int k = 1 + pick(3);
  for (int i = 0; i < k && out->n > 0; i++) {
    size_t at = (size_t)pick((int)out->n);
    char c = bytes[pick((int)sizeof(bytes) - 1)];
    switch (pick(4)) {
    case 0: out->p[at] = c; break; /* flip */
    case 1:                        /* delete */
      memmove(out->p + at, out->p + at + 1, out->n - at - 1);
      out->n--;
      break;
    case 2: /* insert */
      put(out, " ", 1);
      memmove(out->p + at + 1, out->p + at, out->n - at - 1);
      out->p[at] = c;
      break;
    default: out->n = at; /* truncate */
    }
  }
  out->p[out->n] = '\0';
}

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  buf b = {0};
  put(&b, "", 0);
  char chunk[65536];
  size_t n;
  while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) put(&b, chunk, n);
  fclose(f);
  return b.p;
}

static const char *tmpdir(void) {
  const char *d = getenv("MCP_TEST_TMPDIR");
  return d && *d ? d : "/tmp";
}

/* Runs the demo server with --protocol |proto| (NULL: none) and |flag| (or
 * none) on |in|; returns its stdout. */
static char *run_server(const char *in_path, const char *proto, const char *flag, char **err_out) {
  char out_path[4096], err_path[4096];
  snprintf(out_path, sizeof(out_path), "%s.%s.out", in_path, flag ? "slow" : "fast");
  snprintf(err_path, sizeof(err_path), "%s.%s.err", in_path, flag ? "slow" : "fast");
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    int in = open(in_path, O_RDONLY), out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600),
        err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (in < 0 || out < 0 || err < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
      _exit(127);
    setenv("MCP_DEMO_FAST_STATS", "1", 1);
    const char *server = test_env_path("MCP_DEMO_SERVER");
    const char *argv[5] = {server, NULL, NULL, NULL, NULL};
    int n = 1;
    if (proto) {
      argv[n++] = "--protocol";
      argv[n++] = proto;
    }
    if (flag) argv[n++] = flag;
    execv(server, (char *const *)argv);
    _exit(127);
  }
  int ws_;
  ck_assert_int_eq(waitpid(pid, &ws_, 0), pid);
  ck_assert_msg(WIFEXITED(ws_) && WEXITSTATUS(ws_) == 0, "server status %d", ws_);
  char *text = read_file(out_path);
  *err_out = read_file(err_path);
  unlink(out_path);
  unlink(err_path);
  ck_assert_ptr_nonnull(text);
  ck_assert_ptr_nonnull(*err_out);
  return text;
}

static const char *const EDGE[] = {
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"hi\"}}}",
    "{\"jsonrpc\":\"2.0\",\"id\":-0,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"hi\"}}}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"hi\"}}} x",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"hi\"}},}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"hi\"}}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"h\\u0000i\"}}}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{}}}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\"}}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"a\",\"text\":\"b\"}}}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"te\\u0078t\":\"b\"}}}",
    "{\"jsonrpc\":\"2.0\",\"id\":99999999999999999999,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"b\"}}}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"b\"},\"x\":1E400}}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"b\"},\"x\":+1}}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"b\"},\"x\":.5}}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"b\"},\"x\":1.}}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"b\"},\"x\":'s'}}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"b\"},\"x\":tru}}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"b\"},\"x\":[1,]}}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"b\"},\"x\":\"\\x\"}}",
    "  {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"b\"}}}  \r",
    "{\"id\":7,\"params\":{\"arguments\":{\"text\":\"order\"},\"name\":\"echo\"},\"method\":\"tools/call\",\"jsonrpc\":\"2.0\"}",
    "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"b\"}}}]",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",
};

static const char *const PROTOS[] = {NULL, "legacy", "modern", "dual"};

START_TEST(fast_path_answers_as_json_c) {
  const char *proto = PROTOS[_i];
  char path[4096];
  snprintf(path, sizeof(path), "%s/check_demo_fast.in.%d", tmpdir(), (int)getpid());
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  int plain = 0;
  for (size_t i = 0; i < sizeof(EDGE) / sizeof(EDGE[0]); i++) fprintf(f, "%s\n", EDGE[i]);
  int n = test_under_valgrind() ? 500 : 20000;
  for (int i = 0; i < n; i++) {
    buf b = {0};
    gen_request(&b);
    fprintf(f, "%s\n", b.p);
    buf m = {0};
    mutate(&m, b.p, b.n);
    if (m.n) {
      fwrite(m.p, 1, m.n, f);
      fputc('\n', f);
    }
    free(m.p);
    free(b.p);
  }
  /* Plain requests as the benchmarks send them, in both eras: these must
   * take the fast path (a modern-only server answers the legacy ones
   * -32602 on the general path). */
  bool modern_only = proto && strcmp(proto, "modern") == 0;
  for (int i = 0; i < n / 8; i++) {
    fprintf(f,
            "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":"
            "\"echo\",\"arguments\":{\"text\":\"%d:xxxxxxxx\"}}}\n",
            i, i);
    fprintf(f,
            "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":"
            "\"echo\",\"arguments\":{\"text\":\"%d:yyyyyyyy\"}," MODERN_META "}}\n",
            i, i);
    plain += modern_only ? 1 : 2;
  }
  ck_assert_int_eq(fclose(f), 0);

  char *fast_err = NULL, *slow_err = NULL;
  char *fast = run_server(path, proto, NULL, &fast_err);
  char *slow = run_server(path, proto, "--no-fast-path", &slow_err);
  unlink(path);
  /* Byte for byte; on a difference, show the first differing line. */
  if (strcmp(fast, slow) != 0) {
    size_t at = 0;
    while (fast[at] && fast[at] == slow[at]) at++;
    while (at > 0 && fast[at - 1] != '\n') at--;
    ck_abort_msg("outputs differ at byte %zu:\nfast: %.300s\nslow: %.300s", at, fast + at,
                 slow + at);
  }
  /* The comparison is not vacuous: the fast path answered at least the
   * plain requests (and the general one none). */
  unsigned long fl = 0, lines = 0, sl = 1, slines = 0;
  const char *p = strstr(fast_err, "fast path: ");
  ck_assert_msg(p && sscanf(p, "fast path: %lu of %lu", &fl, &lines) == 2, "%s", fast_err);
  p = strstr(slow_err, "fast path: ");
  ck_assert_msg(p && sscanf(p, "fast path: %lu of %lu", &sl, &slines) == 2, "%s", slow_err);
  ck_assert_uint_eq(sl, 0);
  ck_assert_uint_eq(lines, slines);
  ck_assert_uint_ge(fl, (unsigned long)plain);
  ck_assert_uint_lt(fl, lines);
  free(fast);
  free(slow);
  free(fast_err);
  free(slow_err);
}
END_TEST

/* ---- the eras ----------------------------------------------------------- */

/* The line of |out| answering id |id| (a new string), or NULL. */
static char *answer(const char *out, int id) {
  char key[32];
  snprintf(key, sizeof(key), "\"id\":%d,", id);
  for (const char *p = out; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
    size_t n = strcspn(p, "\n");
    char *line = strndup(p, n);
    if (strstr(line, key)) return line;
    free(line);
  }
  return NULL;
}

#define HAS(line, s) ck_assert_msg((line) && strstr((line), (s)), "no %s in %s", (s), (line))
#define LACKS(line, s) ck_assert_msg((line) && !strstr((line), (s)), "%s in %s", (s), (line))

#define REQ(id, method, params) \
  "{\"jsonrpc\":\"2.0\",\"id\":" #id ",\"method\":\"" method "\",\"params\":" params "}\n"
#define ECHO_ARGS "\"name\":\"echo\",\"arguments\":{\"text\":\"hi\"}"

static const char ERA_INPUT[] = REQ(1, "server/discover", "{" MODERN_META "}") /**/
    REQ(2, "tools/call", "{" ECHO_ARGS "," MODERN_META "}")                    /**/
    REQ(3, "tools/call", "{" ECHO_ARGS "}")                                    /**/
    REQ(4, "tools/list", "{" MODERN_META "}")                                  /**/
    REQ(5, "tools/list",
        "{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}") /**/
    REQ(6, "tools/list",
        "{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2099-01-01\","
        "\"io.modelcontextprotocol/clientCapabilities\":{}}}") /**/
    REQ(7, "ping", "{" MODERN_META "}")                        /**/
    REQ(8, "ping", "{}")                                       /**/
    REQ(9, "initialize",
        "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
        "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}")                                   /**/
    REQ(10, "tools/call", "{\"name\":\"add\",\"arguments\":{\"a\":1,\"b\":2}," MODERN_META "}") /**/
    REQ(11, "tools/list", "{}")                                                                 /**/
    REQ(12, "server/discover", "{}")                                                            /**/
    REQ(13, "tools/call", "{\"name\":\"sleep\",\"arguments\":{\"ms\":0}," MODERN_META "}");

/* What the server answers to modern and legacy requests in each mode. */
START_TEST(eras_on_the_wire) {
  const char *proto = PROTOS[_i];
  bool legacy = proto && strcmp(proto, "legacy") == 0, modern = proto && !strcmp(proto, "modern");
  char path[4096];
  snprintf(path, sizeof(path), "%s/check_demo_era.in.%d", tmpdir(), (int)getpid());
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs(ERA_INPUT, f);
  ck_assert_int_eq(fclose(f), 0);
  char *err = NULL;
  char *out = run_server(path, proto, NULL, &err);
  unlink(path);
  char *a[14] = {NULL};
  for (int i = 1; i <= 13; i++) a[i] = answer(out, i);
  if (legacy) {
    /* Exactly a 2025-11-25 server: no discover, _meta ignored. */
    HAS(a[1], "\"code\":-32601");
    HAS(a[2], "\"text\":\"hi\"");
    LACKS(a[2], "resultType");
    HAS(a[4], "\"tools\":[");
    LACKS(a[4], "resultType");
    HAS(a[5], "\"tools\":[");
    HAS(a[6], "\"tools\":[");
    HAS(a[7], "\"result\":{}");
    HAS(a[9], "\"protocolVersion\":\"2025-06-18\"");
    LACKS(a[10], "resultType");
    HAS(a[12], "\"code\":-32601");
  } else {
    /* discover: versions, capabilities, serverInfo in _meta, cacheable. */
    HAS(a[1], "\"resultType\":\"complete\"");
    HAS(a[1], "\"ttlMs\":");
    HAS(a[1], "\"cacheScope\":\"public\"");
    HAS(a[1], modern ? "\"supportedVersions\":[\"2026-07-28\"]"
                     : "\"supportedVersions\":[\"2026-07-28\",\"2025-11-25\",\"2025-06-18\","
                       "\"2025-03-26\"]");
    HAS(a[1], "\"capabilities\":{\"tools\":");
    HAS(a[1],
        "\"_meta\":{\"io.modelcontextprotocol/serverInfo\":{\"name\":\"mcpconn-demo-server\"");
    HAS(a[2], "\"text\":\"hi\"");
    HAS(a[2], "\"resultType\":\"complete\"");
    HAS(a[4], "\"resultType\":\"complete\"");
    HAS(a[4], "\"cacheScope\":\"public\"");
    HAS(a[4], "\"tools\":[");
    HAS(a[5], "\"code\":-32602"); /* no clientCapabilities */
    HAS(a[6], "\"code\":-32022");
    HAS(a[6], "\"requested\":\"2099-01-01\"");
    HAS(a[6], "\"supported\":[\"2026-07-28\"");
    HAS(a[7], "\"code\":-32601"); /* no ping in 2026-07-28 */
    HAS(a[10], "\"structuredContent\":{\"sum\":3},\"resultType\":\"complete\"");
    HAS(a[12], "\"code\":-32602"); /* discover without _meta */
    HAS(a[13], "\"resultType\":\"complete\"");
  }
  if (modern) {
    /* No legacy request is served. */
    HAS(a[3], "\"code\":-32602");
    HAS(a[8], "\"code\":-32601");
    HAS(a[9], "\"code\":-32022");
    HAS(a[9], "\"requested\":\"2025-06-18\"");
    HAS(a[11], "\"code\":-32602");
  } else {
    /* Legacy requests as today, beside modern ones in dual. */
    HAS(a[3], "\"text\":\"hi\"");
    LACKS(a[3], "resultType");
    HAS(a[8], "\"result\":{}");
    HAS(a[9], "\"protocolVersion\":\"2025-06-18\"");
    HAS(a[9], "\"serverInfo\":{\"name\":\"mcpconn-demo-server\"");
    HAS(a[11], "\"tools\":[");
    LACKS(a[11], "resultType");
  }
  for (int i = 1; i <= 13; i++) free(a[i]);
  free(out);
  free(err);
}
END_TEST

static char *slurp(const char *path) {
  char *t = read_file(path);
  return t ? t : strdup("");
}

static int count_of(const char *s, const char *needle) {
  int n = 0;
  for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle)) n++;
  return n;
}

/* Connects in client mode |mode| to the demo server run with |server_args|
 * behind tests/era/tee-stdin.sh; *sent is every line the client sent. */
static mcp_status connect_demo(const char *mode, const char *const *server_args, mcp_client **c,
                               char **sent, mcp_error *err) {
  char dir[4096], log[4200], mark[4200], tee[4200];
  snprintf(dir, sizeof(dir), "%s/check_demo_era.XXXXXX", tmpdir());
  ck_assert_ptr_nonnull(mkdtemp(dir));
  snprintf(log, sizeof(log), "%s/sent", dir);
  snprintf(mark, sizeof(mark), "%s/starts", dir);
  snprintf(tee, sizeof(tee), "%s/tests/era/tee-stdin.sh", test_env_path("MCP_SRCDIR"));
  const char *argv[12] = {tee, log, mark, test_env_path("MCP_DEMO_SERVER")};
  size_t n = 4;
  for (size_t i = 0; server_args[i] && n < 11; i++) argv[n++] = server_args[i];
  mcp_client_options *o = mcp_client_options_new();
  ck_assert_int_eq(mcp_client_options_set_stdio(o, argv), MCP_OK);
  ck_assert_int_eq(mcp_client_options_set_protocol(o, mode), MCP_OK);
  mcp_client_options_set_timeout_ms(o, 30000);
  *c = NULL;
  mcp_status st = mcp_client_connect(o, c, err);
  mcp_client_options_free(o);
  if (st == MCP_OK) {
    char *out = NULL;
    ck_assert_int_eq(mcp_client_call_tool(*c, "echo", "{\"text\":\"x\"}", NULL, &out, err), MCP_OK);
    ck_assert_ptr_nonnull(strstr(out, "\"x\""));
    mcp_free(out);
    ck_assert_int_eq(mcp_client_ping(*c, NULL, err), MCP_OK);
  }
  mcp_client_free(*c); /* the server has read everything once it exits */
  *c = NULL;
  *sent = slurp(log);
  unlink(log);
  unlink(mark);
  rmdir(dir);
  return st;
}

/* The client's probe against the demo server: modern by default, legacy
 * with --protocol legacy; a modern-only one refuses a legacy client. */
START_TEST(client_verdict) {
  mcp_client *c;
  char *sent;
  mcp_error err = MCP_ERROR_INIT;
  const char *none[] = {NULL}, *legacy[] = {"--protocol", "legacy", NULL},
             *modern[] = {"--protocol", "modern", NULL};

  ck_assert_int_eq(connect_demo("auto", none, &c, &sent, &err), MCP_OK);
  /* One probe, then modern requests only: no initialize, no ping (ping is
   * a server/discover round trip). */
  ck_assert_int_eq(count_of(sent, "\"method\":\"server/discover\""), 2);
  ck_assert_int_eq(count_of(sent, "\"initialize\""), 0);
  ck_assert_int_eq(count_of(sent, "\"ping\""), 0);
  ck_assert_int_eq(count_of(sent, "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\""),
                   count_of(sent, "\n"));
  free(sent);

  ck_assert_int_eq(connect_demo("auto", legacy, &c, &sent, &err), MCP_OK);
  ck_assert_int_eq(count_of(sent, "\"method\":\"server/discover\""), 1);
  ck_assert_int_eq(count_of(sent, "\"method\":\"initialize\""), 1);
  ck_assert_int_eq(count_of(sent, "\"method\":\"ping\""), 1);
  free(sent);

  ck_assert_int_eq(connect_demo("modern", modern, &c, &sent, &err), MCP_OK);
  free(sent);
  ck_assert_int_eq(connect_demo("legacy", none, &c, &sent, &err), MCP_OK);
  ck_assert_int_eq(count_of(sent, "server/discover"), 0);
  free(sent);

  ck_assert_int_ne(connect_demo("legacy", modern, &c, &sent, &err), MCP_OK);
  ck_assert_msg(err.message && strstr(err.message, "2026-07-28"), "%s", err.message);
  mcp_error_clear(&err);
  free(sent);
}
END_TEST

/* The negotiated version, as the host sees it. */
START_TEST(client_versions) {
  const char *const modes[] = {"auto", "auto", "legacy", "2025-06-18", "modern"};
  const char *const flags[] = {NULL, "legacy", NULL, NULL, "dual"};
  const char *const want[] = {"2026-07-28", "2025-11-25", "2025-11-25", "2025-06-18", "2026-07-28"};
  for (int i = 0; i < 5; i++) {
    const char *argv[4] = {test_env_path("MCP_DEMO_SERVER"), NULL, NULL, NULL};
    if (flags[i]) {
      argv[1] = "--protocol";
      argv[2] = flags[i];
    }
    mcp_client_options *o = mcp_client_options_new();
    ck_assert_int_eq(mcp_client_options_set_stdio(o, argv), MCP_OK);
    ck_assert_int_eq(mcp_client_options_set_protocol(o, modes[i]), MCP_OK);
    mcp_client *c = NULL;
    mcp_error err = MCP_ERROR_INIT;
    ck_assert_int_eq(mcp_client_connect(o, &c, &err), MCP_OK);
    ck_assert_str_eq(mcp_client_protocol_version(c), want[i]);
    mcp_client_free(c);
    mcp_client_options_free(o);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("demo_fast");
  TCase *tc = tcase_create("diff");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, fast_path_answers_as_json_c, 0, 4);
  suite_add_tcase(s, tc);
  TCase *era = tcase_create("era");
  tcase_set_timeout(era, 120);
  tcase_add_loop_test(era, eras_on_the_wire, 0, 4);
  tcase_add_test(era, client_verdict);
  tcase_add_test(era, client_versions);
  suite_add_tcase(s, era);
  return run_suite(s);
}
