/* SPDX-License-Identifier: MIT */
/*
 * bench/manyservers.c: one manager, N stdio servers.  Starts a manager with
 * N copies of a stdio server (code servers s0..s<N-1>, no config files, no
 * cache), waits until every server has settled (mcp_manager_wait_ready) and
 * takes the tool list, then closes the manager.  Prints one JSON line:
 * time to the full tool list, tools seen, servers ready, peak RSS and RSS
 * per server, threads (peak, sampled every 2 ms, and after the list), file
 * descriptors, and the time mcp_manager_free() takes.  Never part of make
 * check; bench/README.md says how to run it.
 *
 *   bench/manyservers --servers N (--server PATH | --url URL) [--timeout-ms T]
 *
 * PATH is the server program (e.g. bin/mcpconn-demo-server), run without
 * arguments; URL an http:// Streamable HTTP endpoint (h2c with prior
 * knowledge, e.g. tests/mcp-h2-test-server) that all N servers share.  N servers need about 4 N descriptors: the soft RLIMIT_NOFILE
 * is raised to the hard one first.
 */
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <mcpconn.h>

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* A field of /proc/self/status in kB or a count; -1 when absent. */
static long proc_status(const char *key) {
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long v = -1;
  size_t k = strlen(key);
  while (fgets(line, sizeof(line), f))
    if (!strncmp(line, key, k) && line[k] == ':') {
      v = strtol(line + k + 1, NULL, 10);
      break;
    }
  fclose(f);
  return v;
}

static long count_fds(void) {
  DIR *d = opendir("/proc/self/fd");
  if (!d) return -1;
  long n = 0;
  while (readdir(d)) n++;
  closedir(d);
  return n - 3; /* ".", ".." and the DIR's own descriptor */
}

static atomic_bool sampling = true;
static atomic_long peak_threads;

static void *sampler(void *arg) {
  (void)arg;
  while (atomic_load(&sampling)) {
    long t = proc_status("Threads");
    if (t > atomic_load(&peak_threads)) atomic_store(&peak_threads, t);
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, NULL);
  }
  return NULL;
}

int main(int argc, char **argv) {
  int servers = 10;
  long timeout_ms = 300000;
  const char *server = NULL, *url = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--servers") && i + 1 < argc) servers = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--server") && i + 1 < argc) server = argv[++i];
    else if (!strcmp(argv[i], "--url") && i + 1 < argc) url = argv[++i];
    else if (!strcmp(argv[i], "--timeout-ms") && i + 1 < argc) timeout_ms = atol(argv[++i]);
    else {
      fprintf(stderr, "usage: %s --servers N (--server PATH | --url URL) [--timeout-ms T]\n",
              argv[0]);
      return 2;
    }
  }
  if (!server == !url || servers < 1) {
    fprintf(stderr, "manyservers: --server PATH or --url URL is required; N >= 1\n");
    return 2;
  }
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }

  mcp_manager_options *o = mcp_manager_options_new();
  mcp_client_options *co = mcp_client_options_new();
  const char *sargv[] = {server, NULL};
  mcp_status cst0 = !co   ? MCP_ENOMEM
                    : url ? mcp_client_options_set_http(co, url, MCP_HTTP_TRANSPORT_STREAMABLE)
                          : mcp_client_options_set_stdio(co, sargv);
  if (url && co) {
    mcp_client_options_set_http_version(co, MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
    mcp_client_options_set_http_listener(co, false);
  }
  if (!o || cst0 != MCP_OK) {
    fprintf(stderr, "manyservers: out of memory\n");
    return 1;
  }
  mcp_manager_options_set_discovery(o, false, false);
  mcp_manager_options_set_cache_dir(o, NULL);
  mcp_manager_options_set_startup_gate_ms(o, 0);
  mcp_manager_options_set_timeout_ms(o, timeout_ms);
  for (int i = 0; i < servers; i++) {
    char name[32];
    snprintf(name, sizeof(name), "s%d", i);
    if (mcp_manager_options_add_server(o, name, co) != MCP_OK) {
      fprintf(stderr, "manyservers: out of memory\n");
      return 1;
    }
  }
  mcp_client_options_free(co);

  long rss0 = proc_status("VmRSS"), threads0 = proc_status("Threads"), fds0 = count_fds();
  pthread_t smp;
  atomic_store(&peak_threads, threads0);
  pthread_create(&smp, NULL, sampler, NULL);

  double t0 = now_ms();
  mcp_manager *m = NULL;
  mcp_error err = MCP_ERROR_INIT;
  if (mcp_manager_start(o, &m, &err) != MCP_OK) {
    fprintf(stderr, "manyservers: start: %s\n", err.message ? err.message : "?");
    return 1;
  }
  mcp_status st = mcp_manager_wait_ready(m, NULL, timeout_ms, &err);
  mcp_tool_list *l = mcp_manager_tools(m);
  double t_list = now_ms() - t0;
  if (st != MCP_OK) fprintf(stderr, "manyservers: wait_ready: %s\n", err.message);
  mcp_error_clear(&err);

  size_t ntools = mcp_tool_list_count(l);
  /* Every server's tools there: count the servers that own a tool. */
  char *seen = calloc((size_t)servers, 1);
  int with_tools = 0;
  for (size_t i = 0; seen && i < ntools; i++) {
    const char *s = mcp_tool_list_server(l, i);
    int k = s && s[0] == 's' ? atoi(s + 1) : -1;
    if (k >= 0 && k < servers && !seen[k]) {
      seen[k] = 1;
      with_tools++;
    }
  }
  free(seen);
  mcp_tool_list_unref(l);
  /* A lookup through the manager, by name, for the last server. */
  char last[48];
  snprintf(last, sizeof(last), "s%d/echo", servers - 1);
  char *res = NULL;
  double t_call = now_ms();
  mcp_status cst = mcp_manager_call_tool(m, last, "{\"text\":\"hi\"}", NULL, &res, &err);
  t_call = now_ms() - t_call;
  mcp_free(res);
  mcp_error_clear(&err);

  /* Servers in state "ready", and the first other state's error. */
  int nready = 0;
  char *sj = NULL;
  if (mcp_manager_servers(m, &sj, NULL) == MCP_OK) {
    for (const char *p = sj; (p = strstr(p, "\"state\":\"")); p++)
      if (!strncmp(p + 9, "ready\"", 6)) nready++;
    const char *e = strstr(sj, "\"lastError\":\"");
    if (e) fprintf(stderr, "manyservers: first error: %.200s\n", e + 13);
  }
  mcp_free(sj);
  long threads_ready = proc_status("Threads"), fds_ready = count_fds();
  double t1 = now_ms();
  mcp_manager_free(m);
  double t_free = now_ms() - t1;
  atomic_store(&sampling, false);
  pthread_join(smp, NULL);
  long threads_after = proc_status("Threads");
  mcp_manager_options_free(o);

  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  long rss_peak = ru.ru_maxrss; /* kB */
  printf(
      "{\"servers\":%d,\"servers_ready\":%d,\"ready\":%s,\"servers_with_tools\":%d,\"tools\":%zu,"
      "\"list_ms\":%.1f,\"call_ms\":%.2f,\"call_ok\":%s,\"free_ms\":%.1f,"
      "\"rss_start_kb\":%ld,\"rss_peak_kb\":%ld,\"rss_per_server_kb\":%.1f,"
      "\"threads_start\":%ld,\"threads_peak\":%ld,\"threads_ready\":%ld,"
      "\"threads_after\":%ld,\"fds_start\":%ld,\"fds_ready\":%ld,"
      "\"cpu_user_s\":%.2f,\"cpu_sys_s\":%.2f}\n",
      servers, nready, st == MCP_OK ? "true" : "false", with_tools, ntools, t_list, t_call,
      cst == MCP_OK ? "true" : "false", t_free, rss0, rss_peak, (double)(rss_peak - rss0) / servers,
      threads0, atomic_load(&peak_threads), threads_ready, threads_after, fds0, fds_ready,
      (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
      (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
  return st == MCP_OK && with_tools == servers && nready == servers && cst == MCP_OK ? 0 : 1;
}
