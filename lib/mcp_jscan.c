/*
 * mcp_jscan.c: the tree-less JSON scanner (see mcp_jscan.h).
 *
 * Recursive descent over the input, writing the compact form as it goes.
 * The output rules mirror json-c's printer with JSON_C_TO_STRING_PLAIN |
 * JSON_C_TO_STRING_NOSLASHESCAPE: no white space; in strings `"` `\` and
 * \b \f \n \r \t as two-character escapes, other control characters as
 * \u00xx (lower-case hex), everything else as raw bytes; integers as their
 * int64 value; other numbers as written.
 */
#include "config.h"

#include <string.h>

#include "mcp_int.h"
#include "mcp_jscan.h"

typedef struct scan {
  const unsigned char *p, *end;
  char *o;
} scan;

static bool value(scan *s, int depth);

static void skip_ws(scan *s) {
  while (s->p < s->end && (*s->p == ' ' || *s->p == '\n' || *s->p == '\r' || *s->p == '\t'))
    s->p++;
}

static const char hexd[] = "0123456789abcdef";

/* One character (< 0x80) as json-c prints it. */
static char *put_ascii(char *o, unsigned c) {
  switch (c) {
  case '"': *o++ = '\\'; *o++ = '"'; return o;
  case '\\': *o++ = '\\'; *o++ = '\\'; return o;
  case '\b': *o++ = '\\'; *o++ = 'b'; return o;
  case '\f': *o++ = '\\'; *o++ = 'f'; return o;
  case '\n': *o++ = '\\'; *o++ = 'n'; return o;
  case '\r': *o++ = '\\'; *o++ = 'r'; return o;
  case '\t': *o++ = '\\'; *o++ = 't'; return o;
  default:
    if (c < 0x20) {
      memcpy(o, "\\u00", 4);
      o[4] = hexd[c >> 4];
      o[5] = hexd[c & 15];
      return o + 6;
    }
    *o++ = (char)c;
    return o;
  }
}

/* Length of the valid UTF-8 sequence (2-4 bytes) at p, or 0. */
static size_t utf8_len(const unsigned char *p, const unsigned char *end) {
  unsigned c = p[0];
  size_t n;
  unsigned min;
  if (c >= 0xc2 && c <= 0xdf) n = 2, min = 0x80;
  else if (c >= 0xe0 && c <= 0xef) n = 3, min = 0x800;
  else if (c >= 0xf0 && c <= 0xf4) n = 4, min = 0x10000;
  else return 0;
  if ((size_t)(end - p) < n) return 0;
  unsigned v = c & (0x7f >> n);
  for (size_t i = 1; i < n; i++) {
    if ((p[i] & 0xc0) != 0x80) return 0;
    v = v << 6 | (p[i] & 0x3f);
  }
  if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return 0;
  return n;
}

static int hexval(unsigned c) {
  if (c >= '0' && c <= '9') return (int)(c - '0');
  if (c >= 'a' && c <= 'f') return (int)(c - 'a' + 10);
  if (c >= 'A' && c <= 'F') return (int)(c - 'A' + 10);
  return -1;
}

/* A string at s->p (which is '"').  |key|: json-c keeps keys as C strings,
 * so an escaped NUL in a key is refused. */
static bool string(scan *s, bool key) {
  const unsigned char *p = s->p + 1, *end = s->end;
  char *o = s->o;
  *o++ = '"';
  while (p < end) {
    unsigned c = *p;
    if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
      *o++ = (char)c;
      p++;
      continue;
    }
    if (c == '"') {
      *o++ = '"';
      s->p = p + 1;
      s->o = o;
      return true;
    }
    if (c == '\\') {
      if (end - p < 2) return false;
      unsigned e = p[1];
      switch (e) {
      case '"': case '\\': case 'b': case 'f': case 'n': case 'r': case 't':
        *o++ = '\\';
        *o++ = (char)e;
        p += 2;
        continue;
      case '/':
        *o++ = '/';
        p += 2;
        continue;
      case 'u': {
        if (end - p < 6) return false;
        int v = 0;
        for (int i = 2; i < 6; i++) {
          int h = hexval(p[i]);
          if (h < 0) return false;
          v = v << 4 | h;
        }
        /* json-c turns the rest into UTF-8 (surrogates and all): leave
         * those to it. */
        if (v >= 0x80 || (key && v == 0)) return false;
        o = put_ascii(o, (unsigned)v);
        p += 6;
        continue;
      }
      default:
        return false;
      }
    }
    if (c < 0x20) return false;
    size_t n = utf8_len(p, end);
    if (!n) return false;
    memcpy(o, p, n);
    o += n;
    p += n;
  }
  return false;
}

static bool is_digit(const unsigned char *p, const unsigned char *end) {
  return p < end && *p >= '0' && *p <= '9';
}

static bool number(scan *s) {
  const unsigned char *p = s->p, *end = s->end, *start = p;
  bool neg = false, dbl = false;
  if (*p == '-') {
    neg = true;
    p++;
  }
  const unsigned char *digits = p;
  if (p < end && *p == '0') {
    p++;
  } else if (p < end && *p >= '1' && *p <= '9') {
    while (is_digit(p, end)) p++;
  } else {
    return false;
  }
  size_t ndig = (size_t)(p - digits);
  if (p < end && *p == '.') {
    p++;
    if (!is_digit(p, end)) return false;
    while (is_digit(p, end)) p++;
    dbl = true;
  }
  if (p < end && (*p == 'e' || *p == 'E')) {
    p++;
    if (p < end && (*p == '+' || *p == '-')) p++;
    const unsigned char *ed = p;
    if (!is_digit(p, end)) return false;
    while (is_digit(p, end)) p++;
    if (p - ed > 2) return false; /* out of range or close: json-c's call */
    dbl = true;
  }
  if (!dbl && (ndig > 18 || (neg && *digits == '0'))) return false;
  size_t n = (size_t)(p - start);
  memcpy(s->o, start, n);
  s->o += n;
  s->p = p;
  return true;
}

static bool literal(scan *s, const char *word, size_t n) {
  if ((size_t)(s->end - s->p) < n || memcmp(s->p, word, n) != 0) return false;
  memcpy(s->o, word, n);
  s->o += n;
  s->p += n;
  return true;
}

static bool object(scan *s, int depth) {
  const char *kp[MCP_JSCAN_MAX_KEYS];
  size_t kl[MCP_JSCAN_MAX_KEYS];
  int nkeys = 0;
  s->p++;
  *s->o++ = '{';
  skip_ws(s);
  if (s->p < s->end && *s->p == '}') {
    s->p++;
    *s->o++ = '}';
    return true;
  }
  for (;;) {
    skip_ws(s);
    if (s->p >= s->end || *s->p != '"' || nkeys == MCP_JSCAN_MAX_KEYS) return false;
    const char *k = s->o;
    if (!string(s, true)) return false;
    size_t klen = (size_t)(s->o - k);
    /* json-c keeps the last of repeated keys: leave those to it. */
    for (int i = 0; i < nkeys; i++)
      if (kl[i] == klen && memcmp(kp[i], k, klen) == 0) return false;
    kp[nkeys] = k;
    kl[nkeys++] = klen;
    skip_ws(s);
    if (s->p >= s->end || *s->p != ':') return false;
    s->p++;
    *s->o++ = ':';
    if (!value(s, depth)) return false;
    skip_ws(s);
    if (s->p >= s->end) return false;
    if (*s->p == ',') {
      s->p++;
      *s->o++ = ',';
      continue;
    }
    if (*s->p != '}') return false;
    s->p++;
    *s->o++ = '}';
    return true;
  }
}

static bool array(scan *s, int depth) {
  s->p++;
  *s->o++ = '[';
  skip_ws(s);
  if (s->p < s->end && *s->p == ']') {
    s->p++;
    *s->o++ = ']';
    return true;
  }
  for (;;) {
    if (!value(s, depth)) return false;
    skip_ws(s);
    if (s->p >= s->end) return false;
    if (*s->p == ',') {
      s->p++;
      *s->o++ = ',';
      continue;
    }
    if (*s->p != ']') return false;
    s->p++;
    *s->o++ = ']';
    return true;
  }
}

static bool value(scan *s, int depth) {
  skip_ws(s);
  if (s->p >= s->end) return false;
  switch (*s->p) {
  case '{': return depth < MCP_JSCAN_MAX_DEPTH && object(s, depth + 1);
  case '[': return depth < MCP_JSCAN_MAX_DEPTH && array(s, depth + 1);
  case '"': return string(s, false);
  case 't': return literal(s, "true", 4);
  case 'f': return literal(s, "false", 5);
  case 'n': return literal(s, "null", 4);
  default: return number(s);
  }
}

bool mcp__jscan_value(const char *data, size_t len, bool need_object, char *out,
                      size_t *out_len) {
  scan s = {(const unsigned char *)data, (const unsigned char *)data + len, out};
  skip_ws(&s);
  if (need_object && (s.p >= s.end || *s.p != '{')) return false;
  if (!value(&s, 0)) return false;
  skip_ws(&s);
  if (s.p != s.end) return false;
  *out_len = (size_t)(s.o - out);
  return true;
}

/* Compares the raw key at s->p with "name" (quotes included in |q|). */
static bool raw_key(scan *s, const char *q, size_t n) {
  if ((size_t)(s->end - s->p) < n || memcmp(s->p, q, n) != 0) return false;
  s->p += n;
  return true;
}

bool mcp__jscan_response(const char *data, size_t len, int64_t *id, char **result,
                         size_t *result_len) {
  scan s = {(const unsigned char *)data, (const unsigned char *)data + len, NULL};
  skip_ws(&s);
  if (s.p >= s.end || *s.p != '{') return false;
  s.p++;
  char *buf = mcp__malloc(len + 1);
  if (!buf) return false;
  s.o = buf;
  bool have_rpc = false, have_id = false, have_result = false;
  int64_t v = 0;
  for (;;) {
    skip_ws(&s);
    if (raw_key(&s, "\"jsonrpc\"", 9)) {
      if (have_rpc) goto no;
      skip_ws(&s);
      if (s.p >= s.end || *s.p++ != ':') goto no;
      skip_ws(&s);
      if (!raw_key(&s, "\"2.0\"", 5)) goto no;
      have_rpc = true;
    } else if (raw_key(&s, "\"id\"", 4)) {
      if (have_id) goto no;
      skip_ws(&s);
      if (s.p >= s.end || *s.p++ != ':') goto no;
      skip_ws(&s);
      bool neg = s.p < s.end && *s.p == '-';
      if (neg) s.p++;
      const unsigned char *d = s.p;
      v = 0;
      /* At most 18 digits are read (no overflow); a 19th is refused below. */
      while (is_digit(s.p, s.end) && s.p - d < 18) v = v * 10 + (*s.p++ - '0');
      size_t nd = (size_t)(s.p - d);
      /* Plain integers only ("01", "-0", fractions, 19+ digits: general path). */
      if (nd == 0 || nd > 18 || (nd > 1 && *d == '0') || (neg && v == 0)) goto no;
      if (s.p < s.end && (*s.p == '.' || *s.p == 'e' || *s.p == 'E' || is_digit(s.p, s.end)))
        goto no;
      if (neg) v = -v;
      have_id = true;
    } else if (raw_key(&s, "\"result\"", 8)) {
      if (have_result) goto no;
      skip_ws(&s);
      if (s.p >= s.end || *s.p++ != ':') goto no;
      if (!value(&s, 1)) goto no;
      have_result = true;
    } else {
      goto no;
    }
    skip_ws(&s);
    if (s.p >= s.end) goto no;
    if (*s.p == ',') {
      s.p++;
      continue;
    }
    if (*s.p++ != '}') goto no;
    break;
  }
  skip_ws(&s);
  if (s.p != s.end || !have_rpc || !have_id || !have_result) goto no;
  *s.o = '\0';
  *id = v;
  *result = buf;
  *result_len = (size_t)(s.o - buf);
  return true;
no:
  mcp__free(buf);
  return false;
}

bool mcp__jscan_member(const char *obj, size_t len, const char *key, const char **val,
                       size_t *val_len) {
  /* The text is compact and valid: walk the top-level members, skipping
   * strings and nested values by depth. */
  size_t klen = strlen(key);
  const char *p = obj, *end = obj + len;
  if (p >= end || *p != '{') return false;
  p++;
  while (p < end && *p == '"') {
    const char *k = p + 1;
    p++;
    while (p < end && *p != '"') p += *p == '\\' ? 2 : 1;
    if (p >= end) return false;
    bool match = (size_t)(p - k) == klen && memcmp(k, key, klen) == 0;
    p++; /* closing quote */
    if (p >= end || *p != ':') return false;
    p++;
    const char *v = p;
    int depth = 0;
    while (p < end) {
      char c = *p;
      if (c == '"') {
        p++;
        while (p < end && *p != '"') p += *p == '\\' ? 2 : 1;
        p++;
        continue;
      }
      if (c == '{' || c == '[') depth++;
      else if (c == '}' || c == ']') {
        if (depth == 0) break;
        depth--;
      } else if (c == ',' && depth == 0) {
        break;
      }
      p++;
    }
    if (p > end) return false;
    if (match) {
      *val = v;
      *val_len = (size_t)(p - v);
      return true;
    }
    if (p < end && *p == ',') p++;
  }
  return false;
}

size_t mcp__jscan_put_string(char *out, const char *s, size_t n) {
  char *o = out;
  *o++ = '"';
  for (size_t i = 0; i < n; i++) {
    unsigned c = (unsigned char)s[i];
    if (c >= 0x80) *o++ = (char)c;
    else o = put_ascii(o, c);
  }
  *o++ = '"';
  return (size_t)(o - out);
}
