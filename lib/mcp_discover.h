/* SPDX-License-Identifier: MIT */
/*
 * mcp_discover.h: config discovery (mcp_discover.c): the files in priority
 * order, merged into one set, with project files kept out until the user
 * trusts them.  The set and definition types are mcp_config.h's.
 */
#ifndef MCP_DISCOVER_H
#define MCP_DISCOVER_H

#include <stdbool.h>
#include <stddef.h>

#include "mcp_config.h"
#include "mcp_int.h"

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
  unsigned imports;            /* MCP_IMPORT_* bits (mcpconn.h) */
  mcp_config_getenv_fn getenv; /* for HOME, XDG and ${VAR}; NULL: getenv(3) */
  void *getenv_user;
  /* Asked about project files the trust store does not approve (see
   * mcp_project_trust_fn); NULL: such files are left out with a warning. */
  mcp_project_trust_fn trust;
  void *trust_user;
  /* ${input:id} values for VS Code files; NULL: none (such a server is
   * left out with a warning). */
  mcp_config_getenv_fn input;
  void *input_user;
  /* The format of every explicit file, overriding what its name or shape
   * shows, when |format_set|. */
  bool format_set;
  mcp_config_dialect format;
} mcp_discovery_opts;

/*
 * mcp__config_discover() reads every config file in priority order and
 * merges them.  The first definition of a name wins; later ones are ignored
 * with a debug note.  Order, project scope before user scope:
 *   1. the explicit files, in the order given (in |format| when
 *      |format_set|, else the dialect their name or shape shows);
 *   2. project: the nearest ".mcp.json" from cwd upwards, stopping after the
 *      first directory that holds ".git" (native);
 *   3. the imports' project scope, when their bit is set, in this order:
 *      Claude Code: ~/.claude.json "projects"[dir]."mcpServers" for the
 *        nearest dir from cwd upwards (this lives in the user's home, so it
 *        needs no trust), then .claude/mcp.json;
 *      Cursor: .cursor/mcp.json; VS Code: .vscode/mcp.json (key "servers");
 *      Gemini CLI: .gemini/settings.json; Zed: .zed/settings.json;
 *      OpenCode: opencode.json, opencode.jsonc; Codex: .codex/config.toml
 *      (project files are searched upwards like ".mcp.json");
 *   4. user: $XDG_CONFIG_HOME/mcpconn/mcp.json, else
 *      ~/.config/mcpconn/mcp.json (native);
 *   5. the imports' user scope: ~/.claude.json "mcpServers",
 *      ~/.cursor/mcp.json, ~/.codeium/windsurf/mcp_config.json,
 *      ~/.gemini/settings.json, ~/.config/zed/settings.json,
 *      ~/.config/opencode/opencode.json[c], VS Code's user mcp.json, Claude
 *      Desktop's claude_desktop_config.json, Cline's
 *      cline_mcp_settings.json (Linux paths, then the macOS ones under
 *      ~/Library/Application Support), Codex's ~/.codex/config.toml.
 * Project files are parsed with their project root (the directory holding
 * ".mcp.json" or the client's directory) as base_dir, user files with the
 * project root of cwd (the directory with ".git", else cwd) as workspace;
 * ${input:id} values come from |o->input|.
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
mcp_status mcp__config_discover(const mcp_discovery_opts *o, mcp_config_set **out, mcp_error *err);

#endif /* MCP_DISCOVER_H */
