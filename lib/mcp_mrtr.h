/* SPDX-License-Identifier: MIT */
/*
 * mcp_mrtr.h: multi-round-trip requests (MCP 2026-07-28, SEP-2322), the
 * pure part.  On a modern connection a server never sends requests of its
 * own; a tools/call, prompts/get or resources/read may instead end with a
 * result of resultType "input_required" that carries `inputRequests` (the
 * elicitation, sampling and roots requests the legacy era sent as
 * server->client requests, each under a server-chosen key) and/or an opaque
 * `requestState`.  The client answers every input with the host's
 * handlers and retries the original request, on a new id, with the
 * answers as `inputResponses` and the state echoed unchanged.
 *
 * Here: reading such a result (mcp__mrtr_parse) and building the retry
 * from the original request (mcp__mrtr_retry).  Both use json-c: the rounds
 * are rare and small, and the state must come back value-exact.  Who
 * answers the inputs, on which thread, and how many rounds are allowed is
 * the client's business (mcp_client.c).
 *
 * Pure: no I/O, no threads, no shared state; fuzzed (fuzz/fuzz_mrtr.c).
 * Layer: protocol.
 */
#ifndef MCP_MRTR_H
#define MCP_MRTR_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "mcp_int.h"
#include "mcp_request.h"

/* At most this many inputs in one round (a server asking for more is
 * refused as a protocol error rather than run against the host). */
#define MCP_MRTR_MAX_INPUTS 64

/* One input_required result, read.  Zero-initialise; mcp__mrtr_clear(). */
typedef struct mcp_mrtr_round {
  json_object *result;   /* the result's tree (own) */
  json_object *requests; /* its inputRequests object, or NULL (borrowed) */
  json_object *state;    /* its requestState string, or NULL (borrowed) */
  size_t ninputs;        /* members of |requests| */
} mcp_mrtr_round;

void mcp__mrtr_clear(mcp_mrtr_round *rd);

/* True for the methods whose result may be input_required: tools/call,
 * prompts/get and resources/read (the spec allows it on no other). */
bool mcp__mrtr_method(const char *method);

/*
 * mcp__mrtr_parse() reads the input_required result |text| (|len| bytes)
 * of a |method| request.  Returns MCP_OK with |rd| filled; MCP_EPROTO, the
 * error naming |method| and what is wrong, when it is not the shape the
 * spec gives: not an object; `inputRequests` not an object, more than
 * MCP_MRTR_MAX_INPUTS of them, or one that is not an object with a string
 * `method` and (optional) object `params`; `requestState` not a string; or
 * neither of the two present.  MCP_ENOMEM.  On error |rd| is left empty.
 */
mcp_status mcp__mrtr_parse(const char *method, const char *text, size_t len, mcp_mrtr_round *rd,
                           mcp_error *err);

/*
 * mcp__mrtr_input() gives input |i| (< rd->ninputs) of a parsed round: its
 * key, method and params (NULL when it has none), all borrowed from |rd|.
 */
void mcp__mrtr_input(const mcp_mrtr_round *rd, size_t i, const char **key, const char **method,
                     json_object **params);

/*
 * mcp__mrtr_retry() builds the retry of |orig| for round |rd|: the same
 * method and kind, params = |orig|'s params without any `inputResponses`
 * or `requestState` member they held, plus `inputResponses` = |responses|
 * (borrowed; omitted when NULL) and `requestState` = rd's state, value
 * for value (omitted when the round had none).  |out| is a new request
 * (mcp__req_clear() it).  MCP_OK, MCP_ENOMEM, or MCP_EPROTO when |orig|'s
 * params are not an object (never for the library's own builders).
 */
mcp_status mcp__mrtr_retry(const mcp_req *orig, const mcp_mrtr_round *rd, json_object *responses,
                           mcp_req *out, mcp_error *err);

#endif /* MCP_MRTR_H */
