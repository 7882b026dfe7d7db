/* SPDX-License-Identifier: MIT */
/*
 * mcp_client.h: internal view of the MCP client (lifecycle, requests,
 * server->client requests, notifications).  The option structs are defined
 * here so the manager can build and inspect them; hosts only see the opaque
 * handles in mcpconn.h.
 */
#ifndef MCP_CLIENT_H
#define MCP_CLIENT_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "mcp_int.h"
#include "mcp_settings.h"
#include "mcp_workers.h"

/* Protocol revisions, newest first; the first is offered in initialize. */
extern const char *const mcp__protocol_versions[];

typedef struct mcp_handler_entry {
  char *method;
  mcp_request_fn fn;
  void *user;
} mcp_handler_entry;

typedef struct mcp_capability_entry {
  char *name;
  char *json;
} mcp_capability_entry;

struct mcp_client_options {
  /* The connection: stdio argv or HTTP url, headers, TLS, env, timeout,
   * max message, protocol (mcp_settings.h).  timeout_ms and max_message
   * always hold a value here (mcp_client_options_new() sets defaults). */
  mcp_server_settings s;
  int era_hint; /* internal: the era a cache remembers (mcp_cache_era); 0: none */
  char *client_name;
  char *client_version;
  mcp_logger log;
  mcp_notification_fn notify_fn;
  void *notify_user;
  mcp_handler_entry *handlers;
  size_t nhandlers;
  mcp_capability_entry *caps;
  size_t ncaps;
  mcp_oauth_options *oauth; /* owned copy; NULL: no OAuth */
  /* Limits of one *_list call as a whole (set_list_limits); never 0. */
  size_t list_max_pages, list_max_items, list_max_bytes;
  size_t max_queued; /* inbound messages waiting for the host; 0: default */
};

struct mcp_call_options {
  int64_t timeout_ms; /* < 0: the client's default */
  mcp_cancel *cancel; /* own reference */
  mcp_progress_fn progress;
  void *progress_user;
  bool reset_on_progress;
  int64_t max_total_ms;
  int task_mode;                  /* mcp_task_mode, or MCP__TASK_START (mcp_tasks.c) */
  mcp_task_status_fn task_status; /* status changes of a task the call follows */
  void *task_status_user;
};

/* Hooks for the manager (all optional; run on the client's lane). */
typedef struct mcp_client_hooks {
  /* The connection closed; |message| says why. */
  void (*on_close)(void *user, mcp_status status, const char *message);
  void *user;
  /* Firing it abandons a connect in progress (initialize ends with
   * MCP_ECANCELLED).  May be NULL; borrowed for the connect's duration. */
  mcp_cancel *connect_cancel;
} mcp_client_hooks;

/*
 * mcp__client_connect_ex() is mcp_client_connect() with a shared worker
 * pool (|workers| may be NULL for a private one; the client takes a
 * reference) and manager hooks (may be NULL; copied).
 */
mcp_status mcp__client_connect_ex(const mcp_client_options *o, mcp_workers *workers,
                                  const mcp_client_hooks *hooks, mcp_client **out, mcp_error *err);

/*
 * mcp__client_abort() ends every request in flight on |c| with MCP_ECLOSED
 * and |why|, and every later one, without closing the transport (the
 * manager's shutdown: host threads blocked in calls return at once, the
 * close follows on a closer thread).  Threads: any, not under a lock the
 * client's callbacks take.
 */
void mcp__client_abort(mcp_client *c, const char *why);

/*
 * mcp__client_list() is the paged list of mcp_client_list_tools() for any
 * list method: |key| the result's array (e.g. "skills/list", "skills").
 */
mcp_status mcp__client_list(mcp_client *c, const char *method, const char *key,
                            const mcp_call_options *opts, char **out, mcp_error *err);
/* The host's logger of |c| (fn NULL: none); valid while |c| is. */
const mcp_logger *mcp__client_logger(const mcp_client *c);

/* For mcp_tasks.c: a host thread inside the client (false: it is being
 * freed); the era; a declared extension; the call's timeout; a tools/call
 * result's outcome (MCP_ETOOLERROR for isError); and the answers of the
 * host's handlers to |requests_json| (an inputRequests object), on the
 * client's lane, as an input_required round's (*out: caller puts). */
/* A call_options task_mode of mcp_tasks.c's own: a task result is the
 * call's answer (resultType "task" kept), not followed. */
#define MCP__TASK_START 100
bool mcp__client_enter(mcp_client *c);
void mcp__client_leave(mcp_client *c);
bool mcp__client_modern(const mcp_client *c);
/* 2025-11-25 tasks: whether the server's capabilities offer task
 * tools/call (read from its server info once per connection); the tools'
 * taskSupport lines cached for mcp_tasks.c (a copy, or NULL), and setting
 * them (|lines| owned by the client from then; NULL drops them). */
bool mcp__client_legacy_tasks(mcp_client *c);
char *mcp__client_task_tools(mcp_client *c);
void mcp__client_set_task_tools(mcp_client *c, char *lines);
bool mcp__client_has_extension(const mcp_client *c, const char *id);
int64_t mcp__client_timeout(const mcp_client *c, const mcp_call_options *o);
mcp_status mcp__client_tool_outcome(const char *text, size_t len, mcp_error *err);
/* Queues |run|(|arg|) on the client's lane, where host callbacks run
 * (|drop| instead when the lane is gone); MCP_OK or MCP_ENOMEM/ECLOSED. */
int mcp__client_post(mcp_client *c, mcp_work_fn run, mcp_work_fn drop, void *arg);
mcp_status mcp__client_answer_inputs(mcp_client *c, const char *requests_json, json_object **out,
                                     mcp_error *err);
/* Modern tasks: whether the task |id| is being waited on (its id in the
 * listen's "taskIds"; a no-op unless the tasks extension is declared on a
 * modern connection). */
void mcp__client_task_watch(mcp_client *c, const char *id, bool on);
/*
 * A task's wait between polls: sleeps until |until| (mcp__now_ms() time),
 * or until the server pushes a state for the watched task |id| (NULL: a
 * legacy task, nothing is pushed), the connection closes (or the client
 * is being freed), or |cancel| (may be NULL) fires, whichever comes
 * first; then returns that pushed state (a Task object, the caller's) or
 * NULL, and the caller looks for itself at why it woke.  Returns at once
 * when one of them is already so.  No polling: the push
 * (notifications/tasks), every close path and a listener on |cancel| each
 * broadcast the client's task condition (CLOCK_MONOTONIC) under its lock.
 * Threads: any host thread inside the client (mcp__client_enter), any
 * number at once; not with a lock of the client's or |cancel|'s held
 * (it takes both; a token's lock comes before the client's).
 */
char *mcp__client_task_sleep(mcp_client *c, const char *id, mcp_cancel *cancel, int64_t until);

/* For the manager's disk cache: whether the last complete |method| list
 * (tools/list, ...) was marked cacheScope "public" on every page (false in
 * the legacy era, before one, and for a private or unmarked page); and the
 * authorization context requests go out in ("" for none: stdio, an HTTP
 * server without Authorization; else a digest of the bearer), |n| >= 33. */
bool mcp__client_list_public(mcp_client *c, const char *method);
void mcp__client_auth_context(mcp_client *c, char *out, size_t n);

/* Deep copy of options; NULL when out of memory. */
mcp_client_options *mcp__client_options_dup(const mcp_client_options *o);

#endif /* MCP_CLIENT_H */
