/* SPDX-License-Identifier: MIT */
/*
 * fuzz_skills.c: libFuzzer target for the pure half of the skills
 * extension (mcp_skills_parse.h).  The input is read three ways:
 *
 *  - as a SKILL.md: mcp__skill_frontmatter() is MCP_OK with a JSON object
 *    that equals itself and its own printed-and-parsed copy, or MCP_EPROTO
 *    with a reason (MCP_ENOMEM only under an injected failure);
 *  - as JSON: when it is an object, mcp__skill_entry_parse() either
 *    accepts it (uri ends in /SKILL.md, name and description set, a
 *    manifest that lists the SKILL.md with well-formed digests, or
 *    "dynamic") or gives a reason; a SKILL.md-shaped text checked against
 *    each accepted manifest file never crashes;
 *  - as a file path of a skill: mcp__skill_file_uri() resolves it within
 *    the skill's directory, with no "." or ".." segment, or refuses it.
 *
 * Each is run once more with an allocation failure injected.
 */
#include "config.h"

#include <json-c/json.h>
#include <stdbool.h>

#include "fuzz_common.h"
#include "mcp_int.h"
#include "mcp_jsonrpc.h"
#include "mcp_skills_parse.h"

static void frontmatter(const char *in, size_t size, bool inject) {
  json_object *o = NULL;
  char why[200] = "";
  mcp_status st = mcp__skill_frontmatter(in, size, &o, why, sizeof(why));
  if (st != MCP_OK) {
    FUZZ_CHECK(st == MCP_EPROTO || (inject && st == MCP_ENOMEM));
    FUZZ_CHECK(o == NULL && why[0] != '\0');
    return;
  }
  FUZZ_CHECK(json_object_is_type(o, json_type_object));
  FUZZ_CHECK(mcp__skill_json_equal(o, o, why, sizeof(why)));
  size_t len = 0;
  char *text = mcp__json_dup_string(o, &len);
  json_object *back = text ? mcp__jsonrpc_parse(text, len, NULL) : NULL;
  if (back) FUZZ_CHECK(mcp__skill_json_equal(o, back, why, sizeof(why)));
  else FUZZ_CHECK(inject || !text);
  json_object_put(back);
  mcp__free(text);
  json_object_put(o);
}

static void entry(const char *in, size_t size, bool inject) {
  json_object *j = mcp__jsonrpc_parse(in, size, NULL);
  if (!j) return;
  mcp_skill_entry e;
  char why[200] = "";
  mcp_status st = mcp__skill_entry_parse(j, &e, why, sizeof(why));
  if (st != MCP_OK) {
    FUZZ_CHECK(st == MCP_EPROTO || (inject && st == MCP_ENOMEM));
    FUZZ_CHECK(why[0] != '\0');
  } else {
    size_t ul = strlen(e.uri);
    FUZZ_CHECK(ul >= 9 && strcmp(e.uri + ul - 9, "/SKILL.md") == 0);
    FUZZ_CHECK(e.name && e.description && e.json && e.frontmatter);
    FUZZ_CHECK(e.dynamic == (e.nfiles == 0));
    bool has = false;
    for (size_t i = 0; i < e.nfiles; i++) {
      FUZZ_CHECK(strncmp(e.files[i].digest, "sha256:", 7) == 0);
      has |= strcmp(e.files[i].uri, e.uri) == 0;
      (void)mcp__skill_check_file(&e.files[i], in, size, why, sizeof(why));
    }
    FUZZ_CHECK(e.dynamic || has);
    mcp__skill_entry_clear(&e);
  }
  json_object_put(j);
}

static void file_path(const char *in, size_t size) {
  static const char skill[] = "skill://acme/pdf/SKILL.md", dir[] = "skill://acme/pdf/";
  char *path = mcp__strndup(in, size), *uri = NULL, why[200] = "";
  if (!path) return;
  mcp_status st = mcp__skill_file_uri(skill, path, &uri, why, sizeof(why));
  if (st == MCP_OK) {
    FUZZ_CHECK(strncmp(uri, dir, sizeof(dir) - 1) == 0 && uri[sizeof(dir) - 1] != '\0');
    FUZZ_CHECK(!strstr(uri + sizeof(dir) - 2, "/../") && !strstr(uri + sizeof(dir) - 2, "/./"));
    FUZZ_CHECK(!strstr(uri + sizeof(dir) - 2, "//"));
  } else {
    FUZZ_CHECK(st == MCP_EINVAL && !uri && why[0] != '\0');
  }
  mcp__free(uri);
  mcp__free(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *in = (const char *)data;
  frontmatter(in, size, false);
  entry(in, size, false);
  file_path(in, size);
  mcp__alloc_fail_after((long)(size % 23));
  frontmatter(in, size, true);
  mcp__alloc_fail_after((long)(size % 7));
  entry(in, size, true);
  mcp__alloc_fail_after(-1);
  return 0;
}
