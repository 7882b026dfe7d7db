/* SPDX-License-Identifier: MIT */
/*
 * demo_server.h: what the three files of bin/mcpconn-demo-server share:
 * the server's state (struct server), the wire constants, the output
 * buffer and reply writers (mcpconn-demo-server.c), the catalogue
 * (demo_tools.c) and the fast path (demo_fast.c).  Internal to the demo
 * server; it is not the library's and uses none of it.
 */
#ifndef MCP_DEMO_SERVER_H
#define MCP_DEMO_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <json-c/json.h>

/* How json-c serialises a message: compact, one line. */
#define SER_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)
/* Output is written once this much is buffered, even mid-batch. */
#define OUT_FLUSH_AT (256u * 1024)

/* JSON-RPC error codes. */
#define RPC_PARSE_ERROR (-32700)
#define RPC_INVALID_REQUEST (-32600)
#define RPC_METHOD_NOT_FOUND (-32601)
#define RPC_INVALID_PARAMS (-32602)
#define RPC_UNSUPPORTED_VERSION (-32022)
#define RPC_RESOURCE_NOT_FOUND (-32002)

/* The modern revision and the _meta keys a modern request carries. */
#define MODERN_PROTOCOL "2026-07-28"
#define META_VERSION "io.modelcontextprotocol/protocolVersion"
#define META_CAPS "io.modelcontextprotocol/clientCapabilities"
/* ttlMs of the cacheable results (discover, tools/list): they never change. */
#define RESULT_TTL "60000"

/* --protocol: which eras are spoken. */
enum proto_mode { PROTO_DUAL, PROTO_LEGACY, PROTO_MODERN };

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

static inline void set_text(struct tool_result *r, const char *text, size_t len, bool is_error) {
  r->text = text;
  r->len = len;
  r->is_error = is_error;
}

static inline void set_error(struct tool_result *r, const char *text) {
  set_text(r, text, strlen(text), true);
}

/* ---- mcpconn-demo-server.c: helpers ------------------------------------ */

void logmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void *xrealloc(void *p, size_t n);
int64_t now_ms(void);
/* Returns member |key| of |obj| when it exists and has type |type|. */
json_object *get_typed(json_object *obj, const char *key, json_type type);
bool is_valid_id(json_object *id);

/* ---- mcpconn-demo-server.c: output ------------------------------------- */

/* Writes the whole output buffer to stdout; marks stdout dead on failure. */
void flush_out(struct server *s);

/* Appends |len| bytes to the output buffer (inline: the hot path of every
 * reply, in every file). */
static inline void out_append(struct server *s, const char *data, size_t len) {
  if (s->out_len + len > s->out_cap) {
    size_t cap = s->out_cap ? s->out_cap : 4096;
    while (cap < s->out_len + len) cap *= 2;
    s->out = xrealloc(s->out, cap);
    s->out_cap = cap;
  }
  memcpy(s->out + s->out_len, data, len);
  s->out_len += len;
}

static inline void out_append_str(struct server *s, const char *str) {
  out_append(s, str, strlen(str));
}

/* Ends the message being appended: one line, written in the next flush. */
static inline void out_end_message(struct server *s) {
  out_append(s, "\n", 1);
  if (s->out_len >= OUT_FLUSH_AT) flush_out(s);
}

void out_append_json(struct server *s, json_object *obj);
/* Serialises |msg| as one line into the output buffer and drops |msg|. */
void send_msg(struct server *s, json_object *msg);
/* The envelope of a reply to |id| (NULL: id null), up to the id. */
void begin_reply(struct server *s, json_object *id);
/* Sends |text| (serialised JSON) as the result for request |id|. */
void send_result_text(struct server *s, json_object *id, const char *text, size_t len);
/* Sends a result for request |id|; takes ownership of |result|. */
void send_result(struct server *s, json_object *id, json_object *result);
/* Sends a JSON-RPC error for |id| (NULL: id null) with |data| (owned;
 * NULL for none). */
void send_error_data(struct server *s, json_object *id, int code, const char *message,
                     json_object *data);
/* Sends a JSON-RPC error for |id| (NULL: id null). */
void send_error(struct server *s, json_object *id, int code, const char *message);
/* Appends |len| bytes as a JSON string literal (quotes included). */
void out_append_json_string(struct server *s, const char *str, size_t len);
/* The rest of a tool's reply, after the id. */
void tool_result_tail(struct server *s, const struct tool_result *r);
void send_tool_result(struct server *s, json_object *id, const struct tool_result *r);

/* ---- demo_tools.c: the catalogue --------------------------------------- */

/* Parses the tools/list result (once, at start-up) into s->tools_result
 * and s->tools_text; false if it does not parse. */
bool load_tools(struct server *s);
/* The other list results (one page each; never changing). */
extern const char PROMPTS_JSON[];
extern const char RESOURCES_JSON[];
extern const char TEMPLATES_JSON[];

void do_tools_list(struct server *s, json_object *id, json_object *params);
void do_tools_call(struct server *s, json_object *id, json_object *params);
/* Sends |text| (one of the lists above) for a list request; modern results
 * carry resultType. */
void send_list(struct server *s, json_object *id, json_object *params, const char *text);
void do_prompts_get(struct server *s, json_object *id, json_object *params);
void do_resources_read(struct server *s, json_object *id, json_object *params);
/* Drops running sleep |i| (cancelled, or abandoned at exit). */
void remove_sleeper(struct server *s, size_t i);
/* Finishes due sleeps and sends due progress notifications. */
void run_timers(struct server *s);
/* Milliseconds until the next timer is due; -1 when none is running. */
int next_timeout(const struct server *s);

/* ---- demo_fast.c ------------------------------------------------------- */

/* Answers |line| when it is a plain tools/call of echo; false (nothing
 * sent) to leave it to the general path. */
bool fast_echo(struct server *s, const char *line, size_t len);

#endif
