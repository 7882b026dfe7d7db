/*
 * mcpconn: the command-line client.  It talks to MCP servers through the
 * public API only (mcpconn.h) and uses json-c just to check and print JSON.
 *
 * Shape: parse the command line into ad-hoc server definitions (--stdio,
 * --url) and manager options (--config files, discovery, imports); start
 * one mcp_manager, which connects every server in parallel and keeps the
 * namespaced tool list; wait as long as the command needs (the startup
 * gate, every server settled, or just the server a call goes to); run the
 * command; free the manager and exit with a code that says what kind of
 * failure happened (see usage()).
 *
 * Project files (a checkout's .mcp.json) are used only with a decision:
 * --trust-project, an approval in the trust store (`mcpconn trust`, or "a"
 * at the prompt), or "y" at the prompt, which cli_trust() shows when stdin
 * and stderr are a terminal.
 *
 * The diagnostics of config files (an invalid --config file or entry is a
 * usage error here) and the servers hidden by "enabled": false or
 * "disabledServers" come from mcp_manager_diagnostics(), read once the
 * manager has started; the CLI never parses the library's log lines, which
 * it only prints (-v).
 *
 * SIGINT is blocked in every thread and taken by one sigwait() thread, which
 * fires the cancel token of the request in flight, so an interrupted call
 * sends notifications/cancelled to its server before we exit with 130.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "mcpconn-bench.h"
#include "mcpconn-text.h"
#include "mcpconn.h"

#define PROG "mcpconn"
#define DEMO_SERVER_PROG "mcpconn-demo-server"
#define DEMO_SERVER_NAME "demo"
#define DEFAULT_TIMEOUT_MS 30000
/* How long past --timeout we wait for servers to settle, so that a
 * connect that times out reports its own error first (ms). */
#define SETTLE_GRACE_MS 1000
/* Upper bound on the wait for the manager's first tool-list event (ms);
 * it follows mcp_manager_start() at once unless memory ran out. */
#define FIRST_EVENT_MS 10000
/* Longest server name the manager accepts. */
#define NAME_MAX_LEN 100

/* Exit codes; usage() documents them. */
enum {
  EXIT_OK = 0,
  EXIT_TOOL_ERROR = 1,
  EXIT_USAGE = 2,
  EXIT_CONNECTION = 3,
  EXIT_INTERRUPTED = 130
};

static void usage(FILE *f) {
  fprintf(f,
"Usage: " PROG " [global options] <command> [args]\n"
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
"                 --wait waits (up to --timeout) until every server is ready\n"
"                 or has failed; --no-wait prints once the startup gate\n"
"                 (250 ms) has passed.  Default: --no-wait when stdout is a\n"
"                 terminal, --wait otherwise, so scripts get complete lists\n"
"  call TOOL [ARGS_JSON]\n"
"                 call a tool with ARGS_JSON (a JSON object, default none) and\n"
"                 print the result JSON; TOOL is a public name\n"
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
"  --name NAME            name the --stdio or --url just before it (default:\n"
"                         the command's basename, or the URL's host); names\n"
"                         use A-Z a-z 0-9 _ . : - (at most 100)\n"
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
"                         \"timeout\" (ms) and \"enabled\"}, \"disabledServers\":\n"
"                         [...]}; ${VAR} and ${VAR:-default} are expanded, and\n"
"                         an env or header value \"!cmd\" is cmd's output\n"
"  --no-project-config    skip project files (.mcp.json, and those --import\n"
"                         finds in the project)\n"
"  --trust-project        use the project files for this run without asking\n"
"  --no-user-config       skip the user's files (the user file, and those\n"
"                         --import finds in the home directory)\n"
"  --import LIST          also read other clients' files; LIST is a comma-\n"
"                         separated list of claude, cursor, vscode, windsurf,\n"
"                         gemini, or all\n"
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
"  -q, --quiet            no notices, warnings or progress on stderr\n"
"  -v, --verbose          also print the library's log on stderr\n"
"  -h, --help             show this help and exit\n"
"  --version              show the version and exit\n"
"\n"
"While `call` runs, progress is shown on stderr when stderr is a terminal;\n"
"Ctrl-C cancels the call on the server.\n"
"\n"
"Exit status: 0 success; 1 the tool reported an error (isError: true; the\n"
"result is still printed); 2 usage or configuration error (bad option, bad\n"
"JSON, unknown or ambiguous tool, invalid or unreadable --config file); 3\n"
"connection, protocol or timeout error; 130 interrupted.\n");
}

/* ---- small helpers ---------------------------------------------------- */

static void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) {
    fputs(PROG ": out of memory\n", stderr);
    exit(EXIT_CONNECTION);
  }
  return p;
}

static void *xrealloc(void *p, size_t n) {
  void *q = realloc(p, n ? n : 1);
  if (!q) {
    fputs(PROG ": out of memory\n", stderr);
    exit(EXIT_CONNECTION);
  }
  return q;
}

static char *xstrdup(const char *s) {
  size_t n = strlen(s) + 1;
  return memcpy(xmalloc(n), s, n);
}

static char *xstrndup(const char *s, size_t n) {
  char *d = xmalloc(n + 1);
  memcpy(d, s, n);
  d[n] = '\0';
  return d;
}

/* A NULL-terminated, growable array of owned strings. */
struct strv {
  char **v;
  size_t n;
  size_t cap;
};

static void strv_push(struct strv *sv, char *s) {
  if (sv->n + 2 > sv->cap) {
    sv->cap = sv->cap ? sv->cap * 2 : 8;
    sv->v = xrealloc(sv->v, sv->cap * sizeof(*sv->v));
  }
  sv->v[sv->n++] = s;
  sv->v[sv->n] = NULL;
}

static bool strv_has(const struct strv *sv, const char *s) {
  for (size_t i = 0; i < sv->n; i++)
    if (strcmp(sv->v[i], s) == 0) return true;
  return false;
}

static void strv_free(struct strv *sv) {
  for (size_t i = 0; i < sv->n; i++) free(sv->v[i]);
  free(sv->v);
  memset(sv, 0, sizeof(*sv));
}

/* A growable string. */
struct sbuf {
  char *s;
  size_t len;
  size_t cap;
};

static void sbuf_add(struct sbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void sbuf_add(struct sbuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if (b->len + (size_t)n + 1 > b->cap) {
    b->cap = (b->len + (size_t)n + 1) * 2;
    b->s = xrealloc(b->s, b->cap);
  }
  va_start(ap, fmt);
  vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Serialises writes to stderr from the library's threads (log lines,
 * progress) with ours. */
static pthread_mutex_t g_stderr_lock = PTHREAD_MUTEX_INITIALIZER;

/* Prints "mcpconn: <reason>" on stderr; the reason is kept to one line. */
static void complain(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void complain(const char *fmt, ...) {
  char line[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof(line), fmt, ap);
  va_end(ap);
  pthread_mutex_lock(&g_stderr_lock);
  fputs(PROG ": ", stderr);
  safe_puts(stderr, line, SAFE_LINE);
  fputc('\n', stderr);
  pthread_mutex_unlock(&g_stderr_lock);
}

static void usage_error(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));

static void usage_error(const char *fmt, ...) {
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof(line), fmt, ap);
  va_end(ap);
  complain("%s (see " PROG " --help)", line);
  exit(EXIT_USAGE);
}

/* A usage error without the --help hint (the reason says it all). */
static void config_error(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));

static void config_error(const char *fmt, ...) {
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof(line), fmt, ap);
  va_end(ap);
  complain("%s", line);
  exit(EXIT_USAGE);
}

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash && slash[1] ? slash + 1 : path;
}

/* Parses |text| as JSON; NULL (and a reason in |why|) when it is not.
 * |strict| refuses what json-c otherwise lets through (comments, trailing
 * commas, single quotes). */
static json_object *parse_json(const char *text, size_t len, bool strict,
                               char *why, size_t why_size) {
  json_tokener *tok = json_tokener_new();
  if (!tok) {
    snprintf(why, why_size, "out of memory");
    return NULL;
  }
  if (strict) json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
  json_object *obj = json_tokener_parse_ex(tok, text, (int)len + 1);
  enum json_tokener_error e = json_tokener_get_error(tok);
  size_t end = json_tokener_get_parse_end(tok);
  json_tokener_free(tok);
  if (e != json_tokener_success || end < len) {
    /* Report a line and column so a file is quick to fix. */
    size_t line = 1, col = 1;
    for (size_t i = 0; i < end && i < len; i++) {
      if (text[i] == '\n') {
        line++;
        col = 1;
      } else {
        col++;
      }
    }
    snprintf(why, why_size, "%s at line %zu, column %zu",
             e != json_tokener_success ? json_tokener_error_desc(e)
                                       : "unexpected text after the value",
             line, col);
    json_object_put(obj);
    return NULL;
  }
  if (!obj) snprintf(why, why_size, "null is not allowed here");
  return obj;
}

static const char *jstring(json_object *obj, const char *key) {
  json_object *v;
  if (json_object_object_get_ex(obj, key, &v) &&
      json_object_is_type(v, json_type_string))
    return json_object_get_string(v);
  return NULL;
}

/* Prints |json| pretty on stdout (as is, if it does not parse). */
static void print_json_object(json_object *obj) {
  /* json-c escapes C0 controls; safe_write escapes the rest (DEL, C1,
   * bidi and format characters, bytes that are not UTF-8), so the output
   * stays JSON with the same value and is safe on a terminal. */
  const char *text = json_object_to_json_string_ext(
      obj, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE);
  if (!text) {
    fputs(PROG ": out of memory\n", stderr);
    exit(EXIT_CONNECTION);
  }
  safe_puts(stdout, text, SAFE_JSON);
  putchar('\n');
  fflush(stdout);
}

/* Prints |json| pretty on stdout (made safe as it is, if it does not
 * parse). */
static void print_json(const char *json) {
  char why[64];
  json_object *obj = parse_json(json, strlen(json), false, why, sizeof(why));
  if (obj) {
    print_json_object(obj);
    json_object_put(obj);
  } else {
    safe_puts(stdout, json, SAFE_BLOCK);
    putchar('\n');
    fflush(stdout);
  }
}

/* Prints at most |len| bytes of server-supplied text (up to a NUL) with
 * controls and invisible characters shown as '?' (see safe_write). */
static void print_clean(const char *s, size_t len) {
  size_t n = 0;
  while (n < len && s[n]) n++;
  safe_write(stdout, s, n, SAFE_CELL);
}

/* Prints |s| clean and pads it with spaces to |width| bytes. */
static void print_cell(const char *s, size_t width) {
  print_clean(s, SIZE_MAX);
  for (size_t n = safe_width(s); n < width; n++) putchar(' ');
}

/* ---- the command line ------------------------------------------------- */

/* A server given with --stdio or --url. */
struct adhoc {
  char *name;
  bool is_url;
  char *url;              /* --url servers */
  mcp_client_options *co; /* set up as parsed; TLS options come last */
};

/* Everything the command line said. */
struct cli {
  struct adhoc *adhoc;
  size_t n_adhoc;
  size_t cap_adhoc;
  struct strv configs;    /* --config files, in order */
  struct strv only;       /* --server names */
  int64_t timeout_ms;
  bool timeout_given;
  bool quiet;
  bool verbose;
  bool no_project;
  bool no_user;
  bool trust_project;     /* --trust-project */
  unsigned imports;       /* MCP_IMPORT_* bits */
  /* HTTP and TLS options for every --url server. */
  const char *cacert;
  const char *capath;
  const char *cert;
  const char *key;
  bool insecure;
  int http_version;       /* an mcp_http_version, or -1: not given */
  const char *http_option; /* the first of them given, for messages */
  const char *client_id;   /* OAuth pre-registration, or NULL */
  const char *client_secret;
};

/* Global so that exit() from deep inside parsing leaks nothing visible. */
static struct cli g_cli;

static void free_cli(struct cli *cli) {
  for (size_t i = 0; i < cli->n_adhoc; i++) {
    free(cli->adhoc[i].name);
    free(cli->adhoc[i].url);
    mcp_client_options_free(cli->adhoc[i].co);
  }
  free(cli->adhoc);
  strv_free(&cli->configs);
  strv_free(&cli->only);
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
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '.' || c == ':' ||
         c == '-';
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
  const char *base = base_name(words.v[0]);
  a->name = default_name(base, strlen(base));
  mcp_status st =
      mcp_client_options_set_stdio(a->co, (const char *const *)words.v);
  strv_free(&words);
  if (st != MCP_OK) usage_error("--stdio '%s': %s", cmdline, mcp_strerror(st));
}

static void add_url(struct cli *cli, const char *url) {
  if (strncasecmp(url, "http://", 7) != 0 &&
      strncasecmp(url, "https://", 8) != 0)
    usage_error("--url '%s': not an http:// or https:// URL", url);
  struct adhoc *a = add_adhoc(cli);
  a->is_url = true;
  a->url = xstrdup(url);
  a->name = url_host_name(url);
  if (mcp_client_options_set_http(a->co, url, MCP_HTTP_TRANSPORT_AUTO) !=
      MCP_OK)
    usage_error("--url '%s': not a valid http:// or https:// URL", url);
}

/* The --url just before |option|; exits 2 when there is none. */
static struct adhoc *last_url(struct cli *cli, const char *option,
                              bool follows_server) {
  if (!follows_server || !cli->n_adhoc || !cli->adhoc[cli->n_adhoc - 1].is_url)
    usage_error("%s must follow the --url it applies to", option);
  return &cli->adhoc[cli->n_adhoc - 1];
}

/* A character of an HTTP header name (RFC 9110 token). */
static bool is_tchar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
         (c >= '0' && c <= '9') || (c && strchr("!#$%&'*+-.^_`|~", c));
}

/*
 * --header 'NAME: VALUE' for the --url just before it.  The value may be a
 * secret (Authorization), so messages name the header but never show it.
 */
static void add_header(struct cli *cli, const char *arg, bool follows_server) {
  struct adhoc *a = last_url(cli, "--header", follows_server);
  if (strpbrk(arg, "\r\n"))
    config_error("--header: a header must not contain CR or LF");
  const char *colon = strchr(arg, ':');
  if (!colon) config_error("--header: expected 'NAME: VALUE'");
  const char *n0 = arg, *n1 = colon;
  while (n0 < n1 && (*n0 == ' ' || *n0 == '\t')) n0++;
  while (n1 > n0 && (n1[-1] == ' ' || n1[-1] == '\t')) n1--;
  if (n0 == n1) config_error("--header: the header has no name");
  for (const char *p = n0; p < n1; p++)
    if (!is_tchar(*p))
      config_error("--header '%.*s': not a valid header name", (int)(n1 - n0),
                   n0);
  const char *v0 = colon + 1, *v1 = colon + strlen(colon);
  while (*v0 == ' ' || *v0 == '\t') v0++;
  while (v1 > v0 && (v1[-1] == ' ' || v1[-1] == '\t')) v1--;
  char *name = xstrndup(n0, (size_t)(n1 - n0));
  char *value = xstrndup(v0, (size_t)(v1 - v0));
  mcp_status st = mcp_client_options_add_header(a->co, name, value);
  free(value);
  if (st == MCP_EINVAL) {
    complain("--header '%s': the HTTP transport sets this header itself",
             name);
    free(name);
    exit(EXIT_USAGE);
  }
  free(name);
  if (st != MCP_OK) config_error("--header: %s", mcp_strerror(st));
}

static void rename_last(struct cli *cli, const char *name,
                        bool follows_server) {
  if (!follows_server || !cli->n_adhoc)
    usage_error("--name must follow the --stdio or --url it names");
  if (!valid_name(name))
    usage_error("--name '%s': a server name is 1 to 100 of A-Z a-z 0-9 _ . : -",
                name);
  struct adhoc *a = &cli->adhoc[cli->n_adhoc - 1];
  free(a->name);
  a->name = xstrdup(name);
}

static unsigned parse_imports(const char *list) {
  static const struct {
    const char *name;
    unsigned bit;
  } names[] = {{"claude", MCP_IMPORT_CLAUDE},
               {"cursor", MCP_IMPORT_CURSOR},
               {"vscode", MCP_IMPORT_VSCODE},
               {"windsurf", MCP_IMPORT_WINDSURF},
               {"gemini", MCP_IMPORT_GEMINI},
               {"all", MCP_IMPORT_ALL}};
  unsigned bits = 0;
  const char *p = list;
  for (;;) {
    size_t len = strcspn(p, ",");
    size_t i;
    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
      if (strlen(names[i].name) == len &&
          strncasecmp(p, names[i].name, len) == 0)
        break;
    if (i == sizeof(names) / sizeof(names[0]))
      usage_error("--import '%s': unknown client '%.*s' (use claude, cursor, "
                  "vscode, windsurf, gemini or all, separated by commas)",
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
                    "--name NAME", cli->adhoc[i].name);
}

/* ---- OAuth: the browser step through a loopback redirect ------------------ */

/*
 * One listening socket on 127.0.0.1 (an ephemeral port, opened when there
 * is a --url server) catches the authorization server's redirect (RFC 8252
 * section 7.3).  |lock| lets one authorization wait on it at a time, so a
 * redirect always reaches the flow that asked for it.
 */
static struct {
  pthread_mutex_t lock;
  int fd;
  int port;
} g_loopback = {PTHREAD_MUTEX_INITIALIZER, -1, 0};

/* The browser wait: the server's timeout (the request that met the 401
 * waits too, and the client's close waits for this callback), at most 10
 * minutes. */
#define LOOPBACK_WAIT_MS (5 * 60 * 1000)
#define LOOPBACK_WAIT_MAX_MS (10 * 60 * 1000)
#define LOOPBACK_READ_MS 10000

static void loopback_open(void) {
  if (g_loopback.fd >= 0) return;
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in a = {0};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, 4) != 0 ||
      getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
    if (fd >= 0) close(fd);
    return; /* no redirect catcher: a server that needs OAuth fails then */
  }
  g_loopback.fd = fd;
  g_loopback.port = ntohs(a.sin_port);
}

/* Reads a request head from |fd| (bounded in size and time) into |buf|. */
static bool read_head(int fd, char *buf, size_t cap) {
  size_t n = 0;
  int64_t deadline = now_ms() + LOOPBACK_READ_MS;
  while (n + 1 < cap) {
    struct pollfd p = {fd, POLLIN, 0};
    int64_t left = deadline - now_ms();
    if (left <= 0 || poll(&p, 1, (int)left) <= 0) return false;
    ssize_t r = read(fd, buf + n, cap - 1 - n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    n += (size_t)r;
    buf[n] = '\0';
    if (strstr(buf, "\r\n\r\n") || strstr(buf, "\n\n")) return true;
  }
  return false;
}

static void reply(int fd, const char *status, const char *text) {
  char head[256];
  int n = snprintf(head, sizeof(head),
                   "HTTP/1.1 %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
                   "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                   status, strlen(text));
  if (write(fd, head, (size_t)n) == n) (void)!write(fd, text, strlen(text));
}

/*
 * The library's authorize callback: print the URL, wait for the browser to
 * come back to the loopback redirect URI, and hand the library that URL.
 * Runs on the server's auth thread.
 */
static mcp_status cli_authorize(void *user, const char *url, const char *redirect_uri,
                                char **redirect_url, mcp_error *err) {
  const char *server = user;
  (void)err;
  if (g_loopback.fd < 0) return MCP_EIO;
  const char *path = strchr(redirect_uri + strlen("http://"), '/');
  size_t path_len = path ? strcspn(path, "?#") : 0;
  /* The requests waiting for this login do not time out meanwhile (the
   * library stops their clocks while we run): give the person 5 minutes,
   * or --timeout when it is longer, at most 10. */
  int64_t wait_ms = g_cli.timeout_ms > LOOPBACK_WAIT_MS ? g_cli.timeout_ms : LOOPBACK_WAIT_MS;
  if (wait_ms > LOOPBACK_WAIT_MAX_MS) wait_ms = LOOPBACK_WAIT_MAX_MS;
  pthread_mutex_lock(&g_loopback.lock);
  pthread_mutex_lock(&g_stderr_lock);
  /* The URL comes from the authorization server's metadata. */
  fprintf(stderr, PROG ": %s%s%s needs authorization: open this URL in a browser:\n\n  ",
          server ? "server '" : "a server", server ? server : "", server ? "'" : "");
  safe_puts(stderr, url, SAFE_CELL);
  fprintf(stderr, "\n\n" PROG ": waiting %lld s for the browser to come back to %s (--timeout MS for longer)\n",
          (long long)(wait_ms / 1000), redirect_uri);
  fflush(stderr);
  pthread_mutex_unlock(&g_stderr_lock);
  mcp_status st = MCP_ETIMEDOUT;
  int64_t deadline = now_ms() + wait_ms;
  for (;;) {
    int64_t left = deadline - now_ms();
    struct pollfd p = {g_loopback.fd, POLLIN, 0};
    if (left <= 0) break;
    int pr = poll(&p, 1, (int)left);
    if (pr < 0 && errno == EINTR) continue;
    if (pr <= 0) break;
    int c = accept(g_loopback.fd, NULL, NULL);
    if (c < 0) continue;
    char head[8192];
    char *target = NULL;
    if (read_head(c, head, sizeof(head)) && strncmp(head, "GET ", 4) == 0) {
      char *t = head + 4, *sp = strchr(t, ' ');
      if (sp && path && (size_t)(sp - t) >= path_len && strncmp(t, path, path_len) == 0 &&
          (t[path_len] == '?' || t[path_len] == ' '))
        target = xstrndup(t, (size_t)(sp - t));
    }
    if (!target) {
      reply(c, "404 Not Found", "not the authorization redirect\n");
      close(c);
      continue;
    }
    reply(c, "200 OK", PROG ": authorization received; you can close this window.\n");
    close(c);
    *redirect_url = malloc(strlen("http://127.0.0.1:65535") + strlen(target) + 1);
    if (*redirect_url) {
      sprintf(*redirect_url, "http://127.0.0.1:%d%s", g_loopback.port, target);
      st = MCP_OK;
    } else {
      st = MCP_ENOMEM;
    }
    free(target);
    break;
  }
  pthread_mutex_unlock(&g_loopback.lock);
  if (st == MCP_ETIMEDOUT) fprintf(stderr, PROG ": no browser came back to %s in time\n", redirect_uri);
  return st;
}

/* The CLI's OAuth options: the loopback browser step (|server| names the
 * server in the message, or NULL) and the file store.  NULL: no memory. */
static mcp_oauth_options *cli_oauth(const char *server) {
  mcp_oauth_options *oa = mcp_oauth_options_new();
  if (!oa) return NULL;
  char redirect[64];
  snprintf(redirect, sizeof(redirect), "http://127.0.0.1:%d/callback", g_loopback.port);
  mcp_status st = g_loopback.fd >= 0 ? mcp_oauth_options_set_redirect_uri(oa, redirect) : MCP_OK;
  if (st == MCP_OK) st = mcp_oauth_options_set_client_name(oa, PROG);
  if (st == MCP_OK) st = mcp_oauth_options_set_file_store(oa, NULL);
  if (g_loopback.fd >= 0) mcp_oauth_options_set_authorize(oa, cli_authorize, (void *)server);
  if (st != MCP_OK) {
    mcp_oauth_options_free(oa);
    return NULL;
  }
  return oa;
}

/* OAuth for one --url server, with the pre-registered client if given. */
static void apply_oauth(struct cli *cli, struct adhoc *a) {
  mcp_oauth_options *oa = cli_oauth(a->name);
  if (!oa) config_error("OAuth options: out of memory");
  mcp_status st = MCP_OK;
  if (cli->client_id) st = mcp_oauth_options_set_client(oa, cli->client_id, cli->client_secret);
  if (st == MCP_OK) st = mcp_client_options_set_oauth(a->co, oa);
  mcp_oauth_options_free(oa);
  if (st != MCP_OK) config_error("OAuth options: %s", mcp_strerror(st));
}

/* Applies the HTTP and TLS options to every --url server. */
static void apply_http_options(struct cli *cli) {
  size_t n_url = 0;
  for (size_t i = 0; i < cli->n_adhoc; i++) n_url += cli->adhoc[i].is_url;
  if (cli->http_option && n_url == 0)
    usage_error("%s applies to --url servers, and none is given",
                cli->http_option);
  if (cli->key && !cli->cert) usage_error("--key needs --cert");
  if (cli->client_secret && !cli->client_id) usage_error("--client-secret needs --client-id");
  if (n_url) loopback_open();
  for (size_t i = 0; i < cli->n_adhoc; i++) {
    struct adhoc *a = &cli->adhoc[i];
    if (!a->is_url) continue;
    mcp_status st = MCP_OK;
    if (cli->cacert || cli->capath)
      st = mcp_client_options_set_ca(a->co, cli->cacert, cli->capath);
    if (st == MCP_OK && cli->cert)
      st = mcp_client_options_set_client_cert(a->co, cli->cert,
                                              cli->key ? cli->key : cli->cert);
    if (st != MCP_OK) config_error("TLS options: %s", mcp_strerror(st));
    if (cli->insecure) mcp_client_options_set_insecure(a->co, true);
    if (cli->http_version >= 0)
      mcp_client_options_set_http_version(a->co,
                                          (mcp_http_version)cli->http_version);
    apply_oauth(cli, a);
  }
}

enum {
  OPT_STDIO = 256,
  OPT_URL,
  OPT_SSE,
  OPT_NAME,
  OPT_CONFIG,
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
  OPT_VERSION,
  OPT_CLIENT_ID,
  OPT_CLIENT_SECRET,
  OPT_TRUST_PROJECT
};

static const struct option long_options[] = {
    {"stdio", required_argument, NULL, OPT_STDIO},
    {"url", required_argument, NULL, OPT_URL},
    {"sse", no_argument, NULL, OPT_SSE},
    {"header", required_argument, NULL, 'H'},
    {"name", required_argument, NULL, OPT_NAME},
    {"config", required_argument, NULL, OPT_CONFIG},
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
    {"server", required_argument, NULL, 's'},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"quiet", no_argument, NULL, 'q'},
    {"verbose", no_argument, NULL, 'v'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, OPT_VERSION},
    {NULL, 0, NULL, 0}};

static void set_http_version(struct cli *cli, int v, const char *option) {
  if (cli->http_version >= 0 && cli->http_version != v)
    usage_error("--http1.1 and --h2c exclude each other");
  cli->http_version = v;
  if (!cli->http_option) cli->http_option = option;
}

static void set_tls_path(struct cli *cli, const char **slot,
                         const char *option, const char *value) {
  if (!*value) usage_error("%s needs a path", option);
  *slot = value;
  if (!cli->http_option) cli->http_option = option;
}

static void parse_options(int argc, char **argv) {
  /* True right after --stdio, --url or an option that applies to it. */
  bool follows_server = false;
  int opt;
  opterr = 0;
  g_cli.timeout_ms = DEFAULT_TIMEOUT_MS;
  g_cli.http_version = -1;
  while ((opt = getopt_long(argc, argv, "+:s:H:qvh", long_options, NULL)) !=
         -1) {
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
      if (mcp_client_options_set_http(a->co, a->url,
                                      MCP_HTTP_TRANSPORT_LEGACY_SSE) != MCP_OK)
        usage_error("--url '%s': not a valid URL", a->url);
      follows_server = true;
      break;
    }
    case 'H':
      add_header(&g_cli, optarg, after_server);
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
    case OPT_NO_PROJECT:
      g_cli.no_project = true;
      break;
    case OPT_TRUST_PROJECT:
      g_cli.trust_project = true;
      break;
    case OPT_NO_USER:
      g_cli.no_user = true;
      break;
    case OPT_IMPORT:
      g_cli.imports |= parse_imports(optarg);
      break;
    case OPT_CACERT:
      set_tls_path(&g_cli, &g_cli.cacert, "--cacert", optarg);
      break;
    case OPT_CAPATH:
      set_tls_path(&g_cli, &g_cli.capath, "--capath", optarg);
      break;
    case OPT_CERT:
      set_tls_path(&g_cli, &g_cli.cert, "--cert", optarg);
      break;
    case OPT_KEY:
      set_tls_path(&g_cli, &g_cli.key, "--key", optarg);
      break;
    case OPT_INSECURE:
      g_cli.insecure = true;
      if (!g_cli.http_option) g_cli.http_option = "--insecure";
      break;
    case OPT_HTTP11:
      set_http_version(&g_cli, MCP_HTTP_VERSION_1_1, "--http1.1");
      break;
    case OPT_H2C:
      set_http_version(&g_cli, MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE, "--h2c");
      break;
    case OPT_CLIENT_ID:
      if (!*optarg) usage_error("--client-id needs a client id");
      g_cli.client_id = optarg;
      if (!g_cli.http_option) g_cli.http_option = "--client-id";
      break;
    case OPT_CLIENT_SECRET:
      g_cli.client_secret = optarg;
      if (!g_cli.http_option) g_cli.http_option = "--client-secret";
      break;
    case 's':
      strv_push(&g_cli.only, xstrdup(optarg));
      break;
    case OPT_TIMEOUT: {
      char *end;
      errno = 0;
      long long ms = strtoll(optarg, &end, 10);
      if (errno || end == optarg || *end || ms < 0 || ms > INT32_MAX)
        usage_error("--timeout needs a number of milliseconds, not '%s'",
                    optarg);
      g_cli.timeout_ms = ms;
      g_cli.timeout_given = true;
      break;
    }
    case 'q':
      g_cli.quiet = true;
      break;
    case 'v':
      g_cli.verbose = true;
      break;
    case 'h':
      usage(stdout);
      exit(EXIT_OK);
    case OPT_VERSION:
      printf(PROG " %s (libmcpconn %s)\n", MCP_VERSION, mcp_version());
      exit(EXIT_OK);
    case ':':
      usage_error("option '%s' needs a value", argv[optind - 1]);
    default:
      if (optopt && optopt < 256)
        usage_error("unknown option '-%c'", optopt);
      usage_error("unknown option '%s'", argv[optind - 1]);
    }
  }
  check_unique_names(&g_cli);
  apply_http_options(&g_cli);
}

/* ---- the manager's callbacks ------------------------------------------ */

/*
 * What the manager's log and event callbacks (worker threads) tell the
 * main thread.  Every field is guarded by |lock|; |cond| (CLOCK_MONOTONIC)
 * is broadcast on every event.
 */
static struct {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  uint64_t gen;           /* counts events */
  uint64_t tools_gen;     /* |gen| of the last tool-list event */
  bool started;           /* the first tool list has been announced */
  /* Servers last seen becoming ready, with the |gen| of that event. */
  char **ready_name;
  uint64_t *ready_gen;
  size_t n_ready;
  size_t cap_ready;
} g_ev = {.lock = PTHREAD_MUTEX_INITIALIZER};

static mcp_manager *g_mgr;

/* Forgets what an earlier manager said.  No manager may be running. */
static void ev_reset(void) {
  pthread_mutex_lock(&g_ev.lock);
  g_ev.gen = g_ev.tools_gen = 0;
  g_ev.started = false;
  for (size_t i = 0; i < g_ev.n_ready; i++) free(g_ev.ready_name[i]);
  free(g_ev.ready_name);
  free(g_ev.ready_gen);
  g_ev.ready_name = NULL;
  g_ev.ready_gen = NULL;
  g_ev.n_ready = g_ev.cap_ready = 0;
  pthread_mutex_unlock(&g_ev.lock);
}

/* Records that |name| became ready at event |gen|.  Caller holds the lock. */
static void ev_note_ready_locked(const char *name, uint64_t gen) {
  for (size_t i = 0; i < g_ev.n_ready; i++)
    if (strcmp(g_ev.ready_name[i], name) == 0) {
      g_ev.ready_gen[i] = gen;
      return;
    }
  if (g_ev.n_ready == g_ev.cap_ready) {
    g_ev.cap_ready = g_ev.cap_ready ? g_ev.cap_ready * 2 : 8;
    g_ev.ready_name =
        xrealloc(g_ev.ready_name, g_ev.cap_ready * sizeof(*g_ev.ready_name));
    g_ev.ready_gen =
        xrealloc(g_ev.ready_gen, g_ev.cap_ready * sizeof(*g_ev.ready_gen));
  }
  g_ev.ready_name[g_ev.n_ready] = xstrdup(name);
  g_ev.ready_gen[g_ev.n_ready++] = gen;
}

/*
 * True when the published tool list already holds the tools of |name|, a
 * server the manager reports ready: its "ready" event has arrived, and a
 * tool-list event after it.  The manager publishes the list that includes
 * a server only after it announced the server ready, on the same ordered
 * lane.  Caller holds the lock.
 */
static bool ev_listed_locked(const char *name) {
  for (size_t i = 0; i < g_ev.n_ready; i++)
    if (strcmp(g_ev.ready_name[i], name) == 0)
      return g_ev.ready_gen[i] < g_ev.tools_gen;
  return false;
}

static void on_event(void *user, mcp_manager_event event, const char *server,
                     const char *detail_json) {
  (void)user;
  bool ready = false;
  if (event == MCP_MANAGER_EVENT_SERVER_STATE) {
    json_object *o = json_tokener_parse(detail_json);
    const char *state = jstring(o, "state");
    ready = state && strcmp(state, "ready") == 0;
    json_object_put(o);
  }
  pthread_mutex_lock(&g_ev.lock);
  g_ev.gen++;
  if (event == MCP_MANAGER_EVENT_TOOLS_CHANGED) {
    g_ev.tools_gen = g_ev.gen;
    g_ev.started = true;
  } else if (ready) {
    ev_note_ready_locked(server, g_ev.gen);
  }
  pthread_cond_broadcast(&g_ev.cond);
  pthread_mutex_unlock(&g_ev.lock);
}

static void on_log(void *user, mcp_log_level level, const char *msg) {
  static const char *const names[] = {"debug", "info", "warning", "error"};
  (void)user;
  if (g_cli.verbose) {
    pthread_mutex_lock(&g_stderr_lock);
    fprintf(stderr, PROG ": [%s] ", names[level >= 0 && level <= 3 ? level : 0]);
    safe_puts(stderr, msg, SAFE_LINE);
    fputc('\n', stderr);
    pthread_mutex_unlock(&g_stderr_lock);
  } else if (level >= MCP_LOG_WARN && strstr(msg, "TLS certificate verification is off")) {
    /* Never silent, even without -v (the library says it once per server). */
    pthread_mutex_lock(&g_stderr_lock);
    fprintf(stderr, PROG ": warning: %s\n", msg);
    pthread_mutex_unlock(&g_stderr_lock);
  }
}

/*
 * What mcp_manager_diagnostics() says about the config files of the
 * running manager.  Written by the main thread in start_manager(), before
 * any command runs; read-only after.
 */
static struct {
  struct strv errors;   /* warnings about --config files */
  struct strv warnings; /* warnings about discovered files */
  struct strv hidden;   /* NAME, SOURCE, ...: servers left out, disabled */
} g_diag;

static void diag_reset(void) {
  strv_free(&g_diag.errors);
  strv_free(&g_diag.warnings);
  strv_free(&g_diag.hidden);
}

static bool is_config_file(const char *source) {
  return source && strv_has(&g_cli.configs, source);
}

/* Notes the server that the diagnostic |o| says is left out, once. */
static void note_hidden(json_object *o) {
  const char *name = jstring(o, "server"), *source = jstring(o, "source");
  if (!name) return;
  for (size_t i = 0; i + 1 < g_diag.hidden.n; i += 2)
    if (strcmp(g_diag.hidden.v[i], name) == 0) return;
  strv_push(&g_diag.hidden, xstrdup(name));
  strv_push(&g_diag.hidden, xstrdup(source ? source : ""));
}

/* Fills g_diag from the manager's diagnostics.  On failure (out of memory)
 * prints why and returns false. */
static bool diag_load(void) {
  char *json = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status rc = mcp_manager_diagnostics(g_mgr, &json, &err);
  if (rc != MCP_OK) {
    complain("cannot read the config diagnostics: %s",
             err.message ? err.message : mcp_strerror(rc));
    mcp_error_clear(&err);
    return false;
  }
  json_object *arr = json_tokener_parse(json), *v;
  mcp_free(json);
  if (!json_object_is_type(arr, json_type_array)) {
    json_object_put(arr);
    complain("cannot read the config diagnostics: not a JSON array");
    return false;
  }
  for (size_t i = 0; i < json_object_array_length(arr); i++) {
    json_object *o = json_object_array_get_idx(arr, i);
    const char *level = jstring(o, "level"), *message = jstring(o, "message");
    if (json_object_object_get_ex(o, "hidden", &v) && json_object_get_boolean(v))
      note_hidden(o);
    else if (message && level &&
             (strcmp(level, "warning") == 0 || strcmp(level, "error") == 0))
      strv_push(is_config_file(jstring(o, "source")) ? &g_diag.errors
                                                      : &g_diag.warnings,
                xstrdup(message));
  }
  json_object_put(arr);
  return true;
}

/*
 * Waits until done(arg) is true, re-checking it after every manager event,
 * or until |deadline| (now_ms() clock; INT64_MAX: none) passes.  Returns
 * done(arg)'s last answer.
 */
static bool wait_for(bool (*done)(void *arg), void *arg, int64_t deadline) {
  for (;;) {
    pthread_mutex_lock(&g_ev.lock);
    uint64_t gen = g_ev.gen;
    pthread_mutex_unlock(&g_ev.lock);
    if (done(arg)) return true;
    pthread_mutex_lock(&g_ev.lock);
    while (g_ev.gen == gen) {
      if (deadline == INT64_MAX) {
        pthread_cond_wait(&g_ev.cond, &g_ev.lock);
        continue;
      }
      int64_t left = deadline - now_ms();
      if (left <= 0) break;
      struct timespec ts;
      clock_gettime(CLOCK_MONOTONIC, &ts);
      ts.tv_sec += (time_t)(left / 1000);
      ts.tv_nsec += (long)(left % 1000) * 1000000L;
      if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
      }
      pthread_cond_timedwait(&g_ev.cond, &g_ev.lock, &ts);
    }
    bool changed = g_ev.gen != gen;
    pthread_mutex_unlock(&g_ev.lock);
    if (!changed) return done(arg);
  }
}

static bool started(void *arg) {
  (void)arg;
  pthread_mutex_lock(&g_ev.lock);
  bool s = g_ev.started;
  pthread_mutex_unlock(&g_ev.lock);
  return s;
}

/* The deadline of waiting for servers to settle. */
static int64_t settle_deadline(void) {
  if (g_cli.timeout_ms == 0) return INT64_MAX;
  return now_ms() + g_cli.timeout_ms + SETTLE_GRACE_MS;
}

/* ---- server status ---------------------------------------------------- */

/* One server, as mcp_manager_servers() describes it; strings borrowed from
 * the status's JSON. */
struct srv {
  const char *name;
  const char *type;       /* or NULL */
  const char *state;
  const char *last_error; /* or NULL */
  int64_t tools;
  bool selected;          /* used by this run (see --server) */
};

/* Every server: the manager's, then those only its log shows disabled. */
struct status {
  json_object *arr;
  struct srv *v;
  size_t n;
};

static bool selected(const char *name) {
  return g_cli.only.n == 0 || strv_has(&g_cli.only, name);
}

static bool state_is(const struct srv *s, const char *state) {
  return strcmp(s->state, state) == 0;
}

/* Settled: ready, or failed for now (failed, backoff), or not in use. */
static bool settled(const struct srv *s) {
  return !state_is(s, "connecting") && !state_is(s, "deferred");
}

static bool enabled(const struct srv *s) { return !state_is(s, "disabled"); }

/* Fills |st|.  On failure (out of memory) prints why and returns false. */
static bool status_load(struct status *st) {
  memset(st, 0, sizeof(*st));
  char *json = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status rc = mcp_manager_servers(g_mgr, &json, &err);
  if (rc != MCP_OK) {
    complain("cannot read the servers' status: %s",
             err.message ? err.message : mcp_strerror(rc));
    mcp_error_clear(&err);
    return false;
  }
  st->arr = json_tokener_parse(json);
  mcp_free(json);
  if (!json_object_is_type(st->arr, json_type_array)) {
    json_object_put(st->arr);
    st->arr = NULL;
    complain("cannot read the servers' status: not a JSON array");
    return false;
  }
  /* Servers hidden by their config are not in the manager's list. */
  for (size_t i = 0; i + 1 < g_diag.hidden.n; i += 2) {
    bool known = false;
    for (size_t k = 0; !known && k < json_object_array_length(st->arr); k++) {
      const char *n = jstring(json_object_array_get_idx(st->arr, k), "name");
      known = n && strcmp(n, g_diag.hidden.v[i]) == 0;
    }
    if (known) continue;
    json_object *o = json_object_new_object();
    json_object_object_add(o, "name", json_object_new_string(g_diag.hidden.v[i]));
    json_object_object_add(o, "type", NULL);
    json_object_object_add(o, "source",
                           json_object_new_string(g_diag.hidden.v[i + 1]));
    json_object_object_add(o, "state", json_object_new_string("disabled"));
    json_object_object_add(o, "lastError", NULL);
    json_object_object_add(o, "protocolVersion", NULL);
    json_object_object_add(o, "tools", json_object_new_int(0));
    json_object_object_add(o, "deferred", json_object_new_boolean(false));
    json_object_object_add(o, "reconnects", json_object_new_int(0));
    json_object_array_add(st->arr, o);
  }

  size_t n = json_object_array_length(st->arr);
  st->v = xmalloc(n * sizeof(*st->v));
  for (size_t i = 0; i < n; i++) {
    json_object *o = json_object_array_get_idx(st->arr, i), *v;
    struct srv *s = &st->v[st->n];
    s->name = jstring(o, "name");
    s->state = jstring(o, "state");
    if (!s->name || !s->state) continue;
    s->type = jstring(o, "type");
    s->last_error = jstring(o, "lastError");
    s->tools = json_object_object_get_ex(o, "tools", &v)
                   ? json_object_get_int64(v)
                   : 0;
    s->selected = selected(s->name);
    st->n++;
  }
  return true;
}

static void status_free(struct status *st) {
  json_object_put(st->arr);
  free(st->v);
  memset(st, 0, sizeof(*st));
}

static const struct srv *status_find(const struct status *st,
                                     const char *name) {
  for (size_t i = 0; i < st->n; i++)
    if (strcmp(st->v[i].name, name) == 0) return &st->v[i];
  return NULL;
}

/*
 * True when every selected server (or only the one named |only|) has
 * settled, when |need_settled|, and the tool list shows those that are
 * ready.
 */
static bool check_servers(const char *only, bool need_settled) {
  struct status st;
  if (!status_load(&st)) return true; /* nothing better to wait for */
  bool done = true;
  pthread_mutex_lock(&g_ev.lock);
  for (size_t i = 0; done && i < st.n; i++) {
    const struct srv *s = &st.v[i];
    if (only ? strcmp(s->name, only) != 0 : !s->selected) continue;
    if ((need_settled && !settled(s)) ||
        (state_is(s, "ready") && !ev_listed_locked(s->name)))
      done = false;
  }
  pthread_mutex_unlock(&g_ev.lock);
  status_free(&st);
  return done;
}

/* Done-predicate of wait_for(): every selected server (or only the one
 * named |arg|) has settled, and the tool list shows those that are ready. */
static bool servers_settled(void *arg) { return check_servers(arg, true); }

/* Done-predicate: the tool list shows every selected server that is ready
 * (it follows a server's becoming ready within milliseconds). */
static bool ready_listed(void *arg) {
  (void)arg;
  return check_servers(NULL, false);
}

/* True when some server is connecting: freeing the manager would then
 * wait for that connect to end, up to its timeout. */
static bool connects_pending(void) {
  struct status st;
  if (!status_load(&st)) return false;
  bool pending = false;
  for (size_t i = 0; i < st.n; i++)
    if (!settled(&st.v[i])) pending = true;
  status_free(&st);
  return pending;
}

/* "NAME: REASON" of a server that is not ready, on stderr. */
static void report_server(const char *prefix, const struct srv *s) {
  if (state_is(s, "connecting") || state_is(s, "deferred"))
    complain("%s%s: not ready after %lld ms (still connecting)", prefix,
             s->name, (long long)g_cli.timeout_ms);
  else
    complain("%s%s: %s%s%s", prefix, s->name,
             s->last_error ? "" : "server is ",
             s->last_error ? s->last_error : s->state,
             state_is(s, "backoff") ? " (retrying)" : "");
}

/* ---- starting the manager --------------------------------------------- */

/*
 * Finds the bundled demo server: $MCPCONN_DEMO_SERVER, else next to this
 * program (under libtool the build tree runs bin/.libs/mcpconn or
 * bin/.libs/lt-mcpconn, so the parent of .libs is tried too), else the
 * installed path.  Returns a new string, or NULL when none is executable.
 */
static char *find_demo_server(void) {
  const char *env = getenv("MCPCONN_DEMO_SERVER");
  if (env && *env) return xstrdup(env);

  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n > 0) {
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (slash) {
      *slash = '\0'; /* self is now the directory */
      char path[PATH_MAX + 64];
      snprintf(path, sizeof(path), "%s/" DEMO_SERVER_PROG, self);
      if (access(path, X_OK) == 0) return xstrdup(path);
      const char *dir = base_name(self);
      if (strcmp(dir, ".libs") == 0) {
        snprintf(path, sizeof(path), "%s/../" DEMO_SERVER_PROG, self);
        char *clean = realpath(path, NULL); /* drop the "/.libs/.." */
        if (clean && access(clean, X_OK) == 0) return clean;
        free(clean);
      }
    }
  }
#ifdef MCP_DEMO_SERVER_INSTALLED
  if (access(MCP_DEMO_SERVER_INSTALLED, X_OK) == 0)
    return xstrdup(MCP_DEMO_SERVER_INSTALLED);
#endif
  return NULL;
}

/* ---- project trust ----------------------------------------------------- */

/*
 * Project files come with the directory (a cloned repository brings its
 * .mcp.json), so their servers run only after a decision: --trust-project
 * for this run, an approval remembered by `mcpconn trust` or by answering
 * "always", or a yes at the prompt on a terminal.
 */

/* Project files left out this run, for setup()'s message. */
static size_t g_untrusted;

/*
 * Writes |s| to |f| with everything that could act on a terminal escaped,
 * by the rule of mcpconn-text.h (text_unsafe_cp()), but shown as \xNN or
 * \uXXXX instead of '?': in a trust prompt the person should see that a
 * command hides something.  The file is the repository's, so its text is
 * hostile until proven otherwise.
 */
static void put_safe(FILE *f, const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  size_t n = strlen(s);
  while (n) {
    uint32_t cp;
    size_t k = text_utf8_decode(p, n, &cp);
    if (k == 0) {
      fprintf(f, "\\x%02x", *p);
      k = 1;
    } else if (cp < 0x20 || cp == 0x7f) {
      fprintf(f, "\\x%02x", (unsigned)cp);
    } else if (text_unsafe_cp(cp)) {
      fprintf(f, "\\u%04x", (unsigned)cp);
    } else {
      fwrite(p, 1, k, f);
    }
    p += k;
    n -= k;
  }
}

/* Prints one line per server of |servers_json| (see mcp_project_trust_fn):
 * what it would run or connect to, and the commands of its secrets. */
static void print_project_servers(FILE *f, const char *servers_json) {
  json_object *arr = json_tokener_parse(servers_json);
  size_t n = json_object_is_type(arr, json_type_array)
                 ? json_object_array_length(arr)
                 : 0;
  for (size_t i = 0; i < n; i++) {
    json_object *s = json_object_array_get_idx(arr, i), *args = NULL, *cmds = NULL;
    const char *cmd = jstring(s, "command"), *url = jstring(s, "url");
    fputs("  ", f);
    put_safe(f, jstring(s, "name") ? jstring(s, "name") : "?");
    if (cmd) {
      fputs(": runs ", f);
      put_safe(f, cmd);
      if (json_object_object_get_ex(s, "args", &args))
        for (size_t k = 0; k < json_object_array_length(args); k++) {
          fputc(' ', f);
          put_safe(f, json_object_get_string(json_object_array_get_idx(args, k)));
        }
      if (jstring(s, "cwd")) {
        fputs(" (in ", f);
        put_safe(f, jstring(s, "cwd"));
        fputc(')', f);
      }
    } else if (url) {
      fputs(": connects to ", f);
      put_safe(f, url);
    }
    fputc('\n', f);
    if (json_object_object_get_ex(s, "commands", &cmds))
      for (size_t k = 0; k < json_object_array_length(cmds); k++) {
        fputs("    and runs for a secret: ", f);
        put_safe(f, json_object_get_string(json_object_array_get_idx(cmds, k)));
        fputc('\n', f);
      }
  }
  json_object_put(arr);
}

/* Asks on the terminal; true answers come back as the decision. */
static mcp_trust ask_trust(const char *path, const char *servers_json) {
  pthread_mutex_lock(&g_stderr_lock);
  fputs(PROG ": ", stderr);
  put_safe(stderr, path);
  fputs(" is a project file (it came with this directory, not from your own "
        "configuration).  Its servers would do this:\n", stderr);
  print_project_servers(stderr, servers_json);
  fputs("Use them?  y: this time, a: always (remember this file as it is now), "
        "N: no > ", stderr);
  fflush(stderr);
  pthread_mutex_unlock(&g_stderr_lock);
  char line[64];
  if (!fgets(line, sizeof(line), stdin)) return MCP_TRUST_DENY;
  const char *p = line;
  while (*p == ' ' || *p == '\t') p++;
  if (*p == 'y' || *p == 'Y') return MCP_TRUST_ONCE;
  if (*p == 'a' || *p == 'A') return MCP_TRUST_ALWAYS;
  return MCP_TRUST_DENY;
}

/* The manager's trust callback (see mcp_project_trust_fn). */
static mcp_trust cli_trust(void *user, const char *path, const char *sha256,
                           const char *servers_json) {
  (void)user;
  (void)sha256;
  if (g_cli.trust_project) return MCP_TRUST_ONCE;
  mcp_trust t = MCP_TRUST_DENY;
  if (isatty(STDIN_FILENO) && isatty(STDERR_FILENO))
    t = ask_trust(path, servers_json);
  else if (!g_cli.quiet) {
    pthread_mutex_lock(&g_stderr_lock);
    fputs(PROG ": ", stderr);
    put_safe(stderr, path);
    fputs(": project servers not used: this file is not trusted; run '" PROG
          " trust' in this directory to trust it, or pass --trust-project\n",
          stderr);
    pthread_mutex_unlock(&g_stderr_lock);
  }
  if (t == MCP_TRUST_DENY) g_untrusted++;
  return t;
}

/* mcp_project_trust_review()'s callback for `mcpconn trust`: every file it
 * is asked about is approved, and shown. */
static mcp_trust trust_always(void *user, const char *path, const char *sha256,
                              const char *servers_json) {
  size_t *n = user;
  (*n)++;
  fputs("trusted ", stdout);
  put_safe(stdout, path);
  printf(" (sha256 %.16s...):\n", sha256);
  print_project_servers(stdout, servers_json);
  return MCP_TRUST_ALWAYS;
}

/* `mcpconn trust`: remembers the project files found from here. */
static int cmd_trust(void) {
  if (g_cli.no_project) usage_error("trust: --no-project-config leaves nothing to trust");
  size_t n = 0;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_project_trust_review(NULL, g_cli.imports, trust_always, &n, &err);
  if (st != MCP_OK) {
    complain("trust: %s", err.message ? err.message : mcp_strerror(st));
    mcp_error_clear(&err);
    return EXIT_CONNECTION;
  }
  if (n == 0 && !g_cli.quiet)
    complain("trust: no untrusted project file found from here (already "
             "trusted, or none; --import adds other clients' files)");
  return EXIT_OK;
}

/* Manager options every run shares.  NULL when out of memory. */
static mcp_manager_options *base_options(void) {
  mcp_manager_options *o = mcp_manager_options_new();
  if (!o) return NULL;
  if (mcp_manager_options_set_client_info(o, PROG, MCP_VERSION) != MCP_OK) {
    mcp_manager_options_free(o);
    return NULL;
  }
  mcp_manager_options_set_timeout_ms(o, g_cli.timeout_ms);
  mcp_manager_options_set_log(o, on_log, NULL);
  mcp_manager_options_set_event_handler(o, on_event, NULL);
  /* Configured HTTP servers get the same browser step and token store as
   * --url ones (their "oauth" object may add a client id, scopes, ...). */
  loopback_open();
  mcp_oauth_options *oa = cli_oauth(NULL);
  if (!oa || mcp_manager_options_set_oauth(o, oa) != MCP_OK) {
    mcp_oauth_options_free(oa);
    mcp_manager_options_free(o);
    return NULL;
  }
  mcp_oauth_options_free(oa);
  return o;
}

/*
 * Starts g_mgr from |o| (freed here), reads its config diagnostics and
 * waits for its first tool list.  Returns an exit code.
 */
static int start_manager(mcp_manager_options *o) {
  if (!o) {
    complain("out of memory");
    return EXIT_CONNECTION;
  }
  ev_reset();
  diag_reset();
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_manager_start(o, &g_mgr, &err);
  mcp_manager_options_free(o);
  if (st != MCP_OK) {
    complain("cannot start: %s", err.message ? err.message : mcp_strerror(st));
    mcp_error_clear(&err);
    return st == MCP_EINVAL ? EXIT_USAGE : EXIT_CONNECTION;
  }
  if (!diag_load()) return EXIT_CONNECTION;
  wait_for(started, NULL, now_ms() + FIRST_EVENT_MS);
  return EXIT_OK;
}

/* The servers of the command line and the config files. */
static int start_configured(bool *discovery_only) {
  bool discovery = (g_cli.n_adhoc == 0 && g_cli.configs.n == 0) ||
                   g_cli.imports != 0;
  *discovery_only = g_cli.n_adhoc == 0 && g_cli.configs.n == 0;
  mcp_manager_options *o = base_options();
  for (size_t i = 0; o && i < g_cli.n_adhoc; i++) {
    struct adhoc *a = &g_cli.adhoc[i];
    mcp_client_options_set_timeout_ms(a->co, g_cli.timeout_ms);
    mcp_status st = mcp_manager_options_add_server(o, a->name, a->co);
    if (st != MCP_OK) {
      mcp_manager_options_free(o);
      complain("server %s: %s", a->name, mcp_strerror(st));
      return st == MCP_EINVAL ? EXIT_USAGE : EXIT_CONNECTION;
    }
  }
  for (size_t i = 0; o && i < g_cli.configs.n; i++)
    if (mcp_manager_options_add_config_file(o, g_cli.configs.v[i]) != MCP_OK) {
      mcp_manager_options_free(o);
      o = NULL;
    }
  if (o) {
    mcp_manager_options_set_discovery(o, discovery && !g_cli.no_project,
                                      discovery && !g_cli.no_user);
    mcp_manager_options_set_project_trust(o, cli_trust, NULL);
    mcp_manager_options_set_imports(o, g_cli.imports);
  }
  return start_manager(o);
}

/* The bundled demo server, when nothing else is configured. */
static int start_demo(void) {
  char *path = find_demo_server();
  if (!path) {
    complain("no server configured, and the bundled demo server ("
             DEMO_SERVER_PROG ") was not found; set MCPCONN_DEMO_SERVER or "
             "use --stdio, --url or --config");
    return EXIT_CONNECTION;
  }
  if (!g_cli.quiet)
    complain("no server configured; using the bundled demo server (%s)", path);
  mcp_manager_options *o = base_options();
  mcp_client_options *co = mcp_client_options_new();
  const char *argv[] = {path, NULL};
  bool ok = o && co && mcp_client_options_set_stdio(co, argv) == MCP_OK;
  if (ok) {
    mcp_client_options_set_timeout_ms(co, g_cli.timeout_ms);
    ok = mcp_manager_options_add_server(o, DEMO_SERVER_NAME, co) == MCP_OK;
    mcp_manager_options_set_discovery(o, false, false);
  }
  mcp_client_options_free(co);
  free(path);
  if (!ok) {
    mcp_manager_options_free(o);
    o = NULL;
  }
  return start_manager(o);
}

/* "FILE: invalid JSON (...)" with a line and column, when we can tell. */
static void complain_config(const char *diag) {
  for (size_t i = 0; i < g_cli.configs.n; i++) {
    const char *path = g_cli.configs.v[i];
    size_t len = strlen(path);
    if (strncmp(diag, path, len) != 0 ||
        strncmp(diag + len, ": invalid JSON", 14) != 0)
      continue;
    FILE *f = fopen(path, "rb");
    if (!f) break;
    size_t cap = 65536, n = 0;
    char *text = xmalloc(cap);
    for (size_t k; (k = fread(text + n, 1, cap - n - 1, f)) > 0;)
      if ((n += k) + 1 >= cap) text = xrealloc(text, cap *= 2);
    fclose(f);
    text[n] = '\0';
    char why[256];
    json_object *o = parse_json(text, n, false, why, sizeof(why));
    free(text);
    if (o) {
      json_object_put(o);
      break;
    }
    complain("%s: invalid JSON: %s", path, why);
    return;
  }
  complain("%s", diag);
}

/*
 * Starts the manager for this run and checks what it found.  Returns an
 * exit code; EXIT_OK with g_mgr running.
 */
static int setup(bool status_only) {
  bool discovery_only;
  int rc = start_configured(&discovery_only);
  if (rc != EXIT_OK) return rc;

  if (g_diag.errors.n) {
    complain_config(g_diag.errors.v[0]);
    return EXIT_USAGE;
  }
  for (size_t i = 0; !g_cli.quiet && i < g_diag.warnings.n; i++)
    complain("warning: %s", g_diag.warnings.v[i]);

  struct status st;
  if (!status_load(&st)) return EXIT_CONNECTION;
  size_t n_all = st.n;
  status_free(&st);
  if (n_all == 0 && discovery_only && g_untrusted) {
    /* Not the demo server: the user would take its tools for the
     * project's.  cli_trust() said why. */
    if (!status_only) {
      complain("no servers: the project's servers are not trusted");
      return EXIT_USAGE;
    }
  } else if (n_all == 0 && discovery_only) {
    mcp_manager_free(g_mgr);
    g_mgr = NULL;
    if ((rc = start_demo()) != EXIT_OK) return rc;
  }

  if (!status_load(&st)) return EXIT_CONNECTION;
  for (size_t i = 0; i < g_cli.only.n; i++)
    if (!status_find(&st, g_cli.only.v[i])) {
      complain("--server %s: no server has that name", g_cli.only.v[i]);
      rc = EXIT_USAGE;
      break;
    }
  size_t n_used = 0;
  for (size_t i = 0; i < st.n; i++)
    n_used += st.v[i].selected && enabled(&st.v[i]);
  status_free(&st);
  if (rc == EXIT_OK && n_used == 0 && !status_only) {
    complain("no servers: the configuration has none that is enabled");
    rc = EXIT_USAGE;
  }
  return rc;
}

/* ---- interruption ----------------------------------------------------- */

/* Fired by SIGINT; the request in flight carries it. */
static mcp_cancel *g_cancel;
static atomic_bool g_interrupted;
/* True while the blocking call in flight carries g_cancel. */
static atomic_bool g_cancellable;
static sigset_t g_sigint_set;
/* Set when main is done; the SIGINT that follows ends the signal thread. */
static atomic_bool g_quitting;

static void *signal_thread(void *arg) {
  (void)arg;
  for (;;) {
    int sig = 0;
    if (sigwait(&g_sigint_set, &sig) != 0) continue;
    if (atomic_load(&g_quitting)) break;
    if (atomic_exchange(&g_interrupted, true) ||
        !atomic_load(&g_cancellable)) {
      /* A second Ctrl-C, or nothing to cancel (connecting, waiting): leave
       * now.  The servers see EOF on stdin when our pipes close. */
      static const char msg[] = PROG ": interrupted\n";
      ssize_t ignored = write(STDERR_FILENO, msg, sizeof(msg) - 1);
      (void)ignored;
      _exit(EXIT_INTERRUPTED);
    }
    mcp_cancel_fire(g_cancel);
  }
  return NULL;
}

/* ---- requests --------------------------------------------------------- */

/* Options for one request; each thread makes its own object.  Without
 * --timeout, each server's own timeout applies (its config's, or 30 s). */
static mcp_call_options *new_call_options(void) {
  mcp_call_options *o = mcp_call_options_new();
  if (!o) return NULL;
  if (g_cli.timeout_given) mcp_call_options_set_timeout_ms(o, g_cli.timeout_ms);
  mcp_call_options_set_cancel(o, g_cancel);
  return o;
}

static bool interrupted(mcp_status st) {
  return st == MCP_ECANCELLED && atomic_load(&g_interrupted);
}

/* Exit code for a failed library call. */
static int exit_code(mcp_status st) {
  switch (st) {
  case MCP_OK:
    return EXIT_OK;
  case MCP_ETOOLERROR:
    return EXIT_TOOL_ERROR;
  case MCP_EINVAL:
  case MCP_ECONFIG:
  case MCP_ENOTFOUND:
    return EXIT_USAGE;
  default:
    return interrupted(st) ? EXIT_INTERRUPTED : EXIT_CONNECTION;
  }
}

/*
 * Prints the one-line reason for a failure of |step| on server |name|,
 * after |prefix| ("" or e.g. "warning: ").
 */
static void report(const char *prefix, const char *name, const char *step,
                   mcp_status st, const mcp_error *err) {
  const char *msg = err && err->message ? err->message : mcp_strerror(st);
  if (interrupted(st)) {
    complain("%sinterrupted", prefix);
  } else if (st == MCP_ETIMEDOUT && g_cli.timeout_given) {
    complain("%s%s: %s timed out after %lld ms", prefix, name, step,
             (long long)g_cli.timeout_ms);
  } else if (st == MCP_ETIMEDOUT) {
    complain("%s%s: %s timed out", prefix, name, step);
  } else if (st == MCP_ERPC && err) {
    complain("%s%s: %s: %s (JSON-RPC error %d)", prefix, name, step, msg,
             err->rpc_code);
  } else {
    complain("%s%s: %s: %s", prefix, name, step, msg);
  }
}

/* ---- progress display ------------------------------------------------- */

static bool g_progress_shown; /* guarded by g_stderr_lock */
static bool g_progress_done;  /* guarded by g_stderr_lock */

static void on_progress(void *user, double progress, double total,
                        const char *message) {
  (void)user;
  pthread_mutex_lock(&g_stderr_lock);
  if (!g_progress_done) {
    if (isnan(total))
      fprintf(stderr, "\r%g", progress);
    else
      fprintf(stderr, "\r%g/%g", progress, total);
    if (message) {
      fputc(' ', stderr);
      safe_write(stderr, message, strnlen(message, 200), SAFE_CELL);
    }
    fputs("\033[K", stderr);
    fflush(stderr);
    g_progress_shown = true;
  }
  pthread_mutex_unlock(&g_stderr_lock);
}

static void end_progress(void) {
  pthread_mutex_lock(&g_stderr_lock);
  g_progress_done = true;
  if (g_progress_shown) {
    fputs("\r\033[K", stderr);
    fflush(stderr);
  }
  pthread_mutex_unlock(&g_stderr_lock);
}

/* ---- tools ------------------------------------------------------------ */

static int cmd_tools(bool as_json, bool wait) {
  if (wait)
    wait_for(servers_settled, NULL, settle_deadline());
  else
    wait_for(ready_listed, NULL, now_ms() + FIRST_EVENT_MS);
  mcp_tool_list *l = mcp_manager_tools(g_mgr);
  size_t n = mcp_tool_list_count(l);
  if (as_json) {
    json_object *out = json_object_new_array();
    for (size_t i = 0; i < n; i++) {
      if (!selected(mcp_tool_list_server(l, i))) continue;
      json_object *item = json_object_new_object();
      json_object_object_add(item, "name",
                             json_object_new_string(mcp_tool_list_name(l, i)));
      json_object_object_add(
          item, "server", json_object_new_string(mcp_tool_list_server(l, i)));
      json_object_object_add(item, "tool",
                             json_object_new_string(mcp_tool_list_tool(l, i)));
      json_object_object_add(
          item, "deferred",
          json_object_new_boolean(mcp_tool_list_deferred(l, i)));
      /* Then the tool's own fields: description, inputSchema, ... */
      json_object *t = json_tokener_parse(mcp_tool_list_json(l, i));
      if (json_object_is_type(t, json_type_object)) {
        json_object_object_foreach(t, key, val) {
          if (strcmp(key, "name") != 0)
            json_object_object_add(item, key, json_object_get(val));
        }
      }
      json_object_put(t);
      json_object_array_add(out, item);
    }
    print_json_object(out);
    json_object_put(out);
  } else {
    size_t w_server = strlen("SERVER"), w_tool = strlen("TOOL");
    size_t w_name = strlen("NAME"), rows = 0;
    for (size_t i = 0; i < n; i++) {
      if (!selected(mcp_tool_list_server(l, i))) continue;
      size_t a = safe_width(mcp_tool_list_server(l, i));
      size_t b = safe_width(mcp_tool_list_tool(l, i));
      size_t c = safe_width(mcp_tool_list_name(l, i));
      if (a > w_server) w_server = a;
      if (b > w_tool) w_tool = b;
      if (c > w_name) w_name = c;
      rows++;
    }
    if (rows) {
      printf("%-*s  %-*s  %-*s  %s\n", (int)w_server, "SERVER", (int)w_tool,
             "TOOL", (int)w_name, "NAME", "DESCRIPTION");
    }
    for (size_t i = 0; i < n; i++) {
      if (!selected(mcp_tool_list_server(l, i))) continue;
      json_object *t = json_tokener_parse(mcp_tool_list_json(l, i));
      const char *desc = jstring(t, "description");
      print_cell(mcp_tool_list_server(l, i), w_server);
      fputs("  ", stdout);
      print_cell(mcp_tool_list_tool(l, i), w_tool);
      fputs("  ", stdout);
      bool deferred = mcp_tool_list_deferred(l, i);
      size_t dlen = desc ? strcspn(desc, "\r\n") : 0;
      if (deferred || dlen) {
        print_cell(mcp_tool_list_name(l, i), w_name);
        fputs("  ", stdout);
      } else {
        print_clean(mcp_tool_list_name(l, i), SIZE_MAX);
      }
      if (deferred) fputs(dlen ? "(deferred) " : "(deferred)", stdout);
      print_clean(desc ? desc : "", dlen);
      putchar('\n');
      json_object_put(t);
    }
  }
  fflush(stdout);
  mcp_tool_list_unref(l);

  struct status st;
  if (!status_load(&st)) return EXIT_CONNECTION;
  int rc = EXIT_OK;
  for (size_t i = 0; i < st.n; i++) {
    const struct srv *s = &st.v[i];
    if (!s->selected || !enabled(s) || state_is(s, "ready")) continue;
    if (!wait && !settled(s)) {
      if (!g_cli.quiet)
        complain("%s: still connecting; %s", s->name,
                 state_is(s, "deferred")
                     ? "its tools come from the cache (deferred)"
                     : "its tools are not listed yet");
      continue;
    }
    report_server("", s);
    rc = EXIT_CONNECTION;
  }
  status_free(&st);
  return rc;
}

/* ---- servers ---------------------------------------------------------- */

static int cmd_servers(bool as_json, bool check, bool wait) {
  if (wait) wait_for(servers_settled, NULL, settle_deadline());
  struct status st;
  if (!status_load(&st)) return EXIT_CONNECTION;
  if (as_json) {
    json_object *out = json_object_new_array();
    for (size_t i = 0; i < json_object_array_length(st.arr); i++) {
      json_object *o = json_object_array_get_idx(st.arr, i);
      const char *name = jstring(o, "name");
      if (name && selected(name))
        json_object_array_add(out, json_object_get(o));
    }
    print_json_object(out);
    json_object_put(out);
  } else {
    size_t w_name = strlen("NAME"), w_type = strlen("TYPE");
    size_t w_state = strlen("STATE");
    for (size_t i = 0; i < st.n; i++) {
      const struct srv *s = &st.v[i];
      if (!s->selected) continue;
      if (safe_width(s->name) > w_name) w_name = safe_width(s->name);
      if (s->type && safe_width(s->type) > w_type) w_type = safe_width(s->type);
      if (safe_width(s->state) > w_state) w_state = safe_width(s->state);
    }
    printf("%-*s  %-*s  %-*s  %5s  %s\n", (int)w_name, "NAME", (int)w_type,
           "TYPE", (int)w_state, "STATE", "TOOLS", "LAST ERROR");
    for (size_t i = 0; i < st.n; i++) {
      const struct srv *s = &st.v[i];
      if (!s->selected) continue;
      print_cell(s->name, w_name);
      fputs("  ", stdout);
      print_cell(s->type ? s->type : "-", w_type);
      fputs("  ", stdout);
      print_cell(s->state, w_state);
      printf("  %5lld", (long long)s->tools);
      if (s->last_error) {
        fputs("  ", stdout);
        print_clean(s->last_error, strcspn(s->last_error, "\r\n"));
      }
      putchar('\n');
    }
    fflush(stdout);
  }

  int rc = EXIT_OK;
  if (check) {
    struct sbuf why = {0};
    for (size_t i = 0; i < st.n; i++) {
      const struct srv *s = &st.v[i];
      if (!s->selected || !enabled(s) || state_is(s, "ready")) continue;
      sbuf_add(&why, "%s%s (%s)", why.len ? ", " : "", s->name, s->state);
    }
    if (why.len) {
      complain("not ready: %s", why.s);
      rc = EXIT_CONNECTION;
    }
    free(why.s);
  }
  status_free(&st);
  return rc;
}

/* ---- ping ------------------------------------------------------------- */

struct ping_job {
  const char *name;
  mcp_status status;
  mcp_error err;
  double ms;
  pthread_t thread;
};

static void *ping_run(void *arg) {
  struct ping_job *j = arg;
  mcp_call_options *co = new_call_options();
  char *result = NULL;
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  j->status = co ? mcp_manager_request(g_mgr, j->name, "ping", NULL, co,
                                       &result, &j->err)
                 : MCP_ENOMEM;
  clock_gettime(CLOCK_MONOTONIC, &b);
  j->ms = (double)(b.tv_sec - a.tv_sec) * 1e3 +
          (double)(b.tv_nsec - a.tv_nsec) / 1e6;
  mcp_free(result);
  mcp_call_options_free(co);
  return NULL;
}

static int cmd_ping(void) {
  wait_for(servers_settled, NULL, settle_deadline());
  struct status st;
  if (!status_load(&st)) return EXIT_CONNECTION;
  struct ping_job *jobs = xmalloc(st.n * sizeof(*jobs));
  bool *threaded = xmalloc(st.n * sizeof(*threaded));
  size_t n = 0;
  for (size_t i = 0; i < st.n; i++) {
    const struct srv *s = &st.v[i];
    if (!s->selected || !state_is(s, "ready")) continue;
    memset(&jobs[n], 0, sizeof(jobs[n]));
    jobs[n++].name = s->name;
  }
  atomic_store(&g_cancellable, true);
  for (size_t i = 0; i < n; i++)
    threaded[i] = n > 1 && pthread_create(&jobs[i].thread, NULL, ping_run,
                                          &jobs[i]) == 0;
  for (size_t i = 0; i < n; i++) {
    if (threaded[i])
      pthread_join(jobs[i].thread, NULL);
    else
      ping_run(&jobs[i]);
  }
  atomic_store(&g_cancellable, false);

  int rc = EXIT_OK;
  for (size_t i = 0; i < n; i++)
    if (jobs[i].status == MCP_OK) {
      safe_puts(stdout, jobs[i].name, SAFE_CELL);
      printf(": ok (%.2f ms)\n", jobs[i].ms);
    }
  fflush(stdout);
  for (size_t i = 0; i < n; i++) {
    if (jobs[i].status == MCP_OK) continue;
    report("", jobs[i].name, "ping", jobs[i].status, &jobs[i].err);
    if (rc == EXIT_OK) rc = exit_code(jobs[i].status);
  }
  for (size_t i = 0; i < st.n; i++) {
    const struct srv *s = &st.v[i];
    if (!s->selected || !enabled(s) || state_is(s, "ready")) continue;
    report_server("", s);
    if (rc == EXIT_OK) rc = EXIT_CONNECTION;
  }
  for (size_t i = 0; i < n; i++) mcp_error_clear(&jobs[i].err);
  free(threaded);
  free(jobs);
  status_free(&st);
  return rc;
}

/* ---- request ---------------------------------------------------------- */

/*
 * Waits for |name| to settle.  Returns true when it is ready; else prints
 * why it is not and sets *rc.
 */
static bool server_ready(const char *name, int *rc) {
  wait_for(servers_settled, (void *)name, settle_deadline());
  struct status st;
  if (!status_load(&st)) {
    *rc = EXIT_CONNECTION;
    return false;
  }
  const struct srv *s = status_find(&st, name);
  bool ok = s && state_is(s, "ready");
  if (!ok && s) {
    report_server("", s);
    *rc = enabled(s) ? EXIT_CONNECTION : EXIT_USAGE;
  } else if (!ok) {
    complain("no server named %s", name);
    *rc = EXIT_USAGE;
  }
  status_free(&st);
  return ok;
}

static int cmd_request(const char *method, const char *params) {
  struct status st;
  if (!status_load(&st)) return EXIT_CONNECTION;
  size_t n = 0;
  const struct srv *only = NULL;
  for (size_t i = 0; i < st.n; i++)
    if (st.v[i].selected && enabled(&st.v[i])) {
      only = &st.v[i];
      n++;
    }
  char *name = n == 1 ? xstrdup(only->name) : NULL;
  status_free(&st);
  if (!name) {
    complain("request needs exactly one server, but %zu are configured; "
             "choose one with --server NAME", n);
    return EXIT_USAGE;
  }
  int rc = EXIT_OK;
  if (!server_ready(name, &rc)) {
    free(name);
    return rc;
  }
  mcp_error err = MCP_ERROR_INIT;
  char *result = NULL;
  mcp_call_options *co = new_call_options();
  atomic_store(&g_cancellable, true);
  mcp_status s = co ? mcp_manager_request(g_mgr, name, method, params, co,
                                          &result, &err)
                    : MCP_ENOMEM;
  atomic_store(&g_cancellable, false);
  mcp_call_options_free(co);
  if (s == MCP_OK) {
    print_json(result);
  } else {
    report("", name, method, s, &err);
    rc = exit_code(s);
  }
  mcp_free(result);
  mcp_error_clear(&err);
  free(name);
  return rc;
}

/* ---- call ------------------------------------------------------------- */

/* "a, b, c": the tools of |server| in |l|; a new string. */
static char *tool_names(mcp_tool_list *l, const char *server) {
  struct sbuf b = {0};
  sbuf_add(&b, "%s", "");
  for (size_t i = 0; i < mcp_tool_list_count(l); i++)
    if (strcmp(mcp_tool_list_server(l, i), server) == 0)
      sbuf_add(&b, "%s%s", b.len ? ", " : "", mcp_tool_list_tool(l, i));
  return b.s;
}

/* Done-predicate: |arg| is a public name in the list, or all settled. */
static bool call_resolvable(void *arg) {
  const char *name = arg;
  mcp_tool_list *l = mcp_manager_tools(g_mgr);
  bool found = false;
  for (size_t i = 0; !found && i < mcp_tool_list_count(l); i++)
    found = strcmp(mcp_tool_list_name(l, i), name) == 0 &&
            selected(mcp_tool_list_server(l, i));
  mcp_tool_list_unref(l);
  return found || servers_settled(NULL);
}

/* The text of the first text item of a CallToolResult; a new string. */
static char *first_text(const char *result) {
  char why[64];
  json_object *obj, *content, *text = NULL;
  if (!result) return NULL;
  obj = parse_json(result, strlen(result), false, why, sizeof(why));
  if (json_object_object_get_ex(obj, "content", &content) &&
      json_object_is_type(content, json_type_array))
    for (size_t i = 0; !text && i < json_object_array_length(content); i++) {
      json_object *item = json_object_array_get_idx(content, i);
      const char *type = jstring(item, "type");
      if (type && strcmp(type, "text") == 0)
        json_object_object_get_ex(item, "text", &text);
    }
  char *s = json_object_is_type(text, json_type_string)
                ? xstrdup(json_object_get_string(text))
                : NULL;
  json_object_put(obj);
  return s;
}

/*
 * Finds the server and tool |spec| names: SERVER/TOOL when SERVER is a
 * server in use, else a public name, else a bare tool name that exactly
 * one server has.  Returns an exit code; on EXIT_OK *server and *tool are
 * new strings.
 */
static int resolve_tool(const char *spec, char **server, char **tool) {
  *server = *tool = NULL;
  const char *slash = strchr(spec, '/');
  if (slash) {
    struct status st;
    if (!status_load(&st)) return EXIT_CONNECTION;
    char *prefix = xstrndup(spec, (size_t)(slash - spec));
    const struct srv *s = status_find(&st, prefix);
    bool is_server = s && s->selected;
    status_free(&st);
    if (is_server) {
      if (!slash[1]) {
        free(prefix);
        complain("call: empty tool name in '%s'", spec);
        return EXIT_USAGE;
      }
      int rc = EXIT_OK;
      if (!server_ready(prefix, &rc)) {
        free(prefix);
        return rc;
      }
      mcp_tool_list *l = mcp_manager_tools(g_mgr);
      bool found = false;
      for (size_t i = 0; !found && i < mcp_tool_list_count(l); i++)
        found = strcmp(mcp_tool_list_server(l, i), prefix) == 0 &&
                strcmp(mcp_tool_list_tool(l, i), slash + 1) == 0;
      if (!found) {
        char *names = tool_names(l, prefix);
        complain("unknown tool '%s' on server %s (it has: %s)", slash + 1,
                 prefix, *names ? names : "no tools");
        free(names);
        free(prefix);
        mcp_tool_list_unref(l);
        return EXIT_USAGE;
      }
      mcp_tool_list_unref(l);
      *server = prefix;
      *tool = xstrdup(slash + 1);
      return EXIT_OK;
    }
    free(prefix);
  }

  wait_for(call_resolvable, (void *)spec, settle_deadline());
  mcp_tool_list *l = mcp_manager_tools(g_mgr);
  size_t n = mcp_tool_list_count(l), matches = 0, found = 0;
  for (size_t i = 0; i < n; i++)
    if (selected(mcp_tool_list_server(l, i)) &&
        strcmp(mcp_tool_list_name(l, i), spec) == 0) {
      *server = xstrdup(mcp_tool_list_server(l, i));
      *tool = xstrdup(mcp_tool_list_tool(l, i));
      mcp_tool_list_unref(l);
      return EXIT_OK;
    }
  for (size_t i = 0; i < n; i++)
    if (selected(mcp_tool_list_server(l, i)) &&
        strcmp(mcp_tool_list_tool(l, i), spec) == 0) {
      if (!matches) found = i;
      matches++;
    }
  int rc = EXIT_USAGE;
  if (matches == 1) {
    *server = xstrdup(mcp_tool_list_server(l, found));
    *tool = xstrdup(mcp_tool_list_tool(l, found));
    rc = EXIT_OK;
  } else if (matches > 1) {
    struct sbuf list = {0};
    for (size_t i = 0; i < n; i++)
      if (selected(mcp_tool_list_server(l, i)) &&
          strcmp(mcp_tool_list_tool(l, i), spec) == 0)
        sbuf_add(&list, "%s%s/%s", list.len ? ", " : "",
                 mcp_tool_list_server(l, i), spec);
    complain("tool '%s' is ambiguous; use one of: %s", spec, list.s);
    free(list.s);
  } else {
    /* The tool may live on a server that is not up. */
    struct status st;
    if (!status_load(&st)) {
      mcp_tool_list_unref(l);
      return EXIT_CONNECTION;
    }
    const struct srv *down = NULL, *one = NULL;
    size_t n_used = 0;
    for (size_t i = 0; i < st.n; i++) {
      const struct srv *s = &st.v[i];
      if (!s->selected || !enabled(s)) continue;
      n_used++;
      one = s;
      if (!down && !state_is(s, "ready")) down = s;
    }
    if (down) {
      report_server("", down);
      rc = EXIT_CONNECTION;
    } else if (n_used == 1) {
      char *names = tool_names(l, one->name);
      complain("unknown tool '%s' on server %s (it has: %s)", spec, one->name,
               *names ? names : "no tools");
      free(names);
    } else {
      complain("unknown tool '%s': no server has it", spec);
    }
    status_free(&st);
  }
  mcp_tool_list_unref(l);
  return rc;
}

static int cmd_call(const char *spec, const char *args) {
  if (!*spec) {
    complain("call: empty tool name");
    return EXIT_USAGE;
  }
  char *server, *tool;
  int rc = resolve_tool(spec, &server, &tool);
  if (rc != EXIT_OK) return rc;

  mcp_call_options *co = new_call_options();
  if (!co) {
    complain("out of memory");
    free(server);
    free(tool);
    return EXIT_CONNECTION;
  }
  bool show_progress = !g_cli.quiet && isatty(STDERR_FILENO);
  if (show_progress) mcp_call_options_set_progress(co, on_progress, NULL);

  size_t len = strlen(server) + strlen(tool) + 2;
  char *target = xmalloc(len);
  snprintf(target, len, "%s/%s", server, tool);
  char step[320];
  snprintf(step, sizeof(step), "tools/call %.300s", tool);
  mcp_error err = MCP_ERROR_INIT;
  char *result = NULL;
  atomic_store(&g_cancellable, true);
  mcp_status st = mcp_manager_call_tool(g_mgr, target, args, co, &result, &err);
  atomic_store(&g_cancellable, false);
  mcp_call_options_free(co);
  if (show_progress) end_progress();

  if (result) print_json(result);
  if (st == MCP_ETOOLERROR) {
    char *text = err.message ? NULL : first_text(result);
    complain("%s: tool %s reported an error: %s", server, tool,
             err.message ? err.message : text ? text : "(no text)");
    free(text);
  } else if (st != MCP_OK) {
    report("", server, step, st, &err);
  }
  rc = exit_code(st);
  mcp_free(result);
  mcp_error_clear(&err);
  free(target);
  free(server);
  free(tool);
  return rc;
}

/* ---- main ------------------------------------------------------------- */

/* Checks that |text| is a JSON object; exits 2 otherwise. */
static void check_json_object(const char *what, const char *text) {
  char why[256];
  json_object *obj = parse_json(text, strlen(text), true, why, sizeof(why));
  if (!obj) usage_error("%s is not valid JSON: %s", what, why);
  bool ok = json_object_is_type(obj, json_type_object);
  json_object_put(obj);
  if (!ok) usage_error("%s must be a JSON object", what);
}

/* The flags of `tools` and `servers`. */
struct listing {
  bool json;
  bool check;
  int wait; /* 1 --wait, 0 --no-wait, -1 the default */
};

static void parse_listing(const char *cmd, char **args, int nargs,
                          bool allow_check, struct listing *out) {
  out->json = out->check = false;
  out->wait = -1;
  for (int i = 0; i < nargs; i++) {
    if (strcmp(args[i], "--json") == 0)
      out->json = true;
    else if (allow_check && strcmp(args[i], "--check") == 0)
      out->check = true;
    else if (strcmp(args[i], "--wait") == 0)
      out->wait = 1;
    else if (strcmp(args[i], "--no-wait") == 0)
      out->wait = 0;
    else
      usage_error("%s: unexpected argument '%s'", cmd, args[i]);
  }
  /* Scripts get complete lists; a person at a terminal gets them fast. */
  if (out->wait < 0) out->wait = out->check || !isatty(STDOUT_FILENO);
}

int main(int argc, char **argv) {
  /* `mcpconn bench ...` has options of its own (see bin/mcpconn-bench.c). */
  if (argc >= 2 && strcmp(argv[1], "bench") == 0) return mcpconn_bench_main(argc - 1, argv + 1);
  sigemptyset(&g_sigint_set);
  sigaddset(&g_sigint_set, SIGINT);
  /* A closed stdout shows up as a write error, not a signal. */
  signal(SIGPIPE, SIG_IGN);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&g_ev.cond, &ca);
  pthread_condattr_destroy(&ca);

  parse_options(argc, argv);
  if (optind >= argc) usage_error("no command given");
  const char *cmd = argv[optind];
  char **args = argv + optind + 1;
  int nargs = argc - optind - 1;

  struct listing lf = {false, false, -1};
  if (strcmp(cmd, "tools") == 0) {
    parse_listing(cmd, args, nargs, false, &lf);
  } else if (strcmp(cmd, "servers") == 0) {
    parse_listing(cmd, args, nargs, true, &lf);
  } else if (strcmp(cmd, "call") == 0) {
    if (nargs < 1 || nargs > 2) usage_error("usage: call TOOL [ARGS_JSON]");
    if (nargs == 2) check_json_object("ARGS_JSON", args[1]);
  } else if (strcmp(cmd, "ping") == 0) {
    if (nargs) usage_error("ping: unexpected argument '%s'", args[0]);
  } else if (strcmp(cmd, "request") == 0) {
    if (nargs < 1 || nargs > 2)
      usage_error("usage: request METHOD [PARAMS_JSON]");
    if (nargs == 2) check_json_object("PARAMS_JSON", args[1]);
  } else if (strcmp(cmd, "trust") == 0) {
    if (nargs) usage_error("trust: unexpected argument '%s'", args[0]);
    int trc = cmd_trust();
    free_cli(&g_cli);
    return trc;
  } else {
    usage_error("unknown command '%s'", cmd);
  }

  g_cancel = mcp_cancel_new();
  if (!g_cancel) {
    complain("out of memory");
    return EXIT_CONNECTION;
  }
  /* Before any other thread exists (the manager starts its threads in
   * mcp_manager_start), so every thread inherits the mask and SIGINT
   * reaches only sigwait(). */
  pthread_sigmask(SIG_BLOCK, &g_sigint_set, NULL);
  pthread_t sig_thread;
  bool sig_thread_started =
      pthread_create(&sig_thread, NULL, signal_thread, NULL) == 0;

  int rc = setup(strcmp(cmd, "servers") == 0);
  if (rc != EXIT_OK) {
    /* setup() said why. */
  } else if (strcmp(cmd, "tools") == 0) {
    rc = cmd_tools(lf.json, lf.wait);
  } else if (strcmp(cmd, "servers") == 0) {
    rc = cmd_servers(lf.json, lf.check, lf.wait);
  } else if (strcmp(cmd, "call") == 0) {
    rc = cmd_call(args[0], nargs == 2 ? args[1] : NULL);
  } else if (strcmp(cmd, "ping") == 0) {
    rc = cmd_ping();
  } else {
    rc = cmd_request(args[0], nargs == 2 ? args[1] : NULL);
  }

  if (sig_thread_started) {
    atomic_store(&g_quitting, true);
    pthread_kill(sig_thread, SIGINT);
    pthread_join(sig_thread, NULL);
  }
  if (fflush(stdout) != 0 || ferror(stdout)) {
    if (rc == EXIT_OK) {
      complain("cannot write the output: %s", strerror(errno));
      rc = EXIT_CONNECTION;
    }
  }
  if (g_mgr && connects_pending()) {
    /* mcp_manager_free() would wait for those connects to end (up to
     * their timeout) although we are done: leave now.  Our pipes close
     * with us, so stdio servers see EOF and exit. */
    fflush(stderr);
    _exit(rc);
  }
  mcp_manager_free(g_mgr);
  ev_reset();
  mcp_cancel_unref(g_cancel);
  free_cli(&g_cli);
  return rc;
}
