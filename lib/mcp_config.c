/* SPDX-License-Identifier: MIT */
/*
 * mcp_config.c: one config file's text into server definitions: parsing,
 * ${VAR} expansion, validation (each error names the file, the server and
 * the field), the diagnostics that carry those errors, and the definition
 * type's dup and free.
 *
 * Pure: no threads, no globals, no I/O except reading the one file that
 * mcp__config_parse_file() names.  Fuzzed by fuzz/fuzz_config.c.  Finding
 * the files and trusting project files is mcp_discover.c's; the canonical
 * form and hash are mcp_config_canon.c's; `!command` secrets are
 * mcp_secret.c's.  Knows nothing of processes, transports, the client or
 * the manager.
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

/* Deepest nesting of ${A:-${B:-...}} defaults that is expanded. */
#define EXPAND_MAX_DEPTH 8

const char *mcp__config_getenv_default(void *user, const char *name) {
  (void)user;
  return getenv(name);
}

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

/* ---- expansion ---------------------------------------------------------- */

/* Which variable syntaxes a dialect expands. */
enum {
  SX_BRACE = 0x01,   /* ${NAME} */
  SX_DEFAULT = 0x02, /* ${NAME:-default} */
  SX_ESCAPE = 0x04,  /* "$${" writes "${" */
  SX_BARE = 0x08,    /* $NAME */
  SX_ENV = 0x10,     /* ${env:NAME} */
  SX_INPUT = 0x20,   /* ${input:id} */
  SX_VSVARS = 0x40,  /* ${userHome}, ${workspaceFolder}, ${workspaceFolderBasename},
                        ${pathSeparator}, ${/} */
  SX_STRICT = 0x80,  /* remember the first reference that stays unresolved */
  SX_OCODE = 0x100   /* OpenCode: {env:NAME} (and {file:path}, not read) */
};

/* One expansion: the syntax, where values come from, and the first
 * unresolved reference (pointing into the text being expanded). */
typedef struct xctx {
  unsigned syn;
  mcp_config_getenv_fn lookup;
  void *user;
  mcp_config_getenv_fn input;
  void *input_user;
  const char *home;
  const char *workspace;
  const char *bad; /* first unresolved reference, or NULL */
  size_t badlen;
} xctx;

static unsigned dialect_syntax(mcp_config_dialect d) {
  switch (d) {
  case MCP_CONFIG_NATIVE: return SX_BRACE | SX_DEFAULT | SX_ESCAPE;
  case MCP_CONFIG_FOREIGN: return SX_BRACE | SX_DEFAULT;
  case MCP_CONFIG_VSCODE: return SX_ENV | SX_INPUT | SX_VSVARS;
  case MCP_CONFIG_GEMINI: return SX_BRACE | SX_BARE;
  case MCP_CONFIG_CURSOR: return SX_ENV | SX_VSVARS;
  case MCP_CONFIG_WINDSURF: return SX_ENV;
  case MCP_CONFIG_CLAUDE_DESKTOP:
  case MCP_CONFIG_CLINE:
  case MCP_CONFIG_ZED: return 0;
  case MCP_CONFIG_OPENCODE: return SX_OCODE;
  case MCP_CONFIG_CODEX:
    return SX_BRACE; /* what bearer_token_env_var and
                                              env_http_headers become */
  }
  return SX_BRACE | SX_DEFAULT | SX_ESCAPE;
}

static bool is_name_start(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }

/* True when the |n| bytes at |s| are a variable name. */
static bool is_name(const char *s, size_t n) {
  if (n == 0 || !is_name_start(s[0])) return false;
  for (size_t i = 1; i < n; i++)
    if (!is_name_char(s[i])) return false;
  return true;
}

/*
 * Finds the "}" that ends a default starting at |p| (inside ${VAR:-...}).
 * Returns its offset from |p| or -1 when unterminated.
 */
static ptrdiff_t default_end(const char *p, size_t n) {
  size_t depth = 0;
  for (size_t i = 0; i < n; i++) {
    if (p[i] == '$' && i + 2 < n && p[i + 1] == '$' && p[i + 2] == '{') {
      i += 2; /* an escaped "${" opens nothing */
    } else if (p[i] == '$' && i + 1 < n && p[i + 1] == '{') {
      depth++;
      i++;
    } else if (p[i] == '}') {
      if (depth == 0) return (ptrdiff_t)i;
      depth--;
    }
  }
  return -1;
}

/* Looks up a name of |n| bytes through |fn|; NULL when unset or too long. */
static const char *lookup_n(mcp_config_getenv_fn fn, void *user, const char *s, size_t n) {
  char name[256];
  if (!fn || n >= sizeof(name)) return NULL;
  memcpy(name, s, n);
  name[n] = '\0';
  return fn(user, name);
}

static bool content_is(const char *s, size_t n, const char *word) {
  return strlen(word) == n && memcmp(s, word, n) == 0;
}

/* The value of the reference ${<s, n>} in |x|'s syntax, or NULL. */
static const char *resolve_ref(xctx *x, const char *s, size_t n) {
  if ((x->syn & SX_ENV) && n > 4 && memcmp(s, "env:", 4) == 0 && is_name(s + 4, n - 4))
    return lookup_n(x->lookup, x->user, s + 4, n - 4);
  if ((x->syn & SX_INPUT) && n > 6 && memcmp(s, "input:", 6) == 0)
    return lookup_n(x->input, x->input_user, s + 6, n - 6);
  if (x->syn & SX_VSVARS) {
    if (content_is(s, n, "userHome")) return x->home ? x->home : x->lookup(x->user, "HOME");
    if (content_is(s, n, "workspaceFolder")) return x->workspace;
    if (content_is(s, n, "workspaceFolderBasename")) {
      const char *w = x->workspace, *slash = w ? strrchr(w, '/') : NULL;
      return slash && slash[1] ? slash + 1 : w;
    }
    if (content_is(s, n, "pathSeparator") || content_is(s, n, "/")) return "/";
  }
  if ((x->syn & SX_BRACE) && is_name(s, n)) return lookup_n(x->lookup, x->user, s, n);
  return NULL;
}

/* Whether an unresolved ${<s, n>} reads as a reference (strict mode). */
static bool ref_shaped(const char *s, size_t n) {
  if ((n > 4 && memcmp(s, "env:", 4) == 0) || (n > 6 && memcmp(s, "input:", 6) == 0)) return true;
  if (n == 0 || !(is_name_start(s[0]) || s[0] == '/')) return false;
  for (size_t i = 0; i < n; i++)
    if (s[i] == ' ' || s[i] == '\t' || s[i] == '{' || s[i] == '$') return false;
  return true;
}

static void note_bad(xctx *x, const char *s, size_t n) {
  if ((x->syn & SX_STRICT) && !x->bad) {
    x->bad = s;
    x->badlen = n;
  }
}

/* Expands |n| bytes at |s| into |b|.  Returns MCP_OK or MCP_ENOMEM. */
static int expand_into(mcp_buf *b, const char *s, size_t n, xctx *x, int depth) {
  size_t i = 0;
  while (i < n) {
    const char *dollar = memchr(s + i, '$', n - i);
    if (x->syn & SX_OCODE) {
      const char *brace = memchr(s + i, '{', dollar ? (size_t)(dollar - (s + i)) : n - i);
      if (brace) dollar = brace;
    }
    size_t lit = dollar ? (size_t)(dollar - (s + i)) : n - i;
    if (mcp__buf_append(b, s + i, lit)) return MCP_ENOMEM;
    i += lit;
    if (i >= n) break;
    if (s[i] == '{') {
      /* OpenCode: {env:NAME}; {file:...} and the like are not read here. */
      const char *close = memchr(s + i, '}', n - i);
      size_t clen = close ? (size_t)(close - (s + i)) - 1 : 0;
      if (close && clen > 4 && memcmp(s + i + 1, "env:", 4) == 0 && is_name(s + i + 5, clen - 4)) {
        const char *val = lookup_n(x->lookup, x->user, s + i + 5, clen - 4);
        if (!val) note_bad(x, s + i, clen + 2);
        if (mcp__buf_append(b, val ? val : s + i, val ? strlen(val) : clen + 2)) return MCP_ENOMEM;
        i += clen + 2;
      } else {
        if (close && clen > 5 && memcmp(s + i + 1, "file:", 5) == 0) note_bad(x, s + i, clen + 2);
        if (mcp__buf_append(b, "{", 1)) return MCP_ENOMEM;
        i++;
      }
      continue;
    }
    /* s[i] == '$' */
    if ((x->syn & SX_ESCAPE) && i + 2 < n && s[i + 1] == '$' && s[i + 2] == '{') {
      if (mcp__buf_append(b, "${", 2)) return MCP_ENOMEM;
      i += 3;
      continue;
    }
    if ((x->syn & SX_BARE) && i + 1 < n && is_name_start(s[i + 1])) {
      size_t j = i + 1;
      while (j < n && is_name_char(s[j])) j++;
      const char *val = lookup_n(x->lookup, x->user, s + i + 1, j - i - 1);
      if (!val) note_bad(x, s + i, j - i);
      if (mcp__buf_append(b, val ? val : s + i, val ? strlen(val) : j - i)) return MCP_ENOMEM;
      i = j;
      continue;
    }
    if (i + 1 >= n || s[i + 1] != '{') {
      if (mcp__buf_append(b, "$", 1)) return MCP_ENOMEM;
      i++;
      continue;
    }
    size_t name_at = i + 2, j = name_at;
    while (j < n && is_name_char(s[j])) j++;
    if ((x->syn & SX_DEFAULT) && j > name_at && is_name_start(s[name_at]) && j + 1 < n &&
        s[j] == ':' && s[j + 1] == '-') {
      /* ${VAR:-default} */
      ptrdiff_t e = default_end(s + j + 2, n - (j + 2));
      if (e < 0) {
        if (mcp__buf_append(b, "$", 1)) return MCP_ENOMEM;
        i++;
        continue;
      }
      size_t def_at = j + 2, def_len = (size_t)e;
      const char *val = lookup_n(x->lookup, x->user, s + name_at, j - name_at);
      if (val && *val) {
        if (mcp__buf_append(b, val, strlen(val))) return MCP_ENOMEM;
      } else if (depth >= EXPAND_MAX_DEPTH) {
        if (mcp__buf_append(b, s + def_at, def_len)) return MCP_ENOMEM;
      } else if (expand_into(b, s + def_at, def_len, x, depth + 1)) {
        return MCP_ENOMEM;
      }
      i = def_at + def_len + 1;
      continue;
    }
    const char *close = memchr(s + name_at, '}', n - name_at);
    if (!close) {
      if (mcp__buf_append(b, "$", 1)) return MCP_ENOMEM;
      i++;
      continue;
    }
    size_t clen = (size_t)(close - (s + name_at)), end = name_at + clen + 1;
    const char *val = resolve_ref(x, s + name_at, clen);
    if (val) {
      if (mcp__buf_append(b, val, strlen(val))) return MCP_ENOMEM;
    } else if (ref_shaped(s + name_at, clen)) {
      /* Unresolved: the reference stays as written (strict: noted). */
      note_bad(x, s + i, end - i);
      if (mcp__buf_append(b, s + i, end - i)) return MCP_ENOMEM;
    } else {
      /* Not a reference: the "$" is literal and the rest is read on. */
      if (mcp__buf_append(b, "$", 1)) return MCP_ENOMEM;
      i++;
      continue;
    }
    i = end;
  }
  return MCP_OK;
}

/* Expands |in| with |x| into *out (new); MCP_OK or MCP_ENOMEM. */
static mcp_status expand_with(const char *in, xctx *x, char **out) {
  mcp_buf b;
  mcp__buf_init(&b);
  *out = NULL;
  if (mcp__buf_reserve(&b, strlen(in)) || expand_into(&b, in, strlen(in), x, 0)) {
    mcp__buf_free(&b);
    return MCP_ENOMEM;
  }
  b.data[b.len] = '\0'; /* reserve() alone does not terminate */
  *out = b.data;
  return MCP_OK;
}

mcp_status mcp__config_expand(const char *in, mcp_config_getenv_fn lookup, void *user, char **out) {
  if (!in || !out) return MCP_EINVAL;
  *out = NULL;
  xctx x;
  memset(&x, 0, sizeof(x));
  x.syn = dialect_syntax(MCP_CONFIG_NATIVE);
  x.lookup = lookup ? lookup : mcp__config_getenv_default;
  x.user = user;
  return expand_with(in, &x, out);
}

/* ---- definitions -------------------------------------------------------- */

static void kv_free(mcp_config_kv *kv, size_t n) {
  if (!kv) return;
  for (size_t i = 0; i < n; i++) {
    mcp__free(kv[i].name);
    mcp__free(kv[i].value);
  }
  mcp__free(kv);
}

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

void mcp__server_def_free(mcp_server_def *def) {
  if (!def) return;
  mcp__free(def->name);
  mcp__free(def->display_name);
  if (def->argv)
    for (size_t i = 0; i < def->argc; i++) mcp__free(def->argv[i]);
  mcp__free(def->argv);
  kv_free(def->env, def->nenv);
  mcp__free(def->cwd);
  mcp__free(def->url);
  kv_free(def->headers, def->nheaders);
  mcp__free(def->ca_file);
  mcp__free(def->ca_dir);
  mcp__free(def->client_cert);
  mcp__free(def->client_key);
  oauth_free(def->oauth);
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

static bool kv_dup(mcp_config_kv **dst, const mcp_config_kv *src, size_t n) {
  *dst = NULL;
  if (!src || !n) return true;
  mcp_config_kv *kv = mcp__calloc(n, sizeof(*kv));
  if (!kv) return false;
  *dst = kv;
  for (size_t i = 0; i < n; i++) {
    kv[i].name = mcp__strdup(src[i].name);
    kv[i].value = mcp__strdup(src[i].value);
    if (!kv[i].name || !kv[i].value) return false;
  }
  return true;
}

mcp_server_def *mcp__server_def_dup(const mcp_server_def *def) {
  if (!def) return NULL;
  mcp_server_def *d = mcp__calloc(1, sizeof(*d));
  if (!d) return NULL;
  *d = *def;
  /* Clear every pointer first so a partial copy frees cleanly. */
  d->name = d->display_name = d->cwd = d->url = d->ca_file = d->ca_dir = NULL;
  d->client_cert = d->client_key = d->source = NULL;
  d->oauth = NULL;
  d->argv = NULL;
  d->env = d->headers = NULL;
  bool ok = dup_opt(&d->name, def->name) && dup_opt(&d->display_name, def->display_name) &&
            dup_opt(&d->cwd, def->cwd) && dup_opt(&d->url, def->url) &&
            dup_opt(&d->ca_file, def->ca_file) && dup_opt(&d->ca_dir, def->ca_dir) &&
            dup_opt(&d->client_cert, def->client_cert) &&
            dup_opt(&d->client_key, def->client_key) && dup_opt(&d->source, def->source);
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
  /* kv_dup leaves a partial array in place; the counts free it. */
  ok = ok && kv_dup(&d->env, def->env, def->nenv);
  if (!d->env) d->nenv = 0;
  ok = ok && kv_dup(&d->headers, def->headers, def->nheaders);
  if (!d->headers) d->nheaders = 0;
  if (ok && def->argv) {
    d->argv = mcp__calloc(def->argc + 1, sizeof(char *));
    ok = d->argv != NULL;
    for (size_t i = 0; ok && i < def->argc; i++) {
      d->argv[i] = mcp__strdup(def->argv[i]);
      ok = d->argv[i] != NULL;
    }
  }
  if (!d->argv) d->argc = 0;
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

static int env_inherit_value(const char *name) {
  for (int i = MCP_ENV_INHERIT_ALL; name && i <= MCP_ENV_INHERIT_NONE; i++)
    if (strcmp(name, env_inherit_names[i]) == 0) return i;
  return 0;
}

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

/* Why |ref| (|n| bytes, as written) could not be resolved, into |buf|. */
static void unresolved_why(const mcp_parse_ctx *c, const char *ref, size_t n, char *buf,
                           size_t size) {
  /* ${...}, {...} (OpenCode) or $NAME (Gemini): the part inside. */
  const char *in = ref[0] == '{' ? ref + 1 : ref[1] == '{' ? ref + 2 : ref + 1;
  size_t inlen = ref[0] == '{' ? n - 2 : ref[1] == '{' ? n - 3 : n - 1;
  if (inlen > 6 && memcmp(in, "input:", 6) == 0)
    snprintf(buf, size, "no value for input \"%.*s\" (the host supplies input values)",
             (int)(inlen - 6 > 100 ? 100 : inlen - 6), in + 6);
  else if (inlen > 5 && memcmp(in, "file:", 5) == 0)
    snprintf(buf, size, "file references are not read");
  else if (content_is(in, inlen, "workspaceFolder") ||
           content_is(in, inlen, "workspaceFolderBasename"))
    snprintf(buf, size, "no workspace folder for this file");
  else if ((ref[1] != '{' && ref[0] == '$') ||
           (is_name(in, inlen) && (dialect_syntax(c->dialect) & SX_BRACE)) ||
           (ref[0] == '{' && inlen > 4 && memcmp(in, "env:", 4) == 0) ||
           (inlen > 4 && memcmp(in, "env:", 4) == 0 && is_name(in + 4, inlen - 4) &&
            (dialect_syntax(c->dialect) & SX_ENV)))
    snprintf(buf, size, "the variable is not set");
  else
    snprintf(buf, size, "not a variable this file's client expands (%s)",
             c->dialect == MCP_CONFIG_VSCODE || c->dialect == MCP_CONFIG_CURSOR
                 ? "${env:NAME}, ${userHome}, ${workspaceFolder}..."
             : c->dialect == MCP_CONFIG_WINDSURF ? "${env:NAME}"
             : c->dialect == MCP_CONFIG_GEMINI   ? "$NAME or ${NAME}"
             : c->dialect == MCP_CONFIG_OPENCODE ? "{env:NAME}"
             : !dialect_syntax(c->dialect)       ? "none"
                                                 : "${NAME} or ${NAME:-default}");
}

/*
 * Expands |in| (field |field| of server |server|, |key| naming a map entry
 * or NULL) in the file's dialect into *out.  A reference that cannot be
 * resolved is never passed on as text: it makes the entry invalid, with a
 * warning naming the file, the server, the field and the reference.
 */
static int expand_value(mcp_parse_ctx *c, const char *server, const char *field, const char *key,
                        const char *in, char **out) {
  xctx x;
  memset(&x, 0, sizeof(x));
  x.syn = dialect_syntax(c->dialect) | SX_STRICT;
  x.lookup = c->lookup;
  x.user = c->user;
  x.input = c->input;
  x.input_user = c->input_user;
  x.home = c->home;
  x.workspace = c->workspace;
  *out = NULL;
  if (expand_with(in, &x, out) != MCP_OK) return CHECK_OOM;
  if (!x.bad) return CHECK_OK;
  mcp__free(*out);
  *out = NULL;
  char why[300];
  unresolved_why(c, x.bad, x.badlen, why, sizeof(why));
  return bad(c, server, field, "field \"%s\"%s%s%s: %.*s cannot be resolved: %s; server not used",
             field, key ? " (" : "", key ? key : "", key ? ")" : "",
             (int)(x.badlen > 120 ? 120 : x.badlen), x.bad, why);
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
  return expand_value(c, server, field, NULL, s, out);
}

static bool is_tchar(char ch) {
  return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
         (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

/* Headers the transport sets itself (mcp_client_options_add_header). */
static bool header_reserved(const char *name) {
  static const char *const owned[] = {
      "content-type",         "accept",        "host", "content-length", "mcp-session-id",
      "mcp-protocol-version", "last-event-id",
  };
  for (size_t i = 0; i < sizeof(owned) / sizeof(owned[0]); i++)
    if (strcasecmp(name, owned[i]) == 0) return true;
  return false;
}

/*
 * Reads a map of strings (env or headers) into *kv.  Env names must be
 * non-empty without "=", header names HTTP tokens; header values must not
 * hold CR or LF (except `!command` values, whose output is checked when it
 * is resolved).
 */
static int read_map(mcp_parse_ctx *c, const char *server, const char *field, json_object *o,
                    bool headers, mcp_config_kv **kv, size_t *n) {
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
    if (headers && header_reserved(key)) {
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
    mcp_config_kv *e = &(*kv)[*n];
    int r = expand_value(c, server, field, key, s, &e->value);
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
  if (d->type == MCP_SERVER_STDIO && !d->cwd) {
    d->cwd = mcp__strdup(c->base_dir);
    return d->cwd ? CHECK_OK : CHECK_OOM;
  }
  char **paths[] = {&d->cwd, &d->ca_file, &d->ca_dir, &d->client_cert, &d->client_key};
  for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
    if (rebase_one(c->base_dir, paths[i]) != CHECK_OK) return CHECK_OOM;
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
    d->argv = mcp__calloc(nargs + 2, sizeof(char *));
    if (!d->argv) return CHECK_OOM;
    if ((r = expand_field(c, name, "command", f[F_COMMAND], &d->argv[0]))) return r;
    d->argc = 1;
    for (size_t i = 0; i < nargs; i++) {
      json_object *a = json_object_array_get_idx(f[F_ARGS], i);
      if (!mcp__config_plain_string(a))
        return bad(c, name, "args",
                   "field \"args\": element %zu must be a "
                   "string without NUL bytes",
                   i);
      if ((r = expand_field(c, name, "args", a, &d->argv[d->argc]))) return r;
      d->argc++;
    }
    if (f[F_ENV] && (r = read_map(c, name, "env", f[F_ENV], false, &d->env, &d->nenv))) return r;
    if (f[F_CWD] && (r = expand_field(c, name, "cwd", f[F_CWD], &d->cwd))) return r;
    if (f[F_ENVINHERIT]) {
      const char *m = mcp__config_plain_string(f[F_ENVINHERIT]);
      d->env_inherit = env_inherit_value(m);
      if (!d->env_inherit)
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
    if ((r = expand_field(c, name, ukey, u, &d->url))) return r;
    if (!url_scheme_ok(d->url))
      return bad(c, name, ukey,
                 "field \"%s\" must be an http:// or https:// "
                 "URL",
                 ukey);
    if (f[F_HEADERS] &&
        (r = read_map(c, name, "headers", f[F_HEADERS], true, &d->headers, &d->nheaders)))
      return r;
    if (f[F_HTTP2]) {
      const char *m = mcp__config_plain_string(f[F_HTTP2]);
      if (m && strcmp(m, "auto") == 0) d->http2 = MCP_HTTP_VERSION_AUTO;
      else if (m && strcmp(m, "off") == 0) d->http2 = MCP_HTTP_VERSION_1_1;
      else if (m && strcmp(m, "prior-knowledge") == 0)
        d->http2 = MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE;
      else
        return bad(c, name, "http2",
                   "field \"http2\" must be \"auto\", "
                   "\"prior-knowledge\" or \"off\"");
    }
    static const struct {
      int id;
      size_t off;
    } paths[] = {
        {F_CAFILE, offsetof(mcp_server_def, ca_file)},
        {F_CADIR, offsetof(mcp_server_def, ca_dir)},
        {F_CLIENTCERT, offsetof(mcp_server_def, client_cert)},
        {F_CLIENTKEY, offsetof(mcp_server_def, client_key)},
    };
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
      json_object *p = f[paths[i].id];
      if (!p) continue;
      char **slot = (char **)((char *)d + paths[i].off);
      if ((r = expand_field(c, name, field_table[paths[i].id].key, p, slot))) return r;
    }
    if (!d->client_cert != !d->client_key) {
      const char *missing = d->client_cert ? "clientKey" : "clientCert";
      return bad(c, name, missing,
                 "field \"%s\" is required with \"%s\" "
                 "(they may name the same PEM file)",
                 missing, d->client_cert ? "clientCert" : "clientKey");
    }
    if (f[F_INSECURE]) {
      if (!json_object_is_type(f[F_INSECURE], json_type_boolean))
        return bad(c, name, "insecure",
                   "field \"insecure\" must be a "
                   "boolean");
      d->insecure = json_object_get_boolean(f[F_INSECURE]);
    }
    if (f[F_OAUTH] && (r = read_oauth(c, name, f[F_OAUTH], d))) return r;
  }
  if (f[F_TIMEOUT]) {
    if (!json_object_is_type(f[F_TIMEOUT], json_type_int) ||
        json_object_get_int64(f[F_TIMEOUT]) < 0)
      return bad(c, name, "timeout",
                 "field \"timeout\" must be a "
                 "non-negative integer (ms)");
    d->timeout_ms = json_object_get_int64(f[F_TIMEOUT]);
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
    d->protocol = pinned ? pinned : modes[mode];
  }
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
  d->timeout_ms = -1;
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

/* True when some entry of the object |map| has member |key|. */
static bool some_entry_has(json_object *map, const char *key) {
  json_object_object_foreach(map, name, v) {
    (void)name;
    if (json_object_is_type(v, json_type_object) && json_object_object_get_ex(v, key, NULL))
      return true;
  }
  return false;
}

mcp_config_dialect mcp__config_detect(json_object *root) {
  json_object *m = NULL;
  if (!json_object_is_type(root, json_type_object)) return MCP_CONFIG_NATIVE;
  if (json_object_object_get_ex(root, "mcpServers", &m) &&
      json_object_is_type(m, json_type_object)) {
    static const struct {
      const char *key;
      mcp_config_dialect d;
    } marks[] = {
        {"autoApprove", MCP_CONFIG_CLINE},     {"alwaysAllow", MCP_CONFIG_CLINE},
        {"serverUrl", MCP_CONFIG_WINDSURF},    {"disabledTools", MCP_CONFIG_WINDSURF},
        {"httpUrl", MCP_CONFIG_GEMINI},        {"includeTools", MCP_CONFIG_GEMINI},
        {"excludeTools", MCP_CONFIG_GEMINI},   {"trust", MCP_CONFIG_GEMINI},
        {"headersHelper", MCP_CONFIG_FOREIGN},
    };
    for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++)
      if (some_entry_has(m, marks[i].key)) return marks[i].d;
    return MCP_CONFIG_NATIVE;
  }
  if (json_object_object_get_ex(root, "servers", &m) && json_object_is_type(m, json_type_object))
    return MCP_CONFIG_VSCODE;
  if (json_object_object_get_ex(root, "context_servers", &m) &&
      json_object_is_type(m, json_type_object))
    return MCP_CONFIG_ZED;
  if (json_object_object_get_ex(root, "mcp", &m) && json_object_is_type(m, json_type_object) &&
      some_entry_has(m, "type"))
    return MCP_CONFIG_OPENCODE;
  return MCP_CONFIG_NATIVE;
}

static const char *const dialect_names[MCP_CONFIG_DIALECTS] = {
    "mcpconn",        "Claude Code", "VS Code", "Gemini CLI", "Cursor", "Windsurf",
    "Claude Desktop", "Cline",       "Zed",     "OpenCode",   "Codex"};

const char *mcp__config_dialect_name(mcp_config_dialect d) {
  return (unsigned)d < MCP_CONFIG_DIALECTS ? dialect_names[d] : "mcpconn";
}

const char *mcp__config_servers_key(mcp_config_dialect d) {
  return d == MCP_CONFIG_VSCODE     ? "servers"
         : d == MCP_CONFIG_ZED      ? "context_servers"
         : d == MCP_CONFIG_OPENCODE ? "mcp"
         : d == MCP_CONFIG_CODEX    ? "mcp_servers"
                                    : "mcpServers";
}

/* Copies |from|'s member |key| (when present) to |to| as |as|; false: OOM. */
static bool copy_member(json_object *to, json_object *from, const char *key, const char *as) {
  json_object *v = NULL;
  if (!json_object_object_get_ex(from, key, &v)) return true;
  return json_object_object_add(to, as, json_object_get(v)) == 0;
}

/*
 * A Codex [mcp_servers.NAME] table in mcpconn's shape: http_headers are
 * headers, bearer_token_env_var NAME is "Authorization: Bearer ${NAME}",
 * env_http_headers {H = NAME} are "H: ${NAME}", tool_timeout_sec is the
 * timeout (s to ms); every other member is copied as it is.
 */
static json_object *codex_normalize(json_object *e) {
  json_object *n = json_object_new_object(), *h = json_object_new_object(), *v = NULL;
  bool ok = n && h;
  json_object_object_foreach(e, k, val) {
    if (!ok) break;
    if (strcmp(k, "http_headers") == 0 && json_object_is_type(val, json_type_object)) {
      json_object_object_foreach(val, hk, hv) {
        if (ok) ok = json_object_object_add(h, hk, json_object_get(hv)) == 0;
      }
    } else if (strcmp(k, "tool_timeout_sec") == 0 && json_object_is_type(val, json_type_int)) {
      int64_t sec = json_object_get_int64(val);
      ok = json_object_object_add(
               n, "timeout",
               json_object_new_int64(sec < 0 || sec > INT64_MAX / 1000 ? -1 : sec * 1000)) == 0;
    } else if (strcmp(k, "http_headers") != 0 && strcmp(k, "bearer_token_env_var") != 0 &&
               strcmp(k, "env_http_headers") != 0) {
      ok = json_object_object_add(n, k, json_object_get(val)) == 0;
    }
  }
  if (ok && json_object_object_get_ex(e, "env_http_headers", &v) &&
      json_object_is_type(v, json_type_object)) {
    json_object_object_foreach(v, hk, hv) {
      const char *var = mcp__config_plain_string(hv);
      /* A missing name becomes "${/}": unresolvable, so never sent. */
      char *ref = mcp__asprintf("${%s}", var && *var ? var : "/");
      ok = ok && ref && json_object_object_add(h, hk, json_object_new_string(ref)) == 0;
      mcp__free(ref);
    }
  }
  if (ok && json_object_object_get_ex(e, "bearer_token_env_var", &v)) {
    const char *var = mcp__config_plain_string(v);
    char *ref = mcp__asprintf("Bearer ${%s}", var && *var ? var : "/");
    ok = ref && json_object_object_add(h, "Authorization", json_object_new_string(ref)) == 0;
    mcp__free(ref);
  }
  if (ok && json_object_object_length(h) > 0) {
    ok = json_object_object_add(n, "headers", h) == 0;
    if (ok) h = NULL;
  }
  json_object_put(h);
  if (!ok) {
    json_object_put(n);
    return NULL;
  }
  return n;
}

json_object *mcp__config_normalize(mcp_config_dialect d, json_object *e) {
  if (!json_object_is_type(e, json_type_object)) return json_object_get(e);
  json_object *cmd = NULL, *t = NULL;
  json_object_object_get_ex(e, "command", &cmd);
  json_object_object_get_ex(e, "type", &t);
  if (d == MCP_CONFIG_CLINE) {
    json_object *to = NULL;
    if (!json_object_object_get_ex(e, "timeout", &to) || !json_object_is_type(to, json_type_int))
      return json_object_get(e);
    int64_t sec = json_object_get_int64(to);
    json_object *n = json_object_new_object();
    if (!n) return NULL;
    json_object_object_foreach(e, k, v) {
      json_object *nv = strcmp(k, "timeout") == 0
                            ? json_object_new_int64(sec < 0 || sec > INT64_MAX / 1000 ? -1
                                                                                      : sec * 1000)
                            : json_object_get(v);
      if (!nv || json_object_object_add(n, k, nv)) {
        json_object_put(n);
        return NULL;
      }
    }
    return n;
  }
  if (d == MCP_CONFIG_CODEX) return codex_normalize(e);
  bool oc = d == MCP_CONFIG_OPENCODE && json_object_is_type(cmd, json_type_array);
  bool zed = d == MCP_CONFIG_ZED && json_object_is_type(cmd, json_type_object);
  bool octype = d == MCP_CONFIG_OPENCODE && t;
  if (!oc && !zed && !octype && !(d == MCP_CONFIG_OPENCODE)) return json_object_get(e);
  json_object *n = json_object_new_object();
  if (!n) return NULL;
  bool ok = true;
  json_object_object_foreach(e, k, v) {
    if (strcmp(k, "command") == 0 ||
        (d == MCP_CONFIG_OPENCODE && (strcmp(k, "type") == 0 || strcmp(k, "environment") == 0)))
      continue;
    ok = ok && json_object_object_add(n, k, json_object_get(v)) == 0;
  }
  if (oc) {
    /* ["prog", "arg", ...] */
    size_t len = json_object_array_length(cmd);
    json_object *args = json_object_new_array();
    ok = ok && args && json_object_object_add(n, "args", args) == 0;
    if (!ok) json_object_put(args);
    if (ok && len)
      ok = json_object_object_add(n, "command",
                                  json_object_get(json_object_array_get_idx(cmd, 0))) == 0;
    for (size_t i = 1; ok && i < len; i++)
      ok = json_object_array_add(args, json_object_get(json_object_array_get_idx(cmd, i))) == 0;
  } else if (zed) {
    /* {"path": "prog", "args": [...], "env": {...}} */
    ok = ok && copy_member(n, cmd, "path", "command") && copy_member(n, cmd, "args", "args") &&
         copy_member(n, cmd, "env", "env");
  } else if (cmd) {
    ok = ok && json_object_object_add(n, "command", json_object_get(cmd)) == 0;
  }
  if (d == MCP_CONFIG_OPENCODE) {
    const char *ts = mcp__config_plain_string(t);
    const char *mapped = !t                                ? NULL
                         : ts && strcmp(ts, "local") == 0  ? "stdio"
                         : ts && strcmp(ts, "remote") == 0 ? "http"
                                                           : NULL;
    if (mapped) ok = ok && json_object_object_add(n, "type", json_object_new_string(mapped)) == 0;
    else if (t) ok = ok && json_object_object_add(n, "type", json_object_get(t)) == 0;
    ok = ok && copy_member(n, e, "environment", "env");
  }
  if (!ok) {
    json_object_put(n);
    return NULL;
  }
  return n;
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
