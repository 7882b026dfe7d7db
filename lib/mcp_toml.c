/* SPDX-License-Identifier: MIT */
/*
 * mcp_toml.c: the subset of TOML that Codex writes in config.toml, read into
 * a json-c tree (mcp_toml.h says what is read and what is refused).
 *
 * Hand-written because Debian 12 packages no C TOML library and a config
 * importer needs only this subset; what it does not understand it refuses
 * with the line and the reason, rather than guessing.  Pure: no I/O, no
 * threads, no globals; fuzzed by fuzz/fuzz_toml.c.  Knows nothing of MCP:
 * mcp_config.c maps the tree to server definitions.
 */
#include "config.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "mcp_int.h"
#include "mcp_toml.h"

#define TOML_MAX_DEPTH 64
#define TOML_MAX_KEYS 16

typedef struct tp {
  const char *s;
  size_t n, i;
  int line;
  char *why;
  size_t whylen;
  bool failed;
} tp;

static void fail(tp *p, const char *fmt, ...) MCP_PRINTF(2, 3);
static void fail(tp *p, const char *fmt, ...) {
  if (p->failed) return;
  p->failed = true;
  if (!p->why || !p->whylen) return;
  char text[200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof(text), fmt, ap);
  va_end(ap);
  snprintf(p->why, p->whylen, "line %d: %s", p->line, text);
}

static void oom(tp *p) {
  if (p->failed) return;
  p->failed = true;
  if (p->why && p->whylen) snprintf(p->why, p->whylen, "out of memory");
}

static int peek(const tp *p) { return p->i < p->n ? (unsigned char)p->s[p->i] : -1; }

static void skip_ws(tp *p) {
  while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t')) p->i++;
}

static void skip_comment(tp *p) {
  if (peek(p) != '#') return;
  while (p->i < p->n && p->s[p->i] != '\n') p->i++;
}

/* Spaces, newlines and comments (inside arrays). */
static void skip_all(tp *p) {
  for (;;) {
    skip_ws(p);
    skip_comment(p);
    if (peek(p) == '\n') {
      p->line++;
      p->i++;
    } else if (peek(p) == '\r' && p->i + 1 < p->n && p->s[p->i + 1] == '\n') {
      p->i++;
    } else {
      return;
    }
  }
}

/* The end of a line: spaces, a comment, then a newline or the end. */
static void end_of_line(tp *p) {
  skip_ws(p);
  skip_comment(p);
  if (peek(p) == '\r' && p->i + 1 < p->n && p->s[p->i + 1] == '\n') p->i++;
  if (peek(p) == '\n') {
    p->i++;
    p->line++;
  } else if (peek(p) != -1) {
    fail(p, "unexpected %s after a value", peek(p) < 0x20 ? "control byte" : "text");
  }
}

static bool is_bare(int c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

/* Appends code point |cp| as UTF-8. */
static bool put_utf8(mcp_buf *b, uint32_t cp) {
  char u[4];
  size_t n;
  if (cp < 0x80) {
    u[0] = (char)cp;
    n = 1;
  } else if (cp < 0x800) {
    u[0] = (char)(0xc0 | (cp >> 6));
    u[1] = (char)(0x80 | (cp & 0x3f));
    n = 2;
  } else if (cp < 0x10000) {
    u[0] = (char)(0xe0 | (cp >> 12));
    u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
    u[2] = (char)(0x80 | (cp & 0x3f));
    n = 3;
  } else {
    u[0] = (char)(0xf0 | (cp >> 18));
    u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    u[3] = (char)(0x80 | (cp & 0x3f));
    n = 4;
  }
  return mcp__buf_append(b, u, n) == MCP_OK;
}

/* A basic ("...") or literal ('...') one-line string; new, or NULL. */
static char *parse_string(tp *p) {
  char q = p->s[p->i];
  if (p->i + 2 < p->n && p->s[p->i + 1] == q && p->s[p->i + 2] == q) {
    fail(p, "multi-line strings are not read");
    return NULL;
  }
  p->i++;
  mcp_buf b;
  mcp__buf_init(&b);
  for (;;) {
    int c = peek(p);
    if (c == -1 || c == '\n' || c == '\r') {
      fail(p, "unterminated string");
      goto bad;
    }
    if (c == 0 || (c < 0x20 && c != '\t') || c == 0x7f) {
      fail(p, "control byte in a string");
      goto bad;
    }
    p->i++;
    if (c == q) break;
    if (c == '\\' && q == '"') {
      int e = peek(p);
      p->i++;
      const char *simple = "b\bt\tn\nf\fr\r\"\"\\\\";
      const char *hit = e > 0 ? strchr(simple, e) : NULL;
      if (hit && ((hit - simple) % 2) == 0) {
        if (mcp__buf_append(&b, hit + 1, 1)) goto nomem;
        continue;
      }
      if (e == 'u' || e == 'U') {
        size_t digits = e == 'u' ? 4 : 8;
        uint32_t cp = 0;
        for (size_t k = 0; k < digits; k++) {
          int h = peek(p);
          p->i++;
          int v = h >= '0' && h <= '9'   ? h - '0'
                  : h >= 'a' && h <= 'f' ? h - 'a' + 10
                  : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                         : -1;
          if (v < 0) {
            fail(p, "bad \\%c escape", e);
            goto bad;
          }
          cp = cp * 16 + (uint32_t)v;
        }
        if (cp == 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
          fail(p, "escape is not a Unicode scalar value (or is NUL)");
          goto bad;
        }
        if (!put_utf8(&b, cp)) goto nomem;
        continue;
      }
      fail(p, "unknown escape in a string");
      goto bad;
    }
    char ch = (char)c;
    if (mcp__buf_append(&b, &ch, 1)) goto nomem;
  }
  if (mcp__buf_append(&b, "", 1)) goto nomem;
  return b.data;
nomem:
  oom(p);
bad:
  mcp__buf_free(&b);
  return NULL;
}

/* A dotted key; its parts into |keys| (new strings), their count. */
static size_t parse_key(tp *p, char **keys) {
  size_t n = 0;
  for (;;) {
    skip_ws(p);
    int c = peek(p);
    char *k = NULL;
    if (c == '"' || c == '\'') {
      k = parse_string(p);
      if (!k) goto bad;
    } else if (c >= 0 && is_bare(c)) {
      size_t at = p->i;
      while (p->i < p->n && is_bare((unsigned char)p->s[p->i])) p->i++;
      k = mcp__strndup(p->s + at, p->i - at);
      if (!k) {
        oom(p);
        goto bad;
      }
    } else {
      fail(p, "expected a key");
      goto bad;
    }
    if (n == TOML_MAX_KEYS) {
      mcp__free(k);
      fail(p, "key has too many parts");
      goto bad;
    }
    keys[n++] = k;
    skip_ws(p);
    if (peek(p) != '.') return n;
    p->i++;
  }
bad:
  for (size_t i = 0; i < n; i++) mcp__free(keys[i]);
  return 0;
}

static void free_keys(char **keys, size_t n) {
  for (size_t i = 0; i < n; i++) mcp__free(keys[i]);
}

/*
 * Walks |keys| (all but the last when |leaf|) from |t|, making tables as
 * needed.  Returns the table reached (borrowed) or NULL after fail().
 */
static json_object *descend(tp *p, json_object *t, char **keys, size_t n) {
  for (size_t i = 0; i < n; i++) {
    json_object *next = NULL;
    if (json_object_object_get_ex(t, keys[i], &next)) {
      if (!json_object_is_type(next, json_type_object)) {
        fail(p, "key \"%.60s\" is already a value", keys[i]);
        return NULL;
      }
    } else {
      next = json_object_new_object();
      if (!next || json_object_object_add(t, keys[i], next)) {
        json_object_put(next);
        oom(p);
        return NULL;
      }
    }
    t = next;
  }
  return t;
}

static json_object *parse_value(tp *p, int depth);

/* key = value into table |t|. */
static bool parse_keyval(tp *p, json_object *t, int depth) {
  char *keys[TOML_MAX_KEYS];
  size_t n = parse_key(p, keys);
  if (!n) return false;
  bool ok = false;
  skip_ws(p);
  if (peek(p) != '=') {
    fail(p, "expected \"=\" after a key");
    goto out;
  }
  p->i++;
  skip_ws(p);
  json_object *at = descend(p, t, keys, n - 1);
  if (!at) goto out;
  if (json_object_object_get_ex(at, keys[n - 1], NULL)) {
    fail(p, "key \"%.60s\" is defined twice", keys[n - 1]);
    goto out;
  }
  json_object *v = parse_value(p, depth + 1);
  if (!v) goto out;
  if (json_object_object_add(at, keys[n - 1], v)) {
    json_object_put(v);
    oom(p);
    goto out;
  }
  ok = true;
out:
  free_keys(keys, n);
  return ok;
}

static json_object *parse_integer(tp *p) {
  size_t at = p->i;
  bool neg = false;
  if (peek(p) == '+' || peek(p) == '-') {
    neg = peek(p) == '-';
    p->i++;
  }
  uint64_t v = 0;
  size_t digits = 0;
  bool under = false;
  while (p->i < p->n) {
    char c = p->s[p->i];
    if (c >= '0' && c <= '9') {
      if (v > (UINT64_MAX - 9) / 10) {
        fail(p, "integer out of range");
        return NULL;
      }
      v = v * 10 + (uint64_t)(c - '0');
      digits++;
      under = false;
    } else if (c == '_' && digits && !under) {
      under = true;
    } else {
      break;
    }
    p->i++;
  }
  int c = peek(p);
  if (!digits || under) {
    fail(p, "not a value this reader understands");
    return NULL;
  }
  if (c == '.' || c == 'e' || c == 'E' || c == ':' || c == '-' || c == 'x' || c == 'o' ||
      c == 'b' || c == 'T') {
    fail(p, "floats, dates and non-decimal integers are not read");
    return NULL;
  }
  if (digits > 1 && p->s[at + (p->s[at] == '+' || p->s[at] == '-')] == '0') {
    fail(p, "leading zeros are not allowed");
    return NULL;
  }
  if (v > (uint64_t)INT64_MAX + (neg ? 1 : 0)) {
    fail(p, "integer out of range");
    return NULL;
  }
  int64_t iv = neg ? (v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v) : (int64_t)v;
  json_object *o = json_object_new_int64(iv);
  if (!o) oom(p);
  return o;
}

static json_object *parse_array(tp *p, int depth) {
  json_object *a = json_object_new_array();
  if (!a) {
    oom(p);
    return NULL;
  }
  p->i++; /* [ */
  for (;;) {
    skip_all(p);
    if (peek(p) == ']') {
      p->i++;
      return a;
    }
    json_object *v = parse_value(p, depth + 1);
    if (!v) break;
    if (json_object_array_add(a, v)) {
      json_object_put(v);
      oom(p);
      break;
    }
    skip_all(p);
    if (peek(p) == ',') {
      p->i++;
    } else if (peek(p) != ']') {
      fail(p, "expected \",\" or \"]\" in an array");
      break;
    }
  }
  json_object_put(a);
  return NULL;
}

static json_object *parse_inline_table(tp *p, int depth) {
  json_object *t = json_object_new_object();
  if (!t) {
    oom(p);
    return NULL;
  }
  p->i++; /* { */
  skip_ws(p);
  if (peek(p) == '}') {
    p->i++;
    return t;
  }
  for (;;) {
    if (!parse_keyval(p, t, depth)) break;
    skip_ws(p);
    if (peek(p) == ',') {
      p->i++;
      skip_ws(p);
      if (peek(p) == '}') {
        p->i++;
        return t;
      }
      continue;
    }
    if (peek(p) == '}') {
      p->i++;
      return t;
    }
    fail(p, "expected \",\" or \"}\" in an inline table");
    break;
  }
  json_object_put(t);
  return NULL;
}

static json_object *parse_value(tp *p, int depth) {
  if (depth > TOML_MAX_DEPTH) {
    fail(p, "nested deeper than %d", TOML_MAX_DEPTH);
    return NULL;
  }
  int c = peek(p);
  if (c == '"' || c == '\'') {
    char *s = parse_string(p);
    if (!s) return NULL;
    json_object *o = json_object_new_string(s);
    mcp__free(s);
    if (!o) oom(p);
    return o;
  }
  if (c == '[') return parse_array(p, depth);
  if (c == '{') return parse_inline_table(p, depth);
  if (p->n - p->i >= 4 && memcmp(p->s + p->i, "true", 4) == 0 &&
      (p->i + 4 == p->n || !is_bare((unsigned char)p->s[p->i + 4]))) {
    p->i += 4;
    json_object *o = json_object_new_boolean(1);
    if (!o) oom(p);
    return o;
  }
  if (p->n - p->i >= 5 && memcmp(p->s + p->i, "false", 5) == 0 &&
      (p->i + 5 == p->n || !is_bare((unsigned char)p->s[p->i + 5]))) {
    p->i += 5;
    json_object *o = json_object_new_boolean(0);
    if (!o) oom(p);
    return o;
  }
  if (c == '+' || c == '-' || (c >= '0' && c <= '9')) return parse_integer(p);
  if (c == 'i' || c == 'n') {
    fail(p, "floats are not read");
    return NULL;
  }
  fail(p, "not a value this reader understands");
  return NULL;
}

/* A [table] header; sets *cur. */
static bool parse_header(tp *p, json_object *root, json_object **cur) {
  p->i++; /* [ */
  if (peek(p) == '[') {
    fail(p, "arrays of tables ([[...]]) are not read");
    return false;
  }
  char *keys[TOML_MAX_KEYS];
  size_t n = parse_key(p, keys);
  if (!n) return false;
  skip_ws(p);
  bool ok = peek(p) == ']';
  if (!ok) fail(p, "expected \"]\" after a table name");
  else p->i++;
  json_object *t = ok ? descend(p, root, keys, n) : NULL;
  free_keys(keys, n);
  if (!t) return false;
  *cur = t;
  return true;
}

json_object *mcp__toml_parse(const char *text, size_t len, char *why, size_t whylen) {
  tp p;
  memset(&p, 0, sizeof(p));
  p.s = text;
  p.n = len;
  p.line = 1;
  p.why = why;
  p.whylen = whylen;
  if (why && whylen) why[0] = '\0';
  if (!text) {
    fail(&p, "no text");
    return NULL;
  }
  if (memchr(text, '\0', len)) {
    p.line = 0;
    fail(&p, "NUL byte in the file");
    return NULL;
  }
  /* A UTF-8 byte order mark is allowed. */
  if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0) p.i = 3;
  json_object *root = json_object_new_object();
  if (!root) {
    oom(&p);
    return NULL;
  }
  json_object *cur = root;
  while (!p.failed) {
    skip_all(&p);
    if (peek(&p) == -1) break;
    if (peek(&p) == '[') {
      if (!parse_header(&p, root, &cur)) break;
    } else if (!parse_keyval(&p, cur, 0)) {
      break;
    }
    end_of_line(&p);
  }
  if (p.failed) {
    json_object_put(root);
    return NULL;
  }
  return root;
}
