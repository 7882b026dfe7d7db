/* SPDX-License-Identifier: MIT */
/*
 * mcp_h2.c: the nghttp2 glue of the HTTP connection layer.  Requests
 * become streams on the connection's client session; response HEADERS,
 * DATA, RST_STREAM and GOAWAY become the request's on_headers, on_data and
 * on_done (through the services of mcp_http_int.h).  Frames go into the
 * connection's output buffer with nghttp2_session_mem_send; mcp_http.c
 * moves them to the socket.
 * Must not know about: sockets, TLS, threads, MCP.
 *
 * A request is found from its stream through the stream user data.  When a
 * request ends before its stream does (cancel, header cap, connection
 * loss) the user data is cleared first, so later callbacks for that stream
 * (DATA still in flight, the body provider, the final close) find nothing
 * and do nothing: the request may already be freed.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <nghttp2/nghttp2.h>

#include "mcp_h2.h"

struct mcp_h2 {
  nghttp2_session *s;
  mcp_http_conn *c;
  bool goaway_recv;     /* the server sent GOAWAY */
  int32_t goaway_last;  /* its last-stream-id */
  uint32_t goaway_code; /* its error code */
  bool broken;          /* a callback failed fatally (out of memory) */
  bool settings_recv;   /* the server's first SETTINGS arrived */
};

/* ---- allocation through mcp__malloc, so failure tests reach nghttp2 ---- */

static void *mem_malloc(size_t size, void *ud) {
  (void)ud;
  return mcp__malloc(size);
}
static void mem_free(void *p, void *ud) {
  (void)ud;
  mcp__free(p);
}
static void *mem_calloc(size_t nmemb, size_t size, void *ud) {
  (void)ud;
  return mcp__calloc(nmemb, size);
}
static void *mem_realloc(void *p, size_t size, void *ud) {
  (void)ud;
  return mcp__realloc(p, size);
}

/* ---- helpers --------------------------------------------------------------- */

static mcp_http_req *stream_req(mcp_h2 *h, int32_t stream_id) {
  return nghttp2_session_get_stream_user_data(h->s, stream_id);
}

static void detach(mcp_h2 *h, mcp_http_req *req) {
  if (req->stream_id > 0) (void)nghttp2_session_set_stream_user_data(h->s, req->stream_id, NULL);
}

static int parse_status(const uint8_t *v, size_t n) {
  if (n != 3) return -1;
  int st = 0;
  for (size_t i = 0; i < 3; i++) {
    if (v[i] < '0' || v[i] > '9') return -1;
    st = st * 10 + (v[i] - '0');
  }
  return st >= 100 ? st : -1;
}

/* Ends |req| because its stream closed with |code|; |by_peer| when the
 * server sent the RST_STREAM itself. */
static void stream_ended(mcp_h2 *h, mcp_http_req *req, uint32_t code, bool by_peer) {
  char msg[160];
  detach(h, req);
  if (code == NGHTTP2_NO_ERROR) {
    if (req->head_done) mcp__http_req_finish(req, MCP_OK, NULL);
    else mcp__http_req_finish(req, MCP_EPROTO, "stream ended without a response head");
    return;
  }
  if (code == NGHTTP2_REFUSED_STREAM) {
    /* The server did not process it (RFC 9113 8.7): safe to send again.
     * nghttp2 also closes with REFUSED_STREAM the streams above a received
     * GOAWAY's last-stream-id and requests it could not send. */
    if (h->goaway_recv && req->stream_id > h->goaway_last)
      snprintf(msg, sizeof(msg), "request refused by GOAWAY (%s, last stream %d)",
               nghttp2_http2_strerror(h->goaway_code), (int)h->goaway_last);
    else snprintf(msg, sizeof(msg), "stream reset by server (REFUSED_STREAM)");
    /* A refusal of a stream opened before the server's SETTINGS came (we
     * assumed nghttp2's default of 100 concurrent streams) does not use
     * up the request's one retry. */
    mcp__http_req_refused(req);
    mcp__http_req_retry(req, msg, req->early);
    return;
  }
  if (by_peer) {
    snprintf(msg, sizeof(msg), "stream reset by server (%s)", nghttp2_http2_strerror(code));
    mcp__http_req_finish(req, MCP_EIO, msg);
  } else {
    snprintf(msg, sizeof(msg), "stream closed: the server broke HTTP/2 (%s)",
             nghttp2_http2_strerror(code));
    mcp__http_req_finish(req, MCP_EPROTO, msg);
  }
}

/* ---- nghttp2 callbacks ------------------------------------------------------ */

static int on_begin_headers(nghttp2_session *s, const nghttp2_frame *frame, void *ud) {
  (void)s;
  mcp_h2 *h = ud;
  if (frame->hd.type != NGHTTP2_HEADERS) return 0;
  mcp_http_req *req = stream_req(h, frame->hd.stream_id);
  if (!req || req->head_done) return 0;
  /* A new head: after a 1xx the fields start over. */
  mcp__http_req_clear_fields(req);
  req->status = 0;
  req->got_bytes = true;
  return 0;
}

static int on_header(nghttp2_session *s, const nghttp2_frame *frame, const uint8_t *name,
                     size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
                     void *ud) {
  (void)flags;
  mcp_h2 *h = ud;
  if (frame->hd.type != NGHTTP2_HEADERS) return 0;
  mcp_http_req *req = stream_req(h, frame->hd.stream_id);
  if (!req || req->head_done) return 0; /* trailers are dropped */
  if (namelen == 7 && memcmp(name, ":status", 7) == 0) {
    req->status = parse_status(value, valuelen);
    req->rh_bytes += namelen + valuelen + 4;
  }
  mcp_status st = MCP_OK;
  if (name[0] != ':')
    st = mcp__http_req_add_field(req, (const char *)name, namelen, (const char *)value, valuelen);
  else if (req->rh_bytes > mcp__http_conn_max_header_bytes(h->c)) st = MCP_EPROTO;
  if (st == MCP_OK) return 0;

  char msg[128];
  if (st == MCP_EPROTO)
    snprintf(msg, sizeof(msg), "response header block exceeds %zu bytes",
             mcp__http_conn_max_header_bytes(h->c));
  else snprintf(msg, sizeof(msg), "out of memory");
  detach(h, req);
  (void)nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, frame->hd.stream_id, NGHTTP2_CANCEL);
  mcp__http_req_finish(req, st, msg);
  /* Stop decoding this block; nghttp2 keeps the HPACK state right. */
  return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
}

static int on_frame_recv(nghttp2_session *s, const nghttp2_frame *frame, void *ud) {
  (void)s;
  mcp_h2 *h = ud;
  mcp_http_req *req;
  switch (frame->hd.type) {
  case NGHTTP2_HEADERS:
    req = stream_req(h, frame->hd.stream_id);
    if (!req || req->head_done) return 0;
    if (req->status < 0) {
      detach(h, req);
      (void)nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, frame->hd.stream_id,
                                      NGHTTP2_PROTOCOL_ERROR);
      mcp__http_req_finish(req, MCP_EPROTO, "invalid :status in response");
      return 0;
    }
    if (req->status >= 100 && req->status < 200) {
      mcp__http_req_clear_fields(req);
      req->status = 0;
      return 0;
    }
    mcp__http_req_head(req);
    return 0;
  case NGHTTP2_RST_STREAM:
    req = stream_req(h, frame->hd.stream_id);
    if (req) stream_ended(h, req, frame->rst_stream.error_code, true);
    return 0;
  case NGHTTP2_SETTINGS:
    if (!(frame->hd.flags & NGHTTP2_FLAG_ACK)) h->settings_recv = true;
    return 0;
  case NGHTTP2_GOAWAY:
    h->goaway_recv = true;
    h->goaway_last = frame->goaway.last_stream_id;
    h->goaway_code = frame->goaway.error_code;
    return 0;
  default: return 0;
  }
}

static int on_data_chunk_recv(nghttp2_session *s, uint8_t flags, int32_t stream_id,
                              const uint8_t *data, size_t len, void *ud) {
  (void)s;
  (void)flags;
  mcp_h2 *h = ud;
  mcp_http_req *req = stream_req(h, stream_id);
  if (req && req->head_done && len) mcp__http_req_data(req, (const char *)data, len);
  return 0;
}

static int on_stream_close(nghttp2_session *s, int32_t stream_id, uint32_t error_code, void *ud) {
  (void)s;
  mcp_h2 *h = ud;
  mcp_http_req *req = stream_req(h, stream_id);
  if (req) stream_ended(h, req, error_code, false);
  return 0;
}

static int on_frame_send(nghttp2_session *s, const nghttp2_frame *frame, void *ud) {
  (void)s;
  mcp_h2 *h = ud;
  if (frame->hd.type == NGHTTP2_HEADERS && frame->headers.cat == NGHTTP2_HCAT_REQUEST) {
    mcp_http_req *req = stream_req(h, frame->hd.stream_id);
    if (req) req->sent = req->on_wire = true;
  }
  return 0;
}

static ssize_t read_body(nghttp2_session *s, int32_t stream_id, uint8_t *buf, size_t length,
                         uint32_t *data_flags, nghttp2_data_source *source, void *ud) {
  (void)s;
  (void)source;
  mcp_h2 *h = ud;
  mcp_http_req *req = stream_req(h, stream_id);
  if (!req) {
    /* The request ended (cancelled); RST_STREAM follows. */
    *data_flags |= NGHTTP2_DATA_FLAG_EOF;
    return 0;
  }
  size_t left = req->body_len - req->body_off;
  size_t n = left < length ? left : length;
  if (n) memcpy(buf, req->body + req->body_off, n);
  req->body_off += n;
  if (req->body_off == req->body_len) *data_flags |= NGHTTP2_DATA_FLAG_EOF;
  return (ssize_t)n;
}

/* ---- life cycle ------------------------------------------------------------- */

mcp_status mcp__h2_new(mcp_http_conn *c, mcp_h2 **out, mcp_error *err) {
  mcp_status st = MCP_ENOMEM;
  nghttp2_session_callbacks *cbs = NULL;
  nghttp2_option *opt = NULL;
  nghttp2_mem mem = {NULL, mem_malloc, mem_free, mem_calloc, mem_realloc};
  mcp_h2 *h = mcp__calloc(1, sizeof(*h));
  *out = NULL;
  if (!h) goto fail;
  h->c = c;

  if (nghttp2_session_callbacks_new(&cbs) != 0) goto fail;
  nghttp2_session_callbacks_set_on_begin_headers_callback(cbs, on_begin_headers);
  nghttp2_session_callbacks_set_on_header_callback(cbs, on_header);
  nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, on_frame_recv);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, on_data_chunk_recv);
  nghttp2_session_callbacks_set_on_stream_close_callback(cbs, on_stream_close);
  nghttp2_session_callbacks_set_on_frame_send_callback(cbs, on_frame_send);

  if (nghttp2_option_new(&opt) != 0) goto fail;
  /* Let the response head cap apply per field list, not nghttp2's 64 KiB
   * default per field. */
  nghttp2_option_set_max_send_header_block_length(opt, 256 * 1024);

  if (nghttp2_session_client_new3(&h->s, cbs, h, opt, &mem) != 0) goto fail;

  size_t cap = mcp__http_conn_max_header_bytes(c);
  nghttp2_settings_entry iv[] = {
      {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
      {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, MCP_H2_STREAM_WINDOW},
      {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, cap > UINT32_MAX ? UINT32_MAX : (uint32_t)cap},
  };
  if (nghttp2_submit_settings(h->s, NGHTTP2_FLAG_NONE, iv, sizeof(iv) / sizeof(iv[0])) != 0)
    goto fail;
  if (nghttp2_session_set_local_window_size(h->s, NGHTTP2_FLAG_NONE, 0, MCP_H2_CONN_WINDOW) != 0)
    goto fail;

  nghttp2_option_del(opt);
  nghttp2_session_callbacks_del(cbs);
  *out = h;
  return MCP_OK;

fail:
  nghttp2_option_del(opt);
  nghttp2_session_callbacks_del(cbs);
  mcp__h2_free(h);
  return mcp__error_set(err, st, "cannot start HTTP/2 session: out of memory");
}

void mcp__h2_free(mcp_h2 *h) {
  if (!h) return;
  nghttp2_session_del(h->s);
  mcp__free(h);
}

bool mcp__h2_can_submit(mcp_h2 *h) {
  if (h->goaway_recv || h->broken) return false;
  if (!nghttp2_session_check_request_allowed(h->s)) return false;
  uint32_t max = nghttp2_session_get_remote_settings(h->s, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS);
  return h->c->nreqs < max;
}

bool mcp__h2_goaway_failed(const mcp_h2 *h) {
  return h->goaway_recv && h->goaway_code != NGHTTP2_NO_ERROR;
}

bool mcp__h2_goaway_received(const mcp_h2 *h) {
  /* Also true once nghttp2 itself ended the session (say a header block
   * it could not compress for want of memory): it opens no more streams,
   * so requests refused meanwhile must go to a new connection. */
  return h->goaway_recv || h->broken || !nghttp2_session_check_request_allowed(h->s);
}

/* Methods whose request carries a Content-Length even when empty. */
static bool method_has_body(const char *m) {
  return strcmp(m, "POST") == 0 || strcmp(m, "PUT") == 0 || strcmp(m, "PATCH") == 0;
}

#define NV(n, v, vl) \
  (nghttp2_nv) { (uint8_t *)(n), (uint8_t *)(v), strlen(n), (vl), NGHTTP2_NV_FLAG_NONE }

mcp_status mcp__h2_submit(mcp_h2 *h, mcp_http_req *req, mcp_error *err) {
  const char *authority = mcp__http_conn_authority(h->c);
  const char *scheme = mcp__http_conn_scheme(h->c);
  char clen[32];
  size_t n = 0;
  nghttp2_nv *nva = mcp__calloc(5 + req->nheaders, sizeof(*nva));
  if (!nva) return mcp__error_set(err, MCP_ENOMEM, "out of memory");

  nva[n++] = NV(":method", req->method, strlen(req->method));
  nva[n++] = NV(":scheme", scheme, strlen(scheme));
  nva[n++] = NV(":authority", authority, strlen(authority));
  nva[n++] = NV(":path", req->path, strlen(req->path));
  for (size_t i = 0; i < req->nheaders; i++)
    nva[n++] = NV(req->headers[i].name, req->headers[i].value, strlen(req->headers[i].value));
  if (req->body || method_has_body(req->method)) {
    snprintf(clen, sizeof(clen), "%zu", req->body_len);
    nva[n++] = NV("content-length", clen, strlen(clen));
  }

  nghttp2_data_provider prd;
  memset(&prd, 0, sizeof(prd));
  prd.read_callback = read_body;
  req->body_off = 0;
  req->sent = false;
  int32_t id = nghttp2_submit_request(h->s, NULL, nva, n, req->body_len ? &prd : NULL, req);
  mcp__free(nva);
  if (id < 0) {
    if (id == NGHTTP2_ERR_NOMEM) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
    /* Stream ids exhausted: this session takes no more requests. */
    h->broken = true;
    return mcp__error_set(err, MCP_EPROTO, "cannot open HTTP/2 stream: %s", nghttp2_strerror(id));
  }
  req->stream_id = id;
  req->early = !h->settings_recv;
  mcp__http_conn_attach(h->c, req);
  return MCP_OK;
}

void mcp__h2_cancel(mcp_h2 *h, mcp_http_req *req) {
  detach(h, req);
  if (req->stream_id > 0)
    (void)nghttp2_submit_rst_stream(h->s, NGHTTP2_FLAG_NONE, req->stream_id, NGHTTP2_CANCEL);
}

mcp_status mcp__h2_recv(mcp_h2 *h, const uint8_t *data, size_t n, mcp_error *err) {
  ssize_t rv = nghttp2_session_mem_recv(h->s, data, n);
  if (rv < 0) {
    h->broken = true;
    return mcp__error_set(err, rv == NGHTTP2_ERR_NOMEM ? MCP_ENOMEM : MCP_EPROTO,
                          "HTTP/2 session failed: %s", nghttp2_strerror((int)rv));
  }
  return MCP_OK;
}

mcp_status mcp__h2_fill(mcp_h2 *h, size_t limit, mcp_error *err) {
  while (mcp__http_conn_queued(h->c) < limit) {
    const uint8_t *p = NULL;
    ssize_t n = nghttp2_session_mem_send(h->s, &p);
    if (n < 0) {
      h->broken = true;
      return mcp__error_set(err, n == NGHTTP2_ERR_NOMEM ? MCP_ENOMEM : MCP_EPROTO,
                            "HTTP/2 session failed: %s", nghttp2_strerror((int)n));
    }
    if (n == 0) break;
    if (mcp__http_conn_queue(h->c, p, (size_t)n) != MCP_OK) {
      h->broken = true;
      return mcp__error_set(err, MCP_ENOMEM, "out of memory");
    }
  }
  return MCP_OK;
}

bool mcp__h2_want_write(mcp_h2 *h) { return nghttp2_session_want_write(h->s) != 0; }

bool mcp__h2_finished(mcp_h2 *h) {
  return !nghttp2_session_want_read(h->s) && !nghttp2_session_want_write(h->s);
}

void mcp__h2_conn_lost(mcp_h2 *h, mcp_status status, const char *msg) {
  char gmsg[128];
  if (h->goaway_recv)
    snprintf(gmsg, sizeof(gmsg), "connection closed by GOAWAY (%s)",
             nghttp2_http2_strerror(h->goaway_code));
  mcp_http_req *req = h->c->reqs_head;
  while (req) {
    mcp_http_req *next = req->next;
    detach(h, req);
    if (h->goaway_recv && req->stream_id > h->goaway_last) {
      mcp__http_req_refused(req);
      mcp__http_req_retry(req, gmsg, false);
    } else if (!req->sent && status != MCP_ECLOSED) mcp__http_req_retry(req, msg, false);
    else if (h->goaway_recv) mcp__http_req_finish(req, MCP_EIO, gmsg);
    else mcp__http_req_finish(req, status, msg);
    req = next;
  }
}

void mcp__h2_shutdown(mcp_h2 *h) {
  (void)nghttp2_submit_goaway(h->s, NGHTTP2_FLAG_NONE,
                              nghttp2_session_get_last_proc_stream_id(h->s), NGHTTP2_NO_ERROR, NULL,
                              0);
}
