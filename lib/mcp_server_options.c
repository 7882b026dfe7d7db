/* SPDX-License-Identifier: MIT */
/*
 * mcp_server_options.c: the bridge from a server definition (mcp_config.h)
 * to client options.  Both hold the same mcp_server_settings, so the
 * connection is one copy (mcp__settings_overlay) after the checks the
 * public setters make; the "oauth" object goes through the public
 * mcp_oauth_options_* setters, and the OAuth private key file a definition
 * names is read here.  The manager calls it with
 * the definition mcp_secret.c resolved; it sits on the manager's side so
 * that the config files know nothing of the client.
 *
 * No threads, no globals; its only I/O is reading that key file.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "mcp_client.h"
#include "mcp_config.h"
#include "mcp_server_options.h"
#include "mcp_url.h"

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

/* The first field of |s| that client options refuse, or NULL: the checks
 * of the public setters (a URL that parses, headers the host may set, env
 * names, a certificate with its key). */
static const char *refused_field(const mcp_server_settings *s, mcp_status *st) {
  *st = MCP_EINVAL;
  mcp_status ust = s->url ? mcp__url_check(s->url) : MCP_OK;
  if (ust != MCP_OK) return *st = ust, "url";
  for (size_t i = 0; i < s->nheaders; i++)
    if (!mcp__settings_header_ok(s->headers[i].name, s->headers[i].value))
      return s->headers[i].name;
  for (size_t i = 0; i < s->nenv; i++)
    if (!*s->env[i].name || strchr(s->env[i].name, '=')) return s->env[i].name;
  if (!s->tls.client_cert != !s->tls.client_key) return "clientCert";
  if (s->env_inherit < MCP_ENV_INHERIT_UNSET || s->env_inherit > MCP_ENV_INHERIT_NONE)
    return "envInherit";
  return NULL;
}

mcp_status mcp__config_client_options(const mcp_server_def *def, mcp_client_options **out,
                                      mcp_error *err) {
  if (!out) return mcp__error_set(err, MCP_EINVAL, "no output options");
  *out = NULL;
  if (!def || !def->name) return mcp__error_set(err, MCP_EINVAL, "no server definition");
  bool stdio = def->type == MCP_SERVER_STDIO;
  if (stdio ? !def->s.argv || !def->s.argc || !def->s.argv[0][0] : !def->s.url)
    return mcp__error_set(err, MCP_EINVAL, "server \"%s\" has no %s", def->name,
                          stdio ? "command" : "url");
  const char *src = def->source ? def->source : "<config>";
  mcp_status st;
  const char *what = refused_field(&def->s, &st);
  if (what)
    return mcp__error_set(err, st, "%s: server \"%s\": cannot use \"%s\": %s", src, def->name, what,
                          mcp_strerror(st));
  mcp_client_options *co = mcp_client_options_new();
  if (!co) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  /* The whole connection in one copy: over the client's defaults, each
   * field the definition gives (mcp__settings_overlay()). */
  if ((st = mcp__settings_overlay(&co->s, &def->s)) == MCP_OK && def->oauth && !stdio)
    st = oauth_options(def->oauth, co, err); /* err says which field */
  if (st != MCP_OK) {
    mcp_client_options_free(co);
    return st == MCP_ENOMEM ? mcp__error_set(err, st, "out of memory") : st;
  }
  *out = co;
  return MCP_OK;
}
