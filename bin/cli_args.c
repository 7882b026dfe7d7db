/* SPDX-License-Identifier: MIT */
/*
 * cli_args.c: the command line: the --help text, option parsing into
 * g_cli, and the ad-hoc server definitions (--stdio with its -e
 * environment, --url, --sse, with their --name, -H headers and the HTTP,
 * TLS and OAuth options) as client options for the manager; a stdio
 * server's default name is the package or script its launcher runs
 * (stdio_default_name).
 *
 * Threads: the main thread only, before the manager starts; g_cli is
 * read-only after parse_options().  A bad option ends the process with
 * exit code 2 (usage_error, config_error).  Knows nothing of the manager.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"

#define DEFAULT_TIMEOUT_MS 30000
/* Longest server name the manager accepts. */
#define NAME_MAX_LEN 100

/* The --help text, which also documents the exit codes. */
static void usage(FILE *f) {
  fprintf(f, "Usage: " PROG " [global options] <command> [args]\n"
             "\n"
             "Talks to MCP (Model Context Protocol) servers over stdio and HTTP.\n"
             "\n"
             "Commands:\n"
             "  tools [--json] [--wait|--no-wait]\n"
             "                 list the tools of every server: SERVER, TOOL, the public\n"
             "                 name (mcp__SERVER_TOOL) and the description; \"(deferred)\"\n"
             "                 marks tools served from the cache while their server is\n"
             "                 still connecting.  --json prints a JSON array of {name,\n"
             "                 server, tool, deferred, description, inputSchema, ...}.\n"
             "                 --wait (the default) waits (up to --timeout) until every\n"
             "                 server is ready or has failed, naming those still\n"
             "                 connecting on stderr when it is a terminal; --no-wait\n"
             "                 prints once the startup gate (250 ms) has passed.  On a\n"
             "                 terminal, descriptions are cut to its width\n"
             "  call TOOL [ARGS_JSON | KEY=VALUE | KEY:=JSON ...]\n"
             "                 call a tool and print the result JSON.  Its arguments:\n"
             "                 ARGS_JSON (a JSON object, default none), KEY=VALUE (a\n"
             "                 string: text=hi) and KEY:=JSON (any JSON value: n:=3,\n"
             "                 on:=true), merged left to right.  TOOL is a public name\n"
             "                 (mcp__SERVER_TOOL), SERVER/TOOL, or a bare tool name that\n"
             "                 exactly one server has\n"
             "  servers [--json] [--check] [--wait|--no-wait]\n"
             "                 show every server's name, type, state (connecting, ready,\n"
             "                 deferred, backoff, failed, disabled), tool count and last\n"
             "                 error; --json prints the manager's status array.  Waits like\n"
             "                 tools.  Exit 0 even when servers failed, unless --check:\n"
             "                 then exit 3 when an enabled server is not ready\n"
             "  ping           ping every server\n"
             "  bench ...      load generator: calls/s and latency as one JSON line\n"
             "                 (mcpconn bench --help)\n"
             "  prompts [--json]\n"
             "                 list every server's prompts: server, name, arguments\n"
             "                 (optional ones marked '?') and description.  Waits like\n"
             "                 tools; --json prints a JSON array of {name (SERVER/NAME),\n"
             "                 server, prompt, description, arguments, ...}\n"
             "  prompts get SERVER/NAME [ARGS_JSON | KEY=VALUE ...] [--json]\n"
             "                 get a prompt and print its messages, one \"ROLE: text\"\n"
             "                 each (--json: the GetPromptResult).  With one server,\n"
             "                 NAME alone will do.  Arguments are strings\n"
             "  resources [--json]\n"
             "                 list every server's resources: server, URI, name, MIME\n"
             "                 type and description (--json: a JSON array, each item\n"
             "                 with its server)\n"
             "  resources templates [--json]\n"
             "                 list every server's resource templates, likewise\n"
             "  resources read SERVER URI [--json]\n"
             "                 read a resource and print its text (--json: the\n"
             "                 ReadResourceResult).  With one server, URI alone will do\n"
             "  skills [SERVER] [--json]\n"
             "                 list the skills (io.modelcontextprotocol/skills) of every\n"
             "                 server, or of one: server, name, SKILL.md URI, description\n"
             "                 (--json: the skills/list entries, each with its server)\n"
             "  skills SERVER/NAME [FILE] [--json]\n"
             "                 load a skill and print its SKILL.md, once its size, digest\n"
             "                 and frontmatter match the listing; with FILE (a path in\n"
             "                 the skill, or its URI) print that file of it instead,\n"
             "                 verified likewise.  NAME may be the SKILL.md URI; with one\n"
             "                 server, NAME alone will do\n"
             "  tasks SERVER [--json]\n"
             "                 list a server's tasks: those calls recorded in the cache\n"
             "                 directory, and a 2025-11-25 server's own tasks/list: id,\n"
             "                 tool, status, last update, status message\n"
             "  tasks SERVER ID [--cancel] [--json]\n"
             "                 show one task (tasks/get); --cancel cancels it first\n"
             "                 (tasks/cancel)\n"
             "  request METHOD [PARAMS_JSON]\n"
             "                 send any request to one server, print the result JSON\n"
             "  trust          trust the project files found from here (the nearest\n"
             "                 .mcp.json, and those --import finds in the project) as\n"
             "                 they are now: print what they run and remember them\n"
             "\n"
             "Servers given on the command line (each may be followed by --name):\n"
             "  --stdio 'CMD ARGS...'  a stdio server; the text is split into words by\n"
             "                         spaces, 'single' and \"double\" quotes and backslash\n"
             "                         (no shell is run)\n"
             "  --url URL              a Streamable HTTP server (http or https; falls back\n"
             "                         to legacy HTTP+SSE when the server refuses it)\n"
             "  --sse                  make the --url just before it legacy HTTP+SSE only\n"
             "  -H, --header 'NAME: VALUE'\n"
             "                         send a header with every request to the --url just\n"
             "                         before it; repeatable.  CR or LF is refused\n"
             "  -e, --env KEY=VALUE    set KEY in the environment of the --stdio just\n"
             "                         before it; repeatable\n"
             "  --name NAME            name the --stdio or --url just before it (default:\n"
             "                         the package or script a launcher such as npx, uvx,\n"
             "                         node or python runs, else the command's basename;\n"
             "                         the URL's host); names use A-Z a-z 0-9 _ . : - (at\n"
             "                         most 100)\n"
             "\n"
             "HTTP and TLS, for every --url server:\n"
             "  --cacert FILE          trust the CA certificates in FILE (PEM)\n"
             "  --capath DIR           trust the CA certificates in DIR (hashed, PEM)\n"
             "  --cert FILE            client certificate (PEM) for mutual TLS\n"
             "  --key FILE             its private key (default: in the --cert file)\n"
             "  --insecure             do not verify the server's certificate\n"
             "  --http1.1              HTTP/1.1 only (https URLs otherwise negotiate\n"
             "                         HTTP/2 by ALPN)\n"
             "  --h2c                  HTTP/2 with prior knowledge: h2c on http URLs, h2\n"
             "                         without fallback on https URLs\n"
             "  --client-id ID         OAuth: a client id registered with the server's\n"
             "                         authorization server (default: dynamic registration)\n"
             "  --client-secret SECRET OAuth: that client's secret, if it has one\n"
             "  --dpop on|off|auto     OAuth: DPoP-bound tokens (RFC 9449); auto (default)\n"
             "                         when the authorization server supports them\n"
             "  --workload-jwt-file FILE OAuth: get tokens for this workload's JWT in FILE\n"
             "                         (RFC 7523 JWT bearer grant, read at each request)\n"
             "  A server that answers 401 is authorized with OAuth: the URL to open is\n"
             "  printed, and the browser's redirect is caught on 127.0.0.1; tokens are\n"
             "  kept in $XDG_DATA_HOME/mcpconn/oauth (~/.local/share/mcpconn/oauth)\n"
             "\n"
             "Configuration files:\n"
             "  --config FILE          add the servers of a JSON file; repeatable, the first\n"
             "                         definition of a name wins.  Format:\n"
             "                         {\"mcpServers\": {\"NAME\": {\"command\": \"...\",\n"
             "                         \"args\": [...], \"env\": {...}, \"cwd\": \"...\"}\n"
             "                         or {\"type\": \"http\"|\"sse\", \"url\": \"...\",\n"
             "                         \"headers\": {...}, \"http2\": \"auto\"|\"off\"|\n"
             "                         \"prior-knowledge\", \"caFile\", \"caDir\",\n"
             "                         \"clientCert\", \"clientKey\", \"insecure\"}, plus\n"
             "                         \"timeout\" (ms), \"protocol\" (auto, modern, legacy\n"
             "                         or a revision) and \"enabled\"}, \"disabledServers\":\n"
             "                         [...]}; ${VAR} and ${VAR:-default} are expanded, and\n"
             "                         an env or header value \"!cmd\" is cmd's output.\n"
             "                         Another client's file (Claude Code, VS Code, Cline,\n"
             "                         Zed, OpenCode, Codex .toml, ...) is read in its own\n"
             "                         format, known from its shape or --config-format\n"
             "  --config-format FORMAT read every --config file as FORMAT: claude-code,\n"
             "                         claude-desktop, cursor, vscode, windsurf, gemini,\n"
             "                         codex, opencode, cline, zed or mcpconn\n"
             "  --input ID=VALUE       the value of ${input:ID} in config files (VS Code's\n"
             "                         prompted inputs); repeatable.  A server that needs\n"
             "                         an input without one is skipped with a warning\n"
             "  --no-project-config    skip project files (.mcp.json, and those --import\n"
             "                         finds in the project)\n"
             "  --trust-project        use the project files for this run without asking\n"
             "  --no-user-config       skip the user's files (the user file, and those\n"
             "                         --import finds in the home directory)\n"
             "  --import LIST          also read other clients' files; LIST is a comma-\n"
             "                         separated list of claude, claude-desktop, cline,\n"
             "                         codex, cursor, vscode, windsurf, gemini, opencode,\n"
             "                         zed, or all\n"
             "\n"
             "Discovery reads the nearest .mcp.json from the working directory upwards\n"
             "(stopping at a folder holding .git) and $XDG_CONFIG_HOME/mcpconn/mcp.json\n"
             "(default ~/.config/mcpconn/mcp.json).  It is on when no --stdio, --url or\n"
             "--config is given, or when --import is.  A project file came with the\n"
             "directory, so its servers run only once you trust it: with 'trust' or\n"
             "by answering 'a' at the prompt (remembered, for this path and content, in\n"
             "$XDG_CONFIG_HOME/mcpconn/trusted-projects.json; a changed file is asked\n"
             "about again), by 'y' (this run), or with --trust-project.  Without a\n"
             "terminal its servers are left out, with one line on stderr.  When\n"
             "discovery finds no server at all, the bundled demo server is used (found\n"
             "through $MCPCONN_DEMO_SERVER, next to this program, or where it was\n"
             "installed).\n"
             "\n"
             "Other options:\n"
             "  -s, --server NAME      use only the named server (the others are still\n"
             "                         started); repeatable\n"
             "  --timeout MS           timeout of connects, of each request and of waiting\n"
             "                         for servers, in ms (default: a config entry's\n"
             "                         \"timeout\", else 30000; 0: none)\n"
             "  --protocol MODE        MCP era: auto (the default: probe with\n"
             "                         server/discover, fall back to initialize), modern\n"
             "                         (2026-07-28 only), legacy (initialize only) or a\n"
             "                         revision; for --stdio and --url servers, and config\n"
             "                         entries without a \"protocol\" field\n"
             "  -q, --quiet            no notices, warnings or progress on stderr\n"
             "  -v, --verbose          also print the library's log on stderr\n"
             "  --no-color             no colour on a terminal (as NO_COLOR=1 does)\n"
             "  -h, --help             show this help and exit\n"
             "  --version              show the version and exit\n"
             "\n"
             "While `call` runs, progress is shown on stderr when stderr is a terminal;\n"
             "Ctrl-C cancels the call on the server.\n"
             "\n"
             "Exit status: 0 success; 1 the tool reported an error (isError: true; the\n"
             "result is still printed); 2 usage or configuration error (bad option, bad\n"
             "JSON, unknown or ambiguous tool, unknown prompt or resource, invalid or\n"
             "unreadable --config file); 3 connection, protocol or timeout error; 130\n"
             "interrupted.\n");
}

/* ---- the command line ------------------------------------------------- */

/* Global so that exit() from deep inside parsing leaks nothing visible. */
struct cli g_cli;

void free_cli(struct cli *cli) {
  for (size_t i = 0; i < cli->n_adhoc; i++) {
    free(cli->adhoc[i].name);
    free(cli->adhoc[i].url);
    mcp_client_options_free(cli->adhoc[i].co);
  }
  free(cli->adhoc);
  strv_free(&cli->configs);
  strv_free(&cli->only);
  strv_free(&cli->inputs);
}

/*
 * Splits |s| into words the way a shell would, without running one: blanks
 * separate words; '...' keeps its text literally; "..." keeps its text but
 * lets backslash escape " and \; outside quotes a backslash keeps the next
 * character literally.  Returns NULL on success, else why it failed.
 */
static const char *split_words(const char *s, struct strv *out) {
  size_t len = 0;
  char *word = xmalloc(strlen(s) + 1);
  bool in_word = false;
  for (const char *p = s;; p++) {
    char c = *p;
    if (c == '\0' || c == ' ' || c == '\t' || c == '\n') {
      if (in_word) {
        word[len] = '\0';
        strv_push(out, xstrdup(word));
        len = 0;
        in_word = false;
      }
      if (c == '\0') break;
      continue;
    }
    in_word = true;
    if (c == '\'') {
      for (p++; *p && *p != '\''; p++) word[len++] = *p;
      if (!*p) goto unterminated;
    } else if (c == '"') {
      for (p++; *p && *p != '"'; p++) {
        if (*p == '\\' && (p[1] == '"' || p[1] == '\\')) p++;
        word[len++] = *p;
      }
      if (!*p) goto unterminated;
    } else if (c == '\\') {
      if (!p[1]) {
        free(word);
        return "a trailing backslash";
      }
      word[len++] = *++p;
    } else {
      word[len++] = c;
    }
  }
  free(word);
  return NULL;

unterminated:
  free(word);
  return "an unterminated quote";
}

static bool name_char_ok(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == ':' || c == '-';
}

/* What the manager accepts: [A-Za-z0-9_.:-]{1,100}. */
static bool valid_name(const char *name) {
  size_t n = strlen(name);
  if (n == 0 || n > NAME_MAX_LEN) return false;
  for (const char *p = name; *p; p++)
    if (!name_char_ok(*p)) return false;
  return true;
}

/* A valid default name from |text| (|len| bytes): other characters become
 * '_'.  A new string. */
static char *default_name(const char *text, size_t len) {
  if (len > NAME_MAX_LEN) len = NAME_MAX_LEN;
  if (len == 0) return xstrdup("server");
  char *s = xstrndup(text, len);
  for (char *p = s; *p; p++)
    if (!name_char_ok(*p)) *p = '_';
  return s;
}

/* The host of an http(s) URL, without brackets or port; a new string. */
static char *url_host_name(const char *url) {
  const char *p = strstr(url, "://");
  p = p ? p + 3 : url;
  const char *end = p + strcspn(p, "/?#");
  const char *at = memchr(p, '@', (size_t)(end - p));
  if (at) p = at + 1;
  if (*p == '[') {
    const char *close = memchr(p, ']', (size_t)(end - p));
    if (close) return default_name(p + 1, (size_t)(close - p - 1));
  }
  const char *colon = memchr(p, ':', (size_t)(end - p));
  return default_name(p, (size_t)((colon ? colon : end) - p));
}

static struct adhoc *add_adhoc(struct cli *cli) {
  if (cli->n_adhoc == cli->cap_adhoc) {
    cli->cap_adhoc = cli->cap_adhoc ? cli->cap_adhoc * 2 : 4;
    cli->adhoc = xrealloc(cli->adhoc, cli->cap_adhoc * sizeof(*cli->adhoc));
  }
  struct adhoc *a = &cli->adhoc[cli->n_adhoc++];
  memset(a, 0, sizeof(*a));
  a->co = mcp_client_options_new();
  if (!a->co) {
    fputs(PROG ": out of memory\n", stderr);
    exit(EXIT_CONNECTION);
  }
  return a;
}

/* ---- default names of stdio servers ---------------------------------- */

static bool word_in(const char *w, const char *const *list) {
  for (; *list; list++)
    if (strcmp(w, *list) == 0) return true;
  return false;
}

/* The name part of a package spec: "@scope/pkg@1.2" -> "pkg",
 * "pkg==1.0" or "pkg[extra]" -> "pkg"; [*start, *end) in |spec|. */
static void package_part(const char *spec, const char **start, const char **end) {
  const char *p = spec;
  if (*p == '@') {
    const char *slash = strchr(p, '/');
    if (slash && slash[1]) p = slash + 1;
  } else if (strchr(p, '/')) {
    p = base_name(p); /* a path or a URL */
  }
  *start = p;
  *end = p + strcspn(p, "@=<>~![ ");
}

/* The stem of a script path, or of its project's directory when the file
 * is an entry point ("pkg/dist/index.js" -> "pkg"); [*start, *end). */
static void script_part(const char *path, const char **start, const char **end) {
  static const char *const entry[] = {"index", "main", "cli", "server", "__main__", NULL};
  static const char *const build_dirs[] = {"dist", "build", "src", "lib", "bin", "out", NULL};
  const char *b = base_name(path);
  const char *dot = strrchr(b, '.');
  const char *e = dot && dot != b ? dot : b + strlen(b);
  char stem[64];
  snprintf(stem, sizeof(stem), "%.*s", (int)(e - b), b);
  if (word_in(stem, entry)) {
    /* Walk up past build directories to the project's own. */
    const char *dir_end = b > path ? b - 1 : path;
    while (dir_end > path) {
      const char *d = dir_end;
      while (d > path && d[-1] != '/') d--;
      char dir[64];
      snprintf(dir, sizeof(dir), "%.*s", (int)(dir_end - d), d);
      if (!word_in(dir, build_dirs) && strcmp(dir, ".") != 0 && strcmp(dir, "..") != 0 && dir[0]) {
        *start = d;
        *end = dir_end;
        return;
      }
      dir_end = d > path ? d - 1 : path;
    }
  }
  *start = b;
  *end = e;
}

/*
 * The default name of a stdio server: the package or script it runs, not
 * its launcher.  "npx -y @modelcontextprotocol/server-filesystem /tmp" ->
 * "server-filesystem", "node path/to/demo.js" -> "demo", "uvx
 * mcp-server-fetch" -> "mcp-server-fetch", "python -m mcp_server_time" ->
 * "mcp_server_time"; else the command's basename.  A new string.
 */
static char *stdio_default_name(char *const *w) {
  /* Launchers whose first operand is a package to fetch and run. */
  static const char *const pkg_runners[] = {"npx", "pnpx", "bunx", "uvx", "pipx", NULL};
  /* Interpreters whose first operand is a script. */
  static const char *const interpreters[] = {"node",    "nodejs", "deno",    "bun",     "tsx",
                                             "ts-node", "python", "python3", "python2", "ruby",
                                             "perl",    "php",    "sh",      "bash",    NULL};
  /* Their options that take a value as the next word. */
  static const char *const valued[] = {"-p",       "--package", "-r", "--require",
                                       "--import", "--loader",  "-W", "-X",
                                       "--from",   "--with",    "-I", NULL};
  /* Options that mean there is no script (code on the command line). */
  static const char *const inline_code[] = {"-e", "--eval", "-c", "-p", "--print", NULL};
  size_t i = 0;
  /* env [VAR=VALUE...] CMD */
  while (w[i] && strcmp(base_name(w[i]), "env") == 0) {
    i++;
    while (w[i] && (strchr(w[i], '=') || w[i][0] == '-')) i++;
  }
  if (!w[i]) return default_name("server", 6);
  const char *cmd = base_name(w[i]);
  /* python3.12 -> python3: compare without a version suffix. */
  char launcher[64];
  snprintf(launcher, sizeof(launcher), "%s", cmd);
  char *v = launcher + strcspn(launcher, "0123456789");
  if (v != launcher && strncmp(launcher, "python", 6) == 0) {
    if (strspn(v, "0123456789.") == strlen(v)) v[strcspn(v, ".")] = '\0';
  }
  bool pkg = word_in(launcher, pkg_runners);
  bool interp = word_in(launcher, interpreters);
  size_t j = i + 1;
  /* npm exec PKG, pnpm dlx PKG, yarn dlx PKG, uv run [--with X] PKG,
   * uv tool run PKG, deno run SCRIPT, bun run SCRIPT. */
  if (!pkg && !interp && w[j]) {
    if ((strcmp(launcher, "npm") == 0 && strcmp(w[j], "exec") == 0) ||
        ((strcmp(launcher, "pnpm") == 0 || strcmp(launcher, "yarn") == 0) &&
         strcmp(w[j], "dlx") == 0)) {
      pkg = true;
      j++;
    } else if (strcmp(launcher, "uv") == 0) {
      if (strcmp(w[j], "tool") == 0 && w[j + 1] && strcmp(w[j + 1], "run") == 0) j += 2, pkg = true;
      else if (strcmp(w[j], "run") == 0) j++, pkg = true;
    }
  }
  if (interp && w[j] && (strcmp(launcher, "deno") == 0 || strcmp(launcher, "bun") == 0) &&
      strcmp(w[j], "run") == 0)
    j++;
  if (pkg || interp) {
    for (; w[j]; j++) {
      if (strcmp(w[j], "--") == 0) {
        j++;
        break;
      }
      if (w[j][0] != '-') break;
      if (interp && strncmp(launcher, "python", 6) == 0 && strcmp(w[j], "-m") == 0 && w[j + 1]) {
        /* python -m package.module: the module's package, else it */
        const char *m = w[j + 1];
        return default_name(m, strcspn(m, "."));
      }
      if (interp && word_in(w[j], inline_code) && !(pkg && strcmp(w[j], "-p") == 0))
        return default_name(cmd, strlen(cmd));
      if (word_in(w[j], valued) && !strchr(w[j], '=') && w[j + 1]) j++;
    }
    if (w[j] && w[j][0]) {
      const char *a, *b;
      const char *ext = strrchr(base_name(w[j]), '.');
      bool script = ext && word_in(ext, (const char *const[]){".py", ".js", ".mjs", ".cjs", ".ts",
                                                              ".mts", NULL});
      if (pkg && !script) package_part(w[j], &a, &b);
      else script_part(w[j], &a, &b);
      if (b > a) return default_name(a, (size_t)(b - a));
    }
  }
  return default_name(cmd, strlen(cmd));
}

static void add_stdio(struct cli *cli, const char *cmdline) {
  struct strv words = {0};
  const char *why = split_words(cmdline, &words);
  if (why) {
    strv_free(&words);
    usage_error("--stdio '%s': %s", cmdline, why);
  }
  if (!words.n) {
    strv_free(&words);
    usage_error("--stdio needs a command");
  }
  struct adhoc *a = add_adhoc(cli);
  a->name = stdio_default_name(words.v);
  mcp_status st = mcp_client_options_set_stdio(a->co, (const char *const *)words.v);
  strv_free(&words);
  if (st != MCP_OK) usage_error("--stdio '%s': %s", cmdline, mcp_strerror(st));
}

static void add_url(struct cli *cli, const char *url) {
  if (strncasecmp(url, "http://", 7) != 0 && strncasecmp(url, "https://", 8) != 0)
    usage_error("--url '%s': not an http:// or https:// URL", url);
  struct adhoc *a = add_adhoc(cli);
  a->is_url = true;
  a->url = xstrdup(url);
  a->name = url_host_name(url);
  if (mcp_client_options_set_http(a->co, url, MCP_HTTP_TRANSPORT_AUTO) != MCP_OK)
    usage_error("--url '%s': not a valid http:// or https:// URL", url);
}

/* The --url just before |option|; exits 2 when there is none. */
static struct adhoc *last_url(struct cli *cli, const char *option, bool follows_server) {
  if (!follows_server || !cli->n_adhoc || !cli->adhoc[cli->n_adhoc - 1].is_url)
    usage_error("%s must follow the --url it applies to", option);
  return &cli->adhoc[cli->n_adhoc - 1];
}

/* A character of an HTTP header name (RFC 9110 token). */
static bool is_tchar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
         (c && strchr("!#$%&'*+-.^_`|~", c));
}

/*
 * --header 'NAME: VALUE' for the --url just before it.  The value may be a
 * secret (Authorization), so messages name the header but never show it.
 */
static void add_header(struct cli *cli, const char *arg, bool follows_server) {
  struct adhoc *a = last_url(cli, "--header", follows_server);
  if (strpbrk(arg, "\r\n")) config_error("--header: a header must not contain CR or LF");
  const char *colon = strchr(arg, ':');
  if (!colon) config_error("--header: expected 'NAME: VALUE'");
  const char *n0 = arg, *n1 = colon;
  while (n0 < n1 && (*n0 == ' ' || *n0 == '\t')) n0++;
  while (n1 > n0 && (n1[-1] == ' ' || n1[-1] == '\t')) n1--;
  if (n0 == n1) config_error("--header: the header has no name");
  for (const char *p = n0; p < n1; p++)
    if (!is_tchar(*p)) config_error("--header '%.*s': not a valid header name", (int)(n1 - n0), n0);
  const char *v0 = colon + 1, *v1 = colon + strlen(colon);
  while (*v0 == ' ' || *v0 == '\t') v0++;
  while (v1 > v0 && (v1[-1] == ' ' || v1[-1] == '\t')) v1--;
  char *name = xstrndup(n0, (size_t)(n1 - n0));
  char *value = xstrndup(v0, (size_t)(v1 - v0));
  mcp_status st = mcp_client_options_add_header(a->co, name, value);
  free(value);
  if (st == MCP_EINVAL) {
    complain("--header '%s': the HTTP transport sets this header itself", name);
    free(name);
    exit(EXIT_USAGE);
  }
  free(name);
  if (st != MCP_OK) config_error("--header: %s", mcp_strerror(st));
}

/* -e KEY=VALUE: an environment variable of the --stdio just before it. */
static void add_env(struct cli *cli, const char *arg, bool follows_server) {
  if (!follows_server || !cli->n_adhoc || cli->adhoc[cli->n_adhoc - 1].is_url)
    usage_error("-e must follow the --stdio it applies to");
  const char *eq = strchr(arg, '=');
  if (!eq || eq == arg) usage_error("-e '%.*s': expected KEY=VALUE", (int)strcspn(arg, "="), arg);
  char *key = xstrndup(arg, (size_t)(eq - arg));
  /* The value may be a secret: messages show the key only. */
  mcp_status st = mcp_client_options_set_env(cli->adhoc[cli->n_adhoc - 1].co, key, eq + 1);
  if (st != MCP_OK) {
    complain("-e %s: %s", key, mcp_strerror(st));
    free(key);
    exit(EXIT_USAGE);
  }
  free(key);
}

static void rename_last(struct cli *cli, const char *name, bool follows_server) {
  if (!follows_server || !cli->n_adhoc)
    usage_error("--name must follow the --stdio or --url it names");
  if (!valid_name(name))
    usage_error("--name '%s': a server name is 1 to 100 of A-Z a-z 0-9 _ . : -", name);
  struct adhoc *a = &cli->adhoc[cli->n_adhoc - 1];
  free(a->name);
  a->name = xstrdup(name);
}

static unsigned parse_imports(const char *list) {
  static const struct {
    const char *name;
    unsigned bit;
  } names[] = {{"claude", MCP_IMPORT_CLAUDE},
               {"claude-desktop", MCP_IMPORT_CLAUDE_DESKTOP},
               {"cline", MCP_IMPORT_CLINE},
               {"codex", MCP_IMPORT_CODEX},
               {"cursor", MCP_IMPORT_CURSOR},
               {"vscode", MCP_IMPORT_VSCODE},
               {"windsurf", MCP_IMPORT_WINDSURF},
               {"gemini", MCP_IMPORT_GEMINI},
               {"opencode", MCP_IMPORT_OPENCODE},
               {"zed", MCP_IMPORT_ZED},
               {"all", MCP_IMPORT_ALL}};
  unsigned bits = 0;
  const char *p = list;
  for (;;) {
    size_t len = strcspn(p, ",");
    size_t i;
    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
      if (strlen(names[i].name) == len && strncasecmp(p, names[i].name, len) == 0) break;
    if (i == sizeof(names) / sizeof(names[0]))
      usage_error(
          "--import '%s': unknown client '%.*s' (use claude, claude-desktop, cline, "
          "codex, cursor, vscode, windsurf, gemini, opencode, zed or all, separated by commas)",
          list, (int)len, p);
    bits |= names[i].bit;
    if (!p[len]) break;
    p += len + 1;
  }
  return bits;
}

/*
 * Fails when two ad-hoc servers share a name.  Checked once every option is
 * read, since a --name after a --stdio may still resolve a clash.
 */
static void check_unique_names(struct cli *cli) {
  for (size_t i = 0; i < cli->n_adhoc; i++)
    for (size_t j = i + 1; j < cli->n_adhoc; j++)
      if (strcmp(cli->adhoc[i].name, cli->adhoc[j].name) == 0)
        usage_error("two servers are named '%s'; give one another name with "
                    "--name NAME",
                    cli->adhoc[i].name);
}

/* OAuth for one --url server, with the pre-registered client if given. */
static void apply_oauth(struct cli *cli, struct adhoc *a) {
  mcp_oauth_options *oa = cli_oauth(a->name);
  if (!oa) config_error("OAuth options: out of memory");
  mcp_status st = MCP_OK;
  if (cli->client_id) st = mcp_oauth_options_set_client(oa, cli->client_id, cli->client_secret);
  if (st == MCP_OK && cli->dpop) st = mcp_oauth_options_set_dpop(oa, (mcp_oauth_dpop)cli->dpop);
  if (st == MCP_OK && cli->workload_jwt)
    st = mcp_oauth_options_set_workload_jwt(oa, NULL, cli->workload_jwt);
  if (st == MCP_OK) st = mcp_client_options_set_oauth(a->co, oa);
  mcp_oauth_options_free(oa);
  if (st != MCP_OK) config_error("OAuth options: %s", mcp_strerror(st));
}

/* Applies the HTTP and TLS options to every --url server. */
static void apply_http_options(struct cli *cli) {
  size_t n_url = 0;
  for (size_t i = 0; i < cli->n_adhoc; i++) n_url += cli->adhoc[i].is_url;
  if (cli->http_option && n_url == 0)
    usage_error("%s applies to --url servers, and none is given", cli->http_option);
  if (cli->key && !cli->cert) usage_error("--key needs --cert");
  if (cli->client_secret && !cli->client_id) usage_error("--client-secret needs --client-id");
  if (n_url) loopback_open();
  for (size_t i = 0; i < cli->n_adhoc; i++) {
    struct adhoc *a = &cli->adhoc[i];
    if (!a->is_url) continue;
    mcp_status st = MCP_OK;
    if (cli->cacert || cli->capath) st = mcp_client_options_set_ca(a->co, cli->cacert, cli->capath);
    if (st == MCP_OK && cli->cert)
      st = mcp_client_options_set_client_cert(a->co, cli->cert, cli->key ? cli->key : cli->cert);
    if (st != MCP_OK) config_error("TLS options: %s", mcp_strerror(st));
    if (cli->insecure) mcp_client_options_set_insecure(a->co, true);
    if (cli->http_version >= 0)
      mcp_client_options_set_http_version(a->co, (mcp_http_version)cli->http_version);
    apply_oauth(cli, a);
  }
}

enum {
  OPT_STDIO = 256,
  OPT_URL,
  OPT_SSE,
  OPT_NAME,
  OPT_CONFIG,
  OPT_CONFIG_FORMAT,
  OPT_INPUT,
  OPT_NO_PROJECT,
  OPT_NO_USER,
  OPT_IMPORT,
  OPT_CACERT,
  OPT_CAPATH,
  OPT_CERT,
  OPT_KEY,
  OPT_INSECURE,
  OPT_HTTP11,
  OPT_H2C,
  OPT_TIMEOUT,
  OPT_PROTOCOL,
  OPT_VERSION,
  OPT_CLIENT_ID,
  OPT_CLIENT_SECRET,
  OPT_DPOP,
  OPT_WORKLOAD_JWT,
  OPT_TRUST_PROJECT,
  OPT_NO_COLOR
};

static const struct option long_options[] = {
    {"stdio", required_argument, NULL, OPT_STDIO},
    {"url", required_argument, NULL, OPT_URL},
    {"sse", no_argument, NULL, OPT_SSE},
    {"header", required_argument, NULL, 'H'},
    {"env", required_argument, NULL, 'e'},
    {"name", required_argument, NULL, OPT_NAME},
    {"config", required_argument, NULL, OPT_CONFIG},
    {"config-format", required_argument, NULL, OPT_CONFIG_FORMAT},
    {"input", required_argument, NULL, OPT_INPUT},
    {"no-project-config", no_argument, NULL, OPT_NO_PROJECT},
    {"no-user-config", no_argument, NULL, OPT_NO_USER},
    {"trust-project", no_argument, NULL, OPT_TRUST_PROJECT},
    {"import", required_argument, NULL, OPT_IMPORT},
    {"cacert", required_argument, NULL, OPT_CACERT},
    {"capath", required_argument, NULL, OPT_CAPATH},
    {"cert", required_argument, NULL, OPT_CERT},
    {"key", required_argument, NULL, OPT_KEY},
    {"insecure", no_argument, NULL, OPT_INSECURE},
    {"http1.1", no_argument, NULL, OPT_HTTP11},
    {"h2c", no_argument, NULL, OPT_H2C},
    {"client-id", required_argument, NULL, OPT_CLIENT_ID},
    {"client-secret", required_argument, NULL, OPT_CLIENT_SECRET},
    {"dpop", required_argument, NULL, OPT_DPOP},
    {"workload-jwt-file", required_argument, NULL, OPT_WORKLOAD_JWT},
    {"server", required_argument, NULL, 's'},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"protocol", required_argument, NULL, OPT_PROTOCOL},
    {"quiet", no_argument, NULL, 'q'},
    {"verbose", no_argument, NULL, 'v'},
    {"no-color", no_argument, NULL, OPT_NO_COLOR},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, OPT_VERSION},
    {NULL, 0, NULL, 0}};

static void set_http_version(struct cli *cli, int v, const char *option) {
  if (cli->http_version >= 0 && cli->http_version != v)
    usage_error("--http1.1 and --h2c exclude each other");
  cli->http_version = v;
  if (!cli->http_option) cli->http_option = option;
}

static void set_tls_path(struct cli *cli, const char **slot, const char *option,
                         const char *value) {
  if (!*value) usage_error("%s needs a path", option);
  *slot = value;
  if (!cli->http_option) cli->http_option = option;
}

void parse_options(int argc, char **argv) {
  /* True right after --stdio, --url or an option that applies to it. */
  bool follows_server = false;
  int opt;
  opterr = 0;
  g_cli.timeout_ms = DEFAULT_TIMEOUT_MS;
  g_cli.http_version = -1;
  while ((opt = getopt_long(argc, argv, "+:s:H:e:qvh", long_options, NULL)) != -1) {
    bool after_server = follows_server;
    follows_server = false;
    switch (opt) {
    case OPT_STDIO:
      add_stdio(&g_cli, optarg);
      follows_server = true;
      break;
    case OPT_URL:
      add_url(&g_cli, optarg);
      follows_server = true;
      break;
    case OPT_SSE: {
      struct adhoc *a = last_url(&g_cli, "--sse", after_server);
      if (mcp_client_options_set_http(a->co, a->url, MCP_HTTP_TRANSPORT_LEGACY_SSE) != MCP_OK)
        usage_error("--url '%s': not a valid URL", a->url);
      follows_server = true;
      break;
    }
    case 'H':
      add_header(&g_cli, optarg, after_server);
      follows_server = true;
      break;
    case 'e':
      add_env(&g_cli, optarg, after_server);
      follows_server = true;
      break;
    case OPT_NAME:
      rename_last(&g_cli, optarg, after_server);
      follows_server = true;
      break;
    case OPT_CONFIG:
      if (!*optarg) usage_error("--config needs a file");
      strv_push(&g_cli.configs, xstrdup(optarg));
      break;
    case OPT_CONFIG_FORMAT: {
      mcp_manager_options *t = mcp_manager_options_new();
      mcp_status st = t ? mcp_manager_options_set_config_format(t, optarg) : MCP_ENOMEM;
      mcp_manager_options_free(t);
      if (st != MCP_OK)
        usage_error("--config-format: unknown format '%s' (use claude-code, claude-desktop, "
                    "cursor, vscode, windsurf, gemini, codex, opencode, cline, zed or mcpconn)",
                    optarg);
      g_cli.config_format = optarg;
      break;
    }
    case OPT_INPUT: {
      const char *eq = strchr(optarg, '=');
      if (!eq || eq == optarg) usage_error("--input needs ID=VALUE, not '%s'", optarg);
      strv_push(&g_cli.inputs, xstrdup(optarg));
      break;
    }
    case OPT_NO_PROJECT: g_cli.no_project = true; break;
    case OPT_TRUST_PROJECT: g_cli.trust_project = true; break;
    case OPT_NO_USER: g_cli.no_user = true; break;
    case OPT_IMPORT: g_cli.imports |= parse_imports(optarg); break;
    case OPT_CACERT: set_tls_path(&g_cli, &g_cli.cacert, "--cacert", optarg); break;
    case OPT_CAPATH: set_tls_path(&g_cli, &g_cli.capath, "--capath", optarg); break;
    case OPT_CERT: set_tls_path(&g_cli, &g_cli.cert, "--cert", optarg); break;
    case OPT_KEY: set_tls_path(&g_cli, &g_cli.key, "--key", optarg); break;
    case OPT_INSECURE:
      g_cli.insecure = true;
      if (!g_cli.http_option) g_cli.http_option = "--insecure";
      break;
    case OPT_HTTP11: set_http_version(&g_cli, MCP_HTTP_VERSION_1_1, "--http1.1"); break;
    case OPT_H2C: set_http_version(&g_cli, MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE, "--h2c"); break;
    case OPT_CLIENT_ID:
      if (!*optarg) usage_error("--client-id needs a client id");
      g_cli.client_id = optarg;
      if (!g_cli.http_option) g_cli.http_option = "--client-id";
      break;
    case OPT_CLIENT_SECRET:
      g_cli.client_secret = optarg;
      if (!g_cli.http_option) g_cli.http_option = "--client-secret";
      break;
    case OPT_DPOP:
      if (strcmp(optarg, "on") == 0) g_cli.dpop = MCP_OAUTH_DPOP_ON;
      else if (strcmp(optarg, "off") == 0) g_cli.dpop = MCP_OAUTH_DPOP_OFF;
      else if (strcmp(optarg, "auto") == 0) g_cli.dpop = MCP_OAUTH_DPOP_AUTO;
      else usage_error("--dpop wants on, off or auto, not '%s'", optarg);
      if (!g_cli.http_option) g_cli.http_option = "--dpop";
      break;
    case OPT_WORKLOAD_JWT:
      if (!*optarg) usage_error("--workload-jwt-file needs a file");
      g_cli.workload_jwt = optarg;
      if (!g_cli.http_option) g_cli.http_option = "--workload-jwt-file";
      break;
    case 's': strv_push(&g_cli.only, xstrdup(optarg)); break;
    case OPT_TIMEOUT: {
      char *end;
      errno = 0;
      long long ms = strtoll(optarg, &end, 10);
      if (errno || end == optarg || *end || ms < 0 || ms > INT32_MAX)
        usage_error("--timeout needs a number of milliseconds, not '%s'", optarg);
      g_cli.timeout_ms = ms;
      g_cli.timeout_given = true;
      break;
    }
    case OPT_PROTOCOL: {
      mcp_client_options *t = mcp_client_options_new();
      mcp_status st = t ? mcp_client_options_set_protocol(t, optarg) : MCP_ENOMEM;
      mcp_client_options_free(t);
      if (st != MCP_OK || !*optarg)
        usage_error("--protocol needs auto, modern, legacy or an MCP revision (2026-07-28, "
                    "2025-11-25, 2025-06-18, 2025-03-26), not '%s'",
                    optarg);
      g_cli.protocol = optarg;
      break;
    }
    case 'q': g_cli.quiet = true; break;
    case 'v': g_cli.verbose = true; break;
    case OPT_NO_COLOR: g_cli.no_color = true; break;
    case 'h': usage(stdout); exit(EXIT_OK);
    case OPT_VERSION:
      printf(PROG " %s (libmcpconn %s)\n", MCP_VERSION, mcp_version());
      exit(EXIT_OK);
    case ':': usage_error("option '%s' needs a value", argv[optind - 1]);
    default:
      if (optopt && optopt < 256) usage_error("unknown option '-%c'", optopt);
      usage_error("unknown option '%s'", argv[optind - 1]);
    }
  }
  check_unique_names(&g_cli);
  apply_http_options(&g_cli);
}
