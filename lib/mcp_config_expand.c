/* SPDX-License-Identifier: MIT */
/*
 * mcp_config_expand.c: variable references in config values, in the syntax
 * of the client that wrote the file: ${NAME}, ${NAME:-default} and "$${"
 * (mcpconn, Claude Code), ${env:NAME}, ${input:id}, ${userHome},
 * ${workspaceFolder} (VS Code, Cursor), $NAME (Gemini CLI), {env:NAME}
 * (OpenCode).  A reference that stays unresolved makes the value unusable,
 * with a warning naming the file, the server, the field and the reason.
 *
 * Pure apart from the lookups: values come from the caller's callbacks
 * (getenv(3) by default; ${input:id} only from the host's callback).  No
 * threads, no I/O; fuzzed through fuzz/fuzz_config.c.  `!command` secrets,
 * which run a process, are mcp_secret.c's, not this file's.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp_config.h"
#include "mcp_config_int.h"

/* Deepest nesting of ${A:-${B:-...}} defaults that is expanded. */
#define EXPAND_MAX_DEPTH 8

const char *mcp__config_getenv_default(void *user, const char *name) {
  (void)user;
  return getenv(name);
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
int mcp__config_expand_value(mcp_parse_ctx *c, const char *server, const char *field,
                             const char *key, const char *in, char **out) {
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
  mcp__config_diag_add(c->diags, MCP_LOG_WARN, c->source, server, field,
                       "field \"%s\"%s%s%s: %.*s cannot be resolved: %s; server not used", field,
                       key ? " (" : "", key ? key : "", key ? ")" : "",
                       (int)(x.badlen > 120 ? 120 : x.badlen), x.bad, why);
  return c->diags->oom ? CHECK_OOM : CHECK_BAD;
}
