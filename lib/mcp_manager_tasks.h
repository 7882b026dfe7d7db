/* SPDX-License-Identifier: MIT */
/*
 * mcp_manager_tasks.h: the task ids a manager keeps in its cache directory
 * (the 2026-07-28 tasks extension has no tasks/list: a client that wants
 * to find its tasks again keeps their ids), and the manager's task calls
 * by server and id (mcp_manager_list_tasks() and friends in mcpconn.h).
 *
 * One file per server in the cache directory, named like the tool cache's
 * but "tasks-<sanitised name>-<8 hex of SHA-256(name)>.json", mode 0600:
 *
 *   {"version":1,"server":"<name>","tasks":[{"taskId":"...","tool":"...",
 *    "createdAt":<unix s>,"updatedAt":<unix s>,"status":"working",
 *    "statusMessage":"..."}, ...]}
 *
 * A record is made when a call through the manager follows a task (the
 * first status report), updated on each change, and kept with its final
 * status when the task ends, so a later run can still list and show it.
 * Ended tasks older than MCP__MTASKS_KEEP_S are dropped on the next write,
 * and a file keeps at most MCP__MTASKS_MAX records (the oldest go first).
 * Writes are read-modify-write under a mutex (threads of one manager) and
 * an flock() on "tasks-...lock" beside the file (other processes sharing
 * the directory), then atomic (mcp__fsafe_replace).  A file that does not
 * parse is treated as empty (and replaced by the next write); a record
 * that does not have the shape above is dropped.
 *
 * Layer: manager.
 */
#ifndef MCP_MANAGER_TASKS_H
#define MCP_MANAGER_TASKS_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcp_client.h"
#include "mcp_int.h"

#define MCP__MTASKS_VERSION 1
#define MCP__MTASKS_MAX 256
#define MCP__MTASKS_KEEP_S (7 * 24 * 3600)
#define MCP__MTASKS_FILE_MAX (4u * 1024u * 1024u)

typedef struct mcp__mtasks mcp__mtasks;

/* A store over |dir| (copied); |warn| hears of write failures (may be NULL). */
mcp__mtasks *mcp__mtasks_new(const char *dir,
                             void (*warn)(void *user, const char *server, const char *message),
                             void *user);
void mcp__mtasks_free(mcp__mtasks *st);

/*
 * mcp__mtasks_parse() judges a record file's text (pure; the fuzzer drives
 * it): on MCP_OK *records is a new JSON array of the valid records of
 * |server| (each with taskId, status and the numbers; tool and
 * statusMessage when present), else NULL and MCP_EPROTO (not a record
 * file of this version and server) or MCP_ENOMEM.
 */
mcp_status mcp__mtasks_parse(const char *data, size_t len, const char *server,
                             json_object **records);

/* Records (or updates) task |id| of |server|: |tool| may be NULL (kept). */
mcp_status mcp__mtasks_put(mcp__mtasks *st, const char *server, const char *id, const char *tool,
                           mcp_task_status status, const char *message, mcp_error *err);
/* |server|'s records, a new array (empty when there is no file). */
mcp_status mcp__mtasks_read(mcp__mtasks *st, const char *server, json_object **records,
                            mcp_error *err);

/*
 * The plain call's recorder: mcp__mtasks_wrap() returns the options a call
 * of |server|'s |tool| runs with: |opts| itself when there is no store,
 * else a copy in |local| whose task-status callback records the task (in
 * |rec|, which must live until the call returns) and then calls the one
 * |opts| had.
 */
typedef struct mcp__mtask_rec {
  mcp__mtasks *st;
  const char *server, *tool;
  mcp_task_status_fn fn;
  void *user;
} mcp__mtask_rec;
const mcp_call_options *mcp__mtasks_wrap(mcp__mtasks *st, const char *server, const char *tool,
                                         const mcp_call_options *opts, mcp__mtask_rec *rec,
                                         mcp_call_options *local);

/* ---- from mcp_manager.c ---- */

/* What runs on a server's connection (mcp_manager.c's conn_call_fn). */
typedef mcp_status (*mcp__mgr_conn_fn)(mcp_client *c, const void *arg, const mcp_call_options *opts,
                                       char **result, mcp_error *err);
/*
 * mcp__manager_on_server() runs |fn| on |server|'s connection as a tool
 * call does: it waits for the server (the timeout, the cancel token), and
 * when |idempotent| sends once more after a reconnect.
 * Returns: what |fn| returns; MCP_ENOTFOUND (no such server); the errors
 *   of waiting for it.
 */
mcp_status mcp__manager_on_server(mcp_manager *m, const char *server, mcp__mgr_conn_fn fn,
                                  const void *arg, bool idempotent, const mcp_call_options *opts,
                                  char **result, mcp_error *err);
/* The manager's task store, or NULL when it has no cache directory. */
mcp__mtasks *mcp__manager_task_store(mcp_manager *m);

#endif /* MCP_MANAGER_TASKS_H */
