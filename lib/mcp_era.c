/* SPDX-License-Identifier: MIT */
/*
 * mcp_era.c: era modes, the modern `_meta`, the probe's verdict and
 * `resultType` (see mcp_era.h).  The probe's result and error data are
 * read with json-c: once per connect, not on the call path.
 */
#include "config.h"

#include <json-c/json.h>
#include <string.h>

#include "mcp_base64.h"
#include "mcp_era.h"
#include "mcp_jscan.h"
#include "mcp_jsonrpc.h"

const char *const mcp__modern_versions[] = {"2026-07-28", NULL};

/* The legacy revisions (mcp__protocol_versions) for pinning. */
static const char *const legacy_versions[] = {"2025-11-25", "2025-06-18", "2025-03-26", NULL};

static const char *find_in(const char *const *list, const char *s) {
  for (size_t i = 0; list[i]; i++)
    if (strcmp(list[i], s) == 0) return list[i];
  return NULL;
}

bool mcp__era_parse_mode(const char *s, mcp_era_mode *mode, const char **pinned) {
  *pinned = NULL;
  if (!s || !*s || strcmp(s, "auto") == 0) {
    *mode = MCP_ERA_AUTO;
    return true;
  }
  if (strcmp(s, "modern") == 0) {
    *mode = MCP_ERA_MODERN;
    return true;
  }
  if (strcmp(s, "legacy") == 0) {
    *mode = MCP_ERA_LEGACY;
    return true;
  }
  if ((*pinned = find_in(mcp__modern_versions, s))) {
    *mode = MCP_ERA_MODERN;
    return true;
  }
  if ((*pinned = find_in(legacy_versions, s))) {
    *mode = MCP_ERA_LEGACY;
    return true;
  }
  return false;
}

const char *mcp__era_mode_name(mcp_era_mode mode, const char *pinned) {
  if (pinned) return pinned;
  return mode == MCP_ERA_MODERN ? "modern" : mode == MCP_ERA_LEGACY ? "legacy" : "auto";
}

char *mcp__era_meta(const char *version, const char *caps_json, const char *client_name,
                    const char *client_version, size_t *len) {
  size_t vn = strlen(version), cn = strlen(caps_json), nn = strlen(client_name),
         wn = strlen(client_version);
  char *t = mcp__malloc(160 + 6 * (vn + nn + wn) + cn);
  if (!t) return NULL;
  char *o = t;
#define LIT(s) (memcpy(o, (s), sizeof(s) - 1), o += sizeof(s) - 1)
  LIT("\"io.modelcontextprotocol/protocolVersion\":");
  o += mcp__jscan_put_string(o, version, vn);
  LIT(",\"io.modelcontextprotocol/clientCapabilities\":");
  memcpy(o, caps_json, cn);
  o += cn;
  LIT(",\"io.modelcontextprotocol/clientInfo\":{\"name\":");
  o += mcp__jscan_put_string(o, client_name, nn);
  LIT(",\"version\":");
  o += mcp__jscan_put_string(o, client_version, wn);
  LIT("}");
#undef LIT
  *o = '\0';
  *len = (size_t)(o - t);
  return t;
}

/* The first of our modern versions that |arr| (a JSON array) lists, and
 * whether it lists any legacy one we speak. */
static const char *mutual_modern(json_object *arr, bool *any_legacy) {
  *any_legacy = false;
  if (!arr || !json_object_is_type(arr, json_type_array)) return NULL;
  const char *best = NULL;
  size_t best_rank = (size_t)-1, n = json_object_array_length(arr);
  for (size_t i = 0; i < n; i++) {
    json_object *v = json_object_array_get_idx(arr, i);
    if (!json_object_is_type(v, json_type_string)) continue;
    const char *s = json_object_get_string(v);
    if (find_in(legacy_versions, s)) *any_legacy = true;
    for (size_t k = 0; mcp__modern_versions[k]; k++)
      if (strcmp(mcp__modern_versions[k], s) == 0 && k < best_rank) {
        best_rank = k;
        best = mcp__modern_versions[k];
      }
  }
  return best;
}

static json_object *member(json_object *o, const char *key) {
  json_object *v = NULL;
  return o && json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, key, &v)
             ? v
             : NULL;
}

mcp_era_verdict mcp__era_judge(mcp_status st, const char *text, size_t len, const mcp_error *err,
                               bool stdio, const char **version, const char **why) {
  *version = NULL;
  *why = NULL;
  bool any_legacy = false;
  switch (st) {
  case MCP_OK: {
    /* A DiscoverResult with a mutual modern version is modern; anything
     * else (no such list, legacy versions only: go-sdk's stateful default)
     * is a legacy server answering an unknown method its own way. */
    json_object *r = text ? mcp__jsonrpc_parse(text, len, NULL) : NULL;
    *version = mutual_modern(member(r, "supportedVersions"), &any_legacy);
    json_object_put(r);
    return *version ? MCP_ERA_IS_MODERN : MCP_ERA_IS_LEGACY;
  }
  case MCP_ERPC: {
    if (!err || err->rpc_code != -32022) return MCP_ERA_IS_LEGACY; /* never keyed to one code */
    json_object *d = err->data ? mcp__jsonrpc_parse(err->data, strlen(err->data), NULL) : NULL;
    json_object *supported = member(d, "supported");
    bool listed = supported && json_object_is_type(supported, json_type_array);
    *version = mutual_modern(supported, &any_legacy);
    json_object_put(d);
    if (*version) return MCP_ERA_RETRY;
    if (!listed || any_legacy) return MCP_ERA_IS_LEGACY; /* not a modern refusal, or legacy only */
    *why = "the server speaks only MCP revisions mcpconn does not (its -32022 lists no "
           "2026-07-28 nor a 2025 revision)";
    return MCP_ERA_INCOMPATIBLE;
  }
  case MCP_EPROTO: return MCP_ERA_IS_LEGACY; /* an unusable answer */
  case MCP_EHTTP: {
    /* A 4xx whose body is no modern JSON-RPC error is a legacy server (or
     * its middleware) refusing the probe; auth and 5xx say nothing. */
    int h = err ? err->http_status : 0;
    return h >= 400 && h < 500 && h != 401 && h != 403 ? MCP_ERA_IS_LEGACY : MCP_ERA_NO_EVIDENCE;
  }
  case MCP_ETIMEDOUT:
  case MCP_ECLOSED:
    /* A stdio server that stays silent on the probe or exits on it is a
     * legacy one (rmcp servers exit); over HTTP these are connect errors. */
    return stdio ? MCP_ERA_IS_LEGACY : MCP_ERA_NO_EVIDENCE;
  default: return MCP_ERA_NO_EVIDENCE;
  }
}

/*
 * The common case without a walk: `"resultType":"complete"` as the last or
 * the first member.  Sound on valid compact JSON: the quote after the colon
 * can only be a delimiter (an escaped one follows a backslash), so
 * "complete" is a string value, "resultType" its key, and the brace at the
 * very end (or start) is the result object's own.  A repeated key is then
 * read as json-c reads it (the last one) at the end, and as the walk reads
 * it (the first one) at the start.
 */
bool mcp__era_complete_edge(const char *t, size_t len, size_t *from, size_t *n) {
  static const char kv[] = "\"resultType\":\"complete\"";
  size_t k = sizeof(kv) - 1;
  if (!t || len < k + 2) return false;
  if (t[len - 1] == '}' && memcmp(t + len - 1 - k, kv, k) == 0 &&
      (t[len - 2 - k] == ',' || t[len - 2 - k] == '{')) {
    bool comma = t[len - 2 - k] == ','; /* ...,"resultType":"complete"} */
    *from = len - 1 - k - comma;
    *n = k + comma;
    return true;
  }
  if (t[0] == '{' && memcmp(t + 1, kv, k) == 0 && t[k + 1] == ',') {
    *from = 1; /* {"resultType":"complete",... */
    *n = k + 1;
    return true;
  }
  return false;
}

mcp_result_kind mcp__era_result_kind(const char *text, size_t len) {
  const char *v = NULL;
  size_t n = 0;
  size_t from, cut;
  if (mcp__era_complete_edge(text, len, &from, &cut)) return MCP_RESULT_COMPLETE;
  if (!text || !mcp__jscan_member(text, len, "resultType", &v, &n)) return MCP_RESULT_COMPLETE;
#define IS(lit) (n == sizeof(lit) + 1 && memcmp(v, "\"" lit "\"", n) == 0)
  if (IS("complete")) return MCP_RESULT_COMPLETE;
  if (IS("input_required")) return MCP_RESULT_INPUT_REQUIRED;
  if (IS("task")) return MCP_RESULT_TASK;
#undef IS
  return MCP_RESULT_UNKNOWN;
}

/* ---- modern HTTP headers ----------------------------------------------------- */

static bool header_safe(const char *s, size_t n) {
  if (n == 0) return true;
  if (s[0] == ' ' || s[n - 1] == ' ') return false;
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e) return false;
  /* A plain value that looks encoded is encoded, so it cannot be misread. */
  if (n >= 11 && memcmp(s, "=?base64?", 9) == 0 && memcmp(s + n - 2, "?=", 2) == 0) return false;
  return true;
}

char *mcp__era_header_value(const char *s, size_t n) {
  if (header_safe(s, n)) return mcp__strndup(s, n);
  char *out = mcp__malloc(9 + mcp__base64_len(n, true) + 3);
  if (!out) return NULL;
  memcpy(out, "=?base64?", 9);
  size_t k = 9 + mcp__base64_encode_to(out + 9, s, n, MCP_B64_STD, true);
  memcpy(out + k, "?=", 3);
  return out;
}

/* The string value at [v, v+n) (a JSON string with its quotes) decoded, as
 * a header value.  Without escapes the bytes are taken as they are; with
 * them json-c decodes (rare: names and URIs are mostly plain). */
static char *header_from_json_string(const char *v, size_t n) {
  if (n < 2 || v[0] != '"' || v[n - 1] != '"') return NULL;
  if (!memchr(v, '\\', n)) return mcp__era_header_value(v + 1, n - 2);
  json_object *o = mcp__jsonrpc_parse(v, n, NULL);
  char *out = o && json_object_is_type(o, json_type_string)
                  ? mcp__era_header_value(json_object_get_string(o),
                                          (size_t)json_object_get_string_len(o))
                  : NULL;
  json_object_put(o);
  return out;
}

mcp_status mcp__era_request_headers(const char *body, size_t len, char **method, char **name) {
  *method = *name = NULL;
  const char *v, *params;
  size_t vn, pn;
  if (!mcp__jscan_member(body, len, "method", &v, &vn) || vn < 2 || v[0] != '"') return MCP_EINVAL;
  const char *key = NULL;
  if ((vn == 12 && memcmp(v, "\"tools/call\"", 12) == 0) ||
      (vn == 13 && memcmp(v, "\"prompts/get\"", 13) == 0))
    key = "name";
  else if (vn == 16 && memcmp(v, "\"resources/read\"", 16) == 0) key = "uri";
  else if ((vn == 11 && memcmp(v, "\"tasks/get\"", 11) == 0) ||
           (vn == 14 && memcmp(v, "\"tasks/update\"", 14) == 0) ||
           (vn == 14 && memcmp(v, "\"tasks/cancel\"", 14) == 0))
    key = "taskId";
  if (!(*method = header_from_json_string(v, vn))) return MCP_ENOMEM;
  if (!key) return MCP_OK;
  const char *nv;
  size_t nn;
  if (!mcp__jscan_member(body, len, "params", &params, &pn) ||
      !mcp__jscan_member(params, pn, key, &nv, &nn) || nn < 2 || nv[0] != '"') {
    mcp__free(*method);
    *method = NULL;
    return MCP_EINVAL;
  }
  if (!(*name = header_from_json_string(nv, nn))) {
    mcp__free(*method);
    *method = NULL;
    return MCP_ENOMEM;
  }
  return MCP_OK;
}
