/* SPDX-License-Identifier: MIT */
/*
 * mcp_http.c: the HTTP connection layer: one I/O thread per client, the
 * command queue that feeds it, name resolution, non-blocking connect, the
 * connections' socket I/O, request dispatch (one HTTP/2 connection, or a
 * pool of HTTP/1.1 keep-alive connections), retries, cancellation and
 * shutdown, and the services of mcp_http_int.h to the protocol glue.  TLS
 * lives in mcp_tls.c; the HTTP/2 glue (nghttp2) in mcp_h2.c; the HTTP/1.1
 * glue in mcp_h1_conn.c, on the parser and serialiser of mcp_h1.c.
 * Must not know about: MCP, JSON-RPC, SSE.
 *
 * Threads.  Each client runs one I/O thread.  It alone touches sockets,
 * SSL objects, nghttp2 sessions, connections, and requests once they are
 * submitted; it runs every callback of every request.  Other threads (and
 * callbacks, re-entrantly) reach it only through the command queue:
 * mcp__http_submit() pushes the new request, mcp__http_cancel() pushes the
 * request it finds by id, mcp__http_client_free() sets |closing|; each then
 * writes one byte to the wake-up pipe unless a byte is already pending.
 * Host names other than IP literals are resolved on a short-lived helper
 * thread per connection attempt, so a slow DNS server never stalls the I/O
 * thread and the connect timeout covers resolution too (see "resolver").
 * Threads we start block every signal: a write to a closed socket leaves
 * SIGPIPE pending on them instead of killing the host, and host signal
 * handlers never run on them.
 *
 * Locks.  One mutex per client, |mu|, guards the command queue, the table
 * of live requests (id -> request, for cancel), the cancel list and the
 * fields marked below.  It is held only for list operations, copies of
 * those fields and the non-blocking pipe write, never across a callback, a socket call or an
 * nghttp2/OpenSSL call, and no other lock is ever taken under it, so there
 * is no lock order to respect.  Callbacks may therefore call submit and
 * cancel (which take |mu|) without deadlock.
 *
 * Request life: QUEUED (command queue) -> PENDING (waiting for a connection
 * or a stream slot, in submission order) -> ACTIVE (on one connection) ->
 * finished (on_done runs, then the request is freed).  A request the server
 * provably did not process goes back to PENDING once, and so does an
 * idempotent one (GET...) whose connection failed; a POST that may have
 * reached the server never does (RFC 9110 9.2.2).  on_done tells the
 * caller whether the request provably never reached the server.
 *
 * Connections are never freed inside a protocol callback: a failing
 * connection is marked CLOSED (its requests failed or re-queued) and the
 * loop frees it afterwards ("sweep").
 */
#include "config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mcp_h1_conn.h"
#include "mcp_h2.h"
#include "mcp_http_int.h"
#include "mcp_tls.h"
#include "mcp_workers.h"

#define HTTP_DEFAULT_CONNECT_TIMEOUT_MS 10000
#define HTTP_DEFAULT_MAX_H1 8
#define HTTP_DEFAULT_MAX_HEADER_BYTES ((size_t)64 * 1024)
/* One read from a socket. */
#define HTTP_READ_CHUNK ((size_t)64 * 1024)
/* Bytes read from one connection before the loop serves the others. */
#define HTTP_READ_BUDGET ((size_t)1024 * 1024)
/* Output gathered from nghttp2 before writing. */
#define HTTP_FILL_LIMIT ((size_t)256 * 1024)
/* Largest single write.  Constant, so a TLS write retried after WANT_WRITE
 * never passes fewer bytes than the first attempt (OpenSSL's retry rule). */
#define HTTP_WRITE_MAX ((size_t)1024 * 1024)
/* Initial size of the live-request table (a power of two). */
#define HTTP_TABLE_INITIAL 64

/* The protocol of the newest connection, for mcp__http_client_protocol(). */
enum { SEEN_NONE = 0, SEEN_H1, SEEN_H2, SEEN_H2C };

/*
 * A request plus the fields of the submit/cancel machinery, which other
 * threads touch and |mu| guards.  The request proper belongs to the I/O
 * thread once taken from the queue.
 */
typedef struct req_ext {
  mcp_http_req req;              /* first: a request is a req_ext */
  struct req_ext *hnext;         /* chain in the live table; guarded by mu */
  struct req_ext *qnext;         /* command queue; guarded by mu */
  struct req_ext *cprev, *cnext; /* cancel list; guarded by mu */
  bool cancel_queued;            /* on the cancel list; guarded by mu */
  bool sub_queued;               /* on the submit queue, not taken yet; guarded by mu */
} req_ext;

/*
 * A name lookup running on a helper thread.  Shared by the helper and the
 * I/O thread through |refs|; whoever drops the last reference frees it, so
 * the I/O thread can abandon a slow lookup (timeout, close) without
 * waiting.  The helper publishes |res| and |gai| before the release store
 * to |done|, then writes one byte to |wr| to wake the I/O thread, which
 * polls |rd|.
 */
typedef struct mcp_http_resolver {
  atomic_int refs;
  atomic_bool done;
  char *host;
  char port[8];
  int rd; /* the I/O thread's end; closed by it */
  int wr; /* the helper's end; closed with the last reference */
  struct addrinfo *res;
  int gai;
} mcp_http_resolver;

struct mcp_http_client {
  /* Immutable after mcp__http_client_new() returns. */
  char *scheme;
  char *host;
  int port;
  char *authority; /* host[:port] for Host and :authority */
  mcp_http_version mode;
  bool tls;
  mcp_tls_ctx *tls_ctx;
  int64_t connect_timeout_ms; /* ms */
  size_t max_h1;
  size_t max_header_bytes;
  int wake_rd, wake_wr; /* the wake-up pipe, both ends non-blocking */
  pthread_t thread;

  pthread_mutex_t mu;
  /* Guarded by |mu|. */
  req_ext *sub_head, *sub_tail; /* submitted, not yet taken */
  req_ext *can_head;            /* cancel requests, newest first */
  req_ext **table;              /* live requests by id, chained */
  size_t table_size, table_count;
  uint64_t next_id;
  bool wake_pending; /* a byte is in the pipe, not yet drained */
  bool closing;      /* free() was called: no new work */
  bool free_on_exit; /* free() was called on the I/O thread itself */
  /* The connection attempt in progress (published by the I/O thread after
   * each pass, for mcp__http_client_stall): its state, or
   * MCP_HTTP_CONN_READY when none is connecting; ms since it began. */
  mcp_http_conn_state stage;
  int64_t stage_started;        /* ms, CLOCK_MONOTONIC */
  char last_connect_error[256]; /* the last failed attempt; "" once one succeeds */

  atomic_int seen; /* SEEN_*; any thread */

  /* I/O thread only. */
  bool stopping; /* the I/O thread saw |closing| */
  bool kick;     /* a request became pending: dispatch before polling */
  mcp_http_req *pend_head, *pend_tail;
  size_t npending;
  mcp_http_conn *conns;
  size_t nconns;
  uint64_t next_serial;
  mcp_http_proto learned; /* what the origin answered with, once known */
  char *rbuf;             /* HTTP_READ_CHUNK bytes */
  struct pollfd *pfds;
  mcp_http_conn **pconns; /* the connection behind pfds[i], or NULL */
  size_t pcap;
};

/* ---- small helpers ------------------------------------------------------- */

/* "host:port", "[v6]:port" */
static void host_port(const mcp_http_client *h, char *buf, size_t n) {
  snprintf(buf, n, strchr(h->host, ':') ? "[%s]:%d" : "%s:%d", h->host, h->port);
}

/* What a connection attempt in |state|, begun |ms| ago, is stuck on. */
static void stage_text(const mcp_http_client *h, mcp_http_conn_state state, int64_t ms, char *buf,
                       size_t n) {
  char hp[300];
  host_port(h, hp, sizeof(hp));
  if (state == MCP_HTTP_CONN_RESOLVING)
    snprintf(buf, n, "resolving %s did not complete in %lld ms", h->host, (long long)ms);
  else if (state == MCP_HTTP_CONN_CONNECTING)
    snprintf(buf, n, "TCP connect to %s did not complete in %lld ms", hp, (long long)ms);
  else snprintf(buf, n, "TLS handshake with %s stalled: no answer in %lld ms", hp, (long long)ms);
}

static const char *errno_text(int e, char *buf, size_t n) {
  switch (e) {
  case 0: snprintf(buf, n, "connection closed by peer"); return buf;
  case ECONNREFUSED: snprintf(buf, n, "connection refused"); return buf;
  case ECONNRESET: snprintf(buf, n, "connection reset by peer"); return buf;
  case ETIMEDOUT: snprintf(buf, n, "timed out"); return buf;
  case ENETUNREACH: snprintf(buf, n, "network unreachable"); return buf;
  case EHOSTUNREACH: snprintf(buf, n, "host unreachable"); return buf;
  case EPIPE: snprintf(buf, n, "broken pipe"); return buf;
  default: break;
  }
#if defined(__GLIBC__) && defined(_GNU_SOURCE)
  const char *s = strerror_r(e, buf, n);
  if (s != buf) snprintf(buf, n, "%s", s);
#else
  if (strerror_r(e, buf, n) != 0) snprintf(buf, n, "error %d", e);
#endif
  return buf;
}

static void close_fd(int *fd) {
  if (*fd >= 0) {
    close(*fd);
    *fd = -1;
  }
}

static req_ext *ext_of(mcp_http_req *r) { return (req_ext *)r; }

static bool is_locked_closing(mcp_http_client *h) {
  pthread_mutex_lock(&h->mu);
  bool c = h->closing;
  pthread_mutex_unlock(&h->mu);
  return c;
}

/* Wakes the I/O thread.  Called with |mu| held, so free() cannot close
 * the pipe meanwhile; the pipe is non-blocking, and when it is full a
 * wake-up is pending anyway. */
static void wake_locked(mcp_http_client *h) {
  if (h->wake_pending) return;
  h->wake_pending = true;
  char b = 1;
  ssize_t n = write(h->wake_wr, &b, 1);
  (void)n;
}

static void drain_wake_pipe(mcp_http_client *h) {
  char buf[64];
  while (read(h->wake_rd, buf, sizeof(buf)) > 0) {
  }
}

/* ---- the live-request table (guarded by mu) ------------------------------ */

static size_t slot_of(const mcp_http_client *h, uint64_t id) {
  uint64_t x = id * UINT64_C(0x9E3779B97F4A7C15);
  return (size_t)(x >> 32) & (h->table_size - 1);
}

static void table_grow_locked(mcp_http_client *h) {
  size_t nsize = h->table_size * 2;
  req_ext **nt = mcp__calloc(nsize, sizeof(*nt));
  if (!nt) return; /* longer chains; still correct */
  req_ext **old = h->table;
  size_t osize = h->table_size;
  h->table = nt;
  h->table_size = nsize;
  for (size_t i = 0; i < osize; i++) {
    req_ext *e = old[i];
    while (e) {
      req_ext *next = e->hnext;
      size_t s = slot_of(h, e->req.id);
      e->hnext = nt[s];
      nt[s] = e;
      e = next;
    }
  }
  mcp__free(old);
}

static void table_add_locked(mcp_http_client *h, req_ext *e) {
  if (h->table_count >= h->table_size) table_grow_locked(h);
  size_t s = slot_of(h, e->req.id);
  e->hnext = h->table[s];
  h->table[s] = e;
  h->table_count++;
}

static req_ext *table_find_locked(mcp_http_client *h, uint64_t id) {
  for (req_ext *e = h->table[slot_of(h, id)]; e; e = e->hnext)
    if (e->req.id == id) return e;
  return NULL;
}

static void table_remove_locked(mcp_http_client *h, req_ext *e) {
  req_ext **pp = &h->table[slot_of(h, e->req.id)];
  while (*pp && *pp != e) pp = &(*pp)->hnext;
  if (*pp) {
    *pp = e->hnext;
    h->table_count--;
  }
  e->hnext = NULL;
}

static void cancel_unlink_locked(mcp_http_client *h, req_ext *e) {
  if (!e->cancel_queued) return;
  if (e->cprev) e->cprev->cnext = e->cnext;
  else h->can_head = e->cnext;
  if (e->cnext) e->cnext->cprev = e->cprev;
  e->cprev = e->cnext = NULL;
  e->cancel_queued = false;
}

/* ---- requests -------------------------------------------------------------- */

static void req_free(mcp_http_req *r) {
  if (!r) return;
  mcp__http_req_clear_fields(r);
  mcp__free(r->rh);
  mcp__free(r->method);
  mcp__free(r->path);
  mcp__free(r->headers);
  mcp__free(r->strings);
  mcp__free(r->body);
  mcp__free(ext_of(r));
}

static void list_append(mcp_http_req **head, mcp_http_req **tail, mcp_http_req *r) {
  r->next = NULL;
  r->prev = *tail;
  if (*tail) (*tail)->next = r;
  else *head = r;
  *tail = r;
}

static void list_remove(mcp_http_req **head, mcp_http_req **tail, mcp_http_req *r) {
  if (r->prev) r->prev->next = r->next;
  else *head = r->next;
  if (r->next) r->next->prev = r->prev;
  else *tail = r->prev;
  r->prev = r->next = NULL;
}

/* Pending requests stay in submission (id) order, retried ones included:
 * a retried request goes before everything submitted after it. */
static void pending_insert(mcp_http_client *h, mcp_http_req *r) {
  mcp_http_req *at = h->pend_tail;
  while (at && at->id > r->id) at = at->prev;
  r->prev = at;
  r->next = at ? at->next : h->pend_head;
  if (r->next) r->next->prev = r;
  else h->pend_tail = r;
  if (at) at->next = r;
  else h->pend_head = r;
  r->state = MCP_HTTP_REQ_PENDING;
  r->conn = NULL;
  h->npending++;
  h->kick = true;
}

static mcp_http_req *pending_pop(mcp_http_client *h) {
  mcp_http_req *r = h->pend_head;
  if (!r) return NULL;
  list_remove(&h->pend_head, &h->pend_tail, r);
  h->npending--;
  return r;
}

/* Takes |r| off the pending list or its connection. */
static void req_unlink(mcp_http_req *r) {
  mcp_http_client *h = r->client;
  if (r->state == MCP_HTTP_REQ_PENDING) {
    list_remove(&h->pend_head, &h->pend_tail, r);
    h->npending--;
  } else if (r->state == MCP_HTTP_REQ_ACTIVE && r->conn) {
    mcp_http_conn *c = r->conn;
    list_remove(&c->reqs_head, &c->reqs_tail, r);
    c->nreqs--;
  }
  r->conn = NULL;
  r->state = MCP_HTTP_REQ_QUEUED;
}

/* Runs on_done and frees |r|, which must be unlinked already. */
static void req_complete(mcp_http_req *r, mcp_status st, const char *msg) {
  mcp_http_client *h = r->client;
  req_ext *e = ext_of(r);
  pthread_mutex_lock(&h->mu);
  table_remove_locked(h, e);
  cancel_unlink_locked(h, e);
  pthread_mutex_unlock(&h->mu);
  if (!msg) msg = mcp_strerror(st);
  bool not_sent = !r->maybe_delivered && (r->refused || !r->on_wire);
  if (r->cb.on_done) r->cb.on_done(r->user, st, msg, not_sent);
  req_free(r);
}

/* ---- services to the protocol glue (mcp_http_int.h) ---------------------- */

void mcp__http_conn_attach(mcp_http_conn *c, mcp_http_req *req) {
  list_append(&c->reqs_head, &c->reqs_tail, req);
  c->nreqs++;
  req->conn = c;
  req->state = MCP_HTTP_REQ_ACTIVE;
}

mcp_status mcp__http_conn_queue(mcp_http_conn *c, const void *data, size_t n) {
  if (n == 0) return MCP_OK;
  if (c->out_off == c->out_len) c->out_off = c->out_len = 0;
  if (c->out_cap - c->out_len < n) {
    /* Compact first; grow only when that is not enough. */
    if (c->out_off) {
      memmove(c->out, c->out + c->out_off, c->out_len - c->out_off);
      c->out_len -= c->out_off;
      c->out_off = 0;
    }
    if (c->out_cap - c->out_len < n) {
      size_t cap = c->out_cap ? c->out_cap : 16384;
      while (cap - c->out_len < n) {
        if (cap > SIZE_MAX / 2) return MCP_ENOMEM;
        cap *= 2;
      }
      char *p = mcp__realloc(c->out, cap);
      if (!p) return MCP_ENOMEM;
      c->out = p;
      c->out_cap = cap;
    }
  }
  memcpy(c->out + c->out_len, data, n);
  c->out_len += n;
  return MCP_OK;
}

size_t mcp__http_conn_queued(const mcp_http_conn *c) { return c->out_len - c->out_off; }

size_t mcp__http_conn_max_header_bytes(const mcp_http_conn *c) {
  return c->client->max_header_bytes;
}

const char *mcp__http_conn_scheme(const mcp_http_conn *c) { return c->client->scheme; }

const char *mcp__http_conn_authority(const mcp_http_conn *c) { return c->client->authority; }

mcp_status mcp__http_req_add_field(mcp_http_req *req, const char *name, size_t namelen,
                                   const char *value, size_t valuelen) {
  req->rh_bytes += namelen + valuelen + 4;
  if (req->rh_bytes > req->client->max_header_bytes) return MCP_EPROTO;
  if (req->nrh == req->caprh) {
    size_t ncap = req->caprh ? req->caprh * 2 : 16;
    mcp_http_field *p = mcp__reallocarray(req->rh, ncap, sizeof(*p));
    if (!p) return MCP_ENOMEM;
    req->rh = p;
    req->caprh = ncap;
  }
  char *n = mcp__strndup(name, namelen);
  char *v = mcp__strndup(value, valuelen);
  if (!n || !v) {
    mcp__free(n);
    mcp__free(v);
    return MCP_ENOMEM;
  }
  req->rh[req->nrh].name = n;
  req->rh[req->nrh].value = v;
  req->nrh++;
  return MCP_OK;
}

void mcp__http_req_clear_fields(mcp_http_req *req) {
  for (size_t i = 0; i < req->nrh; i++) {
    mcp__free(req->rh[i].name);
    mcp__free(req->rh[i].value);
  }
  req->nrh = 0;
  req->rh_bytes = 0;
}

void mcp__http_req_deliver_head(mcp_http_req *req, int status, const mcp_http_header *hdrs,
                                size_t n) {
  req->head_done = true;
  req->got_bytes = true;
  if (req->cb.on_headers) req->cb.on_headers(req->user, status, hdrs, n);
}

void mcp__http_req_head(mcp_http_req *req) {
  mcp_http_header small[32];
  mcp_http_header *hv = small;
  size_t n = req->nrh;
  if (n > sizeof(small) / sizeof(small[0])) {
    hv = mcp__calloc(n, sizeof(*hv));
    if (!hv) {
      /* Out of memory: the status still goes through, without fields. */
      hv = small;
      n = 0;
    }
  }
  for (size_t i = 0; i < n; i++) {
    hv[i].name = req->rh[i].name;
    hv[i].value = req->rh[i].value;
  }
  mcp__http_req_deliver_head(req, req->status, hv, n);
  if (hv != small) mcp__free(hv);
  mcp__http_req_clear_fields(req);
}

void mcp__http_req_data(mcp_http_req *req, const char *data, size_t n) {
  req->got_bytes = true;
  if (req->cb.on_data && n) req->cb.on_data(req->user, data, n);
}

void mcp__http_req_finish(mcp_http_req *req, mcp_status status, const char *msg) {
  req_unlink(req);
  req_complete(req, status, msg);
}

void mcp__http_req_refused(mcp_http_req *req) { req->refused = true; }

/* Methods that may be sent twice (RFC 9110 9.2.2). */
static bool method_idempotent(const char *m) {
  return strcmp(m, "GET") == 0 || strcmp(m, "HEAD") == 0 || strcmp(m, "PUT") == 0 ||
         strcmp(m, "DELETE") == 0 || strcmp(m, "OPTIONS") == 0 || strcmp(m, "TRACE") == 0;
}

void mcp__http_req_retry(mcp_http_req *req, const char *msg, bool free_retry) {
  mcp_http_client *h = req->client;
  if (h->stopping || is_locked_closing(h)) {
    mcp__http_req_finish(req, MCP_ECLOSED, "client closed");
    return;
  }
  bool unprocessed = req->refused || !req->on_wire;
  if ((req->retries > 0 && !free_retry) || req->head_done ||
      (!unprocessed && !method_idempotent(req->method))) {
    mcp__http_req_finish(req, MCP_EIO, msg);
    return;
  }
  req_unlink(req);
  if (!unprocessed) req->maybe_delivered = true;
  req->on_wire = false;
  req->refused = false;
  if (!free_retry) req->retries++;
  req->early = false;
  req->stream_id = 0;
  req->body_off = 0;
  req->sent = false;
  req->got_bytes = false;
  req->status = 0;
  mcp__http_req_clear_fields(req);
  pending_insert(h, req);
}

/* ---- name resolution -------------------------------------------------------- */

static void resolver_unref(mcp_http_resolver *r) {
  if (atomic_fetch_sub_explicit(&r->refs, 1, memory_order_acq_rel) != 1) return;
  if (r->res) freeaddrinfo(r->res);
  close_fd(&r->rd);
  close_fd(&r->wr);
  mcp__free(r->host);
  mcp__free(r);
}

static void resolve_hints(struct addrinfo *hints, bool numeric) {
  memset(hints, 0, sizeof(*hints));
  hints->ai_family = AF_UNSPEC;
  hints->ai_socktype = SOCK_STREAM;
  hints->ai_protocol = IPPROTO_TCP;
  hints->ai_flags = AI_NUMERICSERV | (numeric ? AI_NUMERICHOST : 0);
}

static void *resolver_main(void *arg) {
  mcp_http_resolver *r = arg;
  struct addrinfo hints, *res = NULL;
  resolve_hints(&hints, false);
  r->gai = getaddrinfo(r->host, r->port, &hints, &res);
  r->res = r->gai == 0 ? res : NULL;
  atomic_store_explicit(&r->done, true, memory_order_release);
  char b = 1;
  ssize_t n = send(r->wr, &b, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
  (void)n;
  resolver_unref(r);
  return NULL;
}

/* Abandons (or finishes with) the lookup of |c|. */
static void conn_resolver_release(mcp_http_conn *c) {
  if (!c->resolver) return;
  close_fd(&c->resolver->rd);
  resolver_unref(c->resolver);
  c->resolver = NULL;
}

/* ---- connections -------------------------------------------------------------- */

static void conn_next_address(mcp_http_conn *c);
static void conn_tcp_up(mcp_http_conn *c);

static mcp_http_conn *conn_new(mcp_http_client *h) {
  mcp_http_conn *c = mcp__calloc(1, sizeof(*c));
  if (!c) return NULL;
  c->client = h;
  c->fd = -1;
  c->serial = ++h->next_serial;
  c->state = MCP_HTTP_CONN_RESOLVING;
  int64_t now = mcp__now_ms();
  c->started = now;
  c->deadline = h->connect_timeout_ms > INT64_MAX - now ? INT64_MAX : now + h->connect_timeout_ms;
  c->next = h->conns;
  if (h->conns) h->conns->prev = c;
  h->conns = c;
  h->nconns++;
  return c;
}

static void conn_free(mcp_http_conn *c) {
  mcp_http_client *h = c->client;
  if (c->prev) c->prev->next = c->next;
  else h->conns = c->next;
  if (c->next) c->next->prev = c->prev;
  h->nconns--;
  conn_resolver_release(c);
  if (c->ai_list) freeaddrinfo(c->ai_list);
  mcp__h2_free(c->h2);
  mcp__h1_conn_free(c);
  mcp__tls_free(c->tls);
  close_fd(&c->fd);
  mcp__free(c->out);
  mcp__free(c);
}

/* Frees the connections marked CLOSED. */
static void sweep(mcp_http_client *h) {
  mcp_http_conn *c = h->conns;
  while (c) {
    mcp_http_conn *next = c->next;
    if (c->state == MCP_HTTP_CONN_CLOSED) conn_free(c);
    c = next;
  }
}

/* Is some other connection able to serve pending requests eventually? */
static bool other_conn_usable(mcp_http_client *h, mcp_http_conn *self) {
  for (mcp_http_conn *c = h->conns; c; c = c->next) {
    if (c == self || c->state == MCP_HTTP_CONN_CLOSED) continue;
    if (c->state != MCP_HTTP_CONN_READY) return true;
    if (c->proto == MCP_HTTP_PROTO_H1) return true;
    if (c->h2 && !mcp__h2_goaway_received(c->h2)) return true;
  }
  return false;
}

/*
 * A connection attempt failed.  The requests waiting for it fail with the
 * reason: all pending requests when no other connection can serve them,
 * else only the oldest one (the attempt was made for it), so a failing
 * origin cannot make the pool retry forever.
 */
static void conn_connect_failed(mcp_http_conn *c, mcp_status st, const char *msg) {
  mcp_http_client *h = c->client;
  pthread_mutex_lock(&h->mu);
  snprintf(h->last_connect_error, sizeof(h->last_connect_error), "%s", msg ? msg : "");
  pthread_mutex_unlock(&h->mu);
  c->state = MCP_HTTP_CONN_CLOSED;
  close_fd(&c->fd);
  if (other_conn_usable(h, c)) {
    mcp_http_req *r = pending_pop(h);
    if (r) req_complete(r, st, msg);
    return;
  }
  /* Completing one request runs a callback that may queue another (it goes
   * through the command queue, not this list), so the list only shrinks. */
  mcp_http_req *r;
  while ((r = pending_pop(h)) != NULL) req_complete(r, st, msg);
}

static void conn_ready(mcp_http_conn *c, mcp_http_proto proto) {
  mcp_http_client *h = c->client;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st;
  c->proto = proto;
  if (proto == MCP_HTTP_PROTO_H2) st = mcp__h2_new(c, &c->h2, &err);
  else st = mcp__h1_conn_init(c, &err);
  if (st != MCP_OK) {
    conn_connect_failed(c, st, err.message ? err.message : mcp_strerror(st));
    mcp_error_clear(&err);
    return;
  }
  c->state = MCP_HTTP_CONN_READY;
  h->learned = proto;
  pthread_mutex_lock(&h->mu);
  h->last_connect_error[0] = '\0';
  pthread_mutex_unlock(&h->mu);
  atomic_store(&h->seen, proto == MCP_HTTP_PROTO_H1 ? SEEN_H1 : h->tls ? SEEN_H2 : SEEN_H2C);
}

static void conn_handshake(mcp_http_conn *c) {
  mcp_http_client *h = c->client;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp__tls_handshake(c->tls, &err);
  if (st == MCP__EAGAIN) return;
  if (st != MCP_OK) {
    conn_connect_failed(c, st, err.message ? err.message : "TLS error");
    mcp_error_clear(&err);
    return;
  }
  const char *alpn = mcp__tls_alpn_selected(c->tls);
  bool h2 = alpn && strcmp(alpn, "h2") == 0;
  if (h->mode == MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE && !h2) {
    char msg[128];
    snprintf(msg, sizeof(msg), "server did not negotiate h2 (ALPN: %s)", alpn ? alpn : "none");
    conn_connect_failed(c, MCP_EPROTO, msg);
    return;
  }
  conn_ready(c, h2 && h->mode != MCP_HTTP_VERSION_1_1 ? MCP_HTTP_PROTO_H2 : MCP_HTTP_PROTO_H1);
}

/* The TCP connection is up. */
static void conn_tcp_up(mcp_http_conn *c) {
  mcp_http_client *h = c->client;
  int one = 1;
  (void)setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  if (c->ai_list) {
    freeaddrinfo(c->ai_list);
    c->ai_list = c->ai_next = NULL;
  }
  if (!h->tls) {
    conn_ready(c, h->mode == MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE ? MCP_HTTP_PROTO_H2
                                                                : MCP_HTTP_PROTO_H1);
    return;
  }
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp__tls_new(h->tls_ctx, c->fd, h->host, &c->tls, &err);
  if (st != MCP_OK) {
    conn_connect_failed(c, st, err.message ? err.message : "TLS error");
    mcp_error_clear(&err);
    return;
  }
  c->state = MCP_HTTP_CONN_HANDSHAKE;
  conn_handshake(c);
}

static void addr_text(const struct addrinfo *ai, char *buf, size_t n) {
  char host[INET6_ADDRSTRLEN] = "?";
  if (ai->ai_family == AF_INET)
    inet_ntop(AF_INET, &((const struct sockaddr_in *)ai->ai_addr)->sin_addr, host, sizeof(host));
  else if (ai->ai_family == AF_INET6)
    inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ai->ai_addr)->sin6_addr, host, sizeof(host));
  snprintf(buf, n, "%s", host);
}

/* Tries the remaining addresses in order until one connects or is in
 * progress; fails the attempt when none is left. */
static void conn_next_address(mcp_http_conn *c) {
  mcp_http_client *h = c->client;
  char why[128], msg[320];
  while (c->ai_next) {
    struct addrinfo *ai = c->ai_next;
    c->ai_next = ai->ai_next;
    addr_text(ai, c->last_addr, sizeof(c->last_addr));
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      c->last_errno = errno;
      continue;
    }
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
      c->fd = fd;
      conn_tcp_up(c);
      return;
    }
    if (errno == EINPROGRESS) {
      c->fd = fd;
      c->state = MCP_HTTP_CONN_CONNECTING;
      return;
    }
    c->last_errno = errno;
    close(fd);
  }
  snprintf(msg, sizeof(msg), "connect to %s port %d: %s", h->host, h->port,
           errno_text(c->last_errno, why, sizeof(why)));
  conn_connect_failed(c, MCP_EIO, msg);
}

/* A non-blocking connect finished (POLLOUT or error). */
static void conn_connect_done(mcp_http_conn *c) {
  int soerr = 0;
  socklen_t len = sizeof(soerr);
  if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &soerr, &len) < 0) soerr = errno;
  if (soerr == 0) {
    conn_tcp_up(c);
    return;
  }
  c->last_errno = soerr;
  close_fd(&c->fd);
  conn_next_address(c);
}

static void conn_addresses(mcp_http_conn *c, struct addrinfo *res) {
  c->ai_list = c->ai_next = res;
  c->last_errno = ECONNREFUSED;
  conn_next_address(c);
}

static void conn_resolved(mcp_http_conn *c) {
  mcp_http_client *h = c->client;
  mcp_http_resolver *r = c->resolver;
  if (!atomic_load_explicit(&r->done, memory_order_acquire)) return;
  struct addrinfo *res = r->res;
  int gai = r->gai;
  r->res = NULL;
  conn_resolver_release(c);
  if (gai != 0 || !res) {
    char msg[320];
    snprintf(msg, sizeof(msg), "cannot resolve %s: %s", h->host, gai_strerror(gai));
    conn_connect_failed(c, gai == EAI_MEMORY ? MCP_ENOMEM : MCP_EIO, msg);
    return;
  }
  c->state = MCP_HTTP_CONN_CONNECTING;
  conn_addresses(c, res);
}

/* Starts a connection attempt for the pending requests. */
static void conn_start(mcp_http_client *h) {
  char port[8];
  mcp_http_conn *c = conn_new(h);
  if (!c) {
    mcp_http_req *r = pending_pop(h);
    if (r) req_complete(r, MCP_ENOMEM, "out of memory");
    return;
  }
  snprintf(port, sizeof(port), "%d", h->port);
  if (mcp__tls_host_is_ip(h->host)) {
    struct addrinfo hints, *res = NULL;
    resolve_hints(&hints, true);
    int gai = getaddrinfo(h->host, port, &hints, &res);
    if (gai != 0) {
      char msg[320];
      snprintf(msg, sizeof(msg), "cannot use address %s: %s", h->host, gai_strerror(gai));
      conn_connect_failed(c, gai == EAI_MEMORY ? MCP_ENOMEM : MCP_EIO, msg);
      return;
    }
    c->state = MCP_HTTP_CONN_CONNECTING;
    conn_addresses(c, res);
    return;
  }

  /* A host name: look it up on a helper thread. */
  int sv[2] = {-1, -1};
  mcp_http_resolver *r = mcp__calloc(1, sizeof(*r));
  if (!r) goto fail_nomem;
  r->rd = r->wr = -1;
  r->host = mcp__strdup(h->host);
  if (!r->host) goto fail_nomem;
  memcpy(r->port, port, sizeof(port));
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) < 0) goto fail_errno;
  r->rd = sv[0];
  r->wr = sv[1];
  atomic_init(&r->refs, 2);
  atomic_init(&r->done, false);
  pthread_t t;
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0) goto fail_errno;
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  int rc = pthread_create(&t, &attr, resolver_main, r);
  pthread_attr_destroy(&attr);
  if (rc != 0) {
    errno = rc;
    goto fail_errno;
  }
  c->resolver = r;
  c->state = MCP_HTTP_CONN_RESOLVING;
  return;

fail_errno : {
  char why[128], msg[256];
  /* pthread_create() says EAGAIN when it cannot allocate the thread. */
  mcp_status est = errno == ENOMEM || errno == EAGAIN ? MCP_ENOMEM : MCP_EIO;
  snprintf(msg, sizeof(msg), "cannot start name lookup: %s", errno_text(errno, why, sizeof(why)));
  if (r) {
    close_fd(&r->rd);
    close_fd(&r->wr);
    mcp__free(r->host);
    mcp__free(r);
  }
  conn_connect_failed(c, est, msg);
  return;
}
fail_nomem:
  if (r) mcp__free(r->host);
  mcp__free(r);
  conn_connect_failed(c, MCP_ENOMEM, "out of memory");
}

/*
 * Drops a connection that was READY: its requests are failed (or retried,
 * see the protocol rules) with |st| and |msg|, and it is marked CLOSED.
 */
static void conn_drop(mcp_http_conn *c, mcp_status st, const char *msg) {
  if (c->state == MCP_HTTP_CONN_CLOSED) return;
  c->state = MCP_HTTP_CONN_CLOSED;
  close_fd(&c->fd);
  if (c->h2) mcp__h2_conn_lost(c->h2, st, msg);
  else mcp__h1_conn_lost(c, st, msg);
}

void mcp__http_conn_drop(mcp_http_conn *c, mcp_status st, const char *msg) {
  conn_drop(c, st, msg);
}

void mcp__http_conn_close_quiet(mcp_http_conn *c) {
  c->state = MCP_HTTP_CONN_CLOSED;
  close_fd(&c->fd);
}

/* ---- connection I/O ------------------------------------------------------------ */

/* Reads from |c| into |buf|: > 0 bytes, 0 at EOF, MCP__EAGAIN, or an error
 * status with |err| filled. */
static ssize_t conn_read(mcp_http_conn *c, char *buf, size_t n, mcp_error *err) {
  if (c->tls) {
    ssize_t r = mcp__tls_read(c->tls, buf, n, err);
    if (r == MCP__EAGAIN && (mcp__tls_wants(c->tls) & MCP_TLS_WANT_WRITE))
      c->read_wants_write = true;
    return r;
  }
  for (;;) {
    ssize_t r = recv(c->fd, buf, n, MSG_DONTWAIT);
    if (r >= 0) return r;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return MCP__EAGAIN;
    char why[128];
    return mcp__error_set(err, MCP_EIO, "%s", errno_text(errno, why, sizeof(why)));
  }
}

static ssize_t conn_write(mcp_http_conn *c, const char *buf, size_t n, mcp_error *err) {
  if (c->tls) return mcp__tls_write(c->tls, buf, n, err);
  for (;;) {
    ssize_t r = send(c->fd, buf, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (r >= 0) return r;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return MCP__EAGAIN;
    char why[128];
    return mcp__error_set(err, MCP_EIO, "%s", errno_text(errno, why, sizeof(why)));
  }
}

/* Writes queued output (refilled from nghttp2) until done or blocked. */
static void conn_flush(mcp_http_conn *c) {
  mcp_error err = MCP_ERROR_INIT;
  c->want_pollout = false;
  for (;;) {
    if (c->out_off == c->out_len && c->h2) {
      if (mcp__h2_fill(c->h2, HTTP_FILL_LIMIT, &err) != MCP_OK) {
        conn_drop(c, err.status, err.message);
        break;
      }
    }
    size_t left = c->out_len - c->out_off;
    if (left == 0) break;
    ssize_t n = conn_write(c, c->out + c->out_off, left < HTTP_WRITE_MAX ? left : HTTP_WRITE_MAX,
                           &err);
    if (n > 0) {
      /* HTTP/1.1 carries one request at a time: these bytes were its. */
      if (c->h1 && c->reqs_head) c->reqs_head->on_wire = true;
      c->out_off += (size_t)n;
      if (c->out_off == c->out_len) c->out_off = c->out_len = 0;
      continue;
    }
    if (n == MCP__EAGAIN) {
      c->want_pollout = true;
      break;
    }
    conn_drop(c, MCP_EIO, err.message ? err.message : "write failed");
    break;
  }
  mcp_error_clear(&err);
}

/* Reads what is there (up to the budget) and feeds the protocol. */
static void conn_read_some(mcp_http_conn *c) {
  mcp_http_client *h = c->client;
  mcp_error err = MCP_ERROR_INIT;
  size_t budget = HTTP_READ_BUDGET;
  c->read_again = false;
  c->read_wants_write = false;
  while (c->state == MCP_HTTP_CONN_READY) {
    ssize_t n = conn_read(c, h->rbuf, HTTP_READ_CHUNK, &err);
    if (n > 0) {
      mcp_status st;
      if (c->h2) st = mcp__h2_recv(c->h2, (const uint8_t *)h->rbuf, (size_t)n, &err);
      else st = mcp__h1_conn_feed(c, h->rbuf, (size_t)n, &err);
      if (st != MCP_OK) {
        conn_drop(c, st, err.message ? err.message : mcp_strerror(st));
        break;
      }
      if (c->h2 && mcp__h2_goaway_failed(c->h2)) {
        /* Streams above last-stream-id were refused (and re-queued) while
         * the frame was read; the rest fail now with the GOAWAY's code. */
        conn_drop(c, MCP_EIO, "connection closed by GOAWAY");
        break;
      }
      if ((size_t)n >= budget) {
        c->read_again = true;
        break;
      }
      budget -= (size_t)n;
      continue;
    }
    if (n == MCP__EAGAIN) break;
    if (n == 0) {
      if (c->h2) conn_drop(c, MCP_EIO, "connection closed by peer");
      else mcp__h1_conn_eof(c);
      break;
    }
    conn_drop(c, (mcp_status)n, err.message ? err.message : "read failed");
    break;
  }
  mcp_error_clear(&err);
}

/* After I/O: close a connection that has nothing more to do. */
static void conn_settle(mcp_http_conn *c) {
  if (c->state != MCP_HTTP_CONN_READY) return;
  if (c->h2 && c->out_off == c->out_len && mcp__h2_finished(c->h2) && c->nreqs == 0) {
    c->state = MCP_HTTP_CONN_CLOSED;
    close_fd(&c->fd);
  }
}

/* ---- dispatch -------------------------------------------------------------------- */

static mcp_http_proto target_proto(const mcp_http_client *h) {
  if (h->mode == MCP_HTTP_VERSION_1_1) return MCP_HTTP_PROTO_H1;
  if (h->mode == MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE) return MCP_HTTP_PROTO_H2;
  if (!h->tls) return MCP_HTTP_PROTO_H1;
  return h->learned; /* NONE until the first handshake */
}

/* Hands pending requests to connections, opening connections as needed. */
static void dispatch(mcp_http_client *h) {
  mcp_error err = MCP_ERROR_INIT;
  for (mcp_http_conn *c = h->conns; c && h->pend_head; c = c->next) {
    if (c->state != MCP_HTTP_CONN_READY) continue;
    if (c->h2) {
      while (h->pend_head && mcp__h2_can_submit(c->h2)) {
        mcp_http_req *r = pending_pop(h);
        mcp_status st = mcp__h2_submit(c->h2, r, &err);
        if (st == MCP_ENOMEM) {
          req_complete(r, st, err.message);
        } else if (st != MCP_OK) {
          pending_insert(h, r);
          break;
        }
      }
    } else if (mcp__h1_conn_idle(c)) {
      mcp_http_req *r = pending_pop(h);
      mcp_status st = mcp__h1_conn_start(c, r, &err);
      if (st != MCP_OK) req_complete(r, st, err.message);
    }
  }
  mcp_error_clear(&err);
  if (!h->pend_head) return;

  size_t connecting = 0, h2_usable = 0, h1_total = 0;
  for (mcp_http_conn *c = h->conns; c; c = c->next) {
    if (c->state == MCP_HTTP_CONN_CLOSED) continue;
    if (c->state != MCP_HTTP_CONN_READY) {
      connecting++;
      h1_total++;
    } else if (c->h2) {
      if (!mcp__h2_goaway_received(c->h2)) h2_usable++;
    } else {
      h1_total++;
    }
  }
  if (target_proto(h) != MCP_HTTP_PROTO_H1) {
    /* HTTP/2 (or not known yet): one connection carries everything. */
    if (connecting == 0 && h2_usable == 0) conn_start(h);
    return;
  }
  while (h->pend_head && connecting < h->npending && h1_total < h->max_h1) {
    conn_start(h);
    connecting++;
    h1_total++;
  }
}

/* ---- commands ----------------------------------------------------------------------- */

static void cancel_req(mcp_http_client *h, mcp_http_req *r) {
  (void)h;
  if (r->state == MCP_HTTP_REQ_ACTIVE && r->conn) {
    mcp_http_conn *c = r->conn;
    if (c->h2) {
      mcp__h2_cancel(c->h2, r);
      mcp__http_req_finish(r, MCP_ECANCELLED, "request cancelled");
      return;
    }
    /* HTTP/1.1 cannot abandon a response and keep the connection. */
    req_unlink(r);
    c->state = MCP_HTTP_CONN_CLOSED;
    close_fd(&c->fd);
    req_complete(r, MCP_ECANCELLED, "request cancelled");
    return;
  }
  mcp__http_req_finish(r, MCP_ECANCELLED, "request cancelled");
}

/* Takes the queued commands; returns false once the client is closing. */
static bool take_commands(mcp_http_client *h) {
  drain_wake_pipe(h);
  pthread_mutex_lock(&h->mu);
  h->wake_pending = false;
  req_ext *subs = h->sub_head;
  h->sub_head = h->sub_tail = NULL;
  for (req_ext *e = subs; e; e = e->qnext) e->sub_queued = false;
  bool closing = h->closing;
  pthread_mutex_unlock(&h->mu);

  while (subs) {
    req_ext *e = subs;
    subs = e->qnext;
    e->qnext = NULL;
    if (closing) req_complete(&e->req, MCP_ECLOSED, "client closed");
    else pending_insert(h, &e->req);
  }
  if (closing) return false;

  /* Cancels: take one at a time, since finishing a request unlinks other
   * entries of the list under |mu|.  A request submitted and cancelled
   * since the queue was taken above is still on the submit queue: take it
   * off, or the next pass would start it after it was freed. */
  for (;;) {
    pthread_mutex_lock(&h->mu);
    req_ext *e = h->can_head;
    if (e) cancel_unlink_locked(h, e);
    if (e && e->sub_queued) {
      req_ext **pp = &h->sub_head, *prev = NULL;
      while (*pp != e) {
        prev = *pp;
        pp = &(*pp)->qnext;
      }
      *pp = e->qnext;
      if (h->sub_tail == e) h->sub_tail = prev;
      e->qnext = NULL;
      e->sub_queued = false;
    }
    pthread_mutex_unlock(&h->mu);
    if (!e) break;
    cancel_req(h, &e->req);
  }
  return true;
}

/* ---- the I/O thread -------------------------------------------------------------- */

static bool ensure_pollfds(mcp_http_client *h, size_t n) {
  if (n <= h->pcap) return true;
  size_t cap = h->pcap ? h->pcap : 8;
  while (cap < n) cap *= 2;
  struct pollfd *p = mcp__reallocarray(h->pfds, cap, sizeof(*p));
  if (!p) return false;
  h->pfds = p;
  mcp_http_conn **q = mcp__reallocarray(h->pconns, cap, sizeof(*q));
  if (!q) return false;
  h->pconns = q;
  h->pcap = cap;
  return true;
}

/* Builds the poll set; returns its size and sets *timeout (ms, -1: none). */
static size_t build_pollfds(mcp_http_client *h, int *timeout) {
  int64_t now = mcp__now_ms();
  int64_t next = INT64_MAX;
  bool again = false;
  size_t n = 0;
  if (!ensure_pollfds(h, h->nconns + 1)) {
    /* Out of memory: poll the wake pipe only and retry soon. */
    *timeout = 10;
    if (h->pcap == 0) return 0;
    h->pfds[0] = (struct pollfd){h->wake_rd, POLLIN, 0};
    h->pconns[0] = NULL;
    return 1;
  }
  h->pfds[n] = (struct pollfd){h->wake_rd, POLLIN, 0};
  h->pconns[n++] = NULL;
  for (mcp_http_conn *c = h->conns; c; c = c->next) {
    short ev = 0;
    int fd = c->fd;
    switch (c->state) {
    case MCP_HTTP_CONN_RESOLVING:
      fd = c->resolver ? c->resolver->rd : -1;
      ev = POLLIN;
      break;
    case MCP_HTTP_CONN_CONNECTING: ev = POLLOUT; break;
    case MCP_HTTP_CONN_HANDSHAKE:
      ev = (mcp__tls_wants(c->tls) & MCP_TLS_WANT_WRITE) ? POLLOUT : POLLIN;
      break;
    case MCP_HTTP_CONN_READY:
      ev = POLLIN;
      if (c->want_pollout || c->read_wants_write || c->out_off < c->out_len) ev |= POLLOUT;
      if (c->read_again) again = true;
      break;
    case MCP_HTTP_CONN_CLOSED: continue;
    }
    if (c->state != MCP_HTTP_CONN_READY && c->deadline < next) next = c->deadline;
    if (fd < 0) continue;
    h->pfds[n] = (struct pollfd){fd, ev, 0};
    h->pconns[n++] = c;
  }
  if (again) *timeout = 0;
  else if (next == INT64_MAX) *timeout = -1;
  else if (next <= now) *timeout = 0;
  else *timeout = next - now > 60000 ? 60000 : (int)(next - now);
  return n;
}

static void conn_event(mcp_http_conn *c, short revents) {
  switch (c->state) {
  case MCP_HTTP_CONN_RESOLVING: conn_resolved(c); break;
  case MCP_HTTP_CONN_CONNECTING: conn_connect_done(c); break;
  case MCP_HTTP_CONN_HANDSHAKE: conn_handshake(c); break;
  case MCP_HTTP_CONN_READY:
    if (revents & (POLLIN | POLLERR | POLLHUP) || c->read_again || c->read_wants_write)
      conn_read_some(c);
    if (c->state == MCP_HTTP_CONN_READY) conn_flush(c);
    conn_settle(c);
    break;
  case MCP_HTTP_CONN_CLOSED: break;
  }
}

/* Publishes the connection attempt in progress, if any, for
 * mcp__http_client_stall(). */
static void publish_stage(mcp_http_client *h) {
  mcp_http_conn_state stage = MCP_HTTP_CONN_READY;
  int64_t started = 0;
  for (mcp_http_conn *c = h->conns; c; c = c->next) {
    if (c->state == MCP_HTTP_CONN_READY || c->state == MCP_HTTP_CONN_CLOSED) continue;
    stage = c->state;
    started = c->started;
  }
  pthread_mutex_lock(&h->mu);
  h->stage = stage;
  h->stage_started = started;
  pthread_mutex_unlock(&h->mu);
}

bool mcp__http_client_stall(mcp_http_client *h, char *buf, size_t n) {
  pthread_mutex_lock(&h->mu);
  mcp_http_conn_state stage = h->stage;
  int64_t started = h->stage_started;
  bool failed = h->last_connect_error[0] != '\0';
  if (stage == MCP_HTTP_CONN_READY && failed) snprintf(buf, n, "%s", h->last_connect_error);
  pthread_mutex_unlock(&h->mu);
  if (stage != MCP_HTTP_CONN_READY) {
    stage_text(h, stage, mcp__now_ms() - started, buf, n);
    return true;
  }
  return failed;
}

static void check_deadlines(mcp_http_client *h) {
  int64_t now = mcp__now_ms();
  for (mcp_http_conn *c = h->conns; c; c = c->next) {
    if (c->state == MCP_HTTP_CONN_READY || c->state == MCP_HTTP_CONN_CLOSED) continue;
    if (now < c->deadline) continue;
    char msg[400];
    stage_text(h, c->state, h->connect_timeout_ms, msg, sizeof(msg));
    conn_connect_failed(c, MCP_ETIMEDOUT, msg);
  }
}

/* Everything still outstanding fails with MCP_ECLOSED; connections say
 * goodbye (GOAWAY, close_notify) without waiting for the peer. */
static void shutdown_all(mcp_http_client *h) {
  h->stopping = true;
  for (mcp_http_conn *c = h->conns; c; c = c->next) {
    if (c->state != MCP_HTTP_CONN_READY) {
      c->state = MCP_HTTP_CONN_CLOSED;
      continue;
    }
    if (c->h2) {
      mcp__h2_conn_lost(c->h2, MCP_ECLOSED, "client closed");
      mcp__h2_shutdown(c->h2);
    } else {
      mcp_http_req *r;
      while ((r = c->reqs_head) != NULL) mcp__http_req_finish(r, MCP_ECLOSED, "client closed");
    }
    if (c->fd >= 0) conn_flush(c);
    if (c->tls && c->fd >= 0) mcp__tls_close_notify(c->tls);
    c->state = MCP_HTTP_CONN_CLOSED;
  }
  mcp_http_req *r;
  while ((r = pending_pop(h)) != NULL) req_complete(r, MCP_ECLOSED, "client closed");
  /* Requests queued before |closing| was set; callbacks above could not add
   * more (submit refuses once closing). */
  (void)take_commands(h);
  pthread_mutex_lock(&h->mu);
  while (h->can_head) cancel_unlink_locked(h, h->can_head);
  pthread_mutex_unlock(&h->mu);
  sweep(h);
}

static void client_destroy(mcp_http_client *h);

static void *io_main(void *arg) {
  mcp_http_client *h = arg;
  for (;;) {
    if (!take_commands(h)) break;
    h->kick = false;
    dispatch(h);
    for (mcp_http_conn *c = h->conns; c; c = c->next)
      if (c->state == MCP_HTTP_CONN_READY) {
        conn_flush(c);
        conn_settle(c);
      }
    sweep(h);
    /* A write failure above may have sent requests back to pending (a
     * retry); dispatch them before sleeping. */
    if (h->kick) continue;

    publish_stage(h);
    int timeout;
    size_t n = build_pollfds(h, &timeout);
    int rc = poll(h->pfds, n, timeout);
    if (rc < 0 && errno != EINTR) {
      /* Not expected with valid descriptors; avoid a hot loop. */
      struct timespec ts = {0, 1000000};
      nanosleep(&ts, NULL);
      continue;
    }
    for (size_t i = 1; i < n && rc >= 0; i++) {
      mcp_http_conn *c = h->pconns[i];
      if (c && (h->pfds[i].revents || c->read_again)) conn_event(c, h->pfds[i].revents);
    }
    check_deadlines(h);
    sweep(h);
    publish_stage(h);
  }
  shutdown_all(h);
  pthread_mutex_lock(&h->mu);
  bool self_free = h->free_on_exit;
  pthread_mutex_unlock(&h->mu);
  if (self_free) {
    pthread_detach(pthread_self());
    client_destroy(h);
  }
  return NULL;
}

/* ---- public (internal) API -------------------------------------------------------- */

static bool is_tchar(unsigned char ch) {
  return isalnum(ch) || strchr("!#$%&'*+-.^_`|~", ch) != NULL;
}

static bool is_token(const char *s) {
  if (!s || !*s) return false;
  for (const unsigned char *p = (const unsigned char *)s; *p; p++)
    if (!is_tchar(*p)) return false;
  return true;
}

/* Header names the layer sets itself or that HTTP/2 forbids. */
static bool reserved_header(const char *name) {
  static const char *const reserved[] = {
      "host",    "content-length",   "connection",        "keep-alive",
      "upgrade", "proxy-connection", "transfer-encoding", "te"};
  for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
    if (strcasecmp(name, reserved[i]) == 0) return true;
  return false;
}

/* Field values may hold visible characters, spaces and tabs; any other
 * control character (CR, LF and NUL above all) could split the head. */
static bool value_ok(const char *v) {
  for (const unsigned char *p = (const unsigned char *)v; *p; p++)
    if ((*p < 0x20 && *p != '\t') || *p == 0x7f) return false;
  return true;
}

static char *make_authority(const char *scheme, const char *host, int port) {
  bool v6 = strchr(host, ':') != NULL;
  bool dflt = (strcmp(scheme, "https") == 0 && port == 443) ||
              (strcmp(scheme, "http") == 0 && port == 80);
  if (dflt) return mcp__asprintf(v6 ? "[%s]" : "%s", host);
  return mcp__asprintf(v6 ? "[%s]:%d" : "%s:%d", host, port);
}

static void client_destroy(mcp_http_client *h) {
  if (!h) return;
  if (h->table) {
    /* Nothing is live after shutdown; the table is empty. */
    mcp__free(h->table);
  }
  close_fd(&h->wake_rd);
  close_fd(&h->wake_wr);
  pthread_mutex_destroy(&h->mu);
  mcp__tls_ctx_free(h->tls_ctx);
  mcp__free(h->rbuf);
  mcp__free(h->pfds);
  mcp__free(h->pconns);
  mcp__free(h->scheme);
  mcp__free(h->host);
  mcp__free(h->authority);
  mcp__free(h);
}

mcp_status mcp__http_client_new(const mcp_http_config *cfg, mcp_http_client **out, mcp_error *err) {
  mcp_status st;
  mcp_http_client *h = NULL;
  int p[2] = {-1, -1};
  if (!out) return mcp__error_set(err, MCP_EINVAL, "out is NULL");
  *out = NULL;
  if (!cfg || !cfg->scheme || !cfg->host)
    return mcp__error_set(err, MCP_EINVAL, "scheme and host are required");
  bool tls = strcmp(cfg->scheme, "https") == 0;
  if (!tls && strcmp(cfg->scheme, "http") != 0)
    return mcp__error_set(err, MCP_EINVAL, "unsupported scheme \"%s\"", cfg->scheme);
  if (!*cfg->host || strlen(cfg->host) > 253 + 2)
    return mcp__error_set(err, MCP_EINVAL, "invalid host");
  for (const unsigned char *q = (const unsigned char *)cfg->host; *q; q++)
    if (*q <= 0x20 || *q == 0x7f || strchr("/?#@[]", *q))
      return mcp__error_set(err, MCP_EINVAL, "invalid host \"%s\"", cfg->host);
  if (cfg->port < 1 || cfg->port > 65535)
    return mcp__error_set(err, MCP_EINVAL, "invalid port %d", cfg->port);
  if (cfg->mode != MCP_HTTP_VERSION_AUTO && cfg->mode != MCP_HTTP_VERSION_1_1 &&
      cfg->mode != MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE)
    return mcp__error_set(err, MCP_EINVAL, "invalid HTTP mode %d", (int)cfg->mode);
  if (cfg->connect_timeout_ms < 0)
    return mcp__error_set(err, MCP_EINVAL, "negative connect timeout");

  h = mcp__calloc(1, sizeof(*h));
  if (!h) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  if (pthread_mutex_init(&h->mu, NULL) != 0) {
    mcp__free(h);
    return mcp__error_set(err, MCP_ENOMEM, "cannot create mutex");
  }
  h->wake_rd = h->wake_wr = -1;
  h->stage = MCP_HTTP_CONN_READY; /* no attempt in progress */
  h->tls = tls;
  h->mode = cfg->mode;
  h->port = cfg->port;
  h->connect_timeout_ms = cfg->connect_timeout_ms ? cfg->connect_timeout_ms
                                                  : HTTP_DEFAULT_CONNECT_TIMEOUT_MS;
  h->max_h1 = cfg->max_h1_connections ? cfg->max_h1_connections : HTTP_DEFAULT_MAX_H1;
  h->max_header_bytes = cfg->max_header_bytes ? cfg->max_header_bytes
                                              : HTTP_DEFAULT_MAX_HEADER_BYTES;
  h->next_id = 1;
  atomic_init(&h->seen, SEEN_NONE);
  h->scheme = mcp__strdup(tls ? "https" : "http");
  h->host = mcp__strdup(cfg->host);
  h->authority = make_authority(h->scheme ? h->scheme : "http", cfg->host, cfg->port);
  h->rbuf = mcp__malloc(HTTP_READ_CHUNK);
  h->table_size = HTTP_TABLE_INITIAL;
  h->table = mcp__calloc(h->table_size, sizeof(*h->table));
  if (!h->scheme || !h->host || !h->authority || !h->rbuf || !h->table) {
    st = mcp__error_set(err, MCP_ENOMEM, "out of memory");
    goto fail;
  }
  if (tls) {
    mcp_tls_alpn alpn = cfg->mode == MCP_HTTP_VERSION_1_1                 ? MCP_TLS_ALPN_H1
                        : cfg->mode == MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE ? MCP_TLS_ALPN_H2
                                                                          : MCP_TLS_ALPN_H2_H1;
    st = mcp__tls_ctx_new(&cfg->tls, alpn, &h->tls_ctx, err);
    if (st != MCP_OK) goto fail;
  }
  if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0) {
    char why[128];
    st = mcp__error_set(err, MCP_EIO, "cannot create wake-up pipe: %s",
                        errno_text(errno, why, sizeof(why)));
    goto fail;
  }
  h->wake_rd = p[0];
  h->wake_wr = p[1];

  /* The I/O thread starts with every signal blocked (see the top). */
  sigset_t all, old;
  sigfillset(&all);
  pthread_attr_t attr; /* a small stack: a host may reach many origins */
  int rc = mcp__thread_attr_init(&attr, MCP__STACK_IO, false);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  if (rc == 0) {
    rc = pthread_create(&h->thread, &attr, io_main, h);
    pthread_attr_destroy(&attr);
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc != 0) {
    char why[128];
    st = mcp__error_set(err, MCP_ENOMEM, "cannot start I/O thread: %s",
                        errno_text(rc, why, sizeof(why)));
    goto fail;
  }
  *out = h;
  return MCP_OK;

fail:
  client_destroy(h);
  return st;
}

void mcp__http_client_free(mcp_http_client *h) {
  if (!h) return;
  bool on_io = pthread_equal(pthread_self(), h->thread);
  pthread_mutex_lock(&h->mu);
  h->closing = true;
  if (on_io) h->free_on_exit = true;
  wake_locked(h);
  pthread_mutex_unlock(&h->mu);
  /* From a callback on the I/O thread: the thread finishes the shutdown and
   * frees the client once the callback has returned. */
  if (on_io) return;
  pthread_join(h->thread, NULL);
  client_destroy(h);
}

mcp_status mcp__http_submit(mcp_http_client *h, const char *method, const char *path_and_query,
                            const mcp_http_header *headers, size_t nheaders, const char *body,
                            size_t body_len, const mcp_http_callbacks *cb, void *user, uint64_t *id,
                            mcp_error *err) {
  if (!h || !cb) return mcp__error_set(err, MCP_EINVAL, "client and callbacks are required");
  if (!is_token(method)) return mcp__error_set(err, MCP_EINVAL, "invalid method");
  if (!path_and_query || (path_and_query[0] != '/' && strcmp(path_and_query, "*") != 0))
    return mcp__error_set(err, MCP_EINVAL, "the request target must start with '/'");
  for (const unsigned char *q = (const unsigned char *)path_and_query; *q; q++)
    if (*q <= 0x20 || *q == 0x7f)
      return mcp__error_set(err, MCP_EINVAL, "control character or space in request target");
  if (body_len && !body) return mcp__error_set(err, MCP_EINVAL, "body_len without body");
  if (nheaders && !headers) return mcp__error_set(err, MCP_EINVAL, "nheaders without headers");
  size_t strbytes = 0;
  for (size_t i = 0; i < nheaders; i++) {
    const char *n = headers[i].name, *v = headers[i].value;
    if (!n || !v) return mcp__error_set(err, MCP_EINVAL, "header %zu is NULL", i);
    if (!is_token(n)) return mcp__error_set(err, MCP_EINVAL, "invalid header name \"%s\"", n);
    if (reserved_header(n))
      return mcp__error_set(err, MCP_EINVAL, "header \"%s\" is set by the HTTP layer", n);
    if (!value_ok(v))
      return mcp__error_set(err, MCP_EINVAL, "control character in the value of header \"%s\"", n);
    strbytes += strlen(n) + strlen(v) + 2;
  }

  req_ext *e = mcp__calloc(1, sizeof(*e));
  if (!e) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  mcp_http_req *r = &e->req;
  r->client = h;
  r->cb = *cb;
  r->user = user;
  r->method = mcp__strdup(method);
  r->path = mcp__strdup(path_and_query);
  r->nheaders = nheaders;
  if (nheaders) {
    r->headers = mcp__calloc(nheaders, sizeof(*r->headers));
    r->strings = mcp__malloc(strbytes);
  }
  if (body) {
    r->body = mcp__malloc(body_len ? body_len : 1);
    r->body_len = body_len;
  }
  if (!r->method || !r->path || (nheaders && (!r->headers || !r->strings)) || (body && !r->body)) {
    req_free(r);
    return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  }
  if (body_len) memcpy(r->body, body, body_len);
  char *s = r->strings;
  for (size_t i = 0; i < nheaders; i++) {
    size_t nl = strlen(headers[i].name), vl = strlen(headers[i].value);
    for (size_t k = 0; k < nl; k++) s[k] = (char)tolower((unsigned char)headers[i].name[k]);
    s[nl] = '\0';
    r->headers[i].name = s;
    s += nl + 1;
    memcpy(s, headers[i].value, vl + 1);
    r->headers[i].value = s;
    s += vl + 1;
  }

  pthread_mutex_lock(&h->mu);
  if (h->closing) {
    pthread_mutex_unlock(&h->mu);
    req_free(r);
    return mcp__error_set(err, MCP_ECLOSED, "client closed");
  }
  r->id = h->next_id++;
  table_add_locked(h, e);
  if (h->sub_tail) h->sub_tail->qnext = e;
  else h->sub_head = e;
  h->sub_tail = e;
  e->sub_queued = true;
  /* Set before unlocking, so the id is there before any callback runs. */
  if (id) *id = r->id;
  wake_locked(h);
  pthread_mutex_unlock(&h->mu);
  return MCP_OK;
}

void mcp__http_cancel(mcp_http_client *h, uint64_t id) {
  if (!h) return;
  pthread_mutex_lock(&h->mu);
  req_ext *e = h->closing ? NULL : table_find_locked(h, id);
  if (e && !e->cancel_queued) {
    e->cancel_queued = true;
    e->cprev = NULL;
    e->cnext = h->can_head;
    if (h->can_head) h->can_head->cprev = e;
    h->can_head = e;
    wake_locked(h);
  }
  pthread_mutex_unlock(&h->mu);
}

const char *mcp__http_client_protocol(mcp_http_client *h) {
  if (!h) return NULL;
  switch (atomic_load(&h->seen)) {
  case SEEN_H1: return "http/1.1";
  case SEEN_H2: return "h2";
  case SEEN_H2C: return "h2c";
  default: return NULL;
  }
}
