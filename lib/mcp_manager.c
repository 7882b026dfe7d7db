/* SPDX-License-Identifier: MIT */
/*
 * mcp_manager.c: the manager.  Owns server discovery (through mcp_config),
 * parallel connects, the server state machine, the namespaced tool registry
 * (through mcp_names), the deferred-tool cache (through mcp_cache),
 * reconnection with backoff and a circuit breaker, and list_changed
 * refreshes.  Knows nothing of framing: it drives mcp_client.
 *
 * Threads:
 *  - The manager thread runs timers (reconnect backoff, debounced
 *    re-lists), reacts to closed connections and publishes tool lists.
 *  - Connector threads (one per attempt, tracked) do the blocking work:
 *    resolve secrets, connect, list tools, write the cache.
 *  - Host threads read the published list (a refcounted snapshot, swapped
 *    under `lock` in O(1)) and call tools on refcounted connections, so a
 *    reconnect never frees a client under a caller.
 *  - Events and logs run on the manager's lane of the shared worker pool.
 *
 * Locks: `lock` guards every server's state fields, the command queue, the
 * snapshot pointer and the thread count.  No client call, no host callback
 * and no blocking work runs under it.
 */
#include "config.h"

#include <json-c/json.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mcp_cache.h"
#include "mcp_cancel.h"
#include "mcp_client.h"
#include "mcp_ossl.h"
#include "mcp_config.h"
#include "mcp_discover.h"
#include "mcp_era.h"
#include "mcp_secret.h"
#include "mcp_server_options.h"
#include "mcp_sha256.h"
#include "mcp_skills.h"
#include "mcp_jsonrpc.h"
#include "mcp_manager_tasks.h"
#include "mcp_names.h"
#include "mcp_oauth.h"
#include "mcp_workers.h"

#define DEFAULT_GATE_MS 250
#define DEFAULT_TIMEOUT_MS 30000
#define DEFAULT_WORKERS 4
#define RELIST_DEBOUNCE_MS 100
#define BREAKER_WINDOW_MS 30000
#define BREAKER_MAX_CLOSES 5
#define DEFAULT_BREAKER_COOLDOWN_MS 30000
#define DEFAULT_BREAKER_COOLDOWN_MAX_MS 600000
static const int64_t ladder_ms[] = {500, 1000, 2000, 4000};
#define LADDER_STEPS ((int)(sizeof(ladder_ms) / sizeof(ladder_ms[0])))
#define REMOTE_FIRST_MS 15000
/* What a re-list refreshes. */
#define LIST_TOOLS 1u
#define LIST_RESOURCES 2u
#define LIST_PROMPTS 4u
#define REMOTE_MAX_MS 300000
/* Connects and re-lists run on at most this many connector threads; more
 * wait in a queue (a thousand servers need not be a thousand threads). */
#define MAX_CONNECTORS 16
/* While servers are still connecting, tool lists are published at most
 * every max(PUBLISH_GAP_MIN_MS, 4 x the last build's time): one rebuild per
 * batch of servers, not one per server. */
#define PUBLISH_GAP_MIN_MS 10
#define PUBLISH_GAP_MAX_MS 500

/* ------------------------------------------------------------------------ */
/* Options                                                                   */
/* ------------------------------------------------------------------------ */

typedef struct code_server {
  char *name;
  mcp_client_options *co;
} code_server;

struct mcp_manager_options {
  char **files;
  size_t nfiles;
  code_server *code;
  size_t ncode;
  bool project, user;
  mcp_project_trust_fn trust_fn; /* asked about unapproved project files */
  void *trust_user;
  unsigned imports;
  char *cwd;
  char *cache_dir;
  bool cache_off;
  int64_t gate_ms;
  int64_t timeout_ms;
  const char *protocol; /* era mode of config servers without one; NULL: auto */
  int64_t breaker_cooldown_ms, breaker_cooldown_max_ms; /* 0: by hand only */
  size_t workers;
  mcp_logger log;
  mcp_log_record_fn log_record; /* wins over log.fn */
  void *log_record_user;
  mcp_manager_event_fn event_fn;
  void *event_user;
  char *client_name, *client_version;
  mcp_oauth_options *oauth;   /* defaults for every HTTP server, or NULL */
  int env_project, env_other; /* mcp_env_inherit defaults of stdio servers */
  bool retry_non_idempotent;  /* resend any call once after a failure */
  /* List limits for the servers of config files; 0: the client's default. */
  size_t list_max_pages, list_max_items, list_max_bytes;
  mcp_config_inputs inputs; /* ${input:id} values for config files */
  bool format_set;          /* explicit files' format, when set */
  mcp_config_dialect format;
  char *extensions; /* JSON object: extension id -> settings; NULL: none */
};

MCP_EXTERN mcp_manager_options *mcp_manager_options_new(void) {
  mcp_manager_options *o = mcp__calloc(1, sizeof(*o));
  if (!o) return NULL;
  /* Project files come with the directory, not from the user: off unless
   * the host asks for them (and then they need trust). */
  o->project = false;
  o->user = true;
  o->gate_ms = DEFAULT_GATE_MS;
  o->timeout_ms = DEFAULT_TIMEOUT_MS;
  o->breaker_cooldown_ms = DEFAULT_BREAKER_COOLDOWN_MS;
  o->breaker_cooldown_max_ms = DEFAULT_BREAKER_COOLDOWN_MAX_MS;
  o->workers = DEFAULT_WORKERS;
  o->env_project = MCP_ENV_INHERIT_DEFAULT;
  o->env_other = MCP_ENV_INHERIT_ALL;
  return o;
}

MCP_EXTERN void mcp_manager_options_free(mcp_manager_options *o) {
  if (!o) return;
  for (size_t i = 0; i < o->nfiles; i++) mcp__free(o->files[i]);
  mcp__free(o->files);
  for (size_t i = 0; i < o->ncode; i++) {
    mcp__free(o->code[i].name);
    mcp_client_options_free(o->code[i].co);
  }
  mcp__free(o->code);
  mcp__free(o->cwd);
  mcp__free(o->cache_dir);
  mcp__free(o->client_name);
  mcp__free(o->client_version);
  mcp__free(o->extensions);
  mcp_oauth_options_free(o->oauth);
  mcp__config_inputs_clear(&o->inputs);
  mcp__free(o);
}

static mcp_status replace_str(char **slot, const char *s) {
  char *d = NULL;
  if (s && !(d = mcp__strdup(s))) return MCP_ENOMEM;
  mcp__free(*slot);
  *slot = d;
  return MCP_OK;
}

MCP_EXTERN mcp_status mcp_manager_options_add_config_file(mcp_manager_options *o,
                                                          const char *path) {
  if (!o || !path || !*path) return MCP_EINVAL;
  char **f = mcp__reallocarray(o->files, o->nfiles + 1, sizeof(char *));
  if (!f) return MCP_ENOMEM;
  o->files = f;
  if (!(o->files[o->nfiles] = mcp__strdup(path))) return MCP_ENOMEM;
  o->nfiles++;
  return MCP_OK;
}

MCP_EXTERN mcp_status mcp_manager_options_set_env_inherit(mcp_manager_options *o,
                                                          mcp_env_inherit project,
                                                          mcp_env_inherit other) {
  if (!o || project < MCP_ENV_INHERIT_UNSET || project > MCP_ENV_INHERIT_NONE ||
      other < MCP_ENV_INHERIT_UNSET || other > MCP_ENV_INHERIT_NONE)
    return MCP_EINVAL;
  if (project) o->env_project = project;
  if (other) o->env_other = other;
  return MCP_OK;
}

MCP_EXTERN mcp_status mcp_manager_options_add_server(mcp_manager_options *o, const char *name,
                                                     const mcp_client_options *co) {
  if (!o || !name || !co || !mcp__config_name_is_valid(name)) return MCP_EINVAL;
  for (size_t i = 0; i < o->ncode; i++)
    if (strcmp(o->code[i].name, name) == 0) return MCP_EINVAL;
  code_server *c = mcp__reallocarray(o->code, o->ncode + 1, sizeof(*c));
  if (!c) return MCP_ENOMEM;
  o->code = c;
  char *n = mcp__strdup(name);
  mcp_client_options *d = mcp__client_options_dup(co);
  if (!n || !d) {
    mcp__free(n);
    mcp_client_options_free(d);
    return MCP_ENOMEM;
  }
  o->code[o->ncode++] = (code_server){n, d};
  return MCP_OK;
}

MCP_EXTERN void mcp_manager_options_set_discovery(mcp_manager_options *o, bool project, bool user) {
  if (!o) return;
  o->project = project;
  o->user = user;
}

MCP_EXTERN void mcp_manager_options_set_project_trust(mcp_manager_options *o,
                                                      mcp_project_trust_fn fn, void *user) {
  if (!o) return;
  o->trust_fn = fn;
  o->trust_user = user;
}

MCP_EXTERN mcp_status mcp_project_trust_review(const char *cwd, unsigned imports,
                                               mcp_project_trust_fn fn, void *user,
                                               mcp_error *err) {
  if (!fn) return mcp__error_set(err, MCP_EINVAL, "no trust callback");
  mcp_discovery_opts d = {0};
  d.cwd = cwd;
  d.no_user = true; /* only project files are reviewed */
  d.imports = imports & MCP_IMPORT_ALL;
  d.trust = fn;
  d.trust_user = user;
  mcp_config_set *set = NULL;
  mcp_status st = mcp__config_discover(&d, &set, err);
  if (st == MCP_OK && set->trust_error)
    st = mcp__error_set(err, MCP_EIO, "cannot remember the approval: %s", set->trust_error);
  mcp__config_free(set);
  return st;
}

MCP_EXTERN mcp_status mcp_manager_options_set_input(mcp_manager_options *o, const char *id,
                                                    const char *value) {
  return o ? mcp__config_inputs_set(&o->inputs, id, value) : MCP_EINVAL;
}

MCP_EXTERN mcp_status mcp_manager_options_set_config_format(mcp_manager_options *o,
                                                            const char *format) {
  mcp_config_dialect d = MCP_CONFIG_NATIVE;
  if (!o || (format && !mcp__config_dialect_by_name(format, &d))) return MCP_EINVAL;
  o->format_set = format != NULL;
  o->format = d;
  return MCP_OK;
}

MCP_EXTERN void mcp_manager_options_set_imports(mcp_manager_options *o, unsigned imports) {
  if (o) o->imports = imports & MCP_IMPORT_ALL;
}

MCP_EXTERN mcp_status mcp_manager_options_set_cwd(mcp_manager_options *o, const char *dir) {
  return o ? replace_str(&o->cwd, dir) : MCP_EINVAL;
}

MCP_EXTERN mcp_status mcp_manager_options_set_cache_dir(mcp_manager_options *o, const char *dir) {
  if (!o) return MCP_EINVAL;
  o->cache_off = dir == NULL;
  return replace_str(&o->cache_dir, dir);
}

MCP_EXTERN void mcp_manager_options_set_startup_gate_ms(mcp_manager_options *o, int64_t ms) {
  if (o) o->gate_ms = ms < 0 ? 0 : ms;
}

MCP_EXTERN void mcp_manager_options_set_timeout_ms(mcp_manager_options *o, int64_t ms) {
  if (o) o->timeout_ms = ms < 0 ? 0 : ms;
}

MCP_EXTERN mcp_status mcp_manager_options_set_protocol(mcp_manager_options *o,
                                                       const char *protocol) {
  mcp_era_mode mode;
  const char *pinned;
  if (!o || !mcp__era_parse_mode(protocol, &mode, &pinned)) return MCP_EINVAL;
  o->protocol = mcp__era_mode_name(mode, pinned); /* static: nothing to free */
  return MCP_OK;
}

MCP_EXTERN void mcp_manager_options_set_list_limits(mcp_manager_options *o, size_t max_pages,
                                                    size_t max_items, size_t max_bytes) {
  if (!o) return;
  o->list_max_pages = max_pages;
  o->list_max_items = max_items;
  o->list_max_bytes = max_bytes;
}

MCP_EXTERN void mcp_manager_options_set_breaker_cooldown_ms(mcp_manager_options *o,
                                                            int64_t first_ms, int64_t max_ms) {
  if (!o) return;
  o->breaker_cooldown_ms = first_ms > 0 ? first_ms : 0;
  o->breaker_cooldown_max_ms = max_ms > o->breaker_cooldown_ms ? max_ms : o->breaker_cooldown_ms;
}

MCP_EXTERN void mcp_manager_options_set_worker_threads(mcp_manager_options *o, size_t n) {
  if (o) o->workers = n ? n : 1;
}

MCP_EXTERN void mcp_manager_options_set_log(mcp_manager_options *o, mcp_log_fn fn, void *user) {
  if (!o) return;
  o->log.fn = fn;
  o->log.user = user;
}

MCP_EXTERN void mcp_manager_options_set_log_record(mcp_manager_options *o, mcp_log_record_fn fn,
                                                   void *user) {
  if (!o) return;
  o->log_record = fn;
  o->log_record_user = user;
}

MCP_EXTERN void mcp_manager_options_set_event_handler(mcp_manager_options *o,
                                                      mcp_manager_event_fn fn, void *user) {
  if (!o) return;
  o->event_fn = fn;
  o->event_user = user;
}

MCP_EXTERN mcp_status mcp_manager_options_set_oauth(mcp_manager_options *o,
                                                    const mcp_oauth_options *defaults) {
  if (!o) return MCP_EINVAL;
  mcp_oauth_options *copy = NULL;
  if (defaults && !(copy = mcp__oauth_options_dup(defaults))) return MCP_ENOMEM;
  mcp_oauth_options_free(o->oauth);
  o->oauth = copy;
  return MCP_OK;
}

MCP_EXTERN void mcp_manager_options_set_retry_non_idempotent(mcp_manager_options *o, bool on) {
  if (o) o->retry_non_idempotent = on;
}

MCP_EXTERN mcp_status mcp_manager_options_set_extension(mcp_manager_options *o, const char *id,
                                                        const char *settings_json) {
  if (!o || !id || !*id) return MCP_EINVAL;
  /* Checked the way the client will take it: on a scratch client options. */
  mcp_client_options *chk = mcp_client_options_new();
  if (!chk) return MCP_ENOMEM;
  mcp_status st = mcp_client_options_set_extension(chk, id, settings_json);
  mcp_client_options_free(chk);
  if (st) return st;
  const char *cur = o->extensions ? o->extensions : "{}",
             *sj = settings_json ? settings_json : "{}";
  json_object *ext = mcp__jsonrpc_parse(cur, strlen(cur), NULL);
  json_object *val = mcp__jsonrpc_parse(sj, strlen(sj), NULL);
  st = MCP_ENOMEM;
  if (ext && val && json_object_object_add(ext, id, json_object_get(val)) == 0) {
    char *t = mcp__json_dup_string(ext, NULL);
    if (t) {
      mcp__free(o->extensions);
      o->extensions = t;
      st = MCP_OK;
    }
  } else if (val) {
    json_object_put(val);
  }
  json_object_put(val);
  json_object_put(ext);
  return st;
}

/* Declares the manager's extensions on a server's client options. */
static mcp_status apply_extensions(const mcp_manager_options *o, mcp_client_options *co) {
  if (!o->extensions) return MCP_OK;
  json_object *ext = mcp__jsonrpc_parse(o->extensions, strlen(o->extensions), NULL);
  if (!ext) return MCP_ENOMEM;
  mcp_status st = MCP_OK;
  json_object_object_foreach(ext, id, v) {
    if (st == MCP_OK) st = mcp_client_options_set_extension(co, id, json_object_to_json_string(v));
  }
  json_object_put(ext);
  return st;
}

MCP_EXTERN mcp_status mcp_manager_options_set_client_info(mcp_manager_options *o, const char *name,
                                                          const char *version) {
  if (!o || !name || !version) return MCP_EINVAL;
  mcp_status st = replace_str(&o->client_name, name);
  return st ? st : replace_str(&o->client_version, version);
}

/* ------------------------------------------------------------------------ */
/* Structures                                                                */
/* ------------------------------------------------------------------------ */

typedef enum sstate {
  S_CONNECTING,
  S_READY,
  S_DEFERRED, /* connecting, serving cached tools */
  S_BACKOFF,
  S_FAILED,
  S_DISABLED,
  S_CLOSED
} sstate;

static const char *const state_names[] = {"connecting", "ready",    "deferred", "backoff",
                                          "failed",     "disabled", "closed"};

typedef struct server server;

/* A live client, refcounted so callers and reconnects never race. */
typedef struct conn {
  mcp_client *c;
  atomic_int refs;
  server *s;
} conn;

struct server {
  mcp_manager *m;
  char *name;
  mcp_server_def *def;         /* unresolved definition, or NULL (code server) */
  mcp_client_options *code_co; /* server defined in code */
  bool remote;
  int64_t timeout_ms;
  /* guarded by m->lock */
  sstate state;
  conn *conn;           /* the manager's reference */
  char *tools_json;     /* live or cached tools array */
  size_t ntools;        /* its length, for status_locked() */
  char *resources_json; /* live resources array, when the server has resources */
  char *prompts_json;   /* live prompts array, when the server has prompts */
  bool tools_cached;
  char *last_error;
  char *protocol_version;
  int reconnects;
  int ladder_step;            /* next backoff step after a failure */
  uint64_t attempt;           /* generation of the running connect */
  bool connecting;            /* a connect is queued or running (set_connecting_locked) */
  mcp_cancel *connect_cancel; /* the running connect's; fired on shutdown */
  bool breaker;               /* stopped by the circuit breaker */
  int trips;                  /* breaker openings since the server last proved stable */
  int64_t ready_at;           /* ms when the current connection became ready */
  int64_t closes[BREAKER_MAX_CLOSES + 1]; /* ms of recent closes, ring */
  int nclose;
  int64_t retry_at;     /* ms; MCP_NO_DEADLINE when no reconnect is due */
  int64_t relist_at;    /* ms; MCP_NO_DEADLINE when no re-list is due */
  unsigned relist_what; /* LIST_* bits due */
  bool relisting;
  bool config_error;    /* failed for good: the definition is unusable */
  bool warned_insecure; /* the "verification is off" warning was logged */
  char **subs;          /* resource URIs the host subscribed to (sent again
                           on every connect: resubscribe()) */
  size_t nsubs;
  uint64_t subs_gen; /* bumped on every change of subs */
};

struct mcp_tool_list {
  atomic_int refs;
  uint64_t version;
  size_t n;
  struct tl_entry {
    char *name, *server, *tool, *json;
    bool deferred;
  } * e;
  size_t *index; /* open addressing by name: entry + 1, 0 empty; icap slots */
  size_t icap;
};

struct mcp_manager {
  mcp_manager_options *o; /* own copy */
  char *cache_dir;        /* NULL: no cache */
  mcp_config_set *cfg;
  server **servers;
  size_t n;
  server **index; /* by name, open addressing; set at start, then read-only */
  size_t icap;    /* a power of two, or 0 */
  mcp_workers *workers;
  mcp_lane *lane; /* events and logs */
  pthread_mutex_t lock;
  pthread_cond_t changed; /* server state changes: callers and start() wait */
  pthread_cond_t wake;    /* the manager thread */
  pthread_cond_t idle;    /* tracked threads finished */
  /* guarded by lock */
  bool stopping;
  bool publish_due;
  bool publishing;                   /* publish() is building a list not yet swapped in */
  size_t nconnecting;                /* servers with connecting set */
  int64_t published_at;              /* ms of the last publish */
  int64_t publish_gap_ms;            /* see PUBLISH_GAP_MIN_MS */
  struct job *jobs_head, *jobs_tail; /* connects and re-lists waiting for a connector */
  int connectors;                    /* connector threads alive */
  int threads;                       /* tracked connector/closer threads alive */
  mcp_tool_list *snap;
  uint64_t version;
  pthread_t thread;
  bool thread_started;
  /* Fired by mcp_manager_free(): ends the re-lists in progress (set at
   * start, then only fired: no lock needed). */
  mcp_cancel *stop_cancel;
  int callers;        /* guarded by lock: host threads in call_on_server */
  mcp__mtasks *tasks; /* task ids kept in cache_dir, or NULL */
};

/* ------------------------------------------------------------------------ */
/* Logging and events                                                        */
/* ------------------------------------------------------------------------ */

#define EV_LOG 0
#define EV_LOG_NAMED (-1) /* a log line whose text already names its server */

typedef struct ev_item {
  mcp_manager *m;
  int kind; /* EV_LOG, EV_LOG_NAMED, or an mcp_manager_event */
  mcp_log_level level;
  char *server;
  char *text;
} ev_item;

static void drop_ev(void *arg) {
  ev_item *it = arg;
  mcp__free(it->server);
  mcp__free(it->text);
  mcp__free(it);
}

static bool has_log(const mcp_manager *m) { return m->o->log_record || m->o->log.fn; }

/* Hands one log record to the host: the record callback gets the server as
 * a field, the plain one "server: message" as before. */
static void deliver_log(const mcp_manager *m, mcp_log_level level, const char *sname,
                        const char *msg, bool named) {
  const mcp_manager_options *o = m->o;
  if (o->log_record) {
    mcp_log_record r = {sizeof(r), level, sname, msg};
    o->log_record(o->log_record_user, &r);
  } else if (o->log.fn && sname && !named) {
    char *line = mcp__asprintf("%s: %s", sname, msg);
    o->log.fn(o->log.user, level, line ? line : msg);
    mcp__free(line);
  } else if (o->log.fn) {
    o->log.fn(o->log.user, level, msg);
  }
}

static void run_ev(void *arg) {
  ev_item *it = arg;
  mcp_manager_options *o = it->m->o;
  if (it->kind == EV_LOG || it->kind == EV_LOG_NAMED) {
    deliver_log(it->m, it->level, it->server, it->text, it->kind == EV_LOG_NAMED);
  } else if (o->event_fn) {
    o->event_fn(o->event_user, (mcp_manager_event)it->kind, it->server ? it->server : "", it->text);
  }
  drop_ev(it);
}

static void post_ev(mcp_manager *m, int kind, mcp_log_level level, const char *sname, char *text) {
  if (!text) return;
  bool log = kind == EV_LOG || kind == EV_LOG_NAMED;
  if ((log && !has_log(m)) || (!log && !m->o->event_fn) || !m->lane) {
    mcp__free(text);
    return;
  }
  ev_item *it = mcp__calloc(1, sizeof(*it));
  if (!it) {
    mcp__free(text);
    return;
  }
  it->m = m;
  it->kind = kind;
  it->level = level;
  it->server = sname ? mcp__strdup(sname) : NULL;
  it->text = text;
  if (mcp__lane_post(m->lane, run_ev, drop_ev, it) != MCP_OK) drop_ev(it);
}

/* Logs on the manager's lane; |sname| (or NULL) goes in the record. */
static void mlog(mcp_manager *m, mcp_log_level level, const char *sname, const char *fmt, ...)
    MCP_PRINTF(4, 5);
static void mlog(mcp_manager *m, mcp_log_level level, const char *sname, const char *fmt, ...) {
  if (!has_log(m)) return;
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  post_ev(m, EV_LOG, level, sname, mcp__strdup(buf));
}

/* Status object of |s|; caller holds m->lock. */
static json_object *status_locked(server *s) {
  json_object *o = json_object_new_object();
  if (!o) return NULL;
  static const char *const types[] = {"stdio", "http", "sse"};
  json_object_object_add(o, "name", json_object_new_string(s->name));
  const char *type = s->def       ? types[s->def->type]
                     : !s->remote ? "stdio"
                     : s->code_co->s.http_kind == MCP_HTTP_TRANSPORT_LEGACY_SSE ? "sse"
                                                                                : "http";
  json_object_object_add(o, "type", json_object_new_string(type));
  json_object_object_add(
      o, "source", json_object_new_string(s->def && s->def->source ? s->def->source : "code"));
  if (s->def && s->def->display_name) /* the file's own name, before folding */
    json_object_object_add(o, "displayName", json_object_new_string(s->def->display_name));
  json_object_object_add(o, "state", json_object_new_string(state_names[s->state]));
  json_object_object_add(o, "lastError",
                         s->last_error ? json_object_new_string(s->last_error) : NULL);
  json_object_object_add(o, "protocolVersion",
                         s->protocol_version ? json_object_new_string(s->protocol_version) : NULL);
  mcp_era_mode era; /* the negotiated revision says which era the server speaks */
  const char *pinned;
  json_object_object_add(o, "era",
                         s->protocol_version &&
                                 mcp__era_parse_mode(s->protocol_version, &era, &pinned)
                             ? json_object_new_string(era == MCP_ERA_MODERN ? "modern" : "legacy")
                             : NULL);
  json_object_object_add(o, "tools", json_object_new_int64(s->tools_json ? (int64_t)s->ntools : 0));
  json_object_object_add(o, "deferred", json_object_new_boolean(s->tools_cached));
  json_object_object_add(o, "reconnects", json_object_new_int(s->reconnects));
  return o;
}

/* Sets |s|'s state and announces it.  Caller holds m->lock. */
static void set_state_locked(server *s, sstate st) {
  if (s->state == st) return;
  s->state = st;
  pthread_cond_broadcast(&s->m->changed);
  if (s->m->o->event_fn) {
    json_object *o = status_locked(s);
    char *text = o ? mcp__json_dup_string(o, NULL) : NULL;
    json_object_put(o);
    post_ev(s->m, MCP_MANAGER_EVENT_SERVER_STATE, MCP_LOG_INFO, s->name, text);
  }
}

static void set_connecting_locked(server *s, bool on) {
  if (s->connecting == on) return;
  s->connecting = on;
  if (on) s->m->nconnecting++;
  else s->m->nconnecting--;
}

/* Length of a tools array's JSON text (0 when it is not one). */
static size_t tools_count(const char *tools) {
  json_object *arr = tools ? json_tokener_parse(tools) : NULL;
  size_t n = json_object_is_type(arr, json_type_array) ? json_object_array_length(arr) : 0;
  json_object_put(arr);
  return n;
}

static void set_error_locked(server *s, const char *msg) {
  mcp__free(s->last_error);
  s->last_error = msg ? mcp__strdup(msg) : NULL;
}

/* ------------------------------------------------------------------------ */
/* Connections and tracked threads                                           */
/* ------------------------------------------------------------------------ */

static void *spawn_main(void *arg);

typedef struct tracked {
  mcp_manager *m;
  void (*fn)(void *arg);
  void *arg;
} tracked;

/* Runs fn(arg) on a new detached thread that mcp_manager_free waits for.
 * Caller holds m->lock.  Returns false when no thread could start. */
static bool spawn_stack_locked(mcp_manager *m, void (*fn)(void *), void *arg, size_t stack) {
  tracked *t = mcp__malloc(sizeof(*t));
  if (!t) return false;
  *t = (tracked){m, fn, arg};
  pthread_attr_t a;
  int rc = stack ? mcp__thread_attr_init(&a, stack, true) : pthread_attr_init(&a);
  pthread_t th;
  if (rc == 0) {
    if (!stack) pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    rc = pthread_create(&th, &a, spawn_main, t);
    pthread_attr_destroy(&a);
  }
  if (rc != 0) {
    mcp__free(t);
    return false;
  }
  m->threads++;
  return true;
}

/* With the default stack: the thread may run host callbacks (OAuth). */
static bool spawn_locked(mcp_manager *m, void (*fn)(void *), void *arg) {
  return spawn_stack_locked(m, fn, arg, 0);
}

static void *spawn_main(void *arg) {
  tracked *t = arg;
  mcp_manager *m = t->m;
  t->fn(t->arg);
  mcp__free(t);
  /* Connects and closes use OpenSSL on this thread; free its per-thread
   * state before mcp_manager_free() may return and the host exit. */
  mcp__ossl_thread_stop();
  pthread_mutex_lock(&m->lock);
  if (--m->threads == 0) pthread_cond_broadcast(&m->idle);
  pthread_mutex_unlock(&m->lock);
  return NULL;
}

static void close_conn_main(void *arg) {
  conn *c = arg;
  mcp_client_free(c->c);
  mcp__free(c);
}

static conn *conn_ref(conn *c) {
  atomic_fetch_add(&c->refs, 1);
  return c;
}

/* Drops a reference; the last one closes the client on a tracked thread
 * (closing a stdio server can take seconds).  Caller holds m->lock. */
static void conn_unref_locked(mcp_manager *m, conn *c) {
  if (!c || atomic_fetch_sub(&c->refs, 1) != 1) return;
  /* At shutdown a thousand of these run at once: small stacks. */
  if (!spawn_stack_locked(m, close_conn_main, c, MCP__STACK_WORK)) {
    /* No thread: close here rather than leak (rare, memory exhaustion). */
    pthread_mutex_unlock(&m->lock);
    close_conn_main(c);
    pthread_mutex_lock(&m->lock);
  }
}

static void conn_unref(mcp_manager *m, conn *c) {
  if (!c) return;
  pthread_mutex_lock(&m->lock);
  conn_unref_locked(m, c);
  pthread_mutex_unlock(&m->lock);
}

/* ------------------------------------------------------------------------ */
/* Client hooks (run on the client's lane)                                   */
/* ------------------------------------------------------------------------ */

static void wake_locked(mcp_manager *m) { pthread_cond_signal(&m->wake); }

static bool breaker_trips_locked(server *s, int64_t now) {
  s->closes[s->nclose % (BREAKER_MAX_CLOSES + 1)] = now;
  s->nclose++;
  if (s->nclose <= BREAKER_MAX_CLOSES) return false;
  /* More than 5 closes: is the 6th-last within the window? */
  int64_t oldest = s->closes[s->nclose % (BREAKER_MAX_CLOSES + 1)];
  return now - oldest <= BREAKER_WINDOW_MS;
}

static int64_t backoff_ms(server *s) {
  if (s->ladder_step < LADDER_STEPS) return ladder_ms[s->ladder_step];
  if (!s->remote) return -1; /* stdio: the ladder is all */
  int64_t d = REMOTE_FIRST_MS;
  for (int i = LADDER_STEPS; i < s->ladder_step && d < REMOTE_MAX_MS; i++) d *= 2;
  return d > REMOTE_MAX_MS ? REMOTE_MAX_MS : d;
}

/* Records a close of |s| at |now|: true when the breaker must open, after
 * more than 5 closes in 30 s, or at once when the server had only just
 * come back from an open breaker (the half-open probe failed).  A server
 * that stayed up for the window after a probe has proved itself: its trips
 * are forgiven.  Caller holds m->lock. */
static bool breaker_due_locked(server *s, int64_t now) {
  bool trips = breaker_trips_locked(s, now);
  if (s->trips > 0) {
    if (s->ready_at != MCP_NO_DEADLINE && now - s->ready_at < BREAKER_WINDOW_MS) return true;
    s->trips = 0;
  }
  return trips;
}

/* Stops |s| after too many closes: failed, with the reason callers see.
 * The breaker half-opens after a cooldown (30 s, doubling per consecutive
 * opening up to 10 min; mcp_manager_options_set_breaker_cooldown_ms): one
 * connect is tried, and a server that fails again within 30 s of that
 * reopens it at once.  Caller holds m->lock. */
static void open_breaker_locked(server *s, const char *why) {
  mcp_manager *m = s->m;
  s->breaker = true;
  s->trips++;
  int64_t cool = m->o->breaker_cooldown_ms;
  for (int i = 1; cool && i < s->trips && cool < m->o->breaker_cooldown_max_ms; i++) cool *= 2;
  if (cool > m->o->breaker_cooldown_max_ms) cool = m->o->breaker_cooldown_max_ms;
  char msg[200];
  if (cool) {
    s->retry_at = mcp__now_ms() + cool;
    snprintf(msg, sizeof(msg),
             "circuit breaker: the server closed more than 5 times in 30 s; "
             "trying again in %lld s, or reconnect it by hand",
             (long long)((cool + 999) / 1000));
  } else {
    s->retry_at = MCP_NO_DEADLINE;
    snprintf(msg, sizeof(msg),
             "circuit breaker: the server closed more than 5 times in 30 s; "
             "reconnect it by hand");
  }
  set_error_locked(s, msg);
  set_state_locked(s, S_FAILED);
  mlog(m, MCP_LOG_WARN, s->name, "circuit breaker open after repeated closes (%s)%s",
       why ? why : "?", cool ? "; half-opens after the cooldown" : "");
  wake_locked(m);
}

/* The connection |c| of |s| is gone: detach it, back off, maybe trip the
 * breaker.  Caller holds m->lock. */
static void lost_locked(server *s, conn *c, const char *why) {
  mcp_manager *m = s->m;
  if (s->conn != c || m->stopping) return;
  s->conn = NULL;
  set_error_locked(s, why);
  conn_unref_locked(m, c);
  if (breaker_due_locked(s, mcp__now_ms())) {
    open_breaker_locked(s, why);
    return;
  }
  s->ladder_step = 0;
  s->retry_at = mcp__now_ms() + ladder_ms[0];
  set_state_locked(s, S_BACKOFF);
  mlog(m, MCP_LOG_WARN, s->name, "connection lost (%s); reconnecting", why);
  wake_locked(m);
}

/* The hooks' user pointer is the conn: it outlives the client's callbacks
 * (freed after mcp_client_free has drained them). */
static void hook_close(void *user, mcp_status st, const char *message) {
  conn *c = user;
  mcp_manager *m = c->s->m;
  pthread_mutex_lock(&m->lock);
  lost_locked(c->s, c, message ? message : mcp_strerror(st));
  pthread_mutex_unlock(&m->lock);
}

static void hook_notification(void *user, const char *method, const char *params) {
  conn *c = user;
  server *s = c->s;
  mcp_manager *m = s->m;
  unsigned what = strcmp(method, "notifications/tools/list_changed") == 0       ? LIST_TOOLS
                  : strcmp(method, "notifications/resources/list_changed") == 0 ? LIST_RESOURCES
                  : strcmp(method, "notifications/prompts/list_changed") == 0   ? LIST_PROMPTS
                                                                                : 0;
  if (what) {
    pthread_mutex_lock(&m->lock);
    if (s->conn == c) {
      s->relist_what |= what;
      if (s->relist_at == MCP_NO_DEADLINE) {
        s->relist_at = mcp__now_ms() + RELIST_DEBOUNCE_MS; /* a burst becomes one re-list */
        wake_locked(m);
      }
    }
    pthread_mutex_unlock(&m->lock);
  }
  if (m->o->event_fn) {
    json_object *jm = json_object_new_string(method);
    char *text = jm ? mcp__asprintf("{\"method\":%s,\"params\":%s}",
                                    json_object_to_json_string_ext(jm, JSON_C_TO_STRING_PLAIN),
                                    params)
                    : NULL;
    json_object_put(jm);
    post_ev(m, MCP_MANAGER_EVENT_NOTIFICATION, MCP_LOG_INFO, s->name, text);
  }
}

/* A client's log line (on the client's lane; |user| is the conn, which
 * outlives the client's callbacks): to the host with the server's name. */
static void client_log(void *user, mcp_log_level level, const char *msg) {
  conn *c = user;
  deliver_log(c->s->m, level, c->s->name, msg, false);
}

/* ------------------------------------------------------------------------ */
/* Connector threads                                                         */
/* ------------------------------------------------------------------------ */

typedef struct job {
  struct job *next; /* in the manager's queue */
  server *s;
  uint64_t attempt;
  bool relist;
  unsigned what;      /* relist: LIST_* bits */
  conn *c;            /* relist: a reference */
  mcp_cancel *cancel; /* connect: a reference; fired on shutdown */
} job;

/* The manager's OAuth defaults under an HTTP server's own OAuth options. */
static mcp_status oauth_defaults(mcp_manager *m, mcp_client_options *co, mcp_error *err) {
  if (!m->o->oauth || !co->s.url) return MCP_OK;
  if (co->oauth ? mcp__oauth_options_fill(co->oauth, m->o->oauth) != MCP_OK
                : !(co->oauth = mcp__oauth_options_dup(m->o->oauth)))
    return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  return MCP_OK;
}

static mcp_status build_options(server *s, mcp_client_options **out, mcp_error *err) {
  mcp_manager *m = s->m;
  if (s->code_co) {
    *out = mcp__client_options_dup(s->code_co);
    if (*out && !(*out)->s.env_inherit) (*out)->s.env_inherit = m->o->env_other;
    mcp_status st = *out ? oauth_defaults(m, *out, err)
                         : mcp__error_set(err, MCP_ENOMEM, "out of memory");
    if (st != MCP_OK) {
      mcp_client_options_free(*out);
      *out = NULL;
    }
    return st;
  }
  mcp_server_def *resolved = NULL;
  mcp_config_diag *diags = NULL;
  size_t ndiags = 0;
  mcp_status st = mcp__config_resolve_secrets(s->def, NULL, &resolved, &diags, &ndiags);
  for (size_t i = 0; i < ndiags; i++)
    mlog(m, diags[i].level, s->name, "%s", diags[i].message ? diags[i].message : "");
  mcp__config_diags_free(diags, ndiags);
  if (st != MCP_OK) return mcp__error_set(err, st, "could not resolve secrets");
  st = mcp__config_client_options(resolved, out, err);
  mcp__server_def_free(resolved);
  if (st == MCP_OK) mcp_client_options_set_timeout_ms(*out, s->timeout_ms);
  if (st == MCP_OK && !s->def->s.protocol && m->o->protocol)
    st = mcp_client_options_set_protocol(*out, m->o->protocol);
  if (st == MCP_OK && !(*out)->s.env_inherit)
    (*out)->s.env_inherit = s->def->project ? m->o->env_project : m->o->env_other;
  if (st == MCP_OK)
    mcp_client_options_set_list_limits(*out, m->o->list_max_pages, m->o->list_max_items,
                                       m->o->list_max_bytes);
  if (st == MCP_OK && (st = oauth_defaults(m, *out, err)) != MCP_OK) {
    mcp_client_options_free(*out);
    *out = NULL;
  }
  return st;
}

/* tools/list through |c|; *tools is the array's JSON text. */
static mcp_status list_tools(mcp_client *c, int64_t timeout, mcp_cancel *cancel, char **tools,
                             mcp_error *err) {
  mcp_call_options *co = mcp_call_options_new();
  if (!co) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  mcp_call_options_set_timeout_ms(co, timeout);
  mcp_call_options_set_cancel(co, cancel);
  mcp_status st = MCP_OK;
  /* A server without the tools capability has no tools: an empty list. */
  json_object *info = json_tokener_parse(mcp_client_server_info(c));
  json_object *caps = NULL;
  if (info && json_object_object_get_ex(info, "capabilities", &caps) &&
      !json_object_object_get_ex(caps, "tools", NULL)) {
    *tools = mcp__strdup("[]");
    if (!*tools) st = mcp__error_set(err, MCP_ENOMEM, "out of memory");
  } else {
    st = mcp_client_list_tools(c, co, tools, err);
  }
  json_object_put(info);
  mcp_call_options_free(co);
  return st;
}

/* Lists resources (LIST_RESOURCES) or prompts (LIST_PROMPTS) when the
 * server declares the capability; *out stays NULL when it does not. */
static mcp_status list_other(mcp_client *c, unsigned what, int64_t timeout, mcp_cancel *cancel,
                             char **out, mcp_error *err) {
  *out = NULL;
  json_object *info = json_tokener_parse(mcp_client_server_info(c));
  json_object *caps = NULL;
  bool has = info && json_object_object_get_ex(info, "capabilities", &caps) &&
             json_object_object_get_ex(caps, what == LIST_RESOURCES ? "resources" : "prompts",
                                       NULL);
  json_object_put(info);
  if (!has) return MCP_OK;
  mcp_call_options *co = mcp_call_options_new();
  if (!co) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  mcp_call_options_set_timeout_ms(co, timeout);
  mcp_call_options_set_cancel(co, cancel);
  mcp_status st = what == LIST_RESOURCES ? mcp_client_list_resources(c, co, out, err)
                                         : mcp_client_list_prompts(c, co, out, err);
  mcp_call_options_free(co);
  return st;
}

/* A copy of |s|'s subscriptions and their generation (NULL with *n 0:
 * none or out of memory, logged).  Takes m->lock. */
static char **subs_copy(server *s, size_t *n, uint64_t *gen) {
  mcp_manager *m = s->m;
  pthread_mutex_lock(&m->lock);
  *gen = s->subs_gen;
  size_t k = s->nsubs;
  char **uris = k ? mcp__calloc(k, sizeof(*uris)) : NULL;
  bool oom = k && !uris;
  for (size_t i = 0; uris && i < k; i++) oom |= !(uris[i] = mcp__strdup(s->subs[i]));
  pthread_mutex_unlock(&m->lock);
  if (oom) {
    for (size_t i = 0; uris && i < k; i++) mcp__free(uris[i]);
    mcp__free(uris);
    mlog(m, MCP_LOG_WARN, s->name, "out of memory subscribing to resources again");
    *n = 0;
    return NULL;
  }
  *n = k;
  return uris;
}

static bool subs_has(char *const *uris, size_t n, const char *uri) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(uris[i], uri) == 0) return true;
  return false;
}

static void subs_free(char **uris, size_t n) {
  for (size_t i = 0; i < n; i++) mcp__free(uris[i]);
  mcp__free(uris);
}

/*
 * The host's resource subscriptions of |s| sent on its new connection |c|
 * (a new client starts with none), best effort: a failure is logged.
 * The host may change the set meanwhile (its change goes to the same
 * client): when the generation moved while this sent a copy, the
 * difference to the new set is sent too, until it holds still, so an
 * unsubscribe that raced the copy is not undone.  Runs on a connector
 * thread.
 */
static void resubscribe(server *s, conn *c) {
  mcp_manager *m = s->m;
  char **sent = NULL; /* what c was given */
  size_t nsent = 0;
  for (;;) {
    uint64_t gen = 0;
    size_t n = 0;
    char **want = subs_copy(s, &n, &gen);
    for (size_t i = 0; i < nsent; i++)
      if (!subs_has(want, n, sent[i]))
        (void)mcp_client_unsubscribe_resource(c->c, sent[i], NULL, NULL);
    for (size_t i = 0; i < n; i++) {
      if (subs_has(sent, nsent, want[i])) continue;
      mcp_error err = MCP_ERROR_INIT;
      if (mcp_client_subscribe_resource(c->c, want[i], NULL, &err) != MCP_OK)
        mlog(m, MCP_LOG_WARN, s->name, "could not subscribe to %s again: %s", want[i],
             err.message ? err.message : "out of memory");
      mcp_error_clear(&err);
    }
    subs_free(sent, nsent);
    sent = want;
    nsent = n;
    pthread_mutex_lock(&m->lock);
    bool still = s->subs_gen == gen;
    pthread_mutex_unlock(&m->lock);
    if (still) break;
  }
  subs_free(sent, nsent);
}

/* Fetches resources and prompts into |s| (best effort: a failure is only
 * logged).  Runs on a connector thread. */
static void refresh_others(server *s, conn *c, unsigned what) {
  mcp_manager *m = s->m;
  static const unsigned kinds[] = {LIST_RESOURCES, LIST_PROMPTS};
  for (size_t k = 0; k < 2; k++) {
    if (!(what & kinds[k])) continue;
    char *list = NULL;
    mcp_error err = MCP_ERROR_INIT;
    mcp_status st = list_other(c->c, kinds[k], s->timeout_ms, m->stop_cancel, &list, &err);
    if (st != MCP_OK) {
      mlog(m, MCP_LOG_WARN, s->name, "listing %s failed: %s",
           kinds[k] == LIST_RESOURCES ? "resources" : "prompts", err.message ? err.message : "?");
      mcp_error_clear(&err);
      continue;
    }
    pthread_mutex_lock(&m->lock);
    if (s->conn == c) {
      char **slot = kinds[k] == LIST_RESOURCES ? &s->resources_json : &s->prompts_json;
      mcp__free(*slot);
      *slot = list;
      list = NULL;
    }
    pthread_mutex_unlock(&m->lock);
    mcp__free(list);
  }
}

/* The era |c| speaks, for the cache entry (the next connect's hint). */
static mcp_cache_era era_of(const mcp_client *c) {
  const char *v = c ? mcp_client_protocol_version(c) : NULL;
  if (!v) return MCP_CACHE_ERA_UNKNOWN;
  return strcmp(v, "2026-07-28") >= 0 ? MCP_CACHE_ERA_MODERN : MCP_CACHE_ERA_LEGACY;
}

/*
 * Whether |s|'s configuration (its hash, the cache's key) fixes who the
 * server takes us for on |c|: no `!command` secret among its environment
 * and headers (the hash has the command, not its output), and no
 * authorization but a literal Authorization header (an OAuth bearer,
 * configured or found on a 401, belongs to whichever account signed in).
 */
static bool identity_in_hash(const server *s, mcp_client *c) {
  const mcp_server_settings *d = &s->def->s;
  const char *literal = NULL;
  for (size_t i = 0; i < d->nenv; i++)
    if (d->env[i].value && d->env[i].value[0] == '!') return false;
  for (size_t i = 0; i < d->nheaders; i++) {
    if (d->headers[i].value && d->headers[i].value[0] == '!') return false;
    if (strcasecmp(d->headers[i].name, "authorization") == 0) literal = d->headers[i].value;
  }
  char ctx[40], lit[40];
  mcp__client_auth_context(c, ctx, sizeof(ctx));
  if (!ctx[0]) return true;
  mcp__sha256_auth_context(literal, lit, sizeof(lit));
  return literal && strcmp(lit, ctx) == 0;
}

/* Whether the tools |c| read for |s| stay off the disk (write_cache()). */
static bool cache_withholds(const server *s, mcp_client *c) {
  if (!s->m->cache_dir || !s->def) return true; /* nothing is written (write_cache) */
  return !c || (!identity_in_hash(s, c) && !mcp__client_list_public(c, "tools/list"));
}

/*
 * Stores |tools| in the disk cache, or only the era when |withhold| (from
 * cache_withholds() on the client that read them): when the list could
 * differ by account (SEP-2549: a private list never crosses authorization
 * contexts; the next start could be another account's), that is, the
 * configuration does not fix the identity and the server did not mark the
 * list public.
 */
static void write_cache(server *s, const char *tools, mcp_cache_era era, bool withhold) {
  mcp_manager *m = s->m;
  if (!m->cache_dir || !s->def) return; /* code servers have no config hash */
  if (withhold)
    mlog(m, MCP_LOG_DEBUG, s->name,
         "tool cache: the tools are not kept on disk (an authorization the configuration "
         "does not fix, and a list not marked public)");
  mcp_error err = MCP_ERROR_INIT;
  if (mcp__cache_write_era(m->cache_dir, s->name, s->def->hash, withhold ? NULL : tools, era,
                           (int64_t)time(NULL), &err) != MCP_OK)
    mlog(m, MCP_LOG_WARN, s->name, "could not write the tool cache: %s",
         err.message ? err.message : "?");
  mcp_error_clear(&err);
}

/* Warns, naming the server, about each tool of a fresh tools/list that
 * cannot be published (no name, or a name that is not a string: the tool
 * list skips it).  Returns the array's length. */
static size_t warn_unnamed_tools(server *s, const char *tools) {
  json_object *arr = tools ? json_tokener_parse(tools) : NULL;
  size_t n = json_object_is_type(arr, json_type_array) ? json_object_array_length(arr) : 0;
  for (size_t k = 0; k < n; k++) {
    json_object *t = json_object_array_get_idx(arr, k), *nm = NULL;
    if (json_object_is_type(t, json_type_object) && json_object_object_get_ex(t, "name", &nm) &&
        json_object_is_type(nm, json_type_string))
      continue;
    const char *shown = nm ? json_object_to_json_string_ext(nm, JSON_C_TO_STRING_PLAIN) : "none";
    mlog(s->m, MCP_LOG_WARN, s->name, "tools/list: tool %zu has %s name (%.40s%s); skipped", k,
         nm ? "a non-string" : "no", shown, strlen(shown) > 40 ? "..." : "");
  }
  json_object_put(arr);
  return n;
}

static void connector_main(void *arg) {
  job *j = arg;
  server *s = j->s;
  mcp_manager *m = s->m;
  mcp_error err = MCP_ERROR_INIT;
  char *tools = NULL;
  size_t ntools = 0;
  mcp_status st;

  if (j->relist) {
    refresh_others(s, j->c, j->what);
    if (!(j->what & LIST_TOOLS)) {
      pthread_mutex_lock(&m->lock);
      s->relisting = false;
      conn_unref_locked(m, j->c);
      pthread_mutex_unlock(&m->lock);
      mcp__free(j);
      return;
    }
    st = list_tools(j->c->c, s->timeout_ms, m->stop_cancel, &tools, &err);
    if (st == MCP_OK) ntools = warn_unnamed_tools(s, tools);
    /* While the job's reference holds the client (it is dropped below). */
    mcp_cache_era era = era_of(j->c->c);
    bool withhold = cache_withholds(s, j->c->c);
    pthread_mutex_lock(&m->lock);
    s->relisting = false;
    if (st == MCP_OK && s->conn == j->c && !m->stopping) {
      mcp__free(s->tools_json);
      s->tools_json = tools;
      s->ntools = ntools;
      tools = NULL;
      s->tools_cached = false;
      m->publish_due = true;
      wake_locked(m);
    } else if (st != MCP_OK && !m->stopping) {
      mlog(m, MCP_LOG_WARN, s->name, "re-listing tools failed: %s",
           err.message ? err.message : "?");
    }
    conn_unref_locked(m, j->c);
    pthread_mutex_unlock(&m->lock);
    if (st == MCP_OK && tools == NULL) {
      pthread_mutex_lock(&m->lock);
      char *copy = s->tools_json ? mcp__strdup(s->tools_json) : NULL;
      pthread_mutex_unlock(&m->lock);
      if (copy) write_cache(s, copy, era, withhold);
      mcp__free(copy);
    }
    mcp__free(tools);
    mcp_error_clear(&err);
    mcp__free(j);
    return;
  }

  conn *c = mcp__calloc(1, sizeof(*c));
  mcp_client_options *co = NULL;
  if (!c) {
    st = mcp__error_set(&err, MCP_ENOMEM, "out of memory");
    goto done;
  }
  atomic_init(&c->refs, 1);
  c->s = s;
  if ((st = build_options(s, &co, &err)) != MCP_OK) goto done;
  mcp_era_mode mode;
  const char *pinned;
  if (m->cache_dir && s->def && mcp__era_parse_mode(co->s.protocol, &mode, &pinned) &&
      mode == MCP_ERA_AUTO) {
    /* The era the cache remembers for this configuration: a legacy server
     * is not probed again (the client probes if the hint turns wrong). */
    mcp_cache_era era = MCP_CACHE_ERA_UNKNOWN;
    char *cached = NULL;
    mcp__cache_read_era(m->cache_dir, s->name, s->def->hash, (int64_t)time(NULL), MCP_CACHE_TTL_S,
                        &cached, &era, NULL, NULL);
    mcp__free(cached);
    co->era_hint = (int)era;
  }
  if (m->o->client_name)
    mcp_client_options_set_client_info(co, m->o->client_name, m->o->client_version);
  if ((st = apply_extensions(m->o, co)) != MCP_OK) {
    st = mcp__error_set(&err, st, "out of memory");
    goto done;
  }
  mcp_client_options_set_notification_handler(co, hook_notification, c);
  if (has_log(m)) mcp_client_options_set_log(co, client_log, c);
  mcp_client_hooks hooks = {.on_close = hook_close, .user = c, .connect_cancel = j->cancel};
  if ((st = mcp__client_connect_ex(co, m->workers, &hooks, &c->c, &err)) != MCP_OK) goto done;
  if (co->s.tls.insecure && co->s.url && strncmp(co->s.url, "https:", 6) == 0) {
    pthread_mutex_lock(&m->lock);
    bool first = !s->warned_insecure;
    s->warned_insecure = true;
    pthread_mutex_unlock(&m->lock);
    if (first)
      mlog(m, MCP_LOG_WARN, s->name,
           "TLS certificate verification is off (insecure): the server's identity is not "
           "checked");
  }
  st = list_tools(c->c, s->timeout_ms, j->cancel, &tools, &err);
  if (st == MCP_OK) ntools = warn_unnamed_tools(s, tools);

done:
  mcp_client_options_free(co);
  pthread_mutex_lock(&m->lock);
  bool current = j->attempt == s->attempt && !m->stopping;
  set_connecting_locked(s, false);
  if (s->connect_cancel == j->cancel) {
    mcp_cancel_unref(s->connect_cancel);
    s->connect_cancel = NULL;
  }
  if (current && st == MCP_OK) {
    s->conn = c;
    c = NULL; /* the manager's reference now */
    mcp__free(s->tools_json);
    s->tools_json = mcp__strdup(tools);
    s->ntools = ntools;
    s->tools_cached = false;
    set_error_locked(s, NULL);
    mcp__free(s->protocol_version);
    s->protocol_version = mcp__strdup(mcp_client_protocol_version(s->conn->c));
    s->ladder_step = 0;
    s->retry_at = MCP_NO_DEADLINE;
    if (s->breaker) {
      s->breaker =
          false; /* the half-open probe got through; s->trips stays until it proves stable */
      mlog(m, MCP_LOG_INFO, s->name, "circuit breaker closed: the server answered again");
    }
    s->ready_at = mcp__now_ms();
    set_state_locked(s, S_READY);
    m->publish_due = true;
    wake_locked(m);
    /* It may have closed before it was installed: its close hook then found
     * nothing to detach, so count the close here. */
    if (!mcp_client_is_open(s->conn->c)) lost_locked(s, s->conn, "closed right after connecting");
  } else if (current && s->breaker) {
    /* The half-open probe failed: open again, for longer. */
    open_breaker_locked(s, err.message ? err.message : mcp_strerror(st));
  } else if (current && (st == MCP_EINVAL || st == MCP_ECONFIG)) {
    /* The definition itself is unusable (a URL with credentials, a header
     * with a control character...): no reconnect can fix it, so it fails
     * once, as a configuration error, instead of looping in backoff. */
    char *msg = mcp__asprintf("configuration error: %s",
                              err.message ? err.message : mcp_strerror(st));
    set_error_locked(s, msg ? msg : "configuration error");
    mcp__free(msg);
    s->config_error = true;
    set_state_locked(s, S_FAILED);
    mlog(m, MCP_LOG_ERROR, s->name, "%s", s->last_error);
  } else if (current) {
    set_error_locked(s, err.message ? err.message : mcp_strerror(st));
    int64_t delay = backoff_ms(s);
    /* First connects of stdio servers do not retry: an unknown command
     * stays unknown.  Reconnects climb the ladder. */
    if (delay < 0 || (s->reconnects == 0 && !s->remote)) {
      set_state_locked(s, S_FAILED);
    } else {
      s->ladder_step++;
      s->retry_at = mcp__now_ms() + delay;
      set_state_locked(s, S_BACKOFF);
      wake_locked(m);
    }
    mlog(m, MCP_LOG_WARN, s->name, "%s", s->last_error);
  }
  if (c) {
    /* Not installed (failed, stale or stopping): close it on a thread. */
    if (c->c) conn_unref_locked(m, c);
    else mcp__free(c);
  }
  conn *installed = current && st == MCP_OK && s->conn && s->state == S_READY ? conn_ref(s->conn)
                                                                              : NULL;
  pthread_mutex_unlock(&m->lock);
  if (st == MCP_OK && current)
    write_cache(s, tools, era_of(installed ? installed->c : NULL),
                cache_withholds(s, installed ? installed->c : NULL));
  if (installed) {
    refresh_others(s, installed, LIST_RESOURCES | LIST_PROMPTS);
    resubscribe(s, installed);
    conn_unref(m, installed);
  }
  mcp__free(tools);
  mcp_error_clear(&err);
  mcp_cancel_unref(j->cancel);
  mcp__free(j);
}

/* A job the manager is stopping for: undone, its bookkeeping undone. */
static void drop_job(mcp_manager *m, job *j) {
  server *s = j->s;
  pthread_mutex_lock(&m->lock);
  if (j->relist) {
    s->relisting = false;
    conn_unref_locked(m, j->c);
  } else {
    if (s->connect_cancel == j->cancel) {
      mcp_cancel_unref(s->connect_cancel);
      s->connect_cancel = NULL;
    }
    set_connecting_locked(s, false);
  }
  pthread_mutex_unlock(&m->lock);
  mcp_cancel_unref(j->cancel);
  mcp__free(j);
}

/* A connector thread: runs queued jobs until the queue is empty. */
static void connectors_main(void *arg) {
  mcp_manager *m = arg;
  pthread_mutex_lock(&m->lock);
  for (job *j; (j = m->jobs_head);) {
    m->jobs_head = j->next;
    if (!m->jobs_head) m->jobs_tail = NULL;
    bool stopping = m->stopping;
    pthread_mutex_unlock(&m->lock);
    if (stopping) drop_job(m, j);
    else connector_main(j);
    pthread_mutex_lock(&m->lock);
  }
  m->connectors--;
  pthread_mutex_unlock(&m->lock);
}

/* Queues |j| for a connector, starting one when fewer than MAX_CONNECTORS
 * run.  False when none runs and none can start.  Caller holds m->lock. */
static bool queue_job_locked(mcp_manager *m, job *j) {
  if (m->connectors < MAX_CONNECTORS && spawn_locked(m, connectors_main, m)) m->connectors++;
  if (m->connectors == 0) return false;
  j->next = NULL;
  if (m->jobs_tail) m->jobs_tail->next = j;
  else m->jobs_head = j;
  m->jobs_tail = j;
  return true;
}

/* Starts a connect of |s| now.  Caller holds m->lock. */
static void connect_locked(server *s) {
  mcp_manager *m = s->m;
  if (m->stopping || s->connecting) return;
  job *j = mcp__calloc(1, sizeof(*j));
  if (!j) return;
  if (!(j->cancel = mcp_cancel_new())) {
    mcp__free(j);
    return;
  }
  j->s = s;
  j->attempt = ++s->attempt;
  set_connecting_locked(s, true);
  mcp_cancel_unref(s->connect_cancel);
  s->connect_cancel = mcp_cancel_ref(j->cancel);
  s->retry_at = MCP_NO_DEADLINE;
  if (s->state != S_DEFERRED) set_state_locked(s, S_CONNECTING);
  if (!queue_job_locked(m, j)) {
    set_connecting_locked(s, false);
    mcp_cancel_unref(s->connect_cancel);
    s->connect_cancel = NULL;
    mcp_cancel_unref(j->cancel);
    mcp__free(j);
    set_error_locked(s, "could not start a connector thread (the thread limit, ulimit -u?)");
    set_state_locked(s, S_FAILED);
  }
}

static void relist_locked(server *s) {
  mcp_manager *m = s->m;
  s->relist_at = MCP_NO_DEADLINE;
  if (m->stopping || !s->conn) return;
  if (s->relisting) {
    /* One at a time: try again once the running one is done. */
    s->relist_at = mcp__now_ms() + RELIST_DEBOUNCE_MS;
    return;
  }
  job *j = mcp__calloc(1, sizeof(*j));
  if (!j) return;
  j->s = s;
  j->relist = true;
  j->what = s->relist_what ? s->relist_what : LIST_TOOLS;
  s->relist_what = 0;
  j->c = conn_ref(s->conn);
  s->relisting = true;
  if (!queue_job_locked(m, j)) {
    s->relisting = false;
    conn_unref_locked(m, j->c);
    mcp__free(j);
  }
}

/* ------------------------------------------------------------------------ */
/* Tool lists                                                                */
/* ------------------------------------------------------------------------ */

static void tool_list_free(mcp_tool_list *l) {
  for (size_t i = 0; i < l->n; i++) {
    mcp__free(l->e[i].name);
    mcp__free(l->e[i].server);
    mcp__free(l->e[i].tool);
    mcp__free(l->e[i].json);
  }
  mcp__free(l->e);
  mcp__free(l->index);
  mcp__free(l);
}

static size_t name_hash(const char *s);

/* Indexes |l| by name (once, when built).  False when out of memory. */
static bool tool_list_index(mcp_tool_list *l) {
  size_t cap = 16;
  while (cap < 2 * l->n) cap *= 2;
  if (!(l->index = mcp__calloc(cap, sizeof(*l->index)))) return false;
  l->icap = cap;
  for (size_t k = 0; k < l->n; k++) {
    size_t i = name_hash(l->e[k].name) & (cap - 1);
    while (l->index[i]) i = (i + 1) & (cap - 1);
    l->index[i] = k + 1;
  }
  return true;
}

/* The entry named |name| in |l|, or NULL. */
static const struct tl_entry *tool_list_find(const mcp_tool_list *l, const char *name) {
  if (!l || !l->icap) return NULL;
  for (size_t i = name_hash(name) & (l->icap - 1);; i = (i + 1) & (l->icap - 1)) {
    if (!l->index[i]) return NULL;
    if (strcmp(l->e[l->index[i] - 1].name, name) == 0) return &l->e[l->index[i] - 1];
  }
}

MCP_EXTERN mcp_tool_list *mcp_tool_list_ref(mcp_tool_list *l) {
  if (l) atomic_fetch_add(&l->refs, 1);
  return l;
}

MCP_EXTERN void mcp_tool_list_unref(mcp_tool_list *l) {
  if (l && atomic_fetch_sub(&l->refs, 1) == 1) tool_list_free(l);
}

MCP_EXTERN uint64_t mcp_tool_list_version(const mcp_tool_list *l) { return l ? l->version : 0; }
MCP_EXTERN size_t mcp_tool_list_count(const mcp_tool_list *l) { return l ? l->n : 0; }
MCP_EXTERN const char *mcp_tool_list_name(const mcp_tool_list *l, size_t i) {
  return l && i < l->n ? l->e[i].name : NULL;
}
MCP_EXTERN const char *mcp_tool_list_server(const mcp_tool_list *l, size_t i) {
  return l && i < l->n ? l->e[i].server : NULL;
}
MCP_EXTERN const char *mcp_tool_list_tool(const mcp_tool_list *l, size_t i) {
  return l && i < l->n ? l->e[i].tool : NULL;
}
MCP_EXTERN const char *mcp_tool_list_json(const mcp_tool_list *l, size_t i) {
  return l && i < l->n ? l->e[i].json : NULL;
}
MCP_EXTERN bool mcp_tool_list_deferred(const mcp_tool_list *l, size_t i) {
  return l && i < l->n && l->e[i].deferred;
}

/* One server's tools, copied out under the lock for building a list. */
typedef struct src_tools {
  char *server;
  char *json;
  bool deferred;
  const mcp_server_def *def; /* its tool filters (config servers), or NULL */
} src_tools;

/*
 * Builds a new list from every server's tools (manager thread, no lock held
 * while parsing).  Returns NULL when out of memory.
 */
static mcp_tool_list *build_list(mcp_manager *m, uint64_t version) {
  src_tools *src = mcp__calloc(m->n ? m->n : 1, sizeof(*src));
  if (!src) return NULL;
  size_t nsrc = 0;
  pthread_mutex_lock(&m->lock);
  for (size_t i = 0; i < m->n; i++) {
    server *s = m->servers[i];
    if (!s->tools_json) continue;
    src[nsrc].server = mcp__strdup(s->name);
    src[nsrc].json = mcp__strdup(s->tools_json);
    src[nsrc].deferred = s->tools_cached && s->state != S_READY;
    src[nsrc].def = s->def;
    nsrc++;
  }
  pthread_mutex_unlock(&m->lock);

  mcp_tool_list *l = mcp__calloc(1, sizeof(*l));
  json_object **arrays = mcp__calloc(nsrc ? nsrc : 1, sizeof(*arrays));
  mcp_tool_origin *orig = NULL;
  size_t *from = NULL; /* for each origin: which source, which index */
  size_t *idx = NULL;
  size_t norig = 0, cap = 0;
  mcp_named_tool *named = NULL;
  size_t nnamed = 0;
  bool ok = l && arrays;
  for (size_t i = 0; ok && i < nsrc; i++) {
    if (!src[i].server || !src[i].json) {
      ok = false;
      break;
    }
    arrays[i] = json_tokener_parse(src[i].json);
    if (!arrays[i] || !json_object_is_type(arrays[i], json_type_array)) continue;
    size_t n = json_object_array_length(arrays[i]);
    for (size_t k = 0; k < n; k++) {
      json_object *t = json_object_array_get_idx(arrays[i], k), *nm = NULL;
      if (!t || !json_object_object_get_ex(t, "name", &nm) ||
          !json_object_is_type(nm, json_type_string) ||
          !mcp__config_tool_allowed(src[i].def, json_object_get_string(nm)))
        continue; /* unnamed, or filtered out by its config */
      if (norig == cap) {
        cap = cap ? cap * 2 : 64;
        mcp_tool_origin *o2 = mcp__reallocarray(orig, cap, sizeof(*orig));
        size_t *f2 = o2 ? mcp__reallocarray(from, cap, sizeof(*from)) : NULL;
        if (o2) orig = o2;
        if (f2) from = f2;
        size_t *i2 = f2 ? mcp__reallocarray(idx, cap, sizeof(*idx)) : NULL;
        if (i2) idx = i2;
        if (!o2 || !f2 || !i2) {
          ok = false;
          break;
        }
      }
      orig[norig] = (mcp_tool_origin){src[i].server, json_object_get_string(nm)};
      from[norig] = i;
      idx[norig] = k;
      norig++;
    }
  }
  if (ok && mcp__names_assign(orig, norig, &named, &nnamed) != MCP_OK) ok = false;
  if (ok) {
    atomic_init(&l->refs, 1);
    l->version = version;
    l->e = mcp__calloc(nnamed ? nnamed : 1, sizeof(*l->e));
    ok = l->e != NULL;
  }
  for (size_t i = 0; ok && i < nnamed; i++) {
    size_t o = named[i].index;
    json_object *t = json_object_array_get_idx(arrays[from[o]], idx[o]);
    struct tl_entry *e = &l->e[l->n];
    e->name = mcp__strdup(named[i].name);
    e->server = mcp__strdup(named[i].server);
    e->tool = mcp__strdup(named[i].tool);
    e->json = mcp__json_dup_string(t, NULL);
    e->deferred = src[from[o]].deferred;
    l->n++;
    if (!e->name || !e->server || !e->tool || !e->json) ok = false;
  }
  if (ok) ok = tool_list_index(l);
  mcp__names_free(named, nnamed);
  mcp__free(orig);
  mcp__free(from);
  mcp__free(idx);
  for (size_t i = 0; i < nsrc; i++) {
    if (arrays) json_object_put(arrays[i]);
    mcp__free(src[i].server);
    mcp__free(src[i].json);
  }
  mcp__free(arrays);
  mcp__free(src);
  if (!ok && l) {
    tool_list_free(l);
    l = NULL;
  }
  return l;
}

/* Publishes a fresh list and announces it.  Manager thread or start(). */
static void publish(mcp_manager *m) {
  pthread_mutex_lock(&m->lock);
  uint64_t version = ++m->version;
  m->publish_due = false;
  m->publishing = true;
  pthread_mutex_unlock(&m->lock);
  int64_t t0 = mcp__now_ms();
  mcp_tool_list *l = build_list(m, version);
  if (!l) {
    mlog(m, MCP_LOG_ERROR, NULL, "out of memory building the tool list");
    pthread_mutex_lock(&m->lock);
    m->publishing = false;
    pthread_cond_broadcast(&m->changed);
    pthread_mutex_unlock(&m->lock);
    return;
  }
  pthread_mutex_lock(&m->lock);
  m->publishing = false;
  m->published_at = mcp__now_ms();
  int64_t gap = 4 * (m->published_at - t0);
  m->publish_gap_ms = gap < PUBLISH_GAP_MIN_MS   ? PUBLISH_GAP_MIN_MS
                      : gap > PUBLISH_GAP_MAX_MS ? PUBLISH_GAP_MAX_MS
                                                 : gap;
  mcp_tool_list *old = m->snap;
  m->snap = l;
  /* Callers waiting for a tool name or for every server to settle. */
  pthread_cond_broadcast(&m->changed);
  pthread_mutex_unlock(&m->lock);
  mcp_tool_list_unref(old);
  post_ev(m, MCP_MANAGER_EVENT_TOOLS_CHANGED, MCP_LOG_INFO, NULL,
          mcp__asprintf("{\"version\":%llu,\"count\":%zu}", (unsigned long long)version, l->n));
}

/* ------------------------------------------------------------------------ */
/* The manager thread                                                        */
/* ------------------------------------------------------------------------ */

static void *manager_main(void *arg) {
  mcp_manager *m = arg;
  pthread_mutex_lock(&m->lock);
  while (!m->stopping) {
    int64_t now = mcp__now_ms(), next = MCP_NO_DEADLINE;
    for (size_t i = 0; i < m->n; i++) {
      server *s = m->servers[i];
      if (s->retry_at != MCP_NO_DEADLINE) {
        if (s->retry_at <= now) {
          s->retry_at = MCP_NO_DEADLINE;
          s->reconnects++;
          connect_locked(s);
        } else if (s->retry_at < next) {
          next = s->retry_at;
        }
      }
      if (s->relist_at != MCP_NO_DEADLINE) {
        if (s->relist_at <= now) relist_locked(s);
        else if (s->relist_at < next) next = s->relist_at;
      }
    }
    if (m->publish_due) {
      /* Servers still connecting: batch them (see PUBLISH_GAP_MIN_MS).
       * The last one settling publishes at once. */
      int64_t at = m->published_at + m->publish_gap_ms;
      if (m->nconnecting == 0 || now >= at) {
        pthread_mutex_unlock(&m->lock);
        publish(m);
        pthread_mutex_lock(&m->lock);
        continue;
      }
      if (at < next) next = at;
    }
    struct timespec ts = mcp__ts_from_ms(next);
    pthread_cond_timedwait(&m->wake, &m->lock, &ts);
  }
  pthread_mutex_unlock(&m->lock);
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Start and free                                                            */
/* ------------------------------------------------------------------------ */

static int cond_init_mono(pthread_cond_t *c) {
  pthread_condattr_t a;
  pthread_condattr_init(&a);
  pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
  int rc = pthread_cond_init(c, &a);
  pthread_condattr_destroy(&a);
  return rc;
}

static mcp_manager_options *options_dup(const mcp_manager_options *o) {
  mcp_manager_options *d = mcp_manager_options_new();
  if (!d) return NULL;
  d->project = o->project;
  d->user = o->user;
  d->trust_fn = o->trust_fn;
  d->trust_user = o->trust_user;
  d->imports = o->imports;
  d->cache_off = o->cache_off;
  d->gate_ms = o->gate_ms;
  d->timeout_ms = o->timeout_ms;
  d->protocol = o->protocol; /* static */
  d->breaker_cooldown_ms = o->breaker_cooldown_ms;
  d->breaker_cooldown_max_ms = o->breaker_cooldown_max_ms;
  d->retry_non_idempotent = o->retry_non_idempotent;
  d->workers = o->workers;
  d->list_max_pages = o->list_max_pages;
  d->list_max_items = o->list_max_items;
  d->list_max_bytes = o->list_max_bytes;
  d->log = o->log;
  d->log_record = o->log_record;
  d->log_record_user = o->log_record_user;
  d->event_fn = o->event_fn;
  d->event_user = o->event_user;
  d->env_project = o->env_project;
  d->env_other = o->env_other;
  d->format_set = o->format_set;
  d->format = o->format;
  bool ok = replace_str(&d->cwd, o->cwd) == MCP_OK &&
            replace_str(&d->cache_dir, o->cache_dir) == MCP_OK &&
            replace_str(&d->client_name, o->client_name) == MCP_OK &&
            replace_str(&d->client_version, o->client_version) == MCP_OK &&
            replace_str(&d->extensions, o->extensions) == MCP_OK;
  if (ok && o->oauth) ok = (d->oauth = mcp__oauth_options_dup(o->oauth)) != NULL;
  for (size_t i = 0; ok && i < o->nfiles; i++)
    ok = mcp_manager_options_add_config_file(d, o->files[i]) == MCP_OK;
  for (size_t i = 0; ok && i < o->ncode; i++)
    ok = mcp_manager_options_add_server(d, o->code[i].name, o->code[i].co) == MCP_OK;
  for (size_t i = 0; ok && i < o->inputs.n; i++)
    ok = mcp__config_inputs_set(&d->inputs, o->inputs.v[i].name, o->inputs.v[i].value) == MCP_OK;
  if (!ok) {
    mcp_manager_options_free(d);
    return NULL;
  }
  return d;
}

static server *server_new(mcp_manager *m, const char *name) {
  server *s = mcp__calloc(1, sizeof(*s));
  if (!s) return NULL;
  s->m = m;
  s->name = mcp__strdup(name);
  s->state = S_CLOSED; /* not started yet; start() connects it */
  s->retry_at = s->relist_at = MCP_NO_DEADLINE;
  if (!s->name) {
    mcp__free(s);
    return NULL;
  }
  return s;
}

static void server_free(server *s) {
  if (!s) return;
  mcp_cancel_unref(s->connect_cancel);
  mcp__free(s->name);
  mcp__server_def_free(s->def);
  mcp_client_options_free(s->code_co);
  mcp__free(s->tools_json);
  mcp__free(s->resources_json);
  mcp__free(s->prompts_json);
  mcp__free(s->last_error);
  mcp__free(s->protocol_version);
  for (size_t i = 0; i < s->nsubs; i++) mcp__free(s->subs[i]);
  mcp__free(s->subs);
  mcp__free(s);
}

static size_t name_hash(const char *s) {
  uint64_t h = UINT64_C(14695981039346656037); /* FNV-1a */
  for (; *s; s++) h = (h ^ (unsigned char)*s) * UINT64_C(1099511628211);
  return (size_t)h;
}

/* The server named |name| (the first added of that name), or NULL.  The
 * index is only written while loading, before any other thread runs. */
static server *find_server(mcp_manager *m, const char *name) {
  if (!m->icap) return NULL;
  for (size_t i = name_hash(name) & (m->icap - 1);; i = (i + 1) & (m->icap - 1)) {
    if (!m->index[i]) return NULL;
    if (strcmp(m->index[i]->name, name) == 0) return m->index[i];
  }
}

static void index_put(server **index, size_t cap, server *s) {
  size_t i = name_hash(s->name) & (cap - 1);
  while (index[i]) i = (i + 1) & (cap - 1);
  index[i] = s;
}

static bool add_server(mcp_manager *m, server *s) {
  server **v = mcp__reallocarray(m->servers, m->n + 1, sizeof(*v));
  if (!v) return false;
  m->servers = v;
  if (2 * (m->n + 1) > m->icap) { /* at most half full */
    size_t cap = m->icap ? 2 * m->icap : 16;
    server **ix = mcp__calloc(cap, sizeof(*ix));
    if (!ix) return false;
    for (size_t i = 0; i < m->icap; i++)
      if (m->index[i]) index_put(ix, cap, m->index[i]);
    mcp__free(m->index);
    m->index = ix;
    m->icap = cap;
  }
  if (!find_server(m, s->name)) index_put(m->index, m->icap, s);
  m->servers[m->n++] = s;
  return true;
}

/* Discovery: code servers first, then every file in priority order. */
static mcp_status load_servers(mcp_manager *m, mcp_error *err) {
  mcp_manager_options *o = m->o;
  for (size_t i = 0; i < o->ncode; i++) {
    server *s = server_new(m, o->code[i].name);
    if (!s || !(s->code_co = mcp__client_options_dup(o->code[i].co)) || !add_server(m, s)) {
      server_free(s);
      return mcp__error_set(err, MCP_ENOMEM, "out of memory");
    }
    s->remote = s->code_co->s.url != NULL;
    s->timeout_ms = s->code_co->s.timeout_ms;
  }
  mcp_discovery_opts d = {0};
  d.files = (const char *const *)o->files;
  d.nfiles = o->nfiles;
  d.cwd = o->cwd;
  d.no_project = !o->project;
  d.no_user = !o->user;
  d.imports = o->imports;
  d.trust = o->trust_fn;
  d.trust_user = o->trust_user;
  d.input = mcp__config_inputs_get;
  d.input_user = &o->inputs;
  d.format_set = o->format_set;
  d.format = o->format;
  mcp_status st = mcp__config_discover(&d, &m->cfg, err);
  if (st != MCP_OK) return st;
  /* Each message already names its file and server. */
  for (size_t i = 0; i < m->cfg->ndiags; i++)
    post_ev(m, EV_LOG_NAMED, m->cfg->diags[i].level, m->cfg->diags[i].server,
            mcp__strdup(m->cfg->diags[i].message ? m->cfg->diags[i].message : ""));
  for (size_t i = 0; i < m->cfg->ndefs; i++) {
    const mcp_server_def *def = m->cfg->defs[i];
    if (find_server(m, def->name)) continue; /* a code server wins */
    server *s = server_new(m, def->name);
    if (!s || !(s->def = mcp__server_def_dup(def)) || !add_server(m, s)) {
      server_free(s);
      return mcp__error_set(err, MCP_ENOMEM, "out of memory");
    }
    s->remote = def->type != MCP_SERVER_STDIO;
    s->timeout_ms = def->s.timeout_ms >= 0 ? def->s.timeout_ms : o->timeout_ms;
    bool disabled = !def->enabled;
    for (size_t k = 0; k < m->cfg->ndisabled; k++)
      if (strcmp(m->cfg->disabled[k], def->name) == 0) disabled = true;
    s->state = disabled ? S_DISABLED : S_CLOSED; /* not started yet */
  }
  return MCP_OK;
}

/* A task record that could not be written (mcp_manager_tasks.c). */
static void tasks_warn(void *user, const char *sname, const char *message) {
  mlog(user, MCP_LOG_WARN, sname, "%s", message);
}

static void manager_free_all(mcp_manager *m) {
  for (size_t i = 0; i < m->n; i++) server_free(m->servers[i]);
  mcp__free(m->servers);
  mcp__free(m->index);
  mcp__config_free(m->cfg);
  mcp_tool_list_unref(m->snap);
  if (m->lane) mcp__lane_free(m->lane);
  if (m->workers) mcp__workers_unref(m->workers);
  mcp__free(m->cache_dir);
  mcp__mtasks_free(m->tasks);
  mcp_manager_options_free(m->o);
  mcp_cancel_unref(m->stop_cancel);
  pthread_cond_destroy(&m->changed);
  pthread_cond_destroy(&m->wake);
  pthread_cond_destroy(&m->idle);
  pthread_mutex_destroy(&m->lock);
  mcp__free(m);
}

MCP_EXTERN mcp_status mcp_manager_start(const mcp_manager_options *o, mcp_manager **out,
                                        mcp_error *err) {
  if (out) *out = NULL;
  if (!o || !out) return mcp__error_set(err, MCP_EINVAL, "invalid argument");
  mcp_manager *m = mcp__calloc(1, sizeof(*m));
  if (!m) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  pthread_mutex_init(&m->lock, NULL);
  cond_init_mono(&m->changed);
  cond_init_mono(&m->wake);
  cond_init_mono(&m->idle);
  mcp_status st = MCP_ENOMEM;
  if (!(m->o = options_dup(o))) goto nomem;
  if (!(m->stop_cancel = mcp_cancel_new())) goto nomem;
  if (!(m->workers = mcp__workers_new(m->o->workers))) goto nomem;
  if (!(m->lane = mcp__lane_new(m->workers))) goto nomem;
  if (!m->o->cache_off) {
    if (m->o->cache_dir) {
      if (!(m->cache_dir = mcp__strdup(m->o->cache_dir))) goto nomem;
    } else if (mcp__cache_dir(getenv("XDG_CACHE_HOME"), getenv("HOME"), &m->cache_dir) != MCP_OK) {
      m->cache_dir = NULL; /* no home: no cache, not an error */
    }
  }
  if (m->cache_dir && !(m->tasks = mcp__mtasks_new(m->cache_dir, tasks_warn, m))) goto nomem;
  if ((st = load_servers(m, err)) != MCP_OK) goto fail;

  /* An empty list exists from the start, so mcp_manager_tools never fails. */
  pthread_mutex_lock(&m->lock);
  for (size_t i = 0; i < m->n; i++)
    if (m->servers[i]->state == S_CLOSED)
      connect_locked(m->servers[i]); /* announces "connecting" */
  pthread_mutex_unlock(&m->lock);

  /* The startup gate: every server settled, or the gate passed. */
  int64_t gate = mcp__now_ms() + m->o->gate_ms;
  pthread_mutex_lock(&m->lock);
  for (;;) {
    if (m->nconnecting == 0 || mcp__now_ms() >= gate) break;
    struct timespec ts = mcp__ts_from_ms(gate);
    pthread_cond_timedwait(&m->changed, &m->lock, &ts);
  }
  /* Slow servers serve their cached tools until they answer. */
  for (size_t i = 0; i < m->n; i++) {
    server *s = m->servers[i];
    if (!s->connecting || !m->cache_dir || !s->def) continue;
    char *tools = NULL, *why = NULL;
    mcp_cache_outcome oc = MCP_CACHE_ABSENT;
    mcp__cache_read(m->cache_dir, s->name, s->def->hash, (int64_t)time(NULL), MCP_CACHE_TTL_S,
                    &tools, &oc, &why);
    if (oc == MCP_CACHE_HIT && tools) {
      s->tools_json = tools;
      s->ntools = tools_count(tools);
      s->tools_cached = true;
      set_state_locked(s, S_DEFERRED);
    } else {
      mcp__free(tools);
      if (why) mlog(m, mcp__cache_outcome_level(oc), s->name, "tool cache: %s", why);
    }
    mcp__free(why);
  }
  pthread_mutex_unlock(&m->lock);
  publish(m);
  pthread_mutex_lock(&m->lock);
  if (pthread_create(&m->thread, NULL, manager_main, m) != 0) {
    pthread_mutex_unlock(&m->lock);
    st = mcp__error_set(err, MCP_ENOMEM, "could not start the manager thread");
    goto fail;
  }
  m->thread_started = true;
  pthread_mutex_unlock(&m->lock);
  *out = m;
  return MCP_OK;
nomem:
  st = mcp__error_set(err, MCP_ENOMEM, "out of memory");
fail:
  mcp_manager_free(m);
  return st;
}

MCP_EXTERN void mcp_manager_free(mcp_manager *m) {
  if (!m) return;
  pthread_mutex_lock(&m->lock);
  m->stopping = true; /* no reconnect or re-list starts after this */
  pthread_cond_broadcast(&m->wake);
  pthread_cond_broadcast(&m->changed);
  bool started = m->thread_started;
  pthread_mutex_unlock(&m->lock);
  if (started) pthread_join(m->thread, NULL);
  /* Close every server in parallel (closer threads), then wait for every
   * tracked thread: connectors finishing discard their clients. */
  pthread_mutex_lock(&m->lock);
  /* Host calls in flight on a connection end now (MCP_ECLOSED), outside
   * the lock; they hold their own references, so the clients stay. */
  conn **live = mcp__calloc(m->n ? m->n : 1, sizeof(*live));
  size_t nlive = 0;
  for (size_t i = 0; i < m->n; i++) {
    server *s = m->servers[i];
    conn *c = s->conn;
    s->conn = NULL;
    if (c && live) live[nlive++] = c;
    else if (c) conn_unref_locked(m, c);
    if (s->state != S_DISABLED) s->state = S_CLOSED;
  }
  pthread_mutex_unlock(&m->lock);
  for (size_t i = 0; i < nlive; i++) mcp__client_abort(live[i]->c, "the manager is shutting down");
  pthread_mutex_lock(&m->lock);
  for (size_t i = 0; i < nlive; i++) conn_unref_locked(m, live[i]);
  mcp__free(live);
  /* Abandon connects in progress rather than wait out their timeouts.  The
   * tokens are fired outside the lock (their listeners take table locks). */
  mcp_cancel **fire = mcp__calloc(m->n ? m->n : 1, sizeof(*fire));
  size_t nfire = 0;
  for (size_t i = 0; fire && i < m->n; i++)
    if (m->servers[i]->connect_cancel)
      fire[nfire++] = mcp_cancel_ref(m->servers[i]->connect_cancel);
  pthread_mutex_unlock(&m->lock);
  for (size_t i = 0; i < nfire; i++) {
    mcp_cancel_fire(fire[i]);
    mcp_cancel_unref(fire[i]);
  }
  mcp__free(fire);
  /* Re-lists in progress too (they hold their connection open). */
  if (m->stop_cancel) mcp_cancel_fire(m->stop_cancel);
  pthread_mutex_lock(&m->lock);
  while (m->threads > 0 || m->callers > 0) pthread_cond_wait(&m->idle, &m->lock);
  pthread_mutex_unlock(&m->lock);
  manager_free_all(m);
}

/* ------------------------------------------------------------------------ */
/* Host calls                                                                */
/* ------------------------------------------------------------------------ */

MCP_EXTERN mcp_tool_list *mcp_manager_tools(mcp_manager *m) {
  if (!m) return NULL;
  pthread_mutex_lock(&m->lock);
  mcp_tool_list *l = mcp_tool_list_ref(m->snap);
  pthread_mutex_unlock(&m->lock);
  return l;
}

/*
 * Waits until |s| has a live connection (bounded by |deadline|) and returns
 * a reference to it.  |gen| > 0: a resend waits only for connect attempt
 * |gen| (or a later one): when that fails, the call fails at once with its
 * error rather than wait out the backoff.  A call that finds |s| connecting
 * waits for that attempt the same way, and one that finds it backing off
 * makes its one retry now (issue 21: the cause, at once, not "timed out"
 * after the call's timeout); the ladder goes on for later calls.  Caller
 * holds m->lock.
 */
static conn *wait_conn_locked(server *s, int64_t deadline, const mcp_cancel *cancel, uint64_t gen,
                              mcp_error *err) {
  mcp_manager *m = s->m;
  if (!gen && !m->stopping && s->state == S_BACKOFF && !s->connecting) {
    s->reconnects++;
    connect_locked(s);
  }
  if (!gen && s->connecting && (s->state == S_CONNECTING || s->state == S_BACKOFF))
    gen = s->attempt;
  for (;;) {
    if (cancel && mcp_cancel_is_fired(cancel)) {
      mcp__error_set(err, MCP_ECANCELLED, "cancelled while waiting for server \"%s\"", s->name);
      return NULL;
    }
    if (m->stopping) {
      mcp__error_set(err, MCP_ECLOSED, "the manager is shutting down");
      return NULL;
    }
    if (s->conn && s->state == S_READY) return conn_ref(s->conn);
    if (gen && s->state == S_BACKOFF && !s->connecting && s->attempt >= gen) {
      mcp__error_set(err, MCP_EIO, "server \"%s\": %s", s->name,
                     s->last_error ? s->last_error : "reconnect failed");
      return NULL;
    }
    if (s->state == S_FAILED || s->state == S_DISABLED || s->state == S_CLOSED) {
      mcp__error_set(err,
                     s->state == S_DISABLED                    ? MCP_ESTATE
                     : s->state == S_FAILED && s->config_error ? MCP_ECONFIG
                                                               : MCP_ECLOSED,
                     "server \"%s\" is %s%s%s", s->name, state_names[s->state],
                     s->last_error ? ": " : "", s->last_error ? s->last_error : "");
      return NULL;
    }
    if (mcp__now_ms() >= deadline) {
      mcp__error_set(err, MCP_ETIMEDOUT, "server \"%s\" is not ready (%s%s%s)", s->name,
                     state_names[s->state], s->last_error ? ": " : "",
                     s->last_error ? s->last_error : "");
      return NULL;
    }
    struct timespec ts = mcp__ts_from_ms(deadline);
    pthread_cond_timedwait(&m->changed, &m->lock, &ts);
  }
}

/*
 * May a call that failed with |st| be sent once more after a reconnect?
 * Only failures of the connection (closed, I/O error, HTTP 404, 502, 503)
 * qualify, and of those only what the server cannot have run, unless
 * repeating it is harmless (RFC 9110 9.2.2):
 *  - the transport says it provably never reached the server (connect
 *    failed, nothing written, REFUSED_STREAM, above GOAWAY's
 *    last-stream-id: mcp__error_not_sent()), or the server refused it
 *    (404: the session expired);
 *  - the request is idempotent (|idempotent|: an MCP read, or a tool
 *    annotated idempotentHint/readOnlyHint);
 *  - the host opted in (mcp_manager_options_set_retry_non_idempotent).
 * A stdio server that crashed mid-call, a dropped connection, a 502 or a
 * 503 after the request went out: the server may have run it, so the
 * caller gets the error.  A broken response stream on a modern HTTP
 * connection (MCP__ERRF_STREAM_LOST) is such a failure too, resent on the
 * same connection (resend_in_place()); a read the client already sent
 * twice (MCP__ERRF_REISSUED) is not sent a third time.
 */
static bool may_resend(const mcp_manager *m, bool idempotent, mcp_status st, const mcp_error *e) {
  if (mcp__error_has(e, MCP__ERRF_REISSUED)) return false;
  bool conn_failure = st == MCP_ECLOSED || st == MCP_EIO ||
                      (st == MCP_EHTTP && e &&
                       (e->http_status == 404 || e->http_status == 502 || e->http_status == 503));
  if (!conn_failure) return false;
  if (mcp__error_not_sent(e)) return true;
  if (st == MCP_EHTTP && e->http_status == 404) return true;
  return idempotent || m->o->retry_non_idempotent;
}

/* Requests that only read (MCP's reads: repeating one changes nothing). */
static bool method_idempotent(const char *method) {
  static const char *const reads[] = {
      "ping",         "tools/list",  "resources/list",          "resources/read",
      "prompts/list", "prompts/get", "resources/templates/list"};
  for (size_t i = 0; i < sizeof(reads) / sizeof(reads[0]); i++)
    if (strcmp(method, reads[i]) == 0) return true;
  return false;
}

/* Does |s| annotate its tool |tool| as safe to repeat (idempotentHint or
 * readOnlyHint true, in the current snapshot)?  Only asked after a failure. */
static bool tool_idempotent(mcp_manager *m, const server *s, const char *tool) {
  bool yes = false;
  mcp_tool_list *l = mcp_manager_tools(m);
  for (size_t i = 0; l && i < l->n && !yes; i++) {
    if (strcmp(l->e[i].server, s->name) != 0 || strcmp(l->e[i].tool, tool) != 0) continue;
    json_object *t = l->e[i].json ? json_tokener_parse(l->e[i].json) : NULL;
    json_object *ann = NULL, *h = NULL;
    if (t && json_object_object_get_ex(t, "annotations", &ann) &&
        json_object_is_type(ann, json_type_object))
      yes = (json_object_object_get_ex(ann, "idempotentHint", &h) &&
             json_object_is_type(h, json_type_boolean) && json_object_get_boolean(h)) ||
            (json_object_object_get_ex(ann, "readOnlyHint", &h) &&
             json_object_is_type(h, json_type_boolean) && json_object_get_boolean(h));
    json_object_put(t);
    break;
  }
  mcp_tool_list_unref(l);
  return yes;
}

/* Cancel listener: wake callers waiting for a server (runs under the
 * token's lock, which is taken before m->lock, never after). */
static void wake_waiters(void *arg) {
  mcp_manager *m = arg;
  pthread_mutex_lock(&m->lock);
  pthread_cond_broadcast(&m->changed);
  pthread_mutex_unlock(&m->lock);
}

typedef mcp_status (*conn_call_fn)(mcp_client *c, const void *arg, const mcp_call_options *opts,
                                   char **result, mcp_error *err);
/* Is the call |arg| of |fn| safe to repeat on |s|? */
typedef bool (*conn_idem_fn)(mcp_manager *m, const server *s, const void *arg);

/*
 * A call on |c| failed with |st| / |e| and may be sent again: drop the
 * connection (unless someone already did), reconnect now or open the
 * breaker, and drop the caller's reference to |c|.  Returns the connect
 * attempt the resend waits for (wait_conn_locked's |gen|).
 */
static uint64_t reconnect_for_resend(server *s, conn *c, mcp_status st, const mcp_error *e) {
  mcp_manager *m = s->m;
  pthread_mutex_lock(&m->lock);
  if (s->conn == c) {
    s->conn = NULL;
    conn_unref_locked(m, c);
    set_error_locked(s, e->message);
    if (!breaker_due_locked(s, mcp__now_ms())) {
      s->reconnects++;
      connect_locked(s);
    } else {
      open_breaker_locked(s, e->message);
    }
  }
  /* The attempt running now, or the next one the backoff starts. */
  uint64_t gen = s->connecting ? s->attempt : s->attempt + 1;
  conn_unref_locked(m, c);
  pthread_mutex_unlock(&m->lock);
  mlog(m, MCP_LOG_INFO, s->name, "%s; reconnecting and retrying once",
       e->message ? e->message : mcp_strerror(st));
  return gen;
}

/* A connection failure of a call on |s| (closed, I/O, TLS, timed out)
 * names the server, as the manager's own errors do: 'server "s": server
 * exited with status 3; ...'.  Other errors (the server's JSON-RPC
 * errors, HTTP statuses) pass as they are. */
static void name_server_error(const server *s, mcp_error *err) {
  if (!err || !err->message) return;
  mcp_status st = err->status;
  if (st != MCP_ECLOSED && st != MCP_EIO && st != MCP_ETLS && st != MCP_ETIMEDOUT) return;
  char quoted[300];
  snprintf(quoted, sizeof(quoted), "\"%s\"", s->name);
  if (strstr(err->message, quoted)) return;
  size_t n = strlen(s->name) + strlen(err->message) + 16;
  char *msg = malloc(n); /* mcp_error's messages are plain malloc */
  if (!msg) return;
  snprintf(msg, n, "server \"%s\": %s", s->name, err->message);
  free(err->message);
  err->message = msg;
}
/* A failure a resend needs no reconnect for: the response stream of a
 * modern (stateless) HTTP request broke; the connection has no session
 * to lose and its HTTP layer reconnects by itself.  Dropping it would
 * fail every other call in flight on it and its listen. */
static bool resend_in_place(const mcp_error *e) { return mcp__error_has(e, MCP__ERRF_STREAM_LOST); }

/* Runs |fn| on |s|'s connection, waiting for it, and once more after a
 * reconnect when the failure allows it (may_resend). */
static mcp_status call_on_server(mcp_manager *m, server *s, conn_call_fn fn, conn_idem_fn idem,
                                 const void *arg, const mcp_call_options *opts, char **result,
                                 mcp_error *err) {
  int64_t timeout = opts && opts->timeout_ms >= 0 ? opts->timeout_ms : s->timeout_ms;
  int64_t deadline = timeout > 0 ? mcp__now_ms() + timeout : MCP_NO_DEADLINE;
  mcp_status st = MCP_ECLOSED;
  /* A cancel token fired while we wait for the server wakes us. */
  mcp_cancel *cancel = opts ? opts->cancel : NULL;
  mcp_cancel_listener wake = {0};
  /* Counted, so mcp_manager_free() ends this call and waits for it. */
  pthread_mutex_lock(&m->lock);
  bool stopping = m->stopping;
  if (!stopping) m->callers++;
  pthread_mutex_unlock(&m->lock);
  if (stopping) return mcp__error_set(err, MCP_ECLOSED, "the manager is shutting down");
  bool listening = cancel && mcp__cancel_listen(cancel, &wake, wake_waiters, m) == MCP_OK;
  uint64_t gen = 0; /* the resend waits for this connect attempt */
  for (int attempt = 0; attempt < 2; attempt++) {
    pthread_mutex_lock(&m->lock);
    mcp_error werr = MCP_ERROR_INIT;
    conn *c = wait_conn_locked(s, deadline, cancel, gen, &werr);
    pthread_mutex_unlock(&m->lock);
    if (!c) {
      st = werr.status ? werr.status : MCP_ECLOSED;
      if (err) mcp__error_copy(err, &werr);
      mcp_error_clear(&werr);
      break;
    }
    mcp_call_options local = {.timeout_ms = -1};
    if (opts) local = *opts;
    if (deadline != MCP_NO_DEADLINE) {
      int64_t left = deadline - mcp__now_ms();
      local.timeout_ms = left > 0 ? left : 1;
    }
    mcp_error e2 = MCP_ERROR_INIT;
    st = fn(c->c, arg, &local, result, &e2);
    if (attempt == 0 && may_resend(m, idem(m, s, arg), st, &e2) && resend_in_place(&e2)) {
      mlog(m, MCP_LOG_INFO, s->name, "%s; sending it again as a new request",
           e2.message ? e2.message : mcp_strerror(st));
      conn_unref(m, c);
      mcp_error_clear(&e2);
      continue;
    }
    if (attempt == 0 && may_resend(m, idem(m, s, arg), st, &e2)) {
      gen = reconnect_for_resend(s, c, st, &e2); /* takes our reference */
      mcp_error_clear(&e2);
      continue;
    }
    conn_unref(m, c);
    if (st != MCP_OK && err) {
      mcp__error_copy(err, &e2);
      name_server_error(s, err);
    }
    mcp_error_clear(&e2);
    break;
  }
  if (listening) mcp__cancel_unlisten(cancel, &wake); /* m->lock not held here */
  pthread_mutex_lock(&m->lock);
  if (--m->callers == 0 && m->stopping) pthread_cond_broadcast(&m->idle);
  pthread_mutex_unlock(&m->lock);
  return st;
}

typedef struct tool_arg {
  const char *tool;
  const char *args;
} tool_arg;

static mcp_status do_call_tool(mcp_client *c, const void *arg, const mcp_call_options *opts,
                               char **result, mcp_error *err) {
  const tool_arg *a = arg;
  return mcp_client_call_tool(c, a->tool, a->args, opts, result, err);
}

static bool idem_tool(mcp_manager *m, const server *s, const void *arg) {
  return tool_idempotent(m, s, ((const tool_arg *)arg)->tool);
}

typedef struct req_arg {
  const char *method;
  const char *params;
} req_arg;

static mcp_status do_request(mcp_client *c, const void *arg, const mcp_call_options *opts,
                             char **result, mcp_error *err) {
  const req_arg *a = arg;
  return mcp_client_request(c, a->method, a->params, opts, result, err);
}

static bool idem_request(mcp_manager *m, const server *s, const void *arg) {
  (void)m;
  (void)s;
  return method_idempotent(((const req_arg *)arg)->method);
}

/* Is a connect running, or a tool list not yet published (due, or being
 * built: wait_ready() returning then would hand out the old list)?  Then a
 * name missing from the tool list may still come.  Caller holds m->lock. */
static bool unsettled_locked(const mcp_manager *m) {
  return m->publish_due || m->publishing || m->nconnecting > 0;
}

/*
 * Looks |name| up in the tool list; while it is missing and some server is
 * still connecting (or its tools not yet published), waits for the next
 * change, up to |deadline| or |cancel|.  *s NULL when no server has it.
 */
static mcp_status find_tool(mcp_manager *m, const char *name, int64_t deadline, mcp_cancel *cancel,
                            server **s, char **tool, mcp_error *err) {
  mcp_cancel_listener wake = {0};
  bool listening = false;
  mcp_status st = MCP_OK;
  *s = NULL;
  *tool = NULL;
  for (;;) {
    mcp_tool_list *l = mcp_manager_tools(m);
    const struct tl_entry *e = tool_list_find(l, name);
    if (e) {
      *s = find_server(m, e->server);
      if (!(*tool = mcp__strdup(e->tool))) st = mcp__error_set(err, MCP_ENOMEM, "out of memory");
    }
    uint64_t seen = l ? l->version : 0;
    mcp_tool_list_unref(l);
    if (*s || st != MCP_OK) break;
    if (!listening && cancel)
      listening = mcp__cancel_listen(cancel, &wake, wake_waiters, m) == MCP_OK;
    pthread_mutex_lock(&m->lock);
    /* The published list's version: m->version moves when a build starts. */
    bool more = !m->stopping && unsettled_locked(m) && (m->snap ? m->snap->version : 0) == seen;
    if (more && cancel && mcp_cancel_is_fired(cancel)) {
      pthread_mutex_unlock(&m->lock);
      st = mcp__error_set(err, MCP_ECANCELLED, "cancelled while waiting for tool \"%s\"", name);
      break;
    }
    if (more && deadline != MCP_NO_DEADLINE && mcp__now_ms() >= deadline) {
      pthread_mutex_unlock(&m->lock);
      st = mcp__error_set(err, MCP_ETIMEDOUT,
                          "no tool named \"%s\" yet: servers are still connecting", name);
      break;
    }
    if (more) {
      struct timespec ts = mcp__ts_from_ms(deadline);
      if (deadline == MCP_NO_DEADLINE) pthread_cond_wait(&m->changed, &m->lock);
      else pthread_cond_timedwait(&m->changed, &m->lock, &ts);
    }
    bool again = more || (m->snap ? m->snap->version : 0) != seen;
    pthread_mutex_unlock(&m->lock);
    if (!again) break;
  }
  if (listening) mcp__cancel_unlisten(cancel, &wake);
  if (st != MCP_OK) {
    mcp__free(*tool);
    *tool = NULL;
    *s = NULL;
  }
  return st;
}

MCP_EXTERN mcp_status mcp_manager_wait_ready(mcp_manager *m, const char *server_name,
                                             int64_t timeout_ms, mcp_error *err) {
  if (!m) return mcp__error_set(err, MCP_EINVAL, "invalid argument");
  int64_t deadline = mcp__deadline_in(timeout_ms < 0 ? m->o->timeout_ms : timeout_ms);
  server *s = NULL;
  if (server_name && !(s = find_server(m, server_name)))
    return mcp__error_set(err, MCP_ENOTFOUND, "no server named \"%s\"", server_name);
  mcp_status st = MCP_OK;
  pthread_mutex_lock(&m->lock);
  if (s) {
    /* Ready, or the error of its first failed attempt (gen 1). */
    mcp_error werr = MCP_ERROR_INIT;
    conn *c = wait_conn_locked(s, deadline, NULL, 1, &werr);
    if (c) {
      conn_unref_locked(m, c);
    } else {
      st = werr.status ? werr.status : MCP_EIO;
      if (err) mcp__error_copy(err, &werr);
    }
    mcp_error_clear(&werr);
  }
  while (st == MCP_OK && !m->stopping &&
         (s ? m->publish_due || m->publishing : unsettled_locked(m))) {
    if (deadline != MCP_NO_DEADLINE && mcp__now_ms() >= deadline) {
      char names[256] = "";
      size_t k = 0;
      for (size_t i = 0; i < m->n && k + 4 < sizeof(names); i++) {
        if (!m->servers[i]->connecting) continue;
        int w = snprintf(names + k, sizeof(names) - k, "%s%s", k ? ", " : "", m->servers[i]->name);
        k = w < 0 ? k : k + (size_t)w < sizeof(names) ? k + (size_t)w : sizeof(names) - 1;
      }
      st = mcp__error_set(err, MCP_ETIMEDOUT, "servers still connecting: %s",
                          names[0] ? names : "(tool list not yet published)");
      break;
    }
    struct timespec ts = mcp__ts_from_ms(deadline);
    if (deadline == MCP_NO_DEADLINE) pthread_cond_wait(&m->changed, &m->lock);
    else pthread_cond_timedwait(&m->changed, &m->lock, &ts);
  }
  if (st == MCP_OK && m->stopping)
    st = mcp__error_set(err, MCP_ECLOSED, "the manager is shutting down");
  pthread_mutex_unlock(&m->lock);
  return st;
}

MCP_EXTERN mcp_status mcp_manager_call_tool(mcp_manager *m, const char *name, const char *args_json,
                                            const mcp_call_options *opts, char **result_json,
                                            mcp_error *err) {
  if (result_json) *result_json = NULL;
  if (!m || !name || !result_json) return mcp__error_set(err, MCP_EINVAL, "invalid argument");
  server *s = NULL;
  char *tool = NULL;
  const char *slash = strchr(name, '/');
  if (slash) {
    char *sname = mcp__strndup(name, (size_t)(slash - name));
    if (!sname) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
    s = find_server(m, sname);
    mcp__free(sname);
    tool = mcp__strdup(slash + 1);
  } else {
    int64_t timeout = opts && opts->timeout_ms >= 0 ? opts->timeout_ms : m->o->timeout_ms;
    mcp_status wst = find_tool(m, name, mcp__deadline_in(timeout), opts ? opts->cancel : NULL, &s,
                               &tool, err);
    if (wst != MCP_OK) return wst;
  }
  if (!s) {
    mcp__free(tool);
    return mcp__error_set(err, MCP_ENOTFOUND, "no tool named \"%s\"", name);
  }
  if (!tool) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  if (!mcp__config_tool_allowed(s->def, tool)) {
    mcp_status fst = mcp__error_set(err, MCP_ENOTFOUND,
                                    "tool \"%s\" of server \"%s\" is filtered out by its config "
                                    "(%s)",
                                    tool, s->name, s->def->source ? s->def->source : "");
    mcp__free(tool);
    return fst;
  }
  tool_arg a = {tool, args_json};
  mcp__mtask_rec rec; /* records a task the call follows (mcp_manager_tasks.c) */
  mcp_call_options local;
  const mcp_call_options *o = mcp__mtasks_wrap(m->tasks, s->name, tool, opts, &rec, &local);
  mcp_status st = call_on_server(m, s, do_call_tool, idem_tool, &a, o, result_json, err);
  mcp__free(tool);
  return st;
}

/* ---- for mcp_manager_tasks.c ------------------------------------------------- */

static bool idem_yes(mcp_manager *m, const server *s, const void *arg) {
  (void)m, (void)s, (void)arg;
  return true;
}
static bool idem_no(mcp_manager *m, const server *s, const void *arg) {
  (void)m, (void)s, (void)arg;
  return false;
}

mcp_status mcp__manager_on_server(mcp_manager *m, const char *server_name, mcp__mgr_conn_fn fn,
                                  const void *arg, bool idempotent, const mcp_call_options *opts,
                                  char **result, mcp_error *err) {
  server *s = find_server(m, server_name);
  if (!s) return mcp__error_set(err, MCP_ENOTFOUND, "no server named \"%s\"", server_name);
  return call_on_server(m, s, fn, idempotent ? idem_yes : idem_no, arg, opts, result, err);
}

mcp__mtasks *mcp__manager_task_store(mcp_manager *m) { return m->tasks; }

MCP_EXTERN mcp_status mcp_manager_request(mcp_manager *m, const char *server_name,
                                          const char *method, const char *params_json,
                                          const mcp_call_options *opts, char **result_json,
                                          mcp_error *err) {
  if (result_json) *result_json = NULL;
  if (!m || !server_name || !method || !result_json)
    return mcp__error_set(err, MCP_EINVAL, "invalid argument");
  server *s = find_server(m, server_name);
  if (!s) return mcp__error_set(err, MCP_ENOTFOUND, "no server named \"%s\"", server_name);
  req_arg a = {method, params_json};
  return call_on_server(m, s, do_request, idem_request, &a, opts, result_json, err);
}

/* ---- resource subscriptions ------------------------------------------------- */

typedef struct sub_arg {
  const char *uri;
  bool on;
} sub_arg;

static mcp_status do_subscribe(mcp_client *c, const void *arg, const mcp_call_options *opts,
                               char **result, mcp_error *err) {
  const sub_arg *a = arg;
  (void)result;
  return a->on ? mcp_client_subscribe_resource(c, a->uri, opts, err)
               : mcp_client_unsubscribe_resource(c, a->uri, opts, err);
}

/* Subscribing (or unsubscribing) twice changes nothing. */
static bool idem_subscribe(mcp_manager *m, const server *s, const void *arg) {
  (void)m;
  (void)s;
  (void)arg;
  return true;
}

/* Adds |uri| to (|on|) or removes it from |s|'s subscriptions; true when
 * the set changed.  Caller holds m->lock.  MCP_ENOMEM in *st. */
static bool subs_change_locked(server *s, const char *uri, bool on, mcp_status *st) {
  size_t i = 0;
  while (i < s->nsubs && strcmp(s->subs[i], uri) != 0) i++;
  if (!on) {
    if (i == s->nsubs) return false;
    mcp__free(s->subs[i]);
    s->subs[i] = s->subs[--s->nsubs];
    s->subs_gen++;
    return true;
  }
  if (i < s->nsubs) return false;
  char *dup = mcp__strdup(uri);
  char **grown = dup ? mcp__realloc(s->subs, (s->nsubs + 1) * sizeof(*grown)) : NULL;
  if (!grown) {
    mcp__free(dup);
    *st = MCP_ENOMEM;
    return false;
  }
  s->subs = grown;
  s->subs[s->nsubs++] = dup;
  s->subs_gen++;
  return true;
}

static mcp_status change_subscription(mcp_manager *m, const char *server_name, const char *uri,
                                      bool on, const mcp_call_options *opts, mcp_error *err) {
  if (!m || !server_name || !uri || !*uri)
    return mcp__error_set(err, MCP_EINVAL, "invalid argument");
  server *s = find_server(m, server_name);
  if (!s) return mcp__error_set(err, MCP_ENOTFOUND, "no server named \"%s\"", server_name);
  mcp_status st = MCP_OK;
  pthread_mutex_lock(&m->lock);
  bool added = subs_change_locked(s, uri, on, &st) && on;
  pthread_mutex_unlock(&m->lock);
  if (st) return mcp__error_set(err, st, "out of memory");
  sub_arg a = {uri, on};
  char *unused = NULL;
  st = call_on_server(m, s, do_subscribe, idem_subscribe, &a, opts, &unused, err);
  mcp__free(unused);
  if (st != MCP_OK && added) { /* not subscribed: not sent again either */
    mcp_status ignored = MCP_OK;
    pthread_mutex_lock(&m->lock);
    subs_change_locked(s, uri, false, &ignored);
    pthread_mutex_unlock(&m->lock);
  }
  return st;
}

MCP_EXTERN mcp_status mcp_manager_subscribe_resource(mcp_manager *m, const char *server_name,
                                                     const char *uri, const mcp_call_options *opts,
                                                     mcp_error *err) {
  return change_subscription(m, server_name, uri, true, opts, err);
}

MCP_EXTERN mcp_status mcp_manager_unsubscribe_resource(mcp_manager *m, const char *server_name,
                                                       const char *uri,
                                                       const mcp_call_options *opts,
                                                       mcp_error *err) {
  return change_subscription(m, server_name, uri, false, opts, err);
}

/* ---- skills (mcp_skills.c does the work on a server's client) --------------- */

typedef struct skills_arg {
  const char *server;
  mcp_skill_list *list;       /* list: append here */
  const mcp_skill_item *item; /* load, read a file: this skill */
  const char *file;           /* read a file: this one */
  size_t *len;
} skills_arg;

static mcp_status do_list_skills(mcp_client *c, const void *arg, const mcp_call_options *opts,
                                 char **result, mcp_error *err) {
  const skills_arg *a = arg;
  (void)result;
  /* A resend after a reconnect starts the server's part of the list over. */
  size_t keep = a->list->n;
  mcp_status st = mcp__skills_list_into(c, a->server, opts, a->list, err);
  while (st && a->list->n > keep) {
    mcp_skill_item *it = &a->list->items[--a->list->n];
    mcp__free(it->server);
    mcp__free(it->label);
    mcp__skill_entry_clear(&it->e);
  }
  return st;
}

static mcp_status do_load_skill(mcp_client *c, const void *arg, const mcp_call_options *opts,
                                char **result, mcp_error *err) {
  const skills_arg *a = arg;
  return mcp__skill_load(c, a->item, opts, result, a->len, err);
}

static mcp_status do_read_skill_file(mcp_client *c, const void *arg, const mcp_call_options *opts,
                                     char **result, mcp_error *err) {
  const skills_arg *a = arg;
  return mcp__skill_read_file(c, a->item, a->file, opts, result, a->len, err);
}

static bool idem_skills(mcp_manager *m, const server *s, const void *arg) {
  (void)m;
  (void)s;
  (void)arg;
  return true; /* skills/list and resources/read are reads */
}

MCP_EXTERN mcp_status mcp_manager_list_skills(mcp_manager *m, const char *server_name,
                                              const mcp_call_options *opts, mcp_skill_list **out,
                                              mcp_error *err) {
  if (out) *out = NULL;
  if (!m || !out) return mcp__error_set(err, MCP_EINVAL, "invalid argument");
  mcp_skill_list *l = mcp__skill_list_new();
  if (!l) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  mcp_status st = MCP_OK;
  for (size_t i = 0; i < m->n && st == MCP_OK; i++) {
    server *s = m->servers[i];
    if (server_name && strcmp(s->name, server_name) != 0) continue;
    pthread_mutex_lock(&m->lock);
    bool ready = s->state == S_READY;
    pthread_mutex_unlock(&m->lock);
    if (!server_name && !ready) continue;
    skills_arg a = {.server = s->name, .list = l};
    char *unused = NULL;
    mcp_error e2 = MCP_ERROR_INIT;
    st = call_on_server(m, s, do_list_skills, idem_skills, &a, opts, &unused, &e2);
    if (st && !server_name) {
      if (st != MCP_ENOTFOUND)
        mlog(m, MCP_LOG_WARN, s->name, "skills/list: %s", e2.message ? e2.message : "");
      st = MCP_OK; /* one server's failure leaves it out of the whole list */
    } else if (st && err) {
      mcp__error_copy(err, &e2);
    }
    mcp_error_clear(&e2);
  }
  if (st == MCP_OK && server_name && !find_server(m, server_name))
    st = mcp__error_set(err, MCP_ENOTFOUND, "no server named \"%s\"", server_name);
  if (st) mcp_skill_list_free(l);
  else *out = l;
  return st;
}

MCP_EXTERN mcp_status mcp_manager_load_skill(mcp_manager *m, const mcp_skill_list *l, size_t i,
                                             const mcp_call_options *opts, char **skill_md,
                                             size_t *len, mcp_error *err) {
  if (skill_md) *skill_md = NULL;
  if (len) *len = 0;
  if (!m || !l || i >= l->n || !skill_md || !l->items[i].server)
    return mcp__error_set(err, MCP_EINVAL, "invalid argument");
  server *s = find_server(m, l->items[i].server);
  if (!s) return mcp__error_set(err, MCP_ENOTFOUND, "no server named \"%s\"", l->items[i].server);
  skills_arg a = {.item = &l->items[i], .len = len};
  return call_on_server(m, s, do_load_skill, idem_skills, &a, opts, skill_md, err);
}

MCP_EXTERN mcp_status mcp_manager_read_skill_file(mcp_manager *m, const mcp_skill_list *l, size_t i,
                                                  const char *file, const mcp_call_options *opts,
                                                  char **data, size_t *len, mcp_error *err) {
  if (data) *data = NULL;
  if (len) *len = 0;
  if (!m || !l || i >= l->n || !file || !data || !l->items[i].server)
    return mcp__error_set(err, MCP_EINVAL, "invalid argument");
  server *s = find_server(m, l->items[i].server);
  if (!s) return mcp__error_set(err, MCP_ENOTFOUND, "no server named \"%s\"", l->items[i].server);
  skills_arg a = {.item = &l->items[i], .file = file, .len = len};
  return call_on_server(m, s, do_read_skill_file, idem_skills, &a, opts, data, err);
}

/* ---- async tool calls ----------------------------------------------------- */

/*
 * One mcp_manager_call_tool_async().  Fast path: the server is ready and
 * the name listed, so the call goes out on its connection as an async
 * client call and completes on that client's lane.  Otherwise (the server
 * is still connecting, the name is not listed yet, or the first attempt
 * failed in a way that allows a resend) a tracked thread does what the
 * synchronous call does and the outcome runs on the manager's lane.
 * Either way the call counts as a caller, so mcp_manager_free() ends it
 * and waits for its callback.
 */
typedef struct acall {
  mcp_manager *m;
  server *s; /* NULL until resolved */
  char *name, *tool, *args;
  mcp_call_options opts; /* copy; the token referenced */
  int64_t deadline;
  mcp_result_fn fn;
  void *user;
  conn *c;      /* the fast path's connection (a reference) */
  uint64_t gen; /* > 0: a resend waits for this connect attempt */
  bool resend;  /* the fast path's stream broke: send once more (gen 0:
                   on the live connection, resend_in_place()) */
  /* The slow path's outcome, for the lane. */
  mcp_status st;
  char *result;
  mcp_error err;
} acall;

static void acall_free(acall *a) {
  mcp_manager *m = a->m;
  mcp__free(a->name);
  mcp__free(a->tool);
  mcp__free(a->args);
  mcp__free(a->result);
  mcp_error_clear(&a->err);
  if (a->opts.cancel) mcp_cancel_unref(a->opts.cancel);
  mcp__free(a);
  pthread_mutex_lock(&m->lock);
  if (--m->callers == 0 && m->stopping) pthread_cond_broadcast(&m->idle);
  pthread_mutex_unlock(&m->lock);
}

/* The slow path's outcome, on the manager's lane. */
static void acall_deliver(void *arg) {
  acall *a = arg;
  a->fn(a->user, a->st, a->st == MCP_OK ? a->result : NULL, a->st == MCP_OK ? NULL : &a->err);
  acall_free(a);
}

/* The lane is being freed (never while callers remain): still run once. */
static void acall_drop(void *arg) { acall_deliver(arg); }

/* The time left before |a|'s deadline as a call timeout. */
static mcp_call_options acall_opts(const acall *a) {
  mcp_call_options o = a->opts;
  if (a->deadline != MCP_NO_DEADLINE) {
    int64_t left = a->deadline - mcp__now_ms();
    o.timeout_ms = left > 0 ? left : 1;
  }
  return o;
}

/* On a tracked thread: resolve, wait, call (and the one resend). */
static void acall_slow(void *arg) {
  acall *a = arg;
  mcp_manager *m = a->m;
  mcp_call_options o = acall_opts(a);
  if (a->gen || a->resend) {
    /* The fast path's attempt failed: wait for the reconnect, send once. */
    pthread_mutex_lock(&m->lock);
    conn *c = wait_conn_locked(a->s, a->deadline, a->opts.cancel, a->gen, &a->err);
    pthread_mutex_unlock(&m->lock);
    if (!c) {
      a->st = a->err.status ? a->err.status : MCP_ECLOSED;
    } else {
      o = acall_opts(a);
      a->st = mcp_client_call_tool(c->c, a->tool, a->args, &o, &a->result, &a->err);
      if (a->st != MCP_OK) name_server_error(a->s, &a->err);
      conn_unref(m, c);
    }
  } else {
    /* The caller's count is ours; the synchronous call counts itself too. */
    a->st = mcp_manager_call_tool(m, a->name, a->args, &o, &a->result, &a->err);
  }
  if (a->st != MCP_OK && !a->err.status) a->err.status = a->st;
  if (mcp__lane_post(m->lane, acall_deliver, acall_drop, a) != MCP_OK) acall_deliver(a);
}

/* The fast path's completion, on the client's lane. */
static void acall_done(void *user, mcp_status st, const char *result, const mcp_error *err) {
  acall *a = user;
  mcp_manager *m = a->m;
  conn *c = a->c;
  a->c = NULL;
  if (may_resend(m, tool_idempotent(m, a->s, a->tool), st, err)) {
    mcp_error e = MCP_ERROR_INIT;
    if (err) mcp__error_copy(&e, err);
    a->resend = true;
    if (resend_in_place(&e)) {
      mlog(m, MCP_LOG_INFO, a->s->name, "%s; sending it again as a new request",
           e.message ? e.message : mcp_strerror(st));
      conn_unref(m, c);
    } else {
      a->gen = reconnect_for_resend(a->s, c, st, &e); /* drops our reference */
    }
    mcp_error_clear(&e);
    pthread_mutex_lock(&m->lock);
    bool spawned = !m->stopping && spawn_locked(m, acall_slow, a);
    pthread_mutex_unlock(&m->lock);
    if (spawned) return;
    a->st = MCP_ECLOSED;
    mcp__error_set(&a->err, MCP_ECLOSED, "server \"%s\": %s", a->s->name,
                   err && err->message ? err->message : mcp_strerror(st));
    acall_deliver(a);
    return;
  }
  conn_unref(m, c);
  if (st != MCP_OK && err) {
    mcp__error_copy(&a->err, err);
    name_server_error(a->s, &a->err);
    err = &a->err;
  }
  a->fn(a->user, st, result, err);
  acall_free(a);
}

MCP_EXTERN mcp_status mcp_manager_call_tool_async(mcp_manager *m, const char *name,
                                                  const char *args_json,
                                                  const mcp_call_options *opts, mcp_result_fn fn,
                                                  void *user, mcp_error *err) {
  if (!m || !name || !fn) return mcp__error_set(err, MCP_EINVAL, "invalid argument");
  acall *a = mcp__calloc(1, sizeof(*a));
  if (!a) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  a->m = m;
  a->fn = fn;
  a->user = user;
  a->opts = (mcp_call_options){.timeout_ms = -1};
  if (opts) a->opts = *opts;
  if (a->opts.cancel) mcp_cancel_ref(a->opts.cancel);
  if (!(a->name = mcp__strdup(name)) || (args_json && !(a->args = mcp__strdup(args_json)))) {
    a->m = NULL;
    mcp__free(a->name);
    if (a->opts.cancel) mcp_cancel_unref(a->opts.cancel);
    mcp__free(a);
    return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  }
  pthread_mutex_lock(&m->lock);
  bool stopping = m->stopping;
  if (!stopping) m->callers++;
  pthread_mutex_unlock(&m->lock);
  if (stopping) {
    mcp__free(a->name);
    mcp__free(a->args);
    if (a->opts.cancel) mcp_cancel_unref(a->opts.cancel);
    mcp__free(a);
    return mcp__error_set(err, MCP_ECLOSED, "the manager is shutting down");
  }
  /* Fast path: a listed name whose server is ready now. */
  const char *slash = strchr(name, '/');
  mcp_tool_list *l = slash ? NULL : mcp_manager_tools(m);
  const struct tl_entry *te = tool_list_find(l, name);
  if (te) {
    a->s = find_server(m, te->server);
    a->tool = mcp__strdup(te->tool);
  }
  mcp_tool_list_unref(l);
  if (a->s && a->tool) {
    pthread_mutex_lock(&m->lock);
    if (a->s->conn && a->s->state == S_READY) a->c = conn_ref(a->s->conn);
    pthread_mutex_unlock(&m->lock);
  }
  if (a->c) {
    int64_t timeout = a->opts.timeout_ms >= 0 ? a->opts.timeout_ms : a->s->timeout_ms;
    a->deadline = mcp__deadline_in(timeout);
    mcp_call_options o = acall_opts(a);
    mcp_error e = MCP_ERROR_INIT;
    mcp_status st = mcp_client_call_tool_async(a->c->c, a->tool, a->args, &o, acall_done, a, &e);
    if (st == MCP_OK) return MCP_OK;
    /* Refused by the client (closed meanwhile, ...): the slow path. */
    conn_unref(m, a->c);
    a->c = NULL;
    mcp_error_clear(&e);
  }
  a->deadline = MCP_NO_DEADLINE; /* the synchronous call keeps its own */
  pthread_mutex_lock(&m->lock);
  bool spawned = !m->stopping && spawn_locked(m, acall_slow, a);
  pthread_mutex_unlock(&m->lock);
  if (!spawned) {
    acall_free(a);
    return mcp__error_set(err, MCP_ENOMEM, "cannot start a thread for the call");
  }
  return MCP_OK;
}

MCP_EXTERN mcp_status mcp_manager_servers(mcp_manager *m, char **json, mcp_error *err) {
  if (json) *json = NULL;
  if (!m || !json) return mcp__error_set(err, MCP_EINVAL, "invalid argument");
  json_object *arr = json_object_new_array();
  if (!arr) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  pthread_mutex_lock(&m->lock);
  for (size_t i = 0; i < m->n; i++) json_object_array_add(arr, status_locked(m->servers[i]));
  pthread_mutex_unlock(&m->lock);
  *json = mcp__json_dup_string(arr, NULL);
  json_object_put(arr);
  return *json ? MCP_OK : mcp__error_set(err, MCP_ENOMEM, "out of memory");
}

/* Every server's |which| list as one array, each item tagged with "server". */
static mcp_status merged_list(mcp_manager *m, bool resources, char **json, mcp_error *err) {
  if (json) *json = NULL;
  if (!m || !json) return mcp__error_set(err, MCP_EINVAL, "invalid argument");
  json_object *all = json_object_new_array();
  if (!all) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  pthread_mutex_lock(&m->lock);
  for (size_t i = 0; i < m->n; i++) {
    server *s = m->servers[i];
    const char *text = resources ? s->resources_json : s->prompts_json;
    json_object *arr = text ? json_tokener_parse(text) : NULL;
    for (size_t k = 0;
         arr && json_object_is_type(arr, json_type_array) && k < json_object_array_length(arr);
         k++) {
      json_object *item = json_object_array_get_idx(arr, k);
      if (!json_object_is_type(item, json_type_object)) continue;
      json_object_object_add(item, "server", json_object_new_string(s->name));
      json_object_array_add(all, json_object_get(item));
    }
    json_object_put(arr);
  }
  pthread_mutex_unlock(&m->lock);
  *json = mcp__json_dup_string(all, NULL);
  json_object_put(all);
  return *json ? MCP_OK : mcp__error_set(err, MCP_ENOMEM, "out of memory");
}

MCP_EXTERN mcp_status mcp_manager_resources(mcp_manager *m, char **json, mcp_error *err) {
  return merged_list(m, true, json, err);
}

MCP_EXTERN mcp_status mcp_manager_prompts(mcp_manager *m, char **json, mcp_error *err) {
  return merged_list(m, false, json, err);
}

MCP_EXTERN mcp_status mcp_manager_diagnostics(mcp_manager *m, char **json, mcp_error *err) {
  if (json) *json = NULL;
  if (!m || !json) return mcp__error_set(err, MCP_EINVAL, "invalid argument");
  static const char *const levels[] = {"debug", "info", "warning", "error"};
  json_object *arr = json_object_new_array();
  if (!arr) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  for (size_t i = 0; m->cfg && i < m->cfg->ndiags; i++) {
    const mcp_config_diag *g = &m->cfg->diags[i];
    json_object *o = json_object_new_object();
    if (!o) break;
    json_object_object_add(o, "level", json_object_new_string(levels[g->level & 3]));
    json_object_object_add(o, "source", g->source ? json_object_new_string(g->source) : NULL);
    json_object_object_add(o, "server", g->server ? json_object_new_string(g->server) : NULL);
    json_object_object_add(o, "field", g->field ? json_object_new_string(g->field) : NULL);
    json_object_object_add(o, "message", json_object_new_string(g->message ? g->message : ""));
    json_object_object_add(o, "hidden", json_object_new_boolean(g->hidden));
    json_object_array_add(arr, o);
  }
  *json = mcp__json_dup_string(arr, NULL);
  json_object_put(arr);
  return *json ? MCP_OK : mcp__error_set(err, MCP_ENOMEM, "out of memory");
}

MCP_EXTERN mcp_status mcp_manager_config_files(mcp_manager *m, char **json, mcp_error *err) {
  if (json) *json = NULL;
  if (!m || !json) return mcp__error_set(err, MCP_EINVAL, "invalid argument");
  json_object *arr = json_object_new_array();
  bool ok = arr != NULL;
  for (size_t i = 0; ok && m->cfg && i < m->cfg->nfiles; i++) {
    json_object *f = json_object_new_string(m->cfg->files[i]);
    ok = f && json_object_array_add(arr, f) == 0;
    if (!ok) json_object_put(f);
  }
  *json = ok ? mcp__json_dup_string(arr, NULL) : NULL;
  json_object_put(arr);
  return *json ? MCP_OK : mcp__error_set(err, MCP_ENOMEM, "out of memory");
}

MCP_EXTERN mcp_status mcp_manager_reconnect(mcp_manager *m, const char *name, mcp_error *err) {
  if (!m || !name) return mcp__error_set(err, MCP_EINVAL, "invalid argument");
  server *s = find_server(m, name);
  if (!s) return mcp__error_set(err, MCP_ENOTFOUND, "no server named \"%s\"", name);
  pthread_mutex_lock(&m->lock);
  if (m->stopping) {
    pthread_mutex_unlock(&m->lock);
    return mcp__error_set(err, MCP_ESTATE, "the manager is shutting down");
  }
  if (s->state == S_DISABLED) {
    pthread_mutex_unlock(&m->lock);
    return mcp__error_set(err, MCP_ESTATE, "server \"%s\" is disabled", name);
  }
  s->breaker = false;
  s->config_error = false;
  s->trips = 0;
  s->nclose = 0;
  s->ladder_step = 0;
  s->retry_at = MCP_NO_DEADLINE;
  conn *c = s->conn;
  s->conn = NULL;
  if (c) conn_unref_locked(m, c);
  if (!s->connecting) {
    s->reconnects++;
    connect_locked(s);
  }
  pthread_mutex_unlock(&m->lock);
  return MCP_OK;
}
