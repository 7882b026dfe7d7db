/* SPDX-License-Identifier: MIT */
/*
 * mcp_sha256.h: SHA-256 (FIPS 180-4) of a byte string.
 *
 * Our own, small implementation, used to derive names (tool-name folding,
 * cache file names, token store file names, server definition hashes) and
 * the OAuth PKCE S256 challenge of the verifier (mcp_oauth_parse.c).  Going
 * through OpenSSL's EVP for these would load its provider machinery on the
 * first call, which costs a stdio-only host several megabytes of resident
 * memory; TLS and signatures still use OpenSSL.
 *
 * Secrets.  Hashing a secret whose digest is public by design is fine:
 * the PKCE S256 challenge travels in the authorization URL (RFC 7636), and
 * what keeps the verifier secret is SHA-256's preimage resistance over 32
 * random bytes, not this code.  The running time depends on the length
 * only (no branch and no table look-up depends on the data), so hashing
 * the verifier leaks nothing but its length (43 characters, public) by
 * timing.  It does not wipe the copies of the input it leaves on its stack
 * (the message schedule and the last block); a caller that must leave no
 * copy of a secret behind cannot use it.
 *
 * Not for: password hashing or keys from low-entropy input (one fast,
 * unsalted pass; that needs a slow salted KDF); a MAC as SHA-256(key ||
 * message), which length extension forges (that needs HMAC, which this is
 * not); checking a secret against a stored digest (nothing here compares
 * in constant time).
 */
#ifndef MCP_SHA256_H
#define MCP_SHA256_H

#include <stddef.h>

#define MCP_SHA256_LEN 32

/* Writes the 32-byte digest of |data| (|len| bytes; may be NULL when len is
 * 0) to |out|.  Pure: no allocation, any thread. */
void mcp__sha256(const void *data, size_t len, unsigned char out[MCP_SHA256_LEN]);

/* The authorization context of a credential |value| (a NUL-terminated
 * Authorization header value): the first 16 bytes of its digest as 32
 * lowercase hex digits in |out| (|n| >= 33; else |out| is left "" when
 * n > 0).  One form for the transport (mcp__transport_auth_context) and
 * the manager's disk-cache rule, which compare them. */
void mcp__sha256_auth_context(const char *value, char *out, size_t n);

#endif /* MCP_SHA256_H */
