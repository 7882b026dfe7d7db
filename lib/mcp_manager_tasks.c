/* SPDX-License-Identifier: MIT */
/*
 * mcp_manager_tasks.c: the task ids a manager keeps (see
 * mcp_manager_tasks.h for the file), the recorder a plain
 * mcp_manager_call_tool() runs with, and the manager's task calls by
 * server and id: mcp_manager_list_tasks(), mcp_manager_get_task(),
 * mcp_manager_cancel_task(), mcp_manager_wait_task().
 *
 * Owns the record files and their lock files.  Knows nothing of the
 * manager's state machine: it reaches a server's connection only through
 * mcp__manager_on_server(), and speaks to it through the client's task
 * API (mcp_tasks.c) and plain requests.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "mcp_cache.h"
#include "mcp_fsafe.h"
#include "mcp_jsonrpc.h"
#include "mcp_manager_tasks.h"
#include "mcp_task_parse.h"

#define TEXT_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)
/* Longest task id, tool name or statusMessage kept in a record. */
#define FIELD_MAX 4096
/* Pages of a legacy tasks/list read at most. */
#define LIST_PAGES 64

struct mcp__mtasks {
  char *dir;
  pthread_mutex_t lock;
  void (*warn)(void *user, const char *server, const char *message);
  void *user;
};

mcp__mtasks *mcp__mtasks_new(const char *dir, void (*warn)(void *, const char *, const char *),
                             void *user) {
  mcp__mtasks *st = mcp__calloc(1, sizeof(*st));
  if (!st || !(st->dir = mcp__strdup(dir))) {
    mcp__free(st);
    return NULL;
  }
  pthread_mutex_init(&st->lock, NULL);
  st->warn = warn;
  st->user = user;
  return st;
}

void mcp__mtasks_free(mcp__mtasks *st) {
  if (!st) return;
  pthread_mutex_destroy(&st->lock);
  mcp__free(st->dir);
  mcp__free(st);
}

/* ---- the file ---------------------------------------------------------------- */

static bool status_of(const char *w, mcp_task_status *out) {
  static const mcp_task_status all[] = {MCP_TASK_WORKING, MCP_TASK_INPUT_REQUIRED,
                                        MCP_TASK_COMPLETED, MCP_TASK_FAILED, MCP_TASK_CANCELLED};
  for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
    if (strcmp(w, mcp__task_status_word(all[i])) == 0) return *out = all[i], true;
  return false;
}

static bool ended(mcp_task_status s) {
  return s == MCP_TASK_COMPLETED || s == MCP_TASK_FAILED || s == MCP_TASK_CANCELLED;
}

/* A string member of |o| that is 1..FIELD_MAX bytes, or NULL. */
static const char *str_of(json_object *o, const char *key) {
  json_object *v = NULL;
  if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
    return NULL;
  int n = json_object_get_string_len(v);
  return n > 0 && n <= FIELD_MAX ? json_object_get_string(v) : NULL;
}

static bool int_of(json_object *o, const char *key, int64_t *out) {
  json_object *v = NULL;
  if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
    return false;
  *out = json_object_get_int64(v);
  return *out >= 0;
}

/* A copy of record |r| when it has the shape, else NULL. */
static json_object *valid_record(json_object *r) {
  if (!json_object_is_type(r, json_type_object)) return NULL;
  const char *id = str_of(r, "taskId"), *status = str_of(r, "status");
  const char *tool = str_of(r, "tool"), *msg = str_of(r, "statusMessage");
  int64_t created = 0, updated = 0;
  mcp_task_status s;
  if (!id || !status || !status_of(status, &s) || !int_of(r, "createdAt", &created) ||
      !int_of(r, "updatedAt", &updated))
    return NULL;
  json_object *o = json_object_new_object();
  if (!o || mcp__json_add(o, "taskId", json_object_new_string(id)) ||
      (tool && mcp__json_add(o, "tool", json_object_new_string(tool))) ||
      mcp__json_add(o, "createdAt", json_object_new_int64(created)) ||
      mcp__json_add(o, "updatedAt", json_object_new_int64(updated)) ||
      mcp__json_add(o, "status", json_object_new_string(status)) ||
      (msg && mcp__json_add(o, "statusMessage", json_object_new_string(msg)))) {
    json_object_put(o);
    return NULL;
  }
  return o;
}

mcp_status mcp__mtasks_parse(const char *data, size_t len, const char *server,
                             json_object **records) {
  *records = NULL;
  json_object *root = mcp__jsonrpc_parse(data, len, NULL), *v = NULL, *arr = NULL;
  const char *srv = root && json_object_is_type(root, json_type_object) ? str_of(root, "server")
                                                                        : NULL;
  bool ok = srv && strcmp(srv, server) == 0 && json_object_object_get_ex(root, "version", &v) &&
            json_object_is_type(v, json_type_int) &&
            json_object_get_int64(v) == MCP__MTASKS_VERSION &&
            json_object_object_get_ex(root, "tasks", &arr) &&
            json_object_is_type(arr, json_type_array);
  if (!ok) {
    json_object_put(root);
    return MCP_EPROTO;
  }
  json_object *out = json_object_new_array();
  size_t n = json_object_array_length(arr);
  for (size_t i = 0; out && i < n && json_object_array_length(out) < MCP__MTASKS_MAX; i++) {
    json_object *r = valid_record(json_object_array_get_idx(arr, i));
    if (r && json_object_array_add(out, r) != 0) json_object_put(r);
  }
  json_object_put(root);
  if (!out) return MCP_ENOMEM;
  *records = out;
  return MCP_OK;
}

/* The record file's and lock file's names (no directory), new strings. */
static mcp_status names_of(const char *server, char **file, char **lockf) {
  *file = *lockf = NULL;
  char *path = NULL;
  mcp_status s = mcp__cache_path(".", server, &path); /* "./tools-<san>-<hex>.json" */
  if (s != MCP_OK) return s;
  size_t n = strlen(path);
  /* The tool cache's stem with "tasks-" for "tools-". */
  *file = n > 13 ? mcp__asprintf("tasks-%s", path + 8) : NULL;
  *lockf = n > 13 ? mcp__asprintf("tasks-%.*s.lock", (int)(n - 13), path + 8) : NULL;
  mcp__free(path);
  if (*file && *lockf) return MCP_OK;
  mcp__free(*file);
  mcp__free(*lockf);
  *file = *lockf = NULL;
  return MCP_ENOMEM;
}

/* Reads |server|'s records from dir/|file| (empty when absent or bad). */
static mcp_status load(const char *dir, const char *file, const char *server, json_object **out,
                       mcp_error *err) {
  *out = NULL;
  char *path = mcp__asprintf("%s/%s", dir, file);
  if (!path) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  char why[512];
  int fd = -1, e = mcp__fsafe_open(path, &fd, why, sizeof(why));
  mcp__free(path);
  if (e == ENOENT) return (*out = json_object_new_array()) ? MCP_OK : MCP_ENOMEM;
  if (e != 0) return mcp__error_set(err, MCP_EIO, "task records: %s", why);
  mcp_buf b;
  mcp__buf_init(&b);
  char chunk[8192];
  ssize_t r;
  while ((r = read(fd, chunk, sizeof(chunk))) > 0 && b.len < MCP__MTASKS_FILE_MAX)
    if (mcp__buf_append(&b, chunk, (size_t)r) != MCP_OK) break;
  close(fd);
  mcp_status s = MCP_OK;
  if (!b.data || mcp__mtasks_parse(b.data, b.len, server, out) != MCP_OK) s = MCP_EPROTO;
  mcp__buf_free(&b);
  if (s != MCP_OK && !(*out = json_object_new_array()))
    return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  return MCP_OK; /* a bad file counts as none; the next write replaces it */
}

/* Drops ended records older than the keep time, then the oldest while
 * there are too many. */
static void prune(json_object *arr, int64_t now) {
  for (size_t i = json_object_array_length(arr); i-- > 0;) {
    json_object *r = json_object_array_get_idx(arr, i);
    int64_t up = 0;
    mcp_task_status s = MCP_TASK_WORKING;
    int_of(r, "updatedAt", &up);
    status_of(str_of(r, "status") ? str_of(r, "status") : "", &s);
    if (ended(s) && now - up > MCP__MTASKS_KEEP_S) json_object_array_del_idx(arr, i, 1);
  }
  size_t n = json_object_array_length(arr);
  if (n > MCP__MTASKS_MAX) json_object_array_del_idx(arr, 0, n - MCP__MTASKS_MAX);
}

/* Writes |arr| as |server|'s file. */
static mcp_status store(const char *dir, const char *file, const char *server, json_object *arr,
                        mcp_error *err) {
  json_object *root = json_object_new_object();
  if (!root || mcp__json_add(root, "version", json_object_new_int(MCP__MTASKS_VERSION)) ||
      mcp__json_add(root, "server", json_object_new_string(server)) ||
      mcp__json_add(root, "tasks", json_object_get(arr))) {
    json_object_put(root);
    return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  }
  const char *text = json_object_to_json_string_ext(root, TEXT_FLAGS);
  struct mcp_fsafe_part parts[2] = {{text, text ? strlen(text) : 0}, {"\n", 1}};
  char why[512];
  int e = text ? mcp__fsafe_replace(dir, file, parts, 2, why, sizeof(why)) : ENOMEM;
  json_object_put(root);
  if (e == ENOMEM) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  if (e) return mcp__error_set(err, MCP_EIO, "cannot write the task records: %s", why);
  return MCP_OK;
}

/* Runs |fn| on |server|'s records under the store's mutex and the file's
 * lock; with |write|, the records |fn| changed are written back. */
static mcp_status with_records(mcp__mtasks *st, const char *server, bool write,
                               void (*fn)(json_object *arr, void *arg), void *arg,
                               json_object **copy, mcp_error *err) {
  char *file = NULL, *lockf = NULL, why[512];
  mcp_status s = names_of(server, &file, &lockf);
  if (s != MCP_OK) return mcp__error_set(err, s, "task records of \"%s\": invalid name", server);
  pthread_mutex_lock(&st->lock);
  int e = mcp__fsafe_dir(st->dir, write, why, sizeof(why)), lfd = -1;
  json_object *arr = NULL;
  if (e == ENOENT && !write) {
    s = (arr = json_object_new_array()) ? MCP_OK : MCP_ENOMEM;
  } else if (e != 0) {
    s = mcp__error_set(err, MCP_EIO, "task records: %s", why);
  } else {
    char *lp = mcp__asprintf("%s/%s", st->dir, lockf);
    lfd = lp ? open(lp, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600) : -1;
    mcp__free(lp);
    /* No lock file (a read-only directory): readers go on without one. */
    if (lfd >= 0) {
      while (flock(lfd, write ? LOCK_EX : LOCK_SH) == -1 && errno == EINTR) {
      }
    } else if (write) {
      s = mcp__error_set(err, MCP_EIO, "task records: %s/%s: %s", st->dir, lockf, strerror(errno));
    }
    if (s == MCP_OK) s = load(st->dir, file, server, &arr, err);
    if (s == MCP_OK && fn) fn(arr, arg);
    if (s == MCP_OK && write) {
      prune(arr, (int64_t)time(NULL));
      s = store(st->dir, file, server, arr, err);
    }
    if (lfd >= 0) close(lfd); /* drops the lock */
  }
  pthread_mutex_unlock(&st->lock);
  mcp__free(file);
  mcp__free(lockf);
  if (s == MCP_OK && copy) *copy = json_object_get(arr);
  json_object_put(arr);
  return s;
}

typedef struct put_arg {
  const char *id, *tool, *message;
  mcp_task_status status;
  int64_t now;
  bool oom;
} put_arg;

static void put_fn(json_object *arr, void *arg) {
  put_arg *p = arg;
  json_object *r = NULL;
  size_t n = json_object_array_length(arr);
  for (size_t i = 0; i < n && !r; i++) {
    const char *id = str_of(json_object_array_get_idx(arr, i), "taskId");
    if (id && strcmp(id, p->id) == 0) r = json_object_array_get_idx(arr, i);
  }
  bool fresh = !r;
  if (fresh && !(r = json_object_new_object())) {
    p->oom = true;
    return;
  }
  json_object_object_del(r, "statusMessage");
  p->oom = mcp__json_add(r, "taskId", json_object_new_string(p->id)) ||
           (p->tool && mcp__json_add(r, "tool", json_object_new_string(p->tool))) ||
           (fresh && mcp__json_add(r, "createdAt", json_object_new_int64(p->now))) ||
           mcp__json_add(r, "updatedAt", json_object_new_int64(p->now)) ||
           mcp__json_add(r, "status", json_object_new_string(mcp__task_status_word(p->status))) ||
           (p->message && mcp__json_add(r, "statusMessage", json_object_new_string(p->message)));
  if (fresh && (p->oom || json_object_array_add(arr, r) != 0)) {
    json_object_put(r);
    p->oom = true;
  }
}

mcp_status mcp__mtasks_put(mcp__mtasks *st, const char *server, const char *id, const char *tool,
                           mcp_task_status status, const char *message, mcp_error *err) {
  if (!st || !server || !id || !*id || strlen(id) > FIELD_MAX)
    return mcp__error_set(err, MCP_EINVAL, "invalid argument");
  if (tool && strlen(tool) > FIELD_MAX) tool = NULL;
  char cut[FIELD_MAX + 1];
  if (message && strlen(message) > FIELD_MAX) {
    memcpy(cut, message, FIELD_MAX);
    cut[FIELD_MAX] = '\0';
    message = cut;
  }
  put_arg p = {id, tool, message && *message ? message : NULL, status, (int64_t)time(NULL), false};
  mcp_status s = with_records(st, server, true, put_fn, &p, NULL, err);
  if (s == MCP_OK && p.oom) s = mcp__error_set(err, MCP_ENOMEM, "out of memory");
  return s;
}

mcp_status mcp__mtasks_read(mcp__mtasks *st, const char *server, json_object **records,
                            mcp_error *err) {
  *records = NULL;
  if (!st) return (*records = json_object_new_array()) ? MCP_OK : MCP_ENOMEM;
  return with_records(st, server, false, NULL, NULL, records, err);
}

/* Records a status and warns (through the manager's log) when it cannot. */
static void put_or_warn(mcp__mtasks *st, const char *server, const char *id, const char *tool,
                        mcp_task_status status, const char *message) {
  if (!st || !id || !*id) return;
  mcp_error e = MCP_ERROR_INIT;
  if (mcp__mtasks_put(st, server, id, tool, status, message, &e) != MCP_OK && st->warn)
    st->warn(st->user, server, e.message ? e.message : "cannot record the task");
  mcp_error_clear(&e);
}

/* ---- the plain call's recorder ------------------------------------------------- */

static void on_status(void *user, const char *id, mcp_task_status status, const char *message) {
  mcp__mtask_rec *r = user;
  put_or_warn(r->st, r->server, id, r->tool, status, message);
  if (r->fn) r->fn(r->user, id, status, message);
}

const mcp_call_options *mcp__mtasks_wrap(mcp__mtasks *st, const char *server, const char *tool,
                                         const mcp_call_options *opts, mcp__mtask_rec *rec,
                                         mcp_call_options *local) {
  if (!st) return opts;
  *local = (mcp_call_options){.timeout_ms = -1};
  if (opts) *local = *opts;
  *rec = (mcp__mtask_rec){st, server, tool, local->task_status, local->task_status_user};
  local->task_status = on_status;
  local->task_status_user = rec;
  return local;
}

/* ---- the manager's task calls ----------------------------------------------------- */

typedef struct task_arg {
  mcp__mtasks *st;
  const char *server, *id;
} task_arg;

/* {"taskId":ID} as text. */
static char *id_params(const char *id) {
  json_object *p = json_object_new_object();
  char *out = NULL;
  if (p && mcp__json_add(p, "taskId", json_object_new_string(id)) == 0)
    out = mcp__strdup(json_object_to_json_string_ext(p, TEXT_FLAGS));
  json_object_put(p);
  return out;
}

/* Records the task state in a tasks/get (or legacy tasks/cancel) answer. */
static void record_answer(const task_arg *a, mcp_client *c, const char *text) {
  mcp_task_state ts;
  mcp_error e = MCP_ERROR_INIT;
  if (mcp__task_parse(text, strlen(text), mcp__client_modern(c), MCP_TASK_SHAPE_STATE, &ts, &e) ==
          MCP_OK &&
      strcmp(ts.id, a->id) == 0)
    put_or_warn(a->st, a->server, ts.id, NULL, ts.status, ts.message);
  mcp__task_state_clear(&ts);
  mcp_error_clear(&e);
}

static mcp_status do_task_request(mcp_client *c, const task_arg *a, const char *method,
                                  const mcp_call_options *opts, char **result, mcp_error *err) {
  char *params = id_params(a->id);
  if (!params) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  mcp_status s = mcp_client_request(c, method, params, opts, result, err);
  mcp__free(params);
  return s;
}

static mcp_status do_get(mcp_client *c, const void *arg, const mcp_call_options *opts,
                         char **result, mcp_error *err) {
  const task_arg *a = arg;
  mcp_status s = do_task_request(c, a, "tasks/get", opts, result, err);
  if (s == MCP_OK) record_answer(a, c, *result);
  return s;
}

static mcp_status do_cancel(mcp_client *c, const void *arg, const mcp_call_options *opts,
                            char **result, mcp_error *err) {
  const task_arg *a = arg;
  mcp_status s = do_task_request(c, a, "tasks/cancel", opts, result, err);
  if (s == MCP_OK && !mcp__client_modern(c)) record_answer(a, c, *result);
  return s;
}

/* Checks the arguments every task call shares. */
static mcp_status check_args(mcp_manager *m, const char *server, const char *id, mcp_error *err) {
  if (!m || !server || !id || !*id) return mcp__error_set(err, MCP_EINVAL, "invalid argument");
  return MCP_OK;
}

MCP_EXTERN mcp_status mcp_manager_get_task(mcp_manager *m, const char *server, const char *task_id,
                                           const mcp_call_options *opts, char **json,
                                           mcp_error *err) {
  if (json) *json = NULL;
  mcp_status s = check_args(m, server, task_id, err);
  if (s != MCP_OK || !json)
    return s != MCP_OK ? s : mcp__error_set(err, MCP_EINVAL, "invalid argument");
  task_arg a = {mcp__manager_task_store(m), server, task_id};
  return mcp__manager_on_server(m, server, do_get, &a, true, opts, json, err);
}

MCP_EXTERN mcp_status mcp_manager_cancel_task(mcp_manager *m, const char *server,
                                              const char *task_id, const mcp_call_options *opts,
                                              mcp_error *err) {
  mcp_status s = check_args(m, server, task_id, err);
  if (s != MCP_OK) return s;
  task_arg a = {mcp__manager_task_store(m), server, task_id};
  char *out = NULL;
  s = mcp__manager_on_server(m, server, do_cancel, &a, true, opts, &out, err);
  mcp__free(out);
  return s;
}

typedef struct wait_arg {
  task_arg t;
  const char *tool; /* from the record, or NULL */
} wait_arg;

static mcp_status do_wait(mcp_client *c, const void *arg, const mcp_call_options *opts,
                          char **result, mcp_error *err) {
  const wait_arg *a = arg;
  mcp__mtask_rec rec;
  mcp_call_options local;
  const mcp_call_options *o = mcp__mtasks_wrap(a->t.st, a->t.server, a->tool, opts, &rec, &local);
  mcp_task *t = NULL;
  mcp_status s = mcp_client_resume_task(c, a->t.id, o, &t, err);
  if (s == MCP_OK) s = mcp_task_wait(t, o, result, err);
  mcp_task_free(t);
  return s;
}

MCP_EXTERN mcp_status mcp_manager_wait_task(mcp_manager *m, const char *server, const char *task_id,
                                            const mcp_call_options *opts, char **result_json,
                                            mcp_error *err) {
  if (result_json) *result_json = NULL;
  mcp_status s = check_args(m, server, task_id, err);
  if (s == MCP_OK && !result_json) s = mcp__error_set(err, MCP_EINVAL, "invalid argument");
  if (s != MCP_OK) return s;
  wait_arg a = {{mcp__manager_task_store(m), server, task_id}, NULL};
  /* The tool's name, from the record when there is one. */
  json_object *recs = NULL;
  char *tool = NULL;
  mcp_error e = MCP_ERROR_INIT;
  if (a.t.st && mcp__mtasks_read(a.t.st, server, &recs, &e) == MCP_OK) {
    size_t n = json_object_array_length(recs);
    for (size_t i = 0; i < n && !tool; i++) {
      json_object *r = json_object_array_get_idx(recs, i);
      const char *id = str_of(r, "taskId"), *tn = str_of(r, "tool");
      if (id && tn && strcmp(id, task_id) == 0) tool = mcp__strdup(tn);
    }
  }
  mcp_error_clear(&e);
  json_object_put(recs);
  a.tool = tool;
  s = mcp__manager_on_server(m, server, do_wait, &a, true, opts, result_json, err);
  mcp__free(tool);
  return s;
}

/* ---- listing ------------------------------------------------------------------------ */

/* Whether the legacy server behind |c| offers tasks/list. */
static bool offers_list(mcp_client *c) {
  if (mcp__client_modern(c)) return false;
  const char *info = mcp_client_server_info(c);
  if (!info || !strstr(info, "\"tasks\"")) return false;
  json_object *o = mcp__jsonrpc_parse(info, strlen(info), NULL), *v = o;
  static const char *const path[] = {"capabilities", "tasks", "list"};
  bool ok = o != NULL;
  for (size_t i = 0; ok && i < sizeof(path) / sizeof(path[0]); i++)
    ok = json_object_is_type(v, json_type_object) && json_object_object_get_ex(v, path[i], &v);
  json_object_put(o);
  return ok;
}

/* The server's tasks/list, every page, as one JSON array text ("" when it
 * offers none). */
static mcp_status do_list(mcp_client *c, const void *arg, const mcp_call_options *opts,
                          char **result, mcp_error *err) {
  (void)arg;
  *result = NULL;
  if (!offers_list(c)) return (*result = mcp__strdup("")) ? MCP_OK : MCP_ENOMEM;
  json_object *all = json_object_new_array();
  char *cursor = NULL;
  mcp_status s = all ? MCP_OK : mcp__error_set(err, MCP_ENOMEM, "out of memory");
  for (int page = 0; s == MCP_OK && page < LIST_PAGES; page++) {
    json_object *p = json_object_new_object();
    if (!p || (cursor && mcp__json_add(p, "cursor", json_object_new_string(cursor)))) {
      json_object_put(p);
      s = mcp__error_set(err, MCP_ENOMEM, "out of memory");
      break;
    }
    char *text = NULL;
    s = mcp_client_request(c, "tasks/list", json_object_to_json_string_ext(p, TEXT_FLAGS), opts,
                           &text, err);
    json_object_put(p);
    if (s != MCP_OK) break;
    json_object *r = mcp__jsonrpc_parse(text, strlen(text), NULL), *tasks = NULL;
    mcp__free(text);
    if (!json_object_object_get_ex(r, "tasks", &tasks) ||
        !json_object_is_type(tasks, json_type_array)) {
      json_object_put(r);
      s = mcp__error_set(err, MCP_EPROTO, "tasks/list: the answer has no \"tasks\" array");
      break;
    }
    for (size_t i = 0; i < json_object_array_length(tasks); i++)
      json_object_array_add(all, json_object_get(json_object_array_get_idx(tasks, i)));
    const char *next = str_of(r, "nextCursor");
    mcp__free(cursor);
    cursor = next ? mcp__strdup(next) : NULL;
    json_object_put(r);
    if (!cursor) break;
  }
  mcp__free(cursor);
  if (s == MCP_OK) {
    const char *t = json_object_to_json_string_ext(all, TEXT_FLAGS);
    if (!(*result = t ? mcp__strdup(t) : NULL))
      s = mcp__error_set(err, MCP_ENOMEM, "out of memory");
  }
  json_object_put(all);
  return s;
}

/* Unix seconds as "YYYY-MM-DDTHH:MM:SSZ". */
static json_object *iso_time(int64_t t) {
  time_t tt = (time_t)t;
  struct tm tm;
  char buf[32];
  if (!gmtime_r(&tt, &tm) || !strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm)) return NULL;
  return json_object_new_string(buf);
}

/* The entry of record |r| for the listing. */
static json_object *record_entry(const char *server, json_object *r) {
  json_object *o = json_object_new_object();
  const char *tool = str_of(r, "tool"), *msg = str_of(r, "statusMessage");
  int64_t created = 0, updated = 0;
  int_of(r, "createdAt", &created);
  int_of(r, "updatedAt", &updated);
  if (!o || mcp__json_add(o, "server", json_object_new_string(server)) ||
      mcp__json_add(o, "taskId", json_object_new_string(str_of(r, "taskId"))) ||
      (tool && mcp__json_add(o, "tool", json_object_new_string(tool))) ||
      mcp__json_add(o, "status", json_object_new_string(str_of(r, "status"))) ||
      (msg && mcp__json_add(o, "statusMessage", json_object_new_string(msg))) ||
      mcp__json_add(o, "createdAt", iso_time(created)) ||
      mcp__json_add(o, "lastUpdatedAt", iso_time(updated)) ||
      mcp__json_add(o, "recorded", json_object_new_boolean(1)) ||
      mcp__json_add(o, "listed", json_object_new_boolean(0))) {
    json_object_put(o);
    return NULL;
  }
  return o;
}

/* Merges the server's listed task |t| into |out| (by taskId). */
static void merge_listed(json_object *out, const char *server, json_object *t) {
  const char *id = str_of(t, "taskId");
  if (!id) return;
  json_object *e = NULL;
  for (size_t i = 0; i < json_object_array_length(out) && !e; i++) {
    const char *eid = str_of(json_object_array_get_idx(out, i), "taskId");
    if (eid && strcmp(eid, id) == 0) e = json_object_array_get_idx(out, i);
  }
  if (!e) {
    if (!(e = json_object_new_object())) return;
    if (json_object_array_add(out, e) != 0) {
      json_object_put(e);
      return;
    }
    mcp__json_add(e, "server", json_object_new_string(server));
    mcp__json_add(e, "taskId", json_object_new_string(id));
    mcp__json_add(e, "recorded", json_object_new_boolean(0));
  }
  /* The server's word is newer than the record's. */
  static const char *const keys[] = {"status", "statusMessage", "createdAt", "lastUpdatedAt"};
  for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
    const char *v = str_of(t, keys[k]);
    if (v) mcp__json_add(e, keys[k], json_object_new_string(v));
  }
  mcp__json_add(e, "listed", json_object_new_boolean(1));
}

MCP_EXTERN mcp_status mcp_manager_list_tasks(mcp_manager *m, const char *server,
                                             const mcp_call_options *opts, char **json,
                                             mcp_error *err) {
  if (json) *json = NULL;
  if (!m || !server || !json) return mcp__error_set(err, MCP_EINVAL, "invalid argument");
  char *listed = NULL;
  mcp_error lerr = MCP_ERROR_INIT;
  mcp_status ls = mcp__manager_on_server(m, server, do_list, NULL, true, opts, &listed, &lerr);
  if (ls == MCP_ENOTFOUND && lerr.message && strstr(lerr.message, "no server named")) {
    mcp_error_clear(&lerr);
    return mcp__error_set(err, MCP_ENOTFOUND, "no server named \"%s\"", server);
  }
  json_object *recs = NULL, *out = json_object_new_array();
  mcp_status s = out ? mcp__mtasks_read(mcp__manager_task_store(m), server, &recs, err)
                     : mcp__error_set(err, MCP_ENOMEM, "out of memory");
  for (size_t i = 0; s == MCP_OK && i < json_object_array_length(recs); i++) {
    json_object *e = record_entry(server, json_object_array_get_idx(recs, i));
    if (!e || json_object_array_add(out, e) != 0) {
      json_object_put(e);
      s = mcp__error_set(err, MCP_ENOMEM, "out of memory");
    }
  }
  json_object *arr = s == MCP_OK && ls == MCP_OK && listed && *listed
                         ? mcp__jsonrpc_parse(listed, strlen(listed), NULL)
                         : NULL;
  for (size_t i = 0; arr && i < json_object_array_length(arr); i++)
    merge_listed(out, server, json_object_array_get_idx(arr, i));
  json_object_put(arr);
  mcp__free(listed);
  if (s == MCP_OK) {
    const char *t = json_object_to_json_string_ext(out, TEXT_FLAGS);
    if (!(*json = t ? mcp__strdup(t) : NULL)) s = mcp__error_set(err, MCP_ENOMEM, "out of memory");
  }
  json_object_put(out);
  json_object_put(recs);
  /* The records are there even when the server's list could not be read. */
  if (s == MCP_OK && ls != MCP_OK) {
    s = ls;
    if (err) mcp__error_copy(err, &lerr);
  }
  mcp_error_clear(&lerr);
  return s;
}
