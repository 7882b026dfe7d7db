/* SPDX-License-Identifier: MIT */
/*
 * cli_start.c: starting the manager for a run: the manager options every
 * run shares, the servers of the command line and the config files, the
 * bundled demo server when nothing is configured (not when config files
 * were read and every server in them was skipped: then which files and
 * why), and setup(), which turns the config diagnostics into a usage error
 * (an invalid --config file; a --config entry when no server is usable)
 * or warnings (a skipped server), and checks --server names.
 *
 * Threads: the main thread only; it owns g_mgr's lifetime.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define DEMO_SERVER_PROG "mcpconn-demo-server"
#define DEMO_SERVER_NAME "demo"

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
  if (access(MCP_DEMO_SERVER_INSTALLED, X_OK) == 0) return xstrdup(MCP_DEMO_SERVER_INSTALLED);
#endif
  return NULL;
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
  if (g_cli.protocol) (void)mcp_manager_options_set_protocol(o, g_cli.protocol); /* checked */
  mcp_manager_options_set_log_record(o, on_log_record, NULL);
  mcp_manager_options_set_event_handler(o, on_event, NULL);
  /* The skills extension, declared only when the command uses it. */
  if (skills_command() &&
      mcp_manager_options_set_extension(o, MCP_SKILLS_EXTENSION, NULL) != MCP_OK) {
    mcp_manager_options_free(o);
    return NULL;
  }
  /* The tasks extension, for the commands that may follow a task. */
  if (tasks_extension_wanted() &&
      mcp_manager_options_set_extension(o, MCP_TASKS_EXTENSION, NULL) != MCP_OK) {
    mcp_manager_options_free(o);
    return NULL;
  }
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
  bool discovery = (g_cli.n_adhoc == 0 && g_cli.configs.n == 0) || g_cli.imports != 0;
  *discovery_only = g_cli.n_adhoc == 0 && g_cli.configs.n == 0;
  mcp_manager_options *o = base_options();
  for (size_t i = 0; o && i < g_cli.n_adhoc; i++) {
    struct adhoc *a = &g_cli.adhoc[i];
    mcp_client_options_set_timeout_ms(a->co, g_cli.timeout_ms);
    mcp_status st = g_cli.protocol ? mcp_client_options_set_protocol(a->co, g_cli.protocol)
                                   : MCP_OK;
    if (st == MCP_OK) st = mcp_manager_options_add_server(o, a->name, a->co);
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
    if (g_cli.config_format) (void)mcp_manager_options_set_config_format(o, g_cli.config_format);
  }
  for (size_t i = 0; o && i < g_cli.inputs.n; i++) {
    char *id = g_cli.inputs.v[i], *eq = strchr(id, '=');
    *eq = '\0';
    mcp_status st = mcp_manager_options_set_input(o, id, eq + 1);
    *eq = '=';
    if (st != MCP_OK) {
      mcp_manager_options_free(o);
      o = NULL;
    }
  }
  return start_manager(o);
}

/* The bundled demo server, when nothing else is configured. */
static int start_demo(void) {
  char *path = find_demo_server();
  if (!path) {
    complain("no server configured, and the bundled demo server (" DEMO_SERVER_PROG
             ") was not found; set MCPCONN_DEMO_SERVER or "
             "use --stdio, --url or --config");
    return EXIT_CONNECTION;
  }
  if (!g_cli.quiet) complain("no server configured; using the bundled demo server (%s)", path);
  mcp_manager_options *o = base_options();
  mcp_client_options *co = mcp_client_options_new();
  const char *argv[] = {path, NULL};
  bool ok = o && co && mcp_client_options_set_stdio(co, argv) == MCP_OK;
  if (ok) {
    mcp_client_options_set_timeout_ms(co, g_cli.timeout_ms);
    ok = (!g_cli.protocol || mcp_client_options_set_protocol(co, g_cli.protocol) == MCP_OK) &&
         mcp_manager_options_add_server(o, DEMO_SERVER_NAME, co) == MCP_OK;
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
    if (strncmp(diag, path, len) != 0 || strncmp(diag + len, ": invalid JSON", 14) != 0) continue;
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
 * The servers of --config files that were skipped (an invalid entry, an
 * unresolved variable): a warning each, naming the file and the server,
 * when another server is usable; else they are the error (exit 2).
 */
static int check_skipped(void) {
  if (!g_diag.skipped.n) return EXIT_OK;
  struct status st;
  if (!status_load(&st)) return EXIT_CONNECTION;
  size_t n_usable = 0;
  for (size_t i = 0; i < st.n; i++) n_usable += enabled(&st.v[i]);
  status_free(&st);
  for (size_t i = 0; i < g_diag.skipped.n; i++)
    if (!n_usable) complain("%s", g_diag.skipped.v[i]);
    else if (!g_cli.quiet) complain("warning: %s; skipped", g_diag.skipped.v[i]);
  return n_usable ? EXIT_OK : EXIT_USAGE;
}

/*
 * When config files were read but none of their servers is usable: which
 * files were read (mcp_manager_config_files()), and why each server was
 * skipped (the diagnostics, printed as warnings unless -q: repeated here
 * with -q, since they are the error).  Returns EXIT_USAGE.
 */
static int report_unusable(void) {
  char *json = NULL;
  mcp_error err = MCP_ERROR_INIT;
  struct sbuf files = {0};
  if (mcp_manager_config_files(g_mgr, &json, &err) == MCP_OK) {
    json_object *arr = json_tokener_parse(json);
    for (size_t i = 0; i < json_object_array_length(arr); i++)
      sbuf_add(&files, "%s%s", i ? ", " : "",
               json_object_get_string(json_object_array_get_idx(arr, i)));
    json_object_put(arr);
  }
  mcp_free(json);
  mcp_error_clear(&err);
  for (size_t i = 0; g_cli.quiet && i < g_diag.warnings.n; i++)
    complain("warning: %s", g_diag.warnings.v[i]);
  complain("no usable server: every server of the config files read (%s) was skipped; "
           "the warnings say why",
           files.s ? files.s : "none");
  free(files.s);
  return EXIT_USAGE;
}

/*
 * Starts the manager for this run and checks what it found.  Returns an
 * exit code; EXIT_OK with g_mgr running.
 */
int setup(bool status_only) {
  bool discovery_only;
  int rc = start_configured(&discovery_only);
  if (rc != EXIT_OK) return rc;

  if (g_diag.errors.n) {
    complain_config(g_diag.errors.v[0]);
    return EXIT_USAGE;
  }
  for (size_t i = 0; !g_cli.quiet && i < g_diag.warnings.n; i++)
    complain("warning: %s", g_diag.warnings.v[i]);
  if ((rc = check_skipped()) != EXIT_OK) return rc;

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
  } else if (n_all == 0 && discovery_only && g_diag.found_skipped) {
    /* Not the demo server either: the user's servers are broken. */
    return report_unusable();
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
  for (size_t i = 0; i < st.n; i++) n_used += st.v[i].selected && enabled(&st.v[i]);
  status_free(&st);
  if (rc == EXIT_OK && n_used == 0 && !status_only) {
    complain("no servers: the configuration has none that is enabled");
    rc = EXIT_USAGE;
  }
  return rc;
}
