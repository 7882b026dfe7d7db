/* SPDX-License-Identifier: MIT */
/*
 * mcp_oauth_int.h: what the OAuth engine's files share and nobody else
 * uses: the engine's struct, the result of one blocking request, and its
 * persistent state's load and save (mcp_oauth_state.c).
 */
#ifndef MCP_OAUTH_INT_H
#define MCP_OAUTH_INT_H

#include <json-c/json.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#include "mcp_http.h"
#include "mcp_oauth.h"
#include "mcp_ossl.h"

/* One blocking request's response, filled on the HTTP client's I/O thread
 * and waited for by the flow thread. */
typedef struct fetch_result {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool done;
  int status;
  mcp_buf body;
  bool too_big;
  char *location;
  char *dpop_nonce; /* a DPoP-Nonce header (RFC 9449 section 8) */
  mcp_status st;
  char *msg;
} fetch_result;

/*
 * The engine.  Threads: its state is the flow thread's; |mu| guards
 * access_token, cur, dpop_key, token_dpop and rs_nonce, which other
 * threads read (mcp__oauth_token(), mcp__oauth_cancel(), the transport).
 */
struct mcp_oauth {
  mcp_oauth_options *o;
  void (*person_fn)(void *user, bool waiting); /* see mcp__oauth_set_person_hook */
  void *person_user;
  char *server_url;
  char *store_key;      /* the canonical server URL */
  mcp_tls_settings tls; /* owned copy */
  int64_t timeout_ms;
  pthread_mutex_t mu; /* guards access_token and cur */
  atomic_bool cancelled;
  fetch_result *cur; /* the request fetch() is waiting for */
  /* state (the flow thread's; mu also guards access_token) */
  char *access_token, *refresh_token, *scope;
  int64_t expires_at;
  char *issuer, *token_endpoint;
  char *client_id, *client_secret, *auth_method;
  char *reg_issuer; /* whom the client was registered with (DCR) */
  /* SEP-2352: every registration we made, by issuer: {"<issuer>":
   * {client_id, client_secret, token_endpoint_auth_method}}; flow thread. */
  json_object *regs;
  char *req_scope; /* the scope of our last authorization request (SEP-2350) */
  /* DPoP (RFC 9449): the key (made once, then immutable), whether the
   * token is bound to it, and the nonces the servers gave (mu guards
   * dpop_key, token_dpop and rs_nonce: the transport's threads read them). */
  mcp_dpop_key *dpop_key;
  bool token_dpop;
  char *as_nonce; /* the authorization server's (flow thread) */
  char *rs_nonce; /* the MCP server's */
};

/* Replaces *dst with a copy of |v| (NULL clears it), wiping the old one. */
static inline void set_field(char **dst, const char *v) {
  char *c = v ? mcp__strdup(v) : NULL;
  if (*dst) OPENSSL_cleanse(*dst, strlen(*dst));
  mcp__free(*dst);
  *dst = c;
}

/* Adds string member |k| = |v| to |o| when |v| is not NULL. */
static inline void add_str(json_object *o, const char *k, const char *v) {
  if (v) json_object_object_add(o, k, json_object_new_string(v));
}

/* The engine's state (tokens, the DPoP key, the registrations we made) from
 * the host's load callback or the file store, and back: a JSON document
 * keyed by the canonical server URL.  The flow thread's (and
 * mcp__oauth_new()).  load: MCP_OK also when nothing usable is stored;
 * MCP_EIO when the file store is not private. */
mcp_status mcp__oauth_load_state(mcp_oauth *a, mcp_error *err);
void mcp__oauth_save_state(mcp_oauth *a);

#endif /* MCP_OAUTH_INT_H */
