/* SPDX-License-Identifier: MIT */
/*
 * mcp_ttl.c: the time-to-live result store (see mcp_ttl.h).  Owns its
 * slots' texts and one mutex; knows nothing of what the texts are.
 */
#include "config.h"

#include <pthread.h>
#include <string.h>

#include "mcp_ttl.h"

typedef struct slot {
  char *text; /* NULL: empty */
  size_t len;
  int64_t expires_ms; /* fresh while now < expires_ms */
  char *auth;         /* the authorization context of a private entry; NULL: public */
  uint64_t gen;
} slot;

struct mcp_ttl {
  pthread_mutex_t mu;
  slot slots[MCP_TTL_SLOTS];
};

mcp_ttl *mcp__ttl_new(void) {
  mcp_ttl *s = mcp__calloc(1, sizeof(*s));
  if (s) pthread_mutex_init(&s->mu, NULL);
  return s;
}

static void clear_slot(slot *e) {
  mcp__free(e->text);
  mcp__free(e->auth);
  e->text = e->auth = NULL;
  e->len = 0;
}

void mcp__ttl_free(mcp_ttl *s) {
  if (!s) return;
  for (int i = 0; i < MCP_TTL_SLOTS; i++) clear_slot(&s->slots[i]);
  pthread_mutex_destroy(&s->mu);
  mcp__free(s);
}

static bool valid(const mcp_ttl *s, int i) { return s && i >= 0 && i < MCP_TTL_SLOTS; }

uint64_t mcp__ttl_gen(mcp_ttl *s, int i) {
  if (!valid(s, i)) return 0;
  pthread_mutex_lock(&s->mu);
  uint64_t g = s->slots[i].gen;
  pthread_mutex_unlock(&s->mu);
  return g;
}

char *mcp__ttl_get(mcp_ttl *s, int i, const char *auth, int64_t now_ms) {
  if (!valid(s, i)) return NULL;
  char *out = NULL;
  pthread_mutex_lock(&s->mu);
  slot *e = &s->slots[i];
  if (e->text && now_ms < e->expires_ms) {
    if (!e->auth || strcmp(e->auth, auth ? auth : "") == 0) out = mcp__strndup(e->text, e->len);
  } else if (e->text) {
    clear_slot(e); /* stale: nothing will serve it again */
  }
  pthread_mutex_unlock(&s->mu);
  return out;
}

void mcp__ttl_put(mcp_ttl *s, int i, uint64_t gen, const char *text, size_t len, int64_t expires_ms,
                  bool private_scope, const char *auth) {
  if (!valid(s, i) || !text) return;
  char *copy = mcp__strndup(text, len);
  char *a = private_scope ? mcp__strdup(auth ? auth : "") : NULL;
  pthread_mutex_lock(&s->mu);
  slot *e = &s->slots[i];
  if (copy && (!private_scope || a) && e->gen == gen && mcp__now_ms() < expires_ms) {
    clear_slot(e);
    e->text = copy;
    e->len = len;
    e->expires_ms = expires_ms;
    e->auth = a;
    copy = a = NULL;
  }
  pthread_mutex_unlock(&s->mu);
  mcp__free(copy);
  mcp__free(a);
}

void mcp__ttl_invalidate(mcp_ttl *s, int i) {
  if (!valid(s, i)) return;
  pthread_mutex_lock(&s->mu);
  clear_slot(&s->slots[i]);
  s->slots[i].gen++;
  pthread_mutex_unlock(&s->mu);
}
