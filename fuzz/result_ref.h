/* SPDX-License-Identifier: MIT */
/*
 * result_ref.h: the reference for mcp_tool_result_text(), shared by
 * tests/check_result.c and fuzz/fuzz_result.c.  Written apart from the
 * library: RFC 8259 validity by an iterative checker (the library's is
 * recursive), UTF-8 by decoding, json-c (a fresh strict tokener) for the
 * tree, then the contract read off the tree.  Aborts when out of memory.
 */
#ifndef RESULT_REF_H
#define RESULT_REF_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "mcpconn.h"

static bool ref_utf8(const unsigned char *p, size_t n) {
  size_t i = 0;
  while (i < n) {
    unsigned c = p[i], need, v;
    if (c < 0x80) {
      i++;
      continue;
    }
    if ((c & 0xe0) == 0xc0) need = 1, v = c & 0x1f;
    else if ((c & 0xf0) == 0xe0) need = 2, v = c & 0x0f;
    else if ((c & 0xf8) == 0xf0) need = 3, v = c & 0x07;
    else return false;
    if (n - i <= need) return false;
    for (unsigned k = 1; k <= need; k++) {
      if ((p[i + k] & 0xc0) != 0x80) return false;
      v = v << 6 | (p[i + k] & 0x3f);
    }
    static const unsigned min[] = {0, 0x80, 0x800, 0x10000};
    if (v < min[need] || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return false;
    i += need + 1;
  }
  return true;
}

static bool ref_is_ws(unsigned char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
static bool ref_is_digit(const unsigned char *p, size_t n, size_t i) {
  return i < n && p[i] >= '0' && p[i] <= '9';
}

/* The string starting at p[*i] == '"'; bytes >= 0x80 are ref_utf8's. */
static bool ref_string(const unsigned char *p, size_t n, size_t *i) {
  size_t k = *i + 1;
  for (;;) {
    if (k >= n || p[k] < 0x20) return false;
    if (p[k] == '"') break;
    if (p[k] != '\\') {
      k++;
      continue;
    }
    if (k + 1 >= n) return false;
    if (p[k + 1] == 'u') {
      if (n - k < 6) return false;
      for (int h = 2; h < 6; h++)
        if (!strchr("0123456789abcdefABCDEF", p[k + h]) || !p[k + h]) return false;
      k += 6;
    } else if (p[k + 1] && strchr("\"\\/bfnrt", p[k + 1])) {
      k += 2;
    } else {
      return false;
    }
  }
  *i = k + 1;
  return true;
}

/* RFC 8259: one value, white space around it. */
static bool ref_valid(const unsigned char *p, size_t n) {
  char stack[1024];
  int sp = 0;
  size_t i = 0;
value:
  while (i < n && ref_is_ws(p[i])) i++;
  if (i >= n) return false;
  if (p[i] == '{' || p[i] == '[') {
    if (sp == (int)sizeof(stack)) return false;
    stack[sp++] = (char)p[i++];
    while (i < n && ref_is_ws(p[i])) i++;
    if (i < n && p[i] == (stack[sp - 1] == '{' ? '}' : ']')) {
      i++;
      sp--;
      goto after;
    }
    if (stack[sp - 1] == '{') goto key;
    goto value;
  }
  if (p[i] == '"') {
    if (!ref_string(p, n, &i)) return false;
    goto after;
  }
  {
    static const char *lits[] = {"true", "false", "null"};
    for (int l = 0; l < 3; l++) {
      size_t ln = strlen(lits[l]);
      if (n - i >= ln && memcmp(p + i, lits[l], ln) == 0) {
        i += ln;
        goto after;
      }
    }
  }
  if (p[i] == '-') i++;
  if (!ref_is_digit(p, n, i)) return false;
  if (p[i] == '0') i++;
  else
    while (ref_is_digit(p, n, i)) i++;
  if (i < n && p[i] == '.') {
    i++;
    if (!ref_is_digit(p, n, i)) return false;
    while (ref_is_digit(p, n, i)) i++;
  }
  if (i < n && (p[i] == 'e' || p[i] == 'E')) {
    i++;
    if (i < n && (p[i] == '+' || p[i] == '-')) i++;
    if (!ref_is_digit(p, n, i)) return false;
    while (ref_is_digit(p, n, i)) i++;
  }
after:
  while (i < n && ref_is_ws(p[i])) i++;
  if (sp == 0) return i == n;
  if (i >= n) return false;
  if (p[i] == ',') {
    i++;
    if (stack[sp - 1] == '{') goto key;
    goto value;
  }
  if (p[i] != (stack[sp - 1] == '{' ? '}' : ']')) return false;
  i++;
  sp--;
  goto after;
key:
  while (i < n && ref_is_ws(p[i])) i++;
  if (i >= n || p[i] != '"' || !ref_string(p, n, &i)) return false;
  while (i < n && ref_is_ws(p[i])) i++;
  if (i >= n || p[i] != ':') return false;
  i++;
  goto value;
}

/* The contract: MCP_OK with the text (malloc'd, NUL-terminated) in *out and
 * its length in *out_len, or MCP_EPROTO. */
static mcp_status ref_text(const char *in, size_t len, char **out, size_t *out_len) {
  *out = NULL;
  *out_len = 0;
  const unsigned char *p = (const unsigned char *)in;
  if (!ref_utf8(p, len) || !ref_valid(p, len) || len > 0x7fffffff) return MCP_EPROTO;
  json_tokener *tok = json_tokener_new_ex(128); /* MCP_JSON_MAX_DEPTH */
  if (!tok) abort();
  json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
  json_object *root = json_tokener_parse_ex(tok, in, (int)len);
  enum json_tokener_error e = json_tokener_get_error(tok);
  json_tokener_free(tok);
  mcp_status st = MCP_EPROTO;
  json_object *content = NULL;
  if (e != json_tokener_success || !json_object_is_type(root, json_type_object) ||
      !json_object_object_get_ex(root, "content", &content) ||
      !json_object_is_type(content, json_type_array))
    goto out;
  size_t cap = len + 2, n = 0, count = 0;
  char *t = malloc(cap);
  if (!t) abort();
  for (size_t i = 0; i < json_object_array_length(content); i++) {
    json_object *item = json_object_array_get_idx(content, i), *type, *text;
    if (!json_object_is_type(item, json_type_object) ||
        !json_object_object_get_ex(item, "type", &type) ||
        !json_object_is_type(type, json_type_string) || json_object_get_string_len(type) != 4 ||
        memcmp(json_object_get_string(type), "text", 4) != 0)
      continue;
    if (!json_object_object_get_ex(item, "text", &text) ||
        !json_object_is_type(text, json_type_string)) {
      free(t);
      goto out;
    }
    size_t tn = (size_t)json_object_get_string_len(text);
    if (n + tn + 2 > cap) abort(); /* never longer than the JSON */
    if (count++) t[n++] = '\n';
    memcpy(t + n, json_object_get_string(text), tn);
    n += tn;
  }
  t[n] = '\0';
  if (!ref_utf8((const unsigned char *)t, n)) abort(); /* json-c made bad UTF-8 */
  *out = t;
  *out_len = n;
  st = MCP_OK;
out:
  json_object_put(root);
  return st;
}

#endif /* RESULT_REF_H */
