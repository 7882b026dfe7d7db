/* SPDX-License-Identifier: MIT */
/*
 * fuzz_mrtr.c: libFuzzer target for the multi-round-trip pieces
 * (mcp_mrtr.h): mcp__mrtr_parse() on any text, and for what it accepts,
 * every input read back and the retry built from a tools/call whose
 * params already hold a stale inputResponses and requestState.
 *
 * Checked for every input: parse is MCP_OK only for a JSON object with
 * inputRequests and/or requestState of the right shapes, else MCP_EPROTO
 * with a message (or MCP_ENOMEM under an injected failure); each input has
 * a key and a method; the retry's params are an object whose
 * requestState is exactly the round's (value for value) or absent when
 * the round had none, whose inputResponses are exactly ours (or absent),
 * and whose other members are the original's.
 */
#include "config.h"

#include <json-c/json.h>
#include <stdbool.h>

#include "fuzz_common.h"
#include "mcp_int.h"
#include "mcp_mrtr.h"
#include "mcp_request.h"

static void one(const mcp_req *orig, const char *in, size_t size, bool inject) {
  mcp_mrtr_round rd;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp__mrtr_parse("tools/call", in, size, &rd, &err);
  if (st != MCP_OK) {
    FUZZ_CHECK(st == MCP_EPROTO || (inject && st == MCP_ENOMEM));
    FUZZ_CHECK(err.message != NULL && rd.result == NULL);
    mcp_error_clear(&err);
    return;
  }
  FUZZ_CHECK(json_object_is_type(rd.result, json_type_object));
  FUZZ_CHECK(rd.requests || rd.state);
  FUZZ_CHECK(rd.ninputs <= MCP_MRTR_MAX_INPUTS);
  json_object *responses = rd.requests ? json_object_new_object() : NULL;
  for (size_t i = 0; i < rd.ninputs; i++) {
    const char *key, *method;
    json_object *params;
    mcp__mrtr_input(&rd, i, &key, &method, &params);
    FUZZ_CHECK(key != NULL && method != NULL);
    FUZZ_CHECK(!params || json_object_is_type(params, json_type_object));
    if (responses) json_object_object_add(responses, key, json_object_new_int((int)i));
  }
  mcp_req retry;
  st = mcp__mrtr_retry(orig, &rd, responses, &retry, &err);
  FUZZ_CHECK(st == MCP_OK || (inject && st == MCP_ENOMEM));
  if (st == MCP_OK) {
    FUZZ_CHECK(strcmp(retry.method, "tools/call") == 0);
    json_object *p = json_tokener_parse(retry.params), *v = NULL;
    FUZZ_CHECK(p && json_object_is_type(p, json_type_object));
    FUZZ_CHECK(json_object_object_get_ex(p, "name", &v) &&
               strcmp(json_object_get_string(v), "t") == 0);
    FUZZ_CHECK(json_object_object_get_ex(p, "arguments", &v) && json_object_object_length(v) == 1);
    bool has_state = json_object_object_get_ex(p, "requestState", &v);
    FUZZ_CHECK(has_state == (rd.state != NULL));
    if (has_state)
      FUZZ_CHECK(json_object_get_string_len(v) == json_object_get_string_len(rd.state) &&
                 memcmp(json_object_get_string(v), json_object_get_string(rd.state),
                        (size_t)json_object_get_string_len(v)) == 0);
    bool has_resp = json_object_object_get_ex(p, "inputResponses", &v);
    FUZZ_CHECK(has_resp == (responses != NULL));
    if (has_resp) FUZZ_CHECK(json_object_equal(v, responses));
    json_object_put(p);
    mcp__req_clear(&retry);
  } else {
    mcp_error_clear(&err);
  }
  json_object_put(responses);
  mcp__mrtr_clear(&rd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > (1 << 20)) return 0;
  /* A request that already holds an earlier exchange's answers and state:
   * they must not ride along. */
  mcp_req orig;
  FUZZ_CHECK(
      mcp__req_generic(&orig, "tools/call",
                       "{\"name\":\"t\",\"arguments\":{\"a\":1},\"inputResponses\":{\"old\":1},"
                       "\"requestState\":\"old\"}",
                       NULL) == MCP_OK);
  one(&orig, (const char *)data, size, false);
  /* One of the library's allocations failing, picked from the input. */
  mcp__alloc_fail_after(size ? data[0] % 8 : 0);
  one(&orig, (const char *)data, size, true);
  mcp__alloc_fail_after(-1);
  mcp__req_clear(&orig);
  return 0;
}
