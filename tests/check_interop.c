/* SPDX-License-Identifier: MIT */
/*
 * check_interop.c: mcpconn against the official MCP reference server
 * (@modelcontextprotocol/server-everything, pinned in tests/interop) over
 * stdio.  Uses only the public API (mcpconn.h); json-c only to inspect the
 * results.
 *
 * The server must be installed: `npm ci --prefix tests/interop`.  When node
 * or the package is missing every test FAILS with that instruction; interop
 * is never skipped silently.  The server is found at
 * $MCP_INTEROP_DIR/node_modules/@modelcontextprotocol/server-everything
 * (make check sets MCP_INTEROP_DIR), or at $MCP_INTEROP_SERVER if set.
 *
 * No sleeps: notifications, progress and async results are collected under
 * a mutex and waited for on a condition variable with a deadline.
 */
#include "config.h"

#include <json-c/json.h>
#include <math.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_interop_util.h"
#include "check_util.h"
#include "mcpconn.h"

#define CONNECT_MS 60000 /* node's first start can be slow on a busy CI box */
#define CALL_MS 30000
#define WAIT_MS 30000

/* ---- locating node and the server ------------------------------------- */

static char node_path[4096];
static char server_entry[4096];

static bool is_executable(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0;
}

/* Finds node in PATH (what execvp would run) and the server's entry point
 * under $MCP_INTEROP_DIR; fails the test with instructions otherwise. */
static void locate_server(void) {
  const char *path = getenv("PATH");
  node_path[0] = '\0';
  if (path) {
    const char *p = path;
    while (*p && !node_path[0]) {
      const char *end = strchr(p, ':');
      size_t n = end ? (size_t)(end - p) : strlen(p);
      char cand[4096];
      snprintf(cand, sizeof(cand), "%.*s/node", (int)n, n ? p : ".");
      if (is_executable(cand)) snprintf(node_path, sizeof(node_path), "%s", cand);
      p = end ? end + 1 : p + n;
    }
  }
  ck_assert_msg(node_path[0] != '\0',
                "node was not found in PATH. The interop tests need Node.js "
                "(>= 18) and the pinned reference server: install nodejs, then "
                "run `npm ci --prefix tests/interop` in the source tree");

  /* MCP_INTEROP_SERVER names the entry script directly; .ci/run sets it
   * for make distcheck, whose unpacked tree has no node_modules. */
  const char *direct = getenv("MCP_INTEROP_SERVER");
  struct stat st;
  if (direct && *direct) {
    snprintf(server_entry, sizeof(server_entry), "%s", direct);
    ck_assert_msg(stat(server_entry, &st) == 0,
                  "MCP_INTEROP_SERVER=%s does not exist. Run `npm ci --prefix "
                  "tests/interop` in the source tree",
                  server_entry);
    return;
  }
  const char *dir = getenv("MCP_INTEROP_DIR");
  ck_assert_msg(dir && *dir, "MCP_INTEROP_DIR is not set: run the tests with `make check` "
                             "(it points at tests/interop in the source tree)");
  snprintf(server_entry, sizeof(server_entry),
           "%s/node_modules/@modelcontextprotocol/server-everything/dist/index.js", dir);
  ck_assert_msg(stat(server_entry, &st) == 0,
                "%s is missing: the MCP reference server is not installed. "
                "Run `npm ci --prefix tests/interop` in the source tree "
                "(needs network access to the npm registry)",
                server_entry);
}

/* ---- collecting notifications ------------------------------------------ */

#define MAX_NOTES 512

typedef struct note {
  char *method;
  char *params;
} note;

typedef struct collector {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  note notes[MAX_NOTES]; /* guarded by mu */
  size_t n;              /* guarded by mu */
  long dropped;          /* guarded by mu: notes past MAX_NOTES */
} collector;

static void cond_init_mono(pthread_cond_t *cv) {
  pthread_condattr_t a;
  pthread_condattr_init(&a);
  pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
  pthread_cond_init(cv, &a);
  pthread_condattr_destroy(&a);
}

static struct timespec deadline_ts(long ms) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  ts.tv_sec += ms / 1000;
  ts.tv_nsec += (ms % 1000) * 1000000L;
  if (ts.tv_nsec >= 1000000000L) {
    ts.tv_sec++;
    ts.tv_nsec -= 1000000000L;
  }
  return ts;
}

static void collector_init(collector *c) {
  memset(c, 0, sizeof(*c));
  pthread_mutex_init(&c->mu, NULL);
  cond_init_mono(&c->cv);
}

static void collector_destroy(collector *c) {
  for (size_t i = 0; i < c->n; i++) {
    free(c->notes[i].method);
    free(c->notes[i].params);
  }
  pthread_cond_destroy(&c->cv);
  pthread_mutex_destroy(&c->mu);
}

static void on_notification(void *user, const char *method, const char *params_json) {
  collector *c = user;
  pthread_mutex_lock(&c->mu);
  if (c->n < MAX_NOTES) {
    c->notes[c->n].method = strdup(method);
    c->notes[c->n].params = strdup(params_json ? params_json : "(null)");
    c->n++;
  } else {
    c->dropped++;
  }
  pthread_cond_broadcast(&c->cv);
  pthread_mutex_unlock(&c->mu);
}

/* True when |params| (JSON text) is an object whose string member |key|
 * contains |needle|.  Compares decoded strings: the wire may escape "/". */
static bool params_match(const char *params, const char *key, const char *needle) {
  if (!key) return true;
  json_object *j = json_tokener_parse(params), *v = NULL;
  bool ok = j && json_object_object_get_ex(j, key, &v) &&
            json_object_is_type(v, json_type_string) &&
            strstr(json_object_get_string(v), needle) != NULL;
  json_object_put(j);
  return ok;
}

/* Waits for a notification named |method| whose params member |key| (NULL:
 * any params) contains |needle|, seen at index >= |from|.  Returns its index
 * or -1. */
static long collector_wait(collector *c, const char *method, const char *key, const char *needle,
                           size_t from, long ms) {
  struct timespec ts = deadline_ts(ms);
  long found = -1;
  pthread_mutex_lock(&c->mu);
  for (;;) {
    for (size_t i = from; i < c->n && found < 0; i++) {
      if (strcmp(c->notes[i].method, method) == 0 && params_match(c->notes[i].params, key, needle))
        found = (long)i;
    }
    if (found >= 0) break;
    from = c->n;
    if (pthread_cond_timedwait(&c->cv, &c->mu, &ts) != 0) break;
  }
  pthread_mutex_unlock(&c->mu);
  return found;
}

static size_t collector_count(collector *c) {
  pthread_mutex_lock(&c->mu);
  size_t n = c->n;
  pthread_mutex_unlock(&c->mu);
  return n;
}

/* Prints what arrived, to explain a failed wait. */
static void collector_dump(collector *c) {
  pthread_mutex_lock(&c->mu);
  fprintf(stderr, "notifications received (%zu):\n", c->n);
  for (size_t i = 0; i < c->n; i++)
    fprintf(stderr, "  %s %s\n", c->notes[i].method, c->notes[i].params);
  pthread_mutex_unlock(&c->mu);
}

/* ---- server->client request handlers ----------------------------------- */

typedef struct handler_log {
  atomic_int roots;
  atomic_int sampling;
  atomic_int elicitation;
  char sampling_params[8192]; /* written before `sampling` is incremented */
} handler_log;

static mcp_status on_roots(void *user, const char *method, const char *params_json,
                           char **result_json, mcp_error *err) {
  handler_log *h = user;
  atomic_fetch_add(&h->roots, 1);
  *result_json = strdup("{\"roots\":[{\"uri\":\"file:///tmp/mcpconn-interop\","
                        "\"name\":\"mcpconn-interop-root\"}]}");
  return *result_json ? MCP_OK : MCP_ENOMEM;
}

static mcp_status on_sampling(void *user, const char *method, const char *params_json,
                              char **result_json, mcp_error *err) {
  handler_log *h = user;
  snprintf(h->sampling_params, sizeof(h->sampling_params), "%s", params_json ? params_json : "");
  atomic_fetch_add(&h->sampling, 1);
  *result_json = strdup("{\"role\":\"assistant\",\"content\":{\"type\":\"text\","
                        "\"text\":\"sampled by mcpconn\"},\"model\":\"mcpconn-test-model\","
                        "\"stopReason\":\"endTurn\"}");
  return *result_json ? MCP_OK : MCP_ENOMEM;
}

static mcp_status on_elicitation(void *user, const char *method, const char *params_json,
                                 char **result_json, mcp_error *err) {
  handler_log *h = user;
  atomic_fetch_add(&h->elicitation, 1);
  *result_json = strdup("{\"action\":\"decline\"}");
  return *result_json ? MCP_OK : MCP_ENOMEM;
}

/* ---- connecting -------------------------------------------------------- */

typedef struct fixture {
  mcp_client *client;
  collector notes;
  handler_log handlers;
} fixture;

static void log_to_stderr(void *user, mcp_log_level level, const char *msg) {
  if (level >= MCP_LOG_WARN) fprintf(stderr, "mcpconn[%d]: %s\n", level, msg);
}

/* Starts the reference server and connects; with |handlers| the client also
 * declares roots, sampling and elicitation. */
static void fixture_connect(fixture *f, bool handlers) {
  memset(f, 0, sizeof(*f));
  collector_init(&f->notes);
  locate_server();

  const char *argv[] = {node_path, server_entry, "stdio", NULL};
  mcp_client_options *o = mcp_client_options_new();
  ck_assert_ptr_nonnull(o);
  ck_assert_int_eq(mcp_client_options_set_stdio(o, argv), MCP_OK);
  ck_assert_int_eq(mcp_client_options_set_client_info(o, "mcpconn-interop", MCP_VERSION), MCP_OK);
  mcp_client_options_set_timeout_ms(o, CONNECT_MS);
  mcp_client_options_set_log(o, log_to_stderr, NULL);
  mcp_client_options_set_notification_handler(o, on_notification, &f->notes);
  if (handlers) {
    ck_assert_int_eq(
        mcp_client_options_set_request_handler(o, "roots/list", on_roots, &f->handlers), MCP_OK);
    ck_assert_int_eq(mcp_client_options_set_request_handler(o, "sampling/createMessage",
                                                            on_sampling, &f->handlers),
                     MCP_OK);
    ck_assert_int_eq(mcp_client_options_set_request_handler(o, "elicitation/create", on_elicitation,
                                                            &f->handlers),
                     MCP_OK);
  }

  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_client_connect(o, &f->client, &err);
  mcp_client_options_free(o);
  ck_assert_msg(st == MCP_OK, "connect to %s %s stdio: %s (%s)", node_path, server_entry,
                mcp_strerror(st), err.message ? err.message : "no message");
  mcp_error_clear(&err);
  ck_assert_ptr_nonnull(f->client);
}

static void fixture_free(fixture *f) {
  mcp_client_free(f->client);
  f->client = NULL;
  collector_destroy(&f->notes);
}

static mcp_call_options *call_opts(int64_t timeout_ms) {
  mcp_call_options *o = mcp_call_options_new();
  ck_assert_ptr_nonnull(o);
  mcp_call_options_set_timeout_ms(o, timeout_ms);
  return o;
}

/* Calls a tool that must succeed; returns the parsed CallToolResult. */
static json_object *call_tool_ok(mcp_client *c, const char *name, const char *args) {
  mcp_call_options *o = call_opts(CALL_MS);
  char *res = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_client_call_tool(c, name, args, o, &res, &err);
  mcp_call_options_free(o);
  ck_assert_msg(st == MCP_OK, "tools/call %s %s: %s (%s) result=%s", name, args ? args : "null",
                mcp_strerror(st), err.message ? err.message : "-", res ? res : "-");
  mcp_error_clear(&err);
  ck_assert_ptr_nonnull(res);
  json_object *j = json_tokener_parse(res);
  ck_assert_msg(j != NULL, "result is not JSON: %s", res);
  mcp_free(res);
  return j;
}

static const char *jstr(json_object *o, const char *key) {
  json_object *v = NULL;
  if (!o || !json_object_object_get_ex(o, key, &v)) return NULL;
  return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

/* The text of content[0] of a CallToolResult (or NULL). */
static const char *first_text(json_object *result) {
  json_object *content = NULL;
  if (!json_object_object_get_ex(result, "content", &content) ||
      !json_object_is_type(content, json_type_array) || json_object_array_length(content) < 1)
    return NULL;
  json_object *c0 = json_object_array_get_idx(content, 0);
  const char *type = jstr(c0, "type");
  if (!type || strcmp(type, "text") != 0) return NULL;
  return jstr(c0, "text");
}

/* Parses a JSON array returned by a list call and checks every element is
 * an object with |key|; returns it. */
static json_object *parse_list(const char *text, const char *key) {
  ck_assert_ptr_nonnull(text);
  json_object *arr = json_tokener_parse(text);
  ck_assert_msg(arr && json_object_is_type(arr, json_type_array),
                "list is not a JSON array: %.300s", text);
  for (size_t i = 0; i < json_object_array_length(arr); i++)
    ck_assert_ptr_nonnull(jstr(json_object_array_get_idx(arr, i), key));
  return arr;
}

static json_object *find_by(json_object *arr, const char *key, const char *value) {
  for (size_t i = 0; i < json_object_array_length(arr); i++) {
    json_object *it = json_object_array_get_idx(arr, i);
    const char *v = jstr(it, key);
    if (v && strcmp(v, value) == 0) return it;
  }
  return NULL;
}

static void assert_healthy(mcp_client *c) {
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_client_ping(c, NULL, &err);
  ck_assert_msg(st == MCP_OK, "ping: %s (%s)", mcp_strerror(st), err.message ? err.message : "-");
  mcp_error_clear(&err);
  mcp_client_stats s;
  mcp_client_get_stats(c, &s);
  ck_assert_uint_eq(s.unknown_responses, 0);
  ck_assert_uint_eq(s.protocol_errors, 0);
  ck_assert_uint_eq(s.oversize_messages, 0);
}

/* ---- tests ------------------------------------------------------------- */

START_TEST(test_connect_and_ping) {
  fixture f;
  fixture_connect(&f, false);
  const char *pv = mcp_client_protocol_version(f.client);
  ck_assert_ptr_nonnull(pv);
  ck_assert_msg(strcmp(pv, "2025-11-25") == 0 || strcmp(pv, "2025-06-18") == 0 ||
                    strcmp(pv, "2025-03-26") == 0,
                "unexpected protocol version %s", pv);
  const char *info = mcp_client_server_info(f.client);
  ck_assert_ptr_nonnull(info);
  json_object *j = json_tokener_parse(info);
  ck_assert_msg(j != NULL, "server info is not JSON: %s", info);
  json_object *si = NULL, *caps = NULL;
  ck_assert(json_object_object_get_ex(j, "serverInfo", &si));
  ck_assert_str_eq(jstr(si, "name"), "mcp-servers/everything");
  ck_assert(json_object_object_get_ex(j, "capabilities", &caps));
  ck_assert(json_object_object_get_ex(caps, "tools", NULL));
  ck_assert(json_object_object_get_ex(caps, "resources", NULL));
  ck_assert(json_object_object_get_ex(caps, "prompts", NULL));
  json_object_put(j);
  ck_assert(mcp_client_is_open(f.client));
  for (int i = 0; i < 5; i++) assert_healthy(f.client);
  mcp_client_stats s;
  mcp_client_get_stats(f.client, &s);
  ck_assert_uint_ge(s.requests_sent, 6); /* initialize + 5 pings */
  ck_assert_uint_ge(s.responses_received, 6);
  fixture_free(&f);
}
END_TEST

START_TEST(test_list_tools) {
  fixture f;
  fixture_connect(&f, false);
  char *tools = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_client_list_tools(f.client, NULL, &tools, &err);
  ck_assert_msg(st == MCP_OK, "tools/list: %s (%s)", mcp_strerror(st),
                err.message ? err.message : "-");
  json_object *arr = parse_list(tools, "name");
  /* Every always-registered tool of this server version (all pages). */
  static const char *const want[] = {"echo",
                                     "get-annotated-message",
                                     "get-env",
                                     "get-resource-links",
                                     "get-resource-reference",
                                     "get-structured-content",
                                     "get-sum",
                                     "get-tiny-image",
                                     "gzip-file-as-resource",
                                     "toggle-simulated-logging",
                                     "toggle-subscriber-updates",
                                     "trigger-long-running-operation"};
  for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
    ck_assert_msg(find_by(arr, "name", want[i]) != NULL, "tool %s missing from %.500s", want[i],
                  tools);
  json_object *echo = find_by(arr, "name", "echo"), *schema = NULL;
  ck_assert(json_object_object_get_ex(echo, "inputSchema", &schema));
  ck_assert_str_eq(jstr(schema, "type"), "object");
  /* Without the client capabilities the conditional tools stay hidden. */
  ck_assert_ptr_null(find_by(arr, "name", "trigger-sampling-request"));
  json_object_put(arr);
  mcp_free(tools);
  assert_healthy(f.client);
  fixture_free(&f);
}
END_TEST

START_TEST(test_call_echo) {
  fixture f;
  fixture_connect(&f, false);
  json_object *r = call_tool_ok(
      f.client, "echo", "{\"message\":\"hello from mcpconn: \\\"quotes\\\", \\\\ and \xc3\xa9\"}");
  ck_assert_str_eq(first_text(r), "Echo: hello from mcpconn: \"quotes\", \\ and \xc3\xa9");
  json_object_put(r);
  assert_healthy(f.client);
  fixture_free(&f);
}
END_TEST

START_TEST(test_call_get_sum) {
  fixture f;
  fixture_connect(&f, false);
  json_object *r = call_tool_ok(f.client, "get-sum", "{\"a\":2,\"b\":40.5}");
  const char *text = first_text(r);
  ck_assert_ptr_nonnull(text);
  const char *is = strstr(text, " is ");
  ck_assert_msg(is != NULL, "unexpected get-sum text: %s", text);
  ck_assert_double_eq_tol(strtod(is + 4, NULL), 42.5, 1e-9);
  json_object_put(r);
  fixture_free(&f);
}
END_TEST

START_TEST(test_structured_content) {
  fixture f;
  fixture_connect(&f, false);
  json_object *r = call_tool_ok(f.client, "get-structured-content", "{\"location\":\"New York\"}");
  json_object *sc = NULL, *temp = NULL;
  ck_assert(json_object_object_get_ex(r, "structuredContent", &sc));
  ck_assert(json_object_object_get_ex(sc, "temperature", &temp));
  ck_assert(json_object_is_type(temp, json_type_double) ||
            json_object_is_type(temp, json_type_int));
  json_object_put(r);
  fixture_free(&f);
}
END_TEST

START_TEST(test_tool_errors) {
  fixture f;
  fixture_connect(&f, false);
  mcp_error err = MCP_ERROR_INIT;
  char *res = NULL;
  /* An unknown tool: a JSON-RPC error or an isError result, never a hang. */
  mcp_status st = mcp_client_call_tool(f.client, "no-such-tool", "{}", NULL, &res, &err);
  ck_assert_msg(st == MCP_ERPC || st == MCP_ETOOLERROR, "unknown tool gave %s", mcp_strerror(st));
  if (st == MCP_ERPC) {
    ck_assert_ptr_nonnull(err.message);
    ck_assert_int_ne(err.rpc_code, 0);
  } else {
    ck_assert_ptr_nonnull(res);
  }
  mcp_free(res);
  res = NULL;
  mcp_error_clear(&err);
  /* Arguments that fail the tool's schema. */
  st = mcp_client_call_tool(f.client, "echo", "{\"message\":42}", NULL, &res, &err);
  ck_assert_msg(st == MCP_ERPC || st == MCP_ETOOLERROR, "bad arguments gave %s", mcp_strerror(st));
  mcp_free(res);
  mcp_error_clear(&err);
  /* An unknown method. */
  st = mcp_client_request(f.client, "no/such/method", "{}", NULL, &res, &err);
  ck_assert_int_eq(st, MCP_ERPC);
  ck_assert_int_eq(err.rpc_code, -32601);
  ck_assert_ptr_null(res);
  mcp_error_clear(&err);
  assert_healthy(f.client);
  fixture_free(&f);
}
END_TEST

/* ---- progress, cancel, timeouts ---------------------------------------- */

typedef struct progress_log {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int n;                     /* guarded by mu */
  double last;               /* guarded by mu */
  double total;              /* guarded by mu */
  bool decreasing;           /* guarded by mu */
  mcp_cancel *fire_on_first; /* fired from the first callback, if set */
} progress_log;

static void progress_init(progress_log *p) {
  memset(p, 0, sizeof(*p));
  pthread_mutex_init(&p->mu, NULL);
  cond_init_mono(&p->cv);
  p->last = -1;
}

static void progress_destroy(progress_log *p) {
  pthread_cond_destroy(&p->cv);
  pthread_mutex_destroy(&p->mu);
}

static void on_progress(void *user, double progress, double total, const char *message) {
  progress_log *p = user;
  pthread_mutex_lock(&p->mu);
  if (progress <= p->last) p->decreasing = true;
  p->last = progress;
  p->total = total;
  p->n++;
  bool first = p->n == 1;
  pthread_cond_broadcast(&p->cv);
  pthread_mutex_unlock(&p->mu);
  if (first && p->fire_on_first) mcp_cancel_fire(p->fire_on_first);
}

START_TEST(test_progress) {
  fixture f;
  fixture_connect(&f, false);
  progress_log p;
  progress_init(&p);
  mcp_call_options *o = call_opts(CALL_MS);
  mcp_call_options_set_progress(o, on_progress, &p);
  char *res = NULL;
  mcp_error err = MCP_ERROR_INIT;
  /* Three steps 0.5 s apart: the response follows the last progress
   * notification at once. */
  mcp_status st = mcp_client_call_tool(f.client, "trigger-long-running-operation",
                                       "{\"duration\":1.5,\"steps\":3}", o, &res, &err);
  mcp_call_options_free(o);
  ck_assert_msg(st == MCP_OK, "long-running operation: %s (%s)", mcp_strerror(st),
                err.message ? err.message : "-");
  ck_assert_ptr_nonnull(strstr(res, "Long running operation completed"));
  mcp_free(res);
  /* The client promises no progress callback after the call returned, so a
   * notification still queued when the response completes the call may be
   * dropped (the last one usually is under sanitizers): at least the first
   * one, sent a second before the response, must have run. */
  pthread_mutex_lock(&p.mu);
  int n = p.n;
  double last = p.last, total = p.total;
  bool decreasing = p.decreasing;
  pthread_mutex_unlock(&p.mu);
  ck_assert_msg(n >= 1 && n <= 3, "%d progress callbacks", n);
  ck_assert(!decreasing);
  ck_assert_double_ge(last, 1);
  ck_assert_double_le(last, 3);
  ck_assert_double_eq_tol(total, 3, 1e-9);
  assert_healthy(f.client);
  fixture_free(&f);
  progress_destroy(&p);
}
END_TEST

START_TEST(test_reset_timeout_on_progress) {
  fixture f;
  fixture_connect(&f, false);
  /* 2.4 s of work with progress every 0.6 s against a 1.5 s timeout that
   * each progress restarts. */
  mcp_call_options *o = call_opts(1500);
  mcp_call_options_set_reset_timeout_on_progress(o, true, CALL_MS);
  char *res = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_client_call_tool(f.client, "trigger-long-running-operation",
                                       "{\"duration\":2.4,\"steps\":4}", o, &res, &err);
  mcp_call_options_free(o);
  ck_assert_msg(st == MCP_OK, "with reset-on-progress: %s (%s)", mcp_strerror(st),
                err.message ? err.message : "-");
  mcp_free(res);
  fixture_free(&f);
}
END_TEST

START_TEST(test_timeout) {
  fixture f;
  fixture_connect(&f, false);
  mcp_call_options *o = call_opts(300);
  char *res = NULL;
  mcp_error err = MCP_ERROR_INIT;
  long long t0 = test_now_ms();
  mcp_status st = mcp_client_call_tool(f.client, "trigger-long-running-operation",
                                       "{\"duration\":3,\"steps\":1}", o, &res, &err);
  long long took = test_now_ms() - t0;
  mcp_call_options_free(o);
  ck_assert_msg(st == MCP_ETIMEDOUT, "expected a timeout, got %s", mcp_strerror(st));
  ck_assert_ptr_null(res);
  ck_assert_int_lt(took, 2500);
  mcp_error_clear(&err);
  /* The connection survives the abandoned request. */
  assert_healthy(f.client);
  json_object *r = call_tool_ok(f.client, "echo", "{\"message\":\"after\"}");
  ck_assert_str_eq(first_text(r), "Echo: after");
  json_object_put(r);
  fixture_free(&f);
}
END_TEST

START_TEST(test_cancel_on_progress) {
  fixture f;
  fixture_connect(&f, false);
  progress_log p;
  progress_init(&p);
  mcp_cancel *tok = mcp_cancel_new();
  ck_assert_ptr_nonnull(tok);
  p.fire_on_first = tok;
  mcp_call_options *o = call_opts(CALL_MS);
  mcp_call_options_set_cancel(o, tok);
  mcp_call_options_set_progress(o, on_progress, &p);
  char *res = NULL;
  mcp_error err = MCP_ERROR_INIT;
  long long t0 = test_now_ms();
  mcp_status st = mcp_client_call_tool(f.client, "trigger-long-running-operation",
                                       "{\"duration\":8,\"steps\":8}", o, &res, &err);
  long long took = test_now_ms() - t0;
  mcp_call_options_free(o);
  ck_assert_msg(st == MCP_ECANCELLED, "expected cancel, got %s (%s)", mcp_strerror(st),
                err.message ? err.message : "-");
  ck_assert(mcp_cancel_is_fired(tok));
  ck_assert_int_lt(took, 6000);
  mcp_error_clear(&err);
  assert_healthy(f.client);
  /* Free the client before the progress log: a late progress notification
   * for the cancelled request must never reach a freed callback. */
  fixture_free(&f);
  mcp_cancel_unref(tok);
  progress_destroy(&p);
}
END_TEST

/* ---- notifications ----------------------------------------------------- */

START_TEST(test_logging_notifications) {
  fixture f;
  fixture_connect(&f, false);
  char *res = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(
      mcp_client_request(f.client, "logging/setLevel", "{\"level\":\"debug\"}", NULL, &res, &err),
      MCP_OK);
  mcp_free(res);
  size_t from = collector_count(&f.notes);
  json_object *r = call_tool_ok(f.client, "toggle-simulated-logging", "{}");
  ck_assert_ptr_nonnull(strstr(first_text(r), "Started"));
  json_object_put(r);
  /* The server sends one message at once, then one every 5 s. */
  long idx = collector_wait(&f.notes, "notifications/message", "level", "", from, WAIT_MS);
  if (idx < 0) collector_dump(&f.notes);
  ck_assert_int_ge(idx, 0);
  pthread_mutex_lock(&f.notes.mu);
  json_object *params = json_tokener_parse(f.notes.notes[idx].params);
  pthread_mutex_unlock(&f.notes.mu);
  ck_assert_ptr_nonnull(params);
  ck_assert_ptr_nonnull(jstr(params, "level"));
  ck_assert_ptr_nonnull(jstr(params, "data"));
  json_object_put(params);
  /* Stop it, so the server exits as soon as its stdin closes. */
  r = call_tool_ok(f.client, "toggle-simulated-logging", "{}");
  ck_assert_ptr_nonnull(strstr(first_text(r), "Stopped"));
  json_object_put(r);
  mcp_client_stats s;
  mcp_client_get_stats(f.client, &s);
  ck_assert_uint_ge(s.notifications_received, 1);
  fixture_free(&f);
}
END_TEST

START_TEST(test_resource_subscription) {
  fixture f;
  fixture_connect(&f, false);
  const char *uri = "demo://resource/dynamic/text/1";
  char *res = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_client_request(f.client, "resources/subscribe",
                                     "{\"uri\":\"demo://resource/dynamic/text/1\"}", NULL, &res,
                                     &err);
  ck_assert_msg(st == MCP_OK, "resources/subscribe: %s (%s)", mcp_strerror(st),
                err.message ? err.message : "-");
  mcp_free(res);
  size_t from = collector_count(&f.notes);
  json_object *r = call_tool_ok(f.client, "toggle-subscriber-updates", "{}");
  json_object_put(r);
  long idx = collector_wait(&f.notes, "notifications/resources/updated", "uri", uri, from, WAIT_MS);
  if (idx < 0) collector_dump(&f.notes);
  ck_assert_int_ge(idx, 0);
  r = call_tool_ok(f.client, "toggle-subscriber-updates", "{}");
  json_object_put(r);
  fixture_free(&f);
}
END_TEST

/* ---- resources and prompts --------------------------------------------- */

START_TEST(test_resources) {
  fixture f;
  fixture_connect(&f, false);
  char *list = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_client_list_resources(f.client, NULL, &list, &err);
  ck_assert_msg(st == MCP_OK, "resources/list: %s (%s)", mcp_strerror(st),
                err.message ? err.message : "-");
  json_object *arr = parse_list(list, "uri");
  ck_assert_int_ge(json_object_array_length(arr), 1);
  const char *doc = "demo://resource/static/document/architecture.md";
  ck_assert_msg(find_by(arr, "uri", doc) != NULL, "%s missing from %.500s", doc, list);
  json_object_put(arr);
  mcp_free(list);

  /* Read the first listed resource and a templated one. */
  char *res = NULL;
  st = mcp_client_read_resource(f.client, doc, NULL, &res, &err);
  ck_assert_msg(st == MCP_OK, "resources/read: %s (%s)", mcp_strerror(st),
                err.message ? err.message : "-");
  json_object *j = json_tokener_parse(res), *contents = NULL;
  ck_assert(json_object_object_get_ex(j, "contents", &contents));
  ck_assert_int_ge(json_object_array_length(contents), 1);
  json_object *c0 = json_object_array_get_idx(contents, 0);
  ck_assert_str_eq(jstr(c0, "uri"), doc);
  ck_assert_str_eq(jstr(c0, "mimeType"), "text/markdown");
  ck_assert_ptr_nonnull(jstr(c0, "text"));
  ck_assert_int_gt(strlen(jstr(c0, "text")), 100);
  json_object_put(j);
  mcp_free(res);

  char *templates = NULL;
  st = mcp_client_list_resource_templates(f.client, NULL, &templates, &err);
  ck_assert_msg(st == MCP_OK, "resources/templates/list: %s (%s)", mcp_strerror(st),
                err.message ? err.message : "-");
  arr = parse_list(templates, "uriTemplate");
  ck_assert_int_ge(json_object_array_length(arr), 1);
  json_object_put(arr);
  mcp_free(templates);

  res = NULL;
  st = mcp_client_read_resource(f.client, "demo://resource/dynamic/text/7", NULL, &res, &err);
  ck_assert_msg(st == MCP_OK, "read dynamic text: %s (%s)", mcp_strerror(st),
                err.message ? err.message : "-");
  j = json_tokener_parse(res);
  ck_assert(json_object_object_get_ex(j, "contents", &contents));
  ck_assert_str_eq(jstr(json_object_array_get_idx(contents, 0), "uri"),
                   "demo://resource/dynamic/text/7");
  json_object_put(j);
  mcp_free(res);
  assert_healthy(f.client);
  fixture_free(&f);
}
END_TEST

START_TEST(test_prompts) {
  fixture f;
  fixture_connect(&f, false);
  char *list = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_client_list_prompts(f.client, NULL, &list, &err);
  ck_assert_msg(st == MCP_OK, "prompts/list: %s (%s)", mcp_strerror(st),
                err.message ? err.message : "-");
  json_object *arr = parse_list(list, "name");
  ck_assert_ptr_nonnull(find_by(arr, "name", "simple-prompt"));
  ck_assert_ptr_nonnull(find_by(arr, "name", "args-prompt"));
  json_object_put(arr);
  mcp_free(list);

  char *res = NULL;
  st = mcp_client_get_prompt(f.client, "args-prompt", "{\"city\":\"Paris\",\"state\":\"Texas\"}",
                             NULL, &res, &err);
  ck_assert_msg(st == MCP_OK, "prompts/get: %s (%s)", mcp_strerror(st),
                err.message ? err.message : "-");
  json_object *j = json_tokener_parse(res), *msgs = NULL, *content = NULL;
  ck_assert(json_object_object_get_ex(j, "messages", &msgs));
  json_object *m0 = json_object_array_get_idx(msgs, 0);
  ck_assert_str_eq(jstr(m0, "role"), "user");
  ck_assert(json_object_object_get_ex(m0, "content", &content));
  ck_assert_str_eq(jstr(content, "text"), "What's weather in Paris, Texas?");
  json_object_put(j);
  mcp_free(res);

  res = NULL;
  st = mcp_client_get_prompt(f.client, "simple-prompt", NULL, NULL, &res, &err);
  ck_assert_msg(st == MCP_OK, "prompts/get simple: %s (%s)", mcp_strerror(st),
                err.message ? err.message : "-");
  mcp_free(res);
  fixture_free(&f);
}
END_TEST

/* ---- server->client requests ------------------------------------------- */

START_TEST(test_roots) {
  fixture f;
  fixture_connect(&f, true);
  /* The server asks for roots shortly after initialized and reports what it
   * got with a log message. */
  long idx = collector_wait(&f.notes, "notifications/message", "data", "Roots updated", 0, WAIT_MS);
  if (idx < 0) collector_dump(&f.notes);
  ck_assert_int_ge(idx, 0);
  ck_assert_int_ge(atomic_load(&f.handlers.roots), 1);
  json_object *r = call_tool_ok(f.client, "get-roots-list", "{}");
  ck_assert_ptr_nonnull(strstr(first_text(r), "file:///tmp/mcpconn-interop"));
  json_object_put(r);
  mcp_client_stats s;
  mcp_client_get_stats(f.client, &s);
  ck_assert_uint_ge(s.server_requests, 1);
  fixture_free(&f);
}
END_TEST

START_TEST(test_sampling_and_elicitation) {
  fixture f;
  fixture_connect(&f, true);
  json_object *r = call_tool_ok(f.client, "trigger-sampling-request",
                                "{\"prompt\":\"say hi\",\"maxTokens\":5}");
  ck_assert_int_eq(atomic_load(&f.handlers.sampling), 1);
  ck_assert_ptr_nonnull(strstr(f.handlers.sampling_params, "say hi"));
  ck_assert_ptr_nonnull(strstr(first_text(r), "sampled by mcpconn"));
  json_object_put(r);

  r = call_tool_ok(f.client, "trigger-elicitation-request", "{}");
  ck_assert_int_eq(atomic_load(&f.handlers.elicitation), 1);
  ck_assert_ptr_nonnull(strstr(first_text(r), "declined"));
  json_object_put(r);
  assert_healthy(f.client);
  fixture_free(&f);
}
END_TEST

/* ---- concurrency ------------------------------------------------------- */

#define CONC_THREADS 4
#define CONC_CALLS 15

typedef struct conc_arg {
  mcp_client *c;
  int id;
  int bad;
} conc_arg;

static void *conc_main(void *p) {
  conc_arg *a = p;
  for (int i = 0; i < CONC_CALLS; i++) {
    char args[128], want[128];
    snprintf(args, sizeof(args), "{\"message\":\"t%d-%d\"}", a->id, i);
    snprintf(want, sizeof(want), "Echo: t%d-%d", a->id, i);
    char *res = NULL;
    if (mcp_client_call_tool(a->c, "echo", args, NULL, &res, NULL) != MCP_OK) {
      a->bad++;
      continue;
    }
    json_object *j = json_tokener_parse(res);
    const char *t = j ? first_text(j) : NULL;
    if (!t || strcmp(t, want) != 0) a->bad++;
    json_object_put(j);
    mcp_free(res);
  }
  return NULL;
}

START_TEST(test_concurrent_calls) {
  fixture f;
  fixture_connect(&f, false);
  pthread_t th[CONC_THREADS];
  conc_arg a[CONC_THREADS];
  for (int i = 0; i < CONC_THREADS; i++) {
    a[i] = (conc_arg){f.client, i, 0};
    ck_assert_int_eq(pthread_create(&th[i], NULL, conc_main, &a[i]), 0);
  }
  for (int i = 0; i < CONC_THREADS; i++) {
    pthread_join(th[i], NULL);
    ck_assert_int_eq(a[i].bad, 0);
  }
  assert_healthy(f.client);
  fixture_free(&f);
}
END_TEST

typedef struct async_result {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int calls;         /* guarded by mu */
  mcp_status status; /* guarded by mu */
  char *result;      /* guarded by mu */
} async_result;

static void on_result(void *user, mcp_status status, const char *result_json,
                      const mcp_error *err) {
  async_result *a = user;
  pthread_mutex_lock(&a->mu);
  a->calls++;
  a->status = status;
  free(a->result);
  a->result = result_json ? strdup(result_json) : NULL;
  pthread_cond_broadcast(&a->cv);
  pthread_mutex_unlock(&a->mu);
}

START_TEST(test_async_call) {
  fixture f;
  fixture_connect(&f, false);
  async_result a;
  memset(&a, 0, sizeof(a));
  pthread_mutex_init(&a.mu, NULL);
  cond_init_mono(&a.cv);
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_client_call_tool_async(f.client, "get-sum", "{\"a\":1,\"b\":2}", NULL,
                                             on_result, &a, &err);
  ck_assert_msg(st == MCP_OK, "call_tool_async: %s", mcp_strerror(st));
  struct timespec ts = deadline_ts(WAIT_MS);
  pthread_mutex_lock(&a.mu);
  while (a.calls == 0 && pthread_cond_timedwait(&a.cv, &a.mu, &ts) == 0) {
  }
  int calls = a.calls;
  mcp_status got = a.status;
  char *result = a.result;
  a.result = NULL;
  pthread_mutex_unlock(&a.mu);
  ck_assert_int_eq(calls, 1);
  ck_assert_int_eq(got, MCP_OK);
  ck_assert_ptr_nonnull(result);
  ck_assert_ptr_nonnull(strstr(result, "is 3"));
  free(result);
  fixture_free(&f);
  pthread_mutex_lock(&a.mu);
  ck_assert_int_eq(a.calls, 1); /* exactly once, also after free */
  pthread_mutex_unlock(&a.mu);
  pthread_cond_destroy(&a.cv);
  pthread_mutex_destroy(&a.mu);
}
END_TEST

/* ---- server-filesystem and server-memory -------------------------------- */

static char fs_root_uri[1200]; /* file://<dir>, answered by on_fs_roots */

static mcp_status on_fs_roots(void *user, const char *method, const char *params_json,
                              char **result_json, mcp_error *err) {
  handler_log *h = user;
  atomic_fetch_add(&h->roots, 1);
  json_object *r = json_object_new_object(), *arr = json_object_new_array(),
              *root = json_object_new_object();
  json_object_object_add(root, "uri", json_object_new_string(fs_root_uri));
  json_object_object_add(root, "name", json_object_new_string("scratch"));
  json_object_array_add(arr, root);
  json_object_object_add(r, "roots", arr);
  *result_json = strdup(json_object_to_json_string_ext(r, JSON_C_TO_STRING_PLAIN));
  json_object_put(r);
  return *result_json ? MCP_OK : MCP_ENOMEM;
}

/* Connects over stdio to `node <entry> [arg]`, with |env| NAME=VALUE set and
 * a roots/list handler when |roots| is not NULL. */
static mcp_client *connect_ref(const char *entry, const char *arg, const char *env_name,
                               const char *env_value, handler_log *roots) {
  locate_server();
  const char *argv[] = {node_path, entry, arg, NULL};
  mcp_client_options *o = mcp_client_options_new();
  ck_assert_int_eq(mcp_client_options_set_stdio(o, argv), MCP_OK);
  ck_assert_int_eq(mcp_client_options_set_client_info(o, "mcpconn-interop", MCP_VERSION), MCP_OK);
  mcp_client_options_set_timeout_ms(o, CONNECT_MS);
  mcp_client_options_set_log(o, log_to_stderr, NULL);
  if (env_name) ck_assert_int_eq(mcp_client_options_set_env(o, env_name, env_value), MCP_OK);
  if (roots)
    ck_assert_int_eq(mcp_client_options_set_request_handler(o, "roots/list", on_fs_roots, roots),
                     MCP_OK);
  mcp_client *c = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_client_connect(o, &c, &err);
  mcp_client_options_free(o);
  ck_assert_msg(st == MCP_OK, "connect to %s: %s (%s)", entry, mcp_strerror(st),
                err.message ? err.message : "-");
  mcp_error_clear(&err);
  return c;
}

/* Builds {"k1": v1, ...} from string pairs (NULL-terminated) as JSON text. */
static char *args_of(const char *k, ...) {
  json_object *o = json_object_new_object();
  va_list ap;
  va_start(ap, k);
  for (const char *key = k; key; key = va_arg(ap, const char *))
    json_object_object_add(o, key, json_object_new_string(va_arg(ap, const char *)));
  va_end(ap);
  char *s = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
  json_object_put(o);
  return s;
}

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  static char buf[65536];
  size_t n = fread(buf, 1, sizeof(buf) - 1, f);
  fclose(f);
  buf[n] = '\0';
  return strdup(buf);
}

static bool is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Calls |tool| with |args| (freed) and returns its first text (a copy). */
static char *fs_call(mcp_client *c, const char *tool, char *args) {
  json_object *r = call_tool_ok(c, tool, args);
  free(args);
  const char *t = first_text(r);
  ck_assert_msg(t != NULL, "%s: no text in %s", tool, json_object_to_json_string(r));
  char *copy = strdup(t);
  json_object_put(r);
  return copy;
}

START_TEST(test_filesystem) {
  char dir[1024], path[1200], sub[1200], moved[1200], outside[1200];
  interop_mkdtemp(dir, sizeof(dir), "check_interop_fs");
  mcp_client *c = connect_ref(interop_package("server-filesystem"), dir, NULL, NULL, NULL);

  char *tools = NULL;
  ck_assert_int_eq(mcp_client_list_tools(c, NULL, &tools, NULL), MCP_OK);
  for (const char *const *n =
           (const char *const[]){"read_text_file", "write_file", "edit_file", "create_directory",
                                 "list_directory", "move_file", "get_file_info", NULL};
       *n; n++)
    ck_assert_msg(interop_list_has(tools, "name", *n), "%s missing from %.300s", *n, tools);
  mcp_free(tools);

  /* write_file: the bytes land on disk. */
  snprintf(path, sizeof(path), "%s/notes.txt", dir);
  char *t = fs_call(c, "write_file",
                    args_of("path", path, "content", "line one\nline two\n", NULL));
  ck_assert_ptr_nonnull(strstr(t, "Successfully wrote"));
  free(t);
  char *disk = read_file(path);
  ck_assert_ptr_nonnull(disk);
  ck_assert_str_eq(disk, "line one\nline two\n");
  free(disk);

  /* read_text_file reads them back. */
  t = fs_call(c, "read_text_file", args_of("path", path, NULL));
  ck_assert_str_eq(t, "line one\nline two\n");
  free(t);

  /* edit_file rewrites one line in place. */
  json_object *args = json_object_new_object(), *edits = json_object_new_array(),
              *e = json_object_new_object();
  json_object_object_add(args, "path", json_object_new_string(path));
  json_object_object_add(e, "oldText", json_object_new_string("line two"));
  json_object_object_add(e, "newText", json_object_new_string("line 2"));
  json_object_array_add(edits, e);
  json_object_object_add(args, "edits", edits);
  json_object *r = call_tool_ok(c, "edit_file", json_object_to_json_string(args));
  json_object_put(args);
  json_object_put(r);
  disk = read_file(path);
  ck_assert_str_eq(disk, "line one\nline 2\n");
  free(disk);

  /* create_directory makes parents; move_file moves the file into it. */
  snprintf(sub, sizeof(sub), "%s/sub/deeper", dir);
  t = fs_call(c, "create_directory", args_of("path", sub, NULL));
  free(t);
  ck_assert(is_dir(sub));
  snprintf(moved, sizeof(moved), "%s/sub/notes.txt", dir);
  t = fs_call(c, "move_file", args_of("source", path, "destination", moved, NULL));
  free(t);
  ck_assert_int_ne(access(path, F_OK), 0);
  disk = read_file(moved);
  ck_assert_str_eq(disk, "line one\nline 2\n");
  free(disk);

  char subdir[1200];
  snprintf(subdir, sizeof(subdir), "%s/sub", dir);
  t = fs_call(c, "list_directory", args_of("path", subdir, NULL));
  ck_assert_msg(strstr(t, "[DIR] deeper") && strstr(t, "[FILE] notes.txt"), "listing: %s", t);
  free(t);

  /* Outside the allowed directory: a tool error, and nothing written. */
  snprintf(outside, sizeof(outside), "%s-outside.txt", dir);
  char *a = args_of("path", outside, "content", "nope", NULL);
  char *res = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_client_call_tool(c, "write_file", a, NULL, &res, &err);
  free(a);
  ck_assert_msg(st == MCP_ETOOLERROR, "write outside: %s (%s)", mcp_strerror(st),
                err.message ? err.message : "-");
  ck_assert_ptr_nonnull(strstr(err.message, "denied"));
  mcp_error_clear(&err);
  mcp_free(res);
  ck_assert_int_ne(access(outside, F_OK), 0);

  assert_healthy(c);
  mcp_client_free(c);
  interop_rm_rf(dir);
}
END_TEST

/* Started with no directory, the server takes its allowed directories from
 * the client's roots (roots/list, asked after initialized). */
START_TEST(test_filesystem_roots) {
  char dir[1024], path[1200];
  interop_mkdtemp(dir, sizeof(dir), "check_interop_fsroots");
  snprintf(fs_root_uri, sizeof(fs_root_uri), "file://%s", dir);
  handler_log h;
  memset(&h, 0, sizeof(h));
  mcp_client *c = connect_ref(interop_package("server-filesystem"), NULL, NULL, NULL, &h);
  /* The server applies the roots asynchronously after initialized: ask it
   * (each try is a round trip, not a sleep) until it lists the directory. */
  bool listed = false;
  for (int i = 0; i < 500 && !listed; i++) {
    json_object *r = call_tool_ok(c, "list_allowed_directories", "{}");
    const char *t = first_text(r);
    listed = t && strstr(t, dir) != NULL;
    json_object_put(r);
  }
  ck_assert_msg(listed, "the server never took %s from roots/list", dir);
  ck_assert_int_ge(atomic_load(&h.roots), 1);
  snprintf(path, sizeof(path), "%s/from-roots.txt", dir);
  char *t = fs_call(c, "write_file", args_of("path", path, "content", "via roots", NULL));
  free(t);
  char *disk = read_file(path);
  ck_assert_ptr_nonnull(disk);
  ck_assert_str_eq(disk, "via roots");
  free(disk);
  mcp_client_free(c);
  interop_rm_rf(dir);
}
END_TEST

/* The graph of server-memory, from read_graph's structuredContent. */
static json_object *read_graph(mcp_client *c) {
  json_object *r = call_tool_ok(c, "read_graph", "{}"), *g = NULL;
  ck_assert_msg(json_object_object_get_ex(r, "structuredContent", &g), "read_graph: %s",
                json_object_to_json_string(r));
  json_object_get(g);
  json_object_put(r);
  return g;
}

static json_object *graph_entity(json_object *g, const char *name) {
  json_object *ents = NULL;
  ck_assert(json_object_object_get_ex(g, "entities", &ents));
  for (size_t i = 0; i < json_object_array_length(ents); i++) {
    json_object *e = json_object_array_get_idx(ents, i);
    if (strcmp(jstr(e, "name"), name) == 0) return e;
  }
  return NULL;
}

START_TEST(test_memory) {
  char dir[1024], file[1200];
  interop_mkdtemp(dir, sizeof(dir), "check_interop_memory");
  snprintf(file, sizeof(file), "%s/memory.jsonl", dir);
  mcp_client *c = connect_ref(interop_package("server-memory"), NULL, "MEMORY_FILE_PATH", file,
                              NULL);
  char *tools = NULL;
  ck_assert_int_eq(mcp_client_list_tools(c, NULL, &tools, NULL), MCP_OK);
  ck_assert(interop_list_has(tools, "name", "create_entities"));
  ck_assert(interop_list_has(tools, "name", "read_graph"));
  mcp_free(tools);

  json_object *r = call_tool_ok(
      c, "create_entities",
      "{\"entities\":[{\"name\":\"mcpconn\",\"entityType\":\"library\",\"observations\":"
      "[\"written in C\"]},{\"name\":\"nghttp2\",\"entityType\":\"library\","
      "\"observations\":[\"speaks HTTP/2\"]}]}");
  json_object_put(r);
  r = call_tool_ok(c, "create_relations",
                   "{\"relations\":[{\"from\":\"mcpconn\",\"to\":\"nghttp2\","
                   "\"relationType\":\"uses\"}]}");
  json_object_put(r);
  r = call_tool_ok(c, "add_observations",
                   "{\"observations\":[{\"entityName\":\"mcpconn\",\"contents\":"
                   "[\"talks to MCP servers\"]}]}");
  json_object_put(r);

  json_object *g = read_graph(c), *obs = NULL, *rels = NULL;
  json_object *e = graph_entity(g, "mcpconn");
  ck_assert_ptr_nonnull(e);
  ck_assert_str_eq(jstr(e, "entityType"), "library");
  ck_assert(json_object_object_get_ex(e, "observations", &obs));
  ck_assert_int_eq(json_object_array_length(obs), 2);
  ck_assert_str_eq(json_object_get_string(json_object_array_get_idx(obs, 1)),
                   "talks to MCP servers");
  ck_assert(json_object_object_get_ex(g, "relations", &rels));
  ck_assert_int_eq(json_object_array_length(rels), 1);
  json_object *rel = json_object_array_get_idx(rels, 0);
  ck_assert_str_eq(jstr(rel, "from"), "mcpconn");
  ck_assert_str_eq(jstr(rel, "to"), "nghttp2");
  ck_assert_str_eq(jstr(rel, "relationType"), "uses");
  json_object_put(g);

  /* search_nodes matches observation text. */
  r = call_tool_ok(c, "search_nodes", "{\"query\":\"HTTP/2\"}");
  json_object *sc = NULL;
  ck_assert(json_object_object_get_ex(r, "structuredContent", &sc));
  ck_assert_ptr_nonnull(graph_entity(sc, "nghttp2"));
  ck_assert_ptr_null(graph_entity(sc, "mcpconn"));
  json_object_put(r);

  /* The graph is on disk, one JSON object per line. */
  char *disk = read_file(file);
  ck_assert_msg(disk != NULL, "%s was not written", file);
  ck_assert_ptr_nonnull(strstr(disk, "\"name\":\"mcpconn\""));
  ck_assert_ptr_nonnull(strstr(disk, "\"relationType\":\"uses\""));
  free(disk);

  /* delete_entities drops the entity and its relations. */
  r = call_tool_ok(c, "delete_entities", "{\"entityNames\":[\"nghttp2\"]}");
  json_object_put(r);
  g = read_graph(c);
  ck_assert_ptr_null(graph_entity(g, "nghttp2"));
  ck_assert_ptr_nonnull(graph_entity(g, "mcpconn"));
  ck_assert(json_object_object_get_ex(g, "relations", &rels));
  ck_assert_int_eq(json_object_array_length(rels), 0);
  json_object_put(g);
  disk = read_file(file);
  ck_assert_ptr_null(strstr(disk, "nghttp2"));
  free(disk);
  assert_healthy(c);
  mcp_client_free(c);
  interop_rm_rf(dir);
}
END_TEST

Suite *interop_suite(void);
Suite *interop_suite(void) {
  Suite *s = suite_create("interop");
  TCase *tc = tcase_create("server-everything");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_connect_and_ping);
  tcase_add_test(tc, test_list_tools);
  tcase_add_test(tc, test_call_echo);
  tcase_add_test(tc, test_call_get_sum);
  tcase_add_test(tc, test_structured_content);
  tcase_add_test(tc, test_tool_errors);
  tcase_add_test(tc, test_progress);
  tcase_add_test(tc, test_reset_timeout_on_progress);
  tcase_add_test(tc, test_timeout);
  tcase_add_test(tc, test_cancel_on_progress);
  tcase_add_test(tc, test_logging_notifications);
  tcase_add_test(tc, test_resource_subscription);
  tcase_add_test(tc, test_resources);
  tcase_add_test(tc, test_prompts);
  tcase_add_test(tc, test_roots);
  tcase_add_test(tc, test_sampling_and_elicitation);
  tcase_add_test(tc, test_concurrent_calls);
  tcase_add_test(tc, test_async_call);
  suite_add_tcase(s, tc);
  tc = tcase_create("reference-servers");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_filesystem);
  tcase_add_test(tc, test_filesystem_roots);
  tcase_add_test(tc, test_memory);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(interop_suite()); }
