/* SPDX-License-Identifier: MIT */
/*
 * check_inbound.c: a hostile server on stdio against the client's inbound
 * and outbound bounds (tests/mcp-fault-server.c --flood-*, --stop-reading,
 * --oversize-response): floods of pings, notifications and requests,
 * oversized responses, a cancellation after a timeout on a full pipe, and
 * mcp_client_free() while other threads are blocked in calls.
 */
#include "config.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/wait.h>

#include "check_server.h"
#include "check_util.h"
#include "mcpconn.h"

/* Flood sizes: a twentieth under valgrind, a tenth under ASan or TSan
 * (which run the reader 5-15x slower); the old failure took seconds per
 * message, so a smaller flood still shows it. */
static int scale(int n) {
  if (test_under_valgrind()) return n / 20 > 0 ? n / 20 : 1;
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return n / 10 > 0 ? n / 10 : 1;
#else
  return n;
#endif
}

/* Connects to the fault server with |o| (NULL: defaults) and flags. */
static mcp_client *connect_fault(mcp_client_options *o_in, ...) {
  const char *argv[16] = {test_env_path("MCP_FAULT_SERVER")};
  int n = 1;
  va_list ap;
  va_start(ap, o_in);
  const char *a;
  while ((a = va_arg(ap, const char *)) && n < 15) argv[n++] = a;
  va_end(ap);
  argv[n] = NULL;
  mcp_client_options *o = o_in ? o_in : mcp_client_options_new();
  ck_assert_int_eq(mcp_client_options_set_stdio(o, argv), MCP_OK);
  mcp_client *c = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_client_connect(o, &c, &err);
  ck_assert_msg(st == MCP_OK, "connect: %d %s", st, err.message ? err.message : "");
  mcp_error_clear(&err);
  if (!o_in) mcp_client_options_free(o);
  return c;
}

static mcp_call_options *timeout_opts(int64_t ms) {
  mcp_call_options *o = mcp_call_options_new();
  mcp_call_options_set_timeout_ms(o, ms);
  return o;
}

/* ---- a gate the host callbacks wait on, and what they saw --------------- */

typedef struct gate {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool open;       /* callbacks may return */
  bool entered;    /* the first callback is running */
  int calls;       /* callbacks run (notifications or requests) */
  bool flood_done; /* "flood done" notification seen */
  bool async_done; /* the async marker call completed */
  char log[512];   /* the last warning logged */
} gate;

static void gate_init(gate *g) {
  memset(g, 0, sizeof(*g));
  pthread_mutex_init(&g->mu, NULL);
  pthread_cond_init(&g->cv, NULL);
}

static void gate_destroy(gate *g) {
  pthread_cond_destroy(&g->cv);
  pthread_mutex_destroy(&g->mu);
}

/* Waits (at most |ms|) until *flag is true; returns it. */
static bool gate_wait(gate *g, bool *flag, int ms) {
  long long end = test_now_ms() + ms;
  pthread_mutex_lock(&g->mu);
  while (!*flag) {
    long long left = end - test_now_ms();
    if (left <= 0) break;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += (time_t)(left / 1000);
    ts.tv_nsec += (long)(left % 1000) * 1000000;
    if (ts.tv_nsec >= 1000000000) {
      ts.tv_sec++;
      ts.tv_nsec -= 1000000000;
    }
    pthread_cond_timedwait(&g->cv, &g->mu, &ts);
  }
  bool v = *flag;
  pthread_mutex_unlock(&g->mu);
  return v;
}

static void gate_set(gate *g, bool *flag) {
  pthread_mutex_lock(&g->mu);
  *flag = true;
  pthread_cond_broadcast(&g->cv);
  pthread_mutex_unlock(&g->mu);
}

/* A callback: counts itself, and the first one holds the lane until the
 * gate opens. */
static void gate_pass(gate *g) {
  pthread_mutex_lock(&g->mu);
  g->calls++;
  if (!g->entered) {
    g->entered = true;
    pthread_cond_broadcast(&g->cv);
  }
  while (!g->open) pthread_cond_wait(&g->cv, &g->mu);
  pthread_mutex_unlock(&g->mu);
}

static void on_note(void *user, const char *method, const char *params) {
  gate *g = user;
  if (strcmp(method, "notifications/message") != 0) return;
  if (strstr(params, "flood done")) gate_set(g, &g->flood_done);
  gate_pass(g);
}

static void on_log(void *user, mcp_log_level level, const char *msg) {
  gate *g = user;
  if (level < MCP_LOG_WARN) return;
  pthread_mutex_lock(&g->mu);
  snprintf(g->log, sizeof(g->log), "%s", msg);
  pthread_mutex_unlock(&g->mu);
}

static mcp_status on_roots(void *user, const char *method, const char *params, char **result,
                           mcp_error *err) {
  (void)method;
  (void)params;
  (void)err;
  gate_pass(user);
  *result = strdup("{\"roots\":[]}");
  return MCP_OK;
}

static void on_async(void *user, mcp_status st, const char *result, const mcp_error *err) {
  (void)st;
  (void)result;
  (void)err;
  gate *g = user;
  gate_set(g, &g->async_done);
}

/* Returns once every callback queued before now has run: an async call's
 * completion runs on the same lane, after them. */
static void drain_lane(mcp_client *c, gate *g) {
  pthread_mutex_lock(&g->mu);
  g->async_done = false;
  pthread_mutex_unlock(&g->mu);
  ck_assert_int_eq(mcp_client_request_async(c, "ping", NULL, NULL, on_async, g, NULL), MCP_OK);
  ck_assert(gate_wait(g, &g->async_done, 30000));
}

static char *call_text(mcp_client *c, const char *tool, const char *args) {
  char *res = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_client_call_tool(c, tool, args, NULL, &res, &err);
  ck_assert_msg(st == MCP_OK, "%s: %d %s", tool, st, err.message ? err.message : "");
  mcp_error_clear(&err);
  return res;
}

/* ---- item: inbound floods ------------------------------------------------ */

/*
 * A server that sends a flood of pings and stops reading: the answers can
 * not all be written.  They must neither hold up the host's callbacks (the
 * notification after the flood arrives promptly) nor queue without bound.
 * Before the fix every answer waited up to 5 s on the full pipe on the
 * lane, so the notification after the flood came hours later.
 */
START_TEST(flood_pings_server_stops_reading) {
  gate g;
  gate_init(&g);
  g.open = true;
  int n = scale(200000);
  char nbuf[32];
  snprintf(nbuf, sizeof(nbuf), "%d", n);
  mcp_client_options *o = mcp_client_options_new();
  mcp_client_options_set_notification_handler(o, on_note, &g);
  mcp_client *c = connect_fault(o, "--flood-pings", nbuf, "--stop-reading", NULL);
  ck_assert_msg(gate_wait(&g, &g.flood_done, 60000), "the notification after the flood never came");
  mcp_client_stats st;
  mcp_client_get_stats(c, &st);
  ck_assert_uint_eq(st.server_requests, (uint64_t)n);
  /* The pipe takes 64 KiB and the queue 1024 answers: the rest is dropped. */
  if (n > 5000) ck_assert_uint_gt(st.outbound_dropped, 0);
  long long t0 = test_now_ms();
  mcp_client_free(c);
  ck_assert_int_lt(test_now_ms() - t0, 10000);
  mcp_client_options_free(o);
  gate_destroy(&g);
}
END_TEST

/*
 * A host callback that is slow while the server floods notifications: at
 * most the bound waits; the rest is dropped and counted.
 */
START_TEST(flood_notifications_bounded) {
  gate g;
  gate_init(&g);
  mcp_client_options *o = mcp_client_options_new();
  mcp_client_options_set_notification_handler(o, on_note, &g);
  mcp_client_options_set_log(o, on_log, &g);
  mcp_client *c = connect_fault(o, "--flood-notifications", "5000", NULL);
  ck_assert(gate_wait(&g, &g.entered, 10000));
  /* The answer comes after the flood on the same stream: all of it has
   * been dispatched when the call returns. */
  mcp_free(call_text(c, "echo", "{\"text\":\"after\"}"));
  pthread_mutex_lock(&g.mu);
  g.open = true;
  pthread_cond_broadcast(&g.cv);
  pthread_mutex_unlock(&g.mu);
  drain_lane(c, &g);
  /* 5001 notifications; the default bound is 1024 (the running one
   * included). */
  ck_assert_int_eq(g.calls, 1024);
  ck_assert(!g.flood_done);
  mcp_client_stats st;
  mcp_client_get_stats(c, &st);
  ck_assert_uint_eq(st.inbound_dropped, 5001 - 1024);
  pthread_mutex_lock(&g.mu);
  ck_assert_msg(strstr(g.log, "fault-server") && strstr(g.log, "dropping"), "log: %s", g.log);
  pthread_mutex_unlock(&g.mu);
  mcp_client_free(c);
  mcp_client_options_free(o);
  gate_destroy(&g);
}
END_TEST

/* Requests for a slow host handler beyond the bound are answered -32000 at
 * once, and the bound can be set. */
START_TEST(flood_requests_answered_busy) {
  gate g;
  gate_init(&g);
  mcp_client_options *o = mcp_client_options_new();
  ck_assert_int_eq(mcp_client_options_set_request_handler(o, "roots/list", on_roots, &g), MCP_OK);
  mcp_client_options_set_max_queued_messages(o, 16);
  mcp_client *c = connect_fault(o, "--flood-requests", "500", NULL);
  ck_assert(gate_wait(&g, &g.entered, 10000));
  mcp_free(call_text(c, "echo", "{\"text\":\"after\"}"));
  pthread_mutex_lock(&g.mu);
  g.open = true;
  pthread_cond_broadcast(&g.cv);
  pthread_mutex_unlock(&g.mu);
  drain_lane(c, &g);
  ck_assert_int_eq(g.calls, 16);
  /* Every answer was queued before this request, and goes out first. */
  char *res = call_text(c, "flood_stats", NULL);
  ck_assert_msg(strstr(res, "results=16 errors=484 busy=484"), "stats: %s", res);
  mcp_free(res);
  mcp_client_free(c);
  mcp_client_options_free(o);
  gate_destroy(&g);
}
END_TEST

/* ---- item: cancellation after a timeout ---------------------------------- */

/* Fills the server's stdin (it stopped reading) with notifications, each
 * written whole or not at all, until one times out; then with smaller ones
 * (a pipe takes a small write into the room a large one could not use),
 * down to the smallest, so no message of ours fits any more. */
static void fill_pipe(mcp_client *c) {
  static const int pads[] = {1000, 100, 0};
  for (size_t p = 0; p < sizeof(pads) / sizeof(pads[0]); p++) {
    char params[1100];
    if (pads[p]) snprintf(params, sizeof(params), "{\"pad\":\"%0*d\"}", pads[p], 0);
    bool full = false;
    for (int i = 0; i < 100000 && !full; i++) {
      mcp_error err = MCP_ERROR_INIT;
      mcp_status st = mcp_client_notify(c, "x/f", pads[p] ? params : NULL, &err);
      mcp_error_clear(&err);
      full = st == MCP_ETIMEDOUT;
      if (!full) ck_assert_int_eq(st, MCP_OK);
    }
    ck_assert_msg(full, "the pipe never filled");
  }
}

/*
 * A call on a full pipe times out at its deadline; the notifications/
 * cancelled it owes the server must not hold the caller (before the fix it
 * waited 5 s more for the pipe).
 */
START_TEST(cancel_after_timeout_returns_at_deadline) {
  mcp_client_options *o = mcp_client_options_new();
  mcp_client_options_set_timeout_ms(o, 200); /* for fill_pipe's notifications */
  mcp_client *c = connect_fault(o, "--stop-reading", NULL);
  fill_pipe(c);
  mcp_call_options *co = timeout_opts(1000);
  char *res = NULL;
  long long t0 = test_now_ms();
  mcp_status st = mcp_client_call_tool(c, "echo", "{\"text\":\"x\"}", co, &res, NULL);
  long long took = test_now_ms() - t0;
  ck_assert_int_eq(st, MCP_ETIMEDOUT);
  ck_assert_msg(took < 1000 + 1000, "returned %lld ms after a 1000 ms deadline", took);
  /* A call whose request went out and then timed out: same bound. */
  mcp_call_options_free(co);
  mcp_client_free(c);
  mcp_client_options_free(o);
}
END_TEST

/*
 * A server that floods pings while the caller waits for its answer: the
 * caller, reading the server's messages itself (the transport's leader),
 * must still return at its deadline.  Before the fix the leader read on
 * as long as there was something to read, and the soak saw a 3000 ms call
 * return after 7041 ms; here the call waited out the whole flood and then
 * succeeded.
 */
START_TEST(flood_during_call_returns_at_deadline) {
  char nbuf[32];
  snprintf(nbuf, sizeof(nbuf), "%d", scale(3000000));
  mcp_client *c = connect_fault(NULL, "--flood-before-answer", nbuf, NULL);
  /* A ping first (no flood): the next request's caller then leads. */
  ck_assert_int_eq(mcp_client_ping(c, NULL, NULL), MCP_OK);
  mcp_call_options *co = timeout_opts(300);
  char *res = NULL;
  mcp_error err = MCP_ERROR_INIT;
  long long t0 = test_now_ms();
  mcp_status st = mcp_client_call_tool(c, "echo", "{\"text\":\"x\"}", co, &res, &err);
  long long took = test_now_ms() - t0;
  ck_assert_msg(st == MCP_ETIMEDOUT, "got %d after %lld ms: %s", st, took,
                err.message ? err.message : "");
  ck_assert_msg(took < 300 + 1000, "returned %lld ms after a 300 ms deadline", took);
  mcp_free(res);
  mcp_error_clear(&err);
  mcp_client_stats stats;
  mcp_client_get_stats(c, &stats);
  ck_assert_uint_gt(stats.server_requests, 0); /* the flood was being read */
  mcp_call_options_free(co);
  mcp_client_free(c);
}
END_TEST

/* ---- item: oversized responses ------------------------------------------- */

/* A response over the limit fails its request at once with MCP_ETOOBIG
 * (before the fix the call waited out its timeout and said "timed out"). */
START_TEST(oversize_response_fails_its_call) {
  mcp_client_options *o = mcp_client_options_new();
  mcp_client_options_set_max_message_bytes(o, 65536);
  mcp_client *c = connect_fault(o, "--oversize-response", "200000", NULL);
  mcp_call_options *co = timeout_opts(20000);
  char *res = NULL;
  mcp_error err = MCP_ERROR_INIT;
  long long t0 = test_now_ms();
  mcp_status st = mcp_client_call_tool(c, "echo", "{\"text\":\"x\"}", co, &res, &err);
  ck_assert_msg(st == MCP_ETOOBIG, "got %d: %s", st, err.message ? err.message : "");
  ck_assert_int_lt(test_now_ms() - t0, 10000);
  ck_assert_msg(strstr(err.message, "exceeds the limit of 65536 bytes") &&
                    strstr(err.message, "fault-server"),
                "message: %s", err.message);
  mcp_error_clear(&err);
  /* The stream stays in step: the next request is answered. */
  ck_assert_int_eq(mcp_client_ping(c, NULL, NULL), MCP_OK);
  mcp_client_stats stats;
  mcp_client_get_stats(c, &stats);
  ck_assert_uint_eq(stats.oversize_messages, 1);
  mcp_call_options_free(co);
  mcp_client_free(c);
  mcp_client_options_free(o);
}
END_TEST

/* With the id after the large result it cannot be known: nothing is
 * guessed, a warning names the server and the size, the call times out. */
START_TEST(oversize_response_id_unknown_warns) {
  gate g;
  gate_init(&g);
  mcp_client_options *o = mcp_client_options_new();
  mcp_client_options_set_max_message_bytes(o, 65536);
  mcp_client_options_set_log(o, on_log, &g);
  mcp_client *c = connect_fault(o, "--oversize-response", "200000", "--oversize-id-last", NULL);
  mcp_call_options *co = timeout_opts(1500);
  char *res = NULL;
  ck_assert_int_eq(mcp_client_call_tool(c, "echo", "{\"text\":\"x\"}", co, &res, NULL),
                   MCP_ETIMEDOUT);
  drain_lane(c, &g);
  pthread_mutex_lock(&g.mu);
  ck_assert_msg(strstr(g.log, "fault-server") && strstr(g.log, "exceeds the limit of 65536") &&
                    strstr(g.log, "no request was failed"),
                "log: %s", g.log);
  pthread_mutex_unlock(&g.mu);
  mcp_call_options_free(co);
  mcp_client_free(c);
  mcp_client_options_free(o);
  gate_destroy(&g);
}
END_TEST

/* On Streamable HTTP the response stream of a POST belongs to its request:
 * an event over the limit fails that request with MCP_ETOOBIG. */
START_TEST(oversize_sse_event_fails_its_call) {
  const char *argv[] = {test_env_path("MCP_H2_TEST_SERVER"), "--sse-every", "1", NULL};
  test_server srv = test_server_spawn(argv, 60000);
  char url[64];
  snprintf(url, sizeof(url), "http://127.0.0.1:%d/mcp", srv.port);
  mcp_client_options *o = mcp_client_options_new();
  ck_assert_int_eq(mcp_client_options_set_http(o, url, MCP_HTTP_TRANSPORT_STREAMABLE), MCP_OK);
  mcp_client_options_set_http_version(o, MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
  mcp_client_options_set_http_listener(o, false);
  mcp_client_options_set_max_message_bytes(o, 65536);
  mcp_client *c = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp_client_connect(o, &c, &err), MCP_OK);
  /* echo answers with the text: an event of about 100 KB. */
  size_t n = 100000;
  char *args = malloc(n + 32);
  ck_assert_ptr_nonnull(args);
  strcpy(args, "{\"text\":\"");
  memset(args + 9, 'y', n);
  strcpy(args + 9 + n, "\"}");
  mcp_call_options *co = timeout_opts(20000);
  char *res = NULL;
  long long t0 = test_now_ms();
  mcp_status st = mcp_client_call_tool(c, "echo", args, co, &res, &err);
  ck_assert_msg(st == MCP_ETOOBIG, "got %d: %s", st, err.message ? err.message : "");
  ck_assert_int_lt(test_now_ms() - t0, 10000);
  ck_assert_msg(strstr(err.message, "65536"), "message: %s", err.message);
  mcp_error_clear(&err);
  /* A small answer on the next stream arrives as usual. */
  ck_assert_int_eq(mcp_client_call_tool(c, "echo", "{\"text\":\"small\"}", co, &res, NULL), MCP_OK);
  mcp_free(res);
  free(args);
  mcp_call_options_free(co);
  mcp_client_free(c);
  mcp_client_options_free(o);
  close(srv.in_wr);
  int ws;
  waitpid(srv.pid, &ws, 0);
}
END_TEST

/* ---- item: free while calls are in flight --------------------------------- */

typedef struct caller {
  mcp_client *c;
  mcp_status st;
  char msg[256];
} caller;

static void *caller_main(void *arg) {
  caller *k = arg;
  char *res = NULL;
  mcp_error err = MCP_ERROR_INIT;
  k->st = mcp_client_call_tool(k->c, "hang", "{}", NULL, &res, &err);
  snprintf(k->msg, sizeof(k->msg), "%s", err.message ? err.message : "");
  mcp_error_clear(&err);
  mcp_free(res);
  return NULL;
}

typedef struct async_seen {
  atomic_int calls;
  atomic_int status;
} async_seen;

static void on_async_seen(void *user, mcp_status st, const char *result, const mcp_error *err) {
  (void)result;
  (void)err;
  async_seen *a = user;
  atomic_store(&a->status, st);
  atomic_fetch_add(&a->calls, 1);
}

/*
 * Threads blocked in calls while another thread frees the client: the
 * calls end with MCP_ECLOSED and free returns after they have left (before
 * the fix free released the client under them: use after free under ASan).
 */
START_TEST(free_while_calls_block) {
  mcp_client *c = connect_fault(NULL, NULL);
  enum { N = 4 };
  caller k[N];
  pthread_t th[N];
  for (int i = 0; i < N; i++) {
    k[i] = (caller){.c = c};
    ck_assert_int_eq(pthread_create(&th[i], NULL, caller_main, &k[i]), 0);
  }
  async_seen a = {0};
  ck_assert_int_eq(mcp_client_call_tool_async(c, "hang", "{}", NULL, on_async_seen, &a, NULL),
                   MCP_OK);
  /* Every call is in flight once its request went out (initialize + N + 1). */
  mcp_client_stats st;
  ck_assert(WAIT_UNTIL((mcp_client_get_stats(c, &st), st.requests_sent >= 2 + N), 10000));
  long long t0 = test_now_ms();
  mcp_client_free(c);
  ck_assert_int_lt(test_now_ms() - t0, 10000);
  for (int i = 0; i < N; i++) {
    pthread_join(th[i], NULL);
    ck_assert_int_eq(k[i].st, MCP_ECLOSED);
    ck_assert_msg(k[i].msg[0] != '\0', "no message");
  }
  /* free waited for the callbacks: the async one ran, once. */
  ck_assert_int_eq(atomic_load(&a.calls), 1);
  ck_assert_int_eq(atomic_load(&a.status), MCP_ECLOSED);
}
END_TEST

typedef struct mcaller {
  mcp_manager *m;
  mcp_status st;
  atomic_int progressed; /* the call reached the server */
} mcaller;

static void on_mprogress(void *user, double progress, double total, const char *message) {
  (void)progress;
  (void)total;
  (void)message;
  atomic_store(&((mcaller *)user)->progressed, 1);
}

static void *mcaller_main(void *arg) {
  mcaller *k = arg;
  mcp_call_options *o = timeout_opts(30000);
  mcp_call_options_set_progress(o, on_mprogress, k);
  char *res = NULL;
  k->st = mcp_manager_call_tool(k->m, "f/progress", "{\"steps\":100000,\"ms\":20}", o, &res, NULL);
  mcp_free(res);
  mcp_call_options_free(o);
  return NULL;
}

/* The same through a manager: its calls in flight end, and free waits for
 * them (before the fix it released the manager under them). */
START_TEST(manager_free_while_calls_block) {
  mcp_manager_options *o = mcp_manager_options_new();
  mcp_manager_options_set_discovery(o, false, false);
  mcp_manager_options_set_timeout_ms(o, 20000);
  mcp_client_options *co = mcp_client_options_new();
  const char *argv[] = {test_env_path("MCP_FAULT_SERVER"), NULL};
  ck_assert_int_eq(mcp_client_options_set_stdio(co, argv), MCP_OK);
  ck_assert_int_eq(mcp_manager_options_add_server(o, "f", co), MCP_OK);
  mcp_client_options_free(co);
  mcp_manager *m = NULL;
  ck_assert_int_eq(mcp_manager_start(o, &m, NULL), MCP_OK);
  mcp_manager_options_free(o);
  /* One call: the fault server runs one tool at a time. */
  enum { N = 1 };
  mcaller k[N];
  pthread_t th[N];
  for (int i = 0; i < N; i++) {
    k[i].m = m;
    k[i].st = MCP_OK;
    atomic_init(&k[i].progressed, 0);
    ck_assert_int_eq(pthread_create(&th[i], NULL, mcaller_main, &k[i]), 0);
  }
  for (int i = 0; i < N; i++) ck_assert(WAIT_UNTIL(atomic_load(&k[i].progressed), 20000));
  long long t0 = test_now_ms();
  mcp_manager_free(m);
  ck_assert_int_lt(test_now_ms() - t0, 15000);
  for (int i = 0; i < N; i++) {
    pthread_join(th[i], NULL);
    ck_assert_int_eq(k[i].st, MCP_ECLOSED);
  }
}
END_TEST

static Suite *inbound_suite(void) {
  Suite *s = suite_create("inbound");
  TCase *flood = tcase_create("flood");
  tcase_set_timeout(flood, 120);
  tcase_add_test(flood, flood_pings_server_stops_reading);
  tcase_add_test(flood, flood_notifications_bounded);
  tcase_add_test(flood, flood_requests_answered_busy);
  suite_add_tcase(s, flood);
  TCase *cancel = tcase_create("cancel");
  tcase_set_timeout(cancel, 60);
  tcase_add_test(cancel, cancel_after_timeout_returns_at_deadline);
  tcase_add_test(cancel, flood_during_call_returns_at_deadline);
  suite_add_tcase(s, cancel);
  TCase *big = tcase_create("oversize");
  tcase_set_timeout(big, 60);
  tcase_add_test(big, oversize_response_fails_its_call);
  tcase_add_test(big, oversize_response_id_unknown_warns);
  tcase_add_test(big, oversize_sse_event_fails_its_call);
  suite_add_tcase(s, big);
  TCase *fr = tcase_create("free");
  tcase_set_timeout(fr, 60);
  tcase_add_test(fr, free_while_calls_block);
  tcase_add_test(fr, manager_free_while_calls_block);
  suite_add_tcase(s, fr);
  return s;
}

int main(void) { return run_suite(inbound_suite()); }
