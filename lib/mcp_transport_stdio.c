/* SPDX-License-Identifier: MIT */
/*
 * mcp_transport_stdio.c: the stdio transport.  Spawns the server with its
 * stdin, stdout and stderr on pipes, frames stdout as JSON lines, keeps the
 * tail of stderr for error messages, writes with a deadline (SIGPIPE blocked
 * in the writing thread meanwhile), and shuts the server down (close stdin,
 * SIGTERM, SIGKILL, reap).  Pipes rather than socket pairs (which libuv
 * gives Node children, and which would let send(MSG_NOSIGNAL) skip the
 * signal mask): a round trip through a socket pair costs about a
 * microsecond more on Linux, more than the three signal-mask calls.
 * Must not know about: HTTP, MCP method names.
 *
 * Threads.  One reader thread per transport does all the waiting: it polls
 * the child's stdout and stderr, the child's pidfd and the stop pipe.  It
 * is the only caller of on_close, the only thread that reaps the child,
 * and it runs the shutdown escalation once a stop is requested (by close(),
 * or by send() after a half-written message).  So close() only has to
 * request the stop, close stdin and join the reader.  on_message,
 * on_oversize and on_error (for stdout's lines) come from whoever reads
 * stdout at the time: the reader or a leader (below), one at a time.
 *
 * Leading.  A thread about to block for a response may read stdout itself
 * (lead(), see mcp_transport.h): the response then reaches its caller with
 * no hand-off from the reader, so a sequential call costs one thread
 * wake-up (the server's) instead of two.  Who reads stdout is |owner|
 * (reader, leader or none), changed under |mu| only; the framer and |rbuf|
 * belong to the owner.  The reader gives stdout up when a caller has asked
 * to lead (|lead_ok|) and takes it back when nobody has led for
 * STDIO_LEAD_LINGER_MS, when need_reader() says responses are due that
 * nobody leads for (its eventfd |rwake_fd| wakes the reader), when a leader
 * saw the end of the stream, and for good once the transport stops or the
 * child exits (|lead_off|; a leader is then woken through |lwake_fd| and
 * the reader waits on |cv| until it has let go).  stderr, the pidfd and the
 * stop pipe stay the reader's.  Messages that arrive between two leaders
 * wait in the pipe for the next leader, at most STDIO_LEAD_LINGER_MS.
 *
 * Any number of threads may call send().  Writes are serialised by a write
 * lock made of |writing| and the condition variable |cv| (CLOCK_MONOTONIC,
 * so a deadline is not moved by wall-clock changes).  A writer that waits
 * for the pipe to drain also polls the stop pipe, so close() never waits
 * for a writer's deadline.
 *
 * Posting.  post() never waits for the server: it appends to a bounded
 * write queue (|wq_*|, at most STDIO_WQ_MAX messages and max_line bytes;
 * beyond that the server is not reading and the message is refused) and
 * wakes the reader, which polls |in_poll_fd| (its own duplicate of the
 * stdin pipe, so that polling never races with a writer closing |in_fd|)
 * for room and writes queued messages without blocking while it holds the
 * write lock.  A message the reader could write only in part stays at the
 * head with its offset.  A writer with a message of its own writes the queue
 * first (within its deadline), so messages never interleave and leave in
 * the order they were handed over.  When the reader finds the write
 * lock taken it sets |wq_kick| and the holder wakes it on unlock.
 *
 * Locks.  |mu| guards the fields marked below.  It is never held across a
 * write, a poll, or an upcall.  The write lock (|writing|) is taken under
 * |mu| and then held without it; |in_fd| belongs to the holder of the write
 * lock.  There is no other lock, so there is no lock order to respect.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mcp_jsonl.h"
#include "mcp_spawn.h"
#include "mcp_transport.h"
#include "mcp_workers.h"

#define STDIO_DEFAULT_TAIL ((size_t)64 * 1024)
#define STDIO_DEFAULT_GRACE_MS 2000
/* After stdout reaches EOF, how long to wait for the exit status before
 * reporting "server closed stdout" instead. */
#define STDIO_EOF_GRACE_MS 1000
/* After SIGKILL, how long to wait for the child to be reapable before
 * giving up (a process stuck in the kernel cannot be reaped). */
#define STDIO_KILLED_GRACE_MS 5000
/* Without a pidfd the reader checks the child with waitpid(WNOHANG) this
 * often, and more often once the child is expected to go. */
#define STDIO_FALLBACK_POLL_MS 100
#define STDIO_FALLBACK_FAST_MS 10
/* Bytes of the stderr tail quoted in the close message. */
#define STDIO_MSG_TAIL 2048
/* A write that finds the server's stdin closed waits this long (once per
 * transport) for the reader to reap the child and drain stderr, so the
 * error names the exit status and the stderr tail rather than only "closed
 * its stdin". */
#define STDIO_EPIPE_WAIT_MS 200
/* Most messages post() keeps waiting for the server to read them. */
#define STDIO_WQ_MAX 1024
/* Size of one read from stdout, and from stderr. */
#define STDIO_READ_CHUNK ((size_t)64 * 1024)
#define STDIO_ERR_CHUNK 8192
/* Reads made to drain a pipe once the child is gone (bounds the work if an
 * escaped grandchild keeps writing). */
#define STDIO_DRAIN_READS 256

/* With leading on and no leader, the reader takes stdout back after this
 * long (and so bounds how long a message that arrives between two leaders
 * waits). */
#define STDIO_LEAD_LINGER_MS 2
/* A leader that finds nothing to read tries again for a while before it
 * sleeps in poll(): the response of a quick server is due within a few
 * microseconds, and catching it awake saves a wake-up.  It spins for twice
 * the server's recent response time plus STDIO_LEAD_SPIN_MIN_NS, at most
 * STDIO_LEAD_SPIN_NS, and not at all for a server slower than that or on a
 * single CPU, so a slow server costs no CPU. */
#define STDIO_LEAD_SPIN_NS 50000
#define STDIO_LEAD_SPIN_MIN_NS 5000

enum { OWN_READER, OWN_NONE, OWN_LEADER };

/* A message queued by post(), with its newline. */
typedef struct wq_msg {
  struct wq_msg *next;
  size_t len; /* bytes in data, newline included */
  size_t off; /* bytes already written */
  char data[];
} wq_msg;

/* Shutdown escalation, run by the reader once a stop is requested. */
enum { PHASE_RUN, PHASE_TERM_WAIT, PHASE_KILL_WAIT, PHASE_KILLED };

typedef struct stdio_transport {
  mcp_transport base; /* first, so the generic header casts to us */

  /* Immutable after mcp__stdio_transport_new() returns. */
  mcp_transport_callbacks cb;
  void *user;
  size_t max_line;
  int64_t term_grace_ms; /* ms */
  int64_t kill_grace_ms; /* ms */
  pid_t pgid;            /* the child's process group, equal to its pid */
  int pidfd;             /* -1 when pidfd_open is unavailable */
  int stop_rd;           /* readable once a stop has been requested */
  int stop_wr;
  pthread_t reader;
  bool reader_started;

  /* stdout's: the current |owner| only (the reader or a leader; see
   * "Leading" above), and free() after the join. */
  int out_fd;
  mcp_jsonl *framer;
  char *rbuf; /* STDIO_READ_CHUNK bytes */
  /* stderr's: the reader thread only (and free() after the join). */
  int err_fd;
  char *tail; /* stderr ring of tail_cap bytes */
  size_t tail_cap;
  size_t tail_pos; /* next write position in the ring */
  bool tail_full;  /* the ring has wrapped at least once */

  /* Holder of the write lock only. */
  int in_fd; /* our end of the child's stdin; -1 once closed */

  /* Reader thread only: a duplicate of |in_fd| polled for room. */
  int in_poll_fd;

  pthread_mutex_t mu;
  pthread_cond_t cv; /* CLOCK_MONOTONIC; broadcast on any change below */
  /* Guarded by |mu|. */
  pid_t pid; /* -1 once reaped */
  bool reaped;
  bool status_known;       /* false if someone else reaped it (ECHILD) */
  int wstatus;             /* waitpid status when status_known */
  bool writing;            /* the write lock is held */
  bool stop_requested;     /* the stop pipe has been written */
  const char *stop_reason; /* static text, set with stop_requested */
  bool reported;           /* on_close has been (or is being) called */
  char *close_msg;         /* what on_close was told, once reported; or NULL */
  bool epipe_waited;       /* a writer has waited STDIO_EPIPE_WAIT_MS */
  bool closer_active;      /* a close() is closing stdin and joining */
  bool joined;             /* the reader has been joined */
  int owner;               /* who reads stdout: OWN_READER, _NONE, _LEADER */
  atomic_bool lead_ok;     /* callers may lead (written under |mu|) */
  bool lead_off;           /* never again: the reader keeps stdout */
  int64_t lead_last;       /* ms: leading was asked for, or a leader let go */
  int64_t lead_avg_ns;     /* moving average of a leader's wait for its answer */
  wq_msg *wq_head;         /* post()ed messages; the head belongs to the holder */
  wq_msg *wq_tail;         /* of the write lock while it writes */
  size_t wq_count;
  size_t wq_bytes;
  size_t wq_max_bytes; /* immutable */
  bool wq_broken;      /* the server closed its stdin: post() fails */
  bool wq_kick;        /* the reader waits for the write lock's release */

  /* eventfds (immutable): wake the reader to take stdout back; wake a
   * leader to check its request and |lead_off|. */
  int rwake_fd;
  int lwake_fd;
} stdio_transport;

/* The transport this thread is leading for, if any. */
static _Thread_local stdio_transport *tls_leading;

/*
 * Set once pidfd_open has failed with ENOSYS (kernel before 5.3, or a tool
 * such as valgrind 3.19 that does not know the call), so it is tried once
 * per process only.
 */
static atomic_int pidfd_unsupported;
/* Test hook state: pretend pidfd_open is unavailable. */
static atomic_int pidfd_test_disabled;

/* Test hook: non-zero makes new transports use the waitpid(WNOHANG)
 * fallback instead of a pidfd.  Threads: any. */
void mcp__stdio_test_disable_pidfd(int disable);
void mcp__stdio_test_disable_pidfd(int disable) {
  atomic_store(&pidfd_test_disabled, disable ? 1 : 0);
}

/* ---- small helpers ------------------------------------------------------ */

static const char *errtext(int e, char *buf, size_t n) {
#if defined(__GLIBC__) && defined(_GNU_SOURCE)
  return strerror_r(e, buf, n);
#else
  if (strerror_r(e, buf, n) != 0) snprintf(buf, n, "error %d", e);
  return buf;
#endif
}

/* Names the limit behind EMFILE, ENFILE or EAGAIN (a host with very many
 * servers reaches it), as " (...)"; "" for any other error. */
static const char *limit_hint(int e, char *buf, size_t n) {
  struct rlimit rl;
  if (e == EMFILE && getrlimit(RLIMIT_NOFILE, &rl) == 0)
    snprintf(buf, n, " (the open-file limit, ulimit -n, is %llu; a stdio server takes 4)",
             (unsigned long long)rl.rlim_cur);
  else if (e == ENFILE) snprintf(buf, n, " (the system's open-file table is full)");
  else if (e == EAGAIN && getrlimit(RLIMIT_NPROC, &rl) == 0)
    snprintf(buf, n, " (the process and thread limit, ulimit -u, is %llu)",
             (unsigned long long)rl.rlim_cur);
  else buf[0] = 0;
  return buf;
}

static const char *signame(int sig) {
  switch (sig) {
  case SIGHUP: return "SIGHUP";
  case SIGINT: return "SIGINT";
  case SIGQUIT: return "SIGQUIT";
  case SIGILL: return "SIGILL";
  case SIGTRAP: return "SIGTRAP";
  case SIGABRT: return "SIGABRT";
  case SIGBUS: return "SIGBUS";
  case SIGFPE: return "SIGFPE";
  case SIGKILL: return "SIGKILL";
  case SIGUSR1: return "SIGUSR1";
  case SIGSEGV: return "SIGSEGV";
  case SIGUSR2: return "SIGUSR2";
  case SIGPIPE: return "SIGPIPE";
  case SIGALRM: return "SIGALRM";
  case SIGTERM: return "SIGTERM";
  case SIGXCPU: return "SIGXCPU";
  case SIGXFSZ: return "SIGXFSZ";
  case SIGSYS: return "SIGSYS";
  default: return "unknown signal";
  }
}

static void close_fd(int *fd) {
  if (*fd >= 0) {
    close(*fd);
    *fd = -1;
  }
}

static int set_nonblock(int fd) {
  int fl = fcntl(fd, F_GETFL);
  if (fl < 0) return -1;
  return fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/*
 * Moves |*fd| to a number >= 3 (keeping close-on-exec).  A host that closed
 * its own stdin makes pipe2() hand out 0, which the child's dup2() onto
 * 0..2 would then clobber.
 */
static int move_high(int *fd) {
  if (*fd >= 3) return 0;
  int nfd = fcntl(*fd, F_DUPFD_CLOEXEC, 3);
  if (nfd < 0) return -1;
  close(*fd);
  *fd = nfd;
  return 0;
}

static int make_pipe(int p[2]) {
  if (pipe2(p, O_CLOEXEC) < 0) return -1;
  if (move_high(&p[0]) < 0 || move_high(&p[1]) < 0) {
    close_fd(&p[0]);
    close_fd(&p[1]);
    return -1;
  }
  return 0;
}

/* ---- spawning ------------------------------------------------------------ */

/*
 * Starts the server (mcp_spawn.h: own process group, default signals,
 * descriptors 0-2 only).  On success the child's pipes are in |t|; an exec
 * failure is reported here with its errno, and no child is left.
 */
static mcp_status spawn_child(stdio_transport *t, const mcp_stdio_config *cfg, mcp_error *err) {
  char eb[128];
  int in[2] = {-1, -1}, outp[2] = {-1, -1}, errp[2] = {-1, -1};
  mcp_status st = MCP_OK;
  const char *prog = cfg->argv[0];

  char **envp = mcp__spawn_env(cfg->env_inherit, cfg->env);
  if (!envp) {
    st = mcp__error_set(err, MCP_ENOMEM, "out of memory spawning '%s'", prog);
    goto out;
  }
  if (make_pipe(in) < 0 || make_pipe(outp) < 0 || make_pipe(errp) < 0) {
    int e = errno;
    char hint[128];
    st = mcp__error_set(err, MCP_ESPAWN, "cannot create pipes for '%s': %s%s", prog,
                        errtext(e, eb, sizeof(eb)), limit_hint(e, hint, sizeof(hint)));
    goto out;
  }
  if (set_nonblock(in[1]) < 0 || set_nonblock(outp[0]) < 0 || set_nonblock(errp[0]) < 0) {
    int e = errno;
    st = mcp__error_set(err, MCP_EIO, "cannot configure pipes for '%s': %s", prog,
                        errtext(e, eb, sizeof(eb)));
    goto out;
  }

  mcp_spawn_opts so = {.argv = cfg->argv,
                       .envp = (const char *const *)envp,
                       .cwd = cfg->cwd,
                       .fd = {in[0], outp[1], errp[1]}};
  pid_t pid = -1;
  mcp_spawn_stage stage = MCP_SPAWN_STAGE_SETUP;
  int e = mcp__spawn(&so, &pid, &stage);
  if (e) {
    const char *what = errtext(e, eb, sizeof(eb));
    if (e == ENOMEM) st = mcp__error_set(err, MCP_ENOMEM, "out of memory spawning '%s'", prog);
    else if (stage == MCP_SPAWN_STAGE_CHDIR)
      st = mcp__error_set(err, MCP_ESPAWN, "cannot run '%s': cannot change directory to '%s': %s",
                          prog, cfg->cwd, what);
    else if (stage == MCP_SPAWN_STAGE_SETUP)
      st = mcp__error_set(err, MCP_ESPAWN, "cannot run '%s': child setup: %s", prog, what);
    else {
      char hint[128];
      st = mcp__error_set(err, MCP_ESPAWN, "cannot run '%s': %s%s", prog, what,
                          limit_hint(e, hint, sizeof(hint)));
    }
    goto out;
  }

  t->pid = pid;
  t->pgid = pid;
  t->pidfd = -1;
#ifdef SYS_pidfd_open
  /* Safe from pid reuse: the child cannot be reaped before we do it. */
  if (!atomic_load(&pidfd_unsupported) && !atomic_load(&pidfd_test_disabled)) {
    t->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (t->pidfd < 0 && errno == ENOSYS) atomic_store(&pidfd_unsupported, 1);
  }
  if (t->pidfd < 0) t->pidfd = -1;
#endif
  t->in_fd = in[1];
  t->out_fd = outp[0];
  t->err_fd = errp[0];
  in[1] = outp[0] = errp[0] = -1;

out:
  close_fd(&in[0]);
  close_fd(&in[1]);
  close_fd(&outp[0]);
  close_fd(&outp[1]);
  close_fd(&errp[0]);
  close_fd(&errp[1]);
  mcp__free(envp);
  return st;
}

/* ---- child state ----------------------------------------------------------- */

/*
 * Reaps the child if it has exited and returns whether it is reaped.  Right
 * after the reap the whole process group gets SIGKILL, so no grandchild
 * (`sh -c 'helper & exec server'`) outlives the server; doing it at once
 * keeps the group id from being reused in between.
 * Threads: the reader, or free() after the join.
 */
static bool try_reap(stdio_transport *t) {
  pthread_mutex_lock(&t->mu);
  if (!t->reaped) {
    int ws = 0;
    pid_t r;
    do r = waitpid(t->pid, &ws, WNOHANG);
    while (r < 0 && errno == EINTR);
    if (r == t->pid) {
      t->reaped = true;
      t->status_known = true;
      t->wstatus = ws;
      kill(-t->pgid, SIGKILL);
    } else if (r < 0) {
      /* ECHILD: the host reaps children itself (SIGCHLD ignored or a
       * waitpid(-1) loop).  The group id may already be reused, so it is
       * not signalled. */
      t->reaped = true;
      t->status_known = false;
    }
    if (t->reaped) {
      t->pid = -1;
      pthread_cond_broadcast(&t->cv);
    }
  }
  bool reaped = t->reaped;
  pthread_mutex_unlock(&t->mu);
  return reaped;
}

/* Signals the child's group unless it is already reaped, and the child
 * itself in case it left the group (setsid). */
static void signal_group(stdio_transport *t, int sig) {
  pthread_mutex_lock(&t->mu);
  if (!t->reaped) {
    kill(-t->pgid, sig);
    kill(t->pid, sig);
  }
  pthread_mutex_unlock(&t->mu);
}

/* Asks the reader to shut the child down; the first reason wins. */
static void request_stop(stdio_transport *t, const char *reason) {
  pthread_mutex_lock(&t->mu);
  if (!t->stop_requested) {
    t->stop_requested = true;
    t->stop_reason = reason;
    ssize_t n;
    do n = write(t->stop_wr, "x", 1);
    while (n < 0 && errno == EINTR);
    pthread_cond_broadcast(&t->cv);
  }
  pthread_mutex_unlock(&t->mu);
}

/* ---- stderr tail ----------------------------------------------------------- */

static void tail_add(stdio_transport *t, const char *p, size_t n) {
  size_t cap = t->tail_cap;
  if (n >= cap) {
    memcpy(t->tail, p + (n - cap), cap);
    t->tail_pos = 0;
    t->tail_full = true;
    return;
  }
  size_t first = cap - t->tail_pos;
  if (first > n) first = n;
  memcpy(t->tail + t->tail_pos, p, first);
  memcpy(t->tail, p + first, n - first);
  if (t->tail_pos + n >= cap) t->tail_full = true;
  t->tail_pos = (t->tail_pos + n) % cap;
}

/*
 * The last STDIO_MSG_TAIL bytes of stderr as one line: it starts at a line
 * boundary when it was cut, line breaks become " | ", other control bytes
 * become '?'.  NULL when stderr was empty (or out of memory).
 */
static char *tail_text(const stdio_transport *t) {
  size_t have = t->tail_full ? t->tail_cap : t->tail_pos;
  size_t take = have < STDIO_MSG_TAIL ? have : STDIO_MSG_TAIL;
  if (take == 0) return NULL;
  char *lin = mcp__malloc(take);
  if (!lin) return NULL;
  size_t start = (t->tail_pos + t->tail_cap - take) % t->tail_cap;
  for (size_t i = 0; i < take; i++) lin[i] = t->tail[(start + i) % t->tail_cap];

  size_t b = 0, e = take;
  if (take < have) {
    /* Cut mid-stream: start after the first line break if there is one in
     * the first half, else at least not inside a UTF-8 sequence. */
    const char *nl = memchr(lin, '\n', take / 2);
    if (nl) b = (size_t)(nl - lin) + 1;
    while (b < e && ((unsigned char)lin[b] & 0xC0) == 0x80) b++;
  }
  while (e > b &&
         (lin[e - 1] == '\n' || lin[e - 1] == '\r' || lin[e - 1] == ' ' || lin[e - 1] == '\t'))
    e--;
  while (b < e && (lin[b] == '\n' || lin[b] == '\r')) b++;
  if (b == e) {
    mcp__free(lin);
    return NULL;
  }
  char *out = mcp__malloc((e - b) * 3 + 1);
  if (out) {
    size_t o = 0;
    for (size_t i = b; i < e; i++) {
      unsigned char c = (unsigned char)lin[i];
      if (c == '\n') {
        memcpy(out + o, " | ", 3);
        o += 3;
      } else if (c == '\r') {
        continue;
      } else if ((c < 0x20 && c != '\t') || c == 0x7f) {
        out[o++] = '?';
      } else {
        out[o++] = (char)c;
      }
    }
    out[o] = '\0';
  }
  mcp__free(lin);
  return out;
}

/* ---- write queue (post) ------------------------------------------------------ */

static void write_unlock(stdio_transport *t);

/* Frees a detached list of queued messages. */
static void wq_free_list(wq_msg *m) {
  while (m) {
    wq_msg *next = m->next;
    mcp__free(m);
    m = next;
  }
}

/*
 * Writes the queued messages to stdin, in order.  Caller holds the write
 * lock and has SIGPIPE blocked.  With |deadline_ms| 0 (the reader) it
 * writes what the pipe takes and never waits; otherwise (a writer about to
 * send its own message, which must not overtake them) it waits for room
 * until the deadline.
 * Returns: MCP_OK (queue empty, or the reader found the pipe full),
 *   MCP_ETIMEDOUT, MCP_ECLOSED, MCP_EIO.
 */
static mcp_status wq_write(stdio_transport *t, int64_t deadline_ms, bool *epipe, mcp_error *err) {
  char eb[96];
  for (;;) {
    pthread_mutex_lock(&t->mu);
    wq_msg *m = t->wq_head; /* ours while we hold the write lock */
    pthread_mutex_unlock(&t->mu);
    if (!m) return MCP_OK;
    if (t->in_fd < 0) return mcp__error_set(err, MCP_ECLOSED, "transport is closed");
    ssize_t n = write(t->in_fd, m->data + m->off, m->len - m->off);
    if (n > 0) {
      m->off += (size_t)n;
      if (m->off == m->len) {
        pthread_mutex_lock(&t->mu);
        t->wq_head = m->next;
        if (!t->wq_head) t->wq_tail = NULL;
        t->wq_count--;
        t->wq_bytes -= m->len;
        pthread_mutex_unlock(&t->mu);
        mcp__free(m);
      }
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EPIPE || errno == ECONNRESET)) {
      *epipe = errno == EPIPE;
      /* Nobody will read them: drop the queue, refuse further posts. */
      pthread_mutex_lock(&t->mu);
      wq_msg *list = t->wq_head;
      t->wq_head = t->wq_tail = NULL;
      t->wq_count = t->wq_bytes = 0;
      t->wq_broken = true;
      pthread_mutex_unlock(&t->mu);
      wq_free_list(list);
      return mcp__error_set(err, MCP_ECLOSED, "server closed its stdin");
    }
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
      return mcp__error_set(err, MCP_EIO, "write to server failed: %s",
                            errtext(errno, eb, sizeof(eb)));
    int64_t now = mcp__now_ms();
    if (deadline_ms == 0) return MCP_OK;
    if (now >= deadline_ms)
      return mcp__error_set(err, MCP_ETIMEDOUT, "timed out writing to server (it is not reading)");
    int timeout = deadline_ms == MCP_NO_DEADLINE || deadline_ms - now > 60000
                      ? 60000
                      : (int)(deadline_ms - now);
    struct pollfd pf[2] = {{t->in_fd, POLLOUT, 0}, {t->stop_rd, POLLIN, 0}};
    int r = poll(pf, 2, timeout);
    if (r < 0 && errno != EINTR)
      return mcp__error_set(err, MCP_EIO, "poll on server stdin failed: %s",
                            errtext(errno, eb, sizeof(eb)));
    if (r > 0 && pf[1].revents) return mcp__error_set(err, MCP_ECLOSED, "transport is closing");
  }
}

/* The reader writes what the pipe takes of the queue, without waiting; if a
 * writer holds the write lock, that writer wakes the reader on unlock. */
static void reader_flush(stdio_transport *t) {
  pthread_mutex_lock(&t->mu);
  if (t->writing || t->stop_requested) {
    t->wq_kick = !t->stop_requested;
    pthread_mutex_unlock(&t->mu);
    return;
  }
  t->writing = true;
  pthread_mutex_unlock(&t->mu);
  /* The reader has every signal blocked; a SIGPIPE our write raises is
   * consumed, one pending already is left alone (as in stdio_send). */
  sigset_t pipe_set, pending;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  sigpending(&pending);
  bool was_pending = sigismember(&pending, SIGPIPE) == 1, epipe = false;
  (void)wq_write(t, 0, &epipe, NULL);
  write_unlock(t);
  if (epipe && !was_pending) {
    struct timespec zero = {0, 0};
    while (sigtimedwait(&pipe_set, NULL, &zero) < 0 && errno == EINTR) {
    }
  }
}

/* True when the reader should poll stdin for room. */
static bool reader_wants_room(stdio_transport *t) {
  if (t->in_poll_fd < 0) return false;
  pthread_mutex_lock(&t->mu);
  bool want = t->wq_count > 0 && !t->wq_kick && !t->wq_broken && !t->stop_requested;
  pthread_mutex_unlock(&t->mu);
  return want;
}

/* ---- reader thread --------------------------------------------------------- */

static int on_line(void *user, const char *data, size_t len) {
  stdio_transport *t = user;
  if (t->cb.on_message) t->cb.on_message(t->user, data, len);
  return 0;
}

static void on_oversize(void *user, size_t len, const char *head, size_t head_len) {
  stdio_transport *t = user;
  if (t->cb.on_oversize) {
    /* The receiver tells from the head whose response it was. */
    t->cb.on_oversize(t->user, len, head, head_len);
    return;
  }
  if (!t->cb.on_error) return;
  char msg[160];
  snprintf(msg, sizeof(msg), "message of %zu bytes exceeds the limit of %zu bytes; skipped", len,
           t->max_line);
  t->cb.on_error(t->user, MCP_ETOOBIG, msg);
}

/*
 * Reads once from stdout and frames what came.  Returns 1 on data, 0 when
 * nothing was ready, -1 on EOF, and -2 on a read error (errno kept).
 */
static int read_stdout(stdio_transport *t) {
  ssize_t n;
  do n = read(t->out_fd, t->rbuf, STDIO_READ_CHUNK);
  while (n < 0 && errno == EINTR);
  if (n > 0) {
    int rc = mcp__jsonl_feed(t->framer, t->rbuf, (size_t)n);
    if (rc == MCP_ENOMEM && t->cb.on_error)
      t->cb.on_error(t->user, MCP_ENOMEM, "out of memory buffering a message; it was dropped");
    return 1;
  }
  if (n == 0) return -1;
  if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
  return -2;
}

/* Same for stderr, into the tail ring (through a buffer of its own: |rbuf|
 * belongs to whoever reads stdout, which may be a leader meanwhile). */
static int read_stderr(stdio_transport *t) {
  char buf[STDIO_ERR_CHUNK];
  ssize_t n;
  do n = read(t->err_fd, buf, sizeof(buf));
  while (n < 0 && errno == EINTR);
  if (n > 0) {
    tail_add(t, buf, (size_t)n);
    return 1;
  }
  if (n == 0) return -1;
  if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
  return -2;
}

/* Reads what is left in both pipes once the child is gone, so the last
 * messages and stderr lines are not lost. */
static void drain_pipes(stdio_transport *t) {
  for (int i = 0; i < STDIO_DRAIN_READS && t->out_fd >= 0; i++) {
    int r = read_stdout(t);
    if (r < 0) close_fd(&t->out_fd);
    if (r <= 0) break;
  }
  for (int i = 0; i < STDIO_DRAIN_READS && t->err_fd >= 0; i++) {
    int r = read_stderr(t);
    if (r < 0) close_fd(&t->err_fd);
    if (r <= 0) break;
  }
}

/*
 * Calls on_close once.  |detail| describes the end when the child has not
 * been reaped (stdout EOF, read error); otherwise the exit status does.
 */
static void report_close(stdio_transport *t, const char *detail) {
  pthread_mutex_lock(&t->mu);
  bool reaped = t->reaped, known = t->status_known;
  int ws = t->wstatus;
  const char *reason = t->stop_reason;
  pthread_mutex_unlock(&t->mu);

  char how[160];
  if (!reaped) snprintf(how, sizeof(how), "%s", detail ? detail : "server closed stdout");
  else if (!known) snprintf(how, sizeof(how), "server exited (exit status unavailable)");
  else if (WIFEXITED(ws))
    snprintf(how, sizeof(how), "server exited with status %d", WEXITSTATUS(ws));
  else if (WIFSIGNALED(ws))
    snprintf(how, sizeof(how), "server killed by signal %d (%s)", WTERMSIG(ws),
             signame(WTERMSIG(ws)));
  else snprintf(how, sizeof(how), "server ended (wait status %d)", ws);

  char *tail = tail_text(t);
  char *msg = mcp__asprintf("%s%s%s%s%s", reason ? reason : "", reason ? ": " : "", how,
                            tail ? "; stderr: " : "", tail ? tail : "");
  mcp__free(tail);
  /* Published before the upcall, for writers that met the closed pipe
   * (see STDIO_EPIPE_WAIT_MS). */
  pthread_mutex_lock(&t->mu);
  t->reported = true;
  t->close_msg = mcp__strdup(msg ? msg : how);
  pthread_cond_broadcast(&t->cv);
  pthread_mutex_unlock(&t->mu);
  if (t->cb.on_close) t->cb.on_close(t->user, MCP_ECLOSED, msg ? msg : how);
  mcp__free(msg);
}

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

static void efd_signal(int fd) {
  uint64_t one = 1;
  ssize_t n;
  do n = write(fd, &one, sizeof(one));
  while (n < 0 && errno == EINTR);
  /* EAGAIN: the counter is already set, which is all a wake-up needs. */
}

static void efd_drain(int fd) {
  uint64_t v;
  ssize_t n;
  do n = read(fd, &v, sizeof(v));
  while (n < 0 && errno == EINTR);
}

/*
 * The reader decides, before each poll, whether it reads stdout (returns
 * true) or leaves it to leaders; |for_good| (stopping, child gone, stdout
 * ended) takes it back permanently, waiting for a leader to let go.  When
 * it does not read, *wake is when it looks again.
 */
static bool reader_owns_stdout(stdio_transport *t, bool for_good, int64_t now, int64_t *wake) {
  pthread_mutex_lock(&t->mu);
  if (for_good && !t->lead_off) {
    t->lead_off = true;
    atomic_store(&t->lead_ok, false);
  }
  while (t->lead_off && t->owner == OWN_LEADER) {
    efd_signal(t->lwake_fd);
    pthread_cond_wait(&t->cv, &t->mu);
  }
  if (atomic_load(&t->lead_ok) && t->owner == OWN_NONE &&
      now - t->lead_last >= STDIO_LEAD_LINGER_MS)
    atomic_store(&t->lead_ok, false); /* nobody led lately */
  if (atomic_load(&t->lead_ok)) {
    if (t->owner == OWN_READER) t->owner = OWN_NONE;
  } else if (t->owner == OWN_NONE) {
    t->owner = OWN_READER;
  }
  bool own = t->owner == OWN_READER;
  if (!own)
    *wake = t->owner == OWN_LEADER ? now + STDIO_LEAD_LINGER_MS
                                   : t->lead_last + STDIO_LEAD_LINGER_MS;
  pthread_mutex_unlock(&t->mu);
  return own;
}

static void *reader_main(void *arg) {
  stdio_transport *t = arg;
  bool stop_seen = false, exited = false, reported = false, out_eof = false;
  int phase = PHASE_RUN;
  int64_t phase_deadline = MCP_NO_DEADLINE, eof_deadline = MCP_NO_DEADLINE;
  char detail[160] = "server closed stdout";

  for (;;) {
    /* With a pidfd the child is checked only once it has exited; without
     * one, on every pass (the poll timeout below bounds the delay). */
    bool reaped = (t->pidfd < 0 || exited) && try_reap(t);
    if (reaped) {
      int64_t ignored;
      reader_owns_stdout(t, true, 0, &ignored);
      drain_pipes(t);
      if (!reported) report_close(t, NULL);
      break;
    }

    int64_t now = mcp__now_ms();
    if (out_eof && !reported && now >= eof_deadline) {
      report_close(t, detail);
      reported = true;
    }
    if (stop_seen && now >= phase_deadline) {
      if (phase == PHASE_TERM_WAIT) {
        signal_group(t, SIGTERM);
        phase = PHASE_KILL_WAIT;
        phase_deadline = now + t->kill_grace_ms;
      } else if (phase == PHASE_KILL_WAIT) {
        signal_group(t, SIGKILL);
        phase = PHASE_KILLED;
        phase_deadline = now + STDIO_KILLED_GRACE_MS;
      } else {
        /* Unkillable (stuck in the kernel): give up; free() tries once more
         * to reap it. */
        if (!reported) report_close(t, "server did not exit after SIGKILL");
        break;
      }
      continue;
    }

    int64_t lead_wake = MCP_NO_DEADLINE;
    bool own_out = t->out_fd >= 0 &&
                   reader_owns_stdout(t, stop_seen || exited || out_eof, now, &lead_wake);
    if (stop_seen) close_fd(&t->in_poll_fd); /* stdin must be able to close */
    struct pollfd pf[6];
    int n = 0, i_out = -1, i_err = -1, i_pid = -1, i_stop = -1, i_wake = -1, i_in = -1;
    if (own_out) {
      i_out = n;
      pf[n++] = (struct pollfd){t->out_fd, POLLIN, 0};
    }
    if (t->err_fd >= 0) {
      i_err = n;
      pf[n++] = (struct pollfd){t->err_fd, POLLIN, 0};
    }
    if (t->pidfd >= 0 && !exited) {
      i_pid = n;
      pf[n++] = (struct pollfd){t->pidfd, POLLIN, 0};
    }
    if (!stop_seen) {
      i_stop = n;
      pf[n++] = (struct pollfd){t->stop_rd, POLLIN, 0};
    }
    /* Always: need_reader() and post() wake the reader through it. */
    i_wake = n;
    pf[n++] = (struct pollfd){t->rwake_fd, POLLIN, 0};
    if (reader_wants_room(t)) {
      i_in = n;
      pf[n++] = (struct pollfd){t->in_poll_fd, POLLOUT, 0};
    }
    int64_t wake = lead_wake;
    if (stop_seen) wake = min64(wake, phase_deadline);
    if (out_eof && !reported) wake = min64(wake, eof_deadline);
    if (t->pidfd < 0 || exited)
      wake = min64(wake, now + (stop_seen || out_eof || exited ? STDIO_FALLBACK_FAST_MS
                                                               : STDIO_FALLBACK_POLL_MS));
    int timeout = -1;
    if (wake != MCP_NO_DEADLINE) {
      int64_t d = wake - now;
      timeout = d < 0 ? 0 : d > 60000 ? 60000 : (int)d;
    }
    int r = poll(pf, (nfds_t)n, timeout);
    if (r < 0) {
      /* Only EINTR or a transient ENOMEM can happen with these arguments;
       * retry (after a pause for ENOMEM), since leaving would skip the
       * shutdown and on_close. */
      if (errno != EINTR) {
        struct timespec pause_ts = {0, 10 * 1000 * 1000};
        nanosleep(&pause_ts, NULL);
      }
      continue;
    }
    if (r == 0) continue;
    now = mcp__now_ms();

    if (i_out >= 0 && pf[i_out].revents) {
      int rr = read_stdout(t);
      if (rr < 0) {
        if (rr == -2) {
          char eb[96];
          snprintf(detail, sizeof(detail), "read from server failed: %s",
                   errtext(errno, eb, sizeof(eb)));
        }
        close_fd(&t->out_fd);
        out_eof = true;
        eof_deadline = now + STDIO_EOF_GRACE_MS;
      }
    }
    if (i_err >= 0 && pf[i_err].revents) {
      if (read_stderr(t) < 0) close_fd(&t->err_fd);
    }
    if (i_pid >= 0 && pf[i_pid].revents) exited = true;
    if (i_wake >= 0 && pf[i_wake].revents) efd_drain(t->rwake_fd);
    if (i_in >= 0 && pf[i_in].revents) reader_flush(t);
    if (i_stop >= 0 && pf[i_stop].revents) {
      stop_seen = true;
      phase = PHASE_TERM_WAIT;
      phase_deadline = now + t->term_grace_ms;
    }
  }

  close_fd(&t->out_fd);
  close_fd(&t->err_fd);
  close_fd(&t->in_poll_fd);
  return NULL;
}

/* ---- operations ---------------------------------------------------------- */

/* Takes the write lock before |deadline_ms|. */
static mcp_status write_lock(stdio_transport *t, int64_t deadline_ms, mcp_error *err) {
  mcp_status st = MCP_OK;
  pthread_mutex_lock(&t->mu);
  for (;;) {
    if (t->reported && !t->stop_requested && t->close_msg) {
      st = mcp__error_set(err, MCP_ECLOSED, "transport is closed: %s", t->close_msg);
      break;
    }
    if (t->stop_requested || t->reported) {
      st = mcp__error_set(err, MCP_ECLOSED, "transport is closed");
      break;
    }
    if (!t->writing) {
      t->writing = true;
      break;
    }
    if (deadline_ms == MCP_NO_DEADLINE) {
      pthread_cond_wait(&t->cv, &t->mu);
      continue;
    }
    if (mcp__now_ms() >= deadline_ms) {
      st = mcp__error_set(err, MCP_ETIMEDOUT, "timed out waiting for another writer");
      break;
    }
    struct timespec ts = mcp__ts_from_ms(deadline_ms);
    pthread_cond_timedwait(&t->cv, &t->mu, &ts);
  }
  pthread_mutex_unlock(&t->mu);
  return st;
}

static void write_unlock(stdio_transport *t) {
  pthread_mutex_lock(&t->mu);
  t->writing = false;
  bool kick = t->wq_kick; /* the reader waits to write the queue */
  t->wq_kick = false;
  pthread_cond_broadcast(&t->cv);
  pthread_mutex_unlock(&t->mu);
  if (kick) efd_signal(t->rwake_fd);
}

/*
 * The error of a write that met a closed stdin.  Usually the server has
 * exited (a crash at start-up): the first such writer waits up to
 * STDIO_EPIPE_WAIT_MS for the reader's report, so the error says how the
 * server ended and what it wrote to stderr, whichever of the write and the
 * reader's reap comes first.  Caller holds the write lock, not |mu|.
 */
static mcp_status closed_stdin_error(stdio_transport *t, mcp_error *err) {
  pthread_mutex_lock(&t->mu);
  if (!t->epipe_waited && !t->reported && !t->stop_requested) {
    t->epipe_waited = true;
    int64_t deadline = mcp__now_ms() + STDIO_EPIPE_WAIT_MS;
    struct timespec ts = mcp__ts_from_ms(deadline);
    while (!t->reported && !t->stop_requested && mcp__now_ms() < deadline)
      pthread_cond_timedwait(&t->cv, &t->mu, &ts);
  }
  mcp_status st = t->close_msg ? mcp__error_set(err, MCP_ECLOSED, "server closed its stdin: %s",
                                                t->close_msg)
                               : mcp__error_set(err, MCP_ECLOSED, "server closed its stdin");
  pthread_mutex_unlock(&t->mu);
  return st;
}

/*
 * Writes |data| and "\n" to the child's stdin.  Caller holds the write lock
 * and has SIGPIPE blocked (see stdio_send); *epipe tells whether a write
 * met a closed pipe (and so raised a SIGPIPE for this thread).
 */
static mcp_status write_line(stdio_transport *t, const char *data, size_t len, int64_t deadline_ms,
                             bool *epipe, mcp_error *err) {
  char eb[96];
  mcp_status st = MCP_OK;
  size_t total = len + 1, done = 0;
  bool timed_out = false;
  int fd = t->in_fd;
  if (fd < 0) {
    mcp__error_set(err, MCP_ECLOSED, "transport is closed");
    mcp__error_mark_not_sent(err);
    return MCP_ECLOSED;
  }
  /* Posted messages go first: a head written in part must be finished or
   * the lines would mix, and the rest keeps the order messages were given.
   * If that fails, not a byte of |data| was written. */
  if ((st = wq_write(t, deadline_ms, epipe, err)) != MCP_OK) {
    if (*epipe) st = closed_stdin_error(t, err); /* how the server ended */
    mcp__error_mark_not_sent(err);
    return st;
  }

  while (done < total) {
    struct iovec iov[2];
    int cnt = 0;
    if (done < len) {
      iov[cnt].iov_base = (void *)(data + done);
      iov[cnt++].iov_len = len - done;
    }
    iov[cnt].iov_base = (void *)"\n";
    iov[cnt++].iov_len = 1;
    ssize_t n = writev(fd, iov, cnt);
    if (n >= 0) {
      done += (size_t)n;
      continue;
    }
    if (errno == EINTR) continue;
    if (errno == EPIPE || errno == ECONNRESET) {
      *epipe = errno == EPIPE;
      st = closed_stdin_error(t, err);
      break;
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      st = mcp__error_set(err, MCP_EIO, "write to server failed: %s",
                          errtext(errno, eb, sizeof(eb)));
      break;
    }
    int64_t now = mcp__now_ms();
    if (now >= deadline_ms) {
      timed_out = true;
      break;
    }
    int timeout = -1;
    if (deadline_ms != MCP_NO_DEADLINE)
      timeout = deadline_ms - now > 60000 ? 60000 : (int)(deadline_ms - now);
    struct pollfd pf[2] = {{fd, POLLOUT, 0}, {t->stop_rd, POLLIN, 0}};
    int r = poll(pf, 2, timeout);
    if (r < 0 && errno != EINTR) {
      st = mcp__error_set(err, MCP_EIO, "poll on server stdin failed: %s",
                          errtext(errno, eb, sizeof(eb)));
      break;
    }
    if (r > 0 && pf[1].revents) {
      st = mcp__error_set(err, MCP_ECLOSED, "transport is closing");
      break;
    }
  }

  if (timed_out) {
    if (done == 0) {
      mcp__error_set(err, MCP_ETIMEDOUT, "timed out writing to server (it is not reading)");
      mcp__error_mark_not_sent(err);
      return MCP_ETIMEDOUT;
    }
    /* Half a message is on the wire: the next one would be garbage to the
     * server, so the transport is closed. */
    close_fd(&t->in_fd);
    request_stop(t, "write to server timed out mid-message");
    return mcp__error_set(err, MCP_ETIMEDOUT,
                          "timed out after writing %zu of %zu bytes to server; "
                          "transport closed",
                          done, total);
  }
  /* Not one byte of the message reached the pipe: the server never saw it. */
  if (st != MCP_OK && done == 0) mcp__error_mark_not_sent(err);
  return st;
}

static mcp_status stdio_send(mcp_transport *base, const char *data, size_t len, int64_t deadline_ms,
                             mcp_error *err) {
  stdio_transport *t = (stdio_transport *)base;
  if (!data && len) return mcp__error_set(err, MCP_EINVAL, "no data");
  if (len && memchr(data, '\n', len))
    return mcp__error_set(err, MCP_EINVAL, "message contains a newline");
  /* A write to a pipe whose reader is gone raises SIGPIPE, which would kill
   * a host that did not ignore it.  It is blocked in this thread for the
   * write (outside the write lock: other writers need not wait for the
   * signal-mask calls), and one that our write raised is consumed before the
   * mask is restored, unless one was pending already (not ours to take:
   * possible only when the thread had SIGPIPE blocked itself, which is also
   * when the mask needs no restoring).  No process-wide handler is touched. */
  sigset_t pipe_set, old;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
  bool was_blocked = sigismember(&old, SIGPIPE) == 1, was_pending = false, epipe = false;
  if (was_blocked) {
    sigset_t pending;
    sigpending(&pending);
    was_pending = sigismember(&pending, SIGPIPE) == 1;
  }
  mcp_status st = write_lock(t, deadline_ms, err);
  if (st == MCP_OK) {
    st = write_line(t, data, len, deadline_ms, &epipe, err);
    write_unlock(t);
  } else {
    mcp__error_mark_not_sent(err); /* closed, or another writer held on */
  }
  if (epipe && !was_pending) {
    struct timespec zero = {0, 0};
    while (sigtimedwait(&pipe_set, NULL, &zero) < 0 && errno == EINTR) {
    }
  }
  if (!was_blocked) pthread_sigmask(SIG_SETMASK, &old, NULL);
  return st;
}

/* post(): see mcp_transport.h and "Posting" at the top of this file. */
static mcp_status stdio_post(mcp_transport *base, const char *data, size_t len, mcp_error *err) {
  stdio_transport *t = (stdio_transport *)base;
  if (!data && len) return mcp__error_set(err, MCP_EINVAL, "no data");
  if (len && memchr(data, '\n', len))
    return mcp__error_set(err, MCP_EINVAL, "message contains a newline");
  if (len > SIZE_MAX - sizeof(wq_msg) - 1) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  wq_msg *m = mcp__malloc(sizeof(*m) + len + 1);
  if (!m) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  if (len) memcpy(m->data, data, len);
  m->data[len] = '\n';
  m->len = len + 1;
  m->off = 0;
  m->next = NULL;
  mcp_status st = MCP_OK;
  bool was_empty = false;
  pthread_mutex_lock(&t->mu);
  if (t->stop_requested || t->reported) {
    st = mcp__error_set(err, MCP_ECLOSED, "transport is closed");
  } else if (t->wq_broken) {
    st = mcp__error_set(err, MCP_ECLOSED, "server closed its stdin");
  } else if (t->wq_count &&
             (t->wq_count >= STDIO_WQ_MAX || t->wq_bytes + m->len > t->wq_max_bytes)) {
    st = mcp__error_set(err, MCP__EAGAIN,
                        "server is not reading its input: %zu messages (%zu bytes) "
                        "already wait to be written",
                        t->wq_count, t->wq_bytes);
  } else {
    was_empty = t->wq_count == 0;
    if (t->wq_tail) t->wq_tail->next = m;
    else t->wq_head = m;
    t->wq_tail = m;
    t->wq_count++;
    t->wq_bytes += m->len;
  }
  pthread_mutex_unlock(&t->mu);
  if (st != MCP_OK) mcp__free(m);
  else if (was_empty) efd_signal(t->rwake_fd);
  return st;
}

/*
 * Requests the stop, closes stdin (waking writers through the stop pipe
 * first so the write lock comes free at once), and joins the reader, which
 * runs the escalation and calls on_close.  Concurrent callers wait for the
 * first one to finish.
 */
static void stdio_close(mcp_transport *base) {
  stdio_transport *t = (stdio_transport *)base;
  request_stop(t, "closed by client");

  /* From an upcall (forbidden, but it must not deadlock): stdin is closed
   * and the reader finishes the shutdown on its own; joining ourselves is
   * skipped. */
  bool from_reader = t->reader_started && pthread_equal(pthread_self(), t->reader);
  pthread_mutex_lock(&t->mu);
  if (!from_reader) {
    while (t->closer_active) pthread_cond_wait(&t->cv, &t->mu);
    if (t->joined) {
      pthread_mutex_unlock(&t->mu);
      return;
    }
    t->closer_active = true;
  }
  while (t->writing) pthread_cond_wait(&t->cv, &t->mu);
  t->writing = true;
  pthread_mutex_unlock(&t->mu);

  close_fd(&t->in_fd);
  write_unlock(t);
  if (from_reader) return;
  if (t->reader_started) pthread_join(t->reader, NULL);

  pthread_mutex_lock(&t->mu);
  t->joined = true;
  t->closer_active = false;
  pthread_cond_broadcast(&t->cv);
  pthread_mutex_unlock(&t->mu);
}

/* ---- leading (see the top of the file and mcp_transport.h) ---------------- */

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Spinning only pays when the server runs on another CPU meanwhile. */
static bool spin_pays(void) {
  static atomic_int cpus; /* 0: not looked up yet */
  int n = atomic_load_explicit(&cpus, memory_order_relaxed);
  if (n == 0) {
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    n = c > 0 && c < 1 << 20 ? (int)c : 1;
    atomic_store_explicit(&cpus, n, memory_order_relaxed);
  }
  return n > 1;
}

static bool stdio_lead(mcp_transport *base, bool (*done)(void *, int64_t *), void *arg) {
  stdio_transport *t = (stdio_transport *)base;
  pthread_mutex_lock(&t->mu);
  if (t->lead_off || t->owner != OWN_NONE || !atomic_load(&t->lead_ok)) {
    if (!t->lead_off && !atomic_load(&t->lead_ok)) {
      /* The reader reads this response; it lets go of stdout after it. */
      atomic_store(&t->lead_ok, true);
      t->lead_last = mcp__now_ms();
    }
    pthread_mutex_unlock(&t->mu);
    return false;
  }
  t->owner = OWN_LEADER;
  pthread_mutex_unlock(&t->mu);

  tls_leading = t;
  bool ended = false, answered = false;
  int64_t start = now_ns(), spin_until = 0;
  unsigned reads = 0; /* reads that brought bytes */
  if (spin_pays() && t->lead_avg_ns <= STDIO_LEAD_SPIN_NS) {
    int64_t spin = 2 * t->lead_avg_ns + STDIO_LEAD_SPIN_MIN_NS;
    spin_until = start + (spin < STDIO_LEAD_SPIN_NS ? spin : STDIO_LEAD_SPIN_NS);
  }
  for (;;) {
    int64_t deadline = MCP_NO_DEADLINE;
    if (done(arg, &deadline)) {
      answered = true;
      break;
    }
    int r = read_stdout(t);
    if (r < 0) {
      /* EOF or a read error: the reader sees it again and does the rest. */
      ended = true;
      break;
    }
    if (r > 0) {
      /* The deadline is checked after every read but the first (which
       * usually brings the answer), not only when stdout runs dry: a
       * server that writes faster than we read (a flood of pings) would
       * otherwise hold its caller past the deadline while the flood lasts. */
      if (++reads > 1 && deadline != MCP_NO_DEADLINE && mcp__now_ms() >= deadline) break;
      continue;
    }
    if (spin_until && now_ns() < spin_until) continue;
    int64_t now = mcp__now_ms();
    if (deadline != MCP_NO_DEADLINE && now >= deadline) break;
    int timeout = -1;
    if (deadline != MCP_NO_DEADLINE)
      timeout = deadline - now > 60000 ? 60000 : (int)(deadline - now);
    struct pollfd pf[2] = {{t->out_fd, POLLIN, 0}, {t->lwake_fd, POLLIN, 0}};
    if (poll(pf, 2, timeout) > 0 && pf[1].revents) {
      efd_drain(t->lwake_fd);
      pthread_mutex_lock(&t->mu);
      bool off = t->lead_off;
      pthread_mutex_unlock(&t->mu);
      if (off) break;
    }
  }
  tls_leading = NULL;
  if (answered) t->lead_avg_ns += (now_ns() - start - t->lead_avg_ns) / 8;

  pthread_mutex_lock(&t->mu);
  t->owner = OWN_NONE;
  t->lead_last = mcp__now_ms();
  bool wake_reader = ended && atomic_load(&t->lead_ok);
  if (ended) atomic_store(&t->lead_ok, false);
  if (t->lead_off) pthread_cond_broadcast(&t->cv);
  pthread_mutex_unlock(&t->mu);
  if (wake_reader) efd_signal(t->rwake_fd);
  return true;
}

static void stdio_lead_wake(mcp_transport *base) {
  stdio_transport *t = (stdio_transport *)base;
  if (tls_leading == t) return; /* the leader ended a request itself */
  pthread_mutex_lock(&t->mu);
  bool leading = t->owner == OWN_LEADER;
  pthread_mutex_unlock(&t->mu);
  if (leading) efd_signal(t->lwake_fd);
}

static void stdio_need_reader(mcp_transport *base) {
  stdio_transport *t = (stdio_transport *)base;
  if (!atomic_load(&t->lead_ok)) return; /* the reader reads already */
  pthread_mutex_lock(&t->mu);
  /* With a leader, the leader's caller asks again when it leaves. */
  bool wake = atomic_load(&t->lead_ok) && t->owner != OWN_LEADER;
  if (wake) atomic_store(&t->lead_ok, false);
  pthread_mutex_unlock(&t->mu);
  if (wake) efd_signal(t->rwake_fd);
}

/* Releases everything; the reader is not running (joined or never started). */
static void destroy(stdio_transport *t) {
  if (t->pgid > 0 && !t->reaped) {
    /* Only after the reader gave up on an unkillable child, or when the
     * reader could not be started: one last attempt not to leave a zombie. */
    kill(-t->pgid, SIGKILL);
    try_reap(t);
  }
  close_fd(&t->in_fd);
  close_fd(&t->in_poll_fd);
  wq_free_list(t->wq_head);
  close_fd(&t->out_fd);
  close_fd(&t->err_fd);
  close_fd(&t->pidfd);
  close_fd(&t->stop_rd);
  close_fd(&t->stop_wr);
  close_fd(&t->rwake_fd);
  close_fd(&t->lwake_fd);
  mcp__jsonl_free(t->framer);
  mcp__free(t->rbuf);
  mcp__free(t->tail);
  mcp__free(t->close_msg);
  pthread_cond_destroy(&t->cv);
  pthread_mutex_destroy(&t->mu);
  mcp__free(t);
}

static void stdio_free(mcp_transport *base) {
  stdio_transport *t = (stdio_transport *)base;
  stdio_close(base);
  destroy(t);
}

static const mcp_transport_ops stdio_ops = {.send = stdio_send,
                                            .close = stdio_close,
                                            .free = stdio_free,
                                            .lead = stdio_lead,
                                            .lead_wake = stdio_lead_wake,
                                            .need_reader = stdio_need_reader,
                                            .post = stdio_post};

/*
 * mcp__stdio_transport_new() spawns the server and starts its reader (the
 * full contract is in mcp_transport.h).
 * Ownership: |cfg| and its strings are only read during the call.  |cb| is
 *   copied; |cb|'s user pointer |user| must stay valid until free()
 *   returns.  On MCP_OK *out owns the child, its pipes and the reader
 *   thread; on failure *out is NULL, no callback has run, and no child is
 *   left behind (an exec failure is reaped before returning).
 * Threads: any thread, concurrently.  Spawns with posix_spawn() (see
 *   mcp_spawn.h), so no host code runs in the child.
 * Returns: MCP_OK, MCP_ESPAWN, MCP_EINVAL, MCP_ENOMEM, MCP_EIO.
 */
mcp_status mcp__stdio_transport_new(const mcp_stdio_config *cfg, const mcp_transport_callbacks *cb,
                                    void *user, mcp_transport **out, mcp_error *err) {
  mcp_status st = MCP_OK;
  stdio_transport *t = NULL;
  bool mu_ok = false, cv_ok = false;

  if (out) *out = NULL;
  if (!cfg || !cfg->argv || !cfg->argv[0] || !cfg->argv[0][0] || !cb || !out)
    return mcp__error_set(err, MCP_EINVAL, "stdio transport needs a program and callbacks");

  t = mcp__calloc(1, sizeof(*t));
  if (!t) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  t->base.ops = &stdio_ops;
  t->cb = *cb;
  t->user = user;
  t->max_line = cfg->max_line ? cfg->max_line : (size_t)16 * 1024 * 1024;
  t->tail_cap = cfg->stderr_tail ? cfg->stderr_tail : STDIO_DEFAULT_TAIL;
  t->term_grace_ms = cfg->term_grace_ms > 0 ? cfg->term_grace_ms : STDIO_DEFAULT_GRACE_MS;
  t->kill_grace_ms = cfg->kill_grace_ms > 0 ? cfg->kill_grace_ms : STDIO_DEFAULT_GRACE_MS;
  t->pid = -1;
  t->pidfd = t->stop_rd = t->stop_wr = t->rwake_fd = t->lwake_fd = -1;
  t->in_fd = t->out_fd = t->err_fd = t->in_poll_fd = -1;
  /* Queued answers: as many bytes as one message may have, at least 1 MiB. */
  t->wq_max_bytes = t->max_line > ((size_t)1 << 20) ? t->max_line : (size_t)1 << 20;

  if (pthread_mutex_init(&t->mu, NULL) != 0) {
    st = mcp__error_set(err, MCP_ENOMEM, "cannot create mutex");
    goto fail;
  }
  mu_ok = true;
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  cv_ok = pthread_cond_init(&t->cv, &ca) == 0;
  pthread_condattr_destroy(&ca);
  if (!cv_ok) {
    st = mcp__error_set(err, MCP_ENOMEM, "cannot create condition variable");
    goto fail;
  }

  mcp_jsonl_callbacks jcb = {.on_line = on_line, .on_oversize_head = on_oversize};
  t->framer = mcp__jsonl_new(t->max_line, &jcb, t);
  t->rbuf = mcp__malloc(STDIO_READ_CHUNK);
  t->tail = mcp__malloc(t->tail_cap);
  if (!t->framer || !t->rbuf || !t->tail) {
    st = mcp__error_set(err, MCP_ENOMEM, "out of memory");
    goto fail;
  }
  int sp[2];
  if (make_pipe(sp) < 0) {
    char eb[96], hint[128];
    int e = errno;
    st = mcp__error_set(err, MCP_EIO, "cannot create pipe: %s%s", errtext(e, eb, sizeof(eb)),
                        limit_hint(e, hint, sizeof(hint)));
    goto fail;
  }
  t->stop_rd = sp[0];
  t->stop_wr = sp[1];
  set_nonblock(t->stop_wr);
  t->rwake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  t->lwake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (t->rwake_fd < 0 || t->lwake_fd < 0 || move_high(&t->rwake_fd) < 0 ||
      move_high(&t->lwake_fd) < 0) {
    char eb[96], hint[128];
    int e = errno;
    st = mcp__error_set(err, e == ENOMEM ? MCP_ENOMEM : MCP_EIO, "cannot create eventfd: %s%s",
                        errtext(e, eb, sizeof(eb)), limit_hint(e, hint, sizeof(hint)));
    goto fail;
  }

  st = spawn_child(t, cfg, err);
  if (st != MCP_OK) goto fail;
  t->in_poll_fd = fcntl(t->in_fd, F_DUPFD_CLOEXEC, 3);
  if (t->in_poll_fd < 0) {
    char eb[96], hint[128];
    int e = errno;
    st = mcp__error_set(err, MCP_EIO, "cannot duplicate the stdin pipe: %s%s",
                        errtext(e, eb, sizeof(eb)), limit_hint(e, hint, sizeof(hint)));
    goto fail;
  }

  /* The reader inherits a full signal mask, so process-directed signals go
   * to host threads and never interrupt it. */
  sigset_t all, old;
  sigfillset(&all);
  pthread_attr_t attr; /* a small stack: a host may run a thousand readers */
  int rc = mcp__thread_attr_init(&attr, MCP__STACK_IO, false);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  if (rc == 0) {
    rc = pthread_create(&t->reader, &attr, reader_main, t);
    pthread_attr_destroy(&attr);
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc != 0) {
    char hint[128];
    st = mcp__error_set(err, rc == EAGAIN ? MCP_ENOMEM : MCP_EIO,
                        "cannot start reader thread: %s%s", strerror(rc),
                        limit_hint(rc, hint, sizeof(hint)));
    goto fail;
  }
  t->reader_started = true;
  *out = &t->base;
  return MCP_OK;

fail:
  if (!mu_ok) {
    mcp__free(t);
    return st;
  }
  if (!cv_ok) {
    pthread_mutex_destroy(&t->mu);
    mcp__free(t);
    return st;
  }
  if (t->pgid > 0) {
    /* Spawned but the reader did not start: the child goes now. */
    close_fd(&t->in_fd);
    kill(-t->pgid, SIGKILL);
    pthread_mutex_lock(&t->mu);
    if (!t->reaped) {
      int ws;
      while (waitpid(t->pid, &ws, 0) < 0 && errno == EINTR) {
      }
      t->reaped = true;
      t->pid = -1;
    }
    pthread_mutex_unlock(&t->mu);
  }
  destroy(t);
  return st;
}

/*
 * mcp__stdio_transport_pid() is the child's pid, or -1 once the reader has
 * reaped it.  Ownership: |t| is borrowed and must be a stdio transport.
 * Threads: any thread, concurrently.
 */
int mcp__stdio_transport_pid(mcp_transport *t) {
  stdio_transport *s = (stdio_transport *)t;
  pthread_mutex_lock(&s->mu);
  int pid = s->pid;
  pthread_mutex_unlock(&s->mu);
  return pid;
}
