/* SPDX-License-Identifier: MIT */
/*
 * mcp_secret.h: `!command` secrets (mcp_secret.c), resolved at connect
 * time, with a process-wide cache.  The definition and diagnostic types
 * are mcp_config.h's.
 */
#ifndef MCP_SECRET_H
#define MCP_SECRET_H

#include <stddef.h>
#include <stdint.h>

#include "mcp_config.h"
#include "mcp_int.h"

/* Default time limit of one `!command` secret, in ms. */
#define MCP_CONFIG_SECRET_TIMEOUT_MS 10000

/* Options of mcp__config_resolve_secrets(); NULL means the defaults. */
typedef struct mcp_secret_opts {
  int64_t timeout_ms; /* per command; <= 0: MCP_CONFIG_SECRET_TIMEOUT_MS */
} mcp_secret_opts;

/*
 * mcp__config_resolve_secrets() makes the definition to connect with: a
 * copy of |def| in which each env value (stdio) and header value (http,
 * sse) that starts with "!" is replaced by the trimmed standard output of
 * `/bin/sh -c <rest>`.  A command that exits non-zero, is killed, runs past
 * the timeout (its process group is killed, and it is reaped) or prints
 * nothing (after trimming) drops that entry with a warning, as does a header
 * value with CR or LF.  Outputs are cached for the life of the process by
 * command text, and concurrent identical commands run once; failures are not
 * cached.  The command gets /dev/null as stdin and stderr, and no other
 * descriptor of the host.  Definitions from foreign files are copied as
 * they are ("!" is literal there).  Warnings never contain a command's
 * output.  The copy keeps |def|'s hash.
 * Ownership: |def| borrowed.  On MCP_OK *out is a new definition freed with
 *   mcp__server_def_free(), and warnings are appended to *diags / *ndiags
 *   (an array the caller frees with mcp__config_diags_free()).  On error
 *   *out is NULL and *diags is unchanged.
 * Threads: any, concurrently.  Blocks while commands run.  Commands start
 *   through posix_spawn() (mcp_spawn.h): no host code runs in the child.
 * Returns: MCP_OK, MCP_EINVAL, MCP_ENOMEM.
 */
mcp_status mcp__config_resolve_secrets(const mcp_server_def *def, const mcp_secret_opts *o,
                                       mcp_server_def **out, mcp_config_diag **diags,
                                       size_t *ndiags);

/*
 * mcp__config_secrets_clear() forgets (and frees) every cached secret.  For
 * tests, for a host that wants its secret commands to run again, and for a
 * clean exit under leak checkers.
 * Threads: any, but never while mcp__config_resolve_secrets() runs.
 */
void mcp__config_secrets_clear(void);

#endif /* MCP_SECRET_H */
