/* SPDX-License-Identifier: MIT */
/*
 * mcp_secret.c: `!command` secrets.  Makes the definition to connect with
 * by replacing each env or header value that starts with "!" by the
 * trimmed output of `/bin/sh -c <command>` (started through mcp_spawn.c,
 * in its own process group, killed and reaped on timeout), and keeps the
 * outputs in a process-wide cache.
 *
 * Owns that cache and nothing else global: every entry is guarded by
 * secret_lock, and threads waiting for an identical command that is
 * already running sleep on secret_cond.  Called from any thread, blocking
 * while commands run.  Knows nothing of files, transports, the client or
 * the manager.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mcp_config.h"
#include "mcp_config_int.h"
#include "mcp_secret.h"
#include "mcp_spawn.h"

extern char **environ;

/* Most bytes of output kept from one secret command. */
#define SECRET_MAX_OUTPUT (64 * 1024)

/*
 * The process-wide cache of secret command outputs.  Entries live until
 * mcp__config_secrets_clear().  Every field is guarded by secret_lock;
 * waiters for a running command sleep on secret_cond.
 */
typedef struct secret_entry {
  struct secret_entry *next;
  char *cmd;
  char *value;   /* the trimmed output, once a run succeeded */
  bool running;  /* a thread is running the command now */
  uint64_t runs; /* completed runs */
  bool last_ok;  /* outcome of the latest completed run */
} secret_entry;

static pthread_mutex_t secret_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t secret_cond = PTHREAD_COND_INITIALIZER;
static secret_entry *secret_head;

void mcp__config_secrets_clear(void) {
  pthread_mutex_lock(&secret_lock);
  secret_entry *e = secret_head;
  secret_head = NULL;
  pthread_mutex_unlock(&secret_lock);
  while (e) {
    secret_entry *next = e->next;
    mcp__free(e->cmd);
    mcp__free(e->value);
    mcp__free(e);
    e = next;
  }
}

/* Waits for |pid| until |deadline| (mcp__now_ms); true when reaped. */
static bool reap_until(pid_t pid, int64_t deadline, int *ws) {
  for (;;) {
    pid_t r = waitpid(pid, ws, WNOHANG);
    if (r == pid) return true;
    if (r < 0 && errno == ECHILD) {
      *ws = 0; /* reaped elsewhere (SIGCHLD ignored by the host) */
      return true;
    }
    if (r < 0 && errno != EINTR) return false;
    int64_t left = deadline - mcp__now_ms();
    if (left <= 0) return false;
    poll(NULL, 0, left < 5 ? (int)left : 5);
  }
}

static void reap_blocking(pid_t pid) {
  int ws;
  while (waitpid(pid, &ws, 0) < 0 && errno == EINTR) {
  }
}

/*
 * Runs `/bin/sh -c cmd`.  Returns 0 with *out (trimmed, non-empty), 1 with
 * a reason in |why|, or -1 when out of memory.
 */
static int run_secret(const char *cmd, int64_t timeout_ms, char **out, char *why, size_t whylen) {
  char *argv[] = {(char *)"/bin/sh", (char *)"-c", (char *)cmd, NULL};
  int p[2] = {-1, -1}, devnull = -1, rc = 1, ws = 0;
  char eb[128];
  mcp_buf b;
  mcp__buf_init(&b);
  *out = NULL;

  devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (devnull < 0 || mcp__spawn_fd_high(&devnull) < 0 || pipe2(p, O_CLOEXEC) < 0 ||
      mcp__spawn_fd_high(&p[0]) < 0 || mcp__spawn_fd_high(&p[1]) < 0) {
    snprintf(why, whylen, "cannot set up: %s", mcp__errno_text(errno, eb, sizeof(eb)));
    goto out;
  }
  /* Its own process group, so a timeout kills what it started too; the
   * host's environment (secrets commands are the user's own, like a
   * shell's); /dev/null as stdin and stderr. */
  mcp_spawn_opts so = {.argv = (const char *const *)argv,
                       .envp = (const char *const *)environ,
                       .fd = {devnull, p[1], devnull}};
  pid_t pid = -1;
  mcp_spawn_stage stage;
  int se = mcp__spawn(&so, &pid, &stage);
  if (se) {
    if (se == ENOMEM) {
      rc = -1;
      goto out;
    }
    snprintf(why, whylen, "cannot run /bin/sh: %s", mcp__errno_text(se, eb, sizeof(eb)));
    goto out;
  }
  close(p[1]);
  p[1] = -1;

  int64_t deadline = mcp__now_ms() + timeout_ms;
  bool timed_out = false, too_big = false;
  for (;;) {
    int64_t left = deadline - mcp__now_ms();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    struct pollfd pfd = {p[0], POLLIN, 0};
    int n = poll(&pfd, 1, left > 1000 ? 1000 : (int)left);
    if (n < 0 && errno != EINTR) break;
    if (n <= 0) continue;
    if (mcp__buf_reserve(&b, 4096)) {
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      reap_blocking(pid);
      rc = -1;
      goto out;
    }
    ssize_t got = read(p[0], b.data + b.len, 4096);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (got <= 0) break;
    b.len += (size_t)got;
    b.data[b.len] = '\0';
    if (b.len > SECRET_MAX_OUTPUT) {
      too_big = true;
      break;
    }
  }
  if (!timed_out && !too_big && reap_until(pid, deadline, &ws)) {
    if (WIFSIGNALED(ws)) {
      snprintf(why, whylen, "killed by signal %d", WTERMSIG(ws));
      goto out;
    }
    if (WIFEXITED(ws) && WEXITSTATUS(ws) != 0) {
      snprintf(why, whylen, "exited with status %d", WEXITSTATUS(ws));
      goto out;
    }
  } else {
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    reap_blocking(pid);
    if (too_big) snprintf(why, whylen, "printed more than %d bytes", SECRET_MAX_OUTPUT);
    else snprintf(why, whylen, "timed out after %lld ms", (long long)timeout_ms);
    goto out;
  }
  if (b.len && memchr(b.data, '\0', b.len)) {
    snprintf(why, whylen, "printed a NUL byte");
    goto out;
  }
  size_t s = 0, e = b.len;
  while (s < e && isspace((unsigned char)b.data[s])) s++;
  while (e > s && isspace((unsigned char)b.data[e - 1])) e--;
  if (s == e) {
    snprintf(why, whylen, "printed nothing");
    goto out;
  }
  *out = mcp__strndup(b.data + s, e - s);
  rc = *out ? 0 : -1;
out:
  if (p[0] >= 0) close(p[0]);
  if (p[1] >= 0) close(p[1]);
  if (devnull >= 0) close(devnull);
  /* The buffer held the secret: wipe it before freeing. */
  if (b.data) memset(b.data, 0, b.cap);
  mcp__buf_free(&b);
  return rc;
}

/*
 * Resolves one `!command` through the cache.  Returns 0 with *out, 1 with a
 * reason in |why|, or -1 when out of memory.
 */
static int resolve_one(const char *cmd, int64_t timeout_ms, char **out, char *why, size_t whylen) {
  *out = NULL;
  pthread_mutex_lock(&secret_lock);
  secret_entry *e = secret_head;
  while (e && strcmp(e->cmd, cmd) != 0) e = e->next;
  if (!e) {
    e = mcp__calloc(1, sizeof(*e));
    if (e) e->cmd = mcp__strdup(cmd);
    if (!e || !e->cmd) {
      mcp__free(e);
      pthread_mutex_unlock(&secret_lock);
      return -1;
    }
    e->next = secret_head;
    secret_head = e;
  }
  while (!e->value && e->running) {
    /* Share the outcome of the identical command already running. */
    uint64_t runs = e->runs;
    while (e->running && e->runs == runs) pthread_cond_wait(&secret_cond, &secret_lock);
    if (!e->value && !e->last_ok) {
      pthread_mutex_unlock(&secret_lock);
      snprintf(why, whylen, "failed in a concurrent run");
      return 1;
    }
  }
  if (e->value) {
    *out = mcp__strdup(e->value);
    pthread_mutex_unlock(&secret_lock);
    return *out ? 0 : -1;
  }
  e->running = true;
  pthread_mutex_unlock(&secret_lock);

  char *val = NULL;
  int rc = run_secret(cmd, timeout_ms, &val, why, whylen);

  pthread_mutex_lock(&secret_lock);
  e->running = false;
  e->runs++;
  e->last_ok = rc == 0;
  if (rc == 0) {
    e->value = val;
    *out = mcp__strdup(val);
    if (!*out) rc = -1;
  }
  pthread_cond_broadcast(&secret_cond);
  pthread_mutex_unlock(&secret_lock);
  return rc;
}

/*
 * Resolves the `!` values of one map in place, dropping failed entries.
 * Returns CHECK_OK or CHECK_OOM.
 */
static int resolve_map(const mcp_server_def *def, const char *field, const char *label, mcp_kv *kv,
                       size_t *n, bool headers, int64_t timeout_ms, mcp_diag_list *dl) {
  size_t w = 0;
  for (size_t i = 0; i < *n; i++) {
    char why[200];
    char *val = NULL;
    bool drop = false;
    if (kv[i].value[0] == '!') {
      int rc = resolve_one(kv[i].value + 1, timeout_ms, &val, why, sizeof(why));
      if (rc < 0) return CHECK_OOM;
      if (rc == 0 && headers && strpbrk(val, "\r\n")) {
        snprintf(why, sizeof(why), "printed CR or LF");
        memset(val, 0, strlen(val));
        mcp__free(val);
        val = NULL;
        rc = 1;
      }
      if (rc == 0) {
        memset(kv[i].value, 0, strlen(kv[i].value));
        mcp__free(kv[i].value);
        kv[i].value = val;
      } else {
        char *q = mcp__config_quote(kv[i].name);
        if (!q) return CHECK_OOM;
        mcp__config_diag_add(dl, MCP_LOG_WARN, def->source, def->name, field,
                             "%s %s: secret command %s; entry dropped", label, q, why);
        mcp__free(q);
        if (dl->oom) return CHECK_OOM;
        drop = true;
      }
    }
    if (drop) {
      mcp__free(kv[i].name);
      mcp__free(kv[i].value);
    } else {
      kv[w++] = kv[i];
    }
  }
  *n = w;
  return CHECK_OK;
}

mcp_status mcp__config_resolve_secrets(const mcp_server_def *def, const mcp_secret_opts *o,
                                       mcp_server_def **out, mcp_config_diag **diags,
                                       size_t *ndiags) {
  if (!out) return MCP_EINVAL;
  *out = NULL;
  if (!def || !diags || !ndiags) return MCP_EINVAL;
  int64_t timeout_ms = o && o->timeout_ms > 0 ? o->timeout_ms : MCP_CONFIG_SECRET_TIMEOUT_MS;
  mcp_diag_list dl;
  memset(&dl, 0, sizeof(dl));
  mcp_server_def *d = mcp__server_def_dup(def);
  if (!d) return MCP_ENOMEM;
  if (!def->foreign &&
      (resolve_map(def, "env", "env", d->s.env, &d->s.nenv, false, timeout_ms, &dl) ||
       resolve_map(def, "headers", "header", d->s.headers, &d->s.nheaders, true, timeout_ms, &dl)))
    goto oom;
  if (dl.n) {
    mcp_config_diag *v = mcp__reallocarray(*diags, *ndiags + dl.n, sizeof(*v));
    if (!v) goto oom;
    memcpy(v + *ndiags, dl.v, dl.n * sizeof(*v));
    *diags = v;
    *ndiags += dl.n;
    mcp__free(dl.v);
  }
  *out = d;
  return MCP_OK;
oom:
  mcp__config_diags_free(dl.v, dl.n);
  mcp__server_def_free(d);
  return MCP_ENOMEM;
}
