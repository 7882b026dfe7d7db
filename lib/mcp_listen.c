/* SPDX-License-Identifier: MIT */
/*
 * mcp_listen.c: the pure parts of subscriptions/listen (mcp_listen.h).
 * Owns the shapes of the listen request's filter, the acknowledgement and
 * the subscription id in a notification's _meta.  Must not know about
 * transports, the pending table or threads: the client (mcp_client.c)
 * decides when a listen is opened, re-opened and closed.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp_jsonrpc.h"
#include "mcp_listen.h"

static const struct {
  unsigned bit;
  const char *cap;    /* the server capability */
  const char *filter; /* the SubscriptionFilter member */
  const char *name;   /* for logs */
} kinds[] = {
    {MCP_LISTEN_TOOLS, "tools", "toolsListChanged", "tools"},
    {MCP_LISTEN_PROMPTS, "prompts", "promptsListChanged", "prompts"},
    {MCP_LISTEN_RESOURCES, "resources", "resourcesListChanged", "resources"},
};
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

static bool is_true(json_object *o, const char *key) {
  json_object *v = NULL;
  return o && json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, key, &v) &&
         json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v);
}

unsigned mcp__listen_advertised(const char *result, size_t len) {
  if (!result || !len) return 0;
  json_object *r = mcp__jsonrpc_parse(result, len, NULL), *caps = NULL;
  unsigned out = 0;
  if (r && json_object_is_type(r, json_type_object) &&
      json_object_object_get_ex(r, "capabilities", &caps)) {
    for (size_t i = 0; i < NKINDS; i++) {
      json_object *cap = NULL;
      if (json_object_is_type(caps, json_type_object) &&
          json_object_object_get_ex(caps, kinds[i].cap, &cap) && is_true(cap, "listChanged"))
        out |= kinds[i].bit;
    }
  }
  json_object_put(r);
  return out;
}

char *mcp__listen_params(unsigned kinds_wanted) {
  return mcp__listen_params_subs(kinds_wanted, NULL, 0);
}

bool mcp__listen_can_subscribe(const char *result, size_t len) {
  json_object *r = result ? mcp__jsonrpc_parse(result, len, NULL) : NULL;
  json_object *caps = NULL, *res = NULL;
  bool yes = r && json_object_is_type(r, json_type_object) &&
             json_object_object_get_ex(r, "capabilities", &caps) &&
             json_object_is_type(caps, json_type_object) &&
             json_object_object_get_ex(caps, "resources", &res) && is_true(res, "subscribe");
  json_object_put(r);
  return yes;
}

/* |n| strings as a JSON array added to |f| under |key|; false when out of
 * memory (the array is put). */
static bool add_strings(json_object *f, const char *key, const char *const *v, size_t n) {
  json_object *a = json_object_new_array();
  bool ok = a != NULL;
  for (size_t i = 0; ok && i < n; i++) {
    json_object *u = json_object_new_string(v[i]);
    if (!u || json_object_array_add(a, u)) {
      json_object_put(u);
      ok = false;
    }
  }
  if (!ok) {
    json_object_put(a);
    return false;
  }
  return !mcp__json_add(f, key, a); /* takes |a|, also when it fails */
}

char *mcp__listen_params_subs(unsigned kinds_wanted, const char *const *uris, size_t nuris) {
  return mcp__listen_params_tasks(kinds_wanted, uris, nuris, NULL, 0);
}

char *mcp__listen_params_tasks(unsigned kinds_wanted, const char *const *uris, size_t nuris,
                               const char *const *task_ids, size_t ntasks) {
  if (nuris || ntasks) {
    /* URIs and ids need escaping: json-c prints them. */
    json_object *p = json_object_new_object(), *f = json_object_new_object();
    bool ok = p && f;
    for (size_t i = 0; ok && i < NKINDS; i++)
      if (kinds_wanted & kinds[i].bit)
        ok = !mcp__json_add(f, kinds[i].filter, json_object_new_boolean(1));
    if (ok && nuris) ok = add_strings(f, "resourceSubscriptions", uris, nuris);
    if (ok && ntasks) ok = add_strings(f, "taskIds", task_ids, ntasks);
    if (ok) ok = !mcp__json_add(p, "notifications", f);
    else json_object_put(f);
    char *out = ok ? mcp__json_dup_string(p, NULL) : NULL;
    json_object_put(p);
    return out;
  }
  char buf[160];
  size_t n = (size_t)snprintf(buf, sizeof(buf), "{\"notifications\":{");
  bool first = true;
  for (size_t i = 0; i < NKINDS; i++) {
    if (!(kinds_wanted & kinds[i].bit)) continue;
    n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s\"%s\":true", first ? "" : ",",
                          kinds[i].filter);
    first = false;
  }
  snprintf(buf + n, sizeof(buf) - n, "}}");
  return mcp__strdup(buf);
}

int mcp__listen_sub_id(json_object *params, int64_t *id) {
  json_object *meta = NULL, *v = NULL;
  if (!params || !json_object_is_type(params, json_type_object) ||
      !json_object_object_get_ex(params, "_meta", &meta) ||
      !json_object_is_type(meta, json_type_object) ||
      !json_object_object_get_ex(meta, MCP_LISTEN_SUB_KEY, &v) || !v)
    return 0;
  if (mcp__jsonrpc_id_int(v, id)) return 1;
  if (json_object_is_type(v, json_type_string)) {
    const char *s = json_object_get_string(v);
    char *end = NULL;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if ((*s == '-' || (*s >= '0' && *s <= '9')) && end && !*end && errno == 0) {
      *id = x;
      return 1;
    }
  }
  return -1;
}

unsigned mcp__listen_honoured(json_object *params) {
  json_object *f = NULL;
  if (!params || !json_object_is_type(params, json_type_object) ||
      !json_object_object_get_ex(params, "notifications", &f))
    return 0;
  unsigned out = 0;
  for (size_t i = 0; i < NKINDS; i++)
    if (is_true(f, kinds[i].filter)) out |= kinds[i].bit;
  return out;
}

const char *mcp__listen_kind_names(unsigned k, char *buf, size_t n) {
  if (!n) return buf;
  size_t at = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < NKINDS; i++) {
    if (!(k & kinds[i].bit)) continue;
    int w = snprintf(buf + at, n - at, "%s%s", at ? ", " : "", kinds[i].name);
    if (w < 0 || (size_t)w >= n - at) break;
    at += (size_t)w;
  }
  if (!at) snprintf(buf, n, "none");
  return buf;
}
