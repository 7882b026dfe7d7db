/* SPDX-License-Identifier: MIT */
/*
 * mcp_skills.c: the client side of the skills extension
 * (io.modelcontextprotocol/skills, SEP-2640): skills/list into an
 * immutable mcp_skill_list, and loading a skill: resources/read of its
 * SKILL.md, checked against the listed entry (size, sha256 digest,
 * frontmatter field by field) before the text is handed out; and reading
 * one supporting file the entry lists (resolved within the skill's
 * directory, size and digest checked).  Only the file asked for is ever
 * read: nothing on connect, on listing or on loading (the extension's
 * lazy retrieval), and never a file the entry does not list.
 *
 * Owns: the list object and its entries.  Must not know about: the
 * manager (it calls in with a server's client), transports, the YAML and
 * entry rules (mcp_skills_parse.c).
 */
#include "config.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp_base64.h"
#include "mcp_client.h"
#include "mcp_jsonrpc.h"
#include "mcp_skills.h"

mcp_skill_list *mcp__skill_list_new(void) { return mcp__calloc(1, sizeof(mcp_skill_list)); }

MCP_EXTERN void mcp_skill_list_free(mcp_skill_list *l) {
  if (!l) return;
  for (size_t i = 0; i < l->n; i++) {
    mcp__free(l->items[i].server);
    mcp__free(l->items[i].label);
    mcp__skill_entry_clear(&l->items[i].e);
  }
  mcp__free(l->items);
  mcp__free(l);
}

MCP_EXTERN size_t mcp_skill_list_count(const mcp_skill_list *l) { return l ? l->n : 0; }

static const mcp_skill_item *item(const mcp_skill_list *l, size_t i) {
  return l && i < l->n ? &l->items[i] : NULL;
}

MCP_EXTERN const char *mcp_skill_list_server(const mcp_skill_list *l, size_t i) {
  const mcp_skill_item *it = item(l, i);
  return it ? it->server : NULL;
}
MCP_EXTERN const char *mcp_skill_list_uri(const mcp_skill_list *l, size_t i) {
  const mcp_skill_item *it = item(l, i);
  return it ? it->e.uri : NULL;
}
MCP_EXTERN const char *mcp_skill_list_name(const mcp_skill_list *l, size_t i) {
  const mcp_skill_item *it = item(l, i);
  return it ? it->e.name : NULL;
}
MCP_EXTERN const char *mcp_skill_list_description(const mcp_skill_list *l, size_t i) {
  const mcp_skill_item *it = item(l, i);
  return it ? it->e.description : NULL;
}
MCP_EXTERN const char *mcp_skill_list_json(const mcp_skill_list *l, size_t i) {
  const mcp_skill_item *it = item(l, i);
  return it ? it->e.json : NULL;
}

MCP_EXTERN mcp_status mcp_skill_list_find(const mcp_skill_list *l, const char *server,
                                          const char *key, size_t *index, mcp_error *err) {
  if (!l || !key || !index) return mcp__error_set(err, MCP_EINVAL, "invalid argument");
  size_t hits = 0, at = 0;
  for (size_t i = 0; i < l->n; i++) {
    const mcp_skill_item *it = &l->items[i];
    if (server && (!it->server || strcmp(it->server, server) != 0)) continue;
    if (strcmp(it->e.uri, key) == 0) { /* a URI is unique within a server */
      *index = i;
      return MCP_OK;
    }
    if (strcmp(it->e.name, key) == 0 && hits++ == 0) at = i;
  }
  char q[MCP_QUOTE_SHORT];
  mcp__quote(q, sizeof(q), key, strlen(key));
  if (hits == 1) {
    *index = at;
    return MCP_OK;
  }
  if (hits == 0) return mcp__error_set(err, MCP_ENOTFOUND, "no skill named \"%s\"", q);
  /* Names are labels, not identifiers: the host must disambiguate. */
  return mcp__error_set(err, MCP_EINVAL,
                        "%zu skills are named \"%s\"%s: give the skill's URI instead", hits, q,
                        server ? "" : " (or the server too)");
}

/* How errors name the server of |c|: its serverInfo.name, else "the server". */
static char *label_of(mcp_client *c) {
  const char *info = mcp_client_server_info(c);
  json_object *r = info ? mcp__jsonrpc_parse(info, strlen(info), NULL) : NULL, *si = NULL,
              *meta = NULL, *name = NULL;
  if (r && !json_object_object_get_ex(r, "serverInfo", &si) &&
      json_object_object_get_ex(r, "_meta", &meta))
    json_object_object_get_ex(meta, "io.modelcontextprotocol/serverInfo", &si);
  char *out = NULL;
  if (si && json_object_object_get_ex(si, "name", &name) &&
      json_object_is_type(name, json_type_string)) {
    char q[MCP_QUOTE_SHORT];
    out = mcp__strdup(mcp__quote(q, sizeof(q), json_object_get_string(name),
                                 (size_t)json_object_get_string_len(name)));
  } else {
    out = mcp__strdup("");
  }
  json_object_put(r);
  return out;
}

/* Does the server of |c| declare the skills extension? */
static bool declares_skills(mcp_client *c) {
  const char *info = mcp_client_server_info(c);
  json_object *r = info ? mcp__jsonrpc_parse(info, strlen(info), NULL) : NULL, *caps = NULL,
              *ext = NULL, *v = NULL;
  bool yes = r && json_object_object_get_ex(r, "capabilities", &caps) &&
             json_object_object_get_ex(caps, "extensions", &ext) &&
             json_object_object_get_ex(ext, MCP_SKILLS_EXTENSION, &v) &&
             json_object_is_type(v, json_type_object);
  json_object_put(r);
  return yes;
}

static mcp_status add_items(mcp_client *c, const char *server, const char *label, json_object *arr,
                            mcp_skill_list *l, mcp_error *err) {
  const mcp_logger *lg = mcp__client_logger(c);
  size_t n = json_object_array_length(arr);
  for (size_t i = 0; i < n; i++) {
    mcp_skill_entry e;
    char why[256];
    mcp_status st = mcp__skill_entry_parse(json_object_array_get_idx(arr, i), &e, why, sizeof(why));
    if (st == MCP_ENOMEM) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
    if (st) {
      if (lg->fn)
        mcp__log(lg, MCP_LOG_WARN, "server \"%s\": skills/list entry %zu left out: %s", label, i,
                 why);
      continue;
    }
    if (l->n == l->cap) {
      size_t nc = l->cap ? l->cap * 2 : 8;
      mcp_skill_item *g = mcp__reallocarray(l->items, nc, sizeof(*g));
      if (!g) {
        mcp__skill_entry_clear(&e);
        return mcp__error_set(err, MCP_ENOMEM, "out of memory");
      }
      l->items = g;
      l->cap = nc;
    }
    mcp_skill_item *it = &l->items[l->n];
    it->e = e;
    it->server = server ? mcp__strdup(server) : NULL;
    it->label = mcp__strdup(label);
    l->n++; /* counted now: freed with the list whatever follows */
    if ((server && !it->server) || !it->label)
      return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  }
  return MCP_OK;
}

mcp_status mcp__skills_list_into(mcp_client *c, const char *server, const mcp_call_options *opts,
                                 mcp_skill_list *l, mcp_error *err) {
  char *label = server ? mcp__strdup(server) : label_of(c);
  if (!label) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  mcp_status st;
  if (!declares_skills(c)) {
    st = mcp__error_set(err, MCP_ENOTFOUND,
                        "server \"%s\" does not declare the skills extension (%s)", label,
                        MCP_SKILLS_EXTENSION);
    mcp__free(label);
    return st;
  }
  char *text = NULL;
  st = mcp__client_list(c, "skills/list", "skills", opts, &text, err);
  if (st == MCP_OK) {
    json_object *arr = mcp__jsonrpc_parse(text, strlen(text), NULL);
    st = arr ? add_items(c, server, label, arr, l, err)
             : mcp__error_set(err, MCP_ENOMEM, "out of memory");
    json_object_put(arr);
  }
  mcp__free(text);
  mcp__free(label);
  return st;
}

MCP_EXTERN mcp_status mcp_client_list_skills(mcp_client *c, const mcp_call_options *opts,
                                             mcp_skill_list **out, mcp_error *err) {
  if (out) *out = NULL;
  if (!c || !out) return mcp__error_set(err, MCP_EINVAL, "invalid argument");
  mcp_skill_list *l = mcp__skill_list_new();
  if (!l) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  mcp_status st = mcp__skills_list_into(c, NULL, opts, l, err);
  if (st) mcp_skill_list_free(l);
  else *out = l;
  return st;
}

/* The bytes of the contents item for |uri| in ReadResourceResult |r|:
 * text as is, a blob decoded.  *data is new (mcp_free).  |what| names the
 * file in *why ("SKILL.md", "file"). */
static mcp_status content_bytes(json_object *r, const char *uri, char **data, size_t *len,
                                const char **why, bool skill_md) {
  json_object *contents = NULL;
  *data = NULL;
  if (!json_object_object_get_ex(r, "contents", &contents) ||
      !json_object_is_type(contents, json_type_array))
    return *why = "the resources/read result has no \"contents\" array", MCP_EPROTO;
  for (size_t i = 0; i < json_object_array_length(contents); i++) {
    json_object *it = json_object_array_get_idx(contents, i), *u = NULL, *t = NULL;
    if (!json_object_object_get_ex(it, "uri", &u) || !json_object_is_type(u, json_type_string) ||
        strcmp(json_object_get_string(u), uri) != 0)
      continue;
    if (json_object_object_get_ex(it, "text", &t) && json_object_is_type(t, json_type_string)) {
      *len = (size_t)json_object_get_string_len(t);
      *data = mcp__malloc(*len + 1);
      if (!*data) return MCP_ENOMEM;
      memcpy(*data, json_object_get_string(t), *len);
      (*data)[*len] = '\0';
      return MCP_OK;
    }
    if (json_object_object_get_ex(it, "blob", &t) && json_object_is_type(t, json_type_string)) {
      mcp_status st = mcp__base64_decode(json_object_get_string(t),
                                         (size_t)json_object_get_string_len(t), MCP_B64_STD,
                                         (unsigned char **)data, len);
      if (st != MCP_EINVAL) return st;
      *why = skill_md ? "the SKILL.md blob is not base64" : "the file's blob is not base64";
      return MCP_EPROTO;
    }
    *why = skill_md ? "the SKILL.md contents item has neither text nor blob"
                    : "the file's contents item has neither text nor blob";
    return MCP_EPROTO;
  }
  *why = skill_md ? "the resources/read result has no contents for the SKILL.md"
                  : "the resources/read result has no contents for the file";
  return MCP_EPROTO;
}

/* Checks |data| against the entry of |it|: size and digest (unless the
 * entry is dynamic), then the frontmatter.  False with |why| set. */
static mcp_status verify(const mcp_skill_item *it, const char *data, size_t len, char *why,
                         size_t whylen) {
  const mcp_skill_entry *e = &it->e;
  for (size_t i = 0; !e->dynamic && i < e->nfiles; i++)
    if (strcmp(e->files[i].uri, e->uri) == 0 &&
        !mcp__skill_check_file(&e->files[i], data, len, why, whylen))
      return MCP_EPROTO;
  json_object *fm = NULL;
  char fwhy[200];
  mcp_status st = mcp__skill_frontmatter(data, len, &fm, fwhy, sizeof(fwhy));
  if (st == MCP_ENOMEM) return st;
  if (st) {
    snprintf(why, whylen, "its frontmatter cannot be read: %s", fwhy);
    return MCP_EPROTO;
  }
  if (!mcp__skill_json_equal(e->frontmatter, fm, fwhy, sizeof(fwhy))) {
    snprintf(why, whylen, "its frontmatter differs from the skills/list entry's: %s", fwhy);
    st = MCP_EPROTO;
  }
  json_object_put(fm);
  return st;
}

/* resources/read of |uri|, a file of the skill of |it|: its bytes in
 * *data (new), or the failure with err->message naming the server, the
 * skill and the file; MCP_EPROTO with |why| set (and err untouched) when
 * the result holds no content for |uri|. */
static mcp_status read_bytes(mcp_client *c, const mcp_skill_item *it, const char *uri,
                             const mcp_call_options *opts, char **data, size_t *len, char *why,
                             size_t whylen, mcp_error *err) {
  const char *label = it->label ? it->label : "";
  char *res = NULL;
  *data = NULL;
  why[0] = '\0';
  mcp_status st = mcp_client_read_resource(c, uri, opts, &res, err);
  if (st) {
    if (err && err->message) {
      /* err->message is plain malloc'd (mcp__error_set). */
      size_t need = strlen(label) + strlen(it->e.name) + strlen(uri) + strlen(err->message) + 64;
      char *m = malloc(need);
      if (m) {
        snprintf(m, need, "server \"%s\": skill \"%s\" (%s): resources/read: %s", label, it->e.name,
                 uri, err->message);
        free(err->message);
        err->message = m;
      }
    }
    return st;
  }
  json_object *r = mcp__jsonrpc_parse(res, strlen(res), NULL);
  mcp__free(res);
  if (!r) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  const char *cwhy = NULL;
  st = content_bytes(r, uri, data, len, &cwhy, strcmp(uri, it->e.uri) == 0);
  json_object_put(r);
  if (st == MCP_EPROTO) snprintf(why, whylen, "%s", cwhy);
  if (st == MCP_ENOMEM) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  return st;
}

mcp_status mcp__skill_load(mcp_client *c, const mcp_skill_item *it, const mcp_call_options *opts,
                           char **text, size_t *len, mcp_error *err) {
  const char *label = it->label ? it->label : "";
  char *data = NULL;
  size_t n = 0;
  char why[400];
  mcp_status st = read_bytes(c, it, it->e.uri, opts, &data, &n, why, sizeof(why), err);
  if (st && !why[0]) return st;
  if (st == MCP_OK) st = verify(it, data, n, why, sizeof(why));
  if (st == MCP_ENOMEM) {
    mcp__free(data);
    return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  }
  if (st) {
    mcp__free(data);
    return mcp__error_set(err, st,
                          "server \"%s\": skill \"%s\" (%s) not loaded: its SKILL.md does not "
                          "match the skills/list entry: %s",
                          label, it->e.name, it->e.uri, why);
  }
  *text = data;
  if (len) *len = n;
  return MCP_OK;
}

MCP_EXTERN mcp_status mcp_client_load_skill(mcp_client *c, const mcp_skill_list *l, size_t i,
                                            const mcp_call_options *opts, char **skill_md,
                                            size_t *len, mcp_error *err) {
  if (skill_md) *skill_md = NULL;
  if (len) *len = 0;
  const mcp_skill_item *it = item(l, i);
  if (!c || !it || !skill_md) return mcp__error_set(err, MCP_EINVAL, "invalid argument");
  return mcp__skill_load(c, it, opts, skill_md, len, err);
}

mcp_status mcp__skill_read_file(mcp_client *c, const mcp_skill_item *it, const char *file,
                                const mcp_call_options *opts, char **data, size_t *len,
                                mcp_error *err) {
  const char *label = it->label ? it->label : "";
  const mcp_skill_entry *e = &it->e;
  char why[400], q[MCP_QUOTE_SHORT];
  char *uri = NULL;
  mcp_status st = mcp__skill_file_uri(e->uri, file, &uri, why, sizeof(why));
  if (st)
    return mcp__error_set(err, st, "server \"%s\": skill \"%s\" (%s): file \"%s\": %s", label,
                          e->name, e->uri, mcp__quote(q, sizeof(q), file, strlen(file)), why);
  /* A listed skill's files are its manifest: an unlisted one is a
   * verification failure, so it is never read.  A dynamic skill has no
   * manifest; its files are read unverified. */
  const mcp_skill_file *f = NULL;
  for (size_t k = 0; k < e->nfiles && !f; k++)
    if (strcmp(e->files[k].uri, uri) == 0) f = &e->files[k];
  if (!e->dynamic && !f) {
    st = mcp__error_set(err, MCP_ENOTFOUND,
                        "server \"%s\": skill \"%s\" lists no file \"%s\" in its resources (%zu "
                        "files): not read",
                        label, e->name, mcp__quote(q, sizeof(q), uri, strlen(uri)), e->nfiles);
    mcp__free(uri);
    return st;
  }
  char *bytes = NULL;
  size_t n = 0;
  st = read_bytes(c, it, uri, opts, &bytes, &n, why, sizeof(why), err);
  if (st && !why[0]) {
    mcp__free(uri);
    return st;
  }
  if (st == MCP_OK && f && !mcp__skill_check_file(f, bytes, n, why, sizeof(why))) st = MCP_EPROTO;
  if (st) {
    mcp__free(bytes);
    st = mcp__error_set(err, st, "server \"%s\": skill \"%s\": file \"%s\" not used: %s", label,
                        e->name, mcp__quote(q, sizeof(q), uri, strlen(uri)), why);
    mcp__free(uri);
    return st;
  }
  mcp__free(uri);
  *data = bytes;
  if (len) *len = n;
  return MCP_OK;
}

MCP_EXTERN mcp_status mcp_client_read_skill_file(mcp_client *c, const mcp_skill_list *l, size_t i,
                                                 const char *file, const mcp_call_options *opts,
                                                 char **data, size_t *len, mcp_error *err) {
  if (data) *data = NULL;
  if (len) *len = 0;
  const mcp_skill_item *it = item(l, i);
  if (!c || !it || !file || !data) return mcp__error_set(err, MCP_EINVAL, "invalid argument");
  return mcp__skill_read_file(c, it, file, opts, data, len, err);
}
