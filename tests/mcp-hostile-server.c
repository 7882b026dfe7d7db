/* SPDX-License-Identifier: MIT */
/*
 * mcp-hostile-server: a stdio MCP server that attacks its client, for the
 * soak's hostile mode (tests/soak/soak.c --hostile).
 *
 * It speaks newline-delimited JSON-RPC on stdin/stdout.  initialize, ping
 * and the first tools/list are well formed (so the client connects and
 * knows the tools echo {text} and relist); what comes after depends on
 * --mode, and each mode cycles through its variants call by call:
 *
 *   cursor      the tool relist sends notifications/tools/list_changed;
 *               every later tools/list pages badly: the same nextCursor
 *               twice, a 200 KiB cursor repeated, an endless run of new
 *               cursors (up to 200 000 pages), a page of a non-array
 *               "tools" with a cursor.  echo answers normally
 *   flood       before each echo answer, 2 000 server->client pings and
 *               2 000 notifications/message (it keeps reading meanwhile)
 *   oversize    each echo answer is one line of 1.5 MiB (the soak's limit
 *               is 1 MiB), a valid response with the right id
 *   bad-utf8    each echo answer's text is the text followed by bytes that
 *               are not UTF-8 (0xff, an overlong '/', a surrogate, a cut
 *               sequence)
 *   non-object  each echo result is 42, "text", [], null or true
 *   malformed   each echo answer has a readable id but is malformed: both
 *               result and error, a raw NUL byte, nesting 100 000 deep,
 *               the id as N.0, neither result nor error
 *   stop-reading after 10 echo answers, writes 400 000 pings
 *               without reading stdin, then blocks (never reads again)
 *   escape      each echo answer's text is the text followed by ESC[2J,
 *               ESC]0;title BEL, U+202E, U+009B; tool descriptions too
 *               (a well-formed answer the client must pass on exactly)
 *
 * Standalone: links json-c only.  One thread.  --fault-log FILE appends
 * "hostile-<mode>-<variant>\n" per misbehaviour.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <json.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum mode {
  M_CURSOR,
  M_FLOOD,
  M_OVERSIZE,
  M_BAD_UTF8,
  M_NON_OBJECT,
  M_MALFORMED,
  M_STOP_READING,
  M_ESCAPE
};
static const char *const mode_names[] = {"cursor",     "flood",     "oversize",     "bad-utf8",
                                         "non-object", "malformed", "stop-reading", "escape"};
#define NMODES ((int)(sizeof(mode_names) / sizeof(mode_names[0])))

#define EVIL \
  "\x1b[2J\x1b]0;pwned\x07 \xe2\x80\xae \xc2\x9b" \
  "31m"

static enum mode g_mode;
static const char *g_log;
static long g_calls, g_lists;
static bool g_stop_reading;

/* ---- input: a line buffer filled whenever stdin is readable ----------- */

static char *inbuf;
static size_t inlen, incap;
static bool in_eof;

/* Reads what stdin has now (|block|: wait for something) into inbuf. */
static void fill(bool block) {
  if (in_eof || g_stop_reading) return;
  struct pollfd p = {0, POLLIN, 0};
  if (!block && poll(&p, 1, 0) <= 0) return;
  if (incap - inlen < 65536) {
    incap = incap ? incap * 2 : 131072;
    inbuf = realloc(inbuf, incap);
    if (!inbuf) abort();
  }
  ssize_t r = read(0, inbuf + inlen, incap - inlen);
  if (r < 0 && errno == EINTR) return;
  if (r <= 0) {
    in_eof = true;
    return;
  }
  inlen += (size_t)r;
}

/* The next line (malloc'd), or NULL at EOF. */
static char *next_line(void) {
  for (;;) {
    char *nl = inlen ? memchr(inbuf, '\n', inlen) : NULL;
    if (nl) {
      size_t n = (size_t)(nl - inbuf);
      char *line = strndup(inbuf, n);
      memmove(inbuf, nl + 1, inlen - n - 1);
      inlen -= n + 1;
      return line;
    }
    if (in_eof) return NULL;
    fill(true);
  }
}

/* ---- output: writes that keep reading stdin (no deadlock with a client
 * that answers our pings while we flood) -------------------------------- */

static void write_all(const char *p, size_t n) {
  while (n) {
    struct pollfd pf[2] = {{1, POLLOUT, 0}, {0, POLLIN, 0}};
    int np = in_eof || g_stop_reading ? 1 : 2;
    if (poll(pf, (nfds_t)np, -1) < 0) {
      if (errno == EINTR) continue;
      _exit(4);
    }
    if (np == 2 && (pf[1].revents & (POLLIN | POLLHUP))) fill(false);
    if (!(pf[0].revents & (POLLOUT | POLLERR | POLLHUP))) continue;
    ssize_t w = write(1, p, n);
    if (w < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (w < 0) _exit(4); /* the client went away */
    p += w;
    n -= (size_t)w;
  }
}

static void write_str(const char *s) { write_all(s, strlen(s)); }

static void send_json(json_object *m) {
  const char *s = json_object_to_json_string_ext(m, JSON_C_TO_STRING_PLAIN |
                                                        JSON_C_TO_STRING_NOSLASHESCAPE);
  write_str(s);
  write_str("\n");
  json_object_put(m);
}

static void log_fault(const char *variant) {
  if (!g_log) return;
  FILE *f = fopen(g_log, "a");
  if (!f) return;
  fprintf(f, "hostile-%s-%s\n", mode_names[g_mode], variant);
  fclose(f);
}

/* The id as JSON text. */
static const char *id_text(json_object *id) {
  return json_object_to_json_string_ext(id, JSON_C_TO_STRING_PLAIN);
}

static void send_result(json_object *id, json_object *result) {
  json_object *m = json_object_new_object();
  json_object_object_add(m, "jsonrpc", json_object_new_string("2.0"));
  json_object_object_add(m, "id", json_object_get(id));
  json_object_object_add(m, "result", result);
  send_json(m);
}

static json_object *text_result(const char *text) {
  json_object *r = json_object_new_object(), *c = json_object_new_array(),
              *item = json_object_new_object();
  json_object_object_add(item, "type", json_object_new_string("text"));
  json_object_object_add(item, "text", json_object_new_string(text));
  json_object_array_add(c, item);
  json_object_object_add(r, "content", c);
  return r;
}

/* ---- methods ------------------------------------------------------------ */

static void do_initialize(json_object *id) {
  json_object *r = json_tokener_parse(
      "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{\"tools\":{\"listChanged\":true}},"
      "\"serverInfo\":{\"name\":\"mcp-hostile-server\",\"version\":\"1.0\"}}");
  if (g_mode == M_ESCAPE) json_object_object_add(r, "instructions", json_object_new_string(EVIL));
  send_result(id, r);
}

static json_object *tools_page(void) {
  json_object *tools = json_object_new_array();
  static const char *const names[] = {"echo", "relist"};
  for (int i = 0; i < 2; i++) {
    json_object *t = json_object_new_object();
    json_object_object_add(t, "name", json_object_new_string(names[i]));
    json_object_object_add(t, "description",
                           json_object_new_string(g_mode == M_ESCAPE ? EVIL : "a tool"));
    json_object_object_add(t, "inputSchema", json_tokener_parse("{\"type\":\"object\"}"));
    json_object_array_add(tools, t);
  }
  return tools;
}

/* tools/list: the first one (connect) is fine; after that, --mode cursor
 * pages badly. */
static void do_tools_list(json_object *id, json_object *params) {
  json_object *r = json_object_new_object();
  json_object *cur = NULL;
  const char *cursor = json_object_object_get_ex(params, "cursor", &cur)
                           ? json_object_get_string(cur)
                           : NULL;
  if (g_mode != M_CURSOR || g_lists == 0) {
    if (!cursor) g_lists++;
    json_object_object_add(r, "tools", tools_page());
    send_result(id, r);
    return;
  }
  long variant = cursor ? strtol(cursor + 1, NULL, 10) % 4 : (g_lists++ - 1) % 4;
  static char *big;
  if (!big) {
    big = malloc(200 * 1024 + 2);
    if (!big) abort();
    memset(big, 'c', 200 * 1024 + 1);
    big[200 * 1024 + 1] = '\0';
  }
  char next[64];
  switch (variant) {
  case 0: /* the same cursor on every page */
    if (!cursor) log_fault("repeated-cursor");
    snprintf(next, sizeof(next), "v0-same");
    json_object_object_add(r, "tools", tools_page());
    json_object_object_add(r, "nextCursor", json_object_new_string(next));
    break;
  case 1: /* a 200 KiB cursor, repeated */
    if (!cursor) log_fault("huge-cursor");
    big[0] = 'v', big[1] = '1';
    json_object_object_add(r, "tools", tools_page());
    json_object_object_add(r, "nextCursor", json_object_new_string(big));
    break;
  case 2: { /* endless new cursors */
    long n = cursor && strchr(cursor, '-') ? strtol(strchr(cursor, '-') + 1, NULL, 10) : 0;
    if (!cursor) log_fault("endless-cursors");
    json_object_object_add(r, "tools", tools_page());
    if (n < 200000) {
      snprintf(next, sizeof(next), "v2-%ld", n + 1);
      json_object_object_add(r, "nextCursor", json_object_new_string(next));
    }
    break;
  }
  default: /* "tools" is not an array, with a cursor */
    log_fault("non-array-page");
    json_object_object_add(r, "tools", json_object_new_string("tools"));
    json_object_object_add(r, "nextCursor", json_object_new_string("v3-x"));
    break;
  }
  send_result(id, r);
}

static void flood(long pings, long notes) {
  char line[160];
  for (long i = 0; i < pings || i < notes; i++) {
    if (i < pings) {
      snprintf(line, sizeof(line),
               "{\"jsonrpc\":\"2.0\",\"id\":\"hp-%ld-%ld\",\"method\":\"ping\"}\n", g_calls, i);
      write_str(line);
    }
    if (i < notes) {
      snprintf(line, sizeof(line),
               "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":"
               "{\"level\":\"info\",\"data\":\"flood %ld\"}}\n",
               i);
      write_str(line);
    }
  }
}

static void answer_echo(json_object *id, const char *text) {
  char buf[512];
  long k = g_calls;
  switch (g_mode) {
  case M_CURSOR:
  case M_FLOOD:
    if (g_mode == M_FLOOD) {
      log_fault("ping-flood");
      flood(2000, 2000);
    }
    send_result(id, text_result(text));
    return;
  case M_ESCAPE:
    snprintf(buf, sizeof(buf), "%s%s", text, EVIL);
    log_fault("escapes");
    send_result(id, text_result(buf));
    return;
  case M_OVERSIZE: {
    log_fault("oversize-line");
    size_t pad = 1536 * 1024;
    char *big = malloc(pad + 1);
    if (!big) abort();
    memset(big, 'x', pad);
    big[pad] = '\0';
    snprintf(
        buf, sizeof(buf),
        "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"%s",
        id_text(id), text);
    write_str(buf);
    write_str(big);
    write_str("\"}]}}\n");
    free(big);
    return;
  }
  case M_BAD_UTF8: {
    static const char *const bad[] = {"\xff", "\xc0\xaf", "\xed\xa0\x80", "\xe2\x82"};
    log_fault("invalid-utf8");
    snprintf(
        buf, sizeof(buf),
        "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"%s%s\"}]}}\n",
        id_text(id), text, bad[k % 4]);
    write_str(buf);
    return;
  }
  case M_NON_OBJECT: {
    static const char *const vals[] = {"42", "\"text\"", "[]", "null", "true"};
    log_fault("non-object-result");
    snprintf(buf, sizeof(buf), "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":%s}\n", id_text(id),
             vals[k % 5]);
    write_str(buf);
    return;
  }
  case M_MALFORMED: {
    const char *idt = id_text(id);
    switch (k % 5) {
    case 0:
      log_fault("result-and-error");
      snprintf(
          buf, sizeof(buf),
          "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{},\"error\":{\"code\":1,\"message\":\"x\"}}\n",
          idt);
      write_str(buf);
      break;
    case 1: {
      log_fault("nul-byte");
      int n = snprintf(
          buf, sizeof(buf),
          "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"a",
          idt);
      buf[n++] = '\0';
      n += snprintf(buf + n, sizeof(buf) - (size_t)n, "b\"}]}}\n");
      write_all(buf, (size_t)n);
      break;
    }
    case 2: {
      log_fault("deep-nesting");
      enum { DEPTH = 100000 };
      snprintf(buf, sizeof(buf), "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"deep\":", idt);
      char *deep = malloc(2 * DEPTH + 1);
      if (!deep) abort();
      memset(deep, '[', DEPTH);
      memset(deep + DEPTH, ']', DEPTH);
      deep[2 * DEPTH] = '\0';
      write_str(buf);
      write_str(deep);
      write_str("}}\n");
      free(deep);
      break;
    }
    case 3:
      log_fault("float-id");
      if (json_object_is_type(id, json_type_int))
        snprintf(buf, sizeof(buf), "{\"jsonrpc\":\"2.0\",\"id\":%s.0,\"result\":{}}\n", idt);
      else /* a string id: the same, with "result" a string */
        snprintf(buf, sizeof(buf),
                 "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":\"x\",\"result\":1}\n", idt);
      write_str(buf);
      break;
    default:
      log_fault("no-result-no-error");
      snprintf(buf, sizeof(buf), "{\"jsonrpc\":\"2.0\",\"id\":%s}\n", idt);
      write_str(buf);
      break;
    }
    return;
  }
  case M_STOP_READING:
    if (g_calls > 10) {
      log_fault("stop-reading-ping-flood");
      g_stop_reading = true;
      flood(400000, 0);
      for (;;) pause();
    }
    send_result(id, text_result(text));
    return;
  }
}

static void do_tools_call(json_object *id, json_object *params) {
  json_object *name = NULL, *args = NULL, *text = NULL;
  json_object_object_get_ex(params, "name", &name);
  json_object_object_get_ex(params, "arguments", &args);
  json_object_object_get_ex(args, "text", &text);
  const char *n = name ? json_object_get_string(name) : "";
  g_calls++;
  if (!strcmp(n, "relist")) {
    write_str("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n");
    send_result(id, text_result("relist"));
  } else if (!strcmp(n, "echo") && text) {
    answer_echo(id, json_object_get_string(text));
  } else {
    write_str("{\"jsonrpc\":\"2.0\",\"id\":");
    write_str(id_text(id));
    write_str(",\"error\":{\"code\":-32602,\"message\":\"unknown tool or no text\"}}\n");
  }
}

static void handle(const char *line) {
  json_object *m = json_tokener_parse(line), *method = NULL, *id = NULL, *params = NULL;
  if (!json_object_is_type(m, json_type_object)) {
    json_object_put(m);
    return;
  }
  json_object_object_get_ex(m, "method", &method);
  bool is_request = json_object_object_get_ex(m, "id", &id);
  json_object_object_get_ex(m, "params", &params);
  const char *meth = method ? json_object_get_string(method) : NULL;
  if (!meth || !is_request) {
    /* responses to our pings, notifications: nothing to do */
  } else if (!strcmp(meth, "initialize")) {
    do_initialize(id);
  } else if (!strcmp(meth, "ping")) {
    send_result(id, json_object_new_object());
  } else if (!strcmp(meth, "tools/list")) {
    do_tools_list(id, params);
  } else if (!strcmp(meth, "tools/call")) {
    do_tools_call(id, params);
  } else {
    write_str("{\"jsonrpc\":\"2.0\",\"id\":");
    write_str(id_text(id));
    write_str(",\"error\":{\"code\":-32601,\"message\":\"method not found\"}}\n");
  }
  json_object_put(m);
}

static void usage(void) __attribute__((noreturn));
static void usage(void) {
  fprintf(stderr, "usage: mcp-hostile-server --mode MODE [--fault-log FILE]; MODE is one of:");
  for (int i = 0; i < NMODES; i++) fprintf(stderr, " %s", mode_names[i]);
  fputc('\n', stderr);
  exit(2);
}

int main(int argc, char **argv) {
  int mode = -1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--mode") && i + 1 < argc) {
      i++;
      for (int k = 0; k < NMODES; k++)
        if (!strcmp(argv[i], mode_names[k])) mode = k;
      if (mode < 0) usage();
    } else if (!strcmp(argv[i], "--fault-log") && i + 1 < argc) {
      g_log = argv[++i];
    } else {
      usage();
    }
  }
  if (mode < 0) usage();
  g_mode = (enum mode)mode;
  signal(SIGPIPE, SIG_IGN);
  for (;;) {
    char *line = next_line();
    if (!line) return 0;
    handle(line);
    free(line);
  }
}
