/* SPDX-License-Identifier: MIT */
/*
 * mcp_config_int.h: what the config files share and nobody else uses: the
 * diagnostics list, the parse context of one file, one file's entries, and
 * the steps of parsing a file that discovery (mcp_discover.c) runs one by
 * one.  Included by the mcp_config*.c files, mcp_discover.c and
 * mcp_secret.c only; the module's interface is mcp_config.h.
 *
 * Every function here is pure (mcp__config_load_root() and
 * mcp__config_read_error() excepted: the first reads a file) and may be
 * called from any thread; a list or context is the caller's alone.
 */
#ifndef MCP_CONFIG_INT_H
#define MCP_CONFIG_INT_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "mcp_config.h"
#include "mcp_int.h"

/* Deepest JSON nesting accepted in a config file (and the trust store). */
#define MCP_CONFIG_JSON_DEPTH 64

/* Result of a check or step: fine, invalid (a warning was added), or OOM. */
enum { CHECK_OK = 0, CHECK_BAD = 1, CHECK_OOM = 2 };

/* A growing list of diagnostics; |oom| is sticky once an append failed. */
typedef struct mcp_diag_list {
  mcp_config_diag *v;
  size_t n;
  size_t cap;
  bool oom;
} mcp_diag_list;

/* How one file is read: its name in messages, dialect, ${VAR} lookup and
 * where warnings go. */
typedef struct mcp_parse_ctx {
  const char *source;
  mcp_config_dialect dialect;
  mcp_config_getenv_fn lookup;
  void *user;
  mcp_config_getenv_fn input; /* ${input:id}, or NULL */
  void *input_user;
  const char *base_dir;  /* project root, or NULL */
  const char *home;      /* ${userHome}, or NULL: $HOME */
  const char *workspace; /* ${workspaceFolder}, or NULL */
  mcp_diag_list *diags;
} mcp_parse_ctx;

/* One entry of a file; |def| NULL means invalid (it still claims |name|). */
typedef struct mcp_file_entry {
  char *name;
  mcp_server_def *def;
} mcp_file_entry;

/* A file's entries in file order and its "disabledServers"; all owned. */
typedef struct mcp_file_result {
  mcp_file_entry *v;
  size_t n;
  char **disabled;
  size_t ndisabled;
} mcp_file_result;

/* ---- diagnostics (mcp_config_def.c) ---- */

/*
 * Appends a diagnostic whose message is "<source>: server <q>: <text>",
 * leaving out the parts that are NULL; sets dl->oom when out of memory.
 */
void mcp__config_diag_add(mcp_diag_list *dl, mcp_log_level level, const char *source,
                          const char *server, const char *field, const char *fmt, ...)
    MCP_PRINTF(6, 7);
/* |s| quoted for a message, cut after 120 bytes; new, or NULL (OOM). */
char *mcp__config_quote(const char *s);
/* Moves |dl|'s diagnostics into |set| (mcp_config.c). */
void mcp__config_take_diags(mcp_config_set *set, mcp_diag_list *dl);
/* "stdio", "http" or "sse". */
const char *mcp__config_type_name(mcp_server_type t);
/* The "envInherit" name of an mcp_env_inherit value, or NULL. */
const char *mcp__config_env_inherit_name(int v);
/* The mcp_env_inherit value of an "envInherit" name; 0 when not one. */
int mcp__config_env_inherit_value(const char *name);

/* ---- expansion (mcp_config_expand.c) ---- */

/* getenv(3) as an mcp_config_getenv_fn. */
const char *mcp__config_getenv_default(void *user, const char *name);
/*
 * Expands |in| (field |field| of server |server|; |key| names a map entry,
 * or NULL) in c's dialect into *out (new).  A reference that cannot be
 * resolved is never passed on: CHECK_BAD after a warning naming the file,
 * the server, the field and the reference, *out NULL.  Or CHECK_OOM.
 */
int mcp__config_expand_value(mcp_parse_ctx *c, const char *server, const char *field,
                             const char *key, const char *in, char **out);

/* ---- parsing steps (mcp_config.c, shapes in mcp_config_dialect.c) ---- */
/* Sets up |c| for file |source| (NULL: "<config>"); |o| NULL: defaults. */
void mcp__config_ctx_init(mcp_parse_ctx *c, mcp_diag_list *dl, const char *source,
                          const mcp_config_parse_opts *o);
/* A JSON string without NUL bytes, or NULL. */
const char *mcp__config_plain_string(json_object *o);
/*
 * |entry| of a |d| file in the shape mcpconn reads ("command" a string with
 * "args", "env", "type" stdio/http/sse, "timeout" in ms): OpenCode's
 * "local"/"remote" with a command array and "environment", Zed's command
 * object {path, args, env}, Cline's timeout in seconds.  A new reference
 * (json_object_put() it), |entry| itself with a new reference when nothing
 * changes, or NULL when out of memory.  Pure, no diagnostics.
 */
json_object *mcp__config_normalize(mcp_config_dialect d, json_object *entry);
/*
 * The dialect an explicit (--config) file is written in, from its parsed
 * |root|: "servers" is VS Code's, "context_servers" Zed's, "mcp" with
 * OpenCode's entries OpenCode's; in "mcpServers", fields only one client
 * writes pick it (autoApprove, alwaysAllow: Cline; serverUrl, disabledTools:
 * Windsurf; httpUrl, includeTools, excludeTools, trust: Gemini;
 * headersHelper: Claude Code); anything else is mcpconn's own, read
 * strictly.  A path ending in ".toml" is Codex's (decided before parsing).
 */
mcp_config_dialect mcp__config_detect(json_object *root);
/* The client a dialect belongs to, for messages ("VS Code", ...). */
const char *mcp__config_dialect_name(mcp_config_dialect d);
/* The key of the server map in |d|'s files: "servers" or "mcpServers". */
const char *mcp__config_servers_key(mcp_config_dialect d);
/* Parses |len| bytes of JSON into *root: CHECK_OK, or CHECK_BAD / CHECK_OOM
 * after a warning. */
int mcp__config_parse_root(mcp_parse_ctx *c, const char *text, size_t len, json_object **root);
/* Reads and parses |path|: CHECK_OK with *root (NULL when missing and
 * |quiet_missing|), CHECK_BAD after a warning, or CHECK_OOM. */
int mcp__config_load_root(mcp_parse_ctx *c, const char *path, bool quiet_missing,
                          json_object **root);
/* The warning for a file that mcp__read_file() could not read (errno |e|);
 * CHECK_BAD or CHECK_OOM. */
int mcp__config_read_error(mcp_parse_ctx *c, const char *path, int e);
/* Parses the servers of |map| into |fr|: CHECK_OK or CHECK_OOM. */
int mcp__config_collect_servers(mcp_parse_ctx *c, json_object *map, mcp_file_result *fr);
/* The server map and "disabledServers" of |root| into |fr| (a wrong shape:
 * one warning, |fr| empty): CHECK_OK or CHECK_OOM. */
int mcp__config_collect_root(mcp_parse_ctx *c, json_object *root, mcp_file_result *fr);
void mcp__config_file_result_clear(mcp_file_result *fr);

/* ---- sets (mcp_config.c) ---- */

/* qsort/bsearch comparator of mcp_server_def pointers, by name. */
int mcp__config_cmp_def(const void *a, const void *b);
/* Sorts and de-duplicates a list of names in place. */
void mcp__config_sort_unique(char **v, size_t *n);

/* ---- canonical form (mcp_config_canon.c) ---- */

/* qsort comparator of char pointers, byte order. */
int mcp__config_cmp_str(const void *a, const void *b);
/* The SHA-256 of |len| bytes as 64 hex digits and a NUL. */
void mcp__config_sha256_hex(const void *data, size_t len, char out[65]);
/* Fills def->hash from mcp__config_canonical_json(); MCP_OK or MCP_ENOMEM. */
mcp_status mcp__config_def_hash(mcp_server_def *def);

#endif /* MCP_CONFIG_INT_H */
