/* SPDX-License-Identifier: MIT */
/*
 * check_lazy_openssl: with the default configure (MCP_LAZY_OPENSSL), a host
 * linked only against libmcpconn does not have OpenSSL in memory until it
 * needs TLS: a stdio session leaves libssl and libcrypto unmapped; the first
 * https client loads them (lib/mcp_ossl.h).  Linked like a host: against
 * lib/libmcpconn.la only, never against OpenSSL itself.
 *
 * With --disable-lazy-openssl the library links OpenSSL: the test then
 * checks the opposite (mapped from the start), so it can fail either way.
 */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcpconn.h"

static int failures;

#define CHECK(cond, ...) \
  do { \
    if (!(cond)) { \
      fprintf(stderr, "FAIL: " __VA_ARGS__); \
      fputc('\n', stderr); \
      failures++; \
    } \
  } while (0)

/* Is a library whose file name starts with |prefix| mapped? */
static bool mapped(const char *prefix) {
  FILE *f = fopen("/proc/self/maps", "r");
  if (!f) return false;
  char line[1024];
  bool found = false;
  while (!found && fgets(line, sizeof(line), f)) {
    char *slash = strrchr(line, '/');
    if (slash && strncmp(slash + 1, prefix, strlen(prefix)) == 0) found = true;
  }
  fclose(f);
  return found;
}

int main(void) {
  const char *demo = getenv("MCP_DEMO_SERVER");
  if (!demo) {
    fprintf(stderr, "MCP_DEMO_SERVER is not set: run this with make check\n");
    return 99;
  }
#ifdef MCP_LAZY_OPENSSL
  const bool lazy = true;
#else
  const bool lazy = false;
#endif

  /* A whole stdio session: connect, list, call, close. */
  mcp_client_options *o = mcp_client_options_new();
  const char *argv[] = {demo, NULL};
  CHECK(o && mcp_client_options_set_stdio(o, argv) == MCP_OK, "stdio options");
  mcp_client_options_set_timeout_ms(o, 30000);
  mcp_client *c = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_client_connect(o, &c, &err);
  mcp_client_options_free(o);
  CHECK(st == MCP_OK, "connect to the demo server: %s", err.message ? err.message : "?");
  mcp_error_clear(&err);
  if (c) {
    char *res = NULL;
    st = mcp_client_call_tool(c, "echo", "{\"text\":\"no tls here\"}", NULL, &res, &err);
    CHECK(st == MCP_OK && res && strstr(res, "no tls here"), "echo: %s",
          err.message ? err.message : "?");
    mcp_free(res);
    mcp_error_clear(&err);
    mcp_client_free(c);
  }
  CHECK(mapped("libssl") == !lazy, "after a stdio session libssl is %s",
        mapped("libssl") ? "mapped" : "not mapped");
  CHECK(mapped("libcrypto") == !lazy, "after a stdio session libcrypto is %s",
        mapped("libcrypto") ? "mapped" : "not mapped");

  /* An https client needs OpenSSL: connecting to a closed port fails, but
   * the TLS context was made first, so OpenSSL is in memory now. */
  o = mcp_client_options_new();
  CHECK(o && mcp_client_options_set_http(o, "https://127.0.0.1:1/mcp",
                                         MCP_HTTP_TRANSPORT_STREAMABLE) == MCP_OK,
        "http options");
  mcp_client_options_set_timeout_ms(o, 30000);
  c = NULL;
  st = mcp_client_connect(o, &c, &err);
  mcp_client_options_free(o);
  CHECK(st != MCP_OK && st != MCP_ETLS, "https to a closed port: want a connect error, got %s (%s)",
        mcp_strerror(st), err.message ? err.message : "?");
  mcp_error_clear(&err);
  mcp_client_free(c);
  CHECK(mapped("libssl") && mapped("libcrypto"), "after an https client OpenSSL is not mapped");

  if (failures) return 1;
  if (lazy)
    printf("ok: no OpenSSL in memory for a stdio session; the first https client loads it\n");
  else printf("ok: --disable-lazy-openssl: OpenSSL is linked and mapped from the start\n");
  return 0;
}
