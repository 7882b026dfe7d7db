/* SPDX-License-Identifier: MIT */
/*
 * mcp_fsafe.c: the "private file or directory" rule of the cache and the
 * token store (see mcp_fsafe.h): check a directory, open a file without
 * following links or blocking, replace a file through mkstemp and rename.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "mcp_fsafe.h"
#include "mcp_int.h"

static void say(char *why, size_t n, const char *path, const char *fmt, ...) MCP_PRINTF(4, 5);

static void say(char *why, size_t n, const char *path, const char *fmt, ...) {
  if (!why || !n) return;
  int k = snprintf(why, n, "%s: ", path);
  if (k < 0 || (size_t)k >= n) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why + k, n - (size_t)k, fmt, ap);
  va_end(ap);
}

static const char *errtext(int e, char *buf, size_t n) {
#if defined(__GLIBC__) && defined(_GNU_SOURCE)
  return strerror_r(e, buf, n);
#else
  if (strerror_r(e, buf, n) != 0) snprintf(buf, n, "error %d", e);
  return buf;
#endif
}

/* Judges what fstat() said of |path|; 0 or EPERM with the reason. */
static int judge(const struct stat *sb, const char *path, bool want_dir, char *why, size_t n) {
  if (want_dir ? !S_ISDIR(sb->st_mode) : !S_ISREG(sb->st_mode)) {
    say(why, n, path, "not a %s; refusing to use it", want_dir ? "directory" : "regular file");
    return EPERM;
  }
  if (sb->st_uid != geteuid()) {
    say(why, n, path,
        "owned by uid %ld, not by us (uid %ld); refusing to "
        "use it",
        (long)sb->st_uid, (long)geteuid());
    return EPERM;
  }
  if (sb->st_mode & (S_IWGRP | S_IWOTH)) {
    say(why, n, path,
        "writable by %s (mode %03o); refusing to use it "
        "(chmod go-w fixes it)",
        (sb->st_mode & S_IWOTH) ? "others" : "its group", (unsigned)(sb->st_mode & 0777));
    return EPERM;
  }
  return 0;
}

/* Creates |dir| and its missing parents with mode 0700. */
static int mkdir_p(const char *dir, char *why, size_t n) {
  char eb[128];
  char *p = mcp__strdup(dir);
  if (!p) return ENOMEM;
  int e = 0;
  for (char *s = p + 1;; s++) {
    if (*s != '/' && *s != '\0') continue;
    char saved = *s;
    *s = '\0';
    if (mkdir(p, 0700) < 0 && errno != EEXIST) {
      e = errno;
      say(why, n, p, "cannot create the directory: %s", errtext(e, eb, sizeof(eb)));
      break;
    }
    *s = saved;
    if (!saved) break;
  }
  mcp__free(p);
  return e;
}

int mcp__fsafe_dir(const char *dir, bool create, char *why, size_t why_size) {
  char eb[128];
  if (why && why_size) *why = '\0';
  if (create) {
    int e = mkdir_p(dir, why, why_size);
    if (e) return e;
  }
  /* O_NOFOLLOW refuses a symlink as the last component (ELOOP). */
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    if (e == ENOENT) {
      say(why, why_size, dir, "no such directory");
      return ENOENT;
    }
    struct stat lsb;
    if (e == ELOOP || e == ENOTDIR) {
      bool link = lstat(dir, &lsb) == 0 && S_ISLNK(lsb.st_mode);
      say(why, why_size, dir, "%s; refusing to use it",
          link ? "a symbolic link" : "not a directory");
      return EPERM;
    }
    say(why, why_size, dir, "cannot open the directory: %s", errtext(e, eb, sizeof(eb)));
    return e;
  }
  struct stat sb;
  int e = fstat(fd, &sb) < 0 ? errno : 0;
  close(fd);
  if (e) {
    say(why, why_size, dir, "cannot stat: %s", errtext(e, eb, sizeof(eb)));
    return e;
  }
  return judge(&sb, dir, true, why, why_size);
}

int mcp__fsafe_open(const char *path, int *fd, char *why, size_t why_size) {
  char eb[128];
  if (why && why_size) *why = '\0';
  *fd = -1;
  /* O_NONBLOCK: opening a FIFO for reading would wait for a writer. */
  int f = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (f < 0) {
    int e = errno;
    if (e == ENOENT) {
      say(why, why_size, path, "no such file");
      return ENOENT;
    }
    if (e == ELOOP) {
      say(why, why_size, path, "a symbolic link; refusing to use it");
      return EPERM;
    }
    say(why, why_size, path, "cannot open: %s", errtext(e, eb, sizeof(eb)));
    return e;
  }
  struct stat sb;
  int e = fstat(f, &sb) < 0 ? errno : 0;
  if (e) {
    say(why, why_size, path, "cannot stat: %s", errtext(e, eb, sizeof(eb)));
  } else {
    e = judge(&sb, path, false, why, why_size);
  }
  if (e) {
    close(f);
    return e;
  }
  /* Regular files ignore O_NONBLOCK; drop it all the same. */
  int fl = fcntl(f, F_GETFL);
  if (fl >= 0) fcntl(f, F_SETFL, fl & ~O_NONBLOCK);
  *fd = f;
  return 0;
}

static int write_all(int fd, const char *p, size_t n) {
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return errno;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

int mcp__fsafe_replace(const char *dir, const char *name, const struct mcp_fsafe_part *parts,
                       size_t nparts, char *why, size_t why_size) {
  char eb[128];
  const char *step = NULL;
  int fd = -1, dfd = -1, e = 0;
  if (why && why_size) *why = '\0';
  char *tmp = mcp__asprintf("%s/.%s.XXXXXX", dir, name);
  char *final = mcp__asprintf("%s/%s", dir, name);
  if (!tmp || !final) {
    e = ENOMEM;
    say(why, why_size, dir, "out of memory");
    goto out;
  }
  /* mkostemp: O_CREAT | O_EXCL with a random name, mode 0600. */
  fd = mkostemp(tmp, O_CLOEXEC);
  if (fd < 0) {
    e = errno;
    step = "cannot create a temporary file";
    mcp__free(tmp);
    tmp = NULL; /* nothing to unlink */
    goto io;
  }
  if (fchmod(fd, 0600) < 0) {
    e = errno;
    step = "cannot set the mode";
    goto io;
  }
  for (size_t i = 0; i < nparts; i++)
    if ((e = write_all(fd, parts[i].data, parts[i].len)) != 0) {
      step = "cannot write";
      goto io;
    }
  if (fsync(fd) < 0) {
    e = errno;
    step = "cannot sync";
    goto io;
  }
  int c = close(fd);
  fd = -1;
  if (c < 0) {
    e = errno;
    step = "cannot close";
    goto io;
  }
  /* rename() replaces whatever is at |final| (file, FIFO, symlink) and
   * never writes through it. */
  if (rename(tmp, final) < 0) {
    e = errno;
    step = "cannot rename";
    goto io;
  }
  mcp__free(tmp);
  tmp = NULL;
  /* Make the rename itself durable. */
  dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dfd < 0 || fsync(dfd) < 0) {
    e = errno;
    step = "cannot sync the directory";
    goto io;
  }
  goto out;
io:
  say(why, why_size, final ? final : dir, "%s: %s", step, errtext(e, eb, sizeof(eb)));
out:
  if (fd >= 0) close(fd);
  if (dfd >= 0) close(dfd);
  if (tmp) unlink(tmp);
  mcp__free(tmp);
  mcp__free(final);
  return e;
}
