/* SPDX-License-Identifier: MIT */
/*
 * check_util.h: small helpers shared by the Check suites: a standard main(),
 * environment lookups for peer programs, and waiting on a condition with a
 * deadline (tests never sleep to synchronise).
 */
#ifndef CHECK_UTIL_H
#define CHECK_UTIL_H

#include <check.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mcpconn.h"

/* Path of a peer program given by the test environment (see Makefile.am). */
static inline const char *test_env_path(const char *var) {
  const char *p = getenv(var);
  if (!p || !*p) {
    fprintf(stderr, "%s is not set: run the tests with make check\n", var);
    abort();
  }
  return p;
}

static inline int test_under_valgrind(void) {
  const char *v = getenv("MCP_UNDER_VALGRIND");
  return v && *v == '1';
}

static inline long long test_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Polls |cond| (a side-effect-free expression) every 1 ms until true or
 * |ms| elapsed.  For observing effects outside our process (a child's exit,
 * a file appearing) that no condition variable can signal. */
#define WAIT_UNTIL(cond, ms) \
  ({ \
    long long wu_end_ = test_now_ms() + (ms); \
    int wu_ok_ = 0; \
    for (;;) { \
      if (cond) { \
        wu_ok_ = 1; \
        break; \
      } \
      if (test_now_ms() > wu_end_) break; \
      struct timespec wu_ts_ = {0, 1000000}; \
      nanosleep(&wu_ts_, NULL); \
    } \
    wu_ok_; \
  })

/* Runs one suite; returns the process exit status. */
static inline int run_suite(Suite *s) {
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* Manager options with |n| servers "s0".."s<n-1>", each with client options
 * |co|; no discovery, no cache, no start gate (many-server tests). */
static inline mcp_manager_options *test_many_servers(const mcp_client_options *co, int n) {
  mcp_manager_options *o = mcp_manager_options_new();
  ck_assert_ptr_nonnull(o);
  mcp_manager_options_set_discovery(o, false, false);
  mcp_manager_options_set_cache_dir(o, NULL);
  mcp_manager_options_set_startup_gate_ms(o, 0);
  for (int i = 0; i < n; i++) {
    char name[16];
    snprintf(name, sizeof(name), "s%d", i);
    ck_assert_int_eq(mcp_manager_options_add_server(o, name, co), MCP_OK);
  }
  return o;
}

/* Asserts that |m|'s current tool list has tools of every server "s<i>",
 * i < n (test_many_servers()). */
static inline void test_assert_every_server_listed(mcp_manager *m, int n) {
  mcp_tool_list *l = mcp_manager_tools(m);
  char *seen = calloc((size_t)n, 1);
  ck_assert_ptr_nonnull(seen);
  for (size_t i = 0; i < mcp_tool_list_count(l); i++) {
    const char *sv = mcp_tool_list_server(l, i);
    ck_assert(sv[0] == 's');
    seen[atoi(sv + 1)] = 1;
  }
  for (int i = 0; i < n; i++) ck_assert_msg(seen[i], "no tools of server s%d", i);
  free(seen);
  mcp_tool_list_unref(l);
}

/* What a call's progress callback was given (test_on_progress): the
 * reports, whether they increased, the last total and message; |fire|,
 * when set, is fired at the first report (a cancel once the tool runs). */
typedef struct test_progress_rec {
  pthread_mutex_t mu;
  int n;
  bool increasing;
  double last, total;
  char message[128];
  mcp_cancel *fire;
} test_progress_rec;
#define TEST_PROGRESS_INIT \
  { .mu = PTHREAD_MUTEX_INITIALIZER, .increasing = true }

static inline void test_on_progress(void *user, double progress, double total,
                                    const char *message) {
  test_progress_rec *p = user;
  pthread_mutex_lock(&p->mu);
  if (p->n && progress <= p->last) p->increasing = false;
  p->n++;
  p->last = progress;
  p->total = total;
  snprintf(p->message, sizeof(p->message), "%s", message ? message : "");
  pthread_mutex_unlock(&p->mu);
  if (p->fire) mcp_cancel_fire(p->fire);
}

static inline int test_progress_count(test_progress_rec *p) {
  pthread_mutex_lock(&p->mu);
  int n = p->n;
  pthread_mutex_unlock(&p->mu);
  return n;
}

/* An async call's outcome: pass test_on_async and &a as its callback and
 * user, wait with WAIT_UNTIL(test_async_done(&a), ms), then read st,
 * result and message (copies, NULL when the call gave none) and free them
 * with test_async_clear(&a). */
typedef struct test_async {
  pthread_mutex_t mu;
  bool done;
  mcp_status st;
  char *result;
  char *message; /* the error's message */
} test_async;
#define TEST_ASYNC_INIT \
  { .mu = PTHREAD_MUTEX_INITIALIZER }

static inline void test_on_async(void *user, mcp_status st, const char *result,
                                 const mcp_error *err) {
  test_async *a = user;
  pthread_mutex_lock(&a->mu);
  a->st = st;
  a->result = result ? strdup(result) : NULL;
  a->message = err && err->message ? strdup(err->message) : NULL;
  a->done = true;
  pthread_mutex_unlock(&a->mu);
}

static inline bool test_async_done(test_async *a) {
  pthread_mutex_lock(&a->mu);
  bool d = a->done;
  pthread_mutex_unlock(&a->mu);
  return d;
}

static inline void test_async_clear(test_async *a) {
  free(a->result);
  free(a->message);
  a->result = a->message = NULL;
}

/* Lines of file |path| that contain |needle| (0: no such file). */
static inline int test_count_in_file(const char *path, const char *needle) {
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  char line[512];
  int n = 0;
  while (fgets(line, sizeof(line), f))
    if (strstr(line, needle)) n++;
  fclose(f);
  return n;
}

/* Calls the SDK servers' tool "steps" (tests/interop/v2-dual-*.mjs) on
 * |c|: three progress reports reach the callback, in order, with the
 * total and message; then "steps" with hold, cancelled at its first
 * report: MCP_ECANCELLED, and the server's handler saw the abort
 * (|abort_log| gets "aborted"); the client then serves the next call. */
static inline void test_progress_and_cancel(mcp_client *c, const char *abort_log) {
  test_progress_rec p = TEST_PROGRESS_INIT;
  mcp_call_options *o = mcp_call_options_new();
  mcp_call_options_set_progress(o, test_on_progress, &p);
  char *out = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_client_call_tool(c, "steps", "{\"n\":3}", o, &out, &err);
  ck_assert_msg(st == MCP_OK, "steps: %s", err.message ? err.message : mcp_strerror(st));
  ck_assert_msg(strstr(out, "stepped 3"), "%s", out);
  mcp_free(out);
  /* The reports run on the host's callback lane: they may trail the
   * answer a little. */
  ck_assert_msg(WAIT_UNTIL(test_progress_count(&p) >= 3, 20000), "%d progress reports",
                test_progress_count(&p));
  pthread_mutex_lock(&p.mu);
  test_progress_rec seen = p;
  pthread_mutex_unlock(&p.mu);
  ck_assert_int_eq(seen.n, 3);
  ck_assert(seen.increasing);
  ck_assert(seen.last == 3 && seen.total == 3);
  ck_assert_str_eq(seen.message, "step 3");
  mcp_call_options_free(o);

  test_progress_rec q = TEST_PROGRESS_INIT;
  q.fire = mcp_cancel_new();
  o = mcp_call_options_new();
  mcp_call_options_set_progress(o, test_on_progress, &q);
  mcp_call_options_set_cancel(o, q.fire);
  st = mcp_client_call_tool(c, "steps", "{\"n\":1,\"hold\":true}", o, &out, &err);
  ck_assert_msg(st == MCP_ECANCELLED, "held steps: %s (%s)", mcp_strerror(st),
                err.message ? err.message : "");
  mcp_error_clear(&err);
  mcp_free(out);
  ck_assert_msg(WAIT_UNTIL(test_count_in_file(abort_log, "aborted") == 1, 20000),
                "the server's handler was not aborted");
  mcp_call_options_free(o);
  mcp_cancel_unref(q.fire);
  st = mcp_client_call_tool(c, "echo", "{\"text\":\"after\"}", NULL, &out, &err);
  ck_assert_msg(st == MCP_OK && strstr(out, "after"), "after: %s", err.message ? err.message : "");
  mcp_free(out);
}

#endif /* CHECK_UTIL_H */
