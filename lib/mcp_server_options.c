/* SPDX-License-Identifier: MIT */
/*
 * mcp_server_options.c: the bridge from a server definition (mcp_config.h)
 * to client options: mcp__config_client_options() calls the public
 * mcp_client_options_* and mcp_oauth_options_* setters, and reads the
 * OAuth private key file a definition names.  The manager calls it with
 * the definition mcp_secret.c resolved; it sits on the manager's side so
 * that the config files know nothing of the client.
 *
 * No threads, no globals; its only I/O is reading that key file.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "mcp_config.h"
#include "mcp_server_options.h"

/* Reads a PEM private key file (small, regular) into a new string. */
static char *read_key_file(const char *path) {
  FILE *f = fopen(path, "re");
  if (!f) return NULL;
  mcp_buf b;
  mcp__buf_init(&b);
  char chunk[4096];
  size_t n;
  while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0 && b.len < 64 * 1024)
    if (mcp__buf_append(&b, chunk, n)) break;
  fclose(f);
  if (!b.data || b.len >= 64 * 1024) {
    if (b.data) memset(b.data, 0, b.len);
    mcp__buf_free(&b);
    return NULL;
  }
  return b.data;
}

/* The server's "oauth" object as mcp_oauth_options on |co|. */
static mcp_status oauth_options(const mcp_config_oauth *a, mcp_client_options *co, mcp_error *err) {
  mcp_oauth_options *o = mcp_oauth_options_new();
  if (!o) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  const char *what = "clientId";
  mcp_status st = MCP_OK;
  if (a->client_id) st = mcp_oauth_options_set_client(o, a->client_id, a->client_secret);
  if (st == MCP_OK && a->scopes) what = "scopes", st = mcp_oauth_options_set_scopes(o, a->scopes);
  if (st == MCP_OK && a->redirect_uri)
    what = "redirectUri", st = mcp_oauth_options_set_redirect_uri(o, a->redirect_uri);
  if (st == MCP_OK && a->client_metadata_url)
    what = "clientMetadataUrl",
    st = mcp_oauth_options_set_client_metadata_url(o, a->client_metadata_url);
  if (st == MCP_OK && a->client_credentials)
    what = "grant", st = mcp_oauth_options_set_grant(o, MCP_OAUTH_GRANT_CLIENT_CREDENTIALS);
  if (st == MCP_OK && a->dpop)
    what = "dpop", st = mcp_oauth_options_set_dpop(o, (mcp_oauth_dpop)a->dpop);
  if (st == MCP_OK && a->workload_jwt_file)
    what = "workloadJwtFile",
    st = mcp_oauth_options_set_workload_jwt(o, NULL, a->workload_jwt_file);
  if (st == MCP_OK && a->private_key_file) {
    what = "privateKeyFile";
    char *pem = read_key_file(a->private_key_file);
    if (!pem) {
      mcp_oauth_options_free(o);
      return mcp__error_set(err, MCP_ECONFIG, "oauth.privateKeyFile \"%s\" cannot be read",
                            a->private_key_file);
    }
    st = mcp_oauth_options_set_private_key(o, pem, a->signing_alg);
    memset(pem, 0, strlen(pem));
    mcp__free(pem);
  }
  if (st == MCP_OK) what = "oauth", st = mcp_client_options_set_oauth(co, o);
  mcp_oauth_options_free(o);
  if (st != MCP_OK)
    return mcp__error_set(err, st == MCP_EINVAL ? MCP_ECONFIG : st, "oauth.%s: %s", what,
                          mcp_strerror(st));
  return MCP_OK;
}

mcp_status mcp__config_client_options(const mcp_server_def *def, mcp_client_options **out,
                                      mcp_error *err) {
  mcp_status st = MCP_OK;
  const char *what = "";
  if (!out) return mcp__error_set(err, MCP_EINVAL, "no output options");
  *out = NULL;
  if (!def || !def->name) return mcp__error_set(err, MCP_EINVAL, "no server definition");
  bool stdio = def->type == MCP_SERVER_STDIO;
  if (stdio ? !def->argv || !def->argc : !def->url)
    return mcp__error_set(err, MCP_EINVAL, "server \"%s\" has no %s", def->name,
                          stdio ? "command" : "url");
  mcp_client_options *co = mcp_client_options_new();
  if (!co) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  if (stdio) {
    what = "command";
    st = mcp_client_options_set_stdio(co, (const char *const *)def->argv);
    if (st == MCP_OK && def->cwd) {
      what = "cwd";
      st = mcp_client_options_set_cwd(co, def->cwd);
    }
    for (size_t i = 0; st == MCP_OK && i < def->nenv; i++) {
      what = def->env[i].name;
      st = mcp_client_options_set_env(co, def->env[i].name, def->env[i].value);
    }
    if (st == MCP_OK && def->env_inherit) {
      what = "envInherit";
      st = mcp_client_options_set_env_inherit(co, (mcp_env_inherit)def->env_inherit);
    }
  } else {
    /* "http" keeps the specification's fallback to the legacy transport
     * for servers that answer initialize with 400, 404 or 405. */
    what = "url";
    st = mcp_client_options_set_http(co, def->url,
                                     def->type == MCP_SERVER_SSE ? MCP_HTTP_TRANSPORT_LEGACY_SSE
                                                                 : MCP_HTTP_TRANSPORT_AUTO);
    mcp_client_options_set_http_version(co, def->http2);
    for (size_t i = 0; st == MCP_OK && i < def->nheaders; i++) {
      what = def->headers[i].name;
      st = mcp_client_options_add_header(co, def->headers[i].name, def->headers[i].value);
    }
    if (st == MCP_OK && (def->ca_file || def->ca_dir)) {
      what = "caFile";
      st = mcp_client_options_set_ca(co, def->ca_file, def->ca_dir);
    }
    if (st == MCP_OK && (def->client_cert || def->client_key)) {
      what = "clientCert";
      st = mcp_client_options_set_client_cert(co, def->client_cert, def->client_key);
    }
    mcp_client_options_set_insecure(co, def->insecure);
    if (st == MCP_OK && def->oauth) {
      what = "oauth";
      st = oauth_options(def->oauth, co, err);
      if (st != MCP_OK) {
        mcp_client_options_free(co);
        return st; /* err says which field */
      }
    }
  }
  if (st != MCP_OK) {
    mcp_client_options_free(co);
    return mcp__error_set(err, st, "%s: server \"%s\": cannot use \"%s\": %s",
                          def->source ? def->source : "<config>", def->name, what,
                          mcp_strerror(st));
  }
  if (def->timeout_ms >= 0) mcp_client_options_set_timeout_ms(co, def->timeout_ms);
  if (def->protocol && (st = mcp_client_options_set_protocol(co, def->protocol))) {
    mcp_client_options_free(co); /* the parser let through only valid modes */
    return mcp__error_set(err, st, "%s: server \"%s\": cannot use \"protocol\": %s",
                          def->source ? def->source : "<config>", def->name, mcp_strerror(st));
  }
  *out = co;
  return MCP_OK;
}
