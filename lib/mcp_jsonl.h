/* SPDX-License-Identifier: MIT */
/*
 * mcp_jsonl.h: newline-delimited framing with a size cap.  Pure: bytes in,
 * lines out; no I/O, no threads.  Fuzzable on its own.
 */
#ifndef MCP_JSONL_H
#define MCP_JSONL_H

#include <stddef.h>

#include "mcp_int.h"

typedef struct mcp_jsonl mcp_jsonl;

typedef struct mcp_jsonl_callbacks {
  /* A complete line without its "\n" (a trailing "\r" is stripped too),
   * NUL-terminated at data[len].  Empty lines are not reported.  Valid only
   * during the call.  Return 0 to go on, non-zero to stop feeding. */
  int (*on_line)(void *user, const char *data, size_t len);
  /* A line longer than the cap was discarded; |len| is its full length
   * (known when its newline arrived). */
  void (*on_oversize)(void *user, size_t len);
  /* Optional; when set it replaces on_oversize and also gets the first
   * MCP_JSONL_HEAD bytes of the line (fewer when the line or the cap is
   * shorter), so the receiver can tell what the line was.  |head| is valid
   * only during the call. */
  void (*on_oversize_head)(void *user, size_t len, const char *head, size_t head_len);
} mcp_jsonl_callbacks;

/* Bytes of an oversized line kept for on_oversize_head. */
#define MCP_JSONL_HEAD ((size_t)4096)

/* max_line 0 means 16 MiB.  Returns NULL when out of memory. */
mcp_jsonl *mcp__jsonl_new(size_t max_line, const mcp_jsonl_callbacks *cb, void *user);
void mcp__jsonl_free(mcp_jsonl *j);
/*
 * Feeds |n| bytes.  Memory stays bounded by max_line whatever arrives:
 * an oversize line is skipped up to its newline.
 * Returns MCP_OK, MCP_ENOMEM, or MCP__EAGAIN if on_line asked to stop.
 */
int mcp__jsonl_feed(mcp_jsonl *j, const char *data, size_t n);
/* Bytes buffered of an incomplete line (0 while skipping an oversize one). */
size_t mcp__jsonl_pending(const mcp_jsonl *j);

#endif /* MCP_JSONL_H */
