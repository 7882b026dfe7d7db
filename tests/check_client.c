/* SPDX-License-Identifier: MIT */
/*
 * check_client.c: the MCP client end to end against real child processes:
 * the bundled demo server and the scripted fault server.
 */
#include "config.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <sys/resource.h>

#include <json-c/json.h>

#include "check_util.h"
#include "mcpconn.h"

/* ---- helpers ---------------------------------------------------------------- */

static int scale(int n) { return test_under_valgrind() ? (n / 20 > 0 ? n / 20 : 1) : n; }

static mcp_client *connect_argv(const char *const *argv, mcp_client_options *o_in, mcp_status want,
                                mcp_error *err_out) {
  mcp_client_options *o = o_in ? o_in : mcp_client_options_new();
  ck_assert_int_eq(mcp_client_options_set_stdio(o, argv), MCP_OK);
  mcp_client *c = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_client_connect(o, &c, &err);
  ck_assert_msg(st == want, "connect: got %d (%s), wanted %d", st, err.message ? err.message : "",
                want);
  if (want != MCP_OK) ck_assert_ptr_null(c);
  if (err_out) *err_out = err;
  else mcp_error_clear(&err);
  if (!o_in) mcp_client_options_free(o);
  return c;
}

static mcp_client *connect_demo(void) {
  const char *argv[] = {test_env_path("MCP_DEMO_SERVER"), NULL};
  return connect_argv(argv, NULL, MCP_OK, NULL);
}

/* The fault server with extra flags (NULL-terminated list). */
static mcp_client *connect_fault(mcp_client_options *o, mcp_status want, mcp_error *err, ...) {
  const char *argv[16] = {test_env_path("MCP_FAULT_SERVER")};
  int n = 1;
  va_list ap;
  va_start(ap, err);
  const char *a;
  while ((a = va_arg(ap, const char *)) && n < 15) argv[n++] = a;
  va_end(ap);
  argv[n] = NULL;
  return connect_argv(argv, o, want, err);
}

static json_object *parse_or_fail(const char *s) {
  ck_assert_ptr_nonnull(s);
  json_object *o = json_tokener_parse(s);
  ck_assert_msg(o != NULL, "not JSON: %s", s);
  return o;
}

/* content[0].text of a CallToolResult */
static char *first_text(const char *result) {
  json_object *o = parse_or_fail(result);
  json_object *content = json_object_object_get(o, "content");
  ck_assert_ptr_nonnull(content);
  json_object *first = json_object_array_get_idx(content, 0);
  char *t = strdup(json_object_get_string(json_object_object_get(first, "text")));
  json_object_put(o);
  return t;
}

static char *call_text(mcp_client *c, const char *tool, const char *args) {
  char *res = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_client_call_tool(c, tool, args, NULL, &res, &err);
  ck_assert_msg(st == MCP_OK, "%s: %d %s", tool, st, err.message ? err.message : "");
  char *t = first_text(res);
  mcp_free(res);
  return t;
}

/* A mutex + condvar event collector (no sleeping to synchronise). */
typedef struct collector {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int count;
  char *items[64];
} collector;

static void collector_init(collector *k) {
  memset(k, 0, sizeof(*k));
  pthread_mutex_init(&k->lock, NULL);
  pthread_cond_init(&k->cond, NULL);
}

static void collector_add(collector *k, const char *s) {
  pthread_mutex_lock(&k->lock);
  if (k->count < 64) k->items[k->count] = strdup(s ? s : "");
  k->count++;
  pthread_cond_broadcast(&k->cond);
  pthread_mutex_unlock(&k->lock);
}

static int collector_wait(collector *k, int n, int ms) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_sec += ms / 1000;
  ts.tv_nsec += (ms % 1000) * 1000000L;
  if (ts.tv_nsec >= 1000000000L) {
    ts.tv_sec++;
    ts.tv_nsec -= 1000000000L;
  }
  pthread_mutex_lock(&k->lock);
  while (k->count < n)
    if (pthread_cond_timedwait(&k->cond, &k->lock, &ts) != 0) break;
  int got = k->count;
  pthread_mutex_unlock(&k->lock);
  return got >= n;
}

static void collector_free(collector *k) {
  for (int i = 0; i < k->count && i < 64; i++) free(k->items[i]);
}

/* ---- demo server -------------------------------------------------------------- */

START_TEST(demo_handshake_and_tools) {
  mcp_client *c = connect_demo();
  /* The demo server speaks both eras: a client in mode auto ends modern. */
  ck_assert_str_eq(mcp_client_protocol_version(c), "2026-07-28");
  ck_assert_ptr_nonnull(strstr(mcp_client_server_info(c), "mcpconn-demo-server"));
  ck_assert(mcp_client_is_open(c));

  char *tools = NULL;
  ck_assert_int_eq(mcp_client_list_tools(c, NULL, &tools, NULL), MCP_OK);
  json_object *arr = parse_or_fail(tools);
  ck_assert_int_eq(json_object_array_length(arr), 4);
  const char *names[] = {"echo", "add", "sleep", "fail"};
  for (int i = 0; i < 4; i++) {
    int found = 0;
    for (size_t k = 0; k < json_object_array_length(arr); k++)
      if (strcmp(json_object_get_string(
                     json_object_object_get(json_object_array_get_idx(arr, k), "name")),
                 names[i]) == 0)
        found = 1;
    ck_assert_msg(found, "tool %s missing", names[i]);
  }
  json_object_put(arr);
  mcp_free(tools);

  char *t = call_text(c, "echo", "{\"text\":\"hello, \\\"world\\\"\\n\"}");
  ck_assert_str_eq(t, "hello, \"world\"\n");
  free(t);
  t = call_text(c, "add", "{\"a\":2,\"b\":3}");
  ck_assert_str_eq(t, "5");
  free(t);
  ck_assert_int_eq(mcp_client_ping(c, NULL, NULL), MCP_OK);
  mcp_client_free(c);
}
END_TEST

START_TEST(demo_errors) {
  mcp_client *c = connect_demo();
  char *res = NULL;
  mcp_error err = MCP_ERROR_INIT;
  /* isError: true is a tool error, and the result still comes back. */
  ck_assert_int_eq(mcp_client_call_tool(c, "fail", "{\"message\":\"boom\"}", NULL, &res, &err),
                   MCP_ETOOLERROR);
  ck_assert_ptr_nonnull(res);
  ck_assert_str_eq(err.message, "boom");
  mcp_free(res);
  mcp_error_clear(&err);
  /* Unknown tool and unknown method: JSON-RPC errors with their codes. */
  ck_assert_int_eq(mcp_client_call_tool(c, "nosuch", NULL, NULL, &res, &err), MCP_ERPC);
  ck_assert_int_eq(err.rpc_code, -32602);
  ck_assert_ptr_null(res);
  mcp_error_clear(&err);
  ck_assert_int_eq(mcp_client_request(c, "no/such/method", "{}", NULL, &res, &err), MCP_ERPC);
  ck_assert_int_eq(err.rpc_code, -32601);
  mcp_error_clear(&err);
  /* Bad input from the host is refused before anything is sent. */
  ck_assert_int_eq(mcp_client_call_tool(c, "echo", "{not json", NULL, &res, &err), MCP_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.message, "not valid JSON"));
  mcp_error_clear(&err);
  ck_assert_int_eq(mcp_client_call_tool(c, "echo", "[1]", NULL, &res, &err), MCP_EINVAL);
  mcp_error_clear(&err);
  ck_assert_int_eq(mcp_client_request(c, "tools/list", NULL, NULL, &res, NULL), MCP_OK);
  ck_assert_ptr_nonnull(strstr(res, "\"tools\""));
  mcp_free(res);
  mcp_client_stats s;
  mcp_client_get_stats(c, &s);
  ck_assert_uint_eq(s.unknown_responses, 0);
  ck_assert_uint_eq(s.protocol_errors, 0);
  mcp_client_free(c);
}
END_TEST

START_TEST(demo_timeout_then_usable) {
  mcp_client *c = connect_demo();
  mcp_call_options *o = mcp_call_options_new();
  mcp_call_options_set_timeout_ms(o, 200);
  char *res = NULL;
  mcp_error err = MCP_ERROR_INIT;
  long long t0 = test_now_ms();
  ck_assert_int_eq(mcp_client_call_tool(c, "sleep", "{\"ms\":600}", o, &res, &err), MCP_ETIMEDOUT);
  ck_assert_int_lt(test_now_ms() - t0, 590);
  mcp_error_clear(&err);
  /* notifications/cancelled reached the server: the 600 ms sleep never
   * answers.  A 900 ms sleep answered later proves it, since the demo server
   * answers its timers in deadline order. */
  mcp_call_options_set_timeout_ms(o, 10000);
  ck_assert_int_eq(mcp_client_call_tool(c, "sleep", "{\"ms\":900}", o, &res, &err), MCP_OK);
  mcp_free(res);
  mcp_client_stats s;
  mcp_client_get_stats(c, &s);
  ck_assert_uint_eq(s.late_responses, 0);
  mcp_call_options_free(o);
  mcp_client_free(c);
}
END_TEST

static double thread_cpu_s(void) {
  struct rusage ru;
  getrusage(RUSAGE_THREAD, &ru);
  return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
         ru.ru_stime.tv_usec / 1e6;
}

START_TEST(demo_slow_call_does_not_spin) {
  /* A blocking call reads the answer itself (the stdio transport's lead())
   * and retries briefly before sleeping, but only for servers that answer
   * within microseconds: waiting 300 ms for a slow tool costs the caller
   * almost no CPU, even right after a run of quick calls. */
  mcp_client *c = connect_demo();
  for (int i = 0; i < 200; i++) {
    char *res = NULL;
    ck_assert_int_eq(mcp_client_call_tool(c, "echo", "{\"text\":\"q\"}", NULL, &res, NULL), MCP_OK);
    mcp_free(res);
  }
  double cpu0 = thread_cpu_s();
  char *res = NULL;
  ck_assert_int_eq(mcp_client_call_tool(c, "sleep", "{\"ms\":300}", NULL, &res, NULL), MCP_OK);
  mcp_free(res);
  double cpu = thread_cpu_s() - cpu0;
  ck_assert_msg(cpu < 0.1, "the caller used %.3f s of CPU waiting 300 ms", cpu);
  mcp_client_free(c);
}
END_TEST

typedef struct cancel_arg {
  mcp_cancel *tok;
  atomic_int progress_seen;
} cancel_arg;

static void progress_then_cancel(void *user, double progress, double total, const char *message) {
  cancel_arg *a = user;
  atomic_fetch_add(&a->progress_seen, 1);
  mcp_cancel_fire(a->tok);
}

START_TEST(demo_cancel_from_callback) {
  mcp_client *c = connect_demo();
  cancel_arg a = {mcp_cancel_new(), 0};
  mcp_call_options *o = mcp_call_options_new();
  mcp_call_options_set_cancel(o, a.tok);
  mcp_call_options_set_progress(o, progress_then_cancel, &a);
  char *res = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp_client_call_tool(c, "sleep", "{\"ms\":500}", o, &res, &err), MCP_ECANCELLED);
  ck_assert_int_ge(atomic_load(&a.progress_seen), 1);
  mcp_error_clear(&err);
  mcp_call_options_set_cancel(o, NULL);
  mcp_call_options_set_progress(o, NULL, NULL);
  ck_assert_int_eq(mcp_client_call_tool(c, "sleep", "{\"ms\":800}", o, &res, NULL), MCP_OK);
  mcp_free(res);
  mcp_client_stats s;
  mcp_client_get_stats(c, &s);
  ck_assert_uint_eq(s.late_responses, 0); /* the cancelled sleep never answered */
  /* A token fired before the call refuses it at once. */
  mcp_call_options_set_cancel(o, a.tok);
  ck_assert_int_eq(mcp_client_call_tool(c, "echo", "{\"text\":\"x\"}", o, &res, NULL),
                   MCP_ECANCELLED);
  mcp_call_options_free(o);
  mcp_cancel_unref(a.tok);
  mcp_client_free(c);
}
END_TEST

typedef struct prog_rec {
  atomic_int n;
  atomic_int after_return;
  atomic_bool returned;
  double last_total;
} prog_rec;

static void record_progress(void *user, double progress, double total, const char *message) {
  prog_rec *r = user;
  if (atomic_load(&r->returned)) atomic_fetch_add(&r->after_return, 1);
  atomic_fetch_add(&r->n, 1);
  r->last_total = total;
}

START_TEST(demo_progress_and_reset) {
  mcp_client *c = connect_demo();
  prog_rec r = {0};
  mcp_call_options *o = mcp_call_options_new();
  mcp_call_options_set_progress(o, record_progress, &r);
  char *res = NULL;
  ck_assert_int_eq(mcp_client_call_tool(c, "sleep", "{\"ms\":450}", o, &res, NULL), MCP_OK);
  atomic_store(&r.returned, true);
  mcp_free(res);
  ck_assert_int_ge(atomic_load(&r.n), 2);
  ck_assert(r.last_total == 450.0);
  ck_assert_int_eq(mcp_client_ping(c, NULL, NULL), MCP_OK);
  ck_assert_int_eq(atomic_load(&r.after_return), 0); /* none after the call returned */

  /* Progress every 100 ms keeps a 700 ms timeout alive for a 2000 ms call
   * (600 ms of slack for a loaded machine). */
  mcp_call_options *o2 = mcp_call_options_new();
  mcp_call_options_set_timeout_ms(o2, 700);
  mcp_call_options_set_reset_timeout_on_progress(o2, true, 0);
  ck_assert_int_eq(mcp_client_call_tool(c, "sleep", "{\"ms\":2000}", o2, &res, NULL), MCP_OK);
  mcp_free(res);
  /* ... but never past the max total. */
  mcp_call_options_set_reset_timeout_on_progress(o2, true, 1000);
  long long t0 = test_now_ms();
  ck_assert_int_eq(mcp_client_call_tool(c, "sleep", "{\"ms\":5000}", o2, &res, NULL),
                   MCP_ETIMEDOUT);
  long long el = test_now_ms() - t0;
  ck_assert_int_ge(el, 990);
  ck_assert_int_lt(el, 4900);
  mcp_call_options_free(o);
  mcp_call_options_free(o2);
  mcp_client_free(c);
}
END_TEST

/* ---- async ---------------------------------------------------------------- */

typedef struct async_rec {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int done;
  int ok, timedout, closed, other;
  char text[64];
  mcp_client *free_me;
} async_rec;

static void async_init(async_rec *a) {
  memset(a, 0, sizeof(*a));
  pthread_mutex_init(&a->lock, NULL);
  pthread_cond_init(&a->cond, NULL);
}

static void async_cb(void *user, mcp_status st, const char *result, const mcp_error *err) {
  async_rec *a = user;
  if (st != MCP_OK) ck_assert_ptr_nonnull(err);
  if (a->free_me) mcp_client_free(a->free_me); /* freeing from our own callback */
  pthread_mutex_lock(&a->lock);
  if (st == MCP_OK) {
    a->ok++;
    char *t = first_text(result);
    snprintf(a->text, sizeof(a->text), "%s", t);
    free(t);
  } else if (st == MCP_ETIMEDOUT) a->timedout++;
  else if (st == MCP_ECLOSED) a->closed++;
  else a->other++;
  a->done++;
  pthread_cond_broadcast(&a->cond);
  pthread_mutex_unlock(&a->lock);
}

static int async_wait(async_rec *a, int n, int ms) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_sec += ms / 1000 + 1;
  pthread_mutex_lock(&a->lock);
  while (a->done < n)
    if (pthread_cond_timedwait(&a->cond, &a->lock, &ts) != 0) break;
  int ok = a->done >= n;
  pthread_mutex_unlock(&a->lock);
  return ok;
}

START_TEST(async_calls_end_once) {
  mcp_client *c = connect_demo();
  async_rec a;
  async_init(&a);
  ck_assert_int_eq(
      mcp_client_call_tool_async(c, "echo", "{\"text\":\"async\"}", NULL, async_cb, &a, NULL),
      MCP_OK);
  ck_assert(async_wait(&a, 1, 5000));
  ck_assert_int_eq(a.ok, 1);
  ck_assert_str_eq(a.text, "async");
  mcp_call_options *o = mcp_call_options_new();
  mcp_call_options_set_timeout_ms(o, 100);
  ck_assert_int_eq(mcp_client_call_tool_async(c, "sleep", "{\"ms\":3000}", o, async_cb, &a, NULL),
                   MCP_OK);
  ck_assert(async_wait(&a, 2, 5000));
  ck_assert_int_eq(a.timedout, 1);
  /* In flight at close: each ends once with MCP_ECLOSED. */
  for (int i = 0; i < 5; i++)
    ck_assert_int_eq(
        mcp_client_call_tool_async(c, "sleep", "{\"ms\":5000}", NULL, async_cb, &a, NULL), MCP_OK);
  /* A refused call never calls back. */
  ck_assert_int_eq(mcp_client_call_tool_async(c, "echo", "{bad", NULL, async_cb, &a, NULL),
                   MCP_EINVAL);
  mcp_client_close(c);
  ck_assert(async_wait(&a, 7, 5000));
  ck_assert_int_eq(a.closed, 5);
  ck_assert_int_eq(a.done, 7);
  ck_assert(!mcp_client_is_open(c));
  /* After close, calls fail at once. */
  char *res = NULL;
  ck_assert_int_eq(mcp_client_call_tool(c, "echo", "{\"text\":\"x\"}", NULL, &res, NULL),
                   MCP_ECLOSED);
  ck_assert_int_eq(
      mcp_client_call_tool_async(c, "echo", "{\"text\":\"x\"}", NULL, async_cb, &a, NULL),
      MCP_ECLOSED);
  mcp_call_options_free(o);
  mcp_client_free(c);
  ck_assert_int_eq(a.done, 7);
}
END_TEST

START_TEST(free_from_own_callback) {
  mcp_client *c = connect_demo();
  async_rec a;
  async_init(&a);
  a.free_me = c;
  ck_assert_int_eq(
      mcp_client_call_tool_async(c, "echo", "{\"text\":\"bye\"}", NULL, async_cb, &a, NULL),
      MCP_OK);
  ck_assert(async_wait(&a, 1, 5000));
  ck_assert_int_eq(a.ok, 1);
  /* The client is released on another thread once the callback returned;
   * ASan and valgrind check that nothing is touched after it is freed. */
}
END_TEST

/* 16 host threads x N calls on one client, sync and async mixed. */
typedef struct stress_arg {
  mcp_client *c;
  int tid, n;
  int sync_ok, errors;
  async_rec a;
} stress_arg;

static void *stress_main(void *arg) {
  stress_arg *s = arg;
  char args[96], want[64];
  for (int i = 0; i < s->n; i++) {
    snprintf(want, sizeof(want), "t%d-%d", s->tid, i);
    snprintf(args, sizeof(args), "{\"text\":\"%s\"}", want);
    if (i % 2 == 0) {
      char *res = NULL;
      if (mcp_client_call_tool(s->c, "echo", args, NULL, &res, NULL) == MCP_OK) {
        char *t = first_text(res);
        if (strcmp(t, want) == 0) s->sync_ok++;
        else s->errors++;
        free(t);
        mcp_free(res);
      } else {
        s->errors++;
      }
    } else if (mcp_client_call_tool_async(s->c, "echo", args, NULL, async_cb, &s->a, NULL) !=
               MCP_OK) {
      s->errors++;
    }
  }
  return NULL;
}

START_TEST(sixteen_threads_thousand_calls) {
  mcp_client *c = connect_demo();
  enum { NT = 16 };
  int per = scale(1000);
  stress_arg *s = calloc(NT, sizeof(*s));
  pthread_t th[NT];
  for (int i = 0; i < NT; i++) {
    s[i].c = c;
    s[i].tid = i;
    s[i].n = per;
    async_init(&s[i].a);
    pthread_create(&th[i], NULL, stress_main, &s[i]);
  }
  int sync_total = 0;
  for (int i = 0; i < NT; i++) {
    pthread_join(th[i], NULL);
    ck_assert_int_eq(s[i].errors, 0);
    sync_total += s[i].sync_ok;
    ck_assert(async_wait(&s[i].a, per / 2, 30000));
    ck_assert_int_eq(s[i].a.ok, per / 2);
    ck_assert_int_eq(s[i].a.done, per / 2);
  }
  ck_assert_int_eq(sync_total, NT * (per - per / 2));
  mcp_client_stats st;
  mcp_client_get_stats(c, &st);
  ck_assert_uint_eq(st.unknown_responses, 0);
  ck_assert_uint_eq(st.late_responses, 0);
  mcp_client_free(c);
  free(s);
}
END_TEST

/* Every way a blocking call can end, from several threads at once on one
 * stdio client: answers read by a leading caller or by the reader, leaders
 * woken by cancels from other threads and by their own deadlines, async
 * calls switching the reader back on, late answers to timed-out calls.
 * Each call must end with its own answer or the error it asked for. */
typedef struct mixed_arg {
  mcp_client *c;
  int tid, n;
  uint64_t rng;
  int bad; /* calls that ended wrongly */
  char why[160];
  async_rec a;
  int async_sent;
} mixed_arg;

typedef struct canceller {
  mcp_cancel *tok;
  int delay_us;
} canceller;

static void *fire_later(void *arg) {
  canceller *k = arg;
  struct timespec ts = {0, (long)k->delay_us * 1000};
  nanosleep(&ts, NULL); /* a random moment in the call, not a synchronisation */
  mcp_cancel_fire(k->tok);
  return NULL;
}

static void *mixed_main(void *arg) {
  mixed_arg *m = arg;
  for (int i = 0; i < m->n; i++) {
    m->rng = m->rng * 6364136223846793005ULL + 1442695040888963407ULL;
    int kind = (int)((m->rng >> 33) % 10);
    char args[96], want[64];
    snprintf(want, sizeof(want), "m%d-%d", m->tid, i);
    snprintf(args, sizeof(args), "{\"text\":\"%s\"}", want);
    char *res = NULL;
    mcp_error err = MCP_ERROR_INIT;
    mcp_status st;
    if (kind < 5) { /* plain echo: must come back with its own text */
      st = mcp_client_call_tool(m->c, "echo", args, NULL, &res, &err);
      char *t = st == MCP_OK ? first_text(res) : NULL;
      if (st != MCP_OK || strcmp(t, want) != 0) {
        m->bad++;
        snprintf(m->why, sizeof(m->why), "echo %s: %s %s", want, mcp_strerror(st), t ? t : "");
      }
      free(t);
    } else if (kind < 7) { /* a 500 ms sleep with a 2 ms deadline */
      mcp_call_options *o = mcp_call_options_new();
      mcp_call_options_set_timeout_ms(o, 2);
      st = mcp_client_call_tool(m->c, "sleep", "{\"ms\":500}", o, &res, &err);
      if (st != MCP_ETIMEDOUT) {
        m->bad++;
        snprintf(m->why, sizeof(m->why), "sleep with deadline: %s", mcp_strerror(st));
      }
      mcp_call_options_free(o);
    } else if (kind < 9) { /* a 1 s sleep cancelled by another thread */
      canceller k = {mcp_cancel_new(), (int)((m->rng >> 20) % 3000)};
      mcp_call_options *o = mcp_call_options_new();
      mcp_call_options_set_cancel(o, k.tok);
      pthread_t th;
      pthread_create(&th, NULL, fire_later, &k);
      st = mcp_client_call_tool(m->c, "sleep", "{\"ms\":1000}", o, &res, &err);
      pthread_join(th, NULL);
      if (st != MCP_ECANCELLED) {
        m->bad++;
        snprintf(m->why, sizeof(m->why), "cancelled sleep: %s", mcp_strerror(st));
      }
      mcp_call_options_free(o);
      mcp_cancel_unref(k.tok);
    } else { /* async echo: the reader must read for it */
      if (mcp_client_call_tool_async(m->c, "echo", args, NULL, async_cb, &m->a, NULL) == MCP_OK)
        m->async_sent++;
      else m->bad++;
    }
    mcp_free(res);
    mcp_error_clear(&err);
  }
  return NULL;
}

START_TEST(mixed_endings_many_threads) {
  mcp_client *c = connect_demo();
  enum { NT = 6 };
  int per = test_under_valgrind() ? 15 : 150;
  mixed_arg *m = calloc(NT, sizeof(*m));
  pthread_t th[NT];
  for (int i = 0; i < NT; i++) {
    m[i].c = c;
    m[i].tid = i;
    m[i].n = per;
    m[i].rng = 0x9E3779B97F4A7C15ULL * (uint64_t)(i + 1);
    async_init(&m[i].a);
    pthread_create(&th[i], NULL, mixed_main, &m[i]);
  }
  for (int i = 0; i < NT; i++) {
    pthread_join(th[i], NULL);
    ck_assert_msg(m[i].bad == 0, "thread %d: %d bad, last: %s", i, m[i].bad, m[i].why);
    ck_assert(async_wait(&m[i].a, m[i].async_sent, 10000));
    ck_assert_int_eq(m[i].a.ok, m[i].async_sent);
  }
  /* Still usable, and sequential calls still work afterwards. */
  for (int i = 0; i < 20; i++) {
    char *t = call_text(c, "echo", "{\"text\":\"after\"}");
    ck_assert_str_eq(t, "after");
    free(t);
  }
  mcp_client_stats st;
  mcp_client_get_stats(c, &st);
  ck_assert_uint_eq(st.unknown_responses, 0);
  mcp_client_free(c);
  free(m);
}
END_TEST

/* ---- fault server ------------------------------------------------------------- */

START_TEST(fault_crash_mid_request) {
  mcp_client *c = connect_fault(NULL, MCP_OK, NULL, "--crash-on-call", NULL);
  char *res = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp_client_call_tool(c, "crash", "{}", NULL, &res, &err), MCP_ECLOSED);
  ck_assert_msg(strstr(err.message, "3") && strstr(err.message, "about to crash"), "message: %s",
                err.message);
  mcp_error_clear(&err);
  ck_assert(!mcp_client_is_open(c));
  ck_assert_int_eq(mcp_client_ping(c, NULL, &err), MCP_ECLOSED);
  ck_assert_ptr_nonnull(strstr(err.message, "about to crash"));
  mcp_error_clear(&err);
  mcp_client_free(c);
}
END_TEST

START_TEST(fault_garbage_is_counted_not_fatal) {
  mcp_client *c = connect_fault(NULL, MCP_OK, NULL, "--garbage", NULL);
  char *t = call_text(c, "echo", "{\"text\":\"still here\"}");
  ck_assert_str_eq(t, "still here");
  free(t);
  mcp_client_stats s;
  mcp_client_get_stats(c, &s);
  ck_assert_uint_ge(s.protocol_errors, 3);
  ck_assert_uint_ge(s.unknown_responses, 1);
  mcp_client_free(c);
}
END_TEST

START_TEST(fault_oversize_dropped) {
  mcp_client_options *o = mcp_client_options_new();
  mcp_client_options_set_max_message_bytes(o, 4096);
  mcp_client *c = connect_fault(o, MCP_OK, NULL, "--oversize", "100000", NULL);
  char *t = call_text(c, "echo", "{\"text\":\"after big\"}");
  ck_assert_str_eq(t, "after big");
  free(t);
  mcp_client_stats s;
  mcp_client_get_stats(c, &s);
  ck_assert_uint_ge(s.oversize_messages, 1);
  mcp_client_free(c);
  mcp_client_options_free(o);
}
END_TEST

START_TEST(fault_version_negotiation) {
  mcp_error err = MCP_ERROR_INIT;
  connect_fault(NULL, MCP_EVERSION, &err, "--version", "1999-01-01", NULL);
  ck_assert_ptr_nonnull(strstr(err.message, "1999-01-01"));
  mcp_error_clear(&err);
  mcp_client *c = connect_fault(NULL, MCP_OK, NULL, "--version", "2025-03-26", NULL);
  ck_assert_str_eq(mcp_client_protocol_version(c), "2025-03-26");
  mcp_client_free(c);
}
END_TEST

START_TEST(fault_slow_initialize_times_out) {
  mcp_client_options *o = mcp_client_options_new();
  mcp_client_options_set_timeout_ms(o, 300);
  mcp_error err = MCP_ERROR_INIT;
  long long t0 = test_now_ms();
  connect_fault(o, MCP_ETIMEDOUT, &err, "--slow-init", "10000", NULL);
  ck_assert_int_lt(test_now_ms() - t0, 8000); /* includes the child's shutdown */
  ck_assert_ptr_nonnull(strstr(err.message, "initialize"));
  mcp_error_clear(&err);
  mcp_client_options_free(o);
}
END_TEST

START_TEST(spawn_failure) {
  const char *argv[] = {"/nonexistent/mcp-server", NULL};
  mcp_error err = MCP_ERROR_INIT;
  connect_argv(argv, NULL, MCP_ESPAWN, &err);
  ck_assert_ptr_nonnull(strstr(err.message, "/nonexistent/mcp-server"));
  mcp_error_clear(&err);
}
END_TEST

static mcp_status roots_handler(void *user, const char *method, const char *params, char **result,
                                mcp_error *err) {
  ck_assert_str_eq(method, "roots/list");
  *result = strdup("{\"roots\":[{\"uri\":\"file:///tmp/project\",\"name\":\"project\"}]}");
  return MCP_OK;
}

START_TEST(fault_server_requests_answered) {
  mcp_client_options *o = mcp_client_options_new();
  mcp_client_options_set_request_handler(o, "roots/list", roots_handler, NULL);
  mcp_client *c = connect_fault(o, MCP_OK, NULL, NULL);
  char *t = call_text(c, "ask", "{}");
  json_object *arr = parse_or_fail(t);
  ck_assert_int_eq(json_object_array_length(arr), 3);
  /* ping -> {} */
  ck_assert_int_eq(json_object_object_length(json_object_array_get_idx(arr, 0)), 0);
  /* roots/list -> our handler's answer */
  ck_assert_ptr_nonnull(strstr(json_object_to_json_string_ext(json_object_array_get_idx(arr, 1),
                                                              JSON_C_TO_STRING_NOSLASHESCAPE),
                               "file:///tmp/project"));
  /* unknown method -> -32601 */
  ck_assert_ptr_nonnull(
      strstr(json_object_to_json_string(json_object_array_get_idx(arr, 2)), "-32601"));
  json_object_put(arr);
  free(t);
  mcp_client_free(c);
  mcp_client_options_free(o);
}
END_TEST

START_TEST(fault_unhandled_roots_is_method_not_found) {
  mcp_client *c = connect_fault(NULL, MCP_OK, NULL, NULL);
  char *t = call_text(c, "ask", "{}");
  json_object *arr = parse_or_fail(t);
  ck_assert_ptr_nonnull(strstr(json_object_to_json_string_ext(json_object_array_get_idx(arr, 1),
                                                              JSON_C_TO_STRING_NOSLASHESCAPE),
                               "-32601"));
  json_object_put(arr);
  free(t);
  mcp_client_free(c);
}
END_TEST

static void on_note(void *user, const char *method, const char *params) {
  if (strcmp(method, "notifications/message") == 0) collector_add(user, params);
}

START_TEST(fault_notifications_in_order) {
  collector k;
  collector_init(&k);
  mcp_client_options *o = mcp_client_options_new();
  mcp_client_options_set_notification_handler(o, on_note, &k);
  mcp_client *c = connect_fault(o, MCP_OK, NULL, NULL);
  char *t = call_text(c, "notify", "{\"count\":5}");
  free(t);
  ck_assert(collector_wait(&k, 5, 5000));
  for (int i = 0; i < 5; i++) {
    json_object *p = parse_or_fail(k.items[i]);
    ck_assert_int_eq(json_object_get_int(json_object_object_get(p, "data")), i);
    json_object_put(p);
  }
  mcp_client_free(c);
  mcp_client_options_free(o);
  collector_free(&k);
}
END_TEST

START_TEST(fault_batch_responses) {
  mcp_client *c = connect_fault(NULL, MCP_OK, NULL, "--batch", NULL);
  char *t = call_text(c, "echo", "{\"text\":\"batched\"}");
  ck_assert_str_eq(t, "batched");
  free(t);
  mcp_client_free(c);
}
END_TEST

START_TEST(fault_exit_after_init) {
  mcp_client *c = connect_fault(NULL, MCP_OK, NULL, "--exit-after-init", NULL);
  char *res = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp_client_call_tool(c, "echo", "{\"text\":\"x\"}", NULL, &res, &err),
                   MCP_ECLOSED);
  /* Either the reader saw the exit first ("server exited with status 0"),
   * or the write did ("server closed its stdin"): both say why. */
  ck_assert_msg(strstr(err.message, "status 0") || strstr(err.message, "closed"), "message: %s",
                err.message);
  mcp_error_clear(&err);
  /* Once the close is seen, every call carries the exit status. */
  ck_assert(WAIT_UNTIL(!mcp_client_is_open(c), 5000));
  ck_assert_int_eq(mcp_client_ping(c, NULL, &err), MCP_ECLOSED);
  ck_assert_msg(strstr(err.message, "status 0") != NULL, "message: %s", err.message);
  mcp_error_clear(&err);
  mcp_client_free(c);
}
END_TEST

START_TEST(fault_server_stops_reading) {
  mcp_client *c = connect_fault(NULL, MCP_OK, NULL, "--stop-reading", NULL);
  /* 1 MiB of arguments cannot fit in the pipe: the write must time out. */
  size_t n = 1 << 20;
  char *args = malloc(n + 32);
  strcpy(args, "{\"text\":\"");
  memset(args + 9, 'x', n);
  strcpy(args + 9 + n, "\"}");
  mcp_call_options *o = mcp_call_options_new();
  mcp_call_options_set_timeout_ms(o, 300);
  char *res = NULL;
  long long t0 = test_now_ms();
  mcp_status st = mcp_client_call_tool(c, "echo", args, o, &res, NULL);
  ck_assert_int_eq(st, MCP_ETIMEDOUT);
  ck_assert_int_lt(test_now_ms() - t0, 5000);
  free(args);
  mcp_call_options_free(o);
  mcp_client_free(c); /* close must not hang either */
}
END_TEST

static Suite *client_suite(void) {
  Suite *s = suite_create("client");
  TCase *demo = tcase_create("demo");
  tcase_set_timeout(demo, 120);
  tcase_add_test(demo, demo_handshake_and_tools);
  tcase_add_test(demo, demo_errors);
  tcase_add_test(demo, demo_timeout_then_usable);
  tcase_add_test(demo, demo_cancel_from_callback);
  tcase_add_test(demo, demo_slow_call_does_not_spin);
  tcase_add_test(demo, demo_progress_and_reset);
  tcase_add_test(demo, async_calls_end_once);
  tcase_add_test(demo, free_from_own_callback);
  tcase_add_test(demo, sixteen_threads_thousand_calls);
  tcase_add_test(demo, mixed_endings_many_threads);
  suite_add_tcase(s, demo);
  TCase *fault = tcase_create("fault");
  tcase_set_timeout(fault, 120);
  tcase_add_test(fault, fault_crash_mid_request);
  tcase_add_test(fault, fault_garbage_is_counted_not_fatal);
  tcase_add_test(fault, fault_oversize_dropped);
  tcase_add_test(fault, fault_version_negotiation);
  tcase_add_test(fault, fault_slow_initialize_times_out);
  tcase_add_test(fault, spawn_failure);
  tcase_add_test(fault, fault_server_requests_answered);
  tcase_add_test(fault, fault_unhandled_roots_is_method_not_found);
  tcase_add_test(fault, fault_notifications_in_order);
  tcase_add_test(fault, fault_batch_responses);
  tcase_add_test(fault, fault_exit_after_init);
  tcase_add_test(fault, fault_server_stops_reading);
  suite_add_tcase(s, fault);
  return s;
}

int main(void) { return run_suite(client_suite()); }
