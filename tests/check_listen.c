/* SPDX-License-Identifier: MIT */
/*
 * check_listen.c: change notifications on modern (2026-07-28) connections
 * through subscriptions/listen (mcp_listen.h; "Listen" in mcp_client.c).
 * The pure parts on fixed cases; then real servers: the scripted stdio
 * server (tests/era/era-server.mjs, modes listen and listen-refuse) and the
 * official TypeScript SDK v2 server over stdio and Streamable HTTP
 * (tests/interop/v2-dual-*.mjs, tool "grow" adds a tool at runtime).  End
 * to end through mcp_manager: a tool added at runtime reaches the
 * manager's list by tools/list_changed on the listen, also after the stdio
 * server was killed and started again (the new connection's listen).  And
 * for one client: a refused listen leaves the connection working, the
 * acknowledgement is compared with what was asked, a notification naming
 * another subscription is dropped and counted, a server that ends the
 * listen (result or notifications/cancelled) or breaks its HTTP stream off
 * gets it opened again, and free with a listen open is prompt and, over
 * stdio, tells the server.  What the client sent is read from the server's
 * side.  No sleeps: conditions are waited for with deadlines.
 */
#include "config.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_interop_util.h"
#include "mcp_listen.h"
#include "mcpconn.h"

#define START_MS 60000 /* node's first start can be slow on a busy CI box */
#define WAIT_MS 20000

/* ---- pure --------------------------------------------------------------- */

START_TEST(pure_parts) {
  static const char disc[] = "{\"capabilities\":{\"tools\":{\"listChanged\":true},"
                             "\"prompts\":{\"listChanged\":false},\"resources\":{\"listChanged\":"
                             "true,\"subscribe\":true}}}";
  ck_assert_uint_eq(mcp__listen_advertised(disc, strlen(disc)),
                    MCP_LISTEN_TOOLS | MCP_LISTEN_RESOURCES);
  ck_assert_uint_eq(mcp__listen_advertised("{\"capabilities\":{\"tools\":{}}}", 30), 0);
  ck_assert_uint_eq(
      mcp__listen_advertised("{\"capabilities\":{\"tools\":{\"listChanged\":1}}}", 45), 0);
  ck_assert_uint_eq(mcp__listen_advertised("[", 1), 0);
  char *p = mcp__listen_params(MCP_LISTEN_TOOLS | MCP_LISTEN_PROMPTS);
  ck_assert_str_eq(p,
                   "{\"notifications\":{\"toolsListChanged\":true,\"promptsListChanged\":true}}");
  mcp_free(p);
  p = mcp__listen_params(MCP_LISTEN_RESOURCES);
  ck_assert_str_eq(p, "{\"notifications\":{\"resourcesListChanged\":true}}");
  mcp_free(p);
  int64_t id = 0;
  json_object *o = json_tokener_parse("{\"_meta\":{\"" MCP_LISTEN_SUB_KEY "\":7}}");
  ck_assert_int_eq(mcp__listen_sub_id(o, &id), 1);
  ck_assert_int_eq(id, 7);
  json_object_put(o);
  o = json_tokener_parse("{\"_meta\":{\"" MCP_LISTEN_SUB_KEY "\":\"12\"}}");
  ck_assert_int_eq(mcp__listen_sub_id(o, &id), 1);
  ck_assert_int_eq(id, 12);
  json_object_put(o);
  o = json_tokener_parse("{\"_meta\":{\"" MCP_LISTEN_SUB_KEY "\":\"listen-1\"}}");
  ck_assert_int_eq(mcp__listen_sub_id(o, &id), -1);
  json_object_put(o);
  o = json_tokener_parse("{\"_meta\":{\"other\":1}}");
  ck_assert_int_eq(mcp__listen_sub_id(o, &id), 0);
  ck_assert_int_eq(mcp__listen_sub_id(NULL, &id), 0);
  json_object_put(o);
  o = json_tokener_parse("{\"notifications\":{\"toolsListChanged\":true,"
                         "\"promptsListChanged\":false,\"resourceSubscriptions\":[\"a\"]}}");
  ck_assert_uint_eq(mcp__listen_honoured(o), MCP_LISTEN_TOOLS);
  json_object_put(o);
  ck_assert_uint_eq(mcp__listen_honoured(NULL), 0);
  char buf[64];
  ck_assert_str_eq(mcp__listen_kind_names(MCP_LISTEN_ALL, buf, sizeof(buf)),
                   "tools, prompts, resources");
  ck_assert_str_eq(mcp__listen_kind_names(0, buf, sizeof(buf)), "none");
}
END_TEST

/* ---- helpers -------------------------------------------------------------- */

static char dir[1024], log_path[1200], pid_path[1200];

static void make_dir(void) {
  interop_mkdtemp(dir, sizeof(dir), "listen");
  snprintf(log_path, sizeof(log_path), "%s/sent.log", dir);
  snprintf(pid_path, sizeof(pid_path), "%s/pids", dir);
}

static const char *era_server(void) {
  static char p[4200];
  snprintf(p, sizeof(p), "%s/tests/era/era-server.mjs", test_env_path("MCP_SRCDIR"));
  return p;
}

/* The whole of |path| (caller frees); "" when it does not exist. */
static char *slurp(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return strdup("");
  char *buf = NULL;
  size_t cap = 0, n = 0;
  for (;;) {
    if (n + 4096 + 1 > cap) buf = realloc(buf, cap = cap * 2 + 8192);
    size_t r = fread(buf + n, 1, 4096, f);
    n += r;
    if (r == 0) break;
  }
  fclose(f);
  buf[n] = '\0';
  return buf;
}

static int count_of(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) n++;
  return n;
}

static int file_count(const char *path, const char *needle) {
  char *s = slurp(path);
  int n = count_of(s, needle);
  free(s);
  return n;
}

/* What the client logged and the notifications it was given. */
typedef struct seen {
  pthread_mutex_t mu;
  char logs[32768];
  int list_changed;
  int other;
  char updated[4096]; /* the uri of every notifications/resources/updated, each + "\n" */
} seen;
static seen S;

static void seen_reset(void) {
  pthread_mutex_lock(&S.mu);
  S.logs[0] = '\0';
  S.list_changed = S.other = 0;
  S.updated[0] = '\0';
  pthread_mutex_unlock(&S.mu);
}

static void on_log(void *user, mcp_log_level level, const char *msg) {
  (void)user;
  (void)level;
  pthread_mutex_lock(&S.mu);
  size_t n = strlen(S.logs);
  snprintf(S.logs + n, sizeof(S.logs) - n, "%s\n", msg);
  pthread_mutex_unlock(&S.mu);
}

static void on_note(void *user, const char *method, const char *params) {
  (void)user;
  pthread_mutex_lock(&S.mu);
  if (strcmp(method, "notifications/tools/list_changed") == 0) S.list_changed++;
  else if (strcmp(method, "notifications/resources/updated") == 0) {
    json_object *p = params ? json_tokener_parse(params) : NULL, *u = NULL;
    size_t n = strlen(S.updated);
    snprintf(S.updated + n, sizeof(S.updated) - n, "%s\n",
             p && json_object_object_get_ex(p, "uri", &u) ? json_object_get_string(u) : "?");
    json_object_put(p);
  } else S.other++;
  pthread_mutex_unlock(&S.mu);
}

static bool logged(const char *part) {
  pthread_mutex_lock(&S.mu);
  bool r = strstr(S.logs, part) != NULL;
  pthread_mutex_unlock(&S.mu);
  return r;
}

static int logged_count(const char *part) {
  pthread_mutex_lock(&S.mu);
  int n = count_of(S.logs, part);
  pthread_mutex_unlock(&S.mu);
  return n;
}

static int list_changed(void) {
  pthread_mutex_lock(&S.mu);
  int n = S.list_changed;
  pthread_mutex_unlock(&S.mu);
  return n;
}

static mcp_client_options *stdio_options(const char *mode, bool handler) {
  mcp_client_options *o = mcp_client_options_new();
  const char *argv[] = {interop_node(), era_server(), mode, NULL};
  ck_assert_int_eq(mcp_client_options_set_stdio(o, argv), MCP_OK);
  ck_assert_int_eq(mcp_client_options_set_env(o, "LOG", log_path), MCP_OK);
  ck_assert_int_eq(mcp_client_options_set_env(o, "PIDFILE", pid_path), MCP_OK);
  ck_assert_int_eq(mcp_client_options_set_client_info(o, "check_listen", "1"), MCP_OK);
  mcp_client_options_set_timeout_ms(o, START_MS);
  mcp_client_options_set_log(o, on_log, NULL);
  if (handler) mcp_client_options_set_notification_handler(o, on_note, NULL);
  return o;
}

static mcp_client *connect_opts(mcp_client_options *o) {
  mcp_client *c = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_client_connect(o, &c, &err);
  ck_assert_msg(st == MCP_OK, "connect: %s (%s)", mcp_strerror(st), err.message ? err.message : "");
  mcp_error_clear(&err);
  mcp_client_options_free(o);
  ck_assert_str_eq(mcp_client_protocol_version(c), "2026-07-28");
  return c;
}

static void call_ok(mcp_client *c, const char *tool) {
  char *out = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_client_call_tool(c, tool, NULL, NULL, &out, &err);
  ck_assert_msg(st == MCP_OK, "%s: %s (%s)", tool, mcp_strerror(st),
                err.message ? err.message : "");
  mcp_error_clear(&err);
  free(out);
}

/* ---- the manager, end to end ---------------------------------------------- */

static mcp_manager *manager_with(const char *name, mcp_client_options *co) {
  mcp_manager_options *o = mcp_manager_options_new();
  mcp_manager_options_set_discovery(o, false, false);
  char cache[1300];
  snprintf(cache, sizeof(cache), "%s/cache", dir);
  mcp_manager_options_set_cache_dir(o, cache);
  mcp_manager_options_set_timeout_ms(o, START_MS);
  ck_assert_int_eq(mcp_manager_options_add_server(o, name, co), MCP_OK);
  mcp_client_options_free(co);
  mcp_manager *m = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_msg(mcp_manager_start(o, &m, &err) == MCP_OK, "start: %s",
                err.message ? err.message : "");
  mcp_manager_options_free(o);
  return m;
}

static bool has_tool(mcp_manager *m, const char *name) {
  mcp_tool_list *l = mcp_manager_tools(m);
  bool has = false;
  for (size_t i = 0; i < mcp_tool_list_count(l); i++)
    if (strcmp(mcp_tool_list_name(l, i), name) == 0) has = true;
  mcp_tool_list_unref(l);
  return has;
}

static void manager_call(mcp_manager *m, const char *name) {
  char *out = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_manager_call_tool(m, name, NULL, NULL, &out, &err);
  ck_assert_msg(st == MCP_OK, "%s: %s (%s)", name, mcp_strerror(st),
                err.message ? err.message : "");
  mcp_error_clear(&err);
  mcp_free(out);
}

/* The manager lists s/plain (or s/echo), then s/grow makes the server add
 * "extra", which reaches the manager's list only by tools/list_changed on
 * the listen (a modern server sends it nowhere else). */
static void grow_reaches_manager(mcp_manager *m, const char *first, const char *extra) {
  ck_assert_msg(WAIT_UNTIL(has_tool(m, first), START_MS), "no %s", first);
  ck_assert(!has_tool(m, extra));
  manager_call(m, "s/grow");
  ck_assert_msg(WAIT_UNTIL(has_tool(m, extra), WAIT_MS), "%s never listed", extra);
}

START_TEST(stdio_manager_list_changed_and_respawn) {
  make_dir();
  mcp_manager *m = manager_with("s", stdio_options("listen", false));
  grow_reaches_manager(m, "mcp__s_plain", "mcp__s_extra");
  /* The listen asked for what the server advertises, tools and prompts. */
  ck_assert_int_eq(file_count(log_path, "\"method\":\"subscriptions/listen\""), 1);
  ck_assert_int_eq(file_count(log_path, "{\"notifications\":{\"toolsListChanged\":true,"
                                        "\"promptsListChanged\":true}"),
                   1);
  /* Killed: the manager starts it again, whose listen is new. */
  char *pids = slurp(pid_path);
  pid_t pid = (pid_t)atol(pids);
  free(pids);
  ck_assert_int_gt(pid, 0);
  ck_assert_int_eq(kill(pid, SIGKILL), 0);
  ck_assert(WAIT_UNTIL(file_count(pid_path, "\n") == 2, WAIT_MS));
  ck_assert(WAIT_UNTIL(file_count(log_path, "\"method\":\"subscriptions/listen\"") == 2, WAIT_MS));
  /* The new process starts without "extra": once the manager has re-listed
   * that, growing it again must be seen on the new listen. */
  ck_assert(WAIT_UNTIL(!has_tool(m, "mcp__s_extra"), WAIT_MS));
  grow_reaches_manager(m, "mcp__s_plain", "mcp__s_extra");
  mcp_manager_free(m);
  interop_rm_rf(dir);
}
END_TEST

START_TEST(v2_stdio_manager_list_changed) {
  make_dir();
  mcp_client_options *co = mcp_client_options_new();
  const char *argv[] = {interop_node(), interop_path("v2-dual-stdio.mjs"), NULL};
  ck_assert_int_eq(mcp_client_options_set_stdio(co, argv), MCP_OK);
  ck_assert_int_eq(mcp_client_options_set_protocol(co, "modern"), MCP_OK);
  mcp_manager *m = manager_with("s", co);
  grow_reaches_manager(m, "mcp__s_echo", "mcp__s_extra");
  manager_call(m, "mcp__s_extra");
  mcp_manager_free(m);
  interop_rm_rf(dir);
}
END_TEST

typedef struct http_fixture {
  node_server server;
  char url[256];
  char record[1200];
  bool h2; /* h2c (prior knowledge) instead of HTTP/1.1 */
} http_fixture;

static void http_start_v(http_fixture *f, bool h2) {
  memset(f, 0, sizeof(*f));
  make_dir();
  f->h2 = h2;
  snprintf(f->record, sizeof(f->record), "%s/record.jsonl", dir);
  char rec_env[1300];
  snprintf(rec_env, sizeof(rec_env), "RECORD=%s", f->record);
  const char *env[] = {rec_env, h2 ? "H2=1" : NULL, NULL};
  const char *args[] = {interop_path("v2-dual-http.mjs"), NULL};
  node_server_start(&f->server, env, START_MS, args);
  snprintf(f->url, sizeof(f->url), "http://127.0.0.1:%d/mcp", f->server.port);
}

static void http_start(http_fixture *f) { http_start_v(f, false); }

static void http_stop(http_fixture *f) {
  node_server_stop(&f->server);
  interop_rm_rf(dir);
}

static mcp_client_options *http_options(const http_fixture *f, bool handler) {
  mcp_client_options *o = mcp_client_options_new();
  ck_assert_int_eq(mcp_client_options_set_http(o, f->url, MCP_HTTP_TRANSPORT_STREAMABLE), MCP_OK);
  if (f->h2) mcp_client_options_set_http_version(o, MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
  mcp_client_options_set_timeout_ms(o, START_MS);
  mcp_client_options_set_log(o, on_log, NULL);
  if (handler) mcp_client_options_set_notification_handler(o, on_note, NULL);
  return o;
}

/* Over HTTP/1.1 (_i 0) and h2c (_i 1). */
START_TEST(v2_http_manager_list_changed) {
  http_fixture f;
  http_start_v(&f, _i == 1);
  mcp_manager *m = manager_with("s", http_options(&f, false));
  grow_reaches_manager(m, "mcp__s_echo", "mcp__s_extra");
  manager_call(m, "mcp__s_extra");
  ck_assert_int_ge(file_count(f.record, "\"mcp-method\":\"subscriptions/listen\""), 1);
  /* The listen did not hold the other requests up: they were answered
   * while its stream stayed open. */
  mcp_manager_free(m);
  http_stop(&f);
}
END_TEST

/* ---- one client ------------------------------------------------------------ */

START_TEST(refused_listen_is_soft) {
  make_dir();
  seen_reset();
  mcp_client *c = connect_opts(stdio_options("listen-refuse", true));
  ck_assert(WAIT_UNTIL(logged("refused subscriptions/listen"), WAIT_MS));
  ck_assert(logged("code -32601"));
  ck_assert(mcp_client_is_open(c));
  call_ok(c, "plain");
  char *out = NULL;
  ck_assert_int_eq(mcp_client_list_tools(c, NULL, &out, NULL), MCP_OK);
  free(out);
  /* Not tried again. */
  ck_assert_int_eq(file_count(log_path, "\"method\":\"subscriptions/listen\""), 1);
  mcp_client_free(c);
  interop_rm_rf(dir);
}
END_TEST

START_TEST(no_handler_no_listen) {
  make_dir();
  seen_reset();
  mcp_client *c = connect_opts(stdio_options("listen", false));
  call_ok(c, "plain");
  mcp_client_free(c);
  ck_assert_int_eq(file_count(log_path, "subscriptions/listen"), 0);
  interop_rm_rf(dir);
}
END_TEST

START_TEST(ack_unknown_and_server_ends) {
  make_dir();
  seen_reset();
  mcp_client *c = connect_opts(stdio_options("listen", true));
  /* The server honours tools only, of tools and prompts asked for. */
  ck_assert(WAIT_UNTIL(logged("without prompts"), WAIT_MS));
  /* Another subscription's notification: dropped, counted. */
  mcp_client_stats st0, st1;
  mcp_client_get_stats(c, &st0);
  call_ok(c, "stranger");
  call_ok(c, "grow");
  ck_assert(WAIT_UNTIL(list_changed() == 1, WAIT_MS));
  mcp_client_get_stats(c, &st1);
  ck_assert_uint_eq(st1.protocol_errors, st0.protocol_errors + 1);
  ck_assert(logged("for a subscription that is not ours"));
  ck_assert_int_eq(list_changed(), 1); /* the stranger's never reached the host */
  /* A graceful end (the listen's result): visible, and opened again. */
  call_ok(c, "end");
  ck_assert(WAIT_UNTIL(logged("a graceful end"), WAIT_MS));
  ck_assert(WAIT_UNTIL(file_count(log_path, "\"method\":\"subscriptions/listen\"") == 2, WAIT_MS));
  call_ok(c, "grow");
  ck_assert(WAIT_UNTIL(list_changed() == 2, WAIT_MS));
  /* Ended by notifications/cancelled: the same. */
  call_ok(c, "cancel");
  ck_assert_msg(
      WAIT_UNTIL(logged("notifications/cancelled from the server: shutting down"), WAIT_MS), "%s",
      S.logs);
  ck_assert(WAIT_UNTIL(file_count(log_path, "\"method\":\"subscriptions/listen\"") == 3, WAIT_MS));
  call_ok(c, "grow");
  ck_assert(WAIT_UNTIL(list_changed() == 3, WAIT_MS));
  ck_assert(mcp_client_is_open(c));
  mcp_client_free(c);
  interop_rm_rf(dir);
}
END_TEST

START_TEST(stdio_free_is_prompt_and_cancels) {
  make_dir();
  seen_reset();
  mcp_client *c = connect_opts(stdio_options("listen", true));
  ck_assert(WAIT_UNTIL(logged("without prompts"), WAIT_MS)); /* acknowledged: it is open */
  long long t0 = test_now_ms();
  mcp_client_free(c);
  long long took = test_now_ms() - t0;
  ck_assert_msg(took < 2000, "free took %lld ms", took);
  /* The server was told, by the listen's id. */
  ck_assert(
      WAIT_UNTIL(file_count(log_path, "\"method\":\"notifications/cancelled\"") == 1, WAIT_MS));
  char *sent = slurp(log_path);
  /* The cancelled names the listen request's id. */
  char *line = strstr(sent, "subscriptions/listen");
  ck_assert_ptr_nonnull(line);
  while (line > sent && line[-1] != '\n') line--;
  char *nl = strchr(line, '\n');
  if (nl) *nl = '\0';
  json_object *req = json_tokener_parse(line);
  if (nl) *nl = '\n';
  ck_assert_ptr_nonnull(req);
  char want[64];
  snprintf(want, sizeof(want), "\"requestId\":%lld",
           (long long)json_object_get_int64(json_object_object_get(req, "id")));
  json_object_put(req);
  ck_assert_msg(strstr(sent, want), "no %s in %s", want, sent);
  free(sent);
  interop_rm_rf(dir);
}
END_TEST

START_TEST(http_drop_reopens_and_free_is_prompt) {
  http_fixture f;
  http_start(&f);
  seen_reset();
  mcp_client *c = connect_opts(http_options(&f, true));
  ck_assert(WAIT_UNTIL(logged("acknowledged subscriptions/listen"), WAIT_MS));
  call_ok(c, "grow");
  ck_assert(WAIT_UNTIL(list_changed() == 1, WAIT_MS));
  /* The server breaks the stream off (no result): opened again. */
  call_ok(c, "drop");
  ck_assert(WAIT_UNTIL(logged("broke off"), WAIT_MS));
  ck_assert(
      WAIT_UNTIL(file_count(f.record, "\"mcp-method\":\"subscriptions/listen\"") == 2, WAIT_MS));
  ck_assert(WAIT_UNTIL(logged_count("acknowledged subscriptions/listen") == 2, WAIT_MS));
  call_ok(c, "grow");
  ck_assert(WAIT_UNTIL(list_changed() == 2, WAIT_MS));
  long long t0 = test_now_ms();
  mcp_client_free(c);
  long long took = test_now_ms() - t0;
  ck_assert_msg(took < 2000, "free took %lld ms", took);
  http_stop(&f);
}
END_TEST

/* ---- resource subscriptions ----------------------------------------------- */

/* How many notifications/resources/updated named |uri|. */
static int updated(const char *uri) {
  char line[512];
  snprintf(line, sizeof(line), "%s\n", uri);
  pthread_mutex_lock(&S.mu);
  int n = 0;
  for (const char *p = S.updated; (p = strstr(p, line)); p += strlen(line))
    if (p == S.updated || p[-1] == '\n') n++;
  pthread_mutex_unlock(&S.mu);
  return n;
}

/* Waits for the |n|th update of |uri|; failing, says what did arrive,
 * what the client logged and the end of what the server received. */
#define EXPECT_UPDATED(uri, n) \
  do { \
    bool eu_ok_ = WAIT_UNTIL(updated(uri) == (n), WAIT_MS); \
    static char eu_seen_[sizeof(S.updated) + sizeof(S.logs)]; \
    pthread_mutex_lock(&S.mu); \
    snprintf(eu_seen_, sizeof(eu_seen_), "[%s]; log:\n%s", S.updated, S.logs); \
    pthread_mutex_unlock(&S.mu); \
    char *eu_got_ = eu_ok_ ? NULL : slurp(log_path); \
    size_t eu_len_ = eu_got_ ? strlen(eu_got_) : 0; \
    ck_assert_msg(eu_ok_, "update %d of %s: got %s\nserver received (end):\n%s", (n), (uri), \
                  eu_seen_, eu_got_ ? eu_got_ + (eu_len_ > 6000 ? eu_len_ - 6000 : 0) : ""); \
    free(eu_got_); \
  } while (0)

/* The text of tool |tool| with |args| (NULL: none). */
static char *tool_text(mcp_client *c, const char *tool, const char *args) {
  char *out = NULL, *text = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_client_call_tool(c, tool, args, NULL, &out, &err);
  ck_assert_msg(st == MCP_OK, "%s: %s (%s)", tool, mcp_strerror(st),
                err.message ? err.message : "");
  ck_assert_int_eq(mcp_tool_result_text(out, strlen(out), &text, NULL, &err), MCP_OK);
  free(out);
  return text;
}

static void touch(mcp_client *c, const char *uri_json) {
  char args[512];
  snprintf(args, sizeof(args), "{\"uri\":%s}", uri_json);
  free(tool_text(c, "touch", args));
}

static void server_subs_are(mcp_client *c, const char *want) {
  char *t = tool_text(c, "subs", NULL);
  ck_assert_str_eq(t, want);
  free(t);
}

static void sub(mcp_client *c, const char *uri, bool on) {
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = on ? mcp_client_subscribe_resource(c, uri, NULL, &err)
                     : mcp_client_unsubscribe_resource(c, uri, NULL, &err);
  ck_assert_msg(st == MCP_OK, "%s %s: %s", on ? "subscribe" : "unsubscribe", uri,
                err.message ? err.message : mcp_strerror(st));
  mcp_error_clear(&err);
}

/*
 * Modern: the URIs ride on subscriptions/listen (resourceSubscriptions);
 * each change re-opens the listen with the new set and cancels the old
 * one, so the server always holds exactly one listen with the current set
 * (read from its side by the "subs" tool, which the one ordered stdio
 * stream delivers after the change).  Updates reach the handler; after an
 * unsubscribe none come (a later touch of a URI still subscribed arrives,
 * and would have come after it).
 */
START_TEST(resource_subscriptions_modern) {
  make_dir();
  seen_reset();
  mcp_client *c = connect_opts(stdio_options("subs", true));
  /* No listChanged advertised: no listen until a subscription. */
  server_subs_are(c, " open=0");
  ck_assert_int_eq(file_count(log_path, "\"method\":\"subscriptions/listen\""), 0);
  sub(c, "mem://a", true);
  server_subs_are(c, "mem://a open=1");
  touch(c, "\"mem://a\"");
  EXPECT_UPDATED("mem://a", 1);
  /* A URI that needs escaping; the old listen is cancelled. */
  sub(c, "mem://b \"q\"", true);
  server_subs_are(c, "mem://a,mem://b \"q\" open=1");
  ck_assert_int_eq(file_count(log_path, "\"method\":\"subscriptions/listen\""), 2);
  ck_assert_int_eq(file_count(log_path, "subscriptions changed"), 1);
  /* Subscribing again changes nothing: no third listen. */
  sub(c, "mem://a", true);
  server_subs_are(c, "mem://a,mem://b \"q\" open=1");
  ck_assert_int_eq(file_count(log_path, "\"method\":\"subscriptions/listen\""), 2);
  touch(c, "\"mem://b \\\"q\\\"\"");
  EXPECT_UPDATED("mem://b \"q\"", 1);
  sub(c, "mem://a", false);
  server_subs_are(c, "mem://b \"q\" open=1");
  touch(c, "\"mem://a\"");
  touch(c, "\"mem://b \\\"q\\\"\"");
  EXPECT_UPDATED("mem://b \"q\"", 2);
  ck_assert_int_eq(updated("mem://a"), 1);
  /* The last one gone: no listen left open. */
  sub(c, "mem://b \"q\"", false);
  server_subs_are(c, " open=0");
  ck_assert(mcp_client_is_open(c));
  ck_assert(!logged("broke off"));
  mcp_client_free(c);
  interop_rm_rf(dir);
}
END_TEST

/* Legacy: resources/subscribe and resources/unsubscribe; the updates come
 * unsolicited to the same handler. */
START_TEST(resource_subscriptions_legacy) {
  make_dir();
  seen_reset();
  mcp_client_options *o = stdio_options("subs", true);
  ck_assert_int_eq(mcp_client_options_set_protocol(o, "legacy"), MCP_OK);
  mcp_client *c = NULL;
  ck_assert_int_eq(mcp_client_connect(o, &c, NULL), MCP_OK);
  mcp_client_options_free(o);
  ck_assert_str_eq(mcp_client_protocol_version(c), "2025-11-25");
  sub(c, "mem://a", true);
  ck_assert_int_eq(file_count(log_path, "\"method\":\"resources/subscribe\""), 1);
  server_subs_are(c, "mem://a open=0");
  touch(c, "\"mem://a\"");
  EXPECT_UPDATED("mem://a", 1);
  sub(c, "mem://a", false);
  ck_assert_int_eq(file_count(log_path, "\"method\":\"resources/unsubscribe\""), 1);
  server_subs_are(c, " open=0");
  ck_assert_int_eq(file_count(log_path, "subscriptions/listen"), 0);
  mcp_client_free(c);
  interop_rm_rf(dir);
}
END_TEST

/* Refused before anything is sent: no handler to deliver updates to, or a
 * modern server that does not offer subscriptions. */
START_TEST(resource_subscriptions_refused) {
  make_dir();
  seen_reset();
  mcp_client *c = connect_opts(stdio_options("subs", false));
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp_client_subscribe_resource(c, "mem://a", NULL, &err), MCP_ESTATE);
  ck_assert_msg(strstr(err.message, "no notification handler"), "%s", err.message);
  mcp_error_clear(&err);
  mcp_client_free(c);
  c = connect_opts(stdio_options("modern", true));
  ck_assert_int_eq(mcp_client_subscribe_resource(c, "mem://a", NULL, &err), MCP_ESTATE);
  ck_assert_msg(strstr(err.message, "does not offer resource subscriptions") &&
                    strstr(err.message, "node"),
                "%s", err.message);
  mcp_error_clear(&err);
  ck_assert_int_eq(mcp_client_subscribe_resource(c, NULL, NULL, NULL), MCP_EINVAL);
  ck_assert_int_eq(file_count(log_path, "subscriptions/listen"), 0);
  mcp_client_free(c);
  interop_rm_rf(dir);
}
END_TEST

/*
 * The listen over HTTP/2 (h2c, prior knowledge) against the v2 SDK: one
 * stream for the listen beside the calls' streams on the one connection;
 * tools/list_changed and, for a subscribed URI, resources/updated arrive
 * on it; a listen the server breaks off is opened again with the same
 * resourceSubscriptions, whose updates keep arriving.
 */
START_TEST(v2_h2c_listen_updates_and_drop) {
  http_fixture f;
  http_start_v(&f, true);
  seen_reset();
  mcp_client *c = connect_opts(http_options(&f, true));
  ck_assert(WAIT_UNTIL(logged("acknowledged subscriptions/listen"), WAIT_MS));
  call_ok(c, "grow");
  ck_assert(WAIT_UNTIL(list_changed() == 1, WAIT_MS));
  sub(c, "mem://note", true);
  ck_assert(WAIT_UNTIL(file_count(f.record, "resourceSubscriptions") == 1, WAIT_MS));
  free(tool_text(c, "touch", "{\"uri\":\"mem://note\"}"));
  EXPECT_UPDATED("mem://note", 1);
  /* Not subscribed: nothing comes for it (a later touch of the subscribed
   * one arrives, and would have come after it). */
  free(tool_text(c, "touch", "{\"uri\":\"mem://other\"}"));
  call_ok(c, "drop");
  ck_assert(WAIT_UNTIL(logged("broke off"), WAIT_MS));
  ck_assert(WAIT_UNTIL(file_count(f.record, "resourceSubscriptions") == 2, WAIT_MS));
  ck_assert(WAIT_UNTIL(logged_count("acknowledged subscriptions/listen") >= 3, WAIT_MS));
  free(tool_text(c, "touch", "{\"uri\":\"mem://note\"}"));
  EXPECT_UPDATED("mem://note", 2);
  ck_assert_int_eq(updated("mem://other"), 0);
  call_ok(c, "grow");
  ck_assert(WAIT_UNTIL(list_changed() == 2, WAIT_MS));
  mcp_client_free(c);
  /* The server's record: every request of the test went as HTTP/2. */
  ck_assert_int_gt(file_count(f.record, "\"http\":\"2.0\""), 5);
  ck_assert_int_eq(file_count(f.record, "\"http\":\"1.1\""), 0);
  http_stop(&f);
}
END_TEST

/* ---- resource subscriptions kept by the manager ------------------------------ */

/* The manager's events: each notifications/resources/updated's uri. */
static void on_event(void *user, mcp_manager_event ev, const char *server, const char *detail) {
  (void)user;
  (void)server;
  if (ev != MCP_MANAGER_EVENT_NOTIFICATION) return;
  json_object *d = json_tokener_parse(detail), *m = NULL, *p = NULL;
  if (d && json_object_object_get_ex(d, "method", &m) &&
      strcmp(json_object_get_string(m), "notifications/resources/updated") == 0 &&
      json_object_object_get_ex(d, "params", &p))
    on_note(NULL, "notifications/resources/updated", json_object_to_json_string(p));
  json_object_put(d);
}

static void manager_touch(mcp_manager *m, const char *uri) {
  char params[512], *out = NULL;
  snprintf(params, sizeof(params), "{\"name\":\"touch\",\"arguments\":{\"uri\":\"%s\"}}", uri);
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_manager_request(m, "s", "tools/call", params, NULL, &out, &err);
  ck_assert_msg(st == MCP_OK, "touch: %s", err.message ? err.message : mcp_strerror(st));
  mcp_free(out);
}

static pid_t nth_pid(int n) {
  char *pids = slurp(pid_path), *p = pids;
  for (int i = 0; i < n && p; i++) p = (p = strchr(p, '\n')) ? p + 1 : NULL;
  pid_t pid = p ? (pid_t)atol(p) : 0;
  free(pids);
  return pid;
}

/*
 * mcp_manager_subscribe_resource() in both eras (_i 0: modern, the listen's
 * resourceSubscriptions; 1: legacy, resources/subscribe) against the
 * scripted stdio server: updates reach the event handler; the server is
 * killed and the manager starts it again, subscribes again on the new
 * process (read from the server's log), and updates keep coming.  An
 * unsubscribed URI is not subscribed on the next process.
 */
START_TEST(manager_subscriptions_survive_restart) {
  bool legacy = _i == 1;
  make_dir();
  seen_reset();
  mcp_client_options *co = stdio_options("subs", false);
  ck_assert_int_eq(mcp_client_options_set_protocol(co, legacy ? "legacy" : "modern"), MCP_OK);
  mcp_manager_options *o = mcp_manager_options_new();
  mcp_manager_options_set_discovery(o, false, false);
  char cache[1300];
  snprintf(cache, sizeof(cache), "%s/cache", dir);
  mcp_manager_options_set_cache_dir(o, cache);
  mcp_manager_options_set_timeout_ms(o, START_MS);
  mcp_manager_options_set_event_handler(o, on_event, NULL);
  ck_assert_int_eq(mcp_manager_options_add_server(o, "s", co), MCP_OK);
  mcp_client_options_free(co);
  mcp_manager *m = NULL;
  ck_assert_int_eq(mcp_manager_start(o, &m, NULL), MCP_OK);
  mcp_manager_options_free(o);
  const char *sent = legacy ? "\"method\":\"resources/subscribe\"" : "\"resourceSubscriptions\"";
  mcp_error err = MCP_ERROR_INIT;
  /* Past the connector's own post-connect work (resources/list, then the
   * re-subscription of an empty set) before the host changes the set: a
   * change that races the connector's re-subscription replaces the
   * listen by cancel-then-open, and an update the server makes between
   * the two reaches nobody (a known limit, not what this test is about).
   * The re-subscription after the restart below is. */
  ck_assert_int_eq(mcp_manager_wait_ready(m, "s", START_MS, NULL), MCP_OK);
  if (!legacy)
    ck_assert(WAIT_UNTIL(file_count(log_path, "\"method\":\"resources/list\"") > 0, WAIT_MS));
  mcp_status st = mcp_manager_subscribe_resource(m, "s", "mem://a", NULL, &err);
  ck_assert_msg(st == MCP_OK, "subscribe: %s", err.message ? err.message : mcp_strerror(st));
  manager_touch(m, "mem://a");
  EXPECT_UPDATED("mem://a", 1);
  ck_assert_int_eq(mcp_manager_subscribe_resource(m, "s", "mem://b", NULL, NULL), MCP_OK);
  ck_assert_int_eq(mcp_manager_unsubscribe_resource(m, "s", "mem://b", NULL, NULL), MCP_OK);
  ck_assert_int_eq(mcp_manager_subscribe_resource(m, "nope", "mem://a", NULL, &err), MCP_ENOTFOUND);
  mcp_error_clear(&err);
  ck_assert_int_eq(mcp_manager_subscribe_resource(m, "s", "", NULL, NULL), MCP_EINVAL);
  int before = file_count(log_path, sent);
  ck_assert_int_gt(before, 0);
  /* Killed: started again, subscribed again on the new process. */
  pid_t pid = nth_pid(0);
  ck_assert_int_gt(pid, 0);
  ck_assert_int_eq(kill(pid, SIGKILL), 0);
  ck_assert(WAIT_UNTIL(nth_pid(1) > 0, WAIT_MS));
  ck_assert_msg(WAIT_UNTIL(file_count(log_path, sent) > before, WAIT_MS), "not subscribed again");
  manager_touch(m, "mem://a");
  EXPECT_UPDATED("mem://a", 2);
  manager_touch(m, "mem://b");
  manager_touch(m, "mem://a");
  EXPECT_UPDATED("mem://a", 3);
  ck_assert_int_eq(updated("mem://b"), 0);
  /* What the new process was asked for: mem://a only. */
  char *log = slurp(log_path);
  char *last = NULL;
  for (char *p = log; (p = strstr(p, sent)); p++) last = p;
  ck_assert_ptr_nonnull(last);
  char *eol = strchr(last, '\n');
  if (eol) *eol = '\0';
  ck_assert_msg(strstr(last, "mem://a") && !strstr(last, "mem://b"), "%s", last);
  free(log);
  mcp_manager_free(m);
  interop_rm_rf(dir);
}
END_TEST

static Suite *listen_suite(void) {
  Suite *s = suite_create("listen");
  TCase *tc = tcase_create("pure");
  tcase_add_test(tc, pure_parts);
  suite_add_tcase(s, tc);
  tc = tcase_create("live");
  tcase_set_timeout(tc, 180);
  tcase_add_test(tc, stdio_manager_list_changed_and_respawn);
  tcase_add_test(tc, v2_stdio_manager_list_changed);
  tcase_add_loop_test(tc, v2_http_manager_list_changed, 0, 2);
  tcase_add_test(tc, v2_h2c_listen_updates_and_drop);
  tcase_add_loop_test(tc, manager_subscriptions_survive_restart, 0, 2);
  tcase_add_test(tc, refused_listen_is_soft);
  tcase_add_test(tc, no_handler_no_listen);
  tcase_add_test(tc, ack_unknown_and_server_ends);
  tcase_add_test(tc, stdio_free_is_prompt_and_cancels);
  tcase_add_test(tc, http_drop_reopens_and_free_is_prompt);
  tcase_add_test(tc, resource_subscriptions_modern);
  tcase_add_test(tc, resource_subscriptions_legacy);
  tcase_add_test(tc, resource_subscriptions_refused);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  pthread_mutex_init(&S.mu, NULL);
  return run_suite(listen_suite());
}
