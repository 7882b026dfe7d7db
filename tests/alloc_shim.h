/* SPDX-License-Identifier: MIT */
/*
 * alloc_shim.h: a malloc interposer for allocation-failure tests.
 *
 * Include it in exactly one test program (it defines malloc, calloc,
 * realloc, free, posix_memalign, aligned_alloc, memalign and valloc).  An
 * executable's definitions win over every shared library's, so json-c,
 * OpenSSL, nghttp2 and libc itself (strdup, fopen, pthread_create) allocate
 * through these too, not only the library's mcp__malloc.  Each forwards to
 * the next definition (libc, or the ASan/TSan runtime in sanitizer builds)
 * found with dlsym(RTLD_NEXT).
 *
 * alloc_shim_arm(n) starts counting allocation calls (from every thread);
 * the n-th (1-based) counted call fails with NULL and ENOMEM, the others
 * succeed.  alloc_shim_disarm() stops counting and returns whether the
 * failure happened.  alloc_shim_set_exempt() can spare chosen calls (those
 * of a dependency known to crash on allocation failure).  Nothing is counted while disarmed.  Allocations made
 * by the sanitizer runtimes' own interceptors (e.g. ASan's strdup) do not
 * come through here and are not counted.
 */
#ifndef ALLOC_SHIM_H
#define ALLOC_SHIM_H

#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Exported (the suite links with -rdynamic) so that shared libraries bind
 * to these; the build compiles with -fvisibility=hidden. */
#define SHIM_EXPORT __attribute__((visibility("default"))) SHIM_NOSAN
/* A sanitizer runtime allocates before its shadow memory exists: nothing
 * on the allocation path may be instrumented. */
#define SHIM_NOSAN __attribute__((no_sanitize("address", "thread", "undefined"), noinline))

typedef void *(*shim_malloc_fn)(size_t);
typedef void *(*shim_calloc_fn)(size_t, size_t);
typedef void *(*shim_realloc_fn)(void *, size_t);
typedef void (*shim_free_fn)(void *);
typedef int (*shim_memalign_fn)(void **, size_t, size_t);
typedef void *(*shim_aligned_fn)(size_t, size_t);
typedef void *(*shim_valloc_fn)(size_t);

static shim_malloc_fn shim_real_malloc;
static shim_calloc_fn shim_real_calloc;
static shim_realloc_fn shim_real_realloc;
static shim_free_fn shim_real_free;
static shim_memalign_fn shim_real_posix_memalign;
static shim_aligned_fn shim_real_aligned_alloc;
static shim_aligned_fn shim_real_memalign;
static shim_valloc_fn shim_real_valloc;

static atomic_bool shim_armed;
static atomic_long shim_count;  /* counted calls since arming */
static atomic_long shim_target; /* the call that fails */
static atomic_bool shim_hit;

/* dlsym may allocate (its error buffer) before the real functions are
 * known: such early requests are served from this arena and never freed. */
static _Alignas(16) unsigned char shim_arena[16384];
static atomic_size_t shim_arena_used;
static atomic_int shim_resolving;

SHIM_NOSAN static void *shim_arena_alloc(size_t n) {
  n = (n + 15) & ~(size_t)15;
  size_t off = atomic_fetch_add(&shim_arena_used, n);
  if (off + n > sizeof(shim_arena)) return NULL;
  return shim_arena + off;
}

SHIM_NOSAN static bool shim_in_arena(const void *p) {
  return (const unsigned char *)p >= shim_arena &&
         (const unsigned char *)p < shim_arena + sizeof(shim_arena);
}

SHIM_NOSAN static void shim_resolve(void) {
  if (shim_real_free) return;
  atomic_fetch_add(&shim_resolving, 1);
  shim_real_malloc = (shim_malloc_fn)dlsym(RTLD_NEXT, "malloc");
  shim_real_calloc = (shim_calloc_fn)dlsym(RTLD_NEXT, "calloc");
  shim_real_realloc = (shim_realloc_fn)dlsym(RTLD_NEXT, "realloc");
  shim_real_posix_memalign = (shim_memalign_fn)dlsym(RTLD_NEXT, "posix_memalign");
  shim_real_aligned_alloc = (shim_aligned_fn)dlsym(RTLD_NEXT, "aligned_alloc");
  shim_real_memalign = (shim_aligned_fn)dlsym(RTLD_NEXT, "memalign");
  shim_real_valloc = (shim_valloc_fn)dlsym(RTLD_NEXT, "valloc");
  shim_real_free = (shim_free_fn)dlsym(RTLD_NEXT, "free");
  atomic_fetch_sub(&shim_resolving, 1);
}

/* Called when an allocation is made to fail: a place for a debugger's
 * breakpoint (gdb -ex 'break alloc_shim_failing'). */
void alloc_shim_failing(long n);
SHIM_NOSAN void alloc_shim_failing(long n) { __asm__ volatile("" : : "r"(n) : "memory"); }

/* When set, called for the call chosen to fail with the address it was
 * called from: returning true exempts it (it succeeds and the next counted
 * call fails instead).  It runs on the allocating thread, which may be one
 * a sanitizer runtime is still setting up: it must be SHIM_NOSAN. */
static bool (*shim_exempt)(void *caller);

/* True when this allocation call must fail. */
SHIM_NOSAN static bool shim_should_fail(void *caller) {
  if (!atomic_load(&shim_armed)) return false;
  long n = atomic_fetch_add(&shim_count, 1) + 1;
  if (n != atomic_load(&shim_target)) return false;
  if (shim_exempt && shim_exempt(caller)) {
    atomic_store(&shim_target, n + 1);
    return false;
  }
  atomic_store(&shim_hit, true);
  alloc_shim_failing(n);
  return true;
}

/* |fn| (or NULL) decides which chosen calls are exempt; set it while
 * disarmed. */
static inline void alloc_shim_set_exempt(bool (*fn)(void *caller)) { shim_exempt = fn; }

static inline void alloc_shim_arm(long n) {
  shim_resolve();
  atomic_store(&shim_hit, false);
  atomic_store(&shim_count, 0);
  atomic_store(&shim_target, n);
  atomic_store(&shim_armed, true);
}

/* Stops counting; true when the n-th call happened (and failed). */
static inline bool alloc_shim_disarm(void) {
  atomic_store(&shim_armed, false);
  return atomic_load(&shim_hit);
}

/* Counted calls since the last arm. */
static inline long alloc_shim_count(void) { return atomic_load(&shim_count); }

SHIM_EXPORT void *malloc(size_t n) {
  if (!shim_real_malloc) {
    if (atomic_load(&shim_resolving)) return shim_arena_alloc(n);
    shim_resolve();
  }
  if (shim_should_fail(__builtin_return_address(0))) {
    errno = ENOMEM;
    return NULL;
  }
  return shim_real_malloc(n);
}

SHIM_EXPORT void *calloc(size_t nmemb, size_t size) {
  if (!shim_real_calloc) {
    if (atomic_load(&shim_resolving)) {
      if (size && nmemb > SIZE_MAX / size) return NULL;
      return shim_arena_alloc(nmemb * size); /* static: already zero */
    }
    shim_resolve();
  }
  if (shim_should_fail(__builtin_return_address(0))) {
    errno = ENOMEM;
    return NULL;
  }
  return shim_real_calloc(nmemb, size);
}

SHIM_EXPORT void *realloc(void *p, size_t n) {
  if (!shim_real_realloc) shim_resolve();
  if (shim_in_arena(p)) { /* move out of the arena; the old block stays */
    void *q = malloc(n);
    size_t avail = (size_t)(shim_arena + sizeof(shim_arena) - (unsigned char *)p);
    if (q) memcpy(q, p, n < avail ? n : avail);
    return q;
  }
  if (shim_should_fail(__builtin_return_address(0))) {
    errno = ENOMEM;
    return NULL;
  }
  return shim_real_realloc(p, n);
}

SHIM_EXPORT void free(void *p) {
  if (!p || shim_in_arena(p)) return;
  if (!shim_real_free) shim_resolve();
  shim_real_free(p);
}

SHIM_EXPORT int posix_memalign(void **out, size_t align, size_t n) {
  if (!shim_real_posix_memalign) shim_resolve();
  if (shim_should_fail(__builtin_return_address(0))) return ENOMEM;
  return shim_real_posix_memalign(out, align, n);
}

SHIM_EXPORT void *aligned_alloc(size_t align, size_t n) {
  if (!shim_real_aligned_alloc) shim_resolve();
  if (shim_should_fail(__builtin_return_address(0))) {
    errno = ENOMEM;
    return NULL;
  }
  return shim_real_aligned_alloc(align, n);
}

SHIM_EXPORT void *memalign(size_t align, size_t n) {
  if (!shim_real_memalign) shim_resolve();
  if (shim_should_fail(__builtin_return_address(0))) {
    errno = ENOMEM;
    return NULL;
  }
  return shim_real_memalign(align, n);
}

SHIM_EXPORT void *valloc(size_t n) {
  if (!shim_real_valloc) shim_resolve();
  if (shim_should_fail(__builtin_return_address(0))) {
    errno = ENOMEM;
    return NULL;
  }
  return shim_real_valloc(n);
}

#endif /* ALLOC_SHIM_H */
