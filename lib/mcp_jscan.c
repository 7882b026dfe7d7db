/* SPDX-License-Identifier: MIT */
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

static inline void skip_ws(scan *s) {
  /* Compact JSON has none: one test for the usual case. */
  while (s->p < s->end && *s->p <= ' ' &&
         (*s->p == ' ' || *s->p == '\n' || *s->p == '\r' || *s->p == '\t'))
    s->p++;
}

static const char hexd[] = "0123456789abcdef";

/* One character (< 0x80) as json-c prints it. */
static char *put_ascii(char *o, unsigned c) {
  switch (c) {
  case '"':
    *o++ = '\\';
    *o++ = '"';
    return o;
  case '\\':
    *o++ = '\\';
    *o++ = '\\';
    return o;
  case '\b':
    *o++ = '\\';
    *o++ = 'b';
    return o;
  case '\f':
    *o++ = '\\';
    *o++ = 'f';
    return o;
  case '\n':
    *o++ = '\\';
    *o++ = 'n';
    return o;
  case '\r':
    *o++ = '\\';
    *o++ = 'r';
    return o;
  case '\t':
    *o++ = '\\';
    *o++ = 't';
    return o;
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

/* True when one of the eight bytes of |v| needs a look in a string: below
 * 0x20, 0x80 and up, '"' or '\\'.  (Exact for the word, not per byte.) */
static inline bool word_special(uint64_t v) {
  const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
  uint64_t q = v ^ (ones * '"'), b = v ^ (ones * '\\');
  return ((v | ((v - ones * 0x20) & ~v) | ((q - ones) & ~q) | ((b - ones) & ~b)) & high) != 0;
}

/* 1 for the bytes a string holds as they are: printable ASCII but '"' and '\\'. */
static const unsigned char plain_tab[256] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x00 */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x10 */
    1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x20: '"' */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x30 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x40 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, /* 0x50: '\\' */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x60 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x70 */
                                                    /* 0x80 - 0xff: 0 */
};

static inline bool plain_byte(unsigned c) { return plain_tab[c & 0xff]; }

/* Copies the bytes at *pp that need no look (printable ASCII but '"' and
 * '\\') to *op, eight at a time while there are eight; advances both. */
static inline void copy_plain(const unsigned char **pp, const unsigned char *end, char **op) {
  const unsigned char *p = *pp;
  char *o = *op;
  while (end - p >= 8) {
    uint64_t v;
    memcpy(&v, p, 8);
    if (word_special(v)) break;
    memcpy(o, &v, 8);
    p += 8;
    o += 8;
  }
  while (p < end && plain_byte(*p)) *o++ = (char)*p++;
  *pp = p;
  *op = o;
}

/* A string at s->p (which is '"').  |key|: json-c keeps keys as C strings,
 * so an escaped NUL in a key is refused. */
static bool string(scan *s, bool key) {
  const unsigned char *p = s->p + 1, *end = s->end;
  char *o = s->o;
  *o++ = '"';
  while (p < end) {
    copy_plain(&p, end, &o);
    if (p >= end) break;
    unsigned c = *p;
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
      case '"':
      case '\\':
      case 'b':
      case 'f':
      case 'n':
      case 'r':
      case 't':
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
      default: return false;
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

bool mcp__jscan_value(const char *data, size_t len, bool need_object, char *out, size_t *out_len) {
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

/* The closing quote of the string whose first byte is |p| (the byte after
 * its opening quote), or |end|.  memchr finds each candidate quote; one
 * preceded by an odd run of backslashes is escaped.  The run never reaches
 * before |p|: the byte before |p| is a quote (the opening one, or an
 * escaped one this skipped). */
static const char *string_end(const char *p, const char *end) {
  for (;;) {
    const char *q = p < end ? memchr(p, '"', (size_t)(end - p)) : NULL;
    if (!q) return end;
    const char *b = q;
    while (b > p && b[-1] == '\\') b--;
    if (((q - b) & 1) == 0) return q;
    p = q + 1;
  }
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
    p = string_end(k, end);
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
        p = string_end(p + 1, end) + 1;
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

/* ---- the text of a CallToolResult ------------------------------------------ */

bool mcp__jscan_utf8_valid(const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s, *end = p + n;
  while (p < end) {
    if (*p < 0x80) {
      p++;
      continue;
    }
    size_t k = utf8_len(p, end);
    if (!k) return false;
    p += k;
  }
  return true;
}

/* The four hex digits at p, or -1. */
static int hex4(const unsigned char *p) {
  int v = 0;
  for (int i = 0; i < 4; i++) {
    int h = hexval(p[i]);
    if (h < 0) return -1;
    v = v << 4 | h;
  }
  return v;
}

/* Code point |v| (not a surrogate, at most 0x10ffff) as UTF-8. */
static char *put_utf8(char *o, unsigned v) {
  if (v < 0x80) {
    *o++ = (char)v;
  } else if (v < 0x800) {
    *o++ = (char)(0xc0 | v >> 6);
    *o++ = (char)(0x80 | (v & 0x3f));
  } else if (v < 0x10000) {
    *o++ = (char)(0xe0 | v >> 12);
    *o++ = (char)(0x80 | (v >> 6 & 0x3f));
    *o++ = (char)(0x80 | (v & 0x3f));
  } else {
    *o++ = (char)(0xf0 | v >> 18);
    *o++ = (char)(0x80 | (v >> 12 & 0x3f));
    *o++ = (char)(0x80 | (v >> 6 & 0x3f));
    *o++ = (char)(0x80 | (v & 0x3f));
  }
  return o;
}

/* The string at s->p (which is '"') decoded to s->o: never longer than its
 * JSON form.  Refuses unpaired surrogate escapes (json-c's path turns them
 * into U+FFFD) and everything invalid. */
static bool string_decode(scan *s) {
  const unsigned char *p = s->p + 1, *end = s->end;
  char *o = s->o;
  while (p < end) {
    copy_plain(&p, end, &o);
    if (p >= end) break;
    unsigned c = *p;
    if (c == '"') {
      s->p = p + 1;
      s->o = o;
      return true;
    }
    if (c == '\\') {
      if (end - p < 2) return false;
      char d;
      switch (p[1]) {
      case '"': d = '"'; break;
      case '\\': d = '\\'; break;
      case '/': d = '/'; break;
      case 'b': d = '\b'; break;
      case 'f': d = '\f'; break;
      case 'n': d = '\n'; break;
      case 'r': d = '\r'; break;
      case 't': d = '\t'; break;
      case 'u': {
        if (end - p < 6) return false;
        int v = hex4(p + 2);
        if (v < 0 || (v >= 0xdc00 && v <= 0xdfff)) return false;
        p += 6;
        if (v >= 0xd800 && v <= 0xdbff) {
          if (end - p < 6 || p[0] != '\\' || p[1] != 'u') return false;
          int lo = hex4(p + 2);
          if (lo < 0xdc00 || lo > 0xdfff) return false;
          p += 6;
          v = 0x10000 + ((v - 0xd800) << 10) + (lo - 0xdc00);
        }
        o = put_utf8(o, (unsigned)v);
        continue;
      }
      default: return false;
      }
      *o++ = d;
      p += 2;
      continue;
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

/* ---- strict validation -------------------------------------------------------- */

typedef struct vscan {
  const unsigned char *p, *end;
  int max_depth;
} vscan;

static bool v_value(vscan *s, int depth);

static inline void v_ws(vscan *s) {
  while (s->p < s->end && *s->p <= ' ' &&
         (*s->p == ' ' || *s->p == '\n' || *s->p == '\r' || *s->p == '\t'))
    s->p++;
}

static bool v_string(vscan *s) {
  const unsigned char *p = s->p + 1, *end = s->end;
  while (p < end) {
    while (end - p >= 8) {
      uint64_t v;
      memcpy(&v, p, 8);
      if (word_special(v)) break;
      p += 8;
    }
    if (p >= end) break;
    unsigned c = *p;
    if (c == '"') {
      s->p = p + 1;
      return true;
    }
    if (c == '\\') {
      if (end - p < 2) return false;
      switch (p[1]) {
      case '"':
      case '\\':
      case '/':
      case 'b':
      case 'f':
      case 'n':
      case 'r':
      case 't': p += 2; continue;
      case 'u':
        if (end - p < 6 || hex4(p + 2) < 0) return false;
        p += 6;
        continue;
      default: return false;
      }
    }
    if (c < 0x20) return false;
    if (c < 0x80) {
      p++;
      continue;
    }
    size_t n = utf8_len(p, end);
    if (!n) return false;
    p += n;
  }
  return false;
}

static bool v_number(vscan *s) {
  const unsigned char *p = s->p, *end = s->end;
  if (p < end && *p == '-') p++;
  if (p < end && *p == '0') p++;
  else if (p < end && *p >= '1' && *p <= '9')
    while (is_digit(p, end)) p++;
  else return false;
  if (p < end && *p == '.') {
    p++;
    if (!is_digit(p, end)) return false;
    while (is_digit(p, end)) p++;
  }
  if (p < end && (*p == 'e' || *p == 'E')) {
    p++;
    if (p < end && (*p == '+' || *p == '-')) p++;
    if (!is_digit(p, end)) return false;
    while (is_digit(p, end)) p++;
  }
  s->p = p;
  return true;
}

static bool v_literal(vscan *s, const char *word, size_t n) {
  if ((size_t)(s->end - s->p) < n || memcmp(s->p, word, n) != 0) return false;
  s->p += n;
  return true;
}

/* After a member or element: true with *more on ',', without on |close|. */
static bool v_next(vscan *s, unsigned char close, bool *more) {
  v_ws(s);
  if (s->p >= s->end) return false;
  *more = *s->p == ',';
  if (!*more && *s->p != close) return false;
  s->p++;
  return true;
}

static bool v_value(vscan *s, int depth) {
  v_ws(s);
  if (s->p >= s->end) return false;
  bool more;
  switch (*s->p) {
  case '{':
    if (depth >= s->max_depth) return false;
    s->p++;
    v_ws(s);
    if (s->p < s->end && *s->p == '}') {
      s->p++;
      return true;
    }
    do {
      v_ws(s);
      if (s->p >= s->end || *s->p != '"' || !v_string(s)) return false;
      v_ws(s);
      if (s->p >= s->end || *s->p++ != ':') return false;
      if (!v_value(s, depth + 1) || !v_next(s, '}', &more)) return false;
    } while (more);
    return true;
  case '[':
    if (depth >= s->max_depth) return false;
    s->p++;
    v_ws(s);
    if (s->p < s->end && *s->p == ']') {
      s->p++;
      return true;
    }
    do {
      if (!v_value(s, depth + 1) || !v_next(s, ']', &more)) return false;
    } while (more);
    return true;
  case '"': return v_string(s);
  case 't': return v_literal(s, "true", 4);
  case 'f': return v_literal(s, "false", 5);
  case 'n': return v_literal(s, "null", 4);
  default: return v_number(s);
  }
}

bool mcp__jscan_valid(const char *data, size_t len) {
  vscan s = {(const unsigned char *)data, (const unsigned char *)data + len,
             MCP_JSCAN_VALID_MAX_DEPTH};
  if (!v_value(&s, 0)) return false;
  v_ws(&s);
  return s.p == s.end;
}

/* Checks the value at s->p without writing it (the tool-text fast path
 * needs nothing of it).  Nested at most MCP_JSCAN_MAX_DEPTH in all, well
 * within json-c's limit. */
static bool skip_value(scan *s, int depth) {
  vscan v = {s->p, s->end, MCP_JSCAN_MAX_DEPTH};
  if (!v_value(&v, depth)) return false;
  s->p = v.p;
  return true;
}

/* A member's key and colon; the key (decoded at |w| when it has escapes or
 * non-ASCII, else in place) is returned in *k, *kn.  A key with a NUL is
 * refused: json-c cuts keys there.  Leaves s->p on the value. */
static bool member_key(scan *s, char *w, const char **k, size_t *kn) {
  skip_ws(s);
  if (s->p >= s->end || *s->p != '"') return false;
  /* Usually plain ASCII: then the key is its bytes. */
  const unsigned char *q = s->p + 1;
  while (q < s->end && plain_byte(*q)) q++;
  if (q < s->end && *q == '"') {
    *k = (const char *)s->p + 1;
    *kn = (size_t)(q - s->p - 1);
    s->p = q + 1;
  } else {
    s->o = w;
    if (!string_decode(s)) return false;
    *k = w;
    *kn = (size_t)(s->o - w);
    if (memchr(w, '\0', *kn)) return false;
  }
  skip_ws(s);
  if (s->p >= s->end || *s->p != ':') return false;
  s->p++;
  skip_ws(s);
  return s->p < s->end;
}

static bool is_key(const char *k, size_t kn, const char *q, size_t qn) {
  return kn == qn && memcmp(k, q, qn) == 0;
}

/* After a member or element: true with *more on ',', without on |close|. */
static bool next_or_close(scan *s, unsigned char close, bool *more) {
  skip_ws(s);
  if (s->p >= s->end) return false;
  if (*s->p == ',') {
    s->p++;
    *more = true;
    return true;
  }
  if (*s->p != close) return false;
  s->p++;
  *more = false;
  return true;
}

/*
 * One element of "content".  The text so far ends at *t; *count items are
 * in it.  A "text" string is decoded at *t (after a '\n' when *count) before
 * the item's "type" may be known, and kept (*t moved past it) when the item
 * turns out to be a text item.  Keys and "type" are decoded past what may
 * be kept, to be compared; other values are only checked.  Nothing written
 * ever passes the input read so far (nothing decoded is longer than its
 * JSON, and a '\n' goes where at least a comma was), so |out| needs len + 1
 * bytes.
 */
static bool content_item(scan *s, char **t, size_t *count) {
  if (*s->p != '{') return skip_value(s, 2);
  s->p++;
  skip_ws(s);
  if (s->p < s->end && *s->p == '}') {
    s->p++;
    return true;
  }
  bool have_type = false, is_text = false, have_text = false, text_ok = false;
  char *w = *t; /* past the kept text and this item's decoded text */
  for (;;) {
    const char *k;
    size_t kn;
    if (!member_key(s, w, &k, &kn)) return false;
    if (is_key(k, kn, "type", 4)) {
      if (have_type) return false;
      have_type = true;
      if (*s->p == '"') {
        s->o = w;
        if (!string_decode(s)) return false;
        is_text = s->o - w == 4 && memcmp(w, "text", 4) == 0;
      } else if (!skip_value(s, 3)) {
        return false;
      }
    } else if (is_key(k, kn, "text", 4)) {
      if (have_text) return false;
      have_text = true;
      if (*s->p == '"') {
        s->o = *t;
        if (*count) *s->o++ = '\n';
        if (!string_decode(s)) return false;
        w = s->o;
        text_ok = true;
      } else if (!skip_value(s, 3)) {
        return false;
      }
    } else if (!skip_value(s, 3)) {
      return false;
    }
    bool more;
    if (!next_or_close(s, '}', &more)) return false;
    if (!more) break;
  }
  if (is_text) {
    if (!text_ok) return false; /* an error: json-c's path words it */
    *t = w;
    (*count)++;
  }
  return true;
}

bool mcp__jscan_tool_text(const char *data, size_t len, char *out, size_t *out_len) {
  scan s = {(const unsigned char *)data, (const unsigned char *)data + len, out};
  char *t = out;
  size_t count = 0;
  bool have_content = false;
  skip_ws(&s);
  if (s.p >= s.end || *s.p != '{') return false;
  s.p++;
  for (;;) {
    const char *k;
    size_t kn;
    if (!member_key(&s, t, &k, &kn)) return false; /* also "{}": no content */
    if (is_key(k, kn, "content", 7)) {
      if (have_content || *s.p != '[') return false;
      have_content = true;
      s.p++;
      skip_ws(&s);
      if (s.p < s.end && *s.p == ']') {
        s.p++;
      } else {
        for (;;) {
          skip_ws(&s);
          if (s.p >= s.end || !content_item(&s, &t, &count)) return false;
          bool more;
          if (!next_or_close(&s, ']', &more)) return false;
          if (!more) break;
        }
      }
    } else if (!skip_value(&s, 1)) {
      return false;
    }
    bool more;
    if (!next_or_close(&s, '}', &more)) return false;
    if (!more) break;
  }
  skip_ws(&s);
  if (s.p != s.end || !have_content) return false;
  *t = '\0';
  *out_len = (size_t)(t - out);
  return true;
}
