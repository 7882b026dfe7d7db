/* SPDX-License-Identifier: MIT */
/*
 * check_names.c: tool-name folding, the 64-byte cap with its hash, prefix
 * de-duplication, and collision handling that does not depend on input
 * order.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "mcp_names.h"

static char *fold(const char *s) {
  char *out = NULL;
  ck_assert_int_eq(mcp__names_fold(s, &out), MCP_OK);
  return out;
}

static char *pub(const char *server, const char *tool) {
  char *out = NULL;
  ck_assert_int_eq(mcp__names_public(server, tool, &out), MCP_OK);
  ck_assert_msg(mcp__names_is_valid(out), "invalid public name '%s'", out);
  return out;
}

START_TEST(test_fold_table) {
  static const struct {
    const char *in, *out;
  } cases[] = {
      {"My Server!", "my_server"},
      {"GitHub", "github"},
      {"already_fine", "already_fine"},
      {"__a__b__", "a_b"},
      {"a--b", "a_b"},
      {"a - b", "a_b"},
      {"Tool123", "tool123"},
      {"a b\tc\nd", "a_b_c_d"},
      {"h\xc3\xa9llo w\xc3\xb6rld", "h_llo_w_rld"},
      {"!!!", ""},
      {"___", ""},
      {"", ""},
      {"x", "x"},
      {"-x-", "x"},
      {"dots.and:colons", "dots_and_colons"},
      {"CamelCaseName", "camelcasename"},
      {"9lives", "9lives"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char *got = fold(cases[i].in);
    ck_assert_msg(strcmp(got, cases[i].out) == 0, "fold('%s') = '%s', want '%s'", cases[i].in, got,
                  cases[i].out);
    mcp__free(got);
  }
  char *n = fold(NULL);
  ck_assert_str_eq(n, "");
  mcp__free(n);
}
END_TEST

START_TEST(test_public_names) {
  static const struct {
    const char *server, *tool, *out;
  } cases[] = {
      {"My Server!", "Search Repos", "mcp__my_server_search_repos"},
      {"github", "github_search", "mcp__github_search"},
      {"GitHub", "GITHUB-search", "mcp__github_search"},
      {"github", "github", "mcp__github_github"},
      {"github", "github_", "mcp__github_github"},
      {"git", "github_search", "mcp__git_github_search"},
      {"", "", "mcp__server_tool"},
      {"!!", "??", "mcp__server_tool"},
      {"db", "", "mcp__db_tool"},
      {"", "run", "mcp__server_run"},
      {"server", "server_x", "mcp__server_x"},
      {"a.b", "a_b_c", "mcp__a_b_c"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char *got = pub(cases[i].server, cases[i].tool);
    ck_assert_msg(strcmp(got, cases[i].out) == 0, "public('%s','%s') = '%s', want '%s'",
                  cases[i].server, cases[i].tool, got, cases[i].out);
    mcp__free(got);
  }
}
END_TEST

static bool is_base36(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'z'))) return false;
  return true;
}

START_TEST(test_length_cap) {
  /* "mcp__" + "s" + "_" + 57 = 64: kept as is. */
  char tool[200];
  memset(tool, 't', 57);
  tool[57] = '\0';
  char *exact = pub("s", tool);
  ck_assert_uint_eq(strlen(exact), 64);
  ck_assert(strncmp(exact, "mcp__s_ttt", 10) == 0);
  ck_assert(strchr(exact + 7, '_') == NULL);
  mcp__free(exact);

  /* One more byte: cut and hashed. */
  memset(tool, 't', 58);
  tool[58] = '\0';
  char *a = pub("s", tool);
  char *a2 = pub("s", tool);
  ck_assert_uint_le(strlen(a), 64);
  ck_assert_str_eq(a, a2); /* deterministic */
  size_t n = strlen(a);
  ck_assert_int_eq(a[n - 9], '_');
  ck_assert(is_base36(a + n - 8, 8));
  ck_assert(strncmp(a, "mcp__s_", 7) == 0);

  /* Same first 55 bytes, different tails: different names. */
  memset(tool, 't', 150);
  tool[150] = '\0';
  char *b = pub("s", tool);
  tool[149] = 'u';
  char *c = pub("s", tool);
  ck_assert_uint_le(strlen(b), 64);
  ck_assert_uint_le(strlen(c), 64);
  ck_assert_str_ne(b, c);
  ck_assert(strncmp(b, c, 55) == 0);
  ck_assert_str_ne(a, b);

  /* A cut that would end in "_" drops it. */
  memset(tool, 0, sizeof(tool));
  memset(tool, 'x', 47);
  strcat(tool, "_yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy");
  char *d = pub("s", tool); /* "mcp__s_" (7) + 47 x = 54, "_" at 55 */
  ck_assert(strstr(d, "x__") == NULL);
  ck_assert_uint_eq(strlen(d), 54 + 9);
  mcp__free(a);
  mcp__free(a2);
  mcp__free(b);
  mcp__free(c);
  mcp__free(d);

  /* Many distinct long names stay distinct. */
  char **seen = calloc(500, sizeof(char *));
  for (int i = 0; i < 500; i++) {
    char t[160];
    snprintf(t, sizeof(t), "%0120d_tool", i);
    seen[i] = pub("a_very_long_server_name", t);
    ck_assert_uint_le(strlen(seen[i]), 64);
    for (int j = 0; j < i; j++) ck_assert_str_ne(seen[i], seen[j]);
  }
  for (int i = 0; i < 500; i++) mcp__free(seen[i]);
  free(seen);
}
END_TEST

static mcp_named_tool *assign(const mcp_tool_origin *in, size_t n, size_t *nout) {
  mcp_named_tool *out = NULL;
  ck_assert_int_eq(mcp__names_assign(in, n, &out, nout), MCP_OK);
  for (size_t i = 0; i < *nout; i++) {
    ck_assert_msg(mcp__names_is_valid(out[i].name), "invalid '%s'", out[i].name);
    if (i) ck_assert_int_lt(strcmp(out[i - 1].name, out[i].name), 0);
  }
  return out;
}

static const mcp_named_tool *by_origin(const mcp_named_tool *v, size_t n, const char *server,
                                       const char *tool) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(v[i].server, server) == 0 && strcmp(v[i].tool, tool) == 0) return &v[i];
  ck_abort_msg("no entry for %s/%s", server, tool);
  return NULL;
}

START_TEST(test_collisions) {
  const mcp_tool_origin in[] = {
      {"a", "x_y"},  {"a", "x-y"},
      {"a", "X Y"},  {"a", "x_y_2"}, /* takes "_2" first, so the losers skip it */
      {"a_b", "c"},  {"a", "b_c"},   /* split differently, same name */
      {"z", "only"},
  };
  size_t n = 0;
  mcp_named_tool *v = assign(in, sizeof(in) / sizeof(in[0]), &n);
  ck_assert_uint_eq(n, 7);
  /* Origin keys: "a\0X Y" < "a\0x-y" < "a\0x_y". */
  ck_assert_str_eq(by_origin(v, n, "a", "X Y")->name, "mcp__a_x_y");
  ck_assert(!by_origin(v, n, "a", "X Y")->renamed);
  ck_assert_str_eq(by_origin(v, n, "a", "x_y_2")->name, "mcp__a_x_y_2");
  ck_assert_str_eq(by_origin(v, n, "a", "x-y")->name, "mcp__a_x_y_3");
  ck_assert(by_origin(v, n, "a", "x-y")->renamed);
  ck_assert_str_eq(by_origin(v, n, "a", "x_y")->name, "mcp__a_x_y_4");
  /* "a\0b_c" < "a_b\0c" because NUL sorts first. */
  ck_assert_str_eq(by_origin(v, n, "a", "b_c")->name, "mcp__a_b_c");
  ck_assert_str_eq(by_origin(v, n, "a_b", "c")->name, "mcp__a_b_c_2");
  ck_assert_str_eq(by_origin(v, n, "z", "only")->name, "mcp__z_only");
  /* Each entry points back at its input. */
  for (size_t i = 0; i < n; i++) {
    ck_assert_str_eq(in[v[i].index].server, v[i].server);
    ck_assert_str_eq(in[v[i].index].tool, v[i].tool);
  }
  mcp__names_free(v, n);
}
END_TEST

START_TEST(test_duplicates_and_empty) {
  const mcp_tool_origin in[] = {
      {"s", "t"}, {"s", "t"}, {"s", "t"}, {NULL, NULL}, {"", ""},
  };
  size_t n = 0;
  mcp_named_tool *v = assign(in, 5, &n);
  ck_assert_uint_eq(n, 2);
  ck_assert_str_eq(v[0].name, "mcp__s_t");
  ck_assert_uint_eq(v[0].index, 0); /* the first copy */
  ck_assert_str_eq(v[1].name, "mcp__server_tool");
  mcp__names_free(v, n);

  ck_assert_int_eq(mcp__names_assign(NULL, 0, &v, &n), MCP_OK);
  ck_assert_ptr_null(v);
  ck_assert_uint_eq(n, 0);
  ck_assert_int_eq(mcp__names_assign(NULL, 1, &v, &n), MCP_EINVAL);
}
END_TEST

START_TEST(test_long_collisions) {
  /* Long names that collide get a suffix that still fits in 64 bytes. */
  char t1[200], t2[200];
  memset(t1, 'q', 120);
  t1[120] = '\0';
  memcpy(t2, t1, 121);
  t2[0] = 'Q'; /* folds the same, sorts first */
  const mcp_tool_origin in[] = {{"srv", t1}, {"srv", t2}, {"SRV", t1}};
  size_t n = 0;
  mcp_named_tool *v = assign(in, 3, &n);
  ck_assert_uint_eq(n, 3);
  const mcp_named_tool *w = by_origin(v, n, "SRV", t1); /* "S" < "s" */
  ck_assert(!w->renamed);
  ck_assert_uint_eq(strlen(w->name), 64);
  const mcp_named_tool *l1 = by_origin(v, n, "srv", t2);
  const mcp_named_tool *l2 = by_origin(v, n, "srv", t1);
  ck_assert(l1->renamed && l2->renamed);
  ck_assert_uint_le(strlen(l1->name), 64);
  ck_assert_uint_le(strlen(l2->name), 64);
  ck_assert(strlen(l1->name) > 2 && strcmp(l1->name + strlen(l1->name) - 2, "_2") == 0);
  ck_assert(strcmp(l2->name + strlen(l2->name) - 2, "_3") == 0);
  mcp__names_free(v, n);
}
END_TEST

/* Serialises an assignment (without |index|) for byte comparison. */
static char *serialise(const mcp_named_tool *v, size_t n) {
  size_t cap = 1;
  for (size_t i = 0; i < n; i++)
    cap += strlen(v[i].name) + strlen(v[i].server) + strlen(v[i].tool) + 8;
  char *s = calloc(1, cap);
  for (size_t i = 0; i < n; i++) {
    strcat(s, v[i].name);
    strcat(s, "|");
    strcat(s, v[i].server);
    strcat(s, "|");
    strcat(s, v[i].tool);
    strcat(s, v[i].renamed ? "|r\n" : "|-\n");
  }
  return s;
}

static uint64_t rng_next(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

START_TEST(test_order_independent) {
  static char longtool[3][130];
  for (int i = 0; i < 3; i++) {
    memset(longtool[i], 'L', 120);
    longtool[i][120] = (char)('a' + i);
    longtool[i][121] = '\0';
  }
  mcp_tool_origin in[] = {
      {"github", "search"},
      {"github", "github_search"},
      {"GitHub", "Search"},
      {"git-hub", "search"},
      {"git_hub", "search"},
      {"a", "x_y"},
      {"a", "x-y"},
      {"a", "X Y"},
      {"a", "x_y_2"},
      {"a_b", "c"},
      {"a", "b_c"},
      {"db", "query"},
      {"db", "query"},
      {"db", "Query!"},
      {"", ""},
      {"!!", "??"},
      {"srv", longtool[0]},
      {"srv", longtool[1]},
      {"SRV", longtool[0]},
      {"srv", longtool[2]},
      {"x", "tool"},
      {"x", ""},
      {"x", "x"},
      {"x", "x_tool"},
  };
  size_t n = sizeof(in) / sizeof(in[0]);
  size_t nref = 0;
  mcp_named_tool *ref = assign(in, n, &nref);
  char *want = serialise(ref, nref);
  mcp__names_free(ref, nref);
  uint64_t seed = 0x9e3779b97f4a7c15ULL;
  for (int round = 0; round < 100; round++) {
    for (size_t i = n - 1; i > 0; i--) {
      size_t j = (size_t)(rng_next(&seed) % (i + 1));
      mcp_tool_origin t = in[i];
      in[i] = in[j];
      in[j] = t;
    }
    size_t m = 0;
    mcp_named_tool *v = assign(in, n, &m);
    char *got = serialise(v, m);
    ck_assert_msg(strcmp(got, want) == 0, "round %d differs:\n%s\nvs\n%s", round, got, want);
    free(got);
    mcp__names_free(v, m);
  }
  free(want);
}
END_TEST

START_TEST(test_many_same_name) {
  /* 300 spellings of one name ("a", i+1 separators, "b"): all kept, all
   * distinct, all valid. */
  enum { N = 300 };
  char *tools[N];
  mcp_tool_origin in[N];
  for (int i = 0; i < N; i++) {
    tools[i] = calloc(1, (size_t)i + 4);
    tools[i][0] = (i & 1) ? 'A' : 'a';
    memset(tools[i] + 1, (i & 2) ? ' ' : '-', (size_t)i + 1);
    tools[i][i + 2] = 'b';
    in[i].server = "s";
    in[i].tool = tools[i];
  }
  size_t n = 0;
  mcp_named_tool *v = assign(in, N, &n);
  ck_assert_uint_eq(n, N);
  ck_assert_str_eq(v[0].name, "mcp__s_a_b");
  mcp__names_free(v, n);
  for (int i = 0; i < N; i++) free(tools[i]);
}
END_TEST

START_TEST(test_is_valid) {
  ck_assert(mcp__names_is_valid("mcp__a_b"));
  ck_assert(mcp__names_is_valid("A-b_9"));
  ck_assert(!mcp__names_is_valid(""));
  ck_assert(!mcp__names_is_valid(NULL));
  ck_assert(!mcp__names_is_valid("a b"));
  char s[70];
  memset(s, 'a', 65);
  s[65] = '\0';
  ck_assert(!mcp__names_is_valid(s));
  s[64] = '\0';
  ck_assert(mcp__names_is_valid(s));
}
END_TEST

START_TEST(test_alloc_failures) {
  const mcp_tool_origin in[] = {{"a", "x_y"}, {"a", "x-y"}, {"b", "t"}};
  for (long k = 0; k < 200; k++) {
    mcp_named_tool *v = NULL;
    size_t n = 0;
    mcp__alloc_fail_after(k);
    mcp_status st = mcp__names_assign(in, 3, &v, &n);
    mcp__alloc_fail_after(-1);
    if (st == MCP_OK) {
      ck_assert_uint_eq(n, 3);
      mcp__names_free(v, n);
      return;
    }
    ck_assert_int_eq(st, MCP_ENOMEM);
    ck_assert_ptr_null(v);
  }
  ck_abort_msg("never succeeded");
}
END_TEST

static Suite *names_suite(void) {
  Suite *s = suite_create("names");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_fold_table);
  tcase_add_test(tc, test_public_names);
  tcase_add_test(tc, test_length_cap);
  tcase_add_test(tc, test_collisions);
  tcase_add_test(tc, test_duplicates_and_empty);
  tcase_add_test(tc, test_long_collisions);
  tcase_add_test(tc, test_order_independent);
  tcase_add_test(tc, test_many_same_name);
  tcase_add_test(tc, test_is_valid);
  tcase_add_test(tc, test_alloc_failures);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(names_suite()); }
