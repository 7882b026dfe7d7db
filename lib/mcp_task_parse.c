/* SPDX-License-Identifier: MIT */
/*
 * mcp_task_parse.c: a task's state from a result (see mcp_task_parse.h).
 */
#include "config.h"

#include <json-c/json.h>
#include <string.h>

#include "mcp_jsonrpc.h"
#include "mcp_task_parse.h"

#define TEXT_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

static const char *const words[] = {"working", "input_required", "completed", "failed",
                                    "cancelled"};

const char *mcp__task_status_word(mcp_task_status st) {
  return (unsigned)st < sizeof(words) / sizeof(words[0]) ? words[st] : "unknown";
}

void mcp__task_state_clear(mcp_task_state *s) {
  if (!s) return;
  mcp__free(s->id);
  mcp__free(s->message);
  mcp__free(s->result);
  mcp__free(s->inputs);
  mcp__free(s->error_message);
  memset(s, 0, sizeof(*s));
  s->poll_ms = -1;
}

static mcp_status bad(mcp_error *err, const char *what) {
  return mcp__error_set(err, MCP_EPROTO, "invalid task: %s", what);
}

/* A copy of |o|'s compact text into *out; false when out of memory. */
static bool text_of(json_object *o, char **out) {
  const char *t = json_object_to_json_string_ext(o, TEXT_FLAGS);
  return t && (*out = mcp__strdup(t)) != NULL;
}

static mcp_status read_task(json_object *t, bool modern, mcp_task_state *s, mcp_error *err) {
  json_object *v = NULL;
  if (!json_object_object_get_ex(t, "taskId", &v) || !json_object_is_type(v, json_type_string) ||
      json_object_get_string_len(v) == 0)
    return bad(err, "no taskId string");
  if (!(s->id = mcp__strdup(json_object_get_string(v))))
    return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  if (!json_object_object_get_ex(t, "status", &v) || !json_object_is_type(v, json_type_string))
    return bad(err, "no status string");
  const char *w = json_object_get_string(v);
  size_t i = 0;
  while (i < sizeof(words) / sizeof(words[0]) && strcmp(words[i], w) != 0) i++;
  if (i == sizeof(words) / sizeof(words[0])) {
    char q[MCP_QUOTE_SHORT];
    return mcp__error_set(err, MCP_EPROTO, "invalid task: unknown status \"%s\"",
                          mcp__quote(q, sizeof(q), w, strlen(w)));
  }
  s->status = (mcp_task_status)i;
  if (json_object_object_get_ex(t, "statusMessage", &v) &&
      !json_object_is_type(v, json_type_null)) {
    if (!json_object_is_type(v, json_type_string)) return bad(err, "statusMessage is not a string");
    if (!(s->message = mcp__strdup(json_object_get_string(v))))
      return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  }
  const char *pk = modern ? "pollIntervalMs" : "pollInterval";
  if (json_object_object_get_ex(t, pk, &v) && !json_object_is_type(v, json_type_null)) {
    if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
      return bad(err, modern ? "pollIntervalMs is not a number" : "pollInterval is not a number");
    double d = json_object_get_double(v);
    s->poll_ms = d < 0 ? 0 : d > 86400000.0 ? 86400000 : (int64_t)d;
  }
  if (!modern) return MCP_OK;
  if (s->status == MCP_TASK_COMPLETED && json_object_object_get_ex(t, "result", &v)) {
    if (!json_object_is_type(v, json_type_object)) return bad(err, "result is not an object");
    if (!text_of(v, &s->result)) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  }
  if (s->status == MCP_TASK_INPUT_REQUIRED && json_object_object_get_ex(t, "inputRequests", &v)) {
    if (!json_object_is_type(v, json_type_object))
      return bad(err, "inputRequests is not an object");
    if (!text_of(v, &s->inputs)) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  }
  if (s->status == MCP_TASK_FAILED && json_object_object_get_ex(t, "error", &v)) {
    if (!json_object_is_type(v, json_type_object)) return bad(err, "error is not an object");
    json_object *c = NULL, *m = NULL;
    s->has_error = true;
    if (json_object_object_get_ex(v, "code", &c) && json_object_is_type(c, json_type_int))
      s->error_code = json_object_get_int64(c);
    if (json_object_object_get_ex(v, "message", &m) && json_object_is_type(m, json_type_string) &&
        !(s->error_message = mcp__strdup(json_object_get_string(m))))
      return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  }
  return MCP_OK;
}

mcp_status mcp__task_parse(const char *text, size_t len, bool modern, mcp_task_shape shape,
                           mcp_task_state *out, mcp_error *err) {
  memset(out, 0, sizeof(*out));
  out->poll_ms = -1;
  const char *why = NULL;
  json_object *res = mcp__jsonrpc_parse(text, len, &why);
  if (!res && why == MCP__JSONRPC_OOM) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  if (!res || !json_object_is_type(res, json_type_object)) {
    json_object_put(res);
    return bad(err, "not a JSON object");
  }
  json_object *t = res;
  if (!modern && shape == MCP_TASK_SHAPE_CREATED &&
      (!json_object_object_get_ex(res, "task", &t) || !json_object_is_type(t, json_type_object))) {
    json_object_put(res);
    return bad(err, "the result has no \"task\" object");
  }
  mcp_status st = read_task(t, modern, out, err);
  json_object_put(res);
  if (st != MCP_OK) mcp__task_state_clear(out);
  return st;
}
