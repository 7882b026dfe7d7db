/* SPDX-License-Identifier: MIT */
/*
 * check_util.h: small helpers shared by the Check suites: a standard main(),
 * environment lookups for peer programs, and waiting on a condition with a
 * deadline (tests never sleep to synchronise).
 */
#ifndef CHECK_UTIL_H
#define CHECK_UTIL_H

#include <check.h>
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

#endif /* CHECK_UTIL_H */
