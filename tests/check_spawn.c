/* SPDX-License-Identifier: MIT */
/*
 * check_spawn.c: the spawn module (lib/mcp_spawn.c) against the behaviour
 * the fork()-based children had: process group, signal mask and
 * dispositions, descriptors, working directory, exec errors; the
 * environment inheritance policy (mcp__spawn_env, the client option, the
 * manager's defaults for project and user files, the "envInherit" field);
 * and the report of a server that dies at start-up.  Real children that
 * print what they got.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_util.h"
#include "mcp_client.h"
#include "mcp_config.h"
#include "mcp_server_options.h"
#include "mcp_spawn.h"
#include "mcpconn.h"

extern char **environ;

/* ---- helpers ------------------------------------------------------------ */

/* A spawned child with its stdout on a pipe. */
typedef struct child {
  pid_t pid;
  int out; /* read end */
} child;

static int devnull_high(void) {
  int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(mcp__spawn_fd_high(&fd), 0);
  return fd;
}

/* Spawns |argv| with stdout on a pipe; returns mcp__spawn's result. */
static int spawn_out(const char *const *argv, const char *const *envp, const char *cwd, child *ch,
                     mcp_spawn_stage *stage) {
  int p[2];
  ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
  ck_assert_int_eq(mcp__spawn_fd_high(&p[0]), 0);
  ck_assert_int_eq(mcp__spawn_fd_high(&p[1]), 0);
  int dn = devnull_high();
  mcp_spawn_opts o = {.argv = argv,
                      .envp = envp ? envp : (const char *const *)environ,
                      .cwd = cwd,
                      .fd = {dn, p[1], dn}};
  mcp_spawn_stage st = 0;
  int rc = mcp__spawn(&o, &ch->pid, &st);
  if (stage) *stage = st;
  close(p[1]);
  close(dn);
  ch->out = p[0];
  if (rc) {
    close(p[0]);
    ch->out = -1;
    ck_assert_int_eq(ch->pid, -1);
  }
  return rc;
}

/* Reads the child's whole stdout and reaps it; returns a malloc'd string. */
static char *finish(child *ch, int *status) {
  size_t cap = 1 << 16, len = 0;
  char *buf = malloc(cap);
  ck_assert_ptr_nonnull(buf);
  for (;;) {
    if (len + 1 == cap) {
      cap *= 2;
      buf = realloc(buf, cap);
      ck_assert_ptr_nonnull(buf);
    }
    ssize_t n = read(ch->out, buf + len, cap - len - 1);
    if (n < 0 && errno == EINTR) continue;
    ck_assert_int_ge(n, 0);
    if (n == 0) break;
    len += (size_t)n;
  }
  buf[len] = '\0';
  close(ch->out);
  int ws = 0;
  while (waitpid(ch->pid, &ws, 0) < 0) ck_assert_int_eq(errno, EINTR);
  if (status) *status = ws;
  return buf;
}

static void assert_no_child_left(void) {
  errno = 0;
  ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
  ck_assert_int_eq(errno, ECHILD);
}

/* The hex mask after |key| ("SigBlk:") in /proc/<pid>/status text. */
static unsigned long long status_mask(const char *text, const char *key) {
  const char *p = strstr(text, key);
  ck_assert_msg(p != NULL, "no %s in: %s", key, text);
  return strtoull(p + strlen(key), NULL, 16);
}

static char *make_tmpdir(void) {
  char tmpl[PATH_MAX];
  snprintf(tmpl, sizeof(tmpl), "%s/spawn-XXXXXX", test_env_path("MCP_TEST_TMPDIR"));
  char *d = mkdtemp(tmpl);
  ck_assert_ptr_nonnull(d);
  char *real = realpath(d, NULL);
  ck_assert_ptr_nonnull(real);
  return real;
}

static void write_file(const char *path, const char *text, mode_t mode) {
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs(text, f);
  fclose(f);
  ck_assert_int_eq(chmod(path, mode), 0);
}

static void rm_rf(const char *dir) {
  char cmd[PATH_MAX + 16];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  ck_assert_int_eq(system(cmd), 0);
}

/* ---- the child's process state -------------------------------------------- */

static void on_term(int sig) { (void)sig; }

START_TEST(test_child_state) {
  /* A host that ignores SIGINT and SIGPIPE, handles SIGTERM, blocks SIGUSR1
   * in the spawning thread and leaked descriptor 100 without close-on-exec:
   * none of it reaches the child, which leads its own process group.  The
   * masks are read by grep, a grandchild (dash blocks every signal in
   * itself while it runs a command, and restores them in the child). */
  signal(SIGINT, SIG_IGN);
  signal(SIGPIPE, SIG_IGN);
  signal(SIGTERM, on_term);
  sigset_t usr1;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &usr1, NULL);
  int leak = open("/dev/null", O_RDONLY);
  ck_assert_int_ge(leak, 0);
  ck_assert_int_eq(dup2(leak, 100), 100);

  const char *argv[] = {"sh", "-c",
                        "grep -E '^(SigBlk|SigIgn):' /proc/self/status; "
                        "echo \"pgrp $(cut -d' ' -f5 /proc/$$/stat)\"; "
                        "echo fds $(ls /proc/self/fd)",
                        NULL};
  child ch;
  ck_assert_int_eq(spawn_out(argv, NULL, NULL, &ch, NULL), 0);
  int ws;
  char *out = finish(&ch, &ws);
  ck_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
  ck_assert_uint_eq(status_mask(out, "SigBlk:"), 0);
  unsigned long long ign = status_mask(out, "SigIgn:");
  ck_assert_msg(!(ign & (1ull << (SIGINT - 1))) && !(ign & (1ull << (SIGPIPE - 1))), "%s", out);
  char want[64];
  snprintf(want, sizeof(want), "pgrp %d\n", (int)ch.pid);
  ck_assert_msg(strstr(out, want), "want %s in: %s", want, out);
  /* ls sees 0-2 and the one it opened for the directory. */
  ck_assert_msg(strstr(out, "fds 0 1 2 3\n"), "%s", out);
  free(out);
  close(100);
  close(leak);
  assert_no_child_left();
}
END_TEST

/* ---- exec errors, synchronously --------------------------------------------- */

START_TEST(test_exec_errors) {
  child ch;
  mcp_spawn_stage stage;
  const char *missing[] = {"mcp-no-such-program-xyz", NULL};
  ck_assert_int_eq(spawn_out(missing, NULL, NULL, &ch, &stage), ENOENT);
  ck_assert_int_eq(stage, MCP_SPAWN_STAGE_EXEC);
  const char *missing_path[] = {"/nonexistent/dir/prog", NULL};
  ck_assert_int_eq(spawn_out(missing_path, NULL, NULL, &ch, &stage), ENOENT);
  if (geteuid() != 0) {
    /* No x bit: EACCES (root may run files with any x bit; this has none). */
    const char *noexec[] = {"/etc/passwd", NULL};
    ck_assert_int_eq(spawn_out(noexec, NULL, NULL, &ch, &stage), EACCES);
    ck_assert_int_eq(stage, MCP_SPAWN_STAGE_EXEC);
  }
  const char *dir[] = {"/tmp", NULL};
  ck_assert_int_eq(spawn_out(dir, NULL, NULL, &ch, &stage), EACCES);
  const char *ok[] = {"true", NULL};
  ck_assert_int_eq(spawn_out(ok, NULL, "/nonexistent-mcp-dir", &ch, &stage), ENOENT);
  ck_assert_int_eq(stage, MCP_SPAWN_STAGE_CHDIR);
  ck_assert_int_eq(spawn_out(ok, NULL, "/etc/passwd", &ch, &stage), ENOTDIR);
  ck_assert_int_eq(stage, MCP_SPAWN_STAGE_CHDIR);
  /* PATH comes from the child's environment. */
  const char *env_nopath[] = {"PATH=/nonexistent-a", NULL};
  ck_assert_int_eq(spawn_out(ok, env_nopath, NULL, &ch, &stage), ENOENT);
  const char *env_path[] = {"PATH=/nonexistent-a:/bin:/usr/bin", NULL};
  ck_assert_int_eq(spawn_out(ok, env_path, NULL, &ch, &stage), 0);
  int ws;
  free(finish(&ch, &ws));
  ck_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
  /* Bad arguments. */
  mcp_spawn_opts bad = {.argv = ok, .envp = (const char *const *)environ, .fd = {0, 1, 2}};
  pid_t pid;
  ck_assert_int_eq(mcp__spawn(&bad, &pid, &stage), EBADF);
  assert_no_child_left();
}
END_TEST

START_TEST(test_script_and_cwd) {
  /* A script without "#!" runs with /bin/sh (as execvp does); a relative
   * program is found in the child's working directory; a PATH entry where
   * the name is not executable is skipped.  The /bin/sh fallback rests on
   * posix_spawn() returning ENOEXEC, which glibc's child reports through
   * memory shared by CLONE_VM; valgrind runs that clone as a plain fork, so
   * under valgrind the error (and the fallback) is lost, and this test
   * checks only the scripts that have a "#!" line there. */
  const char *body = test_under_valgrind() ? "#!/bin/sh\necho \"script $1 $(pwd)\"\n"
                                           : "echo \"script $1 $(pwd)\"\n";
  char *dir = make_tmpdir();
  char path[PATH_MAX + 32];
  snprintf(path, sizeof(path), "%s/noshebang", dir);
  write_file(path, body, 0755);
  const char *argv[] = {"./noshebang", "arg1", NULL};
  child ch;
  ck_assert_int_eq(spawn_out(argv, NULL, dir, &ch, NULL), 0);
  char *out = finish(&ch, NULL);
  char want[PATH_MAX + 32];
  snprintf(want, sizeof(want), "script arg1 %s\n", dir);
  ck_assert_str_eq(out, want);
  free(out);

  /* Found through PATH, after an entry where the name is not executable. */
  char sub[PATH_MAX - 64], env_path[PATH_MAX * 2 + 8];
  snprintf(sub, sizeof(sub), "%s/sub", dir);
  ck_assert_int_eq(mkdir(sub, 0755), 0);
  snprintf(path, sizeof(path), "%s/noshebang", sub);
  write_file(path, "echo wrong\n", 0644);
  snprintf(env_path, sizeof(env_path), "PATH=%s:%s", sub, dir);
  const char *envp[] = {env_path, NULL};
  const char *argv2[] = {"noshebang", "two", NULL};
  ck_assert_int_eq(spawn_out(argv2, envp, "/", &ch, NULL), 0);
  out = finish(&ch, NULL);
  ck_assert_str_eq(out, "script two /\n");
  free(out);
  /* Only the non-executable one: EACCES, as execvp says. */
  snprintf(env_path, sizeof(env_path), "PATH=%s", sub);
  mcp_spawn_stage stage;
  if (geteuid() != 0) ck_assert_int_eq(spawn_out(argv2, envp, NULL, &ch, &stage), EACCES);
  rm_rf(dir);
  free(dir);
  assert_no_child_left();
}
END_TEST

/* ---- environment policy ----------------------------------------------------- */

static bool has_var(char **envp, const char *entry) {
  for (char **e = envp; *e; e++)
    if (strcmp(*e, entry) == 0) return true;
  return false;
}

static bool has_name(char **envp, const char *name) {
  size_t nl = strlen(name);
  for (char **e = envp; *e; e++)
    if (strncmp(*e, name, nl) == 0 && (*e)[nl] == '=') return true;
  return false;
}

START_TEST(test_env_policy_build) {
  setenv("MCPCONN_TEST_SECRET", "x", 1);
  setenv("HOME", "/home/test-home", 1);
  setenv("TERM", "() { echo shellshock; }", 1);
  unsetenv("MCP_T_GONE");
  const char *extra[] = {"MCP_T_ADDED=1", "HOME=/over", "PATH", NULL};

  char **all = mcp__spawn_env(MCP_ENV_INHERIT_ALL, NULL);
  ck_assert(has_var(all, "MCPCONN_TEST_SECRET=x"));
  ck_assert(has_var(all, "HOME=/home/test-home"));
  mcp__free(all);

  char **def = mcp__spawn_env(MCP_ENV_INHERIT_DEFAULT, NULL);
  ck_assert(!has_name(def, "MCPCONN_TEST_SECRET"));
  ck_assert(has_var(def, "HOME=/home/test-home"));
  ck_assert(has_name(def, "PATH"));
  ck_assert(!has_name(def, "TERM")); /* a shell function, not a terminal */
  for (char **e = def; *e; e++) {
    size_t nl = strcspn(*e, "=");
    bool listed = false;
    for (const char *const *d = mcp__spawn_default_env; *d; d++)
      listed |= strlen(*d) == nl && strncmp(*d, *e, nl) == 0;
    ck_assert_msg(listed, "%s passed under the default policy", *e);
  }
  mcp__free(def);

  char **with = mcp__spawn_env(MCP_ENV_INHERIT_DEFAULT, extra);
  ck_assert(has_var(with, "MCP_T_ADDED=1"));
  ck_assert(has_var(with, "HOME=/over"));
  ck_assert(!has_name(with, "PATH"));
  mcp__free(with);

  char **none = mcp__spawn_env(MCP_ENV_INHERIT_NONE, extra);
  ck_assert(has_var(none, "MCP_T_ADDED=1"));
  ck_assert(has_var(none, "HOME=/over"));
  ck_assert_ptr_null(none[2]);
  mcp__free(none);
  unsetenv("MCPCONN_TEST_SECRET");
}
END_TEST

/* Runs `env` in a real child under |inherit| and returns what it printed. */
static char *child_env(int inherit, const char *const *extra) {
  char **envp = mcp__spawn_env(inherit, extra);
  ck_assert_ptr_nonnull(envp);
  const char *argv[] = {"/usr/bin/env", NULL};
  child ch;
  ck_assert_int_eq(spawn_out(argv, (const char *const *)envp, NULL, &ch, NULL), 0);
  mcp__free(envp);
  return finish(&ch, NULL);
}

START_TEST(test_env_policy_child) {
  setenv("MCPCONN_TEST_SECRET", "x", 1);
  const char *extra[] = {"MCP_T_MINE=y", NULL};
  char *out = child_env(MCP_ENV_INHERIT_DEFAULT, extra);
  ck_assert_msg(!strstr(out, "MCPCONN_TEST_SECRET"), "%s", out);
  ck_assert_msg(strstr(out, "MCP_T_MINE=y\n") && strstr(out, "PATH="), "%s", out);
  free(out);
  out = child_env(MCP_ENV_INHERIT_NONE, extra);
  ck_assert_str_eq(out, "MCP_T_MINE=y\n");
  free(out);
  out = child_env(MCP_ENV_INHERIT_ALL, extra);
  ck_assert_msg(strstr(out, "MCPCONN_TEST_SECRET=x\n"), "%s", out);
  free(out);
  unsetenv("MCPCONN_TEST_SECRET");
}
END_TEST

START_TEST(test_env_inherit_field) {
  /* "envInherit" parses to the policy, enters the canonical form (so the
   * hash changes with it), and a bad value or an HTTP server's use of it is
   * a warning naming the field. */
  static const char text[] = "{\"mcpServers\": {"
                             "\"a\": {\"command\": \"x\", \"envInherit\": \"none\"},"
                             "\"b\": {\"command\": \"x\"},"
                             "\"c\": {\"command\": \"x\", \"envInherit\": \"some\"},"
                             "\"d\": {\"url\": \"http://127.0.0.1:1/\", \"envInherit\": \"all\"},"
                             "\"e\": {\"command\": \"x\", \"envInherit\": true}}}";
  mcp_config_set *set = NULL;
  ck_assert_int_eq(mcp__config_parse_text(text, sizeof(text) - 1, "t.json", NULL, &set), MCP_OK);
  const mcp_server_def *a = mcp__config_find(set, "a"), *b = mcp__config_find(set, "b");
  ck_assert_ptr_nonnull(a);
  ck_assert_ptr_nonnull(b);
  ck_assert_int_eq(a->s.env_inherit, MCP_ENV_INHERIT_NONE);
  ck_assert_int_eq(b->s.env_inherit, 0);
  ck_assert_ptr_null(mcp__config_find(set, "c"));
  ck_assert_ptr_null(mcp__config_find(set, "d"));
  ck_assert_ptr_null(mcp__config_find(set, "e"));
  int warned = 0;
  for (size_t i = 0; i < set->ndiags; i++)
    if (set->diags[i].field && strcmp(set->diags[i].field, "envInherit") == 0) warned++;
  ck_assert_int_eq(warned, 3);
  char *ja = NULL;
  ck_assert_int_eq(mcp__config_canonical_json(a, &ja), MCP_OK);
  ck_assert_msg(strstr(ja, "\"envInherit\":\"none\""), "%s", ja);
  ck_assert_str_ne(a->hash, b->hash);
  mcp__free(ja);
  /* Through to the client options. */
  mcp_client_options *co = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp__config_client_options(a, &co, &err), MCP_OK);
  ck_assert_int_eq(co->s.env_inherit, MCP_ENV_INHERIT_NONE);
  mcp_client_options_free(co);
  mcp__config_free(set);
}
END_TEST

/* What server |name| wrote to <dir>/<name>.env, or NULL when it never ran. */
static char *read_env_file(const char *dir, const char *name) {
  char path[PATH_MAX + 128];
  snprintf(path, sizeof(path), "%s/%s.env", dir, name);
  FILE *f = fopen(path, "r");
  if (!f) return NULL;
  char *buf = calloc(1, 1 << 20);
  ck_assert_ptr_nonnull(buf);
  size_t n = fread(buf, 1, (1 << 20) - 1, f);
  buf[n] = '\0';
  fclose(f);
  unlink(path);
  return buf;
}

/* A stdio server entry that records its environment, then runs the demo
 * server; "env" entries name the output file (applied under every policy). */
static void server_entry(char *out, size_t n, const char *dir, const char *name,
                         const char *inherit) {
  char field[64] = "";
  if (inherit) snprintf(field, sizeof(field), "\"envInherit\": \"%s\", ", inherit);
  snprintf(out, n,
           "\"%s\": {%s\"command\": \"/bin/sh\", \"args\": [\"-c\", "
           "\"/usr/bin/env > \\\"$ENV_OUT\\\"; exec \\\"$DEMO\\\"\"], "
           "\"env\": {\"ENV_OUT\": \"%s/%s.env\", \"DEMO\": \"%s\"}}",
           name, field, dir, name, test_env_path("MCP_DEMO_SERVER"));
}

/* The project file is the test's own: trust it for this run. */
static mcp_trust trust_once(void *user, const char *path, const char *sha256,
                            const char *servers_json) {
  (void)user, (void)path, (void)sha256, (void)servers_json;
  return MCP_TRUST_ONCE;
}

static void start_and_stop(mcp_manager_options *o) {
  mcp_manager *m = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_msg(mcp_manager_start(o, &m, &err) == MCP_OK, "%s", err.message);
  mcp_manager_free(m);
}

START_TEST(test_env_policy_manager) {
  /* A project file's servers get the allowlist unless their entry says
   * otherwise; the user's and explicit files' servers, and servers added in
   * code, get everything; the manager's defaults change both; a secret in
   * the host's environment never reaches a server under the allowlist. */
  setenv("MCPCONN_TEST_SECRET", "x", 1);
  char *dir = make_tmpdir();
  char proj[PATH_MAX], path[PATH_MAX + 64];
  snprintf(proj, sizeof(proj), "%s/proj", dir);
  ck_assert_int_eq(mkdir(proj, 0755), 0);
  snprintf(path, sizeof(path), "%s/.git", proj);
  ck_assert_int_eq(mkdir(path, 0755), 0);
  char a[2048], b[2048], text[4200];
  server_entry(a, sizeof(a), dir, "p_unset", NULL);
  server_entry(b, sizeof(b), dir, "p_all", "all");
  snprintf(text, sizeof(text), "{\"mcpServers\": {%s, %s}}", a, b);
  snprintf(path, sizeof(path), "%s/.mcp.json", proj);
  write_file(path, text, 0644);
  server_entry(a, sizeof(a), dir, "u_unset", NULL);
  server_entry(b, sizeof(b), dir, "u_none", "none");
  snprintf(text, sizeof(text), "{\"mcpServers\": {%s, %s}}", a, b);
  snprintf(path, sizeof(path), "%s/user.json", dir);
  write_file(path, text, 0644);

  mcp_manager_options *o = mcp_manager_options_new();
  ck_assert_int_eq(mcp_manager_options_add_config_file(o, path), MCP_OK);
  mcp_manager_options_set_discovery(o, true, false);
  mcp_manager_options_set_project_trust(o, trust_once, NULL);
  ck_assert_int_eq(mcp_manager_options_set_cwd(o, proj), MCP_OK);
  ck_assert_int_eq(mcp_manager_options_set_cache_dir(o, NULL), MCP_OK);
  mcp_manager_options_set_startup_gate_ms(o, 20000);
  char out_code[PATH_MAX + 32];
  snprintf(out_code, sizeof(out_code), "ENV_OUT=%s/c_default.env", dir);
  const char *cargv[] = {"/bin/sh", "-c", "/usr/bin/env > \"$ENV_OUT\"; exec \"$DEMO\"", NULL};
  mcp_client_options *co = mcp_client_options_new();
  ck_assert_int_eq(mcp_client_options_set_stdio(co, cargv), MCP_OK);
  ck_assert_int_eq(mcp_client_options_set_env(co, "ENV_OUT", out_code + 8), MCP_OK);
  ck_assert_int_eq(mcp_client_options_set_env(co, "DEMO", test_env_path("MCP_DEMO_SERVER")),
                   MCP_OK);
  ck_assert_int_eq(mcp_client_options_set_env_inherit(co, (mcp_env_inherit)7), MCP_EINVAL);
  ck_assert_int_eq(mcp_client_options_set_env_inherit(co, MCP_ENV_INHERIT_DEFAULT), MCP_OK);
  ck_assert_int_eq(mcp_manager_options_add_server(o, "c_default", co), MCP_OK);
  mcp_client_options_free(co);

  start_and_stop(o);
  char *e;
  ck_assert_ptr_nonnull(e = read_env_file(dir, "p_unset"));
  ck_assert_msg(!strstr(e, "MCPCONN_TEST_SECRET") && strstr(e, "PATH="), "%s", e);
  ck_assert_msg(strstr(e, "ENV_OUT=") && strstr(e, "DEMO="), "%s", e);
  free(e);
  ck_assert_ptr_nonnull(e = read_env_file(dir, "p_all"));
  ck_assert_msg(strstr(e, "MCPCONN_TEST_SECRET=x\n"), "%s", e);
  free(e);
  ck_assert_ptr_nonnull(e = read_env_file(dir, "u_unset"));
  ck_assert_msg(strstr(e, "MCPCONN_TEST_SECRET=x\n"), "%s", e);
  free(e);
  ck_assert_ptr_nonnull(e = read_env_file(dir, "u_none"));
  ck_assert_msg(!strstr(e, "MCPCONN_TEST_SECRET") && !strstr(e, "PATH=") && strstr(e, "ENV_OUT="),
                "%s", e);
  free(e);
  ck_assert_ptr_nonnull(e = read_env_file(dir, "c_default"));
  ck_assert_msg(!strstr(e, "MCPCONN_TEST_SECRET") && strstr(e, "DEMO="), "%s", e);
  free(e);

  /* The manager's defaults: project ALL, other NONE (UNSET keeps one). */
  ck_assert_int_eq(mcp_manager_options_set_env_inherit(o, MCP_ENV_INHERIT_NONE, 9), MCP_EINVAL);
  ck_assert_int_eq(
      mcp_manager_options_set_env_inherit(o, MCP_ENV_INHERIT_ALL, MCP_ENV_INHERIT_NONE), MCP_OK);
  start_and_stop(o);
  ck_assert_ptr_nonnull(e = read_env_file(dir, "p_unset"));
  ck_assert_msg(strstr(e, "MCPCONN_TEST_SECRET=x\n"), "%s", e);
  free(e);
  ck_assert_ptr_nonnull(e = read_env_file(dir, "u_unset"));
  ck_assert_msg(!strstr(e, "MCPCONN_TEST_SECRET") && !strstr(e, "PATH="), "%s", e);
  free(e);
  ck_assert_ptr_nonnull(e = read_env_file(dir, "c_default")); /* its own choice */
  ck_assert_msg(!strstr(e, "MCPCONN_TEST_SECRET") && strstr(e, "PATH="), "%s", e);
  free(e);
  mcp_manager_options_free(o);
  rm_rf(dir);
  free(dir);
  unsetenv("MCPCONN_TEST_SECRET");
}
END_TEST

/* ---- a server that dies at start-up ----------------------------------------- */

void mcp__stdio_test_disable_pidfd(int disable);

/* A server that writes to stderr and exits 3 before reading anything:
 * whether the initialize request still fits in the pipe or meets a closed
 * one, the error must name the exit status and the stderr text, every
 * time. */
static void check_startup_crash(bool pidfd) {
  mcp__stdio_test_disable_pidfd(!pidfd);
  const char *argv[] = {"sh", "-c", "echo 'fatal: bad config at start-up' >&2; exit 3", NULL};
  mcp_client_options *o = mcp_client_options_new();
  ck_assert_int_eq(mcp_client_options_set_stdio(o, argv), MCP_OK);
  mcp_client_options_set_timeout_ms(o, 10000);
  for (int i = 0; i < 20; i++) {
    mcp_client *c = NULL;
    mcp_error err = MCP_ERROR_INIT;
    ck_assert_int_ne(mcp_client_connect(o, &c, &err), MCP_OK);
    ck_assert_ptr_null(c);
    ck_assert_msg(err.message && strstr(err.message, "server exited with status 3") &&
                      strstr(err.message, "fatal: bad config at start-up"),
                  "run %d: %s", i, err.message ? err.message : "(none)");
    mcp_error_clear(&err);
  }
  mcp_client_options_free(o);
  mcp__stdio_test_disable_pidfd(0);
}

START_TEST(test_startup_crash_reported) { check_startup_crash(true); }
END_TEST

/* Without a pidfd the reader finds the exit by waitpid(WNOHANG) every
 * 100 ms, still within the writer's wait. */
START_TEST(test_startup_crash_reported_no_pidfd) { check_startup_crash(false); }
END_TEST

static Suite *spawn_suite(void) {
  Suite *s = suite_create("spawn");
  TCase *tc = tcase_create("process");
  tcase_set_timeout(tc, 30);
  tcase_add_test(tc, test_child_state);
  tcase_add_test(tc, test_exec_errors);
  tcase_add_test(tc, test_script_and_cwd);
  suite_add_tcase(s, tc);

  tc = tcase_create("env");
  tcase_set_timeout(tc, 30);
  tcase_add_test(tc, test_env_policy_build);
  tcase_add_test(tc, test_env_policy_child);
  tcase_add_test(tc, test_env_policy_manager);
  tcase_add_test(tc, test_env_inherit_field);
  suite_add_tcase(s, tc);

  tc = tcase_create("report");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_startup_crash_reported);
  tcase_add_test(tc, test_startup_crash_reported_no_pidfd);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(spawn_suite()); }
