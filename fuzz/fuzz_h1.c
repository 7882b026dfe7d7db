/* SPDX-License-Identifier: MIT */
/*
 * fuzz_h1.c: libFuzzer target for mcp_h1.
 *
 * Input: one flags byte (bit 0: the response answers HEAD; bit 1: the
 * connection ends after the input; bit 2: small limits, so the limit paths
 * are reached; bits 3-7 seed the feed cuts), then the bytes received.  The
 * bytes are parsed three ways: all at once, in pseudo-random pieces (or
 * byte by byte), and in pieces with every callback asking to stop (what
 * was left is fed again).  All three must report the same heads, body
 * bytes, completions and final status.  A fourth pass fails an allocation
 * part way through.  Last, the first bytes of the input become a header
 * name and value for the request builder, whose output must never hold a
 * line ending that it did not write itself.
 */
#include "config.h"

#include <stdbool.h>
#include <strings.h>

#include "fuzz_common.h"
#include "mcp_h1.h"

typedef struct ctx {
  mcp_h1 *p;
  flog log;
  flog body; /* body bytes not yet logged: pieces are merged */
  int stop;
} ctx;

static void flush_body(ctx *c) {
  if (!c->body.n) return;
  flog_add(&c->log, "B", 1);
  flog_u64(&c->log, c->body.n);
  flog_add(&c->log, c->body.p, c->body.n);
  c->body.n = 0;
}

static int on_headers(void *user, int status, const mcp_h1_header *h, size_t n) {
  ctx *c = user;
  FUZZ_CHECK(status >= 200 && status <= 599);
  flush_body(c);
  flog_add(&c->log, "H", 1);
  flog_u64(&c->log, (uint64_t)status);
  flog_str(&c->log, mcp__h1_reason(c->p));
  for (size_t i = 0; i < n; i++) {
    FUZZ_CHECK(h[i].name[0] != '\0');
    for (const unsigned char *v = (const unsigned char *)h[i].value; *v; v++)
      FUZZ_CHECK(*v == '\t' || (*v >= 0x20 && *v != 0x7f));
    flog_str(&c->log, h[i].name);
    flog_str(&c->log, h[i].value);
  }
  return c->stop;
}

static int on_body(void *user, const char *d, size_t n) {
  ctx *c = user;
  FUZZ_CHECK(n > 0);
  flog_add(&c->body, d, n);
  return c->stop;
}

static int on_complete(void *user, bool ka) {
  ctx *c = user;
  flush_body(c);
  flog_add(&c->log, ka ? "C1" : "C0", 2);
  return c->stop;
}

static const mcp_h1_callbacks cbs = {on_headers, on_body, on_complete};

/* mode 0: at once; 1: pseudo-random pieces; 2: pieces, every callback
 * stopping; 3: like 1 under allocation failure (not compared). */
static void run(const char *in, size_t n, unsigned flags, uint32_t seed, size_t maxpiece, int mode,
                flog *out) {
  ctx c;
  memset(&c, 0, sizeof(c));
  c.stop = mode == 2;
  if (mode == 3) mcp__alloc_fail_after((long)(seed % 8));
  size_t max_head = (flags & 4) ? 256 : 0, max_headers = (flags & 4) ? 4 : 0;
  c.p = mcp__h1_new(max_head, max_headers, &cbs, &c);
  if (!c.p) {
    FUZZ_CHECK(mode == 3);
    mcp__alloc_fail_after(-1);
    return;
  }
  if (flags & 1) mcp__h1_begin(c.p, true);
  int rc = MCP_OK;
  size_t at = 0;
  bool again = false;
  while (at < n || again) {
    size_t len = mode == 0   ? n - at
                 : mode == 2 ? fuzz_piece(&seed, n - at, 64)
                             : fuzz_piece(&seed, n - at, maxpiece);
    if (at == n) len = 0;
    rc = mcp__h1_feed(c.p, in + at, len);
    size_t used = mcp__h1_consumed(c.p);
    FUZZ_CHECK(used <= len);
    at += used;
    again = rc == MCP__EAGAIN;
    if (again) {
      FUZZ_CHECK(mode == 2);
      continue;
    }
    if (rc != MCP_OK) break;
    FUZZ_CHECK(used == len);
  }
  flush_body(&c);
  if (rc != MCP_OK) {
    FUZZ_CHECK(rc == MCP_EPROTO || rc == MCP_ETOOBIG || (mode == 3 && rc == MCP_ENOMEM));
    FUZZ_CHECK(mcp__h1_error(c.p)[0] != '\0');
    /* Spent until reset. */
    FUZZ_CHECK(mcp__h1_feed(c.p, "x", 1) == rc);
  } else if (flags & 2) {
    rc = mcp__h1_eof(c.p);
    flush_body(&c);
    FUZZ_CHECK(rc == MCP_OK || rc == MCP_ECLOSED);
  }
  flog_add(out, c.log.p, c.log.n);
  flog_u64(out, (uint64_t)(int64_t)rc);
  flog_str(out, mcp__h1_error(c.p));
  mcp__h1_free(c.p);
  flog_free(&c.log);
  flog_free(&c.body);
  if (mode == 3) mcp__alloc_fail_after(-1);
}

static bool is_tchar(unsigned char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
         (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

static void check_builder(const char *in, size_t n) {
  /* Name: bytes up to the first ':' (at most 16); value: the next 32. */
  char name[17], value[33];
  size_t k = 0;
  while (k < n && k < 16 && in[k] != ':') k++;
  memcpy(name, in, k);
  name[k] = '\0';
  size_t v = n - k > 1 ? (n - k - 1 < 32 ? n - k - 1 : 32) : 0;
  if (v) memcpy(value, in + k + 1, v);
  value[v] = '\0';

  bool token = name[0] != '\0';
  for (const unsigned char *c = (const unsigned char *)name; *c; c++) token = token && is_tchar(*c);
  bool clean = true;
  for (const unsigned char *c = (const unsigned char *)value; *c; c++)
    clean = clean && (*c == '\t' || (*c >= 0x20 && *c != 0x7f));
  bool reserved = !strcasecmp(name, "host") || !strcasecmp(name, "content-length") ||
                  !strcasecmp(name, "transfer-encoding");

  mcp_buf b;
  mcp__buf_init(&b);
  mcp_h1_header h = {name, value};
  int rc = mcp__h1_build_request(&b, "POST", "/mcp", "h", &h, 1, "x\r\n", 3);
  FUZZ_CHECK((rc == MCP_OK) == (token && clean && !reserved));
  if (rc == MCP_OK) {
    /* Request line, Host, the field, Content-Length, the blank line: five
     * CRLFs, and no other CR or LF before the body. */
    size_t crlf = 0;
    size_t i = 0;
    for (; i + 1 < b.len; i++) {
      if (b.data[i] == '\r') {
        FUZZ_CHECK(b.data[i + 1] == '\n');
        crlf++;
        i++;
        if (crlf == 5) break;
      } else {
        FUZZ_CHECK(b.data[i] != '\n');
      }
    }
    FUZZ_CHECK(crlf == 5 && b.len == i + 1 + 3);
  } else {
    FUZZ_CHECK(rc == MCP_EINVAL && b.len == 0);
  }
  mcp__buf_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1 || size > 65536) return 0;
  unsigned flags = data[0];
  uint32_t seed = 0x9e3779b9u ^ flags;
  size_t maxpiece = 1 + (flags >> 3) % 32; /* 1: byte by byte */
  const char *in = (const char *)data + 1;
  size_t n = size - 1;

  flog a = {0}, b = {0}, c = {0}, d = {0};
  run(in, n, flags, seed, maxpiece, 0, &a);
  run(in, n, flags, seed, maxpiece, 1, &b);
  FUZZ_CHECK(flog_eq(&a, &b));
  run(in, n, flags, seed, maxpiece, 2, &c);
  FUZZ_CHECK(flog_eq(&a, &c));
  run(in, n, flags, seed, maxpiece, 3, &d);
  flog_free(&a);
  flog_free(&b);
  flog_free(&c);
  flog_free(&d);
  check_builder(in, n);
  return 0;
}
