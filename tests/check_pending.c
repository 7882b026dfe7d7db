/* SPDX-License-Identifier: MIT */
/*
 * check_pending.c: the in-flight table and cancellation tokens.  Every way a
 * request can end (reply, timeout, cancel, close, withdrawal) races the
 * others; each request must end exactly once.
 */
#include "config.h"

#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "check_util.h"
#include "mcp_cancel.h"
#include "mcp_pending.h"

/* ---- helpers -------------------------------------------------------------- */

/* A result text as a completer hands it over: allocated, and its length. */
static char *dup_text(const char *t) {
  size_t n = strlen(t);
  char *d = mcp__malloc(n + 1);
  ck_assert_ptr_nonnull(d);
  memcpy(d, t, n + 1);
  return d;
}
#define T(s) dup_text(s), strlen(s)

typedef struct waiter_arg {
  mcp_pending *p;
  mcp_pending_entry *e;
  mcp_status st;
  char *result;
  size_t len;
  mcp_error err;
} waiter_arg;

static void *waiter_main(void *arg) {
  waiter_arg *w = arg;
  w->st = mcp__pending_wait(w->p, w->e, true, &w->result, &w->len, &w->err);
  return NULL;
}

static int64_t add_sync(mcp_pending *p, int64_t timeout, mcp_cancel *c, mcp_pending_entry **e) {
  mcp_pending_req r = {0};
  r.timeout_ms = timeout;
  r.cancel = c;
  int64_t id = 0;
  ck_assert_int_eq(mcp__pending_add(p, &r, &id, e, NULL), MCP_OK);
  ck_assert_ptr_nonnull(*e);
  return id;
}

/* Records async completions: how many times each id ended, and how. */
#define MAXIDS 20000
typedef struct done_log {
  atomic_int count[MAXIDS];
  atomic_int status[MAXIDS];
  atomic_int total;
  pthread_mutex_t lock;
  pthread_cond_t cond;
} done_log;

static void on_done(void *user, int64_t id, mcp_status st, char *text, size_t len,
                    const mcp_error *err) {
  done_log *d = user;
  if (id > 0 && id < MAXIDS) {
    atomic_fetch_add(&d->count[id], 1);
    atomic_store(&d->status[id], st);
  }
  if (st != MCP_OK) ck_assert_ptr_nonnull(err);
  if (text) ck_assert_uint_eq(strlen(text), len);
  mcp__free(text);
  pthread_mutex_lock(&d->lock);
  atomic_fetch_add(&d->total, 1);
  pthread_cond_broadcast(&d->cond);
  pthread_mutex_unlock(&d->lock);
}

static done_log *done_log_new(void) {
  done_log *d = calloc(1, sizeof(*d));
  pthread_mutex_init(&d->lock, NULL);
  pthread_cond_init(&d->cond, NULL);
  return d;
}

/* Waits (condition variable with a deadline) until |n| completions. */
static int wait_total(done_log *d, int n, int ms) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_sec += ms / 1000;
  ts.tv_nsec += (ms % 1000) * 1000000L;
  if (ts.tv_nsec >= 1000000000L) {
    ts.tv_sec++;
    ts.tv_nsec -= 1000000000L;
  }
  pthread_mutex_lock(&d->lock);
  while (atomic_load(&d->total) < n)
    if (pthread_cond_timedwait(&d->cond, &d->lock, &ts) != 0) break;
  int ok = atomic_load(&d->total) >= n;
  pthread_mutex_unlock(&d->lock);
  return ok;
}

static int64_t add_async(mcp_pending *p, done_log *d, int64_t timeout, mcp_cancel *c) {
  mcp_pending_req r = {0};
  r.timeout_ms = timeout;
  r.cancel = c;
  r.done = on_done;
  r.user = d;
  int64_t id = 0;
  ck_assert_int_eq(mcp__pending_add(p, &r, &id, NULL, NULL), MCP_OK);
  return id;
}

/* ---- sync ------------------------------------------------------------------ */

START_TEST(sync_reply_from_other_thread) {
  mcp_pending *p = mcp__pending_new();
  mcp_pending_entry *e;
  int64_t id = add_sync(p, 5000, NULL, &e);
  waiter_arg w = {p, e, 0, NULL, 0, MCP_ERROR_INIT};
  pthread_t th;
  pthread_create(&th, NULL, waiter_main, &w);
  ck_assert_int_eq(mcp__pending_complete(p, id, MCP_OK, T("{\"v\":7}"), NULL), 0);
  pthread_join(th, NULL);
  ck_assert_int_eq(w.st, MCP_OK);
  ck_assert_str_eq(w.result, "{\"v\":7}");
  ck_assert_uint_eq(w.len, 7);
  mcp__free(w.result);
  /* The same id again is a late reply; an id never handed out is unknown. */
  ck_assert_int_eq(mcp__pending_complete(p, id, MCP_OK, T("{}"), NULL), 1);
  ck_assert_int_eq(mcp__pending_complete(p, id + 100, MCP_OK, NULL, 0, NULL), 2);
  ck_assert_int_eq(mcp__pending_complete(p, -1, MCP_OK, NULL, 0, NULL), 2);
  ck_assert_uint_eq(mcp__pending_count(p), 0);
  mcp__pending_free(p);
}
END_TEST

START_TEST(sync_reply_before_wait) {
  /* The reply can win the race against the waiter reaching its wait. */
  mcp_pending *p = mcp__pending_new();
  mcp_pending_entry *e;
  int64_t id = add_sync(p, 0, NULL, &e);
  ck_assert_int_eq(mcp__pending_complete(p, id, MCP_OK, T("3"), NULL), 0);
  char *res = NULL;
  size_t rlen = 0;
  ck_assert_int_eq(mcp__pending_wait(p, e, true, &res, &rlen, NULL), MCP_OK);
  ck_assert_str_eq(res, "3");
  ck_assert_uint_eq(rlen, 1);
  mcp__free(res);
  mcp__pending_free(p);
}
END_TEST

START_TEST(sync_rpc_error_passes_details) {
  mcp_pending *p = mcp__pending_new();
  mcp_pending_entry *e;
  int64_t id = add_sync(p, 0, NULL, &e);
  mcp_error re = MCP_ERROR_INIT;
  mcp__error_set(&re, MCP_ERPC, "Method not found");
  re.rpc_code = -32601;
  re.data = strdup("{\"x\":1}");
  ck_assert_int_eq(mcp__pending_complete(p, id, MCP_ERPC, NULL, 0, &re), 0);
  mcp_error_clear(&re);
  char *res = NULL;
  size_t rlen = 0;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp__pending_wait(p, e, true, &res, &rlen, &err), MCP_ERPC);
  ck_assert_ptr_null(res);
  ck_assert_int_eq(err.rpc_code, -32601);
  ck_assert_str_eq(err.message, "Method not found");
  ck_assert_str_eq(err.data, "{\"x\":1}");
  mcp_error_clear(&err);
  mcp__pending_free(p);
}
END_TEST

START_TEST(sync_timeout_then_late_reply) {
  mcp_pending *p = mcp__pending_new();
  mcp_pending_entry *e;
  long long t0 = test_now_ms();
  int64_t id = add_sync(p, 50, NULL, &e);
  char *res = NULL;
  size_t rlen = 0;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp__pending_wait(p, e, true, &res, &rlen, &err), MCP_ETIMEDOUT);
  ck_assert_int_ge(test_now_ms() - t0, 50);
  ck_assert_ptr_nonnull(strstr(err.message, "timed out"));
  mcp_error_clear(&err);
  ck_assert_int_eq(mcp__pending_complete(p, id, MCP_OK, T("{}"), NULL), 1);
  mcp__pending_free(p);
}
END_TEST

typedef struct fire_arg {
  mcp_cancel *c;
} fire_arg;

static void *fire_main(void *arg) {
  mcp_cancel_fire(((fire_arg *)arg)->c);
  return NULL;
}

START_TEST(sync_cancel_from_other_thread) {
  mcp_pending *p = mcp__pending_new();
  mcp_cancel *c = mcp_cancel_new();
  mcp_pending_entry *e;
  int64_t id = add_sync(p, 0, c, &e);
  fire_arg fa = {c};
  pthread_t th;
  pthread_create(&th, NULL, fire_main, &fa);
  char *res = NULL;
  size_t rlen = 0;
  ck_assert_int_eq(mcp__pending_wait(p, e, true, &res, &rlen, NULL), MCP_ECANCELLED);
  pthread_join(th, NULL);
  ck_assert(mcp_cancel_is_fired(c));
  ck_assert_int_eq(mcp__pending_complete(p, id, MCP_OK, NULL, 0, NULL), 1);
  /* A fired token refuses new requests at once. */
  mcp_pending_req r = {.cancel = c};
  int64_t id2;
  mcp_pending_entry *e2;
  ck_assert_int_eq(mcp__pending_add(p, &r, &id2, &e2, NULL), MCP_ECANCELLED);
  mcp_cancel_unref(c);
  mcp__pending_free(p);
}
END_TEST

START_TEST(close_fails_everything) {
  mcp_pending *p = mcp__pending_new();
  done_log *d = done_log_new();
  enum { NW = 8 };
  waiter_arg w[NW];
  pthread_t th[NW];
  for (int i = 0; i < NW; i++) {
    memset(&w[i], 0, sizeof(w[i]));
    w[i].p = p;
    add_sync(p, 0, NULL, &w[i].e);
    pthread_create(&th[i], NULL, waiter_main, &w[i]);
  }
  for (int i = 0; i < 100; i++) add_async(p, d, 0, NULL);
  mcp__pending_close(p, MCP_ECLOSED, "server exited with status 3");
  for (int i = 0; i < NW; i++) {
    pthread_join(th[i], NULL);
    ck_assert_int_eq(w[i].st, MCP_ECLOSED);
    ck_assert_str_eq(w[i].err.message, "server exited with status 3");
    mcp_error_clear(&w[i].err);
  }
  ck_assert(wait_total(d, 100, 5000));
  ck_assert_int_eq(atomic_load(&d->total), 100);
  /* New requests are refused with the same reason. */
  mcp_pending_req r = {0};
  int64_t id;
  mcp_pending_entry *e;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp__pending_add(p, &r, &id, &e, &err), MCP_ECLOSED);
  ck_assert_str_eq(err.message, "server exited with status 3");
  mcp_error_clear(&err);
  mcp__pending_free(p);
  free(d);
}
END_TEST

/* ---- async ----------------------------------------------------------------- */

START_TEST(async_paths_end_once) {
  mcp_pending *p = mcp__pending_new();
  done_log *d = done_log_new();
  mcp_cancel *c = mcp_cancel_new();
  int64_t a = add_async(p, d, 0, NULL);  /* replied */
  int64_t b = add_async(p, d, 30, NULL); /* times out on the timer thread */
  int64_t k = add_async(p, d, 0, c);     /* cancelled */
  int64_t w = add_async(p, d, 0, NULL);  /* withdrawn: done never runs */
  ck_assert_int_eq(mcp__pending_complete(p, a, MCP_OK, T("{}"), NULL), 0);
  mcp_cancel_fire(c);
  ck_assert(mcp__pending_remove(p, w));
  ck_assert(!mcp__pending_remove(p, a));
  ck_assert(wait_total(d, 3, 5000));
  ck_assert_int_eq(atomic_load(&d->status[a]), MCP_OK);
  ck_assert_int_eq(atomic_load(&d->status[b]), MCP_ETIMEDOUT);
  ck_assert_int_eq(atomic_load(&d->status[k]), MCP_ECANCELLED);
  mcp__pending_close(p, MCP_ECLOSED, "bye");
  ck_assert_int_eq(atomic_load(&d->count[a]), 1);
  ck_assert_int_eq(atomic_load(&d->count[b]), 1);
  ck_assert_int_eq(atomic_load(&d->count[k]), 1);
  ck_assert_int_eq(atomic_load(&d->count[w]), 0);
  ck_assert_int_eq(atomic_load(&d->total), 3);
  mcp_cancel_unref(c);
  mcp__pending_free(p);
  free(d);
}
END_TEST

/* Many threads race replies, timeouts, cancels and a final close. */
typedef struct race_arg {
  mcp_pending *p;
  done_log *d;
  mcp_cancel *tok;
  int base, n, added;
  unsigned seed;
} race_arg;

static void *racer_main(void *arg) {
  race_arg *r = arg;
  for (int i = 0; i < r->n; i++) {
    unsigned x = rand_r(&r->seed);
    mcp_pending_req q = {0};
    q.timeout_ms = (x % 4 == 0) ? 1 + x % 5 : 0;
    q.cancel = (x % 7 == 0) ? r->tok : NULL;
    q.done = on_done;
    q.user = r->d;
    int64_t id = 0;
    mcp_status st = mcp__pending_add(r->p, &q, &id, NULL, NULL);
    if (st == MCP_ECANCELLED) continue; /* token already fired: refused, no id */
    ck_assert_int_eq(st, MCP_OK);
    r->added++;
    if (x % 3 == 0) mcp__pending_complete(r->p, id, MCP_OK, T("{}"), NULL);
    if (x % 11 == 0) mcp__pending_complete(r->p, id - 1, MCP_OK, NULL, 0, NULL);
  }
  return NULL;
}

START_TEST(async_race_exactly_once) {
  mcp_pending *p = mcp__pending_new();
  done_log *d = done_log_new();
  mcp_cancel *tok = mcp_cancel_new();
  enum { NT = 8, PER = 1000 };
  race_arg ra[NT];
  pthread_t th[NT];
  for (int i = 0; i < NT; i++) {
    ra[i] = (race_arg){p, d, tok, i * PER, PER, 0, (unsigned)(i * 7919 + 1)};
    pthread_create(&th[i], NULL, racer_main, &ra[i]);
  }
  fire_arg fa = {tok};
  pthread_t fth;
  pthread_create(&fth, NULL, fire_main, &fa);
  for (int i = 0; i < NT; i++) pthread_join(th[i], NULL);
  pthread_join(fth, NULL);
  mcp__pending_close(p, MCP_ECLOSED, "closed");
  int added = 0;
  for (int i = 0; i < NT; i++) added += ra[i].added;
  ck_assert_int_gt(added, NT * PER / 2);
  ck_assert(wait_total(d, added, 10000));
  /* Ids are dense over accepted requests: each ended exactly once. */
  for (int id = 1; id <= added; id++) ck_assert_int_eq(atomic_load(&d->count[id]), 1);
  ck_assert_int_eq(atomic_load(&d->total), added);
  mcp_cancel_unref(tok);
  mcp__pending_free(p);
  free(d);
}
END_TEST

/* ---- progress ---------------------------------------------------------------- */

typedef struct prog_arg {
  mcp_pending *p;
  int64_t id;
  atomic_bool stop;
  int sent;
} prog_arg;

static void *progress_main(void *arg) {
  prog_arg *pa = arg;
  while (!atomic_load(&pa->stop)) {
    mcp_pending_entry *e = mcp__pending_progress(pa->p, pa->id);
    if (!e) break;
    mcp__pending_entry_unref(pa->p, e);
    pa->sent++;
    struct timespec ts = {0, 20 * 1000000L};
    nanosleep(&ts, NULL); /* paces a simulated server; not synchronisation */
  }
  return NULL;
}

START_TEST(progress_extends_until_max_total) {
  mcp_pending *p = mcp__pending_new();
  mcp_pending_req r = {0};
  /* Progress comes every ~20 ms; the 500 ms timeout leaves room for a
   * loaded machine to delay the progress thread without a false timeout. */
  r.timeout_ms = 500;
  r.reset_on_progress = true;
  r.max_total_ms = 1500;
  int64_t id;
  mcp_pending_entry *e;
  long long t0 = test_now_ms();
  ck_assert_int_eq(mcp__pending_add(p, &r, &id, &e, NULL), MCP_OK);
  prog_arg pa = {p, id, false, 0};
  pthread_t th;
  pthread_create(&th, NULL, progress_main, &pa);
  char *res = NULL;
  size_t rlen = 0;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp__pending_wait(p, e, true, &res, &rlen, &err), MCP_ETIMEDOUT);
  long long el = test_now_ms() - t0;
  atomic_store(&pa.stop, true);
  pthread_join(th, NULL);
  /* It outlived its 500 ms timeout thanks to progress, and stopped at the
   * cap, which the message names (it said "after 500 ms" before). */
  ck_assert_int_ge(el, 1500);
  ck_assert_msg(err.message &&
                    strstr(err.message, "timed out after 1500 ms (its maximum total time"),
                "%s", err.message ? err.message : "");
  mcp_error_clear(&err);
  ck_assert_int_gt(pa.sent, 3);
  mcp__pending_free(p);
}
END_TEST

START_TEST(progress_unknown_or_ended_is_dropped) {
  mcp_pending *p = mcp__pending_new();
  ck_assert_ptr_null(mcp__pending_progress(p, 12345));
  mcp_pending_entry *e;
  int64_t id = add_sync(p, 0, NULL, &e);
  mcp_pending_entry *pe = mcp__pending_progress(p, id);
  ck_assert_ptr_nonnull(pe);
  ck_assert(mcp__pending_entry_enter(p, pe));
  mcp__pending_entry_leave(p, pe);
  ck_assert_int_eq(mcp__pending_complete(p, id, MCP_OK, NULL, 0, NULL), 0);
  ck_assert_ptr_null(mcp__pending_progress(p, id)); /* ended: no new progress */
  /* Progress handed out before the reply still runs: the waiter is here. */
  ck_assert(mcp__pending_entry_enter(p, pe));
  mcp__pending_entry_leave(p, pe);
  mcp__pending_entry_unref(p, pe);
  char *res = NULL;
  size_t rlen = 0;
  ck_assert_int_eq(mcp__pending_wait(p, e, true, &res, &rlen, NULL), MCP_OK);
  mcp__pending_free(p);
}
END_TEST

typedef struct cb_arg {
  mcp_pending *p;
  mcp_pending_entry *pe;
  atomic_int phase;
} cb_arg;

static void *inside_cb_main(void *arg) {
  cb_arg *a = arg;
  ck_assert(mcp__pending_entry_enter(a->p, a->pe));
  atomic_store(&a->phase, 1);
  /* Stay inside until the request has ended; the waiter must not return. */
  while (atomic_load(&a->phase) < 2) sched_yield();
  atomic_store(&a->phase, 3);
  mcp__pending_entry_leave(a->p, a->pe);
  mcp__pending_entry_unref(a->p, a->pe);
  return NULL;
}

START_TEST(waiter_waits_for_callbacks_inside) {
  mcp_pending *p = mcp__pending_new();
  mcp_pending_entry *e;
  int64_t id = add_sync(p, 0, NULL, &e);
  cb_arg a = {p, mcp__pending_progress(p, id), 0};
  pthread_t th;
  pthread_create(&th, NULL, inside_cb_main, &a);
  while (atomic_load(&a.phase) < 1) sched_yield();
  ck_assert_int_eq(mcp__pending_complete(p, id, MCP_OK, NULL, 0, NULL), 0);
  atomic_store(&a.phase, 2);
  char *res = NULL;
  size_t rlen = 0;
  ck_assert_int_eq(mcp__pending_wait(p, e, true, &res, &rlen, NULL), MCP_OK);
  ck_assert_int_eq(atomic_load(&a.phase), 3); /* the callback left before we returned */
  pthread_join(th, NULL);
  mcp__pending_free(p);
}
END_TEST

typedef struct late_cb {
  mcp_pending *p;
  mcp_pending_entry *pe;
  atomic_int ran;
} late_cb;

static void *late_cb_main(void *arg) {
  late_cb *l = arg;
  /* Runs after the reply ended the request, like a lane item queued before
   * it; the waiter must still be waiting for it. */
  if (mcp__pending_entry_enter(l->p, l->pe)) {
    atomic_store(&l->ran, 1);
    mcp__pending_entry_leave(l->p, l->pe);
  }
  mcp__pending_entry_unref(l->p, l->pe);
  return NULL;
}

START_TEST(progress_before_reply_is_delivered) {
  mcp_pending *p = mcp__pending_new();
  mcp_pending_entry *e;
  int64_t id = add_sync(p, 0, NULL, &e);
  late_cb l = {p, mcp__pending_progress(p, id), 0};
  ck_assert_ptr_nonnull(l.pe);
  ck_assert_int_eq(mcp__pending_complete(p, id, MCP_OK, NULL, 0, NULL), 0);
  pthread_t th;
  pthread_create(&th, NULL, late_cb_main, &l);
  char *res = NULL;
  size_t rlen = 0;
  ck_assert_int_eq(mcp__pending_wait(p, e, true, &res, &rlen, NULL), MCP_OK);
  ck_assert_int_eq(atomic_load(&l.ran), 1); /* delivered before we returned */
  pthread_join(th, NULL);
  /* A waiter that cannot wait (it runs on the callbacks' lane) returns at
   * once, and the callback handed out earlier is then skipped. */
  id = add_sync(p, 0, NULL, &e);
  mcp_pending_entry *pe = mcp__pending_progress(p, id);
  ck_assert_int_eq(mcp__pending_complete(p, id, MCP_OK, NULL, 0, NULL), 0);
  ck_assert_int_eq(mcp__pending_wait(p, e, false, &res, &rlen, NULL), MCP_OK);
  ck_assert(!mcp__pending_entry_enter(p, pe));
  mcp__pending_entry_unref(p, pe);
  mcp__pending_free(p);
}
END_TEST

START_TEST(cancel_token_refcount_and_listeners) {
  mcp_cancel *c = mcp_cancel_new();
  ck_assert(!mcp_cancel_is_fired(c));
  mcp_cancel_ref(c);
  mcp_cancel_fire(c);
  mcp_cancel_fire(c); /* second fire does nothing */
  ck_assert(mcp_cancel_is_fired(c));
  mcp_cancel_listener l;
  ck_assert_int_eq(mcp__cancel_listen(c, &l, (void (*)(void *))abort, NULL), MCP_ECANCELLED);
  mcp_cancel_unref(c);
  mcp_cancel_unref(c);
  mcp_cancel_unref(NULL);
  mcp_cancel_fire(NULL);
}
END_TEST

START_TEST(alloc_failure_add) {
  mcp_pending *p = mcp__pending_new();
  mcp__alloc_fail_after(0);
  mcp_pending_req r = {0};
  int64_t id;
  mcp_pending_entry *e;
  ck_assert_int_eq(mcp__pending_add(p, &r, &id, &e, NULL), MCP_ENOMEM);
  mcp__alloc_fail_after(-1);
  ck_assert_uint_eq(mcp__pending_count(p), 0);
  mcp__pending_free(p);
}
END_TEST

/* ---- results are text ------------------------------------------------------ */

typedef struct text_log {
  atomic_int calls;
  mcp_status status;
  char got[64];
  size_t len;
  bool had_text;
} text_log;

static void on_text(void *user, int64_t id, mcp_status st, char *text, size_t len,
                    const mcp_error *err) {
  (void)id;
  text_log *l = user;
  l->status = st;
  l->had_text = text != NULL;
  if (st != MCP_OK) ck_assert_ptr_nonnull(err);
  snprintf(l->got, sizeof(l->got), "%s", text ? text : "");
  l->len = len;
  mcp__free(text);
  atomic_fetch_add(&l->calls, 1);
}

START_TEST(text_results_every_way) {
  mcp_pending *p = mcp__pending_new();
  /* Sync: the waiter gets the completer's text as is. */
  mcp_pending_entry *e;
  int64_t id = add_sync(p, 5000, NULL, &e);
  ck_assert_int_eq(mcp__pending_complete(p, id, MCP_OK, T("{\"v\":7}"), NULL), 0);
  char *text = NULL;
  size_t len = 0;
  ck_assert_int_eq(mcp__pending_wait(p, e, true, &text, &len, NULL), MCP_OK);
  ck_assert_str_eq(text, "{\"v\":7}");
  ck_assert_uint_eq(len, 7);
  mcp__free(text);
  /* Late and unknown ids: the text is freed (the leak checkers see it). */
  ck_assert_int_eq(mcp__pending_complete(p, id, MCP_OK, T("1"), NULL), 1);
  ck_assert_int_eq(mcp__pending_complete(p, id + 100, MCP_OK, T("1"), NULL), 2);
  /* A JSON null is text too. */
  id = add_sync(p, 5000, NULL, &e);
  ck_assert_int_eq(mcp__pending_complete(p, id, MCP_OK, T("null"), NULL), 0);
  ck_assert_int_eq(mcp__pending_wait(p, e, true, &text, &len, NULL), MCP_OK);
  ck_assert_str_eq(text, "null");
  mcp__free(text);
  /* An error outcome carries no text, even when a completer passed some. */
  id = add_sync(p, 5000, NULL, &e);
  mcp_error re = MCP_ERROR_INIT;
  mcp__error_set(&re, MCP_ERPC, "nope");
  ck_assert_int_eq(mcp__pending_complete(p, id, MCP_ERPC, T("{}"), &re), 0);
  mcp_error_clear(&re);
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp__pending_wait(p, e, true, &text, &len, &err), MCP_ERPC);
  ck_assert_ptr_null(text);
  ck_assert_str_eq(err.message, "nope");
  mcp_error_clear(&err);
  /* Async: done gets the text as is. */
  text_log tl = {0};
  mcp_pending_req r = {0};
  r.done = on_text;
  r.user = &tl;
  ck_assert_int_eq(mcp__pending_add(p, &r, &id, NULL, NULL), MCP_OK);
  ck_assert_int_eq(mcp__pending_complete(p, id, MCP_OK, T("{\"a\":\"b\"}"), NULL), 0);
  ck_assert_int_eq(atomic_load(&tl.calls), 1);
  ck_assert_int_eq(tl.status, MCP_OK);
  ck_assert_str_eq(tl.got, "{\"a\":\"b\"}");
  ck_assert_uint_eq(tl.len, 9);
  /* Ended by close: done reports the close, with no text. */
  ck_assert_int_eq(mcp__pending_add(p, &r, &id, NULL, NULL), MCP_OK);
  mcp__pending_close(p, MCP_ECLOSED, "bye");
  ck_assert_int_eq(atomic_load(&tl.calls), 2);
  ck_assert_int_eq(tl.status, MCP_ECLOSED);
  ck_assert(!tl.had_text);
  mcp__pending_free(p);
}
END_TEST

/*
 * Sync waiters race their own deadlines against a completer (text and tree
 * results) and a final close: each waiter returns exactly once with its own
 * outcome, and no completer touches an entry its waiter has freed (the
 * waiter is woken after the table is unlocked: ASan and TSan watch this).
 */
typedef struct sync_race {
  mcp_pending *p;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int64_t ids[8 * 1000];
  int n, taken;
  bool done_adding;
  atomic_int ok, timed_out, closed, completed;
} sync_race;

static void *sync_racer_main(void *arg) {
  sync_race *sr = arg;
  unsigned seed = (unsigned)(uintptr_t)&seed;
  for (int i = 0; i < 1000; i++) {
    unsigned x = rand_r(&seed);
    mcp_pending_entry *e = NULL;
    mcp_pending_req r = {0};
    r.timeout_ms = x % 3 == 0 ? 1 : 10000;
    int64_t id = 0;
    mcp_status st = mcp__pending_add(sr->p, &r, &id, &e, NULL);
    if (st == MCP_ECLOSED) break;
    ck_assert_int_eq(st, MCP_OK);
    pthread_mutex_lock(&sr->lock);
    sr->ids[sr->n++] = id;
    pthread_cond_signal(&sr->cond);
    pthread_mutex_unlock(&sr->lock);
    char *text = NULL;
    size_t len = 0;
    mcp_error err = MCP_ERROR_INIT;
    st = mcp__pending_wait(sr->p, e, true, &text, &len, &err);
    if (st == MCP_OK) {
      /* The completer sends the id back: the result is ours. */
      ck_assert_ptr_nonnull(text);
      ck_assert_uint_eq(strlen(text), len);
      ck_assert_int_eq(strtoll(text, NULL, 10), id);
      atomic_fetch_add(&sr->ok, 1);
    } else if (st == MCP_ETIMEDOUT) {
      ck_assert_ptr_null(text);
      atomic_fetch_add(&sr->timed_out, 1);
    } else {
      ck_assert_int_eq(st, MCP_ECLOSED);
      atomic_fetch_add(&sr->closed, 1);
    }
    mcp__free(text);
    mcp_error_clear(&err);
  }
  return NULL;
}

static void *sync_completer_main(void *arg) {
  sync_race *sr = arg;
  for (;;) {
    pthread_mutex_lock(&sr->lock);
    while (sr->taken == sr->n && !sr->done_adding) pthread_cond_wait(&sr->cond, &sr->lock);
    if (sr->taken == sr->n) {
      pthread_mutex_unlock(&sr->lock);
      return NULL;
    }
    int64_t id = sr->ids[sr->taken++];
    pthread_mutex_unlock(&sr->lock);
    char buf[32];
    int n = snprintf(buf, sizeof(buf), "%lld", (long long)id);
    int rc = mcp__pending_complete(sr->p, id, MCP_OK, dup_text(buf), (size_t)n, NULL);
    ck_assert_int_ne(rc, 2);
    if (rc == 0) atomic_fetch_add(&sr->completed, 1);
  }
}

START_TEST(sync_race_exactly_once) {
  sync_race *sr = calloc(1, sizeof(*sr));
  sr->p = mcp__pending_new();
  pthread_mutex_init(&sr->lock, NULL);
  pthread_cond_init(&sr->cond, NULL);
  enum { NT = 8 };
  pthread_t th[NT], comp;
  pthread_create(&comp, NULL, sync_completer_main, sr);
  for (int i = 0; i < NT; i++) pthread_create(&th[i], NULL, sync_racer_main, sr);
  for (int i = 0; i < NT; i++) pthread_join(th[i], NULL);
  pthread_mutex_lock(&sr->lock);
  sr->done_adding = true;
  pthread_cond_signal(&sr->cond);
  pthread_mutex_unlock(&sr->lock);
  pthread_join(comp, NULL);
  int ended = atomic_load(&sr->ok) + atomic_load(&sr->timed_out) + atomic_load(&sr->closed);
  ck_assert_int_eq(ended, sr->n);
  /* A reply reached its waiter exactly when the completer won the race. */
  ck_assert_int_eq(atomic_load(&sr->ok), atomic_load(&sr->completed));
  ck_assert_int_gt(atomic_load(&sr->ok), 0);
  ck_assert_uint_eq(mcp__pending_count(sr->p), 0);
  mcp__pending_close(sr->p, MCP_ECLOSED, "closed");
  mcp__pending_free(sr->p);
  free(sr);
}
END_TEST

/* ---- the timer thread ---------------------------------------------------------- */

/* Threads of this process named as the table's timer thread (counting all
 * threads would count the sanitizers' own helpers too). */
static int thread_count(void) {
  DIR *d = opendir("/proc/self/task");
  ck_assert_ptr_nonnull(d);
  int n = 0;
  struct dirent *de;
  while ((de = readdir(d))) {
    if (de->d_name[0] == '.') continue;
    char path[300], comm[64] = "";
    snprintf(path, sizeof(path), "/proc/self/task/%s/comm", de->d_name);
    FILE *f = fopen(path, "r");
    if (!f) continue; /* the thread has just exited */
    if (fgets(comm, sizeof(comm), f) && strcmp(comm, "mcp-pending-tmr\n") == 0) n++;
    fclose(f);
  }
  closedir(d);
  return n;
}

START_TEST(timer_thread_only_for_async_deadlines) {
  int base = thread_count();
  mcp_pending *p = mcp__pending_new();
  ck_assert_int_eq(thread_count(), base);
  /* Sync entries keep their own deadlines; async ones without a deadline
   * need no timer either. */
  mcp_pending_entry *e;
  int64_t id = add_sync(p, 5000, NULL, &e);
  done_log *d = done_log_new();
  int64_t a = add_async(p, d, 0, NULL);
  ck_assert_int_eq(thread_count(), base);
  ck_assert_int_eq(mcp__pending_complete(p, id, MCP_OK, NULL, 0, NULL), 0);
  char *res = NULL;
  size_t rlen = 0;
  ck_assert_int_eq(mcp__pending_wait(p, e, true, &res, &rlen, NULL), MCP_OK);
  /* The first async deadline starts it, and it enforces that deadline. */
  int64_t b = add_async(p, d, 20, NULL);
  ck_assert_int_eq(thread_count(), base + 1);
  ck_assert(wait_total(d, 1, 10000));
  ck_assert_int_eq(atomic_load(&d->status[b]), MCP_ETIMEDOUT);
  ck_assert_int_eq(atomic_load(&d->count[a]), 0);
  mcp__pending_free(p);
  ck_assert(wait_total(d, 2, 10000));
  ck_assert_int_eq(atomic_load(&d->status[a]), MCP_ECLOSED);
  ck_assert_int_eq(thread_count(), base);
  free(d);
}
END_TEST

static Suite *pending_suite(void) {
  Suite *s = suite_create("pending");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, sync_reply_from_other_thread);
  tcase_add_test(tc, sync_reply_before_wait);
  tcase_add_test(tc, sync_rpc_error_passes_details);
  tcase_add_test(tc, sync_timeout_then_late_reply);
  tcase_add_test(tc, sync_cancel_from_other_thread);
  tcase_add_test(tc, close_fails_everything);
  tcase_add_test(tc, async_paths_end_once);
  tcase_add_test(tc, async_race_exactly_once);
  tcase_add_test(tc, progress_extends_until_max_total);
  tcase_add_test(tc, progress_unknown_or_ended_is_dropped);
  tcase_add_test(tc, waiter_waits_for_callbacks_inside);
  tcase_add_test(tc, progress_before_reply_is_delivered);
  tcase_add_test(tc, cancel_token_refcount_and_listeners);
  tcase_add_test(tc, alloc_failure_add);
  tcase_add_test(tc, text_results_every_way);
  tcase_add_test(tc, sync_race_exactly_once);
  tcase_add_test(tc, timer_thread_only_for_async_deadlines);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(pending_suite()); }
