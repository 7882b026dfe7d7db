/* SPDX-License-Identifier: MIT */
/*
 * fuzz_mtasks.c: libFuzzer target for the reader of the manager's task
 * record files (mcp__mtasks_parse(), mcp_manager_tasks.h).
 *
 * Input: the content of a record file, read for server "srv".  MCP_OK must
 * come with an array of at most MCP__MTASKS_MAX records, each with a
 * non-empty string taskId and status; anything else is MCP_EPROTO (or
 * MCP_ENOMEM) with no array.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "mcp_manager_tasks.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  json_object *recs = NULL;
  mcp_status st = mcp__mtasks_parse((const char *)data, size, "srv", &recs);
  if (st == MCP_OK) {
    if (!json_object_is_type(recs, json_type_array)) abort();
    size_t n = json_object_array_length(recs);
    if (n > MCP__MTASKS_MAX) abort();
    for (size_t i = 0; i < n; i++) {
      json_object *r = json_object_array_get_idx(recs, i), *v = NULL;
      if (!json_object_object_get_ex(r, "taskId", &v) ||
          !json_object_is_type(v, json_type_string) || !*json_object_get_string(v))
        abort();
      if (!json_object_object_get_ex(r, "status", &v) || !json_object_is_type(v, json_type_string))
        abort();
    }
  } else if (recs || (st != MCP_EPROTO && st != MCP_ENOMEM)) {
    abort();
  }
  json_object_put(recs);
  return 0;
}
