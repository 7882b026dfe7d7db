/* SPDX-License-Identifier: MIT */
/*
 * cli_cmds.c: the commands that talk to servers: tools, servers, ping,
 * request and call (with resolve_tool(), which finds the server of a tool
 * name), the progress display, and how a failed request becomes one line
 * on stderr and an exit code.  On a terminal the tables of tools and
 * servers are cut to its width (term_columns); elsewhere never.
 *
 * Threads: the main thread; `ping` pings every server from a thread of its
 * own; on_progress() runs on a manager thread and writes stderr under
 * g_stderr_lock.  A command runs after setup() and owns stdout.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "mcpconn-text.h"

/* ---- requests --------------------------------------------------------- */

/* Options for one request; each thread makes its own object.  Without
 * --timeout, each server's own timeout applies (its config's, or 30 s). */
mcp_call_options *new_call_options(void) {
  mcp_call_options *o = mcp_call_options_new();
  if (!o) return NULL;
  if (g_cli.timeout_given) mcp_call_options_set_timeout_ms(o, g_cli.timeout_ms);
  mcp_call_options_set_cancel(o, g_cancel);
  return o;
}

bool interrupted(mcp_status st) { return st == MCP_ECANCELLED && atomic_load(&g_interrupted); }

/* Exit code for a failed library call. */
int exit_code(mcp_status st) {
  switch (st) {
  case MCP_OK: return EXIT_OK;
  case MCP_ETOOLERROR: return EXIT_TOOL_ERROR;
  case MCP_EINVAL:
  case MCP_ECONFIG:
  case MCP_ENOTFOUND: return EXIT_USAGE;
  default: return interrupted(st) ? EXIT_INTERRUPTED : EXIT_CONNECTION;
  }
}

/*
 * Prints the one-line reason for a failure of |step| on server |name|,
 * after |prefix| ("" or e.g. "warning: ").
 */
void report(const char *prefix, const char *name, const char *step, mcp_status st,
            const mcp_error *err) {
  const char *msg = err && err->message ? err->message : mcp_strerror(st);
  if (interrupted(st)) {
    complain("%sinterrupted", prefix);
  } else if (st == MCP_ETIMEDOUT && g_cli.timeout_given) {
    complain("%s%s: %s timed out after %lld ms", prefix, name, step, (long long)g_cli.timeout_ms);
  } else if (st == MCP_ETIMEDOUT) {
    complain("%s%s: %s timed out", prefix, name, step);
  } else if (st == MCP_ERPC && err) {
    complain("%s%s: %s: %s (JSON-RPC error %d)", prefix, name, step, msg, err->rpc_code);
  } else {
    complain("%s%s: %s: %s", prefix, name, step, msg);
  }
}

/* ---- progress display ------------------------------------------------- */

static bool g_progress_shown; /* guarded by g_stderr_lock */
static bool g_progress_done;  /* guarded by g_stderr_lock */

static void on_progress(void *user, double progress, double total, const char *message) {
  (void)user;
  /* A task's status changes come as progress too: task_status_begin()
   * shows them. */
  if (task_status_seen()) return;
  pthread_mutex_lock(&g_stderr_lock);
  if (!g_progress_done) {
    if (isnan(total)) fprintf(stderr, "\r%g", progress);
    else fprintf(stderr, "\r%g/%g", progress, total);
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

int cmd_tools(bool as_json, bool wait) {
  if (wait) wait_servers(settle_deadline());
  else wait_for(ready_listed, NULL, now_ms() + FIRST_EVENT_MS);
  mcp_tool_list *l = mcp_manager_tools(g_mgr);
  size_t n = mcp_tool_list_count(l);
  if (as_json) {
    json_object *out = json_object_new_array();
    for (size_t i = 0; i < n; i++) {
      if (!selected(mcp_tool_list_server(l, i))) continue;
      json_object *item = json_object_new_object();
      json_object_object_add(item, "name", json_object_new_string(mcp_tool_list_name(l, i)));
      json_object_object_add(item, "server", json_object_new_string(mcp_tool_list_server(l, i)));
      json_object_object_add(item, "tool", json_object_new_string(mcp_tool_list_tool(l, i)));
      json_object_object_add(item, "deferred",
                             json_object_new_boolean(mcp_tool_list_deferred(l, i)));
      /* Then the tool's own fields: description, inputSchema, ... */
      json_object *t = json_tokener_parse(mcp_tool_list_json(l, i));
      if (json_object_is_type(t, json_type_object)) {
        json_object_object_foreach(t, key, val) {
          if (strcmp(key, "name") != 0) json_object_object_add(item, key, json_object_get(val));
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
      color_on(stdout, COLOR_BOLD);
      printf("%-*s  %-*s  %-*s  %s", (int)w_server, "SERVER", (int)w_tool, "TOOL", (int)w_name,
             "NAME", "DESCRIPTION");
      color_off(stdout);
      putchar('\n');
    }
    /* On a terminal, descriptions are cut to fit its width. */
    size_t cols = term_columns(), room = SIZE_MAX;
    if (cols) {
      size_t used = w_server + 2 + w_tool + 2 + w_name + 2;
      room = cols > used ? cols - used : 0;
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
      if (room == 0) dlen = 0;
      if (deferred || dlen) {
        print_cell(mcp_tool_list_name(l, i), w_name);
        fputs("  ", stdout);
      } else {
        print_clean(mcp_tool_list_name(l, i), SIZE_MAX);
      }
      size_t left = room;
      if (deferred) {
        const char *mark = dlen ? "(deferred) " : "(deferred)";
        color_on(stdout, COLOR_YELLOW);
        fputs(mark, stdout);
        color_off(stdout);
        if (left != SIZE_MAX) left = left > strlen(mark) ? left - strlen(mark) : 0;
      }
      if (left) print_clipped(desc ? desc : "", dlen, left);
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
                 state_is(s, "deferred") ? "its tools come from the cache (deferred)"
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

int cmd_servers(bool as_json, bool check, bool wait) {
  if (wait) wait_servers(settle_deadline());
  struct status st;
  if (!status_load(&st)) return EXIT_CONNECTION;
  if (as_json) {
    json_object *out = json_object_new_array();
    for (size_t i = 0; i < json_object_array_length(st.arr); i++) {
      json_object *o = json_object_array_get_idx(st.arr, i);
      const char *name = jstring(o, "name");
      if (name && selected(name)) json_object_array_add(out, json_object_get(o));
    }
    print_json_object(out);
    json_object_put(out);
  } else {
    size_t w_name = strlen("NAME"), w_type = strlen("TYPE");
    size_t w_state = strlen("STATE"), w_proto = strlen("PROTOCOL");
    /* PROTOCOL: the era and the revision negotiated ("modern 2026-07-28"). */
    char(*proto)[48] = xmalloc((st.n ? st.n : 1) * sizeof(*proto));
    for (size_t i = 0; i < st.n; i++) {
      const struct srv *s = &st.v[i];
      if (s->protocol && s->era)
        snprintf(proto[i], sizeof(proto[i]), "%.8s %.30s", s->era, s->protocol);
      else snprintf(proto[i], sizeof(proto[i]), "-");
      if (s->selected && safe_width(proto[i]) > w_proto) w_proto = safe_width(proto[i]);
    }
    for (size_t i = 0; i < st.n; i++) {
      const struct srv *s = &st.v[i];
      if (!s->selected) continue;
      if (safe_width(s->name) > w_name) w_name = safe_width(s->name);
      if (s->type && safe_width(s->type) > w_type) w_type = safe_width(s->type);
      if (safe_width(s->state) > w_state) w_state = safe_width(s->state);
    }
    color_on(stdout, COLOR_BOLD);
    printf("%-*s  %-*s  %-*s  %-*s  %5s  %s", (int)w_name, "NAME", (int)w_type, "TYPE",
           (int)w_state, "STATE", (int)w_proto, "PROTOCOL", "TOOLS", "LAST ERROR");
    color_off(stdout);
    putchar('\n');
    /* On a terminal, errors are cut to fit its width. */
    size_t cols = term_columns(), room = SIZE_MAX;
    if (cols) {
      size_t used = w_name + 2 + w_type + 2 + w_state + 2 + w_proto + 2 + 5 + 2;
      room = cols > used ? cols - used : 0;
    }
    for (size_t i = 0; i < st.n; i++) {
      const struct srv *s = &st.v[i];
      if (!s->selected) continue;
      print_cell(s->name, w_name);
      fputs("  ", stdout);
      print_cell(s->type ? s->type : "-", w_type);
      fputs("  ", stdout);
      color_on(stdout, state_color(s->state));
      print_clean(s->state, SIZE_MAX);
      color_off(stdout);
      print_cell("", w_state - safe_width(s->state));
      fputs("  ", stdout);
      print_cell(proto[i], w_proto);
      printf("  %5lld", (long long)s->tools);
      if (s->last_error && room) {
        fputs("  ", stdout);
        color_on(stdout, COLOR_RED);
        print_clipped(s->last_error, strcspn(s->last_error, "\r\n"), room);
        color_off(stdout);
      }
      putchar('\n');
    }
    fflush(stdout);
    free(proto);
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
  bool modern; /* 2026-07-28 has no ping: server/discover checks liveness */
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
  j->status = co ? mcp_manager_request(g_mgr, j->name, j->modern ? "server/discover" : "ping", NULL,
                                       co, &result, &j->err)
                 : MCP_ENOMEM;
  clock_gettime(CLOCK_MONOTONIC, &b);
  j->ms = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
  mcp_free(result);
  mcp_call_options_free(co);
  return NULL;
}

int cmd_ping(void) {
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
    jobs[n].modern = s->era && strcmp(s->era, "modern") == 0;
    jobs[n++].name = s->name;
  }
  atomic_store(&g_cancellable, true);
  for (size_t i = 0; i < n; i++)
    threaded[i] = n > 1 && pthread_create(&jobs[i].thread, NULL, ping_run, &jobs[i]) == 0;
  for (size_t i = 0; i < n; i++) {
    if (threaded[i]) pthread_join(jobs[i].thread, NULL);
    else ping_run(&jobs[i]);
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
bool server_ready(const char *name, int *rc) {
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

int cmd_request(const char *method, const char *params) {
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
             "choose one with --server NAME",
             n);
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
  mcp_status s = co ? mcp_manager_request(g_mgr, name, method, params, co, &result, &err)
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
    found = strcmp(mcp_tool_list_name(l, i), name) == 0 && selected(mcp_tool_list_server(l, i));
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
      if (type && strcmp(type, "text") == 0) json_object_object_get_ex(item, "text", &text);
    }
  char *s = json_object_is_type(text, json_type_string) ? xstrdup(json_object_get_string(text))
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
    /* SERVER/TOOL; SERVER may be a display name with slashes of its own. */
    const struct srv *s = NULL;
    for (const char *p = slash; p && !s; p = strchr(p + 1, '/')) {
      char *cand = xstrndup(spec, (size_t)(p - spec));
      if ((s = status_find_any(&st, cand))) slash = p;
      free(cand);
    }
    char *prefix = s ? xstrdup(s->name) : xstrndup(spec, (size_t)(slash - spec));
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
        complain("unknown tool '%s' on server %s (it has: %s)", slash + 1, prefix,
                 *names ? names : "no tools");
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
    if (selected(mcp_tool_list_server(l, i)) && strcmp(mcp_tool_list_name(l, i), spec) == 0) {
      *server = xstrdup(mcp_tool_list_server(l, i));
      *tool = xstrdup(mcp_tool_list_tool(l, i));
      mcp_tool_list_unref(l);
      return EXIT_OK;
    }
  for (size_t i = 0; i < n; i++)
    if (selected(mcp_tool_list_server(l, i)) && strcmp(mcp_tool_list_tool(l, i), spec) == 0) {
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
      if (selected(mcp_tool_list_server(l, i)) && strcmp(mcp_tool_list_tool(l, i), spec) == 0)
        sbuf_add(&list, "%s%s/%s", list.len ? ", " : "", mcp_tool_list_server(l, i), spec);
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

int cmd_call(const char *spec, const char *args) {
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
  task_status_begin(co, server); /* a task's status: cli_tasks.c */

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
  task_status_end();

  if (result) print_json(result);
  if (st == MCP_ETOOLERROR) {
    char *text = err.message ? NULL : first_text(result);
    complain("%s: tool %s reported an error: %s", server, tool,
             err.message ? err.message
             : text      ? text
                         : "(no text)");
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
