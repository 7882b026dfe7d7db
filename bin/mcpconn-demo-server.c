/* SPDX-License-Identifier: MIT */
/*
 * mcpconn-demo-server: a small MCP server on stdio, bundled with mcpconn.
 *
 * It is the CLI's default server, a peer for the test suites and the peer
 * of the benchmarks, so it aims to be correct and cheap rather than
 * featureful.  It speaks newline-delimited JSON-RPC 2.0 on stdin/stdout
 * (compact JSON, one message per line) and logs only to stderr.
 *
 * Tools: echo, add, sleep and fail (TOOLS_JSON in demo_tools.c).
 * Prompts: greet (arguments name, style) and summarize.  Resources:
 * demo://readme, demo://config.json and the template demo://echo/{text};
 * an unknown URI is -32002 (legacy) or -32602 (modern), as each era's spec
 * says.
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
 *
 * Files: this one has the loop, the input, the output buffer and its reply
 * writers, and the protocol (the JSON-RPC envelope, the eras, initialize,
 * server/discover, ping, cancellation); demo_tools.c the catalogue (tools,
 * sleeps' timers, prompts, resources and their methods); demo_fast.c the
 * fast path for echo; demo_server.h what they share.
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

#include "demo_server.h"

#ifndef VERSION
#define VERSION "0.1.0"
#endif

#define SERVER_NAME "mcpconn-demo-server"
#define DEFAULT_PROTOCOL "2025-11-25"

/* Lines longer than this (bytes, without the newline) are skipped. */
#define MAX_LINE (16u * 1024 * 1024)
/* Bytes asked of each read(). */
#define READ_CHUNK (64u * 1024)

static const char *const SUPPORTED_PROTOCOLS[] = {"2025-11-25", "2025-06-18", "2025-03-26"};

/* ---- small helpers ---------------------------------------------------- */

void logmsg(const char *fmt, ...) {
  va_list ap;
  char line[512];
  va_start(ap, fmt);
  vsnprintf(line, sizeof(line), fmt, ap);
  va_end(ap);
  fprintf(stderr, SERVER_NAME ": %s\n", line);
}

void *xrealloc(void *p, size_t n) {
  void *q = realloc(p, n ? n : 1);
  if (!q) {
    logmsg("out of memory");
    exit(1);
  }
  return q;
}

int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

json_object *get_typed(json_object *obj, const char *key, json_type type) {
  json_object *v;
  if (!obj || !json_object_object_get_ex(obj, key, &v)) return NULL;
  return json_object_is_type(v, type) ? v : NULL;
}

bool is_valid_id(json_object *id) {
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

void flush_out(struct server *s) {
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

void out_append_json(struct server *s, json_object *obj) {
  size_t len;
  const char *text = json_object_to_json_string_length(obj, SER_FLAGS, &len);
  out_append(s, text, len);
}

/* Serialises |msg| as one line into the output buffer and drops |msg|. */
void send_msg(struct server *s, json_object *msg) {
  out_append_json(s, msg);
  out_end_message(s);
  json_object_put(msg);
}

/*
 * The envelope is written by hand around the serialised id and payload:
 * cheaper than building a json-c object for every reply.
 */
void begin_reply(struct server *s, json_object *id) {
  out_append_str(s, "{\"jsonrpc\":\"2.0\",\"id\":");
  if (id) out_append_json(s, id);
  else out_append_str(s, "null");
}

/* Sends |text| (serialised JSON) as the result for request |id|. */
void send_result_text(struct server *s, json_object *id, const char *text, size_t len) {
  begin_reply(s, id);
  out_append_str(s, ",\"result\":");
  out_append(s, text, len);
  out_append(s, "}", 1);
  out_end_message(s);
}

/* Sends a result for request |id|; takes ownership of |result|. */
void send_result(struct server *s, json_object *id, json_object *result) {
  begin_reply(s, id);
  out_append_str(s, ",\"result\":");
  out_append_json(s, result);
  out_append(s, "}", 1);
  out_end_message(s);
  json_object_put(result);
}

/* Sends a JSON-RPC error for |id| (NULL: id null) with |data| (owned;
 * NULL for none). */
void send_error_data(struct server *s, json_object *id, int code, const char *message,
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
void send_error(struct server *s, json_object *id, int code, const char *message) {
  send_error_data(s, id, code, message, NULL);
}

/* Appends |len| bytes as a JSON string literal (quotes included). */
void out_append_json_string(struct server *s, const char *str, size_t len) {
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

/* The rest of a tool's reply, after the id. */
void tool_result_tail(struct server *s, const struct tool_result *r) {
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

void send_tool_result(struct server *s, json_object *id, const struct tool_result *r) {
  begin_reply(s, id);
  tool_result_tail(s, r);
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
  if (!load_tools(&s)) {
    logmsg("internal error: the tool list does not parse");
    return 1;
  }

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
