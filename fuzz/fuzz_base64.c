/* SPDX-License-Identifier: MIT */
/*
 * fuzz_base64.c: libFuzzer target for lib/mcp_base64.c.
 *
 *  - The input as base64 text, in each alphabet: when the strict decoder
 *    takes it, encoding the bytes again gives the input back exactly
 *    (padded when the input is a multiple of four long), so every byte
 *    string has one accepted encoding; when it refuses, nothing is out.
 *  - The input as bytes: each of the four encodings is as long as
 *    mcp__base64_len() says, uses only its alphabet, and decodes back to
 *    the input.
 *
 * Then once more with an allocation failure injected.
 */
#include "config.h"

#include <stdbool.h>

#include "fuzz_common.h"
#include "mcp_base64.h"
#include "mcp_int.h"

static void as_text(const char *in, size_t size, mcp_b64 alpha, bool inject) {
  unsigned char *d = NULL;
  size_t n = 0;
  mcp_status st = mcp__base64_decode(in, size, alpha, &d, &n);
  if (st != MCP_OK) {
    FUZZ_CHECK(st == MCP_EINVAL || (inject && st == MCP_ENOMEM));
    FUZZ_CHECK(!d && n == 0);
    return;
  }
  FUZZ_CHECK(n <= size / 4 * 3 + 2 && d[n] == 0);
  char *e = mcp__base64_encode(d, n, alpha, size % 4 == 0);
  if (e) FUZZ_CHECK(strlen(e) == size && memcmp(e, in, size) == 0);
  else FUZZ_CHECK(inject);
  mcp__free(e);
  mcp__free(d);
}

static void as_bytes(const uint8_t *in, size_t size, mcp_b64 alpha, bool pad, bool inject) {
  char *e = mcp__base64_encode(in, size, alpha, pad);
  if (!e) {
    FUZZ_CHECK(inject);
    return;
  }
  size_t len = strlen(e);
  FUZZ_CHECK(len == mcp__base64_len(size, pad));
  const char *extra = alpha == MCP_B64_URL ? "-_" : "+/";
  for (size_t i = 0; i < len; i++)
    FUZZ_CHECK((e[i] >= 'A' && e[i] <= 'Z') || (e[i] >= 'a' && e[i] <= 'z') ||
               (e[i] >= '0' && e[i] <= '9') || e[i] == extra[0] || e[i] == extra[1] ||
               (pad && e[i] == '=' && i + 2 >= len));
  unsigned char *d = NULL;
  size_t n = 0;
  mcp_status st = mcp__base64_decode(e, len, alpha, &d, &n);
  FUZZ_CHECK(st == MCP_OK || (inject && st == MCP_ENOMEM));
  if (st == MCP_OK) FUZZ_CHECK(n == size && (size == 0 || memcmp(d, in, size) == 0));
  mcp__free(d);
  mcp__free(e);
}

static void run(const uint8_t *data, size_t size, bool inject) {
  for (int a = 0; a < 2; a++) {
    mcp_b64 alpha = a ? MCP_B64_URL : MCP_B64_STD;
    as_text((const char *)data, size, alpha, inject);
    as_bytes(data, size, alpha, true, inject);
    as_bytes(data, size, alpha, false, inject);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  run(data, size, false);
  mcp__alloc_fail_after((long)(size % 5));
  run(data, size, true);
  mcp__alloc_fail_after(-1);
  return 0;
}
