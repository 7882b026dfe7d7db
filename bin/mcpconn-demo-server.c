/* SPDX-License-Identifier: MIT */
/*
 * mcpconn-demo-server: a small MCP server on stdio, bundled with mcpconn.
 *
 * It is the CLI's default server, a peer for the test suites and the peer
 * of the benchmarks, so it aims to be correct and cheap rather than
 * featureful.  It speaks newline-delimited JSON-RPC 2.0 on stdin/stdout
 * (compact JSON, one message per line) and logs only to stderr.
 *
 * Tools: echo, add, sleep and fail (see TOOLS_JSON below).  Prompts: greet
 * (arguments name, style) and summarize.  Resources: demo://readme,
 * demo://config.json and the template demo://echo/{text}; an unknown URI
 * is -32002 (legacy) or -32602 (modern), as each era's spec says.
 *
 * Eras: by default it speaks both MCP eras on one process, as the spec's
 * dual-era servers do.  A request whose params._meta carries
 * io.modelcontextprotocol/protocolVersion (and server/discover) is modern
 * (2026-07-28, stateless): no initialize needed, _meta must also carry
 * clientCapabilities (else -32602), a version other than 2026-07-28 gets
 * -32022 with data {supported, requested}, every result carries
 * resultType "complete", and ping does not exist.  Any other request is
 * legacy and answered exactly as a 2025-11-25 server (after initialize, or
 * not: like most servers it does not insist).  --protocol legacy makes it a
 * legacy-only server (server/discover is -32601), --protocol modern a
 * modern-only one (initialize is refused with -32022).
 *
 * Shape: one thread and one poll loop.  Input is read in large chunks and
 * split into lines; every line is parsed once with a reused json_tokener.
 * Replies are appended to an output buffer that is written with as few
 * write() calls as possible: once per batch of input, before the loop blocks
 * again, so a message is never split across writes by us.  A running `sleep`
 * is an entry in a small timer list, so other requests are answered while it
 * runs, progress notifications go out on its timer, and notifications/
 * cancelled simply drops the entry.  On stdin EOF running sleeps are
 * abandoned (the client has gone) and the server exits 0.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#ifndef VERSION
#define VERSION "0.1.0"
#endif

#define SERVER_NAME "mcpconn-demo-server"
#define DEFAULT_PROTOCOL "2025-11-25"

/* Lines longer than this (bytes, without the newline) are skipped. */
#define MAX_LINE (16u * 1024 * 1024)
/* Bytes asked of each read(). */
#define READ_CHUNK (64u * 1024)
/* Output is written once this much is buffered, even mid-batch. */
#define OUT_FLUSH_AT (256u * 1024)
/* Interval of progress notifications during sleep, ms. */
#define PROGRESS_EVERY_MS 100
/* Longest sleep accepted, ms. */
#define SLEEP_MAX_MS (10 * 60 * 1000)

/* JSON-RPC error codes. */
#define RPC_PARSE_ERROR (-32700)
#define RPC_INVALID_REQUEST (-32600)
#define RPC_METHOD_NOT_FOUND (-32601)
#define RPC_INVALID_PARAMS (-32602)
#define RPC_UNSUPPORTED_VERSION (-32022)
#define RPC_RESOURCE_NOT_FOUND (-32002)

static const char *const SUPPORTED_PROTOCOLS[] = {"2025-11-25", "2025-06-18", "2025-03-26"};

/* The modern revision and the _meta keys a modern request carries. */
#define MODERN_PROTOCOL "2026-07-28"
#define META_VERSION "io.modelcontextprotocol/protocolVersion"
#define META_CAPS "io.modelcontextprotocol/clientCapabilities"
/* ttlMs of the cacheable results (discover, tools/list): they never change. */
#define RESULT_TTL "60000"

/* --protocol: which eras are spoken. */
enum proto_mode { PROTO_DUAL, PROTO_LEGACY, PROTO_MODERN };

/* The tools/list result, parsed once at start-up. */
static const char TOOLS_JSON[] =
    "{\"tools\":["
    "{\"name\":\"echo\",\"title\":\"Echo\","
    "\"description\":\"Returns the given text unchanged.\","
    "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"text\":"
    "{\"type\":\"string\",\"description\":\"The text to return.\"}},"
    "\"required\":[\"text\"]}},"
    "{\"name\":\"add\",\"title\":\"Add\","
    "\"description\":\"Adds two numbers and returns the sum.\","
    "\"inputSchema\":{\"type\":\"object\",\"properties\":{"
    "\"a\":{\"type\":\"number\",\"description\":\"First addend.\"},"
    "\"b\":{\"type\":\"number\",\"description\":\"Second addend.\"}},"
    "\"required\":[\"a\",\"b\"]},"
    "\"outputSchema\":{\"type\":\"object\",\"properties\":{"
    "\"sum\":{\"type\":\"number\"}},\"required\":[\"sum\"]}},"
    "{\"name\":\"sleep\",\"title\":\"Sleep\","
    "\"description\":\"Waits the given number of milliseconds, then returns."
    "\\nSends notifications/progress every 100 ms when the request carries a "
    "progress token, and stops on notifications/cancelled.\","
    "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"ms\":"
    "{\"type\":\"integer\",\"minimum\":0,\"maximum\":600000,"
    "\"description\":\"How long to sleep, in milliseconds.\"}},"
    "\"required\":[\"ms\"]}},"
    "{\"name\":\"fail\",\"title\":\"Fail\","
    "\"description\":\"Always returns a tool error (isError: true).\","
    "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"message\":"
    "{\"type\":\"string\",\"description\":\"The error text to return.\"}}}}"
    "]}";

/* One running `sleep` call. */
struct sleeper {
  json_object *id;          /* the request id; owned reference */
  json_object *token;       /* params._meta.progressToken or NULL; owned */
  int64_t start_ms;         /* CLOCK_MONOTONIC */
  int64_t end_ms;           /* CLOCK_MONOTONIC */
  int64_t next_progress_ms; /* CLOCK_MONOTONIC; unused without token */
  int64_t total_ms;
  bool modern; /* the call was a modern request */
};

struct server {
  json_tokener *tok;
  json_object *tools_result; /* the tools/list result */
  const char *tools_text;    /* tools_result serialised; owned by it */
  size_t tools_len;

  char *in;                        /* bytes read but not yet consumed */
  size_t in_len;                   /* bytes held in |in| */
  size_t in_cap;                   /* allocated size of |in| */
  size_t in_scan;                  /* bytes of |in| known to hold no newline */
  bool skipping;                   /* discarding an over-long line up to its newline */
  bool no_fast;                    /* --no-fast-path */
  enum proto_mode proto;           /* --protocol */
  bool modern_reply;               /* the request being answered is modern */
  unsigned long lines, fast_lines; /* handled, and by fast_echo() */

  char *out; /* replies not yet written */
  size_t out_len;
  size_t out_cap;
  bool out_dead; /* stdout is gone (EPIPE or error); stop quietly */

  struct sleeper *sleeps; /* running sleeps, in start order */
  size_t n_sleeps;
  size_t cap_sleeps;
};

/* ---- small helpers ---------------------------------------------------- */

static void logmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void logmsg(const char *fmt, ...) {
  va_list ap;
  char line[512];
  va_start(ap, fmt);
  vsnprintf(line, sizeof(line), fmt, ap);
  va_end(ap);
  fprintf(stderr, SERVER_NAME ": %s\n", line);
}

static void *xrealloc(void *p, size_t n) {
  void *q = realloc(p, n ? n : 1);
  if (!q) {
    logmsg("out of memory");
    exit(1);
  }
  return q;
}

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Returns member |key| of |obj| when it exists and has type |type|. */
static json_object *get_typed(json_object *obj, const char *key, json_type type) {
  json_object *v;
  if (!obj || !json_object_object_get_ex(obj, key, &v)) return NULL;
  return json_object_is_type(v, type) ? v : NULL;
}

static bool is_valid_id(json_object *id) {
  return json_object_is_type(id, json_type_int) || json_object_is_type(id, json_type_string);
}

static bool id_equal(json_object *a, json_object *b) {
  if (json_object_is_type(a, json_type_string) && json_object_is_type(b, json_type_string)) {
    int la = json_object_get_string_len(a);
    return la == json_object_get_string_len(b) &&
           memcmp(json_object_get_string(a), json_object_get_string(b), (size_t)la) == 0;
  }
  if (json_object_is_type(a, json_type_int) && json_object_is_type(b, json_type_int))
    return json_object_get_int64(a) == json_object_get_int64(b) &&
           json_object_get_uint64(a) == json_object_get_uint64(b);
  return false;
}

/* ---- output ----------------------------------------------------------- */

/* Writes the whole output buffer to stdout; marks stdout dead on failure. */
static void flush_out(struct server *s) {
  size_t off = 0;
  while (off < s->out_len && !s->out_dead) {
    ssize_t n = write(STDOUT_FILENO, s->out + off, s->out_len - off);
    if (n > 0) {
      off += (size_t)n;
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      /* stdout was handed to us non-blocking: wait until it drains. */
      struct pollfd pfd = {STDOUT_FILENO, POLLOUT, 0};
      (void)poll(&pfd, 1, -1);
    } else {
      if (n < 0 && errno != EPIPE) logmsg("write: %s", strerror(errno));
      s->out_dead = true;
    }
  }
  s->out_len = 0;
}

#define SER_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

/* Appends |len| bytes to the output buffer. */
static void out_append(struct server *s, const char *data, size_t len) {
  if (s->out_len + len > s->out_cap) {
    size_t cap = s->out_cap ? s->out_cap : 4096;
    while (cap < s->out_len + len) cap *= 2;
    s->out = xrealloc(s->out, cap);
    s->out_cap = cap;
  }
  memcpy(s->out + s->out_len, data, len);
  s->out_len += len;
}

static void out_append_str(struct server *s, const char *str) { out_append(s, str, strlen(str)); }

static void out_append_json(struct server *s, json_object *obj) {
  size_t len;
  const char *text = json_object_to_json_string_length(obj, SER_FLAGS, &len);
  out_append(s, text, len);
}

/* Ends the message being appended: one line, written in the next flush. */
static void out_end_message(struct server *s) {
  out_append(s, "\n", 1);
  if (s->out_len >= OUT_FLUSH_AT) flush_out(s);
}

/* Serialises |msg| as one line into the output buffer and drops |msg|. */
static void send_msg(struct server *s, json_object *msg) {
  out_append_json(s, msg);
  out_end_message(s);
  json_object_put(msg);
}

/*
 * The envelope is written by hand around the serialised id and payload:
 * cheaper than building a json-c object for every reply.
 */
static void begin_reply(struct server *s, json_object *id) {
  out_append_str(s, "{\"jsonrpc\":\"2.0\",\"id\":");
  if (id) out_append_json(s, id);
  else out_append_str(s, "null");
}

/* Sends |text| (serialised JSON) as the result for request |id|. */
static void send_result_text(struct server *s, json_object *id, const char *text, size_t len) {
  begin_reply(s, id);
  out_append_str(s, ",\"result\":");
  out_append(s, text, len);
  out_append(s, "}", 1);
  out_end_message(s);
}

/* Sends a result for request |id|; takes ownership of |result|. */
static void send_result(struct server *s, json_object *id, json_object *result) {
  begin_reply(s, id);
  out_append_str(s, ",\"result\":");
  out_append_json(s, result);
  out_append(s, "}", 1);
  out_end_message(s);
  json_object_put(result);
}

/* Sends a JSON-RPC error for |id| (NULL: id null) with |data| (owned;
 * NULL for none). */
static void send_error_data(struct server *s, json_object *id, int code, const char *message,
                            json_object *data) {
  json_object *err = json_object_new_object();
  json_object_object_add(err, "code", json_object_new_int(code));
  json_object_object_add(err, "message", json_object_new_string(message));
  if (data) json_object_object_add(err, "data", data);
  begin_reply(s, id);
  out_append_str(s, ",\"error\":");
  out_append_json(s, err);
  out_append(s, "}", 1);
  out_end_message(s);
  json_object_put(err);
}

/* Sends a JSON-RPC error for |id| (NULL: id null). */
static void send_error(struct server *s, json_object *id, int code, const char *message) {
  send_error_data(s, id, code, message, NULL);
}

/* Appends |len| bytes as a JSON string literal (quotes included). */
static void out_append_json_string(struct server *s, const char *str, size_t len) {
  static const char hex[] = "0123456789abcdef";
  out_append(s, "\"", 1);
  size_t run = 0; /* start of the bytes not yet appended */
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)str[i];
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out_append(s, str + run, i - run);
    run = i + 1;
    char esc[6] = {'\\', (char)c, 0, 0, 0, 0};
    size_t n = 2;
    switch (c) {
    case '"':
    case '\\': break;
    case '\n': esc[1] = 'n'; break;
    case '\r': esc[1] = 'r'; break;
    case '\t': esc[1] = 't'; break;
    case '\b': esc[1] = 'b'; break;
    case '\f': esc[1] = 'f'; break;
    default:
      esc[1] = 'u';
      esc[2] = esc[3] = '0';
      esc[4] = hex[c >> 4];
      esc[5] = hex[c & 15];
      n = 6;
    }
    out_append(s, esc, n);
  }
  out_append(s, str + run, len - run);
  out_append(s, "\"", 1);
}

/*
 * What a tool produced: a CallToolResult with one text item, and for `add`
 * a structuredContent sum.  It is written by hand, without building a json-c
 * tree, because tool calls are the benchmark's hot path.
 */
struct tool_result {
  const char *text; /* borrowed: a literal, |buf|, or the request's JSON */
  size_t len;
  bool is_error;
  const char *sum; /* a JSON number for structuredContent.sum, or NULL */
  char buf[64];
  char sum_buf[64];
};

static void set_text(struct tool_result *r, const char *text, size_t len, bool is_error) {
  r->text = text;
  r->len = len;
  r->is_error = is_error;
}

static void set_error(struct tool_result *r, const char *text) {
  set_text(r, text, strlen(text), true);
}

/* The rest of a tool's reply, after the id. */
static void tool_result_tail(struct server *s, const struct tool_result *r) {
  out_append_str(s, ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":");
  out_append_json_string(s, r->text, r->len);
  out_append_str(s, "}]");
  if (r->sum) {
    out_append_str(s, ",\"structuredContent\":{\"sum\":");
    out_append_str(s, r->sum);
    out_append(s, "}", 1);
  }
  if (r->is_error) out_append_str(s, ",\"isError\":true");
  if (s->modern_reply) out_append_str(s, ",\"resultType\":\"complete\"");
  out_append(s, "}}", 2);
  out_end_message(s);
}

static void send_tool_result(struct server *s, json_object *id, const struct tool_result *r) {
  begin_reply(s, id);
  tool_result_tail(s, r);
}

/* ---- tools ------------------------------------------------------------ */

static void tool_echo(json_object *args, struct tool_result *r) {
  json_object *text = get_typed(args, "text", json_type_string);
  if (!text) {
    set_error(r, "echo: argument 'text' must be a string");
    return;
  }
  set_text(r, json_object_get_string(text), (size_t)json_object_get_string_len(text), false);
}

/* Reads a JSON number that fits an int64 exactly; false otherwise. */
static bool get_exact_int(json_object *v, int64_t *out) {
  if (!json_object_is_type(v, json_type_int)) return false;
  int64_t i = json_object_get_int64(v);
  if (i == INT64_MAX && json_object_get_uint64(v) != (uint64_t)INT64_MAX)
    return false; /* a uint64 beyond INT64_MAX, or clamped */
  *out = i;
  return true;
}

/*
 * Formats |d| (finite) the way people write numbers: integers without a
 * fraction ("5"), other values with the fewest of 15..17 significant digits
 * that read back as the same double.
 */
static void format_double(double d, char *buf, size_t size) {
  if (d > -9007199254740992.0 && d < 9007199254740992.0 && d == (double)(int64_t)d) {
    snprintf(buf, size, "%" PRId64, (int64_t)d);
    return;
  }
  for (int prec = 15; prec <= 17; prec++) {
    snprintf(buf, size, "%.*g", prec, d);
    if (strtod(buf, NULL) == d) return;
  }
}

static void tool_add(json_object *args, struct tool_result *r) {
  json_object *a = NULL, *b = NULL;
  if (args) {
    json_object_object_get_ex(args, "a", &a);
    json_object_object_get_ex(args, "b", &b);
  }
  bool a_num = json_object_is_type(a, json_type_int) || json_object_is_type(a, json_type_double);
  bool b_num = json_object_is_type(b, json_type_int) || json_object_is_type(b, json_type_double);
  if (!a_num || !b_num) {
    set_error(r, "add: arguments 'a' and 'b' must both be numbers");
    return;
  }
  int64_t ia, ib, is;
  if (get_exact_int(a, &ia) && get_exact_int(b, &ib) && !__builtin_add_overflow(ia, ib, &is)) {
    snprintf(r->buf, sizeof(r->buf), "%" PRId64, is);
  } else {
    double d = json_object_get_double(a) + json_object_get_double(b);
    if (!(d - d == 0.0)) { /* NaN or infinite: not a JSON number */
      set_error(r, "add: the sum is not a finite number");
      return;
    }
    format_double(d, r->buf, sizeof(r->buf));
  }
  /* Both spellings ("5", "0.30000000000000004", "1e+300") are JSON numbers. */
  set_text(r, r->buf, strlen(r->buf), false);
  memcpy(r->sum_buf, r->buf, sizeof(r->buf));
  r->sum = r->sum_buf;
}

static void tool_fail(json_object *args, struct tool_result *r) {
  json_object *m = NULL;
  if (args && json_object_object_get_ex(args, "message", &m) &&
      !json_object_is_type(m, json_type_string)) {
    set_error(r, "fail: argument 'message' must be a string");
  } else if (!m) {
    set_error(r, "the fail tool always fails");
  } else {
    set_text(r, json_object_get_string(m), (size_t)json_object_get_string_len(m), true);
  }
}

static void send_slept(struct server *s, json_object *id, int64_t ms) {
  struct tool_result r = {0};
  snprintf(r.buf, sizeof(r.buf), "slept %" PRId64 " ms", ms);
  set_text(&r, r.buf, strlen(r.buf), false);
  send_tool_result(s, id, &r);
}

/* Starts a sleep, or answers at once when it needs no waiting or is invalid. */
static void tool_sleep(struct server *s, json_object *id, json_object *params, json_object *args) {
  json_object *v = NULL;
  int64_t ms = -1;
  if (args) json_object_object_get_ex(args, "ms", &v);
  if (json_object_is_type(v, json_type_int)) {
    if (!get_exact_int(v, &ms)) ms = -1;
  } else if (json_object_is_type(v, json_type_double)) {
    double d = json_object_get_double(v);
    if (d >= 0 && d <= SLEEP_MAX_MS && d == (double)(int64_t)d) ms = (int64_t)d;
  }
  if (ms < 0 || ms > SLEEP_MAX_MS) {
    struct tool_result r = {0};
    set_error(&r, "sleep: argument 'ms' must be an integer from 0 to 600000");
    send_tool_result(s, id, &r);
    return;
  }
  if (ms == 0) {
    send_slept(s, id, 0);
    return;
  }

  json_object *meta = get_typed(params, "_meta", json_type_object);
  json_object *token = NULL;
  if (meta && json_object_object_get_ex(meta, "progressToken", &token) && !is_valid_id(token))
    token = NULL; /* progress tokens are strings or integers */

  if (s->n_sleeps == s->cap_sleeps) {
    s->cap_sleeps = s->cap_sleeps ? s->cap_sleeps * 2 : 8;
    s->sleeps = xrealloc(s->sleeps, s->cap_sleeps * sizeof(*s->sleeps));
  }
  struct sleeper *sl = &s->sleeps[s->n_sleeps++];
  sl->id = json_object_get(id);
  sl->token = token ? json_object_get(token) : NULL;
  sl->start_ms = now_ms();
  sl->end_ms = sl->start_ms + ms;
  sl->next_progress_ms = sl->start_ms + PROGRESS_EVERY_MS;
  sl->total_ms = ms;
  sl->modern = s->modern_reply;
}

static void remove_sleeper(struct server *s, size_t i) {
  json_object_put(s->sleeps[i].id);
  json_object_put(s->sleeps[i].token);
  memmove(&s->sleeps[i], &s->sleeps[i + 1], (s->n_sleeps - i - 1) * sizeof(*s->sleeps));
  s->n_sleeps--;
}

static void send_progress(struct server *s, struct sleeper *sl, int64_t now) {
  json_object *params = json_object_new_object();
  json_object_object_add(params, "progressToken", json_object_get(sl->token));
  json_object_object_add(params, "progress", json_object_new_int64(now - sl->start_ms));
  json_object_object_add(params, "total", json_object_new_int64(sl->total_ms));
  json_object_object_add(params, "message", json_object_new_string("sleeping"));
  json_object *msg = json_object_new_object();
  json_object_object_add(msg, "jsonrpc", json_object_new_string("2.0"));
  json_object_object_add(msg, "method", json_object_new_string("notifications/progress"));
  json_object_object_add(msg, "params", params);
  send_msg(s, msg);
}

/* Finishes due sleeps and sends due progress notifications. */
static void run_timers(struct server *s) {
  if (!s->n_sleeps) return;
  int64_t now = now_ms();
  for (size_t i = 0; i < s->n_sleeps;) {
    struct sleeper *sl = &s->sleeps[i];
    if (now >= sl->end_ms) {
      s->modern_reply = sl->modern;
      send_slept(s, sl->id, sl->total_ms);
      remove_sleeper(s, i);
      continue;
    }
    if (sl->token && now >= sl->next_progress_ms) {
      send_progress(s, sl, now);
      while (sl->next_progress_ms <= now) sl->next_progress_ms += PROGRESS_EVERY_MS;
    }
    i++;
  }
}

/* Milliseconds until the next timer is due; -1 when none is running. */
static int next_timeout(const struct server *s) {
  if (!s->n_sleeps) return -1;
  int64_t due = INT64_MAX;
  for (size_t i = 0; i < s->n_sleeps; i++) {
    const struct sleeper *sl = &s->sleeps[i];
    if (sl->end_ms < due) due = sl->end_ms;
    if (sl->token && sl->next_progress_ms < due) due = sl->next_progress_ms;
  }
  int64_t wait = due - now_ms();
  return wait < 0 ? 0 : (int)wait;
}

/* ---- methods ---------------------------------------------------------- */

#define INSTRUCTIONS \
  "A demo server bundled with mcpconn. Tools: echo, add, sleep (with progress and cancellation) " \
  "and fail. Prompts: greet, summarize. Resources: demo://readme, demo://config.json and the " \
  "template demo://echo/{text}."

/* The capabilities both eras advertise (initialize, server/discover): what
 * this server has, none of which ever changes. */
static json_object *build_capabilities(void) {
  json_object *caps = json_object_new_object();
  json_object *tools = json_object_new_object();
  json_object_object_add(tools, "listChanged", json_object_new_boolean(0));
  json_object_object_add(caps, "tools", tools);
  json_object *prompts = json_object_new_object();
  json_object_object_add(prompts, "listChanged", json_object_new_boolean(0));
  json_object_object_add(caps, "prompts", prompts);
  json_object *resources = json_object_new_object();
  json_object_object_add(resources, "subscribe", json_object_new_boolean(0));
  json_object_object_add(resources, "listChanged", json_object_new_boolean(0));
  json_object_object_add(caps, "resources", resources);
  return caps;
}

static void do_initialize(struct server *s, json_object *id, json_object *params) {
  json_object *v = get_typed(params, "protocolVersion", json_type_string);
  if (!v) {
    send_error(s, id, RPC_INVALID_PARAMS, "Invalid params: protocolVersion must be a string");
    return;
  }
  const char *version = DEFAULT_PROTOCOL;
  for (size_t i = 0; i < sizeof(SUPPORTED_PROTOCOLS) / sizeof(*SUPPORTED_PROTOCOLS); i++)
    if (strcmp(json_object_get_string(v), SUPPORTED_PROTOCOLS[i]) == 0)
      version = SUPPORTED_PROTOCOLS[i];

  json_object *caps = build_capabilities();
  json_object *info = json_object_new_object();
  json_object_object_add(info, "name", json_object_new_string(SERVER_NAME));
  json_object_object_add(info, "version", json_object_new_string(VERSION));
  json_object *result = json_object_new_object();
  json_object_object_add(result, "protocolVersion", json_object_new_string(version));
  json_object_object_add(result, "capabilities", caps);
  json_object_object_add(result, "serverInfo", info);
  json_object_object_add(result, "instructions", json_object_new_string(INSTRUCTIONS));
  send_result(s, id, result);
}

static void do_tools_list(struct server *s, json_object *id, json_object *params) {
  json_object *cursor;
  if (params && json_object_object_get_ex(params, "cursor", &cursor) && cursor) {
    /* There is one page, so no cursor we could have issued is valid. */
    send_error(s, id, RPC_INVALID_PARAMS, "Invalid params: unknown cursor");
    return;
  }
  if (!s->modern_reply) {
    send_result_text(s, id, s->tools_text, s->tools_len);
    return;
  }
  /* A modern tools/list is cacheable: resultType, ttlMs and cacheScope
   * before the tools ({"tools":[...]} without its first brace). */
  begin_reply(s, id);
  out_append_str(s, ",\"result\":{\"resultType\":\"complete\",\"ttlMs\":" RESULT_TTL
                    ",\"cacheScope\":\"public\",");
  out_append(s, s->tools_text + 1, s->tools_len - 1);
  out_append(s, "}", 1);
  out_end_message(s);
}

/* The versions this server speaks, newest first, as a JSON array. */
static json_object *supported_versions(const struct server *s) {
  json_object *a = json_object_new_array();
  if (s->proto != PROTO_LEGACY) json_object_array_add(a, json_object_new_string(MODERN_PROTOCOL));
  if (s->proto != PROTO_MODERN)
    for (size_t i = 0; i < sizeof(SUPPORTED_PROTOCOLS) / sizeof(*SUPPORTED_PROTOCOLS); i++)
      json_object_array_add(a, json_object_new_string(SUPPORTED_PROTOCOLS[i]));
  return a;
}

/* -32022 for a request at |requested| (NULL: none given). */
static void send_unsupported(struct server *s, json_object *id, const char *requested,
                             const char *message) {
  json_object *data = json_object_new_object();
  json_object_object_add(data, "supported", supported_versions(s));
  json_object_object_add(data, "requested",
                         requested ? json_object_new_string(requested) : json_object_new_null());
  send_error_data(s, id, RPC_UNSUPPORTED_VERSION, message, data);
}

/* A modern request's _meta is well formed and at our version; otherwise
 * the error has been sent and false is returned. */
static bool modern_meta_ok(struct server *s, json_object *id, json_object *params) {
  json_object *meta = get_typed(params, "_meta", json_type_object);
  json_object *v = get_typed(meta, META_VERSION, json_type_string);
  if (!v || !get_typed(meta, META_CAPS, json_type_object)) {
    send_error(s, id, RPC_INVALID_PARAMS,
               "Invalid params: a " MODERN_PROTOCOL " request needs params._meta with "
               "\"" META_VERSION "\" (a string) and \"" META_CAPS "\" (an object)");
    return false;
  }
  if (strcmp(json_object_get_string(v), MODERN_PROTOCOL) != 0) {
    send_unsupported(s, id, json_object_get_string(v), "Unsupported protocol version");
    return false;
  }
  return true;
}

static void do_discover(struct server *s, json_object *id) {
  json_object *caps = build_capabilities();
  json_object *info = json_object_new_object();
  json_object_object_add(info, "name", json_object_new_string(SERVER_NAME));
  json_object_object_add(info, "version", json_object_new_string(VERSION));
  json_object *meta = json_object_new_object();
  json_object_object_add(meta, "io.modelcontextprotocol/serverInfo", info);
  json_object *result = json_object_new_object();
  json_object_object_add(result, "resultType", json_object_new_string("complete"));
  json_object_object_add(result, "ttlMs", json_object_new_int(atoi(RESULT_TTL)));
  json_object_object_add(result, "cacheScope", json_object_new_string("public"));
  json_object_object_add(result, "supportedVersions", supported_versions(s));
  json_object_object_add(result, "capabilities", caps);
  json_object_object_add(result, "instructions", json_object_new_string(INSTRUCTIONS));
  json_object_object_add(result, "_meta", meta);
  send_result(s, id, result);
}

static void do_tools_call(struct server *s, json_object *id, json_object *params) {
  json_object *name = get_typed(params, "name", json_type_string);
  if (!name) {
    send_error(s, id, RPC_INVALID_PARAMS, "Invalid params: name must be a string");
    return;
  }
  json_object *args = NULL;
  if (json_object_object_get_ex(params, "arguments", &args) && args &&
      !json_object_is_type(args, json_type_object)) {
    send_error(s, id, RPC_INVALID_PARAMS, "Invalid params: arguments must be an object");
    return;
  }
  const char *n = json_object_get_string(name);
  struct tool_result r = {0};
  if (strcmp(n, "echo") == 0) {
    tool_echo(args, &r);
    send_tool_result(s, id, &r);
  } else if (strcmp(n, "add") == 0) {
    tool_add(args, &r);
    send_tool_result(s, id, &r);
  } else if (strcmp(n, "sleep") == 0) {
    tool_sleep(s, id, params, args);
  } else if (strcmp(n, "fail") == 0) {
    tool_fail(args, &r);
    send_tool_result(s, id, &r);
  } else {
    char msg[256];
    snprintf(msg, sizeof(msg), "Unknown tool: %.200s", n);
    send_error(s, id, RPC_INVALID_PARAMS, msg);
  }
}

/* ---- prompts and resources --------------------------------------------- */

/* The lists, as their results (one page each; never changing). */
static const char PROMPTS_JSON[] =
    "{\"prompts\":["
    "{\"name\":\"greet\",\"title\":\"Greet\","
    "\"description\":\"Asks for a greeting for someone.\","
    "\"arguments\":[{\"name\":\"name\",\"description\":\"Who to greet.\",\"required\":true},"
    "{\"name\":\"style\",\"description\":\"formal or casual (default: casual).\","
    "\"required\":false}]},"
    "{\"name\":\"summarize\",\"title\":\"Summarize\","
    "\"description\":\"Asks for a one-sentence summary of demo://readme.\"}"
    "]}";
static const char RESOURCES_JSON[] =
    "{\"resources\":["
    "{\"uri\":\"demo://readme\",\"name\":\"readme\",\"title\":\"Read me\","
    "\"description\":\"What this server is.\",\"mimeType\":\"text/plain\"},"
    "{\"uri\":\"demo://config.json\",\"name\":\"config\","
    "\"description\":\"The server's settings.\",\"mimeType\":\"application/json\"}"
    "]}";
static const char TEMPLATES_JSON[] =
    "{\"resourceTemplates\":["
    "{\"uriTemplate\":\"demo://echo/{text}\",\"name\":\"echo\","
    "\"description\":\"Reads back the text in the URI.\",\"mimeType\":\"text/plain\"}"
    "]}";
#define README_TEXT \
  "mcpconn-demo-server is a small MCP server bundled with mcpconn.\n" \
  "It has four tools, two prompts and three resources.\n"
#define ECHO_PREFIX "demo://echo/"

/* Sends |text| (one of the lists above) for a list request; modern results
 * carry resultType. */
static void send_list(struct server *s, json_object *id, json_object *params, const char *text) {
  json_object *cursor;
  if (params && json_object_object_get_ex(params, "cursor", &cursor) && cursor) {
    send_error(s, id, RPC_INVALID_PARAMS, "Invalid params: unknown cursor");
    return;
  }
  json_object *result = json_tokener_parse(text);
  if (s->modern_reply)
    json_object_object_add(result, "resultType", json_object_new_string("complete"));
  send_result(s, id, result);
}

/* A result of one user message holding |text|. */
static json_object *prompt_result(const char *description, const char *text) {
  json_object *content = json_object_new_object();
  json_object_object_add(content, "type", json_object_new_string("text"));
  json_object_object_add(content, "text", json_object_new_string(text));
  json_object *msg = json_object_new_object();
  json_object_object_add(msg, "role", json_object_new_string("user"));
  json_object_object_add(msg, "content", content);
  json_object *messages = json_object_new_array();
  json_object_array_add(messages, msg);
  json_object *result = json_object_new_object();
  json_object_object_add(result, "description", json_object_new_string(description));
  json_object_object_add(result, "messages", messages);
  return result;
}

static void do_prompts_get(struct server *s, json_object *id, json_object *params) {
  json_object *name = get_typed(params, "name", json_type_string);
  if (!name) {
    send_error(s, id, RPC_INVALID_PARAMS, "Invalid params: name must be a string");
    return;
  }
  json_object *args = NULL;
  if (json_object_object_get_ex(params, "arguments", &args) && args) {
    if (!json_object_is_type(args, json_type_object)) {
      send_error(s, id, RPC_INVALID_PARAMS, "Invalid params: arguments must be an object");
      return;
    }
    json_object_object_foreach(args, key, val) {
      (void)key;
      if (!json_object_is_type(val, json_type_string)) {
        send_error(s, id, RPC_INVALID_PARAMS, "Invalid params: prompt arguments are strings");
        return;
      }
    }
  }
  const char *n = json_object_get_string(name);
  json_object *result;
  char msg[512];
  if (strcmp(n, "greet") == 0) {
    json_object *who = get_typed(args, "name", json_type_string);
    json_object *style = get_typed(args, "style", json_type_string);
    const char *st = style ? json_object_get_string(style) : "casual";
    if (!who) {
      send_error(s, id, RPC_INVALID_PARAMS,
                 "Invalid params: prompt greet needs the argument 'name'");
      return;
    }
    if (strcmp(st, "formal") != 0 && strcmp(st, "casual") != 0) {
      send_error(s, id, RPC_INVALID_PARAMS, "Invalid params: style must be 'formal' or 'casual'");
      return;
    }
    snprintf(msg, sizeof(msg), "Write a %s greeting for %.400s.", st, json_object_get_string(who));
    result = prompt_result("A greeting", msg);
  } else if (strcmp(n, "summarize") == 0) {
    result = prompt_result("A summary of demo://readme",
                           "Summarize this text in one sentence:\n\n" README_TEXT);
  } else {
    snprintf(msg, sizeof(msg), "Unknown prompt: %.200s", n);
    send_error(s, id, RPC_INVALID_PARAMS, msg);
    return;
  }
  if (s->modern_reply)
    json_object_object_add(result, "resultType", json_object_new_string("complete"));
  send_result(s, id, result);
}

static void do_resources_read(struct server *s, json_object *id, json_object *params) {
  json_object *uri = get_typed(params, "uri", json_type_string);
  if (!uri) {
    send_error(s, id, RPC_INVALID_PARAMS, "Invalid params: uri must be a string");
    return;
  }
  const char *u = json_object_get_string(uri);
  const char *mime = "text/plain", *text = NULL;
  if (strcmp(u, "demo://readme") == 0) {
    text = README_TEXT;
  } else if (strcmp(u, "demo://config.json") == 0) {
    mime = "application/json";
    text = "{\"greeting\": \"hello\", \"sleepMaxMs\": 600000}";
  } else if (strncmp(u, ECHO_PREFIX, strlen(ECHO_PREFIX)) == 0 && u[strlen(ECHO_PREFIX)]) {
    text = u + strlen(ECHO_PREFIX);
  } else {
    /* Not found: -32002 up to 2025-11-25, -32602 from 2026-07-28. */
    char msg[256];
    snprintf(msg, sizeof(msg), "Resource not found: %.200s", u);
    json_object *data = json_object_new_object();
    json_object_object_add(data, "uri", json_object_new_string(u));
    send_error_data(s, id, s->modern_reply ? RPC_INVALID_PARAMS : RPC_RESOURCE_NOT_FOUND, msg,
                    data);
    return;
  }
  json_object *item = json_object_new_object();
  json_object_object_add(item, "uri", json_object_new_string(u));
  json_object_object_add(item, "mimeType", json_object_new_string(mime));
  json_object_object_add(item, "text", json_object_new_string(text));
  json_object *contents = json_object_new_array();
  json_object_array_add(contents, item);
  json_object *result = json_object_new_object();
  json_object_object_add(result, "contents", contents);
  if (s->modern_reply)
    json_object_object_add(result, "resultType", json_object_new_string("complete"));
  send_result(s, id, result);
}

static void do_notification(struct server *s, const char *method, json_object *params) {
  if (strcmp(method, "notifications/cancelled") == 0) {
    json_object *rid;
    if (!params || !json_object_object_get_ex(params, "requestId", &rid) || !is_valid_id(rid))
      return; /* malformed cancellations are ignored, as the spec asks */
    for (size_t i = 0; i < s->n_sleeps;) {
      if (id_equal(s->sleeps[i].id, rid)) remove_sleeper(s, i);
      else i++;
    }
  }
  /* notifications/initialized and anything else need nothing from us. */
}

static void dispatch(struct server *s, json_object *msg) {
  if (!json_object_is_type(msg, json_type_object)) {
    send_error(s, NULL, RPC_INVALID_REQUEST,
               json_object_is_type(msg, json_type_array)
                   ? "Invalid Request: batches are not supported"
                   : "Invalid Request: not a JSON object");
    return;
  }
  json_object *id = NULL;
  bool has_id = json_object_object_get_ex(msg, "id", &id);
  json_object *reply_id = has_id && is_valid_id(id) ? id : NULL;

  json_object *jsonrpc = get_typed(msg, "jsonrpc", json_type_string);
  if (!jsonrpc || strcmp(json_object_get_string(jsonrpc), "2.0") != 0) {
    send_error(s, reply_id, RPC_INVALID_REQUEST, "Invalid Request: jsonrpc must be \"2.0\"");
    return;
  }
  json_object *mobj;
  if (!json_object_object_get_ex(msg, "method", &mobj)) {
    if (has_id && (json_object_object_get_ex(msg, "result", NULL) ||
                   json_object_object_get_ex(msg, "error", NULL))) {
      logmsg("ignoring a response: this server sends no requests");
      return;
    }
    send_error(s, reply_id, RPC_INVALID_REQUEST, "Invalid Request: no method");
    return;
  }
  if (!json_object_is_type(mobj, json_type_string)) {
    send_error(s, reply_id, RPC_INVALID_REQUEST, "Invalid Request: method must be a string");
    return;
  }
  const char *method = json_object_get_string(mobj);
  json_object *params = NULL;
  bool params_ok = !json_object_object_get_ex(msg, "params", &params) ||
                   json_object_is_type(params, json_type_object);

  if (!has_id) {
    if (params_ok) do_notification(s, method, params);
    return;
  }
  if (!reply_id) {
    send_error(s, NULL, RPC_INVALID_REQUEST, "Invalid Request: id must be a string or an integer");
    return;
  }

  /* Which era the request is (see the head comment). */
  bool initialize = strcmp(method, "initialize") == 0;
  bool discover = strcmp(method, "server/discover") == 0;
  bool modern = s->proto == PROTO_MODERN;
  if (s->proto == PROTO_DUAL && !initialize) {
    json_object *meta = params_ok ? get_typed(params, "_meta", json_type_object) : NULL;
    modern = discover || (meta && json_object_object_get_ex(meta, META_VERSION, NULL));
  }
  s->modern_reply = modern;

  static const char *const both[] = {"tools/list",
                                     "tools/call",
                                     "prompts/list",
                                     "prompts/get",
                                     "resources/list",
                                     "resources/read",
                                     "resources/templates/list"};
  bool known = modern ? discover || initialize : initialize || strcmp(method, "ping") == 0;
  for (size_t i = 0; !known && i < sizeof(both) / sizeof(*both); i++)
    known = strcmp(method, both[i]) == 0;
  if (!known) {
    send_error(s, id, RPC_METHOD_NOT_FOUND, "Method not found");
    return;
  }
  if (!params_ok) {
    send_error(s, id, RPC_INVALID_PARAMS, "Invalid params: params must be an object");
    return;
  }
  if (modern && initialize) { /* --protocol modern: there is no handshake */
    json_object *v = get_typed(params, "protocolVersion", json_type_string);
    send_unsupported(s, id, v ? json_object_get_string(v) : NULL,
                     "Unsupported protocol version: this server speaks only " MODERN_PROTOCOL
                     " (no initialize)");
    return;
  }
  if (modern && !modern_meta_ok(s, id, params)) return;
  if (discover) do_discover(s, id);
  else if (strcmp(method, "ping") == 0) send_result(s, id, json_object_new_object());
  else if (strcmp(method, "tools/call") == 0) do_tools_call(s, id, params);
  else if (strcmp(method, "tools/list") == 0) do_tools_list(s, id, params);
  else if (strcmp(method, "prompts/list") == 0) send_list(s, id, params, PROMPTS_JSON);
  else if (strcmp(method, "prompts/get") == 0) do_prompts_get(s, id, params);
  else if (strcmp(method, "resources/list") == 0) send_list(s, id, params, RESOURCES_JSON);
  else if (strcmp(method, "resources/templates/list") == 0)
    send_list(s, id, params, TEMPLATES_JSON);
  else if (strcmp(method, "resources/read") == 0) do_resources_read(s, id, params);
  else do_initialize(s, id, params);
}

/* ---- fast path: tools/call of echo without json-c ---------------------- */

/*
 * The benchmarks call echo in a loop, and json-c 0.16 spends about twice as
 * long switching locales on every parse as parsing.  fast_echo() answers a
 * plain tools/call of echo from a scan of the line instead: it validates
 * the whole line as strict JSON (RFC 8259) and picks out the few members it
 * needs.  Whatever it is not sure of (a member it uses that is repeated or
 * has an escaped name, an escape in the text, a \u escape or a number with
 * an exponent or more than 18 digits anywhere, nesting past
 * FAST_MAX_DEPTH, an id that is not a plain integer, any other method or
 * tool) it leaves to the general path, which gives the same answer.
 */
#define FAST_MAX_DEPTH 16

struct fscan {
  const char *p, *end;
  int depth;
};

struct fspan {
  const char *p; /* the value's text, or NULL when absent */
  size_t n;
};

static void f_ws(struct fscan *f) {
  while (f->p < f->end && (*f->p == ' ' || *f->p == '\t' || *f->p == '\n' || *f->p == '\r')) f->p++;
}

/* A string; *esc tells whether it had escapes. */
static bool f_string(struct fscan *f, bool *esc) {
  if (f->p >= f->end || *f->p != '"') return false;
  f->p++;
  *esc = false;
  while (f->p < f->end) {
    unsigned char c = (unsigned char)*f->p++;
    if (c == '"') return true;
    if (c < 0x20) return false;
    if (c == '\\') {
      if (f->p >= f->end) return false;
      c = (unsigned char)*f->p++;
      if (!(c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' || c == 'r' ||
            c == 't'))
        return false; /* \u included: left to json-c */
      *esc = true;
    }
  }
  return false;
}

static bool f_digits(struct fscan *f) {
  const char *start = f->p;
  while (f->p < f->end && *f->p >= '0' && *f->p <= '9') f->p++;
  return f->p > start;
}

/* -?(0|[1-9][0-9]*)(.[0-9]+)?, at most 18 digits before the point. */
static bool f_number(struct fscan *f) {
  if (f->p < f->end && *f->p == '-') f->p++;
  const char *start = f->p;
  if (!f_digits(f) || f->p - start > 18 || (*start == '0' && f->p - start > 1)) return false;
  if (f->p < f->end && *f->p == '.') {
    f->p++;
    if (!f_digits(f)) return false;
  }
  return f->p >= f->end || (*f->p != 'e' && *f->p != 'E');
}

static bool f_literal(struct fscan *f, const char *lit) {
  size_t n = strlen(lit);
  if ((size_t)(f->end - f->p) < n || memcmp(f->p, lit, n) != 0) return false;
  f->p += n;
  return true;
}

static bool f_object(struct fscan *f, const char *const *keys, struct fspan *vals, int nkeys);

static bool f_value(struct fscan *f) {
  f_ws(f);
  if (f->p >= f->end) return false;
  bool esc;
  switch (*f->p) {
  case '{': return f_object(f, NULL, NULL, 0);
  case '"': return f_string(f, &esc);
  case 't': return f_literal(f, "true");
  case 'f': return f_literal(f, "false");
  case 'n': return f_literal(f, "null");
  case '[':
    if (++f->depth > FAST_MAX_DEPTH) return false;
    f->p++;
    f_ws(f);
    if (f->p < f->end && *f->p == ']') {
      f->p++;
      f->depth--;
      return true;
    }
    for (;;) {
      if (!f_value(f)) return false;
      f_ws(f);
      if (f->p >= f->end) return false;
      if (*f->p == ']') {
        f->p++;
        f->depth--;
        return true;
      }
      if (*f->p++ != ',') return false;
    }
  default: return f_number(f);
  }
}

/* An object; the values of members named in |keys| go to |vals|. */
static bool f_object(struct fscan *f, const char *const *keys, struct fspan *vals, int nkeys) {
  if (f->p >= f->end || *f->p != '{' || ++f->depth > FAST_MAX_DEPTH) return false;
  f->p++;
  f_ws(f);
  if (f->p < f->end && *f->p == '}') {
    f->p++;
    f->depth--;
    return true;
  }
  for (;;) {
    f_ws(f);
    const char *key = f->p + 1;
    bool esc;
    if (!f_string(f, &esc)) return false;
    size_t klen = (size_t)(f->p - 1 - key);
    f_ws(f);
    if (f->p >= f->end || *f->p++ != ':') return false;
    f_ws(f);
    const char *val = f->p;
    if (!f_value(f)) return false;
    if (esc && nkeys) return false; /* it might spell one of ours */
    for (int i = 0; i < nkeys; i++) {
      if (strlen(keys[i]) == klen && memcmp(keys[i], key, klen) == 0) {
        if (vals[i].p) return false; /* repeated: json-c keeps the last */
        vals[i].p = val;
        vals[i].n = (size_t)(f->p - val);
      }
    }
    f_ws(f);
    if (f->p >= f->end) return false;
    if (*f->p == '}') {
      f->p++;
      f->depth--;
      return true;
    }
    if (*f->p++ != ',') return false;
  }
}

/* The members |keys| of the object |v| (already validated). */
static bool f_members(struct fspan v, const char *const *keys, struct fspan *vals, int nkeys) {
  struct fscan f = {v.p, v.p + v.n, 0};
  return v.p && *v.p == '{' && f_object(&f, keys, vals, nkeys);
}

/* |v| is the string |lit| written without escapes. */
static bool f_is(struct fspan v, const char *lit) {
  size_t n = strlen(lit);
  return v.p && v.n == n + 2 && v.p[0] == '"' && memcmp(v.p + 1, lit, n) == 0;
}

/* |v| is an integer that json-c prints back as the same text. */
static bool f_plain_int(struct fspan v) {
  if (!v.p) return false;
  const char *p = v.p, *end = v.p + v.n;
  if (*p == '-') p++;
  if (p == end || (*p == '0' && (end - p > 1 || p != v.p))) return false; /* 01, -0 */
  for (; p < end; p++)
    if (*p < '0' || *p > '9') return false;
  return true;
}

static bool fast_echo(struct server *s, const char *line, size_t len) {
  static const char *const top_keys[] = {"jsonrpc", "id", "method", "params"};
  static const char *const params_keys[] = {"name", "arguments", "_meta"};
  static const char *const args_keys[] = {"text"};
  static const char *const meta_keys[] = {META_VERSION, META_CAPS};
  struct fspan top[4] = {{0}}, params[3] = {{0}}, args[1] = {{0}}, meta[2] = {{0}};
  struct fscan f = {line, line + len, 0};
  f_ws(&f);
  if (!f_object(&f, top_keys, top, 4)) return false;
  f_ws(&f);
  if (f.p != f.end || !f_is(top[0], "2.0") || !f_plain_int(top[1]) || !f_is(top[2], "tools/call") ||
      !f_members(top[3], params_keys, params, 3) || !f_is(params[0], "echo") ||
      !f_members(params[1], args_keys, args, 1))
    return false;
  struct fspan text = args[0];
  if (!text.p || text.p[0] != '"' || memchr(text.p, '\\', text.n)) return false;
  /* The era, as dispatch() decides it; a modern request with anything but
   * a well-formed _meta at our version is left to the general path. */
  bool modern = s->proto == PROTO_MODERN;
  if (s->proto != PROTO_LEGACY && params[2].p) {
    if (!f_members(params[2], meta_keys, meta, 2)) return false;
    if (meta[0].p) modern = true;
  }
  if (modern && (!f_is(meta[0], MODERN_PROTOCOL) || !meta[1].p || meta[1].p[0] != '{'))
    return false;
  s->modern_reply = modern;
  struct tool_result r = {0};
  set_text(&r, text.p + 1, text.n - 2, false);
  out_append_str(s, "{\"jsonrpc\":\"2.0\",\"id\":");
  out_append(s, top[1].p, top[1].n);
  tool_result_tail(s, &r);
  return true;
}

/* ---- input ------------------------------------------------------------ */

/* Handles one line; |line[len]| must be writable (it becomes the NUL). */
static void handle_line(struct server *s, char *line, size_t len) {
  size_t i = 0;
  while (i < len && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) i++;
  if (i == len) return; /* blank lines are tolerated */

  s->lines++;
  if (!s->no_fast && fast_echo(s, line, len)) {
    s->fast_lines++;
    return;
  }
  line[len] = '\0';
  json_tokener_reset(s->tok);
  json_object *msg = json_tokener_parse_ex(s->tok, line, (int)len + 1);
  if (json_tokener_get_error(s->tok) != json_tokener_success ||
      json_tokener_get_parse_end(s->tok) < len) {
    /* Trailing bytes after the value, or an embedded NUL, land here too. */
    logmsg("unparseable line (%zu bytes) answered with -32700", len);
    json_object_put(msg);
    send_error(s, NULL, RPC_PARSE_ERROR, "Parse error");
    return;
  }
  dispatch(s, msg);
  json_object_put(msg);
}

/* Splits the buffered input into lines and handles the complete ones. */
static void consume_input(struct server *s) {
  size_t start = 0;
  for (;;) {
    char *nl = memchr(s->in + s->in_scan, '\n', s->in_len - s->in_scan);
    if (!nl) break;
    size_t end = (size_t)(nl - s->in);
    if (s->skipping) s->skipping = false; /* the end of an over-long line */
    else handle_line(s, s->in + start, end - start);
    start = end + 1;
    s->in_scan = start;
  }
  if (s->skipping) {
    s->in_len = s->in_scan = 0;
    return;
  }
  if (start) {
    memmove(s->in, s->in + start, s->in_len - start);
    s->in_len -= start;
  }
  s->in_scan = s->in_len;
  if (s->in_len > MAX_LINE) {
    logmsg("skipping a line longer than %u bytes", MAX_LINE);
    s->skipping = true;
    s->in_len = s->in_scan = 0;
  }
}

/* Reads once from stdin.  Returns bytes read, 0 at EOF, -1 for "try later". */
static ssize_t read_input(struct server *s) {
  if (s->in_cap - s->in_len < READ_CHUNK + 1) {
    size_t cap = s->in_cap ? s->in_cap : READ_CHUNK * 2;
    while (cap - s->in_len < READ_CHUNK + 1) cap *= 2;
    s->in = xrealloc(s->in, cap);
    s->in_cap = cap;
  }
  for (;;) {
    /* One byte is kept free so a final unterminated line can take a NUL. */
    ssize_t n = read(STDIN_FILENO, s->in + s->in_len, s->in_cap - s->in_len - 1);
    if (n >= 0) return n;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return -1;
    logmsg("read: %s", strerror(errno));
    return 0;
  }
}

/* ---- main ------------------------------------------------------------- */

static void usage(FILE *f) {
  fprintf(f, "Usage: " SERVER_NAME " [--help] [--version] [--no-fast-path]\n"
             "       [--protocol legacy|modern|dual]\n"
             "\n"
             "A small MCP server on stdio, bundled with mcpconn.  It reads\n"
             "newline-delimited JSON-RPC 2.0 on stdin, answers on stdout and logs\n"
             "to stderr.  It exits 0 when stdin reaches end of file.\n"
             "\n"
             "  --protocol MODE  the MCP eras it speaks: dual (the default: 2026-07-28\n"
             "                   and 2025-11-25/06-18/03-26 side by side), legacy\n"
             "                   (initialize only) or modern (2026-07-28 only)\n"
             "  --no-fast-path   parse every message with json-c, also plain echo\n"
             "                   calls (for tests: the answers are the same)\n"
             "\n"
             "Tools:\n"
             "  echo {text}      returns text unchanged\n"
             "  add  {a, b}      returns the sum (text, and structuredContent.sum)\n"
             "  sleep {ms}       waits ms milliseconds; sends notifications/progress\n"
             "                   every 100 ms when asked; honours notifications/cancelled\n"
             "  fail {message?}  always returns a tool error (isError: true)\n"
             "\n"
             "Prompts: greet {name, style?} and summarize.\n"
             "Resources: demo://readme, demo://config.json, and demo://echo/{text}\n"
             "(a template: reads back the text).\n");
}

int main(int argc, char **argv) {
  bool no_fast = false;
  enum proto_mode proto = PROTO_DUAL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--no-fast-path") == 0) {
      no_fast = true;
      continue;
    }
    if (strcmp(argv[i], "--protocol") == 0 || strncmp(argv[i], "--protocol=", 11) == 0) {
      const char *v = argv[i][10] == '=' ? argv[i] + 11 : i + 1 < argc ? argv[++i] : "";
      if (strcmp(v, "dual") == 0) proto = PROTO_DUAL;
      else if (strcmp(v, "legacy") == 0) proto = PROTO_LEGACY;
      else if (strcmp(v, "modern") == 0) proto = PROTO_MODERN;
      else {
        fprintf(stderr, SERVER_NAME ": --protocol wants legacy, modern or dual, not '%s'\n", v);
        return 2;
      }
      continue;
    }
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      usage(stdout);
      return 0;
    }
    if (strcmp(argv[i], "--version") == 0) {
      printf(SERVER_NAME " " VERSION "\n");
      return 0;
    }
    fprintf(stderr, SERVER_NAME ": unknown argument '%s' (see --help)\n", argv[i]);
    return 2;
  }

  /* A vanished client shows up as EPIPE from write(), handled there. */
  signal(SIGPIPE, SIG_IGN);

  struct server s;
  memset(&s, 0, sizeof(s));
  s.no_fast = no_fast;
  s.proto = proto;
  s.tok = json_tokener_new();
  if (!s.tok) {
    logmsg("out of memory");
    return 1;
  }
  json_tokener_set_flags(s.tok, JSON_TOKENER_STRICT);
  s.tools_result = json_tokener_parse(TOOLS_JSON);
  if (!s.tools_result) {
    logmsg("internal error: the tool list does not parse");
    return 1;
  }
  s.tools_text = json_object_to_json_string_length(s.tools_result, SER_FLAGS, &s.tools_len);

  bool eof = false;
  while (!eof && !s.out_dead) {
    flush_out(&s);
    if (s.out_dead) break;
    int timeout = next_timeout(&s);
    ssize_t n = -1;
    if (timeout < 0) n = read_input(&s); /* nothing timed: block in read() */
    if (n < 0) {
      struct pollfd pfd = {STDIN_FILENO, POLLIN, 0};
      int r = poll(&pfd, 1, timeout);
      if (r < 0 && errno != EINTR) {
        logmsg("poll: %s", strerror(errno));
        break;
      }
      if (r > 0) n = read_input(&s);
    }
    if (n == 0) {
      eof = true;
      if (s.in_len && !s.skipping) handle_line(&s, s.in, s.in_len);
      s.in_len = 0;
    } else if (n > 0) {
      s.in_len += (size_t)n;
      consume_input(&s);
    }
    run_timers(&s);
  }
  flush_out(&s);
  if (getenv("MCP_DEMO_FAST_STATS")) /* for tests/check_demo_fast */
    logmsg("fast path: %lu of %lu lines", s.fast_lines, s.lines);

  /* Sleeps still running are abandoned: nobody is left to read them. */
  while (s.n_sleeps) remove_sleeper(&s, s.n_sleeps - 1);
  free(s.sleeps);
  free(s.in);
  free(s.out);
  json_object_put(s.tools_result);
  json_tokener_free(s.tok);
  return 0;
}
