/* SPDX-License-Identifier: MIT */
/*
 * mcp_workers.c: a fixed pool of threads running host callbacks, with
 * per-server ordered lanes.  One lane's items run one at a time in posting
 * order; different lanes run in parallel.  Knows nothing of MCP.
 *
 * Shape (after libuv's src/threadpool.c): the pool keeps a FIFO of *ready
 * lanes* under its mutex; a worker pops a lane, runs ONE item of it with no
 * lock held, then puts the lane back at the tail of the FIFO if it has more
 * items.  So a lane is never in the FIFO twice and never runs on two workers
 * at once (ordering), and a busy lane cannot starve the others (fairness).
 *
 * A lane is *scheduled* from the moment it gets an item while idle until a
 * worker finds its queue empty after an item: scheduled means "in the ready
 * FIFO, or about to be pushed there, or running on a worker".  Invariant:
 * a lane with queued items is scheduled.
 *
 * Locks:
 *  - w->lock guards the ready FIFO, w->stopping, w->nlanes, w->reaper.
 *  - l->lock guards the lane's queue and flags.
 * Lock order: the two are never nested.  Every path that changes both (post
 * to an idle lane, re-queue after an item) decides under l->lock, releases
 * it, then takes w->lock.  That is safe because the lane stays "scheduled"
 * in between, so nobody else pushes it and nobody frees it.
 * No lock is held while an item (host code) runs.
 *
 * Shutdown in stages: lane_free stops the lane's intake, waits for it to
 * drain, frees it; workers_free sets `stopping`, workers leave once the
 * ready FIFO is empty, and it joins them.
 */
#include "config.h"

#include <assert.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#include "mcp_workers.h"

typedef struct work_item {
  struct work_item *next;
  mcp_work_fn run;
  mcp_work_fn drop;
  void *arg;
} work_item;

struct mcp_lane {
  mcp_workers *w; /* borrowed: lanes are freed before their pool */
  pthread_mutex_t lock;
  pthread_cond_t drained;      /* signalled when the lane stops being scheduled */
  work_item *head;             /* guarded by lock */
  work_item *tail;             /* guarded by lock */
  bool scheduled;              /* guarded by lock; see the file comment */
  bool closing;                /* guarded by lock; intake stopped by lane_free */
  bool free_when_drained;      /* guarded by lock; lane_free from its own item */
  struct mcp_lane *ready_next; /* guarded by w->lock; FIFO link */
};

struct mcp_workers {
  pthread_mutex_t lock;
  pthread_cond_t work_cv; /* a lane became ready, or stopping was set */
  mcp_lane *ready_head;   /* guarded by lock */
  mcp_lane *ready_tail;   /* guarded by lock */
  size_t nlanes;          /* guarded by lock; lanes not yet released */
  bool stopping;          /* guarded by lock */
  /* guarded by lock: set when workers_free was called from one of our own
   * workers (the "reaper"), which then joins the others and frees the pool
   * on its way out. */
  bool has_reaper;
  pthread_t reaper;
  size_t nthreads; /* immutable after new */
  pthread_t *threads;
  atomic_size_t refs;
};

/* The lane whose item the current thread is running, and the pool the
 * current thread works for; NULL on non-worker threads. */
static _Thread_local const mcp_lane *tl_lane;
static _Thread_local mcp_workers *tl_pool;

static void pool_push_ready(mcp_workers *w, mcp_lane *l) {
  pthread_mutex_lock(&w->lock);
  l->ready_next = NULL;
  if (w->ready_tail) w->ready_tail->ready_next = l;
  else w->ready_head = l;
  w->ready_tail = l;
  pthread_cond_signal(&w->work_cv);
  pthread_mutex_unlock(&w->lock);
}

static void lane_release(mcp_lane *l) {
  mcp_workers *w = l->w;
  assert(!l->head && !l->scheduled);
  pthread_cond_destroy(&l->drained);
  pthread_mutex_destroy(&l->lock);
  mcp__free(l);
  pthread_mutex_lock(&w->lock);
  w->nlanes--;
  pthread_mutex_unlock(&w->lock);
}

/* Runs the first item of scheduled lane |l|, then re-queues the lane or
 * marks it idle (releasing it if lane_free was called from its own item).
 * Called with no lock held. */
static void lane_run_one(mcp_workers *w, mcp_lane *l) {
  pthread_mutex_lock(&l->lock);
  work_item *it = l->head;
  assert(it && l->scheduled);
  l->head = it->next;
  if (!l->head) l->tail = NULL;
  pthread_mutex_unlock(&l->lock);

  tl_lane = l;
  it->run(it->arg);
  tl_lane = NULL;
  mcp__free(it);

  pthread_mutex_lock(&l->lock);
  if (l->head) {
    /* Still scheduled: nobody else may push or free it, so the lock can be
     * dropped before taking the pool's (see "Lock order"). */
    pthread_mutex_unlock(&l->lock);
    pool_push_ready(w, l);
    return;
  }
  l->scheduled = false;
  if (l->free_when_drained) {
    pthread_mutex_unlock(&l->lock);
    lane_release(l);
    return;
  }
  if (l->closing) pthread_cond_broadcast(&l->drained);
  /* After this unlock |l| may be freed by the lane_free waiter. */
  pthread_mutex_unlock(&l->lock);
}

static void pool_release(mcp_workers *w) {
  assert(w->nlanes == 0);
  pthread_cond_destroy(&w->work_cv);
  pthread_mutex_destroy(&w->lock);
  mcp__free(w->threads);
  mcp__free(w);
}

/* Joins every worker thread except |self| (NULL: all of them). */
static void join_others(mcp_workers *w, const pthread_t *self) {
  for (size_t i = 0; i < w->nthreads; i++) {
    if (self && pthread_equal(w->threads[i], *self)) continue;
    pthread_join(w->threads[i], NULL);
  }
}

static void *worker_main(void *arg) {
  mcp_workers *w = arg;
  tl_pool = w;
  pthread_mutex_lock(&w->lock);
  for (;;) {
    while (!w->ready_head && !w->stopping) pthread_cond_wait(&w->work_cv, &w->lock);
    mcp_lane *l = w->ready_head;
    if (!l) break; /* stopping, and nothing left to run */
    w->ready_head = l->ready_next;
    if (!w->ready_head) w->ready_tail = NULL;
    l->ready_next = NULL;
    pthread_mutex_unlock(&w->lock);
    lane_run_one(w, l);
    pthread_mutex_lock(&w->lock);
  }
  /* Wake the others: they must see the empty FIFO and leave too. */
  pthread_cond_broadcast(&w->work_cv);
  bool reaper = w->has_reaper && pthread_equal(w->reaper, pthread_self());
  pthread_mutex_unlock(&w->lock);
  tl_pool = NULL;

  if (reaper) {
    /* workers_free was called from this thread's item: nobody can join us,
     * so we join the others, detach ourselves and free the pool. */
    pthread_t self = pthread_self();
    join_others(w, &self);
    pthread_detach(self);
    pool_release(w);
  }
  return NULL;
}

mcp_workers *mcp__workers_new(size_t nthreads) {
  if (nthreads < 1) return NULL;
  mcp_workers *w = mcp__calloc(1, sizeof(*w));
  if (!w) return NULL;
  w->threads = mcp__calloc(nthreads, sizeof(*w->threads));
  if (!w->threads) {
    mcp__free(w);
    return NULL;
  }
  pthread_mutex_init(&w->lock, NULL);
  pthread_cond_init(&w->work_cv, NULL);
  atomic_init(&w->refs, 1);

  /* Host callbacks run on these threads; keep the host's asynchronous
   * signals (SIGINT, SIGCHLD, SIGTERM...) off them.  Faults stay deliverable. */
  sigset_t all, old;
  sigfillset(&all);
  sigdelset(&all, SIGSEGV);
  sigdelset(&all, SIGBUS);
  sigdelset(&all, SIGFPE);
  sigdelset(&all, SIGILL);
  sigdelset(&all, SIGABRT);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  size_t started = 0;
  for (; started < nthreads; started++) {
    if (pthread_create(&w->threads[started], NULL, worker_main, w) != 0) break;
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);

  w->nthreads = started;
  if (started < nthreads) {
    pthread_mutex_lock(&w->lock);
    w->stopping = true;
    pthread_cond_broadcast(&w->work_cv);
    pthread_mutex_unlock(&w->lock);
    join_others(w, NULL);
    pool_release(w);
    return NULL;
  }
  return w;
}

/*
 * Destroys the pool whatever its reference count (mcp__workers_unref calls
 * it for the last reference).  From one of the pool's own workers it cannot
 * join that thread, so it hands the join and the release to that worker,
 * which does them once the ready FIFO is empty, after the current item.
 */
void mcp__workers_free(mcp_workers *w) {
  if (!w) return;
  bool from_worker = tl_pool == w;
  pthread_mutex_lock(&w->lock);
  w->stopping = true;
  if (from_worker) {
    w->has_reaper = true;
    w->reaper = pthread_self();
  }
  pthread_cond_broadcast(&w->work_cv);
  pthread_mutex_unlock(&w->lock);
  if (from_worker) return;
  join_others(w, NULL);
  pool_release(w);
}

mcp_workers *mcp__workers_ref(mcp_workers *w) {
  if (w) atomic_fetch_add_explicit(&w->refs, 1, memory_order_relaxed);
  return w;
}

void mcp__workers_unref(mcp_workers *w) {
  if (!w) return;
  if (atomic_fetch_sub_explicit(&w->refs, 1, memory_order_acq_rel) == 1) mcp__workers_free(w);
}

mcp_lane *mcp__lane_new(mcp_workers *w) {
  if (!w) return NULL;
  mcp_lane *l = mcp__calloc(1, sizeof(*l));
  if (!l) return NULL;
  l->w = w;
  pthread_mutex_init(&l->lock, NULL);
  pthread_cond_init(&l->drained, NULL);
  pthread_mutex_lock(&w->lock);
  w->nlanes++;
  pthread_mutex_unlock(&w->lock);
  return l;
}

int mcp__lane_post(mcp_lane *l, mcp_work_fn run, mcp_work_fn drop, void *arg) {
  if (!l || !run) return MCP_EINVAL;
  work_item *it = mcp__malloc(sizeof(*it));
  if (!it) return MCP_ENOMEM;
  it->next = NULL;
  it->run = run;
  it->drop = drop;
  it->arg = arg;

  pthread_mutex_lock(&l->lock);
  if (l->closing) {
    pthread_mutex_unlock(&l->lock);
    mcp__free(it);
    return MCP_ECLOSED;
  }
  if (l->tail) l->tail->next = it;
  else l->head = it;
  l->tail = it;
  bool push = !l->scheduled;
  l->scheduled = true;
  pthread_mutex_unlock(&l->lock);

  /* The lane is scheduled now, so it cannot be freed before it runs. */
  if (push) pool_push_ready(l->w, l);
  return MCP_OK;
}

bool mcp__lane_is_current(const mcp_lane *l) { return l && tl_lane == l; }

/*
 * Every item accepted by mcp__lane_post runs; nothing is discarded, so the
 * items' drop functions are never needed here.  From a worker running
 * another lane's item this blocks that worker until |l| drains, which needs
 * a second worker when |l| still has items: avoid it on a 1-thread pool.
 */
void mcp__lane_free(mcp_lane *l) {
  if (!l) return;
  pthread_mutex_lock(&l->lock);
  l->closing = true;
  if (mcp__lane_is_current(l)) {
    /* Called from one of its own items: the worker running it releases
     * the lane when the queue has drained. */
    l->free_when_drained = true;
    pthread_mutex_unlock(&l->lock);
    return;
  }
  while (l->scheduled) pthread_cond_wait(&l->drained, &l->lock);
  pthread_mutex_unlock(&l->lock);
  lane_release(l);
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define STACK_SCALE 4
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define STACK_SCALE 4
#endif
#endif
#ifndef STACK_SCALE
#define STACK_SCALE 1
#endif

int mcp__thread_attr_init(pthread_attr_t *a, size_t bytes, bool detached) {
  int rc = pthread_attr_init(a);
  if (rc != 0) return rc;
  size_t want = bytes * STACK_SCALE;
#ifdef PTHREAD_STACK_MIN
  if (want < (size_t)PTHREAD_STACK_MIN) want = (size_t)PTHREAD_STACK_MIN;
#endif
  /* EINVAL (below the minimum, odd page rounding): keep the default. */
  (void)pthread_attr_setstacksize(a, want);
  if (detached) pthread_attr_setdetachstate(a, PTHREAD_CREATE_DETACHED);
  return 0;
}
