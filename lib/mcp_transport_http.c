/* SPDX-License-Identifier: MIT */
/*
 * mcp_transport_http.c: the Streamable HTTP transport (MCP 2025-11-25) and
 * the legacy HTTP+SSE transport (2024-11-05), on the connection layer in
 * mcp_http.h.
 *
 * Owns the HTTP semantics of MCP: one POST per message with the Accept,
 * Content-Type, Mcp-Session-Id and MCP-Protocol-Version headers; JSON, SSE
 * and 202 responses; the session id from initialize; re-initialize and one
 * retry on 404 for a request that carried a session; the GET listener for
 * server-initiated messages (405 disables it, a drop reconnects with
 * Last-Event-ID and backoff); resumption of a broken response stream with
 * GET + Last-Event-ID after the server's retry delay (never replaying the
 * POST); DELETE on close; legacy SSE (`endpoint` then `message` events) and
 * the automatic fallback to it.  On the modern (2026-07-28) wire nothing
 * is resumed: a response stream that breaks fails its request marked
 * MCP__ERRF_STREAM_LOST, for the client to send it again with a new id.  Knows nothing of tools or other MCP
 * methods: it only tells requests from other messages by the id the client
 * passes, and initialize by a flag.
 *
 * Threads: connection-layer callbacks run on its I/O thread; send/close run
 * on host threads; a small timer thread runs delayed work (resume after
 * retry, listener backoff).  `lock` guards the transport state and every
 * exchange's fields marked so.  Upcalls to the client are made without
 * `lock` held.  Lock order: lock -> the connection layer's queue lock (we
 * may submit while holding lock; its callbacks never run under its lock).
 */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mcp_ossl.h"

#include "mcp_era.h"
#include "mcp_http.h"
#include "mcp_http_pool.h"
#include "mcp_jsonrpc.h"
#include "mcp_oauth.h"
#include "mcp_sha256.h"
#include "mcp_sse.h"
#include "mcp_transport.h"
#include "mcp_url.h"

#define DEFAULT_MAX_MESSAGE ((size_t)16 * 1024 * 1024)
#define DEFAULT_RETRY_MS 1000
#define LISTENER_BACKOFF_MIN_MS 500
#define LISTENER_BACKOFF_MAX_MS 30000
#define LISTENER_MAX_FAILURES 10
#define DELETE_WAIT_MS 2000
#define ERR_BODY_EXCERPT 200
/* exchange.flags bit: already retried once after a 404 re-initialize */
#define RETRIED_404 0x100u
/* Authorization flows one request may start (a 401, then step-ups). */
#define MAX_AUTH_TRIES 3

typedef enum xkind {
  X_REQUEST,     /* POST of a client request (has an id) */
  X_MESSAGE,     /* POST of a notification or response */
  X_RESUME,      /* GET + Last-Event-ID continuing a request's stream */
  X_LISTEN,      /* the standalone GET stream */
  X_REINIT,      /* POST initialize replayed after a 404 */
  X_REINIT_NOTE, /* POST notifications/initialized after a replay */
  X_DELETE,      /* DELETE of the session on close */
  X_LEGACY_GET   /* legacy HTTP+SSE event stream */
} xkind;

typedef struct http_transport http_transport;

/* One HTTP exchange.  Fields after `lock-guarded` are guarded by t->lock. */
typedef struct exchange {
  http_transport *t;
  xkind kind;
  int64_t id; /* X_REQUEST, X_RESUME: the request's id */
  unsigned flags;
  char *body; /* kept for a retry after 404 (requests only) */
  size_t body_len;
  char *h_method; /* modern wire: Mcp-Method and Mcp-Name (NULL: none) */
  char *h_name;
  char *h_param_names[MCP_XHDR_MAX]; /* modern tools/call: its Mcp-Param-* */
  char *h_param_values[MCP_XHDR_MAX];
  size_t h_params;
  bool sent_session;    /* an Mcp-Session-Id went with it */
  uint64_t session_gen; /* t->session_gen when it was sent */
  int attempt;          /* resumes so far */
  int auth_tries;       /* authorization flows this request started */
  bool dpop_retried;    /* sent again once with the server's DPoP-Nonce */
  char *dpop_proof;     /* the DPoP proof it went with (RFC 9449) */
  char *dpop_nonce;     /* the answer's DPoP-Nonce */
  uint64_t bearer_gen;  /* t->bearer_gen when it was sent */
  /* Filled on the I/O thread while the exchange runs. */
  int status;
  bool is_sse;
  bool is_json;
  char *www_authenticate;
  char *auth_server;
  char *session_header;
  mcp_buf body_in; /* JSON or error body */
  mcp_sse *sse;
  bool got_response; /* our response arrived (X_REQUEST, X_RESUME) */
  bool not_sent;     /* X_REQUEST: the server provably never processed it
                         (the connection layer's verdict, or a 404 for an
                         expired session); its failure says so */
  bool stream_lost;  /* X_REQUEST, modern: its response stream broke after
                         it was sent (MCP__ERRF_STREAM_LOST) */
  bool too_big;
  long long content_length; /* of the response, -1 when not given */
  bool oom;                 /* part of the response head could not be kept */
  char *cursor;             /* X_RESUME waiting on the timer: its Last-Event-ID */
  /* lock-guarded */
  uint64_t http_id;
  bool active;
  bool abandoned;
  bool ended_by_close;        /* cancelled by http_close(): fails as ECLOSED */
  struct exchange *next;      /* t->live list */
  struct exchange *live_prev; /* t->live is doubly linked: O(1) unlink;
                                 NULL for its head and when not in it */
} exchange;

/* A delayed job on the timer thread. */
typedef struct timer_job {
  int64_t due;
  void (*fn)(http_transport *t, void *arg);
  void *arg;
  struct timer_job *next;
} timer_job;

struct http_transport {
  mcp_transport base;
  const mcp_transport_callbacks *cb;
  void *user;
  mcp_url *url;            /* the configured endpoint */
  mcp_http_transport kind; /* may switch AUTO -> SSE */
  size_t max_message;
  int max_resume;
  bool no_listener;
  mcp_http_header *headers; /* configured extras; owned strings */
  size_t nheaders;
  mcp_http_client *hc;
  pthread_mutex_t lock;
  pthread_cond_t cond; /* DELETE completion, legacy endpoint, timer */
  /* lock-guarded */
  char *session;        /* Mcp-Session-Id */
  uint64_t session_gen; /* bumped whenever `session` changes */
  char *version;        /* negotiated; header sent once ready */
  char *modern;         /* the modern wire at this version (set_era), or NULL */
  mcp_xhdr_table *xhdr; /* tools with x-mcp-header annotations (modern) */
  atomic_bool has_xhdr; /* xhdr has any: read without the lock */
  bool ready;
  bool closing;
  bool close_started, close_done; /* http_close() ran / finished */
  int in_done;                    /* x_on_done() calls running (the shared client's I/O thread) */
  bool close_reported;
  char *init_body; /* the initialize request, for a 404 replay */
  size_t init_len;
  int64_t init_id;
  bool reinit_running;
  exchange *reinit_wait; /* requests waiting for the replay (via next) */
  exchange *live;        /* every exchange in flight */
  exchange *listener;    /* the GET stream, when open */
  int listener_failures;
  bool listener_disabled;
  char *listener_last_id;
  uint64_t listener_retry_ms;
  /* legacy */
  mcp_url *endpoint;         /* where legacy POSTs go, once known */
  char *pending_legacy_init; /* initialize body waiting for the endpoint */
  size_t pending_legacy_len;
  int64_t pending_legacy_id;
  bool legacy_stream_up;
  bool delete_done;
  /* timer thread */
  pthread_t timer;
  bool timer_started; /* jobs accepted (the thread starts with the first) */
  bool timer_running; /* the timer thread exists */
  bool timer_stop;
  timer_job *jobs;
  /* OAuth: the engine, and the auth thread that runs its flows while the
   * requests that met a 401/403 wait in auth_wait (lock-guarded). */
  mcp_oauth *oauth;
  char *bearer;        /* "Bearer <token>", or NULL */
  uint64_t bearer_gen; /* bumped whenever `bearer` changes */
  exchange *auth_wait;
  exchange *auth_batch;     /* the batch the auth thread is authorizing; its own */
  char *auth_www;           /* the challenge that started the next flow */
  int auth_status;          /* its HTTP status (401 or 403) */
  bool listener_wants_auth; /* the GET stream met a 401 */
  pthread_t auth_thread;
  bool auth_started;
  bool auth_stop;
  pthread_cond_t auth_cond;
};

/* ------------------------------------------------------------------------ */
/* Small helpers                                                             */
/* ------------------------------------------------------------------------ */

static bool name_is(const char *a, const char *b) { return strcasecmp(a, b) == 0; }

/* Wipes a secret string in place before it is freed. */
static void wipe_str(char *s) { OPENSSL_cleanse(s, strlen(s)); }

static bool reserved_header(const char *name) {
  return name[0] == ':' || mcp__settings_header_reserved(name);
}

static bool has_ctl(const char *s) {
  for (; *s; s++)
    if (*s == '\r' || *s == '\n') return true;
  return false;
}

/* Session ids must be visible ASCII (0x21..0x7E). */
static bool valid_session_id(const char *s) {
  if (!*s) return false;
  for (; *s; s++)
    if ((unsigned char)*s < 0x21 || (unsigned char)*s > 0x7e) return false;
  return true;
}

static void upcall_message(http_transport *t, const char *data, size_t len) {
  t->cb->on_message(t->user, data, len);
}

/* |flags|: MCP__ERRF_* marks (mcp_int.h) the error carries. */
static void upcall_request_error(http_transport *t, int64_t id, mcp_status st, int http_status,
                                 const char *msg, unsigned flags) {
  if (!t->cb->on_request_error) return;
  mcp_error e = MCP_ERROR_INIT;
  mcp__error_set(&e, st, "%s", msg);
  e.http_status = http_status;
  mcp__error_mark(&e, flags);
  t->cb->on_request_error(t->user, id, &e);
  mcp_error_clear(&e);
}

static void upcall_error(http_transport *t, mcp_status st, const char *msg) {
  if (t->cb->on_error) t->cb->on_error(t->user, st, msg);
}

/* Reports close once.  Called without lock. */
static void report_close(http_transport *t, mcp_status st, const char *msg) {
  pthread_mutex_lock(&t->lock);
  bool first = !t->close_reported;
  t->close_reported = true;
  pthread_mutex_unlock(&t->lock);
  if (first) t->cb->on_close(t->user, st, msg);
}

/* ------------------------------------------------------------------------ */
/* Timer thread                                                              */
/* ------------------------------------------------------------------------ */

static void *timer_main(void *arg) {
  http_transport *t = arg;
  pthread_mutex_lock(&t->lock);
  while (!t->timer_stop) {
    int64_t now = mcp__now_ms();
    timer_job **pp = &t->jobs, *due = NULL;
    int64_t next = MCP_NO_DEADLINE;
    while (*pp) {
      timer_job *j = *pp;
      if (j->due <= now) {
        *pp = j->next;
        j->next = due;
        due = j;
      } else {
        if (j->due < next) next = j->due;
        pp = &j->next;
      }
    }
    if (due) {
      pthread_mutex_unlock(&t->lock);
      while (due) {
        timer_job *j = due;
        due = j->next;
        j->fn(t, j->arg);
        mcp__free(j);
      }
      pthread_mutex_lock(&t->lock);
      continue;
    }
    struct timespec ts = mcp__ts_from_ms(next);
    pthread_cond_timedwait(&t->cond, &t->lock, &ts);
  }
  pthread_mutex_unlock(&t->lock);
  return NULL;
}

/* Schedules fn(t, arg) in |ms|.  Caller holds lock.  Returns false when out
 * of memory or closing (the caller then handles |arg| itself). */
static bool schedule_locked(http_transport *t, int64_t ms, void (*fn)(http_transport *, void *),
                            void *arg) {
  if (t->closing || !t->timer_started) return false;
  /* Most transports never need one: 1000 servers, not 1000 idle threads. */
  if (!t->timer_running && pthread_create(&t->timer, NULL, timer_main, t) != 0) return false;
  t->timer_running = true;
  timer_job *j = mcp__calloc(1, sizeof(*j));
  if (!j) return false;
  j->due = mcp__now_ms() + ms;
  j->fn = fn;
  j->arg = arg;
  j->next = t->jobs;
  t->jobs = j;
  pthread_cond_broadcast(&t->cond);
  return true;
}

/* ------------------------------------------------------------------------ */
/* Exchanges                                                                 */
/* ------------------------------------------------------------------------ */

static void exchange_free(exchange *x) {
  if (!x) return;
  mcp__free(x->body);
  mcp__free(x->h_method);
  mcp__free(x->h_name);
  for (size_t i = 0; i < x->h_params; i++) {
    mcp__free(x->h_param_names[i]);
    mcp__free(x->h_param_values[i]);
  }
  mcp__free(x->www_authenticate);
  mcp__free(x->auth_server);
  mcp__free(x->session_header);
  mcp__free(x->cursor);
  mcp__free(x->dpop_proof);
  mcp__free(x->dpop_nonce);
  mcp__buf_free(&x->body_in);
  mcp__sse_free(x->sse);
  mcp__free(x);
}

static void unlink_live_locked(http_transport *t, exchange *x) {
  if (x->live_prev || t->live == x) {
    if (x->live_prev) x->live_prev->next = x->next;
    else t->live = x->next;
    if (x->next) x->next->live_prev = x->live_prev;
    x->next = x->live_prev = NULL;
  }
  x->active = false;
  if (t->listener == x) t->listener = NULL;
}

static void x_on_headers(void *user, int status, const mcp_http_header *h, size_t n);
static void x_on_data(void *user, const char *data, size_t n);
static void x_on_done(void *user, mcp_status st, const char *message, bool not_sent);
static const mcp_http_callbacks x_callbacks = {x_on_headers, x_on_data, x_on_done};

/* The path (and query) an exchange goes to. */
static const char *target_path(http_transport *t, xkind kind) {
  if (t->kind == MCP_HTTP_TRANSPORT_LEGACY_SSE && t->endpoint && kind != X_LEGACY_GET)
    return t->endpoint->path_and_query;
  return t->url->path_and_query;
}

/*
 * Submits |x| with its method and headers.  Caller holds lock.  On error
 * |x| is not linked and the caller frees it.
 */
static mcp_status submit_locked(http_transport *t, exchange *x, const char *last_event_id,
                                mcp_error *err) {
  mcp_http_header h[40 + MCP_XHDR_MAX];
  size_t n = 0;
  const char *method = "POST";
  switch (x->kind) {
  case X_REQUEST:
  case X_MESSAGE:
  case X_REINIT:
  case X_REINIT_NOTE:
    h[n++] = (mcp_http_header){"content-type", "application/json"};
    h[n++] = (mcp_http_header){"accept", "application/json, text/event-stream"};
    break;
  case X_RESUME:
  case X_LISTEN:
  case X_LEGACY_GET:
    method = "GET";
    h[n++] = (mcp_http_header){"accept", "text/event-stream"};
    if (last_event_id && *last_event_id) h[n++] = (mcp_http_header){"last-event-id", last_event_id};
    break;
  case X_DELETE: method = "DELETE"; break;
  }
  bool legacy = t->kind == MCP_HTTP_TRANSPORT_LEGACY_SSE;
  x->sent_session = false;
  if (t->modern) {
    /* Stateless: the version and the routing fields on every POST. */
    h[n++] = (mcp_http_header){"mcp-protocol-version", t->modern};
    if (x->h_method) h[n++] = (mcp_http_header){"mcp-method", x->h_method};
    if (x->h_name) h[n++] = (mcp_http_header){"mcp-name", x->h_name};
    for (size_t i = 0; i < x->h_params; i++)
      h[n++] = (mcp_http_header){x->h_param_names[i], x->h_param_values[i]};
  } else if (t->session && !legacy && x->kind != X_REINIT) {
    h[n++] = (mcp_http_header){"mcp-session-id", t->session};
    x->sent_session = true;
    x->session_gen = t->session_gen;
  }
  if (t->ready && t->version && !legacy && !t->modern && x->kind != X_REINIT)
    h[n++] = (mcp_http_header){"mcp-protocol-version", t->version};
  if (t->bearer) h[n++] = (mcp_http_header){"authorization", t->bearer};
  x->bearer_gen = t->bearer_gen;
  /* DPoP (RFC 9449 section 7): a fresh proof per request, for this URL. */
  mcp__free(x->dpop_proof);
  x->dpop_proof = NULL;
  if (t->oauth && t->bearer) {
    char *url = mcp__asprintf("%s://%s%s", t->url->scheme, mcp__url_authority(t->url),
                              target_path(t, x->kind));
    x->dpop_proof = url ? mcp__oauth_dpop_header(t->oauth, method, url, t->bearer) : NULL;
    mcp__free(url);
    if (x->dpop_proof) h[n++] = (mcp_http_header){"dpop", x->dpop_proof};
  }
  for (size_t i = 0; i < t->nheaders && n < sizeof(h) / sizeof(h[0]); i++) {
    /* A host's own Authorization header goes until OAuth has a token. */
    if (t->bearer && name_is(t->headers[i].name, "authorization")) continue;
    h[n++] = t->headers[i];
  }
  const char *body = NULL;
  size_t body_len = 0;
  if (strcmp(method, "POST") == 0) {
    body = x->body;
    body_len = x->body_len;
  }
  mcp_status st = mcp__http_submit(t->hc, method, target_path(t, x->kind), h, n, body, body_len,
                                   &x_callbacks, x, &x->http_id, err);
  if (st != MCP_OK) return st;
  x->active = true;
  x->next = t->live;
  x->live_prev = NULL;
  if (t->live) t->live->live_prev = x;
  t->live = x;
  return MCP_OK;
}

static exchange *exchange_new(http_transport *t, xkind kind, int64_t id, const char *body,
                              size_t len) {
  exchange *x = mcp__calloc(1, sizeof(*x));
  if (!x) return NULL;
  x->t = t;
  x->kind = kind;
  x->id = id;
  mcp__buf_init(&x->body_in);
  if (body) {
    x->body = mcp__strndup(body, len);
    if (!x->body) {
      mcp__free(x);
      return NULL;
    }
    x->body_len = len;
  }
  return x;
}

/* ------------------------------------------------------------------------ */
/* Incoming messages                                                         */
/* ------------------------------------------------------------------------ */

/* 1 when |data| holds the response (or error) to request |id|, 0 when not,
 * -1 when that cannot be told for want of memory. */
static int is_response_to(const char *data, size_t len, int64_t id) {
  const char *why = NULL;
  json_object *o = mcp__jsonrpc_parse(data, len, &why);
  if (!o) return why == MCP__JSONRPC_OOM ? -1 : 0;
  bool hit = false;
  size_t n = json_object_is_type(o, json_type_array) ? json_object_array_length(o) : 1;
  for (size_t i = 0; i < n && !hit; i++) {
    json_object *el = json_object_is_type(o, json_type_array) ? json_object_array_get_idx(o, i) : o;
    mcp_msg m;
    mcp_msg_kind k = mcp__jsonrpc_classify(el, &m);
    int64_t got;
    if ((k == MCP_MSG_RESPONSE || k == MCP_MSG_ERROR) && mcp__jsonrpc_id_int(m.id, &got) &&
        got == id)
      hit = true;
  }
  json_object_put(o);
  return hit;
}

static void legacy_endpoint(http_transport *t, const char *data, size_t len);

static int sse_event(void *user, const char *type, const char *data, size_t len, const char *id) {
  exchange *x = user;
  http_transport *t = x->t;
  if (x->kind == X_LEGACY_GET && strcmp(type, "endpoint") == 0) {
    legacy_endpoint(t, data, len);
    return 0;
  }
  if (strcmp(type, "message") != 0 || len == 0) return 0; /* priming or foreign events */
  bool oom = false;
  if ((x->kind == X_REQUEST || x->kind == X_RESUME) && !x->got_response) {
    int r = is_response_to(data, len, x->id);
    if (r > 0) x->got_response = true;
    /* It may have been ours: stop here, x_on_done fails it (MCP_ENOMEM)
     * unless the client, parsing it below, already completed it. */
    if (r < 0) oom = x->oom = true;
  }
  if (x->kind == X_REINIT) return 0; /* the replayed initialize's answer is ours */
  upcall_message(t, data, len);
  if (oom) return 1;
  /* Our response arrived: nothing more is owed on this stream. */
  return x->got_response ? 1 : 0;
}

static void x_on_headers(void *user, int status, const mcp_http_header *h, size_t n) {
  exchange *x = user;
  x->status = status;
  x->content_length = -1;
  for (size_t i = 0; i < n; i++) {
    if (name_is(h[i].name, "content-type")) {
      const char *v = h[i].value;
      while (*v == ' ') v++;
      if (strncasecmp(v, "text/event-stream", 17) == 0) x->is_sse = true;
      else if (strncasecmp(v, "application/json", 16) == 0) x->is_json = true;
    } else if (name_is(h[i].name, "mcp-session-id")) {
      mcp__free(x->session_header);
      x->session_header = mcp__strdup(h[i].value);
      if (!x->session_header) x->oom = true;
    } else if (name_is(h[i].name, "www-authenticate")) {
      mcp__free(x->www_authenticate);
      x->www_authenticate = mcp__strdup(h[i].value);
      if (!x->www_authenticate) x->oom = true;
    } else if (name_is(h[i].name, "content-length")) {
      char *end = NULL;
      errno = 0;
      long long v = strtoll(h[i].value, &end, 10);
      x->content_length = errno == 0 && end != h[i].value && v >= 0 ? v : -1;
    } else if (name_is(h[i].name, "dpop-nonce") && x->t->oauth) {
      /* RFC 9449 section 9: the nonce for our next proofs. */
      mcp__oauth_dpop_nonce(x->t->oauth, h[i].value);
      mcp__free(x->dpop_nonce);
      x->dpop_nonce = mcp__strdup(h[i].value);
    } else if (name_is(h[i].name, "mcp-auth-server")) {
      mcp__free(x->auth_server);
      x->auth_server = mcp__strdup(h[i].value);
      if (!x->auth_server) x->oom = true;
    }
  }
  http_transport *t = x->t;
  /* The session starts with initialize's answer (first or replayed). */
  if ((x->kind == X_REINIT || (x->kind == X_REQUEST && (x->flags & MCP_SEND_INITIALIZE))) &&
      status >= 200 && status < 300 && x->session_header) {
    pthread_mutex_lock(&t->lock);
    if (valid_session_id(x->session_header)) {
      char *sid = mcp__strdup(x->session_header);
      if (sid) {
        mcp__free(t->session);
        t->session = sid;
        t->session_gen++;
      } else {
        x->oom = true;
      }
    }
    pthread_mutex_unlock(&t->lock);
  }
  if (!x->is_sse && status >= 200 && status < 300 && x->content_length >= 0 &&
      (unsigned long long)x->content_length > t->max_message) {
    /* Refused at the head: reading a body we would drop is wasted time. */
    x->too_big = true;
    pthread_mutex_lock(&t->lock);
    uint64_t hid = x->http_id;
    bool act = x->active;
    pthread_mutex_unlock(&t->lock);
    if (act) mcp__http_cancel(t->hc, hid);
    return;
  }
  if (x->is_sse && status >= 200 && status < 300) {
    static const mcp_sse_callbacks scb = {sse_event, NULL};
    x->sse = mcp__sse_new(t->max_message, &scb, x);
    if (!x->sse) x->oom = true;
  }
  if (x->oom) {
    /* Without the session id or the event parser the response cannot be
     * used: stop it now; x_on_done fails the request with MCP_ENOMEM. */
    pthread_mutex_lock(&t->lock);
    uint64_t hid = x->http_id;
    bool act = x->active;
    pthread_mutex_unlock(&t->lock);
    if (act) mcp__http_cancel(t->hc, hid);
  }
}

static void x_on_data(void *user, const char *data, size_t n) {
  exchange *x = user;
  if (x->sse) {
    if (x->got_response) return; /* drained, ignored */
    int rc = mcp__sse_feed(x->sse, data, n);
    if (rc == MCP_ETOOBIG && (x->kind == X_REQUEST || x->kind == X_RESUME)) {
      /* This stream answers one request: an event too big to read fails
       * it now (MCP_ETOOBIG) rather than at its deadline; the rest of the
       * stream is dropped. */
      x->got_response = true;
      pthread_mutex_lock(&x->t->lock);
      uint64_t hid = x->http_id;
      bool act = x->active, abandoned = x->abandoned;
      pthread_mutex_unlock(&x->t->lock);
      char msg[128];
      snprintf(msg, sizeof(msg), "server-sent event exceeds the message size limit of %zu bytes",
               x->t->max_message);
      if (!abandoned) upcall_request_error(x->t, x->id, MCP_ETOOBIG, 0, msg, 0);
      if (act) mcp__http_cancel(x->t->hc, hid);
      return;
    }
    if (rc == MCP_ETOOBIG && !x->too_big) {
      x->too_big = true;
      upcall_error(x->t, MCP_ETOOBIG, "server-sent event exceeds the message size limit; dropped");
    }
    if (rc == MCP__EAGAIN && x->got_response) {
      /* Stop the stream: the rest of it owes us nothing. */
      pthread_mutex_lock(&x->t->lock);
      uint64_t hid = x->http_id;
      bool act = x->active;
      pthread_mutex_unlock(&x->t->lock);
      if (act) mcp__http_cancel(x->t->hc, hid);
    }
    return;
  }
  if (x->too_big) return;
  size_t cap = (x->status >= 200 && x->status < 300) ? x->t->max_message : 64 * 1024;
  if (x->body_in.len + n > cap) {
    n = cap > x->body_in.len ? cap - x->body_in.len : 0;
    if (x->status >= 200 && x->status < 300) {
      /* Unusable now: stop reading rather than drain the rest. */
      x->too_big = true;
      pthread_mutex_lock(&x->t->lock);
      uint64_t hid = x->http_id;
      bool act = x->active;
      pthread_mutex_unlock(&x->t->lock);
      if (act) mcp__http_cancel(x->t->hc, hid);
      return;
    }
  }
  /* A 2xx body that cannot be kept whole is unusable; an error body only
   * loses its excerpt. */
  if (n && mcp__buf_append(&x->body_in, data, n) != 0 && x->status >= 200 && x->status < 300)
    x->oom = true;
}

/* "HTTP 401: body; WWW-Authenticate: ...; Mcp-Auth-Server: ..." */
static char *http_error_message(const exchange *x) {
  char excerpt[ERR_BODY_EXCERPT + 4];
  size_t n = x->body_in.len < ERR_BODY_EXCERPT ? x->body_in.len : ERR_BODY_EXCERPT;
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)x->body_in.data[i];
    excerpt[k++] = (ch < 0x20 || ch == 0x7f) ? ' ' : (char)ch;
  }
  excerpt[k] = '\0';
  if (x->body_in.len > n) strcat(excerpt, "...");
  char qa[MCP_QUOTE_LONG / 4], qs[MCP_QUOTE_LONG / 8];
  const char *wa = x->www_authenticate, *as = x->auth_server;
  return mcp__asprintf(
      "HTTP %d%s%s%s%s%s%s", x->status, k ? ": " : "", excerpt, wa ? "; WWW-Authenticate: " : "",
      wa ? mcp__quote(qa, sizeof(qa), wa, strlen(wa)) : "", as ? "; Mcp-Auth-Server: " : "",
      as ? mcp__quote(qs, sizeof(qs), as, strlen(as)) : "");
}

static void start_reinit_locked(http_transport *t);
static void start_listener_locked(http_transport *t, int64_t delay_ms);
static void resume_job(http_transport *t, void *arg);

/* Fails request |x| (not linked anymore) and frees it.  Without lock. */
static void fail_request(http_transport *t, exchange *x, mcp_status st, int http_status,
                         const char *msg) {
  if (!x->abandoned)
    upcall_request_error(t, x->id, st, http_status, msg,
                         (x->kind == X_REQUEST && x->not_sent ? MCP__ERRF_NOT_SENT : 0) |
                             (x->stream_lost ? MCP__ERRF_STREAM_LOST : 0));
  exchange_free(x);
}

/* A request's response stream broke before its response: resume with GET
 * + Last-Event-ID after the retry delay, or fail.  Without lock. */
static void resume_or_fail(http_transport *t, exchange *x, const char *why) {
  const char *last = x->sse ? mcp__sse_last_event_id(x->sse) : "";
  uint64_t retry = x->sse ? mcp__sse_retry_ms(x->sse) : 0;
  if (!last || !*last || x->attempt >= t->max_resume || x->abandoned) {
    char *msg = mcp__asprintf("response stream ended without a response (%s)", why);
    fail_request(t, x, MCP_EIO, 0, msg ? msg : why);
    mcp__free(msg);
    return;
  }
  exchange *r = exchange_new(t, X_RESUME, x->id, NULL, 0);
  if (r) {
    r->attempt = x->attempt + 1;
    r->flags = x->flags;
    /* The resumed GET reads the same stream from its cursor. */
    r->cursor = mcp__strdup(last);
  }
  pthread_mutex_lock(&t->lock);
  bool ok = r && r->cursor &&
            schedule_locked(t, retry ? (int64_t)retry : DEFAULT_RETRY_MS, resume_job, r);
  pthread_mutex_unlock(&t->lock);
  if (!ok) {
    exchange_free(r);
    fail_request(t, x, MCP_EIO, 0, "response stream ended and could not be resumed");
    return;
  }
  exchange_free(x);
}

/* Timer job: send the resume GET from its cursor. */
static void resume_job(http_transport *t, void *arg) {
  exchange *r = arg;
  char *last = r->cursor;
  r->cursor = NULL;
  mcp_error err = MCP_ERROR_INIT;
  pthread_mutex_lock(&t->lock);
  mcp_status st = t->closing ? MCP_ECLOSED : submit_locked(t, r, last, &err);
  pthread_mutex_unlock(&t->lock);
  mcp__free(last);
  if (st != MCP_OK) fail_request(t, r, st, 0, err.message ? err.message : "could not resume");
  mcp_error_clear(&err);
}

static void listener_job(http_transport *t, void *arg) {
  pthread_mutex_lock(&t->lock);
  start_listener_locked(t, 0);
  pthread_mutex_unlock(&t->lock);
}

/* ---- OAuth ------------------------------------------------------------------ */

/* True when a 403's WWW-Authenticate asks for more scope. */
static bool insufficient_scope(const exchange *x) {
  if (x->status != 403 || !x->www_authenticate) return false;
  mcp_oauth_challenge ch;
  if (mcp__oauth_parse_challenge(x->www_authenticate, &ch) != MCP_OK) return false;
  bool yes = (ch.bearer || ch.dpop) && ch.error && strcmp(ch.error, "insufficient_scope") == 0;
  mcp__oauth_challenge_clear(&ch);
  return yes;
}

/* True when a 401 asks for a DPoP nonce (RFC 9449 section 9) and gave one. */
static bool use_dpop_nonce(const exchange *x) {
  if (!x->dpop_nonce || !x->www_authenticate) return false;
  mcp_oauth_challenge ch;
  if (mcp__oauth_parse_challenge(x->www_authenticate, &ch) != MCP_OK) return false;
  bool yes = ch.dpop && ch.error && strcmp(ch.error, "use_dpop_nonce") == 0;
  mcp__oauth_challenge_clear(&ch);
  return yes;
}

static void auth_fail(http_transport *t, exchange *x, mcp_status st, int http_status,
                      const char *msg);

static void *auth_main(void *arg);

/* The engine's person hook, on the auth thread: the requests of the batch
 * being authorized do not time out while a person logs in; they get their
 * whole timeout again when the person is done.  Machine steps of the flow
 * (metadata, token requests) stay under the requests' deadlines. */
static void auth_person(void *user, bool waiting) {
  http_transport *t = user;
  if (!t->cb->on_request_hold) return;
  for (exchange *x = t->auth_batch; x; x = x->next)
    if (x->kind == X_REQUEST) t->cb->on_request_hold(t->user, x->id, waiting);
}

/*
 * A request or notification met 401 (or 403 insufficient_scope) and OAuth
 * is on: park it for the auth thread, which runs one flow for everything
 * parked and then sends each again once.  Runs on the I/O thread, without
 * lock.  Returns false when the exchange is not ours to take.
 */
static bool auth_challenge(http_transport *t, exchange *x, mcp_status st, bool closing) {
  if (!t->oauth || closing || st != MCP_OK || x->abandoned) return false;
  if (x->status == 401 && use_dpop_nonce(x)) {
    /* RFC 9449 section 9: the nonce is recorded (x_on_headers); the
     * request goes once more with it, and a second refusal is its error. */
    if (x->dpop_retried || (x->kind != X_REQUEST && x->kind != X_MESSAGE)) return false;
    x->dpop_retried = true;
    x->status = 0;
    x->is_sse = x->is_json = false;
    mcp__buf_free(&x->body_in);
    mcp__buf_init(&x->body_in);
    pthread_mutex_lock(&t->lock);
    mcp_error serr = MCP_ERROR_INIT;
    bool sent = !t->closing && submit_locked(t, x, NULL, &serr) == MCP_OK;
    pthread_mutex_unlock(&t->lock);
    if (!sent)
      auth_fail(t, x, serr.status ? serr.status : MCP_ECLOSED, 0,
                serr.message ? serr.message : "connection closed");
    mcp_error_clear(&serr);
    return true;
  }
  if (x->status != 401 && !insufficient_scope(x)) return false;
  if (x->kind == X_LISTEN) {
    if (x->status != 401) return false;
    pthread_mutex_lock(&t->lock);
    t->listener_wants_auth = true; /* reopened after the next good flow */
    pthread_mutex_unlock(&t->lock);
    exchange_free(x);
    return true;
  }
  if (x->kind != X_REQUEST && x->kind != X_MESSAGE) return false;
  if (x->auth_tries >= MAX_AUTH_TRIES) return false; /* fails as an HTTP error */
  pthread_mutex_lock(&t->lock);
  if (t->closing) {
    pthread_mutex_unlock(&t->lock);
    return false;
  }
  if (!t->auth_started) {
    if (pthread_create(&t->auth_thread, NULL, auth_main, t) != 0) {
      pthread_mutex_unlock(&t->lock);
      return false;
    }
    t->auth_started = true;
  }
  x->auth_tries++;
  /* The newest challenge wins: a step-up names the scope now needed. */
  if (x->www_authenticate || !t->auth_www) {
    mcp__free(t->auth_www);
    t->auth_www = x->www_authenticate;
    x->www_authenticate = NULL;
  }
  t->auth_status = x->status;
  x->status = 0;
  x->is_sse = x->is_json = false;
  mcp__free(x->auth_server);
  x->auth_server = NULL;
  mcp__buf_free(&x->body_in);
  mcp__buf_init(&x->body_in);
  x->next = t->auth_wait;
  t->auth_wait = x;
  pthread_cond_broadcast(&t->auth_cond);
  pthread_mutex_unlock(&t->lock);
  return true;
}

/* Ends a parked exchange that will not be sent again.  Without lock. */
static void auth_fail(http_transport *t, exchange *x, mcp_status st, int http_status,
                      const char *msg) {
  if (x->kind == X_REQUEST) {
    fail_request(t, x, st, http_status, msg);
  } else {
    upcall_error(t, st, msg);
    exchange_free(x);
  }
}

/*
 * The auth thread: runs the engine's flow for each batch of parked
 * exchanges, installs the new token and sends them again.  A batch whose
 * exchanges all went out with an older token than the current one is just
 * sent again (another flow already answered its challenge).
 */
static void *auth_main(void *arg) {
  http_transport *t = arg;
  pthread_mutex_lock(&t->lock);
  while (!t->auth_stop) {
    if (!t->auth_wait) {
      pthread_cond_wait(&t->auth_cond, &t->lock);
      continue;
    }
    exchange *batch = t->auth_wait;
    t->auth_wait = NULL;
    char *www = t->auth_www;
    t->auth_www = NULL;
    int status = t->auth_status;
    bool need = false;
    for (exchange *x = batch; x; x = x->next)
      if (x->bearer_gen == t->bearer_gen) need = true;
    pthread_mutex_unlock(&t->lock);
    mcp_error e = MCP_ERROR_INIT;
    mcp_status st = MCP_OK;
    char *token = NULL;
    t->auth_batch = batch; /* for auth_person(), on this thread */
    if (need) st = mcp__oauth_challenge(t->oauth, status, www, &token, &e);
    t->auth_batch = NULL;
    mcp__free(www);
    char *bearer = token ? mcp__oauth_authorization(t->oauth) : NULL;
    if (token) {
      wipe_str(token);
      mcp__free(token);
    }
    if (st == MCP_OK && need && !bearer) st = mcp__error_set(&e, MCP_ENOMEM, "out of memory");
    char *why = st == MCP_OK ? NULL
                             : mcp__asprintf("authorization failed: %s",
                                             e.message ? e.message : mcp_strerror(st));
    pthread_mutex_lock(&t->lock);
    if (bearer) {
      if (t->bearer) wipe_str(t->bearer);
      mcp__free(t->bearer);
      t->bearer = bearer;
      t->bearer_gen++;
    }
    exchange *failed = NULL;
    while (batch) {
      exchange *x = batch;
      batch = x->next;
      x->next = NULL;
      mcp_error serr = MCP_ERROR_INIT;
      if (st != MCP_OK || t->closing || x->abandoned ||
          submit_locked(t, x, NULL, &serr) != MCP_OK) {
        x->next = failed;
        failed = x;
      }
      mcp_error_clear(&serr);
    }
    if (st == MCP_OK && t->listener_wants_auth) {
      t->listener_wants_auth = false;
      start_listener_locked(t, 0);
    }
    pthread_mutex_unlock(&t->lock);
    while (failed) {
      exchange *x = failed;
      failed = x->next;
      if (st != MCP_OK) auth_fail(t, x, st, status, why ? why : "authorization failed");
      else auth_fail(t, x, MCP_ECLOSED, 0, "connection closed");
    }
    mcp__free(why);
    mcp_error_clear(&e);
    pthread_mutex_lock(&t->lock);
  }
  pthread_mutex_unlock(&t->lock);
  return NULL;
}

/* ---- Exchange completion: one function per exchange kind ------------------- */

static bool is_2xx(const exchange *x) { return x->status >= 200 && x->status < 300; }

/* A 2xx response refused as too big (at its Content-Length or while read). */
static void fail_too_big(http_transport *t, exchange *x) {
  char msg[160];
  if (x->content_length >= 0)
    snprintf(msg, sizeof(msg),
             "response of %lld bytes (Content-Length) exceeds the message size limit of %zu bytes",
             x->content_length, t->max_message);
  else
    snprintf(msg, sizeof(msg), "response exceeds the message size limit of %zu bytes",
             t->max_message);
  fail_request(t, x, MCP_ETOOBIG, 0, msg);
}

/* True when request |x| met a 404 for the session it named, and may be
 * retried once after a re-initialize. */
static bool session_expired(const exchange *x) {
  return x->status == 404 && x->sent_session && x->kind == X_REQUEST && !(x->flags & RETRIED_404) &&
         !(x->flags & MCP_SEND_INITIALIZE);
}

/* The session expired: park |x| until the re-initialize, which retries it
 * once.  Without lock. */
static void retry_after_reinit(http_transport *t, exchange *x) {
  x->flags |= RETRIED_404;
  x->status = 0;
  x->is_sse = x->is_json = false;
  mcp__buf_free(&x->body_in);
  mcp__buf_init(&x->body_in);
  pthread_mutex_lock(&t->lock);
  x->next = t->reinit_wait;
  t->reinit_wait = x;
  start_reinit_locked(t);
  pthread_mutex_unlock(&t->lock);
}

/* True when the initialize |x| was refused as a server of the legacy
 * transport refuses it, and the kind is still to be found out. */
static bool wants_legacy(const http_transport *t, const exchange *x) {
  return x->kind == X_REQUEST && (x->flags & MCP_SEND_INITIALIZE) &&
         t->kind == MCP_HTTP_TRANSPORT_AUTO &&
         (x->status == 400 || x->status == 404 || x->status == 405);
}

/* Not a Streamable HTTP server: open the legacy event stream; the
 * initialize goes out again once its endpoint is known.  Without lock. */
static void fall_back_to_legacy(http_transport *t, exchange *x) {
  pthread_mutex_lock(&t->lock);
  t->kind = MCP_HTTP_TRANSPORT_LEGACY_SSE;
  t->pending_legacy_init = x->body;
  t->pending_legacy_len = x->body_len;
  t->pending_legacy_id = x->id;
  x->body = NULL;
  exchange *g = exchange_new(t, X_LEGACY_GET, 0, NULL, 0);
  mcp_error err = MCP_ERROR_INIT;
  mcp_status s2 = g ? submit_locked(t, g, NULL, &err) : MCP_ENOMEM;
  pthread_mutex_unlock(&t->lock);
  if (s2 != MCP_OK) {
    exchange_free(g);
    fail_request(t, x, s2, 0, "legacy SSE fallback failed");
  } else {
    exchange_free(x);
  }
  mcp_error_clear(&err);
}

/* A request's complete 2xx non-SSE response: hand its body to the client
 * and see that it answered the request.  Without lock. */
static void request_body_done(http_transport *t, exchange *x) {
  if (x->kind == X_REQUEST && t->kind == MCP_HTTP_TRANSPORT_LEGACY_SSE) {
    /* Legacy: the answer comes on the event stream; 2xx just accepts. */
    exchange_free(x);
    return;
  }
  if (x->body_in.len > 0) {
    int mine = is_response_to(x->body_in.data, x->body_in.len, x->id);
    upcall_message(t, x->body_in.data, x->body_in.len);
    if (mine > 0) {
      exchange_free(x);
      return;
    }
    if (mine < 0) {
      fail_request(t, x, MCP_ENOMEM, 0, "out of memory reading the response");
      return;
    }
  }
  char msg[96];
  snprintf(msg, sizeof(msg), "HTTP %d without a response to request %lld", x->status,
           (long long)x->id);
  fail_request(t, x, MCP_EPROTO, x->status, msg);
}

/* X_REQUEST, X_RESUME: the POST of a request, or a GET resuming its stream. */
static void request_done(http_transport *t, exchange *x, mcp_status st, const char *message,
                         bool closing) {
  bool ok2xx = is_2xx(x);
  if (x->got_response || x->abandoned) {
    exchange_free(x);
    return;
  }
  if (x->too_big && !x->is_sse && !closing) {
    fail_too_big(t, x);
    return;
  }
  if (st == MCP_ECANCELLED || closing) {
    fail_request(t, x, st == MCP_ECANCELLED ? MCP_ECANCELLED : MCP_ECLOSED, 0,
                 message ? message : "connection closed");
    return;
  }
  if (session_expired(x)) {
    retry_after_reinit(t, x);
    return;
  }
  if (wants_legacy(t, x)) {
    fall_back_to_legacy(t, x);
    return;
  }
  if (t->modern && x->kind == X_REQUEST && !x->not_sent &&
      (st == MCP_EIO || (st == MCP_OK && x->is_sse && ok2xx))) {
    /* The modern wire has no resumption (no event ids, no GET): the
     * request is lost, and the client sends it again as a new one. */
    x->stream_lost = true;
    char *msg = mcp__asprintf("response stream broke before the response (%s)",
                              st == MCP_OK ? "stream closed" : (message ? message : "I/O error"));
    fail_request(t, x, MCP_EIO, 0, msg ? msg : "response stream broke before the response");
    mcp__free(msg);
    return;
  }
  if (st != MCP_OK && !(x->is_sse && st == MCP_EIO && ok2xx)) {
    fail_request(t, x, st, 0, message ? message : mcp_strerror(st));
    return;
  }
  if (x->is_sse && ok2xx) {
    resume_or_fail(t, x, st == MCP_OK ? "stream closed" : (message ? message : "stream broken"));
    return;
  }
  if (!ok2xx && t->modern && x->body_in.len > 0 &&
      is_response_to(x->body_in.data, x->body_in.len, x->id) > 0) {
    /* The modern wire answers a refused request with an error status and
     * its JSON-RPC error (-32020, -32021, -32022, -32601...): that error is
     * the answer. */
    upcall_message(t, x->body_in.data, x->body_in.len);
    exchange_free(x);
    return;
  }
  if (!ok2xx) {
    char *msg = http_error_message(x);
    fail_request(t, x, MCP_EHTTP, x->status, msg ? msg : "HTTP error");
    mcp__free(msg);
    return;
  }
  if (x->too_big) {
    fail_request(t, x, MCP_ETOOBIG, 0, "response exceeds the message size limit");
    return;
  }
  request_body_done(t, x);
}

/* X_MESSAGE: the POST of a notification or response. */
static void message_done(http_transport *t, exchange *x, mcp_status st, const char *message,
                         bool closing) {
  bool ok2xx = is_2xx(x);
  if (!closing && st == MCP_OK && !ok2xx) {
    char *msg = http_error_message(x);
    upcall_error(t, MCP_EHTTP, msg ? msg : "HTTP error on a notification");
    mcp__free(msg);
  } else if (!closing && st != MCP_OK && st != MCP_ECANCELLED) {
    upcall_error(t, st, message ? message : "could not send a notification");
  } else if (ok2xx && x->body_in.len > 0 && x->is_json) {
    upcall_message(t, x->body_in.data, x->body_in.len);
  }
  exchange_free(x);
}

/* Reopens the GET stream after a backoff, unless it failed too often.
 * Caller holds lock. */
static void listener_backoff_locked(http_transport *t, bool healthy) {
  if (healthy) t->listener_failures = 0;
  else t->listener_failures++;
  if (t->listener_failures >= LISTENER_MAX_FAILURES) return;
  int64_t delay = t->listener_retry_ms ? (int64_t)t->listener_retry_ms : LISTENER_BACKOFF_MIN_MS;
  for (int i = 0; i < t->listener_failures && delay < LISTENER_BACKOFF_MAX_MS; i++) delay *= 2;
  if (delay > LISTENER_BACKOFF_MAX_MS) delay = LISTENER_BACKOFF_MAX_MS;
  start_listener_locked(t, delay);
}

/* X_LISTEN: the standalone GET stream ended. */
static void listen_done(http_transport *t, exchange *x, mcp_status st) {
  bool ok2xx = is_2xx(x);
  pthread_mutex_lock(&t->lock);
  if (x->sse) {
    const char *last = mcp__sse_last_event_id(x->sse);
    if (last && *last) {
      mcp__free(t->listener_last_id);
      t->listener_last_id = mcp__strdup(last);
    }
    if (mcp__sse_retry_ms(x->sse)) t->listener_retry_ms = mcp__sse_retry_ms(x->sse);
  }
  /* 404 means "session expired" only for a GET that carried a session;
   * without one (a stateless server) it is "no stream here", like 405. */
  if (x->status == 405 ||
      (st == MCP_OK && x->status && !ok2xx && (x->status != 404 || !x->sent_session))) {
    t->listener_disabled = true; /* no stream offered: quietly done */
  } else if (x->status == 404 && x->session_gen == t->session_gen && !t->closing && t->init_body) {
    /* The session this GET named has expired (a server restart while we
     * were idle): start a new one now rather than when the next request
     * fails, so server-initiated messages keep flowing.  A successful
     * re-initialize reopens the listener; a failed one closes the
     * transport, as for a request. */
    start_reinit_locked(t);
  } else if (!t->closing) {
    listener_backoff_locked(t, ok2xx && x->sse);
  }
  pthread_mutex_unlock(&t->lock);
  exchange_free(x);
}

/* After a replayed initialize: sends notifications/initialized.  Caller
 * holds lock.  False when it could not be sent. */
static bool send_initialized_locked(http_transport *t) {
  static const char initialized[] =
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
  /* sizeof - 1: the NUL is not part of the body. */
  exchange *note = exchange_new(t, X_REINIT_NOTE, 0, initialized, sizeof(initialized) - 1);
  mcp_error err = MCP_ERROR_INIT;
  bool ok = note && submit_locked(t, note, NULL, &err) == MCP_OK;
  if (!ok) exchange_free(note);
  mcp_error_clear(&err);
  return ok;
}

/* Sends each request that waited for the re-initialize again, with the new
 * session.  Caller holds lock.  Returns those that could not be sent. */
static exchange *resubmit_waiting_locked(http_transport *t, exchange *waiting) {
  exchange *failed = NULL;
  while (waiting) {
    exchange *w = waiting;
    waiting = w->next;
    w->next = NULL;
    mcp_error err = MCP_ERROR_INIT;
    if (t->closing || submit_locked(t, w, NULL, &err) != MCP_OK) {
      w->next = failed;
      failed = w;
    }
    mcp_error_clear(&err);
  }
  return failed;
}

/* The re-initialize failed: fails the requests that waited for it and
 * closes the transport.  Without lock. */
static void reinit_failed(http_transport *t, exchange *waiting, const char *why) {
  char *msg = mcp__asprintf("session expired and re-initialize failed: %s", why ? why : "?");
  while (waiting) {
    exchange *w = waiting;
    waiting = w->next;
    w->not_sent = true; /* refused with 404, or never sent */
    fail_request(t, w, MCP_ECLOSED, 404, msg ? msg : "session expired");
  }
  report_close(t, MCP_ECLOSED, msg ? msg : "session expired");
  mcp__free(msg);
}

/* X_REINIT, X_REINIT_NOTE: the replayed initialize, or the
 * notifications/initialized after it. */
static void reinit_done(http_transport *t, exchange *x, mcp_status st, const char *message) {
  bool good = st == MCP_OK && is_2xx(x);
  pthread_mutex_lock(&t->lock);
  if (x->kind == X_REINIT && good) {
    /* Initialized again: send notifications/initialized, then go on. */
    if (send_initialized_locked(t)) {
      pthread_mutex_unlock(&t->lock);
      exchange_free(x);
      return;
    }
    good = false;
  }
  t->reinit_running = false;
  exchange *waiting = t->reinit_wait;
  t->reinit_wait = NULL;
  if (!good) {
    char *why = x->status ? http_error_message(x) : mcp__strdup(message ? message : "failed");
    pthread_mutex_unlock(&t->lock);
    reinit_failed(t, waiting, why);
    mcp__free(why);
    exchange_free(x);
    return;
  }
  /* Retry each waiting request once with the new session. */
  exchange *failed = resubmit_waiting_locked(t, waiting);
  if (!t->no_listener && !t->listener && !t->listener_disabled) start_listener_locked(t, 0);
  pthread_mutex_unlock(&t->lock);
  while (failed) {
    exchange *f = failed;
    failed = f->next;
    f->not_sent = true; /* it got a 404 or was never sent */
    fail_request(t, f, MCP_ECLOSED, 0, "could not retry after re-initialize");
  }
  exchange_free(x);
}

/* X_DELETE: the session's DELETE on close; http_close() waits for it. */
static void session_delete_done(http_transport *t, exchange *x) {
  pthread_mutex_lock(&t->lock);
  t->delete_done = true;
  pthread_cond_broadcast(&t->cond);
  pthread_mutex_unlock(&t->lock);
  exchange_free(x);
}

/* X_LEGACY_GET: the legacy event stream ended, which ends the transport
 * (and the initialize, when it still waited for the endpoint). */
static void legacy_get_done(http_transport *t, exchange *x, mcp_status st, const char *message,
                            bool closing) {
  pthread_mutex_lock(&t->lock);
  bool had = t->legacy_stream_up;
  t->legacy_stream_up = false;
  bool waiting_init = t->pending_legacy_init != NULL;
  char *init = t->pending_legacy_init;
  int64_t init_id = t->pending_legacy_id;
  t->pending_legacy_init = NULL;
  pthread_cond_broadcast(&t->cond);
  pthread_mutex_unlock(&t->lock);
  char *msg = !is_2xx(x) && x->status
                  ? http_error_message(x)
                  : mcp__strdup(message && st != MCP_OK ? message : "legacy SSE stream closed");
  if (waiting_init)
    upcall_request_error(t, init_id,
                         x->status ? MCP_EHTTP
                         : st      ? st
                                   : MCP_EPROTO,
                         x->status, msg ? msg : "legacy SSE stream failed", 0);
  mcp__free(init);
  if ((had || waiting_init) && !closing)
    report_close(t, MCP_ECLOSED, msg ? msg : "legacy SSE stream closed");
  mcp__free(msg);
  exchange_free(x);
}

/* The connection layer's end of exchange |x|, on its I/O thread: unlinks
 * it, settles what every kind shares (out of memory, an OAuth challenge)
 * and hands it to its kind's function, which frees it. */
static void x_on_done_locked_out(exchange *x, mcp_status st, const char *message, bool not_sent);

/* The client is shared (mcp_http_pool): http_close() ends this transport's
 * exchanges itself and waits for their x_on_done() calls, counted here. */
static __thread http_transport *in_done_of; /* this thread is in its x_on_done() */

static void x_on_done(void *user, mcp_status st, const char *message, bool not_sent) {
  exchange *x = user;
  http_transport *t = x->t;
  http_transport *outer = in_done_of;
  in_done_of = t;
  pthread_mutex_lock(&t->lock);
  t->in_done++;
  if (x->ended_by_close && st == MCP_ECANCELLED) {
    st = MCP_ECLOSED;
    message = "client closed";
  }
  pthread_mutex_unlock(&t->lock);
  x_on_done_locked_out(x, st, message, not_sent); /* may free x */
  pthread_mutex_lock(&t->lock);
  t->in_done--;
  pthread_cond_broadcast(&t->cond);
  pthread_mutex_unlock(&t->lock);
  in_done_of = outer;
}

static void x_on_done_locked_out(exchange *x, mcp_status st, const char *message, bool not_sent) {
  http_transport *t = x->t;
  x->not_sent = not_sent;
  if (x->sse && st == MCP_OK) mcp__sse_finish(x->sse);
  pthread_mutex_lock(&t->lock);
  unlink_live_locked(t, x);
  bool closing = t->closing;
  pthread_mutex_unlock(&t->lock);

  if (x->oom && (x->kind == X_REQUEST || x->kind == X_RESUME) && !x->got_response &&
      !x->abandoned && !closing) {
    fail_request(t, x, MCP_ENOMEM, 0, "out of memory reading the response");
    return;
  }
  if (auth_challenge(t, x, st, closing)) return;
  switch (x->kind) {
  case X_REQUEST:
  case X_RESUME: request_done(t, x, st, message, closing); return;
  case X_MESSAGE: message_done(t, x, st, message, closing); return;
  case X_LISTEN: listen_done(t, x, st); return;
  case X_REINIT:
  case X_REINIT_NOTE: reinit_done(t, x, st, message); return;
  case X_DELETE: session_delete_done(t, x); return;
  case X_LEGACY_GET: legacy_get_done(t, x, st, message, closing); return;
  }
}

/* ---- legacy ---------------------------------------------------------------- */

static void legacy_endpoint(http_transport *t, const char *data, size_t len) {
  char *ref = mcp__strndup(data, len);
  mcp_url *ep = NULL;
  mcp_error err = MCP_ERROR_INIT;
  if (!ref || mcp__url_resolve(t->url, ref, &ep, &err) != MCP_OK ||
      !mcp__url_origin_equal(t->url, ep)) {
    char q[MCP_QUOTE_SHORT];
    char *msg = mcp__asprintf("legacy SSE endpoint \"%s\" rejected: %s",
                              mcp__quote(q, sizeof(q), data, len),
                              ep ? "different origin" : (err.message ? err.message : "invalid"));
    upcall_error(t, MCP_EPROTO, msg ? msg : "legacy SSE endpoint rejected");
    mcp__free(msg);
    mcp__url_free(ep);
    mcp__free(ref);
    mcp_error_clear(&err);
    return;
  }
  mcp__free(ref);
  pthread_mutex_lock(&t->lock);
  mcp__url_free(t->endpoint);
  t->endpoint = ep;
  t->legacy_stream_up = true;
  char *init = t->pending_legacy_init;
  size_t init_len = t->pending_legacy_len;
  int64_t init_id = t->pending_legacy_id;
  t->pending_legacy_init = NULL;
  exchange *x = init ? exchange_new(t, X_REQUEST, init_id, init, init_len) : NULL;
  mcp_status st = MCP_OK;
  if (x) {
    x->flags = MCP_SEND_INITIALIZE;
    st = submit_locked(t, x, NULL, &err);
  }
  pthread_cond_broadcast(&t->cond);
  pthread_mutex_unlock(&t->lock);
  if (init && (!x || st != MCP_OK)) {
    if (x) exchange_free(x);
    upcall_request_error(t, init_id, st ? st : MCP_ENOMEM, 0,
                         err.message ? err.message : "out of memory", 0);
  }
  mcp__free(init);
  mcp_error_clear(&err);
}

/* ------------------------------------------------------------------------ */
/* Re-initialize and the listener                                            */
/* ------------------------------------------------------------------------ */

static void start_reinit_locked(http_transport *t) {
  if (t->reinit_running) return;
  exchange *x = t->init_body ? exchange_new(t, X_REINIT, t->init_id, t->init_body, t->init_len)
                             : NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp__free(t->session);
  t->session = NULL;
  t->session_gen++;
  if (x && submit_locked(t, x, NULL, &err) == MCP_OK) {
    t->reinit_running = true;
    mcp_error_clear(&err);
    return;
  }
  exchange_free(x);
  mcp_error_clear(&err);
  /* Could not even start: the waiting requests fail when their turn comes
   * (nothing runs them), so fail them now through a job-less path. */
  exchange *waiting = t->reinit_wait;
  t->reinit_wait = NULL;
  pthread_mutex_unlock(&t->lock);
  while (waiting) {
    exchange *w = waiting;
    waiting = w->next;
    w->not_sent = true;
    fail_request(t, w, MCP_ECLOSED, 404, "session expired and re-initialize could not start");
  }
  pthread_mutex_lock(&t->lock);
}

static void start_listener_locked(http_transport *t, int64_t delay_ms) {
  if (t->closing || t->listener || t->listener_disabled || t->no_listener || !t->ready ||
      t->modern || t->kind == MCP_HTTP_TRANSPORT_LEGACY_SSE)
    return;
  if (delay_ms > 0) {
    schedule_locked(t, delay_ms, listener_job, NULL);
    return;
  }
  exchange *x = exchange_new(t, X_LISTEN, 0, NULL, 0);
  mcp_error err = MCP_ERROR_INIT;
  if (x && submit_locked(t, x, t->listener_last_id, &err) == MCP_OK) t->listener = x;
  else exchange_free(x);
  mcp_error_clear(&err);
}

/* ------------------------------------------------------------------------ */
/* Transport ops                                                             */
/* ------------------------------------------------------------------------ */

/* Waits (bounded) until the legacy endpoint is known.  Caller holds lock. */
static mcp_status wait_endpoint_locked(http_transport *t, int64_t deadline, mcp_error *err) {
  while (!t->endpoint && !t->closing) {
    if (mcp__now_ms() >= deadline)
      return mcp__error_set(err, MCP_ETIMEDOUT, "legacy SSE server sent no endpoint event in time");
    bool stream_live = false;
    for (exchange *x = t->live; x; x = x->next)
      if (x->kind == X_LEGACY_GET) stream_live = true;
    if (!stream_live) return mcp__error_set(err, MCP_ECLOSED, "legacy SSE stream closed");
    struct timespec ts = mcp__ts_from_ms(deadline);
    pthread_cond_timedwait(&t->cond, &t->lock, &ts);
  }
  return t->closing ? mcp__error_set(err, MCP_ECLOSED, "transport closed") : MCP_OK;
}

static mcp_status http_send_request(mcp_transport *base, int64_t id, unsigned flags,
                                    const char *data, size_t len, int64_t deadline,
                                    mcp_error *err) {
  http_transport *t = (http_transport *)base;
  if (memchr(data, '\n', len)) return mcp__error_set(err, MCP_EINVAL, "message contains a newline");
  exchange *x = exchange_new(t, id ? X_REQUEST : X_MESSAGE, id, data, len);
  if (!x) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  x->flags = flags & MCP_SEND_INITIALIZE;
  /* t->modern changes only on the connecting thread between requests
   * (set_era), which happens before any other thread sends. */
  if (t->modern) {
    mcp_status hs = mcp__era_request_headers(data, len, &x->h_method, &x->h_name);
    if (hs != MCP_OK) {
      exchange_free(x);
      mcp__error_set(err, hs,
                     hs == MCP_ENOMEM ? "out of memory"
                                      : "request has no method or name for its headers");
      mcp__error_mark_not_sent(err);
      return hs;
    }
  }
  /* A tools/call of a tool with x-mcp-header annotations: its arguments
   * parsed (only then) for the Mcp-Param-* headers. */
  json_object *call = NULL, *tool_name = NULL, *args = NULL;
  if (x->h_method && strcmp(x->h_method, "tools/call") == 0 && atomic_load(&t->has_xhdr)) {
    json_object *params = NULL;
    call = mcp__jsonrpc_parse(data, len, NULL);
    if (call && json_object_object_get_ex(call, "params", &params) &&
        json_object_object_get_ex(params, "name", &tool_name) &&
        json_object_is_type(tool_name, json_type_string))
      json_object_object_get_ex(params, "arguments", &args);
    else tool_name = NULL;
  }
  pthread_mutex_lock(&t->lock);
  mcp_status st = MCP_OK;
  if (t->closing || t->close_reported) {
    st = mcp__error_set(err, MCP_ECLOSED, "transport closed");
    goto out;
  }
  const mcp_xhdr_tool *xt = tool_name
                                ? mcp__xhdr_table_find(t->xhdr, json_object_get_string(tool_name))
                                : NULL;
  if (xt &&
      mcp__xhdr_values(xt, args, x->h_param_names, x->h_param_values, &x->h_params) != MCP_OK) {
    st = mcp__error_set(err, MCP_ENOMEM, "out of memory");
    goto out;
  }
  if (flags & MCP_SEND_INITIALIZE) {
    char *copy = mcp__strndup(data, len);
    if (!copy) {
      st = mcp__error_set(err, MCP_ENOMEM, "out of memory");
      goto out;
    }
    mcp__free(t->init_body);
    t->init_body = copy;
    t->init_len = len;
    t->init_id = id;
  }
  if (t->kind == MCP_HTTP_TRANSPORT_LEGACY_SSE) {
    if (!t->endpoint && (flags & MCP_SEND_INITIALIZE) && !t->legacy_stream_up) {
      /* Open the legacy stream; the initialize POST follows its endpoint. */
      exchange *g = exchange_new(t, X_LEGACY_GET, 0, NULL, 0);
      if (!g) {
        st = mcp__error_set(err, MCP_ENOMEM, "out of memory");
        goto out;
      }
      t->pending_legacy_init = x->body;
      t->pending_legacy_len = x->body_len;
      t->pending_legacy_id = id;
      x->body = NULL;
      if ((st = submit_locked(t, g, NULL, err)) != MCP_OK) {
        t->pending_legacy_init = NULL;
        exchange_free(g);
        goto out;
      }
      exchange_free(x);
      x = NULL;
      goto out;
    }
    if (!t->endpoint && (st = wait_endpoint_locked(t, deadline, err)) != MCP_OK) goto out;
  }
  if (t->reinit_running && x->kind == X_REQUEST && !(flags & MCP_SEND_INITIALIZE)) {
    /* The session is being re-initialized (no Mcp-Session-Id to send):
     * wait with the requests that got the 404, and go out with the new
     * session, or fail with them. */
    x->next = t->reinit_wait;
    t->reinit_wait = x;
    x = NULL;
    goto out;
  }
  st = submit_locked(t, x, NULL, err);
  if (st == MCP_OK) x = NULL;
out:
  pthread_mutex_unlock(&t->lock);
  json_object_put(call);
  exchange_free(x);
  if (st != MCP_OK) mcp__error_mark_not_sent(err); /* nothing was submitted */
  return st;
}

static void http_set_tool_headers(mcp_transport *base, mcp_xhdr_table *table) {
  http_transport *t = (http_transport *)base;
  pthread_mutex_lock(&t->lock);
  mcp_xhdr_table *old = t->xhdr;
  t->xhdr = table;
  atomic_store(&t->has_xhdr, table && table->n > 0);
  pthread_mutex_unlock(&t->lock);
  mcp__xhdr_table_free(old);
}

static void http_auth_context(mcp_transport *base, char *out, size_t n) {
  http_transport *t = (http_transport *)base;
  const char *a = NULL;
  pthread_mutex_lock(&t->lock);
  a = t->bearer;
  for (size_t i = 0; !a && i < t->nheaders; i++)
    if (name_is(t->headers[i].name, "authorization")) a = t->headers[i].value;
  mcp__sha256_auth_context(a, out, n);
  pthread_mutex_unlock(&t->lock);
}

static mcp_status http_send(mcp_transport *base, const char *data, size_t len, int64_t deadline,
                            mcp_error *err) {
  return http_send_request(base, 0, 0, data, len, deadline, err);
}

static void http_ready(mcp_transport *base, const char *version) {
  http_transport *t = (http_transport *)base;
  pthread_mutex_lock(&t->lock);
  mcp__free(t->version);
  t->version = mcp__strdup(version);
  t->ready = true;
  start_listener_locked(t, 0);
  pthread_mutex_unlock(&t->lock);
}

static mcp_status http_set_era(mcp_transport *base, const char *modern_version) {
  http_transport *t = (http_transport *)base;
  char *v = modern_version ? mcp__strdup(modern_version) : NULL;
  if (modern_version && !v) return MCP_ENOMEM;
  pthread_mutex_lock(&t->lock);
  mcp__free(t->modern);
  t->modern = v;
  pthread_mutex_unlock(&t->lock);
  return MCP_OK;
}

static void http_abandon(mcp_transport *base, int64_t id) {
  http_transport *t = (http_transport *)base;
  uint64_t ids[8];
  size_t n = 0;
  pthread_mutex_lock(&t->lock);
  for (exchange *x = t->live; x; x = x->next) {
    if ((x->kind == X_REQUEST || x->kind == X_RESUME) && x->id == id) {
      x->abandoned = true;
      if (n < 8) ids[n++] = x->http_id;
    }
  }
  for (exchange *x = t->reinit_wait; x; x = x->next)
    if (x->id == id) x->abandoned = true;
  pthread_mutex_unlock(&t->lock);
  for (size_t i = 0; i < n; i++) mcp__http_cancel(t->hc, ids[i]);
}

/* Cancels every live exchange of |t| and waits until none is live and no
 * x_on_done() runs (a callback may start another: cancelled next round). */
static void end_exchanges(http_transport *t) {
  /* Closed from inside one of its own callbacks: do not wait for that one. */
  int self = in_done_of == t ? 1 : 0;
  pthread_mutex_lock(&t->lock);
  while (t->hc && (t->live || t->in_done > self)) {
    uint64_t ids[32];
    size_t n = 0;
    for (exchange *x = t->live; x && n < 32; x = x->next) {
      if (x->ended_by_close) continue;
      x->ended_by_close = true;
      ids[n++] = x->http_id;
    }
    if (n) {
      pthread_mutex_unlock(&t->lock);
      for (size_t i = 0; i < n; i++) mcp__http_cancel(t->hc, ids[i]);
      pthread_mutex_lock(&t->lock);
      continue;
    }
    pthread_cond_wait(&t->cond, &t->lock);
  }
  pthread_mutex_unlock(&t->lock);
}

static void http_close(mcp_transport *base) {
  http_transport *t = (http_transport *)base;
  pthread_mutex_lock(&t->lock);
  if (t->close_started) {
    /* Another caller is closing (it may be waiting for the DELETE, with
     * the lock released): wait for it, never join the threads twice. */
    while (!t->close_done) pthread_cond_wait(&t->cond, &t->lock);
    pthread_mutex_unlock(&t->lock);
    return;
  }
  t->close_started = true;
  /* DELETE the session first (best effort, bounded), while intake is open
   * for it alone. */
  if (t->session && t->kind != MCP_HTTP_TRANSPORT_LEGACY_SSE && t->hc) {
    exchange *d = exchange_new(t, X_DELETE, 0, NULL, 0);
    mcp_error err = MCP_ERROR_INIT;
    if (d && submit_locked(t, d, NULL, &err) == MCP_OK) {
      int64_t deadline = mcp__now_ms() + DELETE_WAIT_MS;
      while (!t->delete_done && mcp__now_ms() < deadline) {
        struct timespec ts = mcp__ts_from_ms(deadline);
        pthread_cond_timedwait(&t->cond, &t->lock, &ts);
      }
    } else {
      exchange_free(d);
    }
    mcp_error_clear(&err);
  }
  t->closing = true;
  t->timer_stop = true;
  t->auth_stop = true;
  pthread_cond_broadcast(&t->cond);
  pthread_cond_broadcast(&t->auth_cond);
  exchange *waiting = t->reinit_wait;
  t->reinit_wait = NULL;
  bool timer_running = t->timer_running; /* none starts once closing */
  pthread_mutex_unlock(&t->lock);
  if (t->oauth) mcp__oauth_cancel(t->oauth);
  if (timer_running) pthread_join(t->timer, NULL);
  if (t->auth_started) pthread_join(t->auth_thread, NULL);
  pthread_mutex_lock(&t->lock);
  t->auth_started = false;
  exchange *parked = t->auth_wait;
  t->auth_wait = NULL;
  pthread_mutex_unlock(&t->lock);
  while (parked) {
    exchange *x = parked;
    parked = x->next;
    auth_fail(t, x, MCP_ECLOSED, 0, "connection closed");
  }
  /* Jobs never run: their exchanges are requests to fail. */
  pthread_mutex_lock(&t->lock);
  timer_job *jobs = t->jobs;
  t->jobs = NULL;
  t->timer_started = false;
  pthread_mutex_unlock(&t->lock);
  while (jobs) {
    timer_job *j = jobs;
    jobs = j->next;
    if (j->fn == resume_job) fail_request(t, j->arg, MCP_ECLOSED, 0, "connection closed");
    mcp__free(j);
  }
  while (waiting) {
    exchange *w = waiting;
    waiting = w->next;
    w->not_sent = true; /* waiting for the re-initialize: not sent again */
    fail_request(t, w, MCP_ECLOSED, 0, "connection closed");
  }
  /* The connection layer is shared: end our exchanges (ECLOSED), wait
   * for their callbacks, then let go of it. */
  end_exchanges(t);
  mcp__http_pool_put(t->hc);
  t->hc = NULL;
  report_close(t, MCP_ECLOSED, "closed by client");
  pthread_mutex_lock(&t->lock);
  t->close_done = true;
  pthread_cond_broadcast(&t->cond);
  pthread_mutex_unlock(&t->lock);
}

static void http_free(mcp_transport *base) {
  http_transport *t = (http_transport *)base;
  if (!t) return;
  http_close(base);
  for (size_t i = 0; i < t->nheaders; i++) {
    mcp__free((char *)t->headers[i].name);
    mcp__free((char *)t->headers[i].value);
  }
  mcp__free(t->headers);
  mcp__url_free(t->url);
  mcp__url_free(t->endpoint);
  mcp__free(t->session);
  mcp__free(t->modern);
  mcp__xhdr_table_free(t->xhdr);
  mcp__free(t->version);
  mcp__free(t->init_body);
  mcp__free(t->listener_last_id);
  mcp__free(t->pending_legacy_init);
  mcp__oauth_free(t->oauth);
  if (t->bearer) wipe_str(t->bearer);
  mcp__free(t->bearer);
  mcp__free(t->auth_www);
  pthread_cond_destroy(&t->auth_cond);
  pthread_cond_destroy(&t->cond);
  pthread_mutex_destroy(&t->lock);
  mcp__free(t);
}

static const mcp_transport_ops http_ops = {.send = http_send,
                                           .close = http_close,
                                           .free = http_free,
                                           .send_request = http_send_request,
                                           .ready = http_ready,
                                           .abandon = http_abandon,
                                           .set_era = http_set_era,
                                           .set_tool_headers = http_set_tool_headers,
                                           .auth_context = http_auth_context};

/* Keeps the configured extra headers but those the transport sets itself,
 * names in lower case.  False when out of memory. */
static bool copy_headers(http_transport *t, const mcp_server_settings *set) {
  if (set->nheaders) {
    t->headers = mcp__calloc(set->nheaders, sizeof(*t->headers));
    if (!t->headers) return false;
  }
  for (size_t i = 0; i < set->nheaders; i++) {
    if (reserved_header(set->headers[i].name)) continue; /* ours alone */
    char *name = mcp__strdup(set->headers[i].name);
    char *value = mcp__strdup(set->headers[i].value);
    if (!name || !value) {
      mcp__free(name);
      mcp__free(value);
      return false;
    }
    for (char *p = name; *p; p++)
      if (*p >= 'A' && *p <= 'Z') *p = (char)(*p - 'A' + 'a');
    t->headers[t->nheaders++] = (mcp_http_header){name, value};
  }
  return true;
}

mcp_status mcp__http_transport_new(const mcp_http_transport_config *cfg,
                                   const mcp_transport_callbacks *cb, void *user,
                                   mcp_transport **out, mcp_error *err) {
  *out = NULL;
  const mcp_server_settings *set = cfg ? cfg->settings : NULL;
  if (!set || !set->url || !cb || !cb->on_message || !cb->on_close)
    return mcp__error_set(err, MCP_EINVAL, "invalid argument");
  for (size_t i = 0; i < set->nheaders; i++) {
    const mcp_kv *h = &set->headers[i];
    if (!h->name || !*h->name || !h->value || has_ctl(h->name) || has_ctl(h->value) ||
        strchr(h->name, ':') || strchr(h->name, ' '))
      return mcp__error_set(err, MCP_EINVAL, "invalid header \"%s\" (CR, LF or bad name)",
                            h->name ? h->name : "");
  }
  http_transport *t = mcp__calloc(1, sizeof(*t));
  if (!t) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  t->base.ops = &http_ops;
  t->cb = cb;
  t->user = user;
  t->kind = set->http_kind;
  t->max_message = set->max_message ? set->max_message : DEFAULT_MAX_MESSAGE;
  t->max_resume = cfg->max_resume_attempts > 0 ? cfg->max_resume_attempts : 5;
  t->no_listener = set->no_get_listener;
  pthread_mutex_init(&t->lock, NULL);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&t->cond, &ca);
  pthread_condattr_destroy(&ca);
  pthread_cond_init(&t->auth_cond, NULL);
  mcp_status st = mcp__url_parse(set->url, &t->url, err);
  if (st != MCP_OK) goto fail;
  if (cfg->oauth) {
    if ((st = mcp__oauth_new(cfg->oauth, set->url, &set->tls, &t->oauth, err)) != MCP_OK) goto fail;
    mcp__oauth_set_person_hook(t->oauth, auth_person, t);
    t->bearer = mcp__oauth_authorization(t->oauth); /* from the token store */
  }
  if (!copy_headers(t, set)) goto nomem;
  mcp_http_config hcfg = {0};
  hcfg.scheme = t->url->scheme;
  hcfg.host = t->url->host;
  hcfg.port = t->url->port;
  hcfg.mode = set->http_version;
  hcfg.tls = set->tls; /* borrowed for the call */
  hcfg.connect_timeout_ms = cfg->connect_timeout_ms;
  if ((st = mcp__http_pool_get(&hcfg, &t->hc, err)) != MCP_OK) goto fail;
  t->timer_started = true;
  *out = &t->base;
  return MCP_OK;
nomem:
  st = mcp__error_set(err, MCP_ENOMEM, "out of memory");
fail:
  /* Not started: report no close for a transport that never opened. */
  t->close_reported = true;
  http_free(&t->base);
  return st;
}

char *mcp__http_transport_session(mcp_transport *base) {
  http_transport *t = (http_transport *)base;
  pthread_mutex_lock(&t->lock);
  char *s = t->session ? mcp__strdup(t->session) : NULL;
  pthread_mutex_unlock(&t->lock);
  return s;
}

bool mcp__http_transport_stall(mcp_transport *base, char *buf, size_t n) {
  http_transport *t = (http_transport *)base;
  return t->hc && mcp__http_client_stall(t->hc, buf, n);
}

const char *mcp__http_transport_protocol(mcp_transport *base) {
  http_transport *t = (http_transport *)base;
  const char *p = t->hc ? mcp__http_client_protocol(t->hc) : NULL;
  if (t->kind == MCP_HTTP_TRANSPORT_LEGACY_SSE) return "legacy-sse";
  return p;
}
