/* SPDX-License-Identifier: MIT */
/*
 * mcp_int.h: internal helpers shared by every module: allocation wrappers
 * (so tests can fail the Nth allocation), monotonic time, error filling and
 * the logger.  Never installed.
 */
#ifndef MCP_INT_H
#define MCP_INT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "mcpconn.h"

#if defined(__GNUC__)
#define MCP_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define MCP_UNUSED __attribute__((unused))
#else
#define MCP_PRINTF(a, b)
#define MCP_UNUSED
#endif

/* Internal-only statuses; never returned from a public function. */
#define MCP__EAGAIN (-1001)

/*
 * Allocation.  All library allocation goes through these so that the
 * allocation-failure tests can make the Nth one fail.  mcp__calloc and
 * mcp__reallocarray check for multiplication overflow.
 */
void *mcp__malloc(size_t n);
void *mcp__calloc(size_t nmemb, size_t size);
void *mcp__realloc(void *p, size_t n);
void *mcp__reallocarray(void *p, size_t nmemb, size_t size);
char *mcp__strdup(const char *s);
char *mcp__strndup(const char *s, size_t n);
void mcp__free(void *p);
char *mcp__asprintf(const char *fmt, ...) MCP_PRINTF(1, 2);

/*
 * Test hook: after |n| more successful allocations, every allocation fails
 * until reset with a negative |n| (the default: never fail).
 */
void mcp__alloc_fail_after(long n);

/* Milliseconds on CLOCK_MONOTONIC. */
int64_t mcp__now_ms(void);
/* An absolute CLOCK_MONOTONIC timespec for a deadline in ms (from mcp__now_ms). */
struct timespec mcp__ts_from_ms(int64_t abs_ms);
/* Deadline |ms| from now, or INT64_MAX when |ms| <= 0 means "none". */
int64_t mcp__deadline_in(int64_t ms);
#define MCP_NO_DEADLINE INT64_MAX

/*
 * mcp__error_set() fills |err| (NULL is fine) with |status| and a formatted
 * message, replacing what it held, and returns |status|.
 */
mcp_status mcp__error_set(mcp_error *err, mcp_status status, const char *fmt, ...) MCP_PRINTF(3, 4);
/* Copies |src| into |dst| (NULL-safe), deep. */
void mcp__error_copy(mcp_error *dst, const mcp_error *src);

/*
 * "This request provably never reached the server": a transport that knows
 * no byte of a request left this process (connect failed, write failed
 * before its first byte, HTTP/2 REFUSED_STREAM or a stream above GOAWAY's
 * last-stream-id, the transport was already closed) marks the error it
 * reports; the mark travels with the error through mcp__error_copy() and
 * lets the manager resend a non-idempotent request (RFC 9110 9.2.2).  It
 * lives in the reserved word of mcp_error, so hosts never see it, and
 * mcp__error_set() and mcp_error_clear() reset it.  Both NULL-safe.
 */
#define MCP__ERRF_NOT_SENT 0x1u
static inline void mcp__error_mark_not_sent(mcp_error *err) {
  if (err) err->reserved_[0] = (void *)((uintptr_t)err->reserved_[0] | MCP__ERRF_NOT_SENT);
}
static inline bool mcp__error_not_sent(const mcp_error *err) {
  return err && ((uintptr_t)err->reserved_[0] & MCP__ERRF_NOT_SENT) != 0;
}

/*
 * "This request's response stream broke after it was sent, on a stateless
 * (2026-07-28) HTTP connection": no session and no resumption, so the
 * request is lost and the remedy is to send it again as a new request
 * with a new id (SEP-2575); the connection itself stays usable.  The HTTP
 * transport marks it; the client re-issues reads once and marks the error
 * MCP__ERRF_REISSUED when that one broke too; the manager applies its
 * resend rule to the rest (tools/call) without reconnecting.  Same
 * storage and lifetime as MCP__ERRF_NOT_SENT.
 */
#define MCP__ERRF_STREAM_LOST 0x2u
#define MCP__ERRF_REISSUED 0x4u
static inline void mcp__error_mark(mcp_error *err, unsigned flag) {
  if (err) err->reserved_[0] = (void *)((uintptr_t)err->reserved_[0] | flag);
}
static inline bool mcp__error_has(const mcp_error *err, unsigned flag) {
  return err && ((uintptr_t)err->reserved_[0] & flag) != 0;
}

/* A logger: a host callback plus its user pointer.  fn NULL: discard. */
typedef struct mcp_logger {
  mcp_log_fn fn;
  void *user;
} mcp_logger;

/* Calls the logger's callback directly on the calling thread.  Modules that
 * log from I/O threads must route through the client (which posts to the
 * worker pool); mcp__log is for worker or host threads only. */
void mcp__log(const mcp_logger *lg, mcp_log_level level, const char *fmt, ...) MCP_PRINTF(3, 4);

/* A growable byte buffer. */
typedef struct mcp_buf {
  char *data; /* NUL-terminated when len < cap */
  size_t len;
  size_t cap;
} mcp_buf;

void mcp__buf_init(mcp_buf *b);
void mcp__buf_free(mcp_buf *b);
/* Returns MCP_OK or MCP_ENOMEM; keeps data NUL-terminated. */
int mcp__buf_append(mcp_buf *b, const void *p, size_t n);
int mcp__buf_reserve(mcp_buf *b, size_t extra);
void mcp__buf_consume(mcp_buf *b, size_t n); /* drop n bytes at the front */

/*
 * mcp__quote() makes server-chosen text |s| (|n| bytes; NULL is "") safe to
 * quote in an mcp_error or log message: \n \r \t and the other C0
 * controls and DEL as escapes (\xNN), bytes that are not valid UTF-8 as
 * \xNN, C1 controls and bidirectional formatting characters (U+061C,
 * U+200E/F, U+202A-U+202E, U+2066-U+2069) as \uNNNN, everything else as it
 * is; cut at a character boundary, with "..." when cut, so that it fits
 * |cap| bytes (at least 8) with its NUL.  Returns |out|.  Threads: any.
 */
const char *mcp__quote(char *out, size_t cap, const char *s, size_t n);
/* Buffer sizes for mcp__quote(): a cursor, version or method name; a
 * server's own error message or a tool's error text. */
#define MCP_QUOTE_SHORT 96
#define MCP_QUOTE_LONG 2048

/*
 * mcp__errno_text() describes errno value |e| (strerror_r into |buf| of |n|
 * bytes); the result is |buf| or a static string.  Threads: any.
 */
const char *mcp__errno_text(int e, char *buf, size_t n);

/*
 * mcp__read_file() reads all of |path|.  Returns 0 with *data (new,
 * NUL-terminated, freed with mcp__free()) and *len, or an errno value:
 * ENOENT and the like from open(2), EISDIR or ENODEV for what is not a
 * regular file (never blocks on a FIFO), EFBIG once more than |max| bytes
 * were read, ENOMEM.  With |owned|, a symbolic link is not followed (ELOOP)
 * and a file that is not the user's own, or that others may write, is
 * refused (EPERM).  Threads: any.
 */
int mcp__read_file(const char *path, size_t max, bool owned, char **data, size_t *len);

#endif /* MCP_INT_H */
