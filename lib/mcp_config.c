/* SPDX-License-Identifier: MIT */
/*
 * mcp_config.c: one config file's text into server definitions: reading
 * each entry's fields (a table of the keys each transport takes),
 * validation (each error names the file, the server and the field), name
 * folding, "disabledServers", and the sorted set of one file.
 *
 * Pure: no threads, no globals, no I/O except reading the one file that
 * mcp__config_parse_file() names.  Fuzzed by fuzz/fuzz_config.c.  Beside
 * it: variable expansion is mcp_config_expand.c's, other clients' file
 * shapes mcp_config_dialect.c's, the diagnostics list and the definition
 * type's dup/free mcp_config_def.c's, the canonical form and hash
 * mcp_config_canon.c's; finding files and trusting project files is
 * mcp_discover.c's, `!command` secrets are mcp_secret.c's.  Knows nothing
 * of processes, transports, the client or the manager.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <json-c/json.h>

#include "mcp_config.h"
#include "mcp_config_int.h"
#include "mcp_era.h"
#include "mcp_jsonrpc.h"
#include "mcp_toml.h"

/* ---- parsing one server entry ------------------------------------------- */

enum field_id {
  F_TYPE,
  F_COMMAND,
  F_ARGS,
  F_ENV,
  F_CWD,
  F_URL,
  F_HEADERS,
  F_TIMEOUT,
  F_ENABLED,
  F_HTTP2,
  F_CAFILE,
  F_CADIR,
  F_CLIENTCERT,
  F_CLIENTKEY,
  F_INSECURE,
  F_HTTPURL,
  F_SERVERURL,
  F_OAUTH,
  F_ENVINHERIT,
  F_PROTOCOL,
  F_DISABLED,
  F_INCLUDETOOLS,
  F_EXCLUDETOOLS,
  F_DISABLEDTOOLS,
  F_ENABLED_TOOLS,
  F_DISABLED_TOOLS,
  F_COUNT
};

/* Which transports a field belongs to. */
enum { SCOPE_ALL, SCOPE_STDIO, SCOPE_HTTP };

static const struct field_info {
  const char *key;
  int scope;
  bool foreign_only; /* an alias read only from other clients' files */
} field_table[F_COUNT] = {
    [F_TYPE] = {"type", SCOPE_ALL, false},
    [F_COMMAND] = {"command", SCOPE_STDIO, false},
    [F_ARGS] = {"args", SCOPE_STDIO, false},
    [F_ENV] = {"env", SCOPE_STDIO, false},
    [F_CWD] = {"cwd", SCOPE_STDIO, false},
    [F_URL] = {"url", SCOPE_HTTP, false},
    [F_HEADERS] = {"headers", SCOPE_HTTP, false},
    [F_TIMEOUT] = {"timeout", SCOPE_ALL, false},
    [F_ENABLED] = {"enabled", SCOPE_ALL, false},
    [F_HTTP2] = {"http2", SCOPE_HTTP, false},
    [F_CAFILE] = {"caFile", SCOPE_HTTP, false},
    [F_CADIR] = {"caDir", SCOPE_HTTP, false},
    [F_CLIENTCERT] = {"clientCert", SCOPE_HTTP, false},
    [F_CLIENTKEY] = {"clientKey", SCOPE_HTTP, false},
    [F_INSECURE] = {"insecure", SCOPE_HTTP, false},
    [F_HTTPURL] = {"httpUrl", SCOPE_HTTP, true},
    [F_SERVERURL] = {"serverUrl", SCOPE_HTTP, true},
    [F_OAUTH] = {"oauth", SCOPE_HTTP, false},
    [F_ENVINHERIT] = {"envInherit", SCOPE_STDIO, false},
    [F_PROTOCOL] = {"protocol", SCOPE_ALL, false},
    [F_DISABLED] = {"disabled", SCOPE_ALL, false},
    [F_INCLUDETOOLS] = {"includeTools", SCOPE_ALL, true},
    [F_EXCLUDETOOLS] = {"excludeTools", SCOPE_ALL, true},
    [F_DISABLEDTOOLS] = {"disabledTools", SCOPE_ALL, true},
    [F_ENABLED_TOOLS] = {"enabled_tools", SCOPE_ALL, true},
    [F_DISABLED_TOOLS] = {"disabled_tools", SCOPE_ALL, true},
};

static int bad(mcp_parse_ctx *c, const char *server, const char *field, const char *fmt, ...)
    MCP_PRINTF(4, 5);
static int bad(mcp_parse_ctx *c, const char *server, const char *field, const char *fmt, ...) {
  char text[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof(text), fmt, ap);
  va_end(ap);
  mcp__config_diag_add(c->diags, MCP_LOG_WARN, c->source, server, field, "%s", text);
  return c->diags->oom ? CHECK_OOM : CHECK_BAD;
}

/* A debug note about an entry (something skipped); true when out of memory. */
static bool note(mcp_parse_ctx *c, const char *server, const char *field, const char *fmt, ...)
    MCP_PRINTF(4, 5);
static bool note(mcp_parse_ctx *c, const char *server, const char *field, const char *fmt, ...) {
  char text[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof(text), fmt, ap);
  va_end(ap);
  mcp__config_diag_add(c->diags, MCP_LOG_DEBUG, c->source, server, field, "%s", text);
  return c->diags->oom;
}

/* A JSON string without NUL bytes, or NULL. */
const char *mcp__config_plain_string(json_object *o) {
  if (!json_object_is_type(o, json_type_string)) return NULL;
  const char *s = json_object_get_string(o);
  if (strlen(s) != (size_t)json_object_get_string_len(o)) return NULL;
  return s;
}

/* Expands string field |o| into *out; reports a non-string. */
static int expand_field(mcp_parse_ctx *c, const char *server, const char *field, json_object *o,
                        char **out) {
  const char *s = mcp__config_plain_string(o);
  if (!s)
    return bad(c, server, field,
               "field \"%s\" must be a string without NUL "
               "bytes",
               field);
  return mcp__config_expand_value(c, server, field, NULL, s, out);
}

static bool is_tchar(char ch) {
  return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
         (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

/*
 * Reads a map of strings (env or headers) into *kv.  Env names must be
 * non-empty without "=", header names HTTP tokens; header values must not
 * hold CR or LF (except `!command` values, whose output is checked when it
 * is resolved).
 */
static int read_map(mcp_parse_ctx *c, const char *server, const char *field, json_object *o,
                    bool headers, mcp_kv **kv, size_t *n) {
  if (!json_object_is_type(o, json_type_object))
    return bad(c, server, field, "field \"%s\" must be an object of strings", field);
  size_t cap = (size_t)json_object_object_length(o);
  *kv = mcp__calloc(cap ? cap : 1, sizeof(**kv));
  if (!*kv) return CHECK_OOM;
  json_object_object_foreach(o, key, val) {
    if (*key == '\0' || strlen(key) > 1024) {
      return bad(c, server, field, "field \"%s\": invalid name %s", field,
                 *key ? "(too long)" : "\"\"");
    }
    if (headers && mcp__settings_header_reserved(key)) {
      char *q = mcp__config_quote(key);
      int r = q ? bad(c, server, field,
                      "field \"%s\": %s is set by the "
                      "transport",
                      field, q)
                : CHECK_OOM;
      mcp__free(q);
      return r;
    }
    for (const char *p = key; *p; p++) {
      bool ok = headers ? is_tchar(*p) : *p != '=';
      if (!ok) {
        char *q = mcp__config_quote(key);
        int r = q ? bad(c, server, field, "field \"%s\": invalid name %s", field, q) : CHECK_OOM;
        mcp__free(q);
        return r;
      }
    }
    const char *s = mcp__config_plain_string(val);
    if (!s) {
      char *q = mcp__config_quote(key);
      int r = q ? bad(c, server, field,
                      "field \"%s\": value of %s must be a "
                      "string without NUL bytes",
                      field, q)
                : CHECK_OOM;
      mcp__free(q);
      return r;
    }
    mcp_kv *e = &(*kv)[*n];
    int r = mcp__config_expand_value(c, server, field, key, s, &e->value);
    if (r != CHECK_OK) return r;
    e->name = mcp__strdup(key);
    if (!e->name) {
      mcp__free(e->value);
      e->value = NULL;
      return CHECK_OOM;
    }
    (*n)++;
    bool secret = e->value[0] == '!' && c->dialect == MCP_CONFIG_NATIVE;
    if (headers && !secret && strpbrk(e->value, "\r\n")) {
      char *q = mcp__config_quote(key);
      r = q ? bad(c, server, field,
                  "field \"%s\": value of %s contains "
                  "CR or LF",
                  field, q)
            : CHECK_OOM;
      mcp__free(q);
      return r;
    }
  }
  return CHECK_OK;
}

static bool url_scheme_ok(const char *u) {
  return strncasecmp(u, "http://", 7) == 0 || strncasecmp(u, "https://", 8) == 0;
}

/* Reads a server's "oauth" object into d->oauth. */
static int read_oauth(mcp_parse_ctx *c, const char *name, json_object *o, mcp_server_def *d) {
  if (!json_object_is_type(o, json_type_object))
    return bad(c, name, "oauth", "field \"oauth\" must be an object");
  mcp_config_oauth *a = mcp__calloc(1, sizeof(*a));
  if (!a) return CHECK_OOM;
  d->oauth = a;
  static const struct {
    const char *key;
    size_t off;
  } strs[] = {
      {"clientId", offsetof(mcp_config_oauth, client_id)},
      {"clientSecret", offsetof(mcp_config_oauth, client_secret)},
      {"scopes", offsetof(mcp_config_oauth, scopes)},
      {"redirectUri", offsetof(mcp_config_oauth, redirect_uri)},
      {"clientMetadataUrl", offsetof(mcp_config_oauth, client_metadata_url)},
      {"privateKeyFile", offsetof(mcp_config_oauth, private_key_file)},
      {"signingAlg", offsetof(mcp_config_oauth, signing_alg)},
      {"workloadJwtFile", offsetof(mcp_config_oauth, workload_jwt_file)},
  };
  int r;
  json_object_object_foreach(o, key, val) {
    size_t i = 0;
    while (i < sizeof(strs) / sizeof(strs[0]) && strcmp(key, strs[i].key) != 0) i++;
    if (i < sizeof(strs) / sizeof(strs[0])) {
      char **slot = (char **)((char *)a + strs[i].off);
      char field[64];
      snprintf(field, sizeof(field), "oauth.%s", key);
      if ((r = expand_field(c, name, field, val, slot))) return r;
    } else if (strcmp(key, "dpop") == 0) {
      if (!json_object_is_type(val, json_type_boolean))
        return bad(c, name, "oauth.dpop", "field \"oauth.dpop\" must be true or false");
      a->dpop = json_object_get_boolean(val) ? 2 /* MCP_OAUTH_DPOP_ON */ : 1 /* _OFF */;
    } else if (strcmp(key, "grant") == 0) {
      const char *g = mcp__config_plain_string(val);
      if (g && strcmp(g, "client_credentials") == 0) a->client_credentials = true;
      else if (!g || strcmp(g, "authorization_code") != 0)
        return bad(c, name, "oauth.grant",
                   "field \"oauth.grant\" must be "
                   "\"authorization_code\" or \"client_credentials\"");
    } else {
      char *q = mcp__config_quote(key);
      if (!q) return CHECK_OOM;
      if (c->dialect == MCP_CONFIG_NATIVE)
        r = bad(c, name, "oauth", "unknown field %s in \"oauth\"", q);
      else
        r = note(c, name, "oauth", "field %s in \"oauth\" is not read; skipped", q) ? CHECK_OOM
                                                                                    : CHECK_OK;
      mcp__free(q);
      if (r != CHECK_OK) return r;
    }
  }
  if (a->client_secret && !a->client_id)
    return bad(c, name, "oauth.clientSecret", "\"oauth.clientSecret\" needs \"oauth.clientId\"");
  if (a->client_credentials && !a->client_id)
    return bad(c, name, "oauth.grant", "the client_credentials grant needs \"oauth.clientId\"");
  if (a->client_credentials && a->workload_jwt_file)
    return bad(c, name, "oauth.workloadJwtFile",
               "\"oauth.workloadJwtFile\" is the JWT bearer grant, not client_credentials");
  return CHECK_OK;
}

/* |*p| taken from |base| when relative; CHECK_OK or CHECK_OOM. */
static int rebase_one(const char *base, char **p) {
  if (!*p || **p == '/') return CHECK_OK;
  char *j = strcmp(*p, ".") == 0 ? mcp__strdup(base)
                                 : mcp__asprintf("%s%s%s", base, strcmp(base, "/") ? "/" : "", *p);
  if (!j) return CHECK_OOM;
  mcp__free(*p);
  *p = j;
  return CHECK_OK;
}

/*
 * With a project root (c->base_dir): a stdio server without "cwd" runs
 * there, and relative "cwd" and TLS paths are taken from there, as the
 * client that wrote the file runs them.
 */
static int rebase_paths(const mcp_parse_ctx *c, mcp_server_def *d) {
  if (!c->base_dir) return CHECK_OK;
  if (d->type == MCP_SERVER_STDIO && !d->s.cwd) {
    d->s.cwd = mcp__strdup(c->base_dir);
    return d->s.cwd ? CHECK_OK : CHECK_OOM;
  }
  char **paths[] = {&d->s.cwd, &d->s.tls.ca_file, &d->s.tls.ca_dir, &d->s.tls.client_cert,
                    &d->s.tls.client_key};
  for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
    if (rebase_one(c->base_dir, paths[i]) != CHECK_OK) return CHECK_OOM;
  return CHECK_OK;
}

/*
 * Appends the tool names of array field |id| to *v: the tool filters of
 * other clients' files (includeTools, excludeTools, disabledTools,
 * enabled_tools, disabled_tools).  A filter that cannot be read makes the
 * server invalid rather than expose tools the user filtered out.
 */
static int read_tool_list(mcp_parse_ctx *c, const char *name, json_object *a, int id, char ***v,
                          size_t *n) {
  const char *key = field_table[id].key;
  if (!json_object_is_type(a, json_type_array))
    return bad(c, name, key, "field \"%s\" must be an array of tool names", key);
  size_t len = json_object_array_length(a);
  char **nv = mcp__reallocarray(*v, *n + len + 1, sizeof(char *));
  if (!nv) return CHECK_OOM;
  *v = nv;
  for (size_t i = 0; i < len; i++) {
    const char *t = mcp__config_plain_string(json_object_array_get_idx(a, i));
    if (!t)
      return bad(c, name, key, "field \"%s\": element %zu must be a string without NUL bytes", key,
                 i);
    if (!(nv[*n] = mcp__strdup(t))) return CHECK_OOM;
    (*n)++;
  }
  return CHECK_OK;
}

/* The tool filters of |f| into |d|. */
static int read_tool_filters(mcp_parse_ctx *c, const char *name, json_object **f,
                             mcp_server_def *d) {
  static const int only[] = {F_INCLUDETOOLS, F_ENABLED_TOOLS};
  static const int off[] = {F_EXCLUDETOOLS, F_DISABLEDTOOLS, F_DISABLED_TOOLS};
  int r;
  for (size_t i = 0; i < sizeof(only) / sizeof(only[0]); i++) {
    if (!f[only[i]]) continue;
    d->tools_only_set = true;
    if ((r = read_tool_list(c, name, f[only[i]], only[i], &d->tools_only, &d->ntools_only)))
      return r;
  }
  for (size_t i = 0; i < sizeof(off) / sizeof(off[0]); i++)
    if (f[off[i]] &&
        (r = read_tool_list(c, name, f[off[i]], off[i], &d->tools_off, &d->ntools_off)))
      return r;
  return CHECK_OK;
}

/* Reads the non-type fields of |f| into |d|.  The type is already known. */
static int read_fields(mcp_parse_ctx *c, const char *name, json_object **f, mcp_server_def *d) {
  int r;
  bool stdio = d->type == MCP_SERVER_STDIO;
  if (stdio) {
    if (!f[F_COMMAND])
      return bad(c, name, "command",
                 "field \"command\" is required for a "
                 "stdio server");
    const char *cmd = mcp__config_plain_string(f[F_COMMAND]);
    if (!cmd || !*cmd)
      return bad(c, name, "command",
                 "field \"command\" must be a non-empty "
                 "string");
    size_t nargs = 0;
    if (f[F_ARGS]) {
      if (!json_object_is_type(f[F_ARGS], json_type_array))
        return bad(c, name, "args",
                   "field \"args\" must be an array of "
                   "strings");
      nargs = json_object_array_length(f[F_ARGS]);
    }
    d->s.argv = mcp__calloc(nargs + 2, sizeof(char *));
    if (!d->s.argv) return CHECK_OOM;
    if ((r = expand_field(c, name, "command", f[F_COMMAND], &d->s.argv[0]))) return r;
    d->s.argc = 1;
    for (size_t i = 0; i < nargs; i++) {
      json_object *a = json_object_array_get_idx(f[F_ARGS], i);
      if (!mcp__config_plain_string(a))
        return bad(c, name, "args",
                   "field \"args\": element %zu must be a "
                   "string without NUL bytes",
                   i);
      if ((r = expand_field(c, name, "args", a, &d->s.argv[d->s.argc]))) return r;
      d->s.argc++;
    }
    if (f[F_ENV] && (r = read_map(c, name, "env", f[F_ENV], false, &d->s.env, &d->s.nenv)))
      return r;
    if (f[F_CWD] && (r = expand_field(c, name, "cwd", f[F_CWD], &d->s.cwd))) return r;
    if (f[F_ENVINHERIT]) {
      const char *m = mcp__config_plain_string(f[F_ENVINHERIT]);
      d->s.env_inherit = mcp__config_env_inherit_value(m);
      if (!d->s.env_inherit)
        return bad(c, name, "envInherit",
                   "field \"envInherit\" must be \"all\", "
                   "\"default\" or \"none\"");
    }
  } else {
    json_object *u = f[F_URL] ? f[F_URL] : f[F_HTTPURL] ? f[F_HTTPURL] : f[F_SERVERURL];
    const char *ukey = f[F_URL] ? "url" : f[F_HTTPURL] ? "httpUrl" : "serverUrl";
    if (!u)
      return bad(c, name, "url", "field \"url\" is required for an %s server",
                 mcp__config_type_name(d->type));
    if ((r = expand_field(c, name, ukey, u, &d->s.url))) return r;
    if (!url_scheme_ok(d->s.url))
      return bad(c, name, ukey,
                 "field \"%s\" must be an http:// or https:// "
                 "URL",
                 ukey);
    if (f[F_HEADERS] &&
        (r = read_map(c, name, "headers", f[F_HEADERS], true, &d->s.headers, &d->s.nheaders)))
      return r;
    if (f[F_HTTP2]) {
      const char *m = mcp__config_plain_string(f[F_HTTP2]);
      if (m && strcmp(m, "auto") == 0) d->s.http_version = MCP_HTTP_VERSION_AUTO;
      else if (m && strcmp(m, "off") == 0) d->s.http_version = MCP_HTTP_VERSION_1_1;
      else if (m && strcmp(m, "prior-knowledge") == 0)
        d->s.http_version = MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE;
      else
        return bad(c, name, "http2",
                   "field \"http2\" must be \"auto\", "
                   "\"prior-knowledge\" or \"off\"");
    }
    static const struct {
      int id;
      size_t off;
    } paths[] = {
        {F_CAFILE, offsetof(mcp_server_def, s.tls.ca_file)},
        {F_CADIR, offsetof(mcp_server_def, s.tls.ca_dir)},
        {F_CLIENTCERT, offsetof(mcp_server_def, s.tls.client_cert)},
        {F_CLIENTKEY, offsetof(mcp_server_def, s.tls.client_key)},
    };
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
      json_object *p = f[paths[i].id];
      if (!p) continue;
      char **slot = (char **)((char *)d + paths[i].off);
      if ((r = expand_field(c, name, field_table[paths[i].id].key, p, slot))) return r;
    }
    if (!d->s.tls.client_cert != !d->s.tls.client_key) {
      const char *missing = d->s.tls.client_cert ? "clientKey" : "clientCert";
      return bad(c, name, missing,
                 "field \"%s\" is required with \"%s\" "
                 "(they may name the same PEM file)",
                 missing, d->s.tls.client_cert ? "clientCert" : "clientKey");
    }
    if (f[F_INSECURE]) {
      if (!json_object_is_type(f[F_INSECURE], json_type_boolean))
        return bad(c, name, "insecure",
                   "field \"insecure\" must be a "
                   "boolean");
      d->s.tls.insecure = json_object_get_boolean(f[F_INSECURE]);
    }
    if (f[F_OAUTH] && (r = read_oauth(c, name, f[F_OAUTH], d))) return r;
  }
  if (f[F_TIMEOUT]) {
    if (!json_object_is_type(f[F_TIMEOUT], json_type_int) ||
        json_object_get_int64(f[F_TIMEOUT]) < 0)
      return bad(c, name, "timeout",
                 "field \"timeout\" must be a "
                 "non-negative integer (ms)");
    d->s.timeout_ms = json_object_get_int64(f[F_TIMEOUT]);
  }
  if (f[F_PROTOCOL]) {
    /* The era mode (mcp_era.h); kept as the table's static spelling. */
    static const char *const modes[] = {"auto", "modern", "legacy"};
    const char *m = mcp__config_plain_string(f[F_PROTOCOL]), *pinned = NULL;
    mcp_era_mode mode;
    if (!m || !*m || !mcp__era_parse_mode(m, &mode, &pinned))
      return bad(c, name, "protocol",
                 "field \"protocol\" must be \"auto\", \"modern\", \"legacy\" or an MCP "
                 "revision (2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26)");
    d->s.protocol = pinned ? pinned : modes[mode];
  }
  if ((r = read_tool_filters(c, name, f, d)) != CHECK_OK) return r;
  if ((r = rebase_paths(c, d)) != CHECK_OK) return r;
  static const int onoff[] = {F_ENABLED, F_DISABLED};
  for (size_t i = 0; i < 2; i++) {
    json_object *v = f[onoff[i]];
    const char *key = field_table[onoff[i]].key;
    if (!v) continue;
    if (!json_object_is_type(v, json_type_boolean)) {
      if (c->dialect == MCP_CONFIG_NATIVE)
        return bad(c, name, key, "field \"%s\" must be a boolean", key);
      if (note(c, name, key, "field \"%s\" is not a boolean; ignored", key)) return CHECK_OOM;
      continue;
    }
    /* Either switch turns the server off; neither turns it back on. */
    if (json_object_get_boolean(v) == (onoff[i] == F_DISABLED)) d->enabled = false;
  }
  return CHECK_OK;
}

static int parse_shaped(mcp_parse_ctx *c, const char *name, json_object *obj, mcp_server_def **out);

/*
 * Parses one entry.  On CHECK_OK *out is the definition; on CHECK_BAD a
 * warning was added and *out is NULL.
 */
static int parse_server(mcp_parse_ctx *c, const char *name, json_object *obj,
                        mcp_server_def **out) {
  json_object *n = mcp__config_normalize(c->dialect, obj);
  if (!n) return CHECK_OOM;
  int r = parse_shaped(c, name, n, out);
  json_object_put(n);
  return r;
}

static int parse_shaped(mcp_parse_ctx *c, const char *name, json_object *obj,
                        mcp_server_def **out) {
  json_object *f[F_COUNT];
  bool native = c->dialect == MCP_CONFIG_NATIVE;
  int r;
  *out = NULL;
  memset(f, 0, sizeof(f));
  if (!json_object_is_type(obj, json_type_object))
    return bad(c, name, NULL, "definition must be a JSON object");
  json_object_object_foreach(obj, key, val) {
    if (c->dialect == MCP_CONFIG_ZED && strcmp(key, "source") == 0) continue;
    if (c->dialect == MCP_CONFIG_OPENCODE && strcmp(key, "oauth") == 0 &&
        !json_object_is_type(val, json_type_object))
      continue; /* "oauth": false turns OpenCode's automatic OAuth off */
    int id = -1;
    for (int i = 0; i < F_COUNT; i++)
      if (strcmp(key, field_table[i].key) == 0 && !(native && field_table[i].foreign_only)) id = i;
    if (id >= 0) {
      f[id] = val;
    } else {
      char *q = mcp__config_quote(key);
      if (!q) return CHECK_OOM;
      if (native) r = bad(c, name, key, "unknown field %s", q);
      else r = note(c, name, key, "field %s is not read; skipped", q) ? CHECK_OOM : CHECK_OK;
      mcp__free(q);
      if (r != CHECK_OK) return r;
    }
  }

  mcp_server_def *d = mcp__calloc(1, sizeof(*d));
  if (!d) return CHECK_OOM;
  d->enabled = true;
  d->foreign = !native;
  d->s.timeout_ms = -1;
  d->name = mcp__strdup(name);
  d->source = mcp__strdup(c->source);
  if (!d->name || !d->source) {
    r = CHECK_OOM;
    goto fail;
  }

  bool has_cmd = f[F_COMMAND] != NULL;
  bool has_url = f[F_URL] || f[F_HTTPURL] || f[F_SERVERURL];
  if (f[F_TYPE]) {
    const char *t = mcp__config_plain_string(f[F_TYPE]);
    if (t && strcmp(t, "stdio") == 0) {
      d->type = MCP_SERVER_STDIO;
    } else if (t && strcmp(t, "http") == 0) {
      d->type = MCP_SERVER_HTTP;
    } else if (t && strcmp(t, "sse") == 0) {
      d->type = MCP_SERVER_SSE;
    } else if (t && !native &&
               (strcmp(t, "streamable-http") == 0 || strcmp(t, "streamableHttp") == 0)) {
      d->type = MCP_SERVER_HTTP;
    } else {
      char *q = t ? mcp__config_quote(t) : NULL;
      r = (q || !t) ? bad(c, name, "type",
                          "unknown type %s (use \"stdio\", "
                          "\"http\" or \"sse\")",
                          q ? q : "(not a string)")
                    : CHECK_OOM;
      mcp__free(q);
      goto fail;
    }
  } else if (!has_cmd && has_url) {
    bool sse = (c->dialect == MCP_CONFIG_GEMINI || c->dialect == MCP_CONFIG_CLINE) && f[F_URL] &&
               !f[F_HTTPURL];
    d->type = sse ? MCP_SERVER_SSE : MCP_SERVER_HTTP;
  } else {
    d->type = MCP_SERVER_STDIO;
  }

  if (has_cmd && has_url && (native || !f[F_TYPE])) {
    r = bad(c, name, "url",
            "has both \"command\" and \"url\"; a server is "
            "either stdio or http/sse");
    goto fail;
  }
  if (native) {
    int other = d->type == MCP_SERVER_STDIO ? SCOPE_HTTP : SCOPE_STDIO;
    for (int i = 0; i < F_COUNT; i++) {
      if (f[i] && field_table[i].scope == other) {
        r = bad(c, name, field_table[i].key,
                "field \"%s\" does not apply to "
                "%s servers",
                field_table[i].key, mcp__config_type_name(d->type));
        goto fail;
      }
    }
  }
  /* "http" keeps the specification's fallback to the legacy transport for
   * servers that answer initialize with 400, 404 or 405 (AUTO). */
  d->s.http_kind = d->type == MCP_SERVER_SSE ? MCP_HTTP_TRANSPORT_LEGACY_SSE
                                             : MCP_HTTP_TRANSPORT_AUTO;
  r = read_fields(c, name, f, d);
  if (r != CHECK_OK) goto fail;
  if (mcp__config_def_hash(d) != MCP_OK) {
    r = CHECK_OOM;
    goto fail;
  }
  *out = d;
  return CHECK_OK;
fail:
  mcp__server_def_free(d);
  return r;
}

/* ---- parsing a file ----------------------------------------------------- */

void mcp__config_file_result_clear(mcp_file_result *fr) {
  for (size_t i = 0; i < fr->n; i++) {
    mcp__free(fr->v[i].name);
    mcp__server_def_free(fr->v[i].def);
  }
  mcp__free(fr->v);
  for (size_t i = 0; i < fr->ndisabled; i++) mcp__free(fr->disabled[i]);
  mcp__free(fr->disabled);
  memset(fr, 0, sizeof(*fr));
}

/* Adds one server entry to |fr|; CHECK_OOM when out of memory. */
static int file_add_entry(mcp_file_result *fr, const char *name, mcp_server_def *def) {
  mcp_file_entry *e = &fr->v[fr->n];
  e->name = mcp__strdup(name);
  if (!e->name) {
    mcp__server_def_free(def);
    return CHECK_OOM;
  }
  e->def = def;
  fr->n++;
  return CHECK_OK;
}

/*
 * Collects the servers of |map| (the object under "mcpServers" or
 * "servers") into |fr|.  Returns CHECK_OK or CHECK_OOM.
 */
/* True when |name| is one of the |n| entries of |fr| or a valid key of |map|. */
static bool name_taken(json_object *map, const mcp_file_result *fr, const char *name) {
  json_object *v;
  if (json_object_object_get_ex(map, name, &v)) return true;
  for (size_t i = 0; i < fr->n; i++)
    if (strcmp(fr->v[i].name, name) == 0) return true;
  return false;
}

/*
 * Folds |orig|, which is no valid server name, into one: every run of other
 * bytes becomes one "_", leading and trailing "_" go, an empty result is
 * "server", and the length is cut to leave room for a suffix.  When that
 * name is taken (by a valid name of the file or an earlier folded one),
 * "-2", "-3", ... is appended: deterministic, in file order.  New string in
 * *out, or NULL when out of memory.
 */
static char *fold_name(json_object *map, const mcp_file_result *fr, const char *orig) {
  char base[MCP_CONFIG_NAME_MAX + 1];
  size_t n = 0;
  bool gap = false;
  for (const char *p = orig; *p && n < MCP_CONFIG_NAME_MAX - 8; p++) {
    char ch = *p;
    bool ok = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
              ch == '_' || ch == '.' || ch == ':' || ch == '-';
    if (!ok) {
      gap = n > 0;
      continue;
    }
    if (gap) base[n++] = '_';
    gap = false;
    if (n < MCP_CONFIG_NAME_MAX - 8) base[n++] = ch;
  }
  base[n] = '\0';
  if (n == 0) strcpy(base, "server");
  if (!name_taken(map, fr, base)) return mcp__strdup(base);
  for (unsigned k = 2;; k++) {
    char *cand = mcp__asprintf("%s-%u", base, k);
    if (!cand || !name_taken(map, fr, cand)) return cand;
    mcp__free(cand);
  }
}

int mcp__config_collect_servers(mcp_parse_ctx *c, json_object *map, mcp_file_result *fr) {
  size_t cap = (size_t)json_object_object_length(map);
  fr->v = mcp__calloc(cap ? cap : 1, sizeof(mcp_file_entry));
  if (!fr->v) return CHECK_OOM;
  json_object_object_foreach(map, name, val) {
    char *folded = NULL;
    json_object *src = NULL;
    if (c->dialect == MCP_CONFIG_ZED && json_object_object_get_ex(val, "source", &src) &&
        mcp__config_plain_string(src) && strcmp(json_object_get_string(src), "extension") == 0) {
      /* Run by a Zed extension, which mcpconn cannot run. */
      if (note(c, name, "source", "a Zed extension's server: not read")) return CHECK_OOM;
      continue;
    }
    if (!mcp__config_name_is_valid(name)) {
      if (!(folded = fold_name(map, fr, name))) return CHECK_OOM;
      char *q = mcp__config_quote(name);
      bool oom = !q || note(c, folded, NULL, "the file's name %s is used as \"%s\"", q, folded);
      mcp__free(q);
      if (oom) {
        mcp__free(folded);
        return CHECK_OOM;
      }
    }
    mcp_server_def *def = NULL;
    int r = parse_server(c, folded ? folded : name, val, &def);
    if (r != CHECK_OOM && def && folded && !(def->display_name = mcp__strdup(name))) r = CHECK_OOM;
    if (r == CHECK_OOM) {
      mcp__server_def_free(def);
      mcp__free(folded);
      return CHECK_OOM;
    }
    r = file_add_entry(fr, folded ? folded : name, def);
    mcp__free(folded);
    if (r == CHECK_OOM) return CHECK_OOM;
  }
  return CHECK_OK;
}

static int collect_disabled(mcp_parse_ctx *c, json_object *arr, mcp_file_result *fr) {
  if (!json_object_is_type(arr, json_type_array)) {
    mcp__config_diag_add(c->diags, MCP_LOG_WARN, c->source, NULL, "disabledServers",
                         "field \"disabledServers\" must be an array of names; ignored");
    return c->diags->oom ? CHECK_OOM : CHECK_OK;
  }
  size_t n = json_object_array_length(arr);
  fr->disabled = mcp__calloc(n ? n : 1, sizeof(char *));
  if (!fr->disabled) return CHECK_OOM;
  for (size_t i = 0; i < n; i++) {
    const char *s = mcp__config_plain_string(json_object_array_get_idx(arr, i));
    if (!s || !mcp__config_name_is_valid(s)) {
      mcp__config_diag_add(c->diags, MCP_LOG_WARN, c->source, NULL, "disabledServers",
                           "field \"disabledServers\": element %zu is not a server name; "
                           "ignored",
                           i);
      if (c->diags->oom) return CHECK_OOM;
      continue;
    }
    fr->disabled[fr->ndisabled] = mcp__strdup(s);
    if (!fr->disabled[fr->ndisabled]) return CHECK_OOM;
    fr->ndisabled++;
  }
  return CHECK_OK;
}

/*
 * Reads the server map and disabledServers of |root| into |fr|.  A wrong
 * shape gives one warning and leaves |fr| empty.  CHECK_OK or CHECK_OOM.
 */
int mcp__config_collect_root(mcp_parse_ctx *c, json_object *root, mcp_file_result *fr) {
  if (!json_object_is_type(root, json_type_object)) {
    mcp__config_diag_add(c->diags, MCP_LOG_WARN, c->source, NULL, NULL,
                         "not a JSON object; file ignored");
    return c->diags->oom ? CHECK_OOM : CHECK_OK;
  }
  const char *key = mcp__config_servers_key(c->dialect);
  json_object *map = NULL;
  if (json_object_object_get_ex(root, key, &map) && !json_object_is_type(map, json_type_object)) {
    mcp__config_diag_add(c->diags, MCP_LOG_WARN, c->source, NULL, key,
                         "field \"%s\" must be an object; file ignored", key);
    return c->diags->oom ? CHECK_OOM : CHECK_OK;
  }
  int r = CHECK_OK;
  if (map) r = mcp__config_collect_servers(c, map, fr);
  json_object *dis = NULL, *mcp = NULL;
  if (r == CHECK_OK && json_object_object_get_ex(root, "disabledServers", &dis))
    r = collect_disabled(c, dis, fr);
  /* Gemini CLI: "mcp": {"excluded": [names]} switches servers off. */
  if (r == CHECK_OK && c->dialect == MCP_CONFIG_GEMINI && !fr->disabled &&
      json_object_object_get_ex(root, "mcp", &mcp) && json_object_is_type(mcp, json_type_object) &&
      json_object_object_get_ex(mcp, "excluded", &dis))
    r = collect_disabled(c, dis, fr);
  return r;
}

int mcp__config_parse_root(mcp_parse_ctx *c, const char *text, size_t len, json_object **root) {
  char why[160];
  if (c->dialect == MCP_CONFIG_CODEX) {
    *root = mcp__toml_parse(text, len, why, sizeof(why));
    if (!*root && strcmp(why, "out of memory") == 0) return CHECK_OOM;
    if (!*root) {
      mcp__config_diag_add(c->diags, MCP_LOG_WARN, c->source, NULL, NULL,
                           "TOML not read (%s); file ignored", why);
      return c->diags->oom ? CHECK_OOM : CHECK_BAD;
    }
    return CHECK_OK;
  }
  *root = mcp__json_parse_document(text, len, MCP_CONFIG_JSON_DEPTH, "", why, sizeof(why));
  if (!*root) {
    mcp__config_diag_add(c->diags, MCP_LOG_WARN, c->source, NULL, NULL,
                         "invalid JSON (%s); file ignored", why);
    return c->diags->oom ? CHECK_OOM : CHECK_BAD;
  }
  return CHECK_OK;
}

/* The warning for a config file that mcp__read_file() could not read (|e|). */
int mcp__config_read_error(mcp_parse_ctx *c, const char *path, int e) {
  char eb[128];
  if (e == EFBIG)
    mcp__config_diag_add(c->diags, MCP_LOG_WARN, path, NULL, NULL,
                         "larger than %u bytes; file ignored", MCP_CONFIG_FILE_MAX);
  else
    mcp__config_diag_add(c->diags, MCP_LOG_WARN, path, NULL, NULL, "cannot read: %s",
                         e == ENODEV ? "not a regular file" : mcp__errno_text(e, eb, sizeof(eb)));
  return c->diags->oom ? CHECK_OOM : CHECK_BAD;
}

/*
 * Loads |path| into a JSON root.  Returns CHECK_OK with *root (NULL when
 * the file is missing and |quiet_missing|), CHECK_BAD after a warning, or
 * CHECK_OOM.
 */
int mcp__config_load_root(mcp_parse_ctx *c, const char *path, bool quiet_missing,
                          json_object **root) {
  char *data = NULL;
  size_t len = 0;
  *root = NULL;
  int e = mcp__read_file(path, MCP_CONFIG_FILE_MAX, false, &data, &len);
  if (e == ENOMEM) return CHECK_OOM;
  if (e == ENOENT && quiet_missing) return CHECK_OK;
  if (e) return mcp__config_read_error(c, path, e);
  int r = mcp__config_parse_root(c, data, len, root);
  mcp__free(data);
  return r;
}

/* ---- sets --------------------------------------------------------------- */

void mcp__config_free(mcp_config_set *set) {
  if (!set) return;
  for (size_t i = 0; i < set->ndefs; i++) mcp__server_def_free(set->defs[i]);
  mcp__free(set->defs);
  for (size_t i = 0; i < set->ndisabled; i++) mcp__free(set->disabled[i]);
  mcp__free(set->disabled);
  mcp__config_diags_free(set->diags, set->ndiags);
  for (size_t i = 0; i < set->nfiles; i++) mcp__free(set->files[i]);
  mcp__free(set->files);
  for (size_t i = 0; i < set->nuntrusted; i++) mcp__free(set->untrusted[i]);
  mcp__free(set->untrusted);
  mcp__free(set->trust_error);
  mcp__free(set);
}

int mcp__config_cmp_def(const void *a, const void *b) {
  const mcp_server_def *x = *(const mcp_server_def *const *)a;
  const mcp_server_def *y = *(const mcp_server_def *const *)b;
  return strcmp(x->name, y->name);
}

const mcp_server_def *mcp__config_find(const mcp_config_set *set, const char *name) {
  if (!set || !name || !set->ndefs) return NULL;
  mcp_server_def key;
  const mcp_server_def *kp = &key;
  key.name = (char *)name;
  mcp_server_def *const *hit = bsearch(&kp, set->defs, set->ndefs, sizeof(*set->defs),
                                       mcp__config_cmp_def);
  return hit ? *hit : NULL;
}

/* Sorts and de-duplicates a list of names in place. */
void mcp__config_sort_unique(char **v, size_t *n) {
  if (*n < 2) return;
  qsort(v, *n, sizeof(char *), mcp__config_cmp_str);
  size_t w = 1;
  for (size_t r = 1; r < *n; r++) {
    if (strcmp(v[r], v[w - 1]) == 0) mcp__free(v[r]);
    else v[w++] = v[r];
  }
  *n = w;
}

/* Moves |dl|'s diagnostics into |set|. */
void mcp__config_take_diags(mcp_config_set *set, mcp_diag_list *dl) {
  set->diags = dl->v;
  set->ndiags = dl->n;
  dl->v = NULL;
  dl->n = dl->cap = 0;
}

static mcp_status parse_common(mcp_parse_ctx *c, const char *text, size_t len, const char *path,
                               mcp_config_set **out) {
  mcp_status st = MCP_ENOMEM;
  mcp_file_result fr;
  json_object *root = NULL;
  memset(&fr, 0, sizeof(fr));
  mcp_config_set *set = mcp__calloc(1, sizeof(*set));
  if (!set) goto out;
  int r;
  if (path) r = mcp__config_load_root(c, path, false, &root);
  else r = mcp__config_parse_root(c, text, len, &root);
  if (r == CHECK_OOM) goto out;
  if (root) {
    if (path) {
      set->files = mcp__calloc(1, sizeof(char *));
      if (!set->files || !(set->files[0] = mcp__strdup(path))) goto out;
      set->nfiles = 1;
    }
    if (mcp__config_collect_root(c, root, &fr) == CHECK_OOM) goto out;
  }
  set->defs = mcp__calloc(fr.n ? fr.n : 1, sizeof(mcp_server_def *));
  if (!set->defs) goto out;
  for (size_t i = 0; i < fr.n; i++) {
    if (fr.v[i].def) {
      set->defs[set->ndefs++] = fr.v[i].def;
      fr.v[i].def = NULL;
    }
  }
  qsort(set->defs, set->ndefs, sizeof(*set->defs), mcp__config_cmp_def);
  set->disabled = fr.disabled;
  set->ndisabled = fr.ndisabled;
  fr.disabled = NULL;
  fr.ndisabled = 0;
  mcp__config_sort_unique(set->disabled, &set->ndisabled);
  if (c->diags->oom) goto out;
  mcp__config_take_diags(set, c->diags);
  *out = set;
  set = NULL;
  st = MCP_OK;
out:
  json_object_put(root);
  mcp__config_file_result_clear(&fr);
  mcp__config_free(set);
  return st;
}

void mcp__config_ctx_init(mcp_parse_ctx *c, mcp_diag_list *dl, const char *source,
                          const mcp_config_parse_opts *o) {
  memset(c, 0, sizeof(*c));
  c->source = source ? source : "<config>";
  c->dialect = o ? o->dialect : MCP_CONFIG_NATIVE;
  c->lookup = o && o->getenv ? o->getenv : mcp__config_getenv_default;
  c->user = o ? o->getenv_user : NULL;
  c->input = o ? o->input : NULL;
  c->input_user = o ? o->input_user : NULL;
  c->base_dir = o && o->base_dir && *o->base_dir == '/' ? o->base_dir : NULL;
  c->home = o ? o->home : NULL;
  c->workspace = c->base_dir                                 ? c->base_dir
                 : o && o->workspace && *o->workspace == '/' ? o->workspace
                                                             : NULL;
  c->diags = dl;
}

mcp_status mcp__config_parse_text(const char *text, size_t len, const char *source,
                                  const mcp_config_parse_opts *o, mcp_config_set **out) {
  if (!out) return MCP_EINVAL;
  *out = NULL;
  if (!text) return MCP_EINVAL;
  mcp_diag_list dl;
  mcp_parse_ctx c;
  memset(&dl, 0, sizeof(dl));
  mcp__config_ctx_init(&c, &dl, source, o);
  mcp_status st = parse_common(&c, text, len, NULL, out);
  mcp__config_diags_free(dl.v, dl.n);
  return st;
}

mcp_status mcp__config_parse_file(const char *path, const mcp_config_parse_opts *o,
                                  mcp_config_set **out) {
  if (!out) return MCP_EINVAL;
  *out = NULL;
  if (!path) return MCP_EINVAL;
  mcp_diag_list dl;
  mcp_parse_ctx c;
  memset(&dl, 0, sizeof(dl));
  mcp__config_ctx_init(&c, &dl, path, o);
  mcp_status st = parse_common(&c, NULL, 0, path, out);
  mcp__config_diags_free(dl.v, dl.n);
  return st;
}
