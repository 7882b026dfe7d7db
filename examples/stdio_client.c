/* SPDX-License-Identifier: MIT */
/*
 * stdio_client: the smallest useful host.  One mcp_client on one stdio
 * server, no manager: connect, list the tools, call some, and read the three
 * kinds of outcome (a result, a tool error, a JSON-RPC error).
 *
 *   usage: stdio_client [SERVER_PROGRAM]
 *
 * SERVER_PROGRAM defaults to $MCP_DEMO_SERVER, else mcpconn-demo-server
 * from PATH (tools echo, add, sleep, fail).  Exits 0 only when every
 * outcome was as expected.
 *
 * Build: cc stdio_client.c $(pkg-config --cflags --libs mcpconn)
 */
#include <mcpconn.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The library never prints: it hands its log lines to this callback (on a
 * worker thread).  Show warnings and errors only. */
static void on_log(void *user, mcp_log_level level, const char *msg) {
  (void)user;
  if (level >= MCP_LOG_WARN) fprintf(stderr, "mcpconn: %s\n", msg);
}

int main(int argc, char **argv) {
  const char *server = argc > 1 ? argv[1] : getenv("MCP_DEMO_SERVER");
  if (!server) server = "mcpconn-demo-server";
  int failed = 0;

  /* Options: the server's argv (run without a shell), a request timeout,
   * a log callback.  mcp_client_connect() copies them. */
  mcp_client_options *o = mcp_client_options_new();
  const char *server_argv[] = {server, NULL};
  mcp_client_options_set_stdio(o, server_argv);
  mcp_client_options_set_timeout_ms(o, 10000);
  mcp_client_options_set_log(o, on_log, NULL);

  mcp_client *c = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_client_connect(o, &c, &err);
  mcp_client_options_free(o);
  if (st != MCP_OK) {
    /* e.g. MCP_ESPAWN "cannot run ...", or MCP_ECLOSED with the server's
     * exit status and the tail of its stderr. */
    fprintf(stderr, "connect: %s: %s\n", mcp_strerror(st), err.message);
    mcp_error_clear(&err);
    return 1;
  }
  printf("protocol %s\n", mcp_client_protocol_version(c));

  /* Every page of tools/list, as one JSON array. */
  char *tools = NULL;
  if (mcp_client_list_tools(c, NULL, &tools, &err) == MCP_OK) {
    printf("tools: %.60s...\n", tools);
    failed |= strstr(tools, "\"echo\"") == NULL;
  } else {
    fprintf(stderr, "tools/list: %s\n", err.message);
    failed = 1;
  }
  mcp_free(tools);
  mcp_error_clear(&err);

  /* 1. A result: the CallToolResult as JSON text, ours to free. */
  char *result = NULL;
  st = mcp_client_call_tool(c, "add", "{\"a\":2,\"b\":3}", NULL, &result, &err);
  printf("add: %s %s\n", mcp_strerror(st), st == MCP_OK ? result : err.message);
  failed |= st != MCP_OK || strstr(result, "\"sum\":5") == NULL;
  /* What a model is shown: the text items of the result, decoded. */
  char *text = NULL;
  if (st == MCP_OK && mcp_tool_result_text(result, (size_t)-1, &text, NULL, &err) == MCP_OK) {
    printf("add as text: %s\n", text);
    failed |= strcmp(text, "5") != 0;
    mcp_free(text);
  } else {
    failed = 1;
  }
  mcp_free(result);
  mcp_error_clear(&err);

  /* 2. A tool error (isError: true): MCP_ETOOLERROR, and the result is
   * still returned, since its content says what went wrong. */
  st = mcp_client_call_tool(c, "fail", "{\"message\":\"no luck\"}", NULL, &result, &err);
  printf("fail: %s %s\n", mcp_strerror(st), result ? result : "(none)");
  failed |= st != MCP_ETOOLERROR || !result || !strstr(result, "no luck");
  mcp_free(result);
  mcp_error_clear(&err);

  /* 3. A JSON-RPC error from the server: MCP_ERPC with its code. */
  st = mcp_client_call_tool(c, "no-such-tool", NULL, NULL, &result, &err);
  printf("no-such-tool: %s, code %d: %s\n", mcp_strerror(st), err.rpc_code, err.message);
  failed |= st != MCP_ERPC || err.rpc_code != -32602 || result != NULL;
  mcp_error_clear(&err);

  mcp_client_stats stats;
  mcp_client_get_stats(c, &stats);
  printf("%llu requests sent, %llu responses\n", (unsigned long long)stats.requests_sent,
         (unsigned long long)stats.responses_received);

  /* Closes stdin, then SIGTERM/SIGKILL if the server lingers; reaps it. */
  mcp_client_free(c);
  return failed;
}
