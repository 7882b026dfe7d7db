/* SPDX-License-Identifier: MIT */
/*
 * mcp_jsonrpc.c: parse, classify and build JSON-RPC 2.0 messages.
 * Pure: no I/O and no threads.  json-c trees made here are handed to the
 * caller whole; nothing is cached between calls.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "mcp_jscan.h"
#include "mcp_jsonrpc.h"

#define PRINT_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

/*
 * One tokener per thread, reset between messages: making a fresh one per
 * message (a calloc and memset of its depth-128 parse stack) was a sixth of
 * a stdio round trip's instructions.  The thread-specific key frees it when
 * the thread exits.
 */
const char MCP__JSONRPC_OOM[] = "out of memory";

static pthread_key_t tokener_key;
static pthread_once_t tokener_once = PTHREAD_ONCE_INIT;
static bool tokener_key_ok;

static void tokener_destroy(void *tok) { json_tokener_free(tok); }

static void tokener_key_init(void) {
  tokener_key_ok = pthread_key_create(&tokener_key, tokener_destroy) == 0;
}

/* Returns this thread's tokener, or a fresh one with *owned set (the caller
 * frees it) when it cannot be kept. */
static json_tokener *thread_tokener(bool *owned) {
  pthread_once(&tokener_once, tokener_key_init);
  json_tokener *tok = tokener_key_ok ? pthread_getspecific(tokener_key) : NULL;
  *owned = false;
  if (tok) {
    json_tokener_reset(tok);
    return tok;
  }
  tok = json_tokener_new_ex(MCP_JSON_MAX_DEPTH);
  if (tok && (!tokener_key_ok || pthread_setspecific(tokener_key, tok) != 0)) *owned = true;
  return tok;
}

json_object *mcp__jsonrpc_parse(const char *data, size_t len, const char **why) {
  if (why) *why = NULL;
  if (len > (size_t)INT32_MAX) {
    if (why) *why = "message too large to parse";
    return NULL;
  }
  /* The peer promises UTF-8, and json-c passes invalid bytes through into
   * strings (escapes it decodes are fine: an unpaired surrogate becomes
   * U+FFFD).  One pass over bytes that are mostly ASCII; the fast path of
   * responses (mcp_jscan.h) validates as it scans and never comes here. */
  if (!mcp__jscan_utf8_valid(data, len)) {
    if (why) *why = "message is not valid UTF-8";
    return NULL;
  }
  bool owned = false;
  json_tokener *tok = thread_tokener(&owned);
  if (!tok) {
    if (why) *why = MCP__JSONRPC_OOM;
    return NULL;
  }
  /* Strict mode rejects most lenient json-c extensions (unquoted keys,
   * trailing commas, comments); json-c 0.16 still takes single-quoted keys,
   * NaN/Infinity, "1." and raw control characters in strings, which no
   * JSON encoder of a real peer writes.  (mcp__jscan_valid() is the strict
   * RFC 8259 check, where one is needed.) */
  json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
  /* json-c 0.16 does not report allocation failures (it may even drop
   * bytes of a string silently); a failed malloc leaves ENOMEM in errno. */
  int saved_errno = errno;
  errno = 0;
  json_object *o = json_tokener_parse_ex(tok, data, (int)len);
  enum json_tokener_error jerr = json_tokener_get_error(tok);
  size_t end = json_tokener_get_parse_end(tok);
  if (!o && jerr == json_tokener_continue) {
    /* A bare number at the very end ("42") is complete only once something
     * follows it; white space ends it without changing the value. */
    o = json_tokener_parse_ex(tok, " ", 1);
    jerr = json_tokener_get_error(tok);
    end = len;
  }
  if (errno == ENOMEM) {
    json_object_put(o);
    o = NULL;
    if (why) *why = MCP__JSONRPC_OOM;
    goto fail;
  }
  errno = saved_errno;
  if (!o && jerr == json_tokener_continue) {
    if (why) *why = "incomplete JSON";
    goto fail;
  }
  if (jerr != json_tokener_success) {
    if (why) *why = json_tokener_error_desc(jerr);
    goto fail;
  }
  if (!o) {
    /* json-c represents a JSON null as a NULL object. */
    if (why) *why = "JSON null is not a message";
    goto fail;
  }
  /* Anything but white space after the value is an error. */
  for (size_t off = end; off < len; off++) {
    char ch = data[off];
    if (ch != ' ' && ch != '\t' && ch != '\r' && ch != '\n') {
      if (why) *why = "trailing data after JSON value";
      json_object_put(o);
      o = NULL;
      goto fail;
    }
  }
  if (owned) json_tokener_free(tok);
  return o;
fail:
  /* Not kept after a failure: json-c 0.16's json_tokener_reset() leaves a
   * half-read \u surrogate pending, which would change how the next
   * message's first \u escape decodes. */
  if (!owned) pthread_setspecific(tokener_key, NULL);
  json_tokener_free(tok);
  return NULL;
}

json_object *mcp__json_parse_document(const char *data, size_t len, int depth,
                                      const char *invalid_prefix, char *why, size_t whylen) {
  if (len > (size_t)INT32_MAX - 1) {
    snprintf(why, whylen, "too large");
    return NULL;
  }
  json_tokener *tok = json_tokener_new_ex(depth);
  if (!tok) {
    snprintf(why, whylen, "out of memory");
    return NULL;
  }
  json_object *o = json_tokener_parse_ex(tok, data, (int)len);
  enum json_tokener_error e = json_tokener_get_error(tok);
  size_t end = json_tokener_get_parse_end(tok);
  if (!o && e == json_tokener_continue) {
    /* A trailing comment or number needs the end of input to finish. */
    o = json_tokener_parse_ex(tok, "", 1);
    e = json_tokener_get_error(tok);
    end = len;
  }
  if (o) {
    while (end < len && data[end] && strchr(" \t\r\n", data[end])) end++;
    if (end < len) {
      snprintf(why, whylen, "unexpected data after the JSON value at byte %zu", end);
      json_object_put(o);
      o = NULL;
    }
  } else {
    snprintf(why, whylen, "%s%s at byte %zu", invalid_prefix ? invalid_prefix : "",
             json_tokener_error_desc(e), end);
  }
  json_tokener_free(tok);
  return o;
}

mcp_msg_kind mcp__jsonrpc_classify(json_object *o, mcp_msg *m) {
  memset(m, 0, sizeof(*m));
  m->kind = MCP_MSG_INVALID;
  if (!json_object_is_type(o, json_type_object)) {
    m->invalid = "message is not a JSON object";
    return m->kind;
  }
  json_object *v = NULL;
  if (!json_object_object_get_ex(o, "jsonrpc", &v) || !json_object_is_type(v, json_type_string) ||
      strcmp(json_object_get_string(v), "2.0") != 0) {
    m->invalid = "missing or wrong \"jsonrpc\" member";
    return m->kind;
  }
  json_object *id = NULL, *method = NULL, *result = NULL, *error = NULL;
  int has_id = json_object_object_get_ex(o, "id", &id);
  int has_method = json_object_object_get_ex(o, "method", &method);
  int has_result = json_object_object_get_ex(o, "result", &result);
  int has_error = json_object_object_get_ex(o, "error", &error);

  if (has_id && id && !json_object_is_type(id, json_type_int) &&
      !json_object_is_type(id, json_type_string)) {
    m->invalid = "id must be a string or an integer";
    return m->kind;
  }
  if (has_method) {
    if (!json_object_is_type(method, json_type_string)) {
      m->invalid = "method must be a string";
      return m->kind;
    }
    if (has_result || has_error) {
      m->invalid = "message has both method and result/error";
      return m->kind;
    }
    json_object *params = NULL;
    if (json_object_object_get_ex(o, "params", &params) && params &&
        !json_object_is_type(params, json_type_object) &&
        !json_object_is_type(params, json_type_array)) {
      m->invalid = "params must be an object or an array";
      return m->kind;
    }
    m->method = json_object_get_string(method);
    m->params = params;
    if (has_id) {
      if (!id) {
        m->invalid = "request id must not be null";
        return m->kind;
      }
      m->id = id;
      m->kind = MCP_MSG_REQUEST;
    } else {
      m->kind = MCP_MSG_NOTIFICATION;
    }
    return m->kind;
  }
  if (!has_id) {
    m->invalid = "message has neither method nor id";
    return m->kind;
  }
  if (has_result == has_error) {
    m->invalid = has_result ? "response has both result and error"
                            : "response has neither result nor error";
    return m->kind;
  }
  m->id = id;
  if (has_result) {
    if (!id) {
      m->invalid = "response id must not be null";
      return m->kind;
    }
    m->result = result;
    m->kind = MCP_MSG_RESPONSE;
    return m->kind;
  }
  if (!json_object_is_type(error, json_type_object)) {
    m->invalid = "error must be an object";
    return m->kind;
  }
  json_object *code = NULL, *message = NULL, *data = NULL;
  if (!json_object_object_get_ex(error, "code", &code) ||
      !json_object_is_type(code, json_type_int)) {
    m->invalid = "error.code must be an integer";
    return m->kind;
  }
  m->error_code = json_object_get_int64(code);
  m->error_message = "";
  if (json_object_object_get_ex(error, "message", &message) &&
      json_object_is_type(message, json_type_string))
    m->error_message = json_object_get_string(message);
  if (json_object_object_get_ex(error, "data", &data)) m->error_data = data;
  m->kind = MCP_MSG_ERROR;
  return m->kind;
}

/* An id that is an integer, or a number with an integral value (2.0). */
static bool id_number(json_object *id, int64_t *out) {
  if (json_object_is_type(id, json_type_int)) {
    *out = json_object_get_int64(id);
    return true;
  }
  if (!json_object_is_type(id, json_type_double)) return false;
  double d = json_object_get_double(id);
  if (!(d >= -9007199254740992.0 && d <= 9007199254740992.0) || d != (double)(int64_t)d)
    return false;
  *out = (int64_t)d;
  return true;
}

bool mcp__jsonrpc_response_id(json_object *o, int64_t *id) {
  json_object *v = NULL;
  if (!json_object_is_type(o, json_type_object) || json_object_object_get_ex(o, "method", NULL) ||
      !json_object_object_get_ex(o, "jsonrpc", &v) || !json_object_is_type(v, json_type_string) ||
      strcmp(json_object_get_string(v), "2.0") != 0 || !json_object_object_get_ex(o, "id", &v))
    return false;
  return id_number(v, id);
}

/* ---- reading the id of a message json-c refused ------------------------- */

typedef struct peek {
  const unsigned char *p, *end;
} peek;

static void peek_ws(peek *k) {
  while (k->p < k->end && (*k->p == ' ' || *k->p == '\t' || *k->p == '\r' || *k->p == '\n')) k->p++;
}

/* Past a string whose opening quote is at k->p; false when it never ends. */
static bool peek_string(peek *k) {
  for (k->p++; k->p < k->end; k->p++) {
    if (*k->p == '\\') {
      if (++k->p == k->end) return false;
    } else if (*k->p == '"') {
      k->p++;
      return true;
    }
  }
  return false;
}

/* Past one value of any nesting (brackets counted, not recursed; nothing
 * checked but strings and brackets).  False at the end of the input. */
static bool peek_value(peek *k) {
  size_t depth = 0;
  while (k->p < k->end) {
    unsigned char c = *k->p;
    if (c == '"') {
      if (!peek_string(k)) return false;
    } else if (c == '{' || c == '[') {
      depth++;
      k->p++;
    } else if (c == '}' || c == ']') {
      if (depth == 0) return true; /* the end of the enclosing object */
      depth--;
      k->p++;
    } else if (c == ',' && depth == 0) {
      return true;
    } else {
      k->p++;
    }
    if (depth == 0 && (c == '"' || c == '}' || c == ']')) return true;
  }
  return false;
}

/* An integer id, optionally with a fraction of zeros ("2.0"), followed by
 * the end of the member. */
static bool peek_id(peek *k, int64_t *out) {
  const unsigned char *p = k->p;
  bool neg = p < k->end && *p == '-';
  if (neg) p++;
  if (p == k->end || *p < '0' || *p > '9') return false;
  int64_t v = 0;
  for (; p < k->end && *p >= '0' && *p <= '9'; p++) {
    if (v > (INT64_MAX - 9) / 10) return false;
    v = v * 10 + (*p - '0');
  }
  if (p < k->end && *p == '.') {
    const unsigned char *f = ++p;
    while (p < k->end && *p == '0') p++;
    /* As a double, exact up to 2^53 only (mcp__jsonrpc_response_id()). */
    if (p == f || v > ((int64_t)1 << 53)) return false;
  }
  k->p = p;
  peek_ws(k);
  if (k->p < k->end && *k->p != ',' && *k->p != '}') return false;
  *out = neg ? -v : v;
  return true;
}

static bool key_is(const unsigned char *k, size_t n, const char *want) {
  return n == strlen(want) && memcmp(k, want, n) == 0;
}

bool mcp__jsonrpc_peek_response_id(const char *data, size_t len, int64_t *id) {
  peek k = {(const unsigned char *)data, (const unsigned char *)data + len};
  bool jsonrpc = false, reply = false, method = false;
  int ids = 0;
  int64_t got = 0;
  peek_ws(&k);
  if (k.p == k.end || *k.p != '{') return false;
  k.p++;
  for (;;) {
    peek_ws(&k);
    if (k.p == k.end || *k.p == '}') break; /* the end, or a message cut short */
    if (*k.p != '"') return false;
    const unsigned char *key = k.p + 1;
    if (!peek_string(&k)) return false;
    size_t kn = (size_t)(k.p - 1 - key);
    peek_ws(&k);
    if (k.p == k.end || *k.p != ':') return false;
    k.p++;
    peek_ws(&k);
    if (key_is(key, kn, "id")) {
      if (!peek_id(&k, &got)) return false;
      ids++;
    } else {
      const unsigned char *v = k.p;
      if (key_is(key, kn, "jsonrpc"))
        jsonrpc = (size_t)(k.end - v) >= 5 && memcmp(v, "\"2.0\"", 5) == 0;
      if (key_is(key, kn, "method")) method = true;
      if (key_is(key, kn, "result") || key_is(key, kn, "error")) reply = true;
      if (!peek_value(&k)) break;
    }
    peek_ws(&k);
    if (k.p < k.end && *k.p == ',') k.p++;
    else if (k.p < k.end && *k.p != '}') return false;
  }
  if (!jsonrpc || !reply || method || ids != 1) return false;
  *id = got;
  return true;
}

int mcp__jsonrpc_id_int(json_object *id, int64_t *out) {
  if (!id || !json_object_is_type(id, json_type_int)) return 0;
  *out = json_object_get_int64(id);
  return 1;
}

char *mcp__json_dup_string(json_object *o, size_t *len) {
  size_t n = 0;
  /* json-c 0.16 serialises on through a failed buffer growth and returns
   * truncated text; the failed malloc leaves ENOMEM in errno. */
  int saved_errno = errno;
  errno = 0;
  const char *s = json_object_to_json_string_length(o, PRINT_FLAGS, &n);
  if (errno == ENOMEM) return NULL;
  errno = saved_errno;
  if (!s) return NULL;
  char *d = mcp__strndup(s, n);
  if (d && len) *len = n;
  return d;
}

/* Adds |val| (borrowed; a new reference is taken) to |o| under |key|. */
static int add_ref(json_object *o, const char *key, json_object *val) {
  if (json_object_object_add(o, key, json_object_get(val)) != 0) {
    json_object_put(val);
    return -1;
  }
  return 0;
}

int mcp__json_add(json_object *o, const char *key, json_object *val) {
  if (!val) return -1;
  if (json_object_object_add(o, key, val) != 0) {
    json_object_put(val);
    return -1;
  }
  return 0;
}

#define add_new mcp__json_add

static json_object *envelope(void) {
  json_object *o = json_object_new_object();
  if (!o) return NULL;
  if (add_new(o, "jsonrpc", json_object_new_string("2.0"))) {
    json_object_put(o);
    return NULL;
  }
  return o;
}

static char *finish(json_object *o, size_t *len) {
  char *s = o ? mcp__json_dup_string(o, len) : NULL;
  json_object_put(o);
  return s;
}

char *mcp__jsonrpc_request(int64_t id, const char *method, json_object *params, size_t *len) {
  json_object *o = envelope();
  if (!o) return NULL;
  if (add_new(o, "id", json_object_new_int64(id)) ||
      add_new(o, "method", json_object_new_string(method)) ||
      (params && add_ref(o, "params", params))) {
    json_object_put(o);
    return NULL;
  }
  return finish(o, len);
}

char *mcp__jsonrpc_notification(const char *method, json_object *params, size_t *len) {
  json_object *o = envelope();
  if (!o) return NULL;
  if (add_new(o, "method", json_object_new_string(method)) ||
      (params && add_ref(o, "params", params))) {
    json_object_put(o);
    return NULL;
  }
  return finish(o, len);
}

char *mcp__jsonrpc_result(json_object *id, json_object *result, size_t *len) {
  json_object *o = envelope();
  if (!o) return NULL;
  json_object *res = result ? json_object_get(result) : json_object_new_object();
  if ((id ? add_ref(o, "id", id) : json_object_object_add(o, "id", NULL)) ||
      add_new(o, "result", res)) {
    json_object_put(o);
    return NULL;
  }
  return finish(o, len);
}

char *mcp__jsonrpc_error(json_object *id, int64_t code, const char *message, json_object *data,
                         size_t *len) {
  json_object *o = envelope();
  if (!o) return NULL;
  json_object *err = json_object_new_object();
  if (!err || add_new(err, "code", json_object_new_int64(code)) ||
      add_new(err, "message", json_object_new_string(message ? message : "")) ||
      (data && add_ref(err, "data", data))) {
    json_object_put(err);
    json_object_put(o);
    return NULL;
  }
  if ((id ? add_ref(o, "id", id) : json_object_object_add(o, "id", NULL)) ||
      add_new(o, "error", err)) {
    json_object_put(o);
    return NULL;
  }
  return finish(o, len);
}
