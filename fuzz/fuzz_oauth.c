/* SPDX-License-Identifier: MIT */
/*
 * fuzz_oauth.c: libFuzzer target for the pure parts of OAuth
 * (lib/mcp_oauth_parse.c).
 *
 * Input: one selector byte, then text whose lines are the arguments:
 *   0  a WWW-Authenticate header value (mcp__oauth_parse_challenge: the
 *      first Bearer or DPoP challenge);
 *   1  "<server url>\n<PRM JSON>" (mcp__oauth_use_prm, mcp__oauth_as_urls);
 *   2  "<AS base url>\n<AS metadata JSON>" (mcp__oauth_use_as,
 *      mcp__oauth_pick_auth_method, mcp__oauth_check_as_issuer);
 *   3  "<HTTP status>\n<token response body>"
 *      (mcp__oauth_parse_token_response);
 *   4  "<name>\n<value>\n<url>": form encoding must round-trip through
 *      mcp__oauth_query_param; any url's query is searched; the url as an
 *      authorization response checked against issuer <value>
 *      (mcp__oauth_check_iss); mcp__oauth_scope_union of name and value;
 *   5  "<server url>\n<resource>": the well-known URL lists, the canonical
 *      resource and resource_allowed;
 *   6  "<client id>\n<audience>\n<jti>": the JWT signing input must decode
 *      to the header and claims; base64 and the PKCE challenge of the text;
 *      base64url must round-trip through mcp__oauth_b64url_decode; the
 *      client id as a workload JWT checked against issuer <audience> and
 *      token endpoint <jti> (mcp__oauth_check_workload_jwt).
 * Each result must keep the promises of mcp_oauth_parse.h.  A second pass
 * fails an allocation part way through, which must give MCP_ENOMEM (or the
 * same answer) and leak nothing.
 */
#include "config.h"

#include <json-c/json.h>
#include <stdbool.h>

#include "fuzz_common.h"
#include "mcp_jsonrpc.h"
#include "mcp_oauth_parse.h"
#include "mcp_url.h"

/* Splits |s| at the first '\n' (NULL when there is none). */
static char *next_line(char *s) {
  char *nl = s ? strchr(s, '\n') : NULL;
  if (!nl) return NULL;
  *nl = '\0';
  return nl + 1;
}

static bool is_b64url(const char *s) {
  for (; *s; s++)
    if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
          *s == '-' || *s == '_'))
      return false;
  return true;
}

/* base64url (unpadded) decoder of the harness; NULL on a bad length. */
static char *b64url_decode(const char *s, size_t n, size_t *out_n) {
  if (n % 4 == 1) return NULL;
  char *out = malloc(n * 3 / 4 + 2);
  FUZZ_CHECK(out != NULL);
  uint32_t acc = 0;
  int bits = 0;
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    int v = c >= 'A' && c <= 'Z'   ? c - 'A'
            : c >= 'a' && c <= 'z' ? c - 'a' + 26
            : c >= '0' && c <= '9' ? c - '0' + 52
            : c == '-'             ? 62
                                   : 63;
    acc = acc << 6 | (uint32_t)v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[k++] = (char)(acc >> bits & 0xff);
    }
  }
  out[k] = '\0';
  *out_n = k;
  return out;
}

static json_object *parse_json(const char *body) {
  if (!body || !*body) return NULL;
  return mcp__json_parse_document(body, strlen(body), 32, NULL, NULL, 0);
}

static void fuzz_challenge(const char *h, bool oom) {
  mcp_oauth_challenge ch;
  mcp_status st = mcp__oauth_parse_challenge(h, &ch);
  FUZZ_CHECK(st == MCP_OK || st == MCP_EINVAL || (oom && st == MCP_ENOMEM));
  if (st != MCP_OK || (!ch.bearer && !ch.dpop))
    FUZZ_CHECK(!ch.resource_metadata && !ch.scope && !ch.error && !ch.error_description);
  FUZZ_CHECK(!(ch.bearer && ch.dpop)); /* the first of the two only */
  mcp__oauth_challenge_clear(&ch);
}

static void fuzz_prm(char *s, bool oom) {
  char *doc = next_line(s);
  json_object *prm = parse_json(doc);
  mcp_oauth_discovery d = {0};
  char *as_base = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp__oauth_use_prm(prm, s, &d, &as_base, &err);
  mcp__alloc_fail_after(-1); /* the checks below allocate too */
  if (st == MCP_OK) {
    FUZZ_CHECK(as_base && d.resource && mcp__oauth_is_url(as_base));
    const char *res = mcp__oauth_jstr(prm, "resource");
    /* A resource the metadata names must cover the server (RFC 9728 7.3). */
    if (res) FUZZ_CHECK(strcmp(d.resource, res) == 0 && mcp__oauth_resource_allowed(s, res));
    char **urls = NULL;
    mcp_status ust = mcp__oauth_as_urls(as_base, &urls);
    FUZZ_CHECK(ust == MCP_OK);
    for (char **u = urls; *u; u++) FUZZ_CHECK(mcp__oauth_is_url(*u));
    mcp__oauth_strv_free(urls);
  } else {
    FUZZ_CHECK(!as_base && err.message);
    FUZZ_CHECK(st == MCP_EPROTO || st == MCP_EINVAL || (oom && st == MCP_ENOMEM));
  }
  mcp__free(as_base);
  mcp_error_clear(&err);
  json_object_put(prm);
  mcp__oauth_discovery_clear(&d);
}

static void fuzz_as(char *s, bool oom) {
  char *doc = next_line(s);
  mcp_oauth_discovery d = {0};
  d.as = parse_json(doc);
  if (d.as && !json_object_is_type(d.as, json_type_object)) {
    json_object_put(d.as); /* the engine keeps objects only (fetch_json) */
    d.as = NULL;
  }
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp__oauth_use_as(s, &d, &err);
  mcp__alloc_fail_after(-1); /* the checks below allocate too */
  if (st == MCP_OK) {
    FUZZ_CHECK(d.issuer && d.token_endpoint);
    if (d.as) {
      FUZZ_CHECK(mcp__oauth_is_url(d.token_endpoint));
      FUZZ_CHECK(!d.authorization_endpoint || mcp__oauth_is_url(d.authorization_endpoint));
      FUZZ_CHECK(!d.registration_endpoint || mcp__oauth_is_url(d.registration_endpoint));
    }
  } else {
    FUZZ_CHECK(err.message && (st == MCP_EPROTO || (oom && st == MCP_ENOMEM)));
  }
  for (int secret = 0; secret < 2; secret++) {
    const char *m = mcp__oauth_pick_auth_method(&d, secret);
    FUZZ_CHECK(strcmp(m, secret ? "client_secret_basic" : "none") == 0 ||
               (secret && strcmp(m, "client_secret_post") == 0));
  }
  mcp_error_clear(&err);
  /* RFC 8414 sections 2 and 3.3: metadata is taken exactly when its
   * issuer is there and is the base URL. */
  json_object *iv = NULL;
  bool has = d.as && json_object_object_get_ex(d.as, "issuer", &iv);
  st = mcp__oauth_check_as_issuer(d.as, s, &err);
  FUZZ_CHECK((st == MCP_OK) == (!d.as || (has && json_object_is_type(iv, json_type_string) &&
                                          strcmp(json_object_get_string(iv), s) == 0)));
  FUZZ_CHECK(st == MCP_OK || err.message);
  mcp_error_clear(&err);
  mcp__oauth_discovery_clear(&d);
}

static void fuzz_token(char *s, bool oom) {
  char *body = next_line(s);
  int status = atoi(s);
  mcp_oauth_token t;
  mcp_error err = MCP_ERROR_INIT;
  size_t len = body ? strlen(body) : 0;
  mcp_status st = mcp__oauth_parse_token_response(status, body, len, 1000, &t, &err);
  if (st == MCP_OK) {
    FUZZ_CHECK(status >= 200 && status < 300 && t.access_token && *t.access_token);
    /* It goes into an Authorization header: visible ASCII only. */
    for (const unsigned char *c = (const unsigned char *)t.access_token; *c; c++)
      FUZZ_CHECK(*c >= 0x21 && *c <= 0x7e);
    FUZZ_CHECK(t.expires_at == 0 || t.expires_at > 1000);
  } else {
    FUZZ_CHECK(err.message && !t.access_token && !t.refresh_token && !t.scope);
    if (status < 200 || status >= 300) FUZZ_CHECK(st == MCP_EHTTP && err.http_status == status);
    else FUZZ_CHECK(st == MCP_EPROTO || (oom && st == MCP_ENOMEM));
  }
  mcp_error_clear(&err);
  mcp__oauth_token_clear(&t);
}

static void fuzz_form(char *s, bool oom) {
  char *value = next_line(s), *url = next_line(value);
  if (!value) return;
  char *enc = mcp__oauth_urlencode(value);
  FUZZ_CHECK(enc || oom);
  if (enc)
    for (const char *c = enc; *c; c++)
      FUZZ_CHECK(strchr("-._~%", *c) || (*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') ||
                 (*c >= '0' && *c <= '9'));
  mcp__free(enc);
  mcp_buf b;
  mcp__buf_init(&b);
  if (mcp__oauth_form_add(&b, s, value) == MCP_OK && mcp__buf_append(&b, "", 0) == MCP_OK) {
    /* RFC 6749 appendix B: what we encode, a query parser decodes back. */
    char *q = malloc(b.len + 16);
    FUZZ_CHECK(q != NULL);
    snprintf(q, b.len + 16, "http://h/?%s", b.data ? b.data : "");
    char *got = mcp__oauth_query_param(q, s);
    FUZZ_CHECK((got && strcmp(got, value) == 0) || (oom && !got));
    mcp__free(got);
    free(q);
  }
  mcp__buf_free(&b);
  if (url) mcp__free(mcp__oauth_query_param(url, s));
  /* RFC 9207: |value| is the recorded issuer, |url| the redirect; the
   * first byte of |s| says whether iss was advertised.  Accepted means
   * absent and not advertised, or a decoded iss equal to the issuer. */
  if (url) {
    bool adv = *s & 1;
    mcp_error err = MCP_ERROR_INIT;
    mcp_status st = mcp__oauth_check_iss(url, value, adv, &err);
    mcp__alloc_fail_after(-1);
    char *iss = mcp__oauth_query_param(url, "iss");
    if (st == MCP_OK) FUZZ_CHECK(iss ? strcmp(iss, value) == 0 : !adv);
    else {
      FUZZ_CHECK(err.message && (st == MCP_EPROTO || (oom && st == MCP_ENOMEM)));
      if (st == MCP_EPROTO) FUZZ_CHECK(iss ? strcmp(iss, value) != 0 || strstr(url, "%00") : adv);
    }
    mcp__free(iss);
    mcp_error_clear(&err);
  }
  /* SEP-2350: every scope token of either list is in the union, once. */
  char *u = mcp__oauth_scope_union(s, value);
  FUZZ_CHECK(u || oom);
  if (u) {
    for (int k = 0; k < 2; k++)
      for (const char *p = k ? value : s; *p;) {
        while (*p == ' ') p++;
        size_t n = strcspn(p, " ");
        if (!n) break;
        int hits = 0;
        for (const char *q = u; *q;) {
          while (*q == ' ') q++;
          size_t m = strcspn(q, " ");
          hits += m == n && memcmp(p, q, n) == 0;
          q += m;
        }
        FUZZ_CHECK(hits == 1);
        p += n;
      }
    mcp__free(u);
  }
}

static void fuzz_urls(char *s, bool oom) {
  char *res = next_line(s);
  char **v = NULL;
  mcp_status st = mcp__oauth_prm_urls(s, &v);
  mcp__alloc_fail_after(-1); /* only the first call meets a failure */
  if (st == MCP_OK)
    for (char **p = v; *p; p++)
      FUZZ_CHECK(mcp__oauth_is_url(*p) && strstr(*p, "/.well-known/oauth-protected-resource"));
  mcp__oauth_strv_free(v);
  v = NULL;
  st = mcp__oauth_as_urls(s, &v);
  if (st == MCP_OK)
    for (char **p = v; *p; p++) FUZZ_CHECK(mcp__oauth_is_url(*p) && strstr(*p, "/.well-known/"));
  mcp__oauth_strv_free(v);
  char *canon = mcp__oauth_canonical_resource(s);
  if (canon) {
    /* RFC 8707 section 2: a resource indicator has no fragment (and we
     * send no query); the server is covered by its own resource. */
    FUZZ_CHECK(!strchr(canon, '#') && !strchr(canon, '?'));
    FUZZ_CHECK(mcp__oauth_resource_allowed(s, canon));
  }
  mcp__free(canon);
  if (res) (void)mcp__oauth_resource_allowed(s, res);
}

static void fuzz_jwt(char *s, const uint8_t *data, bool oom) {
  static const char *algs[] = {"ES256", "ES384", "RS256", "RS384", "RS512", "PS256", "EdDSA"};
  char *aud = next_line(s), *jti = next_line(aud);
  if (!jti) return;
  const char *alg = algs[data[0] / 8 % 7];
  char *in = NULL;
  mcp_status st = mcp__oauth_jwt_signing_input(alg, s, aud, 1000, jti, &in);
  FUZZ_CHECK(st == MCP_OK || (oom && st == MCP_ENOMEM));
  if (st == MCP_OK) {
    char *dot = strchr(in, '.');
    FUZZ_CHECK(dot && !strchr(dot + 1, '.'));
    *dot = '\0';
    FUZZ_CHECK(is_b64url(in) && is_b64url(dot + 1));
    size_t hn = 0, cn = 0;
    char *h = b64url_decode(in, strlen(in), &hn), *c = b64url_decode(dot + 1, strlen(dot + 1), &cn);
    FUZZ_CHECK(h && c);
    char want[64];
    snprintf(want, sizeof(want), "{\"alg\":\"%s\",\"typ\":\"JWT\"}", alg);
    FUZZ_CHECK(strcmp(h, want) == 0);
    /* RFC 7523 section 3: iss and sub are the client id, aud the AS. */
    json_object *o = json_tokener_parse(c);
    FUZZ_CHECK(o != NULL);
    json_object *v = NULL;
    FUZZ_CHECK(json_object_object_get_ex(o, "iss", &v) &&
               strcmp(json_object_get_string(v), s) == 0);
    FUZZ_CHECK(json_object_object_get_ex(o, "aud", &v) &&
               strcmp(json_object_get_string(v), aud) == 0);
    FUZZ_CHECK(json_object_object_get_ex(o, "jti", &v) &&
               strcmp(json_object_get_string(v), jti) == 0);
    FUZZ_CHECK(json_object_object_get_ex(o, "exp", &v) && json_object_get_int64(v) == 1300);
    json_object_put(o);
    free(h);
    free(c);
  }
  mcp__free(in);
  char *b = mcp__oauth_b64url((const unsigned char *)s, strlen(s));
  char *p = mcp__oauth_b64((const unsigned char *)s, strlen(s));
  char *pk = mcp__oauth_pkce_challenge(s);
  if (!oom) FUZZ_CHECK(b && p && pk);
  if (b) FUZZ_CHECK(is_b64url(b) && strlen(b) == (strlen(s) * 4 + 2) / 3);
  if (p) FUZZ_CHECK(strlen(p) == (strlen(s) + 2) / 3 * 4);
  /* RFC 7636 section 4.2: S256 is 43 characters of base64url. */
  if (pk) FUZZ_CHECK(strlen(pk) == 43 && is_b64url(pk));
  if (b) {
    unsigned char *d = NULL;
    size_t dn = 0;
    mcp_status dst = mcp__oauth_b64url_decode(b, &d, &dn);
    FUZZ_CHECK(dst == MCP_OK || (oom && dst == MCP_ENOMEM));
    if (dst == MCP_OK) FUZZ_CHECK(dn == strlen(s) && memcmp(d, s, dn) == 0);
    mcp__free(d);
  }
  /* Any text: decoded or refused, never past its end. */
  unsigned char *d = NULL;
  size_t dn = 0;
  if (mcp__oauth_b64url_decode(s, &d, &dn) == MCP_OK) FUZZ_CHECK(d[dn] == 0);
  mcp__free(d);
  mcp_error err = MCP_ERROR_INIT;
  mcp_status wst = mcp__oauth_check_workload_jwt(s, aud, jti, 1000, &err);
  FUZZ_CHECK(wst == MCP_OK || wst == MCP_ECONFIG || (oom && wst == MCP_ENOMEM));
  /* The message never quotes the JWT (only a URL audience, abridged). */
  if (wst != MCP_OK && err.message && strlen(s) > 40) FUZZ_CHECK(!strstr(err.message, s));
  mcp_error_clear(&err);
  mcp__free(b);
  mcp__free(p);
  mcp__free(pk);
}

static void run(const uint8_t *data, size_t size, bool oom) {
  char *s = malloc(size);
  FUZZ_CHECK(s != NULL);
  memcpy(s, data + 1, size - 1);
  s[size - 1] = '\0';
  switch (data[0] % 7) {
  case 0: fuzz_challenge(s, oom); break;
  case 1: fuzz_prm(s, oom); break;
  case 2: fuzz_as(s, oom); break;
  case 3: fuzz_token(s, oom); break;
  case 4: fuzz_form(s, oom); break;
  case 5: fuzz_urls(s, oom); break;
  default: fuzz_jwt(s, data, oom); break;
  }
  free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1 || size > 16384) return 0;
  run(data, size, false);
  /* Allocation failure part way through. */
  mcp__alloc_fail_after((long)(size % 11));
  run(data, size, true);
  mcp__alloc_fail_after(-1);
  return 0;
}
