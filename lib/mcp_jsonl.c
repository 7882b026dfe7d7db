/* SPDX-License-Identifier: MIT */
/*
 * mcp_jsonl.c: newline-delimited framing with a size cap.
 *
 * Owns: one buffer holding the incomplete line, never larger than
 * max_line + 1 bytes (the line plus its NUL).  Pure: bytes in, lines out.
 * Must not know about: pipes, threads, JSON, MCP.
 *
 * States.  Normally bytes accumulate in |buf| until a newline completes the
 * line.  A line that grows past max_line is not kept: the framer switches to
 * skipping, counts the bytes up to the next newline and then reports the
 * full length through on_oversize (with on_oversize_head, also its first
 * MCP_JSONL_HEAD bytes, kept in |head| as they pass).  A "\r" that arrives exactly when the
 * buffer is full is held in a flag (|cr_held|) rather than in the buffer,
 * because a following "\n" would make it a line ending (stripped, so the
 * line fits) while anything else makes it content (so the line is too big).
 */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "mcp_jsonl.h"

#define JSONL_DEFAULT_MAX ((size_t)16 * 1024 * 1024)
/* First allocation of the line buffer; it doubles up to max_line + 1. */
#define JSONL_INITIAL_CAP ((size_t)4096)

struct mcp_jsonl {
  mcp_jsonl_callbacks cb;
  void *user;
  /* Largest line delivered, in bytes, without "\n" and trailing "\r". */
  size_t max_line;
  /* The incomplete line: |len| bytes, |cap| allocated (<= max_line + 1). */
  char *buf;
  size_t len;
  size_t cap;
  /* A "\r" seen right after |buf| filled up to max_line bytes. */
  bool cr_held;
  /* Discarding the rest of a line up to its newline. */
  bool skipping;
  /* The skipped line came from an allocation failure, not from its size,
   * so its end is not reported as oversize. */
  bool skip_silent;
  /* Bytes of the skipped line so far (saturating), and whether the last
   * of them was "\r" (not counted in the reported length). */
  size_t skip_len;
  bool skip_cr;
  /* The start of an oversized line (on_oversize_head only): |head_len|
   * bytes of MCP_JSONL_HEAD allocated on first use. */
  char *head;
  size_t head_len;
};

/*
 * mcp__jsonl_new() makes a framer for lines of at most |max_line| bytes
 * (0: 16 MiB).  No buffer is allocated until bytes arrive.
 * Ownership: |cb| is copied; |user| is borrowed and handed to the
 *   callbacks.  The caller frees the framer with mcp__jsonl_free().
 * Threads: a framer is used by one thread at a time.
 * Returns: the framer, or NULL when out of memory.
 */
mcp_jsonl *mcp__jsonl_new(size_t max_line, const mcp_jsonl_callbacks *cb, void *user) {
  mcp_jsonl *j = mcp__calloc(1, sizeof(*j));
  if (!j) return NULL;
  if (cb) j->cb = *cb;
  j->user = user;
  j->max_line = max_line ? max_line : JSONL_DEFAULT_MAX;
  /* The buffer must hold max_line bytes and a NUL. */
  if (j->max_line == SIZE_MAX) j->max_line = SIZE_MAX - 1;
  return j;
}

/* mcp__jsonl_free() releases the framer; NULL does nothing.  Threads: the
 * framer's thread, not from inside one of its callbacks. */
void mcp__jsonl_free(mcp_jsonl *j) {
  if (!j) return;
  mcp__free(j->buf);
  mcp__free(j->head);
  mcp__free(j);
}

/* mcp__jsonl_pending() is the size of the incomplete line held, which
 * never exceeds max_line.  Threads: the framer's thread. */
size_t mcp__jsonl_pending(const mcp_jsonl *j) { return j->skipping ? 0 : j->len; }

static size_t add_sat(size_t a, size_t b) { return a > SIZE_MAX - b ? SIZE_MAX : a + b; }

/* Makes room for |need| bytes plus a NUL; |need| <= max_line. */
static int reserve(mcp_jsonl *j, size_t need) {
  if (need + 1 <= j->cap) return MCP_OK;
  size_t limit = j->max_line + 1;
  size_t cap = j->cap ? j->cap : JSONL_INITIAL_CAP;
  while (cap < need + 1) cap = cap > limit / 2 ? limit : cap * 2;
  if (cap > limit) cap = limit;
  char *p = mcp__realloc(j->buf, cap);
  if (!p) return MCP_ENOMEM;
  j->buf = p;
  j->cap = cap;
  return MCP_OK;
}

/* Keeps bytes of an oversized line's start, up to MCP_JSONL_HEAD (without
 * memory for it the head stays short: the report goes out all the same). */
static void head_add(mcp_jsonl *j, const char *p, size_t n) {
  if (!j->cb.on_oversize_head || !n || j->head_len >= MCP_JSONL_HEAD) return;
  if (!j->head && !(j->head = mcp__malloc(MCP_JSONL_HEAD))) return;
  size_t k = MCP_JSONL_HEAD - j->head_len < n ? MCP_JSONL_HEAD - j->head_len : n;
  memcpy(j->head + j->head_len, p, k);
  j->head_len += k;
}

/* Reports an oversized line of |len| bytes; the head starts afresh. */
static void report_oversize(mcp_jsonl *j, size_t len) {
  if (j->cb.on_oversize_head) j->cb.on_oversize_head(j->user, len, j->head, j->head_len);
  else if (j->cb.on_oversize) j->cb.on_oversize(j->user, len);
  j->head_len = 0;
}

/* Drops the incomplete line and skips to its newline.  |seen| is the number
 * of its bytes already consumed; |last_cr| whether the last was "\r". */
static void start_skip(mcp_jsonl *j, size_t seen, bool last_cr, bool silent) {
  j->len = 0;
  j->cr_held = false;
  j->skipping = true;
  j->skip_silent = silent;
  j->skip_len = seen;
  j->skip_cr = last_cr;
}

/* Hands the buffered line to on_line; returns its verdict. */
static int deliver(mcp_jsonl *j) {
  size_t n = j->len;
  j->len = 0;
  j->cr_held = false;
  if (n == 0 || !j->cb.on_line) return 0;
  j->buf[n] = '\0';
  return j->cb.on_line(j->user, j->buf, n);
}

/*
 * mcp__jsonl_feed() frames |n| bytes of |data|, calling on_line for each
 * complete line and on_oversize for each line over the cap.
 * Ownership: |data| is borrowed; the line passed to on_line lives in the
 *   framer's buffer and is valid only during the call.
 * Threads: the framer's thread; the callbacks run on it, and must not feed
 *   or free this framer.
 * Returns: MCP_OK, MCP_ENOMEM, or MCP__EAGAIN when on_line asked to stop.
 *
 * Allocation failure drops the line that could not be stored and goes on
 * framing the rest of |data|, so the stream stays in step; MCP_ENOMEM is
 * returned at the end.  When on_line asks to stop, the bytes after that
 * line are dropped (the framer is then at a line boundary and can be fed
 * again).
 */
int mcp__jsonl_feed(mcp_jsonl *j, const char *data, size_t n) {
  const char *p = data;
  const char *end = data + n;
  int status = MCP_OK;

  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t seg = (size_t)((nl ? nl : end) - p);

    if (j->skipping) {
      j->skip_len = add_sat(j->skip_len, seg);
      if (!j->skip_silent) head_add(j, p, seg);
      if (seg) j->skip_cr = p[seg - 1] == '\r';
      if (!nl) return status;
      size_t full = j->skip_len - (j->skip_cr ? 1 : 0);
      bool silent = j->skip_silent;
      j->skipping = false;
      j->skip_silent = false;
      j->skip_len = 0;
      j->skip_cr = false;
      p = nl + 1;
      if (!silent) report_oversize(j, full);
      else j->head_len = 0;
      continue;
    }

    if (j->cr_held) {
      if (seg == 0) {
        /* The held "\r" ends a line of exactly max_line bytes. */
        p = nl + 1;
        if (deliver(j)) return MCP__EAGAIN;
        continue;
      }
      /* The "\r" was content, so the line is longer than max_line. */
      head_add(j, j->buf, j->len);
      head_add(j, "\r", 1);
      start_skip(j, j->len + 1, false, false);
      continue;
    }

    if (nl) {
      /* A complete line: what is buffered plus |seg| bytes. */
      size_t total = j->len + seg;
      bool cr = seg ? p[seg - 1] == '\r' : (j->len && j->buf[j->len - 1] == '\r');
      size_t eff = total - (cr ? 1 : 0);
      if (eff > j->max_line) {
        head_add(j, j->buf, j->len);
        head_add(j, p, seg);
        j->len = 0;
        p = nl + 1;
        report_oversize(j, eff);
        continue;
      }
      /* Copy all of |seg| but a trailing "\r" (nothing when the "\r" is
       * already buffered and the line just shrinks by one). */
      size_t copy = eff > j->len ? eff - j->len : 0;
      if (copy) {
        if (reserve(j, eff) != MCP_OK) {
          j->len = 0;
          p = nl + 1;
          status = MCP_ENOMEM;
          continue;
        }
        memcpy(j->buf + j->len, p, copy);
      }
      j->len = eff;
      p = nl + 1;
      if (deliver(j)) return MCP__EAGAIN;
      continue;
    }

    /* No newline in the rest of the input: keep the bytes if they fit. */
    size_t total = j->len + seg;
    if (total <= j->max_line) {
      if (reserve(j, total) != MCP_OK) {
        start_skip(j, total, p[seg - 1] == '\r', true);
        return MCP_ENOMEM;
      }
      memcpy(j->buf + j->len, p, seg);
      j->len = total;
      return status;
    }
    if (total == j->max_line + 1 && p[seg - 1] == '\r') {
      if (reserve(j, j->max_line) != MCP_OK) {
        start_skip(j, total, true, true);
        return MCP_ENOMEM;
      }
      memcpy(j->buf + j->len, p, seg - 1);
      j->len = j->max_line;
      j->cr_held = true;
      return status;
    }
    head_add(j, j->buf, j->len);
    head_add(j, p, seg);
    start_skip(j, total, p[seg - 1] == '\r', false);
    return status;
  }
  return status;
}
