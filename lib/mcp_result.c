/* SPDX-License-Identifier: MIT */
/*
 * mcp_result.c: mcp_tool_result_text(), the text of a CallToolResult.
 *
 * The scanner (mcp__jscan_tool_text) walks the document once, validating it
 * and decoding the text items into the buffer returned.  Whatever it refuses
 * (rare escapes, numbers it does not print, repeated keys, every error) is
 * checked with mcp__jscan_valid() (RFC 8259 and UTF-8: json-c's strict mode
 * still takes single-quoted keys, NaN, "1." and raw control characters),
 * parsed with json-c and answered from the tree.  Both paths give the same
 * text (tests/check_result.c and fuzz/fuzz_result.c compare them with a
 * reference in fuzz/result_ref.h).
 */
#include "config.h"

#include <stdbool.h>
#include <string.h>

#include "mcp_int.h"
#include "mcp_jscan.h"
#include "mcp_jsonrpc.h"

/* The general path: json-c's tree.  |buf| has |cap| bytes (the text is
 * never longer than the JSON, but the size is checked anyway); on MCP_OK
 * *buf (maybe moved) holds the text and *n its length. */
static mcp_status text_from_tree(const char *json, size_t len, char **buf, size_t cap, size_t *n,
                                 mcp_error *err) {
  if (!mcp__jscan_utf8_valid(json, len))
    return mcp__error_set(err, MCP_EPROTO, "tool result is not valid UTF-8");
  if (!mcp__jscan_valid(json, len))
    return mcp__error_set(err, MCP_EPROTO, "tool result is not valid JSON");
  /* Valid JSON: after white space, '{' or it is not an object (json-c
   * would wait for more after a bare number). */
  size_t at = 0;
  while (json[at] == ' ' || json[at] == '\t' || json[at] == '\r' || json[at] == '\n') at++;
  if (json[at] != '{') return mcp__error_set(err, MCP_EPROTO, "tool result is not a JSON object");
  /* The library's parser (strict json-c, its depth limit, allocation
   * failures reported); valid JSON can only fail it by nesting too deep. */
  const char *why = NULL;
  json_object *root = mcp__jsonrpc_parse(json, len, &why);
  if (!root && why == MCP__JSONRPC_OOM) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  if (!root)
    return mcp__error_set(err, MCP_EPROTO, "tool result is not valid JSON: %s", why ? why : "?");
  mcp_status st = MCP_OK;
  json_object *content = NULL;
  if (!json_object_is_type(root, json_type_object)) {
    st = mcp__error_set(err, MCP_EPROTO, "tool result is not a JSON object");
    goto out;
  }
  if (!json_object_object_get_ex(root, "content", &content)) {
    st = mcp__error_set(err, MCP_EPROTO, "tool result has no \"content\"");
    goto out;
  }
  if (!json_object_is_type(content, json_type_array)) {
    st = mcp__error_set(err, MCP_EPROTO, "tool result's \"content\" is not an array");
    goto out;
  }
  size_t pos = 0, count = 0, items = json_object_array_length(content);
  for (size_t i = 0; i < items; i++) {
    json_object *item = json_object_array_get_idx(content, i), *type = NULL, *text = NULL;
    if (!json_object_is_type(item, json_type_object) ||
        !json_object_object_get_ex(item, "type", &type) ||
        !json_object_is_type(type, json_type_string) || json_object_get_string_len(type) != 4 ||
        memcmp(json_object_get_string(type), "text", 4) != 0)
      continue;
    if (!json_object_object_get_ex(item, "text", &text) ||
        !json_object_is_type(text, json_type_string)) {
      st = mcp__error_set(err, MCP_EPROTO,
                          "tool result's content[%zu] is a text item without a \"text\" string", i);
      goto out;
    }
    size_t tn = (size_t)json_object_get_string_len(text);
    size_t need = pos + (count ? 1 : 0) + tn + 1;
    if (need > cap) {
      char *b = mcp__realloc(*buf, need);
      if (!b) {
        st = mcp__error_set(err, MCP_ENOMEM, "out of memory");
        goto out;
      }
      *buf = b;
      cap = need;
    }
    if (count) (*buf)[pos++] = '\n';
    memcpy(*buf + pos, json_object_get_string(text), tn);
    pos += tn;
    count++;
  }
  (*buf)[pos] = '\0';
  *n = pos;
out:
  json_object_put(root);
  return st;
}

MCP_EXTERN mcp_status mcp_tool_result_text(const char *result_json, size_t len, char **text,
                                           size_t *text_len, mcp_error *err) {
  if (text) *text = NULL;
  if (text_len) *text_len = 0;
  if (!result_json || !text)
    return mcp__error_set(err, MCP_EINVAL, "mcp_tool_result_text: %s is NULL",
                          text ? "result_json" : "text");
  if (len == (size_t)-1) len = strlen(result_json);
  char *buf = mcp__malloc(len + 1);
  if (!buf) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  size_t n = 0;
  if (!mcp__jscan_tool_text(result_json, len, buf, &n)) {
    mcp_status st = text_from_tree(result_json, len, &buf, len + 1, &n, err);
    if (st != MCP_OK) {
      mcp__free(buf);
      return st;
    }
  }
  /* A large result with little text (an image and a caption) need not keep
   * its whole size. */
  if (len - n > 4096) {
    char *b = mcp__realloc(buf, n + 1);
    if (b) buf = b;
  }
  *text = buf;
  if (text_len) *text_len = n;
  return MCP_OK;
}
