/* SPDX-License-Identifier: MIT */
/*
 * check_workers.c: the worker pool and its ordered lanes (lib/mcp_workers.c):
 * per-lane ordering under load, lanes in parallel, lane_free draining (from
 * outside and from the lane's own item), intake closed after free starts,
 * join on free (also from a worker), refcounting and allocation failure.
 * Every wait is on a condition variable with a deadline; nothing sleeps.
 */
#include "config.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "check_util.h"
#include "mcp_workers.h"

#define WAIT_MS 20000 /* generous: sanitizers and valgrind are slow */

/* ---- a flag with a condition variable and deadline waits -------------- */

typedef struct flag {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  long value; /* guarded by mu */
} flag;

static void flag_init(flag *f) {
  pthread_condattr_t a;
  pthread_condattr_init(&a);
  pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
  pthread_mutex_init(&f->mu, NULL);
  pthread_cond_init(&f->cv, &a);
  pthread_condattr_destroy(&a);
  f->value = 0;
}

static void flag_destroy(flag *f) {
  pthread_cond_destroy(&f->cv);
  pthread_mutex_destroy(&f->mu);
}

static void flag_add(flag *f, long n) {
  pthread_mutex_lock(&f->mu);
  f->value += n;
  pthread_cond_broadcast(&f->cv);
  pthread_mutex_unlock(&f->mu);
}

static long flag_get(flag *f) {
  pthread_mutex_lock(&f->mu);
  long v = f->value;
  pthread_mutex_unlock(&f->mu);
  return v;
}

/* Waits until value >= want or |ms| pass; returns true when reached. */
static bool flag_wait(flag *f, long want, long ms) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  ts.tv_sec += ms / 1000;
  ts.tv_nsec += (ms % 1000) * 1000000L;
  if (ts.tv_nsec >= 1000000000L) {
    ts.tv_sec++;
    ts.tv_nsec -= 1000000000L;
  }
  pthread_mutex_lock(&f->mu);
  int rc = 0;
  while (f->value < want && rc == 0) rc = pthread_cond_timedwait(&f->cv, &f->mu, &ts);
  bool ok = f->value >= want;
  pthread_mutex_unlock(&f->mu);
  return ok;
}

static void noop(void *arg) { (void)arg; }

static void count_item(void *arg) { flag_add(arg, 1); }

/* ---- ordering under load ---------------------------------------------- */

#define ORD_LANES 32
#define ORD_POSTERS 4

typedef struct ord_lane {
  mcp_lane *lane;
  long next;         /* only touched by this lane's items: the lane orders them */
  atomic_int inside; /* items of this lane running right now */
  atomic_long errors;
} ord_lane;

typedef struct ord_item {
  ord_lane *ol;
  long seq;
  flag *done;
} ord_item;

static void ord_run(void *arg) {
  ord_item *it = arg;
  ord_lane *ol = it->ol;
  if (atomic_fetch_add(&ol->inside, 1) != 0) atomic_fetch_add(&ol->errors, 1);
  if (ol->next != it->seq) atomic_fetch_add(&ol->errors, 1);
  ol->next = it->seq + 1;
  atomic_fetch_sub(&ol->inside, 1);
  flag *done = it->done;
  free(it);
  flag_add(done, 1);
}

typedef struct poster {
  ord_lane *lanes;
  int first; /* posts to lanes first, first + ORD_POSTERS, ... */
  long per_lane;
  flag *done;
  long failures;
} poster;

static void *poster_main(void *arg) {
  poster *p = arg;
  for (long s = 0; s < p->per_lane; s++) {
    for (int i = p->first; i < ORD_LANES; i += ORD_POSTERS) {
      ord_item *it = malloc(sizeof(*it));
      it->ol = &p->lanes[i];
      it->seq = s;
      it->done = p->done;
      if (mcp__lane_post(p->lanes[i].lane, ord_run, NULL, it) != MCP_OK) {
        free(it);
        p->failures++;
      }
    }
  }
  return NULL;
}

START_TEST(test_ordering_under_load) {
  long per_lane = test_under_valgrind() ? 200 : 2000;
  mcp_workers *w = mcp__workers_new(4);
  ck_assert_ptr_nonnull(w);
  static ord_lane lanes[ORD_LANES];
  memset(lanes, 0, sizeof(lanes));
  for (int i = 0; i < ORD_LANES; i++) {
    lanes[i].lane = mcp__lane_new(w);
    ck_assert_ptr_nonnull(lanes[i].lane);
  }
  flag done;
  flag_init(&done);
  pthread_t th[ORD_POSTERS];
  poster ps[ORD_POSTERS];
  for (int t = 0; t < ORD_POSTERS; t++) {
    ps[t] = (poster){lanes, t, per_lane, &done, 0};
    ck_assert_int_eq(pthread_create(&th[t], NULL, poster_main, &ps[t]), 0);
  }
  for (int t = 0; t < ORD_POSTERS; t++) {
    pthread_join(th[t], NULL);
    ck_assert_int_eq(ps[t].failures, 0);
  }
  ck_assert(flag_wait(&done, per_lane * ORD_LANES, WAIT_MS * 3));
  for (int i = 0; i < ORD_LANES; i++) {
    mcp__lane_free(lanes[i].lane);
    ck_assert_int_eq(atomic_load(&lanes[i].errors), 0);
    ck_assert_int_eq(lanes[i].next, per_lane);
  }
  mcp__workers_free(w);
  flag_destroy(&done);
}
END_TEST

/* ---- two lanes run at the same time ------------------------------------ */

typedef struct rendezvous {
  flag a_started, b_started;
  atomic_int ok;
} rendezvous;

static void rv_a(void *arg) {
  rendezvous *rv = arg;
  flag_add(&rv->a_started, 1);
  if (flag_wait(&rv->b_started, 1, WAIT_MS)) atomic_fetch_add(&rv->ok, 1);
}

static void rv_b(void *arg) {
  rendezvous *rv = arg;
  flag_add(&rv->b_started, 1);
  if (flag_wait(&rv->a_started, 1, WAIT_MS)) atomic_fetch_add(&rv->ok, 1);
}

START_TEST(test_lanes_run_in_parallel) {
  mcp_workers *w = mcp__workers_new(2);
  ck_assert_ptr_nonnull(w);
  mcp_lane *la = mcp__lane_new(w), *lb = mcp__lane_new(w);
  ck_assert_ptr_nonnull(la);
  ck_assert_ptr_nonnull(lb);
  rendezvous rv;
  flag_init(&rv.a_started);
  flag_init(&rv.b_started);
  atomic_init(&rv.ok, 0);
  ck_assert_int_eq(mcp__lane_post(la, rv_a, NULL, &rv), MCP_OK);
  ck_assert_int_eq(mcp__lane_post(lb, rv_b, NULL, &rv), MCP_OK);
  mcp__lane_free(la); /* waits for rv_a */
  mcp__lane_free(lb);
  ck_assert_int_eq(atomic_load(&rv.ok), 2);
  mcp__workers_free(w);
  flag_destroy(&rv.a_started);
  flag_destroy(&rv.b_started);
}
END_TEST

/* A lane's items never overlap even when other workers are idle. */
typedef struct serial {
  atomic_int inside;
  atomic_int overlaps;
  flag done;
} serial;

static void serial_item(void *arg) {
  serial *s = arg;
  if (atomic_fetch_add(&s->inside, 1) != 0) atomic_fetch_add(&s->overlaps, 1);
  for (int i = 0; i < 1000; i++) sched_yield();
  atomic_fetch_sub(&s->inside, 1);
  flag_add(&s->done, 1);
}

START_TEST(test_lane_items_never_overlap) {
  mcp_workers *w = mcp__workers_new(4);
  mcp_lane *l = mcp__lane_new(w);
  serial s;
  atomic_init(&s.inside, 0);
  atomic_init(&s.overlaps, 0);
  flag_init(&s.done);
  int n = test_under_valgrind() ? 10 : 50;
  for (int i = 0; i < n; i++) ck_assert_int_eq(mcp__lane_post(l, serial_item, NULL, &s), MCP_OK);
  ck_assert(flag_wait(&s.done, n, WAIT_MS));
  ck_assert_int_eq(atomic_load(&s.overlaps), 0);
  mcp__lane_free(l);
  mcp__workers_free(w);
  flag_destroy(&s.done);
}
END_TEST

/* ---- lane_free waits for queued items; later posts are refused --------- */

typedef struct gate_ctx {
  flag entered; /* the blocking item started */
  flag open;    /* the test lets it finish */
  flag ran;     /* items that ran */
  flag freed;   /* lane_free returned */
  long ran_when_freed;
  mcp_lane *lane;
} gate_ctx;

static void gate_item(void *arg) {
  gate_ctx *g = arg;
  flag_add(&g->entered, 1);
  flag_wait(&g->open, 1, WAIT_MS);
  flag_add(&g->ran, 1);
}

static void ran_item(void *arg) {
  gate_ctx *g = arg;
  flag_add(&g->ran, 1);
}

static void *freer_main(void *arg) {
  gate_ctx *g = arg;
  mcp__lane_free(g->lane);
  g->ran_when_freed = flag_get(&g->ran);
  flag_add(&g->freed, 1);
  return NULL;
}

static void gate_init(gate_ctx *g) {
  memset(g, 0, sizeof(*g));
  flag_init(&g->entered);
  flag_init(&g->open);
  flag_init(&g->ran);
  flag_init(&g->freed);
}

static void gate_destroy(gate_ctx *g) {
  flag_destroy(&g->entered);
  flag_destroy(&g->open);
  flag_destroy(&g->ran);
  flag_destroy(&g->freed);
}

START_TEST(test_lane_free_waits_for_queued_items) {
  mcp_workers *w = mcp__workers_new(2);
  gate_ctx g;
  gate_init(&g);
  g.lane = mcp__lane_new(w);
  ck_assert_int_eq(mcp__lane_post(g.lane, gate_item, NULL, &g), MCP_OK);
  for (int i = 0; i < 10; i++) ck_assert_int_eq(mcp__lane_post(g.lane, ran_item, NULL, &g), MCP_OK);
  ck_assert(flag_wait(&g.entered, 1, WAIT_MS));

  pthread_t th;
  ck_assert_int_eq(pthread_create(&th, NULL, freer_main, &g), 0);
  /* Post until the freer has stopped intake; each accepted post must still
   * run before lane_free returns. */
  long accepted = 0;
  int rc;
  while ((rc = mcp__lane_post(g.lane, ran_item, NULL, &g)) == MCP_OK) {
    accepted++;
    sched_yield();
  }
  ck_assert_int_eq(rc, MCP_ECLOSED);
  /* Intake is closed, but the first item still holds the lane. */
  ck_assert_int_eq(flag_get(&g.freed), 0);
  ck_assert_int_eq(flag_get(&g.ran), 0);
  flag_add(&g.open, 1);
  pthread_join(th, NULL);
  ck_assert_int_eq(flag_get(&g.freed), 1);
  ck_assert_int_eq(g.ran_when_freed, 11 + accepted);
  mcp__workers_free(w);
  gate_destroy(&g);
}
END_TEST

START_TEST(test_lane_free_idle_and_empty) {
  mcp_workers *w = mcp__workers_new(1);
  mcp_lane *l = mcp__lane_new(w);
  mcp__lane_free(l); /* never used */
  l = mcp__lane_new(w);
  flag f;
  flag_init(&f);
  ck_assert_int_eq(mcp__lane_post(l, count_item, NULL, &f), MCP_OK);
  ck_assert(flag_wait(&f, 1, WAIT_MS));
  mcp__lane_free(l); /* used, idle again */
  mcp__lane_free(NULL);
  ck_assert_int_eq(mcp__lane_post(NULL, noop, NULL, NULL), MCP_EINVAL);
  mcp__workers_free(w);
  mcp__workers_free(NULL);
  flag_destroy(&f);
}
END_TEST

/* ---- lane_free from the lane's own item -------------------------------- */

typedef struct self_ctx {
  mcp_lane *lane;
  mcp_lane *other;
  flag go;   /* the test has queued the tail items */
  flag open; /* the tail items may finish */
  flag ran;
  atomic_int current_in_item;
  atomic_int other_current;
  atomic_int post_after_free;
} self_ctx;

static void self_tail_item(void *arg) {
  self_ctx *s = arg;
  flag_wait(&s->open, 1, WAIT_MS);
  flag_add(&s->ran, 1);
}

static void self_free_item(void *arg) {
  self_ctx *s = arg;
  flag_wait(&s->go, 1, WAIT_MS);
  atomic_store(&s->current_in_item, mcp__lane_is_current(s->lane));
  atomic_store(&s->other_current, mcp__lane_is_current(s->other));
  mcp__lane_free(s->lane); /* must not wait for itself */
  atomic_store(&s->post_after_free, mcp__lane_post(s->lane, self_tail_item, NULL, s));
  flag_add(&s->ran, 1);
}

START_TEST(test_lane_free_from_own_item) {
  mcp_workers *w = mcp__workers_new(2);
  self_ctx s;
  memset(&s, 0, sizeof(s));
  flag_init(&s.go);
  flag_init(&s.open);
  flag_init(&s.ran);
  s.lane = mcp__lane_new(w);
  s.other = mcp__lane_new(w);
  ck_assert(!mcp__lane_is_current(s.lane));
  ck_assert(!mcp__lane_is_current(NULL));
  ck_assert_int_eq(mcp__lane_post(s.lane, self_free_item, NULL, &s), MCP_OK);
  for (int i = 0; i < 3; i++)
    ck_assert_int_eq(mcp__lane_post(s.lane, self_tail_item, NULL, &s), MCP_OK);
  flag_add(&s.go, 1);
  ck_assert(flag_wait(&s.ran, 1, WAIT_MS));
  ck_assert_int_eq(atomic_load(&s.current_in_item), 1);
  ck_assert_int_eq(atomic_load(&s.other_current), 0);
  ck_assert_int_eq(atomic_load(&s.post_after_free), MCP_ECLOSED);
  /* The items queued before the free still run, after the gate opens. */
  flag_add(&s.open, 1);
  ck_assert(flag_wait(&s.ran, 4, WAIT_MS));
  mcp__lane_free(s.other);
  /* The worker releases s.lane after its last item; workers_free joins that
   * worker, and the leak checkers confirm the lane was released. */
  mcp__workers_free(w);
  ck_assert_int_eq(flag_get(&s.ran), 4);
  flag_destroy(&s.go);
  flag_destroy(&s.open);
  flag_destroy(&s.ran);
}
END_TEST

/* ---- workers_free waits for draining lanes and joins ------------------- */

/* Threads in this process, from /proc (for observing joins and exits). */
/* Threads of this process.  pthread_join() returns when the thread has
 * ended, but the kernel may list the task in /proc a moment longer (seen in
 * CI under load), so counts after a join are waited for (WAIT_UNTIL). */
static long thread_count(void) {
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long n = -1;
  while (fgets(line, sizeof(line), f)) {
    if (sscanf(line, "Threads: %ld", &n) == 1) break;
  }
  fclose(f);
  return n;
}

static void *nothing_main(void *arg) { return arg; }

/* thread_count() before the code under test starts threads.  A sanitizer
 * runtime may start a helper thread of its own with the first
 * pthread_create, so start and join one thread first.  pthread_join()
 * returns when the kernel clears the thread's tid, before its task leaves
 * /proc: wait for the count to fall back (bounded: with a sanitizer's
 * thread it stays one higher), or the baseline counts a thread that is
 * gone a moment later and "back to the baseline" never comes. */
static long thread_baseline(void) {
  long before = thread_count();
  pthread_t th;
  if (pthread_create(&th, NULL, nothing_main, NULL) == 0) pthread_join(th, NULL);
  (void)WAIT_UNTIL(thread_count() <= before, 2000);
  return thread_count();
}

typedef struct pool_freer {
  mcp_workers *w;
  self_ctx *s;
  long ran_when_freed;
  flag freed;
} pool_freer;

static void *pool_freer_main(void *arg) {
  pool_freer *pf = arg;
  mcp__workers_free(pf->w);
  pf->ran_when_freed = flag_get(&pf->s->ran);
  flag_add(&pf->freed, 1);
  return NULL;
}

START_TEST(test_workers_free_joins) {
  long base = thread_baseline();
  ck_assert_int_gt(base, 0);
  mcp_workers *w = mcp__workers_new(3);
  ck_assert_int_eq(thread_count(), base + 3);
  self_ctx s;
  memset(&s, 0, sizeof(s));
  flag_init(&s.go);
  flag_init(&s.open);
  flag_init(&s.ran);
  s.lane = mcp__lane_new(w);
  ck_assert_int_eq(mcp__lane_post(s.lane, self_free_item, NULL, &s), MCP_OK);
  for (int i = 0; i < 5; i++)
    ck_assert_int_eq(mcp__lane_post(s.lane, self_tail_item, NULL, &s), MCP_OK);
  flag_add(&s.go, 1);
  ck_assert(flag_wait(&s.ran, 1, WAIT_MS));
  /* s.lane is released from its owner's point of view but still has five
   * items blocked behind the gate: workers_free must run them all first. */
  pool_freer pf = {.w = w, .s = &s};
  flag_init(&pf.freed);
  pthread_t th;
  ck_assert_int_eq(pthread_create(&th, NULL, pool_freer_main, &pf), 0);
  ck_assert_int_eq(flag_get(&pf.freed), 0);
  flag_add(&s.open, 1);
  pthread_join(th, NULL);
  ck_assert_int_eq(pf.ran_when_freed, 6);
  /* Every worker was joined before workers_free returned. */
  ck_assert(WAIT_UNTIL(thread_count() == base, WAIT_MS));
  flag_destroy(&pf.freed);
  flag_destroy(&s.go);
  flag_destroy(&s.open);
  flag_destroy(&s.ran);
}
END_TEST

/* The last reference dropped on a worker: that worker joins the others and
 * releases the pool on its way out instead of joining itself. */
typedef struct last_ref_ctx {
  mcp_workers *w;
  mcp_lane *lane;
  flag done;
} last_ref_ctx;

static void last_ref_item(void *arg) {
  last_ref_ctx *c = arg;
  mcp__lane_free(c->lane);
  mcp__workers_unref(c->w);
  flag_add(&c->done, 1);
}

START_TEST(test_last_unref_from_worker) {
  long base = thread_baseline();
  last_ref_ctx c;
  flag_init(&c.done);
  c.w = mcp__workers_new(3);
  c.lane = mcp__lane_new(c.w);
  ck_assert_int_eq(mcp__lane_post(c.lane, last_ref_item, NULL, &c), MCP_OK);
  ck_assert(flag_wait(&c.done, 1, WAIT_MS));
  /* Only the exit of the reaper thread itself is left to observe. */
  ck_assert(WAIT_UNTIL(thread_count() == base, WAIT_MS));
  flag_destroy(&c.done);
}
END_TEST

/* ---- refcount ---------------------------------------------------------- */

START_TEST(test_refcount) {
  long base = thread_baseline();
  mcp_workers *w = mcp__workers_new(2);
  ck_assert_ptr_eq(mcp__workers_ref(w), w);
  ck_assert_ptr_eq(mcp__workers_ref(w), w);
  ck_assert_ptr_null(mcp__workers_ref(NULL));
  mcp__workers_unref(NULL);
  mcp__workers_unref(w);
  mcp__workers_unref(w);
  /* Still alive and working with one reference left. */
  ck_assert_int_eq(thread_count(), base + 2);
  mcp_lane *l = mcp__lane_new(w);
  flag f;
  flag_init(&f);
  ck_assert_int_eq(mcp__lane_post(l, count_item, NULL, &f), MCP_OK);
  ck_assert(flag_wait(&f, 1, WAIT_MS));
  mcp__lane_free(l);
  mcp__workers_unref(w); /* the last one frees and joins */
  ck_assert(WAIT_UNTIL(thread_count() == base, WAIT_MS));
  flag_destroy(&f);
}
END_TEST

/* ---- allocation failure ------------------------------------------------ */

typedef struct alloc_ctx {
  atomic_int runs;
  atomic_int drops;
  flag done;
} alloc_ctx;

static void alloc_run(void *arg) {
  alloc_ctx *a = arg;
  atomic_fetch_add(&a->runs, 1);
  flag_add(&a->done, 1);
}

static void alloc_drop(void *arg) {
  alloc_ctx *a = arg;
  atomic_fetch_add(&a->drops, 1);
}

START_TEST(test_alloc_failure) {
  long base = thread_baseline();
  /* Fail the Nth allocation for every N until the whole sequence passes;
   * each partial failure must clean up (checked by ASan and valgrind). */
  bool passed = false;
  for (long n = 0; n < 64 && !passed; n++) {
    alloc_ctx a;
    atomic_init(&a.runs, 0);
    atomic_init(&a.drops, 0);
    flag_init(&a.done);
    mcp__alloc_fail_after(n);
    mcp_workers *w = mcp__workers_new(2);
    mcp_lane *l = w ? mcp__lane_new(w) : NULL;
    int rc = l ? mcp__lane_post(l, alloc_run, alloc_drop, &a) : MCP_ENOMEM;
    mcp__alloc_fail_after(-1);
    if (rc == MCP_OK) {
      ck_assert(flag_wait(&a.done, 1, WAIT_MS));
      passed = true;
    } else {
      ck_assert_int_eq(rc, MCP_ENOMEM);
    }
    mcp__lane_free(l);
    mcp__workers_free(w);
    ck_assert_int_eq(atomic_load(&a.runs), rc == MCP_OK ? 1 : 0);
    ck_assert_int_eq(atomic_load(&a.drops), 0);
    ck_assert(WAIT_UNTIL(thread_count() == base, WAIT_MS));
    flag_destroy(&a.done);
  }
  ck_assert(passed);

  /* A post that fails leaves the lane usable, and queues nothing. */
  alloc_ctx a;
  atomic_init(&a.runs, 0);
  atomic_init(&a.drops, 0);
  flag_init(&a.done);
  mcp_workers *w = mcp__workers_new(1);
  mcp_lane *l = mcp__lane_new(w);
  mcp__alloc_fail_after(0);
  ck_assert_int_eq(mcp__lane_post(l, alloc_run, alloc_drop, &a), MCP_ENOMEM);
  mcp__alloc_fail_after(-1);
  ck_assert_int_eq(mcp__lane_post(l, alloc_run, alloc_drop, &a), MCP_OK);
  mcp__lane_free(l);
  ck_assert_int_eq(atomic_load(&a.runs), 1);
  ck_assert_int_eq(atomic_load(&a.drops), 0);
  mcp__workers_free(w);
  flag_destroy(&a.done);
}
END_TEST

START_TEST(test_bad_arguments) {
  ck_assert_ptr_null(mcp__workers_new(0));
  ck_assert_ptr_null(mcp__lane_new(NULL));
  mcp_workers *w = mcp__workers_new(1);
  mcp_lane *l = mcp__lane_new(w);
  ck_assert_int_eq(mcp__lane_post(l, NULL, noop, NULL), MCP_EINVAL);
  mcp__lane_free(l);
  mcp__workers_free(w);
}
END_TEST

Suite *workers_suite(void);
Suite *workers_suite(void) {
  Suite *s = suite_create("workers");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_ordering_under_load);
  tcase_add_test(tc, test_lanes_run_in_parallel);
  tcase_add_test(tc, test_lane_items_never_overlap);
  tcase_add_test(tc, test_lane_free_waits_for_queued_items);
  tcase_add_test(tc, test_lane_free_idle_and_empty);
  tcase_add_test(tc, test_lane_free_from_own_item);
  tcase_add_test(tc, test_workers_free_joins);
  tcase_add_test(tc, test_last_unref_from_worker);
  tcase_add_test(tc, test_refcount);
  tcase_add_test(tc, test_alloc_failure);
  tcase_add_test(tc, test_bad_arguments);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(workers_suite()); }
