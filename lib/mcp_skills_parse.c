/* SPDX-License-Identifier: MIT */
/*
 * mcp_skills_parse.c: skills/list entries, SKILL.md frontmatter, file
 * verification (see mcp_skills_parse.h).  Pure: no I/O, no threads, no
 * globals; fuzzed by fuzz/fuzz_skills.c.
 *
 * The YAML reader is hand-written: the library has no YAML dependency, and
 * a frontmatter is a small mapping.  It reads a strict subset and fails on
 * everything else, since the result only ever decides whether a SKILL.md
 * matches its skills/list entry: refusing an exotic frontmatter refuses to
 * load that skill, never loads a wrong one.
 *
 * Must not know about: requests, clients, servers (lib/mcp_skills.c).
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp_jsonrpc.h"
#include "mcp_sha256.h"
#include "mcp_skills_parse.h"

static void say(char *why, size_t whylen, const char *fmt, ...) MCP_PRINTF(3, 4);
static void say(char *why, size_t whylen, const char *fmt, ...) {
  if (!why || !whylen) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, whylen, fmt, ap);
  va_end(ap);
}

/* ---- entries -------------------------------------------------------------- */

void mcp__skill_entry_clear(mcp_skill_entry *e) {
  if (!e) return;
  mcp__free(e->uri);
  mcp__free(e->name);
  mcp__free(e->description);
  json_object_put(e->frontmatter);
  for (size_t i = 0; i < e->nfiles; i++) mcp__free(e->files[i].uri);
  mcp__free(e->files);
  mcp__free(e->json);
  memset(e, 0, sizeof(*e));
}

static json_object *get(json_object *o, const char *key) {
  json_object *v = NULL;
  return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static const char *str_member(json_object *o, const char *key) {
  json_object *v = get(o, key);
  return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static bool digest_ok(const char *d) {
  if (strncmp(d, "sha256:", 7) != 0 || strlen(d) != 7 + 64) return false;
  for (const char *p = d + 7; *p; p++)
    if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'))) return false;
  return true;
}

static int cmp_file_uri(const void *a, const void *b) {
  return strcmp(((const mcp_skill_file *)a)->uri, ((const mcp_skill_file *)b)->uri);
}

/* Reads the "resources" array into e->files; |dir| is the skill's
 * directory prefix (the uri without "SKILL.md"). */
static mcp_status read_files(json_object *arr, mcp_skill_entry *e, const char *dir, char *why,
                             size_t whylen) {
  size_t n = json_object_array_length(arr), dlen = strlen(dir);
  if (n == 0) return say(why, whylen, "\"resources\" is empty"), MCP_EPROTO;
  if (n > MCP_SKILL_MAX_FILES)
    return say(why, whylen, "\"resources\" lists %zu files (more than %d)", n, MCP_SKILL_MAX_FILES),
           MCP_EPROTO;
  if (!(e->files = mcp__calloc(n, sizeof(*e->files)))) return MCP_ENOMEM;
  bool has_skill_md = false;
  for (size_t i = 0; i < n; i++) {
    json_object *f = json_object_array_get_idx(arr, i), *size = NULL;
    const char *uri = NULL, *digest = NULL;
    if (!json_object_is_type(f, json_type_object) || !(uri = str_member(f, "uri")) ||
        !(digest = str_member(f, "digest")) || !(size = get(f, "size")))
      return say(why, whylen, "resources[%zu] is not an object with uri, digest and size", i),
             MCP_EPROTO;
    if (!digest_ok(digest))
      return say(why, whylen, "resources[%zu].digest is not \"sha256:\" and 64 lowercase hex", i),
             MCP_EPROTO;
    int64_t sz = json_object_get_int64(size);
    if (!json_object_is_type(size, json_type_int) || sz < 0)
      return say(why, whylen, "resources[%zu].size is not a non-negative integer", i), MCP_EPROTO;
    if (strncmp(uri, dir, dlen) != 0 || !uri[dlen])
      return say(why, whylen, "resources[%zu].uri is outside the skill's directory", i), MCP_EPROTO;
    if (strcmp(uri, e->uri) == 0) has_skill_md = true;
    if (!(e->files[i].uri = mcp__strdup(uri))) return MCP_ENOMEM;
    e->nfiles = i + 1;
    memcpy(e->files[i].digest, digest, 7 + 64 + 1);
    e->files[i].size = (uint64_t)sz;
  }
  if (!has_skill_md)
    return say(why, whylen, "\"resources\" does not list the SKILL.md"), MCP_EPROTO;
  /* Each file once: checked on a sorted copy, the manifest keeps its order. */
  mcp_skill_file *sorted = mcp__malloc(n * sizeof(*sorted));
  if (!sorted) return MCP_ENOMEM;
  memcpy(sorted, e->files, n * sizeof(*sorted));
  qsort(sorted, n, sizeof(*sorted), cmp_file_uri);
  bool dup = false;
  for (size_t i = 1; i < n && !dup; i++) dup = strcmp(sorted[i - 1].uri, sorted[i].uri) == 0;
  mcp__free(sorted);
  if (dup) return say(why, whylen, "\"resources\" lists a file twice"), MCP_EPROTO;
  return MCP_OK;
}

static mcp_status entry_parse(json_object *entry, mcp_skill_entry *e, char *why, size_t whylen) {
  if (!json_object_is_type(entry, json_type_object))
    return say(why, whylen, "the entry is not an object"), MCP_EPROTO;
  const char *uri = str_member(entry, "uri");
  json_object *fm = get(entry, "frontmatter"), *res = get(entry, "resources");
  if (!uri || !*uri) return say(why, whylen, "the entry has no \"uri\" string"), MCP_EPROTO;
  if (!fm || !json_object_is_type(fm, json_type_object))
    return say(why, whylen, "the entry has no \"frontmatter\" object"), MCP_EPROTO;
  const char *name = str_member(fm, "name"), *desc = str_member(fm, "description");
  if (!name || !*name || !desc)
    return say(why, whylen, "frontmatter has no \"name\" or \"description\" string"), MCP_EPROTO;
  /* skill://<path>/<name>/SKILL.md: the last segment before SKILL.md is the name. */
  size_t ul = strlen(uri), nl = strlen(name);
  static const char tail[] = "/SKILL.md";
  if (ul < sizeof(tail) - 1 || strcmp(uri + ul - (sizeof(tail) - 1), tail) != 0)
    return say(why, whylen, "\"uri\" does not end in /SKILL.md"), MCP_EPROTO;
  size_t seg_end = ul - (sizeof(tail) - 1);
  if (seg_end < nl + 1 || uri[seg_end - nl - 1] != '/' || memcmp(uri + seg_end - nl, name, nl) != 0)
    return say(why, whylen, "the last path segment of \"uri\" is not frontmatter.name"), MCP_EPROTO;
  if (!(e->uri = mcp__strdup(uri)) || !(e->name = mcp__strdup(name)) ||
      !(e->description = mcp__strdup(desc)))
    return MCP_ENOMEM;
  e->frontmatter = json_object_get(fm);
  if (res && json_object_is_type(res, json_type_string) &&
      strcmp(json_object_get_string(res), "dynamic") == 0) {
    e->dynamic = true;
  } else if (res && json_object_is_type(res, json_type_array)) {
    char *dir = mcp__strndup(uri, ul - (sizeof(tail) - 2)); /* keeps the '/' */
    if (!dir) return MCP_ENOMEM;
    mcp_status st = read_files(res, e, dir, why, whylen);
    mcp__free(dir);
    if (st) return st;
  } else {
    return say(why, whylen, "\"resources\" is neither an array nor \"dynamic\""), MCP_EPROTO;
  }
  if (!(e->json = mcp__json_dup_string(entry, NULL))) return MCP_ENOMEM;
  return MCP_OK;
}

mcp_status mcp__skill_entry_parse(json_object *entry, mcp_skill_entry *out, char *why,
                                  size_t whylen) {
  memset(out, 0, sizeof(*out));
  mcp_status st = entry_parse(entry, out, why, whylen);
  if (st) mcp__skill_entry_clear(out);
  if (st == MCP_ENOMEM) say(why, whylen, "out of memory");
  return st;
}

/* ---- file paths ------------------------------------------------------------- */

/* Is |p| (|n| bytes) a relative path of plain segments: none empty, none
 * "." or "..", no '\\', '?', '#' or control character? */
static bool plain_path(const char *p, size_t n) {
  if (n == 0) return false;
  size_t seg = 0;
  for (size_t i = 0; i <= n; i++) {
    unsigned char c = i < n ? (unsigned char)p[i] : '/';
    if (c == '/') {
      size_t len = i - seg;
      if (len == 0 || (len == 1 && p[seg] == '.') ||
          (len == 2 && p[seg] == '.' && p[seg + 1] == '.'))
        return false;
      seg = i + 1;
    } else if (c < 0x20 || c == 0x7f || c == '\\' || c == '?' || c == '#') {
      return false;
    }
  }
  return true;
}

mcp_status mcp__skill_file_uri(const char *skill_uri, const char *file, char **out, char *why,
                               size_t whylen) {
  *out = NULL;
  static const char tail[] = "SKILL.md";
  size_t ul = strlen(skill_uri), tl = sizeof(tail) - 1;
  if (ul <= tl || strcmp(skill_uri + ul - tl, tail) != 0 || skill_uri[ul - tl - 1] != '/')
    return say(why, whylen, "the skill's uri does not end in /SKILL.md"), MCP_EINVAL;
  size_t dl = ul - tl; /* the skill's directory, with its '/' */
  const char *rel = file;
  if (strstr(file, "://")) {
    if (strncmp(file, skill_uri, dl) != 0)
      return say(why, whylen, "the URI is not within the skill's directory"), MCP_EINVAL;
    rel = file + dl;
  }
  if (!plain_path(rel, strlen(rel)))
    return say(why, whylen,
               "not a path within the skill (segments must be non-empty, not \".\" or "
               "\"..\", without '\\', '?', '#' or control characters)"),
           MCP_EINVAL;
  size_t rl = strlen(rel);
  char *u = mcp__malloc(dl + rl + 1);
  if (!u) return say(why, whylen, "out of memory"), MCP_ENOMEM;
  memcpy(u, skill_uri, dl);
  memcpy(u + dl, rel, rl + 1);
  *out = u;
  return MCP_OK;
}

/* ---- file checks ------------------------------------------------------------ */

bool mcp__skill_check_file(const mcp_skill_file *f, const void *data, size_t len, char *why,
                           size_t whylen) {
  if ((uint64_t)len != f->size) {
    say(why, whylen, "its size is %zu bytes, the skills/list entry says %llu", len,
        (unsigned long long)f->size);
    return false;
  }
  unsigned char d[MCP_SHA256_LEN];
  mcp__sha256(data, len, d);
  char hex[7 + 2 * MCP_SHA256_LEN + 1] = "sha256:";
  for (size_t i = 0; i < MCP_SHA256_LEN; i++) snprintf(hex + 7 + 2 * i, 3, "%02x", d[i]);
  if (strcmp(hex, f->digest) != 0) {
    say(why, whylen, "its digest is %s, the skills/list entry says %s", hex, f->digest);
    return false;
  }
  return true;
}

/* ---- JSON comparison ---------------------------------------------------------- */

static bool is_number(json_object *v) {
  return json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double);
}

static bool equal_at(json_object *a, json_object *b, char *path, size_t cap, size_t at, int depth);

static void path_add(char *path, size_t cap, size_t at, const char *seg, bool index) {
  if (at >= cap) return;
  snprintf(path + at, cap - at, index ? "[%s]" : (at ? ".%s" : "%s"), seg);
}

static bool objects_equal(json_object *a, json_object *b, char *path, size_t cap, size_t at,
                          int depth) {
  json_object_object_foreach(a, k, va) {
    json_object *vb = NULL;
    path_add(path, cap, at, k, false);
    if (!json_object_object_get_ex(b, k, &vb)) return false;
    if (!equal_at(va, vb, path, cap, strlen(path), depth + 1)) return false;
  }
  json_object_object_foreach(b, k2, vb2) {
    (void)vb2;
    path_add(path, cap, at, k2, false);
    if (!json_object_object_get_ex(a, k2, NULL)) return false;
  }
  if (at < cap) path[at] = '\0';
  return true;
}

static bool equal_at(json_object *a, json_object *b, char *path, size_t cap, size_t at, int depth) {
  if (depth > 64) return false;
  if (!a || !b) return !a && !b;
  if (is_number(a) && is_number(b)) {
    if (json_object_is_type(a, json_type_int) && json_object_is_type(b, json_type_int))
      return json_object_get_int64(a) == json_object_get_int64(b);
    return json_object_get_double(a) == json_object_get_double(b);
  }
  json_type t = json_object_get_type(a);
  if (t != json_object_get_type(b)) return false;
  switch (t) {
  case json_type_boolean: return json_object_get_boolean(a) == json_object_get_boolean(b);
  case json_type_string:
    return json_object_get_string_len(a) == json_object_get_string_len(b) &&
           memcmp(json_object_get_string(a), json_object_get_string(b),
                  (size_t)json_object_get_string_len(a)) == 0;
  case json_type_array: {
    size_t n = json_object_array_length(a);
    if (n != json_object_array_length(b)) return false;
    for (size_t i = 0; i < n; i++) {
      char idx[24];
      snprintf(idx, sizeof(idx), "%zu", i);
      path_add(path, cap, at, idx, true);
      if (!equal_at(json_object_array_get_idx(a, i), json_object_array_get_idx(b, i), path, cap,
                    strlen(path), depth + 1))
        return false;
    }
    if (at < cap) path[at] = '\0';
    return true;
  }
  case json_type_object: return objects_equal(a, b, path, cap, at, depth);
  default: return true; /* null */
  }
}

bool mcp__skill_json_equal(json_object *a, json_object *b, char *why, size_t whylen) {
  char path[256] = "";
  if (equal_at(a, b, path, sizeof(path), 0, 0)) return true;
  if (path[0]) say(why, whylen, "field \"%s\" differs", path);
  else say(why, whylen, "the values differ");
  return false;
}

/* ---- YAML frontmatter ------------------------------------------------------------ */

typedef struct yline {
  const char *s;
  size_t n;
} yline;

typedef struct yaml {
  yline *ln;
  size_t nl, i;
  char *why;
  size_t whylen;
  int depth;
  bool nomem;
} yaml;

#define YAML_MAX_DEPTH 32

static mcp_status yfail(yaml *y, size_t line, const char *what) {
  say(y->why, y->whylen, "frontmatter line %zu: %s", line + 2, what); /* 1-based, after "---" */
  return MCP_EPROTO;
}

static size_t indent_of(const yline *l) {
  size_t k = 0;
  while (k < l->n && l->s[k] == ' ') k++;
  return k;
}

static bool skippable(const yline *l) {
  size_t k = indent_of(l);
  return k == l->n || l->s[k] == '#';
}

/* Skips blank and comment lines; the next line's index, or nl. */
static size_t next_line(yaml *y) {
  while (y->i < y->nl && skippable(&y->ln[y->i])) y->i++;
  return y->i;
}

static bool is_seq_item(const char *s, size_t n) {
  return n >= 1 && s[0] == '-' && (n == 1 || s[1] == ' ');
}

static json_object *new_str(yaml *y, const char *s, size_t n) {
  json_object *o = json_object_new_string_len(s, (int)n);
  if (!o) y->nomem = true;
  return o;
}

/* Plain scalar resolution, YAML 1.2 core schema. */
static bool all_digits(const char *s, size_t n, int base) {
  if (n == 0) return false;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    bool ok = base == 8 ? (c >= '0' && c <= '7')
              : base == 16
                  ? ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))
                  : (c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

static bool is_float(const char *s, size_t n) {
  size_t i = 0, digits = 0;
  if (i < n && (s[i] == '-' || s[i] == '+')) i++;
  while (i < n && s[i] >= '0' && s[i] <= '9') i++, digits++;
  if (i < n && s[i] == '.') {
    i++;
    while (i < n && s[i] >= '0' && s[i] <= '9') i++, digits++;
  }
  if (!digits) return false;
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    i++;
    if (i < n && (s[i] == '-' || s[i] == '+')) i++;
    size_t e = i;
    while (i < n && s[i] >= '0' && s[i] <= '9') i++;
    if (i == e) return false;
  }
  return i == n;
}

static bool word_in(const char *s, size_t n, const char *const *words) {
  for (size_t k = 0; words[k]; k++)
    if (strlen(words[k]) == n && memcmp(words[k], s, n) == 0) return true;
  return false;
}

static json_object *resolve_plain(yaml *y, const char *s, size_t n, bool *is_null) {
  static const char *const nulls[] = {"~", "null", "Null", "NULL", NULL};
  static const char *const trues[] = {"true", "True", "TRUE", NULL};
  static const char *const falses[] = {"false", "False", "FALSE", NULL};
  static const char *const specials[] = {".inf",  ".Inf",  ".INF",  "+.inf", "+.Inf",
                                         "+.INF", "-.inf", "-.Inf", "-.INF", ".nan",
                                         ".NaN",  ".NAN",  NULL};
  *is_null = false;
  /* JSON has no infinity or NaN: rendered as JSON they are null. */
  if (n == 0 || word_in(s, n, nulls) || word_in(s, n, specials)) {
    *is_null = true;
    return NULL;
  }
  if (word_in(s, n, trues)) return json_object_new_boolean(1);
  if (word_in(s, n, falses)) return json_object_new_boolean(0);
  char buf[64];
  size_t sign = (s[0] == '-' || s[0] == '+');
  int base = 0;
  if (all_digits(s + sign, n - sign, 10)) base = 10;
  else if (n > 2 && s[0] == '0' && s[1] == 'o' && all_digits(s + 2, n - 2, 8)) base = 8;
  else if (n > 2 && s[0] == '0' && s[1] == 'x' && all_digits(s + 2, n - 2, 16)) base = 16;
  if (base && n < sizeof(buf)) {
    memcpy(buf, base == 10 ? s : s + 2, base == 10 ? n : n - 2);
    buf[base == 10 ? n : n - 2] = '\0';
    errno = 0;
    long long v = strtoll(buf, NULL, base);
    if (errno == 0) return json_object_new_int64(v);
    return json_object_new_double(strtod(buf, NULL)); /* too big for int64: a double, as JS */
  }
  if (is_float(s, n) && n < sizeof(buf)) {
    memcpy(buf, s, n);
    buf[n] = '\0';
    double d = strtod(buf, NULL);
    if (isinf(d) || isnan(d)) {
      *is_null = true;
      return NULL;
    }
    return json_object_new_double(d);
  }
  return json_object_new_string_len(s, (int)n);
}

/* Appends the UTF-8 of code point |cp| to |b|. */
static int put_utf8(mcp_buf *b, uint32_t cp) {
  char u[4];
  size_t n;
  if (cp < 0x80) u[0] = (char)cp, n = 1;
  else if (cp < 0x800) u[0] = (char)(0xc0 | cp >> 6), u[1] = (char)(0x80 | (cp & 0x3f)), n = 2;
  else if (cp < 0x10000)
    u[0] = (char)(0xe0 | cp >> 12), u[1] = (char)(0x80 | ((cp >> 6) & 0x3f)),
    u[2] = (char)(0x80 | (cp & 0x3f)), n = 3;
  else
    u[0] = (char)(0xf0 | cp >> 18), u[1] = (char)(0x80 | ((cp >> 12) & 0x3f)),
    u[2] = (char)(0x80 | ((cp >> 6) & 0x3f)), u[3] = (char)(0x80 | (cp & 0x3f)), n = 4;
  return mcp__buf_append(b, u, n);
}

/*
 * A quoted scalar starting at s[0] (a quote) within |n| bytes of one line:
 * *used gets the bytes through the closing quote.  NULL on a missing close
 * quote or a bad escape (y->why says so), or out of memory.
 */
static json_object *quoted(yaml *y, size_t line, const char *s, size_t n, size_t *used) {
  char q = s[0];
  mcp_buf b;
  mcp__buf_init(&b);
  size_t i = 1;
  int bad = 0;
  for (; i < n; i++) {
    char c = s[i];
    if (c == q) {
      if (q == '\'' && i + 1 < n && s[i + 1] == '\'') {
        bad |= mcp__buf_append(&b, "'", 1);
        i++;
        continue;
      }
      break;
    }
    if (q == '"' && c == '\\') {
      if (++i >= n) break;
      static const char from[] = "0abtnvfre \"/\\N_LP\t",
                        *to[] = {"\0",           "\a",       "\b",       "\t",
                                 "\n",           "\v",       "\f",       "\r",
                                 "\x1b",         " ",        "\"",       "/",
                                 "\\",           "\xc2\x85", "\xc2\xa0", "\xe2\x80\xa8",
                                 "\xe2\x80\xa9", "\t"};
      const char *hit = memchr(from, s[i], sizeof(from) - 1);
      if (hit) {
        const char *t = to[hit - from];
        bad |= mcp__buf_append(&b, t, s[i] == '0' ? 1 : strlen(t));
        continue;
      }
      size_t digits = s[i] == 'x' ? 2 : s[i] == 'u' ? 4 : s[i] == 'U' ? 8 : 0;
      if (!digits || i + digits >= n || !all_digits(s + i + 1, digits, 16)) {
        mcp__buf_free(&b);
        yfail(y, line, "unknown escape in a double-quoted scalar");
        return NULL;
      }
      char hex[9];
      memcpy(hex, s + i + 1, digits);
      hex[digits] = '\0';
      uint32_t cp = (uint32_t)strtoul(hex, NULL, 16);
      if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
        mcp__buf_free(&b);
        yfail(y, line, "escape is not a Unicode scalar value");
        return NULL;
      }
      bad |= put_utf8(&b, cp);
      i += digits;
      continue;
    }
    bad |= mcp__buf_append(&b, &c, 1);
  }
  if (i >= n) {
    mcp__buf_free(&b);
    yfail(y, line, "quoted scalar not closed on its line (multi-line quoted scalars unsupported)");
    return NULL;
  }
  *used = i + 1;
  json_object *o = bad ? NULL : json_object_new_string_len(b.data ? b.data : "", (int)b.len);
  if (!o) {
    y->nomem = true;
    yfail(y, line, "out of memory");
  }
  mcp__buf_free(&b);
  return o;
}

/* Length of |s| (|n| bytes) without a trailing " #comment" and spaces. */
static size_t strip_comment(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (s[i] == '#' && (i == 0 || s[i - 1] == ' ' || s[i - 1] == '\t')) {
      n = i;
      break;
    }
  while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t')) n--;
  return n;
}

static bool only_comment(const char *s, size_t n) {
  size_t k = 0;
  while (k < n && (s[k] == ' ' || s[k] == '\t')) k++;
  return k == n || s[k] == '#';
}

static json_object *flow_item(yaml *y, size_t line, const char *s, size_t n, size_t *used);

/* A one-line flow sequence or mapping at s[0] ('[' or '{'). */
static json_object *flow(yaml *y, size_t line, const char *s, size_t n, size_t *used) {
  bool map = s[0] == '{';
  char close = map ? '}' : ']';
  if (++y->depth > YAML_MAX_DEPTH) {
    yfail(y, line, "nested too deep");
    return NULL;
  }
  json_object *o = map ? json_object_new_object() : json_object_new_array();
  size_t i = 1;
  if (!o) goto nomem;
  for (;;) {
    while (i < n && s[i] == ' ') i++;
    if (i < n && s[i] == close) break;
    json_object *k = NULL, *v = NULL;
    size_t u = 0;
    if (!(k = flow_item(y, line, s + i, n - i, &u))) goto fail;
    i += u;
    while (i < n && s[i] == ' ') i++;
    if (map) {
      if (!json_object_is_type(k, json_type_string) || i >= n || s[i] != ':') {
        json_object_put(k);
        yfail(y, line, "flow mapping entry is not \"key: value\"");
        goto fail;
      }
      i++;
      while (i < n && s[i] == ' ') i++;
      if (!(v = flow_item(y, line, s + i, n - i, &u))) {
        json_object_put(k);
        goto fail;
      }
      i += u;
      bool dupkey = json_object_object_get_ex(o, json_object_get_string(k), NULL);
      int r = dupkey ? -1 : mcp__json_add(o, json_object_get_string(k), v);
      json_object_put(k);
      if (r) {
        if (!dupkey) goto nomem;
        json_object_put(v);
        yfail(y, line, "repeated key in a flow mapping");
        goto fail;
      }
    } else if (json_object_array_add(o, k)) {
      json_object_put(k);
      goto nomem;
    }
    while (i < n && s[i] == ' ') i++;
    if (i < n && s[i] == ',') {
      i++;
      continue;
    }
    if (i < n && s[i] == close) break;
    yfail(y, line, "flow collection not closed on its line");
    goto fail;
  }
  *used = i + 1;
  y->depth--;
  return o;
nomem:
  y->nomem = true;
  yfail(y, line, "out of memory");
fail:
  json_object_put(o);
  return NULL;
}

/* One item of a flow collection: quoted, nested flow, or plain up to , ] } : */
static json_object *flow_item(yaml *y, size_t line, const char *s, size_t n, size_t *used) {
  if (n && (s[0] == '"' || s[0] == '\'')) return quoted(y, line, s, n, used);
  if (n && (s[0] == '[' || s[0] == '{')) return flow(y, line, s, n, used);
  size_t i = 0;
  while (i < n && s[i] != ',' && s[i] != ']' && s[i] != '}' &&
         !(s[i] == ':' && (i + 1 == n || s[i + 1] == ' ')))
    i++;
  size_t e = i;
  while (e > 0 && s[e - 1] == ' ') e--;
  if (e == 0 || strchr("&*!|>%@`#", s[0])) {
    yfail(y, line, "unsupported flow item");
    return NULL;
  }
  *used = i;
  bool is_null = false;
  json_object *o = resolve_plain(y, s, e, &is_null);
  if (!o && !is_null) {
    y->nomem = true;
    yfail(y, line, "out of memory");
    return NULL;
  }
  /* A null item of a flow sequence: json-c's NULL cannot be told from a
   * failure here; keep it as the string it is not and refuse instead. */
  if (is_null) yfail(y, line, "null in a flow collection is not supported");
  return o;
}

static mcp_status node(yaml *y, size_t parent, json_object **out);

/* A literal (|) or folded (>) block scalar; |hdr| is the text after the key. */
static mcp_status block_scalar(yaml *y, size_t parent, size_t line, const char *hdr, size_t n,
                               json_object **out) {
  bool folded = hdr[0] == '>';
  char chomp = 'c';
  size_t k = 1;
  if (k < n && (hdr[k] == '-' || hdr[k] == '+')) chomp = hdr[k++];
  if (!only_comment(hdr + k, n - k))
    return yfail(y, line, "unsupported block scalar header (indentation indicators)");
  size_t ind = 0;
  mcp_buf b;
  mcp__buf_init(&b);
  int bad = 0;
  size_t pending_nl = 0; /* line breaks seen, not yet written */
  bool started = false, prev_more = false;
  for (; y->i < y->nl; y->i++) {
    const yline *l = &y->ln[y->i];
    size_t li = indent_of(l);
    if (li == l->n) { /* blank: kept as a line break */
      pending_nl++;
      continue;
    }
    if (!ind) {
      if (li <= parent) break;
      ind = li;
    }
    if (li < ind) break;
    bool more = li > ind; /* more indented: not folded */
    if (started) {
      if (folded && pending_nl == 1 && !more && !prev_more) bad |= mcp__buf_append(&b, " ", 1);
      else
        for (size_t p = 0; p < (folded && !more && !prev_more ? pending_nl - 1 : pending_nl); p++)
          bad |= mcp__buf_append(&b, "\n", 1);
    } else {
      for (size_t p = 0; p < pending_nl; p++) bad |= mcp__buf_append(&b, "\n", 1);
    }
    bad |= mcp__buf_append(&b, l->s + ind, l->n - ind);
    pending_nl = 1;
    started = true;
    prev_more = more;
  }
  /* The trailing line breaks: clip keeps one, strip none, keep all. */
  if (started) {
    size_t keep = chomp == '-' ? 0 : chomp == '+' ? pending_nl : 1;
    for (size_t p = 0; p < keep; p++) bad |= mcp__buf_append(&b, "\n", 1);
  } else if (chomp == '+') {
    for (size_t p = 0; p < pending_nl; p++) bad |= mcp__buf_append(&b, "\n", 1);
  }
  *out = bad ? NULL : new_str(y, b.data ? b.data : "", b.len);
  mcp__buf_free(&b);
  if (!*out) {
    y->nomem = true;
    return yfail(y, line, "out of memory");
  }
  return MCP_OK;
}

/*
 * A value after "key:" or "- " on line |line| (|s|, |n| bytes, may be
 * empty), in a collection indented |parent|.  Continuation lines must be
 * indented more than |parent|.
 */
static mcp_status value(yaml *y, size_t parent, size_t line, const char *s, size_t n,
                        bool map_value, json_object **out) {
  *out = NULL;
  while (n && s[0] == ' ') s++, n--;
  if (only_comment(s, n)) {
    size_t nx = next_line(y);
    /* "key:" followed by "- item" lines at the key's own indentation. */
    if (map_value && nx < y->nl && indent_of(&y->ln[nx]) == parent) {
      const yline *l = &y->ln[nx];
      if (is_seq_item(l->s + parent, l->n - parent)) return node(y, parent - 1, out);
    }
    return node(y, parent, out);
  }
  if (strchr("&*!%@`?", s[0])) return yfail(y, line, "anchors, aliases, tags unsupported");
  if (s[0] == '|' || s[0] == '>') return block_scalar(y, parent, line, s, n, out);
  size_t used = 0;
  if (s[0] == '"' || s[0] == '\'' || s[0] == '[' || s[0] == '{') {
    *out = s[0] == '"' || s[0] == '\'' ? quoted(y, line, s, n, &used) : flow(y, line, s, n, &used);
    if (!*out) return y->nomem ? MCP_ENOMEM : MCP_EPROTO;
    if (!only_comment(s + used, n - used)) {
      json_object_put(*out);
      *out = NULL;
      return yfail(y, line, "text after a quoted scalar or flow collection");
    }
    return MCP_OK;
  }
  /* A plain scalar, maybe continued on more indented lines (folded). */
  size_t len = strip_comment(s, n);
  for (size_t i = 0; i + 1 < len; i++)
    if (s[i] == ':' && s[i + 1] == ' ') return yfail(y, line, "\": \" inside a plain scalar");
  mcp_buf b;
  mcp__buf_init(&b);
  int bad = mcp__buf_append(&b, s, len);
  bool multi = false;
  size_t blanks = 0;
  for (; y->i < y->nl; y->i++) {
    const yline *l = &y->ln[y->i];
    size_t li = indent_of(l);
    if (li == l->n) {
      blanks++;
      continue;
    }
    if (li <= parent || l->s[li] == '#') break;
    size_t cl = strip_comment(l->s + li, l->n - li);
    for (size_t i = 0; i < cl; i++)
      if (l->s[li + i] == ':' && (i + 1 == cl || l->s[li + i + 1] == ' ')) {
        mcp__buf_free(&b);
        return yfail(y, y->i, "\": \" inside a plain scalar");
      }
    if (blanks)
      for (size_t p = 0; p < blanks; p++) bad |= mcp__buf_append(&b, "\n", 1);
    else bad |= mcp__buf_append(&b, " ", 1);
    bad |= mcp__buf_append(&b, l->s + li, cl);
    blanks = 0;
    multi = true;
  }
  bool is_null = false;
  if (!bad) {
    *out = multi ? json_object_new_string_len(b.data, (int)b.len)
                 : resolve_plain(y, b.data ? b.data : "", b.len, &is_null);
    if (!*out && !is_null) bad = 1;
  }
  mcp__buf_free(&b);
  if (bad) {
    y->nomem = true;
    return yfail(y, line, "out of memory");
  }
  return MCP_OK; /* *out NULL: a JSON null */
}

/* Adds |v| (NULL: JSON null) to object |o| under |key| (|kn| bytes). */
static mcp_status put_member(yaml *y, size_t line, json_object *o, const char *key, size_t kn,
                             json_object *v) {
  if (memchr(key, '\0', kn)) {
    json_object_put(v);
    return yfail(y, line, "NUL in a key");
  }
  char *k = mcp__strndup(key, kn);
  if (!k) {
    json_object_put(v);
    y->nomem = true;
    return MCP_ENOMEM;
  }
  mcp_status st = MCP_OK;
  if (json_object_object_get_ex(o, k, NULL)) {
    json_object_put(v);
    st = yfail(y, line, "repeated key");
  } else if (json_object_object_add(o, k, v)) {
    json_object_put(v);
    y->nomem = true;
    st = MCP_ENOMEM;
  }
  mcp__free(k);
  return st;
}

/*
 * The walk over the lines of a block collection at indentation |ind|:
 * true with *line the next one of it; false at its end (the text's end, a
 * line indented less, or for a sequence (|seq|) a line at |ind| that is no
 * "- " item: the next key), or with *st the failure on a line indented
 * more.
 */
static bool collection_line(yaml *y, size_t ind, bool seq, size_t *line, mcp_status *st) {
  if (next_line(y) >= y->nl) return false;
  *line = y->i;
  const yline *l = &y->ln[*line];
  size_t li = indent_of(l);
  if (li < ind) return false;
  if (seq && li == ind && !is_seq_item(l->s + ind, l->n - ind)) return false;
  if (li > ind) {
    *st = yfail(y, *line, "unexpected indentation");
    return false;
  }
  return true;
}

static mcp_status mapping(yaml *y, size_t ind, json_object **out) {
  json_object *o = json_object_new_object();
  if (!o) return y->nomem = true, MCP_ENOMEM;
  mcp_status st = MCP_OK;
  size_t line;
  while (st == MCP_OK && collection_line(y, ind, false, &line, &st)) {
    const yline *l = &y->ln[line];
    const char *s = l->s + ind;
    size_t n = l->n - ind, kn = 0, at = 0;
    json_object *qk = NULL;
    if (is_seq_item(s, n)) {
      st = yfail(y, line, "a sequence item where a mapping key was expected");
      break;
    }
    if (s[0] == '"' || s[0] == '\'') {
      if (!(qk = quoted(y, line, s, n, &at))) {
        st = y->nomem ? MCP_ENOMEM : MCP_EPROTO;
        break;
      }
      while (at < n && s[at] == ' ') at++;
      if (at >= n || s[at] != ':' || (at + 1 < n && s[at + 1] != ' ')) {
        json_object_put(qk);
        st = yfail(y, line, "a quoted key without \": \"");
        break;
      }
    } else {
      if (strchr("&*!%@`?|>[{#,", s[0])) {
        st = yfail(y, line, "unsupported mapping key");
        break;
      }
      while (at < n && !(s[at] == ':' && (at + 1 == n || s[at + 1] == ' '))) at++;
      if (at >= n) {
        st = yfail(y, line, "not a \"key: value\" line");
        break;
      }
      kn = at;
      while (kn > 0 && s[kn - 1] == ' ') kn--;
    }
    y->i++;
    json_object *v = NULL;
    st = value(y, ind, line, s + at + 1, n - at - 1, true, &v);
    if (st == MCP_OK)
      st = qk ? put_member(y, line, o, json_object_get_string(qk),
                           (size_t)json_object_get_string_len(qk), v)
              : put_member(y, line, o, s, kn, v);
    json_object_put(qk);
  }
  if (st) json_object_put(o);
  else *out = o;
  return st;
}

static mcp_status sequence(yaml *y, size_t ind, json_object **out) {
  json_object *a = json_object_new_array();
  if (!a) return y->nomem = true, MCP_ENOMEM;
  mcp_status st = MCP_OK;
  size_t line;
  while (st == MCP_OK && collection_line(y, ind, true, &line, &st)) {
    const yline *l = &y->ln[line];
    const char *s = l->s + ind + 1;
    size_t n = l->n - ind - 1;
    y->i++;
    size_t k = 0;
    while (k < n && s[k] == ' ') k++;
    /* "- key: value" (a mapping inside a sequence item) is not read. */
    size_t cl = strip_comment(s + k, n - k);
    bool quoted_or_flow = k < n && strchr("\"'[{|>", s[k]);
    for (size_t i = k; !quoted_or_flow && i < k + cl; i++)
      if (s[i] == ':' && (i + 1 == k + cl || s[i + 1] == ' '))
        st = yfail(y, line, "mappings inside sequence items are unsupported");
    if (st) break;
    json_object *v = NULL;
    st = value(y, ind, line, s, n, false, &v);
    if (st == MCP_OK && json_object_array_add(a, v)) {
      json_object_put(v);
      y->nomem = true;
      st = MCP_ENOMEM;
    }
  }
  if (st) json_object_put(a);
  else *out = a;
  return st;
}

/* The collection on the next lines, indented more than |parent| (a
 * (size_t)-1 parent: the top level); none is a JSON null. */
static mcp_status node(yaml *y, size_t parent, json_object **out) {
  *out = NULL;
  size_t nx = next_line(y);
  if (nx >= y->nl) return MCP_OK;
  const yline *l = &y->ln[nx];
  size_t li = indent_of(l);
  if (parent != (size_t)-1 && li <= parent) return MCP_OK;
  if (++y->depth > YAML_MAX_DEPTH) return yfail(y, nx, "nested too deep");
  mcp_status st = is_seq_item(l->s + li, l->n - li) ? sequence(y, li, out) : mapping(y, li, out);
  y->depth--;
  return st;
}

/* Splits the frontmatter (between the "---" lines) into lines. */
static mcp_status split_lines(yaml *y, const char *text, size_t len) {
  size_t pos = 0, cap = 0;
  bool first = true, closed = false;
  while (pos < len) {
    const char *nl = memchr(text + pos, '\n', len - pos);
    size_t end = nl ? (size_t)(nl - text) : len, n = end - pos;
    if (n && text[end - 1] == '\r') n--;
    const char *s = text + pos;
    pos = nl ? end + 1 : len;
    if (first) {
      if (n != 3 || memcmp(s, "---", 3) != 0) {
        say(y->why, y->whylen, "SKILL.md does not start with a \"---\" frontmatter line");
        return MCP_EPROTO;
      }
      first = false;
      continue;
    }
    if ((n == 3 && memcmp(s, "---", 3) == 0) || (n == 3 && memcmp(s, "...", 3) == 0)) {
      closed = true;
      break;
    }
    size_t lead = indent_of(&(yline){s, n});
    if (lead < n && s[lead] == '\t') {
      say(y->why, y->whylen, "frontmatter line %zu: a tab in the indentation", y->nl + 2);
      return MCP_EPROTO;
    }
    if (y->nl == cap) {
      size_t nc = cap ? cap * 2 : 16;
      yline *g = mcp__reallocarray(y->ln, nc, sizeof(*g));
      if (!g) return y->nomem = true, MCP_ENOMEM;
      y->ln = g;
      cap = nc;
    }
    y->ln[y->nl++] = (yline){s, n};
  }
  if (first) {
    say(y->why, y->whylen, "SKILL.md is empty: no frontmatter");
    return MCP_EPROTO;
  }
  if (!closed) {
    say(y->why, y->whylen, "the frontmatter has no closing \"---\" line");
    return MCP_EPROTO;
  }
  return MCP_OK;
}

mcp_status mcp__skill_frontmatter(const char *text, size_t len, json_object **out, char *why,
                                  size_t whylen) {
  *out = NULL;
  yaml y = {.why = why, .whylen = whylen};
  mcp_status st = split_lines(&y, text, len);
  json_object *o = NULL;
  if (st == MCP_OK && (st = node(&y, (size_t)-1, &o)) == MCP_OK) {
    if (next_line(&y) < y.nl) st = yfail(&y, y.i, "text after the frontmatter's mapping");
    else if (!o || !json_object_is_type(o, json_type_object))
      st = yfail(&y, 0, "the frontmatter is not a mapping");
  }
  mcp__free(y.ln);
  if (y.nomem) st = MCP_ENOMEM;
  if (st) {
    json_object_put(o);
    if (st == MCP_ENOMEM) say(why, whylen, "out of memory");
    return st;
  }
  *out = o;
  return MCP_OK;
}
