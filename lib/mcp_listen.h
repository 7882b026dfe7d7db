/* SPDX-License-Identifier: MIT */
/*
 * mcp_listen.h: the pure parts of subscriptions/listen (MCP 2026-07-28),
 * the one way a modern server sends change notifications: which
 * list_changed kinds a server/discover result advertises, the listen
 * request's params, the subscription id a notification carries in its
 * _meta, and what an acknowledgement honours.  No I/O, no threads, no
 * globals (fuzzed by fuzz/fuzz_listen.c).  The listen itself (when it is
 * opened, re-opened and closed) lives in mcp_client.c.
 */
#ifndef MCP_LISTEN_H
#define MCP_LISTEN_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcp_int.h"

/* The kinds a listen asks for (SubscriptionFilter's booleans). */
#define MCP_LISTEN_TOOLS 0x1u     /* toolsListChanged */
#define MCP_LISTEN_PROMPTS 0x2u   /* promptsListChanged */
#define MCP_LISTEN_RESOURCES 0x4u /* resourcesListChanged */
#define MCP_LISTEN_ALL 0x7u

/* The _meta key of a notification on a listen stream. */
#define MCP_LISTEN_SUB_KEY "io.modelcontextprotocol/subscriptionId"

/*
 * The kinds whose capabilities.<tools|prompts|resources>.listChanged is
 * true in the server/discover result |result| (|len| bytes, JSON text); 0
 * for anything else (no capabilities, not JSON, out of memory).
 */
unsigned mcp__listen_advertised(const char *result, size_t len);

/*
 * The params of a subscriptions/listen asking for |kinds|, as compact JSON
 * text: {"notifications":{"toolsListChanged":true,...}} (caller frees with
 * mcp__free); NULL when out of memory.
 */
char *mcp__listen_params(unsigned kinds);

/*
 * The same with "resourceSubscriptions": the |n| URIs |uris| (each a
 * NUL-terminated string, JSON-escaped here), left out when |n| is 0.
 */
char *mcp__listen_params_subs(unsigned kinds, const char *const *uris, size_t n);

/*
 * The same with "taskIds" too (the tasks extension, SEP-2663: the server
 * pushes notifications/tasks for them): the |ntasks| ids |task_ids|, left
 * out when |ntasks| is 0.
 */
char *mcp__listen_params_tasks(unsigned kinds, const char *const *uris, size_t n,
                               const char *const *task_ids, size_t ntasks);

/*
 * True when the server/discover (or initialize) result |result| (|len|
 * bytes) advertises capabilities.resources.subscribe: true.
 */
bool mcp__listen_can_subscribe(const char *result, size_t len);

/*
 * The subscription id notification |params| (may be NULL) carries in
 * _meta: 1 with *id when it is an integer (or a string holding only one),
 * 0 when there is none, -1 when there is one that cannot be a listen of
 * ours (our request ids are integers).
 */
int mcp__listen_sub_id(json_object *params, int64_t *id);

/*
 * The kinds notifications/subscriptions/acknowledged |params| (may be
 * NULL) says are honoured: the members of its "notifications" that are
 * true.
 */
unsigned mcp__listen_honoured(json_object *params);

/* |kinds| named for a log line ("tools, prompts"), into |buf|; "none" for
 * none.  Returns |buf|. */
const char *mcp__listen_kind_names(unsigned kinds, char *buf, size_t n);

#endif /* MCP_LISTEN_H */
