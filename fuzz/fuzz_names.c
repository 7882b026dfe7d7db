/* SPDX-License-Identifier: MIT */
/*
 * fuzz_names.c: libFuzzer target for tool-name folding and collision
 * handling.
 *
 * Input: lines; each line is "server<TAB>tool" (a line without a tab is a
 * tool of server "s").  Checks that every public name matches
 * ^[a-zA-Z0-9_-]{1,64}$, that the output is sorted and unique, that every
 * input pair is named (exact duplicates once), and that reversing the input
 * changes nothing.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mcp_names.h"

#define MAX_PAIRS 256

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *serialise(const mcp_named_tool *v, size_t n) {
  size_t cap = 1;
  for (size_t i = 0; i < n; i++)
    cap += strlen(v[i].name) + strlen(v[i].server) + strlen(v[i].tool) + 4;
  char *s = calloc(1, cap);
  if (!s) return NULL;
  for (size_t i = 0; i < n; i++) {
    strcat(s, v[i].name);
    strcat(s, "\x01");
    strcat(s, v[i].server);
    strcat(s, "\x01");
    strcat(s, v[i].tool);
    strcat(s, "\n");
  }
  return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *buf = malloc(size + 1);
  if (!buf) return 0;
  memcpy(buf, data, size);
  buf[size] = '\0';
  mcp_tool_origin in[MAX_PAIRS], rev[MAX_PAIRS];
  size_t n = 0;
  char *p = buf;
  while (n < MAX_PAIRS && p <= buf + size) {
    char *nl = strchr(p, '\n');
    if (nl) *nl = '\0';
    char *tab = strchr(p, '\t');
    if (tab) {
      *tab = '\0';
      in[n].server = p;
      in[n].tool = tab + 1;
    } else {
      in[n].server = "s";
      in[n].tool = p;
    }
    n++;
    if (!nl) break;
    p = nl + 1;
  }

  for (size_t i = 0; i < n; i++) {
    char *name = NULL;
    if (mcp__names_public(in[i].server, in[i].tool, &name) == MCP_OK) {
      if (!mcp__names_is_valid(name)) abort();
      mcp__free(name);
    }
    rev[n - 1 - i] = in[i];
  }

  mcp_named_tool *a = NULL, *b = NULL;
  size_t na = 0, nb = 0;
  if (mcp__names_assign(in, n, &a, &na) == MCP_OK && mcp__names_assign(rev, n, &b, &nb) == MCP_OK) {
    if (na != nb || na > n) abort();
    for (size_t i = 0; i < na; i++) {
      if (!mcp__names_is_valid(a[i].name)) abort();
      if (i && strcmp(a[i - 1].name, a[i].name) >= 0) abort();
      if (a[i].index >= n || strcmp(in[a[i].index].server, a[i].server) != 0 ||
          strcmp(in[a[i].index].tool, a[i].tool) != 0)
        abort();
    }
    /* Every input pair is present. */
    for (size_t i = 0; i < n; i++) {
      size_t k = 0;
      while (k < na &&
             !(strcmp(a[k].server, in[i].server) == 0 && strcmp(a[k].tool, in[i].tool) == 0))
        k++;
      if (k == na) abort();
    }
    char *sa = serialise(a, na), *sb = serialise(b, nb);
    if (sa && sb && strcmp(sa, sb) != 0) abort();
    free(sa);
    free(sb);
  }
  mcp__names_free(a, na);
  mcp__names_free(b, nb);
  free(buf);
  return 0;
}
