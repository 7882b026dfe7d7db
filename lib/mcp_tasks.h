/* SPDX-License-Identifier: MIT */
/*
 * mcp_tasks.h: long-running tool calls as tasks, both eras (the public
 * mcp_task API of mcpconn.h, and the hooks through which a plain
 * mcp_client_call_tool() follows a task to its result).
 *
 * A task is driven by one thread: it polls tasks/get (the request is
 * never given the host's cancel token, so a fired token reaches the
 * server as tasks/cancel, not notifications/cancelled), sleeps the
 * server's poll interval on the client's task condition, woken by a state
 * the server pushes, a close or the token (mcp__client_task_sleep), or
 * the deadline, answers a modern task's inputRequests by the client's
 * handlers (tasks/update, each key once), and reads a legacy task's
 * result with tasks/result.  An async call's task is driven by a thread
 * of its own (detached; it holds the client like a host thread in a call,
 * so mcp_client_free() waits for it and a close ends it).
 *
 * Layer: client.
 */
#ifndef MCP_TASKS_H
#define MCP_TASKS_H

#include <stdbool.h>
#include <stddef.h>

#include "mcp_client.h"
#include "mcp_int.h"

/* A modern |method| result of "task" kind is one to follow: a tools/call
 * on a connection that declared the tasks extension. */
bool mcp__tasks_follows(const mcp_client *c, const char *method);
/* Follows the task the result |text| (taken, |len| bytes) created to its
 * end: the plain call's outcome.  |tool| reads isError of the result. */
mcp_status mcp__tasks_follow(mcp_client *c, char *text, size_t len, const mcp_call_options *o,
                             bool tool, char **result_json, mcp_error *err);
/* The same on a thread of its own, |fn| called once at the end.  MCP_OK:
 * |text| taken; otherwise it is still the caller's and |fn| never runs. */
mcp_status mcp__tasks_follow_async(mcp_client *c, char *text, size_t len, const mcp_call_options *o,
                                   bool tool, mcp_result_fn fn, void *user, mcp_error *err);
/* A legacy (2025-11-25) call of tool |name| with |o| is made as a task
 * (mcp_task_mode; may read tools/list).  _maybe: it may be (the server
 * allows tasks on tools/call and the mode is not NEVER). */
bool mcp__tasks_legacy_wanted(mcp_client *c, const char *name, const mcp_call_options *o);
bool mcp__tasks_legacy_maybe(mcp_client *c, const mcp_call_options *o);
/* A legacy call as a task, to its end (sync), or decided and made on a
 * thread of its own (async; MCP_OK: |fn| runs once). */
mcp_status mcp__tasks_call_legacy(mcp_client *c, const char *name, const char *args_json,
                                  const mcp_call_options *o, char **result_json, mcp_error *err);
mcp_status mcp__tasks_call_legacy_async(mcp_client *c, const char *name, const char *args_json,
                                        const mcp_call_options *o, mcp_result_fn fn, void *user,
                                        mcp_error *err);

/* Whether a 2025-11-25 server info (initialize result JSON) offers
 * task-augmented tools/call (capabilities.tasks.requests.tools.call). */
bool mcp__tasks_info_allows(const char *info);

#endif /* MCP_TASKS_H */
