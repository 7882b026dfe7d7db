/* SPDX-License-Identifier: MIT */
/*
 * mcp_discover.c: config discovery.  Finds the config files in priority
 * order (explicit files, the project's .mcp.json, the user's file, then
 * other clients' files: the importers), parses each with mcp_config.c,
 * merges them (the first definition of a name wins) and keeps project
 * files out until the user trusts them: the project trust store
 * (trusted-projects.json), which it reads and, when the host approves a
 * file for good, writes (atomically, under an flock on its directory).
 *
 * Starts no threads and holds no globals or locks of its own; any thread
 * may run a discovery, concurrently.  Its I/O is reading config files and
 * the trust store, and writing the trust store.  Knows nothing of
 * processes, transports, the client or the manager.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <json-c/json.h>

#include "mcp_config.h"
#include "mcp_config_int.h"
#include "mcp_discover.h"
#include "mcp_jsonrpc.h"

/* A name claimed by the first file that defined it. */
typedef struct claim {
  char *name;
  char *source;
  mcp_server_def *def; /* NULL: the claiming entry was invalid */
} claim;

typedef struct discovery {
  const mcp_discovery_opts *o;
  mcp_config_getenv_fn lookup;
  void *user;
  mcp_diag_list diags;
  claim *claims;
  size_t nclaims;
  size_t capclaims;
  char **disabled;
  size_t ndisabled;
  size_t capdisabled;
  char **files;
  size_t nfiles;
  size_t capfiles;
  char **dirs; /* cwd and its parents up to the project root, nearest first */
  size_t ndirs;
  char *home;
  char *user_home;    /* the home even under no_user: a project file that is
                        a user file needs no trust */
  char *store_dir;    /* where trusted-projects.json lives, or NULL */
  json_object *store; /* its content, loaded on first use */
  bool store_loaded;
  char **untrusted; /* canonical paths of project files left out */
  size_t nuntrusted;
  size_t capuntrusted;
  char *trust_error;
  const char *workspace; /* the project root of cwd (a dirs[] entry) */
  /* Claude Code's choices about the project's .mcp.json servers (read with
   * the Claude import): "disabledMcpjsonServers", "enabledMcpjsonServers"
   * (|cc_on_set| when some file has it), "enableAllProjectMcpServers". */
  char *mcpjson;          /* the .mcp.json read, or NULL */
  mcp_file_result cc_off; /* names only (|disabled|) */
  mcp_file_result cc_on;
  bool cc_on_set, cc_all;
} discovery;

static bool grow(void **v, size_t *cap, size_t need, size_t size) {
  if (need <= *cap) return true;
  size_t ncap = *cap ? *cap * 2 : 8;
  while (ncap < need) ncap *= 2;
  void *p = mcp__reallocarray(*v, ncap, size);
  if (!p) return false;
  *v = p;
  *cap = ncap;
  return true;
}

static bool path_exists(const char *p) {
  struct stat st;
  return stat(p, &st) == 0;
}

static bool file_exists(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && !S_ISDIR(st.st_mode);
}

/*
 * Lists cwd and its parents, nearest first, ending with the first directory
 * that holds ".git" (a directory, or the file of a worktree) or at "/".
 */
static int list_dirs(discovery *dc, const char *cwd) {
  char *cur = mcp__strdup(cwd);
  if (!cur) return CHECK_OOM;
  size_t len = strlen(cur);
  while (len > 1 && cur[len - 1] == '/') cur[--len] = '\0';
  size_t cap = 0;
  for (;;) {
    if (!grow((void **)&dc->dirs, &cap, dc->ndirs + 1, sizeof(char *))) {
      mcp__free(cur);
      return CHECK_OOM;
    }
    dc->dirs[dc->ndirs++] = cur;
    char *git = mcp__asprintf("%s%sgit", cur, strcmp(cur, "/") ? "/." : ".");
    if (!git) return CHECK_OOM;
    bool stop = path_exists(git) || strcmp(cur, "/") == 0;
    mcp__free(git);
    if (stop) break;
    char *slash = strrchr(cur, '/');
    size_t plen = slash == cur ? 1 : (size_t)(slash - cur);
    char *parent = mcp__strndup(cur, plen);
    if (!parent) return CHECK_OOM;
    cur = parent;
  }
  return CHECK_OK;
}

/* The nearest |rel| in the project directories, or NULL in *out. */
static int find_upward(discovery *dc, const char *rel, char **out) {
  *out = NULL;
  for (size_t i = 0; i < dc->ndirs; i++) {
    const char *d = dc->dirs[i];
    char *p = mcp__asprintf("%s%s%s", d, strcmp(d, "/") ? "/" : "", rel);
    if (!p) return CHECK_OOM;
    if (file_exists(p)) {
      *out = p;
      return CHECK_OK;
    }
    mcp__free(p);
  }
  return CHECK_OK;
}

static const claim *find_claim(const discovery *dc, const char *name) {
  for (size_t i = 0; i < dc->nclaims; i++)
    if (strcmp(dc->claims[i].name, name) == 0) return &dc->claims[i];
  return NULL;
}

/* Merges one file's entries: first definition of a name wins. */
static int merge(discovery *dc, const char *source, mcp_file_result *fr) {
  for (size_t i = 0; i < fr->n; i++) {
    mcp_file_entry *e = &fr->v[i];
    const claim *prev = find_claim(dc, e->name);
    if (prev) {
      mcp__config_diag_add(&dc->diags, MCP_LOG_DEBUG, source, e->name, NULL,
                           "ignored: already defined in %s", prev->source);
      if (dc->diags.oom) return CHECK_OOM;
      continue;
    }
    if (!grow((void **)&dc->claims, &dc->capclaims, dc->nclaims + 1, sizeof(claim)))
      return CHECK_OOM;
    claim *cl = &dc->claims[dc->nclaims];
    cl->name = mcp__strdup(e->name);
    cl->source = mcp__strdup(source);
    if (!cl->name || !cl->source) {
      mcp__free(cl->name);
      mcp__free(cl->source);
      return CHECK_OOM;
    }
    cl->def = e->def;
    e->def = NULL;
    dc->nclaims++;
  }
  for (size_t i = 0; i < fr->ndisabled; i++) {
    if (!grow((void **)&dc->disabled, &dc->capdisabled, dc->ndisabled + 1, sizeof(char *)))
      return CHECK_OOM;
    dc->disabled[dc->ndisabled++] = fr->disabled[i];
    fr->disabled[i] = NULL;
  }
  fr->ndisabled = 0;
  return CHECK_OK;
}

static int note_file(discovery *dc, const char *path) {
  if (!grow((void **)&dc->files, &dc->capfiles, dc->nfiles + 1, sizeof(char *))) return CHECK_OOM;
  dc->files[dc->nfiles] = mcp__strdup(path);
  if (!dc->files[dc->nfiles]) return CHECK_OOM;
  dc->nfiles++;
  return CHECK_OK;
}

/* Appends the names of JSON array |arr| (when it is one) to |to|'s list. */
static int add_names(json_object *arr, mcp_file_result *to) {
  if (!json_object_is_type(arr, json_type_array)) return CHECK_OK;
  size_t n = json_object_array_length(arr);
  for (size_t i = 0; i < n; i++) {
    const char *name = mcp__config_plain_string(json_object_array_get_idx(arr, i));
    if (!name) continue;
    char **v = mcp__reallocarray(to->disabled, to->ndisabled + 1, sizeof(char *));
    if (!v) return CHECK_OOM;
    to->disabled = v;
    if (!(v[to->ndisabled] = mcp__strdup(name))) return CHECK_OOM;
    to->ndisabled++;
  }
  return CHECK_OK;
}

/* Claude Code's lists about .mcp.json servers in |obj| (a settings file or
 * a ~/.claude.json project entry). */
static int claude_lists(discovery *dc, json_object *obj) {
  json_object *v = NULL;
  if (!json_object_is_type(obj, json_type_object)) return CHECK_OK;
  if (json_object_object_get_ex(obj, "enableAllProjectMcpServers", &v) &&
      json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v))
    dc->cc_all = true;
  if (json_object_object_get_ex(obj, "enabledMcpjsonServers", &v) &&
      json_object_is_type(v, json_type_array)) {
    dc->cc_on_set = true;
    if (add_names(v, &dc->cc_on) != CHECK_OK) return CHECK_OOM;
  }
  if (json_object_object_get_ex(obj, "disabledMcpjsonServers", &v))
    return add_names(v, &dc->cc_off);
  return CHECK_OK;
}

/*
 * Reads |path| in |dialect| and merges it; with |detect| (an explicit
 * file), in the dialect its name or shape shows (mcp__config_detect()).
 * With |claude_projects|, it
 * merges ~/.claude.json's projects[dir] entry for the nearest project
 * directory instead of the top-level map.  With |text|, those |len| bytes
 * are |path|'s content, already read.
 */
static int load_and_merge_as(discovery *dc, const char *path, mcp_config_dialect dialect,
                             bool quiet_missing, bool claude_projects, const char *text, size_t len,
                             const char *base_dir, bool detect);

static int load_and_merge(discovery *dc, const char *path, mcp_config_dialect dialect,
                          bool quiet_missing, bool claude_projects, const char *text, size_t len,
                          const char *base_dir) {
  return load_and_merge_as(dc, path, dialect, quiet_missing, claude_projects, text, len, base_dir,
                           false);
}

static int load_and_merge_as(discovery *dc, const char *path, mcp_config_dialect dialect,
                             bool quiet_missing, bool claude_projects, const char *text, size_t len,
                             const char *base_dir, bool detect) {
  mcp_parse_ctx c;
  mcp_config_parse_opts po;
  json_object *root = NULL;
  mcp_file_result fr;
  char *source = NULL;
  int r;
  memset(&fr, 0, sizeof(fr));
  memset(&po, 0, sizeof(po));
  po.dialect = dialect;
  po.getenv = dc->lookup;
  po.getenv_user = dc->user;
  po.input = dc->o->input;
  po.input_user = dc->o->input_user;
  po.base_dir = base_dir;
  po.home = dc->user_home;
  po.workspace = dc->workspace;
  mcp__config_ctx_init(&c, &dc->diags, path, &po);
  /* A file reached twice (cwd inside home, an explicit file that is also
   * the project file) is read once, at its higher priority. */
  for (size_t i = 0; !claude_projects && i < dc->nfiles; i++)
    if (strcmp(dc->files[i], path) == 0) return CHECK_OK;
  /* An explicit file may be in any client's format. */
  size_t plen = strlen(path);
  if (detect && dc->o->format_set) {
    c.dialect = dc->o->format;
    detect = false;
  }
  if (detect && plen > 5 && strcmp(path + plen - 5, ".toml") == 0) c.dialect = MCP_CONFIG_CODEX;
  if (text) r = mcp__config_parse_root(&c, text, len, &root);
  else r = mcp__config_load_root(&c, path, quiet_missing, &root);
  if (r != CHECK_OK || !root) goto out;
  if (detect && c.dialect == MCP_CONFIG_NATIVE) c.dialect = mcp__config_detect(root);
  if (detect && c.dialect != MCP_CONFIG_NATIVE) {
    mcp__config_diag_add(c.diags, MCP_LOG_DEBUG, path, NULL, NULL, "read in %s's format",
                         mcp__config_dialect_name(c.dialect));
    if (c.diags->oom) {
      r = CHECK_OOM;
      goto out;
    }
  }
  if (!claude_projects && (r = note_file(dc, path)) != CHECK_OK) goto out;
  if (claude_projects) {
    json_object *projects = NULL, *proj = NULL;
    if (!json_object_is_type(root, json_type_object) ||
        !json_object_object_get_ex(root, "projects", &projects) ||
        !json_object_is_type(projects, json_type_object))
      goto out;
    const char *dir = NULL;
    for (size_t i = 0; i < dc->ndirs && !proj; i++) {
      json_object *p = NULL;
      if (json_object_object_get_ex(projects, dc->dirs[i], &p) &&
          json_object_is_type(p, json_type_object)) {
        proj = p;
        dir = dc->dirs[i];
      }
    }
    if (!proj) goto out;
    source = mcp__asprintf("%s (project %s)", path, dir);
    if (!source) {
      r = CHECK_OOM;
      goto out;
    }
    c.source = source;
    c.base_dir = c.workspace = dir; /* Claude Code runs them in that project */
    if ((r = claude_lists(dc, proj)) != CHECK_OK) goto out;
    if ((r = note_file(dc, source)) != CHECK_OK) goto out;
    json_object *map = NULL;
    if (!json_object_object_get_ex(proj, "mcpServers", &map)) goto out;
    if (!json_object_is_type(map, json_type_object)) {
      mcp__config_diag_add(c.diags, MCP_LOG_WARN, c.source, NULL, "mcpServers",
                           "field \"mcpServers\" must be an object; ignored");
      r = c.diags->oom ? CHECK_OOM : CHECK_OK;
      goto out;
    }
    r = mcp__config_collect_servers(&c, map, &fr);
  } else {
    r = mcp__config_collect_root(&c, root, &fr);
  }
  if (r == CHECK_OK) r = merge(dc, c.source, &fr);
out:
  json_object_put(root);
  mcp__config_file_result_clear(&fr);
  mcp__free(source);
  return r == CHECK_BAD ? CHECK_OK : r;
}

/* One place another client keeps its servers. */
typedef struct import_file {
  unsigned bit;
  bool project; /* searched upwards from cwd; else under home */
  const char *rel;
  mcp_config_dialect dialect;
  bool claude_projects;
} import_file;

static const import_file imports[] = {
    {MCP_IMPORT_CLAUDE, false, ".claude.json", MCP_CONFIG_FOREIGN, true},
    {MCP_IMPORT_CLAUDE, true, ".claude/mcp.json", MCP_CONFIG_FOREIGN, false},
    {MCP_IMPORT_CLAUDE, false, ".claude.json", MCP_CONFIG_FOREIGN, false},
    {MCP_IMPORT_CURSOR, true, ".cursor/mcp.json", MCP_CONFIG_CURSOR, false},
    {MCP_IMPORT_CURSOR, false, ".cursor/mcp.json", MCP_CONFIG_CURSOR, false},
    {MCP_IMPORT_VSCODE, true, ".vscode/mcp.json", MCP_CONFIG_VSCODE, false},
    {MCP_IMPORT_WINDSURF, false, ".codeium/windsurf/mcp_config.json", MCP_CONFIG_WINDSURF, false},
    {MCP_IMPORT_GEMINI, true, ".gemini/settings.json", MCP_CONFIG_GEMINI, false},
    {MCP_IMPORT_GEMINI, false, ".gemini/settings.json", MCP_CONFIG_GEMINI, false},
    {MCP_IMPORT_ZED, true, ".zed/settings.json", MCP_CONFIG_ZED, false},
    {MCP_IMPORT_ZED, false, ".config/zed/settings.json", MCP_CONFIG_ZED, false},
    {MCP_IMPORT_OPENCODE, true, "opencode.json", MCP_CONFIG_OPENCODE, false},
    {MCP_IMPORT_OPENCODE, true, "opencode.jsonc", MCP_CONFIG_OPENCODE, false},
    {MCP_IMPORT_OPENCODE, false, ".config/opencode/opencode.json", MCP_CONFIG_OPENCODE, false},
    {MCP_IMPORT_OPENCODE, false, ".config/opencode/opencode.jsonc", MCP_CONFIG_OPENCODE, false},
    /* VS Code's user profile (Linux, then macOS). */
    {MCP_IMPORT_VSCODE, false, ".config/Code/User/mcp.json", MCP_CONFIG_VSCODE, false},
    {MCP_IMPORT_VSCODE, false, "Library/Application Support/Code/User/mcp.json", MCP_CONFIG_VSCODE,
     false},
    {MCP_IMPORT_CLAUDE_DESKTOP, false, ".config/Claude/claude_desktop_config.json",
     MCP_CONFIG_CLAUDE_DESKTOP, false},
    {MCP_IMPORT_CLAUDE_DESKTOP, false,
     "Library/Application Support/Claude/claude_desktop_config.json", MCP_CONFIG_CLAUDE_DESKTOP,
     false},
    /* Cline: the VS Code extension's storage (Linux, macOS), then its CLI. */
    {MCP_IMPORT_CLINE, false,
     ".config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
     MCP_CONFIG_CLINE, false},
    {MCP_IMPORT_CLINE, false,
     "Library/Application Support/Code/User/globalStorage/saoudrizwan.claude-dev/settings/"
     "cline_mcp_settings.json",
     MCP_CONFIG_CLINE, false},
    {MCP_IMPORT_CLINE, false, ".cline/data/settings/cline_mcp_settings.json", MCP_CONFIG_CLINE,
     false},
    {MCP_IMPORT_CODEX, true, ".codex/config.toml", MCP_CONFIG_CODEX, false},
    {MCP_IMPORT_CODEX, false, ".codex/config.toml", MCP_CONFIG_CODEX, false},
};

static int load_project(discovery *dc, const char *path, mcp_config_dialect dialect,
                        const char *user_rel);

/*
 * Reads the other clients' files of one scope, in the table's order.  The
 * project scope is each client's project file (searched upwards from cwd)
 * and Claude Code's per-project entry in ~/.claude.json (its "local"
 * scope, kept in the home); the user scope is the rest.
 */
static int import_pass(discovery *dc, bool project_scope) {
  for (size_t i = 0; i < sizeof(imports) / sizeof(imports[0]); i++) {
    const import_file *im = &imports[i];
    char *path = NULL;
    int r = CHECK_OK;
    if (!(dc->o->imports & im->bit) || (im->project || im->claude_projects) != project_scope)
      continue;
    if (im->project) {
      if (dc->o->no_project) continue;
      if ((r = find_upward(dc, im->rel, &path)) != CHECK_OK) return r;
      if (path) r = load_project(dc, path, im->dialect, im->rel);
    } else if (dc->home && !(im->claude_projects && dc->o->no_user)) {
      /* Codex keeps its files in $CODEX_HOME when that is set. */
      const char *codex_home = im->bit == MCP_IMPORT_CODEX ? dc->lookup(dc->user, "CODEX_HOME")
                                                           : NULL;
      if (codex_home && *codex_home == '/') path = mcp__asprintf("%s/config.toml", codex_home);
      else path = mcp__asprintf("%s/%s", dc->home, im->rel);
      if (!path) return CHECK_OOM;
      r = load_and_merge(dc, path, im->dialect, true, im->claude_projects, NULL, 0, NULL);
    }
    mcp__free(path);
    if (r != CHECK_OK) return r;
  }
  return CHECK_OK;
}

static void discovery_clear(discovery *dc) {
  mcp__config_diags_free(dc->diags.v, dc->diags.n);
  for (size_t i = 0; i < dc->nclaims; i++) {
    mcp__free(dc->claims[i].name);
    mcp__free(dc->claims[i].source);
    mcp__server_def_free(dc->claims[i].def);
  }
  mcp__free(dc->claims);
  for (size_t i = 0; i < dc->ndisabled; i++) mcp__free(dc->disabled[i]);
  mcp__free(dc->disabled);
  for (size_t i = 0; i < dc->nfiles; i++) mcp__free(dc->files[i]);
  mcp__free(dc->files);
  for (size_t i = 0; i < dc->ndirs; i++) mcp__free(dc->dirs[i]);
  mcp__free(dc->dirs);
  mcp__free(dc->home);
  mcp__free(dc->user_home);
  mcp__free(dc->store_dir);
  json_object_put(dc->store);
  for (size_t i = 0; i < dc->nuntrusted; i++) mcp__free(dc->untrusted[i]);
  mcp__free(dc->untrusted);
  mcp__free(dc->trust_error);
  mcp__free(dc->mcpjson);
  mcp__config_file_result_clear(&dc->cc_off);
  mcp__config_file_result_clear(&dc->cc_on);
}

/* Finds the home directory: the option, $HOME, then the password entry. */
static int find_home(discovery *dc) {
  const char *h = dc->o->home;
  if (!h || !*h) h = dc->lookup(dc->user, "HOME");
  if (h && *h == '/') {
    dc->home = mcp__strdup(h);
    return dc->home ? CHECK_OK : CHECK_OOM;
  }
  if (dc->o->getenv) return CHECK_OK; /* a hermetic lookup: no fallback */
  struct passwd pw, *res = NULL;
  char buf[4096];
  if (getpwuid_r(getuid(), &pw, buf, sizeof(buf), &res) == 0 && res && res->pw_dir &&
      *res->pw_dir == '/') {
    dc->home = mcp__strdup(res->pw_dir);
    if (!dc->home) return CHECK_OOM;
  }
  return CHECK_OK;
}

/* ---- project trust ------------------------------------------------------ */

/* The trust store's file name, in the user's mcpconn config directory. */
#define TRUST_STORE_NAME "trusted-projects.json"

/*
 * The path approvals are keyed by: |path|'s directory resolved by
 * realpath(3), then its last part.  The last part is not resolved, so a
 * symbolic link in another checkout that points to an approved file is a
 * different path and is asked about again.  NULL when out of memory or the
 * directory cannot be resolved (*e says why).
 */
static char *canonical_path(const char *path, int *e) {
  const char *slash = strrchr(path, '/');
  *e = ENOMEM;
  if (!slash) {
    *e = EINVAL;
    return NULL;
  }
  char *dir = mcp__strndup(path, slash == path ? 1 : (size_t)(slash - path));
  if (!dir) return NULL;
  char *real = realpath(dir, NULL);
  if (!real) *e = errno;
  mcp__free(dir);
  if (!real) return NULL;
  char *out = mcp__asprintf("%s%s%s", real, strcmp(real, "/") ? "/" : "", slash + 1);
  free(real); /* from realpath() */
  return out;
}

/* The directory that holds the trust store: $XDG_CONFIG_HOME/mcpconn, else
 * ~/.config/mcpconn; NULL in *out without either. */
static int find_store_dir(discovery *dc, char **out) {
  *out = NULL;
  const char *xdg = dc->o->xdg_config_home;
  if (!xdg || !*xdg) xdg = dc->lookup(dc->user, "XDG_CONFIG_HOME");
  if (xdg && *xdg == '/') *out = mcp__asprintf("%s/mcpconn", xdg);
  else if (dc->home) *out = mcp__asprintf("%s/.config/mcpconn", dc->home);
  else return CHECK_OK;
  return *out ? CHECK_OK : CHECK_OOM;
}

/*
 * Reads the trust store of |dir| into *root: NULL when it does not exist.
 * One that is a symbolic link, not the user's own or writable by others is
 * not used, with a warning (someone else could have written it).
 * CHECK_OK, or CHECK_OOM.
 */
static int store_read(mcp_diag_list *dl, const char *dir, json_object **root) {
  char *data = NULL, eb[128];
  size_t len = 0;
  *root = NULL;
  char *path = mcp__asprintf("%s/" TRUST_STORE_NAME, dir);
  if (!path) return CHECK_OOM;
  int e = mcp__read_file(path, MCP_CONFIG_FILE_MAX, true, &data, &len);
  int r = CHECK_OK;
  if (e == ENOMEM) {
    r = CHECK_OOM;
  } else if (e == ELOOP || e == EPERM) {
    mcp__config_diag_add(
        dl, MCP_LOG_WARN, path, NULL, NULL, "not used: %s; no project file is trusted",
        e == ELOOP ? "a symbolic link" : "not owned by you, or writable by others");
  } else if (e && e != ENOENT) {
    mcp__config_diag_add(dl, MCP_LOG_WARN, path, NULL, NULL,
                         "cannot read: %s; no project file is trusted",
                         mcp__errno_text(e, eb, sizeof(eb)));
  } else if (!e) {
    char why[160];
    *root = mcp__json_parse_document(data, len, MCP_CONFIG_JSON_DEPTH, "", why, sizeof(why));
    if (!*root || !json_object_is_type(*root, json_type_object)) {
      json_object_put(*root);
      *root = NULL;
      mcp__config_diag_add(dl, MCP_LOG_WARN, path, NULL, NULL,
                           "invalid trust store (%s); no project file is trusted",
                           why[0] ? why : "not an object");
    }
  }
  if (dl->oom) r = CHECK_OOM;
  mcp__free(data);
  mcp__free(path);
  return r;
}

/* True when |root| approves |key| with content |hash|. */
static bool store_approves(json_object *root, const char *key, const char *hash) {
  json_object *projects = NULL, *p = NULL, *h = NULL;
  if (!root || !json_object_object_get_ex(root, "projects", &projects) ||
      !json_object_is_type(projects, json_type_object) ||
      !json_object_object_get_ex(projects, key, &p) ||
      !json_object_object_get_ex(p, "sha256", &h) || !json_object_is_type(h, json_type_string))
    return false;
  return strcmp(json_object_get_string(h), hash) == 0;
}

/*
 * Makes |dir| and its missing parents (mode 0700), then checks that it is a
 * directory of the user's own that nobody else may write, so no one else
 * can plant a file or link in it.  0 or an errno value (EPERM: not safe).
 */
static int store_dir_ready(const char *dir) {
  char *p = mcp__strdup(dir);
  if (!p) return ENOMEM;
  for (char *q = strchr(p + 1, '/');; q = strchr(q + 1, '/')) {
    if (q) *q = '\0';
    if (mkdir(p, 0700) != 0 && errno != EEXIST) {
      int e = errno;
      mcp__free(p);
      return e;
    }
    if (!q) break;
    *q = '/';
  }
  mcp__free(p);
  struct stat st;
  if (stat(dir, &st) != 0) return errno;
  if (!S_ISDIR(st.st_mode)) return ENOTDIR;
  if (st.st_uid != geteuid() || (st.st_mode & 022)) return EPERM;
  return 0;
}

/* Writes all of |s| to |fd|; 0 or an errno value. */
static int write_all(int fd, const char *s, size_t n) {
  while (n) {
    ssize_t w = write(fd, s, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return errno;
    s += w;
    n -= (size_t)w;
  }
  return 0;
}

/*
 * Stores the approval of |key| with |hash| in |dir|'s trust store,
 * replacing an older approval of that path.  Holds an exclusive flock on
 * the directory from reading the store to renaming the new one into place,
 * so two processes approving at once both keep their approval; the new
 * file is made with mkstemp (O_EXCL, so a planted name is never opened),
 * set to 0600, synced and renamed over the old one (rename replaces a link,
 * never follows it).  Returns 0, or an errno value with *why set to a
 * static description of the step that failed.
 */
static int store_remember(const char *dir, const char *key, const char *hash, const char **why) {
  json_object *root = NULL, *projects = NULL, *item = NULL;
  char *path = NULL, *tmp = NULL, *data = NULL;
  size_t len = 0;
  int dfd = -1, fd = -1, e;
  bool made = false;
  *why = "cannot make the directory";
  if ((e = store_dir_ready(dir)) != 0) {
    if (e == EPERM) *why = "the directory is not yours alone";
    return e;
  }
  *why = "out of memory";
  path = mcp__asprintf("%s/" TRUST_STORE_NAME, dir);
  tmp = mcp__asprintf("%s/" TRUST_STORE_NAME ".XXXXXX", dir);
  if (!path || !tmp) {
    e = ENOMEM;
    goto out;
  }
  *why = "cannot lock the directory";
  dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0 || flock(dfd, LOCK_EX) != 0) {
    e = errno;
    goto out;
  }
  *why = "cannot read the trust store";
  e = mcp__read_file(path, MCP_CONFIG_FILE_MAX, true, &data, &len);
  if (e == 0) {
    root = json_tokener_parse(data);
    mcp__free(data);
  } else if (e != ENOENT) {
    if (e == EPERM) *why = "the trust store is not yours alone";
    if (e == ELOOP) *why = "the trust store is a symbolic link";
    goto out;
  }
  e = ENOMEM;
  *why = "out of memory";
  if (!root || !json_object_is_type(root, json_type_object)) {
    json_object_put(root);
    if (!(root = json_object_new_object())) goto out;
  }
  if (!json_object_object_get_ex(root, "projects", &projects) ||
      !json_object_is_type(projects, json_type_object)) {
    if (!(projects = json_object_new_object()) ||
        json_object_object_add(root, "projects", projects) != 0)
      goto out;
  }
  if (!(item = json_object_new_object())) goto out;
  if (json_object_object_add(item, "sha256", json_object_new_string(hash)) ||
      json_object_object_add(projects, key, item)) {
    json_object_put(item);
    goto out;
  }
  if (json_object_object_add(root, "version", json_object_new_int(1))) goto out;
  const char *text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
                                                              JSON_C_TO_STRING_NOSLASHESCAPE);
  if (!text) goto out;
  *why = "cannot write the trust store";
  fd = mkstemp(tmp);
  if (fd < 0) {
    e = errno;
    goto out;
  }
  made = true;
  if (fchmod(fd, 0600) != 0 || (e = write_all(fd, text, strlen(text))) != 0 ||
      (e = write_all(fd, "\n", 1)) != 0 || fsync(fd) != 0) {
    if (!e) e = errno;
    goto out;
  }
  if (close(fd) != 0) {
    fd = -1;
    e = errno;
    goto out;
  }
  fd = -1;
  if (rename(tmp, path) != 0) {
    e = errno;
    goto out;
  }
  made = false;
  e = 0;
out:
  if (fd >= 0) close(fd);
  if (made) unlink(tmp);
  if (dfd >= 0) close(dfd); /* releases the lock */
  json_object_put(root);
  mcp__free(path);
  mcp__free(tmp);
  return e;
}

/* A string member of |o|, or NULL. */
static const char *str_member(json_object *o, const char *key) {
  json_object *v = NULL;
  if (!json_object_object_get_ex(o, key, &v)) return NULL;
  return mcp__config_plain_string(v);
}

/* Appends the `!command` values of the object |o|'s map |field| to |cmds|. */
static bool add_commands(json_object *o, const char *field, json_object *cmds) {
  json_object *map = NULL;
  if (!json_object_object_get_ex(o, field, &map) || !json_object_is_type(map, json_type_object))
    return true;
  json_object_object_foreach(map, k, v) {
    (void)k;
    const char *s = mcp__config_plain_string(v);
    if (s && s[0] == '!' && json_object_array_add(cmds, json_object_new_string(s + 1)) != 0)
      return false;
  }
  return true;
}

/*
 * Describes the servers of |map| as written, for the trust callback (see
 * mcp_project_trust_fn): nothing is expanded or validated, so the host sees
 * what the file says.  CHECK_OK with *out (new, freed with mcp__free()),
 * or CHECK_OOM.
 */
static int project_summary(json_object *map, mcp_config_dialect dialect, char **out) {
  static const char *const url_keys[] = {"url", "httpUrl", "serverUrl"};
  *out = NULL;
  json_object *arr = json_object_new_array(), *keep = json_object_new_array();
  if (!arr || !keep) {
    json_object_put(arr);
    json_object_put(keep);
    return CHECK_OOM;
  }
  json_object_object_foreach(map, name, raw) {
    json_object *s = json_object_new_object();
    if (!s || json_object_array_add(arr, s) != 0) {
      json_object_put(s);
      goto oom;
    }
    if (json_object_object_add(s, "name", json_object_new_string(name))) goto oom;
    /* In the shape mcpconn reads (OpenCode's command arrays, Zed's command
     * objects), so the host sees the program that would run. */
    json_object *val = mcp__config_normalize(dialect, raw);
    if (!val) goto oom;
    if (json_object_array_add(keep, val)) {
      json_object_put(val);
      goto oom;
    }
    if (!json_object_is_type(val, json_type_object)) continue;
    const char *type = str_member(val, "type");
    const char *cmd = str_member(val, "command");
    const char *cwd = str_member(val, "cwd");
    const char *url = NULL;
    for (size_t i = 0; !url && i < 3; i++) url = str_member(val, url_keys[i]);
    if ((type && json_object_object_add(s, "type", json_object_new_string(type))) ||
        (cmd && json_object_object_add(s, "command", json_object_new_string(cmd))) ||
        (cwd && json_object_object_add(s, "cwd", json_object_new_string(cwd))) ||
        (url && json_object_object_add(s, "url", json_object_new_string(url))))
      goto oom;
    json_object *args = NULL;
    if (json_object_object_get_ex(val, "args", &args) &&
        json_object_is_type(args, json_type_array)) {
      json_object *a = json_object_new_array();
      if (!a || json_object_object_add(s, "args", a)) {
        json_object_put(a);
        goto oom;
      }
      size_t n = json_object_array_length(args);
      for (size_t i = 0; i < n; i++) {
        json_object *v = json_object_array_get_idx(args, i);
        const char *t = mcp__config_plain_string(v);
        if (json_object_array_add(a, json_object_new_string(t ? t : json_object_to_json_string(v))))
          goto oom;
      }
    }
    /* "!" runs a command only in mcpconn's own files. */
    if (dialect == MCP_CONFIG_NATIVE) {
      json_object *cmds = json_object_new_array();
      if (!cmds || !add_commands(val, "env", cmds) || !add_commands(val, "headers", cmds)) {
        json_object_put(cmds);
        goto oom;
      }
      if (json_object_array_length(cmds) == 0) json_object_put(cmds);
      else if (json_object_object_add(s, "commands", cmds)) goto oom;
    }
  }
  const char *text = json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PLAIN |
                                                             JSON_C_TO_STRING_NOSLASHESCAPE);
  if (!text || !(*out = mcp__strdup(text))) goto oom;
  json_object_put(arr);
  json_object_put(keep);
  return CHECK_OK;
oom:
  json_object_put(arr);
  json_object_put(keep);
  return CHECK_OOM;
}

/* The server map of a parsed project file, or NULL. */
static json_object *server_map(json_object *root, mcp_config_dialect d) {
  json_object *map = NULL;
  if (!json_object_is_type(root, json_type_object) ||
      !json_object_object_get_ex(root, mcp__config_servers_key(d), &map) ||
      !json_object_is_type(map, json_type_object))
    return NULL;
  return map;
}

/* Records |key| as left out for want of trust. */
static int note_untrusted(discovery *dc, const char *key) {
  if (!grow((void **)&dc->untrusted, &dc->capuntrusted, dc->nuntrusted + 1, sizeof(char *)))
    return CHECK_OOM;
  if (!(dc->untrusted[dc->nuntrusted] = mcp__strdup(key))) return CHECK_OOM;
  dc->nuntrusted++;
  return CHECK_OK;
}

/*
 * Decides about the project file |path| (|text|, |len| bytes, already
 * read) and sets *use.  A file with no server entry is used as it is: it
 * cannot start anything.  CHECK_OK or CHECK_OOM.
 */
static int decide_trust(discovery *dc, const char *path, mcp_config_dialect dialect,
                        const char *text, size_t len, bool *use) {
  mcp_parse_ctx c;
  json_object *root = NULL;
  mcp_diag_list quiet;
  char *key = NULL, *summary = NULL, hash[65], eb[128];
  int r = CHECK_OK, e;
  *use = false;
  memset(&quiet, 0, sizeof(quiet));
  /* Only its shape is read here; the real parse warns about its content. */
  mcp__config_ctx_init(&c, &quiet, path, NULL);
  c.dialect = dialect;
  if (mcp__config_parse_root(&c, text, len, &root) != CHECK_OK) {
    *use = true; /* invalid JSON: the real parse says so, and adds nothing */
    goto out;
  }
  json_object *map = server_map(root, dialect);
  if (!map || json_object_object_length(map) == 0) {
    *use = true;
    goto out;
  }
  if (!(key = canonical_path(path, &e))) {
    if (e == ENOMEM) {
      r = CHECK_OOM;
      goto out;
    }
    mcp__config_diag_add(&dc->diags, MCP_LOG_WARN, path, NULL, NULL,
                         "project file not used: cannot resolve its directory: %s",
                         mcp__errno_text(e, eb, sizeof(eb)));
    r = dc->diags.oom ? CHECK_OOM : note_untrusted(dc, path);
    goto out;
  }
  mcp__config_sha256_hex(text, len, hash);
  if (!dc->store_loaded && dc->store_dir) {
    if ((r = store_read(&dc->diags, dc->store_dir, &dc->store)) != CHECK_OK) goto out;
  }
  dc->store_loaded = true;
  if (store_approves(dc->store, key, hash)) {
    *use = true;
    goto out;
  }
  mcp_trust t = MCP_TRUST_DENY;
  if (dc->o->trust) {
    if ((r = project_summary(map, dialect, &summary)) != CHECK_OK) goto out;
    t = dc->o->trust(dc->o->trust_user, key, hash, summary);
  }
  if (t == MCP_TRUST_ALWAYS) {
    const char *why = "no configuration directory (set HOME)";
    e = dc->store_dir ? store_remember(dc->store_dir, key, hash, &why) : ENOENT;
    if (e == ENOMEM) {
      r = CHECK_OOM;
      goto out;
    }
    if (e) {
      mcp__config_diag_add(&dc->diags, MCP_LOG_WARN, path, NULL, NULL,
                           "trusted for this run only: cannot remember the "
                           "approval%s%s%s: %s: %s",
                           dc->store_dir ? " in " : "", dc->store_dir ? dc->store_dir : "",
                           dc->store_dir ? "/" TRUST_STORE_NAME : "", why,
                           mcp__errno_text(e, eb, sizeof(eb)));
      mcp__free(dc->trust_error);
      dc->trust_error = mcp__asprintf("%s: %s", why, mcp__errno_text(e, eb, sizeof(eb)));
      if (dc->diags.oom || !dc->trust_error) {
        r = CHECK_OOM;
        goto out;
      }
    }
  }
  if (t == MCP_TRUST_ALWAYS || t == MCP_TRUST_ONCE) {
    *use = true;
    goto out;
  }
  mcp__config_diag_add(&dc->diags, dc->o->trust ? MCP_LOG_DEBUG : MCP_LOG_WARN, path, NULL, NULL,
                       "project file not trusted: its %zu server%s %s not started",
                       (size_t)json_object_object_length(map),
                       json_object_object_length(map) == 1 ? "" : "s",
                       json_object_object_length(map) == 1 ? "is" : "are");
  r = dc->diags.oom ? CHECK_OOM : note_untrusted(dc, key);
out:
  json_object_put(root);
  mcp__config_diags_free(quiet.v, quiet.n);
  mcp__free(key);
  mcp__free(summary);
  return r;
}

/*
 * Reads the project-level file |path|, once, and merges it if it is
 * trusted.  A path that is |user_rel| under the user's home is that
 * client's user file, found by the upward search from a directory inside
 * the home: it is trusted as a user file.
 */
static int load_project(discovery *dc, const char *path, mcp_config_dialect dialect,
                        const char *user_rel) {
  char *text = NULL;
  size_t len = 0;
  int r;
  if (user_rel && dc->user_home) {
    char *u = mcp__asprintf("%s/%s", dc->user_home, user_rel);
    if (!u) return CHECK_OOM;
    bool same = strcmp(u, path) == 0;
    mcp__free(u);
    if (same)
      return dc->o->no_user ? CHECK_OK
                            : load_and_merge(dc, path, dialect, true, false, NULL, 0, NULL);
  }
  for (size_t i = 0; i < dc->nfiles; i++)
    if (strcmp(dc->files[i], path) == 0) return CHECK_OK;
  int e = mcp__read_file(path, MCP_CONFIG_FILE_MAX, false, &text, &len);
  if (e == ENOMEM) return CHECK_OOM;
  if (e == ENOENT) return CHECK_OK;
  if (e) {
    mcp_parse_ctx c;
    mcp__config_ctx_init(&c, &dc->diags, path, NULL);
    r = mcp__config_read_error(&c, path, e);
    return r == CHECK_BAD ? CHECK_OK : r;
  }
  bool use = false;
  size_t first = dc->nclaims;
  /* The project root: the directory that holds |rel| (".mcp.json",
   * ".cursor/mcp.json", ...). */
  const char *rel = user_rel ? user_rel : ".mcp.json";
  size_t plen = strlen(path), rlen = strlen(rel);
  char *root = plen > rlen ? mcp__strndup(path, plen - rlen - 1) : NULL;
  if (root && !*root) {
    mcp__free(root);
    root = mcp__strdup("/");
  }
  if (!root) {
    mcp__free(text);
    return CHECK_OOM;
  }
  r = decide_trust(dc, path, dialect, text, len, &use);
  if (r == CHECK_OK && use) r = load_and_merge(dc, path, dialect, true, false, text, len, root);
  mcp__free(root);
  for (size_t i = first; r == CHECK_OK && i < dc->nclaims; i++)
    if (dc->claims[i].def) dc->claims[i].def->project = true;
  mcp__free(text);
  return r;
}

static bool name_listed(char *const *v, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(v[i], name) == 0) return true;
  return false;
}

/*
 * With the Claude import and a .mcp.json read: Claude Code's lists from
 * .claude/settings.local.json and .claude/settings.json (in the project,
 * searched upwards) and ~/.claude/settings.json.  They only switch servers
 * off, so a project's settings need no trust.
 */
static int claude_settings(discovery *dc) {
  if (!(dc->o->imports & MCP_IMPORT_CLAUDE) || !dc->mcpjson) return CHECK_OK;
  static const char *const rels[] = {".claude/settings.local.json", ".claude/settings.json"};
  for (size_t i = 0; i < 3; i++) {
    char *path = NULL;
    int r = CHECK_OK;
    if (i < 2) r = find_upward(dc, rels[i], &path);
    else if (dc->home && !(path = mcp__asprintf("%s/.claude/settings.json", dc->home)))
      r = CHECK_OOM;
    if (r != CHECK_OK || !path) {
      if (r != CHECK_OK) return r;
      continue;
    }
    mcp_parse_ctx c;
    json_object *root = NULL;
    mcp__config_ctx_init(&c, &dc->diags, path, NULL);
    r = mcp__config_load_root(&c, path, true, &root);
    if (r == CHECK_OK && root) r = claude_lists(dc, root);
    json_object_put(root);
    mcp__free(path);
    if (r == CHECK_OOM) return r;
  }
  return CHECK_OK;
}

/* Whether Claude Code's settings switch |cl|, a server of the project's
 * .mcp.json, off; |why| says which list. */
static bool claude_off(const discovery *dc, const claim *cl, const char **why) {
  if (!dc->mcpjson || strcmp(cl->source, dc->mcpjson) != 0) return false;
  for (size_t i = 0; i < dc->cc_off.ndisabled; i++)
    if (strcmp(dc->cc_off.disabled[i], cl->name) == 0) {
      *why = "disabled by Claude Code's \"disabledMcpjsonServers\"";
      return true;
    }
  if (!dc->cc_on_set || dc->cc_all) return false;
  for (size_t i = 0; i < dc->cc_on.ndisabled; i++)
    if (strcmp(dc->cc_on.disabled[i], cl->name) == 0) return false;
  *why = "not in Claude Code's \"enabledMcpjsonServers\"";
  return true;
}

/* Builds the output set from the claims. */
static mcp_status finish(discovery *dc, mcp_config_set **out) {
  mcp_config_set *set = mcp__calloc(1, sizeof(*set));
  if (!set) return MCP_ENOMEM;
  mcp__config_sort_unique(dc->disabled, &dc->ndisabled);
  set->defs = mcp__calloc(dc->nclaims ? dc->nclaims : 1, sizeof(mcp_server_def *));
  if (!set->defs) goto oom;
  for (size_t i = 0; i < dc->nclaims; i++) {
    claim *cl = &dc->claims[i];
    if (!cl->def) continue;
    if (name_listed(dc->disabled, dc->ndisabled, cl->name)) {
      mcp__config_diag_add(&dc->diags, MCP_LOG_DEBUG, cl->source, cl->name, NULL,
                           "disabled by \"disabledServers\"");
      if (!dc->diags.oom) dc->diags.v[dc->diags.n - 1].hidden = true;
      continue;
    }
    if (!cl->def->enabled) {
      mcp__config_diag_add(&dc->diags, MCP_LOG_DEBUG, cl->source, cl->name, "enabled",
                           "hidden by \"enabled\": false");
      if (!dc->diags.oom) dc->diags.v[dc->diags.n - 1].hidden = true;
      continue;
    }
    const char *why = NULL;
    if (claude_off(dc, cl, &why)) {
      mcp__config_diag_add(&dc->diags, MCP_LOG_DEBUG, cl->source, cl->name, NULL, "%s", why);
      if (!dc->diags.oom) dc->diags.v[dc->diags.n - 1].hidden = true;
      continue;
    }
    set->defs[set->ndefs++] = cl->def;
    cl->def = NULL;
  }
  if (dc->diags.oom) goto oom;
  qsort(set->defs, set->ndefs, sizeof(*set->defs), mcp__config_cmp_def);
  set->disabled = dc->disabled;
  set->ndisabled = dc->ndisabled;
  dc->disabled = NULL;
  dc->ndisabled = 0;
  set->files = dc->files;
  set->nfiles = dc->nfiles;
  dc->files = NULL;
  dc->nfiles = 0;
  set->untrusted = dc->untrusted;
  set->nuntrusted = dc->nuntrusted;
  dc->untrusted = NULL;
  dc->nuntrusted = 0;
  set->trust_error = dc->trust_error;
  dc->trust_error = NULL;
  mcp__config_take_diags(set, &dc->diags);
  *out = set;
  return MCP_OK;
oom:
  mcp__config_free(set);
  return MCP_ENOMEM;
}

mcp_status mcp__config_discover(const mcp_discovery_opts *o, mcp_config_set **out, mcp_error *err) {
  static const mcp_discovery_opts defaults;
  discovery dc;
  char *cwd_buf = NULL, *path = NULL;
  mcp_status st = MCP_OK;
  int r = CHECK_OK;
  if (!out) return mcp__error_set(err, MCP_EINVAL, "no output set");
  *out = NULL;
  memset(&dc, 0, sizeof(dc));
  dc.o = o ? o : &defaults;
  dc.lookup = dc.o->getenv ? dc.o->getenv : mcp__config_getenv_default;
  dc.user = dc.o->getenv_user;

  const char *cwd = dc.o->cwd;
  if (!cwd) {
    cwd_buf = getcwd(NULL, 0);
    if (!cwd_buf) {
      char eb[128];
      st = mcp__error_set(err, MCP_EIO,
                          "cannot find the working directory: "
                          "%s",
                          mcp__errno_text(errno, eb, sizeof(eb)));
      goto out;
    }
    cwd = cwd_buf;
  }
  if (*cwd != '/') {
    st = mcp__error_set(err, MCP_EINVAL,
                        "working directory \"%s\" is not an "
                        "absolute path",
                        cwd);
    goto out;
  }
  if ((r = list_dirs(&dc, cwd)) != CHECK_OK) goto out;
  /* The workspace of user-level files: the directory with ".git", else
   * cwd. */
  dc.workspace = strcmp(dc.dirs[dc.ndirs - 1], "/") != 0 || dc.ndirs == 1 ? dc.dirs[dc.ndirs - 1]
                                                                          : dc.dirs[0];
  if ((r = find_home(&dc)) != CHECK_OK) goto out;
  if (dc.home && !(dc.user_home = mcp__strdup(dc.home))) {
    r = CHECK_OOM;
    goto out;
  }
  /* The trust store is the user's even under no_user: that option skips
   * server definitions, not the user's approvals. */
  if (!dc.o->no_project && (r = find_store_dir(&dc, &dc.store_dir)) != CHECK_OK) goto out;

  /* 1. Explicit files. */
  for (size_t i = 0; i < dc.o->nfiles; i++) {
    if (!dc.o->files[i]) continue;
    r = load_and_merge_as(&dc, dc.o->files[i], MCP_CONFIG_NATIVE, false, false, NULL, 0, NULL,
                          true);
    if (r != CHECK_OK) goto out;
  }
  /* 2. Project scope: ours, then the other clients'. */
  if (!dc.o->no_project) {
    if ((r = find_upward(&dc, ".mcp.json", &path)) != CHECK_OK) goto out;
    if (path && (r = load_project(&dc, path, MCP_CONFIG_NATIVE, NULL))) goto out;
    dc.mcpjson = path;
    path = NULL;
  }
  if ((r = import_pass(&dc, true)) != CHECK_OK) goto out;
  /* 3. User scope: ours, then the other clients'. */
  const char *xdg = dc.o->xdg_config_home;
  if (dc.o->no_user) {
    /* Nothing under home: the user file and user-level imports go. */
    mcp__free(dc.home);
    dc.home = NULL;
    xdg = NULL;
  }
  if (!dc.o->no_user && (!xdg || !*xdg)) xdg = dc.lookup(dc.user, "XDG_CONFIG_HOME");
  if (xdg && *xdg == '/') path = mcp__asprintf("%s/mcpconn/mcp.json", xdg);
  else if (dc.home) path = mcp__asprintf("%s/.config/mcpconn/mcp.json", dc.home);
  if ((xdg && *xdg == '/') || dc.home) {
    if (!path) {
      r = CHECK_OOM;
      goto out;
    }
    if ((r = load_and_merge(&dc, path, MCP_CONFIG_NATIVE, true, false, NULL, 0, NULL))) goto out;
  }
  mcp__free(path);
  path = NULL;
  if ((r = import_pass(&dc, false)) != CHECK_OK) goto out;
  if ((r = claude_settings(&dc)) != CHECK_OK) goto out;
  st = finish(&dc, out);
out:
  if (r == CHECK_OOM) st = mcp__error_set(err, MCP_ENOMEM, "out of memory");
  else if (st == MCP_ENOMEM) mcp__error_set(err, MCP_ENOMEM, "out of memory");
  mcp__free(path);
  free(cwd_buf); /* from getcwd() */
  discovery_clear(&dc);
  return st;
}
