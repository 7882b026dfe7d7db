/* SPDX-License-Identifier: MIT */
/*
 * mcp_skills_parse.h: the pure half of the skills extension
 * (io.modelcontextprotocol/skills, SEP-2640): a skills/list entry checked
 * and read into a struct, a SKILL.md's YAML frontmatter read into a JSON
 * object, the frontmatter compared with the entry's, and a file's bytes
 * checked against its entry (size, sha256 digest).  No I/O, no threads, no
 * globals (fuzzed by fuzz/fuzz_skills.c).  lib/mcp_skills.c does the
 * requests.
 */
#ifndef MCP_SKILLS_PARSE_H
#define MCP_SKILLS_PARSE_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcp_int.h"

/* One file of a skill's manifest ("resources"). */
typedef struct mcp_skill_file {
  char *uri;
  char digest[72]; /* "sha256:" and 64 lowercase hex digits */
  uint64_t size;
} mcp_skill_file;

/* A checked skills/list (or skills/get) entry. */
typedef struct mcp_skill_entry {
  char *uri;                /* of the skill's SKILL.md */
  char *name, *description; /* frontmatter.name and .description */
  json_object *frontmatter; /* own reference */
  bool dynamic;             /* "resources": "dynamic": nothing to verify bytes against */
  mcp_skill_file *files;    /* the manifest; none when dynamic */
  size_t nfiles;
  char *json; /* the entry as compact JSON text */
} mcp_skill_entry;

/* A manifest longer than this is refused (the extension's limit is 512;
 * hosts MAY take more: this only bounds the work on a hostile list). */
#define MCP_SKILL_MAX_FILES 65536

/*
 * mcp__skill_entry_parse() checks |entry| (one element of skills/list's
 * "skills") against the extension's rules: a "uri" ending in
 * "/SKILL.md" whose last path segment before it is frontmatter.name; a
 * "frontmatter" object with string "name" and "description"; "resources"
 * either "dynamic" or an array of {uri, digest "sha256:<64 lowercase
 * hex>", size} objects, each uri once, each within the skill's directory,
 * one of them the SKILL.md itself.  On MCP_OK *out is filled (clear it
 * with mcp__skill_entry_clear()); on MCP_EPROTO |why| (|whylen| bytes)
 * says which rule the entry broke; MCP_ENOMEM.
 */
mcp_status mcp__skill_entry_parse(json_object *entry, mcp_skill_entry *out, char *why,
                                  size_t whylen);
void mcp__skill_entry_clear(mcp_skill_entry *e);

/*
 * mcp__skill_frontmatter() reads the YAML frontmatter at the start of a
 * SKILL.md (|len| bytes): a "---" line, the YAML, a "---" line.  The YAML
 * is read as a subset of YAML 1.2 (core schema): block mappings and
 * sequences, plain, single- and double-quoted scalars, literal and folded
 * block scalars, one-line flow sequences and mappings, comments.  Anchors,
 * aliases, tags, complex keys, multi-line quoted or flow scalars and
 * documents it cannot read fail, so that a frontmatter is never taken for
 * something it is not (a failure to parse is a verification failure).  On
 * MCP_OK *out is a new JSON object; on MCP_EPROTO |why| says what is wrong
 * (with a line number); MCP_ENOMEM.
 */
mcp_status mcp__skill_frontmatter(const char *text, size_t len, json_object **out, char *why,
                                  size_t whylen);

/*
 * mcp__skill_json_equal() compares two JSON values as the extension
 * compares frontmatter, field by field: objects by their members in any
 * order, arrays in order, numbers by value (1 equals 1.0), strings by
 * bytes.  On a difference |why| names the first field that differs (a
 * path such as "metadata.version") and false is returned.
 */
bool mcp__skill_json_equal(json_object *a, json_object *b, char *why, size_t whylen);

/*
 * mcp__skill_check_file() checks |len| bytes of content against manifest
 * entry |f|: the size first, then the SHA-256 digest.  False with |why|
 * saying what differs.
 */
bool mcp__skill_check_file(const mcp_skill_file *f, const void *data, size_t len, char *why,
                           size_t whylen);

/*
 * mcp__skill_file_uri() resolves |file|, a file of the skill whose SKILL.md
 * is |skill_uri| (".../SKILL.md"): a path relative to the skill's root
 * ("references/GUIDE.md"), as a SKILL.md refers to its files, or the
 * file's full URI (one with "://"), which must lie in the skill's
 * directory.  The path's segments must be non-empty, not "." or "..", and
 * hold no '\', '?', '#' or control character, so that the result never
 * leaves the skill.  On MCP_OK *out is the file's URI (new); MCP_EINVAL
 * with |why| set; MCP_ENOMEM.
 */
mcp_status mcp__skill_file_uri(const char *skill_uri, const char *file, char **out, char *why,
                               size_t whylen);

#endif /* MCP_SKILLS_PARSE_H */
