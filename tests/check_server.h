/* SPDX-License-Identifier: MIT */
/*
 * check_server.h: starting a test server (mcp-h2-test-server and the like:
 * a child that prints "PORT <n>\n" on stdout once it listens and stops when
 * its stdin closes), shared by the suites that talk to one.
 */
#ifndef CHECK_SERVER_H
#define CHECK_SERVER_H

#include <fcntl.h>
#include <poll.h>
#include <sys/types.h>
#include <unistd.h>

#include "check_util.h"

typedef struct test_server {
  pid_t pid;
  int in_wr; /* its stdin: closing it stops the server */
  int port;
} test_server;

/* Starts argv[0] with |argv|; fails the test unless it prints its port
 * within |wait_ms|. */
static inline test_server test_server_spawn(const char *const *argv, int wait_ms) {
  int in[2], out[2];
  ck_assert_int_eq(pipe2(in, O_CLOEXEC), 0);
  ck_assert_int_eq(pipe2(out, O_CLOEXEC), 0);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    execv(argv[0], (char *const *)argv);
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  test_server s = {pid, in[1], 0};
  char line[64];
  size_t len = 0;
  long long end = test_now_ms() + wait_ms;
  while (len < sizeof(line) - 1) {
    struct pollfd p = {out[0], POLLIN, 0};
    long long left = end - test_now_ms();
    ck_assert_msg(left > 0, "test server did not print its port");
    if (poll(&p, 1, (int)left) <= 0) continue;
    ssize_t r = read(out[0], line + len, 1);
    ck_assert_msg(r == 1, "test server exited before printing its port");
    if (line[len] == '\n') break;
    len++;
  }
  line[len] = '\0';
  close(out[0]);
  ck_assert_int_eq(sscanf(line, "PORT %d", &s.port), 1);
  return s;
}

#endif
