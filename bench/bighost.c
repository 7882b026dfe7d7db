/* SPDX-License-Identifier: MIT */
/*
 * bench/bighost.c: the cost of spawning stdio servers from a big host.
 * Touches N GiB of heap (so the host has that many resident, private pages
 * whose page tables a fork() would copy), then connects K stdio servers one
 * after another with mcp_client_connect() and reports each connect's time
 * (spawn + initialize), as one JSON line on stdout.  Never part of make
 * check; bench/README.md says how to run it.
 *
 *   bench/bighost --gb N --servers K --server PATH [--reps R]
 *
 * PATH is the server program (e.g. bin/mcpconn-demo-server), run without
 * arguments.  The heap stays touched until the program exits.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <mcpconn.h>

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  double gb = 0;
  int servers = 10, reps = 1;
  const char *server = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--gb") && i + 1 < argc) gb = atof(argv[++i]);
    else if (!strcmp(argv[i], "--servers") && i + 1 < argc) servers = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--server") && i + 1 < argc) server = argv[++i];
    else {
      fprintf(stderr, "usage: %s --gb N --servers K --server PATH [--reps R]\n", argv[0]);
      return 2;
    }
  }
  if (!server || servers < 1 || reps < 1 || gb < 0) {
    fprintf(stderr, "bighost: --server PATH is required; K, R >= 1; N >= 0\n");
    return 2;
  }

  /* Private anonymous memory, every page written: what a big host's heap
   * looks like to fork(). */
  size_t bytes = (size_t)(gb * 1024 * 1024 * 1024);
  double t0 = now_ms();
  char *heap = NULL;
  if (bytes) {
    heap = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (heap == MAP_FAILED) {
      fprintf(stderr, "bighost: cannot map %.1f GiB: %s\n", gb, strerror(errno));
      return 1;
    }
    /* No transparent huge pages: a host's malloc heap is mostly 4 KiB pages. */
    madvise(heap, bytes, MADV_NOHUGEPAGE);
    for (size_t off = 0; off < bytes; off += 4096) heap[off] = (char)off;
  }
  double touch_ms = now_ms() - t0;

  size_t n = (size_t)servers * (size_t)reps;
  double *ms = calloc(n, sizeof(double));
  mcp_client **cl = calloc((size_t)servers, sizeof(mcp_client *));
  if (!ms || !cl) return 1;
  const char *sargv[] = {server, NULL};
  mcp_client_options *o = mcp_client_options_new();
  if (!o || mcp_client_options_set_stdio(o, sargv) != MCP_OK) return 1;
  size_t k = 0;
  for (int r = 0; r < reps; r++) {
    for (int i = 0; i < servers; i++) {
      mcp_error err = MCP_ERROR_INIT;
      double a = now_ms();
      if (mcp_client_connect(o, &cl[i], &err) != MCP_OK) {
        fprintf(stderr, "bighost: connect %d failed: %s\n", i, err.message ? err.message : "?");
        return 1;
      }
      ms[k++] = now_ms() - a;
    }
    for (int i = 0; i < servers; i++) mcp_client_free(cl[i]);
  }
  mcp_client_options_free(o);
  qsort(ms, n, sizeof(double), cmp_double);
  double sum = 0;
  for (size_t i = 0; i < n; i++) sum += ms[i];
  printf("{\"gb\":%.1f,\"servers\":%d,\"reps\":%d,\"touch_ms\":%.0f,"
         "\"connect_ms\":{\"mean\":%.2f,\"p50\":%.2f,\"min\":%.2f,\"max\":%.2f}}\n",
         gb, servers, reps, touch_ms, sum / (double)n, ms[n / 2], ms[0], ms[n - 1]);
  volatile char sink = heap ? heap[bytes / 2] : 0;
  (void)sink;
  free(ms);
  free(cl);
  return 0;
}
