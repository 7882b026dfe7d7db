/* SPDX-License-Identifier: MIT */
/*
 * mcp_h1_conn.h: the HTTP/1.1 glue of the HTTP connection layer, as
 * mcp_h2.h is its HTTP/2 glue.  It drives the pure parser and serialiser of
 * mcp_h1.h for one connection: one request at a time, the request at the
 * head of the connection's list owning the response the parser reports;
 * response events become that request's callbacks (through
 * mcp_http_int.h), and request heads go into the connection's output
 * buffer.  mcp_http.c owns the socket and moves the bytes; the glue only
 * peeks at it to tell whether an idle keep-alive connection is still good.
 *
 * Threads: every function here runs on the owning client's I/O thread
 * only, with no lock held (so they may run request callbacks).
 */
#ifndef MCP_H1_CONN_H
#define MCP_H1_CONN_H

#include <stdbool.h>
#include <stddef.h>

#include "mcp_http_int.h"

/*
 * mcp__h1_conn_init() gives connection |c| its HTTP/1.1 parser (c->h1),
 * capped at the client's max_header_bytes, and marks it reusable.
 * Returns: MCP_OK, MCP_ENOMEM.
 */
mcp_status mcp__h1_conn_init(mcp_http_conn *c, mcp_error *err);

/* mcp__h1_conn_free() frees |c|'s parser, if any; no callback runs. */
void mcp__h1_conn_free(mcp_http_conn *c);

/*
 * mcp__h1_conn_idle() says whether |c| can take a request now: nothing on
 * it and the last response allowed reuse.  An idle connection the server
 * has closed (EOF waiting), or one with cleartext bytes nobody asked for,
 * is closed here (marked CLOSED without failing anything) rather than
 * written to; over TLS such bytes may be a session ticket and are left to
 * the next read.
 */
bool mcp__h1_conn_idle(mcp_http_conn *c);

/*
 * mcp__h1_conn_start() serialises |req| into idle connection |c|'s output
 * and attaches it (ACTIVE).
 * Ownership: on MCP_OK |c| holds |req|; on error |req| is untouched and
 *   still the caller's.
 * Returns: MCP_OK, MCP_ENOMEM, or the serialiser's refusal (MCP_EINVAL).
 */
mcp_status mcp__h1_conn_start(mcp_http_conn *c, mcp_http_req *req, mcp_error *err);

/*
 * mcp__h1_conn_feed() hands |n| bytes read from |c| to its parser, which
 * runs the head request's callbacks (and may finish it).  Bytes that
 * arrive while no request is on |c| close it quietly; so does the end of a
 * response that forbids reuse.
 * Ownership: |p| is borrowed for the call.
 * Returns: MCP_OK, or MCP_EPROTO/MCP_ENOMEM (the caller then drops |c|).
 */
mcp_status mcp__h1_conn_feed(mcp_http_conn *c, const char *p, size_t n, mcp_error *err);

/*
 * mcp__h1_conn_eof() handles the peer's close of |c|: it may complete a
 * body delimited by the close; then |c| closes quietly when nothing is on
 * it, or is dropped (MCP_EIO) with its requests.
 */
void mcp__h1_conn_eof(mcp_http_conn *c);

/*
 * mcp__h1_conn_lost() handles the loss of |c| (already CLOSED) for every
 * request on it: one that sent no byte, or that got no byte back on a
 * reused keep-alive connection, is retried when |status| is MCP_EIO
 * (mcp__http_req_retry decides by method); the others finish with |status|
 * and |msg|.
 */
void mcp__h1_conn_lost(mcp_http_conn *c, mcp_status status, const char *msg);

#endif /* MCP_H1_CONN_H */
