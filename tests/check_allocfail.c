/*
 * check_allocfail.c: allocation-failure sweeps through a whole client
 * session.  For N = 1, 2, ... the N-th allocation call of the process
 * (every thread, every library: ours, json-c, OpenSSL, nghttp2, libc) fails
 * while mcp_client_connect() runs initialize against a real server, one
 * tools/call is made and the client is freed.  Every run must end with
 * MCP_OK or MCP_ENOMEM (with a message), never a crash, a hang or another
 * status; the sweep ends at the first N the run no longer reaches.  Leaks
 * are found by the ASan (LeakSanitizer) build of this suite.
 *
 * Servers: bin/mcpconn-demo-server over stdio, and the MCP route of
 * tests/mcp-h2-test-server over h2c (prior knowledge) and over TLS (h2 by
 * ALPN).  The malloc interposer is tests/alloc_shim.h.
 */
#include "config.h"

#include <check.h>
#include <execinfo.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alloc_shim.h"
#include "check_util.h"
#include "mcpconn.h"

/* A run that hangs fails on this timeout instead of blocking the suite. */
#define RUN_TIMEOUT_MS 30000
/* More allocations than any run makes; reaching it fails the test. */
#define MAX_N 200000

typedef struct run_result {
  mcp_status connect_st, call_st;
  char msg[256];
} run_result;

/*
 * Allocations that are not ours to fail, exempt (the next call fails
 * instead) when one of these functions is on the stack:
 *  - json_tokener_parse_ex: json-c before 0.17 crashes when an allocation
 *    inside its tokener fails (it strdup()s an object key and uses the
 *    result unchecked); 0.17 added json_tokener_error_memory.
 *  - pthread_getattr_np (and pthread_attr_*, which it calls): the ASan and
 *    TSan runtimes call it as every new thread starts and abort when it
 *    cannot allocate.  Judged from the direct caller alone, without
 *    unwinding: that thread is not set up for the sanitizer yet.
 * and when a frame belongs to a sanitizer runtime (lib[a|t|ub]san: its own
 * work, or the real function behind one of its interceptors).
 */
static const char *const exempt_fns[] = {
#if JSON_C_VERSION_NUM < ((0 << 16) | (17 << 8))
    "json_tokener_parse_ex",
#endif
    "pthread_getattr_np",
};

static void *exe_base; /* where this program is loaded */

SHIM_NOSAN static bool exempt_caller(void *caller) {
  Dl_info ci;
  if (dladdr(caller, &ci) && ci.dli_sname &&
      (strstr(ci.dli_sname, "pthread_getattr_np") ||
       strstr(ci.dli_sname, "pthread_attr_")))
    return true;
  void *frames[64];
  int n = backtrace(frames, 64);
  bool in_shim = false;
  for (int i = 0; i < n; i++) {
    Dl_info info;
    if (!dladdr(frames[i], &info)) continue;
    /* Skip backtrace() itself (a sanitizer intercepts it) up to the
     * shim's frames in this program. */
    if (!in_shim) {
      in_shim = info.dli_fbase == exe_base;
      continue;
    }
    const char *obj = info.dli_fname ? strrchr(info.dli_fname, '/') : NULL;
    obj = obj ? obj + 1 : info.dli_fname;
    if (obj && (strncmp(obj, "libasan", 7) == 0 ||
                strncmp(obj, "libtsan", 7) == 0 ||
                strncmp(obj, "libubsan", 8) == 0))
      return true;
    if (!info.dli_sname) continue;
    for (size_t k = 0; k < sizeof(exempt_fns) / sizeof(exempt_fns[0]); k++)
      if (strstr(info.dli_sname, exempt_fns[k])) return true;
  }
  return false;
}

static void exempt_setup(void) {
  Dl_info self;
  ck_assert(dladdr((void *)exempt_setup, &self) != 0);
  exe_base = self.dli_fbase;
  void *warm[4];
  (void)backtrace(warm, 4); /* loads the unwinder now, not while armed */
  alloc_shim_set_exempt(exempt_caller);
}

static void copy_msg(run_result *r, const mcp_error *e) {
  snprintf(r->msg, sizeof(r->msg), "%s", e->message ? e->message : "(none)");
}

/* One session with allocation |n| failing (0: none).  |o| is built before
 * arming; everything from connect to free runs armed. */
static bool run_once(const mcp_client_options *o, long n, run_result *r) {
  mcp_error err = MCP_ERROR_INIT;
  mcp_client *c = NULL;
  char *result = NULL;
  r->call_st = MCP_OK;
  r->msg[0] = '\0';
  if (n > 0) alloc_shim_arm(n);
  r->connect_st = mcp_client_connect(o, &c, &err);
  if (r->connect_st == MCP_OK) {
    r->call_st = mcp_client_call_tool(c, "echo", "{\"text\":\"hello\"}", NULL,
                                      &result, &err);
    if (r->call_st != MCP_OK) copy_msg(r, &err);
    else if (!result || !strstr(result, "hello"))
      snprintf(r->msg, sizeof(r->msg), "bad result: %s",
               result ? result : "NULL");
    mcp_free(result);
    mcp_client_free(c);
  } else {
    copy_msg(r, &err);
    if (c) snprintf(r->msg, sizeof(r->msg), "connect failed but set *out");
  }
  bool hit = n > 0 ? alloc_shim_disarm() : false;
  mcp_error_clear(&err);
  return hit;
}

static bool status_ok(mcp_status st, const char *msg) {
  return st == MCP_OK || (st == MCP_ENOMEM && msg[0] != '\0');
}

/* Sweeps N from 1 until a run completes without reaching its N-th
 * allocation.  Returns the number of runs. */
static long sweep(const mcp_client_options *o, const char *what) {
  run_result r;
  exempt_setup();
  /* A clean run first: it must work, and it makes one-time
   * initialisation (OpenSSL, thread keys) happen outside the sweep. */
  run_once(o, 0, &r);
  ck_assert_msg(r.connect_st == MCP_OK && r.call_st == MCP_OK && !r.msg[0],
                "%s: clean run: connect %d call %d: %s", what, r.connect_st,
                r.call_st, r.msg);
  alloc_shim_arm(MAX_N * 100);
  run_once(o, 0, &r);
  alloc_shim_disarm();
  fprintf(stderr, "%s: a clean run makes %ld allocation calls\n", what,
          alloc_shim_count());
  long n;
  long enomem = 0;
  /* MCP_ALLOCFAIL_N=K runs only N=K (to debug one failure). */
  const char *only = getenv("MCP_ALLOCFAIL_N");
  long first = only ? atol(only) : 1;
  for (n = first; n < MAX_N; n++) {
    bool hit = run_once(o, n, &r);
    ck_assert_msg(status_ok(r.connect_st, r.msg),
                  "%s: N=%ld: connect returned %d (%s): %s", what, n,
                  r.connect_st, mcp_strerror(r.connect_st), r.msg);
    ck_assert_msg(status_ok(r.call_st, r.msg),
                  "%s: N=%ld: tools/call returned %d (%s): %s", what, n,
                  r.call_st, mcp_strerror(r.call_st), r.msg);
    if (r.connect_st == MCP_OK && r.call_st == MCP_OK)
      ck_assert_msg(!r.msg[0], "%s: N=%ld: %s", what, n, r.msg);
    if (r.connect_st == MCP_ENOMEM || r.call_st == MCP_ENOMEM) enomem++;
    if (!hit || only) break;
  }
  ck_assert_msg(n < MAX_N, "%s: the sweep did not end", what);
  fprintf(stderr, "%s: %ld runs, %ld ended with MCP_ENOMEM\n", what, n,
          enomem);
  return n;
}

static mcp_client_options *base_options(void) {
  mcp_client_options *o = mcp_client_options_new();
  ck_assert_ptr_nonnull(o);
  mcp_client_options_set_timeout_ms(o, RUN_TIMEOUT_MS);
  return o;
}

/* ---- stdio ---------------------------------------------------------------------- */

START_TEST(test_stdio_sweep) {
  mcp_client_options *o = base_options();
  const char *argv[] = {test_env_path("MCP_DEMO_SERVER"), NULL};
  ck_assert_int_eq(mcp_client_options_set_stdio(o, argv), MCP_OK);
  long n = sweep(o, "stdio");
  if (!getenv("MCP_ALLOCFAIL_N")) ck_assert_int_gt(n, 50);
  mcp_client_options_free(o);
}
END_TEST

/* The shim itself: the N-th call fails, only while armed, from any
 * allocation function, and libc's own allocations go through it. */
START_TEST(test_shim_counts) {
  alloc_shim_arm(2);
  void *a = malloc(8);
  void *b = calloc(1, 8);
  char *c = strdup("x"); /* with ASan/TSan: their own allocator, uncounted */
  bool hit = alloc_shim_disarm();
  ck_assert_ptr_nonnull(a);
  ck_assert_ptr_null(b);
  ck_assert(hit);
  ck_assert_int_ge(alloc_shim_count(), 2);
  free(a);
  free(c);
  void *d = malloc(8); /* disarmed: never fails, not counted */
  ck_assert_ptr_nonnull(d);
  free(d);
  alloc_shim_arm(1);
  void *e = realloc(NULL, 16);
  ck_assert(alloc_shim_disarm());
  ck_assert_ptr_null(e);
}
END_TEST

static Suite *allocfail_suite(void) {
  Suite *s = suite_create("allocfail");
  TCase *tc = tcase_create("shim");
  tcase_add_test(tc, test_shim_counts);
  suite_add_tcase(s, tc);
  tc = tcase_create("sweep");
  tcase_set_timeout(tc, 1800);
  tcase_add_test(tc, test_stdio_sweep);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  signal(SIGPIPE, SIG_IGN);
  return run_suite(allocfail_suite());
}
