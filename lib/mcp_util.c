/* SPDX-License-Identifier: MIT */
/*
 * mcp_util.c: allocation wrappers, monotonic time, mcp_error, logging,
 * the growable buffer, errno text and reading a whole file with a cap.
 * Owns nothing global but the allocation-failure countdown used by tests.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mcp_int.h"

/* ---- allocation ------------------------------------------------------- */

/* Remaining successful allocations before failures start; < 0: never fail. */
static _Atomic long alloc_budget = -1;

void mcp__alloc_fail_after(long n) { atomic_store(&alloc_budget, n); }

static int alloc_allowed(void) {
  long cur = atomic_load(&alloc_budget);
  while (cur >= 0) {
    if (cur == 0) return 0;
    if (atomic_compare_exchange_weak(&alloc_budget, &cur, cur - 1)) return 1;
  }
  return 1;
}

void *mcp__malloc(size_t n) {
  if (!alloc_allowed()) return NULL;
  return malloc(n ? n : 1);
}

void *mcp__calloc(size_t nmemb, size_t size) {
  if (size && nmemb > SIZE_MAX / size) return NULL;
  if (!alloc_allowed()) return NULL;
  return calloc(nmemb ? nmemb : 1, size ? size : 1);
}

void *mcp__realloc(void *p, size_t n) {
  if (!alloc_allowed()) return NULL;
  return realloc(p, n ? n : 1);
}

void *mcp__reallocarray(void *p, size_t nmemb, size_t size) {
  if (size && nmemb > SIZE_MAX / size) return NULL;
  return mcp__realloc(p, nmemb * size);
}

char *mcp__strndup(const char *s, size_t n) {
  char *d = mcp__malloc(n + 1);
  if (!d) return NULL;
  memcpy(d, s, n);
  d[n] = '\0';
  return d;
}

char *mcp__strdup(const char *s) { return s ? mcp__strndup(s, strlen(s)) : NULL; }

void mcp__free(void *p) { free(p); }

static char *vasprintf_alloc(const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n < 0) return NULL;
  char *s = mcp__malloc((size_t)n + 1);
  if (!s) return NULL;
  vsnprintf(s, (size_t)n + 1, fmt, ap);
  return s;
}

char *mcp__asprintf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = vasprintf_alloc(fmt, ap);
  va_end(ap);
  return s;
}

/* Public: strings the library returns are released here. */
MCP_EXTERN void mcp_free(void *p) { free(p); }

/* ---- time --------------------------------------------------------------- */

int64_t mcp__now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct timespec mcp__ts_from_ms(int64_t abs_ms) {
  struct timespec ts;
  if (abs_ms == MCP_NO_DEADLINE || abs_ms > (int64_t)1 << 50) {
    ts.tv_sec = (time_t)1 << 40; /* far future */
    ts.tv_nsec = 0;
    return ts;
  }
  if (abs_ms < 0) abs_ms = 0;
  ts.tv_sec = (time_t)(abs_ms / 1000);
  ts.tv_nsec = (long)(abs_ms % 1000) * 1000000L;
  return ts;
}

int64_t mcp__deadline_in(int64_t ms) {
  if (ms <= 0) return MCP_NO_DEADLINE;
  return mcp__now_ms() + ms;
}

/* ---- errors -------------------------------------------------------------- */

MCP_EXTERN const char *mcp_strerror(mcp_status status) {
  switch (status) {
  case MCP_OK: return "success";
  case MCP_EINVAL: return "invalid argument";
  case MCP_ENOMEM: return "out of memory";
  case MCP_ETIMEDOUT: return "timed out";
  case MCP_ECANCELLED: return "cancelled";
  case MCP_ECLOSED: return "connection closed";
  case MCP_EPROTO: return "protocol error";
  case MCP_ERPC: return "JSON-RPC error from server";
  case MCP_EHTTP: return "HTTP error";
  case MCP_ETLS: return "TLS error";
  case MCP_ECONFIG: return "configuration error";
  case MCP_ESPAWN: return "could not start server process";
  case MCP_EIO: return "I/O error";
  case MCP_EVERSION: return "unsupported protocol version";
  case MCP_ETOOBIG: return "message too large";
  case MCP_ESTATE: return "not allowed in this state";
  case MCP_ENOTFOUND: return "not found";
  case MCP_ETOOLERROR: return "tool reported an error";
  }
  return "unknown status";
}

MCP_EXTERN void mcp_error_clear(mcp_error *err) {
  if (!err) return;
  free(err->message);
  free(err->data);
  memset(err, 0, sizeof(*err));
}

mcp_status mcp__error_set(mcp_error *err, mcp_status status, const char *fmt, ...) {
  if (!err) return status;
  free(err->message);
  free(err->data);
  memset(err, 0, sizeof(*err));
  err->status = status;
  va_list ap;
  va_start(ap, fmt);
  /* Plain malloc on purpose: an error message must survive allocation-failure
   * tests as often as possible; a NULL message is replaced below. */
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n >= 0) {
    err->message = malloc((size_t)n + 1);
    if (err->message) vsnprintf(err->message, (size_t)n + 1, fmt, ap);
  }
  va_end(ap);
  return status;
}

void mcp__error_copy(mcp_error *dst, const mcp_error *src) {
  if (!dst || !src || dst == src) return;
  mcp_error_clear(dst);
  dst->status = src->status;
  dst->rpc_code = src->rpc_code;
  dst->http_status = src->http_status;
  dst->message = src->message ? strdup(src->message) : NULL;
  dst->data = src->data ? strdup(src->data) : NULL;
  dst->reserved_[0] = src->reserved_[0]; /* internal flags (mcp_int.h) */
}

MCP_EXTERN const char *mcp_version(void) { return PACKAGE_VERSION; }

/* ---- logging ------------------------------------------------------------- */

void mcp__log(const mcp_logger *lg, mcp_log_level level, const char *fmt, ...) {
  if (!lg || !lg->fn) return;
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  lg->fn(lg->user, level, buf);
}

/* ---- buffer -------------------------------------------------------------- */

void mcp__buf_init(mcp_buf *b) { memset(b, 0, sizeof(*b)); }

void mcp__buf_free(mcp_buf *b) {
  mcp__free(b->data);
  memset(b, 0, sizeof(*b));
}

int mcp__buf_reserve(mcp_buf *b, size_t extra) {
  if (extra > SIZE_MAX - b->len - 1) return MCP_ENOMEM;
  size_t need = b->len + extra + 1;
  if (need <= b->cap) return MCP_OK;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < need) cap = cap > SIZE_MAX / 2 ? need : cap * 2;
  char *p = mcp__realloc(b->data, cap);
  if (!p) return MCP_ENOMEM;
  b->data = p;
  b->cap = cap;
  return MCP_OK;
}

int mcp__buf_append(mcp_buf *b, const void *p, size_t n) {
  int rc = mcp__buf_reserve(b, n);
  if (rc) return rc;
  if (n) memcpy(b->data + b->len, p, n);
  b->len += n;
  b->data[b->len] = '\0';
  return MCP_OK;
}

void mcp__buf_consume(mcp_buf *b, size_t n) {
  if (n >= b->len) {
    b->len = 0;
    if (b->data) b->data[0] = '\0';
    return;
  }
  memmove(b->data, b->data + n, b->len - n);
  b->len -= n;
  b->data[b->len] = '\0';
}

/* ---- quoting server text --------------------------------------------------- */

/* The code point of the valid UTF-8 sequence (2-4 bytes) at |p| in *cp and
 * its length, or 0 when it is not one (overlong, surrogate, past U+10FFFF,
 * cut short). */
static size_t utf8_seq(const unsigned char *p, const unsigned char *end, unsigned *cp) {
  unsigned c = p[0], min;
  size_t n;
  if (c >= 0xc2 && c <= 0xdf) n = 2, min = 0x80;
  else if (c >= 0xe0 && c <= 0xef) n = 3, min = 0x800;
  else if (c >= 0xf0 && c <= 0xf4) n = 4, min = 0x10000;
  else return 0;
  if ((size_t)(end - p) < n) return 0;
  unsigned v = c & (0x7f >> n);
  for (size_t i = 1; i < n; i++) {
    if ((p[i] & 0xc0) != 0x80) return 0;
    v = v << 6 | (p[i] & 0x3f);
  }
  if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return 0;
  *cp = v;
  return n;
}

/* C1 controls (a terminal takes U+009B as CSI) and the characters that
 * reorder text (bidirectional marks, embeddings, overrides, isolates). */
static bool hidden_cp(unsigned v) {
  return (v >= 0x80 && v <= 0x9f) || v == 0x61c || v == 0x200e || v == 0x200f ||
         (v >= 0x202a && v <= 0x202e) || (v >= 0x2066 && v <= 0x2069);
}

const char *mcp__quote(char *out, size_t cap, const char *s, size_t n) {
  static const char hex[] = "0123456789abcdef";
  if (cap < 8) {
    if (cap) out[0] = '\0';
    return out;
  }
  const unsigned char *p = (const unsigned char *)s, *end = s ? p + n : p;
  size_t o = 0, room = cap - 4; /* "..." and the NUL always fit */
  while (p < end) {
    char piece[8];
    size_t k = 0, adv = 1;
    unsigned c = *p, v = 0;
    if (c == '\n' || c == '\r' || c == '\t') {
      piece[k++] = '\\';
      piece[k++] = c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
    } else if (c < 0x20 || c == 0x7f) {
      memcpy(piece, "\\x", 2);
      piece[2] = hex[c >> 4];
      piece[3] = hex[c & 15];
      k = 4;
    } else if (c < 0x80) {
      piece[k++] = (char)c;
    } else if (!(adv = utf8_seq(p, end, &v))) {
      memcpy(piece, "\\x", 2);
      piece[2] = hex[c >> 4];
      piece[3] = hex[c & 15];
      k = 4;
      adv = 1;
    } else if (hidden_cp(v)) {
      memcpy(piece, "\\u", 2);
      for (int i = 0; i < 4; i++) piece[2 + i] = hex[(v >> (12 - 4 * i)) & 15];
      k = 6;
    } else {
      memcpy(piece, p, adv);
      k = adv;
    }
    if (o + k > room) break;
    memcpy(out + o, piece, k);
    o += k;
    p += adv;
  }
  if (p < end) {
    memcpy(out + o, "...", 3);
    o += 3;
  }
  out[o] = '\0';
  return out;
}

/* ---- errno and files -------------------------------------------------- */

const char *mcp__errno_text(int e, char *buf, size_t n) {
#if defined(__GLIBC__) && defined(_GNU_SOURCE)
  return strerror_r(e, buf, n);
#else
  if (strerror_r(e, buf, n) != 0) snprintf(buf, n, "error %d", e);
  return buf;
#endif
}

int mcp__read_file(const char *path, size_t max, bool owned, char **data, size_t *len) {
  *data = NULL;
  *len = 0;
  /* O_NONBLOCK: a FIFO in a config location must not hang discovery. */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | (owned ? O_NOFOLLOW : 0));
  if (fd < 0) return errno;
  int e = 0;
  struct stat st;
  mcp_buf b;
  mcp__buf_init(&b);
  if (fstat(fd, &st) < 0) {
    e = errno;
    goto out;
  }
  if (!S_ISREG(st.st_mode)) {
    e = S_ISDIR(st.st_mode) ? EISDIR : ENODEV;
    goto out;
  }
  if (owned && (st.st_uid != geteuid() || (st.st_mode & 022))) {
    e = EPERM;
    goto out;
  }
  for (;;) {
    if (b.len > max) {
      e = EFBIG;
      goto out;
    }
    if (mcp__buf_reserve(&b, 65536)) {
      e = ENOMEM;
      goto out;
    }
    ssize_t n = read(fd, b.data + b.len, 65536);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      e = errno;
      goto out;
    }
    if (n == 0) break;
    b.len += (size_t)n;
    b.data[b.len] = '\0';
  }
  if (mcp__buf_reserve(&b, 0)) {
    e = ENOMEM;
    goto out;
  }
  b.data[b.len] = '\0';
  *data = b.data;
  *len = b.len;
  b.data = NULL;
out:
  mcp__buf_free(&b);
  close(fd);
  return e;
}
