/* SPDX-License-Identifier: MIT */
/*
 * check_result.c: mcp_tool_result_text(), the text of a CallToolResult.
 *
 * Table cases pin the contract (escapes, surrogates, several items, items
 * skipped, errors) and which documents the scanner's fast path takes.  A
 * differential run compares the function, and the fast path alone, with the
 * reference of fuzz/result_ref.h (json-c's tree) over generated
 * CallToolResults and mutations of them: same status, same text, byte for
 * byte.
 */
#include "config.h"

#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "mcp_int.h"
#include "mcp_jscan.h"
#include "mcpconn.h"
#include "result_ref.h"

/* ---- helpers ------------------------------------------------------------------ */

/* The fast path alone: true with its text in a malloc'd *out. */
static bool fast(const char *in, size_t len, char **out, size_t *n) {
  /* Exactly len + 1 bytes, so that ASan sees any write past the bound. */
  char *buf = malloc(len + 1);
  ck_assert_ptr_nonnull(buf);
  if (!mcp__jscan_tool_text(in, len, buf, n)) {
    free(buf);
    *out = NULL;
    return false;
  }
  ck_assert_uint_le(*n, len);
  ck_assert_int_eq(buf[*n], '\0');
  *out = buf;
  return true;
}

/* |in| (len bytes) gives |want| (want_len bytes); |fast_path|: the scanner
 * takes it itself. */
static void text_is_n(const char *in, size_t len, const char *want, size_t want_len,
                      bool fast_path) {
  char *text = NULL;
  size_t n = 12345;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_tool_result_text(in, len, &text, &n, &err);
  ck_assert_msg(st == MCP_OK, "%s: %s (%s)", in, mcp_strerror(st), err.message ? err.message : "");
  ck_assert_ptr_nonnull(text);
  ck_assert_uint_eq(n, want_len);
  ck_assert_msg(memcmp(text, want, want_len) == 0, "%s: got '%s', want '%s'", in, text, want);
  ck_assert_int_eq(text[n], '\0');
  mcp_free(text);
  mcp_error_clear(&err);

  char *ref = NULL;
  size_t rn = 0;
  ck_assert_int_eq(ref_text(in, len, &ref, &rn), MCP_OK);
  ck_assert_uint_eq(rn, want_len);
  ck_assert(memcmp(ref, want, rn) == 0);
  free(ref);

  char *f = NULL;
  size_t fn = 0;
  bool took = fast(in, len, &f, &fn);
  ck_assert_msg(took == fast_path, "%s: fast path %s", in, took ? "took it" : "refused it");
  if (took) {
    ck_assert_uint_eq(fn, want_len);
    ck_assert(memcmp(f, want, fn) == 0);
  }
  free(f);
}

static void text_is(const char *in, const char *want, bool fast_path) {
  text_is_n(in, strlen(in), want, strlen(want), fast_path);
}

/* |in| is an error whose message contains |what|. */
static void fails(const char *in, size_t len, mcp_status want, const char *what) {
  char *text = (char *)1;
  size_t n = 99;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_tool_result_text(in, len, &text, &n, &err);
  ck_assert_msg(st == want, "'%s': %s, want %s", in ? in : "(null)", mcp_strerror(st),
                mcp_strerror(want));
  ck_assert_ptr_null(text);
  ck_assert_uint_eq(n, 0);
  ck_assert_int_eq(err.status, want);
  ck_assert_ptr_nonnull(err.message);
  ck_assert_msg(strstr(err.message, what), "'%s': message '%s' lacks '%s'", in ? in : "(null)",
                err.message, what);
  mcp_error_clear(&err);
  if (in && want == MCP_EPROTO) {
    char *ref = NULL;
    size_t rn = 0;
    size_t l = len == (size_t)-1 ? strlen(in) : len;
    ck_assert_int_eq(ref_text(in, l, &ref, &rn), MCP_EPROTO);
    char *f = NULL;
    size_t fn = 0;
    ck_assert(!fast(in, l, &f, &fn));
  }
}

#define FAILS(in, what) fails(in, (size_t)-1, MCP_EPROTO, what)

/* ---- table cases ----------------------------------------------------------------- */

START_TEST(test_texts) {
  text_is("{\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}", "hi", true);
  text_is("{\"content\":[{\"type\":\"text\",\"text\":\"hi\"}],\"isError\":false}", "hi", true);
  text_is("{\"content\":[{\"type\":\"text\",\"text\":\"boom\"}],\"isError\":true}", "boom", true);
  /* Escapes, decoded. */
  text_is("{\"content\":[{\"type\":\"text\",\"text\":\"a\\nb\\t\\\"q\\\" \\\\ \\/ \\b\\f\\r\"}]}",
          "a\nb\t\"q\" \\ / \b\f\r", true);
  text_is("{\"content\":[{\"type\":\"text\",\"text\":\"\\u0041\\u00e9\\u20AC\\u001f\"}]}",
          "A\xc3\xa9\xe2\x82\xac\x1f", true);
  text_is("{\"content\":[{\"type\":\"text\",\"text\":\"\\ud83d\\ude00|\\uDBFF\\uDFFF\"}]}",
          "\xf0\x9f\x98\x80|\xf4\x8f\xbf\xbf", true);
  text_is(
      "{\"content\":[{\"type\":\"text\",\"text\":\"h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"}]}",
      "h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", true);
  /* Unpaired surrogates become U+FFFD (json-c's reading; the fast path
   * leaves them to it). */
  text_is("{\"content\":[{\"type\":\"text\",\"text\":\"a\\ud800b\"}]}",
          "a\xef\xbf\xbd"
          "b",
          false);
  text_is("{\"content\":[{\"type\":\"text\",\"text\":\"\\udc00\"}]}", "\xef\xbf\xbd", false);
  text_is("{\"content\":[{\"type\":\"text\",\"text\":\"\\ud800\\u0041\"}]}",
          "\xef\xbf\xbd"
          "A",
          false);
  /* A NUL inside the text is kept; *text_len counts it. */
  text_is_n("{\"content\":[{\"type\":\"text\",\"text\":\"a\\u0000b\"}]}",
            strlen("{\"content\":[{\"type\":\"text\",\"text\":\"a\\u0000b\"}]}"), "a\0b", 3, true);
  /* Several items, joined with \n; other types and non-objects skipped. */
  text_is("{\"content\":[{\"type\":\"text\",\"text\":\"one\"},"
          "{\"type\":\"image\",\"data\":\"aGk=\",\"mimeType\":\"image/png\"},"
          "{\"type\":\"text\",\"text\":\"two\"},1,\"s\",null,[],{},"
          "{\"type\":\"resource\",\"resource\":{\"uri\":\"x:/\",\"text\":\"no\"}},"
          "{\"type\":\"text\",\"text\":\"\"},{\"type\":\"text\",\"text\":\"three\"}]}",
          "one\ntwo\n\nthree", true);
  text_is("{\"content\":[{\"type\":\"image\",\"data\":\"aGk=\",\"text\":\"not me\"}]}", "", true);
  text_is("{\"content\":[{\"text\":\"no type\"}]}", "", true);
  text_is("{\"content\":[{\"type\":\"Text\",\"text\":\"x\"},{\"type\":5,\"text\":\"y\"},"
          "{\"type\":[\"text\"],\"text\":\"z\"},{\"type\":\"text \",\"text\":\"w\"}]}",
          "", true);
  text_is("{\"content\":[{\"type\":\"image\",\"text\":5}]}", "", true); /* not a text item */
  text_is("{\"content\":[]}", "", true);
  text_is("{\"content\":[],\"isError\":true}", "", true);
  /* Members in any order; escaped keys and type. */
  text_is("{\"isError\":false,\"content\":[{\"text\":\"first\",\"annotations\":{\"priority\":1},"
          "\"type\":\"text\"},{\"_meta\":{},\"type\":\"text\",\"text\":\"second\"}],"
          "\"structuredContent\":{\"a\":[1,2.5,-3e2,true,null,{\"b\":\"\\u00e9\"}]}}",
          "first\nsecond", true);
  text_is("{\"isError\":false,\"content\":[{\"text\":\"first\",\"annotations\":{\"priority\":1},"
          "\"type\":\"text\"},{\"_meta\":{},\"type\":\"text\",\"text\":\"second\"}],"
          "\"structuredContent\":{\"a\":[1,2.5,-3e2,true,null,{\"b\":\"\xc3\xa9\"}]}}",
          "first\nsecond", true);
  text_is("{\"\\u0063ontent\":[{\"t\\u0079pe\":\"t\\u0065xt\",\"te\\u0078t\":\"esc\"}]}", "esc",
          true);
  /* White space everywhere. */
  text_is(" \r\n\t{ \"content\" :\n [ { \"type\" : \"text\" , \"text\" : \" x \" } ,\t"
          "{\"type\":\"text\",\"text\":\"y\"} ] , \"isError\" : false } \n",
          " x \ny", true);
  /* Repeated keys: json-c keeps the last; the scanner leaves them to it. */
  text_is(
      "{\"content\":[{\"type\":\"text\",\"text\":\"a\"}],\"content\":[{\"type\":\"text\",\"text\":\"b\"}]}",
      "b", false);
  text_is("{\"content\":[{\"type\":\"text\",\"text\":\"a\",\"text\":\"b\"}]}", "b", false);
  text_is("{\"content\":[{\"type\":\"image\",\"type\":\"text\",\"text\":\"b\"}]}", "b", false);
  text_is("{\"content\":[{\"type\":\"text\",\"text\":5,\"text\":\"b\"}]}", "b", false);
  /* Values only checked: any number, escape or repeated key. */
  text_is("{\"n\":12345678901234567890,\"m\":-0,\"e\":1e400,\"o\":{\"a\":1,\"a\":2},"
          "\"content\":[{\"type\":\"text\",\"text\":\"n\",\"x\":\"\\ud800\"}]}",
          "n", true);
  text_is("{\"\\u00e9\\ud83d\\ude00\":1,\"content\":[{\"type\":\"text\",\"text\":\"k\"}]}", "k",
          true);
  /* json-c cuts keys at a NUL: "content\u0000x" is "content" there.  The
   * fast path leaves such keys to it. */
  text_is("{\"content\\u0000x\":[{\"type\":\"text\",\"text\":\"cut\"}]}", "cut", false);
  text_is("{\"content\":[{\"type\\u0000\":\"text\",\"text\":\"x\"}]}", "x", false);
  text_is("{\"\\ud800\":1,\"content\":[]}", "", false);
  /* Deep values elsewhere: past the fast path's depth, within json-c's. */
  char deep[1024];
  int k = sprintf(deep, "{\"content\":[{\"type\":\"text\",\"text\":\"d\"}],\"x\":");
  for (int i = 0; i < 100; i++) deep[k++] = '[';
  for (int i = 0; i < 100; i++) deep[k++] = ']';
  strcpy(deep + k, "}");
  text_is(deep, "d", false);
}
END_TEST

START_TEST(test_lengths) {
  /* |len| bounds the text: what follows is not read. */
  const char *doc = "{\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}GARBAGE";
  size_t n = strlen(doc) - 7;
  text_is_n(doc, n, "hi", 2, true);
  fails(doc, (size_t)-1, MCP_EPROTO, "not valid JSON");
  /* A NUL byte inside |len| is not the end of the text. */
  char withnul[] = "{\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}\0 ";
  fails(withnul, sizeof(withnul) - 1, MCP_EPROTO, "JSON");
  /* *text_len may be NULL. */
  char *text = NULL;
  ck_assert_int_eq(mcp_tool_result_text("{\"content\":[{\"type\":\"text\",\"text\":\"x\"}]}",
                                        (size_t)-1, &text, NULL, NULL),
                   MCP_OK);
  ck_assert_str_eq(text, "x");
  mcp_free(text);
  /* A big result with a small text (the buffer is trimmed) and a big text. */
  size_t big = 1 << 20;
  char *img = malloc(big + 200);
  ck_assert_ptr_nonnull(img);
  int h = sprintf(img, "{\"content\":[{\"type\":\"image\",\"mimeType\":\"image/png\",\"data\":\"");
  memset(img + h, 'A', big);
  strcpy(img + h + big, "\"},{\"type\":\"text\",\"text\":\"caption\"}]}");
  text_is(img, "caption", true);
  h = sprintf(img, "{\"content\":[{\"type\":\"text\",\"text\":\"");
  memset(img + h, 'A', big);
  strcpy(img + h + big, "\"},{\"type\":\"text\",\"text\":\"caption\"}]}");
  char *want = malloc(big + 16);
  ck_assert_ptr_nonnull(want);
  memset(want, 'A', big);
  memcpy(want + big, "\ncaption", 9);
  text_is(img, want, true);
  free(want);
  free(img);
}
END_TEST

START_TEST(test_errors) {
  fails(NULL, 0, MCP_EINVAL, "result_json");
  ck_assert_int_eq(mcp_tool_result_text("{}", 2, NULL, NULL, NULL), MCP_EINVAL);
  /* Not JSON, or more than one value. */
  FAILS("", "not valid JSON");
  FAILS("   ", "not valid JSON");
  FAILS("{", "not valid JSON");
  FAILS("{\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]", "not valid JSON");
  FAILS("{\"content\":[{\"type\":\"text\",\"text\":\"hi\"}],}", "not valid JSON");
  FAILS("{\"content\":[{\"type\":\"text\",\"text\":\"hi\"},]}", "not valid JSON");
  FAILS("{\"content\":[{\"type\":\"text\",\"text\":\"hi\"}] \"x\":1}", "not valid JSON");
  FAILS("{\"x\":tru,\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}", "not valid JSON");
  FAILS("{\"x\":01,\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}", "not valid JSON");
  FAILS("{\"content\":[{\"type\":\"text\",\"text\":\"hi\\x\"}]}", "not valid JSON");
  FAILS("{\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}{}", "not valid JSON");
  FAILS("{\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]} x", "not valid JSON");
  FAILS("{content:[{\"type\":\"text\",\"text\":\"hi\"}]}", "not valid JSON");
  /* What json-c's strict mode still takes. */
  FAILS("{'content':[{\"type\":\"text\",\"text\":\"hi\"}]}", "not valid JSON");
  FAILS("{\"content\":[{\"type\":\"text\",\"text\":\"a\tb\"}]}", "not valid JSON");
  FAILS("{\"content\":[{\"type\":\"text\",\"text\":\"a\x01\"}]}", "not valid JSON");
  FAILS("{\"x\":NaN,\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}", "not valid JSON");
  FAILS("{\"x\":-Infinity,\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}", "not valid JSON");
  FAILS("{\"x\":1.,\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}", "not valid JSON");
  /* Nesting: json-c's limit, and the validator's own. */
  char deep[1200];
  for (int depth = 200; depth <= 500; depth += 300) {
    int k = sprintf(deep, "{\"content\":[],\"x\":");
    for (int i = 0; i < depth; i++) deep[k++] = '[';
    for (int i = 0; i < depth; i++) deep[k++] = ']';
    strcpy(deep + k, "}");
    FAILS(deep, "not valid JSON");
  }
  FAILS("// {\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}", "not valid JSON");
  /* Not UTF-8, in the text or anywhere else. */
  FAILS("{\"content\":[{\"type\":\"text\",\"text\":\"\xff\"}]}", "UTF-8");
  FAILS("{\"content\":[{\"type\":\"text\",\"text\":\"\xed\xa0\x80\"}]}", "UTF-8");
  FAILS("{\"content\":[{\"type\":\"text\",\"text\":\"\xc0\xaf\"}]}", "UTF-8");
  FAILS("{\"x\":\"\xe2\x82\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}", "UTF-8");
  /* JSON, but not a CallToolResult. */
  FAILS("null", "not a JSON object");
  FAILS(" [ ] ", "not a JSON object");
  FAILS("\"content\"", "not a JSON object");
  FAILS("42", "not a JSON object");
  FAILS("[{\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}]", "not a JSON object");
  FAILS("{}", "no \"content\"");
  FAILS("{\"isError\":false}", "no \"content\"");
  FAILS("{\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}}", "no \"content\"");
  FAILS("{\"content\":{\"type\":\"text\",\"text\":\"hi\"}}", "not an array");
  FAILS("{\"content\":\"hi\"}", "not an array");
  FAILS("{\"content\":null}", "not an array");
  FAILS("{\"content\":[{\"type\":\"text\"}]}", "content[0]");
  FAILS("{\"content\":[{\"type\":\"image\"},{\"type\":\"text\",\"text\":5}]}", "content[1]");
  FAILS("{\"content\":[{\"type\":\"text\",\"text\":null}]}", "content[0]");
  FAILS("{\"content\":[{\"type\":\"text\",\"text\":[\"hi\"]}]}", "content[0]");
  FAILS("{\"content\":[{\"type\":\"text\",\"text\":\"ok\"},{\"text\":{},\"type\":\"text\"}]}",
        "content[1]");
}
END_TEST

/* Strings are read eight bytes at a time: a byte that needs a look at every
 * offset of every length, in the text, the type and a skipped value. */
START_TEST(test_word_boundaries) {
  static const char *specials[] = {"\\\"",
                                   "\\\\",
                                   "\\n",
                                   "\\/",
                                   "\\u00e9",
                                   "\\ud83d\\ude00",
                                   "\xc3\xa9",
                                   "\xe2\x82\xac",
                                   "\xf0\x9f\x98\x80",
                                   "\x7f",
                                   "~",
                                   " "};
  static const char *bad[] = {"\x01", "\x1f", "\xff", "\xc3", "\x80", "\"", "\\x"};
  char doc[256], str[128];
  for (int n = 0; n < 24; n++) {
    for (int at = 0; at <= n; at++) {
      for (size_t k = 0; k < sizeof(specials) / sizeof(specials[0]) + sizeof(bad) / sizeof(bad[0]);
           k++) {
        bool good = k < sizeof(specials) / sizeof(specials[0]);
        const char *sp = good ? specials[k] : bad[k - sizeof(specials) / sizeof(specials[0])];
        snprintf(str, sizeof(str), "%.*s%s%.*s", at, "abcdefghijklmnopqrstuvwxyz", sp, n - at,
                 "ABCDEFGHIJKLMNOPQRSTUVWXYZ");
        for (int where = 0; where < 3; where++) {
          if (where == 0)
            snprintf(doc, sizeof(doc), "{\"content\":[{\"type\":\"text\",\"text\":\"%s\"}]}", str);
          else if (where == 1)
            snprintf(doc, sizeof(doc), "{\"content\":[{\"type\":\"%s\",\"text\":\"t\"}]}", str);
          else
            snprintf(doc, sizeof(doc),
                     "{\"x\":[\"%s\"],\"content\":[{\"type\":\"text\",\"text\":\"t\"}]}", str);
          char *ref = NULL;
          size_t rn = 0;
          mcp_status rst = ref_text(doc, strlen(doc), &ref, &rn);
          ck_assert_int_eq(rst, good ? MCP_OK : MCP_EPROTO);
          if (good) text_is_n(doc, strlen(doc), ref, rn, true);
          else fails(doc, (size_t)-1, MCP_EPROTO, "");
          free(ref);
        }
      }
    }
  }
}
END_TEST

/* Every allocation failing in turn: MCP_ENOMEM and nothing leaked, or the text. */
START_TEST(test_out_of_memory) {
  const char *docs[] = {
      "{\"content\":[{\"type\":\"text\",\"text\":\"fast\"}]}",
      "{\"content\":[{\"type\":\"text\",\"text\":\"\\ud800 slow\"}]}",
      "{\"content\":[{\"type\":\"text\"}]}",
  };
  for (size_t d = 0; d < sizeof(docs) / sizeof(docs[0]); d++) {
    for (long n = 0; n < 8; n++) {
      char *text = NULL;
      mcp_error err = MCP_ERROR_INIT;
      mcp__alloc_fail_after(n);
      mcp_status st = mcp_tool_result_text(docs[d], (size_t)-1, &text, NULL, &err);
      mcp__alloc_fail_after(-1);
      if (st == MCP_ENOMEM) {
        ck_assert_ptr_null(text);
      } else if (d < 2) {
        ck_assert_int_eq(st, MCP_OK);
        ck_assert_ptr_nonnull(text);
      } else {
        ck_assert_int_eq(st, MCP_EPROTO);
      }
      if (n == 0) ck_assert_int_eq(st, MCP_ENOMEM);
      mcp_free(text);
      mcp_error_clear(&err);
    }
  }
}
END_TEST

/* ---- differential run against the reference -------------------------------------- */

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
  static const char *ws[] = {"", "", "", "", " ", "\n", "\t", "\r\n  "};
  puts_(b, ws[rnd(8)]);
}

static void gen_string(sbuf *b) {
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
                                 "\\u20ac",
                                 "\\ud83d\\ude00",
                                 "\\uD83D\\uDE00",
                                 "\xc3\xa9",
                                 "\xe2\x82\xac",
                                 "\xf0\x9f\x98\x80",
                                 "\x7f",
                                 "x",
                                 "\\ud800",
                                 "\\udc00",
                                 "\\ud800\\ud800",
                                 "\\ud800x",
                                 "\t",
                                 "\xff",
                                 "\xed\xa0\x80",
                                 "\\u0074",
                                 "{\\\"type\\\":\\\"text\\\"}",
                                 "\"text\":"};
  static const unsigned common = 25; /* the pieces before "\\ud800" */
  puts_(b, "\"");
  unsigned n = rnd(6);
  for (unsigned i = 0; i < n; i++)
    puts_(b, pieces[rnd(8) ? rnd(common) : rnd(sizeof(pieces) / sizeof(pieces[0]))]);
  puts_(b, "\"");
}

static void gen_value(sbuf *b, int depth) {
  static const char *nums[] = {
      "0",  "1",     "-1", "42", "0.5", "-2.25", "1e5", "2.5e-3", "1234567890123456789",
      "-0", "1e400", "100"};
  unsigned k = depth > 4 ? rnd(4) : rnd(7);
  gen_ws(b);
  switch (k) {
  case 0:
  case 3: gen_string(b); break;
  case 1: puts_(b, nums[rnd(12)]); break;
  case 2: puts_(b, rnd(3) == 0 ? "null" : rnd(2) ? "true" : "false"); break;
  case 4:
  case 5: {
    static const char *keys[] = {"\"a\"", "\"b\"", "\"text\"", "\"type\"", "\"uri\"", "\"a\""};
    unsigned n = rnd(4);
    puts_(b, "{");
    for (unsigned i = 0; i < n; i++) {
      if (i) puts_(b, ",");
      gen_ws(b);
      puts_(b, keys[rnd(6)]);
      gen_ws(b);
      puts_(b, ":");
      gen_value(b, depth + 1);
    }
    gen_ws(b);
    puts_(b, "}");
    break;
  }
  default: {
    unsigned n = rnd(4);
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

/* A key; sometimes spelt with escapes. */
static void gen_key(sbuf *b, const char *plain, const char *escaped) {
  gen_ws(b);
  puts_(b, rnd(12) ? plain : escaped);
  gen_ws(b);
  puts_(b, ":");
}

static void gen_item(sbuf *b) {
  gen_ws(b);
  if (rnd(12) == 0) {
    gen_value(b, 2);
    return;
  }
  puts_(b, "{");
  /* type, text and an extra member in a random order, any of them missing
   * or repeated now and then. */
  unsigned order[4] = {0, 1, 2, 3}, n = 2 + rnd(3);
  for (unsigned i = 0; i < 4; i++) {
    unsigned j = rnd(4), t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  bool first = true;
  for (unsigned i = 0; i < n; i++) {
    if (!first) puts_(b, ",");
    first = false;
    switch (order[i % 4]) {
    case 0: {
      static const char *types[] = {"\"text\"",  "\"text\"",       "\"text\"", "\"text\"",
                                    "\"image\"", "\"t\\u0065xt\"", "\"Text\"", "5",
                                    "null",      "\"text\\u0000\""};
      gen_key(b, "\"type\"", "\"t\\u0079pe\"");
      gen_ws(b);
      puts_(b, types[rnd(10)]);
      gen_ws(b);
      break;
    }
    case 1:
      gen_key(b, "\"text\"", "\"\\u0074ext\"");
      if (rnd(10)) {
        gen_ws(b);
        gen_string(b);
        gen_ws(b);
      } else {
        gen_value(b, 3);
      }
      break;
    case 2:
      gen_key(b, "\"annotations\"", "\"annot\\u0061tions\"");
      gen_value(b, 3);
      break;
    default:
      gen_key(b, rnd(2) ? "\"data\"" : "\"type\"", "\"_meta\"");
      gen_value(b, 3);
      break;
    }
  }
  gen_ws(b);
  puts_(b, "}");
  gen_ws(b);
}

static void gen_result(sbuf *b) {
  gen_ws(b);
  if (rnd(40) == 0) {
    gen_value(b, 0);
    return;
  }
  puts_(b, "{");
  unsigned n = rnd(4), at = rnd(n + 1);
  bool first = true;
  for (unsigned i = 0; i <= n; i++) {
    if (!first) puts_(b, ",");
    first = false;
    if (i == at && rnd(30)) {
      gen_key(b, "\"content\"", "\"\\u0063ontent\"");
      gen_ws(b);
      if (rnd(25) == 0) {
        gen_value(b, 1);
      } else {
        puts_(b, "[");
        unsigned items = rnd(5);
        for (unsigned k = 0; k < items; k++) {
          if (k) puts_(b, ",");
          gen_item(b);
        }
        gen_ws(b);
        puts_(b, "]");
      }
      gen_ws(b);
    } else {
      static const char *keys[] = {"\"isError\"", "\"structuredContent\"", "\"_meta\"",
                                   "\"content\"", "\"x\""};
      gen_key(b, keys[rnd(20) ? rnd(3) : 3 + rnd(2)], "\"is\\u0045rror\"");
      gen_value(b, 1);
    }
  }
  gen_ws(b);
  puts_(b, "}");
  gen_ws(b);
}

typedef struct tally {
  int docs, ok, fast;
} tally;

/* The function and the fast path against the reference on |in|. */
static void check_one(const char *in, size_t len, tally *ta) {
  ta->docs++;
  char *ref = NULL;
  size_t rn = 0;
  mcp_status rst = ref_text(in, len, &ref, &rn);
  char *text = NULL;
  size_t n = 0;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_tool_result_text(in, len, &text, &n, &err);
  ck_assert_msg(st == rst, "'%.*s': %s, the reference %s (%s)", (int)len, in, mcp_strerror(st),
                mcp_strerror(rst), err.message ? err.message : "");
  if (st == MCP_OK) {
    ta->ok++;
    ck_assert_msg(n == rn && memcmp(text, ref, n) == 0 && text[n] == '\0',
                  "'%.*s': text '%s', the reference '%s'", (int)len, in, text, ref);
  } else {
    ck_assert_ptr_null(text);
    ck_assert_ptr_nonnull(err.message);
  }
  char *f = NULL;
  size_t fn = 0;
  if (fast(in, len, &f, &fn)) {
    ta->fast++;
    ck_assert_msg(rst == MCP_OK, "'%.*s': the fast path took what the reference refuses", (int)len,
                  in);
    ck_assert_msg(fn == rn && memcmp(f, ref, fn) == 0, "'%.*s': fast '%s', the reference '%s'",
                  (int)len, in, f, ref);
  }
  free(f);
  mcp_free(text);
  mcp_error_clear(&err);
  free(ref);
}

START_TEST(test_differential) {
  rng_state = 0x7e57ULL + (uint64_t)_i * 7919;
  tally gen = {0}, mut = {0};
  int iters = test_under_valgrind() ? 400 : 4000;
  for (int iter = 0; iter < iters; iter++) {
    sbuf b = {0};
    gen_result(&b);
    check_one(b.p, b.len, &gen);
    /* Mutations: drop, duplicate, replace or insert one byte. */
    for (int m = 0; m < 6; m++) {
      char *c = malloc(b.len + 2);
      ck_assert_ptr_nonnull(c);
      memcpy(c, b.p, b.len);
      size_t n = b.len, at = b.len ? rnd((unsigned)b.len) : 0;
      static const char bytes[] = "{}[],:\"\\ 0-.eE+tfnu\x80\xc3\x01\x00";
      char nb = bytes[rnd(sizeof(bytes))];
      switch (m % 4) {
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
      check_one(c, n, &mut);
      free(c);
    }
    free(b.p);
  }
  fprintf(
      stderr,
      "measure: result differential: generated %d (%d ok, %d fast), mutated %d (%d ok, %d fast)\n",
      gen.docs, gen.ok, gen.fast, mut.docs, mut.ok, mut.fast);
  /* Both outcomes are exercised, and most good results take the fast path. */
  ck_assert_int_gt(gen.ok, gen.docs / 4);
  ck_assert_int_lt(gen.ok, gen.docs - gen.docs / 10);
  ck_assert_int_gt(gen.fast, gen.ok / 2);
  ck_assert_int_gt(mut.ok, 0);
}
END_TEST

static Suite *result_suite(void) {
  Suite *s = suite_create("result");
  TCase *tc = tcase_create("text");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_texts);
  tcase_add_test(tc, test_lengths);
  tcase_add_test(tc, test_errors);
  tcase_add_test(tc, test_word_boundaries);
  tcase_add_test(tc, test_out_of_memory);
  tcase_add_loop_test(tc, test_differential, 0, 3);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(result_suite()); }
