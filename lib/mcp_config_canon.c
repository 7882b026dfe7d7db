/* SPDX-License-Identifier: MIT */
/*
 * mcp_config_canon.c: the canonical JSON form of a server definition and
 * the definition's hash (the SHA-256 of that form), which keys the
 * deferred-tool cache.  Object keys sorted recursively, no whitespace,
 * resolved secrets never included (see mcp__config_canonical_json() in
 * mcp_config.h for the exact fields).
 *
 * Pure: no threads, no globals, no I/O.  Knows nothing of files, processes,
 * the client or the manager.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "mcp_config.h"
#include "mcp_config_int.h"
#include "mcp_sha256.h"

int mcp__config_cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int put_json_string(mcp_buf *b, const char *s, size_t n) {
  static const char hex[] = "0123456789abcdef";
  if (mcp__buf_append(b, "\"", 1)) return MCP_ENOMEM;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    char esc[6];
    size_t el = 0;
    switch (c) {
    case '"':
      memcpy(esc, "\\\"", 2);
      el = 2;
      break;
    case '\\':
      memcpy(esc, "\\\\", 2);
      el = 2;
      break;
    case '\n':
      memcpy(esc, "\\n", 2);
      el = 2;
      break;
    case '\r':
      memcpy(esc, "\\r", 2);
      el = 2;
      break;
    case '\t':
      memcpy(esc, "\\t", 2);
      el = 2;
      break;
    default:
      if (c < 0x20) {
        esc[0] = '\\';
        esc[1] = 'u';
        esc[2] = '0';
        esc[3] = '0';
        esc[4] = hex[c >> 4];
        esc[5] = hex[c & 15];
        el = 6;
      }
    }
    int rc = el ? mcp__buf_append(b, esc, el) : mcp__buf_append(b, &s[i], 1);
    if (rc) return MCP_ENOMEM;
  }
  return mcp__buf_append(b, "\"", 1) ? MCP_ENOMEM : MCP_OK;
}

/* Serialises |o| with every object's keys in byte order, no whitespace. */
static int stable_stringify(mcp_buf *b, json_object *o) {
  char num[32];
  switch (json_object_get_type(o)) {
  case json_type_null: return mcp__buf_append(b, "null", 4);
  case json_type_boolean:
    return json_object_get_boolean(o) ? mcp__buf_append(b, "true", 4)
                                      : mcp__buf_append(b, "false", 5);
  case json_type_int:
    snprintf(num, sizeof(num), "%lld", (long long)json_object_get_int64(o));
    return mcp__buf_append(b, num, strlen(num));
  case json_type_double: {
    const char *t = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
    return mcp__buf_append(b, t, strlen(t));
  }
  case json_type_string:
    return put_json_string(b, json_object_get_string(o), (size_t)json_object_get_string_len(o));
  case json_type_array: {
    size_t n = json_object_array_length(o);
    if (mcp__buf_append(b, "[", 1)) return MCP_ENOMEM;
    for (size_t i = 0; i < n; i++) {
      if (i && mcp__buf_append(b, ",", 1)) return MCP_ENOMEM;
      if (stable_stringify(b, json_object_array_get_idx(o, i))) return MCP_ENOMEM;
    }
    return mcp__buf_append(b, "]", 1);
  }
  case json_type_object: {
    size_t n = (size_t)json_object_object_length(o), k = 0;
    const char **keys = mcp__calloc(n ? n : 1, sizeof(char *));
    if (!keys) return MCP_ENOMEM;
    json_object_object_foreach(o, key, val) {
      (void)val;
      keys[k++] = key;
    }
    qsort(keys, k, sizeof(char *), mcp__config_cmp_str);
    int rc = mcp__buf_append(b, "{", 1);
    for (size_t i = 0; rc == MCP_OK && i < k; i++) {
      if (i) rc = mcp__buf_append(b, ",", 1);
      if (rc == MCP_OK) rc = put_json_string(b, keys[i], strlen(keys[i]));
      if (rc == MCP_OK) rc = mcp__buf_append(b, ":", 1);
      if (rc == MCP_OK) rc = stable_stringify(b, json_object_object_get(o, keys[i]));
    }
    if (rc == MCP_OK) rc = mcp__buf_append(b, "}", 1);
    mcp__free(keys);
    return rc;
  }
  }
  return MCP_OK;
}

static const char *http2_name(mcp_http_version m) {
  switch (m) {
  case MCP_HTTP_VERSION_1_1: return "off";
  case MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE: return "prior-knowledge";
  case MCP_HTTP_VERSION_AUTO: break;
  }
  return "auto";
}

/* Adds |key|: |val| to |o|; false (|val| released) when out of memory. */
static bool obj_add(json_object *o, const char *key, json_object *val) {
  if (!val) return false;
  if (json_object_object_add(o, key, val) != 0) {
    json_object_put(val);
    return false;
  }
  return true;
}

static bool obj_add_str(json_object *o, const char *key, const char *s) {
  if (!s) return true;
  return obj_add(o, key, json_object_new_string(s));
}

static json_object *kv_object(const mcp_kv *kv, size_t n) {
  json_object *o = json_object_new_object();
  if (!o) return NULL;
  for (size_t i = 0; i < n; i++) {
    if (!obj_add_str(o, kv[i].name, kv[i].value)) {
      json_object_put(o);
      return NULL;
    }
  }
  return o;
}

mcp_status mcp__config_canonical_json(const mcp_server_def *def, char **out) {
  mcp_status st = MCP_ENOMEM;
  mcp_buf b;
  mcp__buf_init(&b);
  if (!def || !out) return MCP_EINVAL;
  *out = NULL;
  json_object *o = json_object_new_object();
  if (!o) goto out;
  if (!obj_add_str(o, "type", mcp__config_type_name(def->type))) goto out;
  if (def->s.argv && def->s.argc > 0) {
    if (!obj_add_str(o, "command", def->s.argv[0])) goto out;
    if (def->s.argc > 1) {
      json_object *a = json_object_new_array();
      if (!obj_add(o, "args", a)) goto out;
      for (size_t i = 1; i < def->s.argc; i++) {
        json_object *s = json_object_new_string(def->s.argv[i]);
        if (!s || json_object_array_add(a, s) != 0) {
          json_object_put(s);
          goto out;
        }
      }
    }
  }
  if (def->s.nenv && !obj_add(o, "env", kv_object(def->s.env, def->s.nenv))) goto out;
  if (!obj_add_str(o, "envInherit", mcp__config_env_inherit_name(def->s.env_inherit))) goto out;
  if (def->s.nheaders && !obj_add(o, "headers", kv_object(def->s.headers, def->s.nheaders)))
    goto out;
  if (!obj_add_str(o, "cwd", def->s.cwd) || !obj_add_str(o, "url", def->s.url) ||
      !obj_add_str(o, "caFile", def->s.tls.ca_file) ||
      !obj_add_str(o, "caDir", def->s.tls.ca_dir) ||
      !obj_add_str(o, "clientCert", def->s.tls.client_cert) ||
      !obj_add_str(o, "clientKey", def->s.tls.client_key))
    goto out;
  if (def->s.timeout_ms >= 0 && !obj_add(o, "timeout", json_object_new_int64(def->s.timeout_ms)))
    goto out;
  if (def->s.http_version != MCP_HTTP_VERSION_AUTO &&
      !obj_add_str(o, "http2", http2_name(def->s.http_version)))
    goto out;
  if (def->s.tls.insecure && !obj_add(o, "insecure", json_object_new_boolean(1))) goto out;
  if (def->oauth) {
    const mcp_config_oauth *a = def->oauth;
    json_object *oa = json_object_new_object();
    if (!obj_add(o, "oauth", oa) || !obj_add_str(oa, "clientId", a->client_id) ||
        !obj_add_str(oa, "scopes", a->scopes) || !obj_add_str(oa, "redirectUri", a->redirect_uri) ||
        !obj_add_str(oa, "clientMetadataUrl", a->client_metadata_url) ||
        !obj_add_str(oa, "privateKeyFile", a->private_key_file) ||
        !obj_add_str(oa, "signingAlg", a->signing_alg) ||
        (a->client_credentials && !obj_add_str(oa, "grant", "client_credentials")) ||
        !obj_add_str(oa, "workloadJwtFile", a->workload_jwt_file) ||
        (a->dpop && !obj_add(oa, "dpop", json_object_new_boolean(a->dpop == 2))) ||
        (a->client_secret && !obj_add(oa, "clientSecret", json_object_new_boolean(1))))
      goto out;
  }
  if (stable_stringify(&b, o) || mcp__buf_reserve(&b, 0)) goto out;
  *out = b.data;
  b.data = NULL;
  st = MCP_OK;
out:
  json_object_put(o);
  mcp__buf_free(&b);
  return st;
}

/* The SHA-256 of |len| bytes as 64 hex digits and a NUL. */
void mcp__config_sha256_hex(const void *data, size_t len, char out[65]) {
  static const char hex[] = "0123456789abcdef";
  unsigned char md[MCP_SHA256_LEN];
  mcp__sha256(data, len, md);
  for (unsigned i = 0; i < MCP_SHA256_LEN; i++) {
    out[2 * i] = hex[md[i] >> 4];
    out[2 * i + 1] = hex[md[i] & 15];
  }
  out[64] = '\0';
}

/* Fills def->hash; MCP_OK or MCP_ENOMEM. */
mcp_status mcp__config_def_hash(mcp_server_def *def) {
  char *canon = NULL;
  mcp_status st = mcp__config_canonical_json(def, &canon);
  if (st != MCP_OK) return st;
  mcp__config_sha256_hex(canon, strlen(canon), def->hash);
  mcp__free(canon);
  return MCP_OK;
}
