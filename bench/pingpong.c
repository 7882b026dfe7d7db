/* SPDX-License-Identifier: MIT */
/*
 * pingpong.c: the physical limit a stdio (or TCP) MCP client is measured
 * against.  It sends a JSON line of the same size as the tools/call request
 * `mcpconn bench` sends, to a forked child that echoes bytes back without
 * parsing them, and waits for the whole line to come back: over a pair of
 * pipes (--pipe, like a stdio server) or a loopback TCP connection with
 * TCP_NODELAY (--tcp).  With --concurrency C it keeps C lines in flight.
 *
 * With --server CMD the child is a real stdio MCP server (/bin/sh -c 'exec
 * CMD') instead: after initialize, the same tools/call line is sent again and
 * again and answers are only counted, never parsed.  That is the best any
 * client can do against that server: the server's own limit.
 *
 *   pingpong --pipe|--tcp|--server CMD [--calls N] [--warmup W] [--concurrency C]
 *            [--payload-bytes B] [--latency-out FILE]
 *
 * Prints one JSON line in the shape of `mcpconn bench` on stdout.
 * Everything is bounded: N round trips, and an alarm after 300 s.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (64 * 1024)
#define MAX_SECONDS 300

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void die(const char *what) {
  fprintf(stderr, "pingpong: %s: %s\n", what, strerror(errno));
  exit(1);
}

/* The child: echo every byte from |in| to |out| until EOF. */
static void echo_child(int in, int out) {
  static char buf[CHUNK];
  for (;;) {
    ssize_t n = read(in, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(0);
    for (ssize_t off = 0; off < n;) {
      ssize_t w = write(out, buf + off, (size_t)(n - off));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) _exit(1);
      off += w;
    }
  }
}

static void write_all(int fd, const char *p, size_t n) {
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) die("write");
    p += w;
    n -= (size_t)w;
  }
}

/* initialize, its answer, notifications/initialized: the server is ready. */
static void handshake(int wfd, int rfd) {
  static const char init[] = "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
                             "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
                             "\"clientInfo\":{\"name\":\"pingpong\",\"version\":\"0\"}}}\n";
  static const char done[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";
  char c;
  write_all(wfd, init, sizeof(init) - 1);
  for (;;) { /* one line back */
    ssize_t n = read(rfd, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) die("server closed before answering initialize");
    if (c == '\n') break;
  }
  write_all(wfd, done, sizeof(done) - 1);
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

static double pct(const int64_t *v, size_t n, double p) {
  size_t rank = (size_t)(p / 100.0 * (double)n + 0.999999);
  if (rank < 1) rank = 1;
  if (rank > n) rank = n;
  return (double)v[rank - 1];
}

static double cpu_s(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
         ru.ru_stime.tv_usec / 1e6;
}

/*
 * Sends |total| lines keeping |window| in flight; lines come back in order.
 * Fills lat[k] for k >= |skip| (the warm-up is not measured).  Returns the
 * time of the first measured send and of the last measured answer.
 */
static void run(int wfd, int rfd, const char *line, size_t len, long total, long skip, long window,
                int64_t *lat, int64_t *first, int64_t *last) {
  int64_t *sent = calloc((size_t)window, sizeof(int64_t));
  char *buf = malloc(CHUNK);
  if (!sent || !buf) die("malloc");
  long nsent = 0, nrecv = 0;
  *first = 0;
  while (nrecv < total) {
    while (nsent < total && nsent - nrecv < window) {
      int64_t t = now_ns();
      if (nsent == skip) *first = t;
      sent[nsent % window] = t;
      write_all(wfd, line, len);
      nsent++;
    }
    ssize_t n = read(rfd, buf, CHUNK);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) die("read (child gone)");
    int64_t t = now_ns();
    /* Count whole lines: answers come back in order, one line each. */
    for (const char *p = buf, *e = buf + n; (p = memchr(p, '\n', (size_t)(e - p))); p++) {
      if (nrecv >= skip) lat[nrecv - skip] = t - sent[nrecv % window];
      nrecv++;
      *last = t;
    }
  }
  free(sent);
  free(buf);
}

int main(int argc, char **argv) {
  long calls = 5000, warmup = 200, window = 1, payload = 32;
  const char *mode = NULL, *lat_out = NULL, *server_cmd = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--pipe") || !strcmp(a, "--tcp")) mode = a + 2;
    else if (!strcmp(a, "--server") && v) {
      mode = "server";
      server_cmd = argv[++i];
    } else if (!strcmp(a, "--calls") && v) calls = atol(argv[++i]);
    else if (!strcmp(a, "--warmup") && v) warmup = atol(argv[++i]);
    else if (!strcmp(a, "--concurrency") && v) window = atol(argv[++i]);
    else if (!strcmp(a, "--payload-bytes") && v) payload = atol(argv[++i]);
    else if (!strcmp(a, "--latency-out") && v) lat_out = argv[++i];
    else {
      fprintf(stderr, "usage: pingpong --pipe|--tcp|--server CMD [--calls N] [--warmup W] "
                      "[--concurrency C] [--payload-bytes B] [--latency-out F]\n");
      return 2;
    }
  }
  if (!mode || calls < 1 || warmup < 0 || window < 1 || payload < 0 || payload > 1 << 20) {
    fprintf(stderr, "pingpong: bad arguments (see --help)\n");
    return 2;
  }
  alarm(MAX_SECONDS);

  /* The same bytes as the tools/call request mcpconn sends for a call with
   * a 6-digit index (the framing is identical, only the content is not
   * looked at). */
  size_t cap = (size_t)payload + 256, len;
  char *line = malloc(cap), *text = malloc((size_t)payload + 16);
  if (!line || !text) die("malloc");
  int tl = snprintf(text, (size_t)payload + 16, "%d:", 100000);
  if (tl < payload) {
    memset(text + tl, 'x', (size_t)(payload - tl));
    text[payload] = '\0';
  }
  len = (size_t)snprintf(line, cap,
                         "{\"jsonrpc\":\"2.0\",\"id\":100000,\"method\":\"tools/"
                         "call\",\"params\":{\"name\":\"echo\",\"arguments\":{"
                         "\"text\":\"%s\"}}}\n",
                         text);

  int to_child[2], from_child[2];
  pid_t pid;
  int wfd, rfd;
  if (!strcmp(mode, "pipe") || !strcmp(mode, "server")) {
    if (pipe(to_child) || pipe(from_child)) die("pipe");
    pid = fork();
    if (pid < 0) die("fork");
    if (pid == 0) {
      close(to_child[1]);
      close(from_child[0]);
      if (!server_cmd) echo_child(to_child[0], from_child[1]);
      char *sh = malloc(strlen(server_cmd) + 6);
      if (!sh || dup2(to_child[0], 0) < 0 || dup2(from_child[1], 1) < 0) _exit(127);
      strcpy(sh, "exec ");
      strcat(sh, server_cmd);
      execl("/bin/sh", "sh", "-c", sh, (char *)NULL);
      _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    wfd = to_child[1];
    rfd = from_child[0];
    if (server_cmd) handshake(wfd, rfd);
  } else {
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof(sa);
    if (ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof(sa)) || listen(ls, 1) ||
        getsockname(ls, (struct sockaddr *)&sa, &sl))
      die("listen on 127.0.0.1");
    pid = fork();
    if (pid < 0) die("fork");
    if (pid == 0) {
      int s = accept(ls, NULL, NULL);
      int one = 1;
      if (s < 0) _exit(1);
      setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      echo_child(s, s);
    }
    close(ls);
    int s = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa))) die("connect");
    setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    wfd = rfd = s;
  }

  int64_t *lat = calloc((size_t)calls, sizeof(int64_t));
  if (!lat) die("malloc");
  int64_t first = 0, last = 0;
  double cpu0 = 0;
  /* Warm-up and measured calls in one stream; CPU counted from the start
   * (the warm-up is short). */
  cpu0 = cpu_s();
  run(wfd, rfd, line, len, warmup + calls, warmup, window, lat, &first, &last);
  double cpu = cpu_s() - cpu0;
  close(wfd);
  if (rfd != wfd) close(rfd);
  waitpid(pid, NULL, 0);

  double sum = 0;
  for (long k = 0; k < calls; k++) sum += (double)lat[k];
  if (lat_out) {
    FILE *f = fopen(lat_out, "w");
    if (f) {
      for (long k = 0; k < calls; k++) fprintf(f, "%.3f\n", lat[k] / 1e3);
      fclose(f);
    }
  }
  qsort(lat, (size_t)calls, sizeof(int64_t), cmp_i64);
  double wall = (double)(last - first) / 1e9;
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  printf("{\"client\":\"pingpong\",\"transport\":\"%s\",\"calls\":%ld,"
         "\"concurrency\":%ld,\"threads\":1,\"ok\":%ld,\"errors\":0,"
         "\"wall_s\":%.6f,\"calls_per_s\":%.1f,\"lat_us\":{\"mean\":%.1f,"
         "\"p50\":%.1f,\"p90\":%.1f,\"p99\":%.1f,\"max\":%.1f},"
         "\"init_ms\":0,\"rss_peak_kb\":%ld,\"cpu_s\":%.3f,\"line_bytes\":%zu}\n",
         mode, calls, window, calls, wall, wall > 0 ? calls / wall : 0, sum / calls / 1e3,
         pct(lat, (size_t)calls, 50) / 1e3, pct(lat, (size_t)calls, 90) / 1e3,
         pct(lat, (size_t)calls, 99) / 1e3, lat[calls - 1] / 1e3, (long)ru.ru_maxrss, cpu, len);
  return 0;
}
