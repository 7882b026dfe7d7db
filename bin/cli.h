/* SPDX-License-Identifier: MIT */
/*
 * cli.h: what the files of the mcpconn command line share (bin/mcpconn.c
 * and bin/cli_*.c).  Internal to the CLI: nothing here is installed, and
 * the library knows none of it.  The CLI talks to the library through
 * mcpconn.h only.
 *
 * Threads: the main thread parses, starts the manager and runs the command;
 * the manager's callbacks (on_event, on_log, cli_trust, the OAuth browser
 * step) and `ping` run on other threads.  Each shared global below says
 * what guards it.
 */
#ifndef MCPCONN_CLI_H
#define MCPCONN_CLI_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>

#include "mcpconn.h"

#define PROG "mcpconn"
/* Upper bound on the wait for the manager's first tool-list event (ms);
 * it follows mcp_manager_start() at once unless memory ran out. */
#define FIRST_EVENT_MS 10000

/* Exit codes; usage() documents them. */
enum {
  EXIT_OK = 0,
  EXIT_TOOL_ERROR = 1,
  EXIT_USAGE = 2,
  EXIT_CONNECTION = 3,
  EXIT_INTERRUPTED = 130
};

/* A NULL-terminated, growable array of owned strings. */
struct strv {
  char **v;
  size_t n;
  size_t cap;
};

/* A growable string. */
struct sbuf {
  char *s;
  size_t len;
  size_t cap;
};

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
  struct strv configs;       /* --config files, in order */
  struct strv only;          /* --server names */
  struct strv inputs;        /* --input ID=VALUE, as given */
  const char *config_format; /* --config-format FORMAT, or NULL: detect */
  int64_t timeout_ms;
  bool timeout_given;
  const char *protocol; /* --protocol MODE, or NULL (auto) */
  bool quiet;
  bool verbose;
  bool no_color; /* --no-color */
  bool no_project;
  bool no_user;
  bool trust_project; /* --trust-project */
  unsigned imports;   /* MCP_IMPORT_* bits */
  /* HTTP and TLS options for every --url server. */
  const char *cacert;
  const char *capath;
  const char *cert;
  const char *key;
  bool insecure;
  int http_version;        /* an mcp_http_version, or -1: not given */
  const char *http_option; /* the first of them given, for messages */
  const char *client_id;   /* OAuth pre-registration, or NULL */
  const char *client_secret;
  int dpop;                 /* an mcp_oauth_dpop (--dpop); 0: auto */
  const char *workload_jwt; /* --workload-jwt-file, or NULL */
};

/* One server, as mcp_manager_servers() describes it; strings borrowed from
 * the status's JSON. */
struct srv {
  const char *name;
  const char *display_name; /* the config file's own name, or NULL */
  const char *type;         /* or NULL */
  const char *state;
  const char *last_error; /* or NULL */
  const char *protocol;   /* the negotiated MCP revision, or NULL */
  const char *era;        /* "modern", "legacy", or NULL before a connect */
  int64_t tools;
  bool selected; /* used by this run (see --server) */
};

/* Every server: the manager's, then those its config diagnostics show
 * left out (disabled). */
struct status {
  json_object *arr;
  struct srv *v;
  size_t n;
};

/*
 * What mcp_manager_diagnostics() says about the config files of the
 * running manager.  Written by the main thread in start_manager(), before
 * any command runs; read-only after.
 */
struct cli_diag {
  struct strv errors;   /* warnings about --config files, not about a server */
  struct strv skipped;  /* warnings about a server of a --config file */
  struct strv warnings; /* warnings about discovered files */
  size_t found_skipped; /* of them, those about a server (left out) */
  struct strv hidden;   /* NAME, SOURCE, ...: servers left out, disabled */
};

/* cli_util.c: allocation that exits on failure, strv, sbuf, stderr, JSON */
void *xmalloc(size_t n);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
void strv_push(struct strv *sv, char *s);
bool strv_has(const struct strv *sv, const char *s);
void strv_free(struct strv *sv);
void sbuf_add(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int64_t now_ms(void);
/* Held around every write to stderr. */
extern pthread_mutex_t g_stderr_lock;
void complain(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void config_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
const char *base_name(const char *path);
json_object *parse_json(const char *text, size_t len, bool strict, char *why, size_t why_size);
const char *jstring(json_object *obj, const char *key);
void print_json_object(json_object *obj);
void print_json(const char *json);
void print_clean(const char *s, size_t len);
void print_cell(const char *s, size_t width);
/* The width of the terminal stdout is on (COLUMNS, else TIOCGWINSZ); 0 when
 * stdout is not a terminal, or its width is unknown: no limit. */
size_t term_columns(void);
/* Prints at most |len| bytes of |s| (up to a NUL) clean, in at most |max|
 * characters (SIZE_MAX: no limit): when it is longer, as many as fit
 * before an ellipsis. */
void print_clipped(const char *s, size_t len, size_t max);
/* True when writing stdout failed because nobody reads it any more
 * (`mcpconn tools | head`); |err| is the errno of the failure. */
bool stdout_closed(int err);

/* cli_args.c: the command line */
/* What the command line said: written by parse_options(), read-only after. */
extern struct cli g_cli;
void free_cli(struct cli *cli);
void parse_options(int argc, char **argv);

/* cli_oauth.c: the browser step of OAuth */
void loopback_open(void);
mcp_oauth_options *cli_oauth(const char *server);

/* cli_wait.c: manager events, config diagnostics, server status, waiting */
/* The running manager (the main thread starts and frees it), and what its
 * config diagnostics said. */
extern mcp_manager *g_mgr;
extern struct cli_diag g_diag;
void ev_init(void);
void ev_reset(void);
void on_event(void *user, mcp_manager_event event, const char *server, const char *detail_json);
void on_log(void *user, mcp_log_level level, const char *msg);
/* cli_util.c: the manager's log records, printed by on_log() as "[server]
 * message" (the server as its own field, mcp_manager_options_set_log_record). */
void on_log_record(void *user, const mcp_log_record *r);
void diag_reset(void);
bool diag_load(void);
bool wait_for(bool (*done)(void *arg), void *arg, int64_t deadline);
bool started(void *arg);
int64_t settle_deadline(void);
bool selected(const char *name);
bool state_is(const struct srv *s, const char *state);
bool settled(const struct srv *s);
bool enabled(const struct srv *s);
bool status_load(struct status *st);
void status_free(struct status *st);
const struct srv *status_find(const struct status *st, const char *name);
const struct srv *status_find_any(const struct status *st, const char *name);
bool servers_settled(void *arg);
bool ready_listed(void *arg);
bool connects_pending(void);
void report_server(const char *prefix, const struct srv *s);
/* wait_for(servers_settled) until |deadline|; when stderr is a terminal
 * (and not -q), a line there names the servers still connecting and for
 * how long, redrawn until they settle, then erased. */
bool wait_servers(int64_t deadline);
/* True while that line is on the terminal; clear_status_line() erases it. */
extern atomic_bool g_status_line;
void clear_status_line(void);
/* The same with g_stderr_lock held: every other writer of stderr calls it
 * first.  While g_status_hold > 0 (a prompt is waiting for an answer), the
 * line is not drawn. */
void status_line_erase_locked(void);
extern atomic_int g_status_hold;

/* cli_trust.c: project trust */
/* Project files left out this run, for setup()'s message. */
extern size_t g_untrusted;
mcp_trust cli_trust(void *user, const char *path, const char *sha256, const char *servers_json);
int cmd_trust(void);

/* cli_start.c: starting the manager */
int setup(bool status_only);

/* cli_cmds.c: the commands */
int cmd_tools(bool as_json, bool wait);
int cmd_servers(bool as_json, bool check, bool wait);
int cmd_ping(void);
int cmd_request(const char *method, const char *params);
int cmd_call(const char *spec, const char *args);
/* What the commands share: a request's options (--timeout, the cancel
 * token), whether a failure was Ctrl-C, its exit code, its one line on
 * stderr ("NAME: STEP: why"), and waiting for one server to be ready
 * (false: why not printed, *rc set). */
mcp_call_options *new_call_options(void);
bool interrupted(mcp_status st);
int exit_code(mcp_status st);
void report(const char *prefix, const char *name, const char *step, mcp_status st,
            const mcp_error *err);
bool server_ready(const char *name, int *rc);

/* cli_items.c: prompts and resources.  items_parse() takes the arguments
 * of `prompts` and `resources` (false for another command; exits 2 on a
 * bad one); cmd_items() runs the command it parsed. */
bool items_parse(const char *cmd, char **args, int nargs);
int cmd_items(void);
/* Prints |rows| (each |ncols| <= 5 cells, NULL shown as "-") under |head|,
 * columns padded to their widest cell, the last one cut to the terminal's
 * width; nothing at all when there are no rows. */
void print_table(size_t ncols, const char *const *head, const char ***rows, size_t nrows);

/* cli_skills.c: the skills command.  skills_parse() takes its arguments
 * (false for another command; exits 2 on a bad one); skills_command() says
 * whether it is this run's (the run then declares the extension);
 * cmd_skills() runs it. */
bool skills_parse(const char *cmd, char **args, int nargs);
bool skills_command(void);
int cmd_skills(void);

/* cli_tasks.c: the tasks command (tasks_parse, tasks_command, cmd_tasks as
 * for skills) and the status of the task a call follows: task_status_begin()
 * sets |co| to show it on stderr (|server| borrowed until the call ends),
 * task_status_end() erases its line; task_status_seen() says that the call
 * followed a task. */
bool tasks_parse(const char *cmd, char **args, int nargs);
bool tasks_command(void);
/* Whether the run declares the tasks extension (`tasks`, `call`); call
 * tasks_for_call() when the command is `call`. */
bool tasks_extension_wanted(void);
void tasks_for_call(void);
int cmd_tasks(void);
void task_status_begin(mcp_call_options *co, const char *server);
void task_status_end(void);
bool task_status_seen(void);

/* cli_color.c: colour on a terminal (stdout and stderr each decide for
 * themselves) unless NO_COLOR is set and not empty, --no-color, or TERM is
 * "dumb".  Colour codes come only from here, never from a server's text. */
#define COLOR_BOLD "1"
#define COLOR_RED "31"
#define COLOR_GREEN "32"
#define COLOR_YELLOW "33"
#define COLOR_DIM "2"
#define COLOR_ERROR "1;31"
bool color_enabled(FILE *f);
/* Starts SGR |sgr| on |f| when colour is on there; color_off() ends it. */
void color_on(FILE *f, const char *sgr);
void color_off(FILE *f);
/* The colour of a server state ("ready" green, "failed" red, ...). */
const char *state_color(const char *state);

/* mcpconn.c: interruption */
/* SIGINT fires g_cancel, which the request in flight carries, while
 * g_cancellable is true; g_interrupted says that it was fired. */
extern mcp_cancel *g_cancel;
extern atomic_bool g_interrupted;
extern atomic_bool g_cancellable;

#endif /* MCPCONN_CLI_H */
