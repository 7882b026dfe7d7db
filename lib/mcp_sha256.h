/*
 * mcp_sha256.h: SHA-256 (FIPS 180-4) of a byte string.
 *
 * Our own, small implementation, used to derive names (tool-name folding,
 * cache file names, server definition hashes).  Going through OpenSSL's EVP
 * for these would load its provider machinery on the first call, which
 * costs a stdio-only host several megabytes of resident memory; TLS still
 * uses OpenSSL.  Not for secrets: it makes no attempt at constant time.
 */
#ifndef MCP_SHA256_H
#define MCP_SHA256_H

#include <stddef.h>

#define MCP_SHA256_LEN 32

/* Writes the 32-byte digest of |data| (|len| bytes; may be NULL when len is
 * 0) to |out|.  Pure: no allocation, any thread. */
void mcp__sha256(const void *data, size_t len, unsigned char out[MCP_SHA256_LEN]);

#endif /* MCP_SHA256_H */
