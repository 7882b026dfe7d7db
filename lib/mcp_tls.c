/* SPDX-License-Identifier: MIT */
/*
 * mcp_tls.c: OpenSSL 3 glue for the HTTP connection layer: the per-client
 * SSL_CTX (trust, client certificate, ALPN offer) and non-blocking
 * handshake, read and write on one connection's socket.
 * Must not know about: HTTP framing, nghttp2, MCP, threads.
 *
 * Errors.  OpenSSL keeps its error queue per thread, so every operation
 * clears it first and turns what is left afterwards into one message; the
 * queue never leaks into another call on the same I/O thread.
 */
#include "config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "mcp_ossl.h"

#include "mcp_tls.h"

struct mcp_tls_ctx {
  SSL_CTX *ctx;
  bool insecure;
};

struct mcp_tls {
  SSL *ssl;
  char *host;
  int wants;        /* MCP_TLS_WANT_* of the last MCP__EAGAIN */
  bool established; /* the handshake completed */
  bool broken;      /* a fatal error happened: no close_notify then */
  bool shut;        /* close_notify has been sent */
};

/* ALPN lists in wire format: length-prefixed protocol names. */
static const unsigned char alpn_h2_h1[] = "\x02h2\x08http/1.1";
static const unsigned char alpn_h1[] = "\x08http/1.1";
static const unsigned char alpn_h2[] = "\x02h2";

/* ---- helpers -------------------------------------------------------------- */

/* MCP_ENOMEM when OpenSSL's queued error is an allocation failure (the
 * caller's operation failed for want of memory, not over TLS), else
 * MCP_ETLS. */
static bool err_is_oom(unsigned long e) {
  return e && (ERR_GET_REASON(e) == ERR_R_MALLOC_FAILURE ||
               (ERR_GET_LIB(e) == ERR_LIB_SYS && ERR_GET_REASON(e) == ENOMEM));
}

static mcp_status tls_status(void) {
  /* OpenSSL 3.0 does not always queue ERR_R_MALLOC_FAILURE (loading a PEM
   * file may say only "PEM lib"); the failed malloc leaves ENOMEM in errno,
   * which mcp__tls_ctx_new() clears first. */
  if (err_is_oom(ERR_peek_error()) || err_is_oom(ERR_peek_last_error()) || errno == ENOMEM)
    return MCP_ENOMEM;
  return MCP_ETLS;
}

/* The same for a local set-up step (SSL_CTX_new, SSL_new, SNI, ALPN...):
 * these fail only for want of resources, and OpenSSL may not manage to
 * queue a reason at all then. */
static mcp_status tls_setup_status(void) {
  return ERR_peek_last_error() == 0 ? MCP_ENOMEM : tls_status();
}

/* Copies OpenSSL's most relevant queued reason into |buf|, or |fallback|
 * when the queue is empty.  The last error is the outermost one, which is
 * the one worth reporting ("no such file" comes before "system lib"). */
static const char *ssl_reason(char *buf, size_t n, const char *fallback) {
  unsigned long e = ERR_peek_last_error();
  if (e == 0) {
    snprintf(buf, n, "%s", fallback);
    return buf;
  }
  const char *r = ERR_reason_error_string(e);
  if (r) snprintf(buf, n, "%s", r);
  else ERR_error_string_n(e, buf, n);
  return buf;
}

/* strerror() text starting in lower case, to fit inside our messages. */
static const char *errno_text(int e, char *buf, size_t n) {
  if (e == 0) {
    snprintf(buf, n, "connection closed by peer");
    return buf;
  }
#if defined(__GLIBC__) && defined(_GNU_SOURCE)
  const char *s = strerror_r(e, buf, n);
  if (s != buf) snprintf(buf, n, "%s", s);
#else
  if (strerror_r(e, buf, n) != 0) snprintf(buf, n, "error %d", e);
#endif
  if (buf[0] && isupper((unsigned char)buf[0]) && !(buf[1] && isupper((unsigned char)buf[1])))
    buf[0] = (char)tolower((unsigned char)buf[0]);
  return buf;
}

bool mcp__tls_host_is_ip(const char *host) {
  unsigned char addr[sizeof(struct in6_addr)];
  return inet_pton(AF_INET, host, addr) == 1 || inet_pton(AF_INET6, host, addr) == 1;
}

/* ---- context -------------------------------------------------------------- */

mcp_status mcp__tls_ctx_new(const mcp_tls_settings *tls, mcp_tls_alpn alpn, mcp_tls_ctx **out,
                            mcp_error *err) {
  const char *ca_file = tls->ca_file, *ca_dir = tls->ca_dir;
  const char *client_cert = tls->client_cert, *client_key = tls->client_key;
  bool insecure = tls->insecure;
  mcp_status st = MCP_OK;
  char why[256];
  mcp_tls_ctx *c = NULL;
  *out = NULL;

  if ((client_cert && *client_cert) != (client_key && *client_key))
    return mcp__error_set(err, MCP_EINVAL, "client_cert and client_key must be given together");
  /* Every other function here needs a context: OpenSSL is loaded from now. */
  if ((st = mcp__ossl_load(err)) != MCP_OK) return st;

  c = mcp__calloc(1, sizeof(*c));
  if (!c) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  c->insecure = insecure;

  ERR_clear_error();
  errno = 0;
  c->ctx = SSL_CTX_new(TLS_client_method());
  if (!c->ctx) {
    st = mcp__error_set(err, tls_setup_status(), "cannot create TLS context: %s",
                        ssl_reason(why, sizeof(why), "unknown error"));
    goto fail;
  }
  if (SSL_CTX_set_min_proto_version(c->ctx, TLS1_2_VERSION) != 1) {
    st = mcp__error_set(err, tls_setup_status(), "cannot require TLS 1.2: %s",
                        ssl_reason(why, sizeof(why), "unknown error"));
    goto fail;
  }
  /* HTTP/2 forbids renegotiation; an EOF without close_notify is reported
   * as an ordinary end of stream, since HTTP framing (Content-Length,
   * chunked, HTTP/2 END_STREAM) detects truncation itself. */
  SSL_CTX_set_options(c->ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_IGNORE_UNEXPECTED_EOF |
                                  SSL_OP_NO_COMPRESSION);
  SSL_CTX_set_mode(c->ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);

  if (insecure) {
    SSL_CTX_set_verify(c->ctx, SSL_VERIFY_NONE, NULL);
  } else {
    SSL_CTX_set_verify(c->ctx, SSL_VERIFY_PEER, NULL);
    if ((ca_file && *ca_file) || (ca_dir && *ca_dir)) {
      const char *f = ca_file && *ca_file ? ca_file : NULL;
      const char *d = ca_dir && *ca_dir ? ca_dir : NULL;
      if (SSL_CTX_load_verify_locations(c->ctx, f, d) != 1) {
        st = mcp__error_set(err, tls_status(), "cannot load CA %s %s: %s", f ? "file" : "directory",
                            f ? f : d, ssl_reason(why, sizeof(why), "unknown error"));
        goto fail;
      }
    } else if (SSL_CTX_set_default_verify_paths(c->ctx) != 1) {
      st = mcp__error_set(err, tls_status(), "cannot load the system trust store: %s",
                          ssl_reason(why, sizeof(why), "unknown error"));
      goto fail;
    }
  }

  if (client_cert && *client_cert) {
    if (SSL_CTX_use_certificate_chain_file(c->ctx, client_cert) != 1) {
      st = mcp__error_set(err, tls_status(), "cannot load client certificate %s: %s", client_cert,
                          ssl_reason(why, sizeof(why), "unknown error"));
      goto fail;
    }
    if (SSL_CTX_use_PrivateKey_file(c->ctx, client_key, SSL_FILETYPE_PEM) != 1) {
      unsigned long e = ERR_peek_last_error();
      if (ERR_GET_LIB(e) == ERR_LIB_X509 && ERR_GET_REASON(e) == X509_R_KEY_VALUES_MISMATCH)
        st = mcp__error_set(err, tls_status(), "client certificate %s and key %s do not match",
                            client_cert, client_key);
      else
        st = mcp__error_set(err, tls_status(), "cannot load client key %s: %s", client_key,
                            ssl_reason(why, sizeof(why), "unknown error"));
      goto fail;
    }
    if (SSL_CTX_check_private_key(c->ctx) != 1) {
      st = mcp__error_set(err, tls_status(), "client certificate %s and key %s do not match",
                          client_cert, client_key);
      goto fail;
    }
  }

  const unsigned char *protos = alpn_h2_h1;
  unsigned int plen = sizeof(alpn_h2_h1) - 1;
  if (alpn == MCP_TLS_ALPN_H1) {
    protos = alpn_h1;
    plen = sizeof(alpn_h1) - 1;
  } else if (alpn == MCP_TLS_ALPN_H2) {
    protos = alpn_h2;
    plen = sizeof(alpn_h2) - 1;
  }
  /* Unlike most of OpenSSL, this one returns 0 on success. */
  if (SSL_CTX_set_alpn_protos(c->ctx, protos, plen) != 0) {
    st = mcp__error_set(err, tls_setup_status(), "cannot set ALPN: %s",
                        ssl_reason(why, sizeof(why), "unknown error"));
    goto fail;
  }
  /* OpenSSL 3.0 gets over some allocation failures while it builds a
   * context (a group or cipher list left short), queueing only the error:
   * such a context would fail handshakes for no reason the peer caused. */
  if (tls_status() == MCP_ENOMEM) {
    st = mcp__error_set(err, MCP_ENOMEM, "cannot create TLS context: %s",
                        ssl_reason(why, sizeof(why), "out of memory"));
    goto fail;
  }
  ERR_clear_error();
  *out = c;
  return MCP_OK;

fail:
  ERR_clear_error();
  mcp__tls_ctx_free(c);
  return st;
}

void mcp__tls_ctx_free(mcp_tls_ctx *ctx) {
  if (!ctx) return;
  SSL_CTX_free(ctx->ctx);
  mcp__free(ctx);
}

/* ---- connection ----------------------------------------------------------- */

mcp_status mcp__tls_new(mcp_tls_ctx *ctx, int fd, const char *host, mcp_tls **out, mcp_error *err) {
  mcp_status st = MCP_OK;
  char why[256];
  bool ip = mcp__tls_host_is_ip(host);
  mcp_tls *t = mcp__calloc(1, sizeof(*t));
  *out = NULL;
  if (!t) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  t->host = mcp__strdup(host);
  if (!t->host) {
    st = mcp__error_set(err, MCP_ENOMEM, "out of memory");
    goto fail;
  }

  ERR_clear_error();
  t->ssl = SSL_new(ctx->ctx);
  if (!t->ssl || SSL_set_fd(t->ssl, fd) != 1) {
    st = mcp__error_set(err, tls_setup_status(), "cannot create TLS connection: %s",
                        ssl_reason(why, sizeof(why), "unknown error"));
    goto fail;
  }
  /* RFC 6066 forbids IP literals in SNI. */
  if (!ip && SSL_set_tlsext_host_name(t->ssl, host) != 1) {
    st = mcp__error_set(err, tls_setup_status(), "cannot set SNI %s: %s", host,
                        ssl_reason(why, sizeof(why), "unknown error"));
    goto fail;
  }
  if (!ctx->insecure) {
    int ok;
    if (ip) {
      ok = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(t->ssl), host);
    } else {
      SSL_set_hostflags(t->ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
      ok = SSL_set1_host(t->ssl, host);
    }
    if (ok != 1) {
      st = mcp__error_set(err, tls_setup_status(), "cannot verify host %s: %s", host,
                          ssl_reason(why, sizeof(why), "unknown error"));
      goto fail;
    }
  }
  SSL_set_connect_state(t->ssl);
  ERR_clear_error();
  *out = t;
  return MCP_OK;

fail:
  ERR_clear_error();
  mcp__tls_free(t);
  return st;
}

void mcp__tls_free(mcp_tls *t) {
  if (!t) return;
  SSL_free(t->ssl);
  mcp__free(t->host);
  mcp__free(t);
}

int mcp__tls_wants(const mcp_tls *t) { return t->wants; }

mcp_status mcp__tls_handshake(mcp_tls *t, mcp_error *err) {
  char why[256];
  ERR_clear_error();
  errno = 0;
  int rc = SSL_connect(t->ssl);
  if (rc == 1) {
    t->wants = 0;
    t->established = true;
    return MCP_OK;
  }
  int e = SSL_get_error(t->ssl, rc);
  int saved_errno = errno;
  mcp_status st;
  switch (e) {
  case SSL_ERROR_WANT_READ: t->wants = MCP_TLS_WANT_READ; return MCP__EAGAIN;
  case SSL_ERROR_WANT_WRITE: t->wants = MCP_TLS_WANT_WRITE; return MCP__EAGAIN;
  case SSL_ERROR_SYSCALL:
    if (ERR_peek_last_error() == 0) {
      /* The socket failed under the handshake (reset, or closed without
       * an alert): a transport failure, retried like any other, not a
       * TLS verdict on the server. */
      errno = saved_errno;
      st = tls_status() == MCP_ENOMEM ? MCP_ENOMEM : MCP_EIO;
      st = mcp__error_set(err, st, "TLS handshake with %s failed: %s", t->host,
                          saved_errno ? errno_text(saved_errno, why, sizeof(why))
                                      : "the server closed the connection");
      break;
    }
    /* OpenSSL queued a reason: report it like SSL_ERROR_SSL. */
    __attribute__((fallthrough));
  default: {
    /* EOF before the handshake finished: SSL_ERROR_ZERO_RETURN with
     * SSL_OP_IGNORE_UNEXPECTED_EOF, else an "unexpected eof" reason. */
    if (e == SSL_ERROR_ZERO_RETURN ||
        (ERR_GET_LIB(ERR_peek_last_error()) == ERR_LIB_SSL &&
         ERR_GET_REASON(ERR_peek_last_error()) == SSL_R_UNEXPECTED_EOF_WHILE_READING)) {
      st = mcp__error_set(
          err, MCP_EIO, "TLS handshake with %s failed: the server closed the connection", t->host);
      break;
    }
    long vr = SSL_get_verify_result(t->ssl);
    if (vr != X509_V_OK) {
      const char *what = X509_verify_cert_error_string(vr);
      mcp_status vst = vr == X509_V_ERR_OUT_OF_MEM ? MCP_ENOMEM : MCP_ETLS;
      if (vr == X509_V_ERR_HOSTNAME_MISMATCH || vr == X509_V_ERR_IP_ADDRESS_MISMATCH)
        st = mcp__error_set(err, vst,
                            "certificate verify failed: %s (the certificate "
                            "is not valid for %s)",
                            what, t->host);
      else st = mcp__error_set(err, vst, "certificate verify failed: %s", what);
    } else {
      st = mcp__error_set(err, tls_status(), "TLS handshake with %s failed: %s", t->host,
                          ssl_reason(why, sizeof(why), "unknown error"));
    }
    break;
  }
  }
  ERR_clear_error();
  return st;
}

/* Maps a failed SSL_read/SSL_write to our statuses. */
static ssize_t io_error(mcp_tls *t, int rc, int saved_errno, bool reading, mcp_error *err) {
  char why[256];
  int e = SSL_get_error(t->ssl, rc);
  ssize_t st;
  switch (e) {
  case SSL_ERROR_WANT_READ: t->wants = MCP_TLS_WANT_READ; return MCP__EAGAIN;
  case SSL_ERROR_WANT_WRITE: t->wants = MCP_TLS_WANT_WRITE; return MCP__EAGAIN;
  case SSL_ERROR_ZERO_RETURN:
    if (reading) return 0;
    st = mcp__error_set(err, MCP_EIO, "TLS connection closed by peer");
    break;
  case SSL_ERROR_SYSCALL:
    if (ERR_peek_last_error() == 0) {
      if (reading && saved_errno == 0) return 0;
      st = mcp__error_set(err, MCP_EIO, "%s", errno_text(saved_errno, why, sizeof(why)));
      break;
    }
    __attribute__((fallthrough));
  default:
    st = mcp__error_set(err, tls_status(), "TLS error: %s",
                        ssl_reason(why, sizeof(why), "unknown error"));
    break;
  }
  t->broken = true;
  ERR_clear_error();
  return st;
}

ssize_t mcp__tls_read(mcp_tls *t, void *buf, size_t n, mcp_error *err) {
  if (n > INT_MAX) n = INT_MAX;
  ERR_clear_error();
  errno = 0;
  int rc = SSL_read(t->ssl, buf, (int)n);
  if (rc > 0) return rc;
  return io_error(t, rc, errno, true, err);
}

ssize_t mcp__tls_write(mcp_tls *t, const void *buf, size_t n, mcp_error *err) {
  if (n > INT_MAX) n = INT_MAX;
  ERR_clear_error();
  errno = 0;
  int rc = SSL_write(t->ssl, buf, (int)n);
  if (rc > 0) return rc;
  return io_error(t, rc, errno, false, err);
}

const char *mcp__tls_alpn_selected(const mcp_tls *t) {
  const unsigned char *p = NULL;
  unsigned int len = 0;
  SSL_get0_alpn_selected(t->ssl, &p, &len);
  if (len == 2 && memcmp(p, "h2", 2) == 0) return "h2";
  if (len == 8 && memcmp(p, "http/1.1", 8) == 0) return "http/1.1";
  return NULL;
}

void mcp__tls_close_notify(mcp_tls *t) {
  if (!t || t->shut || t->broken || !t->established) return;
  t->shut = true;
  ERR_clear_error();
  (void)SSL_shutdown(t->ssl);
  ERR_clear_error();
}
