/*
 * mcpconn: the command-line client.  It talks to MCP servers through the
 * public API only (mcpconn.h) and uses json-c just to check and pretty-print
 * JSON.
 *
 * Shape: parse the command line and the config file into server
 * definitions; connect to the servers the command needs, one thread per
 * server; run the command; close every client (in parallel) and exit with a
 * code that says what kind of failure happened (see usage()).
 *
 * SIGINT is blocked in every thread and taken by one sigwait() thread, which
 * fires the cancel token shared by every request, so an interrupted call
 * sends notifications/cancelled to its server before we exit with 130.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "mcpconn.h"

#define PROG "mcpconn"
#define DEMO_SERVER_PROG "mcpconn-demo-server"
#define DEMO_SERVER_NAME "demo"
#define DEFAULT_TIMEOUT_MS 30000

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
"Talks to MCP (Model Context Protocol) servers over stdio.\n"
"\n"
"Commands:\n"
"  tools [--json]                list the tools of every server; with --json,\n"
"                                a JSON array of {server, name, description,\n"
"                                inputSchema}\n"
"  call TOOL [ARGS_JSON]         call a tool with ARGS_JSON (a JSON object,\n"
"                                default none) and print the result JSON; TOOL\n"
"                                is SERVER/TOOL, or a bare name when exactly one\n"
"                                server has a tool of that name\n"
"  ping                          ping every server\n"
"  request METHOD [PARAMS_JSON]  send any request to one server and print the\n"
"                                result JSON\n"
"\n"
"Global options:\n"
"  --stdio 'CMD ARGS...'  add a stdio server; the text is split into words by\n"
"                         spaces, 'single' and \"double\" quotes and backslash\n"
"                         (no shell is run); repeatable\n"
"  --name NAME            name the --stdio server given just before it\n"
"                         (default: the command's basename)\n"
"  --config FILE          add the servers of a JSON file:\n"
"                         {\"mcpServers\": {\"NAME\": {\"command\": \"...\",\n"
"                         \"args\": [...], \"env\": {...}, \"cwd\": \"...\"}}}\n"
"                         (entries with \"disabled\": true are skipped;\n"
"                         HTTP entries, with \"url\" or \"type\": \"http\" or\n"
"                         \"sse\", are refused: not supported yet)\n"
"  -s, --server NAME      use only the named server; repeatable\n"
"  --timeout MS           timeout of the connection and of each request in\n"
"                         ms (default 30000; 0: none)\n"
"  -q, --quiet            no notices or progress on stderr\n"
"  -v, --verbose          also print the library's log on stderr\n"
"  -h, --help             show this help and exit\n"
"  --version              show the version and exit\n"
"\n"
"With neither --stdio nor --config, the bundled demo server is used (found\n"
"through $MCPCONN_DEMO_SERVER, next to this program, or where it was\n"
"installed).  While `call` runs, progress is shown on stderr when stderr is\n"
"a terminal; Ctrl-C cancels the call on the server.\n"
"\n"
"Exit status: 0 success; 1 the tool reported an error (isError: true; the\n"
"result is still printed); 2 usage or configuration error (bad option, bad\n"
"JSON, unknown or ambiguous tool, unreadable config); 3 connection, protocol\n"
"or timeout error; 130 interrupted.\n");
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

static void strv_free(struct strv *sv) {
  for (size_t i = 0; i < sv->n; i++) free(sv->v[i]);
  free(sv->v);
  memset(sv, 0, sizeof(*sv));
}

/* Prints "mcpconn: <reason>" on stderr; the reason is kept to one line. */
static void complain(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void complain(const char *fmt, ...) {
  char line[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof(line), fmt, ap);
  va_end(ap);
  for (char *p = line; *p; p++)
    if (*p == '\n' || *p == '\r') *p = ' ';
  fprintf(stderr, PROG ": %s\n", line);
}

/* ---- server definitions ----------------------------------------------- */

struct server_def {
  char *name;
  struct strv argv;
  struct strv env; /* NAME, VALUE, NAME, VALUE, ... */
  char *cwd;       /* or NULL */
  bool selected;   /* used by this run (all, or those named by --server) */
};

/* Everything the command line and the config file said. */
struct cli {
  struct server_def *defs;
  size_t n_defs;
  size_t cap_defs;
  struct strv only;       /* --server names */
  int64_t timeout_ms;
  bool quiet;
  bool verbose;
  bool any_source;        /* --stdio or --config was given */
};

/* Global so that exit() from deep inside parsing leaks nothing visible. */
static struct cli g_cli;

static struct server_def *add_def(struct cli *cli) {
  if (cli->n_defs == cli->cap_defs) {
    cli->cap_defs = cli->cap_defs ? cli->cap_defs * 2 : 4;
    cli->defs = xrealloc(cli->defs, cli->cap_defs * sizeof(*cli->defs));
  }
  struct server_def *d = &cli->defs[cli->n_defs++];
  memset(d, 0, sizeof(*d));
  return d;
}

static void free_def(struct server_def *d) {
  free(d->name);
  strv_free(&d->argv);
  strv_free(&d->env);
  free(d->cwd);
}

static void free_defs(struct cli *cli) {
  for (size_t i = 0; i < cli->n_defs; i++) free_def(&cli->defs[i]);
  free(cli->defs);
  strv_free(&cli->only);
}

static struct server_def *find_def(struct cli *cli, const char *name,
                                   size_t len) {
  for (size_t i = 0; i < cli->n_defs; i++)
    if (strlen(cli->defs[i].name) == len &&
        memcmp(cli->defs[i].name, name, len) == 0)
      return &cli->defs[i];
  return NULL;
}

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash && slash[1] ? slash + 1 : path;
}

/*
 * Splits |s| into words the way a shell would, without running one: blanks
 * separate words; '...' keeps its text literally; "..." keeps its text but
 * lets backslash escape " and \; outside quotes a backslash keeps the next
 * character literally.  Returns NULL on success, else why it failed.
 */
static const char *split_words(const char *s, struct strv *out) {
  size_t cap = strlen(s) + 1, len = 0;
  char *word = xmalloc(cap);
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

static bool valid_name(const char *name) {
  return *name && !strchr(name, '/');
}

/*
 * Fails when two servers share a name.  Checked once every option is read,
 * since a --name after a --stdio may still resolve a clash.
 */
static void check_unique_names(struct cli *cli) {
  for (size_t i = 0; i < cli->n_defs; i++)
    for (size_t j = i + 1; j < cli->n_defs; j++)
      if (strcmp(cli->defs[i].name, cli->defs[j].name) == 0) {
        complain("two servers are named '%s'; give a --stdio server another "
                 "name with --name NAME", cli->defs[i].name);
        exit(EXIT_USAGE);
      }
}

static void add_stdio_def(struct cli *cli, const char *cmdline) {
  struct strv words = {0};
  const char *why = split_words(cmdline, &words);
  if (why) {
    strv_free(&words);
    complain("--stdio '%s': %s", cmdline, why);
    exit(EXIT_USAGE);
  }
  if (!words.n) {
    complain("--stdio needs a command");
    exit(EXIT_USAGE);
  }
  struct server_def *d = add_def(cli);
  d->name = xstrdup(base_name(words.v[0]));
  d->argv = words;
}

static void rename_last_stdio(struct cli *cli, const char *name,
                              bool last_was_stdio) {
  if (!last_was_stdio) {
    complain("--name must follow the --stdio it names");
    exit(EXIT_USAGE);
  }
  if (!valid_name(name)) {
    complain("--name '%s': a server name must be non-empty and must not "
             "contain '/'", name);
    exit(EXIT_USAGE);
  }
  struct server_def *d = &cli->defs[cli->n_defs - 1];
  free(d->name);
  d->name = xstrdup(name);
}

/* Reads a whole file; NULL with errno set on failure. */
static char *read_file(const char *path, size_t *len_out) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 4096, len = 0;
  char *buf = xmalloc(cap);
  for (;;) {
    if (len + 1 >= cap) buf = xrealloc(buf, cap *= 2);
    size_t n = fread(buf + len, 1, cap - len - 1, f);
    len += n;
    if (n == 0) break;
  }
  int failed = ferror(f);
  fclose(f);
  if (failed) {
    free(buf);
    errno = EIO;
    return NULL;
  }
  buf[len] = '\0';
  *len_out = len;
  return buf;
}

/* Parses |text| as JSON; NULL (and a reason in |why|) when it is not. */
static json_object *parse_json(const char *text, size_t len, char *why,
                               size_t why_size) {
  json_tokener *tok = json_tokener_new();
  if (!tok) {
    snprintf(why, why_size, "out of memory");
    return NULL;
  }
  json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
  json_object *obj = json_tokener_parse_ex(tok, text, (int)len + 1);
  enum json_tokener_error e = json_tokener_get_error(tok);
  size_t end = json_tokener_get_parse_end(tok);
  json_tokener_free(tok);
  if (e != json_tokener_success || end < len) {
    /* Report a line and column so a config file is quick to fix. */
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

static bool is_object(json_object *o) {
  return json_object_is_type(o, json_type_object);
}

/*
 * Reads one "mcpServers" entry into |d| (zeroed by the caller).  Returns
 * NULL on success (with d->name NULL for a disabled entry), else why the
 * entry is invalid; |d| then holds whatever was read so far.
 */
static const char *read_config_entry(const char *name, json_object *entry,
                                     struct server_def *d) {
  json_object *v;
  if (!is_object(entry)) return "the entry must be an object";
  if (json_object_object_get_ex(entry, "disabled", &v) &&
      json_object_get_boolean(v))
    return NULL;
  const char *type = NULL;
  if (json_object_object_get_ex(entry, "type", &v)) {
    if (!json_object_is_type(v, json_type_string))
      return "\"type\" must be a string";
    type = json_object_get_string(v);
  }
  if (json_object_object_get_ex(entry, "url", NULL) ||
      (type && (strcmp(type, "http") == 0 || strcmp(type, "sse") == 0 ||
                strcmp(type, "streamable-http") == 0)))
    return "HTTP servers are not supported yet";
  if (type && strcmp(type, "stdio") != 0)
    return "unknown \"type\" (only \"stdio\" is supported)";
  if (!valid_name(name))
    return "invalid server name (it must be non-empty and must not contain "
           "'/')";

  if (!json_object_object_get_ex(entry, "command", &v) ||
      !json_object_is_type(v, json_type_string) || !*json_object_get_string(v))
    return "\"command\" must be a non-empty string";
  strv_push(&d->argv, xstrdup(json_object_get_string(v)));
  if (json_object_object_get_ex(entry, "args", &v)) {
    if (!json_object_is_type(v, json_type_array))
      return "\"args\" must be an array of strings";
    for (size_t i = 0; i < json_object_array_length(v); i++) {
      json_object *a = json_object_array_get_idx(v, i);
      if (!json_object_is_type(a, json_type_string))
        return "\"args\" must be an array of strings";
      strv_push(&d->argv, xstrdup(json_object_get_string(a)));
    }
  }
  if (json_object_object_get_ex(entry, "env", &v)) {
    if (!is_object(v)) return "\"env\" must be an object of strings";
    json_object_object_foreach(v, key, val) {
      if (!json_object_is_type(val, json_type_string))
        return "\"env\" must be an object of strings";
      strv_push(&d->env, xstrdup(key));
      strv_push(&d->env, xstrdup(json_object_get_string(val)));
    }
  }
  if (json_object_object_get_ex(entry, "cwd", &v)) {
    if (!json_object_is_type(v, json_type_string))
      return "\"cwd\" must be a string";
    d->cwd = xstrdup(json_object_get_string(v));
  }
  d->name = xstrdup(name);
  return NULL;
}

/* Adds the servers of a config file; exits 2 on any problem. */
static void load_config(struct cli *cli, const char *path) {
  size_t len;
  char *text = read_file(path, &len);
  if (!text) {
    complain("cannot read config %s: %s", path, strerror(errno));
    exit(EXIT_USAGE);
  }
  char why[256];
  json_object *root = parse_json(text, len, why, sizeof(why));
  free(text);
  if (!root) {
    complain("config %s: invalid JSON: %s", path, why);
    exit(EXIT_USAGE);
  }
  json_object *servers = NULL;
  if (!is_object(root) ||
      !json_object_object_get_ex(root, "mcpServers", &servers) ||
      !is_object(servers)) {
    json_object_put(root);
    complain("config %s: expected an object with an \"mcpServers\" object",
             path);
    exit(EXIT_USAGE);
  }

  json_object_object_foreach(servers, name, entry) {
    struct server_def d;
    memset(&d, 0, sizeof(d));
    const char *err = read_config_entry(name, entry, &d);
    if (err) {
      complain("config %s: server '%s': %s", path, name, err);
      free_def(&d);
      json_object_put(root);
      exit(EXIT_USAGE);
    }
    if (d.name) *add_def(cli) = d; /* else disabled */
  }
  json_object_put(root);
}

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

/* ---- interruption ----------------------------------------------------- */

/* Fired by SIGINT; every request carries it.  Set before signals are taken. */
static mcp_cancel *g_cancel;
static atomic_bool g_interrupted;
/* True while every blocking call in flight carries g_cancel. */
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
      /* A second Ctrl-C, or nothing to cancel (connecting): leave now.  The
       * servers see EOF on stdin when our pipes close. */
      static const char msg[] = PROG ": interrupted\n";
      ssize_t ignored = write(STDERR_FILENO, msg, sizeof(msg) - 1);
      (void)ignored;
      _exit(EXIT_INTERRUPTED);
    }
    mcp_cancel_fire(g_cancel);
  }
  return NULL;
}

/* ---- connections ------------------------------------------------------ */

enum job { JOB_CONNECT, JOB_LIST, JOB_PING };

/* One server in use by this run. */
struct conn {
  struct server_def *def;
  enum job job;
  mcp_client *client;
  mcp_status status;   /* MCP_OK, or the failure of |step| */
  mcp_error err;       /* details from the library */
  char *why;           /* our own reason, when the library gave none */
  const char *step;    /* what failed: "connect", "tools/list", "ping" */
  json_object *tools;  /* JOB_LIST: the parsed tool array */
  double ping_ms;      /* JOB_PING: round trip */
  pthread_t thread;
};

static void log_to_stderr(void *user, mcp_log_level level, const char *msg) {
  static const char *const names[] = {"debug", "info", "warning", "error"};
  const struct server_def *d = user;
  fprintf(stderr, PROG ": %s: %s: %s\n", d->name,
          names[level >= 0 && level <= 3 ? level : 0], msg);
}

/* Options for one request; each thread makes its own object. */
static mcp_call_options *new_call_options(void) {
  mcp_call_options *o = mcp_call_options_new();
  if (!o) return NULL;
  mcp_call_options_set_timeout_ms(o, g_cli.timeout_ms);
  mcp_call_options_set_cancel(o, g_cancel);
  return o;
}

static double elapsed_ms(const struct timespec *t0) {
  struct timespec t1;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  return (double)(t1.tv_sec - t0->tv_sec) * 1e3 +
         (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/* Connects one server and runs its job.  Runs on its own thread. */
static void *conn_run(void *arg) {
  struct conn *c = arg;
  const struct server_def *d = c->def;
  mcp_client_options *o = mcp_client_options_new();
  mcp_call_options *co = NULL;
  char *tools_json = NULL;
  /* The option setters fill no mcp_error: report() then uses mcp_strerror. */
  c->step = "connect";
  c->status = MCP_ENOMEM;
  if (!o) goto out;
  c->status = mcp_client_options_set_stdio(o, (const char *const *)d->argv.v);
  for (size_t i = 0; c->status == MCP_OK && i + 1 < d->env.n; i += 2)
    c->status = mcp_client_options_set_env(o, d->env.v[i], d->env.v[i + 1]);
  if (c->status == MCP_OK && d->cwd)
    c->status = mcp_client_options_set_cwd(o, d->cwd);
  if (c->status == MCP_OK)
    c->status = mcp_client_options_set_client_info(o, PROG, MCP_VERSION);
  if (c->status != MCP_OK) goto out;
  mcp_client_options_set_timeout_ms(o, g_cli.timeout_ms);
  if (g_cli.verbose)
    mcp_client_options_set_log(o, log_to_stderr, (void *)d);

  c->status = mcp_client_connect(o, &c->client, &c->err);
  if (c->status != MCP_OK || c->job == JOB_CONNECT) goto out;

  co = new_call_options();
  if (!co) {
    c->status = MCP_ENOMEM;
    goto out;
  }
  if (c->job == JOB_LIST) {
    c->step = "tools/list";
    c->status = mcp_client_list_tools(c->client, co, &tools_json, &c->err);
    if (c->status == MCP_ERPC && c->err.rpc_code == -32601) {
      /* A server without tools may not know tools/list at all. */
      mcp_error_clear(&c->err);
      c->tools = json_object_new_array();
      c->status = MCP_OK;
    } else if (c->status == MCP_OK) {
      char why[256];
      c->tools = parse_json(tools_json, strlen(tools_json), why, sizeof(why));
      if (!json_object_is_type(c->tools, json_type_array)) {
        json_object_put(c->tools);
        c->tools = NULL;
        c->status = MCP_EPROTO;
        c->why = xstrdup("the tool list is not a JSON array");
      }
    }
  } else {
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    c->step = "ping";
    c->status = mcp_client_ping(c->client, co, &c->err);
    c->ping_ms = elapsed_ms(&t0);
  }

out:
  mcp_free(tools_json);
  mcp_call_options_free(co);
  mcp_client_options_free(o);
  return NULL;
}

/* Runs the jobs of |conns| in parallel and waits for all of them. */
static void run_conns(struct conn *conns, size_t n) {
  atomic_store(&g_cancellable, false);
  bool *started = xmalloc(n * sizeof(*started));
  for (size_t i = 0; i < n; i++)
    started[i] = n > 1 &&
                 pthread_create(&conns[i].thread, NULL, conn_run, &conns[i]) == 0;
  for (size_t i = 0; i < n; i++) {
    if (started[i])
      pthread_join(conns[i].thread, NULL);
    else
      conn_run(&conns[i]);
  }
  free(started);
  atomic_store(&g_cancellable, true);
}

static void *close_run(void *arg) {
  mcp_client_close(arg);
  return NULL;
}

/* Closes every client (servers shut down in parallel) and frees |conns|. */
static void free_conns(struct conn *conns, size_t n) {
  pthread_t *threads = xmalloc(n * sizeof(*threads));
  bool *started = xmalloc(n * sizeof(*started));
  for (size_t i = 0; i < n; i++)
    started[i] = conns[i].client && n > 1 &&
                 pthread_create(&threads[i], NULL, close_run,
                                conns[i].client) == 0;
  for (size_t i = 0; i < n; i++) {
    if (started[i]) pthread_join(threads[i], NULL);
    mcp_client_free(conns[i].client);
    json_object_put(conns[i].tools);
    mcp_error_clear(&conns[i].err);
    free(conns[i].why);
  }
  free(started);
  free(threads);
  free(conns);
}

/* Makes one conn per selected server (or only |only|, when given). */
static struct conn *make_conns(enum job job, struct server_def *only,
                               size_t *n_out) {
  struct conn *conns = xmalloc((g_cli.n_defs ? g_cli.n_defs : 1) *
                               sizeof(*conns));
  size_t n = 0;
  for (size_t i = 0; i < g_cli.n_defs; i++) {
    struct server_def *d = &g_cli.defs[i];
    if (only ? d != only : !d->selected) continue;
    memset(&conns[n], 0, sizeof(conns[n]));
    conns[n].def = d;
    conns[n].job = job;
    n++;
  }
  *n_out = n;
  return conns;
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
 * after |prefix| ("" or e.g. "warning: ").  |why| overrides the library's
 * message when not NULL.
 */
static void report(const char *prefix, const char *name, const char *step,
                   mcp_status st, const mcp_error *err, const char *why) {
  const char *msg = why                     ? why
                    : err && err->message ? err->message
                                          : mcp_strerror(st);
  if (interrupted(st)) {
    complain("%sinterrupted", prefix);
  } else if (st == MCP_ETIMEDOUT) {
    complain("%s%s: %s timed out after %lld ms", prefix, name, step,
             (long long)g_cli.timeout_ms);
  } else if (st == MCP_ERPC && err) {
    complain("%s%s: %s: %s (JSON-RPC error %d)", prefix, name, step, msg,
             err->rpc_code);
  } else {
    complain("%s%s: %s: %s", prefix, name, step, msg);
  }
}

static void report_conn(const char *prefix, const struct conn *c) {
  report(prefix, c->def->name, c->step, c->status, &c->err, c->why);
}

/* Prints |json| pretty on stdout (as is, if it does not parse). */
static void print_json(const char *json) {
  char why[64];
  json_object *obj = parse_json(json, strlen(json), why, sizeof(why));
  if (obj) {
    puts(json_object_to_json_string_ext(
        obj, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
            JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(obj);
  } else {
    puts(json);
  }
  fflush(stdout);
}

static const char *tool_string(json_object *tool, const char *key) {
  json_object *v;
  if (json_object_object_get_ex(tool, key, &v) &&
      json_object_is_type(v, json_type_string))
    return json_object_get_string(v);
  return NULL;
}

/* Prints |len| bytes of server-supplied text with control characters
 * (terminal escapes among them) shown as '?'. */
static void print_clean(const char *s, size_t len) {
  for (size_t i = 0; i < len; i++) {
    unsigned char ch = (unsigned char)s[i];
    putchar(ch < 0x20 || ch == 0x7f ? '?' : ch);
  }
}

/* ---- commands --------------------------------------------------------- */

static int cmd_tools(bool as_json) {
  size_t n;
  struct conn *conns = make_conns(JOB_LIST, NULL, &n);
  run_conns(conns, n);

  int rc = EXIT_OK;
  size_t n_ok = 0;
  for (size_t i = 0; i < n; i++) n_ok += conns[i].status == MCP_OK;
  json_object *out = as_json && n_ok ? json_object_new_array() : NULL;
  size_t w_server = strlen("SERVER"), w_tool = strlen("TOOL");
  for (size_t i = 0; i < n; i++) {
    struct conn *c = &conns[i];
    if (c->status != MCP_OK) continue;
    for (size_t j = 0; j < json_object_array_length(c->tools); j++) {
      json_object *t = json_object_array_get_idx(c->tools, j);
      const char *name = tool_string(t, "name");
      if (!name) continue;
      if (strlen(c->def->name) > w_server) w_server = strlen(c->def->name);
      if (strlen(name) > w_tool) w_tool = strlen(name);
      if (out) {
        json_object *item = json_object_new_object();
        json_object *v = NULL;
        json_object_object_add(item, "server",
                               json_object_new_string(c->def->name));
        json_object_object_add(item, "name", json_object_new_string(name));
        json_object_object_get_ex(t, "description", &v);
        json_object_object_add(item, "description", json_object_get(v));
        v = NULL;
        json_object_object_get_ex(t, "inputSchema", &v);
        json_object_object_add(item, "inputSchema", json_object_get(v));
        json_object_array_add(out, item);
      }
    }
  }
  if (out) {
    puts(json_object_to_json_string_ext(
        out, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
            JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(out);
  } else if (n_ok) {
    printf("%-*s  %-*s  %s\n", (int)w_server, "SERVER", (int)w_tool, "TOOL",
           "DESCRIPTION");
    for (size_t i = 0; i < n; i++) {
      struct conn *c = &conns[i];
      if (c->status != MCP_OK) continue;
      for (size_t j = 0; j < json_object_array_length(c->tools); j++) {
        json_object *t = json_object_array_get_idx(c->tools, j);
        const char *name = tool_string(t, "name");
        const char *desc = tool_string(t, "description");
        if (!name) continue;
        if (!desc) desc = "";
        printf("%-*s  ", (int)w_server, c->def->name);
        print_clean(name, strlen(name));
        printf("%*s  ", (int)(w_tool - strlen(name)), "");
        print_clean(desc, strcspn(desc, "\r\n"));
        putchar('\n');
      }
    }
  }
  fflush(stdout);
  for (size_t i = 0; i < n; i++) {
    if (conns[i].status == MCP_OK) continue;
    report_conn("", &conns[i]);
    if (rc == EXIT_OK) rc = exit_code(conns[i].status);
  }
  free_conns(conns, n);
  return rc;
}

static int cmd_ping(void) {
  size_t n;
  struct conn *conns = make_conns(JOB_PING, NULL, &n);
  run_conns(conns, n);
  int rc = EXIT_OK;
  for (size_t i = 0; i < n; i++) {
    if (conns[i].status == MCP_OK)
      printf("%s: ok (%.2f ms)\n", conns[i].def->name, conns[i].ping_ms);
  }
  fflush(stdout);
  for (size_t i = 0; i < n; i++) {
    if (conns[i].status == MCP_OK) continue;
    report_conn("", &conns[i]);
    if (rc == EXIT_OK) rc = exit_code(conns[i].status);
  }
  free_conns(conns, n);
  return rc;
}

/* The one server a single-server command uses; NULL after complaining. */
static struct server_def *single_server(const char *what) {
  struct server_def *found = NULL;
  size_t n = 0;
  for (size_t i = 0; i < g_cli.n_defs; i++) {
    if (!g_cli.defs[i].selected) continue;
    found = &g_cli.defs[i];
    n++;
  }
  if (n == 1) return found;
  complain("%s needs exactly one server, but %zu are configured; choose one "
           "with --server NAME", what, n);
  return NULL;
}

static int cmd_request(const char *method, const char *params) {
  struct server_def *d = single_server("request");
  if (!d) return EXIT_USAGE;
  size_t n;
  struct conn *conns = make_conns(JOB_CONNECT, d, &n);
  run_conns(conns, n);
  int rc;
  if (conns[0].status != MCP_OK) {
    report_conn("", &conns[0]);
    rc = exit_code(conns[0].status);
  } else {
    mcp_error err = MCP_ERROR_INIT;
    char *result = NULL;
    mcp_call_options *co = new_call_options();
    mcp_status st = co ? mcp_client_request(conns[0].client, method, params,
                                            co, &result, &err)
                       : MCP_ENOMEM;
    mcp_call_options_free(co);
    if (st == MCP_OK) {
      print_json(result);
      rc = EXIT_OK;
    } else {
      report("", d->name, method, st, &err, NULL);
      rc = exit_code(st);
    }
    mcp_free(result);
    mcp_error_clear(&err);
  }
  free_conns(conns, n);
  return rc;
}

/* ---- progress display ------------------------------------------------- */

static pthread_mutex_t g_progress_lock = PTHREAD_MUTEX_INITIALIZER;
static bool g_progress_shown; /* guarded by g_progress_lock */
static bool g_progress_done;  /* guarded by g_progress_lock */

static void on_progress(void *user, double progress, double total,
                        const char *message) {
  (void)user;
  pthread_mutex_lock(&g_progress_lock);
  if (!g_progress_done) {
    if (isnan(total))
      fprintf(stderr, "\r%g", progress);
    else
      fprintf(stderr, "\r%g/%g", progress, total);
    if (message) {
      fputc(' ', stderr);
      for (const char *p = message; *p && p - message < 200; p++)
        fputc((unsigned char)*p < 0x20 ? '?' : *p, stderr);
    }
    fputs("\033[K", stderr);
    fflush(stderr);
    g_progress_shown = true;
  }
  pthread_mutex_unlock(&g_progress_lock);
}

static void end_progress(void) {
  pthread_mutex_lock(&g_progress_lock);
  g_progress_done = true;
  if (g_progress_shown) {
    fputs("\r\033[K", stderr);
    fflush(stderr);
  }
  pthread_mutex_unlock(&g_progress_lock);
}

/* ---- call ------------------------------------------------------------- */

static bool has_tool(json_object *tools, const char *name) {
  for (size_t j = 0; j < json_object_array_length(tools); j++) {
    const char *n = tool_string(json_object_array_get_idx(tools, j), "name");
    if (n && strcmp(n, name) == 0) return true;
  }
  return false;
}

/* "a, b, c" of the tool names; a new string. */
static char *tool_names(json_object *tools) {
  size_t cap = 64, len = 0;
  char *s = xmalloc(cap);
  s[0] = '\0';
  for (size_t j = 0; j < json_object_array_length(tools); j++) {
    const char *n = tool_string(json_object_array_get_idx(tools, j), "name");
    if (!n) continue;
    size_t need = len + strlen(n) + 3;
    if (need > cap) s = xrealloc(s, cap = need * 2);
    len += (size_t)sprintf(s + len, "%s%s", len ? ", " : "", n);
  }
  return s;
}

/*
 * Picks the server of |tool|: an explicit SERVER/ prefix, else the only
 * server that lists the tool.  Returns the index in |conns| or -1 after
 * setting *rc and complaining.
 */
static int route_tool(struct conn *conns, size_t n, bool explicit_server,
                      const char *tool, int *rc) {
  if (explicit_server) {
    struct conn *c = &conns[0];
    if (c->status == MCP_ERPC && c->client) return 0; /* no tools/list: try */
    if (c->status != MCP_OK) {
      report_conn("", c);
      *rc = exit_code(c->status);
      return -1;
    }
    if (has_tool(c->tools, tool)) return 0;
    char *names = tool_names(c->tools);
    complain("unknown tool '%s' on server %s (it has: %s)", tool, c->def->name,
             *names ? names : "no tools");
    free(names);
    *rc = EXIT_USAGE;
    return -1;
  }

  int found = -1;
  size_t matches = 0, failed = 0;
  for (size_t i = 0; i < n; i++) {
    if (conns[i].status != MCP_OK) {
      failed++;
      continue;
    }
    if (has_tool(conns[i].tools, tool)) {
      if (found < 0) found = (int)i;
      matches++;
    }
  }
  if (matches == 1) {
    for (size_t i = 0; i < n && !g_cli.quiet; i++)
      if (conns[i].status != MCP_OK) report_conn("warning: ", &conns[i]);
    return found;
  }
  if (matches > 1) {
    size_t cap = 256, len = 0;
    char *list = xmalloc(cap);
    list[0] = '\0';
    for (size_t i = 0; i < n; i++) {
      if (conns[i].status != MCP_OK || !has_tool(conns[i].tools, tool)) continue;
      size_t need = len + strlen(conns[i].def->name) + strlen(tool) + 4;
      if (need > cap) list = xrealloc(list, cap = need * 2);
      len += (size_t)sprintf(list + len, "%s%s/%s", len ? ", " : "",
                             conns[i].def->name, tool);
    }
    complain("tool '%s' is ambiguous; use one of: %s", tool, list);
    free(list);
    *rc = EXIT_USAGE;
    return -1;
  }
  if (failed) {
    /* The tool may live on a server we could not reach. */
    for (size_t i = 0; i < n; i++)
      if (conns[i].status != MCP_OK) {
        report_conn("", &conns[i]);
        *rc = exit_code(conns[i].status);
        break;
      }
    return -1;
  }
  if (n == 1) {
    char *names = tool_names(conns[0].tools);
    complain("unknown tool '%s' on server %s (it has: %s)", tool,
             conns[0].def->name, *names ? names : "no tools");
    free(names);
  } else {
    complain("unknown tool '%s': no server has it", tool);
  }
  *rc = EXIT_USAGE;
  return -1;
}

/* The text of the first text item of a CallToolResult; a new string. */
static char *first_text(const char *result) {
  char why[64];
  json_object *obj, *content, *text = NULL;
  if (!result) return NULL;
  obj = parse_json(result, strlen(result), why, sizeof(why));
  if (json_object_object_get_ex(obj, "content", &content) &&
      json_object_is_type(content, json_type_array))
    for (size_t i = 0; !text && i < json_object_array_length(content); i++) {
      json_object *item = json_object_array_get_idx(content, i);
      const char *type = tool_string(item, "type");
      if (type && strcmp(type, "text") == 0)
        json_object_object_get_ex(item, "text", &text);
    }
  char *s = json_object_is_type(text, json_type_string)
                ? xstrdup(json_object_get_string(text))
                : NULL;
  json_object_put(obj);
  return s;
}

static int cmd_call(const char *spec, const char *args) {
  /* SERVER/TOOL when the prefix names a server in use; else a bare name. */
  struct server_def *only = NULL;
  const char *tool = spec;
  const char *slash = strchr(spec, '/');
  if (slash) {
    struct server_def *d = find_def(&g_cli, spec, (size_t)(slash - spec));
    if (d && d->selected) {
      only = d;
      tool = slash + 1;
    }
  }
  if (!*tool) {
    complain("call: empty tool name in '%s'", spec);
    return EXIT_USAGE;
  }

  size_t n;
  struct conn *conns = make_conns(JOB_LIST, only, &n);
  run_conns(conns, n);
  int rc = EXIT_OK;
  int idx = route_tool(conns, n, only != NULL, tool, &rc);
  if (idx < 0) {
    free_conns(conns, n);
    return rc;
  }

  struct conn *c = &conns[idx];
  mcp_call_options *co = new_call_options();
  if (!co) {
    complain("out of memory");
    free_conns(conns, n);
    return EXIT_CONNECTION;
  }
  bool show_progress = !g_cli.quiet && isatty(STDERR_FILENO);
  if (show_progress) mcp_call_options_set_progress(co, on_progress, NULL);

  char step[320];
  snprintf(step, sizeof(step), "tools/call %.300s", tool);
  mcp_error err = MCP_ERROR_INIT;
  char *result = NULL;
  mcp_status st = mcp_client_call_tool(c->client, tool, args, co, &result, &err);
  mcp_call_options_free(co);
  if (show_progress) end_progress();

  if (result) print_json(result);
  if (st == MCP_ETOOLERROR) {
    char *text = err.message ? NULL : first_text(result);
    complain("%s: tool %s reported an error: %s", c->def->name, tool,
             err.message ? err.message : text ? text : "(no text)");
    free(text);
  } else if (st != MCP_OK) {
    report("", c->def->name, step, st, &err, NULL);
  }
  rc = exit_code(st);
  mcp_free(result);
  mcp_error_clear(&err);
  free_conns(conns, n);
  return rc;
}

/* ---- main ------------------------------------------------------------- */

enum { OPT_STDIO = 256, OPT_NAME, OPT_CONFIG, OPT_TIMEOUT, OPT_VERSION };

static const struct option long_options[] = {
    {"stdio", required_argument, NULL, OPT_STDIO},
    {"name", required_argument, NULL, OPT_NAME},
    {"config", required_argument, NULL, OPT_CONFIG},
    {"server", required_argument, NULL, 's'},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"quiet", no_argument, NULL, 'q'},
    {"verbose", no_argument, NULL, 'v'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, OPT_VERSION},
    {NULL, 0, NULL, 0}};

static void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void usage_error(const char *fmt, ...) {
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof(line), fmt, ap);
  va_end(ap);
  complain("%s (see " PROG " --help)", line);
  exit(EXIT_USAGE);
}

/* Checks that |text| is a JSON object; exits 2 otherwise. */
static void check_json_object(const char *what, const char *text) {
  char why[256];
  json_object *obj = parse_json(text, strlen(text), why, sizeof(why));
  if (!obj) usage_error("%s is not valid JSON: %s", what, why);
  bool ok = is_object(obj);
  json_object_put(obj);
  if (!ok) usage_error("%s must be a JSON object", what);
}

static void parse_options(int argc, char **argv) {
  bool last_was_stdio = false;
  int opt;
  opterr = 0;
  g_cli.timeout_ms = DEFAULT_TIMEOUT_MS;
  while ((opt = getopt_long(argc, argv, "+:s:qvh", long_options, NULL)) != -1) {
    bool was_stdio = last_was_stdio;
    last_was_stdio = false;
    switch (opt) {
    case OPT_STDIO:
      g_cli.any_source = true;
      add_stdio_def(&g_cli, optarg);
      last_was_stdio = true;
      break;
    case OPT_NAME:
      rename_last_stdio(&g_cli, optarg, was_stdio);
      break;
    case OPT_CONFIG:
      g_cli.any_source = true;
      load_config(&g_cli, optarg);
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
}

/* Marks the servers this run uses; exits 2 on an unknown --server. */
static void select_servers(void) {
  for (size_t i = 0; i < g_cli.n_defs; i++)
    g_cli.defs[i].selected = g_cli.only.n == 0;
  for (size_t i = 0; i < g_cli.only.n; i++) {
    const char *name = g_cli.only.v[i];
    struct server_def *d = find_def(&g_cli, name, strlen(name));
    if (!d) usage_error("--server %s: no server has that name", name);
    d->selected = true;
  }
}

static void use_demo_server(void) {
  char *path = find_demo_server();
  if (!path) {
    complain("no server configured, and the bundled demo server (" DEMO_SERVER_PROG
             ") was not found; set MCPCONN_DEMO_SERVER or use --stdio or "
             "--config");
    exit(EXIT_CONNECTION);
  }
  if (!g_cli.quiet)
    complain("no server configured; using the bundled demo server (%s)", path);
  struct server_def *d = add_def(&g_cli);
  d->name = xstrdup(DEMO_SERVER_NAME);
  strv_push(&d->argv, path);
}

int main(int argc, char **argv) {
  sigemptyset(&g_sigint_set);
  sigaddset(&g_sigint_set, SIGINT);
  /* A closed stdout shows up as a write error, not a signal. */
  signal(SIGPIPE, SIG_IGN);

  parse_options(argc, argv);
  check_unique_names(&g_cli);
  if (optind >= argc) usage_error("no command given");
  const char *cmd = argv[optind];
  char **args = argv + optind + 1;
  int nargs = argc - optind - 1;

  bool tools_json = false;
  if (strcmp(cmd, "tools") == 0) {
    for (int i = 0; i < nargs; i++) {
      if (strcmp(args[i], "--json") == 0)
        tools_json = true;
      else
        usage_error("tools: unexpected argument '%s'", args[i]);
    }
  } else if (strcmp(cmd, "call") == 0) {
    if (nargs < 1 || nargs > 2) usage_error("usage: call TOOL [ARGS_JSON]");
    if (nargs == 2) check_json_object("ARGS_JSON", args[1]);
  } else if (strcmp(cmd, "ping") == 0) {
    if (nargs) usage_error("ping: unexpected argument '%s'", args[0]);
  } else if (strcmp(cmd, "request") == 0) {
    if (nargs < 1 || nargs > 2)
      usage_error("usage: request METHOD [PARAMS_JSON]");
    if (nargs == 2) check_json_object("PARAMS_JSON", args[1]);
  } else {
    usage_error("unknown command '%s'", cmd);
  }

  if (!g_cli.any_source) {
    use_demo_server();
  } else if (g_cli.n_defs == 0) {
    complain("no servers: the configuration has none that is enabled");
    return EXIT_USAGE;
  }
  select_servers();

  g_cancel = mcp_cancel_new();
  if (!g_cancel) {
    complain("out of memory");
    return EXIT_CONNECTION;
  }
  /* Before any other thread exists (the library starts its threads when a
   * client connects), so every thread inherits the mask and SIGINT reaches
   * only sigwait(). */
  pthread_sigmask(SIG_BLOCK, &g_sigint_set, NULL);
  pthread_t sig_thread;
  bool sig_thread_started =
      pthread_create(&sig_thread, NULL, signal_thread, NULL) == 0;

  int rc;
  if (strcmp(cmd, "tools") == 0)
    rc = cmd_tools(tools_json);
  else if (strcmp(cmd, "call") == 0)
    rc = cmd_call(args[0], nargs == 2 ? args[1] : NULL);
  else if (strcmp(cmd, "ping") == 0)
    rc = cmd_ping();
  else
    rc = cmd_request(args[0], nargs == 2 ? args[1] : NULL);

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
  mcp_cancel_unref(g_cancel);
  free_defs(&g_cli);
  return rc;
}
