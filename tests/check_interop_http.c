/* SPDX-License-Identifier: MIT */
/*
 * check_interop_http.c: mcpconn's HTTP transports against real servers,
 * each a Node process on 127.0.0.1 started per test:
 *  - @modelcontextprotocol/server-everything over Streamable HTTP, its own
 *    transport code (tests/interop/everything-http.mjs only picks the port);
 *  - servers built on the official TypeScript SDK (tests/interop/
 *    sdk-server.mjs): Streamable HTTP with SSE or JSON responses, stateful
 *    or stateless, over HTTP/1.1, over HTTP/2 + TLS (node:http2) and over
 *    HTTP/1.1 + TLS; and the legacy HTTP+SSE transport, chosen explicitly
 *    or reached by the AUTO fallback.
 * Uses only the public API (mcpconn.h).  Every test asserts results (echo
 * text, sums, session ids, what the server counted), not just statuses.
 *
 * The packages must be installed: `npm ci --prefix tests/interop`; without
 * them every test fails with that instruction (check_interop_util.h).
 */
#include "config.h"

#include <json-c/json.h>
#include <pthread.h>
#include <stdatomic.h>

#include "check_interop_util.h"
#include "mcpconn.h"

#define START_MS 60000 /* node's first start can be slow on a busy CI box */
#define CALL_MS 30000
#define WAIT_MS 30000

/* ---- fixture ---------------------------------------------------------------- */

typedef struct fixture {
  node_server server;
  char url[256];
  char tmp[1024]; /* certificates, when TLS */
  mcp_client *client;
  interop_notes notes;
  atomic_int elicitations;
  atomic_int samplings;
} fixture;

static void log_to_stderr(void *user, mcp_log_level level, const char *msg) {
  (void)user;
  if (level >= MCP_LOG_INFO) fprintf(stderr, "mcpconn[%d]: %s\n", (int)level, msg);
}

/* elicitation/create: accept without filling anything in, so the library's
 * SEP-1034 defaults are what the server gets back. */
static mcp_status on_elicitation(void *user, const char *method, const char *params, char **result,
                                 mcp_error *err) {
  (void)method;
  (void)params;
  (void)err;
  fixture *f = user;
  atomic_fetch_add(&f->elicitations, 1);
  *result = strdup("{\"action\":\"accept\",\"content\":{}}");
  return *result ? MCP_OK : MCP_ENOMEM;
}

static mcp_status on_sampling(void *user, const char *method, const char *params, char **result,
                              mcp_error *err) {
  (void)method;
  (void)params;
  (void)err;
  fixture *f = user;
  atomic_fetch_add(&f->samplings, 1);
  *result = strdup("{\"role\":\"assistant\",\"content\":{\"type\":\"text\",\"text\":"
                   "\"sampled over http\"},\"model\":\"mcpconn-test\",\"stopReason\":\"endTurn\"}");
  return *result ? MCP_OK : MCP_ENOMEM;
}

/* Starts `node tests/interop/<script> args...` and sets f->url to
 * <scheme>://<host>:<port><path>. */
static void start_server(fixture *f, const char *scheme, const char *host, const char *path,
                         const char *script, const char *const *args) {
  const char *argv[16];
  size_t n = 0;
  argv[n++] = interop_path(script);
  for (size_t i = 0; args && args[i] && n < 15; i++) argv[n++] = args[i];
  argv[n] = NULL;
  node_server_start(&f->server, NULL, START_MS, argv);
  snprintf(f->url, sizeof(f->url), "%s://%s:%d%s", scheme, host, f->server.port, path);
}

typedef struct conn_opts {
  mcp_http_transport kind;
  mcp_http_version version;
  const char *ca; /* trust this CA file */
  bool handlers;  /* declare elicitation and sampling */
} conn_opts;

static mcp_status try_connect(fixture *f, const conn_opts *co, mcp_client **out, mcp_error *err) {
  mcp_client_options *o = mcp_client_options_new();
  ck_assert_ptr_nonnull(o);
  ck_assert_int_eq(mcp_client_options_set_http(o, f->url, co->kind), MCP_OK);
  mcp_client_options_set_http_version(o, co->version);
  if (co->ca) ck_assert_int_eq(mcp_client_options_set_ca(o, co->ca, NULL), MCP_OK);
  ck_assert_int_eq(mcp_client_options_set_client_info(o, "mcpconn-interop-http", MCP_VERSION),
                   MCP_OK);
  mcp_client_options_set_timeout_ms(o, START_MS);
  mcp_client_options_set_log(o, log_to_stderr, NULL);
  mcp_client_options_set_notification_handler(o, interop_on_notification, &f->notes);
  if (co->handlers) {
    ck_assert_int_eq(
        mcp_client_options_set_request_handler(o, "elicitation/create", on_elicitation, f), MCP_OK);
    ck_assert_int_eq(
        mcp_client_options_set_request_handler(o, "sampling/createMessage", on_sampling, f),
        MCP_OK);
  }
  mcp_status st = mcp_client_connect(o, out, err);
  mcp_client_options_free(o);
  return st;
}

static void connect_client(fixture *f, const conn_opts *co) {
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = try_connect(f, co, &f->client, &err);
  ck_assert_msg(st == MCP_OK, "connect to %s: %s (%s)", f->url, mcp_strerror(st),
                err.message ? err.message : "no message");
  mcp_error_clear(&err);
  ck_assert_ptr_nonnull(f->client);
}

static void fixture_init(fixture *f) {
  memset(f, 0, sizeof(*f));
  interop_notes_init(&f->notes);
}

static void fixture_free(fixture *f) {
  mcp_client_free(f->client);
  f->client = NULL;
  node_server_stop(&f->server);
  interop_notes_destroy(&f->notes);
  if (f->tmp[0]) interop_rm_rf(f->tmp);
}

/* Calls a tool that must succeed; returns the parsed CallToolResult. */
static json_object *call_ok(mcp_client *c, const char *name, const char *args) {
  mcp_call_options *o = mcp_call_options_new();
  mcp_call_options_set_timeout_ms(o, CALL_MS);
  char *res = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_client_call_tool(c, name, args, o, &res, &err);
  mcp_call_options_free(o);
  ck_assert_msg(st == MCP_OK, "tools/call %s %s: %s (%s) result=%s", name, args ? args : "null",
                mcp_strerror(st), err.message ? err.message : "-", res ? res : "-");
  mcp_error_clear(&err);
  json_object *j = json_tokener_parse(res);
  ck_assert_msg(j != NULL, "result is not JSON: %s", res);
  mcp_free(res);
  return j;
}

/* The first text of a tool's result, as a new string. */
static char *call_text(mcp_client *c, const char *name, const char *args) {
  json_object *j = call_ok(c, name, args);
  const char *t = interop_first_text(j);
  ck_assert_msg(t != NULL, "%s returned no text: %s", name, json_object_to_json_string(j));
  char *s = strdup(t);
  json_object_put(j);
  return s;
}

static void assert_echo(mcp_client *c, const char *msg) {
  char args[256], want[256];
  snprintf(args, sizeof(args), "{\"message\":\"%s\"}", msg);
  snprintf(want, sizeof(want), "Echo: %s", msg);
  char *t = call_text(c, "echo", args);
  ck_assert_str_eq(t, want);
  free(t);
}

/* whoami of sdk-server.mjs: {"session": id or null, "http": "1.1"/"2.0"}. */
static json_object *whoami(mcp_client *c) {
  char *t = call_text(c, "whoami", "{}");
  json_object *j = json_tokener_parse(t);
  ck_assert_msg(j != NULL, "whoami: %s", t);
  free(t);
  return j;
}

/* The server's counters (sdk-server.mjs "stats"). */
static json_object *server_stats(mcp_client *c) {
  char *t = call_text(c, "stats", "{}");
  json_object *j = json_tokener_parse(t);
  ck_assert_msg(j != NULL, "stats: %s", t);
  free(t);
  return j;
}

static int64_t jint(json_object *o, const char *key) {
  json_object *v = NULL;
  ck_assert_msg(json_object_object_get_ex(o, key, &v), "no \"%s\" in %s", key,
                json_object_to_json_string(o));
  return json_object_get_int64(v);
}

/* The usual SDK-server checks: tools listed, echo, add with structured
 * content, and the HTTP version the server saw. */
static void assert_sdk_basics(mcp_client *c, const char *http_version) {
  char *tools = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_client_list_tools(c, NULL, &tools, &err);
  ck_assert_msg(st == MCP_OK, "tools/list: %s (%s)", mcp_strerror(st),
                err.message ? err.message : "-");
  for (const char *const *n = (const char *const[]){"echo", "add", "whoami", "stats", NULL}; *n;
       n++)
    ck_assert_msg(interop_list_has(tools, "name", *n), "tool %s missing from %s", *n, tools);
  mcp_free(tools);
  assert_echo(c, "hello over http");
  json_object *r = call_ok(c, "add", "{\"a\":19,\"b\":23}");
  ck_assert_str_eq(interop_first_text(r), "42");
  json_object *sc = NULL;
  ck_assert(json_object_object_get_ex(r, "structuredContent", &sc));
  ck_assert_int_eq(jint(sc, "sum"), 42);
  json_object_put(r);
  if (http_version) {
    json_object *w = whoami(c);
    ck_assert_str_eq(interop_jstr(w, "http"), http_version);
    json_object_put(w);
  }
}

/* Progress notifications for a call come back on its own SSE stream. */
typedef struct progress_seen {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int count;   /* guarded by mu */
  double last; /* guarded by mu */
} progress_seen;

static void on_progress(void *user, double progress, double total, const char *message) {
  (void)total;
  (void)message;
  progress_seen *p = user;
  pthread_mutex_lock(&p->mu);
  p->count++;
  p->last = progress;
  pthread_cond_broadcast(&p->cv);
  pthread_mutex_unlock(&p->mu);
}

typedef struct held_call {
  mcp_client *c;
  mcp_call_options *o;
  int steps;
  mcp_status st;
  char *result;
} held_call;

static void *held_main(void *arg) {
  held_call *h = arg;
  char args[64];
  snprintf(args, sizeof(args), "{\"steps\":%d,\"hold\":true}", h->steps);
  h->st = mcp_client_call_tool(h->c, "progress", args, h->o, &h->result, NULL);
  return NULL;
}

/*
 * sdk-server's progress tool sends |steps| notifications on the call's own
 * stream and holds its answer until we call release, which we do once every
 * progress callback has run: the count does not depend on how fast the
 * worker runs callbacks compared with the arrival of the result.
 */
static void assert_progress(mcp_client *c, int steps) {
  progress_seen p = {.count = 0};
  pthread_mutex_init(&p.mu, NULL);
  interop_cond_init(&p.cv);
  held_call h = {.c = c, .o = mcp_call_options_new(), .steps = steps};
  mcp_call_options_set_timeout_ms(h.o, CALL_MS);
  mcp_call_options_set_progress(h.o, on_progress, &p);
  pthread_t th;
  ck_assert_int_eq(pthread_create(&th, NULL, held_main, &h), 0);
  struct timespec ts = interop_deadline(WAIT_MS);
  pthread_mutex_lock(&p.mu);
  while (p.count < steps && pthread_cond_timedwait(&p.cv, &p.mu, &ts) == 0) {
  }
  int count = p.count;
  double last = p.last;
  pthread_mutex_unlock(&p.mu);
  char *t = call_text(c, "release", "{}");
  ck_assert_str_eq(t, "released");
  free(t);
  pthread_join(th, NULL);
  mcp_call_options_free(h.o);
  pthread_cond_destroy(&p.cv);
  pthread_mutex_destroy(&p.mu);
  ck_assert_msg(h.st == MCP_OK, "progress: %s", mcp_strerror(h.st));
  json_object *j = json_tokener_parse(h.result);
  ck_assert_ptr_nonnull(j);
  char want[32];
  snprintf(want, sizeof(want), "done %d", steps);
  ck_assert_str_eq(interop_first_text(j), want);
  json_object_put(j);
  mcp_free(h.result);
  ck_assert_msg(count == steps, "%d progress notifications, want %d", count, steps);
  ck_assert_double_eq_tol(last, steps, 1e-9);
}

/* ---- server-everything over Streamable HTTP ------------------------------------ */

START_TEST(test_everything_http) {
  fixture f;
  fixture_init(&f);
  start_server(&f, "http", "127.0.0.1", "/mcp", "everything-http.mjs",
               (const char *const[]){interop_package("server-everything"), NULL});
  connect_client(&f, &(conn_opts){.kind = MCP_HTTP_TRANSPORT_STREAMABLE, .handlers = true});
  json_object *info = json_tokener_parse(mcp_client_server_info(f.client)), *si = NULL;
  ck_assert(json_object_object_get_ex(info, "serverInfo", &si));
  ck_assert_str_eq(interop_jstr(si, "name"), "mcp-servers/everything");
  json_object_put(info);
  ck_assert_str_eq(mcp_client_protocol_version(f.client), "2025-11-25");

  char *tools = NULL;
  ck_assert_int_eq(mcp_client_list_tools(f.client, NULL, &tools, NULL), MCP_OK);
  ck_assert(interop_list_has(tools, "name", "echo"));
  ck_assert(interop_list_has(tools, "name", "get-sum"));
  mcp_free(tools);
  assert_echo(f.client, "everything over http");
  char *sum = call_text(f.client, "get-sum", "{\"a\":40,\"b\":2}");
  ck_assert_msg(strstr(sum, "42") != NULL, "get-sum: %s", sum);
  free(sum);
  /* Progress on the POST's SSE stream; a server->client request answered
   * with a separate POST. */
  char *lr = call_text(f.client, "trigger-long-running-operation",
                       "{\"duration\":0.3,\"steps\":3}");
  ck_assert_msg(strstr(lr, "completed") != NULL, "long-running operation: %s", lr);
  free(lr);
  char *s = call_text(f.client, "trigger-sampling-request", "{\"prompt\":\"hi\",\"maxTokens\":5}");
  ck_assert_msg(strstr(s, "sampled over http") != NULL, "sampling: %s", s);
  free(s);
  ck_assert_int_eq(atomic_load(&f.samplings), 1);
  char *res = NULL;
  ck_assert_int_eq(
      mcp_client_read_resource(f.client, "demo://resource/dynamic/text/3", NULL, &res, NULL),
      MCP_OK);
  ck_assert_ptr_nonnull(strstr(res, "demo://resource/dynamic/text/3"));
  mcp_free(res);
  mcp_client_stats st;
  mcp_client_get_stats(f.client, &st);
  ck_assert_uint_eq(st.unknown_responses, 0);
  ck_assert_uint_eq(st.protocol_errors, 0);
  fixture_free(&f);
}
END_TEST

/* Its simulated logging runs on a timer, outside any request: those
 * notifications can only come over the GET listener. */
START_TEST(test_everything_http_get_listener) {
  fixture f;
  fixture_init(&f);
  start_server(&f, "http", "127.0.0.1", "/mcp", "everything-http.mjs",
               (const char *const[]){interop_package("server-everything"), NULL});
  connect_client(&f, &(conn_opts){.kind = MCP_HTTP_TRANSPORT_AUTO});
  char *res = NULL;
  ck_assert_int_eq(
      mcp_client_request(f.client, "logging/setLevel", "{\"level\":\"debug\"}", NULL, &res, NULL),
      MCP_OK);
  mcp_free(res);
  char *t = call_text(f.client, "toggle-simulated-logging", "{}");
  ck_assert_msg(strstr(t, "Started") != NULL, "%s", t);
  free(t);
  ck_assert(interop_notes_wait(&f.notes, "notifications/message", "\"level\"", WAIT_MS));
  t = call_text(f.client, "toggle-simulated-logging", "{}");
  free(t);
  fixture_free(&f);
}
END_TEST

/* ---- TypeScript SDK servers ------------------------------------------------------ */

/* Stateful, SSE responses, HTTP/1.1: the whole feature set. */
START_TEST(test_sdk_sse_stateful) {
  fixture f;
  fixture_init(&f);
  start_server(&f, "http", "127.0.0.1", "/mcp", "sdk-server.mjs", NULL);
  connect_client(&f, &(conn_opts){.kind = MCP_HTTP_TRANSPORT_STREAMABLE, .handlers = true});
  assert_sdk_basics(f.client, "1.1");
  json_object *w = whoami(f.client);
  ck_assert_ptr_nonnull(interop_jstr(w, "session"));
  json_object_put(w);
  assert_progress(f.client, 4);
  /* elicitation/create over the POST stream; the library fills the default. */
  char *t = call_text(f.client, "ask", "{\"message\":\"favourite colour?\"}");
  ck_assert_str_eq(t, "accept {\"color\":\"blue\"}");
  free(t);
  ck_assert_int_eq(atomic_load(&f.elicitations), 1);
  /* A notification sent outside any request arrives over the GET listener. */
  t = call_text(f.client, "notify_later", "{\"message\":\"via the GET stream\"}");
  ck_assert_str_eq(t, "scheduled");
  free(t);
  ck_assert(interop_notes_wait(&f.notes, "notifications/message", "via the GET stream", WAIT_MS));

  /* Closing sends DELETE with the session: a second client sees it counted. */
  mcp_client_free(f.client);
  f.client = NULL;
  connect_client(&f, &(conn_opts){.kind = MCP_HTTP_TRANSPORT_STREAMABLE});
  json_object *s = server_stats(f.client);
  ck_assert_int_ge(jint(s, "deletes"), 1);
  ck_assert_int_eq(jint(s, "sessionsDeleted"), 1);
  ck_assert_int_eq(jint(s, "sessionsCreated"), 2);
  ck_assert_int_ge(jint(s, "gets"), 1);
  ck_assert_int_eq(jint(s, "notFound"), 0);
  json_object_put(s);
  fixture_free(&f);
}
END_TEST

/* enableJsonResponse: requests answered with application/json. */
START_TEST(test_sdk_json_stateful) {
  fixture f;
  fixture_init(&f);
  start_server(&f, "http", "127.0.0.1", "/mcp", "sdk-server.mjs",
               (const char *const[]){"--json", NULL});
  connect_client(&f, &(conn_opts){.kind = MCP_HTTP_TRANSPORT_STREAMABLE});
  assert_sdk_basics(f.client, "1.1");
  char *t = call_text(f.client, "notify_later", "{\"message\":\"json mode, GET stream\"}");
  free(t);
  ck_assert(
      interop_notes_wait(&f.notes, "notifications/message", "json mode, GET stream", WAIT_MS));
  fixture_free(&f);
}
END_TEST

/* No sessions: a fresh server per POST; GET gets 405 (no listener). */
START_TEST(test_sdk_stateless) {
  const char *variants[2][3] = {{"--stateless", NULL, NULL}, {"--stateless", "--json", NULL}};
  for (int v = 0; v < 2; v++) {
    fixture f;
    fixture_init(&f);
    start_server(&f, "http", "127.0.0.1", "/mcp", "sdk-server.mjs", variants[v]);
    connect_client(&f, &(conn_opts){.kind = MCP_HTTP_TRANSPORT_STREAMABLE});
    assert_sdk_basics(f.client, "1.1");
    json_object *w = whoami(f.client);
    json_object *sess = NULL;
    ck_assert(json_object_object_get_ex(w, "session", &sess));
    ck_assert_msg(sess == NULL, "stateless server reported a session: %s",
                  json_object_to_json_string(w));
    json_object_put(w);
    for (int i = 0; i < 5; i++) assert_echo(f.client, "stateless again");
    json_object *s = server_stats(f.client);
    ck_assert_int_eq(jint(s, "sessionsCreated"), 0);
    json_object_put(s);
    fixture_free(&f);
  }
}
END_TEST

/* The server forgets its sessions: the next request gets 404, mcpconn
 * re-initializes and retries it once, transparently. */
START_TEST(test_sdk_session_expiry_404) {
  fixture f;
  fixture_init(&f);
  start_server(&f, "http", "127.0.0.1", "/mcp", "sdk-server.mjs", NULL);
  connect_client(&f, &(conn_opts){.kind = MCP_HTTP_TRANSPORT_STREAMABLE});
  json_object *w = whoami(f.client);
  char *before = strdup(interop_jstr(w, "session"));
  json_object_put(w);
  char *t = call_text(f.client, "expire_session", "{}");
  ck_assert_str_eq(t, "expired");
  free(t);
  assert_echo(f.client, "after the session expired");
  w = whoami(f.client);
  const char *after = interop_jstr(w, "session");
  ck_assert_ptr_nonnull(after);
  ck_assert_str_ne(after, before);
  json_object_put(w);
  json_object *s = server_stats(f.client);
  ck_assert_int_ge(jint(s, "notFound"), 1);
  json_object_put(s);
  ck_assert(mcp_client_is_open(f.client));
  /* The GET listener follows the new session. */
  t = call_text(f.client, "notify_later", "{\"message\":\"listener after re-initialize\"}");
  free(t);
  ck_assert(interop_notes_wait(&f.notes, "notifications/message", "listener after re-initialize",
                               WAIT_MS));
  free(before);
  fixture_free(&f);
}
END_TEST

/* The same while the client is idle: its GET listener gets the 404 and
 * mcpconn starts a new session at once, without waiting for a request to
 * fail, so server-initiated messages keep flowing. */
START_TEST(test_sdk_session_expiry_idle_listener) {
  fixture f;
  fixture_init(&f);
  start_server(&f, "http", "127.0.0.1", "/mcp", "sdk-server.mjs", NULL);
  connect_client(&f, &(conn_opts){.kind = MCP_HTTP_TRANSPORT_STREAMABLE});
  json_object *w = whoami(f.client);
  char before[256], greet[300];
  snprintf(before, sizeof(before), "%s", interop_jstr(w, "session"));
  json_object_put(w);
  snprintf(greet, sizeof(greet), "GET stream open for %s", before);
  ck_assert(interop_notes_wait(&f.notes, "notifications/message", greet, WAIT_MS));
  char *t = call_text(f.client, "expire_session", "{}");
  free(t);
  /* No request from us now: only the listener can notice.  The new
   * session's GET stream greets us. */
  ck_assert(interop_notes_wait_count(&f.notes, "notifications/message", "GET stream open for ", 2,
                                     WAIT_MS));
  w = whoami(f.client);
  ck_assert_str_ne(interop_jstr(w, "session"), before);
  json_object_put(w);
  json_object *s = server_stats(f.client);
  ck_assert_int_ge(jint(s, "notFoundGet"), 1);
  ck_assert_int_eq(jint(s, "notFoundPost"), 0);
  ck_assert_int_eq(jint(s, "sessionsCreated"), 2);
  json_object_put(s);
  fixture_free(&f);
}
END_TEST

/* ---- TLS: HTTP/2 (node:http2) and HTTP/1.1 -------------------------------------- */

static void start_tls_server(fixture *f) {
  interop_mkdtemp(f->tmp, sizeof(f->tmp), "check_interop_http_pki");
  interop_make_certs(f->tmp);
  char cert[1200], key[1200];
  snprintf(cert, sizeof(cert), "%s/server.pem", f->tmp);
  snprintf(key, sizeof(key), "%s/server.key", f->tmp);
  start_server(f, "https", "localhost", "/mcp", "sdk-server.mjs",
               (const char *const[]){"--tls", cert, key, NULL});
}

typedef struct conc_arg {
  mcp_client *c;
  int id;
  int bad;
} conc_arg;

static void *conc_main(void *p) {
  conc_arg *a = p;
  for (int i = 0; i < 10; i++) {
    char args[64], want[64];
    snprintf(args, sizeof(args), "{\"a\":%d,\"b\":%d}", a->id, i);
    snprintf(want, sizeof(want), "%d", a->id + i);
    char *res = NULL;
    if (mcp_client_call_tool(a->c, "add", args, NULL, &res, NULL) != MCP_OK) {
      a->bad++;
      continue;
    }
    json_object *j = json_tokener_parse(res);
    const char *t = j ? interop_first_text(j) : NULL;
    if (!t || strcmp(t, want) != 0) a->bad++;
    json_object_put(j);
    mcp_free(res);
  }
  return NULL;
}

START_TEST(test_sdk_h2_tls) {
  fixture f;
  fixture_init(&f);
  start_tls_server(&f);
  char ca[1200];
  snprintf(ca, sizeof(ca), "%s/ca.pem", f.tmp);
  connect_client(&f,
                 &(conn_opts){.kind = MCP_HTTP_TRANSPORT_STREAMABLE, .ca = ca, .handlers = true});
  assert_sdk_basics(f.client, "2.0");
  assert_progress(f.client, 3);
  char *t = call_text(f.client, "ask", "{\"message\":\"over h2?\"}");
  ck_assert_str_eq(t, "accept {\"color\":\"blue\"}");
  free(t);
  /* POSTs multiplexed while the GET stream is open on the same connection. */
  pthread_t th[4];
  conc_arg a[4];
  for (int i = 0; i < 4; i++) {
    a[i] = (conc_arg){f.client, i * 100, 0};
    ck_assert_int_eq(pthread_create(&th[i], NULL, conc_main, &a[i]), 0);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    ck_assert_int_eq(a[i].bad, 0);
  }
  t = call_text(f.client, "notify_later", "{\"message\":\"h2 GET stream\"}");
  free(t);
  ck_assert(interop_notes_wait(&f.notes, "notifications/message", "h2 GET stream", WAIT_MS));
  json_object *s = server_stats(f.client);
  json_object *http = NULL, *h2 = NULL;
  ck_assert(json_object_object_get_ex(s, "http", &http));
  ck_assert(json_object_object_get_ex(http, "2.0", &h2));
  ck_assert_msg(!json_object_object_get_ex(http, "1.1", NULL), "HTTP/1.1 requests seen: %s",
                json_object_to_json_string(s));
  json_object_put(s);
  fixture_free(&f);
}
END_TEST

START_TEST(test_sdk_h1_tls) {
  fixture f;
  fixture_init(&f);
  start_tls_server(&f);
  char ca[1200];
  snprintf(ca, sizeof(ca), "%s/ca.pem", f.tmp);
  connect_client(&f, &(conn_opts){.kind = MCP_HTTP_TRANSPORT_STREAMABLE,
                                  .version = MCP_HTTP_VERSION_1_1,
                                  .ca = ca});
  assert_sdk_basics(f.client, "1.1");
  char *t = call_text(f.client, "notify_later", "{\"message\":\"h1 over tls\"}");
  free(t);
  ck_assert(interop_notes_wait(&f.notes, "notifications/message", "h1 over tls", WAIT_MS));
  fixture_free(&f);
}
END_TEST

/* Without the test CA the certificate is not trusted. */
START_TEST(test_sdk_tls_untrusted) {
  fixture f;
  fixture_init(&f);
  start_tls_server(&f);
  mcp_client *c = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = try_connect(&f, &(conn_opts){.kind = MCP_HTTP_TRANSPORT_STREAMABLE}, &c, &err);
  ck_assert_msg(st == MCP_ETLS, "want MCP_ETLS, got %s (%s)", mcp_strerror(st),
                err.message ? err.message : "-");
  ck_assert_ptr_null(c);
  mcp_error_clear(&err);
  fixture_free(&f);
}
END_TEST

/* ---- legacy HTTP+SSE (2024-11-05) -------------------------------------------------- */

static void legacy_checks(fixture *f) {
  assert_sdk_basics(f->client, "1.1");
  assert_progress(f->client, 2);
  char *t = call_text(f->client, "ask", "{\"message\":\"legacy?\"}");
  ck_assert_str_eq(t, "accept {\"color\":\"blue\"}");
  free(t);
  for (int i = 0; i < 3; i++) assert_echo(f->client, "legacy again");
  json_object *s = server_stats(f->client);
  ck_assert_int_eq(jint(s, "sessionsCreated"), 1); /* one GET /sse stream */
  json_object_put(s);
}

START_TEST(test_sdk_legacy_sse) {
  fixture f;
  fixture_init(&f);
  start_server(&f, "http", "127.0.0.1", "/sse", "sdk-server.mjs",
               (const char *const[]){"--legacy-sse", NULL});
  connect_client(&f, &(conn_opts){.kind = MCP_HTTP_TRANSPORT_LEGACY_SSE, .handlers = true});
  legacy_checks(&f);
  fixture_free(&f);
}
END_TEST

/* AUTO: POST initialize to /sse gets 405, so mcpconn falls back. */
START_TEST(test_sdk_legacy_sse_auto) {
  fixture f;
  fixture_init(&f);
  start_server(&f, "http", "127.0.0.1", "/sse", "sdk-server.mjs",
               (const char *const[]){"--legacy-sse", NULL});
  connect_client(&f, &(conn_opts){.kind = MCP_HTTP_TRANSPORT_AUTO, .handlers = true});
  legacy_checks(&f);
  fixture_free(&f);
}
END_TEST

/* AUTO against a Streamable HTTP server stays on Streamable HTTP. */
START_TEST(test_sdk_auto_streamable) {
  fixture f;
  fixture_init(&f);
  start_server(&f, "http", "127.0.0.1", "/mcp", "sdk-server.mjs", NULL);
  connect_client(&f, &(conn_opts){.kind = MCP_HTTP_TRANSPORT_AUTO});
  assert_sdk_basics(f.client, "1.1");
  json_object *w = whoami(f.client);
  ck_assert_ptr_nonnull(interop_jstr(w, "session"));
  json_object_put(w);
  fixture_free(&f);
}
END_TEST

Suite *interop_http_suite(void);
Suite *interop_http_suite(void) {
  Suite *s = suite_create("interop_http");
  TCase *tc = tcase_create("everything");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_everything_http);
  tcase_add_test(tc, test_everything_http_get_listener);
  suite_add_tcase(s, tc);
  tc = tcase_create("sdk");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_sdk_sse_stateful);
  tcase_add_test(tc, test_sdk_json_stateful);
  tcase_add_test(tc, test_sdk_stateless);
  tcase_add_test(tc, test_sdk_session_expiry_404);
  tcase_add_test(tc, test_sdk_session_expiry_idle_listener);
  tcase_add_test(tc, test_sdk_auto_streamable);
  suite_add_tcase(s, tc);
  tc = tcase_create("tls");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_sdk_h2_tls);
  tcase_add_test(tc, test_sdk_h1_tls);
  tcase_add_test(tc, test_sdk_tls_untrusted);
  suite_add_tcase(s, tc);
  tc = tcase_create("legacy");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_sdk_legacy_sse);
  tcase_add_test(tc, test_sdk_legacy_sse_auto);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(interop_http_suite()); }
