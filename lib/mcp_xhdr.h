/* SPDX-License-Identifier: MIT */
/*
 * mcp_xhdr.h: `x-mcp-header` (MCP 2026-07-28, SEP-2243), the pure part.  A
 * tool's inputSchema may annotate a property with "x-mcp-header": NAME;
 * over Streamable HTTP the client then mirrors that argument of each
 * tools/call into a header `Mcp-Param-NAME`, so gateways can route on it
 * without reading the body.  A tool whose annotations break the spec's
 * rules must be left out of the tool list.
 *
 * Here: reading and checking a tool's annotations (mcp__xhdr_read) and the
 * header values for one call's arguments (mcp__xhdr_values).  json-c
 * trees: the tool list is parsed as trees already, and a call's arguments
 * are parsed only for a tool that has annotations.  Which tools have them,
 * and when headers go out, is the HTTP transport's business
 * (mcp_transport_http.c); the client filters the list (mcp_client.c).
 *
 * Pure: no I/O, no threads, no shared state; fuzzed (fuzz/fuzz_xhdr.c).
 * Layer: protocol.
 */
#ifndef MCP_XHDR_H
#define MCP_XHDR_H

#include <json-c/json.h>
#include <stddef.h>

#include "mcp_int.h"

/* At most this many annotated parameters per tool (more: invalid). */
#define MCP_XHDR_MAX 16

/* One annotated parameter: the header's name as the schema spells it, and
 * the property names leading to it from the arguments object. */
typedef struct mcp_xhdr_param {
  char *name;
  char **path;
  size_t depth;
} mcp_xhdr_param;

/* A tool's annotations. */
typedef struct mcp_xhdr_tool {
  mcp_xhdr_param p[MCP_XHDR_MAX];
  size_t n;
} mcp_xhdr_tool;

/*
 * mcp__xhdr_read() reads the annotations of a tool's |schema| (its
 * inputSchema; borrowed).  MCP_OK with *out a new set (mcp__xhdr_free) or
 * NULL when the tool has none; MCP_EINVAL when they break a rule, with
 * |why| (|cap| bytes) saying which: a name that is empty, not an RFC 9110
 * token, or case-insensitively a duplicate; an annotation on a property
 * whose type is not "string", "integer" or "boolean", or one not reached
 * from the root by `properties` alone (under items, a composition, a
 * condition or a $ref); more than MCP_XHDR_MAX.  MCP_ENOMEM.
 */
mcp_status mcp__xhdr_read(json_object *schema, mcp_xhdr_tool **out, char *why, size_t cap);
void mcp__xhdr_free(mcp_xhdr_tool *t);

/*
 * mcp__xhdr_values() gives the headers of one call with |args| (the
 * arguments object; borrowed, may be NULL): for each annotated parameter
 * whose argument is a string, an integer (within +-(2^53-1)) or a boolean,
 * names[k] = "Mcp-Param-NAME" and values[k] its value (a string as it is,
 * an integer in decimal, true/false), encoded for a header
 * (mcp__era_header_value: base64 where not plain visible ASCII); an
 * absent, null or other-typed argument sends none.  *n is how many (at
 * most MCP_XHDR_MAX); every string is new (mcp__free each).  MCP_OK or
 * MCP_ENOMEM (nothing allocated).
 */
mcp_status mcp__xhdr_values(const mcp_xhdr_tool *t, json_object *args, char **names, char **values,
                            size_t *n);

/* The annotated tools of one server's list, by name. */
typedef struct mcp_xhdr_table {
  char **names;
  mcp_xhdr_tool **tools;
  size_t n, cap;
} mcp_xhdr_table;

/* mcp__xhdr_table_add() files |t| (taken, freed on failure) under |name|
 * (copied).  MCP_OK or MCP_ENOMEM. */
mcp_status mcp__xhdr_table_add(mcp_xhdr_table *tab, const char *name, mcp_xhdr_tool *t);
/* The annotations of tool |name|, or NULL. */
const mcp_xhdr_tool *mcp__xhdr_table_find(const mcp_xhdr_table *tab, const char *name);
/* Frees the table and everything in it (NULL: nothing). */
void mcp__xhdr_table_free(mcp_xhdr_table *tab);

#endif /* MCP_XHDR_H */
