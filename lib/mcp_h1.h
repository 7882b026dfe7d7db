/* SPDX-License-Identifier: MIT */
/*
 * mcp_h1.h: HTTP/1.1 for the Streamable HTTP transport's fallback when a
 * server does not speak HTTP/2: an incremental response parser (client
 * side) and a request serialiser.  Pure: bytes in, events out; no sockets,
 * no TLS, no threads.  Fuzzable on its own.
 * Must not know about: sockets, TLS, SSE, JSON, MCP.
 *
 * The parser reads the responses of one connection in turn.  Interim 1xx
 * responses (100 Continue, 103 Early Hints) are skipped; each final
 * response gives on_headers once, its body through on_body as it arrives
 * (so an SSE parser can consume a stream as it comes), and on_complete at
 * its end with whether the connection may carry another request.  Body
 * framing follows RFC 9112 section 6.3: no body for HEAD, 1xx, 204 and 304;
 * Transfer-Encoding: chunked (the only transfer coding accepted; chunk
 * extensions ignored, trailers checked and dropped); Content-Length (every
 * value must agree); otherwise the body runs to the end of the connection
 * (mcp__h1_eof()).  Malformed or over-limit input is an error that ends
 * the connection's use: every later call returns the same error.
 */
#ifndef MCP_H1_H
#define MCP_H1_H

#include <stdbool.h>
#include <stddef.h>

#include "mcp_int.h"

typedef struct mcp_h1 mcp_h1;

/* A header field.  Both strings are NUL-terminated; a value has no leading
 * or trailing white space. */
typedef struct mcp_h1_header {
  const char *name;
  const char *value;
} mcp_h1_header;

/* Default limits: the status line and header fields of one response (and
 * separately its trailers), in bytes; and the number of fields. */
#define MCP_H1_DEFAULT_MAX_HEAD ((size_t)64 * 1024)
#define MCP_H1_DEFAULT_MAX_HEADERS ((size_t)100)

/*
 * Every callback may be NULL and returns 0 to go on or non-zero to make
 * mcp__h1_feed() return MCP__EAGAIN at once (see there).  None may call
 * mcp__h1_feed(), mcp__h1_eof(), mcp__h1_reset() or mcp__h1_free() on its
 * own parser; mcp__h1_begin() is allowed.
 */
typedef struct mcp_h1_callbacks {
  /* The head of a final response: |status| 200..599 (interim 1xx are
   * not reported) and its |n| fields in order.  The fields (and
   * mcp__h1_reason()) stay valid until on_complete returns. */
  int (*on_headers)(void *user, int status, const mcp_h1_header *hdrs, size_t n);
  /* |n| > 0 bytes of the body, decoded from chunked if need be; valid only
   * during the call. */
  int (*on_body)(void *user, const char *data, size_t n);
  /* The response is complete.  |keep_alive|: the connection may carry the
   * next request; false after "Connection: close", an HTTP/1.0 response
   * without "Connection: keep-alive", or a body delimited by the end of the
   * connection. */
  int (*on_complete)(void *user, bool keep_alive);
} mcp_h1_callbacks;

/*
 * mcp__h1_new() makes a parser for one connection.  |max_head| caps the
 * bytes of a response head (status line and fields) and, separately, of
 * its trailers; |max_headers| caps the number of fields in each; 0 takes
 * the defaults above.
 * Ownership: |cb| is copied; |user| is borrowed and passed to callbacks.
 * Threads: one thread at a time per parser (the connection's I/O thread).
 * Returns the parser, or NULL when out of memory.
 */
mcp_h1 *mcp__h1_new(size_t max_head, size_t max_headers, const mcp_h1_callbacks *cb, void *user);

/* Releases |p| and everything it holds (NULL does nothing).
 * Threads: the parser's thread; not from inside its own callbacks. */
void mcp__h1_free(mcp_h1 *p);

/*
 * mcp__h1_begin() tells the parser a request was sent, so its response is
 * the next one: |head_request| when the method was HEAD (its response has
 * no body, whatever its headers say).  Optional for other methods, but it
 * lets mcp__h1_eof() tell a server that closed an idle connection from one
 * that closed it instead of answering.
 * Threads: as mcp__h1_feed(); also from the parser's callbacks.
 */
void mcp__h1_begin(mcp_h1 *p, bool head_request);

/*
 * mcp__h1_feed() parses the next |n| bytes received on the connection,
 * calling the callbacks as responses progress.
 *
 * When a callback asks to stop, the call returns MCP__EAGAIN at once and
 * mcp__h1_consumed() says how many of the |n| bytes were used; the parser
 * resumes where it stopped when fed the rest (feed it even when no bytes
 * are left: a response without a body completes on that call).
 * Ownership: |data| is borrowed for the call; on_body gets pieces of it.
 * Threads: one thread at a time per parser; not from its callbacks.
 * Returns: MCP_OK, MCP__EAGAIN, MCP_EPROTO (malformed response, or bytes
 *   after the last response of a connection that is closing), MCP_ETOOBIG
 *   (a head or trailer section over the limits), MCP_ENOMEM.  After an
 *   error the parser is spent; mcp__h1_error() says what went wrong.
 */
int mcp__h1_feed(mcp_h1 *p, const char *data, size_t n);

/* Bytes used by the last mcp__h1_feed() call: all of them unless it
 * returned MCP__EAGAIN or an error (then, where it stopped).
 * Threads: as mcp__h1_feed(). */
size_t mcp__h1_consumed(const mcp_h1 *p);

/*
 * mcp__h1_eof() reports that the peer closed the connection.  A body
 * delimited by the close completes (on_complete with keep_alive false).
 * Threads: as mcp__h1_feed().
 * Returns: MCP_OK when nothing was cut short (the connection was idle, or
 *   the body ran to the close); MCP_ECLOSED when a response was cut short,
 *   or none came after mcp__h1_begin(); a previous error.
 */
int mcp__h1_eof(mcp_h1 *p);

/*
 * mcp__h1_reset() forgets everything, errors included, so that |p| can
 * read the responses of a new connection.
 * Threads: as mcp__h1_feed().
 */
void mcp__h1_reset(mcp_h1 *p);

/* A one-line description of the last error, "" when none.  Borrowed from
 * |p|; valid until the next call on it.  Threads: as mcp__h1_feed(). */
const char *mcp__h1_error(const mcp_h1 *p);

/* The reason phrase of the current final response ("" if none); valid
 * from on_headers until on_complete returns.  Threads: as mcp__h1_feed(). */
const char *mcp__h1_reason(const mcp_h1 *p);

/*
 * mcp__h1_header_find() returns the value of the first field in |hdrs|
 * named |name| (compared case-insensitively), or NULL.
 * Ownership: the result is borrowed from |hdrs|.  Threads: any.
 */
const char *mcp__h1_header_find(const mcp_h1_header *hdrs, size_t n, const char *name);

/*
 * mcp__h1_build_request() appends an HTTP/1.1 request to |out|:
 *   <method> <path_and_query> HTTP/1.1 CRLF
 *   Host: <authority> CRLF
 *   <hdrs, in order> CRLF ...
 *   Content-Length: <body_len> CRLF     (when body_len > 0 or method is POST)
 *   CRLF <body>
 * Nothing can be smuggled into the head: |method| must be a token,
 * |path_and_query| and |authority| visible ASCII without spaces, field
 * names tokens and field values free of control characters other than
 * HTAB (so no CR, LF or NUL); Host, Content-Length and Transfer-Encoding
 * are written here and refused in |hdrs|.
 * Ownership: all arguments are borrowed; |out| is the caller's.
 * Threads: any; no shared state.
 * Returns: MCP_OK; MCP_EINVAL or MCP_ENOMEM with |out| as it was.
 */
int mcp__h1_build_request(mcp_buf *out, const char *method, const char *path_and_query,
                          const char *authority, const mcp_h1_header *hdrs, size_t n,
                          const char *body, size_t body_len);

#endif /* MCP_H1_H */
