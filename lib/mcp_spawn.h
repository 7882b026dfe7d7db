/* SPDX-License-Identifier: MIT */
/*
 * mcp_spawn.h: starting child processes, for the stdio transport and for
 * `!command` secrets.  One place decides what a child gets from the host:
 * its own process group, an empty signal mask and default dispositions,
 * descriptors 0-2 only, a working directory and an environment built from
 * an inheritance policy.  Built on posix_spawn(), which on Linux clones
 * with CLONE_VM|CLONE_VFORK, so its cost does not grow with the host's
 * memory as fork()'s does (page tables are not copied).
 * Must not know about: MCP, JSON, transports.
 */
#ifndef MCP_SPAWN_H
#define MCP_SPAWN_H

#include <stdbool.h>
#include <sys/types.h>

#include "mcp_int.h"

/* Where a spawn failed (see mcp__spawn). */
typedef enum mcp_spawn_stage {
  MCP_SPAWN_STAGE_SETUP = 1, /* descriptors, attributes, memory */
  MCP_SPAWN_STAGE_CHDIR = 2, /* the working directory */
  MCP_SPAWN_STAGE_EXEC = 3   /* finding or executing the program */
} mcp_spawn_stage;

typedef struct mcp_spawn_opts {
  /* Program and arguments, NULL terminated.  argv[0] without a '/' is
   * searched in the PATH of |envp| (as execvp() would, but in the child's
   * environment; without PATH in /bin:/usr/bin); a file that is not an
   * executable format runs with /bin/sh, as execvp() does. */
  const char *const *argv;
  /* The child's whole environment ("NAME=VALUE", NULL terminated). */
  const char *const *envp;
  /* Working directory, or NULL for the caller's.  A relative argv[0] is
   * found relative to it. */
  const char *cwd;
  /* The child's descriptors 0, 1 and 2.  Each must be >= 3 (see
   * mcp__spawn_fd_high); no other descriptor reaches the child. */
  int fd[3];
} mcp_spawn_opts;

/*
 * mcp__spawn() starts |o->argv| in its own process group (pgid = pid),
 * with an empty signal mask, every signal at its default disposition (an
 * ignored SIGPIPE does not survive), descriptors 0-2 from |o->fd| and
 * nothing else open.  Exec failures are reported here, synchronously: a
 * program that cannot be found or run gives its errno, and no child is
 * left behind.
 * Ownership: |o| and everything it points to are borrowed for the call.
 *   On 0, *pid is a child the caller must reap.
 * Threads: any thread, concurrently.  No host code runs in the child, and
 *   the child never runs a signal handler of the host.
 * Returns: 0, or an errno value with *stage saying where it failed.
 */
int mcp__spawn(const mcp_spawn_opts *o, pid_t *pid, mcp_spawn_stage *stage);

/*
 * mcp__spawn_fd_high() moves |*fd| to a number >= 3, keeping it
 * close-on-exec (a host that closed its stdin makes pipe2() hand out 0,
 * which the child's descriptor 0 would then clobber).
 * Threads: any.  Returns: 0, or -1 with errno.
 */
int mcp__spawn_fd_high(int *fd);

/* The environment variables MCP_ENV_INHERIT_DEFAULT passes (the MCP SDKs'
 * list on POSIX), NULL terminated. */
extern const char *const mcp__spawn_default_env[];

/*
 * mcp__spawn_env() builds a child's environment: the host's environ
 * filtered by |inherit| (an mcp_env_inherit value: ALL passes everything;
 * DEFAULT passes mcp__spawn_default_env, except values starting with "()",
 * which are shell functions, as the SDKs do; NONE passes nothing; anything
 * else counts as ALL), then |extra| applied on top: "NAME=VALUE" sets,
 * "NAME" alone removes.
 * Ownership: the array is new (free with mcp__free()); its strings are
 *   borrowed from environ and |extra|, which must outlive it.
 * Threads: any, but like getenv() it must not race with setenv() or
 *   putenv() in another thread.
 * Returns: the array, or NULL when out of memory.
 */
char **mcp__spawn_env(int inherit, const char *const *extra);

#endif /* MCP_SPAWN_H */
