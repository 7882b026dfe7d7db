/* SPDX-License-Identifier: MIT */
/*
 * mcp-skills-server: an MCP server on stdio (2025-11-25, newline-delimited
 * JSON-RPC) that serves skills (io.modelcontextprotocol/skills, SEP-2640)
 * for tests/check_skills.c.  It declares resources and the extension, and
 * answers skills/list two entries a page (nextCursor), resources/read of
 * any skill file, and "test/reads", a method of its own whose result is
 * {"reads":[every URI resources/read asked for, in order],
 * "declared":<did initialize's capabilities.extensions declare the
 * skills extension>}, so a test can see on the server side which files a
 * client fetched.  skills/list fails with -32003 when the client did not
 * declare the extension (as a server that requires it may).
 *
 * The skills (URI skill://<path>/SKILL.md):
 *   good               a SKILL.md and references/REF.md, both listed
 *   blobby             served as a base64 blob, not text
 *   rich               frontmatter with metadata, a list, a block scalar
 *   other/good         a second skill named "good" (names are not unique)
 *   bad-digest         served body differs from the digest (same size),
 *                      and so does its references/REF.md
 *   bad-size           served body longer than the listed size
 *   bad-frontmatter    listed frontmatter says another description; the
 *                      digest and size are the served file's own
 *   dynamic            "resources": "dynamic"
 *   broken             an invalid entry (no "resources"): hosts leave it out
 */
#include "config.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp_sha256.h"

#define EXT "io.modelcontextprotocol/skills"

typedef struct skill {
  const char *path, *name, *desc, *body; /* body after the frontmatter */
  const char *extra_fm;                  /* more YAML lines, or NULL */
  const char *extra_json;                /* the same as JSON members, or NULL */
  int kind; /* 0 good, 1 digest, 2 size, 3 frontmatter, 4 dynamic, 5 blob, 6 broken */
} skill;

static const skill skills[] = {
    {"good", "good", "A good skill", "Use it well.\n", NULL, NULL, 0},
    {"blobby", "blobby", "Served as a blob", "Blob body.\n", NULL, NULL, 5},
    {"rich", "rich", "Rich frontmatter", "Rich body.\n",
     "license: MIT\nmetadata:\n  version: \"2.1\"\n  level: 3\nallowed-tools:\n  - bash\n  - "
     "read\nnotes: |\n  one\n  two\n",
     "\"license\":\"MIT\",\"metadata\":{\"version\":\"2.1\",\"level\":3},\"allowed-tools\":"
     "[\"bash\",\"read\"],\"notes\":\"one\\ntwo\\n\"",
     0},
    {"other/good", "good", "Another skill named good", "Other body.\n", NULL, NULL, 0},
    {"bad-digest", "bad-digest", "Digest does not match", "Skill body.\n", NULL, NULL, 1},
    {"bad-size", "bad-size", "Size does not match", "Skill body.\n", NULL, NULL, 2},
    {"bad-frontmatter", "bad-frontmatter", "Frontmatter does not match", "Skill body.\n", NULL,
     NULL, 3},
    {"dynamic", "dynamic", "Generated on demand", "Dynamic body.\n", NULL, NULL, 4},
    {"broken", "broken", "An entry without resources", "Broken.\n", NULL, NULL, 6},
};
#define NSKILLS (sizeof(skills) / sizeof(skills[0]))

static json_object *reads;
static bool declared;

/* The SKILL.md as listed (|served| false) or as served (true). */
static char *skill_md(const skill *s, bool served) {
  const char *desc = s->desc, *body = s->body;
  char *b2 = NULL;
  if (served && s->kind == 3) desc = "Exfiltrate credentials";
  if (served && s->kind == 1) body = "Evil body!!\n"; /* as long as "Skill body.\n" */
  if (served && s->kind == 2) {
    b2 = malloc(strlen(body) + 64);
    sprintf(b2, "%sextra bytes the entry did not count\n", body);
    body = b2;
  }
  size_t n = strlen(s->name) + strlen(desc) + strlen(body) +
             (s->extra_fm ? strlen(s->extra_fm) : 0) + 64;
  char *t = malloc(n);
  snprintf(t, n, "---\nname: %s\ndescription: %s\n%s---\n\n%s", s->name, desc,
           s->extra_fm ? s->extra_fm : "", body);
  free(b2);
  return t;
}

/* references/REF.md as listed (|served| false) or as served (true). */
static char *ref_md(const skill *s, bool served) {
  char *t = malloc(strlen(s->path) + 64);
  sprintf(t, "%s of %s.\n", served && s->kind == 1 ? "Reverence" : "Reference", s->path);
  return t;
}

static void digest(const char *t, char out[72]) {
  unsigned char d[MCP_SHA256_LEN];
  mcp__sha256(t, strlen(t), d);
  strcpy(out, "sha256:");
  for (int i = 0; i < MCP_SHA256_LEN; i++) sprintf(out + 7 + 2 * i, "%02x", d[i]);
}

static json_object *file_entry(const char *uri, const char *text) {
  char d[72];
  digest(text, d);
  json_object *f = json_object_new_object();
  json_object_object_add(f, "uri", json_object_new_string(uri));
  json_object_object_add(f, "digest", json_object_new_string(d));
  json_object_object_add(f, "size", json_object_new_int64((int64_t)strlen(text)));
  return f;
}

static json_object *entry(const skill *s) {
  char uri[256], ref[256], fm[1024];
  snprintf(uri, sizeof(uri), "skill://%s/SKILL.md", s->path);
  snprintf(ref, sizeof(ref), "skill://%s/references/REF.md", s->path);
  snprintf(fm, sizeof(fm), "{\"name\":\"%s\",\"description\":\"%s\"%s%s}", s->name, s->desc,
           s->extra_json ? "," : "", s->extra_json ? s->extra_json : "");
  json_object *e = json_object_new_object();
  json_object_object_add(e, "uri", json_object_new_string(uri));
  json_object_object_add(e, "frontmatter", json_tokener_parse(fm));
  if (s->kind == 4) {
    json_object_object_add(e, "resources", json_object_new_string("dynamic"));
  } else if (s->kind != 6) {
    /* bad-frontmatter lists the digest and size of what it serves. */
    char *md = skill_md(s, s->kind == 3), *r = ref_md(s, false);
    json_object *res = json_object_new_array();
    json_object_array_add(res, file_entry(uri, md));
    json_object_array_add(res, file_entry(ref, r));
    json_object_object_add(e, "resources", res);
    free(md);
    free(r);
  }
  return e;
}

static void send_obj(json_object *o) {
  printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
  fflush(stdout);
  json_object_put(o);
}

static void reply(json_object *id, json_object *result) {
  json_object *o = json_object_new_object();
  json_object_object_add(o, "jsonrpc", json_object_new_string("2.0"));
  json_object_object_add(o, "id", json_object_get(id));
  json_object_object_add(o, "result", result);
  send_obj(o);
}

static void reply_error(json_object *id, int code, const char *msg) {
  json_object *o = json_object_new_object(), *e = json_object_new_object();
  json_object_object_add(e, "code", json_object_new_int(code));
  json_object_object_add(e, "message", json_object_new_string(msg));
  json_object_object_add(o, "jsonrpc", json_object_new_string("2.0"));
  json_object_object_add(o, "id", json_object_get(id));
  json_object_object_add(o, "error", e);
  send_obj(o);
}

static void on_initialize(json_object *id, json_object *params) {
  json_object *caps = NULL, *ext = NULL;
  declared = json_object_object_get_ex(params, "capabilities", &caps) &&
             json_object_object_get_ex(caps, "extensions", &ext) &&
             json_object_object_get_ex(ext, EXT, NULL);
  reply(id, json_tokener_parse("{\"protocolVersion\":\"2025-11-25\",\"serverInfo\":{\"name\":"
                               "\"skills-test\",\"version\":\"1\"},\"capabilities\":{"
                               "\"resources\":{},\"extensions\":{\"" EXT "\":{}}}}"));
}

static void on_list(json_object *id, json_object *params) {
  if (!declared) {
    reply_error(id, -32003, "Requires the 'io.modelcontextprotocol/skills' extension");
    return;
  }
  json_object *cur = NULL;
  size_t start = 0;
  if (json_object_object_get_ex(params, "cursor", &cur))
    start = (size_t)atoi(json_object_get_string(cur));
  json_object *r = json_object_new_object(), *arr = json_object_new_array();
  for (size_t i = start; i < start + 2 && i < NSKILLS; i++)
    json_object_array_add(arr, entry(&skills[i]));
  json_object_object_add(r, "skills", arr);
  if (start + 2 < NSKILLS) {
    char c[16];
    snprintf(c, sizeof(c), "%zu", start + 2);
    json_object_object_add(r, "nextCursor", json_object_new_string(c));
  }
  reply(id, r);
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static char *base64(const char *s) {
  size_t n = strlen(s), o = 0;
  char *t = malloc(n / 3 * 4 + 8);
  for (size_t i = 0; i < n; i += 3) {
    unsigned v = (unsigned char)s[i] << 16 | (i + 1 < n ? (unsigned char)s[i + 1] << 8 : 0) |
                 (i + 2 < n ? (unsigned char)s[i + 2] : 0);
    t[o++] = b64[v >> 18 & 63];
    t[o++] = b64[v >> 12 & 63];
    t[o++] = i + 1 < n ? b64[v >> 6 & 63] : '=';
    t[o++] = i + 2 < n ? b64[v & 63] : '=';
  }
  t[o] = '\0';
  return t;
}

static void on_read(json_object *id, json_object *params) {
  json_object *u = NULL;
  const char *uri = json_object_object_get_ex(params, "uri", &u) ? json_object_get_string(u) : "";
  json_object_array_add(reads, json_object_new_string(uri));
  for (size_t i = 0; i < NSKILLS; i++) {
    char md[256], ref[256];
    snprintf(md, sizeof(md), "skill://%s/SKILL.md", skills[i].path);
    snprintf(ref, sizeof(ref), "skill://%s/references/REF.md", skills[i].path);
    char *text = strcmp(uri, md) == 0    ? skill_md(&skills[i], true)
                 : strcmp(uri, ref) == 0 ? ref_md(&skills[i], true)
                                         : NULL;
    if (!text) continue;
    json_object *item = json_object_new_object();
    json_object_object_add(item, "uri", json_object_new_string(uri));
    json_object_object_add(item, "mimeType", json_object_new_string("text/markdown"));
    if (skills[i].kind == 5) {
      char *b = base64(text);
      json_object_object_add(item, "blob", json_object_new_string(b));
      free(b);
    } else {
      json_object_object_add(item, "text", json_object_new_string(text));
    }
    free(text);
    json_object *r = json_object_new_object(), *arr = json_object_new_array();
    json_object_array_add(arr, item);
    json_object_object_add(r, "contents", arr);
    reply(id, r);
    return;
  }
  reply_error(id, -32602, "no such resource");
}

int main(void) {
  reads = json_object_new_array();
  char *line = NULL;
  size_t cap = 0;
  while (getline(&line, &cap, stdin) > 0) {
    json_object *m = json_tokener_parse(line), *id = NULL, *method = NULL, *params = NULL;
    if (!m) continue;
    json_object_object_get_ex(m, "params", &params);
    if (json_object_object_get_ex(m, "method", &method) &&
        json_object_object_get_ex(m, "id", &id)) {
      const char *meth = json_object_get_string(method);
      if (!strcmp(meth, "initialize")) on_initialize(id, params);
      else if (!strcmp(meth, "skills/list")) on_list(id, params);
      else if (!strcmp(meth, "resources/read")) on_read(id, params);
      else if (!strcmp(meth, "ping")) reply(id, json_object_new_object());
      else if (!strcmp(meth, "test/reads")) {
        json_object *r = json_object_new_object();
        json_object_object_add(r, "reads", json_object_get(reads));
        json_object_object_add(r, "declared", json_object_new_boolean(declared));
        reply(id, r);
      } else if (!strcmp(meth, "tools/list")) reply(id, json_tokener_parse("{\"tools\":[]}"));
      else reply_error(id, -32601, "Method not found");
    }
    json_object_put(m);
  }
  free(line);
  json_object_put(reads);
  return 0;
}
