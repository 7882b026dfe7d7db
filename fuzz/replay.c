/* SPDX-License-Identifier: MIT */
/*
 * replay.c: runs one fuzz target's LLVMFuzzerTestOneInput over files,
 * without libFuzzer, so that `make check` (with gcc, under any sanitizer
 * or valgrind) keeps every seed and every crash ever found passing.
 *
 * usage: replay_X [FILE|DIR]...   With no argument it replays the directory
 * FUZZ_CORPUS_ROOT/X, FUZZ_CORPUS_ROOT given at build time and X taken from
 * the program's name (tests/replay_X, or libtool's lt-replay_X), so that one
 * build of this file serves every target.  Directories are read in name order,
 * files starting with "." skipped.  Exits 0 when at least one input ran
 * (a failing input aborts), 1 when there was nothing to replay.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_common.h"

static int replay_file(const char *path, size_t *count) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
    return -1;
  }
  size_t cap = 4096, n = 0;
  unsigned char *buf = malloc(cap);
  for (;;) {
    if (!buf) {
      fclose(f);
      return -1;
    }
    n += fread(buf + n, 1, cap - n, f);
    if (n < cap) break;
    cap *= 2;
    unsigned char *p = realloc(buf, cap);
    if (!p) free(buf);
    buf = p;
  }
  int bad = ferror(f);
  fclose(f);
  if (bad) {
    fprintf(stderr, "replay: %s: read error\n", path);
    free(buf);
    return -1;
  }
  /* An exact-size copy, so ASan catches reads past the input. */
  unsigned char *in = malloc(n ? n : 1);
  if (!in) {
    free(buf);
    return -1;
  }
  memcpy(in, buf, n);
  free(buf);
  LLVMFuzzerTestOneInput(in, n);
  free(in);
  (*count)++;
  return 0;
}

static int skip_dot(const struct dirent *d) { return d->d_name[0] != '.'; }

static int replay_path(const char *path, size_t *count) {
  struct stat st;
  if (stat(path, &st) != 0) {
    fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
    return -1;
  }
  if (!S_ISDIR(st.st_mode)) return replay_file(path, count);
  struct dirent **names = NULL;
  int n = scandir(path, &names, skip_dot, alphasort);
  if (n < 0) {
    fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
    return -1;
  }
  int rc = 0;
  for (int i = 0; i < n; i++) {
    size_t len = strlen(path) + strlen(names[i]->d_name) + 2;
    char *child = malloc(len);
    if (child) {
      snprintf(child, len, "%s/%s", path, names[i]->d_name);
      if (replay_path(child, count) != 0) rc = -1;
      free(child);
    } else {
      rc = -1;
    }
    free(names[i]);
  }
  free(names);
  return rc;
}

/* The corpus directory of the target this program was linked with:
 * FUZZ_CORPUS_ROOT "/" X for a program named [lt-]replay_X, else NULL. */
static char *default_corpus(const char *argv0) {
#ifdef FUZZ_CORPUS_ROOT
  const char *base = strrchr(argv0, '/');
  base = base ? base + 1 : argv0;
  if (strncmp(base, "lt-", 3) == 0) base += 3;
  if (strncmp(base, "replay_", 7) != 0 || base[7] == '\0') return NULL;
  const char *target = base + 7;
  size_t len = strlen(FUZZ_CORPUS_ROOT) + 1 + strlen(target) + 1;
  char *dir = malloc(len);
  if (dir) snprintf(dir, len, "%s/%s", FUZZ_CORPUS_ROOT, target);
  return dir;
#else
  (void)argv0;
  return NULL;
#endif
}

int main(int argc, char **argv) {
  size_t count = 0;
  int rc = 0;
  if (argc < 2) {
    char *dir = default_corpus(argv[0]);
    if (!dir) {
      fprintf(stderr,
              "usage: %s FILE|DIR...  (with no argument, a program named replay_X "
              "replays its target's corpus)\n",
              argv[0]);
      return 2;
    }
    rc = replay_path(dir, &count);
    free(dir);
  }
  for (int i = 1; i < argc; i++)
    if (replay_path(argv[i], &count) != 0) rc = -1;
  printf("%s: %zu inputs replayed\n", argv[0], count);
  return rc == 0 && count > 0 ? 0 : 1;
}
