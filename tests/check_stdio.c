/* SPDX-License-Identifier: MIT */
/*
 * check_stdio.c: the stdio transport against real children: the fault
 * server (MCP_FAULT_SERVER), /bin/sh, cat, true, ls.  Upcalls land in a
 * collector (mutex + condition variable); tests wait on it with deadlines.
 * WAIT_UNTIL is used only for effects outside the process (a pid going away).
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_util.h"
#include "mcp_transport.h"

/* Test hook in mcp_transport_stdio.c: use the waitpid(WNOHANG) fallback
 * instead of a pidfd. */
void mcp__stdio_test_disable_pidfd(int disable);

/* Deadlines scale up under valgrind. */
static long long T(long long ms) { return test_under_valgrind() ? ms * 10 : ms; }

/* ---- collector ---------------------------------------------------------------- */

typedef struct collector {
  pthread_mutex_t mu;
  pthread_cond_t cv; /* CLOCK_MONOTONIC */
  /* Guarded by mu. */
  char **msgs;
  size_t n, cap;
  int errors;
  mcp_status err_status;
  char err_msg[512];
  int closes;
  mcp_status close_status;
  char *close_msg;
  size_t msgs_at_close;
  bool msg_after_close;
  bool bad_nul;
  bool have_thread;
  pthread_t upcall_thread;
  bool other_thread; /* an upcall came from a second thread */
  bool have_lead;
  pthread_t lead_thread; /* messages dispatched on this thread are counted */
  size_t led;
} collector;

static void coll_init(collector *c) {
  memset(c, 0, sizeof(*c));
  pthread_mutex_init(&c->mu, NULL);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&c->cv, &ca);
  pthread_condattr_destroy(&ca);
}

static void coll_destroy(collector *c) {
  for (size_t i = 0; i < c->n; i++) free(c->msgs[i]);
  free(c->msgs);
  free(c->close_msg);
  pthread_cond_destroy(&c->cv);
  pthread_mutex_destroy(&c->mu);
}

/* Caller holds mu. */
static void note_thread(collector *c) {
  if (!c->have_thread) {
    c->have_thread = true;
    c->upcall_thread = pthread_self();
  } else if (!pthread_equal(c->upcall_thread, pthread_self())) {
    c->other_thread = true;
  }
}

static void on_message(void *user, const char *data, size_t len) {
  collector *c = user;
  pthread_mutex_lock(&c->mu);
  if (c->have_lead && pthread_equal(c->lead_thread, pthread_self()))
    c->led++; /* read by a leader: not an upcall of the reader */
  else note_thread(c);
  if (data[len] != '\0') c->bad_nul = true;
  if (c->closes) c->msg_after_close = true;
  if (c->n == c->cap) {
    c->cap = c->cap ? c->cap * 2 : 64;
    c->msgs = realloc(c->msgs, c->cap * sizeof(char *));
  }
  c->msgs[c->n++] = strndup(data, len);
  pthread_cond_broadcast(&c->cv);
  pthread_mutex_unlock(&c->mu);
}

static void on_error(void *user, mcp_status status, const char *message) {
  collector *c = user;
  pthread_mutex_lock(&c->mu);
  note_thread(c);
  c->errors++;
  c->err_status = status;
  snprintf(c->err_msg, sizeof(c->err_msg), "%s", message);
  pthread_cond_broadcast(&c->cv);
  pthread_mutex_unlock(&c->mu);
}

static void on_close(void *user, mcp_status status, const char *message) {
  collector *c = user;
  pthread_mutex_lock(&c->mu);
  note_thread(c);
  c->closes++;
  c->close_status = status;
  free(c->close_msg);
  c->close_msg = strdup(message);
  c->msgs_at_close = c->n;
  pthread_cond_broadcast(&c->cv);
  pthread_mutex_unlock(&c->mu);
}

static const mcp_transport_callbacks coll_cb = {
    .on_message = on_message, .on_error = on_error, .on_close = on_close};

/* Waits until |pred| holds or |ms| pass; returns the predicate's value. */
static bool coll_wait(collector *c, bool (*pred)(collector *, const void *), const void *arg,
                      long long ms) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  ts.tv_sec += ms / 1000;
  ts.tv_nsec += (ms % 1000) * 1000000L;
  if (ts.tv_nsec >= 1000000000L) {
    ts.tv_sec++;
    ts.tv_nsec -= 1000000000L;
  }
  pthread_mutex_lock(&c->mu);
  bool ok;
  while (!(ok = pred(c, arg)))
    if (pthread_cond_timedwait(&c->cv, &c->mu, &ts) == ETIMEDOUT) {
      ok = pred(c, arg);
      break;
    }
  pthread_mutex_unlock(&c->mu);
  return ok;
}

static bool pred_count(collector *c, const void *arg) { return c->n >= *(const size_t *)arg; }
static bool pred_closed(collector *c, const void *arg) {
  (void)arg;
  return c->closes > 0;
}
static bool pred_error(collector *c, const void *arg) {
  (void)arg;
  return c->errors > 0;
}
static bool pred_has(collector *c, const void *arg) {
  for (size_t i = 0; i < c->n; i++)
    if (strstr(c->msgs[i], (const char *)arg)) return true;
  return false;
}

static bool wait_count(collector *c, size_t n, long long ms) {
  return coll_wait(c, pred_count, &n, T(ms));
}
static bool wait_closed(collector *c, long long ms) {
  return coll_wait(c, pred_closed, NULL, T(ms));
}
static bool wait_error(collector *c, long long ms) { return coll_wait(c, pred_error, NULL, T(ms)); }
static bool wait_has(collector *c, const char *s, long long ms) {
  return coll_wait(c, pred_has, s, T(ms));
}

/* Checks the upcall contract once the transport is freed. */
static void coll_check_contract(collector *c) {
  pthread_mutex_lock(&c->mu);
  ck_assert_int_eq(c->closes, 1);
  ck_assert_int_eq(c->close_status, MCP_ECLOSED);
  ck_assert(!c->msg_after_close);
  ck_assert(!c->bad_nul);
  ck_assert(!c->other_thread);
  ck_assert(!pthread_equal(c->upcall_thread, pthread_self()));
  pthread_mutex_unlock(&c->mu);
}

/* ---- helpers -------------------------------------------------------------------- */

static const char *fault_server(void) { return test_env_path("MCP_FAULT_SERVER"); }

static void cfg_init(mcp_stdio_config *cfg, const char *const *argv) {
  memset(cfg, 0, sizeof(*cfg));
  cfg->argv = argv;
  cfg->term_grace_ms = 200;
  cfg->kill_grace_ms = 200;
}

static mcp_transport *spawn_ok(const mcp_stdio_config *cfg, collector *c) {
  mcp_transport *t = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp__stdio_transport_new(cfg, &coll_cb, c, &t, &err);
  ck_assert_msg(st == MCP_OK, "spawn failed: %d %s", st, err.message ? err.message : "");
  ck_assert_ptr_nonnull(t);
  mcp_error_clear(&err);
  return t;
}

static mcp_status send_str(mcp_transport *t, const char *s, long long ms) {
  return mcp__transport_send(t, s, strlen(s), mcp__deadline_in(T(ms)), NULL);
}

static const char init_req[] =
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
    "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":"
    "{\"name\":\"check_stdio\",\"version\":\"0\"}}}";
static const char initialized_note[] =
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";

/* The child is gone: reaped by the transport, so no zombie is left. */
static void assert_reaped(pid_t pid) {
  int ws;
  errno = 0;
  ck_assert_int_eq(waitpid(pid, &ws, WNOHANG), -1);
  ck_assert_int_eq(errno, ECHILD);
}

static bool pid_gone(pid_t pid) { return kill(pid, 0) == -1 && errno == ESRCH; }

/* Our child |pid| has died; it is left for waitpid() to collect. */
static bool child_dead(pid_t pid) {
  siginfo_t si;
  memset(&si, 0, sizeof(si));
  return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid;
}

/* Collects our dead child |pid| and checks that SIGKILL ended it. */
static void reap_killed(pid_t pid) {
  int ws = 0;
  ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
  ck_assert(WIFSIGNALED(ws) && WTERMSIG(ws) == SIGKILL);
  ck_assert(pid_gone(pid));
}

static char *close_msg(collector *c) {
  pthread_mutex_lock(&c->mu);
  char *m = c->close_msg ? strdup(c->close_msg) : NULL;
  pthread_mutex_unlock(&c->mu);
  return m;
}

/* ---- spawning ------------------------------------------------------------------ */

START_TEST(test_spawn_exchange) {
  collector c;
  coll_init(&c);
  const char *argv[] = {fault_server(), NULL};
  mcp_stdio_config cfg;
  cfg_init(&cfg, argv);
  mcp_transport *t = spawn_ok(&cfg, &c);
  pid_t pid = mcp__stdio_transport_pid(t);
  ck_assert_int_gt(pid, 0);
  ck_assert_int_eq(getpgid(pid), pid); /* own process group */

  ck_assert_int_eq(send_str(t, init_req, 5000), MCP_OK);
  ck_assert(wait_has(&c, "\"serverInfo\"", 5000));
  ck_assert(wait_has(&c, "\"protocolVersion\":\"2025-06-18\"", 10));
  ck_assert_int_eq(send_str(t, initialized_note, 5000), MCP_OK);
  ck_assert_int_eq(send_str(t, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}", 5000), MCP_OK);
  ck_assert(wait_has(&c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}", 5000));

  mcp__transport_close(t);
  /* close() returns after on_close. */
  ck_assert_int_eq(c.closes, 1);
  char *m = close_msg(&c);
  ck_assert_msg(strstr(m, "closed by client") && strstr(m, "status 0"), "%s", m);
  free(m);
  ck_assert_int_eq(mcp__stdio_transport_pid(t), -1);
  assert_reaped(pid);
  mcp__transport_free(t);
  coll_check_contract(&c);
  coll_destroy(&c);
}
END_TEST

START_TEST(test_spawn_missing) {
  const char *names[] = {"mcp-no-such-program-xyz", "/nonexistent/dir/mcp-prog"};
  for (int i = 0; i < 2; i++) {
    collector c;
    coll_init(&c);
    const char *argv[] = {names[i], "--flag", NULL};
    mcp_stdio_config cfg;
    cfg_init(&cfg, argv);
    mcp_transport *t = (mcp_transport *)&c; /* must be reset to NULL */
    mcp_error err = MCP_ERROR_INIT;
    long long t0 = test_now_ms();
    ck_assert_int_eq(mcp__stdio_transport_new(&cfg, &coll_cb, &c, &t, &err), MCP_ESPAWN);
    ck_assert_int_lt(test_now_ms() - t0, T(5000));
    ck_assert_ptr_null(t);
    ck_assert_int_eq(err.status, MCP_ESPAWN);
    ck_assert_msg(strstr(err.message, names[i]) && strstr(err.message, "No such file or directory"),
                  "%s", err.message);
    mcp_error_clear(&err);
    ck_assert_int_eq(c.closes + c.errors + (int)c.n, 0);
    coll_destroy(&c);
  }
  /* Everything was reaped: no child is left. */
  errno = 0;
  ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
  ck_assert_int_eq(errno, ECHILD);
}
END_TEST

START_TEST(test_spawn_not_executable) {
  collector c;
  coll_init(&c);
  const char *argv[] = {"/etc/passwd", NULL};
  mcp_stdio_config cfg;
  cfg_init(&cfg, argv);
  mcp_transport *t = NULL;
  mcp_error err = MCP_ERROR_INIT;
  if (geteuid() == 0) {
    /* root may execute anything with an x bit; /etc/passwd has none. */
  }
  ck_assert_int_eq(mcp__stdio_transport_new(&cfg, &coll_cb, &c, &t, &err), MCP_ESPAWN);
  ck_assert_msg(strstr(err.message, "/etc/passwd") && strstr(err.message, "Permission denied"),
                "%s", err.message);
  mcp_error_clear(&err);
  coll_destroy(&c);
}
END_TEST

START_TEST(test_spawn_bad_cwd) {
  collector c;
  coll_init(&c);
  const char *argv[] = {"/bin/true", NULL};
  mcp_stdio_config cfg;
  cfg_init(&cfg, argv);
  cfg.cwd = "/nonexistent-mcp-dir";
  mcp_transport *t = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp__stdio_transport_new(&cfg, &coll_cb, &c, &t, &err), MCP_ESPAWN);
  ck_assert_msg(strstr(err.message, "/nonexistent-mcp-dir") && strstr(err.message, "No such file"),
                "%s", err.message);
  mcp_error_clear(&err);
  coll_destroy(&c);
}
END_TEST

START_TEST(test_spawn_invalid) {
  collector c;
  coll_init(&c);
  mcp_transport *t = NULL;
  mcp_stdio_config cfg;
  const char *argv[] = {NULL};
  cfg_init(&cfg, argv);
  ck_assert_int_eq(mcp__stdio_transport_new(&cfg, &coll_cb, &c, &t, NULL), MCP_EINVAL);
  ck_assert_int_eq(mcp__stdio_transport_new(NULL, &coll_cb, &c, &t, NULL), MCP_EINVAL);
  const char *argv2[] = {"/bin/true", NULL};
  cfg_init(&cfg, argv2);
  ck_assert_int_eq(mcp__stdio_transport_new(&cfg, NULL, &c, &t, NULL), MCP_EINVAL);
  coll_destroy(&c);
}
END_TEST

START_TEST(test_env_merge) {
  setenv("MCP_T_FOO", "parent value", 1);
  setenv("MCP_T_REMOVED", "present", 1);
  collector c;
  coll_init(&c);
  const char *argv[] = {"sh", "-c",
                        "printf '{\"v\":\"%s\",\"r\":\"%s\",\"p\":\"%s\",\"n\":\"%s\"}\\n' "
                        "\"$MCP_T_FOO\" \"${MCP_T_REMOVED-unset}\" \"$PATH\" \"$MCP_T_NEW\"",
                        NULL};
  const char *env[] = {"MCP_T_FOO=child value", "MCP_T_REMOVED", "MCP_T_NEW=a=b", NULL};
  mcp_stdio_config cfg;
  cfg_init(&cfg, argv);
  cfg.env = env;
  mcp_transport *t = spawn_ok(&cfg, &c);
  ck_assert(wait_count(&c, 1, 5000));
  char want[4096];
  snprintf(want, sizeof(want), "{\"v\":\"child value\",\"r\":\"unset\",\"p\":\"%s\",\"n\":\"a=b\"}",
           getenv("PATH"));
  pthread_mutex_lock(&c.mu);
  ck_assert_str_eq(c.msgs[0], want);
  pthread_mutex_unlock(&c.mu);
  ck_assert(wait_closed(&c, 5000));
  mcp__transport_free(t);
  coll_check_contract(&c);
  coll_destroy(&c);
  /* The host's environment is untouched. */
  ck_assert_str_eq(getenv("MCP_T_FOO"), "parent value");
  ck_assert_str_eq(getenv("MCP_T_REMOVED"), "present");
  unsetenv("MCP_T_FOO");
  unsetenv("MCP_T_REMOVED");
}
END_TEST

START_TEST(test_env_path_from_child_env) {
  /* A PATH set in the config is where the program is searched. */
  collector c;
  coll_init(&c);
  const char *argv[] = {"true", NULL};
  const char *env[] = {"PATH=/nonexistent-a:/bin:/usr/bin", NULL};
  mcp_stdio_config cfg;
  cfg_init(&cfg, argv);
  cfg.env = env;
  mcp_transport *t = spawn_ok(&cfg, &c);
  ck_assert(wait_closed(&c, 5000));
  mcp__transport_free(t);
  coll_destroy(&c);

  coll_init(&c);
  const char *env2[] = {"PATH=/nonexistent-a", NULL};
  cfg.env = env2;
  mcp_error err = MCP_ERROR_INIT;
  t = NULL;
  ck_assert_int_eq(mcp__stdio_transport_new(&cfg, &coll_cb, &c, &t, &err), MCP_ESPAWN);
  mcp_error_clear(&err);
  coll_destroy(&c);
}
END_TEST

START_TEST(test_cwd) {
  char dir[PATH_MAX];
  ck_assert_ptr_nonnull(realpath(test_env_path("MCP_TEST_TMPDIR"), dir));
  collector c;
  coll_init(&c);
  const char *argv[] = {"sh", "-c", "pwd", NULL};
  mcp_stdio_config cfg;
  cfg_init(&cfg, argv);
  cfg.cwd = dir;
  mcp_transport *t = spawn_ok(&cfg, &c);
  ck_assert(wait_count(&c, 1, 5000));
  pthread_mutex_lock(&c.mu);
  ck_assert_str_eq(c.msgs[0], dir);
  pthread_mutex_unlock(&c.mu);
  mcp__transport_free(t);
  coll_check_contract(&c);
  coll_destroy(&c);
}
END_TEST

START_TEST(test_child_fds) {
  /* A descriptor the host leaked without close-on-exec must not reach the
   * child: ls sees 0-2 and the one it opens for the directory. */
  int leak = open("/dev/null", O_RDONLY);
  ck_assert_int_ge(leak, 0);
  ck_assert_int_eq(dup2(leak, 100), 100);
  collector c;
  coll_init(&c);
  const char *argv[] = {"ls", "/proc/self/fd", NULL};
  mcp_stdio_config cfg;
  cfg_init(&cfg, argv);
  mcp_transport *t = spawn_ok(&cfg, &c);
  ck_assert(wait_closed(&c, 5000));
  pthread_mutex_lock(&c.mu);
  ck_assert_uint_eq(c.n, 4);
  ck_assert_str_eq(c.msgs[0], "0");
  ck_assert_str_eq(c.msgs[1], "1");
  ck_assert_str_eq(c.msgs[2], "2");
  ck_assert_str_eq(c.msgs[3], "3");
  pthread_mutex_unlock(&c.mu);
  mcp__transport_free(t);
  coll_destroy(&c);
  close(100);
  close(leak);
}
END_TEST

START_TEST(test_sigpipe_default_in_child) {
  /* The child starts with default dispositions and an empty mask even if the
   * host ignores SIGPIPE. */
  struct sigaction old, ign;
  memset(&ign, 0, sizeof(ign));
  ign.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ign, &old);
  collector c;
  coll_init(&c);
  const char *argv[] = {"sh", "-c", "grep -E '^(SigIgn|SigBlk)' /proc/self/status", NULL};
  mcp_stdio_config cfg;
  cfg_init(&cfg, argv);
  mcp_transport *t = spawn_ok(&cfg, &c);
  ck_assert(wait_closed(&c, 5000));
  pthread_mutex_lock(&c.mu);
  ck_assert_uint_eq(c.n, 2);
  /* Nothing blocked, and SIGPIPE (bit 13) not ignored.  Other ignored bits
   * may be inherited from the environment: glibc's internal signals 32 and
   * 33 cannot be reset through its wrappers, and test harnesses ignore them. */
  ck_assert_str_eq(c.msgs[0], "SigBlk:\t0000000000000000");
  ck_assert(strncmp(c.msgs[1], "SigIgn:\t", 8) == 0);
  unsigned long long ignored = strtoull(c.msgs[1] + 8, NULL, 16);
  ck_assert_msg((ignored & (1ULL << (SIGPIPE - 1))) == 0, "SIGPIPE ignored in child: %s",
                c.msgs[1]);
  ck_assert_msg((ignored & 0x7fffffffULL) == 0, "standard signals ignored in child: %s", c.msgs[1]);
  pthread_mutex_unlock(&c.mu);
  mcp__transport_free(t);
  coll_destroy(&c);
  sigaction(SIGPIPE, &old, NULL);
}
END_TEST

/* ---- reading ------------------------------------------------------------------- */

START_TEST(test_stderr_flood) {
  long long bytes = test_under_valgrind() ? 10000000LL : 100000000LL;
  char arg[32];
  snprintf(arg, sizeof(arg), "%lld", bytes);
  collector c;
  coll_init(&c);
  const char *argv[] = {fault_server(), "--stderr-flood", arg, NULL};
  mcp_stdio_config cfg;
  cfg_init(&cfg, argv);
  long long t0 = test_now_ms();
  mcp_transport *t = spawn_ok(&cfg, &c);
  ck_assert_int_eq(send_str(t, init_req, 5000), MCP_OK);
  ck_assert(wait_has(&c, "\"serverInfo\"", 60000));
  long long took = test_now_ms() - t0;
  fprintf(stderr, "measure: %lld bytes of stderr drained, answer after %lld ms\n", bytes, took);
  mcp__transport_close(t);
  char *m = close_msg(&c);
  /* The tail quoted in the message is the end of the flood, trimmed. */
  ck_assert_msg(strstr(m, "stderr: mcp-fault-server: stderr flood"), "%s", m);
  ck_assert_uint_lt(strlen(m), 4096);
  free(m);
  mcp__transport_free(t);
  coll_check_contract(&c);
  coll_destroy(&c);
}
END_TEST

START_TEST(test_stderr_tail_in_message) {
  collector c;
  coll_init(&c);
  const char *argv[] = {
      "sh", "-c", "i=0; while [ $i -lt 3000 ]; do echo \"line $i\"; i=$((i+1)); done >&2; exit 7",
      NULL};
  mcp_stdio_config cfg;
  cfg_init(&cfg, argv);
  cfg.stderr_tail = 4096;
  mcp_transport *t = spawn_ok(&cfg, &c);
  ck_assert(wait_closed(&c, 10000));
  char *m = close_msg(&c);
  ck_assert_msg(strstr(m, "server exited with status 7; stderr: line "), "%s", m);
  ck_assert_msg(strstr(m, "line 2998 | line 2999"), "%s", m);
  ck_assert(!strstr(m, "line 2999 |"));
  ck_assert(!strstr(m, "line 10 |"));
  ck_assert(!strchr(m, '\n'));
  ck_assert_uint_lt(strlen(m), 3000);
  free(m);
  mcp__transport_free(t);
  coll_check_contract(&c);
  coll_destroy(&c);
}
END_TEST

static void check_crash(bool pidfd) {
  mcp__stdio_test_disable_pidfd(!pidfd);
  collector c;
  coll_init(&c);
  const char *argv[] = {fault_server(), NULL};
  mcp_stdio_config cfg;
  cfg_init(&cfg, argv);
  mcp_transport *t = spawn_ok(&cfg, &c);
  pid_t pid = mcp__stdio_transport_pid(t);
  ck_assert_int_eq(send_str(t, init_req, 5000), MCP_OK);
  ck_assert_int_eq(send_str(t,
                            "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":"
                            "{\"name\":\"crash\",\"arguments\":{}}}",
                            5000),
                   MCP_OK);
  ck_assert(wait_closed(&c, 5000));
  char *m = close_msg(&c);
  ck_assert_msg(strstr(m, "server exited with status 3") && strstr(m, "about to crash"), "%s", m);
  ck_assert_msg(!strstr(m, "closed by client"), "%s", m);
  free(m);
  /* The reply to initialize came before the close. */
  pthread_mutex_lock(&c.mu);
  ck_assert_uint_eq(c.msgs_at_close, 1);
  pthread_mutex_unlock(&c.mu);
  /* Reaped by the reader already; sends now fail. */
  ck_assert_int_eq(mcp__stdio_transport_pid(t), -1);
  assert_reaped(pid);
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp__transport_send(t, "{}", 2, mcp__deadline_in(1000), &err), MCP_ECLOSED);
  mcp_error_clear(&err);
  mcp__transport_close(t);
  mcp__transport_free(t);
  coll_check_contract(&c);
  coll_destroy(&c);
  mcp__stdio_test_disable_pidfd(0);
}

START_TEST(test_crash_mid_request) { check_crash(true); }
END_TEST

START_TEST(test_crash_mid_request_no_pidfd) { check_crash(false); }
END_TEST

START_TEST(test_crash_on_call_flag) {
  collector c;
  coll_init(&c);
  const char *argv[] = {fault_server(), "--crash-on-call", NULL};
  mcp_stdio_config cfg;
  cfg_init(&cfg, argv);
  mcp_transport *t = spawn_ok(&cfg, &c);
  ck_assert_int_eq(send_str(t,
                            "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":"
                            "{\"name\":\"echo\",\"arguments\":{\"text\":\"x\"}}}",
                            5000),
                   MCP_OK);
  ck_assert(wait_closed(&c, 5000));
  char *m = close_msg(&c);
  ck_assert_msg(strstr(m, "status 3") && strstr(m, "about to crash"), "%s", m);
  free(m);
  mcp__transport_free(t);
  coll_check_contract(&c);
  coll_destroy(&c);
}
END_TEST

START_TEST(test_killed_by_signal) {
  collector c;
  coll_init(&c);
  const char *argv[] = {"sh", "-c", "echo dying >&2; kill -9 $$", NULL};
  mcp_stdio_config cfg;
  cfg_init(&cfg, argv);
  mcp_transport *t = spawn_ok(&cfg, &c);
  ck_assert(wait_closed(&c, 5000));
  char *m = close_msg(&c);
  ck_assert_msg(strstr(m, "server killed by signal 9 (SIGKILL); stderr: dying"), "%s", m);
  free(m);
  mcp__transport_free(t);
  coll_check_contract(&c);
  coll_destroy(&c);
}
END_TEST

START_TEST(test_exit_after_output) {
  /* Every line written before exit arrives before on_close. */
  collector c;
  coll_init(&c);
  const char *argv[] = {"sh", "-c",
                        "i=0; while [ $i -lt 500 ]; do echo \"{\\\"i\\\":$i}\"; "
                        "i=$((i+1)); done; exit 0",
                        NULL};
  mcp_stdio_config cfg;
  cfg_init(&cfg, argv);
  mcp_transport *t = spawn_ok(&cfg, &c);
  ck_assert(wait_closed(&c, 10000));
  pthread_mutex_lock(&c.mu);
  ck_assert_uint_eq(c.n, 500);
  ck_assert_uint_eq(c.msgs_at_close, 500);
  ck_assert_str_eq(c.msgs[499], "{\"i\":499}");
  ck_assert_msg(strcmp(c.close_msg, "server exited with status 0") == 0, "%s", c.close_msg);
  pthread_mutex_unlock(&c.mu);
  mcp__transport_free(t);
  coll_check_contract(&c);
  coll_destroy(&c);
}
END_TEST

START_TEST(test_eof_child_closes_stdout) {
  /* stdout closes but the child lives on: on_close says so, and close()
   * still gets rid of the child. */
  collector c;
  coll_init(&c);
  const char *argv[] = {"sh", "-c", "echo '{\"a\":1}'; exec >&-; exec sleep 30", NULL};
  mcp_stdio_config cfg;
  cfg_init(&cfg, argv);
  mcp_transport *t = spawn_ok(&cfg, &c);
  pid_t pid = mcp__stdio_transport_pid(t);
  ck_assert(wait_closed(&c, 5000));
  char *m = close_msg(&c);
  ck_assert_str_eq(m, "server closed stdout");
  free(m);
  pthread_mutex_lock(&c.mu);
  ck_assert_uint_eq(c.n, 1);
  ck_assert_str_eq(c.msgs[0], "{\"a\":1}");
  pthread_mutex_unlock(&c.mu);
  ck_assert_int_eq(mcp__stdio_transport_pid(t), pid); /* still running */
  ck_assert_int_eq(send_str(t, "{}", 1000), MCP_ECLOSED);
  mcp__transport_close(t);
  ck_assert_int_eq(mcp__stdio_transport_pid(t), -1);
  assert_reaped(pid);
  mcp__transport_free(t);
  coll_check_contract(&c);
  coll_destroy(&c);
}
END_TEST

START_TEST(test_oversize_line) {
  collector c;
  coll_init(&c);
  const char *argv[] = {fault_server(), "--oversize", "200000", NULL};
  mcp_stdio_config cfg;
  cfg_init(&cfg, argv);
  cfg.max_line = 65536;
  mcp_transport *t = spawn_ok(&cfg, &c);
  ck_assert_int_eq(send_str(t,
                            "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":"
                            "{\"name\":\"echo\",\"arguments\":{\"text\":\"after\"}}}",
                            5000),
                   MCP_OK);
  ck_assert(wait_has(&c, "\"text\":\"after\"", 5000));
  ck_assert(wait_error(&c, 10));
  pthread_mutex_lock(&c.mu);
  ck_assert_int_eq(c.errors, 1);
  ck_assert_int_eq(c.err_status, MCP_ETOOBIG);
  ck_assert_msg(strstr(c.err_msg, "200000") && strstr(c.err_msg, "65536"), "%s", c.err_msg);
  ck_assert_uint_eq(c.n, 1); /* the oversize line was not delivered */
  pthread_mutex_unlock(&c.mu);
  mcp__transport_free(t);
  coll_check_contract(&c);
  coll_destroy(&c);
}
END_TEST

START_TEST(test_garbage_lines_passed_through) {
  /* The transport frames; it does not judge JSON.  Empty lines vanish. */
  collector c;
  coll_init(&c);
  const char *argv[] = {fault_server(), "--garbage", NULL};
  mcp_stdio_config cfg;
  cfg_init(&cfg, argv);
  mcp_transport *t = spawn_ok(&cfg, &c);
  ck_assert_int_eq(send_str(t, init_req, 5000), MCP_OK);
  ck_assert(wait_has(&c, "\"serverInfo\"", 5000));
  pthread_mutex_lock(&c.mu);
  ck_assert_uint_eq(c.n, 6);
  ck_assert_str_eq(c.msgs[0], "this is not json");
  ck_assert_str_eq(c.msgs[1], "42");
  ck_assert_str_eq(c.msgs[4], "   ");
  pthread_mutex_unlock(&c.mu);
  mcp__transport_free(t);
  coll_check_contract(&c);
  coll_destroy(&c);
}
END_TEST

/* ---- writing ------------------------------------------------------------------- */

/* Starts a fault server that stops reading after the handshake. */
static mcp_transport *spawn_stop_reading(collector *c) {
  static const char *argv[3];
  argv[0] = fault_server();
  argv[1] = "--stop-reading";
  argv[2] = NULL;
  mcp_stdio_config cfg;
  cfg_init(&cfg, argv);
  mcp_transport *t = spawn_ok(&cfg, c);
  ck_assert_int_eq(send_str(t, init_req, 5000), MCP_OK);
  ck_assert(wait_has(c, "\"serverInfo\"", 5000));
  ck_assert_int_eq(send_str(t, initialized_note, 5000), MCP_OK);
  return t;
}

static char *make_msg(size_t n) {
  char *m = malloc(n + 1);
  memcpy(m, "{\"pad\":\"", 8);
  memset(m + 8, 'p', n - 10);
  memcpy(m + n - 2, "\"}", 2);
  m[n] = '\0';
  return m;
}

START_TEST(test_stop_reading_large_message) {
  collector c;
  coll_init(&c);
  mcp_transport *t = spawn_stop_reading(&c);
  char *big = make_msg(256 * 1024);
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = MCP_OK;
  long long took = 0;
  for (int i = 0; i < 100 && st == MCP_OK; i++) {
    long long t0 = test_now_ms();
    st = mcp__transport_send(t, big, strlen(big), mcp__deadline_in(300), &err);
    took = test_now_ms() - t0;
  }
  ck_assert_int_eq(st, MCP_ETIMEDOUT);
  fprintf(stderr, "measure: send to a stalled reader timed out after %lld ms (deadline 300)\n",
          took);
  ck_assert_int_ge(took, 250);
  ck_assert_int_lt(took, T(3000));
  /* Half a message went out, so the transport closed itself. */
  ck_assert_msg(strstr(err.message, "transport closed"), "%s", err.message);
  mcp_error_clear(&err);
  ck_assert_int_eq(send_str(t, "{}", 1000), MCP_ECLOSED);
  ck_assert(wait_closed(&c, 5000));
  char *m = close_msg(&c);
  ck_assert_msg(strstr(m, "write to server timed out mid-message") &&
                    strstr(m, "signal 15 (SIGTERM)"),
                "%s", m);
  free(m);
  free(big);
  mcp__transport_free(t);
  coll_check_contract(&c);
  coll_destroy(&c);
}
END_TEST

typedef struct blocked_writer {
  mcp_transport *t;
  int64_t deadline;
  mcp_status st;
  long long took;
} blocked_writer;

static void *blocked_writer_main(void *arg) {
  blocked_writer *w = arg;
  char *m = make_msg(1000);
  long long t0 = test_now_ms();
  w->st = mcp__transport_send(w->t, m, strlen(m), w->deadline, NULL);
  w->took = test_now_ms() - t0;
  free(m);
  return NULL;
}

START_TEST(test_stop_reading_small_messages) {
  /* Messages up to PIPE_BUF go out whole or not at all, so a timeout
   * leaves the stream intact and the transport open. */
  collector c;
  coll_init(&c);
  mcp_transport *t = spawn_stop_reading(&c);
  char *m = make_msg(1000);
  mcp_status st = MCP_OK;
  int sent = 0;
  while (st == MCP_OK && sent < 100000) {
    st = mcp__transport_send(t, m, strlen(m), mcp__deadline_in(200), NULL);
    if (st == MCP_OK) sent++;
  }
  ck_assert_int_eq(st, MCP_ETIMEDOUT);
  ck_assert_int_gt(sent, 10);
  ck_assert_int_eq(mcp__transport_send(t, m, strlen(m), mcp__deadline_in(100), NULL),
                   MCP_ETIMEDOUT);

  /* One writer blocks without a deadline; another times out waiting for
   * it; close() wakes the first. */
  blocked_writer a = {t, MCP_NO_DEADLINE, MCP_OK, 0};
  blocked_writer b = {t, mcp__deadline_in(300), MCP_OK, 0};
  pthread_t ta, tb;
  pthread_create(&ta, NULL, blocked_writer_main, &a);
  pthread_create(&tb, NULL, blocked_writer_main, &b);
  pthread_join(tb, NULL);
  ck_assert_int_eq(b.st, MCP_ETIMEDOUT);
  ck_assert_int_lt(b.took, T(3000));
  pthread_mutex_lock(&c.mu);
  ck_assert_int_eq(c.closes, 0);
  pthread_mutex_unlock(&c.mu);
  mcp__transport_close(t);
  pthread_join(ta, NULL);
  ck_assert_int_eq(a.st, MCP_ECLOSED);
  free(m);
  mcp__transport_free(t);
  coll_check_contract(&c);
  coll_destroy(&c);
}
END_TEST

START_TEST(test_sigpipe_child_exits) {
  /* /bin/true exits at once; sending again and again must fail cleanly,
   * never kill the host with SIGPIPE. */
  collector c;
  coll_init(&c);
  const char *argv[] = {"/bin/true", NULL};
  mcp_stdio_config cfg;
  cfg_init(&cfg, argv);
  mcp_transport *t = spawn_ok(&cfg, &c);
  /* Send until the child is gone (the pipe has room until then), then
   * keep going: every later send fails too. */
  mcp_status st = MCP_OK;
  long long end = test_now_ms() + T(10000);
  while (st == MCP_OK && test_now_ms() < end)
    st = send_str(t, "{\"jsonrpc\":\"2.0\",\"method\":\"x\"}", 1000);
  ck_assert_int_eq(st, MCP_ECLOSED);
  for (int i = 0; i < 1000; i++) ck_assert_int_eq(send_str(t, "{}", 1000), MCP_ECLOSED);
  ck_assert(wait_closed(&c, 5000));
  ck_assert_int_eq(send_str(t, "{}", 1000), MCP_ECLOSED);
  sigset_t pending;
  sigpending(&pending);
  ck_assert(!sigismember(&pending, SIGPIPE));
  mcp__transport_free(t);
  coll_check_contract(&c);
  coll_destroy(&c);
}
END_TEST

START_TEST(test_sigpipe_stdin_closed) {
  /* The child closes its stdin but stays: the write gets EPIPE. */
  collector c;
  coll_init(&c);
  const char *argv[] = {"sh", "-c", "exec 0<&-; echo ready; exec sleep 30", NULL};
  mcp_stdio_config cfg;
  cfg_init(&cfg, argv);
  mcp_transport *t = spawn_ok(&cfg, &c);
  ck_assert(wait_has(&c, "ready", 5000));
  mcp_error err = MCP_ERROR_INIT;
  for (int i = 0; i < 3; i++) {
    ck_assert_int_eq(mcp__transport_send(t, "{}", 2, mcp__deadline_in(1000), &err), MCP_ECLOSED);
    ck_assert_msg(strstr(err.message, "closed its stdin"), "%s", err.message);
  }
  mcp_error_clear(&err);
  sigset_t pending, mask;
  sigpending(&pending);
  ck_assert(!sigismember(&pending, SIGPIPE));
  /* SIGPIPE is blocked only during a send: the thread's mask is back. */
  pthread_sigmask(SIG_SETMASK, NULL, &mask);
  ck_assert(!sigismember(&mask, SIGPIPE));

  /* A host thread that blocks SIGPIPE itself: ours is still consumed, the
   * mask stays blocked, and a SIGPIPE the host had pending is left alone. */
  sigset_t pipe_set, old;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
  ck_assert_int_eq(mcp__transport_send(t, "{}", 2, mcp__deadline_in(1000), NULL), MCP_ECLOSED);
  sigpending(&pending);
  ck_assert(!sigismember(&pending, SIGPIPE));
  pthread_sigmask(SIG_SETMASK, NULL, &mask);
  ck_assert(sigismember(&mask, SIGPIPE));
  pthread_kill(pthread_self(), SIGPIPE); /* the host's own, pending */
  ck_assert_int_eq(mcp__transport_send(t, "{}", 2, mcp__deadline_in(1000), NULL), MCP_ECLOSED);
  sigpending(&pending);
  ck_assert(sigismember(&pending, SIGPIPE));
  struct timespec zero = {0, 0};
  ck_assert_int_eq(sigtimedwait(&pipe_set, NULL, &zero), SIGPIPE);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  mcp__transport_free(t);
  coll_destroy(&c);
}
END_TEST

START_TEST(test_send_rejects_newline) {
  collector c;
  coll_init(&c);
  const char *argv[] = {"cat", NULL};
  mcp_stdio_config cfg;
  cfg_init(&cfg, argv);
  mcp_transport *t = spawn_ok(&cfg, &c);
  ck_assert_int_eq(send_str(t, "{}\n{}", 1000), MCP_EINVAL);
  ck_assert_int_eq(send_str(t, "{\"ok\":1}", 1000), MCP_OK);
  ck_assert(wait_count(&c, 1, 5000));
  pthread_mutex_lock(&c.mu);
  ck_assert_str_eq(c.msgs[0], "{\"ok\":1}");
  pthread_mutex_unlock(&c.mu);
  mcp__transport_free(t);
  coll_check_contract(&c);
  coll_destroy(&c);
}
END_TEST

#define SENDERS 8
#define PER_SENDER 1000

typedef struct sender {
  mcp_transport *t;
  int id;
  int failures;
} sender;

static void *sender_main(void *arg) {
  sender *s = arg;
  char buf[256];
  for (int i = 0; i < PER_SENDER; i++) {
    int n = snprintf(buf, sizeof(buf), "{\"t\":%d,\"i\":%d,\"pad\":\"%0*d\"}", s->id, i,
                     20 + (i % 60), i);
    if (mcp__transport_send(s->t, buf, (size_t)n, mcp__deadline_in(T(30000)), NULL) != MCP_OK)
      s->failures++;
  }
  return NULL;
}

START_TEST(test_concurrent_sends) {
  collector c;
  coll_init(&c);
  const char *argv[] = {"cat", NULL};
  mcp_stdio_config cfg;
  cfg_init(&cfg, argv);
  mcp_transport *t = spawn_ok(&cfg, &c);
  pthread_t th[SENDERS];
  sender s[SENDERS];
  for (int i = 0; i < SENDERS; i++) {
    s[i] = (sender){t, i, 0};
    pthread_create(&th[i], NULL, sender_main, &s[i]);
  }
  for (int i = 0; i < SENDERS; i++) {
    pthread_join(th[i], NULL);
    ck_assert_int_eq(s[i].failures, 0);
  }
  ck_assert(wait_count(&c, SENDERS * PER_SENDER, 30000));
  int next[SENDERS] = {0};
  pthread_mutex_lock(&c.mu);
  ck_assert_uint_eq(c.n, SENDERS * PER_SENDER);
  for (size_t k = 0; k < c.n; k++) {
    int tid, i, len;
    char pad[128], want[256];
    ck_assert_int_eq(
        sscanf(c.msgs[k], "{\"t\":%d,\"i\":%d,\"pad\":\"%127[0-9]\"}%n", &tid, &i, pad, &len), 3);
    ck_assert(tid >= 0 && tid < SENDERS);
    /* Each thread's lines arrive whole and in its order. */
    ck_assert_int_eq(i, next[tid]);
    next[tid]++;
    snprintf(want, sizeof(want), "{\"t\":%d,\"i\":%d,\"pad\":\"%0*d\"}", tid, i, 20 + (i % 60), i);
    ck_assert_str_eq(c.msgs[k], want);
  }
  pthread_mutex_unlock(&c.mu);
  mcp__transport_close(t);
  mcp__transport_free(t);
  coll_check_contract(&c);
  coll_destroy(&c);
}
END_TEST

/* ---- closing ------------------------------------------------------------------- */

static void check_ignore_sigterm(bool pidfd) {
  mcp__stdio_test_disable_pidfd(!pidfd);
  collector c;
  coll_init(&c);
  const char *argv[] = {fault_server(), "--ignore-sigterm", NULL};
  mcp_stdio_config cfg;
  cfg_init(&cfg, argv);
  mcp_transport *t = spawn_ok(&cfg, &c);
  pid_t pid = mcp__stdio_transport_pid(t);
  /* An answer proves SIGTERM is already ignored. */
  ck_assert_int_eq(send_str(t, init_req, 5000), MCP_OK);
  ck_assert(wait_has(&c, "\"serverInfo\"", 5000));
  long long t0 = test_now_ms();
  mcp__transport_close(t);
  long long took = test_now_ms() - t0;
  fprintf(stderr, "measure: close of an ignore-sigterm child (grace 200+200 ms, %s) took %lld ms\n",
          pidfd ? "pidfd if available" : "waitpid fallback", took);
  ck_assert_int_lt(took, T(4500));
  ck_assert_int_ge(took, 350);
  char *m = close_msg(&c);
  ck_assert_msg(strstr(m, "killed by signal 9 (SIGKILL)"), "%s", m);
  free(m);
  assert_reaped(pid);
  ck_assert(pid_gone(pid));
  mcp__transport_free(t);
  coll_check_contract(&c);
  coll_destroy(&c);
  mcp__stdio_test_disable_pidfd(0);
}

START_TEST(test_close_ignore_sigterm) { check_ignore_sigterm(true); }
END_TEST

START_TEST(test_close_ignore_sigterm_no_pidfd) { check_ignore_sigterm(false); }
END_TEST

START_TEST(test_close_sigterm_stage) {
  /* A child that ignores stdin EOF but not SIGTERM ends at the SIGTERM. */
  collector c;
  coll_init(&c);
  const char *argv[] = {"sleep", "30", NULL};
  mcp_stdio_config cfg;
  cfg_init(&cfg, argv);
  mcp_transport *t = spawn_ok(&cfg, &c);
  long long t0 = test_now_ms();
  mcp__transport_close(t);
  long long took = test_now_ms() - t0;
  ck_assert_int_lt(took, T(2000));
  char *m = close_msg(&c);
  ck_assert_msg(strstr(m, "signal 15 (SIGTERM)"), "%s", m);
  free(m);
  mcp__transport_free(t);
  coll_check_contract(&c);
  coll_destroy(&c);
}
END_TEST

static void check_grandchild(bool pidfd) {
  mcp__stdio_test_disable_pidfd(!pidfd);
  /* Orphans come to us rather than to an init that may not reap them, so
   * the grandchild's death can be observed and its zombie collected. */
  ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
  char pidfile[PATH_MAX], script[PATH_MAX * 2 + 64];
  snprintf(pidfile, sizeof(pidfile), "%s/check_stdio-grandchild.%d",
           test_env_path("MCP_TEST_TMPDIR"), (int)getpid());
  unlink(pidfile);
  snprintf(script, sizeof(script), "sleep 1000 & echo $! > '%s'; exec '%s'", pidfile,
           fault_server());
  collector c;
  coll_init(&c);
  const char *argv[] = {"sh", "-c", script, NULL};
  mcp_stdio_config cfg;
  cfg_init(&cfg, argv);
  mcp_transport *t = spawn_ok(&cfg, &c);
  pid_t pid = mcp__stdio_transport_pid(t);
  /* The server answering means the pidfile was written before the exec. */
  ck_assert_int_eq(send_str(t, init_req, 5000), MCP_OK);
  ck_assert(wait_has(&c, "\"serverInfo\"", 5000));
  FILE *f = fopen(pidfile, "r");
  ck_assert_ptr_nonnull(f);
  int gpid = 0;
  ck_assert_int_eq(fscanf(f, "%d", &gpid), 1);
  fclose(f);
  unlink(pidfile);
  ck_assert_int_gt(gpid, 0);
  ck_assert_int_eq(kill(gpid, 0), 0);

  mcp__transport_close(t);
  assert_reaped(pid);
  /* The grandchild was SIGKILLed with the group; it is reparented to us. */
  ck_assert(WAIT_UNTIL(child_dead(gpid), T(5000)));
  reap_killed(gpid);
  mcp__transport_free(t);
  coll_check_contract(&c);
  coll_destroy(&c);
  prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
  mcp__stdio_test_disable_pidfd(0);
}

START_TEST(test_grandchild_killed) { check_grandchild(true); }
END_TEST

START_TEST(test_grandchild_killed_no_pidfd) { check_grandchild(false); }
END_TEST

static void check_grandchild_holds_stdout(bool pidfd) {
  /* The server dies while a grandchild keeps stdout open: the exit is still
   * noticed (pidfd, or the waitpid fallback), and the grandchild goes with
   * the group. */
  mcp__stdio_test_disable_pidfd(!pidfd);
  ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
  collector c;
  coll_init(&c);
  const char *argv[] = {"sh", "-c", "sleep 1000 & echo \"{\\\"g\\\":$!}\"; exit 5", NULL};
  mcp_stdio_config cfg;
  cfg_init(&cfg, argv);
  mcp_transport *t = spawn_ok(&cfg, &c);
  ck_assert(wait_closed(&c, 5000));
  char *m = close_msg(&c);
  ck_assert_msg(strstr(m, "server exited with status 5"), "%s", m);
  free(m);
  int gpid = 0;
  pthread_mutex_lock(&c.mu);
  ck_assert_uint_eq(c.n, 1);
  ck_assert_int_eq(sscanf(c.msgs[0], "{\"g\":%d}", &gpid), 1);
  pthread_mutex_unlock(&c.mu);
  ck_assert(WAIT_UNTIL(child_dead(gpid), T(5000)));
  reap_killed(gpid);
  mcp__transport_free(t);
  coll_check_contract(&c);
  coll_destroy(&c);
  prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
  mcp__stdio_test_disable_pidfd(0);
}

START_TEST(test_grandchild_holds_stdout) { check_grandchild_holds_stdout(true); }
END_TEST

START_TEST(test_grandchild_holds_stdout_no_pidfd) { check_grandchild_holds_stdout(false); }
END_TEST

typedef struct upcall_ctx {
  collector c;
  mcp_transport *t; /* atomic: set by the test after new() */
} upcall_ctx;

static void close_from_upcall(void *user, const char *data, size_t len) {
  upcall_ctx *u = user;
  on_message(&u->c, data, len);
  mcp__transport_close(__atomic_load_n(&u->t, __ATOMIC_ACQUIRE));
}

static void ctx_on_close(void *user, mcp_status status, const char *message) {
  upcall_ctx *u = user;
  on_close(&u->c, status, message);
}

START_TEST(test_close_from_upcall) {
  /* Forbidden, but it must not deadlock: the transport still shuts down. */
  upcall_ctx u;
  coll_init(&u.c);
  u.t = NULL;
  mcp_transport_callbacks cb = {.on_message = close_from_upcall, .on_close = ctx_on_close};
  /* The child speaks only after our "go", so the upcall sees |t| set. */
  const char *argv[] = {"sh", "-c", "read x; echo hello; exec cat", NULL};
  mcp_stdio_config cfg;
  cfg_init(&cfg, argv);
  mcp_transport *t = NULL;
  ck_assert_int_eq(mcp__stdio_transport_new(&cfg, &cb, &u, &t, NULL), MCP_OK);
  __atomic_store_n(&u.t, t, __ATOMIC_RELEASE);
  pid_t pid = mcp__stdio_transport_pid(t);
  ck_assert_int_eq(send_str(t, "go", 5000), MCP_OK);
  /* cat ends when the upcall closes its stdin. */
  ck_assert(wait_closed(&u.c, 5000));
  char *m = close_msg(&u.c);
  ck_assert_msg(strstr(m, "closed by client: server exited with status 0"), "%s", m);
  free(m);
  ck_assert_int_eq(mcp__stdio_transport_pid(t), -1);
  mcp__transport_free(t);
  assert_reaped(pid);
  coll_check_contract(&u.c);
  coll_destroy(&u.c);
}
END_TEST

START_TEST(test_no_zombie) {
  collector c;
  coll_init(&c);
  const char *argv[] = {fault_server(), NULL};
  mcp_stdio_config cfg;
  cfg_init(&cfg, argv);
  mcp_transport *t = spawn_ok(&cfg, &c);
  pid_t pid = mcp__stdio_transport_pid(t);
  mcp__transport_close(t);
  assert_reaped(pid);
  mcp__transport_free(t);
  coll_check_contract(&c);
  coll_destroy(&c);
}
END_TEST

static void *close_main(void *arg) {
  mcp__transport_close(arg);
  return NULL;
}

START_TEST(test_close_idempotent) {
  collector c;
  coll_init(&c);
  const char *argv[] = {fault_server(), NULL};
  mcp_stdio_config cfg;
  cfg_init(&cfg, argv);
  mcp_transport *t = spawn_ok(&cfg, &c);
  pthread_t th[3];
  for (int i = 0; i < 3; i++) pthread_create(&th[i], NULL, close_main, t);
  mcp__transport_close(t);
  for (int i = 0; i < 3; i++) pthread_join(th[i], NULL);
  mcp__transport_close(t);
  mcp__transport_close(t);
  ck_assert_int_eq(send_str(t, "{}", 1000), MCP_ECLOSED);
  mcp__transport_free(t);
  mcp__transport_free(NULL);
  coll_check_contract(&c);
  coll_destroy(&c);
}
END_TEST

START_TEST(test_free_without_close) {
  collector c;
  coll_init(&c);
  const char *argv[] = {fault_server(), NULL};
  mcp_stdio_config cfg;
  cfg_init(&cfg, argv);
  mcp_transport *t = spawn_ok(&cfg, &c);
  pid_t pid = mcp__stdio_transport_pid(t);
  ck_assert_int_eq(send_str(t, init_req, 5000), MCP_OK);
  mcp__transport_free(t);
  assert_reaped(pid);
  coll_check_contract(&c);
  coll_destroy(&c);
}
END_TEST

START_TEST(test_free_right_after_spawn) {
  /* Free while the child is still starting up, many times. */
  int rounds = test_under_valgrind() ? 5 : 50;
  for (int i = 0; i < rounds; i++) {
    collector c;
    coll_init(&c);
    const char *argv[] = {"cat", NULL};
    mcp_stdio_config cfg;
    cfg_init(&cfg, argv);
    mcp_transport *t = spawn_ok(&cfg, &c);
    pid_t pid = mcp__stdio_transport_pid(t);
    mcp__transport_free(t);
    assert_reaped(pid);
    coll_check_contract(&c);
    coll_destroy(&c);
  }
}
END_TEST

/* ---- leading: a waiting caller reads stdout itself ---------------------------- */

typedef struct lead_arg {
  collector *c;
  size_t want;      /* done once this many messages arrived ... */
  atomic_bool flag; /* ... or once this is set */
  int64_t deadline;
} lead_arg;

static bool lead_done(void *arg, int64_t *deadline) {
  lead_arg *a = arg;
  *deadline = a->deadline;
  if (atomic_load(&a->flag)) return true;
  pthread_mutex_lock(&a->c->mu);
  bool done = a->want && a->c->n >= a->want;
  pthread_mutex_unlock(&a->c->mu);
  return done;
}

static size_t coll_count(collector *c) {
  pthread_mutex_lock(&c->mu);
  size_t n = c->n;
  pthread_mutex_unlock(&c->mu);
  return n;
}

static size_t coll_led(collector *c) {
  pthread_mutex_lock(&c->mu);
  size_t n = c->led;
  pthread_mutex_unlock(&c->mu);
  return n;
}

/* Sends pings and leads for their answers until one answer was read by
 * this thread.  Not every offer reads: the reader takes stdout back when
 * nobody led for a while (a slow run under valgrind can cause that), an
 * offer that is refused turns leading on again and the reader lets go after
 * its next read, and a leader whose answer the reader read just before it
 * let go returns at once. */
static int next_ping = 1000;
static void lead_ping(mcp_transport *t, collector *c) {
  size_t led0 = coll_led(c);
  for (;;) {
    char req[96];
    snprintf(req, sizeof(req), "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"ping\"}", next_ping++);
    size_t before = coll_count(c);
    ck_assert_int_eq(send_str(t, req, 5000), MCP_OK);
    lead_arg a = {.c = c, .want = before + 1, .deadline = MCP_NO_DEADLINE};
    (void)mcp__transport_lead(t, lead_done, &a);
    ck_assert(wait_count(c, before + 1, 5000));
    if (coll_led(c) > led0) return;
  }
}

/* Spawns the fault server, initializes it, and turns leading on: the first
 * offer to lead is refused (the reader reads that answer) and switches it
 * on; the reader lets stdout go once it has read the answer. */
static mcp_transport *spawn_leading(collector *c, mcp_stdio_config *cfg, const char *const *argv) {
  coll_init(c);
  c->have_lead = true;
  c->lead_thread = pthread_self();
  cfg_init(cfg, argv);
  mcp_transport *t = spawn_ok(cfg, c);
  ck_assert(mcp__transport_can_lead(t));
  lead_arg a = {.c = c, .want = 1, .deadline = MCP_NO_DEADLINE};
  ck_assert(!mcp__transport_lead(t, lead_done, &a));
  ck_assert_int_eq(send_str(t, init_req, 5000), MCP_OK);
  ck_assert(wait_count(c, 1, 5000));
  ck_assert_int_eq(coll_led(c), 0);
  lead_ping(t, c);
  ck_assert_int_eq(send_str(t, initialized_note, 5000), MCP_OK);
  return t;
}

START_TEST(test_lead_reads_on_caller) {
  collector c;
  mcp_stdio_config cfg;
  const char *argv[] = {fault_server(), NULL};
  mcp_transport *t = spawn_leading(&c, &cfg, argv);
  size_t led0 = coll_led(&c);
  ck_assert_uint_ge(led0, 1);
  /* Ten pings in a row, each answered on this thread (or, after a refused
   * offer, by the reader). */
  for (int i = 0; i < 10; i++) {
    char req[96];
    snprintf(req, sizeof(req), "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"ping\"}", 10 + i);
    size_t before = coll_count(&c);
    ck_assert_int_eq(send_str(t, req, 5000), MCP_OK);
    lead_arg a = {.c = &c, .want = before + 1, .deadline = MCP_NO_DEADLINE};
    if (mcp__transport_lead(t, lead_done, &a))
      ck_assert_uint_eq(coll_count(&c), before + 1); /* returned with it */
    ck_assert(wait_count(&c, before + 1, 5000));
  }
  /* Normally all ten are read here; a slow run (valgrind) can let the
   * reader take stdout back between two offers, and then read some. */
  ck_assert_uint_ge(coll_led(&c) - led0, 1);
  ck_assert(wait_has(&c, "\"id\":19,\"result\":{}", 10));
  lead_ping(t, &c);
  size_t led = coll_led(&c);
  /* need_reader(): the reader reads again (an async request nobody leads
   * for), so the answer arrives without a leader. */
  mcp__transport_need_reader(t);
  ck_assert_int_eq(send_str(t, "{\"jsonrpc\":\"2.0\",\"id\":30,\"method\":\"ping\"}", 5000),
                   MCP_OK);
  ck_assert(wait_has(&c, "\"id\":30,", 5000));
  ck_assert_uint_eq(coll_led(&c), led);
  mcp__transport_close(t);
  ck_assert_int_eq(c.closes, 1);
  ck_assert(!c.other_thread); /* everything else came from the reader */
  ck_assert(!c.msg_after_close);
  mcp__transport_free(t);
  coll_destroy(&c);
}
END_TEST

START_TEST(test_lead_message_between_leaders) {
  /* With leading on and no leader, a message that arrives is not stranded:
   * the reader takes stdout back (after STDIO_LEAD_LINGER_MS). */
  collector c;
  mcp_stdio_config cfg;
  const char *argv[] = {fault_server(), NULL};
  mcp_transport *t = spawn_leading(&c, &cfg, argv);
  size_t led = coll_led(&c);
  ck_assert_int_eq(send_str(t, "{\"jsonrpc\":\"2.0\",\"id\":40,\"method\":\"ping\"}", 5000),
                   MCP_OK);
  ck_assert(wait_has(&c, "\"id\":40,", 5000));
  ck_assert_uint_eq(coll_led(&c), led); /* the reader read it */
  mcp__transport_free(t);
  ck_assert_int_eq(c.closes, 1);
  coll_destroy(&c);
}
END_TEST

typedef struct waker_arg {
  mcp_transport *t;
  lead_arg *a;
} waker_arg;

static void *set_flag_and_wake(void *arg) {
  waker_arg *w = arg;
  struct timespec ts = {0, 50 * 1000 * 1000}; /* let the leader reach poll() */
  nanosleep(&ts, NULL);
  atomic_store(&w->a->flag, true);
  mcp__transport_lead_wake(w->t);
  return NULL;
}

START_TEST(test_lead_wake_ends_lead) {
  /* A request ended by another thread (a cancel): lead_wake() gets the
   * leader out of poll() although nothing arrives.  Without it this lead()
   * would never return (no deadline). */
  collector c;
  mcp_stdio_config cfg;
  const char *argv[] = {fault_server(), NULL};
  mcp_transport *t = spawn_leading(&c, &cfg, argv);
  lead_arg a = {.c = &c, .want = 0, .deadline = MCP_NO_DEADLINE};
  waker_arg w = {t, &a};
  pthread_t th;
  pthread_create(&th, NULL, set_flag_and_wake, &w);
  while (!mcp__transport_lead(t, lead_done, &a)) lead_ping(t, &c);
  ck_assert(atomic_load(&a.flag));
  pthread_join(th, NULL);
  /* A deadline ends a lead too. */
  atomic_store(&a.flag, false);
  a.want = 0;
  for (;;) {
    a.deadline = mcp__now_ms() + T(30);
    if (mcp__transport_lead(t, lead_done, &a)) break;
    lead_ping(t, &c);
  }
  ck_assert_int_ge(mcp__now_ms(), a.deadline);
  mcp__transport_free(t);
  ck_assert_int_eq(c.closes, 1);
  coll_destroy(&c);
}
END_TEST

static void *close_later(void *arg) {
  struct timespec ts = {0, 50 * 1000 * 1000}; /* let the leader reach poll() */
  nanosleep(&ts, NULL);
  mcp__transport_close(arg);
  return NULL;
}

START_TEST(test_lead_close_while_leading) {
  /* close() from another thread while a leader waits: the reader takes
   * stdout back (waking the leader) before it drains and reports. */
  collector c;
  mcp_stdio_config cfg;
  const char *argv[] = {fault_server(), NULL};
  mcp_transport *t = spawn_leading(&c, &cfg, argv);
  lead_arg a = {.c = &c, .want = 1000, .deadline = MCP_NO_DEADLINE};
  pthread_t th;
  pthread_create(&th, NULL, close_later, t);
  /* Normally this leads until close(); after a refused offer (a slow run)
   * the reader owns stdout and the close goes the usual way. */
  (void)mcp__transport_lead(t, lead_done, &a);
  pthread_join(th, NULL);
  ck_assert_int_eq(c.closes, 1);
  char *m = close_msg(&c);
  ck_assert_msg(strstr(m, "closed by client"), "%s", m);
  free(m);
  /* Closed: no more leading. */
  ck_assert(!mcp__transport_lead(t, lead_done, &a));
  mcp__transport_free(t);
  coll_destroy(&c);
}
END_TEST

START_TEST(test_lead_child_exits) {
  /* The child exits while a caller leads: the leader sees the end of
   * stdout and leaves it to the reader, which reports the exit status. */
  collector c;
  mcp_stdio_config cfg;
  const char *argv[] = {fault_server(), "--exit-after-init", NULL};
  mcp_transport *t = spawn_leading(&c, &cfg, argv); /* exits on initialized */
  lead_arg a = {.c = &c, .want = 1000, .deadline = MCP_NO_DEADLINE};
  /* Leads until the end of the stream (or the reader has taken stdout
   * back for good, when it saw the exit first). */
  while (!mcp__transport_lead(t, lead_done, &a) && !coll_wait(&c, pred_closed, NULL, 0))
    sched_yield();
  ck_assert(wait_closed(&c, 5000));
  char *m = close_msg(&c);
  ck_assert_msg(strstr(m, "status 0"), "%s", m);
  free(m);
  mcp__transport_free(t);
  coll_destroy(&c);
}
END_TEST

static Suite *stdio_suite(void) {
  Suite *s = suite_create("stdio");
  TCase *tc = tcase_create("spawn");
  tcase_set_timeout(tc, 30);
  tcase_add_test(tc, test_spawn_exchange);
  tcase_add_test(tc, test_spawn_missing);
  tcase_add_test(tc, test_spawn_not_executable);
  tcase_add_test(tc, test_spawn_bad_cwd);
  tcase_add_test(tc, test_spawn_invalid);
  tcase_add_test(tc, test_env_merge);
  tcase_add_test(tc, test_env_path_from_child_env);
  tcase_add_test(tc, test_cwd);
  tcase_add_test(tc, test_child_fds);
  tcase_add_test(tc, test_sigpipe_default_in_child);
  suite_add_tcase(s, tc);

  tc = tcase_create("read");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_stderr_flood);
  tcase_add_test(tc, test_stderr_tail_in_message);
  tcase_add_test(tc, test_crash_mid_request);
  tcase_add_test(tc, test_crash_mid_request_no_pidfd);
  tcase_add_test(tc, test_crash_on_call_flag);
  tcase_add_test(tc, test_killed_by_signal);
  tcase_add_test(tc, test_exit_after_output);
  tcase_add_test(tc, test_eof_child_closes_stdout);
  tcase_add_test(tc, test_oversize_line);
  tcase_add_test(tc, test_garbage_lines_passed_through);
  suite_add_tcase(s, tc);

  tc = tcase_create("write");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_stop_reading_large_message);
  tcase_add_test(tc, test_stop_reading_small_messages);
  tcase_add_test(tc, test_sigpipe_child_exits);
  tcase_add_test(tc, test_sigpipe_stdin_closed);
  tcase_add_test(tc, test_send_rejects_newline);
  tcase_add_test(tc, test_concurrent_sends);
  suite_add_tcase(s, tc);

  tc = tcase_create("close");
  tcase_set_timeout(tc, 30);
  tcase_add_test(tc, test_close_ignore_sigterm);
  tcase_add_test(tc, test_close_ignore_sigterm_no_pidfd);
  tcase_add_test(tc, test_close_sigterm_stage);
  tcase_add_test(tc, test_grandchild_killed);
  tcase_add_test(tc, test_grandchild_killed_no_pidfd);
  tcase_add_test(tc, test_grandchild_holds_stdout);
  tcase_add_test(tc, test_grandchild_holds_stdout_no_pidfd);
  tcase_add_test(tc, test_close_from_upcall);
  tcase_add_test(tc, test_no_zombie);
  tcase_add_test(tc, test_close_idempotent);
  tcase_add_test(tc, test_free_without_close);
  tcase_add_test(tc, test_free_right_after_spawn);
  suite_add_tcase(s, tc);

  tc = tcase_create("lead");
  tcase_set_timeout(tc, 30);
  tcase_add_test(tc, test_lead_reads_on_caller);
  tcase_add_test(tc, test_lead_message_between_leaders);
  tcase_add_test(tc, test_lead_wake_ends_lead);
  tcase_add_test(tc, test_lead_close_while_leading);
  tcase_add_test(tc, test_lead_child_exits);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(stdio_suite()); }
