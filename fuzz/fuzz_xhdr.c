/* SPDX-License-Identifier: MIT */
/*
 * fuzz_xhdr.c: libFuzzer target for x-mcp-header (mcp_xhdr.h).  The input
 * is "SCHEMA\nARGS": SCHEMA a tool's inputSchema, ARGS a call's arguments.
 *
 * Checked for every input: reading the schema is MCP_OK (with no set, or
 * one of 1..MCP_XHDR_MAX parameters whose names are non-empty tokens,
 * case-insensitively distinct, each with a path) or MCP_EINVAL with a
 * reason (or MCP_ENOMEM under an injected failure); the values for ARGS
 * are at most one per parameter, each named "Mcp-Param-" + its name, each
 * a header-safe value (visible ASCII, no leading or trailing space).
 */
#include "config.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <strings.h>

#include "fuzz_common.h"
#include "mcp_int.h"
#include "mcp_jsonrpc.h"
#include "mcp_xhdr.h"

static void one(json_object *schema, json_object *args, bool inject) {
  mcp_xhdr_tool *t = NULL;
  char why[160];
  mcp_status st = mcp__xhdr_read(schema, &t, why, sizeof(why));
  if (st != MCP_OK) {
    FUZZ_CHECK(st == MCP_EINVAL || (inject && st == MCP_ENOMEM));
    FUZZ_CHECK(t == NULL);
    if (st == MCP_EINVAL) FUZZ_CHECK(why[0] != '\0');
    return;
  }
  if (!t) return;
  FUZZ_CHECK(t->n >= 1 && t->n <= MCP_XHDR_MAX);
  for (size_t i = 0; i < t->n; i++) {
    FUZZ_CHECK(t->p[i].name && t->p[i].name[0] && t->p[i].depth >= 1);
    for (size_t j = 0; j < i; j++) FUZZ_CHECK(strcasecmp(t->p[i].name, t->p[j].name) != 0);
  }
  char *names[MCP_XHDR_MAX], *values[MCP_XHDR_MAX];
  size_t n = 0;
  st = mcp__xhdr_values(t, args, names, values, &n);
  FUZZ_CHECK(st == MCP_OK || (inject && st == MCP_ENOMEM));
  FUZZ_CHECK(n <= t->n);
  for (size_t k = 0; k < n; k++) {
    FUZZ_CHECK(strncmp(names[k], "Mcp-Param-", 10) == 0);
    size_t len = strlen(values[k]);
    for (size_t b = 0; b < len; b++)
      FUZZ_CHECK((unsigned char)values[k][b] >= 0x20 && (unsigned char)values[k][b] <= 0x7e);
    FUZZ_CHECK(len == 0 || (values[k][0] != ' ' && values[k][len - 1] != ' '));
    mcp__free(names[k]);
    mcp__free(values[k]);
  }
  mcp__xhdr_free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > (1 << 20)) return 0;
  const char *in = (const char *)data;
  const char *nl = memchr(in, '\n', size);
  size_t slen = nl ? (size_t)(nl - in) : size;
  json_object *schema = mcp__jsonrpc_parse(in, slen, NULL);
  json_object *args = nl ? mcp__jsonrpc_parse(nl + 1, size - slen - 1, NULL) : NULL;
  one(schema, args, false);
  mcp__alloc_fail_after(size ? data[0] % 8 : 0);
  one(schema, args, true);
  mcp__alloc_fail_after(-1);
  json_object_put(schema);
  json_object_put(args);
  return 0;
}
