/* SPDX-License-Identifier: MIT */
/*
 * cli_util.c: the CLI's small helpers: allocation that exits with code 3
 * when memory runs out (x*), a growable string array (strv) and string
 * (sbuf), the clock, the one-line messages on stderr (complain,
 * usage_error, config_error), JSON parsing and printing for stdout, the
 * terminal's width and cells cut to it, and telling a closed stdout pipe.
 *
 * Threads: any.  g_stderr_lock serialises every write to stderr, so lines
 * from the manager's callbacks and the progress display never interleave.
 * Knows nothing of servers, the manager or the command line.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "mcpconn-text.h"

void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) {
    fputs(PROG ": out of memory\n", stderr);
    exit(EXIT_CONNECTION);
  }
  return p;
}

void *xrealloc(void *p, size_t n) {
  void *q = realloc(p, n ? n : 1);
  if (!q) {
    fputs(PROG ": out of memory\n", stderr);
    exit(EXIT_CONNECTION);
  }
  return q;
}

char *xstrdup(const char *s) {
  size_t n = strlen(s) + 1;
  return memcpy(xmalloc(n), s, n);
}

char *xstrndup(const char *s, size_t n) {
  char *d = xmalloc(n + 1);
  memcpy(d, s, n);
  d[n] = '\0';
  return d;
}

void strv_push(struct strv *sv, char *s) {
  if (sv->n + 2 > sv->cap) {
    sv->cap = sv->cap ? sv->cap * 2 : 8;
    sv->v = xrealloc(sv->v, sv->cap * sizeof(*sv->v));
  }
  sv->v[sv->n++] = s;
  sv->v[sv->n] = NULL;
}

bool strv_has(const struct strv *sv, const char *s) {
  for (size_t i = 0; i < sv->n; i++)
    if (strcmp(sv->v[i], s) == 0) return true;
  return false;
}

void strv_free(struct strv *sv) {
  for (size_t i = 0; i < sv->n; i++) free(sv->v[i]);
  free(sv->v);
  memset(sv, 0, sizeof(*sv));
}

void sbuf_add(struct sbuf *b, const char *fmt, ...) {
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

int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Serialises writes to stderr from the library's threads (log lines,
 * progress) with ours. */
pthread_mutex_t g_stderr_lock = PTHREAD_MUTEX_INITIALIZER;

/* Prints "mcpconn: <reason>" on stderr; the reason is kept to one line. */

void complain(const char *fmt, ...) {
  char line[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof(line), fmt, ap);
  va_end(ap);
  pthread_mutex_lock(&g_stderr_lock);
  status_line_erase_locked();
  color_on(stderr, COLOR_ERROR);
  fputs(PROG ":", stderr);
  color_off(stderr);
  fputc(' ', stderr);
  safe_puts(stderr, line, SAFE_LINE);
  fputc('\n', stderr);
  pthread_mutex_unlock(&g_stderr_lock);
}

void usage_error(const char *fmt, ...) {
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof(line), fmt, ap);
  va_end(ap);
  complain("%s (see " PROG " --help)", line);
  exit(EXIT_USAGE);
}

/* A usage error without the --help hint (the reason says it all). */

void config_error(const char *fmt, ...) {
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof(line), fmt, ap);
  va_end(ap);
  complain("%s", line);
  exit(EXIT_USAGE);
}

const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash && slash[1] ? slash + 1 : path;
}

/* Parses |text| as JSON; NULL (and a reason in |why|) when it is not.
 * |strict| refuses what json-c otherwise lets through (comments, trailing
 * commas, single quotes). */
json_object *parse_json(const char *text, size_t len, bool strict, char *why, size_t why_size) {
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

const char *jstring(json_object *obj, const char *key) {
  json_object *v;
  if (json_object_object_get_ex(obj, key, &v) && json_object_is_type(v, json_type_string))
    return json_object_get_string(v);
  return NULL;
}

/* Prints |json| pretty on stdout (as is, if it does not parse). */
void print_json_object(json_object *obj) {
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
void print_json(const char *json) {
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
void print_clean(const char *s, size_t len) {
  size_t n = 0;
  while (n < len && s[n]) n++;
  safe_write(stdout, s, n, SAFE_CELL);
}

/* Prints |s| clean and pads it with spaces to |width| bytes. */
void print_cell(const char *s, size_t width) {
  print_clean(s, SIZE_MAX);
  for (size_t n = safe_width(s); n < width; n++) putchar(' ');
}

/* ---- the terminal ----------------------------------------------------- */

size_t term_columns(void) {
  if (!isatty(STDOUT_FILENO)) return 0;
  const char *env = getenv("COLUMNS");
  if (env && *env) {
    char *end;
    errno = 0;
    long v = strtol(env, &end, 10);
    if (!errno && !*end && v > 0 && v < 100000) return (size_t)v;
  }
  struct winsize ws;
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 0;
}

/* The ellipsis: U+2026 when the locale's environment says UTF-8, else
 * three dots. */
static const char *ellipsis(size_t *width) {
  const char *vars[] = {"LC_ALL", "LC_CTYPE", "LANG"};
  const char *loc = NULL;
  for (size_t i = 0; i < 3 && !loc; i++) {
    const char *v = getenv(vars[i]);
    if (v && *v) loc = v;
  }
  if (loc && (strstr(loc, "UTF-8") || strstr(loc, "utf-8") || strstr(loc, "UTF8") ||
              strstr(loc, "utf8"))) {
    *width = 1;
    return "\xe2\x80\xa6";
  }
  *width = 3;
  return "...";
}

void print_clipped(const char *s, size_t len, size_t max) {
  size_t n = 0;
  while (n < len && s[n]) n++;
  if (max == SIZE_MAX) {
    safe_write(stdout, s, n, SAFE_CELL);
    return;
  }
  /* The bytes of the first |max| characters, counted as safe_width(). */
  size_t chars = 0, i = 0;
  while (i < n && chars < max) {
    uint32_t cp;
    size_t k = text_utf8_decode((const unsigned char *)s + i, n - i, &cp);
    i += k ? k : 1;
    chars++;
  }
  if (i >= n) {
    safe_write(stdout, s, n, SAFE_CELL);
    return;
  }
  size_t ew;
  const char *e = ellipsis(&ew);
  if (max <= ew) {
    fwrite(e, 1, strlen(e), stdout);
    return;
  }
  /* Room for max - ew characters, then the ellipsis. */
  size_t keep = 0;
  chars = 0;
  while (keep < n && chars < max - ew) {
    uint32_t cp;
    size_t k = text_utf8_decode((const unsigned char *)s + keep, n - keep, &cp);
    keep += k ? k : 1;
    chars++;
  }
  while (keep > 0 && (s[keep - 1] == ' ' || s[keep - 1] == '\t')) keep--;
  safe_write(stdout, s, keep, SAFE_CELL);
  fputs(e, stdout);
}

bool stdout_closed(int err) {
  if (err == EPIPE) return true;
  /* A pipe whose reader has gone polls as an error on the write side. */
  struct pollfd p = {STDOUT_FILENO, 0, 0};
  return poll(&p, 1, 0) == 1 && (p.revents & POLLERR);
}

void on_log_record(void *user, const mcp_log_record *r) {
  if (!r->server) {
    on_log(user, r->level, r->message);
    return;
  }
  /* -v: "[server] message", the server as a field; the warnings shown
   * without -v read as a sentence: "server: message". */
  size_t n = strlen(r->server) + strlen(r->message) + 4;
  char *line = malloc(n);
  if (line) snprintf(line, n, g_cli.verbose ? "[%s] %s" : "%s: %s", r->server, r->message);
  on_log(user, r->level, line ? line : r->message);
  free(line);
}
