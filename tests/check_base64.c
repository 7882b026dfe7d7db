/* SPDX-License-Identifier: MIT */
/*
 * check_base64.c: lib/mcp_base64.c against the RFC 4648 section 10 test
 * vectors in both alphabets, padded and not, every byte value through
 * both alphabets, and the input the strict decoder refuses (characters of
 * the other alphabet, white space, wrong or excess padding, padding
 * inside, a lone final character, non-zero unused bits).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "mcp_base64.h"

static void enc_is(const char *in, mcp_b64 alpha, bool pad, const char *want) {
  char *got = mcp__base64_encode(in, strlen(in), alpha, pad);
  ck_assert_ptr_nonnull(got);
  ck_assert_str_eq(got, want);
  ck_assert_uint_eq(mcp__base64_len(strlen(in), pad), strlen(want));
  char buf[64];
  ck_assert_uint_eq(mcp__base64_encode_to(buf, in, strlen(in), alpha, pad), strlen(want));
  ck_assert_str_eq(buf, want);
  mcp__free(got);
}

static void dec_is(const char *in, mcp_b64 alpha, const char *want) {
  unsigned char *d = NULL;
  size_t n = 99;
  ck_assert_msg(mcp__base64_decode(in, strlen(in), alpha, &d, &n) == MCP_OK, "%s refused", in);
  ck_assert_uint_eq(n, strlen(want));
  ck_assert_str_eq((char *)d, want); /* NUL terminated */
  mcp__free(d);
}

static void dec_bad(const char *in, mcp_b64 alpha) {
  unsigned char *d = (unsigned char *)"x";
  size_t n = 99;
  ck_assert_msg(mcp__base64_decode(in, strlen(in), alpha, &d, &n) == MCP_EINVAL, "\"%s\" taken",
                in);
  ck_assert_ptr_null(d);
  ck_assert_uint_eq(n, 0);
}

START_TEST(rfc4648_vectors) {
  static const char *const v[][3] = {{"", "", ""},
                                     {"f", "Zg==", "Zg"},
                                     {"fo", "Zm8=", "Zm8"},
                                     {"foo", "Zm9v", "Zm9v"},
                                     {"foob", "Zm9vYg==", "Zm9vYg"},
                                     {"fooba", "Zm9vYmE=", "Zm9vYmE"},
                                     {"foobar", "Zm9vYmFy", "Zm9vYmFy"}};
  for (size_t i = 0; i < sizeof(v) / sizeof(*v); i++) {
    for (int a = 0; a < 2; a++) {
      mcp_b64 alpha = a ? MCP_B64_URL : MCP_B64_STD;
      enc_is(v[i][0], alpha, true, v[i][1]);
      enc_is(v[i][0], alpha, false, v[i][2]);
      dec_is(v[i][1], alpha, v[i][0]); /* padded */
      dec_is(v[i][2], alpha, v[i][0]); /* or not */
    }
  }
  /* The two alphabets differ in 62 and 63 only. */
  enc_is("\xfb\xff\xbf", MCP_B64_STD, true, "+/+/");
  enc_is("\xfb\xff\xbf", MCP_B64_URL, true, "-_-_");
  enc_is("\xfb\xff", MCP_B64_URL, false, "-_8");
  dec_is("-_-_", MCP_B64_URL, "\xfb\xff\xbf");
  dec_is("+/+/", MCP_B64_STD, "\xfb\xff\xbf");
}
END_TEST

START_TEST(every_byte) {
  unsigned char all[256];
  for (int i = 0; i < 256; i++) all[i] = (unsigned char)i;
  for (size_t len = 0; len <= 256; len += 1 + len / 8) {
    for (int a = 0; a < 4; a++) {
      mcp_b64 alpha = a & 1 ? MCP_B64_URL : MCP_B64_STD;
      char *e = mcp__base64_encode(all + 256 - len, len, alpha, a & 2);
      ck_assert_ptr_nonnull(e);
      unsigned char *d = NULL;
      size_t n = 0;
      ck_assert_int_eq(mcp__base64_decode(e, strlen(e), alpha, &d, &n), MCP_OK);
      ck_assert_uint_eq(n, len);
      ck_assert(len == 0 || memcmp(d, all + 256 - len, len) == 0);
      mcp__free(d);
      mcp__free(e);
    }
  }
}
END_TEST

START_TEST(strict_decode) {
  /* The other alphabet's characters. */
  dec_bad("+/+/", MCP_B64_URL);
  dec_bad("-_-_", MCP_B64_STD);
  /* White space, line breaks, other characters, NUL. */
  dec_bad("Zm9v YmFy", MCP_B64_STD);
  dec_bad("Zm9v\nYmFy", MCP_B64_STD);
  dec_bad("Zm9vYmFy\r\n", MCP_B64_STD);
  dec_bad(" Zm9v", MCP_B64_STD);
  dec_bad("Zm9*", MCP_B64_STD);
  unsigned char *d = NULL;
  size_t n = 0;
  ck_assert_int_eq(mcp__base64_decode("Zm\0v", 4, MCP_B64_STD, &d, &n), MCP_EINVAL);
  /* Padding: excess, too little for the group, inside, alone. */
  dec_bad("Zg=", MCP_B64_STD);
  dec_bad("Zg===", MCP_B64_STD);
  dec_bad("Zm9vYg=====", MCP_B64_STD);
  dec_bad("Zm8==", MCP_B64_STD);
  dec_bad("Zm9v====", MCP_B64_STD);
  dec_bad("Zg==Zg==", MCP_B64_STD);
  dec_bad("Z=g=", MCP_B64_STD);
  dec_bad("=", MCP_B64_STD);
  dec_bad("====", MCP_B64_STD);
  /* One character alone in its group is no whole byte. */
  dec_bad("Z", MCP_B64_STD);
  dec_bad("Zm9vY", MCP_B64_URL);
  dec_bad("Zm9vY===", MCP_B64_STD);
  /* Non-zero unused bits: "Zh" and "Zm9=" are not the encodings of
   * "f" and "fo" ("Zg", "Zm8"). */
  dec_bad("Zh==", MCP_B64_STD);
  dec_bad("Zh", MCP_B64_URL);
  dec_bad("Zm9=", MCP_B64_STD);
}
END_TEST

static Suite *base64_suite(void) {
  Suite *s = suite_create("base64");
  TCase *tc = tcase_create("base64");
  tcase_add_test(tc, rfc4648_vectors);
  tcase_add_test(tc, every_byte);
  tcase_add_test(tc, strict_decode);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(base64_suite()); }
