/* SPDX-License-Identifier: MIT */
/*
 * check_h1.c: the HTTP/1.1 response parser and request builder.  Every
 * framing (Content-Length, chunked with extensions and trailers,
 * close-delimited, no body) fed at once, byte by byte and split at every
 * point; interim responses; several responses on one connection; malformed
 * input and limits; stopping and resuming; an SSE stream read as it
 * arrives; CR/LF injection in requests; allocation failure.
 */
#include "config.h"

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "mcp_h1.h"
#include "mcp_sse.h"

#define N_(a) (sizeof(a) / sizeof((a)[0]))

/* ---- recorder ------------------------------------------------------------------ */

/* A plain growable string (not mcp_buf: its allocations would count in the
 * allocation-failure tests). */
typedef struct str {
  char *p;
  size_t n;
} str;

static void str_add(str *s, const char *d, size_t n) {
  s->p = realloc(s->p, s->n + n + 1);
  ck_assert_ptr_nonnull(s->p);
  memcpy(s->p + s->n, d, n);
  s->n += n;
  s->p[s->n] = '\0';
}

static void str_adds(str *s, const char *d) { str_add(s, d, strlen(d)); }

/*
 * The log of what the parser reported: "H<status> <reason>|<name>: <value>
 * ...\n" for a head, "B<bytes>\n" for the body (consecutive pieces merged,
 * so any split logs the same), "C<keep_alive>\n" at completion.
 */
typedef struct rec {
  mcp_h1 *p;
  str log;
  str body;                                   /* body bytes not yet logged */
  int stop_headers, stop_body, stop_complete; /* stop at the Nth (1-based) */
  int nheaders, nbody, ncomplete;
  int begin_head_next; /* on_complete calls mcp__h1_begin(p, true) */
} rec;

static void flush_body(rec *r) {
  if (!r->body.n) return;
  str_adds(&r->log, "B");
  str_add(&r->log, r->body.p, r->body.n);
  str_adds(&r->log, "\n");
  r->body.n = 0;
}

static int rec_headers(void *user, int status, const mcp_h1_header *h, size_t n) {
  rec *r = user;
  flush_body(r);
  char buf[32];
  snprintf(buf, sizeof(buf), "H%d ", status);
  str_adds(&r->log, buf);
  str_adds(&r->log, mcp__h1_reason(r->p));
  for (size_t i = 0; i < n; i++) {
    str_adds(&r->log, "|");
    str_adds(&r->log, h[i].name);
    str_adds(&r->log, ": ");
    str_adds(&r->log, h[i].value);
  }
  str_adds(&r->log, "\n");
  return ++r->nheaders == r->stop_headers;
}

static int rec_body(void *user, const char *d, size_t n) {
  rec *r = user;
  ck_assert_uint_gt(n, 0);
  str_add(&r->body, d, n);
  return ++r->nbody == r->stop_body;
}

static int rec_complete(void *user, bool ka) {
  rec *r = user;
  flush_body(r);
  str_adds(&r->log, ka ? "C1\n" : "C0\n");
  if (r->begin_head_next) mcp__h1_begin(r->p, true);
  return ++r->ncomplete == r->stop_complete;
}

static const mcp_h1_callbacks rec_cb = {rec_headers, rec_body, rec_complete};

static void rec_init(rec *r) {
  memset(r, 0, sizeof(*r));
  str_adds(&r->log, "");
  r->p = mcp__h1_new(0, 0, &rec_cb, r);
  ck_assert_ptr_nonnull(r->p);
}

static void rec_free(rec *r) {
  mcp__h1_free(r->p);
  free(r->log.p);
  free(r->body.p);
}

/* What a whole run gives: the log, then "=<status of the first failing
 * call>" and "E<eof status>" when |eof| is set. */
static char *run_cuts(const char *in, size_t n, const size_t *cuts, size_t ncuts, bool head,
                      bool eof) {
  rec r;
  rec_init(&r);
  if (head) mcp__h1_begin(r.p, true);
  int rc = MCP_OK;
  size_t at = 0;
  for (size_t i = 0; i <= ncuts && rc == MCP_OK; i++) {
    size_t to = i < ncuts ? cuts[i] : n;
    rc = mcp__h1_feed(r.p, in + at, to - at);
    if (rc == MCP_OK) ck_assert_uint_eq(mcp__h1_consumed(r.p), to - at);
    at = to;
  }
  flush_body(&r);
  char buf[64];
  if (rc != MCP_OK) {
    snprintf(buf, sizeof(buf), "=%d %s\n", rc, mcp__h1_error(r.p));
    str_adds(&r.log, buf);
  } else if (eof) {
    int e = mcp__h1_eof(r.p);
    flush_body(&r);
    snprintf(buf, sizeof(buf), "E%d\n", e);
    str_adds(&r.log, buf);
  }
  char *out = r.log.p;
  r.log.p = NULL;
  rec_free(&r);
  return out;
}

/* Checks |in| gives |want| fed at once, byte by byte, split at every point
 * in two pieces, and in three pieces at every pair of points (short
 * inputs) or at 2000 pseudo-random pairs. */
static void expect_run(const char *in, size_t n, bool head, bool eof, const char *want) {
  char *got = run_cuts(in, n, NULL, 0, head, eof);
  ck_assert_msg(strcmp(got, want) == 0, "got:\n%s\nwant:\n%s", got, want);
  free(got);
  size_t *cuts = malloc((n + 1) * sizeof(size_t));
  for (size_t i = 1; i < n; i++) cuts[i - 1] = i;
  got = run_cuts(in, n, cuts, n ? n - 1 : 0, head, eof);
  ck_assert_msg(strcmp(got, want) == 0, "bytewise got:\n%s\nwant:\n%s", got, want);
  free(got);
  free(cuts);
  if (n < 2) return;
  for (size_t i = 1; i < n; i++) {
    got = run_cuts(in, n, &i, 1, head, eof);
    ck_assert_msg(strcmp(got, want) == 0, "cut %zu got:\n%s\nwant:\n%s", i, got, want);
    free(got);
  }
  unsigned seed = (unsigned)n;
  bool all = n <= 100;
  size_t rounds = all ? (n - 1) * (n - 2) / 2 : 2000;
  size_t i = 1, j = 2;
  for (size_t k = 0; k < rounds; k++) {
    if (all) {
      if (j == n) {
        i++;
        j = i + 1;
      }
    } else {
      i = 1 + (size_t)rand_r(&seed) % (n - 1);
      j = 1 + (size_t)rand_r(&seed) % (n - 1);
      if (i == j) continue;
      if (i > j) {
        size_t t = i;
        i = j;
        j = t;
      }
    }
    size_t c[2] = {i, j};
    got = run_cuts(in, n, c, 2, head, eof);
    ck_assert_msg(strcmp(got, want) == 0, "cuts %zu,%zu got:\n%s\nwant:\n%s", i, j, got, want);
    free(got);
    if (all) j++;
  }
}

#define EXPECT(in, want) expect_run(in, strlen(in), false, false, want)
#define EXPECT_EOF(in, want) expect_run(in, strlen(in), false, true, want)

/* ---- framing -------------------------------------------------------------------- */

START_TEST(content_length) {
  EXPECT("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
         "Content-Length: 5\r\n\r\nhello",
         "H200 OK|Content-Type: application/json|Content-Length: 5\n"
         "Bhello\nC1\n");
  /* Repeated equal values are one value (RFC 9110 section 8.6). */
  EXPECT("HTTP/1.1 200 OK\r\nContent-Length: 3\r\ncontent-length:3 , 3\r\n"
         "\r\nabc",
         "H200 OK|Content-Length: 3|content-length: 3 , 3\nBabc\nC1\n");
  EXPECT("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", "H200 OK|Content-Length: 0\nC1\n");
  EXPECT("HTTP/1.1 200 OK\r\nContent-Length: 007\r\n\r\n1234567",
         "H200 OK|Content-Length: 007\nB1234567\nC1\n");
  /* LF-only line endings and white space around values. */
  EXPECT("HTTP/1.1 404 Not Found\nContent-Length:\t2 \nX-Empty:\n\nno",
         "H404 Not Found|Content-Length: 2|X-Empty: \nBno\nC1\n");
  /* No reason phrase, with and without its space; blank lines first. */
  EXPECT("\r\n\r\nHTTP/1.1 200\r\nContent-Length: 1\r\n\r\nx"
         "HTTP/1.1 201 \r\nContent-Length: 1\r\n\r\ny",
         "H200 |Content-Length: 1\nBx\nC1\nH201 |Content-Length: 1\nBy\nC1\n");
  /* obs-text and tabs inside values are fine. */
  EXPECT("HTTP/1.1 200 \xC3\xA9t\xC3\xA9\r\nX: a\tb \xff\r\nContent-Length: 0"
         "\r\n\r\n",
         "H200 \xC3\xA9t\xC3\xA9|X: a\tb \xff|Content-Length: 0\nC1\n");
}
END_TEST

START_TEST(chunked) {
  EXPECT("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
         "5;name=val\r\nhello\r\n"
         "6 ; x=\"q\"\r\n world\r\n"
         "A\r\n0123456789\r\n"
         "0;last\r\nX-Trailer: 1\r\nY:2\r\n\r\n",
         "H200 OK|Transfer-Encoding: chunked\nBhello world0123456789\nC1\n");
  /* Case-insensitive name and coding, leading zeros, LF-only endings. */
  EXPECT("HTTP/1.1 200 OK\r\ntransfer-encoding: Chunked\r\n\r\n"
         "0003\nabc\n00\n\n",
         "H200 OK|transfer-encoding: Chunked\nBabc\nC1\n");
  /* Transfer-Encoding wins over Content-Length; not reused. */
  EXPECT("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n"
         "Transfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
         "H200 OK|Content-Length: 100|Transfer-Encoding: chunked\nBok\nC0\n");
  /* An empty chunked body. */
  EXPECT("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
         "H200 OK|Transfer-Encoding: chunked\nC1\n");
  /* Chunked from an HTTP/1.0 peer: read, but the connection is not reused. */
  EXPECT("HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n"
         "Connection: keep-alive\r\n\r\n1\r\nx\r\n0\r\n\r\n",
         "H200 OK|Transfer-Encoding: chunked|Connection: keep-alive\nBx\nC0\n");
}
END_TEST

START_TEST(close_delimited) {
  EXPECT_EOF("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"
             "data: 1\n\ndata: 2\n\n",
             "H200 OK|Content-Type: text/event-stream\n"
             "Bdata: 1\n\ndata: 2\n\n\nC0\nE0\n");
  EXPECT_EOF("HTTP/1.0 200 OK\r\n\r\n", "H200 OK\nC0\nE0\n");
  EXPECT_EOF("HTTP/1.1 500 Oops\r\nConnection: keep-alive\r\n\r\nx",
             "H500 Oops|Connection: keep-alive\nBx\nC0\nE0\n");
}
END_TEST

START_TEST(no_body) {
  /* 204 and 304 have no body, whatever their fields say. */
  EXPECT("HTTP/1.1 204 No Content\r\nContent-Length: 10\r\n\r\n"
         "HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n"
         "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
         "H204 No Content|Content-Length: 10\nC1\n"
         "H304 Not Modified|Transfer-Encoding: chunked\nC1\n"
         "H200 OK|Content-Length: 2\nBok\nC1\n");
  /* A response to HEAD: Content-Length describes what GET would send. */
  expect_run("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n", 40, true, false,
             "H200 OK|Content-Length: 100\nC1\n");
  static const char two[] = "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n"
                            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
  expect_run(two, strlen(two), true, false,
             "H200 OK|Content-Length: 100\nC1\n"
             "H200 OK|Transfer-Encoding: chunked\n");
  /* The HEAD flag lasts for one response only. */
  rec r;
  rec_init(&r);
  r.begin_head_next = 0;
  mcp__h1_begin(r.p, true);
  ck_assert_int_eq(mcp__h1_feed(r.p, two, strlen(two)), MCP_OK);
  ck_assert_int_eq(mcp__h1_feed(r.p, "0\r\n\r\n", 5), MCP_OK);
  ck_assert_str_eq(r.log.p, "H200 OK|Content-Length: 100\nC1\n"
                            "H200 OK|Transfer-Encoding: chunked\nC1\n");
  rec_free(&r);
  /* ...or is set again from on_complete for the next one. */
  rec_init(&r);
  r.begin_head_next = 1;
  mcp__h1_begin(r.p, true);
  ck_assert_int_eq(mcp__h1_feed(r.p, two, strlen(two)), MCP_OK);
  ck_assert_str_eq(r.log.p, "H200 OK|Content-Length: 100\nC1\n"
                            "H200 OK|Transfer-Encoding: chunked\nC1\n");
  rec_free(&r);
}
END_TEST

START_TEST(interim_responses) {
  EXPECT("HTTP/1.1 100 Continue\r\n\r\n"
         "HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n"
         "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
         "H200 OK|Content-Length: 2\nBok\nC1\n");
  /* An interim response's Connection field does not count. */
  EXPECT("HTTP/1.1 100 Continue\r\nConnection: close\r\n\r\n"
         "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
         "H200 OK|Content-Length: 0\nC1\n");
  EXPECT("HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n",
         "=-6 unexpected 101 Switching Protocols\n");
}
END_TEST

START_TEST(keep_alive_reuse) {
  /* Several responses on one connection, each framing in turn, the last
   * ending with the connection. */
  static const char in[] =
      "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\none"
      "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n"
      "HTTP/1.1 100 Continue\r\n\r\n"
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\ntwo\r\n0\r\n\r\n"
      "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 5\r\n\r\nthree"
      "HTTP/1.1 200 OK\r\n\r\nfour";
  EXPECT_EOF(in, "H200 OK|Content-Length: 3\nBone\nC1\n"
                 "H202 Accepted|Content-Length: 0\nC1\n"
                 "H200 OK|Transfer-Encoding: chunked\nBtwo\nC1\n"
                 "H200 OK|Connection: Keep-Alive|Content-Length: 5\nBthree\nC1\n"
                 "H200 OK\nBfour\nC0\nE0\n");
}
END_TEST

START_TEST(connection_close) {
  EXPECT("HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\n"
         "Content-Length: 1\r\n\r\nx",
         "H200 OK|Connection: keep-alive, Close|Content-Length: 1\nBx\nC0\n");
  EXPECT("HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx", "H200 OK|Content-Length: 1\nBx\nC0\n");
  EXPECT("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n"
         "\r\nx",
         "H200 OK|Connection: keep-alive|Content-Length: 1\nBx\nC1\n");
  /* Anything after the last response of a closing connection is wrong. */
  EXPECT("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx"
         "HTTP/1.1 200 OK\r\n",
         "H200 OK|Connection: close|Content-Length: 1\nBx\nC0\n"
         "=-6 data after the last response of a closing connection\n");
  /* HTTP/1.2 is read as 1.1. */
  EXPECT("HTTP/1.2 200 OK\r\nContent-Length: 0\r\n\r\n", "H200 OK|Content-Length: 0\nC1\n");
}
END_TEST

/* ---- errors ---------------------------------------------------------------------- */

typedef struct bad_case {
  const char *in;
  int status;
  const char *msg;
} bad_case;

static const bad_case bads[] = {
    /* status lines */
    {"HTTP/1.1 20 OK\r\n", MCP_EPROTO, "malformed HTTP status"},
    {"HTTP/1.1 2000 OK\r\n", MCP_EPROTO, "malformed HTTP status line"},
    {"HTTP/1.1 200OK\r\n", MCP_EPROTO, "malformed HTTP status line"},
    {"HTTP/1.1  200 OK\r\n", MCP_EPROTO, "malformed HTTP status"},
    {"HTTP/2 200 OK\r\n", MCP_EPROTO, "malformed HTTP status line"},
    {"HTTP/2.0 200 OK\r\n", MCP_EPROTO, "unsupported HTTP version"},
    {"HTTP/0.9 200 OK\r\n", MCP_EPROTO, "unsupported HTTP version"},
    {"http/1.1 200 OK\r\n", MCP_EPROTO, "malformed HTTP status line"},
    {"ICY 200 OK\r\n", MCP_EPROTO, "malformed HTTP status line"},
    {"HTTP/1.1 600 X\r\n", MCP_EPROTO, "malformed HTTP status code"},
    {"HTTP/1.1 099 X\r\n", MCP_EPROTO, "malformed HTTP status code"},
    {"HTTP/1.1 2x0 X\r\n", MCP_EPROTO, "malformed HTTP status code"},
    {"HTTP/1.1 200 O\x01K\r\n", MCP_EPROTO, "control character in HTTP reason"},
    {"HTTP/1.1 200 O\rK\r\n", MCP_EPROTO, "control character in HTTP reason"},
    {"<html>\r\n", MCP_EPROTO, "malformed HTTP status line"},
    /* fields */
    {"HTTP/1.1 200 OK\r\nX: a\r\n b\r\n\r\n", MCP_EPROTO, "obsolete line folding"},
    {"HTTP/1.1 200 OK\r\n\tb\r\n\r\n", MCP_EPROTO, "obsolete line folding"},
    {"HTTP/1.1 200 OK\r\nX : a\r\n\r\n", MCP_EPROTO, "white space before ':'"},
    {"HTTP/1.1 200 OK\r\n: a\r\n\r\n", MCP_EPROTO, "empty field name"},
    {"HTTP/1.1 200 OK\r\nNoColon\r\n\r\n", MCP_EPROTO, "malformed header field"},
    {"HTTP/1.1 200 OK\r\nX(y): a\r\n\r\n", MCP_EPROTO, "malformed header field"},
    {"HTTP/1.1 200 OK\r\nX: a\rb\r\n\r\n", MCP_EPROTO, "control character in header field value"},
    {"HTTP/1.1 200 OK\r\nX: a\x7f\r\n\r\n", MCP_EPROTO, "control character"},
    {"HTTP/1.1 200 OK\r\nX: a\r\r\n\r\n", MCP_EPROTO, "control character"},
    {"HTTP/1.1 200 OK\r\nX: a\r\n\r\r\n", MCP_EPROTO, "malformed header field"},
    /* framing */
    {"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", MCP_EPROTO,
     "conflicting Content-Length"},
    {"HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\n", MCP_EPROTO, "conflicting Content-Length"},
    {"HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\n", MCP_EPROTO, "malformed Content-Length"},
    {"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", MCP_EPROTO, "malformed Content-Length"},
    {"HTTP/1.1 200 OK\r\nContent-Length: +1\r\n\r\n", MCP_EPROTO, "malformed Content-Length"},
    {"HTTP/1.1 200 OK\r\nContent-Length: 1 2\r\n\r\n", MCP_EPROTO, "malformed Content-Length"},
    {"HTTP/1.1 200 OK\r\nContent-Length:\r\n\r\n", MCP_EPROTO, "malformed Content-Length"},
    {"HTTP/1.1 200 OK\r\nContent-Length: 0x10\r\n\r\n", MCP_EPROTO, "malformed Content-Length"},
    {"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n", MCP_EPROTO,
     "malformed Content-Length"},
    {"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", MCP_EPROTO,
     "unsupported transfer coding \"gzip\""},
    {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n\r\n",
     MCP_EPROTO, "unsupported transfer coding \"identity\""},
    {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", MCP_EPROTO,
     "chunked applied twice"},
    {"HTTP/1.1 200 OK\r\nTransfer-Encoding:\r\n\r\n", MCP_EPROTO, "empty Transfer-Encoding"},
    {"HTTP/1.1 200 OK\r\nTransfer-Encoding: ,\r\n\r\n", MCP_EPROTO, "empty Transfer-Encoding"},
    /* chunks */
    {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", MCP_EPROTO,
     "malformed chunk size"},
    {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\r\n", MCP_EPROTO,
     "malformed chunk size"},
    {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n 5\r\n", MCP_EPROTO,
     "malformed chunk size"},
    {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\n", MCP_EPROTO,
     "malformed chunk size"},
    {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5x\r\n", MCP_EPROTO,
     "malformed chunk size"},
    {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\rX", MCP_EPROTO,
     "bare CR in chunk-size line"},
    {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloX", MCP_EPROTO,
     "chunk data longer than its size"},
    {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\rX", MCP_EPROTO,
     "bare CR after chunk data"},
    {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10000000000000000\r\n", MCP_EPROTO,
     "chunk size too large"},
    {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;\x01\r\n", MCP_EPROTO,
     "control character in chunk extension"},
    {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nT : 1\r\n\r\n", MCP_EPROTO,
     "white space before ':' in trailer field"},
    {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nT: 1\r\n x\r\n\r\n", MCP_EPROTO,
     "obsolete line folding in trailer"},
    {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nT: \x01\r\n\r\n", MCP_EPROTO,
     "control character in trailer"},
};

START_TEST(malformed) {
  const bad_case *c = &bads[_i];
  size_t n = strlen(c->in);
  /* At once and byte by byte: the same error. */
  for (int bytewise = 0; bytewise < 2; bytewise++) {
    rec r;
    rec_init(&r);
    int rc = MCP_OK;
    if (bytewise) {
      for (size_t i = 0; i < n && rc == MCP_OK; i++) rc = mcp__h1_feed(r.p, c->in + i, 1);
    } else {
      rc = mcp__h1_feed(r.p, c->in, n);
    }
    ck_assert_msg(rc == c->status, "%s: got %d (%s)", c->in, rc, mcp__h1_error(r.p));
    ck_assert_msg(strstr(mcp__h1_error(r.p), c->msg) != NULL, "\"%s\" lacks \"%s\"",
                  mcp__h1_error(r.p), c->msg);
    /* Spent: later calls give the same error. */
    ck_assert_int_eq(mcp__h1_feed(r.p, "x", 1), c->status);
    ck_assert_uint_eq(mcp__h1_consumed(r.p), 0);
    ck_assert_int_eq(mcp__h1_eof(r.p), c->status);
    /* Until reset. */
    mcp__h1_reset(r.p);
    ck_assert_str_eq(mcp__h1_error(r.p), "");
    ck_assert_int_eq(mcp__h1_feed(r.p, "HTTP/1.1 204 \r\n\r\n", 17), MCP_OK);
    ck_assert_int_eq(r.ncomplete, 1);
    rec_free(&r);
  }
}
END_TEST

START_TEST(limits) {
  /* 100 fields pass, 101 do not; the same for trailers. */
  str s = {0};
  str_adds(&s, "HTTP/1.1 200 OK\r\n");
  char line[32];
  for (int i = 0; i < 99; i++) {
    snprintf(line, sizeof(line), "X-%d: %d\r\n", i, i);
    str_adds(&s, line);
  }
  str_adds(&s, "Transfer-Encoding: chunked\r\n\r\n0\r\n");
  for (int i = 0; i < 100; i++) {
    snprintf(line, sizeof(line), "T-%d: %d\r\n", i, i);
    str_adds(&s, line);
  }
  str_adds(&s, "\r\n");
  rec r;
  rec_init(&r);
  ck_assert_int_eq(mcp__h1_feed(r.p, s.p, s.n), MCP_OK);
  ck_assert_int_eq(r.ncomplete, 1);
  rec_free(&r);

  /* One more trailer. */
  s.n -= 2;
  str_adds(&s, "T-x: 1\r\n\r\n");
  rec_init(&r);
  ck_assert_int_eq(mcp__h1_feed(r.p, s.p, s.n), MCP_ETOOBIG);
  ck_assert_str_eq(mcp__h1_error(r.p), "more than 100 trailer fields");
  rec_free(&r);

  /* One more field. */
  s.n = 0;
  str_adds(&s, "HTTP/1.1 200 OK\r\n");
  for (int i = 0; i < 101; i++) {
    snprintf(line, sizeof(line), "X-%d: %d\r\n", i, i);
    str_adds(&s, line);
  }
  rec_init(&r);
  ck_assert_int_eq(mcp__h1_feed(r.p, s.p, s.n), MCP_ETOOBIG);
  ck_assert_str_eq(mcp__h1_error(r.p), "more than 100 header fields");
  rec_free(&r);

  /* A head of 64 KiB passes; one byte more does not, even byte by byte and
   * before its end is in sight. */
  for (int extra = 0; extra < 2; extra++) {
    s.n = 0;
    str_adds(&s, "HTTP/1.1 200 OK\r\nX: ");
    size_t fill = MCP_H1_DEFAULT_MAX_HEAD - s.n - strlen("\r\nContent-Length: 0\r\n\r\n") +
                  (size_t)extra;
    char *pad = malloc(fill);
    memset(pad, 'a', fill);
    str_add(&s, pad, fill);
    free(pad);
    str_adds(&s, "\r\nContent-Length: 0\r\n\r\n");
    rec_init(&r);
    int rc = MCP_OK;
    for (size_t i = 0; i < s.n && rc == MCP_OK; i += 1000) {
      size_t k = s.n - i < 1000 ? s.n - i : 1000;
      rc = mcp__h1_feed(r.p, s.p + i, k);
    }
    ck_assert_int_eq(rc, extra ? MCP_ETOOBIG : MCP_OK);
    ck_assert_int_eq(r.ncomplete, extra ? 0 : 1);
    rec_free(&r);
  }
  /* A garbage stream with no line end hits the limit too. */
  rec_init(&r);
  char junk[4096];
  memset(junk, 'j', sizeof(junk));
  int rc = MCP_OK;
  for (int i = 0; i < 100 && rc == MCP_OK; i++) rc = mcp__h1_feed(r.p, junk, sizeof(junk));
  ck_assert_int_eq(rc, MCP_ETOOBIG);
  rec_free(&r);
  /* So do endless blank lines before the status line. */
  rec_init(&r);
  memset(junk, '\n', sizeof(junk));
  rc = MCP_OK;
  for (int i = 0; i < 100 && rc == MCP_OK; i++) rc = mcp__h1_feed(r.p, junk, sizeof(junk));
  ck_assert_int_eq(rc, MCP_ETOOBIG);
  rec_free(&r);

  /* Smaller limits when asked. */
  mcp_h1 *p = mcp__h1_new(32, 1, NULL, NULL);
  ck_assert_int_eq(mcp__h1_feed(p, "HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\n", 30), MCP_ETOOBIG);
  mcp__h1_free(p);
  p = mcp__h1_new(32, 0, NULL, NULL);
  ck_assert_int_eq(mcp__h1_feed(p, "HTTP/1.1 200 OK\r\nA: 1\r\nBB: 2\r\nC: 3\r\n", 36),
                   MCP_ETOOBIG);
  mcp__h1_free(p);

  /* A long chunk-size line (extensions) is refused. */
  s.n = 0;
  str_adds(&s, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;");
  for (int i = 0; i < 5000; i++) str_adds(&s, "x");
  rec_init(&r);
  ck_assert_int_eq(mcp__h1_feed(r.p, s.p, s.n), MCP_EPROTO);
  ck_assert_str_eq(mcp__h1_error(r.p), "chunk-size line too long");
  rec_free(&r);
  free(s.p);
}
END_TEST

START_TEST(huge_chunk_and_length) {
  /* The largest sizes are accepted; the body simply never ends. */
  rec r;
  rec_init(&r);
  static const char a[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                          "FFFFFFFFFFFFFFFF\r\nabc";
  ck_assert_int_eq(mcp__h1_feed(r.p, a, strlen(a)), MCP_OK);
  ck_assert_int_eq(mcp__h1_eof(r.p), MCP_ECLOSED);
  rec_free(&r);
  rec_init(&r);
  static const char b[] = "HTTP/1.1 200 OK\r\nContent-Length: 18446744073709551606\r\n\r\nabc";
  ck_assert_int_eq(mcp__h1_feed(r.p, b, strlen(b)), MCP_OK);
  ck_assert_int_eq(mcp__h1_eof(r.p), MCP_ECLOSED);
  ck_assert_str_eq(mcp__h1_error(r.p), "connection closed 18446744073709551603 bytes before the "
                                       "end of the body");
  rec_free(&r);
}
END_TEST

START_TEST(eof_cases) {
  rec r;
  /* An idle connection closing is fine... */
  rec_init(&r);
  ck_assert_int_eq(mcp__h1_feed(r.p, NULL, 0), MCP_OK);
  ck_assert_int_eq(mcp__h1_eof(r.p), MCP_OK);
  ck_assert_int_eq(mcp__h1_feed(r.p, "H", 1), MCP_EPROTO);
  rec_free(&r);
  /* ...unless a request was waiting for its response. */
  rec_init(&r);
  mcp__h1_begin(r.p, false);
  ck_assert_int_eq(mcp__h1_eof(r.p), MCP_ECLOSED);
  ck_assert_str_eq(mcp__h1_error(r.p), "connection closed before a response");
  rec_free(&r);
  /* After a complete response it is idle again. */
  rec_init(&r);
  mcp__h1_begin(r.p, false);
  ck_assert_int_eq(mcp__h1_feed(r.p, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", 38), MCP_OK);
  ck_assert_int_eq(mcp__h1_eof(r.p), MCP_OK);
  rec_free(&r);

  static const struct {
    const char *in;
    const char *msg;
  } cut[] = {
      {"HTTP/1.1 2", "connection closed in the middle of a response head"},
      {"HTTP/1.1 200 OK\r\n", "connection closed in the middle of a response head"},
      {"HTTP/1.1 100 Continue\r\n\r\nHTTP", "connection closed in the middle of a response head"},
      {"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nabc",
       "connection closed 2 bytes before the end of the body"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nabc",
       "connection closed in the middle of a chunked body"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n",
       "connection closed in the middle of a chunked body"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: 1\r\n",
       "connection closed in the middle of a chunked body"},
  };
  for (size_t i = 0; i < N_(cut); i++) {
    rec_init(&r);
    ck_assert_int_eq(mcp__h1_feed(r.p, cut[i].in, strlen(cut[i].in)), MCP_OK);
    ck_assert_int_eq(mcp__h1_eof(r.p), MCP_ECLOSED);
    ck_assert_str_eq(mcp__h1_error(r.p), cut[i].msg);
    ck_assert_int_eq(r.ncomplete, 0);
    rec_free(&r);
  }
}
END_TEST

/* ---- stopping -------------------------------------------------------------------- */

static const char stop_stream[] =
    "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nabcd"
    "HTTP/1.1 204 No Content\r\n\r\n"
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nef\r\n2\r\ngh\r\n0\r\n\r\n"
    "HTTP/1.1 200 OK\r\n\r\nij";

static const char stop_want[] = "H200 OK|Content-Length: 4\nBabcd\nC1\n"
                                "H204 No Content\nC1\n"
                                "H200 OK|Transfer-Encoding: chunked\nBefgh\nC1\n"
                                "H200 OK\nBij\nC0\nE0\n";

/* Feeds |stop_stream| byte by byte or at once, stopping where |r| says,
 * resuming each time with the rest. */
static void run_with_stops(rec *r, bool bytewise) {
  size_t n = strlen(stop_stream);
  size_t at = 0;
  int stops = 0;
  while (at < n || stops < 100) {
    size_t len = bytewise ? (at < n ? 1 : 0) : n - at;
    int rc = mcp__h1_feed(r->p, stop_stream + at, len);
    size_t used = mcp__h1_consumed(r->p);
    ck_assert_uint_le(used, len);
    at += used;
    if (rc == MCP__EAGAIN) {
      stops++;
      continue;
    }
    ck_assert_int_eq(rc, MCP_OK);
    ck_assert_uint_eq(used, len);
    if (at == n) break;
  }
  char buf[16];
  snprintf(buf, sizeof(buf), "E%d\n", mcp__h1_eof(r->p));
  flush_body(r);
  str_adds(&r->log, buf);
}

START_TEST(stop_and_resume) {
  for (int bytewise = 0; bytewise < 2; bytewise++) {
    for (int k = 1; k <= 5; k++) {
      for (int which = 0; which < 3; which++) {
        rec r;
        rec_init(&r);
        if (which == 0) r.stop_headers = k;
        if (which == 1) r.stop_body = k;
        if (which == 2) r.stop_complete = k;
        run_with_stops(&r, bytewise);
        ck_assert_msg(strcmp(r.log.p, stop_want) == 0, "%d/%d/%d:\n%s", bytewise, k, which,
                      r.log.p);
        rec_free(&r);
      }
    }
  }
}
END_TEST

START_TEST(stop_at_bodiless_then_eof) {
  /* Stopped in on_headers of a 204: the completion is still owed, and
   * the end of the connection delivers it. */
  rec r;
  rec_init(&r);
  r.stop_headers = 1;
  ck_assert_int_eq(mcp__h1_feed(r.p, "HTTP/1.1 204 No Content\r\n\r\n", 27), MCP__EAGAIN);
  ck_assert_int_eq(r.ncomplete, 0);
  ck_assert_int_eq(mcp__h1_eof(r.p), MCP_OK);
  ck_assert_str_eq(r.log.p, "H204 No Content\nC0\n");
  rec_free(&r);
}
END_TEST

/* ---- SSE over chunked --------------------------------------------------------------- */

typedef struct sse_pipe {
  mcp_sse *sse;
  int events;
  int complete;
  char last[64];
} sse_pipe;

static int pipe_body(void *user, const char *d, size_t n) {
  sse_pipe *sp = user;
  int rc = mcp__sse_feed(sp->sse, d, n);
  ck_assert_int_eq(rc, MCP_OK);
  return 0;
}

static int pipe_complete(void *user, bool ka) {
  sse_pipe *sp = user;
  sp->complete++;
  ck_assert_int_eq(mcp__sse_finish(sp->sse), MCP_OK);
  return 0;
}

static int pipe_event(void *user, const char *type, const char *data, size_t len, const char *id) {
  sse_pipe *sp = user;
  sp->events++;
  snprintf(sp->last, sizeof(sp->last), "%s|%s|%s", type, id, data);
  return 0;
}

START_TEST(sse_over_chunked) {
  sse_pipe sp;
  memset(&sp, 0, sizeof(sp));
  static const mcp_sse_callbacks scb = {pipe_event, NULL};
  sp.sse = mcp__sse_new(0, &scb, &sp);
  static const mcp_h1_callbacks hcb = {NULL, pipe_body, pipe_complete};
  mcp_h1 *p = mcp__h1_new(0, 0, &hcb, &sp);

  /* Each piece is what one read might return; events must come out as
   * soon as their blank line is in, long before the response ends. */
  static const struct {
    const char *piece;
    int events;
    const char *last;
  } steps[] = {
      {"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
       "Transfer-Encoding: chunked\r\n\r\n",
       0, ""},
      {"10\r\nid: 1\ndata: {\"a\"\r\n", 0, ""},
      {"4\r\n:1}\n\r\n", 0, ""},
      {"1\r\n\n\r\n", 1, "message|1|{\"a\":1}"},
      {"1a\r\nevent: progress\ndata: 50%\n\r\n", 1, "message|1|{\"a\":1}"},
      {"1\r\n\n", 2, "progress|1|50%"},
      {"\r\n", 2, "progress|1|50%"},
      {"12\r\ndata: done\nid: 2\n\n\r\n", 3, "message|2|done"},
      {"0\r\n\r\n", 3, "message|2|done"},
  };
  for (size_t i = 0; i < N_(steps); i++) {
    ck_assert_int_eq(mcp__h1_feed(p, steps[i].piece, strlen(steps[i].piece)), MCP_OK);
    ck_assert_int_eq(sp.events, steps[i].events);
    ck_assert_str_eq(sp.last, steps[i].last);
    ck_assert_int_eq(sp.complete, i + 1 == N_(steps));
  }
  ck_assert_str_eq(mcp__sse_last_event_id(sp.sse), "2");
  mcp__h1_free(p);
  mcp__sse_free(sp.sse);
}
END_TEST

/* ---- request builder --------------------------------------------------------------- */

START_TEST(build_request) {
  mcp_buf b;
  mcp__buf_init(&b);
  mcp_h1_header h[] = {
      {"Accept", "application/json, text/event-stream"},
      {"Content-Type", "application/json"},
      {"Mcp-Session-Id", "abc\t123"},
  };
  static const char body[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";
  ck_assert_int_eq(mcp__h1_build_request(&b, "POST", "/mcp?x=1", "example.com:8080", h, N_(h), body,
                                         strlen(body)),
                   MCP_OK);
  ck_assert_str_eq(b.data, "POST /mcp?x=1 HTTP/1.1\r\n"
                           "Host: example.com:8080\r\n"
                           "Accept: application/json, text/event-stream\r\n"
                           "Content-Type: application/json\r\n"
                           "Mcp-Session-Id: abc\t123\r\n"
                           "Content-Length: 40\r\n"
                           "\r\n"
                           "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");
  /* Appends; GET without a body has no Content-Length, POST always. */
  size_t mark = b.len;
  ck_assert_int_eq(mcp__h1_build_request(&b, "GET", "/", "[::1]", NULL, 0, NULL, 0), MCP_OK);
  ck_assert_str_eq(b.data + mark, "GET / HTTP/1.1\r\nHost: [::1]\r\n\r\n");
  mark = b.len;
  ck_assert_int_eq(mcp__h1_build_request(&b, "POST", "/", "h", NULL, 0, NULL, 0), MCP_OK);
  ck_assert_str_eq(b.data + mark, "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n");
  mark = b.len;
  ck_assert_int_eq(mcp__h1_build_request(&b, "DELETE", "/mcp", "h", h + 2, 1, NULL, 0), MCP_OK);
  ck_assert_str_eq(b.data + mark,
                   "DELETE /mcp HTTP/1.1\r\nHost: h\r\nMcp-Session-Id: abc\t123\r\n\r\n");
  /* A body may hold anything, NUL included. */
  mark = b.len;
  ck_assert_int_eq(mcp__h1_build_request(&b, "PUT", "/", "h", NULL, 0, "a\0\r\n", 4), MCP_OK);
  ck_assert_uint_eq(b.len - mark,
                    strlen("PUT / HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\n\r\n") + 4);
  mcp__buf_free(&b);
}
END_TEST

START_TEST(build_request_refuses_injection) {
  static const struct {
    const char *method, *target, *authority, *name, *value;
  } bad[] = {
      {"GET\r\nX: y", "/", "h", NULL, NULL},
      {"GET /", "/", "h", NULL, NULL},
      {"", "/", "h", NULL, NULL},
      {NULL, "/", "h", NULL, NULL},
      {"GET", "/a b", "h", NULL, NULL},
      {"GET", "/\r\nX: y", "h", NULL, NULL},
      {"GET", "/\n", "h", NULL, NULL},
      {"GET", "", "h", NULL, NULL},
      {"GET", "/#frag", "h", NULL, NULL},
      {"GET", "/\xc3\xa9", "h", NULL, NULL},
      {"GET", NULL, "h", NULL, NULL},
      {"GET", "/", "h\r\nX: y", NULL, NULL},
      {"GET", "/", "h/x", NULL, NULL},
      {"GET", "/", "user@h", NULL, NULL},
      {"GET", "/", "", NULL, NULL},
      {"GET", "/", NULL, NULL, NULL},
      {"GET", "/", "h", "X-A", "v\r\nInjected: 1"},
      {"GET", "/", "h", "X-A", "v\nInjected: 1"},
      {"GET", "/", "h", "X-A", "v\r"},
      {"GET", "/", "h", "X-A", "v\x01"},
      {"GET", "/", "h", "X-A", "v\x7f"},
      {"GET", "/", "h", "X-A\r\nInjected", "v"},
      {"GET", "/", "h", "X-A\n", "v"},
      {"GET", "/", "h", "X A", "v"},
      {"GET", "/", "h", "X:A", "v"},
      {"GET", "/", "h", "", "v"},
      {"GET", "/", "h", NULL, "v"},
      {"GET", "/", "h", "X-A", NULL},
      {"GET", "/", "h", "Host", "evil"},
      {"GET", "/", "h", "content-length", "5"},
      {"GET", "/", "h", "Transfer-Encoding", "chunked"},
  };
  mcp_buf b;
  mcp__buf_init(&b);
  mcp__buf_append(&b, "keep", 4);
  for (size_t i = 0; i < N_(bad); i++) {
    mcp_h1_header h[2] = {{"Accept", "*/*"}, {bad[i].name, bad[i].value}};
    size_t nh = bad[i].name || bad[i].value ? 2 : 1;
    ck_assert_msg(mcp__h1_build_request(&b, bad[i].method, bad[i].target, bad[i].authority, h, nh,
                                        NULL, 0) == MCP_EINVAL,
                  "case %zu accepted", i);
    ck_assert_uint_eq(b.len, 4);
    ck_assert_str_eq(b.data, "keep");
  }
  /* A body length without a body, headers count without headers. */
  ck_assert_int_eq(mcp__h1_build_request(&b, "POST", "/", "h", NULL, 0, NULL, 3), MCP_EINVAL);
  ck_assert_int_eq(mcp__h1_build_request(&b, "POST", "/", "h", NULL, 1, NULL, 0), MCP_EINVAL);
  ck_assert_str_eq(b.data, "keep");
  mcp__buf_free(&b);
}
END_TEST

START_TEST(header_find) {
  mcp_h1_header h[] = {
      {"Content-Type", "text/event-stream"}, {"mcp-session-id", "s1"}, {"MCP-Session-Id", "s2"}};
  ck_assert_str_eq(mcp__h1_header_find(h, 3, "content-type"), "text/event-stream");
  ck_assert_str_eq(mcp__h1_header_find(h, 3, "Mcp-Session-Id"), "s1");
  ck_assert_ptr_null(mcp__h1_header_find(h, 3, "Content-Length"));
  ck_assert_ptr_null(mcp__h1_header_find(h, 0, "Content-Type"));
}
END_TEST

/* ---- allocation failure ---------------------------------------------------------------- */

START_TEST(alloc_failure_parse) {
  static const char in[] =
      "HTTP/1.1 100 Continue\r\n\r\n"
      "HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\nC: 3\r\nTransfer-Encoding: chunked\r\n\r\n"
      "3\r\nabc\r\n0\r\nT: 1\r\n\r\n"
      "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nde";
  size_t n = strlen(in);
  char *full = run_cuts(in, n, NULL, 0, false, true);
  for (long k = 0;; k++) {
    mcp__alloc_fail_after(k);
    rec r;
    memset(&r, 0, sizeof(r));
    str_adds(&r.log, "");
    r.p = mcp__h1_new(0, 0, &rec_cb, &r);
    int rc = MCP_OK;
    if (r.p) {
      for (size_t i = 0; i < n && rc == MCP_OK; i++) rc = mcp__h1_feed(r.p, in + i, 1);
      if (rc == MCP_OK) {
        char buf[16];
        snprintf(buf, sizeof(buf), "E%d\n", mcp__h1_eof(r.p));
        str_adds(&r.log, buf);
      } else {
        ck_assert_int_eq(rc, MCP_ENOMEM);
        ck_assert_str_eq(mcp__h1_error(r.p), "out of memory");
        ck_assert_int_eq(mcp__h1_feed(r.p, "x", 1), MCP_ENOMEM);
      }
    }
    mcp__alloc_fail_after(-1);
    bool ok = r.p && rc == MCP_OK;
    if (ok) {
      flush_body(&r);
      ck_assert_str_eq(r.log.p, full);
    }
    rec_free(&r);
    if (ok) break;
    ck_assert_int_lt(k, 100);
  }
  free(full);
}
END_TEST

START_TEST(alloc_failure_build) {
  mcp_h1_header h[] = {{"Accept", "application/json"}};
  for (long k = 0;; k++) {
    mcp_buf b;
    mcp__buf_init(&b);
    mcp__alloc_fail_after(k);
    int rc = mcp__h1_build_request(&b, "POST", "/mcp", "h", h, 1, "{}", 2);
    mcp__alloc_fail_after(-1);
    if (rc == MCP_OK) {
      ck_assert_str_eq(b.data, "POST /mcp HTTP/1.1\r\nHost: h\r\nAccept: "
                               "application/json\r\nContent-Length: 2\r\n\r\n{}");
      mcp__buf_free(&b);
      break;
    }
    ck_assert_int_eq(rc, MCP_ENOMEM);
    ck_assert_uint_eq(b.len, 0);
    mcp__buf_free(&b);
    ck_assert_int_lt(k, 100);
  }
}
END_TEST

static Suite *h1_suite(void) {
  Suite *s = suite_create("h1");
  TCase *tc = tcase_create("framing");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, content_length);
  tcase_add_test(tc, chunked);
  tcase_add_test(tc, close_delimited);
  tcase_add_test(tc, no_body);
  tcase_add_test(tc, interim_responses);
  tcase_add_test(tc, keep_alive_reuse);
  tcase_add_test(tc, connection_close);
  suite_add_tcase(s, tc);
  tc = tcase_create("errors");
  tcase_add_loop_test(tc, malformed, 0, (int)N_(bads));
  tcase_add_test(tc, limits);
  tcase_add_test(tc, huge_chunk_and_length);
  tcase_add_test(tc, eof_cases);
  suite_add_tcase(s, tc);
  tc = tcase_create("flow");
  tcase_add_test(tc, stop_and_resume);
  tcase_add_test(tc, stop_at_bodiless_then_eof);
  tcase_add_test(tc, sse_over_chunked);
  suite_add_tcase(s, tc);
  tc = tcase_create("requests");
  tcase_add_test(tc, build_request);
  tcase_add_test(tc, build_request_refuses_injection);
  tcase_add_test(tc, header_find);
  suite_add_tcase(s, tc);
  tc = tcase_create("alloc");
  tcase_add_test(tc, alloc_failure_parse);
  tcase_add_test(tc, alloc_failure_build);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(h1_suite()); }
