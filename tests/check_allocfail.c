/* SPDX-License-Identifier: MIT */
/*
 * check_allocfail.c: allocation-failure sweeps through a whole client
 * session.  For N = 1, 2, ... the N-th allocation call of the process
 * (every thread, every library: ours, json-c, OpenSSL, nghttp2, libc) fails
 * while mcp_client_connect() runs initialize against a real server, one
 * tools/call is made and the client is freed.  Every run must end with
 * MCP_OK or MCP_ENOMEM (with a message), never a crash, a hang or another
 * status; the sweep ends at the first N past a clean run's allocation
 * count that a run no longer reaches.  Leaks
 * are found by the ASan (LeakSanitizer) build of this suite.
 *
 * Servers: bin/mcpconn-demo-server over stdio, and the /mcp route of
 * tests/mcp-h2-test-server over h2c (prior knowledge, with the GET stream)
 * and over TLS (h2 by ALPN, without it).  The malloc interposer is tests/alloc_shim.h.
 */
#include "config.h"

#include <check.h>
#include <stdatomic.h>
#include <execinfo.h>
#include <fcntl.h>
#include <poll.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alloc_shim.h"
#include "check_util.h"
#include "check_server.h"
#include "mcpconn.h"

/* A run that hangs fails on this timeout instead of blocking the suite. */
#define RUN_TIMEOUT_MS 30000
/* More allocations than any run makes; reaching it fails the test. */
#define MAX_N 200000

typedef struct run_result {
  mcp_status connect_st, call_st;
  char msg[256];
} run_result;

/*
 * Allocations that are not ours to fail, exempt (the next call fails
 * instead) when one of these functions is on the stack:
 *  - json_tokener_parse_ex: json-c before 0.17 crashes when an allocation
 *    inside its tokener fails (it strdup()s an object key and uses the
 *    result unchecked); 0.17 added json_tokener_error_memory.
 *  - SSL_CTX_new_ex: OpenSSL 3.0 fetches the algorithms of a new context
 *    with errors masked (ERR_set_mark/ERR_pop_to_mark), so an allocation
 *    failing there leaves a context silently short of a cipher or digest,
 *    whose handshakes then fail like a peer mismatch (MCP_ETLS); the
 *    failures it does report are MCP_ENOMEM (found by this sweep).
 *  - pthread_getattr_np (and pthread_attr_*, which it calls): the ASan and
 *    TSan runtimes call it as every new thread starts and abort when it
 *    cannot allocate.  Judged from the direct caller alone, without
 *    unwinding: that thread is not set up for the sanitizer yet.
 * and when a frame belongs to a sanitizer runtime (lib[a|t|ub]san: its own
 * work, or the real function behind one of its interceptors).
 */
static const char *const exempt_fns[] = {
#if JSON_C_VERSION_NUM < ((0 << 16) | (17 << 8))
    "json_tokener_parse_ex",
#endif
    "pthread_getattr_np",
    "SSL_CTX_new_ex",
};

static void *exe_base; /* where this program is loaded */

/* Set when the allocation made to fail was called from OpenSSL (see
 * ETLS_ALLOWED). */
static atomic_bool failed_in_openssl;

SHIM_NOSAN static bool exempt_caller(void *caller) {
  Dl_info ci;
  if (dladdr(caller, &ci) && ci.dli_sname &&
      (strstr(ci.dli_sname, "pthread_getattr_np") || strstr(ci.dli_sname, "pthread_attr_")))
    return true;
  void *frames[64];
  int n = backtrace(frames, 64);
  bool in_shim = false;
  for (int i = 0; i < n; i++) {
    Dl_info info;
    if (!dladdr(frames[i], &info)) continue;
    /* Skip backtrace() itself (a sanitizer intercepts it) up to the
     * shim's frames in this program. */
    if (!in_shim) {
      in_shim = info.dli_fbase == exe_base;
      continue;
    }
    const char *obj = info.dli_fname ? strrchr(info.dli_fname, '/') : NULL;
    obj = obj ? obj + 1 : info.dli_fname;
    if (obj && (strncmp(obj, "libasan", 7) == 0 || strncmp(obj, "libtsan", 7) == 0 ||
                strncmp(obj, "libubsan", 8) == 0))
      return true;
    if (obj && (strncmp(obj, "libssl", 6) == 0 || strncmp(obj, "libcrypto", 9) == 0))
      atomic_store(&failed_in_openssl, true);
    if (!info.dli_sname) continue;
    for (size_t k = 0; k < sizeof(exempt_fns) / sizeof(exempt_fns[0]); k++)
      if (strstr(info.dli_sname, exempt_fns[k])) return true;
  }
  return false;
}

static void exempt_setup(void) {
  Dl_info self;
  ck_assert(dladdr((void *)exempt_setup, &self) != 0);
  exe_base = self.dli_fbase;
  void *warm[4];
  (void)backtrace(warm, 4); /* loads the unwinder now, not while armed */
  alloc_shim_set_exempt(exempt_caller);
}

static void copy_msg(run_result *r, const mcp_error *e) {
  snprintf(r->msg, sizeof(r->msg), "%s", e->message ? e->message : "(none)");
}

/* One session with allocation |n| failing (0: none).  |o| is built before
 * arming; everything from connect to free runs armed. */
static bool run_once(const mcp_client_options *o, long n, run_result *r) {
  mcp_error err = MCP_ERROR_INIT;
  mcp_client *c = NULL;
  char *result = NULL;
  r->call_st = MCP_OK;
  r->msg[0] = '\0';
  if (n > 0) alloc_shim_arm(n);
  r->connect_st = mcp_client_connect(o, &c, &err);
  if (r->connect_st == MCP_OK) {
    r->call_st = mcp_client_call_tool(c, "echo", "{\"text\":\"hello\"}", NULL, &result, &err);
    if (r->call_st != MCP_OK) copy_msg(r, &err);
    else if (!result || !strstr(result, "hello"))
      snprintf(r->msg, sizeof(r->msg), "bad result: %s", result ? result : "NULL");
    mcp_free(result);
    mcp_client_free(c);
  } else {
    copy_msg(r, &err);
    if (c) snprintf(r->msg, sizeof(r->msg), "connect failed but set *out");
  }
  bool hit = n > 0 ? alloc_shim_disarm() : false;
  mcp_error_clear(&err);
  return hit;
}

/*
 * OpenSSL 3.0 does not always say that an allocation failed: a handshake
 * whose random generator could not be set up, or a record it could not
 * build, fails with "internal error", and no queued error or errno tells
 * why.  So when the failed allocation came from libssl or libcrypto,
 * MCP_ETLS, or MCP_EIO for a connection that broke that way after the
 * handshake (with a message), is accepted too; mcpconn maps every failure
 * OpenSSL does report as one to MCP_ENOMEM.
 */
static bool status_ok(mcp_status st, const char *msg) {
  if ((st == MCP_ETLS || st == MCP_EIO) && atomic_load(&failed_in_openssl) && msg[0]) return true;
  return st == MCP_OK || (st == MCP_ENOMEM && msg[0] != '\0');
}

/* Sweeps N from 1 until a run completes without reaching its N-th
 * allocation.  Returns the number of runs. */
static long sweep(const mcp_client_options *o, const char *what, long stride) {
  run_result r;
  exempt_setup();
  /* A clean run first: it must work, and it makes one-time
   * initialisation (OpenSSL, thread keys) happen outside the sweep. */
  run_once(o, 0, &r);
  ck_assert_msg(r.connect_st == MCP_OK && r.call_st == MCP_OK && !r.msg[0],
                "%s: clean run: connect %d call %d: %s", what, r.connect_st, r.call_st, r.msg);
  alloc_shim_arm(MAX_N * 100);
  run_once(o, 0, &r);
  alloc_shim_disarm();
  long clean = alloc_shim_count();
  fprintf(stderr, "%s: a clean run makes %ld allocation calls\n", what, clean);
  long n;
  long enomem = 0;
  /* MCP_ALLOCFAIL_N=K runs only N=K (to debug one failure). */
  const char *only = getenv("MCP_ALLOCFAIL_N");
  long first = only ? atol(only) : 1;
  long etls = 0;
  for (n = first; n < MAX_N; n += stride) {
    atomic_store(&failed_in_openssl, false);
    bool hit = run_once(o, n, &r);
    if (r.connect_st == MCP_ETLS || r.call_st == MCP_ETLS || r.connect_st == MCP_EIO ||
        r.call_st == MCP_EIO)
      etls++;
    ck_assert_msg(status_ok(r.connect_st, r.msg), "%s: N=%ld: connect returned %d (%s): %s", what,
                  n, r.connect_st, mcp_strerror(r.connect_st), r.msg);
    ck_assert_msg(status_ok(r.call_st, r.msg), "%s: N=%ld: tools/call returned %d (%s): %s", what,
                  n, r.call_st, mcp_strerror(r.call_st), r.msg);
    if (r.connect_st == MCP_OK && r.call_st == MCP_OK)
      ck_assert_msg(!r.msg[0], "%s: N=%ld: %s", what, n, r.msg);
    if (r.connect_st == MCP_ENOMEM || r.call_st == MCP_ENOMEM) enomem++;
    /* Threads make the count vary from run to run: a run that ended before
     * its N-th allocation ends the sweep only past the clean run's count. */
    if ((!hit && n > clean) || only) break;
  }
  ck_assert_msg(n < MAX_N, "%s: the sweep did not end", what);
  fprintf(stderr,
          "%s: N = %ld..%ld step %ld, %ld ended with MCP_ENOMEM, %ld with "
          "MCP_ETLS/EIO from inside OpenSSL\n",
          what, first, n, stride, enomem, etls);
  return n;
}

static mcp_client_options *base_options(void) {
  mcp_client_options *o = mcp_client_options_new();
  ck_assert_ptr_nonnull(o);
  mcp_client_options_set_timeout_ms(o, RUN_TIMEOUT_MS);
  return o;
}

/* ---- stdio ---------------------------------------------------------------------- */

START_TEST(test_stdio_sweep) {
  mcp_client_options *o = base_options();
  const char *argv[] = {test_env_path("MCP_DEMO_SERVER"), NULL};
  ck_assert_int_eq(mcp_client_options_set_stdio(o, argv), MCP_OK);
  long n = sweep(o, "stdio", 1);
  if (!getenv("MCP_ALLOCFAIL_N")) ck_assert_int_gt(n, 50);
  mcp_client_options_free(o);
}
END_TEST

/* ---- HTTP/2 (tests/mcp-h2-test-server's /mcp route) ------------------------------ */

static char pki_dir[512];

/* A throwaway CA and a server certificate for 127.0.0.1, EC P-256. */
static void make_pki(void) {
  const char *base = getenv("MCP_TEST_TMPDIR");
  snprintf(pki_dir, sizeof(pki_dir), "%s/allocfail_pki.XXXXXX", base && *base ? base : "/tmp");
  ck_assert_ptr_nonnull(mkdtemp(pki_dir));
  char cmd[2048];
  const char *ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
  snprintf(cmd, sizeof(cmd),
           "cd '%s' && exec >log.txt 2>&1 && "
           "printf 'subjectAltName=IP:127.0.0.1\\nbasicConstraints=CA:FALSE\\n"
           "extendedKeyUsage=serverAuth\\n' >srv.ext && "
           "openssl req -x509 %s -keyout ca.key -out ca.pem -days 2 "
           "-subj /CN=allocfail-ca -addext basicConstraints=critical,CA:TRUE "
           "-addext keyUsage=critical,keyCertSign,cRLSign && "
           "openssl req -new %s -keyout server.key -out server.csr -subj /CN=127.0.0.1 && "
           "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
           "-out server.pem -days 2 -extfile srv.ext",
           pki_dir, ec, ec);
  ck_assert_msg(system(cmd) == 0, "openssl failed (see %s/log.txt)", pki_dir);
}

static void remove_pki(void) {
  char cmd[600];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", pki_dir);
  ck_assert_int_eq(system(cmd), 0);
}

/* Starts the test server (TLS when |cert| is set); reads "PORT n". */
static test_server server_start(const char *cert, const char *key) {
  const char *argv[6] = {test_env_path("MCP_H2_TEST_SERVER"), NULL};
  if (cert) {
    argv[1] = "--tls";
    argv[2] = cert;
    argv[3] = key;
  }
  return test_server_spawn(argv, 20000);
}

static void server_stop(test_server *s) {
  close(s->in_wr);
  int ws;
  ck_assert_int_eq(waitpid(s->pid, &ws, 0), s->pid);
}

static void http_sweep(bool tls, bool listener, const char *what) {
  char cert[600], key[600], ca[600], url[128];
  if (tls) {
    make_pki();
    snprintf(cert, sizeof(cert), "%s/server.pem", pki_dir);
    snprintf(key, sizeof(key), "%s/server.key", pki_dir);
    snprintf(ca, sizeof(ca), "%s/ca.pem", pki_dir);
  }
  test_server srv = server_start(tls ? cert : NULL, tls ? key : NULL);
  snprintf(url, sizeof(url), "%s://127.0.0.1:%d/mcp", tls ? "https" : "http", srv.port);
  mcp_client_options *o = base_options();
  ck_assert_int_eq(mcp_client_options_set_http(o, url, MCP_HTTP_TRANSPORT_STREAMABLE), MCP_OK);
  /* https negotiates h2 by ALPN; http uses h2c with prior knowledge. */
  if (!tls) mcp_client_options_set_http_version(o, MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
  else ck_assert_int_eq(mcp_client_options_set_ca(o, ca, NULL), MCP_OK);
  mcp_client_options_set_http_listener(o, listener);
  /* A TLS session makes some 4900 allocation calls (most of them in
   * OpenSSL): make check tries every 7th N (every 31st under a sanitizer,
   * which makes each run several times slower), MCP_ALLOCFAIL_FULL=1 every
   * N. */
  const char *full = getenv("MCP_ALLOCFAIL_FULL");
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  long stride = 31;
#else
  long stride = 7;
#endif
  long n = sweep(o, what, tls && !(full && *full == '1') ? stride : 1);
  if (!getenv("MCP_ALLOCFAIL_N")) ck_assert_int_gt(n, 50);
  mcp_client_options_free(o);
  server_stop(&srv);
  if (tls) remove_pki();
}

START_TEST(test_h2c_sweep) { http_sweep(false, true, "h2c"); }
END_TEST

START_TEST(test_h2_tls_sweep) { http_sweep(true, false, "h2 over TLS"); }
END_TEST

/* The shim itself: the N-th call fails, only while armed, from any
 * allocation function, and libc's own allocations go through it. */
START_TEST(test_shim_counts) {
  alloc_shim_arm(2);
  void *a = malloc(8);
  void *b = calloc(1, 8);
  char *c = strdup("x"); /* with ASan/TSan: their own allocator, uncounted */
  bool hit = alloc_shim_disarm();
  ck_assert_ptr_nonnull(a);
  ck_assert_ptr_null(b);
  ck_assert(hit);
  ck_assert_int_ge(alloc_shim_count(), 2);
  free(a);
  free(c);
  void *d = malloc(8); /* disarmed: never fails, not counted */
  ck_assert_ptr_nonnull(d);
  free(d);
  alloc_shim_arm(1);
  void *e = realloc(NULL, 16);
  ck_assert(alloc_shim_disarm());
  ck_assert_ptr_null(e);
}
END_TEST

static Suite *allocfail_suite(void) {
  Suite *s = suite_create("allocfail");
  TCase *tc = tcase_create("shim");
  tcase_add_test(tc, test_shim_counts);
  suite_add_tcase(s, tc);
  tc = tcase_create("sweep");
  tcase_set_timeout(tc, 1800);
  tcase_add_test(tc, test_stdio_sweep);
  tcase_add_test(tc, test_h2c_sweep);
  tcase_add_test(tc, test_h2_tls_sweep);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  signal(SIGPIPE, SIG_IGN);
  return run_suite(allocfail_suite());
}
