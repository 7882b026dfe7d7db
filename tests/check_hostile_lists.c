/* SPDX-License-Identifier: MIT */
/*
 * check_hostile_lists.c: what a hostile server can do to list calls and to
 * the responses the client accepts, against the scripted fault server
 * (tests/mcp-fault-server.c: --repeat-cursor, --endless-pages, --huge-page,
 * --page-delay, --bad-response) and through the manager and the CLI:
 *
 *  - a repeated nextCursor ends the listing with MCP_EPROTO and a message
 *    that quotes a bounded, escaped excerpt of the cursor (it was a use
 *    after free that quoted all of it);
 *  - a listing is bounded as a whole: one deadline for every page, caps on
 *    pages, items and bytes (MCP_ETOOBIG), in the client and the manager;
 *  - a response whose id can be read but which is malformed (a NUL, nested
 *    too deep, both result and error, id 2.0, invalid UTF-8) fails its
 *    request at once with MCP_EPROTO and the reason, instead of leaving it
 *    to time out;
 *  - a tools/call result that is not an object is MCP_EPROTO.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/resource.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-c/json.h>

#include "check_util.h"
#include "mcp_int.h"
#include "mcp_jsonrpc.h"
#include "mcpconn.h"

/* ---- helpers ---------------------------------------------------------------- */

static const char *fault_path(void) { return test_env_path("MCP_FAULT_SERVER"); }

/* The fault server with extra flags (NULL-terminated list); |o| borrowed. */
static mcp_client *connect_fault(mcp_client_options *o_in, ...) {
  const char *argv[16] = {fault_path()};
  int n = 1;
  va_list ap;
  va_start(ap, o_in);
  const char *a;
  while ((a = va_arg(ap, const char *)) && n < 15) argv[n++] = a;
  va_end(ap);
  argv[n] = NULL;
  mcp_client_options *o = o_in ? o_in : mcp_client_options_new();
  ck_assert_int_eq(mcp_client_options_set_stdio(o, argv), MCP_OK);
  mcp_client *c = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_client_connect(o, &c, &err);
  ck_assert_msg(st == MCP_OK, "connect: %d %s", st, err.message ? err.message : "");
  mcp_error_clear(&err);
  if (!o_in) mcp_client_options_free(o);
  return c;
}

static mcp_call_options *call_timeout(int64_t ms) {
  mcp_call_options *co = mcp_call_options_new();
  ck_assert_ptr_nonnull(co);
  mcp_call_options_set_timeout_ms(co, ms);
  return co;
}

/* True when |s| holds no control byte (below 0x20 or 0x7f). */
static bool no_controls(const char *s) {
  for (const unsigned char *p = (const unsigned char *)s; *p; p++)
    if (*p < 0x20 || *p == 0x7f) return false;
  return true;
}

/* ---- 1. repeated cursor ---------------------------------------------------------- */

/* The server sends the same 1 MiB nextCursor (ESC "[2J" then 'c's) on every
 * page.  Before the fix: heap-use-after-free under ASan, and a 1 MiB
 * message quoting the whole cursor, escape sequence included. */
START_TEST(repeated_cursor_is_eproto_with_bounded_quote) {
  mcp_client *c = connect_fault(NULL, "--repeat-cursor", "1048576", NULL);
  char *out = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp_client_list_tools(c, NULL, &out, &err), MCP_EPROTO);
  ck_assert_ptr_null(out);
  ck_assert_ptr_nonnull(err.message);
  ck_assert_msg(strstr(err.message, "repeated"), "message: %.300s", err.message);
  ck_assert_msg(strstr(err.message, "tools/list"), "message: %.300s", err.message);
  ck_assert_msg(strlen(err.message) < 400, "message of %zu bytes", strlen(err.message));
  ck_assert_msg(no_controls(err.message), "control byte in: %.300s", err.message);
  /* The escape is shown, not sent to a terminal; the excerpt says it was cut. */
  ck_assert_msg(strstr(err.message, "\\x1b[2Jccc"), "message: %.300s", err.message);
  ck_assert_msg(strstr(err.message, "..."), "message: %.300s", err.message);
  mcp_error_clear(&err);
  /* The client is still usable. */
  ck_assert_int_eq(mcp_client_ping(c, NULL, &err), MCP_OK);
  mcp_client_free(c);
}
END_TEST

/* ---- 4. listing bounds ------------------------------------------------------------ */

/* Endless pages 50 ms apart with a 600 ms timeout: the timeout bounds the
 * whole listing.  Before: every page had the full 600 ms, for up to 100000
 * pages (83 minutes). */
START_TEST(list_deadline_covers_every_page) {
  mcp_client *c = connect_fault(NULL, "--endless-pages", "1", "--page-delay", "50", NULL);
  mcp_call_options *co = call_timeout(600);
  char *out = NULL;
  mcp_error err = MCP_ERROR_INIT;
  long long t0 = test_now_ms();
  mcp_status st = mcp_client_list_tools(c, co, &out, &err);
  long long ms = test_now_ms() - t0;
  ck_assert_msg(st == MCP_ETIMEDOUT, "status %d (%s) after %lld ms", st,
                err.message ? err.message : "", ms);
  ck_assert_msg(ms >= 550 && ms < 3000, "took %lld ms", ms);
  ck_assert_msg(strstr(err.message, "tools/list") && strstr(err.message, "pages"), "message: %s",
                err.message);
  ck_assert_ptr_null(out);
  mcp_error_clear(&err);
  mcp_call_options_free(co);
  mcp_client_free(c);
}
END_TEST

/* Endless one-tool pages: the default page cap (1000) ends it with
 * MCP_ETOOBIG.  Before: 100000 pages, then MCP_EPROTO. */
START_TEST(list_page_cap_default) {
  mcp_client *c = connect_fault(NULL, "--endless-pages", "1", NULL);
  char *out = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_client_list_tools(c, NULL, &out, &err);
  ck_assert_msg(st == MCP_ETOOBIG, "status %d (%s)", st, err.message ? err.message : "");
  ck_assert_msg(strstr(err.message, "1000 pages"), "message: %s", err.message);
  ck_assert_ptr_null(out);
  mcp_error_clear(&err);
  mcp_client_free(c);
}
END_TEST

/* Endless pages of 2000 tools: the default item cap (100000) ends it. */
START_TEST(list_item_cap_default) {
  mcp_client *c = connect_fault(NULL, "--endless-pages", "2000", NULL);
  char *out = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_client_list_tools(c, NULL, &out, &err);
  ck_assert_msg(st == MCP_ETOOBIG, "status %d (%s)", st, err.message ? err.message : "");
  ck_assert_msg(strstr(err.message, "100000 items"), "message: %s", err.message);
  mcp_error_clear(&err);
  mcp_client_free(c);
}
END_TEST

/* Endless pages of 4 MB each: the default byte cap (64 MiB) ends it, and
 * memory stays near that (it reached 2.1 GB after ten 4.7 MB pages). */
START_TEST(list_byte_cap_default) {
  struct rlimit rl = {(rlim_t)1536 << 20, (rlim_t)1536 << 20};
  /* ASan and valgrind reserve far more address space than they use. */
  if (!getenv("MCP_UNDER_VALGRIND") && !getenv("ASAN_OPTIONS")) setrlimit(RLIMIT_AS, &rl);
  mcp_client *c = connect_fault(NULL, "--huge-page", "4000000", NULL);
  char *out = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_client_list_tools(c, NULL, &out, &err);
  ck_assert_msg(st == MCP_ETOOBIG, "status %d (%s)", st, err.message ? err.message : "");
  ck_assert_msg(strstr(err.message, "67108864 bytes"), "message: %s", err.message);
  mcp_error_clear(&err);
  mcp_client_free(c);
}
END_TEST

/* The host sets its own limits; a listing within them is whole. */
START_TEST(list_limits_setter) {
  mcp_client_options *o = mcp_client_options_new();
  mcp_client_options_set_list_limits(o, 5, 0, 0);
  mcp_client *c = connect_fault(o, "--endless-pages", "3", NULL);
  char *out = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp_client_list_tools(c, NULL, &out, &err), MCP_ETOOBIG);
  ck_assert_msg(strstr(err.message, "5 pages"), "message: %s", err.message);
  mcp_error_clear(&err);
  mcp_client_free(c);

  mcp_client_options_set_list_limits(o, 0, 7, 0);
  c = connect_fault(o, "--endless-pages", "3", NULL);
  ck_assert_int_eq(mcp_client_list_tools(c, NULL, &out, &err), MCP_ETOOBIG);
  ck_assert_msg(strstr(err.message, "7 items"), "message: %s", err.message);
  mcp_error_clear(&err);
  mcp_client_free(c);

  mcp_client_options_set_list_limits(o, 0, 0, 10000);
  c = connect_fault(o, "--huge-page", "6000", NULL);
  ck_assert_int_eq(mcp_client_list_tools(c, NULL, &out, &err), MCP_ETOOBIG);
  ck_assert_msg(strstr(err.message, "10000 bytes"), "message: %s", err.message);
  mcp_error_clear(&err);
  mcp_client_free(c);

  /* Limits that fit: the ordinary paged listing (2 per page, 5 tools). */
  mcp_client_options_set_list_limits(o, 3, 5, 0);
  c = connect_fault(o, "--page-size", "2", NULL);
  ck_assert_int_eq(mcp_client_list_tools(c, NULL, &out, &err), MCP_OK);
  json_object *arr = json_tokener_parse(out);
  ck_assert_ptr_nonnull(arr);
  ck_assert_int_eq((int)json_object_array_length(arr), 5);
  json_object_put(arr);
  mcp_free(out);
  /* One item more than allowed fails. */
  mcp_client_free(c);
  mcp_client_options_set_list_limits(o, 3, 4, 0);
  c = connect_fault(o, "--page-size", "2", NULL);
  ck_assert_int_eq(mcp_client_list_tools(c, NULL, &out, &err), MCP_ETOOBIG);
  mcp_error_clear(&err);
  mcp_client_free(c);
  mcp_client_options_free(o);
}
END_TEST

/* The listing's text is what one json-c array of every item printed. */
START_TEST(list_text_unchanged) {
  mcp_client *c = connect_fault(NULL, "--page-size", "2", NULL);
  char *paged = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp_client_list_tools(c, NULL, &paged, &err), MCP_OK);
  mcp_client_free(c);
  c = connect_fault(NULL, NULL);
  char *whole = NULL;
  ck_assert_int_eq(mcp_client_list_tools(c, NULL, &whole, &err), MCP_OK);
  ck_assert_str_eq(paged, whole);
  json_object *arr = json_tokener_parse(whole);
  ck_assert_str_eq(
      json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
      whole);
  json_object_put(arr);
  char *res = NULL;
  ck_assert_int_eq(mcp_client_list_resources(c, NULL, &res, &err), MCP_OK);
  ck_assert_str_eq(res, "[{\"uri\":\"fault://item/0\",\"name\":\"item/0\"}]");
  mcp_free(res);
  mcp_free(paged);
  mcp_free(whole);
  mcp_client_free(c);
}
END_TEST

/* ---- the manager's connector --------------------------------------------------- */

static char tmpdir[256];

static void make_tmpdir(void) {
  snprintf(tmpdir, sizeof(tmpdir), "/tmp/mcpconn-hostile-XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void remove_tmpdir(void) {
  char cmd[300];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
  ck_assert_int_eq(system(cmd), 0);
}

/* A config file with one stdio server "h" running the fault server with
 * |flags| (a JSON array body of strings, e.g. "\"--endless-pages\",\"1\""). */
static const char *write_config(const char *flags, int timeout_ms) {
  static char path[300];
  snprintf(path, sizeof(path), "%s/mcp.json", tmpdir);
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fprintf(f, "{\"mcpServers\":{\"h\":{\"command\":\"%s\",\"args\":[%s],\"timeout\":%d}}}\n",
          fault_path(), flags, timeout_ms);
  fclose(f);
  return path;
}

/* Manager events, counted under a mutex and waited on with a condvar. */
static pthread_mutex_t ev_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ev_cond = PTHREAD_COND_INITIALIZER;
static int ev_states;

static void on_event(void *user, mcp_manager_event e, const char *server, const char *detail) {
  (void)user;
  (void)server;
  (void)detail;
  if (e != MCP_MANAGER_EVENT_SERVER_STATE) return;
  pthread_mutex_lock(&ev_lock);
  ev_states++;
  pthread_cond_broadcast(&ev_cond);
  pthread_mutex_unlock(&ev_lock);
}

/* The "lastError" of server "h" once it failed or backs off (after a state
 * event), or NULL when |ms| pass first. */
static char *wait_failed(mcp_manager *m, int ms) {
  long long end = test_now_ms() + ms;
  for (;;) {
    pthread_mutex_lock(&ev_lock);
    int seen = ev_states;
    pthread_mutex_unlock(&ev_lock);
    char *json = NULL;
    ck_assert_int_eq(mcp_manager_servers(m, &json, NULL), MCP_OK);
    json_object *arr = json_tokener_parse(json), *s = json_object_array_get_idx(arr, 0), *v = NULL;
    mcp_free(json);
    char *got = NULL;
    const char *state = json_object_get_string(json_object_object_get(s, "state"));
    if (state && (!strcmp(state, "failed") || !strcmp(state, "backoff")) &&
        json_object_object_get_ex(s, "lastError", &v) && v)
      got = strdup(json_object_get_string(v));
    json_object_put(arr);
    if (got) return got;
    pthread_mutex_lock(&ev_lock);
    while (ev_states == seen && test_now_ms() < end) {
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts);
      ts.tv_nsec += 50 * 1000000;
      if (ts.tv_nsec >= 1000000000) ts.tv_sec++, ts.tv_nsec -= 1000000000;
      pthread_cond_timedwait(&ev_cond, &ev_lock, &ts);
    }
    pthread_mutex_unlock(&ev_lock);
    if (test_now_ms() >= end) return NULL;
  }
}

static mcp_manager_options *manager_options(const char *config) {
  mcp_manager_options *o = mcp_manager_options_new();
  ck_assert_int_eq(mcp_manager_options_add_config_file(o, config), MCP_OK);
  mcp_manager_options_set_discovery(o, false, false);
  char cache[300];
  snprintf(cache, sizeof(cache), "%s/cache", tmpdir);
  mcp_manager_options_set_cache_dir(o, cache);
  mcp_manager_options_set_event_handler(o, on_event, NULL);
  return o;
}

static mcp_manager *start_manager(mcp_manager_options *o) {
  mcp_manager *m = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_msg(mcp_manager_start(o, &m, &err) == MCP_OK, "start: %s",
                err.message ? err.message : "");
  mcp_manager_options_free(o);
  return m;
}

/* The connector's tools/list against endless slow pages ends within the
 * server's timeout, and the server reports why. */
START_TEST(manager_list_deadline) {
  make_tmpdir();
  const char *cfg = write_config("\"--endless-pages\",\"1\",\"--page-delay\",\"50\"", 700);
  long long t0 = test_now_ms();
  mcp_manager *m = start_manager(manager_options(cfg));
  char *why = wait_failed(m, 5000);
  long long ms = test_now_ms() - t0;
  ck_assert_msg(why != NULL, "server still not failed after %lld ms", ms);
  ck_assert_msg(strstr(why, "tools/list"), "last_error: %s", why);
  ck_assert_msg(ms < 4000, "took %lld ms", ms);
  free(why);
  mcp_manager_free(m);
  remove_tmpdir();
}
END_TEST

/* The connector's tools/list against endless pages hits the page cap. */
START_TEST(manager_list_cap) {
  make_tmpdir();
  const char *cfg = write_config("\"--endless-pages\",\"1\"", 20000);
  mcp_manager *m = start_manager(manager_options(cfg));
  char *why = wait_failed(m, 20000);
  ck_assert_msg(why != NULL, "server did not fail");
  ck_assert_msg(strstr(why, "1000 pages"), "last_error: %s", why);
  free(why);
  mcp_manager_free(m);
  remove_tmpdir();
}
END_TEST

/* The manager passes its list limits to the servers of its config. */
START_TEST(manager_list_limits_setter) {
  make_tmpdir();
  const char *cfg = write_config("\"--endless-pages\",\"2\"", 20000);
  mcp_manager_options *o = manager_options(cfg);
  mcp_manager_options_set_list_limits(o, 0, 9, 0);
  mcp_manager *m = start_manager(o);
  char *why = wait_failed(m, 20000);
  ck_assert_msg(why != NULL, "server did not fail");
  ck_assert_msg(strstr(why, "9 items"), "last_error: %s", why);
  free(why);
  mcp_manager_free(m);
  remove_tmpdir();
}
END_TEST

/* mcp_manager_free() during a re-list that the server never answers ends
 * that re-list at once.  Before: free waited out the server's timeout. */
START_TEST(manager_free_ends_relist) {
  make_tmpdir();
  char log[300], flags[600];
  snprintf(log, sizeof(log), "%s/faults", tmpdir);
  snprintf(flags, sizeof(flags), "\"--hang-list-after\",\"1\",\"--fault-log\",\"%s\"", log);
  const char *cfg = write_config(flags, 20000);
  mcp_manager *m = start_manager(manager_options(cfg));
  /* grow sends tools/list_changed: the manager re-lists, and it hangs. */
  char *res = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_msg(
      mcp_manager_request(m, "h", "tools/call", "{\"name\":\"grow\"}", NULL, &res, &err) == MCP_OK,
      "grow: %s", err.message ? err.message : "");
  mcp_free(res);
  ck_assert_msg(WAIT_UNTIL(access(log, F_OK) == 0, 10000), "no re-list reached the server");
  long long t0 = test_now_ms();
  mcp_manager_free(m);
  long long ms = test_now_ms() - t0;
  ck_assert_msg(ms < 3000, "mcp_manager_free took %lld ms", ms);
  remove_tmpdir();
}
END_TEST

/* ---- the CLI ---------------------------------------------------------------------- */

/* Runs the CLI with |args| (NULL-terminated), in |tmpdir| with HOME there;
 * returns its exit status and stderr (caller frees). */
static int run_cli(char **err_out, const char *const *args) {
  const char *bin = test_env_path("MCPCONN_BIN");
  int errp[2];
  ck_assert_int_eq(pipe(errp), 0);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    int null = open("/dev/null", O_RDWR);
    dup2(null, 0);
    dup2(null, 1);
    dup2(errp[1], 2);
    for (int fd = 3; fd < 256; fd++) close(fd);
    if (chdir(tmpdir) != 0) _exit(126);
    setenv("HOME", tmpdir, 1);
    setenv("XDG_CONFIG_HOME", tmpdir, 1);
    setenv("XDG_CACHE_HOME", tmpdir, 1);
    char *argv[32];
    int n = 0;
    argv[n++] = (char *)bin;
    for (int i = 0; args[i] && n < 31; i++) argv[n++] = (char *)args[i];
    argv[n] = NULL;
    execv(bin, argv);
    _exit(127);
  }
  close(errp[1]);
  size_t cap = 65536, len = 0;
  char *buf = malloc(cap);
  for (;;) {
    if (cap - len < 4096) buf = realloc(buf, cap *= 2);
    ssize_t k = read(errp[0], buf + len, cap - len - 1);
    if (k > 0) len += (size_t)k;
    else if (k == 0 || errno != EINTR) break;
  }
  buf[len] = '\0';
  close(errp[0]);
  int st = 0;
  ck_assert_int_eq(waitpid(pid, &st, 0), pid);
  *err_out = buf;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* `mcpconn tools` against a server repeating a 1 MiB cursor: no crash (the
 * ASan build aborted on the use after free), a short reason on stderr. */
START_TEST(cli_repeated_cursor) {
  make_tmpdir();
  char stdio[600];
  snprintf(stdio, sizeof(stdio), "%s --repeat-cursor 1048576", fault_path());
  char *err = NULL;
  const char *args[] = {
      "--no-project-config", "--stdio", stdio, "--name", "h", "tools", "--wait", NULL};
  int st = run_cli(&err, args);
  ck_assert_msg(st < 128, "killed by signal %d; stderr: %.2000s", st - 128, err);
  ck_assert_msg(strstr(err, "repeated"), "stderr: %.2000s", err);
  ck_assert_msg(strlen(err) < 4096, "stderr of %zu bytes", strlen(err));
  ck_assert_msg(!strchr(err, '\x1b'), "ESC on stderr: %.2000s", err);
  free(err);
  remove_tmpdir();
}
END_TEST

/* ---- 12, 13, 9. malformed responses ----------------------------------------------- */

/* tools/call against --bad-response |kind| ends at once with MCP_EPROTO and
 * a message containing |why|.  Before: the response was dropped and the
 * call timed out (or, for not-object and bad-utf8, succeeded). */
static void bad_call(const char *kind, const char *why) {
  mcp_client *c = connect_fault(NULL, "--bad-response", kind, NULL);
  mcp_call_options *co = call_timeout(4000);
  char *res = NULL;
  mcp_error err = MCP_ERROR_INIT;
  long long t0 = test_now_ms();
  mcp_status st = mcp_client_call_tool(c, "echo", "{\"text\":\"x\"}", co, &res, &err);
  long long ms = test_now_ms() - t0;
  ck_assert_msg(st == MCP_EPROTO, "%s: status %d (%s) after %lld ms", kind, st,
                err.message ? err.message : "", ms);
  ck_assert_msg(ms < 3000, "%s: took %lld ms", kind, ms);
  ck_assert_ptr_null(res);
  ck_assert_msg(strstr(err.message, why), "%s: message: %s", kind, err.message);
  ck_assert_msg(no_controls(err.message), "%s: control byte in %s", kind, err.message);
  mcp_error_clear(&err);
  /* The generic request path fails the same way. */
  st = mcp_client_request(c, "tools/call", "{\"name\":\"echo\",\"arguments\":{}}", co, &res, &err);
  if (strcmp(kind, "not-object") != 0) { /* any JSON value is a valid generic result */
    ck_assert_msg(st == MCP_EPROTO, "%s (request): status %d (%s)", kind, st,
                  err.message ? err.message : "");
    ck_assert_ptr_null(res);
  } else {
    ck_assert_int_eq(st, MCP_OK);
    ck_assert_str_eq(res, "42");
    mcp_free(res);
  }
  mcp_error_clear(&err);
  /* Still usable afterwards. */
  ck_assert_int_eq(mcp_client_ping(c, co, &err), MCP_OK);
  /* Broken JSON-RPC is counted; a result that is no CallToolResult is a
   * valid JSON-RPC reply. */
  mcp_client_stats s;
  mcp_client_get_stats(c, &s);
  if (strcmp(kind, "not-object") != 0) ck_assert_uint_ge(s.protocol_errors, 1);
  mcp_call_options_free(co);
  mcp_client_free(c);
}

START_TEST(bad_response_nul) { bad_call("nul", "invalid response"); }
END_TEST
START_TEST(bad_response_deep) { bad_call("deep", "invalid response"); }
END_TEST
START_TEST(bad_response_both) { bad_call("both", "both result and error"); }
END_TEST
START_TEST(bad_response_float_id) { bad_call("float-id", "id"); }
END_TEST
START_TEST(bad_response_not_object) { bad_call("not-object", "not a JSON object"); }
END_TEST
START_TEST(bad_response_bad_utf8) { bad_call("bad-utf8", "UTF-8"); }
END_TEST
START_TEST(bad_response_bad_utf8_error) { bad_call("bad-utf8-error", "UTF-8"); }
END_TEST

/* The async tools/call reports a non-object result as MCP_EPROTO too. */
typedef struct done {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  bool done;
  mcp_status st;
  char msg[256];
} done;

static void on_done(void *user, mcp_status st, const char *result, const mcp_error *err) {
  (void)result;
  done *d = user;
  pthread_mutex_lock(&d->lock);
  d->st = st;
  snprintf(d->msg, sizeof(d->msg), "%s", err && err->message ? err->message : "");
  d->done = true;
  pthread_cond_broadcast(&d->cond);
  pthread_mutex_unlock(&d->lock);
}

static void async_bad_call(const char *kind, const char *why) {
  mcp_client *c = connect_fault(NULL, "--bad-response", kind, NULL);
  mcp_call_options *co = call_timeout(4000);
  done d = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};
  ck_assert_int_eq(mcp_client_call_tool_async(c, "echo", "{}", co, on_done, &d, NULL), MCP_OK);
  pthread_mutex_lock(&d.lock);
  while (!d.done) pthread_cond_wait(&d.cond, &d.lock);
  pthread_mutex_unlock(&d.lock);
  ck_assert_msg(d.st == MCP_EPROTO, "%s: async status %d (%s)", kind, d.st, d.msg);
  ck_assert_msg(strstr(d.msg, why), "%s: message: %s", kind, d.msg);
  mcp_call_options_free(co);
  mcp_client_free(c);
}

START_TEST(async_bad_responses) {
  async_bad_call("not-object", "not a JSON object");
  async_bad_call("both", "both result and error");
  async_bad_call("bad-utf8", "UTF-8");
}
END_TEST

/* ---- units: quoting, reading a refused reply's id, UTF-8 ------------------------ */

START_TEST(quote_escapes_and_bounds) {
  char q[32];
  ck_assert_str_eq(mcp__quote(q, sizeof(q), "a\x1b[2J\n\x7f", 7), "a\\x1b[2J\\n\\x7f");
  ck_assert_str_eq(mcp__quote(q, sizeof(q), "caf\xc3\xa9 \xff", 7), "caf\xc3\xa9 \\xff");
  /* C1 CSI and a right-to-left override are shown, not obeyed. */
  ck_assert_str_eq(mcp__quote(q, sizeof(q), "\xc2\x9b\xe2\x80\xae", 5), "\\u009b\\u202e");
  ck_assert_str_eq(mcp__quote(q, sizeof(q), NULL, 5), "");
  /* Cut at a character boundary, with "...", within the buffer. */
  char big[100];
  memset(big, 'x', sizeof(big));
  big[26] = '\xe2', big[27] = '\x82', big[28] = '\xac'; /* a euro sign across the cut */
  mcp__quote(q, sizeof(q), big, sizeof(big));
  ck_assert_uint_lt(strlen(q), sizeof(q));
  ck_assert_str_eq(q + strlen(q) - 3, "...");
  ck_assert_int_eq((int)strlen(q), 26 + 3);
  char tiny[8];
  mcp__quote(tiny, sizeof(tiny), "\x01\x02", 2);
  ck_assert_str_eq(tiny, "\\x01...");
}
END_TEST

START_TEST(peek_response_id_cases) {
  static const struct {
    const char *text;
    int ok;
    long long id;
  } cases[] = {
      {"{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"a\":\"}\\\"]\"}}", 1, 7},
      {" { \"result\" : [[[[1]]]] , \"id\" : 2.00 , \"jsonrpc\" : \"2.0\" } ", 1, 2},
      {"{\"jsonrpc\":\"2.0\",\"id\":-3,\"error\":{\"code\":1", 1, -3}, /* cut short */
      {"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"x\",\"result\":1}", 0, 0},
      {"{\"jsonrpc\":\"2.0\",\"id\":\"7\",\"result\":1}", 0, 0},      /* string id */
      {"{\"id\":7,\"result\":1}", 0, 0},                              /* not JSON-RPC 2.0 */
      {"{\"jsonrpc\":\"2.0\",\"id\":7,\"id\":8,\"result\":1}", 0, 0}, /* two ids */
      {"{\"jsonrpc\":\"2.0\",\"id\":7}", 0, 0},                       /* no result or error */
      {"{\"jsonrpc\":\"2.0\",\"id\":2.5,\"result\":1}", 0, 0},
      {"{\"jsonrpc\":\"2.0\",\"id\":99999999999999999999,\"result\":1}", 0, 0},
      {"[{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":1}]", 0, 0},
      {"this is not json", 0, 0},
      {"", 0, 0},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    int64_t id = 0;
    bool ok = mcp__jsonrpc_peek_response_id(cases[i].text, strlen(cases[i].text), &id);
    ck_assert_msg(ok == (bool)cases[i].ok, "case %zu: %s", i, cases[i].text);
    if (ok) ck_assert_int_eq(id, cases[i].id);
  }
  /* A NUL inside a string and nesting far past the parser's limit. */
  char nul[] = "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":\"a?b\"}";
  *strchr(nul, '?') = '\0';
  int64_t id = 0;
  ck_assert(mcp__jsonrpc_peek_response_id(nul, sizeof(nul) - 1, &id));
  ck_assert_int_eq(id, 4);
  size_t n = 0;
  char deep[4200];
  n += (size_t)sprintf(deep, "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":");
  for (int i = 0; i < 2000; i++) deep[n++] = '[';
  for (int i = 0; i < 2000; i++) deep[n++] = ']';
  deep[n++] = '}';
  ck_assert(mcp__jsonrpc_peek_response_id(deep, n, &id));
  ck_assert_int_eq(id, 5);
}
END_TEST

START_TEST(parse_refuses_invalid_utf8) {
  const char *why = NULL;
  const char bad[] = "{\"a\":\"\xed\xa0\x80\"}"; /* an encoded surrogate */
  ck_assert_ptr_null(mcp__jsonrpc_parse(bad, sizeof(bad) - 1, &why));
  ck_assert_str_eq(why, "message is not valid UTF-8");
  const char good[] = "{\"a\":\"caf\xc3\xa9 \\ud800\"}"; /* an unpaired escape: U+FFFD */
  json_object *o = mcp__jsonrpc_parse(good, sizeof(good) - 1, &why);
  ck_assert_ptr_nonnull(o);
  json_object_put(o);
}
END_TEST

static Suite *hostile_suite(void) {
  Suite *s = suite_create("hostile_lists");
  TCase *lists = tcase_create("lists");
  tcase_set_timeout(lists, 60);
  tcase_add_test(lists, repeated_cursor_is_eproto_with_bounded_quote);
  tcase_add_test(lists, list_deadline_covers_every_page);
  tcase_add_test(lists, list_page_cap_default);
  tcase_add_test(lists, list_item_cap_default);
  tcase_add_test(lists, list_byte_cap_default);
  tcase_add_test(lists, list_limits_setter);
  tcase_add_test(lists, list_text_unchanged);
  suite_add_tcase(s, lists);
  TCase *mgr = tcase_create("manager");
  tcase_set_timeout(mgr, 60);
  tcase_add_test(mgr, manager_list_deadline);
  tcase_add_test(mgr, manager_list_cap);
  tcase_add_test(mgr, manager_list_limits_setter);
  tcase_add_test(mgr, manager_free_ends_relist);
  tcase_add_test(mgr, cli_repeated_cursor);
  suite_add_tcase(s, mgr);
  TCase *resp = tcase_create("responses");
  tcase_set_timeout(resp, 60);
  tcase_add_test(resp, bad_response_nul);
  tcase_add_test(resp, bad_response_deep);
  tcase_add_test(resp, bad_response_both);
  tcase_add_test(resp, bad_response_float_id);
  tcase_add_test(resp, bad_response_not_object);
  tcase_add_test(resp, bad_response_bad_utf8);
  tcase_add_test(resp, bad_response_bad_utf8_error);
  tcase_add_test(resp, async_bad_responses);
  suite_add_tcase(s, resp);
  TCase *units = tcase_create("units");
  tcase_add_test(units, quote_escapes_and_bounds);
  tcase_add_test(units, peek_response_id_cases);
  tcase_add_test(units, parse_refuses_invalid_utf8);
  suite_add_tcase(s, units);
  return s;
}

int main(void) { return run_suite(hostile_suite()); }
