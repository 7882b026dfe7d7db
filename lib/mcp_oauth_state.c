/* SPDX-License-Identifier: MIT */
/*
 * mcp_oauth_state.c: the OAuth engine's persistent state (mcp_oauth_int.h):
 * tokens, the DPoP key bound to them, the client registrations made with
 * dynamic registration, serialised as one JSON document per server and
 * kept by the host's save/load callbacks or the private file store
 * (mcp_oauth_store.c).  Secrets are wiped from memory once copied.
 *
 * Threads: the engine's flow thread (and mcp__oauth_new()).
 */
#include "config.h"

#include <json-c/json.h>
#include <strings.h>

#include "mcp_jsonrpc.h"
#include "mcp_oauth_int.h"

static mcp_status store_load(mcp_oauth *a, char **data, mcp_error *err) {
  *data = NULL;
  if (a->o->load) {
    if (a->o->load(a->o->store_user, a->store_key, data) != MCP_OK) {
      mcp_free(*data);
      *data = NULL;
    }
    return MCP_OK;
  }
  if (!a->o->file_store_dir) return MCP_OK;
  char *dir = mcp__oauth_store_dir(a->o->file_store_dir);
  if (!dir) return MCP_OK; /* no $HOME: no default store */
  mcp_status st = mcp__oauth_file_load(dir, a->store_key, data, err);
  mcp__free(dir);
  return st == MCP_ENOTFOUND ? MCP_OK : st;
}

static void store_save(mcp_oauth *a, const char *data) {
  if (a->o->save) {
    a->o->save(a->o->store_user, a->store_key, data);
    return;
  }
  if (!a->o->file_store_dir) return;
  char *dir = mcp__oauth_store_dir(a->o->file_store_dir);
  /* A failed save keeps the token in memory for this engine; the host
   * learned of an unsafe store when it was loaded (mcp__oauth_new). */
  if (dir) mcp__oauth_file_save(dir, a->store_key, data, NULL);
  mcp__free(dir);
}

void mcp__oauth_save_state(mcp_oauth *a) {
  json_object *o = json_object_new_object();
  if (!o) return;
  add_str(o, "resource", a->store_key);
  add_str(o, "access_token", a->access_token);
  /* A DPoP-bound token is worthless without its key, and the key is as
   * secret as the token: both go where the tokens go, nowhere else. */
  if (a->token_dpop) add_str(o, "token_type", "DPoP");
  char *key = a->dpop_key ? mcp__dpop_key_export(a->dpop_key) : NULL;
  add_str(o, "dpop_key", key);
  if (key) {
    OPENSSL_cleanse(key, strlen(key));
    mcp__free(key);
  }
  add_str(o, "refresh_token", a->refresh_token);
  add_str(o, "scope", a->scope);
  add_str(o, "requested_scope", a->req_scope);
  if (a->expires_at) json_object_object_add(o, "expires_at", json_object_new_int64(a->expires_at));
  add_str(o, "issuer", a->issuer);
  add_str(o, "token_endpoint", a->token_endpoint);
  if (a->reg_issuer) {
    /* Only a registration we made (DCR) is ours to keep. */
    add_str(o, "client_id", a->client_id);
    add_str(o, "client_secret", a->client_secret);
    add_str(o, "token_endpoint_auth_method", a->auth_method);
    add_str(o, "registered_with", a->reg_issuer);
  }
  if (a->regs) json_object_object_add(o, "registrations", json_object_get(a->regs));
  const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
                                                        JSON_C_TO_STRING_NOSLASHESCAPE);
  if (s) store_save(a, s);
  json_object_put(o);
}

mcp_status mcp__oauth_load_state(mcp_oauth *a, mcp_error *err) {
  char *data = NULL;
  mcp_status st = store_load(a, &data, err);
  if (!data) return st;
  json_object *o = mcp__json_parse_document(data, strlen(data), 8, NULL, NULL, 0);
  OPENSSL_cleanse(data, strlen(data));
  mcp_free(data);
  if (!o || !json_object_is_type(o, json_type_object)) {
    json_object_put(o);
    return MCP_OK; /* unusable: as if none were stored */
  }
  const char *res = mcp__oauth_jstr(o, "resource");
  if (res && strcmp(res, a->store_key) == 0) {
    set_field(&a->access_token, mcp__oauth_jstr(o, "access_token"));
    set_field(&a->refresh_token, mcp__oauth_jstr(o, "refresh_token"));
    set_field(&a->scope, mcp__oauth_jstr(o, "scope"));
    set_field(&a->req_scope, mcp__oauth_jstr(o, "requested_scope"));
    set_field(&a->issuer, mcp__oauth_jstr(o, "issuer"));
    set_field(&a->token_endpoint, mcp__oauth_jstr(o, "token_endpoint"));
    json_object *e = NULL;
    if (json_object_object_get_ex(o, "expires_at", &e)) a->expires_at = json_object_get_int64(e);
    const char *k = mcp__oauth_jstr(o, "dpop_key");
    if (k) mcp__dpop_key_load(k, &a->dpop_key, NULL);
    a->token_dpop = mcp__oauth_jstr(o, "token_type") &&
                    strcasecmp(mcp__oauth_jstr(o, "token_type"), "DPoP") == 0;
    if (a->token_dpop && !a->dpop_key) {
      /* Bound to a key we no longer have: unusable, as if none were stored. */
      set_field(&a->access_token, NULL);
      set_field(&a->refresh_token, NULL);
      a->token_dpop = false;
    }
    if (!a->o->client_id && mcp__oauth_jstr(o, "client_id") &&
        mcp__oauth_jstr(o, "registered_with")) {
      set_field(&a->client_id, mcp__oauth_jstr(o, "client_id"));
      set_field(&a->client_secret, mcp__oauth_jstr(o, "client_secret"));
      set_field(&a->auth_method, mcp__oauth_jstr(o, "token_endpoint_auth_method"));
      set_field(&a->reg_issuer, mcp__oauth_jstr(o, "registered_with"));
    }
    json_object *r = NULL;
    if (json_object_object_get_ex(o, "registrations", &r) &&
        json_object_is_type(r, json_type_object))
      a->regs = json_object_get(r);
  }
  json_object_put(o);
  return MCP_OK;
}
