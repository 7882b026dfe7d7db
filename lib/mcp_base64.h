/* SPDX-License-Identifier: MIT */
/*
 * mcp_base64.h: base64 (RFC 4648 section 4) and base64url (section 5),
 * both ways: the one implementation the library has (HTTP Basic
 * credentials, JWS and DPoP parts, the PKCE challenge, a 2026-07-28
 * header's "=?base64?...?=" form, a resource's blob).
 *
 * Encoding pads with "=" or not, as the caller's format says (JWS and
 * PKCE want none, HTTP Basic and MIME-ish forms want it).  Decoding is
 * strict: only the alphabet asked for, no white space or line breaks,
 * padding either absent or exactly what completes the last group of four,
 * and the unused low bits of the last character zero (RFC 4648 section
 * 3.5), so each byte string has one accepted encoding.
 *
 * Pure: no I/O, no threads, no globals; fuzzed by fuzz/fuzz_base64.c.
 */
#ifndef MCP_BASE64_H
#define MCP_BASE64_H

#include <stdbool.h>
#include <stddef.h>

#include "mcp_int.h"

/* The alphabet: "+/" (standard) or "-_" (URL and file name safe). */
typedef enum { MCP_B64_STD, MCP_B64_URL } mcp_b64;

/* The length of the encoding of |n| bytes, without the NUL. */
size_t mcp__base64_len(size_t n, bool pad);

/*
 * mcp__base64_encode_to() writes the encoding of the |n| bytes at |p| to
 * |out|, which has room for mcp__base64_len(n, pad) + 1 bytes, and a NUL;
 * returns the length written (without the NUL).
 */
size_t mcp__base64_encode_to(char *out, const void *p, size_t n, mcp_b64 alphabet, bool pad);

/* The same into a new string (mcp__free), or NULL when out of memory. */
char *mcp__base64_encode(const void *p, size_t n, mcp_b64 alphabet, bool pad);

/*
 * mcp__base64_decode() decodes the |n| characters at |s| (strictly, see
 * above) into a new buffer of *outlen bytes followed by a NUL (so decoded
 * text can be used as a string), freed with mcp__free().
 * Returns: MCP_OK; MCP_EINVAL when |s| is not such an encoding (*out NULL,
 * *outlen 0); MCP_ENOMEM.
 */
mcp_status mcp__base64_decode(const char *s, size_t n, mcp_b64 alphabet, unsigned char **out,
                              size_t *outlen);

#endif /* MCP_BASE64_H */
