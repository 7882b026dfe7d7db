/* SPDX-License-Identifier: MIT */
/*
 * mcp_oauth_sign.c: the OAuth engine's randomness and signing (see
 * mcp_oauth.h): random state and jti values from the kernel's CSPRNG, the
 * PKCE pair, and the RFC 7523 private_key_jwt client assertion signed with
 * OpenSSL (loaded on first use, mcp_ossl.h).  The pure encoding it builds
 * on (base64url, the S256 challenge, the JWT's parts) is mcp_oauth_parse.c.
 *
 * No threads, no globals, no I/O but getrandom(2).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "mcp_oauth.h"
#include "mcp_ossl.h"

char *mcp__oauth_random(size_t n) {
  unsigned char buf[64];
  /* The kernel's CSPRNG (what OpenSSL seeds from): no OpenSSL needed. */
  if (n > sizeof(buf) || getrandom(buf, n, 0) != (ssize_t)n) return NULL;
  char *s = mcp__oauth_b64url(buf, n);
  OPENSSL_cleanse(buf, sizeof(buf));
  return s;
}

mcp_status mcp__oauth_pkce(char **verifier, char **challenge) {
  *verifier = *challenge = NULL;
  char *v = mcp__oauth_random(32);
  if (!v) return MCP_EIO;
  char *c = mcp__oauth_pkce_challenge(v);
  if (!c) {
    mcp__free(v);
    return MCP_ENOMEM;
  }
  *verifier = v;
  *challenge = c;
  return MCP_OK;
}

mcp_status mcp__oauth_jwt_assertion(const char *pem, const char *alg, const char *client_id,
                                    const char *audience, int64_t now_s, char **out,
                                    mcp_error *err) {
  *out = NULL;
  mcp_status lst = mcp__ossl_load(err);
  if (lst != MCP_OK) return lst;
  const EVP_MD *md = NULL;
  int want_type = 0, coord = 0;
  bool pss = false;
  if (!alg) alg = "ES256";
  if (strcmp(alg, "ES256") == 0) md = EVP_sha256(), want_type = EVP_PKEY_EC, coord = 32;
  else if (strcmp(alg, "ES384") == 0) md = EVP_sha384(), want_type = EVP_PKEY_EC, coord = 48;
  else if (strcmp(alg, "RS256") == 0) md = EVP_sha256(), want_type = EVP_PKEY_RSA;
  else if (strcmp(alg, "RS384") == 0) md = EVP_sha384(), want_type = EVP_PKEY_RSA;
  else if (strcmp(alg, "RS512") == 0) md = EVP_sha512(), want_type = EVP_PKEY_RSA;
  else if (strcmp(alg, "PS256") == 0) md = EVP_sha256(), want_type = EVP_PKEY_RSA, pss = true;
  else if (strcmp(alg, "EdDSA") == 0) want_type = EVP_PKEY_ED25519;
  else return mcp__error_set(err, MCP_EINVAL, "unsupported JWT signing algorithm \"%s\"", alg);
  BIO *bio = BIO_new_mem_buf(pem, -1);
  EVP_PKEY *key = bio ? PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL) : NULL;
  BIO_free(bio);
  if (!key)
    return mcp__error_set(err, MCP_EINVAL, "the private key is not a readable PEM private key");
  mcp_status st = MCP_OK;
  char *input = NULL, *s64 = NULL;
  unsigned char *sig = NULL;
  EVP_MD_CTX *ctx = NULL;
  if (EVP_PKEY_base_id(key) != want_type) {
    st = mcp__error_set(err, MCP_EINVAL, "the private key does not fit signing algorithm %s", alg);
    goto out;
  }
  char *jti = mcp__oauth_random(16);
  st = jti ? mcp__oauth_jwt_signing_input(alg, client_id, audience, now_s, jti, &input)
           : MCP_ENOMEM;
  mcp__free(jti);
  if (st) {
    st = mcp__error_set(err, MCP_ENOMEM, "out of memory");
    goto out;
  }
  ctx = EVP_MD_CTX_new();
  EVP_PKEY_CTX *pctx = NULL;
  size_t siglen = 0;
  if (!ctx || EVP_DigestSignInit(ctx, &pctx, md, NULL, key) != 1 ||
      (pss && (EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING) != 1 ||
               EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, -1) != 1)) ||
      EVP_DigestSign(ctx, NULL, &siglen, (unsigned char *)input, strlen(input)) != 1 ||
      !(sig = mcp__malloc(siglen)) ||
      EVP_DigestSign(ctx, sig, &siglen, (unsigned char *)input, strlen(input)) != 1) {
    st = mcp__error_set(err, MCP_EINVAL, "signing the client assertion failed");
    goto out;
  }
  if (want_type == EVP_PKEY_EC) {
    /* JWS wants r || s, each |coord| bytes, not DER. */
    const unsigned char *p = sig;
    ECDSA_SIG *es = d2i_ECDSA_SIG(NULL, &p, (long)siglen);
    unsigned char raw[96];
    const BIGNUM *r = NULL, *s = NULL;
    if (es) ECDSA_SIG_get0(es, &r, &s);
    if (!es || BN_bn2binpad(r, raw, coord) != coord ||
        BN_bn2binpad(s, raw + coord, coord) != coord) {
      ECDSA_SIG_free(es);
      st = mcp__error_set(err, MCP_EINVAL, "signing the client assertion failed (ECDSA)");
      goto out;
    }
    ECDSA_SIG_free(es);
    s64 = mcp__oauth_b64url(raw, (size_t)coord * 2);
  } else {
    s64 = mcp__oauth_b64url(sig, siglen);
  }
  if (!s64 || !(*out = mcp__asprintf("%s.%s", input, s64)))
    st = mcp__error_set(err, MCP_ENOMEM, "out of memory");
out:
  EVP_MD_CTX_free(ctx);
  EVP_PKEY_free(key);
  mcp__free(sig);
  mcp__free(input);
  mcp__free(s64);
  return st;
}
