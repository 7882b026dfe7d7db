/* SPDX-License-Identifier: MIT */
/*
 * check_skills.c: the skills extension (io.modelcontextprotocol/skills,
 * SEP-2640).  The pure half (mcp_skills_parse.c) on fixed inputs: the YAML
 * frontmatter subset and what it refuses, entry validation, the file
 * checks.  The client and manager against tests/mcp-skills-server (a real
 * child on stdio, $MCP_SKILLS_SERVER), which records every resources/read
 * it gets: the listing (paged, invalid entries left out), a verified load
 * (text and blob), each tampered skill refused with its cause, the
 * extension declared in initialize only when the host opts in, no skill
 * file read except the SKILL.md of the skill loaded, and supporting files
 * read one at a time when asked, verified, never outside the listing.
 */
#include "config.h"

#include <json-c/json.h>

#include "check_util.h"
#include "mcp_int.h"
#include "mcp_skills_parse.h"
#include "mcpconn.h"

/* ---- the pure half ---------------------------------------------------------- */

static json_object *fm(const char *text, mcp_status want, const char *why_has) {
  json_object *o = NULL;
  char why[256] = "";
  mcp_status st = mcp__skill_frontmatter(text, strlen(text), &o, why, sizeof(why));
  ck_assert_msg(st == want, "%s: status %d, want %d (%s)", text, st, want, why);
  if (why_has) ck_assert_msg(strstr(why, why_has), "why \"%s\" lacks \"%s\"", why, why_has);
  return o;
}

static void fm_is(const char *text, const char *json) {
  json_object *o = fm(text, MCP_OK, NULL), *want = json_tokener_parse(json);
  char why[256] = "";
  ck_assert_ptr_nonnull(want);
  ck_assert_msg(mcp__skill_json_equal(o, want, why, sizeof(why)), "%s: %s; got %s", text, why,
                json_object_to_json_string(o));
  json_object_put(o);
  json_object_put(want);
}

START_TEST(frontmatter_subset) {
  fm_is("---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n---\n"
        "\nbody\n",
        "{\"name\":\"pdf-processing\",\"description\":\"Extract, fill, and assemble PDF "
        "documents\"}");
  /* CRLF, scalars of the core schema, quoting, comments. */
  fm_is("---\r\nname: x # a comment\r\nn: 42\r\nf: 1.5\r\nh: 0x1F\r\nt: true\r\nz: ~\r\n"
        "e:\r\nq: \"a\\tb \\u00e9\"\r\ns: 'it''s'\r\nv: \"2.1\"\r\n---\r\n",
        "{\"name\":\"x\",\"n\":42,\"f\":1.5,\"h\":31,\"t\":true,\"z\":null,\"e\":null,"
        "\"q\":\"a\\tb \\u00e9\",\"s\":\"it's\",\"v\":\"2.1\"}");
  /* Nesting, sequences (indented and not), flow collections, block scalars. */
  fm_is("---\nmetadata:\n  version: 2\n  deep:\n    k: v\ntools:\n- a\n- b\nmore:\n  - c\n"
        "flow: [1, \"two\", {k: v}]\nlit: |\n  one\n    two\n\n  three\nfold: >-\n  a\n  b\n\n"
        "  c\nplain: multi\n  line\n---\n",
        "{\"metadata\":{\"version\":2,\"deep\":{\"k\":\"v\"}},\"tools\":[\"a\",\"b\"],"
        "\"more\":[\"c\"],\"flow\":[1,\"two\",{\"k\":\"v\"}],\"lit\":\"one\\n  two\\n\\nthree\\n\","
        "\"fold\":\"a b\\nc\",\"plain\":\"multi line\"}");
  /* 1 and 1.0 are the same number to a JSON comparison. */
  fm_is("---\nv: 1.0\n---\n", "{\"v\":1}");
}
END_TEST

START_TEST(frontmatter_refused) {
  fm("# no frontmatter\n", MCP_EPROTO, "does not start");
  fm("---\nname: x\n", MCP_EPROTO, "no closing");
  fm("---\nname: &a x\n---\n", MCP_EPROTO, "anchors");
  fm("---\nname: *a\n---\n", MCP_EPROTO, "anchors");
  fm("---\nname: !!str x\n---\n", MCP_EPROTO, "tags");
  fm("---\nname: a\nname: b\n---\n", MCP_EPROTO, "line 3: repeated key");
  fm("---\nname: \"open\n---\n", MCP_EPROTO, "not closed");
  fm("---\nname: x\n  more: y\n---\n", MCP_EPROTO, NULL);
  fm("---\n\tname: x\n---\n", MCP_EPROTO, "tab");
  fm("---\n- a\n---\n", MCP_EPROTO, "not a mapping");
  fm("---\nlist:\n  - k: v\n---\n", MCP_EPROTO, "mappings inside sequence items");
  fm("---\nname: a: b\n---\n", MCP_EPROTO, NULL);
  /* Deep nesting is refused, not recursed into without end. */
  char deep[4096] = "---\n";
  for (int i = 0; i < 40; i++) {
    size_t at = strlen(deep);
    snprintf(deep + at, sizeof(deep) - at, "%*sk%d:\n", 2 * i, "", i);
  }
  strcat(deep, "---\n");
  fm(deep, MCP_EPROTO, "too deep");
}
END_TEST

static mcp_status entry_st(const char *json, char *why, size_t n) {
  json_object *j = json_tokener_parse(json);
  ck_assert_ptr_nonnull(j);
  mcp_skill_entry e;
  mcp_status st = mcp__skill_entry_parse(j, &e, why, n);
  if (st == MCP_OK) mcp__skill_entry_clear(&e);
  json_object_put(j);
  return st;
}

#define D0 "sha256:0000000000000000000000000000000000000000000000000000000000000000"
START_TEST(entry_rules) {
  char why[256];
  ck_assert_int_eq(entry_st("{\"uri\":\"skill://a/b/SKILL.md\",\"frontmatter\":{\"name\":\"b\","
                            "\"description\":\"d\"},\"resources\":[{\"uri\":\"skill://a/b/"
                            "SKILL.md\",\"digest\":\"" D0 "\",\"size\":3}]}",
                            why, sizeof(why)),
                   MCP_OK);
  ck_assert_int_eq(entry_st("{\"uri\":\"skill://b/SKILL.md\",\"frontmatter\":{\"name\":\"b\","
                            "\"description\":\"d\"},\"resources\":\"dynamic\"}",
                            why, sizeof(why)),
                   MCP_OK);
  static const struct {
    const char *json, *why;
  } bad[] = {
      {"{\"uri\":\"skill://b/SKILL.md\",\"frontmatter\":{\"name\":\"b\",\"description\":\"d\"}}",
       "neither an array"},
      {"{\"uri\":\"skill://c/SKILL.md\",\"frontmatter\":{\"name\":\"b\",\"description\":\"d\"},"
       "\"resources\":\"dynamic\"}",
       "last path segment"},
      {"{\"uri\":\"skill://b/README.md\",\"frontmatter\":{\"name\":\"b\",\"description\":\"d\"},"
       "\"resources\":\"dynamic\"}",
       "/SKILL.md"},
      {"{\"uri\":\"skill://b/SKILL.md\",\"frontmatter\":{\"name\":\"b\"},\"resources\":\"dynamic\"}",
       "description"},
      {"{\"uri\":\"skill://b/SKILL.md\",\"frontmatter\":{\"name\":\"b\",\"description\":\"d\"},"
       "\"resources\":[{\"uri\":\"skill://b/SKILL.md\",\"digest\":\"sha256:AB\",\"size\":1}]}",
       "64 lowercase hex"},
      {"{\"uri\":\"skill://b/SKILL.md\",\"frontmatter\":{\"name\":\"b\",\"description\":\"d\"},"
       "\"resources\":[{\"uri\":\"skill://b/SKILL.md\",\"digest\":\"" D0 "\",\"size\":-1}]}",
       "non-negative"},
      {"{\"uri\":\"skill://b/SKILL.md\",\"frontmatter\":{\"name\":\"b\",\"description\":\"d\"},"
       "\"resources\":[{\"uri\":\"skill://b/x.md\",\"digest\":\"" D0 "\",\"size\":1}]}",
       "does not list the SKILL.md"},
      {"{\"uri\":\"skill://b/SKILL.md\",\"frontmatter\":{\"name\":\"b\",\"description\":\"d\"},"
       "\"resources\":[{\"uri\":\"skill://b/SKILL.md\",\"digest\":\"" D0 "\",\"size\":1},"
       "{\"uri\":\"skill://c/x.md\",\"digest\":\"" D0 "\",\"size\":1}]}",
       "outside the skill"},
      {"{\"uri\":\"skill://b/SKILL.md\",\"frontmatter\":{\"name\":\"b\",\"description\":\"d\"},"
       "\"resources\":[{\"uri\":\"skill://b/SKILL.md\",\"digest\":\"" D0 "\",\"size\":1},"
       "{\"uri\":\"skill://b/SKILL.md\",\"digest\":\"" D0 "\",\"size\":1}]}",
       "twice"},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    why[0] = '\0';
    ck_assert_int_eq(entry_st(bad[i].json, why, sizeof(why)), MCP_EPROTO);
    ck_assert_msg(strstr(why, bad[i].why), "%zu: \"%s\" lacks \"%s\"", i, why, bad[i].why);
  }
}
END_TEST

START_TEST(file_checks) {
  mcp_skill_file f = {.uri = "skill://x/SKILL.md", .size = 3};
  /* sha256("abc") */
  strcpy(f.digest, "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  char why[256];
  ck_assert(mcp__skill_check_file(&f, "abc", 3, why, sizeof(why)));
  ck_assert(!mcp__skill_check_file(&f, "abd", 3, why, sizeof(why)));
  ck_assert_ptr_nonnull(strstr(why, "digest"));
  ck_assert(!mcp__skill_check_file(&f, "abcd", 4, why, sizeof(why)));
  ck_assert_ptr_nonnull(strstr(why, "size is 4 bytes, the skills/list entry says 3"));
}
END_TEST

/* ---- against tests/mcp-skills-server ----------------------------------------------------- */

static mcp_client *connect_server(bool declare) {
  const char *argv[] = {test_env_path("MCP_SKILLS_SERVER"), NULL};
  mcp_client_options *o = mcp_client_options_new();
  ck_assert_int_eq(mcp_client_options_set_stdio(o, argv), MCP_OK);
  mcp_client_options_set_timeout_ms(o, 10000);
  if (declare)
    ck_assert_int_eq(mcp_client_options_set_extension(o, MCP_SKILLS_EXTENSION, NULL), MCP_OK);
  mcp_client *c = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_msg(mcp_client_connect(o, &c, &err) == MCP_OK, "connect: %s", err.message);
  mcp_client_options_free(o);
  return c;
}

/* The server's record: the URIs read, in order, as one JSON array text. */
static json_object *server_record(mcp_client *c) {
  char *res = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp_client_request(c, "test/reads", NULL, NULL, &res, &err), MCP_OK);
  json_object *r = json_tokener_parse(res);
  mcp_free(res);
  return r;
}

static size_t reads_count(mcp_client *c) {
  json_object *r = server_record(c), *reads = NULL;
  ck_assert(json_object_object_get_ex(r, "reads", &reads));
  size_t n = json_object_array_length(reads);
  json_object_put(r);
  return n;
}

static mcp_skill_list *list(mcp_client *c) {
  mcp_skill_list *l = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_msg(mcp_client_list_skills(c, NULL, &l, &err) == MCP_OK, "list: %s", err.message);
  return l;
}

static size_t find(const mcp_skill_list *l, const char *key) {
  size_t i = 0;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_msg(mcp_skill_list_find(l, NULL, key, &i, &err) == MCP_OK, "%s: %s", key, err.message);
  return i;
}

START_TEST(list_paged_no_prefetch) {
  mcp_client *c = connect_server(true);
  mcp_skill_list *l = list(c);
  /* 9 entries over 5 pages; "broken" (no resources) is left out. */
  ck_assert_uint_eq(mcp_skill_list_count(l), 8);
  ck_assert_str_eq(mcp_skill_list_uri(l, 0), "skill://good/SKILL.md");
  ck_assert_str_eq(mcp_skill_list_name(l, 0), "good");
  ck_assert_str_eq(mcp_skill_list_description(l, 0), "A good skill");
  ck_assert_ptr_null(mcp_skill_list_server(l, 0));
  ck_assert_ptr_nonnull(strstr(mcp_skill_list_json(l, 0), "references/REF.md"));
  ck_assert_ptr_null(mcp_skill_list_uri(l, 8));
  for (size_t i = 0; i < mcp_skill_list_count(l); i++)
    ck_assert_str_ne(mcp_skill_list_name(l, i), "broken");
  /* Two skills are named "good": by name is ambiguous, by URI is not. */
  size_t i = 0;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp_skill_list_find(l, NULL, "good", &i, &err), MCP_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.message, "give the skill's URI"));
  mcp_error_clear(&err);
  ck_assert_uint_eq(find(l, "skill://other/good/SKILL.md"), 3);
  ck_assert_int_eq(mcp_skill_list_find(l, NULL, "nope", &i, &err), MCP_ENOTFOUND);
  mcp_error_clear(&err);
  /* The server saw the declaration and no read at all. */
  json_object *r = server_record(c), *v = NULL;
  ck_assert(json_object_object_get_ex(r, "declared", &v) && json_object_get_boolean(v));
  ck_assert(json_object_object_get_ex(r, "reads", &v));
  ck_assert_uint_eq(json_object_array_length(v), 0);
  json_object_put(r);
  mcp_skill_list_free(l);
  mcp_client_free(c);
}
END_TEST

START_TEST(undeclared_is_refused_by_server) {
  mcp_client *c = connect_server(false);
  mcp_skill_list *l = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp_client_list_skills(c, NULL, &l, &err), MCP_ERPC);
  ck_assert_int_eq(err.rpc_code, -32003);
  ck_assert_ptr_null(l);
  mcp_error_clear(&err);
  mcp_client_free(c);
}
END_TEST

static char *load(mcp_client *c, const mcp_skill_list *l, const char *uri, mcp_status want,
                  const char *why_has) {
  char *text = NULL;
  size_t len = 0;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_client_load_skill(c, l, find(l, uri), NULL, &text, &len, &err);
  ck_assert_msg(st == want, "%s: %d (%s)", uri, st, err.message ? err.message : "");
  if (want != MCP_OK) {
    ck_assert_ptr_null(text);
    ck_assert_msg(strstr(err.message, why_has), "\"%s\" lacks \"%s\"", err.message, why_has);
    /* The message names the server and the skill. */
    ck_assert_ptr_nonnull(strstr(err.message, "server \"skills-test\""));
    ck_assert_ptr_nonnull(strstr(err.message, uri));
  } else {
    ck_assert_uint_eq(len, strlen(text));
  }
  mcp_error_clear(&err);
  return text;
}

START_TEST(load_verified) {
  mcp_client *c = connect_server(true);
  mcp_skill_list *l = list(c);
  char *t = load(c, l, "skill://good/SKILL.md", MCP_OK, NULL);
  ck_assert_str_eq(t, "---\nname: good\ndescription: A good skill\n---\n\nUse it well.\n");
  mcp_free(t);
  t = load(c, l, "skill://blobby/SKILL.md", MCP_OK, NULL);
  ck_assert_ptr_nonnull(strstr(t, "Blob body."));
  mcp_free(t);
  t = load(c, l, "skill://rich/SKILL.md", MCP_OK, NULL);
  ck_assert_ptr_nonnull(strstr(t, "Rich body."));
  mcp_free(t);
  t = load(c, l, "skill://dynamic/SKILL.md", MCP_OK, NULL);
  mcp_free(t);
  /* Exactly the SKILL.md of each skill loaded, never a supporting file. */
  json_object *r = server_record(c), *reads = NULL;
  ck_assert(json_object_object_get_ex(r, "reads", &reads));
  ck_assert_str_eq(json_object_to_json_string_ext(reads, JSON_C_TO_STRING_PLAIN |
                                                             JSON_C_TO_STRING_NOSLASHESCAPE),
                   "[\"skill://good/SKILL.md\",\"skill://blobby/SKILL.md\","
                   "\"skill://rich/SKILL.md\",\"skill://dynamic/SKILL.md\"]");
  json_object_put(r);
  mcp_skill_list_free(l);
  mcp_client_free(c);
}
END_TEST

START_TEST(load_tampered) {
  mcp_client *c = connect_server(true);
  mcp_skill_list *l = list(c);
  ck_assert_ptr_null(
      load(c, l, "skill://bad-digest/SKILL.md", MCP_EPROTO, "its digest is sha256:"));
  ck_assert_ptr_null(load(c, l, "skill://bad-size/SKILL.md", MCP_EPROTO,
                          "its size is 105 bytes, the skills/list entry says 69"));
  ck_assert_ptr_null(load(c, l, "skill://bad-frontmatter/SKILL.md", MCP_EPROTO,
                          "frontmatter differs from the skills/list entry's: field "
                          "\"description\" differs"));
  /* One read each, of the SKILL.md: nothing further after a failure. */
  ck_assert_uint_eq(reads_count(c), 3);
  mcp_skill_list_free(l);
  mcp_client_free(c);
}
END_TEST

/* mcp_client_read_skill_file() of |file| of skill |uri|: the status wanted,
 * and on failure a message naming the server and holding |why_has|. */
static char *read_file(mcp_client *c, const mcp_skill_list *l, const char *uri, const char *file,
                       mcp_status want, const char *why_has) {
  char *data = NULL;
  size_t len = 0;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_client_read_skill_file(c, l, find(l, uri), file, NULL, &data, &len, &err);
  ck_assert_msg(st == want, "%s %s: %d (%s)", uri, file, st, err.message ? err.message : "");
  if (want != MCP_OK) {
    ck_assert_ptr_null(data);
    ck_assert_msg(strstr(err.message, why_has), "\"%s\" lacks \"%s\"", err.message, why_has);
    ck_assert_ptr_nonnull(strstr(err.message, "server \"skills-test\""));
  } else {
    ck_assert_uint_eq(len, strlen(data));
  }
  mcp_error_clear(&err);
  return data;
}

/* Supporting files: by relative path or URI, verified against the entry;
 * a path out of the skill or a file the entry does not list is refused
 * without a read; a tampered file is refused after its one read. */
START_TEST(read_files) {
  mcp_client *c = connect_server(true);
  mcp_skill_list *l = list(c);
  char *t = read_file(c, l, "skill://good/SKILL.md", "references/REF.md", MCP_OK, NULL);
  ck_assert_str_eq(t, "Reference of good.\n");
  mcp_free(t);
  t = read_file(c, l, "skill://other/good/SKILL.md", "skill://other/good/references/REF.md", MCP_OK,
                NULL);
  ck_assert_str_eq(t, "Reference of other/good.\n");
  mcp_free(t);
  t = read_file(c, l, "skill://blobby/SKILL.md", "references/REF.md", MCP_OK, NULL);
  ck_assert_str_eq(t, "Reference of blobby.\n"); /* served as a blob, decoded */
  mcp_free(t);
  /* The dynamic skill has no manifest: read, unverified. */
  t = read_file(c, l, "skill://dynamic/SKILL.md", "references/REF.md", MCP_OK, NULL);
  ck_assert_str_eq(t, "Reference of dynamic.\n");
  mcp_free(t);
  ck_assert_uint_eq(reads_count(c), 4);
  /* Refused before any request. */
  const char *const bad[] = {"../rich/SKILL.md",
                             "references/../../rich/SKILL.md",
                             "./references/REF.md",
                             "/etc/passwd",
                             "references//REF.md",
                             "",
                             "references/REF.md?x",
                             "skill://rich/references/REF.md",
                             "skill://good/../rich/SKILL.md"};
  for (size_t k = 0; k < sizeof(bad) / sizeof(*bad); k++)
    ck_assert_ptr_null(
        read_file(c, l, "skill://good/SKILL.md", bad[k], MCP_EINVAL, "skill \"good\""));
  ck_assert_ptr_null(read_file(c, l, "skill://good/SKILL.md", "references/OTHER.md", MCP_ENOTFOUND,
                               "lists no file \"skill://good/references/OTHER.md\""));
  ck_assert_ptr_null(
      read_file(c, l, "skill://dynamic/SKILL.md", "..", MCP_EINVAL, "not a path within"));
  ck_assert_uint_eq(reads_count(c), 4);
  /* Tampered: read once, refused with the digest that differs. */
  ck_assert_ptr_null(read_file(c, l, "skill://bad-digest/SKILL.md", "references/REF.md", MCP_EPROTO,
                               "its digest is sha256:"));
  ck_assert_uint_eq(reads_count(c), 5);
  mcp_skill_list_free(l);
  mcp_client_free(c);
}
END_TEST

START_TEST(manager_list_and_load) {
  const char *argv[] = {test_env_path("MCP_SKILLS_SERVER"), NULL};
  mcp_client_options *co = mcp_client_options_new();
  ck_assert_int_eq(mcp_client_options_set_stdio(co, argv), MCP_OK);
  mcp_manager_options *mo = mcp_manager_options_new();
  mcp_manager_options_set_discovery(mo, false, false);
  ck_assert_int_eq(mcp_manager_options_add_server(mo, "sk", co), MCP_OK);
  mcp_client_options_free(co);
  ck_assert_int_eq(mcp_manager_options_set_extension(mo, MCP_SKILLS_EXTENSION, "{}"), MCP_OK);
  ck_assert_int_eq(mcp_manager_options_set_extension(mo, MCP_SKILLS_EXTENSION, "[]"), MCP_EINVAL);
  mcp_manager *m = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp_manager_start(mo, &m, &err), MCP_OK);
  mcp_manager_options_free(mo);
  ck_assert_int_eq(mcp_manager_wait_ready(m, "sk", 10000, &err), MCP_OK);
  mcp_skill_list *l = NULL;
  ck_assert_msg(mcp_manager_list_skills(m, NULL, NULL, &l, &err) == MCP_OK, "%s", err.message);
  ck_assert_uint_eq(mcp_skill_list_count(l), 8);
  ck_assert_str_eq(mcp_skill_list_server(l, 0), "sk");
  size_t i = 0;
  ck_assert_int_eq(mcp_skill_list_find(l, "sk", "rich", &i, &err), MCP_OK);
  char *t = NULL;
  size_t len = 0;
  ck_assert_int_eq(mcp_manager_load_skill(m, l, i, NULL, &t, &len, &err), MCP_OK);
  ck_assert_ptr_nonnull(strstr(t, "license: MIT"));
  mcp_free(t);
  ck_assert_int_eq(mcp_manager_read_skill_file(m, l, i, "references/REF.md", NULL, &t, &len, &err),
                   MCP_OK);
  ck_assert_str_eq(t, "Reference of rich.\n");
  mcp_free(t);
  ck_assert_int_eq(mcp_manager_read_skill_file(m, l, i, "nope.md", NULL, &t, &len, &err),
                   MCP_ENOTFOUND);
  ck_assert_ptr_nonnull(strstr(err.message, "server \"sk\": skill \"rich\" lists no file"));
  mcp_error_clear(&err);
  ck_assert_int_eq(mcp_skill_list_find(l, "sk", "bad-size", &i, &err), MCP_OK);
  ck_assert_int_eq(mcp_manager_load_skill(m, l, i, NULL, &t, &len, &err), MCP_EPROTO);
  ck_assert_ptr_nonnull(strstr(err.message, "server \"sk\": skill \"bad-size\""));
  mcp_error_clear(&err);
  mcp_skill_list_free(l);
  ck_assert_int_eq(mcp_manager_list_skills(m, "nope", NULL, &l, &err), MCP_ENOTFOUND);
  mcp_error_clear(&err);
  mcp_manager_free(m);
}
END_TEST

static Suite *skills_suite(void) {
  Suite *s = suite_create("skills");
  TCase *p = tcase_create("parse");
  tcase_add_test(p, frontmatter_subset);
  tcase_add_test(p, frontmatter_refused);
  tcase_add_test(p, entry_rules);
  tcase_add_test(p, file_checks);
  suite_add_tcase(s, p);
  TCase *c = tcase_create("client");
  tcase_set_timeout(c, 30);
  tcase_add_test(c, list_paged_no_prefetch);
  tcase_add_test(c, undeclared_is_refused_by_server);
  tcase_add_test(c, load_verified);
  tcase_add_test(c, load_tampered);
  tcase_add_test(c, read_files);
  tcase_add_test(c, manager_list_and_load);
  suite_add_tcase(s, c);
  return s;
}

int main(void) { return run_suite(skills_suite()); }
