/* SPDX-License-Identifier: MIT */
/*
 * mcp_h1_conn.c: the HTTP/1.1 glue of the HTTP connection layer, as
 * mcp_h2.c is its HTTP/2 glue: it drives one connection's mcp_h1 parser
 * and serialiser.  A request goes out on an idle keep-alive connection as
 * one serialised head and body in the connection's output buffer; the
 * parser's on_headers, on_body and on_complete become the head request's
 * on_headers, on_data and on_done (through the services of
 * mcp_http_int.h); a lost connection fails or re-queues its requests by
 * the retry rules.  mcp_http.c owns the socket and moves the bytes; this
 * file only peeks at an idle connection to see that the server has not
 * closed it.
 * Must not know about: TLS, threads, MCP.
 *
 * Threads: the client's I/O thread only (see mcp_h1_conn.h).
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "mcp_h1_conn.h"

/*
 * One request at a time per connection: the request at the head of the
 * connection's list owns the response the parser reports.  Field names are
 * handed to on_headers in lower case, as HTTP/2 delivers them, so callers
 * see one shape whatever the protocol.
 */

static int h1_on_headers(void *user, int status, const mcp_h1_header *hdrs, size_t n) {
  mcp_http_conn *c = user;
  mcp_http_req *r = c->reqs_head;
  if (!r) return 0;
  mcp_http_header small[32];
  mcp_http_header *hv = small;
  char *names = NULL;
  size_t bytes = 0;
  for (size_t i = 0; i < n; i++) bytes += strlen(hdrs[i].name) + 1;
  if (n > sizeof(small) / sizeof(small[0])) hv = mcp__calloc(n, sizeof(*hv));
  names = mcp__malloc(bytes);
  if (!hv || !names) {
    /* Out of memory: the status still goes through, without fields. */
    if (hv != small) mcp__free(hv);
    mcp__free(names);
    mcp__http_req_deliver_head(r, status, NULL, 0);
    return 0;
  }
  char *p = names;
  for (size_t i = 0; i < n; i++) {
    size_t len = strlen(hdrs[i].name);
    for (size_t k = 0; k < len; k++) p[k] = (char)tolower((unsigned char)hdrs[i].name[k]);
    p[len] = '\0';
    hv[i].name = p;
    hv[i].value = hdrs[i].value;
    p += len + 1;
  }
  mcp__http_req_deliver_head(r, status, hv, n);
  if (hv != small) mcp__free(hv);
  mcp__free(names);
  return 0;
}

static int h1_on_body(void *user, const char *data, size_t n) {
  mcp_http_conn *c = user;
  mcp_http_req *r = c->reqs_head;
  if (r) mcp__http_req_data(r, data, n);
  return 0;
}

static int h1_on_complete(void *user, bool keep_alive) {
  mcp_http_conn *c = user;
  mcp_http_req *r = c->reqs_head;
  c->h1_served++;
  c->h1_keepalive = keep_alive;
  if (r) mcp__http_req_finish(r, MCP_OK, NULL);
  return 0;
}

static const mcp_h1_callbacks h1_callbacks = {h1_on_headers, h1_on_body, h1_on_complete};

mcp_status mcp__h1_conn_init(mcp_http_conn *c, mcp_error *err) {
  c->h1 = mcp__h1_new(mcp__http_conn_max_header_bytes(c), 0, &h1_callbacks, c);
  if (!c->h1) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  c->h1_keepalive = true;
  return MCP_OK;
}

void mcp__h1_conn_free(mcp_http_conn *c) {
  mcp__h1_free(c->h1);
  c->h1 = NULL;
}

/* Can |c| take a request now?  An idle keep-alive connection the server
 * has closed (EOF waiting) is dropped here rather than written to: a
 * request written to it would be lost without proof of whether the server
 * saw it.  Cleartext bytes on an idle connection make it unusable too (an
 * unsolicited response); over TLS they may be a session ticket, which the
 * next read consumes. */
bool mcp__h1_conn_idle(mcp_http_conn *c) {
  if (c->nreqs != 0 || !c->h1_keepalive) return false;
  char b;
  ssize_t n = recv(c->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return true;
  if (n > 0 && c->tls) return true;
  mcp__http_conn_close_quiet(c);
  return false;
}

/* Serialises |req| onto idle connection |c| and attaches it. */
mcp_status mcp__h1_conn_start(mcp_http_conn *c, mcp_http_req *req, mcp_error *err) {
  mcp_buf b;
  mcp__buf_init(&b);
  mcp_h1_header small[16];
  mcp_h1_header *hv = small;
  mcp_status st;
  if (req->nheaders > sizeof(small) / sizeof(small[0])) {
    hv = mcp__calloc(req->nheaders, sizeof(*hv));
    if (!hv) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  }
  for (size_t i = 0; i < req->nheaders; i++) {
    hv[i].name = req->headers[i].name;
    hv[i].value = req->headers[i].value;
  }
  st = mcp__h1_build_request(&b, req->method, req->path, mcp__http_conn_authority(c), hv,
                             req->nheaders, req->body, req->body_len);
  if (st != MCP_OK) {
    st = mcp__error_set(err, st, "cannot write the HTTP/1.1 request: %s", mcp_strerror(st));
    goto out;
  }
  if (mcp__http_conn_queue(c, b.data, b.len) != MCP_OK) {
    st = mcp__error_set(err, MCP_ENOMEM, "out of memory");
    goto out;
  }
  mcp__h1_begin(c->h1, strcmp(req->method, "HEAD") == 0);
  mcp__http_conn_attach(c, req);
  req->sent = true;
out:
  if (hv != small) mcp__free(hv);
  mcp__buf_free(&b);
  return st;
}

mcp_status mcp__h1_conn_feed(mcp_http_conn *c, const char *p, size_t n, mcp_error *err) {
  if (c->nreqs == 0) {
    /* Bytes nobody asked for: the connection cannot be trusted again. */
    mcp__http_conn_close_quiet(c);
    return MCP_OK;
  }
  int st = mcp__h1_feed(c->h1, p, n);
  if (st == MCP_OK) {
    if (!c->h1_keepalive && c->nreqs == 0) mcp__http_conn_close_quiet(c);
    return MCP_OK;
  }
  if (st == MCP_ETOOBIG)
    return mcp__error_set(err, MCP_EPROTO, "response header block exceeds %zu bytes",
                          mcp__http_conn_max_header_bytes(c));
  if (st == MCP_ENOMEM) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  return mcp__error_set(err, MCP_EPROTO, "invalid HTTP/1.1 response: %s", mcp__h1_error(c->h1));
}

/* The peer closed the connection. */
void mcp__h1_conn_eof(mcp_http_conn *c) {
  mcp_http_req *r = c->reqs_head;
  int st = mcp__h1_eof(c->h1); /* may complete a body delimited by close */
  if (st == MCP_OK && c->nreqs == 0) {
    mcp__http_conn_close_quiet(c);
    return;
  }
  r = c->reqs_head;
  mcp__http_conn_drop(c, MCP_EIO,
                      r && r->got_bytes ? "connection closed in the middle of the response"
                                        : "connection closed before response");
}

/* See mcp_h1_conn.h. */
void mcp__h1_conn_lost(mcp_http_conn *c, mcp_status st, const char *msg) {
  mcp_http_req *r = c->reqs_head;
  while (r) {
    mcp_http_req *next = r->next;
    /* A request on a reused keep-alive connection that the server had
     * already closed gets no byte back.  Sending it once more on a fresh
     * connection is safe when none of it was written, or when its method
     * is idempotent (mcp__http_req_retry decides); a POST the server may
     * have run fails instead (RFC 9110 9.2.2). */
    if (st == MCP_EIO && (!r->on_wire || (c->h1_served > 0 && !r->got_bytes)))
      mcp__http_req_retry(r, msg, false);
    else mcp__http_req_finish(r, st, msg);
    r = next;
  }
}
