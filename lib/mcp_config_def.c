/* SPDX-License-Identifier: MIT */
/*
 * mcp_config_def.c: the config module's data: the diagnostics list that
 * carries each warning (file, server, field, message), and the server
 * definition type's free and dup, name check and the spellings of its
 * enumerations.
 *
 * Pure: no threads, no globals, no I/O.  Used by every mcp_config*.c file.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>

#include "mcp_config.h"
#include "mcp_config_int.h"

/* ---- diagnostics -------------------------------------------------------- */

/*
 * Quotes |s| for a message: "..." with backslash, quote and control bytes
 * escaped, cut after 120 bytes.  NULL when out of memory.
 */
char *mcp__config_quote(const char *s) {
  mcp_buf b;
  mcp__buf_init(&b);
  int rc = mcp__buf_append(&b, "\"", 1);
  size_t i = 0;
  for (; s[i] && i < 120 && rc == MCP_OK; i++) {
    unsigned char c = (unsigned char)s[i];
    char tmp[8];
    if (c == '"' || c == '\\') {
      tmp[0] = '\\';
      tmp[1] = (char)c;
      rc = mcp__buf_append(&b, tmp, 2);
    } else if (c < 0x20 || c == 0x7f) {
      snprintf(tmp, sizeof(tmp), "\\x%02x", c);
      rc = mcp__buf_append(&b, tmp, 4);
    } else {
      rc = mcp__buf_append(&b, &s[i], 1);
    }
  }
  if (rc == MCP_OK && s[i]) rc = mcp__buf_append(&b, "...", 3);
  if (rc == MCP_OK) rc = mcp__buf_append(&b, "\"", 1);
  if (rc != MCP_OK) {
    mcp__buf_free(&b);
    return NULL;
  }
  return b.data;
}

static void diag_clear(mcp_config_diag *d) {
  mcp__free(d->source);
  mcp__free(d->server);
  mcp__free(d->field);
  mcp__free(d->message);
  memset(d, 0, sizeof(*d));
}

void mcp__config_diags_free(mcp_config_diag *diags, size_t n) {
  if (!diags) return;
  for (size_t i = 0; i < n; i++) diag_clear(&diags[i]);
  mcp__free(diags);
}

/*
 * Appends a diagnostic whose message is "<source>: server <q>: <text>",
 * leaving out the parts that are NULL.
 */
void mcp__config_diag_add(mcp_diag_list *dl, mcp_log_level level, const char *source,
                          const char *server, const char *field, const char *fmt, ...) {
  mcp_config_diag d;
  char *text = NULL, *qs = NULL;
  memset(&d, 0, sizeof(d));
  if (dl->oom) return;
  if (dl->n == dl->cap) {
    size_t cap = dl->cap ? dl->cap * 2 : 8;
    mcp_config_diag *v = mcp__reallocarray(dl->v, cap, sizeof(*v));
    if (!v) goto oom;
    dl->v = v;
    dl->cap = cap;
  }
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  int len = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (len >= 0) {
    text = mcp__malloc((size_t)len + 1);
    if (text) vsnprintf(text, (size_t)len + 1, fmt, ap);
  }
  va_end(ap);
  if (!text) goto oom;
  d.level = level;
  if (server) {
    qs = mcp__config_quote(server);
    if (!qs) goto oom;
  }
  d.message = mcp__asprintf("%s%s%s%s%s%s", source ? source : "", source ? ": " : "",
                            qs ? "server " : "", qs ? qs : "", qs ? ": " : "", text);
  d.source = source ? mcp__strdup(source) : NULL;
  d.server = server ? mcp__strdup(server) : NULL;
  d.field = field ? mcp__strdup(field) : NULL;
  if (!d.message || (source && !d.source) || (server && !d.server) || (field && !d.field)) goto oom;
  dl->v[dl->n++] = d;
  mcp__free(text);
  mcp__free(qs);
  return;
oom:
  dl->oom = true;
  diag_clear(&d);
  mcp__free(text);
  mcp__free(qs);
}

/* ---- definitions -------------------------------------------------------- */

static void oauth_free(mcp_config_oauth *o) {
  if (!o) return;
  mcp__free(o->client_id);
  if (o->client_secret) memset(o->client_secret, 0, strlen(o->client_secret));
  mcp__free(o->client_secret);
  mcp__free(o->scopes);
  mcp__free(o->redirect_uri);
  mcp__free(o->client_metadata_url);
  mcp__free(o->private_key_file);
  mcp__free(o->signing_alg);
  mcp__free(o->workload_jwt_file);
  mcp__free(o);
}

static void strv_free(char **v, size_t n) {
  for (size_t i = 0; v && i < n; i++) mcp__free(v[i]);
  mcp__free(v);
}

/* Copies |n| strings of |src| into *dst (NULL when |src| is); false: OOM,
 * with *dst partly filled (NULLs after the copies) for strv_free(). */
static bool strv_dup(char ***dst, char *const *src, size_t n) {
  *dst = NULL;
  if (!src) return true;
  char **v = mcp__calloc(n ? n : 1, sizeof(char *));
  if (!v) return false;
  *dst = v;
  for (size_t i = 0; i < n; i++)
    if (!(v[i] = mcp__strdup(src[i]))) return false;
  return true;
}

bool mcp__config_tool_allowed(const mcp_server_def *def, const char *tool) {
  if (!def || !tool) return true;
  bool in = !def->tools_only_set;
  for (size_t i = 0; !in && i < def->ntools_only; i++) in = strcmp(def->tools_only[i], tool) == 0;
  for (size_t i = 0; in && i < def->ntools_off; i++) in = strcmp(def->tools_off[i], tool) != 0;
  return in;
}

void mcp__server_def_free(mcp_server_def *def) {
  if (!def) return;
  mcp__free(def->name);
  mcp__free(def->display_name);
  mcp__settings_clear(&def->s);
  oauth_free(def->oauth);
  strv_free(def->tools_only, def->ntools_only);
  strv_free(def->tools_off, def->ntools_off);
  mcp__free(def->source);
  mcp__free(def);
}

/* Copies |s| (NULL stays NULL) into *dst; false when out of memory. */
static bool dup_opt(char **dst, const char *s) {
  *dst = NULL;
  if (!s) return true;
  *dst = mcp__strdup(s);
  return *dst != NULL;
}

mcp_server_def *mcp__server_def_dup(const mcp_server_def *def) {
  if (!def) return NULL;
  mcp_server_def *d = mcp__calloc(1, sizeof(*d));
  if (!d) return NULL;
  *d = *def;
  /* Clear every pointer first so a partial copy frees cleanly. */
  d->name = d->display_name = d->source = NULL;
  d->oauth = NULL;
  d->tools_only = d->tools_off = NULL;
  memset(&d->s, 0, sizeof(d->s));
  bool ok = dup_opt(&d->name, def->name) && dup_opt(&d->display_name, def->display_name) &&
            dup_opt(&d->source, def->source);
  /* Over zeroed settings the overlay is a deep copy; "not given" stays so. */
  ok = ok && mcp__settings_overlay(&d->s, &def->s) == MCP_OK;
  d->s.timeout_ms = def->s.timeout_ms;
  if (ok && def->oauth) {
    mcp_config_oauth *o = def->oauth, *c = mcp__calloc(1, sizeof(*c));
    d->oauth = c;
    ok = c && dup_opt(&c->client_id, o->client_id) &&
         dup_opt(&c->client_secret, o->client_secret) && dup_opt(&c->scopes, o->scopes) &&
         dup_opt(&c->redirect_uri, o->redirect_uri) &&
         dup_opt(&c->client_metadata_url, o->client_metadata_url) &&
         dup_opt(&c->private_key_file, o->private_key_file) &&
         dup_opt(&c->signing_alg, o->signing_alg) &&
         dup_opt(&c->workload_jwt_file, o->workload_jwt_file);
    if (c) c->client_credentials = o->client_credentials, c->dpop = o->dpop;
  }
  ok = ok && strv_dup(&d->tools_only, def->tools_only, def->ntools_only);
  ok = ok && strv_dup(&d->tools_off, def->tools_off, def->ntools_off);
  if (!ok) {
    mcp__server_def_free(d);
    return NULL;
  }
  return d;
}

bool mcp__config_name_is_valid(const char *name) {
  if (!name) return false;
  size_t n = 0;
  for (; name[n]; n++) {
    char c = name[n];
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == ':' || c == '-';
    if (!ok || n >= MCP_CONFIG_NAME_MAX) return false;
  }
  return n >= 1;
}

const char *mcp__config_type_name(mcp_server_type t) {
  switch (t) {
  case MCP_SERVER_HTTP: return "http";
  case MCP_SERVER_SSE: return "sse";
  case MCP_SERVER_STDIO: break;
  }
  return "stdio";
}

/* "envInherit" names, as mcp_env_inherit values (0: not a name). */
static const char *const env_inherit_names[] = {NULL, "all", "default", "none"};

const char *mcp__config_env_inherit_name(int v) {
  return v > 0 && v <= MCP_ENV_INHERIT_NONE ? env_inherit_names[v] : NULL;
}

int mcp__config_env_inherit_value(const char *name) {
  for (int i = MCP_ENV_INHERIT_ALL; name && i <= MCP_ENV_INHERIT_NONE; i++)
    if (strcmp(name, env_inherit_names[i]) == 0) return i;
  return 0;
}

/* ---- host-supplied ${input:id} values ----------------------------------- */

static void input_wipe(mcp_kv *e) {
  mcp__free(e->name);
  if (e->value) memset(e->value, 0, strlen(e->value));
  mcp__free(e->value);
}

mcp_status mcp__config_inputs_set(mcp_config_inputs *in, const char *id, const char *value) {
  if (!in || !id || !*id) return MCP_EINVAL;
  size_t i = 0;
  while (i < in->n && strcmp(in->v[i].name, id) != 0) i++;
  if (!value) {
    if (i == in->n) return MCP_OK;
    input_wipe(&in->v[i]);
    in->v[i] = in->v[--in->n];
    return MCP_OK;
  }
  char *copy = mcp__strdup(value);
  if (!copy) return MCP_ENOMEM;
  if (i == in->n) {
    mcp_kv *v = mcp__reallocarray(in->v, in->n + 1, sizeof(*v));
    if (v) in->v = v;
    if (!v || !(v[i].name = mcp__strdup(id))) {
      mcp__free(copy);
      return MCP_ENOMEM;
    }
    v[i].value = NULL;
    in->n++;
  }
  if (in->v[i].value) memset(in->v[i].value, 0, strlen(in->v[i].value));
  mcp__free(in->v[i].value);
  in->v[i].value = copy;
  return MCP_OK;
}

const char *mcp__config_inputs_get(void *inputs, const char *id) {
  const mcp_config_inputs *in = inputs;
  for (size_t i = 0; in && i < in->n; i++)
    if (strcmp(in->v[i].name, id) == 0) return in->v[i].value;
  return NULL;
}

void mcp__config_inputs_clear(mcp_config_inputs *in) {
  if (!in) return;
  for (size_t i = 0; i < in->n; i++) input_wipe(&in->v[i]);
  mcp__free(in->v);
  in->v = NULL;
  in->n = 0;
}
