/* SPDX-License-Identifier: MIT */
/*
 * tasks: a host calling tools a server runs as tasks (long-running tool
 * calls; docs/TASKS.md).  First the plain call, which waits for the task's
 * result and shows its status changes; then the explicit API: start a
 * task, keep its id, take it up again by that id (as after a restart),
 * wait for it; and cancel one.
 *
 *   usage: tasks [SERVER_PROGRAM [ARG...]]
 *
 * The server defaults to the test server with task tools,
 * `node $MCP_INTEROP_DIR/tasks-server.mjs modern` (tools "slow", which
 * finishes after a few polls, and "forever").  Exits 0 only when every
 * outcome was as expected.
 *
 * Build: cc tasks.c $(pkg-config --cflags --libs mcpconn)
 */
#include <mcpconn.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Status changes arrive through the progress callback: |progress| counts
 * them, |message| is "task ID: STATUS[: statusMessage]". */
static void on_status(void *user, double progress, double total, const char *message) {
  (void)user;
  (void)progress;
  (void)total;
  fprintf(stderr, "  %s\n", message ? message : "");
}

int main(int argc, char **argv) {
  char script[4096];
  const char *def_argv[] = {"node", script, "modern", NULL};
  const char *const *server_argv = (const char *const *)argv + 1;
  if (argc < 2) {
    const char *dir = getenv("MCP_INTEROP_DIR");
    snprintf(script, sizeof(script), "%s/tasks-server.mjs", dir ? dir : "tests/interop");
    server_argv = def_argv;
  }
  int failed = 0;

  /* On a 2026-07-28 server, tasks are an extension the client declares;
   * on a 2025-11-25 one the library asks for a task where the tool's
   * execution.taskSupport requires it (nothing to declare). */
  mcp_client_options *o = mcp_client_options_new();
  mcp_client_options_set_stdio(o, server_argv);
  mcp_client_options_set_extension(o, MCP_TASKS_EXTENSION, NULL);
  mcp_client *c = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_client_connect(o, &c, &err);
  mcp_client_options_free(o);
  if (st != MCP_OK) {
    fprintf(stderr, "connect: %s: %s\n", mcp_strerror(st), err.message);
    mcp_error_clear(&err);
    return 1;
  }

  /* 1. The plain call: the final result, as if the tool answered at once.
   * The timeout bounds the whole task (on timeout or a fired cancel token
   * the library sends tasks/cancel). */
  mcp_call_options *co = mcp_call_options_new();
  mcp_call_options_set_timeout_ms(co, 60000);
  mcp_call_options_set_progress(co, on_status, NULL);
  char *result = NULL;
  printf("slow (plain call):\n");
  st = mcp_client_call_tool(c, "slow", "{\"n\":1}", co, &result, &err);
  if (st == MCP_OK) {
    char *text = NULL;
    mcp_tool_result_text(result, (size_t)-1, &text, NULL, NULL);
    printf("  result: %s\n", text ? text : "?");
    failed |= !text || strcmp(text, "slow done 1") != 0;
    mcp_free(text);
  } else {
    fprintf(stderr, "  %s: %s\n", mcp_strerror(st), err.message);
    mcp_error_clear(&err);
    failed = 1;
  }
  mcp_free(result);

  /* 2. The explicit API: start, keep the id, resume by id, wait. */
  mcp_task *t = NULL;
  char id[256] = "";
  if (mcp_client_start_tool_task(c, "slow", "{\"n\":2}", NULL, &t, &err) == MCP_OK) {
    /* A host would store the id (a file, its database) to survive a restart. */
    snprintf(id, sizeof(id), "%s", mcp_task_id(t));
    printf("started task %s (%s)\n", id,
           mcp_task_get_status(t) == MCP_TASK_WORKING ? "working" : "?");
    mcp_task_free(t); /* freeing does not cancel: the server keeps running it */
    t = NULL;
  } else {
    fprintf(stderr, "start: %s\n", err.message);
    mcp_error_clear(&err);
    failed = 1;
  }
  if (*id && mcp_client_resume_task(c, id, NULL, &t, &err) == MCP_OK) {
    st = mcp_task_wait(t, co, &result, &err);
    printf("task %s ended: %s\n", id, mcp_strerror(st));
    failed |= st != MCP_OK || !strstr(result, "slow done 2");
    if (st != MCP_OK) mcp_error_clear(&err);
    mcp_free(result);
    mcp_task_free(t);
  } else if (*id) {
    fprintf(stderr, "resume: %s\n", err.message);
    mcp_error_clear(&err);
    failed = 1;
  }

  /* 3. Cancel: cooperative; the server's status says how it ended. */
  if (mcp_client_start_tool_task(c, "forever", NULL, NULL, &t, &err) == MCP_OK) {
    mcp_task_cancel(t, &err);
    mcp_error_clear(&err);
    if (mcp_task_poll(t, NULL, &err) != MCP_OK) mcp_error_clear(&err);
    printf("task %s after tasks/cancel: %s\n", mcp_task_id(t),
           mcp_task_get_status(t) == MCP_TASK_CANCELLED ? "cancelled" : "still running");
    failed |= mcp_task_get_status(t) != MCP_TASK_CANCELLED;
    mcp_task_free(t);
  } else {
    mcp_error_clear(&err);
    failed = 1;
  }

  mcp_call_options_free(co);
  mcp_client_free(c);
  return failed;
}
