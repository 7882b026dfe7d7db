/* SPDX-License-Identifier: MIT */
/*
 * mcp_ttl.h: a small in-memory store of results with a time to live, for
 * the SEP-2549 caching of MCP 2026-07-28 (server/utilities/caching): a
 * result marked `ttlMs` is fresh while now < received + ttlMs and is then
 * served without a request; one marked `cacheScope: "private"` is served
 * only within the authorization context it was fetched in.
 *
 * A store has a fixed number of slots (the client gives each cacheable
 * list method one) holding one text each.  Every slot has a generation:
 * mcp__ttl_invalidate() bumps it and drops the text, and mcp__ttl_put()
 * stores only when the generation is still the one the caller read before
 * it sent its request, so an answer that raced a list_changed is never
 * kept.  The authorization context is an opaque string ("" for none); the
 * store compares it, nothing more.
 *
 * Knows nothing of MCP, JSON or connections.  Threads: every function is
 * safe to call from any thread (one mutex inside).  Layer: system.
 */
#ifndef MCP_TTL_H
#define MCP_TTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcp_int.h"

/* The number of slots in a store. */
#define MCP_TTL_SLOTS 4

typedef struct mcp_ttl mcp_ttl;

/* A new, empty store; NULL when out of memory. */
mcp_ttl *mcp__ttl_new(void);
/* Frees the store and its texts.  NULL-safe. */
void mcp__ttl_free(mcp_ttl *s);

/*
 * mcp__ttl_gen() is the generation of |slot|, to pass to mcp__ttl_put()
 * after the request it is read before.
 */
uint64_t mcp__ttl_gen(mcp_ttl *s, int slot);

/*
 * mcp__ttl_get() returns a copy of |slot|'s text (mcp__free) when it is
 * fresh at |now_ms| and either public or stored under |auth|; else NULL
 * (also when out of memory: the caller then asks the server).
 */
char *mcp__ttl_get(mcp_ttl *s, int slot, const char *auth, int64_t now_ms);

/*
 * mcp__ttl_put() stores a copy of |text| (|len| bytes) in |slot|, fresh
 * until |expires_ms|, private to |auth| when |private_scope|, unless the
 * slot's generation moved past |gen| (an invalidation came meanwhile) or
 * the text is already stale.  Out of memory keeps nothing.
 */
void mcp__ttl_put(mcp_ttl *s, int slot, uint64_t gen, const char *text, size_t len,
                  int64_t expires_ms, bool private_scope, const char *auth);

/* mcp__ttl_invalidate() drops |slot|'s text and bumps its generation. */
void mcp__ttl_invalidate(mcp_ttl *s, int slot);

#endif /* MCP_TTL_H */
