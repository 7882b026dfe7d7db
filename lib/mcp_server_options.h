/* SPDX-License-Identifier: MIT */
/*
 * mcp_server_options.h: from a server definition to client options, on
 * the manager's side of the config module (mcp_server_options.c).
 */
#ifndef MCP_SERVER_OPTIONS_H
#define MCP_SERVER_OPTIONS_H

#include "mcp_config.h"
#include "mcp_int.h"

/*
 * mcp__config_client_options() turns a definition into client options:
 * its mcp_server_settings copied over the client's defaults (each field it
 * gives; "sse" is MCP_HTTP_TRANSPORT_LEGACY_SSE, "http" AUTO) after the
 * checks the public setters make, and its "oauth" object as OAuth options.
 * Pass the resolved definition (see mcp__config_resolve_secrets); values
 * are used as they are.  Logging, handlers and client info are the
 * manager's to add.
 * Ownership: |def| borrowed.  On MCP_OK *out is new, freed with
 *   mcp_client_options_free(); on error *out is NULL and |err| names the
 *   file, the server and the value a setter refused.
 * Threads: any.
 * Returns: MCP_OK, MCP_EINVAL (a setter refused a value, e.g. a URL that
 *   does not parse), MCP_ENOMEM.
 */
mcp_status mcp__config_client_options(const mcp_server_def *def, mcp_client_options **out,
                                      mcp_error *err);

#endif /* MCP_SERVER_OPTIONS_H */
