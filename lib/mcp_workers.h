/* SPDX-License-Identifier: MIT */
/*
 * mcp_workers.h: a fixed pool of threads running host callbacks.  Work is
 * posted to a *lane*; one lane's items run one at a time in posting order,
 * while different lanes run in parallel.  Knows nothing of MCP.
 *
 * Lock order: a lane's lock is never held while taking the pool lock the
 * other way round; see mcp_workers.c.
 */
#ifndef MCP_WORKERS_H
#define MCP_WORKERS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "mcp_int.h"

typedef struct mcp_workers mcp_workers;
typedef struct mcp_lane mcp_lane;

/* A work item: run(arg) on a worker; if the item is discarded without
 * running (lane closed), drop(arg) is called instead (may be NULL). */
typedef void (*mcp_work_fn)(void *arg);

/*
 * mcp__workers_new() starts |nthreads| threads (>= 1).
 * Returns NULL when out of memory or a thread cannot start.
 */
mcp_workers *mcp__workers_new(size_t nthreads);
/*
 * mcp__workers_free() waits for every queued item to run, stops and joins
 * the threads.  Every lane must have been freed first.  Not from a worker.
 */
void mcp__workers_free(mcp_workers *w);

/* Refcounting, so a pool shared by several clients lives as long as they. */
mcp_workers *mcp__workers_ref(mcp_workers *w);
void mcp__workers_unref(mcp_workers *w); /* last unref == free */

/* mcp__lane_new() makes an ordered lane on |w|.  NULL when out of memory. */
mcp_lane *mcp__lane_new(mcp_workers *w);
/*
 * mcp__lane_post() queues run(arg).  Threads: any, concurrently.
 * Returns MCP_OK, MCP_ENOMEM, or MCP_ECLOSED once the lane is being freed;
 * on error nothing was queued and neither run nor drop is called.
 */
int mcp__lane_post(mcp_lane *l, mcp_work_fn run, mcp_work_fn drop, void *arg);
/* True when called from a worker thread that is running an item of |l|. */
bool mcp__lane_is_current(const mcp_lane *l);
/*
 * mcp__lane_free() stops intake and waits until every item already queued
 * has run, then releases the lane.  Called from one of the lane's own items,
 * it does not wait: the lane is released after that item returns and the
 * remaining queued items have run.
 */
void mcp__lane_free(mcp_lane *l);

/*
 * Stack sizes of the library's long-lived threads.  A host with a thousand
 * servers has a thousand stdio readers (and HTTP I/O threads): glibc's
 * default (the RLIMIT_STACK soft limit, often 8 MiB) per thread reserves
 * gigabytes of address space and a guard page mapping each.  These threads
 * run no host code; MCP__STACK_IO covers the deepest of them (an OpenSSL
 * handshake, getaddrinfo) with a wide margin, and sanitizer builds get
 * four times as much.
 */
#define MCP__STACK_IO ((size_t)256 * 1024)
#define MCP__STACK_WORK ((size_t)512 * 1024)

/*
 * mcp__thread_attr_init() initialises |a| with a stack of |bytes| (scaled up
 * under sanitizers, never below PTHREAD_STACK_MIN), detached or joinable.
 * Returns 0 or pthread_attr_init()'s error; the caller destroys |a|.
 */
int mcp__thread_attr_init(pthread_attr_t *a, size_t bytes, bool detached);

#endif /* MCP_WORKERS_H */
