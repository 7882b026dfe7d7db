/* SPDX-License-Identifier: MIT */
/*
 * check_redact.c: secrets never reach logs, error messages, diagnostics or
 * the CLI's output.
 *
 * Secrets are planted in every place the library accepts one: header values
 * given to mcp_client_options_add_header() (Authorization and others), a
 * config file's env and header values through ${VAR} expansion and through
 * "!cmd" output, a header value refused for holding CR/LF, and the output of
 * a secret command that fails.  Then the paths that report problems run
 * against real peers: HTTP error statuses (tests/mcp-h2-test-server),
 * refused connections, TLS failures, a stdio server that exits, invalid
 * config entries.  Everything the library says (every log line at debug
 * level, every mcp_error message, manager events, mcp_manager_servers(),
 * mcp_manager_diagnostics(), and bin/mcpconn's stdout and stderr with -v)
 * is captured and searched for each secret.  Each test also checks that the
 * failure it provoked was reported, so a test that reached nothing fails.
 */
#include "config.h"

#include <check.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_util.h"
#include "check_server.h"
#include "mcpconn.h"

#define SECRET_ENV "SECRET_ENV_VALUE_3c9d" /* $MCP_REDACT_SECRET */
#define SECRET_HDR "SECRET_HDR_VALUE_e41f" /* add_header() values */
#define SECRET_CMD "SECRET_CMD_OUT_7f3a"   /* a !cmd's output */
#define SECRET_CR "SECRET_CR_VALUE_91b2"   /* a refused header value */
#define SECRET_FAIL "SECRET_FAILCMD_55aa"  /* output of a failing !cmd */

static const char *const secrets[] = {SECRET_ENV, SECRET_HDR, SECRET_CMD, SECRET_CR, SECRET_FAIL};

/* ---- capture ------------------------------------------------------------------ */

static pthread_mutex_t cap_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cap_cond = PTHREAD_COND_INITIALIZER;
static char *cap_buf;
static size_t cap_len, cap_cap;
static int cap_events;

static void cap_add(const char *what, const char *text) {
  pthread_mutex_lock(&cap_lock);
  size_t need = strlen(what) + strlen(text ? text : "(null)") + 4;
  if (cap_len + need + 1 > cap_cap) {
    size_t cap = cap_cap ? cap_cap : 4096;
    while (cap < cap_len + need + 1) cap *= 2;
    char *p = realloc(cap_buf, cap);
    ck_assert_ptr_nonnull(p);
    cap_buf = p;
    cap_cap = cap;
  }
  cap_len += (size_t)snprintf(cap_buf + cap_len, cap_cap - cap_len, "%s: %s\n", what,
                              text ? text : "(null)");
  pthread_mutex_unlock(&cap_lock);
}

static void on_log(void *user, mcp_log_level level, const char *msg) {
  (void)user;
  (void)level;
  cap_add("log", msg);
}

static void on_event(void *user, mcp_manager_event e, const char *server, const char *detail) {
  (void)user;
  (void)e;
  cap_add("event", server);
  cap_add("event", detail);
  pthread_mutex_lock(&cap_lock);
  cap_events++;
  pthread_cond_broadcast(&cap_cond);
  pthread_mutex_unlock(&cap_lock);
}

static void cap_reset(void) {
  pthread_mutex_lock(&cap_lock);
  cap_len = 0;
  if (cap_buf) cap_buf[0] = '\0';
  pthread_mutex_unlock(&cap_lock);
}

/* Asserts that nothing captured holds a secret, and that |must| (a word
 * proving the failure was reported) is there. */
static void assert_clean(const char *must) {
  pthread_mutex_lock(&cap_lock);
  const char *all = cap_buf ? cap_buf : "";
  for (size_t i = 0; i < sizeof(secrets) / sizeof(secrets[0]); i++)
    ck_assert_msg(!strstr(all, secrets[i]), "secret %s leaked in:\n%s", secrets[i], all);
  if (must) ck_assert_msg(strstr(all, must) != NULL, "\"%s\" was not reported in:\n%s", must, all);
  pthread_mutex_unlock(&cap_lock);
}

/* ---- the HTTP test server -------------------------------------------------------- */

static test_server server_start(void) {
  const char *argv[] = {test_env_path("MCP_H2_TEST_SERVER"), "--allow-http1", NULL};
  return test_server_spawn(argv, 20000);
}

static void server_stop(test_server *s) {
  close(s->in_wr);
  int ws;
  waitpid(s->pid, &ws, 0);
}

/* A port nothing listens on: bound, never listened, closed at the end. */
static int dead_port(int *fd_out) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ck_assert_int_ge(fd, 0);
  struct sockaddr_in a = {0};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
  socklen_t alen = sizeof(a);
  ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
  *fd_out = fd;
  return ntohs(a.sin_port);
}

/* ---- client ----------------------------------------------------------------------- */

/* Connects with secret headers and debug logging; returns the status and
 * records the error message. */
static mcp_status client_try(const char *url, bool insecure) {
  mcp_client_options *o = mcp_client_options_new();
  ck_assert_ptr_nonnull(o);
  ck_assert_int_eq(mcp_client_options_set_http(o, url, MCP_HTTP_TRANSPORT_AUTO), MCP_OK);
  ck_assert_int_eq(mcp_client_options_add_header(o, "Authorization", "Bearer " SECRET_HDR), MCP_OK);
  ck_assert_int_eq(mcp_client_options_add_header(o, "X-Api-Key", SECRET_HDR), MCP_OK);
  /* Refused values: the error must not quote them either. */
  ck_assert_int_eq(mcp_client_options_add_header(o, "X-Bad", SECRET_CR "\r\nInjected: 1"),
                   MCP_EINVAL);
  mcp_client_options_set_insecure(o, insecure);
  mcp_client_options_set_timeout_ms(o, 20000);
  mcp_client_options_set_log(o, on_log, NULL);
  mcp_client *c = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_client_connect(o, &c, &err);
  cap_add("error", err.message);
  cap_add("error-data", err.data);
  mcp_error_clear(&err);
  if (c) {
    char *res = NULL;
    mcp_status cst = mcp_client_call_tool(c, "echo", "{}", NULL, &res, &err);
    if (cst != MCP_OK) cap_add("error", err.message);
    mcp_error_clear(&err);
    mcp_free(res);
    mcp_client_free(c); /* the log lane drains before this returns */
  }
  mcp_client_options_free(o);
  return st;
}

START_TEST(test_client_http_errors) {
  test_server s = server_start();
  char url[128];
  cap_reset();
  snprintf(url, sizeof(url), "http://127.0.0.1:%d/status?code=401", s.port);
  ck_assert_int_ne(client_try(url, false), MCP_OK);
  assert_clean("401");

  cap_reset();
  snprintf(url, sizeof(url), "http://127.0.0.1:%d/status?code=500", s.port);
  ck_assert_int_ne(client_try(url, false), MCP_OK);
  assert_clean("500");

  /* TLS to a plain-text server. */
  cap_reset();
  snprintf(url, sizeof(url), "https://127.0.0.1:%d/mcp", s.port);
  ck_assert_int_ne(client_try(url, true), MCP_OK);
  assert_clean("error");
  server_stop(&s);

  int fd;
  int port = dead_port(&fd);
  cap_reset();
  snprintf(url, sizeof(url), "http://127.0.0.1:%d/mcp", port);
  ck_assert_int_ne(client_try(url, false), MCP_OK);
  assert_clean("refused");
  close(fd);
}
END_TEST

/* ---- manager and config ------------------------------------------------------------- */

static char tmpdir[512];

static void make_tmpdir(void) {
  snprintf(tmpdir, sizeof(tmpdir), "/tmp/check_redact.XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void remove_tmpdir(void) {
  char cmd[600];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
  ck_assert_int_eq(system(cmd), 0);
}

/* Writes the config with every kind of secret; returns its path. */
static const char *write_config(int http_port, int dead) {
  static char path[600];
  snprintf(path, sizeof(path), "%s/mcp.json", tmpdir);
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  const char *demo = test_env_path("MCP_DEMO_SERVER");
  fprintf(f,
          "{\"mcpServers\": {\n"
          " \"demo\": {\"command\": \"%s\", \"env\": {"
          "\"API_TOKEN\": \"${MCP_REDACT_SECRET}\", "
          "\"CMD_TOKEN\": \"!printf " SECRET_CMD "\"}},\n"
          " \"dies\": {\"command\": \"/bin/sh\", \"args\": [\"-c\", \"exit 3\"], "
          "\"env\": {\"API_TOKEN\": \"${MCP_REDACT_SECRET}\"}},\n"
          " \"web\": {\"type\": \"http\", "
          "\"url\": \"http://127.0.0.1:%d/status?code=401\", \"headers\": {"
          "\"Authorization\": \"Bearer ${MCP_REDACT_SECRET}\", "
          "\"X-Cmd\": \"!printf " SECRET_CMD "\"}},\n"
          " \"refused\": {\"type\": \"http\", \"url\": \"http://127.0.0.1:%d/mcp\", "
          "\"headers\": {\"Authorization\": \"Bearer ${MCP_REDACT_SECRET}\"}},\n"
          " \"badhdr\": {\"type\": \"http\", \"url\": \"http://127.0.0.1:%d/mcp\", "
          "\"headers\": {\"X-Bad\": \"" SECRET_CR "\\r\\nInjected: 1\"}},\n"
          " \"badcmd\": {\"command\": \"%s\", \"env\": {"
          "\"T\": \"!printf " SECRET_FAIL "; exit 4\"}}\n"
          "}}\n",
          demo, http_port, dead, dead, demo);
  ck_assert_int_eq(fclose(f), 0);
  return path;
}

/* True when no server is still connecting. */
static bool settled(mcp_manager *m) {
  char *json = NULL;
  ck_assert_int_eq(mcp_manager_servers(m, &json, NULL), MCP_OK);
  bool busy = strstr(json, "\"connecting\"") != NULL;
  mcp_free(json);
  return !busy;
}

START_TEST(test_manager_config_secrets) {
  make_tmpdir();
  ck_assert_int_eq(setenv("MCP_REDACT_SECRET", SECRET_ENV, 1), 0);
  test_server s = server_start();
  int dfd;
  int dead = dead_port(&dfd);
  const char *cfg = write_config(s.port, dead);
  cap_reset();

  mcp_manager_options *o = mcp_manager_options_new();
  ck_assert_ptr_nonnull(o);
  ck_assert_int_eq(mcp_manager_options_add_config_file(o, cfg), MCP_OK);
  mcp_manager_options_set_discovery(o, false, false);
  ck_assert_int_eq(mcp_manager_options_set_cache_dir(o, NULL), MCP_OK);
  mcp_manager_options_set_timeout_ms(o, 20000);
  mcp_manager_options_set_log(o, on_log, NULL);
  mcp_manager_options_set_event_handler(o, on_event, NULL);
  mcp_manager *m = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp_manager_start(o, &m, &err), MCP_OK);
  mcp_manager_options_free(o);

  /* Wait (woken by state events) until every server has settled. */
  long long end = test_now_ms() + 60000;
  while (!settled(m)) {
    ck_assert_msg(test_now_ms() < end, "servers did not settle");
    pthread_mutex_lock(&cap_lock);
    int seen = cap_events;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 2;
    while (cap_events == seen)
      if (pthread_cond_timedwait(&cap_cond, &cap_lock, &ts) != 0) break;
    pthread_mutex_unlock(&cap_lock);
  }

  char *json = NULL;
  ck_assert_int_eq(mcp_manager_servers(m, &json, NULL), MCP_OK);
  cap_add("servers", json);
  mcp_free(json);
  ck_assert_int_eq(mcp_manager_diagnostics(m, &json, NULL), MCP_OK);
  cap_add("diagnostics", json);
  mcp_free(json);

  const char *calls[] = {"web/echo",    "refused/echo", "dies/echo",
                         "badhdr/echo", "demo/echo",    "mcp__demo_fail"};
  mcp_call_options *co = mcp_call_options_new();
  mcp_call_options_set_timeout_ms(co, 5000);
  for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
    char *res = NULL;
    mcp_status st = mcp_manager_call_tool(m, calls[i], "{\"text\":\"x\"}", co, &res, &err);
    if (st != MCP_OK) cap_add("error", err.message);
    if (res) cap_add("result", res);
    mcp_error_clear(&err);
    mcp_free(res);
  }
  mcp_call_options_free(co);
  mcp_manager_free(m);

  /* Each planted failure was reported, without its secret. */
  assert_clean("401");            /* web: HTTP status */
  assert_clean("exit");           /* dies: exit status */
  assert_clean("secret command"); /* badcmd: failing !cmd */
  assert_clean("CR or LF");       /* badhdr: refused value */
  assert_clean("refused");        /* refused: connect error */
  server_stop(&s);
  close(dfd);
  remove_tmpdir();
}
END_TEST

/* ---- CLI ---------------------------------------------------------------------------- */

/* Runs |cmd| through the shell, capturing stdout and stderr together. */
static void run_cli(const char *cmd) {
  FILE *p = popen(cmd, "r");
  ck_assert_ptr_nonnull(p);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf) - 1, p)) > 0) {
    buf[n] = '\0';
    cap_add("cli", buf);
  }
  int rc = pclose(p);
  ck_assert_int_ne(rc, -1);
}

START_TEST(test_cli_output) {
  make_tmpdir();
  ck_assert_int_eq(setenv("MCP_REDACT_SECRET", SECRET_ENV, 1), 0);
  test_server s = server_start();
  int dfd;
  int dead = dead_port(&dfd);
  const char *cfg = write_config(s.port, dead);
  const char *cli = test_env_path("MCPCONN_BIN");
  char cmd[2048];
  cap_reset();
  snprintf(cmd, sizeof(cmd),
           "XDG_CACHE_HOME='%s' '%s' -v --timeout 8000 --config '%s' servers 2>&1", tmpdir, cli,
           cfg);
  run_cli(cmd);
  snprintf(cmd, sizeof(cmd),
           "XDG_CACHE_HOME='%s' '%s' -v --timeout 8000 --config '%s' servers --json 2>&1", tmpdir,
           cli, cfg);
  run_cli(cmd);
  assert_clean("401");
  assert_clean("CR or LF");
  cap_reset();
  snprintf(cmd, sizeof(cmd),
           "XDG_CACHE_HOME='%s' '%s' -v --timeout 8000 --url "
           "'http://127.0.0.1:%d/status?code=403' -H 'Authorization: Bearer " SECRET_HDR
           "' -H 'X-Key: " SECRET_HDR "' tools 2>&1",
           tmpdir, cli, s.port);
  run_cli(cmd);
  assert_clean("403");
  cap_reset();
  snprintf(cmd, sizeof(cmd),
           "'%s' --url 'http://127.0.0.1:%d/mcp' -H 'Host: " SECRET_HDR
           "' -H 'Bad Name: " SECRET_HDR "' tools 2>&1",
           cli, s.port);
  run_cli(cmd);
  assert_clean("header");
  server_stop(&s);
  close(dfd);
  remove_tmpdir();
}
END_TEST

static Suite *redact_suite(void) {
  Suite *s = suite_create("redact");
  TCase *tc = tcase_create("redact");
  tcase_set_timeout(tc, 180);
  tcase_add_test(tc, test_client_http_errors);
  tcase_add_test(tc, test_manager_config_secrets);
  tcase_add_test(tc, test_cli_output);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  signal(SIGPIPE, SIG_IGN);
  return run_suite(redact_suite());
}
