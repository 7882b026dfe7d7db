/* SPDX-License-Identifier: MIT */
/*
 * check_config.c: server definitions: validation messages that name file,
 * server and field; malformed files; ${VAR} expansion; `!command` secrets
 * (trimmed output, failure, timeout, empty output, the per-process cache,
 * descriptor hygiene); discovery precedence in temporary directories; the
 * canonical hash; and stdio definitions turned into client options.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_util.h"
#include "mcp_client.h"
#include "mcp_config.h"
#include "mcp_discover.h"
#include "mcp_era.h"
#include "mcp_secret.h"
#include "mcp_server_options.h"
#include "mcp_toml.h"

#define SRC "/home/u/.mcp.json"

static char tmpdir[512];
static char *tpaths[512]; /* strings from tpath(), freed by teardown() */
static size_t ntpaths;

/* ---- helpers ---------------------------------------------------------------- */

/* A hermetic environment: NULL-terminated name/value pairs. */
static const char *const test_env[] = {
    "A",    "1",   "B",    "2",   "EMPTY",    "",      "HOME", "/home/u", "NL",
    "a\nb", "REF", "${A}", "BIN", "server-a", "TOKEN", "t0k",  NULL,
};

static const char *table_getenv(void *user, const char *name) {
  const char *const *kv = user ? user : test_env;
  for (size_t i = 0; kv[i]; i += 2)
    if (strcmp(kv[i], name) == 0) return kv[i + 1];
  return NULL;
}

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb;
  (void)flag;
  (void)ftw;
  return remove(p);
}

static void setup(void) {
  const char *base = getenv("MCP_TEST_TMPDIR");
  snprintf(tmpdir, sizeof(tmpdir), "%s/check_config.XXXXXX", base && *base ? base : "/tmp");
  ck_assert_ptr_nonnull(mkdtemp(tmpdir));
  mcp__config_secrets_clear();
}

static void teardown(void) {
  mcp__config_secrets_clear();
  nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
  for (size_t i = 0; i < ntpaths; i++) free(tpaths[i]);
  ntpaths = 0;
}

/* tmpdir + "/" + rel; the strings live until teardown. */
static const char *tpath(const char *rel) {
  char b[1024];
  snprintf(b, sizeof(b), "%s%s%s", tmpdir, *rel ? "/" : "", rel);
  ck_assert_uint_lt(ntpaths, sizeof(tpaths) / sizeof(tpaths[0]));
  tpaths[ntpaths] = strdup(b);
  return tpaths[ntpaths++];
}

/* Creates tmpdir/rel (and its parents) holding |content|. */
static void put(const char *rel, const char *content) {
  char p[1024];
  snprintf(p, sizeof(p), "%s/%s", tmpdir, rel);
  for (char *s = p + strlen(tmpdir) + 1; *s; s++) {
    if (*s != '/') continue;
    *s = '\0';
    mkdir(p, 0755);
    *s = '/';
  }
  FILE *f = fopen(p, "w");
  ck_assert_msg(f != NULL, "cannot create %s", p);
  fputs(content, f);
  fclose(f);
}

static void mkdirs(const char *rel) {
  char p[1024];
  snprintf(p, sizeof(p), "%s/%s/", tmpdir, rel);
  for (char *s = p + strlen(tmpdir) + 1; *s; s++) {
    if (*s != '/') continue;
    *s = '\0';
    mkdir(p, 0755);
    *s = '/';
  }
}

static mcp_config_set *parse_as(const char *text, mcp_config_dialect d) {
  mcp_config_parse_opts o = {.dialect = d, .getenv = table_getenv};
  mcp_config_set *set = NULL;
  ck_assert_int_eq(mcp__config_parse_text(text, strlen(text), SRC, &o, &set), MCP_OK);
  ck_assert_ptr_nonnull(set);
  return set;
}

static mcp_config_set *parse(const char *text) { return parse_as(text, MCP_CONFIG_NATIVE); }

static size_t count_level(const mcp_config_set *set, mcp_log_level lv) {
  size_t n = 0;
  for (size_t i = 0; i < set->ndiags; i++)
    if (set->diags[i].level == lv) n++;
  return n;
}

static const mcp_config_diag *find_diag(const mcp_config_set *set, mcp_log_level lv,
                                        const char *server, const char *needle) {
  for (size_t i = 0; i < set->ndiags; i++) {
    const mcp_config_diag *d = &set->diags[i];
    if (d->level != lv) continue;
    if (server && (!d->server || strcmp(d->server, server) != 0)) continue;
    if (needle && !strstr(d->message, needle)) continue;
    return d;
  }
  return NULL;
}

static void dump_diags(const mcp_config_set *set) {
  for (size_t i = 0; i < set->ndiags; i++)
    fprintf(stderr, "  [%d] %s\n", set->diags[i].level, set->diags[i].message);
}

static const mcp_server_def *must_find(const mcp_config_set *set, const char *name) {
  const mcp_server_def *d = mcp__config_find(set, name);
  if (!d) dump_diags(set);
  ck_assert_msg(d != NULL, "no server %s", name);
  return d;
}

static const char *env_of(const mcp_server_def *d, const char *name) {
  for (size_t i = 0; i < d->s.nenv; i++)
    if (strcmp(d->s.env[i].name, name) == 0) return d->s.env[i].value;
  return NULL;
}

static const char *header_of(const mcp_server_def *d, const char *name) {
  for (size_t i = 0; i < d->s.nheaders; i++)
    if (strcmp(d->s.headers[i].name, name) == 0) return d->s.headers[i].value;
  return NULL;
}

/* ---- validation -------------------------------------------------------------- */

START_TEST(test_unknown_field_message) {
  mcp_config_set *set = parse("{\"mcpServers\": {\"db\": {\"comand\": \"x\"}}}");
  ck_assert_uint_eq(set->ndefs, 0);
  ck_assert_uint_eq(set->ndiags, 1);
  const mcp_config_diag *d = &set->diags[0];
  ck_assert_int_eq(d->level, MCP_LOG_WARN);
  ck_assert_str_eq(d->message, SRC ": server \"db\": unknown field \"comand\"");
  ck_assert_str_eq(d->source, SRC);
  ck_assert_str_eq(d->server, "db");
  ck_assert_str_eq(d->field, "comand");
  mcp__config_free(set);
}
END_TEST

static const struct bad_case {
  const char *body;   /* the definition of server "db" */
  const char *field;  /* expected field, NULL for none */
  const char *needle; /* expected in the message */
} bad_cases[] = {
    {"{\"comand\":\"x\"}", "comand", "unknown field \"comand\""},
    {"{\"args\":[\"a\"]}", "command", "\"command\" is required"},
    {"{\"command\":\"\"}", "command", "non-empty"},
    {"{\"command\":7}", "command", "\"command\""},
    {"{\"type\":\"http\"}", "url", "\"url\" is required for an http server"},
    {"{\"type\":\"sse\",\"headers\":{}}", "url", "required for an sse server"},
    {"{\"command\":\"x\",\"url\":\"http://h\"}", "url", "both \"command\" and \"url\""},
    {"{\"type\":\"grpc\",\"command\":\"x\"}", "type", "unknown type \"grpc\""},
    {"{\"type\":5,\"command\":\"x\"}", "type", "unknown type"},
    {"{\"command\":\"x\",\"protocol\":\"latest\"}", "protocol",
     "field \"protocol\" must be \"auto\", \"modern\", \"legacy\" or an MCP revision"},
    {"{\"command\":\"x\",\"protocol\":20260728}", "protocol", "field \"protocol\" must be"},
    {"{\"url\":\"http://h\",\"protocol\":\"\"}", "protocol", "field \"protocol\" must be"},
    {"{\"url\":\"http://h\",\"protocol\":\"2024-11-05\"}", "protocol", "(2026-07-28, 2025-11-25"},
    {"{\"command\":\"x\",\"protocol\":\"Modern\"}", "protocol", "field \"protocol\" must be"},
    {"{\"url\":\"http://h\",\"headers\":{\"X-A\":\"a\\r\\nb\"}}", "headers",
     "value of \"X-A\" contains CR or LF"},
    {"{\"url\":\"http://h\",\"headers\":{\"X-A\":\"${NL}\"}}", "headers", "contains CR or LF"},
    {"{\"url\":\"http://h\",\"headers\":{\"X A\":\"v\"}}", "headers", "invalid name \"X A\""},
    {"{\"url\":\"http://h\",\"headers\":{\"X\":1}}", "headers", "value of \"X\" must be a string"},
    {"{\"url\":\"http://h\",\"headers\":[]}", "headers", "object of strings"},
    {"{\"command\":\"x\",\"args\":\"a b\"}", "args", "array of strings"},
    {"{\"command\":\"x\",\"args\":[\"a\",1]}", "args", "element 1"},
    {"{\"command\":\"x\",\"args\":[\"a\\u0000b\"]}", "args", "NUL"},
    {"{\"command\":\"x\",\"env\":{\"K\":1}}", "env", "value of \"K\""},
    {"{\"command\":\"x\",\"env\":{\"A=B\":\"1\"}}", "env", "invalid name"},
    {"{\"command\":\"x\",\"env\":{\"\":\"1\"}}", "env", "invalid name"},
    {"{\"command\":\"x\",\"env\":[]}", "env", "object of strings"},
    {"{\"command\":\"x\",\"cwd\":5}", "cwd", "\"cwd\" must be a string"},
    {"{\"command\":\"x\",\"timeout\":-1}", "timeout", "non-negative integer"},
    {"{\"command\":\"x\",\"timeout\":\"5\"}", "timeout", "non-negative"},
    {"{\"command\":\"x\",\"timeout\":1.5}", "timeout", "non-negative"},
    {"{\"command\":\"x\",\"enabled\":\"no\"}", "enabled", "boolean"},
    {"{\"url\":\"http://h\",\"insecure\":1}", "insecure", "boolean"},
    {"{\"url\":\"http://h\",\"http2\":\"yes\"}", "http2", "\"prior-knowledge\""},
    {"{\"url\":\"ftp://h\"}", "url", "http:// or https://"},
    {"{\"url\":\"http://h\",\"caFile\":true}", "caFile", "\"caFile\" must be"},
    {"{\"url\":\"http://h\",\"clientCert\":\"c.pem\"}", "clientKey",
     "\"clientKey\" is required with \"clientCert\""},
    {"{\"url\":\"http://h\",\"clientKey\":\"k.pem\"}", "clientCert", "\"clientCert\" is required"},
    {"{\"url\":\"http://h\",\"headers\":{\"content-TYPE\":\"x\"}}", "headers",
     "\"content-TYPE\" is set by the transport"},
    {"{\"url\":\"http://h\",\"headers\":{\"Mcp-Method\":\"x\"}}", "headers",
     "\"Mcp-Method\" is set by the transport"},
    {"{\"command\":\"x\",\"headers\":{}}", "headers",
     "\"headers\" does not apply to stdio servers"},
    {"{\"command\":\"x\",\"insecure\":true}", "insecure", "stdio servers"},
    {"{\"url\":\"https://h\",\"env\":{}}", "env", "\"env\" does not apply to http servers"},
    {"{\"type\":\"sse\",\"url\":\"https://h\",\"args\":[]}", "args", "sse servers"},
    {"{\"command\":\"x\",\"httpUrl\":\"http://h\"}", "httpUrl", "unknown field \"httpUrl\""},
    {"\"just a string\"", NULL, "must be a JSON object"},
    {"[]", NULL, "must be a JSON object"},
};

START_TEST(test_validation_errors) {
  const struct bad_case *bc = &bad_cases[_i];
  char text[1024];
  snprintf(text, sizeof(text),
           "{\"mcpServers\": {\"ok\": {\"command\": \"fine\"}, \"db\": %s, "
           "\"zz\": {\"url\": \"https://z\"}}}",
           bc->body);
  mcp_config_set *set = parse(text);
  if (set->ndiags != 1) dump_diags(set);
  ck_assert_msg(set->ndiags == 1, "case %d (%s): %zu diagnostics", _i, bc->body, set->ndiags);
  const mcp_config_diag *d = &set->diags[0];
  ck_assert_int_eq(d->level, MCP_LOG_WARN);
  ck_assert_msg(strncmp(d->message, SRC ": server \"db\": ", strlen(SRC ": server \"db\": ")) == 0,
                "case %d: message '%s'", _i, d->message);
  ck_assert_msg(strstr(d->message, bc->needle) != NULL, "case %d: '%s' lacks '%s'", _i, d->message,
                bc->needle);
  ck_assert_str_eq(d->source, SRC);
  ck_assert_str_eq(d->server, "db");
  if (bc->field) {
    ck_assert_msg(d->field && strcmp(d->field, bc->field) == 0, "case %d: field '%s', want '%s'",
                  _i, d->field ? d->field : "(null)", bc->field);
  } else {
    ck_assert_ptr_null(d->field);
  }
  /* The other servers of the file still load. */
  ck_assert_uint_eq(set->ndefs, 2);
  ck_assert_str_eq(set->defs[0]->name, "ok");
  ck_assert_str_eq(set->defs[1]->name, "zz");
  ck_assert_ptr_null(mcp__config_find(set, "db"));
  mcp__config_free(set);
}
END_TEST

START_TEST(test_names) {
  char longname[120];
  memset(longname, 'n', 101);
  longname[101] = '\0';
  char text[512];
  snprintf(text, sizeof(text),
           "{\"mcpServers\": {\"bad name\": {\"command\": \"x\"}, \"%s\": "
           "{\"command\": \"x\"}, \"A-z_0.9:x\": {\"command\": \"x\"}, "
           "\"\": {\"command\": \"x\"}}}",
           longname);
  mcp_config_set *set = parse(text);
  /* Invalid names are folded into valid ones, never fatal; the file's name
   * is kept for display. */
  ck_assert_uint_eq(set->ndefs, 4);
  ck_assert_uint_eq(count_level(set, MCP_LOG_WARN), 0);
  ck_assert_ptr_null(must_find(set, "A-z_0.9:x")->display_name);
  ck_assert_str_eq(must_find(set, "bad_name")->display_name, "bad name");
  ck_assert_str_eq(must_find(set, "server")->display_name, "");
  ck_assert_ptr_nonnull(find_diag(set, MCP_LOG_DEBUG, "bad_name", "used as"));
  for (size_t i = 0; i < set->ndefs; i++) ck_assert(mcp__config_name_is_valid(set->defs[i]->name));
  mcp__config_free(set);

  longname[100] = '\0';
  ck_assert(mcp__config_name_is_valid(longname));
  ck_assert(!mcp__config_name_is_valid("a/b"));
  ck_assert(!mcp__config_name_is_valid(""));
  ck_assert(!mcp__config_name_is_valid(NULL));
}
END_TEST

START_TEST(test_full_definitions) {
  mcp_config_set *set = parse(
      "{\n"
      "  // comments and trailing commas are accepted\n"
      "  \"$schema\": \"https://example/schema.json\",\n"
      "  \"mcpServers\": {\n"
      "    \"local\": {\"type\": \"stdio\", \"command\": \"${BIN}\",\n"
      "      \"args\": [\"--token=${TOKEN}\", \"${UNSET:-dflt}\", \"plain\"],\n"
      "      \"env\": {\"${A}\": \"${B}\", \"K\": \"!echo hi\"},\n"
      "      \"cwd\": \"${HOME}/work\", \"timeout\": 0},\n"
      "    \"remote\": {\"type\": \"http\", \"url\": \"https://h/${A}/mcp\",\n"
      "      \"headers\": {\"Authorization\": \"Bearer ${TOKEN}\"},\n"
      "      \"http2\": \"prior-knowledge\", \"caFile\": \"${HOME}/ca.pem\",\n"
      "      \"caDir\": \"/etc/ssl/certs\", \"clientCert\": \"c.pem\",\n"
      "      \"clientKey\": \"k.pem\", \"insecure\": true, \"timeout\": 5000,\n"
      "      \"enabled\": false},\n"
      "    \"implicit\": {\"url\": \"http://127.0.0.1:8080/mcp\"},\n"
      "    \"legacy\": {\"type\": \"sse\", \"url\": \"https://h/sse\",\n"
      "      \"http2\": \"off\"},\n"
      "  },\n"
      "  \"disabledServers\": [\"x\", \"a\", \"x\"],\n"
      "}\n");
  if (set->ndiags) dump_diags(set);
  ck_assert_uint_eq(set->ndiags, 0);
  ck_assert_uint_eq(set->ndefs, 4);
  /* Sorted by name. */
  ck_assert_str_eq(set->defs[0]->name, "implicit");
  ck_assert_str_eq(set->defs[1]->name, "legacy");
  ck_assert_str_eq(set->defs[2]->name, "local");
  ck_assert_str_eq(set->defs[3]->name, "remote");

  const mcp_server_def *l = must_find(set, "local");
  ck_assert_int_eq(l->type, MCP_SERVER_STDIO);
  ck_assert_uint_eq(l->s.argc, 4);
  ck_assert_str_eq(l->s.argv[0], "server-a");
  ck_assert_str_eq(l->s.argv[1], "--token=t0k");
  ck_assert_str_eq(l->s.argv[2], "dflt");
  ck_assert_str_eq(l->s.argv[3], "plain");
  ck_assert_ptr_null(l->s.argv[4]);
  /* Env names are not expanded; values are. */
  ck_assert_str_eq(env_of(l, "${A}"), "2");
  ck_assert_str_eq(env_of(l, "K"), "!echo hi");
  ck_assert_str_eq(l->s.cwd, "/home/u/work");
  ck_assert_int_eq(l->s.timeout_ms, 0);
  ck_assert(l->enabled);
  ck_assert(!l->foreign);
  ck_assert_ptr_null(l->s.url);
  ck_assert_str_eq(l->source, SRC);
  ck_assert_uint_eq(strlen(l->hash), 64);

  const mcp_server_def *r = must_find(set, "remote");
  ck_assert_int_eq(r->type, MCP_SERVER_HTTP);
  ck_assert_str_eq(r->s.url, "https://h/1/mcp");
  ck_assert_str_eq(header_of(r, "Authorization"), "Bearer t0k");
  ck_assert_int_eq(r->s.http_version, MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
  ck_assert_str_eq(r->s.tls.ca_file, "/home/u/ca.pem");
  ck_assert_str_eq(r->s.tls.ca_dir, "/etc/ssl/certs");
  ck_assert_str_eq(r->s.tls.client_cert, "c.pem");
  ck_assert_str_eq(r->s.tls.client_key, "k.pem");
  ck_assert(r->s.tls.insecure);
  ck_assert_int_eq(r->s.timeout_ms, 5000);
  ck_assert(!r->enabled); /* kept by parse, hidden by discovery */
  ck_assert_ptr_null(r->s.argv);

  const mcp_server_def *im = must_find(set, "implicit");
  ck_assert_int_eq(im->type, MCP_SERVER_HTTP);
  ck_assert_int_eq(im->s.timeout_ms, -1);
  ck_assert_int_eq(im->s.http_version, MCP_HTTP_VERSION_AUTO);
  const mcp_server_def *lg = must_find(set, "legacy");
  ck_assert_int_eq(lg->type, MCP_SERVER_SSE);
  ck_assert_int_eq(lg->s.http_version, MCP_HTTP_VERSION_1_1);

  ck_assert_uint_eq(set->ndisabled, 2);
  ck_assert_str_eq(set->disabled[0], "a");
  ck_assert_str_eq(set->disabled[1], "x");
  mcp__config_free(set);
}
END_TEST

START_TEST(test_malformed_files) {
  static const char *const bad[] = {
      "{not json",
      "",
      "   ",
      "{\"mcpServers\": {}} trailing",
      "{\"mcpServers\": {\"a\": {\"command\": \"x\"}}",
      "[1, 2]",
      "\"str\"",
      "{\"mcpServers\": []}",
      "{\"mcpServers\": \"x\"}",
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    mcp_config_set *set = parse(bad[i]);
    ck_assert_msg(set->ndefs == 0 && set->ndiags == 1, "'%s': %zu defs %zu diags", bad[i],
                  set->ndefs, set->ndiags);
    ck_assert_int_eq(set->diags[0].level, MCP_LOG_WARN);
    ck_assert(strncmp(set->diags[0].message, SRC ": ", strlen(SRC) + 2) == 0);
    ck_assert_ptr_null(set->diags[0].server);
    mcp__config_free(set);
  }
  /* Text with a NUL inside. */
  mcp_config_set *set = NULL;
  ck_assert_int_eq(mcp__config_parse_text("{}\0{}", 5, NULL, NULL, &set), MCP_OK);
  ck_assert_uint_eq(set->ndiags, 1);
  ck_assert(strncmp(set->diags[0].message, "<config>: ", 10) == 0);
  mcp__config_free(set);
  /* A file without servers is fine and silent. */
  set = parse("{\"other\": 1}");
  ck_assert_uint_eq(set->ndefs + set->ndiags, 0);
  mcp__config_free(set);
  /* A bad disabledServers is a warning; the servers still load. */
  set = parse("{\"mcpServers\": {\"a\": {\"command\": \"x\"}}, "
              "\"disabledServers\": [\"ok\", 5, \"bad name\"]}");
  ck_assert_uint_eq(set->ndefs, 1);
  ck_assert_uint_eq(set->ndisabled, 1);
  ck_assert_uint_eq(set->ndiags, 2);
  mcp__config_free(set);
  /* Deep nesting is refused, not a stack overflow. */
  size_t depth = 100000;
  char *deep = malloc(2 * depth + 1);
  memset(deep, '[', depth);
  memset(deep + depth, ']', depth);
  deep[2 * depth] = '\0';
  set = parse(deep);
  ck_assert_uint_eq(set->ndiags, 1);
  mcp__config_free(set);
  free(deep);
}
END_TEST

START_TEST(test_malformed_file_does_not_stop_others) {
  put("bad.json", "{\"mcpServers\": {\"x\": ");
  put("good.json", "{\"mcpServers\": {\"g\": {\"command\": \"good\"}}}");
  put("home/.config/mcpconn/mcp.json", "{\"mcpServers\": {\"u\": {\"command\": \"user\"}, \"x\": "
                                       "{\"command\": \"from-user\"}}}");
  mkdirs("proj/.git");
  const char *files[] = {tpath("bad.json"), tpath("missing.json"), tpath("good.json")};
  mcp_discovery_opts o;
  memset(&o, 0, sizeof(o));
  o.files = files;
  o.nfiles = 3;
  o.cwd = tpath("proj");
  o.home = tpath("home");
  o.getenv = table_getenv;
  o.getenv_user = (void *)(const char *const[]){NULL};
  mcp_config_set *set = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp__config_discover(&o, &set, &err), MCP_OK);
  ck_assert_uint_eq(set->ndefs, 3);
  ck_assert_str_eq(must_find(set, "g")->s.argv[0], "good");
  ck_assert_str_eq(must_find(set, "u")->s.argv[0], "user");
  /* The malformed file claimed nothing. */
  ck_assert_str_eq(must_find(set, "x")->s.argv[0], "from-user");
  ck_assert_uint_eq(count_level(set, MCP_LOG_WARN), 2);
  const mcp_config_diag *d = find_diag(set, MCP_LOG_WARN, NULL, "invalid JSON");
  ck_assert_ptr_nonnull(d);
  ck_assert_str_eq(d->source, files[0]);
  d = find_diag(set, MCP_LOG_WARN, NULL, "cannot read");
  ck_assert_ptr_nonnull(d);
  ck_assert_str_eq(d->source, files[1]);
  mcp__config_free(set);
}
END_TEST

START_TEST(test_foreign_dialects) {
  mcp_config_set *set = parse_as(
      "{\"mcpServers\": {\n"
      "  \"a\": {\"command\": \"x\", \"alwaysAllow\": [], \"disabled\": 0,\n"
      "         \"headers\": {\"X\": \"y\"}, \"env\": {\"T\": \"!echo no\"}},\n"
      "  \"b\": {\"url\": \"https://h/mcp\"},\n"
      "  \"c\": {\"httpUrl\": \"https://h/c\"},\n"
      "  \"d\": {\"serverUrl\": \"https://h/d\"},\n"
      "  \"e\": {\"type\": \"streamable-http\", \"url\": \"https://h/e\"},\n"
      "  \"f\": {\"type\": \"stdio\", \"command\": \"x\", \"url\": \"http://i\"},\n"
      "  \"g\": {\"command\": \"x\", \"url\": \"http://ambiguous\"},\n"
      "  \"h\": {\"type\": \"grpc\", \"command\": \"x\"}\n"
      "}, \"inputs\": []}",
      MCP_CONFIG_FOREIGN);
  ck_assert_uint_eq(set->ndefs, 6);
  const mcp_server_def *a = must_find(set, "a");
  ck_assert(a->foreign);
  ck_assert_uint_eq(a->s.nheaders, 0); /* another transport's field: ignored */
  ck_assert_int_eq(must_find(set, "b")->type, MCP_SERVER_HTTP);
  ck_assert_str_eq(must_find(set, "c")->s.url, "https://h/c");
  ck_assert_int_eq(must_find(set, "d")->type, MCP_SERVER_HTTP);
  ck_assert_int_eq(must_find(set, "e")->type, MCP_SERVER_HTTP);
  ck_assert_int_eq(must_find(set, "f")->type, MCP_SERVER_STDIO);
  ck_assert_ptr_nonnull(find_diag(set, MCP_LOG_WARN, "g", "both"));
  ck_assert_ptr_nonnull(find_diag(set, MCP_LOG_WARN, "h", "unknown type"));
  ck_assert_uint_eq(count_level(set, MCP_LOG_WARN), 2);
  /* Unknown fields are debug notes, never warnings. */
  ck_assert_ptr_nonnull(find_diag(set, MCP_LOG_DEBUG, "a", "\"alwaysAllow\" is not read"));
  mcp__config_free(set);

  set = parse_as("{\"mcpServers\": {\"s\": {\"url\": \"https://h/sse\"}, "
                 "\"h\": {\"httpUrl\": \"https://h/mcp\"}}}",
                 MCP_CONFIG_GEMINI);
  ck_assert_int_eq(must_find(set, "s")->type, MCP_SERVER_SSE);
  ck_assert_int_eq(must_find(set, "h")->type, MCP_SERVER_HTTP);
  mcp__config_free(set);

  /* An ${input:...} without a value is never sent as text: the server is
   * left out with a warning naming file, server, field and input. */
  set = parse_as("{\"inputs\": [], \"servers\": {\"v\": {\"type\": \"http\", "
                 "\"url\": \"https://v\", \"headers\": {\"A\": \"Bearer ${input:api-key}\"}"
                 "}, \"w\": {\"type\": \"http\", \"url\": \"https://w\"}}, "
                 "\"mcpServers\": {\"ignored\": {\"command\": \"x\"}}}",
                 MCP_CONFIG_VSCODE);
  ck_assert_uint_eq(set->ndefs, 1);
  ck_assert_ptr_null(mcp__config_find(set, "v"));
  const mcp_config_diag *dg = find_diag(set, MCP_LOG_WARN, "v", "${input:api-key}");
  ck_assert_ptr_nonnull(dg);
  ck_assert_str_eq(dg->field, "headers");
  ck_assert_str_eq(dg->source, SRC);
  ck_assert_ptr_nonnull(strstr(dg->message, "no value for input \"api-key\""));
  mcp__config_free(set);
}
END_TEST

/* ---- expansion ---------------------------------------------------------------- */

START_TEST(test_expansion_table) {
  static const struct {
    const char *in, *out;
  } cases[] = {
      {"plain", "plain"},
      {"", ""},
      {"${A}", "1"},
      {"x${A}y", "x1y"},
      {"${A}${B}", "12"},
      {"${A}${UNSET}${B}", "1${UNSET}2"},
      {"${UNSET}", "${UNSET}"},
      {"${EMPTY}", ""},
      {"${UNSET:-dflt}", "dflt"},
      {"${EMPTY:-dflt}", "dflt"},
      {"${A:-dflt}", "1"},
      {"${UNSET:-}", ""},
      {"${UNSET:-a b:c}", "a b:c"},
      {"${UNSET:-${A}}", "1"},
      {"${UNSET:-${UNSET2:-deep}}", "deep"},
      {"${UNSET:-x${A}y${B}z}", "x1y2z"},
      {"${UNSET:-{x}}", "{x}"},
      {"${UNSET:-${NOPE}}", "${NOPE}"},
      {"${A:-${NOPE}}", "1"},
      {"${A", "${A"},
      {"${", "${"},
      {"$", "$"},
      {"x$", "x$"},
      {"${A:-abc", "${A:-abc"},
      {"${X:-${A}", "${X:-1"},
      {"${}", "${}"},
      {"${1}", "${1}"},
      {"${A-x}", "${A-x}"},
      {"${A B}", "${A B}"},
      {"$A", "$A"},
      {"$$", "$$"},
      {"$${A}", "${A}"},
      {"$$${A}", "$${A}"}, /* left to right: "$", then "$${" */
      {"${UNSET:-$${A}}", "${A}"},
      {"${REF}", "${A}"}, /* a value is never expanded again */
      {"${UNSET:-${REF}}", "${A}"},
      {"${HOME}/x", "/home/u/x"},
      {"}{$}", "}{$}"},
      {"${A}}", "1}"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char *out = NULL;
    ck_assert_int_eq(mcp__config_expand(cases[i].in, table_getenv, NULL, &out), MCP_OK);
    ck_assert_msg(strcmp(out, cases[i].out) == 0, "expand('%s') = '%s', want '%s'", cases[i].in,
                  out, cases[i].out);
    mcp__free(out);
  }
}
END_TEST

START_TEST(test_expansion_limits) {
  /* Deep nesting of defaults ends in literal text, not recursion. */
  char in[4096] = "", want_prefix[64];
  for (int i = 0; i < 200; i++) strcat(in, "${U:-");
  strcat(in, "end");
  for (int i = 0; i < 200; i++) strcat(in, "}");
  char *out = NULL;
  ck_assert_int_eq(mcp__config_expand(in, table_getenv, NULL, &out), MCP_OK);
  snprintf(want_prefix, sizeof(want_prefix), "${U:-${U:-");
  ck_assert(strncmp(out, want_prefix, strlen(want_prefix)) == 0);
  ck_assert_ptr_nonnull(strstr(out, "end"));
  mcp__free(out);
  /* Very long names are never looked up. */
  char longref[600] = "${";
  memset(longref + 2, 'A', 400);
  strcpy(longref + 402, "}");
  ck_assert_int_eq(mcp__config_expand(longref, table_getenv, NULL, &out), MCP_OK);
  ck_assert_str_eq(out, longref);
  mcp__free(out);
  /* The process environment is the default lookup. */
  setenv("MCP_CHECK_CONFIG_VAR", "from-env", 1);
  ck_assert_int_eq(mcp__config_expand("${MCP_CHECK_CONFIG_VAR}", NULL, NULL, &out), MCP_OK);
  ck_assert_str_eq(out, "from-env");
  mcp__free(out);
  ck_assert_int_eq(mcp__config_expand(NULL, NULL, NULL, &out), MCP_EINVAL);
}
END_TEST

/* ---- secrets -------------------------------------------------------------------- */

static mcp_server_def *one_def(const char *text, const char *name) {
  mcp_config_set *set = parse(text);
  if (set->ndiags) dump_diags(set);
  mcp_server_def *d = mcp__server_def_dup(must_find(set, name));
  mcp__config_free(set);
  return d;
}

static mcp_server_def *resolve(const mcp_server_def *d, int64_t timeout_ms, mcp_config_diag **diags,
                               size_t *ndiags) {
  mcp_secret_opts so = {timeout_ms};
  mcp_server_def *r = NULL;
  ck_assert_int_eq(mcp__config_resolve_secrets(d, &so, &r, diags, ndiags), MCP_OK);
  ck_assert_ptr_nonnull(r);
  return r;
}

static const char *diag_for(mcp_config_diag *v, size_t n, const char *needle) {
  for (size_t i = 0; i < n; i++)
    if (strstr(v[i].message, needle)) return v[i].message;
  return NULL;
}

START_TEST(test_secret_success_and_failures) {
  mcp_server_def *d = one_def("{\"mcpServers\": {\"s\": {\"command\": \"x\", \"env\": {"
                              "\"TOK\": \"!printf '  s3cret value \\\\n\\\\n'\", \"PLAIN\": \"v\","
                              "\"BAD\": \"!echo leaked; exit 1\", \"EMPTY\": \"!printf '  \\\\n'\","
                              "\"NONE\": \"!true\", \"SIG\": \"!kill -9 $$\"}}}}",
                              "s");
  mcp_config_diag *diags = NULL;
  size_t n = 0;
  mcp_server_def *r = resolve(d, 5000, &diags, &n);
  ck_assert_str_eq(env_of(r, "TOK"), "s3cret value");
  ck_assert_str_eq(env_of(r, "PLAIN"), "v");
  ck_assert_ptr_null(env_of(r, "BAD"));
  ck_assert_ptr_null(env_of(r, "EMPTY"));
  ck_assert_ptr_null(env_of(r, "NONE"));
  ck_assert_ptr_null(env_of(r, "SIG"));
  ck_assert_uint_eq(r->s.nenv, 2);
  ck_assert_uint_eq(n, 4);
  const char *m = diag_for(diags, n, "env \"BAD\"");
  ck_assert_ptr_nonnull(m);
  ck_assert_ptr_nonnull(strstr(m, "exited with status 1"));
  ck_assert(strncmp(m, SRC ": server \"s\": ", strlen(SRC) + 14) == 0);
  ck_assert_ptr_nonnull(strstr(diag_for(diags, n, "env \"EMPTY\""), "printed nothing"));
  ck_assert_ptr_nonnull(strstr(diag_for(diags, n, "env \"NONE\""), "printed nothing"));
  ck_assert_ptr_nonnull(strstr(diag_for(diags, n, "env \"SIG\""), "killed by signal 9"));
  for (size_t i = 0; i < n; i++) {
    ck_assert_ptr_null(strstr(diags[i].message, "leaked"));
    ck_assert_ptr_null(strstr(diags[i].message, "s3cret"));
    ck_assert_int_eq(diags[i].level, MCP_LOG_WARN);
  }
  /* The resolved copy keeps the unresolved hash; the original is intact. */
  ck_assert_str_eq(r->hash, d->hash);
  ck_assert_str_eq(env_of(d, "TOK"), "!printf '  s3cret value \\n\\n'");
  char *canon = NULL;
  ck_assert_int_eq(mcp__config_canonical_json(r, &canon), MCP_OK);
  mcp__free(canon);
  ck_assert_int_eq(mcp__config_canonical_json(d, &canon), MCP_OK);
  ck_assert_ptr_null(strstr(canon, "s3cret value\""));
  ck_assert_ptr_nonnull(strstr(canon, "!printf"));
  mcp__free(canon);
  mcp__config_diags_free(diags, n);
  mcp__server_def_free(r);
  mcp__server_def_free(d);
}
END_TEST

START_TEST(test_secret_timeout) {
  mcp_server_def *d = one_def("{\"mcpServers\": {\"s\": {\"command\": \"x\", \"env\": {"
                              "\"SLOW\": \"!sleep 30\", \"BG\": \"!sleep 30 & echo early\","
                              "\"PLAIN\": \"kept\"}}}}",
                              "s");
  mcp_config_diag *diags = NULL;
  size_t n = 0;
  long long t0 = test_now_ms();
  mcp_server_def *r = resolve(d, 300, &diags, &n);
  long long took = test_now_ms() - t0;
  /* Two commands time out at 300 ms each; nothing waits for sleep 30. */
  ck_assert_msg(took < 5000, "took %lld ms", took);
  ck_assert_ptr_null(env_of(r, "SLOW"));
  ck_assert_str_eq(env_of(r, "PLAIN"), "kept");
  ck_assert_uint_eq(n, 2);
  ck_assert_ptr_nonnull(strstr(diag_for(diags, n, "env \"SLOW\""), "timed out after 300 ms"));
  /* A background child keeps stdout open: also a timeout, group killed. */
  ck_assert_ptr_null(env_of(r, "BG"));
  ck_assert_ptr_nonnull(diag_for(diags, n, "env \"BG\""));
  mcp__config_diags_free(diags, n);
  mcp__server_def_free(r);
  mcp__server_def_free(d);
}
END_TEST

static int count_lines(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  int n = 0, c;
  while ((c = fgetc(f)) != EOF)
    if (c == '\n') n++;
  fclose(f);
  return n;
}

START_TEST(test_secret_cache) {
  char text[2048];
  const char *log = tpath("runs.log");
  const char *fails = tpath("fails.log");
  snprintf(text, sizeof(text),
           "{\"mcpServers\": {\"s\": {\"command\": \"x\", \"env\": {"
           "\"T\": \"!echo run >> %s; echo val\","
           "\"F\": \"!echo run >> %s; exit 3\"}},"
           "\"h\": {\"url\": \"https://h\", \"headers\": {"
           "\"Authorization\": \"!echo run >> %s; echo val\"}}}}",
           log, fails, log);
  mcp_config_set *set = parse(text);
  ck_assert_uint_eq(set->ndiags, 0);
  const mcp_server_def *s = must_find(set, "s"), *h = must_find(set, "h");
  mcp_config_diag *diags = NULL;
  size_t n = 0;
  for (int i = 0; i < 3; i++) {
    mcp_server_def *r = resolve(s, 5000, &diags, &n);
    ck_assert_str_eq(env_of(r, "T"), "val");
    ck_assert_ptr_null(env_of(r, "F"));
    mcp__server_def_free(r);
    r = resolve(h, 5000, &diags, &n);
    ck_assert_str_eq(header_of(r, "Authorization"), "val");
    mcp__server_def_free(r);
  }
  /* Successes ran once, for both servers; failures every time. */
  ck_assert_int_eq(count_lines(log), 1);
  ck_assert_int_eq(count_lines(fails), 3);
  ck_assert_uint_eq(n, 3);
  /* Clearing the cache runs it again. */
  mcp__config_secrets_clear();
  mcp_server_def *r = resolve(s, 5000, &diags, &n);
  mcp__server_def_free(r);
  ck_assert_int_eq(count_lines(log), 2);
  mcp__config_diags_free(diags, n);
  mcp__config_free(set);
}
END_TEST

typedef struct race_arg {
  const mcp_server_def *def;
  char value[64];
} race_arg;

static void *race_thread(void *p) {
  race_arg *a = p;
  mcp_config_diag *diags = NULL;
  size_t n = 0;
  mcp_secret_opts so = {10000};
  mcp_server_def *r = NULL;
  if (mcp__config_resolve_secrets(a->def, &so, &r, &diags, &n) == MCP_OK && r->s.nenv == 1)
    snprintf(a->value, sizeof(a->value), "%s", r->s.env[0].value);
  mcp__server_def_free(r);
  mcp__config_diags_free(diags, n);
  return NULL;
}

START_TEST(test_secret_concurrent_dedup) {
  char text[1024];
  const char *log = tpath("race.log");
  /* The command is slow so the threads overlap; whether they do or not,
   * it must run once. */
  snprintf(text, sizeof(text),
           "{\"mcpServers\": {\"s\": {\"command\": \"x\", \"env\": {"
           "\"T\": \"!echo run >> %s; sleep 0.2; echo shared\"}}}}",
           log);
  mcp_server_def *d = one_def(text, "s");
  enum { N = 4 };
  pthread_t th[N];
  race_arg args[N];
  for (int i = 0; i < N; i++) {
    memset(&args[i], 0, sizeof(args[i]));
    args[i].def = d;
    ck_assert_int_eq(pthread_create(&th[i], NULL, race_thread, &args[i]), 0);
  }
  for (int i = 0; i < N; i++) {
    pthread_join(th[i], NULL);
    ck_assert_str_eq(args[i].value, "shared");
  }
  ck_assert_int_eq(count_lines(log), 1);
  mcp__server_def_free(d);
}
END_TEST

START_TEST(test_secret_headers_and_foreign) {
  mcp_server_def *d = one_def("{\"mcpServers\": {\"h\": {\"url\": \"https://h\", \"headers\": {"
                              "\"Authorization\": \"!printf 'Bearer a\\\\r\\\\nInjected: 1'\","
                              "\"X-Ok\": \"!echo ok\", \"X-Lit\": \"literal\"}}}}",
                              "h");
  mcp_config_diag *diags = NULL;
  size_t n = 0;
  mcp_server_def *r = resolve(d, 5000, &diags, &n);
  ck_assert_ptr_null(header_of(r, "Authorization"));
  ck_assert_str_eq(header_of(r, "X-Ok"), "ok");
  ck_assert_str_eq(header_of(r, "X-Lit"), "literal");
  ck_assert_uint_eq(n, 1);
  ck_assert_ptr_nonnull(strstr(diags[0].message, "header \"Authorization\""));
  ck_assert_ptr_nonnull(strstr(diags[0].message, "CR or LF"));
  ck_assert_ptr_null(strstr(diags[0].message, "Injected"));
  mcp__config_diags_free(diags, n);
  diags = NULL;
  n = 0;
  mcp__server_def_free(r);
  mcp__server_def_free(d);

  /* Another client's file: "!" is literal there. */
  mcp_config_set *set = parse_as("{\"mcpServers\": {\"f\": {\"command\": \"x\", \"env\": "
                                 "{\"T\": \"!echo should-not-run\"}}}}",
                                 MCP_CONFIG_FOREIGN);
  r = resolve(must_find(set, "f"), 5000, &diags, &n);
  ck_assert_str_eq(env_of(r, "T"), "!echo should-not-run");
  ck_assert_uint_eq(n, 0);
  mcp__server_def_free(r);
  mcp__config_free(set);
}
END_TEST

START_TEST(test_secret_fd_hygiene) {
  /* A descriptor the host left inheritable is not passed on. */
  int fd = open("/dev/null", O_RDONLY);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(dup2(fd, 57), 57);
  mcp_server_def *d = one_def("{\"mcpServers\": {\"s\": {\"command\": \"x\", \"env\": {"
                              "\"FDS\": \"!ls /proc/self/fd | tr '\\\\n' ' '; "
                              "test -t 0 && echo tty; true\"}}}}",
                              "s");
  mcp_config_diag *diags = NULL;
  size_t n = 0;
  mcp_server_def *r = resolve(d, 5000, &diags, &n);
  const char *fds = env_of(r, "FDS");
  ck_assert_ptr_nonnull(fds);
  /* ls itself has 0, 1, 2 and its directory handle. */
  ck_assert_msg(strstr(fds, "57") == NULL, "inherited fds: %s", fds);
  ck_assert_ptr_null(strstr(fds, "tty"));
  mcp__server_def_free(r);
  mcp__server_def_free(d);
  mcp__config_diags_free(diags, n);
  close(57);
  close(fd);
}
END_TEST

/* ---- discovery ------------------------------------------------------------------- */

/*
 * The layout shared by the discovery tests:
 *   explicit.json                      s1
 *   proj/.git/, proj/sub/dir (cwd)
 *   proj/.mcp.json                     s1 s2
 *   xdg/mcpconn/mcp.json               s2 s3
 *   home/.claude.json                  s3 s4, projects[proj]: s4 s5
 *   proj/.claude/mcp.json              s5 s6
 *   proj/.cursor/mcp.json              s7     home/.cursor/mcp.json  s7 s11
 *   proj/.vscode/mcp.json (servers)    s8
 *   home/.codeium/windsurf/mcp_config.json  s9
 *   proj/.gemini/settings.json         s10    home/.gemini/settings.json s10
 *   mcp.json above the project         above   (never read: .git stops)
 */
static void make_layout(void) {
  char buf[2048];
  put("explicit.json", "{\"mcpServers\": {\"s1\": {\"command\": \"explicit-s1\"}}}");
  mkdirs("proj/.git");
  mkdirs("proj/sub/dir");
  put(".mcp.json", "{\"mcpServers\": {\"above\": {\"command\": \"above\"}}}");
  put("proj/.mcp.json", "{\"mcpServers\": {\"s1\": {\"command\": \"project-s1\"}, "
                        "\"s2\": {\"command\": \"project-s2\"}}}");
  put("xdg/mcpconn/mcp.json", "{\"mcpServers\": {\"s2\": {\"command\": \"user-s2\"}, "
                              "\"s3\": {\"command\": \"user-s3\"}}}");
  snprintf(buf, sizeof(buf),
           "{\"numStartups\": 3, \"mcpServers\": {\"s3\": {\"command\": "
           "\"claude-s3\"}, \"s4\": {\"command\": \"claude-s4\"}}, "
           "\"projects\": {\"/elsewhere\": {\"mcpServers\": {\"s6\": "
           "{\"command\": \"wrong\"}}}, \"%s\": {\"allowedTools\": [], "
           "\"mcpServers\": {\"s4\": {\"command\": \"claude-local-s4\"}, "
           "\"s5\": {\"type\": \"stdio\", \"command\": \"claude-local-s5\"}}}}}",
           tpath("proj"));
  put("home/.claude.json", buf);
  put("proj/.claude/mcp.json", "{\"mcpServers\": {\"s5\": {\"command\": \"claude-proj-s5\"}, "
                               "\"s6\": {\"command\": \"claude-proj-s6\"}}}");
  put("proj/.cursor/mcp.json", "{\"mcpServers\": {\"s7\": {\"command\": \"cursor-proj-s7\"}}}");
  put("home/.cursor/mcp.json", "{\"mcpServers\": {\"s7\": {\"command\": \"cursor-user-s7\"}, "
                               "\"s11\": {\"url\": \"https://cursor/mcp\"}}}");
  put("proj/.vscode/mcp.json", "{\"servers\": {\"s8\": {\"type\": \"http\", \"url\": "
                               "\"https://vscode/mcp\"}}, \"inputs\": []}");
  put("home/.codeium/windsurf/mcp_config.json",
      "{\"mcpServers\": {\"s9\": {\"serverUrl\": \"https://windsurf/mcp\"}}}");
  put("proj/.gemini/settings.json", "{\"theme\": \"x\", \"mcpServers\": {\"s10\": {\"httpUrl\": "
                                    "\"https://gemini-proj/mcp\"}}}");
  put("home/.gemini/settings.json",
      "{\"mcpServers\": {\"s10\": {\"url\": \"https://gemini-user/sse\"}}}");
}

static const char *const no_env[] = {NULL};

/* These tests are about order and dialects: every project file is trusted
 * for the run (tests/check_trust.c tests the trust itself). */
static mcp_trust trust_once(void *user, const char *path, const char *sha256,
                            const char *servers_json) {
  (void)user, (void)path, (void)sha256, (void)servers_json;
  return MCP_TRUST_ONCE;
}

static void base_opts(mcp_discovery_opts *o, const char **files, size_t n) {
  memset(o, 0, sizeof(*o));
  o->files = files;
  o->nfiles = n;
  o->cwd = tpath("proj/sub/dir");
  o->home = tpath("home");
  o->xdg_config_home = tpath("xdg");
  o->getenv = table_getenv;
  o->getenv_user = (void *)no_env;
  o->trust = trust_once;
}

static mcp_config_set *discover(const mcp_discovery_opts *o) {
  mcp_config_set *set = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp__config_discover(o, &set, &err);
  ck_assert_msg(st == MCP_OK, "discover: %s", err.message ? err.message : "");
  return set;
}

static const char *cmd_of(const mcp_config_set *set, const char *name) {
  const mcp_server_def *d = mcp__config_find(set, name);
  if (!d) return NULL;
  return d->s.argv ? d->s.argv[0] : d->s.url;
}

START_TEST(test_discovery_precedence) {
  make_layout();
  const char *files[] = {tpath("explicit.json")};
  mcp_discovery_opts o;
  base_opts(&o, files, 1);
  o.imports = MCP_IMPORT_ALL;
  mcp_config_set *set = discover(&o);
  if (count_level(set, MCP_LOG_WARN)) dump_diags(set);
  ck_assert_uint_eq(count_level(set, MCP_LOG_WARN), 0);
  ck_assert_str_eq(cmd_of(set, "s1"), "explicit-s1");
  ck_assert_str_eq(cmd_of(set, "s2"), "project-s2");
  ck_assert_str_eq(cmd_of(set, "s3"), "user-s3");
  ck_assert_str_eq(cmd_of(set, "s4"), "claude-local-s4");
  ck_assert_str_eq(cmd_of(set, "s5"), "claude-local-s5");
  ck_assert_str_eq(cmd_of(set, "s6"), "claude-proj-s6");
  ck_assert_str_eq(cmd_of(set, "s7"), "cursor-proj-s7");
  ck_assert_str_eq(cmd_of(set, "s8"), "https://vscode/mcp");
  ck_assert_str_eq(cmd_of(set, "s9"), "https://windsurf/mcp");
  ck_assert_str_eq(cmd_of(set, "s10"), "https://gemini-proj/mcp");
  ck_assert_str_eq(cmd_of(set, "s11"), "https://cursor/mcp");
  ck_assert_ptr_null(cmd_of(set, "above")); /* .git stopped the search */
  ck_assert_uint_eq(set->ndefs, 11);
  /* Sorted by name. */
  for (size_t i = 1; i < set->ndefs; i++)
    ck_assert_int_lt(strcmp(set->defs[i - 1]->name, set->defs[i]->name), 0);
  /* Imported definitions are marked foreign, ours are not. */
  ck_assert(!mcp__config_find(set, "s1")->foreign);
  ck_assert(!mcp__config_find(set, "s2")->foreign);
  ck_assert(mcp__config_find(set, "s4")->foreign);
  ck_assert_int_eq(mcp__config_find(set, "s10")->type, MCP_SERVER_HTTP);
  /* Sources. */
  ck_assert_str_eq(mcp__config_find(set, "s1")->source, files[0]);
  ck_assert_str_eq(mcp__config_find(set, "s2")->source, tpath("proj/.mcp.json"));
  char want[1200];
  snprintf(want, sizeof(want), "%s (project %s)", tpath("home/.claude.json"), tpath("proj"));
  ck_assert_str_eq(mcp__config_find(set, "s4")->source, want);
  /* Later definitions are debug notes naming the winner's file. */
  const mcp_config_diag *d = find_diag(set, MCP_LOG_DEBUG, "s1", files[0]);
  ck_assert_ptr_nonnull(d);
  ck_assert_str_eq(d->source, tpath("proj/.mcp.json"));
  ck_assert_ptr_nonnull(find_diag(set, MCP_LOG_DEBUG, "s10", "ignored"));
  /* Files in priority order. */
  ck_assert_uint_ge(set->nfiles, 4);
  ck_assert_str_eq(set->files[0], files[0]);
  ck_assert_str_eq(set->files[1], tpath("proj/.mcp.json"));
  /* Project scope (ours, then the clients') before user scope. */
  ck_assert_str_eq(set->files[2], want);
  size_t xdg_at = 0, cursor_proj_at = 0;
  for (size_t i = 0; i < set->nfiles; i++) {
    if (strcmp(set->files[i], tpath("xdg/mcpconn/mcp.json")) == 0) xdg_at = i;
    if (strcmp(set->files[i], tpath("proj/.gemini/settings.json")) == 0) cursor_proj_at = i;
  }
  ck_assert_uint_gt(xdg_at, cursor_proj_at);
  ck_assert_uint_gt(cursor_proj_at, 2);
  mcp__config_free(set);

  /* Without imports only our own files count. */
  o.imports = 0;
  set = discover(&o);
  ck_assert_uint_eq(set->ndefs, 3);
  ck_assert_str_eq(cmd_of(set, "s3"), "user-s3");
  mcp__config_free(set);

  /* One client only. */
  o.imports = MCP_IMPORT_GEMINI;
  set = discover(&o);
  ck_assert_uint_eq(set->ndefs, 4);
  ck_assert_str_eq(cmd_of(set, "s10"), "https://gemini-proj/mcp");
  mcp__config_free(set);
}
END_TEST

START_TEST(test_discovery_no_project) {
  make_layout();
  mcp_discovery_opts o;
  base_opts(&o, NULL, 0);
  o.imports = MCP_IMPORT_ALL;
  o.no_project = true;
  mcp_config_set *set = discover(&o);
  ck_assert_ptr_null(cmd_of(set, "s1"));
  ck_assert_str_eq(cmd_of(set, "s2"), "user-s2");
  /* ~/.claude.json's per-project entry lives in the home: still read. */
  ck_assert_str_eq(cmd_of(set, "s5"), "claude-local-s5");
  ck_assert_ptr_null(cmd_of(set, "s6"));
  ck_assert_str_eq(cmd_of(set, "s7"), "cursor-user-s7");
  ck_assert_ptr_null(cmd_of(set, "s8"));
  ck_assert_str_eq(cmd_of(set, "s10"), "https://gemini-user/sse");
  ck_assert_int_eq(mcp__config_find(set, "s10")->type, MCP_SERVER_SSE);
  mcp__config_free(set);
}
END_TEST

START_TEST(test_discovery_no_user) {
  make_layout();
  const char *files[] = {tpath("explicit.json")};
  mcp_discovery_opts o;
  base_opts(&o, files, 1);
  o.imports = MCP_IMPORT_ALL;
  o.no_user = true;
  mcp_config_set *set = discover(&o);
  /* Explicit, project and project-level imports only. */
  ck_assert_str_eq(cmd_of(set, "s1"), "explicit-s1");
  ck_assert_str_eq(cmd_of(set, "s2"), "project-s2");
  ck_assert_ptr_null(cmd_of(set, "s3"));
  ck_assert_ptr_null(cmd_of(set, "s4"));
  ck_assert_str_eq(cmd_of(set, "s5"), "claude-proj-s5");
  ck_assert_str_eq(cmd_of(set, "s7"), "cursor-proj-s7");
  ck_assert_str_eq(cmd_of(set, "s8"), "https://vscode/mcp");
  ck_assert_ptr_null(cmd_of(set, "s9"));
  ck_assert_ptr_null(cmd_of(set, "s11"));
  ck_assert_str_eq(cmd_of(set, "s6"), "claude-proj-s6");
  ck_assert_str_eq(cmd_of(set, "s10"), "https://gemini-proj/mcp");
  ck_assert_uint_eq(set->ndefs, 7);
  for (size_t i = 0; i < set->nfiles; i++) ck_assert_ptr_null(strstr(set->files[i], "/home/"));
  mcp__config_free(set);
}
END_TEST

START_TEST(test_discovery_upward_search) {
  mcp_discovery_opts o;
  mcp_config_set *set;
  put("a/.mcp.json", "{\"mcpServers\": {\"up\": {\"command\": \"up\"}}}");
  mkdirs("a/b/c");
  base_opts(&o, NULL, 0);
  /* No .git on the way: the nearest file above is found. */
  o.cwd = tpath("a/b/c");
  set = discover(&o);
  ck_assert_str_eq(cmd_of(set, "up"), "up");
  mcp__config_free(set);
  /* A trailing slash in cwd is fine. */
  char slash[1100];
  snprintf(slash, sizeof(slash), "%s/", tpath("a/b/c"));
  o.cwd = slash;
  set = discover(&o);
  ck_assert_str_eq(cmd_of(set, "up"), "up");
  mcp__config_free(set);
  /* A .git (a worktree's file counts too) in b stops the search at b. */
  put("a/b/.git", "gitdir: /elsewhere\n");
  o.cwd = tpath("a/b/c");
  set = discover(&o);
  ck_assert_ptr_null(cmd_of(set, "up"));
  mcp__config_free(set);
  /* ...but b itself is searched (inclusive). */
  put("a/b/.mcp.json", "{\"mcpServers\": {\"b\": {\"command\": \"b\"}}}");
  set = discover(&o);
  ck_assert_str_eq(cmd_of(set, "b"), "b");
  ck_assert_ptr_null(cmd_of(set, "up"));
  mcp__config_free(set);
  /* The nearest file wins even when another lies further up. */
  put("a/b/c/.mcp.json", "{\"mcpServers\": {\"c\": {\"command\": \"c\"}}}");
  set = discover(&o);
  ck_assert_str_eq(cmd_of(set, "c"), "c");
  ck_assert_ptr_null(cmd_of(set, "b"));
  mcp__config_free(set);
}
END_TEST

START_TEST(test_discovery_disabled_and_hidden) {
  make_layout();
  /* disabledServers in the user file removes even the explicit s1;
   * enabled:false in the project hides s2 and keeps the user's s2 out. */
  put("xdg/mcpconn/mcp.json",
      "{\"mcpServers\": {\"s2\": {\"command\": \"user-s2\"}, "
      "\"s3\": {\"command\": \"user-s3\"}}, \"disabledServers\": [\"s1\"]}");
  put("proj/.mcp.json", "{\"mcpServers\": {\"s2\": {\"command\": \"project-s2\", "
                        "\"enabled\": false}}}");
  const char *files[] = {tpath("explicit.json")};
  mcp_discovery_opts o;
  base_opts(&o, files, 1);
  mcp_config_set *set = discover(&o);
  ck_assert_ptr_null(cmd_of(set, "s1"));
  ck_assert_ptr_null(cmd_of(set, "s2"));
  ck_assert_str_eq(cmd_of(set, "s3"), "user-s3");
  ck_assert_uint_eq(set->ndefs, 1);
  ck_assert_uint_eq(set->ndisabled, 1);
  ck_assert_str_eq(set->disabled[0], "s1");
  ck_assert_ptr_nonnull(find_diag(set, MCP_LOG_DEBUG, "s1", "disabledServers"));
  ck_assert_ptr_nonnull(find_diag(set, MCP_LOG_DEBUG, "s2", "enabled"));
  mcp__config_free(set);

  /* disabledServers from an imported file counts too. */
  put("home/.cursor/mcp.json", "{\"mcpServers\": {}, \"disabledServers\": [\"s3\"]}");
  o.imports = MCP_IMPORT_CURSOR;
  set = discover(&o);
  ck_assert_ptr_null(cmd_of(set, "s3"));
  mcp__config_free(set);
}
END_TEST

START_TEST(test_discovery_invalid_entry_claims_name) {
  make_layout();
  put("proj/.mcp.json", "{\"mcpServers\": {\"s2\": {\"comand\": \"typo\"}}}");
  mcp_discovery_opts o;
  base_opts(&o, NULL, 0);
  mcp_config_set *set = discover(&o);
  /* The typo is reported; the user's s2 does not silently take over. */
  ck_assert_ptr_null(cmd_of(set, "s2"));
  const mcp_config_diag *d = find_diag(set, MCP_LOG_WARN, "s2", "unknown field \"comand\"");
  ck_assert_ptr_nonnull(d);
  ck_assert_str_eq(d->source, tpath("proj/.mcp.json"));
  ck_assert_str_eq(cmd_of(set, "s3"), "user-s3");
  mcp__config_free(set);
}
END_TEST

START_TEST(test_discovery_defaults) {
  /* Without XDG_CONFIG_HOME the user file is ~/.config/mcpconn/mcp.json,
   * and HOME and XDG come from the lookup when not given. */
  put("h2/.config/mcpconn/mcp.json", "{\"mcpServers\": {\"u\": {\"command\": \"${HOME}/bin/u\"}}}");
  put("x2/mcpconn/mcp.json", "{\"mcpServers\": {\"x\": {\"command\": \"x\"}}}");
  mkdirs("w/.git");
  const char *env1[] = {"HOME", tpath("h2"), NULL};
  mcp_discovery_opts o;
  memset(&o, 0, sizeof(o));
  o.cwd = tpath("w");
  o.getenv = table_getenv;
  o.getenv_user = (void *)env1;
  mcp_config_set *set = discover(&o);
  char want[1100];
  snprintf(want, sizeof(want), "%s/bin/u", tpath("h2"));
  ck_assert_str_eq(cmd_of(set, "u"), want);
  mcp__config_free(set);

  const char *env2[] = {"HOME", tpath("h2"), "XDG_CONFIG_HOME", tpath("x2"), NULL};
  o.getenv_user = (void *)env2;
  set = discover(&o);
  ck_assert_ptr_null(cmd_of(set, "u"));
  ck_assert_str_eq(cmd_of(set, "x"), "x");
  mcp__config_free(set);

  /* A relative XDG_CONFIG_HOME is ignored. */
  const char *env3[] = {"HOME", tpath("h2"), "XDG_CONFIG_HOME", "rel", NULL};
  o.getenv_user = (void *)env3;
  set = discover(&o);
  ck_assert_str_eq(cmd_of(set, "u"), want);
  mcp__config_free(set);

  /* cwd is the home: ~/.cursor/mcp.json is both the project and the user
   * file, and is read once. */
  put("h2/.cursor/mcp.json", "{\"mcpServers\": {\"c\": {\"command\": \"c\"}}}");
  mkdirs("h2/.git");
  o.getenv_user = (void *)env1;
  o.cwd = tpath("h2");
  o.imports = MCP_IMPORT_CURSOR;
  set = discover(&o);
  ck_assert_str_eq(cmd_of(set, "c"), "c");
  ck_assert_ptr_null(find_diag(set, MCP_LOG_DEBUG, "c", NULL));
  size_t seen = 0;
  for (size_t i = 0; i < set->nfiles; i++)
    if (strstr(set->files[i], ".cursor/mcp.json")) seen++;
  ck_assert_uint_eq(seen, 1);
  mcp__config_free(set);
  o.imports = 0;

  /* A FIFO where a file belongs is a warning, not a hang. */
  ck_assert_int_eq(mkfifo(tpath("fifo.json"), 0600), 0);
  const char *ff[] = {tpath("fifo.json")};
  o.files = ff;
  o.nfiles = 1;
  set = discover(&o);
  ck_assert_ptr_nonnull(find_diag(set, MCP_LOG_WARN, NULL, "not a regular file"));
  mcp__config_free(set);
  o.files = NULL;
  o.nfiles = 0;

  /* A relative cwd is refused. */
  o.cwd = "relative/dir";
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp__config_discover(&o, &set, &err), MCP_EINVAL);
  ck_assert_ptr_null(set);
  ck_assert_ptr_nonnull(err.message);
  mcp_error_clear(&err);
}
END_TEST

/* ---- hashing ------------------------------------------------------------------- */

static char *hash_of(const char *server_json, const char *const *env) {
  char text[2048];
  snprintf(text, sizeof(text), "{\"mcpServers\": {\"s\": %s}}", server_json);
  mcp_config_parse_opts o = {
      .dialect = MCP_CONFIG_NATIVE, .getenv = table_getenv, .getenv_user = (void *)env};
  mcp_config_set *set = NULL;
  ck_assert_int_eq(mcp__config_parse_text(text, strlen(text), SRC, &o, &set), MCP_OK);
  if (set->ndiags) dump_diags(set);
  char *h = strdup(must_find(set, "s")->hash);
  mcp__config_free(set);
  return h;
}

START_TEST(test_hash_stability) {
  char *a = hash_of("{\"command\": \"x\", \"args\": [\"a\", \"b\"], \"env\": "
                    "{\"A\": \"1\", \"B\": \"2\"}, \"timeout\": 10}",
                    NULL);
  char *b = hash_of("{\"timeout\": 10, \"env\": {\"B\": \"2\", \"A\": \"1\"}, "
                    "\"type\": \"stdio\", \"enabled\": true, \"args\": "
                    "[\"a\", \"b\"], \"command\": \"x\"}",
                    NULL);
  char *c = hash_of("{\"command\": \"x\", \"args\": [\"a\", \"c\"], \"env\": "
                    "{\"A\": \"1\", \"B\": \"2\"}, \"timeout\": 10}",
                    NULL);
  char *d = hash_of("{\"command\": \"x\", \"args\": [\"b\", \"a\"], \"env\": "
                    "{\"A\": \"1\", \"B\": \"2\"}, \"timeout\": 10}",
                    NULL);
  char *e = hash_of("{\"command\": \"x\", \"args\": [\"a\", \"b\"], \"env\": "
                    "{\"A\": \"1\", \"B\": \"3\"}, \"timeout\": 10}",
                    NULL);
  ck_assert_uint_eq(strlen(a), 64);
  for (const char *p = a; *p; p++) ck_assert((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'));
  ck_assert_str_eq(a, b);
  ck_assert_str_ne(a, c);
  ck_assert_str_ne(a, d);
  ck_assert_str_ne(a, e);
  free(a);
  free(b);
  free(c);
  free(d);
  free(e);

  /* The hash sees expanded values: a variable that changes the command
   * changes the hash. */
  const char *env1[] = {"BIN", "one", NULL}, *env2[] = {"BIN", "two", NULL};
  a = hash_of("{\"command\": \"${BIN}\"}", env1);
  b = hash_of("{\"command\": \"${BIN}\"}", env2);
  c = hash_of("{\"command\": \"one\"}", env2);
  ck_assert_str_ne(a, b);
  ck_assert_str_eq(a, c);
  free(a);
  free(b);
  free(c);

  /* HTTP: header order and an explicit default do not matter. */
  a = hash_of("{\"url\": \"https://h\", \"headers\": {\"A\": \"1\", \"B\": "
              "\"2\"}}",
              NULL);
  b = hash_of("{\"http2\": \"auto\", \"type\": \"http\", \"insecure\": false, "
              "\"headers\": {\"B\": \"2\", \"A\": \"1\"}, \"url\": "
              "\"https://h\"}",
              NULL);
  c = hash_of("{\"url\": \"https://h\", \"headers\": {\"A\": \"1\", \"B\": "
              "\"2\"}, \"http2\": \"off\"}",
              NULL);
  d = hash_of("{\"type\": \"sse\", \"url\": \"https://h\", \"headers\": "
              "{\"A\": \"1\", \"B\": \"2\"}}",
              NULL);
  ck_assert_str_eq(a, b);
  ck_assert_str_ne(a, c);
  ck_assert_str_ne(a, d);
  free(a);
  free(b);
  free(c);
  free(d);
}
END_TEST

START_TEST(test_canonical_form) {
  mcp_config_set *set = parse(
      "{\"mcpServers\": {\"s\": {\"env\": {\"Z\": \"z\", \"A\": \"q\\\"\\n\"}, "
      "\"command\": \"x\", \"args\": [\"a\"], \"cwd\": \"/w\", \"timeout\": 7}, "
      "\"h\": {\"url\": \"https://h\", \"insecure\": true, \"caFile\": \"f\", "
      "\"http2\": \"off\", \"headers\": {\"X\": \"!secret-cmd\"}}}}");
  char *canon = NULL;
  ck_assert_int_eq(mcp__config_canonical_json(must_find(set, "s"), &canon), MCP_OK);
  ck_assert_str_eq(canon, "{\"args\":[\"a\"],\"command\":\"x\",\"cwd\":\"/w\","
                          "\"env\":{\"A\":\"q\\\"\\n\",\"Z\":\"z\"},"
                          "\"timeout\":7,\"type\":\"stdio\"}");
  mcp__free(canon);
  ck_assert_int_eq(mcp__config_canonical_json(must_find(set, "h"), &canon), MCP_OK);
  ck_assert_str_eq(canon, "{\"caFile\":\"f\",\"headers\":{\"X\":"
                          "\"!secret-cmd\"},\"http2\":\"off\",\"insecure\":"
                          "true,\"type\":\"http\",\"url\":\"https://h\"}");
  mcp__free(canon);
  mcp__config_free(set);
}
END_TEST

/* ---- client options -------------------------------------------------------------- */

START_TEST(test_client_options_round_trip) {
  mcp_config_set *set = parse(
      "{\"mcpServers\": {\"s\": {\"command\": \"/bin/srv\", \"args\": [\"-v\", "
      "\"--x=${A}\"], \"cwd\": \"/tmp\", \"env\": {\"K1\": \"v1\", \"K2\": "
      "\"\"}, \"timeout\": 1234}, \"d\": {\"command\": \"srv\"}, "
      "\"h\": {\"url\": \"https://h\"}}}");
  mcp_client_options *co = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp__config_client_options(must_find(set, "s"), &co, &err), MCP_OK);
  ck_assert_str_eq(co->s.argv[0], "/bin/srv");
  ck_assert_str_eq(co->s.argv[1], "-v");
  ck_assert_str_eq(co->s.argv[2], "--x=1");
  ck_assert_ptr_null(co->s.argv[3]);
  ck_assert_str_eq(co->s.cwd, "/tmp");
  ck_assert_uint_eq(co->s.nenv, 2);
  ck_assert_str_eq(co->s.env[0].name, "K1");
  ck_assert_str_eq(co->s.env[0].value, "v1");
  ck_assert_str_eq(co->s.env[1].name, "K2");
  ck_assert_str_eq(co->s.env[1].value, "");
  ck_assert_int_eq(co->s.timeout_ms, 1234);
  mcp_client_options_free(co);

  /* No timeout given: the options keep their default. */
  mcp_client_options *dflt = mcp_client_options_new();
  ck_assert_int_eq(mcp__config_client_options(must_find(set, "d"), &co, &err), MCP_OK);
  ck_assert_int_eq(co->s.timeout_ms, dflt->s.timeout_ms);
  ck_assert_ptr_null(co->s.cwd);
  ck_assert_uint_eq(co->s.nenv, 0);
  mcp_client_options_free(co);
  mcp_client_options_free(dflt);

  ck_assert_int_eq(mcp__config_client_options(NULL, &co, &err), MCP_EINVAL);
  ck_assert_ptr_null(co);
  mcp_error_clear(&err);
  mcp__config_free(set);
}
END_TEST

/* "protocol": parsed to the era mode and carried to the client options. */
START_TEST(test_protocol_field) {
  mcp_config_set *set = parse(
      "{\"mcpServers\": {\"a\": {\"command\": \"x\", \"protocol\": \"auto\"}, "
      "\"m\": {\"url\": \"https://h\", \"protocol\": \"modern\"}, "
      "\"l\": {\"command\": \"x\", \"protocol\": \"legacy\"}, "
      "\"p\": {\"command\": \"x\", \"protocol\": \"2025-06-18\"}, "
      "\"q\": {\"type\": \"http\", \"url\": \"https://h\", \"protocol\": \"2026-07-28\"}, "
      "\"n\": {\"command\": \"x\"}}}");
  ck_assert_uint_eq(set->ndiags, 0);
  static const struct {
    const char *name, *field;
    int mode;
    const char *pinned;
  } want[] = {{"a", "auto", MCP_ERA_AUTO, NULL},
              {"m", "modern", MCP_ERA_MODERN, NULL},
              {"l", "legacy", MCP_ERA_LEGACY, NULL},
              {"p", "2025-06-18", MCP_ERA_LEGACY, "2025-06-18"},
              {"q", "2026-07-28", MCP_ERA_MODERN, "2026-07-28"},
              {"n", NULL, MCP_ERA_AUTO, NULL}};
  for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
    const mcp_server_def *d = must_find(set, want[i].name);
    if (want[i].field) ck_assert_str_eq(d->s.protocol, want[i].field);
    else ck_assert_ptr_null(d->s.protocol);
    /* A copy keeps it (a static string: nothing to free). */
    mcp_server_def *dup = mcp__server_def_dup(d);
    ck_assert_ptr_eq(dup->s.protocol, d->s.protocol);
    mcp__server_def_free(dup);
    mcp_client_options *co = NULL;
    mcp_error err = MCP_ERROR_INIT;
    ck_assert_int_eq(mcp__config_client_options(d, &co, &err), MCP_OK);
    mcp_era_mode mode;
    const char *pinned;
    ck_assert(mcp__era_parse_mode(co->s.protocol, &mode, &pinned));
    ck_assert_int_eq(mode, want[i].mode);
    if (want[i].pinned) ck_assert_str_eq(pinned, want[i].pinned);
    else ck_assert_ptr_null(pinned);
    mcp_client_options_free(co);
  }
  mcp__config_free(set);
}
END_TEST

START_TEST(test_client_options_http) {
  mcp_config_set *set = parse(
      "{\"mcpServers\": {\"h\": {\"type\": \"http\", \"url\": "
      "\"https://h.example/mcp\", \"headers\": {\"Authorization\": \"Bearer "
      "${TOKEN}\", \"X-Two\": \"2\"}, \"http2\": \"prior-knowledge\", "
      "\"caFile\": \"/ca.pem\", \"caDir\": \"/cas\", \"clientCert\": "
      "\"/c.pem\", \"clientKey\": \"/k.pem\", \"insecure\": true, "
      "\"timeout\": 0}, \"s\": {\"type\": \"sse\", \"url\": "
      "\"http://127.0.0.1:9/sse\", \"http2\": \"off\"}, "
      "\"u\": {\"url\": \"http://[not a url\"}}}");
  mcp_client_options *co = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp__config_client_options(must_find(set, "h"), &co, &err), MCP_OK);
  ck_assert_str_eq(co->s.url, "https://h.example/mcp");
  ck_assert_ptr_null(co->s.argv);
  ck_assert_int_eq(co->s.http_kind, MCP_HTTP_TRANSPORT_AUTO);
  ck_assert_int_eq(co->s.http_version, MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
  ck_assert_uint_eq(co->s.nheaders, 2);
  ck_assert_str_eq(co->s.headers[0].name, "Authorization");
  ck_assert_str_eq(co->s.headers[0].value, "Bearer t0k");
  ck_assert_str_eq(co->s.headers[1].name, "X-Two");
  ck_assert_str_eq(co->s.tls.ca_file, "/ca.pem");
  ck_assert_str_eq(co->s.tls.ca_dir, "/cas");
  ck_assert_str_eq(co->s.tls.client_cert, "/c.pem");
  ck_assert_str_eq(co->s.tls.client_key, "/k.pem");
  ck_assert(co->s.tls.insecure);
  ck_assert_int_eq(co->s.timeout_ms, 0);
  mcp_client_options_free(co);

  ck_assert_int_eq(mcp__config_client_options(must_find(set, "s"), &co, &err), MCP_OK);
  ck_assert_int_eq(co->s.http_kind, MCP_HTTP_TRANSPORT_LEGACY_SSE);
  ck_assert_int_eq(co->s.http_version, MCP_HTTP_VERSION_1_1);
  ck_assert_uint_eq(co->s.nheaders, 0);
  ck_assert(!co->s.tls.insecure);
  mcp_client_options_free(co);

  /* A URL the client refuses: the error names file, server and field. */
  ck_assert_int_eq(mcp__config_client_options(must_find(set, "u"), &co, &err), MCP_EINVAL);
  ck_assert_ptr_null(co);
  ck_assert_str_eq(err.message, SRC ": server \"u\": cannot use \"url\": "
                                    "invalid argument");
  mcp_error_clear(&err);
  mcp__config_free(set);
}
END_TEST

START_TEST(test_def_dup) {
  mcp_config_set *set = parse("{\"mcpServers\": {\"s\": {\"command\": \"x\", \"args\": [\"a\"], "
                              "\"env\": {\"K\": \"v\"}, \"cwd\": \"/w\"}, \"h\": {\"url\": "
                              "\"https://h\", \"headers\": {\"A\": \"b\"}, \"caFile\": \"c\", "
                              "\"clientKey\": \"k\"}}}");
  for (size_t i = 0; i < set->ndefs; i++) {
    const mcp_server_def *d = set->defs[i];
    mcp_server_def *c = mcp__server_def_dup(d);
    char *x = NULL, *y = NULL;
    ck_assert_int_eq(mcp__config_canonical_json(d, &x), MCP_OK);
    ck_assert_int_eq(mcp__config_canonical_json(c, &y), MCP_OK);
    ck_assert_str_eq(x, y);
    ck_assert_str_eq(c->hash, d->hash);
    ck_assert_str_eq(c->name, d->name);
    ck_assert_str_eq(c->source, d->source);
    mcp__free(x);
    mcp__free(y);
    mcp__server_def_free(c);
  }
  /* Every allocation failure is clean. */
  for (long k = 0; k < 100; k++) {
    mcp__alloc_fail_after(k);
    mcp_server_def *c = mcp__server_def_dup(set->defs[1]);
    mcp__alloc_fail_after(-1);
    mcp__server_def_free(c);
    if (c) break;
  }
  mcp__config_free(set);
}
END_TEST

START_TEST(test_alloc_failures) {
  make_layout();
  const char *files[] = {tpath("explicit.json")};
  mcp_discovery_opts o;
  base_opts(&o, files, 1);
  o.imports = MCP_IMPORT_ALL;
  const char *text = "{\"mcpServers\": {\"a\": {\"command\": \"${A:-a}\", \"args\": [\"x\"], "
                     "\"env\": {\"K\": \"v\"}}, \"b\": {\"url\": \"https://h\", \"headers\": "
                     "{\"H\": \"v\"}}, \"bad\": {\"x\": 1}}, \"disabledServers\": [\"z\"]}";
  bool parsed = false, found = false;
  for (long k = 0; k < 5000 && !(parsed && found); k++) {
    mcp_config_set *set = NULL;
    mcp_error err = MCP_ERROR_INIT;
    mcp__alloc_fail_after(k);
    mcp_status st = mcp__config_parse_text(text, strlen(text), SRC, NULL, &set);
    mcp__alloc_fail_after(-1);
    ck_assert(st == MCP_OK || st == MCP_ENOMEM);
    if (st == MCP_OK) {
      ck_assert_uint_eq(set->ndefs, 2);
      parsed = true;
    } else {
      ck_assert_ptr_null(set);
    }
    mcp__config_free(set);
    set = NULL;
    mcp__alloc_fail_after(k);
    st = mcp__config_discover(&o, &set, &err);
    mcp__alloc_fail_after(-1);
    ck_assert(st == MCP_OK || st == MCP_ENOMEM);
    if (st == MCP_OK) {
      ck_assert_uint_eq(set->ndefs, 11);
      found = true;
    }
    mcp__config_free(set);
    mcp_error_clear(&err);
  }
  ck_assert(parsed && found);
}
END_TEST

START_TEST(test_parse_mutations) {
  const char *good = "{\"mcpServers\": {\"a\": {\"command\": \"${A:-x}\", \"args\": "
                     "[\"${B}\", \"$${C}\"], \"env\": {\"K\": \"v\"}, \"timeout\": 5}, "
                     "\"b\": {\"type\": \"http\", \"url\": \"https://h/${A}\", \"headers\": "
                     "{\"H\": \"v\"}, \"http2\": \"off\", \"insecure\": false}}, "
                     "\"disabledServers\": [\"c\"]}";
  size_t len = strlen(good);
  uint64_t s = 0xabcdef12345ULL;
  char *buf = malloc(len + 1);
  for (int round = 0; round < 3000; round++) {
    memcpy(buf, good, len + 1);
    for (int f = 0; f < 1 + round % 3; f++) {
      s ^= s << 13;
      s ^= s >> 7;
      s ^= s << 17;
      buf[s % len] = (char)(s >> 40);
    }
    mcp_config_set *set = NULL;
    ck_assert_int_eq(mcp__config_parse_text(buf, len, SRC, NULL, &set), MCP_OK);
    for (size_t i = 0; i < set->ndiags; i++) ck_assert_ptr_nonnull(set->diags[i].message);
    for (size_t i = 0; i < set->ndefs; i++) ck_assert_uint_eq(strlen(set->defs[i]->hash), 64);
    mcp__config_free(set);
  }
  free(buf);
}
END_TEST

/* ---- other clients' files as those clients read them ------------------------- */

static const char *input_lookup(void *user, const char *id) {
  (void)user;
  return strcmp(id, "api-key") == 0 ? "k3y" : NULL;
}

/* One string in "args" of a stdio entry, in |d|'s dialect: its expansion,
 * or NULL when the entry is left out (then with a warning naming the field). */
static char *expand_in(mcp_config_dialect d, const char *value) {
  char text[512];
  snprintf(text, sizeof(text), "{\"%s\": {\"s\": {\"command\": \"x\", \"args\": [\"%s\"]}}}",
           d == MCP_CONFIG_VSCODE ? "servers" : "mcpServers", value);
  mcp_config_parse_opts o = {.dialect = d,
                             .getenv = table_getenv,
                             .input = input_lookup,
                             .home = "/home/h",
                             .workspace = "/w/proj"};
  mcp_config_set *set = NULL;
  ck_assert_int_eq(mcp__config_parse_text(text, strlen(text), SRC, &o, &set), MCP_OK);
  const mcp_server_def *s = mcp__config_find(set, "s");
  char *out = s ? strdup(s->s.argv[1]) : NULL;
  if (!s) {
    const mcp_config_diag *dg = find_diag(set, MCP_LOG_WARN, "s", "cannot be resolved");
    if (!dg) dump_diags(set);
    ck_assert_ptr_nonnull(dg);
    ck_assert_str_eq(dg->field, "args");
  }
  mcp__config_free(set);
  return out;
}

START_TEST(test_variables_per_client) {
  static const struct {
    mcp_config_dialect d;
    const char *in, *out; /* out NULL: the server is not usable */
  } cases[] = {
      /* mcpconn: ${VAR}, ${VAR:-default}, $${ escapes */
      {MCP_CONFIG_NATIVE, "${A}/${UNSET:-d}", "1/d"},
      {MCP_CONFIG_NATIVE, "$${A} $A ${1}", "${A} $A ${1}"},
      {MCP_CONFIG_NATIVE, "${UNSET}", NULL},
      /* Claude Code: ${VAR} and ${VAR:-default} (code.claude.com/docs/en/mcp) */
      {MCP_CONFIG_FOREIGN, "${A}-${UNSET:-x}", "1-x"},
      {MCP_CONFIG_FOREIGN, "$A", "$A"},
      {MCP_CONFIG_FOREIGN, "${UNSET}", NULL},
      {MCP_CONFIG_FOREIGN, "${env:A}", NULL},
      /* VS Code: ${env:}, ${input:}, predefined variables */
      {MCP_CONFIG_VSCODE, "${env:A}:${input:api-key}", "1:k3y"},
      {MCP_CONFIG_VSCODE, "${userHome}|${workspaceFolder}|${workspaceFolderBasename}",
       "/home/h|/w/proj|proj"},
      {MCP_CONFIG_VSCODE, "a${/}b${pathSeparator}c", "a/b/c"},
      {MCP_CONFIG_VSCODE, "Bearer ${input:other}", NULL},
      {MCP_CONFIG_VSCODE, "${env:UNSET}", NULL},
      {MCP_CONFIG_VSCODE, "${A}", NULL},
      {MCP_CONFIG_VSCODE, "$A and ${ not a ref}", "$A and ${ not a ref}"},
      /* Gemini CLI: $VAR and ${VAR} */
      {MCP_CONFIG_GEMINI, "$A-${B}", "1-2"},
      {MCP_CONFIG_GEMINI, "$UNSET", NULL},
      {MCP_CONFIG_GEMINI, "${UNSET}", NULL},
      {MCP_CONFIG_GEMINI, "cost: 5$", "cost: 5$"},
      /* Cursor: ${env:}, ${userHome}, ${workspaceFolder} */
      {MCP_CONFIG_CURSOR, "${env:TOKEN}@${userHome}", "t0k@/home/h"},
      {MCP_CONFIG_CURSOR, "${input:api-key}", NULL},
      /* Windsurf: ${env:} */
      {MCP_CONFIG_WINDSURF, "${env:TOKEN}", "t0k"},
      {MCP_CONFIG_WINDSURF, "${file:/etc/key}", NULL},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char *got = expand_in(cases[i].d, cases[i].in);
    ck_assert_msg((got == NULL) == (cases[i].out == NULL) &&
                      (!got || strcmp(got, cases[i].out) == 0),
                  "case %zu (%d) '%s': got '%s', want '%s'", i, cases[i].d, cases[i].in,
                  got ? got : "(unusable)", cases[i].out ? cases[i].out : "(unusable)");
    free(got);
  }
  /* Every string field is covered, not only args: a header, env, the url. */
  mcp_config_set *set = parse_as(
      "{\"servers\": {\"h\": {\"type\": \"http\", \"url\": \"https://x/${input:nope}\"},"
      " \"e\": {\"command\": \"x\", \"env\": {\"K\": \"${env:UNSET}\"}}}}",
      MCP_CONFIG_VSCODE);
  ck_assert_uint_eq(set->ndefs, 0);
  ck_assert_str_eq(find_diag(set, MCP_LOG_WARN, "h", "${input:nope}")->field, "url");
  const mcp_config_diag *dg = find_diag(set, MCP_LOG_WARN, "e", "${env:UNSET}");
  ck_assert_str_eq(dg->field, "env");
  ck_assert_ptr_nonnull(strstr(dg->message, "(K)"));
  mcp__config_free(set);
}
END_TEST

START_TEST(test_disabled_and_unknown_fields) {
  /* "disabled": true and "enabled": false hide an entry, in every dialect;
   * a --config file (native) accepts "disabled" too. */
  for (int d = 0; d < MCP_CONFIG_DIALECTS; d++) {
    if (d == MCP_CONFIG_CODEX) continue; /* TOML: test_toml_reader */
    char text[512];
    snprintf(text, sizeof(text),
             "{\"%s\": {\"off\": {\"command\": \"x\", \"disabled\": true}, "
             "\"on\": {\"command\": \"x\", \"disabled\": false}, "
             "\"no\": {\"command\": \"x\", \"enabled\": false}}}",
             d == MCP_CONFIG_VSCODE     ? "servers"
             : d == MCP_CONFIG_ZED      ? "context_servers"
             : d == MCP_CONFIG_OPENCODE ? "mcp"
                                        : "mcpServers");
    mcp_config_set *set = parse_as(text, (mcp_config_dialect)d);
    ck_assert_uint_eq(count_level(set, MCP_LOG_WARN), 0);
    ck_assert(!must_find(set, "off")->enabled);
    ck_assert(must_find(set, "on")->enabled);
    ck_assert(!must_find(set, "no")->enabled);
    mcp__config_free(set);
  }
  /* Claude Code's own fields do not cost the entry: headersHelper and
   * oauth.callbackPort are skipped with debug notes. */
  mcp_config_set *set = parse_as(
      "{\"mcpServers\": {\"c\": {\"type\": \"http\", \"url\": \"https://h/mcp\", "
      "\"headersHelper\": \"/bin/get-headers\", "
      "\"oauth\": {\"clientId\": \"id\", \"callbackPort\": 8080}}}}",
      MCP_CONFIG_FOREIGN);
  ck_assert_uint_eq(count_level(set, MCP_LOG_WARN), 0);
  ck_assert_str_eq(must_find(set, "c")->oauth->client_id, "id");
  ck_assert_ptr_nonnull(find_diag(set, MCP_LOG_DEBUG, "c", "headersHelper"));
  ck_assert_ptr_nonnull(find_diag(set, MCP_LOG_DEBUG, "c", "callbackPort"));
  mcp__config_free(set);
  /* ...but in mcpconn's own file an unknown field is still an error. */
  set = parse("{\"mcpServers\": {\"c\": {\"command\": \"x\", \"alwaysAllow\": []}}}");
  ck_assert_ptr_nonnull(find_diag(set, MCP_LOG_WARN, "c", "unknown field"));
  mcp__config_free(set);
}
END_TEST

START_TEST(test_name_folding) {
  /* Names other clients allow are folded; collisions get -2, -3 in file
   * order, and never take a name the file uses as written. */
  mcp_config_set *set = parse_as("{\"mcpServers\": {"
                                 "\"My Server\": {\"command\": \"a\"},"
                                 "\"@scope/name\": {\"command\": \"b\"},"
                                 "\"My/Server\": {\"command\": \"c\"},"
                                 "\"My_Server-2\": {\"command\": \"d\"},"
                                 "\"io.github.x/y\": {\"command\": \"e\"},"
                                 "\"\\u30b5\\u30fc\\u30d0\": {\"command\": \"f\"}}}",
                                 MCP_CONFIG_FOREIGN);
  ck_assert_uint_eq(set->ndefs, 6);
  ck_assert_str_eq(cmd_of(set, "My_Server"), "a");
  ck_assert_str_eq(must_find(set, "My_Server")->display_name, "My Server");
  ck_assert_str_eq(cmd_of(set, "scope_name"), "b");
  ck_assert_str_eq(cmd_of(set, "My_Server-3"), "c");
  ck_assert_str_eq(cmd_of(set, "My_Server-2"), "d");
  ck_assert_ptr_null(must_find(set, "My_Server-2")->display_name);
  ck_assert_str_eq(cmd_of(set, "io.github.x_y"), "e");
  ck_assert_str_eq(cmd_of(set, "server"), "f");
  /* The display name never enters the hash: a rename is the same server. */
  mcp_config_set *plain = parse_as("{\"mcpServers\": {\"My_Server\": {\"command\": \"a\"}}}",
                                   MCP_CONFIG_FOREIGN);
  ck_assert_str_eq(must_find(plain, "My_Server")->hash, must_find(set, "My_Server")->hash);
  mcp_server_def *dup = mcp__server_def_dup(must_find(set, "My_Server"));
  ck_assert_str_eq(dup->display_name, "My Server");
  mcp__server_def_free(dup);
  mcp__config_free(plain);
  mcp__config_free(set);
}
END_TEST

START_TEST(test_discovery_project_root_and_scope) {
  mkdirs("proj/.git");
  mkdirs("proj/sub/dir");
  /* A project file's servers run in the project root, whatever the cwd. */
  put("proj/.mcp.json", "{\"mcpServers\": {\"root\": {\"command\": \"./bin/s\"}, "
                        "\"rel\": {\"command\": \"x\", \"cwd\": \"tools\"}, "
                        "\"abs\": {\"command\": \"x\", \"cwd\": \"/opt\"}}}");
  put("proj/.cursor/mcp.json",
      "{\"mcpServers\": {\"cur\": {\"command\": \"x\", \"args\": [\"${workspaceFolder}/a\"]}}}");
  /* A user-level Cursor file and a project-level VS Code file: the project
   * wins, whichever client wrote it. */
  put("home/.cursor/mcp.json",
      "{\"mcpServers\": {\"both\": {\"command\": \"cursor-user\"}, "
      "\"ws\": {\"command\": \"x\", \"args\": [\"${workspaceFolder}\"]}}}");
  put("proj/.vscode/mcp.json", "{\"servers\": {\"both\": {\"command\": \"vscode-project\"}}}");
  mcp_discovery_opts o;
  base_opts(&o, NULL, 0);
  o.imports = MCP_IMPORT_ALL;
  mcp_config_set *set = discover(&o);
  if (count_level(set, MCP_LOG_WARN)) dump_diags(set);
  ck_assert_uint_eq(count_level(set, MCP_LOG_WARN), 0);
  ck_assert_str_eq(must_find(set, "root")->s.cwd, tpath("proj"));
  ck_assert_str_eq(must_find(set, "rel")->s.cwd, tpath("proj/tools"));
  ck_assert_str_eq(must_find(set, "abs")->s.cwd, "/opt");
  ck_assert_str_eq(must_find(set, "cur")->s.cwd, tpath("proj"));
  char want[1100];
  snprintf(want, sizeof(want), "%s/a", tpath("proj"));
  ck_assert_str_eq(must_find(set, "cur")->s.argv[1], want);
  ck_assert_str_eq(cmd_of(set, "both"), "vscode-project");
  ck_assert_ptr_nonnull(find_diag(set, MCP_LOG_DEBUG, "both", "already defined"));
  /* A user file's ${workspaceFolder} is the project of cwd; its servers
   * keep the host's cwd. */
  ck_assert_str_eq(must_find(set, "ws")->s.argv[1], tpath("proj"));
  ck_assert_ptr_null(must_find(set, "ws")->s.cwd);
  mcp__config_free(set);
}
END_TEST

/* ---- the corpus of real-shaped files (tests/config-corpus) ------------------- */

static const char *const corpus_env[] = {"A",       "1",     "TOKEN", "t0k", "HOME",
                                         "/home/u", "EMPTY", "",      NULL};

static const struct {
  const char *dir;
  mcp_config_dialect d;
} corpus_dirs[] = {
    {"mcpconn", MCP_CONFIG_NATIVE},
    {"claude-code", MCP_CONFIG_FOREIGN},
    {"vscode", MCP_CONFIG_VSCODE},
    {"gemini", MCP_CONFIG_GEMINI},
    {"cursor", MCP_CONFIG_CURSOR},
    {"windsurf", MCP_CONFIG_WINDSURF},
    {"claude-desktop", MCP_CONFIG_CLAUDE_DESKTOP},
    {"cline", MCP_CONFIG_CLINE},
    {"zed", MCP_CONFIG_ZED},
    {"opencode", MCP_CONFIG_OPENCODE},
    {"codex", MCP_CONFIG_CODEX},
};

static void corpus_put(mcp_buf *b, const char *s) {
  ck_assert_int_eq(mcp__buf_append(b, s, strlen(s)), MCP_OK);
}

/* What was read from one file, in the .expect format (README). */
static char *corpus_render(const mcp_config_set *set) {
  mcp_buf b;
  mcp__buf_init(&b);
  char num[64];
  for (size_t i = 0; i < set->ndefs; i++) {
    const mcp_server_def *d = set->defs[i];
    corpus_put(&b, d->name);
    corpus_put(&b, " ");
    corpus_put(&b, d->type == MCP_SERVER_STDIO  ? "stdio"
                   : d->type == MCP_SERVER_HTTP ? "http"
                                                : "sse");
    corpus_put(&b, " ");
    if (d->s.url) corpus_put(&b, d->s.url);
    for (size_t k = 0; k < d->s.argc; k++) {
      if (k) corpus_put(&b, " ");
      corpus_put(&b, d->s.argv[k]);
    }
    if (d->display_name) {
      corpus_put(&b, " display=\"");
      corpus_put(&b, d->display_name);
      corpus_put(&b, "\"");
    }
    if (!d->enabled) corpus_put(&b, " off");
    if (d->s.timeout_ms >= 0) {
      snprintf(num, sizeof(num), " timeout=%lld", (long long)d->s.timeout_ms);
      corpus_put(&b, num);
    }
    if (d->s.cwd) {
      corpus_put(&b, " cwd=");
      corpus_put(&b, d->s.cwd);
    }
    for (size_t k = 0; k < d->s.nenv; k++) {
      corpus_put(&b, " env:");
      corpus_put(&b, d->s.env[k].name);
      corpus_put(&b, "=");
      corpus_put(&b, d->s.env[k].value);
    }
    if (d->tools_only_set) corpus_put(&b, " tools-only=");
    for (size_t k = 0; k < d->ntools_only; k++) {
      if (k) corpus_put(&b, ",");
      corpus_put(&b, d->tools_only[k]);
    }
    for (size_t k = 0; k < d->ntools_off; k++) {
      corpus_put(&b, k ? "," : " tools-off=");
      corpus_put(&b, d->tools_off[k]);
    }
    for (size_t k = 0; k < d->s.nheaders; k++) {
      corpus_put(&b, " header:");
      corpus_put(&b, d->s.headers[k].name);
      corpus_put(&b, "=");
      corpus_put(&b, d->s.headers[k].value);
    }
    corpus_put(&b, "\n");
  }
  for (size_t i = 0; i < set->ndisabled; i++) {
    corpus_put(&b, "disabled ");
    corpus_put(&b, set->disabled[i]);
    corpus_put(&b, "\n");
  }
  for (size_t i = 0; i < set->ndiags; i++) {
    const mcp_config_diag *g = &set->diags[i];
    if (g->level != MCP_LOG_WARN) continue;
    if (!g->server) {
      corpus_put(&b, "file-warning\n");
      continue;
    }
    corpus_put(&b, "warning ");
    corpus_put(&b, g->server);
    corpus_put(&b, " ");
    corpus_put(&b, g->field ? g->field : "-");
    corpus_put(&b, "\n");
  }
  corpus_put(&b, "");
  ck_assert_int_eq(mcp__buf_append(&b, "", 1), MCP_OK);
  return b.data;
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *buf = malloc(1 << 20);
  size_t n = fread(buf, 1, (1 << 20) - 1, f);
  fclose(f);
  buf[n] = '\0';
  return buf;
}

START_TEST(test_corpus) {
  const char *src = getenv("MCP_SRCDIR");
  ck_assert_msg(src && *src, "MCP_SRCDIR not set (run through make check)");
  size_t nfiles = 0;
  for (size_t i = 0; i < sizeof(corpus_dirs) / sizeof(corpus_dirs[0]); i++) {
    char dir[1024];
    snprintf(dir, sizeof(dir), "%s/tests/config-corpus/%s", src, corpus_dirs[i].dir);
    DIR *dh = opendir(dir);
    ck_assert_msg(dh != NULL, "no corpus directory %s", dir);
    size_t here = 0;
    for (struct dirent *de; (de = readdir(dh));) {
      size_t len = strlen(de->d_name);
      if (len < 6 || (strcmp(de->d_name + len - 5, ".json") != 0 &&
                      strcmp(de->d_name + len - 5, ".toml") != 0))
        continue;
      char path[1400], expect_path[1400];
      snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
      snprintf(expect_path, sizeof(expect_path), "%s/%.*s.expect", dir, (int)(len - 5), de->d_name);
      bool project = strncmp(de->d_name, "project-", 8) == 0;
      mcp_config_parse_opts o = {.dialect = corpus_dirs[i].d,
                                 .getenv = table_getenv,
                                 .getenv_user = (void *)corpus_env,
                                 .input = input_lookup,
                                 .base_dir = project ? "/w/proj" : NULL,
                                 .workspace = "/w/proj"};
      mcp_config_set *set = NULL;
      ck_assert_int_eq(mcp__config_parse_file(path, &o, &set), MCP_OK);
      char *got = corpus_render(set);
      mcp__config_free(set);
      if (getenv("MCP_CORPUS_UPDATE")) {
        FILE *f = fopen(expect_path, "w");
        ck_assert_ptr_nonnull(f);
        fputs(got, f);
        fclose(f);
      }
      char *want = slurp(expect_path);
      ck_assert_msg(want != NULL, "missing %s", expect_path);
      ck_assert_msg(strcmp(got, want) == 0, "%s:\n--- got\n%s--- want (%s)\n%s", path, got,
                    expect_path, want);
      free(want);
      mcp__free(got);
      here++;
    }
    closedir(dh);
    ck_assert_msg(here > 0, "no .json file in %s", dir);
    nfiles += here;
  }
  ck_assert_uint_ge(nfiles, 12);
}
END_TEST

/* Records the summaries the trust callback was shown; trusts for the run. */
static char trust_seen[8192];
static mcp_trust trust_record(void *user, const char *path, const char *sha256,
                              const char *servers_json) {
  (void)user, (void)path, (void)sha256;
  strncat(trust_seen, servers_json, sizeof(trust_seen) - strlen(trust_seen) - 1);
  return MCP_TRUST_ONCE;
}

START_TEST(test_discovery_new_clients) {
  mkdirs("proj/.git");
  mkdirs("proj/sub/dir");
  put("home/.config/Claude/claude_desktop_config.json",
      "{\"mcpServers\": {\"desk\": {\"command\": \"desk\"}}}");
  put("home/Library/Application Support/Claude/claude_desktop_config.json",
      "{\"mcpServers\": {\"deskmac\": {\"command\": \"deskmac\"}}}");
  put("home/.config/Code/User/mcp.json",
      "{\"servers\": {\"vsu\": {\"type\": \"http\", \"url\": \"https://vsu/${workspaceFolderBasename}\"}}}");
  put("home/.config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/"
      "cline_mcp_settings.json",
      "{\"mcpServers\": {\"cline\": {\"command\": \"cline\", \"timeout\": 10, "
      "\"autoApprove\": []}}}");
  put("home/.config/zed/settings.json",
      "// zed\n{\"context_servers\": {\"zedu\": {\"command\": {\"path\": \"zedu\", \"args\": []}}}}");
  put("proj/.zed/settings.json", "{\"context_servers\": {\"zedp\": {\"command\": \"zedp\"}}}");
  put("home/.config/opencode/opencode.json",
      "{\"mcp\": {\"ocu\": {\"type\": \"remote\", \"url\": \"https://ocu/mcp\"}}}");
  put("proj/opencode.json", "{\"mcp\": {\"ocp\": {\"type\": \"local\", \"command\": "
                            "[\"bun\", \"x\", \"ocp\"]}}}");
  put("home/.codex/config.toml", "model = 'o3'\n[mcp_servers.codex]\ncommand = 'codex-srv'\n"
                                 "tool_timeout_sec = 5\n[mcp_servers.codex.env]\nK = 'v'\n");
  put("proj/.codex/config.toml", "[mcp_servers.codexp]\ncommand = 'codexp'\n");
  mcp_discovery_opts o;
  base_opts(&o, NULL, 0);
  o.imports = MCP_IMPORT_ALL;
  o.trust = trust_record;
  trust_seen[0] = '\0';
  mcp_config_set *set = discover(&o);
  if (count_level(set, MCP_LOG_WARN)) dump_diags(set);
  ck_assert_uint_eq(count_level(set, MCP_LOG_WARN), 0);
  ck_assert_str_eq(cmd_of(set, "desk"), "desk");
  ck_assert_str_eq(cmd_of(set, "deskmac"), "deskmac");
  ck_assert_str_eq(cmd_of(set, "vsu"), "https://vsu/proj");
  ck_assert_str_eq(cmd_of(set, "cline"), "cline");
  ck_assert_int_eq(must_find(set, "cline")->s.timeout_ms, 10000); /* seconds in Cline's file */
  ck_assert_str_eq(cmd_of(set, "zedu"), "zedu");
  ck_assert_str_eq(cmd_of(set, "zedp"), "zedp");
  ck_assert_str_eq(cmd_of(set, "ocu"), "https://ocu/mcp");
  ck_assert_str_eq(cmd_of(set, "codex"), "codex-srv");
  ck_assert_int_eq(must_find(set, "codex")->s.timeout_ms, 5000);
  ck_assert_str_eq(env_of(must_find(set, "codex"), "K"), "v");
  ck_assert_str_eq(cmd_of(set, "codexp"), "codexp");
  ck_assert_ptr_nonnull(strstr(trust_seen, "\"command\":\"codexp\""));
  ck_assert_str_eq(cmd_of(set, "ocp"), "bun");
  ck_assert_str_eq(must_find(set, "ocp")->s.argv[2], "ocp");
  ck_assert_str_eq(must_find(set, "ocp")->s.cwd, tpath("proj"));
  ck_assert(must_find(set, "ocp")->project);
  ck_assert(!must_find(set, "ocu")->project);
  /* The trust prompt shows what would run, in every client's shape. */
  ck_assert_ptr_nonnull(strstr(trust_seen, "\"command\":\"bun\""));
  ck_assert_ptr_nonnull(strstr(trust_seen, "\"command\":\"zedp\""));
  mcp__config_free(set);

  /* Without trust, the project files of Zed and OpenCode start nothing. */
  o.trust = NULL;
  set = discover(&o);
  ck_assert_ptr_null(cmd_of(set, "zedp"));
  ck_assert_ptr_null(cmd_of(set, "ocp"));
  ck_assert_ptr_null(cmd_of(set, "codexp"));
  ck_assert_str_eq(cmd_of(set, "ocu"), "https://ocu/mcp");
  ck_assert_uint_eq(set->nuntrusted, 3);
  mcp__config_free(set);

  /* One client only. */
  o.imports = MCP_IMPORT_CLINE;
  set = discover(&o);
  ck_assert_uint_eq(set->ndefs, 1);
  ck_assert_str_eq(set->defs[0]->name, "cline");
  mcp__config_free(set);
}
END_TEST

START_TEST(test_toml_reader) {
  static const struct {
    const char *in, *out; /* out: the JSON, or "!" and a part of the error */
  } cases[] = {
      {"", "{}"},
      {"# only a comment\n\n", "{}"},
      {"a = 1\nb = -2\nc = +3_000\n", "{\"a\":1,\"b\":-2,\"c\":3000}"},
      {"a = true\nb = false # x\n", "{\"a\":true,\"b\":false}"},
      {"s = \"x\\ty\\u00e9\\\"\"\nl = 'C:\\path'\n",
       "{\"s\":\"x\\ty\u00e9\\\"\",\"l\":\"C:\\\\path\"}"},
      {"[t.u]\nk = 'v'\n[t.\"a b\"]\nk = 1\n", "{\"t\":{\"u\":{\"k\":\"v\"},\"a b\":{\"k\":1}}}"},
      {"a.b = 1\na.c = [1, [2], {x = 3}]\n", "{\"a\":{\"b\":1,\"c\":[1,[2],{\"x\":3}]}}"},
      {"arr = [\n  'a', # one\n  'b',\n]\r\n", "{\"arr\":[\"a\",\"b\"]}"},
      {"t = { a = 1, b.c = 'x' }\n", "{\"t\":{\"a\":1,\"b\":{\"c\":\"x\"}}}"},
      {"x = 9223372036854775807\ny = -9223372036854775808\n",
       "{\"x\":9223372036854775807,\"y\":-9223372036854775808}"},
      {"x = 9223372036854775808\n", "!line 1: integer out of range"},
      {"f = 1.5\n", "!line 1: floats"},
      {"d = 1979-05-27\n", "!line 1: floats, dates"},
      {"\n\n[[servers]]\n", "!line 3: arrays of tables"},
      {"s = \"\"\"\nx\"\"\"\n", "!line 1: multi-line strings"},
      {"k = 1\nk = 2\n", "!line 2: key \"k\" is defined twice"},
      {"a = 1\n[a]\n", "!line 2: key \"a\" is already a value"},
      {"k = \"open\n", "!line 1: unterminated string"},
      {"k = 1 2\n", "!line 1: unexpected text"},
      {"k = \"\\q\"\n", "!line 1: unknown escape"},
      {"k = \"\\u0000\"\n", "!line 1: escape is not a Unicode scalar value"},
      {"k = 01\n", "!line 1: leading zeros"},
      {"k = nan\n", "!line 1: floats"},
      {"= 1\n", "!line 1: expected a key"},
      {"k = [1,\n2\n", "!line 3: expected"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char why[200];
    json_object *o = mcp__toml_parse(cases[i].in, strlen(cases[i].in), why, sizeof(why));
    if (cases[i].out[0] == '!') {
      ck_assert_msg(o == NULL, "case %zu parsed", i);
      ck_assert_msg(strstr(why, cases[i].out + 1) != NULL, "case %zu: '%s', want '%s'", i, why,
                    cases[i].out + 1);
    } else {
      ck_assert_msg(o != NULL, "case %zu: %s", i, why);
      const char *got = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
                                                              JSON_C_TO_STRING_NOSLASHESCAPE);
      ck_assert_msg(strcmp(got, cases[i].out) == 0, "case %zu: %s, want %s", i, got, cases[i].out);
      json_object_put(o);
    }
  }
  /* A NUL byte is refused; nesting is bounded. */
  ck_assert_ptr_null(mcp__toml_parse("k = 1\0", 6, NULL, 0));
  char deep[400];
  memset(deep, '[', sizeof(deep));
  memcpy(deep, "k = ", 4);
  char why[200];
  ck_assert_ptr_null(mcp__toml_parse(deep, sizeof(deep), why, sizeof(why)));
  ck_assert_ptr_nonnull(strstr(why, "nested deeper"));

  /* A Codex file: disabled servers, a file that is not TOML. */
  mcp_config_set *set = parse_as("[mcp_servers.a]\ncommand = 'x'\nenabled = false\n"
                                 "[mcp_servers.b]\ncommand = 'y'\n",
                                 MCP_CONFIG_CODEX);
  ck_assert(!must_find(set, "a")->enabled);
  ck_assert(must_find(set, "b")->enabled);
  mcp__config_free(set);
  set = parse_as("{\"mcpServers\": {}}", MCP_CONFIG_CODEX);
  ck_assert_uint_eq(set->ndefs, 0);
  ck_assert_ptr_nonnull(find_diag(set, MCP_LOG_WARN, NULL, "TOML not read (line 1:"));
  mcp__config_free(set);
}
END_TEST

START_TEST(test_explicit_file_formats) {
  /* A --config file may be any client's file: its shape says which. */
  mkdirs("proj/.git");
  mkdirs("proj/sub/dir");
  put("cline.json", "{\"mcpServers\": {\"c\": {\"command\": \"x\", \"autoApprove\": [], "
                    "\"timeout\": 2}}}");
  put("vscode.json", "{\"servers\": {\"v\": {\"command\": \"${env:A}\"}}}");
  put("zed.json", "{\"context_servers\": {\"z\": {\"command\": {\"path\": \"zp\"}}}}");
  put("opencode.json", "{\"mcp\": {\"o\": {\"type\": \"local\", \"command\": [\"oc\"]}}}");
  put("codex.toml", "[mcp_servers.t]\ncommand = 'tm'\n");
  put("gemini.json", "{\"mcpServers\": {\"g\": {\"url\": \"https://g/sse\", \"trust\": true}}}");
  put("claude.json", "{\"mcpServers\": {\"My Server\": {\"command\": \"cc\", \"disabled\": "
                     "false}}}");
  put("typo.json", "{\"mcpServers\": {\"t\": {\"comand\": \"x\"}}}");
  const char *files[] = {tpath("cline.json"),    tpath("vscode.json"), tpath("zed.json"),
                         tpath("opencode.json"), tpath("codex.toml"),  tpath("gemini.json"),
                         tpath("claude.json"),   tpath("typo.json")};
  mcp_discovery_opts o;
  base_opts(&o, files, sizeof(files) / sizeof(files[0]));
  o.getenv_user = (void *)corpus_env;
  mcp_config_set *set = discover(&o);
  ck_assert_int_eq(must_find(set, "c")->s.timeout_ms, 2000);
  ck_assert_str_eq(cmd_of(set, "v"), "1");
  ck_assert_str_eq(cmd_of(set, "z"), "zp");
  ck_assert_str_eq(cmd_of(set, "o"), "oc");
  ck_assert_str_eq(cmd_of(set, "t"), "tm");
  ck_assert_int_eq(must_find(set, "g")->type, MCP_SERVER_SSE);
  ck_assert_str_eq(cmd_of(set, "My_Server"), "cc");
  ck_assert_ptr_nonnull(find_diag(set, MCP_LOG_DEBUG, NULL, "read in Cline's format"));
  /* A file in mcpconn's own shape is still read strictly: typos show. */
  ck_assert_ptr_nonnull(find_diag(set, MCP_LOG_WARN, "t", "unknown field \"comand\""));
  ck_assert_uint_eq(count_level(set, MCP_LOG_WARN), 1);
  mcp__config_free(set);
}
END_TEST

/* Host-supplied ${input:id} values: the store the manager keeps. */
START_TEST(test_host_inputs) {
  mcp_config_inputs in = {0};
  ck_assert_int_eq(mcp__config_inputs_set(&in, "", "x"), MCP_EINVAL);
  ck_assert_int_eq(mcp__config_inputs_set(&in, NULL, "x"), MCP_EINVAL);
  ck_assert_int_eq(mcp__config_inputs_set(&in, "api-key", "k1"), MCP_OK);
  ck_assert_int_eq(mcp__config_inputs_set(&in, "other", "o"), MCP_OK);
  ck_assert_int_eq(mcp__config_inputs_set(&in, "api-key", "k2"), MCP_OK); /* replaces */
  ck_assert_str_eq(mcp__config_inputs_get(&in, "api-key"), "k2");
  ck_assert_ptr_null(mcp__config_inputs_get(&in, "nope"));
  ck_assert_int_eq(mcp__config_inputs_set(&in, "other", NULL), MCP_OK); /* removes */
  ck_assert_ptr_null(mcp__config_inputs_get(&in, "other"));
  ck_assert_uint_eq(in.n, 1);

  /* Through discovery: an explicit VS Code file resolves with the value. */
  put("vs.json", "{\"servers\": {\"v\": {\"type\": \"http\", \"url\": \"https://v/mcp\", "
                 "\"headers\": {\"Authorization\": \"Bearer ${input:api-key}\"}}}}");
  const char *files[] = {tpath("vs.json")};
  mcp_discovery_opts o;
  base_opts(&o, files, 1);
  o.input = mcp__config_inputs_get;
  o.input_user = &in;
  mcp_config_set *set = discover(&o);
  const mcp_server_def *d = must_find(set, "v");
  ck_assert_uint_eq(d->s.nheaders, 1);
  ck_assert_str_eq(d->s.headers[0].value, "Bearer k2");
  mcp__config_free(set);
  /* Without it: left out, the warning names the file, server and field. */
  mcp__config_inputs_clear(&in);
  ck_assert_uint_eq(in.n, 0);
  set = discover(&o);
  ck_assert_ptr_null(mcp__config_find(set, "v"));
  const mcp_config_diag *dg = find_diag(set, MCP_LOG_WARN, "v", "${input:api-key}");
  ck_assert_ptr_nonnull(dg);
  ck_assert_str_eq(dg->field, "headers");
  ck_assert_str_eq(dg->source, tpath("vs.json"));
  mcp__config_free(set);
}
END_TEST

/* An explicit file's format given by name wins over its shape. */
START_TEST(test_explicit_format_override) {
  mcp_config_dialect d;
  static const char *const names[] = {"mcpconn", "claude-code", "vscode",         "gemini",
                                      "cursor",  "windsurf",    "claude-desktop", "cline",
                                      "zed",     "opencode",    "codex"};
  for (int i = 0; i < MCP_CONFIG_DIALECTS; i++) {
    ck_assert(mcp__config_dialect_by_name(names[i], &d));
    ck_assert_int_eq(d, i);
  }
  ck_assert(!mcp__config_dialect_by_name("claude", &d));
  ck_assert(!mcp__config_dialect_by_name("VSCode", &d));
  ck_assert(!mcp__config_dialect_by_name(NULL, &d));

  /* Cline's shape (autoApprove), read as mcpconn's own: strict. */
  put("c.json", "{\"mcpServers\": {\"c\": {\"command\": \"x\", \"autoApprove\": [], "
                "\"timeout\": 2}}}");
  /* mcpconn's shape with a field only Claude Code files may carry. */
  put("n.json", "{\"mcpServers\": {\"n\": {\"command\": \"y\", \"headersHelper\": \"h\", "
                "\"timeout\": 2}}}");
  const char *files[] = {tpath("c.json"), tpath("n.json")};
  mcp_discovery_opts o;
  base_opts(&o, files, 2);
  mcp_config_set *set = discover(&o);
  ck_assert_int_eq(must_find(set, "c")->s.timeout_ms, 2000); /* Cline: seconds */
  ck_assert_int_eq(must_find(set, "n")->s.timeout_ms, 2);    /* Claude Code: ms */
  mcp__config_free(set);

  o.format_set = true;
  o.format = MCP_CONFIG_NATIVE;
  set = discover(&o);
  ck_assert_ptr_null(mcp__config_find(set, "c"));
  ck_assert_ptr_nonnull(find_diag(set, MCP_LOG_WARN, "c", "unknown field \"autoApprove\""));
  ck_assert_ptr_null(mcp__config_find(set, "n"));
  mcp__config_free(set);

  o.format = MCP_CONFIG_CLINE;
  set = discover(&o);
  ck_assert_int_eq(must_find(set, "c")->s.timeout_ms, 2000);
  ck_assert_int_eq(must_find(set, "n")->s.timeout_ms, 2000); /* read as Cline's: seconds */
  mcp__config_free(set);
}
END_TEST

/* Tool filters of other clients' files are read into the definition (and
 * applied by the manager: tests/check_cli.c); mcpconn's own files refuse
 * them as unknown fields. */
START_TEST(test_tool_filters) {
  mcp_config_set *set = parse_as(
      "{\"mcpServers\": {\"g\": {\"command\": \"x\", \"includeTools\": [\"a\", \"b\"], "
      "\"excludeTools\": [\"b\"]}, \"n\": {\"command\": \"y\"}}}",
      MCP_CONFIG_GEMINI);
  const mcp_server_def *g = must_find(set, "g");
  ck_assert(g->tools_only_set);
  ck_assert(mcp__config_tool_allowed(g, "a"));
  ck_assert(!mcp__config_tool_allowed(g, "b")); /* excluded wins */
  ck_assert(!mcp__config_tool_allowed(g, "c")); /* not included */
  ck_assert(mcp__config_tool_allowed(must_find(set, "n"), "c"));
  ck_assert(mcp__config_tool_allowed(NULL, "c"));
  mcp_server_def *d = mcp__server_def_dup(g);
  ck_assert_ptr_nonnull(d);
  ck_assert_uint_eq(d->ntools_only, 2);
  ck_assert_str_eq(d->tools_off[0], "b");
  ck_assert(!mcp__config_tool_allowed(d, "c"));
  mcp__server_def_free(d);
  mcp__config_free(set);

  /* An empty includeTools lets nothing through. */
  set = parse_as("{\"mcpServers\": {\"e\": {\"command\": \"x\", \"includeTools\": []}}}",
                 MCP_CONFIG_GEMINI);
  ck_assert(!mcp__config_tool_allowed(must_find(set, "e"), "a"));
  mcp__config_free(set);

  set = parse_as("{\"mcpServers\": {\"w\": {\"serverUrl\": \"https://w/mcp\", "
                 "\"disabledTools\": [\"rm\"]}}}",
                 MCP_CONFIG_WINDSURF);
  ck_assert(!mcp__config_tool_allowed(must_find(set, "w"), "rm"));
  ck_assert(mcp__config_tool_allowed(must_find(set, "w"), "ls"));
  mcp__config_free(set);

  set = parse_as("[mcp_servers.c]\ncommand = 'c'\nenabled_tools = ['s', 'o']\n"
                 "disabled_tools = ['o']\n",
                 MCP_CONFIG_CODEX);
  const mcp_server_def *c = must_find(set, "c");
  ck_assert(mcp__config_tool_allowed(c, "s"));
  ck_assert(!mcp__config_tool_allowed(c, "o"));
  ck_assert(!mcp__config_tool_allowed(c, "x"));
  mcp__config_free(set);

  /* A filter that cannot be read leaves the server out, never unfiltered. */
  set = parse_as("{\"mcpServers\": {\"b\": {\"command\": \"x\", \"excludeTools\": \"rm\"}}}",
                 MCP_CONFIG_GEMINI);
  ck_assert_ptr_null(mcp__config_find(set, "b"));
  ck_assert_ptr_nonnull(find_diag(set, MCP_LOG_WARN, "b", "\"excludeTools\" must be an array"));
  mcp__config_free(set);
  set = parse_as("{\"mcpServers\": {\"m\": {\"command\": \"x\", \"includeTools\": [\"a\"]}}}",
                 MCP_CONFIG_NATIVE);
  ck_assert_ptr_null(mcp__config_find(set, "m"));
  ck_assert_ptr_nonnull(find_diag(set, MCP_LOG_WARN, "m", "unknown field \"includeTools\""));
  mcp__config_free(set);
}
END_TEST

/* Claude Code's disabledMcpjsonServers / enabledMcpjsonServers (its
 * settings files and ~/.claude.json's project entry) switch .mcp.json
 * servers off when Claude's files are imported; $CODEX_HOME moves Codex's
 * user file. */
START_TEST(test_claude_lists_and_codex_home) {
  mkdirs("proj/.git");
  mkdirs("proj/sub/dir");
  put("proj/.mcp.json",
      "{\"mcpServers\": {\"a\": {\"command\": \"a\"}, \"b\": {\"command\": \"b\"},"
      " \"c\": {\"command\": \"c\"}}}");
  put("proj/.claude/settings.json", "{\"disabledMcpjsonServers\": [\"a\"]}");
  mcp_discovery_opts o;
  base_opts(&o, NULL, 0);
  /* Without the Claude import, Claude Code's settings are not read. */
  mcp_config_set *set = discover(&o);
  ck_assert_uint_eq(set->ndefs, 3);
  mcp__config_free(set);

  o.imports = MCP_IMPORT_CLAUDE;
  set = discover(&o);
  ck_assert_ptr_null(mcp__config_find(set, "a"));
  ck_assert_ptr_nonnull(mcp__config_find(set, "b"));
  const mcp_config_diag *dg = find_diag(set, MCP_LOG_DEBUG, "a", "disabledMcpjsonServers");
  ck_assert_ptr_nonnull(dg);
  ck_assert(dg->hidden);
  mcp__config_free(set);

  /* An approval list: only the servers in it (disabled still wins). */
  char text[4096];
  snprintf(text, sizeof(text),
           "{\"projects\": {\"%s\": {\"enabledMcpjsonServers\": [\"a\", \"b\"]}}}", tpath("proj"));
  put("home/.claude.json", text);
  set = discover(&o);
  ck_assert_ptr_null(mcp__config_find(set, "a"));
  ck_assert_ptr_nonnull(mcp__config_find(set, "b"));
  ck_assert_ptr_null(mcp__config_find(set, "c"));
  ck_assert_ptr_nonnull(find_diag(set, MCP_LOG_DEBUG, "c", "enabledMcpjsonServers"));
  mcp__config_free(set);
  /* enableAllProjectMcpServers approves every one not disabled. */
  put("proj/.claude/settings.local.json", "{\"enableAllProjectMcpServers\": true}");
  set = discover(&o);
  ck_assert_ptr_null(mcp__config_find(set, "a"));
  ck_assert_ptr_nonnull(mcp__config_find(set, "c"));
  mcp__config_free(set);
  /* The lists are about .mcp.json only: a server named "a" elsewhere stays. */
  put("home/.claude.json", "{\"mcpServers\": {\"c2\": {\"command\": \"c2\"}}}");
  put("home/.claude/settings.json", "{\"disabledMcpjsonServers\": [\"c2\", \"b\"]}");
  set = discover(&o);
  ck_assert_ptr_nonnull(mcp__config_find(set, "c2"));
  ck_assert_ptr_null(mcp__config_find(set, "b"));
  mcp__config_free(set);

  /* $CODEX_HOME: Codex's user file is $CODEX_HOME/config.toml. */
  put("home/.codex/config.toml", "[mcp_servers.dflt]\ncommand = 'd'\n");
  put("codexhome/config.toml", "[mcp_servers.moved]\ncommand = 'm'\n");
  base_opts(&o, NULL, 0);
  o.imports = MCP_IMPORT_CODEX;
  set = discover(&o);
  ck_assert_ptr_nonnull(mcp__config_find(set, "dflt"));
  ck_assert_ptr_null(mcp__config_find(set, "moved"));
  mcp__config_free(set);
  const char *env[] = {"CODEX_HOME", tpath("codexhome"), NULL};
  o.getenv_user = (void *)env;
  set = discover(&o);
  ck_assert_ptr_null(mcp__config_find(set, "dflt"));
  ck_assert_ptr_nonnull(mcp__config_find(set, "moved"));
  mcp__config_free(set);
}
END_TEST

/* The one settings shape: what an overlay copies, what it leaves, and the
 * rules the setters and the config parser share. */
START_TEST(test_settings_overlay) {
  mcp_server_settings dst = {.timeout_ms = 30000, .max_message = 100};
  const char *argv[] = {"srv", "-v", NULL};
  ck_assert_int_eq(mcp__settings_set_argv(&dst, argv), MCP_OK);
  ck_assert_uint_eq(dst.argc, 2);
  /* A definition that gives no timeout (-1) and no max keeps the defaults. */
  mcp_server_settings def = {.timeout_ms = -1};
  ck_assert_int_eq(mcp__settings_set_env(&def, "K", "v"), MCP_OK);
  ck_assert_int_eq(mcp__settings_set_env(&def, "K", "w"), MCP_OK); /* replaces */
  ck_assert_int_eq(mcp__settings_set_env(&def, "GONE", NULL), MCP_OK);
  ck_assert_int_eq(mcp__settings_set_env(&def, "A=B", "x"), MCP_EINVAL);
  ck_assert_int_eq(mcp__settings_set_env(&def, "", "x"), MCP_EINVAL);
  ck_assert_uint_eq(def.nenv, 2);
  ck_assert_int_eq(mcp__settings_overlay(&dst, &def), MCP_OK);
  ck_assert_int_eq(dst.timeout_ms, 30000);
  ck_assert_uint_eq(dst.max_message, 100);
  ck_assert_str_eq(dst.argv[1], "-v");
  ck_assert_str_eq(dst.env[0].value, "w");
  ck_assert_ptr_null(dst.env[1].value);
  bool none = true;
  char **envp = mcp__settings_envp(&dst, &none);
  ck_assert(!none);
  ck_assert_str_eq(envp[0], "K=w");
  ck_assert_str_eq(envp[1], "GONE");
  ck_assert_ptr_null(envp[2]);
  mcp__settings_envp_free(envp);
  /* A URL replaces the program; a given timeout of 0 (none) is copied. */
  mcp_server_settings http = {.timeout_ms = 0, .http_kind = MCP_HTTP_TRANSPORT_LEGACY_SSE};
  ck_assert_int_eq(mcp__settings_set_url(&http, "http://127.0.0.1:1/sse"), MCP_OK);
  ck_assert_int_eq(mcp__settings_add_header(&http, "X-Key", "k"), MCP_OK);
  http.tls.client_cert = "c.pem";
  http.tls.client_key = "k.pem";
  ck_assert_int_eq(mcp__settings_overlay(&dst, &http), MCP_OK);
  http.tls.client_cert = http.tls.client_key = NULL; /* literals: not to free */
  ck_assert_ptr_null(dst.argv);
  ck_assert_uint_eq(dst.argc, 0);
  ck_assert_str_eq(dst.url, "http://127.0.0.1:1/sse");
  ck_assert_int_eq(dst.http_kind, MCP_HTTP_TRANSPORT_LEGACY_SSE);
  ck_assert_int_eq(dst.timeout_ms, 0);
  ck_assert_str_eq(dst.headers[0].name, "X-Key");
  ck_assert_str_eq(dst.tls.client_key, "k.pem");
  /* The transport's own headers, in any case, and bad text are refused. */
  const char *owned[] = {"Content-Type", "accept",   "HOST",       "mcp-session-id",
                         "Mcp-Method",   "mcp-name", "Connection", "MCP-Protocol-Version"};
  for (size_t i = 0; i < sizeof(owned) / sizeof(owned[0]); i++)
    ck_assert_int_eq(mcp__settings_add_header(&http, owned[i], "x"), MCP_EINVAL);
  ck_assert_int_eq(mcp__settings_add_header(&http, "X-A", "a\r\nB: b"), MCP_EINVAL);
  ck_assert_int_eq(mcp__settings_add_header(&http, "X A", "a"), MCP_EINVAL);
  ck_assert_uint_eq(http.nheaders, 1);
  mcp__settings_clear(&http);
  mcp__settings_clear(&def);
  mcp__settings_clear(&dst);
  ck_assert_ptr_null(dst.url);
}
END_TEST

static Suite *config_suite(void) {
  Suite *s = suite_create("config");
  TCase *tc = tcase_create("parse");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_unknown_field_message);
  tcase_add_loop_test(tc, test_validation_errors, 0,
                      (int)(sizeof(bad_cases) / sizeof(bad_cases[0])));
  tcase_add_test(tc, test_names);
  tcase_add_test(tc, test_settings_overlay);
  tcase_add_test(tc, test_full_definitions);
  tcase_add_test(tc, test_malformed_files);
  tcase_add_test(tc, test_malformed_file_does_not_stop_others);
  tcase_add_test(tc, test_foreign_dialects);
  tcase_add_test(tc, test_expansion_table);
  tcase_add_test(tc, test_expansion_limits);
  tcase_add_test(tc, test_hash_stability);
  tcase_add_test(tc, test_canonical_form);
  tcase_add_test(tc, test_client_options_round_trip);
  tcase_add_test(tc, test_protocol_field);
  tcase_add_test(tc, test_client_options_http);
  tcase_add_test(tc, test_def_dup);
  tcase_add_test(tc, test_alloc_failures);
  tcase_add_test(tc, test_parse_mutations);
  suite_add_tcase(s, tc);

  TCase *ts = tcase_create("secrets");
  tcase_add_checked_fixture(ts, setup, teardown);
  tcase_set_timeout(ts, 60);
  tcase_add_test(ts, test_secret_success_and_failures);
  tcase_add_test(ts, test_secret_timeout);
  tcase_add_test(ts, test_secret_cache);
  tcase_add_test(ts, test_secret_concurrent_dedup);
  tcase_add_test(ts, test_secret_headers_and_foreign);
  tcase_add_test(ts, test_secret_fd_hygiene);
  suite_add_tcase(s, ts);

  TCase *td = tcase_create("discovery");
  tcase_add_checked_fixture(td, setup, teardown);
  tcase_set_timeout(td, 60);
  tcase_add_test(td, test_discovery_precedence);
  tcase_add_test(td, test_discovery_no_project);
  tcase_add_test(td, test_discovery_no_user);
  tcase_add_test(td, test_discovery_upward_search);
  tcase_add_test(td, test_discovery_disabled_and_hidden);
  tcase_add_test(td, test_discovery_invalid_entry_claims_name);
  tcase_add_test(td, test_discovery_defaults);
  tcase_add_test(td, test_discovery_project_root_and_scope);
  tcase_add_test(td, test_discovery_new_clients);
  suite_add_tcase(s, td);

  TCase *tk = tcase_create("clients");
  tcase_add_checked_fixture(tk, setup, teardown);
  tcase_set_timeout(tk, 60);
  tcase_add_test(tk, test_variables_per_client);
  tcase_add_test(tk, test_disabled_and_unknown_fields);
  tcase_add_test(tk, test_name_folding);
  tcase_add_test(tk, test_corpus);
  tcase_add_test(tk, test_toml_reader);
  tcase_add_test(tk, test_explicit_file_formats);
  tcase_add_test(tk, test_host_inputs);
  tcase_add_test(tk, test_explicit_format_override);
  tcase_add_test(tk, test_tool_filters);
  tcase_add_test(tk, test_claude_lists_and_codex_home);
  suite_add_tcase(s, tk);
  return s;
}

int main(void) { return run_suite(config_suite()); }
