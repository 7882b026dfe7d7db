/* SPDX-License-Identifier: MIT */
/*
 * mcp_pending.h: the table of in-flight requests.  Maps our integer request
 * ids to entries holding a deadline, a cancel token, the outcome and a
 * waiter.  Completion, timeout, cancel and close race each other; exactly one
 * wins and the request ends exactly once.  Knows no JSON content and no I/O.
 *
 * Two kinds of entries:
 *  - sync: a host thread blocks in mcp__pending_wait(); it enforces its own
 *    deadline and owns the entry's memory.
 *  - async: a done callback runs exactly once on the completing thread
 *    (reader, timer, canceller or closer); the table's timer thread enforces
 *    deadlines.
 *
 * An outcome is a status, the result as text (its compact JSON, which the
 * reader thread produced) and an error: the table parses no JSON and
 * never looks inside the text.
 *
 * Lock order: the table lock is never held while calling into a cancel token
 * (listen/unlisten) or a done callback.
 */
#ifndef MCP_PENDING_H
#define MCP_PENDING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcp_int.h"

typedef struct mcp_pending mcp_pending;
typedef struct mcp_pending_entry mcp_pending_entry;

/*
 * Done callback of an async entry.  |text| (NUL-terminated, |len| bytes;
 * NULL unless the request ended with MCP_OK and a result) is handed over:
 * the callee frees it with mcp__free.  |err| is borrowed (NULL on MCP_OK).
 * Must not block for long: it runs on I/O, timer or canceller threads.
 */
typedef void (*mcp_pending_done_fn)(void *user, int64_t id, mcp_status status, char *text,
                                    size_t len, const mcp_error *err);

typedef struct mcp_pending_req {
  int64_t timeout_ms;       /* <= 0: no deadline */
  mcp_cancel *cancel;       /* may be NULL; the table takes a reference */
  bool reset_on_progress;   /* progress restarts the timeout ... */
  int64_t max_total_ms;     /* ... but never past this (<= 0: no cap) */
  mcp_pending_done_fn done; /* NULL: a sync entry */
  void *user;               /* passed to done, and returned by _entry_user */
} mcp_pending_req;

/* Returns NULL when out of memory.  The timer thread starts with the first
 * async entry that has a deadline. */
mcp_pending *mcp__pending_new(void);
/* Closes (MCP_ECLOSED) what is left, joins the timer thread, frees. */
void mcp__pending_free(mcp_pending *p);

/*
 * mcp__pending_add() allocates the next id and registers a request.
 * For a sync request *sync_entry receives the entry, which the caller must
 * pass to mcp__pending_wait() exactly once (it holds the waiter's reference).
 * Returns MCP_OK with *id set; MCP_ECLOSED (err filled with the close
 * reason) after mcp__pending_close(); MCP_ECANCELLED when the token already
 * fired; MCP_ENOMEM (also when the timer thread cannot start).  On error nothing is registered and done never runs.
 * Threads: any, concurrently.
 */
mcp_status mcp__pending_add(mcp_pending *p, const mcp_pending_req *r, int64_t *id,
                            mcp_pending_entry **sync_entry, mcp_error *err);

/*
 * mcp__pending_wait() blocks on a sync entry until it ends, then frees it.
 * With |wait_callbacks|, it also waits until every progress callback handed
 * out before the end (mcp__pending_progress) has been released, so progress
 * that preceded the reply is delivered before the caller returns; pass false
 * when the caller runs on the thread that would run those callbacks.
 * Returns the request's status.  On MCP_OK *text is the result text the
 * completer handed in (NUL-terminated, *len bytes; caller frees with
 * mcp__free; NULL when it gave none); otherwise *text is NULL and |err| is
 * filled.  Threads: the thread that added the entry.
 */
mcp_status mcp__pending_wait(mcp_pending *p, mcp_pending_entry *e, bool wait_callbacks, char **text,
                             size_t *len, mcp_error *err);

/*
 * mcp__pending_set_waker() makes the end of sync entry |e| (by any thread,
 * for any reason) also call fn(arg), under the table's lock: fn must be
 * quick, must not call back into the table, and may take only locks that
 * are never held while calling into the table.  For a waiter that waits
 * somewhere other than mcp__pending_wait() first (a transport's lead()).
 * Threads: the waiter, before it waits.
 */
void mcp__pending_set_waker(mcp_pending *p, mcp_pending_entry *e, void (*fn)(void *), void *arg);

/*
 * mcp__pending_entry_done() says whether sync entry |e| has ended; if not,
 * *deadline is its current deadline (MCP_NO_DEADLINE when none or while
 * held).  Threads: the waiter, before mcp__pending_wait().
 */
bool mcp__pending_entry_done(mcp_pending *p, mcp_pending_entry *e, int64_t *deadline);

/*
 * mcp__pending_complete() ends request |id| with |status|.  |text| (the
 * result: NUL-terminated, |len| bytes, allocated with mcp__malloc; may be
 * NULL) is stolen, freed on every path where it is not handed on.  |e| is
 * borrowed (may be NULL).  Returns 0 when it ended a request, 1 when |id|
 * was ours but already ended (a late reply), 2 when |id| was never ours.
 * Threads: any.
 */
int mcp__pending_complete(mcp_pending *p, int64_t id, mcp_status status, char *text, size_t len,
                          const mcp_error *e);

/*
 * mcp__pending_remove() withdraws an async request whose message could not
 * be sent, without running its done callback.  Returns true when withdrawn,
 * false when it had already ended (its done callback has run or will run).
 */
bool mcp__pending_remove(mcp_pending *p, int64_t id);

/*
 * mcp__pending_progress() notes progress on |id|: restarts its timeout when
 * it asked for that.  When the request is still running, returns a new
 * reference to its entry for one callback (release it with
 * mcp__pending_entry_unref, whether the callback ran or not), else NULL.
 */
mcp_pending_entry *mcp__pending_progress(mcp_pending *p, int64_t id);

/*
 * Stops (|hold| true) or restarts the clock of request |id|: while held it
 * cannot time out (a person is logging in for it); released, it gets its
 * whole timeout again from now.  Cancel and close still end it.  Unknown or
 * ended ids, and a hold of a held entry, are ignored.  Any thread.
 */
void mcp__pending_hold(mcp_pending *p, int64_t id, bool hold);

/*
 * Callbacks tied to an entry (progress) run between _enter and _leave.
 * _enter returns false once a sync entry's waiter has returned (or an async
 * entry has ended), and a waiter does not return while a callback is
 * inside; so no progress callback ever runs after its call returned.
 * _entry_user is valid while inside.
 */
bool mcp__pending_entry_enter(mcp_pending *p, mcp_pending_entry *e);
void mcp__pending_entry_leave(mcp_pending *p, mcp_pending_entry *e);
void *mcp__pending_entry_user(mcp_pending_entry *e);
void mcp__pending_entry_unref(mcp_pending *p, mcp_pending_entry *e);

/*
 * mcp__pending_close() ends every request with |status| and |message| and
 * refuses new ones with the same.  Idempotent (the first reason stays).
 */
void mcp__pending_close(mcp_pending *p, mcp_status status, const char *message);

/* Requests in flight.  Threads: any. */
size_t mcp__pending_count(mcp_pending *p);

#endif /* MCP_PENDING_H */
