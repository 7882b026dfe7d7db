/* SPDX-License-Identifier: MIT */
/*
 * mcp_settings.h: one server's connection settings, in the one shape that
 * every layer uses.  The config parser fills it (mcp_server_def.s), the
 * public mcp_client_options_* setters fill it (mcp_client_options.s), the
 * manager's bridge copies one into the other, and the transports read it
 * (mcp_http_transport_config.settings, the stdio config built from it).
 * TLS paths are one mcp_tls_settings wherever they travel: the HTTP
 * client, the OAuth engine's clients and the TLS context.
 *
 * A new connection setting is one field here, its copy in
 * mcp__settings_overlay(), its parser (mcp_config.c) and its public setter
 * (mcp_client.c); the bridge, dup and free follow from this file.
 *
 * Pure data: no threads, no globals, no I/O.
 */
#ifndef MCP_SETTINGS_H
#define MCP_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcpconn.h"

/* One NAME=VALUE pair of env or headers.  Both strings owned; in env a
 * NULL value removes NAME from the inherited environment. */
typedef struct mcp_kv {
  char *name;
  char *value;
} mcp_kv;

/* TLS of an HTTP server.  Verification (chain against the system store or
 * ca_file/ca_dir, and host name) is on unless |insecure|.  Strings owned
 * where the settings are (mcp_server_settings), borrowed in the configs
 * that pass them down (mcp_http_config, the OAuth engine's). */
typedef struct mcp_tls_settings {
  char *ca_file, *ca_dir;         /* trust; NULL: the system store */
  char *client_cert, *client_key; /* PEM, for mTLS; both or neither */
  bool insecure;
} mcp_tls_settings;

typedef struct mcp_server_settings {
  /* stdio: the program and its arguments, NULL-terminated (|argc| entries);
   * NULL for an HTTP server.  argv and url exclude each other. */
  char **argv;
  size_t argc;
  char *cwd;   /* NULL: the host's */
  mcp_kv *env; /* merged over the inherited environment, in order */
  size_t nenv;
  int env_inherit; /* mcp_env_inherit; 0 (UNSET): ALL at connect */
  /* HTTP: the endpoint; NULL for a stdio server. */
  char *url;
  mcp_http_transport http_kind; /* AUTO falls back to legacy SSE */
  mcp_http_version http_version;
  mcp_kv *headers; /* extra request headers, in order */
  size_t nheaders;
  mcp_tls_settings tls;
  bool no_get_listener; /* no standalone GET stream (2025 era) */
  /* Both. */
  int64_t timeout_ms; /* per request; 0: none; -1: not given (a definition) */
  size_t max_message; /* largest message in bytes; 0: not given */
  /* "auto", "modern", "legacy" or a revision, as mcp__era_parse_mode()
   * reads it: a static string (mcp_era.c, never freed); NULL: not given
   * (auto). */
  const char *protocol;
} mcp_server_settings;

/* Frees every member of |s| (not |s|) and zeroes it.  NULL is a no-op. */
void mcp__settings_clear(mcp_server_settings *s);

/*
 * mcp__settings_overlay() copies every field |src| gives over |dst|: all
 * strings and arrays that are set, timeout_ms when >= 0, max_message when
 * non-zero, the enums and flags always.  Setting argv clears dst's url and
 * the reverse.  Copying a definition's settings over fresh client options
 * (which hold the defaults) is the manager's bridge; over zeroed settings
 * it is a deep copy.
 * Returns: MCP_OK, MCP_ENOMEM (|dst| then holds a consistent mix).
 */
mcp_status mcp__settings_overlay(mcp_server_settings *dst, const mcp_server_settings *src);

/* Sets the stdio program (a copy of the NULL-terminated |argv|) and clears
 * the URL; mcp__settings_set_url() sets the URL and clears argv.
 * MCP_ENOMEM. */
mcp_status mcp__settings_set_argv(mcp_server_settings *s, const char *const *argv);
mcp_status mcp__settings_set_url(mcp_server_settings *s, const char *url);

/* Sets env NAME (replacing an earlier NAME); |value| NULL removes it from
 * the inherited environment.  MCP_EINVAL for an empty name or one with '='. */
mcp_status mcp__settings_set_env(mcp_server_settings *s, const char *name, const char *value);

/* Appends a header.  MCP_EINVAL when mcp__settings_header_ok() says no. */
mcp_status mcp__settings_add_header(mcp_server_settings *s, const char *name, const char *value);

/* Whether header |name| is the transport's own, set by it alone
 * (case-insensitive): Content-Type, Accept, Host, Content-Length,
 * Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID, Connection,
 * Transfer-Encoding, Mcp-Method, Mcp-Name.  The one list the setter, the
 * config parser and the transport share. */
bool mcp__settings_header_reserved(const char *name);

/* Whether a header may be set by the host: a non-empty name without CR,
 * LF, ':' or space, a value without CR or LF, and not reserved. */
bool mcp__settings_header_ok(const char *name, const char *value);

/* Replaces *slot with a copy of |s| (NULL clears it). */
mcp_status mcp__settings_set_str(char **slot, const char *s);

/* Deep copy of TLS settings into zeroed |dst|; MCP_ENOMEM. */
mcp_status mcp__tls_settings_copy(mcp_tls_settings *dst, const mcp_tls_settings *src);
/* Frees the strings of |t| and zeroes it. */
void mcp__tls_settings_clear(mcp_tls_settings *t);

/*
 * mcp__settings_envp() builds the "NAME=VALUE" / "NAME" (removal) array the
 * stdio transport takes, NULL-terminated; NULL when out of memory or when
 * there is no env (then *none is true).  Free with mcp__settings_envp_free().
 */
char **mcp__settings_envp(const mcp_server_settings *s, bool *none);
void mcp__settings_envp_free(char **envp);

#endif /* MCP_SETTINGS_H */
