/* SPDX-License-Identifier: MIT */
/*
 * check_tasks_http.c: tasks over Streamable HTTP against the official
 * TypeScript SDK v2 server (tests/interop/v2-tasks-server.mjs:
 * @modelcontextprotocol/server createMcpHandler with the task handlers its
 * consumer writes, since the SDK has no task store), both eras, over
 * HTTP/1.1 (_i 0) and h2c (_i 1).  The server records every HTTP request
 * with the status the SDK answered, so the tests read from the server's
 * side what the client sent (polls, tasks/update, tasks/cancel, no
 * notifications/cancelled) and that the SDK's own Streamable HTTP header
 * check (Mcp-Name = params.taskId on tasks/get, tasks/update, tasks/cancel)
 * accepted every request: a refused one fails the test.
 */
#include "config.h"

#include <json-c/json.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_interop_util.h"
#include "check_util.h"
#include "mcpconn.h"

#define START_MS 60000 /* node's first start can be slow on a busy CI box */

typedef struct fixture {
  node_server server;
  char url[256];
  char dir[1024];
  char record[1200];
  bool h2;
  bool modern;
} fixture;

static void start(fixture *f, bool h2, bool modern) {
  memset(f, 0, sizeof(*f));
  f->h2 = h2;
  f->modern = modern;
  interop_mkdtemp(f->dir, sizeof(f->dir), "tasks-http");
  snprintf(f->record, sizeof(f->record), "%s/record.jsonl", f->dir);
  char rec_env[1300];
  snprintf(rec_env, sizeof(rec_env), "RECORD=%s", f->record);
  const char *env[] = {rec_env, h2 ? "H2=1" : NULL, NULL};
  const char *args[] = {interop_path("v2-tasks-server.mjs"), NULL};
  node_server_start(&f->server, env, START_MS, args);
  snprintf(f->url, sizeof(f->url), "http://127.0.0.1:%d/mcp", f->server.port);
}

static void stop(fixture *f) {
  node_server_stop(&f->server);
  interop_rm_rf(f->dir);
}

/* ---- the record --------------------------------------------------------- */

/* Each recorded request, as (HTTP status, mcp-* headers, body) trees. */
typedef bool (*rec_fn)(void *user, int status, json_object *headers, json_object *body);

static void rec_each(const fixture *f, rec_fn fn, void *user) {
  FILE *in = fopen(f->record, "r");
  if (!in) return;
  char *line = NULL;
  size_t cap = 0;
  while (getline(&line, &cap, in) > 0) {
    json_object *rec = json_tokener_parse(line), *v = NULL, *headers = NULL, *body = NULL;
    ck_assert_msg(rec, "record line: %s", line);
    int status = json_object_object_get_ex(rec, "status", &v) ? json_object_get_int(v) : 0;
    json_object_object_get_ex(rec, "headers", &headers);
    if (json_object_object_get_ex(rec, "body", &v))
      body = json_tokener_parse(json_object_get_string(v));
    bool go_on = fn(user, status, headers, body);
    json_object_put(body);
    json_object_put(rec);
    if (!go_on) break;
  }
  free(line);
  fclose(in);
}

static const char *member(json_object *o, const char *a, const char *b) {
  json_object *v = NULL;
  if (!o || !json_object_object_get_ex(o, a, &v)) return NULL;
  if (b && !json_object_object_get_ex(v, b, &v)) return NULL;
  return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

typedef struct counting {
  const char *method;
  int n;
} counting;

static bool count_one(void *user, int status, json_object *headers, json_object *body) {
  (void)status;
  (void)headers;
  counting *c = user;
  const char *m = member(body, "method", NULL);
  if (m && strcmp(m, c->method) == 0) c->n++;
  return true;
}

/* How many requests (or notifications) named |method| the server got. */
static int rec_count(const fixture *f, const char *method) {
  counting c = {method, 0};
  rec_each(f, count_one, &c);
  return c.n;
}

typedef struct checking {
  bool modern;
  int tasks_requests; /* tasks/... requests seen */
  char bad[1024];     /* the first problem, or "" */
} checking;

static bool check_one(void *user, int status, json_object *headers, json_object *body) {
  checking *c = user;
  const char *m = member(body, "method", NULL), *id = member(body, "params", "taskId");
  /* 405: the standalone GET stream, which the SDK's stateless 2025-11-25
   * serving does not offer. */
  if (status != 200 && status != 202 && !(status == 405 && !body)) {
    snprintf(c->bad, sizeof(c->bad), "the SDK answered %s with HTTP %d", m ? m : "?", status);
    return false;
  }
  if (!m || strncmp(m, "tasks/", 6) != 0) return true;
  c->tasks_requests++;
  if (!c->modern) return true;
  const char *name = member(headers, "mcp-name", NULL), *hm = member(headers, "mcp-method", NULL);
  if (!id || !name || strcmp(name, id) != 0 || !hm || strcmp(hm, m) != 0) {
    snprintf(c->bad, sizeof(c->bad), "%s for task %s went with Mcp-Method %s, Mcp-Name %s", m,
             id ? id : "(none)", hm ? hm : "(none)", name ? name : "(none)");
    return false;
  }
  return true;
}

/* Every request was accepted by the SDK (HTTP 200/202: its header check
 * refuses with 400); on 2026-07-28 each tasks/... request carried Mcp-Method
 * and Mcp-Name = params.taskId.  Returns how many tasks/... requests. */
static int rec_all_accepted(const fixture *f) {
  checking c = {.modern = f->modern};
  rec_each(f, check_one, &c);
  ck_assert_msg(c.bad[0] == '\0', "%s", c.bad);
  return c.tasks_requests;
}

static char *slurp(const char *path) {
  FILE *in = fopen(path, "r");
  if (!in) return NULL;
  char *buf = NULL;
  size_t len = 0, n;
  char chunk[4096];
  while ((n = fread(chunk, 1, sizeof(chunk), in)) > 0) {
    char *grown = realloc(buf, len + n + 1);
    ck_assert_ptr_nonnull(grown);
    buf = grown;
    memcpy(buf + len, chunk, n);
    len += n;
  }
  fclose(in);
  if (buf) buf[len] = '\0';
  return buf ? buf : strdup("");
}

static int count_of(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) n++;
  return n;
}

/* ---- the host ----------------------------------------------------------- */

typedef struct host {
  pthread_mutex_t mu;
  int elicits;
  int reports;
  char messages[4096];
} host;

static mcp_status on_elicit(void *user, const char *method, const char *params, char **result,
                            mcp_error *err) {
  (void)err;
  host *h = user;
  ck_assert_str_eq(method, "elicitation/create");
  ck_assert_ptr_nonnull(strstr(params, "Which colour?"));
  pthread_mutex_lock(&h->mu);
  h->elicits++;
  pthread_mutex_unlock(&h->mu);
  *result = strdup("{\"action\":\"accept\",\"content\":{\"colour\":\"blue\"}}");
  return MCP_OK;
}

static void on_progress(void *user, double progress, double total, const char *message) {
  (void)progress;
  (void)total;
  host *h = user;
  pthread_mutex_lock(&h->mu);
  h->reports++;
  if (message && strlen(h->messages) + strlen(message) + 2 < sizeof(h->messages)) {
    strcat(h->messages, message);
    strcat(h->messages, "\n");
  }
  pthread_mutex_unlock(&h->mu);
}

static mcp_client *connect_to(const fixture *f, host *h) {
  mcp_client_options *o = mcp_client_options_new();
  ck_assert_int_eq(mcp_client_options_set_http(o, f->url, MCP_HTTP_TRANSPORT_STREAMABLE), MCP_OK);
  if (f->h2) mcp_client_options_set_http_version(o, MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
  ck_assert_int_eq(mcp_client_options_set_protocol(o, f->modern ? "modern" : "legacy"), MCP_OK);
  mcp_client_options_set_timeout_ms(o, START_MS);
  ck_assert_int_eq(mcp_client_options_set_extension(o, MCP_TASKS_EXTENSION, NULL), MCP_OK);
  ck_assert_int_eq(mcp_client_options_set_request_handler(o, "elicitation/create", on_elicit, h),
                   MCP_OK);
  mcp_client *c = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_msg(mcp_client_connect(o, &c, &err) == MCP_OK, "connect %s: %s", f->url, err.message);
  mcp_client_options_free(o);
  return c;
}

static host *host_new(void) {
  host *h = calloc(1, sizeof(*h));
  pthread_mutex_init(&h->mu, NULL);
  return h;
}

static void host_free(host *h) {
  pthread_mutex_destroy(&h->mu);
  free(h);
}

static void text_is(const char *result, const char *want) {
  char *t = NULL;
  ck_assert_int_eq(mcp_tool_result_text(result, (size_t)-1, &t, NULL, NULL), MCP_OK);
  ck_assert_str_eq(t, want);
  mcp_free(t);
}

/* ---- the checks (each in both eras, over HTTP/1.1 and h2c) ------------- */

/* The plain call returns the final result; the polls went through. */
static void plain_slow(bool modern, bool h2) {
  fixture f;
  start(&f, h2, modern);
  host *h = host_new();
  mcp_client *c = connect_to(&f, h);
  mcp_call_options *o = mcp_call_options_new();
  mcp_call_options_set_timeout_ms(o, 20000);
  mcp_call_options_set_progress(o, on_progress, h);
  char *out = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_msg(mcp_client_call_tool(c, "slow", "{\"n\":7}", o, &out, &err) == MCP_OK, "%s",
                err.message);
  text_is(out, "slow done 7");
  ck_assert_ptr_null(strstr(out, "resultType"));
  mcp_free(out);
  /* created (working), step 1..3, completed */
  ck_assert_int_eq(h->reports, 5);
  ck_assert_ptr_nonnull(strstr(h->messages, "task-1-slow: working: step 3\n"));
  ck_assert_int_eq(rec_count(&f, "tasks/get"), 4);
  ck_assert_int_eq(rec_count(&f, "tasks/result"), modern ? 0 : 1);
  ck_assert_int_eq(rec_count(&f, "tasks/cancel"), 0);
  ck_assert_int_eq(rec_all_accepted(&f), modern ? 4 : 5);
  mcp_call_options_free(o);
  mcp_client_free(c);
  host_free(h);
  stop(&f);
}

START_TEST(modern_plain) { plain_slow(true, _i == 1); }
END_TEST
START_TEST(legacy_plain) { plain_slow(false, _i == 1); }
END_TEST

/* Input midway, answered through the host's handler once (2026-07-28:
 * tasks/update with inputResponses; 2025-11-25: the SDK's elicitation
 * request during tasks/result). */
static void plain_ask(bool modern, bool h2) {
  fixture f;
  start(&f, h2, modern);
  host *h = host_new();
  mcp_client *c = connect_to(&f, h);
  char *out = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_msg(mcp_client_call_tool(c, "ask", NULL, NULL, &out, &err) == MCP_OK, "%s",
                err.message);
  text_is(out, "got {\"colour\":\"blue\"}");
  mcp_free(out);
  ck_assert_int_eq(h->elicits, 1);
  ck_assert_int_eq(rec_count(&f, "tasks/update"), modern ? 1 : 0);
  ck_assert_int_eq(rec_count(&f, "tasks/result"), modern ? 0 : 1);
  ck_assert_int_ge(rec_all_accepted(&f), 3);
  mcp_client_free(c);
  host_free(h);
  stop(&f);
}

START_TEST(modern_ask) { plain_ask(true, _i == 1); }
END_TEST

/* The same server over stdio (serveStdio), 2025-11-25 (_i 0) and
 * 2026-07-28 (_i 1): input midway.  On 2025-11-25 only here: the SDK's
 * createMcpHandler serves each legacy HTTP request alone, without a
 * session, so its tasks/result cannot send the elicitation over HTTP. */
START_TEST(stdio_ask) {
  bool modern = _i == 1;
  char dir[1024], log[1200];
  interop_mkdtemp(dir, sizeof(dir), "tasks-stdio");
  snprintf(log, sizeof(log), "%s/log", dir);
  setenv("LOG", log, 1);
  host *h = host_new();
  const char *argv[] = {interop_node(), interop_path("v2-tasks-server.mjs"), "stdio", NULL};
  mcp_client_options *o = mcp_client_options_new();
  ck_assert_int_eq(mcp_client_options_set_stdio(o, argv), MCP_OK);
  ck_assert_int_eq(mcp_client_options_set_protocol(o, modern ? "modern" : "legacy"), MCP_OK);
  mcp_client_options_set_timeout_ms(o, START_MS);
  ck_assert_int_eq(mcp_client_options_set_extension(o, MCP_TASKS_EXTENSION, NULL), MCP_OK);
  ck_assert_int_eq(mcp_client_options_set_request_handler(o, "elicitation/create", on_elicit, h),
                   MCP_OK);
  mcp_client *c = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_msg(mcp_client_connect(o, &c, &err) == MCP_OK, "%s", err.message);
  mcp_client_options_free(o);
  ck_assert_str_eq(mcp_client_protocol_version(c), modern ? "2026-07-28" : "2025-11-25");
  char *out = NULL;
  ck_assert_msg(mcp_client_call_tool(c, "ask", NULL, NULL, &out, &err) == MCP_OK, "%s",
                err.message);
  text_is(out, "got {\"colour\":\"blue\"}");
  mcp_free(out);
  ck_assert_int_eq(h->elicits, 1);
  mcp_client_free(c);
  char *l = slurp(log);
  ck_assert_ptr_nonnull(l);
  ck_assert_int_eq(count_of(l, "\"method\":\"tasks/update\""), modern ? 1 : 0);
  ck_assert_int_eq(count_of(l, "\"method\":\"tasks/result\""), modern ? 0 : 1);
  ck_assert_int_ge(count_of(l, "\"method\":\"tasks/get\""), 1);
  free(l);
  unsetenv("LOG");
  host_free(h);
  interop_rm_rf(dir);
}
END_TEST

/* A failed task: the server's code and message, naming the task. */
static void plain_boom(bool modern, bool h2) {
  fixture f;
  start(&f, h2, modern);
  host *h = host_new();
  mcp_client *c = connect_to(&f, h);
  char *out = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp_client_call_tool(c, "boom", NULL, NULL, &out, &err), MCP_ERPC);
  ck_assert_ptr_null(out);
  ck_assert_int_eq(err.rpc_code, -32050);
  ck_assert_msg(strstr(err.message, "disk full") && strstr(err.message, "task-1-boom"), "%s",
                err.message);
  mcp_error_clear(&err);
  ck_assert_int_ge(rec_all_accepted(&f), 2);
  mcp_client_free(c);
  host_free(h);
  stop(&f);
}

START_TEST(modern_boom) { plain_boom(true, _i == 1); }
END_TEST
START_TEST(legacy_boom) { plain_boom(false, _i == 1); }
END_TEST

/* Cancelling the call sends tasks/cancel for the task, never
 * notifications/cancelled. */
static void cancel_forever(bool modern, bool h2) {
  fixture f;
  start(&f, h2, modern);
  host *h = host_new();
  test_async a = TEST_ASYNC_INIT;
  mcp_client *c = connect_to(&f, h);
  mcp_cancel *tok = mcp_cancel_new();
  mcp_call_options *o = mcp_call_options_new();
  mcp_call_options_set_timeout_ms(o, 20000);
  mcp_call_options_set_cancel(o, tok);
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp_client_call_tool_async(c, "forever", NULL, o, test_on_async, &a, &err),
                   MCP_OK);
  mcp_call_options_free(o);
  ck_assert(WAIT_UNTIL(rec_count(&f, "tasks/get") >= 2, 20000));
  mcp_cancel_fire(tok);
  ck_assert(WAIT_UNTIL(test_async_done(&a), 20000));
  ck_assert_int_eq(a.st, MCP_ECANCELLED);
  ck_assert_ptr_nonnull(a.message);
  ck_assert_ptr_nonnull(strstr(a.message, "tasks/cancel sent"));
  ck_assert(WAIT_UNTIL(rec_count(&f, "tasks/cancel") == 1, 20000));
  ck_assert_int_eq(rec_count(&f, "notifications/cancelled"), 0);
  /* The SDK's server has the task cancelled. */
  char *out = NULL;
  ck_assert_int_eq(
      mcp_client_request(c, "tasks/get", "{\"taskId\":\"task-1-forever\"}", NULL, &out, &err),
      MCP_OK);
  ck_assert_ptr_nonnull(strstr(out, "\"status\":\"cancelled\""));
  mcp_free(out);
  ck_assert_int_ge(rec_all_accepted(&f), 4);
  mcp_cancel_unref(tok);
  mcp_client_free(c);
  test_async_clear(&a);
  host_free(h);
  stop(&f);
}

START_TEST(modern_cancel) { cancel_forever(true, _i == 1); }
END_TEST
START_TEST(legacy_cancel) { cancel_forever(false, _i == 1); }
END_TEST

static Suite *tasks_http_suite(void) {
  Suite *s = suite_create("tasks_http");
  TCase *m = tcase_create("modern");
  tcase_set_timeout(m, 90);
  tcase_add_loop_test(m, modern_plain, 0, 2);
  tcase_add_loop_test(m, modern_ask, 0, 2);
  tcase_add_loop_test(m, modern_boom, 0, 2);
  tcase_add_loop_test(m, modern_cancel, 0, 2);
  suite_add_tcase(s, m);
  TCase *l = tcase_create("legacy");
  tcase_set_timeout(l, 90);
  tcase_add_loop_test(l, legacy_plain, 0, 2);
  tcase_add_loop_test(l, legacy_boom, 0, 2);
  tcase_add_loop_test(l, legacy_cancel, 0, 2);
  suite_add_tcase(s, l);
  TCase *st = tcase_create("stdio");
  tcase_set_timeout(st, 90);
  tcase_add_loop_test(st, stdio_ask, 0, 2);
  suite_add_tcase(s, st);
  return s;
}

int main(void) { return run_suite(tasks_http_suite()); }
