/* SPDX-License-Identifier: MIT */
/*
 * fuzz_cache.c: libFuzzer target for the deferred-tool cache reader.
 *
 * Input: the content of a cache file, judged by mcp__cache_parse() for
 * server "srv" and a fixed config hash at a fixed "now".  A hit must come
 * with a tools array that parses again; a miss must come with a reason.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "mcp_cache.h"

#define HASH "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define NOW INT64_C(1767225600)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *tools = NULL, *why = NULL;
  mcp_cache_outcome oc = MCP_CACHE_ABSENT;
  mcp_status st = mcp__cache_parse((const char *)data, size, "srv", HASH, NOW, 0, &tools, &oc,
                                   &why);
  if (st == MCP_OK) {
    if (!tools || why || oc != MCP_CACHE_HIT) abort();
    json_object *o = json_tokener_parse(tools);
    if (!o || !json_object_is_type(o, json_type_array)) abort();
    json_object_put(o);
  } else if (st == MCP_ENOTFOUND) {
    if (tools || oc == MCP_CACHE_HIT || oc == MCP_CACHE_ABSENT) abort();
  } else if (st != MCP_ENOMEM) {
    abort();
  }
  mcp__free(tools);
  mcp__free(why);
  return 0;
}
