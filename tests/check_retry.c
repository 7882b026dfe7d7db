/* SPDX-License-Identifier: MIT */
/*
 * check_retry.c: when the manager sends a failed call again (RFC 9110
 * 9.2.2).  Real servers count how often a call ran (--run-log of
 * mcp-h2-test-server's count tool and of mcp-fault-server): a call the
 * server may have run runs exactly once; a call that provably never
 * reached the server (REFUSED_STREAM) is sent again and succeeds; an
 * idempotent tool, or a host that opted in, is sent again; a resend whose
 * reconnect fails says why at once; permanent configuration errors are
 * reported once, without a reconnect loop.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ftw.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-c/json.h>

#include "check_server.h"
#include "check_util.h"
#include "mcpconn.h"

static char tmpdir[512];

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb;
  (void)flag;
  (void)ftw;
  return remove(path);
}

static void setup(void) {
  snprintf(tmpdir, sizeof(tmpdir), "/tmp/mcpconn-retry-XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown(void) {
  if (tmpdir[0]) nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
  tmpdir[0] = '\0';
}

static const char *tpath(const char *name) {
  static char bufs[8][600];
  static int k;
  char *b = bufs[k++ % 8];
  snprintf(b, 600, "%s/%s", tmpdir, name);
  return b;
}

static void write_file(const char *path, const char *fmt, ...) {
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  va_list ap;
  va_start(ap, fmt);
  vfprintf(f, fmt, ap);
  va_end(ap);
  fclose(f);
}

/* Lines in |path| (0 when it does not exist): the runs a server logged. */
static int runs(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  int n = 0, ch;
  while ((ch = fgetc(f)) != EOF)
    if (ch == '\n') n++;
  fclose(f);
  return n;
}

static mcp_manager_options *base_options(void) {
  mcp_manager_options *o = mcp_manager_options_new();
  ck_assert_ptr_nonnull(o);
  mcp_manager_options_set_discovery(o, false, false);
  mcp_manager_options_set_cache_dir(o, NULL);
  mcp_manager_options_set_timeout_ms(o, 20000);
  mcp_manager_options_set_startup_gate_ms(o, 20000);
  return o;
}

static mcp_manager *start(mcp_manager_options *o) {
  mcp_manager *m = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_msg(mcp_manager_start(o, &m, &err) == MCP_OK, "start: %s",
                err.message ? err.message : "");
  mcp_error_clear(&err);
  return m;
}

/* The status object of server |name| (caller puts), or NULL. */
static json_object *server_status(mcp_manager *m, const char *name) {
  char *js = NULL;
  ck_assert_int_eq(mcp_manager_servers(m, &js, NULL), MCP_OK);
  json_object *arr = json_tokener_parse(js);
  mcp_free(js);
  json_object *found = NULL;
  for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
    json_object *s = json_object_array_get_idx(arr, i);
    if (strcmp(json_object_get_string(json_object_object_get(s, "name")), name) == 0)
      found = json_object_get(s);
  }
  json_object_put(arr);
  return found;
}

static bool state_is(mcp_manager *m, const char *name, const char *state) {
  json_object *s = server_status(m, name);
  bool yes = s && strcmp(json_object_get_string(json_object_object_get(s, "state")), state) == 0;
  json_object_put(s);
  return yes;
}

/* An mcp-h2-test-server (h2c) with --run-log, and a manager with one
 * server "h" on it. */
typedef struct http_fixture {
  test_server srv;
  mcp_manager_options *o;
  mcp_manager *m;
  char log[600];
} http_fixture;

typedef struct log_lines {
  pthread_mutex_t mu;
  char text[8192];
} log_lines;

static void collect_log(void *user, mcp_log_level level, const char *msg) {
  log_lines *l = user;
  pthread_mutex_lock(&l->mu);
  size_t len = strlen(l->text);
  snprintf(l->text + len, sizeof(l->text) - len, "%d %s\n", (int)level, msg);
  pthread_mutex_unlock(&l->mu);
}

static log_lines g_log = {PTHREAD_MUTEX_INITIALIZER, ""};
static const char *g_extra_tool; /* --extra-tool for the next http_start */

static void http_start(http_fixture *f, mcp_http_version version, bool opt_in) {
  memset(f, 0, sizeof(*f));
  snprintf(f->log, sizeof(f->log), "%s", tpath("runs"));
  const char *argv[] = {test_env_path("MCP_H2_TEST_SERVER"),  "--allow-http1", "--run-log", f->log,
                        g_extra_tool ? "--extra-tool" : NULL, g_extra_tool,    NULL};
  f->srv = test_server_spawn(argv, 60000);
  char url[64];
  snprintf(url, sizeof(url), "http://127.0.0.1:%d/mcp", f->srv.port);
  mcp_client_options *co = mcp_client_options_new();
  ck_assert_int_eq(mcp_client_options_set_http(co, url, MCP_HTTP_TRANSPORT_STREAMABLE), MCP_OK);
  mcp_client_options_set_http_version(co, version);
  mcp_client_options_set_http_listener(co, false);
  f->o = base_options();
  mcp_manager_options_set_log(f->o, collect_log, &g_log);
  if (opt_in) mcp_manager_options_set_retry_non_idempotent(f->o, true);
  ck_assert_int_eq(mcp_manager_options_add_server(f->o, "h", co), MCP_OK);
  mcp_client_options_free(co);
  f->m = start(f->o);
  ck_assert(state_is(f->m, "h", "ready"));
}

static void http_stop(http_fixture *f) {
  mcp_manager_free(f->m);
  mcp_manager_options_free(f->o);
  if (f->srv.pid > 0) {
    close(f->srv.in_wr);
    waitpid(f->srv.pid, NULL, 0);
  }
}

static mcp_status call(mcp_manager *m, const char *tool, const char *args, char **res,
                       mcp_error *err) {
  *res = NULL;
  return mcp_manager_call_tool(m, tool, args, NULL, res, err);
}

/* The server runs the call, then drops the connection without answering:
 * the call fails and ran once.  Before: the manager resent it (2 runs;
 * over HTTP/1.1 the connection layer resent it too). */
static void dropped_after_run(mcp_http_version version) {
  http_fixture f;
  http_start(&f, version, false);
  char *res = NULL;
  mcp_error err = MCP_ERROR_INIT;
  /* Warm the connection: a reused keep-alive connection is the case the
   * HTTP/1.1 layer used to resend on. */
  ck_assert_int_eq(call(f.m, "h/echo", "{\"text\":\"warm\"}", &res, &err), MCP_OK);
  mcp_free(res);
  mcp_status st = call(f.m, "h/count", "{\"then\":\"drop\"}", &res, &err);
  ck_assert_msg(st == MCP_EIO || st == MCP_ECLOSED, "%s: %s", mcp_strerror(st),
                err.message ? err.message : "");
  ck_assert_ptr_null(res);
  ck_assert_int_eq(runs(f.log), 1);
  mcp_error_clear(&err);
  http_stop(&f);
  ck_assert_int_eq(runs(f.log), 1);
}

START_TEST(h2_dropped_call_runs_once) { dropped_after_run(MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE); }
END_TEST

START_TEST(h1_dropped_call_runs_once) { dropped_after_run(MCP_HTTP_VERSION_1_1); }
END_TEST

/* 503 after the tool ran: not resent.  Before: resent once (2 runs). */
START_TEST(http_503_runs_once) {
  http_fixture f;
  http_start(&f, MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE, false);
  char *res = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(call(f.m, "h/count", "{\"then\":\"503\"}", &res, &err), MCP_EHTTP);
  ck_assert_int_eq(err.http_status, 503);
  ck_assert_int_eq(runs(f.log), 1);
  mcp_error_clear(&err);
  http_stop(&f);
}
END_TEST

/* Refused twice with REFUSED_STREAM (unrun): the connection layer resends
 * once, the manager once more, and the third attempt runs, once. */
START_TEST(refused_stream_is_resent) {
  http_fixture f;
  http_start(&f, MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE, false);
  char *res = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = call(f.m, "h/count", "{\"refusals\":2,\"key\":\"r\"}", &res, &err);
  ck_assert_msg(st == MCP_OK, "%s: %s", mcp_strerror(st), err.message ? err.message : "");
  ck_assert_ptr_nonnull(strstr(res, "\"1\""));
  ck_assert_int_eq(runs(f.log), 1);
  mcp_free(res);
  mcp_error_clear(&err);
  http_stop(&f);
}
END_TEST

/* A host that opts in gets the resend (the retry drops again: 2 runs). */
START_TEST(opt_in_resends_non_idempotent) {
  http_fixture f;
  http_start(&f, MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE, true);
  char *res = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = call(f.m, "h/count", "{\"then\":\"drop\"}", &res, &err);
  ck_assert_int_ne(st, MCP_OK);
  ck_assert_msg(runs(f.log) == 2, "%d runs; %s: %s", runs(f.log), mcp_strerror(st),
                err.message ? err.message : "");
  mcp_error_clear(&err);
  http_stop(&f);
}
END_TEST

/* Issue 21: the server process dies in the middle of a tools/call.  That
 * call fails at once (it ran, and is not resent), and the next one meets
 * "connection refused": not sent, so resent after a reconnect, which fails
 * too, and the call says so at once, naming the server, instead of
 * waiting out its 20 s timeout and saying "timed out". */
START_TEST(http_server_died_fails_fast) {
  http_fixture f;
  http_start(&f, MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE, false);
  char *res = NULL;
  mcp_error err = MCP_ERROR_INIT;
  long long t0 = test_now_ms();
  mcp_status st = call(f.m, "h/count", "{\"then\":\"exit\"}", &res, &err);
  ck_assert_msg(st == MCP_EIO || st == MCP_ECLOSED, "%s: %s", mcp_strerror(st),
                err.message ? err.message : "");
  ck_assert_int_lt(test_now_ms() - t0, 5000);
  ck_assert_int_eq(runs(f.log), 1);
  mcp_error_clear(&err);
  ck_assert_int_eq(waitpid(f.srv.pid, NULL, 0), f.srv.pid);
  f.srv.pid = 0;
  close(f.srv.in_wr);
  t0 = test_now_ms();
  st = call(f.m, "h/count", "{}", &res, &err);
  long long took = test_now_ms() - t0;
  ck_assert_int_eq(st, MCP_EIO);
  ck_assert_msg(err.message && strstr(err.message, "connection refused") &&
                    strstr(err.message, "\"h\""),
                "%s", err.message ? err.message : "(null)");
  ck_assert_msg(took < 5000, "took %lld ms", took);
  mcp_error_clear(&err);
  http_stop(&f);
}
END_TEST

/* Item 18: a 2 GiB Content-Length is refused at the response head, at
 * once, not after reading (or waiting for) 16 MiB.  Before: the call waited
 * for the body until its timeout. */
static void huge_body(mcp_http_version version) {
  http_fixture f;
  http_start(&f, version, false);
  char *res = NULL;
  mcp_error err = MCP_ERROR_INIT;
  long long t0 = test_now_ms();
  mcp_status st = call(f.m, "h/count", "{\"then\":\"huge\"}", &res, &err);
  long long took = test_now_ms() - t0;
  ck_assert_msg(st == MCP_ETOOBIG, "%s: %s", mcp_strerror(st), err.message ? err.message : "");
  ck_assert_msg(strstr(err.message, "response of 2147483648 bytes (Content-Length) exceeds"), "%s",
                err.message);
  ck_assert_msg(took < 5000, "took %lld ms", took);
  mcp_error_clear(&err);
  http_stop(&f);
}

START_TEST(h2_huge_content_length_refused_at_head) {
  huge_body(MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
}
END_TEST

START_TEST(h1_huge_content_length_refused_at_head) { huge_body(MCP_HTTP_VERSION_1_1); }
END_TEST

/* Item 18: a tool whose name is a number is skipped with a warning that
 * names the server (it was skipped silently). */
START_TEST(numeric_tool_name_warns) {
  g_extra_tool = "{\"name\":42,\"inputSchema\":{\"type\":\"object\"}}";
  http_fixture f;
  http_start(&f, MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE, false);
  mcp_tool_list *l = mcp_manager_tools(f.m);
  ck_assert_uint_eq(mcp_tool_list_count(l), 3); /* echo, count and add */
  mcp_tool_list_unref(l);
  http_stop(&f); /* drains the log lane */
  pthread_mutex_lock(&g_log.mu);
  bool seen = strstr(g_log.text, "2 h: tools/list: tool 3 has a non-string name (42); skipped") !=
              NULL;
  pthread_mutex_unlock(&g_log.mu);
  ck_assert_msg(seen, "log: %s", g_log.text);
}
END_TEST

/* A stdio manager with one server "s": mcp-fault-server |flags|. */
static mcp_manager *stdio_start(mcp_manager_options **po, const char *flags) {
  write_file(
      tpath("mcp.json"),
      "{\"mcpServers\": {\"s\": {\"command\": \"%s\", \"args\": [\"--run-log\", \"%s\"%s]}}}",
      test_env_path("MCP_FAULT_SERVER"), tpath("runs"), flags);
  *po = base_options();
  ck_assert_int_eq(mcp_manager_options_add_config_file(*po, tpath("mcp.json")), MCP_OK);
  mcp_manager *m = start(*po);
  ck_assert(state_is(m, "s", "ready"));
  return m;
}

/* A stdio server that crashes in the middle of a (non-idempotent) tool:
 * the call fails with the exit status and ran once.  Before: the manager
 * restarted the server and ran it again. */
START_TEST(stdio_crash_mid_tool_runs_once) {
  setup();
  mcp_manager_options *o;
  mcp_manager *m = stdio_start(&o, "");
  char *res = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = call(m, "s/crash", "{}", &res, &err);
  ck_assert_int_eq(st, MCP_ECLOSED);
  ck_assert_msg(err.message && strstr(err.message, "status 3") && strstr(err.message, "\"s\""),
                "%s", err.message);
  mcp_error_clear(&err);
  mcp_manager_free(m);
  mcp_manager_options_free(o);
  ck_assert_int_eq(runs(tpath("runs")), 1);
  teardown();
}
END_TEST

/* The same crash under an idempotent tool (echo is annotated so): the
 * manager restarts the server and resends, and the call succeeds. */
START_TEST(stdio_idempotent_tool_is_resent) {
  setup();
  mcp_manager_options *o;
  mcp_manager *m = stdio_start(&o, ", \"--crash-every\", \"1\"");
  char *res = NULL;
  mcp_error err = MCP_ERROR_INIT;
  /* Every call crashes: the resend crashes as well, so two runs. */
  ck_assert_int_eq(call(m, "s/echo", "{\"text\":\"x\"}", &res, &err), MCP_ECLOSED);
  ck_assert_int_eq(runs(tpath("runs")), 2);
  mcp_error_clear(&err);
  mcp_manager_free(m);
  mcp_manager_options_free(o);
  teardown();
}
END_TEST

/* Item 15: a URL with user:password and a header with a control character
 * can never work: the server fails once with a configuration error, and is
 * not retried in backoff forever. */
START_TEST(config_errors_fail_once) {
  setup();
  write_file(tpath("mcp.json"),
             "{\"mcpServers\": {"
             "\"cred\": {\"type\": \"http\", \"url\": \"http://user:pw@127.0.0.1:9/mcp\"},"
             "\"ctl\": {\"type\": \"http\", \"url\": \"http://127.0.0.1:9/mcp\","
             " \"headers\": {\"X-Bad\": \"a\\u0001b\"}}}}");
  mcp_manager_options *o = base_options();
  ck_assert_int_eq(mcp_manager_options_add_config_file(o, tpath("mcp.json")), MCP_OK);
  mcp_manager_options_set_startup_gate_ms(o, 5000);
  mcp_manager *m = start(o);
  const char *names[] = {"cred", "ctl"};
  for (int i = 0; i < 2; i++) {
    json_object *s = server_status(m, names[i]);
    ck_assert_ptr_nonnull(s);
    const char *state = json_object_get_string(json_object_object_get(s, "state"));
    const char *last = json_object_get_string(json_object_object_get(s, "lastError"));
    ck_assert_msg(strcmp(state, "failed") == 0, "%s: %s (%s)", names[i], state, last ? last : "-");
    ck_assert_msg(last && strstr(last, "configuration error"), "%s: %s", names[i],
                  last ? last : "-");
    json_object_put(s);
    char *res = NULL;
    mcp_error err = MCP_ERROR_INIT;
    char tool[32];
    snprintf(tool, sizeof(tool), "%s/echo", names[i]);
    ck_assert_int_eq(call(m, tool, "{}", &res, &err), MCP_ECONFIG);
    mcp_error_clear(&err);
  }
  mcp_manager_free(m);
  mcp_manager_options_free(o);
  teardown();
}
END_TEST

/* Item 14: an https server that accepts TCP but never answers the TLS
 * ClientHello.  initialize times out (500 ms) and says the TLS handshake
 * stalled, not "server did not answer initialize" (what it said before). */
START_TEST(tls_stall_names_the_stage) {
  int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in sa = {0};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
  ck_assert_int_eq(listen(lfd, 16), 0);
  socklen_t sl = sizeof(sa);
  getsockname(lfd, (struct sockaddr *)&sa, &sl);
  char url[64], want[64];
  snprintf(url, sizeof(url), "https://127.0.0.1:%d/mcp", ntohs(sa.sin_port));
  snprintf(want, sizeof(want), "TLS handshake with 127.0.0.1:%d stalled", ntohs(sa.sin_port));
  mcp_client_options *o = mcp_client_options_new();
  ck_assert_int_eq(mcp_client_options_set_http(o, url, MCP_HTTP_TRANSPORT_STREAMABLE), MCP_OK);
  mcp_client_options_set_timeout_ms(o, 500);
  mcp_client *c = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp_client_connect(o, &c, &err), MCP_ETIMEDOUT);
  ck_assert_msg(err.message && strstr(err.message, want), "%s", err.message ? err.message : "");
  mcp_error_clear(&err);
  mcp_client_options_free(o);
  close(lfd);
}
END_TEST

/* ---- issue 21: each cause of a failed retry named, at once ---------------- */

/* A listener on 127.0.0.1:|port| (0: any) that accepts every connection
 * and resets it (SO_LINGER 0, then close): "connection reset by peer". */
typedef struct resetter {
  int lfd;
  int port;
  pthread_t th;
  int accepted;
} resetter;

static void *resetter_main(void *arg) {
  resetter *r = arg;
  for (;;) {
    int fd = accept(r->lfd, NULL, NULL);
    if (fd < 0) break; /* shut down */
    struct linger lg = {1, 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    __atomic_add_fetch(&r->accepted, 1, __ATOMIC_SEQ_CST);
    close(fd);
  }
  return NULL;
}

static void resetter_start(resetter *r, int port) {
  memset(r, 0, sizeof(*r));
  r->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ck_assert_int_ge(r->lfd, 0);
  int one = 1;
  setsockopt(r->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  struct sockaddr_in sa = {0};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  sa.sin_port = htons((uint16_t)port);
  ck_assert_msg(bind(r->lfd, (struct sockaddr *)&sa, sizeof(sa)) == 0, "bind %d: %s", port,
                strerror(errno));
  ck_assert_int_eq(listen(r->lfd, 64), 0);
  socklen_t sl = sizeof(sa);
  getsockname(r->lfd, (struct sockaddr *)&sa, &sl);
  r->port = ntohs(sa.sin_port);
  ck_assert_int_eq(pthread_create(&r->th, NULL, resetter_main, r), 0);
}

static void resetter_stop(resetter *r) {
  shutdown(r->lfd, SHUT_RDWR);
  pthread_join(r->th, NULL);
  close(r->lfd);
}

/* A manager with one HTTP server |name| at |url| (no CA: the system's),
 * a 20 s call timeout and a short start gate. */
static mcp_manager *url_manager(mcp_manager_options **po, const char *name, const char *url) {
  mcp_client_options *co = mcp_client_options_new();
  ck_assert_int_eq(mcp_client_options_set_http(co, url, MCP_HTTP_TRANSPORT_STREAMABLE), MCP_OK);
  mcp_client_options_set_http_listener(co, false);
  *po = base_options();
  mcp_manager_options_set_startup_gate_ms(*po, 0);
  ck_assert_int_eq(mcp_manager_options_add_server(*po, name, co), MCP_OK);
  mcp_client_options_free(co);
  return start(*po);
}

/* Calls |tool| on |m| and expects it to fail, well inside the 20 s call
 * timeout, with a status other than "timed out" and a message naming the
 * server |name| (quoted) and every string of |want| (NULL-terminated). */
static void expect_fast_cause(mcp_manager *m, const char *tool, const char *name,
                              const char *const *want) {
  char *res = NULL;
  mcp_error err = MCP_ERROR_INIT;
  long long t0 = test_now_ms();
  mcp_status st = call(m, tool, "{\"text\":\"x\"}", &res, &err);
  long long took = test_now_ms() - t0;
  const char *msg = err.message ? err.message : "(null)";
  ck_assert_msg(st != MCP_OK && st != MCP_ETIMEDOUT, "%s: %s", mcp_strerror(st), msg);
  ck_assert_msg(!strstr(msg, "timed out"), "%s", msg);
  char quoted[64];
  snprintf(quoted, sizeof(quoted), "\"%s\"", name);
  ck_assert_msg(strstr(msg, quoted), "no server name in: %s", msg);
  for (size_t i = 0; want[i]; i++)
    ck_assert_msg(strstr(msg, want[i]), "no %s in: %s", want[i], msg);
  ck_assert_msg(took < 10000, "took %lld ms: %s", took, msg);
  mcp_error_clear(&err);
  ck_assert_ptr_null(res);
}

/* The server "h" was ready; its process dies and its port now resets
 * every connection.  The call reconnects, its one retry meets the reset,
 * and it fails then with "reset", not after its 20 s as "timed out". */
START_TEST(http_reset_fails_fast) {
  http_fixture f;
  http_start(&f, MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE, false);
  kill(f.srv.pid, SIGKILL);
  ck_assert_int_eq(waitpid(f.srv.pid, NULL, 0), f.srv.pid);
  f.srv.pid = 0;
  close(f.srv.in_wr);
  resetter r;
  resetter_start(&r, f.srv.port);
  const char *want[] = {"reset", NULL};
  expect_fast_cause(f.m, "h/echo", "h", want);
  ck_assert_int_ge(__atomic_load_n(&r.accepted, __ATOMIC_SEQ_CST), 1);
  /* The ladder goes on for later calls: still backing off, not failed. */
  ck_assert(!state_is(f.m, "h", "failed"));
  http_stop(&f);
  resetter_stop(&r);
}
END_TEST

/* A server whose first connect met a reset is backing off; a call to it
 * makes its one retry now and fails with the reset, at once. */
START_TEST(reset_at_connect_fails_fast) {
  resetter r;
  resetter_start(&r, 0);
  char url[64];
  snprintf(url, sizeof(url), "http://127.0.0.1:%d/mcp", r.port);
  mcp_manager_options *o;
  mcp_manager *m = url_manager(&o, "rst", url);
  const char *want[] = {"reset", NULL};
  expect_fast_cause(m, "rst/echo", "rst", want);
  mcp_manager_free(m);
  mcp_manager_options_free(o);
  resetter_stop(&r);
}
END_TEST

/* A host name that cannot resolve (.invalid, RFC 6761: never resolves, no
 * network needed): the call fails at once naming the name. */
START_TEST(dns_failure_fails_fast) {
  mcp_manager_options *o;
  mcp_manager *m = url_manager(&o, "dns", "http://mcpconn-test.invalid:8080/mcp");
  const char *want[] = {"resolve", "mcpconn-test.invalid", NULL};
  expect_fast_cause(m, "dns/echo", "dns", want);
  /* Twice: the second call makes its own retry, not a wait for the ladder. */
  expect_fast_cause(m, "dns/echo", "dns", want);
  ck_assert(!state_is(m, "dns", "failed"));
  mcp_manager_free(m);
  mcp_manager_options_free(o);
}
END_TEST

/* A real TLS server whose certificate does not verify (self-signed): the
 * call fails at once with the verification error. */
START_TEST(tls_failure_fails_fast) {
  char cmd[2048];
  snprintf(cmd, sizeof(cmd),
           "cd '%s' && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 "
           "-nodes -keyout self.key -out self.pem -days 2 -subj /CN=localhost "
           "-addext subjectAltName=DNS:localhost,IP:127.0.0.1 >/dev/null 2>&1",
           tmpdir);
  ck_assert_int_eq(system(cmd), 0);
  const char *argv[] = {test_env_path("MCP_H2_TEST_SERVER"), "--tls", tpath("self.pem"),
                        tpath("self.key"), NULL};
  test_server srv = test_server_spawn(argv, 60000);
  char url[64];
  snprintf(url, sizeof(url), "https://127.0.0.1:%d/mcp", srv.port);
  mcp_manager_options *o;
  mcp_manager *m = url_manager(&o, "tls", url);
  const char *want[] = {"certificate verify failed", NULL};
  expect_fast_cause(m, "tls/echo", "tls", want);
  mcp_manager_free(m);
  mcp_manager_options_free(o);
  close(srv.in_wr);
  waitpid(srv.pid, NULL, 0);
}
END_TEST

static Suite *retry_suite(void) {
  Suite *s = suite_create("retry");
  TCase *tc = tcase_create("http");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, h2_dropped_call_runs_once);
  tcase_add_test(tc, h1_dropped_call_runs_once);
  tcase_add_test(tc, http_503_runs_once);
  tcase_add_test(tc, refused_stream_is_resent);
  tcase_add_test(tc, opt_in_resends_non_idempotent);
  tcase_add_test(tc, http_server_died_fails_fast);
  tcase_add_test(tc, h2_huge_content_length_refused_at_head);
  tcase_add_test(tc, h1_huge_content_length_refused_at_head);
  tcase_add_test(tc, numeric_tool_name_warns);
  suite_add_tcase(s, tc);
  tc = tcase_create("stdio");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, stdio_crash_mid_tool_runs_once);
  tcase_add_test(tc, stdio_idempotent_tool_is_resent);
  tcase_add_test(tc, config_errors_fail_once);
  suite_add_tcase(s, tc);
  tc = tcase_create("stages");
  tcase_set_timeout(tc, 30);
  tcase_add_test(tc, tls_stall_names_the_stage);
  suite_add_tcase(s, tc);
  tc = tcase_create("causes");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, http_reset_fails_fast);
  tcase_add_test(tc, reset_at_connect_fails_fast);
  tcase_add_test(tc, dns_failure_fails_fast);
  tcase_add_test(tc, tls_failure_fails_fast);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(retry_suite()); }
