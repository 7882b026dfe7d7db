/* SPDX-License-Identifier: MIT */
/*
 * cli_skills.c: the skills command (the io.modelcontextprotocol/skills
 * extension, SEP-2640), beside prompts and resources (cli_items.c):
 *
 *   skills [--json]                      every server's skills
 *   skills SERVER [--json]               one server's skills
 *   skills SERVER/NAME [--json]          load a skill: its SKILL.md
 *   skills SERVER/NAME FILE [--json]     one supporting file of it
 *
 * NAME is the skill's name or its SKILL.md URI (names are labels: two
 * skills of one server may share one, and then the URI tells them
 * apart); with one server in use, SERVER/ may be left out.  The run
 * declares the extension (only for this command), lists each ready
 * server's skills with mcp_manager_list_skills() (a server that does not
 * declare the extension has none), and loads with mcp_manager_load_skill(),
 * which hands out the SKILL.md only once its size, digest and frontmatter
 * match the listed entry.  FILE (a path relative to the skill's root, as
 * the SKILL.md refers to it, or the file's URI) is read only after the
 * skill has loaded, and only when the entry lists it
 * (mcp_manager_read_skill_file() checks its size and digest).
 *
 * Output: on a terminal the table fits its width and file text is made
 * safe (safe_write); on a pipe the lines are never cut and the file's
 * bytes go out as they are; --json prints the entries (each with its
 * server) or {"server","uri","name","file","text"}.  Errors name the
 * server; an unknown server or skill exits 2, a server that is down or a
 * skill that fails its checks 3.
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
#include <unistd.h>

#include "cli.h"
#include "mcpconn-text.h"

/* What skills_parse() read; cmd_skills() runs it. */
static struct {
  bool active; /* the command is `skills` */
  bool json;
  const char *target; /* SERVER, SERVER/NAME, NAME, or NULL: every server */
  const char *file;   /* FILE, or NULL */
} g_sk;

bool skills_parse(const char *cmd, char **args, int nargs) {
  if (strcmp(cmd, "skills") != 0) return false;
  memset(&g_sk, 0, sizeof(g_sk));
  g_sk.active = true;
  int n = 0;
  for (int i = 0; i < nargs; i++) {
    if (strcmp(args[i], "--json") == 0) {
      g_sk.json = true;
    } else if (args[i][0] == '-' && args[i][1]) {
      usage_error("skills: unknown option '%s'", args[i]);
    } else if (!*args[i]) {
      usage_error("skills: empty argument");
    } else if (n == 0) {
      g_sk.target = args[i];
      n++;
    } else if (n == 1) {
      g_sk.file = args[i];
      n++;
    } else {
      usage_error("skills: unexpected argument '%s' (skills [SERVER | SERVER/NAME [FILE]] "
                  "[--json])",
                  args[i]);
    }
  }
  return true;
}

bool skills_command(void) { return g_sk.active; }

/* ---- listing ---------------------------------------------------------- */

/* mcp_manager_list_skills() of |server|, interruptible. */
static mcp_status list_of(const char *server, mcp_skill_list **out, mcp_error *err) {
  mcp_call_options *co = new_call_options();
  if (!co) return MCP_ENOMEM;
  atomic_store(&g_cancellable, true);
  mcp_status st = mcp_manager_list_skills(g_mgr, server, co, out, err);
  atomic_store(&g_cancellable, false);
  mcp_call_options_free(co);
  return st;
}

/*
 * The skills of |s| (ready) in *out; false with the reason printed and *rc
 * set.  A server without the extension has none: *out NULL, true, unless
 * |must| (it was named), which is an error.
 */
static bool server_skills(const char *name, bool must, mcp_skill_list **out, int *rc) {
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = list_of(name, out, &err);
  bool ok = st == MCP_OK;
  if (st == MCP_ENOTFOUND && !must) {
    ok = true; /* does not declare the extension: no skills */
  } else if (st == MCP_ENOTFOUND) {
    complain("%s: serves no skills (it does not declare the %s extension)", name,
             MCP_SKILLS_EXTENSION);
    *rc = EXIT_USAGE;
  } else if (st != MCP_OK) {
    report("", name, "skills/list", st, &err);
    *rc = exit_code(st);
  }
  mcp_error_clear(&err);
  return ok;
}

static void print_list(mcp_skill_list **lists, size_t nl) {
  size_t n = 0;
  for (size_t k = 0; k < nl; k++) n += mcp_skill_list_count(lists[k]);
  if (g_sk.json) {
    json_object *arr = json_object_new_array();
    for (size_t k = 0; arr && k < nl; k++)
      for (size_t i = 0; i < mcp_skill_list_count(lists[k]); i++) {
        const char *j = mcp_skill_list_json(lists[k], i);
        json_object *e = json_tokener_parse(j);
        if (!e) continue;
        json_object_object_add(e, "server",
                               json_object_new_string(mcp_skill_list_server(lists[k], i)));
        json_object_array_add(arr, e);
      }
    if (arr) print_json_object(arr);
    json_object_put(arr);
    return;
  }
  const char ***rows = xmalloc((n ? n : 1) * sizeof(*rows));
  size_t r = 0;
  for (size_t k = 0; k < nl; k++)
    for (size_t i = 0; i < mcp_skill_list_count(lists[k]); i++, r++) {
      rows[r] = xmalloc(4 * sizeof(**rows));
      rows[r][0] = mcp_skill_list_server(lists[k], i);
      rows[r][1] = mcp_skill_list_name(lists[k], i);
      rows[r][2] = mcp_skill_list_uri(lists[k], i);
      rows[r][3] = mcp_skill_list_description(lists[k], i);
    }
  static const char *const head[] = {"SERVER", "SKILL", "URI", "DESCRIPTION"};
  print_table(4, head, rows, n);
  for (size_t i = 0; i < n; i++) free(rows[i]);
  free(rows);
}

/* `skills` and `skills SERVER`. */
static int skills_list(const char *only) {
  int rc = EXIT_OK;
  if (only && !server_ready(only, &rc)) return rc;
  if (!only) wait_servers(settle_deadline());
  struct status st;
  if (!status_load(&st)) return EXIT_CONNECTION;
  mcp_skill_list **lists = xmalloc((st.n ? st.n : 1) * sizeof(*lists));
  size_t nl = 0;
  for (size_t i = 0; i < st.n; i++) {
    const struct srv *s = &st.v[i];
    if (only ? strcmp(s->name, only) != 0 : !s->selected || !enabled(s)) continue;
    if (!state_is(s, "ready")) {
      report_server("", s);
      rc = EXIT_CONNECTION;
      continue;
    }
    mcp_skill_list *l = NULL;
    if (!server_skills(s->name, only != NULL, &l, &rc)) {
      if (atomic_load(&g_interrupted)) break;
      continue;
    }
    if (l) lists[nl++] = l;
  }
  status_free(&st);
  print_list(lists, nl);
  for (size_t k = 0; k < nl; k++) mcp_skill_list_free(lists[k]);
  free(lists);
  return rc;
}

/* ---- loading ---------------------------------------------------------- */

/*
 * Splits |target| into a server (a new string) and *key: "SERVER/NAME"
 * when SERVER is a server in use, else NAME (or a URI) on the one server
 * in use.  A bare server name sets *key NULL (list it).  NULL with the
 * reason printed when no server is meant.
 */
static char *split_target(const char *target, const char **key) {
  struct status st;
  if (!status_load(&st)) return NULL;
  char *name = NULL;
  const struct srv *s = status_find(&st, target);
  *key = NULL;
  if (s && s->selected) {
    name = xstrdup(target); /* a server: list it */
  } else {
    const char *slash = strchr(target, '/');
    char *prefix = slash ? xstrndup(target, (size_t)(slash - target)) : NULL;
    s = prefix ? status_find(&st, prefix) : NULL;
    if (s && s->selected) {
      name = prefix;
      *key = slash + 1;
    } else {
      free(prefix);
      size_t n = 0;
      const struct srv *one = NULL;
      for (size_t i = 0; i < st.n; i++)
        if (st.v[i].selected && enabled(&st.v[i])) {
          one = &st.v[i];
          n++;
        }
      if (slash && !strstr(target, "://")) {
        /* A name has no '/': SERVER/NAME with no such server. */
        complain("skills: no server named %.*s", (int)(slash - target), target);
      } else if (n == 1) {
        name = xstrdup(one->name);
        *key = target;
      } else {
        complain("skills: name the server (SERVER/NAME), as %zu are in use", n);
      }
    }
  }
  status_free(&st);
  if (name && *key && !**key) {
    complain("skills: empty skill name in '%s'", target);
    free(name);
    name = NULL;
  }
  return name;
}

/* "a, b": the names of |l|; a new string. */
static char *names_of(const mcp_skill_list *l) {
  struct sbuf b = {0};
  sbuf_add(&b, "%s", "");
  for (size_t i = 0; i < mcp_skill_list_count(l); i++)
    sbuf_add(&b, "%s%s", b.len ? ", " : "", mcp_skill_list_name(l, i));
  return b.s;
}

/* Is |len| bytes at |s| UTF-8 text without NUL? */
static bool is_text(const char *s, size_t len) {
  for (size_t i = 0; i < len;) {
    uint32_t cp;
    size_t k = text_utf8_decode((const unsigned char *)s + i, len - i, &cp);
    if (!k || cp == 0) return false;
    i += k;
  }
  return true;
}

/* Prints the SKILL.md or file |data| of skill |i| of |l|. */
static int print_content(const mcp_skill_list *l, size_t i, const char *data, size_t len) {
  if (g_sk.json) {
    if (!is_text(data, len)) {
      complain("skills: %s is not UTF-8 text; print it without --json", g_sk.file);
      return EXIT_USAGE;
    }
    json_object *o = json_object_new_object();
    json_object_object_add(o, "server", json_object_new_string(mcp_skill_list_server(l, i)));
    json_object_object_add(o, "uri", json_object_new_string(mcp_skill_list_uri(l, i)));
    json_object_object_add(o, "name", json_object_new_string(mcp_skill_list_name(l, i)));
    if (g_sk.file) json_object_object_add(o, "file", json_object_new_string(g_sk.file));
    json_object_object_add(o, "text", json_object_new_string_len(data, (int)len));
    print_json_object(o);
    json_object_put(o);
  } else if (isatty(STDOUT_FILENO)) {
    safe_write(stdout, data, len, SAFE_BLOCK);
    if (len && data[len - 1] != '\n') putchar('\n');
  } else {
    fwrite(data, 1, len, stdout);
  }
  return EXIT_OK;
}

/* `skills SERVER/NAME [FILE]`. */
static int skills_load(const char *server, const char *key) {
  int rc = EXIT_OK;
  if (!server_ready(server, &rc)) return rc;
  mcp_skill_list *l = NULL;
  if (!server_skills(server, true, &l, &rc)) return rc;
  size_t i = 0;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_skill_list_find(l, server, key, &i, &err);
  if (st == MCP_ENOTFOUND) {
    char *names = names_of(l);
    complain("unknown skill '%s' on server %s (it has: %s)", key, server,
             *names ? names : "no skills");
    free(names);
    rc = EXIT_USAGE;
  } else if (st != MCP_OK) {
    complain("%s: %s", server, err.message ? err.message : mcp_strerror(st));
    rc = EXIT_USAGE;
  }
  mcp_error_clear(&err);
  char *data = NULL;
  size_t len = 0;
  mcp_call_options *co = rc == EXIT_OK ? new_call_options() : NULL;
  if (co) {
    /* The SKILL.md first, even for a FILE: the files of a skill that does
     * not pass its checks are not read. */
    atomic_store(&g_cancellable, true);
    st = mcp_manager_load_skill(g_mgr, l, i, co, &data, &len, &err);
    if (st == MCP_OK && g_sk.file) {
      mcp_free(data);
      data = NULL;
      st = mcp_manager_read_skill_file(g_mgr, l, i, g_sk.file, co, &data, &len, &err);
    }
    atomic_store(&g_cancellable, false);
    mcp_call_options_free(co);
    if (st == MCP_OK) {
      rc = print_content(l, i, data, len);
    } else if (interrupted(st)) {
      complain("interrupted");
      rc = EXIT_INTERRUPTED;
    } else {
      /* The library's message names the server, the skill and the file. */
      const char *msg = err.message ? err.message : mcp_strerror(st);
      if (strncmp(msg, "server \"", 8) == 0) complain("%s", msg);
      else complain("%s: %s: %s", server, mcp_skill_list_name(l, i), msg);
      rc = exit_code(st);
    }
  } else if (rc == EXIT_OK) {
    complain("out of memory");
    rc = EXIT_CONNECTION;
  }
  mcp_free(data);
  mcp_error_clear(&err);
  mcp_skill_list_free(l);
  return rc;
}

int cmd_skills(void) {
  if (!g_sk.target) return skills_list(NULL);
  const char *key = NULL;
  char *server = split_target(g_sk.target, &key);
  if (!server) return EXIT_USAGE;
  int rc;
  if (!key && g_sk.file) {
    complain("skills: FILE needs a skill: skills SERVER/NAME FILE");
    rc = EXIT_USAGE;
  } else {
    rc = key ? skills_load(server, key) : skills_list(server);
  }
  free(server);
  return rc;
}
