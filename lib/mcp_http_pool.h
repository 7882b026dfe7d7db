/* SPDX-License-Identifier: MIT */
/*
 * mcp_http_pool.h: one HTTP client per origin, shared.  Every Streamable
 * HTTP / SSE transport of the process to the same origin with the same
 * connection settings (scheme, host, port, HTTP version mode, TLS files,
 * insecure, limits) uses one mcp_http_client: one I/O thread and one
 * HTTP/2 connection (or one HTTP/1.1 keep-alive pool) instead of one
 * each.  1000 server names on one endpoint cost tens of I/O threads, not
 * a thousand.
 *
 * A client is shared by at most MCP_HTTP_POOL_OWNERS transports, so that
 * their long-lived GET streams (one listener each) cannot fill an HTTP/2
 * connection's concurrent streams and starve their POSTs; the next
 * transport to that origin gets a second client.  An HTTP/1.1 client of the
 * pool may open MCP_HTTP_POOL_OWNERS times the configured keep-alive pool,
 * what that many separate clients could.
 *
 * An owner ends its own requests before it lets go (mcp__http_cancel();
 * the transport does); the client is freed with its last owner.
 * Threads: any, but mcp__http_pool_put() not from the client's own I/O
 * thread (as mcp__http_client_free()).
 */
#ifndef MCP_HTTP_POOL_H
#define MCP_HTTP_POOL_H

#include "mcp_http.h"

#define MCP_HTTP_POOL_OWNERS 16

/*
 * mcp__http_pool_get() returns a client for |cfg| (copied), shared with
 * other owners of the same settings, or a new one.
 * Returns: what mcp__http_client_new() returns.
 */
mcp_status mcp__http_pool_get(const mcp_http_config *cfg, mcp_http_client **out, mcp_error *err);

/* mcp__http_pool_put() gives back one owner's reference to |h| (NULL: no-op);
 * the last one frees it.  The owner's requests must have ended. */
void mcp__http_pool_put(mcp_http_client *h);

/* Clients the pool holds now, and their owners in all (for tests). */
void mcp__http_pool_stats(size_t *clients, size_t *owners);

#endif /* MCP_HTTP_POOL_H */
