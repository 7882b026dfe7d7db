/* SPDX-License-Identifier: MIT */
/*
 * mcp_oauth_options.c: the public mcp_oauth_options (mcpconn.h): setters,
 * and the library's internal dup and fill (mcp_oauth.h).
 *
 * Plain data: one thread at a time, as every options object; no I/O, no
 * locks.  Setters validate what they can see alone (a URL is an http(s)
 * URL, a client id is not empty); what the options mean is the engine's.
 * Secrets (client_secret, the private key) are wiped when freed.
 */
#include "config.h"

#include <string.h>

#include "mcp_oauth.h"
#include "mcp_ossl.h"

static mcp_status set_opt(char **dst, const char *v) {
  char *c = NULL;
  if (v && !(c = mcp__strdup(v))) return MCP_ENOMEM;
  mcp__free(*dst);
  *dst = c;
  return MCP_OK;
}

MCP_EXTERN mcp_oauth_options *mcp_oauth_options_new(void) {
  return mcp__calloc(1, sizeof(mcp_oauth_options));
}

MCP_EXTERN void mcp_oauth_options_free(mcp_oauth_options *o) {
  if (!o) return;
  mcp__free(o->client_id);
  if (o->client_secret) OPENSSL_cleanse(o->client_secret, strlen(o->client_secret));
  mcp__free(o->client_secret);
  mcp__free(o->client_metadata_url);
  mcp__free(o->client_issuer);
  mcp__free(o->client_name);
  mcp__free(o->redirect_uri);
  mcp__free(o->scopes);
  if (o->private_key_pem) OPENSSL_cleanse(o->private_key_pem, strlen(o->private_key_pem));
  mcp__free(o->private_key_pem);
  mcp__free(o->signing_alg);
  mcp__free(o->idp_token_endpoint);
  mcp__free(o->idp_client_id);
  mcp__free(o->idp_id_token);
  mcp__free(o->file_store_dir);
  if (o->workload_jwt) OPENSSL_cleanse(o->workload_jwt, strlen(o->workload_jwt));
  mcp__free(o->workload_jwt);
  mcp__free(o->workload_jwt_file);
  mcp__free(o);
}

MCP_EXTERN mcp_status mcp_oauth_options_set_client(mcp_oauth_options *o, const char *client_id,
                                                   const char *client_secret) {
  if (!o || (client_id && !*client_id)) return MCP_EINVAL;
  if (set_opt(&o->client_id, client_id) || set_opt(&o->client_secret, client_secret))
    return MCP_ENOMEM;
  return MCP_OK;
}

MCP_EXTERN mcp_status mcp_oauth_options_set_client_issuer(mcp_oauth_options *o,
                                                          const char *issuer) {
  if (!o || (issuer && !mcp__oauth_is_url(issuer))) return MCP_EINVAL;
  return set_opt(&o->client_issuer, issuer);
}

MCP_EXTERN mcp_status mcp_oauth_options_set_client_metadata_url(mcp_oauth_options *o,
                                                                const char *url) {
  if (!o || (url && !mcp__oauth_is_url(url))) return MCP_EINVAL;
  return set_opt(&o->client_metadata_url, url);
}

MCP_EXTERN mcp_status mcp_oauth_options_set_client_name(mcp_oauth_options *o, const char *name) {
  if (!o) return MCP_EINVAL;
  return set_opt(&o->client_name, name);
}

MCP_EXTERN mcp_status mcp_oauth_options_set_redirect_uri(mcp_oauth_options *o, const char *uri) {
  if (!o || (uri && !mcp__oauth_is_url(uri))) return MCP_EINVAL;
  return set_opt(&o->redirect_uri, uri);
}

MCP_EXTERN mcp_status mcp_oauth_options_set_scopes(mcp_oauth_options *o, const char *scopes) {
  if (!o) return MCP_EINVAL;
  return set_opt(&o->scopes, scopes && *scopes ? scopes : NULL);
}

MCP_EXTERN mcp_status mcp_oauth_options_set_grant(mcp_oauth_options *o, mcp_oauth_grant grant) {
  if (!o ||
      (grant != MCP_OAUTH_GRANT_AUTHORIZATION_CODE && grant != MCP_OAUTH_GRANT_CLIENT_CREDENTIALS &&
       grant != MCP_OAUTH_GRANT_ID_JAG && grant != MCP_OAUTH_GRANT_JWT_BEARER))
    return MCP_EINVAL;
  o->grant = grant;
  return MCP_OK;
}

MCP_EXTERN mcp_status mcp_oauth_options_set_private_key(mcp_oauth_options *o, const char *pem,
                                                        const char *alg) {
  if (!o || (pem && !*pem)) return MCP_EINVAL;
  if (set_opt(&o->private_key_pem, pem) ||
      set_opt(&o->signing_alg, pem ? (alg ? alg : "ES256") : NULL))
    return MCP_ENOMEM;
  return MCP_OK;
}

MCP_EXTERN mcp_status mcp_oauth_options_set_id_jag(mcp_oauth_options *o,
                                                   const char *idp_token_endpoint,
                                                   const char *idp_client_id,
                                                   const char *id_token) {
  if (!o || !idp_token_endpoint || !mcp__oauth_is_url(idp_token_endpoint) || !id_token ||
      !*id_token)
    return MCP_EINVAL;
  if (set_opt(&o->idp_token_endpoint, idp_token_endpoint) ||
      set_opt(&o->idp_client_id, idp_client_id) || set_opt(&o->idp_id_token, id_token))
    return MCP_ENOMEM;
  return MCP_OK;
}

MCP_EXTERN void mcp_oauth_options_set_authorize(mcp_oauth_options *o, mcp_oauth_authorize_fn fn,
                                                void *user) {
  if (!o) return;
  o->authorize = fn;
  o->authorize_user = user;
}

MCP_EXTERN mcp_status mcp_oauth_options_set_dpop(mcp_oauth_options *o, mcp_oauth_dpop mode) {
  if (!o ||
      (mode != MCP_OAUTH_DPOP_AUTO && mode != MCP_OAUTH_DPOP_OFF && mode != MCP_OAUTH_DPOP_ON))
    return MCP_EINVAL;
  o->dpop = mode;
  return MCP_OK;
}

MCP_EXTERN mcp_status mcp_oauth_options_set_workload_jwt(mcp_oauth_options *o, const char *jwt,
                                                         const char *jwt_file) {
  if (!o || (!jwt) == (!jwt_file) || (jwt && !*jwt) || (jwt_file && !*jwt_file)) return MCP_EINVAL;
  char *j = NULL, *f = NULL;
  if ((jwt && !(j = mcp__strdup(jwt))) || (jwt_file && !(f = mcp__strdup(jwt_file)))) {
    mcp__free(j);
    return MCP_ENOMEM;
  }
  if (o->workload_jwt) OPENSSL_cleanse(o->workload_jwt, strlen(o->workload_jwt));
  mcp__free(o->workload_jwt);
  mcp__free(o->workload_jwt_file);
  o->workload_jwt = j;
  o->workload_jwt_file = f;
  o->workload_fn = NULL;
  o->workload_user = NULL;
  o->grant = MCP_OAUTH_GRANT_JWT_BEARER;
  return MCP_OK;
}

MCP_EXTERN void mcp_oauth_options_set_workload_jwt_callback(mcp_oauth_options *o,
                                                            mcp_oauth_jwt_fn fn, void *user) {
  if (!o || !fn) return;
  if (o->workload_jwt) OPENSSL_cleanse(o->workload_jwt, strlen(o->workload_jwt));
  mcp__free(o->workload_jwt);
  mcp__free(o->workload_jwt_file);
  o->workload_jwt = o->workload_jwt_file = NULL;
  o->workload_fn = fn;
  o->workload_user = user;
  o->grant = MCP_OAUTH_GRANT_JWT_BEARER;
}

MCP_EXTERN void mcp_oauth_options_set_store(mcp_oauth_options *o, mcp_oauth_store_load_fn load,
                                            mcp_oauth_store_save_fn save, void *user) {
  if (!o) return;
  o->load = load;
  o->save = save;
  o->store_user = user;
  mcp__free(o->file_store_dir);
  o->file_store_dir = NULL;
}

MCP_EXTERN mcp_status mcp_oauth_options_set_file_store(mcp_oauth_options *o, const char *dir) {
  if (!o) return MCP_EINVAL;
  mcp_status st = set_opt(&o->file_store_dir, dir ? dir : "");
  if (st == MCP_OK) {
    o->load = NULL;
    o->save = NULL;
    o->store_user = NULL;
  }
  return st;
}

mcp_oauth_options *mcp__oauth_options_dup(const mcp_oauth_options *o) {
  if (!o) return NULL;
  mcp_oauth_options *d = mcp_oauth_options_new();
  if (!d) return NULL;
  *d = *o;
  d->client_id = d->client_secret = d->client_metadata_url = d->client_name = NULL;
  d->client_issuer = NULL;
  d->redirect_uri = d->scopes = d->private_key_pem = d->signing_alg = NULL;
  d->idp_token_endpoint = d->idp_client_id = d->idp_id_token = d->file_store_dir = NULL;
  d->workload_jwt = d->workload_jwt_file = NULL;
  if (set_opt(&d->client_id, o->client_id) || set_opt(&d->client_secret, o->client_secret) ||
      set_opt(&d->client_issuer, o->client_issuer) ||
      set_opt(&d->client_metadata_url, o->client_metadata_url) ||
      set_opt(&d->client_name, o->client_name) || set_opt(&d->redirect_uri, o->redirect_uri) ||
      set_opt(&d->scopes, o->scopes) || set_opt(&d->private_key_pem, o->private_key_pem) ||
      set_opt(&d->signing_alg, o->signing_alg) ||
      set_opt(&d->idp_token_endpoint, o->idp_token_endpoint) ||
      set_opt(&d->idp_client_id, o->idp_client_id) || set_opt(&d->idp_id_token, o->idp_id_token) ||
      set_opt(&d->file_store_dir, o->file_store_dir) ||
      set_opt(&d->workload_jwt, o->workload_jwt) ||
      set_opt(&d->workload_jwt_file, o->workload_jwt_file)) {
    mcp_oauth_options_free(d);
    return NULL;
  }
  return d;
}

static mcp_status fill_str(char **dst, const char *v) {
  return *dst || !v ? MCP_OK : set_opt(dst, v);
}

mcp_status mcp__oauth_options_fill(mcp_oauth_options *o, const mcp_oauth_options *d) {
  if (fill_str(&o->client_metadata_url, d->client_metadata_url) ||
      fill_str(&o->client_name, d->client_name) || fill_str(&o->redirect_uri, d->redirect_uri) ||
      fill_str(&o->scopes, d->scopes))
    return MCP_ENOMEM;
  if (!o->client_id && d->client_id &&
      (set_opt(&o->client_id, d->client_id) || set_opt(&o->client_secret, d->client_secret) ||
       set_opt(&o->client_issuer, d->client_issuer)))
    return MCP_ENOMEM;
  if (o->dpop == MCP_OAUTH_DPOP_AUTO) o->dpop = d->dpop;
  if (!o->authorize) {
    o->authorize = d->authorize;
    o->authorize_user = d->authorize_user;
  }
  if (!o->load && !o->save && !o->file_store_dir) {
    o->load = d->load;
    o->save = d->save;
    o->store_user = d->store_user;
    if (fill_str(&o->file_store_dir, d->file_store_dir)) return MCP_ENOMEM;
  }
  return MCP_OK;
}
