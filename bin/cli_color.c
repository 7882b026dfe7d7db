/* SPDX-License-Identifier: MIT */
/*
 * cli_color.c: colour on a terminal.  stdout and stderr decide each for
 * itself, once: colour when the stream is a terminal, NO_COLOR is unset or
 * empty (https://no-color.org), --no-color was not given and TERM is not
 * "dumb".  Only the CLI's own SGR sequences are written here; text a
 * server chose still goes through safe_write(), which lets no escape
 * through.
 *
 * Threads: any; the decision is made once (pthread_once), after
 * parse_options().
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static pthread_once_t g_color_once = PTHREAD_ONCE_INIT;
static bool g_color_out, g_color_err;

static void color_decide(void) {
  const char *no = getenv("NO_COLOR");
  const char *term = getenv("TERM");
  bool allowed = !(no && *no) && !g_cli.no_color && !(term && strcmp(term, "dumb") == 0);
  g_color_out = allowed && isatty(STDOUT_FILENO);
  g_color_err = allowed && isatty(STDERR_FILENO);
}

bool color_enabled(FILE *f) {
  pthread_once(&g_color_once, color_decide);
  return f == stdout ? g_color_out : f == stderr ? g_color_err : false;
}

void color_on(FILE *f, const char *sgr) {
  if (sgr && color_enabled(f)) fprintf(f, "\033[%sm", sgr);
}

void color_off(FILE *f) {
  if (color_enabled(f)) fputs("\033[0m", f);
}

const char *state_color(const char *state) {
  if (!state) return NULL;
  if (strcmp(state, "ready") == 0) return COLOR_GREEN;
  if (strcmp(state, "failed") == 0) return COLOR_RED;
  if (strcmp(state, "closed") == 0 || strcmp(state, "disabled") == 0) return COLOR_DIM;
  return COLOR_YELLOW; /* connecting, deferred, backoff */
}
