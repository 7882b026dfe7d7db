/* SPDX-License-Identifier: MIT */
/*
 * check_http.c: the HTTP connection layer (mcp_http, mcp_h2, mcp_tls and
 * the HTTP/1.1 glue) against tests/mcp-h2-test-server on loopback, with a
 * throwaway CA and certificates made by the openssl command at start-up.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-c/json.h>

#include "check_util.h"
#include "check_server.h"
#include "mcp_http.h"
#include "mcp_int.h"

/* ---- certificates ------------------------------------------------------------- */

/* The directory holding the test PKI, made once by main(). */
static char pki_dir[512];

static char *pki(const char *name) {
  static __thread char path[8][600];
  static __thread int slot;
  char *p = path[slot++ % 8];
  snprintf(p, sizeof(path[0]), "%s/%s", pki_dir, name);
  return p;
}

static int run_sh(const char *cmd) {
  int rc = system(cmd);
  if (rc != 0) fprintf(stderr, "failed (%d): %s\n", rc, cmd);
  return rc;
}

/* A CA, a server certificate for localhost/127.0.0.1, one for the wrong
 * name, a self-signed one, and a client certificate, all EC P-256 (fast). */
static int make_pki(void) {
  const char *base = getenv("MCP_TEST_TMPDIR");
  if (!base || !*base) base = "/tmp";
  snprintf(pki_dir, sizeof(pki_dir), "%s/check_http_pki.XXXXXX", base);
  if (!mkdtemp(pki_dir)) {
    perror("mkdtemp");
    return -1;
  }
  char cmd[4096];
  const char *ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
  snprintf(cmd, sizeof(cmd),
           "cd '%s' && exec >log.txt 2>&1 && "
           "printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\n"
           "basicConstraints=CA:FALSE\\nextendedKeyUsage=serverAuth\\n' >srv.ext && "
           "printf 'subjectAltName=DNS:wrong.example\\n"
           "basicConstraints=CA:FALSE\\nextendedKeyUsage=serverAuth\\n' >wrong.ext && "
           "printf 'basicConstraints=CA:FALSE\\nextendedKeyUsage=clientAuth\\n' >cli.ext && "
           "openssl req -x509 %s -keyout ca.key -out ca.pem -days 2 "
           "-subj /CN=mcpconn-test-ca -addext basicConstraints=critical,CA:TRUE "
           "-addext keyUsage=critical,keyCertSign,cRLSign && "
           "openssl req -new %s -keyout server.key -out server.csr -subj /CN=localhost && "
           "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
           "-out server.pem -days 2 -extfile srv.ext && "
           "openssl req -new %s -keyout wrong.key -out wrong.csr -subj /CN=wrong.example && "
           "openssl x509 -req -in wrong.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
           "-out wrong.pem -days 2 -extfile wrong.ext && "
           "openssl req -new %s -keyout client.key -out client.csr -subj /CN=client && "
           "openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
           "-out client.pem -days 2 -extfile cli.ext && "
           "openssl req -x509 %s -keyout self.key -out self.pem -days 2 -subj /CN=localhost "
           "-addext subjectAltName=DNS:localhost,IP:127.0.0.1 && "
           /* Signed by the test CA, valid only on 1 January 2020. */
           "printf '[ca]\\ndefault_ca=d\\n[d]\\ndatabase=index.txt\\nnew_certs_dir=.\\n"
           "serial=serial\\ndefault_md=sha256\\npolicy=p\\nunique_subject=no\\n"
           "[p]\\ncommonName=supplied\\n' >ca.cnf && : >index.txt && echo 01 >serial && "
           "openssl req -new %s -keyout expired.key -out expired.csr -subj /CN=localhost && "
           "openssl ca -batch -config ca.cnf -cert ca.pem -keyfile ca.key -in expired.csr "
           "-out expired.pem -startdate 20200101000000Z -enddate 20200102000000Z "
           "-extfile srv.ext -notext",
           pki_dir, ec, ec, ec, ec, ec, ec);
  return run_sh(cmd);
}

static void remove_pki(void) {
  if (!pki_dir[0]) return;
  char cmd[700];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", pki_dir);
  (void)run_sh(cmd);
}

/* ---- the test server ------------------------------------------------------------ */

/* Starts the server with the given flags (NULL-terminated). */
static test_server server_start(const char *first, ...) {
  const char *argv[24] = {test_env_path("MCP_H2_TEST_SERVER")};
  int n = 1;
  va_list ap;
  va_start(ap, first);
  for (const char *a = first; a && n < 23; a = va_arg(ap, const char *)) argv[n++] = a;
  va_end(ap);
  argv[n] = NULL;

  return test_server_spawn(argv, 10000);
}

static void server_stop(test_server *s) {
  if (s->pid <= 0) return;
  close(s->in_wr);
  int st;
  waitpid(s->pid, &st, 0);
  s->pid = 0;
}

static test_server tls_server(const char *cert, const char *key, const char *more) {
  if (more) return server_start("--tls", pki(cert), pki(key), more, NULL);
  return server_start("--tls", pki(cert), pki(key), NULL);
}

/* ---- a response collector ---------------------------------------------------------- */

typedef struct resp {
  pthread_mutex_t *mu;
  pthread_cond_t *cv;
  atomic_int ndone;  /* on_done calls (must end at 1) */
  atomic_int nheads; /* on_headers calls */
  int status;
  mcp_status st;
  char msg[512];
  char *body;
  size_t len, cap;
  char ctype[128];
  long long t_done; /* ms */
  bool not_sent;    /* on_done's verdict: never reached the server */
  /* Optional hooks. */
  void (*on_done_hook)(struct resp *r);
  void *ctx;
  /* For big bodies: check the /big pattern instead of keeping the bytes. */
  bool check_pattern;
  bool pattern_ok;
  size_t seen;
} resp;

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv;

static void init_cv(void) {
  pthread_condattr_t a;
  pthread_condattr_init(&a);
  pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
  pthread_cond_init(&g_cv, &a);
  pthread_condattr_destroy(&a);
}

static void resp_init(resp *r) {
  memset(r, 0, sizeof(*r));
  r->mu = &g_mu;
  r->cv = &g_cv;
  r->pattern_ok = true;
}

static void resp_clear(resp *r) { free(r->body); }

static void cb_headers(void *user, int status, const mcp_http_header *h, size_t n) {
  resp *r = user;
  pthread_mutex_lock(r->mu);
  r->status = status;
  for (size_t i = 0; i < n; i++)
    if (strcmp(h[i].name, "content-type") == 0)
      snprintf(r->ctype, sizeof(r->ctype), "%s", h[i].value);
  atomic_fetch_add(&r->nheads, 1);
  pthread_cond_broadcast(r->cv);
  pthread_mutex_unlock(r->mu);
}

static void cb_data(void *user, const char *d, size_t n) {
  resp *r = user;
  if (r->check_pattern) {
    for (size_t i = 0; i < n; i++)
      if (d[i] != (char)('a' + (r->seen + i) % 26)) r->pattern_ok = false;
    r->seen += n;
    return;
  }
  if (r->len + n + 1 > r->cap) {
    r->cap = (r->len + n + 1) * 2;
    r->body = realloc(r->body, r->cap);
  }
  memcpy(r->body + r->len, d, n);
  r->len += n;
  r->body[r->len] = '\0';
}

static void cb_done(void *user, mcp_status st, const char *msg, bool not_sent) {
  resp *r = user;
  if (r->on_done_hook) r->on_done_hook(r);
  pthread_mutex_lock(r->mu);
  r->st = st;
  r->not_sent = not_sent;
  snprintf(r->msg, sizeof(r->msg), "%s", msg ? msg : "(null)");
  r->t_done = test_now_ms();
  atomic_fetch_add(&r->ndone, 1);
  pthread_cond_broadcast(r->cv);
  pthread_mutex_unlock(r->mu);
}

static const mcp_http_callbacks cbs = {cb_headers, cb_data, cb_done};

/* Waits until |*counter| >= |want| or |ms| pass; returns the success. */
static bool wait_count(atomic_int *counter, int want, long long ms) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  ts.tv_sec += ms / 1000;
  ts.tv_nsec += (ms % 1000) * 1000000;
  if (ts.tv_nsec >= 1000000000) {
    ts.tv_sec++;
    ts.tv_nsec -= 1000000000;
  }
  pthread_mutex_lock(&g_mu);
  while (atomic_load(counter) < want)
    if (pthread_cond_timedwait(&g_cv, &g_mu, &ts) == ETIMEDOUT) break;
  bool ok = atomic_load(counter) >= want;
  pthread_mutex_unlock(&g_mu);
  return ok;
}

static void wait_done(resp *r) {
  ck_assert_msg(wait_count(&r->ndone, 1, 20000), "request did not finish");
}

/* ---- clients -------------------------------------------------------------------- */

static mcp_http_config base_cfg(const char *scheme, const char *host, int port,
                                mcp_http_version mode) {
  mcp_http_config c;
  memset(&c, 0, sizeof(c));
  c.scheme = scheme;
  c.host = host;
  c.port = port;
  c.mode = mode;
  return c;
}

static mcp_http_client *client_new(const mcp_http_config *cfg) {
  mcp_http_client *h = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp__http_client_new(cfg, &h, &err);
  ck_assert_msg(st == MCP_OK, "client_new: %d %s", st, err.message ? err.message : "");
  mcp_error_clear(&err);
  return h;
}

/* A TLS client trusting the test CA. */
static mcp_http_client *tls_client(const char *host, int port, mcp_http_version mode) {
  mcp_http_config c = base_cfg("https", host, port, mode);
  c.tls.ca_file = pki("ca.pem");
  return client_new(&c);
}

static uint64_t submit(mcp_http_client *h, const char *method, const char *path, const char *body,
                       resp *r) {
  uint64_t id = 0;
  mcp_error err = MCP_ERROR_INIT;
  mcp_http_header hd[] = {{"content-type", "text/plain"}};
  mcp_status st = mcp__http_submit(h, method, path, body ? hd : NULL, body ? 1 : 0, body,
                                   body ? strlen(body) : 0, &cbs, r, &id, &err);
  ck_assert_msg(st == MCP_OK, "submit: %d %s", st, err.message ? err.message : "");
  mcp_error_clear(&err);
  return id;
}

/* One request, waited for. */
static void fetch(mcp_http_client *h, const char *method, const char *path, const char *body,
                  resp *r) {
  resp_init(r);
  submit(h, method, path, body, r);
  wait_done(r);
  ck_assert_int_eq(atomic_load(&r->ndone), 1);
}

static void expect_ok(resp *r, int status, const char *body) {
  ck_assert_msg(r->st == MCP_OK, "on_done: %d %s", r->st, r->msg);
  ck_assert_int_eq(r->status, status);
  if (body) {
    ck_assert_msg(r->body && strcmp(r->body, body) == 0, "body: got \"%s\", want \"%s\"",
                  r->body ? r->body : "", body);
  }
}

/* Server counters from GET /stats, through |h|. */
static long stat_of(mcp_http_client *h, const char *key) {
  resp r;
  fetch(h, "GET", "/stats", NULL, &r);
  expect_ok(&r, 200, NULL);
  json_object *o = json_tokener_parse(r.body);
  ck_assert_ptr_nonnull(o);
  json_object *v = NULL;
  ck_assert(json_object_object_get_ex(o, key, &v));
  long n = (long)json_object_get_int64(v);
  json_object_put(o);
  resp_clear(&r);
  return n;
}

static int scale(int n) { return test_under_valgrind() ? (n / 20 > 1 ? n / 20 : 2) : n; }

/* ---- basic exchanges ---------------------------------------------------------------- */

START_TEST(test_h2_tls_echo) {
  test_server s = tls_server("server.pem", "server.key", NULL);
  mcp_http_client *h = tls_client("127.0.0.1", s.port, MCP_HTTP_VERSION_AUTO);
  ck_assert_ptr_null(mcp__http_client_protocol(h));
  resp r;
  fetch(h, "POST", "/echo", "hello over h2", &r);
  expect_ok(&r, 200, "hello over h2");
  ck_assert_str_eq(r.ctype, "text/plain");
  ck_assert_int_eq(atomic_load(&r.nheads), 1);
  ck_assert_str_eq(mcp__http_client_protocol(h), "h2");
  resp_clear(&r);
  mcp__http_client_free(h);
  server_stop(&s);
}
END_TEST

/* A host name: the resolver thread, SNI and DNS-name verification. */
START_TEST(test_h2_tls_localhost_name) {
  test_server s = tls_server("server.pem", "server.key", NULL);
  mcp_http_client *h = tls_client("localhost", s.port, MCP_HTTP_VERSION_AUTO);
  resp r;
  fetch(h, "GET", "/headers", NULL, &r);
  expect_ok(&r, 200, NULL);
  json_object *o = json_tokener_parse(r.body);
  ck_assert_ptr_nonnull(o);
  char want[64];
  snprintf(want, sizeof(want), "localhost:%d", s.port);
  json_object *v = NULL;
  ck_assert(json_object_object_get_ex(o, ":authority", &v));
  ck_assert_str_eq(json_object_get_string(v), want);
  ck_assert(json_object_object_get_ex(o, ":scheme", &v));
  ck_assert_str_eq(json_object_get_string(v), "https");
  json_object_put(o);
  resp_clear(&r);
  mcp__http_client_free(h);
  server_stop(&s);
}
END_TEST

START_TEST(test_h2c_prior_knowledge) {
  test_server s = server_start(NULL);
  mcp_http_config c = base_cfg("http", "127.0.0.1", s.port, MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
  mcp_http_client *h = client_new(&c);
  resp r;
  fetch(h, "POST", "/echo", "cleartext h2", &r);
  expect_ok(&r, 200, "cleartext h2");
  ck_assert_str_eq(mcp__http_client_protocol(h), "h2c");
  resp_clear(&r);
  fetch(h, "GET", "/status?code=404", NULL, &r);
  expect_ok(&r, 404, "status 404\n");
  resp_clear(&r);
  mcp__http_client_free(h);
  server_stop(&s);
}
END_TEST

/* Request headers as the server saw them: :authority, custom fields,
 * content-length for a body. */
START_TEST(test_h2_request_headers) {
  test_server s = server_start(NULL);
  mcp_http_config c = base_cfg("http", "127.0.0.1", s.port, MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
  mcp_http_client *h = client_new(&c);
  resp r;
  resp_init(&r);
  mcp_http_header hd[] = {{"X-Custom", "v1"}, {"accept", "application/json"}};
  ck_assert_int_eq(
      mcp__http_submit(h, "POST", "/headers?q=1", hd, 2, "abcd", 4, &cbs, &r, NULL, NULL), MCP_OK);
  wait_done(&r);
  expect_ok(&r, 200, NULL);
  json_object *o = json_tokener_parse(r.body);
  ck_assert_ptr_nonnull(o);
  char want[64];
  snprintf(want, sizeof(want), "127.0.0.1:%d", s.port);
  json_object *v = NULL;
  ck_assert(json_object_object_get_ex(o, ":authority", &v));
  ck_assert_str_eq(json_object_get_string(v), want);
  ck_assert(json_object_object_get_ex(o, ":path", &v));
  ck_assert_str_eq(json_object_get_string(v), "/headers?q=1");
  ck_assert(json_object_object_get_ex(o, "x-custom", &v));
  ck_assert_str_eq(json_object_get_string(v), "v1");
  ck_assert(json_object_object_get_ex(o, "content-length", &v));
  ck_assert_str_eq(json_object_get_string(v), "4");
  json_object_put(o);
  resp_clear(&r);
  mcp__http_client_free(h);
  server_stop(&s);
}
END_TEST

/* ---- TLS verification ------------------------------------------------------------------ */

static void expect_fail(mcp_http_client *h, mcp_status want, const char *part) {
  resp r;
  fetch(h, "GET", "/status?code=200", NULL, &r);
  ck_assert_msg(r.st == want, "got %d (%s), want %d", r.st, r.msg, want);
  if (part) ck_assert_msg(strstr(r.msg, part), "message \"%s\" lacks \"%s\"", r.msg, part);
  ck_assert_int_eq(atomic_load(&r.nheads), 0);
  resp_clear(&r);
}

START_TEST(test_tls_self_signed_rejected) {
  test_server s = tls_server("self.pem", "self.key", NULL);
  mcp_http_config c = base_cfg("https", "127.0.0.1", s.port, MCP_HTTP_VERSION_AUTO);
  mcp_http_client *h = client_new(&c);
  expect_fail(h, MCP_ETLS, "certificate verify failed: self-signed");
  mcp__http_client_free(h);
  server_stop(&s);
}
END_TEST

START_TEST(test_tls_unknown_ca_rejected) {
  test_server s = tls_server("server.pem", "server.key", NULL);
  mcp_http_config c = base_cfg("https", "127.0.0.1", s.port, MCP_HTTP_VERSION_AUTO);
  mcp_http_client *h = client_new(&c); /* system store: our CA is unknown */
  expect_fail(h, MCP_ETLS, "verify");
  mcp__http_client_free(h);
  server_stop(&s);
}
END_TEST

START_TEST(test_tls_wrong_host_rejected) {
  test_server s = tls_server("wrong.pem", "wrong.key", NULL);
  mcp_http_client *h = tls_client("localhost", s.port, MCP_HTTP_VERSION_AUTO);
  expect_fail(h, MCP_ETLS, "hostname mismatch");
  mcp__http_client_free(h);
  h = tls_client("127.0.0.1", s.port, MCP_HTTP_VERSION_AUTO);
  expect_fail(h, MCP_ETLS, "IP address mismatch");
  mcp__http_client_free(h);
  server_stop(&s);
}
END_TEST

/* A certificate from the trusted CA, for the right name, whose validity
 * ended in 2020. */
START_TEST(test_tls_expired_rejected) {
  test_server s = tls_server("expired.pem", "expired.key", NULL);
  mcp_http_client *h = tls_client("localhost", s.port, MCP_HTTP_VERSION_AUTO);
  expect_fail(h, MCP_ETLS, "certificate has expired");
  mcp__http_client_free(h);
  server_stop(&s);
}
END_TEST

/* A peer that accepts TCP and then drops the connection in the middle of
 * the handshake (closing it, or resetting it) is a transport failure,
 * MCP_EIO, which callers retry; not MCP_ETLS, a verdict on the server's
 * certificate or TLS setup, which they do not. */
typedef struct {
  int lfd;
  bool reset;
} dropper;

static void *drop_after_hello(void *arg) {
  dropper *d = arg;
  int fd = accept(d->lfd, NULL, NULL);
  if (fd >= 0) {
    char buf[512];
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, 30000) == 1) (void)!read(fd, buf, sizeof(buf)); /* the ClientHello */
    if (d->reset) {
      struct linger l = {.l_onoff = 1, .l_linger = 0};
      setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
    }
    close(fd);
  }
  return NULL;
}

START_TEST(test_tls_handshake_dropped_is_eio) {
  for (int reset = 0; reset <= 1; reset++) {
    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(lfd, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof(a);
    ck_assert_int_eq(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0);
    ck_assert_int_eq(listen(lfd, 4), 0);
    ck_assert_int_eq(getsockname(lfd, (struct sockaddr *)&a, &al), 0);
    dropper d = {lfd, reset};
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, drop_after_hello, &d), 0);
    mcp_http_client *h = tls_client("localhost", ntohs(a.sin_port), MCP_HTTP_VERSION_AUTO);
    expect_fail(h, MCP_EIO, "TLS handshake with localhost failed");
    mcp__http_client_free(h);
    pthread_join(th, NULL);
    close(lfd);
  }
}
END_TEST

START_TEST(test_tls_insecure_accepts_self_signed) {
  test_server s = tls_server("self.pem", "self.key", NULL);
  mcp_http_config c = base_cfg("https", "127.0.0.1", s.port, MCP_HTTP_VERSION_AUTO);
  c.tls.insecure = true;
  mcp_http_client *h = client_new(&c);
  resp r;
  fetch(h, "POST", "/echo", "insecure", &r);
  expect_ok(&r, 200, "insecure");
  resp_clear(&r);
  mcp__http_client_free(h);
  server_stop(&s);
}
END_TEST

START_TEST(test_tls_mtls) {
  test_server s = server_start("--tls", pki("server.pem"), pki("server.key"), "--client-ca",
                               pki("ca.pem"), NULL);
  mcp_http_config c = base_cfg("https", "localhost", s.port, MCP_HTTP_VERSION_AUTO);
  c.tls.ca_file = pki("ca.pem");
  c.tls.client_cert = pki("client.pem");
  c.tls.client_key = pki("client.key");
  mcp_http_client *h = client_new(&c);
  resp r;
  fetch(h, "POST", "/echo", "mutual", &r);
  expect_ok(&r, 200, "mutual");
  resp_clear(&r);
  mcp__http_client_free(h);

  /* Without a client certificate the server refuses (with TLS 1.3 the
   * alert arrives after the client's handshake finished). */
  h = tls_client("localhost", s.port, MCP_HTTP_VERSION_AUTO);
  fetch(h, "GET", "/status?code=200", NULL, &r);
  ck_assert_msg(r.st == MCP_ETLS || r.st == MCP_EIO, "got %d (%s)", r.st, r.msg);
  resp_clear(&r);
  mcp__http_client_free(h);
  server_stop(&s);
}
END_TEST

START_TEST(test_tls_bad_material) {
  mcp_http_config c = base_cfg("https", "127.0.0.1", 443, MCP_HTTP_VERSION_AUTO);
  c.tls.ca_file = "/nonexistent/ca.pem";
  mcp_http_client *h = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp__http_client_new(&c, &h, &err), MCP_ETLS);
  ck_assert_ptr_null(h);
  ck_assert_ptr_nonnull(strstr(err.message, "/nonexistent/ca.pem"));
  mcp_error_clear(&err);
  c.tls.ca_file = NULL;
  c.tls.client_cert = pki("client.pem");
  ck_assert_int_eq(mcp__http_client_new(&c, &h, &err), MCP_EINVAL);
  mcp_error_clear(&err);
  c.tls.client_key = pki("server.key"); /* not the certificate's key */
  ck_assert_int_eq(mcp__http_client_new(&c, &h, &err), MCP_ETLS);
  ck_assert_ptr_nonnull(strstr(err.message, "do not match"));
  mcp_error_clear(&err);
}
END_TEST

START_TEST(test_prior_knowledge_needs_h2) {
  test_server s = tls_server("server.pem", "server.key", "--no-h2");
  mcp_http_client *h = tls_client("127.0.0.1", s.port, MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
  expect_fail(h, MCP_EPROTO, "server did not negotiate h2");
  mcp__http_client_free(h);
  server_stop(&s);
}
END_TEST

/* ---- HTTP/2 multiplexing, flow control, resets, GOAWAY --------------------------------- */

START_TEST(test_h2_1000_multiplexed) {
  int n = scale(1000);
  test_server s = server_start("--tls", pki("server.pem"), pki("server.key"), "--max-streams",
                               "100", NULL);
  mcp_http_client *h = tls_client("127.0.0.1", s.port, MCP_HTTP_VERSION_AUTO);
  resp *rs = calloc((size_t)n, sizeof(*rs));
  char(*bodies)[48] = calloc((size_t)n, sizeof(*bodies));
  long long t0 = test_now_ms();
  for (int i = 0; i < n; i++) {
    resp_init(&rs[i]);
    snprintf(bodies[i], sizeof(bodies[i]), "request body %d", i);
    submit(h, "POST", "/echo", bodies[i], &rs[i]);
  }
  for (int i = 0; i < n; i++) wait_done(&rs[i]);
  long long t1 = test_now_ms();
  for (int i = 0; i < n; i++) {
    expect_ok(&rs[i], 200, bodies[i]);
    ck_assert_int_eq(atomic_load(&rs[i].ndone), 1);
    resp_clear(&rs[i]);
  }
  fprintf(stderr, "h2: %d multiplexed POST /echo in %lld ms (%.0f req/s)\n", n, t1 - t0,
          t1 > t0 ? n * 1000.0 / (double)(t1 - t0) : 0.0);
  ck_assert_int_eq(stat_of(h, "connections"), 1);
  long max_open = stat_of(h, "max_open_streams");
  ck_assert_msg(max_open <= 100, "max open streams %ld", max_open);
  free(rs);
  free(bodies);
  mcp__http_client_free(h);
  server_stop(&s);
}
END_TEST

START_TEST(test_h2_big_response) {
  long long bytes = test_under_valgrind() ? 2 * 1024 * 1024 : 20 * 1024 * 1024;
  test_server s = tls_server("server.pem", "server.key", NULL);
  mcp_http_client *h = tls_client("127.0.0.1", s.port, MCP_HTTP_VERSION_AUTO);
  resp r;
  resp_init(&r);
  r.check_pattern = true;
  char path[64];
  snprintf(path, sizeof(path), "/big?bytes=%lld", bytes);
  long long t0 = test_now_ms();
  submit(h, "GET", path, NULL, &r);
  wait_done(&r);
  long long t1 = test_now_ms();
  ck_assert_msg(r.st == MCP_OK, "%d %s", r.st, r.msg);
  ck_assert_int_eq(r.status, 200);
  ck_assert_uint_eq(r.seen, (size_t)bytes);
  ck_assert(r.pattern_ok);
  fprintf(stderr, "h2+TLS: %lld bytes in %lld ms (%.1f MB/s)\n", bytes, t1 - t0,
          t1 > t0 ? (double)bytes / 1048576.0 * 1000.0 / (double)(t1 - t0) : 0.0);
  mcp__http_client_free(h);
  server_stop(&s);
}
END_TEST

START_TEST(test_h2_rst_isolated) {
  test_server s = server_start(NULL);
  mcp_http_config c = base_cfg("http", "127.0.0.1", s.port, MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
  mcp_http_client *h = client_new(&c);
  resp rst, ok[10];
  resp_init(&rst);
  char bodies[10][16];
  for (int i = 0; i < 10; i++) {
    resp_init(&ok[i]);
    snprintf(bodies[i], sizeof(bodies[i]), "ok %d", i);
    submit(h, "POST", "/echo", bodies[i], &ok[i]);
    if (i == 4) submit(h, "POST", "/rst", "x", &rst);
  }
  wait_done(&rst);
  ck_assert_int_eq(rst.st, MCP_EIO);
  ck_assert_msg(strstr(rst.msg, "stream reset by server (INTERNAL_ERROR)"), "%s", rst.msg);
  for (int i = 0; i < 10; i++) {
    wait_done(&ok[i]);
    expect_ok(&ok[i], 200, bodies[i]);
    resp_clear(&ok[i]);
  }
  resp_clear(&rst);
  ck_assert_int_eq(stat_of(h, "connections"), 1);
  mcp__http_client_free(h);
  server_stop(&s);
}
END_TEST

/* GOAWAY(last = the /goaway stream): the 5 requests sent after it on the
 * same connection are refused, retried on a fresh connection and succeed;
 * the earlier /slow finishes on the old connection. */
START_TEST(test_h2_goaway_graceful_retry) {
  test_server s = server_start(NULL);
  mcp_http_config c = base_cfg("http", "127.0.0.1", s.port, MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
  mcp_http_client *h = client_new(&c);
  resp slow, ga, e[5];
  char bodies[5][16];
  resp_init(&slow);
  resp_init(&ga);
  submit(h, "GET", "/slow?ms=300", NULL, &slow);
  submit(h, "POST", "/goaway?after=5", "", &ga);
  for (int i = 0; i < 5; i++) {
    resp_init(&e[i]);
    snprintf(bodies[i], sizeof(bodies[i]), "retry %d", i);
    submit(h, "POST", "/echo", bodies[i], &e[i]);
  }
  for (int i = 0; i < 5; i++) {
    wait_done(&e[i]);
    expect_ok(&e[i], 200, bodies[i]);
    resp_clear(&e[i]);
  }
  wait_done(&ga);
  expect_ok(&ga, 200, "goaway\n");
  wait_done(&slow);
  expect_ok(&slow, 200, "slow\n");
  ck_assert_int_eq(stat_of(h, "goaway_refused"), 5);
  ck_assert_int_eq(stat_of(h, "connections"), 2);
  resp_clear(&slow);
  resp_clear(&ga);
  mcp__http_client_free(h);
  server_stop(&s);
}
END_TEST

/* GOAWAY(ENHANCE_YOUR_CALM) then an immediate close: streams up to
 * last-stream-id fail with the GOAWAY's error, later ones are retried. */
START_TEST(test_h2_goaway_abort) {
  test_server s = server_start(NULL);
  mcp_http_config c = base_cfg("http", "127.0.0.1", s.port, MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
  mcp_http_client *h = client_new(&c);
  resp stall, ga, e[3];
  char bodies[3][16];
  resp_init(&stall);
  resp_init(&ga);
  submit(h, "GET", "/stall", NULL, &stall);
  submit(h, "POST", "/goaway?after=3&mode=abort&code=ENHANCE_YOUR_CALM", "", &ga);
  for (int i = 0; i < 3; i++) {
    resp_init(&e[i]);
    snprintf(bodies[i], sizeof(bodies[i]), "after %d", i);
    submit(h, "POST", "/echo", bodies[i], &e[i]);
  }
  wait_done(&stall);
  wait_done(&ga);
  ck_assert_int_eq(stall.st, MCP_EIO);
  ck_assert_msg(strstr(stall.msg, "connection closed by GOAWAY (ENHANCE_YOUR_CALM)"), "%s",
                stall.msg);
  ck_assert_int_eq(ga.st, MCP_EIO);
  ck_assert_msg(strstr(ga.msg, "GOAWAY (ENHANCE_YOUR_CALM)"), "%s", ga.msg);
  for (int i = 0; i < 3; i++) {
    wait_done(&e[i]);
    expect_ok(&e[i], 200, bodies[i]);
    resp_clear(&e[i]);
  }
  resp_clear(&stall);
  resp_clear(&ga);
  mcp__http_client_free(h);
  server_stop(&s);
}
END_TEST

/* GOAWAY(INTERNAL_ERROR) on a connection the server keeps open: the
 * stream above last-stream-id is refused and sent again on a new
 * connection, and the stream at last-stream-id fails at once with the
 * GOAWAY's code (it may have been processed) instead of waiting forever.
 * Before, it waited until the caller's deadline. */
START_TEST(test_h2_goaway_error_fails_open_streams) {
  test_server s = server_start(NULL);
  mcp_http_config c = base_cfg("http", "127.0.0.1", s.port, MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
  mcp_http_client *h = client_new(&c);
  resp ga, e;
  resp_init(&ga);
  resp_init(&e);
  long long t0 = test_now_ms();
  submit(h, "POST", "/goaway?after=1&mode=hold&code=INTERNAL_ERROR", "", &ga);
  submit(h, "POST", "/echo", "later", &e);
  ck_assert_msg(wait_count(&ga.ndone, 1, 5000), "the GOAWAY'd stream still waits");
  ck_assert_int_lt(test_now_ms() - t0, 5000);
  ck_assert_int_eq(ga.st, MCP_EIO);
  ck_assert_msg(strstr(ga.msg, "GOAWAY (INTERNAL_ERROR)"), "%s", ga.msg);
  ck_assert(!ga.not_sent);
  wait_done(&e);
  expect_ok(&e, 200, "later");
  resp_clear(&ga);
  resp_clear(&e);
  mcp__http_client_free(h);
  server_stop(&s);
}
END_TEST

/* A refused connection: the request provably never reached a server. */
START_TEST(test_connect_refused_not_sent) {
  test_server s = server_start(NULL);
  int port = s.port;
  server_stop(&s); /* nothing listens there now */
  mcp_http_config c = base_cfg("http", "127.0.0.1", port, MCP_HTTP_VERSION_1_1);
  mcp_http_client *h = client_new(&c);
  resp r;
  fetch(h, "POST", "/echo", "x", &r);
  ck_assert_int_eq(r.st, MCP_EIO);
  ck_assert_msg(strstr(r.msg, "connection refused"), "%s", r.msg);
  ck_assert(r.not_sent);
  resp_clear(&r);
  mcp__http_client_free(h);
}
END_TEST

START_TEST(test_h2_refused_stream_retried) {
  test_server s = server_start(NULL);
  mcp_http_config c = base_cfg("http", "127.0.0.1", s.port, MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
  mcp_http_client *h = client_new(&c);
  resp r;
  fetch(h, "GET", "/refuse-once?key=a", NULL, &r);
  expect_ok(&r, 200, "ok\n");
  resp_clear(&r);
  ck_assert_int_eq(stat_of(h, "requests"), 3); /* refused, retried, stats */
  mcp__http_client_free(h);
  server_stop(&s);

  /* With a limit of one stream, requests opened before the server's
   * SETTINGS arrived are refused by nghttp2 on the server; that refusal
   * does not use up their retry, so the route's own refusal still gets
   * one. */
  s = server_start("--max-streams", "1", NULL);
  c = base_cfg("http", "127.0.0.1", s.port, MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
  h = client_new(&c);
  resp rs[4];
  for (int i = 0; i < 4; i++) {
    char path[64];
    snprintf(path, sizeof(path), "/refuse-once?key=k%d", i);
    resp_init(&rs[i]);
    submit(h, "GET", path, NULL, &rs[i]);
  }
  for (int i = 0; i < 4; i++) {
    wait_done(&rs[i]);
    expect_ok(&rs[i], 200, "ok\n");
    resp_clear(&rs[i]);
  }
  mcp__http_client_free(h);
  server_stop(&s);
}
END_TEST

START_TEST(test_h2_header_cap) {
  test_server s = server_start(NULL);
  mcp_http_config c = base_cfg("http", "127.0.0.1", s.port, MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
  c.max_header_bytes = 4096;
  mcp_http_client *h = client_new(&c);
  resp r;
  fetch(h, "GET", "/bigheaders?bytes=16384", NULL, &r);
  ck_assert_int_eq(r.st, MCP_EPROTO);
  ck_assert_msg(strstr(r.msg, "exceeds 4096 bytes"), "%s", r.msg);
  ck_assert_int_eq(atomic_load(&r.nheads), 0);
  resp_clear(&r);
  /* The connection survives. */
  fetch(h, "GET", "/bigheaders?bytes=1000", NULL, &r);
  expect_ok(&r, 200, "ok\n");
  resp_clear(&r);
  ck_assert_int_eq(stat_of(h, "connections"), 1);
  mcp__http_client_free(h);
  server_stop(&s);
}
END_TEST

/* ---- cancel ---------------------------------------------------------------------------- */

START_TEST(test_h2_cancel_stall) {
  test_server s = tls_server("server.pem", "server.key", NULL);
  mcp_http_client *h = tls_client("127.0.0.1", s.port, MCP_HTTP_VERSION_AUTO);
  resp r;
  resp_init(&r);
  uint64_t id = submit(h, "GET", "/stall", NULL, &r);
  ck_assert(wait_count(&r.nheads, 1, 10000));
  ck_assert_int_eq(r.status, 200);
  mcp__http_cancel(h, id);
  wait_done(&r);
  ck_assert_int_eq(r.st, MCP_ECANCELLED);
  mcp__http_cancel(h, id); /* unknown by now: ignored */
  mcp__http_cancel(h, 999999);
  resp_clear(&r);
  /* The connection goes on. */
  fetch(h, "POST", "/echo", "still here", &r);
  expect_ok(&r, 200, "still here");
  resp_clear(&r);
  ck_assert_int_eq(stat_of(h, "connections"), 1);
  ck_assert_int_eq(atomic_load(&r.ndone), 1);
  mcp__http_client_free(h);
  server_stop(&s);
}
END_TEST

/* Cancel before any connection exists (the request is pending). */
START_TEST(test_cancel_pending) {
  /* A listener that never accepts: the TLS handshake never completes. */
  int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in sa = {0};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
  ck_assert_int_eq(listen(lfd, 16), 0);
  socklen_t sl = sizeof(sa);
  getsockname(lfd, (struct sockaddr *)&sa, &sl);
  mcp_http_client *h = tls_client("127.0.0.1", ntohs(sa.sin_port), MCP_HTTP_VERSION_AUTO);
  resp r;
  resp_init(&r);
  uint64_t id = submit(h, "GET", "/x", NULL, &r);
  mcp__http_cancel(h, id);
  wait_done(&r);
  ck_assert_int_eq(r.st, MCP_ECANCELLED);
  resp_clear(&r);
  mcp__http_client_free(h);
  close(lfd);
}
END_TEST

/* Submit and cancel racing the I/O thread, many times: a request cancelled
 * while it is still on the submit queue (submitted after the I/O thread
 * took the queue, cancelled before it took the cancels) is taken off the
 * queue, not started after it was freed (a use after free found by the
 * soak under TSan).  Every request ends exactly once. */
typedef struct racer {
  mcp_http_client *h;
  resp *rs;
  int n;
} racer;

static void *submit_cancel_thread(void *arg) {
  racer *x = arg;
  for (int i = 0; i < x->n; i++) {
    resp_init(&x->rs[i]);
    uint64_t id = submit(x->h, "GET", "/x", NULL, &x->rs[i]);
    mcp__http_cancel(x->h, id);
  }
  return NULL;
}

START_TEST(test_submit_cancel_race) {
  int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in sa = {0};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
  ck_assert_int_eq(listen(lfd, 16), 0);
  socklen_t sl = sizeof(sa);
  getsockname(lfd, (struct sockaddr *)&sa, &sl);
  mcp_http_client *h = tls_client("127.0.0.1", ntohs(sa.sin_port), MCP_HTTP_VERSION_AUTO);
  enum { T = 4, N = 2000 };
  racer xs[T];
  pthread_t th[T];
  for (int t = 0; t < T; t++) {
    xs[t] = (racer){h, calloc(N, sizeof(resp)), N};
    ck_assert_ptr_nonnull(xs[t].rs);
    ck_assert_int_eq(pthread_create(&th[t], NULL, submit_cancel_thread, &xs[t]), 0);
  }
  for (int t = 0; t < T; t++) pthread_join(th[t], NULL);
  for (int t = 0; t < T; t++)
    for (int i = 0; i < N; i++) {
      wait_done(&xs[t].rs[i]);
      ck_assert_int_eq(xs[t].rs[i].st, MCP_ECANCELLED);
    }
  mcp__http_client_free(h);
  for (int t = 0; t < T; t++) {
    for (int i = 0; i < N; i++) {
      ck_assert_int_eq(atomic_load(&xs[t].rs[i].ndone), 1);
      resp_clear(&xs[t].rs[i]);
    }
    free(xs[t].rs);
  }
  close(lfd);
}
END_TEST

/* ---- connect errors ---------------------------------------------------------------------- */

START_TEST(test_connect_refused) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in sa = {0};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
  socklen_t sl = sizeof(sa);
  getsockname(fd, (struct sockaddr *)&sa, &sl);
  close(fd); /* nobody listens there now */
  mcp_http_config c = base_cfg("http", "127.0.0.1", ntohs(sa.sin_port), MCP_HTTP_VERSION_AUTO);
  mcp_http_client *h = client_new(&c);
  long long t0 = test_now_ms();
  resp r;
  fetch(h, "GET", "/", NULL, &r);
  ck_assert_int_eq(r.st, MCP_EIO);
  ck_assert_msg(strstr(r.msg, "connection refused"), "%s", r.msg);
  ck_assert_msg(r.t_done - t0 < 1000, "took %lld ms", r.t_done - t0);
  resp_clear(&r);
  mcp__http_client_free(h);
}
END_TEST

/* A server that accepts TCP (the kernel does, from the backlog) but never
 * answers the TLS ClientHello. */
START_TEST(test_connect_timeout) {
  int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in sa = {0};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
  ck_assert_int_eq(listen(lfd, 16), 0);
  socklen_t sl = sizeof(sa);
  getsockname(lfd, (struct sockaddr *)&sa, &sl);
  mcp_http_config c = base_cfg("https", "127.0.0.1", ntohs(sa.sin_port), MCP_HTTP_VERSION_AUTO);
  c.tls.ca_file = pki("ca.pem");
  c.connect_timeout_ms = 300;
  mcp_http_client *h = client_new(&c);
  long long t0 = test_now_ms();
  resp r;
  fetch(h, "GET", "/", NULL, &r);
  long long took = r.t_done - t0;
  ck_assert_int_eq(r.st, MCP_ETIMEDOUT);
  ck_assert_msg(strstr(r.msg, "TLS handshake"), "%s", r.msg);
  ck_assert_msg(took >= 280 && took < 2000, "took %lld ms", took);
  resp_clear(&r);
  mcp__http_client_free(h);
  close(lfd);
}
END_TEST

START_TEST(test_resolve_failure) {
  mcp_http_config c = base_cfg("http", "no-such-host.invalid", 80, MCP_HTTP_VERSION_AUTO);
  c.connect_timeout_ms = 5000;
  mcp_http_client *h = client_new(&c);
  resp r;
  fetch(h, "GET", "/", NULL, &r);
  ck_assert_msg(r.st == MCP_EIO || r.st == MCP_ETIMEDOUT, "%d %s", r.st, r.msg);
  resp_clear(&r);
  mcp__http_client_free(h);
}
END_TEST

/* ---- validation -------------------------------------------------------------------------- */

START_TEST(test_header_injection_refused) {
  mcp_http_config c = base_cfg("http", "127.0.0.1", 9, MCP_HTTP_VERSION_AUTO);
  mcp_http_client *h = client_new(&c);
  resp r;
  resp_init(&r);
  mcp_error err = MCP_ERROR_INIT;
  const mcp_http_header bad[][1] = {{{"x-a", "ok\r\nx-evil: 1"}},
                                    {{"x-a", "ok\nx"}},
                                    {{"x a", "v"}},
                                    {{"x-a:", "v"}},
                                    {{"", "v"}},
                                    {{"Host", "evil"}},
                                    {{"content-length", "5"}},
                                    {{":path", "/x"}},
                                    {{"transfer-encoding", "chunked"}}};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    ck_assert_int_eq(mcp__http_submit(h, "GET", "/", bad[i], 1, NULL, 0, &cbs, &r, NULL, &err),
                     MCP_EINVAL);
    ck_assert_ptr_nonnull(err.message);
    mcp_error_clear(&err);
  }
  ck_assert_int_eq(mcp__http_submit(h, "GET", "/a b", NULL, 0, NULL, 0, &cbs, &r, NULL, &err),
                   MCP_EINVAL);
  mcp_error_clear(&err);
  ck_assert_int_eq(mcp__http_submit(h, "GET", "/a\r\nb", NULL, 0, NULL, 0, &cbs, &r, NULL, &err),
                   MCP_EINVAL);
  mcp_error_clear(&err);
  ck_assert_int_eq(mcp__http_submit(h, "GE T", "/", NULL, 0, NULL, 0, &cbs, &r, NULL, &err),
                   MCP_EINVAL);
  mcp_error_clear(&err);
  ck_assert_int_eq(mcp__http_submit(h, "GET", "noslash", NULL, 0, NULL, 0, &cbs, &r, NULL, &err),
                   MCP_EINVAL);
  mcp_error_clear(&err);
  mcp__http_client_free(h);
  /* None of them was accepted, so no callback ran. */
  ck_assert_int_eq(atomic_load(&r.ndone), 0);
}
END_TEST

START_TEST(test_config_validation) {
  mcp_http_client *h = NULL;
  mcp_http_config c = base_cfg("ftp", "127.0.0.1", 80, MCP_HTTP_VERSION_AUTO);
  ck_assert_int_eq(mcp__http_client_new(&c, &h, NULL), MCP_EINVAL);
  c = base_cfg("http", "", 80, MCP_HTTP_VERSION_AUTO);
  ck_assert_int_eq(mcp__http_client_new(&c, &h, NULL), MCP_EINVAL);
  c = base_cfg("http", "a b", 80, MCP_HTTP_VERSION_AUTO);
  ck_assert_int_eq(mcp__http_client_new(&c, &h, NULL), MCP_EINVAL);
  c = base_cfg("http", "127.0.0.1", 0, MCP_HTTP_VERSION_AUTO);
  ck_assert_int_eq(mcp__http_client_new(&c, &h, NULL), MCP_EINVAL);
  c = base_cfg("http", "127.0.0.1", 70000, MCP_HTTP_VERSION_AUTO);
  ck_assert_int_eq(mcp__http_client_new(&c, &h, NULL), MCP_EINVAL);
  ck_assert_int_eq(mcp__http_client_new(NULL, &h, NULL), MCP_EINVAL);
  ck_assert_ptr_null(h);
  mcp__http_client_free(NULL);
}
END_TEST

/* ---- callbacks, re-entrancy and shutdown ------------------------------------------------ */

typedef struct chain {
  mcp_http_client *h;
  atomic_int left;
  resp rs[8];
  int next;
} chain;

/* on_done submits the next request from the I/O thread. */
static void chain_hook(resp *r) {
  chain *ch = r->ctx;
  if (atomic_fetch_sub(&ch->left, 1) <= 1) return;
  resp *nr = &ch->rs[++ch->next];
  resp_init(nr);
  nr->on_done_hook = chain_hook;
  nr->ctx = ch;
  ck_assert_int_eq(
      mcp__http_submit(ch->h, "POST", "/echo", NULL, 0, "link", 4, &cbs, nr, NULL, NULL), MCP_OK);
}

START_TEST(test_submit_from_callback) {
  test_server s = server_start(NULL);
  mcp_http_config c = base_cfg("http", "127.0.0.1", s.port, MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
  chain ch;
  memset(&ch, 0, sizeof(ch));
  ch.h = client_new(&c);
  atomic_init(&ch.left, 8);
  resp_init(&ch.rs[0]);
  ch.rs[0].on_done_hook = chain_hook;
  ch.rs[0].ctx = &ch;
  submit(ch.h, "POST", "/echo", "link", &ch.rs[0]);
  for (int i = 0; i < 8; i++) {
    ck_assert(wait_count(&ch.rs[i].ndone, 1, 10000));
    expect_ok(&ch.rs[i], 200, "link");
    resp_clear(&ch.rs[i]);
  }
  mcp__http_client_free(ch.h);
  server_stop(&s);
}
END_TEST

typedef struct free_ctx {
  mcp_http_client *h;
  uint64_t other;
} free_ctx;

/* on_headers of a stalled request cancels it, from the I/O thread. */
static void cancel_self_headers(void *user, int status, const mcp_http_header *hv, size_t n) {
  resp *r = user;
  free_ctx *fc = r->ctx;
  cb_headers(user, status, hv, n);
  mcp__http_cancel(fc->h, fc->other);
}

START_TEST(test_cancel_from_callback) {
  test_server s = server_start(NULL);
  mcp_http_config c = base_cfg("http", "127.0.0.1", s.port, MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
  free_ctx fc;
  fc.h = client_new(&c);
  resp r;
  resp_init(&r);
  r.ctx = &fc;
  mcp_http_callbacks cc = {cancel_self_headers, cb_data, cb_done};
  ck_assert_int_eq(
      mcp__http_submit(fc.h, "GET", "/stall", NULL, 0, NULL, 0, &cc, &r, &fc.other, NULL), MCP_OK);
  wait_done(&r);
  ck_assert_int_eq(r.st, MCP_ECANCELLED);
  ck_assert_int_eq(atomic_load(&r.ndone), 1);
  mcp__http_client_free(fc.h);
  server_stop(&s);
}
END_TEST

/* free() with requests on the wire and waiting for a stream slot: each one
 * ends exactly once with MCP_ECLOSED before free() returns. */
START_TEST(test_free_with_outstanding) {
  test_server s = server_start("--max-streams", "2", NULL);
  mcp_http_config c = base_cfg("http", "127.0.0.1", s.port, MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
  mcp_http_client *h = client_new(&c);
  resp r[6];
  for (int i = 0; i < 6; i++) {
    resp_init(&r[i]);
    submit(h, "GET", "/stall", NULL, &r[i]);
  }
  /* Two are on the wire once their heads arrived; four wait for a slot. */
  ck_assert(wait_count(&r[0].nheads, 1, 10000));
  ck_assert(wait_count(&r[1].nheads, 1, 10000));
  mcp__http_client_free(h);
  for (int i = 0; i < 6; i++) {
    ck_assert_int_eq(atomic_load(&r[i].ndone), 1);
    ck_assert_int_eq(r[i].st, MCP_ECLOSED);
    resp_clear(&r[i]);
  }
  server_stop(&s);
}
END_TEST

/* free() right after submit, before the I/O thread looked at the queue. */
START_TEST(test_free_immediately) {
  test_server s = server_start(NULL);
  for (int round = 0; round < 20; round++) {
    mcp_http_config c = base_cfg("http", "127.0.0.1", s.port, MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
    mcp_http_client *h = client_new(&c);
    resp r[3];
    for (int i = 0; i < 3; i++) {
      resp_init(&r[i]);
      submit(h, "POST", "/echo", "x", &r[i]);
    }
    mcp__http_client_free(h);
    for (int i = 0; i < 3; i++) {
      ck_assert_int_eq(atomic_load(&r[i].ndone), 1);
      ck_assert(r[i].st == MCP_OK || r[i].st == MCP_ECLOSED);
      resp_clear(&r[i]);
    }
  }
  server_stop(&s);
}
END_TEST

static int thread_count(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  int n = -1;
  while (f && fgets(line, sizeof(line), f))
    if (sscanf(line, "Threads: %d", &n) == 1) break;
  if (f) fclose(f);
  return n;
}

static void free_in_callback(resp *r) {
  free_ctx *fc = r->ctx;
  mcp__http_client_free(fc->h);
}

/* free() from inside on_done: the client goes away once the callback
 * returns; the other outstanding request gets MCP_ECLOSED. */
START_TEST(test_free_from_callback) {
  test_server s = server_start(NULL);
  mcp_http_config c = base_cfg("http", "127.0.0.1", s.port, MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
  free_ctx fc;
  fc.h = client_new(&c);
  /* Ours plus the client's I/O thread (sanitizers may run one of theirs). */
  int threads = thread_count() - 1;
  resp stall, r;
  resp_init(&stall);
  resp_init(&r);
  r.ctx = &fc;
  r.on_done_hook = free_in_callback;
  submit(fc.h, "GET", "/stall", NULL, &stall);
  ck_assert(wait_count(&stall.nheads, 1, 10000));
  submit(fc.h, "POST", "/echo", "bye", &r);
  wait_done(&r);
  expect_ok(&r, 200, "bye");
  wait_done(&stall);
  ck_assert_int_eq(stall.st, MCP_ECLOSED);
  ck_assert_msg(WAIT_UNTIL(thread_count() == threads, 5000), "%d threads, want %d", thread_count(),
                threads);
  resp_clear(&r);
  resp_clear(&stall);
  server_stop(&s);
}
END_TEST

/* Submits from several threads at once onto one client. */
typedef struct hammer {
  mcp_http_client *h;
  resp rs[50];
  int id;
} hammer;

static void *hammer_main(void *arg) {
  hammer *hm = arg;
  for (int i = 0; i < 50; i++) {
    resp_init(&hm->rs[i]);
    ck_assert_int_eq(
        mcp__http_submit(hm->h, "POST", "/echo", NULL, 0, "hm", 2, &cbs, &hm->rs[i], NULL, NULL),
        MCP_OK);
  }
  return NULL;
}

START_TEST(test_concurrent_submitters) {
  test_server s = server_start(NULL);
  mcp_http_config c = base_cfg("http", "127.0.0.1", s.port, MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
  mcp_http_client *h = client_new(&c);
  static hammer hm[4];
  pthread_t t[4];
  for (int i = 0; i < 4; i++) {
    hm[i].h = h;
    pthread_create(&t[i], NULL, hammer_main, &hm[i]);
  }
  for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
  for (int i = 0; i < 4; i++)
    for (int k = 0; k < 50; k++) {
      wait_done(&hm[i].rs[k]);
      expect_ok(&hm[i].rs[k], 200, "hm");
      resp_clear(&hm[i].rs[k]);
    }
  mcp__http_client_free(h);
  server_stop(&s);
}
END_TEST

/* ---- HTTP/1.1 ---------------------------------------------------------------------------- */

static mcp_http_client *h1_client(int port, size_t max_conns) {
  mcp_http_config c = base_cfg("http", "127.0.0.1", port, MCP_HTTP_VERSION_AUTO);
  c.max_h1_connections = max_conns;
  return client_new(&c);
}

START_TEST(test_h1_tls_h1_only) {
  test_server s = tls_server("server.pem", "server.key", "--allow-http1");
  mcp_http_client *h = tls_client("localhost", s.port, MCP_HTTP_VERSION_1_1);
  resp r;
  fetch(h, "POST", "/echo", "hello over http/1.1", &r);
  expect_ok(&r, 200, "hello over http/1.1");
  ck_assert_str_eq(r.ctype, "text/plain");
  ck_assert_str_eq(mcp__http_client_protocol(h), "http/1.1");
  resp_clear(&r);
  ck_assert_int_eq(stat_of(h, "h1"), 1);
  ck_assert_int_eq(stat_of(h, "h2"), 0);
  mcp__http_client_free(h);
  server_stop(&s);
}
END_TEST

/* AUTO against a server whose ALPN picks http/1.1. */
START_TEST(test_h1_tls_alpn_fallback) {
  test_server s = tls_server("server.pem", "server.key", "--no-h2");
  mcp_http_client *h = tls_client("127.0.0.1", s.port, MCP_HTTP_VERSION_AUTO);
  resp r;
  fetch(h, "POST", "/echo", "fallback", &r);
  expect_ok(&r, 200, "fallback");
  ck_assert_str_eq(mcp__http_client_protocol(h), "http/1.1");
  resp_clear(&r);
  mcp__http_client_free(h);
  server_stop(&s);
}
END_TEST

START_TEST(test_h1_cleartext) {
  test_server s = server_start("--allow-http1", NULL);
  mcp_http_client *h = h1_client(s.port, 0);
  resp r;
  fetch(h, "POST", "/echo", "plain http/1.1", &r);
  expect_ok(&r, 200, "plain http/1.1");
  ck_assert_str_eq(mcp__http_client_protocol(h), "http/1.1");
  resp_clear(&r);
  /* A chunked body that arrives after a delay. */
  fetch(h, "GET", "/slow?ms=50", NULL, &r);
  expect_ok(&r, 200, "slow\n");
  resp_clear(&r);
  /* Request headers as the server saw them. */
  resp_init(&r);
  mcp_http_header hd[] = {{"X-Custom", "v1"}};
  ck_assert_int_eq(mcp__http_submit(h, "POST", "/headers", hd, 1, "abc", 3, &cbs, &r, NULL, NULL),
                   MCP_OK);
  wait_done(&r);
  expect_ok(&r, 200, NULL);
  json_object *o = json_tokener_parse(r.body);
  ck_assert_ptr_nonnull(o);
  char want[64];
  snprintf(want, sizeof(want), "127.0.0.1:%d", s.port);
  json_object *v = NULL;
  ck_assert(json_object_object_get_ex(o, "host", &v));
  ck_assert_str_eq(json_object_get_string(v), want);
  ck_assert(json_object_object_get_ex(o, "x-custom", &v));
  ck_assert_str_eq(json_object_get_string(v), "v1");
  ck_assert(json_object_object_get_ex(o, "content-length", &v));
  ck_assert_str_eq(json_object_get_string(v), "3");
  json_object_put(o);
  resp_clear(&r);
  fetch(h, "GET", "/status?code=503", NULL, &r);
  expect_ok(&r, 503, "status 503\n");
  resp_clear(&r);
  mcp__http_client_free(h);
  server_stop(&s);
}
END_TEST

/* Sequential requests reuse one keep-alive connection. */
START_TEST(test_h1_keepalive_reuse) {
  test_server s = server_start("--allow-http1", NULL);
  mcp_http_client *h = h1_client(s.port, 0);
  int n = scale(500);
  long long t0 = test_now_ms();
  for (int i = 0; i < n; i++) {
    resp r;
    fetch(h, "GET", "/status?code=200", NULL, &r);
    expect_ok(&r, 200, "status 200\n");
    resp_clear(&r);
  }
  long long t1 = test_now_ms();
  fprintf(stderr,
          "h1: %d sequential GETs on one connection in %lld ms "
          "(%.0f req/s)\n",
          n, t1 - t0, t1 > t0 ? n * 1000.0 / (double)(t1 - t0) : 0.0);
  ck_assert_int_eq(stat_of(h, "connections"), 1);
  mcp__http_client_free(h);
  server_stop(&s);
}
END_TEST

/* 8 concurrent slow requests spread over up to 8 connections; 16 with a
 * pool of 4 never use more than 4. */
START_TEST(test_h1_pool) {
  test_server s = server_start("--allow-http1", NULL);
  mcp_http_client *h = h1_client(s.port, 8);
  resp r[16];
  long long t0 = test_now_ms();
  for (int i = 0; i < 8; i++) {
    resp_init(&r[i]);
    submit(h, "GET", "/slow?ms=300", NULL, &r[i]);
  }
  for (int i = 0; i < 8; i++) {
    wait_done(&r[i]);
    expect_ok(&r[i], 200, "slow\n");
    resp_clear(&r[i]);
  }
  long long took = test_now_ms() - t0;
  ck_assert_msg(took < 8 * 300, "not parallel: %lld ms", took);
  long conns = stat_of(h, "connections");
  ck_assert_msg(conns >= 2 && conns <= 8, "%ld connections", conns);
  mcp__http_client_free(h);

  h = h1_client(s.port, 4);
  long before = stat_of(h, "connections");
  for (int i = 0; i < 16; i++) {
    resp_init(&r[i]);
    submit(h, "GET", "/slow?ms=50", NULL, &r[i]);
  }
  for (int i = 0; i < 16; i++) {
    wait_done(&r[i]);
    expect_ok(&r[i], 200, "slow\n");
    resp_clear(&r[i]);
  }
  long used = stat_of(h, "connections") - before + 1; /* + the stats one */
  ck_assert_msg(used <= 4, "%ld connections for a pool of 4", used);
  mcp__http_client_free(h);
  server_stop(&s);
}
END_TEST

/* The server drops the second request on a reused connection (as when it
 * closed an idle keep-alive): an idempotent request (PUT) is sent again on
 * a new connection; a POST, which the server may have run, is not (RFC 9110
 * 9.2.2: it fails, and is not reported as unsent).  Before, the POST was
 * resent too. */
START_TEST(test_h1_stale_connection_retry) {
  test_server s = server_start("--allow-http1", NULL);
  mcp_http_client *h = h1_client(s.port, 1);
  resp r;
  fetch(h, "GET", "/close-next", NULL, &r);
  expect_ok(&r, 200, "ok\n");
  resp_clear(&r);
  fetch(h, "PUT", "/headers", "again", &r);
  expect_ok(&r, 200, NULL);
  resp_clear(&r);
  ck_assert_int_eq(stat_of(h, "connections"), 2);
  fetch(h, "GET", "/close-next", NULL, &r);
  expect_ok(&r, 200, "ok\n");
  resp_clear(&r);
  fetch(h, "POST", "/echo", "once", &r);
  ck_assert_int_eq(r.st, MCP_EIO);
  ck_assert_msg(strstr(r.msg, "connection closed before response"), "%s", r.msg);
  ck_assert(!r.not_sent);
  resp_clear(&r);
  ck_assert_int_eq(stat_of(h, "connections"), 3);
  mcp__http_client_free(h);
  server_stop(&s);
}
END_TEST

START_TEST(test_h1_cancel_closes_connection) {
  test_server s = server_start("--allow-http1", NULL);
  mcp_http_client *h = h1_client(s.port, 1);
  resp r;
  resp_init(&r);
  uint64_t id = submit(h, "GET", "/stall", NULL, &r);
  ck_assert(wait_count(&r.nheads, 1, 10000));
  mcp__http_cancel(h, id);
  wait_done(&r);
  ck_assert_int_eq(r.st, MCP_ECANCELLED);
  resp_clear(&r);
  fetch(h, "POST", "/echo", "next", &r);
  expect_ok(&r, 200, "next");
  resp_clear(&r);
  ck_assert_int_eq(stat_of(h, "connections"), 2);
  mcp__http_client_free(h);
  server_stop(&s);
}
END_TEST

START_TEST(test_h1_errors) {
  test_server s = server_start("--allow-http1", NULL);
  mcp_http_config c = base_cfg("http", "127.0.0.1", s.port, MCP_HTTP_VERSION_AUTO);
  c.max_header_bytes = 4096;
  mcp_http_client *h = client_new(&c);
  resp r;
  fetch(h, "GET", "/bigheaders?bytes=16384", NULL, &r);
  ck_assert_int_eq(r.st, MCP_EPROTO);
  ck_assert_msg(strstr(r.msg, "exceeds 4096 bytes"), "%s", r.msg);
  resp_clear(&r);
  /* Headers, then the connection closes in the middle of the body. */
  fetch(h, "POST", "/rst", "x", &r);
  ck_assert_int_eq(r.st, MCP_EIO);
  ck_assert_int_eq(atomic_load(&r.nheads), 1);
  ck_assert_msg(strstr(r.msg, "closed"), "%s", r.msg);
  resp_clear(&r);
  fetch(h, "POST", "/echo", "fine", &r);
  expect_ok(&r, 200, "fine");
  resp_clear(&r);
  mcp__http_client_free(h);
  server_stop(&s);
}
END_TEST

START_TEST(test_h1_big_response) {
  long long bytes = test_under_valgrind() ? 2 * 1024 * 1024 : 20 * 1024 * 1024;
  test_server s = tls_server("server.pem", "server.key", "--no-h2");
  mcp_http_client *h = tls_client("127.0.0.1", s.port, MCP_HTTP_VERSION_AUTO);
  resp r;
  resp_init(&r);
  r.check_pattern = true;
  char path[64];
  snprintf(path, sizeof(path), "/big?bytes=%lld", bytes);
  long long t0 = test_now_ms();
  submit(h, "GET", path, NULL, &r);
  wait_done(&r);
  long long t1 = test_now_ms();
  ck_assert_msg(r.st == MCP_OK, "%d %s", r.st, r.msg);
  ck_assert_uint_eq(r.seen, (size_t)bytes);
  ck_assert(r.pattern_ok);
  fprintf(stderr, "http/1.1+TLS: %lld bytes in %lld ms\n", bytes, t1 - t0);
  mcp__http_client_free(h);
  server_stop(&s);
}
END_TEST

START_TEST(test_h1_free_with_outstanding) {
  test_server s = server_start("--allow-http1", NULL);
  mcp_http_client *h = h1_client(s.port, 2);
  resp r[5];
  for (int i = 0; i < 5; i++) {
    resp_init(&r[i]);
    submit(h, "GET", "/stall", NULL, &r[i]);
  }
  ck_assert(wait_count(&r[0].nheads, 1, 10000));
  ck_assert(wait_count(&r[1].nheads, 1, 10000));
  mcp__http_client_free(h);
  for (int i = 0; i < 5; i++) {
    ck_assert_int_eq(atomic_load(&r[i].ndone), 1);
    ck_assert_int_eq(r[i].st, MCP_ECLOSED);
    resp_clear(&r[i]);
  }
  server_stop(&s);
}
END_TEST

/* Fails the Nth allocation (then every one) while a client is made and a
 * request submitted and served, for N = 0, 1, ...: nothing may crash, leak
 * or hang, and an accepted request ends exactly once. */
START_TEST(test_alloc_failures) {
  test_server s = server_start(NULL);
  int limit = test_under_valgrind() ? 60 : 400;
  int completed_clean = 0;
  for (int n = 0; n < limit && completed_clean < 3; n++) {
    mcp_http_config c = base_cfg("http", "127.0.0.1", s.port, MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
    mcp_http_client *h = NULL;
    resp r;
    resp_init(&r);
    mcp__alloc_fail_after(n);
    mcp_status st = mcp__http_client_new(&c, &h, NULL);
    mcp_status sst = MCP_EINVAL;
    if (st == MCP_OK)
      sst = mcp__http_submit(h, "POST", "/echo", NULL, 0, "abc", 3, &cbs, &r, NULL, NULL);
    /* Let the I/O thread fail for a moment, then recover. */
    if (sst == MCP_OK) (void)wait_count(&r.ndone, 1, 5);
    mcp__alloc_fail_after(-1);
    if (st != MCP_OK) {
      ck_assert_ptr_null(h);
      continue;
    }
    if (sst == MCP_OK) {
      wait_done(&r);
      ck_assert_int_eq(atomic_load(&r.ndone), 1);
      if (r.st == MCP_OK) {
        ck_assert_str_eq(r.body, "abc");
        completed_clean++;
      }
    }
    mcp__http_client_free(h);
    ck_assert_int_le(atomic_load(&r.ndone), 1);
    resp_clear(&r);
  }
  ck_assert_int_gt(completed_clean, 0);
  server_stop(&s);
}
END_TEST

/* A multi-megabyte request body, sent under the server's flow control,
 * comes back intact, over HTTP/2 and over HTTP/1.1. */
START_TEST(test_large_upload) {
  size_t len = test_under_valgrind() ? 512 * 1024 : 5 * 1024 * 1024;
  char *body = malloc(len + 1);
  for (size_t i = 0; i < len; i++) body[i] = (char)('a' + i % 26);
  body[len] = '\0';
  test_server s = tls_server("server.pem", "server.key", "--allow-http1");
  for (int round = 0; round < 2; round++) {
    mcp_http_client *h = tls_client("127.0.0.1", s.port,
                                    round == 0 ? MCP_HTTP_VERSION_AUTO : MCP_HTTP_VERSION_1_1);
    resp r;
    fetch(h, "POST", "/echo", body, &r);
    ck_assert_msg(r.st == MCP_OK, "%d %s", r.st, r.msg);
    ck_assert_uint_eq(r.len, len);
    ck_assert(memcmp(r.body, body, len) == 0);
    ck_assert_str_eq(mcp__http_client_protocol(h), round == 0 ? "h2" : "http/1.1");
    resp_clear(&r);
    mcp__http_client_free(h);
  }
  free(body);
  server_stop(&s);
}
END_TEST

typedef struct order_log {
  atomic_int next;
  int order[8];
} order_log;

static order_log g_order;

static void record_order(resp *r) {
  g_order.order[atomic_fetch_add(&g_order.next, 1)] = (int)(intptr_t)r->ctx;
}

/* With SETTINGS_MAX_CONCURRENT_STREAMS 1 the requests wait and go out in
 * submission order, one stream at a time, on one connection. */
START_TEST(test_h2_queue_order) {
  test_server s = server_start("--max-streams", "1", NULL);
  mcp_http_config c = base_cfg("http", "127.0.0.1", s.port, MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
  mcp_http_client *h = client_new(&c);
  resp r[8];
  atomic_init(&g_order.next, 0);
  for (int i = 0; i < 8; i++) {
    resp_init(&r[i]);
    r[i].ctx = (void *)(intptr_t)i;
    r[i].on_done_hook = record_order;
    submit(h, "GET", "/slow?ms=10", NULL, &r[i]);
  }
  for (int i = 0; i < 8; i++) {
    wait_done(&r[i]);
    expect_ok(&r[i], 200, "slow\n");
    resp_clear(&r[i]);
  }
  for (int i = 0; i < 8; i++) ck_assert_int_eq(g_order.order[i], i);
  ck_assert_int_eq(stat_of(h, "max_open_streams"), 1);
  ck_assert_int_eq(stat_of(h, "connections"), 1);
  mcp__http_client_free(h);
  server_stop(&s);
}
END_TEST

/* Interim 1xx heads are skipped: on_headers runs once, for the 200. */
START_TEST(test_interim_responses_skipped) {
  test_server s = server_start("--allow-http1", NULL);
  for (int round = 0; round < 2; round++) {
    mcp_http_config c = base_cfg("http", "127.0.0.1", s.port,
                                 round == 0 ? MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE
                                            : MCP_HTTP_VERSION_AUTO);
    mcp_http_client *h = client_new(&c);
    resp r;
    fetch(h, "GET", "/early-hints", NULL, &r);
    expect_ok(&r, 200, "final\n");
    ck_assert_int_eq(atomic_load(&r.nheads), 1);
    ck_assert_str_eq(r.ctype, "text/plain");
    resp_clear(&r);
    mcp__http_client_free(h);
  }
  server_stop(&s);
}
END_TEST

/* ---- suite ---------------------------------------------------------------------------- */

static Suite *http_suite(void) {
  Suite *s = suite_create("http");
  TCase *tc = tcase_create("h2");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_h2_tls_echo);
  tcase_add_test(tc, test_h2_tls_localhost_name);
  tcase_add_test(tc, test_h2c_prior_knowledge);
  tcase_add_test(tc, test_h2_request_headers);
  tcase_add_test(tc, test_h2_1000_multiplexed);
  tcase_add_test(tc, test_h2_big_response);
  tcase_add_test(tc, test_h2_rst_isolated);
  tcase_add_test(tc, test_h2_goaway_graceful_retry);
  tcase_add_test(tc, test_h2_goaway_abort);
  tcase_add_test(tc, test_h2_goaway_error_fails_open_streams);
  tcase_add_test(tc, test_connect_refused_not_sent);
  tcase_add_test(tc, test_h2_refused_stream_retried);
  tcase_add_test(tc, test_h2_header_cap);
  tcase_add_test(tc, test_h2_cancel_stall);
  tcase_add_test(tc, test_h2_queue_order);
  tcase_add_test(tc, test_interim_responses_skipped);
  tcase_add_test(tc, test_large_upload);
  suite_add_tcase(s, tc);

  tc = tcase_create("h1");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_h1_tls_h1_only);
  tcase_add_test(tc, test_h1_tls_alpn_fallback);
  tcase_add_test(tc, test_h1_cleartext);
  tcase_add_test(tc, test_h1_keepalive_reuse);
  tcase_add_test(tc, test_h1_pool);
  tcase_add_test(tc, test_h1_stale_connection_retry);
  tcase_add_test(tc, test_h1_cancel_closes_connection);
  tcase_add_test(tc, test_h1_errors);
  tcase_add_test(tc, test_h1_big_response);
  tcase_add_test(tc, test_h1_free_with_outstanding);
  suite_add_tcase(s, tc);

  tc = tcase_create("tls");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_tls_self_signed_rejected);
  tcase_add_test(tc, test_tls_unknown_ca_rejected);
  tcase_add_test(tc, test_tls_wrong_host_rejected);
  tcase_add_test(tc, test_tls_expired_rejected);
  tcase_add_test(tc, test_tls_handshake_dropped_is_eio);
  tcase_add_test(tc, test_tls_insecure_accepts_self_signed);
  tcase_add_test(tc, test_tls_mtls);
  tcase_add_test(tc, test_tls_bad_material);
  tcase_add_test(tc, test_prior_knowledge_needs_h2);
  suite_add_tcase(s, tc);

  tc = tcase_create("connect");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_connect_refused);
  tcase_add_test(tc, test_connect_timeout);
  tcase_add_test(tc, test_resolve_failure);
  tcase_add_test(tc, test_cancel_pending);
  tcase_add_test(tc, test_submit_cancel_race);
  suite_add_tcase(s, tc);

  tc = tcase_create("api");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_header_injection_refused);
  tcase_add_test(tc, test_config_validation);
  tcase_add_test(tc, test_submit_from_callback);
  tcase_add_test(tc, test_cancel_from_callback);
  tcase_add_test(tc, test_free_with_outstanding);
  tcase_add_test(tc, test_free_immediately);
  tcase_add_test(tc, test_free_from_callback);
  tcase_add_test(tc, test_concurrent_submitters);
  tcase_add_test(tc, test_alloc_failures);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  init_cv();
  signal(SIGPIPE, SIG_IGN);
  if (make_pki() != 0) {
    remove_pki();
    return EXIT_FAILURE;
  }
  int rc = run_suite(http_suite());
  remove_pki();
  return rc;
}
