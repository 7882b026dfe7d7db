/* SPDX-License-Identifier: MIT */
/*
 * mcp_tls.h: the OpenSSL glue of the HTTP connection layer.  One
 * mcp_tls_ctx per mcp_http_client holds the SSL_CTX (trust store, client
 * certificate, ALPN offer, TLS 1.2 minimum); one mcp_tls per connection
 * wraps an SSL object on a non-blocking socket that the caller owns.
 *
 * Knows nothing of HTTP framing, nghttp2 or threads: the caller (the
 * client's I/O thread) polls the socket and calls back in when the
 * direction reported by the last call is ready.
 */
#ifndef MCP_TLS_H
#define MCP_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "mcp_int.h"
#include "mcp_settings.h"

typedef struct mcp_tls_ctx mcp_tls_ctx;
typedef struct mcp_tls mcp_tls;

/* Which application protocols the context offers through ALPN. */
typedef enum mcp_tls_alpn {
  MCP_TLS_ALPN_H2_H1 = 0, /* "h2" then "http/1.1" */
  MCP_TLS_ALPN_H1 = 1,    /* "http/1.1" only */
  MCP_TLS_ALPN_H2 = 2     /* "h2" only */
} mcp_tls_alpn;

/* What a non-blocking call is waiting for (bit set). */
#define MCP_TLS_WANT_READ 1
#define MCP_TLS_WANT_WRITE 2

/*
 * mcp__tls_ctx_new() makes the SSL_CTX of one client: peer verification on
 * unless tls->insecure (trust from ca_file and/or ca_dir, or the system
 * default paths when both are NULL), an optional client certificate chain
 * and key (PEM, both or neither), TLS 1.2 at least, renegotiation off, and
 * the ALPN list |alpn|.
 * Ownership: the strings are borrowed; the context keeps nothing of them.
 *   On MCP_OK *out is owned by the caller (mcp__tls_ctx_free).
 * Threads: any thread; the context is then only read, by one I/O thread.
 * Returns: MCP_OK, MCP_ETLS (unreadable CA, certificate or key; the message
 *   names the file and OpenSSL's reason), MCP_EINVAL (cert without key),
 *   MCP_ENOMEM.
 */
mcp_status mcp__tls_ctx_new(const mcp_tls_settings *tls, mcp_tls_alpn alpn, mcp_tls_ctx **out,
                            mcp_error *err);

/* mcp__tls_ctx_free() releases |ctx| (NULL is fine).  Connections made
 * from it hold their own reference to the SSL_CTX.  Threads: any, once no
 * other thread uses |ctx|. */
void mcp__tls_ctx_free(mcp_tls_ctx *ctx);

/*
 * mcp__tls_new() wraps the connected, non-blocking socket |fd| for a
 * handshake with |host|: SNI and host-name verification for a DNS name,
 * IP-address verification (and no SNI) for an IPv4/IPv6 literal.
 * Ownership: |fd| stays the caller's (closed by the caller after
 *   mcp__tls_free); |host| is copied.  On MCP_OK *out is the caller's.
 * Threads: the connection's I/O thread only, from here on.
 * Returns: MCP_OK, MCP_ETLS, MCP_ENOMEM.
 */
mcp_status mcp__tls_new(mcp_tls_ctx *ctx, int fd, const char *host, mcp_tls **out, mcp_error *err);

/* mcp__tls_free() frees the SSL object without sending anything (NULL is
 * fine).  Threads: the I/O thread. */
void mcp__tls_free(mcp_tls *t);

/*
 * mcp__tls_handshake() advances the client handshake.
 * Returns: MCP_OK once complete; MCP__EAGAIN when it must wait (see
 *   mcp__tls_wants); MCP_ETLS with a precise message on failure
 *   ("certificate verify failed: self-signed certificate",
 *   "certificate verify failed: hostname mismatch", the peer's alert, ...).
 * Threads: the I/O thread.
 */
mcp_status mcp__tls_handshake(mcp_tls *t, mcp_error *err);

/* The MCP_TLS_WANT_* bits the last MCP__EAGAIN from this object waits for. */
int mcp__tls_wants(const mcp_tls *t);

/*
 * mcp__tls_read() reads decrypted bytes.
 * Returns: > 0 bytes read; 0 at the end of the stream (close_notify, or the
 *   peer closing the socket); MCP__EAGAIN (see mcp__tls_wants); MCP_EIO or
 *   MCP_ETLS with |err| filled.
 */
ssize_t mcp__tls_read(mcp_tls *t, void *buf, size_t n, mcp_error *err);

/*
 * mcp__tls_write() encrypts and sends up to |n| bytes (partial writes
 * allowed).  After MCP__EAGAIN the next call must pass the same bytes and at
 * least the same length (OpenSSL's retry rule; the buffer may move).
 * Returns: > 0 bytes consumed; MCP__EAGAIN; MCP_EIO or MCP_ETLS.
 */
ssize_t mcp__tls_write(mcp_tls *t, const void *buf, size_t n, mcp_error *err);

/* The protocol the server selected through ALPN ("h2", "http/1.1"), or
 * NULL when it selected none.  Valid after the handshake. */
const char *mcp__tls_alpn_selected(const mcp_tls *t);

/* mcp__tls_close_notify() sends close_notify once, without waiting for the
 * peer's; best effort.  Threads: the I/O thread. */
void mcp__tls_close_notify(mcp_tls *t);

/* True when |host| is an IPv4 or IPv6 literal (no brackets). */
bool mcp__tls_host_is_ip(const char *host);

#endif /* MCP_TLS_H */
