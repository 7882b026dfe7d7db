/* SPDX-License-Identifier: MIT */
/*
 * check_interop_util.h: helpers for the interop suites (check_interop.c,
 * check_interop_http.c): finding node and the pinned npm packages under
 * tests/interop, running a Node server as a child process that prints the
 * port it listens on, collecting notifications, and a throwaway TLS
 * certificate made with the openssl command.
 *
 * The packages must be installed (`npm ci --prefix tests/interop`); when
 * node or a package is missing the test FAILS with that instruction, it is
 * never skipped.  They are looked up in $MCP_INTEROP_HOME when set (make
 * distcheck's unpacked tree has no node_modules; .ci/run points this at the
 * checkout), else in $MCP_INTEROP_DIR (make check sets it to tests/interop).
 *
 * No sleeps: a child's port line and notifications are waited for on
 * condition variables with deadlines.
 */
#ifndef CHECK_INTEROP_UTIL_H
#define CHECK_INTEROP_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_util.h"

extern char **environ;

#define INTEROP_INSTALL_HINT "run `npm ci --prefix tests/interop` in the source tree"

static inline bool interop_is_executable(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0;
}

/* The node executable execvp would run; fails the test when there is none. */
static inline const char *interop_node(void) {
  static __thread char node[4096];
  const char *path = getenv("PATH");
  node[0] = '\0';
  for (const char *p = path ? path : ""; *p && !node[0];) {
    const char *end = strchr(p, ':');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    char cand[4096];
    snprintf(cand, sizeof(cand), "%.*s/node", (int)n, n ? p : ".");
    if (interop_is_executable(cand)) snprintf(node, sizeof(node), "%s", cand);
    p = end ? end + 1 : p + n;
  }
  ck_assert_msg(node[0] != '\0',
                "node was not found in PATH. The interop tests need Node.js "
                "(>= 20) and the pinned packages: install nodejs, then " INTEROP_INSTALL_HINT);
  return node;
}

/* tests/interop with its node_modules. */
static inline const char *interop_home(void) {
  const char *home = getenv("MCP_INTEROP_HOME");
  if (!home || !*home) home = getenv("MCP_INTEROP_DIR");
  ck_assert_msg(home && *home, "MCP_INTEROP_DIR is not set: run the tests with `make check` "
                               "(it points at tests/interop in the source tree)");
  return home;
}

/* The absolute path of |rel| under interop_home(), which must exist. */
static inline const char *interop_path(const char *rel) {
  static __thread char paths[8][4096];
  static __thread int slot;
  char *p = paths[slot++ % 8];
  snprintf(p, sizeof(paths[0]), "%s/%s", interop_home(), rel);
  struct stat st;
  ck_assert_msg(stat(p, &st) == 0,
                "%s is missing: the interop packages are not installed; " INTEROP_INSTALL_HINT
                " (needs the npm registry)",
                p);
  return p;
}

/* A package's dist/index.js, e.g. interop_package("server-memory"). */
static inline const char *interop_package(const char *name) {
  char rel[512];
  snprintf(rel, sizeof(rel), "node_modules/@modelcontextprotocol/%s/dist/index.js", name);
  return interop_path(rel);
}

/* ---- a Node server child that prints MCPCONN_TEST_PORT=<port> ----------- */

typedef struct node_server {
  pid_t pid;
  int in_wr;  /* its stdin; closing it ends the server */
  int out_rd; /* its stdout, drained by |drain| into our stderr */
  pthread_t drain;
  bool drain_started;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int port; /* guarded by mu; 0 until the line arrived */
  bool eof; /* guarded by mu */
} node_server;

static inline void interop_cond_init(pthread_cond_t *cv) {
  pthread_condattr_t a;
  pthread_condattr_init(&a);
  pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
  pthread_cond_init(cv, &a);
  pthread_condattr_destroy(&a);
}

static inline struct timespec interop_deadline(long ms) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  ts.tv_sec += ms / 1000;
  ts.tv_nsec += (ms % 1000) * 1000000L;
  if (ts.tv_nsec >= 1000000000L) {
    ts.tv_sec++;
    ts.tv_nsec -= 1000000000L;
  }
  return ts;
}

/* Reads the child's stdout to EOF: finds the port line, copies the rest to
 * stderr (a closed pipe would kill a server that logs to stdout). */
static inline void *node_server_drain(void *arg) {
  node_server *s = arg;
  char buf[4096], line[1024];
  size_t ll = 0;
  for (;;) {
    ssize_t n = read(s->out_rd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    for (ssize_t i = 0; i < n; i++) {
      if (buf[i] != '\n') {
        if (ll < sizeof(line) - 1) line[ll++] = buf[i];
        continue;
      }
      line[ll] = '\0';
      ll = 0;
      int port = 0;
      if (sscanf(line, "MCPCONN_TEST_PORT=%d", &port) == 1 && port > 0) {
        pthread_mutex_lock(&s->mu);
        s->port = port;
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
      } else {
        fprintf(stderr, "[server %d] %s\n", (int)s->pid, line);
      }
    }
  }
  pthread_mutex_lock(&s->mu);
  s->eof = true;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
  return NULL;
}

/*
 * Starts `node <argv...>` (NULL-terminated) with |env_extra| ("NAME=VALUE",
 * NULL-terminated, or NULL) added, and waits up to |ms| for its port line.
 */
static inline void node_server_start(node_server *s, const char *const *env_extra, long ms,
                                     const char *const *args) {
  memset(s, 0, sizeof(*s));
  pthread_mutex_init(&s->mu, NULL);
  interop_cond_init(&s->cv);
  const char *argv[32] = {interop_node()};
  size_t n = 1;
  for (size_t i = 0; args[i] && n < 31; i++) argv[n++] = args[i];
  argv[n] = NULL;

  char *envp[512];
  size_t ne = 0;
  for (char **e = environ; *e && ne < 480; e++) envp[ne++] = *e;
  for (size_t i = 0; env_extra && env_extra[i] && ne < 510; i++) envp[ne++] = (char *)env_extra[i];
  envp[ne] = NULL;

  int in[2], out[2];
  ck_assert_int_eq(pipe2(in, O_CLOEXEC), 0);
  ck_assert_int_eq(pipe2(out, O_CLOEXEC), 0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  int rc = posix_spawn(&s->pid, argv[0], &fa, NULL, (char *const *)argv, envp);
  posix_spawn_file_actions_destroy(&fa);
  close(in[0]);
  close(out[1]);
  ck_assert_msg(rc == 0, "spawn %s %s: %s", argv[0], argv[1], strerror(rc));
  s->in_wr = in[1];
  s->out_rd = out[0];
  ck_assert_int_eq(pthread_create(&s->drain, NULL, node_server_drain, s), 0);
  s->drain_started = true;

  struct timespec ts = interop_deadline(ms);
  pthread_mutex_lock(&s->mu);
  while (!s->port && !s->eof && pthread_cond_timedwait(&s->cv, &s->mu, &ts) == 0) {
  }
  int port = s->port;
  bool eof = s->eof;
  pthread_mutex_unlock(&s->mu);
  ck_assert_msg(port > 0, "%s %s did not print its port within %ld ms%s", argv[0], argv[1], ms,
                eof ? " (it exited; see its output above)" : "");
}

/* Ends the server (stdin EOF, then SIGKILL after 5 s) and reaps it. */
static inline void node_server_stop(node_server *s) {
  if (s->pid <= 0) return;
  close(s->in_wr);
  int status = 0;
  bool reaped = WAIT_UNTIL(waitpid(s->pid, &status, WNOHANG) == s->pid, 5000);
  if (!reaped) {
    kill(s->pid, SIGKILL);
    waitpid(s->pid, &status, 0);
  }
  if (s->drain_started) pthread_join(s->drain, NULL);
  close(s->out_rd);
  pthread_cond_destroy(&s->cv);
  pthread_mutex_destroy(&s->mu);
  s->pid = 0;
}

/* ---- notifications -------------------------------------------------------- */

#define INTEROP_MAX_NOTES 512

typedef struct interop_notes {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  char *method[INTEROP_MAX_NOTES]; /* guarded by mu */
  char *params[INTEROP_MAX_NOTES]; /* guarded by mu */
  size_t n;                        /* guarded by mu */
} interop_notes;

static inline void interop_notes_init(interop_notes *c) {
  memset(c, 0, sizeof(*c));
  pthread_mutex_init(&c->mu, NULL);
  interop_cond_init(&c->cv);
}

static inline void interop_notes_destroy(interop_notes *c) {
  for (size_t i = 0; i < c->n; i++) {
    free(c->method[i]);
    free(c->params[i]);
  }
  pthread_cond_destroy(&c->cv);
  pthread_mutex_destroy(&c->mu);
}

static inline void interop_on_notification(void *user, const char *method, const char *params) {
  interop_notes *c = user;
  pthread_mutex_lock(&c->mu);
  if (c->n < INTEROP_MAX_NOTES) {
    c->method[c->n] = strdup(method);
    c->params[c->n] = strdup(params ? params : "{}");
    c->n++;
  }
  pthread_cond_broadcast(&c->cv);
  pthread_mutex_unlock(&c->mu);
}

/* Waits up to |ms| for a notification |method| whose params text contains
 * |needle| (NULL: any).  Returns true when one arrived. */
static inline bool interop_notes_wait(interop_notes *c, const char *method, const char *needle,
                                      long ms) {
  struct timespec ts = interop_deadline(ms);
  bool found = false;
  pthread_mutex_lock(&c->mu);
  for (;;) {
    for (size_t i = 0; i < c->n && !found; i++)
      if (strcmp(c->method[i], method) == 0 && (!needle || strstr(c->params[i], needle)))
        found = true;
    if (found || pthread_cond_timedwait(&c->cv, &c->mu, &ts) != 0) break;
  }
  if (!found) {
    fprintf(stderr, "no %s notification with \"%s\"; received %zu:\n", method, needle ? needle : "",
            c->n);
    for (size_t i = 0; i < c->n; i++) fprintf(stderr, "  %s %s\n", c->method[i], c->params[i]);
  }
  pthread_mutex_unlock(&c->mu);
  return found;
}

/* Waits up to |ms| until |count| notifications |method| containing |needle|
 * have arrived.  Returns true when they did. */
static inline bool interop_notes_wait_count(interop_notes *c, const char *method,
                                            const char *needle, size_t count, long ms) {
  struct timespec ts = interop_deadline(ms);
  size_t seen = 0;
  pthread_mutex_lock(&c->mu);
  for (;;) {
    seen = 0;
    for (size_t i = 0; i < c->n; i++)
      if (strcmp(c->method[i], method) == 0 && strstr(c->params[i], needle)) seen++;
    if (seen >= count || pthread_cond_timedwait(&c->cv, &c->mu, &ts) != 0) break;
  }
  pthread_mutex_unlock(&c->mu);
  if (seen < count)
    fprintf(stderr, "%zu of %zu %s notifications with \"%s\"\n", seen, count, method, needle);
  return seen >= count;
}

/* ---- JSON helpers ----------------------------------------------------------- */

static inline const char *interop_jstr(json_object *o, const char *key) {
  json_object *v = NULL;
  if (!o || !json_object_object_get_ex(o, key, &v)) return NULL;
  return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

/* The text of content[0] of a CallToolResult, or NULL. */
static inline const char *interop_first_text(json_object *result) {
  json_object *content = NULL;
  if (!json_object_object_get_ex(result, "content", &content) ||
      !json_object_is_type(content, json_type_array) || json_object_array_length(content) < 1)
    return NULL;
  return interop_jstr(json_object_array_get_idx(content, 0), "text");
}

/* True when the JSON array text |list| has an object whose |key| is |value|. */
static inline bool interop_list_has(const char *list, const char *key, const char *value) {
  json_object *arr = json_tokener_parse(list);
  bool found = false;
  for (size_t i = 0; arr && json_object_is_type(arr, json_type_array) &&
                     i < json_object_array_length(arr) && !found;
       i++) {
    const char *v = interop_jstr(json_object_array_get_idx(arr, i), key);
    if (v && strcmp(v, value) == 0) found = true;
  }
  json_object_put(arr);
  return found;
}

/* ---- scratch directories and certificates --------------------------------- */

/* A new directory under $MCP_TEST_TMPDIR (or /tmp) into |out|. */
static inline void interop_mkdtemp(char *out, size_t n, const char *tag) {
  const char *base = getenv("MCP_TEST_TMPDIR");
  if (!base || !*base) base = "/tmp";
  char tmp[1024];
  snprintf(tmp, sizeof(tmp), "%s/%s.XXXXXX", base, tag);
  ck_assert_msg(mkdtemp(tmp) != NULL, "mkdtemp %s: %s", tmp, strerror(errno));
  /* Absolute, since servers resolve paths against their own cwd. */
  char *abs = realpath(tmp, NULL);
  ck_assert_ptr_nonnull(abs);
  snprintf(out, n, "%s", abs);
  free(abs);
}

static inline void interop_rm_rf(const char *dir) {
  char cmd[2048];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

/* A CA (ca.pem) and a server certificate for localhost and 127.0.0.1
 * (server.pem, server.key) in |dir|, EC P-256, made by the openssl command. */
static inline void interop_make_certs(const char *dir) {
  char cmd[4096];
  const char *ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
  snprintf(cmd, sizeof(cmd),
           "cd '%s' && exec >pki.log 2>&1 && "
           "printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\n"
           "basicConstraints=CA:FALSE\\nextendedKeyUsage=serverAuth\\n' >srv.ext && "
           "openssl req -x509 %s -keyout ca.key -out ca.pem -days 2 "
           "-subj /CN=mcpconn-interop-ca -addext basicConstraints=critical,CA:TRUE "
           "-addext keyUsage=critical,keyCertSign,cRLSign && "
           "openssl req -new %s -keyout server.key -out server.csr -subj /CN=localhost && "
           "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
           "-out server.pem -days 2 -extfile srv.ext",
           dir, ec, ec);
  ck_assert_msg(system(cmd) == 0, "openssl could not make the test certificates (see %s/pki.log)",
                dir);
}

#endif /* CHECK_INTEROP_UTIL_H */
