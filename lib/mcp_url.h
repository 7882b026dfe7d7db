/* SPDX-License-Identifier: MIT */
/*
 * mcp_url.h: absolute http/https URLs for the Streamable HTTP transport:
 * split, validate, normalise, and resolve a relative reference (the legacy
 * SSE `endpoint` event) against a base.  Pure: no I/O, no threads, no DNS.
 * Must not know about: sockets, TLS, HTTP messages, MCP.
 *
 * What a parsed URL looks like:
 *  - scheme "http" or "https" (matched case-insensitively, stored lower case);
 *  - host lower-cased: a reg-name of ASCII letters, digits, "-", ".", "_",
 *    "~"; a dotted-quad IPv4 address; or an IPv6 address (given in brackets,
 *    stored without them in the RFC 5952 canonical form);
 *  - port 1..65535, 80 or 443 when absent;
 *  - path_and_query: the request target, at least "/", with dot segments
 *    removed (RFC 3986 section 5.2.4) and bytes that may not appear in a
 *    request target (non-ASCII, `"<>\^`{|}`) percent-encoded;
 *  - the fragment is dropped.
 * Rejected with MCP_EINVAL and a message: a missing or unsupported scheme,
 * userinfo (credentials in URLs are not supported), an empty host, a bad
 * port, a bad IPv4 or IPv6 literal, an IPv6 zone id, control characters or
 * spaces anywhere, a stray "%" that does not start a %XX escape.
 */
#ifndef MCP_URL_H
#define MCP_URL_H

#include <stdbool.h>

#include "mcp_int.h"

/* A parsed URL.  Every string is owned by the struct and NUL-terminated;
 * treat the whole struct as read-only and release it with mcp__url_free(). */
typedef struct mcp_url {
  char *scheme;         /* "http" or "https" */
  char *host;           /* lower case; IPv6 without brackets */
  int port;             /* 1..65535; the scheme's default when absent */
  char *path_and_query; /* "/mcp?x=1"; never empty */
  bool is_tls;          /* scheme is https */
  bool is_ipv6;         /* host is an IPv6 address */
  char *authority;      /* see mcp__url_authority() */
} mcp_url;

/*
 * mcp__url_parse() parses the absolute URL |s|.
 *
 * Ownership: |s| is borrowed.  On MCP_OK *out is a new URL the caller
 *   releases with mcp__url_free(); on error *out is NULL and |err| (NULL is
 *   fine) says what is wrong.
 * Threads: any; no shared state.
 * Returns: MCP_OK, MCP_EINVAL (not a usable http/https URL), MCP_ENOMEM.
 */
mcp_status mcp__url_parse(const char *s, mcp_url **out, mcp_error *err);

/* Releases |u| and its strings.  NULL does nothing.  Threads: any. */
void mcp__url_free(mcp_url *u);

/* Whether |s| parses as mcp__url_parse() would take it: MCP_OK, MCP_EINVAL
 * or MCP_ENOMEM (the one check of the client's setter and the manager's
 * bridge from a config definition). */
mcp_status mcp__url_check(const char *s);

/*
 * mcp__url_authority() returns host[:port] for the Host header or HTTP/2's
 * :authority: an IPv6 host in brackets, the port omitted when it is the
 * scheme's default.
 * Ownership: borrowed from |u|, valid until mcp__url_free(u).
 * Threads: any, concurrently (reads only).
 */
const char *mcp__url_authority(const mcp_url *u);

/*
 * mcp__url_to_string() formats |u| as scheme://authority/path?query, a URL
 * that mcp__url_parse() turns back into an equal struct.
 * Ownership: returns a new string the caller frees with mcp__free(), or
 *   NULL when out of memory.
 * Threads: any, concurrently (reads only).
 */
char *mcp__url_to_string(const mcp_url *u);

/*
 * mcp__url_resolve() resolves the URI reference |ref| against |base| as in
 * RFC 3986 section 5.2 (strict: a reference with a scheme is taken as it
 * is), for the legacy SSE `endpoint` event, which may carry an absolute URL,
 * an absolute path ("/messages?sessionId=x"), or a relative path.  The
 * result must itself be a valid http/https URL.
 *
 * Ownership: |base| and |ref| are borrowed.  On MCP_OK *out is a new URL
 *   released with mcp__url_free(); on error *out is NULL.
 * Threads: any, concurrently on one |base| (reads only).
 * Returns: MCP_OK, MCP_EINVAL (bad reference or result), MCP_ENOMEM.
 */
mcp_status mcp__url_resolve(const mcp_url *base, const char *ref, mcp_url **out, mcp_error *err);

/*
 * mcp__url_origin_equal() is true when |a| and |b| have the same scheme,
 * host and port (RFC 6454 origin), so credentials and session headers meant
 * for one may be sent to the other.  NULL equals nothing.
 * Threads: any, concurrently (reads only).
 */
bool mcp__url_origin_equal(const mcp_url *a, const mcp_url *b);

#endif /* MCP_URL_H */
