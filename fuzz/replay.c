/*
 * replay.c: runs one fuzz target's LLVMFuzzerTestOneInput over files,
 * without libFuzzer, so that `make check` (with gcc, under any sanitizer
 * or valgrind) keeps every seed and every crash ever found passing.
 *
 * usage: replay [FILE|DIR]...   With no argument it replays the directory
 * FUZZ_CORPUS_DIR given at build time.  Directories are read in name order,
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

int main(int argc, char **argv) {
  size_t count = 0;
  int rc = 0;
  if (argc < 2) {
#ifdef FUZZ_CORPUS_DIR
    rc = replay_path(FUZZ_CORPUS_DIR, &count);
#else
    fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
    return 2;
#endif
  }
  for (int i = 1; i < argc; i++)
    if (replay_path(argv[i], &count) != 0) rc = -1;
  printf("%s: %zu inputs replayed\n", argv[0], count);
  return rc == 0 && count > 0 ? 0 : 1;
}
