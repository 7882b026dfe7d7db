/* SPDX-License-Identifier: MIT */
/*
 * fuzz_task.c: libFuzzer target for the task reader (mcp_task_parse.h):
 * mcp__task_parse() on any text, in both eras and both shapes.
 *
 * Checked for every input: MCP_OK only with a non-empty id, a status in
 * range and a poll interval of -1 or within [0, one day]; the by-status
 * members only in the modern era and only for their status, each valid
 * JSON object text; otherwise MCP_EPROTO with a message and the state left
 * empty (or MCP_ENOMEM under an injected failure).
 */
#include "config.h"

#include <json-c/json.h>
#include <stdbool.h>

#include "fuzz_common.h"
#include "mcp_int.h"
#include "mcp_task_parse.h"

static void object_text(const char *s) {
  json_object *o = json_tokener_parse(s);
  FUZZ_CHECK(o && json_object_is_type(o, json_type_object));
  json_object_put(o);
}

static void one(const char *in, size_t size, bool modern, mcp_task_shape shape, bool inject) {
  mcp_task_state s;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp__task_parse(in, size, modern, shape, &s, &err);
  if (st != MCP_OK) {
    FUZZ_CHECK(st == MCP_EPROTO || (inject && st == MCP_ENOMEM));
    FUZZ_CHECK(err.message != NULL);
    FUZZ_CHECK(!s.id && !s.message && !s.result && !s.inputs && !s.error_message);
    mcp_error_clear(&err);
    return;
  }
  FUZZ_CHECK(s.id && *s.id);
  FUZZ_CHECK((unsigned)s.status <= MCP_TASK_CANCELLED);
  FUZZ_CHECK(s.poll_ms == -1 || (s.poll_ms >= 0 && s.poll_ms <= 86400000));
  FUZZ_CHECK(!s.result || (modern && s.status == MCP_TASK_COMPLETED));
  FUZZ_CHECK(!s.inputs || (modern && s.status == MCP_TASK_INPUT_REQUIRED));
  FUZZ_CHECK(!s.has_error || (modern && s.status == MCP_TASK_FAILED));
  if (s.result) object_text(s.result);
  if (s.inputs) object_text(s.inputs);
  mcp__task_state_clear(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > (1 << 20)) return 0;
  const char *in = (const char *)data;
  for (int m = 0; m < 2; m++)
    for (int sh = 0; sh < 2; sh++) one(in, size, m == 1, (mcp_task_shape)sh, false);
  /* One of the library's allocations failing, picked from the input. */
  mcp__alloc_fail_after(size ? data[0] % 8 : 0);
  one(in, size, true, MCP_TASK_SHAPE_STATE, true);
  mcp__alloc_fail_after(-1);
  one(in, size, false, MCP_TASK_SHAPE_CREATED, false);
  return 0;
}
