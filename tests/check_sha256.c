/* SPDX-License-Identifier: MIT */
/*
 * check_sha256.c: our SHA-256 against the FIPS 180-4 / NIST example vectors
 * and against OpenSSL on every length around the block and padding
 * boundaries (so names and cache files hashed before keep their values).
 */
#include "config.h"

#include <openssl/evp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "mcp_sha256.h"

static void hex(const unsigned char *md, char out[65]) {
  for (int i = 0; i < 32; i++) snprintf(out + 2 * i, 3, "%02x", md[i]);
}

static void check_vector(const void *data, size_t len, const char *want) {
  unsigned char md[32];
  char got[65];
  mcp__sha256(data, len, md);
  hex(md, got);
  ck_assert_str_eq(got, want);
}

START_TEST(test_nist_vectors) {
  check_vector("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  check_vector(NULL, 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  check_vector("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const char *m2 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  check_vector(m2, strlen(m2), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  const char *m3 =
      "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
  check_vector(m3, strlen(m3), "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  size_t n = 1000000;
  char *a = malloc(n);
  ck_assert_ptr_nonnull(a);
  memset(a, 'a', n);
  check_vector(a, n, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  free(a);
}
END_TEST

START_TEST(test_matches_openssl) {
  /* Every length 0..300 (one, two and several blocks, each side of the
   * 55/56-byte padding edge) with varied bytes, including NUL and 0xff. */
  unsigned char buf[300];
  uint32_t x = 0x12345678;
  for (size_t i = 0; i < sizeof(buf); i++) {
    x = x * 1103515245u + 12345u;
    buf[i] = (unsigned char)(x >> 16);
  }
  for (size_t len = 0; len <= sizeof(buf); len++) {
    unsigned char ours[32], theirs[EVP_MAX_MD_SIZE];
    unsigned int tlen = 0;
    mcp__sha256(buf, len, ours);
    ck_assert(EVP_Digest(buf, len, theirs, &tlen, EVP_sha256(), NULL));
    ck_assert_uint_eq(tlen, 32);
    ck_assert_msg(memcmp(ours, theirs, 32) == 0, "digest differs at length %zu", len);
  }
}
END_TEST

static Suite *sha256_suite(void) {
  Suite *s = suite_create("sha256");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_nist_vectors);
  tcase_add_test(tc, test_matches_openssl);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(sha256_suite()); }
