/* SPDX-License-Identifier: MIT */
/*
 * fuzz_result.c: libFuzzer target for mcp_tool_result_text(), with a json-c
 * reference in fuzz/result_ref.h (tests/check_result.c uses it too).
 *
 * For every input: the function's status and text must equal the
 * reference's (valid RFC 8259 JSON in UTF-8, json-c's tree, "content" an
 * array, the "text" of items whose "type" is "text" joined with "\n"); and
 * the scanner's fast path, given an output buffer of exactly len + 1 bytes
 * (so an overrun is caught), may only take inputs the reference accepts and
 * must give the same text.  The function also runs with an allocation
 * failing somewhere, picked from the input: MCP_ENOMEM or the same answer.
 */
#include "config.h"

#include <stdbool.h>

#include "fuzz_common.h"
#include "mcp_int.h"
#include "mcp_jscan.h"
#include "mcpconn.h"
#include "result_ref.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > (1 << 20)) return 0;
  const char *in = (const char *)data;
  char *ref = NULL;
  size_t rn = 0;
  mcp_status rst = ref_text(in, size, &ref, &rn);

  char *text = NULL;
  size_t n = 0;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_tool_result_text(in, size, &text, &n, &err);
  FUZZ_CHECK(st == rst);
  if (st == MCP_OK) {
    FUZZ_CHECK(n == rn && memcmp(text, ref, n) == 0 && text[n] == '\0');
  } else {
    FUZZ_CHECK(text == NULL && err.message != NULL);
  }
  mcp_free(text);
  mcp_error_clear(&err);

  char *out = malloc(size + 1);
  FUZZ_CHECK(out != NULL);
  size_t fn = 0;
  if (mcp__jscan_tool_text(in, size, out, &fn)) {
    FUZZ_CHECK(rst == MCP_OK && fn == rn && memcmp(out, ref, fn) == 0 && out[fn] == '\0');
  }
  free(out);

  /* One of the function's few allocations failing. */
  long fail = size ? data[0] % 4 : 0;
  text = NULL;
  mcp__alloc_fail_after(fail);
  st = mcp_tool_result_text(in, size, &text, &n, NULL);
  mcp__alloc_fail_after(-1);
  FUZZ_CHECK(st == MCP_ENOMEM || st == rst);
  if (st == MCP_OK) FUZZ_CHECK(n == rn && memcmp(text, ref, n) == 0);
  if (st != MCP_OK) FUZZ_CHECK(text == NULL);
  mcp_free(text);
  free(ref);
  return 0;
}
