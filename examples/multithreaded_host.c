/* SPDX-License-Identifier: MIT */
/*
 * multithreaded_host: several host threads call tools through one
 * mcp_manager at the same time, while another call shows progress and is
 * cancelled from the main thread.
 *
 *   usage: multithreaded_host [SERVER_PROGRAM]
 *
 * SERVER_PROGRAM defaults to $MCP_DEMO_SERVER, else mcpconn-demo-server
 * from PATH (it has the tools echo and sleep used here).  The program checks
 * every answer and exits 0 only when everything behaved as expected, so
 * `make check` runs it as a test.
 *
 * Build: cc multithreaded_host.c $(pkg-config --cflags --libs mcpconn) -pthread
 */
#include <mcpconn.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N_THREADS 8
#define CALLS_PER_THREAD 25

static mcp_manager *g_mgr;

/* What the callbacks (library worker threads) tell the main thread. */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cond = PTHREAD_COND_INITIALIZER;
static int g_progress_seen;

/* Manager events run on a worker thread: just wake the main thread. */
static void on_event(void *user, mcp_manager_event ev, const char *server,
                     const char *detail_json) {
  (void)user;
  (void)ev;
  (void)server;
  (void)detail_json;
  pthread_mutex_lock(&g_lock);
  pthread_cond_broadcast(&g_cond);
  pthread_mutex_unlock(&g_lock);
}

/* Progress of the long call; runs on a worker thread. */
static void on_progress(void *user, double progress, double total, const char *message) {
  (void)user;
  (void)total;
  (void)message;
  printf("progress: %g\n", progress);
  pthread_mutex_lock(&g_lock);
  g_progress_seen++;
  pthread_cond_broadcast(&g_cond);
  pthread_mutex_unlock(&g_lock);
}

/* Waits on g_cond until |done| says yes or 30 s have passed. */
static int wait_for(int (*done)(void)) {
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += 30;
  pthread_mutex_lock(&g_lock);
  int ok = done();
  while (!ok && pthread_cond_timedwait(&g_cond, &g_lock, &deadline) == 0) ok = done();
  ok = done();
  pthread_mutex_unlock(&g_lock);
  return ok;
}

static int tools_listed(void) {
  mcp_tool_list *l = mcp_manager_tools(g_mgr); /* never blocks */
  size_t n = mcp_tool_list_count(l);
  mcp_tool_list_unref(l);
  return n > 0;
}

static int progress_arrived(void) { return g_progress_seen > 0; }

/* One host thread: echo calls, each answer checked. */
static void *caller(void *arg) {
  int id = (int)(intptr_t)arg;
  intptr_t failures = 0;
  for (int i = 0; i < CALLS_PER_THREAD; i++) {
    char args[64], want[64];
    snprintf(args, sizeof args, "{\"text\":\"t%d-%d\"}", id, i);
    snprintf(want, sizeof want, "\"t%d-%d\"", id, i);
    char *result = NULL;
    mcp_error err = MCP_ERROR_INIT;
    /* Public names are mcp__<server>_<tool>; "demo/echo" works too. */
    mcp_status st = mcp_manager_call_tool(g_mgr, "mcp__demo_echo", args, NULL, &result, &err);
    if (st != MCP_OK || !strstr(result, want)) {
      fprintf(stderr, "thread %d call %d: %s\n", id, i,
              st != MCP_OK ? err.message : "wrong answer");
      failures++;
    }
    mcp_free(result);
    mcp_error_clear(&err);
  }
  return (void *)failures;
}

/* The long call: sleep for a minute, with progress and a cancel token. */
struct long_call {
  mcp_cancel *cancel;
  mcp_status status;
};

static void *long_caller(void *arg) {
  struct long_call *lc = arg;
  mcp_call_options *o = mcp_call_options_new();
  mcp_call_options_set_progress(o, on_progress, NULL);
  mcp_call_options_set_cancel(o, lc->cancel); /* the call takes a reference */
  char *result = NULL;
  lc->status = mcp_manager_call_tool(g_mgr, "mcp__demo_sleep", "{\"ms\":60000}", o, &result, NULL);
  mcp_call_options_free(o);
  mcp_free(result);
  return NULL;
}

int main(int argc, char **argv) {
  const char *server = argc > 1 ? argv[1] : getenv("MCP_DEMO_SERVER");
  if (!server) server = "mcpconn-demo-server";

  /* One stdio server named "demo", defined in code; no config files are
   * read and no cache is written. */
  mcp_client_options *co = mcp_client_options_new();
  const char *server_argv[] = {server, NULL};
  mcp_client_options_set_stdio(co, server_argv);
  mcp_manager_options *mo = mcp_manager_options_new();
  mcp_manager_options_add_server(mo, "demo", co);
  mcp_manager_options_set_discovery(mo, false, false);
  mcp_manager_options_set_cache_dir(mo, NULL);
  mcp_manager_options_set_event_handler(mo, on_event, NULL);

  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_manager_start(mo, &g_mgr, &err);
  mcp_manager_options_free(mo); /* copied by mcp_manager_start */
  mcp_client_options_free(co);
  if (st != MCP_OK) {
    fprintf(stderr, "start: %s\n", err.message);
    mcp_error_clear(&err);
    return 1;
  }

  /* The manager connects in the background; wait for the first tools. */
  if (!wait_for(tools_listed)) {
    fprintf(stderr, "the demo server's tools never appeared\n");
    mcp_manager_free(g_mgr);
    return 1;
  }
  mcp_tool_list *l = mcp_manager_tools(g_mgr);
  for (size_t i = 0; i < mcp_tool_list_count(l); i++) printf("tool %s\n", mcp_tool_list_name(l, i));
  mcp_tool_list_unref(l);

  /* The long call, and N threads of short calls next to it. */
  struct long_call lc = {mcp_cancel_new(), MCP_OK};
  pthread_t long_thread, threads[N_THREADS];
  pthread_create(&long_thread, NULL, long_caller, &lc);
  for (int i = 0; i < N_THREADS; i++)
    pthread_create(&threads[i], NULL, caller, (void *)(intptr_t)i);

  intptr_t failures = 0;
  for (int i = 0; i < N_THREADS; i++) {
    void *f;
    pthread_join(threads[i], &f);
    failures += (intptr_t)f;
  }
  printf("%d calls from %d threads, %ld failed\n", N_THREADS * CALLS_PER_THREAD, N_THREADS,
         (long)failures);

  /* Once the long call has reported progress, cancel it: the library sends
   * notifications/cancelled and the call returns MCP_ECANCELLED. */
  int progressed = wait_for(progress_arrived);
  mcp_cancel_fire(lc.cancel);
  pthread_join(long_thread, NULL);
  mcp_cancel_unref(lc.cancel);
  printf("long call: %s\n", mcp_strerror(lc.status));

  mcp_manager_free(g_mgr); /* closes the server, joins every thread */

  if (failures || !progressed || lc.status != MCP_ECANCELLED) {
    fprintf(stderr, "FAILED (progress seen: %s, long call: %s)\n", progressed ? "yes" : "no",
            mcp_strerror(lc.status));
    return 1;
  }
  return 0;
}
