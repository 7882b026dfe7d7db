/* SPDX-License-Identifier: MIT */
/*
 * check_cli.c: the demo server, driven directly over pipes, and the mcpconn
 * command-line tool, run as a subprocess with its output and exit status
 * captured.  Peers come from the environment (see Makefile.am):
 * MCP_DEMO_SERVER and MCPCONN_BIN; the HTTP tests run the TypeScript SDK
 * server tests/interop/sdk-server.mjs (check_interop_util.h: they fail,
 * never skip, when node or the packages are missing).
 *
 * Every CLI run is hermetic: HOME, XDG_CONFIG_HOME and XDG_CACHE_HOME
 * point into a scratch directory made per test, and the CLI runs in a
 * directory holding .git, so discovery never reads the developer's files.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-c/json.h>

#include "check_interop_util.h"
#include "check_util.h"

/* Generous: sanitizer builds start slowly. */
#define REPLY_MS 5000

/* ------------------------------------------------------------------------ */
/* Helpers: a child with pipes                                               */
/* ------------------------------------------------------------------------ */

struct child {
  pid_t pid;
  int in_fd;  /* our end of the child's stdin, or -1 */
  int out_fd; /* our end of the child's stdout, or -1 */
  int err_fd; /* our end of the child's stderr, or -1 (then /dev/null) */
  char *buf;  /* stdout bytes read but not yet returned as lines */
  size_t len;
  size_t cap;
};

/* The working directory of children, or NULL for ours. */
static const char *g_child_cwd;

/* Starts |argv| with piped stdin and stdout; stderr to a pipe if asked. */
static void child_start(struct child *c, char *const argv[], bool pipe_err) {
  int in[2], out[2], err[2] = {-1, -1};
  ck_assert_int_eq(pipe(in), 0);
  ck_assert_int_eq(pipe(out), 0);
  if (pipe_err) ck_assert_int_eq(pipe(err), 0);
  memset(c, 0, sizeof(*c));
  c->pid = fork();
  ck_assert_int_ge(c->pid, 0);
  if (c->pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    if (pipe_err) {
      dup2(err[1], 2);
    } else {
      int null = open("/dev/null", O_WRONLY);
      if (null >= 0) dup2(null, 2);
    }
    for (int fd = 3; fd < 256; fd++) close(fd);
    if (g_child_cwd && chdir(g_child_cwd) != 0) _exit(126);
    execv(argv[0], argv);
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  if (pipe_err) close(err[1]);
  c->in_fd = in[1];
  c->out_fd = out[0];
  c->err_fd = err[0];
}

static void child_send_bytes(struct child *c, const char *data, size_t len) {
  while (len) {
    ssize_t n = write(c->in_fd, data, len);
    if (n < 0 && errno == EINTR) continue;
    ck_assert_msg(n > 0, "write to the child failed: %s", strerror(errno));
    data += n;
    len -= (size_t)n;
  }
}

static void child_send(struct child *c, const char *line) {
  child_send_bytes(c, line, strlen(line));
  child_send_bytes(c, "\n", 1);
}

static void child_sendf(struct child *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void child_sendf(struct child *c, const char *fmt, ...) {
  char line[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof(line), fmt, ap);
  va_end(ap);
  child_send(c, line);
}

/*
 * Returns the next line of the child's stdout (a new string without the
 * newline), or NULL at EOF or when |ms| pass first.
 */
static char *child_read_line(struct child *c, int ms) {
  long long end = test_now_ms() + ms;
  for (;;) {
    char *nl = c->len ? memchr(c->buf, '\n', c->len) : NULL;
    if (nl) {
      size_t n = (size_t)(nl - c->buf);
      char *line = malloc(n + 1);
      memcpy(line, c->buf, n);
      line[n] = '\0';
      memmove(c->buf, nl + 1, c->len - n - 1);
      c->len -= n + 1;
      return line;
    }
    long long left = end - test_now_ms();
    if (left <= 0) return NULL;
    struct pollfd pfd = {c->out_fd, POLLIN, 0};
    int r = poll(&pfd, 1, (int)left);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return NULL;
    if (c->cap - c->len < 65536) {
      c->cap = c->cap ? c->cap * 2 : 131072;
      c->buf = realloc(c->buf, c->cap);
    }
    ssize_t n = read(c->out_fd, c->buf + c->len, c->cap - c->len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return NULL;
    c->len += (size_t)n;
  }
}

/* Reads the next line and parses it; fails the test on timeout or junk. */
static json_object *child_read_json(struct child *c, int ms) {
  char *line = child_read_line(c, ms);
  ck_assert_msg(line != NULL, "no line from the child within %d ms", ms);
  json_object *obj = json_tokener_parse(line);
  ck_assert_msg(obj != NULL, "not JSON: %s", line);
  free(line);
  return obj;
}

static void child_close_stdin(struct child *c) {
  if (c->in_fd >= 0) close(c->in_fd);
  c->in_fd = -1;
}

static bool child_exited(struct child *c, int *status) {
  return waitpid(c->pid, status, WNOHANG) == c->pid;
}

/* Waits up to |ms| for the child to exit; returns its wait status. */
static int child_wait(struct child *c, int ms) {
  int status = 0;
  bool done = WAIT_UNTIL(child_exited(c, &status), ms);
  if (!done) {
    kill(c->pid, SIGKILL);
    waitpid(c->pid, &status, 0);
    ck_abort_msg("the child did not exit within %d ms", ms);
  }
  return status;
}

static void child_free(struct child *c) {
  child_close_stdin(c);
  if (c->out_fd >= 0) close(c->out_fd);
  if (c->err_fd >= 0) close(c->err_fd);
  c->out_fd = c->err_fd = -1;
  free(c->buf);
  c->buf = NULL;
}

/* ------------------------------------------------------------------------ */
/* Helpers: JSON                                                             */
/* ------------------------------------------------------------------------ */

/* Follows a path like "result.content.0.text"; NULL when absent. */
static json_object *jpath(json_object *obj, const char *path) {
  char buf[256];
  snprintf(buf, sizeof(buf), "%s", path);
  char *save = NULL;
  for (char *part = strtok_r(buf, ".", &save); part && obj; part = strtok_r(NULL, ".", &save)) {
    if (json_object_is_type(obj, json_type_array)) {
      char *end;
      long i = strtol(part, &end, 10);
      obj = *end ? NULL : json_object_array_get_idx(obj, (size_t)i);
    } else if (!json_object_object_get_ex(obj, part, &obj)) {
      obj = NULL;
    }
  }
  return obj;
}

static const char *jstr(json_object *obj, const char *path) {
  json_object *v = jpath(obj, path);
  return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static int64_t jint(json_object *obj, const char *path, int64_t dflt) {
  json_object *v = jpath(obj, path);
  return json_object_is_type(v, json_type_int) ? json_object_get_int64(v) : dflt;
}

static bool jtrue(json_object *obj, const char *path) {
  json_object *v = jpath(obj, path);
  return json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v);
}

/* ------------------------------------------------------------------------ */
/* The demo server over pipes                                                */
/* ------------------------------------------------------------------------ */

static void demo_start(struct child *c) {
  char *argv[] = {(char *)test_env_path("MCP_DEMO_SERVER"), NULL};
  child_start(c, argv, false);
}

#define INIT_LINE \
  "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{" \
  "\"protocolVersion\":\"%s\",\"capabilities\":{},\"clientInfo\":{\"name\":" \
  "\"check_cli\",\"version\":\"1\"}}}"

static void demo_handshake(struct child *c) {
  child_sendf(c, INIT_LINE, "2025-11-25");
  json_object *r = child_read_json(c, REPLY_MS);
  ck_assert_str_eq(jstr(r, "result.protocolVersion"), "2025-11-25");
  json_object_put(r);
  child_send(c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
}

/* Sends tools/call |name| with |args| as id |id| and returns the reply. */
static json_object *demo_call(struct child *c, int id, const char *name, const char *args) {
  child_sendf(c,
              "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\","
              "\"params\":{\"name\":\"%s\",\"arguments\":%s}}",
              id, name, args);
  json_object *r = child_read_json(c, REPLY_MS);
  ck_assert_int_eq(jint(r, "id", -1), id);
  return r;
}

START_TEST(test_demo_initialize) {
  struct child c;
  demo_start(&c);
  /* The client's version is echoed when supported... */
  child_sendf(&c, INIT_LINE, "2025-06-18");
  json_object *r = child_read_json(&c, REPLY_MS);
  ck_assert_str_eq(jstr(r, "jsonrpc"), "2.0");
  ck_assert_int_eq(jint(r, "id", -1), 1);
  ck_assert_str_eq(jstr(r, "result.protocolVersion"), "2025-06-18");
  ck_assert_str_eq(jstr(r, "result.serverInfo.name"), "mcpconn-demo-server");
  ck_assert_ptr_nonnull(jstr(r, "result.serverInfo.version"));
  ck_assert_ptr_nonnull(jpath(r, "result.capabilities.tools"));
  json_object_put(r);
  /* ...and an unknown one gets the latest. */
  child_sendf(&c, INIT_LINE, "1999-01-01");
  r = child_read_json(&c, REPLY_MS);
  ck_assert_str_eq(jstr(r, "result.protocolVersion"), "2025-11-25");
  json_object_put(r);
  /* No protocolVersion at all is invalid params. */
  child_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\",\"params\":{}}");
  r = child_read_json(&c, REPLY_MS);
  ck_assert_int_eq(jint(r, "error.code", 0), -32602);
  json_object_put(r);

  child_send(&c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
  child_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"ping\"}");
  r = child_read_json(&c, REPLY_MS);
  ck_assert_str_eq(jstr(r, "id"), "p");
  ck_assert(json_object_is_type(jpath(r, "result"), json_type_object));
  ck_assert_int_eq(json_object_object_length(jpath(r, "result")), 0);
  json_object_put(r);
  child_close_stdin(&c);
  int st = child_wait(&c, REPLY_MS);
  ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  child_free(&c);
}
END_TEST

START_TEST(test_demo_tools_list) {
  struct child c;
  demo_start(&c);
  demo_handshake(&c);
  child_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
  json_object *r = child_read_json(&c, REPLY_MS);
  json_object *tools = jpath(r, "result.tools");
  ck_assert(json_object_is_type(tools, json_type_array));
  ck_assert_int_eq(json_object_array_length(tools), 4);
  const char *want[] = {"echo", "add", "sleep", "fail"};
  for (size_t i = 0; i < 4; i++) {
    json_object *t = json_object_array_get_idx(tools, i);
    ck_assert_str_eq(jstr(t, "name"), want[i]);
    ck_assert_ptr_nonnull(jstr(t, "description"));
    ck_assert_str_eq(jstr(t, "inputSchema.type"), "object");
  }
  ck_assert_str_eq(jstr(tools, "0.inputSchema.properties.text.type"), "string");
  ck_assert_str_eq(jstr(tools, "1.inputSchema.properties.a.type"), "number");
  ck_assert_str_eq(jstr(tools, "2.inputSchema.properties.ms.type"), "integer");
  json_object_put(r);
  child_free(&c);
  child_wait(&c, REPLY_MS);
}
END_TEST

START_TEST(test_demo_tools) {
  struct child c;
  demo_start(&c);
  demo_handshake(&c);

  json_object *r = demo_call(&c, 2, "echo", "{\"text\":\"hi \\u00e9/\\\"x\\\"\"}");
  ck_assert_str_eq(jstr(r, "result.content.0.type"), "text");
  ck_assert_str_eq(jstr(r, "result.content.0.text"), "hi \xc3\xa9/\"x\"");
  ck_assert(!jtrue(r, "result.isError"));
  json_object_put(r);

  /* Control characters, NUL, quotes and backslashes survive the trip. */
  r = demo_call(&c, 20, "echo", "{\"text\":\"a\\u0000b\\n\\t\\u001f\\\\\\\"\"}");
  json_object *t = jpath(r, "result.content.0.text");
  ck_assert_int_eq(json_object_get_string_len(t), 8);
  ck_assert_mem_eq(json_object_get_string(t), "a\0b\n\t\x1f\\\"", 8);
  json_object_put(r);

  r = demo_call(&c, 3, "add", "{\"a\":2,\"b\":3}");
  ck_assert_str_eq(jstr(r, "result.content.0.text"), "5");
  ck_assert_int_eq(jint(r, "result.structuredContent.sum", 0), 5);
  json_object_put(r);

  r = demo_call(&c, 4, "add", "{\"a\":0.5,\"b\":0.25}");
  ck_assert_str_eq(jstr(r, "result.content.0.text"), "0.75");
  json_object_put(r);

  r = demo_call(&c, 5, "add", "{\"a\":2.5,\"b\":-0.5}");
  ck_assert_str_eq(jstr(r, "result.content.0.text"), "2");
  json_object_put(r);

  r = demo_call(&c, 6, "add", "{\"a\":0.1,\"b\":0.2}");
  ck_assert_str_eq(jstr(r, "result.content.0.text"), "0.30000000000000004");
  json_object_put(r);

  /* Invalid arguments are tool errors, not protocol errors. */
  r = demo_call(&c, 7, "add", "{\"a\":\"2\",\"b\":3}");
  ck_assert(jtrue(r, "result.isError"));
  ck_assert_ptr_null(jpath(r, "error"));
  json_object_put(r);

  r = demo_call(&c, 8, "echo", "{}");
  ck_assert(jtrue(r, "result.isError"));
  json_object_put(r);

  r = demo_call(&c, 9, "fail", "{}");
  ck_assert(jtrue(r, "result.isError"));
  ck_assert_str_eq(jstr(r, "result.content.0.text"), "the fail tool always fails");
  json_object_put(r);

  r = demo_call(&c, 10, "fail", "{\"message\":\"boom\"}");
  ck_assert(jtrue(r, "result.isError"));
  ck_assert_str_eq(jstr(r, "result.content.0.text"), "boom");
  json_object_put(r);

  r = demo_call(&c, 11, "sleep", "{\"ms\":-1}");
  ck_assert(jtrue(r, "result.isError"));
  json_object_put(r);

  /* An unknown tool is a JSON-RPC error. */
  r = demo_call(&c, 12, "nosuch", "{}");
  ck_assert_int_eq(jint(r, "error.code", 0), -32602);
  ck_assert_str_eq(jstr(r, "error.message"), "Unknown tool: nosuch");
  json_object_put(r);

  /* So are arguments that are not an object. */
  r = demo_call(&c, 13, "echo", "[1]");
  ck_assert_int_eq(jint(r, "error.code", 0), -32602);
  json_object_put(r);

  child_free(&c);
  child_wait(&c, REPLY_MS);
}
END_TEST

/*
 * Prompts and resources, in both eras: the capabilities say so, the lists
 * and reads answer, an unknown URI is -32002 (legacy) or -32602 (modern).
 */
#define MODERN_META \
  "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"," \
  "\"io.modelcontextprotocol/clientCapabilities\":{}}"

START_TEST(test_demo_prompts_resources) {
  for (int modern = 0; modern < 2; modern++) {
    struct child c;
    demo_start(&c);
    const char *meta = modern ? MODERN_META : "\"x\":0";
    if (modern)
      child_sendf(&c,
                  "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\","
                  "\"params\":{%s}}",
                  meta);
    else child_sendf(&c, INIT_LINE, "2025-11-25");
    json_object *r = child_read_json(&c, REPLY_MS);
    ck_assert_ptr_nonnull(jpath(r, "result.capabilities.prompts"));
    ck_assert_ptr_nonnull(jpath(r, "result.capabilities.resources"));
    ck_assert_ptr_nonnull(jpath(r, "result.capabilities.tools"));
    json_object_put(r);

    child_sendf(&c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"prompts/list\",\"params\":{%s}}",
                meta);
    r = child_read_json(&c, REPLY_MS);
    ck_assert_str_eq(jstr(r, "result.prompts.0.name"), "greet");
    ck_assert_str_eq(jstr(r, "result.prompts.0.arguments.0.name"), "name");
    ck_assert(jtrue(r, "result.prompts.0.arguments.0.required"));
    ck_assert_str_eq(jstr(r, "result.prompts.1.name"), "summarize");
    if (modern) ck_assert_str_eq(jstr(r, "result.resultType"), "complete");
    else ck_assert_ptr_null(jpath(r, "result.resultType"));
    json_object_put(r);

    child_sendf(&c,
                "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"prompts/get\",\"params\":{%s,"
                "\"name\":\"greet\",\"arguments\":{\"name\":\"Ann\",\"style\":\"formal\"}}}",
                meta);
    r = child_read_json(&c, REPLY_MS);
    ck_assert_str_eq(jstr(r, "result.messages.0.role"), "user");
    ck_assert_str_eq(jstr(r, "result.messages.0.content.text"), "Write a formal greeting for Ann.");
    json_object_put(r);
    child_sendf(&c,
                "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"prompts/get\",\"params\":{%s,"
                "\"name\":\"greet\"}}",
                meta);
    r = child_read_json(&c, REPLY_MS);
    ck_assert_int_eq(jint(r, "error.code", 0), -32602);
    json_object_put(r);

    child_sendf(&c, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"resources/list\",\"params\":{%s}}",
                meta);
    r = child_read_json(&c, REPLY_MS);
    ck_assert_str_eq(jstr(r, "result.resources.0.uri"), "demo://readme");
    ck_assert_str_eq(jstr(r, "result.resources.1.uri"), "demo://config.json");
    json_object_put(r);
    child_sendf(&c,
                "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"resources/templates/list\","
                "\"params\":{%s}}",
                meta);
    r = child_read_json(&c, REPLY_MS);
    ck_assert_str_eq(jstr(r, "result.resourceTemplates.0.uriTemplate"), "demo://echo/{text}");
    json_object_put(r);
    child_sendf(&c,
                "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"resources/read\",\"params\":{%s,"
                "\"uri\":\"demo://echo/abc\"}}",
                meta);
    r = child_read_json(&c, REPLY_MS);
    ck_assert_str_eq(jstr(r, "result.contents.0.text"), "abc");
    ck_assert_str_eq(jstr(r, "result.contents.0.uri"), "demo://echo/abc");
    json_object_put(r);
    child_sendf(&c,
                "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"resources/read\",\"params\":{%s,"
                "\"uri\":\"demo://none\"}}",
                meta);
    r = child_read_json(&c, REPLY_MS);
    ck_assert_int_eq(jint(r, "error.code", 0), modern ? -32602 : -32002);
    ck_assert_str_eq(jstr(r, "error.data.uri"), "demo://none");
    json_object_put(r);
    child_close_stdin(&c);
    int st = child_wait(&c, REPLY_MS);
    ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    child_free(&c);
  }
}
END_TEST

START_TEST(test_demo_protocol_errors) {
  struct child c;
  demo_start(&c);
  demo_handshake(&c);

  child_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"completion/complete\"}");
  json_object *r = child_read_json(&c, REPLY_MS);
  ck_assert_int_eq(jint(r, "id", -1), 2);
  ck_assert_int_eq(jint(r, "error.code", 0), -32601);
  ck_assert_str_eq(jstr(r, "error.message"), "Method not found");
  json_object_put(r);

  /* Garbage: -32700 with id null, and the server keeps going. */
  const char *garbage[] = {"this is not json", "{\"jsonrpc\":\"2.0\",", "{} trailing", "[1,]"};
  for (size_t i = 0; i < sizeof(garbage) / sizeof(*garbage); i++) {
    child_send(&c, garbage[i]);
    r = child_read_json(&c, REPLY_MS);
    ck_assert_int_eq(jint(r, "error.code", 0), -32700);
    json_object *id = NULL;
    ck_assert(json_object_object_get_ex(r, "id", &id));
    ck_assert_ptr_null(id);
    json_object_put(r);
  }

  /* Valid JSON that is no request: -32600. */
  child_send(&c, "[{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}]");
  r = child_read_json(&c, REPLY_MS);
  ck_assert_int_eq(jint(r, "error.code", 0), -32600);
  json_object_put(r);
  child_send(&c, "{\"jsonrpc\":\"1.0\",\"id\":4,\"method\":\"ping\"}");
  r = child_read_json(&c, REPLY_MS);
  ck_assert_int_eq(jint(r, "error.code", 0), -32600);
  json_object_put(r);

  /* Params that are not an object: -32602. */
  child_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\",\"params\":[]}");
  r = child_read_json(&c, REPLY_MS);
  ck_assert_int_eq(jint(r, "error.code", 0), -32602);
  json_object_put(r);

  /* A blank line is ignored; the ping right after it is answered next. */
  child_send(&c, "");
  child_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"ping\"}");
  r = child_read_json(&c, REPLY_MS);
  ck_assert_int_eq(jint(r, "id", -1), 6);
  ck_assert_ptr_nonnull(jpath(r, "result"));
  json_object_put(r);

  child_close_stdin(&c);
  int st = child_wait(&c, REPLY_MS);
  ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  child_free(&c);
}
END_TEST

/* A line over 16 MiB is skipped; the next line is served normally. */
START_TEST(test_demo_huge_line) {
  struct child c;
  demo_start(&c);
  demo_handshake(&c);
  size_t big = 17u * 1024 * 1024;
  char *line = malloc(big);
  memset(line, 'x', big);
  memcpy(line, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\",\"x\":\"", 46);
  child_send_bytes(&c, line, big);
  child_send_bytes(&c, "\"}\n", 3);
  free(line);
  child_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}");
  json_object *r = child_read_json(&c, 20000);
  ck_assert_int_eq(jint(r, "id", -1), 3);
  json_object_put(r);
  child_close_stdin(&c);
  int st = child_wait(&c, REPLY_MS);
  ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  child_free(&c);
}
END_TEST

/* Other requests are answered while a sleep runs; the sleep then completes. */
START_TEST(test_demo_sleep_concurrent) {
  struct child c;
  demo_start(&c);
  demo_handshake(&c);
  long long t0 = test_now_ms();
  child_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
                 "\"params\":{\"name\":\"sleep\",\"arguments\":{\"ms\":300}}}");
  child_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}");
  json_object *r = child_read_json(&c, REPLY_MS);
  ck_assert_int_eq(jint(r, "id", -1), 3);
  json_object_put(r);
  r = demo_call(&c, 4, "echo", "{\"text\":\"meanwhile\"}");
  ck_assert_str_eq(jstr(r, "result.content.0.text"), "meanwhile");
  json_object_put(r);
  /* No token was sent, so the next message is the sleep's result. */
  r = child_read_json(&c, REPLY_MS);
  ck_assert_int_eq(jint(r, "id", -1), 2);
  ck_assert_str_eq(jstr(r, "result.content.0.text"), "slept 300 ms");
  ck_assert_int_ge(test_now_ms() - t0, 300);
  json_object_put(r);
  child_free(&c);
  child_wait(&c, REPLY_MS);
}
END_TEST

/*
 * Progress arrives every ~100 ms with increasing values; after
 * notifications/cancelled the sleep never answers.  The server handles its
 * input in order on one thread, so once the ping sent after the cancel is
 * answered, the cancel has been applied: anything from the sleep must come
 * before that answer, and only progress may.  Then a sleep that was not
 * cancelled, started after the cancel and longer than the cancelled one's
 * remaining progress interval, must answer with nothing of the cancelled
 * one in between: the server's own clock shows it stopped.
 */
START_TEST(test_demo_sleep_progress_cancel) {
  struct child c;
  demo_start(&c);
  demo_handshake(&c);
  child_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\","
                 "\"params\":{\"name\":\"sleep\",\"arguments\":{\"ms\":10000},"
                 "\"_meta\":{\"progressToken\":\"tok\"}}}");
  int64_t last = 0;
  for (int i = 0; i < 3; i++) {
    json_object *n = child_read_json(&c, REPLY_MS);
    ck_assert_str_eq(jstr(n, "method"), "notifications/progress");
    ck_assert_str_eq(jstr(n, "params.progressToken"), "tok");
    ck_assert_int_eq(jint(n, "params.total", 0), 10000);
    ck_assert_str_eq(jstr(n, "params.message"), "sleeping");
    int64_t p = jint(n, "params.progress", -1);
    ck_assert_int_gt(p, last);
    ck_assert_int_lt(p, 10000);
    last = p;
    json_object_put(n);
  }

  child_send(&c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
                 "\"params\":{\"requestId\":7,\"reason\":\"test\"}}");
  child_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\"}");
  for (;;) {
    json_object *m = child_read_json(&c, REPLY_MS);
    if (jint(m, "id", -1) == 8) {
      json_object_put(m);
      break;
    }
    /* Before the ping's answer only progress of the sleep may appear. */
    ck_assert_str_eq(jstr(m, "method"), "notifications/progress");
    json_object_put(m);
  }

  /* A 250 ms sleep spans two more progress intervals of the cancelled one. */
  child_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\","
                 "\"params\":{\"name\":\"sleep\",\"arguments\":{\"ms\":250}}}");
  json_object *r = child_read_json(&c, REPLY_MS);
  ck_assert_int_eq(jint(r, "id", -1), 9);
  ck_assert_str_eq(jstr(r, "result.content.0.text"), "slept 250 ms");
  json_object_put(r);

  /* Cancelling an unknown or finished request is ignored. */
  child_send(&c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
                 "\"params\":{\"requestId\":\"nope\"}}");
  child_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"ping\"}");
  r = child_read_json(&c, REPLY_MS);
  ck_assert_int_eq(jint(r, "id", -1), 10);
  json_object_put(r);
  child_free(&c);
  child_wait(&c, REPLY_MS);
}
END_TEST

/* EOF makes the server exit 0 at once, even with a sleep running. */
START_TEST(test_demo_eof) {
  struct child c;
  demo_start(&c);
  demo_handshake(&c);
  child_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
                 "\"params\":{\"name\":\"sleep\",\"arguments\":{\"ms\":60000}}}");
  child_close_stdin(&c);
  long long t0 = test_now_ms();
  int st = child_wait(&c, REPLY_MS);
  ck_assert(WIFEXITED(st));
  ck_assert_int_eq(WEXITSTATUS(st), 0);
  ck_assert_int_lt(test_now_ms() - t0, 4000);
  child_free(&c);

  /* EOF in the middle of a line, and right away. */
  demo_start(&c);
  child_send_bytes(&c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"meth", 30);
  child_close_stdin(&c);
  st = child_wait(&c, REPLY_MS);
  ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  child_free(&c);
  demo_start(&c);
  child_close_stdin(&c);
  st = child_wait(&c, REPLY_MS);
  ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  child_free(&c);
}
END_TEST

/* A reader that went away (EPIPE) ends the server quietly, not by SIGPIPE. */
START_TEST(test_demo_epipe) {
  struct child c;
  demo_start(&c);
  close(c.out_fd);
  c.out_fd = -1;
  child_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");
  int status;
  /* It exits on the failed write, before (or at) EOF. */
  if (!WAIT_UNTIL(child_exited(&c, &status), 1000)) {
    child_close_stdin(&c);
    status = child_wait(&c, REPLY_MS);
  }
  ck_assert_msg(WIFEXITED(status), "killed by signal %d", WTERMSIG(status));
  ck_assert_int_eq(WEXITSTATUS(status), 0);
  child_free(&c);
}
END_TEST

/* Reads everything from |fd| until EOF into a new string. */
static char *slurp_fd(int fd) {
  size_t cap = 4096, len = 0;
  char *s = malloc(cap);
  for (;;) {
    if (cap - len < 1024) s = realloc(s, cap *= 2);
    ssize_t n = read(fd, s + len, cap - len - 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    len += (size_t)n;
  }
  s[len] = '\0';
  return s;
}

START_TEST(test_demo_flags) {
  const char *demo = test_env_path("MCP_DEMO_SERVER");
  struct child c;
  char *v[] = {(char *)demo, "--version", NULL};
  child_start(&c, v, false);
  char *out = slurp_fd(c.out_fd);
  ck_assert_ptr_nonnull(strstr(out, "mcpconn-demo-server"));
  free(out);
  int st = child_wait(&c, REPLY_MS);
  ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  child_free(&c);

  char *h[] = {(char *)demo, "--help", NULL};
  child_start(&c, h, false);
  out = slurp_fd(c.out_fd);
  ck_assert_ptr_nonnull(strstr(out, "Usage:"));
  free(out);
  st = child_wait(&c, REPLY_MS);
  ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  child_free(&c);

  char *b[] = {(char *)demo, "--bogus", NULL};
  child_start(&c, b, false);
  st = child_wait(&c, REPLY_MS);
  ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 2);
  child_free(&c);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* The CLI                                                                   */
/* ------------------------------------------------------------------------ */

struct run {
  int status;   /* exit code, or 128 + signal */
  char *out;    /* stdout */
  char *err;    /* stderr */
  long long ms; /* wall time */
};

static void run_free(struct run *r) {
  free(r->out);
  free(r->err);
}

/*
 * Runs mcpconn with |args| (NULL-terminated) and the demo server made
 * findable through MCPCONN_DEMO_SERVER; captures everything.  |on_start|,
 * if set, runs in the parent once the child exists.
 */
static void run_cli_ex(struct run *r, const char *const *args,
                       void (*on_start)(pid_t pid, void *user), void *user) {
  const char *bin = test_env_path("MCPCONN_BIN");
  setenv("MCPCONN_DEMO_SERVER", test_env_path("MCP_DEMO_SERVER"), 1);
  char *argv[64];
  size_t n = 0;
  argv[n++] = (char *)bin;
  for (size_t i = 0; args[i] && n < 63; i++) argv[n++] = (char *)args[i];
  argv[n] = NULL;

  struct child c;
  long long t0 = test_now_ms();
  child_start(&c, argv, true);
  child_close_stdin(&c);
  if (on_start) on_start(c.pid, user);

  /* Drain stdout and stderr together so neither pipe can fill up. */
  size_t cap[2] = {4096, 4096}, len[2] = {0, 0};
  char *buf[2] = {malloc(cap[0]), malloc(cap[1])};
  int fds[2] = {c.out_fd, c.err_fd};
  int open_fds = 2;
  long long end = t0 + 60000;
  while (open_fds && test_now_ms() < end) {
    struct pollfd pfd[2] = {{fds[0], POLLIN, 0}, {fds[1], POLLIN, 0}};
    int rc = poll(pfd, 2, 100);
    if (rc < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; i++) {
      if (fds[i] < 0 || !(pfd[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      if (cap[i] - len[i] < 1024) buf[i] = realloc(buf[i], cap[i] *= 2);
      ssize_t k = read(fds[i], buf[i] + len[i], cap[i] - len[i] - 1);
      if (k > 0) {
        len[i] += (size_t)k;
      } else if (k == 0 || errno != EINTR) {
        fds[i] = -1;
        open_fds--;
      }
    }
  }
  buf[0][len[0]] = '\0';
  buf[1][len[1]] = '\0';
  int st = child_wait(&c, 10000);
  r->ms = test_now_ms() - t0;
  r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  r->out = buf[0];
  r->err = buf[1];
  child_free(&c);
}

static void run_cli(struct run *r, const char *const *args) { run_cli_ex(r, args, NULL, NULL); }

#define RUN(r, ...) \
  do { \
    const char *const args_[] = {__VA_ARGS__, NULL}; \
    run_cli((r), args_); \
  } while (0)

/* Asserts the exit status, showing stderr when it differs. */
#define ASSERT_EXIT(r, code) \
  ck_assert_msg((r)->status == (code), "exit %d, expected %d; stderr: %s", (r)->status, (code), \
                (r)->err)

/* A failing run prints exactly one "mcpconn: " line on stderr. */
static void assert_one_reason(const struct run *r) {
  ck_assert_msg(strncmp(r->err, "mcpconn: ", 9) == 0, "stderr: %s", r->err);
  size_t nl = 0;
  for (const char *p = r->err; *p; p++) nl += *p == '\n';
  ck_assert_msg(nl == 1, "expected one line on stderr, got: %s", r->err);
}

static json_object *parse_out(const struct run *r) {
  json_object *obj = json_tokener_parse(r->out);
  ck_assert_msg(obj != NULL, "stdout is not JSON: %s", r->out);
  return obj;
}

/*
 * The scratch directory of the running test (the CLI tests' fixture makes
 * it and removes it): home/ is HOME (with .config and .cache, the XDG
 * directories) and work/, which holds .git, is the CLI's working directory.
 */
static char g_dir[1024];
static char g_home[1100];
static char g_work[1100];

static void make_dir(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void make_dir(const char *fmt, ...) {
  char path[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(path, sizeof(path), fmt, ap);
  va_end(ap);
  ck_assert_msg(mkdir(path, 0700) == 0 || errno == EEXIST, "mkdir %s: %s", path, strerror(errno));
}

static void cli_setup(void) {
  /* Plain output unless a test asks for colour (test_cli_color). */
  setenv("NO_COLOR", "1", 1);
  interop_mkdtemp(g_dir, sizeof(g_dir), "check_cli");
  snprintf(g_home, sizeof(g_home), "%s/home", g_dir);
  snprintf(g_work, sizeof(g_work), "%s/work", g_dir);
  make_dir("%s", g_home);
  make_dir("%s/.config", g_home);
  make_dir("%s/.cache", g_home);
  make_dir("%s", g_work);
  make_dir("%s/.git", g_work);
  setenv("HOME", g_home, 1);
  char xdg[1200];
  snprintf(xdg, sizeof(xdg), "%s/.config", g_home);
  setenv("XDG_CONFIG_HOME", xdg, 1);
  snprintf(xdg, sizeof(xdg), "%s/.cache", g_home);
  setenv("XDG_CACHE_HOME", xdg, 1);
  g_child_cwd = g_work;
}

static void cli_teardown(void) {
  g_child_cwd = NULL;
  if (g_dir[0]) interop_rm_rf(g_dir);
  g_dir[0] = '\0';
}

/* Writes |text| to |path| (a printf format), making the directories on the
 * way; returns the path (a new string). */
static char *write_file(const char *text, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static char *write_file(const char *text, const char *fmt, ...) {
  char *path = malloc(4096);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(path, 4096, fmt, ap);
  va_end(ap);
  for (char *p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/')) {
    *p = '\0';
    ck_assert_msg(mkdir(path, 0700) == 0 || errno == EEXIST, "mkdir %s: %s", path, strerror(errno));
    *p = '/';
  }
  FILE *f = fopen(path, "w");
  ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
  fputs(text, f);
  fclose(f);
  return path;
}

/* Writes |text| to a new file in the test directory; returns its path. */
static char *write_temp(const char *name, const char *text) {
  return write_file(text, "%s/%s", g_dir, name);
}

/* A config naming the demo server twice, as a and b. */
static char *write_two_server_config(void) {
  const char *demo = test_env_path("MCP_DEMO_SERVER");
  char text[8192];
  snprintf(text, sizeof(text),
           "{\n  \"mcpServers\": {\n"
           "    \"a\": {\"command\": \"%s\"},\n"
           "    \"b\": {\"command\": \"%s\", \"args\": [], \"env\": {\"X\": \"1\"}}\n"
           "  }\n}\n",
           demo, demo);
  return write_temp("two.json", text);
}

START_TEST(test_cli_tools_default) {
  struct run r;
  RUN(&r, "tools");
  ASSERT_EXIT(&r, 0);
  const char *names[] = {"echo", "add", "sleep", "fail"};
  for (size_t i = 0; i < 4; i++)
    ck_assert_msg(strstr(r.out, names[i]), "no %s in: %s", names[i], r.out);
  ck_assert_msg(strstr(r.err, "bundled demo server"), "stderr: %s", r.err);
  ck_assert_msg(strstr(r.out, "Returns the given text unchanged."), "%s", r.out);
  run_free(&r);

  /* --quiet drops the notice. */
  RUN(&r, "-q", "tools");
  ASSERT_EXIT(&r, 0);
  ck_assert_str_eq(r.err, "");
  run_free(&r);
}
END_TEST

START_TEST(test_cli_tools_json) {
  struct run r;
  RUN(&r, "tools", "--json");
  ASSERT_EXIT(&r, 0);
  json_object *a = parse_out(&r);
  ck_assert(json_object_is_type(a, json_type_array));
  ck_assert_int_eq(json_object_array_length(a), 4);
  /* Sorted by public name: mcp__demo_add, _echo, _fail, _sleep. */
  const char *tools[] = {"add", "echo", "fail", "sleep"};
  for (size_t i = 0; i < 4; i++) {
    json_object *t = json_object_array_get_idx(a, i);
    char name[64];
    snprintf(name, sizeof(name), "mcp__demo_%s", tools[i]);
    ck_assert_str_eq(jstr(t, "server"), "demo");
    ck_assert_str_eq(jstr(t, "tool"), tools[i]);
    ck_assert_str_eq(jstr(t, "name"), name);
    ck_assert(json_object_is_type(jpath(t, "deferred"), json_type_boolean));
    ck_assert(!jtrue(t, "deferred"));
    ck_assert_ptr_nonnull(jstr(t, "description"));
    ck_assert_str_eq(jstr(t, "inputSchema.type"), "object");
  }
  json_object_put(a);
  run_free(&r);
}
END_TEST

START_TEST(test_cli_call_echo) {
  struct run r;
  RUN(&r, "call", "echo", "{\"text\":\"hi\"}");
  ASSERT_EXIT(&r, 0);
  json_object *res = parse_out(&r);
  ck_assert_str_eq(jstr(res, "content.0.text"), "hi");
  json_object_put(res);
  run_free(&r);

  /* The server prefix works with one server too. */
  RUN(&r, "call", "demo/echo", "{\"text\":\"there\"}");
  ASSERT_EXIT(&r, 0);
  res = parse_out(&r);
  ck_assert_str_eq(jstr(res, "content.0.text"), "there");
  json_object_put(res);
  run_free(&r);
}
END_TEST

START_TEST(test_cli_call_add) {
  struct run r;
  RUN(&r, "call", "add", "{\"a\":2,\"b\":3}");
  ASSERT_EXIT(&r, 0);
  json_object *res = parse_out(&r);
  ck_assert_str_eq(jstr(res, "content.0.text"), "5");
  ck_assert_int_eq(jint(res, "structuredContent.sum", 0), 5);
  json_object_put(res);
  run_free(&r);
}
END_TEST

START_TEST(test_cli_call_fail) {
  struct run r;
  RUN(&r, "-q", "call", "fail");
  ASSERT_EXIT(&r, 1);
  json_object *res = parse_out(&r);
  ck_assert(jtrue(res, "isError"));
  ck_assert_str_eq(jstr(res, "content.0.text"), "the fail tool always fails");
  json_object_put(res);
  assert_one_reason(&r);
  run_free(&r);
}
END_TEST

START_TEST(test_cli_call_usage_errors) {
  struct run r;
  RUN(&r, "-q", "call", "nosuch");
  ASSERT_EXIT(&r, 2);
  assert_one_reason(&r);
  ck_assert_msg(strstr(r.err, "nosuch"), "%s", r.err);
  ck_assert_str_eq(r.out, "");
  run_free(&r);

  RUN(&r, "-q", "call", "echo", "{bad json");
  ASSERT_EXIT(&r, 2);
  assert_one_reason(&r);
  run_free(&r);

  RUN(&r, "-q", "call", "echo", "[1,2]");
  ASSERT_EXIT(&r, 2);
  assert_one_reason(&r);
  run_free(&r);

  RUN(&r, "-q", "call");
  ASSERT_EXIT(&r, 2);
  run_free(&r);
}
END_TEST

START_TEST(test_cli_spawn_failure) {
  struct run r;
  RUN(&r, "--stdio", "/nonexistent/prog", "tools");
  ASSERT_EXIT(&r, 3);
  assert_one_reason(&r);
  ck_assert_msg(strstr(r.err, "prog"), "%s", r.err);
  run_free(&r);
}
END_TEST

START_TEST(test_cli_timeout) {
  struct run r;
  /* --timeout bounds the connect too: 1500 ms leaves a sanitizer build on
   * a loaded machine time to start the demo server (200 ms did not). */
  RUN(&r, "-q", "--timeout", "1500", "call", "sleep", "{\"ms\":20000}");
  ASSERT_EXIT(&r, 3);
  assert_one_reason(&r);
  ck_assert_msg(strstr(r.err, "timed out") && strstr(r.err, "call"), "%s", r.err);
  ck_assert_msg(r.ms < 15000, "took %lld ms", r.ms);
  run_free(&r);
}
END_TEST

START_TEST(test_cli_ping) {
  struct run r;
  RUN(&r, "-q", "ping");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strncmp(r.out, "demo: ok", 8) == 0, "%s", r.out);
  run_free(&r);
}
END_TEST

START_TEST(test_cli_request) {
  struct run r;
  RUN(&r, "request", "tools/list");
  ASSERT_EXIT(&r, 0);
  json_object *res = parse_out(&r);
  ck_assert(json_object_is_type(jpath(res, "tools"), json_type_array));
  ck_assert_int_eq(json_object_array_length(jpath(res, "tools")), 4);
  json_object_put(res);
  run_free(&r);

  /* 2026-07-28 has no ping (the demo server speaks it): a raw request
   * goes as it is. */
  RUN(&r, "request", "ping", "{}");
  ASSERT_EXIT(&r, 3);
  ck_assert_msg(strstr(r.err, "-32601"), "%s", r.err);
  run_free(&r);
  RUN(&r, "request", "server/discover", "{}");
  ASSERT_EXIT(&r, 0);
  res = parse_out(&r);
  ck_assert(json_object_is_type(jpath(res, "supportedVersions"), json_type_array));
  json_object_put(res);
  run_free(&r);

  /* A JSON-RPC error from the server is a protocol failure. */
  RUN(&r, "-q", "request", "nosuch/method");
  ASSERT_EXIT(&r, 3);
  assert_one_reason(&r);
  ck_assert_msg(strstr(r.err, "-32601"), "%s", r.err);
  run_free(&r);
}
END_TEST

START_TEST(test_cli_config_two_servers) {
  char *cfg = write_two_server_config();
  struct run r;
  RUN(&r, "--config", cfg, "call", "a/echo", "{\"text\":\"from a\"}");
  ASSERT_EXIT(&r, 0);
  json_object *res = parse_out(&r);
  ck_assert_str_eq(jstr(res, "content.0.text"), "from a");
  json_object_put(res);
  run_free(&r);

  RUN(&r, "--config", cfg, "call", "echo", "{\"text\":\"x\"}");
  ASSERT_EXIT(&r, 2);
  assert_one_reason(&r);
  ck_assert_msg(strstr(r.err, "a/echo") && strstr(r.err, "b/echo"), "%s", r.err);
  run_free(&r);

  RUN(&r, "--config", cfg, "tools");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "\na ") && strstr(r.out, "\nb "), "%s", r.out);
  ck_assert_str_eq(r.err, ""); /* no demo-server notice with a config */
  run_free(&r);

  RUN(&r, "--config", cfg, "tools", "--json");
  ASSERT_EXIT(&r, 0);
  res = parse_out(&r);
  ck_assert_int_eq(json_object_array_length(res), 8);
  json_object_put(res);
  run_free(&r);

  RUN(&r, "--config", cfg, "ping");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "a: ok") && strstr(r.out, "b: ok"), "%s", r.out);
  run_free(&r);

  /* --server narrows the set: a bare name is then unambiguous. */
  RUN(&r, "--config", cfg, "--server", "b", "call", "echo", "{\"text\":\"b\"}");
  ASSERT_EXIT(&r, 0);
  run_free(&r);

  /* A disabled entry is skipped, so "echo" has one home again. */
  char text[8192];
  const char *demo = test_env_path("MCP_DEMO_SERVER");
  snprintf(text, sizeof(text),
           "{\"mcpServers\": {\"a\": {\"command\": \"%s\", \"enabled\": false},"
           " \"b\": {\"command\": \"%s\"}}}",
           demo, demo);
  char *one = write_temp("one.json", text);
  RUN(&r, "--config", one, "call", "echo", "{\"text\":\"b\"}");
  ASSERT_EXIT(&r, 0);
  run_free(&r);
  unlink(one);
  free(one);

  /* request needs exactly one server. */
  RUN(&r, "--config", cfg, "request", "ping");
  ASSERT_EXIT(&r, 2);
  assert_one_reason(&r);
  run_free(&r);

  unlink(cfg);
  free(cfg);
}
END_TEST

/* "env" and "cwd" reach the server: the shell only starts it if they did. */
START_TEST(test_cli_config_env_cwd) {
  char text[8192];
  snprintf(text, sizeof(text),
           "{\"mcpServers\": {\"s\": {\"command\": \"/bin/sh\", \"args\": [\"-c\","
           " \"test \\\"$MCPCONN_T\\\" = 'x y' && test \\\"$(pwd -P)\\\" = \\\"$(cd / && "
           "pwd -P)\\\" && exec \\\"$0\\\"\", \"%s\"],"
           " \"env\": {\"MCPCONN_T\": \"x y\"}, \"cwd\": \"/\"}}}",
           test_env_path("MCP_DEMO_SERVER"));
  char *cfg = write_temp("envcwd.json", text);
  struct run r;
  RUN(&r, "--config", cfg, "ping");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "s: ok"), "%s", r.out);
  run_free(&r);
  unlink(cfg);
  free(cfg);
}
END_TEST

START_TEST(test_cli_config_errors) {
  struct run r;
  char *bad = write_temp("bad.json", "{\"mcpServers\": {\"a\": {\"command\": }}");
  RUN(&r, "--config", bad, "tools");
  ASSERT_EXIT(&r, 2);
  assert_one_reason(&r);
  ck_assert_msg(strstr(r.err, "line 1"), "%s", r.err);
  run_free(&r);
  unlink(bad);
  free(bad);

  /* HTTP entries are supported now; a header value with CR or LF is a
   * config error, and so is an unknown field. */
  char *http = write_temp("http.json", "{\"mcpServers\": {\"web\": {\"url\": \"https://x/mcp\","
                                       " \"headers\": {\"X-A\": \"a\\r\\nX-B: b\"}}}}");
  RUN(&r, "--config", http, "tools");
  ASSERT_EXIT(&r, 2);
  assert_one_reason(&r);
  ck_assert_msg(strstr(r.err, "CR or LF") && strstr(r.err, "web"), "%s", r.err);
  run_free(&r);
  unlink(http);
  free(http);

  char *typo = write_temp("typo.json", "{\"mcpServers\": {\"x\": {\"comand\": \"true\"}}}");
  RUN(&r, "--config", typo, "tools");
  ASSERT_EXIT(&r, 2);
  assert_one_reason(&r);
  ck_assert_msg(strstr(r.err, "comand"), "%s", r.err);
  run_free(&r);
  unlink(typo);
  free(typo);

  char *nocmd = write_temp("nocmd.json", "{\"mcpServers\": {\"x\": {\"args\": []}}}");
  RUN(&r, "--config", nocmd, "tools");
  ASSERT_EXIT(&r, 2);
  assert_one_reason(&r);
  run_free(&r);
  unlink(nocmd);
  free(nocmd);

  char *empty = write_temp("empty.json", "{\"mcpServers\": {}}");
  RUN(&r, "--config", empty, "tools");
  ASSERT_EXIT(&r, 2);
  assert_one_reason(&r);
  run_free(&r);
  unlink(empty);
  free(empty);

  RUN(&r, "--config", "/nonexistent/config.json", "tools");
  ASSERT_EXIT(&r, 2);
  assert_one_reason(&r);
  run_free(&r);
}
END_TEST

START_TEST(test_cli_usage) {
  struct run r;
  RUN(&r, "--bogus", "tools");
  ASSERT_EXIT(&r, 2);
  assert_one_reason(&r);
  run_free(&r);

  RUN(&r, "frobnicate");
  ASSERT_EXIT(&r, 2);
  run_free(&r);

  RUN(&r, "--timeout", "soon", "ping");
  ASSERT_EXIT(&r, 2);
  run_free(&r);

  RUN(&r, "--name", "x", "ping");
  ASSERT_EXIT(&r, 2);
  run_free(&r);

  RUN(&r, "--stdio", "'unterminated", "ping");
  ASSERT_EXIT(&r, 2);
  run_free(&r);

  const char *no_args[] = {NULL};
  run_cli(&r, no_args);
  ASSERT_EXIT(&r, 2);
  run_free(&r);

  RUN(&r, "--help");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "Usage: mcpconn"), "%s", r.out);
  run_free(&r);

  RUN(&r, "--version");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strncmp(r.out, "mcpconn ", 8) == 0, "%s", r.out);
  run_free(&r);
}
END_TEST

/* --stdio splits words (quotes, backslash) and --name names the server. */
START_TEST(test_cli_stdio_words) {
  const char *demo = test_env_path("MCP_DEMO_SERVER");
  char cmd[4096];
  snprintf(cmd, sizeof(cmd), "'%s'", demo);
  struct run r;
  RUN(&r, "--stdio", cmd, "--name", "one", "--stdio", demo, "ping");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "one: ok") && strstr(r.out, "mcpconn-demo-server: ok"), "%s", r.out);
  run_free(&r);

  /* Two servers with the same default name need --name. */
  RUN(&r, "--stdio", demo, "--stdio", demo, "ping");
  ASSERT_EXIT(&r, 2);
  run_free(&r);
  RUN(&r, "--stdio", demo, "--stdio", demo, "--name", "two", "ping");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "two: ok"), "%s", r.out);
  run_free(&r);

  /* An extra argument reaches the server: the demo server refuses it. */
  snprintf(cmd, sizeof(cmd), "\"%s\" --bo\\gus", demo);
  RUN(&r, "--stdio", cmd, "ping");
  ASSERT_EXIT(&r, 3);
  assert_one_reason(&r);
  run_free(&r);
}
END_TEST

/* ---- the manager: public names, servers, discovery, imports ------------ */

START_TEST(test_cli_call_public_name) {
  struct run r;
  RUN(&r, "tools");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "mcp__demo_echo") && strstr(r.out, "NAME"), "%s", r.out);
  run_free(&r);

  RUN(&r, "-q", "call", "mcp__demo_echo", "{\"text\":\"public\"}");
  ASSERT_EXIT(&r, 0);
  json_object *res = parse_out(&r);
  ck_assert_str_eq(jstr(res, "content.0.text"), "public");
  json_object_put(res);
  run_free(&r);

  RUN(&r, "-q", "call", "mcp__demo_nosuch");
  ASSERT_EXIT(&r, 2);
  assert_one_reason(&r);
  run_free(&r);

  /* SERVER/ naming an unknown tool lists the server's tools. */
  RUN(&r, "-q", "call", "demo/nosuch");
  ASSERT_EXIT(&r, 2);
  assert_one_reason(&r);
  ck_assert_msg(strstr(r.err, "echo") && strstr(r.err, "nosuch"), "%s", r.err);
  run_free(&r);
}
END_TEST

/* The server |name| of `servers --json` run with |argv|: "era protocolVersion"
 * or "state lastError" when it is not ready; a new string. */
static char *era_of(const char *const *argv, const char *name) {
  struct run r;
  run_cli(&r, argv);
  ASSERT_EXIT(&r, 0);
  json_object *a = parse_out(&r);
  char *out = NULL;
  for (size_t i = 0; i < json_object_array_length(a); i++) {
    json_object *s = json_object_array_get_idx(a, i);
    if (strcmp(jstr(s, "name"), name) != 0) continue;
    const char *era = jstr(s, "era"), *v = jstr(s, "protocolVersion");
    const char *state = jstr(s, "state"), *e = jstr(s, "lastError");
    ck_assert_int_ge(asprintf(&out, "%s %s", era ? era : state, era ? v : e ? e : "-"), 0);
  }
  json_object_put(a);
  run_free(&r);
  ck_assert_msg(out, "no server %s", name);
  return out;
}

#define ASSERT_ERA(want, name, ...) \
  do { \
    const char *argv_[] = {__VA_ARGS__, NULL}; \
    char *got_ = era_of(argv_, name); \
    ck_assert_msg(strstr(got_, want), "%s: %s, want %s", name, got_, want); \
    free(got_); \
  } while (0)

/* --protocol and the "protocol" field: what each server ends in. */
START_TEST(test_cli_protocol) {
  const char *demo = test_env_path("MCP_DEMO_SERVER");
  char legacy_demo[4200];
  snprintf(legacy_demo, sizeof(legacy_demo), "'%s' --protocol legacy", demo);
  /* The bundled demo server speaks both eras: auto ends modern. */
  ASSERT_ERA("modern 2026-07-28", "demo", "servers", "--json");
  ASSERT_ERA("legacy 2025-11-25", "demo", "--protocol", "legacy", "servers", "--json");
  ASSERT_ERA("legacy 2025-06-18", "demo", "--protocol", "2025-06-18", "servers", "--json");
  ASSERT_ERA("legacy 2025-11-25", "old", "--stdio", legacy_demo, "--name", "old", "servers",
             "--json");
  /* Mode modern against a legacy server: an error naming the revision. */
  ASSERT_ERA("does not speak MCP 2026-07-28", "old", "--protocol", "modern", "--stdio", legacy_demo,
             "--name", "old", "servers", "--json");

  /* Config entries: the field wins; --protocol is the default of the rest. */
  char text[8192];
  snprintf(text, sizeof(text),
           "{\"mcpServers\": {\n"
           "  \"plain\": {\"command\": \"%s\"},\n"
           "  \"pinned\": {\"command\": \"%s\", \"protocol\": \"legacy\"},\n"
           "  \"new\": {\"command\": \"%s\", \"protocol\": \"modern\"}}}\n",
           demo, demo, demo);
  char *cfg = write_temp("protocol.json", text);
  ASSERT_ERA("modern 2026-07-28", "plain", "--config", cfg, "servers", "--json");
  ASSERT_ERA("legacy 2025-11-25", "pinned", "--config", cfg, "servers", "--json");
  ASSERT_ERA("legacy 2025-06-18", "plain", "--protocol", "2025-06-18", "--config", cfg, "servers",
             "--json");
  ASSERT_ERA("legacy 2025-11-25", "pinned", "--protocol", "modern", "--config", cfg, "servers",
             "--json");
  ASSERT_ERA("modern 2026-07-28", "new", "--protocol", "legacy", "--config", cfg, "servers",
             "--json");
  unlink(cfg);
  free(cfg);

  /* Bad values: a usage error, and a config error naming file, server and
   * field. */
  struct run r;
  RUN(&r, "--protocol", "latest", "servers");
  ASSERT_EXIT(&r, 2);
  assert_one_reason(&r);
  ck_assert_msg(strstr(r.err, "--protocol") && strstr(r.err, "'latest'"), "%s", r.err);
  run_free(&r);
  char *bad = write_temp("badproto.json", "{\"mcpServers\": {\"x\": {\"command\": \"true\", "
                                          "\"protocol\": \"2024-11-05\"}}}");
  RUN(&r, "--config", bad, "servers");
  ASSERT_EXIT(&r, 2);
  assert_one_reason(&r);
  ck_assert_msg(strstr(r.err, bad) && strstr(r.err, "server \"x\"") &&
                    strstr(r.err, "field \"protocol\" must be"),
                "%s", r.err);
  run_free(&r);
  unlink(bad);
  free(bad);
}
END_TEST

/* A config with a good, a failing (unknown command) and a disabled server. */
static char *write_status_config(void) {
  char text[8192];
  snprintf(text, sizeof(text),
           "{\"mcpServers\": {\n"
           "  \"good\": {\"command\": \"%s\"},\n"
           "  \"bad\": {\"command\": \"/nonexistent/mcpconn-no-such-server\"},\n"
           "  \"off\": {\"command\": \"%s\", \"enabled\": false}}}\n",
           test_env_path("MCP_DEMO_SERVER"), test_env_path("MCP_DEMO_SERVER"));
  return write_temp("status.json", text);
}

/* The line of the table whose first column is |name|; a new string. */
static char *table_line(const char *out, const char *name) {
  size_t n = strlen(name);
  for (const char *p = out; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
    if (strncmp(p, name, n) == 0 && p[n] == ' ') return strndup(p, strcspn(p, "\n"));
  return NULL;
}

START_TEST(test_cli_servers) {
  char *cfg = write_status_config();
  struct run r;
  RUN(&r, "--config", cfg, "servers");
  ASSERT_EXIT(&r, 0); /* a report: failed servers are no error */
  ck_assert_msg(strncmp(r.out, "NAME", 4) == 0, "%s", r.out);
  char *good = table_line(r.out, "good"), *bad = table_line(r.out, "bad");
  char *off = table_line(r.out, "off");
  ck_assert_msg(good && strstr(good, "stdio") && strstr(good, "ready") && strstr(good, " 4"), "%s",
                r.out);
  /* The era and the revision negotiated; none for a server never reached. */
  ck_assert_msg(strstr(r.out, "PROTOCOL") && strstr(good, "  modern 2026-07-28  "), "%s", r.out);
  ck_assert_msg(bad && strstr(bad, "failed") && strstr(bad, "mcpconn-no-such-server"), "%s", r.out);
  ck_assert_msg(off && strstr(off, "disabled"), "%s", r.out);
  free(good);
  free(bad);
  free(off);
  ck_assert_str_eq(r.err, "");
  run_free(&r);

  RUN(&r, "--config", cfg, "servers", "--json");
  ASSERT_EXIT(&r, 0);
  json_object *a = parse_out(&r);
  ck_assert_int_eq(json_object_array_length(a), 3);
  int seen = 0;
  for (size_t i = 0; i < 3; i++) {
    json_object *s = json_object_array_get_idx(a, i);
    const char *name = jstr(s, "name"), *state = jstr(s, "state");
    ck_assert_ptr_nonnull(name);
    ck_assert_ptr_nonnull(state);
    if (strcmp(name, "good") == 0) {
      ck_assert_str_eq(state, "ready");
      ck_assert_int_eq(jint(s, "tools", -1), 4);
      ck_assert_str_eq(jstr(s, "type"), "stdio");
      ck_assert_str_eq(jstr(s, "protocolVersion"), "2026-07-28");
      ck_assert_str_eq(jstr(s, "era"), "modern");
      seen |= 1;
    } else if (strcmp(name, "bad") == 0) {
      ck_assert_str_eq(state, "failed");
      ck_assert_ptr_nonnull(jstr(s, "lastError"));
      ck_assert_ptr_null(jstr(s, "era"));
      ck_assert_ptr_null(jstr(s, "protocolVersion"));
      seen |= 2;
    } else if (strcmp(name, "off") == 0) {
      ck_assert_str_eq(state, "disabled");
      seen |= 4;
    }
  }
  ck_assert_int_eq(seen, 7);
  json_object_put(a);
  run_free(&r);

  /* --check: exit 3 while an enabled server is not ready. */
  RUN(&r, "--config", cfg, "servers", "--check");
  ASSERT_EXIT(&r, 3);
  assert_one_reason(&r);
  ck_assert_msg(strstr(r.err, "bad") && !strstr(r.err, "off"), "%s", r.err);
  run_free(&r);
  RUN(&r, "--config", cfg, "--server", "good", "servers", "--check");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "good") && !strstr(r.out, "bad"), "%s", r.out);
  run_free(&r);

  /* tools lists what is up and names what is not (exit 3); a call to the
   * good server works. */
  RUN(&r, "--config", cfg, "tools");
  ASSERT_EXIT(&r, 3);
  assert_one_reason(&r);
  ck_assert_msg(strstr(r.out, "mcp__good_echo"), "%s", r.out);
  ck_assert_msg(strstr(r.err, "bad:"), "%s", r.err);
  run_free(&r);
  RUN(&r, "--config", cfg, "call", "mcp__good_add", "{\"a\":1,\"b\":2}");
  ASSERT_EXIT(&r, 0);
  run_free(&r);

  RUN(&r, "servers", "--bogus");
  ASSERT_EXIT(&r, 2);
  run_free(&r);
  free(cfg);
}
END_TEST

/* The project's .mcp.json and the user's file, and the switches. */
START_TEST(test_cli_discovery) {
  const char *demo = test_env_path("MCP_DEMO_SERVER");
  char text[8192];
  snprintf(text, sizeof(text), "{\"mcpServers\": {\"proj\": {\"command\": \"%s\"}}}", demo);
  free(write_file(text, "%s/.mcp.json", g_work));
  /* A subdirectory finds it too (the search goes upwards). */
  make_dir("%s/sub", g_work);
  char sub[1200];
  snprintf(sub, sizeof(sub), "%s/sub", g_work);

  struct run r;
  /* A project file is used only with a decision (tests/check_trust.c and
   * test_cli_trust have the details); these runs give --trust-project. */
  RUN(&r, "--trust-project", "tools");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "mcp__proj_echo"), "%s", r.out);
  ck_assert_msg(!strstr(r.out, "demo"), "%s", r.out);
  ck_assert_str_eq(r.err, ""); /* no demo-server notice */
  run_free(&r);

  g_child_cwd = sub;
  RUN(&r, "--trust-project", "call", "proj/echo", "{\"text\":\"from sub\"}");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "from sub"), "%s", r.out);
  run_free(&r);
  g_child_cwd = g_work;

  /* --no-project-config ignores it: nothing is left, so the demo server. */
  RUN(&r, "--no-project-config", "tools");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "mcp__demo_echo") && !strstr(r.out, "proj"), "%s", r.out);
  ck_assert_msg(strstr(r.err, "bundled demo server"), "%s", r.err);
  run_free(&r);

  /* An explicit server turns discovery off. */
  RUN(&r, "--stdio", demo, "--name", "adhoc", "tools");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "mcp__adhoc_echo") && !strstr(r.out, "proj"), "%s", r.out);
  run_free(&r);

  /* The user file joins; --no-user-config drops it. */
  snprintf(text, sizeof(text), "{\"mcpServers\": {\"mine\": {\"command\": \"%s\"}}}", demo);
  free(write_file(text, "%s/.config/mcpconn/mcp.json", g_home));
  RUN(&r, "--trust-project", "servers");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "proj") && strstr(r.out, "mine"), "%s", r.out);
  run_free(&r);
  RUN(&r, "--trust-project", "--no-user-config", "servers", "--json");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "proj") && !strstr(r.out, "mine"), "%s", r.out);
  run_free(&r);

  /* Two servers now have "echo": a bare name is ambiguous. */
  RUN(&r, "--trust-project", "-q", "call", "echo", "{\"text\":\"x\"}");
  ASSERT_EXIT(&r, 2);
  assert_one_reason(&r);
  ck_assert_msg(strstr(r.err, "mine/echo") && strstr(r.err, "proj/echo"), "%s", r.err);
  run_free(&r);

  /* A broken discovered file is a warning, not an error. */
  free(write_file("{\"mcpServers\": {\"x\": {\"comand\": 1}}}", "%s/.mcp.json", g_work));
  RUN(&r, "--trust-project", "ping");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "mine: ok"), "%s", r.out);
  ck_assert_msg(strstr(r.err, "warning") && strstr(r.err, ".mcp.json"), "%s", r.err);
  run_free(&r);
  RUN(&r, "--trust-project", "-q", "ping");
  ASSERT_EXIT(&r, 0);
  ck_assert_str_eq(r.err, "");
  run_free(&r);
}
END_TEST

/*
 * A checkout's .mcp.json runs nothing without a decision: without a
 * terminal and without --trust-project, one line names the file and how
 * to trust it; `mcpconn trust` remembers it; a changed file is untrusted
 * again.
 */
START_TEST(test_cli_trust) {
  const char *demo = test_env_path("MCP_DEMO_SERVER");
  char text[8192], marker[1200], secret[1200];
  snprintf(marker, sizeof(marker), "%s/spawned", g_dir);
  snprintf(secret, sizeof(secret), "%s/secret-ran", g_dir);
  snprintf(text, sizeof(text),
           "{\"mcpServers\": {\"proj\": {\"command\": \"%s\"}, "
           "\"evil\": {\"command\": \"/bin/sh\", \"args\": [\"-c\", \"touch %s\"], "
           "\"env\": {\"T\": \"!touch %s\"}}}}",
           demo, marker, secret);
  char *path = write_file(text, "%s/.mcp.json", g_work);

  struct run r;
  RUN(&r, "tools");
  ASSERT_EXIT(&r, 2);
  ck_assert_msg(strstr(r.err, "/.mcp.json: project servers not used") &&
                    strstr(r.err, "mcpconn trust") && strstr(r.err, "--trust-project"),
                "%s", r.err);
  ck_assert_msg(!strstr(r.out, "demo"), "%s", r.out); /* not the demo server */
  run_free(&r);
  RUN(&r, "servers");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(!strstr(r.out, "proj"), "%s", r.out);
  run_free(&r);
  RUN(&r, "-q", "servers");
  ASSERT_EXIT(&r, 0);
  ck_assert_str_eq(r.err, "");
  run_free(&r);
  struct stat st;
  ck_assert_msg(stat(marker, &st) != 0, "an untrusted server was started");
  ck_assert_msg(stat(secret, &st) != 0, "an untrusted secret command ran");
  /* --no-project-config still works, and leaves the demo server. */
  RUN(&r, "--no-project-config", "tools");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "mcp__demo_echo"), "%s", r.out);
  run_free(&r);

  /* `mcpconn trust` shows what it approves, and runs none of it. */
  RUN(&r, "trust");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "trusted ") && strstr(r.out, "/.mcp.json") &&
                    strstr(r.out, "evil: runs /bin/sh -c touch") &&
                    strstr(r.out, "runs for a secret: touch"),
                "%s", r.out);
  run_free(&r);
  ck_assert(stat(marker, &st) != 0 && stat(secret, &st) != 0);
  char store[1200];
  snprintf(store, sizeof(store), "%s/.config/mcpconn/trusted-projects.json", g_home);
  ck_assert_int_eq(stat(store, &st), 0);
  ck_assert_int_eq(st.st_mode & 0777, 0600);
  RUN(&r, "trust");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.err, "no untrusted project file"), "%s", r.err);
  run_free(&r);

  /* Remembered: used without a flag. */
  RUN(&r, "-s", "proj", "call", "proj/echo", "{\"text\":\"trusted\"}");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "trusted"), "%s", r.out);
  run_free(&r);

  /* A changed file asks again; --trust-project trusts it for one run. */
  free(path);
  snprintf(text, sizeof(text), "{\"mcpServers\": {\"proj\": {\"command\": \"%s\"}}}", demo);
  path = write_file(text, "%s/.mcp.json", g_work);
  RUN(&r, "tools");
  ASSERT_EXIT(&r, 2);
  ck_assert_msg(strstr(r.err, "project servers not used"), "%s", r.err);
  run_free(&r);
  RUN(&r, "--trust-project", "tools");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "mcp__proj_echo"), "%s", r.out);
  run_free(&r);
  RUN(&r, "tools");
  ASSERT_EXIT(&r, 2);
  run_free(&r);
  RUN(&r, "--no-project-config", "trust");
  ASSERT_EXIT(&r, 2);
  run_free(&r);
  free(path);
}
END_TEST

/*
 * Runs mcpconn with stdin and stderr on a pseudo-terminal (stdout on a
 * pipe) and answers |answer| once the trust prompt has appeared.  *prompt
 * gets what the terminal showed.
 */
static void run_cli_prompt(struct run *r, const char *const *args, const char *answer) {
  int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  ck_assert_int_ge(master, 0);
  ck_assert_int_eq(grantpt(master), 0);
  ck_assert_int_eq(unlockpt(master), 0);
  char slave_name[256];
  ck_assert_int_eq(ptsname_r(master, slave_name, sizeof(slave_name)), 0);
  int out[2];
  ck_assert_int_eq(pipe2(out, O_CLOEXEC), 0);
  char *argv[64];
  size_t n = 0;
  argv[n++] = (char *)test_env_path("MCPCONN_BIN");
  for (size_t i = 0; args[i] && n < 63; i++) argv[n++] = (char *)args[i];
  argv[n] = NULL;
  setenv("MCPCONN_DEMO_SERVER", test_env_path("MCP_DEMO_SERVER"), 1);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    int slave = open(slave_name, O_RDWR | O_NOCTTY);
    if (slave < 0) _exit(126);
    dup2(slave, 0);
    dup2(out[1], 1);
    dup2(slave, 2);
    close(slave);
    if (g_child_cwd && chdir(g_child_cwd) != 0) _exit(126);
    execv(argv[0], argv);
    _exit(127);
  }
  close(out[1]);
  size_t cap[2] = {4096, 4096}, len[2] = {0, 0};
  char *buf[2] = {malloc(cap[0]), malloc(cap[1])};
  buf[0][0] = buf[1][0] = '\0';
  int fds[2] = {out[0], master};
  bool answered = false, exited = false;
  int status = 0;
  long long end = test_now_ms() + 60000;
  while ((fds[0] >= 0 || fds[1] >= 0) && test_now_ms() < end) {
    struct pollfd pfd[2] = {{fds[0], POLLIN, 0}, {fds[1], POLLIN, 0}};
    if (poll(pfd, 2, 100) < 0 && errno != EINTR) break;
    if (!exited) exited = waitpid(pid, &status, WNOHANG) == pid;
    for (int i = 0; i < 2; i++) {
      if (fds[i] < 0) continue;
      if (!(pfd[i].revents & (POLLIN | POLLHUP | POLLERR))) {
        if (i == 1 && exited) fds[i] = -1; /* the terminal has no EOF */
        continue;
      }
      if (cap[i] - len[i] < 1024) buf[i] = realloc(buf[i], cap[i] *= 2);
      ssize_t k = read(fds[i], buf[i] + len[i], cap[i] - len[i] - 1);
      if (k > 0) {
        len[i] += (size_t)k;
        buf[i][len[i]] = '\0';
      } else if (k == 0 || errno != EINTR) {
        fds[i] = -1;
      }
    }
    if (!answered && strstr(buf[1], "N: no > ")) {
      char line[64];
      snprintf(line, sizeof(line), "%s\n", answer);
      ck_assert_int_eq(write(master, line, strlen(line)), (ssize_t)strlen(line));
      answered = true;
    }
  }
  if (!exited) {
    bool done = WAIT_UNTIL(waitpid(pid, &status, WNOHANG) == pid, 10000);
    if (!done) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      ck_abort_msg("mcpconn did not exit; terminal: %s", buf[1]);
    }
  }
  close(master);
  close(out[0]);
  r->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r->out = buf[0];
  r->err = buf[1];
}

/* At a terminal the user is asked, with the file's commands shown safely:
 * no = left out, y = this run, a = remembered. */
START_TEST(test_cli_trust_prompt) {
  const char *demo = test_env_path("MCP_DEMO_SERVER");
  char text[8192];
  /* A name may not carry escapes, but a command may: it is shown
   * escaped, not sent to the terminal. */
  snprintf(text, sizeof(text),
           "{\"mcpServers\": {\"proj\": {\"command\": \"%s\", \"env\": "
           "{\"X\": \"!echo ok # \\u001b]0;pwned\\u0007\\u202eabc\"}}}}",
           demo);
  free(write_file(text, "%s/.mcp.json", g_work));
  const char *const args[] = {"tools", NULL};
  struct run r;
  run_cli_prompt(&r, args, "n");
  ASSERT_EXIT(&r, 2);
  ck_assert_msg(strstr(r.err, "/.mcp.json is a project file") && strstr(r.err, "proj: runs ") &&
                    strstr(r.err, demo),
                "%s", r.err);
  ck_assert_msg(strstr(r.err, "\\x1b]0;pwned\\x07\\u202eabc"), "%s", r.err);
  ck_assert_msg(!strchr(r.err, '\033') && !strchr(r.err, '\007'), "raw escape shown");
  ck_assert_msg(!strstr(r.err, "\xe2\x80\xae"), "raw bidi override shown");
  ck_assert_msg(!strstr(r.out, "mcp__proj_echo"), "%s", r.out);
  run_free(&r);

  run_cli_prompt(&r, args, "y");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "mcp__proj_echo"), "%s", r.out);
  run_free(&r);
  /* "y" was for that run only. */
  RUN(&r, "tools");
  ASSERT_EXIT(&r, 2);
  run_free(&r);

  run_cli_prompt(&r, args, "a");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "mcp__proj_echo"), "%s", r.out);
  run_free(&r);
  /* Remembered: no prompt, no pipe complaint. */
  RUN(&r, "tools");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "mcp__proj_echo"), "%s", r.out);
  ck_assert_str_eq(r.err, "");
  run_free(&r);
}
END_TEST

START_TEST(test_cli_import) {
  struct run r;
  RUN(&r, "--import", "cursor,bogus", "tools");
  ASSERT_EXIT(&r, 2);
  assert_one_reason(&r);
  ck_assert_msg(strstr(r.err, "bogus"), "%s", r.err);
  run_free(&r);
  RUN(&r, "--import", "", "tools");
  ASSERT_EXIT(&r, 2);
  run_free(&r);
  RUN(&r, "--import", "cursor,", "tools");
  ASSERT_EXIT(&r, 2);
  run_free(&r);

  const char *demo = test_env_path("MCP_DEMO_SERVER");
  char text[8192];
  snprintf(text, sizeof(text), "{\"mcpServers\": {\"cur\": {\"command\": \"%s\"}}}", demo);
  free(write_file(text, "%s/.cursor/mcp.json", g_home));
  snprintf(text, sizeof(text), "{\"servers\": {\"vsc\": {\"command\": \"%s\"}}}", demo);
  free(write_file(text, "%s/.vscode/mcp.json", g_work));

  /* Without --import, other clients' files are not read. */
  RUN(&r, "-q", "servers");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "demo") && !strstr(r.out, "cur"), "%s", r.out);
  run_free(&r);

  RUN(&r, "--import", "cursor", "servers");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "cur") && !strstr(r.out, "vsc"), "%s", r.out);
  run_free(&r);
  /* .vscode/mcp.json is a project file: used only with a decision. */
  RUN(&r, "--import", "Cursor,vscode", "servers");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "cur") && !strstr(r.out, "vsc"), "%s", r.out);
  ck_assert_msg(strstr(r.err, ".vscode/mcp.json: project servers not used"), "%s", r.err);
  run_free(&r);
  RUN(&r, "--trust-project", "--import", "Cursor,vscode", "servers");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "cur") && strstr(r.out, "vsc"), "%s", r.out);
  run_free(&r);
  RUN(&r, "--trust-project", "--import", "all", "call", "mcp__vsc_echo", "{\"text\":\"v\"}");
  ASSERT_EXIT(&r, 0);
  run_free(&r);
  /* Project-level files (.vscode) go with --no-project-config, and user
   * ones (~/.cursor) with --no-user-config. */
  RUN(&r, "--import", "all", "--no-project-config", "servers");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "cur") && !strstr(r.out, "vsc"), "%s", r.out);
  run_free(&r);
  RUN(&r, "--trust-project", "--import", "all", "--no-user-config", "servers");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(!strstr(r.out, "cur") && strstr(r.out, "vsc"), "%s", r.out);
  run_free(&r);
  /* --import turns discovery on next to --config as well. */
  char *cfg = write_two_server_config();
  RUN(&r, "--config", cfg, "--import", "cursor", "servers");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "\na ") && strstr(r.out, "cur"), "%s", r.out);
  run_free(&r);
  RUN(&r, "--config", cfg, "servers");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(!strstr(r.out, "cur"), "%s", r.out);
  run_free(&r);
  free(cfg);
}
END_TEST

/*
 * Deferred tools: a server whose start waits on a FIFO (`cat FIFO` before
 * exec; `timeout` ends it should the test fail before letting it go) is
 * slow exactly as long as the test wants.  A first run with --wait
 * lets it through and fills the cache; later runs with --no-wait print at
 * the startup gate, the slow server's tools coming from the cache.
 */
static bool fifo_release(const char *fifo) {
  int fd = open(fifo, O_WRONLY | O_NONBLOCK);
  if (fd < 0) return false; /* no reader yet (ENXIO) */
  close(fd);
  return true;
}

/* Lets every server waiting on |fifo| go, and waits until all of them
 * have passed it, so that the next run's server is the only reader. */
static void fifo_drain(const char *fifo) {
  ck_assert_msg(WAIT_UNTIL(fifo_release(fifo), 20000), "no server waits on the FIFO");
  ck_assert_msg(WAIT_UNTIL(!fifo_release(fifo), 20000), "a server stays on the FIFO");
}

/* run_cli_ex() hook: lets the run's server through (no other may wait). */
static void release_when_read(pid_t pid, void *user) {
  (void)pid;
  ck_assert_msg(WAIT_UNTIL(fifo_release(user), 20000), "the slow server never opened its FIFO");
}

START_TEST(test_cli_deferred) {
  char fifo[1200];
  snprintf(fifo, sizeof(fifo), "%s/gate", g_dir);
  ck_assert_int_eq(mkfifo(fifo, 0600), 0);
  char text[8192];
  snprintf(
      text, sizeof(text),
      "{\"mcpServers\": {\"slow\": {\"command\": \"/bin/sh\", \"args\": "
      "[\"-c\", \"timeout 60 cat \\\"$0\\\" >/dev/null && exec \\\"$1\\\"\", \"%s\", \"%s\"]}}}",
      fifo, test_env_path("MCP_DEMO_SERVER"));
  char *cfg = write_temp("slow.json", text);

  struct run r;
  const char *warm[] = {"--config", cfg, "tools", "--wait", NULL};
  run_cli_ex(&r, warm, release_when_read, fifo);
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "mcp__slow_echo") && !strstr(r.out, "deferred"), "%s", r.out);
  run_free(&r);

  RUN(&r, "--config", cfg, "tools", "--no-wait");
  ASSERT_EXIT(&r, 0);
  char *line = table_line(r.out, "slow");
  ck_assert_msg(line && strstr(line, "(deferred)"), "%s", r.out);
  free(line);
  ck_assert_msg(strstr(r.err, "slow: still connecting"), "%s", r.err);
  run_free(&r);
  fifo_drain(fifo); /* let that one go */

  RUN(&r, "-q", "--config", cfg, "tools", "--json", "--no-wait");
  ASSERT_EXIT(&r, 0);
  ck_assert_str_eq(r.err, "");
  json_object *a = parse_out(&r);
  ck_assert_int_eq(json_object_array_length(a), 4);
  for (size_t i = 0; i < 4; i++) ck_assert(jtrue(json_object_array_get_idx(a, i), "deferred"));
  json_object_put(a);
  run_free(&r);
  fifo_drain(fifo);

  /* servers shows the state without waiting, too. */
  RUN(&r, "--config", cfg, "servers", "--no-wait");
  ASSERT_EXIT(&r, 0);
  line = table_line(r.out, "slow");
  ck_assert_msg(line && strstr(line, "deferred"), "%s", r.out);
  free(line);
  run_free(&r);
  fifo_drain(fifo);
  free(cfg);
}
END_TEST

/*
 * Runs mcpconn with |args| and its stdout on a pseudo-terminal (stderr on a
 * pipe), the way a person at a terminal runs it.  Captures like run_cli();
 * the terminal turns "\n" into "\r\n".
 */
/* The terminal's size for run_cli_tty(), in columns (0: the pty's own, 0x0). */
static unsigned short g_tty_cols;
/* run_cli_tty() puts stderr on the terminal too (else on a pipe). */
static bool g_tty_stderr;
/* run_cli_tty() lets the server waiting on this FIFO go (NULL: none), once
 * the output holds g_tty_release_after (NULL: at once). */
static const char *g_tty_release_fifo;
static const char *g_tty_release_after;

static void run_cli_tty(struct run *r, const char *const *args) {
  int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  ck_assert_int_ge(master, 0);
  ck_assert_int_eq(grantpt(master), 0);
  ck_assert_int_eq(unlockpt(master), 0);
  if (g_tty_cols) {
    struct winsize ws = {.ws_row = 24, .ws_col = g_tty_cols};
    ck_assert_int_eq(ioctl(master, TIOCSWINSZ, &ws), 0);
  }
  char slave_name[256];
  ck_assert_int_eq(ptsname_r(master, slave_name, sizeof(slave_name)), 0);
  int err[2];
  ck_assert_int_eq(pipe2(err, O_CLOEXEC), 0);
  char *argv[64];
  size_t n = 0;
  argv[n++] = (char *)test_env_path("MCPCONN_BIN");
  for (size_t i = 0; args[i] && n < 63; i++) argv[n++] = (char *)args[i];
  argv[n] = NULL;
  setenv("MCPCONN_DEMO_SERVER", test_env_path("MCP_DEMO_SERVER"), 1);
  long long t0 = test_now_ms();
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    int slave = open(slave_name, O_RDWR | O_NOCTTY);
    int null = open("/dev/null", O_RDONLY);
    if (slave < 0 || null < 0) _exit(126);
    dup2(null, 0);
    dup2(slave, 1);
    dup2(g_tty_stderr ? slave : err[1], 2);
    close(slave);
    close(null);
    if (g_child_cwd && chdir(g_child_cwd) != 0) _exit(126);
    execv(argv[0], argv);
    _exit(127);
  }
  close(err[1]);
  size_t cap[2] = {4096, 4096}, len[2] = {0, 0};
  char *buf[2] = {malloc(cap[0]), malloc(cap[1])};
  int fds[2] = {master, err[0]};
  int open_fds = 2;
  int status = 0;
  bool exited = false, released = false;
  buf[0][0] = buf[1][0] = '\0';
  long long end = t0 + 60000;
  /* The terminal gives EIO, not EOF, once no process holds its slave
   * side; until the child has exited, it may not have opened it yet. */
  while (open_fds && test_now_ms() < end) {
    struct pollfd pfd[2] = {{fds[0], POLLIN, 0}, {fds[1], POLLIN, 0}};
    int rc = poll(pfd, 2, 100);
    if (rc < 0 && errno != EINTR) break;
    if (!exited) exited = waitpid(pid, &status, WNOHANG) == pid;
    for (int i = 0; i < 2; i++) {
      if (fds[i] < 0) continue;
      if (!(pfd[i].revents & (POLLIN | POLLHUP | POLLERR))) {
        if (i == 0 && exited && !(pfd[i].revents & POLLIN)) {
          fds[i] = -1; /* exited and nothing left to read */
          open_fds--;
        }
        continue;
      }
      if (cap[i] - len[i] < 1024) buf[i] = realloc(buf[i], cap[i] *= 2);
      ssize_t k = read(fds[i], buf[i] + len[i], cap[i] - len[i] - 1);
      if (k > 0) {
        len[i] += (size_t)k;
        buf[i][len[i]] = '\0';
      } else if (k == 0 || errno != EINTR) {
        fds[i] = -1;
        open_fds--;
      }
    }
    if (g_tty_release_fifo && !released &&
        (!g_tty_release_after || strstr(buf[0], g_tty_release_after) ||
         strstr(buf[1], g_tty_release_after)))
      released = fifo_release(g_tty_release_fifo);
  }
  buf[0][len[0]] = '\0';
  buf[1][len[1]] = '\0';
  if (!exited) {
    bool done = WAIT_UNTIL(waitpid(pid, &status, WNOHANG) == pid, 10000);
    if (!done) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      ck_abort_msg("mcpconn did not exit");
    }
  }
  close(master);
  close(err[0]);
  r->ms = test_now_ms() - t0;
  r->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r->out = buf[0];
  r->err = buf[1];
}

/*
 * At a terminal, tools and servers wait for every server, like scripts do,
 * and print the complete table; --no-wait prints once the startup gate has
 * passed, a server still starting (held on a FIFO) named on stderr.
 */
START_TEST(test_cli_tty_default) {
  char fifo[1200];
  snprintf(fifo, sizeof(fifo), "%s/gate", g_dir);
  ck_assert_int_eq(mkfifo(fifo, 0600), 0);
  const char *demo = test_env_path("MCP_DEMO_SERVER");
  char text[8192];
  snprintf(
      text, sizeof(text),
      "{\"mcpServers\": {\"fast\": {\"command\": \"%s\"},\n"
      " \"slow\": {\"command\": \"/bin/sh\", \"args\": "
      "[\"-c\", \"timeout 60 cat \\\"$0\\\" >/dev/null && exec \\\"$1\\\"\", \"%s\", \"%s\"]}}}",
      demo, fifo, demo);
  char *cfg = write_temp("tty.json", text);

  struct run r;
  const char *tools[] = {"--config", cfg, "tools", NULL};
  g_tty_release_fifo = fifo;
  run_cli_tty(&r, tools);
  g_tty_release_fifo = NULL;
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "mcp__fast_echo") && strstr(r.out, "mcp__slow_echo") &&
                    !strstr(r.out, "deferred"),
                "%s", r.out);
  /* stderr is no terminal here: no live line. */
  ck_assert_str_eq(r.err, "");
  run_free(&r);

  const char *tools_now[] = {"--config", cfg, "tools", "--no-wait", NULL};
  run_cli_tty(&r, tools_now);
  ASSERT_EXIT(&r, 0);
  /* slow's tools come from the cache the first run filled: deferred. */
  ck_assert_msg(strstr(r.out, "mcp__fast_echo"), "%s", r.out);
  char *slow = table_line(r.out, "slow");
  ck_assert_msg(slow && strstr(slow, "(deferred)"), "%s", r.out);
  free(slow);
  ck_assert_msg(strstr(r.err, "slow: still connecting"), "%s", r.err);
  ck_assert_msg(r.ms < 15000, "took %lld ms", r.ms);
  run_free(&r);
  fifo_drain(fifo);

  const char *servers[] = {"--config", cfg, "servers", NULL};
  g_tty_release_fifo = fifo;
  run_cli_tty(&r, servers);
  g_tty_release_fifo = NULL;
  ASSERT_EXIT(&r, 0);
  char *line = table_line(r.out, "slow");
  ck_assert_msg(line && strstr(line, "ready"), "%s", r.out);
  free(line);
  run_free(&r);

  const char *servers_now[] = {"--config", cfg, "servers", "--no-wait", NULL};
  run_cli_tty(&r, servers_now);
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "fast") && strstr(r.out, "ready"), "%s", r.out);
  /* Still starting; its tools are cached, so "deferred". */
  line = table_line(r.out, "slow");
  ck_assert_msg(line && strstr(line, "deferred"), "%s", r.out);
  free(line);
  run_free(&r);
  fifo_drain(fifo);

  /* The default on a pipe waits for every server. */
  const char *piped[] = {"--config", cfg, "tools", NULL};
  run_cli_ex(&r, piped, release_when_read, fifo);
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "mcp__fast_echo") && strstr(r.out, "mcp__slow_echo"), "%s", r.out);
  ck_assert_str_eq(r.err, "");
  run_free(&r);
  free(cfg);
}
END_TEST

/*
 * With stderr on the terminal too, the wait shows a live line naming the
 * servers still connecting; it is erased before the table.  The slow
 * server is let go only once that line is on the screen.
 */
START_TEST(test_cli_tty_live) {
  char fifo[1200];
  snprintf(fifo, sizeof(fifo), "%s/gate", g_dir);
  ck_assert_int_eq(mkfifo(fifo, 0600), 0);
  const char *demo = test_env_path("MCP_DEMO_SERVER");
  char text[8192];
  snprintf(
      text, sizeof(text),
      "{\"mcpServers\": {\"fast\": {\"command\": \"%s\"},\n"
      " \"slow\": {\"command\": \"/bin/sh\", \"args\": "
      "[\"-c\", \"timeout 60 cat \\\"$0\\\" >/dev/null && exec \\\"$1\\\"\", \"%s\", \"%s\"]}}}",
      demo, fifo, demo);
  char *cfg = write_temp("live.json", text);

  struct run r;
  const char *tools[] = {"--config", cfg, "tools", NULL};
  g_tty_stderr = true;
  g_tty_release_fifo = fifo;
  g_tty_release_after = "mcpconn: waiting for slow (";
  run_cli_tty(&r, tools);
  ASSERT_EXIT(&r, 0);
  const char *live = strstr(r.out, "\rmcpconn: waiting for slow (");
  ck_assert_msg(live, "%s", r.out);
  /* Only slow is named: fast was ready at once. */
  ck_assert_msg(!strstr(r.out, "waiting for fast") && !strstr(r.out, "fast, slow"), "%s", r.out);
  /* Erased, then the whole table. */
  const char *table = strstr(live, "\r\033[KSERVER");
  ck_assert_msg(table, "%s", r.out);
  ck_assert_msg(strstr(table, "mcp__fast_echo") && strstr(table, "mcp__slow_echo") &&
                    !strstr(table, "waiting"),
                "%s", r.out);
  run_free(&r);

  /* -q: no live line. */
  const char *quiet[] = {"-q", "--config", cfg, "servers", NULL};
  g_tty_release_after = NULL;
  run_cli_tty(&r, quiet);
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(!strstr(r.out, "waiting"), "%s", r.out);
  char *line = table_line(r.out, "slow");
  ck_assert_msg(line && strstr(line, "ready"), "%s", r.out);
  free(line);
  run_free(&r);
  g_tty_stderr = false;
  g_tty_release_fifo = NULL;
  free(cfg);
}
END_TEST

START_TEST(test_cli_verbose) {
  struct run r;
  RUN(&r, "-q", "-v", "ping");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.err, "mcpconn: [") != NULL, "%s", r.err);
  /* Every record names its server as a field: "[level] [server] ...". */
  ck_assert_msg(strstr(r.err, "] [demo] ") != NULL, "%s", r.err);
  run_free(&r);
}
END_TEST

/* ---- HTTP ----------------------------------------------------------------- */

#define NODE_START_MS 60000

/* Starts tests/interop/sdk-server.mjs with |args| and writes the URL of
 * |path| on it into |url|. */
static void sdk_server_start(node_server *srv, const char *const *args, const char *scheme,
                             const char *path, char *url, size_t url_size) {
  const char *argv[16] = {interop_path("sdk-server.mjs")};
  size_t n = 1;
  for (size_t i = 0; args && args[i] && n < 15; i++) argv[n++] = args[i];
  argv[n] = NULL;
  node_server_start(srv, NULL, NODE_START_MS, argv);
  snprintf(url, url_size, "%s://127.0.0.1:%d%s", scheme, srv->port, path);
}

/* The text of content[0] of the result the run printed; a new string. */
static char *out_text(const struct run *r) {
  json_object *res = parse_out(r);
  const char *t = jstr(res, "content.0.text");
  char *s = t ? strdup(t) : NULL;
  json_object_put(res);
  ck_assert_msg(s != NULL, "no text in: %s", r->out);
  return s;
}

START_TEST(test_cli_url) {
  node_server srv;
  char url[256];
  sdk_server_start(&srv, NULL, "http", "/mcp", url, sizeof(url));
  struct run r;

  RUN(&r, "--url", url, "--name", "web", "tools");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "mcp__web_echo") && strstr(r.out, "web "), "%s", r.out);
  ck_assert_str_eq(r.err, "");
  run_free(&r);

  RUN(&r, "--url", url, "--name", "web", "-H", "X-Mcpconn-Test: 1", "--header",
      "Authorization: Bearer not-checked", "call", "echo", "{\"message\":\"over http\"}");
  ASSERT_EXIT(&r, 0);
  char *t = out_text(&r);
  ck_assert_str_eq(t, "Echo: over http");
  free(t);
  run_free(&r);

  RUN(&r, "--url", url, "--name", "web", "call", "mcp__web_add", "{\"a\":2,\"b\":40}");
  ASSERT_EXIT(&r, 0);
  t = out_text(&r);
  ck_assert_str_eq(t, "42");
  free(t);
  run_free(&r);

  /* Plain http is HTTP/1.1 (no h2c upgrade). */
  RUN(&r, "--url", url, "--name", "web", "call", "web/whoami");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "\\\"http\\\":\\\"1.1\\\""), "%s", r.out);
  run_free(&r);

  /* The default name is the host; the public name folds it. */
  RUN(&r, "--url", url, "ping");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strncmp(r.out, "127.0.0.1: ok", 13) == 0, "%s", r.out);
  run_free(&r);

  RUN(&r, "--url", url, "--name", "web", "servers", "--json");
  ASSERT_EXIT(&r, 0);
  json_object *a = parse_out(&r);
  ck_assert_str_eq(jstr(a, "0.type"), "http");
  ck_assert_str_eq(jstr(a, "0.state"), "ready");
  ck_assert_str_eq(jstr(a, "0.source"), "code");
  json_object_put(a);
  run_free(&r);

  /* With a stdio server next to it: one list, routed by name. */
  RUN(&r, "--url", url, "--name", "web", "--stdio", test_env_path("MCP_DEMO_SERVER"), "--name",
      "local", "tools", "--json");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "mcp__web_echo") && strstr(r.out, "mcp__local_echo"), "%s", r.out);
  run_free(&r);

  /* --h2c on a server that only speaks HTTP/1.1 fails as a connection. */
  RUN(&r, "--url", url, "--name", "web", "--h2c", "--timeout", "5000", "ping");
  ASSERT_EXIT(&r, 3);
  assert_one_reason(&r);
  ck_assert_msg(strncmp(r.err, "mcpconn: web:", 13) == 0, "%s", r.err);
  run_free(&r);
  node_server_stop(&srv);

  /* Nothing listens there any more. */
  RUN(&r, "--url", url, "--name", "gone", "--timeout", "5000", "tools");
  ASSERT_EXIT(&r, 3);
  assert_one_reason(&r);
  ck_assert_msg(strstr(r.err, "gone"), "%s", r.err);
  run_free(&r);
}
END_TEST

/* The legacy HTTP+SSE transport: with --sse, and by AUTO's fallback. */
START_TEST(test_cli_url_sse) {
  node_server srv;
  char url[256];
  const char *args[] = {"--legacy-sse", NULL};
  sdk_server_start(&srv, args, "http", "/sse", url, sizeof(url));
  struct run r;
  RUN(&r, "--url", url, "--sse", "--name", "old", "call", "mcp__old_echo",
      "{\"message\":\"legacy\"}");
  ASSERT_EXIT(&r, 0);
  char *t = out_text(&r);
  ck_assert_str_eq(t, "Echo: legacy");
  free(t);
  run_free(&r);

  RUN(&r, "--url", url, "--name", "auto", "call", "echo", "{\"message\":\"fb\"}");
  ASSERT_EXIT(&r, 0);
  t = out_text(&r);
  ck_assert_str_eq(t, "Echo: fb");
  free(t);
  run_free(&r);

  RUN(&r, "--url", url, "--name", "old", "--sse", "servers", "--json");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "\"ready\""), "%s", r.out);
  run_free(&r);
  node_server_stop(&srv);
}
END_TEST

/* https: ALPN picks h2; --http1.1 and --h2c; the CA options; --insecure. */
START_TEST(test_cli_url_tls) {
  char pki[1024];
  interop_mkdtemp(pki, sizeof(pki), "check_cli-pki");
  interop_make_certs(pki);
  char cert[1100], key[1100], ca[1100];
  snprintf(cert, sizeof(cert), "%s/server.pem", pki);
  snprintf(key, sizeof(key), "%s/server.key", pki);
  snprintf(ca, sizeof(ca), "%s/ca.pem", pki);
  node_server srv;
  char url[256];
  const char *args[] = {"--tls", cert, key, NULL};
  sdk_server_start(&srv, args, "https", "/mcp", url, sizeof(url));
  struct run r;

  /* The system store does not know the test CA. */
  RUN(&r, "--url", url, "--name", "tls", "--timeout", "10000", "ping");
  ASSERT_EXIT(&r, 3);
  assert_one_reason(&r);
  ck_assert_msg(strstr(r.err, "tls:") && strstr(r.err, "certificate"), "%s", r.err);
  run_free(&r);

  RUN(&r, "--url", url, "--name", "tls", "--cacert", ca, "call", "whoami");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "\\\"http\\\":\\\"2.0\\\""), "%s", r.out);
  run_free(&r);

  RUN(&r, "--http1.1", "--url", url, "--name", "tls", "--cacert", ca, "call", "whoami");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "\\\"http\\\":\\\"1.1\\\""), "%s", r.out);
  run_free(&r);

  RUN(&r, "--url", url, "--name", "tls", "--h2c", "--cacert", ca, "call", "whoami");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "\\\"http\\\":\\\"2.0\\\""), "%s", r.out);
  run_free(&r);

  /* Verification off is never silent: the library warns once per server,
   * and the CLI shows it even without -v (before: nothing). */
  RUN(&r, "--url", url, "--name", "tls", "--insecure", "call", "echo",
      "{\"message\":\"unverified\"}");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.err, "warning: tls: TLS certificate verification is off (insecure)"), "%s",
                r.err);
  ck_assert_ptr_null(strstr(strstr(r.err, "verification is off") + 1, "verification is off"));
  run_free(&r);

  /* The same through a config file's TLS fields. */
  char text[4096];
  snprintf(text, sizeof(text),
           "{\"mcpServers\": {\"cfg\": {\"type\": \"http\", \"url\": \"%s\","
           " \"caFile\": \"%s\", \"http2\": \"off\"}}}",
           url, ca);
  char *cfg = write_temp("tls.json", text);
  RUN(&r, "--config", cfg, "call", "mcp__cfg_whoami");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "\\\"http\\\":\\\"1.1\\\""), "%s", r.out);
  run_free(&r);
  free(cfg);
  node_server_stop(&srv);
  interop_rm_rf(pki);
}
END_TEST

/* An http entry in a config file, its headers expanded from the
 * environment, next to a stdio one: one tool list through the manager. */
START_TEST(test_cli_config_http) {
  node_server srv;
  char url[256];
  const char *args[] = {"--stateless", "--json", NULL};
  sdk_server_start(&srv, args, "http", "/mcp", url, sizeof(url));
  char text[8192];
  snprintf(text, sizeof(text),
           "{\"mcpServers\": {\n"
           "  \"web\": {\"type\": \"http\", \"url\": \"%s\",\n"
           "           \"headers\": {\"X-Mcpconn-Test\": \"${MCPCONN_T_TOKEN:-none}\"}},\n"
           "  \"local\": {\"command\": \"%s\"}}}\n",
           url, test_env_path("MCP_DEMO_SERVER"));
  char *cfg = write_temp("http.json", text);
  struct run r;
  RUN(&r, "--config", cfg, "tools", "--json");
  ASSERT_EXIT(&r, 0);
  json_object *a = parse_out(&r);
  bool web = false, local = false;
  for (size_t i = 0; i < json_object_array_length(a); i++) {
    json_object *t = json_object_array_get_idx(a, i);
    if (strcmp(jstr(t, "name"), "mcp__web_echo") == 0) {
      ck_assert_str_eq(jstr(t, "server"), "web");
      ck_assert_str_eq(jstr(t, "tool"), "echo");
      web = true;
    }
    if (strcmp(jstr(t, "name"), "mcp__local_echo") == 0) local = true;
  }
  ck_assert_msg(web && local, "%s", r.out);
  json_object_put(a);
  run_free(&r);

  RUN(&r, "--config", cfg, "call", "mcp__web_echo", "{\"message\":\"cfg\"}");
  ASSERT_EXIT(&r, 0);
  char *t = out_text(&r);
  ck_assert_str_eq(t, "Echo: cfg");
  free(t);
  run_free(&r);

  RUN(&r, "--config", cfg, "servers");
  ASSERT_EXIT(&r, 0);
  char *line = table_line(r.out, "web");
  ck_assert_msg(line && strstr(line, "http") && strstr(line, "ready"), "%s", r.out);
  free(line);
  run_free(&r);
  free(cfg);
  node_server_stop(&srv);
}
END_TEST

/*
 * --header reaches the server: a bare listener records the first request
 * head it gets and answers 500 (which the CLI reports, exit 3).
 */
struct capture {
  int fd;
  int port;
  pthread_t thread;
  pthread_mutex_t mu;
  char head[8192]; /* guarded by mu */
  bool got;        /* guarded by mu */
};

static void *capture_run(void *arg) {
  struct capture *c = arg;
  for (;;) {
    int conn = accept(c->fd, NULL, NULL);
    if (conn < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      break; /* the test shut the socket down */
    }
    char buf[8192];
    size_t len = 0;
    while (len < sizeof(buf) - 1) {
      struct pollfd p = {conn, POLLIN, 0};
      if (poll(&p, 1, 10000) <= 0) break;
      ssize_t n = read(conn, buf + len, sizeof(buf) - 1 - len);
      if (n <= 0) break;
      len += (size_t)n;
      buf[len] = '\0';
      if (strstr(buf, "\r\n\r\n")) break;
    }
    buf[len] = '\0';
    pthread_mutex_lock(&c->mu);
    if (!c->got) {
      memcpy(c->head, buf, len + 1);
      c->got = true;
    }
    pthread_mutex_unlock(&c->mu);
    static const char reply[] = "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n"
                                "Connection: close\r\n\r\n";
    ssize_t ignored = write(conn, reply, sizeof(reply) - 1);
    (void)ignored;
    close(conn);
  }
  return NULL;
}

static void capture_start(struct capture *c) {
  memset(c, 0, sizeof(*c));
  pthread_mutex_init(&c->mu, NULL);
  c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ck_assert_int_ge(c->fd, 0);
  struct sockaddr_in a = {0};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ck_assert_int_eq(bind(c->fd, (struct sockaddr *)&a, sizeof(a)), 0);
  ck_assert_int_eq(listen(c->fd, 16), 0);
  socklen_t len = sizeof(a);
  ck_assert_int_eq(getsockname(c->fd, (struct sockaddr *)&a, &len), 0);
  c->port = ntohs(a.sin_port);
  ck_assert_int_eq(pthread_create(&c->thread, NULL, capture_run, c), 0);
}

static void capture_stop(struct capture *c) {
  shutdown(c->fd, SHUT_RDWR);
  pthread_join(c->thread, NULL);
  close(c->fd);
  pthread_mutex_destroy(&c->mu);
}

START_TEST(test_cli_header_sent) {
  struct capture cap;
  capture_start(&cap);
  char url[128];
  snprintf(url, sizeof(url), "http://127.0.0.1:%d/mcp", cap.port);
  struct run r;
  RUN(&r, "--url", url, "--name", "cap", "-H", "X-Token:  s3cret value ", "--header",
      "Authorization: Bearer abc", "--timeout", "10000", "ping");
  ASSERT_EXIT(&r, 3);
  assert_one_reason(&r);
  ck_assert_msg(strstr(r.err, "cap:") && strstr(r.err, "500"), "%s", r.err);
  run_free(&r);
  capture_stop(&cap);
  ck_assert(cap.got);
  ck_assert_msg(strstr(cap.head, "POST /mcp HTTP/1.1\r\n"), "%s", cap.head);
  /* Surrounding blanks are trimmed; inner ones kept. */
  ck_assert_msg(strcasestr(cap.head, "\r\nX-Token: s3cret value\r\n"), "%s", cap.head);
  ck_assert_msg(strcasestr(cap.head, "\r\nAuthorization: Bearer abc\r\n"), "%s", cap.head);
}
END_TEST

/* Bad HTTP options are usage errors (exit 2), before anything connects. */
START_TEST(test_cli_http_usage) {
  static const char *const bad[][8] = {
      /* CR or LF in a header, however it is placed. */
      {"--url", "http://127.0.0.1:9/mcp", "--header", "X-A: a\r\nX-B: b", "tools"},
      {"--url", "http://127.0.0.1:9/mcp", "--header", "X-A: a\nb", "tools"},
      {"--url", "http://127.0.0.1:9/mcp", "-H", "X-A\r: a", "tools"},
      /* No colon, no name, a bad name, a header the transport owns. */
      {"--url", "http://127.0.0.1:9/mcp", "--header", "X-A a", "tools"},
      {"--url", "http://127.0.0.1:9/mcp", "--header", ": a", "tools"},
      {"--url", "http://127.0.0.1:9/mcp", "--header", "X A: a", "tools"},
      {"--url", "http://127.0.0.1:9/mcp", "--header", "Mcp-Session-Id: x", "tools"},
      /* --header and --sse belong to a --url. */
      {"--header", "X-A: a", "tools"},
      {"--stdio", "/bin/true", "--header", "X-A: a", "tools"},
      {"--url", "http://127.0.0.1:9/mcp", "--timeout", "5", "--sse", "tools"},
      /* URLs. */
      {"--url", "ftp://127.0.0.1/mcp", "tools"},
      {"--url", "http://[::1/mcp", "tools"},
      /* TLS and version options need a --url, and agree with each other. */
      {"--cacert", "/nonexistent.pem", "tools"},
      {"--insecure", "--stdio", "/bin/true", "tools"},
      {"--url", "https://127.0.0.1:9/mcp", "--key", "k.pem", "tools"},
      {"--url", "https://127.0.0.1:9/mcp", "--http1.1", "--h2c", "tools"},
      /* Names. */
      {"--url", "http://127.0.0.1:9/mcp", "--name", "a/b", "tools"},
      {"--url", "http://127.0.0.1:9/mcp", "--url", "http://127.0.0.1:10/mcp", "tools"},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    struct run r;
    run_cli(&r, bad[i]);
    ck_assert_msg(r.status == 2, "case %zu: exit %d; stderr: %s", i, r.status, r.err);
    assert_one_reason(&r);
    /* Header values may be secrets: never echoed. */
    ck_assert_msg(!strstr(r.err, "a\r") && !strstr(r.err, "X-B"), "case %zu: %s", i, r.err);
    ck_assert_msg(r.ms < 10000, "case %zu took %lld ms", i, r.ms);
    run_free(&r);
  }
}
END_TEST

/*
 * Ctrl-C during a call sends notifications/cancelled and exits 130.  The
 * server runs behind `tee`, so the test sees what the CLI sent it.
 */
struct sigint_ctx {
  const char *log;
};

static bool file_contains(const char *path, const char *needle) {
  FILE *f = fopen(path, "r");
  if (!f) return false;
  char buf[65536];
  size_t n = fread(buf, 1, sizeof(buf) - 1, f);
  fclose(f);
  buf[n] = '\0';
  return strstr(buf, needle) != NULL;
}

static void send_sigint_when_called(pid_t pid, void *user) {
  struct sigint_ctx *ctx = user;
  ck_assert_msg(WAIT_UNTIL(file_contains(ctx->log, "\"sleep\""), 20000),
                "the CLI never sent the sleep call");
  kill(pid, SIGINT);
}

START_TEST(test_cli_sigint_cancels) {
  const char *demo = test_env_path("MCP_DEMO_SERVER");
  char *log = write_temp("sigint.log", "");
  char cmd[8192];
  snprintf(cmd, sizeof(cmd), "/bin/sh -c 'tee \"$0\" | \"$1\"' '%s' '%s'", log, demo);
  struct sigint_ctx ctx = {log};
  const char *args[] = {"--stdio", cmd, "call", "sleep", "{\"ms\":20000}", NULL};
  struct run r;
  run_cli_ex(&r, args, send_sigint_when_called, &ctx);
  ASSERT_EXIT(&r, 130);
  ck_assert_msg(r.ms < 15000, "took %lld ms", r.ms);
  ck_assert_msg(strstr(r.err, "interrupted"), "%s", r.err);
  ck_assert_msg(file_contains(log, "notifications/cancelled"),
                "no notifications/cancelled was sent");
  run_free(&r);
  unlink(log);
  free(log);
}
END_TEST

/* ---- hostile server texts on a terminal (issue 14, item 8) --------------- */

/* Fails when |bytes| (what mcpconn wrote to |what|) holds anything a
 * terminal acts on or hides: a byte that is not UTF-8, a C0 control other
 * than tab, CR and LF, DEL, a C1 control, a bidi embedding, override or
 * isolate, or another invisible format character. */
static void assert_terminal_safe(const char *what, const char *bytes) {
  const unsigned char *p = (const unsigned char *)bytes;
  size_t len = strlen(bytes);
  for (size_t i = 0; i < len;) {
    unsigned char c = p[i];
    size_t k = c < 0x80             ? 1
               : (c & 0xe0) == 0xc0 ? 2
               : (c & 0xf0) == 0xe0 ? 3
               : (c & 0xf8) == 0xf0 ? 4
                                    : 0;
    ck_assert_msg(k && i + k <= len, "%s: byte 0x%02x at %zu is not UTF-8: %s", what, c, i, bytes);
    uint32_t cp = k == 1 ? c : (uint32_t)(c & (0x7f >> k));
    for (size_t j = 1; j < k; j++) {
      ck_assert_msg((p[i + j] & 0xc0) == 0x80, "%s: bad UTF-8 at %zu: %s", what, i, bytes);
      cp = (cp << 6) | (p[i + j] & 0x3f);
    }
    bool bad = (cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') ||
               (cp >= 0x7f && cp <= 0x9f) || (cp >= 0x200b && cp <= 0x200f) ||
               (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0xfeff;
    ck_assert_msg(!bad, "%s: raw U+%04X at byte %zu: %s", what, (unsigned)cp, i, bytes);
    i += k;
  }
}

/* The fault server's EVIL_TEXT, as JSON decodes it. */
#define EVIL_TEXT \
  "\x1b[2J\x1b]0;pwned\x07 rtl:\xe2\x80\xae lri:\xe2\x81\xa6 zw:\xe2\x80\x8b " \
  "csi:\xc2\x9b" \
  "31m del:\x7f end"
/* ... and as mcpconn shows it in text. */
#define EVIL_SHOWN "?[2J?]0;pwned? rtl:? lri:? zw:? csi:?31m del:? end"
/* ... and a JSON-RPC error's message or a tool's error text, which the library already quotes into
 * its mcp_error message visibly escaped (mcp__quote()); the zero-width space
 * it leaves is then shown as '?' by mcpconn. */
#define EVIL_QUOTED \
  "\\x1b[2J\\x1b]0;pwned\\x07 rtl:\\u202e lri:\\u2066 zw:? csi:\\u009b31m del:\\x7f end"

static void run_evil(struct run *r, bool tty, const char *const *cmd) {
  char server[1200];
  snprintf(server, sizeof(server), "%s --evil-text", test_env_path("MCP_FAULT_SERVER"));
  const char *args[16] = {"--stdio", server, "--name", "evil"};
  size_t n = 4;
  for (size_t i = 0; cmd[i] && n < 15; i++) args[n++] = cmd[i];
  args[n] = NULL;
  if (tty) run_cli_tty(r, args);
  else run_cli(r, args);
  assert_terminal_safe("stdout", r->out);
  assert_terminal_safe("stderr", r->err);
}

/*
 * A server whose tool names, descriptions, error messages, results and
 * stderr carry ESC[2J, ESC]0;title BEL, U+202E and friends: nothing of it
 * reaches stdout or stderr raw, in the tables, the messages, -v log lines
 * or JSON (which stays JSON with the same values), on a pipe or a terminal.
 */
START_TEST(test_cli_evil_text) {
  struct run r;
  for (int tty = 0; tty < 2; tty++) {
    run_evil(&r, tty, (const char *const[]){"tools", "--wait", NULL});
    ASSERT_EXIT(&r, 0);
    ck_assert_msg(strstr(r.out, "evil?exe") && strstr(r.out, EVIL_SHOWN), "%s", r.out);
    run_free(&r);

    run_evil(&r, tty, (const char *const[]){"tools", "--json", NULL});
    ASSERT_EXIT(&r, 0);
    json_object *arr = parse_out(&r);
    bool seen = false;
    for (size_t i = 0; i < json_object_array_length(arr); i++) {
      json_object *t = json_object_array_get_idx(arr, i);
      if (strcmp(jstr(t, "tool"), "evil\xe2\x80\xae"
                                  "exe") != 0)
        continue;
      ck_assert_str_eq(jstr(t, "description"), EVIL_TEXT);
      seen = true;
    }
    ck_assert_msg(seen, "the tool evil<U+202E>exe is not listed: %s", r.out);
    json_object_put(arr);
    run_free(&r);

    /* A JSON-RPC error message, an isError text, a normal result. */
    run_evil(&r, tty, (const char *const[]){"call", "evil_error", NULL});
    ASSERT_EXIT(&r, 3);
    ck_assert_msg(strstr(r.err, EVIL_QUOTED), "%s", r.err);
    run_free(&r);
    run_evil(&r, tty, (const char *const[]){"call", "evil_result", NULL});
    ASSERT_EXIT(&r, 1);
    ck_assert_msg(strstr(r.err, EVIL_QUOTED), "%s", r.err);
    json_object *res = parse_out(&r);
    ck_assert_str_eq(jstr(res, "content.0.text"), EVIL_TEXT);
    json_object_put(res);
    run_free(&r);
    run_evil(&r, tty, (const char *const[]){"call", "evil_ok", NULL});
    ASSERT_EXIT(&r, 0);
    res = parse_out(&r);
    ck_assert_str_eq(jstr(res, "content.0.text"), EVIL_TEXT);
    json_object_put(res);
    run_free(&r);

    /* The server's stderr, quoted in the crash message (with a raw 0x9b). */
    run_evil(&r, tty, (const char *const[]){"call", "crash", NULL});
    ASSERT_EXIT(&r, 3);
    ck_assert_msg(strstr(r.err, "stderr:") && strstr(r.err, EVIL_SHOWN " raw:?2J"), "%s", r.err);
    run_free(&r);

    /* Log lines (-v), ping and the servers table. */
    run_evil(&r, tty, (const char *const[]){"-v", "ping", NULL});
    ASSERT_EXIT(&r, 0);
    run_free(&r);
    run_evil(&r, tty, (const char *const[]){"servers", NULL});
    ASSERT_EXIT(&r, 0);
    run_free(&r);
  }

  /* `mcpconn bench` quotes the server's error message of each failed call. */
  char server[1200];
  snprintf(server, sizeof(server), "%s --evil-text", test_env_path("MCP_FAULT_SERVER"));
  RUN(&r, "bench", "--stdio", server, "--tool", "evil_error", "--calls", "2", "--warmup", "0",
      "--verbose");
  ASSERT_EXIT(&r, 1);
  ck_assert_msg(strstr(r.err, EVIL_SHOWN), "%s", r.err);
  assert_terminal_safe("bench stdout", r.out);
  assert_terminal_safe("bench stderr", r.err);
  run_free(&r);
}
END_TEST

/*
 * The CLI takes config diagnostics and hidden servers from the manager's
 * diagnostics API, not from its log lines: with a config path so long that
 * every log line about it is cut at the log's 1 KiB buffer, a bad entry is
 * still a usage error that names the entry's field, and a server hidden by
 * "enabled": false is still listed as disabled (with -q too).
 */
START_TEST(test_cli_diagnostics_not_log) {
  char dir[4096];
  int n = snprintf(dir, sizeof(dir), "%s", g_dir);
  for (int i = 0; i < 5; i++) {
    n += snprintf(dir + n, sizeof(dir) - (size_t)n, "/");
    for (int k = 0; k < 220; k++) dir[n++] = (char)('a' + i);
    dir[n] = '\0';
  }
  ck_assert_int_gt(n, 1100);

  char *typo = write_file("{\"mcpServers\": {\"x\": {\"comand\": \"true\"}}}", "%s/typo.json", dir);
  struct run r;
  RUN(&r, "--config", typo, "tools");
  ASSERT_EXIT(&r, 2);
  assert_one_reason(&r);
  ck_assert_msg(strstr(r.err, "comand") && strstr(r.err, typo), "%s", r.err);
  run_free(&r);
  free(typo);

  char text[8192];
  snprintf(text, sizeof(text),
           "{\"mcpServers\": {\n"
           "  \"good\": {\"command\": \"%s\"},\n"
           "  \"off\": {\"command\": \"%s\", \"enabled\": false}}}\n",
           test_env_path("MCP_DEMO_SERVER"), test_env_path("MCP_DEMO_SERVER"));
  char *cfg = write_file(text, "%s/status.json", dir);
  for (size_t q = 0; q < 2; q++) {
    const char *args[] = {"--config", cfg, "servers", "--json", NULL};
    const char *quiet[] = {"-q", "--config", cfg, "servers", "--json", NULL};
    run_cli(&r, q ? quiet : args);
    ASSERT_EXIT(&r, 0);
    json_object *a = parse_out(&r);
    int seen = 0;
    for (size_t i = 0; i < json_object_array_length(a); i++) {
      json_object *s = json_object_array_get_idx(a, i);
      const char *name = jstr(s, "name"), *state = jstr(s, "state");
      ck_assert_ptr_nonnull(name);
      ck_assert_ptr_nonnull(state);
      if (strcmp(name, "good") == 0) {
        ck_assert_str_eq(state, "ready");
        seen |= 1;
      } else if (strcmp(name, "off") == 0) {
        ck_assert_str_eq(state, "disabled");
        ck_assert_str_eq(jstr(s, "source"), cfg);
        seen |= 2;
      }
    }
    ck_assert_msg(seen == 3, "stdout: %s", r.out);
    ck_assert_int_eq(json_object_array_length(a), 2);
    json_object_put(a);
    run_free(&r);
  }
  free(cfg);
}
END_TEST

/*
 * A diagnostic about a file that is not a server config, here a trust
 * store the library refuses (a symbolic link), reaches the user like any
 * other: the CLI no longer filters diagnostics by a list of file names of
 * its own (before, this warning was dropped).  -q still silences it.
 */
START_TEST(test_cli_trust_store_warning) {
  char dir[1200], store[1300];
  snprintf(dir, sizeof(dir), "%s/.config/mcpconn", g_home);
  make_dir("%s", dir);
  snprintf(store, sizeof(store), "%s/trusted-projects.json", dir);
  char *target = write_temp("elsewhere.json", "{}");
  ck_assert_int_eq(symlink(target, store), 0);
  char text[4096];
  snprintf(text, sizeof(text), "{\"mcpServers\": {\"p\": {\"command\": \"%s\"}}}",
           test_env_path("MCP_DEMO_SERVER"));
  free(write_file(text, "%s/.mcp.json", g_work));

  struct run r;
  RUN(&r, "servers");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.err, "mcpconn: warning: ") && strstr(r.err, store) &&
                    strstr(r.err, "symbolic link"),
                "%s", r.err);
  run_free(&r);
  RUN(&r, "-q", "servers");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(!strstr(r.err, "trusted-projects.json"), "%s", r.err);
  run_free(&r);
  free(target);
}
END_TEST

/* ---- the first screen: closed pipes, terminal width, names, arguments -- */

/*
 * Runs mcpconn with its stdout on a pipe nobody reads (the read end closed
 * before it starts: `mcpconn tools | head` once head has gone); captures
 * stderr and the exit status.
 */
static void run_cli_closed_stdout(struct run *r, const char *const *args) {
  int out[2], err[2];
  ck_assert_int_eq(pipe2(out, O_CLOEXEC), 0);
  ck_assert_int_eq(pipe2(err, O_CLOEXEC), 0);
  close(out[0]);
  char *argv[64];
  size_t n = 0;
  argv[n++] = (char *)test_env_path("MCPCONN_BIN");
  for (size_t i = 0; args[i] && n < 63; i++) argv[n++] = (char *)args[i];
  argv[n] = NULL;
  setenv("MCPCONN_DEMO_SERVER", test_env_path("MCP_DEMO_SERVER"), 1);
  long long t0 = test_now_ms();
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    int null = open("/dev/null", O_RDONLY);
    if (null < 0) _exit(126);
    dup2(null, 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    /* As a shell starts a pipeline: SIGPIPE at its default. */
    signal(SIGPIPE, SIG_DFL);
    if (g_child_cwd && chdir(g_child_cwd) != 0) _exit(126);
    execv(argv[0], argv);
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  r->out = strdup("");
  r->err = slurp_fd(err[0]);
  close(err[0]);
  int status = 0;
  bool done = WAIT_UNTIL(waitpid(pid, &status, WNOHANG) == pid, 30000);
  if (!done) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    ck_abort_msg("mcpconn did not exit");
  }
  r->ms = test_now_ms() - t0;
  r->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* A closed stdout is not an error, and says nothing on stderr. */
START_TEST(test_cli_closed_pipe) {
  struct run r;
  const char *tools[] = {"tools", NULL};
  run_cli_closed_stdout(&r, tools);
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(!strstr(r.err, "Broken pipe") && !strstr(r.err, "cannot write"), "%s", r.err);
  run_free(&r);

  const char *call[] = {"-q", "call", "echo", "text=hi", NULL};
  run_cli_closed_stdout(&r, call);
  ASSERT_EXIT(&r, 0);
  ck_assert_str_eq(r.err, "");
  run_free(&r);

  const char *servers[] = {"-q", "servers", "--json", NULL};
  run_cli_closed_stdout(&r, servers);
  ASSERT_EXIT(&r, 0);
  ck_assert_str_eq(r.err, "");
  run_free(&r);
}
END_TEST

/* The characters (UTF-8 code points) of the line of |text| that starts at
 * |p|, up to CR or LF. */
static size_t line_chars(const char *p) {
  size_t n = 0;
  for (; *p && *p != '\r' && *p != '\n'; p++) n += ((unsigned char)*p & 0xc0) != 0x80;
  return n;
}

/* The widest line of |text|, in characters. */
static size_t widest_line(const char *text) {
  size_t w = 0;
  for (const char *p = text; *p;) {
    size_t n = line_chars(p);
    if (n > w) w = n;
    p += strcspn(p, "\n");
    if (*p) p++;
  }
  return w;
}

/*
 * On a terminal, tables fit its width (COLUMNS first, else the terminal's
 * size): descriptions and errors are cut, with an ellipsis.  On a pipe,
 * nothing is cut.
 */
START_TEST(test_cli_tty_width) {
  const char *demo = test_env_path("MCP_DEMO_SERVER");
  char cmd[4096];
  snprintf(cmd, sizeof(cmd), "'%s'", demo);
  const char *full = "Adds two numbers and returns the sum.";
  struct run r;
  unsetenv("COLUMNS");
  setenv("LC_ALL", "C.UTF-8", 1);

  /* "d       add    mcp__d_add    " is 29 columns: 21 are left of 50. */
  const char *tools[] = {"--stdio", cmd, "--name", "d", "tools", NULL};
  g_tty_cols = 50;
  run_cli_tty(&r, tools);
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(widest_line(r.out) <= 50, "wider than 50:\n%s", r.out);
  ck_assert_msg(strstr(r.out, "Adds two numbers and\xe2\x80\xa6") && !strstr(r.out, full), "%s",
                r.out);
  run_free(&r);

  /* COLUMNS wins over the terminal's size; without UTF-8, three dots. */
  setenv("COLUMNS", "50", 1);
  setenv("LC_ALL", "C", 1);
  g_tty_cols = 200;
  run_cli_tty(&r, tools);
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(widest_line(r.out) <= 50, "wider than 50:\n%s", r.out);
  ck_assert_msg(strstr(r.out, "Adds two numbers a...") && !strstr(r.out, "\xe2\x80\xa6"), "%s",
                r.out);
  run_free(&r);

  /* A wide terminal shows it whole. */
  unsetenv("COLUMNS");
  run_cli_tty(&r, tools);
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, full), "%s", r.out);
  run_free(&r);

  /* Not a terminal: COLUMNS changes nothing. */
  setenv("COLUMNS", "40", 1);
  run_cli(&r, tools);
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, full), "%s", r.out);
  run_free(&r);

  /* servers cuts the last error. */
  const char *servers[] = {"-q", "--stdio", "/nonexistent/bin/x", "servers", "--wait", NULL};
  g_tty_cols = 60; /* 38 columns before LAST ERROR */
  unsetenv("COLUMNS");
  run_cli_tty(&r, servers);
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(widest_line(r.out) <= 60, "wider than 60:\n%s", r.out);
  ck_assert_msg(strstr(r.out, "cannot run") && strstr(r.out, "...") &&
                    !strstr(r.out, "No such file"),
                "%s", r.out);
  run_free(&r);
  run_cli(&r, servers);
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "No such file or directory"), "%s", r.out);
  run_free(&r);

  g_tty_cols = 0;
  unsetenv("COLUMNS");
  unsetenv("LC_ALL");
}
END_TEST

/* The name of the one server of `servers --json` for |stdio|. */
static char *stdio_name(const char *stdio) {
  struct run r;
  RUN(&r, "-q", "--stdio", stdio, "servers", "--json", "--no-wait");
  ASSERT_EXIT(&r, 0);
  json_object *a = parse_out(&r);
  ck_assert_int_eq(json_object_array_length(a), 1);
  char *name = strdup(jstr(json_object_array_get_idx(a, 0), "name"));
  json_object_put(a);
  run_free(&r);
  return name;
}

/* A stdio server is named after the package or script its launcher runs.
 * (The launchers are missing here: the name is made before the start.) */
START_TEST(test_cli_default_names) {
  static const char *const cases[][2] = {
      {"/nonexistent/npx -y @modelcontextprotocol/server-filesystem /tmp", "server-filesystem"},
      {"/nonexistent/node path/to/demo.js", "demo"},
      {"/nonexistent/node --require x /srv/server-everything/dist/index.js", "server-everything"},
      {"/nonexistent/npx -y @upstash/context7-mcp@latest", "context7-mcp"},
      {"/nonexistent/uvx mcp-server-fetch", "mcp-server-fetch"},
      {"/nonexistent/python3 -m mcp_server_time.cli", "mcp_server_time"},
      {"/nonexistent/env A=1 node ./tool.mjs", "tool"},
      {"/nonexistent/sh -c true", "sh"},
      {"/nonexistent/npx", "npx"},
      {"/nonexistent/my-server --port 1", "my-server"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char *name = stdio_name(cases[i][0]);
    ck_assert_msg(strcmp(name, cases[i][1]) == 0, "%s: named %s, not %s", cases[i][0], name,
                  cases[i][1]);
    free(name);
  }
}
END_TEST

/* -e KEY=VALUE sets a variable of the --stdio server before it. */
START_TEST(test_cli_stdio_env) {
  const char *demo = test_env_path("MCP_DEMO_SERVER");
  char cmd[4096];
  snprintf(cmd, sizeof(cmd), "/bin/sh -c 'test \"$MCPCONN_TEST_E\" = \"b c\" && exec \"$0\"' '%s'",
           demo);
  unsetenv("MCPCONN_TEST_E");
  struct run r;
  RUN(&r, "-q", "--stdio", cmd, "-e", "MCPCONN_TEST_E=b c", "--name", "e", "call", "echo",
      "text=env");
  ASSERT_EXIT(&r, 0);
  json_object *res = parse_out(&r);
  ck_assert_str_eq(jstr(res, "content.0.text"), "env");
  json_object_put(res);
  run_free(&r);

  /* Without it the server exits at once. */
  RUN(&r, "-q", "--stdio", cmd, "--name", "e", "call", "echo", "text=env");
  ASSERT_EXIT(&r, 3);
  run_free(&r);

  RUN(&r, "-e", "A=1", "ping");
  ASSERT_EXIT(&r, 2);
  ck_assert_msg(strstr(r.err, "-e must follow the --stdio"), "%s", r.err);
  run_free(&r);
  RUN(&r, "--url", "http://127.0.0.1:1/mcp", "-e", "A=1", "ping");
  ASSERT_EXIT(&r, 2);
  run_free(&r);
  RUN(&r, "--stdio", cmd, "-e", "NOEQUALS", "ping");
  ASSERT_EXIT(&r, 2);
  ck_assert_msg(strstr(r.err, "KEY=VALUE"), "%s", r.err);
  run_free(&r);
  RUN(&r, "--stdio", cmd, "-e", "=x", "ping");
  ASSERT_EXIT(&r, 2);
  run_free(&r);
}
END_TEST

/* call takes KEY=VALUE (a string) and KEY:=JSON beside a JSON object. */
START_TEST(test_cli_call_key_value) {
  struct run r;
  RUN(&r, "-q", "call", "echo", "text=hi there");
  ASSERT_EXIT(&r, 0);
  json_object *res = parse_out(&r);
  ck_assert_str_eq(jstr(res, "content.0.text"), "hi there");
  json_object_put(res);
  run_free(&r);

  /* A value with '=' and ":=" in it stays a string. */
  RUN(&r, "-q", "call", "echo", "text=a=b:=c");
  ASSERT_EXIT(&r, 0);
  res = parse_out(&r);
  ck_assert_str_eq(jstr(res, "content.0.text"), "a=b:=c");
  json_object_put(res);
  run_free(&r);

  RUN(&r, "-q", "call", "add", "a:=2", "b:=3");
  ASSERT_EXIT(&r, 0);
  res = parse_out(&r);
  ck_assert_int_eq(jint(res, "structuredContent.sum", -1), 5);
  json_object_put(res);
  run_free(&r);

  /* Merged left to right: the later b wins. */
  RUN(&r, "-q", "call", "add", "{\"a\":1,\"b\":1}", "b:=5");
  ASSERT_EXIT(&r, 0);
  res = parse_out(&r);
  ck_assert_int_eq(jint(res, "structuredContent.sum", -1), 6);
  json_object_put(res);
  run_free(&r);

  /* a:=2 is the number 2; a=2 the string "2", which add refuses. */
  RUN(&r, "-q", "call", "add", "a=2", "b:=3");
  ASSERT_EXIT(&r, 1);
  run_free(&r);

  RUN(&r, "-q", "call", "add", "a:=[1", "b:=3");
  ASSERT_EXIT(&r, 2);
  assert_one_reason(&r);
  ck_assert_msg(strstr(r.err, "not JSON"), "%s", r.err);
  run_free(&r);
  RUN(&r, "-q", "call", "echo", "=x");
  ASSERT_EXIT(&r, 2);
  assert_one_reason(&r);
  run_free(&r);
  RUN(&r, "-q", "call", "echo", "text=x", "[1]");
  ASSERT_EXIT(&r, 2);
  assert_one_reason(&r);
  run_free(&r);

  RUN(&r, "--version");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "mcpconn " PACKAGE_VERSION), "%s", r.out);
  run_free(&r);
}
END_TEST

/* ---- prompts and resources ---------------------------------------------- */

/* `prompts` and `resources` against the demo server of each era: lists,
 * get, read and templates, on a pipe (plain lines) and as JSON. */
START_TEST(test_cli_prompts_resources) {
  const char *demo = test_env_path("MCP_DEMO_SERVER");
  for (int modern = 0; modern < 2; modern++) {
    char stdio[2048];
    snprintf(stdio, sizeof(stdio), "'%s' --protocol %s", demo, modern ? "modern" : "legacy");
    const char *era = modern ? "modern" : "legacy";
    struct run r;
#define RUN_D(...) RUN(&r, "-q", "--stdio", stdio, "--name", "d", __VA_ARGS__)
    /* The era really is the one asked for. */
    RUN_D("servers", "--json");
    ASSERT_EXIT(&r, 0);
    json_object *o = parse_out(&r);
    ck_assert_str_eq(jstr(o, "0.era"), era);
    json_object_put(o);
    run_free(&r);

    RUN_D("prompts");
    ASSERT_EXIT(&r, 0);
    ck_assert_msg(strncmp(r.out, "SERVER  PROMPT     ARGUMENTS     DESCRIPTION\n", 45) == 0, "%s",
                  r.out);
    ck_assert_msg(strstr(r.out, "\nd       greet      name, style?  Asks for a greeting for "
                                "someone.\n") &&
                      strstr(r.out, "\nd       summarize  -             Asks for a one-sentence "
                                    "summary of demo://readme.\n"),
                  "%s", r.out);
    ck_assert_msg(!strchr(r.out, '\033'), "colour on a pipe: %s", r.out);
    ck_assert_str_eq(r.err, "");
    run_free(&r);

    RUN_D("prompts", "--json");
    ASSERT_EXIT(&r, 0);
    o = parse_out(&r);
    ck_assert_int_eq(json_object_array_length(o), 2);
    ck_assert_str_eq(jstr(o, "0.name"), "d/greet");
    ck_assert_str_eq(jstr(o, "0.prompt"), "greet");
    ck_assert_str_eq(jstr(o, "0.server"), "d");
    ck_assert_str_eq(jstr(o, "0.arguments.1.name"), "style");
    ck_assert_str_eq(jstr(o, "1.name"), "d/summarize");
    json_object_put(o);
    run_free(&r);

    RUN_D("prompts", "get", "d/greet", "name=Ann", "style=formal");
    ASSERT_EXIT(&r, 0);
    ck_assert_str_eq(r.out, "user: Write a formal greeting for Ann.\n");
    run_free(&r);
    /* A JSON object, and a bare name with one server. */
    RUN_D("prompts", "get", "greet", "{\"name\":\"Bo\"}", "--json");
    ASSERT_EXIT(&r, 0);
    o = parse_out(&r);
    ck_assert_str_eq(jstr(o, "messages.0.content.text"), "Write a casual greeting for Bo.");
    json_object_put(o);
    run_free(&r);
    RUN_D("prompts", "get", "d/summarize");
    ASSERT_EXIT(&r, 0);
    ck_assert_msg(strncmp(r.out,
                          "user: Summarize this text in one sentence:\n\nmcpconn-demo-server "
                          "is a small MCP server",
                          68) == 0,
                  "%s", r.out);
    run_free(&r);

    RUN_D("resources");
    ASSERT_EXIT(&r, 0);
    ck_assert_msg(strstr(r.out,
                         "SERVER  URI                 NAME    TYPE              DESCRIPTION\n"
                         "d       demo://readme       readme  text/plain        What this "
                         "server is.\n"
                         "d       demo://config.json  config  application/json  The "
                         "server's settings.\n"),
                  "%s", r.out);
    run_free(&r);
    RUN_D("resources", "--json");
    ASSERT_EXIT(&r, 0);
    o = parse_out(&r);
    ck_assert_int_eq(json_object_array_length(o), 2);
    ck_assert_str_eq(jstr(o, "1.uri"), "demo://config.json");
    ck_assert_str_eq(jstr(o, "1.server"), "d");
    json_object_put(o);
    run_free(&r);

    RUN_D("resources", "templates");
    ASSERT_EXIT(&r, 0);
    ck_assert_msg(strstr(r.out, "SERVER  URI TEMPLATE        NAME  TYPE        DESCRIPTION\n"
                                "d       demo://echo/{text}  echo  text/plain  Reads back the "
                                "text in the URI.\n"),
                  "%s", r.out);
    run_free(&r);

    RUN_D("resources", "read", "d", "demo://echo/hello there");
    ASSERT_EXIT(&r, 0);
    ck_assert_str_eq(r.out, "hello there\n");
    run_free(&r);
    RUN_D("resources", "read", "demo://readme");
    ASSERT_EXIT(&r, 0);
    ck_assert_str_eq(r.out, "mcpconn-demo-server is a small MCP server bundled with mcpconn.\n"
                            "It has four tools, two prompts and three resources.\n");
    run_free(&r);
    RUN_D("resources", "read", "d", "demo://config.json", "--json");
    ASSERT_EXIT(&r, 0);
    o = parse_out(&r);
    ck_assert_str_eq(jstr(o, "contents.0.mimeType"), "application/json");
    ck_assert_str_eq(jstr(o, "contents.0.text"),
                     "{\"greeting\": \"hello\", \"sleepMaxMs\": 600000}");
    json_object_put(o);
    run_free(&r);

    /* Errors: one line naming the server and the cause; exit 2. */
    RUN_D("prompts", "get", "d/nope");
    ASSERT_EXIT(&r, 2);
    assert_one_reason(&r);
    ck_assert_str_eq(r.err, "mcpconn: unknown prompt 'nope' on server d (it has: greet, "
                            "summarize)\n");
    ck_assert_str_eq(r.out, "");
    run_free(&r);
    RUN_D("prompts", "get", "d/greet");
    ASSERT_EXIT(&r, 2);
    assert_one_reason(&r);
    ck_assert_msg(strstr(r.err, "d: prompts/get: ") &&
                      strstr(r.err, "needs the argument 'name' (JSON-RPC error -32602)"),
                  "%s", r.err);
    run_free(&r);
    RUN_D("resources", "read", "d", "demo://none");
    ASSERT_EXIT(&r, 2);
    assert_one_reason(&r);
    char want[256];
    snprintf(want, sizeof(want),
             "mcpconn: unknown resource 'demo://none' on server d (Resource not found: "
             "demo://none; JSON-RPC error %d)\n",
             modern ? -32602 : -32002);
    ck_assert_str_eq(r.err, want);
    run_free(&r);
    RUN_D("resources", "read", "x", "demo://readme");
    ASSERT_EXIT(&r, 2);
    assert_one_reason(&r);
    ck_assert_msg(strstr(r.err, "no server named x"), "%s", r.err);
    run_free(&r);
#undef RUN_D
  }

  /* Usage errors, before any server starts. */
  struct run r;
  const char *const bad[][6] = {{"prompts", "bogus"},
                                {"prompts", "get"},
                                {"prompts", "get", "greet", "name:=3"},
                                {"prompts", "get", "greet", "{\"name\":3}"},
                                {"resources", "read"},
                                {"resources", "templates", "x"},
                                {"resources", "x"}};
  for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
    run_cli(&r, bad[i]);
    ASSERT_EXIT(&r, 2);
    assert_one_reason(&r);
    run_free(&r);
  }
}
END_TEST

/* ---- skills --------------------------------------------------------------- */

/*
 * `skills` against tests/mcp-skills-server (stdio, 2025-11-25; it refuses
 * skills/list unless the client declares the extension, which the run
 * does): the table and --json, loading by name, by URI and with one
 * server by name alone, a supporting file, each failure naming the server
 * with its exit code, and on a terminal a table cut to its width.
 */
START_TEST(test_cli_skills) {
  const char *sk = test_env_path("MCP_SKILLS_SERVER");
  struct run r;
#define RUN_S(...) RUN(&r, "-q", "--stdio", sk, "--name", "sk", __VA_ARGS__)
  RUN_S("skills");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strncmp(r.out,
                        "SERVER  SKILL            URI                               DESCRIPTION\n"
                        "sk      good             skill://good/SKILL.md             A good skill\n",
                        140) == 0,
                "%s", r.out);
  ck_assert_msg(strstr(r.out, "\nsk      good             skill://other/good/SKILL.md       "
                              "Another skill named good\n") &&
                    strstr(r.out, "\nsk      dynamic          skill://dynamic/SKILL.md          "
                                  "Generated on demand\n"),
                "%s", r.out);
  ck_assert_msg(!strstr(r.out, "broken"), "an invalid entry listed: %s", r.out);
  ck_assert_str_eq(r.err, "");
  run_free(&r);
  RUN_S("skills", "sk", "--json");
  ASSERT_EXIT(&r, 0);
  json_object *o = parse_out(&r);
  ck_assert_int_eq(json_object_array_length(o), 8);
  ck_assert_str_eq(jstr(o, "2.uri"), "skill://rich/SKILL.md");
  ck_assert_str_eq(jstr(o, "2.server"), "sk");
  ck_assert_str_eq(jstr(o, "2.frontmatter.metadata.version"), "2.1");
  ck_assert_str_eq(jstr(o, "0.resources.1.uri"), "skill://good/references/REF.md");
  json_object_put(o);
  run_free(&r);

  /* Loading: the SKILL.md's bytes on a pipe; by URI; NAME alone with one server. */
  RUN_S("skills", "sk/rich");
  ASSERT_EXIT(&r, 0);
  ck_assert_str_eq(r.out, "---\nname: rich\ndescription: Rich frontmatter\nlicense: MIT\n"
                          "metadata:\n  version: \"2.1\"\n  level: 3\nallowed-tools:\n  - bash\n"
                          "  - read\nnotes: |\n  one\n  two\n---\n\nRich body.\n");
  run_free(&r);
  RUN_S("skills", "sk/skill://other/good/SKILL.md", "--json");
  ASSERT_EXIT(&r, 0);
  o = parse_out(&r);
  ck_assert_str_eq(jstr(o, "server"), "sk");
  ck_assert_str_eq(jstr(o, "uri"), "skill://other/good/SKILL.md");
  ck_assert_str_eq(jstr(o, "text"), "---\nname: good\ndescription: Another skill named good\n"
                                    "---\n\nOther body.\n");
  json_object_put(o);
  run_free(&r);
  RUN_S("skills", "blobby");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "Blob body.\n"), "%s", r.out);
  run_free(&r);
  /* A supporting file, by relative path and by URI. */
  RUN_S("skills", "sk/rich", "references/REF.md");
  ASSERT_EXIT(&r, 0);
  ck_assert_str_eq(r.out, "Reference of rich.\n");
  run_free(&r);
  RUN_S("skills", "skill://other/good/SKILL.md", "skill://other/good/references/REF.md");
  ASSERT_EXIT(&r, 0);
  ck_assert_str_eq(r.out, "Reference of other/good.\n");
  run_free(&r);

  /* Failures: one line naming the server; unknown (2) or bad content (3). */
  struct {
    const char *a[3];
    int code;
    const char *err;
  } bad[] = {
      {{"sk/nope"},
       2,
       "mcpconn: unknown skill 'nope' on server sk (it has: good, blobby, rich, "
       "good, bad-digest, bad-size, bad-frontmatter, dynamic)\n"},
      {{"sk/good"}, 2, "mcpconn: sk: 2 skills are named \"good\": give the skill's URI instead\n"},
      {{"zz/good"}, 2, "mcpconn: skills: no server named zz\n"},
      {{"sk/bad-digest"},
       3,
       "mcpconn: server \"sk\": skill \"bad-digest\" (skill://bad-digest/SKILL.md) not loaded: "
       "its SKILL.md does not match the skills/list entry: its digest is sha256:"},
      {{"sk/bad-size"}, 3, "its size is 105 bytes, the skills/list entry says 69\n"},
      {{"sk/bad-frontmatter"}, 3, "field \"description\" differs"},
      {{"sk/rich", "nope.md"},
       2,
       "mcpconn: server \"sk\": skill \"rich\" lists no file \"skill://rich/nope.md\" in its "
       "resources (2 files): not read\n"},
      {{"sk/rich", "../good/SKILL.md"},
       2,
       "file \"../good/SKILL.md\": not a path within the skill"},
      /* The SKILL.md fails its checks: the file is not read either. */
      {{"sk/bad-digest", "references/REF.md"}, 3, "not loaded: its SKILL.md does not match"},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
    if (bad[i].a[1]) RUN_S("skills", bad[i].a[0], bad[i].a[1]);
    else RUN_S("skills", bad[i].a[0]);
    ASSERT_EXIT(&r, bad[i].code);
    assert_one_reason(&r);
    ck_assert_msg(strstr(r.err, bad[i].err), "%s: %s", bad[i].a[0], r.err);
    ck_assert_str_eq(r.out, "");
    run_free(&r);
  }
#undef RUN_S

  /* A server that is down is named, exit 3; one without the extension has
   * no skills, and named alone is exit 2. */
  const char *demo = test_env_path("MCP_DEMO_SERVER");
  RUN(&r, "-q", "--stdio", "/bin/false", "--name", "down", "--stdio", sk, "--name", "sk", "skills");
  ASSERT_EXIT(&r, 3);
  assert_one_reason(&r);
  ck_assert_msg(strstr(r.err, "mcpconn: down: "), "%s", r.err);
  ck_assert_msg(strstr(r.out, "\nsk      rich "), "%s", r.out);
  run_free(&r);
  RUN(&r, "-q", "--stdio", "/bin/false", "--name", "down", "skills", "down/x");
  ASSERT_EXIT(&r, 3);
  assert_one_reason(&r);
  ck_assert_msg(strstr(r.err, "mcpconn: down: "), "%s", r.err);
  run_free(&r);
  RUN(&r, "-q", "--stdio", demo, "--name", "d", "--stdio", sk, "--name", "sk", "skills", "--json");
  ASSERT_EXIT(&r, 0);
  o = parse_out(&r);
  ck_assert_int_eq(json_object_array_length(o), 8);
  json_object_put(o);
  ck_assert_str_eq(r.err, "");
  run_free(&r);
  RUN(&r, "-q", "--stdio", demo, "--name", "d", "skills", "d");
  ASSERT_EXIT(&r, 2);
  assert_one_reason(&r);
  ck_assert_str_eq(r.err, "mcpconn: d: serves no skills (it does not declare the "
                          "io.modelcontextprotocol/skills extension)\n");
  run_free(&r);

  /* On a terminal the table fits its width. */
  unsetenv("COLUMNS");
  setenv("LC_ALL", "C", 1);
  const char *tty[] = {"-q", "--stdio", sk, "--name", "sk", "skills", NULL};
  g_tty_cols = 72;
  run_cli_tty(&r, tty);
  g_tty_cols = 0;
  unsetenv("LC_ALL");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(widest_line(r.out) <= 72, "wider than 72:\n%s", r.out);
  ck_assert_msg(strstr(r.out, "skill://rich/SKILL.md             Rich front...\r\n"), "%s", r.out);
  run_free(&r);

  /* Usage errors, before any server starts. */
  const char *const usage[][5] = {{"skills", "a", "b", "c"}, {"skills", "--bogus"}, {"skills", ""}};
  for (size_t i = 0; i < sizeof(usage) / sizeof(*usage); i++) {
    run_cli(&r, usage[i]);
    ASSERT_EXIT(&r, 2);
    assert_one_reason(&r);
    run_free(&r);
  }
}
END_TEST

/* ---- tasks ---------------------------------------------------------------- */

/* How often |needle| occurs in the file at |path|. */
static int count_in_file(const char *path, const char *needle) {
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  char line[65536];
  int n = 0;
  while (fgets(line, sizeof(line), f))
    for (const char *p = line; (p = strstr(p, needle)); p += strlen(needle)) n++;
  fclose(f);
  return n;
}

/* The server's log holds a tasks/get of task-3-forever (the run following
 * the task has recorded it by then: the record comes before the first
 * poll). */
static void kill_after_first_poll(pid_t pid, void *user) {
  ck_assert(WAIT_UNTIL(
      file_contains(user, "\"method\":\"tasks/get\",\"params\":{\"taskId\":\"task-3-forever\""),
      30000));
  kill(pid, SIGKILL);
}

/*
 * `call` on a task tool and `tasks` against tests/interop/tasks-server.mjs
 * in |era| (stdio; $STATE keeps its tasks across runs, as a remote server
 * would): status lines on stderr and the result, the task recorded in the
 * cache directory and listed by the next run, shown with one tasks/get; a
 * run killed while it follows "forever" leaves the task recorded as
 * working, and `tasks SERVER ID --cancel` ends it with one tasks/cancel,
 * no notifications/cancelled.  On a terminal the status is one line,
 * redrawn, then erased.
 */
static void cli_tasks(const char *era) {
  char cmd[1400], state[1200], logp[1200];
  snprintf(cmd, sizeof(cmd), "node %s/tasks-server.mjs %s", test_env_path("MCP_INTEROP_DIR"), era);
  snprintf(state, sizeof(state), "%s/state.json", g_dir);
  snprintf(logp, sizeof(logp), "%s/server.log", g_dir);
  setenv("STATE", state, 1);
  setenv("LOG", logp, 1);
  struct run r;
#define RUN_T(...) RUN(&r, "--stdio", cmd, "--name", "tk", __VA_ARGS__)
  RUN_T("call", "tk/slow", "n:=4");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "\"slow done 4\""), "%s", r.out);
  ck_assert_str_eq(r.err, "mcpconn: tk: task task-1-slow: working\n"
                          "mcpconn: tk: task task-1-slow: working: step 1\n"
                          "mcpconn: tk: task task-1-slow: working: step 2\n"
                          "mcpconn: tk: task task-1-slow: working: step 3\n"
                          "mcpconn: tk: task task-1-slow: completed\n");
  run_free(&r);
  RUN(&r, "-q", "--stdio", cmd, "--name", "tk", "call", "tk/boom");
  ASSERT_EXIT(&r, 3);
  ck_assert_msg(strstr(r.err, "disk full") && !strstr(r.err, "task task-2-boom: working"), "%s",
                r.err);
  run_free(&r);

  /* The next run lists what the calls recorded. */
  RUN_T("tasks", "tk");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strncmp(r.out, "TASK         TOOL  STATUS     UPDATED  ", 38) == 0 &&
                    strstr(r.out, "\ntask-1-slow  slow  completed  "),
                "%s", r.out);
  ck_assert_msg(strstr(r.out, "\ntask-2-boom  boom  failed     "), "%s", r.out);
  ck_assert_str_eq(r.err, "");
  run_free(&r);
  RUN_T("tasks", "tk", "--json");
  ASSERT_EXIT(&r, 0);
  json_object *o = parse_out(&r);
  ck_assert_int_eq(json_object_array_length(o), 2);
  ck_assert_str_eq(jstr(o, "0.taskId"), "task-1-slow");
  ck_assert_str_eq(jstr(o, "0.server"), "tk");
  ck_assert_str_eq(jstr(o, "0.status"), "completed");
  ck_assert(jtrue(o, "0.recorded"));
  /* A 2025-11-25 server lists its tasks too (here: this run's new process,
   * which read them from $STATE). */
  ck_assert_int_eq(jtrue(o, "1.listed"), strcmp(era, "legacy") == 0);
  json_object_put(o);
  run_free(&r);
  RUN_T("tasks", "tk", "task-1-slow");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strncmp(r.out, "task     task-1-slow\nstatus   completed\n", 40) == 0, "%s", r.out);
  run_free(&r);
  RUN_T("tasks", "tk", "task-9-none");
  ASSERT_EXIT(&r, 3);
  ck_assert_str_eq(r.err, "mcpconn: tk: tasks/get: no task task-9-none (JSON-RPC error -32602)\n");
  run_free(&r);
  RUN_T("tasks", "zz");
  ASSERT_EXIT(&r, 2);
  run_free(&r);

  /* A run that dies while following a task leaves it recorded, working. */
  const char *const forever[] = {"--stdio", cmd, "--name", "tk", "call", "tk/forever", NULL};
  run_cli_ex(&r, forever, kill_after_first_poll, logp);
  ck_assert_int_eq(r.status, 128 + SIGKILL);
  run_free(&r);
  RUN_T("tasks", "tk", "--json");
  o = parse_out(&r);
  ck_assert_str_eq(jstr(o, "2.taskId"), "task-3-forever");
  ck_assert_str_eq(jstr(o, "2.status"), "working");
  json_object_put(o);
  run_free(&r);
  RUN_T("tasks", "tk", "task-3-forever", "--cancel");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "status   cancelled\n"), "%s", r.out);
  ck_assert_int_eq(count_in_file(logp, "\"method\":\"tasks/cancel\""), 1);
  /* None for the task: the only ones are the listen's own, replaced when
   * the call watched the task (push, reason "subscriptions changed"). */
  ck_assert_int_eq(count_in_file(logp, "notifications/cancelled"),
                   count_in_file(logp, "\"reason\":\"subscriptions changed\""));
  run_free(&r);
  RUN_T("tasks", "tk", "--json");
  o = parse_out(&r);
  ck_assert_str_eq(jstr(o, "2.status"), "cancelled");
  json_object_put(o);
  run_free(&r);

  /* On a terminal: one line, redrawn on each change, then erased. */
  const char *const tty[] = {"--stdio", cmd, "--name", "tk", "call", "tk/slow", NULL};
  g_tty_stderr = true;
  run_cli_tty(&r, tty);
  g_tty_stderr = false;
  ASSERT_EXIT(&r, 0);
  const char *a = strstr(r.out, "\rtask task-4-slow: working: step 1\033[K");
  const char *b = a ? strstr(a, "\rtask task-4-slow: completed\033[K\r\033[K") : NULL;
  ck_assert_msg(b && strstr(b, "slow done"), "%s", r.out);
  ck_assert_msg(!strstr(r.out, "mcpconn: tk: task"), "%s", r.out);
  run_free(&r);
#undef RUN_T
  unsetenv("STATE");
  unsetenv("LOG");
}

START_TEST(test_cli_tasks_modern) { cli_tasks("modern"); }
END_TEST
START_TEST(test_cli_tasks_legacy) { cli_tasks("legacy"); }
END_TEST

/* A server without prompts or resources has none to list (-32601 is no
 * error); a server that is down is named, exit 3. */
START_TEST(test_cli_items_servers) {
  char server[1200];
  snprintf(server, sizeof(server), "%s", test_env_path("MCP_FAULT_SERVER"));
  struct run r;
  RUN(&r, "-q", "--stdio", server, "--name", "f", "--stdio", test_env_path("MCP_DEMO_SERVER"),
      "--name", "d", "prompts");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "\nd       greet ") && strstr(r.out, "\nf       prompt0 "), "%s",
                r.out);
  ck_assert_str_eq(r.err, "");
  run_free(&r);
  /* The fault server has no templates (-32601): only d's, and no error. */
  RUN(&r, "-q", "--stdio", server, "--name", "f", "--stdio", test_env_path("MCP_DEMO_SERVER"),
      "--name", "d", "resources", "templates", "--json");
  ASSERT_EXIT(&r, 0);
  json_object *o = parse_out(&r);
  ck_assert_int_eq(json_object_array_length(o), 1);
  ck_assert_str_eq(jstr(o, "0.server"), "d");
  json_object_put(o);
  ck_assert_str_eq(r.err, "");
  run_free(&r);
  /* With two servers, a bare prompt name is ambiguous. */
  RUN(&r, "-q", "--stdio", test_env_path("MCP_DEMO_SERVER"), "--name", "a", "--stdio",
      test_env_path("MCP_DEMO_SERVER"), "--name", "b", "prompts", "get", "greet", "name=x");
  ASSERT_EXIT(&r, 2);
  assert_one_reason(&r);
  ck_assert_msg(strstr(r.err, "SERVER/NAME"), "%s", r.err);
  run_free(&r);
  RUN(&r, "-q", "--stdio", test_env_path("MCP_DEMO_SERVER"), "--name", "a", "--stdio",
      test_env_path("MCP_DEMO_SERVER"), "--name", "b", "prompts", "get", "b/greet", "name=x");
  ASSERT_EXIT(&r, 0);
  ck_assert_str_eq(r.out, "user: Write a casual greeting for x.\n");
  run_free(&r);
  RUN(&r, "--stdio", "/nonexistent/bin/x", "--name", "gone", "--stdio",
      test_env_path("MCP_DEMO_SERVER"), "--name", "d", "resources");
  ASSERT_EXIT(&r, 3);
  ck_assert_msg(strstr(r.out, "demo://readme"), "%s", r.out);
  ck_assert_msg(strncmp(r.err, "mcpconn: gone: ", 15) == 0, "%s", r.err);
  run_free(&r);
}
END_TEST

/* Colour: on a terminal (bold headers, coloured states, red "mcpconn:"),
 * never with NO_COLOR set and not empty, --no-color or on a pipe. */
START_TEST(test_cli_color) {
  const char *demo = test_env_path("MCP_DEMO_SERVER");
  char cmd[2048];
  snprintf(cmd, sizeof(cmd), "'%s'", demo);
  struct run r;
  unsetenv("NO_COLOR");
  setenv("TERM", "xterm", 1);
  const char *servers[] = {"-q", "--stdio", cmd, "--name", "d", "servers", NULL};
  run_cli_tty(&r, servers);
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "\033[1mNAME "), "no bold header: %s", r.out);
  ck_assert_msg(strstr(r.out, "\033[32mready\033[0m"), "no green state: %s", r.out);
  run_free(&r);
  const char *prompts[] = {"-q", "--stdio", cmd, "--name", "d", "prompts", NULL};
  run_cli_tty(&r, prompts);
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "\033[1mSERVER  PROMPT"), "no bold header: %s", r.out);
  ck_assert_msg(strstr(r.out, "greet"), "%s", r.out);
  run_free(&r);
  const char *tools[] = {"-q", "--stdio", cmd, "--name", "d", "tools", NULL};
  run_cli_tty(&r, tools);
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "\033[1mSERVER"), "no bold header: %s", r.out);
  run_free(&r);
  /* An error on a terminal's stderr: a red prefix. */
  const char *bad[] = {"-q",        "--stdio", cmd,           "--name", "d",
                       "resources", "read",    "demo://none", NULL};
  g_tty_stderr = true;
  run_cli_tty(&r, bad);
  ASSERT_EXIT(&r, 2);
  ck_assert_msg(strstr(r.out, "\033[1;31mmcpconn:\033[0m unknown resource"), "%s", r.out);
  run_free(&r);

  /* With colour on, a hostile server's text still gets no escape through:
   * without our own SGR sequences, the output is terminal-safe. */
  char evil[1200];
  snprintf(evil, sizeof(evil), "%s --evil-text", test_env_path("MCP_FAULT_SERVER"));
  const char *evil_cmds[][3] = {{"tools"}, {"servers"}, {"prompts"}, {"resources"}};
  for (size_t i = 0; i < sizeof(evil_cmds) / sizeof(*evil_cmds); i++) {
    const char *args[] = {"-q", "--stdio", evil, "--name", "evil", evil_cmds[i][0], NULL};
    run_cli_tty(&r, args);
    static const char *const ours[] = {"\033[1;31m", "\033[1m",  "\033[0m", "\033[2m",
                                       "\033[31m",   "\033[32m", "\033[33m"};
    size_t found = 0;
    for (size_t k = 0; k < sizeof(ours) / sizeof(*ours); k++)
      for (char *p; (p = strstr(r.out, ours[k]));) {
        memmove(p, p + strlen(ours[k]), strlen(p + strlen(ours[k])) + 1);
        found++;
      }
    ck_assert_msg(found > 0, "%s: no colour: %s", evil_cmds[i][0], r.out);
    assert_terminal_safe(evil_cmds[i][0], r.out);
    run_free(&r);
  }

  /* NO_COLOR=1, --no-color: none at all, on stdout or stderr. */
  setenv("NO_COLOR", "1", 1);
  run_cli_tty(&r, servers);
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(!strchr(r.out, '\033') && strstr(r.out, "ready"), "%s", r.out);
  run_free(&r);
  run_cli_tty(&r, bad);
  ASSERT_EXIT(&r, 2);
  ck_assert_msg(!strchr(r.out, '\033') && strstr(r.out, "mcpconn: unknown resource"), "%s", r.out);
  run_free(&r);
  /* An empty NO_COLOR does not count. */
  setenv("NO_COLOR", "", 1);
  run_cli_tty(&r, servers);
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "\033[32mready"), "%s", r.out);
  run_free(&r);
  unsetenv("NO_COLOR");
  const char *plain[] = {"-q", "--no-color", "--stdio", cmd, "--name", "d", "servers", NULL};
  run_cli_tty(&r, plain);
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(!strchr(r.out, '\033') && strstr(r.out, "ready"), "%s", r.out);
  run_free(&r);
  g_tty_stderr = false;

  /* A pipe: none. */
  run_cli(&r, servers);
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(!strchr(r.out, '\033') && strstr(r.out, "ready"), "%s", r.out);
  run_free(&r);
  run_cli(&r, bad);
  ASSERT_EXIT(&r, 2);
  ck_assert_msg(!strchr(r.err, '\033'), "%s", r.err);
  run_free(&r);
}
END_TEST

/* ---- config import (issue 19): --input, --config-format, skipped servers,
 * display names.  Kept apart from the tests above; the "mcpconn-config"
 * test case runs them. ----------------------------------------------------- */

/* A VS Code file whose header needs ${input:api-key} resolves with --input
 * (the captured request carries the value) and without it is skipped with a
 * warning naming the file, the server and the field, never sent. */
START_TEST(test_cfgimp_input) {
  const char *demo = test_env_path("MCP_DEMO_SERVER");
  struct capture cap;
  capture_start(&cap);
  char text[8192];
  snprintf(text, sizeof(text),
           "{\"inputs\": [{\"id\": \"api-key\", \"type\": \"promptString\"}],"
           " \"servers\": {\"web\": {\"type\": \"http\", \"url\": \"http://127.0.0.1:%d/mcp\","
           " \"headers\": {\"Authorization\": \"Bearer ${input:api-key}\"}},"
           " \"local\": {\"command\": \"%s\"}}}",
           cap.port, demo);
  char *cfg = write_temp("vscode-input.json", text);
  struct run r;
  /* Without --input: "web" is skipped, "local" still runs. */
  RUN(&r, "--config", cfg, "ping");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "local: ok") && !strstr(r.out, "web"), "%s", r.out);
  ck_assert_msg(strstr(r.err, "warning") && strstr(r.err, cfg) && strstr(r.err, "\"web\"") &&
                    strstr(r.err, "\"headers\"") && strstr(r.err, "${input:api-key}"),
                "%s", r.err);
  run_free(&r);
  pthread_mutex_lock(&cap.mu);
  ck_assert(!cap.got);
  pthread_mutex_unlock(&cap.mu);

  RUN(&r, "--config", cfg, "--input", "other=1", "--input", "api-key=s3cret v", "--timeout",
      "10000", "-s", "web", "ping");
  ASSERT_EXIT(&r, 3); /* the capture server answers 500 */
  ck_assert_msg(strstr(r.err, "web:") && !strstr(r.err, "input"), "%s", r.err);
  run_free(&r);
  capture_stop(&cap);
  ck_assert(cap.got);
  ck_assert_msg(strcasestr(cap.head, "\r\nAuthorization: Bearer s3cret v\r\n"), "%s", cap.head);

  RUN(&r, "--input", "novalue", "--config", cfg, "tools");
  ASSERT_EXIT(&r, 2);
  assert_one_reason(&r);
  ck_assert_msg(strstr(r.err, "--input"), "%s", r.err);
  run_free(&r);
  RUN(&r, "--input", "=v", "--config", cfg, "tools");
  ASSERT_EXIT(&r, 2);
  run_free(&r);
  unlink(cfg);
  free(cfg);
}
END_TEST

/* --config-format overrides the shape, both ways; an unknown one is a usage
 * error naming it. */
START_TEST(test_cfgimp_format) {
  const char *demo = test_env_path("MCP_DEMO_SERVER");
  struct run r;
  RUN(&r, "--config-format", "vs-code", "tools");
  ASSERT_EXIT(&r, 2);
  assert_one_reason(&r);
  ck_assert_msg(strstr(r.err, "vs-code") && strstr(r.err, "claude-desktop"), "%s", r.err);
  run_free(&r);

  char text[8192];
  /* Cline's shape (autoApprove): fine as Cline's, strict as mcpconn's. */
  snprintf(text, sizeof(text),
           "{\"mcpServers\": {\"c\": {\"command\": \"%s\", \"autoApprove\": []}}}", demo);
  char *cline = write_temp("cline-shape.json", text);
  RUN(&r, "--config", cline, "tools");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "mcp__c_echo"), "%s", r.out);
  run_free(&r);
  RUN(&r, "--config-format", "mcpconn", "--config", cline, "tools");
  ASSERT_EXIT(&r, 2);
  assert_one_reason(&r);
  ck_assert_msg(strstr(r.err, "autoApprove"), "%s", r.err);
  run_free(&r);

  /* mcpconn's shape with a field it does not know: an error, unless read
   * as another client's file (unknown fields skipped). */
  snprintf(text, sizeof(text), "{\"mcpServers\": {\"n\": {\"command\": \"%s\", \"note\": 1}}}",
           demo);
  char *plain = write_temp("plain-shape.json", text);
  RUN(&r, "--config", plain, "tools");
  ASSERT_EXIT(&r, 2);
  ck_assert_msg(strstr(r.err, "note"), "%s", r.err);
  run_free(&r);
  RUN(&r, "--config", plain, "--config-format", "claude-code", "tools");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "mcp__n_echo"), "%s", r.out);
  run_free(&r);
  unlink(cline);
  unlink(plain);
  free(cline);
  free(plain);
}
END_TEST

/* One bad server in a --config file is skipped with a warning when others
 * are usable; config files whose every server is skipped are an error
 * naming the files and the reasons, not the demo server. */
START_TEST(test_cfgimp_skipped) {
  const char *demo = test_env_path("MCP_DEMO_SERVER");
  char text[8192];
  snprintf(text, sizeof(text),
           "{\"mcpServers\": {\"good\": {\"command\": \"%s\"},"
           " \"bad\": {\"comand\": \"x\"}}}",
           demo);
  char *cfg = write_temp("one-bad.json", text);
  struct run r;
  RUN(&r, "--config", cfg, "tools");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "mcp__good_echo"), "%s", r.out);
  ck_assert_msg(strstr(r.err, "warning: ") && strstr(r.err, cfg) && strstr(r.err, "\"bad\"") &&
                    strstr(r.err, "comand") && strstr(r.err, "skipped"),
                "%s", r.err);
  run_free(&r);
  RUN(&r, "-q", "--config", cfg, "call", "good/echo", "text=hi");
  ASSERT_EXIT(&r, 0);
  ck_assert_str_eq(r.err, "");
  run_free(&r);
  unlink(cfg);
  free(cfg);

  /* Discovery: the user's file has servers, none usable. */
  free(write_file("{\"mcpServers\": {\"x\": {\"comand\": 1}, \"y\": {\"url\": \"ftp://h\"}}}",
                  "%s/.config/mcpconn/mcp.json", g_home));
  RUN(&r, "tools");
  ASSERT_EXIT(&r, 2);
  ck_assert_msg(!strstr(r.err, "demo") && !strstr(r.out, "demo"), "%s", r.err);
  ck_assert_msg(strstr(r.err, "no usable server") && strstr(r.err, "/.config/mcpconn/mcp.json") &&
                    strstr(r.err, "\"x\"") && strstr(r.err, "\"y\""),
                "%s", r.err);
  run_free(&r);
  RUN(&r, "-q", "servers");
  ASSERT_EXIT(&r, 2);
  ck_assert_msg(strstr(r.err, "\"x\"") && strstr(r.err, "no usable server"), "%s", r.err);
  run_free(&r);
}
END_TEST

/* A server whose name was folded answers to its display name too. */
START_TEST(test_cfgimp_display_name) {
  const char *demo = test_env_path("MCP_DEMO_SERVER");
  char text[8192];
  snprintf(text, sizeof(text),
           "{\"mcpServers\": {\"My Server\": {\"command\": \"%s\"},"
           " \"io.github.x/y\": {\"command\": \"%s\"}}}",
           demo, demo);
  char *cfg = write_temp("names.json", text);
  struct run r;
  RUN(&r, "--config", cfg, "call", "My Server/echo", "text=spaced");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "spaced"), "%s", r.out);
  run_free(&r);
  RUN(&r, "--config", cfg, "call", "My_Server/echo", "text=folded");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "folded"), "%s", r.out);
  run_free(&r);
  RUN(&r, "--config", cfg, "call", "io.github.x/y/echo", "text=slashed");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "slashed"), "%s", r.out);
  run_free(&r);
  RUN(&r, "--config", cfg, "servers", "--json");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "\"displayName\": \"My Server\"") ||
                    strstr(r.out, "\"displayName\":\"My Server\""),
                "%s", r.out);
  run_free(&r);
  unlink(cfg);
  free(cfg);
}
END_TEST

/* Tool filters (here Gemini's excludeTools, includeTools): a filtered tool
 * is neither listed nor callable. */
START_TEST(test_cfgimp_tool_filters) {
  const char *demo = test_env_path("MCP_DEMO_SERVER");
  char text[8192];
  snprintf(text, sizeof(text),
           "{\"mcpServers\": {\"g\": {\"command\": \"%s\", \"excludeTools\": [\"add\"]},"
           " \"h\": {\"command\": \"%s\", \"includeTools\": [\"add\"]}}}",
           demo, demo);
  char *cfg = write_temp("gemini-filters.json", text);
  struct run r;
  RUN(&r, "--config", cfg, "tools");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "mcp__g_echo") && !strstr(r.out, "mcp__g_add"), "%s", r.out);
  ck_assert_msg(strstr(r.out, "mcp__h_add") && !strstr(r.out, "mcp__h_echo"), "%s", r.out);
  run_free(&r);
  RUN(&r, "--config", cfg, "call", "mcp__h_add", "{\"a\":2,\"b\":3}");
  ASSERT_EXIT(&r, 0);
  ck_assert_msg(strstr(r.out, "5"), "%s", r.out);
  run_free(&r);
  RUN(&r, "-q", "--config", cfg, "call", "g/add", "{\"a\":2,\"b\":3}");
  ASSERT_EXIT(&r, 2);
  assert_one_reason(&r);
  ck_assert_msg(strstr(r.err, "add") && strstr(r.err, "g"), "%s", r.err);
  run_free(&r);
  RUN(&r, "-q", "--config", cfg, "call", "mcp__g_add", "{\"a\":2,\"b\":3}");
  ASSERT_EXIT(&r, 2);
  run_free(&r);
  unlink(cfg);
  free(cfg);
}
END_TEST

static void add_config_import_tests(Suite *s) {
  TCase *tc = tcase_create("mcpconn-config");
  tcase_set_timeout(tc, 120);
  tcase_add_checked_fixture(tc, cli_setup, cli_teardown);
  tcase_add_test(tc, test_cfgimp_input);
  tcase_add_test(tc, test_cfgimp_format);
  tcase_add_test(tc, test_cfgimp_skipped);
  tcase_add_test(tc, test_cfgimp_display_name);
  tcase_add_test(tc, test_cfgimp_tool_filters);
  suite_add_tcase(s, tc);
}

/* ---- end of the config import block ------------------------------------ */

/* Issue 21: a call whose server is down fails at once with exit 3 and the
 * real cause, named with the server, well inside --timeout 20000: a name
 * that cannot resolve (.invalid, RFC 6761) and a port that resets every
 * connection (SO_LINGER 0, then close). */
static void *reset_all(void *arg) {
  int lfd = *(int *)arg;
  for (int fd; (fd = accept(lfd, NULL, NULL)) >= 0;) {
    struct linger lg = {1, 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    close(fd);
  }
  return NULL;
}

START_TEST(test_cli_call_down_causes) {
  struct run r;
  RUN(&r, "--url", "http://mcpconn-test.invalid:8080/mcp", "--name", "dns", "--timeout", "20000",
      "call", "echo", "{}");
  ASSERT_EXIT(&r, 3);
  assert_one_reason(&r);
  ck_assert_msg(strstr(r.err, "dns:") && strstr(r.err, "cannot resolve mcpconn-test.invalid"), "%s",
                r.err);
  ck_assert_msg(!strstr(r.err, "timed out") && r.ms < 10000, "%lld ms: %s", r.ms, r.err);
  run_free(&r);

  int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in sa = {0};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
  ck_assert_int_eq(listen(lfd, 64), 0);
  socklen_t sl = sizeof(sa);
  getsockname(lfd, (struct sockaddr *)&sa, &sl);
  pthread_t th;
  ck_assert_int_eq(pthread_create(&th, NULL, reset_all, &lfd), 0);
  char url[64];
  snprintf(url, sizeof(url), "http://127.0.0.1:%d/mcp", ntohs(sa.sin_port));
  RUN(&r, "--url", url, "--name", "rst", "--timeout", "20000", "call", "echo", "{}");
  ASSERT_EXIT(&r, 3);
  assert_one_reason(&r);
  ck_assert_msg(strstr(r.err, "rst:") && strstr(r.err, "connection reset"), "%s", r.err);
  ck_assert_msg(!strstr(r.err, "timed out") && r.ms < 10000, "%lld ms: %s", r.ms, r.err);
  run_free(&r);
  shutdown(lfd, SHUT_RDWR);
  pthread_join(th, NULL);
  close(lfd);
}
END_TEST

static Suite *cli_suite(void) {
  Suite *s = suite_create("cli");
  TCase *demo = tcase_create("demo-server");
  tcase_set_timeout(demo, 60);
  tcase_add_test(demo, test_demo_initialize);
  tcase_add_test(demo, test_demo_tools_list);
  tcase_add_test(demo, test_demo_tools);
  tcase_add_test(demo, test_demo_protocol_errors);
  tcase_add_test(demo, test_demo_prompts_resources);
  tcase_add_test(demo, test_demo_huge_line);
  tcase_add_test(demo, test_demo_sleep_concurrent);
  tcase_add_test(demo, test_demo_sleep_progress_cancel);
  tcase_add_test(demo, test_demo_eof);
  tcase_add_test(demo, test_demo_epipe);
  tcase_add_test(demo, test_demo_flags);
  suite_add_tcase(s, demo);

  TCase *cli = tcase_create("mcpconn");
  tcase_set_timeout(cli, 120);
  tcase_add_checked_fixture(cli, cli_setup, cli_teardown);
  tcase_add_test(cli, test_cli_tools_default);
  tcase_add_test(cli, test_cli_tools_json);
  tcase_add_test(cli, test_cli_call_echo);
  tcase_add_test(cli, test_cli_call_add);
  tcase_add_test(cli, test_cli_call_fail);
  tcase_add_test(cli, test_cli_call_usage_errors);
  tcase_add_test(cli, test_cli_spawn_failure);
  tcase_add_test(cli, test_cli_timeout);
  tcase_add_test(cli, test_cli_ping);
  tcase_add_test(cli, test_cli_request);
  tcase_add_test(cli, test_cli_config_two_servers);
  tcase_add_test(cli, test_cli_config_env_cwd);
  tcase_add_test(cli, test_cli_config_errors);
  tcase_add_test(cli, test_cli_call_down_causes);
  tcase_add_test(cli, test_cli_usage);
  tcase_add_test(cli, test_cli_stdio_words);
  tcase_add_test(cli, test_cli_sigint_cancels);
  tcase_add_test(cli, test_cli_call_public_name);
  tcase_add_test(cli, test_cli_servers);
  tcase_add_test(cli, test_cli_protocol);
  tcase_add_test(cli, test_cli_discovery);
  tcase_add_test(cli, test_cli_import);
  tcase_add_test(cli, test_cli_trust);
  tcase_add_test(cli, test_cli_trust_prompt);
  tcase_add_test(cli, test_cli_deferred);
  tcase_add_test(cli, test_cli_tty_default);
  tcase_add_test(cli, test_cli_tty_live);
  tcase_add_test(cli, test_cli_verbose);
  tcase_add_test(cli, test_cli_http_usage);
  tcase_add_test(cli, test_cli_header_sent);
  tcase_add_test(cli, test_cli_evil_text);
  tcase_add_test(cli, test_cli_diagnostics_not_log);
  tcase_add_test(cli, test_cli_trust_store_warning);
  tcase_add_test(cli, test_cli_closed_pipe);
  tcase_add_test(cli, test_cli_tty_width);
  tcase_add_test(cli, test_cli_default_names);
  tcase_add_test(cli, test_cli_stdio_env);
  tcase_add_test(cli, test_cli_call_key_value);
  tcase_add_test(cli, test_cli_prompts_resources);
  tcase_add_test(cli, test_cli_items_servers);
  tcase_add_test(cli, test_cli_skills);
  tcase_add_test(cli, test_cli_color);
  suite_add_tcase(s, cli);

  TCase *tk = tcase_create("tasks");
  tcase_set_timeout(tk, 120);
  tcase_add_checked_fixture(tk, cli_setup, cli_teardown);
  tcase_add_test(tk, test_cli_tasks_modern);
  tcase_add_test(tk, test_cli_tasks_legacy);
  suite_add_tcase(s, tk);

  /* Against the TypeScript SDK's servers (tests/interop). */
  TCase *http = tcase_create("mcpconn-http");
  tcase_set_timeout(http, 180);
  tcase_add_checked_fixture(http, cli_setup, cli_teardown);
  tcase_add_test(http, test_cli_url);
  tcase_add_test(http, test_cli_url_sse);
  tcase_add_test(http, test_cli_url_tls);
  tcase_add_test(http, test_cli_config_http);
  suite_add_tcase(s, http);
  add_config_import_tests(s);
  return s;
}

int main(void) {
  /* Writing to a child that has exited must fail, not kill the test. */
  signal(SIGPIPE, SIG_IGN);
  return run_suite(cli_suite());
}
