/* SPDX-License-Identifier: MIT */
/*
 * check_jscan.c: the tree-less JSON scanner.  Its promise is that whatever
 * it accepts, json-c (strict) accepts too and prints byte for byte as the
 * scanner did, so the fast path of a call cannot change what a caller sees;
 * whatever it refuses goes to json-c.  Table cases pin both sides of every
 * refusal rule; a differential run over generated documents (and mutations
 * of them) checks the promise against json-c itself, and that the scanner
 * takes the documents real servers send.
 */
#include "config.h"

#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "mcp_jscan.h"
#include "mcp_jsonrpc.h"

/* The scanner's compact form of |in|, or NULL when refused (caller frees). */
static char *scan(const char *in, size_t len, bool need_object) {
  char *out = malloc(len + 1);
  ck_assert_ptr_nonnull(out);
  size_t n = 0;
  if (!mcp__jscan_value(in, len, need_object, out, &n)) {
    free(out);
    return NULL;
  }
  out[n] = '\0';
  ck_assert_uint_eq(strlen(out), n); /* no NUL inside compact JSON */
  return out;
}

/* json-c's compact form of |in| wrapped in [ ] (so a bare null parses),
 * with the brackets taken off again; NULL when json-c refuses it. */
static char *jsonc(const char *in, size_t len) {
  char *w = malloc(len + 3);
  ck_assert_ptr_nonnull(w);
  w[0] = '[';
  memcpy(w + 1, in, len);
  w[len + 1] = ']';
  w[len + 2] = '\0';
  json_object *o = mcp__jsonrpc_parse(w, len + 2, NULL);
  free(w);
  if (!o) return NULL;
  size_t n = 0;
  char *t = mcp__json_dup_string(o, &n);
  json_object_put(o);
  ck_assert_ptr_nonnull(t);
  ck_assert(n >= 2);
  char *r = strndup(t + 1, n - 2);
  mcp__free(t);
  return r;
}

/* Accepted: the scanner's output equals |want| and json-c's. */
static void accepts(const char *in, const char *want) {
  char *got = scan(in, strlen(in), false);
  ck_assert_msg(got, "refused: %s", in);
  ck_assert_str_eq(got, want);
  char *ref = jsonc(in, strlen(in));
  ck_assert_msg(ref, "json-c refuses what the scanner took: %s", in);
  ck_assert_str_eq(got, ref);
  free(got);
  free(ref);
}

static void refuses(const char *in) {
  char *got = scan(in, strlen(in), false);
  ck_assert_msg(!got, "accepted %s as %s", in, got ? got : "");
}

START_TEST(test_accepts) {
  accepts(" { \"a\" : [ 1 , 2.5 , -3 , true , false , null ] } ",
          "{\"a\":[1,2.5,-3,true,false,null]}");
  accepts("{}", "{}");
  accepts("[ ]", "[]");
  accepts("\"x\"", "\"x\"");
  accepts("0", "0");
  accepts("-12", "-12");
  accepts("123456789012345678", "123456789012345678");
  accepts("1.5e10", "1.5e10");
  accepts("1E+2", "1E+2");
  accepts("-0.0", "-0.0");
  accepts("2.50", "2.50");
  accepts("\"a\\/b\"", "\"a/b\"");                                    /* json-c prints / bare */
  accepts("\"\\u0041\\u000a\\u001f\\u0022\"", "\"A\\n\\u001f\\\"\""); /* ASCII \u decoded */
  accepts("\"\\\"\\\\\\b\\f\\n\\r\\t\"", "\"\\\"\\\\\\b\\f\\n\\r\\t\"");
  accepts("\"h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80\"",
          "\"h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80\"");
  accepts("\"\x7f\"", "\"\x7f\"");
  accepts("{\"content\":[{\"type\":\"text\",\"text\":\"1:xxxx\"}],\"isError\":false}",
          "{\"content\":[{\"type\":\"text\",\"text\":\"1:xxxx\"}],\"isError\":false}");
}
END_TEST

START_TEST(test_refuses) {
  /* Not JSON. */
  refuses("");
  refuses("{");
  refuses("{\"a\":1,}");
  refuses("[1,]");
  refuses("{'a':1}");
  refuses("{a:1}");
  refuses("01");
  refuses("1.");
  refuses(".5");
  refuses("+1");
  refuses("1e");
  refuses("tru");
  refuses("True");
  refuses("NaN");
  refuses("\"a");
  refuses("\"\\x\"");
  refuses("\"\\u12\"");
  refuses("\"tab\there\"");
  refuses("1 2");
  refuses("\"\xc3\"");             /* truncated UTF-8 */
  refuses("\"\xc0\xaf\"");         /* overlong */
  refuses("\"\xed\xa0\x80\"");     /* surrogate */
  refuses("\"\xf4\x90\x80\x80\""); /* past U+10FFFF */
  /* JSON, but json-c would print it differently: its path. */
  refuses("\"\\u00e9\"");
  refuses("\"\\ud83d\\ude00\"");
  refuses("{\"\\u0000\":1}");
  refuses("-0");
  refuses("1234567890123456789");
  refuses("1e400");
  refuses("{\"a\":1,\"a\":2}");
  /* Limits. */
  char deep[2 * MCP_JSCAN_MAX_DEPTH + 8], *d = deep;
  for (int i = 0; i <= MCP_JSCAN_MAX_DEPTH; i++) *d++ = '[';
  for (int i = 0; i <= MCP_JSCAN_MAX_DEPTH; i++) *d++ = ']';
  *d = '\0';
  refuses(deep);
  /* One level less is fine. */
  char *got = scan(deep + 1, strlen(deep) - 2, false);
  ck_assert_ptr_nonnull(got);
  ck_assert_uint_eq(strlen(got), 2 * MCP_JSCAN_MAX_DEPTH);
  free(got);
  char many[16 * (MCP_JSCAN_MAX_KEYS + 1) + 4], *m = many;
  *m++ = '{';
  for (int i = 0; i <= MCP_JSCAN_MAX_KEYS; i++) m += sprintf(m, "%s\"k%d\":%d", i ? "," : "", i, i);
  *m++ = '}';
  *m = '\0';
  refuses(many);
  /* need_object */
  got = scan("[1]", 3, true);
  ck_assert_ptr_null(got);
  got = scan(" {}", 3, true);
  ck_assert_str_eq(got, "{}");
  free(got);
}
END_TEST

/* ---- differential run against json-c ------------------------------------ */

static uint64_t rng_state;
static unsigned rnd(unsigned n) {
  rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (unsigned)((rng_state >> 33) % n);
}

typedef struct sbuf {
  char *p;
  size_t len, cap;
} sbuf;

static void put(sbuf *b, const char *s, size_t n) {
  if (b->len + n + 1 > b->cap) {
    b->cap = (b->len + n + 1) * 2;
    b->p = realloc(b->p, b->cap);
    ck_assert_ptr_nonnull(b->p);
  }
  memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = '\0';
}
static void puts_(sbuf *b, const char *s) { put(b, s, strlen(s)); }

static void gen_ws(sbuf *b) {
  static const char *ws[] = {"", "", "", " ", "\n", "\t", "\r\n  "};
  puts_(b, ws[rnd(7)]);
}

static void gen_string(sbuf *b, bool key) {
  static const char *pieces[] = {"a",
                                 "text",
                                 " ",
                                 "1:",
                                 "\\\"",
                                 "\\\\",
                                 "\\/",
                                 "\\n",
                                 "\\t",
                                 "\\b",
                                 "\\f",
                                 "\\r",
                                 "\\u0041",
                                 "\\u001f",
                                 "\\u007f",
                                 "\\u0000",
                                 "\\u00e9",
                                 "\\ud83d\\ude00",
                                 "\xc3\xa9",
                                 "\xe2\x82\xac",
                                 "\xf0\x9f\x98\x80",
                                 "\x7f",
                                 "x"};
  puts_(b, "\"");
  unsigned n = rnd(6);
  for (unsigned i = 0; i < n; i++) {
    unsigned k = rnd(23);
    if (key && k == 15) k = 0;
    puts_(b, pieces[k]);
  }
  puts_(b, "\"");
}

static void gen_value(sbuf *b, int depth) {
  static const char *nums[] = {"0",
                               "1",
                               "-1",
                               "42",
                               "123456789012345678",
                               "1234567890123456789",
                               "-0",
                               "0.5",
                               "-2.25",
                               "1e5",
                               "1E+5",
                               "2.5e-3",
                               "1e300",
                               "1e400",
                               "3.14159265358979",
                               "100",
                               "-9223372036854775808"};
  unsigned k = depth > 6 ? rnd(4) : rnd(7);
  gen_ws(b);
  switch (k) {
  case 0: gen_string(b, false); break;
  case 1: puts_(b, nums[rnd(17)]); break;
  case 2: puts_(b, rnd(3) == 0 ? "null" : rnd(2) ? "true" : "false"); break;
  case 3: gen_string(b, false); break;
  case 4:
  case 5: {
    unsigned n = rnd(5);
    char keys[8][8];
    puts_(b, "{");
    for (unsigned i = 0; i < n; i++) {
      if (i) puts_(b, ",");
      gen_ws(b);
      if (rnd(3) == 0) {
        gen_string(b, true);
      } else {
        /* Mostly distinct plain keys, sometimes a repeat. */
        snprintf(keys[i], sizeof(keys[i]), "k%u", rnd(10) == 0 && i ? 0 : i);
        puts_(b, "\"");
        puts_(b, keys[i]);
        puts_(b, "\"");
      }
      gen_ws(b);
      puts_(b, ":");
      gen_value(b, depth + 1);
      gen_ws(b);
    }
    puts_(b, "}");
    break;
  }
  default: {
    unsigned n = rnd(5);
    puts_(b, "[");
    for (unsigned i = 0; i < n; i++) {
      if (i) puts_(b, ",");
      gen_value(b, depth + 1);
    }
    gen_ws(b);
    puts_(b, "]");
    break;
  }
  }
  gen_ws(b);
}

static void check_one(const char *in, size_t len, int *accepted) {
  char *got = scan(in, len, false);
  if (!got) return;
  (*accepted)++;
  char *ref = jsonc(in, len);
  ck_assert_msg(ref, "scanner accepted what json-c refuses: '%.*s'", (int)len, in);
  ck_assert_msg(strcmp(got, ref) == 0, "'%.*s': scanner '%s', json-c '%s'", (int)len, in, got, ref);
  free(got);
  free(ref);
}

START_TEST(test_differential) {
  rng_state = 0x5eed0001ULL + (uint64_t)_i;
  int docs = 0, accepted = 0, mutated_accepted = 0;
  for (int iter = 0; iter < 4000; iter++) {
    sbuf b = {0};
    gen_value(&b, 0);
    docs++;
    check_one(b.p, b.len, &accepted);
    /* Mutations: drop, duplicate, replace or insert one byte. */
    for (int m = 0; m < 4; m++) {
      char *c = malloc(b.len + 2);
      ck_assert_ptr_nonnull(c);
      memcpy(c, b.p, b.len);
      size_t n = b.len, at = b.len ? rnd((unsigned)b.len) : 0;
      static const char bytes[] = "{}[],:\"\\ 0-.eE+tfnu\x80\xc3\x01";
      char nb = bytes[rnd(sizeof(bytes) - 1)];
      switch (m) {
      case 0:
        if (n) {
          memmove(c + at, c + at + 1, n - at - 1);
          n--;
        }
        break;
      case 1:
        memmove(c + at + 1, c + at, n - at);
        n++;
        break;
      case 2:
        if (n) c[at] = nb;
        break;
      default:
        memmove(c + at + 1, c + at, n - at);
        c[at] = nb;
        n++;
        break;
      }
      check_one(c, n, &mutated_accepted);
      free(c);
    }
    free(b.p);
  }
  fprintf(stderr, "measure: jscan differential: %d/%d generated accepted, %d mutations accepted\n",
          accepted, docs, mutated_accepted);
  /* The generator leans towards the refused corners; still most documents
   * must take the fast path or it is pointless. */
  ck_assert_int_gt(accepted, docs / 5);
}
END_TEST

/* Strings are read eight bytes at a time: a byte that needs a look at every
 * offset of strings of every length up to 24, as a value and as a key. */
START_TEST(test_word_boundaries) {
  static const char *pieces[] = {
      "\\\"",    "\\\\",    "\\n",      "\\/",          "\\u0041",
      "\\u001f", "\\u00e9", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
      "\x7f",    "\x01",    "\xff",     "\xc3",         "\x80",
      "\"",      "~"};
  char doc[256];
  int accepted = 0;
  for (int n = 0; n < 24; n++) {
    for (int at = 0; at <= n; at++) {
      for (size_t k = 0; k < sizeof(pieces) / sizeof(pieces[0]); k++) {
        for (int key = 0; key < 2; key++) {
          snprintf(doc, sizeof(doc), key ? "{\"%.*s%s%.*s\":1}" : "[\"%.*s%s%.*s\"]", at,
                   "abcdefghijklmnopqrstuvwxyz", pieces[k], n - at, "ABCDEFGHIJKLMNOPQRSTUVWXYZ");
          check_one(doc, strlen(doc), &accepted);
        }
      }
    }
  }
  /* Printable ASCII, the common escapes and UTF-8 go through; the rest is
   * refused or json-c's. */
  ck_assert_int_gt(accepted, 24 * 25 / 2 * 2 * 8);
}
END_TEST

/* ---- responses ----------------------------------------------------------- */

static void response_ok(const char *msg, int64_t want_id, const char *want) {
  int64_t id = 0;
  char *res = NULL;
  size_t n = 0;
  ck_assert_msg(mcp__jscan_response(msg, strlen(msg), &id, &res, &n), "refused %s", msg);
  ck_assert_int_eq(id, want_id);
  ck_assert_str_eq(res, want);
  ck_assert_uint_eq(n, strlen(want));
  /* Same as the general path: parse, classify, print the result. */
  json_object *o = mcp__jsonrpc_parse(msg, strlen(msg), NULL);
  ck_assert_ptr_nonnull(o);
  mcp_msg m;
  ck_assert_int_eq(mcp__jsonrpc_classify(o, &m), MCP_MSG_RESPONSE);
  int64_t jid = 0;
  ck_assert(mcp__jsonrpc_id_int(m.id, &jid));
  ck_assert_int_eq(jid, id);
  char *ref = mcp__json_dup_string(m.result, NULL);
  ck_assert_str_eq(res, ref);
  mcp__free(ref);
  json_object_put(o);
  mcp__free(res);
}

static void response_refused(const char *msg) {
  int64_t id = 0;
  char *res = NULL;
  size_t n = 0;
  ck_assert_msg(!mcp__jscan_response(msg, strlen(msg), &id, &res, &n), "accepted %s", msg);
  ck_assert_ptr_null(res);
}

START_TEST(test_responses) {
  response_ok(
      "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}}",
      7, "{\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}");
  response_ok(" { \"result\" : { } , \"jsonrpc\" : \"2.0\" , \"id\" : 123456789012 } \r\n",
              123456789012, "{}");
  response_ok("{\"id\":-5,\"result\":null,\"jsonrpc\":\"2.0\"}", -5, "null");
  response_ok("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":[1,\"a\\/b\"]}", 1, "[1,\"a/b\"]");
  /* The general path's business. */
  response_refused("{\"jsonrpc\":\"2.0\",\"id\":\"7\",\"result\":{}}");
  response_refused("{\"jsonrpc\":\"2.0\",\"id\":null,\"result\":{}}");
  response_refused("{\"jsonrpc\":\"2.0\",\"id\":1.0,\"result\":{}}");
  response_refused("{\"jsonrpc\":\"2.0\",\"id\":01,\"result\":{}}");
  response_refused("{\"jsonrpc\":\"2.0\",\"id\":-0,\"result\":{}}");
  response_refused("{\"jsonrpc\":\"2.0\",\"id\":1234567890123456789,\"result\":{}}");
  /* Past INT64_MAX: refused without overflowing on the way (found by fuzz_jscan). */
  response_refused("{\"jsonrpc\":\"2.0\",\"id\":9223374073709551614,\"result\":{}}");
  response_refused("{\"jsonrpc\":\"2.0\",\"id\":-99999999999999999999999,\"result\":{}}");
  response_ok("{\"jsonrpc\":\"2.0\",\"id\":999999999999999999,\"result\":1}", 999999999999999999,
              "1");
  response_refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-1,\"message\":\"x\"}}");
  response_refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{},\"error\":{}}");
  response_refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{},\"extra\":1}");
  response_refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"id\":2,\"result\":{}}");
  response_refused("{\"jsonrpc\":\"2.0\",\"id\":1}");
  response_refused("{\"jsonrpc\":\"1.0\",\"id\":1,\"result\":{}}");
  response_refused("{\"id\":1,\"result\":{}}");
  response_refused("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}");
  response_refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}} x");
  response_refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}");
  response_refused("[{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}]");
  response_refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"a\":1,\"a\":2}}");
  response_refused("");
}
END_TEST

START_TEST(test_member_and_put_string) {
  const char *o =
      "{\"content\":[{\"type\":\"text\",\"text\":\"a,}]\\\"{\"}],\"isError\":true,\"x\":{\"isError\":1}}";
  const char *v = NULL;
  size_t n = 0;
  ck_assert(mcp__jscan_member(o, strlen(o), "isError", &v, &n));
  ck_assert_uint_eq(n, 4);
  ck_assert(strncmp(v, "true", 4) == 0);
  ck_assert(mcp__jscan_member(o, strlen(o), "x", &v, &n));
  ck_assert_uint_eq(n, strlen("{\"isError\":1}"));
  ck_assert(mcp__jscan_member(o, strlen(o), "content", &v, &n));
  ck_assert(!mcp__jscan_member(o, strlen(o), "type", &v, &n));
  ck_assert(!mcp__jscan_member("{}", 2, "isError", &v, &n));
  ck_assert(!mcp__jscan_member("[]", 2, "isError", &v, &n));
  /* Runs of backslashes before a quote: odd escapes it, even does not. */
  const char *b = "{\"a\\\\\":\"x\\\\\",\"s\":\"\\\\\\\",\\\"k\\\":1\",\"k\":2}";
  ck_assert(mcp__jscan_member(b, strlen(b), "k", &v, &n));
  ck_assert_uint_eq(n, 1);
  ck_assert(*v == '2');
  ck_assert(mcp__jscan_member(b, strlen(b), "a\\\\", &v, &n));
  ck_assert_uint_eq(n, strlen("\"x\\\\\""));
  ck_assert(!mcp__jscan_member("{\"k\":\"open", 11, "z", &v, &n)); /* unterminated */

  /* Every byte value, as json-c prints it. */
  char in[256], out[6 * 256 + 2];
  for (int i = 0; i < 256; i++) in[i] = (char)(i == 0 ? 1 : i);
  size_t w = mcp__jscan_put_string(out, in, 256);
  json_object *s = json_object_new_string_len(in, 256);
  size_t rn = 0;
  const char *ref = json_object_to_json_string_length(
      s, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &rn);
  ck_assert_uint_eq(w, rn);
  ck_assert(memcmp(out, ref, rn) == 0);
  json_object_put(s);
}
END_TEST

static Suite *jscan_suite(void) {
  Suite *s = suite_create("jscan");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_accepts);
  tcase_add_test(tc, test_refuses);
  tcase_add_loop_test(tc, test_differential, 0, 3);
  tcase_add_test(tc, test_word_boundaries);
  tcase_add_test(tc, test_responses);
  tcase_add_test(tc, test_member_and_put_string);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(jscan_suite()); }
