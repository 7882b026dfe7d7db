/* SPDX-License-Identifier: MIT */
/*
 * mcp_cancel.h: refcounted cancellation tokens (the public mcp_cancel) and
 * the internal listener hook the pending table uses.  Knows nothing of MCP.
 *
 * Lock order: a token's lock is taken before any lock a listener takes
 * (listeners run under it).  So mcp__cancel_unlisten() must never be called
 * while holding a lock that a listener takes.
 */
#ifndef MCP_CANCEL_H
#define MCP_CANCEL_H

#include "mcp_int.h"

typedef struct mcp_cancel_listener {
  void (*fn)(void *arg); /* runs once, on the firing thread, under the token lock */
  void *arg;
  struct mcp_cancel_listener *prev, *next; /* guarded by the token's lock */
  int linked;                              /* guarded by the token's lock */
} mcp_cancel_listener;

/*
 * mcp__cancel_listen() registers |l| (caller-owned memory that must stay
 * valid until mcp__cancel_unlisten() returns or fn has been called).
 * Returns MCP_OK, or MCP_ECANCELLED when the token already fired (|l| is
 * not registered and fn is not called).  Threads: any.
 */
int mcp__cancel_listen(mcp_cancel *c, mcp_cancel_listener *l, void (*fn)(void *arg), void *arg);

/*
 * mcp__cancel_unlisten() removes |l|.  When it returns, |l|'s fn is not
 * running and will not run.  Harmless when |l| already fired or was never
 * linked.  Threads: any, but see the lock order above.
 */
void mcp__cancel_unlisten(mcp_cancel *c, mcp_cancel_listener *l);

#endif /* MCP_CANCEL_H */
