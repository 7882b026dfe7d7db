/* SPDX-License-Identifier: MIT */
/*
 * demo_fast.c: the demo server's fast path, tools/call of echo answered
 * without json-c (tests/check_demo_fast compares it with the general path).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "demo_server.h"

/*
 * The benchmarks call echo in a loop, and json-c 0.16 spends about twice as
 * long switching locales on every parse as parsing.  fast_echo() answers a
 * plain tools/call of echo from a scan of the line instead: it validates
 * the whole line as strict JSON (RFC 8259) and picks out the few members it
 * needs.  Whatever it is not sure of (a member it uses that is repeated or
 * has an escaped name, an escape in the text, a \u escape or a number with
 * an exponent or more than 18 digits anywhere, nesting past
 * FAST_MAX_DEPTH, an id that is not a plain integer, any other method or
 * tool) it leaves to the general path, which gives the same answer.
 */
#define FAST_MAX_DEPTH 16

struct fscan {
  const char *p, *end;
  int depth;
};

struct fspan {
  const char *p; /* the value's text, or NULL when absent */
  size_t n;
};

static void f_ws(struct fscan *f) {
  while (f->p < f->end && (*f->p == ' ' || *f->p == '\t' || *f->p == '\n' || *f->p == '\r')) f->p++;
}

/* A string; *esc tells whether it had escapes. */
static bool f_string(struct fscan *f, bool *esc) {
  if (f->p >= f->end || *f->p != '"') return false;
  f->p++;
  *esc = false;
  while (f->p < f->end) {
    unsigned char c = (unsigned char)*f->p++;
    if (c == '"') return true;
    if (c < 0x20) return false;
    if (c == '\\') {
      if (f->p >= f->end) return false;
      c = (unsigned char)*f->p++;
      if (!(c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' || c == 'r' ||
            c == 't'))
        return false; /* \u included: left to json-c */
      *esc = true;
    }
  }
  return false;
}

static bool f_digits(struct fscan *f) {
  const char *start = f->p;
  while (f->p < f->end && *f->p >= '0' && *f->p <= '9') f->p++;
  return f->p > start;
}

/* -?(0|[1-9][0-9]*)(.[0-9]+)?, at most 18 digits before the point. */
static bool f_number(struct fscan *f) {
  if (f->p < f->end && *f->p == '-') f->p++;
  const char *start = f->p;
  if (!f_digits(f) || f->p - start > 18 || (*start == '0' && f->p - start > 1)) return false;
  if (f->p < f->end && *f->p == '.') {
    f->p++;
    if (!f_digits(f)) return false;
  }
  return f->p >= f->end || (*f->p != 'e' && *f->p != 'E');
}

static bool f_literal(struct fscan *f, const char *lit) {
  size_t n = strlen(lit);
  if ((size_t)(f->end - f->p) < n || memcmp(f->p, lit, n) != 0) return false;
  f->p += n;
  return true;
}

static bool f_object(struct fscan *f, const char *const *keys, struct fspan *vals, int nkeys);

static bool f_value(struct fscan *f) {
  f_ws(f);
  if (f->p >= f->end) return false;
  bool esc;
  switch (*f->p) {
  case '{': return f_object(f, NULL, NULL, 0);
  case '"': return f_string(f, &esc);
  case 't': return f_literal(f, "true");
  case 'f': return f_literal(f, "false");
  case 'n': return f_literal(f, "null");
  case '[':
    if (++f->depth > FAST_MAX_DEPTH) return false;
    f->p++;
    f_ws(f);
    if (f->p < f->end && *f->p == ']') {
      f->p++;
      f->depth--;
      return true;
    }
    for (;;) {
      if (!f_value(f)) return false;
      f_ws(f);
      if (f->p >= f->end) return false;
      if (*f->p == ']') {
        f->p++;
        f->depth--;
        return true;
      }
      if (*f->p++ != ',') return false;
    }
  default: return f_number(f);
  }
}

/* An object; the values of members named in |keys| go to |vals|. */
static bool f_object(struct fscan *f, const char *const *keys, struct fspan *vals, int nkeys) {
  if (f->p >= f->end || *f->p != '{' || ++f->depth > FAST_MAX_DEPTH) return false;
  f->p++;
  f_ws(f);
  if (f->p < f->end && *f->p == '}') {
    f->p++;
    f->depth--;
    return true;
  }
  for (;;) {
    f_ws(f);
    const char *key = f->p + 1;
    bool esc;
    if (!f_string(f, &esc)) return false;
    size_t klen = (size_t)(f->p - 1 - key);
    f_ws(f);
    if (f->p >= f->end || *f->p++ != ':') return false;
    f_ws(f);
    const char *val = f->p;
    if (!f_value(f)) return false;
    if (esc && nkeys) return false; /* it might spell one of ours */
    for (int i = 0; i < nkeys; i++) {
      if (strlen(keys[i]) == klen && memcmp(keys[i], key, klen) == 0) {
        if (vals[i].p) return false; /* repeated: json-c keeps the last */
        vals[i].p = val;
        vals[i].n = (size_t)(f->p - val);
      }
    }
    f_ws(f);
    if (f->p >= f->end) return false;
    if (*f->p == '}') {
      f->p++;
      f->depth--;
      return true;
    }
    if (*f->p++ != ',') return false;
  }
}

/* The members |keys| of the object |v| (already validated). */
static bool f_members(struct fspan v, const char *const *keys, struct fspan *vals, int nkeys) {
  struct fscan f = {v.p, v.p + v.n, 0};
  return v.p && *v.p == '{' && f_object(&f, keys, vals, nkeys);
}

/* |v| is the string |lit| written without escapes. */
static bool f_is(struct fspan v, const char *lit) {
  size_t n = strlen(lit);
  return v.p && v.n == n + 2 && v.p[0] == '"' && memcmp(v.p + 1, lit, n) == 0;
}

/* |v| is an integer that json-c prints back as the same text. */
static bool f_plain_int(struct fspan v) {
  if (!v.p) return false;
  const char *p = v.p, *end = v.p + v.n;
  if (*p == '-') p++;
  if (p == end || (*p == '0' && (end - p > 1 || p != v.p))) return false; /* 01, -0 */
  for (; p < end; p++)
    if (*p < '0' || *p > '9') return false;
  return true;
}

bool fast_echo(struct server *s, const char *line, size_t len) {
  static const char *const top_keys[] = {"jsonrpc", "id", "method", "params"};
  static const char *const params_keys[] = {"name", "arguments", "_meta"};
  static const char *const args_keys[] = {"text"};
  static const char *const meta_keys[] = {META_VERSION, META_CAPS};
  struct fspan top[4] = {{0}}, params[3] = {{0}}, args[1] = {{0}}, meta[2] = {{0}};
  struct fscan f = {line, line + len, 0};
  f_ws(&f);
  if (!f_object(&f, top_keys, top, 4)) return false;
  f_ws(&f);
  if (f.p != f.end || !f_is(top[0], "2.0") || !f_plain_int(top[1]) || !f_is(top[2], "tools/call") ||
      !f_members(top[3], params_keys, params, 3) || !f_is(params[0], "echo") ||
      !f_members(params[1], args_keys, args, 1))
    return false;
  struct fspan text = args[0];
  if (!text.p || text.p[0] != '"' || memchr(text.p, '\\', text.n)) return false;
  /* The era, as dispatch() decides it; a modern request with anything but
   * a well-formed _meta at our version is left to the general path. */
  bool modern = s->proto == PROTO_MODERN;
  if (s->proto != PROTO_LEGACY && params[2].p) {
    if (!f_members(params[2], meta_keys, meta, 2)) return false;
    if (meta[0].p) modern = true;
  }
  if (modern && (!f_is(meta[0], MODERN_PROTOCOL) || !meta[1].p || meta[1].p[0] != '{'))
    return false;
  s->modern_reply = modern;
  struct tool_result r = {0};
  set_text(&r, text.p + 1, text.n - 2, false);
  out_append_str(s, "{\"jsonrpc\":\"2.0\",\"id\":");
  out_append(s, top[1].p, top[1].n);
  tool_result_tail(s, &r);
  return true;
}
