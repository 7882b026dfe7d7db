/* SPDX-License-Identifier: MIT */
/*
 * check_sse.c: the text/event-stream parser.  Every split of the input must
 * give the same events; line endings (CR, LF, CRLF, CR|LF across feeds),
 * BOM, comments, fields, id persistence, retry, priming events, the end of
 * the stream, oversize events, stopping from on_event and allocation
 * failure.  A small reference model written straight from the WHATWG text
 * (whole input at once, line by line) checks random streams under random
 * cuts.
 */
#include "config.h"

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "mcp_sse.h"

/* ---- event recorder -------------------------------------------------------- */

/* What the parser reported, in order: "E<type>|<id>|<data>" or "R<ms>".
 * Data may hold NUL bytes, so each record keeps its length. */
typedef struct events {
  char **ev;
  size_t *len;
  size_t n, cap;
  int stop_at; /* on_event returns non-zero for the event with this index */
  size_t nevents;
} events;

static void ev_push(events *e, const char *s, size_t len) {
  if (e->n == e->cap) {
    e->cap = e->cap ? e->cap * 2 : 16;
    e->ev = realloc(e->ev, e->cap * sizeof(char *));
    e->len = realloc(e->len, e->cap * sizeof(size_t));
    ck_assert(e->ev && e->len);
  }
  char *c = malloc(len + 1);
  ck_assert_ptr_nonnull(c);
  memcpy(c, s, len);
  c[len] = '\0';
  e->ev[e->n] = c;
  e->len[e->n++] = len;
}

static void ev_event(events *e, const char *type, const char *data, size_t data_len,
                     const char *id) {
  size_t tl = strlen(type), il = strlen(id);
  size_t len = 1 + tl + 1 + il + 1 + data_len;
  char *s = malloc(len);
  ck_assert_ptr_nonnull(s);
  s[0] = 'E';
  memcpy(s + 1, type, tl);
  s[1 + tl] = '|';
  memcpy(s + 2 + tl, id, il);
  s[2 + tl + il] = '|';
  memcpy(s + 3 + tl + il, data, data_len);
  ev_push(e, s, len);
  free(s);
}

static int rec_event(void *user, const char *type, const char *data, size_t data_len,
                     const char *id) {
  events *e = user;
  ck_assert_int_eq(data[data_len], '\0');
  ck_assert_ptr_nonnull(type);
  ck_assert_ptr_nonnull(id);
  ev_event(e, type, data, data_len, id);
  size_t idx = e->nevents++;
  return e->stop_at >= 0 && (size_t)e->stop_at == idx;
}

static void rec_retry(void *user, uint64_t ms) {
  char buf[32];
  int n = snprintf(buf, sizeof(buf), "R%llu", (unsigned long long)ms);
  ev_push(user, buf, (size_t)n);
}

static const mcp_sse_callbacks rec_cb = {rec_event, rec_retry};

static void ev_init(events *e) {
  memset(e, 0, sizeof(*e));
  e->stop_at = -1;
}

static void ev_free(events *e) {
  for (size_t i = 0; i < e->n; i++) free(e->ev[i]);
  free(e->ev);
  free(e->len);
  memset(e, 0, sizeof(*e));
}

/* Expected records are C strings (no NUL in data). */
static void ev_expect(const events *e, const char *const *want, size_t nwant) {
  for (size_t i = 0; i < e->n && i < nwant; i++)
    ck_assert_msg(e->len[i] == strlen(want[i]) && memcmp(e->ev[i], want[i], e->len[i]) == 0,
                  "record %zu: got \"%s\", want \"%s\"", i, e->ev[i], want[i]);
  ck_assert_uint_eq(e->n, nwant);
}

static void ev_expect_same(const events *a, const events *b) {
  ck_assert_uint_eq(a->n, b->n);
  for (size_t i = 0; i < a->n; i++) {
    ck_assert_uint_eq(a->len[i], b->len[i]);
    ck_assert_msg(memcmp(a->ev[i], b->ev[i], a->len[i]) == 0, "record %zu: \"%s\" vs \"%s\"", i,
                  a->ev[i], b->ev[i]);
  }
}

#define N_(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Feeds |in| in pieces ending at |cuts| (increasing, each in (0, n)) and
 * records the events; returns the first non-OK feed status (MCP_OK if
 * none).  The last event ID goes to |last_id| (if not NULL, malloc'd).
 */
static int feed_cuts(size_t max_event, const char *in, size_t n, const size_t *cuts, size_t ncuts,
                     events *out, char **last_id) {
  mcp_sse *p = mcp__sse_new(max_event, &rec_cb, out);
  ck_assert_ptr_nonnull(p);
  int first = MCP_OK;
  size_t at = 0;
  for (size_t i = 0; i <= ncuts; i++) {
    size_t to = i < ncuts ? cuts[i] : n;
    int rc = mcp__sse_feed(p, in + at, to - at);
    ck_assert(rc == MCP_OK || rc == MCP_ETOOBIG);
    ck_assert_uint_eq(mcp__sse_consumed(p), to - at);
    if (first == MCP_OK) first = rc;
    at = to;
  }
  if (last_id) *last_id = strdup(mcp__sse_last_event_id(p));
  mcp__sse_free(p);
  return first;
}

static int feed_all(size_t max_event, const char *in, size_t n, events *out) {
  ev_init(out);
  return feed_cuts(max_event, in, n, NULL, 0, out, NULL);
}

static int feed_bytes(size_t max_event, const char *in, size_t n, events *out) {
  ev_init(out);
  size_t *cuts = malloc((n ? n : 1) * sizeof(size_t));
  for (size_t i = 1; i < n; i++) cuts[i - 1] = i;
  int rc = feed_cuts(max_event, in, n, cuts, n ? n - 1 : 0, out, NULL);
  free(cuts);
  return rc;
}

/* Checks |in| (a C string) gives |want| fed at once, byte by byte and split
 * at every point into two and three pieces. */
static void expect_stream(size_t max_event, const char *in, const char *const *want, size_t nwant) {
  size_t n = strlen(in);
  events a, b;
  feed_all(max_event, in, n, &a);
  ev_expect(&a, want, nwant);
  feed_bytes(max_event, in, n, &b);
  ev_expect_same(&a, &b);
  ev_free(&b);
  for (size_t i = 1; i < n; i++) {
    for (size_t j = i; j < n; j++) {
      size_t cuts[2] = {i, j};
      ev_init(&b);
      feed_cuts(max_event, in, n, cuts, i == j ? 1 : 2, &b, NULL);
      ev_expect_same(&a, &b);
      ev_free(&b);
    }
  }
  ev_free(&a);
}

#define EXPECT(in, ...) \
  do { \
    static const char *const want_[] = {__VA_ARGS__}; \
    expect_stream(0, in, want_, N_(want_)); \
  } while (0)
#define EXPECT_NONE(in) expect_stream(0, in, NULL, 0)

/* ---- the standard's rules ------------------------------------------------------ */

START_TEST(basic_events) {
  EXPECT("data: hello\n\n", "Emessage||hello");
  EXPECT("data:hello\n\n", "Emessage||hello");
  EXPECT("data:  two spaces\n\n", "Emessage|| two spaces");
  EXPECT("event: add\ndata: 1\n\ndata: 2\n\n", "Eadd||1", "Emessage||2");
  EXPECT("event: a\nevent: b\ndata: x\n\n", "Eb||x");
  EXPECT("event\ndata: x\n\n", "Emessage||x");
  EXPECT("event:\ndata: x\n\n", "Emessage||x");
  EXPECT("data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n",
         "Emessage||{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}");
  /* The colon splits at the first ":" only. */
  EXPECT("data: a:b: c\n\n", "Emessage||a:b: c");
  /* Field names are exact and case-sensitive; unknown ones are ignored. */
  EXPECT("Data: x\nDATA: y\ndata : z\ndatax: w\nfoo: v\ndata: ok\n\n", "Emessage||ok");
  EXPECT_NONE("dat\n\n");
  EXPECT_NONE("eventsource: x\n\n");
}
END_TEST

START_TEST(multi_line_data) {
  EXPECT("data: a\ndata:b\ndata\ndata: \n\n", "Emessage||a\nb\n\n");
  EXPECT("data\n\n", "Emessage||");
  EXPECT("data:\n\n", "Emessage||");
  EXPECT("data\ndata\n\n", "Emessage||\n");
  EXPECT("data: x\n\n\n\ndata: y\n\n", "Emessage||x", "Emessage||y");
}
END_TEST

START_TEST(line_endings) {
  EXPECT("data: a\r\rdata: b\r\n\r\ndata: c\n\n", "Emessage||a", "Emessage||b", "Emessage||c");
  EXPECT("data: a\rdata: b\r\r", "Emessage||a\nb");
  EXPECT("data: a\r\ndata: b\n\r", "Emessage||a\nb");
  EXPECT("data: a\n\rdata: b\r\n\n", "Emessage||a", "Emessage||b");
  /* LF CR is two line endings: a blank line after "a". */
  EXPECT("data: a\n\r\n", "Emessage||a");
  /* CRLF CRLF at the end. */
  EXPECT("id: 1\r\ndata: x\r\n\r\n", "Emessage|1|x");
}
END_TEST

START_TEST(cr_lf_split_across_feeds) {
  /* One line ending split over two feeds: "a" and "b" are one event.
   * Taken as two endings, the LF would be a blank line dispatching "a". */
  static const char in[] = "data: a\r\ndata: b\r\n\r\n";
  size_t cut = strlen("data: a\r");
  events e;
  ev_init(&e);
  size_t cuts[] = {cut};
  feed_cuts(0, in, strlen(in), cuts, 1, &e, NULL);
  static const char *const want[] = {"Emessage||a\nb"};
  ev_expect(&e, want, 1);
  ev_free(&e);

  /* The same with an empty feed in between. */
  mcp_sse *p = mcp__sse_new(0, &rec_cb, &e);
  ev_init(&e);
  ck_assert_int_eq(mcp__sse_feed(p, in, cut), MCP_OK);
  ck_assert_int_eq(mcp__sse_feed(p, "", 0), MCP_OK);
  ck_assert_int_eq(mcp__sse_feed(p, in + cut, strlen(in) - cut), MCP_OK);
  ev_expect(&e, want, 1);
  mcp__sse_free(p);
  ev_free(&e);
}
END_TEST

START_TEST(bom) {
  EXPECT("\xEF\xBB\xBF"
         "data: x\n\n",
         "Emessage||x");
  EXPECT("\xEF\xBB\xBF\n"
         "data: x\n\n",
         "Emessage||x");
  /* Only one BOM, only at the start: otherwise it is part of a name. */
  EXPECT("\xEF\xBB\xBF\xEF\xBB\xBF"
         "data: x\n\ndata: y\n\n",
         "Emessage||y");
  EXPECT("\xEF\xBB"
         "data: x\n\ndata: y\n\n",
         "Emessage||y");
  EXPECT("\xEF"
         "data: x\n\ndata: y\n\n",
         "Emessage||y");
  EXPECT("data: x\n\n\xEF\xBB\xBF"
         "data: y\n\ndata: z\n\n",
         "Emessage||x", "Emessage||z");
  /* BOM bytes inside a value are data. */
  EXPECT("data: \xEF\xBB\xBF\n\n", "Emessage||\xEF\xBB\xBF");
  /* A partial BOM followed by a line ending is an unknown field. */
  EXPECT("\xEF\xBB\ndata: y\n\n", "Emessage||y");
}
END_TEST

START_TEST(comments) {
  EXPECT_NONE(": ping\n\n");
  EXPECT_NONE(":\n\n:\n\n");
  EXPECT("data: x\n: comment\n\n", "Emessage||x");
  EXPECT(": a\r: b\rdata: x\r: c\r\r", "Emessage||x");
  /* A comment is not a blank line. */
  EXPECT("data: x\n:\ndata: y\n\n", "Emessage||x\ny");
}
END_TEST

START_TEST(id_handling) {
  /* The id persists across events until changed; "id" alone resets it. */
  EXPECT("id: 1\ndata: a\n\ndata: b\n\nid\ndata: c\n\nid: 7\ndata: d\n\n", "Emessage|1|a",
         "Emessage|1|b", "Emessage||c", "Emessage|7|d");
  /* Set anywhere in the event, even after the data. */
  EXPECT("data: a\nid: 2\n\n", "Emessage|2|a");
  EXPECT("id: 1\nid: 2\ndata: a\n\n", "Emessage|2|a");
  EXPECT("id:  x\ndata: a\n\n", "Emessage| x|a");
  /* Unicode and colons pass through. */
  EXPECT("id: \xC3\xA9:1\ndata: a\n\n", "Emessage|\xC3\xA9:1|a");
}
END_TEST

START_TEST(id_with_nul_ignored) {
  static const char in[] = "id: 1\ndata: a\n\nid: 2\0x\ndata: b\n\nid: \0\ndata: c\n\n";
  events e;
  char *last = NULL;
  ev_init(&e);
  feed_cuts(0, in, sizeof(in) - 1, NULL, 0, &e, &last);
  static const char *const want[] = {"Emessage|1|a", "Emessage|1|b", "Emessage|1|c"};
  ev_expect(&e, want, 3);
  ck_assert_str_eq(last, "1");
  free(last);
  ev_free(&e);
  /* Byte by byte. */
  events f;
  feed_bytes(0, in, sizeof(in) - 1, &f);
  ev_expect(&f, want, 3);
  ev_free(&f);
}
END_TEST

START_TEST(event_type_with_nul) {
  /* Found by fuzz_sse: "event:\0message" used to reach on_event as the
   * type "" (cut at the NUL).  Such an event is not reported now; the id
   * still counts, and the next event has its own type again. */
  static const char in[] = "id: 1\r\nevent:\0message\r\ndata: x\r\n\r\n"
                           "event: a\0\ndata: y\n\ndata: z\n\n";
  static const char *const want[] = {"Emessage|1|z"};
  events e;
  char *last = NULL;
  ev_init(&e);
  feed_cuts(0, in, sizeof(in) - 1, NULL, 0, &e, &last);
  ev_expect(&e, want, 1);
  ck_assert_str_eq(last, "1");
  free(last);
  ev_free(&e);
  feed_bytes(0, in, sizeof(in) - 1, &e);
  ev_expect(&e, want, 1);
  ev_free(&e);
}
END_TEST

START_TEST(retry_field) {
  EXPECT("retry: 1500\n", "R1500");
  EXPECT("retry:0\n", "R0");
  EXPECT("retry: 007\n", "R7");
  EXPECT_NONE("retry: 15x\nretry:\nretry\nretry: -1\nretry:  5\nretry: 1.5\n"
              "retry: 1 \nretry: +1\n");
  EXPECT("retry: 99999999999999999999999\n", "R18446744073709551615");
  EXPECT("retry: 18446744073709551615\n", "R18446744073709551615");
  EXPECT("retry: 18446744073709551616\n", "R18446744073709551615");
  /* Applied at once, not at dispatch, and not an event. */
  EXPECT("retry: 10\ndata: a\n\n", "R10", "Emessage||a");
  EXPECT("retry: 10\n", "R10");

  mcp_sse *p = mcp__sse_new(0, NULL, NULL);
  ck_assert_uint_eq(mcp__sse_retry_ms(p), 0);
  ck_assert_int_eq(mcp__sse_feed(p, "retry: 3000\nretry: x\n", 21), MCP_OK);
  ck_assert_uint_eq(mcp__sse_retry_ms(p), 3000);
  mcp__sse_free(p);
}
END_TEST

START_TEST(priming_event) {
  /* MCP's priming event: an id and nothing else.  No event is dispatched
   * (the data buffer is empty) but the last event ID is updated. */
  events e;
  ev_init(&e);
  mcp_sse *p = mcp__sse_new(0, &rec_cb, &e);
  ck_assert_str_eq(mcp__sse_last_event_id(p), "");
  ck_assert_int_eq(mcp__sse_feed(p, "id: prime-1\n", 12), MCP_OK);
  /* Not yet: the id becomes the stream's at the blank line. */
  ck_assert_str_eq(mcp__sse_last_event_id(p), "");
  ck_assert_int_eq(mcp__sse_feed(p, "\n", 1), MCP_OK);
  ck_assert_str_eq(mcp__sse_last_event_id(p), "prime-1");
  ck_assert_uint_eq(e.n, 0);
  /* With an empty data field, the event is dispatched with empty data
   * (the data buffer holds "\n"), as browsers do. */
  ck_assert_int_eq(mcp__sse_feed(p, "id: prime-2\ndata:\n\n", 19), MCP_OK);
  static const char *const want[] = {"Emessage|prime-2|"};
  ev_expect(&e, want, 1);
  ck_assert_str_eq(mcp__sse_last_event_id(p), "prime-2");
  /* An event type alone dispatches nothing either. */
  ck_assert_int_eq(mcp__sse_feed(p, "event: x\nid: 3\n\n", 16), MCP_OK);
  ck_assert_uint_eq(e.n, 1);
  ck_assert_str_eq(mcp__sse_last_event_id(p), "3");
  ck_assert_int_eq(mcp__sse_feed(p, "data: y\n\n", 9), MCP_OK);
  static const char *const want2[] = {"Emessage|prime-2|", "Emessage|3|y"};
  ev_expect(&e, want2, 2);
  mcp__sse_free(p);
  ev_free(&e);
}
END_TEST

START_TEST(finish_discards_unfinished_event) {
  events e;
  ev_init(&e);
  mcp_sse *p = mcp__sse_new(0, &rec_cb, &e);
  ck_assert_int_eq(mcp__sse_feed(p, "data: a\n\ndata: b\n", 18), MCP_OK);
  ck_assert_int_eq(mcp__sse_finish(p), MCP_ECLOSED);
  static const char *const want[] = {"Emessage||a"};
  ev_expect(&e, want, 1);
  /* An unterminated last line too. */
  ck_assert_int_eq(mcp__sse_feed(p, "data: c\n\ndata: d", 16), MCP_OK);
  ck_assert_int_eq(mcp__sse_finish(p), MCP_ECLOSED);
  /* A stream that ends between events ends cleanly; so does one that
   * ends inside a comment. */
  ck_assert_int_eq(mcp__sse_feed(p, "data: e\n\n", 9), MCP_OK);
  ck_assert_int_eq(mcp__sse_finish(p), MCP_OK);
  ck_assert_int_eq(mcp__sse_feed(p, ": keepalive", 11), MCP_OK);
  ck_assert_int_eq(mcp__sse_finish(p), MCP_OK);
  /* Found by fuzz_sse: an unknown field's name split across feeds made
   * finish() report a cut event; it must not depend on the split. */
  ck_assert_int_eq(mcp__sse_feed(p, "d", 1), MCP_OK);
  ck_assert_int_eq(mcp__sse_feed(p, "\xa3\x8b\x9e\xc5\xdf", 5), MCP_OK);
  ck_assert_int_eq(mcp__sse_finish(p), MCP_OK);
  ck_assert_int_eq(mcp__sse_feed(p, "d\xa3\x8b\x9e\xc5\xdf", 6), MCP_OK);
  ck_assert_int_eq(mcp__sse_finish(p), MCP_OK);
  ck_assert_int_eq(mcp__sse_feed(p, "foo:", 4), MCP_OK);
  ck_assert_int_eq(mcp__sse_finish(p), MCP_OK);
  ck_assert_int_eq(mcp__sse_feed(p, "dat", 3), MCP_OK);
  ck_assert_int_eq(mcp__sse_finish(p), MCP_ECLOSED);
  ck_assert_int_eq(mcp__sse_finish(p), MCP_OK);
  /* A trailing CR ends the line; a blank line is still missing. */
  ck_assert_int_eq(mcp__sse_feed(p, "data: f\r", 8), MCP_OK);
  ck_assert_int_eq(mcp__sse_finish(p), MCP_ECLOSED);
  static const char *const want2[] = {"Emessage||a", "Emessage||c", "Emessage||e"};
  ev_expect(&e, want2, 3);
  mcp__sse_free(p);
  ev_free(&e);
}
END_TEST

START_TEST(finish_starts_a_new_stream) {
  events e;
  ev_init(&e);
  mcp_sse *p = mcp__sse_new(0, &rec_cb, &e);
  /* "id: 6" is read but its event never ends: the last event ID stays 5,
   * and the next stream starts from 5. */
  static const char s1[] = "id: 5\ndata: a\n\nid: 6\ndata: b\n";
  ck_assert_int_eq(mcp__sse_feed(p, s1, strlen(s1)), MCP_OK);
  ck_assert_int_eq(mcp__sse_finish(p), MCP_ECLOSED);
  ck_assert_str_eq(mcp__sse_last_event_id(p), "5");
  /* The new stream may start with a BOM again. */
  ck_assert_int_eq(mcp__sse_feed(p, "data: x\r", 8), MCP_OK);
  ck_assert_int_eq(mcp__sse_finish(p), MCP_ECLOSED);
  static const char s2[] = "\xEF\xBB\xBF\ndata: c\n\n";
  ck_assert_int_eq(mcp__sse_feed(p, s2, strlen(s2)), MCP_OK);
  static const char *const want[] = {"Emessage|5|a", "Emessage|5|c"};
  ev_expect(&e, want, 2);
  ck_assert_int_eq(mcp__sse_finish(p), MCP_OK);
  mcp__sse_free(p);
  ev_free(&e);
}
END_TEST

/* ---- limits ------------------------------------------------------------------ */

START_TEST(oversize_event_skipped) {
  events e;
  /* max 8: data of exactly 8 bytes passes, 9 does not. */
  static const char in[] = "data: 12345678\n\n"
                           "data: 123456789\n\n"
                           "data: ok1\n\n"
                           "data: 1234\ndata: 567\n\n"
                           "data: 1234\ndata: 5678\ndata: more\nid: lost\n\n"
                           "id: kept\ndata: ok2\n\n"
                           "data\ndata\ndata\ndata\ndata\ndata\ndata\ndata\ndata\n\n"
                           "data\ndata\ndata\ndata\ndata\ndata\ndata\ndata\ndata\ndata\n\n"
                           "event: 123456789\ndata: x\n\n"
                           "event: 12345678\ndata: y\n\n";
  static const char *const want[] = {"Emessage||12345678",
                                     "Emessage||ok1",
                                     "Emessage||1234\n567",
                                     "Emessage|kept|ok2",
                                     "Emessage|kept|\n\n\n\n\n\n\n\n",
                                     "E12345678|kept|y"};
  size_t n = strlen(in);
  ck_assert_int_eq(feed_all(8, in, n, &e), MCP_ETOOBIG);
  ev_expect(&e, want, N_(want));
  ev_free(&e);
  ck_assert_int_eq(feed_bytes(8, in, n, &e), MCP_ETOOBIG);
  ev_expect(&e, want, N_(want));
  ev_free(&e);
  for (size_t i = 1; i < n; i++) {
    size_t cuts[] = {i};
    ev_init(&e);
    feed_cuts(8, in, n, cuts, 1, &e, NULL);
    ev_expect(&e, want, N_(want));
    ev_free(&e);
  }
}
END_TEST

START_TEST(oversize_id) {
  /* An id above the field cap drops its event and leaves the last ID;
   * one that contains NUL is ignored whatever its length. */
  size_t big = MCP_SSE_MAX_FIELD + 1;
  size_t n = 0;
  char *in = malloc(2 * big + 200);
  n += (size_t)sprintf(in + n, "id: a\ndata: 1\n\nid: ");
  memset(in + n, 'x', big);
  n += big;
  n += (size_t)sprintf(in + n, "\ndata: 2\n\ndata: 3\n\nid: ");
  memset(in + n, 'y', big);
  n += big;
  in[n++] = '\0';
  n += (size_t)sprintf(in + n, "\ndata: 4\n\n");
  static const char *const want[] = {"Emessage|a|1", "Emessage|a|3", "Emessage|a|4"};
  events e;
  ck_assert_int_eq(feed_all(0, in, n, &e), MCP_ETOOBIG);
  ev_expect(&e, want, 3);
  ev_free(&e);
  /* Cut inside the long values, before the NUL. */
  size_t cuts[] = {30, 40 + big / 2, n - 20 - big / 2, n - 15};
  ev_init(&e);
  ck_assert_int_eq(feed_cuts(0, in, n, cuts, N_(cuts), &e, NULL), MCP_ETOOBIG);
  ev_expect(&e, want, 3);
  ev_free(&e);
  /* Exactly at the cap is fine. */
  n = (size_t)sprintf(in, "id: ");
  memset(in + n, 'z', MCP_SSE_MAX_FIELD);
  n += MCP_SSE_MAX_FIELD;
  n += (size_t)sprintf(in + n, "\ndata: 5\n\n");
  ck_assert_int_eq(feed_all(0, in, n, &e), MCP_OK);
  ck_assert_uint_eq(e.n, 1);
  ck_assert_uint_eq(e.len[0], strlen("Emessage||5") + MCP_SSE_MAX_FIELD);
  ev_free(&e);
  free(in);
}
END_TEST

START_TEST(oversize_bounded_memory) {
  /* 8 MB of data in 1000-byte feeds to a 4 KiB parser: after the cap is
   * passed nothing more is stored, so a budget of a few allocations is
   * enough for all of it (growing to 8 MB would take 15). */
  events e;
  ev_init(&e);
  mcp_sse *p = mcp__sse_new(4096, &rec_cb, &e);
  char chunk[1000];
  memset(chunk, 'x', sizeof(chunk));
  ck_assert_int_eq(mcp__sse_feed(p, "data: ", 6), MCP_OK);
  mcp__alloc_fail_after(8);
  int first = MCP_OK;
  for (int i = 0; i < 8 * 1024; i++) {
    int rc = mcp__sse_feed(p, chunk, sizeof(chunk));
    if (first == MCP_OK) first = rc;
    ck_assert(rc == MCP_OK || rc == MCP_ETOOBIG);
  }
  ck_assert_int_eq(first, MCP_ETOOBIG);
  ck_assert_int_eq(mcp__sse_feed(p, "\ndata: more\n\ndata: ok\n\n", 23), MCP_OK);
  mcp__alloc_fail_after(-1);
  static const char *const want[] = {"Emessage||ok"};
  ev_expect(&e, want, 1);
  mcp__sse_free(p);
  ev_free(&e);
}
END_TEST

/* ---- stopping --------------------------------------------------------------- */

START_TEST(stop_and_resume) {
  static const char in[] = "data: a\r\n\r\ndata: b\r\r: x\ndata: c\n\ndata: d\n\n";
  static const char *const want[] = {"Emessage||a", "Emessage||b", "Emessage||c", "Emessage||d"};
  size_t n = strlen(in);
  for (int stop = 0; stop < 4; stop++) {
    events e;
    ev_init(&e);
    mcp_sse *p = mcp__sse_new(0, &rec_cb, &e);
    /* Stop at every event in turn; feed the rest each time. */
    size_t at = 0;
    int stops = 0;
    e.stop_at = stop;
    while (at < n) {
      int rc = mcp__sse_feed(p, in + at, n - at);
      size_t used = mcp__sse_consumed(p);
      if (rc == MCP__EAGAIN) {
        stops++;
        ck_assert_uint_lt(used, n - at + 1);
        e.stop_at = -1;
      } else {
        ck_assert_int_eq(rc, MCP_OK);
        ck_assert_uint_eq(used, n - at);
      }
      at += used;
    }
    ck_assert_int_eq(stops, 1);
    ev_expect(&e, want, 4);
    ck_assert_int_eq(mcp__sse_finish(p), MCP_OK);
    mcp__sse_free(p);
    ev_free(&e);
  }
}
END_TEST

START_TEST(stop_reports_position) {
  events e;
  ev_init(&e);
  e.stop_at = 0;
  mcp_sse *p = mcp__sse_new(0, &rec_cb, &e);
  static const char in[] = "\xEF\xBB\xBF"
                           "data: a\n\nREST";
  ck_assert_int_eq(mcp__sse_feed(p, in, strlen(in)), MCP__EAGAIN);
  ck_assert_uint_eq(mcp__sse_consumed(p), strlen(in) - 4);
  mcp__sse_free(p);
  ev_free(&e);
}
END_TEST

START_TEST(null_callbacks) {
  mcp_sse *p = mcp__sse_new(0, NULL, NULL);
  ck_assert_int_eq(mcp__sse_feed(p, NULL, 0), MCP_OK);
  ck_assert_int_eq(mcp__sse_feed(p, "id: 1\nretry: 5\ndata: x\n\n", 24), MCP_OK);
  ck_assert_str_eq(mcp__sse_last_event_id(p), "1");
  ck_assert_uint_eq(mcp__sse_retry_ms(p), 5);
  mcp__sse_free(p);
  mcp__sse_free(NULL);
}
END_TEST

/* ---- every split, and a reference model -------------------------------------- */

static const char sample[] = "\xEF\xBB\xBF: hello\r\n"
                             "retry: 2500\r\n"
                             "id: 1\r\n"
                             "event: message\r\n"
                             "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\r\n"
                             "\r\n"
                             "data: line1\rdata:line2\r\r"
                             "id\n"
                             "data\n"
                             "\n"
                             ":\n"
                             "event: note\ndata: x\nid: 9\n\n"
                             "id: 10\n\n"
                             "data: tail\n"
                             "data: cut";

START_TEST(every_split) {
  static const char *const want[] = {
      "R2500",
      "Emessage|1|{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}",
      "Emessage|1|line1\nline2",
      "Emessage||",
      "Enote|9|x",
  };
  expect_stream(0, sample, want, N_(want));
}
END_TEST

/* A growable byte string for the model. */
typedef struct bstr {
  char *p;
  size_t n;
} bstr;

static void bs_set(bstr *b, const char *s, size_t n) {
  b->p = realloc(b->p, n + 1);
  memcpy(b->p, s, n);
  b->p[n] = '\0';
  b->n = n;
}

static void bs_add(bstr *b, const char *s, size_t n) {
  b->p = realloc(b->p, b->n + n + 1);
  memcpy(b->p + b->n, s, n);
  b->n += n;
  b->p[b->n] = '\0';
}

/*
 * The reference: the WHATWG steps on the whole input, line by line, plus
 * our limit rule (an event whose data, with the "\n"s between its lines,
 * would pass |max|, or whose event/id value would pass min(max, 64 KiB),
 * is dropped up to the next blank line, which still commits the id).
 */
static void reference(size_t max, const char *in, size_t n, events *out, char **last_id) {
  size_t max_field = max < MCP_SSE_MAX_FIELD ? max : MCP_SSE_MAX_FIELD;
  bstr data = {0}, type = {0}, idbuf = {0}, last = {0};
  bs_set(&data, "", 0);
  bs_set(&type, "", 0);
  bs_set(&idbuf, "", 0);
  bs_set(&last, "", 0);
  int skipping = 0;
  ev_init(out);
  size_t i = 0;
  if (n >= 3 && memcmp(in, "\xEF\xBB\xBF", 3) == 0) i = 3;
  for (;;) {
    size_t j = i;
    while (j < n && in[j] != '\r' && in[j] != '\n') j++;
    if (j == n) break; /* an unterminated line is never processed */
    const char *line = in + i;
    size_t len = j - i;
    i = (in[j] == '\r' && j + 1 < n && in[j + 1] == '\n') ? j + 2 : j + 1;

    if (len == 0) {
      bs_set(&last, idbuf.p, idbuf.n);
      if (skipping) {
        skipping = 0;
        continue;
      }
      if (data.n == 0) {
        bs_set(&type, "", 0);
        continue;
      }
      if (data.p[data.n - 1] == '\n') data.n--;
      if (!memchr(type.p, '\0', type.n))
        ev_event(out, type.n ? type.p : "message", data.p, data.n, last.p);
      bs_set(&data, "", 0);
      bs_set(&type, "", 0);
      continue;
    }
    if (skipping || line[0] == ':') continue;
    const char *colon = memchr(line, ':', len);
    size_t nl = colon ? (size_t)(colon - line) : len;
    const char *v = colon ? colon + 1 : line + len;
    size_t vl = colon ? len - nl - 1 : 0;
    if (vl && v[0] == ' ') {
      v++;
      vl--;
    }
    int drop = 0;
    if (nl == 5 && memcmp(line, "event", 5) == 0) {
      if (vl > max_field) drop = 1;
      else bs_set(&type, v, vl);
    } else if (nl == 4 && memcmp(line, "data", 4) == 0) {
      if (data.n + vl > max) drop = 1;
      else {
        bs_add(&data, v, vl);
        bs_add(&data, "\n", 1);
      }
    } else if (nl == 2 && memcmp(line, "id", 2) == 0) {
      if (memchr(v, '\0', vl)) {
        /* ignored */
      } else if (vl > max_field) {
        drop = 1;
      } else {
        bs_set(&idbuf, v, vl);
      }
    } else if (nl == 5 && memcmp(line, "retry", 5) == 0) {
      int ok = vl > 0;
      uint64_t ms = 0;
      for (size_t k = 0; k < vl && ok; k++) {
        if (v[k] < '0' || v[k] > '9') ok = 0;
        else {
          unsigned d = (unsigned)(v[k] - '0');
          ms = ms > (UINT64_MAX - d) / 10 ? UINT64_MAX : ms * 10 + d;
        }
      }
      if (ok) rec_retry(out, ms);
    }
    if (drop) {
      skipping = 1;
      bs_set(&data, "", 0);
      bs_set(&type, "", 0);
    }
  }
  if (last_id) *last_id = strdup(last.p);
  free(data.p);
  free(type.p);
  free(idbuf.p);
  free(last.p);
}

START_TEST(matches_reference_model) {
  static const char *const tokens[] = {
      "data",         "data:",  "data: ",    "event:", "event", "id:",  "id: ",
      "id",           "retry:", "retry: 1",  "12",     ":",     " ",    "x",
      "yz",           "\r",     "\n",        "\r\n",   "\n\n",  "\r\r", "\0",
      "\xEF\xBB\xBF", "ev",     "ent",       "da",     "ta",    "ping", "\xEF",
      "\xBB",         "a:b",    "0123456789"};
  unsigned seed = 12345;
  char in[1024];
  for (int round = 0; round < 3000; round++) {
    size_t n = 0;
    int ntok = rand_r(&seed) % 60;
    for (int t = 0; t < ntok; t++) {
      size_t k = (size_t)rand_r(&seed) % N_(tokens);
      size_t tl = k == 20 ? 1 : strlen(tokens[k]); /* "\0" */
      if (n + tl > sizeof(in)) break;
      memcpy(in + n, tokens[k], tl);
      n += tl;
    }
    size_t max = (round % 3 == 0) ? 0 : (size_t)(rand_r(&seed) % 24);
    if (max == 0) max = MCP_SSE_DEFAULT_MAX_EVENT;
    events want, got;
    char *want_id = NULL, *got_id = NULL;
    reference(max, in, n, &want, &want_id);

    size_t cuts[8];
    size_t ncuts = n > 1 ? (size_t)rand_r(&seed) % 8 : 0;
    for (size_t c = 0; c < ncuts; c++) cuts[c] = 1 + (size_t)rand_r(&seed) % (n - 1);
    /* sort */
    for (size_t a = 0; a < ncuts; a++)
      for (size_t b = a + 1; b < ncuts; b++)
        if (cuts[b] < cuts[a]) {
          size_t t = cuts[a];
          cuts[a] = cuts[b];
          cuts[b] = t;
        }
    ev_init(&got);
    feed_cuts(max, in, n, cuts, ncuts, &got, &got_id);
    ev_expect_same(&want, &got);
    ck_assert_str_eq(want_id, got_id);
    ev_free(&got);
    free(got_id);

    feed_bytes(max, in, n, &got);
    ev_expect_same(&want, &got);
    ev_free(&got);
    ev_free(&want);
    free(want_id);
  }
}
END_TEST

/* ---- allocation failure ----------------------------------------------------------- */

/* A record without its id ("E<type>|<id>|<data>" to "E<type>||<data>"):
 * a failed run may lose an `id` line, which changes later events' ids. */
static char *without_id(const char *rec, size_t len, size_t *out_len) {
  char *c = malloc(len + 1);
  ck_assert_ptr_nonnull(c);
  memcpy(c, rec, len);
  c[len] = '\0';
  *out_len = len;
  if (c[0] != 'E') return c;
  char *a = memchr(c, '|', len);
  char *b = a ? memchr(a + 1, '|', len - (size_t)(a + 1 - c)) : NULL;
  if (a && b) {
    memmove(a + 1, b, len - (size_t)(b - c) + 1);
    *out_len = len - (size_t)(b - a - 1);
  }
  return c;
}

static int same_but_id(const events *x, size_t i, const events *y, size_t j) {
  size_t la, lb;
  char *a = without_id(x->ev[i], x->len[i], &la);
  char *b = without_id(y->ev[j], y->len[j], &lb);
  int same = la == lb && memcmp(a, b, la) == 0;
  free(a);
  free(b);
  return same;
}

/* Fails the Nth allocation for N = 0, 1, ... until a run sees no failure.
 * A failed run returns MCP_ENOMEM and loses whole events only: what it
 * delivers is a subsequence of the full run's events. */
START_TEST(alloc_failure) {
  events full;
  size_t n = strlen(sample);
  feed_all(0, sample, n, &full);
  for (long k = 0;; k++) {
    events e;
    ev_init(&e);
    int rc = MCP_OK;
    mcp__alloc_fail_after(k);
    mcp_sse *p = mcp__sse_new(0, &rec_cb, &e);
    if (p) {
      /* Byte by byte for the most allocation points. */
      for (size_t i = 0; i < n; i++) {
        int r = mcp__sse_feed(p, sample + i, 1);
        ck_assert(r == MCP_OK || r == MCP_ENOMEM);
        if (rc == MCP_OK) rc = r;
      }
      mcp__sse_finish(p);
      mcp__sse_free(p);
    }
    mcp__alloc_fail_after(-1);
    size_t j = 0;
    for (size_t i = 0; i < e.n; i++) {
      while (j < full.n && !same_but_id(&full, j, &e, i)) j++;
      ck_assert_msg(j < full.n, "run %ld delivered an unexpected \"%s\"", k, e.ev[i]);
      j++;
    }
    if (p && rc == MCP_OK) {
      ev_expect_same(&full, &e);
      ev_free(&e);
      break;
    }
    ev_free(&e);
    ck_assert_int_lt(k, 1000);
  }
  ev_free(&full);
}
END_TEST

static Suite *sse_suite(void) {
  Suite *s = suite_create("sse");
  TCase *tc = tcase_create("rules");
  tcase_add_test(tc, basic_events);
  tcase_add_test(tc, multi_line_data);
  tcase_add_test(tc, line_endings);
  tcase_add_test(tc, cr_lf_split_across_feeds);
  tcase_add_test(tc, bom);
  tcase_add_test(tc, comments);
  tcase_add_test(tc, id_handling);
  tcase_add_test(tc, id_with_nul_ignored);
  tcase_add_test(tc, event_type_with_nul);
  tcase_add_test(tc, retry_field);
  tcase_add_test(tc, priming_event);
  tcase_add_test(tc, finish_discards_unfinished_event);
  tcase_add_test(tc, finish_starts_a_new_stream);
  suite_add_tcase(s, tc);
  tc = tcase_create("limits");
  tcase_add_test(tc, oversize_event_skipped);
  tcase_add_test(tc, oversize_id);
  tcase_add_test(tc, oversize_bounded_memory);
  suite_add_tcase(s, tc);
  tc = tcase_create("feeding");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, stop_and_resume);
  tcase_add_test(tc, stop_reports_position);
  tcase_add_test(tc, null_callbacks);
  tcase_add_test(tc, every_split);
  tcase_add_test(tc, matches_reference_model);
  tcase_add_test(tc, alloc_failure);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(sse_suite()); }
