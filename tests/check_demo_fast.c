/*
 * check_demo_fast.c: the demo server's fast path (fast_echo() in
 * bin/mcpconn-demo-server.c, which answers plain echo calls from a scan of
 * the line instead of a json-c tree) must answer exactly what the general
 * path answers.  Runs the server twice over the same input, once with
 * --no-fast-path, and compares the two outputs byte for byte: hand-written
 * edge cases, thousands of generated requests (member order, white space,
 * extra members, escapes, ids of every kind, other tools and methods), and
 * byte-level mutations of them (truncation, flipped, inserted and deleted
 * bytes).  It also checks that the fast path did answer most of the plain
 * requests, so the comparison is not vacuous.
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
static const char *const EXTRAS[] = {"\"_meta\":{\"progressToken\":7}",
                                     "\"x\":[1,2.5,-3,true,false,null,{\"a\":[]}]",
                                     "\"y\":\"esc\\\\aped\\n\"",
                                     "\"z\":1e5",
                                     "\"w\":\"\\ud83d\\ude00\"",
                                     "\"deep\":[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]",
                                     "\"n\":-0.25",
                                     "\"e\\u0078tra\":1",
                                     "\"big\":12345678901234567890123"};

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
    const char *e = EXTRAS[pick(9)];
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
        const char *e = EXTRAS[pick(9)];
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

/* Runs the demo server with |flag| (or none) on |in|; returns its stdout. */
static char *run_server(const char *in_path, const char *flag, char **err_out) {
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
    if (flag) execl(server, server, flag, (char *)NULL);
    else execl(server, server, (char *)NULL);
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

START_TEST(fast_path_answers_as_json_c) {
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
  /* Plain requests as the benchmarks send them: these must take the fast
   * path. */
  for (int i = 0; i < n / 4; i++, plain++)
    fprintf(f,
            "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":"
            "\"echo\",\"arguments\":{\"text\":\"%d:xxxxxxxx\"}}}\n",
            i, i);
  ck_assert_int_eq(fclose(f), 0);

  char *fast_err = NULL, *slow_err = NULL;
  char *fast = run_server(path, NULL, &fast_err);
  char *slow = run_server(path, "--no-fast-path", &slow_err);
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

int main(void) {
  Suite *s = suite_create("demo_fast");
  TCase *tc = tcase_create("diff");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, fast_path_answers_as_json_c);
  suite_add_tcase(s, tc);
  return run_suite(s);
}
