/* SPDX-License-Identifier: MIT */
/*
 * mcp_mrtr.c: reading an input_required result and building its retry
 * (see mcp_mrtr.h).
 */
#include "config.h"

#include <json-c/json.h>
#include <string.h>

#include "mcp_jsonrpc.h"
#include "mcp_mrtr.h"

void mcp__mrtr_clear(mcp_mrtr_round *rd) {
  json_object_put(rd->result);
  memset(rd, 0, sizeof(*rd));
}

bool mcp__mrtr_method(const char *method) {
  return strcmp(method, "tools/call") == 0 || strcmp(method, "prompts/get") == 0 ||
         strcmp(method, "resources/read") == 0;
}

static mcp_status bad(mcp_error *err, const char *method, const char *what) {
  return mcp__error_set(err, MCP_EPROTO, "%s: invalid input_required result: %s", method, what);
}

mcp_status mcp__mrtr_parse(const char *method, const char *text, size_t len, mcp_mrtr_round *rd,
                           mcp_error *err) {
  memset(rd, 0, sizeof(*rd));
  const char *why = NULL;
  json_object *res = mcp__jsonrpc_parse(text, len, &why);
  if (!res && why == MCP__JSONRPC_OOM) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  if (!res || !json_object_is_type(res, json_type_object)) {
    json_object_put(res);
    return bad(err, method, "not a JSON object");
  }
  json_object *reqs = NULL, *state = NULL;
  const char *problem = NULL;
  if (json_object_object_get_ex(res, "inputRequests", &reqs)) {
    if (!json_object_is_type(reqs, json_type_object)) problem = "inputRequests is not an object";
    else if ((size_t)json_object_object_length(reqs) > MCP_MRTR_MAX_INPUTS)
      problem = "more than 64 inputRequests";
    else {
      json_object_object_foreach(reqs, key, v) {
        (void)key;
        json_object *m = NULL, *p = NULL;
        if (!json_object_is_type(v, json_type_object) ||
            !json_object_object_get_ex(v, "method", &m) ||
            !json_object_is_type(m, json_type_string)) {
          problem = "an input request without a string method";
          break;
        }
        if (json_object_object_get_ex(v, "params", &p) && !json_object_is_type(p, json_type_null) &&
            !json_object_is_type(p, json_type_object)) {
          problem = "an input request whose params are not an object";
          break;
        }
      }
    }
  }
  if (!problem && json_object_object_get_ex(res, "requestState", &state) &&
      !json_object_is_type(state, json_type_string))
    problem = "requestState is not a string";
  if (!problem && !reqs && !state) problem = "neither inputRequests nor requestState";
  if (problem) {
    json_object_put(res);
    return bad(err, method, problem);
  }
  rd->result = res;
  rd->requests = reqs;
  rd->state = state;
  rd->ninputs = reqs ? (size_t)json_object_object_length(reqs) : 0;
  return MCP_OK;
}

void mcp__mrtr_input(const mcp_mrtr_round *rd, size_t i, const char **key, const char **method,
                     json_object **params) {
  *key = *method = NULL;
  *params = NULL;
  size_t k = 0;
  json_object_object_foreach(rd->requests, name, v) {
    if (k++ != i) continue;
    json_object *m = NULL, *p = NULL;
    json_object_object_get_ex(v, "method", &m);
    *key = name;
    *method = json_object_get_string(m);
    if (json_object_object_get_ex(v, "params", &p) && json_object_is_type(p, json_type_object))
      *params = p;
    return;
  }
}

mcp_status mcp__mrtr_retry(const mcp_req *orig, const mcp_mrtr_round *rd, json_object *responses,
                           mcp_req *out, mcp_error *err) {
  memset(out, 0, sizeof(*out));
  json_object *p = NULL;
  if (orig->params) {
    const char *why = NULL;
    p = mcp__jsonrpc_parse(orig->params, orig->params_len, &why);
    if (!p && why == MCP__JSONRPC_OOM) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
    if (!p || !json_object_is_type(p, json_type_object)) {
      json_object_put(p);
      return mcp__error_set(err, MCP_EPROTO, "%s: the request's params are not an object",
                            orig->method);
    }
    /* Answers and state of an earlier exchange never ride along. */
    json_object_object_del(p, "inputResponses");
    json_object_object_del(p, "requestState");
  } else if (!(p = json_object_new_object())) {
    return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  }
  if ((responses && mcp__json_add(p, "inputResponses", json_object_get(responses))) ||
      (rd->state && mcp__json_add(p, "requestState", json_object_get(rd->state)))) {
    json_object_put(p);
    return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  }
  mcp_status st = mcp__req_tree(out, orig->method, p, err); /* takes p */
  if (st) return st;
  out->known = orig->known;
  out->tool_call = orig->tool_call;
  return MCP_OK;
}
