/* SPDX-License-Identifier: MIT */
/*
 * cli_oauth.c: the browser step of OAuth for the CLI.  One listening
 * socket on 127.0.0.1 catches the authorization server's redirect (RFC
 * 8252 section 7.3); cli_authorize() prints the URL to open, waits for the
 * browser to come back and hands the redirect's query to the library;
 * cli_oauth() builds the OAuth options (that step plus the file token
 * store) for --url servers and for configured ones.
 *
 * Threads: loopback_open() on the main thread before the manager starts;
 * cli_authorize() on a transport's auth thread, one at a time under
 * g_loopback.lock.  Knows nothing of tokens: the library keeps them.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cli.h"
#include "mcpconn-text.h"

/*
 * One listening socket on 127.0.0.1 (an ephemeral port, opened when there
 * is a --url server) catches the authorization server's redirect (RFC 8252
 * section 7.3).  |lock| lets one authorization wait on it at a time, so a
 * redirect always reaches the flow that asked for it.
 */
static struct {
  pthread_mutex_t lock;
  int fd;
  int port;
} g_loopback = {PTHREAD_MUTEX_INITIALIZER, -1, 0};

/* The browser wait: the server's timeout (the request that met the 401
 * waits too, and the client's close waits for this callback), at most 10
 * minutes. */
#define LOOPBACK_WAIT_MS (5 * 60 * 1000)
#define LOOPBACK_WAIT_MAX_MS (10 * 60 * 1000)
#define LOOPBACK_READ_MS 10000

void loopback_open(void) {
  if (g_loopback.fd >= 0) return;
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in a = {0};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, 4) != 0 ||
      getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
    if (fd >= 0) close(fd);
    return; /* no redirect catcher: a server that needs OAuth fails then */
  }
  g_loopback.fd = fd;
  g_loopback.port = ntohs(a.sin_port);
}

/* Reads a request head from |fd| (bounded in size and time) into |buf|. */
static bool read_head(int fd, char *buf, size_t cap) {
  size_t n = 0;
  int64_t deadline = now_ms() + LOOPBACK_READ_MS;
  while (n + 1 < cap) {
    struct pollfd p = {fd, POLLIN, 0};
    int64_t left = deadline - now_ms();
    if (left <= 0 || poll(&p, 1, (int)left) <= 0) return false;
    ssize_t r = read(fd, buf + n, cap - 1 - n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    n += (size_t)r;
    buf[n] = '\0';
    if (strstr(buf, "\r\n\r\n") || strstr(buf, "\n\n")) return true;
  }
  return false;
}

static void reply(int fd, const char *status, const char *text) {
  char head[256];
  int n = snprintf(head, sizeof(head),
                   "HTTP/1.1 %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
                   "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                   status, strlen(text));
  if (write(fd, head, (size_t)n) == n) (void)!write(fd, text, strlen(text));
}

/*
 * The library's authorize callback: print the URL, wait for the browser to
 * come back to the loopback redirect URI, and hand the library that URL.
 * Runs on the server's auth thread.
 */
static mcp_status cli_authorize(void *user, const char *url, const char *redirect_uri,
                                char **redirect_url, mcp_error *err) {
  const char *server = user;
  (void)err;
  if (g_loopback.fd < 0) return MCP_EIO;
  const char *path = strchr(redirect_uri + strlen("http://"), '/');
  size_t path_len = path ? strcspn(path, "?#") : 0;
  /* The requests waiting for this login do not time out meanwhile (the
   * library stops their clocks while we run): give the person 5 minutes,
   * or --timeout when it is longer, at most 10. */
  int64_t wait_ms = g_cli.timeout_ms > LOOPBACK_WAIT_MS ? g_cli.timeout_ms : LOOPBACK_WAIT_MS;
  if (wait_ms > LOOPBACK_WAIT_MAX_MS) wait_ms = LOOPBACK_WAIT_MAX_MS;
  pthread_mutex_lock(&g_loopback.lock);
  pthread_mutex_lock(&g_stderr_lock);
  status_line_erase_locked();
  /* The URL comes from the authorization server's metadata. */
  fprintf(stderr, PROG ": %s%s%s needs authorization: open this URL in a browser:\n\n  ",
          server ? "server '" : "a server", server ? server : "", server ? "'" : "");
  safe_puts(stderr, url, SAFE_CELL);
  fprintf(stderr,
          "\n\n" PROG
          ": waiting %lld s for the browser to come back to %s (--timeout MS for longer)\n",
          (long long)(wait_ms / 1000), redirect_uri);
  fflush(stderr);
  pthread_mutex_unlock(&g_stderr_lock);
  mcp_status st = MCP_ETIMEDOUT;
  int64_t deadline = now_ms() + wait_ms;
  for (;;) {
    int64_t left = deadline - now_ms();
    struct pollfd p = {g_loopback.fd, POLLIN, 0};
    if (left <= 0) break;
    int pr = poll(&p, 1, (int)left);
    if (pr < 0 && errno == EINTR) continue;
    if (pr <= 0) break;
    int c = accept(g_loopback.fd, NULL, NULL);
    if (c < 0) continue;
    char head[8192];
    char *target = NULL;
    if (read_head(c, head, sizeof(head)) && strncmp(head, "GET ", 4) == 0) {
      char *t = head + 4, *sp = strchr(t, ' ');
      if (sp && path && (size_t)(sp - t) >= path_len && strncmp(t, path, path_len) == 0 &&
          (t[path_len] == '?' || t[path_len] == ' '))
        target = xstrndup(t, (size_t)(sp - t));
    }
    if (!target) {
      reply(c, "404 Not Found", "not the authorization redirect\n");
      close(c);
      continue;
    }
    reply(c, "200 OK", PROG ": authorization received; you can close this window.\n");
    close(c);
    *redirect_url = malloc(strlen("http://127.0.0.1:65535") + strlen(target) + 1);
    if (*redirect_url) {
      sprintf(*redirect_url, "http://127.0.0.1:%d%s", g_loopback.port, target);
      st = MCP_OK;
    } else {
      st = MCP_ENOMEM;
    }
    free(target);
    break;
  }
  pthread_mutex_unlock(&g_loopback.lock);
  if (st == MCP_ETIMEDOUT)
    fprintf(stderr, PROG ": no browser came back to %s in time\n", redirect_uri);
  return st;
}

/* The CLI's OAuth options: the loopback browser step (|server| names the
 * server in the message, or NULL) and the file store.  NULL: no memory. */
mcp_oauth_options *cli_oauth(const char *server) {
  mcp_oauth_options *oa = mcp_oauth_options_new();
  if (!oa) return NULL;
  char redirect[64];
  snprintf(redirect, sizeof(redirect), "http://127.0.0.1:%d/callback", g_loopback.port);
  mcp_status st = g_loopback.fd >= 0 ? mcp_oauth_options_set_redirect_uri(oa, redirect) : MCP_OK;
  if (st == MCP_OK) st = mcp_oauth_options_set_client_name(oa, PROG);
  if (st == MCP_OK) st = mcp_oauth_options_set_file_store(oa, NULL);
  if (g_loopback.fd >= 0) mcp_oauth_options_set_authorize(oa, cli_authorize, (void *)server);
  if (st != MCP_OK) {
    mcp_oauth_options_free(oa);
    return NULL;
  }
  return oa;
}
