/* SPDX-License-Identifier: MIT */
/*
 * mcp_xhdr.c: reading x-mcp-header annotations and a call's header values
 * (see mcp_xhdr.h).
 */
#include "config.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "mcp_era.h"
#include "mcp_xhdr.h"

#define KEY "x-mcp-header"
#define MAX_DEPTH 32

void mcp__xhdr_free(mcp_xhdr_tool *t) {
  if (!t) return;
  for (size_t i = 0; i < t->n; i++) {
    mcp__free(t->p[i].name);
    for (size_t d = 0; d < t->p[i].depth; d++) mcp__free(t->p[i].path[d]);
    mcp__free(t->p[i].path);
  }
  mcp__free(t);
}

/* RFC 9110 token characters. */
static bool is_tchar(unsigned char ch) {
  if ((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')) return true;
  return ch && strchr("!#$%&'*+-.^_`|~", ch) != NULL;
}

typedef struct walk {
  mcp_xhdr_tool *t;
  const char *path[MAX_DEPTH];
  size_t depth;
  char *why;
  size_t cap;
  mcp_status st;
} walk;

/* The first failure wins: |what| then |a|, e.g. ("not a string: ", "x"). */
static void fail(walk *w, mcp_status st, const char *what, const char *a) {
  if (w->st != MCP_OK) return;
  w->st = st;
  if (w->why && w->cap) snprintf(w->why, w->cap, "%s%s", what, a);
}

static void add(walk *w, json_object *node, json_object *hv) {
  if (!json_object_is_type(hv, json_type_string)) {
    fail(w, MCP_EINVAL, "x-mcp-header is not a string on property ", w->path[w->depth - 1]);
    return;
  }
  const char *name = json_object_get_string(hv);
  size_t len = (size_t)json_object_get_string_len(hv);
  if (len == 0) {
    fail(w, MCP_EINVAL, "x-mcp-header is empty on property ", w->path[w->depth - 1]);
    return;
  }
  for (size_t i = 0; i < len; i++)
    if (!is_tchar((unsigned char)name[i])) {
      fail(w, MCP_EINVAL, "x-mcp-header is not an HTTP token: ", name);
      return;
    }
  json_object *type = NULL;
  const char *ty = json_object_object_get_ex(node, "type", &type) &&
                           json_object_is_type(type, json_type_string)
                       ? json_object_get_string(type)
                       : NULL;
  if (!ty ||
      (strcmp(ty, "string") != 0 && strcmp(ty, "integer") != 0 && strcmp(ty, "boolean") != 0)) {
    fail(w, MCP_EINVAL, "x-mcp-header on a property not string, integer or boolean: ", name);
    return;
  }
  for (size_t i = 0; i < w->t->n; i++)
    if (strcasecmp(w->t->p[i].name, name) == 0) {
      fail(w, MCP_EINVAL, "x-mcp-header appears twice: ", name);
      return;
    }
  if (w->t->n >= MCP_XHDR_MAX) {
    fail(w, MCP_EINVAL, "more than 16 x-mcp-header annotations", "");
    return;
  }
  mcp_xhdr_param *p = &w->t->p[w->t->n];
  p->name = mcp__strdup(name);
  p->path = mcp__calloc(w->depth, sizeof(char *));
  if (p->name && p->path)
    for (p->depth = 0; p->depth < w->depth; p->depth++)
      if (!(p->path[p->depth] = mcp__strdup(w->path[p->depth]))) break;
  w->t->n++; /* freed as a whole on failure */
  if (!p->name || !p->path || p->depth < w->depth) fail(w, MCP_ENOMEM, "out of memory", "");
}

/* Keywords whose values are data, not schemas: never searched. */
static bool is_data_keyword(const char *k) {
  return strcmp(k, "const") == 0 || strcmp(k, "default") == 0 || strcmp(k, "enum") == 0 ||
         strcmp(k, "examples") == 0 || strcmp(k, "example") == 0;
}

/* |node| a schema; |reachable|: reached from the root by properties alone
 * (and not the root itself). */
static void visit(walk *w, json_object *node, bool reachable, size_t level) {
  if (w->st != MCP_OK) return;
  if (level > MAX_DEPTH) return; /* nothing this deep is reachable anyway */
  if (json_object_is_type(node, json_type_array)) {
    size_t n = json_object_array_length(node);
    for (size_t i = 0; i < n && w->st == MCP_OK; i++)
      visit(w, json_object_array_get_idx(node, i), false, level + 1);
    return;
  }
  if (!json_object_is_type(node, json_type_object)) return;
  json_object *hv = NULL;
  if (json_object_object_get_ex(node, KEY, &hv)) {
    if (!reachable || w->depth == 0) {
      fail(w, MCP_EINVAL, "x-mcp-header not reached through properties alone: ",
           json_object_is_type(hv, json_type_string) ? json_object_get_string(hv) : "");
      return;
    }
    add(w, node, hv);
  }
  json_object_object_foreach(node, k, v) {
    if (w->st != MCP_OK) return;
    if (strcmp(k, KEY) == 0 || is_data_keyword(k)) continue;
    if (strcmp(k, "properties") == 0 && json_object_is_type(v, json_type_object)) {
      json_object_object_foreach(v, pname, pschema) {
        if (w->depth >= MAX_DEPTH) {
          visit(w, pschema, false, level + 1);
          continue;
        }
        w->path[w->depth++] = pname;
        visit(w, pschema, reachable || level == 0, level + 1);
        w->depth--;
        if (w->st != MCP_OK) return;
      }
      continue;
    }
    visit(w, v, false, level + 1);
  }
}

mcp_status mcp__xhdr_read(json_object *schema, mcp_xhdr_tool **out, char *why, size_t cap) {
  *out = NULL;
  if (why && cap) why[0] = '\0';
  walk w = {.why = why, .cap = cap};
  if (!(w.t = mcp__calloc(1, sizeof(*w.t)))) return MCP_ENOMEM;
  visit(&w, schema, false, 0);
  if (w.st != MCP_OK || w.t->n == 0) {
    mcp__xhdr_free(w.t);
    return w.st;
  }
  *out = w.t;
  return MCP_OK;
}

#define MAX_SAFE 9007199254740991LL /* 2^53 - 1 */

mcp_status mcp__xhdr_values(const mcp_xhdr_tool *t, json_object *args, char **names, char **values,
                            size_t *n) {
  *n = 0;
  for (size_t i = 0; i < t->n; i++) {
    json_object *v = args;
    for (size_t d = 0; v && d < t->p[i].depth; d++)
      if (!json_object_is_type(v, json_type_object) ||
          !json_object_object_get_ex(v, t->p[i].path[d], &v))
        v = NULL;
    if (!v) continue;
    char num[32];
    const char *s = NULL;
    size_t len = 0;
    if (json_object_is_type(v, json_type_string)) {
      s = json_object_get_string(v);
      len = (size_t)json_object_get_string_len(v);
    } else if (json_object_is_type(v, json_type_int)) {
      int64_t x = json_object_get_int64(v);
      if (x > MAX_SAFE || x < -MAX_SAFE) continue;
      len = (size_t)snprintf(num, sizeof(num), "%" PRId64, x);
      s = num;
    } else if (json_object_is_type(v, json_type_boolean)) {
      s = json_object_get_boolean(v) ? "true" : "false";
      len = strlen(s);
    } else {
      continue; /* null, a number with a fraction, an object or array: none */
    }
    char *value = mcp__era_header_value(s, len);
    char *name = mcp__asprintf("Mcp-Param-%s", t->p[i].name);
    if (!value || !name) {
      mcp__free(value);
      mcp__free(name);
      for (size_t k = 0; k < *n; k++) {
        mcp__free(names[k]);
        mcp__free(values[k]);
      }
      *n = 0;
      return MCP_ENOMEM;
    }
    names[*n] = name;
    values[*n] = value;
    ++*n;
  }
  return MCP_OK;
}

mcp_status mcp__xhdr_table_add(mcp_xhdr_table *tab, const char *name, mcp_xhdr_tool *t) {
  if (tab->n == tab->cap) {
    size_t cap = tab->cap ? 2 * tab->cap : 8;
    char **nn = mcp__reallocarray(tab->names, cap, sizeof(*nn));
    if (nn) tab->names = nn;
    mcp_xhdr_tool **nt = nn ? mcp__reallocarray(tab->tools, cap, sizeof(*nt)) : NULL;
    if (nt) tab->tools = nt;
    if (!nn || !nt) {
      mcp__xhdr_free(t);
      return MCP_ENOMEM;
    }
    tab->cap = cap;
  }
  char *copy = mcp__strdup(name);
  if (!copy) {
    mcp__xhdr_free(t);
    return MCP_ENOMEM;
  }
  tab->names[tab->n] = copy;
  tab->tools[tab->n++] = t;
  return MCP_OK;
}

const mcp_xhdr_tool *mcp__xhdr_table_find(const mcp_xhdr_table *tab, const char *name) {
  for (size_t i = 0; tab && i < tab->n; i++)
    if (strcmp(tab->names[i], name) == 0) return tab->tools[i];
  return NULL;
}

void mcp__xhdr_table_free(mcp_xhdr_table *tab) {
  if (!tab) return;
  for (size_t i = 0; i < tab->n; i++) {
    mcp__free(tab->names[i]);
    mcp__xhdr_free(tab->tools[i]);
  }
  mcp__free(tab->names);
  mcp__free(tab->tools);
  mcp__free(tab);
}
