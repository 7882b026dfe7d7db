/* SPDX-License-Identifier: MIT */
/*
 * mcp_request.c: one builder per request method (see mcp_request.h).
 *
 * Hand-written text assembly rather than a json-c tree per request: a tree
 * costs an allocation per member and a walk to print it, on every call; the
 * scanner already produced the compact text of the caller's arguments, so
 * the request is that text with a few fixed pieces around it.  json-c stays
 * for whatever the scanner refuses (mcp_jscan.h), and prints the same bytes.
 */
#include "config.h"

#include <string.h>

#include "mcp_jscan.h"
#include "mcp_jsonrpc.h"
#include "mcp_request.h"

void mcp__req_clear(mcp_req *r) {
  if (!r) return;
  mcp__free(r->params);
  r->params = NULL;
  r->params_len = 0;
  r->no_meta = false;
}

static mcp_status nomem(mcp_error *err) { return mcp__error_set(err, MCP_ENOMEM, "out of memory"); }

/* Writes |v| in decimal (cheaper than sprintf on the call path).  Returns
 * the bytes written (at most 20). */
static size_t put_i64(char *o, int64_t v) {
  char tmp[24];
  size_t n = 0;
  uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
  do tmp[n++] = (char)('0' + u % 10);
  while ((u /= 10) != 0);
  size_t w = 0;
  if (v < 0) o[w++] = '-';
  while (n) o[w++] = tmp[--n];
  return w;
}

#define PUT_LIT(o, lit) (memcpy((o), (lit), sizeof(lit) - 1), (o) += sizeof(lit) - 1)

/*
 * |json| (NUL-terminated) as compact text in *out (own) / *out_len: the
 * scanner's copy, or json-c's print of its parse when the scanner refuses.
 * |what| names the argument in errors; with |need_object| it must be an
 * object.
 */
static mcp_status compact(const char *json, bool need_object, const char *what, char **out,
                          size_t *out_len, mcp_error *err) {
  size_t len = strlen(json);
  char *t = mcp__malloc(len + 1);
  if (!t) return nomem(err);
  if (mcp__jscan_value(json, len, need_object, t, out_len)) {
    t[*out_len] = '\0';
    *out = t;
    return MCP_OK;
  }
  mcp__free(t);
  const char *why = NULL;
  json_object *o = mcp__jsonrpc_parse(json, len, &why);
  if (!o && why == MCP__JSONRPC_OOM) return nomem(err);
  if (!o) return mcp__error_set(err, MCP_EINVAL, "%s is not valid JSON: %s", what, why ? why : "?");
  if (need_object && !json_object_is_type(o, json_type_object)) {
    json_object_put(o);
    return mcp__error_set(err, MCP_EINVAL, "%s must be a JSON object", what);
  }
  *out = mcp__json_dup_string(o, out_len);
  json_object_put(o);
  return *out ? MCP_OK : nomem(err);
}

/* {"<k1>":<string s1>[,"<k2>":<raw v2>]} into r->params.  Keys are
 * literals that need no escaping. */
static mcp_status put_params(mcp_req *r, const char *k1, const char *s1, const char *k2,
                             const char *v2, size_t v2_len, mcp_error *err) {
  size_t k1n = strlen(k1), s1n = strlen(s1), k2n = k2 ? strlen(k2) : 0;
  char *t = mcp__malloc(16 + k1n + 6 * s1n + k2n + v2_len);
  if (!t) return nomem(err);
  char *o = t;
  *o++ = '{';
  *o++ = '"';
  memcpy(o, k1, k1n);
  o += k1n;
  PUT_LIT(o, "\":");
  o += mcp__jscan_put_string(o, s1, s1n);
  if (k2) {
    PUT_LIT(o, ",\"");
    memcpy(o, k2, k2n);
    o += k2n;
    PUT_LIT(o, "\":");
    memcpy(o, v2, v2_len);
    o += v2_len;
  }
  *o++ = '}';
  *o = '\0';
  r->params = t;
  r->params_len = (size_t)(o - t);
  r->no_meta = true; /* the keys are the callers' literals, never "_meta" */
  return MCP_OK;
}

mcp_status mcp__req_generic(mcp_req *r, const char *method, const char *params_json,
                            mcp_error *err) {
  memset(r, 0, sizeof(*r));
  r->method = method;
  if (!params_json) return MCP_OK;
  mcp_status st = compact(params_json, true, "params", &r->params, &r->params_len, err);
  if (st) r->params = NULL;
  return st;
}

/*
 * {"name":<name>[,"<key>":<args compacted>]} into r->params in one buffer:
 * the scanner writes the arguments' compact text in place (the hot path of
 * tools/call); what it refuses goes through compact().  |key| NULL: no
 * arguments member.
 */
static mcp_status put_named(mcp_req *r, const char *name, const char *key, const char *args_json,
                            const char *what, mcp_error *err) {
  size_t nn = strlen(name), an = args_json ? strlen(args_json) : 0;
  size_t kn = key ? strlen(key) : 0;
  char *t = mcp__malloc(24 + 6 * nn + kn + an);
  if (!t) return nomem(err);
  char *o = t;
  PUT_LIT(o, "{\"name\":");
  o += mcp__jscan_put_string(o, name, nn);
  if (key) {
    PUT_LIT(o, ",\"");
    memcpy(o, key, kn);
    o += kn;
    PUT_LIT(o, "\":");
    size_t n = 0;
    if (!args_json) {
      PUT_LIT(o, "{}");
    } else if (mcp__jscan_value(args_json, an, true, o, &n)) {
      o += n;
    } else {
      mcp__free(t);
      char *args = NULL;
      mcp_status st = compact(args_json, true, what, &args, &n, err);
      if (st) return st;
      st = put_params(r, "name", name, key, args, n, err);
      mcp__free(args);
      return st;
    }
  }
  *o++ = '}';
  *o = '\0';
  r->params = t;
  r->params_len = (size_t)(o - t);
  r->no_meta = true; /* "name" and |key| only */
  return MCP_OK;
}

mcp_status mcp__req_tool_call(mcp_req *r, const char *name, const char *args_json, mcp_error *err) {
  memset(r, 0, sizeof(*r));
  r->method = "tools/call";
  r->known = true;
  r->tool_call = true;
  return put_named(r, name, "arguments", args_json, "tool arguments", err);
}

mcp_status mcp__req_get_prompt(mcp_req *r, const char *name, const char *args_json,
                               mcp_error *err) {
  memset(r, 0, sizeof(*r));
  r->method = "prompts/get";
  return put_named(r, name, args_json ? "arguments" : NULL, args_json, "prompt arguments", err);
}

mcp_status mcp__req_read_resource(mcp_req *r, const char *uri, mcp_error *err) {
  memset(r, 0, sizeof(*r));
  r->method = "resources/read";
  return put_params(r, "uri", uri, NULL, NULL, 0, err);
}

mcp_status mcp__req_list_page(mcp_req *r, const char *method, const char *cursor, mcp_error *err) {
  memset(r, 0, sizeof(*r));
  r->method = method;
  return cursor ? put_params(r, "cursor", cursor, NULL, NULL, 0, err) : MCP_OK;
}

mcp_status mcp__req_tree(mcp_req *r, const char *method, json_object *params, mcp_error *err) {
  memset(r, 0, sizeof(*r));
  r->method = method;
  if (!params) return MCP_OK;
  r->params = mcp__json_dup_string(params, &r->params_len);
  json_object_put(params);
  return r->params ? MCP_OK : nomem(err);
}

/* Params that already hold a `_meta`, with our members added the way the
 * tree would: parsed, |meta| members and the token set, printed.  NULL
 * when out of memory. */
static char *params_with_meta_tree(const mcp_req *r, const char *meta, size_t meta_len,
                                   bool progress, int64_t id, size_t *len) {
  json_object *p = mcp__jsonrpc_parse(r->params, r->params_len, NULL);
  json_object *m = NULL, *add = NULL;
  char *out = NULL;
  if (!p) return NULL;
  if (!json_object_object_get_ex(p, "_meta", &m) || !json_object_is_type(m, json_type_object)) {
    m = json_object_new_object();
    if (mcp__json_add(p, "_meta", m)) goto done;
  }
  if (meta_len) {
    char *wrapped = mcp__malloc(meta_len + 3);
    if (!wrapped) goto done;
    wrapped[0] = '{';
    memcpy(wrapped + 1, meta, meta_len);
    memcpy(wrapped + 1 + meta_len, "}", 2);
    add = mcp__jsonrpc_parse(wrapped, meta_len + 2, NULL);
    mcp__free(wrapped);
    if (!add) goto done;
    json_object_object_foreach(add, k, v) {
      if (json_object_object_add(m, k, json_object_get(v))) goto done;
    }
  }
  if (progress && mcp__json_add(m, "progressToken", json_object_new_int64(id))) goto done;
  out = mcp__json_dup_string(p, len);
done:
  json_object_put(add);
  json_object_put(p);
  return out;
}

char *mcp__req_text(const mcp_req *r, int64_t id, bool progress, const char *meta, size_t meta_len,
                    size_t *len) {
  const char *params = r->params;
  size_t plen = r->params_len;
  char *tree_params = NULL;
  const char *v = NULL;
  size_t vn = 0;
  if (!meta) meta_len = 0;
  bool adding = progress || meta_len; /* members for the params' _meta */
  bool splice = false;                /* add "_meta" before the params' last brace */
  if (adding && params && !r->no_meta && mcp__jscan_member(params, plen, "_meta", &v, &vn)) {
    if (!(tree_params = params_with_meta_tree(r, meta, meta_len, progress, id, &plen))) return NULL;
    params = tree_params;
  } else if (adding) {
    splice = true;
  }
  /* A known method is printed as is; any other may need escapes. */
  size_t mlen = r->known ? sizeof("\"tools/call\"") : 6 * strlen(r->method);
  char *t = mcp__malloc(96 + mlen + plen + meta_len);
  if (!t) {
    mcp__free(tree_params);
    return NULL;
  }
  char *o = t;
  PUT_LIT(o, "{\"jsonrpc\":\"2.0\",\"id\":");
  o += put_i64(o, id);
  PUT_LIT(o, ",\"method\":");
  if (r->known) PUT_LIT(o, "\"tools/call\"");
  else o += mcp__jscan_put_string(o, r->method, strlen(r->method));
  if (params || splice) {
    PUT_LIT(o, ",\"params\":");
    if (params) {
      size_t keep = splice ? plen - 1 : plen; /* splice: without the '}' */
      memcpy(o, params, keep);
      o += keep;
    } else {
      *o++ = '{';
    }
    if (splice) {
      if (params && plen > 2) *o++ = ','; /* not the empty object "{}" */
      PUT_LIT(o, "\"_meta\":{");
      if (meta_len) memcpy(o, meta, meta_len); /* meta may be NULL then */
      o += meta_len;
      if (progress) {
        if (meta_len) *o++ = ',';
        PUT_LIT(o, "\"progressToken\":");
        o += put_i64(o, id);
      }
      PUT_LIT(o, "}}");
    }
  }
  *o++ = '}';
  *o = '\0';
  *len = (size_t)(o - t);
  mcp__free(tree_params);
  return t;
}
