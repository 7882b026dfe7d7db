/* SPDX-License-Identifier: MIT */
/*
 * mcp_jsonrpc.h: JSON-RPC 2.0 message shapes.  Parses text into json-c
 * trees, classifies them (request, notification, response, error) and
 * builds outgoing messages as compact text.  Pure: no I/O, no threads, no
 * knowledge of transports or MCP methods.
 */
#ifndef MCP_JSONRPC_H
#define MCP_JSONRPC_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcp_int.h"

/* Deepest JSON nesting accepted from a peer. */
#define MCP_JSON_MAX_DEPTH 128

typedef enum mcp_msg_kind {
  MCP_MSG_INVALID = 0,
  MCP_MSG_REQUEST,      /* method + id */
  MCP_MSG_NOTIFICATION, /* method, no id */
  MCP_MSG_RESPONSE,     /* id + result */
  MCP_MSG_ERROR         /* id (may be null) + error */
} mcp_msg_kind;

/* A classified message.  Every pointer borrows from the tree it came from. */
typedef struct mcp_msg {
  mcp_msg_kind kind;
  const char *method;        /* REQUEST, NOTIFICATION */
  json_object *id;           /* REQUEST, RESPONSE, ERROR (NULL for id null) */
  json_object *params;       /* REQUEST, NOTIFICATION; NULL when absent */
  json_object *result;       /* RESPONSE */
  int64_t error_code;        /* ERROR */
  const char *error_message; /* ERROR; "" when absent */
  json_object *error_data;   /* ERROR; NULL when absent */
  const char *invalid;       /* INVALID: why */
} mcp_msg;

/*
 * mcp__jsonrpc_parse() parses exactly one JSON value from |data| (|len|
 * bytes; trailing white space allowed, anything else is an error).
 * Ownership: on success returns a new tree the caller puts; on failure
 *   returns NULL and sets *why (static string) when |why| is not NULL.
 *   *why is MCP__JSONRPC_OOM (compare the pointer) when an allocation failed:
 *   the text may well have been valid.
 * Threads: any; no shared state.
 */
json_object *mcp__jsonrpc_parse(const char *data, size_t len, const char **why);
extern const char MCP__JSONRPC_OOM[];

/*
 * mcp__json_add() adds |val| to object |o| under |key|, like
 * json_object_object_add() but failing (-1) when |val| is NULL (a
 * json_object_new_*() that ran out of memory), instead of adding a JSON
 * null.  Ownership: |val| is stolen, and put when the add fails.
 * Returns 0 or -1.  Threads: as json-c (one thread per tree).
 */
int mcp__json_add(json_object *o, const char *key, json_object *val);

/*
 * mcp__json_parse_document() parses all of |data| as one JSON value for a
 * file we read (config, cache): json-c's lenient mode (comments, trailing
 * commas), nesting up to |depth|, only white space after the value.  On
 * failure returns NULL with a reason in |why|; a syntax error reads
 * "<invalid_prefix><json-c's description> at byte N".
 * Ownership: a new tree the caller puts.  Threads: any.
 */
json_object *mcp__json_parse_document(const char *data, size_t len, int depth,
                                      const char *invalid_prefix, char *why, size_t whylen);

/*
 * mcp__jsonrpc_classify() fills |m| from |o| and returns its kind.
 * A message that is not a JSON-RPC 2.0 object is MCP_MSG_INVALID with
 * m->invalid saying why.  Arrays are not classified here (the caller
 * dispatches each element).  Threads: any.
 */
mcp_msg_kind mcp__jsonrpc_classify(json_object *o, mcp_msg *m);

/*
 * mcp__jsonrpc_response_id() is true, with *id set, when |o| says it is a
 * JSON-RPC 2.0 reply ("jsonrpc":"2.0", no "method") and its "id" is a
 * number with an integral value (2 or 2.0), whatever else is wrong with it:
 * the client then fails that request instead of leaving it to time out.
 * Threads: any.
 */
bool mcp__jsonrpc_response_id(json_object *o, int64_t *id);

/*
 * mcp__jsonrpc_peek_response_id() is the same for text that did not parse
 * (a NUL, nesting past MCP_JSON_MAX_DEPTH, invalid UTF-8, a cut message):
 * true with *id when [data, data+len) is an object, possibly cut short,
 * whose members include "jsonrpc":"2.0", "result" or "error", exactly one
 * "id" holding an integer (optionally with a zero fraction) and no
 * "method".  It reads only the top level (nested values are skipped by
 * counting brackets, strings respected), so it has no depth limit and
 * builds nothing.  Pure; threads: any.
 */
bool mcp__jsonrpc_peek_response_id(const char *data, size_t len, int64_t *id);

/* True with *out set when |id| is a JSON integer (our ids always are). */
int mcp__jsonrpc_id_int(json_object *id, int64_t *out);

/*
 * Builders.  Each returns newly allocated compact JSON text (free with
 * mcp__free) and its length in *len, or NULL when out of memory.
 * |params|, |result|, |data| and |id| are borrowed (may be NULL where it
 * makes sense: params absent, id null).
 */
char *mcp__jsonrpc_request(int64_t id, const char *method, json_object *params, size_t *len);
char *mcp__jsonrpc_notification(const char *method, json_object *params, size_t *len);
char *mcp__jsonrpc_result(json_object *id, json_object *result, size_t *len);
char *mcp__jsonrpc_error(json_object *id, int64_t code, const char *message, json_object *data,
                         size_t *len);

/* Compact text of |o| in a new string (mcp__free), or NULL. */
char *mcp__json_dup_string(json_object *o, size_t *len);

/* Standard JSON-RPC error codes. */
#define MCP_RPC_PARSE_ERROR (-32700)
#define MCP_RPC_INVALID_REQUEST (-32600)
#define MCP_RPC_METHOD_NOT_FOUND (-32601)
/* MCP 2026-07-28: an HTTP header disagrees with the body (or is missing). */
#define MCP_RPC_HEADER_MISMATCH (-32020)
/* MCP up to 2025-11-25: resources/read of an unknown URI. */
#define MCP_RPC_RESOURCE_NOT_FOUND (-32002)
#define MCP_RPC_INVALID_PARAMS (-32602)
#define MCP_RPC_INTERNAL_ERROR (-32603)

#endif /* MCP_JSONRPC_H */
