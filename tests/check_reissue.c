/* SPDX-License-Identifier: MIT */
/*
 * check_reissue.c: a broken response stream on a modern (2026-07-28)
 * Streamable HTTP connection.  There is no session and no resumption, so
 * the request is lost and goes again as a new request with a new id
 * (SEP-2575): a read once, at the client; a tools/call only by the
 * manager's resend rule (annotated idempotent, or the host opted in), on
 * the same connection, never a reconnect.
 *
 * The server is the official TypeScript SDK v2 handler
 * (tests/interop/v2-dual-http.mjs) over HTTP/1.1 and over h2c (each test
 * runs on both), told by BREAK which arrivals to break after serving them
 * (the tool runs): "reset" (a 200 event-stream head, then the connection
 * closes, or RST_STREAM INTERNAL_ERROR on HTTP/2) or "eof" (the event
 * stream ends without the response).  How many times each request
 * arrived, and with which ids, is read from the server's record of every
 * HTTP request, not taken on trust.
 *
 * The packages must be installed: `npm ci --prefix tests/interop`.
 */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>

#include "check_interop_util.h"
#include "mcpconn.h"

#define START_MS 60000 /* node's first start can be slow on a busy CI box */
#define CALL_MS 30000

typedef struct fixture {
  node_server server;
  char url[256];
  char dir[1024];
  char record[1200];
  bool h2;
} fixture;

/* |variant| 0: HTTP/1.1, 1: h2c.  |breaks|: the server's BREAK list. */
static void start(fixture *f, int variant, const char *breaks) {
  memset(f, 0, sizeof(*f));
  f->h2 = variant == 1;
  interop_mkdtemp(f->dir, sizeof(f->dir), "reissue");
  snprintf(f->record, sizeof(f->record), "%s/record.jsonl", f->dir);
  char rec_env[1300], brk_env[1024];
  snprintf(rec_env, sizeof(rec_env), "RECORD=%s", f->record);
  snprintf(brk_env, sizeof(brk_env), "BREAK=%s", breaks);
  const char *env[] = {rec_env, brk_env, f->h2 ? "H2=1" : "H2=0", NULL};
  const char *args[] = {interop_path("v2-dual-http.mjs"), NULL};
  node_server_start(&f->server, env, START_MS, args);
  snprintf(f->url, sizeof(f->url), "http://127.0.0.1:%d/mcp", f->server.port);
}

static void stop(fixture *f) {
  node_server_stop(&f->server);
  interop_rm_rf(f->dir);
}

static mcp_client_options *options(const fixture *f) {
  mcp_client_options *o = mcp_client_options_new();
  ck_assert_ptr_nonnull(o);
  ck_assert_int_eq(mcp_client_options_set_http(o, f->url, MCP_HTTP_TRANSPORT_STREAMABLE), MCP_OK);
  ck_assert_int_eq(mcp_client_options_set_protocol(o, "modern"), MCP_OK);
  mcp_client_options_set_http_version(o, f->h2 ? MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE
                                               : MCP_HTTP_VERSION_1_1);
  mcp_client_options_set_timeout_ms(o, CALL_MS);
  return o;
}

static mcp_client *connect_client(const fixture *f) {
  mcp_client_options *o = options(f);
  mcp_client *c = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_client_connect(o, &c, &err);
  ck_assert_msg(st == MCP_OK, "connect %s: %s (%s)", f->url, mcp_strerror(st),
                err.message ? err.message : "");
  mcp_error_clear(&err);
  mcp_client_options_free(o);
  ck_assert_str_eq(mcp_client_protocol_version(c), "2026-07-28");
  return c;
}

/*
 * The arrivals of |method| (and, when |name| is given, params.name or
 * params.uri equal to it) in the server's record: how many, their ids in
 * |ids| (up to 8) and how many of them BREAK broke.
 */
typedef struct arrivals {
  int n, broken;
  long long ids[8];
} arrivals;

static arrivals arrived(const fixture *f, const char *method, const char *name) {
  arrivals a = {0};
  FILE *fp = fopen(f->record, "r");
  if (!fp) return a;
  char *line = NULL;
  size_t cap = 0;
  while (getline(&line, &cap, fp) > 0) {
    json_object *rec = json_tokener_parse(line), *b = NULL, *brk = NULL;
    ck_assert_msg(rec != NULL, "record line is no JSON: %s", line);
    json_object *body = json_object_object_get_ex(rec, "body", &b)
                            ? json_tokener_parse(json_object_get_string(b))
                            : NULL;
    json_object *m = NULL, *p = NULL, *nv = NULL, *id = NULL, *hv = NULL;
    ck_assert(json_object_object_get_ex(rec, "http", &hv));
    ck_assert_str_eq(json_object_get_string(hv), f->h2 ? "2.0" : "1.1");
    bool match = body && json_object_object_get_ex(body, "method", &m) &&
                 strcmp(json_object_get_string(m), method) == 0;
    if (match && name)
      match = json_object_object_get_ex(body, "params", &p) &&
              (json_object_object_get_ex(p, "name", &nv) ||
               json_object_object_get_ex(p, "uri", &nv)) &&
              strcmp(json_object_get_string(nv), name) == 0;
    if (match) {
      if (a.n < 8 && json_object_object_get_ex(body, "id", &id))
        a.ids[a.n] = (long long)json_object_get_int64(id);
      a.n++;
      if (json_object_object_get_ex(rec, "broken", &brk) && brk) a.broken++;
    }
    json_object_put(body);
    json_object_put(rec);
  }
  free(line);
  fclose(fp);
  return a;
}

/* |method| (|name|) arrived |n| times, the first |broken| of them broken,
 * each with an id of its own. */
static void assert_arrivals(const fixture *f, const char *method, const char *name, int n,
                            int broken) {
  arrivals a = arrived(f, method, name);
  ck_assert_msg(a.n == n, "%s %s over %s arrived %d times, want %d", method, name ? name : "",
                f->h2 ? "h2c" : "HTTP/1.1", a.n, n);
  ck_assert_int_eq(a.broken, broken);
  for (int i = 0; i < a.n && i < 8; i++)
    for (int k = 0; k < i; k++)
      ck_assert_msg(a.ids[i] != a.ids[k], "%s sent twice with id %lld", method, a.ids[i]);
}

/* ---- one client -------------------------------------------------------------- */

/* Reads whose stream breaks (reset, or an event stream that ends without
 * the response) succeed: each was sent once more with a new id.  Sync and
 * async. */
START_TEST(reads_reissued_once) {
  fixture f;
  start(&f, _i,
        "reset@tools/list,eof@resources/read:mem://note,reset@prompts/get,"
        "reset@resources/list");
  mcp_client *c = connect_client(&f);
  char *out = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_client_list_tools(c, NULL, &out, &err);
  ck_assert_msg(st == MCP_OK, "tools/list: %s (%s)", mcp_strerror(st), err.message);
  ck_assert_ptr_nonnull(strstr(out, "\"name\":\"echo\""));
  free(out);
  assert_arrivals(&f, "tools/list", NULL, 2, 1);

  st = mcp_client_read_resource(c, "mem://note", NULL, &out, &err);
  ck_assert_msg(st == MCP_OK, "resources/read: %s (%s)", mcp_strerror(st), err.message);
  ck_assert_ptr_nonnull(strstr(out, "a note"));
  free(out);
  assert_arrivals(&f, "resources/read", "mem://note", 2, 1);

  /* A read the server answers with an error: the error, after one more
   * try (the server has no prompts). */
  st = mcp_client_get_prompt(c, "nothing", NULL, NULL, &out, &err);
  ck_assert_int_eq(st, MCP_ERPC);
  ck_assert_ptr_null(out);
  mcp_error_clear(&err);
  assert_arrivals(&f, "prompts/get", "nothing", 2, 1);

  test_async a = TEST_ASYNC_INIT;
  ck_assert_int_eq(
      mcp_client_request_async(c, "resources/list", NULL, NULL, test_on_async, &a, NULL), MCP_OK);
  ck_assert(WAIT_UNTIL(test_async_done(&a), CALL_MS));
  ck_assert_int_eq(a.st, MCP_OK);
  ck_assert_ptr_nonnull(strstr(a.result, "mem://note"));
  test_async_clear(&a);
  assert_arrivals(&f, "resources/list", NULL, 2, 1);
  ck_assert(mcp_client_is_open(c));
  mcp_client_free(c);
  stop(&f);
}
END_TEST

/* A read whose second stream breaks too fails with the break: two
 * arrivals, never a third.  A tools/call is not sent again by the client:
 * it ran once, and the caller gets the error. */
START_TEST(second_break_and_calls_not_repeated) {
  fixture f;
  start(&f, _i, "reset@tools/list,eof@tools/list,reset@tools/call:echo");
  mcp_client *c = connect_client(&f);
  char *out = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp_client_list_tools(c, NULL, &out, &err), MCP_EIO);
  ck_assert_msg(strstr(err.message, "response stream broke"), "%s", err.message);
  mcp_error_clear(&err);
  assert_arrivals(&f, "tools/list", NULL, 2, 2);

  ck_assert_int_eq(mcp_client_call_tool(c, "echo", "{\"text\":\"once\"}", NULL, &out, &err),
                   MCP_EIO);
  ck_assert_ptr_null(out);
  mcp_error_clear(&err);
  assert_arrivals(&f, "tools/call", "echo", 1, 1);

  /* The connection goes on: the next list and call are answered. */
  ck_assert_int_eq(mcp_client_list_tools(c, NULL, &out, NULL), MCP_OK);
  free(out);
  ck_assert_int_eq(mcp_client_call_tool(c, "echo", "{\"text\":\"again\"}", NULL, &out, NULL),
                   MCP_OK);
  ck_assert_ptr_nonnull(strstr(out, "again"));
  free(out);
  assert_arrivals(&f, "tools/call", "echo", 2, 1);
  assert_arrivals(&f, "server/discover", NULL, 1, 0);
  mcp_client_free(c);
  stop(&f);
}
END_TEST

/* ---- the manager ------------------------------------------------------------- */

static mcp_manager *manager_for(const fixture *f) {
  mcp_manager_options *o = mcp_manager_options_new();
  mcp_manager_options_set_discovery(o, false, false);
  char cache[1100];
  snprintf(cache, sizeof(cache), "%s/cache", f->dir);
  mcp_manager_options_set_cache_dir(o, cache);
  mcp_manager_options_set_timeout_ms(o, CALL_MS);
  mcp_client_options *co = options(f);
  ck_assert_int_eq(mcp_manager_options_add_server(o, "s", co), MCP_OK);
  mcp_client_options_free(co);
  mcp_manager *m = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_msg(mcp_manager_start(o, &m, &err) == MCP_OK, "start: %s",
                err.message ? err.message : "");
  mcp_manager_options_free(o);
  ck_assert_int_eq(mcp_manager_wait_ready(m, "s", START_MS, NULL), MCP_OK);
  return m;
}

/*
 * Through the manager: its own tools/list at connect survives a break (the
 * client sent it again).  A tool annotated idempotentHint ("safe") is sent
 * once more after a break, with a new id, sync and async; an unannotated
 * one ("echo") is not: it ran once and the caller gets the error.  None of
 * it reconnects: server/discover went once.
 */
START_TEST(manager_resend_rule) {
  fixture f;
  start(&f, _i,
        "eof@tools/list,reset@tools/call:echo,reset@tools/call:safe,pass@tools/call:safe,"
        "reset@tools/call:safe");
  mcp_manager *m = manager_for(&f);
  assert_arrivals(&f, "tools/list", NULL, 2, 1);
  char *out = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp_manager_call_tool(m, "s/echo", "{\"text\":\"e\"}", NULL, &out, &err),
                   MCP_EIO);
  mcp_error_clear(&err);
  assert_arrivals(&f, "tools/call", "echo", 1, 1);

  mcp_status st = mcp_manager_call_tool(m, "s/safe", "{\"text\":\"s1\"}", NULL, &out, &err);
  ck_assert_msg(st == MCP_OK, "safe: %s (%s)", mcp_strerror(st), err.message);
  ck_assert_ptr_nonnull(strstr(out, "s1"));
  mcp_free(out);
  assert_arrivals(&f, "tools/call", "safe", 2, 1);

  test_async a = TEST_ASYNC_INIT;
  ck_assert_int_eq(
      mcp_manager_call_tool_async(m, "s/safe", "{\"text\":\"s2\"}", NULL, test_on_async, &a, NULL),
      MCP_OK);
  ck_assert(WAIT_UNTIL(test_async_done(&a), CALL_MS));
  ck_assert_int_eq(a.st, MCP_OK);
  ck_assert_ptr_nonnull(strstr(a.result, "s2"));
  test_async_clear(&a);
  assert_arrivals(&f, "tools/call", "safe", 4, 2);
  assert_arrivals(&f, "server/discover", NULL, 1, 0);
  mcp_manager_free(m);
  stop(&f);
}
END_TEST

static Suite *reissue_suite(void) {
  Suite *s = suite_create("reissue");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 240);
  tcase_add_loop_test(tc, reads_reissued_once, 0, 2);
  tcase_add_loop_test(tc, second_break_and_calls_not_repeated, 0, 2);
  tcase_add_loop_test(tc, manager_resend_rule, 0, 2);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(reissue_suite()); }
