/* SPDX-License-Identifier: MIT */
/*
 * check_era_http.c: the modern (2026-07-28) HTTP wire and the era probe over
 * HTTP.  The pure parts on fixed cases (the header value encoding with the
 * spec's own examples, the routing headers read from request bodies); then
 * real servers, each a Node process on 127.0.0.1: the official TypeScript
 * SDK v2 handler (createMcpHandler, tests/interop/v2-dual-http.mjs) serving
 * both eras and modern-only, and a v1 SDK server (legacy only,
 * tests/interop/sdk-server.mjs).  What the client sent is read back from
 * the server's record of every HTTP request (method, MCP headers, body),
 * not taken on trust.
 *
 * The packages must be installed: `npm ci --prefix tests/interop`.
 */
#include "config.h"

#include <pthread.h>

#include <arpa/inet.h>
#include <json-c/json.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <sys/socket.h>

#include "check_interop_util.h"
#include "mcp_era.h"
#include "mcp_xhdr.h"
#include "mcpconn.h"

#define START_MS 60000 /* node's first start can be slow on a busy CI box */
#define CALL_MS 30000

/* ---- pure --------------------------------------------------------------- */

static void assert_value(const char *in, size_t n, const char *want) {
  char *v = mcp__era_header_value(in, n);
  ck_assert_ptr_nonnull(v);
  ck_assert_str_eq(v, want);
  free(v);
}

/* The examples of streamable-http "Value Encoding", and the edges. */
START_TEST(header_values) {
  assert_value("us-west1", 8, "us-west1");
  assert_value("Hello, \xe4\xb8\x96\xe7\x95\x8c", 13, "=?base64?SGVsbG8sIOS4lueVjA==?=");
  assert_value(" padded ", 8, "=?base64?IHBhZGRlZCA=?=");
  assert_value("line1\nline2", 11, "=?base64?bGluZTEKbGluZTI=?=");
  assert_value("=?base64?literal?=", 18, "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=");
  assert_value("a b", 3, "a b"); /* inner spaces are visible ASCII */
  assert_value("tab\there", 8, "=?base64?dGFiCWhlcmU=?=");
  assert_value("x\x7f", 2, "=?base64?eH8=?="); /* DEL is a control character */
  assert_value("", 0, "");
  assert_value("=?base64?"
               "?=",
               11, "=?base64?PT9iYXNlNjQ/Pz0=?=");
  assert_value("=?base64?", 9, "=?base64?"); /* no suffix: not the pattern */
}
END_TEST

static void assert_headers(const char *body, mcp_status want, const char *method,
                           const char *name) {
  char *m = NULL, *n = NULL;
  ck_assert_int_eq(mcp__era_request_headers(body, strlen(body), &m, &n), want);
  if (method) ck_assert_str_eq(m, method);
  else ck_assert_ptr_null(m);
  if (name) ck_assert_str_eq(n, name);
  else ck_assert_ptr_null(n);
  free(m);
  free(n);
}

START_TEST(routing_headers) {
  assert_headers("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"
                 "\"arguments\":{\"name\":\"inner\"},\"name\":\"get_weather\"}}",
                 MCP_OK, "tools/call", "get_weather");
  assert_headers("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/read\",\"params\":{"
                 "\"uri\":\"file:///projects/myapp/config.json\"}}",
                 MCP_OK, "resources/read", "file:///projects/myapp/config.json");
  assert_headers("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"prompts/get\",\"params\":{"
                 "\"name\":\"caf\\u00e9\"}}",
                 MCP_OK, "prompts/get", "=?base64?Y2Fmw6k=?=");
  assert_headers("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{"
                 "\"name\":\"a\\\"b\"}}",
                 MCP_OK, "tools/call", "a\"b");
  assert_headers("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tasks/get\",\"params\":{"
                 "\"taskId\":\"t-1\"}}",
                 MCP_OK, "tasks/get", "t-1");
  assert_headers("{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/list\",\"params\":{}}", MCP_OK,
                 "tools/list", NULL);
  assert_headers("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"server/discover\"}", MCP_OK,
                 "server/discover", NULL);
  /* A method that needs a name and has none, or no method: refused. */
  assert_headers("{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{}}",
                 MCP_EINVAL, NULL, NULL);
  assert_headers("{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"resources/read\"}", MCP_EINVAL, NULL,
                 NULL);
  assert_headers("{\"jsonrpc\":\"2.0\",\"id\":10,\"result\":{}}", MCP_EINVAL, NULL, NULL);
  assert_headers("{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":3}", MCP_EINVAL, NULL, NULL);
}
END_TEST

/* x-mcp-header rules (mcp_xhdr.h): the ten invalid shapes of conformance's
 * http-invalid-tool-headers are refused; conversions of a valid one. */
static mcp_status xread(const char *props, mcp_xhdr_tool **t) {
  char schema[1024], why[160];
  snprintf(schema, sizeof(schema), "{\"type\":\"object\",\"properties\":%s}", props);
  json_object *o = json_tokener_parse(schema);
  ck_assert_ptr_nonnull(o);
  mcp_status st = mcp__xhdr_read(o, t, why, sizeof(why));
  if (st == MCP_EINVAL) ck_assert_uint_gt(strlen(why), 0);
  json_object_put(o);
  return st;
}

START_TEST(param_header_rules) {
  static const char *const bad[] = {
      "{\"a\":{\"type\":\"string\",\"x-mcp-header\":\"\"}}",
      "{\"a\":{\"type\":\"object\",\"x-mcp-header\":\"A\"}}",
      "{\"a\":{\"type\":\"array\",\"x-mcp-header\":\"A\"}}",
      "{\"a\":{\"type\":\"null\",\"x-mcp-header\":\"A\"}}",
      "{\"a\":{\"type\":\"number\",\"x-mcp-header\":\"A\"}}",
      "{\"a\":{\"type\":\"string\",\"x-mcp-header\":\"A\"},\"b\":{\"type\":\"string\","
      "\"x-mcp-header\":\"A\"}}",
      "{\"a\":{\"type\":\"string\",\"x-mcp-header\":\"Ab\"},\"b\":{\"type\":\"string\","
      "\"x-mcp-header\":\"aB\"}}",
      "{\"a\":{\"type\":\"string\",\"x-mcp-header\":\"A B\"}}",
      "{\"a\":{\"type\":\"string\",\"x-mcp-header\":\"A:B\"}}",
      "{\"a\":{\"type\":\"string\",\"x-mcp-header\":\"R\\u00e9gion\"}}",
      "{\"a\":{\"type\":\"string\",\"x-mcp-header\":\"A\\u0001\"}}",
      "{\"a\":{\"type\":\"array\",\"items\":{\"type\":\"string\",\"x-mcp-header\":\"I\"}}}",
      "{\"a\":{\"anyOf\":[{\"type\":\"string\",\"x-mcp-header\":\"I\"}]}}",
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    mcp_xhdr_tool *t = NULL;
    ck_assert_msg(xread(bad[i], &t) == MCP_EINVAL, "accepted %s", bad[i]);
    ck_assert_ptr_null(t);
  }
  mcp_xhdr_tool *t = NULL;
  ck_assert_int_eq(xread("{\"q\":{\"type\":\"string\"}}", &t), MCP_OK);
  ck_assert_ptr_null(t); /* no annotations: nothing to mirror */
  ck_assert_int_eq(
      xread("{\"r\":{\"type\":\"string\",\"x-mcp-header\":\"Region\"},\"m\":{\"type\":\"string\","
            "\"x-mcp-header\":\"Method\"},\"n\":{\"type\":\"integer\",\"x-mcp-header\":\"N\"},"
            "\"v\":{\"type\":\"boolean\",\"x-mcp-header\":\"V\"},\"e\":{\"type\":\"string\","
            "\"x-mcp-header\":\"E\"},\"o\":{\"type\":\"object\",\"properties\":{\"d\":{\"type\":"
            "\"string\",\"x-mcp-header\":\"Deep\"}}}}",
            &t),
      MCP_OK);
  ck_assert_uint_eq(t->n, 6);
  json_object *args = json_tokener_parse(
      "{\"r\":\"us west 1\",\"m\":\"test-method\",\"n\":42,\"v\":false,\"e\":\"\",\"o\":{\"d\":"
      "\"line1\\nline2\"},\"q\":\"SELECT 1\"}");
  char *names[MCP_XHDR_MAX], *values[MCP_XHDR_MAX];
  size_t n = 0;
  ck_assert_int_eq(mcp__xhdr_values(t, args, names, values, &n), MCP_OK);
  ck_assert_uint_eq(n, 6);
  static const char *const want[][2] = {{"Mcp-Param-Region", "us west 1"},
                                        {"Mcp-Param-Method", "test-method"},
                                        {"Mcp-Param-N", "42"},
                                        {"Mcp-Param-V", "false"},
                                        {"Mcp-Param-E", ""},
                                        {"Mcp-Param-Deep", "=?base64?bGluZTEKbGluZTI=?="}};
  for (size_t i = 0; i < n; i++) {
    bool found = false;
    for (size_t k = 0; k < 6; k++)
      if (strcmp(names[i], want[k][0]) == 0) {
        ck_assert_str_eq(values[i], want[k][1]);
        found = true;
      }
    ck_assert_msg(found, "unexpected %s", names[i]);
    free(names[i]);
    free(values[i]);
  }
  json_object_put(args);
  /* null or absent: no header. */
  args = json_tokener_parse("{\"r\":null}");
  ck_assert_int_eq(mcp__xhdr_values(t, args, names, values, &n), MCP_OK);
  ck_assert_uint_eq(n, 0);
  json_object_put(args);
  mcp__xhdr_free(t);
}
END_TEST

/* ---- live --------------------------------------------------------------- */

typedef struct fixture {
  node_server server;
  char url[256];
  char dir[1024];
  char record[1200];
  mcp_client *client;
} fixture;

static void start(fixture *f, const char *script, const char *legacy) {
  memset(f, 0, sizeof(*f));
  interop_mkdtemp(f->dir, sizeof(f->dir), "era-http");
  snprintf(f->record, sizeof(f->record), "%s/record.jsonl", f->dir);
  char rec_env[1300], leg_env[64];
  snprintf(rec_env, sizeof(rec_env), "RECORD=%s", f->record);
  snprintf(leg_env, sizeof(leg_env), "LEGACY=%s", legacy ? legacy : "");
  const char *env[3] = {rec_env, legacy ? leg_env : NULL, NULL};
  const char *args[] = {interop_path(script), NULL};
  node_server_start(&f->server, env, START_MS, args);
  snprintf(f->url, sizeof(f->url), "http://127.0.0.1:%d/mcp", f->server.port);
}

static void stop(fixture *f) {
  mcp_client_free(f->client);
  f->client = NULL;
  node_server_stop(&f->server);
  interop_rm_rf(f->dir);
}

/* The host's elicitation answer: accept, {"ok":true}; counts its calls. */
static atomic_int elicits;
static mcp_status on_elicit(void *user, const char *method, const char *params, char **result,
                            mcp_error *err) {
  (void)user;
  (void)err;
  ck_assert_str_eq(method, "elicitation/create");
  ck_assert_ptr_nonnull(strstr(params, "Go on?"));
  atomic_fetch_add(&elicits, 1);
  *result = strdup("{\"action\":\"accept\",\"content\":{\"ok\":true}}");
  return MCP_OK;
}

static mcp_status connect_mode(fixture *f, const char *protocol, mcp_client **out, mcp_error *err) {
  mcp_client_options *o = mcp_client_options_new();
  ck_assert_ptr_nonnull(o);
  ck_assert_int_eq(mcp_client_options_set_request_handler(o, "elicitation/create", on_elicit, NULL),
                   MCP_OK);
  ck_assert_int_eq(mcp_client_options_set_http(o, f->url, MCP_HTTP_TRANSPORT_STREAMABLE), MCP_OK);
  ck_assert_int_eq(mcp_client_options_set_protocol(o, protocol), MCP_OK);
  mcp_client_options_set_timeout_ms(o, START_MS);
  mcp_status st = mcp_client_connect(o, out, err);
  mcp_client_options_free(o);
  return st;
}

static void connect_ok(fixture *f, const char *protocol) {
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = connect_mode(f, protocol, &f->client, &err);
  ck_assert_msg(st == MCP_OK, "connect %s to %s: %s (%s)", protocol, f->url, mcp_strerror(st),
                err.message ? err.message : "");
  mcp_error_clear(&err);
}

static char *call_text(mcp_client *c, const char *tool, const char *args) {
  char *result = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_client_call_tool(c, tool, args, NULL, &result, &err);
  ck_assert_msg(st == MCP_OK, "call %s: %s (%s)", tool, mcp_strerror(st),
                err.message ? err.message : "");
  mcp_error_clear(&err);
  char *text = NULL;
  ck_assert_int_eq(mcp_tool_result_text(result, strlen(result), &text, NULL, NULL), MCP_OK);
  free(result);
  return text;
}

/* Reads the server's record: one JSON object per HTTP request. */
static json_object *read_record(const fixture *f) {
  json_object *arr = json_object_new_array();
  FILE *fp = fopen(f->record, "r");
  if (!fp) return arr;
  char *line = NULL;
  size_t cap = 0;
  while (getline(&line, &cap, fp) > 0) {
    json_object *o = json_tokener_parse(line);
    ck_assert_msg(o != NULL, "record line is no JSON: %s", line);
    json_object_array_add(arr, o);
  }
  free(line);
  fclose(fp);
  return arr;
}

static const char *hdr(json_object *rec, const char *name) {
  json_object *h = NULL, *v = NULL;
  if (!json_object_object_get_ex(rec, "headers", &h) || !json_object_object_get_ex(h, name, &v))
    return NULL;
  return json_object_get_string(v);
}

/* Decodes the =?base64?...?= form (or returns the value as it is). */
static char *decode_value(const char *v) {
  size_t n = strlen(v);
  if (n < 11 || strncmp(v, "=?base64?", 9) != 0 || strcmp(v + n - 2, "?=") != 0) return strdup(v);
  static const char al[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  char *out = calloc(1, n);
  size_t o = 0, bits = 0;
  unsigned acc = 0;
  for (const char *p = v + 9; p < v + n - 2 && *p != '='; p++) {
    const char *k = strchr(al, *p);
    ck_assert_ptr_nonnull(k);
    acc = acc << 6 | (unsigned)(k - al);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (char)(acc >> bits & 0xff);
    }
  }
  return out;
}

/*
 * Every request the client sent on the modern wire: a POST with
 * MCP-Protocol-Version 2026-07-28, Mcp-Method equal to the body's method,
 * Mcp-Name equal (decoded) to params.name / params.uri where the method has
 * one, no session, and the modern _meta in the body; no GET, no DELETE, no
 * initialize, no notification.  Returns how many tools/call went out.
 */
static int assert_modern_wire(const fixture *f) {
  json_object *arr = read_record(f);
  size_t n = json_object_array_length(arr);
  ck_assert_uint_gt(n, 0);
  int calls = 0;
  for (size_t i = 0; i < n; i++) {
    json_object *rec = json_object_array_get_idx(arr, i), *m = NULL, *b = NULL;
    ck_assert(json_object_object_get_ex(rec, "method", &m));
    ck_assert_str_eq(json_object_get_string(m), "POST");
    ck_assert(json_object_object_get_ex(rec, "body", &b));
    json_object *body = json_tokener_parse(json_object_get_string(b));
    ck_assert_ptr_nonnull(body);
    json_object *jm = NULL, *params = NULL, *meta = NULL, *id = NULL;
    ck_assert_msg(json_object_object_get_ex(body, "method", &jm), "no method in %s",
                  json_object_get_string(b));
    ck_assert_msg(json_object_object_get_ex(body, "id", &id), "a notification went out: %s",
                  json_object_get_string(b));
    const char *method = json_object_get_string(jm);
    ck_assert_str_ne(method, "initialize");
    ck_assert_str_ne(method, "ping");
    ck_assert_ptr_nonnull(hdr(rec, "mcp-protocol-version"));
    ck_assert_str_eq(hdr(rec, "mcp-protocol-version"), "2026-07-28");
    ck_assert_ptr_nonnull(hdr(rec, "mcp-method"));
    ck_assert_str_eq(hdr(rec, "mcp-method"), method);
    ck_assert_ptr_null(hdr(rec, "mcp-session-id"));
    ck_assert(json_object_object_get_ex(body, "params", &params));
    ck_assert(json_object_object_get_ex(params, "_meta", &meta));
    json_object *pv = NULL;
    ck_assert(json_object_object_get_ex(meta, "io.modelcontextprotocol/protocolVersion", &pv));
    ck_assert_str_eq(json_object_get_string(pv), "2026-07-28");
    const char *key = strcmp(method, "tools/call") == 0 || strcmp(method, "prompts/get") == 0
                          ? "name"
                      : strcmp(method, "resources/read") == 0 ? "uri"
                                                              : NULL;
    if (key) {
      json_object *nv = NULL;
      ck_assert(json_object_object_get_ex(params, key, &nv));
      const char *h = hdr(rec, "mcp-name");
      ck_assert_msg(h != NULL, "%s without Mcp-Name", method);
      char *dec = decode_value(h);
      ck_assert_str_eq(dec, json_object_get_string(nv));
      free(dec);
    } else {
      ck_assert_ptr_null(hdr(rec, "mcp-name"));
    }
    if (strcmp(method, "tools/call") == 0) calls++;
    json_object_put(body);
  }
  json_object_put(arr);
  return calls;
}

/* The v2 SDK's multi-round-trip tool over HTTP: an input round answered
 * by the host's handler and retried on the modern wire.  (Its legacy half
 * is check_era's stdio test: createMcpHandler serves 2025 requests one at
 * a time, without a session, so it cannot send the elicitation there.) */
START_TEST(v2_mrtr_modern) {
  fixture f;
  start(&f, "v2-dual-http.mjs", NULL);
  atomic_store(&elicits, 0);
  connect_ok(&f, "auto");
  ck_assert_str_eq(mcp_client_protocol_version(f.client), "2026-07-28");
  char *t = call_text(f.client, "confirm", NULL);
  ck_assert_str_eq(t, "confirmed {\"ok\":true}");
  free(t);
  ck_assert_int_eq(atomic_load(&elicits), 1);
  /* The first call and its retry, both on the modern wire. */
  ck_assert_int_eq(assert_modern_wire(&f), 2);
  stop(&f);
}
END_TEST

/* The server's record shows the tools/call whose arguments hold |marker|
 * sent twice, with one tools/list between: a -32020 answered by reading
 * the list and resending once. */
static void assert_resent_after_list(fixture *f, const char *marker) {
  json_object *arr = read_record(f);
  int calls = 0, lists_between = 0;
  for (size_t i = 0; i < json_object_array_length(arr); i++) {
    const char *m = hdr(json_object_array_get_idx(arr, i), "mcp-method");
    if (m && strcmp(m, "tools/call") == 0 &&
        strstr(json_object_to_json_string(json_object_array_get_idx(arr, i)), marker))
      calls++;
    else if (calls == 1 && m && strcmp(m, "tools/list") == 0) lists_between++;
  }
  json_object_put(arr);
  ck_assert_int_eq(calls, 2);
  ck_assert_int_eq(lists_between, 1);
}

/* x-mcp-header: a tool whose annotation is no HTTP token is left out of
 * the list; the annotated arguments of a call go as Mcp-Param-* headers
 * (string as is, base64 when it has a trailing space; integer; boolean),
 * which the SDK server checks against the body; a plain one does not. */
START_TEST(v2_param_headers) {
  fixture f;
  start(&f, "v2-dual-http.mjs", NULL);
  connect_ok(&f, "auto");
  char *list = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp_client_list_tools(f.client, NULL, &list, &err), MCP_OK);
  ck_assert_ptr_nonnull(strstr(list, "\"name\":\"route\""));
  ck_assert_ptr_nonnull(strstr(list, "\"name\":\"echo\""));
  ck_assert_ptr_null(strstr(list, "badhdr"));
  free(list);
  char *t = call_text(f.client, "route",
                      "{\"region\":\"eu west \",\"n\":7,\"flag\":true,\"note\":\"x\"}");
  ck_assert_str_eq(t, "routed eu west ");
  free(t);
  json_object *arr = read_record(&f);
  bool seen = false;
  for (size_t i = 0; i < json_object_array_length(arr); i++) {
    json_object *rec = json_object_array_get_idx(arr, i);
    const char *m = hdr(rec, "mcp-method"), *name = hdr(rec, "mcp-name");
    if (!m || strcmp(m, "tools/call") != 0 || !name || strcmp(name, "route") != 0) continue;
    seen = true;
    ck_assert_ptr_nonnull(hdr(rec, "mcp-param-region"));
    char *region = decode_value(hdr(rec, "mcp-param-region"));
    ck_assert_str_eq(region, "eu west ");
    ck_assert_str_ne(hdr(rec, "mcp-param-region"), "eu west "); /* encoded */
    free(region);
    ck_assert_str_eq(hdr(rec, "mcp-param-n"), "7");
    ck_assert_str_eq(hdr(rec, "mcp-param-flag"), "true");
    ck_assert_ptr_null(hdr(rec, "mcp-param-note"));
  }
  json_object_put(arr);
  ck_assert(seen);
  assert_modern_wire(&f);
  /* A client that calls before it lists (as from the tool cache): the
   * server's -32020 makes it read the list and try once more. */
  mcp_client_free(f.client);
  f.client = NULL;
  connect_ok(&f, "auto");
  t = call_text(f.client, "route", "{\"region\":\"r2\",\"n\":1,\"flag\":false}");
  ck_assert_str_eq(t, "routed r2");
  free(t);
  assert_resent_after_list(&f, "r2");
  stop(&f);
}
END_TEST

/* The async call that meets -32020 (Mcp-Param-* headers it did not know:
 * no list read yet) reads the list and sends it once more, as the sync
 * call does. */
START_TEST(v2_param_headers_async) {
  fixture f;
  start(&f, "v2-dual-http.mjs", NULL);
  connect_ok(&f, "auto");
  test_async a = TEST_ASYNC_INIT;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp_client_call_tool_async(f.client, "route",
                                              "{\"region\":\"r3\",\"n\":1,\"flag\":false}", NULL,
                                              test_on_async, &a, &err),
                   MCP_OK);
  ck_assert(WAIT_UNTIL(test_async_done(&a), 30000));
  ck_assert_msg(a.st == MCP_OK, "%s: %s", mcp_strerror(a.st), a.message ? a.message : "");
  char *text = NULL;
  ck_assert_int_eq(mcp_tool_result_text(a.result, strlen(a.result), &text, NULL, NULL), MCP_OK);
  ck_assert_str_eq(text, "routed r3");
  free(text);
  test_async_clear(&a);
  assert_resent_after_list(&f, "r3");
  stop(&f);
}
END_TEST

/* A dual-era v2 server in mode auto: modern, every request on the modern
 * wire, a non-ASCII tool name carried base64-encoded, resources read. */
START_TEST(v2_dual_auto_is_modern) {
  fixture f;
  start(&f, "v2-dual-http.mjs", NULL);
  connect_ok(&f, "auto");
  ck_assert_str_eq(mcp_client_protocol_version(f.client), "2026-07-28");
  char *t = call_text(f.client, "echo", "{\"text\":\"hi\"}");
  ck_assert_str_eq(t, "hi");
  free(t);
  t = call_text(f.client,
                "\xc3\xa9"
                "cho",
                "{\"text\":\"hi\"}");
  ck_assert_str_eq(t, "\xc3\xa9"
                      "hi");
  free(t);
  char *res = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp_client_read_resource(f.client, "mem://note", NULL, &res, &err), MCP_OK);
  ck_assert_ptr_nonnull(strstr(res, "a note"));
  free(res);
  /* An unknown tool: the server's JSON-RPC error, as on the legacy wire. */
  char *r = NULL;
  mcp_status st = mcp_client_call_tool(f.client, "nope", "{}", NULL, &r, &err);
  ck_assert_int_eq(st, MCP_ERPC);
  ck_assert_ptr_nonnull(err.message);
  mcp_error_clear(&err);
  free(r);
  ck_assert_int_eq(mcp_client_ping(f.client, NULL, &err), MCP_OK);
  ck_assert_int_eq(assert_modern_wire(&f), 3);
  stop(&f);
}
END_TEST

/* Modern-only (legacy: 'reject'): auto and modern work; legacy is refused
 * by the server, and that refusal is what the error says. */
START_TEST(v2_modern_only) {
  fixture f;
  start(&f, "v2-dual-http.mjs", "reject");
  connect_ok(&f, "modern");
  char *t = call_text(f.client, "echo", "{\"text\":\"strict\"}");
  ck_assert_str_eq(t, "strict");
  free(t);
  mcp_client_free(f.client);
  f.client = NULL;
  connect_ok(&f, "auto");
  ck_assert_str_eq(mcp_client_protocol_version(f.client), "2026-07-28");
  assert_modern_wire(&f);
  mcp_client_free(f.client);
  f.client = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_client *c = NULL;
  mcp_status st = connect_mode(&f, "legacy", &c, &err);
  ck_assert_int_ne(st, MCP_OK);
  ck_assert_ptr_null(c);
  ck_assert_msg(err.message && strstr(err.message, "HTTP 4"), "legacy refused: %s",
                err.message ? err.message : "");
  mcp_error_clear(&err);
  stop(&f);
}
END_TEST

/* A timed-out call on modern HTTP is cancelled by closing its stream: no
 * notifications/cancelled goes out (none is defined there), and the
 * connection serves the next call. */
START_TEST(v2_cancel_closes_stream) {
  fixture f;
  start(&f, "v2-dual-http.mjs", NULL);
  connect_ok(&f, "auto");
  char *r = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_call_options *o = mcp_call_options_new();
  ck_assert_ptr_nonnull(o);
  mcp_call_options_set_timeout_ms(o, 300);
  ck_assert_int_eq(mcp_client_call_tool(f.client, "slow", "{\"ms\":5000}", o, &r, &err),
                   MCP_ETIMEDOUT);
  mcp_call_options_free(o);
  free(r);
  mcp_error_clear(&err);
  char *t = call_text(f.client, "echo", "{\"text\":\"after\"}");
  ck_assert_str_eq(t, "after");
  free(t);
  ck_assert_int_eq(assert_modern_wire(&f), 2); /* it checks that no notification went out */
  stop(&f);
}
END_TEST

/* Progress and cancellation with the SDK v2 server over HTTP (_i bit 0:
 * legacy, else auto, which is modern; bit 1: h2c, else HTTP/1.1): the
 * reports arrive on the call's stream; a cancel is notifications/cancelled
 * on the legacy wire and the stream's close on the modern one, and either
 * way the SDK's handler sees the abort. */
START_TEST(v2_progress_and_cancel) {
  bool legacy = _i & 1, h2 = _i & 2;
  fixture f;
  memset(&f, 0, sizeof(f));
  interop_mkdtemp(f.dir, sizeof(f.dir), "era-http");
  snprintf(f.record, sizeof(f.record), "%s/record.jsonl", f.dir);
  char rec_env[1300], abort_env[1300], abort_log[1200];
  snprintf(abort_log, sizeof(abort_log), "%s/aborts", f.dir);
  snprintf(rec_env, sizeof(rec_env), "RECORD=%s", f.record);
  snprintf(abort_env, sizeof(abort_env), "ABORT_LOG=%s", abort_log);
  const char *env[] = {rec_env, abort_env, h2 ? "H2=1" : NULL, NULL};
  node_server_start(&f.server, env, START_MS,
                    (const char *const[]){interop_path("v2-dual-http.mjs"), NULL});
  snprintf(f.url, sizeof(f.url), "http://127.0.0.1:%d/mcp", f.server.port);
  mcp_client_options *o = mcp_client_options_new();
  ck_assert_int_eq(mcp_client_options_set_http(o, f.url, MCP_HTTP_TRANSPORT_STREAMABLE), MCP_OK);
  ck_assert_int_eq(mcp_client_options_set_protocol(o, legacy ? "legacy" : "auto"), MCP_OK);
  mcp_client_options_set_http_version(o, h2 ? MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE
                                            : MCP_HTTP_VERSION_1_1);
  mcp_client_options_set_timeout_ms(o, START_MS);
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_client_connect(o, &f.client, &err);
  mcp_client_options_free(o);
  ck_assert_msg(st == MCP_OK, "connect: %s", err.message ? err.message : mcp_strerror(st));
  ck_assert_str_eq(mcp_client_protocol_version(f.client), legacy ? "2025-11-25" : "2026-07-28");
  test_progress_and_cancel(f.client, abort_log);
  mcp_client_free(f.client);
  f.client = NULL;
  json_object *arr = read_record(&f);
  int cancels = 0;
  for (size_t i = 0; i < json_object_array_length(arr); i++) {
    json_object *b = NULL;
    if (json_object_object_get_ex(json_object_array_get_idx(arr, i), "body", &b) &&
        strstr(json_object_get_string(b), "notifications/cancelled"))
      cancels++;
  }
  json_object_put(arr);
  ck_assert_int_eq(cancels, legacy ? 1 : 0);
  if (!legacy) assert_modern_wire(&f);
  stop(&f);
}
END_TEST

/* A legacy server (v1 SDK, stateful Streamable HTTP): auto probes once and
 * falls back to initialize; modern is refused with the reason. */
START_TEST(v1_legacy_fallback) {
  fixture f;
  start(&f, "sdk-server.mjs", NULL);
  connect_ok(&f, "auto");
  const char *v = mcp_client_protocol_version(f.client);
  ck_assert_ptr_nonnull(v);
  ck_assert_msg(strncmp(v, "2025-", 5) == 0, "legacy version, got %s", v);
  char *t = call_text(f.client, "echo", "{\"message\":\"legacy\"}");
  ck_assert_ptr_nonnull(strstr(t, "legacy"));
  free(t);
  mcp_client_free(f.client);
  f.client = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_client *c = NULL;
  ck_assert_int_eq(connect_mode(&f, "modern", &c, &err), MCP_EVERSION);
  ck_assert_ptr_null(c);
  ck_assert_ptr_nonnull(err.message);
  ck_assert_msg(strstr(err.message, "2026-07-28") != NULL, "names the version: %s", err.message);
  mcp_error_clear(&err);
  stop(&f);
}
END_TEST

/*
 * The probe against legacy servers that answer it the way deployed ones
 * do (tests/era/era-http.mjs): a plain-text 400, 400 -32600, -32601, a
 * 404, a DiscoverResult listing legacy versions only: each is legacy
 * evidence, so auto sends one probe, then initialize, and the call works.
 * A connection destroyed on the probe and a 503 are not evidence: the
 * connect fails with that cause and no initialize goes out.
 */
static const char *const probe_kinds[] = {"text400",    "rpc32600", "rpc32601", "404",
                                          "legacylist", "close",    "503"};

START_TEST(legacy_probe_answers) {
  const char *kind = probe_kinds[_i];
  bool evidence = _i < 5;
  fixture f;
  memset(&f, 0, sizeof(f));
  interop_mkdtemp(f.dir, sizeof(f.dir), "era-http");
  snprintf(f.record, sizeof(f.record), "%s/record", f.dir);
  char rec_env[1300], probe_env[64], script[4200];
  snprintf(rec_env, sizeof(rec_env), "RECORD=%s", f.record);
  snprintf(probe_env, sizeof(probe_env), "PROBE=%s", kind);
  snprintf(script, sizeof(script), "%s/tests/era/era-http.mjs", test_env_path("MCP_SRCDIR"));
  const char *env[] = {rec_env, probe_env, NULL};
  node_server_start(&f.server, env, START_MS, (const char *const[]){script, NULL});
  snprintf(f.url, sizeof(f.url), "http://127.0.0.1:%d/mcp", f.server.port);
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = connect_mode(&f, "auto", &f.client, &err);
  if (evidence) {
    ck_assert_msg(st == MCP_OK, "%s: %s", kind, err.message ? err.message : mcp_strerror(st));
    ck_assert_str_eq(mcp_client_protocol_version(f.client), "2025-11-25");
    char *t = call_text(f.client, "echo", "{\"text\":\"legacy\"}");
    ck_assert_str_eq(t, "legacy");
    free(t);
  } else {
    ck_assert_msg(st != MCP_OK && st != MCP_EVERSION, "%s: %s", kind, mcp_strerror(st));
    ck_assert_msg(err.message && strstr(err.message, _i == 5 ? "closed" : "503"), "%s: cause: %s",
                  kind, err.message ? err.message : "");
  }
  mcp_error_clear(&err);
  int probes = test_count_in_file(f.record, "\"server/discover\"");
  int inits = test_count_in_file(f.record, "\"method\":\"initialize\"");
  ck_assert_msg(probes == 1, "%s: %d probes", kind, probes);
  ck_assert_msg(inits == (evidence ? 1 : 0), "%s: %d initialize", kind, inits);
  stop(&f);
}
END_TEST

/* Nothing listening: the probe's failure is the cause, not legacy. */
START_TEST(refused_is_no_evidence) {
  fixture f;
  memset(&f, 0, sizeof(f));
  int port = 0;
  {
    /* A port that was free a moment ago. */
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    ck_assert_int_eq(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
    socklen_t al = sizeof(a);
    getsockname(s, (struct sockaddr *)&a, &al);
    port = ntohs(a.sin_port);
    close(s);
  }
  snprintf(f.url, sizeof(f.url), "http://127.0.0.1:%d/mcp", port);
  mcp_error err = MCP_ERROR_INIT;
  mcp_client *c = NULL;
  mcp_status st = connect_mode(&f, "auto", &c, &err);
  ck_assert_int_ne(st, MCP_OK);
  ck_assert_int_ne(st, MCP_EVERSION);
  ck_assert_msg(err.message && strstr(err.message, "refused"), "cause: %s",
                err.message ? err.message : "");
  mcp_error_clear(&err);
}
END_TEST

int main(void) {
  Suite *s = suite_create("era_http");
  TCase *pure = tcase_create("pure");
  tcase_add_test(pure, header_values);
  tcase_add_test(pure, routing_headers);
  tcase_add_test(pure, param_header_rules);
  suite_add_tcase(s, pure);
  TCase *live = tcase_create("live");
  tcase_set_timeout(live, 240);
  tcase_add_test(live, v2_dual_auto_is_modern);
  tcase_add_test(live, v2_modern_only);
  tcase_add_test(live, v2_cancel_closes_stream);
  tcase_add_loop_test(live, v2_progress_and_cancel, 0, 4);
  tcase_add_test(live, v2_mrtr_modern);
  tcase_add_test(live, v2_param_headers);
  tcase_add_test(live, v2_param_headers_async);
  tcase_add_test(live, v1_legacy_fallback);
  tcase_add_loop_test(live, legacy_probe_answers, 0, 7);
  tcase_add_test(live, refused_is_no_evidence);
  suite_add_tcase(s, live);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
