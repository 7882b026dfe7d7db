/* SPDX-License-Identifier: MIT */
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
 * This file holds main(): the dispatch to the commands, `call`'s
 * arguments (ARGS_JSON, KEY=VALUE, KEY:=JSON) made one JSON object, the
 * exit code of the run (the codes are in cli.h; usage() documents them; a
 * stdout nobody reads any more is no failure) and SIGINT.  The rest lives beside it, sharing bin/cli.h:
 * cli_args.c (the command line), cli_start.c (starting the manager),
 * cli_wait.c (events, diagnostics, status, waiting), cli_trust.c (project
 * trust), cli_oauth.c (the OAuth browser step), cli_cmds.c (the commands),
 * cli_util.c (helpers), cli_items.c (prompts, resources), cli_skills.c
 * (skills), cli_tasks.c (tasks); `bench` is mcpconn-bench.c.
 *
 * SIGINT is blocked in every thread and taken by one sigwait() thread, which
 * fires the cancel token of the request in flight, so an interrupted call
 * sends notifications/cancelled to its server before we exit with 130.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "mcpconn-bench.h"

/* ---- interruption ----------------------------------------------------- */

/* Fired by SIGINT; the request in flight carries it. */
mcp_cancel *g_cancel;
atomic_bool g_interrupted;
/* True while the blocking call in flight carries g_cancel. */
atomic_bool g_cancellable;
static sigset_t g_sigint_set;
/* Set when main is done; the SIGINT that follows ends the signal thread. */
static atomic_bool g_quitting;

static void *signal_thread(void *arg) {
  (void)arg;
  for (;;) {
    int sig = 0;
    if (sigwait(&g_sigint_set, &sig) != 0) continue;
    if (atomic_load(&g_quitting)) break;
    if (atomic_exchange(&g_interrupted, true) || !atomic_load(&g_cancellable)) {
      /* A second Ctrl-C, or nothing to cancel (connecting, waiting): leave
       * now.  The servers see EOF on stdin when our pipes close. */
      static const char msg[] = PROG ": interrupted\n";
      static const char erase[] = "\r\033[K";
      ssize_t ignored = 0;
      if (atomic_load(&g_status_line)) /* cli_wait.c's live line */
        ignored = write(STDERR_FILENO, erase, sizeof(erase) - 1);
      ignored = write(STDERR_FILENO, msg, sizeof(msg) - 1);
      (void)ignored;
      _exit(EXIT_INTERRUPTED);
    }
    mcp_cancel_fire(g_cancel);
  }
  return NULL;
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

/*
 * The arguments of `call TOOL ARG...` as one JSON object (a new string):
 * each ARG is a JSON object (starts with '{'), merged in, or KEY=VALUE (a
 * string) or KEY:=JSON (any JSON value: n:=3, flag:=true, list:='[1]');
 * later keys win.  Exits 2 on a bad argument.
 */
static char *call_arguments(char **args, int nargs) {
  if (nargs == 1 && args[0][strspn(args[0], " \t\r\n")] == '{') {
    check_json_object("ARGS_JSON", args[0]);
    return xstrdup(args[0]);
  }
  /* Static: the usage errors below exit with it still held, and a leak
   * checker then sees it reachable (nothing is lost: the process ends). */
  static json_object *obj;
  obj = json_object_new_object();
  if (!obj) usage_error("out of memory");
  for (int i = 0; i < nargs; i++) {
    const char *a = args[i];
    const char *eq = strchr(a, '=');
    char why[256];
    if (a[strspn(a, " \t\r\n")] == '{' || !eq) {
      /* A JSON object, or an error about one ("{bad", "[1,2]"). */
      check_json_object("ARGS_JSON", a);
      json_object *o = parse_json(a, strlen(a), true, why, sizeof(why));
      json_object_object_foreach(o, key, val)
          json_object_object_add(obj, key, json_object_get(val));
      json_object_put(o);
      continue;
    }
    bool raw = eq > a && eq[-1] == ':';
    size_t klen = (size_t)(eq - a) - (raw ? 1 : 0);
    if (klen == 0) usage_error("argument '%s': expected KEY=VALUE or KEY:=JSON", a);
    static char *key; /* static for the same reason */
    key = xstrndup(a, klen);
    json_object *val;
    if (raw) {
      val = parse_json(eq + 1, strlen(eq + 1), true, why, sizeof(why));
      if (!val && strcmp(eq + 1, "null") != 0)
        usage_error("argument '%s': the value after := is not JSON: %s", key, why);
    } else {
      val = json_object_new_string(eq + 1);
    }
    json_object_object_add(obj, key, val);
    free(key);
    key = NULL;
  }
  char *text = xstrdup(json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN));
  json_object_put(obj);
  obj = NULL;
  return text;
}

/* The flags of `tools` and `servers`. */
struct listing {
  bool json;
  bool check;
  int wait; /* 1 --wait, 0 --no-wait, -1 the default */
};

static void parse_listing(const char *cmd, char **args, int nargs, bool allow_check,
                          struct listing *out) {
  out->json = out->check = false;
  out->wait = -1;
  for (int i = 0; i < nargs; i++) {
    if (strcmp(args[i], "--json") == 0) out->json = true;
    else if (allow_check && strcmp(args[i], "--check") == 0) out->check = true;
    else if (strcmp(args[i], "--wait") == 0) out->wait = 1;
    else if (strcmp(args[i], "--no-wait") == 0) out->wait = 0;
    else usage_error("%s: unexpected argument '%s'", cmd, args[i]);
  }
  /* Complete lists by default, for scripts and people alike (a terminal
   * shows who is still connecting meanwhile: wait_servers()). */
  if (out->wait < 0) out->wait = 1;
}

int main(int argc, char **argv) {
  /* `mcpconn bench ...` has options of its own (see bin/mcpconn-bench.c). */
  if (argc >= 2 && strcmp(argv[1], "bench") == 0) return mcpconn_bench_main(argc - 1, argv + 1);
  sigemptyset(&g_sigint_set);
  sigaddset(&g_sigint_set, SIGINT);
  /* A closed stdout shows up as a write error, not a signal. */
  signal(SIGPIPE, SIG_IGN);
  ev_init();

  parse_options(argc, argv);
  if (optind >= argc) usage_error("no command given");
  const char *cmd = argv[optind];
  char **args = argv + optind + 1;
  int nargs = argc - optind - 1;

  struct listing lf = {false, false, -1};
  char *call_args = NULL; /* `call`'s arguments as one JSON object */
  if (strcmp(cmd, "tools") == 0) {
    parse_listing(cmd, args, nargs, false, &lf);
  } else if (strcmp(cmd, "servers") == 0) {
    parse_listing(cmd, args, nargs, true, &lf);
  } else if (strcmp(cmd, "call") == 0) {
    if (nargs < 1) usage_error("usage: call TOOL [ARGS_JSON | KEY=VALUE | KEY:=JSON ...]");
    if (nargs >= 2) call_args = call_arguments(args + 1, nargs - 1);
    tasks_for_call(); /* a 2026-07-28 server may answer with a task */
  } else if (strcmp(cmd, "ping") == 0) {
    if (nargs) usage_error("ping: unexpected argument '%s'", args[0]);
  } else if (strcmp(cmd, "request") == 0) {
    if (nargs < 1 || nargs > 2) usage_error("usage: request METHOD [PARAMS_JSON]");
    if (nargs == 2) check_json_object("PARAMS_JSON", args[1]);
  } else if (strcmp(cmd, "trust") == 0) {
    if (nargs) usage_error("trust: unexpected argument '%s'", args[0]);
    int trc = cmd_trust();
    free_cli(&g_cli);
    return trc;
  } else if (items_parse(cmd, args, nargs)) {
    /* prompts, resources: cli_items.c */
  } else if (skills_parse(cmd, args, nargs)) {
    /* skills: cli_skills.c */
  } else if (tasks_parse(cmd, args, nargs)) {
    /* tasks: cli_tasks.c */
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
  bool sig_thread_started = pthread_create(&sig_thread, NULL, signal_thread, NULL) == 0;

  int rc = setup(strcmp(cmd, "servers") == 0);
  if (rc != EXIT_OK) {
    /* setup() said why. */
  } else if (strcmp(cmd, "tools") == 0) {
    rc = cmd_tools(lf.json, lf.wait);
  } else if (strcmp(cmd, "servers") == 0) {
    rc = cmd_servers(lf.json, lf.check, lf.wait);
  } else if (strcmp(cmd, "call") == 0) {
    rc = cmd_call(args[0], call_args);
  } else if (strcmp(cmd, "ping") == 0) {
    rc = cmd_ping();
  } else if (strcmp(cmd, "prompts") == 0 || strcmp(cmd, "resources") == 0) {
    rc = cmd_items();
  } else if (strcmp(cmd, "skills") == 0) {
    rc = cmd_skills();
  } else if (strcmp(cmd, "tasks") == 0) {
    rc = cmd_tasks();
  } else {
    rc = cmd_request(args[0], nargs == 2 ? args[1] : NULL);
  }

  if (sig_thread_started) {
    atomic_store(&g_quitting, true);
    pthread_kill(sig_thread, SIGINT);
    pthread_join(sig_thread, NULL);
  }
  if (fflush(stdout) != 0 || ferror(stdout)) {
    /* A reader that stopped reading (`mcpconn tools | head`) wanted no
     * more: that is no failure, and no "Broken pipe" either. */
    int e = errno;
    if (rc == EXIT_OK && !stdout_closed(e)) {
      complain("cannot write the output%s%s", e ? ": " : "", e ? strerror(e) : "");
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
  free(call_args);
  free_cli(&g_cli);
  return rc;
}
