/* SPDX-License-Identifier: MIT */
/*
 * mcp_oauth.h: OAuth 2.1 authorization for Streamable HTTP servers, as the
 * MCP authorization spec (2025-11-25, with the 2025-03-26 fallbacks) asks.
 * Internal to the library.
 *
 * Four files:
 *  - mcp_oauth_parse.c (mcp_oauth_parse.h): the pure parts, no I/O, no
 *    threads, fuzzed by fuzz/fuzz_oauth.c: the WWW-Authenticate parser, the
 *    well-known URL lists in the spec's order, metadata, PKCE challenges,
 *    form and base64url encoding, query parsing, the JWT signing input,
 *    token-response parsing;
 *  - mcp_oauth_options.c: the public mcp_oauth_options (struct below);
 *  - mcp_oauth_store.c: the file token store;
 *  - mcp_oauth.c: randomness and signing, the engine's blocking HTTP, and
 *    the engine (mcp__oauth_*): one per HTTP transport.  It runs the whole
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
#include "mcp_settings.h"
#include "mcp_oauth_parse.h"

/* ---- options (mcp_oauth_options.c) ------------------------------------------ */

/* The host's settings: plain data, one thread at a time.  Laid out here
 * for the engine and the store; only mcp_oauth_options.c writes it. */
struct mcp_oauth_options {
  char *client_id, *client_secret;
  char *client_issuer; /* the issuer client_id is registered with (SEP-2352) */
  char *client_metadata_url;
  char *client_name;
  char *redirect_uri;
  char *scopes;
  mcp_oauth_grant grant;
  char *private_key_pem, *signing_alg;
  char *idp_token_endpoint, *idp_client_id, *idp_id_token;
  mcp_oauth_authorize_fn authorize;
  void *authorize_user;
  mcp_oauth_store_load_fn load;
  mcp_oauth_store_save_fn save;
  void *store_user;
  char *file_store_dir; /* set_file_store; "" = the XDG default */
  mcp_oauth_dpop dpop;
  char *workload_jwt, *workload_jwt_file; /* SEP-1933 sources */
  mcp_oauth_jwt_fn workload_fn;
  void *workload_user;
};

/* Internal copy of options (mcp_client.c duplicates client options). */
mcp_oauth_options *mcp__oauth_options_dup(const mcp_oauth_options *o);
/* Fills what |o| leaves unset (strings, the authorize callback, the store;
 * a client id with its secret) from |defaults|.  MCP_OK or MCP_ENOMEM. */
mcp_status mcp__oauth_options_fill(mcp_oauth_options *o, const mcp_oauth_options *defaults);

/* ---- randomness and signing (mcp_oauth.c) ----------------------------------- */

/*
 * mcp__oauth_pkce() makes a PKCE pair: a 43-character verifier from 32
 * bytes of getrandom(2) (RFC 7636 section 4.1), and its S256 challenge (base64url(SHA-256)).
 * mcp__oauth_random() returns base64url of |n| random bytes (state, jti).
 * Ownership: new strings (mcp__free).  Threads: any.
 * Returns: MCP_OK, MCP_EIO (no randomness), MCP_ENOMEM.
 */
mcp_status mcp__oauth_pkce(char **verifier, char **challenge);
char *mcp__oauth_random(size_t n);

/*
 * mcp__oauth_jwt_assertion() signs an RFC 7523 client assertion: header
 * {"alg":alg,"typ":"JWT"}, claims iss=sub=|client_id|, aud=|audience|,
 * iat=now, exp=now+300, jti random
 * (mcp__oauth_jwt_signing_input()), signed by OpenSSL (loaded on first use).  |pem| is a PKCS#8 or
 * traditional private key; |alg| is "ES256", "ES384", "RS256", "RS384", "RS512", "PS256" or "EdDSA"
 * and must fit the key. Ownership: *out is a new string.  Threads: any. Returns: MCP_OK, MCP_EINVAL
 * (unreadable key, unknown alg, key/alg mismatch; message says which), MCP_ENOMEM.
 */
mcp_status mcp__oauth_jwt_assertion(const char *pem, const char *alg, const char *client_id,
                                    const char *audience, int64_t now_s, char **out,
                                    mcp_error *err);

/* ---- DPoP keys and proofs (mcp_oauth_dpop.c) -------------------------------- */

/*
 * An ES256 (P-256) DPoP key (RFC 9449).  mcp__dpop_key_new() makes one;
 * mcp__dpop_key_load() reads what mcp__dpop_key_export() wrote (base64url
 * DER of the private key: secret, kept only where tokens are kept).
 * mcp__dpop_key_jwk() is its public JWK (RFC 7638 canonical member order),
 * mcp__dpop_key_jkt() that JWK's SHA-256 thumbprint (base64url).
 * mcp__dpop_proof() signs a proof JWT: header typ dpop+jwt, alg ES256, jwk;
 * claims jti (random), htm |htm|, htu |url| without query and fragment,
 * iat |now_s|, ath = base64url(SHA-256(|access_token|)) when given, nonce
 * when given.  mcp__dpop_ath() and mcp__dpop_htu() are those two claims.
 * Ownership: new keys (mcp__dpop_key_free), new strings (mcp__free).
 * Threads: any; a key is immutable and may sign from several threads.
 * Returns: MCP_OK, MCP_ETLS (no OpenSSL), MCP_EINVAL (a bad stored key),
 *   MCP_EIO (key generation or signing failed), MCP_ENOMEM.
 */
typedef struct mcp_dpop_key mcp_dpop_key;
mcp_status mcp__dpop_key_new(mcp_dpop_key **out, mcp_error *err);
mcp_status mcp__dpop_key_load(const char *b64der, mcp_dpop_key **out, mcp_error *err);
char *mcp__dpop_key_export(const mcp_dpop_key *k);
const char *mcp__dpop_key_jwk(const mcp_dpop_key *k);
const char *mcp__dpop_key_jkt(const mcp_dpop_key *k);
void mcp__dpop_key_free(mcp_dpop_key *k);
mcp_status mcp__dpop_proof(const mcp_dpop_key *k, const char *htm, const char *url,
                           const char *access_token, const char *nonce, int64_t now_s, char **out,
                           mcp_error *err);
char *mcp__dpop_ath(const char *access_token);
char *mcp__dpop_htu(const char *url);

/* ---- the file token store (mcp_oauth_store.c) ------------------------------ */

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

/* The store directory for a configured |dir|: a copy of |dir| when set and
 * not "", else $XDG_DATA_HOME/mcpconn/oauth or ~/.local/share/mcpconn/oauth.
 * Ownership: a new string, or NULL (no absolute $XDG_DATA_HOME or $HOME,
 * or out of memory).  Threads: any (reads the environment). */
char *mcp__oauth_store_dir(const char *dir);

/* ---- the engine ------------------------------------------------------------- */

typedef struct mcp_oauth mcp_oauth;

/*
 * mcp__oauth_new() makes the engine for MCP server |server_url| from the
 * host's |opts| (copied) and loads any stored state (tokens, registration)
 * from the token store.  |tls| (copied; NULL: verify against the system
 * store) is the TLS of the engine's own requests, the MCP server's.
 * Threads: any.  Returns: MCP_OK, MCP_EINVAL, MCP_ENOMEM, MCP_EIO (the
 *   file token store's directory or file is not private or unreadable).
 */
mcp_status mcp__oauth_new(const mcp_oauth_options *opts, const char *server_url,
                          const mcp_tls_settings *tls, mcp_oauth **out, mcp_error *err);
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

/*
 * mcp__oauth_authorization() is the Authorization header value for the
 * current token: "DPoP <token>" for a DPoP-bound token, else "Bearer
 * <token>"; NULL when there is none.  New string (wipe, mcp__free).
 * mcp__oauth_dpop_header() is the DPoP proof for a request |method| |url|
 * sent with |authorization| (a value mcp__oauth_authorization() gave): a
 * new string, or NULL when that value is not a DPoP one (or on failure,
 * when the server's 401 says why).  It carries the server's last nonce.
 * mcp__oauth_dpop_nonce() records a DPoP-Nonce the MCP server sent.
 * Threads: any (the engine's mutex).
 */
char *mcp__oauth_authorization(mcp_oauth *a);
char *mcp__oauth_dpop_header(mcp_oauth *a, const char *method, const char *url,
                             const char *authorization);
void mcp__oauth_dpop_nonce(mcp_oauth *a, const char *nonce);

/* |fn| is called on the flow's thread with |waiting| true just before the
 * host's authorize callback (a person logs in) and false right after it
 * returns; always paired.  Set before the first challenge. */
void mcp__oauth_set_person_hook(mcp_oauth *a, void (*fn)(void *user, bool waiting), void *user);

/* Makes a running or later mcp__oauth_challenge() stop at its next step
 * with MCP_ECANCELLED.  Threads: any. */
void mcp__oauth_cancel(mcp_oauth *a);

#endif /* MCP_OAUTH_H */
