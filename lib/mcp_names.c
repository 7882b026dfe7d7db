/* SPDX-License-Identifier: MIT */
/*
 * mcp_names.c: folding (server, tool) pairs into public tool names and
 * resolving collisions deterministically.  Pure: no I/O, no threads, no
 * global state.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp_names.h"
#include "mcp_sha256.h"

#define PREFIX "mcp__"
#define PREFIX_LEN 5
/* Bytes kept of a name that is too long: 64 - "_" - 8 hash digits. */
#define CUT_LEN (MCP_NAMES_MAX - 9)

mcp_status mcp__names_fold(const char *part, char **out) {
  if (!out) return MCP_EINVAL;
  *out = NULL;
  if (!part) part = "";
  size_t n = strlen(part), w = 0;
  char *s = mcp__malloc(n + 1);
  if (!s) return MCP_ENOMEM;
  bool gap = false;
  for (size_t i = 0; i < n; i++) {
    char c = part[i];
    if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
    bool keep = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (!keep) {
      /* "_" and every other byte separate words; they never lead. */
      gap = w > 0;
      continue;
    }
    if (gap) s[w++] = '_';
    gap = false;
    s[w++] = c;
  }
  s[w] = '\0';
  *out = s;
  return MCP_OK;
}

/* Writes 8 base-36 digits of a hash of |s| into |dst| (9 bytes). */
static bool hash36(const char *s, char dst[9]) {
  static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
  unsigned char md[MCP_SHA256_LEN];
  mcp__sha256(s, strlen(s), md);
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v = (v << 8) | md[i];
  v %= UINT64_C(2821109907456); /* 36^8 */
  for (int i = 7; i >= 0; i--) {
    dst[i] = digits[v % 36];
    v /= 36;
  }
  dst[8] = '\0';
  return true;
}

/* Cuts |s| to |len| bytes and then drops trailing "_". */
static void cut(char *s, size_t len) {
  if (strlen(s) > len) s[len] = '\0';
  size_t n = strlen(s);
  while (n > PREFIX_LEN + 1 && s[n - 1] == '_') s[--n] = '\0';
}

mcp_status mcp__names_public(const char *server, const char *tool, char **out) {
  char *fs = NULL, *ft = NULL, *name = NULL;
  mcp_status st = MCP_ENOMEM;
  if (!out) return MCP_EINVAL;
  *out = NULL;
  if (mcp__names_fold(server, &fs) || mcp__names_fold(tool, &ft)) goto out;
  const char *s = *fs ? fs : "server";
  const char *t = *ft ? ft : "tool";
  size_t sl = strlen(s);
  if (strncmp(t, s, sl) == 0 && t[sl] == '_' && t[sl + 1]) t += sl + 1;
  name = mcp__asprintf(PREFIX "%s_%s", s, t);
  if (!name) goto out;
  if (strlen(name) > MCP_NAMES_MAX) {
    char h[9];
    if (!hash36(name, h)) goto out;
    cut(name, CUT_LEN);
    size_t n = strlen(name);
    name[n] = '_';
    memcpy(name + n + 1, h, 9);
  }
  *out = name;
  name = NULL;
  st = MCP_OK;
out:
  mcp__free(fs);
  mcp__free(ft);
  mcp__free(name);
  return st;
}

bool mcp__names_is_valid(const char *name) {
  if (!name) return false;
  size_t n = 0;
  for (; name[n]; n++) {
    char c = name[n];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-';
    if (!ok || n >= MCP_NAMES_MAX) return false;
  }
  return n > 0;
}

void mcp__names_free(mcp_named_tool *v, size_t n) {
  if (!v) return;
  for (size_t i = 0; i < n; i++) {
    mcp__free(v[i].name);
    mcp__free(v[i].server);
    mcp__free(v[i].tool);
  }
  mcp__free(v);
}

/* One pair while names are assigned; strings borrowed except |name|. */
typedef struct rec {
  char *name; /* the base name, then the final one */
  const char *server;
  const char *tool;
  size_t index;
  bool dup;    /* an exact duplicate of the previous record */
  bool winner; /* keeps its base name */
  bool renamed;
} rec;

static int cmp_origin(const rec *a, const rec *b) {
  int c = strcmp(a->server, b->server);
  if (c) return c;
  return strcmp(a->tool, b->tool);
}

/* Base name, then origin key, then input position (for duplicates). */
static int cmp_rec(const void *pa, const void *pb) {
  const rec *a = pa, *b = pb;
  int c = strcmp(a->name, b->name);
  if (c) return c;
  c = cmp_origin(a, b);
  if (c) return c;
  return a->index < b->index ? -1 : a->index > b->index;
}

static int cmp_final(const void *pa, const void *pb) {
  const mcp_named_tool *a = pa, *b = pb;
  return strcmp(a->name, b->name);
}

/* An open-addressing set of borrowed strings, for names already taken. */
typedef struct name_set {
  const char **slots;
  size_t cap; /* a power of two, at least twice the number of entries */
} name_set;

static size_t str_hash(const char *s) {
  uint64_t h = UINT64_C(1469598103934665603);
  for (; *s; s++) h = (h ^ (unsigned char)*s) * UINT64_C(1099511628211);
  return (size_t)h;
}

static bool set_has(const name_set *ns, const char *s) {
  for (size_t i = str_hash(s) & (ns->cap - 1);; i = (i + 1) & (ns->cap - 1)) {
    if (!ns->slots[i]) return false;
    if (strcmp(ns->slots[i], s) == 0) return true;
  }
}

static void set_put(name_set *ns, const char *s) {
  size_t i = str_hash(s) & (ns->cap - 1);
  while (ns->slots[i]) i = (i + 1) & (ns->cap - 1);
  ns->slots[i] = s;
}

/* Gives loser |r| the first free "<base>_<k>" from *k on. */
static mcp_status rename_loser(rec *r, name_set *taken, unsigned long *k) {
  for (;; (*k)++) {
    char suffix[24];
    snprintf(suffix, sizeof(suffix), "_%lu", *k);
    char *cand = mcp__malloc(strlen(r->name) + strlen(suffix) + 1);
    if (!cand) return MCP_ENOMEM;
    strcpy(cand, r->name);
    if (strlen(cand) + strlen(suffix) > MCP_NAMES_MAX) cut(cand, MCP_NAMES_MAX - strlen(suffix));
    strcat(cand, suffix);
    if (!set_has(taken, cand)) {
      mcp__free(r->name);
      r->name = cand;
      r->renamed = true;
      set_put(taken, cand);
      (*k)++;
      return MCP_OK;
    }
    mcp__free(cand);
  }
}

mcp_status mcp__names_assign(const mcp_tool_origin *in, size_t n, mcp_named_tool **out,
                             size_t *nout) {
  mcp_status st = MCP_ENOMEM;
  rec *recs = NULL;
  mcp_named_tool *res = NULL;
  name_set taken = {NULL, 0};
  size_t nres = 0;
  if (!out || !nout) return MCP_EINVAL;
  *out = NULL;
  *nout = 0;
  if (n && !in) return MCP_EINVAL;
  if (!n) return MCP_OK;

  recs = mcp__calloc(n, sizeof(*recs));
  if (!recs) goto out;
  for (size_t i = 0; i < n; i++) {
    recs[i].server = in[i].server ? in[i].server : "";
    recs[i].tool = in[i].tool ? in[i].tool : "";
    recs[i].index = i;
    if (mcp__names_public(recs[i].server, recs[i].tool, &recs[i].name)) goto out;
  }
  qsort(recs, n, sizeof(*recs), cmp_rec);

  taken.cap = 16;
  while (taken.cap < 2 * n + 2) taken.cap *= 2;
  taken.slots = mcp__calloc(taken.cap, sizeof(char *));
  if (!taken.slots) goto out;

  /* Winners first: the smallest origin key of each base name. */
  for (size_t i = 0; i < n; i++) {
    if (i > 0 && cmp_origin(&recs[i], &recs[i - 1]) == 0) {
      recs[i].dup = true;
      continue;
    }
    if (i == 0 || strcmp(recs[i].name, recs[i - 1].name) != 0) {
      recs[i].winner = true;
      set_put(&taken, recs[i].name);
    }
  }
  /* Then losers, in (base name, origin key) order. */
  unsigned long k = 2;
  for (size_t i = 0; i < n; i++) {
    if (recs[i].winner) k = 2;
    if (recs[i].winner || recs[i].dup) continue;
    if ((st = rename_loser(&recs[i], &taken, &k)) != MCP_OK) goto out;
  }
  st = MCP_ENOMEM;

  res = mcp__calloc(n, sizeof(*res));
  if (!res) goto out;
  for (size_t i = 0; i < n; i++) {
    if (recs[i].dup) continue;
    mcp_named_tool *e = &res[nres++];
    e->name = recs[i].name;
    recs[i].name = NULL;
    e->server = mcp__strdup(recs[i].server);
    e->tool = mcp__strdup(recs[i].tool);
    e->index = recs[i].index;
    e->renamed = recs[i].renamed;
    if (!e->server || !e->tool) goto out;
  }
  qsort(res, nres, sizeof(*res), cmp_final);
  *out = res;
  *nout = nres;
  res = NULL;
  st = MCP_OK;
out:
  if (recs)
    for (size_t i = 0; i < n; i++) mcp__free(recs[i].name);
  mcp__free(recs);
  mcp__free(taken.slots);
  mcp__names_free(res, nres);
  return st;
}
