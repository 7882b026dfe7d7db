/* SPDX-License-Identifier: MIT */
/*
 * mcp_jscan.h: a JSON scanner that builds no tree.  The hot path of a call
 * uses it to route a response by id and hand the caller the result's text,
 * and to check and copy tool-call arguments, without json-c allocating,
 * filling and freeing a tree each way; mcp_tool_result_text() uses it to
 * read the text out of a CallToolResult (mcp__jscan_tool_text below).
 *
 * It accepts a subset of JSON (RFC 8259) and writes the value in the exact
 * compact form json-c would print after parsing it (mcp__json_dup_string),
 * so a caller cannot tell which path a message took.  Whatever it is not
 * sure of (escapes json-c would rewrite, integers past 18 digits, "-0",
 * long exponents, invalid UTF-8, objects with more than MCP_JSCAN_MAX_KEYS
 * members or a repeated key, nesting past MCP_JSCAN_MAX_DEPTH, anything
 * invalid) it refuses, and the caller falls back to the json-c path, which
 * then produces the same result or the usual error.  Pure: no I/O, no
 * threads, no shared state.
 */
#ifndef MCP_JSCAN_H
#define MCP_JSCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MCP_JSCAN_MAX_DEPTH 64
#define MCP_JSCAN_MAX_KEYS 32

/*
 * mcp__jscan_value() checks that [data, data+len) holds one JSON value
 * (white space around it allowed) of the accepted subset and writes its
 * compact form to |out|, which must have room for |len| bytes (the compact
 * form is never longer); *out_len receives its length (not terminated).
 * Returns false when refused (out's content is then unspecified).  When
 * |need_object| the value must be an object.
 */
bool mcp__jscan_value(const char *data, size_t len, bool need_object, char *out, size_t *out_len);

/*
 * mcp__jscan_response() recognises a JSON-RPC success response whose members
 * are exactly "jsonrpc":"2.0", an integer "id" and "result" (any order).
 * On true, *id is the id and *result a new NUL-terminated string (free with
 * mcp__free) holding the result's compact text, *result_len its length.
 * False (nothing allocated) for anything else, including out of memory: the
 * caller then takes the general path.
 */
bool mcp__jscan_response(const char *data, size_t len, int64_t *id, char **result,
                         size_t *result_len);

/*
 * mcp__jscan_member() looks up top-level member |key| (plain ASCII, no
 * characters that need escaping) of |obj|, compact text that this scanner or
 * json-c printed.  Returns true with the value's span when present.
 */
bool mcp__jscan_member(const char *obj, size_t len, const char *key, const char **val,
                       size_t *val_len);

/*
 * mcp__jscan_put_string() writes |s| (|n| bytes) as a JSON string the way
 * json-c prints it (quotes included) to |out|, which needs room for
 * 6 * n + 2 bytes.  Returns the bytes written.
 */
size_t mcp__jscan_put_string(char *out, const char *s, size_t n);

/*
 * mcp__jscan_tool_text() is the fast path of mcp_tool_result_text(): it
 * checks that [data, data+len) is one JSON object of the accepted subset
 * with a "content" array, and writes the "text" strings of its items whose
 * "type" is "text", decoded (escapes resolved, \u escapes and surrogate
 * pairs as UTF-8) and joined with "\n", to |out|, NUL-terminated; *out_len
 * receives the length without the NUL.  |out| needs room for len + 1 bytes
 * (the text is never longer than the JSON it came from; keys and "type" are
 * decoded just after it to be compared).  Values it does not need are only
 * validated, as mcp__jscan_valid() does, nested at most MCP_JSCAN_MAX_DEPTH.
 * Items that are not objects, or whose "type" is not the string "text", are
 * skipped.  Returns false when refused: a key holding a NUL (json-c cuts
 * keys there), an unpaired surrogate escape in a key, "text" or "type", a
 * repeated "content", "type" or "text", deeper nesting, and every error
 * (invalid JSON, no "content" array, a text item without a string "text");
 * the caller then asks json-c, which gives the same text or the error.
 */
bool mcp__jscan_tool_text(const char *data, size_t len, char *out, size_t *out_len);

/*
 * mcp__jscan_valid() is true when [data, data+len) is exactly one JSON value
 * (RFC 8259: white space around it allowed) in valid UTF-8, nested at most
 * MCP_JSCAN_VALID_MAX_DEPTH deep.  It refuses nothing valid below that
 * depth (long numbers, any escape, repeated keys are fine) and accepts none
 * of json-c's extensions that JSON_TOKENER_STRICT still lets through
 * (single-quoted keys, NaN and Infinity, "1.", raw control characters in
 * strings, invalid UTF-8).  Builds nothing, writes nothing.
 */
#define MCP_JSCAN_VALID_MAX_DEPTH 256
bool mcp__jscan_valid(const char *data, size_t len);

/* mcp__jscan_utf8_valid() is true when [s, s+n) is valid UTF-8 (no
 * overlong forms, surrogates or code points past U+10FFFF). */
bool mcp__jscan_utf8_valid(const char *s, size_t n);

#endif /* MCP_JSCAN_H */
