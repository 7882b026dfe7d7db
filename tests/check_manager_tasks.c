/* SPDX-License-Identifier: MIT */
/*
 * check_manager_tasks.c: the task ids a manager keeps in its cache
 * directory (mcp_manager_tasks.h) and its task calls by server and id
 * (mcp_manager_list_tasks, _get_task, _cancel_task, _wait_task), both
 * eras, against the real stdio server tests/interop/tasks-server.mjs,
 * whose every received line is logged (what the client sent is read from
 * the server's side).  The record file's reader on fixed cases first.
 */
#include "config.h"

#include <json-c/json.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_util.h"
#include "mcp_manager_tasks.h"
#include "mcpconn.h"

#define CONNECT_MS 60000 /* node's first start can be slow on a busy CI box */

/* ---- pure --------------------------------------------------------------- */

START_TEST(parse_records) {
  json_object *r = NULL;
  const char *good =
      "{\"version\":1,\"server\":\"tk\",\"tasks\":["
      "{\"taskId\":\"a\",\"tool\":\"slow\",\"createdAt\":5,\"updatedAt\":6,"
      "\"status\":\"working\",\"statusMessage\":\"step 1\"},"
      "{\"taskId\":\"b\",\"createdAt\":5,\"updatedAt\":6,\"status\":\"done\"},"
      "{\"taskId\":\"\",\"createdAt\":5,\"updatedAt\":6,\"status\":\"working\"},"
      "{\"taskId\":\"c\",\"createdAt\":\"5\",\"updatedAt\":6,\"status\":\"failed\"},"
      "7,"
      "{\"taskId\":\"d\",\"createdAt\":1,\"updatedAt\":2,\"status\":\"cancelled\"}]}";
  ck_assert_int_eq(mcp__mtasks_parse(good, strlen(good), "tk", &r), MCP_OK);
  /* Only a and d have the shape. */
  ck_assert_int_eq(json_object_array_length(r), 2);
  ck_assert_str_eq(
      json_object_to_json_string_ext(json_object_array_get_idx(r, 0), JSON_C_TO_STRING_PLAIN),
      "{\"taskId\":\"a\",\"tool\":\"slow\",\"createdAt\":5,\"updatedAt\":6,"
      "\"status\":\"working\",\"statusMessage\":\"step 1\"}");
  json_object_put(r);
  static const char *const bad[] = {
      "",
      "[]",
      "{\"version\":2,\"server\":\"tk\",\"tasks\":[]}",
      "{\"version\":1,\"server\":\"other\",\"tasks\":[]}",
      "{\"version\":1,\"server\":\"tk\",\"tasks\":{}}",
      "{\"version\":1,\"server\":\"tk\"}",
      "{\"version\":1,\"server\":\"tk\",\"tasks\":[]",
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    ck_assert_msg(mcp__mtasks_parse(bad[i], strlen(bad[i]), "tk", &r) == MCP_EPROTO, "%s", bad[i]);
    ck_assert_ptr_null(r);
  }
}
END_TEST

/* ---- a real server ------------------------------------------------------- */

static char server[4200], logpath[4200], cachedir[4200];

static void setup_paths(void) {
  snprintf(server, sizeof(server), "%s/tasks-server.mjs", test_env_path("MCP_INTEROP_DIR"));
  const char *tmp = getenv("MCP_TEST_TMPDIR");
  snprintf(logpath, sizeof(logpath), "%s/check_manager_tasks.%d.log", tmp ? tmp : P_tmpdir,
           (int)getpid());
  unlink(logpath);
  setenv("LOG", logpath, 1);
  snprintf(cachedir, sizeof(cachedir), "%s/check_manager_tasks.%d.cache", tmp ? tmp : P_tmpdir,
           (int)getpid());
}

static void cleanup(void) {
  char cmd[8600];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", cachedir, logpath);
  ck_assert_int_eq(system(cmd), 0);
}

static int log_count(const char *needle) {
  FILE *f = fopen(logpath, "r");
  if (!f) return 0;
  char line[65536];
  int n = 0;
  while (fgets(line, sizeof(line), f))
    for (const char *p = line; (p = strstr(p, needle)); p += strlen(needle)) n++;
  fclose(f);
  return n;
}

static mcp_manager *start(const char *era) {
  const char *argv[] = {"node", server, era, NULL};
  mcp_client_options *co = mcp_client_options_new();
  ck_assert_int_eq(mcp_client_options_set_stdio(co, argv), MCP_OK);
  ck_assert_int_eq(mcp_client_options_set_protocol(co, era), MCP_OK);
  mcp_manager_options *mo = mcp_manager_options_new();
  mcp_manager_options_set_discovery(mo, false, false);
  ck_assert_int_eq(mcp_manager_options_set_cache_dir(mo, cachedir), MCP_OK);
  ck_assert_int_eq(mcp_manager_options_add_server(mo, "tk", co), MCP_OK);
  mcp_client_options_free(co);
  ck_assert_int_eq(mcp_manager_options_set_extension(mo, MCP_TASKS_EXTENSION, NULL), MCP_OK);
  mcp_manager *m = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp_manager_start(mo, &m, &err), MCP_OK);
  mcp_manager_options_free(mo);
  ck_assert_msg(mcp_manager_wait_ready(m, "tk", CONNECT_MS, &err) == MCP_OK, "%s", err.message);
  return m;
}

/* The one listed task with id |id|, or NULL (the array in *arr, to put). */
static json_object *listed(mcp_manager *m, const char *id, json_object **arr) {
  char *json = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_msg(mcp_manager_list_tasks(m, "tk", NULL, &json, &err) == MCP_OK, "%s", err.message);
  *arr = json_tokener_parse(json);
  mcp_free(json);
  ck_assert(json_object_is_type(*arr, json_type_array));
  for (size_t i = 0; i < json_object_array_length(*arr); i++) {
    json_object *e = json_object_array_get_idx(*arr, i), *v = NULL;
    if (json_object_object_get_ex(e, "taskId", &v) && strcmp(json_object_get_string(v), id) == 0)
      return e;
  }
  return NULL;
}

static const char *member(json_object *o, const char *key) {
  json_object *v = NULL;
  return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : NULL;
}

/* A plain call of a task tool is recorded with each status and its end,
 * and a new manager over the same directory still lists it. */
static void records_call(const char *era) {
  setup_paths();
  mcp_manager *m = start(era);
  char *out = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_msg(mcp_manager_call_tool(m, "tk/slow", "{\"n\":5}", NULL, &out, &err) == MCP_OK, "%s",
                err.message);
  mcp_free(out);
  json_object *arr = NULL, *e = listed(m, "task-1-slow", &arr);
  ck_assert_ptr_nonnull(e);
  ck_assert_str_eq(member(e, "tool"), "slow");
  ck_assert_str_eq(member(e, "status"), "completed");
  ck_assert_str_eq(member(e, "recorded"), "true");
  /* The legacy server lists its tasks too; the modern era has no tasks/list. */
  ck_assert_str_eq(member(e, "listed"), strcmp(era, "legacy") == 0 ? "true" : "false");
  ck_assert_int_eq(log_count("\"method\":\"tasks/list\""), strcmp(era, "legacy") == 0 ? 1 : 0);
  json_object_put(arr);
  mcp_manager_free(m);

  /* The file is private. */
  char path[4400];
  snprintf(path, sizeof(path), "%s", cachedir);
  struct stat sb;
  ck_assert_int_eq(stat(path, &sb), 0);
  ck_assert_int_eq(sb.st_mode & 077, 0);

  /* A restart: a new manager (and a new server process, which knows no
   * tasks) still lists the recorded one. */
  m = start(era);
  e = listed(m, "task-1-slow", &arr);
  ck_assert_ptr_nonnull(e);
  ck_assert_str_eq(member(e, "status"), "completed");
  ck_assert_str_eq(member(e, "recorded"), "true");
  json_object_put(arr);
  /* One tasks/get on an id the new process does not know: its error. */
  ck_assert_int_eq(mcp_manager_get_task(m, "tk", "task-1-slow", NULL, &out, &err), MCP_ERPC);
  ck_assert_ptr_nonnull(strstr(err.message, "no task task-1-slow"));
  mcp_error_clear(&err);
  ck_assert_int_eq(mcp_manager_list_tasks(m, "zz", NULL, &out, &err), MCP_ENOTFOUND);
  mcp_error_clear(&err);
  mcp_manager_free(m);
  cleanup();
}

START_TEST(modern_records) { records_call("modern"); }
END_TEST
START_TEST(legacy_records) { records_call("legacy"); }
END_TEST

/* A call following "forever" on a thread; the id its status reports. */
typedef struct forever {
  mcp_manager *m;
  pthread_mutex_t mu;
  char id[256];
  int reports;
  bool done;
  mcp_status st;
} forever;

static void on_status(void *user, const char *id, mcp_task_status status, const char *msg) {
  (void)status;
  (void)msg;
  forever *f = user;
  pthread_mutex_lock(&f->mu);
  snprintf(f->id, sizeof(f->id), "%s", id);
  f->reports++;
  pthread_mutex_unlock(&f->mu);
}

static void *forever_main(void *arg) {
  forever *f = arg;
  mcp_call_options *o = mcp_call_options_new();
  mcp_call_options_set_timeout_ms(o, 0);
  mcp_call_options_set_task_status(o, on_status, f);
  char *out = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_manager_call_tool(f->m, "tk/forever", NULL, o, &out, &err);
  mcp_free(out);
  mcp_error_clear(&err);
  mcp_call_options_free(o);
  pthread_mutex_lock(&f->mu);
  f->st = st;
  f->done = true;
  pthread_mutex_unlock(&f->mu);
  return NULL;
}

static bool has_id(void *arg) {
  forever *f = arg;
  pthread_mutex_lock(&f->mu);
  bool ok = f->id[0] != '\0';
  pthread_mutex_unlock(&f->mu);
  return ok;
}

static bool is_done(void *arg) {
  forever *f = arg;
  pthread_mutex_lock(&f->mu);
  bool ok = f->done;
  pthread_mutex_unlock(&f->mu);
  return ok;
}

/* A running task found by its id is shown, cancelled with one tasks/cancel
 * (never notifications/cancelled), and the call following it ends. */
static void cancel_running(const char *era) {
  setup_paths();
  forever f = {.st = MCP_OK};
  pthread_mutex_init(&f.mu, NULL);
  f.m = start(era);
  pthread_t th;
  ck_assert_int_eq(pthread_create(&th, NULL, forever_main, &f), 0);
  ck_assert(WAIT_UNTIL(has_id(&f), 20000));
  json_object *arr = NULL, *e = listed(f.m, f.id, &arr);
  ck_assert_ptr_nonnull(e);
  ck_assert_str_eq(member(e, "tool"), "forever");
  ck_assert_str_eq(member(e, "status"), "working");
  json_object_put(arr);
  char *out = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_msg(mcp_manager_get_task(f.m, "tk", f.id, NULL, &out, &err) == MCP_OK, "%s",
                err.message);
  ck_assert_ptr_nonnull(strstr(out, "\"status\":\"working\""));
  mcp_free(out);
  ck_assert_msg(mcp_manager_cancel_task(f.m, "tk", f.id, NULL, &err) == MCP_OK, "%s", err.message);
  ck_assert(WAIT_UNTIL(is_done(&f), 20000));
  pthread_join(th, NULL);
  ck_assert_int_eq(f.st, MCP_ECANCELLED);
  ck_assert_int_eq(log_count("\"method\":\"tasks/cancel\""), 1);
  /* None for the task (the listen's own, replaced to watch the task for
   * pushed states, carry the reason "subscriptions changed"). */
  ck_assert_int_eq(log_count("notifications/cancelled"),
                   log_count("\"reason\":\"subscriptions changed\""));
  e = listed(f.m, f.id, &arr);
  ck_assert_str_eq(member(e, "status"), "cancelled");
  json_object_put(arr);
  /* Waiting on an ended task gives its end at once. */
  ck_assert_int_eq(mcp_manager_wait_task(f.m, "tk", f.id, NULL, &out, &err), MCP_ECANCELLED);
  mcp_error_clear(&err);
  mcp_free(out);
  mcp_manager_free(f.m);
  pthread_mutex_destroy(&f.mu);
  cleanup();
}

START_TEST(modern_cancel_running) { cancel_running("modern"); }
END_TEST
START_TEST(legacy_cancel_running) { cancel_running("legacy"); }
END_TEST

static Suite *mtasks_suite(void) {
  Suite *s = suite_create("manager_tasks");
  TCase *p = tcase_create("pure");
  tcase_add_test(p, parse_records);
  suite_add_tcase(s, p);
  TCase *t = tcase_create("server");
  tcase_set_timeout(t, 120);
  tcase_add_test(t, modern_records);
  tcase_add_test(t, legacy_records);
  tcase_add_test(t, modern_cancel_running);
  tcase_add_test(t, legacy_cancel_running);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return run_suite(mtasks_suite()); }
