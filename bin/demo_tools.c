/* SPDX-License-Identifier: MIT */
/*
 * demo_tools.c: the demo server's catalogue and its handlers: the tools
 * (echo, add, sleep, fail) with tools/list and tools/call, the running
 * sleeps' timers (progress notifications, the answer when due), the
 * prompts (greet, summarize) with prompts/get, and the resources
 * (demo://readme, demo://config.json, the template demo://echo/{text})
 * with resources/read.  Requests reach it checked and dispatched by
 * mcpconn-demo-server.c (s->modern_reply tells the era); replies go out
 * through its writers (demo_server.h).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "demo_server.h"

/* Interval of progress notifications during sleep, ms. */
#define PROGRESS_EVERY_MS 100
/* Longest sleep accepted, ms. */
#define SLEEP_MAX_MS (10 * 60 * 1000)

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

/* Parses the tools/list result into s->tools_result and s->tools_text;
 * false if it does not parse. */
bool load_tools(struct server *s) {
  s->tools_result = json_tokener_parse(TOOLS_JSON);
  if (!s->tools_result) return false;
  s->tools_text = json_object_to_json_string_length(s->tools_result, SER_FLAGS, &s->tools_len);
  return true;
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

void remove_sleeper(struct server *s, size_t i) {
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

void run_timers(struct server *s) {
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

int next_timeout(const struct server *s) {
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

void do_tools_list(struct server *s, json_object *id, json_object *params) {
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

void do_tools_call(struct server *s, json_object *id, json_object *params) {
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

const char PROMPTS_JSON[] =
    "{\"prompts\":["
    "{\"name\":\"greet\",\"title\":\"Greet\","
    "\"description\":\"Asks for a greeting for someone.\","
    "\"arguments\":[{\"name\":\"name\",\"description\":\"Who to greet.\",\"required\":true},"
    "{\"name\":\"style\",\"description\":\"formal or casual (default: casual).\","
    "\"required\":false}]},"
    "{\"name\":\"summarize\",\"title\":\"Summarize\","
    "\"description\":\"Asks for a one-sentence summary of demo://readme.\"}"
    "]}";
const char RESOURCES_JSON[] =
    "{\"resources\":["
    "{\"uri\":\"demo://readme\",\"name\":\"readme\",\"title\":\"Read me\","
    "\"description\":\"What this server is.\",\"mimeType\":\"text/plain\"},"
    "{\"uri\":\"demo://config.json\",\"name\":\"config\","
    "\"description\":\"The server's settings.\",\"mimeType\":\"application/json\"}"
    "]}";
const char TEMPLATES_JSON[] =
    "{\"resourceTemplates\":["
    "{\"uriTemplate\":\"demo://echo/{text}\",\"name\":\"echo\","
    "\"description\":\"Reads back the text in the URI.\",\"mimeType\":\"text/plain\"}"
    "]}";
#define README_TEXT \
  "mcpconn-demo-server is a small MCP server bundled with mcpconn.\n" \
  "It has four tools, two prompts and three resources.\n"
#define ECHO_PREFIX "demo://echo/"

void send_list(struct server *s, json_object *id, json_object *params, const char *text) {
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

void do_prompts_get(struct server *s, json_object *id, json_object *params) {
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

void do_resources_read(struct server *s, json_object *id, json_object *params) {
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
