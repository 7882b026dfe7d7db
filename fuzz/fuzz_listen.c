/* SPDX-License-Identifier: MIT */
/*
 * fuzz_listen.c: libFuzzer target for the pure parts of subscriptions/listen
 * (mcp_listen.h).  The input is one JSON text, read three ways: as a
 * server/discover result (the kinds it advertises), as a notification's
 * params (the subscription id in _meta) and as an acknowledgement's params
 * (the kinds honoured).
 *
 * Checked for every input: the kinds are within MCP_LISTEN_ALL; the listen
 * params built for them are JSON whose "notifications" honours exactly
 * those kinds again (the round trip); a subscription id is reported only
 * when _meta has one; names of any kinds fit the buffer.  Under injected
 * allocation failures the same, or no params at all.
 */
#include "config.h"

#include <json-c/json.h>
#include <stdbool.h>

#include "fuzz_common.h"
#include "mcp_int.h"
#include "mcp_jscan.h"
#include "mcp_jsonrpc.h"
#include "mcp_listen.h"

static void one(const char *in, size_t size, json_object *o, bool inject) {
  unsigned adv = mcp__listen_advertised(in, size);
  FUZZ_CHECK((adv & ~MCP_LISTEN_ALL) == 0);
  unsigned hon = mcp__listen_honoured(o);
  FUZZ_CHECK((hon & ~MCP_LISTEN_ALL) == 0);
  char *p = mcp__listen_params(adv | hon);
  FUZZ_CHECK(p || inject);
  if (p) {
    json_object *back = mcp__jsonrpc_parse(p, strlen(p), NULL);
    FUZZ_CHECK(back || inject);
    if (back) FUZZ_CHECK(mcp__listen_honoured(back) == (adv | hon));
    json_object_put(back);
    mcp__free(p);
  }
  /* The input as one URI: the params carry it back exactly. */
  bool sub = mcp__listen_can_subscribe(in, size);
  char *uri = mcp__strndup(in, size);
  const char *uris[1] = {uri};
  char *ps = uri ? mcp__listen_params_subs(adv, uris, 1) : NULL;
  FUZZ_CHECK((uri && ps) || inject);
  if (ps && strlen(uri) == size && mcp__jscan_utf8_valid(uri, size)) {
    json_object *back = mcp__jsonrpc_parse(ps, strlen(ps), NULL), *n = NULL, *a = NULL;
    FUZZ_CHECK(back || inject);
    if (back) {
      FUZZ_CHECK(json_object_object_get_ex(back, "notifications", &n) &&
                 json_object_object_get_ex(n, "resourceSubscriptions", &a) &&
                 json_object_array_length(a) == 1 &&
                 strcmp(json_object_get_string(json_object_array_get_idx(a, 0)), uri) == 0);
      FUZZ_CHECK(mcp__listen_honoured(back) == adv);
    }
    json_object_put(back);
  }
  mcp__free(ps);
  mcp__free(uri);
  if (sub) FUZZ_CHECK(o != NULL || inject);
  int64_t id = 0;
  int r = mcp__listen_sub_id(o, &id);
  FUZZ_CHECK(r >= -1 && r <= 1);
  json_object *meta = NULL;
  if (r != 0)
    FUZZ_CHECK(o && json_object_object_get_ex(o, "_meta", &meta) &&
               json_object_object_get_ex(meta, MCP_LISTEN_SUB_KEY, NULL));
  char buf[64], tiny[4];
  FUZZ_CHECK(strlen(mcp__listen_kind_names(adv | hon, buf, sizeof(buf))) < sizeof(buf));
  FUZZ_CHECK(strlen(mcp__listen_kind_names(adv | hon, tiny, sizeof(tiny))) < sizeof(tiny));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > (1 << 20)) return 0;
  const char *in = (const char *)data;
  json_object *o = mcp__jsonrpc_parse(in, size, NULL);
  one(in, size, o, false);
  mcp__alloc_fail_after(size ? data[0] % 8 : 0);
  one(in, size, o, true);
  mcp__alloc_fail_after(-1);
  json_object_put(o);
  return 0;
}
