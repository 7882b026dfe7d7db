/* SPDX-License-Identifier: MIT */
/*
 * fuzz_jsonl.c: libFuzzer target for mcp_jsonl.
 *
 * Input: one byte choosing the line cap (below 128: cap = byte + 1;
 * otherwise the default), one byte seeding the feed cuts, then the stream.
 * Fed all at once and in pseudo-random pieces (or byte by byte), the
 * framer must report the same lines and oversize lengths, every line
 * NUL-terminated, none longer than the cap, and never hold more than the
 * cap.  A third pass fails an allocation part way through.  A fourth uses
 * on_oversize_head: same reports, and each head is the first
 * min(MCP_JSONL_HEAD, line length) bytes of its line in the input.
 */
#include "config.h"

#include <stdbool.h>

#include "fuzz_common.h"
#include "mcp_jsonl.h"

typedef struct ctx {
  flog log;
  size_t max;
  const char *in; /* the stream, for the heads' check (mode 3) */
  size_t n;
  size_t pos; /* where the next reported line starts, or before it */
} ctx;

/* Mode 3: the line being reported, [*start, returned end) without "\n":
 * skips the lines that are not reported (empty, or a lone "\r"). */
static size_t next_line(ctx *c, size_t *start) {
  for (;;) {
    const char *nl = memchr(c->in + c->pos, '\n', c->n - c->pos);
    FUZZ_CHECK(nl != NULL);
    size_t end = (size_t)(nl - c->in), len = end - c->pos;
    if (len == 0 || (len == 1 && c->in[c->pos] == '\r')) {
      c->pos = end + 1;
      continue;
    }
    *start = c->pos;
    c->pos = end + 1;
    return end;
  }
}

static int on_line(void *user, const char *d, size_t n) {
  ctx *c = user;
  FUZZ_CHECK(n > 0 && n <= c->max && d[n] == '\0');
  FUZZ_CHECK(memchr(d, '\n', n) == NULL);
  flog_add(&c->log, "L", 1);
  flog_u64(&c->log, n);
  flog_add(&c->log, d, n);
  return 0;
}

static void on_oversize(void *user, size_t n) {
  ctx *c = user;
  FUZZ_CHECK(n > c->max);
  flog_add(&c->log, "O", 1);
  flog_u64(&c->log, n);
}

static int on_line_checked(void *user, const char *d, size_t n) {
  ctx *c = user;
  size_t start = 0;
  next_line(c, &start);
  FUZZ_CHECK(memcmp(c->in + start, d, n) == 0);
  return on_line(user, d, n);
}

static void on_oversize_head(void *user, size_t n, const char *head, size_t head_len) {
  ctx *c = user;
  size_t start = 0, end = next_line(c, &start);
  size_t want = end - start < MCP_JSONL_HEAD ? end - start : MCP_JSONL_HEAD;
  FUZZ_CHECK(head_len == want);
  FUZZ_CHECK(memcmp(head, c->in + start, head_len) == 0);
  on_oversize(user, n);
}

static const mcp_jsonl_callbacks cbs = {on_line, on_oversize, NULL};
static const mcp_jsonl_callbacks head_cbs = {.on_line = on_line_checked,
                                             .on_oversize_head = on_oversize_head};

static void run(const char *in, size_t n, size_t max, uint32_t seed, size_t maxpiece, int mode,
                flog *out) {
  ctx c;
  memset(&c, 0, sizeof(c));
  c.max = max ? max : (size_t)16 * 1024 * 1024;
  c.in = in;
  c.n = n;
  if (mode == 2) mcp__alloc_fail_after((long)(seed % 4));
  mcp_jsonl *j = mcp__jsonl_new(max, mode == 3 ? &head_cbs : &cbs, &c);
  if (!j) {
    FUZZ_CHECK(mode == 2);
    mcp__alloc_fail_after(-1);
    return;
  }
  size_t at = 0;
  while (at < n) {
    size_t len = mode == 0 ? n - at : fuzz_piece(&seed, n - at, maxpiece);
    int rc = mcp__jsonl_feed(j, in + at, len);
    FUZZ_CHECK(rc == MCP_OK || (mode == 2 && rc == MCP_ENOMEM));
    FUZZ_CHECK(mcp__jsonl_pending(j) <= c.max);
    at += len;
  }
  flog_add(out, c.log.p, c.log.n);
  flog_u64(out, mcp__jsonl_pending(j));
  mcp__jsonl_free(j);
  flog_free(&c.log);
  if (mode == 2) mcp__alloc_fail_after(-1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2 || size > 65536) return 0;
  size_t max = data[0] < 128 ? (size_t)data[0] + 1 : 0;
  uint32_t seed = 0x9e3779b9u ^ data[1];
  size_t maxpiece = 1 + data[1] % 64;
  const char *in = (const char *)data + 2;
  size_t n = size - 2;

  flog a = {0}, b = {0}, c = {0}, d = {0};
  run(in, n, max, seed, maxpiece, 0, &a);
  run(in, n, max, seed, maxpiece, 1, &b);
  FUZZ_CHECK(flog_eq(&a, &b));
  run(in, n, max, seed, maxpiece, 2, &c);
  run(in, n, max, seed, maxpiece, 3, &d);
  FUZZ_CHECK(flog_eq(&a, &d));
  flog_free(&a);
  flog_free(&b);
  flog_free(&c);
  flog_free(&d);
  return 0;
}
