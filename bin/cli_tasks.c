/* SPDX-License-Identifier: MIT */
/*
 * cli_tasks.c: long-running tool calls as tasks (docs/TASKS.md): the
 * `tasks` command and the status `call` shows while it follows a task.
 *
 *   tasks SERVER [--json]                the server's tasks: those this
 *                                        machine's runs recorded (the
 *                                        cache directory), merged with a
 *                                        2025-11-25 server's tasks/list
 *   tasks SERVER ID [--json]             one task: one tasks/get
 *   tasks SERVER ID --cancel [--json]    tasks/cancel, then one tasks/get
 *
 * `call` on a task tool: on a terminal (stderr, not -q) one line, redrawn
 * on each change, shows "task ID: STATUS: statusMessage" and is erased
 * when the call ends; elsewhere each change is one plain line on stderr
 * ("mcpconn: SERVER: task ID: STATUS: statusMessage"), so a log shows
 * that a long call is alive; -q prints neither.  The result goes to
 * stdout as for any call.
 *
 * Both commands declare the io.modelcontextprotocol/tasks extension, so a
 * 2026-07-28 server may answer with a task.  Exit codes as elsewhere: an
 * unknown server 2, a server that is down or answers with an error (no
 * such task) 3, Ctrl-C 130.
 *
 * Threads: the main thread; task_line() runs on the thread that follows
 * the task (the main thread's call) and writes stderr under g_stderr_lock.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "mcpconn-text.h"

/* What tasks_parse() read; cmd_tasks() runs it. */
static struct {
  bool active;
  bool json;
  bool cancel;
  const char *server;
  const char *id;
} g_tk;

bool tasks_parse(const char *cmd, char **args, int nargs) {
  if (strcmp(cmd, "tasks") != 0) return false;
  memset(&g_tk, 0, sizeof(g_tk));
  g_tk.active = true;
  int n = 0;
  for (int i = 0; i < nargs; i++) {
    if (strcmp(args[i], "--json") == 0) g_tk.json = true;
    else if (strcmp(args[i], "--cancel") == 0) g_tk.cancel = true;
    else if (args[i][0] == '-' && args[i][1]) usage_error("tasks: unknown option '%s'", args[i]);
    else if (!*args[i]) usage_error("tasks: empty argument");
    else if (n == 0) g_tk.server = args[i], n++;
    else if (n == 1) g_tk.id = args[i], n++;
    else
      usage_error("tasks: unexpected argument '%s' (tasks SERVER [ID [--cancel]] [--json])",
                  args[i]);
  }
  if (!g_tk.server) usage_error("usage: tasks SERVER [ID [--cancel]] [--json]");
  if (g_tk.cancel && !g_tk.id) usage_error("tasks: --cancel needs a task ID");
  return true;
}

/* ---- call's status ------------------------------------------------------ */

static bool g_line_tty;         /* redraw one line (else plain lines) */
static bool g_line_shown;       /* guarded by g_stderr_lock */
static bool g_line_done;        /* guarded by g_stderr_lock */
static atomic_bool g_task_seen; /* the call follows a task */

static void task_line(void *user, const char *id, mcp_task_status status, const char *message) {
  const char *server = user;
  static const char *const words[] = {"working", "input_required", "completed", "failed",
                                      "cancelled"};
  const char *w = (unsigned)status < 5 ? words[status] : "unknown";
  atomic_store(&g_task_seen, true);
  pthread_mutex_lock(&g_stderr_lock);
  if (!g_line_done) {
    if (g_line_tty) {
      fputc('\r', stderr);
    } else {
      status_line_erase_locked();
      fprintf(stderr, PROG ": ");
      safe_write(stderr, server, strlen(server), SAFE_CELL);
      fputs(": ", stderr);
    }
    fputs("task ", stderr);
    safe_write(stderr, id, strnlen(id, 200), SAFE_CELL);
    fprintf(stderr, ": %s", w);
    if (message) {
      fputs(": ", stderr);
      safe_write(stderr, message, strnlen(message, 200), SAFE_CELL);
    }
    fputs(g_line_tty ? "\033[K" : "\n", stderr);
    fflush(stderr);
    g_line_shown = true;
  }
  pthread_mutex_unlock(&g_stderr_lock);
}

void task_status_begin(mcp_call_options *co, const char *server) {
  if (g_cli.quiet) return;
  g_line_tty = isatty(STDERR_FILENO);
  mcp_call_options_set_task_status(co, task_line, (void *)server);
}

bool task_status_seen(void) { return atomic_load(&g_task_seen); }

void task_status_end(void) {
  pthread_mutex_lock(&g_stderr_lock);
  g_line_done = true;
  if (g_line_shown && g_line_tty) {
    fputs("\r\033[K", stderr);
    fflush(stderr);
  }
  pthread_mutex_unlock(&g_stderr_lock);
}

/* ---- the command ---------------------------------------------------------- */

bool tasks_command(void) { return g_tk.active; }

static bool g_for_call;
void tasks_for_call(void) { g_for_call = true; }
bool tasks_extension_wanted(void) { return g_tk.active || g_for_call; }

static const char *str_in(json_object *o, const char *key) {
  json_object *v = NULL;
  return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
             ? json_object_get_string(v)
             : NULL;
}

static int list_tasks(void) {
  mcp_call_options *co = new_call_options();
  if (!co) return EXIT_CONNECTION;
  char *json = NULL;
  mcp_error err = MCP_ERROR_INIT;
  atomic_store(&g_cancellable, true);
  mcp_status st = mcp_manager_list_tasks(g_mgr, g_tk.server, co, &json, &err);
  atomic_store(&g_cancellable, false);
  mcp_call_options_free(co);
  int rc = exit_code(st);
  if (json && g_tk.json) {
    print_json(json);
  } else if (json) {
    json_object *arr = parse_json(json, strlen(json), false, NULL, 0);
    size_t n = json_object_is_type(arr, json_type_array) ? json_object_array_length(arr) : 0;
    const char ***rows = xmalloc((n ? n : 1) * sizeof(*rows));
    for (size_t i = 0; i < n; i++) {
      json_object *e = json_object_array_get_idx(arr, i);
      rows[i] = xmalloc(5 * sizeof(**rows));
      rows[i][0] = str_in(e, "taskId");
      rows[i][1] = str_in(e, "tool");
      rows[i][2] = str_in(e, "status");
      rows[i][3] = str_in(e, "lastUpdatedAt");
      rows[i][4] = str_in(e, "statusMessage");
    }
    static const char *const head[] = {"TASK", "TOOL", "STATUS", "UPDATED", "MESSAGE"};
    print_table(5, head, rows, n);
    for (size_t i = 0; i < n; i++) free(rows[i]);
    free(rows);
    json_object_put(arr);
  }
  if (st != MCP_OK) report("", g_tk.server, "tasks/list", st, &err);
  mcp_free(json);
  mcp_error_clear(&err);
  return rc;
}

/* Prints the task of a tasks/get answer |json|. */
static void print_task(const char *json) {
  if (g_tk.json) {
    print_json(json);
    return;
  }
  json_object *t = parse_json(json, strlen(json), false, NULL, 0);
  static const char *const keys[][2] = {{"taskId", "task"},
                                        {"status", "status"},
                                        {"statusMessage", "message"},
                                        {"createdAt", "created"},
                                        {"lastUpdatedAt", "updated"}};
  for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
    const char *v = str_in(t, keys[i][0]);
    if (!v) continue;
    printf("%-8s ", keys[i][1]);
    print_clean(v, strlen(v));
    putchar('\n');
  }
  json_object *r = NULL;
  if (json_object_object_get_ex(t, "result", &r)) {
    printf("result\n");
    print_json(json_object_to_json_string_ext(r, JSON_C_TO_STRING_PLAIN));
  }
  json_object_put(t);
}

static int one_task(void) {
  int rc = EXIT_OK;
  if (!server_ready(g_tk.server, &rc)) return rc;
  mcp_call_options *co = new_call_options();
  if (!co) return EXIT_CONNECTION;
  mcp_error err = MCP_ERROR_INIT;
  char *json = NULL;
  mcp_status st = MCP_OK;
  atomic_store(&g_cancellable, true);
  if (g_tk.cancel) {
    st = mcp_manager_cancel_task(g_mgr, g_tk.server, g_tk.id, co, &err);
    if (st != MCP_OK) report("", g_tk.server, "tasks/cancel", st, &err);
  }
  if (st == MCP_OK) {
    st = mcp_manager_get_task(g_mgr, g_tk.server, g_tk.id, co, &json, &err);
    if (st != MCP_OK) report("", g_tk.server, "tasks/get", st, &err);
  }
  atomic_store(&g_cancellable, false);
  mcp_call_options_free(co);
  if (json) print_task(json);
  mcp_free(json);
  mcp_error_clear(&err);
  return exit_code(st);
}

int cmd_tasks(void) {
  if (!g_tk.id) {
    int rc = EXIT_OK;
    if (!server_ready(g_tk.server, &rc)) return rc;
    return list_tasks();
  }
  return one_task();
}
