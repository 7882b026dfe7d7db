/* SPDX-License-Identifier: MIT */
/*
 * check_http_pool.c: HTTP clients share one connection per origin
 * (lib/mcp_http_pool.c, issue 21).  Against a real mcp-h2-test-server
 * whose /stats counts the TCP connections it accepted:
 *  - 16 MCP clients to one origin (h2c) make one connection and one pooled
 *    client; 32 make two (16 owners each);
 *  - HTTP/1.1: 16 clients calling one at a time share a keep-alive pool;
 *  - different settings (another HTTP version mode) are not shared;
 *  - freeing one client while another calls leaves the other working;
 *  - a lost connection fails the calls in flight of every owner at once
 *    (not at their 20 s timeout), and the next calls reconnect.
 */
#include "config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-c/json.h>

#include "check_server.h"
#include "check_util.h"
#include "mcp_http_pool.h"
#include "mcpconn.h"

static test_server start_server(const char *extra) {
  const char *argv[] = {test_env_path("MCP_H2_TEST_SERVER"), "--allow-http1",
                        extra ? "--chaos-only" : NULL, extra, NULL};
  return test_server_spawn(argv, 60000);
}

static void stop_server(test_server *s) {
  close(s->in_wr);
  waitpid(s->pid, NULL, 0);
}

/* GET /stats over a fresh HTTP/1.1 connection: the counter |key|. */
static long stat_of(int port, const char *key) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in sa = {0};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  sa.sin_port = htons((uint16_t)port);
  ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
  const char req[] = "GET /stats HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  ck_assert_int_eq(write(fd, req, sizeof(req) - 1), (ssize_t)(sizeof(req) - 1));
  char buf[4096];
  size_t len = 0;
  ssize_t k;
  while (len < sizeof(buf) - 1 && (k = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
    len += (size_t)k;
  buf[len] = '\0';
  close(fd);
  char *body = strstr(buf, "\r\n\r\n");
  ck_assert_msg(body, "no /stats answer: %s", buf);
  json_object *o = json_tokener_parse(body + 4);
  ck_assert_msg(o, "bad /stats: %s", body + 4);
  json_object *v = NULL;
  ck_assert(json_object_object_get_ex(o, key, &v));
  long n = (long)json_object_get_int64(v);
  json_object_put(o);
  return n;
}

static mcp_client *connect_to(int port, mcp_http_version mode) {
  char url[64];
  snprintf(url, sizeof(url), "http://127.0.0.1:%d/mcp", port);
  mcp_client_options *o = mcp_client_options_new();
  ck_assert_int_eq(mcp_client_options_set_http(o, url, MCP_HTTP_TRANSPORT_STREAMABLE), MCP_OK);
  mcp_client_options_set_http_version(o, mode);
  mcp_client_options_set_timeout_ms(o, 20000);
  mcp_client *c = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_client_connect(o, &c, &err);
  ck_assert_msg(st == MCP_OK, "connect: %s", err.message ? err.message : mcp_strerror(st));
  mcp_client_options_free(o);
  return c;
}

static mcp_status echo(mcp_client *c, mcp_error *err) {
  char *res = NULL;
  mcp_status st = mcp_client_call_tool(c, "echo", "{\"text\":\"hi\"}", NULL, &res, err);
  if (st == MCP_OK) ck_assert_ptr_nonnull(strstr(res, "hi"));
  mcp_free(res);
  return st;
}

static void echo_ok(mcp_client *c) {
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = echo(c, &err);
  ck_assert_msg(st == MCP_OK, "echo: %s", err.message ? err.message : mcp_strerror(st));
}

/* |n| clients on h2c, each calls: connections made (besides /stats' own). */
static long shared_connections(test_server *srv, size_t n, size_t want_pooled) {
  long before = stat_of(srv->port, "connections");
  mcp_client *c[64];
  for (size_t i = 0; i < n; i++) c[i] = connect_to(srv->port, MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
  for (size_t i = 0; i < n; i++) echo_ok(c[i]);
  size_t clients = 0, owners = 0;
  mcp__http_pool_stats(&clients, &owners);
  ck_assert_uint_eq(owners, n);
  ck_assert_uint_eq(clients, want_pooled);
  long made = stat_of(srv->port, "connections") - before - 1;
  for (size_t i = 0; i < n; i++) mcp_client_free(c[i]);
  mcp__http_pool_stats(&clients, &owners);
  ck_assert_uint_eq(clients, 0);
  ck_assert_uint_eq(owners, 0);
  return made;
}

START_TEST(many_clients_one_connection) {
  test_server srv = start_server(NULL);
  /* Before the pool: 16 connections, 16 I/O threads. */
  ck_assert_int_eq(shared_connections(&srv, MCP_HTTP_POOL_OWNERS, 1), 1);
  ck_assert_int_eq(shared_connections(&srv, 2 * MCP_HTTP_POOL_OWNERS, 2), 2);
  stop_server(&srv);
}
END_TEST

/* HTTP/1.1: one keep-alive pool; calls one at a time reuse a connection. */
START_TEST(h1_clients_share_keepalive) {
  test_server srv = start_server(NULL);
  long before = stat_of(srv.port, "connections");
  mcp_client *c[8];
  for (size_t i = 0; i < 8; i++) c[i] = connect_to(srv.port, MCP_HTTP_VERSION_1_1);
  for (int round = 0; round < 3; round++)
    for (size_t i = 0; i < 8; i++) echo_ok(c[i]);
  long made = stat_of(srv.port, "connections") - before - 1;
  /* The GET listeners (405) and sequential calls: a few, not 8 or more. */
  ck_assert_msg(made < 8, "%ld connections", made);
  size_t clients = 0;
  mcp__http_pool_stats(&clients, NULL);
  ck_assert_uint_eq(clients, 1);
  for (size_t i = 0; i < 8; i++) mcp_client_free(c[i]);
  stop_server(&srv);
}
END_TEST

/* Another HTTP version mode is another key: not shared. */
START_TEST(different_settings_not_shared) {
  test_server srv = start_server(NULL);
  mcp_client *a = connect_to(srv.port, MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
  mcp_client *b = connect_to(srv.port, MCP_HTTP_VERSION_1_1);
  size_t clients = 0, owners = 0;
  mcp__http_pool_stats(&clients, &owners);
  ck_assert_uint_eq(clients, 2);
  ck_assert_uint_eq(owners, 2);
  echo_ok(a);
  echo_ok(b);
  mcp_client_free(a);
  mcp_client_free(b);
  stop_server(&srv);
}
END_TEST

typedef struct caller {
  mcp_client *c;
  int n, ok;
  mcp_status st;
  char msg[256];
  long long ms;
} caller;

static void *call_loop(void *arg) {
  caller *k = arg;
  for (int i = 0; i < k->n; i++) {
    mcp_error err = MCP_ERROR_INIT;
    long long t0 = test_now_ms();
    k->st = echo(k->c, &err);
    k->ms = test_now_ms() - t0;
    if (k->st == MCP_OK) k->ok++;
    else snprintf(k->msg, sizeof(k->msg), "%s", err.message ? err.message : "");
    mcp_error_clear(&err);
  }
  return NULL;
}

/* Closing one owner (with its DELETE and its listener) while another
 * calls on the same connection: the other's calls all succeed. */
START_TEST(one_close_keeps_others) {
  test_server srv = start_server(NULL);
  mcp_client *keep = connect_to(srv.port, MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
  caller k = {.c = keep, .n = 200};
  pthread_t th;
  ck_assert_int_eq(pthread_create(&th, NULL, call_loop, &k), 0);
  for (int i = 0; i < 10; i++) {
    mcp_client *gone = connect_to(srv.port, MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
    echo_ok(gone);
    mcp_client_free(gone);
  }
  pthread_join(th, NULL);
  ck_assert_msg(k.ok == k.n, "%d of %d ok; last: %s", k.ok, k.n, k.msg);
  mcp_client_free(keep);
  stop_server(&srv);
}
END_TEST

/* Every tools/call stalls (--chaos-only stall); the server drops every
 * connection (SIGUSR2) while four owners wait on the shared one: all four
 * fail then, not at their 20 s timeout; then the next calls (pings) work
 * on a new connection. */
START_TEST(connection_loss_fails_every_owner) {
  test_server srv = start_server("stall");
  enum { N = 4 };
  caller k[N];
  pthread_t th[N];
  for (int i = 0; i < N; i++)
    k[i] = (caller){.c = connect_to(srv.port, MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE), .n = 1};
  for (int i = 0; i < N; i++) ck_assert_int_eq(pthread_create(&th[i], NULL, call_loop, &k[i]), 0);
  /* The four calls reached the server: it stalled four tools/calls (what
   * else the clients send, a notification or a GET, is not counted). */
  ck_assert_msg(WAIT_UNTIL(stat_of(srv.port, "faults") >= N, 20000), "%ld of %d calls stalled",
                stat_of(srv.port, "faults"), N);
  long long t0 = test_now_ms();
  kill(srv.pid, SIGUSR2);
  for (int i = 0; i < N; i++) pthread_join(th[i], NULL);
  long long took = test_now_ms() - t0;
  for (int i = 0; i < N; i++) {
    ck_assert_msg(k[i].st != MCP_OK && k[i].st != MCP_ETIMEDOUT, "owner %d: %s (%s)", i,
                  mcp_strerror(k[i].st), k[i].msg);
  }
  ck_assert_msg(took < 10000, "took %lld ms", took);
  for (int i = 0; i < N; i++) {
    mcp_error err = MCP_ERROR_INIT;
    mcp_status st = mcp_client_ping(k[i].c, NULL, &err);
    ck_assert_msg(st == MCP_OK, "ping %d: %s", i, err.message ? err.message : mcp_strerror(st));
    mcp_client_free(k[i].c);
  }
  stop_server(&srv);
}
END_TEST

/*
 * Issue 21: a thousand server names on one endpoint start in one manager
 * (a bounded test with a generous limit; the times are the benchmark's,
 * bench/manyservers).  Every server's tools are published by the time
 * mcp_manager_wait_ready() returns, and the servers share the endpoint's
 * connections: at most one per MCP_HTTP_POOL_OWNERS servers.
 */
START_TEST(thousand_servers_one_endpoint) {
  test_server srv = start_server(NULL);
  int n = test_under_valgrind() ? 40 : 1000;
  char url[64];
  snprintf(url, sizeof(url), "http://127.0.0.1:%d/mcp", srv.port);
  long before = stat_of(srv.port, "connections");
  mcp_client_options *co = mcp_client_options_new();
  ck_assert_int_eq(mcp_client_options_set_http(co, url, MCP_HTTP_TRANSPORT_STREAMABLE), MCP_OK);
  mcp_client_options_set_http_version(co, MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
  mcp_client_options_set_http_listener(co, false);
  mcp_manager_options *o = test_many_servers(co, n);
  mcp_client_options_free(co);
  mcp_manager *m = NULL;
  ck_assert_int_eq(mcp_manager_start(o, &m, NULL), MCP_OK);
  mcp_manager_options_free(o);
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_msg(mcp_manager_wait_ready(m, NULL, 240000, &err) == MCP_OK, "wait_ready: %s",
                err.message ? err.message : "");
  test_assert_every_server_listed(m, n);
  long made = stat_of(srv.port, "connections") - before - 1;
  ck_assert_int_ge(made, 1);
  ck_assert_int_le(made, (n + MCP_HTTP_POOL_OWNERS - 1) / MCP_HTTP_POOL_OWNERS);
  mcp_manager_free(m);
  stop_server(&srv);
}
END_TEST

static Suite *pool_suite(void) {
  Suite *s = suite_create("http_pool");
  TCase *tc = tcase_create("pool");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, many_clients_one_connection);
  tcase_add_test(tc, h1_clients_share_keepalive);
  tcase_add_test(tc, different_settings_not_shared);
  tcase_add_test(tc, one_close_keeps_others);
  tcase_add_test(tc, connection_loss_fails_every_owner);
  tcase_add_test(tc, thousand_servers_one_endpoint);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(pool_suite()); }
