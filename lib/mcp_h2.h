/* SPDX-License-Identifier: MIT */
/*
 * mcp_h2.h: the nghttp2 glue of the HTTP connection layer.  One mcp_h2
 * wraps the client-side nghttp2_session of one connection: it turns
 * requests into streams, response frames into the request's callbacks
 * (through mcp_http_int.h), and serialises frames into the connection's
 * output buffer.  It never touches the socket.
 *
 * Threads: every function here runs on the owning client's I/O thread
 * only, with no lock held (so they may run request callbacks); the nghttp2
 * session is never seen by another thread.
 */
#ifndef MCP_H2_H
#define MCP_H2_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcp_http_int.h"

/* Our SETTINGS_INITIAL_WINDOW_SIZE (per stream) and connection window. */
#define MCP_H2_STREAM_WINDOW (16 * 1024 * 1024)
#define MCP_H2_CONN_WINDOW (64 * 1024 * 1024)

/*
 * mcp__h2_new() makes the session for connection |c| and queues the client
 * preface: SETTINGS (no push, large windows, our header-list cap) and a
 * connection WINDOW_UPDATE.  The bytes reach |c|'s output on the next
 * mcp__h2_fill().
 * Ownership: |c| is borrowed and must outlive the session; on MCP_OK *out is
 *   owned by |c| (mcp__h2_free).
 * Returns: MCP_OK, MCP_ENOMEM.
 */
mcp_status mcp__h2_new(mcp_http_conn *c, mcp_h2 **out, mcp_error *err);

/* mcp__h2_free() deletes the session (NULL is fine).  Ownership: the
 * requests must have been detached first (mcp__h2_conn_lost); none of
 * their callbacks runs from here. */
void mcp__h2_free(mcp_h2 *h);

/* True when a new stream may be opened now: no GOAWAY either way and fewer
 * requests in flight than the server's SETTINGS_MAX_CONCURRENT_STREAMS
 * (nghttp2 assumes 100 until the server's SETTINGS arrive). */
bool mcp__h2_can_submit(mcp_h2 *h);

/*
 * mcp__h2_submit() opens a stream for |req| (HEADERS, then DATA from its
 * body) and links |req| to the connection as ACTIVE.
 * Ownership: on MCP_OK the connection holds |req| until it finishes; on
 *   error |req| is untouched and still the caller's.
 * Returns: MCP_OK, MCP_ENOMEM, MCP_EPROTO (stream ids exhausted).
 */
mcp_status mcp__h2_submit(mcp_h2 *h, mcp_http_req *req, mcp_error *err);

/* mcp__h2_cancel() detaches |req| from its stream and queues
 * RST_STREAM(CANCEL).  Ownership: |req| stays linked to the connection;
 * the caller then finishes it (mcp__http_req_finish). */
void mcp__h2_cancel(mcp_h2 *h, mcp_http_req *req);

/*
 * mcp__h2_recv() feeds bytes read from the connection to the session, which
 * runs the requests' callbacks (and may finish requests).
 * Ownership: |data| is borrowed for the call.
 * Returns: MCP_OK, or MCP_EPROTO/MCP_ENOMEM when the session is broken
 *   (the caller then drops the connection).
 */
mcp_status mcp__h2_recv(mcp_h2 *h, const uint8_t *data, size_t n, mcp_error *err);

/*
 * mcp__h2_fill() serialises pending frames into the connection's output
 * until it holds at least |limit| bytes or nothing is left to send.
 * Returns: MCP_OK, MCP_ENOMEM, MCP_EPROTO.
 */
mcp_status mcp__h2_fill(mcp_h2 *h, size_t limit, mcp_error *err);

/* True when the session has frames to send. */
bool mcp__h2_want_write(mcp_h2 *h);

/* True when the session is finished (GOAWAY exchanged and no stream left):
 * the connection should close. */
bool mcp__h2_finished(mcp_h2 *h);

/* True once the server sent GOAWAY, or the session ended otherwise: no new
 * stream goes on this session. */
bool mcp__h2_goaway_received(const mcp_h2 *h);

/* mcp__h2_goaway_failed() says the server sent GOAWAY with an error code:
 * the connection is done (RFC 9113 6.8), so its open streams must fail
 * now, not wait for a close the server may never make. */
bool mcp__h2_goaway_failed(const mcp_h2 *h);

/*
 * mcp__h2_conn_lost() handles the loss of the connection for every request
 * still on it: a request the server never processed (stream id above a
 * received GOAWAY's last-stream-id, or never sent) is retried once on a new
 * connection; one below it fails with MCP_EIO "connection closed by GOAWAY
 * (<error>)"; without GOAWAY each fails with |status| and |msg|.
 */
void mcp__h2_conn_lost(mcp_h2 *h, mcp_status status, const char *msg);

/* mcp__h2_shutdown() queues GOAWAY(NO_ERROR) for a graceful close. */
void mcp__h2_shutdown(mcp_h2 *h);

#endif /* MCP_H2_H */
