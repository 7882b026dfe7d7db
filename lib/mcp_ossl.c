/* SPDX-License-Identifier: MIT */
/*
 * mcp_ossl.c: loads OpenSSL on first use (see mcp_ossl.h).
 */
#include "config.h"

#define MCP_OSSL_NO_REDIRECT 1
#include "mcp_ossl.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>

#include "mcp_int.h"

#ifdef MCP_LAZY_OPENSSL
#include <dlfcn.h>

#define MCP_OSSL_DEFINE(name) __typeof__(name) *mcp__ossl_##name;
MCP_OSSL_FUNCS(MCP_OSSL_DEFINE)

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic bool loaded;

/* Not cached on failure: a load that failed for want of memory is tried
 * again by the next caller. */
mcp_status mcp__ossl_load(mcp_error *err) {
  if (atomic_load_explicit(&loaded, memory_order_acquire)) return MCP_OK;
  pthread_mutex_lock(&load_lock);
  mcp_status st = MCP_OK;
  if (atomic_load_explicit(&loaded, memory_order_relaxed)) goto out;
  /* RTLD_NODELETE: the pointers stay valid for the life of the process. */
  void *h = dlopen(MCP_LIBSSL_SONAME, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!h) {
    const char *e = dlerror();
    st = mcp__error_set(err, e && strstr(e, "memory") ? MCP_ENOMEM : MCP_ETLS,
                        "OpenSSL could not be loaded: %s", e ? e : MCP_LIBSSL_SONAME);
    goto out;
  }
  /* dlsym on libssl's handle also searches libcrypto, its dependency. */
#define MCP_OSSL_RESOLVE(name) \
  if (st == MCP_OK && !(mcp__ossl_##name = (__typeof__(name) *)dlsym(h, #name))) \
    st = mcp__error_set(err, MCP_ETLS, "OpenSSL (%s) lacks %s", MCP_LIBSSL_SONAME, #name);
  MCP_OSSL_FUNCS(MCP_OSSL_RESOLVE)
#undef MCP_OSSL_RESOLVE
  if (st == MCP_OK) atomic_store_explicit(&loaded, true, memory_order_release);
out:
  pthread_mutex_unlock(&load_lock);
  return st;
}

void mcp__ossl_thread_stop(void) {
  if (atomic_load_explicit(&loaded, memory_order_acquire)) mcp__ossl_OPENSSL_thread_stop();
}

#else /* linked at load time */

void mcp__ossl_thread_stop(void) { OPENSSL_thread_stop(); }

mcp_status mcp__ossl_load(mcp_error *err) {
  (void)err;
  return MCP_OK;
}

#endif
