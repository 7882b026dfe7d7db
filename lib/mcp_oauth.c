/* SPDX-License-Identifier: MIT */
/*
 * mcp_oauth.c: the OAuth engine (see mcp_oauth.h): blocking HTTP for the
 * flow, discovery, dynamic client registration, the grants and refresh.
 * The pure parts it builds on are in mcp_oauth_parse.c, randomness and
 * signing in mcp_oauth_sign.c, the engine's struct and its persistent
 * state in mcp_oauth_int.h and mcp_oauth_state.c, the options in
 * mcp_oauth_options.c, the file token store in mcp_oauth_store.c.
 *
 * Threads: the engine's state is the flow thread's; its mutex guards
 * access_token and the request being waited for (mcp__oauth_token() and
 * mcp__oauth_cancel() come from other threads).  mcp__oauth_challenge()
 * runs on one thread at a time (the transport's auth thread) and blocks on
 * its own mcp_http clients, one per request, each with its own I/O thread.
 */
#include "config.h"

#include <errno.h>
#include <json-c/json.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "mcp_http.h"
#include "mcp_jsonrpc.h"
#include "mcp_oauth.h"
#include "mcp_oauth_int.h"
#include "mcp_ossl.h"
#include "mcp_url.h"

#define DEFAULT_REDIRECT "http://127.0.0.1/callback"
#define DEFAULT_CLIENT_NAME "mcpconn"
#define HTTP_TIMEOUT_MS 30000
#define MAX_BODY ((size_t)1024 * 1024)

/* ========================================================================== */
/* Blocking HTTP for the engine                                               */
/* ========================================================================== */

static void f_headers(void *user, int status, const mcp_http_header *h, size_t n) {
  fetch_result *f = user;
  f->status = status;
  for (size_t i = 0; i < n; i++)
    if (strcasecmp(h[i].name, "location") == 0 && !f->location)
      f->location = mcp__strdup(h[i].value);
    else if (strcasecmp(h[i].name, "dpop-nonce") == 0 && !f->dpop_nonce)
      f->dpop_nonce = mcp__strdup(h[i].value);
}
static void f_data(void *user, const char *data, size_t n) {
  fetch_result *f = user;
  if (f->body.len + n > MAX_BODY) {
    f->too_big = true;
    return;
  }
  mcp__buf_append(&f->body, data, n);
}
static void f_done(void *user, mcp_status st, const char *message, bool not_sent) {
  (void)not_sent;
  fetch_result *f = user;
  pthread_mutex_lock(&f->mu);
  f->st = st;
  if (st != MCP_OK && message) f->msg = mcp__strdup(message);
  f->done = true;
  pthread_cond_broadcast(&f->cv);
  pthread_mutex_unlock(&f->mu);
}
static const mcp_http_callbacks fetch_cb = {f_headers, f_data, f_done};

static void fetch_clear(fetch_result *f) {
  mcp__buf_free(&f->body);
  mcp__free(f->location);
  mcp__free(f->msg);
  mcp__free(f->dpop_nonce);
  f->location = f->msg = f->dpop_nonce = NULL;
}

static bool cancelled(mcp_oauth *a) { return atomic_load(&a->cancelled); }

/*
 * One blocking request to |url|.  |ctype| and |body| for a POST; |auth| an
 * Authorization header value or NULL.  Returns MCP_OK with f->status set
 * (any status), or the transport error.
 */
static mcp_status fetch_dpop(mcp_oauth *a, const char *method, const char *url, const char *ctype,
                             const char *auth, const char *body, const char *dpop, fetch_result *f,
                             mcp_error *err) {
  memset(f, 0, sizeof(*f));
  mcp__buf_init(&f->body);
  if (cancelled(a)) return mcp__error_set(err, MCP_ECANCELLED, "authorization cancelled");
  mcp_url *u = NULL;
  mcp_status st = mcp__url_parse(url, &u, err);
  if (st) return st;
  mcp_http_config cfg = {0};
  cfg.scheme = u->scheme;
  cfg.host = u->host;
  cfg.port = u->port;
  cfg.mode = MCP_HTTP_VERSION_1_1;
  cfg.tls = a->tls;
  cfg.connect_timeout_ms = a->timeout_ms;
  mcp_http_client *hc = NULL;
  if ((st = mcp__http_client_new(&cfg, &hc, err))) {
    mcp__url_free(u);
    return st;
  }
  pthread_mutex_init(&f->mu, NULL);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&f->cv, &ca);
  pthread_condattr_destroy(&ca);
  mcp_http_header h[5];
  size_t n = 0;
  h[n++] = (mcp_http_header){"accept", "application/json"};
  if (ctype) h[n++] = (mcp_http_header){"content-type", ctype};
  if (auth) h[n++] = (mcp_http_header){"authorization", auth};
  if (dpop) h[n++] = (mcp_http_header){"dpop", dpop};
  uint64_t id = 0;
  st = mcp__http_submit(hc, method, u->path_and_query, h, n, body, body ? strlen(body) : 0,
                        &fetch_cb, f, &id, err);
  if (st == MCP_OK) {
    int64_t deadline = mcp__now_ms() + a->timeout_ms;
    pthread_mutex_lock(&a->mu);
    a->cur = f; /* mcp__oauth_cancel() wakes us */
    pthread_mutex_unlock(&a->mu);
    pthread_mutex_lock(&f->mu);
    while (!f->done && !cancelled(a) && mcp__now_ms() < deadline) {
      struct timespec ts = mcp__ts_from_ms(deadline);
      pthread_cond_timedwait(&f->cv, &f->mu, &ts);
    }
    bool unfinished = !f->done;
    pthread_mutex_unlock(&f->mu);
    pthread_mutex_lock(&a->mu);
    a->cur = NULL;
    pthread_mutex_unlock(&a->mu);
    if (unfinished) {
      mcp__http_cancel(hc, id);
      if (cancelled(a)) st = mcp__error_set(err, MCP_ECANCELLED, "authorization cancelled");
      else
        st = mcp__error_set(err, MCP_ETIMEDOUT, "%s %s: no answer in %lld ms", method, url,
                            (long long)a->timeout_ms);
    }
  }
  mcp__http_client_free(hc); /* ends the request (on_done ran) */
  if (st == MCP_OK && f->st != MCP_OK)
    st = mcp__error_set(err, f->st, "%s %s: %s", method, url,
                        f->msg ? f->msg : mcp_strerror(f->st));
  if (st == MCP_OK && f->too_big)
    st = mcp__error_set(err, MCP_ETOOBIG, "%s %s: the answer exceeds %zu bytes", method, url,
                        MAX_BODY);
  pthread_cond_destroy(&f->cv);
  pthread_mutex_destroy(&f->mu);
  mcp__url_free(u);
  if (st) fetch_clear(f);
  return st;
}

static mcp_status fetch(mcp_oauth *a, const char *method, const char *url, const char *ctype,
                        const char *auth, const char *body, fetch_result *f, mcp_error *err) {
  return fetch_dpop(a, method, url, ctype, auth, body, NULL, f, err);
}

/* GETs |url| and parses a JSON object; NULL (no error) on a non-200 or a
 * body that is not an object.  Transport errors go to |err| with *st. */
static json_object *fetch_json(mcp_oauth *a, const char *url, mcp_status *st, mcp_error *err) {
  fetch_result f;
  *st = fetch(a, "GET", url, NULL, NULL, NULL, &f, err);
  if (*st) return NULL;
  json_object *o = NULL;
  if (f.status == 200 && f.body.len)
    o = mcp__json_parse_document(f.body.data, f.body.len, 32, NULL, NULL, 0);
  fetch_clear(&f);
  if (o && !json_object_is_type(o, json_type_object)) {
    json_object_put(o);
    o = NULL;
  }
  return o;
}

/* ========================================================================== */
/* The engine                                                                 */
/* ========================================================================== */

mcp_status mcp__oauth_new(const mcp_oauth_options *opts, const char *server_url,
                          const mcp_tls_settings *tls, mcp_oauth **out, mcp_error *err) {
  *out = NULL;
  if (!opts || !server_url) return mcp__error_set(err, MCP_EINVAL, "invalid argument");
  mcp_oauth *a = mcp__calloc(1, sizeof(*a));
  if (!a) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  pthread_mutex_init(&a->mu, NULL);
  a->o = mcp__oauth_options_dup(opts);
  a->server_url = mcp__strdup(server_url);
  a->store_key = mcp__oauth_canonical_resource(server_url);
  a->timeout_ms = HTTP_TIMEOUT_MS;
  if (tls && mcp__tls_settings_copy(&a->tls, tls)) {
    mcp__oauth_free(a);
    return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  }
  if (!a->o || !a->server_url || !a->store_key) {
    mcp__oauth_free(a);
    return mcp__error_set(err, MCP_ENOMEM, "out of memory or a bad server URL");
  }
  if (a->o->client_id) {
    set_field(&a->client_id, a->o->client_id);
    set_field(&a->client_secret, a->o->client_secret);
  }
  /* An unsafe token store fails here, naming its path, rather than being
   * read or silently ignored. */
  mcp_status st = mcp__oauth_load_state(a, err);
  if (st != MCP_OK) {
    mcp__oauth_free(a);
    return st;
  }
  *out = a;
  return MCP_OK;
}

void mcp__oauth_free(mcp_oauth *a) {
  if (!a) return;
  mcp_oauth_options_free(a->o);
  mcp__free(a->server_url);
  mcp__free(a->store_key);
  mcp__tls_settings_clear(&a->tls);
  set_field(&a->access_token, NULL);
  set_field(&a->refresh_token, NULL);
  set_field(&a->client_secret, NULL);
  mcp__free(a->scope);
  mcp__free(a->issuer);
  mcp__free(a->token_endpoint);
  mcp__free(a->client_id);
  mcp__free(a->auth_method);
  mcp__free(a->reg_issuer);
  json_object_put(a->regs);
  mcp__free(a->req_scope);
  mcp__dpop_key_free(a->dpop_key);
  mcp__free(a->as_nonce);
  mcp__free(a->rs_nonce);
  pthread_mutex_destroy(&a->mu);
  mcp__free(a);
}

char *mcp__oauth_token(mcp_oauth *a) {
  pthread_mutex_lock(&a->mu);
  char *t = a->access_token ? mcp__strdup(a->access_token) : NULL;
  pthread_mutex_unlock(&a->mu);
  return t;
}

char *mcp__oauth_authorization(mcp_oauth *a) {
  pthread_mutex_lock(&a->mu);
  char *t = a->access_token
                ? mcp__asprintf("%s %s", a->token_dpop && a->dpop_key ? "DPoP" : "Bearer",
                                a->access_token)
                : NULL;
  pthread_mutex_unlock(&a->mu);
  return t;
}

char *mcp__oauth_dpop_header(mcp_oauth *a, const char *method, const char *url,
                             const char *authorization) {
  if (!authorization || strncasecmp(authorization, "DPoP ", 5) != 0) return NULL;
  pthread_mutex_lock(&a->mu);
  mcp_dpop_key *k = a->dpop_key; /* never freed before the engine */
  char *nonce = a->rs_nonce ? mcp__strdup(a->rs_nonce) : NULL;
  pthread_mutex_unlock(&a->mu);
  char *proof = NULL;
  if (k)
    mcp__dpop_proof(k, method, url, authorization + 5, nonce, (int64_t)time(NULL), &proof, NULL);
  mcp__free(nonce);
  return proof;
}

void mcp__oauth_dpop_nonce(mcp_oauth *a, const char *nonce) {
  if (!nonce || !*nonce) return;
  pthread_mutex_lock(&a->mu);
  if (!a->rs_nonce || strcmp(a->rs_nonce, nonce) != 0) {
    char *c = mcp__strdup(nonce);
    if (c) {
      mcp__free(a->rs_nonce);
      a->rs_nonce = c;
    }
  }
  pthread_mutex_unlock(&a->mu);
}

void mcp__oauth_cancel(mcp_oauth *a) {
  atomic_store(&a->cancelled, true);
  /* Lock order: a->mu, then the waiting fetch's mu. */
  pthread_mutex_lock(&a->mu);
  if (a->cur) {
    pthread_mutex_lock(&a->cur->mu);
    pthread_cond_broadcast(&a->cur->cv);
    pthread_mutex_unlock(&a->cur->mu);
  }
  pthread_mutex_unlock(&a->mu);
}

static mcp_status discover(mcp_oauth *a, const mcp_oauth_challenge *ch, mcp_oauth_discovery *d,
                           mcp_error *err) {
  memset(d, 0, sizeof(*d));
  mcp_status st = MCP_OK;
  json_object *prm = NULL;
  /* 1. Protected Resource Metadata: the challenge's URL, else the
   *    well-known URLs (path-based, then root). */
  if (ch->resource_metadata && mcp__oauth_is_url(ch->resource_metadata)) {
    prm = fetch_json(a, ch->resource_metadata, &st, err);
    if (st) return st;
  }
  if (!prm) {
    char **urls = NULL;
    if ((st = mcp__oauth_prm_urls(a->server_url, &urls)))
      return mcp__error_set(err, st, "bad server URL");
    for (char **u = urls; *u && !prm; u++) {
      prm = fetch_json(a, *u, &st, err);
      if (st) break;
    }
    mcp__oauth_strv_free(urls);
    if (st) return st;
  }
  char *as_base = NULL;
  st = mcp__oauth_use_prm(prm, a->server_url, d, &as_base, err);
  json_object_put(prm);
  if (st) return st;
  /* 2. Authorization server metadata, RFC 8414 and OIDC, in order. */
  char **urls = NULL;
  if ((st = mcp__oauth_as_urls(as_base, &urls))) {
    mcp__free(as_base);
    return mcp__error_set(err, st, "bad authorization server URL");
  }
  /* RFC 8414 section 3.3: a document whose issuer is not the one we built
   * its URL from is not used; the next candidate may still be good (an
   * OIDC document beside a bad RFC 8414 one), but when every document
   * found was refused there is no falling back to default endpoints. */
  mcp_error bad = MCP_ERROR_INIT;
  bool refused = false;
  for (char **u = urls; *u && !d->as; u++) {
    d->as = fetch_json(a, *u, &st, err);
    if (st) break;
    if (d->as && mcp__oauth_check_as_issuer(d->as, as_base, refused ? NULL : &bad)) {
      json_object_put(d->as);
      d->as = NULL;
      refused = true;
    }
  }
  mcp__oauth_strv_free(urls);
  if (!st && !d->as && refused)
    st = mcp__error_set(err, MCP_EPROTO, "%s",
                        bad.message ? bad.message
                                    : "the authorization server metadata names another issuer");
  mcp_error_clear(&bad);
  if (st) {
    mcp__free(as_base);
    return st;
  }
  st = mcp__oauth_use_as(as_base, d, err);
  mcp__free(as_base);
  return st;
}

/* True for a redirect to this machine (localhost, 127.0.0.0/8, [::1]) or
 * to a custom scheme: what OIDC calls a native application's. */
static bool redirect_is_native(const char *uri) {
  const char *p;
  if (strncasecmp(uri, "http://", 7) == 0) p = uri + 7;
  else if (strncasecmp(uri, "https://", 8) == 0) p = uri + 8;
  else return true; /* com.example.app:/callback */
  size_t n = strcspn(p, ":/?#");
  if (*p == '[') return strncmp(p, "[::1]", 5) == 0;
  return (n == 9 && strncasecmp(p, "localhost", 9) == 0) || strncmp(p, "127.", 4) == 0;
}

/* Dynamic Client Registration (RFC 7591): we register as a public native
 * client (section 2: token_endpoint_auth_method "none"; RFC 8252 section
 * 7.3: a loopback redirect), for the code grant with refresh.  Section
 * 3.2.1: the answer must carry client_id and may change the method. */
static mcp_status register_client(mcp_oauth *a, const mcp_oauth_discovery *d, mcp_error *err) {
  if (!d->registration_endpoint)
    return mcp__error_set(err, MCP_ECONFIG,
                          "the authorization server offers no dynamic client registration: "
                          "configure a client id (pre-registration) or a client metadata URL");
  json_object *req = json_object_new_object();
  if (!req) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  const char *redirect = a->o->redirect_uri ? a->o->redirect_uri : DEFAULT_REDIRECT;
  add_str(req, "client_name", a->o->client_name ? a->o->client_name : DEFAULT_CLIENT_NAME);
  json_object *ru = json_object_new_array(), *gt = json_object_new_array(),
              *rt = json_object_new_array();
  json_object_array_add(ru, json_object_new_string(redirect));
  json_object_array_add(gt, json_object_new_string("authorization_code"));
  json_object_array_add(gt, json_object_new_string("refresh_token"));
  json_object_array_add(rt, json_object_new_string("code"));
  json_object_object_add(req, "redirect_uris", ru);
  json_object_object_add(req, "grant_types", gt);
  json_object_object_add(req, "response_types", rt);
  add_str(req, "token_endpoint_auth_method", "none");
  /* SEP-837 (OIDC Registration 1.0): a loopback or custom-scheme redirect
   * is a native application; omitted, OIDC servers assume "web" and may
   * refuse a loopback redirect. */
  add_str(req, "application_type", redirect_is_native(redirect) ? "native" : "web");
  if (a->o->scopes) add_str(req, "scope", a->o->scopes);
  char *body = mcp__strdup(
      json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
  json_object_put(req);
  if (!body) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  fetch_result f;
  mcp_status st = fetch(a, "POST", d->registration_endpoint, "application/json", NULL, body, &f,
                        err);
  mcp__free(body);
  if (st) return st;
  json_object *o = f.body.len ? mcp__json_parse_document(f.body.data, f.body.len, 16, NULL, NULL, 0)
                              : NULL;
  if (f.status < 200 || f.status >= 300) {
    st = mcp__oauth_as_error(f.status, o, "dynamic client registration was refused", err);
  } else if (!mcp__oauth_jstr(o, "client_id") || !*mcp__oauth_jstr(o, "client_id")) {
    st = mcp__error_set(err, MCP_EPROTO, "the registration response has no client_id");
  } else {
    set_field(&a->client_id, mcp__oauth_jstr(o, "client_id"));
    set_field(&a->client_secret, mcp__oauth_jstr(o, "client_secret"));
    const char *m = mcp__oauth_jstr(o, "token_endpoint_auth_method");
    set_field(&a->auth_method,
              m ? m : mcp__oauth_pick_auth_method(d, mcp__oauth_jstr(o, "client_secret") != NULL));
    set_field(&a->reg_issuer, d->issuer);
    /* Kept beside the others: a server that moves back to this issuer
     * finds it again (SEP-2352: separate state per authorization server). */
    json_object *e = json_object_new_object();
    if (!a->regs) a->regs = json_object_new_object();
    if (e && a->regs && d->issuer) {
      add_str(e, "client_id", a->client_id);
      add_str(e, "client_secret", a->client_secret);
      add_str(e, "token_endpoint_auth_method", a->auth_method);
      json_object_object_add(a->regs, d->issuer, e);
    } else {
      json_object_put(e);
    }
  }
  json_object_put(o);
  fetch_clear(&f);
  return st;
}

/* Makes sure a client id is known for |d|'s server, in the order of MCP
 * 2025-11-25 "Client Registration Approaches": pre-registered (configured),
 * a Client ID Metadata Document (its URL is the client_id, used only when
 * the AS says client_id_metadata_document_supported), then Dynamic Client
 * Registration, reusing one we made before with this same issuer. */
static mcp_status ensure_client(mcp_oauth *a, const mcp_oauth_discovery *d, mcp_error *err) {
  /* SEP-2352: a client id pre-registered with one authorization server
   * is never sent to another. */
  if (a->o->client_id && a->o->client_issuer && d->issuer &&
      strcmp(a->o->client_issuer, d->issuer) != 0) {
    char qc[MCP_QUOTE_SHORT], qi[MCP_QUOTE_SHORT];
    return mcp__error_set(
        err, MCP_ECONFIG,
        "the configured client id is registered with \"%s\", but this server's authorization "
        "server is \"%s\": configure a client id for it, or none (dynamic registration)",
        mcp__quote(qc, sizeof(qc), a->o->client_issuer, strlen(a->o->client_issuer)),
        mcp__quote(qi, sizeof(qi), d->issuer, strlen(d->issuer)));
  }
  if (a->o->client_id) {
    set_field(&a->client_id, a->o->client_id);
    set_field(&a->client_secret, a->o->client_secret);
    set_field(&a->auth_method, a->o->private_key_pem
                                   ? "private_key_jwt"
                                   : mcp__oauth_pick_auth_method(d, a->o->client_secret != NULL));
    set_field(&a->reg_issuer, NULL);
    return MCP_OK;
  }
  if (a->o->client_metadata_url && d->as) {
    json_object *v = NULL;
    if (json_object_object_get_ex(d->as, "client_id_metadata_document_supported", &v) &&
        json_object_get_boolean(v)) {
      set_field(&a->client_id, a->o->client_metadata_url);
      set_field(&a->client_secret, NULL);
      set_field(&a->auth_method, "none");
      set_field(&a->reg_issuer, NULL);
      return MCP_OK;
    }
  }
  if (a->client_id && a->reg_issuer && strcmp(a->reg_issuer, d->issuer) == 0) return MCP_OK;
  json_object *e = NULL;
  if (a->regs && d->issuer && json_object_object_get_ex(a->regs, d->issuer, &e) &&
      mcp__oauth_jstr(e, "client_id")) {
    set_field(&a->client_id, mcp__oauth_jstr(e, "client_id"));
    set_field(&a->client_secret, mcp__oauth_jstr(e, "client_secret"));
    set_field(&a->auth_method, mcp__oauth_jstr(e, "token_endpoint_auth_method"));
    set_field(&a->reg_issuer, d->issuer);
    return MCP_OK;
  }
  return register_client(a, d, err);
}

/* Adds client authentication to a token request. */
static mcp_status client_auth(mcp_oauth *a, const mcp_oauth_discovery *d, mcp_buf *form,
                              char **auth_header, mcp_error *err) {
  *auth_header = NULL;
  const char *m = a->auth_method ? a->auth_method : "none";
  /* RFC 7523 section 2.2 (RFC 7521 section 4.2): a signed assertion in
   * the body; its aud is the issuer (RFC 7523 section 3 allows the token
   * endpoint, which we use only when the issuer is unknown). */
  if (strcmp(m, "private_key_jwt") == 0) {
    if (!a->o->private_key_pem)
      return mcp__error_set(err, MCP_ECONFIG, "private_key_jwt needs a private key");
    char *jwt = NULL;
    const char *aud = d->issuer ? d->issuer : d->token_endpoint;
    mcp_status st = mcp__oauth_jwt_assertion(a->o->private_key_pem, a->o->signing_alg, a->client_id,
                                             aud, (int64_t)time(NULL), &jwt, err);
    if (st) return st;
    if (mcp__oauth_form_add(form, "client_assertion_type",
                            "urn:ietf:params:oauth:client-assertion-type:jwt-bearer") ||
        mcp__oauth_form_add(form, "client_assertion", jwt)) {
      mcp__free(jwt);
      return mcp__error_set(err, MCP_ENOMEM, "out of memory");
    }
    mcp__free(jwt);
    return MCP_OK;
  }
  if (strcmp(m, "client_secret_basic") == 0 && a->client_secret) {
    /* RFC 6749 2.3.1: form-encode id and secret, then base64. */
    char *id = mcp__oauth_urlencode(a->client_id), *sec = mcp__oauth_urlencode(a->client_secret);
    char *pair = id && sec ? mcp__asprintf("%s:%s", id, sec) : NULL;
    char *b64 = pair ? mcp__oauth_b64((unsigned char *)pair, strlen(pair)) : NULL;
    *auth_header = b64 ? mcp__asprintf("Basic %s", b64) : NULL;
    if (pair) OPENSSL_cleanse(pair, strlen(pair));
    mcp__free(id);
    mcp__free(sec);
    mcp__free(pair);
    mcp__free(b64);
    return *auth_header ? MCP_OK : mcp__error_set(err, MCP_ENOMEM, "out of memory");
  }
  /* A public client names itself in the body (RFC 6749 section 3.2.1);
   * client_secret_post adds the secret there (section 2.3.1). */
  if (mcp__oauth_form_add(form, "client_id", a->client_id))
    return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  if (strcmp(m, "client_secret_post") == 0 && a->client_secret &&
      mcp__oauth_form_add(form, "client_secret", a->client_secret))
    return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  return MCP_OK;
}

/* DPoP for the token requests of |d|'s authorization server: as the
 * host said, or (auto) when its metadata lists ES256 among
 * dpop_signing_alg_values_supported; for a refresh (no metadata at hand),
 * when the token being refreshed is bound (RFC 9449 section 5). */
static bool want_dpop(mcp_oauth *a, const mcp_oauth_discovery *d) {
  if (a->o->dpop == MCP_OAUTH_DPOP_OFF) return false;
  if (a->o->dpop == MCP_OAUTH_DPOP_ON) return true;
  if (d && d->as)
    return mcp__oauth_json_array_has(d->as, "dpop_signing_alg_values_supported", "ES256");
  return a->token_dpop;
}

/* The engine's DPoP key, made on first use.  Flow thread. */
static mcp_status ensure_dpop_key(mcp_oauth *a, mcp_error *err) {
  if (a->dpop_key) return MCP_OK;
  mcp_dpop_key *k = NULL;
  mcp_status st = mcp__dpop_key_new(&k, err);
  if (st) return st;
  pthread_mutex_lock(&a->mu);
  a->dpop_key = k;
  pthread_mutex_unlock(&a->mu);
  return MCP_OK;
}

/* An error answer whose error is use_dpop_nonce (RFC 9449 section 8). */
static bool asks_for_nonce(const fetch_result *f) {
  if (f->status != 400 || !f->dpop_nonce || !f->body.len) return false;
  json_object *o = mcp__json_parse_document(f->body.data, f->body.len, 8, NULL, NULL, 0);
  const char *e = mcp__oauth_jstr(o, "error");
  bool yes = e && strcmp(e, "use_dpop_nonce") == 0;
  json_object_put(o);
  return yes;
}

/* POSTs |form| to |url| and takes the token it returns.  With |dpop|, a
 * fresh proof goes with it, and a use_dpop_nonce answer is retried once
 * with the server's nonce (RFC 9449 section 8). */
static mcp_status token_request(mcp_oauth *a, const char *url, const char *form,
                                const char *auth_header, bool dpop, mcp_oauth_token *tok,
                                mcp_error *err) {
  mcp_status st = dpop ? ensure_dpop_key(a, err) : MCP_OK;
  for (int attempt = 0; st == MCP_OK; attempt++) {
    char *proof = NULL;
    if (dpop && (st = mcp__dpop_proof(a->dpop_key, "POST", url, NULL, a->as_nonce,
                                      (int64_t)time(NULL), &proof, err)))
      break;
    fetch_result f;
    st = fetch_dpop(a, "POST", url, "application/x-www-form-urlencoded", auth_header, form, proof,
                    &f, err);
    mcp__free(proof);
    if (st) break;
    /* Section 8: the server may hand out a new nonce with any answer. */
    if (dpop && f.dpop_nonce) set_field(&a->as_nonce, f.dpop_nonce);
    if (dpop && attempt == 0 && asks_for_nonce(&f)) {
      fetch_clear(&f);
      continue;
    }
    st = mcp__oauth_parse_token_response(f.status, f.body.data, f.body.len, (int64_t)time(NULL),
                                         tok, err);
    if (f.body.data) OPENSSL_cleanse(f.body.data, f.body.len);
    fetch_clear(&f);
    break;
  }
  return st;
}

/* Takes |tok| as the current token and saves the state. */
static void adopt(mcp_oauth *a, const mcp_oauth_discovery *d, mcp_oauth_token *tok) {
  pthread_mutex_lock(&a->mu);
  set_field(&a->access_token, tok->access_token);
  a->token_dpop = tok->dpop && a->dpop_key;
  pthread_mutex_unlock(&a->mu);
  if (tok->refresh_token) set_field(&a->refresh_token, tok->refresh_token);
  if (tok->scope) set_field(&a->scope, tok->scope);
  a->expires_at = tok->expires_at;
  if (d) {
    set_field(&a->issuer, d->issuer);
    set_field(&a->token_endpoint, d->token_endpoint);
  }
  mcp__oauth_save_state(a);
}

static bool scope_has(const char *scopes, const char *s) {
  size_t n = strlen(s);
  for (const char *p = scopes; p && *p;) {
    while (*p == ' ') p++;
    const char *e = p + strcspn(p, " ");
    if ((size_t)(e - p) == n && strncmp(p, s, n) == 0) return true;
    p = e;
  }
  return false;
}

/* The scope to ask for: the challenge's (RFC 6750 section 3; MCP
 * 2025-11-25 "Scope Selection Strategy"), else the host's configured
 * scopes, else the PRM's scopes_supported (the spec's fallback), else none;
 * plus offline_access when the AS lists it and we want a refresh token
 * (OIDC Core section 11). */
static char *select_scope(mcp_oauth *a, const mcp_oauth_challenge *ch, const mcp_oauth_discovery *d,
                          bool want_refresh) {
  const char *base = ch->scope && *ch->scope           ? ch->scope
                     : a->o->scopes                    ? a->o->scopes
                     : d->prm_scopes && *d->prm_scopes ? d->prm_scopes
                                                       : NULL;
  /* SEP-2350: a challenge after an authorization (step-up) asks for the
   * union of what we asked before and what the challenge names, so that a
   * token good for one operation does not lose the others. */
  char *un = NULL;
  if (ch->scope && *ch->scope && a->req_scope && *a->req_scope) {
    if (!(un = mcp__oauth_scope_union(a->req_scope, ch->scope))) return NULL;
    base = un;
  }
  bool add_offline = want_refresh &&
                     mcp__oauth_json_array_has(d->as, "scopes_supported", "offline_access") &&
                     !(base && scope_has(base, "offline_access"));
  char *out = !base && !add_offline ? NULL
              : !base               ? mcp__strdup("offline_access")
              : add_offline         ? mcp__asprintf("%s offline_access", base)
                                    : mcp__strdup(base);
  mcp__free(un);
  return out;
}

/* The authorization code grant with PKCE (OAuth 2.1 section 4.1): the
 * host's authorize callback takes a person to the URL and returns the
 * redirect it got; the code is then exchanged at the token endpoint
 * (RFC 6749 section 4.1.3: the same redirect_uri; RFC 7636 section 4.5:
 * the verifier). */
static mcp_status grant_authorization_code(mcp_oauth *a, const mcp_oauth_challenge *ch,
                                           const mcp_oauth_discovery *d, mcp_oauth_token *tok,
                                           mcp_error *err) {
  if (!a->o->authorize)
    return mcp__error_set(
        err, MCP_ECONFIG,
        "the server needs a person to authorize access: set an authorize callback "
        "(mcp_oauth_options_set_authorize)");
  if (!d->authorization_endpoint)
    return mcp__error_set(err, MCP_EPROTO,
                          "the authorization server metadata has no authorization_endpoint");
  /* RFC 7636 / OAuth 2.1 section 4.1.1: PKCE with S256, always.  An AS
   * that lists methods without S256 is refused; one that lists none is
   * tried (MCP 2025-11-25 asks to refuse that too: see the report). */
  if (d->as && mcp__oauth_json_has(d->as, "code_challenge_methods_supported") &&
      !mcp__oauth_json_array_has(d->as, "code_challenge_methods_supported", "S256"))
    return mcp__error_set(err, MCP_EPROTO, "the authorization server does not support PKCE S256");
  const char *redirect = a->o->redirect_uri ? a->o->redirect_uri : DEFAULT_REDIRECT;
  char *verifier = NULL, *challenge = NULL, *state = NULL, *scope = NULL, *url = NULL;
  char *redirect_got = NULL, *code = NULL, *auth_header = NULL;
  /* SEP-2468: the issuer of the validated metadata is recorded with the
   * verifier and the state, for the redirect's iss (RFC 9207). */
  char *issuer = mcp__strdup(d->issuer);
  json_object *iss_sup = NULL;
  bool iss_advertised = d->as &&
                        json_object_object_get_ex(
                            d->as, "authorization_response_iss_parameter_supported", &iss_sup) &&
                        json_object_is_type(iss_sup, json_type_boolean) &&
                        json_object_get_boolean(iss_sup);
  mcp_buf q, form;
  mcp__buf_init(&q);
  mcp__buf_init(&form);
  mcp_status st = mcp__oauth_pkce(&verifier, &challenge);
  if (st) {
    mcp__error_set(err, st, "could not make a PKCE verifier");
    goto out;
  }
  /* RFC 6749 section 10.12: an unguessable state binds the redirect to
   * this request (CSRF); RFC 8707 section 2.1: the resource goes in both
   * the authorization and the token request, as MCP requires. */
  state = mcp__oauth_random(24);
  scope = select_scope(a, ch, d, true);
  if (!issuer || !state || mcp__oauth_form_add(&q, "response_type", "code") ||
      mcp__oauth_form_add(&q, "client_id", a->client_id) ||
      mcp__oauth_form_add(&q, "redirect_uri", redirect) ||
      mcp__oauth_form_add(&q, "code_challenge", challenge) ||
      mcp__oauth_form_add(&q, "code_challenge_method", "S256") ||
      mcp__oauth_form_add(&q, "state", state) || mcp__oauth_form_add(&q, "scope", scope) ||
      mcp__oauth_form_add(&q, "resource", d->resource) ||
      !(url = mcp__asprintf("%s%c%s", d->authorization_endpoint,
                            strchr(d->authorization_endpoint, '?') ? '&' : '?', q.data))) {
    st = mcp__error_set(err, MCP_ENOMEM, "out of memory");
    goto out;
  }
  if (cancelled(a)) {
    st = mcp__error_set(err, MCP_ECANCELLED, "authorization cancelled");
    goto out;
  }
  mcp_error cberr = MCP_ERROR_INIT;
  if (a->person_fn) a->person_fn(a->person_user, true);
  st = a->o->authorize(a->o->authorize_user, url, redirect, &redirect_got, &cberr);
  if (a->person_fn) a->person_fn(a->person_user, false);
  if (st != MCP_OK || !redirect_got) {
    mcp__error_set(err, st ? st : MCP_ECANCELLED, "authorization did not complete%s%s",
                   cberr.message ? ": " : "", cberr.message ? cberr.message : "");
    mcp_error_clear(&cberr);
    st = st ? st : MCP_ECANCELLED;
    goto out;
  }
  mcp_error_clear(&cberr);
  /* RFC 9207 first: a response from another server (mix-up) is neither
   * redeemed nor read for its error. */
  if ((st = mcp__oauth_check_iss(redirect_got, issuer, iss_advertised, err))) goto out;
  char *got_state = mcp__oauth_query_param(redirect_got, "state");
  char *e = mcp__oauth_query_param(redirect_got, "error");
  if (e) {
    char *ed = mcp__oauth_query_param(redirect_got, "error_description");
    char qe[MCP_QUOTE_SHORT], qd[MCP_QUOTE_LONG / 4];
    st = mcp__error_set(err, MCP_EHTTP, "the authorization server refused: %s%s%s%s",
                        mcp__quote(qe, sizeof(qe), e, strlen(e)), ed ? " (" : "",
                        ed ? mcp__quote(qd, sizeof(qd), ed, strlen(ed)) : "", ed ? ")" : "");
    mcp__free(ed);
  } else if (!got_state || strcmp(got_state, state) != 0) {
    st = mcp__error_set(err, MCP_EPROTO,
                        "the authorization redirect's state does not match the request's");
  } else if (!(code = mcp__oauth_query_param(redirect_got, "code")) || !*code) {
    st = mcp__error_set(err, MCP_EPROTO, "the authorization redirect carries no code");
  }
  mcp__free(e);
  mcp__free(got_state);
  if (st) goto out;
  if (mcp__oauth_form_add(&form, "grant_type", "authorization_code") ||
      mcp__oauth_form_add(&form, "code", code) ||
      mcp__oauth_form_add(&form, "redirect_uri", redirect) ||
      mcp__oauth_form_add(&form, "code_verifier", verifier) ||
      mcp__oauth_form_add(&form, "resource", d->resource)) {
    st = mcp__error_set(err, MCP_ENOMEM, "out of memory");
    goto out;
  }
  if ((st = client_auth(a, d, &form, &auth_header, err))) goto out;
  st = token_request(a, d->token_endpoint, form.data, auth_header, want_dpop(a, d), tok, err);
out:
  if (form.data) OPENSSL_cleanse(form.data, form.len);
  if (auth_header) OPENSSL_cleanse(auth_header, strlen(auth_header));
  mcp__buf_free(&q);
  mcp__buf_free(&form);
  if (st == MCP_OK) set_field(&a->req_scope, scope);
  if (verifier) OPENSSL_cleanse(verifier, strlen(verifier));
  if (code) OPENSSL_cleanse(code, strlen(code));
  if (redirect_got) OPENSSL_cleanse(redirect_got, strlen(redirect_got));
  mcp__free(verifier);
  mcp__free(challenge);
  mcp__free(state);
  mcp__free(scope);
  mcp__free(url);
  mcp__free(issuer);
  mcp_free(redirect_got);
  mcp__free(code);
  mcp__free(auth_header);
  return st;
}

/* RFC 6749 section 4.4: a confidential client asks for a token on its own
 * behalf, no person involved; hence a configured client id. */
static mcp_status grant_client_credentials(mcp_oauth *a, const mcp_oauth_challenge *ch,
                                           const mcp_oauth_discovery *d, mcp_oauth_token *tok,
                                           mcp_error *err) {
  if (!a->o->client_id)
    return mcp__error_set(err, MCP_ECONFIG,
                          "the client credentials grant needs a configured client id");
  mcp_buf form;
  mcp__buf_init(&form);
  char *auth_header = NULL, *scope = select_scope(a, ch, d, false);
  mcp_status st = MCP_OK;
  if (mcp__oauth_form_add(&form, "grant_type", "client_credentials") ||
      mcp__oauth_form_add(&form, "scope", scope) ||
      mcp__oauth_form_add(&form, "resource", d->resource)) {
    st = mcp__error_set(err, MCP_ENOMEM, "out of memory");
    goto out;
  }
  if ((st = client_auth(a, d, &form, &auth_header, err))) goto out;
  st = token_request(a, d->token_endpoint, form.data, auth_header, want_dpop(a, d), tok, err);
out:
  if (form.data) OPENSSL_cleanse(form.data, form.len);
  if (auth_header) OPENSSL_cleanse(auth_header, strlen(auth_header));
  mcp__buf_free(&form);
  mcp__free(auth_header);
  mcp__free(scope);
  return st;
}

/* SEP-990 (Enterprise-Managed Authorization): exchange the IdP's ID token
 * for an ID-JAG at the IdP (RFC 8693), then present it to the
 * authorization server as a JWT bearer grant (RFC 7523). */
static mcp_status grant_id_jag(mcp_oauth *a, const mcp_oauth_challenge *ch,
                               const mcp_oauth_discovery *d, mcp_oauth_token *tok, mcp_error *err) {
  if (!a->o->idp_token_endpoint || !a->o->idp_id_token || !a->o->client_id)
    return mcp__error_set(
        err, MCP_ECONFIG,
        "the ID-JAG grant needs an IdP token endpoint, an ID token and a client id");
  mcp_buf form;
  mcp__buf_init(&form);
  char *auth_header = NULL, *scope = select_scope(a, ch, d, false);
  mcp_oauth_token jag = {0};
  mcp_status st = MCP_OK;
  if (mcp__oauth_form_add(&form, "grant_type", "urn:ietf:params:oauth:grant-type:token-exchange") ||
      mcp__oauth_form_add(&form, "requested_token_type",
                          "urn:ietf:params:oauth:token-type:id-jag") ||
      mcp__oauth_form_add(&form, "subject_token", a->o->idp_id_token) ||
      mcp__oauth_form_add(&form, "subject_token_type",
                          "urn:ietf:params:oauth:token-type:id_token") ||
      mcp__oauth_form_add(&form, "audience", d->issuer) ||
      mcp__oauth_form_add(&form, "resource", d->resource) ||
      mcp__oauth_form_add(&form, "scope", scope) ||
      mcp__oauth_form_add(&form, "client_id", a->o->idp_client_id)) {
    st = mcp__error_set(err, MCP_ENOMEM, "out of memory");
    goto out;
  }
  {
    fetch_result f;
    st = fetch(a, "POST", a->o->idp_token_endpoint, "application/x-www-form-urlencoded", NULL,
               form.data, &f, err);
    if (st) goto out;
    /* The exchange answers with token_type N_A: parse it loosely. */
    json_object *o = f.body.len
                         ? mcp__json_parse_document(f.body.data, f.body.len, 16, NULL, NULL, 0)
                         : NULL;
    if (f.status < 200 || f.status >= 300)
      st = mcp__oauth_as_error(f.status, o, "the IdP token exchange was refused", err);
    else if (!mcp__oauth_jstr(o, "access_token"))
      st = mcp__error_set(err, MCP_EPROTO, "the IdP token exchange returned no token");
    else if (!(jag.access_token = mcp__strdup(mcp__oauth_jstr(o, "access_token"))))
      st = mcp__error_set(err, MCP_ENOMEM, "out of memory");
    json_object_put(o);
    if (f.body.data) OPENSSL_cleanse(f.body.data, f.body.len);
    fetch_clear(&f);
    if (st) goto out;
  }
  OPENSSL_cleanse(form.data, form.len);
  mcp__buf_free(&form);
  mcp__buf_init(&form);
  if (mcp__oauth_form_add(&form, "grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer") ||
      mcp__oauth_form_add(&form, "assertion", jag.access_token) ||
      mcp__oauth_form_add(&form, "scope", scope) ||
      mcp__oauth_form_add(&form, "resource", d->resource)) {
    st = mcp__error_set(err, MCP_ENOMEM, "out of memory");
    goto out;
  }
  if ((st = client_auth(a, d, &form, &auth_header, err))) goto out;
  st = token_request(a, d->token_endpoint, form.data, auth_header, want_dpop(a, d), tok, err);
out:
  if (form.data) OPENSSL_cleanse(form.data, form.len);
  if (auth_header) OPENSSL_cleanse(auth_header, strlen(auth_header));
  mcp__buf_free(&form);
  mcp__free(auth_header);
  mcp__free(scope);
  mcp__oauth_token_clear(&jag);
  return st;
}

/* The host's workload JWT (SEP-1933): from its callback, its file (read
 * afresh each time: platforms rotate them), or the options.  *jwt a new
 * string (wipe it). */
static mcp_status workload_jwt(mcp_oauth *a, const mcp_oauth_discovery *d, char **jwt,
                               mcp_error *err) {
  *jwt = NULL;
  const mcp_oauth_options *o = a->o;
  if (o->workload_fn) {
    mcp_error cberr = MCP_ERROR_INIT;
    char *got = NULL;
    mcp_status st = o->workload_fn(o->workload_user, d->issuer ? d->issuer : d->token_endpoint,
                                   &got, &cberr);
    if (st == MCP_OK && got && *got) {
      *jwt = mcp__strdup(got);
      OPENSSL_cleanse(got, strlen(got));
      mcp_free(got);
      mcp_error_clear(&cberr);
      return *jwt ? MCP_OK : mcp__error_set(err, MCP_ENOMEM, "out of memory");
    }
    mcp_free(got);
    st = mcp__error_set(err, st ? st : MCP_ECONFIG, "the workload JWT callback gave no JWT%s%s",
                        cberr.message ? ": " : "", cberr.message ? cberr.message : "");
    mcp_error_clear(&cberr);
    return st;
  }
  if (o->workload_jwt) {
    *jwt = mcp__strdup(o->workload_jwt);
    return *jwt ? MCP_OK : mcp__error_set(err, MCP_ENOMEM, "out of memory");
  }
  if (!o->workload_jwt_file)
    return mcp__error_set(err, MCP_ECONFIG,
                          "the JWT bearer grant needs a workload JWT, its file or a callback "
                          "(mcp_oauth_options_set_workload_jwt)");
  /* A plain read: platforms hand these out through symbolic links (a
   * Kubernetes projected volume), and the JWT is no secret at rest. */
  FILE *fp = fopen(o->workload_jwt_file, "re");
  if (!fp)
    return mcp__error_set(err, MCP_ECONFIG, "cannot read the workload JWT file %s: %s",
                          o->workload_jwt_file, strerror(errno));
  char buf[16384];
  size_t n = fread(buf, 1, sizeof(buf), fp);
  bool big = n == sizeof(buf);
  fclose(fp);
  size_t b = 0;
  while (b < n && strchr(" \t\r\n", buf[b])) b++;
  while (n > b && strchr(" \t\r\n", buf[n - 1])) n--;
  mcp_status st = MCP_OK;
  if (big)
    st = mcp__error_set(err, MCP_ECONFIG, "the workload JWT file %s is over %zu bytes",
                        o->workload_jwt_file, sizeof(buf) - 1);
  else if (n == b)
    st = mcp__error_set(err, MCP_ECONFIG, "the workload JWT file %s is empty",
                        o->workload_jwt_file);
  else if (!(*jwt = mcp__strndup(buf + b, n - b)))
    st = mcp__error_set(err, MCP_ENOMEM, "out of memory");
  OPENSSL_cleanse(buf, sizeof(buf));
  return st;
}

/* SEP-1933 (RFC 7523 section 2.1): the host's workload JWT as the grant.
 * A JWT that has expired or names another audience is refused here,
 * before it goes anywhere, with a message saying which. */
static mcp_status grant_jwt_bearer(mcp_oauth *a, const mcp_oauth_challenge *ch,
                                   const mcp_oauth_discovery *d, mcp_oauth_token *tok,
                                   mcp_error *err) {
  char *jwt = NULL, *auth_header = NULL, *scope = NULL;
  mcp_buf form;
  mcp__buf_init(&form);
  mcp_status st = workload_jwt(a, d, &jwt, err);
  if (st) goto out;
  if ((st = mcp__oauth_check_workload_jwt(jwt, d->issuer, d->token_endpoint, (int64_t)time(NULL),
                                          err)))
    goto out;
  scope = select_scope(a, ch, d, false);
  if (mcp__oauth_form_add(&form, "grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer") ||
      mcp__oauth_form_add(&form, "assertion", jwt) || mcp__oauth_form_add(&form, "scope", scope) ||
      mcp__oauth_form_add(&form, "resource", d->resource)) {
    st = mcp__error_set(err, MCP_ENOMEM, "out of memory");
    goto out;
  }
  /* Client authentication is optional here (RFC 7523 section 3.1). */
  if (a->client_id && (st = client_auth(a, d, &form, &auth_header, err))) goto out;
  st = token_request(a, d->token_endpoint, form.data, auth_header, want_dpop(a, d), tok, err);
out:
  if (form.data) OPENSSL_cleanse(form.data, form.len);
  if (auth_header) OPENSSL_cleanse(auth_header, strlen(auth_header));
  if (jwt) OPENSSL_cleanse(jwt, strlen(jwt));
  mcp__buf_free(&form);
  mcp__free(auth_header);
  mcp__free(scope);
  mcp__free(jwt);
  return st;
}

/* The refresh_token grant (RFC 6749 section 6) against the last token
 * endpoint, with the resource again (RFC 8707 section 2.2).  A new
 * refresh token replaces the old (rotation, OAuth 2.1 section 4.3.1);
 * without one the old stays. */
static mcp_status try_refresh(mcp_oauth *a, mcp_error *err) {
  if (!a->refresh_token || !a->token_endpoint || !a->client_id)
    return mcp__error_set(err, MCP_ESTATE, "no refresh token");
  mcp_oauth_discovery d = {0};
  d.issuer = a->issuer;
  d.token_endpoint = a->token_endpoint;
  char *resource = mcp__oauth_canonical_resource(a->server_url);
  mcp_buf form;
  mcp__buf_init(&form);
  char *auth_header = NULL;
  mcp_oauth_token tok = {0};
  mcp_status st = MCP_OK;
  if (!resource || mcp__oauth_form_add(&form, "grant_type", "refresh_token") ||
      mcp__oauth_form_add(&form, "refresh_token", a->refresh_token) ||
      mcp__oauth_form_add(&form, "resource", resource)) {
    st = mcp__error_set(err, MCP_ENOMEM, "out of memory");
    goto out;
  }
  if ((st = client_auth(a, &d, &form, &auth_header, err))) goto out;
  if ((st = token_request(a, a->token_endpoint, form.data, auth_header, want_dpop(a, &d), &tok,
                          err)) == MCP_OK)
    adopt(a, NULL, &tok);
out:
  if (form.data) OPENSSL_cleanse(form.data, form.len);
  if (auth_header) OPENSSL_cleanse(auth_header, strlen(auth_header));
  mcp__buf_free(&form);
  mcp__free(auth_header);
  mcp__free(resource);
  mcp__oauth_token_clear(&tok);
  return st;
}

void mcp__oauth_set_person_hook(mcp_oauth *a, void (*fn)(void *user, bool waiting), void *user) {
  a->person_fn = fn;
  a->person_user = user;
}

mcp_status mcp__oauth_challenge(mcp_oauth *a, int http_status, const char *www_authenticate,
                                char **token, mcp_error *err) {
  *token = NULL;
  mcp_oauth_challenge ch;
  if (mcp__oauth_parse_challenge(www_authenticate, &ch) != MCP_OK) memset(&ch, 0, sizeof(ch));
  mcp_status st;
  /* An expired or revoked token (401, RFC 6750 section 3.1 invalid_token):
   * a refresh may be enough.  Never for a 403 insufficient_scope step-up:
   * a refresh cannot widen the scope (RFC 6749 section 6). */
  if (http_status == 401 && a->refresh_token) {
    mcp_error rerr = MCP_ERROR_INIT;
    st = try_refresh(a, &rerr);
    mcp_error_clear(&rerr);
    if (st == MCP_OK) {
      *token = mcp__oauth_token(a);
      mcp__oauth_challenge_clear(&ch);
      return *token ? MCP_OK : mcp__error_set(err, MCP_ENOMEM, "out of memory");
    }
    set_field(&a->refresh_token, NULL); /* spent or refused */
  }
  mcp_oauth_discovery d;
  st = discover(a, &ch, &d, err);
  if (st == MCP_OK)
    st = cancelled(a) ? mcp__error_set(err, MCP_ECANCELLED, "authorization cancelled") : MCP_OK;
  if (st == MCP_OK && a->o->grant == MCP_OAUTH_GRANT_AUTHORIZATION_CODE)
    st = ensure_client(a, &d, err);
  else if (st == MCP_OK && a->o->grant == MCP_OAUTH_GRANT_JWT_BEARER) {
    if (a->o->client_id) st = ensure_client(a, &d, err);
  } else if (st == MCP_OK) {
    if (!a->o->client_id)
      st = mcp__error_set(err, MCP_ECONFIG, "this grant needs a configured client id");
    else st = ensure_client(a, &d, err);
  }
  mcp_oauth_token tok = {0};
  if (st == MCP_OK) {
    switch (a->o->grant) {
    case MCP_OAUTH_GRANT_CLIENT_CREDENTIALS:
      st = grant_client_credentials(a, &ch, &d, &tok, err);
      break;
    case MCP_OAUTH_GRANT_ID_JAG: st = grant_id_jag(a, &ch, &d, &tok, err); break;
    case MCP_OAUTH_GRANT_JWT_BEARER: st = grant_jwt_bearer(a, &ch, &d, &tok, err); break;
    default: st = grant_authorization_code(a, &ch, &d, &tok, err); break;
    }
  }
  if (st == MCP_OK) {
    adopt(a, &d, &tok);
    *token = mcp__oauth_token(a);
    if (!*token) st = mcp__error_set(err, MCP_ENOMEM, "out of memory");
  } else if (a->reg_issuer && err && err->status == MCP_EHTTP && err->http_status == 401) {
    /* Our registration was rejected (invalid_client, RFC 6749 section
     * 5.2: 401 from the token endpoint): forget it, register afresh. */
    if (a->regs) json_object_object_del(a->regs, a->reg_issuer);
    set_field(&a->client_id, NULL);
    set_field(&a->client_secret, NULL);
    set_field(&a->reg_issuer, NULL);
  }
  mcp__oauth_token_clear(&tok);
  mcp__oauth_discovery_clear(&d);
  mcp__oauth_challenge_clear(&ch);
  return st;
}
