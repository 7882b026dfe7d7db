/* SPDX-License-Identifier: MIT */
/*
 * mcp_base64.c: base64 and base64url (RFC 4648), see mcp_base64.h.
 *
 * Hand-written rather than OpenSSL's EVP_EncodeBlock/EVP_DecodeBlock:
 * those know the standard alphabet only, decode with white space and
 * without the padding rules, and would load OpenSSL in a stdio-only host
 * (mcp_ossl.c loads it lazily) just to spell a header.
 *
 * Owns nothing.  Must not know about: what the encoded bytes mean (HTTP,
 * OAuth, MCP).
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "mcp_base64.h"

static const char k_std[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char k_url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

size_t mcp__base64_len(size_t n, bool pad) {
  size_t full = n / 3 * 4, rest = n % 3;
  if (!rest) return full;
  return full + (pad ? 4 : rest + 1);
}

size_t mcp__base64_encode_to(char *out, const void *data, size_t n, mcp_b64 alphabet, bool pad) {
  const unsigned char *p = data;
  const char *tab = alphabet == MCP_B64_URL ? k_url : k_std;
  size_t k = 0, i = 0;
  for (; i + 2 < n; i += 3) {
    uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
    out[k++] = tab[v >> 18 & 63];
    out[k++] = tab[v >> 12 & 63];
    out[k++] = tab[v >> 6 & 63];
    out[k++] = tab[v & 63];
  }
  if (i < n) {
    uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0);
    out[k++] = tab[v >> 18 & 63];
    out[k++] = tab[v >> 12 & 63];
    if (i + 1 < n) out[k++] = tab[v >> 6 & 63];
    else if (pad) out[k++] = '=';
    if (pad) out[k++] = '=';
  }
  out[k] = '\0';
  return k;
}

char *mcp__base64_encode(const void *p, size_t n, mcp_b64 alphabet, bool pad) {
  if (n > (SIZE_MAX - 4) / 4 * 3) return NULL;
  char *out = mcp__malloc(mcp__base64_len(n, pad) + 1);
  if (out) mcp__base64_encode_to(out, p, n, alphabet, pad);
  return out;
}

static int value(unsigned char c, mcp_b64 alphabet) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == (alphabet == MCP_B64_URL ? '-' : '+')) return 62;
  if (c == (alphabet == MCP_B64_URL ? '_' : '/')) return 63;
  return -1;
}

mcp_status mcp__base64_decode(const char *s, size_t n, mcp_b64 alphabet, unsigned char **out,
                              size_t *outlen) {
  *out = NULL;
  *outlen = 0;
  /* Padding, if any, completes the last group: "xx==" or "xxx=". */
  size_t pads = 0;
  while (pads < n && pads < 3 && s[n - 1 - pads] == '=') pads++;
  size_t len = n - pads;
  if (pads && (n % 4 != 0 || pads > 2 || len % 4 + pads != 4)) return MCP_EINVAL;
  if (len % 4 == 1) return MCP_EINVAL;
  unsigned char *b = mcp__malloc(len / 4 * 3 + len % 4 + 1);
  if (!b) return MCP_ENOMEM;
  size_t o = 0;
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < len; i++) {
    int v = value((unsigned char)s[i], alphabet);
    if (v < 0) {
      mcp__free(b);
      return MCP_EINVAL;
    }
    acc = (acc << 6 | (uint32_t)v) & 0xffffff;
    if ((bits += 6) >= 8) {
      bits -= 8;
      b[o++] = (unsigned char)(acc >> bits);
    }
  }
  /* The bits left over must be zero: one encoding per byte string. */
  if (bits && (acc & ((1u << bits) - 1))) {
    mcp__free(b);
    return MCP_EINVAL;
  }
  b[o] = '\0';
  *out = b;
  *outlen = o;
  return MCP_OK;
}
