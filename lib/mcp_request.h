/* SPDX-License-Identifier: MIT */
/*
 * mcp_request.h: the one builder of every request the client sends.  Each
 * method has one constructor, shared by the sync and the async call: it
 * checks the caller's arguments and turns them into the request's params as
 * compact JSON text, once.  mcp__req_text() then wraps the params in the
 * JSON-RPC envelope for a given id, adding what every request carries in
 * `_meta`: the modern era's protocolVersion, clientCapabilities and
 * clientInfo (mcp_era.h), and `progressToken` when the caller asked for
 * progress.
 *
 * The params are text, not a tree: the host's argument text is checked and
 * compacted by the scanner (mcp_jscan.h) with no tree built; only text the
 * scanner refuses goes through json-c, which prints the same bytes or gives
 * the usual error.  So a request is byte for byte what json-c would print,
 * whichever path built it.
 *
 * Pure: no I/O, no threads, no shared state.  Layer: protocol (below the
 * client; knows nothing of transports or the pending table).
 */
#ifndef MCP_REQUEST_H
#define MCP_REQUEST_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcp_int.h"

/* A request before it has an id.  Zero-initialise, fill with one of the
 * constructors below, release with mcp__req_clear(). */
typedef struct mcp_req {
  const char *method; /* static or borrowed from the caller for the call */
  bool known;         /* method is "tools/call": printed without the
                         escaping scan (the hot path) */
  char *params;       /* compact JSON object text (own), or NULL for none */
  size_t params_len;
  bool tool_call; /* the result is a CallToolResult (isError is read) */
  bool no_meta;   /* |params| was built here from fixed keys, none of them
                     "_meta": mcp__req_text() need not look for one */
} mcp_req;

void mcp__req_clear(mcp_req *r);

/*
 * Constructors.  Each returns MCP_OK with |r| filled, or MCP_EINVAL (text
 * that is not valid JSON, or not an object where one is needed, naming
 * which argument) or MCP_ENOMEM with |err| filled and |r| left empty.
 * Borrowed strings must outlive the request (the call).
 */
/* Any method; |params_json| optional JSON object text. */
mcp_status mcp__req_generic(mcp_req *r, const char *method, const char *params_json,
                            mcp_error *err);
/* tools/call: {"name":N,"arguments":A}; |args_json| optional (default {}). */
mcp_status mcp__req_tool_call(mcp_req *r, const char *name, const char *args_json, mcp_error *err);
/* prompts/get: {"name":N} plus "arguments" when |args_json| is given. */
mcp_status mcp__req_get_prompt(mcp_req *r, const char *name, const char *args_json, mcp_error *err);
/* resources/read: {"uri":U}. */
mcp_status mcp__req_read_resource(mcp_req *r, const char *uri, mcp_error *err);
/* A page of a list method: {"cursor":C}, or no params when |cursor| is NULL. */
mcp_status mcp__req_list_page(mcp_req *r, const char *method, const char *cursor, mcp_error *err);
/* A request whose params the library builds as a tree (initialize):
 * |params| is stolen (put on every path; NULL for none). */
mcp_status mcp__req_tree(mcp_req *r, const char *method, json_object *params, mcp_error *err);

/*
 * mcp__req_text() returns the request's wire text for id |id| (allocated
 * with mcp__malloc, NUL-terminated, *len bytes), or NULL when out of
 * memory.  What every request carries goes into the params' `_meta`, built
 * here and nowhere else: |meta| (|meta_len| bytes of members, no braces,
 * e.g. the modern era's protocolVersion, clientCapabilities and clientInfo
 * from mcp__era_meta(); NULL for none), then `progressToken` = |id| when
 * |progress|.  Params that already hold a `_meta` keep its members (ours
 * are added to it, replacing same-named ones, or replace it when it is not
 * an object).
 */
char *mcp__req_text(const mcp_req *r, int64_t id, bool progress, const char *meta, size_t meta_len,
                    size_t *len);

#endif /* MCP_REQUEST_H */
