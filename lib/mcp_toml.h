/* SPDX-License-Identifier: MIT */
/*
 * mcp_toml.h: a reader for the subset of TOML that Codex writes in its
 * config.toml (mcp_toml.c), into a json-c tree so that the config module
 * reads it like any other client's file.
 */
#ifndef MCP_TOML_H
#define MCP_TOML_H

#include <stddef.h>

#include <json-c/json.h>

/*
 * mcp__toml_parse() reads |len| bytes of TOML: comments, [table] and
 * [a."b.c"] headers, key = value with bare, quoted and dotted keys, basic
 * and literal strings (one line; escapes \b \t \n \f \r \" \\ \uXXXX
 * \UXXXXXXXX), decimal integers (with _), booleans, arrays (over several
 * lines, trailing comma and comments allowed) and inline tables.  Anything
 * else (floats, dates, multi-line strings, arrays of tables, a key defined
 * twice, a NUL byte, nesting deeper than 64) is refused.
 * Ownership: on success a new object (json_object_put() it); NULL on
 *   failure, with |why| (|whylen| bytes) saying what and on which line, or
 *   "out of memory".
 * Threads: any, concurrently.  Pure: no I/O, no globals.
 */
json_object *mcp__toml_parse(const char *text, size_t len, char *why, size_t whylen);

#endif /* MCP_TOML_H */
