/* SPDX-License-Identifier: MIT */
/*
 * mcp-fault-server: a scriptable MCP server on stdio for tests.
 *
 * It speaks newline-delimited JSON-RPC on stdin/stdout and behaves like a
 * normal server unless flags make it misbehave.  Other suites depend on
 * these flags, so they are a contract:
 *
 *   --garbage            before the initialize response, write a non-JSON
 *                        line, a non-object (42), an object without
 *                        "jsonrpc", a response to an unknown id, an empty
 *                        line and a line of spaces
 *   --oversize N         before each tools/call response, write one line of
 *                        N bytes (a notification padded with 'x')
 *   --crash-on-call      any tools/call writes "about to crash" to stderr
 *                        and exits with status 3 (the `crash` tool always does)
 *   --stderr-flood BYTES write BYTES bytes of text lines to stderr at start,
 *                        before reading stdin
 *   --stop-reading       stop reading stdin after notifications/initialized
 *   --ignore-sigterm     ignore SIGTERM, and block instead of exiting on
 *                        stdin EOF: only SIGKILL ends it
 *   --slow-init MS       wait MS before answering initialize
 *   --init-gate FILE     answer initialize only once FILE exists (a test
 *                        holds the server "connecting" until it says so)
 *   --version V          answer initialize with protocolVersion V
 *   --exit-after-init    exit(0) on notifications/initialized
 *   --batch              wrap every response in a one-element array
 *   --page-size N        tools/list returns N tools per page (nextCursor)
 *
 *   --crash-every N      every Nth tools/call crashes like --crash-on-call
 *   --exit-after-list    exits with status 0 right after answering tools/list
 *   --evil-text          server texts carry terminal escapes: ESC[2J (clear
 *                        screen), ESC]0;pwned BEL (window title), U+202E
 *                        (right-to-left override), U+2066, U+200B, U+009B
 *                        (C1 CSI) and DEL, in the instructions, the tool
 *                        `evil\u202eexe` (name and description), the tool
 *                        `esc\x1b[2Jname`, stderr at start and before a
 *                        crash (also a raw 0x9b byte there), and the tools
 *                        evil_error (a JSON-RPC error with that message),
 *                        evil_result (isError with that text) and evil_ok
 *                        (that text as a normal result)
 *   --run-log FILE       appends "<tool>\n" to FILE for every tools/call
 *                        received, before anything else happens to it (a
 *                        crash included), so a test can count the runs
 *
 * Hostile listings and responses (tests/check_hostile_lists.c):
 *   --repeat-cursor BYTES  every tools/list page has the same nextCursor: ESC
 *                        "[2J" then 'c' up to BYTES bytes
 *   --endless-pages N    tools/list never ends: every page has N new tools
 *                        and a new nextCursor
 *   --huge-page BYTES    every tools/list page also carries a tool whose
 *                        description is BYTES bytes
 *   --page-delay MS      wait MS before answering each tools/list page
 *   --bad-response KIND  answer every tools/call with a malformed response
 *                        that still has the request's id: nul (a raw NUL in
 *                        a string), deep (result nested 200 deep), both
 *                        (result and error), float-id (the id as N.0),
 *                        not-object (result 42), bad-utf8 (a raw 0xff byte in
 *                        the text), bad-utf8-error (the same in an error's
 *                        message)
 *   --hang-list-after N  tools/list requests after the Nth are never
 *                        answered (with --fault-log, "stdio-list-hang" is
 *                        appended to FILE when one arrives)
 *
 *
 * Floods and oversized answers (tests/check_inbound.c):
 *   --flood-pings N      on notifications/initialized send N ping requests
 *                        (ids 1000000...), then the notification
 *                        notifications/message {"data":"flood done"}; with
 *                        --stop-reading it stops reading after that
 *   --flood-notifications N  the same with N notifications/message
 *                        {"level":"info","data":<i>}
 *   --flood-requests N   the same with N roots/list requests; the `flood_stats`
 *                        tool answers "results=R errors=E busy=B" for the
 *                        answers to the flood's requests read so far (B: errors
 *                        with code -32000)
 *   --oversize-response N  every tools/call answer is one line of about N
 *                        bytes: {"jsonrpc","id","result":{"content":[{"text":
 *                        "xxx..."}]}} with the id before the result
 *   --oversize-id-last   ... with the id after the result instead
 *   --flood-before-answer N  before each tools/call answer send N ping
 *                        requests (ids 2000000...), without reading stdin
 *
 * Chaos, for the soak (tests/soak):
 *   --chaos SEED         each tools/call, with probability P/1000, gets one
 *   --chaos-permille P   fault (default P 100) chosen by a splitmix64
 *                        generator seeded with SEED: crash (as the `crash`
 *                        tool), garbage (the --garbage lines, then the
 *                        answer), stall (answer after 0.5-2.5 s), stderr
 *                        flood (256 KiB, then the answer) or hang (this
 *                        call is never answered)
 *   --fault-log FILE     appends "stdio-<fault>\n" to FILE per fault
 * Tools: echo {text} (annotated readOnlyHint and idempotentHint), crash, ask, notify {count}, hang, grow (adds the tool
 * `extra`, a second resource and a second prompt, and sends the three
 * list_changed notifications), and progress
 * {steps, ms}, which is callable but not listed (tools/list names the first
 * five).  See each handler below.
 *
 * Standalone: links json-c only.  One thread; a small line reader over
 * read(2) lets the tools that wait for the client also poll with timeouts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <json.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/stat.h>

#define CHUNK 65536

/* ---- options ---------------------------------------------------------- */

static struct {
  bool garbage;
  long long oversize; /* 0: off */
  bool crash_on_call;
  long long stderr_flood;
  bool stop_reading;
  bool ignore_sigterm;
  long slow_init_ms;
  const char *init_gate;
  const char *version;
  bool exit_after_init;
  bool batch;
  int page_size;         /* 0: everything on one page */
  long long crash_every; /* 0: off; else the Nth, 2Nth... tools/call crashes */
  bool exit_after_list;  /* exit(0) right after answering tools/list */
  bool evil_text;        /* terminal escapes in server texts */
  uint64_t chaos;        /* splitmix64 state; 0: no chaos */
  int chaos_permille;
  const char *fault_log;
  const char *run_log;
  long long repeat_cursor; /* 0: off; else the cursor's length */
  long long endless_pages; /* 0: off; else tools per page */
  long long huge_page;     /* 0: off; else the big description's length */
  long page_delay_ms;
  const char *bad_response;  /* NULL: off */
  long long hang_list_after; /* 0: off */
  long long flood_pings, flood_notifications, flood_requests;
  long long flood_before_answer; /* pings before each tools/call answer */
  long long oversize_response;
  bool oversize_id_last;
} opt;

/* Answers read to --flood-* requests. */
static long long flood_results, flood_errors, flood_busy;

/* The `grow` tool adds the `extra` tool to tools/list. */
static bool grown;
static long long ncalls;

static void usage(void) {
  fprintf(stderr,
          "usage: mcp-fault-server [--garbage] [--oversize N] "
          "[--crash-on-call] [--stderr-flood BYTES] [--stop-reading] "
          "[--ignore-sigterm] [--slow-init MS] [--version V] "
          "[--exit-after-init] [--batch] [--page-size N] [--crash-every N] [--exit-after-list]\n"
          "       [--evil-text]\n"
          "       [--chaos SEED] [--chaos-permille P] [--fault-log FILE] [--run-log FILE]\n"
          "       [--repeat-cursor BYTES] [--endless-pages N] [--huge-page BYTES]\n"
          "       [--page-delay MS] [--bad-response KIND] [--hang-list-after N]\n"
          "       [--flood-pings N] [--flood-notifications N] [--flood-requests N]\n"
          "       [--oversize-response N] [--oversize-id-last]\n");
  exit(2);
}

static long long num_arg(int argc, char **argv, int *i) {
  if (*i + 1 >= argc) usage();
  char *end;
  errno = 0;
  long long v = strtoll(argv[++*i], &end, 10);
  if (errno || *end || v < 0) usage();
  return v;
}

static void parse_args(int argc, char **argv) {
  opt.chaos_permille = 100;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--garbage")) opt.garbage = true;
    else if (!strcmp(a, "--oversize")) opt.oversize = num_arg(argc, argv, &i);
    else if (!strcmp(a, "--crash-on-call")) opt.crash_on_call = true;
    else if (!strcmp(a, "--stderr-flood")) opt.stderr_flood = num_arg(argc, argv, &i);
    else if (!strcmp(a, "--stop-reading")) opt.stop_reading = true;
    else if (!strcmp(a, "--ignore-sigterm")) opt.ignore_sigterm = true;
    else if (!strcmp(a, "--slow-init")) opt.slow_init_ms = (long)num_arg(argc, argv, &i);
    else if (!strcmp(a, "--init-gate")) {
      if (i + 1 >= argc) usage();
      opt.init_gate = argv[++i];
    } else if (!strcmp(a, "--version")) {
      if (i + 1 >= argc) usage();
      opt.version = argv[++i];
    } else if (!strcmp(a, "--exit-after-init")) opt.exit_after_init = true;
    else if (!strcmp(a, "--batch")) opt.batch = true;
    else if (!strcmp(a, "--page-size")) opt.page_size = (int)num_arg(argc, argv, &i);
    else if (!strcmp(a, "--crash-every")) opt.crash_every = num_arg(argc, argv, &i);
    else if (!strcmp(a, "--exit-after-list")) opt.exit_after_list = true;
    else if (!strcmp(a, "--evil-text")) opt.evil_text = true;
    else if (!strcmp(a, "--chaos")) {
      /* splitmix64 of the seed: never 0, different for nearby seeds */
      uint64_t z = (uint64_t)num_arg(argc, argv, &i) + 0x9e3779b97f4a7c15ull;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
      opt.chaos = (z ^ (z >> 31)) | 1;
    } else if (!strcmp(a, "--chaos-permille")) opt.chaos_permille = (int)num_arg(argc, argv, &i);
    else if (!strcmp(a, "--run-log")) {
      if (i + 1 >= argc) usage();
      opt.run_log = argv[++i];
    } else if (!strcmp(a, "--flood-pings")) opt.flood_pings = num_arg(argc, argv, &i);
    else if (!strcmp(a, "--flood-before-answer")) opt.flood_before_answer = num_arg(argc, argv, &i);
    else if (!strcmp(a, "--flood-notifications")) opt.flood_notifications = num_arg(argc, argv, &i);
    else if (!strcmp(a, "--flood-requests")) opt.flood_requests = num_arg(argc, argv, &i);
    else if (!strcmp(a, "--oversize-response")) opt.oversize_response = num_arg(argc, argv, &i);
    else if (!strcmp(a, "--oversize-id-last")) opt.oversize_id_last = true;
    else if (!strcmp(a, "--fault-log")) {
      if (i + 1 >= argc) usage();
      opt.fault_log = argv[++i];
    } else if (!strcmp(a, "--repeat-cursor")) opt.repeat_cursor = num_arg(argc, argv, &i);
    else if (!strcmp(a, "--endless-pages")) opt.endless_pages = num_arg(argc, argv, &i);
    else if (!strcmp(a, "--huge-page")) opt.huge_page = num_arg(argc, argv, &i);
    else if (!strcmp(a, "--page-delay")) opt.page_delay_ms = (long)num_arg(argc, argv, &i);
    else if (!strcmp(a, "--hang-list-after")) opt.hang_list_after = num_arg(argc, argv, &i);
    else if (!strcmp(a, "--bad-response")) {
      if (i + 1 >= argc) usage();
      opt.bad_response = argv[++i];
    } else usage();
  }
}

/* With --fault-log, the how-many-th start of a server with this seed
 * (counted in FILE.lives-SEED): a restarted server then continues with new
 * faults instead of repeating its first life's, and the same seed still
 * gives the same schedule per life. */
static uint64_t chaos_life(const char *log, uint64_t seed) {
  if (!log) return 0;
  char path[4096];
  snprintf(path, sizeof(path), "%s.lives-%llu", log, (unsigned long long)seed);
  int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return 0;
  struct stat sb;
  uint64_t n = write(fd, "x", 1) == 1 && fstat(fd, &sb) == 0 ? (uint64_t)sb.st_size : 0;
  close(fd);
  return n;
}

/* ---- output ------------------------------------------------------------ */

static void write_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      _exit(4); /* the client went away */
    }
    p += w;
    n -= (size_t)w;
  }
}

static void write_line(const char *s) {
  size_t n = strlen(s);
  char *line = malloc(n + 1);
  if (!line) abort();
  memcpy(line, s, n);
  line[n] = '\n';
  write_all(1, line, n + 1); /* one write, so a line is never split */
  free(line);
}

/* Sends |msg| and drops the reference. */
static void send_msg(json_object *msg) {
  write_line(
      json_object_to_json_string_ext(msg, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
  json_object_put(msg);
}

static json_object *new_msg(void) {
  json_object *m = json_object_new_object();
  json_object_object_add(m, "jsonrpc", json_object_new_string("2.0"));
  return m;
}

/* Sends a response; |result| is stolen.  --batch wraps it in an array. */
static void send_result(json_object *id, json_object *result) {
  json_object *m = new_msg();
  json_object_object_add(m, "id", json_object_get(id));
  json_object_object_add(m, "result", result);
  if (opt.batch) {
    json_object *arr = json_object_new_array();
    json_object_array_add(arr, m);
    m = arr;
  }
  send_msg(m);
}

static void send_error(json_object *id, int code, const char *message) {
  json_object *m = new_msg();
  json_object *e = json_object_new_object();
  json_object_object_add(e, "code", json_object_new_int(code));
  json_object_object_add(e, "message", json_object_new_string(message));
  json_object_object_add(m, "id", id ? json_object_get(id) : NULL);
  json_object_object_add(m, "error", e);
  if (opt.batch) {
    json_object *arr = json_object_new_array();
    json_object_array_add(arr, m);
    m = arr;
  }
  send_msg(m);
}

/* Sends a request or notification (id NULL); |params| is stolen. */
static void send_call(json_object *id, const char *method, json_object *params) {
  json_object *m = new_msg();
  if (id) json_object_object_add(m, "id", id);
  json_object_object_add(m, "method", json_object_new_string(method));
  if (params) json_object_object_add(m, "params", params);
  send_msg(m);
}

static json_object *text_content(const char *text) {
  json_object *r = json_object_new_object();
  json_object *content = json_object_new_array();
  json_object *item = json_object_new_object();
  json_object_object_add(item, "type", json_object_new_string("text"));
  json_object_object_add(item, "text", json_object_new_string(text));
  json_object_array_add(content, item);
  json_object_object_add(r, "content", content);
  return r;
}

/* --evil-text: what a hostile server puts in its texts (valid UTF-8). */
#define EVIL_TEXT \
  "\x1b[2J\x1b]0;pwned\x07 rtl:\xe2\x80\xae lri:\xe2\x81\xa6 zw:\xe2\x80\x8b " \
  "csi:\xc2\x9b" \
  "31m del:\x7f end"

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
  }
}

static long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Blocks forever; only a signal ends the process. */
static void block_forever(void) __attribute__((noreturn));
static void block_forever(void) {
  for (;;) pause();
}

/* ---- input ------------------------------------------------------------- */

static char *inbuf;
static size_t inlen, incap;
static bool in_eof;

/* Messages read while a tool waited for something else, handled later. */
static json_object *backlog[256];
static size_t backlog_n;

static void backlog_push(json_object *m) {
  if (backlog_n == sizeof(backlog) / sizeof(backlog[0])) {
    json_object_put(m); /* a test flooding us mid-tool; drop */
    return;
  }
  backlog[backlog_n++] = m;
}

static json_object *backlog_pop(void) {
  if (!backlog_n) return NULL;
  json_object *m = backlog[0];
  memmove(backlog, backlog + 1, --backlog_n * sizeof(backlog[0]));
  return m;
}

/*
 * Returns the next non-empty line (malloc'd, without "\n"), or NULL when
 * |timeout_ms| passed (-1: wait forever) or stdin reached EOF (in_eof).
 */
static char *read_line(long timeout_ms) {
  long long end = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
  for (;;) {
    char *nl = inlen ? memchr(inbuf, '\n', inlen) : NULL;
    if (nl) {
      size_t n = (size_t)(nl - inbuf);
      char *line = strndup(inbuf, n);
      memmove(inbuf, nl + 1, inlen - n - 1);
      inlen -= n + 1;
      if (n && line[n - 1] == '\r') line[n - 1] = '\0';
      if (line[strspn(line, " \t")] == '\0') {
        free(line);
        continue;
      }
      return line;
    }
    if (in_eof) return NULL;
    int wait = -1;
    if (end >= 0) {
      long long left = end - now_ms();
      if (left <= 0) return NULL;
      wait = (int)left;
    }
    struct pollfd pf = {0, POLLIN, 0};
    int r = poll(&pf, 1, wait);
    if (r < 0 && errno != EINTR) exit(5);
    if (r <= 0) continue;
    if (incap - inlen < CHUNK) {
      incap = incap * 2 + CHUNK;
      inbuf = realloc(inbuf, incap);
      if (!inbuf) abort();
    }
    ssize_t got = read(0, inbuf + inlen, CHUNK);
    if (got < 0 && errno != EINTR && errno != EAGAIN) exit(5);
    if (got == 0) in_eof = true;
    if (got > 0) inlen += (size_t)got;
  }
}

/* Reads one message: NULL on timeout or EOF.  Unparseable lines get a
 * -32700 answer and are skipped. */
static json_object *read_message(long timeout_ms) {
  for (;;) {
    char *line = read_line(timeout_ms);
    if (!line) return NULL;
    json_object *m = json_tokener_parse(line);
    free(line);
    if (m) return m;
    send_error(NULL, -32700, "parse error");
  }
}

static const char *str_field(json_object *o, const char *key) {
  json_object *v;
  if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v) ||
      !json_object_is_type(v, json_type_string))
    return NULL;
  return json_object_get_string(v);
}

static json_object *field(json_object *o, const char *key) {
  json_object *v = NULL;
  if (!json_object_is_type(o, json_type_object)) return NULL;
  json_object_object_get_ex(o, key, &v);
  return v;
}

static bool has_field(json_object *o, const char *key) {
  return json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, key, NULL);
}

/* At EOF: exit, or with --ignore-sigterm wait for SIGKILL. */
static void on_eof(void) __attribute__((noreturn));
static void on_eof(void) {
  if (opt.ignore_sigterm) block_forever();
  exit(0);
}

/*
 * Called by tools that wait for the client: answers pings at once and keeps
 * anything else for later.
 */
static void answer_ping_or_defer(json_object *m) {
  const char *method = str_field(m, "method");
  if (method && !strcmp(method, "ping") && has_field(m, "id")) {
    send_result(field(m, "id"), json_object_new_object());
    json_object_put(m);
    return;
  }
  backlog_push(m);
}

/* ---- methods ------------------------------------------------------------- */

static const char *const supported_versions[] = {"2025-11-25", "2025-06-18", "2025-03-26"};

static void write_garbage(void) {
  write_line("this is not json");
  write_line("42");
  write_line("{\"id\":1,\"result\":{}}");
  write_line("{\"jsonrpc\":\"2.0\",\"id\":999999,\"result\":{}}");
  write_line("");
  write_line("   ");
}

static void do_initialize(json_object *id, json_object *params) {
  if (opt.slow_init_ms) sleep_ms(opt.slow_init_ms);
  while (opt.init_gate && access(opt.init_gate, F_OK) != 0) sleep_ms(5);
  const char *version = supported_versions[0];
  const char *asked = str_field(params, "protocolVersion");
  for (size_t i = 0; asked && i < 3; i++)
    if (!strcmp(asked, supported_versions[i])) version = supported_versions[i];
  if (opt.version) version = opt.version;
  if (opt.garbage) write_garbage();

  json_object *r = json_object_new_object();
  json_object_object_add(r, "protocolVersion", json_object_new_string(version));
  json_object *caps = json_object_new_object();
  json_object *tools = json_object_new_object();
  json_object_object_add(tools, "listChanged", json_object_new_boolean(1));
  json_object_object_add(caps, "resources", json_tokener_parse("{\"listChanged\":true}"));
  json_object_object_add(caps, "prompts", json_tokener_parse("{\"listChanged\":true}"));
  json_object_object_add(caps, "tools", tools);
  json_object_object_add(r, "capabilities", caps);
  json_object *info = json_object_new_object();
  json_object_object_add(info, "name", json_object_new_string("mcp-fault-server"));
  json_object_object_add(info, "version", json_object_new_string("1.0"));
  json_object_object_add(r, "serverInfo", info);
  if (opt.evil_text) json_object_object_add(r, "instructions", json_object_new_string(EVIL_TEXT));
  send_result(id, r);
}

static const struct {
  const char *name;
  const char *description;
  const char *schema;
} tool_defs[] = {
    {"echo", "Returns its text argument.",
     "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}},"
     "\"required\":[\"text\"]}"},
    {"crash", "Writes to stderr and exits with status 3.", "{\"type\":\"object\"}"},
    {"ask", "Sends the client ping, roots/list and an unknown request.", "{\"type\":\"object\"}"},
    {"notify", "Sends count notifications/message before answering.",
     "{\"type\":\"object\",\"properties\":{\"count\":{\"type\":\"integer\"}}}"},
    {"hang", "Never answers.", "{\"type\":\"object\"}"},
};
#define NTOOLS ((int)(sizeof(tool_defs) / sizeof(tool_defs[0])))

/* A tool object; |description| may be NULL. */
static json_object *tool_obj(const char *name, const char *description) {
  json_object *t = json_object_new_object();
  json_object_object_add(t, "name", json_object_new_string(name));
  if (description) json_object_object_add(t, "description", json_object_new_string(description));
  json_object_object_add(t, "inputSchema", json_tokener_parse("{\"type\":\"object\"}"));
  return t;
}

/* --repeat-cursor, --endless-pages, --huge-page: a hostile tools/list page.
 * False when none of them is on. */
static bool hostile_tools_list(json_object *id, json_object *params) {
  if (!opt.repeat_cursor && !opt.endless_pages && !opt.huge_page) return false;
  const char *cursor = str_field(params, "cursor");
  long long page = cursor && !opt.repeat_cursor ? strtoll(cursor, NULL, 10) : 0;
  json_object *tools = json_object_new_array();
  char name[64];
  for (long long i = 0; i < (opt.endless_pages ? opt.endless_pages : 1); i++) {
    snprintf(name, sizeof(name), "t%lld_%lld", page, i);
    json_object_array_add(tools, tool_obj(name, NULL));
  }
  if (opt.huge_page) {
    char *big = malloc((size_t)opt.huge_page + 1);
    if (!big) abort();
    memset(big, 'd', (size_t)opt.huge_page);
    big[opt.huge_page] = '\0';
    snprintf(name, sizeof(name), "big%lld", page);
    json_object_array_add(tools, tool_obj(name, big));
    free(big);
  }
  json_object *r = json_object_new_object();
  json_object_object_add(r, "tools", tools);
  if (opt.repeat_cursor) {
    size_t n = opt.repeat_cursor < 4 ? 4 : (size_t)opt.repeat_cursor;
    char *c = malloc(n + 1);
    if (!c) abort();
    memcpy(c, "\x1b[2J", 4);
    memset(c + 4, 'c', n - 4);
    c[n] = '\0';
    json_object_object_add(r, "nextCursor", json_object_new_string(c));
    free(c);
  } else if (opt.endless_pages || opt.huge_page) {
    char next[32];
    snprintf(next, sizeof(next), "%lld", page + 1);
    json_object_object_add(r, "nextCursor", json_object_new_string(next));
  }
  send_result(id, r);
  return true;
}

static void fault_log(const char *what);

static void do_tools_list(json_object *id, json_object *params) {
  static long long nlists;
  if (opt.hang_list_after && ++nlists > opt.hang_list_after) {
    fault_log("list-hang");
    return;
  }
  if (opt.page_delay_ms) sleep_ms(opt.page_delay_ms);
  if (hostile_tools_list(id, params)) return;
  int start = 0;
  const char *cursor = str_field(params, "cursor");
  if (cursor) {
    char *end;
    long v = strtol(cursor, &end, 10);
    if (*end || v < 0 || v > NTOOLS) {
      send_error(id, -32602, "invalid cursor");
      return;
    }
    start = (int)v;
  }
  int stop = opt.page_size ? start + opt.page_size : NTOOLS;
  if (stop > NTOOLS) stop = NTOOLS;
  json_object *tools = json_object_new_array();
  for (int i = start; i < stop; i++) {
    json_object *t = json_object_new_object();
    json_object_object_add(t, "name", json_object_new_string(tool_defs[i].name));
    json_object_object_add(t, "description", json_object_new_string(tool_defs[i].description));
    json_object_object_add(t, "inputSchema", json_tokener_parse(tool_defs[i].schema));
    if (!strcmp(tool_defs[i].name, "echo"))
      json_object_object_add(t, "annotations",
                             json_tokener_parse("{\"readOnlyHint\":true,\"idempotentHint\":true}"));
    json_object_array_add(tools, t);
  }
  if (grown && stop == NTOOLS) {
    json_object *t = json_object_new_object();
    json_object_object_add(t, "name", json_object_new_string("extra"));
    json_object_object_add(t, "description", json_object_new_string("Added by grow."));
    json_object_object_add(t, "inputSchema", json_tokener_parse("{\"type\":\"object\"}"));
    json_object_array_add(tools, t);
  }
  if (opt.evil_text && stop == NTOOLS) {
    static const char *const names[] = {"evil\xe2\x80\xae"
                                        "exe",
                                        "esc\x1b[2Jname", "evil_error", "evil_result", "evil_ok"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
      json_object *t = json_object_new_object();
      json_object_object_add(t, "name", json_object_new_string(names[i]));
      json_object_object_add(t, "description", json_object_new_string(EVIL_TEXT));
      json_object_object_add(t, "inputSchema", json_tokener_parse("{\"type\":\"object\"}"));
      json_object_array_add(tools, t);
    }
  }
  json_object *r = json_object_new_object();
  json_object_object_add(r, "tools", tools);
  if (stop < NTOOLS) {
    char next[16];
    snprintf(next, sizeof(next), "%d", stop);
    json_object_object_add(r, "nextCursor", json_object_new_string(next));
  }
  send_result(id, r);
}

static void crash(void) __attribute__((noreturn));
static void crash(void) {
  static const char msg[] = "about to crash\n";
  if (opt.evil_text) {
    static const char evil[] = EVIL_TEXT " raw:\x9b"
                                         "2J\n";
    write_all(2, evil, sizeof(evil) - 1);
  }
  write_all(2, msg, sizeof(msg) - 1);
  _exit(3);
}

/* One line of exactly |n| bytes (unless n is below the fixed framing). */
static void write_oversize(long long n) {
  static const char pre[] = "{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":{\"pad\":\"";
  static const char post[] = "\"}}\n";
  long long pad = n - (long long)(sizeof(pre) - 1) - (long long)(sizeof(post) - 2);
  static char xs[CHUNK];
  memset(xs, 'x', sizeof(xs));
  write_all(1, pre, sizeof(pre) - 1);
  while (pad > 0) {
    size_t k = pad > CHUNK ? CHUNK : (size_t)pad;
    write_all(1, xs, k);
    pad -= (long long)k;
  }
  write_all(1, post, sizeof(post) - 1);
}

/* --oversize-response: the answer to |id| as one line of about |n| bytes. */
static void write_oversize_response(json_object *id, long long n) {
  const char *ids = json_object_to_json_string_ext(id, JSON_C_TO_STRING_PLAIN);
  static const char pre[] = "\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"";
  static const char post[] = "\"}]}";
  static char xs[CHUNK];
  memset(xs, 'x', sizeof(xs));
  char head[128];
  snprintf(head, sizeof(head), "{\"jsonrpc\":\"2.0\",");
  write_all(1, head, strlen(head));
  if (!opt.oversize_id_last) {
    snprintf(head, sizeof(head), "\"id\":%.60s,", ids);
    write_all(1, head, strlen(head));
  }
  write_all(1, pre, sizeof(pre) - 1);
  for (long long pad = n; pad > 0;) {
    size_t k = pad > CHUNK ? CHUNK : (size_t)pad;
    write_all(1, xs, k);
    pad -= (long long)k;
  }
  write_all(1, post, sizeof(post) - 1);
  if (opt.oversize_id_last) {
    snprintf(head, sizeof(head), ",\"id\":%.60s", ids);
    write_all(1, head, strlen(head));
  }
  write_all(1, "}\n", 2);
}

/* --flood-*: the burst sent after notifications/initialized. */
static void flood(void) {
  for (long long i = 0; i < opt.flood_pings; i++)
    send_call(json_object_new_int64(1000000 + i), "ping", NULL);
  for (long long i = 0; i < opt.flood_requests; i++)
    send_call(json_object_new_int64(1000000 + i), "roots/list", NULL);
  for (long long i = 0; i < opt.flood_notifications; i++) {
    json_object *p = json_object_new_object();
    json_object_object_add(p, "level", json_object_new_string("info"));
    json_object_object_add(p, "data", json_object_new_int64(i));
    send_call(NULL, "notifications/message", p);
  }
  json_object *p = json_object_new_object();
  json_object_object_add(p, "level", json_object_new_string("info"));
  json_object_object_add(p, "data", json_object_new_string("flood done"));
  send_call(NULL, "notifications/message", p);
}

/* --flood-before-answer: the pings, formatted by hand and written in
 * 64 KiB chunks, so that the server writes faster than a client reads and
 * the client always finds more to read. */
static void flood_before_answer(void) {
  static char buf[65536];
  size_t used = 0;
  for (long long i = 0; i < opt.flood_before_answer; i++) {
    if (used > sizeof(buf) - 128) {
      write_all(1, buf, used);
      used = 0;
    }
    used += (size_t)snprintf(buf + used, sizeof(buf) - used,
                             "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"method\":\"ping\"}\n",
                             2000000 + i);
  }
  write_all(1, buf, used);
}

/* ask: ping, roots/list and x/unknown to the client; answers with the
 * result-or-error of each, in that order, as compact JSON text. */
static void tool_ask(json_object *id) {
  json_object *ids[3] = {json_object_new_string("s1"), json_object_new_string("s2"),
                         json_object_new_int(3)};
  const char *methods[3] = {"ping", "roots/list", "x/unknown"};
  json_object *answers[3] = {NULL, NULL, NULL};
  for (int i = 0; i < 3; i++) send_call(json_object_get(ids[i]), methods[i], NULL);
  int got = 0;
  while (got < 3) {
    json_object *m = read_message(-1);
    if (!m) on_eof();
    int which = -1;
    if (!has_field(m, "method") && has_field(m, "id"))
      for (int i = 0; i < 3; i++)
        if (!answers[i] && json_object_equal(field(m, "id"), ids[i])) which = i;
    if (which < 0) {
      answer_ping_or_defer(m);
      continue;
    }
    json_object *v = has_field(m, "error") ? field(m, "error") : field(m, "result");
    answers[which] = v ? json_object_get(v) : json_object_new_object();
    json_object_put(m);
    got++;
  }
  json_object *arr = json_object_new_array();
  for (int i = 0; i < 3; i++) {
    json_object_array_add(arr, answers[i]);
    json_object_put(ids[i]);
  }
  send_result(id, text_content(json_object_to_json_string_ext(
                      arr, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)));
  json_object_put(arr);
}

static void tool_notify(json_object *id, json_object *args) {
  json_object *c = field(args, "count");
  int count = c ? json_object_get_int(c) : 1;
  for (int i = 0; i < count; i++) {
    json_object *p = json_object_new_object();
    json_object_object_add(p, "level", json_object_new_string("info"));
    json_object_object_add(p, "data", json_object_new_int(i));
    send_call(NULL, "notifications/message", p);
  }
  char text[64];
  snprintf(text, sizeof(text), "sent %d notifications", count);
  send_result(id, text_content(text));
}

/* progress: |steps| steps |ms| apart, each announced with
 * notifications/progress when the request carried a progressToken; stops
 * without answering on notifications/cancelled for this request. */
static void tool_progress(json_object *id, json_object *params, json_object *args) {
  json_object *v = field(args, "steps");
  int steps = v ? json_object_get_int(v) : 5;
  v = field(args, "ms");
  long ms = v ? (long)json_object_get_int64(v) : 10;
  json_object *token = field(field(params, "_meta"), "progressToken");

  for (int i = 1; i <= steps; i++) {
    long long end = now_ms() + ms;
    for (;;) {
      long long left = end - now_ms();
      if (left <= 0) break;
      json_object *m = read_message((long)left);
      if (!m) {
        if (in_eof) on_eof();
        continue;
      }
      const char *method = str_field(m, "method");
      if (method && !strcmp(method, "notifications/cancelled") &&
          json_object_equal(field(field(m, "params"), "requestId"), id)) {
        json_object_put(m);
        return;
      }
      answer_ping_or_defer(m);
    }
    if (token) {
      json_object *p = json_object_new_object();
      json_object_object_add(p, "progressToken", json_object_get(token));
      json_object_object_add(p, "progress", json_object_new_int(i));
      json_object_object_add(p, "total", json_object_new_int(steps));
      send_call(NULL, "notifications/progress", p);
    }
  }
  send_result(id, text_content("done"));
}

static uint64_t chaos_next(void) { /* splitmix64 */
  uint64_t z = (opt.chaos += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static void fault_log(const char *what) {
  if (!opt.fault_log) return;
  FILE *f = fopen(opt.fault_log, "a");
  if (!f) return;
  fprintf(f, "stdio-%s\n", what);
  fclose(f);
}

static void stderr_flood(long long bytes);

/* --chaos: maybe one fault before this call is answered.  Returns false
 * when the call must not be answered at all. */
static bool chaos_call(void) {
  if (!opt.chaos || (int)(chaos_next() % 1000) >= opt.chaos_permille) return true;
  switch (chaos_next() % 5) {
  case 0: fault_log("crash"); crash();
  case 1:
    fault_log("garbage");
    write_garbage();
    return true;
  case 2:
    fault_log("stall");
    sleep_ms(500 + (long)(chaos_next() % 2000));
    return true;
  case 3:
    fault_log("stderr-flood");
    stderr_flood(256 * 1024);
    return true;
  default: fault_log("hang"); return false;
  }
}

/* --bad-response: one malformed response to request |id|, written by hand
 * (json-c would not print most of these). */
static void bad_response(json_object *id) {
  long long n = json_object_get_int64(id);
  const char *k = opt.bad_response;
  char line[512];
  if (!strcmp(k, "nul")) {
    int len = snprintf(line, sizeof(line),
                       "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{\"content\":[{\"type\":"
                       "\"text\",\"text\":\"a@b\"}]}}\n",
                       n);
    *strchr(line, '@') = '\0';
    write_all(1, line, (size_t)len);
  } else if (!strcmp(k, "deep")) {
    char head[64];
    snprintf(head, sizeof(head), "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":", n);
    write_all(1, head, strlen(head));
    for (int i = 0; i < 200; i++) write_all(1, "[", 1);
    for (int i = 0; i < 200; i++) write_all(1, "]", 1);
    write_all(1, "}\n", 2);
  } else if (!strcmp(k, "both")) {
    snprintf(line, sizeof(line),
             "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{},\"error\":{\"code\":1,"
             "\"message\":\"x\"}}",
             n);
    write_line(line);
  } else if (!strcmp(k, "float-id")) {
    snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":%lld.0,\"result\":{\"content\":[]}}",
             n);
    write_line(line);
  } else if (!strcmp(k, "not-object")) {
    snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":42}", n);
    write_line(line);
  } else if (!strcmp(k, "bad-utf8")) {
    snprintf(line, sizeof(line),
             "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{\"content\":[{\"type\":"
             "\"text\",\"text\":\"bad \xff byte\"}]}}",
             n);
    write_line(line);
  } else if (!strcmp(k, "bad-utf8-error")) {
    snprintf(line, sizeof(line),
             "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"error\":{\"code\":-32000,"
             "\"message\":\"bad \xff byte\"}}",
             n);
    write_line(line);
  } else {
    fprintf(stderr, "mcp-fault-server: unknown --bad-response %s\n", k);
    exit(2);
  }
}

static void do_tools_call(json_object *id, json_object *params) {
  const char *name = str_field(params, "name");
  json_object *args = field(params, "arguments");
  if (opt.run_log) {
    FILE *f = fopen(opt.run_log, "a");
    if (f) {
      fprintf(f, "%s\n", name ? name : "?");
      fclose(f);
    }
  }
  if (!chaos_call()) return;
  if (opt.bad_response) {
    bad_response(id);
    return;
  }
  if (opt.crash_on_call || (name && !strcmp(name, "crash"))) crash();
  if (opt.crash_every && ++ncalls % opt.crash_every == 0) crash();
  if (opt.oversize) write_oversize(opt.oversize);
  if (opt.oversize_response) {
    write_oversize_response(id, opt.oversize_response);
    return;
  }
  if (!name) {
    send_error(id, -32602, "missing tool name");
  } else if (!strcmp(name, "echo")) {
    const char *text = str_field(args, "text");
    if (text) send_result(id, text_content(text));
    else send_error(id, -32602, "echo needs a string argument 'text'");
  } else if (opt.evil_text && !strcmp(name, "evil_error")) {
    send_error(id, -32000, EVIL_TEXT);
  } else if (opt.evil_text && (!strcmp(name, "evil_result") || !strcmp(name, "evil_ok"))) {
    json_object *r = text_content(EVIL_TEXT);
    if (!strcmp(name, "evil_result"))
      json_object_object_add(r, "isError", json_object_new_boolean(1));
    send_result(id, r);
  } else if (!strcmp(name, "hang")) {
    /* Never answers. */
  } else if (!strcmp(name, "flood_stats")) {
    char text[128];
    snprintf(text, sizeof(text), "results=%lld errors=%lld busy=%lld", flood_results, flood_errors,
             flood_busy);
    send_result(id, text_content(text));
  } else if (!strcmp(name, "ask")) {
    tool_ask(id);
  } else if (!strcmp(name, "notify")) {
    tool_notify(id, args);
  } else if (!strcmp(name, "progress")) {
    tool_progress(id, params, args);
  } else if (!strcmp(name, "grow") || !strcmp(name, "extra")) {
    /* grow: list one more tool and say so before answering. */
    if (!strcmp(name, "grow")) {
      grown = true;
      send_call(NULL, "notifications/tools/list_changed", NULL);
      send_call(NULL, "notifications/resources/list_changed", NULL);
      send_call(NULL, "notifications/prompts/list_changed", NULL);
    }
    send_result(id, text_content(name));
  } else {
    char msg[160];
    snprintf(msg, sizeof(msg), "unknown tool: %.100s", name);
    send_error(id, -32602, msg);
  }
}

/* Handles one message and drops it. */
static void handle(json_object *m) {
  if (json_object_is_type(m, json_type_array)) {
    size_t n = json_object_array_length(m);
    for (size_t i = 0; i < n; i++) handle(json_object_get(json_object_array_get_idx(m, i)));
    json_object_put(m);
    return;
  }
  if (!json_object_is_type(m, json_type_object)) {
    send_error(NULL, -32600, "invalid request");
    json_object_put(m);
    return;
  }
  const char *method = str_field(m, "method");
  json_object *id = field(m, "id");
  json_object *params = field(m, "params");
  bool is_request = has_field(m, "id");

  if (!method) {
    /* A response: counted when it answers the flood, else ignored. */
    if (id && json_object_is_type(id, json_type_int) && json_object_get_int64(id) >= 1000000) {
      json_object *e = field(m, "error");
      if (!e) {
        flood_results++;
      } else {
        flood_errors++;
        json_object *code = field(e, "code");
        if (code && json_object_get_int(code) == -32000) flood_busy++;
      }
    }
  } else if (!is_request) {
    if (!strcmp(method, "notifications/initialized")) {
      if (opt.exit_after_init) exit(0);
      if (opt.flood_pings || opt.flood_notifications || opt.flood_requests) flood();
      if (opt.stop_reading) block_forever();
    }
  } else if (!strcmp(method, "initialize")) {
    do_initialize(id, params);
  } else if (!strcmp(method, "ping")) {
    send_result(id, json_object_new_object());
  } else if (!strcmp(method, "tools/list")) {
    do_tools_list(id, params);
    if (opt.exit_after_list) exit(0);
  } else if (!strcmp(method, "tools/call")) {
    if (opt.flood_before_answer) flood_before_answer();
    do_tools_call(id, params);
  } else if (!strcmp(method, "resources/list") || !strcmp(method, "prompts/list")) {
    /* One item, two once `grow` ran. */
    bool res = !strcmp(method, "resources/list");
    json_object *arr = json_object_new_array();
    for (int i = 0; i < (grown ? 2 : 1); i++) {
      json_object *it = json_object_new_object();
      char buf[64];
      snprintf(buf, sizeof(buf), res ? "fault://item/%d" : "prompt%d", i);
      json_object_object_add(it, res ? "uri" : "name", json_object_new_string(buf));
      if (res) json_object_object_add(it, "name", json_object_new_string(buf + 8));
      json_object_array_add(arr, it);
    }
    json_object *r = json_object_new_object();
    json_object_object_add(r, res ? "resources" : "prompts", arr);
    send_result(id, r);
  } else {
    send_error(id, -32601, "method not found");
  }
  json_object_put(m);
}

static void stderr_flood(long long bytes) {
  static char buf[CHUNK];
  static const char line[] = "mcp-fault-server: stderr flood, nobody reads this line\n";
  size_t ll = sizeof(line) - 1;
  for (size_t i = 0; i < sizeof(buf); i++) buf[i] = line[i % ll];
  while (bytes > 0) {
    size_t k = bytes > CHUNK ? CHUNK : (size_t)bytes;
    write_all(2, buf, k);
    bytes -= (long long)k;
  }
}

int main(int argc, char **argv) {
  parse_args(argc, argv);
  if (opt.chaos) opt.chaos += 0x2545f4914f6cdd1dull * chaos_life(opt.fault_log, opt.chaos);
  if (opt.ignore_sigterm) signal(SIGTERM, SIG_IGN);
  if (opt.stderr_flood) stderr_flood(opt.stderr_flood);
  if (opt.evil_text) {
    static const char evil[] = "mcp-fault-server: " EVIL_TEXT " raw:\x9b"
                               "2J\n";
    write_all(2, evil, sizeof(evil) - 1);
  }
  for (;;) {
    json_object *m = backlog_pop();
    if (!m) m = read_message(-1);
    if (!m) on_eof();
    handle(m);
  }
}
