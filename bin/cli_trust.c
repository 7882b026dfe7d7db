/* SPDX-License-Identifier: MIT */
/*
 * cli_trust.c: project trust in the CLI.  A project file (a checkout's
 * .mcp.json) runs its servers only after a decision: --trust-project,
 * an approval in the trust store, or an answer at the prompt that
 * cli_trust() shows when stdin and stderr are a terminal (it prints what
 * the file would run, terminal-safe).  `mcpconn trust` (cmd_trust) stores
 * approvals for the project files found from here.
 *
 * Threads: cli_trust() runs on the thread that starts the manager (the
 * main thread), during discovery; it writes g_untrusted, which setup()
 * reads afterwards.  The trust store itself is the library's.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "mcpconn-text.h"

/* ---- project trust ----------------------------------------------------- */

/*
 * Project files come with the directory (a cloned repository brings its
 * .mcp.json), so their servers run only after a decision: --trust-project
 * for this run, an approval remembered by `mcpconn trust` or by answering
 * "always", or a yes at the prompt on a terminal.
 */

/* Project files left out this run, for setup()'s message. */
size_t g_untrusted;

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
  size_t n = json_object_is_type(arr, json_type_array) ? json_object_array_length(arr) : 0;
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
  atomic_fetch_add(&g_status_hold, 1); /* no live line over the prompt */
  pthread_mutex_lock(&g_stderr_lock);
  status_line_erase_locked();
  fputs(PROG ": ", stderr);
  put_safe(stderr, path);
  fputs(" is a project file (it came with this directory, not from your own "
        "configuration).  Its servers would do this:\n",
        stderr);
  print_project_servers(stderr, servers_json);
  fputs("Use them?  y: this time, a: always (remember this file as it is now), "
        "N: no > ",
        stderr);
  fflush(stderr);
  pthread_mutex_unlock(&g_stderr_lock);
  char line[64];
  bool answered = fgets(line, sizeof(line), stdin) != NULL;
  atomic_fetch_sub(&g_status_hold, 1);
  if (!answered) return MCP_TRUST_DENY;
  const char *p = line;
  while (*p == ' ' || *p == '\t') p++;
  if (*p == 'y' || *p == 'Y') return MCP_TRUST_ONCE;
  if (*p == 'a' || *p == 'A') return MCP_TRUST_ALWAYS;
  return MCP_TRUST_DENY;
}

/* The manager's trust callback (see mcp_project_trust_fn). */
mcp_trust cli_trust(void *user, const char *path, const char *sha256, const char *servers_json) {
  (void)user;
  (void)sha256;
  if (g_cli.trust_project) return MCP_TRUST_ONCE;
  mcp_trust t = MCP_TRUST_DENY;
  if (isatty(STDIN_FILENO) && isatty(STDERR_FILENO)) t = ask_trust(path, servers_json);
  else if (!g_cli.quiet) {
    pthread_mutex_lock(&g_stderr_lock);
    status_line_erase_locked();
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
int cmd_trust(void) {
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
