/* SPDX-License-Identifier: MIT */
/*
 * cli_items.c: the prompts and resources commands, as users of the MCP
 * Inspector CLI know them:
 *
 *   prompts [--json]                          every server's prompts
 *   prompts get SERVER/NAME [ARGS] [--json]   one prompt's messages
 *   resources [--json]                        every server's resources
 *   resources templates [--json]              every server's templates
 *   resources read SERVER URI [--json]        one resource's contents
 *
 * The lists are asked of each ready server when the command runs
 * (mcp_manager_request, following nextCursor), not taken from the
 * manager's copies, which are fetched after a server turns ready and so
 * may not be there yet; a server without the capability (-32601) simply
 * has none.  The library speaks each server's era, so both work alike.
 * On a terminal the tables fit its width, the header is bold; on a pipe
 * the same lines, never cut; --json prints the items (each with its
 * server) or the result as the server sent it.
 *
 * Threads: the main thread only, after setup().
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mcpconn-text.h"

/* JSON-RPC codes the commands tell apart. */
#define RPC_METHOD_NOT_FOUND (-32601)
#define RPC_INVALID_PARAMS (-32602)
#define RPC_RESOURCE_NOT_FOUND (-32002)
/* More pages than this in one list is a server looping. */
#define MAX_PAGES 1000

enum item_cmd { PROMPTS_LIST, PROMPTS_GET, RESOURCES_LIST, RESOURCES_TEMPLATES, RESOURCES_READ };

/* What items_parse() read; cmd_items() runs it. */
static struct {
  enum item_cmd cmd;
  bool json;
  const char *target; /* prompts get: [SERVER/]NAME; resources read: SERVER or NULL */
  const char *uri;    /* resources read */
  char *args_json;    /* prompts get: the arguments object, or NULL */
} g_items;

/* ---- the command line ------------------------------------------------- */

/* The arguments of `prompts get` (a JSON object of strings, or KEY=VALUE
 * words, merged left to right) as one JSON object; exits 2 on a bad one. */
static char *prompt_arguments(char **args, int nargs) {
  /* Static: a usage error exits with it held, still reachable. */
  static json_object *obj;
  obj = json_object_new_object();
  if (!obj) usage_error("out of memory");
  for (int i = 0; i < nargs; i++) {
    const char *a = args[i];
    char why[256];
    if (a[strspn(a, " \t\r\n")] == '{') {
      static json_object *o; /* static for the same reason */
      o = parse_json(a, strlen(a), true, why, sizeof(why));
      if (!o) usage_error("prompts get: ARGS_JSON is not valid JSON: %s", why);
      if (!json_object_is_type(o, json_type_object)) {
        json_object_put(o);
        usage_error("prompts get: ARGS_JSON must be a JSON object");
      }
      json_object_object_foreach(o, key, val) {
        if (!json_object_is_type(val, json_type_string)) {
          /* |o| stays held: |key| lives in it, and usage_error() exits. */
          usage_error("prompts get: argument '%s' must be a string (prompt arguments are "
                      "strings)",
                      key);
        }
        json_object_object_add(obj, key, json_object_get(val));
      }
      json_object_put(o);
      o = NULL;
      continue;
    }
    const char *eq = strchr(a, '=');
    if (!eq || eq == a)
      usage_error("prompts get: argument '%s': expected KEY=VALUE or ARGS_JSON", a);
    if (eq[-1] == ':')
      usage_error("prompts get: argument '%s': prompt arguments are strings (KEY=VALUE), "
                  "not KEY:=JSON",
                  a);
    char *key = xstrndup(a, (size_t)(eq - a));
    json_object_object_add(obj, key, json_object_new_string(eq + 1));
    free(key);
  }
  char *text = xstrdup(json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN));
  json_object_put(obj);
  obj = NULL;
  return text;
}

bool items_parse(const char *cmd, char **args, int nargs) {
  bool prompts = strcmp(cmd, "prompts") == 0;
  if (!prompts && strcmp(cmd, "resources") != 0) return false;
  memset(&g_items, 0, sizeof(g_items));
  /* --json anywhere; the rest are words. */
  char **words = xmalloc(((size_t)nargs + 1) * sizeof(*words));
  int n = 0;
  for (int i = 0; i < nargs; i++) {
    if (strcmp(args[i], "--json") == 0) g_items.json = true;
    else words[n++] = args[i];
  }
  const char *sub = n ? words[0] : NULL;
  if (prompts) {
    if (!sub) {
      g_items.cmd = PROMPTS_LIST;
    } else if (strcmp(sub, "get") == 0) {
      if (n < 2 || !*words[1])
        usage_error("usage: prompts get SERVER/NAME [ARGS_JSON | KEY=VALUE ...]");
      g_items.cmd = PROMPTS_GET;
      g_items.target = words[1];
      if (n > 2) g_items.args_json = prompt_arguments(words + 2, n - 2);
    } else {
      usage_error("prompts: unexpected argument '%s' (prompts [--json], or prompts get NAME)", sub);
    }
  } else {
    if (!sub) {
      g_items.cmd = RESOURCES_LIST;
    } else if (strcmp(sub, "templates") == 0) {
      if (n > 1) usage_error("resources templates: unexpected argument '%s'", words[1]);
      g_items.cmd = RESOURCES_TEMPLATES;
    } else if (strcmp(sub, "read") == 0) {
      if (n < 2 || n > 3 || !*words[n - 1]) usage_error("usage: resources read SERVER URI");
      g_items.cmd = RESOURCES_READ;
      g_items.target = n == 3 ? words[1] : NULL;
      g_items.uri = words[n - 1];
    } else {
      usage_error("resources: unexpected argument '%s' (resources [--json], resources "
                  "templates, or resources read SERVER URI)",
                  sub);
    }
  }
  if (!prompts && g_items.cmd == RESOURCES_LIST && n > 1)
    usage_error("resources: unexpected argument '%s'", words[1]);
  free(words);
  return true;
}

/* ---- requests --------------------------------------------------------- */

/* One request to |server|; *result a new string on MCP_OK. */
static mcp_status ask(const char *server, const char *method, const char *params, char **result,
                      mcp_error *err) {
  mcp_call_options *co = new_call_options();
  if (!co) return MCP_ENOMEM;
  atomic_store(&g_cancellable, true);
  mcp_status st = mcp_manager_request(g_mgr, server, method, params, co, result, err);
  atomic_store(&g_cancellable, false);
  mcp_call_options_free(co);
  return st;
}

/*
 * Every page of list |method| of |server|: the items of member |key| are
 * added to |out|, each with "server".  MCP_OK, a request's failure, or
 * MCP_EPROTO (*why says why) for a result that is not a list.
 */
static mcp_status list_server(const char *server, const char *method, const char *key,
                              json_object *out, mcp_error *err, char *why, size_t why_size) {
  char *cursor = NULL;
  mcp_status st = MCP_OK;
  for (size_t page = 0;; page++) {
    if (page >= MAX_PAGES) {
      snprintf(why, why_size, "more than %d pages", MAX_PAGES);
      st = MCP_EPROTO;
      break;
    }
    char *params = NULL;
    if (cursor) {
      json_object *p = json_object_new_object();
      json_object_object_add(p, "cursor", json_object_new_string(cursor));
      params = xstrdup(json_object_to_json_string_ext(p, JSON_C_TO_STRING_PLAIN));
      json_object_put(p);
    }
    char *result = NULL;
    st = ask(server, method, params, &result, err);
    free(params);
    if (st != MCP_OK) {
      mcp_free(result);
      break;
    }
    json_object *obj = parse_json(result, strlen(result), false, why, why_size);
    mcp_free(result);
    json_object *items = NULL, *next = NULL;
    if (!json_object_object_get_ex(obj, key, &items) ||
        !json_object_is_type(items, json_type_array)) {
      snprintf(why, why_size, "the result has no \"%s\" array", key);
      json_object_put(obj);
      st = MCP_EPROTO;
      break;
    }
    for (size_t i = 0; i < json_object_array_length(items); i++) {
      json_object *item = json_object_array_get_idx(items, i);
      if (!json_object_is_type(item, json_type_object)) continue;
      json_object_object_add(item, "server", json_object_new_string(server));
      json_object_array_add(out, json_object_get(item));
    }
    char *prev = cursor;
    cursor = NULL;
    if (json_object_object_get_ex(obj, "nextCursor", &next) &&
        json_object_is_type(next, json_type_string)) {
      if (prev && strcmp(prev, json_object_get_string(next)) == 0) {
        snprintf(why, why_size, "the server repeated the cursor it was given");
        st = MCP_EPROTO;
      } else {
        cursor = xstrdup(json_object_get_string(next));
      }
    }
    free(prev);
    json_object_put(obj);
    if (st != MCP_OK || !cursor) break;
  }
  free(cursor);
  return st;
}

/*
 * |method| of every selected server, once they have settled: the items in
 * one array (a new object).  Servers not ready, and lists that failed,
 * are named on stderr and make *rc EXIT_CONNECTION (or what the failure
 * says); a server without the method has no items.
 */
static json_object *list_all(const char *method, const char *key, int *rc) {
  *rc = EXIT_OK;
  wait_servers(settle_deadline());
  json_object *out = json_object_new_array();
  if (!out) {
    complain("out of memory");
    *rc = EXIT_CONNECTION;
    return NULL;
  }
  struct status st;
  if (!status_load(&st)) {
    *rc = EXIT_CONNECTION;
    return out;
  }
  for (size_t i = 0; i < st.n; i++) {
    const struct srv *s = &st.v[i];
    if (!s->selected || !enabled(s)) continue;
    if (!state_is(s, "ready")) {
      report_server("", s);
      *rc = EXIT_CONNECTION;
      continue;
    }
    mcp_error err = MCP_ERROR_INIT;
    char why[256] = "";
    mcp_status ls = list_server(s->name, method, key, out, &err, why, sizeof(why));
    if (ls == MCP_ERPC && err.rpc_code == RPC_METHOD_NOT_FOUND) {
      /* No such capability: nothing to list. */
    } else if (ls == MCP_EPROTO && why[0] && !err.message) {
      complain("%s: %s: %s", s->name, method, why);
      *rc = EXIT_CONNECTION;
    } else if (ls != MCP_OK) {
      report("", s->name, method, ls, &err);
      if (*rc == EXIT_OK || interrupted(ls)) *rc = exit_code(ls);
    }
    mcp_error_clear(&err);
    if (interrupted(ls)) break;
  }
  status_free(&st);
  return out;
}

/* ---- tables ----------------------------------------------------------- */

#define MAX_COLS 5

/* See cli.h. */
void print_table(size_t ncols, const char *const *head, const char ***rows, size_t nrows) {
  if (!nrows) return;
  size_t w[MAX_COLS];
  for (size_t c = 0; c < ncols; c++) {
    w[c] = strlen(head[c]);
    for (size_t r = 0; r < nrows; r++) {
      size_t k = safe_width(rows[r][c] ? rows[r][c] : "-");
      if (k > w[c]) w[c] = k;
    }
  }
  color_on(stdout, COLOR_BOLD);
  for (size_t c = 0; c < ncols; c++) {
    if (c + 1 < ncols) printf("%-*s  ", (int)w[c], head[c]);
    else fputs(head[c], stdout);
  }
  color_off(stdout);
  putchar('\n');
  size_t cols = term_columns(), room = SIZE_MAX;
  if (cols) {
    size_t used = 0;
    for (size_t c = 0; c + 1 < ncols; c++) used += w[c] + 2;
    room = cols > used ? cols - used : 0;
  }
  for (size_t r = 0; r < nrows; r++) {
    for (size_t c = 0; c + 1 < ncols; c++) {
      print_cell(rows[r][c] ? rows[r][c] : "-", w[c]);
      fputs("  ", stdout);
    }
    const char *last = rows[r][ncols - 1] ? rows[r][ncols - 1] : "";
    if (room) print_clipped(last, strcspn(last, "\r\n"), room);
    putchar('\n');
  }
  fflush(stdout);
}

/* "name, style?": a prompt's arguments, optional ones marked; a new string. */
static char *argument_names(json_object *prompt) {
  struct sbuf b = {0};
  sbuf_add(&b, "%s", "");
  json_object *args;
  if (json_object_object_get_ex(prompt, "arguments", &args) &&
      json_object_is_type(args, json_type_array)) {
    for (size_t i = 0; i < json_object_array_length(args); i++) {
      json_object *a = json_object_array_get_idx(args, i), *req = NULL;
      const char *name = jstring(a, "name");
      if (!name) continue;
      bool required = json_object_object_get_ex(a, "required", &req) &&
                      json_object_get_boolean(req);
      sbuf_add(&b, "%s%s%s", b.len ? ", " : "", name, required ? "" : "?");
    }
  }
  if (!b.len) sbuf_add(&b, "-");
  return b.s;
}

static int list_command(void) {
  const char *method, *key;
  switch (g_items.cmd) {
  case PROMPTS_LIST: method = "prompts/list", key = "prompts"; break;
  case RESOURCES_LIST: method = "resources/list", key = "resources"; break;
  default: method = "resources/templates/list", key = "resourceTemplates"; break;
  }
  int rc;
  json_object *items = list_all(method, key, &rc);
  if (!items) return rc;
  size_t n = json_object_array_length(items);
  if (g_items.json) {
    if (g_items.cmd == PROMPTS_LIST) {
      /* Namespaced like tools: name is SERVER/NAME, prompt the server's. */
      for (size_t i = 0; i < n; i++) {
        json_object *p = json_object_array_get_idx(items, i);
        const char *server = jstring(p, "server"), *name = jstring(p, "name");
        if (!name) continue;
        struct sbuf full = {0};
        sbuf_add(&full, "%s/%s", server, name);
        json_object_object_add(p, "prompt", json_object_new_string(name));
        json_object_object_add(p, "name", json_object_new_string(full.s));
        free(full.s);
      }
    }
    print_json_object(items);
    json_object_put(items);
    return rc;
  }
  const char ***rows = xmalloc((n ? n : 1) * sizeof(*rows));
  char **owned = xmalloc((n ? n : 1) * sizeof(*owned));
  for (size_t i = 0; i < n; i++) {
    json_object *it = json_object_array_get_idx(items, i);
    rows[i] = xmalloc(MAX_COLS * sizeof(**rows));
    owned[i] = NULL;
    rows[i][0] = jstring(it, "server");
    if (g_items.cmd == PROMPTS_LIST) {
      rows[i][1] = jstring(it, "name");
      rows[i][2] = owned[i] = argument_names(it);
      rows[i][3] = jstring(it, "description");
    } else if (g_items.cmd == RESOURCES_LIST) {
      rows[i][1] = jstring(it, "uri");
      rows[i][2] = jstring(it, "name");
      rows[i][3] = jstring(it, "mimeType");
      rows[i][4] = jstring(it, "description");
    } else {
      rows[i][1] = jstring(it, "uriTemplate");
      rows[i][2] = jstring(it, "name");
      rows[i][3] = jstring(it, "mimeType");
      rows[i][4] = jstring(it, "description");
    }
  }
  static const char *const prompt_head[] = {"SERVER", "PROMPT", "ARGUMENTS", "DESCRIPTION"};
  static const char *const res_head[] = {"SERVER", "URI", "NAME", "TYPE", "DESCRIPTION"};
  static const char *const tpl_head[] = {"SERVER", "URI TEMPLATE", "NAME", "TYPE", "DESCRIPTION"};
  if (g_items.cmd == PROMPTS_LIST) print_table(4, prompt_head, rows, n);
  else print_table(5, g_items.cmd == RESOURCES_LIST ? res_head : tpl_head, rows, n);
  for (size_t i = 0; i < n; i++) {
    free(rows[i]);
    free(owned[i]);
  }
  free(rows);
  free(owned);
  json_object_put(items);
  return rc;
}

/* ---- prompts get, resources read -------------------------------------- */

/*
 * The server |target| names for `prompts get` (SERVER/NAME: *rest is NAME)
 * or `resources read` (SERVER, or NULL with one server): a new string once
 * it is ready (waiting for that server only), else NULL with the reason
 * printed and *rc set.
 */
static char *pick_server(const char *target, bool split, const char **rest, int *rc) {
  struct status st;
  if (!status_load(&st)) {
    *rc = EXIT_CONNECTION;
    return NULL;
  }
  char *name = NULL;
  *rest = target;
  const char *slash = split && target ? strchr(target, '/') : NULL;
  if (target && (!split || slash)) {
    char *prefix = split ? xstrndup(target, (size_t)(slash - target)) : xstrdup(target);
    const struct srv *s = status_find(&st, prefix);
    if (s && s->selected) {
      name = prefix;
      if (split) *rest = slash + 1;
    } else {
      free(prefix);
    }
  }
  if (!name && split && slash && !slash[1]) {
    complain("prompts get: empty prompt name in '%s'", target);
    *rc = EXIT_USAGE;
    status_free(&st);
    return NULL;
  }
  if (!name && (split || !target)) {
    /* No server named: the one in use, if there is exactly one. */
    size_t n = 0;
    const struct srv *only = NULL;
    for (size_t i = 0; i < st.n; i++)
      if (st.v[i].selected && enabled(&st.v[i])) {
        only = &st.v[i];
        n++;
      }
    if (n == 1) name = xstrdup(only->name);
    else
      complain("%s: name the server (%s), as %zu are in use",
               split ? "prompts get" : "resources read",
               split ? "SERVER/NAME" : "resources read SERVER URI", n);
  } else if (!name) {
    complain("resources read: no server named %s", target);
  }
  status_free(&st);
  if (!name) {
    *rc = EXIT_USAGE;
    return NULL;
  }
  if (!server_ready(name, rc)) {
    free(name);
    return NULL;
  }
  return name;
}

/* Prints |len| bytes of server text as lines, made safe; ends with a
 * newline. */
static void print_block(const char *s, size_t len) {
  safe_write(stdout, s, len, SAFE_BLOCK);
  if (!len || s[len - 1] != '\n') putchar('\n');
}

/* One content item of a prompt message, as text. */
static void print_content(json_object *c) {
  const char *type = jstring(c, "type");
  json_object *res = NULL;
  if (type && strcmp(type, "text") == 0 && jstring(c, "text")) {
    const char *t = jstring(c, "text");
    print_block(t, strlen(t));
  } else if (type && strcmp(type, "resource") == 0 &&
             json_object_object_get_ex(c, "resource", &res) && jstring(res, "text")) {
    const char *t = jstring(res, "text");
    print_block(t, strlen(t));
  } else {
    const char *what = jstring(c, "uri") ? jstring(c, "uri") : jstring(c, "mimeType");
    fputs("[", stdout);
    print_clean(type ? type : "content", SIZE_MAX);
    if (what) {
      putchar(' ');
      print_clean(what, SIZE_MAX);
    }
    fputs("; --json shows it]\n", stdout);
  }
}

/* "greet, summarize": the prompts of |server|; a new string (empty when
 * they cannot be listed). */
static char *prompt_names(const char *server) {
  json_object *arr = json_object_new_array();
  mcp_error err = MCP_ERROR_INIT;
  char why[64];
  struct sbuf b = {0};
  sbuf_add(&b, "%s", "");
  if (arr && list_server(server, "prompts/list", "prompts", arr, &err, why, sizeof(why)) == MCP_OK)
    for (size_t i = 0; i < json_object_array_length(arr); i++) {
      const char *n = jstring(json_object_array_get_idx(arr, i), "name");
      if (n) sbuf_add(&b, "%s%s", b.len ? ", " : "", n);
    }
  mcp_error_clear(&err);
  json_object_put(arr);
  return b.s;
}

static int prompts_get(void) {
  int rc = EXIT_OK;
  const char *prompt;
  char *server = pick_server(g_items.target, true, &prompt, &rc);
  if (!server) return rc;
  json_object *params = json_object_new_object();
  json_object_object_add(params, "name", json_object_new_string(prompt));
  if (g_items.args_json)
    json_object_object_add(params, "arguments", json_tokener_parse(g_items.args_json));
  char *text = xstrdup(json_object_to_json_string_ext(params, JSON_C_TO_STRING_PLAIN));
  json_object_put(params);
  mcp_error err = MCP_ERROR_INIT;
  char *result = NULL;
  mcp_status st = ask(server, "prompts/get", text, &result, &err);
  free(text);
  if (st == MCP_OK && g_items.json) {
    print_json(result);
  } else if (st == MCP_OK) {
    char why[128];
    json_object *obj = parse_json(result, strlen(result), false, why, sizeof(why)), *msgs = NULL;
    if (!json_object_object_get_ex(obj, "messages", &msgs) ||
        !json_object_is_type(msgs, json_type_array)) {
      complain("%s: prompts/get %s: the result has no \"messages\" array", server, prompt);
      rc = EXIT_CONNECTION;
    }
    for (size_t i = 0; msgs && i < json_object_array_length(msgs); i++) {
      json_object *m = json_object_array_get_idx(msgs, i), *c = NULL;
      const char *role = jstring(m, "role");
      color_on(stdout, COLOR_BOLD);
      print_clean(role ? role : "?", SIZE_MAX);
      putchar(':');
      color_off(stdout);
      putchar(' ');
      if (json_object_object_get_ex(m, "content", &c) && json_object_is_type(c, json_type_array))
        for (size_t k = 0; k < json_object_array_length(c); k++)
          print_content(json_object_array_get_idx(c, k));
      else print_content(c);
    }
    json_object_put(obj);
  } else if (st == MCP_ERPC && err.rpc_code == RPC_INVALID_PARAMS) {
    /* An unknown prompt, or arguments it does not take. */
    char *names = prompt_names(server);
    bool known = false;
    for (const char *p = names; !known && (p = strstr(p, prompt)); p++)
      known = (p == names || p[-1] == ' ') && (p[strlen(prompt)] == ',' || !p[strlen(prompt)]);
    if (!known)
      complain("unknown prompt '%s' on server %s (it has: %s)", prompt, server,
               *names ? names : "no prompts");
    else report("", server, "prompts/get", st, &err);
    free(names);
    rc = EXIT_USAGE;
  } else {
    report("", server, "prompts/get", st, &err);
    rc = exit_code(st);
  }
  mcp_free(result);
  mcp_error_clear(&err);
  free(server);
  return rc;
}

static int resources_read(void) {
  int rc = EXIT_OK;
  const char *unused;
  char *server = pick_server(g_items.target, false, &unused, &rc);
  if (!server) return rc;
  json_object *params = json_object_new_object();
  json_object_object_add(params, "uri", json_object_new_string(g_items.uri));
  char *text = xstrdup(json_object_to_json_string_ext(params, JSON_C_TO_STRING_PLAIN));
  json_object_put(params);
  mcp_error err = MCP_ERROR_INIT;
  char *result = NULL;
  mcp_status st = ask(server, "resources/read", text, &result, &err);
  free(text);
  if (st == MCP_OK && g_items.json) {
    print_json(result);
  } else if (st == MCP_OK) {
    char why[128];
    json_object *obj = parse_json(result, strlen(result), false, why, sizeof(why)), *items = NULL;
    if (!json_object_object_get_ex(obj, "contents", &items) ||
        !json_object_is_type(items, json_type_array)) {
      complain("%s: resources/read: the result has no \"contents\" array", server);
      rc = EXIT_CONNECTION;
    }
    for (size_t i = 0; items && i < json_object_array_length(items); i++) {
      json_object *c = json_object_array_get_idx(items, i), *t = NULL;
      if (json_object_object_get_ex(c, "text", &t) && json_object_is_type(t, json_type_string)) {
        print_block(json_object_get_string(t), (size_t)json_object_get_string_len(t));
      } else {
        const char *mime = jstring(c, "mimeType"), *blob = jstring(c, "blob");
        fputs("[binary", stdout);
        if (mime) {
          putchar(' ');
          print_clean(mime, SIZE_MAX);
        }
        printf(", %zu bytes of base64; --json shows it]\n", blob ? strlen(blob) : (size_t)0);
      }
    }
    json_object_put(obj);
  } else if (st == MCP_ERPC &&
             (err.rpc_code == RPC_RESOURCE_NOT_FOUND || err.rpc_code == RPC_INVALID_PARAMS)) {
    /* Not found: -32002 up to 2025-11-25, -32602 from 2026-07-28. */
    complain("unknown resource '%s' on server %s (%s; JSON-RPC error %d)", g_items.uri, server,
             err.message ? err.message : "not found", err.rpc_code);
    rc = EXIT_USAGE;
  } else {
    report("", server, "resources/read", st, &err);
    rc = exit_code(st);
  }
  mcp_free(result);
  mcp_error_clear(&err);
  free(server);
  return rc;
}

int cmd_items(void) {
  int rc;
  switch (g_items.cmd) {
  case PROMPTS_GET: rc = prompts_get(); break;
  case RESOURCES_READ: rc = resources_read(); break;
  default: rc = list_command(); break;
  }
  free(g_items.args_json);
  g_items.args_json = NULL;
  return rc;
}
