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

#endif /* CHECK_UTIL_H */
