/*
 * mcp_config.c: server definitions: parsing, ${VAR} expansion, validation,
 * discovery, canonical hashing, and `!command` secret resolution.
 *
 * Owns the process-wide secret cache (guarded by secret_lock) and nothing
 * else global.  Parsing and discovery start no threads and do no I/O other
 * than reading config files and the user's trust store of project files
 * (which discovery also writes, when the host approves one for good); only
 * mcp__config_resolve_secrets() starts processes (through mcp_spawn.h).
 * Knows nothing of transports or the manager.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-c/json.h>

#include "mcp_client.h"
#include "mcp_config.h"
#include "mcp_jsonrpc.h"
#include "mcp_sha256.h"
#include "mcp_spawn.h"

extern char **environ;

/* Deepest nesting of ${A:-${B:-...}} defaults that is expanded. */
#define EXPAND_MAX_DEPTH 8
/* Deepest JSON nesting accepted in a config file. */
#define JSON_MAX_DEPTH 64
/* Most bytes of output kept from one secret command. */
#define SECRET_MAX_OUTPUT (64 * 1024)

static const char *errtext(int e, char *buf, size_t n) {
#if defined(__GLIBC__) && defined(_GNU_SOURCE)
  return strerror_r(e, buf, n);
#else
  if (strerror_r(e, buf, n) != 0) snprintf(buf, n, "error %d", e);
  return buf;
#endif
}

static const char *default_getenv(void *user, const char *name) {
  (void)user;
  return getenv(name);
}

/* ---- diagnostics -------------------------------------------------------- */

/* A growing list of diagnostics; |oom| is sticky once an append failed. */
typedef struct diag_list {
  mcp_config_diag *v;
  size_t n;
  size_t cap;
  bool oom;
} diag_list;

/*
 * Quotes |s| for a message: "..." with backslash, quote and control bytes
 * escaped, cut after 120 bytes.  NULL when out of memory.
 */
static char *quote(const char *s) {
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
static void diag_add(diag_list *dl, mcp_log_level level, const char *source,
                     const char *server, const char *field, const char *fmt,
                     ...) MCP_PRINTF(6, 7);
static void diag_add(diag_list *dl, mcp_log_level level, const char *source,
                     const char *server, const char *field, const char *fmt,
                     ...) {
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
    qs = quote(server);
    if (!qs) goto oom;
  }
  d.message = mcp__asprintf("%s%s%s%s%s%s", source ? source : "",
                            source ? ": " : "", qs ? "server " : "",
                            qs ? qs : "", qs ? ": " : "", text);
  d.source = source ? mcp__strdup(source) : NULL;
  d.server = server ? mcp__strdup(server) : NULL;
  d.field = field ? mcp__strdup(field) : NULL;
  if (!d.message || (source && !d.source) || (server && !d.server) ||
      (field && !d.field))
    goto oom;
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

static bool is_name_start(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static bool is_name_char(char c) {
  return is_name_start(c) || (c >= '0' && c <= '9');
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

/* Expands |n| bytes at |s| into |b|.  Returns MCP_OK or MCP_ENOMEM. */
static int expand_into(mcp_buf *b, const char *s, size_t n,
                       mcp_config_getenv_fn lookup, void *user, int depth) {
  size_t i = 0;
  while (i < n) {
    const char *dollar = memchr(s + i, '$', n - i);
    size_t lit = dollar ? (size_t)(dollar - (s + i)) : n - i;
    if (mcp__buf_append(b, s + i, lit)) return MCP_ENOMEM;
    i += lit;
    if (i >= n) break;
    /* s[i] == '$' */
    if (i + 2 < n && s[i + 1] == '$' && s[i + 2] == '{') {
      if (mcp__buf_append(b, "${", 2)) return MCP_ENOMEM;
      i += 3;
      continue;
    }
    if (i + 2 >= n || s[i + 1] != '{' || !is_name_start(s[i + 2])) {
      if (mcp__buf_append(b, "$", 1)) return MCP_ENOMEM;
      i++;
      continue;
    }
    size_t name_at = i + 2, j = name_at;
    while (j < n && is_name_char(s[j])) j++;
    size_t name_len = j - name_at;
    bool has_default = false;
    size_t def_at = 0, def_len = 0, end = 0;
    if (j < n && s[j] == '}') {
      end = j + 1;
    } else if (j + 1 < n && s[j] == ':' && s[j + 1] == '-') {
      ptrdiff_t e = default_end(s + j + 2, n - (j + 2));
      if (e < 0) {
        if (mcp__buf_append(b, "$", 1)) return MCP_ENOMEM;
        i++;
        continue;
      }
      has_default = true;
      def_at = j + 2;
      def_len = (size_t)e;
      end = def_at + def_len + 1;
    } else {
      if (mcp__buf_append(b, "$", 1)) return MCP_ENOMEM;
      i++;
      continue;
    }
    char name[256];
    const char *val = NULL;
    if (name_len < sizeof(name)) {
      memcpy(name, s + name_at, name_len);
      name[name_len] = '\0';
      val = lookup(user, name);
    }
    if (has_default && (!val || !*val)) {
      if (depth >= EXPAND_MAX_DEPTH) {
        if (mcp__buf_append(b, s + def_at, def_len)) return MCP_ENOMEM;
      } else if (expand_into(b, s + def_at, def_len, lookup, user, depth + 1)) {
        return MCP_ENOMEM;
      }
    } else if (val) {
      if (mcp__buf_append(b, val, strlen(val))) return MCP_ENOMEM;
    } else {
      /* Unset and no default: the reference stays as written. */
      if (mcp__buf_append(b, s + i, end - i)) return MCP_ENOMEM;
    }
    i = end;
  }
  return MCP_OK;
}

mcp_status mcp__config_expand(const char *in, mcp_config_getenv_fn lookup,
                              void *user, char **out) {
  if (!in || !out) return MCP_EINVAL;
  *out = NULL;
  if (!lookup) lookup = default_getenv;
  mcp_buf b;
  mcp__buf_init(&b);
  if (mcp__buf_reserve(&b, strlen(in)) ||
      expand_into(&b, in, strlen(in), lookup, user, 0)) {
    mcp__buf_free(&b);
    return MCP_ENOMEM;
  }
  b.data[b.len] = '\0'; /* reserve() alone does not terminate */
  *out = b.data;
  return MCP_OK;
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
  mcp__free(o);
}

void mcp__server_def_free(mcp_server_def *def) {
  if (!def) return;
  mcp__free(def->name);
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
  d->name = d->cwd = d->url = d->ca_file = d->ca_dir = NULL;
  d->client_cert = d->client_key = d->source = NULL;
  d->oauth = NULL;
  d->argv = NULL;
  d->env = d->headers = NULL;
  bool ok = dup_opt(&d->name, def->name) && dup_opt(&d->cwd, def->cwd) &&
            dup_opt(&d->url, def->url) && dup_opt(&d->ca_file, def->ca_file) &&
            dup_opt(&d->ca_dir, def->ca_dir) &&
            dup_opt(&d->client_cert, def->client_cert) &&
            dup_opt(&d->client_key, def->client_key) &&
            dup_opt(&d->source, def->source);
  if (ok && def->oauth) {
    mcp_config_oauth *o = def->oauth, *c = mcp__calloc(1, sizeof(*c));
    d->oauth = c;
    ok = c && dup_opt(&c->client_id, o->client_id) &&
         dup_opt(&c->client_secret, o->client_secret) && dup_opt(&c->scopes, o->scopes) &&
         dup_opt(&c->redirect_uri, o->redirect_uri) &&
         dup_opt(&c->client_metadata_url, o->client_metadata_url) &&
         dup_opt(&c->private_key_file, o->private_key_file) &&
         dup_opt(&c->signing_alg, o->signing_alg);
    if (c) c->client_credentials = o->client_credentials;
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
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
              (c >= '0' && c <= '9') || c == '_' || c == '.' || c == ':' ||
              c == '-';
    if (!ok || n >= MCP_CONFIG_NAME_MAX) return false;
  }
  return n >= 1;
}

/* ---- canonical form and hash -------------------------------------------- */

static int cmp_str_ptr(const void *a, const void *b) {
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
    case '"': memcpy(esc, "\\\"", 2); el = 2; break;
    case '\\': memcpy(esc, "\\\\", 2); el = 2; break;
    case '\n': memcpy(esc, "\\n", 2); el = 2; break;
    case '\r': memcpy(esc, "\\r", 2); el = 2; break;
    case '\t': memcpy(esc, "\\t", 2); el = 2; break;
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
  case json_type_null:
    return mcp__buf_append(b, "null", 4);
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
    return put_json_string(b, json_object_get_string(o),
                           (size_t)json_object_get_string_len(o));
  case json_type_array: {
    size_t n = json_object_array_length(o);
    if (mcp__buf_append(b, "[", 1)) return MCP_ENOMEM;
    for (size_t i = 0; i < n; i++) {
      if (i && mcp__buf_append(b, ",", 1)) return MCP_ENOMEM;
      if (stable_stringify(b, json_object_array_get_idx(o, i)))
        return MCP_ENOMEM;
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
    qsort(keys, k, sizeof(char *), cmp_str_ptr);
    int rc = mcp__buf_append(b, "{", 1);
    for (size_t i = 0; rc == MCP_OK && i < k; i++) {
      if (i) rc = mcp__buf_append(b, ",", 1);
      if (rc == MCP_OK) rc = put_json_string(b, keys[i], strlen(keys[i]));
      if (rc == MCP_OK) rc = mcp__buf_append(b, ":", 1);
      if (rc == MCP_OK)
        rc = stable_stringify(b, json_object_object_get(o, keys[i]));
    }
    if (rc == MCP_OK) rc = mcp__buf_append(b, "}", 1);
    mcp__free(keys);
    return rc;
  }
  }
  return MCP_OK;
}

static const char *type_name(mcp_server_type t) {
  switch (t) {
  case MCP_SERVER_HTTP: return "http";
  case MCP_SERVER_SSE: return "sse";
  case MCP_SERVER_STDIO: break;
  }
  return "stdio";
}

static const char *http2_name(mcp_config_http2 m) {
  switch (m) {
  case MCP_CONFIG_HTTP2_OFF: return "off";
  case MCP_CONFIG_HTTP2_PRIOR_KNOWLEDGE: return "prior-knowledge";
  case MCP_CONFIG_HTTP2_AUTO: break;
  }
  return "auto";
}

/* "envInherit" names, as mcp_env_inherit values (0: not a name). */
static const char *const env_inherit_names[] = {NULL, "all", "default", "none"};

static int env_inherit_value(const char *name) {
  for (int i = MCP_ENV_INHERIT_ALL; name && i <= MCP_ENV_INHERIT_NONE; i++)
    if (strcmp(name, env_inherit_names[i]) == 0) return i;
  return 0;
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

static json_object *kv_object(const mcp_config_kv *kv, size_t n) {
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
  if (!obj_add_str(o, "type", type_name(def->type))) goto out;
  if (def->argv && def->argc > 0) {
    if (!obj_add_str(o, "command", def->argv[0])) goto out;
    if (def->argc > 1) {
      json_object *a = json_object_new_array();
      if (!obj_add(o, "args", a)) goto out;
      for (size_t i = 1; i < def->argc; i++) {
        json_object *s = json_object_new_string(def->argv[i]);
        if (!s || json_object_array_add(a, s) != 0) {
          json_object_put(s);
          goto out;
        }
      }
    }
  }
  if (def->nenv && !obj_add(o, "env", kv_object(def->env, def->nenv)))
    goto out;
  if (def->env_inherit > 0 && def->env_inherit <= MCP_ENV_INHERIT_NONE &&
      !obj_add_str(o, "envInherit", env_inherit_names[def->env_inherit]))
    goto out;
  if (def->nheaders &&
      !obj_add(o, "headers", kv_object(def->headers, def->nheaders)))
    goto out;
  if (!obj_add_str(o, "cwd", def->cwd) || !obj_add_str(o, "url", def->url) ||
      !obj_add_str(o, "caFile", def->ca_file) ||
      !obj_add_str(o, "caDir", def->ca_dir) ||
      !obj_add_str(o, "clientCert", def->client_cert) ||
      !obj_add_str(o, "clientKey", def->client_key))
    goto out;
  if (def->timeout_ms >= 0 &&
      !obj_add(o, "timeout", json_object_new_int64(def->timeout_ms)))
    goto out;
  if (def->http2 != MCP_CONFIG_HTTP2_AUTO &&
      !obj_add_str(o, "http2", http2_name(def->http2)))
    goto out;
  if (def->insecure && !obj_add(o, "insecure", json_object_new_boolean(1)))
    goto out;
  if (def->oauth) {
    const mcp_config_oauth *a = def->oauth;
    json_object *oa = json_object_new_object();
    if (!obj_add(o, "oauth", oa) || !obj_add_str(oa, "clientId", a->client_id) ||
        !obj_add_str(oa, "scopes", a->scopes) || !obj_add_str(oa, "redirectUri", a->redirect_uri) ||
        !obj_add_str(oa, "clientMetadataUrl", a->client_metadata_url) ||
        !obj_add_str(oa, "privateKeyFile", a->private_key_file) ||
        !obj_add_str(oa, "signingAlg", a->signing_alg) ||
        (a->client_credentials && !obj_add_str(oa, "grant", "client_credentials")) ||
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

/* Fills def->hash; MCP_OK or MCP_ENOMEM. */
static mcp_status def_hash(mcp_server_def *def) {
  static const char hex[] = "0123456789abcdef";
  char *canon = NULL;
  mcp_status st = mcp__config_canonical_json(def, &canon);
  if (st != MCP_OK) return st;
  unsigned char md[MCP_SHA256_LEN];
  mcp__sha256(canon, strlen(canon), md);
  for (unsigned i = 0; i < 32; i++) {
    def->hash[2 * i] = hex[md[i] >> 4];
    def->hash[2 * i + 1] = hex[md[i] & 15];
  }
  def->hash[64] = '\0';
  mcp__free(canon);
  return MCP_OK;
}

/* ---- parsing one server entry ------------------------------------------- */

typedef struct parse_ctx {
  const char *source;
  mcp_config_dialect dialect;
  mcp_config_getenv_fn lookup;
  void *user;
  diag_list *diags;
} parse_ctx;

enum field_id {
  F_TYPE, F_COMMAND, F_ARGS, F_ENV, F_CWD, F_URL, F_HEADERS, F_TIMEOUT,
  F_ENABLED, F_HTTP2, F_CAFILE, F_CADIR, F_CLIENTCERT, F_CLIENTKEY,
  F_INSECURE, F_HTTPURL, F_SERVERURL, F_OAUTH, F_ENVINHERIT, F_COUNT
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
};

/* Result of a field check: fine, invalid (a warning was added), or OOM. */
enum { CHECK_OK = 0, CHECK_BAD = 1, CHECK_OOM = 2 };

static int bad(parse_ctx *c, const char *server, const char *field,
               const char *fmt, ...) MCP_PRINTF(4, 5);
static int bad(parse_ctx *c, const char *server, const char *field,
               const char *fmt, ...) {
  char text[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof(text), fmt, ap);
  va_end(ap);
  diag_add(c->diags, MCP_LOG_WARN, c->source, server, field, "%s", text);
  return c->diags->oom ? CHECK_OOM : CHECK_BAD;
}

/* A JSON string without NUL bytes, or NULL. */
static const char *plain_string(json_object *o) {
  if (!json_object_is_type(o, json_type_string)) return NULL;
  const char *s = json_object_get_string(o);
  if (strlen(s) != (size_t)json_object_get_string_len(o)) return NULL;
  return s;
}

/* Expands string field |o| into *out; reports a non-string. */
static int expand_field(parse_ctx *c, const char *server, const char *field,
                        json_object *o, char **out) {
  const char *s = plain_string(o);
  if (!s)
    return bad(c, server, field, "field \"%s\" must be a string without NUL "
               "bytes", field);
  if (mcp__config_expand(s, c->lookup, c->user, out) != MCP_OK)
    return CHECK_OOM;
  return CHECK_OK;
}

static bool is_tchar(char ch) {
  return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
         (ch >= '0' && ch <= '9') || (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

/* Headers the transport sets itself (mcp_client_options_add_header). */
static bool header_reserved(const char *name) {
  static const char *const owned[] = {
      "content-type",   "accept",          "host",
      "content-length", "mcp-session-id",  "mcp-protocol-version",
      "last-event-id",
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
static int read_map(parse_ctx *c, const char *server, const char *field,
                    json_object *o, bool headers, mcp_config_kv **kv,
                    size_t *n) {
  if (!json_object_is_type(o, json_type_object))
    return bad(c, server, field, "field \"%s\" must be an object of strings",
               field);
  size_t cap = (size_t)json_object_object_length(o);
  *kv = mcp__calloc(cap ? cap : 1, sizeof(**kv));
  if (!*kv) return CHECK_OOM;
  json_object_object_foreach(o, key, val) {
    if (*key == '\0' || strlen(key) > 1024) {
      return bad(c, server, field, "field \"%s\": invalid name %s", field,
                 *key ? "(too long)" : "\"\"");
    }
    if (headers && header_reserved(key)) {
      char *q = quote(key);
      int r = q ? bad(c, server, field, "field \"%s\": %s is set by the "
                      "transport", field, q)
                : CHECK_OOM;
      mcp__free(q);
      return r;
    }
    for (const char *p = key; *p; p++) {
      bool ok = headers ? is_tchar(*p) : *p != '=';
      if (!ok) {
        char *q = quote(key);
        int r = q ? bad(c, server, field, "field \"%s\": invalid name %s",
                        field, q)
                  : CHECK_OOM;
        mcp__free(q);
        return r;
      }
    }
    const char *s = plain_string(val);
    if (!s) {
      char *q = quote(key);
      int r = q ? bad(c, server, field, "field \"%s\": value of %s must be a "
                      "string without NUL bytes", field, q)
                : CHECK_OOM;
      mcp__free(q);
      return r;
    }
    mcp_config_kv *e = &(*kv)[*n];
    e->name = mcp__strdup(key);
    if (!e->name || mcp__config_expand(s, c->lookup, c->user, &e->value)) {
      mcp__free(e->name);
      e->name = NULL;
      return CHECK_OOM;
    }
    (*n)++;
    bool secret = e->value[0] == '!' && c->dialect == MCP_CONFIG_NATIVE;
    if (headers && !secret && strpbrk(e->value, "\r\n")) {
      char *q = quote(key);
      int r = q ? bad(c, server, field, "field \"%s\": value of %s contains "
                      "CR or LF", field, q)
                : CHECK_OOM;
      mcp__free(q);
      return r;
    }
  }
  return CHECK_OK;
}

static bool url_scheme_ok(const char *u) {
  return strncasecmp(u, "http://", 7) == 0 ||
         strncasecmp(u, "https://", 8) == 0;
}

/* Reads a server's "oauth" object into d->oauth. */
static int read_oauth(parse_ctx *c, const char *name, json_object *o, mcp_server_def *d) {
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
    } else if (strcmp(key, "grant") == 0) {
      const char *g = plain_string(val);
      if (g && strcmp(g, "client_credentials") == 0) a->client_credentials = true;
      else if (!g || strcmp(g, "authorization_code") != 0)
        return bad(c, name, "oauth.grant", "field \"oauth.grant\" must be "
                   "\"authorization_code\" or \"client_credentials\"");
    } else {
      char *q = quote(key);
      r = q ? bad(c, name, "oauth", "unknown field %s in \"oauth\"", q) : CHECK_OOM;
      mcp__free(q);
      return r;
    }
  }
  if (a->client_secret && !a->client_id)
    return bad(c, name, "oauth.clientSecret", "\"oauth.clientSecret\" needs \"oauth.clientId\"");
  if (a->client_credentials && !a->client_id)
    return bad(c, name, "oauth.grant", "the client_credentials grant needs \"oauth.clientId\"");
  return CHECK_OK;
}

/* Reads the non-type fields of |f| into |d|.  The type is already known. */
static int read_fields(parse_ctx *c, const char *name, json_object **f,
                       mcp_server_def *d) {
  int r;
  bool stdio = d->type == MCP_SERVER_STDIO;
  if (stdio) {
    if (!f[F_COMMAND])
      return bad(c, name, "command", "field \"command\" is required for a "
                 "stdio server");
    const char *cmd = plain_string(f[F_COMMAND]);
    if (!cmd || !*cmd)
      return bad(c, name, "command", "field \"command\" must be a non-empty "
                 "string");
    size_t nargs = 0;
    if (f[F_ARGS]) {
      if (!json_object_is_type(f[F_ARGS], json_type_array))
        return bad(c, name, "args", "field \"args\" must be an array of "
                   "strings");
      nargs = json_object_array_length(f[F_ARGS]);
    }
    d->argv = mcp__calloc(nargs + 2, sizeof(char *));
    if (!d->argv) return CHECK_OOM;
    if ((r = expand_field(c, name, "command", f[F_COMMAND], &d->argv[0])))
      return r;
    d->argc = 1;
    for (size_t i = 0; i < nargs; i++) {
      json_object *a = json_object_array_get_idx(f[F_ARGS], i);
      if (!plain_string(a))
        return bad(c, name, "args", "field \"args\": element %zu must be a "
                   "string without NUL bytes", i);
      if ((r = expand_field(c, name, "args", a, &d->argv[d->argc]))) return r;
      d->argc++;
    }
    if (f[F_ENV] &&
        (r = read_map(c, name, "env", f[F_ENV], false, &d->env, &d->nenv)))
      return r;
    if (f[F_CWD] && (r = expand_field(c, name, "cwd", f[F_CWD], &d->cwd)))
      return r;
    if (f[F_ENVINHERIT]) {
      const char *m = plain_string(f[F_ENVINHERIT]);
      d->env_inherit = env_inherit_value(m);
      if (!d->env_inherit)
        return bad(c, name, "envInherit", "field \"envInherit\" must be \"all\", "
                   "\"default\" or \"none\"");
    }
  } else {
    json_object *u = f[F_URL] ? f[F_URL]
                     : f[F_HTTPURL] ? f[F_HTTPURL] : f[F_SERVERURL];
    const char *ukey = f[F_URL] ? "url" : f[F_HTTPURL] ? "httpUrl"
                                                       : "serverUrl";
    if (!u)
      return bad(c, name, "url", "field \"url\" is required for an %s server",
                 type_name(d->type));
    if ((r = expand_field(c, name, ukey, u, &d->url))) return r;
    if (!url_scheme_ok(d->url))
      return bad(c, name, ukey, "field \"%s\" must be an http:// or https:// "
                 "URL", ukey);
    if (f[F_HEADERS] && (r = read_map(c, name, "headers", f[F_HEADERS], true,
                                      &d->headers, &d->nheaders)))
      return r;
    if (f[F_HTTP2]) {
      const char *m = plain_string(f[F_HTTP2]);
      if (m && strcmp(m, "auto") == 0)
        d->http2 = MCP_CONFIG_HTTP2_AUTO;
      else if (m && strcmp(m, "off") == 0)
        d->http2 = MCP_CONFIG_HTTP2_OFF;
      else if (m && strcmp(m, "prior-knowledge") == 0)
        d->http2 = MCP_CONFIG_HTTP2_PRIOR_KNOWLEDGE;
      else
        return bad(c, name, "http2", "field \"http2\" must be \"auto\", "
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
      if ((r = expand_field(c, name, field_table[paths[i].id].key, p, slot)))
        return r;
    }
    if (!d->client_cert != !d->client_key) {
      const char *missing = d->client_cert ? "clientKey" : "clientCert";
      return bad(c, name, missing, "field \"%s\" is required with \"%s\" "
                 "(they may name the same PEM file)", missing,
                 d->client_cert ? "clientCert" : "clientKey");
    }
    if (f[F_INSECURE]) {
      if (!json_object_is_type(f[F_INSECURE], json_type_boolean))
        return bad(c, name, "insecure", "field \"insecure\" must be a "
                   "boolean");
      d->insecure = json_object_get_boolean(f[F_INSECURE]);
    }
    if (f[F_OAUTH] && (r = read_oauth(c, name, f[F_OAUTH], d))) return r;
  }
  if (f[F_TIMEOUT]) {
    if (!json_object_is_type(f[F_TIMEOUT], json_type_int) ||
        json_object_get_int64(f[F_TIMEOUT]) < 0)
      return bad(c, name, "timeout", "field \"timeout\" must be a "
                 "non-negative integer (ms)");
    d->timeout_ms = json_object_get_int64(f[F_TIMEOUT]);
  }
  if (f[F_ENABLED]) {
    if (!json_object_is_type(f[F_ENABLED], json_type_boolean))
      return bad(c, name, "enabled", "field \"enabled\" must be a boolean");
    d->enabled = json_object_get_boolean(f[F_ENABLED]);
  }
  return CHECK_OK;
}

/*
 * Parses one entry.  On CHECK_OK *out is the definition; on CHECK_BAD a
 * warning was added and *out is NULL.
 */
static int parse_server(parse_ctx *c, const char *name, json_object *obj,
                        mcp_server_def **out) {
  json_object *f[F_COUNT];
  bool native = c->dialect == MCP_CONFIG_NATIVE;
  int r;
  *out = NULL;
  memset(f, 0, sizeof(f));
  if (!json_object_is_type(obj, json_type_object))
    return bad(c, name, NULL, "definition must be a JSON object");
  json_object_object_foreach(obj, key, val) {
    int id = -1;
    for (int i = 0; i < F_COUNT; i++)
      if (strcmp(key, field_table[i].key) == 0 &&
          !(native && field_table[i].foreign_only))
        id = i;
    if (id >= 0) {
      f[id] = val;
    } else if (native) {
      char *q = quote(key);
      r = q ? bad(c, name, key, "unknown field %s", q) : CHECK_OOM;
      mcp__free(q);
      return r;
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
    const char *t = plain_string(f[F_TYPE]);
    if (t && strcmp(t, "stdio") == 0) {
      d->type = MCP_SERVER_STDIO;
    } else if (t && strcmp(t, "http") == 0) {
      d->type = MCP_SERVER_HTTP;
    } else if (t && strcmp(t, "sse") == 0) {
      d->type = MCP_SERVER_SSE;
    } else if (t && !native && (strcmp(t, "streamable-http") == 0 ||
                                strcmp(t, "streamableHttp") == 0)) {
      d->type = MCP_SERVER_HTTP;
    } else {
      char *q = t ? quote(t) : NULL;
      r = (q || !t) ? bad(c, name, "type", "unknown type %s (use \"stdio\", "
                          "\"http\" or \"sse\")", q ? q : "(not a string)")
                    : CHECK_OOM;
      mcp__free(q);
      goto fail;
    }
  } else if (!has_cmd && has_url) {
    bool sse = c->dialect == MCP_CONFIG_GEMINI && f[F_URL] && !f[F_HTTPURL];
    d->type = sse ? MCP_SERVER_SSE : MCP_SERVER_HTTP;
  } else {
    d->type = MCP_SERVER_STDIO;
  }

  if (has_cmd && has_url && (native || !f[F_TYPE])) {
    r = bad(c, name, "url", "has both \"command\" and \"url\"; a server is "
            "either stdio or http/sse");
    goto fail;
  }
  if (native) {
    int other = d->type == MCP_SERVER_STDIO ? SCOPE_HTTP : SCOPE_STDIO;
    for (int i = 0; i < F_COUNT; i++) {
      if (f[i] && field_table[i].scope == other) {
        r = bad(c, name, field_table[i].key, "field \"%s\" does not apply to "
                "%s servers", field_table[i].key, type_name(d->type));
        goto fail;
      }
    }
  }
  r = read_fields(c, name, f, d);
  if (r != CHECK_OK) goto fail;
  if (def_hash(d) != MCP_OK) {
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

/* One entry of a file; |def| NULL means invalid (it still claims |name|). */
typedef struct entry {
  char *name;
  mcp_server_def *def;
} entry;

typedef struct file_result {
  entry *v;
  size_t n;
  char **disabled;
  size_t ndisabled;
} file_result;

static void file_result_clear(file_result *fr) {
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
static int file_add_entry(file_result *fr, const char *name,
                          mcp_server_def *def) {
  entry *e = &fr->v[fr->n];
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
static int collect_servers(parse_ctx *c, json_object *map, file_result *fr) {
  size_t cap = (size_t)json_object_object_length(map);
  fr->v = mcp__calloc(cap ? cap : 1, sizeof(entry));
  if (!fr->v) return CHECK_OOM;
  json_object_object_foreach(map, name, val) {
    if (!mcp__config_name_is_valid(name)) {
      if (bad(c, name, NULL, "invalid server name (use 1 to %d of A-Z a-z "
              "0-9 _ . : -)", MCP_CONFIG_NAME_MAX) == CHECK_OOM)
        return CHECK_OOM;
      continue;
    }
    mcp_server_def *def = NULL;
    int r = parse_server(c, name, val, &def);
    if (r == CHECK_OOM) return CHECK_OOM;
    if (file_add_entry(fr, name, def) == CHECK_OOM) return CHECK_OOM;
  }
  return CHECK_OK;
}

static int collect_disabled(parse_ctx *c, json_object *arr, file_result *fr) {
  if (!json_object_is_type(arr, json_type_array)) {
    diag_add(c->diags, MCP_LOG_WARN, c->source, NULL, "disabledServers",
             "field \"disabledServers\" must be an array of names; ignored");
    return c->diags->oom ? CHECK_OOM : CHECK_OK;
  }
  size_t n = json_object_array_length(arr);
  fr->disabled = mcp__calloc(n ? n : 1, sizeof(char *));
  if (!fr->disabled) return CHECK_OOM;
  for (size_t i = 0; i < n; i++) {
    const char *s = plain_string(json_object_array_get_idx(arr, i));
    if (!s || !mcp__config_name_is_valid(s)) {
      diag_add(c->diags, MCP_LOG_WARN, c->source, NULL, "disabledServers",
               "field \"disabledServers\": element %zu is not a server name; "
               "ignored", i);
      if (c->diags->oom) return CHECK_OOM;
      continue;
    }
    fr->disabled[fr->ndisabled] = mcp__strdup(s);
    if (!fr->disabled[fr->ndisabled]) return CHECK_OOM;
    fr->ndisabled++;
  }
  return CHECK_OK;
}

static const char *servers_key(mcp_config_dialect d) {
  return d == MCP_CONFIG_VSCODE ? "servers" : "mcpServers";
}

/*
 * Reads the server map and disabledServers of |root| into |fr|.  A wrong
 * shape gives one warning and leaves |fr| empty.  CHECK_OK or CHECK_OOM.
 */
static int collect_root(parse_ctx *c, json_object *root, file_result *fr) {
  if (!json_object_is_type(root, json_type_object)) {
    diag_add(c->diags, MCP_LOG_WARN, c->source, NULL, NULL,
             "not a JSON object; file ignored");
    return c->diags->oom ? CHECK_OOM : CHECK_OK;
  }
  const char *key = servers_key(c->dialect);
  json_object *map = NULL;
  if (json_object_object_get_ex(root, key, &map) &&
      !json_object_is_type(map, json_type_object)) {
    diag_add(c->diags, MCP_LOG_WARN, c->source, NULL, key,
             "field \"%s\" must be an object; file ignored", key);
    return c->diags->oom ? CHECK_OOM : CHECK_OK;
  }
  int r = CHECK_OK;
  if (map) r = collect_servers(c, map, fr);
  json_object *dis = NULL;
  if (r == CHECK_OK && json_object_object_get_ex(root, "disabledServers", &dis))
    r = collect_disabled(c, dis, fr);
  return r;
}

static int parse_root_text(parse_ctx *c, const char *text, size_t len,
                           json_object **root) {
  char why[160];
  *root = mcp__json_parse_document(text, len, JSON_MAX_DEPTH, "", why, sizeof(why));
  if (!*root) {
    diag_add(c->diags, MCP_LOG_WARN, c->source, NULL, NULL,
             "invalid JSON (%s); file ignored", why);
    return c->diags->oom ? CHECK_OOM : CHECK_BAD;
  }
  return CHECK_OK;
}

/*
 * Reads a whole file.  Returns 0 with *data (NUL-terminated) and *len, or
 * an errno value (EFBIG for a file over MCP_CONFIG_FILE_MAX, ENOMEM).  With
 * |owned|, a symbolic link is not followed (ELOOP) and a file that is not
 * the user's own, or that others may write, is refused (EPERM).
 */
static int read_file_ex(const char *path, bool owned, char **data,
                        size_t *len) {
  *data = NULL;
  *len = 0;
  /* O_NONBLOCK: a FIFO in a config location must not hang discovery. */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK |
                          (owned ? O_NOFOLLOW : 0));
  if (fd < 0) return errno;
  int e = 0;
  struct stat st;
  mcp_buf b;
  mcp__buf_init(&b);
  if (fstat(fd, &st) < 0) {
    e = errno;
    goto out;
  }
  if (!S_ISREG(st.st_mode)) {
    e = S_ISDIR(st.st_mode) ? EISDIR : ENODEV;
    goto out;
  }
  if (owned && (st.st_uid != geteuid() || (st.st_mode & 022))) {
    e = EPERM;
    goto out;
  }
  for (;;) {
    if (b.len > MCP_CONFIG_FILE_MAX) {
      e = EFBIG;
      goto out;
    }
    if (mcp__buf_reserve(&b, 65536)) {
      e = ENOMEM;
      goto out;
    }
    ssize_t n = read(fd, b.data + b.len, 65536);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      e = errno;
      goto out;
    }
    if (n == 0) break;
    b.len += (size_t)n;
    b.data[b.len] = '\0';
  }
  if (mcp__buf_reserve(&b, 0)) {
    e = ENOMEM;
    goto out;
  }
  b.data[b.len] = '\0';
  *data = b.data;
  *len = b.len;
  b.data = NULL;
out:
  mcp__buf_free(&b);
  close(fd);
  return e;
}

static int read_file(const char *path, char **data, size_t *len) {
  return read_file_ex(path, false, data, len);
}

/* The warning for a config file that read_file() could not read (|e|). */
static int read_error(parse_ctx *c, const char *path, int e) {
  char eb[128];
  if (e == EFBIG)
    diag_add(c->diags, MCP_LOG_WARN, path, NULL, NULL,
             "larger than %u bytes; file ignored", MCP_CONFIG_FILE_MAX);
  else
    diag_add(c->diags, MCP_LOG_WARN, path, NULL, NULL, "cannot read: %s",
             e == ENODEV ? "not a regular file" : errtext(e, eb, sizeof(eb)));
  return c->diags->oom ? CHECK_OOM : CHECK_BAD;
}

/*
 * Loads |path| into a JSON root.  Returns CHECK_OK with *root (NULL when
 * the file is missing and |quiet_missing|), CHECK_BAD after a warning, or
 * CHECK_OOM.
 */
static int load_root(parse_ctx *c, const char *path, bool quiet_missing,
                     json_object **root) {
  char *data = NULL;
  size_t len = 0;
  *root = NULL;
  int e = read_file(path, &data, &len);
  if (e == ENOMEM) return CHECK_OOM;
  if (e == ENOENT && quiet_missing) return CHECK_OK;
  if (e) return read_error(c, path, e);
  int r = parse_root_text(c, data, len, root);
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

static int cmp_def(const void *a, const void *b) {
  const mcp_server_def *x = *(const mcp_server_def *const *)a;
  const mcp_server_def *y = *(const mcp_server_def *const *)b;
  return strcmp(x->name, y->name);
}

const mcp_server_def *mcp__config_find(const mcp_config_set *set,
                                       const char *name) {
  if (!set || !name || !set->ndefs) return NULL;
  mcp_server_def key;
  const mcp_server_def *kp = &key;
  key.name = (char *)name;
  mcp_server_def *const *hit =
      bsearch(&kp, set->defs, set->ndefs, sizeof(*set->defs), cmp_def);
  return hit ? *hit : NULL;
}

/* Sorts and de-duplicates a list of names in place. */
static void sort_unique(char **v, size_t *n) {
  if (*n < 2) return;
  qsort(v, *n, sizeof(char *), cmp_str_ptr);
  size_t w = 1;
  for (size_t r = 1; r < *n; r++) {
    if (strcmp(v[r], v[w - 1]) == 0)
      mcp__free(v[r]);
    else
      v[w++] = v[r];
  }
  *n = w;
}

static bool name_listed(char *const *v, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(v[i], name) == 0) return true;
  return false;
}

/* Moves |dl|'s diagnostics into |set|. */
static void set_take_diags(mcp_config_set *set, diag_list *dl) {
  set->diags = dl->v;
  set->ndiags = dl->n;
  dl->v = NULL;
  dl->n = dl->cap = 0;
}

static mcp_status parse_common(parse_ctx *c, const char *text, size_t len,
                               const char *path, mcp_config_set **out) {
  mcp_status st = MCP_ENOMEM;
  file_result fr;
  json_object *root = NULL;
  memset(&fr, 0, sizeof(fr));
  mcp_config_set *set = mcp__calloc(1, sizeof(*set));
  if (!set) goto out;
  int r;
  if (path)
    r = load_root(c, path, false, &root);
  else
    r = parse_root_text(c, text, len, &root);
  if (r == CHECK_OOM) goto out;
  if (root) {
    if (path) {
      set->files = mcp__calloc(1, sizeof(char *));
      if (!set->files || !(set->files[0] = mcp__strdup(path))) goto out;
      set->nfiles = 1;
    }
    if (collect_root(c, root, &fr) == CHECK_OOM) goto out;
  }
  set->defs = mcp__calloc(fr.n ? fr.n : 1, sizeof(mcp_server_def *));
  if (!set->defs) goto out;
  for (size_t i = 0; i < fr.n; i++) {
    if (fr.v[i].def) {
      set->defs[set->ndefs++] = fr.v[i].def;
      fr.v[i].def = NULL;
    }
  }
  qsort(set->defs, set->ndefs, sizeof(*set->defs), cmp_def);
  set->disabled = fr.disabled;
  set->ndisabled = fr.ndisabled;
  fr.disabled = NULL;
  fr.ndisabled = 0;
  sort_unique(set->disabled, &set->ndisabled);
  if (c->diags->oom) goto out;
  set_take_diags(set, c->diags);
  *out = set;
  set = NULL;
  st = MCP_OK;
out:
  json_object_put(root);
  file_result_clear(&fr);
  mcp__config_free(set);
  return st;
}

static void ctx_init(parse_ctx *c, diag_list *dl, const char *source,
                     const mcp_config_parse_opts *o) {
  memset(c, 0, sizeof(*c));
  c->source = source ? source : "<config>";
  c->dialect = o ? o->dialect : MCP_CONFIG_NATIVE;
  c->lookup = o && o->getenv ? o->getenv : default_getenv;
  c->user = o ? o->getenv_user : NULL;
  c->diags = dl;
}

mcp_status mcp__config_parse_text(const char *text, size_t len,
                                  const char *source,
                                  const mcp_config_parse_opts *o,
                                  mcp_config_set **out) {
  if (!out) return MCP_EINVAL;
  *out = NULL;
  if (!text) return MCP_EINVAL;
  diag_list dl;
  parse_ctx c;
  memset(&dl, 0, sizeof(dl));
  ctx_init(&c, &dl, source, o);
  mcp_status st = parse_common(&c, text, len, NULL, out);
  mcp__config_diags_free(dl.v, dl.n);
  return st;
}

mcp_status mcp__config_parse_file(const char *path,
                                  const mcp_config_parse_opts *o,
                                  mcp_config_set **out) {
  if (!out) return MCP_EINVAL;
  *out = NULL;
  if (!path) return MCP_EINVAL;
  diag_list dl;
  parse_ctx c;
  memset(&dl, 0, sizeof(dl));
  ctx_init(&c, &dl, path, o);
  mcp_status st = parse_common(&c, NULL, 0, path, out);
  mcp__config_diags_free(dl.v, dl.n);
  return st;
}

/* ---- discovery ---------------------------------------------------------- */

/* A name claimed by the first file that defined it. */
typedef struct claim {
  char *name;
  char *source;
  mcp_server_def *def; /* NULL: the claiming entry was invalid */
} claim;

typedef struct discovery {
  const mcp_discovery_opts *o;
  mcp_config_getenv_fn lookup;
  void *user;
  diag_list diags;
  claim *claims;
  size_t nclaims;
  size_t capclaims;
  char **disabled;
  size_t ndisabled;
  size_t capdisabled;
  char **files;
  size_t nfiles;
  size_t capfiles;
  char **dirs; /* cwd and its parents up to the project root, nearest first */
  size_t ndirs;
  char *home;
  char *user_home;   /* the home even under no_user: a project file that is
                        a user file needs no trust */
  char *store_dir;   /* where trusted-projects.json lives, or NULL */
  json_object *store; /* its content, loaded on first use */
  bool store_loaded;
  char **untrusted;  /* canonical paths of project files left out */
  size_t nuntrusted;
  size_t capuntrusted;
  char *trust_error;
} discovery;

static bool grow(void **v, size_t *cap, size_t need, size_t size) {
  if (need <= *cap) return true;
  size_t ncap = *cap ? *cap * 2 : 8;
  while (ncap < need) ncap *= 2;
  void *p = mcp__reallocarray(*v, ncap, size);
  if (!p) return false;
  *v = p;
  *cap = ncap;
  return true;
}

static bool path_exists(const char *p) {
  struct stat st;
  return stat(p, &st) == 0;
}

static bool file_exists(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && !S_ISDIR(st.st_mode);
}

/*
 * Lists cwd and its parents, nearest first, ending with the first directory
 * that holds ".git" (a directory, or the file of a worktree) or at "/".
 */
static int list_dirs(discovery *dc, const char *cwd) {
  char *cur = mcp__strdup(cwd);
  if (!cur) return CHECK_OOM;
  size_t len = strlen(cur);
  while (len > 1 && cur[len - 1] == '/') cur[--len] = '\0';
  size_t cap = 0;
  for (;;) {
    if (!grow((void **)&dc->dirs, &cap, dc->ndirs + 1, sizeof(char *))) {
      mcp__free(cur);
      return CHECK_OOM;
    }
    dc->dirs[dc->ndirs++] = cur;
    char *git = mcp__asprintf("%s%sgit", cur, strcmp(cur, "/") ? "/." : ".");
    if (!git) return CHECK_OOM;
    bool stop = path_exists(git) || strcmp(cur, "/") == 0;
    mcp__free(git);
    if (stop) break;
    char *slash = strrchr(cur, '/');
    size_t plen = slash == cur ? 1 : (size_t)(slash - cur);
    char *parent = mcp__strndup(cur, plen);
    if (!parent) return CHECK_OOM;
    cur = parent;
  }
  return CHECK_OK;
}

/* The nearest |rel| in the project directories, or NULL in *out. */
static int find_upward(discovery *dc, const char *rel, char **out) {
  *out = NULL;
  for (size_t i = 0; i < dc->ndirs; i++) {
    const char *d = dc->dirs[i];
    char *p = mcp__asprintf("%s%s%s", d, strcmp(d, "/") ? "/" : "", rel);
    if (!p) return CHECK_OOM;
    if (file_exists(p)) {
      *out = p;
      return CHECK_OK;
    }
    mcp__free(p);
  }
  return CHECK_OK;
}

static const claim *find_claim(const discovery *dc, const char *name) {
  for (size_t i = 0; i < dc->nclaims; i++)
    if (strcmp(dc->claims[i].name, name) == 0) return &dc->claims[i];
  return NULL;
}

/* Merges one file's entries: first definition of a name wins. */
static int merge(discovery *dc, const char *source, file_result *fr) {
  for (size_t i = 0; i < fr->n; i++) {
    entry *e = &fr->v[i];
    const claim *prev = find_claim(dc, e->name);
    if (prev) {
      diag_add(&dc->diags, MCP_LOG_DEBUG, source, e->name, NULL,
               "ignored: already defined in %s", prev->source);
      if (dc->diags.oom) return CHECK_OOM;
      continue;
    }
    if (!grow((void **)&dc->claims, &dc->capclaims, dc->nclaims + 1,
              sizeof(claim)))
      return CHECK_OOM;
    claim *cl = &dc->claims[dc->nclaims];
    cl->name = mcp__strdup(e->name);
    cl->source = mcp__strdup(source);
    if (!cl->name || !cl->source) {
      mcp__free(cl->name);
      mcp__free(cl->source);
      return CHECK_OOM;
    }
    cl->def = e->def;
    e->def = NULL;
    dc->nclaims++;
  }
  for (size_t i = 0; i < fr->ndisabled; i++) {
    if (!grow((void **)&dc->disabled, &dc->capdisabled, dc->ndisabled + 1,
              sizeof(char *)))
      return CHECK_OOM;
    dc->disabled[dc->ndisabled++] = fr->disabled[i];
    fr->disabled[i] = NULL;
  }
  fr->ndisabled = 0;
  return CHECK_OK;
}

static int note_file(discovery *dc, const char *path) {
  if (!grow((void **)&dc->files, &dc->capfiles, dc->nfiles + 1,
            sizeof(char *)))
    return CHECK_OOM;
  dc->files[dc->nfiles] = mcp__strdup(path);
  if (!dc->files[dc->nfiles]) return CHECK_OOM;
  dc->nfiles++;
  return CHECK_OK;
}

/*
 * Reads |path| in |dialect| and merges it.  With |claude_projects|, it
 * merges ~/.claude.json's projects[dir] entry for the nearest project
 * directory instead of the top-level map.  With |text|, those |len| bytes
 * are |path|'s content, already read.
 */
static int load_and_merge(discovery *dc, const char *path,
                          mcp_config_dialect dialect, bool quiet_missing,
                          bool claude_projects, const char *text,
                          size_t len) {
  parse_ctx c;
  mcp_config_parse_opts po;
  json_object *root = NULL;
  file_result fr;
  char *source = NULL;
  int r;
  memset(&fr, 0, sizeof(fr));
  memset(&po, 0, sizeof(po));
  po.dialect = dialect;
  po.getenv = dc->lookup;
  po.getenv_user = dc->user;
  ctx_init(&c, &dc->diags, path, &po);
  /* A file reached twice (cwd inside home, an explicit file that is also
   * the project file) is read once, at its higher priority. */
  for (size_t i = 0; !claude_projects && i < dc->nfiles; i++)
    if (strcmp(dc->files[i], path) == 0) return CHECK_OK;
  if (text)
    r = parse_root_text(&c, text, len, &root);
  else
    r = load_root(&c, path, quiet_missing, &root);
  if (r != CHECK_OK || !root) goto out;
  if (!claude_projects && (r = note_file(dc, path)) != CHECK_OK) goto out;
  if (claude_projects) {
    json_object *projects = NULL, *proj = NULL;
    if (!json_object_is_type(root, json_type_object) ||
        !json_object_object_get_ex(root, "projects", &projects) ||
        !json_object_is_type(projects, json_type_object))
      goto out;
    const char *dir = NULL;
    for (size_t i = 0; i < dc->ndirs && !proj; i++) {
      json_object *p = NULL;
      if (json_object_object_get_ex(projects, dc->dirs[i], &p) &&
          json_object_is_type(p, json_type_object)) {
        proj = p;
        dir = dc->dirs[i];
      }
    }
    if (!proj) goto out;
    source = mcp__asprintf("%s (project %s)", path, dir);
    if (!source) {
      r = CHECK_OOM;
      goto out;
    }
    c.source = source;
    if ((r = note_file(dc, source)) != CHECK_OK) goto out;
    json_object *map = NULL;
    if (!json_object_object_get_ex(proj, "mcpServers", &map)) goto out;
    if (!json_object_is_type(map, json_type_object)) {
      diag_add(c.diags, MCP_LOG_WARN, c.source, NULL, "mcpServers",
               "field \"mcpServers\" must be an object; ignored");
      r = c.diags->oom ? CHECK_OOM : CHECK_OK;
      goto out;
    }
    r = collect_servers(&c, map, &fr);
  } else {
    r = collect_root(&c, root, &fr);
  }
  if (r == CHECK_OK) r = merge(dc, c.source, &fr);
out:
  json_object_put(root);
  file_result_clear(&fr);
  mcp__free(source);
  return r == CHECK_BAD ? CHECK_OK : r;
}

/* One place another client keeps its servers. */
typedef struct import_file {
  unsigned bit;
  bool project; /* searched upwards from cwd; else under home */
  const char *rel;
  mcp_config_dialect dialect;
  bool claude_projects;
} import_file;

static const import_file imports[] = {
    {MCP_IMPORT_CLAUDE, false, ".claude.json", MCP_CONFIG_FOREIGN, true},
    {MCP_IMPORT_CLAUDE, true, ".claude/mcp.json", MCP_CONFIG_FOREIGN, false},
    {MCP_IMPORT_CLAUDE, false, ".claude.json", MCP_CONFIG_FOREIGN, false},
    {MCP_IMPORT_CURSOR, true, ".cursor/mcp.json", MCP_CONFIG_FOREIGN, false},
    {MCP_IMPORT_CURSOR, false, ".cursor/mcp.json", MCP_CONFIG_FOREIGN, false},
    {MCP_IMPORT_VSCODE, true, ".vscode/mcp.json", MCP_CONFIG_VSCODE, false},
    {MCP_IMPORT_WINDSURF, false, ".codeium/windsurf/mcp_config.json",
     MCP_CONFIG_FOREIGN, false},
    {MCP_IMPORT_GEMINI, true, ".gemini/settings.json", MCP_CONFIG_GEMINI,
     false},
    {MCP_IMPORT_GEMINI, false, ".gemini/settings.json", MCP_CONFIG_GEMINI,
     false},
};

static void discovery_clear(discovery *dc) {
  mcp__config_diags_free(dc->diags.v, dc->diags.n);
  for (size_t i = 0; i < dc->nclaims; i++) {
    mcp__free(dc->claims[i].name);
    mcp__free(dc->claims[i].source);
    mcp__server_def_free(dc->claims[i].def);
  }
  mcp__free(dc->claims);
  for (size_t i = 0; i < dc->ndisabled; i++) mcp__free(dc->disabled[i]);
  mcp__free(dc->disabled);
  for (size_t i = 0; i < dc->nfiles; i++) mcp__free(dc->files[i]);
  mcp__free(dc->files);
  for (size_t i = 0; i < dc->ndirs; i++) mcp__free(dc->dirs[i]);
  mcp__free(dc->dirs);
  mcp__free(dc->home);
  mcp__free(dc->user_home);
  mcp__free(dc->store_dir);
  json_object_put(dc->store);
  for (size_t i = 0; i < dc->nuntrusted; i++) mcp__free(dc->untrusted[i]);
  mcp__free(dc->untrusted);
  mcp__free(dc->trust_error);
}

/* Finds the home directory: the option, $HOME, then the password entry. */
static int find_home(discovery *dc) {
  const char *h = dc->o->home;
  if (!h || !*h) h = dc->lookup(dc->user, "HOME");
  if (h && *h == '/') {
    dc->home = mcp__strdup(h);
    return dc->home ? CHECK_OK : CHECK_OOM;
  }
  if (dc->o->getenv) return CHECK_OK; /* a hermetic lookup: no fallback */
  struct passwd pw, *res = NULL;
  char buf[4096];
  if (getpwuid_r(getuid(), &pw, buf, sizeof(buf), &res) == 0 && res &&
      res->pw_dir && *res->pw_dir == '/') {
    dc->home = mcp__strdup(res->pw_dir);
    if (!dc->home) return CHECK_OOM;
  }
  return CHECK_OK;
}

/* ---- project trust ------------------------------------------------------ */

/* The trust store's file name, in the user's mcpconn config directory. */
#define TRUST_STORE_NAME "trusted-projects.json"

static void hex_sha256(const void *data, size_t len, char out[65]) {
  static const char hex[] = "0123456789abcdef";
  unsigned char md[MCP_SHA256_LEN];
  mcp__sha256(data, len, md);
  for (unsigned i = 0; i < MCP_SHA256_LEN; i++) {
    out[2 * i] = hex[md[i] >> 4];
    out[2 * i + 1] = hex[md[i] & 15];
  }
  out[64] = '\0';
}

/*
 * The path approvals are keyed by: |path|'s directory resolved by
 * realpath(3), then its last part.  The last part is not resolved, so a
 * symbolic link in another checkout that points to an approved file is a
 * different path and is asked about again.  NULL when out of memory or the
 * directory cannot be resolved (*e says why).
 */
static char *canonical_path(const char *path, int *e) {
  const char *slash = strrchr(path, '/');
  *e = ENOMEM;
  if (!slash) {
    *e = EINVAL;
    return NULL;
  }
  char *dir = mcp__strndup(path, slash == path ? 1 : (size_t)(slash - path));
  if (!dir) return NULL;
  char *real = realpath(dir, NULL);
  if (!real) *e = errno;
  mcp__free(dir);
  if (!real) return NULL;
  char *out = mcp__asprintf("%s%s%s", real, strcmp(real, "/") ? "/" : "",
                            slash + 1);
  free(real); /* from realpath() */
  return out;
}

/* The directory that holds the trust store: $XDG_CONFIG_HOME/mcpconn, else
 * ~/.config/mcpconn; NULL in *out without either. */
static int find_store_dir(discovery *dc, char **out) {
  *out = NULL;
  const char *xdg = dc->o->xdg_config_home;
  if (!xdg || !*xdg) xdg = dc->lookup(dc->user, "XDG_CONFIG_HOME");
  if (xdg && *xdg == '/')
    *out = mcp__asprintf("%s/mcpconn", xdg);
  else if (dc->home)
    *out = mcp__asprintf("%s/.config/mcpconn", dc->home);
  else
    return CHECK_OK;
  return *out ? CHECK_OK : CHECK_OOM;
}

/*
 * Reads the trust store of |dir| into *root: NULL when it does not exist.
 * One that is a symbolic link, not the user's own or writable by others is
 * not used, with a warning (someone else could have written it).
 * CHECK_OK, or CHECK_OOM.
 */
static int store_read(diag_list *dl, const char *dir, json_object **root) {
  char *data = NULL, eb[128];
  size_t len = 0;
  *root = NULL;
  char *path = mcp__asprintf("%s/" TRUST_STORE_NAME, dir);
  if (!path) return CHECK_OOM;
  int e = read_file_ex(path, true, &data, &len);
  int r = CHECK_OK;
  if (e == ENOMEM) {
    r = CHECK_OOM;
  } else if (e == ELOOP || e == EPERM) {
    diag_add(dl, MCP_LOG_WARN, path, NULL, NULL,
             "not used: %s; no project file is trusted",
             e == ELOOP ? "a symbolic link"
                        : "not owned by you, or writable by others");
  } else if (e && e != ENOENT) {
    diag_add(dl, MCP_LOG_WARN, path, NULL, NULL,
             "cannot read: %s; no project file is trusted",
             errtext(e, eb, sizeof(eb)));
  } else if (!e) {
    char why[160];
    *root = mcp__json_parse_document(data, len, JSON_MAX_DEPTH, "", why,
                                     sizeof(why));
    if (!*root || !json_object_is_type(*root, json_type_object)) {
      json_object_put(*root);
      *root = NULL;
      diag_add(dl, MCP_LOG_WARN, path, NULL, NULL,
               "invalid trust store (%s); no project file is trusted",
               why[0] ? why : "not an object");
    }
  }
  if (dl->oom) r = CHECK_OOM;
  mcp__free(data);
  mcp__free(path);
  return r;
}

/* True when |root| approves |key| with content |hash|. */
static bool store_approves(json_object *root, const char *key,
                           const char *hash) {
  json_object *projects = NULL, *p = NULL, *h = NULL;
  if (!root || !json_object_object_get_ex(root, "projects", &projects) ||
      !json_object_is_type(projects, json_type_object) ||
      !json_object_object_get_ex(projects, key, &p) ||
      !json_object_object_get_ex(p, "sha256", &h) ||
      !json_object_is_type(h, json_type_string))
    return false;
  return strcmp(json_object_get_string(h), hash) == 0;
}

/*
 * Makes |dir| and its missing parents (mode 0700), then checks that it is a
 * directory of the user's own that nobody else may write, so no one else
 * can plant a file or link in it.  0 or an errno value (EPERM: not safe).
 */
static int store_dir_ready(const char *dir) {
  char *p = mcp__strdup(dir);
  if (!p) return ENOMEM;
  for (char *q = strchr(p + 1, '/');; q = strchr(q + 1, '/')) {
    if (q) *q = '\0';
    if (mkdir(p, 0700) != 0 && errno != EEXIST) {
      int e = errno;
      mcp__free(p);
      return e;
    }
    if (!q) break;
    *q = '/';
  }
  mcp__free(p);
  struct stat st;
  if (stat(dir, &st) != 0) return errno;
  if (!S_ISDIR(st.st_mode)) return ENOTDIR;
  if (st.st_uid != geteuid() || (st.st_mode & 022)) return EPERM;
  return 0;
}

/* Writes all of |s| to |fd|; 0 or an errno value. */
static int write_all(int fd, const char *s, size_t n) {
  while (n) {
    ssize_t w = write(fd, s, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return errno;
    s += w;
    n -= (size_t)w;
  }
  return 0;
}

/*
 * Stores the approval of |key| with |hash| in |dir|'s trust store,
 * replacing an older approval of that path.  Holds an exclusive flock on
 * the directory from reading the store to renaming the new one into place,
 * so two processes approving at once both keep their approval; the new
 * file is made with mkstemp (O_EXCL, so a planted name is never opened),
 * set to 0600, synced and renamed over the old one (rename replaces a link,
 * never follows it).  Returns 0, or an errno value with *why set to a
 * static description of the step that failed.
 */
static int store_remember(const char *dir, const char *key, const char *hash,
                          const char **why) {
  json_object *root = NULL, *projects = NULL, *item = NULL;
  char *path = NULL, *tmp = NULL, *data = NULL;
  size_t len = 0;
  int dfd = -1, fd = -1, e;
  bool made = false;
  *why = "cannot make the directory";
  if ((e = store_dir_ready(dir)) != 0) {
    if (e == EPERM) *why = "the directory is not yours alone";
    return e;
  }
  *why = "out of memory";
  path = mcp__asprintf("%s/" TRUST_STORE_NAME, dir);
  tmp = mcp__asprintf("%s/" TRUST_STORE_NAME ".XXXXXX", dir);
  if (!path || !tmp) {
    e = ENOMEM;
    goto out;
  }
  *why = "cannot lock the directory";
  dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0 || flock(dfd, LOCK_EX) != 0) {
    e = errno;
    goto out;
  }
  *why = "cannot read the trust store";
  e = read_file_ex(path, true, &data, &len);
  if (e == 0) {
    root = json_tokener_parse(data);
    mcp__free(data);
  } else if (e != ENOENT) {
    if (e == EPERM) *why = "the trust store is not yours alone";
    if (e == ELOOP) *why = "the trust store is a symbolic link";
    goto out;
  }
  e = ENOMEM;
  *why = "out of memory";
  if (!root || !json_object_is_type(root, json_type_object)) {
    json_object_put(root);
    if (!(root = json_object_new_object())) goto out;
  }
  if (!json_object_object_get_ex(root, "projects", &projects) ||
      !json_object_is_type(projects, json_type_object)) {
    if (!(projects = json_object_new_object()) ||
        json_object_object_add(root, "projects", projects) != 0)
      goto out;
  }
  if (!(item = json_object_new_object())) goto out;
  if (json_object_object_add(item, "sha256", json_object_new_string(hash)) ||
      json_object_object_add(projects, key, item)) {
    json_object_put(item);
    goto out;
  }
  if (json_object_object_add(root, "version", json_object_new_int(1)))
    goto out;
  const char *text =
      json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
                                               JSON_C_TO_STRING_NOSLASHESCAPE);
  if (!text) goto out;
  *why = "cannot write the trust store";
  fd = mkstemp(tmp);
  if (fd < 0) {
    e = errno;
    goto out;
  }
  made = true;
  if (fchmod(fd, 0600) != 0 || (e = write_all(fd, text, strlen(text))) != 0 ||
      (e = write_all(fd, "\n", 1)) != 0 || fsync(fd) != 0) {
    if (!e) e = errno;
    goto out;
  }
  if (close(fd) != 0) {
    fd = -1;
    e = errno;
    goto out;
  }
  fd = -1;
  if (rename(tmp, path) != 0) {
    e = errno;
    goto out;
  }
  made = false;
  e = 0;
out:
  if (fd >= 0) close(fd);
  if (made) unlink(tmp);
  if (dfd >= 0) close(dfd);         /* releases the lock */
  json_object_put(root);
  mcp__free(path);
  mcp__free(tmp);
  return e;
}

/* A string member of |o|, or NULL. */
static const char *str_member(json_object *o, const char *key) {
  json_object *v = NULL;
  if (!json_object_object_get_ex(o, key, &v)) return NULL;
  return plain_string(v);
}

/* Appends the `!command` values of the object |o|'s map |field| to |cmds|. */
static bool add_commands(json_object *o, const char *field, json_object *cmds) {
  json_object *map = NULL;
  if (!json_object_object_get_ex(o, field, &map) ||
      !json_object_is_type(map, json_type_object))
    return true;
  json_object_object_foreach(map, k, v) {
    (void)k;
    const char *s = plain_string(v);
    if (s && s[0] == '!' &&
        json_object_array_add(cmds, json_object_new_string(s + 1)) != 0)
      return false;
  }
  return true;
}

/*
 * Describes the servers of |map| as written, for the trust callback (see
 * mcp_project_trust_fn): nothing is expanded or validated, so the host sees
 * what the file says.  CHECK_OK with *out (new, freed with mcp__free()),
 * or CHECK_OOM.
 */
static int project_summary(json_object *map, mcp_config_dialect dialect,
                           char **out) {
  static const char *const url_keys[] = {"url", "httpUrl", "serverUrl"};
  *out = NULL;
  json_object *arr = json_object_new_array();
  if (!arr) return CHECK_OOM;
  json_object_object_foreach(map, name, val) {
    json_object *s = json_object_new_object();
    if (!s || json_object_array_add(arr, s) != 0) {
      json_object_put(s);
      goto oom;
    }
    if (json_object_object_add(s, "name", json_object_new_string(name)))
      goto oom;
    if (!json_object_is_type(val, json_type_object)) continue;
    const char *type = str_member(val, "type");
    const char *cmd = str_member(val, "command");
    const char *cwd = str_member(val, "cwd");
    const char *url = NULL;
    for (size_t i = 0; !url && i < 3; i++) url = str_member(val, url_keys[i]);
    if ((type && json_object_object_add(s, "type", json_object_new_string(type))) ||
        (cmd && json_object_object_add(s, "command", json_object_new_string(cmd))) ||
        (cwd && json_object_object_add(s, "cwd", json_object_new_string(cwd))) ||
        (url && json_object_object_add(s, "url", json_object_new_string(url))))
      goto oom;
    json_object *args = NULL;
    if (json_object_object_get_ex(val, "args", &args) &&
        json_object_is_type(args, json_type_array)) {
      json_object *a = json_object_new_array();
      if (!a || json_object_object_add(s, "args", a)) {
        json_object_put(a);
        goto oom;
      }
      size_t n = json_object_array_length(args);
      for (size_t i = 0; i < n; i++) {
        json_object *v = json_object_array_get_idx(args, i);
        const char *t = plain_string(v);
        if (json_object_array_add(
                a, json_object_new_string(t ? t : json_object_to_json_string(v))))
          goto oom;
      }
    }
    /* "!" runs a command only in mcpconn's own files. */
    if (dialect == MCP_CONFIG_NATIVE) {
      json_object *cmds = json_object_new_array();
      if (!cmds || !add_commands(val, "env", cmds) ||
          !add_commands(val, "headers", cmds)) {
        json_object_put(cmds);
        goto oom;
      }
      if (json_object_array_length(cmds) == 0)
        json_object_put(cmds);
      else if (json_object_object_add(s, "commands", cmds))
        goto oom;
    }
  }
  const char *text = json_object_to_json_string_ext(
      arr, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
  if (!text || !(*out = mcp__strdup(text))) goto oom;
  json_object_put(arr);
  return CHECK_OK;
oom:
  json_object_put(arr);
  return CHECK_OOM;
}

/* The server map of a parsed project file, or NULL. */
static json_object *server_map(json_object *root, mcp_config_dialect d) {
  json_object *map = NULL;
  if (!json_object_is_type(root, json_type_object) ||
      !json_object_object_get_ex(root, servers_key(d), &map) ||
      !json_object_is_type(map, json_type_object))
    return NULL;
  return map;
}

/* Records |key| as left out for want of trust. */
static int note_untrusted(discovery *dc, const char *key) {
  if (!grow((void **)&dc->untrusted, &dc->capuntrusted, dc->nuntrusted + 1,
            sizeof(char *)))
    return CHECK_OOM;
  if (!(dc->untrusted[dc->nuntrusted] = mcp__strdup(key))) return CHECK_OOM;
  dc->nuntrusted++;
  return CHECK_OK;
}

/*
 * Decides about the project file |path| (|text|, |len| bytes, already
 * read) and sets *use.  A file with no server entry is used as it is: it
 * cannot start anything.  CHECK_OK or CHECK_OOM.
 */
static int decide_trust(discovery *dc, const char *path,
                        mcp_config_dialect dialect, const char *text,
                        size_t len, bool *use) {
  parse_ctx c;
  json_object *root = NULL;
  diag_list quiet;
  char *key = NULL, *summary = NULL, hash[65], eb[128];
  int r = CHECK_OK, e;
  *use = false;
  memset(&quiet, 0, sizeof(quiet));
  /* Only its shape is read here; the real parse warns about its content. */
  ctx_init(&c, &quiet, path, NULL);
  c.dialect = dialect;
  if (parse_root_text(&c, text, len, &root) != CHECK_OK) {
    *use = true; /* invalid JSON: the real parse says so, and adds nothing */
    goto out;
  }
  json_object *map = server_map(root, dialect);
  if (!map || json_object_object_length(map) == 0) {
    *use = true;
    goto out;
  }
  if (!(key = canonical_path(path, &e))) {
    if (e == ENOMEM) {
      r = CHECK_OOM;
      goto out;
    }
    diag_add(&dc->diags, MCP_LOG_WARN, path, NULL, NULL,
             "project file not used: cannot resolve its directory: %s",
             errtext(e, eb, sizeof(eb)));
    r = dc->diags.oom ? CHECK_OOM : note_untrusted(dc, path);
    goto out;
  }
  hex_sha256(text, len, hash);
  if (!dc->store_loaded && dc->store_dir) {
    if ((r = store_read(&dc->diags, dc->store_dir, &dc->store)) != CHECK_OK)
      goto out;
  }
  dc->store_loaded = true;
  if (store_approves(dc->store, key, hash)) {
    *use = true;
    goto out;
  }
  mcp_trust t = MCP_TRUST_DENY;
  if (dc->o->trust) {
    if ((r = project_summary(map, dialect, &summary)) != CHECK_OK) goto out;
    t = dc->o->trust(dc->o->trust_user, key, hash, summary);
  }
  if (t == MCP_TRUST_ALWAYS) {
    const char *why = "no configuration directory (set HOME)";
    e = dc->store_dir ? store_remember(dc->store_dir, key, hash, &why) : ENOENT;
    if (e == ENOMEM) {
      r = CHECK_OOM;
      goto out;
    }
    if (e) {
      diag_add(&dc->diags, MCP_LOG_WARN, path, NULL, NULL,
               "trusted for this run only: cannot remember the approval%s%s%s: "
               "%s: %s", dc->store_dir ? " in " : "",
               dc->store_dir ? dc->store_dir : "",
               dc->store_dir ? "/" TRUST_STORE_NAME : "", why,
               errtext(e, eb, sizeof(eb)));
      mcp__free(dc->trust_error);
      dc->trust_error = mcp__asprintf("%s: %s", why, errtext(e, eb, sizeof(eb)));
      if (dc->diags.oom || !dc->trust_error) {
        r = CHECK_OOM;
        goto out;
      }
    }
  }
  if (t == MCP_TRUST_ALWAYS || t == MCP_TRUST_ONCE) {
    *use = true;
    goto out;
  }
  diag_add(&dc->diags, dc->o->trust ? MCP_LOG_DEBUG : MCP_LOG_WARN, path,
           NULL, NULL,
           "project file not trusted: its %zu server%s %s not started",
           (size_t)json_object_object_length(map),
           json_object_object_length(map) == 1 ? "" : "s",
           json_object_object_length(map) == 1 ? "is" : "are");
  r = dc->diags.oom ? CHECK_OOM : note_untrusted(dc, key);
out:
  json_object_put(root);
  mcp__config_diags_free(quiet.v, quiet.n);
  mcp__free(key);
  mcp__free(summary);
  return r;
}

/*
 * Reads the project-level file |path|, once, and merges it if it is
 * trusted.  A path that is |user_rel| under the user's home is that
 * client's user file, found by the upward search from a directory inside
 * the home: it is trusted as a user file.
 */
static int load_project(discovery *dc, const char *path,
                        mcp_config_dialect dialect, const char *user_rel) {
  char *text = NULL;
  size_t len = 0;
  int r;
  if (user_rel && dc->user_home) {
    char *u = mcp__asprintf("%s/%s", dc->user_home, user_rel);
    if (!u) return CHECK_OOM;
    bool same = strcmp(u, path) == 0;
    mcp__free(u);
    if (same)
      return dc->o->no_user
                 ? CHECK_OK
                 : load_and_merge(dc, path, dialect, true, false, NULL, 0);
  }
  for (size_t i = 0; i < dc->nfiles; i++)
    if (strcmp(dc->files[i], path) == 0) return CHECK_OK;
  int e = read_file(path, &text, &len);
  if (e == ENOMEM) return CHECK_OOM;
  if (e == ENOENT) return CHECK_OK;
  if (e) {
    parse_ctx c;
    ctx_init(&c, &dc->diags, path, NULL);
    r = read_error(&c, path, e);
    return r == CHECK_BAD ? CHECK_OK : r;
  }
  bool use = false;
  size_t first = dc->nclaims;
  r = decide_trust(dc, path, dialect, text, len, &use);
  if (r == CHECK_OK && use)
    r = load_and_merge(dc, path, dialect, true, false, text, len);
  for (size_t i = first; r == CHECK_OK && i < dc->nclaims; i++)
    if (dc->claims[i].def) dc->claims[i].def->project = true;
  mcp__free(text);
  return r;
}

/* Builds the output set from the claims. */
static mcp_status finish(discovery *dc, mcp_config_set **out) {
  mcp_config_set *set = mcp__calloc(1, sizeof(*set));
  if (!set) return MCP_ENOMEM;
  sort_unique(dc->disabled, &dc->ndisabled);
  set->defs = mcp__calloc(dc->nclaims ? dc->nclaims : 1,
                          sizeof(mcp_server_def *));
  if (!set->defs) goto oom;
  for (size_t i = 0; i < dc->nclaims; i++) {
    claim *cl = &dc->claims[i];
    if (!cl->def) continue;
    if (name_listed(dc->disabled, dc->ndisabled, cl->name)) {
      diag_add(&dc->diags, MCP_LOG_DEBUG, cl->source, cl->name, NULL,
               "disabled by \"disabledServers\"");
      if (!dc->diags.oom) dc->diags.v[dc->diags.n - 1].hidden = true;
      continue;
    }
    if (!cl->def->enabled) {
      diag_add(&dc->diags, MCP_LOG_DEBUG, cl->source, cl->name, "enabled",
               "hidden by \"enabled\": false");
      if (!dc->diags.oom) dc->diags.v[dc->diags.n - 1].hidden = true;
      continue;
    }
    set->defs[set->ndefs++] = cl->def;
    cl->def = NULL;
  }
  if (dc->diags.oom) goto oom;
  qsort(set->defs, set->ndefs, sizeof(*set->defs), cmp_def);
  set->disabled = dc->disabled;
  set->ndisabled = dc->ndisabled;
  dc->disabled = NULL;
  dc->ndisabled = 0;
  set->files = dc->files;
  set->nfiles = dc->nfiles;
  dc->files = NULL;
  dc->nfiles = 0;
  set->untrusted = dc->untrusted;
  set->nuntrusted = dc->nuntrusted;
  dc->untrusted = NULL;
  dc->nuntrusted = 0;
  set->trust_error = dc->trust_error;
  dc->trust_error = NULL;
  set_take_diags(set, &dc->diags);
  *out = set;
  return MCP_OK;
oom:
  mcp__config_free(set);
  return MCP_ENOMEM;
}

mcp_status mcp__config_discover(const mcp_discovery_opts *o,
                                mcp_config_set **out, mcp_error *err) {
  static const mcp_discovery_opts defaults;
  discovery dc;
  char *cwd_buf = NULL, *path = NULL;
  mcp_status st = MCP_OK;
  int r = CHECK_OK;
  if (!out) return mcp__error_set(err, MCP_EINVAL, "no output set");
  *out = NULL;
  memset(&dc, 0, sizeof(dc));
  dc.o = o ? o : &defaults;
  dc.lookup = dc.o->getenv ? dc.o->getenv : default_getenv;
  dc.user = dc.o->getenv_user;

  const char *cwd = dc.o->cwd;
  if (!cwd) {
    cwd_buf = getcwd(NULL, 0);
    if (!cwd_buf) {
      char eb[128];
      st = mcp__error_set(err, MCP_EIO, "cannot find the working directory: "
                          "%s", errtext(errno, eb, sizeof(eb)));
      goto out;
    }
    cwd = cwd_buf;
  }
  if (*cwd != '/') {
    st = mcp__error_set(err, MCP_EINVAL, "working directory \"%s\" is not an "
                        "absolute path", cwd);
    goto out;
  }
  if ((r = list_dirs(&dc, cwd)) != CHECK_OK) goto out;
  if ((r = find_home(&dc)) != CHECK_OK) goto out;
  if (dc.home && !(dc.user_home = mcp__strdup(dc.home))) {
    r = CHECK_OOM;
    goto out;
  }
  /* The trust store is the user's even under no_user: that option skips
   * server definitions, not the user's approvals. */
  if (!dc.o->no_project && (r = find_store_dir(&dc, &dc.store_dir)) != CHECK_OK)
    goto out;

  /* 1. Explicit files. */
  for (size_t i = 0; i < dc.o->nfiles; i++) {
    if (!dc.o->files[i]) continue;
    r = load_and_merge(&dc, dc.o->files[i], MCP_CONFIG_NATIVE, false, false,
                       NULL, 0);
    if (r != CHECK_OK) goto out;
  }
  /* 2. Project. */
  if (!dc.o->no_project) {
    if ((r = find_upward(&dc, ".mcp.json", &path)) != CHECK_OK) goto out;
    if (path && (r = load_project(&dc, path, MCP_CONFIG_NATIVE, NULL)))
      goto out;
    mcp__free(path);
    path = NULL;
  }
  /* 3. User. */
  const char *xdg = dc.o->xdg_config_home;
  if (dc.o->no_user) {
    /* Nothing under home: the user file and user-level imports go. */
    mcp__free(dc.home);
    dc.home = NULL;
    xdg = NULL;
  }
  if (!dc.o->no_user && (!xdg || !*xdg))
    xdg = dc.lookup(dc.user, "XDG_CONFIG_HOME");
  if (xdg && *xdg == '/')
    path = mcp__asprintf("%s/mcpconn/mcp.json", xdg);
  else if (dc.home)
    path = mcp__asprintf("%s/.config/mcpconn/mcp.json", dc.home);
  if ((xdg && *xdg == '/') || dc.home) {
    if (!path) {
      r = CHECK_OOM;
      goto out;
    }
    if ((r = load_and_merge(&dc, path, MCP_CONFIG_NATIVE, true, false, NULL,
                            0)))
      goto out;
  }
  mcp__free(path);
  path = NULL;
  /* 4. Other clients' files. */
  for (size_t i = 0; i < sizeof(imports) / sizeof(imports[0]); i++) {
    const import_file *im = &imports[i];
    if (!(dc.o->imports & im->bit)) continue;
    if (im->project) {
      if (dc.o->no_project) continue;
      if ((r = find_upward(&dc, im->rel, &path)) != CHECK_OK) goto out;
      if (path && (r = load_project(&dc, path, im->dialect, im->rel)))
        goto out;
      mcp__free(path);
      path = NULL;
      continue;
    } else if (dc.home) {
      path = mcp__asprintf("%s/%s", dc.home, im->rel);
      if (!path) {
        r = CHECK_OOM;
        goto out;
      }
    }
    if (path && (r = load_and_merge(&dc, path, im->dialect, true,
                                    im->claude_projects, NULL, 0)))
      goto out;
    mcp__free(path);
    path = NULL;
  }
  st = finish(&dc, out);
out:
  if (r == CHECK_OOM) st = mcp__error_set(err, MCP_ENOMEM, "out of memory");
  else if (st == MCP_ENOMEM)
    mcp__error_set(err, MCP_ENOMEM, "out of memory");
  mcp__free(path);
  free(cwd_buf); /* from getcwd() */
  discovery_clear(&dc);
  return st;
}

/* ---- secrets ------------------------------------------------------------ */

/*
 * The process-wide cache of secret command outputs.  Entries live until
 * mcp__config_secrets_clear().  Every field is guarded by secret_lock;
 * waiters for a running command sleep on secret_cond.
 */
typedef struct secret_entry {
  struct secret_entry *next;
  char *cmd;
  char *value;    /* the trimmed output, once a run succeeded */
  bool running;   /* a thread is running the command now */
  uint64_t runs;  /* completed runs */
  bool last_ok;   /* outcome of the latest completed run */
} secret_entry;

static pthread_mutex_t secret_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t secret_cond = PTHREAD_COND_INITIALIZER;
static secret_entry *secret_head;

void mcp__config_secrets_clear(void) {
  pthread_mutex_lock(&secret_lock);
  secret_entry *e = secret_head;
  secret_head = NULL;
  pthread_mutex_unlock(&secret_lock);
  while (e) {
    secret_entry *next = e->next;
    mcp__free(e->cmd);
    mcp__free(e->value);
    mcp__free(e);
    e = next;
  }
}

/* Waits for |pid| until |deadline| (mcp__now_ms); true when reaped. */
static bool reap_until(pid_t pid, int64_t deadline, int *ws) {
  for (;;) {
    pid_t r = waitpid(pid, ws, WNOHANG);
    if (r == pid) return true;
    if (r < 0 && errno == ECHILD) {
      *ws = 0; /* reaped elsewhere (SIGCHLD ignored by the host) */
      return true;
    }
    if (r < 0 && errno != EINTR) return false;
    int64_t left = deadline - mcp__now_ms();
    if (left <= 0) return false;
    poll(NULL, 0, left < 5 ? (int)left : 5);
  }
}

static void reap_blocking(pid_t pid) {
  int ws;
  while (waitpid(pid, &ws, 0) < 0 && errno == EINTR) {
  }
}

/*
 * Runs `/bin/sh -c cmd`.  Returns 0 with *out (trimmed, non-empty), 1 with
 * a reason in |why|, or -1 when out of memory.
 */
static int run_secret(const char *cmd, int64_t timeout_ms, char **out,
                      char *why, size_t whylen) {
  char *argv[] = {(char *)"/bin/sh", (char *)"-c", (char *)cmd, NULL};
  int p[2] = {-1, -1}, devnull = -1, rc = 1, ws = 0;
  char eb[128];
  mcp_buf b;
  mcp__buf_init(&b);
  *out = NULL;

  devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (devnull < 0 || mcp__spawn_fd_high(&devnull) < 0 || pipe2(p, O_CLOEXEC) < 0 ||
      mcp__spawn_fd_high(&p[0]) < 0 || mcp__spawn_fd_high(&p[1]) < 0) {
    snprintf(why, whylen, "cannot set up: %s", errtext(errno, eb, sizeof(eb)));
    goto out;
  }
  /* Its own process group, so a timeout kills what it started too; the
   * host's environment (secrets commands are the user's own, like a
   * shell's); /dev/null as stdin and stderr. */
  mcp_spawn_opts so = {.argv = (const char *const *)argv,
                       .envp = (const char *const *)environ,
                       .fd = {devnull, p[1], devnull}};
  pid_t pid = -1;
  mcp_spawn_stage stage;
  int se = mcp__spawn(&so, &pid, &stage);
  if (se) {
    if (se == ENOMEM) {
      rc = -1;
      goto out;
    }
    snprintf(why, whylen, "cannot run /bin/sh: %s", errtext(se, eb, sizeof(eb)));
    goto out;
  }
  close(p[1]);
  p[1] = -1;

  int64_t deadline = mcp__now_ms() + timeout_ms;
  bool timed_out = false, too_big = false;
  for (;;) {
    int64_t left = deadline - mcp__now_ms();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    struct pollfd pfd = {p[0], POLLIN, 0};
    int n = poll(&pfd, 1, left > 1000 ? 1000 : (int)left);
    if (n < 0 && errno != EINTR) break;
    if (n <= 0) continue;
    if (mcp__buf_reserve(&b, 4096)) {
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      reap_blocking(pid);
      rc = -1;
      goto out;
    }
    ssize_t got = read(p[0], b.data + b.len, 4096);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (got <= 0) break;
    b.len += (size_t)got;
    b.data[b.len] = '\0';
    if (b.len > SECRET_MAX_OUTPUT) {
      too_big = true;
      break;
    }
  }
  if (!timed_out && !too_big && reap_until(pid, deadline, &ws)) {
    if (WIFSIGNALED(ws)) {
      snprintf(why, whylen, "killed by signal %d", WTERMSIG(ws));
      goto out;
    }
    if (WIFEXITED(ws) && WEXITSTATUS(ws) != 0) {
      snprintf(why, whylen, "exited with status %d", WEXITSTATUS(ws));
      goto out;
    }
  } else {
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    reap_blocking(pid);
    if (too_big)
      snprintf(why, whylen, "printed more than %d bytes", SECRET_MAX_OUTPUT);
    else
      snprintf(why, whylen, "timed out after %lld ms", (long long)timeout_ms);
    goto out;
  }
  if (b.len && memchr(b.data, '\0', b.len)) {
    snprintf(why, whylen, "printed a NUL byte");
    goto out;
  }
  size_t s = 0, e = b.len;
  while (s < e && isspace((unsigned char)b.data[s])) s++;
  while (e > s && isspace((unsigned char)b.data[e - 1])) e--;
  if (s == e) {
    snprintf(why, whylen, "printed nothing");
    goto out;
  }
  *out = mcp__strndup(b.data + s, e - s);
  rc = *out ? 0 : -1;
out:
  if (p[0] >= 0) close(p[0]);
  if (p[1] >= 0) close(p[1]);
  if (devnull >= 0) close(devnull);
  /* The buffer held the secret: wipe it before freeing. */
  if (b.data) memset(b.data, 0, b.cap);
  mcp__buf_free(&b);
  return rc;
}

/*
 * Resolves one `!command` through the cache.  Returns 0 with *out, 1 with a
 * reason in |why|, or -1 when out of memory.
 */
static int resolve_one(const char *cmd, int64_t timeout_ms, char **out,
                       char *why, size_t whylen) {
  *out = NULL;
  pthread_mutex_lock(&secret_lock);
  secret_entry *e = secret_head;
  while (e && strcmp(e->cmd, cmd) != 0) e = e->next;
  if (!e) {
    e = mcp__calloc(1, sizeof(*e));
    if (e) e->cmd = mcp__strdup(cmd);
    if (!e || !e->cmd) {
      mcp__free(e);
      pthread_mutex_unlock(&secret_lock);
      return -1;
    }
    e->next = secret_head;
    secret_head = e;
  }
  while (!e->value && e->running) {
    /* Share the outcome of the identical command already running. */
    uint64_t runs = e->runs;
    while (e->running && e->runs == runs)
      pthread_cond_wait(&secret_cond, &secret_lock);
    if (!e->value && !e->last_ok) {
      pthread_mutex_unlock(&secret_lock);
      snprintf(why, whylen, "failed in a concurrent run");
      return 1;
    }
  }
  if (e->value) {
    *out = mcp__strdup(e->value);
    pthread_mutex_unlock(&secret_lock);
    return *out ? 0 : -1;
  }
  e->running = true;
  pthread_mutex_unlock(&secret_lock);

  char *val = NULL;
  int rc = run_secret(cmd, timeout_ms, &val, why, whylen);

  pthread_mutex_lock(&secret_lock);
  e->running = false;
  e->runs++;
  e->last_ok = rc == 0;
  if (rc == 0) {
    e->value = val;
    *out = mcp__strdup(val);
    if (!*out) rc = -1;
  }
  pthread_cond_broadcast(&secret_cond);
  pthread_mutex_unlock(&secret_lock);
  return rc;
}

/*
 * Resolves the `!` values of one map in place, dropping failed entries.
 * Returns CHECK_OK or CHECK_OOM.
 */
static int resolve_map(const mcp_server_def *def, const char *field,
                       const char *label, mcp_config_kv *kv, size_t *n,
                       bool headers, int64_t timeout_ms, diag_list *dl) {
  size_t w = 0;
  for (size_t i = 0; i < *n; i++) {
    char why[200];
    char *val = NULL;
    bool drop = false;
    if (kv[i].value[0] == '!') {
      int rc = resolve_one(kv[i].value + 1, timeout_ms, &val, why,
                           sizeof(why));
      if (rc < 0) return CHECK_OOM;
      if (rc == 0 && headers && strpbrk(val, "\r\n")) {
        snprintf(why, sizeof(why), "printed CR or LF");
        memset(val, 0, strlen(val));
        mcp__free(val);
        val = NULL;
        rc = 1;
      }
      if (rc == 0) {
        memset(kv[i].value, 0, strlen(kv[i].value));
        mcp__free(kv[i].value);
        kv[i].value = val;
      } else {
        char *q = quote(kv[i].name);
        if (!q) return CHECK_OOM;
        diag_add(dl, MCP_LOG_WARN, def->source, def->name, field,
                 "%s %s: secret command %s; entry dropped", label, q, why);
        mcp__free(q);
        if (dl->oom) return CHECK_OOM;
        drop = true;
      }
    }
    if (drop) {
      mcp__free(kv[i].name);
      mcp__free(kv[i].value);
    } else {
      kv[w++] = kv[i];
    }
  }
  *n = w;
  return CHECK_OK;
}

mcp_status mcp__config_resolve_secrets(const mcp_server_def *def,
                                       const mcp_secret_opts *o,
                                       mcp_server_def **out,
                                       mcp_config_diag **diags,
                                       size_t *ndiags) {
  if (!out) return MCP_EINVAL;
  *out = NULL;
  if (!def || !diags || !ndiags) return MCP_EINVAL;
  int64_t timeout_ms = o && o->timeout_ms > 0 ? o->timeout_ms
                                              : MCP_CONFIG_SECRET_TIMEOUT_MS;
  diag_list dl;
  memset(&dl, 0, sizeof(dl));
  mcp_server_def *d = mcp__server_def_dup(def);
  if (!d) return MCP_ENOMEM;
  if (!def->foreign &&
      (resolve_map(def, "env", "env", d->env, &d->nenv, false, timeout_ms,
                   &dl) ||
       resolve_map(def, "headers", "header", d->headers, &d->nheaders, true,
                   timeout_ms, &dl)))
    goto oom;
  if (dl.n) {
    mcp_config_diag *v = mcp__reallocarray(*diags, *ndiags + dl.n,
                                           sizeof(*v));
    if (!v) goto oom;
    memcpy(v + *ndiags, dl.v, dl.n * sizeof(*v));
    *diags = v;
    *ndiags += dl.n;
    mcp__free(dl.v);
  }
  *out = d;
  return MCP_OK;
oom:
  mcp__config_diags_free(dl.v, dl.n);
  mcp__server_def_free(d);
  return MCP_ENOMEM;
}

/* ---- client options ----------------------------------------------------- */

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
static mcp_status oauth_options(const mcp_config_oauth *a, mcp_client_options *co,
                                mcp_error *err) {
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

mcp_status mcp__config_client_options(const mcp_server_def *def,
                                      mcp_client_options **out,
                                      mcp_error *err) {
  mcp_status st = MCP_OK;
  const char *what = "";
  if (!out) return mcp__error_set(err, MCP_EINVAL, "no output options");
  *out = NULL;
  if (!def || !def->name)
    return mcp__error_set(err, MCP_EINVAL, "no server definition");
  bool stdio = def->type == MCP_SERVER_STDIO;
  if (stdio ? !def->argv || !def->argc : !def->url)
    return mcp__error_set(err, MCP_EINVAL, "server \"%s\" has no %s",
                          def->name, stdio ? "command" : "url");
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
                                     def->type == MCP_SERVER_SSE
                                         ? MCP_HTTP_TRANSPORT_LEGACY_SSE
                                         : MCP_HTTP_TRANSPORT_AUTO);
    /* mcp_config_http2 has mcp_http_version's values. */
    mcp_client_options_set_http_version(co, (mcp_http_version)def->http2);
    for (size_t i = 0; st == MCP_OK && i < def->nheaders; i++) {
      what = def->headers[i].name;
      st = mcp_client_options_add_header(co, def->headers[i].name,
                                         def->headers[i].value);
    }
    if (st == MCP_OK && (def->ca_file || def->ca_dir)) {
      what = "caFile";
      st = mcp_client_options_set_ca(co, def->ca_file, def->ca_dir);
    }
    if (st == MCP_OK && (def->client_cert || def->client_key)) {
      what = "clientCert";
      st = mcp_client_options_set_client_cert(co, def->client_cert,
                                              def->client_key);
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
                          def->source ? def->source : "<config>", def->name,
                          what, mcp_strerror(st));
  }
  if (def->timeout_ms >= 0)
    mcp_client_options_set_timeout_ms(co, def->timeout_ms);
  *out = co;
  return MCP_OK;
}
