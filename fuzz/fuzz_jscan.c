/* SPDX-License-Identifier: MIT */
/*
 * fuzz_jscan.c: libFuzzer target for mcp_jscan, with json-c as the oracle.
 *
 * The scanner's promise (mcp_jscan.h): whatever it accepts, json-c in
 * strict mode accepts too and prints byte for byte as the scanner did.
 * For every input: as a value (output buffer exactly as long as the input,
 * so an overrun is caught), as an object, and as a JSON-RPC response (id and
 * result as json-c classifies them); on the compact form of an accepted
 * object, the top-level member lookup must agree with json-c's.
 */
#include "config.h"

#include <json-c/json.h>
#include <stdbool.h>

#include "fuzz_common.h"
#include "mcp_jscan.h"
#include "mcp_jsonrpc.h"

#define PRINT (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

/* json-c's compact print of |d| wrapped in [ ] (a bare null parses), the
 * brackets taken off; NULL when json-c refuses it or memory ran out. */
static char *jsonc_print(const uint8_t *d, size_t n) {
  char *w = malloc(n + 2);
  FUZZ_CHECK(w != NULL);
  w[0] = '[';
  if (n) memcpy(w + 1, d, n);
  w[n + 1] = ']';
  const char *why = NULL;
  json_object *o = mcp__jsonrpc_parse(w, n + 2, &why);
  free(w);
  if (!o) return NULL;
  size_t len = 0;
  const char *s = json_object_to_json_string_length(o, PRINT, &len);
  char *r = NULL;
  if (s && len >= 2) {
    r = malloc(len - 1);
    FUZZ_CHECK(r != NULL);
    memcpy(r, s + 1, len - 2);
    r[len - 2] = '\0';
  }
  json_object_put(o);
  return r;
}

static void check_member(const char *obj, size_t n, const char *key) {
  const char *v = NULL;
  size_t vn = 0;
  bool found = mcp__jscan_member(obj, n, key, &v, &vn);
  json_object *o = mcp__jsonrpc_parse(obj, n, NULL);
  if (!o) return; /* out of memory in json-c: nothing to compare */
  json_object *m = NULL;
  bool jfound = json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, key, &m);
  FUZZ_CHECK(found == jfound);
  if (found) {
    size_t len = 0;
    const char *s = json_object_to_json_string_length(m, PRINT, &len);
    FUZZ_CHECK(s && len == vn && memcmp(s, v, vn) == 0);
  }
  json_object_put(o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *in = (const char *)data;
  char *out = malloc(size ? size : 1);
  FUZZ_CHECK(out != NULL);
  size_t n = 0;
  if (mcp__jscan_value(in, size, false, out, &n)) {
    FUZZ_CHECK(n <= size);
    char *ref = jsonc_print(data, size);
    FUZZ_CHECK(ref != NULL);
    FUZZ_CHECK(strlen(ref) == n && memcmp(ref, out, n) == 0);
    free(ref);
    if (n && out[0] == '{') {
      check_member(out, n, "isError");
      check_member(out, n, "content");
      check_member(out, n, "a");
    }
  }
  size_t n2 = 0;
  bool obj = mcp__jscan_value(in, size, true, out, &n2);
  FUZZ_CHECK(!obj || (n2 == n && out[0] == '{'));
  free(out);

  int64_t id = 0;
  char *res = NULL;
  size_t rn = 0;
  if (mcp__jscan_response(in, size, &id, &res, &rn)) {
    json_object *o = mcp__jsonrpc_parse(in, size, NULL);
    FUZZ_CHECK(o != NULL);
    mcp_msg m;
    FUZZ_CHECK(mcp__jsonrpc_classify(o, &m) == MCP_MSG_RESPONSE);
    int64_t jid = 0;
    FUZZ_CHECK(mcp__jsonrpc_id_int(m.id, &jid) && jid == id);
    size_t len = 0;
    const char *s = json_object_to_json_string_length(m.result, PRINT, &len);
    FUZZ_CHECK(s && len == rn && memcmp(s, res, rn) == 0 && res[rn] == '\0');
    json_object_put(o);
    mcp__free(res);
  }
  return 0;
}
