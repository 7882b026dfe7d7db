/* SPDX-License-Identifier: MIT */
/*
 * mcp_names.h: public tool names.  Folds (server, tool) pairs into names a
 * model provider accepts, `mcp__<server>_<tool>` matching
 * ^[a-zA-Z0-9_-]{1,64}$, and resolves collisions so that the result depends
 * only on the set of pairs, never on the order servers connected in.
 *
 * Pure: no I/O, no threads, no global state.  Knows nothing of MCP
 * messages; the manager hands it names and gets names back.
 *
 * Rules:
 *  - Each part is lower-cased (ASCII); every run of bytes outside [a-z0-9_]
 *    becomes one "_"; runs of "_" collapse to one; "_" is trimmed at both
 *    ends.  An empty server part becomes "server", an empty tool part
 *    "tool".  ("My Server!" -> "my_server".)
 *  - If the folded tool starts with "<folded server>_", that prefix is
 *    dropped ("github" + "github_search" -> "mcp__github_search").
 *  - The name is "mcp__" + server + "_" + tool.  A name longer than 64
 *    bytes is cut to its first 55 bytes, trailing "_" removed, then "_" and
 *    8 base-36 digits [0-9a-z] of a hash of the whole uncut name are
 *    appended (SHA-256, first 8 bytes big-endian, modulo 36^8), so it is at
 *    most 64 bytes.
 *  - Collisions (mcp__names_assign): among the pairs that fold to the same
 *    name, the one with the smallest origin key, server then tool compared
 *    bytewise (the order of "server\0tool"), keeps the name.  The others, in
 *    origin-key order, get the first free name among base + "_2", "_3", ...
 *    (the base is cut, trailing "_" removed, so the suffix fits in 64
 *    bytes), where a name is free when no winner holds it and no earlier
 *    loser took it.  No tool is dropped, except exact duplicates (the same
 *    server and tool twice), which are listed once.
 */
#ifndef MCP_NAMES_H
#define MCP_NAMES_H

#include <stdbool.h>
#include <stddef.h>

#include "mcp_int.h"

/* Longest public name, in bytes. */
#define MCP_NAMES_MAX 64

/* One input pair; both strings borrowed (NULL is read as ""). */
typedef struct mcp_tool_origin {
  const char *server;
  const char *tool;
} mcp_tool_origin;

/* One output entry; every string owned by the array. */
typedef struct mcp_named_tool {
  char *name;   /* the public name */
  char *server; /* the server name, as given */
  char *tool;   /* the tool's original name, as given, for tools/call */
  size_t index; /* position in the input of the (first) pair it came from */
  bool renamed; /* true when a collision gave it a "_N" suffix */
} mcp_named_tool;

/*
 * mcp__names_fold() folds one part as described above, writing "" when it
 * folds to nothing (the caller picks the default).
 * Ownership: on MCP_OK *out is new, freed with mcp__free().  Threads: any.
 * Returns: MCP_OK, MCP_EINVAL (NULL out), MCP_ENOMEM.
 */
mcp_status mcp__names_fold(const char *part, char **out);

/*
 * mcp__names_public() makes the public name of one pair, before collision
 * handling.
 * Ownership: on MCP_OK *out is new, freed with mcp__free().  Threads: any.
 * Returns: MCP_OK, MCP_EINVAL (NULL out), MCP_ENOMEM.
 */
mcp_status mcp__names_public(const char *server, const char *tool, char **out);

/*
 * mcp__names_assign() names every pair of |in| and resolves collisions.
 * The result is sorted by public name (bytewise), and for a given set of
 * pairs it is the same whatever their order in |in| (apart from |index|).
 * Ownership: |in| borrowed.  On MCP_OK *out is a new array of *nout
 *   entries freed with mcp__names_free() (*out may be NULL when |n| is 0);
 *   on error *out is NULL and *nout 0.
 * Threads: any, concurrently.
 * Returns: MCP_OK, MCP_EINVAL (NULL in with n > 0, NULL out), MCP_ENOMEM.
 */
mcp_status mcp__names_assign(const mcp_tool_origin *in, size_t n, mcp_named_tool **out,
                             size_t *nout);

/*
 * mcp__names_free() frees |n| entries (from mcp__names_assign) and the
 * array.  NULL is fine.  Threads: any.
 */
void mcp__names_free(mcp_named_tool *v, size_t n);

/*
 * mcp__names_is_valid() tells whether |name| matches ^[a-zA-Z0-9_-]{1,64}$.
 * Ownership: borrowed.  Threads: any.
 */
bool mcp__names_is_valid(const char *name);

#endif /* MCP_NAMES_H */
