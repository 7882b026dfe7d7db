/* SPDX-License-Identifier: MIT */
/*
 * mcpconn-conformance-client: the client program that the official MCP
 * conformance suite (@modelcontextprotocol/conformance, pinned in
 * tests/conformance/package.json) drives.  tests/conformance/run.sh runs
 *
 *   conformance client --command "<this program>" --requirements <revision>
 *   conformance client --command "<this program>" --scenario <name>
 *
 * and the suite then starts a test server per scenario and runs this
 * program with the server's URL as its last argument, the scenario's name in
 * MCP_CONFORMANCE_SCENARIO and, for some scenarios, a JSON context in
 * MCP_CONFORMANCE_CONTEXT.  The program does what the scenario asks through
 * the public API (mcpconn.h) only, in the library's default protocol mode
 * (auto: it probes server/discover and falls back to initialize; the
 * suite's MCP_CONFORMANCE_PROTOCOL_VERSION is not read).  Every protocol
 * behaviour the suite checks (handshake or per-request _meta, version,
 * session, Mcp-Method/Mcp-Name and Mcp-Param-* headers, -32022 retry, SSE
 * resumption, elicitation defaults, input_required rounds, x-mcp-header
 * tool filtering) comes from the library itself, never from code here.
 *
 * The OAuth scenarios (auth/...) run the library's OAuth engine: this program only
 * turns the scenario context (client id and secret, private key, IdP
 * token) into mcp_oauth_options and plays the browser (see browser()).
 *
 * Exit status: 0 when the scenario's steps succeeded from the client's side,
 * 1 when a step failed, 2 for a usage problem or a scenario this client
 * does not implement.  The suite's own checks decide pass or fail; our exit
 * status is one of them.
 *
 * Diagnostics go to stderr (the suite saves it as stderr.txt); set
 * MCPCONN_CONFORMANCE_DEBUG=1 to also see the library's debug log.
 */
#include "config.h"

#include <json-c/json.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "mcpconn.h"

#define PROG "mcpconn-conformance-client"
/*
 * Timeout of each request (and of connect), in ms: MCPCONN_CONFORMANCE_TIMEOUT_MS,
 * else 10 s, well inside the suite's default --timeout of 30 s.  run.sh
 * raises both for the --requirements runs: those start every scenario of
 * the set at once in one Node process, and on 2 cores its mock servers
 * have been measured to take 12-14 s to answer a client's first request.
 */
#define REQUEST_TIMEOUT_MS_DEFAULT 10000
static int64_t request_timeout_ms = REQUEST_TIMEOUT_MS_DEFAULT;

enum { EXIT_PASS = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

static bool debug_log;
static struct timespec t_start;

/* Prints "[+12.345s] message" to stderr. */
static void say(const char *fmt, ...) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  double dt = (double)(now.tv_sec - t_start.tv_sec) + (double)(now.tv_nsec - t_start.tv_nsec) / 1e9;
  fprintf(stderr, "[%s +%.3fs] ", PROG, dt);
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

static void on_log(void *user, mcp_log_level level, const char *msg) {
  (void)user;
  static const char *const names[] = {"debug", "info", "warn", "error"};
  if (level >= MCP_LOG_INFO || debug_log)
    say("mcpconn %s: %s", names[level >= 0 && level <= 3 ? level : 3], msg);
}

static void on_notification(void *user, const char *method, const char *params_json) {
  (void)user;
  say("notification %s %s", method, params_json);
}

/* ---- small JSON helpers (results are only inspected, never built) ------- */

/* The text of the first text item of a CallToolResult, or NULL. */
static const char *first_text(json_object *result) {
  json_object *content = NULL, *type = NULL, *text = NULL;
  if (!json_object_object_get_ex(result, "content", &content) ||
      !json_object_is_type(content, json_type_array))
    return NULL;
  for (size_t i = 0; i < json_object_array_length(content); i++) {
    json_object *item = json_object_array_get_idx(content, i);
    if (json_object_object_get_ex(item, "type", &type) &&
        strcmp(json_object_get_string(type), "text") == 0 &&
        json_object_object_get_ex(item, "text", &text))
      return json_object_get_string(text);
  }
  return NULL;
}

/* True when the JSON array |tools_json| has a tool named |name|. */
static bool has_tool(const char *tools_json, const char *name) {
  json_object *arr = json_tokener_parse(tools_json);
  bool found = false;
  if (arr && json_object_is_type(arr, json_type_array)) {
    for (size_t i = 0; i < json_object_array_length(arr) && !found; i++) {
      json_object *n = NULL;
      if (json_object_object_get_ex(json_object_array_get_idx(arr, i), "name", &n) &&
          strcmp(json_object_get_string(n), name) == 0)
        found = true;
    }
  }
  json_object_put(arr);
  return found;
}

/* ---- steps --------------------------------------------------------------- */

static int fail_status(const char *what, mcp_status st, mcp_error *err) {
  say("FAIL: %s: %s%s%s (http %d, rpc %d)", what, mcp_strerror(st), err && err->message ? ": " : "",
      err && err->message ? err->message : "", err ? err->http_status : 0, err ? err->rpc_code : 0);
  mcp_error_clear(err);
  return EXIT_FAIL;
}

/*
 * The elicitation/create handler: a user who accepts the form without
 * filling in anything.  SEP-1034 makes the client fill in the schema's
 * defaults for omitted fields; mcpconn does that for every accepted
 * elicitation, so the handler returns an empty content object.
 */
static mcp_status on_elicitation(void *user, const char *method, const char *params_json,
                                 char **result_json, mcp_error *err) {
  (void)user;
  (void)err;
  say("server request %s %s: accepting with no fields filled in", method, params_json);
  *result_json = strdup("{\"action\":\"accept\",\"content\":{}}");
  return *result_json ? MCP_OK : MCP_ENOMEM;
}

/* ---- OAuth: the "browser" of the auth scenarios ---------------------------- */

/*
 * The suite's authorization endpoints answer at once with a redirect to our
 * redirect URI (no login page), as the official SDKs' conformance clients
 * expect: fetch the authorization URL without following redirects and hand
 * the library the Location.  Plain HTTP/1.1 over a socket: the suite's
 * servers are http://localhost.
 */
static mcp_status browser(void *user, const char *authorization_url, const char *redirect_uri,
                          char **redirect_url, mcp_error *err) {
  (void)user;
  (void)err;
  say("authorize: GET %s (redirect URI %s)", authorization_url, redirect_uri);
  char host[256], port[16] = "80";
  const char *p = authorization_url;
  if (strncmp(p, "http://", 7) != 0) return MCP_EINVAL;
  p += 7;
  size_t hl = strcspn(p, ":/");
  if (hl == 0 || hl >= sizeof(host)) return MCP_EINVAL;
  memcpy(host, p, hl);
  host[hl] = '\0';
  p += hl;
  if (*p == ':') {
    size_t pl = strcspn(++p, "/");
    if (pl == 0 || pl >= sizeof(port)) return MCP_EINVAL;
    memcpy(port, p, pl);
    port[pl] = '\0';
    p += pl;
  }
  const char *path = *p ? p : "/";
  struct addrinfo hints = {0}, *ai = NULL;
  hints.ai_socktype = SOCK_STREAM;
  if (getaddrinfo(host, port, &hints, &ai) != 0) return MCP_EIO;
  int fd = -1;
  for (struct addrinfo *a = ai; a && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(ai);
  if (fd < 0) return MCP_EIO;
  char *req = NULL;
  size_t reqlen = 0;
  FILE *m = open_memstream(&req, &reqlen);
  if (!m) {
    close(fd);
    return MCP_ENOMEM;
  }
  fprintf(m, "GET %s HTTP/1.1\r\nHost: %s:%s\r\nConnection: close\r\n\r\n", path, host, port);
  fclose(m);
  bool ok = write(fd, req, reqlen) == (ssize_t)reqlen;
  free(req);
  char buf[16384];
  size_t n = 0;
  ssize_t r;
  while (ok && n < sizeof(buf) - 1 && (r = read(fd, buf + n, sizeof(buf) - 1 - n)) > 0)
    n += (size_t)r;
  close(fd);
  buf[n] = '\0';
  char *end = strstr(buf, "\r\n\r\n");
  if (end) *end = '\0';
  for (char *line = strstr(buf, "\r\n"); line; line = strstr(line, "\r\n")) {
    line += 2;
    if (strncasecmp(line, "location:", 9) == 0) {
      char *v = line + 9;
      while (*v == ' ') v++;
      size_t vl = strcspn(v, "\r\n");
      *redirect_url = strndup(v, vl);
      say("authorize: redirected to %.*s", (int)vl, v);
      return *redirect_url ? MCP_OK : MCP_ENOMEM;
    }
  }
  say("authorize: no redirect in the answer: %.80s", buf);
  return MCP_EPROTO;
}

/* A string member of the scenario's context, or NULL. */
static const char *ctx_str(json_object *ctx, const char *key) {
  json_object *v = NULL;
  if (!ctx || !json_object_object_get_ex(ctx, key, &v) || !json_object_is_type(v, json_type_string))
    return NULL;
  return json_object_get_string(v);
}

/* The OAuth options for auth scenario |scenario| from its context. */
static mcp_oauth_options *oauth_for(const char *scenario) {
  const char *raw = getenv("MCP_CONFORMANCE_CONTEXT");
  json_object *ctx = raw && *raw ? json_tokener_parse(raw) : NULL;
  mcp_oauth_options *oa = mcp_oauth_options_new();
  if (!oa) {
    json_object_put(ctx);
    return NULL;
  }
  mcp_status st = mcp_oauth_options_set_client_name(oa, PROG);
  if (st == MCP_OK)
    st = mcp_oauth_options_set_client_metadata_url(
        oa, "https://conformance-test.local/client-metadata.json");
  if (st == MCP_OK) st = mcp_oauth_options_set_redirect_uri(oa, "http://localhost:3000/callback");
  mcp_oauth_options_set_authorize(oa, browser, NULL);
  const char *id = ctx_str(ctx, "client_id"), *secret = ctx_str(ctx, "client_secret");
  if (st == MCP_OK && id) st = mcp_oauth_options_set_client(oa, id, secret);
  /* SEP-2352: a pre-registered client id is bound to its issuer. */
  if (st == MCP_OK && id && ctx_str(ctx, "issuer"))
    st = mcp_oauth_options_set_client_issuer(oa, ctx_str(ctx, "issuer"));
  if (st == MCP_OK && strcmp(scenario, "auth/client-credentials-jwt") == 0) {
    st = mcp_oauth_options_set_grant(oa, MCP_OAUTH_GRANT_CLIENT_CREDENTIALS);
    if (st == MCP_OK)
      st = mcp_oauth_options_set_private_key(oa, ctx_str(ctx, "private_key_pem"),
                                             ctx_str(ctx, "signing_algorithm"));
  } else if (st == MCP_OK && strcmp(scenario, "auth/client-credentials-basic") == 0) {
    st = mcp_oauth_options_set_grant(oa, MCP_OAUTH_GRANT_CLIENT_CREDENTIALS);
  } else if (st == MCP_OK && strcmp(scenario, "auth/enterprise-managed-authorization") == 0) {
    st = mcp_oauth_options_set_grant(oa, MCP_OAUTH_GRANT_ID_JAG);
    if (st == MCP_OK)
      st = mcp_oauth_options_set_id_jag(oa, ctx_str(ctx, "idp_token_endpoint"),
                                        ctx_str(ctx, "idp_client_id"),
                                        ctx_str(ctx, "idp_id_token"));
  } else if (st == MCP_OK && strcmp(scenario, "auth/wif-jwt-bearer") == 0) {
    /* SEP-1933: the workload JWT the platform would hand us (the context's
     * wrong-audience and expired ones are refused locally: check_oauth). */
    st = mcp_oauth_options_set_workload_jwt(oa, ctx_str(ctx, "valid_jwt"), NULL);
  }
  /* auth/dpop and auth/dpop-nonce need nothing: DPoP is on (auto) when the
   * authorization server lists ES256 in dpop_signing_alg_values_supported. */
  json_object_put(ctx);
  if (st != MCP_OK) {
    say("FAIL: OAuth options from the scenario context: %s", mcp_strerror(st));
    mcp_oauth_options_free(oa);
    return NULL;
  }
  return oa;
}

/* Set for the auth scenarios before connect_to(). */
static mcp_oauth_options *scenario_oauth;
/* Set for the skills scenarios: declare io.modelcontextprotocol/skills. */
static bool scenario_skills;

/* Connects to |url| over Streamable HTTP.  Returns NULL after saying why. */
static mcp_client *connect_to(const char *url, const char *elicitation_handler_for, bool listener) {
  mcp_client_options *o = mcp_client_options_new();
  if (!o) {
    say("FAIL: out of memory");
    return NULL;
  }
  mcp_client *c = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_client_options_set_http(o, url, MCP_HTTP_TRANSPORT_STREAMABLE);
  /* sse-retry tests the resumption of a response stream only, and its server
   * takes any GET that arrives after its priming event for the reconnection
   * it waits for: the standalone listener's GET (on another HTTP/1.1
   * connection, so its arrival order is not ours to fix) could win that
   * race and make the resume look like it lacked Last-Event-ID.  The other
   * scenarios keep the listener: elicitation arrives on it. */
  if (!listener) mcp_client_options_set_http_listener(o, false);
  if (st == MCP_OK)
    st = mcp_client_options_set_client_info(o, "mcpconn-conformance-client", mcp_version());
  mcp_client_options_set_timeout_ms(o, request_timeout_ms);
  mcp_client_options_set_log(o, on_log, NULL);
  mcp_client_options_set_notification_handler(o, on_notification, NULL);
  if (st == MCP_OK && scenario_oauth) st = mcp_client_options_set_oauth(o, scenario_oauth);
  if (st == MCP_OK && scenario_skills)
    st = mcp_client_options_set_extension(o, MCP_SKILLS_EXTENSION, NULL);
  if (st == MCP_OK && elicitation_handler_for) {
    st = mcp_client_options_set_request_handler(o, elicitation_handler_for, on_elicitation, NULL);
  }
  if (st != MCP_OK) {
    say("FAIL: options: %s", mcp_strerror(st));
    mcp_client_options_free(o);
    return NULL;
  }
  say("connecting to %s", url);
  st = mcp_client_connect(o, &c, &err);
  mcp_client_options_free(o);
  if (st != MCP_OK) {
    fail_status("connect", st, &err);
    return NULL;
  }
  say("connected: protocol %s, server %s", mcp_client_protocol_version(c),
      mcp_client_server_info(c));
  return c;
}

/* tools/list; on success *tools_json is the array (mcp_free it). */
static int list_tools(mcp_client *c, char **tools_json) {
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_client_list_tools(c, NULL, tools_json, &err);
  if (st != MCP_OK) return fail_status("tools/list", st, &err);
  say("tools: %s", *tools_json);
  return EXIT_PASS;
}

/* Calls |tool| with |args| and checks that the first text item of the
 * result contains |want|. */
static int call_expect(mcp_client *c, const char *tool, const char *args, const char *want) {
  char *res = NULL;
  mcp_error err = MCP_ERROR_INIT;
  say("calling %s %s", tool, args);
  mcp_status st = mcp_client_call_tool(c, tool, args, NULL, &res, &err);
  if (st != MCP_OK) {
    if (res) say("result: %s", res);
    mcp_free(res);
    return fail_status(tool, st, &err);
  }
  say("result: %s", res);
  json_object *j = json_tokener_parse(res);
  const char *text = j ? first_text(j) : NULL;
  int rc = EXIT_PASS;
  if (!text || !strstr(text, want)) {
    say("FAIL: %s: expected text containing \"%s\"", tool, want);
    rc = EXIT_FAIL;
  }
  json_object_put(j);
  mcp_free(res);
  return rc;
}

/* ---- scenarios ------------------------------------------------------------ */

/* initialize: the handshake, tools/list, close. */
static int scenario_initialize(const char *url) {
  mcp_client *c = connect_to(url, NULL, true);
  if (!c) return EXIT_FAIL;
  char *tools = NULL;
  int rc = list_tools(c, &tools);
  mcp_free(tools);
  mcp_client_free(c);
  return rc;
}

/* tools_call: the server offers add_numbers {a, b}; call it. */
static int scenario_tools_call(const char *url) {
  mcp_client *c = connect_to(url, NULL, true);
  if (!c) return EXIT_FAIL;
  char *tools = NULL;
  int rc = list_tools(c, &tools);
  if (rc == EXIT_PASS && !has_tool(tools, "add_numbers")) {
    say("FAIL: the server lists no add_numbers tool");
    rc = EXIT_FAIL;
  }
  if (rc == EXIT_PASS)
    rc = call_expect(c, "add_numbers", "{\"a\":5,\"b\":3}", "The sum of 5 and 3 is 8");
  mcp_free(tools);
  mcp_client_free(c);
  return rc;
}

static int scenario_elicitation_defaults(const char *url) {
  mcp_client *c = connect_to(url, "elicitation/create", true);
  if (!c) return EXIT_FAIL;
  char *tools = NULL;
  int rc = list_tools(c, &tools);
  if (rc == EXIT_PASS)
    rc = call_expect(c, "test_client_elicitation_defaults", "{}", "Elicitation completed");
  mcp_free(tools);
  mcp_client_free(c);
  return rc;
}

/* sse-retry: the tool's response stream closes after a priming event with
 * retry: 500; the library resumes it with GET + Last-Event-ID. */
static int scenario_sse_retry(const char *url) {
  mcp_client *c = connect_to(url, NULL, false);
  if (!c) return EXIT_FAIL;
  char *tools = NULL;
  int rc = list_tools(c, &tools);
  if (rc == EXIT_PASS)
    rc = call_expect(c, "test_reconnection", "{}", "Reconnection test completed successfully");
  mcp_free(tools);
  mcp_client_free(c);
  return rc;
}

/*
 * The auth scenarios: every request needs a token (or, for the scope
 * scenarios, a wider one for tools/call).  Connect, list the tools and
 * call test-tool: the library does discovery, registration, the grant and
 * step-up on its own.
 */
static int scenario_auth(const char *url) {
  mcp_client *c = connect_to(url, NULL, true);
  if (!c) return EXIT_FAIL;
  char *tools = NULL;
  int rc = list_tools(c, &tools);
  if (rc == EXIT_PASS && has_tool(tools, "test-tool"))
    rc = call_expect(c, "test-tool", "{}", "test");
  mcp_free(tools);
  mcp_client_free(c);
  return rc;
}

/* ---- the skills extension (SEP-2640) ---------------------------------------- */

/* skills/list through the library; *out the list (mcp_skill_list_free). */
static int list_skills(mcp_client *c, mcp_skill_list **out) {
  mcp_error err = MCP_ERROR_INIT;
  mcp_status st = mcp_client_list_skills(c, NULL, out, &err);
  if (st != MCP_OK) return fail_status("skills/list", st, &err);
  for (size_t i = 0; i < mcp_skill_list_count(*out); i++)
    say("skill %s: %s", mcp_skill_list_uri(*out, i), mcp_skill_list_description(*out, i));
  return EXIT_PASS;
}

/* sep-2640-client-no-prefetch: list the skills and load none; the library
 * reads no skill file on connect or on listing. */
static int scenario_skills_no_prefetch(const char *url) {
  scenario_skills = true;
  mcp_client *c = connect_to(url, NULL, true);
  if (!c) return EXIT_FAIL;
  mcp_skill_list *l = NULL;
  int rc = list_skills(c, &l);
  mcp_skill_list_free(l);
  mcp_client_free(c);
  return rc;
}

/* sep-2640-client-verify-{digest,size,frontmatter}: load pdf-processing,
 * whose SKILL.md the server tampered with.  The library must refuse it
 * (MCP_EPROTO naming what did not match) and read nothing further; a load
 * that succeeds is our failure. */
static int scenario_skills_verify(const char *url) {
  scenario_skills = true;
  mcp_client *c = connect_to(url, NULL, true);
  if (!c) return EXIT_FAIL;
  mcp_skill_list *l = NULL;
  int rc = list_skills(c, &l);
  size_t i = 0;
  mcp_error err = MCP_ERROR_INIT;
  if (rc == EXIT_PASS && mcp_skill_list_find(l, NULL, "pdf-processing", &i, &err) != MCP_OK)
    rc = fail_status("find pdf-processing", err.status, &err);
  if (rc == EXIT_PASS) {
    char *text = NULL;
    mcp_status st = mcp_client_load_skill(c, l, i, NULL, &text, NULL, &err);
    if (st == MCP_EPROTO) {
      say("load refused as it must be: %s", err.message);
    } else if (st == MCP_OK) {
      say("FAIL: the tampered skill was loaded: %s", text);
      rc = EXIT_FAIL;
    } else {
      rc = fail_status("load pdf-processing", st, &err);
    }
    mcp_free(text);
    mcp_error_clear(&err);
  }
  mcp_skill_list_free(l);
  mcp_client_free(c);
  return rc;
}

/* ---- 2026-07-28 scenarios ------------------------------------------------ */

/* Parses |json| as an array; NULL (after saying why) when it is not one. */
static json_object *parse_array(const char *what, const char *json) {
  json_object *arr = json ? json_tokener_parse(json) : NULL;
  if (!arr || !json_object_is_type(arr, json_type_array)) {
    say("FAIL: %s: not a JSON array", what);
    json_object_put(arr);
    return NULL;
  }
  return arr;
}

/* The string member |key| of the |i|th item of |arr|, or NULL. */
static const char *item_str(json_object *arr, size_t i, const char *key) {
  json_object *v = NULL;
  if (!json_object_object_get_ex(json_object_array_get_idx(arr, i), key, &v) ||
      !json_object_is_type(v, json_type_string))
    return NULL;
  return json_object_get_string(v);
}

/* True when a list call failed only because the server has no such list. */
static bool not_offered(mcp_status st, const mcp_error *err) {
  return st == MCP_ERPC && err->rpc_code == -32601;
}

/* Calls every tool in the JSON array |tools_json| with no arguments; a
 * tool error (isError) still counts as a call made. */
static int call_every_tool(mcp_client *c, const char *tools_json) {
  json_object *arr = parse_array("tools/list", tools_json);
  if (!arr) return EXIT_FAIL;
  int rc = EXIT_PASS;
  for (size_t i = 0; i < json_object_array_length(arr) && rc == EXIT_PASS; i++) {
    const char *name = item_str(arr, i, "name");
    if (!name) continue;
    char *res = NULL;
    mcp_error err = MCP_ERROR_INIT;
    say("calling %s {}", name);
    mcp_status st = mcp_client_call_tool(c, name, "{}", NULL, &res, &err);
    if (st == MCP_OK || st == MCP_ETOOLERROR) say("result of %s: %s", name, res ? res : "(none)");
    else rc = fail_status(name, st, &err);
    mcp_error_clear(&err);
    mcp_free(res);
  }
  json_object_put(arr);
  return rc;
}

/*
 * Exercises every request that carries an Mcp-Name header, and the lists
 * before them: tools/list and tools/call of each tool, resources/list and
 * resources/read of each resource, prompts/list and prompts/get of each
 * prompt.  A list the server does not offer (-32601) is skipped.
 */
static int exercise_everything(mcp_client *c) {
  char *tools = NULL, *resources = NULL, *prompts = NULL;
  mcp_error err = MCP_ERROR_INIT;
  int rc = list_tools(c, &tools);
  if (rc == EXIT_PASS) rc = call_every_tool(c, tools);
  mcp_free(tools);
  if (rc != EXIT_PASS) return rc;

  mcp_status st = mcp_client_list_resources(c, NULL, &resources, &err);
  if (st == MCP_OK) {
    say("resources: %s", resources);
    json_object *arr = parse_array("resources/list", resources);
    if (!arr) rc = EXIT_FAIL;
    for (size_t i = 0; arr && i < json_object_array_length(arr) && rc == EXIT_PASS; i++) {
      const char *uri = item_str(arr, i, "uri");
      if (!uri) continue;
      char *res = NULL;
      say("reading %s", uri);
      st = mcp_client_read_resource(c, uri, NULL, &res, &err);
      if (st == MCP_OK) say("read %s: %s", uri, res);
      else rc = fail_status(uri, st, &err);
      mcp_free(res);
    }
    json_object_put(arr);
  } else if (not_offered(st, &err)) {
    say("no resources: %s", err.message ? err.message : "");
  } else {
    rc = fail_status("resources/list", st, &err);
  }
  mcp_error_clear(&err);
  mcp_free(resources);
  if (rc != EXIT_PASS) return rc;

  st = mcp_client_list_prompts(c, NULL, &prompts, &err);
  if (st == MCP_OK) {
    say("prompts: %s", prompts);
    json_object *arr = parse_array("prompts/list", prompts);
    if (!arr) rc = EXIT_FAIL;
    for (size_t i = 0; arr && i < json_object_array_length(arr) && rc == EXIT_PASS; i++) {
      const char *name = item_str(arr, i, "name");
      if (!name) continue;
      char *res = NULL;
      say("getting prompt %s", name);
      st = mcp_client_get_prompt(c, name, NULL, NULL, &res, &err);
      if (st == MCP_OK) say("prompt %s: %s", name, res);
      else rc = fail_status(name, st, &err);
      mcp_free(res);
    }
    json_object_put(arr);
  } else if (not_offered(st, &err)) {
    say("no prompts: %s", err.message ? err.message : "");
  } else {
    rc = fail_status("prompts/list", st, &err);
  }
  mcp_error_clear(&err);
  mcp_free(prompts);
  return rc;
}

/* request-metadata: the server rejects the first request with -32022 and
 * the supported versions; the library retries at one of them.  Then
 * tools/list, so that a request after the retry is checked too. */
static int scenario_request_metadata(const char *url) {
  mcp_client *c = connect_to(url, NULL, true);
  if (!c) return EXIT_FAIL;
  char *tools = NULL;
  int rc = list_tools(c, &tools);
  mcp_free(tools);
  mcp_client_free(c);
  return rc;
}

/* http-standard-headers: Mcp-Method on every POST, Mcp-Name on tools/call,
 * resources/read and prompts/get (names with '-', URIs with %20 and ?). */
static int scenario_standard_headers(const char *url) {
  mcp_client *c = connect_to(url, NULL, true);
  if (!c) return EXIT_FAIL;
  int rc = exercise_everything(c);
  mcp_client_free(c);
  return rc;
}

/* http-invalid-tool-headers: tools/list offers one valid tool and ten with
 * invalid x-mcp-header annotations; the library drops those, and every
 * tool left is called. */
static int scenario_invalid_tool_headers(const char *url) {
  mcp_client *c = connect_to(url, NULL, true);
  if (!c) return EXIT_FAIL;
  char *tools = NULL;
  int rc = list_tools(c, &tools);
  if (rc == EXIT_PASS) rc = call_every_tool(c, tools);
  mcp_free(tools);
  mcp_client_free(c);
  return rc;
}

/* http-custom-headers: tools/list (which teaches the library the tools'
 * x-mcp-header annotations), then the calls the context's toolCalls name,
 * with their arguments as given; the library mirrors them as Mcp-Param-*. */
static int scenario_custom_headers(const char *url) {
  const char *raw = getenv("MCP_CONFORMANCE_CONTEXT");
  json_object *ctx = raw && *raw ? json_tokener_parse(raw) : NULL, *calls = NULL;
  if (!ctx || !json_object_object_get_ex(ctx, "toolCalls", &calls) ||
      !json_object_is_type(calls, json_type_array)) {
    say("FAIL: MCP_CONFORMANCE_CONTEXT has no toolCalls array");
    json_object_put(ctx);
    return EXIT_FAIL;
  }
  mcp_client *c = connect_to(url, NULL, true);
  if (!c) {
    json_object_put(ctx);
    return EXIT_FAIL;
  }
  char *tools = NULL;
  int rc = list_tools(c, &tools);
  mcp_free(tools);
  for (size_t i = 0; i < json_object_array_length(calls) && rc == EXIT_PASS; i++) {
    json_object *call = json_object_array_get_idx(calls, i), *args = NULL;
    const char *name = item_str(calls, i, "name");
    if (!name) continue;
    const char *args_json = json_object_object_get_ex(call, "arguments", &args)
                                ? json_object_to_json_string_ext(
                                      args, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)
                                : "{}";
    char *res = NULL;
    mcp_error err = MCP_ERROR_INIT;
    say("calling %s %s", name, args_json);
    mcp_status st = mcp_client_call_tool(c, name, args_json, NULL, &res, &err);
    if (st == MCP_OK || st == MCP_ETOOLERROR) say("result of %s: %s", name, res ? res : "(none)");
    else rc = fail_status(name, st, &err);
    mcp_error_clear(&err);
    mcp_free(res);
  }
  mcp_client_free(c);
  json_object_put(ctx);
  return rc;
}

/* json-schema-ref-no-deref: list the tools (whose schema has a $ref to a
 * canary URL the library must never fetch) and call them. */
static int scenario_ref_no_deref(const char *url) {
  mcp_client *c = connect_to(url, NULL, true);
  if (!c) return EXIT_FAIL;
  char *tools = NULL;
  int rc = list_tools(c, &tools);
  mcp_free(tools);
  mcp_client_free(c);
  return rc;
}

/*
 * json-schema-2020-12-preservation: the inputSchema of
 * json_schema_2020_12_tool must reach the host as the server sent it; send
 * it back verbatim as the "schema" argument of json_schema_echo, and the
 * server compares.
 */
static int scenario_schema_preservation(const char *url) {
  mcp_client *c = connect_to(url, NULL, true);
  if (!c) return EXIT_FAIL;
  char *tools = NULL;
  int rc = list_tools(c, &tools);
  json_object *arr = rc == EXIT_PASS ? parse_array("tools/list", tools) : NULL, *schema = NULL;
  if (rc == EXIT_PASS && !arr) rc = EXIT_FAIL;
  for (size_t i = 0; arr && i < json_object_array_length(arr) && !schema; i++) {
    const char *name = item_str(arr, i, "name");
    if (name && strcmp(name, "json_schema_2020_12_tool") == 0)
      json_object_object_get_ex(json_object_array_get_idx(arr, i), "inputSchema", &schema);
  }
  if (rc == EXIT_PASS && !schema) {
    say("FAIL: no json_schema_2020_12_tool with an inputSchema");
    rc = EXIT_FAIL;
  }
  if (rc == EXIT_PASS) {
    json_object *args = json_object_new_object();
    json_object_object_add(args, "schema", json_object_get(schema));
    char *res = NULL;
    mcp_error err = MCP_ERROR_INIT;
    const char *args_json = json_object_to_json_string_ext(
        args, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    say("calling json_schema_echo %s", args_json);
    mcp_status st = mcp_client_call_tool(c, "json_schema_echo", args_json, NULL, &res, &err);
    if (st == MCP_OK) say("result: %s", res);
    else rc = fail_status("json_schema_echo", st, &err);
    mcp_free(res);
    json_object_put(args);
  }
  json_object_put(arr);
  mcp_free(tools);
  mcp_client_free(c);
  return rc;
}

/*
 * sep-2322-client-request-state (MRTR): test_mrtr_echo_state and
 * test_mrtr_no_state end input_required with an elicitation; the library
 * asks on_mrtr_elicitation() and retries with the answer (and the
 * requestState, when one came).  While the first round is open, the
 * handler calls test_mrtr_unrelated, which must carry neither.
 * test_mrtr_no_result_type answers without resultType: complete.
 */
static mcp_client *mrtr_client;
static bool mrtr_unrelated_done;
static int mrtr_unrelated_rc = EXIT_FAIL;

static mcp_status on_mrtr_elicitation(void *user, const char *method, const char *params_json,
                                      char **result_json, mcp_error *err) {
  (void)user;
  (void)err;
  say("input request %s %s", method, params_json);
  if (!mrtr_unrelated_done) {
    mrtr_unrelated_done = true;
    say("between rounds: calling test_mrtr_unrelated");
    mrtr_unrelated_rc = call_expect(mrtr_client, "test_mrtr_unrelated", "{}", "unrelated-ok");
  }
  *result_json = strdup("{\"action\":\"accept\",\"content\":{\"confirmed\":true}}");
  return *result_json ? MCP_OK : MCP_ENOMEM;
}

static int scenario_mrtr(const char *url) {
  mcp_client_options *o = mcp_client_options_new();
  if (!o) return EXIT_FAIL;
  mcp_status st = mcp_client_options_set_http(o, url, MCP_HTTP_TRANSPORT_STREAMABLE);
  if (st == MCP_OK)
    st = mcp_client_options_set_client_info(o, "mcpconn-conformance-client", mcp_version());
  if (st == MCP_OK)
    st = mcp_client_options_set_request_handler(o, "elicitation/create", on_mrtr_elicitation, NULL);
  mcp_client_options_set_timeout_ms(o, request_timeout_ms);
  mcp_client_options_set_log(o, on_log, NULL);
  mcp_error err = MCP_ERROR_INIT;
  if (st == MCP_OK) {
    say("connecting to %s", url);
    st = mcp_client_connect(o, &mrtr_client, &err);
  }
  mcp_client_options_free(o);
  if (st != MCP_OK) return fail_status("connect", st, &err);
  say("connected: protocol %s", mcp_client_protocol_version(mrtr_client));
  char *tools = NULL;
  int rc = list_tools(mrtr_client, &tools);
  mcp_free(tools);
  if (rc == EXIT_PASS) rc = call_expect(mrtr_client, "test_mrtr_echo_state", "{}", "echo-state-ok");
  if (rc == EXIT_PASS && !mrtr_unrelated_done) {
    say("FAIL: test_mrtr_echo_state asked for no input");
    rc = EXIT_FAIL;
  }
  if (rc == EXIT_PASS) rc = mrtr_unrelated_rc;
  if (rc == EXIT_PASS) rc = call_expect(mrtr_client, "test_mrtr_no_state", "{}", "no-state-ok");
  if (rc == EXIT_PASS) {
    char *res = NULL;
    say("calling test_mrtr_no_result_type {}");
    st = mcp_client_call_tool(mrtr_client, "test_mrtr_no_result_type", "{}", NULL, &res, &err);
    if (st == MCP_OK) say("result: %s", res);
    else rc = fail_status("test_mrtr_no_result_type", st, &err);
    mcp_free(res);
  }
  mcp_client_free(mrtr_client);
  return rc;
}

static const struct {
  const char *name;
  int (*run)(const char *url);
} scenarios[] = {
    {"request-metadata", scenario_request_metadata},
    {"http-standard-headers", scenario_standard_headers},
    {"http-custom-headers", scenario_custom_headers},
    {"http-invalid-tool-headers", scenario_invalid_tool_headers},
    {"json-schema-ref-no-deref", scenario_ref_no_deref},
    {"json-schema-2020-12-preservation", scenario_schema_preservation},
    {"sep-2322-client-request-state", scenario_mrtr},
    {"initialize", scenario_initialize},
    {"tools_call", scenario_tools_call},
    {"elicitation-sep1034-client-defaults", scenario_elicitation_defaults},
    {"sse-retry", scenario_sse_retry},
    {"sep-2640-client-no-prefetch", scenario_skills_no_prefetch},
    {"sep-2640-client-verify-digest", scenario_skills_verify},
    {"sep-2640-client-verify-size", scenario_skills_verify},
    {"sep-2640-client-verify-frontmatter", scenario_skills_verify},
};

int main(int argc, char **argv) {
  clock_gettime(CLOCK_MONOTONIC, &t_start);
  const char *dbg = getenv("MCPCONN_CONFORMANCE_DEBUG");
  debug_log = dbg && *dbg && strcmp(dbg, "0") != 0;
  const char *tmo = getenv("MCPCONN_CONFORMANCE_TIMEOUT_MS");
  if (tmo && *tmo) {
    char *end = NULL;
    long long v = strtoll(tmo, &end, 10);
    if (*end || v <= 0) {
      fprintf(stderr, "%s: MCPCONN_CONFORMANCE_TIMEOUT_MS=%s is not a positive number\n", PROG,
              tmo);
      return EXIT_USAGE;
    }
    request_timeout_ms = v;
  }
  const char *scenario = getenv("MCP_CONFORMANCE_SCENARIO");
  if (argc < 2 || !scenario || !*scenario) {
    fprintf(stderr,
            "usage: MCP_CONFORMANCE_SCENARIO=<name> %s [args...] <server-url>\n"
            "Run by the MCP conformance suite: see tests/conformance/run.sh.\n",
            PROG);
    return EXIT_USAGE;
  }
  const char *url = argv[argc - 1];
  say("scenario %s, server %s, mcpconn %s", scenario, url, mcp_version());
  if (strncmp(scenario, "auth/", 5) == 0) {
    if (!(scenario_oauth = oauth_for(scenario))) return EXIT_FAIL;
    int rc = scenario_auth(url);
    mcp_oauth_options_free(scenario_oauth);
    say("%s: %s", scenario, rc == EXIT_PASS ? "done" : "FAILED");
    return rc;
  }
  for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
    if (strcmp(scenarios[i].name, scenario) == 0) {
      int rc = scenarios[i].run(url);
      say("%s: %s", scenario, rc == EXIT_PASS ? "done" : "FAILED");
      return rc;
    }
  }
  say("FAIL: unknown scenario \"%s\"; see scenarios[] and auth/* in " PROG ".c", scenario);
  return EXIT_USAGE;
}
