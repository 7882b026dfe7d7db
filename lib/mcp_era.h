/* SPDX-License-Identifier: MIT */
/*
 * mcp_era.h: which MCP era a server speaks, and the pieces of the modern
 * (2026-07-28, stateless) wire that do not depend on a connection.
 *
 * The era is a property of the server (spec basic/versioning, "Backward
 * Compatibility"): a client in mode auto probes with `server/discover`
 * carrying the full modern `_meta`, and falls back to the legacy
 * `initialize` handshake by the rules in mcp__era_judge(): never keyed to
 * one error code; `-32022` naming a modern version we speak means modern
 * (retry once at it), naming only legacy versions means legacy; any other
 * JSON-RPC error, a result without a mutual modern version, silence and a
 * server that exits on the probe mean legacy; transport failures (refused,
 * TLS, 5xx, auth) are no evidence either way and fail the connect.
 *
 * Pure: no I/O, no threads, no shared state.  Layer: protocol (beside
 * mcp_request; the client drives it).
 */
#ifndef MCP_ERA_H
#define MCP_ERA_H

#include <stdbool.h>
#include <stddef.h>

#include "mcp_int.h"

/* The modern revision mcpconn speaks (newest first; NULL-terminated). */
extern const char *const mcp__modern_versions[];

/* A server's protocol mode as the host sets it (mcp_client_options). */
typedef enum mcp_era_mode {
  MCP_ERA_AUTO = 0, /* probe; fall back to legacy */
  MCP_ERA_MODERN,   /* 2026-07-28 only: no fallback */
  MCP_ERA_LEGACY    /* initialize only: no probe */
} mcp_era_mode;

/*
 * mcp__era_parse_mode() reads a protocol setting: "auto", "modern",
 * "legacy", or a revision ("2026-07-28" is modern; "2025-11-25",
 * "2025-06-18", "2025-03-26" are legacy, pinned to that revision).  NULL or
 * "" is auto.  On success *mode is set and *pinned points into a static
 * table (NULL unless a revision was given).  False for anything else.
 */
bool mcp__era_parse_mode(const char *s, mcp_era_mode *mode, const char **pinned);

/* The setting that mcp__era_parse_mode() read as |mode| and |pinned|: a
 * static string ("auto", "modern", "legacy" or the pinned revision). */
const char *mcp__era_mode_name(mcp_era_mode mode, const char *pinned);

/*
 * mcp__era_meta() returns the members every modern request carries in its
 * `_meta` (no braces): protocolVersion |version|, clientCapabilities
 * |caps_json| (a compact JSON object printed by json-c or the scanner) and
 * clientInfo {name, version}.  Allocated with mcp__malloc, *len bytes, or
 * NULL when out of memory.
 */
char *mcp__era_meta(const char *version, const char *caps_json, const char *client_name,
                    const char *client_version, size_t *len);

/* The verdict on one `server/discover` probe. */
typedef enum mcp_era_verdict {
  MCP_ERA_IS_MODERN,    /* use *version */
  MCP_ERA_RETRY,        /* -32022 naming a version we speak: probe again at *version */
  MCP_ERA_IS_LEGACY,    /* run initialize */
  MCP_ERA_INCOMPATIBLE, /* modern, but no revision in common: fail, *why says */
  MCP_ERA_NO_EVIDENCE   /* the probe failed for another reason: fail the connect */
} mcp_era_verdict;

/*
 * mcp__era_judge() classifies the outcome of a probe: |st| and, on MCP_OK,
 * the result's compact text |text| (|len| bytes), else |err| (a JSON-RPC
 * error has MCP_ERPC with rpc_code and data).  |stdio|: silence
 * (MCP_ETIMEDOUT) and the child exiting (MCP_ECLOSED) are legacy evidence;
 * over HTTP they are not.  *version points into mcp__modern_versions for
 * MODERN and RETRY.  *why (static text) says why for INCOMPATIBLE.
 */
mcp_era_verdict mcp__era_judge(mcp_status st, const char *text, size_t len, const mcp_error *err,
                               bool stdio, const char **version, const char **why);

/* What a modern result is (`resultType`). */
typedef enum mcp_result_kind {
  MCP_RESULT_COMPLETE,       /* "complete", or absent (older servers) */
  MCP_RESULT_INPUT_REQUIRED, /* multi-round-trip: the server asks for input */
  MCP_RESULT_TASK,           /* the tasks extension (only when negotiated) */
  MCP_RESULT_UNKNOWN         /* anything else: invalid */
} mcp_result_kind;

/* mcp__era_result_kind() reads `resultType` of a result's compact text. */
/*
 * mcp__era_complete_edge(): is `"resultType":"complete"` the last or the
 * first member of result |t| (|len| bytes of compact JSON)?  The common
 * case, found without a walk.  True with [*from, *from + *n) the bytes
 * that remove the member (its comma included, when it has one).
 */
bool mcp__era_complete_edge(const char *t, size_t len, size_t *from, size_t *n);
mcp_result_kind mcp__era_result_kind(const char *text, size_t len);

/*
 * mcp__era_header_value() returns |s| (|n| bytes, UTF-8) as the value of an
 * Mcp-Name or Mcp-Param-* header (streamable-http "Value Encoding"): as it
 * is when it is plain visible ASCII (0x20-0x7e) without leading or trailing
 * space and does not look like the sentinel, else "=?base64?B64?=" of its
 * bytes.  A new string (mcp__free), NULL when out of memory.
 */
char *mcp__era_header_value(const char *s, size_t n);

/*
 * mcp__era_request_headers() reads the values of the standard modern HTTP
 * headers from a request body |body| (|len| bytes, compact JSON as the
 * request builder prints it): *method for Mcp-Method, and *name for
 * Mcp-Name (params.name of tools/call and prompts/get, params.uri of
 * resources/read, params.taskId of tasks/get, tasks/update and
 * tasks/cancel; NULL for other methods), encoded by
 * mcp__era_header_value().  Both are new strings.  Returns MCP_OK,
 * MCP_EINVAL (no string "method", or a missing name the method needs),
 * MCP_ENOMEM.
 */
mcp_status mcp__era_request_headers(const char *body, size_t len, char **method, char **name);

#endif /* MCP_ERA_H */
