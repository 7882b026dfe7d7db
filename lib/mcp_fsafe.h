/* SPDX-License-Identifier: MIT */
/*
 * mcp_fsafe.h: private files and directories on disk, the one rule shared
 * by the tool cache (mcp_cache.c) and the OAuth token store (mcp_oauth.c).
 *
 * A private directory is a real directory (its last component is not a
 * symbolic link), owned by the effective uid and writable by nobody else.
 * A private file is a regular file in one, opened without following a
 * symbolic link and without blocking (a planted FIFO does not hang us),
 * owned by the effective uid and writable by nobody else.  Files are
 * replaced through a mkstemp() name (O_EXCL, mode 0600) and rename(), so
 * whatever sits at the final name (a planted 0666 file, a FIFO, a symlink)
 * is replaced, never written through.
 *
 * Parents of the directory are not checked: a host whose $HOME or
 * $XDG_*_HOME is writable by others is out of scope.  Pure file-system
 * code: no threads, no global state, no logging.
 */
#ifndef MCP_FSAFE_H
#define MCP_FSAFE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * mcp__fsafe_dir() checks that |dir| is a private directory.  With
 * |create| it first makes |dir| and its missing parents with mode 0700
 * (existing ones are left as they are, then judged).
 * Ownership: |why| (|why_size| bytes, may be 0) gets "PATH: reason" on
 *   failure.  Threads: any.
 * Returns: 0; ENOENT (absent and not |create|); EPERM (exists but is not
 *   private: a symlink, not a directory, another owner, group- or
 *   other-writable); another errno (cannot create or open).
 */
int mcp__fsafe_dir(const char *dir, bool create, char *why, size_t why_size);

/*
 * mcp__fsafe_open() opens |path| for reading when it is a private file,
 * as said above.  Call it on a file in a directory mcp__fsafe_dir()
 * accepted.
 * Ownership: on 0 *fd is an open descriptor (O_CLOEXEC) the caller
 *   closes; else *fd is -1 and |why| says "PATH: reason".  Threads: any.
 * Returns: 0; ENOENT (absent); EPERM (not private); another errno.
 */
int mcp__fsafe_open(const char *path, int *fd, char *why, size_t why_size);

/*
 * mcp__fsafe_replace() makes |dir|/|name| hold the bytes of the |nparts|
 * |parts|, written in order, atomically and durably: a new
 * mode-0600 file from mkostemp() in |dir|, fsync, rename over |name|,
 * fsync of |dir|.  The temporary file is removed on failure.  |dir| must
 * have been accepted by mcp__fsafe_dir().
 * Ownership: all borrowed; |why| gets "PATH: step: reason" on failure.
 * Threads: any (distinct names, or the last rename wins).
 * Returns: 0, ENOMEM, or the errno of the step that failed.
 */
struct mcp_fsafe_part {
  const char *data;
  size_t len;
};
int mcp__fsafe_replace(const char *dir, const char *name, const struct mcp_fsafe_part *parts,
                       size_t nparts, char *why, size_t why_size);

#endif /* MCP_FSAFE_H */
