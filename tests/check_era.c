/* SPDX-License-Identifier: MIT */
/*
 * check_era.c: which era a server speaks, decided the way the spec's
 * backward-compatibility rules say (mcp_era.h), and the modern wire that
 * follows.  The pure parts (modes, the probe's verdict, resultType, the
 * modern _meta) on fixed cases; then real stdio servers: the bundled demo
 * server (legacy), the official TypeScript SDK v2 server in both eras and
 * modern-only, a server that exits on the probe and one that stays silent,
 * and a scripted server (tests/era/era-server.mjs) for each probe answer
 * the SDKs have met.  What the client sent is read back from the server's
 * side (tests/era/tee-stdin.sh), not taken on trust.
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_util.h"
#include "mcp_cache.h"
#include "mcp_era.h"
#include "mcp_ttl.h"
#include "mcpconn.h"

#define CONNECT_MS 60000 /* node's first start can be slow on a busy CI box */

/* ---- pure --------------------------------------------------------------- */

START_TEST(modes) {
  mcp_era_mode m;
  const char *pin;
  ck_assert(mcp__era_parse_mode(NULL, &m, &pin) && m == MCP_ERA_AUTO && !pin);
  ck_assert(mcp__era_parse_mode("auto", &m, &pin) && m == MCP_ERA_AUTO);
  ck_assert(mcp__era_parse_mode("modern", &m, &pin) && m == MCP_ERA_MODERN && !pin);
  ck_assert(mcp__era_parse_mode("legacy", &m, &pin) && m == MCP_ERA_LEGACY && !pin);
  ck_assert(mcp__era_parse_mode("2026-07-28", &m, &pin) && m == MCP_ERA_MODERN);
  ck_assert_str_eq(pin, "2026-07-28");
  ck_assert(mcp__era_parse_mode("2025-06-18", &m, &pin) && m == MCP_ERA_LEGACY);
  ck_assert_str_eq(pin, "2025-06-18");
  ck_assert(!mcp__era_parse_mode("2024-11-05", &m, &pin));
  ck_assert(!mcp__era_parse_mode("Modern", &m, &pin));
  mcp_client_options *o = mcp_client_options_new();
  ck_assert_int_eq(mcp_client_options_set_protocol(o, "latest"), MCP_EINVAL);
  ck_assert_int_eq(mcp_client_options_set_protocol(o, "legacy"), MCP_OK);
  mcp_client_options_free(o);
}
END_TEST

static mcp_era_verdict judge_err(int code, const char *data, int http, mcp_status st, bool stdio,
                                 const char **v) {
  mcp_error e = MCP_ERROR_INIT;
  e.status = st;
  e.rpc_code = code;
  e.http_status = http;
  e.data = data ? strdup(data) : NULL;
  const char *why = NULL;
  mcp_era_verdict r = mcp__era_judge(st, NULL, 0, &e, stdio, v, &why);
  if (r == MCP_ERA_INCOMPATIBLE) ck_assert_ptr_nonnull(why);
  mcp_error_clear(&e);
  return r;
}

START_TEST(verdicts) {
  const char *v = NULL, *why = NULL;
  static const char modern[] = "{\"supportedVersions\":[\"2099-01-01\",\"2026-07-28\"]}";
  ck_assert_int_eq(mcp__era_judge(MCP_OK, modern, strlen(modern), NULL, true, &v, &why),
                   MCP_ERA_IS_MODERN);
  ck_assert_str_eq(v, "2026-07-28");
  static const char legacy_only[] = "{\"supportedVersions\":[\"2025-11-25\"]}";
  ck_assert_int_eq(mcp__era_judge(MCP_OK, legacy_only, strlen(legacy_only), NULL, true, &v, &why),
                   MCP_ERA_IS_LEGACY);
  ck_assert_int_eq(mcp__era_judge(MCP_OK, "{}", 2, NULL, true, &v, &why), MCP_ERA_IS_LEGACY);
  ck_assert_int_eq(mcp__era_judge(MCP_OK, "null", 4, NULL, true, &v, &why), MCP_ERA_IS_LEGACY);
  /* Never keyed to one code: every legacy answer the SDKs met. */
  static const int codes[] = {-32601, -32602, -32600, -32000, -32001, -32603, 1};
  for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
    ck_assert_int_eq(judge_err(codes[i], NULL, 0, MCP_ERPC, true, &v), MCP_ERA_IS_LEGACY);
  /* -32022: what it lists decides. */
  ck_assert_int_eq(judge_err(-32022, "{\"supported\":[\"2026-07-28\"],\"requested\":\"x\"}", 0,
                             MCP_ERPC, true, &v),
                   MCP_ERA_RETRY);
  ck_assert_str_eq(v, "2026-07-28");
  ck_assert_int_eq(judge_err(-32022, "{\"supported\":[\"2025-11-25\"]}", 0, MCP_ERPC, true, &v),
                   MCP_ERA_IS_LEGACY);
  ck_assert_int_eq(judge_err(-32022, "{\"supported\":[\"2099-01-01\"]}", 0, MCP_ERPC, true, &v),
                   MCP_ERA_INCOMPATIBLE);
  ck_assert_int_eq(judge_err(-32022, NULL, 0, MCP_ERPC, true, &v), MCP_ERA_IS_LEGACY);
  /* stdio: silence and exit are legacy; over HTTP they are connect errors. */
  ck_assert_int_eq(judge_err(0, NULL, 0, MCP_ETIMEDOUT, true, &v), MCP_ERA_IS_LEGACY);
  ck_assert_int_eq(judge_err(0, NULL, 0, MCP_ECLOSED, true, &v), MCP_ERA_IS_LEGACY);
  ck_assert_int_eq(judge_err(0, NULL, 0, MCP_ETIMEDOUT, false, &v), MCP_ERA_NO_EVIDENCE);
  ck_assert_int_eq(judge_err(0, NULL, 0, MCP_ECLOSED, false, &v), MCP_ERA_NO_EVIDENCE);
  /* HTTP: a non-auth 4xx is legacy; auth, 5xx and transport failures say
   * nothing. */
  ck_assert_int_eq(judge_err(0, NULL, 400, MCP_EHTTP, false, &v), MCP_ERA_IS_LEGACY);
  ck_assert_int_eq(judge_err(0, NULL, 404, MCP_EHTTP, false, &v), MCP_ERA_IS_LEGACY);
  ck_assert_int_eq(judge_err(0, NULL, 401, MCP_EHTTP, false, &v), MCP_ERA_NO_EVIDENCE);
  ck_assert_int_eq(judge_err(0, NULL, 403, MCP_EHTTP, false, &v), MCP_ERA_NO_EVIDENCE);
  ck_assert_int_eq(judge_err(0, NULL, 503, MCP_EHTTP, false, &v), MCP_ERA_NO_EVIDENCE);
  ck_assert_int_eq(judge_err(0, NULL, 0, MCP_EIO, true, &v), MCP_ERA_NO_EVIDENCE);
  ck_assert_int_eq(judge_err(0, NULL, 0, MCP_ETLS, false, &v), MCP_ERA_NO_EVIDENCE);
}
END_TEST

START_TEST(result_kinds_and_meta) {
#define KIND(s) mcp__era_result_kind(s, strlen(s))
  ck_assert_int_eq(KIND("{\"content\":[]}"), MCP_RESULT_COMPLETE);
  ck_assert_int_eq(KIND("{\"resultType\":\"complete\"}"), MCP_RESULT_COMPLETE);
  ck_assert_int_eq(KIND("{\"a\":1,\"resultType\":\"input_required\"}"), MCP_RESULT_INPUT_REQUIRED);
  ck_assert_int_eq(KIND("{\"resultType\":\"task\"}"), MCP_RESULT_TASK);
  ck_assert_int_eq(KIND("{\"resultType\":\"completed\"}"), MCP_RESULT_UNKNOWN);
  ck_assert_int_eq(KIND("{\"resultType\":1}"), MCP_RESULT_UNKNOWN);
  /* Only the top level counts. */
  ck_assert_int_eq(KIND("{\"x\":{\"resultType\":\"task\"}}"), MCP_RESULT_COMPLETE);
  /* "complete" first or last is read without a walk; nested, or inside a
   * string, it must not hide the real kind. */
  ck_assert_int_eq(KIND("{\"a\":[1],\"resultType\":\"complete\"}"), MCP_RESULT_COMPLETE);
  ck_assert_int_eq(KIND("{\"resultType\":\"complete\",\"a\":[1]}"), MCP_RESULT_COMPLETE);
  ck_assert_int_eq(KIND("{\"resultType\":\"input_required\",\"a\":{\"resultType\":\"complete\"}}"),
                   MCP_RESULT_INPUT_REQUIRED);
  ck_assert_int_eq(KIND("{\"resultType\":\"task\",\"t\":\",\\\"resultType\\\":\\\"complete\\\"\"}"),
                   MCP_RESULT_TASK);
  ck_assert_int_eq(KIND("{\"x\":{\"resultType\":\"complete\",\"y\":1},\"resultType\":\"task\"}"),
                   MCP_RESULT_TASK);
  ck_assert_int_eq(KIND("{\"xresultType\":\"complete\",\"resultType\":\"task\"}"), MCP_RESULT_TASK);
#undef KIND
  /* The edges found without a walk, and the bytes that remove the member:
   * the result with them cut is the result without it. */
  static const char *const edge[][2] = {
      {"{\"a\":1,\"resultType\":\"complete\"}", "{\"a\":1}"},
      {"{\"resultType\":\"complete\",\"a\":1}", "{\"a\":1}"},
      {"{\"resultType\":\"complete\"}", "{}"},
      {"{\"a\":1,\"resultType\":\"complete\",\"b\":2}", NULL}, /* inside: the walk's */
      {"{\"a\":\"resultType\":\"complete\"}", NULL},           /* not valid JSON's edge */
      {"{\"resultType\":\"task\"}", NULL},
      {"\"resultType\":\"complete\"", NULL},
      {"{}", NULL}};
  for (size_t i = 0; i < sizeof(edge) / sizeof(*edge); i++) {
    const char *t = edge[i][0];
    size_t from = 99, n = 99;
    bool at = mcp__era_complete_edge(t, strlen(t), &from, &n);
    ck_assert_msg(at == (edge[i][1] != NULL), "%s", t);
    if (!at) continue;
    char cut[128];
    snprintf(cut, sizeof(cut), "%.*s%s", (int)from, t, t + from + n);
    ck_assert_str_eq(cut, edge[i][1]);
  }
  size_t len = 0;
  char *m = mcp__era_meta("2026-07-28", "{\"roots\":{}}", "h\"o", "1.0", &len);
  ck_assert_str_eq(m, "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                      "\"io.modelcontextprotocol/clientCapabilities\":{\"roots\":{}},"
                      "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"h\\\"o\","
                      "\"version\":\"1.0\"}");
  ck_assert_uint_eq(strlen(m), len);
  free(m);
}
END_TEST

/* ---- real servers ------------------------------------------------------- */

static char tmpdir[4096];

static void make_tmp(void) {
  const char *base = getenv("MCP_TEST_TMPDIR");
  snprintf(tmpdir, sizeof(tmpdir), "%s/era.XXXXXX", base && *base ? base : "/tmp");
  ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void rm_tmp(void) {
  char cmd[4200];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
  ck_assert_int_eq(system(cmd), 0);
}

static char *slurp(const char *name) {
  char path[4200];
  snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
  FILE *f = fopen(path, "r");
  if (!f) return strdup("");
  static char buf[1 << 18];
  size_t n = fread(buf, 1, sizeof(buf) - 1, f);
  fclose(f);
  buf[n] = '\0';
  return strdup(buf);
}

static int count_lines(const char *s) {
  int n = 0;
  for (; *s; s++) n += *s == '\n';
  return n;
}

static int count_of(const char *s, const char *needle) {
  int n = 0;
  for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle)) n++;
  return n;
}

/* Connects with |protocol| to argv (after the tee wrapper that records to
 * tmpdir/sent and tmpdir/starts). */
static mcp_request_fn handler_fn; /* registered for elicitation/create when set */
static void *handler_user;
static mcp_notification_fn notify_fn; /* registered when set */

static mcp_status connect_to(const char *protocol, const char *const *argv, int64_t timeout,
                             mcp_client **c, mcp_error *err) {
  char log[4200], mark[4200];
  snprintf(log, sizeof(log), "%s/sent", tmpdir);
  snprintf(mark, sizeof(mark), "%s/starts", tmpdir);
  const char *full[16];
  size_t n = 0;
  static char tee[4200];
  snprintf(tee, sizeof(tee), "%s/tests/era/tee-stdin.sh", test_env_path("MCP_SRCDIR"));
  full[n++] = tee;
  full[n++] = log;
  full[n++] = mark;
  for (size_t i = 0; argv[i] && n < 15; i++) full[n++] = argv[i];
  full[n] = NULL;
  mcp_client_options *o = mcp_client_options_new();
  ck_assert_int_eq(mcp_client_options_set_stdio(o, full), MCP_OK);
  ck_assert_int_eq(mcp_client_options_set_protocol(o, protocol), MCP_OK);
  mcp_client_options_set_timeout_ms(o, timeout);
  mcp_client_options_set_client_info(o, "check_era", "9.9");
  if (notify_fn) mcp_client_options_set_notification_handler(o, notify_fn, NULL);
  if (handler_fn)
    ck_assert_int_eq(
        mcp_client_options_set_request_handler(o, "elicitation/create", handler_fn, handler_user),
        MCP_OK);
  *c = NULL;
  mcp_status st = mcp_client_connect(o, c, err);
  mcp_client_options_free(o);
  return st;
}

static const char *demo(void) { return test_env_path("MCP_DEMO_SERVER"); }

static char node[64] = "node";
static char v2_server[4200], era_server[4200], exiter[4200];

static void paths(void) {
  /* MCP_INTEROP_HOME (distcheck): the source tree's copy, which has the
   * node_modules the server imports. */
  const char *home = getenv("MCP_INTEROP_HOME");
  snprintf(v2_server, sizeof(v2_server), "%s/v2-dual-stdio.mjs",
           home && *home ? home : test_env_path("MCP_INTEROP_DIR"));
  snprintf(era_server, sizeof(era_server), "%s/tests/era/era-server.mjs",
           test_env_path("MCP_SRCDIR"));
  snprintf(exiter, sizeof(exiter), "%s/tests/era/exit-on-probe.sh", test_env_path("MCP_SRCDIR"));
}

/* Every line the client sent after a modern start carries the modern _meta
 * and none is initialize or ping. */
static void assert_all_modern(const char *sent) {
  ck_assert_int_gt(count_lines(sent), 0);
  ck_assert_int_eq(count_of(sent, "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\""),
                   count_lines(sent));
  ck_assert_int_eq(count_of(sent, "\"io.modelcontextprotocol/clientCapabilities\":{"),
                   count_lines(sent));
  ck_assert_int_eq(count_of(sent, "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"check_era\""),
                   count_lines(sent));
  ck_assert_ptr_null(strstr(sent, "\"initialize\""));
  ck_assert_ptr_null(strstr(sent, "\"ping\""));
}

START_TEST(legacy_demo_server_pays_one_probe) {
  make_tmp();
  const char *argv[] = {demo(), "--protocol", "legacy", NULL};
  mcp_client *c;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(connect_to("auto", argv, CONNECT_MS, &c, &err), MCP_OK);
  ck_assert_str_eq(mcp_client_protocol_version(c), "2025-11-25");
  char *out = NULL;
  ck_assert_int_eq(mcp_client_call_tool(c, "echo", "{\"text\":\"x\"}", NULL, &out, &err), MCP_OK);
  free(out);
  mcp_client_free(c);
  char *sent = slurp("sent"), *starts = slurp("starts");
  /* One probe, answered -32601, then the legacy handshake on the same
   * process. */
  ck_assert_int_eq(count_of(sent, "\"server/discover\""), 1);
  ck_assert_int_eq(count_of(sent, "\"initialize\""), 1);
  ck_assert_int_eq(count_lines(starts), 1);
  free(sent);
  free(starts);
  /* Mode legacy: no probe at all. */
  rm_tmp();
  make_tmp();
  ck_assert_int_eq(connect_to("legacy", argv, CONNECT_MS, &c, &err), MCP_OK);
  mcp_client_free(c);
  sent = slurp("sent");
  ck_assert_ptr_null(strstr(sent, "server/discover"));
  free(sent);
  /* Mode modern: a legacy server is an error naming the server and the
   * revision, not a fallback. */
  rm_tmp();
  make_tmp();
  ck_assert_int_eq(connect_to("modern", argv, CONNECT_MS, &c, &err), MCP_EVERSION);
  ck_assert_ptr_nonnull(strstr(err.message, "does not speak MCP 2026-07-28"));
  ck_assert_ptr_nonnull(strstr(err.message, "tee-stdin.sh")); /* the server label: argv[0] */
  mcp_error_clear(&err);
  sent = slurp("sent");
  ck_assert_ptr_null(strstr(sent, "\"initialize\""));
  free(sent);
  rm_tmp();
}
END_TEST

/* ---- multi-round-trip requests (SEP-2322) -------------------------------- */

typedef struct elicit_rec {
  pthread_mutex_t mu;
  int calls;
  mcp_client *c;       /* when set, "unrelated" is called from the handler */
  char unrelated[512]; /* its result */
  bool fail;           /* answer with an error */
  mcp_cancel *fire;    /* fired from the handler when set */
} elicit_rec;

static mcp_status on_elicit(void *user, const char *method, const char *params, char **result,
                            mcp_error *err) {
  elicit_rec *r = user;
  ck_assert_str_eq(method, "elicitation/create");
  ck_assert_ptr_nonnull(strstr(params, "\"requestedSchema\""));
  pthread_mutex_lock(&r->mu);
  r->calls++;
  pthread_mutex_unlock(&r->mu);
  if (r->c) {
    /* Another call while this one waits for its retry: it must carry none
     * of this call's input (conformance's parallel isolation). */
    char *out = NULL;
    mcp_error e = MCP_ERROR_INIT;
    ck_assert_int_eq(mcp_client_call_tool(r->c, "unrelated", NULL, NULL, &out, &e), MCP_OK);
    snprintf(r->unrelated, sizeof(r->unrelated), "%s", out);
    free(out);
  }
  if (r->fire) mcp_cancel_fire(r->fire);
  if (r->fail) {
    err->status = MCP_ERPC;
    err->rpc_code = -1;
    err->message = strdup("the user said no");
    return MCP_ERPC;
  }
  *result = strdup("{\"action\":\"accept\",\"content\":{\"ok\":true}}");
  return MCP_OK;
}

typedef struct async_wait {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool done;
  mcp_status st;
  char out[1024];
} async_wait;

static void on_async(void *user, mcp_status st, const char *result, const mcp_error *err) {
  async_wait *w = user;
  pthread_mutex_lock(&w->mu);
  w->st = st;
  snprintf(w->out, sizeof(w->out), "%s",
           result ? result : (err && err->message ? err->message : ""));
  w->done = true;
  pthread_cond_broadcast(&w->cv);
  pthread_mutex_unlock(&w->mu);
}

START_TEST(v2_sdk_server_both_eras) {
  make_tmp();
  paths();
  const char *argv[] = {node, v2_server, NULL};
  mcp_client *c;
  mcp_error err = MCP_ERROR_INIT;
  elicit_rec rec = {.mu = PTHREAD_MUTEX_INITIALIZER};
  handler_fn = on_elicit;
  handler_user = &rec;
  ck_assert_int_eq(connect_to("auto", argv, CONNECT_MS, &c, &err), MCP_OK);
  ck_assert_str_eq(mcp_client_protocol_version(c), "2026-07-28");
  ck_assert_ptr_nonnull(strstr(mcp_client_server_info(c), "\"supportedVersions\""));
  char *out = NULL;
  /* The SDK's multi-round-trip tool: one input round, answered by the
   * same handler a legacy elicitation reaches. */
  ck_assert_int_eq(mcp_client_call_tool(c, "confirm", NULL, NULL, &out, &err), MCP_OK);
  ck_assert_msg(strstr(out, "confirmed {\\\"ok\\\":true") != NULL, "%s", out);
  free(out);
  ck_assert_int_eq(rec.calls, 1);
  ck_assert_int_eq(mcp_client_call_tool(c, "echo", "{\"text\":\"hi\"}", NULL, &out, &err), MCP_OK);
  ck_assert_ptr_nonnull(strstr(out, "\"text\":\"hi\""));
  free(out);
  ck_assert_int_eq(mcp_client_list_tools(c, NULL, &out, &err), MCP_OK);
  ck_assert_ptr_nonnull(strstr(out, "\"name\":\"echo\""));
  free(out);
  /* No ping in 2026-07-28: liveness is a server/discover round trip. */
  ck_assert_int_eq(mcp_client_ping(c, NULL, &err), MCP_OK);
  mcp_client_free(c);
  char *sent = slurp("sent");
  assert_all_modern(sent);
  ck_assert_int_eq(count_of(sent, "\"server/discover\""), 2);
  /* The retry: the SDK's state echoed, the answer under its key. */
  ck_assert_ptr_nonnull(strstr(sent, "\"inputResponses\":{\"c\":{\"action\":\"accept\""));
  ck_assert_ptr_nonnull(strstr(sent, "\"requestState\":\"v2-state\""));
  free(sent);
  rm_tmp();
  /* The same server in mode legacy: initialize, and no modern _meta; the
   * same tool asks by a server->client elicitation/create. */
  make_tmp();
  ck_assert_int_eq(connect_to("legacy", argv, CONNECT_MS, &c, &err), MCP_OK);
  ck_assert_str_eq(mcp_client_protocol_version(c), "2025-11-25");
  ck_assert_int_eq(mcp_client_call_tool(c, "echo", "{\"text\":\"hi\"}", NULL, &out, &err), MCP_OK);
  free(out);
  ck_assert_int_eq(mcp_client_call_tool(c, "confirm", NULL, NULL, &out, &err), MCP_OK);
  ck_assert_msg(strstr(out, "confirmed {\\\"ok\\\":true") != NULL, "%s", out);
  free(out);
  ck_assert_int_eq(rec.calls, 2);
  mcp_client_free(c);
  handler_fn = NULL;
  sent = slurp("sent");
  ck_assert_ptr_null(strstr(sent, "inputResponses"));
  ck_assert_ptr_null(strstr(sent, "io.modelcontextprotocol/protocolVersion"));
  ck_assert_int_eq(count_of(sent, "\"initialize\""), 1);
  free(sent);
  rm_tmp();
}
END_TEST

/* Progress and cancellation with the SDK v2 server over stdio, in each
 * era (_i 0: auto, which is modern; 1: legacy): both are
 * notifications on stdio, and the SDK's handler sees the abort. */
START_TEST(v2_sdk_progress_and_cancel) {
  make_tmp();
  paths();
  char abort_log[4200];
  snprintf(abort_log, sizeof(abort_log), "%s/aborts", tmpdir);
  setenv("ABORT_LOG", abort_log, 1);
  const char *argv[] = {node, v2_server, NULL};
  mcp_client *c;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(connect_to(_i ? "legacy" : "auto", argv, CONNECT_MS, &c, &err), MCP_OK);
  unsetenv("ABORT_LOG");
  ck_assert_str_eq(mcp_client_protocol_version(c), _i ? "2025-11-25" : "2026-07-28");
  test_progress_and_cancel(c, abort_log);
  mcp_client_free(c);
  char *sent = slurp("sent");
  ck_assert_int_eq(count_of(sent, "\"method\":\"notifications/cancelled\""), 1);
  ck_assert_int_eq(count_of(sent, "\"progressToken\""), 2);
  /* Modern: every request carries the version (the notification needs
   * none), and there is no handshake. */
  if (!_i) {
    ck_assert_int_eq(count_of(sent, "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\""),
                     count_lines(sent) - 1);
    ck_assert_ptr_null(strstr(sent, "\"initialize\""));
  }
  free(sent);
  rm_tmp();
}
END_TEST

START_TEST(v2_sdk_modern_only_server) {
  make_tmp();
  paths();
  setenv("LEGACY", "reject", 1);
  const char *argv[] = {node, v2_server, NULL};
  mcp_client *c;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(connect_to("auto", argv, CONNECT_MS, &c, &err), MCP_OK);
  ck_assert_str_eq(mcp_client_protocol_version(c), "2026-07-28");
  char *out = NULL;
  ck_assert_int_eq(mcp_client_call_tool(c, "echo", "{\"text\":\"m\"}", NULL, &out, &err), MCP_OK);
  free(out);
  mcp_client_free(c);
  /* Mode legacy cannot reach it: the server's own refusal is the cause. */
  ck_assert_int_ne(connect_to("legacy", argv, CONNECT_MS, &c, &err), MCP_OK);
  ck_assert_int_eq(err.rpc_code, -32022);
  mcp_error_clear(&err);
  unsetenv("LEGACY");
  rm_tmp();
}
END_TEST

/* A server that exits on the probe, or never answers it, is started again
 * and spoken to in the legacy era. */
static void probe_kills(const char *how, int64_t timeout) {
  make_tmp();
  paths();
  char mark[4200];
  snprintf(mark, sizeof(mark), "%s/inner", tmpdir);
  const char *argv[] = {exiter, mark, how, demo(), NULL};
  mcp_client *c;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(connect_to("auto", argv, timeout, &c, &err), MCP_OK);
  ck_assert_str_eq(mcp_client_protocol_version(c), "2025-11-25");
  char *out = NULL;
  ck_assert_int_eq(mcp_client_call_tool(c, "echo", "{\"text\":\"after\"}", NULL, &out, &err),
                   MCP_OK);
  ck_assert_ptr_nonnull(strstr(out, "after"));
  free(out);
  mcp_client_free(c);
  char *inner = slurp("inner"), *sent = slurp("sent");
  ck_assert_int_eq(count_lines(inner), 2); /* probed, then started again */
  ck_assert_int_eq(count_of(sent, "\"server/discover\""), 1);
  ck_assert_int_eq(count_of(sent, "\"initialize\""), 1);
  free(inner);
  free(sent);
  rm_tmp();
}

START_TEST(server_exits_on_probe) { probe_kills("exit", CONNECT_MS); }
END_TEST

START_TEST(server_silent_on_probe) { probe_kills("silent", 1500); }
END_TEST

/* The scripted answers. */
static mcp_status scripted(const char *mode, const char *protocol, mcp_client **c, mcp_error *err) {
  paths();
  const char *argv[] = {node, era_server, mode, NULL};
  return connect_to(protocol, argv, CONNECT_MS, c, err);
}

START_TEST(probe_answers) {
  mcp_client *c;
  mcp_error err = MCP_ERROR_INIT;
  /* -32022 naming 2026-07-28 for 2026-07-28 (conformance request-metadata):
   * one retry at it, modern. */
  make_tmp();
  ck_assert_int_eq(scripted("retry-once", "auto", &c, &err), MCP_OK);
  ck_assert_str_eq(mcp_client_protocol_version(c), "2026-07-28");
  mcp_client_free(c);
  char *sent = slurp("sent");
  ck_assert_int_eq(count_of(sent, "\"server/discover\""), 2);
  ck_assert_ptr_null(strstr(sent, "\"initialize\""));
  free(sent);
  rm_tmp();
  /* A DiscoverResult with legacy versions only, a -32022 naming only legacy
   * ones: legacy. */
  static const char *const legacy_modes[] = {"legacy-list", "legacy-32022"};
  for (size_t i = 0; i < 2; i++) {
    make_tmp();
    ck_assert_int_eq(scripted(legacy_modes[i], "auto", &c, &err), MCP_OK);
    ck_assert_str_eq(mcp_client_protocol_version(c), "2025-11-25");
    mcp_client_free(c);
    sent = slurp("sent");
    ck_assert_int_eq(count_of(sent, "\"initialize\""), 1);
    free(sent);
    rm_tmp();
  }
  /* Only revisions we do not speak: an error, not a guess. */
  make_tmp();
  ck_assert_int_eq(scripted("alien-32022", "auto", &c, &err), MCP_EVERSION);
  ck_assert_ptr_nonnull(strstr(err.message, "revisions mcpconn does not"));
  mcp_error_clear(&err);
  rm_tmp();
  /* A pinned legacy revision is what initialize offers. */
  make_tmp();
  ck_assert_int_eq(scripted("modern", "2025-06-18", &c, &err), MCP_OK);
  ck_assert_str_eq(mcp_client_protocol_version(c), "2025-06-18");
  mcp_client_free(c);
  sent = slurp("sent");
  ck_assert_ptr_nonnull(strstr(sent, "\"protocolVersion\":\"2025-06-18\""));
  ck_assert_ptr_null(strstr(sent, "server/discover"));
  free(sent);
  rm_tmp();
}
END_TEST

START_TEST(result_types_on_modern) {
  make_tmp();
  mcp_client *c;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(scripted("modern", "auto", &c, &err), MCP_OK);
  char *out = NULL;
  /* Absent resultType: complete (older servers, conformance's
   * default-result-type-complete). */
  ck_assert_int_eq(mcp_client_call_tool(c, "plain", NULL, NULL, &out, &err), MCP_OK);
  free(out);
  /* resultType is the wire's: the host gets the result without it (as the
   * TypeScript SDK v2 client does), the same as from a legacy server;
   * wherever it stood, what is left is valid JSON. */
  ck_assert_int_eq(mcp_client_call_tool(c, "done", NULL, NULL, &out, &err), MCP_OK);
  ck_assert_str_eq(out, "{\"content\":[{\"type\":\"text\",\"text\":\"done\"}]}");
  free(out);
  ck_assert_int_eq(mcp_client_call_tool(c, "first", NULL, NULL, &out, &err), MCP_OK);
  ck_assert_str_eq(out, "{\"content\":[{\"type\":\"text\",\"text\":\"first\"}]}");
  free(out);
  ck_assert_int_eq(mcp_client_request(c, "server/discover", NULL, NULL, &out, &err), MCP_OK);
  ck_assert_ptr_null(strstr(out, "resultType"));
  ck_assert_ptr_nonnull(strstr(out, "\"capabilities\":{\"tools\":{}},\"ttlMs\":0,"));
  free(out);
  out = NULL;
  ck_assert_int_eq(mcp_client_call_tool(c, "weird", NULL, NULL, &out, &err), MCP_EPROTO);
  ck_assert_ptr_null(out);
  ck_assert_ptr_nonnull(strstr(err.message, "unknown resultType"));
  mcp_error_clear(&err);
  /* Input the client has no handler for (and did not declare). */
  ck_assert_int_eq(mcp_client_call_tool(c, "ask", NULL, NULL, &out, &err), MCP_EPROTO);
  ck_assert_ptr_nonnull(strstr(err.message, "input \"a\" by roots/list"));
  ck_assert_ptr_nonnull(strstr(err.message, "no handler"));
  mcp_error_clear(&err);
  ck_assert_int_eq(mcp_client_list_tools(c, NULL, &out, &err), MCP_OK);
  free(out);
  /* Resource not found, by either era's code: MCP_ENOTFOUND, the code kept. */
  ck_assert_int_eq(mcp_client_read_resource(c, "mem://here", NULL, &out, &err), MCP_OK);
  ck_assert_str_eq(out, "{\"contents\":[{\"uri\":\"mem://here\",\"text\":\"here\"}]}");
  free(out);
  static const struct {
    const char *uri;
    int code;
  } gone[] = {{"mem://gone", -32602}, {"mem://old", -32002}};
  for (size_t i = 0; i < 2; i++) {
    ck_assert_int_eq(mcp_client_read_resource(c, gone[i].uri, NULL, &out, &err), MCP_ENOTFOUND);
    ck_assert_ptr_null(out);
    ck_assert_int_eq(err.status, MCP_ENOTFOUND);
    ck_assert_int_eq(err.rpc_code, gone[i].code);
    ck_assert_ptr_nonnull(strstr(err.message, "Resource not found"));
    mcp_error_clear(&err);
  }
  mcp_client_free(c);
  char *sent = slurp("sent");
  assert_all_modern(sent);
  free(sent);
  rm_tmp();
}
END_TEST

START_TEST(mrtr_rounds) {
  make_tmp();
  elicit_rec rec = {.mu = PTHREAD_MUTEX_INITIALIZER};
  handler_fn = on_elicit;
  handler_user = &rec;
  mcp_client *c;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(scripted("modern", "auto", &c, &err), MCP_OK);
  /* The server checks each retry (state echoed exactly, a new id, this
   * round's answers only) and says "ok" or "bad: why". */
  char *out = NULL;
  rec.c = c;
  ck_assert_int_eq(mcp_client_call_tool(c, "confirm", NULL, NULL, &out, &err), MCP_OK);
  ck_assert_msg(strstr(out, "\"text\":\"ok {") != NULL, "%s", out);
  ck_assert_ptr_nonnull(strstr(out, "dflt")); /* SEP-1034 default filled in */
  free(out);
  ck_assert_int_eq(rec.calls, 1);
  ck_assert_ptr_nonnull(strstr(rec.unrelated, "ok unrelated"));
  rec.c = NULL;
  /* Three rounds, each with its own key and state. */
  ck_assert_int_eq(mcp_client_call_tool(c, "rounds", NULL, NULL, &out, &err), MCP_OK);
  ck_assert_msg(strstr(out, "ok 3 rounds") != NULL, "%s", out);
  free(out);
  ck_assert_int_eq(rec.calls, 4);
  /* A round with requestState only: retried at once, no handler, no
   * inputResponses. */
  ck_assert_int_eq(mcp_client_call_tool(c, "state-only", NULL, NULL, &out, &err), MCP_OK);
  ck_assert_msg(strstr(out, "ok shed") != NULL, "%s", out);
  free(out);
  ck_assert_int_eq(rec.calls, 4);
  /* prompts/get may ask too. */
  ck_assert_int_eq(mcp_client_get_prompt(c, "p", NULL, NULL, &out, &err), MCP_OK);
  ck_assert_msg(strstr(out, "ok {") != NULL, "%s", out);
  free(out);
  /* Async: the rounds run on the lane, the callback gets the end. */
  async_wait w = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
  ck_assert_int_eq(mcp_client_call_tool_async(c, "confirm", NULL, NULL, on_async, &w, &err),
                   MCP_OK);
  pthread_mutex_lock(&w.mu);
  while (!w.done) pthread_cond_wait(&w.cv, &w.mu);
  pthread_mutex_unlock(&w.mu);
  ck_assert_int_eq(w.st, MCP_OK);
  ck_assert_msg(strstr(w.out, "\"text\":\"ok {") != NULL, "%s", w.out);
  /* Bounded: a server that asks on every round fails the call after ten
   * retries. */
  ck_assert_int_eq(mcp_client_call_tool(c, "forever", NULL, NULL, &out, &err), MCP_EPROTO);
  ck_assert_ptr_null(out);
  ck_assert_ptr_nonnull(strstr(err.message, "after 10 rounds"));
  mcp_error_clear(&err);
  /* Neither inputRequests nor requestState: a protocol error, no retry. */
  ck_assert_int_eq(mcp_client_call_tool(c, "empty", NULL, NULL, &out, &err), MCP_EPROTO);
  ck_assert_ptr_nonnull(strstr(err.message, "neither inputRequests nor requestState"));
  mcp_error_clear(&err);
  /* No list may ask for input. */
  ck_assert_int_eq(mcp_client_request(c, "tools/list", "{\"ask\":true}", NULL, &out, &err),
                   MCP_EPROTO);
  ck_assert_ptr_nonnull(strstr(err.message, "allows only on"));
  mcp_error_clear(&err);
  /* A handler's failure ends the call with it; no retry is sent. */
  rec.fail = true;
  ck_assert_int_eq(mcp_client_call_tool(c, "confirm", NULL, NULL, &out, &err), MCP_ERPC);
  ck_assert_ptr_nonnull(strstr(err.message, "handler failed on input \"c\": the user said no"));
  mcp_error_clear(&err);
  rec.fail = false;
  /* A token fired while the host answers: no retry. */
  mcp_call_options *co = mcp_call_options_new();
  rec.fire = mcp_cancel_new();
  mcp_call_options_set_cancel(co, rec.fire);
  ck_assert_int_eq(mcp_client_call_tool(c, "confirm", NULL, co, &out, &err), MCP_ECANCELLED);
  mcp_error_clear(&err);
  mcp_call_options_free(co);
  mcp_cancel_unref(rec.fire);
  rec.fire = NULL;
  mcp_client_free(c);
  handler_fn = NULL;
  char *sent = slurp("sent");
  assert_all_modern(sent);
  /* forever: the first request and ten retries. */
  ck_assert_int_eq(count_of(sent, "\"name\":\"forever\""), 11);
  /* confirm: sync (2), async (2), failed (1: no retry), cancelled (1). */
  ck_assert_int_eq(count_of(sent, "\"name\":\"confirm\""), 6);
  ck_assert_int_eq(count_of(sent, "\"name\":\"empty\""), 1);
  free(sent);
  rm_tmp();
}
END_TEST

/* ---- SEP-2549: cached lists ------------------------------------------------ */

START_TEST(ttl_store) {
  mcp_ttl *s = mcp__ttl_new();
  ck_assert_ptr_nonnull(s);
  int64_t now = mcp__now_ms();
  /* Private: only within the authorization context it was read in. */
  uint64_t g = mcp__ttl_gen(s, 0);
  mcp__ttl_put(s, 0, g, "[1]", 3, now + 60000, true, "alice");
  char *t = mcp__ttl_get(s, 0, "alice", now);
  ck_assert_str_eq(t, "[1]");
  mcp__free(t);
  ck_assert_ptr_null(mcp__ttl_get(s, 0, "bob", now));
  ck_assert_ptr_null(mcp__ttl_get(s, 0, "", now));
  /* Public: in any context; stale at received + ttl exactly. */
  mcp__ttl_put(s, 1, mcp__ttl_gen(s, 1), "[2]", 3, now + 60000, false, "alice");
  ck_assert_ptr_nonnull(t = mcp__ttl_get(s, 1, "bob", now));
  mcp__free(t);
  ck_assert_ptr_null(mcp__ttl_get(s, 1, "bob", now + 60000));
  ck_assert_ptr_null(mcp__ttl_get(s, 1, "alice", now)); /* dropped when found stale */
  /* ttlMs 0 is never kept. */
  mcp__ttl_put(s, 2, mcp__ttl_gen(s, 2), "[3]", 3, mcp__now_ms(), false, "");
  ck_assert_ptr_null(mcp__ttl_get(s, 2, "", mcp__now_ms() - 1));
  /* An invalidation between the request and its answer wins. */
  g = mcp__ttl_gen(s, 3);
  mcp__ttl_invalidate(s, 3);
  mcp__ttl_put(s, 3, g, "[4]", 3, now + 60000, false, "");
  ck_assert_ptr_null(mcp__ttl_get(s, 3, "", now));
  mcp__ttl_invalidate(s, 0);
  ck_assert_ptr_null(mcp__ttl_get(s, 0, "alice", now));
  ck_assert_ptr_null(mcp__ttl_get(s, MCP_TTL_SLOTS, "", now)); /* no such slot */
  mcp__ttl_free(s);
}
END_TEST

static int log_count(const char *needle) {
  char *l = slurp("log");
  int n = count_of(l, needle);
  free(l);
  return n;
}

static bool tools_have(mcp_client *c, const char *name) {
  char *out = NULL;
  mcp_error err = MCP_ERROR_INIT;
  bool has = mcp_client_list_tools(c, NULL, &out, &err) == MCP_OK && strstr(out, name);
  mcp_free(out);
  mcp_error_clear(&err);
  return has;
}

static int list_count(mcp_client *c) {
  char *out = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp_client_list_tools(c, NULL, &out, &err), MCP_OK);
  ck_assert_ptr_nonnull(strstr(out, "\"plain\""));
  mcp_free(out);
  return log_count("\"method\":\"tools/list\"");
}

static void ignore_note(void *user, const char *method, const char *params) {
  (void)user;
  (void)method;
  (void)params;
}

/* Connects to the scripted listen server with tools/list cacheable for
 * |ttl| ms in |scope|; what the server received goes to tmpdir/log. */
static mcp_client *cached_server(const char *ttl, const char *scope) {
  make_tmp();
  char log[4200];
  snprintf(log, sizeof(log), "%s/log", tmpdir);
  setenv("LOG", log, 1);
  setenv("TTL_MS", ttl, 1);
  setenv("SCOPE", scope, 1);
  mcp_client *c;
  mcp_error err = MCP_ERROR_INIT;
  notify_fn = ignore_note; /* the listen opens for a host that hears */
  ck_assert_int_eq(scripted("listen", "auto", &c, &err), MCP_OK);
  notify_fn = NULL;
  ck_assert_str_eq(mcp_client_protocol_version(c), "2026-07-28");
  unsetenv("LOG");
  unsetenv("TTL_MS");
  unsetenv("SCOPE");
  return c;
}

START_TEST(cached_lists) {
  /* Fresh: served without a request; a list_changed on the listen drops it
   * at once (the old list would be served for a minute otherwise). */
  mcp_client *c = cached_server("60000", "private");
  ck_assert_int_eq(list_count(c), 1);
  ck_assert_int_eq(list_count(c), 1);
  ck_assert_int_eq(list_count(c), 1);
  char *out = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp_client_call_tool(c, "grow", NULL, NULL, &out, &err), MCP_OK);
  mcp_free(out);
  ck_assert_msg(WAIT_UNTIL(tools_have(c, "\"extra\""), 20000), "list_changed did not invalidate");
  int n = log_count("\"method\":\"tools/list\"");
  ck_assert_int_ge(n, 2);
  ck_assert_int_eq(list_count(c), n); /* the new list is cached in its turn */
  mcp_client_free(c);
  rm_tmp();
  /* Expiry: within the TTL no request, after it one. */
  c = cached_server("1500", "public");
  int64_t t0 = mcp__now_ms();
  ck_assert_int_eq(list_count(c), 1);
  int second = list_count(c);
  if (mcp__now_ms() - t0 < 1500) ck_assert_int_eq(second, 1);
  ck_assert_msg(WAIT_UNTIL(list_count(c) == 2, 20000), "the expired list was served");
  ck_assert_int_ge(mcp__now_ms() - t0, 1500);
  mcp_client_free(c);
  rm_tmp();
  /* ttlMs 0: never served from the cache. */
  c = cached_server("0", "public");
  ck_assert_int_eq(list_count(c), 1);
  ck_assert_int_eq(list_count(c), 2);
  mcp_client_free(c);
  rm_tmp();
}
END_TEST

/* The same server on the legacy wire: nothing is cached (no such fields in
 * 2025-11-25, whatever a server sends). */
START_TEST(legacy_lists_not_cached) {
  make_tmp();
  char log[4200];
  snprintf(log, sizeof(log), "%s/log", tmpdir);
  setenv("LOG", log, 1);
  setenv("TTL_MS", "60000", 1);
  mcp_client *c;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(scripted("listen", "legacy", &c, &err), MCP_OK);
  unsetenv("LOG");
  unsetenv("TTL_MS");
  ck_assert_int_eq(list_count(c), 1);
  ck_assert_int_eq(list_count(c), 2);
  mcp_client_free(c);
  rm_tmp();
}
END_TEST

/*
 * SEP-2549 across restarts: the manager's disk cache keeps a server's
 * tools only when they cannot differ by account.  The scripted modern
 * server over stdio, started from a config file whose hash is the cache's
 * key: a plain configuration keeps them; a `!command` secret in the
 * environment (its output is not in the hash) withholds them, keeping the
 * era only, unless the server marked the list public; the legacy era
 * (no cacheScope: private) withholds them too.
 */
static char *manager_cache_file(const char *protocol, const char *scope, bool secret) {
  make_tmp();
  paths();
  char cfg[4200], cache[4200], text[16384];
  snprintf(cfg, sizeof(cfg), "%s/mcp.json", tmpdir);
  snprintf(cache, sizeof(cache), "%s/cache", tmpdir);
  snprintf(text, sizeof(text),
           "{\"mcpServers\": {\"s\": {\"command\": \"%s\", \"args\": [\"%s\", \"listen\"], "
           "\"protocol\": \"%s\", \"env\": {\"TTL_MS\": \"60000\", \"SCOPE\": \"%s\"%s}}}}",
           node, era_server, protocol, scope, secret ? ", \"TOKEN\": \"!printf s3cret\"" : "");
  FILE *f = fopen(cfg, "w");
  ck_assert_ptr_nonnull(f);
  fputs(text, f);
  fclose(f);
  mcp_manager_options *o = mcp_manager_options_new();
  mcp_manager_options_set_discovery(o, false, false);
  ck_assert_int_eq(mcp_manager_options_add_config_file(o, cfg), MCP_OK);
  ck_assert_int_eq(mcp_manager_options_set_cache_dir(o, cache), MCP_OK);
  mcp_manager_options_set_timeout_ms(o, CONNECT_MS);
  mcp_manager *m = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp_manager_start(o, &m, &err), MCP_OK);
  mcp_manager_options_free(o);
  ck_assert_int_eq(mcp_manager_wait_ready(m, NULL, CONNECT_MS, &err), MCP_OK);
  mcp_manager_free(m);
  char *path = NULL;
  ck_assert_int_eq(mcp__cache_path(cache, "s", &path), MCP_OK);
  ck_assert(strncmp(path, tmpdir, strlen(tmpdir)) == 0);
  char *file = slurp(path + strlen(tmpdir) + 1);
  mcp__free(path);
  rm_tmp();
  return file;
}

START_TEST(disk_cache_keeps_accounts_apart) {
  /* Identity fixed by the configuration: kept, whatever the scope. */
  char *f = manager_cache_file("auto", "private", false);
  ck_assert_msg(strstr(f, "\"tools\":[") && strstr(f, "\"plain\"") && !strstr(f, "\"private\""),
                "%s", f);
  ck_assert_ptr_nonnull(strstr(f, "\"era\":\"modern\""));
  free(f);
  /* A secret command: withheld, the era kept. */
  f = manager_cache_file("auto", "private", true);
  ck_assert_msg(strstr(f, "\"private\":true") && !strstr(f, "\"tools\"") && !strstr(f, "plain"),
                "%s", f);
  ck_assert_ptr_nonnull(strstr(f, "\"era\":\"modern\""));
  free(f);
  /* ... unless the server says the list is the same for everyone. */
  f = manager_cache_file("auto", "public", true);
  ck_assert_msg(strstr(f, "\"tools\":[") && strstr(f, "\"plain\""), "%s", f);
  free(f);
  /* Legacy lists carry no scope: private. */
  f = manager_cache_file("legacy", "public", true);
  ck_assert_msg(strstr(f, "\"private\":true") && !strstr(f, "plain"), "%s", f);
  ck_assert_ptr_nonnull(strstr(f, "\"era\":\"legacy\""));
  free(f);
}
END_TEST

static Suite *era_suite(void) {
  Suite *s = suite_create("era");
  TCase *pure = tcase_create("pure");
  tcase_add_test(pure, modes);
  tcase_add_test(pure, verdicts);
  tcase_add_test(pure, result_kinds_and_meta);
  tcase_add_test(pure, ttl_store);
  suite_add_tcase(s, pure);
  TCase *live = tcase_create("servers");
  tcase_set_timeout(live, 240);
  tcase_add_test(live, legacy_demo_server_pays_one_probe);
  tcase_add_test(live, v2_sdk_server_both_eras);
  tcase_add_loop_test(live, v2_sdk_progress_and_cancel, 0, 2);
  tcase_add_test(live, v2_sdk_modern_only_server);
  tcase_add_test(live, server_exits_on_probe);
  tcase_add_test(live, server_silent_on_probe);
  tcase_add_test(live, probe_answers);
  tcase_add_test(live, result_types_on_modern);
  tcase_add_test(live, mrtr_rounds);
  tcase_add_test(live, cached_lists);
  tcase_add_test(live, legacy_lists_not_cached);
  tcase_add_test(live, disk_cache_keeps_accounts_apart);
  suite_add_tcase(s, live);
  return s;
}

int main(void) { return run_suite(era_suite()); }
