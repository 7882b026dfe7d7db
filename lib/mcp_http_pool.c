/* SPDX-License-Identifier: MIT */
/*
 * mcp_http_pool.c: the process's shared HTTP clients (see mcp_http_pool.h).
 * A list of entries under one mutex, each an mcp_http_client with the
 * settings it was made with (the key) and its owner count.  The list is
 * short: one entry per origin and settings (per 16 owners).
 */
#include "config.h"

#include <pthread.h>
#include <string.h>

#include "mcp_http_pool.h"

typedef struct entry {
  struct entry *next;
  mcp_http_client *h;
  size_t owners;
  /* The key: the settings the client was made with. */
  mcp_http_config cfg;
  char *scheme, *host;  /* owned copies of cfg's strings */
  mcp_tls_settings tls; /* owned; cfg.tls is a shallow copy of it */
} entry;

static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static entry *pool_head;

static bool str_eq(const char *a, const char *b) {
  if (!a || !b) return a == b;
  return strcmp(a, b) == 0;
}

static bool tls_eq(const mcp_tls_settings *a, const mcp_tls_settings *b) {
  return a->insecure == b->insecure && str_eq(a->ca_file, b->ca_file) &&
         str_eq(a->ca_dir, b->ca_dir) && str_eq(a->client_cert, b->client_cert) &&
         str_eq(a->client_key, b->client_key);
}

static bool key_eq(const mcp_http_config *a, const mcp_http_config *b) {
  return a->port == b->port && a->mode == b->mode && tls_eq(&a->tls, &b->tls) &&
         a->connect_timeout_ms == b->connect_timeout_ms &&
         a->max_h1_connections == b->max_h1_connections &&
         a->max_header_bytes == b->max_header_bytes && str_eq(a->scheme, b->scheme) &&
         str_eq(a->host, b->host);
}

static void entry_free(entry *e) {
  mcp__free(e->scheme);
  mcp__free(e->host);
  mcp__tls_settings_clear(&e->tls);
  mcp__free(e);
}

/* A copy of |cfg| with its strings owned by |e|; false when out of memory. */
static bool entry_key(entry *e, const mcp_http_config *cfg) {
  e->cfg = *cfg;
  if ((cfg->scheme && !(e->scheme = mcp__strdup(cfg->scheme))) ||
      (cfg->host && !(e->host = mcp__strdup(cfg->host))) ||
      mcp__tls_settings_copy(&e->tls, &cfg->tls) != MCP_OK)
    return false;
  e->cfg.scheme = e->scheme;
  e->cfg.host = e->host;
  e->cfg.tls = e->tls;
  return true;
}

mcp_status mcp__http_pool_get(const mcp_http_config *cfg, mcp_http_client **out, mcp_error *err) {
  *out = NULL;
  if (!cfg) return mcp__error_set(err, MCP_EINVAL, "invalid argument");
  pthread_mutex_lock(&pool_mu);
  for (entry *e = pool_head; e; e = e->next) {
    if (e->owners < MCP_HTTP_POOL_OWNERS && key_eq(&e->cfg, cfg)) {
      e->owners++;
      *out = e->h;
      pthread_mutex_unlock(&pool_mu);
      return MCP_OK;
    }
  }
  entry *e = mcp__calloc(1, sizeof(*e));
  if (!e || !entry_key(e, cfg)) {
    pthread_mutex_unlock(&pool_mu);
    if (e) entry_free(e);
    return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  }
  /* The client gets the room of the owners it may serve (see the header);
   * the key keeps the settings as asked. */
  mcp_http_config made = e->cfg;
  made.max_h1_connections = (cfg->max_h1_connections ? cfg->max_h1_connections : 8) *
                            MCP_HTTP_POOL_OWNERS;
  mcp_status st = mcp__http_client_new(&made, &e->h, err);
  if (st != MCP_OK) {
    pthread_mutex_unlock(&pool_mu);
    entry_free(e);
    return st;
  }
  e->owners = 1;
  e->next = pool_head;
  pool_head = e;
  *out = e->h;
  pthread_mutex_unlock(&pool_mu);
  return MCP_OK;
}

void mcp__http_pool_put(mcp_http_client *h) {
  if (!h) return;
  entry *gone = NULL;
  pthread_mutex_lock(&pool_mu);
  for (entry **pp = &pool_head; *pp; pp = &(*pp)->next) {
    if ((*pp)->h != h) continue;
    if (--(*pp)->owners == 0) {
      gone = *pp;
      *pp = gone->next;
    }
    break;
  }
  pthread_mutex_unlock(&pool_mu);
  if (gone) {
    /* Outside the pool's lock: freeing joins the I/O thread. */
    mcp__http_client_free(gone->h);
    entry_free(gone);
  }
}

void mcp__http_pool_stats(size_t *clients, size_t *owners) {
  size_t c = 0, o = 0;
  pthread_mutex_lock(&pool_mu);
  for (entry *e = pool_head; e; e = e->next) {
    c++;
    o += e->owners;
  }
  pthread_mutex_unlock(&pool_mu);
  if (clients) *clients = c;
  if (owners) *owners = o;
}
