/* SPDX-License-Identifier: MIT */
/*
 * mcp_ossl.h: OpenSSL, loaded on first use.
 *
 * A host that only talks to stdio servers never needs TLS, yet linking
 * libssl and libcrypto costs every process ~1.7 MB of RSS at start (their
 * relocations and constructors).  With MCP_LAZY_OPENSSL (configure's
 * default, --disable-lazy-openssl turns it off) the library is not linked
 * against OpenSSL: mcp__ossl_load() dlopen()s libssl (and through it
 * libcrypto) the first time a TLS context or a JWT signature is needed, and
 * the OpenSSL functions the library calls go through the pointers below.
 *
 * Include this instead of the OpenSSL headers in library code; call
 * mcp__ossl_load() (cheap after the first call, thread-safe) before the first
 * OpenSSL function on every path.  Every function used must be listed in
 * MCP_OSSL_FUNCS and get its #define below.
 */
#ifndef MCP_OSSL_H
#define MCP_OSSL_H

#include <string.h>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "mcpconn.h"

/* Makes OpenSSL usable: MCP_OK, or MCP_ETLS with the reason (the library
 * could not be loaded, or lacks a function).  Any thread; once. */
mcp_status mcp__ossl_load(mcp_error *err);

/* Frees the calling thread's OpenSSL state now (OPENSSL_thread_stop), if
 * OpenSSL is in use.  For detached threads that others wait for by a
 * counter: OpenSSL's own clean-up runs only after the thread function
 * returns, possibly after the process has moved on to exit. */
void mcp__ossl_thread_stop(void);

/* Wiping secrets needs no OpenSSL. */
#undef OPENSSL_cleanse
#define OPENSSL_cleanse(p, n) explicit_bzero((p), (n))

#define MCP_OSSL_FUNCS(X) \
  X(BIO_free) \
  X(BIO_new_mem_buf) \
  X(BN_bn2binpad) \
  X(ECDSA_SIG_free) \
  X(ECDSA_SIG_get0) \
  X(ERR_clear_error) \
  X(ERR_error_string_n) \
  X(ERR_peek_error) \
  X(ERR_peek_last_error) \
  X(ERR_reason_error_string) \
  X(EVP_DigestSign) \
  X(EVP_DigestSignInit) \
  X(EVP_MD_CTX_free) \
  X(EVP_MD_CTX_new) \
  X(EVP_PKEY_CTX_set_rsa_padding) \
  X(EVP_PKEY_CTX_set_rsa_pss_saltlen) \
  X(EVP_PKEY_Q_keygen) \
  X(EVP_PKEY_free) \
  X(EVP_PKEY_get_base_id) \
  X(EVP_PKEY_get_octet_string_param) \
  X(EVP_sha256) \
  X(EVP_sha384) \
  X(EVP_sha512) \
  X(PEM_read_bio_PrivateKey) \
  X(SSL_CTX_check_private_key) \
  X(SSL_CTX_ctrl) \
  X(SSL_CTX_free) \
  X(SSL_CTX_load_verify_locations) \
  X(SSL_CTX_new) \
  X(SSL_CTX_set_alpn_protos) \
  X(SSL_CTX_set_default_verify_paths) \
  X(SSL_CTX_set_options) \
  X(SSL_CTX_set_verify) \
  X(SSL_CTX_use_PrivateKey_file) \
  X(SSL_CTX_use_certificate_chain_file) \
  X(SSL_connect) \
  X(SSL_ctrl) \
  X(SSL_free) \
  X(SSL_get0_alpn_selected) \
  X(SSL_get0_param) \
  X(SSL_get_error) \
  X(SSL_get_verify_result) \
  X(SSL_new) \
  X(SSL_read) \
  X(SSL_set1_host) \
  X(SSL_set_connect_state) \
  X(SSL_set_fd) \
  X(SSL_set_hostflags) \
  X(SSL_shutdown) \
  X(SSL_write) \
  X(OPENSSL_thread_stop) \
  X(TLS_client_method) \
  X(X509_VERIFY_PARAM_set1_ip_asc) \
  X(X509_verify_cert_error_string) \
  X(d2i_AutoPrivateKey) \
  X(d2i_ECDSA_SIG) \
  X(i2d_PrivateKey)

#ifdef MCP_LAZY_OPENSSL
#define MCP_OSSL_DECLARE(name) extern __typeof__(name) *mcp__ossl_##name;
MCP_OSSL_FUNCS(MCP_OSSL_DECLARE)
#ifndef MCP_OSSL_NO_REDIRECT
#define BIO_free (*mcp__ossl_BIO_free)
#define BIO_new_mem_buf (*mcp__ossl_BIO_new_mem_buf)
#define BN_bn2binpad (*mcp__ossl_BN_bn2binpad)
#define ECDSA_SIG_free (*mcp__ossl_ECDSA_SIG_free)
#define ECDSA_SIG_get0 (*mcp__ossl_ECDSA_SIG_get0)
#define ERR_clear_error (*mcp__ossl_ERR_clear_error)
#define ERR_error_string_n (*mcp__ossl_ERR_error_string_n)
#define ERR_peek_error (*mcp__ossl_ERR_peek_error)
#define ERR_peek_last_error (*mcp__ossl_ERR_peek_last_error)
#define ERR_reason_error_string (*mcp__ossl_ERR_reason_error_string)
#define EVP_DigestSign (*mcp__ossl_EVP_DigestSign)
#define EVP_DigestSignInit (*mcp__ossl_EVP_DigestSignInit)
#define EVP_MD_CTX_free (*mcp__ossl_EVP_MD_CTX_free)
#define EVP_MD_CTX_new (*mcp__ossl_EVP_MD_CTX_new)
#define EVP_PKEY_CTX_set_rsa_padding (*mcp__ossl_EVP_PKEY_CTX_set_rsa_padding)
#define EVP_PKEY_CTX_set_rsa_pss_saltlen (*mcp__ossl_EVP_PKEY_CTX_set_rsa_pss_saltlen)
#define EVP_PKEY_Q_keygen (*mcp__ossl_EVP_PKEY_Q_keygen)
#define EVP_PKEY_free (*mcp__ossl_EVP_PKEY_free)
#define EVP_PKEY_get_base_id (*mcp__ossl_EVP_PKEY_get_base_id)
#define EVP_PKEY_get_octet_string_param (*mcp__ossl_EVP_PKEY_get_octet_string_param)
#define EVP_sha256 (*mcp__ossl_EVP_sha256)
#define EVP_sha384 (*mcp__ossl_EVP_sha384)
#define EVP_sha512 (*mcp__ossl_EVP_sha512)
#define PEM_read_bio_PrivateKey (*mcp__ossl_PEM_read_bio_PrivateKey)
#define SSL_CTX_check_private_key (*mcp__ossl_SSL_CTX_check_private_key)
#define SSL_CTX_ctrl (*mcp__ossl_SSL_CTX_ctrl)
#define SSL_CTX_free (*mcp__ossl_SSL_CTX_free)
#define SSL_CTX_load_verify_locations (*mcp__ossl_SSL_CTX_load_verify_locations)
#define SSL_CTX_new (*mcp__ossl_SSL_CTX_new)
#define SSL_CTX_set_alpn_protos (*mcp__ossl_SSL_CTX_set_alpn_protos)
#define SSL_CTX_set_default_verify_paths (*mcp__ossl_SSL_CTX_set_default_verify_paths)
#define SSL_CTX_set_options (*mcp__ossl_SSL_CTX_set_options)
#define SSL_CTX_set_verify (*mcp__ossl_SSL_CTX_set_verify)
#define SSL_CTX_use_PrivateKey_file (*mcp__ossl_SSL_CTX_use_PrivateKey_file)
#define SSL_CTX_use_certificate_chain_file (*mcp__ossl_SSL_CTX_use_certificate_chain_file)
#define SSL_connect (*mcp__ossl_SSL_connect)
#define SSL_ctrl (*mcp__ossl_SSL_ctrl)
#define SSL_free (*mcp__ossl_SSL_free)
#define SSL_get0_alpn_selected (*mcp__ossl_SSL_get0_alpn_selected)
#define SSL_get0_param (*mcp__ossl_SSL_get0_param)
#define SSL_get_error (*mcp__ossl_SSL_get_error)
#define SSL_get_verify_result (*mcp__ossl_SSL_get_verify_result)
#define SSL_new (*mcp__ossl_SSL_new)
#define SSL_read (*mcp__ossl_SSL_read)
#define SSL_set1_host (*mcp__ossl_SSL_set1_host)
#define SSL_set_connect_state (*mcp__ossl_SSL_set_connect_state)
#define SSL_set_fd (*mcp__ossl_SSL_set_fd)
#define SSL_set_hostflags (*mcp__ossl_SSL_set_hostflags)
#define SSL_shutdown (*mcp__ossl_SSL_shutdown)
#define SSL_write (*mcp__ossl_SSL_write)
#define OPENSSL_thread_stop (*mcp__ossl_OPENSSL_thread_stop)
#define TLS_client_method (*mcp__ossl_TLS_client_method)
#define X509_VERIFY_PARAM_set1_ip_asc (*mcp__ossl_X509_VERIFY_PARAM_set1_ip_asc)
#define X509_verify_cert_error_string (*mcp__ossl_X509_verify_cert_error_string)
#define d2i_AutoPrivateKey (*mcp__ossl_d2i_AutoPrivateKey)
#define d2i_ECDSA_SIG (*mcp__ossl_d2i_ECDSA_SIG)
#define i2d_PrivateKey (*mcp__ossl_i2d_PrivateKey)
#endif
#endif /* MCP_LAZY_OPENSSL */

#endif
