/* SPDX-License-Identifier: MIT */
/*
 * check_oauth.c: OAuth (lib/mcp_oauth.c and the HTTP transport's 401
 * handling).
 *  - unit: the WWW-Authenticate parser, the well-known URL lists in the
 *    spec's order, resource matching, base64/base64url (RFC 4648 vectors),
 *    PKCE (a challenge computed with the openssl CLI, fresh verifiers), form
 *    encoding and query parsing, the private_key_jwt assertion (signed here,
 *    verified with OpenSSL against the public key), token responses (errors
 *    never echo the body);
 *  - flows against tests/interop/oauth-http.mjs (a real server on 127.0.0.1
 *    with its own authorization server): discovery + registration +
 *    authorization code with PKCE verified by the server; a host token store
 *    reused by a second client; the file store's modes; refresh after the
 *    server revokes access tokens, shared by concurrent requests; a refused
 *    authorization; no authorize callback; tokens never in log lines or
 *    error messages, never in a URL;
 *  - configuration: a server's "oauth" object (${VAR} expanded, the secret
 *    kept out of the canonical form, mistakes named), and a manager whose
 *    configured server authorizes through the manager's OAuth defaults;
 *  - the CLI (MCPCONN_BIN): prints the URL, catches the browser's redirect
 *    on its loopback listener, keeps the tokens (0600 under
 *    $XDG_DATA_HOME/mcpconn/oauth) so a second run needs no browser.
 */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <json-c/json.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <fcntl.h>
#include <spawn.h>
#include <time.h>
#include <sys/wait.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/params.h>
#include <openssl/rsa.h>
#include <openssl/sha.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "check_interop_util.h"
#include "mcp_cache.h"
#include "mcp_client.h"
#include "mcp_config.h"
#include "mcp_secret.h"
#include "mcp_server_options.h"
#include "mcp_oauth.h"
#include "mcp_sha256.h"
#include "mcpconn.h"

#define START_MS 60000
#define CALL_MS 30000

/* ========================================================================== */
/* Unit tests                                                                 */
/* ========================================================================== */

START_TEST(test_challenge_parse) {
  mcp_oauth_challenge c;
  ck_assert_int_eq(
      mcp__oauth_parse_challenge(
          "Bearer error=\"insufficient_scope\", scope=\"a b\", "
          "resource_metadata=\"https://x.example/.well-known/oauth-protected-resource/mcp\"",
          &c),
      MCP_OK);
  ck_assert(c.bearer);
  ck_assert_str_eq(c.error, "insufficient_scope");
  ck_assert_str_eq(c.scope, "a b");
  ck_assert_str_eq(c.resource_metadata,
                   "https://x.example/.well-known/oauth-protected-resource/mcp");
  mcp__oauth_challenge_clear(&c);

  /* Another scheme first, token values, escapes, any case. */
  ck_assert_int_eq(
      mcp__oauth_parse_challenge(
          "Basic realm=\"r, with comma\", bearer Scope=read, error_description=\"say \\\"hi\\\"\"",
          &c),
      MCP_OK);
  ck_assert(c.bearer);
  ck_assert_str_eq(c.scope, "read");
  ck_assert_str_eq(c.error_description, "say \"hi\"");
  ck_assert_ptr_null(c.resource_metadata);
  mcp__oauth_challenge_clear(&c);

  /* Bearer's parameters end at the next challenge. */
  ck_assert_int_eq(
      mcp__oauth_parse_challenge("Bearer scope=\"x\", DPoP scope=\"y\" , algs=\"ES256\"", &c),
      MCP_OK);
  ck_assert_str_eq(c.scope, "x");
  mcp__oauth_challenge_clear(&c);

  ck_assert_int_eq(mcp__oauth_parse_challenge("Basic realm=\"x\"", &c), MCP_OK);
  ck_assert(!c.bearer);
  mcp__oauth_challenge_clear(&c);
  ck_assert_int_eq(mcp__oauth_parse_challenge("Bearer scope=\"unterminated", &c), MCP_EINVAL);
  mcp__oauth_challenge_clear(&c);
  ck_assert_int_eq(mcp__oauth_parse_challenge("", &c), MCP_OK);
  ck_assert(!c.bearer);
  ck_assert_int_eq(mcp__oauth_parse_challenge(NULL, &c), MCP_OK);
  ck_assert(!c.bearer);
}
END_TEST

static void assert_strv(char **v, const char *const *want) {
  size_t i = 0;
  for (; want[i]; i++) {
    ck_assert_ptr_nonnull(v[i]);
    ck_assert_str_eq(v[i], want[i]);
  }
  ck_assert_ptr_null(v[i]);
}

START_TEST(test_wellknown_order) {
  char **v = NULL;
  ck_assert_int_eq(mcp__oauth_prm_urls("https://Example.com:8443/public/mcp?x=1", &v), MCP_OK);
  assert_strv(v, (const char *const[]){
                     "https://example.com:8443/.well-known/oauth-protected-resource/public/mcp",
                     "https://example.com:8443/.well-known/oauth-protected-resource", NULL});
  mcp__oauth_strv_free(v);
  ck_assert_int_eq(mcp__oauth_prm_urls("http://127.0.0.1:9/", &v), MCP_OK);
  assert_strv(
      v, (const char *const[]){"http://127.0.0.1:9/.well-known/oauth-protected-resource", NULL});
  mcp__oauth_strv_free(v);

  ck_assert_int_eq(mcp__oauth_as_urls("https://auth.example.com/tenant1", &v), MCP_OK);
  assert_strv(v, (const char *const[]){
                     "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                     "https://auth.example.com/.well-known/openid-configuration/tenant1",
                     "https://auth.example.com/tenant1/.well-known/openid-configuration", NULL});
  mcp__oauth_strv_free(v);
  ck_assert_int_eq(mcp__oauth_as_urls("https://auth.example.com", &v), MCP_OK);
  assert_strv(
      v, (const char *const[]){"https://auth.example.com/.well-known/oauth-authorization-server",
                               "https://auth.example.com/.well-known/openid-configuration", NULL});
  mcp__oauth_strv_free(v);
  ck_assert_int_eq(mcp__oauth_as_urls("ftp://x", &v), MCP_EINVAL);
  ck_assert_ptr_null(v);
}
END_TEST

START_TEST(test_resource_match) {
  ck_assert(mcp__oauth_resource_allowed("http://localhost:8/mcp", "http://localhost:8/mcp"));
  ck_assert(mcp__oauth_resource_allowed("http://localhost:8/mcp", "http://localhost:8"));
  ck_assert(mcp__oauth_resource_allowed("http://localhost:8/mcp", "http://LOCALHOST:8/mcp/"));
  ck_assert(mcp__oauth_resource_allowed("http://localhost:8/a/mcp", "http://localhost:8/a"));
  ck_assert(!mcp__oauth_resource_allowed("http://localhost:8/mcpx", "http://localhost:8/mcp"));
  ck_assert(!mcp__oauth_resource_allowed("http://localhost:8/mcp", "https://evil.example.com/mcp"));
  ck_assert(!mcp__oauth_resource_allowed("http://localhost:8/mcp", "http://localhost:9/mcp"));
  ck_assert(!mcp__oauth_resource_allowed("http://localhost:8/mcp", "not a url"));
  char *r = mcp__oauth_canonical_resource("HTTPS://Example.COM/mcp/?q=1#frag");
  ck_assert_str_eq(r, "https://example.com/mcp");
  mcp__free(r);
  r = mcp__oauth_canonical_resource("https://example.com:443/");
  ck_assert_str_eq(r, "https://example.com");
  mcp__free(r);
}
END_TEST

START_TEST(test_base64) {
  static const struct {
    const char *in, *std, *url;
  } v[] = {{"", "", ""},
           {"f", "Zg==", "Zg"},
           {"fo", "Zm8=", "Zm8"},
           {"foo", "Zm9v", "Zm9v"},
           {"foob", "Zm9vYg==", "Zm9vYg"},
           {"fooba", "Zm9vYmE=", "Zm9vYmE"},
           {"foobar", "Zm9vYmFy", "Zm9vYmFy"}};
  for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
    char *a = mcp__oauth_b64((const unsigned char *)v[i].in, strlen(v[i].in));
    char *b = mcp__oauth_b64url((const unsigned char *)v[i].in, strlen(v[i].in));
    ck_assert_str_eq(a, v[i].std);
    ck_assert_str_eq(b, v[i].url);
    mcp__free(a);
    mcp__free(b);
  }
  const unsigned char hi[] = {0xfb, 0xff, 0xbf};
  char *a = mcp__oauth_b64(hi, 3), *b = mcp__oauth_b64url(hi, 3);
  ck_assert_str_eq(a, "+/+/");
  ck_assert_str_eq(b, "-_-_");
  mcp__free(a);
  mcp__free(b);
}
END_TEST

START_TEST(test_pkce) {
  /* Expected value made outside the library: printf %s VERIFIER | openssl
   * dgst -sha256 -binary | base64 | tr '+/' '-_' | tr -d '='. */
  char *c = mcp__oauth_pkce_challenge("dBjftJeZ4CVP-mJ92K3P8X5grh9SoA2yqa9Bcg1rtmQ");
  ck_assert_str_eq(c, "tmu16Xkhpo6N4D3q1GA-28JjNfS3xncTcwe6M5go2Mg");
  mcp__free(c);
  char *v1, *c1, *v2, *c2;
  ck_assert_int_eq(mcp__oauth_pkce(&v1, &c1), MCP_OK);
  ck_assert_int_eq(mcp__oauth_pkce(&v2, &c2), MCP_OK);
  ck_assert_uint_eq(strlen(v1), 43); /* 43..128 unreserved characters */
  for (const char *p = v1; *p; p++) ck_assert(strchr("-_", *p) || isalnum((unsigned char)*p));
  ck_assert_str_ne(v1, v2);
  char *again = mcp__oauth_pkce_challenge(v1);
  ck_assert_str_eq(again, c1);
  mcp__free(again);
  mcp__free(v1);
  mcp__free(c1);
  mcp__free(v2);
  mcp__free(c2);
}
END_TEST

START_TEST(test_form_and_query) {
  mcp_buf b;
  mcp__buf_init(&b);
  ck_assert_int_eq(mcp__oauth_form_add(&b, "a b", "x&y=z/\xc3\xa9~"), MCP_OK);
  ck_assert_int_eq(mcp__oauth_form_add(&b, "skip", NULL), MCP_OK);
  ck_assert_int_eq(mcp__oauth_form_add(&b, "scope", "mcp:read mcp:write"), MCP_OK);
  ck_assert_str_eq(b.data, "a%20b=x%26y%3Dz%2F%C3%A9~&scope=mcp%3Aread%20mcp%3Awrite");
  mcp__buf_free(&b);

  const char *u = "http://localhost:3000/callback?code=ab%2Bc&state=s+1&empty=&flag#code=frag";
  char *v = mcp__oauth_query_param(u, "code");
  ck_assert_str_eq(v, "ab+c");
  mcp__free(v);
  v = mcp__oauth_query_param(u, "state");
  ck_assert_str_eq(v, "s 1");
  mcp__free(v);
  v = mcp__oauth_query_param(u, "empty");
  ck_assert_str_eq(v, "");
  mcp__free(v);
  v = mcp__oauth_query_param(u, "flag");
  ck_assert_str_eq(v, "");
  mcp__free(v);
  ck_assert_ptr_null(mcp__oauth_query_param(u, "error"));
  ck_assert_ptr_null(mcp__oauth_query_param("http://x/cb", "code"));
  v = mcp__oauth_query_param("http://x/cb?bad=%zz%4", "bad");
  ck_assert_str_eq(v, "%zz%4"); /* stray % kept as is */
  mcp__free(v);
}
END_TEST

/* Decodes base64url |s| (n chars) into |out|; returns the length. */
static size_t b64url_decode(const char *s, size_t n, unsigned char *out) {
  char *std = malloc(n + 4);
  ck_assert_ptr_nonnull(std);
  memset(std, 0, n + 4);
  size_t k = 0;
  for (size_t i = 0; i < n; i++) std[k++] = s[i] == '-' ? '+' : s[i] == '_' ? '/' : s[i];
  while (k % 4) std[k++] = '=';
  int len = EVP_DecodeBlock(out, (unsigned char *)std, (int)k);
  ck_assert_int_ge(len, 0);
  size_t pad = 0;
  for (size_t i = k; i > 0 && std[i - 1] == '='; i--) pad++;
  free(std);
  return (size_t)len - pad;
}

static char *pem_of(EVP_PKEY *k) {
  BIO *b = BIO_new(BIO_s_mem());
  ck_assert(PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL) == 1);
  char *p = NULL;
  long n = BIO_get_mem_data(b, &p);
  char *s = strndup(p, (size_t)n);
  BIO_free(b);
  return s;
}

/* Verifies JWS |jwt| with |key| (ES256 raw r||s or RS256) and returns the
 * decoded claims. */
static json_object *verify_jwt(const char *jwt, EVP_PKEY *key, bool ec) {
  const char *d1 = strchr(jwt, '.');
  ck_assert_ptr_nonnull(d1);
  const char *d2 = strchr(d1 + 1, '.');
  ck_assert_ptr_nonnull(d2);
  unsigned char hdr[256], claims[1024], sig[512];
  size_t hl = b64url_decode(jwt, (size_t)(d1 - jwt), hdr);
  hdr[hl] = 0;
  json_object *h = json_tokener_parse((char *)hdr);
  ck_assert_str_eq(json_object_get_string(json_object_object_get(h, "alg")),
                   ec ? "ES256" : "RS256");
  json_object_put(h);
  size_t cl = b64url_decode(d1 + 1, (size_t)(d2 - d1 - 1), claims);
  claims[cl] = 0;
  size_t sl = b64url_decode(d2 + 1, strlen(d2 + 1), sig);
  unsigned char der[128];
  const unsigned char *sigp = sig;
  size_t sigl = sl;
  if (ec) {
    ck_assert_uint_eq(sl, 64);
    ECDSA_SIG *es = ECDSA_SIG_new();
    ECDSA_SIG_set0(es, BN_bin2bn(sig, 32, NULL), BN_bin2bn(sig + 32, 32, NULL));
    unsigned char *p = der;
    int n = i2d_ECDSA_SIG(es, &p);
    ECDSA_SIG_free(es);
    sigp = der;
    sigl = (size_t)n;
  }
  EVP_MD_CTX *ctx = EVP_MD_CTX_new();
  ck_assert(EVP_DigestVerifyInit(ctx, NULL, EVP_sha256(), NULL, key) == 1);
  ck_assert_msg(EVP_DigestVerify(ctx, sigp, sigl, (const unsigned char *)jwt, (size_t)(d2 - jwt)) ==
                    1,
                "signature does not verify");
  EVP_MD_CTX_free(ctx);
  return json_tokener_parse((char *)claims);
}

START_TEST(test_jwt_assertion) {
  EVP_PKEY *ec = NULL, *rsa = NULL;
  EVP_PKEY_CTX *kc = EVP_PKEY_CTX_new_id(EVP_PKEY_EC, NULL);
  ck_assert(kc && EVP_PKEY_keygen_init(kc) == 1 &&
            EVP_PKEY_CTX_set_ec_paramgen_curve_nid(kc, NID_X9_62_prime256v1) == 1 &&
            EVP_PKEY_keygen(kc, &ec) == 1);
  EVP_PKEY_CTX_free(kc);
  kc = EVP_PKEY_CTX_new_id(EVP_PKEY_RSA, NULL);
  ck_assert(kc && EVP_PKEY_keygen_init(kc) == 1 &&
            EVP_PKEY_CTX_set_rsa_keygen_bits(kc, 2048) == 1 && EVP_PKEY_keygen(kc, &rsa) == 1);
  EVP_PKEY_CTX_free(kc);
  ck_assert_ptr_nonnull(ec);
  ck_assert_ptr_nonnull(rsa);
  char *ec_pem = pem_of(ec), *rsa_pem = pem_of(rsa);
  char *jwt = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp__oauth_jwt_assertion(ec_pem, "ES256", "client-1", "https://as.example",
                                            1700000000, &jwt, &err),
                   MCP_OK);
  json_object *c = verify_jwt(jwt, ec, true);
  ck_assert_str_eq(json_object_get_string(json_object_object_get(c, "iss")), "client-1");
  ck_assert_str_eq(json_object_get_string(json_object_object_get(c, "sub")), "client-1");
  ck_assert_str_eq(json_object_get_string(json_object_object_get(c, "aud")), "https://as.example");
  ck_assert_int_eq(json_object_get_int64(json_object_object_get(c, "iat")), 1700000000);
  ck_assert_int_eq(json_object_get_int64(json_object_object_get(c, "exp")), 1700000300);
  ck_assert_uint_ge(strlen(json_object_get_string(json_object_object_get(c, "jti"))), 16);
  json_object_put(c);
  mcp__free(jwt);

  ck_assert_int_eq(mcp__oauth_jwt_assertion(rsa_pem, "RS256", "c2", "aud", 1, &jwt, &err), MCP_OK);
  c = verify_jwt(jwt, rsa, false);
  ck_assert_str_eq(json_object_get_string(json_object_object_get(c, "iss")), "c2");
  json_object_put(c);
  mcp__free(jwt);

  /* Key and algorithm must agree; garbage and unknown algorithms fail. */
  ck_assert_int_eq(mcp__oauth_jwt_assertion(rsa_pem, "ES256", "c", "a", 1, &jwt, &err), MCP_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.message, "ES256"));
  ck_assert_int_eq(mcp__oauth_jwt_assertion("-----BEGIN PRIVATE KEY-----\nnope\n", "ES256", "c",
                                            "a", 1, &jwt, &err),
                   MCP_EINVAL);
  ck_assert_int_eq(mcp__oauth_jwt_assertion(ec_pem, "HS256", "c", "a", 1, &jwt, &err), MCP_EINVAL);
  ck_assert_ptr_null(jwt);
  mcp_error_clear(&err);
  free(ec_pem);
  free(rsa_pem);
  EVP_PKEY_free(ec);
  EVP_PKEY_free(rsa);
}
END_TEST

START_TEST(test_token_response) {
  mcp_oauth_token t;
  mcp_error err = MCP_ERROR_INIT;
  const char *ok = "{\"access_token\":\"AT\",\"token_type\":\"bearer\",\"expires_in\":60,"
                   "\"refresh_token\":\"RT\",\"scope\":\"a b\"}";
  ck_assert_int_eq(mcp__oauth_parse_token_response(200, ok, strlen(ok), 1000, &t, &err), MCP_OK);
  ck_assert_str_eq(t.access_token, "AT");
  ck_assert_str_eq(t.refresh_token, "RT");
  ck_assert_str_eq(t.scope, "a b");
  ck_assert_int_eq(t.expires_at, 1060);
  mcp__oauth_token_clear(&t);

  const char *bad = "{\"error\":\"invalid_grant\",\"error_description\":\"code used\","
                    "\"access_token\":\"LEAKME\"}";
  ck_assert_int_eq(mcp__oauth_parse_token_response(400, bad, strlen(bad), 0, &t, &err), MCP_EHTTP);
  ck_assert_int_eq(err.http_status, 400);
  ck_assert_ptr_nonnull(strstr(err.message, "invalid_grant"));
  ck_assert_ptr_nonnull(strstr(err.message, "code used"));
  ck_assert_ptr_null(strstr(err.message, "LEAKME"));
  ck_assert_ptr_null(t.access_token);

  const char *notype = "{\"access_token\":\"AT\",\"token_type\":\"mac\"}";
  ck_assert_int_eq(mcp__oauth_parse_token_response(200, notype, strlen(notype), 0, &t, &err),
                   MCP_EPROTO);
  const char *none = "{\"token_type\":\"Bearer\"}";
  ck_assert_int_eq(mcp__oauth_parse_token_response(200, none, strlen(none), 0, &t, &err),
                   MCP_EPROTO);
  const char *crlf = "{\"access_token\":\"a\\r\\nX-Evil: 1\"}";
  ck_assert_int_eq(mcp__oauth_parse_token_response(200, crlf, strlen(crlf), 0, &t, &err),
                   MCP_EPROTO);
  ck_assert_int_eq(mcp__oauth_parse_token_response(200, "[1]", 3, 0, &t, &err), MCP_EPROTO);
  ck_assert_int_eq(mcp__oauth_parse_token_response(200, "", 0, 0, &t, &err), MCP_EPROTO);
  mcp_error_clear(&err);
}
END_TEST

START_TEST(test_options_validation) {
  mcp_oauth_options *o = mcp_oauth_options_new();
  ck_assert_int_eq(mcp_oauth_options_set_redirect_uri(o, "not a url"), MCP_EINVAL);
  ck_assert_int_eq(mcp_oauth_options_set_client_metadata_url(o, "ftp://x"), MCP_EINVAL);
  ck_assert_int_eq(mcp_oauth_options_set_client(o, "", NULL), MCP_EINVAL);
  ck_assert_int_eq(mcp_oauth_options_set_grant(o, (mcp_oauth_grant)7), MCP_EINVAL);
  ck_assert_int_eq(mcp_oauth_options_set_id_jag(o, "http://idp/token", NULL, ""), MCP_EINVAL);
  ck_assert_int_eq(mcp_oauth_options_set_client(o, "id", "secret"), MCP_OK);
  mcp_client_options *co = mcp_client_options_new();
  ck_assert_int_eq(mcp_client_options_set_oauth(co, o), MCP_OK);
  mcp_oauth_options_free(o); /* the client options keep their own copy */
  ck_assert_int_eq(mcp_client_options_set_oauth(co, NULL), MCP_OK);
  ck_assert_int_eq(mcp_client_options_set_oauth(NULL, NULL), MCP_EINVAL);
  mcp_client_options_free(co);
  mcp_oauth_options_free(NULL);
}
END_TEST

/* RFC 9207 / SEP-2468: the four rows of the table, form-decoding, and no
 * normalization of any kind. */
START_TEST(test_iss_table) {
  const char *is = "https://as.example.com";
  mcp_error err = MCP_ERROR_INIT;
  /* advertised + present and equal: proceed. */
  ck_assert_int_eq(mcp__oauth_check_iss("http://127.0.0.1:1/cb?code=x&state=s&iss=https%3A%2F%2Fas."
                                        "example.com",
                                        is, true, &err),
                   MCP_OK);
  /* advertised + absent: reject. */
  ck_assert_int_eq(mcp__oauth_check_iss("http://127.0.0.1:1/cb?code=x&state=s", is, true, &err),
                   MCP_EPROTO);
  ck_assert_ptr_nonnull(strstr(err.message, "no iss"));
  ck_assert_ptr_nonnull(strstr(err.message, is));
  mcp_error_clear(&err);
  /* not advertised + present: compared anyway; wrong is refused. */
  ck_assert_int_eq(
      mcp__oauth_check_iss("http://x/cb?code=x&iss=https://evil.example.com", is, false, &err),
      MCP_EPROTO);
  ck_assert_ptr_nonnull(strstr(err.message, "evil.example.com"));
  ck_assert_ptr_nonnull(strstr(err.message, "not redeeming"));
  mcp_error_clear(&err);
  ck_assert_int_eq(
      mcp__oauth_check_iss("http://x/cb?code=x&iss=https://as.example.com", is, false, &err),
      MCP_OK);
  /* not advertised + absent: proceed. */
  ck_assert_int_eq(mcp__oauth_check_iss("http://x/cb?code=x", is, false, &err), MCP_OK);
  ck_assert_int_eq(mcp__oauth_check_iss("http://x/cb", is, false, &err), MCP_OK);
  /* Only byte equality after form-decoding: trailing slash, case, default
   * port, percent-encoding and an empty iss all differ. */
  const char *near[] = {
      "iss=https://as.example.com/",
      "iss=HTTPS://AS.EXAMPLE.COM",
      "iss=https://As.example.com",
      "iss=https://as.example.com:443",
      "iss=https%3A%2F%2Fas.example.com%2F",
      "iss=https://as.example.co%256d",
      "iss=",
      "iss",
      "iss=https://as.example.com%00",
      "iss=+https://as.example.com",
  };
  for (size_t i = 0; i < sizeof(near) / sizeof(*near); i++) {
    char url[256];
    snprintf(url, sizeof(url), "http://x/cb?code=x&state=s&%s", near[i]);
    for (int adv = 0; adv < 2; adv++) {
      ck_assert_msg(mcp__oauth_check_iss(url, is, adv, &err) == MCP_EPROTO, "%s accepted", url);
      mcp_error_clear(&err);
    }
  }
  /* The first iss counts (RFC 6749 section 3.1); one in the fragment is
   * not in the response. */
  ck_assert_int_eq(mcp__oauth_check_iss("http://x/cb?iss=https://evil&iss=https://as.example.com",
                                        is, true, &err),
                   MCP_EPROTO);
  mcp_error_clear(&err);
  ck_assert_int_eq(
      mcp__oauth_check_iss("http://x/cb?code=x#iss=https://as.example.com", is, true, &err),
      MCP_EPROTO);
  mcp_error_clear(&err);
  /* An error response from the wrong issuer: its error text is not shown. */
  ck_assert_int_eq(mcp__oauth_check_iss("http://x/cb?error=access_denied&error_description=Call+"
                                        "0800-FRAUD&iss=https://evil.example.com",
                                        is, true, &err),
                   MCP_EPROTO);
  ck_assert_ptr_null(strstr(err.message, "access_denied"));
  ck_assert_ptr_null(strstr(err.message, "FRAUD"));
  mcp_error_clear(&err);
}
END_TEST

/* RFC 8414 section 3.3 and SEP-2350's scope union, the pure parts. */
START_TEST(test_as_issuer_and_scope_union) {
  mcp_error err = MCP_ERROR_INIT;
  json_object *as = json_tokener_parse("{\"issuer\":\"https://as.example.com\"}");
  ck_assert_int_eq(mcp__oauth_check_as_issuer(as, "https://as.example.com", &err), MCP_OK);
  ck_assert_int_eq(mcp__oauth_check_as_issuer(as, "https://as.example.com/", &err), MCP_EPROTO);
  ck_assert_ptr_nonnull(strstr(err.message, "https://as.example.com/"));
  mcp_error_clear(&err);
  ck_assert_int_eq(mcp__oauth_check_as_issuer(as, "https://other.example.com", &err), MCP_EPROTO);
  ck_assert_ptr_nonnull(strstr(err.message, "https://other.example.com"));
  ck_assert_ptr_nonnull(strstr(err.message, "https://as.example.com"));
  mcp_error_clear(&err);
  json_object_put(as);
  as = json_tokener_parse("{\"issuer\":7}");
  ck_assert_int_eq(mcp__oauth_check_as_issuer(as, "https://as.example.com", &err), MCP_EPROTO);
  mcp_error_clear(&err);
  json_object_put(as);
  /* RFC 8414 section 2: issuer is REQUIRED; without it the metadata is not
   * used, and the error names the URL. */
  as = json_tokener_parse("{\"token_endpoint\":\"https://as.example.com/t\"}");
  ck_assert_int_eq(mcp__oauth_check_as_issuer(as, "https://as.example.com", &err), MCP_EPROTO);
  ck_assert_str_eq(err.message, "the authorization server metadata of https://as.example.com has "
                                "no issuer (RFC 8414 section 2 requires one): not using it");
  mcp_error_clear(&err);
  json_object_put(as);
  ck_assert_int_eq(mcp__oauth_check_as_issuer(NULL, "https://as.example.com", &err), MCP_OK);

  char *u = mcp__oauth_scope_union("mcp:basic", "mcp:write");
  ck_assert_str_eq(u, "mcp:basic mcp:write");
  free(u);
  u = mcp__oauth_scope_union("  a b  c ", "c d a e");
  ck_assert_str_eq(u, "a b c d e");
  free(u);
  u = mcp__oauth_scope_union(NULL, "x");
  ck_assert_str_eq(u, "x");
  free(u);
  u = mcp__oauth_scope_union("ab", "a b");
  ck_assert_str_eq(u, "ab a b");
  free(u);
  u = mcp__oauth_scope_union(" ", NULL);
  ck_assert_str_eq(u, "");
  free(u);
}
END_TEST

/* A DPoP proof's header and claims, its signature checked with OpenSSL
 * against the public key in its own jwk (RFC 9449 section 4.3 steps 5-6). */
static json_object *verify_dpop(const char *proof, json_object **hdr_out) {
  const char *d1 = strchr(proof, '.');
  ck_assert_ptr_nonnull(d1);
  unsigned char hdr[512];
  size_t hl = b64url_decode(proof, (size_t)(d1 - proof), hdr);
  hdr[hl] = 0;
  json_object *h = json_tokener_parse((char *)hdr);
  ck_assert_ptr_nonnull(h);
  ck_assert_str_eq(json_object_get_string(json_object_object_get(h, "typ")), "dpop+jwt");
  json_object *jwk = json_object_object_get(h, "jwk");
  ck_assert_ptr_nonnull(jwk);
  ck_assert_msg(!json_object_object_get(jwk, "d"), "the jwk carries the private key");
  ck_assert_str_eq(json_object_get_string(json_object_object_get(jwk, "kty")), "EC");
  ck_assert_str_eq(json_object_get_string(json_object_object_get(jwk, "crv")), "P-256");
  unsigned char pub[65] = {0x04}, tmp[64];
  const char *x = json_object_get_string(json_object_object_get(jwk, "x"));
  const char *y = json_object_get_string(json_object_object_get(jwk, "y"));
  ck_assert_uint_eq(b64url_decode(x, strlen(x), tmp), 32);
  memcpy(pub + 1, tmp, 32);
  ck_assert_uint_eq(b64url_decode(y, strlen(y), tmp), 32);
  memcpy(pub + 33, tmp, 32);
  /* The public key from the jwk alone, as a server builds it. */
  char group[] = "prime256v1";
  OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string("group", group, 0),
                         OSSL_PARAM_construct_octet_string("pub", pub, sizeof(pub)),
                         OSSL_PARAM_construct_end()};
  EVP_PKEY_CTX *pc = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
  EVP_PKEY *key = NULL;
  ck_assert(pc && EVP_PKEY_fromdata_init(pc) == 1 &&
            EVP_PKEY_fromdata(pc, &key, EVP_PKEY_PUBLIC_KEY, params) == 1);
  EVP_PKEY_CTX_free(pc);
  json_object *c = verify_jwt(proof, key, true);
  EVP_PKEY_free(key);
  ck_assert_ptr_nonnull(c);
  *hdr_out = h;
  return c;
}

static const char *jstr(json_object *o, const char *k) {
  json_object *v = json_object_object_get(o, k);
  return v ? json_object_get_string(v) : NULL;
}

START_TEST(test_dpop_proof) {
  mcp_dpop_key *k = NULL, *k2 = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp__dpop_key_new(&k, &err), MCP_OK);
  char *p1 = NULL, *p2 = NULL;
  const char *tok = "at-SECRET-token";
  ck_assert_int_eq(mcp__dpop_proof(k, "POST", "https://mcp.example:8443/mcp?x=1#frag", tok, "n-1",
                                   1700000000, &p1, &err),
                   MCP_OK);
  json_object *h = NULL, *c = verify_dpop(p1, &h);
  ck_assert_str_eq(jstr(c, "htm"), "POST");
  ck_assert_str_eq(jstr(c, "htu"), "https://mcp.example:8443/mcp"); /* no query, no fragment */
  ck_assert_int_eq(json_object_get_int64(json_object_object_get(c, "iat")), 1700000000);
  ck_assert_str_eq(jstr(c, "nonce"), "n-1");
  /* ath = base64url(SHA-256(token)), computed here with OpenSSL. */
  unsigned char md[32];
  SHA256((const unsigned char *)tok, strlen(tok), md);
  char want[64];
  EVP_EncodeBlock((unsigned char *)want, md, 32);
  for (char *q = want; *q; q++) *q = *q == '+' ? '-' : *q == '/' ? '_' : *q;
  want[strcspn(want, "=")] = 0;
  ck_assert_str_eq(jstr(c, "ath"), want);
  /* The thumbprint is SHA-256 of the canonical jwk (RFC 7638 section 3). */
  const char *jwk = json_object_to_json_string_ext(json_object_object_get(h, "jwk"),
                                                   JSON_C_TO_STRING_PLAIN);
  SHA256((const unsigned char *)jwk, strlen(jwk), md);
  EVP_EncodeBlock((unsigned char *)want, md, 32);
  for (char *q = want; *q; q++) *q = *q == '+' ? '-' : *q == '/' ? '_' : *q;
  want[strcspn(want, "=")] = 0;
  ck_assert_str_eq(mcp__dpop_key_jkt(k), want);
  char *jti1 = strdup(jstr(c, "jti"));
  ck_assert_uint_ge(strlen(jti1), 16);
  json_object_put(c);
  json_object_put(h);

  /* A token request: no ath, no nonce; a fresh jti. */
  ck_assert_int_eq(
      mcp__dpop_proof(k, "POST", "https://as.example/token", NULL, NULL, 1700000001, &p2, &err),
      MCP_OK);
  c = verify_dpop(p2, &h);
  ck_assert_ptr_null(json_object_object_get(c, "ath"));
  ck_assert_ptr_null(json_object_object_get(c, "nonce"));
  ck_assert_str_eq(jstr(c, "htu"), "https://as.example/token");
  ck_assert_str_ne(jstr(c, "jti"), jti1);
  json_object_put(c);
  json_object_put(h);
  /* The proofs never carry the token itself. */
  ck_assert_ptr_null(strstr(p1, "SECRET"));

  /* Export and load: the same key (same public jwk); garbage is refused. */
  char *ex = mcp__dpop_key_export(k);
  ck_assert_ptr_nonnull(ex);
  ck_assert_int_eq(mcp__dpop_key_load(ex, &k2, &err), MCP_OK);
  ck_assert_str_eq(mcp__dpop_key_jwk(k2), mcp__dpop_key_jwk(k));
  ck_assert_str_ne(ex, mcp__dpop_key_jwk(k));
  mcp__dpop_key_free(k2);
  k2 = NULL;
  ck_assert_int_eq(mcp__dpop_key_load("bm9wZQ", &k2, &err), MCP_EINVAL);
  ck_assert_int_eq(mcp__dpop_key_load("*", &k2, &err), MCP_EINVAL);
  ck_assert_ptr_null(k2);
  mcp_error_clear(&err);
  free(jti1);
  mcp__free(ex);
  mcp__free(p1);
  mcp__free(p2);
  mcp__dpop_key_free(k);
}
END_TEST

/* An unsigned-looking compact JWT with |claims| (the signature part is
 * junk: only the authorization server checks it). */
static char *fake_jwt(const char *claims) {
  char *h = mcp__oauth_b64url((const unsigned char *)"{\"alg\":\"ES256\",\"typ\":\"JWT\"}", 27);
  char *c = mcp__oauth_b64url((const unsigned char *)claims, strlen(claims));
  char *j = NULL;
  ck_assert_int_ge(asprintf(&j, "%s.%s.SECRETSIG", h, c), 0);
  mcp__free(h);
  mcp__free(c);
  return j;
}

static void wif_refused(const char *claims, const char *want) {
  char *j = fake_jwt(claims);
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp__oauth_check_workload_jwt(j, "https://as.example",
                                                 "https://as.example/token", 1700000000, &err),
                   MCP_ECONFIG);
  ck_assert_msg(strstr(err.message, want), "%s: want \"%s\" in \"%s\"", claims, want, err.message);
  ck_assert_msg(!strstr(err.message, "SECRET") && !strstr(err.message, j), "the JWT leaked: %s",
                err.message);
  mcp_error_clear(&err);
  free(j);
}

static void wif_ok(const char *claims) {
  char *j = fake_jwt(claims);
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_msg(mcp__oauth_check_workload_jwt(j, "https://as.example", "https://as.example/token",
                                              1700000000, &err) == MCP_OK,
                "%s: %s", claims, err.message ? err.message : "-");
  mcp_error_clear(&err);
  free(j);
}

START_TEST(test_workload_jwt_checks) {
  wif_ok("{\"aud\":\"https://as.example\",\"exp\":1700000600}");
  wif_ok("{\"aud\":\"https://as.example/\",\"exp\":1700000600}"); /* a trailing '/' aside */
  wif_ok("{\"aud\":[\"x\",\"https://as.example/token\"]}");       /* the token endpoint */
  wif_ok("{\"aud\":\"api://AzureADTokenExchange\"}"); /* not a URL: the server's to judge */
  wif_ok("{\"sub\":\"w\"}");
  wif_refused("{\"aud\":\"https://as.example\",\"exp\":1699999940}", "expired");
  wif_refused("{\"aud\":\"https://as.example\",\"exp\":1699999940}", "60 s ago");
  wif_refused("{\"aud\":\"https://wrong.example\",\"exp\":1700000600}", "another audience");
  wif_refused("{\"aud\":\"https://wrong.example\"}", "https://wrong.example");
  wif_refused("{\"aud\":[\"https://a.example\",\"https://as.example.evil\"]}", "another audience");
  wif_refused("[1]", "not a base64url JSON object");
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp__oauth_check_workload_jwt("abc", "https://as.example", NULL, 1, &err),
                   MCP_ECONFIG);
  ck_assert_ptr_nonnull(strstr(err.message, "three parts"));
  ck_assert_int_eq(mcp__oauth_check_workload_jwt("a.!!.c", "https://as.example", NULL, 1, &err),
                   MCP_ECONFIG);
  mcp_error_clear(&err);

  /* The setters: exactly one source, never empty. */
  mcp_oauth_options *o = mcp_oauth_options_new();
  ck_assert_int_eq(mcp_oauth_options_set_workload_jwt(o, NULL, NULL), MCP_EINVAL);
  ck_assert_int_eq(mcp_oauth_options_set_workload_jwt(o, "a", "/f"), MCP_EINVAL);
  ck_assert_int_eq(mcp_oauth_options_set_workload_jwt(o, "", NULL), MCP_EINVAL);
  ck_assert_int_eq(mcp_oauth_options_set_workload_jwt(o, "a.b.c", NULL), MCP_OK);
  ck_assert_int_eq(mcp_oauth_options_set_dpop(o, (mcp_oauth_dpop)7), MCP_EINVAL);
  ck_assert_int_eq(mcp_oauth_options_set_dpop(o, MCP_OAUTH_DPOP_OFF), MCP_OK);
  mcp_oauth_options_free(o);
}
END_TEST

/* ========================================================================== */
/* Flows against tests/interop/oauth-http.mjs                                 */
/* ========================================================================== */

/* One plain HTTP/1.1 request to 127.0.0.1:|port|; returns the whole answer
 * (malloc'ed). */
static char *http_raw(int port, const char *method, const char *target) {
  struct sockaddr_in a = {0};
  a.sin_family = AF_INET;
  a.sin_port = htons((uint16_t)port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
  char req[2048];
  int n = snprintf(
      req, sizeof(req),
      "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
      method, target, port);
  ck_assert_int_eq(write(fd, req, (size_t)n), n);
  size_t cap = 65536, len = 0;
  char *buf = malloc(cap);
  ssize_t r;
  while ((r = read(fd, buf + len, cap - 1 - len)) > 0) len += (size_t)r;
  close(fd);
  buf[len] = '\0';
  return buf;
}

/* GET /stats -> counter |name|. */
static int stat_of(int port, const char *name) {
  char *resp = http_raw(port, "GET", "/stats");
  char *body = strstr(resp, "\r\n\r\n");
  ck_assert_ptr_nonnull(body);
  json_object *o = json_tokener_parse(body + 4);
  ck_assert_ptr_nonnull(o);
  json_object *v = NULL;
  ck_assert_msg(json_object_object_get_ex(o, name, &v), "no stat %s", name);
  int n = json_object_get_int(v);
  json_object_put(o);
  free(resp);
  return n;
}

/* Everything the library told us, to look for leaked tokens. */
typedef struct seen {
  pthread_mutex_t mu;
  char text[1 << 16];
  size_t len;
  int authorizes;
  bool refuse;
  int think_ms; /* the person takes this long to log in */
} seen;

static void seen_add(seen *s, const char *line) {
  pthread_mutex_lock(&s->mu);
  size_t n = strlen(line);
  if (s->len + n + 2 < sizeof(s->text)) {
    memcpy(s->text + s->len, line, n);
    s->len += n;
    s->text[s->len++] = '\n';
    s->text[s->len] = '\0';
  }
  pthread_mutex_unlock(&s->mu);
}

static void on_log(void *user, mcp_log_level level, const char *msg) {
  (void)level;
  seen_add(user, msg);
}

/* The browser: GET the authorization URL and return its Location. */
static mcp_status browser(void *user, const char *url, const char *redirect_uri, char **out,
                          mcp_error *err) {
  seen *s = user;
  pthread_mutex_lock(&s->mu);
  s->authorizes++;
  bool refuse = s->refuse;
  int think_ms = s->think_ms;
  pthread_mutex_unlock(&s->mu);
  if (think_ms > 0) {
    /* Not a synchronisation: the slow human this test is about. */
    struct timespec ts = {think_ms / 1000, (think_ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
  }
  ck_assert_ptr_nonnull(strstr(url, "code_challenge_method=S256"));
  ck_assert_ptr_nonnull(strstr(url, "resource=http%3A%2F%2F127.0.0.1"));
  ck_assert_str_eq(redirect_uri, "http://127.0.0.1:1/callback");
  if (refuse) {
    mcp__error_set(err, MCP_ECANCELLED, "the person closed the window");
    return MCP_ECANCELLED;
  }
  int port = 0;
  ck_assert_int_eq(sscanf(url, "http://127.0.0.1:%d/", &port), 1);
  char *resp = http_raw(port, "GET", strstr(url + 7, "/"));
  char *loc = strstr(resp, "\r\nLocation: ");
  if (!loc) loc = strstr(resp, "\r\nlocation: ");
  ck_assert_ptr_nonnull(loc);
  loc += 12;
  *out = strndup(loc, strcspn(loc, "\r\n"));
  free(resp);
  return MCP_OK;
}

/* An in-memory token store. */
typedef struct mem_store {
  pthread_mutex_t mu;
  char *key, *data;
  int saves;
} mem_store;

static mcp_status mem_load(void *user, const char *key, char **data) {
  mem_store *m = user;
  pthread_mutex_lock(&m->mu);
  mcp_status st = MCP_ENOTFOUND;
  if (m->key && strcmp(m->key, key) == 0) {
    *data = strdup(m->data);
    st = MCP_OK;
  }
  pthread_mutex_unlock(&m->mu);
  return st;
}

static mcp_status mem_save(void *user, const char *key, const char *data) {
  mem_store *m = user;
  pthread_mutex_lock(&m->mu);
  free(m->key);
  free(m->data);
  m->key = strdup(key);
  m->data = strdup(data);
  m->saves++;
  pthread_mutex_unlock(&m->mu);
  return MCP_OK;
}

typedef struct fixture {
  node_server server;
  char url[256];
  seen seen;
  mem_store store;
  char store_dir[512];
  bool use_file_store, no_authorize;
  int timeout_ms;                           /* the client's request timeout; 0: START_MS */
  const char *workload_jwt, *workload_file; /* SEP-1933 sources */
  bool workload_cb;
  const char *client_id, *client_issuer; /* pre-registration (SEP-2352) */
  char cb_audience[256];                 /* what the workload callback was asked for */
} fixture;

static void start(fixture *f) {
  memset(f, 0, sizeof(*f));
  pthread_mutex_init(&f->seen.mu, NULL);
  pthread_mutex_init(&f->store.mu, NULL);
  node_server_start(&f->server, NULL, START_MS,
                    (const char *const[]){interop_path("oauth-http.mjs"), NULL});
  snprintf(f->url, sizeof(f->url), "http://127.0.0.1:%d/mcp", f->server.port);
}

/* The host's workload identity callback: hands out f->workload_jwt. */
static mcp_status workload_cb(void *user, const char *audience, char **jwt, mcp_error *err) {
  (void)err;
  fixture *f = user;
  snprintf(f->cb_audience, sizeof(f->cb_audience), "%s", audience);
  *jwt = strdup(f->workload_jwt);
  return MCP_OK;
}

static mcp_status try_connect(fixture *f, mcp_client **out, mcp_error *err) {
  mcp_oauth_options *oa = mcp_oauth_options_new();
  ck_assert_int_eq(mcp_oauth_options_set_redirect_uri(oa, "http://127.0.0.1:1/callback"), MCP_OK);
  if (!f->no_authorize) mcp_oauth_options_set_authorize(oa, browser, &f->seen);
  if (f->workload_jwt || f->workload_file)
    ck_assert_int_eq(mcp_oauth_options_set_workload_jwt(oa, f->workload_jwt, f->workload_file),
                     MCP_OK);
  if (f->workload_cb) mcp_oauth_options_set_workload_jwt_callback(oa, workload_cb, f);
  if (f->client_id) ck_assert_int_eq(mcp_oauth_options_set_client(oa, f->client_id, NULL), MCP_OK);
  if (f->client_issuer)
    ck_assert_int_eq(mcp_oauth_options_set_client_issuer(oa, f->client_issuer), MCP_OK);
  if (f->use_file_store)
    ck_assert_int_eq(mcp_oauth_options_set_file_store(oa, f->store_dir), MCP_OK);
  else mcp_oauth_options_set_store(oa, mem_load, mem_save, &f->store);
  mcp_client_options *o = mcp_client_options_new();
  ck_assert_int_eq(mcp_client_options_set_http(o, f->url, MCP_HTTP_TRANSPORT_STREAMABLE), MCP_OK);
  ck_assert_int_eq(mcp_client_options_set_oauth(o, oa), MCP_OK);
  mcp_oauth_options_free(oa);
  mcp_client_options_set_timeout_ms(o, f->timeout_ms ? f->timeout_ms : START_MS);
  mcp_client_options_set_log(o, on_log, &f->seen);
  mcp_status st = mcp_client_connect(o, out, err);
  mcp_client_options_free(o);
  if (err && err->message) seen_add(&f->seen, err->message);
  return st;
}

static mcp_client *connect_ok(fixture *f) {
  mcp_client *c = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = try_connect(f, &c, &err);
  ck_assert_msg(st == MCP_OK, "connect: %s (%s)", mcp_strerror(st),
                err.message ? err.message : "-");
  mcp_error_clear(&err);
  return c;
}

static void list_ok(mcp_client *c) {
  char *tools = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_client_list_tools(c, NULL, &tools, &err);
  ck_assert_msg(st == MCP_OK, "tools/list: %s (%s)", mcp_strerror(st),
                err.message ? err.message : "-");
  ck_assert_ptr_nonnull(strstr(tools, "whoami"));
  mcp_free(tools);
  mcp_error_clear(&err);
}

/* Nothing the library said contains a token; no token went in a URL. */
static void assert_no_leak(fixture *f) {
  pthread_mutex_lock(&f->seen.mu);
  ck_assert_msg(!strstr(f->seen.text, "SECRET"), "a token leaked into a log line or error: %s",
                f->seen.text);
  pthread_mutex_unlock(&f->seen.mu);
  ck_assert_int_eq(stat_of(f->server.port, "tokenInQuery"), 0);
  ck_assert_int_eq(stat_of(f->server.port, "badPkce"), 0);
  ck_assert_int_eq(stat_of(f->server.port, "missingResource"), 0);
}

static void finish(fixture *f) {
  node_server_stop(&f->server);
  free(f->store.key);
  free(f->store.data);
  pthread_mutex_destroy(&f->seen.mu);
  pthread_mutex_destroy(&f->store.mu);
}

START_TEST(test_flow_and_store_reuse) {
  fixture f;
  start(&f);
  mcp_client *c = connect_ok(&f);
  list_ok(c);
  int port = f.server.port;
  ck_assert_int_eq(stat_of(port, "prm"), 1);
  ck_assert_int_eq(stat_of(port, "asMetadata"), 1);
  ck_assert_int_eq(stat_of(port, "register"), 1);
  ck_assert_int_eq(stat_of(port, "authorize"), 1);
  ck_assert_int_eq(stat_of(port, "tokenCode"), 1);
  ck_assert_int_eq(f.seen.authorizes, 1);
  /* The initialize without a token was the only 401. */
  ck_assert_int_eq(stat_of(port, "unauthorized"), 1);
  ck_assert_int_ge(f.store.saves, 1);
  ck_assert_ptr_nonnull(strstr(f.store.key, "/mcp"));
  mcp_client_free(c);

  /* A second client with the same store: no new flow, no 401. */
  c = connect_ok(&f);
  list_ok(c);
  mcp_client_free(c);
  ck_assert_int_eq(stat_of(port, "authorize"), 1);
  ck_assert_int_eq(stat_of(port, "register"), 1);
  ck_assert_int_eq(stat_of(port, "unauthorized"), 1);
  assert_no_leak(&f);
  finish(&f);
}
END_TEST

/* A person who takes longer to log in than the request timeout: the
 * initialize that met the 401 does not time out while the flow waits for
 * them; it gets its whole timeout again when it goes out with the token. */
START_TEST(test_login_longer_than_timeout) {
  fixture f;
  start(&f);
  f.timeout_ms = 1000;
  f.seen.think_ms = 2500;
  mcp_client *c = connect_ok(&f);
  ck_assert_int_eq(f.seen.authorizes, 1);
  list_ok(c);
  mcp_client_free(c);
  assert_no_leak(&f);
  finish(&f);
}
END_TEST

typedef struct lister {
  mcp_client *c;
  mcp_status st;
} lister;

static void *list_thread(void *arg) {
  lister *l = arg;
  char *tools = NULL;
  l->st = mcp_client_list_tools(l->c, NULL, &tools, NULL);
  mcp_free(tools);
  return NULL;
}

START_TEST(test_refresh_shared_by_concurrent_requests) {
  fixture f;
  start(&f);
  mcp_client *c = connect_ok(&f);
  list_ok(c);
  int port = f.server.port;
  free(http_raw(port, "POST", "/control/expire"));
  enum { N = 6 };
  lister l[N];
  pthread_t th[N];
  for (int i = 0; i < N; i++) {
    l[i].c = c;
    ck_assert_int_eq(pthread_create(&th[i], NULL, list_thread, &l[i]), 0);
  }
  for (int i = 0; i < N; i++) {
    pthread_join(th[i], NULL);
    ck_assert_msg(l[i].st == MCP_OK, "request %d: %s", i, mcp_strerror(l[i].st));
  }
  /* Every request met a 401 or went out with the new token; one refresh
   * answered them all, and nobody had to log in again. */
  ck_assert_int_eq(stat_of(port, "tokenRefresh"), 1);
  ck_assert_int_eq(stat_of(port, "authorize"), 1);
  ck_assert_int_ge(stat_of(port, "unauthorized"), 2);
  mcp_client_free(c);
  assert_no_leak(&f);
  finish(&f);
}
END_TEST

/* Both tokens revoked: the refresh is refused, and a new authorization
 * (the browser again) follows at once; the call succeeds. */
START_TEST(test_refresh_refused_reauthorizes) {
  fixture f;
  start(&f);
  mcp_client *c = connect_ok(&f);
  int port = f.server.port;
  free(http_raw(port, "POST", "/control/revoke"));
  list_ok(c);
  ck_assert_int_eq(stat_of(port, "tokenRefresh"), 1);
  ck_assert_int_eq(stat_of(port, "authorize"), 2);
  ck_assert_int_eq(stat_of(port, "tokenCode"), 2);
  ck_assert_int_eq(stat_of(port, "register"), 1); /* the registration is kept */
  ck_assert_int_eq(f.seen.authorizes, 2);
  mcp_client_free(c);
  assert_no_leak(&f);
  finish(&f);
}
END_TEST

/* POST |target| to the test server (a control endpoint). */
static void control(fixture *f, const char *target) {
  char *r = http_raw(f->server.port, "POST", target);
  ck_assert_msg(strncmp(r, "HTTP/1.1 200", 12) == 0, "%s: %s", target, r);
  free(r);
}

/* The /authorize scopes the server saw, space-joined with '|' between. */
static char *scopes_seen(int port) {
  char *resp = http_raw(port, "GET", "/stats");
  json_object *o = json_tokener_parse(strstr(resp, "\r\n\r\n") + 4), *v = NULL;
  ck_assert_ptr_nonnull(o);
  ck_assert(json_object_object_get_ex(o, "scopes", &v));
  char out[1024] = "";
  for (size_t i = 0; i < json_object_array_length(v); i++) {
    if (i) strncat(out, "|", sizeof(out) - strlen(out) - 1);
    strncat(out, json_object_get_string(json_object_array_get_idx(v, i)),
            sizeof(out) - strlen(out) - 1);
  }
  json_object_put(o);
  free(resp);
  return strdup(out);
}

/* One connect against a server whose /authorize sends iss by |mode|, with
 * authorization_response_iss_parameter_supported |advertise|d; returns the
 * status (and the error in |msg|). */
static mcp_status iss_case(const char *mode, bool advertise, bool deny, char *msg, size_t n) {
  fixture f;
  start(&f);
  char t[128];
  snprintf(t, sizeof(t), "/control/iss?mode=%s&advertise=%d", mode, advertise ? 1 : 0);
  control(&f, t);
  if (deny) control(&f, "/control/deny");
  mcp_client *c = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = try_connect(&f, &c, &err);
  snprintf(msg, n, "%s", err.message ? err.message : "");
  mcp_error_clear(&err);
  /* (a refused connect may try the flow again: the code is never sent) */
  ck_assert_int_ge(stat_of(f.server.port, "authorize"), 1);
  if (st == MCP_OK) {
    ck_assert_int_eq(stat_of(f.server.port, "authorize"), 1);
    list_ok(c);
    mcp_client_free(c);
    ck_assert_int_eq(stat_of(f.server.port, "tokenCode"), 1);
  } else {
    ck_assert_ptr_null(c);
    /* Never redeemed, never stored. */
    ck_assert_int_eq(stat_of(f.server.port, "tokenCode"), 0);
    ck_assert_ptr_null(f.store.data ? strstr(f.store.data, "access_token") : NULL);
  }
  assert_no_leak(&f);
  finish(&f);
  return st;
}

/* SEP-2468 end to end: the redirect's iss decides whether the code is
 * redeemed, row by row of the spec's table. */
START_TEST(test_iss_flows) {
  char m[1024];
  /* advertised + correct; not advertised + absent; not advertised +
   * correct: the token request goes out. */
  ck_assert_int_eq(iss_case("correct", true, false, m, sizeof(m)), MCP_OK);
  ck_assert_int_eq(iss_case("omit", false, false, m, sizeof(m)), MCP_OK);
  ck_assert_int_eq(iss_case("correct", false, false, m, sizeof(m)), MCP_OK);
  /* advertised + absent: refused. */
  ck_assert_int_eq(iss_case("omit", true, false, m, sizeof(m)), MCP_EPROTO);
  ck_assert_msg(strstr(m, "no iss") && strstr(m, "authorization_response_iss_parameter_supported"),
                "%s", m);
  /* advertised + wrong, not advertised + wrong: refused, naming both. */
  for (int adv = 0; adv < 2; adv++) {
    ck_assert_int_eq(iss_case("wrong", adv, false, m, sizeof(m)), MCP_EPROTO);
    ck_assert_msg(strstr(m, "evil.example.com") && strstr(m, "http://127.0.0.1:") &&
                      strstr(m, "not redeeming the code"),
                  "%s", m);
  }
  /* Equal only after normalization: refused. */
  const char *near[] = {"slash", "case", "pct"};
  for (size_t i = 0; i < 3; i++) {
    ck_assert_msg(iss_case(near[i], true, false, m, sizeof(m)) == MCP_EPROTO, "%s accepted",
                  near[i]);
    ck_assert_msg(strstr(m, "not redeeming the code"), "%s", m);
  }
  /* An error response with the wrong iss is not acted on: its error code
   * is not reported; with the right iss it is. */
  ck_assert_int_eq(iss_case("wrong", true, true, m, sizeof(m)), MCP_EPROTO);
  ck_assert_msg(!strstr(m, "access_denied") && strstr(m, "evil.example.com"), "%s", m);
  ck_assert_int_eq(iss_case("correct", true, true, m, sizeof(m)), MCP_EHTTP);
  ck_assert_msg(strstr(m, "access_denied"), "%s", m);
}
END_TEST

/* RFC 8414 section 3.3: metadata naming another issuer is not used: no
 * registration, no authorization, a clear error; a good OIDC document at
 * the next well-known URL is used instead. */
START_TEST(test_metadata_issuer_mismatch) {
  fixture f;
  start(&f);
  int port = f.server.port;
  control(&f, "/control/metadata-issuer?value=https%3A%2F%2Fattacker.example.com");
  mcp_client *c = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = try_connect(&f, &c, &err);
  ck_assert_int_eq(st, MCP_EPROTO);
  ck_assert_ptr_null(c);
  ck_assert_msg(strstr(err.message, "attacker.example.com") && strstr(err.message, "127.0.0.1") &&
                    strstr(err.message, "8414"),
                "%s", err.message);
  mcp_error_clear(&err);
  ck_assert_int_ge(stat_of(port, "asMetadata"), 1);
  ck_assert_int_eq(stat_of(port, "register"), 0);
  ck_assert_int_eq(stat_of(port, "authorize"), 0);
  ck_assert_int_eq(stat_of(port, "tokenCode"), 0);
  /* Differing only by a trailing slash is a mismatch too. */
  char t[160];
  snprintf(t, sizeof(t), "/control/metadata-issuer?value=http%%3A%%2F%%2F127.0.0.1%%3A%d%%2F",
           port);
  control(&f, t);
  ck_assert_int_eq(try_connect(&f, &c, &err), MCP_EPROTO);
  mcp_error_clear(&err);
  ck_assert_int_eq(stat_of(port, "authorize"), 0);
  /* The OIDC document, next in RFC 8414's order, has the right issuer. */
  control(&f, "/control/metadata-issuer?value=https%3A%2F%2Fattacker.example.com&oidc=1");
  c = connect_ok(&f);
  list_ok(c);
  mcp_client_free(c);
  ck_assert_int_ge(stat_of(port, "oidcMetadata"), 1);
  ck_assert_int_eq(stat_of(port, "authorize"), 1);
  assert_no_leak(&f);
  finish(&f);
}
END_TEST

/* SEP-2350: a 403 insufficient_scope step-up asks for the union of the
 * scope asked for before and the challenge's, and the call then works. */
START_TEST(test_step_up_scope_union) {
  fixture f;
  start(&f);
  int port = f.server.port;
  mcp_client *c = connect_ok(&f);
  list_ok(c);
  char *res = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_client_call_tool(c, "admin", "{}", NULL, &res, &err);
  ck_assert_msg(st == MCP_OK, "admin: %s (%s)", mcp_strerror(st), err.message ? err.message : "-");
  mcp_free(res);
  mcp_error_clear(&err);
  ck_assert_int_eq(stat_of(port, "forbidden"), 1);
  char *sc = scopes_seen(port);
  ck_assert_str_eq(sc, "mcp:read|mcp:read mcp:write");
  free(sc);
  /* The token now carries both: list and admin work without a new flow. */
  list_ok(c);
  ck_assert_int_eq(mcp_client_call_tool(c, "admin", "{}", NULL, &res, &err), MCP_OK);
  mcp_free(res);
  ck_assert_int_eq(stat_of(port, "authorize"), 2);
  mcp_client_free(c);
  assert_no_leak(&f);
  finish(&f);
}
END_TEST

/* DPoP end to end against a server that checks every proof itself: the
 * token request and each MCP POST carry a valid, fresh proof; the token is
 * presented as "DPoP"; the key is kept in the host's store with the tokens,
 * so a second client uses the stored token with no new flow; neither the
 * token nor the key shows in logs, errors or URLs. */
START_TEST(test_dpop_flow_and_store) {
  fixture f;
  start(&f);
  int port = f.server.port;
  control(&f, "/control/dpop?nonce=none");
  mcp_client *c = connect_ok(&f);
  list_ok(c);
  list_ok(c);
  mcp_client_free(c);
  ck_assert_int_eq(stat_of(port, "badProofs"), 0);
  ck_assert_int_eq(stat_of(port, "dpopTokenProofs"), 1);
  int mcp_proofs = stat_of(port, "dpopMcpProofs");
  ck_assert_int_ge(mcp_proofs, 3); /* initialize, notification, 2 x tools/list */
  pthread_mutex_lock(&f.store.mu);
  json_object *st = json_tokener_parse(f.store.data);
  pthread_mutex_unlock(&f.store.mu);
  ck_assert_str_eq(jstr(st, "token_type"), "DPoP");
  char *key = strdup(jstr(st, "dpop_key"));
  json_object_put(st);

  c = connect_ok(&f); /* the stored token and key */
  list_ok(c);
  mcp_client_free(c);
  ck_assert_int_eq(stat_of(port, "tokenCode"), 1);
  ck_assert_int_eq(stat_of(port, "unauthorized"), 1);
  ck_assert_int_eq(stat_of(port, "badProofs"), 0);
  ck_assert_int_gt(stat_of(port, "dpopMcpProofs"), mcp_proofs);
  pthread_mutex_lock(&f.seen.mu);
  ck_assert_msg(!strstr(f.seen.text, key), "the DPoP key leaked: %s", f.seen.text);
  pthread_mutex_unlock(&f.seen.mu);
  free(key);
  assert_no_leak(&f);
  finish(&f);
}
END_TEST

/* Server-supplied nonces (RFC 9449 sections 8, 9): one use_dpop_nonce
 * from the token endpoint and one from the MCP server, each answered by
 * one retry; the MCP server's nonce is then kept for later requests. */
START_TEST(test_dpop_nonces) {
  fixture f;
  start(&f);
  int port = f.server.port;
  control(&f, "/control/dpop?nonce=both");
  mcp_client *c = connect_ok(&f);
  list_ok(c);
  list_ok(c);
  mcp_client_free(c);
  ck_assert_int_eq(stat_of(port, "asNonceChallenges"), 1);
  ck_assert_int_eq(stat_of(port, "rsNonceChallenges"), 1);
  ck_assert_int_eq(stat_of(port, "dpopTokenProofs"), 2);
  ck_assert_int_eq(stat_of(port, "badProofs"), 0);
  assert_no_leak(&f);
  finish(&f);
}
END_TEST

/* A server that refuses every proof's nonce: exactly one retry per
 * request, then the request fails naming the cause; no loop. */
START_TEST(test_dpop_nonce_retry_bounded) {
  const char *modes[] = {"as-always", "rs-always"};
  for (int i = 0; i < 2; i++) {
    fixture f;
    start(&f);
    int port = f.server.port;
    char target[64];
    snprintf(target, sizeof(target), "/control/dpop?nonce=%s", modes[i]);
    control(&f, target);
    mcp_client *c = NULL;
    mcp_error err = MCP_ERROR_INIT;
    mcp_status st = try_connect(&f, &c, &err);
    ck_assert_msg(st != MCP_OK, "%s: connected", modes[i]);
    ck_assert_msg(err.message && strstr(err.message, i == 0 ? "use_dpop_nonce" : "401"), "%s: %s",
                  modes[i], err.message ? err.message : "-");
    if (i == 0) {
      ck_assert_int_eq(stat_of(port, "asNonceChallenges"), 2);
      ck_assert_int_eq(stat_of(port, "dpopTokenProofs"), 2);
    } else {
      ck_assert_int_eq(stat_of(port, "rsNonceChallenges"), 2);
      ck_assert_int_eq(stat_of(port, "dpopMcpProofs"), 2);
    }
    ck_assert_int_eq(stat_of(port, "badProofs"), 0);
    mcp_error_clear(&err);
    assert_no_leak(&f);
    finish(&f);
  }
}
END_TEST

/* Workload identity (SEP-1933): the JWT bearer grant with the host's JWT
 * from the options, a file and a callback, no person involved; a JWT that
 * expired or names another audience fails before it is sent, saying so. */
START_TEST(test_workload_jwt_flow) {
  fixture f;
  start(&f);
  int port = f.server.port;
  char base[64], claims[256];
  snprintf(base, sizeof(base), "http://127.0.0.1:%d", port);
  long long now = (long long)time(NULL);
  snprintf(claims, sizeof(claims), "{\"iss\":\"idp\",\"sub\":\"w\",\"aud\":\"%s\",\"exp\":%lld}",
           base, now - 120);
  char *expired = fake_jwt(claims);
  snprintf(claims, sizeof(claims), "{\"aud\":\"https://wrong.example\",\"exp\":%lld}", now + 600);
  char *wrong = fake_jwt(claims);
  snprintf(claims, sizeof(claims), "{\"aud\":\"%s\",\"exp\":%lld}", base, now + 600);
  char *good = fake_jwt(claims);
  f.no_authorize = true;

  const char *bad[] = {expired, wrong}, *why[] = {"expired", "another audience"};
  for (int i = 0; i < 2; i++) {
    f.workload_jwt = bad[i];
    mcp_client *c = NULL;
    mcp_error err = MCP_ERROR_INIT;
    ck_assert_int_ne(try_connect(&f, &c, &err), MCP_OK);
    ck_assert_msg(err.message && strstr(err.message, why[i]), "%s", err.message);
    ck_assert_int_eq(err.status, MCP_ECONFIG);
    mcp_error_clear(&err);
  }
  ck_assert_int_eq(stat_of(port, "jwtBearer"), 0); /* never sent */

  f.workload_jwt = good;
  mcp_client *c = connect_ok(&f);
  list_ok(c);
  mcp_client_free(c);
  ck_assert_int_eq(stat_of(port, "jwtBearer"), 1);

  /* From a file (white space around it dropped), then from a callback; a
   * fresh store each time, so each needs a grant. */
  char path[] = "/tmp/mcpconn-wif-XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(dprintf(fd, "  %s\n", good) > 0, 1);
  close(fd);
  f.workload_jwt = NULL;
  f.workload_file = path;
  free(f.store.key);
  f.store.key = NULL;
  c = connect_ok(&f);
  mcp_client_free(c);
  ck_assert_int_eq(stat_of(port, "jwtBearer"), 2);
  unlink(path);
  c = NULL;
  mcp_error err = MCP_ERROR_INIT;
  free(f.store.key);
  f.store.key = NULL;
  ck_assert_int_ne(try_connect(&f, &c, &err), MCP_OK); /* the file is gone */
  ck_assert_msg(strstr(err.message, path) && strstr(err.message, "No such file"), "%s",
                err.message);
  mcp_error_clear(&err);

  f.workload_file = NULL;
  f.workload_jwt = good;
  f.workload_cb = true;
  free(f.store.key);
  f.store.key = NULL;
  c = connect_ok(&f);
  mcp_client_free(c);
  ck_assert_int_eq(stat_of(port, "jwtBearer"), 3);
  ck_assert_str_eq(f.cb_audience, base);
  ck_assert_int_eq(stat_of(port, "authorize"), 0);
  assert_no_leak(&f);
  free(expired);
  free(wrong);
  free(good);
  finish(&f);
}
END_TEST

/* SEP-2352: a client id pre-registered with another issuer is never sent
 * to this server's authorization server: the error names both; with the
 * right issuer it is used (no registration). */
START_TEST(test_preregistered_issuer) {
  fixture f;
  start(&f);
  int port = f.server.port;
  f.client_id = "pre-SECRET-id";
  f.client_issuer = "https://other-as.example";
  mcp_client *c = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_ne(try_connect(&f, &c, &err), MCP_OK);
  ck_assert_int_eq(err.status, MCP_ECONFIG);
  char want[64];
  snprintf(want, sizeof(want), "\"http://127.0.0.1:%d\"", port);
  ck_assert_msg(strstr(err.message, "\"https://other-as.example\"") && strstr(err.message, want),
                "%s", err.message);
  mcp_error_clear(&err);
  ck_assert_int_eq(stat_of(port, "authorize"), 0);
  ck_assert_int_eq(stat_of(port, "tokenCode"), 0);
  ck_assert_int_eq(stat_of(port, "register"), 0);
  char iss[64];
  snprintf(iss, sizeof(iss), "http://127.0.0.1:%d", port);
  f.client_issuer = iss;
  f.client_id = "pre-id";
  c = connect_ok(&f);
  list_ok(c);
  mcp_client_free(c);
  ck_assert_int_eq(stat_of(port, "register"), 0);
  ck_assert_int_eq(stat_of(port, "tokenCode"), 1);
  finish(&f);
}
END_TEST

/* SEP-2352: registrations are kept per issuer in the store; a stored one
 * for this server's issuer is used again instead of registering. */
START_TEST(test_registrations_per_issuer) {
  fixture f;
  start(&f);
  int port = f.server.port;
  f.store.key = strdup(f.url);
  ck_assert_int_ge(asprintf(&f.store.data,
                            "{\"resource\":\"%s\",\"registrations\":{"
                            "\"https://old-as.example\":{\"client_id\":\"old-id\"},"
                            "\"http://127.0.0.1:%d\":{\"client_id\":\"client-77\","
                            "\"token_endpoint_auth_method\":\"none\"}}}",
                            f.url, port),
                   0);
  mcp_client *c = connect_ok(&f);
  list_ok(c);
  mcp_client_free(c);
  ck_assert_int_eq(stat_of(port, "register"), 0);
  ck_assert_int_eq(stat_of(port, "tokenCode"), 1);
  pthread_mutex_lock(&f.store.mu);
  ck_assert_ptr_nonnull(strstr(f.store.data, "\"old-id\"")); /* the other issuer's is kept */
  ck_assert_ptr_nonnull(strstr(f.store.data, "\"client-77\""));
  pthread_mutex_unlock(&f.store.mu);
  finish(&f);
}
END_TEST

START_TEST(test_file_store) {
  fixture f;
  start(&f);
  char base[256];
  interop_mkdtemp(base, sizeof(base), "oauth-store");
  snprintf(f.store_dir, sizeof(f.store_dir), "%s/deep/mcpconn", base);
  f.use_file_store = true;
  mcp_client *c = connect_ok(&f);
  mcp_client_free(c);
  struct stat sb;
  ck_assert_int_eq(stat(f.store_dir, &sb), 0);
  ck_assert_int_eq(sb.st_mode & 0777, 0700);
  DIR *d = opendir(f.store_dir);
  ck_assert_ptr_nonnull(d);
  int files = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    files++;
    char p[1024];
    snprintf(p, sizeof(p), "%s/%s", f.store_dir, e->d_name);
    ck_assert_int_eq(stat(p, &sb), 0);
    ck_assert_int_eq(sb.st_mode & 0777, 0600);
    ck_assert_ptr_nonnull(strstr(e->d_name, ".json"));
  }
  closedir(d);
  ck_assert_int_eq(files, 1);
  /* Reused by the next client. */
  c = connect_ok(&f);
  list_ok(c);
  mcp_client_free(c);
  ck_assert_int_eq(stat_of(f.server.port, "authorize"), 1);
  assert_no_leak(&f);
  interop_rm_rf(base);
  finish(&f);
}
END_TEST

START_TEST(test_refused_authorization) {
  fixture f;
  start(&f);
  f.seen.refuse = true;
  mcp_client *c = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = try_connect(&f, &c, &err);
  ck_assert_int_eq(st, MCP_ECANCELLED);
  ck_assert_ptr_null(c);
  ck_assert_ptr_nonnull(strstr(err.message, "authorization failed"));
  ck_assert_ptr_nonnull(strstr(err.message, "closed the window"));
  mcp_error_clear(&err);
  ck_assert_int_eq(stat_of(f.server.port, "tokenCode"), 0);

  /* The authorization server says no: its error reaches the caller. */
  f.seen.refuse = false;
  free(http_raw(f.server.port, "POST", "/control/deny"));
  st = try_connect(&f, &c, &err);
  ck_assert_int_eq(st, MCP_EHTTP);
  ck_assert_ptr_nonnull(strstr(err.message, "access_denied"));
  mcp_error_clear(&err);
  ck_assert_int_eq(stat_of(f.server.port, "tokenCode"), 0);

  /* No authorize callback: a configuration error that says what to set. */
  f.no_authorize = true;
  st = try_connect(&f, &c, &err);
  ck_assert_int_eq(st, MCP_ECONFIG);
  ck_assert_ptr_nonnull(strstr(err.message, "mcp_oauth_options_set_authorize"));
  mcp_error_clear(&err);
  assert_no_leak(&f);
  finish(&f);
}
END_TEST

/* A flow stuck on an authorization server that never answers does not hold
 * the client's close for the engine's 30 s request timeout: the request's
 * own deadline ends connect, and close cancels the flow's request. */
START_TEST(test_close_cancels_stuck_flow) {
  fixture f;
  start(&f);
  free(http_raw(f.server.port, "POST", "/control/stall-token"));
  mcp_oauth_options *oa = mcp_oauth_options_new();
  ck_assert_int_eq(mcp_oauth_options_set_redirect_uri(oa, "http://127.0.0.1:1/callback"), MCP_OK);
  mcp_oauth_options_set_authorize(oa, browser, &f.seen);
  mcp_client_options *o = mcp_client_options_new();
  ck_assert_int_eq(mcp_client_options_set_http(o, f.url, MCP_HTTP_TRANSPORT_STREAMABLE), MCP_OK);
  ck_assert_int_eq(mcp_client_options_set_oauth(o, oa), MCP_OK);
  mcp_oauth_options_free(oa);
  mcp_client_options_set_timeout_ms(o, 3000);
  mcp_client *c = NULL;
  mcp_error err = MCP_ERROR_INIT;
  long long t0 = test_now_ms();
  mcp_status st = mcp_client_connect(o, &c, &err);
  long long took = test_now_ms() - t0;
  mcp_client_options_free(o);
  ck_assert_int_eq(st, MCP_ETIMEDOUT);
  ck_assert_ptr_null(c);
  mcp_error_clear(&err);
  ck_assert_int_eq(stat_of(f.server.port, "stalled"), 1);
  ck_assert_msg(took < 20000, "connect took %lld ms", took);
  finish(&f);
}
END_TEST

/* ---- configuration: a server's "oauth" object ------------------------------ */

static const char *cfg_env(void *user, const char *name) {
  (void)user;
  if (strcmp(name, "CID") == 0) return "cfg-client";
  if (strcmp(name, "SEC") == 0) return "cfg-SECRET-value";
  return NULL;
}

static mcp_config_set *parse_cfg(const char *text) {
  mcp_config_parse_opts o = {.dialect = MCP_CONFIG_NATIVE, .getenv = cfg_env};
  mcp_config_set *set = NULL;
  ck_assert_int_eq(mcp__config_parse_text(text, strlen(text), "test.json", &o, &set), MCP_OK);
  return set;
}

START_TEST(test_config_oauth) {
  mcp_config_set *set = parse_cfg(
      "{\"mcpServers\": {\"s\": {\"url\": \"https://h.example/mcp\", \"oauth\": {"
      "\"clientId\": \"${CID}\", \"clientSecret\": \"${SEC}\", \"scopes\": \"a b\", "
      "\"grant\": \"client_credentials\", \"redirectUri\": \"http://127.0.0.1:9/cb\"}}}}");
  const mcp_server_def *d = mcp__config_find(set, "s");
  ck_assert_ptr_nonnull(d);
  ck_assert_ptr_nonnull(d->oauth);
  ck_assert_str_eq(d->oauth->client_id, "cfg-client");
  ck_assert_str_eq(d->oauth->client_secret, "cfg-SECRET-value");
  ck_assert_str_eq(d->oauth->scopes, "a b");
  ck_assert(d->oauth->client_credentials);
  /* The canonical form (hashed, and what identifies the server) marks the
   * secret present without holding it. */
  char *canon = NULL;
  ck_assert_int_eq(mcp__config_canonical_json(d, &canon), MCP_OK);
  ck_assert_ptr_nonnull(strstr(canon, "\"oauth\":{"));
  ck_assert_ptr_nonnull(strstr(canon, "\"clientSecret\":true"));
  ck_assert_ptr_null(strstr(canon, "SECRET"));
  mcp__free(canon);
  /* Secret resolution keeps it; client options carry it. */
  mcp_server_def *r = NULL;
  mcp_config_diag *diags = NULL;
  size_t nd = 0;
  ck_assert_int_eq(mcp__config_resolve_secrets(d, NULL, &r, &diags, &nd), MCP_OK);
  mcp__config_diags_free(diags, nd);
  ck_assert_ptr_nonnull(r->oauth);
  mcp_client_options *co = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp__config_client_options(r, &co, &err), MCP_OK);
  ck_assert_ptr_nonnull(co->oauth);
  mcp_client_options_free(co);
  mcp__server_def_free(r);
  char first_hash[65];
  memcpy(first_hash, d->hash, sizeof(first_hash));
  mcp__config_free(set);

  set = parse_cfg(
      "{\"mcpServers\": {\"s\": {\"url\": \"https://h.example/mcp\", \"oauth\": {"
      "\"clientId\": \"${CID}\", \"clientSecret\": \"${SEC}\", \"scopes\": \"a b c\", "
      "\"grant\": \"client_credentials\", \"redirectUri\": \"http://127.0.0.1:9/cb\"}}}}");
  ck_assert_str_ne(mcp__config_find(set, "s")->hash, first_hash);
  mcp__config_free(set);

  /* Mistakes leave the entry out with a warning naming the field. */
  static const struct {
    const char *oauth, *field;
  } bad[] = {
      {"5", "oauth"},
      {"{\"clientID\": \"x\"}", "oauth"},
      {"{\"grant\": \"implicit\"}", "oauth.grant"},
      {"{\"clientSecret\": \"x\"}", "oauth.clientSecret"},
      {"{\"grant\": \"client_credentials\"}", "oauth.grant"},
      {"{\"scopes\": 7}", "oauth.scopes"},
      {"{\"dpop\": \"yes\"}", "oauth.dpop"},
      {"{\"clientId\": \"c\", \"grant\": \"client_credentials\", \"workloadJwtFile\": \"/j\"}",
       "oauth.workloadJwtFile"},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    char text[512];
    snprintf(text, sizeof(text),
             "{\"mcpServers\": {\"s\": {\"url\": \"https://h.example/mcp\", \"oauth\": %s}}}",
             bad[i].oauth);
    set = parse_cfg(text);
    ck_assert_msg(mcp__config_find(set, "s") == NULL, "accepted oauth %s", bad[i].oauth);
    bool named = false;
    for (size_t k = 0; k < set->ndiags; k++)
      if (set->diags[k].field && strcmp(set->diags[k].field, bad[i].field) == 0) named = true;
    ck_assert_msg(named, "no warning on %s for %s", bad[i].field, bad[i].oauth);
    mcp__config_free(set);
  }
  /* DPoP and workload identity (SEP-1933): in the canonical form (they
   * change what is sent), and on the client options. */
  set = parse_cfg("{\"mcpServers\": {\"s\": {\"url\": \"https://h.example/mcp\", \"oauth\": {"
                  "\"dpop\": false, \"workloadJwtFile\": \"/var/run/wif/token\"}}}}");
  d = mcp__config_find(set, "s");
  ck_assert_ptr_nonnull(d);
  ck_assert_int_eq(d->oauth->dpop, MCP_OAUTH_DPOP_OFF);
  ck_assert_str_eq(d->oauth->workload_jwt_file, "/var/run/wif/token");
  ck_assert_int_eq(mcp__config_canonical_json(d, &canon), MCP_OK);
  ck_assert_ptr_nonnull(strstr(canon, "\"dpop\":false"));
  ck_assert_ptr_nonnull(strstr(canon, "\"workloadJwtFile\":\"/var/run/wif/token\""));
  mcp__free(canon);
  ck_assert_int_eq(mcp__config_client_options(d, &co, &err), MCP_OK);
  ck_assert_int_eq(co->oauth->grant, MCP_OAUTH_GRANT_JWT_BEARER);
  ck_assert_int_eq(co->oauth->dpop, MCP_OAUTH_DPOP_OFF);
  ck_assert_str_eq(co->oauth->workload_jwt_file, "/var/run/wif/token");
  mcp_client_options_free(co);
  mcp__config_free(set);
  set = parse_cfg("{\"mcpServers\": {\"s\": {\"url\": \"https://h.example/mcp\", \"oauth\": {"
                  "\"dpop\": true}}}}");
  ck_assert_int_eq(mcp__config_find(set, "s")->oauth->dpop, MCP_OAUTH_DPOP_ON);
  mcp__config_free(set);
  /* Not for stdio servers. */
  set = parse_cfg("{\"mcpServers\": {\"s\": {\"command\": \"x\", \"oauth\": {}}}}");
  ck_assert_ptr_null(mcp__config_find(set, "s"));
  mcp__config_free(set);
  mcp_error_clear(&err);
}
END_TEST

/* The manager: a configured server with an "oauth" object (client id from
 * the environment), the browser step and store from the manager's OAuth
 * defaults. */
START_TEST(test_manager_config_server) {
  fixture f;
  start(&f);
  char dir[256], path[512], text[1024];
  interop_mkdtemp(dir, sizeof(dir), "oauth-mgr");
  snprintf(path, sizeof(path), "%s/mcp.json", dir);
  snprintf(text, sizeof(text),
           "{\"mcpServers\": {\"srv\": {\"url\": \"%s\", \"oauth\": {\"clientId\": "
           "\"${MCPCONN_TEST_OAUTH_CLIENT}\", \"scopes\": \"mcp:read\"}}}}",
           f.url);
  FILE *fp = fopen(path, "w");
  ck_assert_ptr_nonnull(fp);
  fputs(text, fp);
  fclose(fp);
  setenv("MCPCONN_TEST_OAUTH_CLIENT", "configured-client", 1);
  mcp_oauth_options *oa = mcp_oauth_options_new();
  ck_assert_int_eq(mcp_oauth_options_set_redirect_uri(oa, "http://127.0.0.1:1/callback"), MCP_OK);
  mcp_oauth_options_set_authorize(oa, browser, &f.seen);
  mcp_oauth_options_set_store(oa, mem_load, mem_save, &f.store);
  mcp_manager_options *mo = mcp_manager_options_new();
  mcp_manager_options_set_discovery(mo, false, false);
  ck_assert_int_eq(mcp_manager_options_add_config_file(mo, path), MCP_OK);
  ck_assert_int_eq(mcp_manager_options_set_cache_dir(mo, dir), MCP_OK);
  mcp_manager_options_set_timeout_ms(mo, START_MS);
  mcp_manager_options_set_log(mo, on_log, &f.seen);
  ck_assert_int_eq(mcp_manager_options_set_oauth(mo, oa), MCP_OK);
  mcp_oauth_options_free(oa);
  mcp_manager *m = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp_manager_start(mo, &m, &err), MCP_OK);
  mcp_manager_options_free(mo);
  char *res = NULL;
  mcp_status st = mcp_manager_call_tool(m, "srv/whoami", "{}", NULL, &res, &err);
  ck_assert_msg(st == MCP_OK, "call: %s (%s)", mcp_strerror(st), err.message ? err.message : "-");
  ck_assert_ptr_nonnull(strstr(res, "ok"));
  mcp_free(res);
  mcp_manager_free(m);
  mcp_error_clear(&err);
  /* The configured client id was used: no registration. */
  ck_assert_int_eq(stat_of(f.server.port, "register"), 0);
  ck_assert_int_eq(stat_of(f.server.port, "authorize"), 1);
  ck_assert_int_eq(f.seen.authorizes, 1);
  ck_assert_ptr_nonnull(f.store.data);
  /* The tools were read under this OAuth account, which the config hash
   * (the disk cache's key) does not name: the cache keeps the era only,
   * or the next start, signed in as someone else, would be offered them. */
  char *cpath = NULL, cached[4096] = "";
  ck_assert_int_eq(mcp__cache_path(dir, "srv", &cpath), MCP_OK);
  FILE *cf = fopen(cpath, "r");
  ck_assert_msg(cf, "no cache file %s", cpath);
  cached[fread(cached, 1, sizeof(cached) - 1, cf)] = '\0';
  fclose(cf);
  mcp__free(cpath);
  ck_assert_msg(strstr(cached, "\"private\":true") && !strstr(cached, "whoami"), "%s", cached);
  unsetenv("MCPCONN_TEST_OAUTH_CLIENT");
  assert_no_leak(&f);
  interop_rm_rf(dir);
  finish(&f);
}
END_TEST

/* ---- the CLI: printed URL + loopback redirect --------------------------- */

typedef struct cli_run {
  pid_t pid;
  int out, err; /* read ends */
} cli_run;

static void cli_start(cli_run *r, const char *url, const char *xdg) {
  const char *bin = test_env_path("MCPCONN_BIN");
  int o[2], e[2];
  ck_assert_int_eq(pipe2(o, O_CLOEXEC), 0);
  ck_assert_int_eq(pipe2(e, O_CLOEXEC), 0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, o[1], 1);
  posix_spawn_file_actions_adddup2(&fa, e[1], 2);
  char xdg_env[600];
  snprintf(xdg_env, sizeof(xdg_env), "XDG_DATA_HOME=%s", xdg);
  char *envp[512];
  size_t ne = 0;
  for (char **v = environ; *v && ne < 500; v++)
    if (strncmp(*v, "XDG_DATA_HOME=", 14) != 0) envp[ne++] = *v;
  envp[ne++] = xdg_env;
  envp[ne] = NULL;
  const char *argv[] = {bin, "--no-user-config", "--no-project-config", "--url", url, "tools",
                        NULL};
  ck_assert_int_eq(posix_spawn(&r->pid, bin, &fa, NULL, (char *const *)argv, envp), 0);
  posix_spawn_file_actions_destroy(&fa);
  close(o[1]);
  close(e[1]);
  r->out = o[0];
  r->err = e[0];
}

/* Reads |fd| until EOF (bounded) into a new string. */
static char *read_all(int fd) {
  size_t cap = 65536, len = 0;
  char *b = malloc(cap);
  ssize_t n;
  while (len + 1 < cap && (n = read(fd, b + len, cap - 1 - len)) > 0) len += (size_t)n;
  b[len] = '\0';
  return b;
}

static int cli_finish(cli_run *r, char **out, char **err) {
  *out = read_all(r->out);
  *err = read_all(r->err);
  close(r->out);
  close(r->err);
  int status = 0;
  ck_assert_int_eq(waitpid(r->pid, &status, 0), r->pid);
  ck_assert(WIFEXITED(status));
  return WEXITSTATUS(status);
}

START_TEST(test_cli_loopback) {
  fixture f;
  start(&f);
  char xdg[256];
  interop_mkdtemp(xdg, sizeof(xdg), "oauth-cli");
  cli_run r;
  cli_start(&r, f.url, xdg);
  /* The CLI prints the authorization URL on stderr and waits. */
  char buf[16384];
  size_t len = 0;
  char *auth = NULL;
  long long end = test_now_ms() + CALL_MS;
  while (!auth && test_now_ms() < end) {
    struct pollfd p = {r.err, POLLIN, 0};
    if (poll(&p, 1, 1000) <= 0) continue;
    ssize_t n = read(r.err, buf + len, sizeof(buf) - 1 - len);
    ck_assert_int_gt(n, 0);
    len += (size_t)n;
    buf[len] = '\0';
    char *a = strstr(buf, "  http://127.0.0.1:");
    if (a && strchr(a, '\n')) auth = strndup(a + 2, strcspn(a + 2, "\n"));
  }
  ck_assert_msg(auth != NULL, "the CLI printed no authorization URL: %s", buf);
  ck_assert_ptr_nonnull(strstr(buf, "needs authorization"));
  /* The browser: the authorization endpoint redirects to the loopback. */
  char *resp = http_raw(f.server.port, "GET", strstr(auth + 7, "/"));
  char *loc = strstr(resp, "\r\nLocation: ");
  if (!loc) loc = strstr(resp, "\r\nlocation: ");
  ck_assert_ptr_nonnull(loc);
  loc += 12;
  int lport = 0;
  ck_assert_int_eq(sscanf(loc, "http://127.0.0.1:%d/", &lport), 1);
  char *target = strndup(strstr(loc + 7, "/"), strcspn(strstr(loc + 7, "/"), "\r\n"));
  char *page = http_raw(lport, "GET", target);
  ck_assert_ptr_nonnull(strstr(page, "200 OK"));
  ck_assert_ptr_nonnull(strstr(page, "you can close this window"));
  char *out, *err;
  int rc = cli_finish(&r, &out, &err);
  ck_assert_msg(rc == 0, "mcpconn exited %d: %s%s", rc, buf, err);
  ck_assert_ptr_nonnull(strstr(out, "whoami"));
  ck_assert_ptr_null(strstr(out, "SECRET"));
  ck_assert_ptr_null(strstr(err, "SECRET"));
  free(out);
  free(err);

  /* The tokens were kept (0600): the next run needs no browser. */
  char dir[512];
  snprintf(dir, sizeof(dir), "%s/mcpconn/oauth", xdg);
  struct stat sb;
  ck_assert_int_eq(stat(dir, &sb), 0);
  ck_assert_int_eq(sb.st_mode & 0777, 0700);
  cli_start(&r, f.url, xdg);
  rc = cli_finish(&r, &out, &err);
  ck_assert_msg(rc == 0, "second run exited %d: %s", rc, err);
  ck_assert_ptr_nonnull(strstr(out, "whoami"));
  ck_assert_ptr_null(strstr(err, "needs authorization"));
  ck_assert_int_eq(stat_of(f.server.port, "authorize"), 1);
  free(out);
  free(err);
  free(auth);
  free(resp);
  free(target);
  free(page);
  assert_no_leak(&f);
  interop_rm_rf(xdg);
  finish(&f);
}
END_TEST

/* ---- the file token store against planted files (issue 14, item 10) ---- */

static void store_on_alarm(int sig) {
  (void)sig;
  ck_abort_msg("hung: the token store blocked on a planted file (alarm fired)");
}

#define STORE_URL "http://127.0.0.1:1/mcp"

/* dir/<sha256(canonical STORE_URL-like |url|)>.json */
static void token_path(char *out, size_t n, const char *dir, const char *url) {
  char *key = mcp__oauth_canonical_resource(url);
  ck_assert_ptr_nonnull(key);
  unsigned char md[MCP_SHA256_LEN];
  mcp__sha256(key, strlen(key), md);
  int k = snprintf(out, n, "%s/", dir);
  for (int i = 0; i < 32; i++) k += snprintf(out + k, n - (size_t)k, "%02x", md[i]);
  snprintf(out + k, n - (size_t)k, ".json");
  mcp__free(key);
}

/* mcp__oauth_new() with the file store in |dir|; returns its status and
 * puts the message in |msg|. */
static mcp_status engine_new(const char *dir, char *msg, size_t n) {
  mcp_oauth_options *oa = mcp_oauth_options_new();
  ck_assert_int_eq(mcp_oauth_options_set_file_store(oa, dir), MCP_OK);
  mcp_oauth *a = NULL;
  mcp_error err = MCP_ERROR_INIT;
  signal(SIGALRM, store_on_alarm);
  alarm(5);
  mcp_status st = mcp__oauth_new(oa, STORE_URL, NULL, &a, &err);
  alarm(0);
  snprintf(msg, n, "%s", err.message ? err.message : "");
  mcp_error_clear(&err);
  mcp__oauth_free(a);
  mcp_oauth_options_free(oa);
  return st;
}

/* Load and the engine refuse; both messages name |path| and say |what|. */
static void store_refused(const char *dir, const char *key, const char *path, const char *what) {
  char *data = NULL;
  mcp_error err = MCP_ERROR_INIT;
  signal(SIGALRM, store_on_alarm);
  alarm(5);
  mcp_status st = mcp__oauth_file_load(dir, key, &data, &err);
  alarm(0);
  ck_assert_msg(st == MCP_EIO, "load of a planted store: %s (%s)", mcp_strerror(st),
                err.message ? err.message : "-");
  ck_assert_ptr_null(data);
  ck_assert_msg(strstr(err.message, path) && strstr(err.message, what),
                "the error should name %s and say '%s': %s", path, what, err.message);
  ck_assert_ptr_null(strstr(err.message, "SECRET"));
  mcp_error_clear(&err);
  char msg[2048];
  ck_assert_int_eq(engine_new(dir, msg, sizeof(msg)), MCP_EIO);
  ck_assert_msg(strstr(msg, path) && strstr(msg, what), "mcp__oauth_new: %s", msg);
}

/* Saving replaces what sits at |path| with a private regular file that
 * loads back. */
static void store_replaces(const char *dir, const char *key, const char *path) {
  mcp_error err = MCP_ERROR_INIT;
  signal(SIGALRM, store_on_alarm);
  alarm(5);
  mcp_status st = mcp__oauth_file_save(dir, key, "{\"access_token\":\"SECRET-2\"}", &err);
  alarm(0);
  ck_assert_msg(st == MCP_OK, "save: %s", err.message ? err.message : "-");
  struct stat sb;
  ck_assert_int_eq(lstat(path, &sb), 0);
  ck_assert(S_ISREG(sb.st_mode));
  ck_assert_int_eq(sb.st_mode & 0777, 0600);
  ck_assert_int_eq(sb.st_uid, geteuid());
  char *data = NULL;
  ck_assert_int_eq(mcp__oauth_file_load(dir, key, &data, &err), MCP_OK);
  ck_assert_str_eq(data, "{\"access_token\":\"SECRET-2\"}");
  mcp__free(data);
  /* No temporary file is left behind. */
  DIR *d = opendir(dir);
  ck_assert_ptr_nonnull(d);
  struct dirent *e;
  while ((e = readdir(d)))
    ck_assert_msg(e->d_name[0] != '.' || !strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."),
                  "left behind: %s", e->d_name);
  closedir(d);
}

START_TEST(test_token_store_planted_files) {
  char base[256], dir[512], path[1024], other[512];
  interop_mkdtemp(base, sizeof(base), "oauth-planted");
  snprintf(dir, sizeof(dir), "%s/store", base);
  char *key = mcp__oauth_canonical_resource(STORE_URL);
  token_path(path, sizeof(path), dir, STORE_URL);

  /* Nothing yet: not an error; the first save makes a 0700 directory. */
  char *data = NULL;
  ck_assert_int_eq(mcp__oauth_file_load(dir, key, &data, NULL), MCP_ENOTFOUND);
  char msg[2048];
  ck_assert_int_eq(engine_new(dir, msg, sizeof(msg)), MCP_OK);
  store_replaces(dir, key, path);
  struct stat sb;
  ck_assert_int_eq(stat(dir, &sb), 0);
  ck_assert_int_eq(sb.st_mode & 0777, 0700);
  ck_assert_int_eq(engine_new(dir, msg, sizeof(msg)), MCP_OK);

  /* A planted 0666 (or group-writable) token file. */
  ck_assert_int_eq(chmod(path, 0666), 0);
  store_refused(dir, key, path, "writable by others");
  store_replaces(dir, key, path);
  ck_assert_int_eq(chmod(path, 0660), 0);
  store_refused(dir, key, path, "writable by its group");
  store_replaces(dir, key, path);

  /* A planted FIFO: neither load nor save may hang. */
  ck_assert_int_eq(unlink(path), 0);
  ck_assert_int_eq(mkfifo(path, 0600), 0);
  store_refused(dir, key, path, "not a regular file");
  store_replaces(dir, key, path);

  /* A symlink to a file elsewhere: refused, replaced, never written through. */
  snprintf(other, sizeof(other), "%s/elsewhere", base);
  FILE *f = fopen(other, "w");
  ck_assert_ptr_nonnull(f);
  fputs("{\"access_token\":\"SECRET-planted\"}", f);
  fclose(f);
  chmod(other, 0600);
  ck_assert_int_eq(unlink(path), 0);
  ck_assert_int_eq(symlink(other, path), 0);
  store_refused(dir, key, path, "symbolic link");
  store_replaces(dir, key, path);
  ck_assert_int_eq(stat(other, &sb), 0);
  ck_assert_int_eq(sb.st_size, (off_t)strlen("{\"access_token\":\"SECRET-planted\"}"));

  /* A token file owned by another uid (only root can make one). */
  if (geteuid() == 0) {
    ck_assert_int_eq(chown(path, 65534, 65534), 0);
    store_refused(dir, key, path, "owned by uid 65534");
    store_replaces(dir, key, path);
  }
  mcp__free(key);
  interop_rm_rf(base);
}
END_TEST

START_TEST(test_token_store_unsafe_dirs) {
  char base[256], dir[512], path[1024], link[512];
  interop_mkdtemp(base, sizeof(base), "oauth-dirs");
  snprintf(dir, sizeof(dir), "%s/store", base);
  char *key = mcp__oauth_canonical_resource(STORE_URL);
  token_path(path, sizeof(path), dir, STORE_URL);
  store_replaces(dir, key, path);
  mcp_error err = MCP_ERROR_INIT;

  static const struct {
    mode_t mode;
    const char *what;
  } modes[] = {{0770, "writable by its group"}, {0703, "writable by others"}};
  for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
    ck_assert_int_eq(chmod(dir, modes[i].mode), 0);
    store_refused(dir, key, dir, modes[i].what);
    ck_assert_int_eq(mcp__oauth_file_save(dir, key, "{}", &err), MCP_EIO);
    ck_assert_msg(strstr(err.message, dir) && strstr(err.message, modes[i].what), "save: %s",
                  err.message);
    mcp_error_clear(&err);
  }
  ck_assert_int_eq(chmod(dir, 0700), 0);

  /* The store directory is a symlink to a private directory. */
  snprintf(link, sizeof(link), "%s/link", base);
  ck_assert_int_eq(symlink(dir, link), 0);
  store_refused(link, key, link, "symbolic link");
  ck_assert_int_eq(mcp__oauth_file_save(link, key, "{}", &err), MCP_EIO);
  ck_assert_ptr_nonnull(strstr(err.message, "symbolic link"));
  mcp_error_clear(&err);

  /* Owned by another uid (root here: chown to nobody). */
  if (geteuid() == 0) {
    ck_assert_int_eq(chown(dir, 65534, 65534), 0);
    store_refused(dir, key, dir, "owned by uid 65534");
    ck_assert_int_eq(mcp__oauth_file_save(dir, key, "{}", &err), MCP_EIO);
    ck_assert_ptr_nonnull(strstr(err.message, "owned by uid 65534"));
    mcp_error_clear(&err);
  }
  /* The file was never touched by the refused saves. */
  char *data = NULL;
  ck_assert_int_eq(chown(dir, geteuid(), getegid()), 0);
  ck_assert_int_eq(mcp__oauth_file_load(dir, key, &data, NULL), MCP_OK);
  ck_assert_str_eq(data, "{\"access_token\":\"SECRET-2\"}");
  mcp__free(data);
  mcp__free(key);
  interop_rm_rf(base);
}
END_TEST

/* The old store wrote through "<file>.<pid>.tmp" with O_CREAT|O_TRUNC and
 * no O_EXCL: a 0666 file planted there became the token file (readable by
 * all), a FIFO planted there hung the save.  A full flow with both. */
START_TEST(test_file_store_planted_tmp) {
  for (int round = 0; round < 2; round++) {
    fixture f;
    start(&f);
    char base[256], path[1024], tmp[1100];
    interop_mkdtemp(base, sizeof(base), "oauth-tmp");
    snprintf(f.store_dir, sizeof(f.store_dir), "%s/store", base);
    ck_assert_int_eq(mkdir(f.store_dir, 0700), 0);
    f.use_file_store = true;
    token_path(path, sizeof(path), f.store_dir, f.url);
    snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid());
    if (round == 0) {
      int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0666);
      ck_assert_int_ge(fd, 0);
      fchmod(fd, 0666);
      close(fd);
    } else {
      ck_assert_int_eq(mkfifo(tmp, 0666), 0);
    }
    signal(SIGALRM, store_on_alarm);
    alarm(60);
    mcp_client *c = connect_ok(&f);
    list_ok(c);
    mcp_client_free(c);
    alarm(0);
    struct stat sb;
    ck_assert_int_eq(lstat(path, &sb), 0);
    ck_assert(S_ISREG(sb.st_mode));
    ck_assert_msg((sb.st_mode & 0777) == 0600, "token file mode %03o",
                  (unsigned)(sb.st_mode & 0777));
    assert_no_leak(&f);
    interop_rm_rf(base);
    finish(&f);
  }
}
END_TEST

Suite *oauth_suite(void);
Suite *oauth_suite(void) {
  Suite *s = suite_create("oauth");
  TCase *u = tcase_create("unit");
  tcase_add_test(u, test_challenge_parse);
  tcase_add_test(u, test_wellknown_order);
  tcase_add_test(u, test_resource_match);
  tcase_add_test(u, test_base64);
  tcase_add_test(u, test_pkce);
  tcase_add_test(u, test_form_and_query);
  tcase_add_test(u, test_jwt_assertion);
  tcase_add_test(u, test_token_response);
  tcase_add_test(u, test_options_validation);
  tcase_add_test(u, test_iss_table);
  tcase_add_test(u, test_as_issuer_and_scope_union);
  tcase_add_test(u, test_dpop_proof);
  tcase_add_test(u, test_workload_jwt_checks);
  tcase_add_test(u, test_config_oauth);
  tcase_add_test(u, test_token_store_planted_files);
  tcase_add_test(u, test_token_store_unsafe_dirs);
  suite_add_tcase(s, u);
  TCase *fl = tcase_create("flows");
  tcase_set_timeout(fl, 180);
  tcase_add_test(fl, test_flow_and_store_reuse);
  tcase_add_test(fl, test_login_longer_than_timeout);
  tcase_add_test(fl, test_refresh_shared_by_concurrent_requests);
  tcase_add_test(fl, test_refresh_refused_reauthorizes);
  tcase_add_test(fl, test_file_store);
  tcase_add_test(fl, test_refused_authorization);
  tcase_add_test(fl, test_cli_loopback);
  tcase_add_test(fl, test_close_cancels_stuck_flow);
  tcase_add_test(fl, test_manager_config_server);
  tcase_add_test(fl, test_file_store_planted_tmp);
  tcase_add_test(fl, test_iss_flows);
  tcase_add_test(fl, test_metadata_issuer_mismatch);
  tcase_add_test(fl, test_step_up_scope_union);
  tcase_add_test(fl, test_dpop_flow_and_store);
  tcase_add_test(fl, test_dpop_nonces);
  tcase_add_test(fl, test_dpop_nonce_retry_bounded);
  tcase_add_test(fl, test_workload_jwt_flow);
  tcase_add_test(fl, test_preregistered_issuer);
  tcase_add_test(fl, test_registrations_per_issuer);
  suite_add_tcase(s, fl);
  return s;
}

int main(void) { return run_suite(oauth_suite()); }
