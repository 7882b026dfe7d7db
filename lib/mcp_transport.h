/* SPDX-License-Identifier: MIT */
/*
 * mcp_transport.h: the transport interface.  A transport moves whole
 * messages (one JSON-RPC message as bytes) between the client and one
 * server.  It owns framing and I/O threads; it knows nothing of MCP methods.
 *
 * Upcalls run on the transport's own I/O thread, or on a caller's thread
 * inside lead() (stdio), never two at once and always in stream order.  The
 * receiver (the client) must not run host code there; it parses and hands
 * work to the worker pool.
 */
#ifndef MCP_TRANSPORT_H
#define MCP_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcp_int.h"
#include "mcp_settings.h"
#include "mcp_xhdr.h"

typedef struct mcp_transport mcp_transport;

typedef struct mcp_transport_callbacks {
  /*
   * One complete message, |len| bytes, not NUL-terminated in general (the
   * stdio transport does terminate it).  |data| is valid only during the call.
   */
  void (*on_message)(void *user, const char *data, size_t len);
  /*
   * A non-fatal problem with the incoming stream: an oversize message
   * (MCP_ETOOBIG), unreadable bytes, a write failure of a notification.
   * The transport stays open.
   */
  void (*on_error)(void *user, mcp_status status, const char *message);
  /*
   * The connection is gone (EOF, child exit, close()).  Called exactly once,
   * after the last on_message.  |message| says why: exit status, signal,
   * stderr tail.  |status| is MCP_ECLOSED unless something more specific
   * applies.
   */
  void (*on_close)(void *user, mcp_status status, const char *message);
  /*
   * Request |id| (given to send_request) failed at the transport level
   * without a JSON-RPC answer: an HTTP error status, a reset stream, a
   * response stream that ended without the response.  |err| carries the
   * status (MCP_EHTTP with http_status, MCP_EIO, ...) and message.  Optional
   * for transports: stdio never calls it.  May be NULL in the struct.
   */
  void (*on_request_error)(void *user, int64_t id, const mcp_error *err);
  /*
   * Request |id| waits for a person to authorize it (|hold| true: the host's
   * browser step has started) or the person is done (false): its timeout
   * should not run meanwhile.  Always paired, hold first.  May be NULL in
   * the struct.
   */
  void (*on_request_hold)(void *user, int64_t id, bool hold);
  /*
   * A message longer than the limit was skipped: |len| bytes (stdio: its
   * full length), of which the first |head_len| are in |head| (at most a few
   * KiB, not NUL-terminated), so the receiver can tell whose response it
   * was.  When set, it replaces on_error(MCP_ETOOBIG).  May be NULL.
   */
  void (*on_oversize)(void *user, size_t len, const char *head, size_t head_len);
} mcp_transport_callbacks;

/* Flags for send_request. */
#define MCP_SEND_INITIALIZE 0x1u /* the initialize request (starts a session) */

typedef struct mcp_transport_ops {
  /*
   * send() writes one message.  |data| must not contain a newline (JSON
   * from json-c's compact printer never does).  Blocks at most until
   * |deadline_ms| (CLOCK_MONOTONIC ms, MCP_NO_DEADLINE for none): a peer
   * that stops reading yields MCP_ETIMEDOUT with nothing partial left on
   * the wire that would corrupt the next message (a half-written message
   * closes the transport).
   * Threads: any thread, concurrently (writes are serialised inside).
   * Returns: MCP_OK, MCP_ETIMEDOUT, MCP_ECLOSED, MCP_EIO, MCP_ENOMEM.
   */
  mcp_status (*send)(mcp_transport *t, const char *data, size_t len, int64_t deadline_ms,
                     mcp_error *err);
  /*
   * close() shuts the connection down gracefully and waits for the I/O
   * threads to finish; on_close has been called when it returns.
   * Idempotent.  Must not be called from an upcall (the I/O thread).
   */
  void (*close)(mcp_transport *t);
  /* free() closes if needed and releases everything.  NULL-safe wrapper:
   * mcp__transport_free(). */
  void (*free)(mcp_transport *t);
  /*
   * Optional (NULL: send() is used).  send_request() sends request |id|;
   * transports that can fail one request on its own (HTTP) report that
   * through on_request_error with the same id.  Same contract as send().
   */
  mcp_status (*send_request)(mcp_transport *t, int64_t id, unsigned flags, const char *data,
                             size_t len, int64_t deadline_ms, mcp_error *err);
  /*
   * Optional.  The handshake finished: |protocol_version| was negotiated and
   * notifications/initialized was sent (HTTP: send MCP-Protocol-Version from
   * now on and open the GET listener).  Called once, from the connecting
   * thread.
   */
  void (*ready)(mcp_transport *t, const char *protocol_version);
  /*
   * Optional.  The client gave up on request |id| (timeout or cancel); the
   * transport may stop reading its response (HTTP/2: RST_STREAM).  Threads:
   * any.
   */
  void (*abandon)(mcp_transport *t, int64_t id);
  /*
   * Optional, all three or none (stdio has them): a thread about to block
   * for a response reads the stream itself, so the response needs no hand-off
   * from the I/O thread to the waiting thread (one thread wake-up fewer per
   * call, which is most of a sequential call's cost).
   *
   * lead() returns false at once when this thread cannot read now (the I/O
   * thread or another leader reads, the transport is closing, or leading
   * was off: the first offer turns it on for later ones); the caller then
   * waits as usual.  Otherwise it reads and dispatches incoming messages on
   * this thread (the upcalls run here) until done(arg, &deadline) returns
   * true, the deadline it reports passes, lead_wake() is called, the
   * stream ends or the transport wants its I/O thread back; then returns
   * true and the caller waits as usual (normally no longer).  done() runs
   * before every read, and must not block.
   *
   * lead_wake() makes a thread in lead() call done() again (a cancel or a
   * close ended its request).  No-op when no other thread leads.
   * Threads: any, also under the pending table's lock.
   *
   * need_reader() says that responses are due which no thread will lead
   * for (an async request was sent, or a leader left while others are
   * still pending): the I/O thread reads from now on.  Threads: any.
   */
  bool (*lead)(mcp_transport *t, bool (*done)(void *arg, int64_t *deadline_ms), void *arg);
  void (*lead_wake)(mcp_transport *t);
  void (*need_reader)(mcp_transport *t);
  /*
   * Optional.  post() queues one message for sending and returns at once,
   * never waiting for the peer: for answers and notifications that nobody
   * waits for (replies to server requests, notifications/cancelled), so no
   * thread blocks on a peer that stops reading.  The queue is bounded; when
   * it is full the peer is stalled and the message is refused.
   * Threads: any, also an upcall (the I/O thread).
   * Returns: MCP_OK, MCP__EAGAIN (queue full: dropped), MCP_ECLOSED,
   *   MCP_EINVAL, MCP_ENOMEM.  Without post(), mcp__transport_post() calls
   *   send() with a deadline already past, which must then not block and
   *   must be safe from an upcall (HTTP's send only queues the POST).
   */
  mcp_status (*post)(mcp_transport *t, const char *data, size_t len, mcp_error *err);
  /*
   * Optional (stdio has no wire difference between the eras).  With
   * |modern_version| the transport speaks the modern, stateless wire from
   * now on (HTTP: MCP-Protocol-Version, Mcp-Method and Mcp-Name on every
   * POST, read from its body; no Mcp-Session-Id, no GET stream, no DELETE;
   * an error status whose body answers the request is handed on as that
   * JSON-RPC answer); NULL goes back to the legacy wire (the probe found a
   * legacy server).  Called on the connecting thread, between requests.
   * Returns MCP_OK or MCP_ENOMEM.
   */
  mcp_status (*set_era)(mcp_transport *t, const char *modern_version);
  /*
   * Optional (only HTTP mirrors parameters into headers).  Replaces the
   * table of tools with x-mcp-header annotations (mcp_xhdr.h; taken, NULL
   * for none): from now on a modern tools/call of one of them carries its
   * Mcp-Param-* headers.  Threads: any.
   */
  void (*set_tool_headers)(mcp_transport *t, mcp_xhdr_table *table);
  /*
   * Optional (NULL: one context, "").  Writes into |out| (|n| >= 33 bytes)
   * the identity of the authorization the next request carries: 32 hex
   * digits of SHA-256 of its Authorization header value (the OAuth bearer,
   * else the host's own header), "" without one.  Results cached as
   * private (SEP-2549) are served only within the context they were
   * fetched in.  Threads: any.
   */
  void (*auth_context)(mcp_transport *t, char *out, size_t n);
} mcp_transport_ops;

/* Every transport struct starts with this header. */
struct mcp_transport {
  const mcp_transport_ops *ops;
};

static inline mcp_status mcp__transport_send(mcp_transport *t, const char *data, size_t len,
                                             int64_t deadline_ms, mcp_error *err) {
  return t->ops->send(t, data, len, deadline_ms, err);
}
static inline mcp_status mcp__transport_send_request(mcp_transport *t, int64_t id, unsigned flags,
                                                     const char *data, size_t len,
                                                     int64_t deadline_ms, mcp_error *err) {
  if (t->ops->send_request) return t->ops->send_request(t, id, flags, data, len, deadline_ms, err);
  return t->ops->send(t, data, len, deadline_ms, err);
}
static inline mcp_status mcp__transport_post(mcp_transport *t, const char *data, size_t len,
                                             mcp_error *err) {
  if (t->ops->post) return t->ops->post(t, data, len, err);
  return t->ops->send(t, data, len, 0, err);
}
static inline void mcp__transport_ready(mcp_transport *t, const char *version) {
  if (t->ops->ready) t->ops->ready(t, version);
}
static inline mcp_status mcp__transport_set_era(mcp_transport *t, const char *modern_version) {
  return t->ops->set_era ? t->ops->set_era(t, modern_version) : MCP_OK;
}
/* |table| is freed when the transport has no use for it. */
static inline void mcp__transport_set_tool_headers(mcp_transport *t, mcp_xhdr_table *table) {
  if (t->ops->set_tool_headers) t->ops->set_tool_headers(t, table);
  else mcp__xhdr_table_free(table);
}
static inline void mcp__transport_auth_context(mcp_transport *t, char *out, size_t n) {
  if (t && t->ops->auth_context) t->ops->auth_context(t, out, n);
  else if (n) out[0] = '\0';
}
static inline void mcp__transport_abandon(mcp_transport *t, int64_t id) {
  if (t->ops->abandon) t->ops->abandon(t, id);
}
static inline bool mcp__transport_can_lead(const mcp_transport *t) { return t->ops->lead != NULL; }
static inline bool mcp__transport_lead(mcp_transport *t, bool (*done)(void *, int64_t *),
                                       void *arg) {
  return t->ops->lead ? t->ops->lead(t, done, arg) : false;
}
static inline void mcp__transport_lead_wake(mcp_transport *t) {
  if (t->ops->lead_wake) t->ops->lead_wake(t);
}
static inline void mcp__transport_need_reader(mcp_transport *t) {
  if (t->ops->need_reader) t->ops->need_reader(t);
}
static inline void mcp__transport_close(mcp_transport *t) {
  if (t) t->ops->close(t);
}
static inline void mcp__transport_free(mcp_transport *t) {
  if (t) t->ops->free(t);
}

/* ---- stdio ------------------------------------------------------------- */

typedef struct mcp_stdio_config {
  /* Program and arguments, NULL terminated; argv[0] searched in PATH. */
  const char *const *argv;
  /* Working directory, or NULL for the host's. */
  const char *cwd;
  /* "NAME=VALUE" entries merged over the host environment; "NAME" alone
   * (no '=') removes NAME.  NULL terminated, or NULL for none. */
  const char *const *env;
  /* Largest accepted line in bytes (0: default 16 MiB). */
  size_t max_line;
  /* Bytes of stderr kept for error messages (0: default 64 KiB). */
  size_t stderr_tail;
  /* Close: ms to wait after closing stdin before SIGTERM, then before
   * SIGKILL (0: default 2000 each). */
  int64_t term_grace_ms;
  int64_t kill_grace_ms;
  /* Which host variables the server inherits before |env| applies: an
   * mcp_env_inherit value (0: MCP_ENV_INHERIT_ALL). */
  int env_inherit;
} mcp_stdio_config;

/*
 * mcp__stdio_transport_new() spawns the server (no shell; own process
 * group; every descriptor but 0-2 closed in the child) and starts its
 * reader thread.  An exec failure (no such program) is reported here as
 * MCP_ESPAWN, not later as a close.
 * Ownership: |cfg| is copied.  |cb| and |user| must stay valid until
 *   free() returns.  On MCP_OK *out is the transport.
 * Threads: any.
 * Returns: MCP_OK, MCP_ESPAWN, MCP_EINVAL, MCP_ENOMEM, MCP_EIO.
 */
mcp_status mcp__stdio_transport_new(const mcp_stdio_config *cfg, const mcp_transport_callbacks *cb,
                                    void *user, mcp_transport **out, mcp_error *err);

/* The child's pid (for tests), or -1 after it has been reaped. */
int mcp__stdio_transport_pid(mcp_transport *t);

/* ---- Streamable HTTP and legacy HTTP+SSE ---------------------------------- */

/* The kind of HTTP server is the public mcp_http_transport (mcpconn.h):
 * AUTO (Streamable; on 400/404/405 to initialize, fall back to legacy),
 * STREAMABLE or LEGACY_SSE.  The transport may switch AUTO to LEGACY_SSE. */
typedef struct mcp_http_transport_config {
  /* The server: url, http_kind, http_version, headers, tls, max_message
   * (0: 16 MiB) and no_get_listener are read; the rest is the client's.
   * Borrowed: the transport copies what it keeps.  The transport's own
   * headers (mcp__settings_header_reserved()) are never taken from it. */
  const mcp_server_settings *settings;
  int64_t connect_timeout_ms; /* 0: 10000 */
  int max_resume_attempts;    /* 0: 5 */
  /* OAuth (borrowed; the transport makes its own engine from it), or NULL:
   * a 401 then fails the request. */
  const mcp_oauth_options *oauth;
} mcp_http_transport_config;

/*
 * mcp__http_transport_new() makes a Streamable HTTP (or legacy SSE)
 * transport.  Nothing is sent until the first send_request (initialize).
 * Ownership: |cfg| is copied; |cb|/|user| as for stdio.
 * Returns: MCP_OK, MCP_EINVAL (bad URL, header with CR/LF), MCP_ETLS,
 *   MCP_ENOMEM.
 */
mcp_status mcp__http_transport_new(const mcp_http_transport_config *cfg,
                                   const mcp_transport_callbacks *cb, void *user,
                                   mcp_transport **out, mcp_error *err);

/* For tests: the current session id (a copy to mcp__free), or NULL. */
char *mcp__http_transport_session(mcp_transport *t);
/* For tests: "h2", "h2c", "http/1.1" or NULL; "legacy-sse" appended. */
const char *mcp__http_transport_protocol(mcp_transport *t);
/* Why no connection to the server is up (mcp__http_client_stall), for an
 * initialize that timed out; false when nothing stalled.  Threads: any,
 * before close. */
bool mcp__http_transport_stall(mcp_transport *t, char *buf, size_t n);

#endif /* MCP_TRANSPORT_H */
