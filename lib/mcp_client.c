/* SPDX-License-Identifier: MIT */
/*
 * mcp_client.c: the MCP client.  Owns the lifecycle (initialize, version
 * negotiation, initialized), requests with timeout, cancel and progress,
 * notifications/cancelled, answers to server->client requests and the
 * dispatch of notifications.  Knows nothing of how bytes move: it talks to
 * an mcp_transport.
 *
 * Threads:
 *  - The transport's reader thread calls on_message/on_close.  It parses,
 *    completes pending entries and posts everything that runs host code to
 *    the client's lane on the worker pool.  It never sends (a full pipe in
 *    both directions would deadlock) and never runs host code.
 *  - Host threads call the public functions concurrently.
 *  - The lane runs host callbacks one at a time, in arrival order.
 *
 * json-c trees are never shared between threads: a subtree handed to another
 * thread is first detached from its parent (so its refcount has one owner).
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mcp_cancel.h"
#include "mcp_client.h"
#include "mcp_era.h"
#include "mcp_mrtr.h"
#include "mcp_xhdr.h"
#include "mcp_jscan.h"
#include "mcp_jsonrpc.h"
#include "mcp_listen.h"
#include "mcp_ttl.h"
#include "mcp_cache.h"
#include "mcp_oauth.h"
#include "mcp_pending.h"
#include "mcp_request.h"
#include "mcp_tasks.h"
#include "mcp_transport.h"
#include "mcp_url.h"

const char *const mcp__protocol_versions[] = {"2025-11-25", "2025-06-18", "2025-03-26", NULL};

#define DEFAULT_TIMEOUT_MS 30000
#define DEFAULT_MAX_MESSAGE (16u * 1024 * 1024)
/*
 * Limits of one *_list call as a whole, against a server that pages without
 * end or sends huge pages: the pages followed, the items and the bytes of
 * the list's JSON text.  A list past one of them fails with MCP_ETOOBIG.
 * 1000 pages is ten times what the largest servers seen need (they page by
 * 50 to 100 items); 100000 items and 64 MiB hold any real tool, resource or
 * prompt list several times over (a tool with a rich schema is 1-5 KB), and
 * keep a host's memory for a list bounded: pages are turned into text as
 * they arrive, so only one page's tree is held at a time.
 */
#define DEFAULT_LIST_MAX_PAGES 1000
#define DEFAULT_LIST_MAX_ITEMS 100000
#define DEFAULT_LIST_MAX_BYTES ((size_t)64 * 1024 * 1024)
/*
 * Server messages queued for the host's callbacks (notifications, requests
 * with a host handler, progress), per server.  One lane runs them one at a
 * time; a healthy server's bursts (progress, log messages, updates) stay
 * far below this, while a server this far ahead of the host is flooding.
 * Beyond it notifications are dropped and requests answered -32000 at once.
 * About 1 KiB each for small messages; the bytes are bounded separately by
 * max_message.  mcp_client_options_set_max_queued_messages() changes it.
 */
#define DEFAULT_MAX_QUEUED 1024
/* Log lines queued for the host's log callback. */
#define MAX_QUEUED_LOGS 256
/* The JSON-RPC error for a server request refused beyond the bound. */
#define BUSY_CODE (-32000)
#define BUSY_MESSAGE "client busy: too many pending requests"
/* JSON handed to hosts: compact, and '/' not escaped (json-c escapes it by
 * default, which is valid but defeats hosts matching URIs as text). */
#define JSON_TEXT_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

/* A server->client request being handled, for inbound cancellation. */
typedef struct server_req {
  char *id_text; /* compact JSON of its id */
  bool cancelled;
  struct server_req *next;
} server_req;

/* A modern task being waited on (mcp_tasks.c), and the last state the
 * server pushed for it (notifications/tasks), NULL when none is waiting. */
typedef struct task_watch {
  char *id;
  char *pushed;
} task_watch;

struct mcp_client {
  mcp_client_options *opts; /* own copy; immutable after connect */
  mcp_client_hooks hooks;
  mcp_transport *t;
  mcp_pending *pending;
  mcp_workers *workers; /* own reference */
  mcp_lane *lane;
  char *protocol_version; /* set once during connect */
  char *server_info;      /* initialize or server/discover result JSON; set during connect */
  /* 2025-11-25 tasks (mcp_tasks.c): whether the server offers task
   * tools/call (0: not yet read from server_info, 1: no, 2: yes), and each
   * tool's taskSupport as "name\tsupport\n" lines from the last tools/list
   * read for it (NULL: none; a tools list_changed drops it; lock). */
  atomic_int legacy_tasks;
  atomic_uint list_public; /* bit per ttl slot: its last complete list was public */
  char *task_tools;
  bool modern; /* 2026-07-28: every request carries |meta| (set during connect) */
  char *meta;  /* modern _meta members (mcp_era.h), or NULL */
  size_t meta_len;
  atomic_bool open;
  atomic_bool lost;     /* a server message was lost for want of memory */
  atomic_bool probing;  /* connect is probing the era: a close is no loss */
  pthread_mutex_t lock; /* guards close_message and sreqs */
  char *close_message;
  server_req *sreqs;
  /* Statistics. */
  atomic_uint_fast64_t n_sent, n_responses, n_unknown, n_late, n_proto, n_oversize, n_notifications,
      n_server_requests, n_in_dropped, n_out_dropped;
  /* Inbound bound (dispatch side runs on one upcall thread at a time). */
  size_t max_queued;        /* immutable after connect */
  atomic_size_t inq_n;      /* inbound items queued or running on the lane */
  atomic_size_t inq_bytes;  /* their message bytes */
  atomic_size_t logq_n;     /* log items queued */
  atomic_bool in_overflow;  /* dropping inbound messages (logged once) */
  atomic_bool out_overflow; /* the server is not reading (logged once) */
  atomic_uint lc_queued;    /* list_changed kinds queued (coalesced) */
  /* Host threads inside the client's functions; mcp_client_free() ends
   * their calls and waits for them to leave (client_enter). */
  pthread_mutex_t calls_mu;
  pthread_cond_t calls_cv; /* the last caller left while freeing */
  /* Broadcast (under lock) when a listen is acknowledged or ends: a
   * subscribe waits for its listen's acknowledgement. */
  pthread_cond_t listen_cv;
  int64_t listen_ended; /* the id of the listen that ended last (lock) */
  /* Host threads inside (client_enter), times 2, plus CALLS_FREEING once
   * free began.  Changed without calls_mu while the bit is clear; once it
   * is set, only under calls_mu (so free sees the last leave). */
  atomic_size_t calls;
  /* subscriptions/listen on a modern connection ("Listen" below). */
  unsigned listen_kinds;     /* MCP_LISTEN_* asked for; 0: none (set at connect) */
  int64_t listen_id;         /* the open listen's request id, 0: none (lock) */
  int64_t listen_old;        /* the last one that ended: its messages reach the host while
                                |listen_old_live|, then are dropped quietly (lock) */
  bool listen_old_live;      /* a change replaced listen_old and its successor is not
                                acknowledged yet: set before the old one is cancelled, so no
                                moment between the two drops what the server sent on it (lock) */
  int64_t listen_acked_at;   /* when listen_id was acknowledged (ms), 0: not yet (lock) */
  unsigned listen_honoured;  /* what that acknowledgement honoured (lock) */
  int listen_failures;       /* ends in a row without a listen that lasted (lane) */
  atomic_int listen_entries; /* pending entries of the listen and its re-open timer */
  /* Resource subscriptions (mcp_client_subscribe_resource): on a modern
   * connection the URIs the listen carries.  |subs_mu| serialises every
   * decision to open a listen and guards |subs|; taken before |lock|. */
  pthread_mutex_t subs_mu;
  char **subs;
  size_t nsubs;
  atomic_bool sub_warned; /* an unknown subscription id was logged */
  atomic_bool sub_route;  /* modern: notifications are routed by subscription id (the
                                reader reads it; |modern| is the connecting thread's) */
  bool listen_was_acked;  /* a listen was acknowledged before the open one (lock) */
  /* Tasks being waited on, carried by the listen's "taskIds": the set
   * changes under subs_mu then lock; |pushed| under lock. */
  task_watch *watch;
  size_t nwatch;
  /* Task waiters (mcp__client_task_sleep) sleep on it under |lock|;
   * broadcast under |lock| on a push, a close and their token firing. */
  pthread_cond_t task_cv;
  mcp_ttl *ttl; /* SEP-2549 cached lists ("Cached lists" below) */
};

/* ------------------------------------------------------------------------ */
/* Options                                                                   */
/* ------------------------------------------------------------------------ */

MCP_EXTERN mcp_client_options *mcp_client_options_new(void) {
  mcp_client_options *o = mcp__calloc(1, sizeof(*o));
  if (!o) return NULL;
  o->s.timeout_ms = DEFAULT_TIMEOUT_MS;
  o->s.max_message = DEFAULT_MAX_MESSAGE;
  o->list_max_pages = DEFAULT_LIST_MAX_PAGES;
  o->list_max_items = DEFAULT_LIST_MAX_ITEMS;
  o->list_max_bytes = DEFAULT_LIST_MAX_BYTES;
  o->max_queued = DEFAULT_MAX_QUEUED;
  return o;
}

MCP_EXTERN void mcp_client_options_set_max_queued_messages(mcp_client_options *o, size_t n) {
  if (o) o->max_queued = n ? n : DEFAULT_MAX_QUEUED;
}

MCP_EXTERN void mcp_client_options_free(mcp_client_options *o) {
  if (!o) return;
  mcp__settings_clear(&o->s);
  mcp__free(o->client_name);
  mcp_oauth_options_free(o->oauth);
  mcp__free(o->client_version);
  for (size_t i = 0; i < o->nhandlers; i++) mcp__free(o->handlers[i].method);
  mcp__free(o->handlers);
  for (size_t i = 0; i < o->ncaps; i++) {
    mcp__free(o->caps[i].name);
    mcp__free(o->caps[i].json);
  }
  mcp__free(o->caps);
  mcp__free(o);
}

#define set_str mcp__settings_set_str

MCP_EXTERN mcp_status mcp_client_options_set_stdio(mcp_client_options *o, const char *const *argv) {
  if (!o || !argv || !argv[0] || !argv[0][0]) return MCP_EINVAL;
  return mcp__settings_set_argv(&o->s, argv);
}

MCP_EXTERN mcp_status mcp_client_options_set_http(mcp_client_options *o, const char *url,
                                                  mcp_http_transport kind) {
  if (!o || !url || kind < MCP_HTTP_TRANSPORT_AUTO || kind > MCP_HTTP_TRANSPORT_LEGACY_SSE)
    return MCP_EINVAL;
  mcp_status st = mcp__url_check(url);
  if (st == MCP_OK && (st = mcp__settings_set_url(&o->s, url)) == MCP_OK) o->s.http_kind = kind;
  return st;
}

MCP_EXTERN mcp_status mcp_client_options_set_protocol(mcp_client_options *o, const char *protocol) {
  mcp_era_mode mode;
  const char *pinned = NULL;
  if (!o || !mcp__era_parse_mode(protocol, &mode, &pinned)) return MCP_EINVAL;
  o->s.protocol = mcp__era_mode_name(mode, pinned);
  return MCP_OK;
}

MCP_EXTERN void mcp_client_options_set_http_version(mcp_client_options *o, mcp_http_version v) {
  if (o && v >= MCP_HTTP_VERSION_AUTO && v <= MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE)
    o->s.http_version = v;
}

MCP_EXTERN mcp_status mcp_client_options_add_header(mcp_client_options *o, const char *name,
                                                    const char *value) {
  if (!o) return MCP_EINVAL;
  return mcp__settings_add_header(&o->s, name, value);
}

MCP_EXTERN mcp_status mcp_client_options_set_ca(mcp_client_options *o, const char *ca_file,
                                                const char *ca_dir) {
  if (!o) return MCP_EINVAL;
  mcp_status st = set_str(&o->s.tls.ca_file, ca_file);
  return st ? st : set_str(&o->s.tls.ca_dir, ca_dir);
}

MCP_EXTERN mcp_status mcp_client_options_set_client_cert(mcp_client_options *o,
                                                         const char *cert_file,
                                                         const char *key_file) {
  if (!o || !cert_file != !key_file) return MCP_EINVAL;
  mcp_status st = set_str(&o->s.tls.client_cert, cert_file);
  return st ? st : set_str(&o->s.tls.client_key, key_file);
}

MCP_EXTERN void mcp_client_options_set_insecure(mcp_client_options *o, bool insecure) {
  if (o) o->s.tls.insecure = insecure;
}

MCP_EXTERN void mcp_client_options_set_http_listener(mcp_client_options *o, bool enabled) {
  if (o) o->s.no_get_listener = !enabled;
}

MCP_EXTERN mcp_status mcp_client_options_set_cwd(mcp_client_options *o, const char *cwd) {
  if (!o) return MCP_EINVAL;
  return set_str(&o->s.cwd, cwd);
}

MCP_EXTERN mcp_status mcp_client_options_set_env(mcp_client_options *o, const char *name,
                                                 const char *value) {
  if (!o) return MCP_EINVAL;
  return mcp__settings_set_env(&o->s, name, value);
}

MCP_EXTERN mcp_status mcp_client_options_set_env_inherit(mcp_client_options *o,
                                                         mcp_env_inherit policy) {
  if (!o || policy < MCP_ENV_INHERIT_UNSET || policy > MCP_ENV_INHERIT_NONE) return MCP_EINVAL;
  o->s.env_inherit = policy;
  return MCP_OK;
}

MCP_EXTERN mcp_status mcp_client_options_set_client_info(mcp_client_options *o, const char *name,
                                                         const char *version) {
  if (!o || !name || !version) return MCP_EINVAL;
  mcp_status st = set_str(&o->client_name, name);
  return st ? st : set_str(&o->client_version, version);
}

MCP_EXTERN void mcp_client_options_set_timeout_ms(mcp_client_options *o, int64_t ms) {
  if (o) o->s.timeout_ms = ms < 0 ? 0 : ms;
}

MCP_EXTERN void mcp_client_options_set_max_message_bytes(mcp_client_options *o, size_t bytes) {
  if (o) o->s.max_message = bytes ? bytes : DEFAULT_MAX_MESSAGE;
}

MCP_EXTERN void mcp_client_options_set_list_limits(mcp_client_options *o, size_t max_pages,
                                                   size_t max_items, size_t max_bytes) {
  if (!o) return;
  o->list_max_pages = max_pages ? max_pages : DEFAULT_LIST_MAX_PAGES;
  o->list_max_items = max_items ? max_items : DEFAULT_LIST_MAX_ITEMS;
  o->list_max_bytes = max_bytes ? max_bytes : DEFAULT_LIST_MAX_BYTES;
}

MCP_EXTERN void mcp_client_options_set_log(mcp_client_options *o, mcp_log_fn fn, void *user) {
  if (!o) return;
  o->log.fn = fn;
  o->log.user = user;
}

MCP_EXTERN void mcp_client_options_set_notification_handler(mcp_client_options *o,
                                                            mcp_notification_fn fn, void *user) {
  if (!o) return;
  o->notify_fn = fn;
  o->notify_user = user;
}

MCP_EXTERN mcp_status mcp_client_options_set_request_handler(mcp_client_options *o,
                                                             const char *method, mcp_request_fn fn,
                                                             void *user) {
  if (!o || !method || !*method) return MCP_EINVAL;
  for (size_t i = 0; i < o->nhandlers; i++) {
    if (strcmp(o->handlers[i].method, method) == 0) {
      if (!fn) { /* removal */
        mcp__free(o->handlers[i].method);
        o->handlers[i] = o->handlers[--o->nhandlers];
        return MCP_OK;
      }
      o->handlers[i].fn = fn;
      o->handlers[i].user = user;
      return MCP_OK;
    }
  }
  if (!fn) return MCP_OK;
  mcp_handler_entry *h = mcp__reallocarray(o->handlers, o->nhandlers + 1, sizeof(*h));
  if (!h) return MCP_ENOMEM;
  o->handlers = h;
  char *m = mcp__strdup(method);
  if (!m) return MCP_ENOMEM;
  o->handlers[o->nhandlers++] = (mcp_handler_entry){m, fn, user};
  return MCP_OK;
}

MCP_EXTERN mcp_status mcp_client_options_set_capability(mcp_client_options *o, const char *name,
                                                        const char *json) {
  if (!o || !name || !*name || !json) return MCP_EINVAL;
  json_object *chk = mcp__jsonrpc_parse(json, strlen(json), NULL);
  bool ok = chk && json_object_is_type(chk, json_type_object);
  json_object_put(chk);
  if (!ok) return MCP_EINVAL;
  for (size_t i = 0; i < o->ncaps; i++)
    if (strcmp(o->caps[i].name, name) == 0) return set_str(&o->caps[i].json, json);
  mcp_capability_entry *c = mcp__reallocarray(o->caps, o->ncaps + 1, sizeof(*c));
  if (!c) return MCP_ENOMEM;
  o->caps = c;
  char *n = mcp__strdup(name), *j = mcp__strdup(json);
  if (!n || !j) {
    mcp__free(n);
    mcp__free(j);
    return MCP_ENOMEM;
  }
  o->caps[o->ncaps++] = (mcp_capability_entry){n, j};
  return MCP_OK;
}

MCP_EXTERN mcp_status mcp_client_options_set_extension(mcp_client_options *o, const char *id,
                                                       const char *settings_json) {
  if (!o || !id || !*id) return MCP_EINVAL;
  const char *sj = settings_json ? settings_json : "{}", *cur = "{}";
  for (size_t i = 0; i < o->ncaps; i++)
    if (strcmp(o->caps[i].name, "extensions") == 0) cur = o->caps[i].json;
  json_object *ext = mcp__jsonrpc_parse(cur, strlen(cur), NULL);
  json_object *val = mcp__jsonrpc_parse(sj, strlen(sj), NULL);
  mcp_status st = MCP_EINVAL;
  if (ext && val && json_object_is_type(val, json_type_object)) {
    st = MCP_ENOMEM;
    if (json_object_object_add(ext, id, json_object_get(val)) == 0) {
      const char *t = json_object_to_json_string_ext(ext, JSON_TEXT_FLAGS);
      st = t ? mcp_client_options_set_capability(o, "extensions", t) : MCP_ENOMEM;
    } else {
      json_object_put(val);
    }
  }
  json_object_put(val);
  json_object_put(ext);
  return st;
}

MCP_EXTERN mcp_status mcp_client_options_set_oauth(mcp_client_options *o,
                                                   const mcp_oauth_options *oauth) {
  if (!o) return MCP_EINVAL;
  mcp_oauth_options *copy = NULL;
  if (oauth && !(copy = mcp__oauth_options_dup(oauth))) return MCP_ENOMEM;
  mcp_oauth_options_free(o->oauth);
  o->oauth = copy;
  return MCP_OK;
}

mcp_client_options *mcp__client_options_dup(const mcp_client_options *o) {
  mcp_client_options *d = mcp_client_options_new();
  if (!d) return NULL;
  d->list_max_pages = o->list_max_pages;
  d->list_max_items = o->list_max_items;
  d->list_max_bytes = o->list_max_bytes;
  d->max_queued = o->max_queued;
  d->log = o->log;
  d->notify_fn = o->notify_fn;
  d->notify_user = o->notify_user;
  d->era_hint = o->era_hint;
  if (mcp__settings_overlay(&d->s, &o->s)) goto fail;
  if (set_str(&d->client_name, o->client_name) || set_str(&d->client_version, o->client_version))
    goto fail;
  for (size_t i = 0; i < o->nhandlers; i++)
    if (mcp_client_options_set_request_handler(d, o->handlers[i].method, o->handlers[i].fn,
                                               o->handlers[i].user))
      goto fail;
  for (size_t i = 0; i < o->ncaps; i++)
    if (mcp_client_options_set_capability(d, o->caps[i].name, o->caps[i].json)) goto fail;
  if (o->oauth && !(d->oauth = mcp__oauth_options_dup(o->oauth))) goto fail;
  return d;
fail:
  mcp_client_options_free(d);
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Call options                                                              */
/* ------------------------------------------------------------------------ */

MCP_EXTERN mcp_call_options *mcp_call_options_new(void) {
  mcp_call_options *o = mcp__calloc(1, sizeof(*o));
  if (o) o->timeout_ms = -1;
  return o;
}

MCP_EXTERN void mcp_call_options_free(mcp_call_options *o) {
  if (!o) return;
  mcp_cancel_unref(o->cancel);
  mcp__free(o);
}

MCP_EXTERN void mcp_call_options_set_timeout_ms(mcp_call_options *o, int64_t ms) {
  if (o) o->timeout_ms = ms;
}

MCP_EXTERN void mcp_call_options_set_cancel(mcp_call_options *o, mcp_cancel *c) {
  if (!o) return;
  mcp_cancel *old = o->cancel;
  o->cancel = mcp_cancel_ref(c);
  mcp_cancel_unref(old);
}

MCP_EXTERN void mcp_call_options_set_progress(mcp_call_options *o, mcp_progress_fn fn, void *user) {
  if (!o) return;
  o->progress = fn;
  o->progress_user = user;
}

MCP_EXTERN void mcp_call_options_set_reset_timeout_on_progress(mcp_call_options *o, bool reset,
                                                               int64_t max_total_ms) {
  if (!o) return;
  o->reset_on_progress = reset;
  o->max_total_ms = max_total_ms;
}

/* ------------------------------------------------------------------------ */
/* Callers inside                                                            */
/* ------------------------------------------------------------------------ */

/*
 * A host thread enters the client (false: it is being freed, and the
 * caller must return MCP_ECLOSED without touching it further) and leaves
 * it; free waits until every thread that entered has left.  Both are one
 * compare-and-swap on |calls| in the common case (two lock round trips
 * were a measurable share of a sequential call).  Once free has set
 * CALLS_FREEING (under calls_mu), a leave counts down under calls_mu and
 * broadcasts, and touches the client last there, before free, which waits
 * under calls_mu for the count to reach 0, releases anything.  A leave
 * that swapped while the bit was clear touches nothing afterwards.
 */
#define CALLS_FREEING ((size_t)1)
#define CALLS_ONE ((size_t)2)

static bool client_enter(mcp_client *c) {
  size_t v = atomic_load(&c->calls);
  do {
    if (v & CALLS_FREEING) return false;
  } while (!atomic_compare_exchange_weak(&c->calls, &v, v + CALLS_ONE));
  return true;
}

static void client_leave(mcp_client *c) {
  size_t v = atomic_load(&c->calls);
  while (!(v & CALLS_FREEING))
    if (atomic_compare_exchange_weak(&c->calls, &v, v - CALLS_ONE)) return;
  pthread_mutex_lock(&c->calls_mu);
  if (atomic_fetch_sub(&c->calls, CALLS_ONE) == CALLS_FREEING + CALLS_ONE)
    pthread_cond_broadcast(&c->calls_cv);
  pthread_mutex_unlock(&c->calls_mu);
}

static mcp_status freeing_error(mcp_error *err) {
  return mcp__error_set(err, MCP_ECLOSED, "client closed: mcp_client_free() was called");
}

/* ------------------------------------------------------------------------ */
/* Lane helpers and logging                                                  */
/* ------------------------------------------------------------------------ */

typedef struct log_item {
  mcp_client *c;
  mcp_log_level level;
  char msg[];
} log_item;

static void drop_log(void *arg) {
  log_item *it = arg;
  atomic_fetch_sub(&it->c->logq_n, 1);
  mcp__free(it);
}

static void run_log(void *arg) {
  log_item *it = arg;
  it->c->opts->log.fn(it->c->opts->log.user, it->level, it->msg);
  drop_log(it);
}

/* Logs from any thread: the host's log callback runs on the lane. */
static void client_log(mcp_client *c, mcp_log_level level, const char *fmt, ...) MCP_PRINTF(3, 4);
static void client_log(mcp_client *c, mcp_log_level level, const char *fmt, ...) {
  if (!c->opts->log.fn) return;
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  if (n < 0) return;
  /* A server can make us log per message it sends: bounded like them. */
  if (atomic_fetch_add(&c->logq_n, 1) >= MAX_QUEUED_LOGS) {
    atomic_fetch_sub(&c->logq_n, 1);
    return;
  }
  size_t len = strlen(buf);
  log_item *it = mcp__malloc(sizeof(*it) + len + 1);
  if (!it) {
    atomic_fetch_sub(&c->logq_n, 1);
    return;
  }
  it->c = c;
  it->level = level;
  memcpy(it->msg, buf, len + 1);
  if (mcp__lane_post(c->lane, run_log, drop_log, it) != MCP_OK) drop_log(it);
}

/* Who the server is, for messages: its program or URL. */
static const char *server_label(const mcp_client *c) {
  return c->opts->s.argv ? c->opts->s.argv[0] : c->opts->s.url ? c->opts->s.url : "server";
}

/*
 * Hands |text| (freed here; NULL: out of memory) to the transport without
 * waiting for the server (mcp_transport.h, post()), for messages nobody
 * waits on: answers to server requests and notifications/cancelled.  When
 * the server does not read, its write queue fills and the message is
 * dropped, counted and logged once per stall.  Any thread, also the reader.
 */
static void post_text(mcp_client *c, char *text, size_t len, const char *what) {
  if (!text) {
    client_log(c, MCP_LOG_WARN, "out of memory: %s not sent", what);
    return;
  }
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp__transport_post(c->t, text, len, &err);
  mcp__free(text);
  if (st == MCP__EAGAIN || st == MCP_ETIMEDOUT) {
    atomic_fetch_add(&c->n_out_dropped, 1);
    if (!atomic_exchange(&c->out_overflow, true))
      client_log(c, MCP_LOG_WARN,
                 "%s is not reading what we send (%s); %s dropped, "
                 "and further messages until it reads again",
                 server_label(c), err.message ? err.message : "stalled", what);
  } else if (st == MCP_OK) {
    if (atomic_load(&c->out_overflow) && atomic_exchange(&c->out_overflow, false))
      client_log(c, MCP_LOG_INFO, "%s reads again; %llu messages to it were dropped so far",
                 server_label(c), (unsigned long long)atomic_load(&c->n_out_dropped));
  } else if (st != MCP_ECLOSED) {
    client_log(c, MCP_LOG_WARN, "could not send %s: %s", what,
               err.message ? err.message : mcp_strerror(st));
  }
  mcp_error_clear(&err);
}

/* Sends one message with a bounded wait; errors are logged, not returned. */
static mcp_status send_text(mcp_client *c, char *text, size_t len, int64_t deadline,
                            mcp_error *err) {
  if (!text) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  mcp_status st = mcp__transport_send(c->t, text, len, deadline, err);
  mcp__free(text);
  return st;
}

static mcp_status send_request_text(mcp_client *c, int64_t id, unsigned flags, char *text,
                                    size_t len, int64_t deadline, mcp_error *err) {
  mcp_status st = mcp__transport_send_request(c->t, id, flags, text, len, deadline, err);
  mcp__free(text);
  return st;
}

static void send_cancelled(mcp_client *c, int64_t id, const char *reason) {
  json_object *params = json_object_new_object();
  if (!params) return;
  if (mcp__json_add(params, "requestId", json_object_new_int64(id)) ||
      mcp__json_add(params, "reason", json_object_new_string(reason))) {
    json_object_put(params);
    return;
  }
  size_t len = 0;
  char *text = mcp__jsonrpc_notification("notifications/cancelled", params, &len);
  json_object_put(params);
  /* Queued, never waited for: the caller's deadline has passed already. */
  post_text(c, text, len, "notifications/cancelled");
}

/* ------------------------------------------------------------------------ */
/* Incoming messages (reader thread)                                         */
/* ------------------------------------------------------------------------ */

/* Per-call context: what callbacks tied to one request need. */
typedef struct call_ctx {
  mcp_client *c;
  mcp_progress_fn progress;
  void *progress_user;
  /* async only */
  mcp_result_fn fn;
  void *user;
} call_ctx;

/*
 * Whether one more inbound item of |cost| message bytes may wait for the
 * lane (see DEFAULT_MAX_QUEUED).  A refusal is counted, and logged once
 * until the queue has drained to half.  Called by the upcall thread only,
 * so the check and the increment need no lock (others only decrement).
 */
static bool inbound_admit(mcp_client *c, size_t cost) {
  size_t n = atomic_load(&c->inq_n), b = atomic_load(&c->inq_bytes);
  size_t max_bytes = c->opts->s.max_message ? c->opts->s.max_message : DEFAULT_MAX_MESSAGE;
  if (n >= c->max_queued || (n > 0 && b + cost > max_bytes)) {
    atomic_fetch_add(&c->n_in_dropped, 1);
    if (!atomic_exchange(&c->in_overflow, true))
      client_log(c, MCP_LOG_WARN,
                 "%s sends faster than the host handles: %zu messages (%zu bytes) wait; "
                 "dropping notifications and answering requests %d until they drain",
                 server_label(c), n, b, BUSY_CODE);
    return false;
  }
  atomic_fetch_add(&c->inq_n, 1);
  atomic_fetch_add(&c->inq_bytes, cost);
  if (n < c->max_queued / 2 && atomic_load(&c->in_overflow) &&
      atomic_exchange(&c->in_overflow, false))
    client_log(c, MCP_LOG_INFO, "%s: inbound queue drained; %llu messages dropped so far",
               server_label(c), (unsigned long long)atomic_load(&c->n_in_dropped));
  return true;
}

static void inbound_release(mcp_client *c, size_t cost) {
  atomic_fetch_sub(&c->inq_bytes, cost);
  atomic_fetch_sub(&c->inq_n, 1);
}

typedef struct progress_item {
  mcp_client *c;
  mcp_pending_entry *e; /* own reference */
  double progress, total;
  char *message;
  size_t cost; /* admitted bytes (inbound_admit) */
} progress_item;

static void drop_progress(void *arg) {
  progress_item *it = arg;
  inbound_release(it->c, it->cost);
  mcp__pending_entry_unref(it->c->pending, it->e);
  mcp__free(it->message);
  mcp__free(it);
}

static void run_progress(void *arg) {
  progress_item *it = arg;
  mcp_pending *p = it->c->pending;
  if (mcp__pending_entry_enter(p, it->e)) {
    call_ctx *ctx = mcp__pending_entry_user(it->e);
    if (ctx && ctx->progress)
      ctx->progress(ctx->progress_user, it->progress, it->total, it->message);
    mcp__pending_entry_leave(p, it->e);
  }
  drop_progress(it);
}

/* Progress tokens are our request ids; a server may echo them as strings. */
static int token_to_id(json_object *tok, int64_t *id) {
  if (mcp__jsonrpc_id_int(tok, id)) return 1;
  if (tok && json_object_is_type(tok, json_type_string)) {
    const char *s = json_object_get_string(tok);
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*s && end && !*end && errno == 0) {
      *id = v;
      return 1;
    }
  }
  return 0;
}

static void handle_progress(mcp_client *c, json_object *params, size_t cost) {
  json_object *tok = NULL, *v = NULL;
  int64_t id;
  if (!params || !json_object_object_get_ex(params, "progressToken", &tok) ||
      !token_to_id(tok, &id))
    return;
  mcp_pending_entry *e = mcp__pending_progress(c->pending, id);
  if (!e) return; /* finished or unknown token: dropped, as the spec says */
  call_ctx *ctx = mcp__pending_entry_user(e);
  if (!ctx || !ctx->progress || !inbound_admit(c, cost)) {
    mcp__pending_entry_unref(c->pending, e);
    return;
  }
  progress_item *it = mcp__calloc(1, sizeof(*it));
  if (!it) {
    inbound_release(c, cost);
    mcp__pending_entry_unref(c->pending, e);
    return;
  }
  it->c = c;
  it->e = e;
  it->cost = cost;
  it->progress = json_object_object_get_ex(params, "progress", &v) ? json_object_get_double(v) : 0;
  it->total = json_object_object_get_ex(params, "total", &v) ? json_object_get_double(v) : NAN;
  if (json_object_object_get_ex(params, "message", &v) && json_object_is_type(v, json_type_string))
    it->message = mcp__strdup(json_object_get_string(v));
  if (mcp__lane_post(c->lane, run_progress, drop_progress, it) != MCP_OK) drop_progress(it);
}

static void handle_inbound_cancel(mcp_client *c, json_object *params) {
  json_object *rid = NULL;
  if (!params || !json_object_object_get_ex(params, "requestId", &rid) || !rid) return;
  const char *text = json_object_to_json_string_ext(rid, JSON_C_TO_STRING_PLAIN);
  pthread_mutex_lock(&c->lock);
  for (server_req *r = c->sreqs; r; r = r->next)
    if (strcmp(r->id_text, text) == 0) r->cancelled = true;
  pthread_mutex_unlock(&c->lock);
}

typedef struct inbound_item {
  mcp_client *c;
  json_object *msg; /* whole message, owned */
  size_t cost;      /* its message bytes, released when admitted */
  unsigned lc_bit;  /* a coalesced list_changed kind, until it runs */
  bool admitted;
} inbound_item;

static void drop_inbound(void *arg) {
  inbound_item *it = arg;
  if (it->lc_bit) atomic_fetch_and(&it->c->lc_queued, ~it->lc_bit);
  if (it->admitted) inbound_release(it->c, it->cost);
  json_object_put(it->msg);
  mcp__free(it);
}

/* Queues |msg| (taken) for |run| on the lane; an admitted item's bytes are
 * released when it has run or was dropped. */
static mcp_status post_inbound(mcp_client *c, json_object *msg, mcp_work_fn run, bool admitted,
                               size_t cost, unsigned lc_bit) {
  inbound_item *it = mcp__malloc(sizeof(*it));
  if (!it) {
    if (admitted) inbound_release(c, cost);
    if (lc_bit) atomic_fetch_and(&c->lc_queued, ~lc_bit);
    json_object_put(msg);
    return MCP_ENOMEM;
  }
  it->c = c;
  it->msg = msg;
  it->cost = cost;
  it->lc_bit = lc_bit;
  it->admitted = admitted;
  int rc = mcp__lane_post(c->lane, run, drop_inbound, it);
  if (rc != MCP_OK) drop_inbound(it);
  return rc;
}

/* The list_changed notifications, coalesced: one of a kind waits at most. */
static unsigned list_changed_bit(const char *method) {
  static const char *const kinds[] = {"notifications/tools/list_changed",
                                      "notifications/resources/list_changed",
                                      "notifications/prompts/list_changed"};
  for (unsigned i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
    if (strcmp(method, kinds[i]) == 0) return 1u << i;
  return 0;
}

static void run_notification(void *arg) {
  inbound_item *it = arg;
  mcp_client *c = it->c;
  if (it->lc_bit) {
    /* From now on a new one of this kind queues again: the host may have
     * read the list before it was sent. */
    atomic_fetch_and(&c->lc_queued, ~it->lc_bit);
    it->lc_bit = 0;
  }
  if (c->opts->notify_fn) {
    mcp_msg m;
    mcp__jsonrpc_classify(it->msg, &m);
    const char *params = m.params ? json_object_to_json_string_ext(m.params, JSON_TEXT_FLAGS)
                                  : "{}";
    c->opts->notify_fn(c->opts->notify_user, m.method, params);
  }
  drop_inbound(it);
}

/* SEP-1034: fill in schema defaults the user left out of an accepted form. */
static void apply_elicitation_defaults(json_object *params, json_object *result) {
  json_object *action = NULL, *schema = NULL, *props = NULL, *content = NULL;
  if (!json_object_object_get_ex(result, "action", &action) ||
      strcmp(json_object_get_string(action), "accept") != 0)
    return;
  if (!params || !json_object_object_get_ex(params, "requestedSchema", &schema) ||
      !json_object_object_get_ex(schema, "properties", &props) ||
      !json_object_is_type(props, json_type_object))
    return;
  if (!json_object_object_get_ex(result, "content", &content) ||
      !json_object_is_type(content, json_type_object)) {
    content = json_object_new_object();
    if (mcp__json_add(result, "content", content)) return;
  }
  json_object_object_foreach(props, key, prop) {
    json_object *def = NULL;
    if (json_object_object_get_ex(content, key, NULL)) continue;
    if (prop && json_object_object_get_ex(prop, "default", &def))
      json_object_object_add(content, key, json_object_get(def));
  }
}

static const mcp_handler_entry *find_handler(const mcp_client *c, const char *method) {
  for (size_t i = 0; i < c->opts->nhandlers; i++)
    if (strcmp(c->opts->handlers[i].method, method) == 0) return &c->opts->handlers[i];
  return NULL;
}

/*
 * Runs host handler |h| for a server's |method| request with |params|
 * (borrowed; NULL for none), the one way both eras ask the host: a legacy
 * server->client request and a modern input request (MRTR).  On MCP_OK
 * *res is the handler's result as a tree (caller puts), with SEP-1034's
 * defaults filled in for an elicitation; otherwise |herr| says why (the
 * handler's own error, or its result that was not a JSON object).
 * On a worker thread.
 */
static mcp_status call_handler(mcp_client *c, const mcp_handler_entry *h, const char *method,
                               json_object *params, json_object **res, mcp_error *herr) {
  *res = NULL;
  const char *ptext = params ? json_object_to_json_string_ext(params, JSON_TEXT_FLAGS) : "{}";
  char *result = NULL;
  mcp_status st = h->fn(h->user, method, ptext ? ptext : "{}", &result, herr);
  if (st == MCP_OK) {
    const char *why = NULL;
    *res = result ? mcp__jsonrpc_parse(result, strlen(result), &why) : json_object_new_object();
    if (!*res || !json_object_is_type(*res, json_type_object)) {
      client_log(c, MCP_LOG_ERROR, "handler for %s returned invalid JSON (%s)", method,
                 why ? why : "not an object");
      json_object_put(*res);
      *res = NULL;
      st = MCP_EPROTO;
      mcp__error_set(herr, st, "client handler returned invalid JSON");
    }
  } else if (!herr->message) {
    mcp__error_set(herr, st, "%s", mcp_strerror(st));
  }
  free(result); /* the handler allocated it with malloc() */
  if (*res && strcmp(method, "elicitation/create") == 0) apply_elicitation_defaults(params, *res);
  return st;
}

static void run_server_request(void *arg) {
  inbound_item *it = arg;
  mcp_client *c = it->c;
  mcp_msg m;
  mcp__jsonrpc_classify(it->msg, &m);
  server_req sr = {0};
  sr.id_text = (char *)json_object_to_json_string_ext(m.id, JSON_C_TO_STRING_PLAIN);
  pthread_mutex_lock(&c->lock);
  sr.next = c->sreqs;
  c->sreqs = &sr;
  pthread_mutex_unlock(&c->lock);

  char *reply = NULL;
  size_t len = 0;
  const mcp_handler_entry *h = find_handler(c, m.method);
  if (strcmp(m.method, "ping") == 0 && !h) {
    reply = mcp__jsonrpc_result(m.id, NULL, &len);
  } else if (!h) {
    char *msg = mcp__asprintf("Method not found: %s", m.method);
    reply = mcp__jsonrpc_error(m.id, MCP_RPC_METHOD_NOT_FOUND, msg ? msg : "Method not found", NULL,
                               &len);
    mcp__free(msg);
  } else {
    json_object *res = NULL;
    mcp_error herr = MCP_ERROR_INIT;
    mcp_status st = call_handler(c, h, m.method, m.params, &res, &herr);
    if (st == MCP_OK) {
      reply = mcp__jsonrpc_result(m.id, res, &len);
      json_object_put(res);
    } else {
      int64_t code = st == MCP_ERPC && herr.rpc_code ? herr.rpc_code : MCP_RPC_INTERNAL_ERROR;
      reply = mcp__jsonrpc_error(m.id, code, herr.message ? herr.message : mcp_strerror(st), NULL,
                                 &len);
    }
    mcp_error_clear(&herr);
  }

  pthread_mutex_lock(&c->lock);
  server_req **pp = &c->sreqs;
  while (*pp && *pp != &sr) pp = &(*pp)->next;
  if (*pp) *pp = sr.next;
  bool cancelled = sr.cancelled;
  pthread_mutex_unlock(&c->lock);

  if (cancelled) mcp__free(reply); /* the server cancelled it: no response, per the spec */
  else post_text(c, reply, len, "the answer to a server request");
  drop_inbound(it);
}

/*
 * A reply to request |id| that is malformed (|why|): the request fails now
 * with MCP_EPROTO and the reason, rather than waiting out its deadline for
 * an answer that has come and will not come again.
 */
static void fail_invalid_response(mcp_client *c, int64_t id, const char *why) {
  mcp_error e = MCP_ERROR_INIT;
  mcp__error_set(&e, MCP_EPROTO, "invalid response from server: %s", why);
  int rc = mcp__pending_complete(c->pending, id, MCP_EPROTO, NULL, 0, &e);
  mcp_error_clear(&e);
  if (rc == 1) atomic_fetch_add(&c->n_late, 1);
  if (rc == 2) atomic_fetch_add(&c->n_unknown, 1);
  client_log(c, MCP_LOG_WARN, "invalid response to request %lld: %s", (long long)id, why);
}

static bool listen_route(mcp_client *c, const mcp_msg *m);
static void ttl_invalidate_notified(mcp_client *c, const char *method);

/* Takes ownership of |msg| (one element of a line of |cost| bytes). */
static void dispatch(mcp_client *c, json_object *msg, size_t cost) {
  mcp_msg m;
  int64_t id = 0;
  switch (mcp__jsonrpc_classify(msg, &m)) {
  case MCP_MSG_RESPONSE: {
    atomic_fetch_add(&c->n_responses, 1);
    if (!mcp__jsonrpc_id_int(m.id, &id)) {
      atomic_fetch_add(&c->n_unknown, 1);
      break;
    }
    /* The waiter takes results as text: the same compact text the fast
     * path gives (mcp_jscan.h), "null" for a JSON null. */
    size_t n = 0;
    char *text = mcp__json_dup_string(m.result, &n);
    mcp_error e = MCP_ERROR_INIT;
    if (!text)
      mcp__error_set(&e, MCP_ENOMEM, "out of memory: the response to request %lld was lost",
                     (long long)id);
    int rc = mcp__pending_complete(c->pending, id, text ? MCP_OK : MCP_ENOMEM, text, n,
                                   text ? NULL : &e);
    mcp_error_clear(&e);
    if (rc == 1) atomic_fetch_add(&c->n_late, 1);
    if (rc == 2) {
      atomic_fetch_add(&c->n_unknown, 1);
      client_log(c, MCP_LOG_DEBUG, "response with unknown id %lld dropped", (long long)id);
    }
    break;
  }
  case MCP_MSG_ERROR: {
    atomic_fetch_add(&c->n_responses, 1);
    char q[MCP_QUOTE_LONG];
    mcp__quote(q, sizeof(q), m.error_message, strlen(m.error_message));
    if (!mcp__jsonrpc_id_int(m.id, &id)) {
      atomic_fetch_add(&c->n_unknown, 1);
      client_log(c, MCP_LOG_WARN, "server error without a request id: %lld %s",
                 (long long)m.error_code, q);
      break;
    }
    mcp_error e = MCP_ERROR_INIT;
    mcp__error_set(&e, MCP_ERPC, "%s", q);
    e.rpc_code = (int)m.error_code;
    const char *data = m.error_data
                           ? json_object_to_json_string_ext(m.error_data, JSON_C_TO_STRING_PLAIN)
                           : NULL;
    if (data) e.data = strdup(data);
    int rc = mcp__pending_complete(c->pending, id, MCP_ERPC, NULL, 0, &e);
    mcp_error_clear(&e);
    if (rc == 1) atomic_fetch_add(&c->n_late, 1);
    if (rc == 2) atomic_fetch_add(&c->n_unknown, 1);
    break;
  }
  case MCP_MSG_REQUEST: {
    atomic_fetch_add(&c->n_server_requests, 1);
    size_t len = 0;
    if (strcmp(m.method, "ping") == 0 && !find_handler(c, "ping")) {
      /* No host code: answered here, nothing queued. */
      char *text = mcp__jsonrpc_result(m.id, NULL, &len);
      post_text(c, text, len, "the answer to ping");
      break;
    }
    if (!inbound_admit(c, cost)) {
      char *text = mcp__jsonrpc_error(m.id, BUSY_CODE, BUSY_MESSAGE, NULL, &len);
      post_text(c, text, len, "a busy answer");
      break;
    }
    post_inbound(c, msg, run_server_request, true, cost, 0);
    return; /* ownership passed */
  }
  case MCP_MSG_NOTIFICATION: {
    atomic_fetch_add(&c->n_notifications, 1);
    ttl_invalidate_notified(c, m.method);
    if (strcmp(m.method, "notifications/tools/list_changed") == 0)
      mcp__client_set_task_tools(c, NULL);
    if (atomic_load(&c->sub_route) && listen_route(c, &m)) break; /* the listen's, or dropped */
    if (strcmp(m.method, "notifications/progress") == 0) {
      handle_progress(c, m.params, cost);
      break;
    }
    if (strcmp(m.method, "notifications/cancelled") == 0) handle_inbound_cancel(c, m.params);
    if (!c->opts->notify_fn) break; /* nobody to tell */
    unsigned bit = list_changed_bit(m.method);
    if (bit) {
      /* Coalesced, so never more than one of a kind waits: not bounded. */
      if (atomic_fetch_or(&c->lc_queued, bit) & bit) break;
      post_inbound(c, msg, run_notification, false, 0, bit);
      return;
    }
    if (!inbound_admit(c, cost)) break;
    post_inbound(c, msg, run_notification, true, cost, 0);
    return;
  }
  case MCP_MSG_INVALID:
    atomic_fetch_add(&c->n_proto, 1);
    if (mcp__jsonrpc_response_id(msg, &id)) {
      fail_invalid_response(c, id, m.invalid);
      break;
    }
    client_log(c, MCP_LOG_WARN, "invalid JSON-RPC message dropped: %s", m.invalid);
    break;
  }
  json_object_put(msg);
}

static void run_lost_close(void *arg) { mcp_client_close(arg); }

/*
 * A message from the server was lost for want of memory (the transport
 * could not buffer it, or it could not be parsed).  It may have been the
 * answer to any request in flight, which would then never end: so the
 * connection ends instead.  Every request ends now with MCP_ENOMEM, and the
 * transport is closed from the lane (the reader thread calling this cannot
 * close it: close joins it).  Runs on the transport's reader thread.
 */
static void lost_message(mcp_client *c) {
  static const char msg[] = "out of memory: a message from the server was lost; connection closed";
  if (atomic_exchange(&c->lost, true)) return;
  atomic_store(&c->open, false);
  pthread_mutex_lock(&c->lock);
  if (!c->close_message) c->close_message = mcp__strdup(msg);
  pthread_cond_broadcast(&c->task_cv); /* a task waiter sees the close */
  pthread_mutex_unlock(&c->lock);
  mcp__pending_close(c->pending, MCP_ENOMEM, msg);
  /* Without memory for the lane item the transport stays up until
   * mcp_client_close() or _free(); every request still fails at once. */
  (void)mcp__lane_post(c->lane, run_lost_close, NULL, c);
}

/* A plain success response ({"jsonrpc","id","result"} only): routed by id
 * with the result handed over as text, no tree built (mcp_jscan.h).  False
 * when the message is anything else. */
static bool fast_response(mcp_client *c, const char *data, size_t len) {
  int64_t id = 0;
  char *text = NULL;
  size_t n = 0;
  if (!mcp__jscan_response(data, len, &id, &text, &n)) return false;
  atomic_fetch_add(&c->n_responses, 1);
  int rc = mcp__pending_complete(c->pending, id, MCP_OK, text, n, NULL);
  if (rc == 1) atomic_fetch_add(&c->n_late, 1);
  if (rc == 2) {
    atomic_fetch_add(&c->n_unknown, 1);
    client_log(c, MCP_LOG_DEBUG, "response with unknown id %lld dropped", (long long)id);
  }
  return true;
}

static void on_message(void *user, const char *data, size_t len) {
  mcp_client *c = user;
  if (fast_response(c, data, len)) return;
  const char *why = NULL;
  json_object *o = mcp__jsonrpc_parse(data, len, &why);
  if (!o && why == MCP__JSONRPC_OOM) {
    lost_message(c);
    return;
  }
  int64_t id = 0;
  if (!o && mcp__jsonrpc_peek_response_id(data, len, &id)) {
    atomic_fetch_add(&c->n_proto, 1);
    fail_invalid_response(c, id, why ? why : "?");
    return;
  }
  if (!o) {
    atomic_fetch_add(&c->n_proto, 1);
    char q[MCP_QUOTE_SHORT];
    client_log(c, MCP_LOG_WARN, "unparseable message from server dropped (%s): %s", why ? why : "?",
               mcp__quote(q, sizeof(q), data, len));
    return;
  }
  if (json_object_is_type(o, json_type_array)) {
    /* A JSON-RPC batch from a 2025-03-26 server: dispatch each element. */
    size_t n = json_object_array_length(o);
    for (size_t i = 0; i < n; i++) {
      json_object *el = json_object_get(json_object_array_get_idx(o, i));
      json_object_array_put_idx(o, i, NULL); /* detach: el has one owner */
      if (el) dispatch(c, el, len);
    }
    json_object_put(o);
    return;
  }
  dispatch(c, o, len);
}

static void on_error(void *user, mcp_status status, const char *message) {
  mcp_client *c = user;
  if (status == MCP_ETOOBIG) atomic_fetch_add(&c->n_oversize, 1);
  if (status == MCP_ENOMEM) lost_message(c);
  client_log(c, MCP_LOG_WARN, "%s", message ? message : mcp_strerror(status));
}

/* ---- oversized messages ---- */

static size_t skip_ws(const char *h, size_t n, size_t i) {
  while (i < n && (h[i] == ' ' || h[i] == '\t' || h[i] == '\r' || h[i] == '\n')) i++;
  return i;
}

/* Index after the string starting at h[i] == '"', or n when it does not
 * end within the head. */
static size_t skip_string(const char *h, size_t n, size_t i) {
  for (i++; i < n; i++) {
    if (h[i] == '\\') i++;
    else if (h[i] == '"') return i + 1;
  }
  return n;
}

/* Index after the value starting at h[i] (strings and nesting followed;
 * a lenient skip, this is not validation), or n. */
static size_t skip_value(const char *h, size_t n, size_t i) {
  size_t depth = 0;
  for (; i < n; i++) {
    char ch = h[i];
    if (ch == '"') {
      i = skip_string(h, n, i) - 1;
      if (i + 1 >= n) return n;
    } else if (ch == '{' || ch == '[') {
      depth++;
    } else if (ch == '}' || ch == ']') {
      if (depth == 0) return i; /* the end of the enclosing object */
      if (--depth == 0) return i + 1;
    } else if (depth == 0 && (ch == ',' || ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n')) {
      return i;
    }
  }
  return n;
}

/*
 * The id of the response whose first |n| bytes are |h|: a bounded lenient
 * scan of the top-level members.  True only when an integer "id" comes
 * before "result" or "error" (so the message is a response and its id is
 * known) and no "method" does.  The id cannot be known when the head ends
 * first (the server put "id" after a large "result"): then no request is
 * guessed at.
 */
static bool oversize_response_id(const char *h, size_t n, int64_t *id) {
  bool have_id = false;
  size_t i = skip_ws(h, n, 0);
  if (i >= n || h[i] != '{') return false;
  i++;
  for (;;) {
    i = skip_ws(h, n, i);
    if (i >= n || h[i] != '"') return false;
    size_t k0 = i + 1, k1 = skip_string(h, n, i);
    if (k1 >= n) return false;
    size_t klen = k1 - 1 - k0;
    i = skip_ws(h, n, k1);
    if (i >= n || h[i] != ':') return false;
    i = skip_ws(h, n, i + 1);
    if (i >= n) return false;
#define KEY_IS(lit) (klen == sizeof(lit) - 1 && memcmp(h + k0, lit, klen) == 0)
    if (KEY_IS("method")) return false;
    if (KEY_IS("result") || KEY_IS("error")) return have_id;
    if (KEY_IS("id")) {
      size_t j = i + (h[i] == '-');
      size_t d0 = j;
      while (j < n && h[j] >= '0' && h[j] <= '9' && j - d0 < 19) j++;
      if (j == d0 || j >= n || (h[j] != ',' && h[j] != '}' && h[j] != ' ')) return false;
      char num[24];
      memcpy(num, h + i, j - i);
      num[j - i] = '\0';
      *id = strtoll(num, NULL, 10);
      have_id = true;
      i = j;
    } else {
      i = skip_value(h, n, i);
    }
#undef KEY_IS
    i = skip_ws(h, n, i);
    if (i >= n || h[i] != ',') return false;
    i++;
  }
}

/* A message over the size limit was skipped (stdio): the request it
 * answered, when its id can be read from the head, fails now with
 * MCP_ETOOBIG instead of waiting out its timeout. */
static void on_oversize(void *user, size_t len, const char *head, size_t head_len) {
  mcp_client *c = user;
  atomic_fetch_add(&c->n_oversize, 1);
  size_t limit = c->opts->s.max_message ? c->opts->s.max_message : DEFAULT_MAX_MESSAGE;
  int64_t id = 0;
  if (oversize_response_id(head, head_len, &id)) {
    mcp_error e = MCP_ERROR_INIT;
    mcp__error_set(&e, MCP_ETOOBIG,
                   "response of %zu bytes from %s exceeds the limit of %zu bytes "
                   "(mcp_client_options_set_max_message_bytes)",
                   len, server_label(c), limit);
    int rc = mcp__pending_complete(c->pending, id, MCP_ETOOBIG, NULL, 0, &e);
    mcp_error_clear(&e);
    if (rc == 1) atomic_fetch_add(&c->n_late, 1);
    client_log(c, MCP_LOG_WARN,
               "response of %zu bytes to request %lld from %s exceeds the "
               "limit of %zu bytes; skipped%s",
               len, (long long)id, server_label(c), limit, rc == 0 ? ", the request failed" : "");
    return;
  }
  client_log(c, MCP_LOG_WARN,
             "message of %zu bytes from %s exceeds the limit of %zu bytes; "
             "skipped (its request id is not in its first bytes, so no request was failed)",
             len, server_label(c), limit);
}

static void on_request_error(void *user, int64_t id, const mcp_error *err) {
  mcp_client *c = user;
  mcp_status st = err && err->status ? err->status : MCP_EIO;
  if (mcp__pending_complete(c->pending, id, st, NULL, 0, err) == 1) atomic_fetch_add(&c->n_late, 1);
}

static void on_request_hold(void *user, int64_t id, bool hold) {
  mcp_client *c = user;
  mcp__pending_hold(c->pending, id, hold);
}

typedef struct close_item {
  mcp_client *c;
  mcp_status status;
  char *message;
} close_item;

static void drop_close(void *arg) {
  close_item *it = arg;
  mcp__free(it->message);
  mcp__free(it);
}

static void run_close_hook(void *arg) {
  close_item *it = arg;
  if (it->c->hooks.on_close) it->c->hooks.on_close(it->c->hooks.user, it->status, it->message);
  drop_close(it);
}

static void on_close(void *user, mcp_status status, const char *message) {
  mcp_client *c = user;
  atomic_store(&c->open, false);
  pthread_mutex_lock(&c->lock);
  if (!c->close_message) c->close_message = mcp__strdup(message ? message : "connection closed");
  pthread_cond_broadcast(&c->task_cv); /* a task waiter sees the close */
  pthread_mutex_unlock(&c->lock);
  mcp__pending_close(c->pending, status ? status : MCP_ECLOSED,
                     message ? message : "connection closed");
  client_log(c, MCP_LOG_INFO, "connection closed: %s", message ? message : "");
  if (c->hooks.on_close && !atomic_load(&c->probing)) {
    close_item *it = mcp__calloc(1, sizeof(*it));
    if (it) {
      it->c = c;
      it->status = status;
      it->message = mcp__strdup(message ? message : "connection closed");
      if (mcp__lane_post(c->lane, run_close_hook, drop_close, it) != MCP_OK) drop_close(it);
    }
  }
}

/* ------------------------------------------------------------------------ */
/* Requests                                                                  */
/* ------------------------------------------------------------------------ */

/* Parses optional JSON text that must be an object; NULL text gives NULL. */
static mcp_status parse_object(const char *text, const char *what, json_object **out,
                               mcp_error *err) {
  *out = NULL;
  if (!text) return MCP_OK;
  const char *why = NULL;
  json_object *o = mcp__jsonrpc_parse(text, strlen(text), &why);
  if (!o) return mcp__error_set(err, MCP_EINVAL, "%s is not valid JSON: %s", what, why ? why : "?");
  if (!json_object_is_type(o, json_type_object)) {
    json_object_put(o);
    return mcp__error_set(err, MCP_EINVAL, "%s must be a JSON object", what);
  }
  *out = o;
  return MCP_OK;
}

static int64_t effective_timeout(const mcp_client *c, const mcp_call_options *o) {
  if (o && o->timeout_ms >= 0) return o->timeout_ms;
  return c->opts->s.timeout_ms;
}

static bool wants_progress(const mcp_call_options *o) {
  return o && (o->progress || o->reset_on_progress);
}

static void fill_pending_req(mcp_pending_req *r, const mcp_client *c, const mcp_call_options *o) {
  memset(r, 0, sizeof(*r));
  r->timeout_ms = effective_timeout(c, o);
  if (o) {
    r->cancel = o->cancel;
    r->reset_on_progress = o->reset_on_progress;
    r->max_total_ms = o->max_total_ms;
  }
}

static void fill_call_ctx(call_ctx *ctx, mcp_client *c, const mcp_call_options *o) {
  memset(ctx, 0, sizeof(*ctx));
  ctx->c = c;
  if (o) {
    ctx->progress = o->progress;
    ctx->progress_user = o->progress_user;
  }
}

/*
 * The one send path of every request, sync or async: |r|'s text for |id|
 * (mcp_request.h) handed to the transport.  On failure |serr| says why and
 * the request was not sent.
 */
static mcp_status send_req(mcp_client *c, const mcp_req *r, int64_t id, const mcp_call_options *o,
                           int64_t timeout_ms, mcp_error *serr) {
  size_t len = 0;
  char *text = mcp__req_text(r, id, wants_progress(o), c->modern ? c->meta : NULL,
                             c->modern ? c->meta_len : 0, &len);
  if (!text) return mcp__error_set(serr, MCP_ENOMEM, "out of memory");
  int64_t deadline = timeout_ms > 0 ? mcp__now_ms() + timeout_ms : MCP_NO_DEADLINE;
  unsigned flags = strcmp(r->method, "initialize") == 0 ? MCP_SEND_INITIALIZE : 0;
  mcp_status st = send_request_text(c, id, flags, text, len, deadline, serr);
  if (st == MCP_OK) atomic_fetch_add(&c->n_sent, 1);
  return st;
}

/* A request that timed out or was cancelled: the transport forgets it and
 * the server is told (initialize is never cancelled, per the spec). */
static void abandoned(mcp_client *c, const char *method, int64_t id, mcp_status st) {
  if (st != MCP_ETIMEDOUT && st != MCP_ECANCELLED) return;
  mcp__transport_abandon(c->t, id);
  /* Over modern HTTP closing the response stream is the cancellation (no
   * client notifications are defined there). */
  if (c->modern && c->opts->s.url) return;
  if (strcmp(method, "initialize") != 0)
    send_cancelled(c, id, st == MCP_ETIMEDOUT ? "timeout" : "cancelled by client");
}

/* The waiting caller reads the server's messages itself while its request
 * is open (mcp_transport.h, lead()), where the transport can. */
typedef struct lead_ctx {
  mcp_pending *p;
  mcp_pending_entry *e;
} lead_ctx;

static bool lead_done(void *arg, int64_t *deadline) {
  lead_ctx *l = arg;
  return mcp__pending_entry_done(l->p, l->e, deadline);
}

static void lead_wake(void *arg) { mcp__transport_lead_wake(arg); }

static void lead_until_done(mcp_client *c, mcp_pending_entry *e) {
  lead_ctx l = {c->pending, e};
  mcp__pending_set_waker(c->pending, e, lead_wake, c->t);
  /* Requests of other threads still open: the reader reads for them. */
  /* (The listen and its timer, always open, are not such requests: the
   * reader takes stdout back by itself within 2 ms.) */
  if (mcp__transport_lead(c->t, lead_done, &l) &&
      mcp__pending_count(c->pending) > (size_t)atomic_load(&c->listen_entries))
    mcp__transport_need_reader(c->t);
}

/*
 * Sends request |r| (borrowed) and waits.  On MCP_OK *out is the result's
 * compact JSON text (caller frees with mcp__free; "null" for a JSON null)
 * and *out_len its length; otherwise *out is NULL and |err| says why.
 */
static mcp_status request_sync_body(mcp_client *c, const mcp_req *r, const mcp_call_options *o,
                                    char **out, size_t *out_len, mcp_error *err) {
  call_ctx ctx;
  fill_call_ctx(&ctx, c, o);
  mcp_pending_req pr;
  fill_pending_req(&pr, c, o);
  pr.user = &ctx;
  int64_t id = 0;
  mcp_pending_entry *e = NULL;
  mcp_status st = mcp__pending_add(c->pending, &pr, &id, &e, err);
  if (st != MCP_OK) return st;
  mcp_error serr = MCP_ERROR_INIT;
  if (send_req(c, r, id, o, pr.timeout_ms, &serr) != MCP_OK)
    mcp__pending_complete(c->pending, id, serr.status, NULL, 0, &serr);
  mcp_error_clear(&serr);
  if (mcp__transport_can_lead(c->t)) lead_until_done(c, e);
  st = mcp__pending_wait(c->pending, e, !mcp__lane_is_current(c->lane), out, out_len, err);
  if (st == MCP_OK && !*out) { /* a completer without a result: none of ours */
    if (!(*out = mcp__strdup("null"))) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
    *out_len = 4;
  }
  abandoned(c, r->method, id, st);
  return st;
}

/*
 * The reads a client sends again, once, as a new request with a new id
 * when their response stream broke on a modern HTTP connection (SEP-2575:
 * no resumption there; the transport marks the error
 * MCP__ERRF_STREAM_LOST): repeating a read changes nothing.  A tools/call
 * is not among them: the server may have run it, so whether it goes again
 * is the caller's rule (the manager's resend rule: annotated idempotent,
 * or the host opted in).  Nor subscriptions/listen, which re-opens itself.
 */
static bool reissue_read(const char *method) {
  static const char *const reads[] = {
      "tools/list",   "resources/list", "resources/read",      "resources/templates/list",
      "prompts/list", "prompts/get",    "completion/complete", "server/discover"};
  for (size_t i = 0; i < sizeof(reads) / sizeof(reads[0]); i++)
    if (strcmp(method, reads[i]) == 0) return true;
  return false;
}

static bool stream_lost(mcp_status st, const mcp_error *e) {
  return st == MCP_EIO && mcp__error_has(e, MCP__ERRF_STREAM_LOST);
}

/* |r|, a read sent at |t0| whose stream broke (|e|), sent once more with
 * a new id within what is left of its timeout.  A second break is marked
 * MCP__ERRF_REISSUED: the caller does not send it a third time. */
static mcp_status reissue_sync(mcp_client *c, const mcp_req *r, const mcp_call_options *o,
                               int64_t t0, char **out, size_t *out_len, mcp_error *e) {
  mcp_call_options local = {.timeout_ms = -1};
  if (o) local = *o;
  int64_t to = effective_timeout(c, o);
  if (to > 0) {
    int64_t left = to - (mcp__now_ms() - t0);
    if (left <= 0) return MCP_EIO; /* no time left: the break is the answer */
    local.timeout_ms = left;
  }
  client_log(c, MCP_LOG_INFO, "%s: %s: %s; sending it again as a new request", server_label(c),
             r->method, e->message ? e->message : "response stream broke");
  mcp_error_clear(e);
  mcp_status st = request_sync_body(c, r, &local, out, out_len, e);
  if (stream_lost(st, e)) mcp__error_mark(e, MCP__ERRF_REISSUED);
  return st;
}

static mcp_status request_sync(mcp_client *c, const mcp_req *r, const mcp_call_options *o,
                               char **out, size_t *out_len, mcp_error *err) {
  *out = NULL;
  *out_len = 0;
  if (!client_enter(c)) return freeing_error(err);
  /* Only a modern HTTP stream can break this way: only there the clock,
   * and a local error for the marks when the caller passed none. */
  bool may_break = c->modern && c->opts->s.url;
  if (!may_break) {
    mcp_status st = request_sync_body(c, r, o, out, out_len, err);
    client_leave(c);
    return st;
  }
  int64_t t0 = mcp__now_ms();
  mcp_error local = MCP_ERROR_INIT;
  mcp_error *e = err ? err : &local;
  mcp_status st = request_sync_body(c, r, o, out, out_len, e);
  if (stream_lost(st, e) && reissue_read(r->method) && !atomic_load(&c->probing))
    st = reissue_sync(c, r, o, t0, out, out_len, e);
  client_leave(c);
  mcp_error_clear(&local);
  return st;
}

/* A request's result as the caller's string: sent, waited for, and for a
 * tools/call checked (MCP_ETOOLERROR keeps the result for the caller). */
static mcp_status request_result(mcp_client *c, const mcp_req *r, const mcp_call_options *o,
                                 char **result_json, mcp_error *err);

static mcp_status check_result_kind(const mcp_req *r, mcp_result_kind kind, mcp_error *err);
static mcp_result_kind outcome_kind(bool modern, mcp_status st, const char *text, size_t len);

/* The result of request |r| parsed as a tree (caller puts), for the few
 * callers that read several of its members (pages, initialize). */
static mcp_status request_tree(mcp_client *c, const mcp_req *r, const mcp_call_options *o,
                               json_object **out, mcp_error *err) {
  char *text = NULL;
  size_t len = 0;
  *out = NULL;
  bool modern = c->modern; /* read before: once answered, a free may run */
  mcp_status st = request_sync(c, r, o, &text, &len, err);
  if (st == MCP_OK && modern) st = check_result_kind(r, outcome_kind(modern, st, text, len), err);
  if (st) {
    mcp__free(text);
    return st;
  }
  /* Checked when it arrived: only memory can fail (or it is a JSON null). */
  *out = mcp__jsonrpc_parse(text, len, NULL);
  if (!*out && strcmp(text, "null") != 0) st = mcp__error_set(err, MCP_ENOMEM, "out of memory");
  mcp__free(text);
  return st;
}

static const char not_object_msg[] = "tools/call result is not a JSON object";

/* CallToolResult with isError: true becomes MCP_ETOOLERROR with its text;
 * a result that is not an object (no CallToolResult) MCP_EPROTO. */
static mcp_status check_tool_result(json_object *result, mcp_error *err) {
  json_object *is_error = NULL, *content = NULL;
  if (!json_object_is_type(result, json_type_object))
    return mcp__error_set(err, MCP_EPROTO, "%s", not_object_msg);
  if (!json_object_object_get_ex(result, "isError", &is_error) ||
      !json_object_get_boolean(is_error))
    return MCP_OK;
  const char *text = "the tool reported an error";
  size_t len = strlen(text);
  if (json_object_object_get_ex(result, "content", &content) &&
      json_object_is_type(content, json_type_array) && json_object_array_length(content) > 0) {
    json_object *first = json_object_array_get_idx(content, 0), *t = NULL;
    if (first && json_object_object_get_ex(first, "text", &t) &&
        json_object_is_type(t, json_type_string)) {
      text = json_object_get_string(t);
      len = (size_t)json_object_get_string_len(t);
    }
  }
  char q[MCP_QUOTE_LONG];
  return mcp__error_set(err, MCP_ETOOLERROR, "%s", mcp__quote(q, sizeof(q), text, len));
}

/* Whether the bytes `"isError"` occur in |text|.  memchr() to each 'E'
 * and a compare around it: glibc's memmem() sets up a two-way search on
 * every call, which costs more than the whole scan of a typical result. */
static bool has_is_error_key(const char *text, size_t len) {
  const char *p = text, *end = text + len;
  while (end - p >= 6 && (p = memchr(p, 'E', (size_t)(end - p))) != NULL) {
    if (p - text >= 3 && end - p >= 6 && memcmp(p - 3, "\"is", 3) == 0 &&
        memcmp(p, "Error\"", 6) == 0)
      return true;
    p++;
  }
  return false;
}

/* check_tool_result() on a result's compact text: the scanner reads
 * isError; only one that is present and not plainly false needs the tree
 * (json-c's truthiness rules, and the error text). */
static mcp_status check_tool_text(const char *text, size_t len, mcp_error *err) {
  const char *v = NULL;
  size_t n = 0;
  /* Compact text (mcp_jscan.h): an object starts with its brace. */
  if (len == 0 || text[0] != '{') return mcp__error_set(err, MCP_EPROTO, "%s", not_object_msg);
  /* Compact text spells the key only one way (json-c escapes no letter,
   * and the scanner refuses what json-c would rewrite): without those
   * bytes anywhere there is no such member.  The common case, at a
   * fraction of the member scan's cost. */
  if (!has_is_error_key(text, len)) return MCP_OK;
  if (!mcp__jscan_member(text, len, "isError", &v, &n) || (n == 5 && memcmp(v, "false", 5) == 0))
    return MCP_OK;
  json_object *tree = mcp__jsonrpc_parse(text, len, NULL);
  if (!tree) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  mcp_status st = check_tool_result(tree, err);
  json_object_put(tree);
  return st;
}

/* A modern result's resultType (mcp_era.h), |kind|: complete or absent
 * goes on; anything else that reaches here is an error (input_required is
 * answered before, on the methods that may ask).  MCP_OK or MCP_EPROTO. */
static mcp_status check_result_kind(const mcp_req *r, mcp_result_kind kind, mcp_error *err) {
  switch (kind) {
  case MCP_RESULT_COMPLETE: return MCP_OK;
  case MCP_RESULT_INPUT_REQUIRED:
    return mcp__error_set(err, MCP_EPROTO,
                          "%s: the server asked for input (resultType \"input_required\"), "
                          "which the specification allows only on tools/call, prompts/get "
                          "and resources/read",
                          r->method);
  case MCP_RESULT_TASK:
    /* A tools/call task that reaches here was not asked for; on any other
     * method a task is invalid whatever was negotiated (SEP-2663). */
    if (strcmp(r->method, "tools/call") != 0)
      return mcp__error_set(err, MCP_EPROTO,
                            "%s: the server answered with a task, which the tasks extension "
                            "allows only on tools/call",
                            r->method);
    return mcp__error_set(err, MCP_EPROTO,
                          "%s: the server answered with a task, but the tasks extension was "
                          "not negotiated",
                          r->method);
  default:
    return mcp__error_set(err, MCP_EPROTO, "%s: the result has an unknown resultType", r->method);
  }
}

/* The resultType of a successful modern outcome; complete otherwise. */
static mcp_result_kind outcome_kind(bool modern, mcp_status st, const char *text, size_t len) {
  return modern && st == MCP_OK ? mcp__era_result_kind(text, len) : MCP_RESULT_COMPLETE;
}

/* The outcome of request |r| for its caller, sync or async: |st| and the
 * result text (stolen) become the status and string the host gets; |kind|
 * is the result's resultType (outcome_kind()). */
/*
 * `resultType: "complete"` is the modern wire's envelope, not part of the
 * result: it is taken out of |text| (compact, NUL-terminated; *len
 * updated) so hosts see the same result from both eras, as the TypeScript
 * SDK v2 client does (its codec's decodeResult deletes it).  One scan of
 * the top level, on modern results only.
 */
static void strip_result_type(char *text, size_t *len) {
  static const char key[] = "\"resultType\":";
  const size_t kn = sizeof(key) - 1;
  const char *v = NULL;
  size_t n = 0;
  if (!text) return;
  /* The usual places, last or first, without the walk (mcp_era.c). */
  size_t at, cut;
  if (mcp__era_complete_edge(text, *len, &at, &cut)) {
    memmove(text + at, text + at + cut, *len - at - cut + 1); /* with the NUL */
    *len -= cut;
    return;
  }
  if (!mcp__jscan_member(text, *len, "resultType", &v, &n)) return;
  char *val = (char *)v;
  if (n != 10 || memcmp(val, "\"complete\"", 10) != 0 || val - text < (ptrdiff_t)kn + 1 ||
      memcmp(val - kn, key, kn) != 0)
    return;
  char *from = val - kn, *to = val + n;
  if (from[-1] == ',') from--;                       /* ...,"resultType":"complete"} */
  else if (*to == ',') to++;                         /* {"resultType":"complete",... */
  memmove(from, to, (size_t)(text + *len - to) + 1); /* with the NUL */
  *len -= (size_t)(to - from);
}

static mcp_status result_out(const mcp_req *r, mcp_result_kind kind, mcp_status st, char *text,
                             size_t len, char **result_json, mcp_error *err, bool modern) {
  *result_json = NULL;
  if (st == MCP_OK && (st = check_result_kind(r, kind, err)) != MCP_OK) {
    mcp__free(text);
    return st;
  }
  if (st == MCP_OK && modern) strip_result_type(text, &len);
  if (st != MCP_OK || !r->tool_call) {
    *result_json = st == MCP_OK ? text : NULL;
    if (st != MCP_OK) mcp__free(text);
    return st;
  }
  mcp_status tool_st = check_tool_text(text, len, err);
  if (tool_st != MCP_OK && tool_st != MCP_ETOOLERROR) {
    mcp__free(text);
    return tool_st;
  }
  *result_json = text; /* with MCP_ETOOLERROR too: the host reads the result */
  return tool_st;
}

/* ---- multi-round-trip requests (mcp_mrtr.h) ------------------------------ */

/* At most this many input_required rounds per call (the TypeScript SDK's
 * default); a server asking for more fails the call. */
#define MRTR_MAX_ROUNDS 10

/*
 * Answers every input of round |rd| of a |method| request with the host's
 * handlers, one after another, on the calling worker thread.  *out becomes
 * the inputResponses object (caller puts; NULL when the round asked for no
 * input).  A server asking for what no handler answers (it must not: the
 * capability was not declared), or a handler failing, fails the call.
 */
static mcp_status fulfil_inputs(mcp_client *c, const char *method, const mcp_mrtr_round *rd,
                                json_object **out, mcp_error *err) {
  *out = NULL;
  if (!rd->requests) return MCP_OK;
  json_object *resp = json_object_new_object();
  if (!resp) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  for (size_t i = 0; i < rd->ninputs; i++) {
    const char *key, *im;
    json_object *params = NULL, *res = NULL;
    mcp__mrtr_input(rd, i, &key, &im, &params);
    char qm[MCP_QUOTE_SHORT], qk[MCP_QUOTE_SHORT];
    mcp__quote(qm, sizeof(qm), im, strlen(im));
    mcp__quote(qk, sizeof(qk), key, strlen(key));
    const mcp_handler_entry *h = find_handler(c, im);
    if (!h) {
      json_object_put(resp);
      return mcp__error_set(err, MCP_EPROTO,
                            "%s: the server asked for input \"%s\" by %s, which this client "
                            "has no handler for (and did not declare)",
                            method, qk, qm);
    }
    mcp_error herr = MCP_ERROR_INIT;
    mcp_status st = call_handler(c, h, im, params, &res, &herr);
    if (st != MCP_OK) {
      json_object_put(resp);
      mcp__error_set(err, st, "%s: the %s handler failed on input \"%s\": %s", method, qm, qk,
                     herr.message ? herr.message : mcp_strerror(st));
      if (err) err->rpc_code = herr.rpc_code;
      mcp_error_clear(&herr);
      return st;
    }
    mcp_error_clear(&herr);
    if (mcp__json_add(resp, key, res)) {
      json_object_put(resp);
      return mcp__error_set(err, MCP_ENOMEM, "out of memory");
    }
  }
  *out = resp;
  return MCP_OK;
}

/* A sync call's inputs answered on the client's lane, where every host
 * callback runs (inline when the caller is already on it). */
typedef struct lane_fulfil {
  mcp_client *c;
  const char *method;
  const mcp_mrtr_round *rd;
  json_object *out;
  mcp_status st;
  mcp_error err;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool done;
} lane_fulfil;

static void lane_fulfil_end(lane_fulfil *f) {
  pthread_mutex_lock(&f->mu);
  f->done = true;
  pthread_cond_broadcast(&f->cv);
  pthread_mutex_unlock(&f->mu);
}

static void run_fulfil(void *arg) {
  lane_fulfil *f = arg;
  f->st = fulfil_inputs(f->c, f->method, f->rd, &f->out, &f->err);
  lane_fulfil_end(f);
}

static void drop_fulfil(void *arg) {
  lane_fulfil *f = arg;
  f->st = mcp__error_set(&f->err, MCP_ECLOSED, "%s: the client closed while answering input",
                         f->method);
  lane_fulfil_end(f);
}

static mcp_status fulfil_sync(mcp_client *c, const char *method, const mcp_mrtr_round *rd,
                              json_object **out, mcp_error *err) {
  *out = NULL;
  if (!rd->requests) return MCP_OK;
  if (mcp__lane_is_current(c->lane)) return fulfil_inputs(c, method, rd, out, err);
  lane_fulfil f = {.c = c, .method = method, .rd = rd, .err = MCP_ERROR_INIT};
  pthread_mutex_init(&f.mu, NULL);
  pthread_cond_init(&f.cv, NULL);
  int rc = mcp__lane_post(c->lane, run_fulfil, drop_fulfil, &f);
  if (rc == MCP_OK) {
    pthread_mutex_lock(&f.mu);
    while (!f.done) pthread_cond_wait(&f.cv, &f.mu);
    pthread_mutex_unlock(&f.mu);
  } else {
    f.st = rc == MCP_ENOMEM
               ? mcp__error_set(&f.err, MCP_ENOMEM, "out of memory")
               : mcp__error_set(&f.err, MCP_ECLOSED, "%s: the client is closing", method);
  }
  pthread_mutex_destroy(&f.mu);
  pthread_cond_destroy(&f.cv);
  if (f.st != MCP_OK) mcp__error_copy(err, &f.err);
  mcp_error_clear(&f.err);
  *out = f.out;
  return f.st;
}

/*
 * Between two rounds of a call made with |o|, started at |t0| (ms): what
 * stops it going on.  A fired token is MCP_ECANCELLED; with max_total_ms,
 * the rounds together (handlers included) are bounded by it.
 */
static mcp_status round_gate(const mcp_req *r, const mcp_call_options *o, int64_t t0, int round,
                             mcp_error *err) {
  if (round >= MRTR_MAX_ROUNDS)
    return mcp__error_set(err, MCP_EPROTO, "%s: the server still asked for input after %d rounds",
                          r->method, MRTR_MAX_ROUNDS);
  if (o && o->cancel && mcp_cancel_is_fired(o->cancel))
    return mcp__error_set(err, MCP_ECANCELLED, "%s: cancelled", r->method);
  if (o && o->reset_on_progress && o->max_total_ms > 0 && mcp__now_ms() - t0 >= o->max_total_ms)
    return mcp__error_set(err, MCP_ETIMEDOUT, "%s: timed out after %lld ms (max total)", r->method,
                          (long long)o->max_total_ms);
  return MCP_OK;
}

static mcp_status list_entered(mcp_client *c, const char *method, const char *key,
                               const mcp_call_options *opts, char **out, mcp_error *err);

/* After a -32020 (header mismatch) on a tools/call: the tools read from the
 * server again (a cached list dropped first: it is what was stale), so
 * the call can be sent once more with the headers the list now names. */
static mcp_status relist_tools(mcp_client *c, const mcp_call_options *o) {
  mcp__ttl_invalidate(c->ttl, 0);
  char *list = NULL;
  mcp_error lerr = MCP_ERROR_INIT;
  mcp_status ls = list_entered(c, "tools/list", "tools", o, &list, &lerr);
  mcp__free(list);
  mcp_error_clear(&lerr);
  return ls;
}

/*
 * One round of MRTR for sync request |r| after result |text| (taken):
 * the inputs answered on the lane, *retry the next request.
 */
static mcp_status next_round_sync(mcp_client *c, const mcp_req *r, char *text, size_t len,
                                  mcp_req *retry, mcp_error *err) {
  mcp_mrtr_round rd;
  mcp_status st = mcp__mrtr_parse(r->method, text, len, &rd, err);
  mcp__free(text);
  if (st) return st;
  json_object *responses = NULL;
  if (!client_enter(c)) st = freeing_error(err);
  else {
    st = fulfil_sync(c, r->method, &rd, &responses, err);
    client_leave(c);
  }
  mcp__req_clear(retry);
  if (st == MCP_OK) st = mcp__mrtr_retry(r, &rd, responses, retry, err);
  json_object_put(responses);
  mcp__mrtr_clear(&rd);
  return st;
}

static mcp_status request_result(mcp_client *c, const mcp_req *r, const mcp_call_options *o,
                                 char **result_json, mcp_error *err) {
  bool modern = c->modern; /* read before: once answered, a free may run */
  bool mrtr = modern && mcp__mrtr_method(r->method);
  int64_t t0 = mrtr ? mcp__now_ms() : 0;
  mcp_req retry = {0};
  const mcp_req *cur = r;
  bool relisted = false;
  for (int round = 0;; round++) {
    char *text = NULL;
    size_t len = 0;
    mcp_status st = request_sync(c, cur, o, &text, &len, err);
    if (st == MCP_ERPC && err && err->rpc_code == MCP_RPC_HEADER_MISMATCH && modern &&
        r->tool_call && c->opts->s.url && !relisted) {
      /* -32020 on a tools/call over HTTP: likely Mcp-Param-* headers the
       * client did not know (no list read on this connection, or the
       * tool changed).  The spec's SHOULD: read the list, try once more. */
      relisted = true;
      if (relist_tools(c, o) == MCP_OK) {
        mcp_error_clear(err);
        round--;
        continue;
      }
    }
    mcp_result_kind kind = outcome_kind(modern, st, text, len);
    if (mrtr && kind == MCP_RESULT_INPUT_REQUIRED) {
      if ((st = round_gate(r, o, t0, round, err)) == MCP_OK)
        st = next_round_sync(c, r, text, len, &retry, err);
      else mcp__free(text);
      if (st == MCP_OK) {
        cur = &retry;
        continue;
      }
      mcp__req_clear(&retry);
      *result_json = NULL;
      return st;
    }
    mcp__req_clear(&retry);
    if (kind == MCP_RESULT_TASK && mcp__tasks_follows(c, r->method)) { /* mcp_tasks.h */
      if (o && o->task_mode == MCP__TASK_START) return *result_json = text, MCP_OK;
      return mcp__tasks_follow(c, text, len, o, r->tool_call, result_json, err);
    }
    return result_out(r, kind, st, text, len, result_json, err, modern);
  }
}

/* ---- for the tasks (mcp_tasks.c) ----------------------------------------- */

bool mcp__client_enter(mcp_client *c) { return client_enter(c); }
void mcp__client_leave(mcp_client *c) { client_leave(c); }
bool mcp__client_modern(const mcp_client *c) { return c->modern; }

bool mcp__client_legacy_tasks(mcp_client *c) {
  int v = atomic_load_explicit(&c->legacy_tasks, memory_order_relaxed);
  if (v == 0) { /* server_info is fixed once connected: read it once */
    v = mcp__tasks_info_allows(c->server_info) ? 2 : 1;
    atomic_store_explicit(&c->legacy_tasks, v, memory_order_relaxed);
  }
  return v == 2;
}

char *mcp__client_task_tools(mcp_client *c) {
  pthread_mutex_lock(&c->lock);
  char *t = c->task_tools ? mcp__strdup(c->task_tools) : NULL;
  pthread_mutex_unlock(&c->lock);
  return t;
}

void mcp__client_set_task_tools(mcp_client *c, char *lines) {
  pthread_mutex_lock(&c->lock);
  char *old = c->task_tools;
  c->task_tools = lines;
  pthread_mutex_unlock(&c->lock);
  mcp__free(old);
}
int mcp__client_post(mcp_client *c, mcp_work_fn run, mcp_work_fn drop, void *arg) {
  return mcp__lane_post(c->lane, run, drop, arg);
}
int64_t mcp__client_timeout(const mcp_client *c, const mcp_call_options *o) {
  return effective_timeout(c, o);
}
mcp_status mcp__client_tool_outcome(const char *text, size_t len, mcp_error *err) {
  return check_tool_text(text, len, err);
}

bool mcp__client_has_extension(const mcp_client *c, const char *id) {
  const mcp_client_options *o = c->opts;
  for (size_t i = 0; i < o->ncaps; i++) {
    if (strcmp(o->caps[i].name, "extensions") != 0) continue;
    json_object *ext = mcp__jsonrpc_parse(o->caps[i].json, strlen(o->caps[i].json), NULL);
    bool has = ext && json_object_is_type(ext, json_type_object) &&
               json_object_object_get_ex(ext, id, NULL);
    json_object_put(ext);
    return has;
  }
  return false;
}

mcp_status mcp__client_answer_inputs(mcp_client *c, const char *requests_json, json_object **out,
                                     mcp_error *err) {
  *out = NULL;
  mcp_buf b = {0};
  mcp_mrtr_round rd;
  if (mcp__buf_append(&b, "{\"inputRequests\":", 17) ||
      mcp__buf_append(&b, requests_json, strlen(requests_json)) || mcp__buf_append(&b, "}", 1)) {
    mcp__buf_free(&b);
    return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  }
  mcp_status st = mcp__mrtr_parse("tasks/get", b.data, b.len, &rd, err);
  mcp__buf_free(&b);
  if (st) return st;
  st = fulfil_sync(c, "tasks/get", &rd, out, err);
  mcp__mrtr_clear(&rd);
  return st;
}

/* Sends the request a constructor built (|st| its status) and clears it. */
static mcp_status call_built(mcp_client *c, mcp_req *r, mcp_status st, const mcp_call_options *o,
                             char **result_json, mcp_error *err) {
  if (st == MCP_OK) st = request_result(c, r, o, result_json, err);
  mcp__req_clear(r);
  return st;
}

static mcp_status check_client(mcp_client *c, const char *what, mcp_error *err) {
  if (!c || !what) return mcp__error_set(err, MCP_EINVAL, "invalid argument");
  return MCP_OK;
}

MCP_EXTERN mcp_status mcp_client_request(mcp_client *c, const char *method, const char *params_json,
                                         const mcp_call_options *opts, char **result_json,
                                         mcp_error *err) {
  if (result_json) *result_json = NULL;
  mcp_status st = check_client(c, method, err);
  if (st || !result_json || !*method)
    return st ? st : mcp__error_set(err, MCP_EINVAL, "invalid argument");
  mcp_req r;
  return call_built(c, &r, mcp__req_generic(&r, method, params_json, err), opts, result_json, err);
}

MCP_EXTERN mcp_status mcp_client_call_tool(mcp_client *c, const char *name, const char *args_json,
                                           const mcp_call_options *opts, char **result_json,
                                           mcp_error *err) {
  if (result_json) *result_json = NULL;
  mcp_status st = check_client(c, name, err);
  if (st || !result_json) return st ? st : mcp__error_set(err, MCP_EINVAL, "invalid argument");
  /* A task on 2025-11-25 (mcp_tasks.h); nothing to ask once the server is
   * known to offer none (legacy_tasks 1). */
  if (!c->modern && atomic_load_explicit(&c->legacy_tasks, memory_order_relaxed) != 1 &&
      mcp__tasks_legacy_wanted(c, name, opts))
    return mcp__tasks_call_legacy(c, name, args_json, opts, result_json, err);
  mcp_req r;
  return call_built(c, &r, mcp__req_tool_call(&r, name, args_json, err), opts, result_json, err);
}

/* Appends the compact text of every element of |items| to |buf|, comma
 * separated, within the limits of |lo|; *count counts the items so far. */
static mcp_status append_items(mcp_buf *buf, json_object *items, const mcp_client_options *lo,
                               const char *method, size_t *count, mcp_error *err) {
  size_t n = json_object_array_length(items);
  for (size_t i = 0; i < n; i++) {
    if (*count >= lo->list_max_items)
      return mcp__error_set(err, MCP_ETOOBIG, "%s: the list has more than %zu items", method,
                            lo->list_max_items);
    size_t len = 0;
    /* json-c 0.16 serialises on through a failed buffer growth and returns
     * truncated text; the failed malloc leaves ENOMEM in errno. */
    int saved_errno = errno;
    errno = 0;
    const char *t = json_object_to_json_string_length(json_object_array_get_idx(items, i),
                                                      JSON_TEXT_FLAGS, &len);
    if (!t || errno == ENOMEM) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
    errno = saved_errno;
    /* The comma (or the opening bracket) and the closing bracket count. */
    if (buf->len + len + 2 > lo->list_max_bytes)
      return mcp__error_set(err, MCP_ETOOBIG, "%s: the list exceeds %zu bytes", method,
                            lo->list_max_bytes);
    if ((*count && mcp__buf_append(buf, ",", 1)) || mcp__buf_append(buf, t, len))
      return mcp__error_set(err, MCP_ENOMEM, "out of memory");
    ++*count;
  }
  return MCP_OK;
}

/*
 * A modern tools/list page over HTTP (x-mcp-header, mcp_xhdr.h): tools whose
 * annotations break the rules are taken out of |items| (the spec: the
 * client MUST exclude them) with a warning naming the tool and the rule;
 * the annotated ones go into |tab|.  MCP_OK or MCP_ENOMEM.
 */
static mcp_status filter_header_tools(mcp_client *c, json_object *items, mcp_xhdr_table *tab,
                                      mcp_error *err) {
  for (size_t i = json_object_array_length(items); i-- > 0;) {
    json_object *tool = json_object_array_get_idx(items, i), *name = NULL, *schema = NULL;
    if (!json_object_object_get_ex(tool, "name", &name) ||
        !json_object_is_type(name, json_type_string) ||
        !json_object_object_get_ex(tool, "inputSchema", &schema))
      continue;
    mcp_xhdr_tool *xt = NULL;
    char why[160];
    mcp_status st = mcp__xhdr_read(schema, &xt, why, sizeof(why));
    if (st == MCP_ENOMEM || (xt && mcp__xhdr_table_add(tab, json_object_get_string(name), xt)))
      return mcp__error_set(err, MCP_ENOMEM, "out of memory");
    if (st == MCP_EINVAL) {
      char q[MCP_QUOTE_SHORT], w[MCP_QUOTE_LONG];
      client_log(c, MCP_LOG_WARN, "tools/list: tool \"%s\" left out: %s",
                 mcp__quote(q, sizeof(q), json_object_get_string(name),
                            (size_t)json_object_get_string_len(name)),
                 mcp__quote(w, sizeof(w), why, strlen(why)));
      json_object_array_del_idx(items, i, 1);
    }
  }
  return MCP_OK;
}

/* ---- Cached lists (SEP-2549) ---------------------------------------------
 *
 * On a modern connection a complete list result carries ttlMs and
 * cacheScope; mcp_client_list_*() serve a fresh list from c->ttl without a
 * request.  A list is cached whole, as the functions return it: fresh until
 * the earliest of its pages' received + ttlMs (absent or negative ttlMs is
 * 0, never cached), private when any page is (an absent cacheScope counts as
 * private), a private list served only under the authorization context it
 * was read in (mcp__transport_auth_context: the bearer's digest; stdio and
 * unauthenticated HTTP have one context).  A list_changed of the kind (on a
 * listen or unsolicited) drops it at once, before the host hears of it, and
 * so does a listen opened again (one may have been missed meanwhile).  The
 * legacy era has no such fields: nothing is cached there. */

static const char *const ttl_methods[MCP_TTL_SLOTS] = {
    "tools/list", "prompts/list", "resources/list", "resources/templates/list"};

static int ttl_slot(const char *method) {
  for (int i = 0; i < MCP_TTL_SLOTS; i++)
    if (strcmp(method, ttl_methods[i]) == 0) return i;
  return -1;
}

bool mcp__client_list_public(mcp_client *c, const char *method) {
  int slot = c && c->modern ? ttl_slot(method) : -1;
  return slot >= 0 && (atomic_load(&c->list_public) & (1u << slot));
}

void mcp__client_auth_context(mcp_client *c, char *out, size_t n) {
  if (n) out[0] = '\0';
  if (c && c->t) mcp__transport_auth_context(c->t, out, n);
}

static void ttl_invalidate_notified(mcp_client *c, const char *method) {
  if (strncmp(method, "notifications/", 14) != 0) return;
  method += 14;
  if (strcmp(method, "tools/list_changed") == 0) mcp__ttl_invalidate(c->ttl, 0);
  else if (strcmp(method, "prompts/list_changed") == 0) mcp__ttl_invalidate(c->ttl, 1);
  else if (strcmp(method, "resources/list_changed") == 0) {
    mcp__ttl_invalidate(c->ttl, 2);
    mcp__ttl_invalidate(c->ttl, 3);
  }
}

/* One page received at |now|: lowers *expires to its freshness, sets *priv
 * when it is private. */
static void ttl_page(json_object *result, int64_t now, int64_t *expires, bool *priv) {
  json_object *v = NULL;
  int64_t ttl = 0;
  if (json_object_object_get_ex(result, "ttlMs", &v) &&
      (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)))
    ttl = json_object_get_int64(v);
  if (ttl < 0) ttl = 0;
  if (ttl > INT64_MAX / 2 - now) ttl = INT64_MAX / 2 - now;
  if (now + ttl < *expires) *expires = now + ttl;
  if (!json_object_object_get_ex(result, "cacheScope", &v) ||
      !json_object_is_type(v, json_type_string) || strcmp(json_object_get_string(v), "public") != 0)
    *priv = true;
}

/*
 * Follows nextCursor; *out is one JSON array of every page's |key| items,
 * the text json-c prints for such an array.  The call's timeout (with
 * reset_on_progress: its max total) bounds the listing as a whole, each page
 * getting what is left of it; the client's list limits bound the pages,
 * items and bytes.  Pages become text as they arrive, so one page's tree
 * is held at a time.
 */
static mcp_status list_all(mcp_client *c, const char *method, const char *key,
                           const mcp_call_options *opts, char **out, mcp_error *err) {
  if (out) *out = NULL;
  if (!c || !out) return mcp__error_set(err, MCP_EINVAL, "invalid argument");
  const mcp_client_options *lo = c->opts;
  int slot = c->modern ? ttl_slot(method) : -1;
  char auth[40] = "";
  uint64_t gen = 0;
  int64_t expires = INT64_MAX;
  bool priv = false;
  if (slot >= 0) {
    mcp__transport_auth_context(c->t, auth, sizeof(auth));
    if ((*out = mcp__ttl_get(c->ttl, slot, auth, mcp__now_ms()))) return MCP_OK;
    gen = mcp__ttl_gen(c->ttl, slot); /* before the request: a list_changed after it wins */
  }
  mcp_call_options page_opts = {.timeout_ms = -1};
  if (opts) page_opts = *opts; /* borrowed pointers: valid for this call */
  int64_t timeout = effective_timeout(c, opts);
  int64_t span = page_opts.reset_on_progress ? page_opts.max_total_ms : timeout;
  int64_t deadline = span > 0 ? mcp__now_ms() + span : MCP_NO_DEADLINE;
  mcp_buf buf;
  mcp__buf_init(&buf);
  if (mcp__buf_append(&buf, "[", 1)) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  char *cursor = NULL;
  size_t count = 0, page = 0;
  mcp_status st = MCP_OK;
  /* x-mcp-header matters on the modern HTTP wire only (stdio MAY ignore). */
  mcp_xhdr_table *tab = NULL;
  if (c->modern && c->opts->s.url && strcmp(method, "tools/list") == 0 &&
      !(tab = mcp__calloc(1, sizeof(*tab)))) {
    mcp__buf_free(&buf);
    return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  }
  for (;; page++) {
    if (page >= lo->list_max_pages) {
      st = mcp__error_set(err, MCP_ETOOBIG, "%s: the list has more than %zu pages", method,
                          lo->list_max_pages);
      break;
    }
    if (deadline != MCP_NO_DEADLINE) {
      int64_t left = deadline - mcp__now_ms();
      if (left <= 0) {
        st = MCP_ETIMEDOUT;
        break;
      }
      page_opts.timeout_ms = timeout > 0 && timeout < left ? timeout : left;
      if (page_opts.reset_on_progress) page_opts.max_total_ms = left;
    }
    json_object *result = NULL, *items = NULL, *next = NULL;
    mcp_req r;
    if ((st = mcp__req_list_page(&r, method, cursor, err))) break;
    st = request_tree(c, &r, &page_opts, &result, err);
    mcp__req_clear(&r);
    if (st) break;
    if (slot >= 0) ttl_page(result, mcp__now_ms(), &expires, &priv);
    if (!json_object_object_get_ex(result, key, &items) ||
        !json_object_is_type(items, json_type_array)) {
      json_object_put(result);
      st = mcp__error_set(err, MCP_EPROTO, "%s result has no \"%s\" array", method, key);
      break;
    }
    if ((tab && (st = filter_header_tools(c, items, tab, err))) ||
        (st = append_items(&buf, items, lo, method, &count, err))) {
      json_object_put(result);
      break;
    }
    char *prev = cursor;
    cursor = NULL;
    if (json_object_object_get_ex(result, "nextCursor", &next) &&
        json_object_is_type(next, json_type_string)) {
      const char *nc = json_object_get_string(next);
      size_t nlen = (size_t)json_object_get_string_len(next);
      if (prev && strcmp(prev, nc) == 0) {
        char q[MCP_QUOTE_SHORT];
        st = mcp__error_set(err, MCP_EPROTO, "%s: server repeated cursor \"%s\"", method,
                            mcp__quote(q, sizeof(q), nc, nlen));
      } else if (!(cursor = mcp__strdup(nc))) {
        st = mcp__error_set(err, MCP_ENOMEM, "out of memory");
      }
    }
    mcp__free(prev);
    json_object_put(result);
    if (st || !cursor) break;
  }
  mcp__free(cursor);
  if (st == MCP_ETIMEDOUT && span > 0)
    st = mcp__error_set(err, MCP_ETIMEDOUT,
                        "%s: the list was not complete after %lld ms (%zu pages)", method,
                        (long long)span, page);
  if (st == MCP_OK && mcp__buf_append(&buf, "]", 1))
    st = mcp__error_set(err, MCP_ENOMEM, "out of memory");
  if (st) {
    mcp__xhdr_table_free(tab);
    mcp__buf_free(&buf);
    return st;
  }
  /* The whole list read: its annotations are what calls mirror now. */
  if (tab) mcp__transport_set_tool_headers(c->t, tab);
  if (slot >= 0) {
    if (priv) atomic_fetch_and(&c->list_public, ~(1u << slot));
    else atomic_fetch_or(&c->list_public, 1u << slot);
    /* Kept only when the authorization did not change while it was read. */
    char after[40] = "";
    mcp__transport_auth_context(c->t, after, sizeof(after));
    if (strcmp(auth, after) == 0)
      mcp__ttl_put(c->ttl, slot, gen, buf.data, buf.len, expires, priv, auth);
  }
  *out = buf.data;
  return MCP_OK;
}

/* list_all() for a host thread: entered once for all its pages. */
static mcp_status list_entered(mcp_client *c, const char *method, const char *key,
                               const mcp_call_options *opts, char **out, mcp_error *err) {
  if (c && !client_enter(c)) {
    if (out) *out = NULL;
    return freeing_error(err);
  }
  mcp_status st = list_all(c, method, key, opts, out, err);
  if (c) client_leave(c);
  return st;
}

mcp_status mcp__client_list(mcp_client *c, const char *method, const char *key,
                            const mcp_call_options *opts, char **out, mcp_error *err) {
  return list_entered(c, method, key, opts, out, err);
}

const mcp_logger *mcp__client_logger(const mcp_client *c) { return &c->opts->log; }

MCP_EXTERN mcp_status mcp_client_list_tools(mcp_client *c, const mcp_call_options *opts, char **out,
                                            mcp_error *err) {
  return list_entered(c, "tools/list", "tools", opts, out, err);
}
MCP_EXTERN mcp_status mcp_client_list_resources(mcp_client *c, const mcp_call_options *opts,
                                                char **out, mcp_error *err) {
  return list_entered(c, "resources/list", "resources", opts, out, err);
}
MCP_EXTERN mcp_status mcp_client_list_resource_templates(mcp_client *c,
                                                         const mcp_call_options *opts, char **out,
                                                         mcp_error *err) {
  return list_entered(c, "resources/templates/list", "resourceTemplates", opts, out, err);
}
MCP_EXTERN mcp_status mcp_client_list_prompts(mcp_client *c, const mcp_call_options *opts,
                                              char **out, mcp_error *err) {
  return list_entered(c, "prompts/list", "prompts", opts, out, err);
}

MCP_EXTERN mcp_status mcp_client_read_resource(mcp_client *c, const char *uri,
                                               const mcp_call_options *opts, char **result_json,
                                               mcp_error *err) {
  if (result_json) *result_json = NULL;
  if (!c || !uri || !result_json) return mcp__error_set(err, MCP_EINVAL, "invalid argument");
  mcp_req r;
  mcp_status st = call_built(c, &r, mcp__req_read_resource(&r, uri, err), opts, result_json, err);
  /* "Resource not found" is -32002 up to 2025-11-25 and -32602 (invalid
   * params) from 2026-07-28; servers of either era use either.  Both are
   * MCP_ENOTFOUND, the server's code and message kept in |err|. */
  if (st == MCP_ERPC && err &&
      (err->rpc_code == MCP_RPC_RESOURCE_NOT_FOUND || err->rpc_code == MCP_RPC_INVALID_PARAMS)) {
    err->status = MCP_ENOTFOUND;
    st = MCP_ENOTFOUND;
  }
  return st;
}

MCP_EXTERN mcp_status mcp_client_get_prompt(mcp_client *c, const char *name, const char *args_json,
                                            const mcp_call_options *opts, char **result_json,
                                            mcp_error *err) {
  if (result_json) *result_json = NULL;
  if (!c || !name || !result_json) return mcp__error_set(err, MCP_EINVAL, "invalid argument");
  mcp_req r;
  return call_built(c, &r, mcp__req_get_prompt(&r, name, args_json, err), opts, result_json, err);
}

MCP_EXTERN mcp_status mcp_client_ping(mcp_client *c, const mcp_call_options *opts, mcp_error *err) {
  if (!c) return mcp__error_set(err, MCP_EINVAL, "invalid argument");
  mcp_req r;
  char *text = NULL;
  /* 2026-07-28 has no ping: a server/discover round trip checks liveness. */
  const char *method = c->modern ? "server/discover" : "ping";
  mcp_status st = call_built(c, &r, mcp__req_generic(&r, method, NULL, err), opts, &text, err);
  mcp__free(text);
  return st;
}

MCP_EXTERN mcp_status mcp_client_notify(mcp_client *c, const char *method, const char *params_json,
                                        mcp_error *err) {
  if (!c || !method || !*method) return mcp__error_set(err, MCP_EINVAL, "invalid argument");
  json_object *params = NULL;
  mcp_status st = parse_object(params_json, "params", &params, err);
  if (st) return st;
  if (!client_enter(c)) {
    json_object_put(params);
    return freeing_error(err);
  }
  size_t len = 0;
  char *text = mcp__jsonrpc_notification(method, params, &len);
  json_object_put(params);
  int64_t t = c->opts->s.timeout_ms;
  st = send_text(c, text, len, t > 0 ? mcp__deadline_in(t) : MCP_NO_DEADLINE, err);
  client_leave(c);
  return st;
}

/* ---- async --------------------------------------------------------------- */

/* What an async call needs after it was sent: the call context for
 * progress, and the request's shape for its outcome.  A call that may ask
 * for input (a modern tools/call, prompts/get or resources/read) also
 * keeps what its retries need: the request's params and the call's
 * options (the token referenced). */
typedef struct async_ctx {
  call_ctx cc; /* first: the pending entry's user is this */
  /* One for the call (the caller's until it is sent, then the pending
   * entry's), one more while a send is reading the context: the answer
   * can complete the call on another thread before the send returns. */
  atomic_int refs;
  mcp_req shape; /* method and tool_call; params only when |mrtr| */
  char *method;  /* own copy: the host's string may go when the call returns */
  bool modern;   /* read at send: once answered, a free may run */
  bool mrtr;
  int round;     /* input_required rounds answered so far */
  bool relisted; /* a -32020 made it read the tools and resend once */
  bool reissue;  /* a read on modern HTTP not yet sent again after its
                    stream broke (reissue_read()) */
  int64_t t0;    /* when the call was made (ms), for max_total_ms */
  mcp_call_options opts;
} async_ctx;

/* Drops one reference; the last one frees. */
static void free_ctx(async_ctx *ctx) {
  if (!ctx || atomic_fetch_sub(&ctx->refs, 1) > 1) return;
  mcp__free(ctx->shape.params);
  mcp__free(ctx->method);
  if (ctx->opts.cancel) mcp_cancel_unref(ctx->opts.cancel);
  mcp__free(ctx);
}

typedef struct done_item {
  async_ctx *ctx;
  int64_t id;
  mcp_status status;
  char *text;
  size_t text_len;
  mcp_error err;
} done_item;

static void free_done(done_item *it) {
  mcp__free(it->text);
  mcp_error_clear(&it->err);
  free_ctx(it->ctx);
  mcp__free(it);
}

static mcp_status async_send(mcp_client *c, async_ctx *ctx, const mcp_req *r, mcp_error *err);

/*
 * On the lane, an async call's round |it| ended input_required: its inputs
 * answered here (host callbacks run on the lane anyway), and the retry
 * sent with the same context.  MCP_OK: the context went on with the retry
 * (the callback runs when it ends).  Otherwise |err| says why the call
 * ends now.
 */
static mcp_status next_round_async(done_item *it, mcp_error *err) {
  async_ctx *ctx = it->ctx;
  mcp_client *c = ctx->cc.c;
  mcp_status st = round_gate(&ctx->shape, &ctx->opts, ctx->t0, ctx->round, err);
  if (st) return st;
  ctx->round++;
  mcp_mrtr_round rd;
  if ((st = mcp__mrtr_parse(ctx->shape.method, it->text, it->text_len, &rd, err))) return st;
  json_object *responses = NULL;
  mcp_req retry = {0};
  st = fulfil_inputs(c, ctx->shape.method, &rd, &responses, err);
  if (st == MCP_OK) st = mcp__mrtr_retry(&ctx->shape, &rd, responses, &retry, err);
  json_object_put(responses);
  mcp__mrtr_clear(&rd);
  if (st == MCP_OK && !client_enter(c)) st = freeing_error(err);
  else if (st == MCP_OK) {
    st = async_send(c, ctx, &retry, err);
    client_leave(c);
  }
  mcp__req_clear(&retry);
  return st;
}

/* On the lane: the host's callback gets what a sync call would return. */
static void run_done(void *arg) {
  done_item *it = arg;
  async_ctx *ctx = it->ctx;
  abandoned(ctx->cc.c, ctx->shape.method, it->id, it->status);
  mcp_client *c = ctx->cc.c;
  if (stream_lost(it->status, &it->err) && ctx->reissue && ctx->round == 0) {
    /* As request_sync(): a read whose stream broke goes once more, with a
     * new id, within what is left of its timeout. */
    ctx->reissue = false;
    int64_t to = effective_timeout(c, &ctx->opts), left = 1;
    if (to > 0 && (left = to - (mcp__now_ms() - ctx->t0)) > 0) ctx->opts.timeout_ms = left;
    mcp_status st = MCP_ECLOSED;
    mcp_error serr = MCP_ERROR_INIT;
    if (left > 0 && client_enter(c)) {
      client_log(c, MCP_LOG_INFO, "%s: %s: %s; sending it again as a new request", server_label(c),
                 ctx->shape.method, it->err.message ? it->err.message : "");
      st = async_send(c, ctx, &ctx->shape, &serr);
      client_leave(c);
    }
    mcp_error_clear(&serr);
    if (st == MCP_OK) {
      it->ctx = NULL; /* it lives on in the new request's pending entry */
      free_done(it);
      return;
    } /* else the call ends with the broken stream's error */
  } else if (stream_lost(it->status, &it->err) && !ctx->reissue && ctx->modern && c->opts->s.url &&
             reissue_read(ctx->shape.method)) {
    mcp__error_mark(&it->err, MCP__ERRF_REISSUED);
  }
  if (it->status == MCP_ERPC && it->err.rpc_code == MCP_RPC_HEADER_MISMATCH && ctx->modern &&
      ctx->mrtr && ctx->shape.tool_call && ctx->round == 0 && !ctx->relisted && c->opts->s.url) {
    /* As request_result(): read the list, send the call once more (a new
     * id).  The list is read on the lane, one round trip, like the
     * handlers of an input_required round. */
    ctx->relisted = true;
    mcp_error serr = MCP_ERROR_INIT;
    mcp_status st = MCP_ECLOSED;
    if (client_enter(c)) {
      if (relist_tools(c, &ctx->opts) == MCP_OK) st = async_send(c, ctx, &ctx->shape, &serr);
      client_leave(c);
    }
    mcp_error_clear(&serr);
    if (st == MCP_OK) {
      it->ctx = NULL; /* it lives on in the resend's pending entry */
      free_done(it);
      return;
    } /* else the call ends with the server's -32020 */
  }
  mcp_result_kind kind = outcome_kind(ctx->modern, it->status, it->text, it->text_len);
  if (ctx->mrtr && kind == MCP_RESULT_INPUT_REQUIRED) {
    mcp_status st = next_round_async(it, &it->err);
    if (st == MCP_OK) {
      it->ctx = NULL; /* it lives on in the retry's pending entry */
      free_done(it);
      return;
    }
    it->err.status = st;
    ctx->cc.fn(ctx->cc.user, st, NULL, &it->err);
    free_done(it);
    return;
  }
  if (kind == MCP_RESULT_TASK && mcp__tasks_follows(c, ctx->shape.method) &&
      mcp__tasks_follow_async(c, it->text, it->text_len, &ctx->opts, ctx->shape.tool_call,
                              ctx->cc.fn, ctx->cc.user, &it->err) == MCP_OK) {
    it->text = NULL; /* the task's thread took it and calls back (mcp_tasks.h) */
    free_done(it);
    return;
  }
  char *text = NULL;
  mcp_status st = result_out(&ctx->shape, kind, it->status, it->text, it->text_len, &text, &it->err,
                             ctx->modern);
  it->text = NULL; /* result_out took it */
  if (st != MCP_OK) it->err.status = st;
  ctx->cc.fn(ctx->cc.user, st, text, st == MCP_OK ? NULL : &it->err);
  mcp__free(text);
  free_done(it);
}

static void drop_done(void *arg) { free_done(arg); }

/* Pending done callback: any thread; hands the outcome to the lane. */
static void on_async_done(void *user, int64_t id, mcp_status status, char *text, size_t len,
                          const mcp_error *err) {
  async_ctx *ctx = user;
  done_item *it = mcp__calloc(1, sizeof(*it));
  if (!it) {
    /* Last resort under memory exhaustion: the callback still runs once. */
    mcp__free(text);
    mcp_error e = MCP_ERROR_INIT;
    mcp__error_set(&e, MCP_ENOMEM, "out of memory");
    ctx->cc.fn(ctx->cc.user, MCP_ENOMEM, NULL, &e);
    mcp_error_clear(&e);
    free_ctx(ctx);
    return;
  }
  it->ctx = ctx;
  it->id = id;
  it->status = status;
  it->text = text;
  it->text_len = len;
  if (status == MCP_OK && !text && !(it->text = mcp__strdup("null"))) {
    it->status = MCP_ENOMEM;
    mcp__error_set(&it->err, MCP_ENOMEM, "out of memory");
  } else if (status == MCP_OK && !text) {
    it->text_len = 4;
  }
  if (err) mcp__error_copy(&it->err, err);
  /* Only when the lane refuses (out of memory) does the callback run here,
   * on the completing thread: running it once beats never running it. */
  if (mcp__lane_post(ctx->cc.c->lane, run_done, drop_done, it) != MCP_OK) run_done(it);
}

/*
 * Sends |r| for |ctx| without waiting.  MCP_OK: |ctx| belongs to the
 * pending entry (its callback runs once, from run_done).  Otherwise it
 * was not sent, |ctx| is still the caller's, and |err| says why.
 */
static mcp_status async_send(mcp_client *c, async_ctx *ctx, const mcp_req *r, mcp_error *err) {
  const mcp_call_options *o = &ctx->opts;
  mcp_pending_req pr;
  fill_pending_req(&pr, c, o);
  pr.done = on_async_done;
  pr.user = ctx;
  int64_t id = 0;
  /* Once added, the entry can end (answer, close, token, deadline) and
   * its callback free the call's reference at any moment; this send's
   * own reference keeps |ctx|, and |r| when it is |ctx|'s, alive. */
  atomic_fetch_add(&ctx->refs, 1);
  mcp_status st = mcp__pending_add(c->pending, &pr, &id, NULL, err);
  if (st != MCP_OK) {
    free_ctx(ctx);
    return st;
  }
  mcp_error serr = MCP_ERROR_INIT;
  if (send_req(c, r, id, o, pr.timeout_ms, &serr) == MCP_OK) {
    mcp__transport_need_reader(c->t); /* no caller will lead for it */
    free_ctx(ctx);
    return MCP_OK;
  }
  /* Not sent.  Withdraw it quietly, unless it already ended (closed or
   * cancelled meanwhile), in which case its callback runs as promised. */
  if (mcp__pending_remove(c->pending, id)) {
    st = serr.status ? serr.status : MCP_EIO;
    if (err) {
      mcp__error_copy(err, &serr);
      err->status = st;
    }
    mcp_error_clear(&serr);
    free_ctx(ctx);
    return st;
  }
  mcp_error_clear(&serr);
  free_ctx(ctx);
  return MCP_OK;
}

/* Sends |r| (its params taken when the call may need retries) without
 * waiting; |fn| runs once with the outcome. */
static mcp_status request_async_body(mcp_client *c, mcp_req *r, const mcp_call_options *o,
                                     mcp_result_fn fn, void *user, mcp_error *err) {
  async_ctx *ctx = mcp__calloc(1, sizeof(*ctx));
  if (!ctx) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  atomic_init(&ctx->refs, 1);
  fill_call_ctx(&ctx->cc, c, o);
  ctx->cc.fn = fn;
  ctx->cc.user = user;
  ctx->modern = c->modern;
  ctx->mrtr = ctx->modern && mcp__mrtr_method(r->method);
  ctx->reissue = ctx->modern && c->opts->s.url && reissue_read(r->method);
  ctx->opts = (mcp_call_options){.timeout_ms = -1};
  if (o) ctx->opts = *o;
  if (ctx->opts.cancel) mcp_cancel_ref(ctx->opts.cancel);
  if (!(ctx->method = mcp__strdup(r->method))) {
    free_ctx(ctx);
    return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  }
  ctx->shape.method = ctx->method;
  ctx->shape.known = r->known;
  ctx->shape.tool_call = r->tool_call;
  if (ctx->mrtr || ctx->reissue) {
    /* The params a retry needs, taken before the send: the answer may be
     * handled on the lane before this returns. */
    ctx->t0 = mcp__now_ms();
    ctx->shape.params = r->params;
    ctx->shape.params_len = r->params_len;
    ctx->shape.no_meta = r->no_meta;
    r->params = NULL;
  }
  mcp_status st = async_send(c, ctx, ctx->mrtr || ctx->reissue ? &ctx->shape : r, err);
  if (st != MCP_OK) free_ctx(ctx); /* else it belongs to the pending entry */
  return st;
}

/* Sends the request a constructor built (|st| its status) and clears it. */
static mcp_status call_built_async(mcp_client *c, mcp_req *r, mcp_status st,
                                   const mcp_call_options *o, mcp_result_fn fn, void *user,
                                   mcp_error *err) {
  if (st == MCP_OK && !client_enter(c)) st = freeing_error(err);
  else if (st == MCP_OK) {
    st = request_async_body(c, r, o, fn, user, err);
    client_leave(c);
  }
  mcp__req_clear(r);
  return st;
}

MCP_EXTERN mcp_status mcp_client_request_async(mcp_client *c, const char *method,
                                               const char *params_json,
                                               const mcp_call_options *opts, mcp_result_fn fn,
                                               void *user, mcp_error *err) {
  if (!c || !method || !*method || !fn) return mcp__error_set(err, MCP_EINVAL, "invalid argument");
  mcp_req r;
  return call_built_async(c, &r, mcp__req_generic(&r, method, params_json, err), opts, fn, user,
                          err);
}

MCP_EXTERN mcp_status mcp_client_call_tool_async(mcp_client *c, const char *name,
                                                 const char *args_json,
                                                 const mcp_call_options *opts, mcp_result_fn fn,
                                                 void *user, mcp_error *err) {
  if (!c || !name || !fn) return mcp__error_set(err, MCP_EINVAL, "invalid argument");
  if (mcp__tasks_legacy_maybe(c, opts)) /* a task on 2025-11-25 (mcp_tasks.h) */
    return mcp__tasks_call_legacy_async(c, name, args_json, opts, fn, user, err);
  mcp_req r;
  return call_built_async(c, &r, mcp__req_tool_call(&r, name, args_json, err), opts, fn, user, err);
}

/* ------------------------------------------------------------------------ */
/* Listen (subscriptions/listen, modern connections)                         */
/* ------------------------------------------------------------------------ */

/*
 * A 2026-07-28 server sends change notifications only on a
 * subscriptions/listen request's stream.  When the host set a
 * notification handler (the manager always does) and the server's
 * server/discover result advertises listChanged for tools, prompts or
 * resources, the client keeps one listen open for exactly those kinds
 * from the end of the connect until close; a server advertising none gets
 * no listen.  It is an async request without a deadline whose entry ends
 * only when the listen does.  Its notifications carry its id in
 * _meta.subscriptionId: they take the path unsolicited notifications take
 * on a legacy connection (list_changed coalesced, the host's handler on
 * the lane), so hosts and the manager see the same methods in both eras.
 * The acknowledgement is compared with what was asked, not handed on;
 * notifications naming a subscription that is not ours are counted as
 * protocol errors and dropped.
 *
 * How a listen ends, and what follows:
 *  - refused (a JSON-RPC error such as -32601, or an HTTP 4xx): logged;
 *    not sent again on this connection, which stays up (no list_changed
 *    from that server, as with a legacy server that sends none);
 *  - the server ends it (a listen result, its graceful end, or a
 *    notifications/cancelled naming it): logged, and opened again after
 *    the backoff below, unless its acknowledgement honoured nothing;
 *  - the stream breaks without a result (HTTP: the listen's response
 *    stream ended; a modern server has no resumption): opened again after
 *    the backoff;
 *  - the connection closes: nothing (a reconnect, e.g. the manager's after
 *    a stdio server died, connects a new client, which opens its own).
 * Backoff: 1 s doubling to 60 s, counted from the last listen that stayed
 * acknowledged for 30 s; the wait is a pending entry that is never sent
 * (its timeout is the timer), so close and free end it like any request.
 * Closing the client ends the listen: stdio sends notifications/cancelled
 * for it (waiting at most 100 ms for the pipe), HTTP closes its stream with
 * the transport.
 */
#define LISTEN_BACKOFF_MIN_MS 1000
#define LISTEN_BACKOFF_MAX_MS 60000
#define LISTEN_STABLE_MS 30000
#define LISTEN_CANCEL_WAIT_MS 100

typedef struct listen_end {
  mcp_client *c;
  int64_t id;
  mcp_status status;
  mcp_error err;
} listen_end;

static void drop_listen_end(void *arg) {
  listen_end *it = arg;
  mcp_error_clear(&it->err);
  mcp__free(it);
}

static void listen_open(mcp_client *c);

static void run_listen_reopen(void *arg) {
  mcp_client *c = arg;
  pthread_mutex_lock(&c->subs_mu);
  pthread_mutex_lock(&c->lock);
  bool open = c->listen_id != 0; /* the host opened one meanwhile */
  pthread_mutex_unlock(&c->lock);
  if (!open && atomic_load(&c->open)) listen_open(c);
  pthread_mutex_unlock(&c->subs_mu);
}

/* The backoff timer ended (any thread). */
static void listen_timer_done(void *user, int64_t id, mcp_status st, char *text, size_t len,
                              const mcp_error *err) {
  (void)id;
  (void)len;
  (void)err;
  mcp_client *c = user;
  mcp__free(text);
  pthread_mutex_lock(&c->lock);
  c->listen_ended = id;
  pthread_cond_broadcast(&c->listen_cv);
  pthread_mutex_unlock(&c->lock);
  atomic_fetch_sub(&c->listen_entries, 1);
  /* Only its own deadline re-opens; a close ends it with MCP_ECLOSED. */
  if (st == MCP_ETIMEDOUT) (void)mcp__lane_post(c->lane, run_listen_reopen, NULL, c);
}

/* Opens the listen again after the backoff (on the lane). */
static void listen_again(mcp_client *c, int64_t lived_ms) {
  if (lived_ms >= LISTEN_STABLE_MS) c->listen_failures = 0;
  int64_t delay = LISTEN_BACKOFF_MIN_MS;
  for (int i = 0; i < c->listen_failures && delay < LISTEN_BACKOFF_MAX_MS; i++) delay *= 2;
  if (delay > LISTEN_BACKOFF_MAX_MS) delay = LISTEN_BACKOFF_MAX_MS;
  c->listen_failures++;
  mcp_pending_req pr = {.timeout_ms = delay, .done = listen_timer_done, .user = c};
  int64_t id = 0;
  atomic_fetch_add(&c->listen_entries, 1);
  if (mcp__pending_add(c->pending, &pr, &id, NULL, NULL) != MCP_OK) {
    atomic_fetch_sub(&c->listen_entries, 1);
    return; /* closed meanwhile */
  }
  client_log(c, MCP_LOG_INFO, "%s: opening subscriptions/listen again in %lld ms", server_label(c),
             (long long)delay);
}

/* On the lane: listen |it->id| ended; see above for what follows. */
static void run_listen_end(void *arg) {
  listen_end *it = arg;
  mcp_client *c = it->c;
  pthread_mutex_lock(&c->lock);
  bool current = c->listen_id == it->id;
  if (current) {
    c->listen_old = it->id;
    c->listen_old_live = false;
    c->listen_id = 0;
  }
  int64_t acked_at = c->listen_acked_at;
  unsigned honoured = c->listen_honoured;
  pthread_mutex_unlock(&c->lock);
  if (!current || !atomic_load(&c->open) || it->status == MCP_ECLOSED) {
    drop_listen_end(it);
    return;
  }
  const char *label = server_label(c);
  const char *why = it->err.message ? it->err.message : mcp_strerror(it->status);
  int64_t lived = acked_at ? mcp__now_ms() - acked_at : 0;
  if (it->status == MCP_ERPC ||
      (it->status == MCP_EHTTP && it->err.http_status >= 400 && it->err.http_status < 500)) {
    /* A server without listen: soft, the connection stays (fastmcp#4995). */
    client_log(c, MCP_LOG_WARN,
               "%s refused subscriptions/listen (%s%s%d): its list_changed notifications will "
               "not arrive; the connection stays up",
               label, why, it->status == MCP_ERPC ? ", code " : ", HTTP ",
               it->status == MCP_ERPC ? it->err.rpc_code : it->err.http_status);
  } else if (it->status == MCP_OK || it->status == MCP_ECANCELLED) {
    client_log(c, MCP_LOG_INFO, "%s ended subscriptions/listen %lld (%s)", label, (long long)it->id,
               it->status == MCP_OK ? "a listen result: a graceful end" : why);
    if (acked_at && !honoured)
      client_log(c, MCP_LOG_INFO, "%s: not opened again: the server honoured none of it", label);
    else listen_again(c, lived);
  } else {
    client_log(c, MCP_LOG_INFO, "%s: subscriptions/listen %lld broke off: %s", label,
               (long long)it->id, why);
    listen_again(c, lived);
  }
  drop_listen_end(it);
}

/* The listen's pending entry ended (any thread): the rest on the lane. */
static void listen_done(void *user, int64_t id, mcp_status st, char *text, size_t len,
                        const mcp_error *err) {
  (void)len;
  mcp_client *c = user;
  mcp__free(text);
  atomic_fetch_sub(&c->listen_entries, 1);
  listen_end *it = mcp__calloc(1, sizeof(*it));
  if (!it) return;
  it->c = c;
  it->id = id;
  it->status = st;
  it->err = (mcp_error)MCP_ERROR_INIT;
  if (err) mcp__error_copy(&it->err, err);
  if (mcp__lane_post(c->lane, run_listen_end, drop_listen_end, it) != MCP_OK) drop_listen_end(it);
}

/* Sends a subscriptions/listen for c->listen_kinds and c->subs
 * (connecting thread, lane or a host thread in a subscribe call; the
 * caller holds subs_mu, except while connecting). */
static void listen_open(mcp_client *c) {
  const char **ids = c->nwatch ? mcp__calloc(c->nwatch, sizeof(*ids)) : NULL;
  for (size_t i = 0; ids && i < c->nwatch; i++) ids[i] = c->watch[i].id;
  char *params = c->nwatch && !ids
                     ? NULL
                     : mcp__listen_params_tasks(c->listen_kinds, (const char *const *)c->subs,
                                                c->nsubs, ids, ids ? c->nwatch : 0);
  mcp__free(ids);
  mcp_req r;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = params ? mcp__req_generic(&r, "subscriptions/listen", params, &err)
                         : mcp__error_set(&err, MCP_ENOMEM, "out of memory");
  mcp__free(params);
  if (st != MCP_OK) {
    client_log(c, MCP_LOG_WARN, "%s: subscriptions/listen not sent: %s", server_label(c),
               err.message ? err.message : mcp_strerror(st));
    mcp_error_clear(&err);
    return;
  }
  /* No deadline: it lasts as long as the subscription. */
  mcp_pending_req pr = {.timeout_ms = 0, .done = listen_done, .user = c};
  int64_t id = 0;
  atomic_fetch_add(&c->listen_entries, 1);
  if ((st = mcp__pending_add(c->pending, &pr, &id, NULL, &err)) != MCP_OK) {
    atomic_fetch_sub(&c->listen_entries, 1);
    pthread_mutex_lock(&c->lock);
    c->listen_old_live = false;
    pthread_mutex_unlock(&c->lock);
    client_log(c, MCP_LOG_DEBUG, "%s: subscriptions/listen not opened: %s", server_label(c),
               err.message ? err.message : mcp_strerror(st));
    mcp__req_clear(&r);
    mcp_error_clear(&err);
    return; /* closed */
  }
  pthread_mutex_lock(&c->lock);
  c->listen_id = id;
  c->listen_acked_at = 0;
  c->listen_honoured = 0;
  pthread_mutex_unlock(&c->lock);
  st = send_req(c, &r, id, NULL, c->opts->s.timeout_ms, &err);
  mcp__req_clear(&r);
  if (st == MCP_OK) {
    client_log(c, MCP_LOG_DEBUG,
               "%s: subscriptions/listen %lld sent (%zu resource URIs, %zu tasks)", server_label(c),
               (long long)id, c->nsubs, c->nwatch);
    mcp__transport_need_reader(c->t);
  } else if (mcp__pending_remove(c->pending, id)) {
    atomic_fetch_sub(&c->listen_entries, 1);
    pthread_mutex_lock(&c->lock);
    if (c->listen_id == id) {
      c->listen_id = 0;
      c->listen_old_live = false;
    }
    pthread_mutex_unlock(&c->lock);
    client_log(c, st == MCP_ECLOSED ? MCP_LOG_DEBUG : MCP_LOG_WARN,
               "%s: subscriptions/listen %lld not sent: %s", server_label(c), (long long)id,
               err.message ? err.message : mcp_strerror(st));
  } else {
    client_log(c, MCP_LOG_DEBUG,
               "%s: subscriptions/listen %lld: its send failed (%s) after it "
               "ended",
               server_label(c), (long long)id, err.message ? err.message : mcp_strerror(st));
  }
  mcp_error_clear(&err);
}

/* After a modern connect: the listen the rule above calls for, if any. */
static void listen_start(mcp_client *c) {
  unsigned adv = c->server_info ? mcp__listen_advertised(c->server_info, strlen(c->server_info))
                                : 0;
  c->listen_kinds = c->opts->notify_fn ? adv : 0;
  if (!c->listen_kinds) {
    client_log(c, MCP_LOG_DEBUG, "%s: no subscriptions/listen (%s)", server_label(c),
               c->opts->notify_fn ? "the server advertises no listChanged"
                                  : "no notification handler");
    return;
  }
  listen_open(c);
}

/* Closing: the open listen ends (see above).  Host thread, before the
 * transport closes. */
static void listen_stop(mcp_client *c) {
  pthread_mutex_lock(&c->lock);
  int64_t id = c->listen_id;
  if (id) c->listen_old = id;
  c->listen_old_live = false;
  c->listen_id = 0;
  pthread_mutex_unlock(&c->lock);
  if (!id || c->opts->s.url) return; /* HTTP: closing the transport closes the stream */
  json_object *params = json_object_new_object();
  if (!params || mcp__json_add(params, "requestId", json_object_new_int64(id)) ||
      mcp__json_add(params, "reason", json_object_new_string("client closed"))) {
    json_object_put(params);
    return;
  }
  size_t len = 0;
  char *text = mcp__jsonrpc_notification("notifications/cancelled", params, &len);
  json_object_put(params);
  mcp_error err = MCP_ERROR_INIT;
  (void)send_text(c, text, len, mcp__deadline_in(LISTEN_CANCEL_WAIT_MS), &err);
  mcp_error_clear(&err);
}

/*
 * Resource subscriptions.  Legacy: resources/subscribe and
 * resources/unsubscribe, the updates arriving unsolicited.  Modern: the
 * URIs are carried by the listen (its "resourceSubscriptions"); a change
 * ends the open listen (stdio: notifications/cancelled; HTTP: its stream
 * closes) and opens one with the new set at once.  Either way the updates
 * (notifications/resources/updated) reach the notification handler.  The
 * set belongs to this connection (a new connection starts empty).
 */
static void listen_restart(mcp_client *c) {
  bool again = c->listen_kinds || c->nsubs || c->nwatch;
  pthread_mutex_lock(&c->lock);
  int64_t id = c->listen_id;
  if (id) {
    c->listen_old = id;
    c->listen_old_live = again;
  }
  c->listen_id = 0;
  pthread_mutex_unlock(&c->lock);
  if (id) {
    mcp__transport_abandon(c->t, id);
    if (!c->opts->s.url) {
      json_object *params = json_object_new_object();
      if (params && !mcp__json_add(params, "requestId", json_object_new_int64(id)) &&
          !mcp__json_add(params, "reason", json_object_new_string("subscriptions changed"))) {
        size_t len = 0;
        char *text = mcp__jsonrpc_notification("notifications/cancelled", params, &len);
        post_text(c, text, len, "notifications/cancelled");
      }
      json_object_put(params);
    }
    mcp_error e = MCP_ERROR_INIT;
    mcp__error_set(&e, MCP_ECANCELLED, "ended by the client: its subscriptions changed");
    mcp__pending_complete(c->pending, id, MCP_ECANCELLED, NULL, 0, &e);
    mcp_error_clear(&e);
  }
  if (again) listen_open(c);
  else
    client_log(c, MCP_LOG_DEBUG, "%s: subscriptions/listen closed: nothing left to listen for",
               server_label(c));
}

/*
 * After a subscription change re-opened the listen: waits, within the
 * call's timeout, for the server to acknowledge it, so that a change the
 * host makes after subscribe returns is one the server reports (as a
 * legacy resources/subscribe answers first).  MCP_OK also when no listen
 * is open (its send failed: logged) or it ended without an
 * acknowledgement (a server without listen: logged, soft).
 */
static mcp_status listen_wait_ack(mcp_client *c, const mcp_call_options *opts, mcp_error *err) {
  int64_t t = effective_timeout(c, opts);
  struct timespec until;
  clock_gettime(CLOCK_MONOTONIC, &until);
  if (t > 0) {
    until.tv_sec += t / 1000;
    until.tv_nsec += (long)(t % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
  }
  mcp_status st = MCP_OK;
  pthread_mutex_lock(&c->lock);
  int64_t id = c->listen_id;
  while (id && c->listen_id == id && !c->listen_acked_at && c->listen_ended != id) {
    int rc = t > 0 ? pthread_cond_timedwait(&c->listen_cv, &c->lock, &until)
                   : pthread_cond_wait(&c->listen_cv, &c->lock);
    if (rc == ETIMEDOUT) {
      st = mcp__error_set(err, MCP_ETIMEDOUT,
                          "%s did not acknowledge subscriptions/listen %lld within %lld ms",
                          server_label(c), (long long)id, (long long)t);
      break;
    }
  }
  pthread_mutex_unlock(&c->lock);
  return st;
}

static mcp_status change_subscription(mcp_client *c, const char *uri, bool on,
                                      const mcp_call_options *opts, mcp_error *err) {
  if (!c || !uri) return mcp__error_set(err, MCP_EINVAL, "invalid argument");
  if (!c->opts->notify_fn)
    return mcp__error_set(err, MCP_ESTATE,
                          "no notification handler to receive resource updates "
                          "(mcp_client_options_set_notification_handler)");
  if (!c->modern) {
    json_object *p = json_object_new_object();
    if (!p || mcp__json_add(p, "uri", json_object_new_string(uri))) {
      json_object_put(p);
      return mcp__error_set(err, MCP_ENOMEM, "out of memory");
    }
    char *params = mcp__json_dup_string(p, NULL);
    json_object_put(p);
    if (!params) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
    char *res = NULL;
    mcp_status st = mcp_client_request(c, on ? "resources/subscribe" : "resources/unsubscribe",
                                       params, opts, &res, err);
    mcp__free(params);
    mcp_free(res);
    return st;
  }
  if (!client_enter(c)) return mcp__error_set(err, MCP_ECLOSED, "client closed");
  mcp_status st = MCP_OK;
  if (on &&
      !mcp__listen_can_subscribe(c->server_info, c->server_info ? strlen(c->server_info) : 0)) {
    st = mcp__error_set(err, MCP_ESTATE,
                        "%s does not offer resource subscriptions "
                        "(no capabilities.resources.subscribe)",
                        server_label(c));
    client_leave(c);
    return st;
  }
  pthread_mutex_lock(&c->subs_mu);
  size_t i = 0;
  while (i < c->nsubs && strcmp(c->subs[i], uri) != 0) i++;
  bool changed = false;
  if (on && i == c->nsubs) {
    char **n = mcp__realloc(c->subs, (c->nsubs + 1) * sizeof(*n));
    char *u = n ? mcp__strdup(uri) : NULL;
    if (n) c->subs = n;
    if (!u) st = mcp__error_set(err, MCP_ENOMEM, "out of memory");
    else {
      c->subs[c->nsubs++] = u;
      changed = true;
    }
  } else if (!on && i < c->nsubs) {
    mcp__free(c->subs[i]);
    c->subs[i] = c->subs[--c->nsubs];
    changed = true;
  }
  if (changed && atomic_load(&c->open)) {
    listen_restart(c);
    st = listen_wait_ack(c, opts, err);
  } else if (!atomic_load(&c->open)) {
    st = mcp__error_set(err, MCP_ECLOSED, "connection closed");
  }
  pthread_mutex_unlock(&c->subs_mu);
  client_leave(c);
  return st;
}

/*
 * Tasks (mcp_tasks.h): a modern task being waited on is carried by the
 * listen (its "taskIds", re-opened at once as for a resource
 * subscription), so that the server can push its states
 * (notifications/tasks) instead of the waiter polling for each.  Not
 * waited for: polling goes on meanwhile, and on a server that refuses the
 * listen or never pushes.
 */
void mcp__client_task_watch(mcp_client *c, const char *id, bool on) {
  if (!id || !*id || !c->modern || !mcp__client_has_extension(c, MCP_TASKS_EXTENSION)) return;
  pthread_mutex_lock(&c->subs_mu);
  pthread_mutex_lock(&c->lock);
  size_t i = 0;
  while (i < c->nwatch && strcmp(c->watch[i].id, id) != 0) i++;
  bool changed = false;
  if (on && i == c->nwatch) {
    task_watch *n = mcp__realloc(c->watch, (c->nwatch + 1) * sizeof(*n));
    char *d = n ? mcp__strdup(id) : NULL;
    if (n) c->watch = n;
    if (d) {
      c->watch[c->nwatch++] = (task_watch){.id = d, .pushed = NULL};
      changed = true;
    }
  } else if (!on && i < c->nwatch) {
    mcp__free(c->watch[i].id);
    mcp__free(c->watch[i].pushed);
    c->watch[i] = c->watch[--c->nwatch];
    changed = true;
  }
  pthread_mutex_unlock(&c->lock);
  if (changed && atomic_load(&c->open)) listen_restart(c);
  pthread_mutex_unlock(&c->subs_mu);
}

/* The state pushed for |id| (taken), or NULL.  Caller holds |lock|. */
static char *task_take_locked(mcp_client *c, const char *id) {
  for (size_t i = 0; i < c->nwatch; i++)
    if (strcmp(c->watch[i].id, id) == 0) {
      char *out = c->watch[i].pushed;
      c->watch[i].pushed = NULL;
      return out;
    }
  return NULL;
}

/* Wakes the task waiters (a close; a cancel listener, which runs under its
 * token's lock: the token's lock comes before |lock|). */
static void task_wake(mcp_client *c) {
  pthread_mutex_lock(&c->lock);
  pthread_cond_broadcast(&c->task_cv);
  pthread_mutex_unlock(&c->lock);
}

static void task_cancel_wake(void *arg) { task_wake(arg); }

char *mcp__client_task_sleep(mcp_client *c, const char *id, mcp_cancel *cancel, int64_t until) {
  /* Registered outside |lock| (lock order above); a token that already
   * fired is seen by the test below. */
  mcp_cancel_listener l = {0};
  bool listening = cancel && mcp__cancel_listen(cancel, &l, task_cancel_wake, c) == MCP_OK;
  struct timespec ts = mcp__ts_from_ms(until);
  char *out = NULL;
  pthread_mutex_lock(&c->lock);
  /* Each waker changes what is tested here before it broadcasts under
   * |lock|: no wake-up is lost between the test and the wait. */
  while (!(id && (out = task_take_locked(c, id))) && atomic_load(&c->open) &&
         !(cancel && mcp_cancel_is_fired(cancel)) && mcp__now_ms() < until)
    if (pthread_cond_timedwait(&c->task_cv, &c->lock, &ts) == ETIMEDOUT) {
      if (id) out = task_take_locked(c, id);
      break;
    }
  pthread_mutex_unlock(&c->lock);
  if (listening) mcp__cancel_unlisten(cancel, &l);
  return out;
}

/* A notifications/tasks on our listen: kept for the task's waiter (the
 * latest state wins), dropped for a task nobody waits for. */
static bool task_pushed(mcp_client *c, json_object *params) {
  json_object *id = NULL;
  if (!params || !json_object_object_get_ex(params, "taskId", &id) ||
      !json_object_is_type(id, json_type_string))
    return true;
  const char *text = json_object_to_json_string_ext(params, JSON_C_TO_STRING_PLAIN |
                                                                JSON_C_TO_STRING_NOSLASHESCAPE);
  pthread_mutex_lock(&c->lock);
  for (size_t i = 0; i < c->nwatch; i++)
    if (strcmp(c->watch[i].id, json_object_get_string(id)) == 0) {
      char *d = text ? mcp__strdup(text) : NULL;
      if (d) {
        mcp__free(c->watch[i].pushed);
        c->watch[i].pushed = d;
        pthread_cond_broadcast(&c->task_cv); /* its waiter takes it */
      }
      break;
    }
  pthread_mutex_unlock(&c->lock);
  return true;
}

MCP_EXTERN mcp_status mcp_client_subscribe_resource(mcp_client *c, const char *uri,
                                                    const mcp_call_options *opts, mcp_error *err) {
  return change_subscription(c, uri, true, opts, err);
}

MCP_EXTERN mcp_status mcp_client_unsubscribe_resource(mcp_client *c, const char *uri,
                                                      const mcp_call_options *opts,
                                                      mcp_error *err) {
  return change_subscription(c, uri, false, opts, err);
}

/*
 * On the upcall thread, for a notification |m| on a modern connection:
 * true when it was the listen's own business (its acknowledgement, the
 * server ending it) or is dropped (a subscription not ours); false when
 * it goes on to the host like any notification.
 */
static bool listen_route(mcp_client *c, const mcp_msg *m) {
  int64_t sid = 0;
  int has = mcp__listen_sub_id(m->params, &sid);
  if (has == 0) {
    /* The server ends a listen with notifications/cancelled naming it. */
    json_object *rid = NULL;
    int64_t id = 0;
    if (strcmp(m->method, "notifications/cancelled") != 0 || !m->params ||
        !json_object_object_get_ex(m->params, "requestId", &rid) || !mcp__jsonrpc_id_int(rid, &id))
      return false;
    pthread_mutex_lock(&c->lock);
    bool mine = id && id == c->listen_id;
    pthread_mutex_unlock(&c->lock);
    if (!mine) return false;
    json_object *reason = NULL;
    char q[MCP_QUOTE_SHORT] = "";
    if (json_object_object_get_ex(m->params, "reason", &reason) &&
        json_object_is_type(reason, json_type_string))
      mcp__quote(q, sizeof(q), json_object_get_string(reason),
                 (size_t)json_object_get_string_len(reason));
    mcp_error e = MCP_ERROR_INIT;
    mcp__error_set(&e, MCP_ECANCELLED, "notifications/cancelled from the server%s%s",
                   q[0] ? ": " : "", q);
    mcp__pending_complete(c->pending, id, MCP_ECANCELLED, NULL, 0, &e);
    mcp_error_clear(&e);
    return true;
  }
  pthread_mutex_lock(&c->lock);
  bool mine = has > 0 && sid && sid == c->listen_id;
  bool old = has > 0 && sid && sid == c->listen_old;
  /* The listen it replaced, until the new one is acknowledged: what the
   * server sent on it before it read our change (stdio answers in order)
   * is still the host's, as a legacy update before an unsubscribe's
   * answer is.  (Also while the new one is not sent yet: listen_id is 0
   * then, between the cancel and the send.) */
  bool old_live = old && c->listen_old_live;
  bool ack = mine && strcmp(m->method, "notifications/subscriptions/acknowledged") == 0;
  unsigned honoured = 0;
  bool again = false;
  if (ack) {
    honoured = mcp__listen_honoured(m->params);
    c->listen_old_live = false;
    c->listen_acked_at = mcp__now_ms();
    c->listen_honoured = honoured;
    again = c->listen_was_acked;
    c->listen_was_acked = true;
    pthread_cond_broadcast(&c->listen_cv);
  }
  pthread_mutex_unlock(&c->lock);
  /* A listen opened again: a list_changed may have gone by without one. */
  if (again)
    for (int i = 0; i < MCP_TTL_SLOTS; i++) mcp__ttl_invalidate(c->ttl, i);
  if (ack) {
    char asked[64], missing[64];
    unsigned not_honoured = c->listen_kinds & ~honoured;
    if (not_honoured)
      client_log(c, MCP_LOG_INFO,
                 "%s acknowledged subscriptions/listen %lld without %s (asked for %s): no "
                 "notifications of those kinds will arrive",
                 server_label(c), (long long)sid,
                 mcp__listen_kind_names(not_honoured, missing, sizeof(missing)),
                 mcp__listen_kind_names(c->listen_kinds, asked, sizeof(asked)));
    else
      client_log(c, MCP_LOG_DEBUG, "%s acknowledged subscriptions/listen %lld (%s)",
                 server_label(c), (long long)sid,
                 mcp__listen_kind_names(honoured, asked, sizeof(asked)));
    return true;
  }
  if ((mine || old_live) && strcmp(m->method, "notifications/tasks") == 0)
    return task_pushed(c, m->params);
  if (mine || old_live) return false;
  if (old) return true; /* a late one from a listen that ended */
  atomic_fetch_add(&c->n_proto, 1);
  if (!atomic_exchange(&c->sub_warned, true)) {
    char q[MCP_QUOTE_SHORT];
    client_log(c, MCP_LOG_WARN,
               "%s sent %s for a subscription that is not ours; dropped (and any more such, "
               "counted as protocol errors)",
               server_label(c), mcp__quote(q, sizeof(q), m->method, strlen(m->method)));
  }
  return true;
}

/* ------------------------------------------------------------------------ */
/* Lifecycle                                                                 */
/* ------------------------------------------------------------------------ */

static json_object *build_capabilities(const mcp_client_options *o) {
  json_object *caps = json_object_new_object();
  if (!caps) return NULL;
  static const struct {
    const char *method, *cap, *dflt;
  } implied[] = {
      {"roots/list", "roots", "{\"listChanged\":true}"},
      {"sampling/createMessage", "sampling", "{}"},
      {"elicitation/create", "elicitation", "{}"},
  };
  for (size_t i = 0; i < sizeof(implied) / sizeof(implied[0]); i++) {
    bool has = false;
    for (size_t h = 0; h < o->nhandlers; h++)
      if (strcmp(o->handlers[h].method, implied[i].method) == 0) has = true;
    if (!has) continue;
    const char *json = implied[i].dflt;
    for (size_t k = 0; k < o->ncaps; k++)
      if (strcmp(o->caps[k].name, implied[i].cap) == 0) json = o->caps[k].json;
    json_object *v = mcp__jsonrpc_parse(json, strlen(json), NULL);
    if (!v || json_object_object_add(caps, implied[i].cap, v)) {
      json_object_put(v);
      json_object_put(caps);
      return NULL;
    }
  }
  /* Capabilities set explicitly that no handler implies (experimental, ...). */
  for (size_t k = 0; k < o->ncaps; k++) {
    if (json_object_object_get_ex(caps, o->caps[k].name, NULL)) continue;
    bool implied_cap = false;
    for (size_t i = 0; i < sizeof(implied) / sizeof(implied[0]); i++)
      if (strcmp(implied[i].cap, o->caps[k].name) == 0) implied_cap = true;
    if (implied_cap) continue; /* declared only together with its handler */
    json_object *v = mcp__jsonrpc_parse(o->caps[k].json, strlen(o->caps[k].json), NULL);
    if (!v || json_object_object_add(caps, o->caps[k].name, v)) {
      json_object_put(v);
      json_object_put(caps);
      return NULL;
    }
  }
  return caps;
}

static mcp_status initialize(mcp_client *c, const char *offer, mcp_error *err) {
  json_object *params = json_object_new_object();
  json_object *info = json_object_new_object();
  json_object *caps = build_capabilities(c->opts);
  if (!params || !info || !caps ||
      mcp__json_add(
          info, "name",
          json_object_new_string(c->opts->client_name ? c->opts->client_name : "mcpconn")) ||
      mcp__json_add(info, "version",
                    json_object_new_string(c->opts->client_version ? c->opts->client_version
                                                                   : PACKAGE_VERSION)) ||
      mcp__json_add(params, "protocolVersion", json_object_new_string(offer))) {
    json_object_put(params);
    json_object_put(info);
    json_object_put(caps);
    return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  }
  int bad = mcp__json_add(params, "capabilities", caps); /* caps is stolen */
  if (bad || mcp__json_add(params, "clientInfo", info)) {
    if (bad) json_object_put(info);
    json_object_put(params);
    return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  }
  json_object *result = NULL;
  mcp_call_options o = {.timeout_ms = c->opts->s.timeout_ms, .cancel = c->hooks.connect_cancel};
  mcp_req r;
  mcp_status st = mcp__req_tree(&r, "initialize", params, err);
  if (st == MCP_OK) st = request_tree(c, &r, &o, &result, err);
  mcp__req_clear(&r);
  if (st == MCP_ETIMEDOUT) {
    /* Over HTTP the server may never have been reached: say which stage
     * of the connection stalled, not that initialize went unanswered. */
    char stall[400];
    if (c->opts->s.url && mcp__http_transport_stall(c->t, stall, sizeof(stall)))
      return mcp__error_set(err, st, "%s", stall);
    return mcp__error_set(err, st, "server did not answer initialize within %lld ms",
                          (long long)c->opts->s.timeout_ms);
  }
  if (st != MCP_OK) return st;
  json_object *v = NULL;
  const char *version = NULL;
  if (json_object_object_get_ex(result, "protocolVersion", &v) &&
      json_object_is_type(v, json_type_string))
    version = json_object_get_string(v);
  if (!version) {
    json_object_put(result);
    return mcp__error_set(err, MCP_EPROTO, "initialize result has no protocolVersion");
  }
  bool supported = false;
  for (size_t i = 0; mcp__protocol_versions[i]; i++)
    if (strcmp(version, mcp__protocol_versions[i]) == 0) supported = true;
  if (!supported) {
    char q[MCP_QUOTE_SHORT];
    st = mcp__error_set(err, MCP_EVERSION,
                        "server chose protocol version \"%s\"; mcpconn supports 2025-11-25, "
                        "2025-06-18 and 2025-03-26",
                        mcp__quote(q, sizeof(q), version, strlen(version)));
    json_object_put(result);
    return st;
  }
  c->protocol_version = mcp__strdup(version);
  c->server_info = mcp__json_dup_string(result, NULL);
  json_object_put(result);
  if (!c->protocol_version || !c->server_info)
    return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  size_t len = 0;
  char *text = mcp__jsonrpc_notification("notifications/initialized", NULL, &len);
  int64_t t = c->opts->s.timeout_ms;
  mcp_status st2 = send_text(c, text, len, t > 0 ? mcp__deadline_in(t) : MCP_NO_DEADLINE, err);
  if (st2 == MCP_OK) mcp__transport_ready(c->t, c->protocol_version);
  return st2;
}

/* Starts the transport the options name (stdio child or HTTP client). */
static mcp_status start_transport(mcp_client *c, const mcp_client_hooks *hooks, mcp_error *err) {
  mcp_status st;
  static const mcp_transport_callbacks cbs = {.on_message = on_message,
                                              .on_error = on_error,
                                              .on_close = on_close,
                                              .on_request_error = on_request_error,
                                              .on_request_hold = on_request_hold,
                                              .on_oversize = on_oversize};
  const mcp_server_settings *set = &c->opts->s;
  if (set->url) {
    mcp_http_transport_config hc = {.settings = set, .oauth = c->opts->oauth};
    hc.connect_timeout_ms = set->timeout_ms;
    if ((st = mcp__http_transport_new(&hc, &cbs, c, &c->t, err))) return st;
    /* The manager warns once per server itself (not per reconnect). */
    if (!hooks && set->tls.insecure && strncmp(set->url, "https:", 6) == 0)
      client_log(c, MCP_LOG_WARN,
                 "TLS certificate verification is off (insecure) for %.*s: "
                 "the server's identity is not checked",
                 (int)strcspn(set->url, "?#"), set->url);
  } else {
    bool none;
    char **envp = mcp__settings_envp(set, &none);
    if (!envp && !none) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
    mcp_stdio_config cfg = {0};
    cfg.argv = (const char *const *)set->argv;
    cfg.cwd = set->cwd;
    cfg.env = (const char *const *)envp;
    cfg.env_inherit = set->env_inherit ? set->env_inherit : MCP_ENV_INHERIT_ALL;
    cfg.max_line = set->max_message;
    st = mcp__stdio_transport_new(&cfg, &cbs, c, &c->t, err);
    mcp__settings_envp_free(envp);
    if (st) return st;
  }
  return MCP_OK;
}

/* ---- era -------------------------------------------------------------------- */

/* The members of a modern request's _meta at |version| into c->meta. */
static mcp_status build_meta(mcp_client *c, const char *version, mcp_error *err) {
  json_object *caps = build_capabilities(c->opts);
  char *caps_text = caps ? mcp__json_dup_string(caps, NULL) : NULL;
  json_object_put(caps);
  mcp__free(c->meta);
  c->meta = caps_text
                ? mcp__era_meta(version, caps_text,
                                c->opts->client_name ? c->opts->client_name : "mcpconn",
                                c->opts->client_version ? c->opts->client_version : PACKAGE_VERSION,
                                &c->meta_len)
                : NULL;
  mcp__free(caps_text);
  return c->meta ? MCP_OK : mcp__error_set(err, MCP_ENOMEM, "out of memory");
}

/* A stdio probe waits at most this long (silence is legacy evidence); the
 * SDKs use 5 to 10 s. */
#define PROBE_TIMEOUT_MS 10000

/* server/discover at |version|, with the modern _meta; the outcome as the
 * judge wants it (*text the result on MCP_OK). */
static mcp_status probe(mcp_client *c, const char *version, char **text, size_t *len,
                        mcp_error *err) {
  mcp_status st = build_meta(c, version, err);
  if (st) return st;
  if ((st = mcp__transport_set_era(c->t, version))) return mcp__error_set(err, st, "out of memory");
  bool was = c->modern;
  c->modern = true; /* the probe is a modern request */
  int64_t t = c->opts->s.timeout_ms;
  if (!c->opts->s.url && (t <= 0 || t > PROBE_TIMEOUT_MS)) t = PROBE_TIMEOUT_MS;
  mcp_call_options o = {.timeout_ms = t, .cancel = c->hooks.connect_cancel};
  mcp_req r;
  if ((st = mcp__req_generic(&r, "server/discover", NULL, err)) == MCP_OK)
    st = request_sync(c, &r, &o, text, len, err);
  mcp__req_clear(&r);
  c->modern = was;
  char stall[400];
  if (st == MCP_ETIMEDOUT && c->opts->s.url &&
      mcp__http_transport_stall(c->t, stall, sizeof(stall)))
    return mcp__error_set(err, st, "%s", stall); /* which stage of the connection stalled */
  return st;
}

/* The probe said modern: adopt |version| and the discover result. */
static mcp_status adopt_modern(mcp_client *c, const char *version, char *result, mcp_error *err) {
  c->modern = true;
  atomic_store(&c->sub_route, true);
  mcp__free(c->protocol_version);
  mcp__free(c->server_info);
  c->protocol_version = mcp__strdup(version);
  c->server_info = result; /* the DiscoverResult: capabilities as in initialize's */
  if (!c->protocol_version) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  mcp__transport_ready(c->t, version);
  return MCP_OK;
}

/* A stdio server that exited on the probe, or stayed silent, runs legacy on
 * a fresh process: the old one is gone or may be wedged by the unknown
 * request. */
static mcp_status respawn(mcp_client *c, mcp_error *err) {
  mcp__transport_close(c->t);
  mcp__transport_free(c->t); /* joins its reader: no more upcalls */
  c->t = NULL;
  /* What the old process's messages queued runs now; the old process's
   * close may have closed the table for good: both start afresh. */
  mcp__lane_free(c->lane);
  c->lane = NULL;
  mcp__pending_free(c->pending);
  c->pending = NULL;
  atomic_store(&c->open, true);
  atomic_store(&c->lost, false);
  pthread_mutex_lock(&c->lock);
  mcp__free(c->close_message);
  c->close_message = NULL;
  pthread_mutex_unlock(&c->lock);
  if (!(c->pending = mcp__pending_new()) || !(c->lane = mcp__lane_new(c->workers)))
    return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  client_log(c, MCP_LOG_DEBUG, "%s: starting the server again for initialize", server_label(c));
  return start_transport(c, NULL, err);
}

/*
 * Decides the server's era (mcp_era.h) and finishes the connect: the probe
 * and a modern start, or initialize.  Mode legacy never probes; mode modern
 * never falls back.  The probe is the same over stdio and HTTP; what differs
 * is what counts as evidence (mcp__era_judge) and that a stdio server is
 * started again after a probe it did not survive.
 */
static mcp_status probe_era(mcp_client *c, mcp_era_mode mode, const char *version, mcp_error *err);

static mcp_status connect_era(mcp_client *c, mcp_error *err) {
  mcp_era_mode mode;
  const char *pinned;
  if (!mcp__era_parse_mode(c->opts->s.protocol, &mode, &pinned)) mode = MCP_ERA_AUTO;
  /* The HTTP+SSE transport (2024-11-05) exists only in the legacy era. */
  bool sse = c->opts->s.url && c->opts->s.http_kind == MCP_HTTP_TRANSPORT_LEGACY_SSE;
  if (sse && mode == MCP_ERA_MODERN)
    return mcp__error_set(err, MCP_ECONFIG,
                          "%s: the legacy HTTP+SSE transport cannot speak MCP 2026-07-28; "
                          "use Streamable HTTP or protocol \"auto\"",
                          server_label(c));
  if (mode == MCP_ERA_LEGACY || sse)
    return initialize(c, pinned ? pinned : mcp__protocol_versions[0], err);
  const char *version = pinned ? pinned : mcp__modern_versions[0];
  atomic_store(&c->probing, true); /* a probe's close is no connection loss */
  mcp_status st = MCP_EVERSION;
  if (mode == MCP_ERA_AUTO && c->opts->era_hint == MCP_CACHE_ERA_LEGACY) {
    /* Remembered legacy: initialize without the probe.  If the server
     * refuses it the way a modern server refuses a legacy client (a
     * JSON-RPC error, a 4xx other than auth, an unusable answer; over
     * stdio also exiting or silence), the assumption failed: probe. */
    mcp_error ierr = MCP_ERROR_INIT;
    st = initialize(c, mcp__protocol_versions[0], &ierr);
    int h = ierr.http_status;
    bool stdio_gone = !c->opts->s.url && (st == MCP_ECLOSED || st == MCP_ETIMEDOUT);
    if (st == MCP_ERPC || st == MCP_EVERSION || st == MCP_EPROTO || stdio_gone ||
        (st == MCP_EHTTP && h >= 400 && h < 500 && h != 401 && h != 403)) {
      client_log(c, MCP_LOG_INFO,
                 "%s: remembered as a legacy server, but initialize failed (%s): probing its era",
                 server_label(c), ierr.message ? ierr.message : mcp_strerror(st));
      mcp_error_clear(&ierr);
      st = stdio_gone ? respawn(c, err) : MCP_OK;
      if (st == MCP_OK) st = probe_era(c, mode, version, err);
    } else {
      if (err) mcp__error_copy(err, &ierr);
      mcp_error_clear(&ierr);
    }
  } else {
    st = probe_era(c, mode, version, err);
  }
  atomic_store(&c->probing, false);
  return st;
}

/* connect_era() after its checks: the probe rounds and the verdict. */
static mcp_status probe_era(mcp_client *c, mcp_era_mode mode, const char *version, mcp_error *err) {
  bool stdio = !c->opts->s.url;
  for (int round = 0; round < 2; round++) {
    char *text = NULL;
    size_t len = 0;
    mcp_error perr = MCP_ERROR_INIT;
    mcp_status st = probe(c, version, &text, &len, &perr);
    const char *v = NULL, *why = NULL;
    mcp_era_verdict verdict = mcp__era_judge(st, text, len, &perr, stdio, &v, &why);
    if (verdict == MCP_ERA_RETRY && round == 0) { /* one corrective retry (loop guard) */
      mcp__free(text);
      mcp_error_clear(&perr);
      version = v;
      continue;
    }
    if (verdict == MCP_ERA_IS_MODERN) {
      mcp_error_clear(&perr);
      return adopt_modern(c, v, text, err);
    }
    mcp__free(text);
    if (verdict == MCP_ERA_NO_EVIDENCE || st == MCP_ECANCELLED) {
      /* The probe failed for a reason of its own: that is the cause. */
      if (err) {
        mcp__error_copy(err, &perr);
        err->status = st;
      }
      mcp_error_clear(&perr);
      return st;
    }
    if (verdict == MCP_ERA_IS_LEGACY && mode == MCP_ERA_AUTO) {
      client_log(c, MCP_LOG_DEBUG,
                 "%s answered server/discover as a legacy server (%s): "
                 "using initialize",
                 server_label(c),
                 st == MCP_OK   ? "no 2026-07-28 in supportedVersions"
                 : perr.message ? perr.message
                                : mcp_strerror(st));
      mcp_error_clear(&perr);
      if (stdio && (st == MCP_ETIMEDOUT || st == MCP_ECLOSED) && (st = respawn(c, err))) return st;
      if ((st = mcp__transport_set_era(c->t, NULL)))
        return mcp__error_set(err, st, "out of memory");
      return initialize(c, mcp__protocol_versions[0], err);
    }
    mcp_status out = mcp__error_set(
        err, MCP_EVERSION, "%s does not speak MCP %s: %s", server_label(c), version,
        verdict == MCP_ERA_INCOMPATIBLE ? why
        : verdict == MCP_ERA_RETRY      ? "it refused the version it lists as supported twice"
        : st == MCP_OK                  ? "its server/discover result lists no 2026-07-28"
                                        : (perr.message ? perr.message : mcp_strerror(st)));
    mcp_error_clear(&perr);
    return out;
  }
  return mcp__error_set(err, MCP_EVERSION, "no protocol version in common"); /* not reached */
}

static void free_now(mcp_client *c) {
  /* From now on host threads entering get MCP_ECLOSED at once. */
  pthread_mutex_lock(&c->calls_mu);
  atomic_fetch_or(&c->calls, CALLS_FREEING);
  pthread_mutex_unlock(&c->calls_mu);
  atomic_store(&c->open, false);
  task_wake(c);
  if (c->t) listen_stop(c);
  /* Closing wakes writers; closing the table ends every request (on_close
   * did already) and wakes every waiting caller and leader. */
  if (c->t) mcp__transport_close(c->t);
  if (c->pending)
    mcp__pending_close(c->pending, MCP_ECLOSED, "client closed: mcp_client_free() was called");
  /* The callers still inside return now; wait until the last has left. */
  pthread_mutex_lock(&c->calls_mu);
  while (atomic_load(&c->calls) != CALLS_FREEING) pthread_cond_wait(&c->calls_cv, &c->calls_mu);
  pthread_mutex_unlock(&c->calls_mu);
  /* The lane drains the callbacks the close reported. */
  if (c->lane) mcp__lane_free(c->lane);
  mcp__transport_free(c->t);
  mcp__pending_free(c->pending);
  if (c->workers) mcp__workers_unref(c->workers);
  pthread_mutex_destroy(&c->lock);
  pthread_mutex_destroy(&c->subs_mu);
  for (size_t i = 0; i < c->nsubs; i++) mcp__free(c->subs[i]);
  mcp__free(c->subs);
  for (size_t i = 0; i < c->nwatch; i++) {
    mcp__free(c->watch[i].id);
    mcp__free(c->watch[i].pushed);
  }
  mcp__free(c->watch);
  pthread_cond_destroy(&c->calls_cv);
  pthread_cond_destroy(&c->listen_cv);
  pthread_cond_destroy(&c->task_cv);
  pthread_mutex_destroy(&c->calls_mu);
  mcp__free(c->close_message);
  mcp__free(c->protocol_version);
  mcp__free(c->server_info);
  mcp__free(c->task_tools);
  mcp__free(c->meta);
  mcp__ttl_free(c->ttl);
  mcp_client_options_free(c->opts);
  mcp__free(c);
}

static void listen_start(mcp_client *c);
static void listen_stop(mcp_client *c);

mcp_status mcp__client_connect_ex(const mcp_client_options *o, mcp_workers *workers,
                                  const mcp_client_hooks *hooks, mcp_client **out, mcp_error *err) {
  if (out) *out = NULL;
  if (!o || !out) return mcp__error_set(err, MCP_EINVAL, "invalid argument");
  if (!o->s.argv && !o->s.url)
    return mcp__error_set(err, MCP_EINVAL,
                          "no server given (mcp_client_options_set_stdio or _set_http)");
  mcp_client *c = mcp__calloc(1, sizeof(*c));
  if (!c) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  pthread_mutex_init(&c->lock, NULL);
  pthread_mutex_init(&c->subs_mu, NULL);
  pthread_mutex_init(&c->calls_mu, NULL);
  pthread_cond_init(&c->calls_cv, NULL);
  pthread_condattr_t lca;
  pthread_condattr_init(&lca);
  pthread_condattr_setclock(&lca, CLOCK_MONOTONIC);
  pthread_cond_init(&c->listen_cv, &lca);
  pthread_cond_init(&c->task_cv, &lca);
  pthread_condattr_destroy(&lca);
  atomic_init(&c->open, true);
  if (hooks) c->hooks = *hooks;
  c->hooks.connect_cancel = hooks ? hooks->connect_cancel : NULL; /* connect only */
  mcp_status st = MCP_ENOMEM;
  if (!(c->opts = mcp__client_options_dup(o))) goto fail_nomem;
  c->max_queued = c->opts->max_queued ? c->opts->max_queued : DEFAULT_MAX_QUEUED;
  if (!(c->pending = mcp__pending_new())) goto fail_nomem;
  c->workers = workers ? mcp__workers_ref(workers) : mcp__workers_new(1);
  if (!c->workers) goto fail_nomem;
  if (!(c->lane = mcp__lane_new(c->workers))) goto fail_nomem;
  if (!(c->ttl = mcp__ttl_new())) goto fail_nomem;

  if ((st = start_transport(c, hooks, err))) goto fail;
  if ((st = connect_era(c, err))) goto fail;
  c->hooks.connect_cancel = NULL; /* borrowed for the connect only */
  if (c->modern) listen_start(c);
  *out = c;
  return MCP_OK;
fail_nomem:
  st = mcp__error_set(err, MCP_ENOMEM, "out of memory");
fail:
  free_now(c);
  return st;
}

MCP_EXTERN mcp_status mcp_client_connect(const mcp_client_options *o, mcp_client **out,
                                         mcp_error *err) {
  return mcp__client_connect_ex(o, NULL, NULL, out, err);
}

MCP_EXTERN void mcp_client_close(mcp_client *c) {
  if (!c || !client_enter(c)) return; /* being freed: free closes it */
  atomic_store(&c->open, false);
  task_wake(c);
  listen_stop(c);
  mcp__transport_close(c->t);
  client_leave(c);
}

void mcp__client_abort(mcp_client *c, const char *why) {
  if (!c) return;
  atomic_store(&c->open, false);
  task_wake(c);
  mcp__pending_close(c->pending, MCP_ECLOSED, why);
}

static void *free_thread(void *arg) {
  free_now(arg);
  return NULL;
}

MCP_EXTERN void mcp_client_free(mcp_client *c) {
  if (!c) return;
  if (mcp__lane_is_current(c->lane)) {
    /* Called from one of our own callbacks: finish on another thread once
     * this callback has returned (lane_free waits for it). */
    atomic_store(&c->open, false);
    pthread_t th;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&th, &a, free_thread, c);
    pthread_attr_destroy(&a);
    if (rc == 0) return;
    /* No thread: close now; the memory stays (a leak beats a crash). */
    mcp__transport_close(c->t);
    return;
  }
  free_now(c);
}

MCP_EXTERN const char *mcp_client_protocol_version(const mcp_client *c) {
  return c ? c->protocol_version : NULL;
}

MCP_EXTERN const char *mcp_client_server_info(const mcp_client *c) {
  return c ? c->server_info : NULL;
}

MCP_EXTERN bool mcp_client_is_open(const mcp_client *c) {
  return c && atomic_load(&((mcp_client *)c)->open);
}

MCP_EXTERN void mcp_client_get_stats(const mcp_client *cc, mcp_client_stats *out) {
  if (!cc || !out) return;
  mcp_client *c = (mcp_client *)cc;
  out->requests_sent = atomic_load(&c->n_sent);
  out->responses_received = atomic_load(&c->n_responses);
  out->unknown_responses = atomic_load(&c->n_unknown);
  out->late_responses = atomic_load(&c->n_late);
  out->protocol_errors = atomic_load(&c->n_proto);
  out->oversize_messages = atomic_load(&c->n_oversize);
  out->notifications_received = atomic_load(&c->n_notifications);
  out->server_requests = atomic_load(&c->n_server_requests);
  out->inbound_dropped = atomic_load(&c->n_in_dropped);
  out->outbound_dropped = atomic_load(&c->n_out_dropped);
}
