/* SPDX-License-Identifier: MIT */
/*
 * check_tasks.c: long-running tool calls as tasks (mcp_tasks.h), both
 * eras, against a real stdio server (tests/interop/tasks-server.mjs) whose
 * every received line is logged, so what the client sent (task in the
 * request, polls, tasks/update, tasks/cancel, no notifications/cancelled)
 * is read from the server's side.  The pure task reader on fixed cases
 * first.
 */
#include "config.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "check_util.h"
#include "mcp_task_parse.h"
#include "mcpconn.h"

#define CONNECT_MS 60000 /* node's first start can be slow on a busy CI box */

/* ---- pure --------------------------------------------------------------- */

static mcp_status parse(const char *s, bool modern, mcp_task_shape shape, mcp_task_state *st,
                        mcp_error *err) {
  return mcp__task_parse(s, strlen(s), modern, shape, st, err);
}

START_TEST(parse_both_eras) {
  mcp_task_state s;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(
      parse("{\"task\":{\"taskId\":\"a\",\"status\":\"working\",\"pollInterval\":250}}", false,
            MCP_TASK_SHAPE_CREATED, &s, &err),
      MCP_OK);
  ck_assert_str_eq(s.id, "a");
  ck_assert_int_eq(s.status, MCP_TASK_WORKING);
  ck_assert_int_eq(s.poll_ms, 250);
  mcp__task_state_clear(&s);
  /* Legacy: the created task is under "task"; modern: flat. */
  ck_assert_int_eq(
      parse("{\"taskId\":\"a\",\"status\":\"working\"}", false, MCP_TASK_SHAPE_CREATED, &s, &err),
      MCP_EPROTO);
  ck_assert_ptr_nonnull(strstr(err.message, "no \"task\" object"));
  mcp_error_clear(&err);
  ck_assert_int_eq(parse("{\"resultType\":\"task\",\"taskId\":\"b\",\"status\":\"completed\","
                         "\"pollIntervalMs\":5,\"result\":{\"content\":[]}}",
                         true, MCP_TASK_SHAPE_CREATED, &s, &err),
                   MCP_OK);
  ck_assert_int_eq(s.status, MCP_TASK_COMPLETED);
  ck_assert_int_eq(s.poll_ms, 5);
  ck_assert_str_eq(s.result, "{\"content\":[]}");
  mcp__task_state_clear(&s);
  ck_assert_int_eq(parse("{\"taskId\":\"b\",\"status\":\"failed\",\"error\":{\"code\":-32050,"
                         "\"message\":\"disk full\"}}",
                         true, MCP_TASK_SHAPE_STATE, &s, &err),
                   MCP_OK);
  ck_assert(s.has_error);
  ck_assert_int_eq(s.error_code, -32050);
  ck_assert_str_eq(s.error_message, "disk full");
  mcp__task_state_clear(&s);
  ck_assert_int_eq(parse("{\"taskId\":\"b\",\"status\":\"input_required\",\"inputRequests\":"
                         "{\"q\":{\"method\":\"roots/list\"}}}",
                         true, MCP_TASK_SHAPE_STATE, &s, &err),
                   MCP_OK);
  ck_assert_str_eq(s.inputs, "{\"q\":{\"method\":\"roots/list\"}}");
  mcp__task_state_clear(&s);
  /* Refused, each with its cause. */
  static const char *const bad[][2] = {
      {"[]", "not a JSON object"},
      {"{\"status\":\"working\"}", "no taskId"},
      {"{\"taskId\":\"\",\"status\":\"working\"}", "no taskId"},
      {"{\"taskId\":\"x\",\"status\":\"done\"}", "unknown status \"done\""},
      {"{\"taskId\":\"x\"}", "no status"},
      {"{\"taskId\":\"x\",\"status\":\"working\",\"statusMessage\":3}", "statusMessage"},
      {"{\"taskId\":\"x\",\"status\":\"working\",\"pollIntervalMs\":\"9\"}", "pollIntervalMs"},
      {"{\"taskId\":\"x\",\"status\":\"completed\",\"result\":[]}", "result is not an object"},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    ck_assert_int_eq(parse(bad[i][0], true, MCP_TASK_SHAPE_STATE, &s, &err), MCP_EPROTO);
    ck_assert_msg(strstr(err.message, bad[i][1]), "%s: %s", bad[i][0], err.message);
    ck_assert_ptr_null(s.id);
    mcp_error_clear(&err);
  }
}
END_TEST

/* ---- a real server ------------------------------------------------------- */

static char server[4200], sdk_server[4200], logpath[4200];

static void setup_paths(void) {
  const char *home = getenv("MCP_INTEROP_HOME");
  snprintf(server, sizeof(server), "%s/tasks-server.mjs",
           home && *home ? home : test_env_path("MCP_INTEROP_DIR"));
  snprintf(sdk_server, sizeof(sdk_server), "%s/sdk-tasks-server.mjs",
           home && *home ? home : test_env_path("MCP_INTEROP_DIR"));
  snprintf(logpath, sizeof(logpath), "%s/check_tasks.%d.log", P_tmpdir, (int)getpid());
  unlink(logpath);
  setenv("LOG", logpath, 1);
}

static char *slurp_log(void) {
  FILE *f = fopen(logpath, "r");
  if (!f) return strdup("");
  char *buf = NULL;
  size_t cap = 0, len = 0, n;
  char chunk[4096];
  while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
    buf = realloc(buf, cap = len + n + 1);
    memcpy(buf + len, chunk, n);
    len += n;
  }
  fclose(f);
  if (!buf) return strdup("");
  buf[len] = '\0';
  (void)cap;
  return buf;
}

static int count_of(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) n++;
  return n;
}

static int log_count(const char *needle) {
  char *l = slurp_log();
  int n = count_of(l, needle);
  free(l);
  return n;
}

/* notifications/cancelled for anything but a subscriptions/listen: a
 * modern task's wait opens one (its id in taskIds) and ends it after, on
 * stdio with notifications/cancelled, reason "subscriptions changed". */
static int call_cancels(void) {
  return log_count("notifications/cancelled") - log_count("\"reason\":\"subscriptions changed\"");
}

/* Whether a notifications/cancelled names the request whose logged line
 * holds |needle| (e.g. the tools/call of one tool). */
static bool request_cancelled(const char *needle) {
  char *l = slurp_log(), *p = strstr(l, needle);
  bool hit = false;
  if (p) {
    while (p > l && p[-1] != '\n') p--;
    char *id = strstr(p, "\"id\":");
    if (id) {
      long long n = strtoll(id + 5, NULL, 10);
      char a[48], b[48];
      snprintf(a, sizeof(a), "\"requestId\":%lld,", n);
      snprintf(b, sizeof(b), "\"requestId\":%lld}", n);
      hit = strstr(l, a) || strstr(l, b);
    }
  }
  free(l);
  return hit;
}

/* The logged line holding |a| holds |b| too. */
static bool log_line_has(const char *a, const char *b) {
  char *l = slurp_log(), *p = strstr(l, a);
  bool ok = false;
  if (p) {
    char *start = p, *end = strchr(p, '\n');
    while (start > l && start[-1] != '\n') start--;
    if (end) *end = '\0';
    ok = strstr(start, b) != NULL;
  }
  free(l);
  return ok;
}

typedef struct host {
  pthread_mutex_t mu;
  int elicits;
  int reports;
  double last_progress;
  char messages[4096];
} host;

static host *host_new(void) {
  host *h = calloc(1, sizeof(*h));
  pthread_mutex_init(&h->mu, NULL);
  return h;
}

static void host_free(host *h) {
  pthread_mutex_destroy(&h->mu);
  free(h);
}

static mcp_status on_elicit(void *user, const char *method, const char *params, char **result,
                            mcp_error *err) {
  (void)method;
  (void)err;
  host *h = user;
  pthread_mutex_lock(&h->mu);
  h->elicits++;
  pthread_mutex_unlock(&h->mu);
  ck_assert_ptr_nonnull(strstr(params, "Which colour?"));
  *result = strdup("{\"action\":\"accept\",\"content\":{\"colour\":\"blue\"}}");
  return MCP_OK;
}

static void on_progress(void *user, double progress, double total, const char *message) {
  host *h = user;
  pthread_mutex_lock(&h->mu);
  ck_assert(progress > h->last_progress);
  ck_assert(isnan(total));
  h->last_progress = progress;
  h->reports++;
  if (message && strlen(h->messages) + strlen(message) + 2 < sizeof(h->messages)) {
    strcat(h->messages, message);
    strcat(h->messages, "\n");
  }
  pthread_mutex_unlock(&h->mu);
}

static mcp_client *connect_to(const char *prog, const char *era, bool ext, host *h) {
  const char *argv[] = {"node", prog, era, NULL};
  mcp_client_options *o = mcp_client_options_new();
  ck_assert_int_eq(mcp_client_options_set_stdio(o, argv), MCP_OK);
  ck_assert_int_eq(mcp_client_options_set_protocol(o, era), MCP_OK);
  mcp_client_options_set_timeout_ms(o, CONNECT_MS);
  if (ext) ck_assert_int_eq(mcp_client_options_set_extension(o, MCP_TASKS_EXTENSION, NULL), MCP_OK);
  if (h)
    ck_assert_int_eq(mcp_client_options_set_request_handler(o, "elicitation/create", on_elicit, h),
                     MCP_OK);
  mcp_client *c = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_msg(mcp_client_connect(o, &c, &err) == MCP_OK, "%s", err.message);
  mcp_client_options_free(o);
  return c;
}

static mcp_client *connect_era(const char *era, bool ext, host *h) {
  return connect_to(server, era, ext, h);
}

static mcp_call_options *opts_for(host *h, int64_t timeout_ms, mcp_cancel *cancel) {
  mcp_call_options *o = mcp_call_options_new();
  mcp_call_options_set_timeout_ms(o, timeout_ms);
  if (h) mcp_call_options_set_progress(o, on_progress, h);
  if (cancel) mcp_call_options_set_cancel(o, cancel);
  return o;
}

static void text_is(const char *result, const char *want) {
  char *t = NULL;
  ck_assert_int_eq(mcp_tool_result_text(result, (size_t)-1, &t, NULL, NULL), MCP_OK);
  ck_assert_str_eq(t, want);
  mcp_free(t);
}

/* The plain call on a task tool: the final result, the polls made, each
 * status change reported, nothing cancelled. */
static void plain_slow(const char *era) {
  setup_paths();
  host *h = host_new();
  mcp_client *c = connect_era(era, true, h);
  mcp_call_options *o = opts_for(h, 20000, NULL);
  char *out = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_msg(mcp_client_call_tool(c, "slow", "{\"n\":7}", o, &out, &err) == MCP_OK, "%s",
                err.message);
  text_is(out, "slow done 7");
  ck_assert_ptr_null(strstr(out, "resultType"));
  mcp_free(out);
  /* created (working), step 1..3, completed */
  ck_assert_int_eq(h->reports, 5);
  ck_assert_ptr_nonnull(strstr(h->messages, ": working\n"));
  ck_assert_ptr_nonnull(strstr(h->messages, ": working: step 3\n"));
  ck_assert_ptr_nonnull(strstr(h->messages, ": completed\n"));
  ck_assert_int_eq(log_count("\"method\":\"tasks/get\""), 4);
  bool modern = strcmp(era, "modern") == 0;
  /* Legacy: asked for the task, read the result; modern: no such thing. */
  ck_assert_int_eq(log_count("\"task\":{}"), modern ? 0 : 1);
  ck_assert_int_eq(log_count("\"method\":\"tasks/result\""), modern ? 0 : 1);
  ck_assert_int_eq(call_cancels(), 0);
  ck_assert_int_eq(log_count("tasks/cancel"), 0);
  mcp_call_options_free(o);
  mcp_client_free(c);
  host_free(h);
}

START_TEST(modern_plain_slow) { plain_slow("modern"); }
END_TEST
START_TEST(legacy_plain_slow) { plain_slow("legacy"); }
END_TEST

/* A task that needs input midway: the host's elicitation handler answers
 * once (modern: tasks/update with inputResponses; legacy: the server's
 * request during tasks/result). */
static void plain_ask(const char *era) {
  setup_paths();
  host *h = host_new();
  mcp_client *c = connect_era(era, true, h);
  char *out = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_call_options *o = opts_for(h, 20000, NULL);
  ck_assert_msg(mcp_client_call_tool(c, "ask", NULL, o, &out, &err) == MCP_OK, "%s", err.message);
  text_is(out, "got {\"colour\":\"blue\"}");
  mcp_free(out);
  ck_assert_int_eq(h->elicits, 1);
  ck_assert_ptr_nonnull(strstr(h->messages, ": input_required: waiting for a colour\n"));
  if (strcmp(era, "modern") == 0) {
    ck_assert_int_eq(log_count("\"method\":\"tasks/update\""), 1);
    ck_assert_int_eq(log_count("\"inputResponses\":{\"q1\":{\"action\":\"accept\""), 1);
  } else {
    ck_assert_int_eq(log_count("\"method\":\"tasks/result\""), 1);
  }
  mcp_call_options_free(o);
  mcp_client_free(c);
  host_free(h);
}

START_TEST(modern_plain_ask) { plain_ask("modern"); }
END_TEST
START_TEST(legacy_plain_ask) { plain_ask("legacy"); }
END_TEST

/* A task that fails: the cause surfaced with the server's code. */
static void plain_boom(const char *era) {
  setup_paths();
  mcp_client *c = connect_era(era, true, NULL);
  char *out = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp_client_call_tool(c, "boom", NULL, NULL, &out, &err), MCP_ERPC);
  ck_assert_ptr_null(out);
  ck_assert_int_eq(err.rpc_code, -32050);
  ck_assert_msg(strstr(err.message, "failed: disk full") && strstr(err.message, "task-1-boom"),
                "%s", err.message);
  mcp_error_clear(&err);
  mcp_client_free(c);
}

START_TEST(modern_plain_boom) { plain_boom("modern"); }
END_TEST
START_TEST(legacy_plain_boom) { plain_boom("legacy"); }
END_TEST

/* Cancelling the call (async, token fired after polls began) sends
 * tasks/cancel and never notifications/cancelled. */
static void async_cancel(const char *era) {
  setup_paths();
  host *h = host_new();
  test_async a = TEST_ASYNC_INIT;
  mcp_client *c = connect_era(era, true, h);
  mcp_cancel *tok = mcp_cancel_new();
  mcp_call_options *o = opts_for(h, 20000, tok);
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp_client_call_tool_async(c, "forever", NULL, o, test_on_async, &a, &err),
                   MCP_OK);
  mcp_call_options_free(o);
  ck_assert(WAIT_UNTIL(log_count("\"method\":\"tasks/get\"") >= 2, 20000));
  mcp_cancel_fire(tok);
  ck_assert(WAIT_UNTIL(test_async_done(&a), 20000));
  ck_assert_int_eq(a.st, MCP_ECANCELLED);
  ck_assert_ptr_nonnull(a.message);
  ck_assert_ptr_nonnull(strstr(a.message, "tasks/cancel sent"));
  ck_assert(WAIT_UNTIL(log_count("\"method\":\"tasks/cancel\"") == 1, 20000));
  ck_assert(log_line_has("\"method\":\"tasks/cancel\"", "\"taskId\":\"task-1-forever\""));
  ck_assert_int_eq(call_cancels(), 0);
  mcp_cancel_unref(tok);
  mcp_client_free(c);
  test_async_clear(&a);
  host_free(h);
}

START_TEST(modern_async_cancel) { async_cancel("modern"); }
END_TEST
START_TEST(legacy_async_cancel) { async_cancel("legacy"); }
END_TEST

/* The call's timeout bounds the task, and ends it with tasks/cancel. */
START_TEST(modern_timeout_cancels) {
  setup_paths();
  mcp_client *c = connect_era("modern", true, NULL);
  mcp_call_options *o = opts_for(NULL, 300, NULL);
  char *out = NULL;
  mcp_error err = MCP_ERROR_INIT;
  long long t0 = test_now_ms();
  ck_assert_int_eq(mcp_client_call_tool(c, "forever", NULL, o, &out, &err), MCP_ETIMEDOUT);
  ck_assert_int_lt(test_now_ms() - t0, 5000);
  mcp_error_clear(&err);
  ck_assert_int_eq(log_count("\"method\":\"tasks/cancel\""), 1);
  /* The task is ended by tasks/cancel, not by cancelling the call.  (A
   * tasks/get in flight at the deadline is abandoned with its own
   * notifications/cancelled: not the call's.) */
  ck_assert_int_gt(log_count("\"name\":\"forever\""), 0);
  ck_assert(!request_cancelled("\"name\":\"forever\""));
  mcp_call_options_free(o);
  mcp_client_free(c);
}
END_TEST

/* Async plain call: the same final result through the callback. */
static void async_slow(const char *era) {
  setup_paths();
  host *h = host_new();
  test_async a = TEST_ASYNC_INIT;
  mcp_client *c = connect_era(era, true, h);
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(
      mcp_client_call_tool_async(c, "slow", "{\"n\":2}", NULL, test_on_async, &a, &err), MCP_OK);
  ck_assert(WAIT_UNTIL(test_async_done(&a), 20000));
  ck_assert_int_eq(a.st, MCP_OK);
  text_is(a.result, "slow done 2");
  mcp_client_free(c);
  test_async_clear(&a);
  host_free(h);
}

START_TEST(modern_async_slow) { async_slow("modern"); }
END_TEST
START_TEST(legacy_async_slow) { async_slow("legacy"); }
END_TEST

/* Without the extension declared a modern server answers directly. */
START_TEST(modern_undeclared_is_direct) {
  setup_paths();
  mcp_client *c = connect_era("modern", false, NULL);
  char *out = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp_client_call_tool(c, "slow", NULL, NULL, &out, &err), MCP_OK);
  text_is(out, "slow done (direct)");
  mcp_free(out);
  ck_assert_int_eq(log_count("tasks/get"), 0);
  mcp_task *t = NULL;
  ck_assert_int_eq(mcp_client_start_tool_task(c, "slow", NULL, NULL, &t, &err), MCP_ESTATE);
  ck_assert_ptr_nonnull(strstr(err.message, "not declared"));
  mcp_error_clear(&err);
  mcp_client_free(c);
}
END_TEST

/* Push: while the call waits, the task's id goes in the listen's taskIds;
 * the server pushes each state (notifications/tasks) and the call takes
 * them instead of polling every pollIntervalMs (5 s here): no tasks/get,
 * done well within one interval. */
START_TEST(modern_push) {
  setup_paths();
  host *h = host_new();
  mcp_client *c = connect_era("modern", true, h);
  mcp_call_options *o = opts_for(h, 20000, NULL);
  char *out = NULL;
  mcp_error err = MCP_ERROR_INIT;
  long long t0 = test_now_ms();
  ck_assert_msg(mcp_client_call_tool(c, "pushy", NULL, o, &out, &err) == MCP_OK, "%s", err.message);
  long long took = test_now_ms() - t0;
  text_is(out, "pushy done");
  mcp_free(out);
  ck_assert_msg(took < 4000, "took %lld ms: waited out the poll interval", took);
  ck_assert_int_eq(log_count("\"method\":\"tasks/get\""), 0);
  ck_assert(log_line_has("\"method\":\"subscriptions/listen\"", "\"taskIds\":[\"task-1-pushy\"]"));
  ck_assert_ptr_nonnull(strstr(h->messages, "task task-1-pushy: completed\n"));
  ck_assert_int_ge(h->reports, 2);
  /* The listen went with the wait: none open, a cancel sent for it. */
  ck_assert(WAIT_UNTIL(log_count("\"reason\":\"subscriptions changed\"") >= 1, 20000));
  ck_assert_int_eq(call_cancels(), 0);
  mcp_call_options_free(o);
  mcp_client_free(c);
  host_free(h);
}
END_TEST

/* A server that refuses the listen (-32021): the call polls as before. */
START_TEST(modern_push_refused) {
  setup_paths();
  setenv("LISTEN", "refuse", 1);
  mcp_client *c = connect_era("modern", true, NULL);
  unsetenv("LISTEN");
  char *out = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_msg(mcp_client_call_tool(c, "slow", "{\"n\":1}", NULL, &out, &err) == MCP_OK, "%s",
                err.message);
  text_is(out, "slow done 1");
  mcp_free(out);
  ck_assert_int_eq(log_count("\"method\":\"tasks/get\""), 4);
  ck_assert(log_line_has("\"method\":\"subscriptions/listen\"", "\"taskIds\":[\"task-1-slow\"]"));
  mcp_client_free(c);
}
END_TEST

/* A task on any method but tools/call is invalid (SEP-2663), even with the
 * extension declared: the error says so, not "not negotiated". */
START_TEST(modern_task_on_other_method) {
  setup_paths();
  mcp_client *c = connect_era("modern", true, NULL);
  char *out = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp_client_request(c, "prompts/get", "{\"name\":\"p\"}", NULL, &out, &err),
                   MCP_EPROTO);
  ck_assert_ptr_null(out);
  ck_assert_msg(strstr(err.message, "prompts/get: the server answered with a task, which the "
                                    "tasks extension allows only on tools/call"),
                "%s", err.message);
  mcp_error_clear(&err);
  ck_assert_int_eq(log_count("tasks/get"), 0);
  mcp_client_free(c);
}
END_TEST

/* Legacy: the task is asked for by taskSupport (required always, optional
 * only with MCP_TASK_PREFER), never with MCP_TASK_NEVER. */
START_TEST(legacy_task_modes) {
  setup_paths();
  mcp_client *c = connect_era("legacy", false, NULL);
  char *out = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp_client_call_tool(c, "quick", NULL, NULL, &out, &err), MCP_OK);
  text_is(out, "quick done");
  mcp_free(out);
  ck_assert_int_eq(mcp_client_call_tool(c, "opt", NULL, NULL, &out, &err), MCP_OK);
  text_is(out, "opt done (direct)");
  mcp_free(out);
  ck_assert_int_eq(log_count("\"task\":{}"), 0);
  mcp_call_options *o = mcp_call_options_new();
  mcp_call_options_set_task_mode(o, MCP_TASK_PREFER);
  ck_assert_int_eq(mcp_client_call_tool(c, "opt", "{\"n\":1}", o, &out, &err), MCP_OK);
  text_is(out, "slow done 1");
  mcp_free(out);
  ck_assert_int_eq(log_count("\"task\":{}"), 1);
  mcp_call_options_set_task_mode(o, MCP_TASK_NEVER);
  ck_assert_int_eq(mcp_client_call_tool(c, "slow", NULL, o, &out, &err), MCP_ERPC);
  ck_assert_int_eq(err.rpc_code, -32601);
  ck_assert_ptr_nonnull(strstr(err.message, "requires task augmentation"));
  mcp_error_clear(&err);
  /* The tools' taskSupport was read once for the three calls that needed
   * it, not once per call. */
  ck_assert_int_eq(log_count("\"method\":\"tools/list\""), 1);
  mcp_call_options_free(o);
  mcp_client_free(c);
}
END_TEST

/* The explicit API: start, id, poll, resume by id, cancel, wait. */
static void explicit_api(const char *era) {
  setup_paths();
  mcp_client *c = connect_era(era, true, NULL);
  mcp_error err = MCP_ERROR_INIT;
  mcp_task *t = NULL;
  ck_assert_msg(mcp_client_start_tool_task(c, "slow", "{\"n\":3}", NULL, &t, &err) == MCP_OK, "%s",
                err.message);
  ck_assert_str_eq(mcp_task_id(t), "task-1-slow");
  ck_assert_int_eq(mcp_task_get_status(t), MCP_TASK_WORKING);
  ck_assert_int_eq(mcp_task_poll(t, NULL, &err), MCP_OK);
  ck_assert_str_eq(mcp_task_status_message(t), "step 1");
  /* A host that stored the id takes it up again. */
  char id[64];
  snprintf(id, sizeof(id), "%s", mcp_task_id(t));
  mcp_task_free(t);
  ck_assert_int_eq(mcp_client_resume_task(c, id, NULL, &t, &err), MCP_OK);
  ck_assert_str_eq(mcp_task_status_message(t), "step 2");
  char *out = NULL;
  ck_assert_int_eq(mcp_task_wait(t, NULL, &out, &err), MCP_OK);
  text_is(out, "slow done 3");
  mcp_free(out);
  ck_assert_int_eq(mcp_task_get_status(t), MCP_TASK_COMPLETED);
  mcp_task_free(t);
  ck_assert_int_eq(mcp_client_resume_task(c, "no-such", NULL, &t, &err), MCP_ERPC);
  ck_assert_ptr_nonnull(strstr(err.message, "no task no-such"));
  mcp_error_clear(&err);
  /* Cancel: the server's view afterwards says cancelled. */
  ck_assert_int_eq(mcp_client_start_tool_task(c, "forever", NULL, NULL, &t, &err), MCP_OK);
  ck_assert_int_eq(mcp_task_cancel(t, &err), MCP_OK);
  ck_assert_int_eq(mcp_task_poll(t, NULL, &err), MCP_OK);
  ck_assert_int_eq(mcp_task_get_status(t), MCP_TASK_CANCELLED);
  ck_assert_int_eq(mcp_task_wait(t, NULL, &out, &err), MCP_ECANCELLED);
  ck_assert_ptr_nonnull(strstr(err.message, "was cancelled: cancelled by request"));
  mcp_error_clear(&err);
  mcp_task_free(t);
  ck_assert_int_eq(log_count("\"method\":\"tasks/cancel\""), 1);
  mcp_client_free(c);
}

START_TEST(modern_explicit) { explicit_api("modern"); }
END_TEST
START_TEST(legacy_explicit) { explicit_api("legacy"); }
END_TEST

/* Modern explicit input: the requests read, answered by the host. */
START_TEST(modern_explicit_input) {
  setup_paths();
  mcp_client *c = connect_era("modern", true, NULL);
  mcp_error err = MCP_ERROR_INIT;
  mcp_task *t = NULL;
  ck_assert_int_eq(mcp_client_start_tool_task(c, "ask", NULL, NULL, &t, &err), MCP_OK);
  char *req = NULL;
  while (mcp_task_get_status(t) == MCP_TASK_WORKING)
    ck_assert_int_eq(mcp_task_poll(t, NULL, &err), MCP_OK);
  ck_assert_int_eq(mcp_task_get_status(t), MCP_TASK_INPUT_REQUIRED);
  ck_assert_int_eq(mcp_task_input_requests(t, &req, &err), MCP_OK);
  ck_assert_ptr_nonnull(strstr(req, "\"q1\":{\"method\":\"elicitation/create\""));
  mcp_free(req);
  ck_assert_int_eq(
      mcp_task_send_input(t, "{\"q1\":{\"action\":\"accept\",\"content\":\"red\"}}", NULL, &err),
      MCP_OK);
  /* Answered keys are not asked again. */
  ck_assert_int_eq(mcp_task_input_requests(t, &req, &err), MCP_OK);
  ck_assert_ptr_null(req);
  char *out = NULL;
  ck_assert_int_eq(mcp_task_wait(t, NULL, &out, &err), MCP_OK);
  text_is(out, "got \"red\"");
  mcp_free(out);
  mcp_task_free(t);
  mcp_client_free(c);
}
END_TEST

/* The manager's plain call gets the final result too (legacy: the tool's
 * taskSupport read from the list; modern: the extension declared). */
static void manager_call(const char *era) {
  setup_paths();
  const char *argv[] = {"node", server, era, NULL};
  mcp_client_options *co = mcp_client_options_new();
  ck_assert_int_eq(mcp_client_options_set_stdio(co, argv), MCP_OK);
  ck_assert_int_eq(mcp_client_options_set_protocol(co, era), MCP_OK);
  mcp_manager_options *mo = mcp_manager_options_new();
  mcp_manager_options_set_discovery(mo, false, false);
  mcp_manager_options_set_cache_dir(mo, NULL); /* no task records in the user's cache */
  ck_assert_int_eq(mcp_manager_options_add_server(mo, "tk", co), MCP_OK);
  mcp_client_options_free(co);
  ck_assert_int_eq(mcp_manager_options_set_extension(mo, MCP_TASKS_EXTENSION, NULL), MCP_OK);
  mcp_manager *m = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp_manager_start(mo, &m, &err), MCP_OK);
  mcp_manager_options_free(mo);
  ck_assert_msg(mcp_manager_wait_ready(m, "tk", CONNECT_MS, &err) == MCP_OK, "%s", err.message);
  char *out = NULL;
  ck_assert_msg(mcp_manager_call_tool(m, "tk/slow", "{\"n\":5}", NULL, &out, &err) == MCP_OK, "%s",
                err.message);
  text_is(out, "slow done 5");
  mcp_free(out);
  ck_assert_int_eq(log_count("\"method\":\"tasks/get\""), 4);
  mcp_manager_free(m);
}

START_TEST(modern_manager) { manager_call("modern"); }
END_TEST
START_TEST(legacy_manager) { manager_call("legacy"); }
END_TEST

/* ---- the official TypeScript SDK's task support (2025-11-25) ----------- */

/* @modelcontextprotocol/sdk's McpServer with registerToolTask and its
 * InMemoryTaskStore: the plain call, a failure, a cancel, tasks/list. */
START_TEST(sdk_legacy_tasks) {
  setup_paths();
  host *h = host_new();
  test_async a = TEST_ASYNC_INIT;
  mcp_client *c = connect_to(sdk_server, "legacy", false, h);
  mcp_call_options *o = opts_for(h, 20000, NULL);
  char *out = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_msg(mcp_client_call_tool(c, "sdk-slow", "{\"n\":4}", o, &out, &err) == MCP_OK, "%s",
                err.message);
  text_is(out, "sdk slow done 4");
  mcp_free(out);
  ck_assert_ptr_nonnull(strstr(h->messages, ": working\n"));
  ck_assert_int_ge(log_count("\"method\":\"tasks/get\""), 1);
  ck_assert_int_eq(log_count("\"method\":\"tasks/result\""), 1);
  ck_assert_int_eq(log_count("\"task\":{}"), 1);
  /* A task that ends failed with a tool error: the error's text. */
  ck_assert_int_eq(mcp_client_call_tool(c, "sdk-boom", NULL, NULL, &out, &err), MCP_ETOOLERROR);
  ck_assert_ptr_nonnull(strstr(err.message, "sdk disk full"));
  mcp_error_clear(&err);
  mcp_free(out);
  /* Cancelled by the token: tasks/cancel, and the SDK's store says so. */
  mcp_cancel *tok = mcp_cancel_new();
  mcp_call_options_set_cancel(o, tok);
  h->last_progress = 0; /* each call counts its own reports */
  ck_assert_int_eq(mcp_client_call_tool_async(c, "sdk-forever", NULL, o, test_on_async, &a, &err),
                   MCP_OK);
  int gets = log_count("\"method\":\"tasks/get\"");
  ck_assert(WAIT_UNTIL(log_count("\"method\":\"tasks/get\"") >= gets + 2, 20000));
  mcp_cancel_fire(tok);
  ck_assert(WAIT_UNTIL(test_async_done(&a), 20000));
  ck_assert_int_eq(a.st, MCP_ECANCELLED);
  ck_assert_int_eq(log_count("\"method\":\"tasks/cancel\""), 1);
  ck_assert_int_eq(call_cancels(), 0);
  ck_assert_int_eq(mcp_client_request(c, "tasks/list", NULL, NULL, &out, &err), MCP_OK);
  ck_assert_int_eq(count_of(out, "\"status\":\"cancelled\""), 1);
  ck_assert_int_eq(count_of(out, "\"status\":\"completed\""), 1);
  ck_assert_int_eq(count_of(out, "\"status\":\"failed\""), 1);
  mcp_free(out);
  mcp_cancel_unref(tok);
  mcp_call_options_free(o);
  mcp_client_free(c);
  test_async_clear(&a);
  host_free(h);
}
END_TEST

/* ---- a wait is woken, not polled ------------------------------------------ */

/* A task whose server asks for a 5 s poll interval (POLL=5000): the call
 * sleeps between polls, and what ends the call (its token, a close, a
 * free) must wake that sleep, not be found at the interval's end. */
#define LONG_POLL_MS 5000
/* How long the call waits before it is stopped: the scenario's length,
 * not a guess at a race (a stop before the wait began ends it the same). */
#define WAIT_MS 1000

enum stop_how { STOP_CANCEL, STOP_CLOSE, STOP_FREE };

typedef struct stopper {
  enum stop_how how;
  mcp_cancel *tok;
  mcp_client *c;
  long long fired_at;
} stopper;

static void *stop_run(void *arg) {
  stopper *s = arg;
  /* The task is made: its tools/call reached the server. */
  ck_assert(WAIT_UNTIL(log_count("\"method\":\"tools/call\"") >= 1, 20000));
  struct timespec ts = {WAIT_MS / 1000, (WAIT_MS % 1000) * 1000000L};
  nanosleep(&ts, NULL);
  s->fired_at = test_now_ms();
  if (s->how == STOP_CANCEL) mcp_cancel_fire(s->tok);
  else if (s->how == STOP_CLOSE) mcp_client_close(s->c);
  else mcp_client_free(s->c);
  return NULL;
}

/* Voluntary context switches of the calling thread so far. */
static long thread_switches(void) {
  struct rusage ru;
  ck_assert_int_eq(getrusage(RUSAGE_THREAD, &ru), 0);
  return ru.ru_nvcsw;
}

static void wait_stopped(const char *era, enum stop_how how) {
  setup_paths();
  setenv("POLL", "5000", 1);
  mcp_client *c = connect_era(era, true, NULL);
  unsetenv("POLL");
  stopper s = {.how = how, .tok = mcp_cancel_new(), .c = c};
  mcp_call_options *o = opts_for(NULL, 60000, s.tok);
  pthread_t th;
  ck_assert_int_eq(pthread_create(&th, NULL, stop_run, &s), 0);
  char *out = NULL;
  mcp_error err = MCP_ERROR_INIT;
  long switches = thread_switches();
  long long t0 = test_now_ms();
  mcp_status st = mcp_client_call_tool(c, "forever", NULL, o, &out, &err);
  long long now = test_now_ms();
  switches = thread_switches() - switches;
  ck_assert_int_eq(pthread_join(th, NULL), 0);
  ck_assert_msg(st == (how == STOP_CANCEL ? MCP_ECANCELLED : MCP_ECLOSED), "%s: %s",
                mcp_strerror(st), err.message);
  ck_assert_ptr_null(out);
  /* Woken by the stop: the 5 s interval did not run out first. */
  ck_assert_int_ge(now - t0, WAIT_MS);
  ck_assert_msg(now - s.fired_at < LONG_POLL_MS - WAIT_MS - 1000,
                "returned %lld ms after the stop: the poll interval ran out first",
                now - s.fired_at);
  ck_assert_int_eq(log_count("\"method\":\"tasks/get\""), 0);
  if (how == STOP_CANCEL) {
    ck_assert_ptr_nonnull(strstr(err.message, "tasks/cancel sent"));
    ck_assert_int_eq(log_count("\"method\":\"tasks/cancel\""), 1);
    /* Slept, not polled: a wait in 10 ms slices blocks 100 times a
     * second; this one a few times for the whole call (its requests,
     * the sleep, the wake). */
    ck_assert_msg(switches < 50, "%ld context switches in a %lld ms call", switches, now - t0);
    ck_assert_int_eq(call_cancels(), 0);
  } else {
    ck_assert_msg(strstr(err.message, "closed"), "%s", err.message);
    ck_assert_int_eq(log_count("\"method\":\"tasks/cancel\""), 0);
    /* Only the listen's own end (modern: "client closed") was sent. */
    ck_assert_int_eq(call_cancels() - log_count("\"reason\":\"client closed\""), 0);
  }
  mcp_error_clear(&err);
  mcp_call_options_free(o);
  mcp_cancel_unref(s.tok);
  if (how != STOP_FREE) mcp_client_free(c);
}

START_TEST(modern_wait_cancel) { wait_stopped("modern", STOP_CANCEL); }
END_TEST
START_TEST(modern_wait_close) { wait_stopped("modern", STOP_CLOSE); }
END_TEST
START_TEST(modern_wait_free) { wait_stopped("modern", STOP_FREE); }
END_TEST
START_TEST(legacy_wait_cancel) { wait_stopped("legacy", STOP_CANCEL); }
END_TEST
START_TEST(legacy_wait_close) { wait_stopped("legacy", STOP_CLOSE); }
END_TEST

static Suite *tasks_suite(void) {
  Suite *s = suite_create("tasks");
  TCase *p = tcase_create("parse");
  tcase_add_test(p, parse_both_eras);
  suite_add_tcase(s, p);
  TCase *m = tcase_create("modern");
  tcase_set_timeout(m, 60);
  tcase_add_test(m, modern_plain_slow);
  tcase_add_test(m, modern_plain_ask);
  tcase_add_test(m, modern_plain_boom);
  tcase_add_test(m, modern_async_cancel);
  tcase_add_test(m, modern_timeout_cancels);
  tcase_add_test(m, modern_async_slow);
  tcase_add_test(m, modern_undeclared_is_direct);
  tcase_add_test(m, modern_task_on_other_method);
  tcase_add_test(m, modern_push);
  tcase_add_test(m, modern_push_refused);
  tcase_add_test(m, modern_explicit);
  tcase_add_test(m, modern_explicit_input);
  tcase_add_test(m, modern_manager);
  suite_add_tcase(s, m);
  TCase *l = tcase_create("legacy");
  tcase_set_timeout(l, 60);
  tcase_add_test(l, legacy_plain_slow);
  tcase_add_test(l, legacy_plain_ask);
  tcase_add_test(l, legacy_plain_boom);
  tcase_add_test(l, legacy_async_cancel);
  tcase_add_test(l, legacy_async_slow);
  tcase_add_test(l, legacy_task_modes);
  tcase_add_test(l, legacy_explicit);
  tcase_add_test(l, legacy_manager);
  tcase_add_test(l, sdk_legacy_tasks);
  suite_add_tcase(s, l);
  TCase *w = tcase_create("wake");
  tcase_set_timeout(w, 60);
  tcase_add_test(w, modern_wait_cancel);
  tcase_add_test(w, modern_wait_close);
  tcase_add_test(w, modern_wait_free);
  tcase_add_test(w, legacy_wait_cancel);
  tcase_add_test(w, legacy_wait_close);
  suite_add_tcase(s, w);
  return s;
}

int main(void) { return run_suite(tasks_suite()); }
