/* SPDX-License-Identifier: MIT */
/*
 * mcp_cache.c: the deferred-tool cache on disk: one versioned JSON file per
 * server, written atomically, judged strictly when read.  No threads, no
 * global state.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <json-c/json.h>

#include "mcp_cache.h"
#include "mcp_fsafe.h"
#include "mcp_jsonrpc.h"
#include "mcp_sha256.h"

/* Deepest JSON nesting accepted (tool schemas nest, but not this deep). */
#define JSON_MAX_DEPTH 256
/* Bytes of the server name kept in the file name. */
#define NAME_KEEP 64

static const char *errtext(int e, char *buf, size_t n) {
#if defined(__GLIBC__) && defined(_GNU_SOURCE)
  return strerror_r(e, buf, n);
#else
  if (strerror_r(e, buf, n) != 0) snprintf(buf, n, "error %d", e);
  return buf;
#endif
}

mcp_log_level mcp__cache_outcome_level(mcp_cache_outcome o) {
  switch (o) {
  case MCP_CACHE_CORRUPT:
  case MCP_CACHE_VERSION_MISMATCH:
  case MCP_CACHE_UNREADABLE: return MCP_LOG_WARN;
  case MCP_CACHE_HIT:
  case MCP_CACHE_ABSENT:
  case MCP_CACHE_STALE:
  case MCP_CACHE_MISMATCH:
  case MCP_CACHE_PRIVATE: break;
  }
  return MCP_LOG_DEBUG;
}

mcp_status mcp__cache_dir(const char *xdg_cache_home, const char *home, char **out) {
  if (!out) return MCP_EINVAL;
  *out = NULL;
  if (xdg_cache_home && *xdg_cache_home == '/') *out = mcp__asprintf("%s/mcpconn", xdg_cache_home);
  else if (home && *home == '/') *out = mcp__asprintf("%s/.cache/mcpconn", home);
  else return MCP_EINVAL;
  return *out ? MCP_OK : MCP_ENOMEM;
}

/* The file name's stem: "tools-<sanitised>-<8 hex>" (no directory). */
static char *file_stem(const char *server) {
  static const char hex[] = "0123456789abcdef";
  unsigned char md[MCP_SHA256_LEN];
  char san[NAME_KEEP + 1], h[9];
  size_t n = 0;
  mcp__sha256(server, strlen(server), md);
  for (int i = 0; i < 4; i++) {
    h[2 * i] = hex[md[i] >> 4];
    h[2 * i + 1] = hex[md[i] & 15];
  }
  h[8] = '\0';
  /* Names are [A-Za-z0-9_.:-] already; ":" and anything else becomes "_",
   * and a leading "." too, so no name makes a hidden file or "..".  The
   * hash keeps names that sanitise alike apart. */
  for (; server[n] && n < NAME_KEEP; n++) {
    char c = server[n];
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || (c == '.' && n > 0);
    san[n] = ok ? c : '_';
  }
  san[n] = '\0';
  return mcp__asprintf("tools-%s-%s", san, h);
}

mcp_status mcp__cache_path(const char *dir, const char *server, char **out) {
  if (!out) return MCP_EINVAL;
  *out = NULL;
  if (!dir || !*dir || !server || !*server) return MCP_EINVAL;
  char *stem = file_stem(server);
  if (!stem) return MCP_ENOMEM;
  *out = mcp__asprintf("%s/%s.json", dir, stem);
  mcp__free(stem);
  return *out ? MCP_OK : MCP_ENOMEM;
}

static bool hash_ok(const char *h) {
  size_t n = 0;
  for (; h[n]; n++) {
    char c = h[n];
    bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    if (!ok || n >= 128) return false;
  }
  return n > 0;
}

mcp_status mcp__cache_write(const char *dir, const char *server, const char *config_hash,
                            const char *tools_json, int64_t now, mcp_error *err) {
  return mcp__cache_write_era(dir, server, config_hash, tools_json, MCP_CACHE_ERA_UNKNOWN, now,
                              err);
}

static const char *const era_names[] = {NULL, "legacy", "modern"};

mcp_status mcp__cache_write_era(const char *dir, const char *server, const char *config_hash,
                                const char *tools_json, mcp_cache_era era, int64_t now,
                                mcp_error *err) {
  char why[160], fwhy[1024];
  char *stem = NULL, *final = NULL, *head = NULL;
  json_object *tools = NULL, *jname = NULL;
  int e;
  mcp_status st = MCP_OK;

  if (!dir || !*dir || !server || !*server || !config_hash)
    return mcp__error_set(err, MCP_EINVAL, "cache write: missing argument");
  if (!hash_ok(config_hash))
    return mcp__error_set(err, MCP_EINVAL,
                          "cache write: config hash is not "
                          "hex");
  tools = tools_json ? mcp__json_parse_document(tools_json, strlen(tools_json), JSON_MAX_DEPTH,
                                                "invalid JSON: ", why, sizeof(why))
                     : NULL;
  if (tools_json && (!tools || !json_object_is_type(tools, json_type_array))) {
    st = mcp__error_set(err, MCP_EINVAL,
                        "cache write for server \"%s\": "
                        "tools are not a JSON array%s%s",
                        server, tools ? "" : ": ", tools ? "" : why);
    goto out;
  }
  jname = json_object_new_string(server);
  stem = file_stem(server);
  if (!jname || !stem) goto oom;
  bool named = era == MCP_CACHE_ERA_LEGACY || era == MCP_CACHE_ERA_MODERN;
  head = mcp__asprintf("{\"version\":%d,\"server\":%s,\"configHash\":\"%s\",\"writtenAt\":%lld,"
                       "%s%s%s%s",
                       MCP_CACHE_VERSION,
                       json_object_to_json_string_ext(jname, JSON_C_TO_STRING_PLAIN |
                                                                 JSON_C_TO_STRING_NOSLASHESCAPE),
                       config_hash, (long long)now, named ? "\"era\":\"" : "",
                       named ? era_names[era] : "", named ? "\"," : "",
                       tools_json ? "\"tools\":" : "\"private\":true");
  final = mcp__asprintf("%s.json", stem);
  if (!head || !final) goto oom;

  /* The directory must be private (ours, written by nobody else), or a
   * planted cache file could hand the host another server's tools. */
  struct mcp_fsafe_part parts[] = {
      {head, strlen(head)},
      {tools_json ? tools_json : "", tools_json ? strlen(tools_json) : 0},
      {"}\n", 2}};
  if ((e = mcp__fsafe_dir(dir, true, fwhy, sizeof(fwhy))) != 0 ||
      (e = mcp__fsafe_replace(dir, final, parts, 3, fwhy, sizeof(fwhy))) != 0) {
    if (e == ENOMEM) goto oom;
    goto io;
  }
  goto out;
oom:
  st = mcp__error_set(err, MCP_ENOMEM, "out of memory");
  goto out;
io:
  st = mcp__error_set(err, MCP_EIO, "cache write for server \"%s\": %s", server, fwhy);
out:
  json_object_put(tools);
  json_object_put(jname);
  mcp__free(stem);
  mcp__free(final);
  mcp__free(head);
  return st;
}

/* Sets the miss reason; MCP_ENOTFOUND. */
static mcp_status miss(mcp_cache_outcome *outcome, char **why, mcp_cache_outcome o,
                       const char *prefix, const char *fmt, ...) MCP_PRINTF(5, 6);
static mcp_status miss(mcp_cache_outcome *outcome, char **why, mcp_cache_outcome o,
                       const char *prefix, const char *fmt, ...) {
  if (outcome) *outcome = o;
  if (why) {
    char text[1100];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    *why = mcp__asprintf("%s%s%s", prefix ? prefix : "", prefix ? ": " : "", text);
  }
  return MCP_ENOTFOUND;
}

static mcp_status judge(const char *data, size_t len, const char *server, const char *config_hash,
                        int64_t now, int64_t ttl_s, const char *prefix, char **tools_json,
                        mcp_cache_era *era, mcp_cache_outcome *outcome, char **why) {
  char reason[160];
  mcp_status st;
  json_object *root = mcp__json_parse_document(data, len, JSON_MAX_DEPTH, "invalid JSON: ", reason,
                                               sizeof(reason));
  json_object *v = NULL;
  if (ttl_s <= 0) ttl_s = MCP_CACHE_TTL_S;
  if (!root) {
    st = miss(outcome, why, MCP_CACHE_CORRUPT, prefix,
              "corrupt cache file: "
              "%s",
              reason);
    goto out;
  }
  if (!json_object_is_type(root, json_type_object)) {
    st = miss(outcome, why, MCP_CACHE_CORRUPT, prefix,
              "corrupt cache file: "
              "not a JSON object");
    goto out;
  }
  if (!json_object_object_get_ex(root, "version", &v) || !json_object_is_type(v, json_type_int)) {
    st = miss(outcome, why, MCP_CACHE_CORRUPT, prefix,
              "corrupt cache file: "
              "no integer \"version\"");
    goto out;
  }
  if (json_object_get_int64(v) != MCP_CACHE_VERSION) {
    st = miss(outcome, why, MCP_CACHE_VERSION_MISMATCH, prefix,
              "cache file "
              "has version %lld, not %d",
              (long long)json_object_get_int64(v), MCP_CACHE_VERSION);
    goto out;
  }
  json_object *jserver = NULL, *jhash = NULL, *jat = NULL, *jtools = NULL, *jpriv = NULL;
  bool withheld = json_object_object_get_ex(root, "private", &jpriv) &&
                  json_object_is_type(jpriv, json_type_boolean) && json_object_get_boolean(jpriv) &&
                  !json_object_object_get_ex(root, "tools", NULL);
  if (!json_object_object_get_ex(root, "server", &jserver) ||
      !json_object_is_type(jserver, json_type_string) ||
      !json_object_object_get_ex(root, "configHash", &jhash) ||
      !json_object_is_type(jhash, json_type_string) ||
      !json_object_object_get_ex(root, "writtenAt", &jat) ||
      !json_object_is_type(jat, json_type_int) ||
      (!withheld && (!json_object_object_get_ex(root, "tools", &jtools) ||
                     !json_object_is_type(jtools, json_type_array)))) {
    st = miss(outcome, why, MCP_CACHE_CORRUPT, prefix,
              "corrupt cache file: "
              "missing or mistyped server, configHash, writtenAt or tools");
    goto out;
  }
  const char *fs = json_object_get_string(jserver);
  if ((size_t)json_object_get_string_len(jserver) != strlen(server) || strcmp(fs, server) != 0) {
    st = miss(outcome, why, MCP_CACHE_CORRUPT, prefix,
              "cache file belongs "
              "to another server");
    goto out;
  }
  const char *fh = json_object_get_string(jhash);
  if ((size_t)json_object_get_string_len(jhash) != strlen(config_hash) ||
      strcmp(fh, config_hash) != 0) {
    st = miss(outcome, why, MCP_CACHE_MISMATCH, prefix,
              "cache file is for "
              "another configuration");
    goto out;
  }
  int64_t at = json_object_get_int64(jat);
  if (at > now && (uint64_t)at - (uint64_t)now > MCP_CACHE_FUTURE_SLACK_S) {
    st = miss(outcome, why, MCP_CACHE_STALE, prefix,
              "cache file is dated "
              "%llu s in the future",
              (unsigned long long)((uint64_t)at - (uint64_t)now));
    goto out;
  }
  if (at < now && (uint64_t)now - (uint64_t)at > (uint64_t)ttl_s) {
    st = miss(outcome, why, MCP_CACHE_STALE, prefix,
              "cache file is older "
              "than %lld s",
              (long long)ttl_s);
    goto out;
  }
  /* The era is a hint: an unknown value is no era, not a corrupt file. */
  json_object *jera = NULL;
  if (era && json_object_object_get_ex(root, "era", &jera) &&
      json_object_is_type(jera, json_type_string)) {
    if (strcmp(json_object_get_string(jera), "legacy") == 0) *era = MCP_CACHE_ERA_LEGACY;
    else if (strcmp(json_object_get_string(jera), "modern") == 0) *era = MCP_CACHE_ERA_MODERN;
  }
  if (withheld) {
    st = miss(outcome, why, MCP_CACHE_PRIVATE, prefix,
              "tools not kept: they were read under an authorization the configuration "
              "does not fix (OAuth or a !command secret)");
    goto out;
  }
  const char *text = json_object_to_json_string_ext(jtools, JSON_C_TO_STRING_PLAIN |
                                                                JSON_C_TO_STRING_NOSLASHESCAPE);
  *tools_json = text ? mcp__strdup(text) : NULL;
  if (!*tools_json) {
    if (era) *era = MCP_CACHE_ERA_UNKNOWN;
    st = MCP_ENOMEM;
    goto out;
  }
  if (outcome) *outcome = MCP_CACHE_HIT;
  st = MCP_OK;
out:
  json_object_put(root);
  return st;
}

mcp_status mcp__cache_parse(const char *data, size_t len, const char *server,
                            const char *config_hash, int64_t now, int64_t ttl_s, char **tools_json,
                            mcp_cache_outcome *outcome, char **why) {
  if (why) *why = NULL;
  if (!tools_json) return MCP_EINVAL;
  *tools_json = NULL;
  if ((!data && len) || !server || !config_hash) return MCP_EINVAL;
  return judge(data ? data : "", len, server, config_hash, now, ttl_s, NULL, tools_json, NULL,
               outcome, why);
}

mcp_status mcp__cache_read(const char *dir, const char *server, const char *config_hash,
                           int64_t now, int64_t ttl_s, char **tools_json,
                           mcp_cache_outcome *outcome, char **why) {
  return mcp__cache_read_era(dir, server, config_hash, now, ttl_s, tools_json, NULL, outcome, why);
}

mcp_status mcp__cache_read_era(const char *dir, const char *server, const char *config_hash,
                               int64_t now, int64_t ttl_s, char **tools_json, mcp_cache_era *era,
                               mcp_cache_outcome *outcome, char **why) {
  if (era) *era = MCP_CACHE_ERA_UNKNOWN;
  char eb[128], fwhy[1024];
  char *path = NULL;
  mcp_buf b;
  int fd = -1;
  mcp_status st;
  mcp__buf_init(&b);
  if (why) *why = NULL;
  if (!tools_json) return MCP_EINVAL;
  *tools_json = NULL;
  if (!config_hash) return MCP_EINVAL;
  st = mcp__cache_path(dir, server, &path);
  if (st != MCP_OK) return st;
  /* Only a private directory and file count: anyone else who can write
   * there could plant tools for the host to offer. */
  int e = mcp__fsafe_dir(dir, false, fwhy, sizeof(fwhy));
  if (e == 0) e = mcp__fsafe_open(path, &fd, fwhy, sizeof(fwhy));
  if (e == ENOENT) {
    if (outcome) *outcome = MCP_CACHE_ABSENT;
    st = MCP_ENOTFOUND;
    goto out;
  }
  if (e == ENOMEM) {
    st = MCP_ENOMEM;
    goto out;
  }
  if (e) {
    st = miss(outcome, why, MCP_CACHE_UNREADABLE, NULL, "%s", fwhy);
    goto out;
  }
  for (;;) {
    if (b.len > MCP_CACHE_FILE_MAX) {
      st = miss(outcome, why, MCP_CACHE_CORRUPT, path, "larger than %u bytes", MCP_CACHE_FILE_MAX);
      goto out;
    }
    if (mcp__buf_reserve(&b, 65536)) {
      st = MCP_ENOMEM;
      goto out;
    }
    ssize_t n = read(fd, b.data + b.len, 65536);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      st = miss(outcome, why, MCP_CACHE_UNREADABLE, path, "cannot read: %s",
                errtext(errno, eb, sizeof(eb)));
      goto out;
    }
    if (n == 0) break;
    b.len += (size_t)n;
  }
  st = judge(b.data, b.len, server, config_hash, now, ttl_s, path, tools_json, era, outcome, why);
out:
  if (fd >= 0) close(fd);
  mcp__buf_free(&b);
  mcp__free(path);
  return st;
}
