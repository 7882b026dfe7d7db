/* SPDX-License-Identifier: MIT */
/*
 * mcp_pending.c: the in-flight request table (see mcp_pending.h).
 *
 * One mutex (`lock`) guards the hash, every entry's state fields and the
 * timer bookkeeping.  An entry ends exactly once, in finish(), under the lock;
 * the winner then runs the async done callback, or wakes the sync waiter,
 * outside the lock.  Entries are refcounted (atomically) so that progress
 * callbacks and a waking completer can hold one.
 *
 * Waking a sync waiter after unlocking saves the waiter a futile wake-up on
 * the still-held table lock (two context switches per call).  The completer
 * takes a reference before unlocking, so the waiter, which may see `done`
 * and return at once, never frees the entry (and its condition variable)
 * under the completer's broadcast.
 *
 * Lock order: cancel token lock -> table lock (listeners take the table lock
 * while the token lock is held).  Hence unlisten is never called with the
 * table lock held.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "mcp_cancel.h"
#include "mcp_pending.h"

struct mcp_pending_entry {
  mcp_pending *p;
  int64_t id;
  atomic_int refs; /* last one to drop it frees the entry */
  bool is_async;
  atomic_bool done;     /* set once, under p->lock, by finish(); read without it in entry_done */
  bool in_table;        /* guarded by p->lock */
  int in_cb;            /* callbacks between enter and leave; guarded by p->lock */
  int queued;           /* progress callbacks handed out and not released yet */
  bool waiter_gone;     /* the sync waiter returned: later callbacks are skipped */
  int64_t deadline;     /* ms, CLOCK_MONOTONIC; guarded by p->lock */
  int64_t timeout_ms;   /* for restarts on progress */
  int64_t max_deadline; /* ms, CLOCK_MONOTONIC; MCP_NO_DEADLINE for none */
  int64_t max_total_ms; /* the cap behind max_deadline, for the message */
  bool reset_on_progress;
  int64_t held_at;    /* ms when mcp__pending_hold() stopped the clock, or 0 */
  mcp_cancel *cancel; /* own reference, or NULL */
  mcp_cancel_listener listener;
  mcp_pending_done_fn done_fn;
  void *user;
  /* Outcome, written by finish(). */
  mcp_status status;
  char *text; /* the result (own until handed on), or NULL */
  size_t text_len;
  mcp_error err;
  pthread_cond_t cond;   /* sync entries: the waiter sleeps here */
  void (*waker)(void *); /* sync: also called when the entry ends */
  void *waker_arg;
  mcp_pending_entry *hnext; /* hash chain; guarded by p->lock */
  mcp_pending_entry *cnext; /* a completer's local list */
};

struct mcp_pending {
  pthread_mutex_t lock;
  mcp_pending_entry **buckets; /* guarded by lock */
  size_t nbuckets;             /* power of two */
  /* Entries in the table: changed under lock, read without it
   * (mcp__pending_count, once per sequential call). */
  atomic_size_t count;
  int64_t next_id; /* ids handed out are 1 .. next_id-1 */
  bool closed;
  mcp_status close_status;
  char *close_message;
  /* Timer thread for async deadlines, started by the first async entry
   * that has one (sync waiters keep their own deadlines, so a host that
   * only makes blocking calls never has one). */
  pthread_t timer;
  bool timer_started; /* guarded by lock */
  pthread_cond_t timer_cond;
  bool timer_stop;
  int64_t timer_next; /* earliest async deadline it sleeps towards */
};

static void entry_free(mcp_pending_entry *e) {
  mcp__free(e->text);
  mcp_error_clear(&e->err);
  if (e->cancel) mcp_cancel_unref(e->cancel);
  if (!e->is_async) pthread_cond_destroy(&e->cond);
  mcp__free(e);
}

/* Drops a reference (with or without p->lock).  Returns the entry when it
 * must be freed (outside the lock), else NULL. */
static mcp_pending_entry *unref_locked(mcp_pending_entry *e) {
  return atomic_fetch_sub_explicit(&e->refs, 1, memory_order_acq_rel) == 1 ? e : NULL;
}

static void unref(mcp_pending_entry *e) {
  mcp_pending_entry *dead = unref_locked(e);
  if (dead) entry_free(dead);
}

/* Wakes the waiter of a sync entry this thread ended (finish_locked took a
 * reference for us).  Called without the lock. */
static void wake_sync(mcp_pending_entry *e) {
  pthread_cond_broadcast(&e->cond);
  unref(e);
}

static size_t bucket_of(const mcp_pending *p, int64_t id) {
  return (size_t)((uint64_t)id * 0x9E3779B97F4A7C15ULL >> 20) & (p->nbuckets - 1);
}

static mcp_pending_entry *find_locked(mcp_pending *p, int64_t id) {
  for (mcp_pending_entry *e = p->buckets[bucket_of(p, id)]; e; e = e->hnext)
    if (e->id == id) return e;
  return NULL;
}

static void unlink_locked(mcp_pending *p, mcp_pending_entry *e) {
  if (!e->in_table) return;
  mcp_pending_entry **pp = &p->buckets[bucket_of(p, e->id)];
  while (*pp && *pp != e) pp = &(*pp)->hnext;
  if (*pp) *pp = e->hnext;
  e->hnext = NULL;
  e->in_table = false;
  atomic_store_explicit(&p->count, atomic_load_explicit(&p->count, memory_order_relaxed) - 1,
                        memory_order_relaxed);
}

static int grow_locked(mcp_pending *p) {
  size_t n = p->nbuckets * 2;
  mcp_pending_entry **nb = mcp__calloc(n, sizeof(*nb));
  if (!nb) return -1;
  mcp_pending_entry **old = p->buckets;
  size_t oldn = p->nbuckets;
  p->buckets = nb;
  p->nbuckets = n;
  for (size_t i = 0; i < oldn; i++) {
    mcp_pending_entry *e = old[i];
    while (e) {
      mcp_pending_entry *next = e->hnext;
      size_t b = bucket_of(p, e->id);
      e->hnext = nb[b];
      nb[b] = e;
      e = next;
    }
  }
  mcp__free(old);
  return 0;
}

/*
 * Ends |e| with the given outcome (text stolen, e2 copied) unless it has
 * ended already, in which case |text| is freed and false is returned.
 * Caller holds p->lock.  On true for a sync entry the caller owns one more
 * reference and must call wake_sync(e) after unlocking (the waiter itself,
 * ending its own entry, drops it at once instead).
 */
static bool finish_locked(mcp_pending *p, mcp_pending_entry *e, mcp_status status, char *text,
                          size_t len, const mcp_error *e2, const char *message) {
  if (e->done) {
    mcp__free(text);
    return false;
  }
  e->done = true;
  e->status = status;
  if (status != MCP_OK) { /* a result only goes with success */
    mcp__free(text);
    text = NULL;
  }
  e->text = text;
  e->text_len = text ? len : 0;
  if (e2) {
    mcp__error_copy(&e->err, e2);
    e->err.status = status;
  } else if (status != MCP_OK) {
    mcp__error_set(&e->err, status, "%s", message ? message : mcp_strerror(status));
  }
  unlink_locked(p, e);
  if (!e->is_async) {
    atomic_fetch_add_explicit(&e->refs, 1, memory_order_relaxed);
    /* Under the lock, so the waiter (who needs it to see the end) is
     * still waiting and whatever the waker touches still exists. */
    if (e->waker) e->waker(e->waker_arg);
  }
  return true;
}

/* Runs the done callback of an async entry that this thread ended, then
 * drops the table's reference.  Called without the lock. */
static void deliver_async(mcp_pending *p, mcp_pending_entry *e, bool from_listener) {
  (void)p;
  if (e->cancel && !from_listener) mcp__cancel_unlisten(e->cancel, &e->listener);
  char *text = e->text;
  e->text = NULL;
  e->done_fn(e->user, e->id, e->status, text, text ? e->text_len : 0,
             e->status == MCP_OK ? NULL : &e->err);
  unref(e);
}

/* Cancel listener: runs on the firing thread under the token's lock. */
static void on_cancel(void *arg) {
  mcp_pending_entry *e = arg;
  mcp_pending *p = e->p;
  pthread_mutex_lock(&p->lock);
  bool won = finish_locked(p, e, MCP_ECANCELLED, NULL, 0, NULL, "request cancelled");
  pthread_mutex_unlock(&p->lock);
  if (!won) return;
  if (e->is_async) deliver_async(p, e, true);
  else wake_sync(e);
}

/* The message of |e|'s timeout: the cap on the total time when that is
 * what ended it (progress had kept pushing the deadline out), else the
 * timeout.  Caller holds p->lock. */
static void timeout_message(const mcp_pending_entry *e, char *buf, size_t n) {
  if (e->max_total_ms && e->deadline == e->max_deadline)
    snprintf(buf, n, "request timed out after %lld ms (its maximum total time%s)",
             (long long)e->max_total_ms,
             e->reset_on_progress && e->timeout_ms ? ", progress having extended the timeout" : "");
  else snprintf(buf, n, "request timed out after %lld ms", (long long)e->timeout_ms);
}

static void *timer_main(void *arg) {
  mcp_pending *p = arg;
  pthread_mutex_lock(&p->lock);
  while (!p->timer_stop) {
    int64_t now = mcp__now_ms();
    int64_t next = MCP_NO_DEADLINE;
    mcp_pending_entry *expired = NULL;
    for (size_t i = 0; i < p->nbuckets; i++) {
      for (mcp_pending_entry *e = p->buckets[i], *nx; e; e = nx) {
        nx = e->hnext;
        if (!e->is_async || e->deadline == MCP_NO_DEADLINE) continue;
        if (e->deadline <= now) {
          char msg[160];
          timeout_message(e, msg, sizeof(msg));
          if (finish_locked(p, e, MCP_ETIMEDOUT, NULL, 0, NULL, msg)) {
            e->cnext = expired;
            expired = e;
          }
        } else if (e->deadline < next) {
          next = e->deadline;
        }
      }
    }
    p->timer_next = next;
    if (expired) {
      pthread_mutex_unlock(&p->lock);
      while (expired) {
        mcp_pending_entry *e = expired;
        expired = e->cnext;
        deliver_async(p, e, false);
      }
      pthread_mutex_lock(&p->lock);
      continue;
    }
    struct timespec ts = mcp__ts_from_ms(next);
    pthread_cond_timedwait(&p->timer_cond, &p->lock, &ts);
  }
  pthread_mutex_unlock(&p->lock);
  return NULL;
}

static int cond_init_monotonic(pthread_cond_t *c) {
  pthread_condattr_t a;
  if (pthread_condattr_init(&a)) return -1;
  pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
  int rc = pthread_cond_init(c, &a);
  pthread_condattr_destroy(&a);
  return rc ? -1 : 0;
}

mcp_pending *mcp__pending_new(void) {
  mcp_pending *p = mcp__calloc(1, sizeof(*p));
  if (!p) return NULL;
  p->nbuckets = 64;
  p->buckets = mcp__calloc(p->nbuckets, sizeof(*p->buckets));
  if (!p->buckets) goto fail_buckets;
  p->next_id = 1;
  p->timer_next = MCP_NO_DEADLINE;
  if (pthread_mutex_init(&p->lock, NULL)) goto fail_lock;
  if (cond_init_monotonic(&p->timer_cond)) goto fail_cond;
  return p;
fail_cond:
  pthread_mutex_destroy(&p->lock);
fail_lock:
  mcp__free(p->buckets);
fail_buckets:
  mcp__free(p);
  return NULL;
}

void mcp__pending_free(mcp_pending *p) {
  if (!p) return;
  mcp__pending_close(p, MCP_ECLOSED, "client freed");
  pthread_mutex_lock(&p->lock);
  p->timer_stop = true;
  bool started = p->timer_started;
  pthread_cond_signal(&p->timer_cond);
  pthread_mutex_unlock(&p->lock);
  if (started) pthread_join(p->timer, NULL);
  pthread_cond_destroy(&p->timer_cond);
  pthread_mutex_destroy(&p->lock);
  mcp__free(p->close_message);
  mcp__free(p->buckets);
  mcp__free(p);
}

mcp_status mcp__pending_add(mcp_pending *p, const mcp_pending_req *r, int64_t *id,
                            mcp_pending_entry **sync_entry, mcp_error *err) {
  if (r->cancel && mcp_cancel_is_fired(r->cancel))
    return mcp__error_set(err, MCP_ECANCELLED, "request cancelled before it was sent");
  mcp_pending_entry *e = mcp__calloc(1, sizeof(*e));
  if (!e) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  e->p = p;
  e->is_async = r->done != NULL;
  /* Sync: the waiter's reference.  Async: the table's, plus ours until the
   * cancel listener is in place (another thread may end the entry the
   * moment it is in the table). */
  e->refs = e->is_async ? 2 : 1;
  e->done_fn = r->done;
  e->user = r->user;
  e->timeout_ms = r->timeout_ms > 0 ? r->timeout_ms : 0;
  e->reset_on_progress = r->reset_on_progress;
  int64_t now = mcp__now_ms();
  e->deadline = r->timeout_ms > 0 ? now + r->timeout_ms : MCP_NO_DEADLINE;
  e->max_deadline = r->max_total_ms > 0 ? now + r->max_total_ms : MCP_NO_DEADLINE;
  e->max_total_ms = r->max_total_ms > 0 ? r->max_total_ms : 0;
  if (e->deadline > e->max_deadline) e->deadline = e->max_deadline;
  if (!e->is_async && cond_init_monotonic(&e->cond)) {
    mcp__free(e);
    return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  }
  e->cancel = r->cancel ? mcp_cancel_ref(r->cancel) : NULL;

  pthread_mutex_lock(&p->lock);
  if (p->closed) {
    mcp_status st = p->close_status;
    mcp__error_set(err, st, "%s", p->close_message ? p->close_message : mcp_strerror(st));
    mcp__error_mark_not_sent(err); /* closed before it was sent */
    pthread_mutex_unlock(&p->lock);
    entry_free(e);
    return st;
  }
  if (e->is_async && e->deadline != MCP_NO_DEADLINE && !p->timer_started) {
    if (pthread_create(&p->timer, NULL, timer_main, p) != 0) {
      pthread_mutex_unlock(&p->lock);
      entry_free(e);
      return mcp__error_set(err, MCP_ENOMEM, "cannot start the request timer thread");
    }
    p->timer_started = true;
    pthread_setname_np(p->timer, "mcp-pending-tmr"); /* named before add returns */
  }
  size_t count = atomic_load_explicit(&p->count, memory_order_relaxed);
  if (count + 1 > p->nbuckets && grow_locked(p) != 0 && count + 1 > p->nbuckets * 8) {
    pthread_mutex_unlock(&p->lock);
    entry_free(e);
    return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  }
  e->id = p->next_id++;
  size_t b = bucket_of(p, e->id);
  e->hnext = p->buckets[b];
  p->buckets[b] = e;
  e->in_table = true;
  atomic_store_explicit(&p->count, count + 1, memory_order_relaxed);
  if (e->is_async && e->deadline < p->timer_next) {
    p->timer_next = e->deadline;
    pthread_cond_signal(&p->timer_cond);
  }
  *id = e->id;
  if (sync_entry) *sync_entry = e->is_async ? NULL : e;
  pthread_mutex_unlock(&p->lock);

  /* Listening after insertion: a token that fires in between ends the entry
   * through the normal path, so done still runs exactly once. */
  if (e->cancel) {
    if (mcp__cancel_listen(e->cancel, &e->listener, on_cancel, e) != MCP_OK) {
      pthread_mutex_lock(&p->lock);
      bool won = finish_locked(p, e, MCP_ECANCELLED, NULL, 0, NULL, "request cancelled");
      pthread_mutex_unlock(&p->lock);
      if (won && e->is_async) deliver_async(p, e, true);
      if (won && !e->is_async) wake_sync(e);
    } else {
      /* If it ended before we listened, its completer's unlisten found
       * nothing to remove: remove our listener ourselves. */
      pthread_mutex_lock(&p->lock);
      bool ended = e->done;
      pthread_mutex_unlock(&p->lock);
      if (ended) mcp__cancel_unlisten(e->cancel, &e->listener);
    }
  }
  if (e->is_async) unref(e);
  return MCP_OK;
}

mcp_status mcp__pending_wait(mcp_pending *p, mcp_pending_entry *e, bool wait_callbacks, char **text,
                             size_t *text_len, mcp_error *err) {
  *text = NULL;
  *text_len = 0;
  pthread_mutex_lock(&p->lock);
  /* The entry leaves the table when it ends (possibly before we got here);
   * the waiter's reference keeps it alive until we are done with it. */
  for (;;) {
    if (e->done) break;
    int64_t now = mcp__now_ms();
    if (e->deadline != MCP_NO_DEADLINE && now >= e->deadline) {
      char msg[160];
      timeout_message(e, msg, sizeof(msg));
      if (finish_locked(p, e, MCP_ETIMEDOUT, NULL, 0, NULL, msg))
        atomic_fetch_sub_explicit(&e->refs, 1,
                                  memory_order_relaxed); /* no one to wake: we hold ours */
      break;
    }
    struct timespec ts = mcp__ts_from_ms(e->deadline);
    pthread_cond_timedwait(&e->cond, &p->lock, &ts);
  }
  /* Progress that arrived before the reply is delivered before we return:
   * wait for callbacks already handed out, unless the caller runs on the
   * very lane that would run them. */
  if (wait_callbacks)
    while (e->queued > 0) pthread_cond_wait(&e->cond, &p->lock);
  e->waiter_gone = true;
  while (e->in_cb > 0) pthread_cond_wait(&e->cond, &p->lock);
  mcp_status st = e->status;
  *text = e->text;
  *text_len = e->text_len;
  e->text = NULL;
  if (st != MCP_OK && err) {
    mcp__error_copy(err, &e->err);
    err->status = st;
  }
  pthread_mutex_unlock(&p->lock);
  if (e->cancel) mcp__cancel_unlisten(e->cancel, &e->listener);
  /* Last: a completer may still hold a reference while it wakes us. */
  unref(e);
  return st;
}

int mcp__pending_complete(mcp_pending *p, int64_t id, mcp_status status, char *text, size_t len,
                          const mcp_error *e2) {
  pthread_mutex_lock(&p->lock);
  mcp_pending_entry *e = id > 0 && id < p->next_id ? find_locked(p, id) : NULL;
  if (!e || e->done) {
    int rc = id > 0 && id < p->next_id ? 1 : 2;
    pthread_mutex_unlock(&p->lock);
    mcp__free(text);
    return rc;
  }
  finish_locked(p, e, status, text, len, e2, NULL);
  pthread_mutex_unlock(&p->lock);
  /* Our reference (async: the table's; sync: the one finish took) keeps e. */
  if (e->is_async) deliver_async(p, e, false);
  else wake_sync(e);
  return 0;
}

bool mcp__pending_remove(mcp_pending *p, int64_t id) {
  pthread_mutex_lock(&p->lock);
  mcp_pending_entry *e = find_locked(p, id);
  if (!e || e->done || !e->is_async) {
    pthread_mutex_unlock(&p->lock);
    return false;
  }
  e->done = true;
  unlink_locked(p, e);
  pthread_mutex_unlock(&p->lock);
  if (e->cancel) mcp__cancel_unlisten(e->cancel, &e->listener);
  unref(e); /* the table's */
  return true;
}

mcp_pending_entry *mcp__pending_progress(mcp_pending *p, int64_t id) {
  pthread_mutex_lock(&p->lock);
  mcp_pending_entry *e = find_locked(p, id);
  if (!e || e->done) {
    pthread_mutex_unlock(&p->lock);
    return NULL;
  }
  if (e->reset_on_progress && e->timeout_ms > 0 && !e->held_at) {
    int64_t d = mcp__now_ms() + e->timeout_ms;
    e->deadline = d < e->max_deadline ? d : e->max_deadline;
    /* A sync waiter re-reads its deadline when woken; the timer thread
     * finds the later deadline at its next pass. */
    if (!e->is_async) pthread_cond_broadcast(&e->cond);
  }
  atomic_fetch_add_explicit(&e->refs, 1, memory_order_relaxed);
  e->queued++;
  pthread_mutex_unlock(&p->lock);
  return e;
}

void mcp__pending_hold(mcp_pending *p, int64_t id, bool hold) {
  pthread_mutex_lock(&p->lock);
  mcp_pending_entry *e = find_locked(p, id);
  if (!e || e->done || (hold == (e->held_at != 0))) {
    pthread_mutex_unlock(&p->lock);
    return;
  }
  int64_t now = mcp__now_ms();
  if (hold) {
    e->held_at = now > 0 ? now : 1;
    e->deadline = MCP_NO_DEADLINE;
  } else {
    /* The whole timeout again from now; a max total moves by the time held. */
    if (e->max_deadline != MCP_NO_DEADLINE) e->max_deadline += now - e->held_at;
    e->held_at = 0;
    e->deadline = e->timeout_ms > 0 ? now + e->timeout_ms : MCP_NO_DEADLINE;
    if (e->deadline > e->max_deadline) e->deadline = e->max_deadline;
    if (e->is_async && e->deadline != MCP_NO_DEADLINE && p->timer_started &&
        e->deadline < p->timer_next)
      pthread_cond_signal(&p->timer_cond);
  }
  /* A sync waiter re-reads its deadline when woken. */
  if (!e->is_async) pthread_cond_broadcast(&e->cond);
  pthread_mutex_unlock(&p->lock);
}

bool mcp__pending_entry_enter(mcp_pending *p, mcp_pending_entry *e) {
  pthread_mutex_lock(&p->lock);
  /* A sync entry: as long as its waiter has not returned.  An async entry:
   * until it ended (its completion runs after earlier callbacks anyway). */
  bool ok = e->is_async ? !e->done : !e->waiter_gone;
  if (ok) e->in_cb++;
  pthread_mutex_unlock(&p->lock);
  return ok;
}

void mcp__pending_entry_leave(mcp_pending *p, mcp_pending_entry *e) {
  pthread_mutex_lock(&p->lock);
  if (--e->in_cb == 0 && e->done && !e->is_async) pthread_cond_broadcast(&e->cond);
  pthread_mutex_unlock(&p->lock);
}

void *mcp__pending_entry_user(mcp_pending_entry *e) { return e->user; }

void mcp__pending_entry_unref(mcp_pending *p, mcp_pending_entry *e) {
  if (!e) return;
  pthread_mutex_lock(&p->lock);
  if (e->queued > 0 && --e->queued == 0 && !e->is_async) pthread_cond_broadcast(&e->cond);
  mcp_pending_entry *dead = unref_locked(e);
  pthread_mutex_unlock(&p->lock);
  if (dead) entry_free(dead);
}

void mcp__pending_close(mcp_pending *p, mcp_status status, const char *message) {
  mcp_pending_entry *ended = NULL;
  pthread_mutex_lock(&p->lock);
  if (!p->closed) {
    p->closed = true;
    p->close_status = status;
    p->close_message = mcp__strdup(message ? message : mcp_strerror(status));
  }
  const char *msg = p->close_message ? p->close_message : mcp_strerror(p->close_status);
  for (size_t i = 0; i < p->nbuckets; i++) {
    while (p->buckets[i]) {
      mcp_pending_entry *e = p->buckets[i];
      if (finish_locked(p, e, p->close_status, NULL, 0, NULL, msg)) { /* unlinks e */
        e->cnext = ended;
        ended = e;
      }
    }
  }
  pthread_mutex_unlock(&p->lock);
  while (ended) {
    mcp_pending_entry *e = ended;
    ended = e->cnext;
    if (e->is_async) deliver_async(p, e, false);
    else wake_sync(e);
  }
}

void mcp__pending_set_waker(mcp_pending *p, mcp_pending_entry *e, void (*fn)(void *), void *arg) {
  pthread_mutex_lock(&p->lock);
  e->waker = fn;
  e->waker_arg = arg;
  pthread_mutex_unlock(&p->lock);
}

bool mcp__pending_entry_done(mcp_pending *p, mcp_pending_entry *e, int64_t *deadline) {
  /* Set once and never cleared: a done entry needs no lock (the leader's
   * check after its read, once per call). */
  if (e->done) return true;
  pthread_mutex_lock(&p->lock);
  bool done = e->done;
  *deadline = e->held_at ? MCP_NO_DEADLINE : e->deadline;
  pthread_mutex_unlock(&p->lock);
  return done;
}

size_t mcp__pending_count(mcp_pending *p) { return atomic_load(&p->count); }
