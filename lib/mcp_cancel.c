/* SPDX-License-Identifier: MIT */
/*
 * mcp_cancel.c: cancellation tokens.  A token is refcounted (C11 atomics),
 * fires at most once, and runs its listeners on the firing thread under its
 * own lock, so that unlisten can guarantee a listener is not running.
 */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "mcp_cancel.h"

struct mcp_cancel {
  atomic_int refs;
  atomic_bool fired;
  pthread_mutex_t lock;
  mcp_cancel_listener *head; /* guarded by lock */
};

MCP_EXTERN mcp_cancel *mcp_cancel_new(void) {
  mcp_cancel *c = mcp__calloc(1, sizeof(*c));
  if (!c) return NULL;
  atomic_init(&c->refs, 1);
  atomic_init(&c->fired, false);
  pthread_mutex_init(&c->lock, NULL);
  return c;
}

MCP_EXTERN mcp_cancel *mcp_cancel_ref(mcp_cancel *c) {
  if (c) atomic_fetch_add(&c->refs, 1);
  return c;
}

MCP_EXTERN void mcp_cancel_unref(mcp_cancel *c) {
  if (!c) return;
  if (atomic_fetch_sub(&c->refs, 1) != 1) return;
  pthread_mutex_destroy(&c->lock);
  mcp__free(c);
}

MCP_EXTERN bool mcp_cancel_is_fired(const mcp_cancel *c) {
  return c && atomic_load(&((mcp_cancel *)c)->fired);
}

MCP_EXTERN void mcp_cancel_fire(mcp_cancel *c) {
  if (!c) return;
  pthread_mutex_lock(&c->lock);
  if (atomic_exchange(&c->fired, true)) {
    pthread_mutex_unlock(&c->lock);
    return;
  }
  /* Unlink each listener before calling it: its owner may free it from
   * inside fn (the pending table frees entries that embed listeners). */
  while (c->head) {
    mcp_cancel_listener *l = c->head;
    c->head = l->next;
    if (c->head) c->head->prev = NULL;
    l->next = l->prev = NULL;
    l->linked = 0;
    void (*fn)(void *) = l->fn;
    void *arg = l->arg;
    fn(arg);
  }
  pthread_mutex_unlock(&c->lock);
}

int mcp__cancel_listen(mcp_cancel *c, mcp_cancel_listener *l, void (*fn)(void *arg), void *arg) {
  /* Every field is written under the lock: a completer on another thread
   * may already be in unlisten, reading them. */
  pthread_mutex_lock(&c->lock);
  l->fn = fn;
  l->arg = arg;
  l->prev = l->next = NULL;
  l->linked = 0;
  if (atomic_load(&c->fired)) {
    pthread_mutex_unlock(&c->lock);
    return MCP_ECANCELLED;
  }
  l->next = c->head;
  if (c->head) c->head->prev = l;
  c->head = l;
  l->linked = 1;
  pthread_mutex_unlock(&c->lock);
  return MCP_OK;
}

void mcp__cancel_unlisten(mcp_cancel *c, mcp_cancel_listener *l) {
  if (!c || !l) return;
  /* Taking the lock also waits for a fire() in progress on another thread,
   * so l->fn is certainly not running once we return. */
  pthread_mutex_lock(&c->lock);
  if (l->linked) {
    if (l->prev) l->prev->next = l->next;
    else c->head = l->next;
    if (l->next) l->next->prev = l->prev;
    l->next = l->prev = NULL;
    l->linked = 0;
  }
  pthread_mutex_unlock(&c->lock);
}
