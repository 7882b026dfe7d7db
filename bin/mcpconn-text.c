/* SPDX-License-Identifier: MIT */
/*
 * mcpconn-text.c: server-chosen text made safe for a terminal, for the CLI
 * (bin/mcpconn.c) and `mcpconn bench` (bin/mcpconn-bench.c); see
 * mcpconn-text.h.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "mcpconn-text.h"

/* Decodes the strict UTF-8 sequence at |s| (|n| bytes left) into *cp;
 * returns its length, or 0 when it is not one (overlong, surrogate,
 * beyond U+10FFFF, cut short). */
size_t text_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp) {
  unsigned char c = s[0];
  size_t len;
  uint32_t v, min;
  if (c < 0x80) {
    *cp = c;
    return 1;
  } else if ((c & 0xe0) == 0xc0) {
    len = 2, v = c & 0x1f, min = 0x80;
  } else if ((c & 0xf0) == 0xe0) {
    len = 3, v = c & 0x0f, min = 0x800;
  } else if ((c & 0xf8) == 0xf0) {
    len = 4, v = c & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (n < len) return 0;
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xc0) != 0x80) return 0;
    v = (v << 6) | (s[i] & 0x3f);
  }
  if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return 0;
  *cp = v;
  return len;
}

/* True for code points a terminal must not get raw: controls, and the
 * format characters (Unicode category Cf) that are invisible or reorder
 * text, plus the line and paragraph separators. */
bool text_unsafe_cp(uint32_t c) {
  return c < 0x20 || (c >= 0x7f && c <= 0x9f) || c == 0xad || c == 0x61c || c == 0x180e ||
         (c >= 0x200b && c <= 0x200f) || (c >= 0x2028 && c <= 0x202e) ||
         (c >= 0x2060 && c <= 0x206f) || c == 0xfeff || (c >= 0xfff9 && c <= 0xfffb) ||
         (c >= 0xe0000 && c <= 0xe007f);
}

/* Writes the |len| bytes at |s| to |f| made safe as |mode| says. */
void safe_write(FILE *f, const char *s, size_t len, enum safe_mode mode) {
  const unsigned char *p = (const unsigned char *)s;
  size_t i = 0;
  while (i < len) {
    uint32_t cp = 0;
    size_t k = text_utf8_decode(p + i, len - i, &cp);
    if (k && !text_unsafe_cp(cp)) {
      fwrite(p + i, 1, k, f);
      i += k;
      continue;
    }
    bool space = cp == '\t' || cp == '\n' || cp == '\r';
    if (k && (mode == SAFE_BLOCK || mode == SAFE_JSON) && (cp == '\n' || cp == '\t'))
      fputc((int)cp, f);
    else if (mode == SAFE_JSON && !k) fputs("\\ufffd", f);
    else if (mode == SAFE_JSON && cp > 0xffff)
      fprintf(f, "\\u%04x\\u%04x", 0xd800 + ((cp - 0x10000) >> 10),
              0xdc00 + ((cp - 0x10000) & 0x3ff));
    else if (mode == SAFE_JSON) fprintf(f, "\\u%04x", cp);
    else fputc(k && space && mode == SAFE_LINE ? ' ' : '?', f);
    i += k ? k : 1;
  }
}

/* The characters safe_write() shows for |s| (one per code point or per
 * replaced byte), for lining up table columns. */
size_t safe_width(const char *s) {
  size_t n = 0, len = strlen(s);
  for (size_t i = 0; i < len; n++) {
    uint32_t cp;
    size_t k = text_utf8_decode((const unsigned char *)s + i, len - i, &cp);
    i += k ? k : 1;
  }
  return n;
}

void safe_puts(FILE *f, const char *s, enum safe_mode mode) { safe_write(f, s, strlen(s), mode); }
