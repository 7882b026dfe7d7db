/*
 * mcp_config.h: server definitions.  Parses mcpconn's own config files and
 * the files other MCP clients keep, expands ${VAR} and ${VAR:-default},
 * validates every entry (each error names the file, the server and the
 * field), finds the files in priority order (discovery), keeps project
 * files out until the user trusts them (the trust store) and hashes each
 * definition for the deferred-tool cache.
 *
 * Parsing and expansion are pure: no threads, and no I/O except reading the
 * config files themselves.  The one exception is secret resolution
 * (mcp__config_resolve_secrets), which runs `!command` values through
 * /bin/sh at connect time and keeps a process-wide cache of the results.
 *
 * Knows nothing of transports, the manager or the worker pool.
 *
 * File format (JSON; json-c's lenient mode, so comments and trailing commas
 * are accepted):
 *
 *   { "mcpServers": { "<name>": { ...server... } },
 *     "disabledServers": ["<name>", ...] }
 *
 * Names match [A-Za-z0-9_.:-]{1,100}.  Server fields:
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
 * ("foreign" files) unknown and other-transport fields are ignored, and a
 * few aliases are read: "httpUrl" and "serverUrl" mean "url" with type http,
 * type "streamable-http" or "streamableHttp" means "http", and in Gemini's
 * settings a "url" without a type means "sse".
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

/* Longest server name, in bytes. */
#define MCP_CONFIG_NAME_MAX 100
/* Largest config file read, in bytes; a larger one yields a warning. */
#define MCP_CONFIG_FILE_MAX (16u * 1024u * 1024u)
/* Default time limit of one `!command` secret, in ms. */
#define MCP_CONFIG_SECRET_TIMEOUT_MS 10000

typedef enum mcp_server_type {
  MCP_SERVER_STDIO = 0,
  MCP_SERVER_HTTP = 1, /* Streamable HTTP */
  MCP_SERVER_SSE = 2   /* legacy HTTP+SSE (2024-11-05) */
} mcp_server_type;

/*
 * HTTP version policy.  The values equal mcp_http_mode's (mcp_http.h), so
 * the manager may convert with a cast: AUTO = MCP_HTTP_AUTO, OFF =
 * MCP_HTTP_H1_ONLY, PRIOR_KNOWLEDGE = MCP_HTTP_H2_PRIOR_KNOWLEDGE.
 */
typedef enum mcp_config_http2 {
  MCP_CONFIG_HTTP2_AUTO = 0,
  MCP_CONFIG_HTTP2_OFF = 1,
  MCP_CONFIG_HTTP2_PRIOR_KNOWLEDGE = 2
} mcp_config_http2;

/* A server's "oauth" object; strings owned, NULL when absent. */
typedef struct mcp_config_oauth {
  char *client_id, *client_secret, *scopes, *redirect_uri, *client_metadata_url;
  char *private_key_file, *signing_alg;
  bool client_credentials; /* grant "client_credentials" */
} mcp_config_oauth;

/* One NAME=VALUE pair of env or headers; both strings owned. */
typedef struct mcp_config_kv {
  char *name;
  char *value;
} mcp_config_kv;

/*
 * One server definition, after ${VAR} expansion and before secret
 * resolution.  Every pointer is owned by the definition and freed by
 * mcp__server_def_free().  Immutable once built, so a definition may be read
 * from several threads at once.
 */
typedef struct mcp_server_def {
  char *name;
  mcp_server_type type;
  bool enabled;  /* false: hidden ("enabled": false) */
  bool foreign;  /* from another client's file: `!` values stay literal */
  bool project;  /* from a project-level file the user trusted (discovery);
                    stdio servers then default to envInherit "default" */
  /* stdio: argv[0] is "command", then "args"; NULL-terminated.  NULL for
   * http and sse. */
  char **argv;
  size_t argc;
  mcp_config_kv *env; /* stdio; file order */
  size_t nenv;
  char *cwd;          /* stdio; NULL: the host's */
  int env_inherit;    /* stdio: "envInherit" as mcp_env_inherit; 0: absent */
  char *url;          /* http and sse; NULL for stdio */
  mcp_config_kv *headers; /* http and sse; file order */
  size_t nheaders;
  mcp_config_http2 http2;
  char *ca_file; /* TLS paths, NULL when absent */
  char *ca_dir;
  char *client_cert;
  char *client_key;
  bool insecure;
  mcp_config_oauth *oauth; /* http and sse: "oauth", or NULL */
  int64_t timeout_ms; /* ms; 0: none; -1: not given (the host's default) */
  /* Where the definition came from: a file path, for ~/.claude.json's
   * per-project entries followed by " (project <dir>)". */
  char *source;
  /* SHA-256 (hex, NUL-terminated) of mcp__config_canonical_json(). */
  char hash[65];
} mcp_server_def;

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
  bool hidden;         /* a note that |server| is left out: disabled */
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
  MCP_CONFIG_NATIVE = 0, /* mcpconn's own: "mcpServers", strict */
  MCP_CONFIG_FOREIGN = 1, /* Claude Code, Cursor, Windsurf: "mcpServers" */
  MCP_CONFIG_VSCODE = 2, /* VS Code: "servers" */
  MCP_CONFIG_GEMINI = 3  /* Gemini CLI: "mcpServers", "url" means sse */
} mcp_config_dialect;

typedef struct mcp_config_parse_opts {
  mcp_config_dialect dialect;
  mcp_config_getenv_fn getenv; /* NULL: getenv(3) */
  void *getenv_user;
} mcp_config_parse_opts;

/*
 * mcp__config_expand() expands ${VAR} and ${VAR:-default} in |in|.
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
mcp_status mcp__config_expand(const char *in, mcp_config_getenv_fn lookup,
                              void *user, char **out);

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
mcp_status mcp__config_parse_text(const char *text, size_t len,
                                  const char *source,
                                  const mcp_config_parse_opts *o,
                                  mcp_config_set **out);

/*
 * mcp__config_parse_file() reads |path| (at most MCP_CONFIG_FILE_MAX bytes)
 * and parses it as mcp__config_parse_text() does.  A file that is missing
 * or unreadable gives MCP_OK with an empty set and one warning.
 * Ownership, threads and returns as mcp__config_parse_text().
 */
mcp_status mcp__config_parse_file(const char *path,
                                  const mcp_config_parse_opts *o,
                                  mcp_config_set **out);

/* Bits of mcp_discovery_opts.imports: other clients' files to read. */
#define MCP_IMPORT_CLAUDE 0x01u
#define MCP_IMPORT_CURSOR 0x02u
#define MCP_IMPORT_VSCODE 0x04u
#define MCP_IMPORT_WINDSURF 0x08u
#define MCP_IMPORT_GEMINI 0x10u
#define MCP_IMPORT_ALL 0x1fu

/*
 * Where discovery looks.  Zero-initialised means: no explicit files, the
 * process's cwd, HOME and XDG_CONFIG_HOME from the environment, project and
 * user files on, no imports.  Every string is borrowed for the call.
 */
typedef struct mcp_discovery_opts {
  const char *const *files; /* explicit files, highest priority, in order */
  size_t nfiles;
  const char *cwd;             /* absolute; NULL: getcwd() */
  const char *home;            /* NULL: $HOME (through |getenv|) */
  const char *xdg_config_home; /* NULL: $XDG_CONFIG_HOME, else home/.config */
  bool no_project;             /* true: skip every project-level file */
  bool no_user;                /* true: skip every file under home or XDG
                                  (the user file and user-level imports,
                                  ~/.claude.json included) */
  unsigned imports;            /* MCP_IMPORT_* bits */
  mcp_config_getenv_fn getenv; /* for HOME, XDG and ${VAR}; NULL: getenv(3) */
  void *getenv_user;
  /* Asked about project files the trust store does not approve (see
   * mcp_project_trust_fn); NULL: such files are left out with a warning. */
  mcp_project_trust_fn trust;
  void *trust_user;
} mcp_discovery_opts;

/*
 * mcp__config_discover() reads every config file in priority order and
 * merges them.  The first definition of a name wins; later ones are ignored
 * with a debug note.  Order:
 *   1. the explicit files, in the order given (native dialect);
 *   2. project: the nearest ".mcp.json" from cwd upwards, stopping after the
 *      first directory that holds ".git" (native);
 *   3. user: $XDG_CONFIG_HOME/mcpconn/mcp.json, else
 *      ~/.config/mcpconn/mcp.json (native);
 *   4. imports, when their bit is set, each client's project file before its
 *      user file (project files are searched upwards like ".mcp.json"):
 *      Claude Code: ~/.claude.json "projects"[dir]."mcpServers" for the
 *        nearest dir from cwd upwards (this lives in the user's home, so it
 *        is not project-level), then .claude/mcp.json, then ~/.claude.json
 *        "mcpServers";
 *      Cursor: .cursor/mcp.json, ~/.cursor/mcp.json;
 *      VS Code: .vscode/mcp.json (key "servers");
 *      Windsurf: ~/.codeium/windsurf/mcp_config.json;
 *      Gemini CLI: .gemini/settings.json, ~/.gemini/settings.json.
 * Project-level files (2., and the project files of 4.: those found
 * upwards from cwd, unless the same path is that client's user file) are
 * trusted only when the trust store ($XDG_CONFIG_HOME/mcpconn/
 * trusted-projects.json, else ~/.config/mcpconn/..., read only when it is a
 * regular file owned by the user and writable by nobody else) holds their
 * canonical path with the SHA-256 of their content, or when |o->trust|
 * says so (MCP_TRUST_ALWAYS also stores the approval, atomically, 0600).
 * The file is read once: the bytes hashed are the bytes parsed.  An
 * untrusted file is not parsed for use at all: no ${VAR} is expanded into
 * it, its names claim nothing, its "disabledServers" count for nothing; it
 * is listed in set->untrusted with a warning (a debug note when |o->trust|
 * said no).  A project file without any server entry needs no trust.
 * Then "disabledServers" from any file removes a name, and an entry with
 * "enabled": false is hidden (it still claims its name).  Missing default
 * files are skipped silently; a missing explicit file is a warning.
 * Ownership: |o| borrowed.  On MCP_OK *out is a new set (only usable
 *   definitions, sorted by name) freed with mcp__config_free(); on error
 *   *out is NULL.
 * Threads: any, concurrently (if |o->getenv| allows).
 * Returns: MCP_OK (warnings are in the set), MCP_EINVAL (relative cwd, NULL
 *   out), MCP_EIO (no cwd given and getcwd() failed), MCP_ENOMEM.
 */
mcp_status mcp__config_discover(const mcp_discovery_opts *o,
                                mcp_config_set **out, mcp_error *err);

/*
 * mcp__config_free() frees a set and all it holds, definitions included.
 * NULL is fine.  Threads: any, once no other thread reads the set.
 */
void mcp__config_free(mcp_config_set *set);

/*
 * mcp__config_find() returns the definition named |name|, or NULL.
 * Ownership: borrowed from |set|.  Threads: any, concurrently.
 */
const mcp_server_def *mcp__config_find(const mcp_config_set *set,
                                       const char *name);

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

/* Options of mcp__config_resolve_secrets(); NULL means the defaults. */
typedef struct mcp_secret_opts {
  int64_t timeout_ms; /* per command; <= 0: MCP_CONFIG_SECRET_TIMEOUT_MS */
} mcp_secret_opts;

/*
 * mcp__config_resolve_secrets() makes the definition to connect with: a
 * copy of |def| in which each env value (stdio) and header value (http,
 * sse) that starts with "!" is replaced by the trimmed standard output of
 * `/bin/sh -c <rest>`.  A command that exits non-zero, is killed, runs past
 * the timeout (its process group is killed, and it is reaped) or prints
 * nothing (after trimming) drops that entry with a warning, as does a header
 * value with CR or LF.  Outputs are cached for the life of the process by
 * command text, and concurrent identical commands run once; failures are not
 * cached.  The command gets /dev/null as stdin and stderr, and no other
 * descriptor of the host.  Definitions from foreign files are copied as
 * they are ("!" is literal there).  Warnings never contain a command's
 * output.  The copy keeps |def|'s hash.
 * Ownership: |def| borrowed.  On MCP_OK *out is a new definition freed with
 *   mcp__server_def_free(), and warnings are appended to *diags / *ndiags
 *   (an array the caller frees with mcp__config_diags_free()).  On error
 *   *out is NULL and *diags is unchanged.
 * Threads: any, concurrently.  Blocks while commands run.  Commands start
 *   through posix_spawn() (mcp_spawn.h): no host code runs in the child.
 * Returns: MCP_OK, MCP_EINVAL, MCP_ENOMEM.
 */
mcp_status mcp__config_resolve_secrets(const mcp_server_def *def,
                                       const mcp_secret_opts *o,
                                       mcp_server_def **out,
                                       mcp_config_diag **diags,
                                       size_t *ndiags);

/*
 * mcp__config_secrets_clear() forgets (and frees) every cached secret.  For
 * tests, for a host that wants its secret commands to run again, and for a
 * clean exit under leak checkers.
 * Threads: any, but never while mcp__config_resolve_secrets() runs.
 */
void mcp__config_secrets_clear(void);

/*
 * mcp__config_diags_free() frees |n| diagnostics and the array (from
 * mcp__config_resolve_secrets).  NULL is fine.  Threads: any.
 */
void mcp__config_diags_free(mcp_config_diag *diags, size_t n);

/*
 * mcp__config_client_options() turns a definition into client options
 * through the public setters.  stdio: argv, cwd and each env pair.  http:
 * the URL with MCP_HTTP_TRANSPORT_AUTO (Streamable HTTP, falling back to the
 * legacy transport as the specification asks); sse: the URL with
 * MCP_HTTP_TRANSPORT_LEGACY_SSE; both: the HTTP version, each header, the CA
 * file/dir, the client certificate and key, insecure.  Then the timeout,
 * when given.  Pass the resolved definition (see
 * mcp__config_resolve_secrets); values are used as they are.  Logging,
 * handlers and client info are the manager's to add.
 * Ownership: |def| borrowed.  On MCP_OK *out is new, freed with
 *   mcp_client_options_free(); on error *out is NULL and |err| names the
 *   file, the server and the value a setter refused.
 * Threads: any.
 * Returns: MCP_OK, MCP_EINVAL (a setter refused a value, e.g. a URL that
 *   does not parse), MCP_ENOMEM.
 */
mcp_status mcp__config_client_options(const mcp_server_def *def,
                                      mcp_client_options **out,
                                      mcp_error *err);

#endif /* MCP_CONFIG_H */
