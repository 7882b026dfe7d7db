/* SPDX-License-Identifier: MIT */
/*
 * mcp_tasks.c: long-running tool calls as tasks, both eras (see
 * mcp_tasks.h and the "Tasks" section of mcpconn.h).
 */
#include "config.h"

#include <json-c/json.h>
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "mcp_cancel.h"
#include "mcp_client.h"
#include "mcp_era.h"
#include "mcp_jsonrpc.h"
#include "mcp_task_parse.h"
#include "mcp_tasks.h"

/* The poll interval when the server names none, and the bounds put on
 * what it names (a 0 would spin; a day is surely a mistake). */
#define DEFAULT_POLL_MS 500
#define MIN_POLL_MS 5
#define MAX_POLL_MS 60000
/* tasks/cancel sent on a timeout or a fired token waits at most this. */
#define CANCEL_TIMEOUT_MS 5000
/* A modern task asking for input more often than this fails the call. */
#define MAX_INPUT_ROUNDS 32

#define TEXT_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

struct mcp_task {
  mcp_client *c;
  bool modern;
  mcp_task_state st;
  json_object *answered; /* modern: inputRequests keys already answered */
  int input_rounds;
  double reports; /* status reports made (the progress value) */
};

/* ---- small helpers -------------------------------------------------------- */

static mcp_task *task_new(mcp_client *c) {
  mcp_task *t = mcp__calloc(1, sizeof(*t));
  if (!t) return NULL;
  t->c = c;
  t->modern = mcp__client_modern(c);
  t->st.poll_ms = -1;
  return t;
}

MCP_EXTERN void mcp_task_free(mcp_task *t) {
  if (!t) return;
  mcp__task_state_clear(&t->st);
  json_object_put(t->answered);
  mcp__free(t);
}

MCP_EXTERN void mcp_call_options_set_task_mode(mcp_call_options *o, mcp_task_mode mode) {
  if (o) o->task_mode = (int)mode;
}

MCP_EXTERN const char *mcp_task_id(const mcp_task *t) { return t && t->st.id ? t->st.id : ""; }
MCP_EXTERN mcp_task_status mcp_task_get_status(const mcp_task *t) {
  return t ? t->st.status : MCP_TASK_FAILED;
}
MCP_EXTERN const char *mcp_task_status_message(const mcp_task *t) {
  return t ? t->st.message : NULL;
}

/* {"taskId":ID} (+ "inputResponses" when given, stolen), as text. */
static char *id_params(const char *id, json_object *responses) {
  json_object *p = json_object_new_object();
  char *out = NULL;
  if (p && mcp__json_add(p, "taskId", json_object_new_string(id)) == 0 &&
      (!responses || mcp__json_add(p, "inputResponses", json_object_get(responses)) == 0)) {
    const char *t = json_object_to_json_string_ext(p, TEXT_FLAGS);
    if (t) out = mcp__strdup(t);
  }
  json_object_put(p);
  return out;
}

/* Call options for one request of a task: the call's progress is not
 * asked for (status changes are reported instead), no cancel token (a
 * token fired ends the task with tasks/cancel), |timeout_ms|. */
static mcp_call_options *req_opts(int64_t timeout_ms) {
  mcp_call_options *o = mcp_call_options_new();
  if (o) mcp_call_options_set_timeout_ms(o, timeout_ms);
  return o;
}

/* A tasks/... request |method| on |t|; |responses| optional (tasks/update). */
static mcp_status task_request(mcp_task *t, const char *method, json_object *responses,
                               int64_t timeout_ms, char **out, mcp_error *err) {
  *out = NULL;
  char *params = id_params(t->st.id, responses);
  mcp_call_options *o = req_opts(timeout_ms);
  mcp_status st = params && o ? mcp_client_request(t->c, method, params, o, out, err)
                              : mcp__error_set(err, MCP_ENOMEM, "out of memory");
  mcp_call_options_free(o);
  mcp__free(params);
  return st;
}

/* The time left until |deadline| as a request timeout (0: none). */
static int64_t left_ms(int64_t deadline, int64_t cap) {
  if (deadline == MCP_NO_DEADLINE) return cap;
  int64_t left = deadline - mcp__now_ms();
  if (left < 1) left = 1;
  return cap > 0 && cap < left ? cap : left;
}

/* Takes a new state |ns| into |t|: true when status or message changed. */
static bool take_state(mcp_task *t, mcp_task_state *ns) {
  bool changed = t->st.status != ns->status || !t->st.id ||
                 (t->st.message == NULL) != (ns->message == NULL) ||
                 (ns->message && strcmp(t->st.message, ns->message) != 0);
  mcp__task_state_clear(&t->st);
  t->st = *ns;
  memset(ns, 0, sizeof(*ns));
  return changed;
}

static mcp_status parse_into(mcp_task *t, const char *text, mcp_task_shape shape, bool *changed,
                             mcp_error *err) {
  mcp_task_state ns;
  mcp_status st = mcp__task_parse(text, strlen(text), t->modern, shape, &ns, err);
  if (st != MCP_OK) return st;
  /* The id a server answers tasks/get with is the one asked for. */
  if (shape == MCP_TASK_SHAPE_STATE && t->st.id && strcmp(ns.id, t->st.id) != 0) {
    mcp__task_state_clear(&ns);
    return mcp__error_set(err, MCP_EPROTO, "tasks/get: the server answered for another task");
  }
  bool ch = take_state(t, &ns);
  if (changed) *changed = ch;
  return MCP_OK;
}

MCP_EXTERN void mcp_call_options_set_task_status(mcp_call_options *o, mcp_task_status_fn fn,
                                                 void *user) {
  if (o) o->task_status = fn, o->task_status_user = user;
}

/* A status change for the call's task-status and progress callbacks. */
static void report(mcp_task *t, const mcp_call_options *o) {
  if (o && o->task_status)
    o->task_status(o->task_status_user, t->st.id, t->st.status, t->st.message);
  if (!o || !o->progress) return;
  mcp_buf b = {0};
  const char *w = mcp__task_status_word(t->st.status);
  if (mcp__buf_append(&b, "task ", 5) || mcp__buf_append(&b, t->st.id, strlen(t->st.id)) ||
      mcp__buf_append(&b, ": ", 2) || mcp__buf_append(&b, w, strlen(w)) ||
      (t->st.message && (mcp__buf_append(&b, ": ", 2) ||
                         mcp__buf_append(&b, t->st.message, strlen(t->st.message))))) {
    mcp__buf_free(&b);
    return;
  }
  t->reports += 1;
  o->progress(o->progress_user, t->reports, NAN, b.data);
  mcp__buf_free(&b);
}

/* ---- polling, input, cancel, result --------------------------------------- */

MCP_EXTERN mcp_status mcp_task_poll(mcp_task *t, const mcp_call_options *opts, mcp_error *err) {
  if (!t || !t->st.id) return mcp__error_set(err, MCP_EINVAL, "invalid argument");
  char *text = NULL;
  mcp_status st = task_request(t, "tasks/get", NULL, mcp__client_timeout(t->c, opts), &text, err);
  if (st == MCP_OK) st = parse_into(t, text, MCP_TASK_SHAPE_STATE, NULL, err);
  mcp__free(text);
  return st;
}

MCP_EXTERN mcp_status mcp_task_cancel(mcp_task *t, mcp_error *err) {
  if (!t || !t->st.id) return mcp__error_set(err, MCP_EINVAL, "invalid argument");
  if (!*t->st.id) return mcp__error_set(err, MCP_ESTATE, "the call ended without a task");
  char *text = NULL;
  int64_t to = mcp__client_timeout(t->c, NULL);
  mcp_status st = task_request(t, "tasks/cancel", NULL,
                               to > 0 && to < CANCEL_TIMEOUT_MS ? to : CANCEL_TIMEOUT_MS, &text,
                               err);
  /* The legacy answer is the task; the modern one an empty ack. */
  if (st == MCP_OK && !t->modern) {
    mcp_task_state ns;
    mcp_error perr = MCP_ERROR_INIT;
    if (mcp__task_parse(text, strlen(text), false, MCP_TASK_SHAPE_STATE, &ns, &perr) == MCP_OK &&
        strcmp(ns.id, t->st.id) == 0)
      take_state(t, &ns);
    else mcp__task_state_clear(&ns);
    mcp_error_clear(&perr);
  }
  mcp__free(text);
  return st;
}

/* The keys of |requests| (an inputRequests object) not answered yet, as a
 * new object; NULL (and *none) when every one was. */
static json_object *unanswered(mcp_task *t, const char *requests, mcp_error *err, bool *bad) {
  *bad = false;
  json_object *all = mcp__jsonrpc_parse(requests, strlen(requests), NULL);
  if (!all || !json_object_is_type(all, json_type_object)) {
    json_object_put(all);
    *bad = true;
    mcp__error_set(err, all ? MCP_EPROTO : MCP_ENOMEM, "tasks/get: invalid inputRequests");
    return NULL;
  }
  json_object *out = json_object_new_object();
  if (!out) {
    json_object_put(all);
    *bad = true;
    mcp__error_set(err, MCP_ENOMEM, "out of memory");
    return NULL;
  }
  json_object_object_foreach(all, key, v) {
    if (t->answered && json_object_object_get_ex(t->answered, key, NULL)) continue;
    json_object_object_add(out, key, json_object_get(v));
  }
  json_object_put(all);
  if (json_object_object_length(out) == 0) {
    json_object_put(out);
    return NULL;
  }
  return out;
}

MCP_EXTERN mcp_status mcp_task_input_requests(const mcp_task *t, char **requests_json,
                                              mcp_error *err) {
  if (!t || !requests_json) return mcp__error_set(err, MCP_EINVAL, "invalid argument");
  *requests_json = NULL;
  if (t->st.status != MCP_TASK_INPUT_REQUIRED || !t->st.inputs) return MCP_OK;
  bool bad = false;
  json_object *left = unanswered((mcp_task *)t, t->st.inputs, err, &bad);
  if (bad) return err ? err->status : MCP_EPROTO;
  if (!left) return MCP_OK;
  const char *s = json_object_to_json_string_ext(left, TEXT_FLAGS);
  *requests_json = s ? mcp__strdup(s) : NULL;
  json_object_put(left);
  return *requests_json ? MCP_OK : mcp__error_set(err, MCP_ENOMEM, "out of memory");
}

/* Sends tasks/update with |responses| (borrowed) and marks its keys answered. */
static mcp_status send_update(mcp_task *t, json_object *responses, int64_t timeout_ms,
                              mcp_error *err) {
  if (!t->answered && !(t->answered = json_object_new_object()))
    return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  char *text = NULL;
  mcp_status st = task_request(t, "tasks/update", responses, timeout_ms, &text, err);
  mcp__free(text);
  if (st != MCP_OK) return st;
  json_object_object_foreach(responses, key, v) {
    (void)v;
    json_object_object_add(t->answered, key, json_object_new_boolean(1));
  }
  return MCP_OK;
}

MCP_EXTERN mcp_status mcp_task_send_input(mcp_task *t, const char *responses_json,
                                          const mcp_call_options *opts, mcp_error *err) {
  if (!t || !t->st.id || !responses_json)
    return mcp__error_set(err, MCP_EINVAL, "invalid argument");
  if (!t->modern)
    return mcp__error_set(err, MCP_ESTATE,
                          "tasks/update exists only on 2026-07-28 connections (a 2025-11-25 "
                          "task asks by server requests, answered by the handlers)");
  json_object *r = mcp__jsonrpc_parse(responses_json, strlen(responses_json), NULL);
  if (!r || !json_object_is_type(r, json_type_object)) {
    json_object_put(r);
    return mcp__error_set(err, MCP_EINVAL, "the input responses must be a JSON object");
  }
  mcp_status st = send_update(t, r, mcp__client_timeout(t->c, opts), err);
  json_object_put(r);
  return st;
}

/* The final result for the caller from the result text |text| (taken). */
static mcp_status final_result(char *text, bool tool, char **result_json, mcp_error *err) {
  mcp_status st = tool ? mcp__client_tool_outcome(text, strlen(text), err) : MCP_OK;
  if (st != MCP_OK && st != MCP_ETOOLERROR) {
    mcp__free(text);
    return st;
  }
  *result_json = text;
  return st;
}

/* Why the call stops before the next poll, if it does. */
static mcp_status gate(mcp_task *t, const mcp_call_options *o, int64_t deadline, mcp_error *err) {
  if (o && o->cancel && mcp_cancel_is_fired(o->cancel))
    return mcp__error_set(err, MCP_ECANCELLED, "task %s: cancelled (tasks/cancel sent)", t->st.id);
  if (deadline != MCP_NO_DEADLINE && mcp__now_ms() >= deadline)
    return mcp__error_set(err, MCP_ETIMEDOUT, "task %s: timed out (tasks/cancel sent)", t->st.id);
  if (!mcp_client_is_open(t->c))
    return mcp__error_set(err, MCP_ECLOSED, "task %s: the connection closed", t->st.id);
  return MCP_OK;
}

/* Waits out the poll interval or until the server pushes a state
 * (|*pushed|, the caller's), woken early by a close or the call's token
 * (mcp__client_task_sleep); MCP_OK or why to stop. */
static mcp_status wait_interval(mcp_task *t, const mcp_call_options *o, int64_t deadline,
                                char **pushed, mcp_error *err) {
  int64_t ms = t->st.poll_ms < 0 ? DEFAULT_POLL_MS : t->st.poll_ms;
  if (ms < MIN_POLL_MS) ms = MIN_POLL_MS;
  if (ms > MAX_POLL_MS) ms = MAX_POLL_MS;
  int64_t until = mcp__now_ms() + ms;
  if (deadline != MCP_NO_DEADLINE && deadline < until) until = deadline;
  mcp_status st = gate(t, o, deadline, err);
  if (st != MCP_OK) return st;
  *pushed = mcp__client_task_sleep(t->c, t->modern ? t->st.id : NULL, o ? o->cancel : NULL, until);
  /* A stop woken at the same time wins over the state pushed. */
  if ((st = gate(t, o, deadline, err)) != MCP_OK) {
    mcp__free(*pushed);
    *pushed = NULL;
  }
  return st;
}

/* The failure of a failed modern task. */
static mcp_status failed(mcp_task *t, mcp_error *err) {
  const char *m = t->st.error_message ? t->st.error_message
                  : t->st.message     ? t->st.message
                                      : "no error given";
  char q[MCP_QUOTE_LONG];
  mcp_status st = mcp__error_set(err, MCP_ERPC, "task %s failed: %s", t->st.id,
                                 mcp__quote(q, sizeof(q), m, strlen(m)));
  if (err) err->rpc_code = t->st.has_error ? (int)t->st.error_code : 0;
  return st;
}

/* A legacy task's result: tasks/result (which blocks until the end; the
 * server's requests for input are answered by the handlers meanwhile). */
static mcp_status legacy_result(mcp_task *t, int64_t deadline, bool tool, char **result_json,
                                mcp_error *err) {
  char *text = NULL;
  mcp_status st = task_request(t, "tasks/result", NULL, left_ms(deadline, 0), &text, err);
  if (st != MCP_OK) {
    if (st == MCP_ERPC && err && err->message) {
      /* Say which task the server's error ended. */
      char *m = mcp__strdup(err->message);
      int code = err->rpc_code;
      if (m) {
        mcp__error_set(err, MCP_ERPC, "task %s failed: %s", t->st.id, m);
        err->rpc_code = code;
      }
      mcp__free(m);
    }
    return st;
  }
  return final_result(text, tool, result_json, err);
}

/* Sends tasks/cancel on the way out of a wait stopped by |why|. */
static void cancel_on_stop(mcp_task *t, mcp_status why) {
  if (why != MCP_ECANCELLED && why != MCP_ETIMEDOUT) return;
  mcp_error e = MCP_ERROR_INIT;
  mcp_task_cancel(t, &e);
  mcp_error_clear(&e);
}

/* The wait of a task (started at |t0|) with the call's options |o|. */
static mcp_status task_wait_for(mcp_task *t, const mcp_call_options *o, int64_t t0, bool tool,
                                char **result_json, mcp_error *err) {
  *result_json = NULL;
  int64_t timeout = mcp__client_timeout(t->c, o);
  int64_t deadline = timeout > 0 ? t0 + timeout : MCP_NO_DEADLINE;
  int64_t cap = o && o->reset_on_progress && o->max_total_ms > 0 ? t0 + o->max_total_ms
                                                                 : MCP_NO_DEADLINE;
  report(t, o);
  for (;;) {
    switch (t->st.status) {
    case MCP_TASK_COMPLETED:
      if (!t->modern) return legacy_result(t, deadline, tool, result_json, err);
      if (!t->st.result)
        return mcp__error_set(err, MCP_EPROTO, "task %s: completed without a result", t->st.id);
      {
        char *r = t->st.result;
        t->st.result = NULL;
        return final_result(r, tool, result_json, err);
      }
    case MCP_TASK_FAILED:
      if (!t->modern) return legacy_result(t, deadline, tool, result_json, err);
      return failed(t, err);
    case MCP_TASK_CANCELLED: {
      const char *m = t->st.message ? t->st.message : "";
      char q[MCP_QUOTE_LONG];
      return mcp__error_set(err, MCP_ECANCELLED, "task %s was cancelled%s%s", t->st.id,
                            *m ? ": " : "", mcp__quote(q, sizeof(q), m, strlen(m)));
    }
    case MCP_TASK_INPUT_REQUIRED:
      if (!t->modern) return legacy_result(t, deadline, tool, result_json, err);
      if (t->st.inputs) {
        bool bad = false;
        json_object *left = unanswered(t, t->st.inputs, err, &bad);
        if (bad) return err ? err->status : MCP_EPROTO;
        if (left) {
          mcp_status st = MCP_OK;
          if (++t->input_rounds > MAX_INPUT_ROUNDS)
            st = mcp__error_set(err, MCP_EPROTO, "task %s: asked for input more than %d times",
                                t->st.id, MAX_INPUT_ROUNDS);
          json_object *resp = NULL;
          if (st == MCP_OK) {
            char *ltext = mcp__strdup(json_object_to_json_string_ext(left, TEXT_FLAGS));
            st = ltext ? mcp__client_answer_inputs(t->c, ltext, &resp, err)
                       : mcp__error_set(err, MCP_ENOMEM, "out of memory");
            mcp__free(ltext);
          }
          json_object_put(left);
          if (st == MCP_OK && resp) st = send_update(t, resp, left_ms(deadline, 0), err);
          json_object_put(resp);
          if (st != MCP_OK) {
            cancel_on_stop(t, MCP_ECANCELLED); /* nobody will answer: end the task */
            return st;
          }
        }
      }
      break;
    case MCP_TASK_WORKING: break;
    }
    char *pushed = NULL;
    mcp_status st = wait_interval(t, o, deadline < cap ? deadline : cap, &pushed, err);
    if (st == MCP_OK) {
      char *text = pushed; /* a pushed state stands for the poll */
      if (!text)
        st = task_request(t, "tasks/get", NULL, left_ms(deadline < cap ? deadline : cap, 0), &text,
                          err);
      bool changed = false;
      if (st == MCP_OK) st = parse_into(t, text, MCP_TASK_SHAPE_STATE, &changed, err);
      mcp__free(text);
      if (st == MCP_OK && changed) {
        report(t, o);
        if (o && o->reset_on_progress && timeout > 0) deadline = mcp__now_ms() + timeout;
      }
    }
    if (st != MCP_OK) {
      cancel_on_stop(t, st);
      return st;
    }
  }
}

/* Waits for the task; a modern one is watched meanwhile (its id in the
 * listen's taskIds: the server may push its states). */
static mcp_status task_wait(mcp_task *t, const mcp_call_options *o, int64_t t0, bool tool,
                            char **result_json, mcp_error *err) {
  bool watch = t->modern && t->st.id && *t->st.id && t->st.status != MCP_TASK_COMPLETED &&
               t->st.status != MCP_TASK_FAILED && t->st.status != MCP_TASK_CANCELLED;
  if (watch) mcp__client_task_watch(t->c, t->st.id, true);
  mcp_status st = task_wait_for(t, o, t0, tool, result_json, err);
  if (watch) mcp__client_task_watch(t->c, t->st.id, false);
  return st;
}

MCP_EXTERN mcp_status mcp_task_wait(mcp_task *t, const mcp_call_options *opts, char **result_json,
                                    mcp_error *err) {
  if (result_json) *result_json = NULL;
  if (!t || !t->st.id || !result_json) return mcp__error_set(err, MCP_EINVAL, "invalid argument");
  if (!*t->st.id) { /* answered directly: the result is here */
    if (!t->st.result) return mcp__error_set(err, MCP_ESTATE, "the result was already taken");
    char *r = t->st.result;
    t->st.result = NULL;
    return final_result(r, true, result_json, err);
  }
  if (!mcp__client_enter(t->c))
    return mcp__error_set(err, MCP_ECLOSED, "client closed: mcp_client_free() was called");
  mcp_status st = task_wait(t, opts, mcp__now_ms(), true, result_json, err);
  mcp__client_leave(t->c);
  return st;
}

/* ---- the plain call's hooks ------------------------------------------------ */

bool mcp__tasks_follows(const mcp_client *c, const char *method) {
  return mcp__client_modern(c) && strcmp(method, "tools/call") == 0 &&
         mcp__client_has_extension(c, MCP_TASKS_EXTENSION);
}

mcp_status mcp__tasks_follow(mcp_client *c, char *text, size_t len, const mcp_call_options *o,
                             bool tool, char **result_json, mcp_error *err) {
  *result_json = NULL;
  int64_t t0 = mcp__now_ms();
  mcp_task *t = task_new(c);
  mcp_status st = t ? mcp__task_parse(text, len, true, MCP_TASK_SHAPE_CREATED, &t->st, err)
                    : mcp__error_set(err, MCP_ENOMEM, "out of memory");
  mcp__free(text);
  if (st == MCP_OK) {
    if (!mcp__client_enter(c))
      st = mcp__error_set(err, MCP_ECLOSED, "client closed: mcp_client_free() was called");
    else {
      st = task_wait(t, o, t0, tool, result_json, err);
      mcp__client_leave(c);
    }
  }
  mcp_task_free(t);
  return st;
}

/* An async call's task, driven on a thread of its own. */
typedef struct async_task {
  mcp_client *c;
  mcp_task *t;       /* modern: the task made; legacy: NULL */
  char *name, *args; /* legacy: the call to make */
  mcp_call_options opts;
  bool tool;
  mcp_result_fn fn;
  void *user;
  int64_t t0;
} async_task;

static void async_task_free(async_task *a) {
  mcp_task_free(a->t);
  mcp__free(a->name);
  mcp__free(a->args);
  if (a->opts.cancel) mcp_cancel_unref(a->opts.cancel);
  mcp__free(a);
}

/* The end of an async call's task, handed to the lane like every async
 * completion (so mcp_client_free() waits for it, and the callback may
 * free the client). */
typedef struct async_end {
  async_task *a;
  mcp_status st;
  char *result;
  mcp_error err;
} async_end;

static void async_end_run(void *arg) {
  async_end *e = arg;
  async_task *a = e->a;
  a->fn(a->user, e->st, e->result, e->st == MCP_OK ? NULL : &e->err);
  mcp__free(e->result);
  mcp_error_clear(&e->err);
  mcp__free(e);
  async_task_free(a);
}

static void *async_task_run(void *arg) {
  async_task *a = arg;
  async_end *e = mcp__calloc(1, sizeof(*e));
  char *result = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st;
  if (a->t) st = task_wait(a->t, &a->opts, a->t0, a->tool, &result, &err);
  else st = mcp_client_call_tool(a->c, a->name, a->args, &a->opts, &result, &err);
  if (st != MCP_OK) err.status = st;
  mcp_client *c = a->c; /* |a| may be gone once posted */
  if (e) {
    *e = (async_end){a, st, result, err};
    /* Queued before leaving: the client is not freed under it. */
    if (mcp__client_post(c, async_end_run, async_end_run, e) != MCP_OK) async_end_run(e);
    mcp__client_leave(c);
    return NULL;
  }
  /* No memory for the hand-off: the callback runs here, still once. */
  a->fn(a->user, st, result, st == MCP_OK ? NULL : &err);
  mcp__free(result);
  mcp_error_clear(&err);
  mcp__client_leave(a->c);
  async_task_free(a);
  return NULL;
}

/* Starts |a| (owned) on a detached thread holding the client; on failure
 * |a| is freed and |err| says why. */
static mcp_status async_start(async_task *a, mcp_error *err) {
  if (!mcp__client_enter(a->c)) {
    async_task_free(a);
    return mcp__error_set(err, MCP_ECLOSED, "client closed: mcp_client_free() was called");
  }
  pthread_t th;
  pthread_attr_t attr;
  int rc = pthread_attr_init(&attr);
  if (rc == 0) {
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    rc = pthread_create(&th, &attr, async_task_run, a);
    pthread_attr_destroy(&attr);
  }
  if (rc != 0) {
    mcp__client_leave(a->c);
    async_task_free(a);
    return mcp__error_set(err, MCP_ENOMEM, "no thread for the task: %s", strerror(rc));
  }
  return MCP_OK;
}

static async_task *async_new(mcp_client *c, const mcp_call_options *o, mcp_result_fn fn,
                             void *user) {
  async_task *a = mcp__calloc(1, sizeof(*a));
  if (!a) return NULL;
  a->c = c;
  a->opts = (mcp_call_options){.timeout_ms = -1};
  if (o) a->opts = *o;
  if (a->opts.cancel) mcp_cancel_ref(a->opts.cancel);
  a->fn = fn;
  a->user = user;
  a->t0 = mcp__now_ms();
  return a;
}

mcp_status mcp__tasks_follow_async(mcp_client *c, char *text, size_t len, const mcp_call_options *o,
                                   bool tool, mcp_result_fn fn, void *user, mcp_error *err) {
  async_task *a = async_new(c, o, fn, user);
  if (!a || !(a->t = task_new(c))) {
    if (a) async_task_free(a);
    return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  }
  a->tool = tool;
  mcp_status st = mcp__task_parse(text, len, true, MCP_TASK_SHAPE_CREATED, &a->t->st, err);
  if (st != MCP_OK) {
    async_task_free(a);
    return st;
  }
  st = async_start(a, err);
  if (st == MCP_OK) mcp__free(text);
  return st;
}

/* ---- legacy (2025-11-25) --------------------------------------------------- */

static bool legacy_allows(mcp_client *c) { return mcp__client_legacy_tasks(c); }

bool mcp__tasks_info_allows(const char *info) {
  /* Most servers have no tasks: no tree for them. */
  if (!info || !strstr(info, "\"tasks\"")) return false;
  json_object *o = mcp__jsonrpc_parse(info, strlen(info), NULL), *v = o;
  static const char *const path[] = {"capabilities", "tasks", "requests", "tools", "call"};
  bool ok = o != NULL;
  for (size_t i = 0; ok && i < sizeof(path) / sizeof(path[0]); i++)
    ok = json_object_is_type(v, json_type_object) && json_object_object_get_ex(v, path[i], &v);
  json_object_put(o);
  return ok;
}

bool mcp__tasks_legacy_maybe(mcp_client *c, const mcp_call_options *o) {
  return !mcp__client_modern(c) && !(o && o->task_mode == MCP_TASK_NEVER) && legacy_allows(c);
}

/* The "name\tsupport\n" line of tool |name| in |lines|: a copy of its
 * support ("" when none), or NULL when the tool is not there. */
static char *support_in(const char *lines, const char *name) {
  size_t n = strlen(name);
  for (const char *p = lines; p && *p;) {
    const char *tab = strchr(p, '\t'), *eol = tab ? strchr(tab, '\n') : NULL;
    if (!eol) break;
    if ((size_t)(tab - p) == n && memcmp(p, name, n) == 0)
      return mcp__strndup(tab + 1, (size_t)(eol - tab - 1));
    p = eol + 1;
  }
  return NULL;
}

/* Tool |name|'s execution.taskSupport from the server's list ("" when
 * absent; NULL when the list could not be read or has no such tool).  The
 * list is read once per connection and kept as lines until the server
 * says its tools changed, not once per call. */
static char *task_support(mcp_client *c, const char *name, const mcp_call_options *o) {
  char *lines = mcp__client_task_tools(c);
  if (lines) {
    char *out = support_in(lines, name);
    mcp__free(lines);
    return out;
  }
  char *list = NULL;
  mcp_error e = MCP_ERROR_INIT;
  mcp_call_options *lo = req_opts(mcp__client_timeout(c, o));
  mcp_status st = lo ? mcp_client_list_tools(c, lo, &list, &e) : MCP_ENOMEM;
  mcp_call_options_free(lo);
  mcp_error_clear(&e);
  if (st != MCP_OK) return NULL;
  json_object *tools = mcp__jsonrpc_parse(list, strlen(list), NULL);
  mcp__free(list);
  mcp_buf b;
  mcp__buf_init(&b);
  bool ok = true;
  size_t n = json_object_is_type(tools, json_type_array) ? json_object_array_length(tools) : 0;
  for (size_t i = 0; i < n && ok; i++) {
    json_object *tool = json_object_array_get_idx(tools, i), *v = NULL, *ex = NULL, *ts = NULL;
    if (!json_object_object_get_ex(tool, "name", &v) || !json_object_is_type(v, json_type_string))
      continue;
    const char *tn = json_object_get_string(v), *sup = "";
    if (strpbrk(tn, "\t\n")) continue; /* not a name a call can use */
    if (json_object_object_get_ex(tool, "execution", &ex) &&
        json_object_object_get_ex(ex, "taskSupport", &ts) &&
        json_object_is_type(ts, json_type_string) && !strpbrk(json_object_get_string(ts), "\t\n"))
      sup = json_object_get_string(ts);
    ok = mcp__buf_append(&b, tn, strlen(tn)) == MCP_OK && mcp__buf_append(&b, "\t", 1) == MCP_OK &&
         mcp__buf_append(&b, sup, strlen(sup)) == MCP_OK && mcp__buf_append(&b, "\n", 1) == MCP_OK;
  }
  json_object_put(tools);
  if (!ok || (!b.data && mcp__buf_append(&b, "", 0) != MCP_OK) || !b.data) {
    mcp__buf_free(&b);
    return NULL;
  }
  char *out = support_in(b.data, name);
  mcp__client_set_task_tools(c, b.data); /* the client owns it now */
  return out;
}

bool mcp__tasks_legacy_wanted(mcp_client *c, const char *name, const mcp_call_options *o) {
  if (!mcp__tasks_legacy_maybe(c, o)) return false;
  char *ts = task_support(c, name, o);
  bool want = ts && (strcmp(ts, "required") == 0 ||
                     (o && o->task_mode == MCP_TASK_PREFER && strcmp(ts, "optional") == 0));
  mcp__free(ts);
  return want;
}

/* tools/call params with "task" (legacy) as text, or NULL. */
static char *legacy_params(const char *name, const char *args_json, mcp_error *err) {
  json_object *p = json_object_new_object(), *args = NULL;
  if (args_json) {
    args = mcp__jsonrpc_parse(args_json, strlen(args_json), NULL);
    if (!args || !json_object_is_type(args, json_type_object)) {
      json_object_put(args);
      json_object_put(p);
      mcp__error_set(err, MCP_EINVAL, "the arguments must be a JSON object");
      return NULL;
    }
  } else {
    args = json_object_new_object();
  }
  char *out = NULL;
  if (p && mcp__json_add(p, "name", json_object_new_string(name)) == 0 &&
      mcp__json_add(p, "arguments", args) == 0 &&
      mcp__json_add(p, "task", json_object_new_object()) == 0) {
    const char *t = json_object_to_json_string_ext(p, TEXT_FLAGS);
    if (t) out = mcp__strdup(t);
  } else if (!p) {
    json_object_put(args);
  }
  json_object_put(p);
  if (!out) mcp__error_set(err, MCP_ENOMEM, "out of memory");
  return out;
}

/* Sends the task-making tools/call (legacy: with "task"; modern: plain,
 * the extension declared) and reads the task, or the direct result. */
static mcp_status start_task(mcp_client *c, const char *name, const char *args_json,
                             const mcp_call_options *o, mcp_task **out, mcp_error *err) {
  *out = NULL;
  mcp_task *t = task_new(c);
  if (!t) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  char *params = NULL, *text = NULL;
  mcp_status st = MCP_OK;
  if (!t->modern) {
    if (!legacy_allows(c))
      st = mcp__error_set(err, MCP_ESTATE,
                          "the server does not allow tasks on tools/call (no "
                          "capabilities.tasks.requests.tools.call)");
    else if (!(params = legacy_params(name, args_json, err))) st = err ? err->status : MCP_ENOMEM;
    if (st == MCP_OK) st = mcp_client_request(c, "tools/call", params, o, &text, err);
    if (st == MCP_OK) st = parse_into(t, text, MCP_TASK_SHAPE_CREATED, NULL, err);
  } else if (!mcp__client_has_extension(c, MCP_TASKS_EXTENSION)) {
    st = mcp__error_set(err, MCP_ESTATE,
                        "the tasks extension is not declared (mcp_client_options_set_extension "
                        "with MCP_TASKS_EXTENSION)");
  } else {
    /* Made by hand so the result is not followed: the task is the answer. */
    json_object *p = json_object_new_object();
    json_object *args = args_json ? mcp__jsonrpc_parse(args_json, strlen(args_json), NULL)
                                  : json_object_new_object();
    if (!args || !json_object_is_type(args, json_type_object)) {
      st = mcp__error_set(err, MCP_EINVAL, "the arguments must be a JSON object");
      json_object_put(args);
    } else if (!p || mcp__json_add(p, "name", json_object_new_string(name)) ||
               mcp__json_add(p, "arguments", args)) {
      st = mcp__error_set(err, MCP_ENOMEM, "out of memory");
    } else {
      const char *pt = json_object_to_json_string_ext(p, TEXT_FLAGS);
      params = pt ? mcp__strdup(pt) : NULL;
      if (!params) st = mcp__error_set(err, MCP_ENOMEM, "out of memory");
    }
    json_object_put(p);
    mcp_call_options so = {.timeout_ms = -1};
    if (o) so = *o;
    so.task_mode = MCP__TASK_START; /* the task is the answer, not followed */
    if (st == MCP_OK) st = mcp_client_request(c, "tools/call", params, &so, &text, err);
    if (st == MCP_OK && mcp__era_result_kind(text, strlen(text)) == MCP_RESULT_TASK) {
      st = mcp__task_parse(text, strlen(text), true, MCP_TASK_SHAPE_CREATED, &t->st, err);
    } else if (st == MCP_OK) { /* answered directly */
      t->st.status = MCP_TASK_COMPLETED;
      if (!(t->st.id = mcp__strdup(""))) st = mcp__error_set(err, MCP_ENOMEM, "out of memory");
      t->st.result = text;
      text = NULL;
    }
  }
  mcp__free(params);
  mcp__free(text);
  if (st != MCP_OK) {
    mcp_task_free(t);
    return st;
  }
  *out = t;
  return MCP_OK;
}

mcp_status mcp__tasks_call_legacy(mcp_client *c, const char *name, const char *args_json,
                                  const mcp_call_options *o, char **result_json, mcp_error *err) {
  *result_json = NULL;
  int64_t t0 = mcp__now_ms();
  mcp_task *t = NULL;
  mcp_status st = start_task(c, name, args_json, o, &t, err);
  if (st != MCP_OK) return st;
  if (!mcp__client_enter(c))
    st = mcp__error_set(err, MCP_ECLOSED, "client closed: mcp_client_free() was called");
  else {
    st = task_wait(t, o, t0, true, result_json, err);
    mcp__client_leave(c);
  }
  mcp_task_free(t);
  return st;
}

mcp_status mcp__tasks_call_legacy_async(mcp_client *c, const char *name, const char *args_json,
                                        const mcp_call_options *o, mcp_result_fn fn, void *user,
                                        mcp_error *err) {
  async_task *a = async_new(c, o, fn, user);
  if (!a || !(a->name = mcp__strdup(name)) || (args_json && !(a->args = mcp__strdup(args_json)))) {
    if (a) async_task_free(a);
    return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  }
  a->tool = true;
  return async_start(a, err);
}

/* ---- the explicit API --------------------------------------------------------- */

MCP_EXTERN mcp_status mcp_client_start_tool_task(mcp_client *c, const char *name,
                                                 const char *args_json,
                                                 const mcp_call_options *opts, mcp_task **out,
                                                 mcp_error *err) {
  if (out) *out = NULL;
  if (!c || !name || !out) return mcp__error_set(err, MCP_EINVAL, "invalid argument");
  if (!mcp__client_enter(c))
    return mcp__error_set(err, MCP_ECLOSED, "client closed: mcp_client_free() was called");
  mcp_status st = start_task(c, name, args_json, opts, out, err);
  mcp__client_leave(c);
  return st;
}

MCP_EXTERN mcp_status mcp_client_resume_task(mcp_client *c, const char *task_id,
                                             const mcp_call_options *opts, mcp_task **out,
                                             mcp_error *err) {
  if (out) *out = NULL;
  if (!c || !task_id || !*task_id || !out)
    return mcp__error_set(err, MCP_EINVAL, "invalid argument");
  mcp_task *t = task_new(c);
  if (!t || !(t->st.id = mcp__strdup(task_id))) {
    mcp_task_free(t);
    return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  }
  mcp_status st = mcp_task_poll(t, opts, err);
  if (st != MCP_OK) {
    mcp_task_free(t);
    return st;
  }
  *out = t;
  return MCP_OK;
}
