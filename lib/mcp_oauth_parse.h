/* SPDX-License-Identifier: MIT */
/*
 * mcp_oauth_parse.h: the pure parts of OAuth (lib/mcp_oauth_parse.c),
 * internal to the library.
 *
 * Everything here takes bytes or parsed JSON in and hands strings out: no
 * I/O, no threads, no globals, no randomness and no OpenSSL, so any thread
 * may call it and fuzz/fuzz_oauth.c fuzzes it.  The engine (mcp_oauth.h)
 * builds the flow from these; tests/check_oauth.c unit-tests them.
 */
#ifndef MCP_OAUTH_PARSE_H
#define MCP_OAUTH_PARSE_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcp_int.h"

/* The Bearer (or DPoP) challenge of a WWW-Authenticate header.  Strings
 * are owned. */
typedef struct mcp_oauth_challenge {
  bool bearer; /* a Bearer challenge was found */
  bool dpop;   /* a DPoP challenge was found (RFC 9449 section 7.1) */
  char *resource_metadata;
  char *scope;
  char *error; /* "invalid_token", "insufficient_scope", ... */
  char *error_description;
} mcp_oauth_challenge;

/*
 * mcp__oauth_parse_challenge() parses |header| (RFC 9110 section 11.6.1
 * syntax: one or more challenges, auth-params as token=token or
 * token=quoted-string) and fills |out| from the first Bearer or DPoP
 * challenge (same parameters).  Unknown parameters and other schemes are
 * skipped.
 * Ownership: |out| is filled with new strings; release with
 *   mcp__oauth_challenge_clear().  Threads: any.
 * Returns: MCP_OK (also when there is neither challenge: out->bearer and
 *   out->dpop are false), MCP_EINVAL (malformed: an unterminated quoted string),
 *   MCP_ENOMEM.
 */
mcp_status mcp__oauth_parse_challenge(const char *header, mcp_oauth_challenge *out);
void mcp__oauth_challenge_clear(mcp_oauth_challenge *c);

/*
 * mcp__oauth_prm_urls() lists the Protected Resource Metadata URLs to try
 * for the MCP server |server_url| (RFC 9728 section 3.1): the path-based
 * one (/.well-known/oauth-protected-resource/<path>) when the URL has a path
 * other than "/", then the root one.  The query is dropped.
 * mcp__oauth_as_urls() lists the authorization server metadata URLs for
 * |issuer| in the spec's order: with a path, RFC 8414 path-inserted, OIDC
 * path-inserted, OIDC path-appended; without, RFC 8414 then OIDC.
 * Ownership: *out is a NULL-terminated array of new strings; release with
 *   mcp__oauth_strv_free().  Threads: any.
 * Returns: MCP_OK, MCP_EINVAL (not an http/https URL), MCP_ENOMEM.
 */
mcp_status mcp__oauth_prm_urls(const char *server_url, char ***out);
mcp_status mcp__oauth_as_urls(const char *issuer, char ***out);
void mcp__oauth_strv_free(char **v);

/*
 * mcp__oauth_resource_allowed() is true when the resource |prm_resource|
 * (from the server's metadata) covers |server_url|: same origin, and the
 * server's path equals the resource's path or lies below it.  Trailing
 * slashes are ignored.  Threads: any.
 */
bool mcp__oauth_resource_allowed(const char *server_url, const char *prm_resource);

/*
 * mcp__oauth_canonical_resource() is |server_url| as an RFC 8707 resource
 * indicator: lower-case scheme and host, no fragment, no query, no trailing
 * "/" (except the bare origin, which keeps none either).
 * Ownership: a new string (mcp__free), NULL when invalid or out of memory.
 */
char *mcp__oauth_canonical_resource(const char *server_url);

/* base64url without padding of |n| bytes (mcp_base64.c).  New string or
 * NULL (ENOMEM). */
char *mcp__oauth_b64url(const unsigned char *p, size_t n);
/* Standard base64 with padding (for HTTP Basic).  New string or NULL. */
char *mcp__oauth_b64(const unsigned char *p, size_t n);

/* mcp__oauth_pkce_challenge() is the RFC 7636 section 4.2 S256 challenge
 * of |verifier|: BASE64URL(SHA-256(ASCII(verifier))), unpadded.
 * Ownership: a new string (mcp__free) or NULL (ENOMEM).  Threads: any. */
char *mcp__oauth_pkce_challenge(const char *verifier);

/*
 * A form body or query string (application/x-www-form-urlencoded): names
 * and values are percent-encoded (everything but ALPHA DIGIT - . _ ~).
 * mcp__oauth_form_add() appends "name=value", after a "&" unless |b| is
 * empty; a NULL value
 * adds nothing.  Returns MCP_OK or MCP_ENOMEM.
 */
mcp_status mcp__oauth_form_add(mcp_buf *b, const char *name, const char *value);
/* Percent-encodes |s| as mcp__oauth_form_add() does.  New string or NULL. */
char *mcp__oauth_urlencode(const char *s);

/*
 * mcp__oauth_query_param() finds |name| in the query of |url| (the part
 * after '?', before '#') and returns its decoded value ('+' is a space).
 * Ownership: a new string or NULL when absent (or out of memory).
 */
char *mcp__oauth_query_param(const char *url, const char *name);

/*
 * mcp__oauth_check_iss() applies RFC 9207 / MCP 2026-07-28 (SEP-2468) to
 * the authorization response |redirect| (the URL the browser came back
 * to): its form-decoded iss must equal |issuer| byte for byte (no
 * normalization); absent, it is refused only when |advertised| (the
 * metadata's authorization_response_iss_parameter_supported is true).
 * Call it before looking at code or error.  Threads: any.
 * Returns: MCP_OK (proceed); MCP_EPROTO (do not redeem the code nor act
 *   on the response's error; the message names both issuers and never the
 *   response's error text); MCP_ENOMEM.
 */
mcp_status mcp__oauth_check_iss(const char *redirect, const char *issuer, bool advertised,
                                mcp_error *err);

/*
 * mcp__oauth_check_as_issuer(): RFC 8414 section 3.3, the metadata |as|'s
 * issuer must be identical to |as_base|, the issuer its well-known URL was
 * built from; metadata without issuer (REQUIRED, RFC 8414 section 2) is
 * refused too.  NULL |as| (no metadata) passes.
 * Threads: any.  Returns: MCP_OK; MCP_EPROTO naming |as_base| (and the
 * metadata's issuer, if any).
 */
mcp_status mcp__oauth_check_as_issuer(json_object *as, const char *as_base, mcp_error *err);

/*
 * mcp__oauth_scope_union() is the space-separated union of the scope lists
 * |before| and |now| (either may be NULL), |before|'s tokens first, each
 * once (SEP-2350 step-up).  Ownership: a new string ("" when both are
 * empty) or NULL when out of memory.
 */
char *mcp__oauth_scope_union(const char *before, const char *now);

/*
 * mcp__oauth_jwt_signing_input() is the JWS signing input of an RFC 7523
 * client assertion (RFC 7515 section 5.1): BASE64URL(header) "."
 * BASE64URL(claims), header {"alg":alg,"typ":"JWT"}, claims
 * iss=sub=|client_id|, aud=|audience|, iat=|now_s|, exp=|now_s|+300 and
 * jti=|jti| (RFC 7523 section 3).  |alg| is put in as it is: a JWA name
 * (mcp__oauth_jwt_assertion() passes only the ones it supports).
 * Ownership: *out is a new string.  Threads: any.
 * Returns: MCP_OK, MCP_ENOMEM.
 */
mcp_status mcp__oauth_jwt_signing_input(const char *alg, const char *client_id,
                                        const char *audience, int64_t now_s, const char *jti,
                                        char **out);

/* A parsed token response.  Strings owned. */
typedef struct mcp_oauth_token {
  char *access_token;
  char *refresh_token;
  char *scope;
  int64_t expires_at; /* seconds since the epoch; 0: unknown */
  bool dpop;          /* token_type DPoP (RFC 9449 section 5): bound to our key */
} mcp_oauth_token;

/*
 * mcp__oauth_parse_token_response() parses a token endpoint answer: on a
 * 2xx, access_token (required) and token_type (Bearer or DPoP, any case),
 * expires_in, refresh_token, scope; otherwise the RFC 6749 error object.
 * |now_s| turns expires_in into expires_at.
 * Ownership: |out| gets new strings; release with mcp__oauth_token_clear().
 * Returns: MCP_OK; MCP_EHTTP with the server's error code and description
 *   (never the body) for an error answer; MCP_EPROTO for a malformed one.
 */
mcp_status mcp__oauth_parse_token_response(int http_status, const char *body, size_t len,
                                           int64_t now_s, mcp_oauth_token *out, mcp_error *err);
void mcp__oauth_token_clear(mcp_oauth_token *t);

/* ---- JSON helpers shared with the engine ----------------------------------- */

/* The string member |k| of object |o| (borrowed), or NULL (absent, not a
 * string, |o| NULL). */
const char *mcp__oauth_jstr(json_object *o, const char *k);
/* True when |o| has member |key| / an array |key| holding the string |want|. */
bool mcp__oauth_json_has(json_object *o, const char *key);
bool mcp__oauth_json_array_has(json_object *o, const char *key, const char *want);

/*
 * mcp__oauth_as_error() fills |err| for a refused request (RFC 6749
 * section 5.2 error object |o|, may be NULL): "<what>: HTTP <status>:
 * <error> (<error_description>)", both quoted and cut short; err->http_status
 * is set.  Returns MCP_EHTTP.
 */
mcp_status mcp__oauth_as_error(int http_status, json_object *o, const char *what, mcp_error *err);

/* True when |s| is an http or https URL that mcp__url_parse() accepts. */
bool mcp__oauth_is_url(const char *s);

/* ---- metadata (discovery) -------------------------------------------------- */

/* What discovery found for one flow.  Strings and |as| owned. */
typedef struct mcp_oauth_discovery {
  char *resource;   /* the RFC 8707 resource to ask for */
  char *prm_scopes; /* PRM scopes_supported, space-joined */
  json_object *as;  /* AS metadata, or NULL (fallback endpoints) */
  char *issuer;
  char *authorization_endpoint, *token_endpoint, *registration_endpoint;
} mcp_oauth_discovery;

void mcp__oauth_discovery_clear(mcp_oauth_discovery *d);

/*
 * mcp__oauth_use_prm() takes what the flow needs from the Protected
 * Resource Metadata |prm| of |server_url| (RFC 9728; NULL when there was
 * none): d->resource, d->prm_scopes, and in *as_base the authorization
 * server to ask (the first usable authorization_servers entry, else the
 * server's origin as MCP 2025-03-26 says).  |prm| stays the caller's.
 * Ownership: *as_base a new string on MCP_OK.  Threads: any.
 * Returns: MCP_OK; MCP_EPROTO (the metadata is for another resource);
 *   MCP_EINVAL (bad server URL); MCP_ENOMEM.
 */
mcp_status mcp__oauth_use_prm(json_object *prm, const char *server_url, mcp_oauth_discovery *d,
                              char **as_base, mcp_error *err);

/*
 * mcp__oauth_use_as() fills d->issuer and the endpoints from the
 * authorization server metadata d->as (RFC 8414), or, when d->as is NULL,
 * with the 2025-03-26 default endpoints under |as_base|.  Endpoints that
 * are not http(s) URLs count as absent.  Threads: any.
 * Returns: MCP_OK; MCP_EPROTO (no token_endpoint); MCP_ENOMEM.
 */
mcp_status mcp__oauth_use_as(const char *as_base, mcp_oauth_discovery *d, mcp_error *err);

/* The token endpoint authentication (RFC 7591 section 2) for a client
 * with or without a secret, from d->as's
 * token_endpoint_auth_methods_supported.  A static string. */
const char *mcp__oauth_pick_auth_method(const mcp_oauth_discovery *d, bool has_secret);

/* ---- JWTs the host hands us (SEP-1933) ------------------------------------- */

/*
 * mcp__oauth_b64url_decode() decodes unpadded (or correctly padded)
 * base64url |s|, strictly (mcp__base64_decode()).
 * Ownership: *out a new buffer (mcp__free) of *n bytes, NUL-terminated
 * past the end.  Returns: MCP_OK, MCP_EINVAL (not base64url), MCP_ENOMEM.
 */
mcp_status mcp__oauth_b64url_decode(const char *s, unsigned char **out, size_t *n);

/*
 * mcp__oauth_check_workload_jwt() looks at the claims of the compact JWT
 * |jwt| before it is sent as an RFC 7523 grant: it must be three
 * base64url parts with a JSON object payload; an exp at or before |now_s|
 * is refused; an aud (a string or an array) whose values are all http(s)
 * URLs must name |issuer| or |token_endpoint| (a trailing "/" aside), as
 * RFC 7523 section 3 asks; other audiences are the server's to judge.  No
 * signature is checked (the key is the issuer's).  The message names the
 * cause and never quotes the JWT.  Threads: any.
 * Returns: MCP_OK; MCP_ECONFIG (malformed, expired, another audience).
 */
mcp_status mcp__oauth_check_workload_jwt(const char *jwt, const char *issuer,
                                         const char *token_endpoint, int64_t now_s, mcp_error *err);

#endif /* MCP_OAUTH_PARSE_H */
