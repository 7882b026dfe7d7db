/* SPDX-License-Identifier: MIT */
/*
 * check_cache.c: the deferred-tool cache: write/read round trip, misses
 * (hash change, stale, future-dated), corrupt files that must never crash
 * the reader, atomic writes that leave no temporary files, file modes,
 * unreadable directories, and planted files and unsafe directories that
 * are refused (never followed, never blocking).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "check_util.h"
#include "mcp_cache.h"
#include "mcpconn.h"

#define HASH_A "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define HASH_B "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
#define NOW INT64_C(1767225600) /* 2026-01-01 */
#define DAY INT64_C(86400)
#define TOOLS \
  "[{\"name\":\"echo\",\"description\":\"Echo \\u00e9 /x\",\"inputSchema\":" \
  "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}}}}," \
  "{\"name\":\"add\",\"inputSchema\":{\"type\":\"object\"}}]"

static char tmpdir[512];

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb;
  (void)flag;
  (void)ftw;
  chmod(p, 0700);
  return remove(p);
}

static void setup(void) {
  const char *base = getenv("MCP_TEST_TMPDIR");
  snprintf(tmpdir, sizeof(tmpdir), "%s/check_cache.XXXXXX", base && *base ? base : "/tmp");
  ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown(void) {
  chmod(tmpdir, 0700);
  nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static char *cache_dir(void) {
  char *d = NULL;
  ck_assert_int_eq(mcp__cache_dir(tmpdir, NULL, &d), MCP_OK);
  return d;
}

static void write_ok(const char *dir, const char *server, const char *hash, const char *tools,
                     int64_t now) {
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp__cache_write(dir, server, hash, tools, now, &err);
  ck_assert_msg(st == MCP_OK, "write: %s", err.message ? err.message : "?");
  mcp_error_clear(&err);
}

/* Reads and returns the status; fills outcome and why (caller frees). */
static mcp_status read_c(const char *dir, const char *server, const char *hash, int64_t now,
                         char **tools, mcp_cache_outcome *oc, char **why) {
  return mcp__cache_read(dir, server, hash, now, MCP_CACHE_TTL_S, tools, oc, why);
}

static bool json_equal_text(const char *a, const char *b) {
  json_object *x = json_tokener_parse(a), *y = json_tokener_parse(b);
  bool eq = x && y && json_object_equal(x, y);
  json_object_put(x);
  json_object_put(y);
  return eq;
}

/* Writes raw |data| where |server|'s cache file lives. */
static void put_raw(const char *dir, const char *server, const void *data, size_t len) {
  char *path = NULL;
  mkdir(dir, 0700);
  ck_assert_int_eq(mcp__cache_path(dir, server, &path), MCP_OK);
  FILE *f = fopen(path, "wb");
  ck_assert_ptr_nonnull(f);
  ck_assert_uint_eq(fwrite(data, 1, len, f), len);
  fclose(f);
  mcp__free(path);
}

START_TEST(test_dir_and_path) {
  char *d = NULL;
  ck_assert_int_eq(mcp__cache_dir("/x/cache", "/home/u", &d), MCP_OK);
  ck_assert_str_eq(d, "/x/cache/mcpconn");
  mcp__free(d);
  ck_assert_int_eq(mcp__cache_dir("relative", "/home/u", &d), MCP_OK);
  ck_assert_str_eq(d, "/home/u/.cache/mcpconn");
  mcp__free(d);
  ck_assert_int_eq(mcp__cache_dir(NULL, "/home/u", &d), MCP_OK);
  ck_assert_str_eq(d, "/home/u/.cache/mcpconn");
  mcp__free(d);
  ck_assert_int_eq(mcp__cache_dir(NULL, NULL, &d), MCP_EINVAL);
  ck_assert_ptr_null(d);

  char *p1 = NULL, *p2 = NULL, *p3 = NULL, *p4 = NULL;
  ck_assert_int_eq(mcp__cache_path("/c", "a:b", &p1), MCP_OK);
  ck_assert_int_eq(mcp__cache_path("/c", "a_b", &p2), MCP_OK);
  ck_assert_int_eq(mcp__cache_path("/c", "..", &p3), MCP_OK);
  ck_assert_int_eq(mcp__cache_path("/c", "x/../../etc", &p4), MCP_OK);
  ck_assert(strncmp(p1, "/c/tools-a_b-", 13) == 0);
  ck_assert(strncmp(p2, "/c/tools-a_b-", 13) == 0);
  ck_assert_str_ne(p1, p2); /* the hash keeps them apart */
  ck_assert(strncmp(p3, "/c/tools-_.-", 12) == 0);
  ck_assert_ptr_null(strchr(p4 + 3, '/'));
  ck_assert_uint_eq(strlen(p2), strlen("/c/tools-a_b-12345678.json"));
  mcp__free(p1);
  mcp__free(p2);
  mcp__free(p3);
  mcp__free(p4);
  ck_assert_int_eq(mcp__cache_path("/c", "", &p1), MCP_EINVAL);
}
END_TEST

START_TEST(test_round_trip) {
  char *dir = cache_dir();
  write_ok(dir, "github", HASH_A, TOOLS, NOW);
  char *tools = NULL, *why = NULL;
  mcp_cache_outcome oc = MCP_CACHE_ABSENT;
  ck_assert_int_eq(read_c(dir, "github", HASH_A, NOW + 60, &tools, &oc, &why), MCP_OK);
  ck_assert_int_eq(oc, MCP_CACHE_HIT);
  ck_assert_ptr_null(why);
  ck_assert(json_equal_text(tools, TOOLS));
  mcp__free(tools);

  /* The file is the documented shape. */
  char *path = NULL;
  ck_assert_int_eq(mcp__cache_path(dir, "github", &path), MCP_OK);
  json_object *root = json_object_from_file(path);
  ck_assert_ptr_nonnull(root);
  json_object *v;
  ck_assert(json_object_object_get_ex(root, "version", &v));
  ck_assert_int_eq(json_object_get_int(v), 1);
  ck_assert(json_object_object_get_ex(root, "server", &v));
  ck_assert_str_eq(json_object_get_string(v), "github");
  ck_assert(json_object_object_get_ex(root, "configHash", &v));
  ck_assert_str_eq(json_object_get_string(v), HASH_A);
  ck_assert(json_object_object_get_ex(root, "writtenAt", &v));
  ck_assert_int_eq(json_object_get_int64(v), NOW);
  json_object_put(root);

  /* A second write replaces the first. */
  write_ok(dir, "github", HASH_A, "[]", NOW + 5);
  ck_assert_int_eq(read_c(dir, "github", HASH_A, NOW + 60, &tools, &oc, &why), MCP_OK);
  ck_assert_str_eq(tools, "[]");
  mcp__free(tools);

  /* Another server's file is separate; absent is a quiet miss. */
  ck_assert_int_eq(read_c(dir, "other", HASH_A, NOW, &tools, &oc, &why), MCP_ENOTFOUND);
  ck_assert_int_eq(oc, MCP_CACHE_ABSENT);
  ck_assert_ptr_null(why);
  ck_assert_ptr_null(tools);
  mcp__free(path);
  mcp__free(dir);
}
END_TEST

START_TEST(test_hash_change_and_age) {
  char *dir = cache_dir();
  char *tools = NULL, *why = NULL;
  mcp_cache_outcome oc;
  write_ok(dir, "db", HASH_A, TOOLS, NOW);

  ck_assert_int_eq(read_c(dir, "db", HASH_B, NOW, &tools, &oc, &why), MCP_ENOTFOUND);
  ck_assert_int_eq(oc, MCP_CACHE_MISMATCH);
  ck_assert_int_eq(mcp__cache_outcome_level(oc), MCP_LOG_DEBUG);
  ck_assert_ptr_nonnull(why);
  ck_assert_ptr_null(tools);
  mcp__free(why);

  ck_assert_int_eq(read_c(dir, "db", HASH_A, NOW + 29 * DAY, &tools, &oc, &why), MCP_OK);
  mcp__free(tools);
  ck_assert_int_eq(read_c(dir, "db", HASH_A, NOW + 30 * DAY, &tools, &oc, &why), MCP_OK);
  mcp__free(tools);
  ck_assert_int_eq(read_c(dir, "db", HASH_A, NOW + 31 * DAY, &tools, &oc, &why), MCP_ENOTFOUND);
  ck_assert_int_eq(oc, MCP_CACHE_STALE);
  ck_assert_int_eq(mcp__cache_outcome_level(oc), MCP_LOG_DEBUG);
  mcp__free(why);

  /* A custom TTL. */
  ck_assert_int_eq(mcp__cache_read(dir, "db", HASH_A, NOW + 61, 60, &tools, &oc, &why),
                   MCP_ENOTFOUND);
  ck_assert_int_eq(oc, MCP_CACHE_STALE);
  mcp__free(why);

  /* Dated in the future: up to a day of skew is fine, more is not. */
  write_ok(dir, "db", HASH_A, TOOLS, NOW + 3600);
  ck_assert_int_eq(read_c(dir, "db", HASH_A, NOW, &tools, &oc, &why), MCP_OK);
  mcp__free(tools);
  write_ok(dir, "db", HASH_A, TOOLS, NOW + 2 * DAY);
  ck_assert_int_eq(read_c(dir, "db", HASH_A, NOW, &tools, &oc, &why), MCP_ENOTFOUND);
  ck_assert_int_eq(oc, MCP_CACHE_STALE);
  ck_assert_ptr_nonnull(strstr(why, "future"));
  mcp__free(why);
  /* Extreme dates do not overflow. */
  write_ok(dir, "db", HASH_A, TOOLS, INT64_MAX);
  ck_assert_int_eq(read_c(dir, "db", HASH_A, INT64_MIN, &tools, &oc, &why), MCP_ENOTFOUND);
  mcp__free(why);
  write_ok(dir, "db", HASH_A, TOOLS, INT64_MIN);
  ck_assert_int_eq(read_c(dir, "db", HASH_A, INT64_MAX, &tools, &oc, &why), MCP_ENOTFOUND);
  ck_assert_int_eq(oc, MCP_CACHE_STALE);
  mcp__free(why);
  mcp__free(dir);
}
END_TEST

/* Expects a warning-level miss for |data| stored as |server|'s file. */
static void expect_corrupt(const char *dir, const void *data, size_t len, mcp_cache_outcome want) {
  char *tools = NULL, *why = NULL;
  mcp_cache_outcome oc = MCP_CACHE_HIT;
  put_raw(dir, "srv", data, len);
  ck_assert_int_eq(read_c(dir, "srv", HASH_A, NOW, &tools, &oc, &why), MCP_ENOTFOUND);
  ck_assert_ptr_null(tools);
  ck_assert_int_eq(oc, want);
  ck_assert_int_eq(mcp__cache_outcome_level(oc), MCP_LOG_WARN);
  ck_assert_ptr_nonnull(why);
  ck_assert_msg(strstr(why, dir) == why,
                "reason should start with the path: "
                "%s",
                why);
  mcp__free(why);
}

START_TEST(test_corrupt_files) {
  char *dir = cache_dir();
  char good[1024];
  snprintf(good, sizeof(good),
           "{\"version\":1,\"server\":\"srv\",\"configHash\":\"%s\","
           "\"writtenAt\":%lld,\"tools\":%s}",
           HASH_A, (long long)NOW, TOOLS);

  /* Random bytes. */
  unsigned char rnd[4096];
  uint32_t x = 12345;
  for (size_t i = 0; i < sizeof(rnd); i++) {
    x = x * 1103515245u + 12345u;
    rnd[i] = (unsigned char)(x >> 16);
  }
  expect_corrupt(dir, rnd, sizeof(rnd), MCP_CACHE_CORRUPT);
  /* Every truncation of a good file. */
  for (size_t cut = 0; cut < strlen(good); cut++) expect_corrupt(dir, good, cut, MCP_CACHE_CORRUPT);
  /* A NUL inside, and garbage after the value. */
  char withnul[1100];
  memcpy(withnul, good, strlen(good));
  withnul[strlen(good)] = '\0';
  withnul[strlen(good) + 1] = 'x';
  expect_corrupt(dir, withnul, strlen(good) + 2, MCP_CACHE_CORRUPT);
  char trailing[1100];
  snprintf(trailing, sizeof(trailing), "%s {}", good);
  expect_corrupt(dir, trailing, strlen(trailing), MCP_CACHE_CORRUPT);

  static const char *const shapes[] = {
      "[]",
      "\"text\"",
      "{}",
      "{\"version\":\"1\",\"server\":\"srv\"}",
      "{\"version\":1.0,\"server\":\"srv\"}",
      "{\"version\":1,\"server\":\"srv\",\"configHash\":\"" HASH_A "\","
      "\"writtenAt\":1767225600,\"tools\":{}}",
      "{\"version\":1,\"server\":\"srv\",\"configHash\":\"" HASH_A "\","
      "\"writtenAt\":1767225600,\"tools\":null}",
      "{\"version\":1,\"server\":\"srv\",\"configHash\":\"" HASH_A "\","
      "\"writtenAt\":\"1767225600\",\"tools\":[]}",
      "{\"version\":1,\"server\":\"srv\",\"configHash\":\"" HASH_A "\","
      "\"writtenAt\":1767225600.5,\"tools\":[]}",
      "{\"version\":1,\"server\":\"srv\",\"configHash\":7,"
      "\"writtenAt\":1767225600,\"tools\":[]}",
      "{\"version\":1,\"server\":\"other\",\"configHash\":\"" HASH_A "\","
      "\"writtenAt\":1767225600,\"tools\":[]}",
      "{\"version\":1,\"server\":\"srv\",\"configHash\":\"" HASH_A "\","
      "\"tools\":[]}",
  };
  for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
    expect_corrupt(dir, shapes[i], strlen(shapes[i]), MCP_CACHE_CORRUPT);

  const char *v2 = "{\"version\":2,\"server\":\"srv\",\"tools\":\"new\"}";
  expect_corrupt(dir, v2, strlen(v2), MCP_CACHE_VERSION_MISMATCH);

  /* Deep nesting is refused, not a stack overflow. */
  size_t depth = 100000;
  char *deep = malloc(2 * depth);
  memset(deep, '[', depth);
  memset(deep + depth, ']', depth);
  expect_corrupt(dir, deep, 2 * depth, MCP_CACHE_CORRUPT);
  free(deep);

  /* And the good file is a hit. */
  char *tools = NULL;
  put_raw(dir, "srv", good, strlen(good));
  ck_assert_int_eq(read_c(dir, "srv", HASH_A, NOW, &tools, NULL, NULL), MCP_OK);
  mcp__free(tools);
  mcp__free(dir);
}
END_TEST

START_TEST(test_parse_mutations) {
  /* Random byte flips of a good file through the pure parser. */
  char good[1024];
  snprintf(good, sizeof(good),
           "{\"version\":1,\"server\":\"srv\",\"configHash\":\"%s\","
           "\"writtenAt\":%lld,\"tools\":%s}",
           HASH_A, (long long)NOW, TOOLS);
  size_t len = strlen(good);
  uint64_t s = 0x1234567;
  int hits = 0;
  for (int round = 0; round < 3000; round++) {
    char buf[1024];
    memcpy(buf, good, len);
    int flips = 1 + round % 4;
    for (int f = 0; f < flips; f++) {
      s ^= s << 13;
      s ^= s >> 7;
      s ^= s << 17;
      buf[s % len] = (char)(s >> 32);
    }
    char *tools = NULL, *why = NULL;
    mcp_cache_outcome oc;
    mcp_status st = mcp__cache_parse(buf, len, "srv", HASH_A, NOW, 0, &tools, &oc, &why);
    if (st == MCP_OK) {
      hits++;
      ck_assert_ptr_nonnull(tools);
      ck_assert_ptr_null(why);
    } else {
      ck_assert_int_eq(st, MCP_ENOTFOUND);
      ck_assert_ptr_null(tools);
      ck_assert_ptr_nonnull(why);
    }
    mcp__free(tools);
    mcp__free(why);
  }
  ck_assert_int_gt(hits, 0); /* flips inside descriptions still parse */
}
END_TEST

static int count_entries(const char *dir, const char *prefix) {
  DIR *d = opendir(dir);
  ck_assert_ptr_nonnull(d);
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL)
    if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) n++;
  closedir(d);
  return n;
}

START_TEST(test_atomic_and_modes) {
  umask(022);
  char *dir = NULL;
  char base[600];
  snprintf(base, sizeof(base), "%s/deep/er", tmpdir);
  ck_assert_int_eq(mcp__cache_dir(base, NULL, &dir), MCP_OK);
  for (int i = 0; i < 20; i++) {
    char name[32];
    snprintf(name, sizeof(name), "server-%d", i % 5);
    write_ok(dir, name, HASH_A, TOOLS, NOW + i);
  }
  /* No temporary files; one file per server. */
  ck_assert_int_eq(count_entries(dir, ".tools-"), 0);
  ck_assert_int_eq(count_entries(dir, "tools-"), 5);
  /* A refused write leaves nothing either. */
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp__cache_write(dir, "server-9", HASH_A, "{}", NOW, &err), MCP_EINVAL);
  mcp_error_clear(&err);
  ck_assert_int_eq(mcp__cache_write(dir, "server-9", "xyz", "[]", NOW, &err), MCP_EINVAL);
  mcp_error_clear(&err);
  ck_assert_int_eq(mcp__cache_write(dir, "server-9", HASH_A, "[1] x", NOW, &err), MCP_EINVAL);
  mcp_error_clear(&err);
  ck_assert_int_eq(count_entries(dir, "tools-"), 5);
  ck_assert_int_eq(count_entries(dir, ".tools-"), 0);

  struct stat st;
  char *path = NULL;
  ck_assert_int_eq(mcp__cache_path(dir, "server-0", &path), MCP_OK);
  ck_assert_int_eq(stat(path, &st), 0);
  ck_assert_int_eq(st.st_mode & 0777, 0600);
  ck_assert_int_eq(stat(dir, &st), 0);
  ck_assert_int_eq(st.st_mode & 0777, 0700);
  /* Parents created on the way are private too. */
  char parent[700];
  snprintf(parent, sizeof(parent), "%s/deep", tmpdir);
  ck_assert_int_eq(stat(parent, &st), 0);
  ck_assert_int_eq(st.st_mode & 0777, 0700);
  mcp__free(path);
  mcp__free(dir);
}
END_TEST

START_TEST(test_failed_write_keeps_old) {
  char *dir = cache_dir();
  write_ok(dir, "s", HASH_A, TOOLS, NOW);
  if (geteuid() != 0) {
    /* A read-only directory: the write fails and the old file survives. */
    chmod(dir, 0500);
    mcp_error err = MCP_ERROR_INIT;
    ck_assert_int_eq(mcp__cache_write(dir, "s", HASH_A, "[]", NOW, &err), MCP_EIO);
    ck_assert_ptr_nonnull(strstr(err.message, "temporary"));
    mcp_error_clear(&err);
    chmod(dir, 0700);
  }
  char *tools = NULL;
  ck_assert_int_eq(read_c(dir, "s", HASH_A, NOW, &tools, NULL, NULL), MCP_OK);
  ck_assert(json_equal_text(tools, TOOLS));
  mcp__free(tools);
  ck_assert_int_eq(count_entries(dir, ".tools-"), 0);
  mcp__free(dir);
}
END_TEST

START_TEST(test_unreadable) {
  char *tools = NULL, *why = NULL;
  mcp_cache_outcome oc;
  mcp_error err = MCP_ERROR_INIT;

  /* The cache "directory" is a regular file: reads warn, writes fail. */
  char notdir[600];
  snprintf(notdir, sizeof(notdir), "%s/plainfile", tmpdir);
  FILE *f = fopen(notdir, "w");
  ck_assert_ptr_nonnull(f);
  fclose(f);
  ck_assert_int_eq(read_c(notdir, "s", HASH_A, NOW, &tools, &oc, &why), MCP_ENOTFOUND);
  ck_assert_int_eq(oc, MCP_CACHE_UNREADABLE);
  ck_assert_int_eq(mcp__cache_outcome_level(oc), MCP_LOG_WARN);
  ck_assert_ptr_nonnull(why);
  mcp__free(why);
  ck_assert_int_eq(mcp__cache_write(notdir, "s", HASH_A, "[]", NOW, &err), MCP_EIO);
  ck_assert_ptr_nonnull(strstr(err.message, "directory"));
  mcp_error_clear(&err);

  /* The cache file is a directory. */
  char *dir = cache_dir(), *path = NULL;
  mkdir(dir, 0700);
  ck_assert_int_eq(mcp__cache_path(dir, "s", &path), MCP_OK);
  ck_assert_int_eq(mkdir(path, 0700), 0);
  ck_assert_int_eq(read_c(dir, "s", HASH_A, NOW, &tools, &oc, &why), MCP_ENOTFOUND);
  ck_assert_int_eq(oc, MCP_CACHE_UNREADABLE);
  mcp__free(why);
  rmdir(path);

  /* A directory we may not enter (not testable as root). */
  if (geteuid() != 0) {
    write_ok(dir, "s", HASH_A, TOOLS, NOW);
    chmod(dir, 0);
    ck_assert_int_eq(read_c(dir, "s", HASH_A, NOW, &tools, &oc, &why), MCP_ENOTFOUND);
    ck_assert_int_eq(oc, MCP_CACHE_UNREADABLE);
    ck_assert_ptr_nonnull(why);
    mcp__free(why);
    chmod(dir, 0700);
  }
  mcp__free(path);
  mcp__free(dir);
}
END_TEST

START_TEST(test_alloc_failures) {
  char *dir = cache_dir();
  write_ok(dir, "s", HASH_A, TOOLS, NOW);
  bool read_done = false, write_done = false;
  for (long k = 0; k < 500 && !(read_done && write_done); k++) {
    char *tools = NULL, *why = NULL;
    mcp_error err = MCP_ERROR_INIT;
    mcp__alloc_fail_after(k);
    mcp_status r = read_c(dir, "s", HASH_A, NOW, &tools, NULL, &why);
    mcp__alloc_fail_after(k);
    mcp_status w = mcp__cache_write(dir, "s", HASH_A, TOOLS, NOW, &err);
    mcp__alloc_fail_after(-1);
    ck_assert(r == MCP_OK || r == MCP_ENOMEM);
    ck_assert(w == MCP_OK || w == MCP_ENOMEM);
    if (r == MCP_OK) read_done = true;
    if (w == MCP_OK) write_done = true;
    mcp__free(tools);
    mcp__free(why);
    mcp_error_clear(&err);
    ck_assert_int_eq(count_entries(dir, ".tools-"), 0);
  }
  ck_assert(read_done && write_done);
  mcp__free(dir);
}
END_TEST

/* ---- hostile files and directories (issue 14, item 10) ---------------- */

static void on_alarm(int sig) {
  (void)sig;
  ck_abort_msg("hung: the cache blocked on a planted file (alarm fired)");
}

/* Reads |server| from |dir| under a 5 s alarm; expects an UNREADABLE miss
 * whose reason contains |path| and |what|. */
static void read_refused(const char *dir, const char *server, const char *path, const char *what) {
  char *tools = NULL, *why = NULL;
  mcp_cache_outcome oc = MCP_CACHE_HIT;
  signal(SIGALRM, on_alarm);
  alarm(5);
  mcp_status st = read_c(dir, server, HASH_A, NOW, &tools, &oc, &why);
  alarm(0);
  ck_assert_msg(st == MCP_ENOTFOUND, "read of a planted file: %s (%s)", mcp_strerror(st),
                why ? why : "-");
  ck_assert_ptr_null(tools);
  ck_assert_int_eq(oc, MCP_CACHE_UNREADABLE);
  ck_assert_int_eq(mcp__cache_outcome_level(oc), MCP_LOG_WARN);
  ck_assert_ptr_nonnull(why);
  ck_assert_msg(strstr(why, path) && strstr(why, what), "reason should name %s and say '%s': %s",
                path, what, why);
  mcp__free(why);
}

/* A write replaces what was planted at the file's name with a private
 * regular file, under a 5 s alarm. */
static void write_replaces(const char *dir, const char *server, const char *path) {
  signal(SIGALRM, on_alarm);
  alarm(5);
  write_ok(dir, server, HASH_A, TOOLS, NOW);
  alarm(0);
  struct stat sb;
  ck_assert_int_eq(lstat(path, &sb), 0);
  ck_assert(S_ISREG(sb.st_mode));
  ck_assert_int_eq(sb.st_mode & 0777, 0600);
  ck_assert_int_eq(sb.st_uid, geteuid());
  char *tools = NULL;
  ck_assert_int_eq(read_c(dir, server, HASH_A, NOW, &tools, NULL, NULL), MCP_OK);
  ck_assert(json_equal_text(tools, TOOLS));
  mcp__free(tools);
}

/* Planted at the cache file's name: a 0666 file, a FIFO, a symlink to a
 * file elsewhere.  Reads refuse each (a FIFO does not hang); writes
 * replace each and never write through the link. */
START_TEST(test_planted_cache_files) {
  char *dir = cache_dir(), *path = NULL;
  ck_assert_int_eq(mkdir(dir, 0700), 0);
  ck_assert_int_eq(mcp__cache_path(dir, "s", &path), MCP_OK);

  /* A 0666 file with valid content: anyone could have written it. */
  write_ok(dir, "s", HASH_A, TOOLS, NOW);
  ck_assert_int_eq(chmod(path, 0666), 0);
  read_refused(dir, "s", path, "writable by others");
  write_replaces(dir, "s", path);
  ck_assert_int_eq(chmod(path, 0620), 0);
  read_refused(dir, "s", path, "writable by its group");
  write_replaces(dir, "s", path);

  /* A FIFO nobody writes to. */
  ck_assert_int_eq(unlink(path), 0);
  ck_assert_int_eq(mkfifo(path, 0600), 0);
  read_refused(dir, "s", path, "not a regular file");
  write_replaces(dir, "s", path);

  /* A symlink to a valid cache file elsewhere. */
  char other[700];
  snprintf(other, sizeof(other), "%s/elsewhere", tmpdir);
  ck_assert_int_eq(mkdir(other, 0700), 0);
  write_ok(other, "s", HASH_A, TOOLS, NOW);
  char *target = NULL;
  ck_assert_int_eq(mcp__cache_path(other, "s", &target), MCP_OK);
  struct stat before, after;
  ck_assert_int_eq(stat(target, &before), 0);
  ck_assert_int_eq(unlink(path), 0);
  ck_assert_int_eq(symlink(target, path), 0);
  read_refused(dir, "s", path, "symbolic link");
  write_ok(dir, "s", HASH_A, "[]", NOW + 1);
  ck_assert_int_eq(stat(target, &after), 0);
  ck_assert_int_eq(after.st_size, before.st_size); /* not written through */
  struct stat sb;
  ck_assert_int_eq(lstat(path, &sb), 0);
  ck_assert(S_ISREG(sb.st_mode));

  /* A file owned by someone else (only root can make one). */
  if (geteuid() == 0) {
    ck_assert_int_eq(chown(path, 65534, 65534), 0);
    read_refused(dir, "s", path, "owned by uid 65534");
    write_replaces(dir, "s", path);
  }
  ck_assert_int_eq(count_entries(dir, ".tools-"), 0);
  mcp__free(target);
  mcp__free(path);
  mcp__free(dir);
}
END_TEST

/* A cache directory that is group-writable, other-writable, a symlink or
 * owned by another uid: reads miss with the directory named, writes fail
 * with MCP_EIO naming it, and nothing is written there. */
START_TEST(test_unsafe_cache_dirs) {
  char *dir = cache_dir(), *path = NULL;
  ck_assert_int_eq(mcp__cache_path(dir, "s", &path), MCP_OK);
  write_ok(dir, "s", HASH_A, TOOLS, NOW);
  mcp_error err = MCP_ERROR_INIT;

  static const struct {
    mode_t mode;
    const char *what;
  } modes[] = {
      {0770, "writable by its group"}, {0707, "writable by others"}, {01777, "writable by others"}};
  for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
    ck_assert_int_eq(chmod(dir, modes[i].mode), 0);
    read_refused(dir, "s", dir, modes[i].what);
    ck_assert_int_eq(mcp__cache_write(dir, "t", HASH_A, TOOLS, NOW, &err), MCP_EIO);
    ck_assert_msg(strstr(err.message, dir) && strstr(err.message, modes[i].what),
                  "write error should name the directory: "
                  "%s",
                  err.message);
    mcp_error_clear(&err);
    ck_assert_int_eq(count_entries(dir, "tools-t"), 0);
    ck_assert_int_eq(count_entries(dir, ".tools-"), 0);
  }
  ck_assert_int_eq(chmod(dir, 0700), 0);

  /* The directory is a symlink to a private directory elsewhere. */
  char real[700], link[700];
  snprintf(real, sizeof(real), "%s/real", tmpdir);
  snprintf(link, sizeof(link), "%s/link", tmpdir);
  ck_assert_int_eq(mkdir(real, 0700), 0);
  write_ok(real, "s", HASH_A, TOOLS, NOW);
  ck_assert_int_eq(symlink(real, link), 0);
  read_refused(link, "s", link, "symbolic link");
  ck_assert_int_eq(mcp__cache_write(link, "t", HASH_A, TOOLS, NOW, &err), MCP_EIO);
  ck_assert_ptr_nonnull(strstr(err.message, "symbolic link"));
  mcp_error_clear(&err);
  ck_assert_int_eq(count_entries(real, "tools-t"), 0);

  /* Owned by another uid (only root can make one). */
  if (geteuid() == 0) {
    ck_assert_int_eq(chown(dir, 65534, 65534), 0);
    read_refused(dir, "s", dir, "owned by uid 65534");
    ck_assert_int_eq(mcp__cache_write(dir, "t", HASH_A, TOOLS, NOW, &err), MCP_EIO);
    ck_assert_ptr_nonnull(strstr(err.message, "owned by uid 65534"));
    mcp_error_clear(&err);
    ck_assert_int_eq(count_entries(dir, "tools-t"), 0);
  }
  mcp__free(path);
  mcp__free(dir);
}
END_TEST

/* ---- the era remembered per server ----------------------------------------- */

START_TEST(test_era_round_trip) {
  char *dir = cache_dir();
  mcp_cache_era era = MCP_CACHE_ERA_MODERN;
  char *tools = NULL;
  ck_assert_int_eq(mcp__cache_write_era(dir, "s", "ab", "[]", MCP_CACHE_ERA_LEGACY, 1000, NULL),
                   MCP_OK);
  ck_assert_int_eq(mcp__cache_read_era(dir, "s", "ab", 1000, 0, &tools, &era, NULL, NULL), MCP_OK);
  ck_assert_int_eq(era, MCP_CACHE_ERA_LEGACY);
  mcp__free(tools);
  /* Another configuration: no hint. */
  ck_assert_int_eq(mcp__cache_read_era(dir, "s", "cd", 1000, 0, &tools, &era, NULL, NULL),
                   MCP_ENOTFOUND);
  ck_assert_int_eq(era, MCP_CACHE_ERA_UNKNOWN);
  /* Written without one (and by mcp__cache_write): none read. */
  ck_assert_int_eq(mcp__cache_write(dir, "s", "ab", "[]", 1000, NULL), MCP_OK);
  ck_assert_int_eq(mcp__cache_read_era(dir, "s", "ab", 1000, 0, &tools, &era, NULL, NULL), MCP_OK);
  ck_assert_int_eq(era, MCP_CACHE_ERA_UNKNOWN);
  mcp__free(tools);
  /* An era this version does not know is no hint, and no corruption. */
  static const char odd[] =
      "{\"version\":1,\"server\":\"s\",\"configHash\":\"ab\",\"writtenAt\":1000,"
      "\"era\":\"future\",\"tools\":[]}";
  put_raw(dir, "s", odd, sizeof(odd) - 1);
  ck_assert_int_eq(mcp__cache_read_era(dir, "s", "ab", 1000, 0, &tools, &era, NULL, NULL), MCP_OK);
  ck_assert_int_eq(era, MCP_CACHE_ERA_UNKNOWN);
  mcp__free(tools);
  /* Tools withheld (NULL): a miss that still gives the era, and says why. */
  ck_assert_int_eq(mcp__cache_write_era(dir, "s", "ab", NULL, MCP_CACHE_ERA_MODERN, 1000, NULL),
                   MCP_OK);
  mcp_cache_outcome oc = MCP_CACHE_HIT;
  char *why = NULL;
  ck_assert_int_eq(mcp__cache_read_era(dir, "s", "ab", 1000, 0, &tools, &era, &oc, &why),
                   MCP_ENOTFOUND);
  ck_assert_ptr_null(tools);
  ck_assert_int_eq(oc, MCP_CACHE_PRIVATE);
  ck_assert_int_eq(era, MCP_CACHE_ERA_MODERN);
  ck_assert_msg(why && strstr(why, "not kept"), "%s", why ? why : "(null)");
  ck_assert_int_eq(mcp__cache_outcome_level(oc), MCP_LOG_DEBUG);
  mcp__free(why);
  /* ... but not for another configuration, nor when stale. */
  ck_assert_int_eq(mcp__cache_read_era(dir, "s", "cd", 1000, 0, &tools, &era, NULL, NULL),
                   MCP_ENOTFOUND);
  ck_assert_int_eq(era, MCP_CACHE_ERA_UNKNOWN);
  ck_assert_int_eq(
      mcp__cache_read_era(dir, "s", "ab", 1000 + 2 * MCP_CACHE_TTL_S, 0, &tools, &era, NULL, NULL),
      MCP_ENOTFOUND);
  ck_assert_int_eq(era, MCP_CACHE_ERA_UNKNOWN);
  /* "private" beside a tools array is not a withheld entry: a hit. */
  static const char both[] =
      "{\"version\":1,\"server\":\"s\",\"configHash\":\"ab\",\"writtenAt\":1000,"
      "\"private\":true,\"tools\":[]}";
  put_raw(dir, "s", both, sizeof(both) - 1);
  ck_assert_int_eq(mcp__cache_read_era(dir, "s", "ab", 1000, 0, &tools, &era, NULL, NULL), MCP_OK);
  mcp__free(tools);
  free(dir);
}
END_TEST

static int file_count(const char *path, const char *needle) {
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  static char buf[1 << 18];
  size_t n = fread(buf, 1, sizeof(buf) - 1, f);
  fclose(f);
  buf[n] = '\0';
  int k = 0;
  for (const char *p = buf; (p = strstr(p, needle)); p += strlen(needle)) k++;
  return k;
}

/* One manager start with the config file in tmpdir: waits until server
 * "s" is ready and its cache entry remembers |era|. */
static void manager_once(const char *era) {
  char cfg[700], cache[700], *path = NULL;
  snprintf(cfg, sizeof(cfg), "%s/mcp.json", tmpdir);
  snprintf(cache, sizeof(cache), "%s/cache", tmpdir);
  ck_assert_int_eq(mcp__cache_path(cache, "s", &path), MCP_OK);
  struct stat before = {0}, now;
  stat(path, &before); /* the entry waited for is this start's: a new file (renamed into place) */
  mcp_manager_options *o = mcp_manager_options_new();
  ck_assert_int_eq(mcp_manager_options_add_config_file(o, cfg), MCP_OK);
  mcp_manager_options_set_discovery(o, false, false);
  mcp_manager_options_set_cache_dir(o, cache);
  mcp_manager_options_set_timeout_ms(o, 20000);
  mcp_manager *m = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp_manager_start(o, &m, &err), MCP_OK);
  mcp_manager_options_free(o);
  ck_assert_msg(mcp_manager_wait_ready(m, "s", 30000, &err) == MCP_OK, "s: %s",
                err.message ? err.message : "");
  char want[64];
  snprintf(want, sizeof(want), "\"era\":\"%s\"", era);
  ck_assert_msg(WAIT_UNTIL(stat(path, &now) == 0 && now.st_ino != before.st_ino &&
                               file_count(path, want) == 1,
                           20000),
                "no %s in a new cache entry", want);
  mcp_manager_free(m);
  free(path);
}

START_TEST(test_era_hint_saves_the_probe) {
  /* The server runs through tee-stdin.sh (what it received, in "log") with
   * the protocol the file "mode" names, so one configuration (one config
   * hash) can be a legacy server first and a modern-only one later. */
  char cfg[700], log[700], mark[700], mode[700], tee[4200];
  snprintf(cfg, sizeof(cfg), "%s/mcp.json", tmpdir);
  snprintf(log, sizeof(log), "%s/log", tmpdir);
  snprintf(mark, sizeof(mark), "%s/mark", tmpdir);
  snprintf(mode, sizeof(mode), "%s/mode", tmpdir);
  snprintf(tee, sizeof(tee), "%s/tests/era/tee-stdin.sh", test_env_path("MCP_SRCDIR"));
  FILE *f = fopen(cfg, "w");
  ck_assert_ptr_nonnull(f);
  fprintf(
      f,
      "{\"mcpServers\":{\"s\":{\"command\":\"/bin/sh\",\"args\":[\"-c\","
      "\"exec \\\"$0\\\" \\\"$1\\\" \\\"$2\\\" \\\"$3\\\" --protocol \\\"$(cat \\\"$4\\\")\\\"\","
      "\"%s\",\"%s\",\"%s\",\"%s\",\"%s\"]}}}\n",
      tee, log, mark, test_env_path("MCP_DEMO_SERVER"), mode);
  fclose(f);
  f = fopen(mode, "w");
  fputs("legacy", f);
  fclose(f);
  /* First start: the probe (-32601 from a legacy server), then initialize. */
  manager_once("legacy");
  ck_assert_int_eq(file_count(log, "\"method\":\"server/discover\""), 1);
  ck_assert_int_eq(file_count(log, "\"method\":\"initialize\""), 1);
  /* Second start: the remembered verdict, no probe. */
  manager_once("legacy");
  ck_assert_int_eq(file_count(log, "\"method\":\"server/discover\""), 1);
  ck_assert_int_eq(file_count(log, "\"method\":\"initialize\""), 2);
  /* The server became modern-only: it refuses initialize (-32022), the
   * client probes, speaks 2026-07-28, and the entry says modern now. */
  f = fopen(mode, "w");
  fputs("modern", f);
  fclose(f);
  manager_once("modern");
  ck_assert_int_eq(file_count(log, "\"method\":\"initialize\""), 3);
  ck_assert_int_eq(file_count(log, "\"method\":\"server/discover\""), 2);
  ck_assert_int_ge(file_count(log, "\"method\":\"tools/list\""), 3);
}
END_TEST

static Suite *cache_suite(void) {
  Suite *s = suite_create("cache");
  TCase *tc = tcase_create("core");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_dir_and_path);
  tcase_add_test(tc, test_round_trip);
  tcase_add_test(tc, test_hash_change_and_age);
  tcase_add_test(tc, test_corrupt_files);
  tcase_add_test(tc, test_parse_mutations);
  tcase_add_test(tc, test_atomic_and_modes);
  tcase_add_test(tc, test_failed_write_keeps_old);
  tcase_add_test(tc, test_unreadable);
  tcase_add_test(tc, test_alloc_failures);
  tcase_add_test(tc, test_planted_cache_files);
  tcase_add_test(tc, test_unsafe_cache_dirs);
  tcase_add_test(tc, test_era_round_trip);
  tcase_add_test(tc, test_era_hint_saves_the_probe);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(cache_suite()); }
