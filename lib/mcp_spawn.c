/* SPDX-License-Identifier: MIT */
/*
 * mcp_spawn.c: starting child processes on posix_spawn() (see
 * mcp_spawn.h).  glibc implements posix_spawn() with
 * clone(CLONE_VM|CLONE_VFORK): the child borrows the parent's memory until
 * it execs, so spawning costs the same in a host with 8 GiB of heap as in
 * a small one, where fork() copies the page tables of the whole host
 * (about 20 ms per GiB on the machine of bench/bighost.c).  It also runs no
 * code of ours in the child, so nothing here has to be async-signal-safe.
 *
 * What posix_spawn() cannot report by itself is done in the parent first:
 * the working directory is opened (so a bad cwd is named as such, not as a
 * missing program) and each PATH candidate is looked at before it is run,
 * which also keeps spawning cheap when PATH is long.  Exec errors come
 * back as posix_spawn()'s return value (glibc's child writes its errno to
 * the shared memory before it exits); the pre-checks give the same
 * answers where that channel is missing (valgrind runs the clone as a
 * plain fork).
 * Must not know about: MCP, JSON, transports.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mcp_spawn.h"

extern char **environ;

const char *const mcp__spawn_default_env[] = {"HOME", "LOGNAME", "PATH", "SHELL",
                                              "TERM", "USER",    NULL};

/* mcp_env_inherit's values (mcpconn.h), repeated so this module does not
 * depend on the public header. */
enum { INHERIT_ALL = 1, INHERIT_DEFAULT = 2, INHERIT_NONE = 3 };

int mcp__spawn_fd_high(int *fd) {
  if (*fd >= 3) return 0;
  int nfd = fcntl(*fd, F_DUPFD_CLOEXEC, 3);
  if (nfd < 0) return -1;
  close(*fd);
  *fd = nfd;
  return 0;
}

/* Length of the NAME part of "NAME=VALUE" or "NAME". */
static size_t name_len(const char *e) { return strcspn(e, "="); }

static bool in_default_list(const char *e) {
  size_t nl = name_len(e);
  for (const char *const *d = mcp__spawn_default_env; *d; d++)
    if (strlen(*d) == nl && strncmp(*d, e, nl) == 0) return true;
  return false;
}

char **mcp__spawn_env(int inherit, const char *const *extra) {
  size_t n0 = 0, n1 = 0;
  if (environ && inherit != INHERIT_NONE)
    while (environ[n0]) n0++;
  if (extra)
    while (extra[n1]) n1++;
  char **envp = mcp__calloc(n0 + n1 + 1, sizeof(char *));
  if (!envp) return NULL;
  size_t n = 0;
  for (size_t i = 0; i < n0; i++) {
    const char *e = environ[i];
    if (inherit == INHERIT_DEFAULT) {
      if (!in_default_list(e)) continue;
      /* A bash function exported as a variable ("() { ...; }"). */
      if (strncmp(e + name_len(e), "=()", 3) == 0) continue;
    }
    envp[n++] = (char *)e;
  }
  for (size_t i = 0; i < n1; i++) {
    const char *e = extra[i];
    size_t nl = name_len(e);
    size_t w = 0;
    for (size_t r = 0; r < n; r++) {
      bool same = strncmp(envp[r], e, nl) == 0 && envp[r][nl] == '=';
      if (!same) envp[w++] = envp[r];
    }
    n = w;
    if (e[nl] == '=') envp[n++] = (char *)e;
  }
  envp[n] = NULL;
  return envp;
}

/*
 * The paths execvp() would try for |file|, searching the PATH of |envp|
 * (as libuv does), so a config that sets PATH finds its programs there.
 * One block: the pointer array, then the strings.
 */
static char **candidates(const char *file, const char *const *envp) {
  if (strchr(file, '/')) {
    char **c = mcp__calloc(2, sizeof(char *));
    if (c) c[0] = (char *)file;
    return c;
  }
  const char *path = "/bin:/usr/bin";
  for (const char *const *e = envp; *e; e++)
    if (strncmp(*e, "PATH=", 5) == 0) path = *e + 5;
  size_t dirs = 1, flen = strlen(file);
  for (const char *p = path; *p; p++)
    if (*p == ':') dirs++;
  /* Each candidate is dir + "/" + file + NUL; an empty dir means ".". */
  size_t strings = strlen(path) + dirs * (flen + 3);
  if (dirs > (SIZE_MAX - strings) / sizeof(char *) - 1) return NULL;
  char **c = mcp__malloc((dirs + 1) * sizeof(char *) + strings);
  if (!c) return NULL;
  char *out = (char *)(c + dirs + 1);
  const char *p = path;
  for (size_t i = 0; i < dirs; i++) {
    size_t dl = strcspn(p, ":");
    c[i] = out;
    if (dl == 0) {
      *out++ = '.';
    } else {
      memcpy(out, p, dl);
      out += dl;
    }
    *out++ = '/';
    memcpy(out, file, flen + 1);
    out += flen + 1;
    p += dl;
    if (*p == ':') p++;
  }
  c[dirs] = NULL;
  return c;
}

/* Errors after which execvp() goes on to the next PATH entry. */
static bool try_next(int e) {
  return e == ENOENT || e == ENOTDIR || e == ESTALE || e == ENODEV || e == ETIMEDOUT;
}

/*
 * What execve() of |path| would say before loading it: 0 when it exists as
 * a file we may execute, else the errno (ENOENT, EACCES, ...).  Relative
 * paths are resolved in |dirfd|, the child's working directory.
 */
static int precheck(int dirfd, const char *path) {
  struct stat st;
  if (fstatat(dirfd, path, &st, 0) < 0) return errno;
  if (S_ISDIR(st.st_mode)) return EACCES;
  if (faccessat(dirfd, path, X_OK, AT_EACCESS) < 0) return errno;
  return 0;
}

#ifndef HAVE_POSIX_SPAWN_FILE_ACTIONS_ADDCLOSEFROM_NP
/* Without addclosefrom_np: close, in the child, each descriptor >= 3 that
 * is open without close-on-exec now (ours all have it).  A descriptor a
 * host thread opens without O_CLOEXEC meanwhile may escape. */
static int add_closes(posix_spawn_file_actions_t *fa) {
  struct rlimit rl;
  int max_fd = 1024;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
    max_fd = rl.rlim_cur > 65536 ? 65536 : (int)rl.rlim_cur;
  for (int fd = 3; fd < max_fd; fd++) {
    int fl = fcntl(fd, F_GETFD);
    if (fl >= 0 && !(fl & FD_CLOEXEC)) {
      int rc = posix_spawn_file_actions_addclose(fa, fd);
      if (rc) return rc;
    }
  }
  return 0;
}
#endif

int mcp__spawn(const mcp_spawn_opts *o, pid_t *pid_out, mcp_spawn_stage *stage) {
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  bool fa_ok = false, attr_ok = false;
  char **cand = NULL, **sh_argv = NULL;
  int dirfd = AT_FDCWD, rc = 0;
  *stage = MCP_SPAWN_STAGE_SETUP;
  *pid_out = -1;
  if (!o || !o->argv || !o->argv[0] || !o->envp) return EINVAL;
  for (int i = 0; i < 3; i++)
    if (o->fd[i] < 3) return EBADF;

  if (o->cwd) {
    /* O_PATH: opening needs search permission on the way there only; the
     * directory itself must be searchable for the child's fchdir(). */
    dirfd = open(o->cwd, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dirfd < 0 || faccessat(dirfd, ".", X_OK, AT_EACCESS) < 0) {
      rc = errno;
      *stage = MCP_SPAWN_STAGE_CHDIR;
      goto out;
    }
  }
  size_t argc = 0;
  while (o->argv[argc]) argc++;
  cand = candidates(o->argv[0], o->envp);
  sh_argv = mcp__calloc(argc + 2, sizeof(char *));
  if (!cand || !sh_argv) {
    rc = ENOMEM;
    goto out;
  }
  sh_argv[0] = (char *)"/bin/sh";
  for (size_t i = 1; i < argc; i++) sh_argv[i + 1] = (char *)o->argv[i];

  if ((rc = posix_spawn_file_actions_init(&fa))) goto out;
  fa_ok = true;
  if ((rc = posix_spawnattr_init(&attr))) goto out;
  attr_ok = true;
  /* In this order: the directory descriptor is gone after closefrom. */
  if (o->cwd) {
#if defined(HAVE_POSIX_SPAWN_FILE_ACTIONS_ADDFCHDIR_NP)
    rc = posix_spawn_file_actions_addfchdir_np(&fa, dirfd);
#elif defined(HAVE_POSIX_SPAWN_FILE_ACTIONS_ADDCHDIR_NP)
    rc = posix_spawn_file_actions_addchdir_np(&fa, o->cwd);
#else
    rc = ENOSYS;
#endif
    if (rc) {
      *stage = MCP_SPAWN_STAGE_CHDIR;
      goto out;
    }
  }
  for (int i = 0; i < 3 && !rc; i++) rc = posix_spawn_file_actions_adddup2(&fa, o->fd[i], i);
  if (rc) goto out;
#ifdef HAVE_POSIX_SPAWN_FILE_ACTIONS_ADDCLOSEFROM_NP
  rc = posix_spawn_file_actions_addclosefrom_np(&fa, 3);
#else
  rc = add_closes(&fa);
#endif
  if (rc) goto out;
  /* Own process group, so the whole tree a server starts can be
   * signalled; no signal blocked, none ignored or handled. */
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  if ((rc = posix_spawnattr_setpgroup(&attr, 0)) ||
      (rc = posix_spawnattr_setsigmask(&attr, &none)) ||
      (rc = posix_spawnattr_setsigdefault(&attr, &all)) ||
      (rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                                POSIX_SPAWN_SETSIGDEF)))
    goto out;

  /* Like execvp(): try each candidate, remember EACCES, and run a file
   * that is no executable format (a script without "#!") with /bin/sh. */
  *stage = MCP_SPAWN_STAGE_EXEC;
  int err = ENOENT;
  bool saw_eacces = false;
  for (char **c = cand; *c; c++) {
    err = precheck(dirfd, *c);
    if (err == 0) {
      err = posix_spawn(pid_out, *c, &fa, &attr, (char *const *)o->argv, (char *const *)o->envp);
      if (err == ENOEXEC) {
        sh_argv[1] = *c;
        err = posix_spawn(pid_out, "/bin/sh", &fa, &attr, sh_argv, (char *const *)o->envp);
      }
      if (err == 0) break;
    }
    if (err == EACCES) {
      saw_eacces = true;
      continue;
    }
    if (!try_next(err)) break;
  }
  if (err && saw_eacces && (err == ENOENT || err == ENOTDIR)) err = EACCES;
  rc = err;
out:
  if (rc) *pid_out = -1;
  if (attr_ok) posix_spawnattr_destroy(&attr);
  if (fa_ok) posix_spawn_file_actions_destroy(&fa);
  if (dirfd >= 0) close(dirfd);
  mcp__free(cand);
  mcp__free(sh_argv);
  return rc;
}
