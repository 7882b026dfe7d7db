/*
 * mcp_oauth.h: OAuth 2.1 authorization for Streamable HTTP servers, as the
 * MCP authorization spec (2025-11-25, with the 2025-03-26 fallbacks) asks.
 *
 * Two layers:
 *  - pure helpers (no I/O, no threads; unit-tested in tests/check_oauth.c):
 *    the WWW-Authenticate parser, the well-known URL lists in the spec's
 *    order, PKCE, form and base64url encoding, query parsing, the
 *    private_key_jwt assertion, token-response parsing;
 *  - the engine (mcp__oauth_*): one per HTTP transport.  It runs the whole
 *    flow for a 401/403 challenge (metadata discovery, registration, the
 *    grant, refresh) with blocking requests over its own mcp_http clients,
 *    so it must run on a thread that may block and that is neither an
 *    mcp_http I/O thread nor a worker lane the flow needs.  The Streamable
 *    HTTP transport runs it on its own auth thread.
 *
 * Tokens never appear in logs or error messages: errors quote the
 * authorization server's `error` and `error_description` only.
 */
#ifndef MCP_OAUTH_H
#define MCP_OAUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcp_int.h"

/* ---- pure helpers ---------------------------------------------------------- */

/* The Bearer challenge of a WWW-Authenticate header.  Strings are owned. */
typedef struct mcp_oauth_challenge {
  bool bearer;            /* a Bearer challenge was found */
  char *resource_metadata;
  char *scope;
  char *error;            /* "invalid_token", "insufficient_scope", ... */
  char *error_description;
} mcp_oauth_challenge;

/*
 * mcp__oauth_parse_challenge() parses |header| (RFC 9110 section 11.6.1
 * syntax: one or more challenges, auth-params as token=token or
 * token=quoted-string) and fills |out| from the first Bearer challenge.
 * Unknown parameters and other schemes are skipped.
 * Ownership: |out| is filled with new strings; release with
 *   mcp__oauth_challenge_clear().  Threads: any.
 * Returns: MCP_OK (also when there is no Bearer challenge: out->bearer is
 *   false), MCP_EINVAL (malformed: an unterminated quoted string),
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

/* base64url without padding of |n| bytes.  New string or NULL (ENOMEM). */
char *mcp__oauth_b64url(const unsigned char *p, size_t n);
/* Standard base64 with padding (for HTTP Basic).  New string or NULL. */
char *mcp__oauth_b64(const unsigned char *p, size_t n);

/*
 * mcp__oauth_pkce() makes a PKCE pair: a 43-character verifier from 32
 * bytes of RAND_bytes, and its S256 challenge (base64url(SHA-256)).
 * mcp__oauth_pkce_challenge() computes the challenge of a given verifier.
 * mcp__oauth_random() returns base64url of |n| random bytes (state, jti).
 * Ownership: new strings (mcp__free).  Threads: any.
 * Returns: MCP_OK, MCP_EIO (no randomness), MCP_ENOMEM.
 */
mcp_status mcp__oauth_pkce(char **verifier, char **challenge);
char *mcp__oauth_pkce_challenge(const char *verifier);
char *mcp__oauth_random(size_t n);

/*
 * A form body or query string (application/x-www-form-urlencoded): names
 * and values are percent-encoded (everything but ALPHA DIGIT - . _ ~).
 * mcp__oauth_form_add() appends "&name=value" (no "&" first); a NULL value
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
 * mcp__oauth_jwt_assertion() signs an RFC 7523 client assertion: header
 * {"alg":alg,"typ":"JWT"}, claims iss=sub=|client_id|, aud=|audience|,
 * iat=now, exp=now+300, jti random.  |pem| is a PKCS#8 or traditional
 * private key; |alg| is "ES256", "ES384", "RS256", "RS384", "RS512",
 * "PS256" or "EdDSA" and must fit the key.
 * Ownership: *out is a new string.  Threads: any.
 * Returns: MCP_OK, MCP_EINVAL (unreadable key, unknown alg, key/alg
 *   mismatch; message says which), MCP_ENOMEM.
 */
mcp_status mcp__oauth_jwt_assertion(const char *pem, const char *alg, const char *client_id,
                                    const char *audience, int64_t now_s, char **out,
                                    mcp_error *err);

/* A parsed token response.  Strings owned. */
typedef struct mcp_oauth_token {
  char *access_token;
  char *refresh_token;
  char *scope;
  int64_t expires_at; /* seconds since the epoch; 0: unknown */
} mcp_oauth_token;

/*
 * mcp__oauth_parse_token_response() parses a token endpoint answer: on a
 * 2xx, access_token (required) and token_type (must be Bearer, any case),
 * expires_in, refresh_token, scope; otherwise the RFC 6749 error object.
 * |now_s| turns expires_in into expires_at.
 * Ownership: |out| gets new strings; release with mcp__oauth_token_clear().
 * Returns: MCP_OK; MCP_EHTTP with the server's error code and description
 *   (never the body) for an error answer; MCP_EPROTO for a malformed one.
 */
mcp_status mcp__oauth_parse_token_response(int http_status, const char *body, size_t len,
                                           int64_t now_s, mcp_oauth_token *out, mcp_error *err);
void mcp__oauth_token_clear(mcp_oauth_token *t);

/* ---- the engine ------------------------------------------------------------- */

typedef struct mcp_oauth mcp_oauth;

/* TLS and limits for the engine's own HTTP requests (borrowed strings). */
typedef struct mcp_oauth_http_config {
  const char *ca_file, *ca_dir, *client_cert, *client_key;
  bool insecure;
  int64_t timeout_ms; /* per request; 0: 30000 */
} mcp_oauth_http_config;

/*
 * The file token store: one file per server, <sha256(key) hex>.json in
 * |dir|, as mcp_fsafe.h says: the directory (made 0700 when missing) and
 * the file must be private (ours, a real directory and regular file,
 * writable by nobody else, no symlinks); a planted FIFO does not block.
 * mcp__oauth_file_load() reads the state stored for |key|;
 * mcp__oauth_file_save() replaces it (mkstemp, mode 0600, rename).
 * Ownership: on MCP_OK *data is a new string (mcp__free; it holds
 *   secrets: wipe it).  Threads: any.
 * Returns: MCP_OK; MCP_ENOTFOUND (load: nothing stored, no directory);
 *   MCP_EIO (not private, or an I/O error; the message names the path and
 *   the reason); MCP_ENOMEM.
 */
mcp_status mcp__oauth_file_load(const char *dir, const char *key, char **data, mcp_error *err);
mcp_status mcp__oauth_file_save(const char *dir, const char *key, const char *data, mcp_error *err);

/*
 * mcp__oauth_new() makes the engine for MCP server |server_url| from the
 * host's |opts| (copied) and loads any stored state (tokens, registration)
 * from the token store.
 * Threads: any.  Returns: MCP_OK, MCP_EINVAL, MCP_ENOMEM, MCP_EIO (the
 *   file token store's directory or file is not private or unreadable).
 */
mcp_status mcp__oauth_new(const mcp_oauth_options *opts, const char *server_url,
                          const mcp_oauth_http_config *http, mcp_oauth **out, mcp_error *err);
void mcp__oauth_free(mcp_oauth *a);

/* The current access token (a new string to mcp__free), or NULL. */
char *mcp__oauth_token(mcp_oauth *a);

/*
 * mcp__oauth_challenge() answers a 401 (or 403 insufficient_scope)
 * response with header |www_authenticate| (NULL when absent): refresh the
 * token when that can help, else run discovery, registration and the
 * grant.  Blocks (HTTP requests, the host's authorize callback).  One call
 * at a time per engine (the transport serialises them).
 * Ownership: on MCP_OK *token is the new access token (mcp__free).
 * Returns: MCP_OK; MCP_EHTTP (with http_status) when the authorization
 *   server refused; MCP_EPROTO (bad metadata); MCP_ECANCELLED (the host's
 *   authorize callback gave up, or mcp__oauth_cancel()); MCP_ECONFIG
 *   (nothing to register with, no authorize callback); MCP_EIO, MCP_ETLS,
 *   MCP_ETIMEDOUT, MCP_ENOMEM.
 */
mcp_status mcp__oauth_challenge(mcp_oauth *a, int http_status, const char *www_authenticate,
                                char **token, mcp_error *err);

/* |fn| is called on the flow's thread with |waiting| true just before the
 * host's authorize callback (a person logs in) and false right after it
 * returns; always paired.  Set before the first challenge. */
void mcp__oauth_set_person_hook(mcp_oauth *a, void (*fn)(void *user, bool waiting), void *user);

/* Makes a running or later mcp__oauth_challenge() stop at its next step
 * with MCP_ECANCELLED.  Threads: any. */
void mcp__oauth_cancel(mcp_oauth *a);

/* Internal copy of options (mcp_client.c duplicates client options). */
mcp_oauth_options *mcp__oauth_options_dup(const mcp_oauth_options *o);
/* Fills what |o| leaves unset (strings, the authorize callback, the store;
 * a client id with its secret) from |defaults|.  MCP_OK or MCP_ENOMEM. */
mcp_status mcp__oauth_options_fill(mcp_oauth_options *o, const mcp_oauth_options *defaults);

#endif /* MCP_OAUTH_H */
