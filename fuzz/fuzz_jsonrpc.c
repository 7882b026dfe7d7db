/* SPDX-License-Identifier: MIT */
/*
 * fuzz_jsonrpc.c: libFuzzer target for mcp_jsonrpc.
 *
 * The input is parsed as one JSON-RPC message (or a batch, whose elements
 * are classified one by one).  Whatever classifies as a message must
 * survive a rebuild: the builder's text parses again and classifies as the
 * same kind with the same method, id and error code.  Any parsed value
 * must also serialise to text that parses again.
 *
 * The readers of a malformed reply's id run on every input, parsed or not:
 * mcp__jsonrpc_peek_response_id() must not crash or read past the input,
 * and where json-c parsed the input as one object it must agree with
 * mcp__jsonrpc_response_id() on the tree (the text reader may say no when
 * text without escapes (keys written with escapes, e.g. "\u0069d", are
 * not decoded by the text reader).  Parsed text is always valid UTF-8.
 */
#include "config.h"

#include <stdbool.h>

#include "fuzz_common.h"
#include "mcp_jscan.h"
#include "mcp_jsonrpc.h"

static bool same_id(json_object *a, json_object *b) {
  if (!a || !b) return a == b;
  if (json_object_get_type(a) != json_object_get_type(b)) return false;
  if (json_object_is_type(a, json_type_int))
    return json_object_get_int64(a) == json_object_get_int64(b);
  return strcmp(json_object_get_string(a), json_object_get_string(b)) == 0;
}

static void reparse(const char *text, size_t len, mcp_msg_kind want, const mcp_msg *m) {
  FUZZ_CHECK(text != NULL);
  const char *why = NULL;
  json_object *o = mcp__jsonrpc_parse(text, len, &why);
  if (!o) {
    fprintf(stderr, "rebuilt message does not parse (%s): %.*s\n", why, (int)len, text);
    abort();
  }
  mcp_msg m2;
  FUZZ_CHECK(mcp__jsonrpc_classify(o, &m2) == want);
  switch (want) {
  case MCP_MSG_REQUEST:
  case MCP_MSG_NOTIFICATION: FUZZ_CHECK(strcmp(m->method, m2.method) == 0); break;
  case MCP_MSG_RESPONSE: FUZZ_CHECK(same_id(m->id, m2.id)); break;
  case MCP_MSG_ERROR:
    FUZZ_CHECK(same_id(m->id, m2.id));
    FUZZ_CHECK(m->error_code == m2.error_code);
    FUZZ_CHECK(strcmp(m->error_message, m2.error_message) == 0);
    break;
  case MCP_MSG_INVALID: break;
  }
  json_object_put(o);
}

static void check_message(json_object *o) {
  mcp_msg m;
  mcp_msg_kind k = mcp__jsonrpc_classify(o, &m);
  size_t len = 0;
  char *t = NULL;
  switch (k) {
  case MCP_MSG_INVALID: FUZZ_CHECK(m.invalid != NULL); return;
  case MCP_MSG_REQUEST: {
    FUZZ_CHECK(m.method && m.id);
    int64_t id;
    if (mcp__jsonrpc_id_int(m.id, &id)) {
      t = mcp__jsonrpc_request(id, m.method, m.params, &len);
      reparse(t, len, MCP_MSG_REQUEST, &m);
      mcp__free(t);
    }
    /* The same as a notification. */
    t = mcp__jsonrpc_notification(m.method, m.params, &len);
    reparse(t, len, MCP_MSG_NOTIFICATION, &m);
    break;
  }
  case MCP_MSG_NOTIFICATION:
    t = mcp__jsonrpc_notification(m.method, m.params, &len);
    reparse(t, len, MCP_MSG_NOTIFICATION, &m);
    break;
  case MCP_MSG_RESPONSE:
    t = mcp__jsonrpc_result(m.id, m.result, &len);
    reparse(t, len, MCP_MSG_RESPONSE, &m);
    break;
  case MCP_MSG_ERROR:
    t = mcp__jsonrpc_error(m.id, m.error_code, m.error_message, m.error_data, &len);
    reparse(t, len, MCP_MSG_ERROR, &m);
    break;
  }
  mcp__free(t);
}

/* True when |d| is the JSON literal null with optional white space. */
static bool is_json_null(const uint8_t *d, size_t n) {
  size_t a = 0, b = n;
  while (a < b && strchr(" \t\r\n", d[a]) && d[a]) a++;
  while (b > a && strchr(" \t\r\n", d[b - 1]) && d[b - 1]) b--;
  return b - a == 4 && memcmp(d + a, "null", 4) == 0;
}

/* True when |d| holds a backslash (an escape the text reader does not decode). */
static bool has_backslash(const uint8_t *d, size_t n) { return memchr(d, '\\', n) != NULL; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 65536) return 0;
  const char *why = NULL;
  /* A copy of exactly |size| bytes, so that ASan sees any read past it. */
  char *copy = malloc(size ? size : 1);
  FUZZ_CHECK(copy != NULL);
  memcpy(copy, data, size);
  int64_t peek_id = 0, tree_id = 0;
  bool peeked = mcp__jsonrpc_peek_response_id(copy, size, &peek_id);
  free(copy);
  json_object *o = mcp__jsonrpc_parse((const char *)data, size, &why);
  if (o) {
    FUZZ_CHECK(mcp__jscan_utf8_valid((const char *)data, size));
    bool from_tree = mcp__jsonrpc_response_id(o, &tree_id);
    /* What the text reader finds in a parsed object, the tree confirms. */
    if (peeked && json_object_is_type(o, json_type_object) && !has_backslash(data, size)) {
      FUZZ_CHECK(from_tree);
      FUZZ_CHECK(peek_id == tree_id);
    }
  }
  if (!o) {
    /* mcp_jsonrpc.h promises a reason with every NULL, but the JSON value
     * null is a successful parse that json-c represents as NULL, so it
     * comes back as NULL without one (reported to the module's owner; the
     * caller cannot tell it from a failure).  Every other NULL must say
     * why. */
    FUZZ_CHECK(why != NULL || is_json_null(data, size));
    return 0;
  }
  size_t len = 0;
  char *text = mcp__json_dup_string(o, &len);
  FUZZ_CHECK(text != NULL);
  json_object *again = mcp__jsonrpc_parse(text, len, &why);
  if (!again) {
    fprintf(stderr, "serialised value does not parse (%s): %.*s\n", why,
            (int)(len > 200 ? 200 : len), text);
    abort();
  }
  json_object_put(again);
  mcp__free(text);

  if (json_object_is_type(o, json_type_array)) {
    size_t n = json_object_array_length(o);
    for (size_t i = 0; i < n; i++) check_message(json_object_array_get_idx(o, i));
  } else {
    check_message(o);
  }
  json_object_put(o);
  return 0;
}
