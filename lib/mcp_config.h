/* SPDX-License-Identifier: MIT */
/*
 * mcp_config.h: server definitions, and the pure part of the config
 * module.  Parses mcpconn's own config files and the files other MCP
 * clients keep, expands ${VAR} and ${VAR:-default}, validates every entry
 * (each error names the file, the server and the field) and hashes each
 * definition for the deferred-tool cache.  Implemented by mcp_config.c
 * (parsing, expansion, validation, definitions, sets: fuzzed) and
 * mcp_config_canon.c (the canonical form and hash).  Pure: no threads, no
 * I/O but reading the one file mcp__config_parse_file() names.
 *
 * The rest of the module builds on these types, each in its own file:
 *   mcp_discover.h  discovery, merging, the importers and the project trust
 *                   store (reads config files; reads and writes the store);
 *   mcp_secret.h    `!command` secrets, run through /bin/sh at connect time,
 *                   with a process-wide cache under a lock;
 * and, on the manager's side, mcp_server_options.h turns a definition into
 * client options.  Knows nothing of transports, the client, the manager or
 * the worker pool.
 *
 * File format (JSON; json-c's lenient mode, so comments and trailing commas
 * are accepted):
 *
 *   { "mcpServers": { "<name>": { ...server... } },
 *     "disabledServers": ["<name>", ...] }
 *
 * Names match [A-Za-z0-9_.:-]{1,100}; another name is folded into one
 * (runs of other bytes become "_", trimmed; "server" when nothing is left;
 * "-2", "-3"... against collisions, in file order) and kept as the
 * definition's display_name.  Server fields:
 *   type        "stdio" (default), "http" (Streamable HTTP) or "sse"
 *               (legacy HTTP+SSE).  Without "type", an entry that has "url"
 *               and no "command" is "http".
 *   command     stdio, required: the program (searched in PATH).
 *   args        stdio: array of strings.
 *   env         stdio: object of strings, merged over the host environment.
 *   cwd         stdio: working directory (default: the host's).
 *   envInherit  stdio: "all", "default" (HOME, LOGNAME, PATH, SHELL, TERM,
 *               USER) or "none": what the server inherits of the host's
 *               environment before "env" applies.  Absent: the host's
 *               default for the file's level (mcp_env_inherit).
 *   url         http/sse, required: http:// or https:// endpoint.
 *   headers     http/sse: object of strings; a value containing CR or LF is
 *               an error, as is a name that is not an HTTP token or that the
 *               transport sets itself (Content-Type, Accept, Host,
 *               Content-Length, Mcp-Session-Id, MCP-Protocol-Version,
 *               Last-Event-ID).
 *   timeout     ms, a non-negative integer; 0 means no timeout.  Absent: the
 *               host's default.
 *   enabled     boolean, default true; false hides the entry.
 *   disabled    boolean, default false; true hides the entry.
 *   http2       http/sse: "auto" (default: ALPN over TLS, HTTP/1.1 on
 *               cleartext), "prior-knowledge" (HTTP/2 without negotiation,
 *               h2c on cleartext) or "off" (HTTP/1.1 only).
 *   caFile, caDir, clientCert, clientKey   http/sse: TLS paths (PEM);
 *               clientCert and clientKey go together (they may name the
 *               same file).
 *   insecure    http/sse: boolean; true skips certificate verification.
 *   oauth       http/sse: object (mcpconn's own files only): clientId,
 *               clientSecret, scopes (space-separated), redirectUri,
 *               clientMetadataUrl, grant ("authorization_code", the default,
 *               or "client_credentials"), privateKeyFile and signingAlg (for
 *               private_key_jwt; "ES256" by default); strings, ${VAR}
 *               expanded (put secrets in the environment, not the file).
 *
 * In mcpconn's own files an unknown field, a field of the other transport,
 * or both "command" and "url" is an error.  In other clients' files
 * ("foreign" files) unknown fields are skipped with a debug note and
 * other-transport fields are ignored, and a
 * few aliases are read: "httpUrl" and "serverUrl" mean "url" with type http,
 * type "streamable-http" or "streamableHttp" means "http", and in Gemini's
 * settings a "url" without a type means "sse".
 *
 * Variables are expanded in the dialect's syntax (mcp_config_dialect); a
 * reference that cannot be resolved makes the entry invalid with a warning
 * naming the file, the server and the field: it is never passed on as text.
 * With a base_dir (a project file), a stdio server without "cwd" runs
 * there and relative "cwd" and TLS paths are taken from there.
 *
 * An invalid entry is left out with a warning, but it still claims its name:
 * a lower-priority definition of that name is not used instead.  A file that
 * is not valid JSON, or whose server map is not an object, contributes
 * nothing and yields one warning.
 */
#ifndef MCP_CONFIG_H
#define MCP_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcp_int.h"
#include "mcp_settings.h"

/* Longest server name, in bytes. */
#define MCP_CONFIG_NAME_MAX 100
/* Largest config file read, in bytes; a larger one yields a warning. */
#define MCP_CONFIG_FILE_MAX (16u * 1024u * 1024u)

typedef enum mcp_server_type {
  MCP_SERVER_STDIO = 0,
  MCP_SERVER_HTTP = 1, /* Streamable HTTP */
  MCP_SERVER_SSE = 2   /* legacy HTTP+SSE (2024-11-05) */
} mcp_server_type;

/* A server's "http2" policy is the public mcp_http_version (mcpconn.h):
 * "auto", false (HTTP/1.1) or "prior-knowledge". */

/* A server's "oauth" object; strings owned, NULL when absent. */
typedef struct mcp_config_oauth {
  char *client_id, *client_secret, *scopes, *redirect_uri, *client_metadata_url;
  char *private_key_file, *signing_alg;
  bool client_credentials; /* grant "client_credentials" */
  char *workload_jwt_file; /* "workloadJwtFile": the JWT bearer grant (SEP-1933) */
  int dpop;                /* an mcp_oauth_dpop: "dpop" absent (auto), false, true */
} mcp_config_oauth;

/*
 * One server definition, after ${VAR} expansion and before secret
 * resolution.  Every pointer is owned by the definition and freed by
 * mcp__server_def_free().  Immutable once built, so a definition may be read
 * from several threads at once.
 */
typedef struct mcp_server_def {
  char *name;
  /* The name as the file wrote it when that was not a valid server name
   * and |name| is its folded form; NULL otherwise. */
  char *display_name;
  mcp_server_type type;
  bool enabled; /* false: hidden ("enabled": false or "disabled": true) */
  bool foreign; /* from another client's file: `!` values stay literal */
  bool project; /* from a project-level file the user trusted (discovery);
                    stdio servers then default to envInherit "default" */
  /* The connection (mcp_settings.h), as the file gave it: stdio argv[0]
   * is "command", then "args"; env and headers in file order; http_kind
   * AUTO for "http", LEGACY_SSE for "sse"; http_version from "http2";
   * timeout_ms -1 when "timeout" is absent (the host's default); protocol
   * NULL when absent; max_message and no_get_listener never set. */
  mcp_server_settings s;
  mcp_config_oauth *oauth; /* http and sse: "oauth", or NULL */
  /* Tool filters of other clients' files, applied where the manager
   * publishes a server's tools: with |tools_only_set|, only the tools named
   * in |tools_only| (Gemini "includeTools", Codex "enabled_tools"); never
   * those in |tools_off| (Gemini "excludeTools", Windsurf "disabledTools",
   * Codex "disabled_tools"). */
  char **tools_only;
  size_t ntools_only;
  bool tools_only_set;
  char **tools_off;
  size_t ntools_off;
  /* Where the definition came from: a file path, for ~/.claude.json's
   * per-project entries followed by " (project <dir>)". */
  char *source;
  /* SHA-256 (hex, NUL-terminated) of mcp__config_canonical_json(). */
  char hash[65];
} mcp_server_def;

/* Whether |def|'s tool filters let tool |tool| through (NULL def: yes). */
bool mcp__config_tool_allowed(const mcp_server_def *def, const char *tool);

/*
 * A diagnostic about a file or an entry.  |message| is the complete line,
 * e.g. `/home/u/.mcp.json: server "db": unknown field "comand"`; the other
 * strings repeat its parts for programs (each may be NULL).  All owned.
 */
typedef struct mcp_config_diag {
  mcp_log_level level; /* MCP_LOG_WARN, or MCP_LOG_DEBUG for notes */
  char *source;
  char *server;
  char *field;
  char *message;
  bool hidden; /* a note that |server| is left out: disabled */
} mcp_config_diag;

/*
 * A set of definitions.  Owns everything it points to.
 *  defs      sorted by name (byte order), names unique
 *  disabled  names listed in "disabledServers", sorted, unique
 *  diags     warnings and debug notes, in the order they arose
 *  files     the files that were read and parsed, in priority order
 *  untrusted project files left out for want of trust (canonical paths)
 *  trust_error  why an approval could not be stored, or NULL
 */
typedef struct mcp_config_set {
  mcp_server_def **defs;
  size_t ndefs;
  char **disabled;
  size_t ndisabled;
  mcp_config_diag *diags;
  size_t ndiags;
  char **files;
  size_t nfiles;
  char **untrusted;
  size_t nuntrusted;
  char *trust_error;
} mcp_config_set;

/*
 * Environment lookup: returns the value of |name| or NULL when unset.  The
 * string is borrowed and must stay valid until the calling function returns.
 * Defaults to getenv(3) wherever a lookup is optional.
 */
typedef const char *(*mcp_config_getenv_fn)(void *user, const char *name);

/* Which client wrote a file, and so how strictly it is read. */
typedef enum mcp_config_dialect {
  MCP_CONFIG_NATIVE = 0,         /* mcpconn's own: "mcpServers", strict */
  MCP_CONFIG_FOREIGN = 1,        /* Claude Code: "mcpServers", ${VAR} */
  MCP_CONFIG_VSCODE = 2,         /* VS Code: "servers", ${env:VAR}, ${input:id} */
  MCP_CONFIG_GEMINI = 3,         /* Gemini CLI: "mcpServers", $VAR, "url" means sse */
  MCP_CONFIG_CURSOR = 4,         /* Cursor: "mcpServers", ${env:VAR}, ${userHome} */
  MCP_CONFIG_WINDSURF = 5,       /* Windsurf: "mcpServers", ${env:VAR} */
  MCP_CONFIG_CLAUDE_DESKTOP = 6, /* Claude Desktop: "mcpServers", no variables */
  MCP_CONFIG_CLINE = 7,          /* Cline: "mcpServers", no variables, timeout in s */
  MCP_CONFIG_ZED = 8,            /* Zed: "context_servers", no variables */
  MCP_CONFIG_OPENCODE = 9,       /* OpenCode: "mcp", {env:VAR}, command arrays */
  MCP_CONFIG_CODEX = 10          /* Codex: config.toml (a TOML subset), "mcp_servers" */
} mcp_config_dialect;

/* How many dialects there are (for fuzzing and tables). */
#define MCP_CONFIG_DIALECTS 11

/* The dialect of a format name ("claude-code", "claude-desktop", "cursor",
 * "vscode", "windsurf", "gemini", "codex", "opencode", "cline", "zed",
 * "mcpconn") into *out; false for any other name. Pure. */
bool mcp__config_dialect_by_name(const char *name, mcp_config_dialect *out);

typedef struct mcp_config_parse_opts {
  mcp_config_dialect dialect;
  mcp_config_getenv_fn getenv; /* NULL: getenv(3) */
  void *getenv_user;
  /* ${input:id} values (VS Code); NULL: none, so such a reference makes
   * its server unusable. */
  mcp_config_getenv_fn input;
  void *input_user;
  /* The workspace folder (${workspaceFolder}) and the base of relative
   * paths: a project file's project root.  When set, a stdio server
   * without "cwd" runs there and a relative "cwd" or TLS path is taken
   * from there.  NULL: no workspace; relative paths are left as written. */
  const char *base_dir;
  /* ${userHome}; NULL: $HOME through |getenv|. */
  const char *home;
  /* ${workspaceFolder} when |base_dir| is NULL (a user-level file read for
   * a project); NULL: none. */
  const char *workspace;
} mcp_config_parse_opts;

/*
 * mcp__config_expand() expands ${VAR} and ${VAR:-default} in |in|, in
 * mcpconn's own syntax (parsing a file also applies each client's syntax and
 * refuses what stays unresolved; this function leaves it literal).
 *  - VAR is [A-Za-z_][A-Za-z0-9_]*.  ${VAR} is the variable's value when it
 *    is set (even empty), else it stays literally "${VAR}".
 *  - ${VAR:-default} is the value when set and non-empty, else |default|,
 *    which is expanded in turn (nesting up to 8 deep; deeper stays literal).
 *    Inside |default| only "${" opens a nested brace; the first "}" that
 *    closes no nested "${" ends it.
 *  - A substituted value is inserted verbatim, never expanded again.
 *  - "$${" writes a literal "${"; every other "$" is literal, so "$$" and
 *    "$HOME" pass through unchanged.  The text is scanned left to right, so
 *    "$$${A}" is "$" followed by the escape: "$${A}".
 *  - Anything that is not a well-formed reference (unterminated "${",
 *    "${}", "${1}", "${A-b}") stays literal.
 * Ownership: on MCP_OK *out is a new string the caller frees with
 *   mcp__free().  Threads: any, concurrently (if |lookup| allows).
 * Returns: MCP_OK, MCP_EINVAL (NULL in/out), MCP_ENOMEM.
 */
mcp_status mcp__config_expand(const char *in, mcp_config_getenv_fn lookup, void *user, char **out);

/*
 * mcp__config_parse_text() parses one config file's text.  Entries are
 * expanded, validated and hashed.  Entries with "enabled": false are kept,
 * with enabled false; invalid entries are left out with a warning.
 * |source| names the file in messages (NULL: "<config>").  |o| NULL means
 * the native dialect with getenv(3).
 * Ownership: inputs borrowed.  On MCP_OK *out is a new set freed with
 *   mcp__config_free(), which holds the warnings: a malformed file is
 *   MCP_OK with no definitions and one warning.  On error *out is NULL.
 * Threads: any, concurrently.
 * Returns: MCP_OK, MCP_EINVAL (NULL text or out), MCP_ENOMEM.
 */
mcp_status mcp__config_parse_text(const char *text, size_t len, const char *source,
                                  const mcp_config_parse_opts *o, mcp_config_set **out);

/*
 * mcp__config_parse_file() reads |path| (at most MCP_CONFIG_FILE_MAX bytes)
 * and parses it as mcp__config_parse_text() does.  A file that is missing
 * or unreadable gives MCP_OK with an empty set and one warning.
 * Ownership, threads and returns as mcp__config_parse_text().
 */
mcp_status mcp__config_parse_file(const char *path, const mcp_config_parse_opts *o,
                                  mcp_config_set **out);

/*
 * A host's ${input:id} values (VS Code's "inputs"): ids and values copied.
 * mcp__config_inputs_set() adds |id| or replaces its value; |value| NULL
 * removes it (MCP_OK, MCP_EINVAL for a NULL or empty id, MCP_ENOMEM).
 * mcp__config_inputs_get() is an mcp_config_getenv_fn whose |user| is the
 * mcp_config_inputs.  Values are wiped before they are freed.
 * Threads: one thread at a time per object; get() may run concurrently.
 */
typedef struct mcp_config_inputs {
  mcp_kv *v;
  size_t n;
} mcp_config_inputs;
mcp_status mcp__config_inputs_set(mcp_config_inputs *in, const char *id, const char *value);
const char *mcp__config_inputs_get(void *inputs, const char *id);
void mcp__config_inputs_clear(mcp_config_inputs *in);

/*
 * mcp__config_free() frees a set and all it holds, definitions included.
 * NULL is fine.  Threads: any, once no other thread reads the set.
 */
void mcp__config_free(mcp_config_set *set);

/*
 * mcp__config_find() returns the definition named |name|, or NULL.
 * Ownership: borrowed from |set|.  Threads: any, concurrently.
 */
const mcp_server_def *mcp__config_find(const mcp_config_set *set, const char *name);

/*
 * mcp__config_name_is_valid() tells whether |name| may name a server
 * ([A-Za-z0-9_.:-]{1,100}).  Ownership: borrowed.  Threads: any.
 */
bool mcp__config_name_is_valid(const char *name);

/*
 * mcp__server_def_dup() deep-copies |def|; NULL when out of memory.
 * mcp__server_def_free() frees one; NULL is fine.  Threads: any.
 */
mcp_server_def *mcp__server_def_dup(const mcp_server_def *def);
void mcp__server_def_free(mcp_server_def *def);

/*
 * mcp__config_canonical_json() serialises what identifies a server's
 * behaviour, with object keys sorted recursively (byte order) and no
 * whitespace: the fields type, command, args, env, envInherit, cwd, url, headers,
 * timeout, http2, caFile, caDir, clientCert, clientKey, insecure and oauth
 * (without clientSecret, which is only marked present), each
 * present only when the definition has it (type, always).  Values are the
 * expanded ones, with `!command` values left as written, so resolved secrets
 * never enter it; name, enabled and source are left out.  The definition's
 * hash is the SHA-256 hex of this text.
 * Ownership: *out is new, freed with mcp__free().  Threads: any.
 * Returns: MCP_OK, MCP_ENOMEM.
 */
mcp_status mcp__config_canonical_json(const mcp_server_def *def, char **out);

/*
 * mcp__config_diags_free() frees |n| diagnostics and the array (from
 * mcp__config_resolve_secrets, mcp_secret.h).  NULL is fine.  Threads: any.
 */
void mcp__config_diags_free(mcp_config_diag *diags, size_t n);

#endif /* MCP_CONFIG_H */
