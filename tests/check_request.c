/* SPDX-License-Identifier: MIT */
/*
 * check_request.c: the request builders (mcp_request.h).  Whatever path
 * built a request (the scanner's text, or json-c for what it refuses), the
 * wire text must be byte for byte what json-c prints for the same request
 * built as a tree: checked on fixed cases and, differentially, on every
 * input of the scanner's fuzz corpus.
 */
#include "config.h"

#include <dirent.h>
#include <json-c/json.h>
#include <stdint.h>

#include "check_util.h"
#include "mcp_jsonrpc.h"
#include "mcp_request.h"

#define PRINT (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

/* Members a modern request carries in _meta (mcp_era.h), as text. */
static const char MODERN_META[] =
    "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
    "\"io.modelcontextprotocol/clientCapabilities\":{\"roots\":{}},"
    "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"t\",\"version\":\"1\"}";

/* The tree form of request |method| with |params| (stolen, may be NULL) and
 * id |id|: the |meta| members (text, or NULL) and then the progress token
 * added to params._meta as the client always did; printed. */
static char *tree_request(int64_t id, const char *method, json_object *params, bool progress,
                          const char *meta) {
  if (progress || meta) {
    if (!params) params = json_object_new_object();
    json_object *m = NULL;
    if (!json_object_object_get_ex(params, "_meta", &m) ||
        !json_object_is_type(m, json_type_object)) {
      m = json_object_new_object();
      json_object_object_add(params, "_meta", m);
    }
    if (meta) {
      char wrapped[1024];
      snprintf(wrapped, sizeof(wrapped), "{%s}", meta);
      json_object *add = mcp__jsonrpc_parse(wrapped, strlen(wrapped), NULL);
      ck_assert_ptr_nonnull(add);
      json_object_object_foreach(add, k, v) json_object_object_add(m, k, json_object_get(v));
      json_object_put(add);
    }
    if (progress) json_object_object_add(m, "progressToken", json_object_new_int64(id));
  }
  json_object *o = json_object_new_object();
  json_object_object_add(o, "jsonrpc", json_object_new_string("2.0"));
  json_object_object_add(o, "id", json_object_new_int64(id));
  json_object_object_add(o, "method", json_object_new_string(method));
  if (params) json_object_object_add(o, "params", params);
  char *s = strdup(json_object_to_json_string_ext(o, PRINT));
  json_object_put(o);
  return s;
}

static json_object *parse(const char *s) { return mcp__jsonrpc_parse(s, strlen(s), NULL); }

/* Asserts that |r|'s text for |id| (with and without progress, with and
 * without the modern _meta) matches the tree form of the same request;
 * |params| is the tree of its params (put). */
static void assert_same(const mcp_req *r, int64_t id, json_object *params) {
  for (int k = 0; k < 4; k++) {
    bool progress = k & 1;
    const char *meta = k & 2 ? MODERN_META : NULL;
    size_t len = 0;
    char *got = mcp__req_text(r, id, progress, meta, meta ? strlen(meta) : 0, &len);
    ck_assert_ptr_nonnull(got);
    ck_assert_uint_eq(strlen(got), len);
    json_object *copy = NULL;
    if (params) json_object_deep_copy(params, &copy, NULL);
    char *want = tree_request(id, r->method, copy, progress, meta);
    ck_assert_str_eq(got, want);
    mcp__free(got);
    free(want);
  }
  json_object_put(params);
}

static json_object *tool_params(const char *name, const char *args) {
  json_object *p = json_object_new_object();
  json_object_object_add(p, "name", json_object_new_string(name));
  json_object_object_add(p, "arguments", args ? parse(args) : json_object_new_object());
  return p;
}

START_TEST(tool_call_both_paths) {
  static const char *const args[] = {
      NULL,
      "{}",
      "  { \"text\" : \"hi\", \"n\": 3 } ",
      "{\"a\":[1,2.5,-0.25e3,true,null],\"b\":{\"c\":{}}}",
      "{\"u\":\"caf\\u00e9 \\/ \\ud83d\\ude00\"}", /* escapes json-c rewrites: json-c path */
      "{\"big\":123456789012345678901234567890}",  /* past 18 digits: json-c path */
      "{\"k\":1,\"k\":2}",                         /* a repeated key: json-c path */
      "{\"_meta\":{\"x\":1},\"q\":\"</script>\"}",
  };
  for (size_t i = 0; i < sizeof(args) / sizeof(args[0]); i++) {
    mcp_req r;
    mcp_error err = MCP_ERROR_INIT;
    ck_assert_int_eq(mcp__req_tool_call(&r, "echo \"me\"", args[i], &err), MCP_OK);
    ck_assert(r.tool_call);
    ck_assert_str_eq(r.method, "tools/call");
    assert_same(&r, 1 + (int64_t)i * 1000003, tool_params("echo \"me\"", args[i]));
    mcp__req_clear(&r);
  }
}
END_TEST

START_TEST(every_method) {
  mcp_req r;
  mcp_error err = MCP_ERROR_INIT;
  /* No params: no "params" member, unless progress needs one. */
  ck_assert_int_eq(mcp__req_generic(&r, "ping", NULL, &err), MCP_OK);
  size_t len = 0;
  char *t = mcp__req_text(&r, 7, false, NULL, 0, &len);
  ck_assert_str_eq(t, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}");
  mcp__free(t);
  t = mcp__req_text(&r, 7, true, NULL, 0, &len);
  ck_assert_str_eq(t, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\","
                      "\"params\":{\"_meta\":{\"progressToken\":7}}}");
  mcp__free(t);
  assert_same(&r, 7, NULL);
  mcp__req_clear(&r);
  /* Empty params object and progress: no stray comma. */
  ck_assert_int_eq(mcp__req_generic(&r, "x/y", " { } ", &err), MCP_OK);
  assert_same(&r, 8, parse("{}"));
  mcp__req_clear(&r);
  /* Params holding a _meta: the token joins it; a non-object _meta is
   * replaced. */
  ck_assert_int_eq(mcp__req_generic(&r, "x/y", "{\"_meta\":{\"a\":1},\"b\":2}", &err), MCP_OK);
  assert_same(&r, 9, parse("{\"_meta\":{\"a\":1},\"b\":2}"));
  mcp__req_clear(&r);
  ck_assert_int_eq(mcp__req_generic(&r, "x/y", "{\"_meta\":5,\"b\":2}", &err), MCP_OK);
  assert_same(&r, 10, parse("{\"_meta\":5,\"b\":2}"));
  mcp__req_clear(&r);
  /* resources/read, prompts/get (arguments only when given), list pages. */
  ck_assert_int_eq(mcp__req_read_resource(&r, "file:///a \"b\"/\xc3\xa9", &err), MCP_OK);
  json_object *p = json_object_new_object();
  json_object_object_add(p, "uri", json_object_new_string("file:///a \"b\"/\xc3\xa9"));
  assert_same(&r, 11, p);
  mcp__req_clear(&r);
  ck_assert_int_eq(mcp__req_get_prompt(&r, "greet", NULL, &err), MCP_OK);
  assert_same(&r, 12, parse("{\"name\":\"greet\"}"));
  mcp__req_clear(&r);
  ck_assert_int_eq(mcp__req_get_prompt(&r, "greet", "{\"who\":\"w\"}", &err), MCP_OK);
  assert_same(&r, 13, parse("{\"name\":\"greet\",\"arguments\":{\"who\":\"w\"}}"));
  mcp__req_clear(&r);
  ck_assert_int_eq(mcp__req_list_page(&r, "tools/list", NULL, &err), MCP_OK);
  assert_same(&r, 14, NULL);
  mcp__req_clear(&r);
  ck_assert_int_eq(mcp__req_list_page(&r, "tools/list", "c\\1\n", &err), MCP_OK);
  p = json_object_new_object();
  json_object_object_add(p, "cursor", json_object_new_string("c\\1\n"));
  assert_same(&r, 15, p);
  mcp__req_clear(&r);
  /* A tree the library built (initialize). */
  ck_assert_int_eq(mcp__req_tree(&r, "initialize", parse("{\"protocolVersion\":\"v\"}"), &err),
                   MCP_OK);
  assert_same(&r, 16, parse("{\"protocolVersion\":\"v\"}"));
  mcp__req_clear(&r);
  ck_assert_ptr_null(err.message);
}
END_TEST

START_TEST(errors_name_the_argument) {
  mcp_req r;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp__req_tool_call(&r, "t", "{\"a\":", &err), MCP_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.message, "tool arguments is not valid JSON"));
  ck_assert_ptr_null(r.params);
  mcp_error_clear(&err);
  ck_assert_int_eq(mcp__req_tool_call(&r, "t", "[1]", &err), MCP_EINVAL);
  ck_assert_str_eq(err.message, "tool arguments must be a JSON object");
  mcp_error_clear(&err);
  ck_assert_int_eq(mcp__req_get_prompt(&r, "p", "3", &err), MCP_EINVAL);
  ck_assert_str_eq(err.message, "prompt arguments must be a JSON object");
  mcp_error_clear(&err);
  ck_assert_int_eq(mcp__req_generic(&r, "m", "{\"a\" 1}", &err), MCP_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.message, "params is not valid JSON"));
  mcp_error_clear(&err);
  mcp__req_clear(&r); /* harmless on an empty request */
}
END_TEST

/* Every scanner corpus input as tool arguments and as generic params: the
 * builder accepts exactly the objects json-c accepts, and prints them as
 * json-c does. */
START_TEST(corpus_differential) {
  DIR *d = opendir(JSCAN_CORPUS);
  ck_assert_ptr_nonnull(d);
  struct dirent *de;
  int objects = 0, refused = 0;
  char path[4096];
  static char buf[1 << 16];
  while ((de = readdir(d))) {
    if (de->d_name[0] == '.') continue;
    snprintf(path, sizeof(path), "%s/%s", JSCAN_CORPUS, de->d_name);
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    if (strlen(buf) != n) continue; /* a NUL inside: not a C string argument */
    json_object *tree = mcp__jsonrpc_parse(buf, n, NULL);
    bool is_object = tree && json_object_is_type(tree, json_type_object);
    json_object_put(tree);
    mcp_req r;
    mcp_error err = MCP_ERROR_INIT;
    mcp_status st = mcp__req_tool_call(&r, "t", buf, &err);
    if (!is_object) {
      ck_assert_int_eq(st, MCP_EINVAL);
      mcp_error_clear(&err);
      refused++;
      continue;
    }
    ck_assert_int_eq(st, MCP_OK);
    assert_same(&r, 3, tool_params("t", buf));
    mcp__req_clear(&r);
    ck_assert_int_eq(mcp__req_generic(&r, "m", buf, &err), MCP_OK);
    assert_same(&r, 4, parse(buf));
    mcp__req_clear(&r);
    objects++;
  }
  closedir(d);
  /* The corpus holds both kinds; a vacuous pass would mean a wrong path. */
  ck_assert_int_gt(objects, 50);
  ck_assert_int_gt(refused, 50);
}
END_TEST

static Suite *request_suite(void) {
  Suite *s = suite_create("request");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, tool_call_both_paths);
  tcase_add_test(tc, every_method);
  tcase_add_test(tc, errors_name_the_argument);
  tcase_add_test(tc, corpus_differential);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(request_suite()); }
