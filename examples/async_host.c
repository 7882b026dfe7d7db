/* SPDX-License-Identifier: MIT */
/*
 * async_host: an event-driven host.  It starts many tool calls without
 * waiting for any of them; each call's completion callback runs later on a
 * library worker thread, and the main thread only waits for the count of
 * finished calls to reach the number started.
 *
 *   usage: async_host [SERVER_PROGRAM]
 *
 * SERVER_PROGRAM defaults to $MCP_DEMO_SERVER, else mcpconn-demo-server
 * from PATH.  Exits 0 only when every completion was as expected.
 *
 * Build: cc async_host.c $(pkg-config --cflags --libs mcpconn) -pthread
 */
#include <mcpconn.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N_ECHO 100

/* Shared between the callbacks (worker threads) and main. */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cond = PTHREAD_COND_INITIALIZER;
static int g_finished, g_bad;

static void finished(int ok) {
  pthread_mutex_lock(&g_lock);
  g_finished++;
  if (!ok) g_bad++;
  pthread_cond_broadcast(&g_cond);
  pthread_mutex_unlock(&g_lock);
}

/* Completion of an echo call; |user| is the text we sent.  result_json and
 * err are only valid during the callback: copy what you keep. */
static void on_echo(void *user, mcp_status st, const char *result_json, const mcp_error *err) {
  char *want = user;
  int ok = st == MCP_OK && strstr(result_json, want) != NULL;
  if (!ok) fprintf(stderr, "echo %s: %s\n", want, st != MCP_OK ? err->message : "wrong answer");
  free(want);
  finished(ok);
}

/* Completion of the sleep call that is meant to time out. */
static void on_sleep(void *user, mcp_status st, const char *result_json, const mcp_error *err) {
  (void)user;
  (void)result_json;
  printf("sleep: %s (%s)\n", mcp_strerror(st), err ? err->message : "no error");
  finished(st == MCP_ETIMEDOUT);
}

/* Completion of the add call: the demo server returns structuredContent. */
static void on_add(void *user, mcp_status st, const char *result_json, const mcp_error *err) {
  (void)user;
  (void)err;
  if (st == MCP_OK) printf("add: %s\n", result_json);
  finished(st == MCP_OK && strstr(result_json, "\"sum\":5") != NULL);
}

int main(int argc, char **argv) {
  const char *server = argc > 1 ? argv[1] : getenv("MCP_DEMO_SERVER");
  if (!server) server = "mcpconn-demo-server";

  mcp_client_options *o = mcp_client_options_new();
  const char *server_argv[] = {server, NULL};
  mcp_client_options_set_stdio(o, server_argv);
  mcp_client *c = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_client_connect(o, &c, &err);
  mcp_client_options_free(o);
  if (st != MCP_OK) {
    fprintf(stderr, "connect: %s\n", err.message);
    mcp_error_clear(&err);
    return 1;
  }

  int started = 0;
  /* N echo calls in flight at once.  MCP_OK from an *_async function means
   * its callback will run exactly once; an error means it never will. */
  for (int i = 0; i < N_ECHO; i++) {
    char args[64], want[32];
    snprintf(args, sizeof args, "{\"text\":\"call-%d\"}", i);
    snprintf(want, sizeof want, "\"call-%d\"", i);
    char *user = strdup(want);
    if (mcp_client_call_tool_async(c, "echo", args, NULL, on_echo, user, &err) == MCP_OK) {
      started++;
    } else {
      fprintf(stderr, "echo %d not started: %s\n", i, err.message);
      mcp_error_clear(&err);
      free(user);
    }
  }

  /* A call with its own 200 ms timeout on a 60 s sleep: its callback gets
   * MCP_ETIMEDOUT, and the server is sent notifications/cancelled. */
  mcp_call_options *co = mcp_call_options_new();
  mcp_call_options_set_timeout_ms(co, 200);
  if (mcp_client_call_tool_async(c, "sleep", "{\"ms\":60000}", co, on_sleep, NULL, &err) == MCP_OK)
    started++;
  mcp_call_options_free(co); /* the call copied it */

  if (mcp_client_call_tool_async(c, "add", "{\"a\":2,\"b\":3}", NULL, on_add, NULL, &err) == MCP_OK)
    started++;
  mcp_error_clear(&err);

  /* The main thread is free to do other work; here it just waits (30 s at
   * most) for every callback. */
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += 30;
  pthread_mutex_lock(&g_lock);
  while (g_finished < started && pthread_cond_timedwait(&g_cond, &g_lock, &deadline) == 0) {
  }
  int finished_n = g_finished, bad = g_bad;
  pthread_mutex_unlock(&g_lock);
  printf("%d calls started, %d finished, %d not as expected\n", started, finished_n, bad);

  /* Waits for callbacks still running, then closes the server. */
  mcp_client_free(c);
  return started == N_ECHO + 2 && finished_n == started && bad == 0 ? 0 : 1;
}
