/* SPDX-License-Identifier: MIT */
/*
 * mcp_oauth_dpop.c: DPoP (RFC 9449) keys and proofs for the OAuth engine
 * (see mcp_oauth.h): a P-256 key made with OpenSSL (loaded on first use),
 * its public JWK, its private half as base64url DER for the token store,
 * and ES256-signed proof JWTs.
 *
 * Threads: a key is immutable once made; proofs may be signed from any
 * number of threads at once (each signature has its own EVP context).
 */
#include "config.h"

#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "mcp_oauth.h"
#include "mcp_ossl.h"
#include "mcp_sha256.h"

struct mcp_dpop_key {
  EVP_PKEY *pkey;
  char *jwk; /* {"crv":"P-256","kty":"EC","x":"...","y":"..."} */
  char *jkt; /* RFC 7638 thumbprint, base64url(SHA-256(jwk)) */
};

void mcp__dpop_key_free(mcp_dpop_key *k) {
  if (!k) return;
  EVP_PKEY_free(k->pkey);
  mcp__free(k->jwk);
  mcp__free(k->jkt);
  mcp__free(k);
}

/* Fills jwk and jkt from the public point. */
static mcp_status key_finish(mcp_dpop_key *k, mcp_error *err) {
  unsigned char pub[65];
  size_t n = 0;
  if (EVP_PKEY_get_base_id(k->pkey) != EVP_PKEY_EC ||
      EVP_PKEY_get_octet_string_param(k->pkey, "encoded-pub-key", pub, sizeof(pub), &n) != 1 ||
      n != 65 || pub[0] != 0x04)
    return mcp__error_set(err, MCP_EINVAL, "the DPoP key is not an uncompressed P-256 key");
  char *x = mcp__oauth_b64url(pub + 1, 32), *y = mcp__oauth_b64url(pub + 33, 32);
  /* RFC 7638 section 3.2: the required members, in lexical order, no
   * white space: this text is both the header's jwk and the hash input. */
  k->jwk = x && y
               ? mcp__asprintf("{\"crv\":\"P-256\",\"kty\":\"EC\",\"x\":\"%s\",\"y\":\"%s\"}", x, y)
               : NULL;
  mcp__free(x);
  mcp__free(y);
  if (!k->jwk) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  unsigned char h[MCP_SHA256_LEN];
  mcp__sha256(k->jwk, strlen(k->jwk), h);
  if (!(k->jkt = mcp__oauth_b64url(h, sizeof(h))))
    return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  return MCP_OK;
}

mcp_status mcp__dpop_key_new(mcp_dpop_key **out, mcp_error *err) {
  *out = NULL;
  mcp_status st = mcp__ossl_load(err);
  if (st) return st;
  mcp_dpop_key *k = mcp__calloc(1, sizeof(*k));
  if (!k) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  if (!(k->pkey = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256"))) {
    mcp__dpop_key_free(k);
    return mcp__error_set(err, MCP_EIO, "could not make a DPoP key (P-256)");
  }
  if ((st = key_finish(k, err))) {
    mcp__dpop_key_free(k);
    return st;
  }
  *out = k;
  return MCP_OK;
}

mcp_status mcp__dpop_key_load(const char *b64der, mcp_dpop_key **out, mcp_error *err) {
  *out = NULL;
  mcp_status st = mcp__ossl_load(err);
  if (st) return st;
  unsigned char *der = NULL;
  size_t n = 0;
  if (mcp__oauth_b64url_decode(b64der, &der, &n) != MCP_OK)
    return mcp__error_set(err, MCP_EINVAL, "the stored DPoP key is not base64url");
  mcp_dpop_key *k = mcp__calloc(1, sizeof(*k));
  const unsigned char *p = der;
  if (k) k->pkey = d2i_AutoPrivateKey(NULL, &p, (long)n);
  OPENSSL_cleanse(der, n);
  mcp__free(der);
  if (!k) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  if (!k->pkey) {
    mcp__dpop_key_free(k);
    return mcp__error_set(err, MCP_EINVAL, "the stored DPoP key is not a private key");
  }
  if ((st = key_finish(k, err))) {
    mcp__dpop_key_free(k);
    return st;
  }
  *out = k;
  return MCP_OK;
}

char *mcp__dpop_key_export(const mcp_dpop_key *k) {
  int n = i2d_PrivateKey(k->pkey, NULL);
  if (n <= 0) return NULL;
  unsigned char *der = mcp__malloc((size_t)n), *p = der;
  if (!der) return NULL;
  char *s = i2d_PrivateKey(k->pkey, &p) == n ? mcp__oauth_b64url(der, (size_t)n) : NULL;
  OPENSSL_cleanse(der, (size_t)n);
  mcp__free(der);
  return s;
}

const char *mcp__dpop_key_jwk(const mcp_dpop_key *k) { return k->jwk; }
const char *mcp__dpop_key_jkt(const mcp_dpop_key *k) { return k->jkt; }

char *mcp__dpop_ath(const char *access_token) {
  unsigned char h[MCP_SHA256_LEN];
  mcp__sha256(access_token, strlen(access_token), h);
  return mcp__oauth_b64url(h, sizeof(h));
}

char *mcp__dpop_htu(const char *url) {
  /* RFC 9449 section 4.2: the target URI without query and fragment. */
  return url ? mcp__strndup(url, strcspn(url, "?#")) : NULL;
}

/* base64url of the compact JSON of |o|; NULL when out of memory. */
static char *b64_json(json_object *o) {
  const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
                                                        JSON_C_TO_STRING_NOSLASHESCAPE);
  return s ? mcp__oauth_b64url((const unsigned char *)s, strlen(s)) : NULL;
}

mcp_status mcp__dpop_proof(const mcp_dpop_key *k, const char *htm, const char *url,
                           const char *access_token, const char *nonce, int64_t now_s, char **out,
                           mcp_error *err) {
  *out = NULL;
  mcp_status st = MCP_OK;
  char *h64 = NULL, *c64 = NULL, *input = NULL, *s64 = NULL, *jti = mcp__oauth_random(16);
  char *htu = mcp__dpop_htu(url), *ath = access_token ? mcp__dpop_ath(access_token) : NULL;
  unsigned char *sig = NULL;
  EVP_MD_CTX *ctx = NULL;
  json_object *hdr = json_object_new_object(), *cl = json_object_new_object();
  json_object *jwk = json_tokener_parse(k->jwk);
  if (!jti || !htu || (access_token && !ath) || !hdr || !cl || !jwk) {
    json_object_put(jwk);
    st = mcp__error_set(err, MCP_ENOMEM, "out of memory");
    goto out;
  }
  /* Section 4.2: typ, alg and the public key in the header. */
  json_object_object_add(hdr, "typ", json_object_new_string("dpop+jwt"));
  json_object_object_add(hdr, "alg", json_object_new_string("ES256"));
  json_object_object_add(hdr, "jwk", jwk);
  json_object_object_add(cl, "jti", json_object_new_string(jti));
  json_object_object_add(cl, "htm", json_object_new_string(htm));
  json_object_object_add(cl, "htu", json_object_new_string(htu));
  json_object_object_add(cl, "iat", json_object_new_int64(now_s));
  if (ath) json_object_object_add(cl, "ath", json_object_new_string(ath));
  if (nonce) json_object_object_add(cl, "nonce", json_object_new_string(nonce));
  if (!(h64 = b64_json(hdr)) || !(c64 = b64_json(cl)) ||
      !(input = mcp__asprintf("%s.%s", h64, c64))) {
    st = mcp__error_set(err, MCP_ENOMEM, "out of memory");
    goto out;
  }
  size_t siglen = 0;
  if (!(ctx = EVP_MD_CTX_new()) ||
      EVP_DigestSignInit(ctx, NULL, EVP_sha256(), NULL, k->pkey) != 1 ||
      EVP_DigestSign(ctx, NULL, &siglen, (unsigned char *)input, strlen(input)) != 1 ||
      !(sig = mcp__malloc(siglen)) ||
      EVP_DigestSign(ctx, sig, &siglen, (unsigned char *)input, strlen(input)) != 1) {
    st = mcp__error_set(err, MCP_EIO, "signing the DPoP proof failed");
    goto out;
  }
  /* JWS (RFC 7518 section 3.4) wants r || s, 32 bytes each, not DER. */
  const unsigned char *p = sig;
  ECDSA_SIG *es = d2i_ECDSA_SIG(NULL, &p, (long)siglen);
  const BIGNUM *r = NULL, *s = NULL;
  unsigned char raw[64];
  if (es) ECDSA_SIG_get0(es, &r, &s);
  bool ok = es && BN_bn2binpad(r, raw, 32) == 32 && BN_bn2binpad(s, raw + 32, 32) == 32;
  ECDSA_SIG_free(es);
  if (!ok) {
    st = mcp__error_set(err, MCP_EIO, "signing the DPoP proof failed (ECDSA)");
    goto out;
  }
  if (!(s64 = mcp__oauth_b64url(raw, sizeof(raw))) || !(*out = mcp__asprintf("%s.%s", input, s64)))
    st = mcp__error_set(err, MCP_ENOMEM, "out of memory");
out:
  EVP_MD_CTX_free(ctx);
  json_object_put(hdr);
  json_object_put(cl);
  mcp__free(sig);
  mcp__free(h64);
  mcp__free(c64);
  mcp__free(input);
  mcp__free(s64);
  mcp__free(jti);
  mcp__free(htu);
  mcp__free(ath);
  return st;
}
