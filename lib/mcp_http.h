/* SPDX-License-Identifier: MIT */
/*
 * mcp_http.h: the HTTP connection layer under the Streamable HTTP transport.
 * One mcp_http_client per origin (scheme, host, port) owns one I/O thread,
 * which alone touches its sockets, SSL objects and nghttp2 sessions.  It
 * speaks HTTP/2 over TLS (ALPN "h2"), HTTP/1.1 over TLS (ALPN "http/1.1" or
 * no ALPN), cleartext HTTP/1.1, and cleartext h2c with prior knowledge.
 * Other threads hand it work through a queue and a wake-up pipe.
 *
 * Knows nothing of MCP or JSON-RPC: it moves HTTP requests and streamed
 * response bodies.
 */
#ifndef MCP_HTTP_H
#define MCP_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcp_int.h"
#include "mcp_settings.h"

typedef struct mcp_http_client mcp_http_client;

/* Which HTTP versions a client uses: the public mcp_http_version
 * (mcpconn.h).  AUTO: on https ALPN offers h2 then http/1.1 and uses what
 * the server picks, on http HTTP/1.1.  1_1: HTTP/1.1 only, even over TLS.
 * 2_PRIOR_KNOWLEDGE: h2c prior knowledge on http, or h2 over TLS failing
 * when ALPN does not select h2. */

typedef struct mcp_http_header {
  const char *name; /* lower-case for HTTP/2; compared case-insensitively */
  const char *value;
} mcp_http_header;

typedef struct mcp_http_config {
  const char *scheme; /* "http" or "https" */
  const char *host;   /* name, IPv4 or IPv6 literal without brackets */
  int port;
  mcp_http_version mode;
  mcp_tls_settings tls;       /* strings borrowed for mcp__http_client_new() */
  int64_t connect_timeout_ms; /* TCP + TLS handshake; 0: 10000 */
  size_t max_h1_connections;  /* keep-alive pool size per origin; 0: 8 */
  size_t max_header_bytes;    /* response header block cap; 0: 64 KiB */
} mcp_http_config;

/*
 * Response callbacks of one request.  All run on the I/O thread and must not
 * block; they may call mcp__http_submit() and mcp__http_cancel().
 * on_done runs exactly once per accepted request, last.
 */
typedef struct mcp_http_callbacks {
  /* The final (non-1xx) response head. */
  void (*on_headers)(void *user, int status, const mcp_http_header *headers, size_t n);
  /* Body bytes as they arrive (already de-chunked). */
  void (*on_data)(void *user, const char *data, size_t n);
  /*
   * The exchange ended: MCP_OK after the whole body; MCP_ECANCELLED after
   * mcp__http_cancel(); MCP_ETIMEDOUT (connect); MCP_ETLS (handshake or
   * verification, message says why: "certificate verify failed: ...",
   * "host name mismatch"); MCP_EIO (refused, reset: "stream reset by server
   * (REFUSED_STREAM)", "connection closed before response"); MCP_EPROTO;
   * MCP_ECLOSED (client freed).  A request the server never processed
   * (GOAWAY above its last-stream-id, REFUSED_STREAM, a connection that
   * closed before any byte of it was written) is retried once on a fresh
   * connection before it fails; a request that may have reached the server
   * is resent only when its method is idempotent (GET, HEAD, PUT, DELETE,
   * OPTIONS, TRACE: RFC 9110 9.2.2), never a POST.
   * |not_sent| is true when the request provably never reached the server
   * (or the server refused it unprocessed): no connection could be made,
   * no byte of it was written, or it was refused as above, in every
   * attempt.  The caller may then send it again whatever its method.
   */
  void (*on_done)(void *user, mcp_status status, const char *message, bool not_sent);
} mcp_http_callbacks;

/*
 * mcp__http_client_new() validates |cfg|, loads TLS material and starts the
 * I/O thread.  Connections are made lazily on the first request.
 * Ownership: |cfg| is copied.  Threads: any.
 * Returns: MCP_OK, MCP_EINVAL, MCP_ETLS (unreadable CA/cert/key), MCP_ENOMEM.
 */
mcp_status mcp__http_client_new(const mcp_http_config *cfg, mcp_http_client **out, mcp_error *err);

/*
 * mcp__http_client_free() fails every outstanding request with MCP_ECLOSED
 * (their on_done runs on the I/O thread), closes connections (TLS
 * close_notify, HTTP/2 GOAWAY), joins the I/O thread and frees.  Not from
 * the I/O thread.
 */
void mcp__http_client_free(mcp_http_client *h);

/*
 * mcp__http_submit() queues one request.  Adds Host/:authority, and
 * Content-Length for a body; |headers| must not contain those, nor CR, LF
 * or NUL (MCP_EINVAL).  Requests beyond SETTINGS_MAX_CONCURRENT_STREAMS (or
 * the HTTP/1.1 pool size) wait in order.
 * Ownership: everything is copied before return; |cb| must stay valid until
 *   on_done.  On MCP_OK, *id (if not NULL) names the request for cancel.
 * Threads: any, including the I/O thread (inside a callback).
 * Returns: MCP_OK (on_done will run once), MCP_EINVAL, MCP_ECLOSED,
 *   MCP_ENOMEM (on_done never runs).
 */
mcp_status mcp__http_submit(mcp_http_client *h, const char *method, const char *path_and_query,
                            const mcp_http_header *headers, size_t nheaders, const char *body,
                            size_t body_len, const mcp_http_callbacks *cb, void *user, uint64_t *id,
                            mcp_error *err);

/*
 * mcp__http_cancel() stops request |id|: HTTP/2 RST_STREAM(CANCEL); HTTP/1.1
 * closes that connection.  Its on_done runs with MCP_ECANCELLED unless it
 * had already ended.  Unknown ids are ignored.  Threads: any.
 */
void mcp__http_cancel(mcp_http_client *h, uint64_t id);

/*
 * mcp__http_client_stall() describes why no connection is up, for a caller
 * whose request timed out: the attempt in progress ("TCP connect to
 * HOST:PORT did not complete in N ms", "TLS handshake with HOST:PORT
 * stalled: no answer in N ms", "resolving HOST did not complete in N
 * ms"), else the last attempt's failure if none succeeded since.
 * Returns false (|buf| untouched) when there is nothing to say.
 * Threads: any.
 */
bool mcp__http_client_stall(mcp_http_client *h, char *buf, size_t n);

/* "h2", "h2c", "http/1.1" once a connection was made, else NULL. */
const char *mcp__http_client_protocol(mcp_http_client *h);

#endif /* MCP_HTTP_H */
