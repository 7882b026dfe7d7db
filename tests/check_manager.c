/* SPDX-License-Identifier: MIT */
/*
 * check_manager.c: the manager end to end against real child processes:
 * parallel connects behind the startup gate, the deferred-tool cache,
 * reconnection after kill -9, the circuit breaker, list_changed, name
 * folding and collisions, discovery precedence, and many host threads
 * calling and listing while servers crash and come back; a few hundred
 * servers in one manager; log records naming their server.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-c/json.h>

#include "check_util.h"
#include "check_server.h"
#include "mcpconn.h"

/* ---- fixtures -------------------------------------------------------------- */

static char tmpdir[512];

/* Under /tmp, not the build tree (make distcheck wants that clean), and
 * removed by the fixture's teardown. */
static void make_tmpdir(void) {
  snprintf(tmpdir, sizeof(tmpdir), "/tmp/mcpconn-mgr-XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb;
  (void)flag;
  (void)ftw;
  return remove(path);
}

static void teardown(void) {
  if (tmpdir[0]) nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
  tmpdir[0] = '\0';
}

static void write_file(const char *path, const char *fmt, ...) {
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  va_list ap;
  va_start(ap, fmt);
  vfprintf(f, fmt, ap);
  va_end(ap);
  fclose(f);
}

/* Path of a file in the test's temp dir (static buffer ring). */
static const char *tpath(const char *name) {
  static char bufs[8][600];
  static int k;
  char *b = bufs[k++ % 8];
  snprintf(b, 600, "%s/%s", tmpdir, name);
  return b;
}

/* Events, collected under a mutex and waited on with a condvar. */
typedef struct events {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int tools_changed;
  int state_changes;
  int notifications;
  char last_tools_detail[128];
} events;

static events ev;

static void on_event(void *user, mcp_manager_event e, const char *server, const char *detail) {
  events *x = user;
  pthread_mutex_lock(&x->lock);
  if (e == MCP_MANAGER_EVENT_TOOLS_CHANGED) {
    x->tools_changed++;
    snprintf(x->last_tools_detail, sizeof(x->last_tools_detail), "%s", detail);
  } else if (e == MCP_MANAGER_EVENT_SERVER_STATE) {
    x->state_changes++;
  } else if (e == MCP_MANAGER_EVENT_NOTIFICATION) {
    x->notifications++;
  }
  pthread_cond_broadcast(&x->cond);
  pthread_mutex_unlock(&x->lock);
}

static void setup(void) {
  make_tmpdir();
  memset(&ev, 0, sizeof(ev));
  pthread_mutex_init(&ev.lock, NULL);
  pthread_cond_init(&ev.cond, NULL);
}

static mcp_manager_options *base_options(const char *config_file) {
  mcp_manager_options *o = mcp_manager_options_new();
  ck_assert_ptr_nonnull(o);
  if (config_file) ck_assert_int_eq(mcp_manager_options_add_config_file(o, config_file), MCP_OK);
  mcp_manager_options_set_discovery(o, false, false);
  mcp_manager_options_set_cache_dir(o, tpath("cache"));
  mcp_manager_options_set_event_handler(o, on_event, &ev);
  mcp_manager_options_set_timeout_ms(o, 20000);
  return o;
}

static mcp_manager *start(mcp_manager_options *o) {
  mcp_manager *m = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_msg(mcp_manager_start(o, &m, &err) == MCP_OK, "start: %s",
                err.message ? err.message : "");
  mcp_error_clear(&err);
  return m;
}

/* The status object of |name| (caller puts), or NULL. */
static json_object *server_status(mcp_manager *m, const char *name) {
  char *js = NULL;
  ck_assert_int_eq(mcp_manager_servers(m, &js, NULL), MCP_OK);
  json_object *arr = json_tokener_parse(js);
  mcp_free(js);
  json_object *found = NULL;
  for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
    json_object *s = json_object_array_get_idx(arr, i);
    if (strcmp(json_object_get_string(json_object_object_get(s, "name")), name) == 0)
      found = json_object_get(s);
  }
  json_object_put(arr);
  return found;
}

static bool state_is(mcp_manager *m, const char *name, const char *state) {
  json_object *s = server_status(m, name);
  bool r = s && strcmp(json_object_get_string(json_object_object_get(s, "state")), state) == 0;
  json_object_put(s);
  return r;
}

static int status_int(mcp_manager *m, const char *name, const char *field) {
  json_object *s = server_status(m, name);
  int v = s ? json_object_get_int(json_object_object_get(s, field)) : -1;
  json_object_put(s);
  return v;
}

/* Does |name|'s status field |field| equal |want| (or contain it, with
 * |part|)? */
static bool status_field_is(mcp_manager *m, const char *name, const char *field, const char *want,
                            bool part) {
  json_object *st = server_status(m, name), *v = NULL;
  const char *got = st && json_object_object_get_ex(st, field, &v) ? json_object_get_string(v)
                                                                   : NULL;
  bool r = got && (part ? strstr(got, want) != NULL : strcmp(got, want) == 0);
  json_object_put(st);
  return r;
}

/* Waits until status_field_is(), woken by state-change events. */
static bool wait_status_field(mcp_manager *m, const char *name, const char *field, const char *want,
                              bool part, int ms) {
  long long end = test_now_ms() + ms;
  for (;;) {
    pthread_mutex_lock(&ev.lock);
    int seen = ev.state_changes;
    pthread_mutex_unlock(&ev.lock);
    if (status_field_is(m, name, field, want, part)) return true;
    long long left = end - test_now_ms();
    if (left <= 0) return false;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += left / 1000;
    ts.tv_nsec += (left % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
      ts.tv_sec++;
      ts.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&ev.lock);
    while (ev.state_changes == seen)
      if (pthread_cond_timedwait(&ev.cond, &ev.lock, &ts) != 0) break;
    pthread_mutex_unlock(&ev.lock);
  }
}

/* Waits for |name| to reach |state|. */
static bool wait_state(mcp_manager *m, const char *name, const char *state, int ms) {
  return wait_status_field(m, name, "state", state, false, ms);
}

/* Waits until |name|'s lastError contains |part|. */
static bool wait_error_has(mcp_manager *m, const char *name, const char *part, int ms) {
  return wait_status_field(m, name, "lastError", part, true, ms);
}

/* Waits until the published tool list has |name| (woken by events). */
static bool wait_tool(mcp_manager *m, const char *name, bool present, int ms) {
  long long end = test_now_ms() + ms;
  for (;;) {
    pthread_mutex_lock(&ev.lock);
    int seen = ev.tools_changed;
    pthread_mutex_unlock(&ev.lock);
    mcp_tool_list *l = mcp_manager_tools(m);
    bool has = false;
    for (size_t i = 0; i < mcp_tool_list_count(l); i++)
      if (strcmp(mcp_tool_list_name(l, i), name) == 0) has = true;
    mcp_tool_list_unref(l);
    if (has == present) return true;
    long long left = end - test_now_ms();
    if (left <= 0) return false;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += left / 1000 + 1;
    pthread_mutex_lock(&ev.lock);
    while (ev.tools_changed == seen)
      if (pthread_cond_timedwait(&ev.cond, &ev.lock, &ts) != 0) break;
    pthread_mutex_unlock(&ev.lock);
  }
}

/* Waits until the published list shows |name| as live (not deferred). */
static bool wait_live(mcp_manager *m, const char *name, int ms) {
  long long end = test_now_ms() + ms;
  for (;;) {
    pthread_mutex_lock(&ev.lock);
    int seen = ev.tools_changed;
    pthread_mutex_unlock(&ev.lock);
    mcp_tool_list *l = mcp_manager_tools(m);
    bool live = false;
    for (size_t i = 0; i < mcp_tool_list_count(l); i++)
      if (strcmp(mcp_tool_list_name(l, i), name) == 0 && !mcp_tool_list_deferred(l, i)) live = true;
    mcp_tool_list_unref(l);
    if (live) return true;
    long long left = end - test_now_ms();
    if (left <= 0) return false;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += left / 1000 + 1;
    pthread_mutex_lock(&ev.lock);
    while (ev.tools_changed == seen)
      if (pthread_cond_timedwait(&ev.cond, &ev.lock, &ts) != 0) break;
    pthread_mutex_unlock(&ev.lock);
  }
}

/* Waits until at least |n| server-state events arrived. */
static bool wait_state_events(int n, int ms) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_sec += ms / 1000 + 1;
  pthread_mutex_lock(&ev.lock);
  while (ev.state_changes < n)
    if (pthread_cond_timedwait(&ev.cond, &ev.lock, &ts) != 0) break;
  bool ok = ev.state_changes >= n;
  pthread_mutex_unlock(&ev.lock);
  return ok;
}

static int tool_index(mcp_tool_list *l, const char *name) {
  for (size_t i = 0; i < mcp_tool_list_count(l); i++)
    if (strcmp(mcp_tool_list_name(l, i), name) == 0) return (int)i;
  return -1;
}

static char *echo_via(mcp_manager *m, const char *tool, const char *text, mcp_status want) {
  char args[256];
  snprintf(args, sizeof(args), "{\"text\":\"%s\"}", text);
  char *res = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_manager_call_tool(m, tool, args, NULL, &res, &err);
  ck_assert_msg(st == want, "%s: got %d (%s)", tool, st, err.message ? err.message : "");
  mcp_error_clear(&err);
  return res;
}

static const char *fault(void) { return test_env_path("MCP_FAULT_SERVER"); }

/* ---- tests ------------------------------------------------------------------- */

/* mcp_manager_wait_ready() and calls by public name while servers are
 * still connecting: the call waits for the server instead of "no tool",
 * a failed server's wait returns its cause, and a timeout names who is
 * still connecting. */
START_TEST(wait_ready_and_early_calls) {
  setup();
  const char *f = fault();
  write_file(tpath("mcp.json"),
             "{\"mcpServers\": {"
             "\"fast\": {\"command\": \"%s\"},"
             "\"slow\": {\"command\": \"%s\", \"args\": [\"--slow-init\", \"1200\"]},"
             "\"missing\": {\"command\": \"/nonexistent/mcp-server\"}"
             "}}",
             f, f);
  mcp_manager_options *o = base_options(tpath("mcp.json"));
  mcp_manager_options_set_startup_gate_ms(o, 100);
  mcp_manager *m = start(o);
  ck_assert(state_is(m, "slow", "connecting"));
  /* Not in the list yet; the call waits for the slow server. */
  mcp_tool_list *l = mcp_manager_tools(m);
  ck_assert_int_lt(tool_index(l, "mcp__slow_echo"), 0);
  mcp_tool_list_unref(l);
  char *r = echo_via(m, "mcp__slow_echo", "early", MCP_OK);
  ck_assert_ptr_nonnull(strstr(r, "early"));
  mcp_free(r);
  /* A named server that cannot start: its cause, at once. */
  mcp_error err = MCP_ERROR_INIT;
  long long t0 = test_now_ms();
  mcp_status st = mcp_manager_wait_ready(m, "missing", 20000, &err);
  ck_assert_int_ne(st, MCP_OK);
  ck_assert_int_ne(st, MCP_ETIMEDOUT);
  ck_assert_msg(strstr(err.message, "missing") && strstr(err.message, "/nonexistent/mcp-server"),
                "%s", err.message);
  ck_assert_int_lt(test_now_ms() - t0, 15000);
  mcp_error_clear(&err);
  ck_assert_int_eq(mcp_manager_wait_ready(m, "fast", 20000, &err), MCP_OK);
  ck_assert_int_eq(mcp_manager_wait_ready(m, NULL, 20000, &err), MCP_OK);
  ck_assert(state_is(m, "slow", "ready"));
  ck_assert_int_eq(mcp_manager_wait_ready(m, "nosuch", 1000, &err), MCP_ENOTFOUND);
  mcp_error_clear(&err);
  /* Settled: an unknown name fails at once. */
  char *res = NULL;
  t0 = test_now_ms();
  ck_assert_int_eq(mcp_manager_call_tool(m, "mcp__nosuch_tool", "{}", NULL, &res, &err),
                   MCP_ENOTFOUND);
  ck_assert_int_lt(test_now_ms() - t0, 5000);
  mcp_error_clear(&err);
  mcp_manager_free(m);
  mcp_manager_options_free(o);

  /* A server that never finishes connecting: the wait times out and names it;
   * an unknown name waits for it up to the call's timeout. */
  write_file(tpath("hung.json"),
             "{\"mcpServers\": {\"hung\": {\"command\": \"%s\", \"args\": [\"--slow-init\", "
             "\"30000\"]}}}",
             f);
  o = base_options(tpath("hung.json"));
  mcp_manager_options_set_startup_gate_ms(o, 50);
  m = start(o);
  ck_assert_int_eq(mcp_manager_wait_ready(m, NULL, 300, &err), MCP_ETIMEDOUT);
  ck_assert_msg(strstr(err.message, "hung") != NULL, "%s", err.message);
  mcp_error_clear(&err);
  mcp_call_options *co = mcp_call_options_new();
  mcp_call_options_set_timeout_ms(co, 300);
  ck_assert_int_eq(mcp_manager_call_tool(m, "mcp__hung_echo", "{}", co, &res, &err), MCP_ETIMEDOUT);
  ck_assert_msg(strstr(err.message, "still connecting") != NULL, "%s", err.message);
  mcp_error_clear(&err);
  /* A fired token ends the wait too. */
  mcp_cancel *tok = mcp_cancel_new();
  mcp_cancel_fire(tok);
  mcp_call_options_set_timeout_ms(co, 20000);
  mcp_call_options_set_cancel(co, tok);
  ck_assert_int_eq(mcp_manager_call_tool(m, "mcp__hung_echo", "{}", co, &res, &err),
                   MCP_ECANCELLED);
  mcp_error_clear(&err);
  mcp_call_options_free(co);
  mcp_cancel_unref(tok);
  mcp_manager_free(m);
  mcp_manager_options_free(o);
}
END_TEST

/* Async outcomes, collected under a mutex and waited on with a condvar. */
typedef struct outcomes {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int n, ok, closed;
  char last[256];
} outcomes;

static void on_outcome(void *user, mcp_status st, const char *result, const mcp_error *err) {
  outcomes *o = user;
  pthread_mutex_lock(&o->lock);
  o->n++;
  if (st == MCP_OK) o->ok++;
  if (st == MCP_ECLOSED) o->closed++;
  snprintf(o->last, sizeof(o->last), "%s", st == MCP_OK ? result : err ? err->message : "?");
  pthread_cond_broadcast(&o->cond);
  pthread_mutex_unlock(&o->lock);
}

static bool wait_outcomes(outcomes *o, int n, long long ms) {
  long long end = test_now_ms() + ms;
  pthread_mutex_lock(&o->lock);
  while (o->n < n && test_now_ms() < end) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 50 * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
      ts.tv_sec++;
      ts.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&o->cond, &o->lock, &ts);
  }
  bool r = o->n >= n;
  pthread_mutex_unlock(&o->lock);
  return r;
}

/* mcp_manager_call_tool_async(): a ready server's tool (the client's async
 * call), a tool of a server still connecting (waits for it), a server that
 * crashes every 3rd call (reconnect and one resend, as the sync call), and
 * mcp_manager_free() with calls in flight (each ends MCP_ECLOSED, once). */
START_TEST(async_calls) {
  setup();
  const char *f = fault();
  write_file(tpath("mcp.json"),
             "{\"mcpServers\": {"
             "\"fast\": {\"command\": \"%s\"},"
             "\"slow\": {\"command\": \"%s\", \"args\": [\"--slow-init\", \"1000\"]},"
             "\"crashy\": {\"command\": \"%s\", \"args\": [\"--crash-every\", \"3\"]}"
             "}}",
             f, f, f);
  mcp_manager_options *o = base_options(tpath("mcp.json"));
  mcp_manager_options_set_startup_gate_ms(o, 100);
  mcp_manager *m = start(o);
  outcomes out = {.n = 0};
  pthread_mutex_init(&out.lock, NULL);
  pthread_cond_init(&out.cond, NULL);
  mcp_error err = MCP_ERROR_INIT;
  /* Before the slow server is listed: the call waits for it. */
  ck_assert(state_is(m, "slow", "connecting"));
  ck_assert_int_eq(mcp_manager_call_tool_async(m, "mcp__slow_echo", "{\"text\":\"s1\"}", NULL,
                                               on_outcome, &out, &err),
                   MCP_OK);
  ck_assert(wait_outcomes(&out, 1, 20000));
  ck_assert_int_eq(out.ok, 1);
  ck_assert_ptr_nonnull(strstr(out.last, "s1"));
  /* A ready server's listed tool. */
  ck_assert_int_eq(mcp_manager_wait_ready(m, "fast", 20000, &err), MCP_OK);
  ck_assert_int_eq(mcp_manager_call_tool_async(m, "mcp__fast_echo", "{\"text\":\"a1\"}", NULL,
                                               on_outcome, &out, &err),
                   MCP_OK);
  ck_assert(wait_outcomes(&out, 2, 20000));
  ck_assert_int_eq(out.ok, 2);
  ck_assert_ptr_nonnull(strstr(out.last, "a1"));
  /* A crash every third call: each call still succeeds, once. */
  ck_assert_int_eq(mcp_manager_wait_ready(m, NULL, 20000, &err), MCP_OK);
  int base = out.n, base_ok = out.ok;
  for (int i = 0; i < 7; i++) {
    ck_assert_int_eq(mcp_manager_call_tool_async(m, "mcp__crashy_echo", "{\"text\":\"c\"}", NULL,
                                                 on_outcome, &out, &err),
                     MCP_OK);
    ck_assert(wait_outcomes(&out, base + i + 1, 20000));
  }
  ck_assert_int_eq(out.ok - base_ok, 7);
  ck_assert_int_ge(status_int(m, "crashy", "reconnects"), 2);
  /* Unknown once settled: the callback says so. */
  base = out.n;
  ck_assert_int_eq(
      mcp_manager_call_tool_async(m, "mcp__nosuch", "{}", NULL, on_outcome, &out, &err), MCP_OK);
  ck_assert(wait_outcomes(&out, base + 1, 20000));
  ck_assert_ptr_nonnull(strstr(out.last, "no tool named"));
  /* Free with calls in flight. */
  base = out.n;
  for (int i = 0; i < 4; i++)
    ck_assert_int_eq(
        mcp_manager_call_tool_async(m, "mcp__fast_hang", "{}", NULL, on_outcome, &out, &err),
        MCP_OK);
  mcp_manager_free(m);
  ck_assert_int_eq(out.n, base + 4);
  ck_assert_int_eq(out.closed, 4);
  mcp_error_clear(&err);
  mcp_manager_options_free(o);
  pthread_mutex_destroy(&out.lock);
  pthread_cond_destroy(&out.cond);
}
END_TEST

START_TEST(ten_servers_in_parallel) {
  setup();
  const char *f = fault();
  write_file(tpath("mcp.json"),
             "{\"mcpServers\": {"
             "\"fast1\": {\"command\": \"%s\"}, \"fast2\": {\"command\": \"%s\"},"
             "\"fast3\": {\"command\": \"%s\"}, \"fast4\": {\"command\": \"%s\"},"
             "\"fast5\": {\"command\": \"%s\"},"
             "\"slow\": {\"command\": \"%s\", \"args\": [\"--init-gate\", \"%s\"]},"
             "\"badversion\": {\"command\": \"%s\", \"args\": [\"--version\", \"1999-01-01\"]},"
             "\"crashy\": {\"command\": \"%s\", \"args\": [\"--crash-every\", \"3\"]},"
             "\"missing\": {\"command\": \"/nonexistent/mcp-server\"},"
             "\"off\": {\"command\": \"%s\", \"enabled\": false}"
             "}}",
             f, f, f, f, f, f, tpath("go"), f, f, f);
  mcp_manager_options *o = base_options(tpath("mcp.json"));
  mcp_manager_options_set_startup_gate_ms(o, 400);
  long long t0 = test_now_ms();
  mcp_manager *m = start(o);
  long long ttfl = test_now_ms() - t0;
  fprintf(stderr, "time to first tool list, 10 servers (1 slow), cold: %lld ms\n", ttfl);
  /* The gate let start() return while the slow server was still connecting
   * (it answers initialize once tpath("go") exists: an event, not a time,
   * so a loaded sanitizer run cannot outwait it); the fast ones are ready
   * and listed (waited for, not assumed within the gate). */
  ck_assert(state_is(m, "slow", "connecting"));
  const char *fast[] = {"fast1", "fast2", "fast3", "fast4", "fast5"};
  for (size_t i = 0; i < 5; i++)
    ck_assert_int_eq(mcp_manager_wait_ready(m, fast[i], 20000, NULL), MCP_OK);
  ck_assert(state_is(m, "slow", "connecting"));
  mcp_tool_list *l = mcp_manager_tools(m);
  ck_assert_int_ge(tool_index(l, "mcp__fast1_echo"), 0);
  ck_assert_int_ge(tool_index(l, "mcp__fast5_hang"), 0);
  ck_assert_int_lt(tool_index(l, "mcp__slow_echo"), 0);
  ck_assert_int_lt(tool_index(l, "mcp__off_echo"), 0);
  /* Sorted, byte-stable. */
  for (size_t i = 1; i < mcp_tool_list_count(l); i++)
    ck_assert_int_lt(strcmp(mcp_tool_list_name(l, i - 1), mcp_tool_list_name(l, i)), 0);
  mcp_tool_list_unref(l);
  ck_assert(wait_state(m, "missing", "failed", 5000));
  ck_assert(wait_state(m, "badversion", "failed", 5000));
  ck_assert_ptr_null(server_status(m, "off")); /* enabled:false hides it */
  json_object *st = server_status(m, "badversion");
  ck_assert_ptr_nonnull(
      strstr(json_object_get_string(json_object_object_get(st, "lastError")), "1999-01-01"));
  json_object_put(st);
  /* The slow one arrives and its tools are published. */
  write_file(tpath("go"), "go");
  ck_assert(wait_tool(m, "mcp__slow_echo", true, 10000));
  ck_assert(state_is(m, "slow", "ready"));
  /* A server crashing every 3rd call: the manager reconnects and retries. */
  for (int i = 0; i < 7; i++) {
    char *r = echo_via(m, "mcp__crashy_echo", "ok", MCP_OK);
    mcp_free(r);
  }
  ck_assert_int_ge(status_int(m, "crashy", "reconnects"), 2);
  /* Calls to failed or disabled servers fail clearly. */
  char *res = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp_manager_call_tool(m, "missing/echo", "{}", NULL, &res, &err), MCP_ECLOSED);
  ck_assert_ptr_nonnull(strstr(err.message, "failed"));
  mcp_error_clear(&err);
  ck_assert_int_eq(mcp_manager_call_tool(m, "nosuch_tool", "{}", NULL, &res, &err), MCP_ENOTFOUND);
  mcp_error_clear(&err);
  mcp_manager_free(m);
  mcp_manager_options_free(o);
}
END_TEST

START_TEST(deferred_tools_from_cache) {
  setup();
  const char *f = fault();
  write_file(tpath("mcp.json"),
             "{\"mcpServers\": {\"quick\": {\"command\": \"%s\"},"
             "\"slow\": {\"command\": \"%s\", \"args\": [\"--init-gate\", \"%s\"]}}}",
             f, f, tpath("go"));
  /* Cold: no cache, so the slow server (held until tpath("go") exists)
   * contributes nothing at the gate. */
  mcp_manager_options *o = base_options(tpath("mcp.json"));
  mcp_manager_options_set_startup_gate_ms(o, 200);
  long long t0 = test_now_ms();
  mcp_manager *m = start(o);
  long long cold = test_now_ms() - t0;
  ck_assert_int_eq(mcp_manager_wait_ready(m, "quick", 20000, NULL), MCP_OK);
  mcp_tool_list *l = mcp_manager_tools(m);
  ck_assert_int_lt(tool_index(l, "mcp__slow_echo"), 0);
  ck_assert_int_ge(tool_index(l, "mcp__quick_echo"), 0);
  mcp_tool_list_unref(l);
  write_file(tpath("go"), "go");
  ck_assert(wait_tool(m, "mcp__slow_echo", true, 10000)); /* then the cache is written */
  mcp_manager_free(m);

  /* Warm: the slow server's tools are served from the cache, deferred. */
  ck_assert_int_eq(unlink(tpath("go")), 0);
  t0 = test_now_ms();
  m = start(o);
  long long warm = test_now_ms() - t0;
  fprintf(stderr, "time to first tool list, 2 servers (1 slow): cold %lld ms, warm %lld ms\n", cold,
          warm);
  ck_assert_int_eq(mcp_manager_wait_ready(m, "quick", 20000, NULL), MCP_OK);
  l = mcp_manager_tools(m);
  int i = tool_index(l, "mcp__slow_echo");
  ck_assert_int_ge(i, 0);
  ck_assert(mcp_tool_list_deferred(l, (size_t)i));
  ck_assert(!mcp_tool_list_deferred(l, (size_t)tool_index(l, "mcp__quick_echo")));
  ck_assert_ptr_nonnull(strstr(mcp_tool_list_json(l, (size_t)i), "inputSchema"));
  mcp_tool_list_unref(l);
  ck_assert(state_is(m, "slow", "deferred"));
  /* A call to a deferred tool waits for its server, then runs. */
  write_file(tpath("go"), "go");
  char *r = echo_via(m, "mcp__slow_echo", "waited", MCP_OK);
  ck_assert_ptr_nonnull(strstr(r, "waited"));
  mcp_free(r);
  ck_assert(state_is(m, "slow", "ready"));
  /* The live list replaces the cached one (published by the manager thread). */
  ck_assert(wait_live(m, "mcp__slow_echo", 5000));
  mcp_manager_free(m);
  mcp_manager_options_free(o);

  /* A changed config (other args) misses the cache: nothing deferred. */
  write_file(
      tpath("mcp.json"),
      "{\"mcpServers\": {\"slow\": {\"command\": \"%s\", \"args\": [\"--init-gate\", \"%s\"]}}}", f,
      tpath("never"));
  o = base_options(tpath("mcp.json"));
  mcp_manager_options_set_startup_gate_ms(o, 100);
  m = start(o);
  l = mcp_manager_tools(m);
  ck_assert_int_lt(tool_index(l, "mcp__slow_echo"), 0);
  mcp_tool_list_unref(l);
  mcp_manager_free(m);
  mcp_manager_options_free(o);
}
END_TEST

START_TEST(corrupt_cache_is_ignored) {
  setup();
  const char *f = fault();
  write_file(
      tpath("mcp.json"),
      "{\"mcpServers\": {\"slow\": {\"command\": \"%s\", \"args\": [\"--slow-init\", \"800\"]}}}",
      f);
  mcp_manager_options *o = base_options(tpath("mcp.json"));
  mcp_manager_options_set_startup_gate_ms(o, 100);
  mcp_manager *m = start(o);
  ck_assert(wait_tool(m, "mcp__slow_echo", true, 10000));
  mcp_manager_free(m);
  /* Overwrite every cache file with garbage. */
  DIR *d = opendir(tpath("cache"));
  ck_assert_ptr_nonnull(d);
  struct dirent *de;
  int n = 0;
  while ((de = readdir(d))) {
    if (de->d_name[0] == '.') continue;
    char p[1200];
    snprintf(p, sizeof(p), "%s/%s", tpath("cache"), de->d_name);
    write_file(p, "{\"version\":1,\"tools\":[garbage");
    n++;
  }
  closedir(d);
  ck_assert_int_ge(n, 1);
  m = start(o);
  mcp_tool_list *l = mcp_manager_tools(m);
  ck_assert_int_lt(tool_index(l, "mcp__slow_echo"), 0); /* a miss, not a crash */
  mcp_tool_list_unref(l);
  ck_assert(wait_tool(m, "mcp__slow_echo", true, 10000));
  mcp_manager_free(m);
  mcp_manager_options_free(o);
}
END_TEST

/* The pid of our child whose command line contains |marker|, or -1. */
static pid_t find_child(const char *marker) {
  DIR *d = opendir("/proc");
  if (!d) return -1;
  struct dirent *de;
  pid_t found = -1;
  while ((de = readdir(d)) && found < 0) {
    pid_t pid = (pid_t)atoi(de->d_name);
    if (pid <= 0) continue;
    char p[64], buf[4096];
    snprintf(p, sizeof(p), "/proc/%d/stat", pid);
    FILE *f = fopen(p, "r");
    if (!f) continue;
    int ppid = 0;
    char state;
    if (fscanf(f, "%*d %*s %c %d", &state, &ppid) != 2) ppid = 0;
    fclose(f);
    if (ppid != getpid()) continue;
    snprintf(p, sizeof(p), "/proc/%d/cmdline", pid);
    f = fopen(p, "r");
    if (!f) continue;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    for (size_t i = 0; i < n; i++)
      if (buf[i] == '\0') buf[i] = ' ';
    buf[n] = '\0';
    if (strstr(buf, marker)) found = pid;
  }
  closedir(d);
  return found;
}

START_TEST(kill9_reconnects) {
  setup();
  write_file(
      tpath("mcp.json"),
      "{\"mcpServers\": {\"victim\": {\"command\": \"%s\", \"args\": [\"--page-size\", \"97\"]}}}",
      fault());
  mcp_manager_options *o = base_options(tpath("mcp.json"));
  mcp_manager *m = start(o);
  ck_assert(wait_state(m, "victim", "ready", 10000));
  pid_t pid = find_child("--page-size 97");
  ck_assert_int_gt(pid, 0);
  ck_assert_int_eq(kill(pid, SIGKILL), 0);
  /* The close is noticed, the ladder reconnects, tools stay listed. */
  ck_assert(wait_state(m, "victim", "backoff", 5000));
  mcp_tool_list *l = mcp_manager_tools(m);
  ck_assert_int_ge(tool_index(l, "mcp__victim_echo"), 0);
  mcp_tool_list_unref(l);
  ck_assert(wait_state(m, "victim", "ready", 10000));
  ck_assert_int_eq(status_int(m, "victim", "reconnects"), 1);
  pid_t pid2 = find_child("--page-size 97");
  ck_assert_int_gt(pid2, 0);
  ck_assert_int_ne(pid2, pid);
  char *r = echo_via(m, "victim/echo", "back", MCP_OK);
  mcp_free(r);
  mcp_manager_free(m);
  /* No child left behind. */
  ck_assert_int_lt(find_child("--page-size 97"), 0);
  mcp_manager_options_free(o);
}
END_TEST

START_TEST(circuit_breaker) {
  setup();
  write_file(
      tpath("mcp.json"),
      "{\"mcpServers\": {\"flappy\": {\"command\": \"%s\", \"args\": [\"--exit-after-list\"]}}}",
      fault());
  mcp_manager_options *o = base_options(tpath("mcp.json"));
  mcp_manager *m = start(o);
  /* It exits after every handshake: more than 5 closes in 30 s stop it. */
  ck_assert(wait_state(m, "flappy", "failed", 25000));
  json_object *st = server_status(m, "flappy");
  ck_assert_ptr_nonnull(
      strstr(json_object_get_string(json_object_object_get(st, "lastError")), "circuit breaker"));
  int reconnects = json_object_get_int(json_object_object_get(st, "reconnects"));
  json_object_put(st);
  ck_assert_int_ge(reconnects, 5);
  /* Its tools stay listed; calls fail clearly. */
  mcp_tool_list *l = mcp_manager_tools(m);
  ck_assert_int_ge(tool_index(l, "mcp__flappy_echo"), 0);
  mcp_tool_list_unref(l);
  char *res = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(
      mcp_manager_call_tool(m, "mcp__flappy_echo", "{\"text\":\"x\"}", NULL, &res, &err),
      MCP_ECLOSED);
  ck_assert_ptr_nonnull(strstr(err.message, "circuit breaker"));
  mcp_error_clear(&err);
  /* A manual reconnect resets it. */
  ck_assert_int_eq(mcp_manager_reconnect(m, "flappy", NULL), MCP_OK);
  ck_assert_int_gt(status_int(m, "flappy", "reconnects"), reconnects);
  ck_assert_int_eq(mcp_manager_reconnect(m, "nosuch", NULL), MCP_ENOTFOUND);
  mcp_manager_free(m);
  mcp_manager_options_free(o);
}
END_TEST

/* mcp-h2-test-server with |flag| (NULL-terminated list); returns its pid,
 * the port in *port and its stdin (closing it stops it) in *in_wr. */
static pid_t h2_server_start(const char *const *flags, int *port, int *in_wr) {
  const char *argv[16] = {test_env_path("MCP_H2_TEST_SERVER")};
  int n = 1;
  for (; flags[n - 1] && n < 15; n++) argv[n] = flags[n - 1];
  argv[n] = NULL;
  test_server s = test_server_spawn(argv, 60000);
  *port = s.port;
  *in_wr = s.in_wr;
  return s.pid;
}

/* The breaker half-opens by itself: after the cooldown one connect is
 * tried; a server that fails again at once reopens it for twice as long,
 * and a server that has recovered is back without mcp_manager_reconnect(). */
START_TEST(circuit_breaker_half_opens) {
  setup();
  const char *mark = tpath("healthy");
  char markbuf[600];
  snprintf(markbuf, sizeof(markbuf), "%s", mark);
  write_file(tpath("mcp.json"),
             "{\"mcpServers\": {\"flappy\": {\"command\": \"/bin/sh\", \"args\": [\"-c\","
             " \"if [ -e %s ]; then exec %s; else exec %s --exit-after-list; fi\"]}}}",
             markbuf, fault(), fault());
  mcp_manager_options *o = base_options(tpath("mcp.json"));
  mcp_manager_options_set_breaker_cooldown_ms(o, 1000, 60000);
  mcp_manager *m = start(o);
  /* Open, then the probe after 1 s connects, closes at once: open for 2 s. */
  ck_assert(wait_error_has(m, "flappy", "trying again in 1 s", 30000));
  ck_assert(wait_error_has(m, "flappy", "trying again in 2 s", 30000));
  /* It recovers: the next probe finds it healthy, with no reconnect by hand. */
  write_file(markbuf, "%s", "");
  ck_assert(wait_state(m, "flappy", "ready", 30000));
  char *res = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_msg(mcp_manager_call_tool(m, "mcp__flappy_echo", "{\"text\":\"back\"}", NULL, &res,
                                      &err) == MCP_OK,
                "call: %s", err.message ? err.message : "");
  ck_assert_ptr_nonnull(strstr(res, "back"));
  mcp_free(res);
  mcp_error_clear(&err);
  mcp_manager_free(m);
  mcp_manager_options_free(o);
}
END_TEST

/* An HTTP server that answers every tools/call with 503: each call
 * reconnects and retries once, and counts as a close.  The sixth trips the
 * breaker, and callers are told so (they were told "HTTP 503", the last
 * error before the breaker, and nothing was logged). */
START_TEST(circuit_breaker_on_retried_calls) {
  setup();
  int port, in_wr;
  pid_t pid = h2_server_start((const char *const[]){"--chaos-only", "503", NULL}, &port, &in_wr);
  char url[64];
  snprintf(url, sizeof(url), "http://127.0.0.1:%d/mcp", port);
  mcp_client_options *co = mcp_client_options_new();
  ck_assert_int_eq(mcp_client_options_set_http(co, url, MCP_HTTP_TRANSPORT_STREAMABLE), MCP_OK);
  mcp_client_options_set_http_version(co, MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
  mcp_client_options_set_http_listener(co, false);
  mcp_manager_options *o = base_options(NULL);
  ck_assert_int_eq(mcp_manager_options_add_server(o, "busy", co), MCP_OK);
  mcp_client_options_free(co);
  mcp_manager_options_set_startup_gate_ms(o, 10000);
  mcp_manager *m = start(o);
  ck_assert(wait_state(m, "busy", "ready", 20000));
  mcp_status st = MCP_OK;
  mcp_error err = MCP_ERROR_INIT;
  int calls = 0;
  for (; calls < 10 && st != MCP_ECLOSED; calls++) {
    mcp_error_clear(&err);
    char *res = NULL;
    st = mcp_manager_call_tool(m, "busy/echo", "{\"text\":\"x\"}", NULL, &res, &err);
    mcp_free(res);
    if (st != MCP_ECLOSED)
      ck_assert_msg(st == MCP_EHTTP && err.http_status == 503, "call %d: %s (%s)", calls,
                    mcp_strerror(st), err.message ? err.message : "-");
  }
  ck_assert_int_eq(st, MCP_ECLOSED);
  ck_assert_int_eq(calls, 6);
  ck_assert_msg(err.message && strstr(err.message, "circuit breaker"), "message: %s",
                err.message ? err.message : "(null)");
  mcp_error_clear(&err);
  json_object *s = server_status(m, "busy");
  ck_assert_str_eq(json_object_get_string(json_object_object_get(s, "state")), "failed");
  ck_assert_ptr_nonnull(
      strstr(json_object_get_string(json_object_object_get(s, "lastError")), "circuit breaker"));
  json_object_put(s);
  mcp_manager_free(m);
  mcp_manager_options_free(o);
  close(in_wr);
  ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
}
END_TEST

START_TEST(list_changed_republishes) {
  setup();
  write_file(tpath("mcp.json"), "{\"mcpServers\": {\"growing\": {\"command\": \"%s\"}}}", fault());
  mcp_manager_options *o = base_options(tpath("mcp.json"));
  mcp_manager *m = start(o);
  ck_assert(wait_state(m, "growing", "ready", 10000));
  /* "ready" is announced before its tools are published: wait for both. */
  ck_assert_int_eq(mcp_manager_wait_ready(m, NULL, 10000, NULL), MCP_OK);
  mcp_tool_list *before = mcp_manager_tools(m);
  ck_assert_int_lt(tool_index(before, "mcp__growing_extra"), 0);
  char *r = echo_via(m, "growing/grow", "", MCP_OK); /* unlisted: by SERVER/TOOL */
  mcp_free(r);
  ck_assert(wait_tool(m, "mcp__growing_extra", true, 5000));
  mcp_tool_list *after = mcp_manager_tools(m);
  ck_assert_uint_gt(mcp_tool_list_version(after), mcp_tool_list_version(before));
  ck_assert_uint_eq(mcp_tool_list_count(after), mcp_tool_list_count(before) + 1);
  /* The old snapshot is immutable and still valid. */
  ck_assert_int_lt(tool_index(before, "mcp__growing_extra"), 0);
  mcp_tool_list_unref(before);
  mcp_tool_list_unref(after);
  pthread_mutex_lock(&ev.lock);
  ck_assert_int_ge(ev.notifications, 1); /* list_changed fanned out too */
  pthread_mutex_unlock(&ev.lock);
  r = echo_via(m, "mcp__growing_extra", "", MCP_OK);
  mcp_free(r);
  /* Resources and prompts were re-listed too (one item each, now two). */
  char *js = NULL;
  ck_assert(WAIT_UNTIL((mcp_manager_resources(m, &js, NULL),
                        strstr(js, "fault://item/1") ? 1 : (mcp_free(js), js = NULL, 0)),
                       5000));
  ck_assert_ptr_nonnull(strstr(js, "\"server\":\"growing\""));
  mcp_free(js);
  js = NULL;
  ck_assert(WAIT_UNTIL(
      (mcp_manager_prompts(m, &js, NULL), strstr(js, "prompt1") ? 1 : (mcp_free(js), js = NULL, 0)),
      5000));
  mcp_free(js);
  mcp_manager_free(m);
  mcp_manager_options_free(o);
}
END_TEST

static char *names_for(const char *config) {
  write_file(tpath("names.json"), "%s", config);
  mcp_manager_options *o = base_options(tpath("names.json"));
  mcp_manager_options_set_startup_gate_ms(o, 10000);
  mcp_manager *m = start(o);
  mcp_tool_list *l = mcp_manager_tools(m);
  char *out = calloc(1, 8192);
  for (size_t i = 0; i < mcp_tool_list_count(l); i++) {
    strcat(out, mcp_tool_list_name(l, i));
    strcat(out, "=");
    strcat(out, mcp_tool_list_server(l, i));
    strcat(out, "/");
    strcat(out, mcp_tool_list_tool(l, i));
    strcat(out, "\n");
  }
  mcp_tool_list_unref(l);
  mcp_manager_free(m);
  mcp_manager_options_free(o);
  return out;
}

START_TEST(names_fold_and_collide_deterministically) {
  setup();
  const char *f = fault();
  char a[2048], b[2048];
  snprintf(a, sizeof(a),
           "{\"mcpServers\": {\"My.Server\": {\"command\": \"%s\"}, \"a-b\": {\"command\": \"%s\"},"
           " \"a_b\": {\"command\": \"%s\"}}}",
           f, f, f);
  snprintf(b, sizeof(b),
           "{\"mcpServers\": {\"a_b\": {\"command\": \"%s\"}, \"a-b\": {\"command\": \"%s\"},"
           " \"My.Server\": {\"command\": \"%s\"}}}",
           f, f, f);
  char *x = names_for(a);
  char *y = names_for(b);
  ck_assert_str_eq(x, y); /* byte-identical whatever the order */
  ck_assert_ptr_nonnull(strstr(x, "mcp__my_server_echo=My.Server/echo\n"));
  /* a-b and a_b both fold to a_b: one keeps the name, one is suffixed. */
  ck_assert_ptr_nonnull(strstr(x, "mcp__a_b_echo="));
  ck_assert_ptr_nonnull(strstr(x, "mcp__a_b_echo_2="));
  free(x);
  free(y);
}
END_TEST

static mcp_trust trust_once(void *user, const char *path, const char *sha256,
                            const char *servers_json) {
  (void)user, (void)path, (void)sha256, (void)servers_json;
  return MCP_TRUST_ONCE;
}

START_TEST(discovery_precedence) {
  setup();
  const char *f = fault();
  /* project/.git marks the root; project/sub/.mcp.json is nearest. */
  char proj[700], sub[800], xdg[700], home[700];
  snprintf(proj, sizeof(proj), "%s/project", tmpdir);
  snprintf(sub, sizeof(sub), "%s/sub", proj);
  snprintf(xdg, sizeof(xdg), "%s/xdg", tmpdir);
  snprintf(home, sizeof(home), "%s/home", tmpdir);
  mkdir(proj, 0700);
  mkdir(sub, 0700);
  char p[900];
  snprintf(p, sizeof(p), "%s/.git", proj);
  mkdir(p, 0700);
  mkdir(xdg, 0700);
  mkdir(home, 0700);
  snprintf(p, sizeof(p), "%s/mcpconn", xdg);
  mkdir(p, 0700);
  snprintf(p, sizeof(p), "%s/mcpconn/mcp.json", xdg);
  write_file(
      p,
      "{\"mcpServers\": {\"user\": {\"command\": \"%s\"}, \"shared\": {\"command\": \"/bin/false-user\"}}}",
      f);
  snprintf(p, sizeof(p), "%s/.mcp.json", proj);
  write_file(
      p,
      "{\"mcpServers\": {\"proj\": {\"command\": \"%s\"}, \"shared\": {\"command\": \"/bin/false-project\"}}}",
      f);
  write_file(tpath("explicit.json"), "{\"mcpServers\": {\"shared\": {\"command\": \"%s\"}}}", f);
  setenv("XDG_CONFIG_HOME", xdg, 1);
  setenv("HOME", home, 1);

  mcp_manager_options *o = base_options(tpath("explicit.json"));
  mcp_manager_options_set_discovery(o, true, true);
  /* Project files need trust now; this test is about precedence. */
  mcp_manager_options_set_project_trust(o, trust_once, NULL);
  mcp_manager_options_set_cwd(o, sub);
  mcp_manager_options_set_startup_gate_ms(o, 10000);
  mcp_manager *m = start(o);
  /* explicit > project > user, first definition of a name wins */
  json_object *s = server_status(m, "shared");
  ck_assert_ptr_nonnull(s);
  ck_assert_ptr_nonnull(
      strstr(json_object_get_string(json_object_object_get(s, "source")), "explicit.json"));
  json_object_put(s);
  ck_assert(state_is(m, "shared", "ready"));
  ck_assert(state_is(m, "proj", "ready"));
  ck_assert(state_is(m, "user", "ready"));
  mcp_manager_free(m);
  /* Project config off: "proj" is gone, "shared" still from the explicit file. */
  mcp_manager_options_set_discovery(o, false, true);
  m = start(o);
  json_object *gone = server_status(m, "proj");
  ck_assert_ptr_null(gone);
  ck_assert(state_is(m, "user", "ready"));
  mcp_manager_free(m);
  mcp_manager_options_free(o);
}
END_TEST

START_TEST(code_servers_and_bad_config_lines) {
  setup();
  const char *f = fault();
  /* A malformed file contributes nothing and stops nothing. */
  write_file(tpath("bad.json"), "{\"mcpServers\": {\"broken\": ");
  write_file(tpath("typo.json"), "{\"mcpServers\": {\"typo\": {\"comand\": \"%s\"}}}", f);
  mcp_manager_options *o = base_options(tpath("bad.json"));
  mcp_manager_options_add_config_file(o, tpath("typo.json"));
  mcp_client_options *co = mcp_client_options_new();
  const char *argv[] = {f, NULL};
  mcp_client_options_set_stdio(co, argv);
  ck_assert_int_eq(mcp_manager_options_add_server(o, "incode", co), MCP_OK);
  ck_assert_int_eq(mcp_manager_options_add_server(o, "bad name!", co), MCP_EINVAL);
  mcp_client_options_free(co);
  mcp_manager_options_set_startup_gate_ms(o, 10000);
  mcp_manager *m = start(o);
  ck_assert(state_is(m, "incode", "ready"));
  ck_assert_ptr_null(server_status(m, "broken"));
  ck_assert_ptr_null(server_status(m, "typo"));
  char *r = echo_via(m, "mcp__incode_echo", "code", MCP_OK);
  mcp_free(r);
  mcp_manager_free(m);
  mcp_manager_options_free(o);
}
END_TEST

/* 16 host threads calling and listing while a server crashes now and then
 * (rarely enough to stay under the circuit breaker's 5 closes in 30 s). */
typedef struct hammer {
  mcp_manager *m;
  int n;
  int ok, failed, lists;
  char last_err[200];
} hammer;

static void *hammer_main(void *arg) {
  hammer *h = arg;
  for (int i = 0; i < h->n; i++) {
    char *res = NULL;
    mcp_error err = MCP_ERROR_INIT;
    const char *tool = i % 2 ? "mcp__crashy_echo" : "mcp__steady_echo";
    mcp_status st = mcp_manager_call_tool(h->m, tool, "{\"text\":\"h\"}", NULL, &res, &err);
    if (st == MCP_OK) {
      h->ok++;
    } else {
      h->failed++;
      ck_assert_ptr_nonnull(err.message); /* every failure says why */
      snprintf(h->last_err, sizeof(h->last_err), "%s", err.message);
    }
    mcp_free(res);
    mcp_error_clear(&err);
    mcp_tool_list *l = mcp_manager_tools(h->m);
    if (mcp_tool_list_count(l) > 0 && mcp_tool_list_name(l, 0)) h->lists++;
    mcp_tool_list_unref(l);
  }
  return NULL;
}

START_TEST(sixteen_threads_during_reconnects) {
  setup();
  const char *f = fault();
  write_file(
      tpath("mcp.json"),
      "{\"mcpServers\": {\"crashy\": {\"command\": \"%s\", \"args\": [\"--crash-every\", \"90\"]},"
      "\"steady\": {\"command\": \"%s\"}}}",
      f, f);
  mcp_manager_options *o = base_options(tpath("mcp.json"));
  mcp_manager_options_set_startup_gate_ms(o, 10000);
  mcp_manager *m = start(o);
  enum { NT = 16 };
  int per = test_under_valgrind() ? 5 : 40;
  hammer h[NT];
  pthread_t th[NT];
  for (int i = 0; i < NT; i++) {
    memset(&h[i], 0, sizeof(h[i]));
    h[i].m = m;
    h[i].n = per;
    pthread_create(&th[i], NULL, hammer_main, &h[i]);
  }
  int ok = 0, failed = 0, lists = 0;
  for (int i = 0; i < NT; i++) {
    pthread_join(th[i], NULL);
    ok += h[i].ok;
    failed += h[i].failed;
    lists += h[i].lists;
    if (h[i].failed)
      fprintf(stderr, "thread %d: %d failed, last: %s\n", i, h[i].failed, h[i].last_err);
  }
  fprintf(stderr, "16 threads: %d ok, %d failed with an error, reconnects %d\n", ok, failed,
          status_int(m, "crashy", "reconnects"));
  ck_assert_int_eq(ok + failed, NT * per); /* every call ended */
  ck_assert_int_eq(lists, NT * per);
  /* In-flight calls on a crashed connection are retried once after the
   * reconnect, so nearly all succeed. */
  ck_assert_int_ge(ok, NT * per * 95 / 100);
  ck_assert_int_ge(status_int(m, "crashy", "reconnects"), 1);
  mcp_manager_free(m);
  mcp_manager_options_free(o);
}
END_TEST

typedef struct fire_later {
  mcp_cancel *tok;
  mcp_manager *m;
} fire_later;

static void *fire_when_waiting(void *arg) {
  fire_later *f = arg;
  /* Fire once the caller is certainly waiting: the server is still in its
   * 10 s initialize, so any moment works; fire at once. */
  mcp_cancel_fire(f->tok);
  return NULL;
}

START_TEST(cancel_and_shutdown_during_connect) {
  setup();
  write_file(
      tpath("mcp.json"),
      "{\"mcpServers\": {\"hung\": {\"command\": \"%s\", \"args\": [\"--slow-init\", \"10000\"]}}}",
      fault());
  mcp_manager_options *o = base_options(tpath("mcp.json"));
  mcp_manager_options_set_startup_gate_ms(o, 100);
  mcp_manager *m = start(o);
  ck_assert(state_is(m, "hung", "connecting"));
  /* A call waiting for the server ends when its token fires. */
  mcp_call_options *co = mcp_call_options_new();
  mcp_cancel *tok = mcp_cancel_new();
  mcp_call_options_set_cancel(co, tok);
  fire_later f = {tok, m};
  pthread_t th;
  pthread_create(&th, NULL, fire_when_waiting, &f);
  char *res = NULL;
  mcp_error err = MCP_ERROR_INIT;
  long long t0 = test_now_ms();
  mcp_status st = mcp_manager_call_tool(m, "hung/echo", "{\"text\":\"x\"}", co, &res, &err);
  pthread_join(th, NULL);
  ck_assert_int_eq(st, MCP_ECANCELLED);
  ck_assert_int_lt(test_now_ms() - t0, 9000);
  mcp_error_clear(&err);
  mcp_cancel_unref(tok);
  mcp_call_options_free(co);
  /* Shutdown abandons the connect instead of waiting out its 10 s. */
  t0 = test_now_ms();
  mcp_manager_free(m);
  long long took = test_now_ms() - t0;
  fprintf(stderr, "mcp_manager_free with a hung connect: %lld ms\n", took);
  ck_assert_int_lt(took, 9000);
  mcp_manager_options_free(o);
}
END_TEST

START_TEST(diagnostics_and_connecting_event) {
  setup();
  write_file(tpath("mcp.json"),
             "{\"mcpServers\": {\"ok\": {\"command\": \"%s\"}, \"typo\": {\"comand\": \"x\"},"
             " \"off\": {\"command\": \"x\", \"enabled\": false}}}",
             fault());
  mcp_manager_options *o = base_options(tpath("mcp.json"));
  mcp_manager_options_set_startup_gate_ms(o, 10000);
  mcp_manager *m = start(o);
  char *js = NULL;
  ck_assert_int_eq(mcp_manager_diagnostics(m, &js, NULL), MCP_OK);
  ck_assert_ptr_nonnull(strstr(js, "comand"));
  ck_assert_ptr_nonnull(strstr(js, "\"server\":\"off\""));
  mcp_free(js);
  /* "connecting" then "ready": two state events for the one server. */
  ck_assert(wait_state(m, "ok", "ready", 5000));
  ck_assert(wait_state_events(2, 5000)); /* events run on the worker lane */
  mcp_manager_free(m);
  mcp_manager_options_free(o);
}
END_TEST

/* ---- many servers and log records ------------------------------------------- */

/* A field of /proc/self/status ("Threads"), or -1. */
static long self_status(const char *key) {
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long v = -1;
  size_t k = strlen(key);
  while (fgets(line, sizeof(line), f))
    if (!strncmp(line, key, k) && line[k] == ':') v = strtol(line + k + 1, NULL, 10);
  fclose(f);
  return v;
}

static long open_fds(void) {
  DIR *d = opendir("/proc/self/fd");
  if (!d) return -1;
  long n = 0;
  while (readdir(d)) n++;
  closedir(d);
  return n - 3; /* ".", "..", the DIR's own */
}

/* A few hundred servers in one manager (a dozen under valgrind): every
 * server's tools arrive in the list wait_ready() hands out, every name
 * resolves (the public one and server/tool), and mcp_manager_free()
 * leaves no thread, descriptor or child behind.  No timing asserted: the
 * figures are bench/manyservers's. */
START_TEST(hundreds_of_servers) {
  setup();
  int n = test_under_valgrind() ? 12 : 200;
  mcp_manager_options *o = mcp_manager_options_new();
  ck_assert_ptr_nonnull(o);
  mcp_manager_options_set_discovery(o, false, false);
  mcp_manager_options_set_cache_dir(o, NULL);
  mcp_manager_options_set_startup_gate_ms(o, 0);
  mcp_client_options *co = mcp_client_options_new();
  const char *argv[] = {fault(), NULL};
  ck_assert_int_eq(mcp_client_options_set_stdio(co, argv), MCP_OK);
  /* The baseline after one server's run: what the process keeps for good
   * (a sanitizer's own threads, lazily started) is not a leak. */
  ck_assert_int_eq(mcp_manager_options_add_server(o, "s0", co), MCP_OK);
  mcp_manager *m = start(o);
  ck_assert_int_eq(mcp_manager_wait_ready(m, NULL, 100000, NULL), MCP_OK);
  mcp_manager_free(m);
  mcp_manager_options_free(o);
  WAIT_UNTIL(waitpid(-1, NULL, WNOHANG) == -1, 10000);
  long threads0 = self_status("Threads"), fds0 = open_fds();
  o = test_many_servers(co, n);
  mcp_client_options_free(co);
  m = start(o);
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_msg(mcp_manager_wait_ready(m, NULL, 100000, &err) == MCP_OK, "wait_ready: %s",
                err.message ? err.message : "");
  /* The list handed out right after wait_ready() has every server. */
  test_assert_every_server_listed(m, n);
  char *js = NULL;
  ck_assert_int_eq(mcp_manager_servers(m, &js, NULL), MCP_OK);
  int ready = 0;
  for (const char *p = js; (p = strstr(p, "\"state\":\"ready\"")); p++) ready++;
  ck_assert_int_eq(ready, n);
  mcp_free(js);
  /* Names resolve: server/tool for every server, public names for some. */
  for (int i = 0; i < n; i++) {
    char tool[32], text[16];
    snprintf(tool, sizeof(tool), "s%d/echo", i);
    snprintf(text, sizeof(text), "hi%d", i);
    char *r = echo_via(m, tool, text, MCP_OK);
    ck_assert_ptr_nonnull(strstr(r, text));
    mcp_free(r);
  }
  for (int i = 0; i < n; i += n / 4) {
    char tool[32];
    snprintf(tool, sizeof(tool), "mcp__s%d_echo", i);
    char *r = echo_via(m, tool, "pub", MCP_OK);
    mcp_free(r);
  }
  ck_assert_int_eq(mcp_manager_request(m, "nosuch", "ping", NULL, NULL, &js, &err), MCP_ENOTFOUND);
  mcp_error_clear(&err);
  mcp_manager_free(m);
  mcp_manager_options_free(o);
  /* Every child reaped, every descriptor closed, every thread gone
   * (detached threads finish exiting just after they stop counting). */
  ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
  ck_assert_int_eq(errno, ECHILD);
  ck_assert_int_eq(open_fds(), fds0);
  WAIT_UNTIL(self_status("Threads") <= threads0, 10000);
  ck_assert_int_le(self_status("Threads"), threads0);
}
END_TEST

/* Past the descriptor limit, a server's connect fails naming the limit
 * (ulimit -n and its value), and the manager shuts down cleanly. */
START_TEST(fd_limit_is_named) {
  setup();
  struct rlimit old, rl;
  ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &old), 0);
  rl = old;
  rl.rlim_cur = (rlim_t)open_fds() + 24; /* two or three servers' worth */
  ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
  mcp_manager_options *o = mcp_manager_options_new();
  mcp_manager_options_set_discovery(o, false, false);
  mcp_manager_options_set_cache_dir(o, NULL);
  mcp_client_options *co = mcp_client_options_new();
  const char *argv[] = {fault(), NULL};
  ck_assert_int_eq(mcp_client_options_set_stdio(co, argv), MCP_OK);
  for (int i = 0; i < 8; i++) {
    char name[16];
    snprintf(name, sizeof(name), "s%d", i);
    ck_assert_int_eq(mcp_manager_options_add_server(o, name, co), MCP_OK);
  }
  mcp_client_options_free(co);
  mcp_manager *m = start(o);
  ck_assert_int_eq(mcp_manager_wait_ready(m, NULL, 20000, NULL), MCP_OK);
  char *js = NULL;
  ck_assert_int_eq(mcp_manager_servers(m, &js, NULL), MCP_OK);
  char want[64];
  snprintf(want, sizeof(want), "ulimit -n, is %llu", (unsigned long long)rl.rlim_cur);
  ck_assert_msg(strstr(js, want), "no server names the limit: %s", js);
  ck_assert_ptr_nonnull(strstr(js, "\"state\":\"ready\""));
  mcp_free(js);
  mcp_manager_free(m);
  mcp_manager_options_free(o);
  ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &old), 0);
}
END_TEST

typedef struct logrec {
  pthread_mutex_t lock;
  int n;
  char server[64][32];
  char msg[64][160];
} logrec;

static logrec logs = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void on_record(void *user, const mcp_log_record *r) {
  logrec *x = user;
  ck_assert_uint_ge(r->size, sizeof(*r));
  pthread_mutex_lock(&x->lock);
  if (x->n < 64) {
    snprintf(x->server[x->n], sizeof(x->server[0]), "%s", r->server ? r->server : "(null)");
    snprintf(x->msg[x->n], sizeof(x->msg[0]), "%s", r->message);
    x->n++;
  }
  pthread_mutex_unlock(&x->lock);
}

static void on_line(void *user, mcp_log_level level, const char *msg) {
  (void)level;
  logrec *x = user;
  pthread_mutex_lock(&x->lock);
  if (x->n < 64) snprintf(x->msg[x->n++], sizeof(x->msg[0]), "%s", msg);
  pthread_mutex_unlock(&x->lock);
}

/* A record from |server| whose message starts with |prefix|? */
static bool has_record(const char *server, const char *prefix) {
  pthread_mutex_lock(&logs.lock);
  bool yes = false;
  for (int i = 0; i < logs.n && !yes; i++)
    yes = (!server || !strcmp(logs.server[i], server)) &&
          !strncmp(logs.msg[i], prefix, strlen(prefix));
  pthread_mutex_unlock(&logs.lock);
  return yes;
}

/* Every log record names its server as a field: the manager's own lines
 * and those of the server's client; the plain callback still gets
 * "server: message". */
START_TEST(log_records_name_the_server) {
  setup();
  write_file(tpath("mcp.json"),
             "{\"mcpServers\": {\"crashy\": {\"command\": \"%s\", \"args\": [\"--crash-on-call\"]},"
             "\"missing\": {\"command\": \"/nonexistent/mcp-server\"}}}",
             fault());
  for (int pass = 0; pass < 2; pass++) {
    pthread_mutex_lock(&logs.lock);
    logs.n = 0;
    pthread_mutex_unlock(&logs.lock);
    mcp_manager_options *o = base_options(tpath("mcp.json"));
    if (pass == 0) mcp_manager_options_set_log_record(o, on_record, &logs);
    else mcp_manager_options_set_log(o, on_line, &logs);
    mcp_manager *m = start(o);
    ck_assert(wait_state(m, "crashy", "ready", 10000));
    ck_assert(wait_state(m, "missing", "failed", 10000));
    char *r = NULL;
    mcp_error err = MCP_ERROR_INIT;
    ck_assert_int_ne(mcp_manager_call_tool(m, "crashy/echo", "{\"text\":\"x\"}", NULL, &r, &err),
                     MCP_OK);
    mcp_error_clear(&err);
    if (pass == 0) {
      /* The manager's line about "missing", without the name in the text. */
      WAIT_UNTIL(has_record("missing", "cannot run"), 10000);
      ck_assert(has_record("missing", "cannot run"));
      /* The client's own line about its closed connection, and the
       * manager's, both from "crashy". */
      WAIT_UNTIL(has_record("crashy", "connection closed"), 10000);
      ck_assert(has_record("crashy", "connection closed"));
      WAIT_UNTIL(has_record("crashy", "connection lost"), 10000);
      ck_assert(has_record("crashy", "connection lost"));
      ck_assert(!has_record(NULL, "crashy:") && !has_record(NULL, "missing:"));
    } else {
      WAIT_UNTIL(has_record(NULL, "missing: cannot run"), 10000);
      ck_assert(has_record(NULL, "missing: cannot run"));
      WAIT_UNTIL(has_record(NULL, "crashy: connection closed"), 10000);
      ck_assert(has_record(NULL, "crashy: connection closed"));
    }
    mcp_manager_free(m);
    mcp_manager_options_free(o);
  }
}
END_TEST

static Suite *manager_suite(void) {
  Suite *s = suite_create("manager");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_checked_fixture(tc, NULL, teardown);
  tcase_add_test(tc, ten_servers_in_parallel);
  tcase_add_test(tc, wait_ready_and_early_calls);
  tcase_add_test(tc, async_calls);
  tcase_add_test(tc, deferred_tools_from_cache);
  tcase_add_test(tc, corrupt_cache_is_ignored);
  tcase_add_test(tc, kill9_reconnects);
  tcase_add_test(tc, circuit_breaker);
  tcase_add_test(tc, circuit_breaker_on_retried_calls);
  tcase_add_test(tc, circuit_breaker_half_opens);
  tcase_add_test(tc, list_changed_republishes);
  tcase_add_test(tc, names_fold_and_collide_deterministically);
  tcase_add_test(tc, discovery_precedence);
  tcase_add_test(tc, code_servers_and_bad_config_lines);
  tcase_add_test(tc, sixteen_threads_during_reconnects);
  tcase_add_test(tc, cancel_and_shutdown_during_connect);
  tcase_add_test(tc, diagnostics_and_connecting_event);
  tcase_add_test(tc, hundreds_of_servers);
  tcase_add_test(tc, log_records_name_the_server);
  tcase_add_test(tc, fd_limit_is_named);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(manager_suite()); }
