/* SPDX-License-Identifier: MIT */
/*
 * fuzz_sse.c: libFuzzer target for mcp_sse.
 *
 * Input: one byte choosing the event size cap (below 128: cap = byte + 1,
 * so oversize handling is reached; otherwise the default), one byte
 * seeding the feed cuts, then the stream.  The stream is parsed three
 * ways: all at once, in pseudo-random pieces (or byte by byte), and in
 * pieces with on_event asking to stop after every event (what was left of
 * the piece is fed again).  All
 * three must report the same events, retry values, last event ID and end
 * of stream status.  A fourth pass fails an allocation part way through.
 */
#include "config.h"

#include <stdbool.h>

#include "fuzz_common.h"
#include "mcp_sse.h"

typedef struct ctx {
  flog log;
  int stop;
} ctx;

static int on_event(void *user, const char *type, const char *data, size_t len, const char *id) {
  ctx *c = user;
  FUZZ_CHECK(data[len] == '\0');
  FUZZ_CHECK(type[0] != '\0');
  flog_add(&c->log, "E", 1);
  flog_str(&c->log, type);
  flog_str(&c->log, id);
  flog_u64(&c->log, len);
  flog_add(&c->log, data, len);
  return c->stop;
}

static void on_retry(void *user, uint64_t ms) {
  ctx *c = user;
  flog_add(&c->log, "R", 1);
  flog_u64(&c->log, ms);
}

static const mcp_sse_callbacks cbs = {on_event, on_retry};

/* mode 0: at once; 1: pseudo-random pieces of at most |maxpiece| bytes;
 * 2: pieces of at most 64 bytes, stopping at every event and feeding what
 * was left again; 3: like 1 under allocation failure (results not
 * compared). */
static void run(const char *in, size_t n, size_t max, uint32_t seed, size_t maxpiece, int mode,
                flog *out) {
  ctx c;
  memset(&c, 0, sizeof(c));
  c.stop = mode == 2;
  if (mode == 3) mcp__alloc_fail_after((long)(seed % 8));
  mcp_sse *p = mcp__sse_new(max, &cbs, &c);
  if (!p) {
    FUZZ_CHECK(mode == 3);
    mcp__alloc_fail_after(-1);
    return;
  }
  bool toobig = false;
  size_t at = 0;
  while (at < n) {
    size_t len = mode == 0   ? n - at
                 : mode == 2 ? fuzz_piece(&seed, n - at, 64)
                             : fuzz_piece(&seed, n - at, maxpiece);
    int rc = mcp__sse_feed(p, in + at, len);
    size_t used = mcp__sse_consumed(p);
    FUZZ_CHECK(used <= len);
    if (rc == MCP__EAGAIN) {
      FUZZ_CHECK(mode == 2);
    } else {
      FUZZ_CHECK(rc == MCP_OK || rc == MCP_ETOOBIG || (mode == 3 && rc == MCP_ENOMEM));
      FUZZ_CHECK(used == len);
      if (rc == MCP_ETOOBIG) toobig = true;
    }
    /* When stopping, a dropped event's error may be hidden by the stop. */
    at += used;
  }
  const char *id = mcp__sse_last_event_id(p);
  uint64_t retry = mcp__sse_retry_ms(p);
  int fin = mcp__sse_finish(p);
  FUZZ_CHECK(fin == MCP_OK || fin == MCP_ECLOSED);
  flog_add(out, c.log.p, c.log.n);
  flog_add(out, "|", 1);
  flog_str(out, id);
  flog_u64(out, retry);
  flog_u64(out, (uint64_t)(fin == MCP_OK));
  /* After finish the last event ID persists and a clean stream follows. */
  FUZZ_CHECK(strcmp(mcp__sse_last_event_id(p), id) == 0 || mode == 3);
  if (mode != 2) flog_u64(out, toobig);
  mcp__sse_free(p);
  flog_free(&c.log);
  if (mode == 3) mcp__alloc_fail_after(-1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2 || size > 65536) return 0;
  size_t max = data[0] < 128 ? (size_t)data[0] + 1 : 0;
  uint32_t seed = 0x9e3779b9u ^ data[1];
  size_t maxpiece = 1 + data[1] % 64; /* 1: byte by byte */
  const char *in = (const char *)data + 2;
  size_t n = size - 2;

  flog a = {0}, b = {0}, c = {0}, d = {0};
  run(in, n, max, seed, maxpiece, 0, &a);
  run(in, n, max, seed, maxpiece, 1, &b);
  FUZZ_CHECK(flog_eq(&a, &b));
  run(in, n, max, seed, maxpiece, 2, &c);
  /* Mode 2 logs no oversize flag: compare without a's last 8 bytes. */
  FUZZ_CHECK(c.n + 8 == a.n && memcmp(a.p, c.p, c.n) == 0);
  run(in, n, max, seed, maxpiece, 3, &d);
  flog_free(&a);
  flog_free(&b);
  flog_free(&c);
  flog_free(&d);
  return 0;
}
