/* SPDX-License-Identifier: MIT */
/*
 * mcp_config_dialect.c: the shapes of other clients' config files: which
 * client an explicit file was written for (mcp__config_detect), the key of
 * its server map, and each entry rewritten into the shape mcpconn reads
 * (mcp__config_normalize: OpenCode, Zed, Cline, Codex).
 *
 * Pure: no threads, no globals, no I/O; fuzzed through fuzz/fuzz_config.c.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>

#include <json-c/json.h>

#include "mcp_config.h"
#include "mcp_config_int.h"

/* True when some entry of the object |map| has member |key|. */
static bool some_entry_has(json_object *map, const char *key) {
  json_object_object_foreach(map, name, v) {
    (void)name;
    if (json_object_is_type(v, json_type_object) && json_object_object_get_ex(v, key, NULL))
      return true;
  }
  return false;
}

mcp_config_dialect mcp__config_detect(json_object *root) {
  json_object *m = NULL;
  if (!json_object_is_type(root, json_type_object)) return MCP_CONFIG_NATIVE;
  if (json_object_object_get_ex(root, "mcpServers", &m) &&
      json_object_is_type(m, json_type_object)) {
    static const struct {
      const char *key;
      mcp_config_dialect d;
    } marks[] = {
        {"autoApprove", MCP_CONFIG_CLINE},     {"alwaysAllow", MCP_CONFIG_CLINE},
        {"serverUrl", MCP_CONFIG_WINDSURF},    {"disabledTools", MCP_CONFIG_WINDSURF},
        {"httpUrl", MCP_CONFIG_GEMINI},        {"includeTools", MCP_CONFIG_GEMINI},
        {"excludeTools", MCP_CONFIG_GEMINI},   {"trust", MCP_CONFIG_GEMINI},
        {"headersHelper", MCP_CONFIG_FOREIGN},
    };
    for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++)
      if (some_entry_has(m, marks[i].key)) return marks[i].d;
    return MCP_CONFIG_NATIVE;
  }
  if (json_object_object_get_ex(root, "servers", &m) && json_object_is_type(m, json_type_object))
    return MCP_CONFIG_VSCODE;
  if (json_object_object_get_ex(root, "context_servers", &m) &&
      json_object_is_type(m, json_type_object))
    return MCP_CONFIG_ZED;
  if (json_object_object_get_ex(root, "mcp", &m) && json_object_is_type(m, json_type_object) &&
      some_entry_has(m, "type"))
    return MCP_CONFIG_OPENCODE;
  return MCP_CONFIG_NATIVE;
}

static const char *const dialect_names[MCP_CONFIG_DIALECTS] = {
    "mcpconn",        "Claude Code", "VS Code", "Gemini CLI", "Cursor", "Windsurf",
    "Claude Desktop", "Cline",       "Zed",     "OpenCode",   "Codex"};

const char *mcp__config_dialect_name(mcp_config_dialect d) {
  return (unsigned)d < MCP_CONFIG_DIALECTS ? dialect_names[d] : "mcpconn";
}

const char *mcp__config_servers_key(mcp_config_dialect d) {
  return d == MCP_CONFIG_VSCODE     ? "servers"
         : d == MCP_CONFIG_ZED      ? "context_servers"
         : d == MCP_CONFIG_OPENCODE ? "mcp"
         : d == MCP_CONFIG_CODEX    ? "mcp_servers"
                                    : "mcpServers";
}

/* Copies |from|'s member |key| (when present) to |to| as |as|; false: OOM. */
static bool copy_member(json_object *to, json_object *from, const char *key, const char *as) {
  json_object *v = NULL;
  if (!json_object_object_get_ex(from, key, &v)) return true;
  return json_object_object_add(to, as, json_object_get(v)) == 0;
}

/*
 * A Codex [mcp_servers.NAME] table in mcpconn's shape: http_headers are
 * headers, bearer_token_env_var NAME is "Authorization: Bearer ${NAME}",
 * env_http_headers {H = NAME} are "H: ${NAME}", tool_timeout_sec is the
 * timeout (s to ms); every other member is copied as it is.
 */
static json_object *codex_normalize(json_object *e) {
  json_object *n = json_object_new_object(), *h = json_object_new_object(), *v = NULL;
  bool ok = n && h;
  json_object_object_foreach(e, k, val) {
    if (!ok) break;
    if (strcmp(k, "http_headers") == 0 && json_object_is_type(val, json_type_object)) {
      json_object_object_foreach(val, hk, hv) {
        if (ok) ok = json_object_object_add(h, hk, json_object_get(hv)) == 0;
      }
    } else if (strcmp(k, "tool_timeout_sec") == 0 && json_object_is_type(val, json_type_int)) {
      int64_t sec = json_object_get_int64(val);
      ok = json_object_object_add(
               n, "timeout",
               json_object_new_int64(sec < 0 || sec > INT64_MAX / 1000 ? -1 : sec * 1000)) == 0;
    } else if (strcmp(k, "http_headers") != 0 && strcmp(k, "bearer_token_env_var") != 0 &&
               strcmp(k, "env_http_headers") != 0) {
      ok = json_object_object_add(n, k, json_object_get(val)) == 0;
    }
  }
  if (ok && json_object_object_get_ex(e, "env_http_headers", &v) &&
      json_object_is_type(v, json_type_object)) {
    json_object_object_foreach(v, hk, hv) {
      const char *var = mcp__config_plain_string(hv);
      /* A missing name becomes "${/}": unresolvable, so never sent. */
      char *ref = mcp__asprintf("${%s}", var && *var ? var : "/");
      ok = ok && ref && json_object_object_add(h, hk, json_object_new_string(ref)) == 0;
      mcp__free(ref);
    }
  }
  if (ok && json_object_object_get_ex(e, "bearer_token_env_var", &v)) {
    const char *var = mcp__config_plain_string(v);
    char *ref = mcp__asprintf("Bearer ${%s}", var && *var ? var : "/");
    ok = ref && json_object_object_add(h, "Authorization", json_object_new_string(ref)) == 0;
    mcp__free(ref);
  }
  if (ok && json_object_object_length(h) > 0) {
    ok = json_object_object_add(n, "headers", h) == 0;
    if (ok) h = NULL;
  }
  json_object_put(h);
  if (!ok) {
    json_object_put(n);
    return NULL;
  }
  return n;
}

json_object *mcp__config_normalize(mcp_config_dialect d, json_object *e) {
  if (!json_object_is_type(e, json_type_object)) return json_object_get(e);
  json_object *cmd = NULL, *t = NULL;
  json_object_object_get_ex(e, "command", &cmd);
  json_object_object_get_ex(e, "type", &t);
  if (d == MCP_CONFIG_CLINE) {
    json_object *to = NULL;
    if (!json_object_object_get_ex(e, "timeout", &to) || !json_object_is_type(to, json_type_int))
      return json_object_get(e);
    int64_t sec = json_object_get_int64(to);
    json_object *n = json_object_new_object();
    if (!n) return NULL;
    json_object_object_foreach(e, k, v) {
      json_object *nv = strcmp(k, "timeout") == 0
                            ? json_object_new_int64(sec < 0 || sec > INT64_MAX / 1000 ? -1
                                                                                      : sec * 1000)
                            : json_object_get(v);
      if (!nv || json_object_object_add(n, k, nv)) {
        json_object_put(n);
        return NULL;
      }
    }
    return n;
  }
  if (d == MCP_CONFIG_CODEX) return codex_normalize(e);
  bool oc = d == MCP_CONFIG_OPENCODE && json_object_is_type(cmd, json_type_array);
  bool zed = d == MCP_CONFIG_ZED && json_object_is_type(cmd, json_type_object);
  bool octype = d == MCP_CONFIG_OPENCODE && t;
  if (!oc && !zed && !octype && !(d == MCP_CONFIG_OPENCODE)) return json_object_get(e);
  json_object *n = json_object_new_object();
  if (!n) return NULL;
  bool ok = true;
  json_object_object_foreach(e, k, v) {
    if (strcmp(k, "command") == 0 ||
        (d == MCP_CONFIG_OPENCODE && (strcmp(k, "type") == 0 || strcmp(k, "environment") == 0)))
      continue;
    ok = ok && json_object_object_add(n, k, json_object_get(v)) == 0;
  }
  if (oc) {
    /* ["prog", "arg", ...] */
    size_t len = json_object_array_length(cmd);
    json_object *args = json_object_new_array();
    ok = ok && args && json_object_object_add(n, "args", args) == 0;
    if (!ok) json_object_put(args);
    if (ok && len)
      ok = json_object_object_add(n, "command",
                                  json_object_get(json_object_array_get_idx(cmd, 0))) == 0;
    for (size_t i = 1; ok && i < len; i++)
      ok = json_object_array_add(args, json_object_get(json_object_array_get_idx(cmd, i))) == 0;
  } else if (zed) {
    /* {"path": "prog", "args": [...], "env": {...}} */
    ok = ok && copy_member(n, cmd, "path", "command") && copy_member(n, cmd, "args", "args") &&
         copy_member(n, cmd, "env", "env");
  } else if (cmd) {
    ok = ok && json_object_object_add(n, "command", json_object_get(cmd)) == 0;
  }
  if (d == MCP_CONFIG_OPENCODE) {
    const char *ts = mcp__config_plain_string(t);
    const char *mapped = !t                                ? NULL
                         : ts && strcmp(ts, "local") == 0  ? "stdio"
                         : ts && strcmp(ts, "remote") == 0 ? "http"
                                                           : NULL;
    if (mapped) ok = ok && json_object_object_add(n, "type", json_object_new_string(mapped)) == 0;
    else if (t) ok = ok && json_object_object_add(n, "type", json_object_get(t)) == 0;
    ok = ok && copy_member(n, e, "environment", "env");
  }
  if (!ok) {
    json_object_put(n);
    return NULL;
  }
  return n;
}

/* The names a host or --config-format gives a file's format, by dialect. */
static const char *const format_names[MCP_CONFIG_DIALECTS] = {
    "mcpconn",        "claude-code", "vscode", "gemini",   "cursor", "windsurf",
    "claude-desktop", "cline",       "zed",    "opencode", "codex"};

bool mcp__config_dialect_by_name(const char *name, mcp_config_dialect *out) {
  for (int i = 0; name && i < MCP_CONFIG_DIALECTS; i++)
    if (strcmp(name, format_names[i]) == 0) {
      *out = (mcp_config_dialect)i;
      return true;
    }
  return false;
}
