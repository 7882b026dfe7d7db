/* SPDX-License-Identifier: MIT */
/*
 * mcp_sse.h: an incremental text/event-stream (server-sent events) parser
 * following the WHATWG HTML "event stream interpretation" rules.  Pure:
 * bytes in, events out; no I/O, no threads.  Fuzzable on its own.
 * Must not know about: HTTP, sockets, JSON, MCP.
 *
 * Faithful to the standard: one UTF-8 BOM at the start of a stream is
 * skipped; lines end in CRLF, LF or CR (also when CR and LF arrive in
 * different feeds); ":" lines are comments; a field's value loses one
 * leading space; `data` lines are joined with "\n"; `id` is ignored when it
 * contains NUL; `retry` is taken only when it is all ASCII digits; a blank
 * line dispatches the event unless its data is empty; the event type
 * defaults to "message"; an unfinished event at the end of the stream is
 * discarded.  Two deliberate differences: bytes are not UTF-8 decoded, so
 * invalid sequences pass through unchanged instead of becoming U+FFFD (the
 * JSON layer above validates text); and an event whose type contains a
 * NUL byte is not reported, since no C string can name that type (a
 * browser would dispatch it to listeners nobody could have registered).
 *
 * Last event ID.  As in the standard there are two values: the parser's
 * "last event ID buffer", set as soon as an `id` line is read, and the
 * stream's last event ID, which takes the buffer's value at every blank
 * line, whether or not an event is dispatched.  The second is what
 * mcp__sse_last_event_id() returns and what a reconnection sends as
 * Last-Event-ID; so an MCP "priming" event (an id with empty data) updates
 * it without any on_event call.
 */
#ifndef MCP_SSE_H
#define MCP_SSE_H

#include <stddef.h>
#include <stdint.h>

#include "mcp_int.h"

typedef struct mcp_sse mcp_sse;

/* Default largest event data, and the cap on an `event` or `id` value. */
#define MCP_SSE_DEFAULT_MAX_EVENT ((size_t)16 * 1024 * 1024)
#define MCP_SSE_MAX_FIELD ((size_t)64 * 1024)

typedef struct mcp_sse_callbacks {
  /*
   * A dispatched event.  |event_type| is "message" when the stream gave
   * none; |data| holds |data_len| bytes followed by a NUL (the data itself
   * may contain NUL bytes); |id| is the last event ID at dispatch, "" when
   * none.  All are valid only during the call.  Return 0 to go on, non-zero
   * to make mcp__sse_feed() return MCP__EAGAIN right after this event.
   * May be NULL.
   */
  int (*on_event)(void *user, const char *event_type, const char *data, size_t data_len,
                  const char *id);
  /* A valid `retry` field: the reconnection time in ms (saturated at
   * UINT64_MAX).  May be NULL. */
  void (*on_retry)(void *user, uint64_t ms);
} mcp_sse_callbacks;

/*
 * mcp__sse_new() makes a parser for one stream, or several in turn (see
 * mcp__sse_finish()).  |max_event| caps an event's data in bytes (0: the
 * default); the `event` and `id` values are capped at the smaller of
 * |max_event| and MCP_SSE_MAX_FIELD.  Memory stays within a small multiple
 * of these caps whatever arrives.
 * Ownership: |cb| is copied; |user| is borrowed and passed to callbacks.
 * Threads: the parser is used by one thread at a time.
 * Returns the parser, or NULL when out of memory.
 */
mcp_sse *mcp__sse_new(size_t max_event, const mcp_sse_callbacks *cb, void *user);

/* Releases |p| and everything it holds (NULL does nothing).
 * Threads: the parser's thread; not from inside its own callbacks. */
void mcp__sse_free(mcp_sse *p);

/*
 * mcp__sse_feed() parses the next |n| bytes of the stream, calling the
 * callbacks for every event and retry field they complete.
 *
 * An event whose data would pass the cap, or whose `event`/`id` value would,
 * is dropped: the parser forgets it, skips to the blank line that ends it
 * and goes on with the events after, within the same call; the call then
 * returns MCP_ETOOBIG.  Allocation failure drops the event the same way and
 * returns MCP_ENOMEM.  The first such error of the call is returned.
 * When on_event asks to stop, the call returns MCP__EAGAIN at once (even if
 * an event was dropped earlier in the call); mcp__sse_consumed() then says
 * how many of the |n| bytes were used, and the rest may be fed later.
 *
 * Ownership: |data| is borrowed for the call.
 * Threads: one thread at a time per parser; not from its own callbacks.
 * Returns: MCP_OK, MCP_ETOOBIG, MCP_ENOMEM, MCP__EAGAIN.
 */
int mcp__sse_feed(mcp_sse *p, const char *data, size_t n);

/* Bytes of the last mcp__sse_feed() call that were parsed: all of them
 * unless it returned MCP__EAGAIN.  Threads: as mcp__sse_feed(). */
size_t mcp__sse_consumed(const mcp_sse *p);

/*
 * mcp__sse_finish() ends the stream: an unfinished line or event is
 * discarded, as the standard requires.  The parser is then ready for a new
 * stream (a reconnection): it expects a BOM again, and its last event ID
 * buffer starts from the last event ID, which persists, as does the retry
 * time.
 * Threads: as mcp__sse_feed().
 * Returns: MCP_OK when the stream ended between events, MCP_ECLOSED when
 *   something was discarded (the stream was cut inside an event).
 */
int mcp__sse_finish(mcp_sse *p);

/*
 * mcp__sse_last_event_id() is the ID to send as Last-Event-ID when
 * resuming, "" when the stream has set none (see the top of this file).
 * Ownership: borrowed from |p|; valid until the next feed, finish or free.
 * Threads: as mcp__sse_feed().
 */
const char *mcp__sse_last_event_id(const mcp_sse *p);

/* The last valid `retry` value in ms; 0 when none was ever received.
 * Threads: as mcp__sse_feed(). */
uint64_t mcp__sse_retry_ms(const mcp_sse *p);

#endif /* MCP_SSE_H */
