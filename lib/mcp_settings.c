/* SPDX-License-Identifier: MIT */
/*
 * mcp_settings.c: copy, free and the shared checks of one server's
 * connection settings (mcp_settings.h), so that the config parser, the
 * client options and the transports agree on one shape and one rule for
 * each field (which headers are the transport's own, what an env name
 * may be).
 *
 * Pure: no threads, no globals, no I/O.
 */
#include "config.h"

#include <string.h>
#include <strings.h>

#include "mcp_int.h"
#include "mcp_settings.h"

mcp_status mcp__settings_set_str(char **slot, const char *s) {
  char *d = NULL;
  if (s && !(d = mcp__strdup(s))) return MCP_ENOMEM;
  mcp__free(*slot);
  *slot = d;
  return MCP_OK;
}

static void kv_free(mcp_kv *kv, size_t n) {
  if (!kv) return;
  for (size_t i = 0; i < n; i++) {
    mcp__free(kv[i].name);
    mcp__free(kv[i].value);
  }
  mcp__free(kv);
}

static void strv_free(char **v) {
  if (!v) return;
  for (char **p = v; *p; p++) mcp__free(*p);
  mcp__free(v);
}

void mcp__tls_settings_clear(mcp_tls_settings *t) {
  if (!t) return;
  mcp__free(t->ca_file);
  mcp__free(t->ca_dir);
  mcp__free(t->client_cert);
  mcp__free(t->client_key);
  memset(t, 0, sizeof(*t));
}

mcp_status mcp__tls_settings_copy(mcp_tls_settings *dst, const mcp_tls_settings *src) {
  dst->insecure = src->insecure;
  if (mcp__settings_set_str(&dst->ca_file, src->ca_file) ||
      mcp__settings_set_str(&dst->ca_dir, src->ca_dir) ||
      mcp__settings_set_str(&dst->client_cert, src->client_cert) ||
      mcp__settings_set_str(&dst->client_key, src->client_key))
    return MCP_ENOMEM;
  return MCP_OK;
}

void mcp__settings_clear(mcp_server_settings *s) {
  if (!s) return;
  strv_free(s->argv);
  mcp__free(s->cwd);
  kv_free(s->env, s->nenv);
  mcp__free(s->url);
  kv_free(s->headers, s->nheaders);
  mcp__tls_settings_clear(&s->tls);
  memset(s, 0, sizeof(*s));
}

bool mcp__settings_header_reserved(const char *name) {
  static const char *const owned[] = {"content-type",   "accept",         "host",
                                      "content-length", "mcp-session-id", "mcp-protocol-version",
                                      "last-event-id",  "connection",     "transfer-encoding",
                                      "mcp-method",     "mcp-name"};
  for (size_t i = 0; i < sizeof(owned) / sizeof(owned[0]); i++)
    if (strcasecmp(name, owned[i]) == 0) return true;
  return false;
}

bool mcp__settings_header_ok(const char *name, const char *value) {
  return name && *name && value && !strpbrk(name, "\r\n: ") && !strpbrk(value, "\r\n") &&
         !mcp__settings_header_reserved(name);
}

mcp_status mcp__settings_add_header(mcp_server_settings *s, const char *name, const char *value) {
  if (!mcp__settings_header_ok(name, value)) return MCP_EINVAL;
  mcp_kv *h = mcp__reallocarray(s->headers, s->nheaders + 1, sizeof(*h));
  if (!h) return MCP_ENOMEM;
  s->headers = h;
  char *n = mcp__strdup(name), *v = mcp__strdup(value);
  if (!n || !v) {
    mcp__free(n);
    mcp__free(v);
    return MCP_ENOMEM;
  }
  s->headers[s->nheaders++] = (mcp_kv){n, v};
  return MCP_OK;
}

mcp_status mcp__settings_set_env(mcp_server_settings *s, const char *name, const char *value) {
  if (!name || !*name || strchr(name, '=')) return MCP_EINVAL;
  char *v = NULL;
  if (value && !(v = mcp__strdup(value))) return MCP_ENOMEM;
  for (size_t i = 0; i < s->nenv; i++) {
    if (strcmp(s->env[i].name, name) == 0) {
      mcp__free(s->env[i].value);
      s->env[i].value = v;
      return MCP_OK;
    }
  }
  char *n = mcp__strdup(name);
  mcp_kv *e = n ? mcp__reallocarray(s->env, s->nenv + 1, sizeof(*e)) : NULL;
  if (!e) {
    mcp__free(n);
    mcp__free(v);
    return MCP_ENOMEM;
  }
  s->env = e;
  s->env[s->nenv++] = (mcp_kv){n, v};
  return MCP_OK;
}

mcp_status mcp__settings_set_argv(mcp_server_settings *s, const char *const *argv) {
  size_t n = 0;
  while (argv[n]) n++;
  char **d = mcp__calloc(n + 1, sizeof(char *));
  if (!d) return MCP_ENOMEM;
  for (size_t i = 0; i < n; i++) {
    if (!(d[i] = mcp__strdup(argv[i]))) {
      strv_free(d);
      return MCP_ENOMEM;
    }
  }
  strv_free(s->argv);
  s->argv = d;
  s->argc = n;
  mcp__free(s->url);
  s->url = NULL;
  return MCP_OK;
}

mcp_status mcp__settings_set_url(mcp_server_settings *s, const char *url) {
  mcp_status st = mcp__settings_set_str(&s->url, url);
  if (st == MCP_OK) {
    strv_free(s->argv);
    s->argv = NULL;
    s->argc = 0;
  }
  return st;
}

mcp_status mcp__settings_overlay(mcp_server_settings *dst, const mcp_server_settings *src) {
  mcp_status st = MCP_OK;
  if (src->argv && (st = mcp__settings_set_argv(dst, (const char *const *)src->argv))) return st;
  if (src->url && (st = mcp__settings_set_url(dst, src->url))) return st;
  if (src->cwd && (st = mcp__settings_set_str(&dst->cwd, src->cwd))) return st;
  for (size_t i = 0; i < src->nenv; i++)
    if ((st = mcp__settings_set_env(dst, src->env[i].name, src->env[i].value))) return st;
  if (src->env_inherit) dst->env_inherit = src->env_inherit;
  dst->http_kind = src->http_kind;
  dst->http_version = src->http_version;
  for (size_t i = 0; i < src->nheaders; i++) {
    const mcp_kv *h = &src->headers[i];
    if ((st = mcp__settings_add_header(dst, h->name, h->value))) return st;
  }
  const mcp_tls_settings *t = &src->tls;
  if ((t->ca_file || t->ca_dir) && (mcp__settings_set_str(&dst->tls.ca_file, t->ca_file) ||
                                    mcp__settings_set_str(&dst->tls.ca_dir, t->ca_dir)))
    return MCP_ENOMEM;
  if ((t->client_cert || t->client_key) &&
      (mcp__settings_set_str(&dst->tls.client_cert, t->client_cert) ||
       mcp__settings_set_str(&dst->tls.client_key, t->client_key)))
    return MCP_ENOMEM;
  dst->tls.insecure = t->insecure;
  dst->no_get_listener = src->no_get_listener;
  if (src->timeout_ms >= 0) dst->timeout_ms = src->timeout_ms;
  if (src->max_message) dst->max_message = src->max_message;
  if (src->protocol) dst->protocol = src->protocol;
  return MCP_OK;
}

char **mcp__settings_envp(const mcp_server_settings *s, bool *none) {
  *none = s->nenv == 0;
  if (*none) return NULL;
  char **v = mcp__calloc(s->nenv + 1, sizeof(char *));
  if (!v) return NULL;
  for (size_t i = 0; i < s->nenv; i++) {
    const mcp_kv *e = &s->env[i];
    v[i] = e->value ? mcp__asprintf("%s=%s", e->name, e->value) : mcp__strdup(e->name);
    if (!v[i]) {
      strv_free(v);
      return NULL;
    }
  }
  return v;
}

void mcp__settings_envp_free(char **envp) { strv_free(envp); }
