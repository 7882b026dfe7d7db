/* SPDX-License-Identifier: MIT */
/*
 * mcp_oauth_parse.c: the pure parts of OAuth (see mcp_oauth_parse.h): the
 * WWW-Authenticate Bearer challenge, the well-known metadata URLs, what the
 * flow takes from PRM and AS metadata, base64 and base64url, the PKCE
 * challenge, form and query encoding, the JWT signing input and the token
 * response.
 *
 * No I/O, no threads, no globals, no randomness, no OpenSSL: bytes or json-c
 * objects in, new strings out, so any thread may call it and
 * fuzz/fuzz_oauth.c fuzzes all of it.  It must not know the engine
 * (mcp_oauth.c), HTTP or the token store.  Each rule cites its RFC or the
 * MCP authorization spec (2025-11-25, with the 2025-03-26 fallbacks).
 */
#include "config.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mcp_base64.h"
#include "mcp_jsonrpc.h"
#include "mcp_oauth_parse.h"
#include "mcp_sha256.h"
#include "mcp_url.h"

void mcp__oauth_challenge_clear(mcp_oauth_challenge *c) {
  if (!c) return;
  mcp__free(c->resource_metadata);
  mcp__free(c->scope);
  mcp__free(c->error);
  mcp__free(c->error_description);
  memset(c, 0, sizeof(*c));
}

/* ---- WWW-Authenticate ------------------------------------------------------ */

/* RFC 9110 section 5.6.2 tchar, plus '/' and '=' so that a token68
 * (section 11.2: base64-like, "=" padding) reads as one token; the token
 * loop below still stops at the first '=' of a name=value. */
static bool is_tchar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         strchr("!#$%&'*+-.^_`|~/=", c) != NULL;
}

/* RFC 9110 section 5.6.3 OWS: spaces and horizontal tabs. */
static const char *skip_ows(const char *p) {
  while (*p == ' ' || *p == '\t') p++;
  return p;
}

/*
 * RFC 9110 section 11.6.1: WWW-Authenticate = #challenge, and section 11.2:
 *   challenge  = auth-scheme [ 1*SP ( token68 / #auth-param ) ]
 *   auth-param = token BWS "=" BWS ( token / quoted-string )
 * Challenges and their parameters share one comma-separated list, so a
 * bare token after a parameter starts the next challenge.  Scheme and
 * parameter names are case-insensitive (sections 11.1, 11.2).  Bearer's
 * parameters are RFC 6750 section 3 (scope, error, error_description) and
 * RFC 9728 section 5.1 (resource_metadata).
 */
mcp_status mcp__oauth_parse_challenge(const char *header, mcp_oauth_challenge *out) {
  memset(out, 0, sizeof(*out));
  if (!header) return MCP_OK;
  const char *p = header;
  bool in_bearer = false, done = false;
  while (*p && !done) {
    p = skip_ows(p);
    if (!*p) break; /* trailing OWS: the "skip a byte" below would pass the NUL */
    if (*p == ',') {
      p++;
      continue;
    }
    /* A token: a scheme name or a parameter name. */
    const char *t0 = p;
    while (*p && is_tchar(*p) && *p != '=') p++;
    size_t tlen = (size_t)(p - t0);
    if (tlen == 0) {
      p++; /* junk: skip a byte */
      continue;
    }
    const char *q = skip_ows(p);
    /* name=value, unless the '=' is token68 padding: "==", or a last '='
     * right after the token ("Negotiate abc="). */
    if (*q == '=' && q[1] != '=' && !(tlen > 0 && q == p && q[1] == '\0')) {
      q = skip_ows(q + 1);
      char *val = NULL;
      if (*q == '"') {
        mcp_buf b;
        mcp__buf_init(&b);
        q++;
        while (*q && *q != '"') {
          if (*q == '\\' && q[1]) q++; /* quoted-pair, RFC 9110 section 5.6.4 */
          if (mcp__buf_append(&b, q, 1)) {
            mcp__buf_free(&b);
            mcp__oauth_challenge_clear(out);
            return MCP_ENOMEM;
          }
          q++;
        }
        if (*q != '"') {
          mcp__buf_free(&b);
          mcp__oauth_challenge_clear(out);
          return MCP_EINVAL;
        }
        q++;
        val = b.data ? b.data : mcp__strdup("");
        if (!val) {
          mcp__oauth_challenge_clear(out);
          return MCP_ENOMEM;
        }
      } else {
        const char *v0 = q;
        while (*q && *q != ',' && *q != ' ' && *q != '\t') q++;
        val = mcp__strndup(v0, (size_t)(q - v0));
        if (!val) {
          mcp__oauth_challenge_clear(out);
          return MCP_ENOMEM;
        }
      }
      p = q;
      char **slot = NULL;
      if (in_bearer) { /* Bearer's or DPoP's */
        if (tlen == 17 && strncasecmp(t0, "resource_metadata", 17) == 0)
          slot = &out->resource_metadata;
        else if (tlen == 5 && strncasecmp(t0, "scope", 5) == 0) slot = &out->scope;
        else if (tlen == 5 && strncasecmp(t0, "error", 5) == 0) slot = &out->error;
        else if (tlen == 17 && strncasecmp(t0, "error_description", 17) == 0)
          slot = &out->error_description;
      }
      /* Section 11.2: a name occurs once per challenge; the first wins. */
      if (slot && !*slot) *slot = val;
      else mcp__free(val);
      continue;
    }
    /* A scheme name (maybe followed by token68, which we skip). */
    if (in_bearer) {
      done = true; /* the next challenge: ours is complete */
      break;
    }
    if (tlen == 6 && strncasecmp(t0, "Bearer", 6) == 0) {
      in_bearer = true;
      out->bearer = true;
    } else if (tlen == 4 && strncasecmp(t0, "DPoP", 4) == 0) {
      /* RFC 9449 section 7.1: the same parameters as Bearer's, plus algs. */
      in_bearer = true;
      out->dpop = true;
    }
  }
  return MCP_OK;
}

void mcp__oauth_strv_free(char **v) {
  if (!v) return;
  for (char **p = v; *p; p++) mcp__free(*p);
  mcp__free(v);
}

/* ---- well-known URLs and resources ---------------------------------------- */

/* scheme://authority of |u| (new string). */
static char *origin_of(const mcp_url *u) {
  return mcp__asprintf("%s://%s", u->scheme, mcp__url_authority(u));
}

/* The path of |u| without query, without trailing '/'; "" for the root. */
static char *path_of(const mcp_url *u) {
  const char *p = u->path_and_query;
  size_t n = strcspn(p, "?");
  while (n > 0 && p[n - 1] == '/') n--;
  return mcp__strndup(p, n);
}

/* RFC 9728 section 3.1: the well-known suffix goes between the authority
 * and the path; the MCP spec (2025-11-25, "Protected Resource Metadata
 * Discovery") tries that path-based URL first, then the root one. */
mcp_status mcp__oauth_prm_urls(const char *server_url, char ***out) {
  *out = NULL;
  mcp_url *u = NULL;
  mcp_status st = mcp__url_parse(server_url, &u, NULL);
  if (st) return st;
  char **v = mcp__calloc(3, sizeof(char *));
  char *origin = origin_of(u), *path = path_of(u);
  size_t n = 0;
  if (!v || !origin || !path) goto nomem;
  if (*path && !(v[n++] = mcp__asprintf("%s/.well-known/oauth-protected-resource%s", origin, path)))
    goto nomem;
  if (!(v[n++] = mcp__asprintf("%s/.well-known/oauth-protected-resource", origin))) goto nomem;
  mcp__free(origin);
  mcp__free(path);
  mcp__url_free(u);
  *out = v;
  return MCP_OK;
nomem:
  mcp__oauth_strv_free(v);
  mcp__free(origin);
  mcp__free(path);
  mcp__url_free(u);
  return MCP_ENOMEM;
}

/* RFC 8414 section 3.1 inserts its suffix before the issuer's path; OIDC
 * Discovery 1.0 section 4.1 appends its suffix after it, and servers also
 * serve OIDC with insertion.  The MCP spec (2025-11-25, "Authorization
 * Server Metadata Discovery") fixes the order of the three. */
mcp_status mcp__oauth_as_urls(const char *issuer, char ***out) {
  *out = NULL;
  mcp_url *u = NULL;
  mcp_status st = mcp__url_parse(issuer, &u, NULL);
  if (st) return st;
  char **v = mcp__calloc(4, sizeof(char *));
  char *origin = origin_of(u), *path = path_of(u);
  if (!v || !origin || !path) goto nomem;
  if (*path) {
    v[0] = mcp__asprintf("%s/.well-known/oauth-authorization-server%s", origin, path);
    v[1] = mcp__asprintf("%s/.well-known/openid-configuration%s", origin, path);
    v[2] = mcp__asprintf("%s%s/.well-known/openid-configuration", origin, path);
    if (!v[0] || !v[1] || !v[2]) goto nomem;
  } else {
    v[0] = mcp__asprintf("%s/.well-known/oauth-authorization-server", origin);
    v[1] = mcp__asprintf("%s/.well-known/openid-configuration", origin);
    if (!v[0] || !v[1]) goto nomem;
  }
  mcp__free(origin);
  mcp__free(path);
  mcp__url_free(u);
  *out = v;
  return MCP_OK;
nomem:
  mcp__oauth_strv_free(v);
  mcp__free(origin);
  mcp__free(path);
  mcp__url_free(u);
  return MCP_ENOMEM;
}

/* RFC 8707 section 2: an absolute URI without fragment; the MCP spec's
 * "canonical server URI" lower-cases scheme and host (mcp__url_parse does)
 * and drops a trailing "/". */
char *mcp__oauth_canonical_resource(const char *server_url) {
  mcp_url *u = NULL;
  if (mcp__url_parse(server_url, &u, NULL) != MCP_OK) return NULL;
  char *origin = origin_of(u), *path = path_of(u);
  char *r = origin && path ? mcp__asprintf("%s%s", origin, path) : NULL;
  mcp__free(origin);
  mcp__free(path);
  mcp__url_free(u);
  return r;
}

/* RFC 9728 section 3.3 wants the metadata's resource to be the one whose
 * well-known URL we used.  We accept a parent path on a segment boundary
 * (one PRM for a server's endpoints: /api covers /api/mcp, not /apix), never
 * another origin. */
bool mcp__oauth_resource_allowed(const char *server_url, const char *prm_resource) {
  mcp_url *a = NULL, *b = NULL;
  bool ok = false;
  if (mcp__url_parse(server_url, &a, NULL) == MCP_OK &&
      mcp__url_parse(prm_resource, &b, NULL) == MCP_OK && mcp__url_origin_equal(a, b)) {
    char *pa = path_of(a), *pb = path_of(b);
    if (pa && pb) {
      size_t nb = strlen(pb);
      ok = strncmp(pa, pb, nb) == 0 && (pa[nb] == '\0' || pa[nb] == '/');
    }
    mcp__free(pa);
    mcp__free(pb);
  }
  mcp__url_free(a);
  mcp__url_free(b);
  return ok;
}

/* ---- encodings --------------------------------------------------------------- */

/* base64url unpadded, as JWS (RFC 7515 section 2) and PKCE (RFC 7636
 * appendix A) want; base64 "=" padded for HTTP Basic (RFC 7617). */
char *mcp__oauth_b64url(const unsigned char *p, size_t n) {
  return mcp__base64_encode(p, n, MCP_B64_URL, false);
}
char *mcp__oauth_b64(const unsigned char *p, size_t n) {
  return mcp__base64_encode(p, n, MCP_B64_STD, true);
}

char *mcp__oauth_pkce_challenge(const char *verifier) {
  unsigned char md[MCP_SHA256_LEN];
  mcp__sha256(verifier, strlen(verifier), md);
  return mcp__oauth_b64url(md, sizeof(md));
}

/* RFC 3986 section 2.3 unreserved characters; everything else is
 * %-encoded, a space too (as %20, which form decoders read like '+'). */
static bool unreserved(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~';
}

static int urlencode_into(mcp_buf *b, const char *s) {
  static const char hex[] = "0123456789ABCDEF";
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    char tmp[3];
    if (unreserved(*p)) {
      if (mcp__buf_append(b, p, 1)) return MCP_ENOMEM;
    } else {
      tmp[0] = '%';
      tmp[1] = hex[*p >> 4];
      tmp[2] = hex[*p & 15];
      if (mcp__buf_append(b, tmp, 3)) return MCP_ENOMEM;
    }
  }
  return MCP_OK;
}

char *mcp__oauth_urlencode(const char *s) {
  mcp_buf b;
  mcp__buf_init(&b);
  if (urlencode_into(&b, s) || mcp__buf_append(&b, "", 0)) {
    mcp__buf_free(&b);
    return NULL;
  }
  return b.data ? b.data : mcp__strdup("");
}

mcp_status mcp__oauth_form_add(mcp_buf *b, const char *name, const char *value) {
  if (!value) return MCP_OK;
  if ((b->len && mcp__buf_append(b, "&", 1)) || urlencode_into(b, name) ||
      mcp__buf_append(b, "=", 1) || urlencode_into(b, value))
    return MCP_ENOMEM;
  return MCP_OK;
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* application/x-www-form-urlencoded decoding (RFC 6749 appendix B, which
 * refers to the HTML form encoding; the WHATWG URL standard's section 5.1):
 * '+' is a space, %XX a byte, a '%' not followed by two hex digits itself. */
static char *form_decode(const char *s, size_t n, size_t *outn) {
  char *out = mcp__malloc(n + 1);
  if (!out) return NULL;
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '+') out[k++] = ' ';
    else if (s[i] == '%' && i + 2 < n && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0) {
      out[k++] = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
      i += 2;
    } else out[k++] = s[i];
  }
  out[k] = '\0';
  if (outn) *outn = k;
  return out;
}

/* RFC 6749 section 4.1.2: the code and state come back in the redirect
 * URI's query.  Section 3.1: a parameter occurs at most once; the first wins.
 * *out is NULL when |name| is absent; MCP_ENOMEM tells the two apart. */
static mcp_status query_find(const char *url, const char *name, char **out, size_t *outn) {
  *out = NULL;
  const char *q = strchr(url, '?');
  if (!q) return MCP_OK;
  q++;
  size_t end = strcspn(q, "#");
  size_t nlen = strlen(name);
  const char *p = q, *stop = q + end;
  while (p < stop) {
    const char *amp = memchr(p, '&', (size_t)(stop - p));
    const char *e = amp ? amp : stop;
    const char *eq = memchr(p, '=', (size_t)(e - p));
    const char *kend = eq ? eq : e;
    size_t klen = 0;
    char *key = form_decode(p, (size_t)(kend - p), &klen);
    if (!key) return MCP_ENOMEM;
    bool hit = klen == nlen && memcmp(key, name, nlen) == 0;
    mcp__free(key);
    if (hit) {
      if (outn) *outn = 0;
      *out = eq ? form_decode(eq + 1, (size_t)(e - eq - 1), outn) : mcp__strdup("");
      return *out ? MCP_OK : MCP_ENOMEM;
    }
    p = amp ? amp + 1 : stop;
  }
  return MCP_OK;
}

char *mcp__oauth_query_param(const char *url, const char *name) {
  char *v = NULL;
  (void)query_find(url, name, &v, NULL);
  return v;
}

/* RFC 9207 section 2.4 and MCP 2026-07-28 (SEP-2468): the iss of the
 * authorization response, form-decoded, must be exactly the issuer we
 * recorded from the validated metadata: a byte comparison, no URL
 * normalization (case, default port, trailing slash, percent-encoding).
 * Absent, it is refused only when the metadata promised it.  The message
 * never carries the response's error or error_description: a response
 * from the wrong server is not to be acted on or shown. */
mcp_status mcp__oauth_check_iss(const char *redirect, const char *issuer, bool advertised,
                                mcp_error *err) {
  char *iss = NULL;
  size_t iss_len = 0;
  if (query_find(redirect, "iss", &iss, &iss_len) != MCP_OK)
    return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  mcp_status st = MCP_OK;
  if (!iss) {
    if (advertised)
      st = mcp__error_set(err, MCP_EPROTO,
                          "the authorization response has no iss although %s advertises "
                          "authorization_response_iss_parameter_supported (RFC 9207): "
                          "not redeeming the code",
                          issuer ? issuer : "the authorization server");
  } else if (!issuer || iss_len != strlen(issuer) || memcmp(iss, issuer, iss_len) != 0) {
    /* (a decoded %00 makes the lengths differ) */
    char q[MCP_QUOTE_SHORT], r[MCP_QUOTE_SHORT];
    st = mcp__error_set(err, MCP_EPROTO,
                        "the authorization response comes from issuer %s, not from %s "
                        "(RFC 9207 mix-up defence): not redeeming the code",
                        mcp__quote(q, sizeof(q), iss, strlen(iss)),
                        issuer ? mcp__quote(r, sizeof(r), issuer, strlen(issuer))
                               : "the recorded issuer");
  }
  mcp__free(iss);
  return st;
}

/* RFC 8414 section 3.3: the metadata's issuer must be identical to the
 * issuer its well-known URL was built from, else the metadata is not to
 * be used (MCP 2026-07-28).  Section 2 makes "issuer" REQUIRED: metadata
 * without one cannot be checked, so it is not used either. */
mcp_status mcp__oauth_check_as_issuer(json_object *as, const char *as_base, mcp_error *err) {
  json_object *v = NULL;
  if (!as) return MCP_OK;
  char q[MCP_QUOTE_SHORT], b[MCP_QUOTE_SHORT];
  if (!json_object_object_get_ex(as, "issuer", &v))
    return mcp__error_set(err, MCP_EPROTO,
                          "the authorization server metadata of %s has no issuer (RFC 8414 "
                          "section 2 requires one): not using it",
                          mcp__quote(b, sizeof(b), as_base, strlen(as_base)));
  const char *iss = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
  if (iss && strcmp(iss, as_base) == 0) return MCP_OK;
  return mcp__error_set(err, MCP_EPROTO,
                        "the authorization server metadata of %s names issuer %s (RFC 8414 "
                        "section 3.3 requires the same): not using it",
                        mcp__quote(b, sizeof(b), as_base, strlen(as_base)),
                        iss ? mcp__quote(q, sizeof(q), iss, strlen(iss)) : "(not a string)");
}

/* Appends the space-separated scope tokens of |s| missing from |b|. */
static int scope_append(mcp_buf *b, const char *s) {
  for (const char *p = s; p && *p;) {
    while (*p == ' ') p++;
    size_t n = strcspn(p, " ");
    if (n == 0) break;
    bool dup = false;
    for (const char *q = b->data; q && *q && !dup;) {
      while (*q == ' ') q++;
      size_t m = strcspn(q, " ");
      dup = m == n && memcmp(q, p, n) == 0;
      q += m;
    }
    if (!dup && ((b->len && mcp__buf_append(b, " ", 1)) || mcp__buf_append(b, p, n))) return -1;
    p += n;
  }
  return 0;
}

/* SEP-2350: a step-up asks for the union of the scopes asked for before
 * and the challenge's, the former first, each once. */
char *mcp__oauth_scope_union(const char *before, const char *now) {
  mcp_buf b;
  mcp__buf_init(&b);
  if (scope_append(&b, before) || scope_append(&b, now)) {
    mcp__buf_free(&b);
    return NULL;
  }
  if (!b.len) {
    mcp__buf_free(&b);
    return mcp__strdup("");
  }
  return b.data;
}

/* ---- JWT ------------------------------------------------------------------ */

/* ---- JWT ------------------------------------------------------------------ */

/* RFC 7523 section 3: iss and sub are the client id, aud the token
 * endpoint, exp bounds the assertion's life (5 minutes here), jti makes
 * it single-use.  Plain JSON without escaped slashes keeps URLs readable. */
mcp_status mcp__oauth_jwt_signing_input(const char *alg, const char *client_id,
                                        const char *audience, int64_t now_s, const char *jti,
                                        char **out) {
  *out = NULL;
  char *hdr = NULL, *claims = NULL, *h64 = NULL, *c64 = NULL;
  json_object *c = json_object_new_object();
  if (!c) return MCP_ENOMEM;
  json_object_object_add(c, "iss", json_object_new_string(client_id));
  json_object_object_add(c, "sub", json_object_new_string(client_id));
  json_object_object_add(c, "aud", json_object_new_string(audience));
  json_object_object_add(c, "iat", json_object_new_int64(now_s));
  json_object_object_add(c, "exp", json_object_new_int64(now_s + 300));
  json_object_object_add(c, "jti", json_object_new_string(jti));
  claims = mcp__strdup(
      json_object_to_json_string_ext(c, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
  json_object_put(c);
  mcp_status st = MCP_OK;
  hdr = mcp__asprintf("{\"alg\":\"%s\",\"typ\":\"JWT\"}", alg);
  if (!claims || !hdr || !(h64 = mcp__oauth_b64url((unsigned char *)hdr, strlen(hdr))) ||
      !(c64 = mcp__oauth_b64url((unsigned char *)claims, strlen(claims))) ||
      !(*out = mcp__asprintf("%s.%s", h64, c64))) {
    st = MCP_ENOMEM;
  }
  mcp__free(hdr);
  mcp__free(claims);
  mcp__free(h64);
  mcp__free(c64);
  return st;
}

/* ---- token responses ---------------------------------------------------- */

void mcp__oauth_token_clear(mcp_oauth_token *t) {
  if (!t) return;
  if (t->access_token) explicit_bzero(t->access_token, strlen(t->access_token));
  if (t->refresh_token) explicit_bzero(t->refresh_token, strlen(t->refresh_token));
  mcp__free(t->access_token);
  mcp__free(t->refresh_token);
  mcp__free(t->scope);
  memset(t, 0, sizeof(*t));
}

const char *mcp__oauth_jstr(json_object *o, const char *k) {
  json_object *v = NULL;
  if (!o || !json_object_object_get_ex(o, k, &v) || !json_object_is_type(v, json_type_string))
    return NULL;
  return json_object_get_string(v);
}

/* "error (description)" of an RFC 6749 section 5.2 (or RFC 7591 section
 * 3.2.2) error body, or a generic message.  Both are the server's text:
 * quoted and cut short, never the body (which may echo a credential). */
mcp_status mcp__oauth_as_error(int http_status, json_object *o, const char *what, mcp_error *err) {
  const char *e = mcp__oauth_jstr(o, "error"), *d = mcp__oauth_jstr(o, "error_description");
  char qe[MCP_QUOTE_SHORT], qd[MCP_QUOTE_LONG / 4];
  if (e) e = mcp__quote(qe, sizeof(qe), e, strlen(e));
  if (d) d = mcp__quote(qd, sizeof(qd), d, strlen(d));
  mcp_status st = mcp__error_set(err, MCP_EHTTP, "%s: HTTP %d%s%s%s%s%s", what, http_status,
                                 e ? ": " : "", e ? e : "", d ? " (" : "", d ? d : "",
                                 d ? ")" : "");
  if (err) err->http_status = http_status;
  return st;
}

mcp_status mcp__oauth_parse_token_response(int http_status, const char *body, size_t len,
                                           int64_t now_s, mcp_oauth_token *out, mcp_error *err) {
  memset(out, 0, sizeof(*out));
  json_object *o = body && len ? mcp__json_parse_document(body, len, 16, NULL, NULL, 0) : NULL;
  if (http_status < 200 || http_status >= 300) {
    mcp_status st = mcp__oauth_as_error(http_status, o, "the token request was refused", err);
    json_object_put(o);
    return st;
  }
  if (!o || !json_object_is_type(o, json_type_object)) {
    json_object_put(o);
    return mcp__error_set(err, MCP_EPROTO, "the token response is not a JSON object");
  }
  const char *at = mcp__oauth_jstr(o, "access_token"), *tt = mcp__oauth_jstr(o, "token_type");
  /* RFC 6749 section 5.1: access_token and token_type are REQUIRED; some
   * servers omit token_type, and we take that as Bearer.  Its value is
   * case-insensitive (section 5.1); types are section 7.1's. */
  if (!at || !*at) {
    json_object_put(o);
    return mcp__error_set(err, MCP_EPROTO, "the token response has no access_token");
  }
  if (tt && strcasecmp(tt, "bearer") != 0 && strcasecmp(tt, "dpop") != 0) {
    char q[MCP_QUOTE_SHORT];
    mcp_status st = mcp__error_set(err, MCP_EPROTO,
                                   "unsupported token_type \"%s\" (want Bearer or DPoP)",
                                   mcp__quote(q, sizeof(q), tt, strlen(tt)));
    json_object_put(o);
    return st;
  }
  /* RFC 6750 section 2.1 sends it as "Bearer <b64token>": we insist only
   * on visible ASCII, which no header splitting (CR, LF) can come of. */
  for (const char *p = at; *p; p++) {
    if ((unsigned char)*p < 0x21 || (unsigned char)*p > 0x7e) {
      json_object_put(o);
      return mcp__error_set(err, MCP_EPROTO,
                            "the access token has characters a header cannot carry");
    }
  }
  out->access_token = mcp__strdup(at);
  out->dpop = tt && strcasecmp(tt, "dpop") == 0;
  /* Section 5.1: refresh_token OPTIONAL (an empty one is none); scope is
   * sent when it differs from what was asked (section 3.3). */
  const char *rt = mcp__oauth_jstr(o, "refresh_token"), *sc = mcp__oauth_jstr(o, "scope");
  if (rt && *rt) out->refresh_token = mcp__strdup(rt);
  if (sc) out->scope = mcp__strdup(sc);
  json_object *ei = NULL;
  if (json_object_object_get_ex(o, "expires_in", &ei) &&
      (json_object_is_type(ei, json_type_int) || json_object_is_type(ei, json_type_double))) {
    /* RFC 6749 section 5.1: expires_in is a lifetime in seconds.  json-c
     * clamps huge numbers to INT64_MAX; so do we, rather than overflow. */
    int64_t s = json_object_get_int64(ei);
    if (s > 0) out->expires_at = now_s > 0 && s > INT64_MAX - now_s ? INT64_MAX : now_s + s;
  }
  bool lost = !out->access_token || (rt && *rt && !out->refresh_token) || (sc && !out->scope);
  json_object_put(o); /* rt and sc pointed into it */
  if (lost) {
    mcp__oauth_token_clear(out);
    return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  }
  return MCP_OK;
}

bool mcp__oauth_is_url(const char *s) {
  mcp_url *u = NULL;
  if (mcp__url_parse(s, &u, NULL) != MCP_OK) return false;
  mcp__url_free(u);
  return true;
}

void mcp__oauth_discovery_clear(mcp_oauth_discovery *d) {
  mcp__free(d->resource);
  mcp__free(d->prm_scopes);
  json_object_put(d->as);
  mcp__free(d->issuer);
  mcp__free(d->authorization_endpoint);
  mcp__free(d->token_endpoint);
  mcp__free(d->registration_endpoint);
  memset(d, 0, sizeof(*d));
}

/* ---- metadata ---------------------------------------------------------------- */

/* A JSON array of strings as an RFC 6749 section 3.3 scope: space-joined
 * (other elements are skipped). */
static char *join_strings(json_object *arr) {
  if (!arr || !json_object_is_type(arr, json_type_array)) return NULL;
  mcp_buf b;
  mcp__buf_init(&b);
  for (size_t i = 0; i < json_object_array_length(arr); i++) {
    json_object *e = json_object_array_get_idx(arr, i);
    if (!json_object_is_type(e, json_type_string)) continue;
    if (b.len) mcp__buf_append(&b, " ", 1);
    mcp__buf_append(&b, json_object_get_string(e), strlen(json_object_get_string(e)));
  }
  if (!b.data) return mcp__strdup("");
  return b.data;
}

bool mcp__oauth_json_array_has(json_object *o, const char *key, const char *want) {
  json_object *arr = NULL;
  if (!o || !json_object_object_get_ex(o, key, &arr) || !json_object_is_type(arr, json_type_array))
    return false;
  for (size_t i = 0; i < json_object_array_length(arr); i++) {
    json_object *e = json_object_array_get_idx(arr, i);
    if (json_object_is_type(e, json_type_string) && strcmp(json_object_get_string(e), want) == 0)
      return true;
  }
  return false;
}

bool mcp__oauth_json_has(json_object *o, const char *key) {
  json_object *v = NULL;
  return o && json_object_object_get_ex(o, key, &v);
}

/* An endpoint from metadata (RFC 8414 section 2) must be an http(s) URL;
 * anything else (javascript:, file:, junk) counts as absent. */
static char *endpoint(json_object *as, const char *key) {
  const char *v = mcp__oauth_jstr(as, key);
  return v && mcp__oauth_is_url(v) ? mcp__strdup(v) : NULL;
}

/* RFC 8414 section 2: without token_endpoint_auth_methods_supported the
 * default is client_secret_basic; RFC 7591 section 2: "none" for a public
 * client (no secret).  Basic is preferred where offered (RFC 6749 section
 * 2.3.1: servers MUST support it; the body form is NOT RECOMMENDED). */
const char *mcp__oauth_pick_auth_method(const mcp_oauth_discovery *d, bool has_secret) {
  if (!has_secret) return "none";
  json_object *m = NULL;
  if (!d->as || !json_object_object_get_ex(d->as, "token_endpoint_auth_methods_supported", &m))
    return "client_secret_basic";
  if (mcp__oauth_json_array_has(d->as, "token_endpoint_auth_methods_supported",
                                "client_secret_basic"))
    return "client_secret_basic";
  if (mcp__oauth_json_array_has(d->as, "token_endpoint_auth_methods_supported",
                                "client_secret_post"))
    return "client_secret_post";
  return "client_secret_basic";
}

mcp_status mcp__oauth_use_prm(json_object *prm, const char *server_url, mcp_oauth_discovery *d,
                              char **as_base, mcp_error *err) {
  *as_base = NULL;
  /* The engine never has a bad server URL (mcp__oauth_new() refuses it);
   * say so here rather than "out of memory" below. */
  if (!mcp__oauth_is_url(server_url))
    return mcp__error_set(err, MCP_EINVAL, "bad server URL \"%s\"", server_url);
  if (prm) {
    /* RFC 9728 section 7.3: the metadata's "resource" must be the resource
     * we asked about; a server pointing us at another one's metadata could
     * make us fetch (and send) a token meant for someone else. */
    const char *res = mcp__oauth_jstr(prm, "resource");
    if (res && !mcp__oauth_resource_allowed(server_url, res))
      return mcp__error_set(err, MCP_EPROTO,
                            "the protected resource metadata is for \"%s\", not for %s: "
                            "not authorizing",
                            res, server_url);
    /* RFC 8707 section 2: the resource indicator we send is the PRM's
     * resource when it names one, else our canonical server URL. */
    d->resource = res ? mcp__strdup(res) : mcp__oauth_canonical_resource(server_url);
    json_object *sc = NULL;
    if (json_object_object_get_ex(prm, "scopes_supported", &sc)) d->prm_scopes = join_strings(sc);
    /* RFC 9728 section 2: authorization_servers lists issuers; the MCP
     * spec lets the client choose, and we take the first usable one. */
    json_object *servers = NULL;
    if (json_object_object_get_ex(prm, "authorization_servers", &servers) &&
        json_object_is_type(servers, json_type_array) && json_object_array_length(servers) > 0) {
      json_object *s0 = json_object_array_get_idx(servers, 0);
      if (json_object_is_type(s0, json_type_string) &&
          mcp__oauth_is_url(json_object_get_string(s0)))
        *as_base = mcp__strdup(json_object_get_string(s0));
    }
  } else {
    d->resource = mcp__oauth_canonical_resource(server_url);
  }
  if (!*as_base) {
    /* MCP 2025-03-26 (no PRM): the authorization base URL is the MCP
     * server's origin, its path discarded. */
    mcp_url *u = NULL;
    if (mcp__url_parse(server_url, &u, err) != MCP_OK) return MCP_EINVAL;
    *as_base = origin_of(u);
    mcp__url_free(u);
  }
  if (!*as_base || !d->resource) {
    mcp__free(*as_base);
    *as_base = NULL;
    return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  }
  return MCP_OK;
}

mcp_status mcp__oauth_use_as(const char *as_base, mcp_oauth_discovery *d, mcp_error *err) {
  if (d->as) {
    /* RFC 8414 section 2: issuer is REQUIRED (mcp__oauth_check_as_issuer
     * refused metadata without it); the base URL stands in for a caller
     * that did not check. */
    const char *iss = mcp__oauth_jstr(d->as, "issuer");
    d->issuer = mcp__strdup(iss ? iss : as_base);
    d->authorization_endpoint = endpoint(d->as, "authorization_endpoint");
    d->token_endpoint = endpoint(d->as, "token_endpoint");
    d->registration_endpoint = endpoint(d->as, "registration_endpoint");
    /* RFC 8414 section 2: token_endpoint is REQUIRED unless only the
     * implicit grant is supported, which OAuth 2.1 removed. */
    if (!d->token_endpoint)
      return mcp__error_set(err, MCP_EPROTO,
                            "the authorization server metadata has no token_endpoint");
  } else {
    /* MCP 2025-03-26 section 2.3.3 fallback: without metadata, the default
     * endpoints /authorize, /token and /register at the base URL. */
    d->issuer = mcp__strdup(as_base);
    d->authorization_endpoint = mcp__asprintf("%s/authorize", as_base);
    d->token_endpoint = mcp__asprintf("%s/token", as_base);
    d->registration_endpoint = mcp__asprintf("%s/register", as_base);
  }
  if (!d->issuer || !d->token_endpoint) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  return MCP_OK;
}

/* ---- JWTs the host hands us (SEP-1933) ------------------------------------- */

mcp_status mcp__oauth_b64url_decode(const char *s, unsigned char **out, size_t *n) {
  return mcp__base64_decode(s, strlen(s), MCP_B64_URL, out, n);
}

/* |a| equals |b| but for one trailing "/" on either. */
static bool same_url(const char *a, const char *b) {
  if (!a || !b) return false;
  size_t na = strlen(a), nb = strlen(b);
  if (na && a[na - 1] == '/') na--;
  if (nb && b[nb - 1] == '/') nb--;
  return na == nb && strncmp(a, b, na) == 0;
}

mcp_status mcp__oauth_check_workload_jwt(const char *jwt, const char *issuer,
                                         const char *token_endpoint, int64_t now_s,
                                         mcp_error *err) {
  const char *d1 = jwt ? strchr(jwt, '.') : NULL, *d2 = d1 ? strchr(d1 + 1, '.') : NULL;
  if (!d1 || !d2 || strchr(d2 + 1, '.') || d1 == jwt || d2 == d1 + 1)
    return mcp__error_set(err, MCP_ECONFIG, "the workload JWT is not a compact JWT (three parts)");
  char *mid = mcp__strndup(d1 + 1, (size_t)(d2 - d1 - 1));
  if (!mid) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  unsigned char *raw = NULL;
  size_t n = 0;
  mcp_status st = mcp__oauth_b64url_decode(mid, &raw, &n);
  mcp__free(mid);
  if (st == MCP_ENOMEM) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  json_object *c = st ? NULL : mcp__json_parse_document((const char *)raw, n, 8, NULL, NULL, 0);
  if (raw) explicit_bzero(raw, n);
  mcp__free(raw);
  if (!c || !json_object_is_type(c, json_type_object)) {
    json_object_put(c);
    return mcp__error_set(err, MCP_ECONFIG,
                          "the workload JWT's payload is not a base64url JSON object");
  }
  st = MCP_OK;
  json_object *v = NULL;
  if (json_object_object_get_ex(c, "exp", &v) &&
      (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double))) {
    int64_t exp = json_object_get_int64(v);
    if (exp <= now_s)
      st = mcp__error_set(err, MCP_ECONFIG,
                          "the workload JWT has expired (exp %lld, %lld s ago): get a fresh one",
                          (long long)exp, (long long)(now_s - exp));
  }
  if (st == MCP_OK && json_object_object_get_ex(c, "aud", &v)) {
    bool all_urls = true, hit = false;
    size_t na = json_object_is_type(v, json_type_array) ? json_object_array_length(v) : 1;
    const char *first = NULL;
    for (size_t i = 0; i < na; i++) {
      json_object *e = json_object_is_type(v, json_type_array) ? json_object_array_get_idx(v, i)
                                                               : v;
      const char *a = json_object_is_type(e, json_type_string) ? json_object_get_string(e) : NULL;
      if (!a || !mcp__oauth_is_url(a)) {
        all_urls = false;
        continue;
      }
      if (!first) first = a;
      if (same_url(a, issuer) || same_url(a, token_endpoint)) hit = true;
    }
    if (all_urls && first && !hit) {
      char qa[MCP_QUOTE_SHORT], qi[MCP_QUOTE_SHORT];
      const char *want = issuer ? issuer : token_endpoint ? token_endpoint : "";
      st = mcp__error_set(err, MCP_ECONFIG,
                          "the workload JWT is for another audience (aud \"%s\", not this "
                          "authorization server \"%s\")",
                          mcp__quote(qa, sizeof(qa), first, strlen(first)),
                          mcp__quote(qi, sizeof(qi), want, strlen(want)));
    }
  }
  json_object_put(c);
  return st;
}
