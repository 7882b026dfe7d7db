/* SPDX-License-Identifier: MIT */
/*
 * check_jsonl.c: the JSONL framer.  Every split of the input must give the
 * same lines; CRLF, empty lines, oversize lines, bounded memory, stopping
 * from on_line and allocation failure.  A small reference model (split the
 * whole input at once) checks random inputs under random cuts.
 */
#include "config.h"

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "mcp_jsonl.h"

/* ---- event recorder --------------------------------------------------------- */

/* What the framer reported, in order: "L<line>" or "O<length>". */
typedef struct events {
  char **ev;
  size_t n, cap;
  int stop_at; /* on_line returns non-zero for the line with this index; -1: never */
  size_t lines;
  int bad_nul; /* a line was not NUL-terminated */
} events;

static void ev_push(events *e, char *s) {
  if (e->n == e->cap) {
    e->cap = e->cap ? e->cap * 2 : 16;
    e->ev = realloc(e->ev, e->cap * sizeof(char *));
    ck_assert_ptr_nonnull(e->ev);
  }
  e->ev[e->n++] = s;
}

static int rec_line(void *user, const char *data, size_t len) {
  events *e = user;
  if (data[len] != '\0') e->bad_nul = 1;
  char *s = malloc(len + 2);
  ck_assert_ptr_nonnull(s);
  s[0] = 'L';
  memcpy(s + 1, data, len);
  s[len + 1] = '\0';
  ev_push(e, s);
  size_t idx = e->lines++;
  return e->stop_at >= 0 && (size_t)e->stop_at == idx;
}

static void rec_oversize(void *user, size_t len) {
  events *e = user;
  char *s = malloc(32);
  ck_assert_ptr_nonnull(s);
  snprintf(s, 32, "O%zu", len);
  ev_push(e, s);
}

static const mcp_jsonl_callbacks rec_cb = {rec_line, rec_oversize, NULL};

static void ev_init(events *e) {
  memset(e, 0, sizeof(*e));
  e->stop_at = -1;
}

static void ev_free(events *e) {
  for (size_t i = 0; i < e->n; i++) free(e->ev[i]);
  free(e->ev);
  memset(e, 0, sizeof(*e));
}

static void ev_expect(const events *e, const char *const *want, size_t nwant) {
  ck_assert_int_eq(e->bad_nul, 0);
  ck_assert_uint_eq(e->n, nwant);
  for (size_t i = 0; i < nwant; i++) ck_assert_str_eq(e->ev[i], want[i]);
}

static void ev_expect_same(const events *a, const events *b) {
  ck_assert_uint_eq(a->n, b->n);
  for (size_t i = 0; i < a->n; i++) ck_assert_str_eq(a->ev[i], b->ev[i]);
}

/*
 * Feeds |in| in pieces ending at |cuts| (increasing, each in (0, n)) and
 * returns the events.  Checks the memory bound after every feed.
 */
static void feed_cuts(size_t max_line, const char *in, size_t n, const size_t *cuts, size_t ncuts,
                      events *out) {
  ev_init(out);
  mcp_jsonl *j = mcp__jsonl_new(max_line, &rec_cb, out);
  ck_assert_ptr_nonnull(j);
  size_t at = 0;
  for (size_t i = 0; i <= ncuts; i++) {
    size_t to = i < ncuts ? cuts[i] : n;
    ck_assert_int_eq(mcp__jsonl_feed(j, in + at, to - at), MCP_OK);
    ck_assert_uint_le(mcp__jsonl_pending(j), max_line);
    at = to;
  }
  mcp__jsonl_free(j);
}

/*
 * The reference: split the whole input at "\n", strip one "\r", skip empty
 * lines, report lines over |max_line| as oversize; the unterminated tail is
 * not reported.
 */
static void reference(size_t max_line, const char *in, size_t n, events *out) {
  ev_init(out);
  size_t start = 0;
  for (size_t i = 0; i < n; i++) {
    if (in[i] != '\n') continue;
    size_t len = i - start;
    if (len && in[i - 1] == '\r') len--;
    if (len > max_line) {
      rec_oversize(out, len);
    } else if (len) {
      char *tmp = malloc(len + 1);
      memcpy(tmp, in + start, len);
      tmp[len] = '\0';
      rec_line(out, tmp, len);
      free(tmp);
    }
    start = i + 1;
  }
}

/* ---- tests ----------------------------------------------------------------------- */

static const char sample[] = "{\"id\":1}\n"
                             "\n"
                             "{\"a\":\"b\"}\r\n"
                             "   \n"
                             "\r\n"
                             "x\ry\n"
                             "0123456789abcdef\n"  /* exactly 16: the cap used below */
                             "0123456789abcdefg\n" /* 17: oversize */
                             "0123456789abcdef\r\n"
                             "0123456789abcdef\rX\n"
                             "last\n"
                             "unterminated";
static const char *const sample_want[] = {
    "L{\"id\":1}", "L{\"a\":\"b\"}",    "L   ", "Lx\ry", "L0123456789abcdef",
    "O17",         "L0123456789abcdef", "O18",  "Llast",
};
#define SAMPLE_MAX 16
#define NWANT (sizeof(sample_want) / sizeof(sample_want[0]))

START_TEST(test_all_at_once) {
  events e;
  feed_cuts(SAMPLE_MAX, sample, sizeof(sample) - 1, NULL, 0, &e);
  ev_expect(&e, sample_want, NWANT);
  ev_free(&e);
}
END_TEST

START_TEST(test_byte_by_byte) {
  size_t n = sizeof(sample) - 1;
  size_t *cuts = malloc(n * sizeof(size_t));
  for (size_t i = 1; i < n; i++) cuts[i - 1] = i;
  events e;
  feed_cuts(SAMPLE_MAX, sample, n, cuts, n - 1, &e);
  ev_expect(&e, sample_want, NWANT);
  ev_free(&e);
  free(cuts);
}
END_TEST

START_TEST(test_every_cut_point) {
  size_t n = sizeof(sample) - 1;
  for (size_t a = 1; a < n; a++) {
    events e;
    feed_cuts(SAMPLE_MAX, sample, n, &a, 1, &e);
    ev_expect(&e, sample_want, NWANT);
    ev_free(&e);
    /* And every second cut after it: all three-piece splits. */
    for (size_t b = a + 1; b < n; b++) {
      size_t cuts[2] = {a, b};
      feed_cuts(SAMPLE_MAX, sample, n, cuts, 2, &e);
      ev_expect(&e, sample_want, NWANT);
      ev_free(&e);
    }
  }
}
END_TEST

/* Cuts |n| bytes at random points; returns the number of cuts. */
static size_t random_cuts(unsigned *seed, size_t n, size_t *cuts, size_t max) {
  size_t k = 0, at = 0;
  while (k < max) {
    at += 1 + (size_t)rand_r(seed) % 40;
    if (at >= n) break;
    cuts[k++] = at;
  }
  return k;
}

START_TEST(test_random_cuts) {
  unsigned seed = 12345;
  size_t n = sizeof(sample) - 1;
  size_t cuts[512];
  for (int iter = 0; iter < 2000; iter++) {
    size_t k = random_cuts(&seed, n, cuts, 512);
    events e;
    feed_cuts(SAMPLE_MAX, sample, n, cuts, k, &e);
    ev_expect(&e, sample_want, NWANT);
    ev_free(&e);
  }
}
END_TEST

/* Random inputs over a small alphabet, random caps, random cuts, checked
 * against the reference. */
START_TEST(test_random_against_reference) {
  static const char alphabet[] = "ab\r\n \n{}";
  unsigned seed = 777;
  size_t cuts[1024];
  int iters = test_under_valgrind() ? 300 : 3000;
  for (int iter = 0; iter < iters; iter++) {
    size_t n = 1 + (size_t)rand_r(&seed) % 600;
    char *in = malloc(n);
    for (size_t i = 0; i < n; i++) in[i] = alphabet[(size_t)rand_r(&seed) % (sizeof(alphabet) - 1)];
    size_t max_line = 1 + (size_t)rand_r(&seed) % 12;
    events want, got;
    reference(max_line, in, n, &want);
    size_t k = random_cuts(&seed, n, cuts, 1024);
    feed_cuts(max_line, in, n, cuts, k, &got);
    ev_expect_same(&got, &want);
    ev_free(&got);
    feed_cuts(max_line, in, n, NULL, 0, &got);
    ev_expect_same(&got, &want);
    ev_free(&got);
    ev_free(&want);
    free(in);
  }
}
END_TEST

START_TEST(test_crlf) {
  static const char in[] = "a\r\nbc\r\n\r\n\r\r\nd\r";
  static const char *const want[] = {"La", "Lbc", "L\r"};
  events e;
  feed_cuts(100, in, sizeof(in) - 1, NULL, 0, &e);
  ev_expect(&e, want, 3);
  ev_free(&e);
}
END_TEST

START_TEST(test_empty_lines) {
  static const char in[] = "\n\n\r\n\nabc\n\n\n";
  static const char *const want[] = {"Labc"};
  events e;
  feed_cuts(100, in, sizeof(in) - 1, NULL, 0, &e);
  ev_expect(&e, want, 1);
  ev_free(&e);
}
END_TEST

START_TEST(test_oversize_then_more) {
  /* A 5000-byte line with a cap of 1000, fed in 7-byte pieces, then lines
   * that must still arrive. */
  size_t n = 5000 + 1 + 6 + 5;
  char *in = malloc(n);
  memset(in, 'x', 5000);
  memcpy(in + 5000, "\n{\"a\"}\nnext\n", 12);
  n = 5000 + 12;
  events e;
  ev_init(&e);
  mcp_jsonl *j = mcp__jsonl_new(1000, &rec_cb, &e);
  ck_assert_ptr_nonnull(j);
  for (size_t at = 0; at < n; at += 7) {
    size_t k = n - at < 7 ? n - at : 7;
    ck_assert_int_eq(mcp__jsonl_feed(j, in + at, k), MCP_OK);
    ck_assert_uint_le(mcp__jsonl_pending(j), 1000);
  }
  static const char *const want[] = {"O5000", "L{\"a\"}", "Lnext"};
  ev_expect(&e, want, 3);
  mcp__jsonl_free(j);
  ev_free(&e);
  free(in);
}
END_TEST

START_TEST(test_exact_cap_with_cr) {
  /* max_line bytes then "\r\n" fits; the "\r" must not count.  Every
   * split, because the "\r" may arrive alone at a full buffer. */
  static const char in[] = "abcd\r\nabcd\rx\nabcde\r\nab\r\n";
  static const char *const want[] = {"Labcd", "O6", "O5", "Lab"};
  size_t n = sizeof(in) - 1;
  for (size_t a = 0; a < n; a++) {
    for (size_t b = a; b < n; b++) {
      size_t cuts[2] = {a, b};
      size_t k = 0;
      size_t use[2];
      if (a > 0) use[k++] = cuts[0];
      if (b > a) use[k++] = cuts[1];
      events e;
      feed_cuts(4, in, n, use, k, &e);
      ev_expect(&e, want, 4);
      ev_free(&e);
    }
  }
}
END_TEST

START_TEST(test_memory_bounded) {
  /* 10 MB without a newline against a 1 KiB cap: nothing is kept. */
  size_t chunk = 65536, total = 10 * 1024 * 1024;
  char *buf = malloc(chunk);
  memset(buf, 'z', chunk);
  events e;
  ev_init(&e);
  mcp_jsonl *j = mcp__jsonl_new(1024, &rec_cb, &e);
  ck_assert_ptr_nonnull(j);
  ck_assert_uint_eq(mcp__jsonl_pending(j), 0);
  ck_assert_int_eq(mcp__jsonl_feed(j, "{\"partial\":", 11), MCP_OK);
  ck_assert_uint_eq(mcp__jsonl_pending(j), 11);
  size_t fed = 11;
  while (fed < total) {
    ck_assert_int_eq(mcp__jsonl_feed(j, buf, chunk), MCP_OK);
    fed += chunk;
    ck_assert_uint_le(mcp__jsonl_pending(j), 1024);
    ck_assert_uint_eq(mcp__jsonl_pending(j), 0); /* skipping */
  }
  ck_assert_int_eq(mcp__jsonl_feed(j, "\r\nok\n", 5), MCP_OK);
  char want0[32];
  snprintf(want0, sizeof(want0), "O%zu", fed);
  const char *want[] = {want0, "Lok"};
  ev_expect(&e, want, 2);
  mcp__jsonl_free(j);
  ev_free(&e);
  free(buf);
}
END_TEST

START_TEST(test_default_cap) {
  /* max_line 0 means 16 MiB: a 1 MiB line passes. */
  size_t n = 1024 * 1024;
  char *in = malloc(n + 1);
  memset(in, 'q', n);
  in[n] = '\n';
  events e;
  ev_init(&e);
  mcp_jsonl *j = mcp__jsonl_new(0, &rec_cb, &e);
  ck_assert_ptr_nonnull(j);
  ck_assert_int_eq(mcp__jsonl_feed(j, in, n + 1), MCP_OK);
  ck_assert_uint_eq(e.n, 1);
  ck_assert_uint_eq(strlen(e.ev[0]), n + 1);
  mcp__jsonl_free(j);
  ev_free(&e);
  free(in);
}
END_TEST

START_TEST(test_on_line_stops) {
  events e;
  ev_init(&e);
  e.stop_at = 1;
  mcp_jsonl *j = mcp__jsonl_new(100, &rec_cb, &e);
  ck_assert_ptr_nonnull(j);
  ck_assert_int_eq(mcp__jsonl_feed(j, "a\nb\nc\n", 6), MCP__EAGAIN);
  static const char *const want1[] = {"La", "Lb"};
  ev_expect(&e, want1, 2);
  /* The framer is at a line boundary and can be fed again. */
  e.stop_at = -1;
  ck_assert_int_eq(mcp__jsonl_feed(j, "d\n", 2), MCP_OK);
  static const char *const want2[] = {"La", "Lb", "Ld"};
  ev_expect(&e, want2, 3);
  mcp__jsonl_free(j);
  ev_free(&e);
}
END_TEST

START_TEST(test_pending) {
  events e;
  ev_init(&e);
  mcp_jsonl *j = mcp__jsonl_new(8, &rec_cb, &e);
  ck_assert_int_eq(mcp__jsonl_feed(j, "abc", 3), MCP_OK);
  ck_assert_uint_eq(mcp__jsonl_pending(j), 3);
  ck_assert_int_eq(mcp__jsonl_feed(j, "defgh", 5), MCP_OK);
  ck_assert_uint_eq(mcp__jsonl_pending(j), 8);
  ck_assert_int_eq(mcp__jsonl_feed(j, "\r", 1), MCP_OK); /* held, not buffered */
  ck_assert_uint_eq(mcp__jsonl_pending(j), 8);
  ck_assert_int_eq(mcp__jsonl_feed(j, "\n", 1), MCP_OK);
  ck_assert_uint_eq(mcp__jsonl_pending(j), 0);
  ck_assert_int_eq(mcp__jsonl_feed(j, "123456789", 9), MCP_OK);
  ck_assert_uint_eq(mcp__jsonl_pending(j), 0); /* skipping */
  static const char *const want[] = {"Labcdefgh"};
  ev_expect(&e, want, 1);
  mcp__jsonl_free(j);
  mcp__jsonl_free(NULL);
  ev_free(&e);
}
END_TEST

START_TEST(test_null_callbacks) {
  mcp_jsonl *j = mcp__jsonl_new(4, NULL, NULL);
  ck_assert_ptr_nonnull(j);
  ck_assert_int_eq(mcp__jsonl_feed(j, "ab\nabcdefgh\nx", 13), MCP_OK);
  mcp__jsonl_free(j);
}
END_TEST

START_TEST(test_alloc_failure) {
  /* Fail the Nth allocation for every N until a run needs no failure; each
   * run must end in MCP_ENOMEM or the right lines, and leak nothing (the
   * ASan and valgrind runs check that). */
  static const char in[] = "first line\nsecond, longer line of text\nthird\n";
  static const char *const want[] = {"Lfirst line", "Lsecond, longer line of text", "Lthird"};
  int saw_enomem = 0;
  for (long n = 0;; n++) {
    events e;
    ev_init(&e);
    mcp__alloc_fail_after(n);
    mcp_jsonl *j = mcp__jsonl_new(64, &rec_cb, &e);
    int rc = MCP_ENOMEM;
    if (j) rc = mcp__jsonl_feed(j, in, sizeof(in) - 1);
    mcp__alloc_fail_after(-1);
    mcp__jsonl_free(j);
    if (rc == MCP_OK) {
      ev_expect(&e, want, 3);
      ev_free(&e);
      break;
    }
    ck_assert_int_eq(rc, MCP_ENOMEM);
    saw_enomem = 1;
    ev_free(&e);
    ck_assert_int_lt(n, 100);
  }
  ck_assert(saw_enomem);
}
END_TEST

START_TEST(test_alloc_failure_resync) {
  /* A failed allocation drops that line only; later lines still frame. */
  events e;
  ev_init(&e);
  mcp_jsonl *j = mcp__jsonl_new(64, &rec_cb, &e);
  ck_assert_ptr_nonnull(j);
  mcp__alloc_fail_after(0);
  ck_assert_int_eq(mcp__jsonl_feed(j, "lost\nalso\n", 10), MCP_ENOMEM);
  ck_assert_int_eq(mcp__jsonl_feed(j, "partial", 7), MCP_ENOMEM);
  mcp__alloc_fail_after(-1);
  ck_assert_int_eq(mcp__jsonl_feed(j, " rest\nkept\n", 11), MCP_OK);
  static const char *const want[] = {"Lkept"};
  ev_expect(&e, want, 1);
  mcp__jsonl_free(j);
  ev_free(&e);
}
END_TEST

/* ---- the head of an oversized line ----------------------------------------- */

typedef struct heads {
  size_t n;        /* reports */
  size_t len;      /* the last one's length */
  char head[8192]; /* and head */
  size_t head_len;
  size_t lines;
} heads;

static int head_line(void *user, const char *data, size_t len) {
  (void)data;
  (void)len;
  ((heads *)user)->lines++;
  return 0;
}

static void head_oversize(void *user, size_t len, const char *head, size_t head_len) {
  heads *h = user;
  ck_assert_uint_le(head_len, MCP_JSONL_HEAD);
  h->n++;
  h->len = len;
  memcpy(h->head, head, head_len);
  h->head_len = head_len;
}

static const mcp_jsonl_callbacks head_cb = {.on_line = head_line,
                                            .on_oversize_head = head_oversize};

/* Each way a line becomes oversize (all at once, grown across feeds, a
 * "\r" held at the cap) reports the line's first MCP_JSONL_HEAD bytes,
 * whatever the cut. */
START_TEST(test_oversize_head) {
  size_t total = 20000, cap = 8000;
  char *line = malloc(total + 2);
  ck_assert_ptr_nonnull(line);
  for (size_t i = 0; i < total; i++) line[i] = (char)('a' + i % 26);
  line[total] = '\n';
  size_t cuts[] = {1, 7, 4096, 5000, 8000, 8001, 19999, 20001};
  for (size_t c = 0; c < sizeof(cuts) / sizeof(cuts[0]); c++) {
    heads h;
    memset(&h, 0, sizeof(h));
    mcp_jsonl *j = mcp__jsonl_new(cap, &head_cb, &h);
    ck_assert_ptr_nonnull(j);
    for (size_t off = 0; off < total + 1; off += cuts[c]) {
      size_t k = total + 1 - off < cuts[c] ? total + 1 - off : cuts[c];
      ck_assert_int_eq(mcp__jsonl_feed(j, line + off, k), MCP_OK);
    }
    ck_assert_uint_eq(h.n, 1);
    ck_assert_uint_eq(h.len, total);
    ck_assert_uint_eq(h.head_len, MCP_JSONL_HEAD);
    ck_assert(memcmp(h.head, line, MCP_JSONL_HEAD) == 0);
    /* The next line is framed as usual, and a new head starts afresh. */
    ck_assert_int_eq(mcp__jsonl_feed(j, "ok\n", 3), MCP_OK);
    ck_assert_uint_eq(h.lines, 1);
    mcp__jsonl_free(j);
  }
  /* A short cap: the head is the whole buffered start plus what followed. */
  heads h;
  memset(&h, 0, sizeof(h));
  mcp_jsonl *j = mcp__jsonl_new(4, &head_cb, &h);
  ck_assert_int_eq(mcp__jsonl_feed(j, "abcd", 4), MCP_OK);
  ck_assert_int_eq(mcp__jsonl_feed(j, "\r", 1), MCP_OK); /* held at the cap */
  ck_assert_int_eq(mcp__jsonl_feed(j, "ef\n", 3), MCP_OK);
  ck_assert_uint_eq(h.n, 1);
  ck_assert_uint_eq(h.len, 7);
  ck_assert_uint_eq(h.head_len, 7);
  ck_assert(memcmp(h.head, "abcd\ref", 7) == 0);
  mcp__jsonl_free(j);
  free(line);
}
END_TEST

static Suite *jsonl_suite(void) {
  Suite *s = suite_create("jsonl");
  TCase *tc = tcase_create("framing");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_all_at_once);
  tcase_add_test(tc, test_byte_by_byte);
  tcase_add_test(tc, test_every_cut_point);
  tcase_add_test(tc, test_random_cuts);
  tcase_add_test(tc, test_random_against_reference);
  tcase_add_test(tc, test_crlf);
  tcase_add_test(tc, test_empty_lines);
  tcase_add_test(tc, test_exact_cap_with_cr);
  tcase_add_test(tc, test_null_callbacks);
  suite_add_tcase(s, tc);

  tc = tcase_create("limits");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_oversize_then_more);
  tcase_add_test(tc, test_memory_bounded);
  tcase_add_test(tc, test_default_cap);
  tcase_add_test(tc, test_pending);
  tcase_add_test(tc, test_on_line_stops);
  tcase_add_test(tc, test_alloc_failure);
  tcase_add_test(tc, test_alloc_failure_resync);
  tcase_add_test(tc, test_oversize_head);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(jsonl_suite()); }
