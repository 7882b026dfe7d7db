/* SPDX-License-Identifier: MIT */
/*
 * mcp_oauth_store.c: the file token store of OAuth (see mcp_oauth.h): one
 * private file per server, <sha256(key) hex>.json, in a private directory,
 * read and replaced through mcp_fsafe.c.
 *
 * Owns nothing between calls: no globals, no threads, no locks; any thread
 * may call it (the engine calls it from the flow thread and from
 * mcp__oauth_new()).  It knows file names and privacy, not what the state
 * means: the engine serialises its state and picks between this store and
 * the host's own callbacks.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcp_fsafe.h"
#include "mcp_oauth.h"
#include "mcp_ossl.h"
#include "mcp_sha256.h"

/* A stored state is small (tokens, a registration); more is not ours. */
#define MAX_STATE ((size_t)1024 * 1024)

/* $XDG_DATA_HOME/mcpconn/oauth or ~/.local/share/mcpconn/oauth (new). */
static char *default_store_dir(void) {
  const char *x = getenv("XDG_DATA_HOME");
  if (x && *x == '/') return mcp__asprintf("%s/mcpconn/oauth", x);
  const char *home = getenv("HOME");
  if (!home || *home != '/') return NULL;
  return mcp__asprintf("%s/.local/share/mcpconn/oauth", home);
}

/* <sha256(key) hex>.json (new string). */
static char *store_name(const char *key) {
  unsigned char md[MCP_SHA256_LEN];
  mcp__sha256(key, strlen(key), md);
  char hex[65];
  for (int i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", md[i]);
  return mcp__asprintf("%s.json", hex);
}

char *mcp__oauth_store_dir(const char *dir) {
  return dir && *dir ? mcp__strdup(dir) : default_store_dir();
}

mcp_status mcp__oauth_file_load(const char *dir, const char *key, char **data, mcp_error *err) {
  char why[1200];
  *data = NULL;
  /* Tokens from a directory or file someone else can write could be
   * theirs (or a FIFO that hangs us): only private ones are read. */
  int e = mcp__fsafe_dir(dir, false, why, sizeof(why));
  if (e == ENOENT) return MCP_ENOTFOUND;
  if (e == ENOMEM) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  if (e) return mcp__error_set(err, MCP_EIO, "OAuth token store: %s", why);
  char *name = store_name(key);
  char *path = name ? mcp__asprintf("%s/%s", dir, name) : NULL;
  mcp__free(name);
  if (!path) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  int fd = -1;
  e = mcp__fsafe_open(path, &fd, why, sizeof(why));
  mcp_status st = MCP_OK;
  if (e == ENOENT) {
    st = MCP_ENOTFOUND;
  } else if (e == ENOMEM) {
    st = mcp__error_set(err, MCP_ENOMEM, "out of memory");
  } else if (e) {
    st = mcp__error_set(err, MCP_EIO, "OAuth token store: %s", why);
  }
  if (st != MCP_OK) goto out;
  mcp_buf b;
  mcp__buf_init(&b);
  char buf[4096];
  for (;;) {
    ssize_t r = read(fd, buf, sizeof(buf));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      st = mcp__error_set(err, MCP_EIO, "OAuth token store: %s: cannot read: %s", path,
                          strerror(errno));
      break;
    }
    if (r == 0) break;
    if (b.len + (size_t)r > MAX_STATE) {
      st = mcp__error_set(err, MCP_EIO, "OAuth token store: %s: larger than %zu bytes", path,
                          MAX_STATE);
      break;
    }
    if (mcp__buf_append(&b, buf, (size_t)r)) {
      st = mcp__error_set(err, MCP_ENOMEM, "out of memory");
      break;
    }
  }
  OPENSSL_cleanse(buf, sizeof(buf));
  if (st == MCP_OK && !b.data) st = MCP_ENOTFOUND; /* empty: nothing stored */
  if (st == MCP_OK) {
    *data = b.data;
  } else if (b.data) {
    OPENSSL_cleanse(b.data, b.len);
    mcp__buf_free(&b);
  }
out:
  if (fd >= 0) close(fd);
  mcp__free(path);
  return st;
}

mcp_status mcp__oauth_file_save(const char *dir, const char *key, const char *data,
                                mcp_error *err) {
  char why[1200];
  int e = mcp__fsafe_dir(dir, true, why, sizeof(why));
  char *name = e ? NULL : store_name(key);
  if (!e && !name) e = ENOMEM;
  if (!e) {
    struct mcp_fsafe_part part = {data, strlen(data)};
    e = mcp__fsafe_replace(dir, name, &part, 1, why, sizeof(why));
  }
  mcp__free(name);
  if (e == ENOMEM) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  if (e) return mcp__error_set(err, MCP_EIO, "OAuth token store: %s", why);
  return MCP_OK;
}

/* The stored state, or NULL.  A file store that is there but not private
 * (or unreadable) is an error in |err|; nothing stored is not. */
