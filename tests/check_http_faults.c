/* SPDX-License-Identifier: MIT */
/*
 * check_http_faults.c: the Streamable HTTP transport against a server that
 * misbehaves on purpose (tests/interop/fault-http.mjs, plain node:http over
 * HTTP/1.1 on 127.0.0.1), through the public API (mcpconn.h) only:
 *  - 401 with WWW-Authenticate on initialize: MCP_EHTTP carrying the header;
 *  - an SSE response with a comment, a non-JSON event and an event of
 *    another type before the real response;
 *  - a response stream that stalls: the call times out, the client is not
 *    wedged;
 *  - a stream cut after its priming event: resumed with GET + Last-Event-ID;
 *  - 500 with a body: MCP_EHTTP with the body, the client stays usable;
 *  - a request made while an expired session is re-initialized waits for
 *    the new session.
 * One server per test; node is found and stopped by check_interop_util.h
 * (a missing node FAILS the test, it is never skipped).
 */
#include "config.h"

#include <arpa/inet.h>
#include <json-c/json.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <time.h>

#include "check_interop_util.h"
#include "mcpconn.h"

#define START_MS 60000 /* node's first start can be slow on a busy CI box */
#define CALL_MS 30000

typedef struct fixture {
  node_server server;
  char url[256];
  mcp_client *client;
  bool no_listener; /* mcp_client_options_set_http_listener(o, false) */
} fixture;

static void start(fixture *f, const char *scenario) {
  memset(f, 0, sizeof(*f));
  node_server_start(&f->server, NULL, START_MS,
                    (const char *const[]){interop_path("fault-http.mjs"), NULL});
  snprintf(f->url, sizeof(f->url), "http://127.0.0.1:%d/mcp/%s", f->server.port, scenario);
}

static mcp_status try_connect(fixture *f, mcp_client **out, mcp_error *err) {
  mcp_client_options *o = mcp_client_options_new();
  ck_assert_ptr_nonnull(o);
  ck_assert_int_eq(mcp_client_options_set_http(o, f->url, MCP_HTTP_TRANSPORT_STREAMABLE), MCP_OK);
  ck_assert_int_eq(mcp_client_options_set_client_info(o, "mcpconn-http-faults", MCP_VERSION),
                   MCP_OK);
  mcp_client_options_set_timeout_ms(o, START_MS);
  if (f->no_listener) mcp_client_options_set_http_listener(o, false);
  mcp_status st = mcp_client_connect(o, out, err);
  mcp_client_options_free(o);
  return st;
}

static void start_connected(fixture *f, const char *scenario) {
  start(f, scenario);
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = try_connect(f, &f->client, &err);
  ck_assert_msg(st == MCP_OK, "connect to %s: %s (%s)", f->url, mcp_strerror(st),
                err.message ? err.message : "no message");
  mcp_error_clear(&err);
  ck_assert_ptr_nonnull(f->client);
}

static void finish(fixture *f) {
  mcp_client_free(f->client);
  f->client = NULL;
  node_server_stop(&f->server);
}

/* tools/call |name| with a timeout; *text gets content[0].text on success. */
static mcp_status call(fixture *f, const char *name, int64_t ms, char **text, mcp_error *err) {
  mcp_call_options *o = mcp_call_options_new();
  ck_assert_ptr_nonnull(o);
  mcp_call_options_set_timeout_ms(o, ms);
  char *res = NULL;
  mcp_status st = mcp_client_call_tool(f->client, name, "{}", o, &res, err);
  mcp_call_options_free(o);
  *text = NULL;
  if (st == MCP_OK) {
    json_object *j = json_tokener_parse(res);
    ck_assert_msg(j != NULL, "result is not JSON: %s", res);
    const char *t = interop_first_text(j);
    ck_assert_msg(t != NULL, "no text in %s", res);
    *text = strdup(t);
    json_object_put(j);
  }
  mcp_free(res);
  return st;
}

static void assert_call_text(fixture *f, const char *name, const char *want) {
  mcp_error err = MCP_ERROR_INIT;
  char *text = NULL;
  mcp_status st = call(f, name, CALL_MS, &text, &err);
  ck_assert_msg(st == MCP_OK, "tools/call %s on %s: %s (%s)", name, f->url, mcp_strerror(st),
                err.message ? err.message : "-");
  ck_assert_str_eq(text, want);
  free(text);
  mcp_error_clear(&err);
}

/* GET /stats from the server over a raw HTTP/1.1 socket. */
static json_object *server_stats(fixture *f) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ck_assert_int_ge(fd, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)f->server.port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
  const char req[] = "GET /stats HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  ck_assert_int_eq(write(fd, req, sizeof(req) - 1), (ssize_t)(sizeof(req) - 1));
  char buf[8192];
  size_t n = 0;
  for (;;) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    ck_assert_msg(poll(&p, 1, CALL_MS) == 1, "GET /stats: no answer");
    ssize_t r = read(fd, buf + n, sizeof(buf) - 1 - n);
    if (r < 0 && errno == EINTR) continue;
    ck_assert_int_ge(r, 0);
    if (r == 0 || n + (size_t)r >= sizeof(buf) - 1) break;
    n += (size_t)r;
  }
  close(fd);
  buf[n] = '\0';
  ck_assert_msg(strncmp(buf, "HTTP/1.1 200", 12) == 0, "GET /stats: %s", buf);
  char *body = strstr(buf, "\r\n\r\n");
  ck_assert_ptr_nonnull(body);
  json_object *j = json_tokener_parse(body + 4);
  ck_assert_msg(j != NULL, "GET /stats body: %s", body + 4);
  return j;
}

static int64_t jint(json_object *o, const char *key) {
  json_object *v = NULL;
  ck_assert_msg(json_object_object_get_ex(o, key, &v), "no \"%s\" in %s", key,
                json_object_to_json_string(o));
  return json_object_get_int64(v);
}

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* 401 on initialize: the error carries the status and WWW-Authenticate. */
START_TEST(test_unauthorized) {
  fixture f;
  start(&f, "unauthorized");
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = try_connect(&f, &f.client, &err);
  ck_assert_msg(st == MCP_EHTTP, "connect: %s (%s)", mcp_strerror(st),
                err.message ? err.message : "-");
  ck_assert_ptr_null(f.client);
  ck_assert_int_eq(err.http_status, 401);
  ck_assert_ptr_nonnull(err.message);
  ck_assert_msg(strstr(err.message, "401") && strstr(err.message, "WWW-Authenticate") &&
                    strstr(err.message, "resource_metadata") &&
                    strstr(err.message, "/.well-known/oauth-protected-resource"),
                "message: %s", err.message);
  mcp_error_clear(&err);
  finish(&f);
}
END_TEST

/* Junk before the response on an SSE stream is counted, not fatal. */
START_TEST(test_malformed_sse) {
  fixture f;
  start_connected(&f, "malformed-sse");
  mcp_client_stats before, after;
  mcp_client_get_stats(f.client, &before);
  assert_call_text(&f, "malformed", "ok");
  mcp_client_get_stats(f.client, &after);
  ck_assert_msg(after.protocol_errors >= before.protocol_errors + 1, "protocol_errors %llu -> %llu",
                (unsigned long long)before.protocol_errors,
                (unsigned long long)after.protocol_errors);
  assert_call_text(&f, "malformed", "ok");
  assert_call_text(&f, "echo", "echo");
  finish(&f);
}
END_TEST

/* A stalled response stream times out; the next call still works. */
START_TEST(test_stall) {
  fixture f;
  start_connected(&f, "stall");
  mcp_error err = MCP_ERROR_INIT;
  char *text = NULL;
  int64_t t0 = now_ms();
  mcp_status st = call(&f, "stall", 300, &text, &err);
  int64_t took = now_ms() - t0;
  ck_assert_msg(st == MCP_ETIMEDOUT, "stalled call: %s (%s)", mcp_strerror(st),
                err.message ? err.message : "-");
  ck_assert_msg(took >= 250 && took < 5000, "timed out after %lld ms", (long long)took);
  mcp_error_clear(&err);
  assert_call_text(&f, "echo", "echo");
  /* Again, with the first stalled stream possibly still open. */
  st = call(&f, "stall", 300, &text, &err);
  ck_assert_int_eq(st, MCP_ETIMEDOUT);
  mcp_error_clear(&err);
  assert_call_text(&f, "echo", "echo");
  finish(&f);
}
END_TEST

/* Priming event, then the stream ends: resumed with GET + Last-Event-ID. */
START_TEST(test_priming_cut) {
  fixture f;
  start_connected(&f, "priming-cut");
  assert_call_text(&f, "cut", "resumed");
  json_object *s = server_stats(&f);
  ck_assert_int_eq(jint(s, "resumeGets"), 1);
  json_object *ids = NULL;
  ck_assert(json_object_object_get_ex(s, "lastEventIds", &ids));
  ck_assert_int_eq(json_object_array_length(ids), 1);
  ck_assert_str_eq(json_object_get_string(json_object_array_get_idx(ids, 0)), "e1");
  json_object_put(s);
  assert_call_text(&f, "echo", "echo");
  finish(&f);
}
END_TEST

/* 500 with a body: MCP_EHTTP with the body; the client stays usable. */
/* The standalone GET stream is opened after initialize unless turned off. */
START_TEST(test_get_listener_switch) {
  fixture f;
  start(&f, "http-500");
  f.no_listener = true;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(try_connect(&f, &f.client, &err), MCP_OK);
  mcp_error_clear(&err);
  assert_call_text(&f, "echo", "echo"); /* the handshake and a call went through */
  json_object *s = server_stats(&f);
  ck_assert_int_eq(jint(s, "gets"), 0);
  json_object_put(s);
  finish(&f);

  start_connected(&f, "http-500"); /* default: the listener's GET arrives */
  int64_t gets = 0;
  for (int64_t end = now_ms() + CALL_MS; gets == 0 && now_ms() < end;) {
    s = server_stats(&f);
    gets = jint(s, "gets");
    json_object_put(s);
    if (gets == 0) poll(NULL, 0, 5); /* the server's counter is not ours to wait on */
  }
  ck_assert_int_ge(gets, 1);
  finish(&f);
}
END_TEST

START_TEST(test_http_500) {
  fixture f;
  start_connected(&f, "http-500");
  mcp_error err = MCP_ERROR_INIT;
  char *text = NULL;
  mcp_status st = call(&f, "fail", CALL_MS, &text, &err);
  ck_assert_msg(st == MCP_EHTTP, "call: %s (%s)", mcp_strerror(st),
                err.message ? err.message : "-");
  ck_assert_int_eq(err.http_status, 500);
  ck_assert_ptr_nonnull(err.message);
  ck_assert_msg(strstr(err.message, "500") && strstr(err.message, "boom"), "message: %s",
                err.message);
  mcp_error_clear(&err);
  assert_call_text(&f, "echo", "echo");
  finish(&f);
}
END_TEST

/* An async call's outcome, for test_request_during_reinit. */
typedef struct async_done {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  bool done;
  mcp_status status;
} async_done;

static void on_async(void *user, mcp_status status, const char *result_json, const mcp_error *err) {
  (void)result_json;
  (void)err;
  async_done *d = user;
  pthread_mutex_lock(&d->lock);
  d->done = true;
  d->status = status;
  pthread_cond_broadcast(&d->cond);
  pthread_mutex_unlock(&d->lock);
}

/*
 * The session expired and its re-initialize is in flight (the server holds
 * the answer 1.5 s): a request made meanwhile waits for the new session.
 * Found by tests/soak: it went out without Mcp-Session-Id and failed with
 * the server's 400.
 */
START_TEST(test_request_during_reinit) {
  fixture f;
  start_connected(&f, "reinit-hold");
  assert_call_text(&f, "expire", "expired");
  /* A: gets 404, which starts the re-initialize. */
  async_done a = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, MCP_OK};
  mcp_call_options *o = mcp_call_options_new();
  ck_assert_ptr_nonnull(o);
  mcp_call_options_set_timeout_ms(o, CALL_MS);
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp_client_call_tool_async(f.client, "echo", "{}", o, on_async, &a, &err),
                   MCP_OK);
  mcp_call_options_free(o);
  int64_t held = 0;
  for (int64_t end = now_ms() + CALL_MS; held == 0 && now_ms() < end;) {
    json_object *s = server_stats(&f);
    held = jint(s, "reinitHeld");
    json_object_put(s);
    if (held == 0) poll(NULL, 0, 5); /* the server's counter is not ours to wait on */
  }
  ck_assert_int_eq(held, 1);
  /* B: made while the re-initialize is unanswered. */
  assert_call_text(&f, "echo", "echo");
  pthread_mutex_lock(&a.lock);
  while (!a.done) pthread_cond_wait(&a.cond, &a.lock); /* bounded by A's CALL_MS */
  pthread_mutex_unlock(&a.lock);
  ck_assert_msg(a.status == MCP_OK, "A: %s", mcp_strerror(a.status));
  json_object *s = server_stats(&f);
  ck_assert_int_eq(jint(s, "sessionless"), 0);
  ck_assert_int_eq(jint(s, "reinitHeld"), 1);
  json_object_put(s);
  mcp_error_clear(&err);
  finish(&f);
}
END_TEST

Suite *http_faults_suite(void);
Suite *http_faults_suite(void) {
  Suite *s = suite_create("http_faults");
  TCase *tc = tcase_create("faults");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_unauthorized);
  tcase_add_test(tc, test_malformed_sse);
  tcase_add_test(tc, test_stall);
  tcase_add_test(tc, test_priming_cut);
  tcase_add_test(tc, test_http_500);
  tcase_add_test(tc, test_get_listener_switch);
  tcase_add_test(tc, test_request_during_reinit);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(http_faults_suite()); }
