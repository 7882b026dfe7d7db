/* SPDX-License-Identifier: MIT */
/*
 * mcp_cache.h: the deferred-tool cache on disk.  After each successful
 * tools/list the manager stores the server's tools, so that on the next
 * start a slow server's tools can be offered before it is ready.
 *
 * One file per server in the cache directory ($XDG_CACHE_HOME/mcpconn, else
 * ~/.cache/mcpconn; created 0700), named
 * "tools-<sanitised name>-<8 hex of SHA-256(name)>.json", mode 0600:
 *
 *   {"version":1,"server":"<name>","configHash":"<hex>",
 *    "writtenAt":<unix seconds>,"era":"legacy"|"modern",
 *    "tools":[ ...the raw tools/list array... ]}
 *
 * or, for a server whose tools may depend on who asked (the manager
 * withholds them: an authorization the configuration does not fix, and a
 * list not marked public), "private":true in place of "tools": only the
 * era is kept.
 *
 * "era" (optional) is the MCP era the server spoke when the tools were
 * read: the manager hands it to the next connect as a hint, so a legacy
 * server is not probed with server/discover on every start (the spec lets
 * a client remember the era per server configuration and re-probe when the
 * assumption fails).  An absent or unknown value is no hint.
 *
 * Writes are atomic (temporary file in the same directory, fsync, rename,
 * fsync of the directory).  A read is a hit only when the file parses,
 * version is 1, server and configHash match, writtenAt is no more than
 * |ttl_s| in the past and no more than a day in the future, and tools is an
 * array.  Anything else is a miss; no content can crash the reader.
 *
 * No threads and no global state; the clock and the directory are
 * parameters.  Knows nothing of MCP beyond "tools is a JSON array".
 */
#ifndef MCP_CACHE_H
#define MCP_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "mcp_int.h"

#define MCP_CACHE_VERSION 1
/* Default time to live: 30 days, in seconds. */
#define MCP_CACHE_TTL_S (30 * 24 * 3600)
/* How far in the future writtenAt may be (clock skew), in seconds. */
#define MCP_CACHE_FUTURE_SLACK_S (24 * 3600)
/* Largest cache file read, in bytes. */
#define MCP_CACHE_FILE_MAX (32u * 1024u * 1024u)

/* Why a read missed (or MCP_CACHE_HIT). */
typedef enum mcp_cache_outcome {
  MCP_CACHE_HIT = 0,
  MCP_CACHE_ABSENT = 1,           /* no file: not worth a log line */
  MCP_CACHE_STALE = 2,            /* older than the TTL, or dated in the future */
  MCP_CACHE_MISMATCH = 3,         /* written for another config hash */
  MCP_CACHE_CORRUPT = 4,          /* does not parse or has the wrong shape */
  MCP_CACHE_VERSION_MISMATCH = 5, /* another format version */
  MCP_CACHE_UNREADABLE = 6,       /* the file or directory cannot be read */
  MCP_CACHE_PRIVATE = 7           /* the tools were withheld ("private"): the era only */
} mcp_cache_outcome;

/*
 * mcp__cache_outcome_level() is the log level a miss deserves: MCP_LOG_WARN
 * for CORRUPT, VERSION_MISMATCH and UNREADABLE, MCP_LOG_DEBUG otherwise.
 * Threads: any.
 */
mcp_log_level mcp__cache_outcome_level(mcp_cache_outcome o);

/*
 * mcp__cache_dir() finds the cache directory: |xdg_cache_home| + "/mcpconn"
 * when it is an absolute path, else |home| + "/.cache/mcpconn".  Creates
 * nothing.
 * Ownership: on MCP_OK *out is new, freed with mcp__free().  Threads: any.
 * Returns: MCP_OK, MCP_EINVAL (neither is absolute), MCP_ENOMEM.
 */
mcp_status mcp__cache_dir(const char *xdg_cache_home, const char *home, char **out);

/*
 * mcp__cache_path() is the file that holds |server|'s tools in |dir|.
 * Ownership and returns as mcp__cache_dir() (MCP_EINVAL for an empty
 * server name).
 */
mcp_status mcp__cache_path(const char *dir, const char *server, char **out);

/*
 * mcp__cache_write() stores |tools_json| (a JSON array, written as given)
 * for |server| under |config_hash| (1 to 128 hex digits), dated |now| (unix
 * seconds).  Creates |dir| and missing parents with mode 0700.  On failure
 * no temporary file is left and an older cache file is untouched.
 * Ownership: inputs borrowed.  Threads: any; concurrent writers of one
 *   server leave one complete file (the last rename wins).
 * Returns: MCP_OK, MCP_EINVAL (tools not an array, bad hash or name),
 *   MCP_EIO (the message says which step failed), MCP_ENOMEM.
 */
mcp_status mcp__cache_write(const char *dir, const char *server, const char *config_hash,
                            const char *tools_json, int64_t now, mcp_error *err);

/*
 * mcp__cache_parse() judges the content of a cache file (pure; this is what
 * the fuzzer drives).  |ttl_s| <= 0 means MCP_CACHE_TTL_S.
 * Ownership: inputs borrowed.  On a hit *tools_json is the tools array as
 *   JSON text (re-serialised), freed with mcp__free(); else NULL.  *why
 *   (if |why| is not NULL) is NULL on a hit, else a one-line reason freed
 *   with mcp__free() (it may be NULL when memory ran out).
 * Threads: any, concurrently.
 * Returns: MCP_OK on a hit, MCP_ENOTFOUND on a miss (*outcome says why),
 *   MCP_EINVAL, MCP_ENOMEM.
 */
mcp_status mcp__cache_parse(const char *data, size_t len, const char *server,
                            const char *config_hash, int64_t now, int64_t ttl_s, char **tools_json,
                            mcp_cache_outcome *outcome, char **why);

/*
 * mcp__cache_read() reads |server|'s file in |dir| and judges it with
 * mcp__cache_parse().  The reason in *why starts with the file's path.
 * The manager logs *why at mcp__cache_outcome_level(*outcome).
 * Ownership, threads and returns as mcp__cache_parse().
 */
mcp_status mcp__cache_read(const char *dir, const char *server, const char *config_hash,
                           int64_t now, int64_t ttl_s, char **tools_json,
                           mcp_cache_outcome *outcome, char **why);

/* The era a cache file remembers. */
typedef enum mcp_cache_era {
  MCP_CACHE_ERA_UNKNOWN = 0, /* not written, or a value this version does not know */
  MCP_CACHE_ERA_LEGACY = 1,
  MCP_CACHE_ERA_MODERN = 2
} mcp_cache_era;

/* mcp__cache_write() with the server's era as well (UNKNOWN: none).
 * |tools_json| NULL withholds the tools: the file says "private":true and
 * keeps the era only. */
mcp_status mcp__cache_write_era(const char *dir, const char *server, const char *config_hash,
                                const char *tools_json, mcp_cache_era era, int64_t now,
                                mcp_error *err);

/* mcp__cache_read() that also sets *era (if not NULL) on a hit and on a
 * MCP_CACHE_PRIVATE miss; UNKNOWN otherwise. */
mcp_status mcp__cache_read_era(const char *dir, const char *server, const char *config_hash,
                               int64_t now, int64_t ttl_s, char **tools_json, mcp_cache_era *era,
                               mcp_cache_outcome *outcome, char **why);

#endif /* MCP_CACHE_H */
