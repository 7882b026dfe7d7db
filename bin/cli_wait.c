/* SPDX-License-Identifier: MIT */
/*
 * cli_wait.c: what the manager tells the CLI, and waiting on it: the event
 * and log callbacks, the config diagnostics of the running manager (read
 * from mcp_manager_diagnostics(), never from log lines), the servers'
 * status (mcp_manager_servers() plus the servers the diagnostics show left
 * out) and wait_for(), which re-checks a condition after every event;
 * wait_servers() waits for every server to settle, with a live line on a
 * terminal's stderr naming those still connecting.
 *
 * Threads: on_event() and on_log() run on the manager's threads; on_event()
 * writes g_ev under g_ev.lock and broadcasts g_ev.cond.  Everything else
 * runs on the main thread, which alone writes g_diag (in start_manager(),
 * before a command runs).  Knows nothing of the wording of log messages.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "mcpconn-text.h"

/* How long past --timeout we wait for servers to settle, so that a
 * connect that times out reports its own error first (ms). */
#define SETTLE_GRACE_MS 1000

/*
 * What the manager's event callback (a manager thread) tells the main
 * thread.  Every field is guarded by |lock|; |cond| (CLOCK_MONOTONIC)
 * is broadcast on every event.
 */
static struct {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  uint64_t gen;       /* counts events */
  uint64_t tools_gen; /* |gen| of the last tool-list event */
  bool started;       /* the first tool list has been announced */
  /* Servers last seen becoming ready, with the |gen| of that event. */
  char **ready_name;
  uint64_t *ready_gen;
  size_t n_ready;
  size_t cap_ready;
} g_ev = {.lock = PTHREAD_MUTEX_INITIALIZER};

mcp_manager *g_mgr;

/* Makes g_ev.cond wait on CLOCK_MONOTONIC, the clock of now_ms().  Call
 * once, before the manager starts. */
/* When ev_init() ran, at the start of main (now_ms() clock). */
static int64_t g_start_ms;

void ev_init(void) {
  g_start_ms = now_ms();
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&g_ev.cond, &ca);
  pthread_condattr_destroy(&ca);
}

/* Forgets what an earlier manager said.  No manager may be running. */
void ev_reset(void) {
  pthread_mutex_lock(&g_ev.lock);
  g_ev.gen = g_ev.tools_gen = 0;
  g_ev.started = false;
  for (size_t i = 0; i < g_ev.n_ready; i++) free(g_ev.ready_name[i]);
  free(g_ev.ready_name);
  free(g_ev.ready_gen);
  g_ev.ready_name = NULL;
  g_ev.ready_gen = NULL;
  g_ev.n_ready = g_ev.cap_ready = 0;
  pthread_mutex_unlock(&g_ev.lock);
}

/* Records that |name| became ready at event |gen|.  Caller holds the lock. */
static void ev_note_ready_locked(const char *name, uint64_t gen) {
  for (size_t i = 0; i < g_ev.n_ready; i++)
    if (strcmp(g_ev.ready_name[i], name) == 0) {
      g_ev.ready_gen[i] = gen;
      return;
    }
  if (g_ev.n_ready == g_ev.cap_ready) {
    g_ev.cap_ready = g_ev.cap_ready ? g_ev.cap_ready * 2 : 8;
    g_ev.ready_name = xrealloc(g_ev.ready_name, g_ev.cap_ready * sizeof(*g_ev.ready_name));
    g_ev.ready_gen = xrealloc(g_ev.ready_gen, g_ev.cap_ready * sizeof(*g_ev.ready_gen));
  }
  g_ev.ready_name[g_ev.n_ready] = xstrdup(name);
  g_ev.ready_gen[g_ev.n_ready++] = gen;
}

/*
 * True when the published tool list already holds the tools of |name|, a
 * server the manager reports ready: its "ready" event has arrived, and a
 * tool-list event after it.  The manager publishes the list that includes
 * a server only after it announced the server ready, on the same ordered
 * lane.  Caller holds the lock.
 */
static bool ev_listed_locked(const char *name) {
  for (size_t i = 0; i < g_ev.n_ready; i++)
    if (strcmp(g_ev.ready_name[i], name) == 0) return g_ev.ready_gen[i] < g_ev.tools_gen;
  return false;
}

void on_event(void *user, mcp_manager_event event, const char *server, const char *detail_json) {
  (void)user;
  bool ready = false;
  if (event == MCP_MANAGER_EVENT_SERVER_STATE) {
    json_object *o = json_tokener_parse(detail_json);
    const char *state = jstring(o, "state");
    ready = state && strcmp(state, "ready") == 0;
    json_object_put(o);
  }
  pthread_mutex_lock(&g_ev.lock);
  g_ev.gen++;
  if (event == MCP_MANAGER_EVENT_TOOLS_CHANGED) {
    g_ev.tools_gen = g_ev.gen;
    g_ev.started = true;
  } else if (ready) {
    ev_note_ready_locked(server, g_ev.gen);
  }
  pthread_cond_broadcast(&g_ev.cond);
  pthread_mutex_unlock(&g_ev.lock);
}

/* Prints the library's log lines with -v.  It learns nothing from them;
 * only the insecure-TLS warning shows without -v. */
void on_log(void *user, mcp_log_level level, const char *msg) {
  static const char *const names[] = {"debug", "info", "warning", "error"};
  (void)user;
  if (g_cli.verbose) {
    pthread_mutex_lock(&g_stderr_lock);
    status_line_erase_locked();
    fprintf(stderr, PROG ": [%s] ", names[level >= 0 && level <= 3 ? level : 0]);
    safe_puts(stderr, msg, SAFE_LINE);
    fputc('\n', stderr);
    pthread_mutex_unlock(&g_stderr_lock);
  } else if (level >= MCP_LOG_WARN && strstr(msg, "TLS certificate verification is off")) {
    /* Never silent, even without -v (the library says it once per server). */
    pthread_mutex_lock(&g_stderr_lock);
    status_line_erase_locked();
    fprintf(stderr, PROG ": warning: %s\n", msg);
    pthread_mutex_unlock(&g_stderr_lock);
  }
}

/*
 * The JSON array that |get| (mcp_manager_servers, mcp_manager_diagnostics)
 * returns for g_mgr, parsed; the caller puts it.  On failure (out of
 * memory) prints why, naming |what|, and returns NULL.
 */
static json_object *manager_array(mcp_status (*get)(mcp_manager *, char **, mcp_error *),
                                  const char *what) {
  char *json = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status rc = get(g_mgr, &json, &err);
  if (rc != MCP_OK) {
    complain("cannot read the %s: %s", what, err.message ? err.message : mcp_strerror(rc));
    mcp_error_clear(&err);
    return NULL;
  }
  json_object *arr = json_tokener_parse(json);
  mcp_free(json);
  if (!json_object_is_type(arr, json_type_array)) {
    json_object_put(arr);
    complain("cannot read the %s: not a JSON array", what);
    return NULL;
  }
  return arr;
}

struct cli_diag g_diag;

/* Forgets an earlier manager's diagnostics. */
void diag_reset(void) {
  strv_free(&g_diag.errors);
  strv_free(&g_diag.skipped);
  strv_free(&g_diag.warnings);
  g_diag.found_skipped = 0;
  strv_free(&g_diag.hidden);
}

/* True when |source| (a diagnostic's file) is one given with --config. */
static bool is_config_file(const char *source) {
  return source && strv_has(&g_cli.configs, source);
}

/* Notes the server that the diagnostic |o| says is left out, once. */
static void note_hidden(json_object *o) {
  const char *name = jstring(o, "server"), *source = jstring(o, "source");
  if (!name) return;
  for (size_t i = 0; i + 1 < g_diag.hidden.n; i += 2)
    if (strcmp(g_diag.hidden.v[i], name) == 0) return;
  strv_push(&g_diag.hidden, xstrdup(name));
  strv_push(&g_diag.hidden, xstrdup(source ? source : ""));
}

/* Fills g_diag from the manager's diagnostics.  On failure (out of memory)
 * prints why and returns false. */
bool diag_load(void) {
  json_object *arr = manager_array(mcp_manager_diagnostics, "config diagnostics"), *v;
  if (!arr) return false;
  for (size_t i = 0; i < json_object_array_length(arr); i++) {
    json_object *o = json_object_array_get_idx(arr, i);
    const char *level = jstring(o, "level"), *message = jstring(o, "message");
    if (json_object_object_get_ex(o, "hidden", &v) && json_object_get_boolean(v)) note_hidden(o);
    else if (message && level && (strcmp(level, "warning") == 0 || strcmp(level, "error") == 0)) {
      /* A warning naming a server means that server was left out. */
      bool server = jstring(o, "server") != NULL;
      bool explicit = is_config_file(jstring(o, "source"));
      strv_push(explicit ? (server ? &g_diag.skipped : &g_diag.errors) : &g_diag.warnings,
                xstrdup(message));
      g_diag.found_skipped += server && !explicit;
    }
  }
  json_object_put(arr);
  return true;
}

/*
 * Waits until done(arg) is true, re-checking it after every manager event,
 * or until |deadline| (now_ms() clock; INT64_MAX: none) passes.  Returns
 * done(arg)'s last answer.
 */
bool wait_for(bool (*done)(void *arg), void *arg, int64_t deadline) {
  for (;;) {
    pthread_mutex_lock(&g_ev.lock);
    uint64_t gen = g_ev.gen;
    pthread_mutex_unlock(&g_ev.lock);
    if (done(arg)) return true;
    pthread_mutex_lock(&g_ev.lock);
    while (g_ev.gen == gen) {
      if (deadline == INT64_MAX) {
        pthread_cond_wait(&g_ev.cond, &g_ev.lock);
        continue;
      }
      int64_t left = deadline - now_ms();
      if (left <= 0) break;
      struct timespec ts;
      clock_gettime(CLOCK_MONOTONIC, &ts);
      ts.tv_sec += (time_t)(left / 1000);
      ts.tv_nsec += (long)(left % 1000) * 1000000L;
      if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
      }
      pthread_cond_timedwait(&g_ev.cond, &g_ev.lock, &ts);
    }
    bool changed = g_ev.gen != gen;
    pthread_mutex_unlock(&g_ev.lock);
    if (!changed) return done(arg);
  }
}

bool started(void *arg) {
  (void)arg;
  pthread_mutex_lock(&g_ev.lock);
  bool s = g_ev.started;
  pthread_mutex_unlock(&g_ev.lock);
  return s;
}

/* The deadline of waiting for servers to settle. */
int64_t settle_deadline(void) {
  if (g_cli.timeout_ms == 0) return INT64_MAX;
  return now_ms() + g_cli.timeout_ms + SETTLE_GRACE_MS;
}

/* ---- server status ---------------------------------------------------- */

bool selected(const char *name) { return g_cli.only.n == 0 || strv_has(&g_cli.only, name); }

bool state_is(const struct srv *s, const char *state) { return strcmp(s->state, state) == 0; }

/* Settled: ready, or failed for now (failed, backoff), or not in use. */
bool settled(const struct srv *s) { return !state_is(s, "connecting") && !state_is(s, "deferred"); }

bool enabled(const struct srv *s) { return !state_is(s, "disabled"); }

/* Fills |st|.  On failure (out of memory) prints why and returns false. */
bool status_load(struct status *st) {
  memset(st, 0, sizeof(*st));
  st->arr = manager_array(mcp_manager_servers, "servers' status");
  if (!st->arr) return false;
  /* Servers hidden by their config are not in the manager's list. */
  for (size_t i = 0; i + 1 < g_diag.hidden.n; i += 2) {
    bool known = false;
    for (size_t k = 0; !known && k < json_object_array_length(st->arr); k++) {
      const char *n = jstring(json_object_array_get_idx(st->arr, k), "name");
      known = n && strcmp(n, g_diag.hidden.v[i]) == 0;
    }
    if (known) continue;
    json_object *o = json_object_new_object();
    json_object_object_add(o, "name", json_object_new_string(g_diag.hidden.v[i]));
    json_object_object_add(o, "type", NULL);
    json_object_object_add(o, "source", json_object_new_string(g_diag.hidden.v[i + 1]));
    json_object_object_add(o, "state", json_object_new_string("disabled"));
    json_object_object_add(o, "lastError", NULL);
    json_object_object_add(o, "protocolVersion", NULL);
    json_object_object_add(o, "era", NULL);
    json_object_object_add(o, "tools", json_object_new_int(0));
    json_object_object_add(o, "deferred", json_object_new_boolean(false));
    json_object_object_add(o, "reconnects", json_object_new_int(0));
    json_object_array_add(st->arr, o);
  }

  size_t n = json_object_array_length(st->arr);
  st->v = xmalloc(n * sizeof(*st->v));
  for (size_t i = 0; i < n; i++) {
    json_object *o = json_object_array_get_idx(st->arr, i), *v;
    struct srv *s = &st->v[st->n];
    s->name = jstring(o, "name");
    s->state = jstring(o, "state");
    if (!s->name || !s->state) continue;
    s->display_name = jstring(o, "displayName");
    s->type = jstring(o, "type");
    s->last_error = jstring(o, "lastError");
    s->protocol = jstring(o, "protocolVersion");
    s->era = jstring(o, "era");
    s->tools = json_object_object_get_ex(o, "tools", &v) ? json_object_get_int64(v) : 0;
    s->selected = selected(s->name);
    st->n++;
  }
  return true;
}

void status_free(struct status *st) {
  json_object_put(st->arr);
  free(st->v);
  memset(st, 0, sizeof(*st));
}

const struct srv *status_find(const struct status *st, const char *name) {
  for (size_t i = 0; i < st->n; i++)
    if (strcmp(st->v[i].name, name) == 0) return &st->v[i];
  return NULL;
}

/* The server named |name|, or else the one whose config file calls it
 * |name| (its display name, before folding: "My Server"). */
const struct srv *status_find_any(const struct status *st, const char *name) {
  const struct srv *s = status_find(st, name);
  for (size_t i = 0; !s && i < st->n; i++)
    if (st->v[i].display_name && strcmp(st->v[i].display_name, name) == 0) s = &st->v[i];
  return s;
}

/*
 * True when every selected server (or only the one named |only|) has
 * settled, when |need_settled|, and the tool list shows those that are
 * ready.
 */
static bool check_servers(const char *only, bool need_settled) {
  struct status st;
  if (!status_load(&st)) return true; /* nothing better to wait for */
  bool done = true;
  pthread_mutex_lock(&g_ev.lock);
  for (size_t i = 0; done && i < st.n; i++) {
    const struct srv *s = &st.v[i];
    if (only ? strcmp(s->name, only) != 0 : !s->selected) continue;
    if ((need_settled && !settled(s)) || (state_is(s, "ready") && !ev_listed_locked(s->name)))
      done = false;
  }
  pthread_mutex_unlock(&g_ev.lock);
  status_free(&st);
  return done;
}

/* Done-predicate of wait_for(): every selected server (or only the one
 * named |arg|) has settled, and the tool list shows those that are ready. */
bool servers_settled(void *arg) { return check_servers(arg, true); }

/* Done-predicate: the tool list shows every selected server that is ready
 * (it follows a server's becoming ready within milliseconds). */
bool ready_listed(void *arg) {
  (void)arg;
  return check_servers(NULL, false);
}

/* True when some server is connecting: freeing the manager would then
 * wait for that connect to end, up to its timeout. */
bool connects_pending(void) {
  struct status st;
  if (!status_load(&st)) return false;
  bool pending = false;
  for (size_t i = 0; i < st.n; i++)
    if (!settled(&st.v[i])) pending = true;
  status_free(&st);
  return pending;
}

/* "NAME: REASON" of a server that is not ready, on stderr. */
void report_server(const char *prefix, const struct srv *s) {
  if (state_is(s, "connecting") || state_is(s, "deferred"))
    complain("%s%s: not ready after %lld ms (still connecting)", prefix, s->name,
             (long long)g_cli.timeout_ms);
  else
    complain("%s%s: %s%s%s", prefix, s->name, s->last_error ? "" : "server is ",
             s->last_error ? s->last_error : s->state, state_is(s, "backoff") ? " (retrying)" : "");
}

/* ---- waiting with a live status line ---------------------------------- */

/* The live line shows after this long without every server settled, and
 * is redrawn this often (ms). */
#define LIVE_AFTER_MS 300
#define LIVE_EVERY_MS 200

atomic_bool g_status_line;
atomic_int g_status_hold;

void status_line_erase_locked(void) {
  if (atomic_exchange(&g_status_line, false)) fputs("\r\033[K", stderr);
}

/* Draws "mcpconn: waiting for A, B (1.2 s)" over the line on stderr (the
 * time since mcpconn started, when the servers did), cut to the
 * terminal's width.  Returns false (nothing drawn) when no server
 * is still connecting. */
static bool draw_waiting(int64_t waited_ms) {
  struct status st;
  if (!status_load(&st)) return false;
  struct sbuf names = {0};
  size_t n = 0;
  for (size_t i = 0; i < st.n; i++) {
    const struct srv *s = &st.v[i];
    if (!s->selected || !enabled(s) || settled(s)) continue;
    sbuf_add(&names, "%s%s", n++ ? ", " : "", s->name);
  }
  status_free(&st);
  if (!n || atomic_load(&g_status_hold) > 0) {
    free(names.s);
    return false;
  }
  char tail[64];
  snprintf(tail, sizeof(tail), " (%.1f s)", (double)waited_ms / 1000.0);
  const char *head = PROG ": waiting for ";
  size_t cols = 80;
  struct winsize ws;
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) cols = ws.ws_col;
  /* One column spare, so the line never wraps (\r could not undo it). */
  size_t fixed = strlen(head) + strlen(tail) + 1;
  size_t room = cols > fixed + 4 ? cols - fixed : 4;
  pthread_mutex_lock(&g_stderr_lock);
  fputs("\r", stderr);
  fputs(head, stderr);
  if (safe_width(names.s) <= room) {
    safe_puts(stderr, names.s, SAFE_CELL);
  } else {
    /* Names are ASCII ([A-Za-z0-9_.:-] and ", "): cut by bytes. */
    safe_write(stderr, names.s, room - 3, SAFE_CELL);
    fputs("...", stderr);
  }
  fputs(tail, stderr);
  fputs("\033[K", stderr);
  fflush(stderr);
  atomic_store(&g_status_line, true);
  pthread_mutex_unlock(&g_stderr_lock);
  free(names.s);
  return true;
}

void clear_status_line(void) {
  pthread_mutex_lock(&g_stderr_lock);
  status_line_erase_locked();
  fflush(stderr);
  pthread_mutex_unlock(&g_stderr_lock);
}

bool wait_servers(int64_t deadline) {
  if (g_cli.quiet || !isatty(STDERR_FILENO)) return wait_for(servers_settled, NULL, deadline);
  int64_t step = LIVE_AFTER_MS;
  bool done;
  for (;;) {
    int64_t until = now_ms() + step;
    if (until > deadline) until = deadline;
    done = wait_for(servers_settled, NULL, until);
    if (done || now_ms() >= deadline) break;
    draw_waiting(now_ms() - g_start_ms);
    step = LIVE_EVERY_MS;
  }
  clear_status_line();
  return done;
}
