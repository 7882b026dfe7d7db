/* SPDX-License-Identifier: MIT */
/*
 * fuzz_common.h: helpers shared by the libFuzzer targets in fuzz/: the
 * entry point's prototype, a byte log that records what a parser reported
 * (so two ways of feeding the same input can be compared), a check that
 * aborts, and a small deterministic generator for feed cuts.
 *
 * The harness itself uses plain malloc, never mcp__malloc, so that
 * mcp__alloc_fail_after() only ever fails the library's allocations.
 */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond) \
  do { \
    if (!(cond)) { \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      abort(); \
    } \
  } while (0)

/* An append-only byte log. */
typedef struct flog {
  char *p;
  size_t n, cap;
} flog;

static inline void flog_add(flog *l, const void *d, size_t n) {
  if (l->n + n + 1 > l->cap) {
    size_t cap = l->cap ? l->cap : 256;
    while (cap < l->n + n + 1) cap *= 2;
    char *p = realloc(l->p, cap);
    FUZZ_CHECK(p != NULL);
    l->p = p;
    l->cap = cap;
  }
  if (n) memcpy(l->p + l->n, d, n);
  l->n += n;
  l->p[l->n] = '\0';
}

static inline void flog_str(flog *l, const char *s) {
  flog_add(l, s, strlen(s) + 1); /* with its NUL, as a separator */
}

static inline void flog_u64(flog *l, uint64_t v) { flog_add(l, &v, sizeof(v)); }

static inline int flog_eq(const flog *a, const flog *b) {
  return a->n == b->n && (a->n == 0 || memcmp(a->p, b->p, a->n) == 0);
}

static inline void flog_free(flog *l) {
  free(l->p);
  memset(l, 0, sizeof(*l));
}

/* xorshift32; |*s| must not be 0. */
static inline uint32_t fuzz_rand(uint32_t *s) {
  uint32_t x = *s;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  return *s = x;
}

/* The length of the next piece when cutting input at pseudo-random places:
 * 1..|maxpiece| bytes, never past |left|. */
static inline size_t fuzz_piece(uint32_t *s, size_t left, size_t maxpiece) {
  size_t k = 1 + fuzz_rand(s) % maxpiece;
  return k < left ? k : left;
}

#endif /* FUZZ_COMMON_H */
