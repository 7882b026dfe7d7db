/* SPDX-License-Identifier: MIT */
/* check_jsonrpc.c: parse, classify and build JSON-RPC 2.0 messages. */
#include "config.h"

#include <string.h>

#include "check_util.h"
#include "mcp_jsonrpc.h"

static json_object *parse(const char *s) {
  const char *why = NULL;
  json_object *o = mcp__jsonrpc_parse(s, strlen(s), &why);
  return o;
}

static mcp_msg_kind kind_of(const char *s, mcp_msg *m) {
  json_object *o = parse(s);
  ck_assert_msg(o != NULL, "did not parse: %s", s);
  mcp_msg_kind k = mcp__jsonrpc_classify(o, m);
  json_object_put(o);
  return k;
}

START_TEST(parse_rejects_garbage) {
  const char *bad[] = {"", "{", "nope", "{\"a\":1} x", "{\"a\":1,}", "[1,2", "\"unterminated"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    const char *why = NULL;
    json_object *o = mcp__jsonrpc_parse(bad[i], strlen(bad[i]), &why);
    ck_assert_msg(o == NULL, "accepted %s", bad[i]);
    ck_assert_ptr_nonnull(why);
  }
}
END_TEST

START_TEST(parse_null_has_a_reason) {
  const char *why = NULL;
  ck_assert_ptr_null(mcp__jsonrpc_parse("null", 4, &why));
  ck_assert_ptr_nonnull(why);
  ck_assert_ptr_null(mcp__jsonrpc_parse(" null \n", 7, &why));
  ck_assert_ptr_nonnull(why);
}
END_TEST

START_TEST(parse_accepts_trailing_space) {
  json_object *o = parse("{\"a\":1} \r\n\t");
  ck_assert_ptr_nonnull(o);
  json_object_put(o);
}
END_TEST

START_TEST(parse_failure_leaves_no_state) {
  /* json-c 0.16 keeps a half-read surrogate pair across json_tokener_reset():
   * a malformed message ending in one must not change how the next
   * message's first \u escape decodes (the tokener is per thread). */
  const char *why = NULL;
  const char bad[] = "{\"x\":\"\\ud83d\\u";
  ck_assert_ptr_null(mcp__jsonrpc_parse(bad, strlen(bad), &why));
  json_object *o = parse("{\"text\":\"\\u0041BC\"}");
  ck_assert_ptr_nonnull(o);
  json_object *t = NULL;
  ck_assert(json_object_object_get_ex(o, "text", &t));
  ck_assert_str_eq(json_object_get_string(t), "ABC");
  json_object_put(o);
}
END_TEST

START_TEST(parse_depth_limit) {
  char buf[1024];
  size_t n = 0;
  for (int i = 0; i < 300; i++) buf[n++] = '[';
  for (int i = 0; i < 300; i++) buf[n++] = ']';
  const char *why = NULL;
  ck_assert_ptr_null(mcp__jsonrpc_parse(buf, n, &why));
  ck_assert_ptr_nonnull(why);
}
END_TEST

START_TEST(classify_kinds) {
  mcp_msg m;
  ck_assert_int_eq(kind_of("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", &m),
                   MCP_MSG_REQUEST);
  ck_assert_int_eq(
      kind_of("{\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"method\":\"roots/list\",\"params\":{}}", &m),
      MCP_MSG_REQUEST);
  ck_assert_int_eq(
      kind_of(
          "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1}}",
          &m),
      MCP_MSG_NOTIFICATION);
  ck_assert_int_eq(kind_of("{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"x\":1}}", &m),
                   MCP_MSG_RESPONSE);
  json_object *o = parse(
      "{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-32601,\"message\":\"nope\",\"data\":{\"k\":2}}}");
  ck_assert_int_eq(mcp__jsonrpc_classify(o, &m), MCP_MSG_ERROR);
  ck_assert_int_eq(m.error_code, -32601);
  ck_assert_str_eq(m.error_message, "nope");
  ck_assert_ptr_nonnull(m.error_data);
  int64_t id = 0;
  ck_assert(mcp__jsonrpc_id_int(m.id, &id));
  ck_assert_int_eq(id, 7);
  json_object_put(o);
  /* An error with id null (e.g. a parse error) is still an error. */
  ck_assert_int_eq(
      kind_of("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"x\"}}",
              &m),
      MCP_MSG_ERROR);
  ck_assert_ptr_null(m.id);
}
END_TEST

START_TEST(classify_invalid) {
  const char *bad[] = {
      "42",
      "[1]",
      "{\"id\":1,\"result\":{}}",                     /* no jsonrpc */
      "{\"jsonrpc\":\"1.0\",\"id\":1,\"result\":{}}", /* wrong version */
      "{\"jsonrpc\":\"2.0\"}",                        /* nothing */
      "{\"jsonrpc\":\"2.0\",\"id\":1}",               /* neither result nor error */
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{},\"error\":{\"code\":1}}", /* both */
      "{\"jsonrpc\":\"2.0\",\"id\":1.5,\"result\":{}}",                      /* float id */
      "{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":{}}",                       /* object id */
      "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"x\"}",                  /* null request id */
      "{\"jsonrpc\":\"2.0\",\"method\":5}",                  /* method not a string */
      "{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":3}", /* params scalar */
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"message\":\"no code\"}}",
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":\"str\"}",
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    mcp_msg m;
    ck_assert_msg(kind_of(bad[i], &m) == MCP_MSG_INVALID, "accepted %s", bad[i]);
    ck_assert_ptr_nonnull(m.invalid);
  }
}
END_TEST

START_TEST(build_roundtrip) {
  json_object *params = parse("{\"name\":\"echo\",\"arguments\":{\"text\":\"a\\nb/c\"}}");
  size_t len = 0;
  char *s = mcp__jsonrpc_request(42, "tools/call", params, &len);
  ck_assert_ptr_nonnull(s);
  ck_assert_uint_eq(len, strlen(s));
  ck_assert_ptr_null(strchr(s, '\n'));     /* one line on the wire */
  ck_assert_ptr_nonnull(strstr(s, "b/c")); /* slashes are not escaped */
  mcp_msg m;
  json_object *o = parse(s);
  ck_assert_int_eq(mcp__jsonrpc_classify(o, &m), MCP_MSG_REQUEST);
  ck_assert_str_eq(m.method, "tools/call");
  int64_t id;
  ck_assert(mcp__jsonrpc_id_int(m.id, &id));
  ck_assert_int_eq(id, 42);
  json_object_put(o);
  mcp__free(s);

  s = mcp__jsonrpc_notification("notifications/initialized", NULL, &len);
  ck_assert_str_eq(s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
  mcp__free(s);

  json_object *sid = json_object_new_string("s1");
  s = mcp__jsonrpc_result(sid, NULL, &len);
  ck_assert_str_eq(s, "{\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"result\":{}}");
  mcp__free(s);
  s = mcp__jsonrpc_error(sid, -32601, "Method not found", NULL, &len);
  ck_assert_str_eq(
      s,
      "{\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}");
  mcp__free(s);
  s = mcp__jsonrpc_error(NULL, -32700, "Parse error", NULL, &len);
  ck_assert_str_eq(
      s,
      "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error\"}}");
  mcp__free(s);
  json_object_put(sid);
  json_object_put(params);
}
END_TEST

START_TEST(builder_borrows_params) {
  /* The builders take their own references: the caller's tree survives. */
  json_object *params = parse("{\"a\":[1,2,3]}");
  for (int i = 0; i < 3; i++) {
    size_t len;
    char *s = mcp__jsonrpc_request(i + 1, "m", params, &len);
    ck_assert_ptr_nonnull(s);
    mcp__free(s);
  }
  ck_assert_int_eq(json_object_array_length(json_object_object_get(params, "a")), 3);
  json_object_put(params);
}
END_TEST

START_TEST(strerror_total) {
  for (int s = 0; s >= -40; s--) ck_assert_ptr_nonnull(mcp_strerror((mcp_status)s));
  ck_assert_str_eq(mcp_strerror((mcp_status)-999), "unknown status");
  mcp_error e = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp__error_set(&e, MCP_ETIMEDOUT, "after %d ms", 5), MCP_ETIMEDOUT);
  ck_assert_str_eq(e.message, "after 5 ms");
  mcp_error_clear(&e);
  ck_assert_ptr_null(e.message);
  mcp_error_clear(NULL);
}
END_TEST

static Suite *jsonrpc_suite(void) {
  Suite *s = suite_create("jsonrpc");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, parse_rejects_garbage);
  tcase_add_test(tc, parse_accepts_trailing_space);
  tcase_add_test(tc, parse_null_has_a_reason);
  tcase_add_test(tc, parse_depth_limit);
  tcase_add_test(tc, parse_failure_leaves_no_state);
  tcase_add_test(tc, classify_kinds);
  tcase_add_test(tc, classify_invalid);
  tcase_add_test(tc, build_roundtrip);
  tcase_add_test(tc, builder_borrows_params);
  tcase_add_test(tc, strerror_total);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(jsonrpc_suite()); }
