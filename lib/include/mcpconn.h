/* SPDX-License-Identifier: MIT */
/*
 * mcpconn.h: the public API of libmcpconn, an MCP (Model Context Protocol)
 * client library for multi-threaded C and C++ hosts.
 *
 * Conventions used by every function below:
 *  - Handles are opaque.  Objects made with *_new are released with *_free;
 *    *_free(NULL) does nothing.
 *  - JSON crosses this API as UTF-8 text (NUL-terminated).  Strings the
 *    library returns through a `char **` out-parameter are owned by the caller
 *    and released with mcp_free().  Strings passed in are borrowed and copied
 *    before the call returns unless a comment says otherwise.
 *  - Every action returns an mcp_status (MCP_OK == 0, errors < 0).  An
 *    optional `mcp_error *err` receives the details; pass NULL to ignore them.
 *    The caller releases an mcp_error it passed with mcp_error_clear().
 *  - The library never writes to stdout or stderr; it logs through the
 *    callback set with mcp_client_options_set_log().
 *  - Host callbacks (notifications, progress, server->client requests,
 *    async completions, logs) run on the library's worker threads, never on
 *    an I/O thread and never while a library lock is held.  A client's
 *    callbacks run one at a time, in the order their events arrived.
 */
#ifndef MCPCONN_H
#define MCPCONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcpconn_version.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define MCP_EXTERN __declspec(dllexport)
#elif defined(__GNUC__)
#define MCP_EXTERN __attribute__((visibility("default")))
#else
#define MCP_EXTERN
#endif

/* ------------------------------------------------------------------------ */
/* Status codes and errors                                                   */
/* ------------------------------------------------------------------------ */

/* Stable values; a value is never reused for another meaning. */
typedef enum mcp_status {
  MCP_OK = 0,
  MCP_EINVAL = -1,     /* an argument was invalid */
  MCP_ENOMEM = -2,     /* out of memory */
  MCP_ETIMEDOUT = -3,  /* the request's deadline passed */
  MCP_ECANCELLED = -4, /* the request's cancel token fired */
  MCP_ECLOSED = -5,    /* the connection closed (server exited, EOF, close) */
  MCP_EPROTO = -6,     /* the peer broke the protocol */
  MCP_ERPC = -7,       /* the server answered with a JSON-RPC error */
  MCP_EHTTP = -8,      /* an HTTP error status */
  MCP_ETLS = -9,       /* TLS handshake or verification failed */
  MCP_ECONFIG = -10,   /* invalid configuration */
  MCP_ESPAWN = -11,    /* the server process could not be started */
  MCP_EIO = -12,       /* an operating-system I/O error */
  MCP_EVERSION = -13,  /* no protocol version in common with the server */
  MCP_ETOOBIG = -14,   /* a message exceeded the configured size limit */
  MCP_ESTATE = -15,    /* the call is not allowed in the object's state */
  MCP_ENOTFOUND = -16, /* no such tool, server or item */
  MCP_ETOOLERROR = -17 /* a tool ran and reported isError: true */
} mcp_status;

/*
 * mcp_strerror() returns a short static description of |status|.
 * Never NULL; unknown values give "unknown status".  Threads: any.
 */
MCP_EXTERN const char *mcp_strerror(mcp_status status);

/*
 * Details of a failed call.  Declare one on the stack, zero it (or use
 * MCP_ERROR_INIT), pass its address, and call mcp_error_clear() afterwards.
 * A call that fails fills it; a call that succeeds leaves it untouched.
 * Fields:
 *  status       the same value the call returned
 *  rpc_code     JSON-RPC error code when status is MCP_ERPC, else 0
 *  http_status  HTTP status when the failure came from an HTTP response, else 0
 *  message      human-readable, one line; owned by the struct (never NULL
 *               after a failed call)
 *  data         JSON text of the JSON-RPC error's `data`, or NULL
 */
typedef struct mcp_error {
  mcp_status status;
  int rpc_code;
  int http_status;
  char *message;
  char *data;
  void *reserved_[4];
} mcp_error;

#define MCP_ERROR_INIT \
  { \
    MCP_OK, 0, 0, NULL, NULL, { NULL, NULL, NULL, NULL } \
  }

/*
 * mcp_error_clear() frees what |err| holds and zeroes it.  NULL is fine.
 * Threads: one thread at a time per mcp_error.
 */
MCP_EXTERN void mcp_error_clear(mcp_error *err);

/* mcp_free() releases a string or buffer the library returned. NULL is fine. */
MCP_EXTERN void mcp_free(void *p);

/* mcp_version() returns the run-time library version, e.g. "0.1.0". */
MCP_EXTERN const char *mcp_version(void);

/* ------------------------------------------------------------------------ */
/* Logging                                                                   */
/* ------------------------------------------------------------------------ */

typedef enum mcp_log_level {
  MCP_LOG_DEBUG = 0,
  MCP_LOG_INFO = 1,
  MCP_LOG_WARN = 2,
  MCP_LOG_ERROR = 3
} mcp_log_level;

/* A log line, without trailing newline.  |msg| is valid only during the call. */
typedef void (*mcp_log_fn)(void *user, mcp_log_level level, const char *msg);

/*
 * A log record with its fields apart (mcp_manager_options_set_log_record).
 * |size| is sizeof(mcp_log_record) of the library that made it: fields are
 * only ever added at the end, so read one past the ones you know only when
 * |size| covers it.  |server| names the server the record is about, or is
 * NULL (the manager itself); |message| does not repeat it and has no
 * trailing newline.  The record and its strings are valid only during the
 * call.
 */
typedef struct mcp_log_record {
  size_t size;
  mcp_log_level level;
  const char *server;
  const char *message;
} mcp_log_record;
typedef void (*mcp_log_record_fn)(void *user, const mcp_log_record *record);

/* ------------------------------------------------------------------------ */
/* Cancellation tokens                                                       */
/* ------------------------------------------------------------------------ */

typedef struct mcp_cancel mcp_cancel;

/*
 * mcp_cancel_new() makes a token that has not fired, with one reference.
 * Ownership: the caller owns the reference and drops it with
 *   mcp_cancel_unref().  A request that uses the token takes its own reference.
 * Threads: every mcp_cancel_* function may be called from any thread.
 * Returns: the token, or NULL when out of memory.
 */
MCP_EXTERN mcp_cancel *mcp_cancel_new(void);
MCP_EXTERN mcp_cancel *mcp_cancel_ref(mcp_cancel *c);
MCP_EXTERN void mcp_cancel_unref(mcp_cancel *c);

/*
 * mcp_cancel_fire() fires the token once; later calls do nothing.  Every
 * request using the token ends with MCP_ECANCELLED (unless it already ended)
 * and the server is sent notifications/cancelled.  Threads: any.
 */
MCP_EXTERN void mcp_cancel_fire(mcp_cancel *c);
MCP_EXTERN bool mcp_cancel_is_fired(const mcp_cancel *c);

/* ------------------------------------------------------------------------ */
/* Per-call options                                                          */
/* ------------------------------------------------------------------------ */

typedef struct mcp_call_options mcp_call_options;

/*
 * Progress callback: |progress| increases; |total| is NAN when the server
 * sent none; |message| may be NULL.  Runs on a worker thread.
 */
typedef void (*mcp_progress_fn)(void *user, double progress, double total, const char *message);

/*
 * mcp_call_options_new() makes options with defaults: the client's timeout,
 * no cancel token, no progress callback.  The options are copied by every
 * call that takes them, so one object may be reused and freed at once after
 * the call returns.  Threads: one thread at a time per object.
 */
MCP_EXTERN mcp_call_options *mcp_call_options_new(void);
MCP_EXTERN void mcp_call_options_free(mcp_call_options *o);
/* Timeout in ms for this call; 0 means none; negative means the client's. */
MCP_EXTERN void mcp_call_options_set_timeout_ms(mcp_call_options *o, int64_t ms);
/* The call takes its own reference to |c|; NULL removes the token. */
MCP_EXTERN void mcp_call_options_set_cancel(mcp_call_options *o, mcp_cancel *c);
/* Asks the server for progress (sends _meta.progressToken). */
MCP_EXTERN void mcp_call_options_set_progress(mcp_call_options *o, mcp_progress_fn fn, void *user);
/*
 * With |reset| true, each progress notification restarts the timeout, but
 * the call never runs longer than |max_total_ms| (0: no cap).  A progress
 * token is sent even without a progress callback.
 */
MCP_EXTERN void mcp_call_options_set_reset_timeout_on_progress(mcp_call_options *o, bool reset,
                                                               int64_t max_total_ms);

/* ------------------------------------------------------------------------ */
/* Client options                                                            */
/* ------------------------------------------------------------------------ */

typedef struct mcp_client mcp_client;
typedef struct mcp_client_options mcp_client_options;

/*
 * Notification callback: |method| and |params_json| (never NULL; "{}" when
 * the server sent no params) are valid only during the call.
 */
typedef void (*mcp_notification_fn)(void *user, const char *method, const char *params_json);

/*
 * Handler for a server->client request (roots/list, sampling/createMessage,
 * elicitation/create, or any other method registered).  Runs on a worker
 * thread and may block.  Return MCP_OK with *result_json set to a string
 * allocated with malloc() (the library frees it), or an error: with
 * MCP_ERPC the library answers with err->rpc_code / err->message, with any
 * other status it answers -32603 (internal error).
 */
typedef mcp_status (*mcp_request_fn)(void *user, const char *method, const char *params_json,
                                     char **result_json, mcp_error *err);

/*
 * mcp_client_options_new() makes options with defaults: request timeout
 * 30000 ms, max message 16 MiB, client name "mcpconn".  Options are copied by
 * mcp_client_connect(), so they may be freed right after.
 * Threads: one thread at a time per object.
 */
MCP_EXTERN mcp_client_options *mcp_client_options_new(void);
MCP_EXTERN void mcp_client_options_free(mcp_client_options *o);

/*
 * Use a stdio server: |argv| is the program and its arguments, NULL
 * terminated, run without a shell (argv[0] is searched in PATH).
 * Returns MCP_EINVAL for an empty argv, MCP_ENOMEM.
 */
MCP_EXTERN mcp_status mcp_client_options_set_stdio(mcp_client_options *o, const char *const *argv);
/* How an HTTP server is spoken to. */
typedef enum mcp_http_transport {
  /* Streamable HTTP; when the server answers initialize with 400, 404 or
   * 405, fall back to the legacy HTTP+SSE transport (what to use when the
   * server's kind is unknown). */
  MCP_HTTP_TRANSPORT_AUTO = 0,
  /* Streamable HTTP only (MCP 2025-03-26 and later). */
  MCP_HTTP_TRANSPORT_STREAMABLE = 1,
  /* Legacy HTTP+SSE (MCP 2024-11-05): GET an event stream, POST to the
   * endpoint it names. */
  MCP_HTTP_TRANSPORT_LEGACY_SSE = 2
} mcp_http_transport;

/* Which HTTP versions to use. */
typedef enum mcp_http_version {
  /* https: HTTP/2 when ALPN selects it, else HTTP/1.1; http: HTTP/1.1. */
  MCP_HTTP_VERSION_AUTO = 0,
  MCP_HTTP_VERSION_1_1 = 1,
  /* HTTP/2 without negotiation (h2c prior knowledge on http URLs; h2 on
   * https, failing if ALPN does not select it). */
  MCP_HTTP_VERSION_2_PRIOR_KNOWLEDGE = 2
} mcp_http_version;

/*
 * Use an HTTP server at |url| (http or https) instead of a stdio one.
 * Returns MCP_EINVAL for a URL that does not parse, MCP_ENOMEM.
 */
MCP_EXTERN mcp_status mcp_client_options_set_http(mcp_client_options *o, const char *url,
                                                  mcp_http_transport kind);
MCP_EXTERN void mcp_client_options_set_http_version(mcp_client_options *o, mcp_http_version v);
/*
 * Which era of MCP to speak.  MCP 2026-07-28 ("modern") is stateless: no
 * initialize, every request carries its version and capabilities in _meta;
 * 2025-11-25 and before ("legacy") start with initialize.  |protocol|:
 *  - "auto" (the default, also for NULL): probe with server/discover and
 *    fall back to initialize when the server is a legacy one (an error
 *    answer of any code, a result without 2026-07-28; over HTTP a 4xx
 *    other than 401/403 whose body is no JSON-RPC answer; over stdio
 *    silence for up to 10 s or exiting: such a server is started again for
 *    initialize).  Refused connections, TLS errors, 5xx and authorization
 *    failures fail the connect with their cause: they say nothing of the
 *    era;
 *  - "modern" or "2026-07-28": modern only, MCP_EVERSION when the server
 *    is not;
 *  - "legacy": initialize only, never a probe; "2025-11-25", "2025-06-18"
 *    or "2025-03-26": initialize offering that revision.
 * On the modern HTTP wire every POST carries MCP-Protocol-Version,
 * Mcp-Method and Mcp-Name; there is no session, GET stream or DELETE.
 * Returns MCP_EINVAL for any other value (the options are unchanged).
 */
MCP_EXTERN mcp_status mcp_client_options_set_protocol(mcp_client_options *o, const char *protocol);
/*
 * Adds a request header sent with every HTTP request (e.g. Authorization).
 * Returns MCP_EINVAL when the name or value holds CR, LF or NUL, or names a
 * header the transport owns (Content-Type, Accept, Host, Content-Length,
 * Connection, Transfer-Encoding, Mcp-Session-Id, MCP-Protocol-Version,
 * Mcp-Method, Mcp-Name, Last-Event-ID).
 */
MCP_EXTERN mcp_status mcp_client_options_add_header(mcp_client_options *o, const char *name,
                                                    const char *value);
/*
 * TLS: trust |ca_file| and/or |ca_dir| instead of the system store (NULL
 * keeps the system store).  Verification of the chain and the host name
 * is always on unless mcp_client_options_set_insecure(o, true).
 */
MCP_EXTERN mcp_status mcp_client_options_set_ca(mcp_client_options *o, const char *ca_file,
                                                const char *ca_dir);
/* A client certificate and key (PEM files) for mutual TLS. */
MCP_EXTERN mcp_status mcp_client_options_set_client_cert(mcp_client_options *o,
                                                         const char *cert_file,
                                                         const char *key_file);
/*
 * With |enabled| false, no standalone GET stream is opened after initialize:
 * the server can then only reach the client on the response streams of the
 * client's own requests.  Default: enabled.
 */
MCP_EXTERN void mcp_client_options_set_http_listener(mcp_client_options *o, bool enabled);
/* Turns certificate verification off.  Never the default; for tests. */
MCP_EXTERN void mcp_client_options_set_insecure(mcp_client_options *o, bool insecure);

/* Working directory of the server process (default: the host's). */
MCP_EXTERN mcp_status mcp_client_options_set_cwd(mcp_client_options *o, const char *cwd);
/*
 * Sets NAME=VALUE in the server's environment, merged over the host's own.
 * A NULL |value| removes NAME from the child's environment.
 */
MCP_EXTERN mcp_status mcp_client_options_set_env(mcp_client_options *o, const char *name,
                                                 const char *value);
/*
 * Which of the host's environment variables a stdio server inherits.  The
 * server's own variables (mcp_client_options_set_env(), a config entry's
 * "env") always apply on top, under every policy.
 */
typedef enum mcp_env_inherit {
  /* Not chosen: the default of whoever decides (a client: ALL; a manager:
   * see mcp_manager_options_set_env_inherit()). */
  MCP_ENV_INHERIT_UNSET = 0,
  /* The host's whole environment. */
  MCP_ENV_INHERIT_ALL = 1,
  /* Only HOME, LOGNAME, PATH, SHELL, TERM and USER (the MCP SDKs' list),
   * and none whose value starts with "()" (an exported shell function). */
  MCP_ENV_INHERIT_DEFAULT = 2,
  /* Nothing: the server gets only its own variables. */
  MCP_ENV_INHERIT_NONE = 3
} mcp_env_inherit;
/*
 * Sets the environment inheritance of the stdio server (default: UNSET,
 * which a client connects as MCP_ENV_INHERIT_ALL and a manager replaces by
 * its own default).  The policy is applied at each spawn (each reconnect
 * too), to the host's environment as it is then.
 * Threads: one thread at a time per object.
 * Returns: MCP_OK, MCP_EINVAL (|o| NULL or |policy| out of range).
 */
MCP_EXTERN mcp_status mcp_client_options_set_env_inherit(mcp_client_options *o,
                                                         mcp_env_inherit policy);
MCP_EXTERN mcp_status mcp_client_options_set_client_info(mcp_client_options *o, const char *name,
                                                         const char *version);
/* Default timeout of every request in ms (0 = none); also bounds connect. */
MCP_EXTERN void mcp_client_options_set_timeout_ms(mcp_client_options *o, int64_t ms);
/*
 * Largest message accepted from the server, in bytes (default 16 MiB).  A
 * response over it fails its request with MCP_ETOOBIG when the request is
 * known: on stdio when the response's integer "id" precedes its "result"
 * or "error" within its first 4 KiB (the usual order); on HTTP when it
 * came as the request's own response (body or SSE stream).  Otherwise it
 * is skipped with a warning naming the server and the size, and the
 * request it answered ends at its timeout.
 */
MCP_EXTERN void mcp_client_options_set_max_message_bytes(mcp_client_options *o, size_t bytes);
/*
 * Limits of one list call (mcp_client_list_tools() and the other *_list
 * calls) as a whole: the pages it follows, the items it collects and the
 * bytes of the JSON text it returns.  A list past one of them fails with
 * MCP_ETOOBIG.  0 keeps a limit at its default: 1000 pages, 100000 items,
 * 64 MiB.  (The call's timeout bounds the whole list too, not each page.)
 */
MCP_EXTERN void mcp_client_options_set_list_limits(mcp_client_options *o, size_t max_pages,
                                                   size_t max_items, size_t max_bytes);
/*
 * Most server messages (notifications, progress, requests for a host
 * handler) waiting for this client's callbacks, per server (0: the default
 * 1024; their bytes are bounded by the message size limit).  Beyond it
 * notifications are dropped and requests are answered at once with JSON-RPC
 * error -32000 "client busy: too many pending requests"; list_changed
 * notifications are coalesced instead, and ping is answered without
 * queueing.  mcp_client_get_stats() counts them in inbound_dropped.
 */
MCP_EXTERN void mcp_client_options_set_max_queued_messages(mcp_client_options *o, size_t n);
MCP_EXTERN void mcp_client_options_set_log(mcp_client_options *o, mcp_log_fn fn, void *user);
MCP_EXTERN void mcp_client_options_set_notification_handler(mcp_client_options *o,
                                                            mcp_notification_fn fn, void *user);
/*
 * Registers |fn| for server->client requests named |method|.  Registering
 * "roots/list", "sampling/createMessage" or "elicitation/create" also
 * declares the matching client capability in initialize (and, on an MCP
 * 2026-07-28 connection, in every request's _meta).  Requests with no
 * handler are answered -32601 (ping is always answered {}).
 * On a 2026-07-28 connection servers send no requests; a tools/call,
 * prompts/get or resources/read may instead end "input_required", and the
 * same handlers answer each input it asks for (on the worker pool, one at
 * a time per server, as always) before the library retries the call with
 * the answers; the caller sees only the final outcome.  An input no
 * handler answers, a handler's error, or more than 10 rounds fail the
 * call.  The call's timeout applies to each round; a fired cancellation
 * token ends it between rounds; max_total_ms bounds all rounds together.
 */
MCP_EXTERN mcp_status mcp_client_options_set_request_handler(mcp_client_options *o,
                                                             const char *method, mcp_request_fn fn,
                                                             void *user);
/*
 * Declares extension |id| (e.g. MCP_SKILLS_EXTENSION) with settings
 * |settings_json| (a JSON object; NULL: {}) in the client's capabilities
 * ("extensions" member), on both eras.  Extensions are off until declared.
 * Threads: one thread at a time per object.
 * Returns: MCP_OK, MCP_EINVAL (no id, settings not an object), MCP_ENOMEM.
 */
MCP_EXTERN mcp_status mcp_client_options_set_extension(mcp_client_options *o, const char *id,
                                                       const char *settings_json);
/*
 * Replaces the JSON object sent as `capabilities` for a capability the
 * library declares from a handler, e.g. ("elicitation", "{\"form\":{}}").
 */
MCP_EXTERN mcp_status mcp_client_options_set_capability(mcp_client_options *o, const char *name,
                                                        const char *json);

/* ------------------------------------------------------------------------ */
/* Client                                                                    */
/* ------------------------------------------------------------------------ */

/*
 * mcp_client_connect() starts the server's transport, runs initialize
 * (offering 2025-11-25, accepting 2025-06-18 and 2025-03-26) and sends
 * notifications/initialized.
 * Ownership: |o| is borrowed and copied.  On MCP_OK *out is a new client
 *   released with mcp_client_free(); on error *out is NULL.
 * Threads: any thread; blocks until ready, the timeout, or failure.
 * Returns: MCP_OK, MCP_ESPAWN, MCP_ETIMEDOUT, MCP_ECLOSED, MCP_EPROTO,
 *   MCP_ERPC, MCP_EVERSION, MCP_EINVAL, MCP_ENOMEM.
 */
MCP_EXTERN mcp_status mcp_client_connect(const mcp_client_options *o, mcp_client **out,
                                         mcp_error *err);

/*
 * mcp_client_close() shuts the connection down (stdio: close stdin, wait 2 s,
 * SIGTERM the process group, wait 2 s, SIGKILL, reap).  Every request still
 * in flight ends with MCP_ECLOSED.  Idempotent.
 * Threads: any thread, including a callback of this client.
 */
MCP_EXTERN void mcp_client_close(mcp_client *c);

/*
 * mcp_client_free() closes the client if needed, ends every call still in
 * flight on other threads with MCP_ECLOSED (their async callbacks run, once,
 * with it), waits until those threads have left the library and the
 * client's callbacks have finished, and releases it.  Called from one of
 * this client's own callbacks, the release happens after that callback
 * returns.  A call that starts after mcp_client_free() was called (or
 * concurrently with it, which cannot be told apart) is still undefined:
 * free is the last use of |c| a host makes.
 */
MCP_EXTERN void mcp_client_free(mcp_client *c);

/* Protocol version in use, e.g. "2025-11-25" (negotiated by initialize) or
 * "2026-07-28" (modern); valid until free. */
MCP_EXTERN const char *mcp_client_protocol_version(const mcp_client *c);
/* The server's initialize result as JSON text, or on a modern connection its
 * server/discover result (capabilities at the top level as in initialize's;
 * the server's name and version in _meta["io.modelcontextprotocol/serverInfo"]
 * instead of serverInfo); valid until free. */
MCP_EXTERN const char *mcp_client_server_info(const mcp_client *c);
/* True until the connection has closed. Threads: any. */
MCP_EXTERN bool mcp_client_is_open(const mcp_client *c);

/*
 * mcp_client_request() sends |method| with |params_json| (NULL for none) and
 * waits for the answer.
 * Ownership: inputs borrowed.  On MCP_OK *result_json is the result object
 *   as JSON text, freed with mcp_free(); on error it is NULL.
 * Threads: any thread, concurrently on one client.  Blocks until the reply,
 *   the deadline, the cancel token or close, whichever comes first; on
 *   timeout or cancel the server is sent notifications/cancelled.
 * Returns: MCP_OK, MCP_ETIMEDOUT, MCP_ECANCELLED, MCP_ECLOSED, MCP_ERPC,
 *   MCP_EPROTO, MCP_EINVAL, MCP_ETOOBIG, MCP_ENOMEM.
 */
MCP_EXTERN mcp_status mcp_client_request(mcp_client *c, const char *method, const char *params_json,
                                         const mcp_call_options *opts, char **result_json,
                                         mcp_error *err);

/*
 * Completion of an async call.  Runs exactly once on a worker thread for a
 * call that was accepted (MCP_OK from the *_async function), including on
 * timeout, cancel and close; never for a call that was refused.
 * |result_json| (NULL on error) and |err| are valid only during the call.
 */
typedef void (*mcp_result_fn)(void *user, mcp_status status, const char *result_json,
                              const mcp_error *err);

/*
 * mcp_client_request_async() is mcp_client_request() that returns at once.
 * Returns: MCP_OK (|fn| will run once), or an error (|fn| never runs).
 */
MCP_EXTERN mcp_status mcp_client_request_async(mcp_client *c, const char *method,
                                               const char *params_json,
                                               const mcp_call_options *opts, mcp_result_fn fn,
                                               void *user, mcp_error *err);

/* Sends a notification. Threads: any. */
MCP_EXTERN mcp_status mcp_client_notify(mcp_client *c, const char *method, const char *params_json,
                                        mcp_error *err);

/*
 * mcp_client_call_tool() runs tools/call for |name| with |args_json| (a JSON
 * object or NULL).  *result_json is the CallToolResult.  A result with
 * isError: true returns MCP_ETOOLERROR and still sets *result_json.
 * Threads and ownership as mcp_client_request().
 */
MCP_EXTERN mcp_status mcp_client_call_tool(mcp_client *c, const char *name, const char *args_json,
                                           const mcp_call_options *opts, char **result_json,
                                           mcp_error *err);
MCP_EXTERN mcp_status mcp_client_call_tool_async(mcp_client *c, const char *name,
                                                 const char *args_json,
                                                 const mcp_call_options *opts, mcp_result_fn fn,
                                                 void *user, mcp_error *err);

/* ------------------------------------------------------------------------ */
/* Tasks: long-running tool calls                                            */
/* ------------------------------------------------------------------------ */

/*
 * A server may run a tool call as a task and answer with its id at once;
 * the result comes later.  Two wire forms, one per era (docs/TASKS.md):
 *   - 2025-11-25 connections: the experimental task utility.  The client
 *     asks for a task ("task" in the tools/call params) where the server's
 *     capabilities allow it (tasks.requests.tools.call) and the tool's
 *     execution.taskSupport says so, then polls tasks/get by pollInterval
 *     and reads the result with tasks/result.
 *   - 2026-07-28 connections: the extension MCP_TASKS_EXTENSION, declared
 *     with mcp_client_options_set_extension(o, MCP_TASKS_EXTENSION, NULL);
 *     the server decides and answers resultType "task"; the client polls
 *     tasks/get by pollIntervalMs and answers input_required with tasks/update.
 * mcp_client_call_tool() (sync and async) and mcp_manager_call_tool() do
 * all of it: the caller gets the final result as if the call were direct.
 * Status changes reach the call's progress callback (progress counts
 * them; |message| is "task ID: STATUS[: statusMessage]"), called from the
 * thread that waits for the task: the caller's for a sync call, a thread
 * of the library's for an async one (whose result callback still runs on
 * a worker thread, once).  The call's
 * timeout bounds the whole call, task included (0: none; with
 * mcp_call_options_set_reset_timeout_on_progress() a status change
 * restarts it); on timeout or a fired cancel token the server is sent
 * tasks/cancel, never notifications/cancelled.  Inputs a modern task asks
 * for are answered by the same request handlers as input_required rounds;
 * a legacy task's inputs arrive as server requests during tasks/result.
 */
#define MCP_TASKS_EXTENSION "io.modelcontextprotocol/tasks"

typedef enum mcp_task_status {
  MCP_TASK_WORKING = 0,
  MCP_TASK_INPUT_REQUIRED = 1,
  MCP_TASK_COMPLETED = 2,
  MCP_TASK_FAILED = 3,
  MCP_TASK_CANCELLED = 4
} mcp_task_status;

/* When a plain call on a 2025-11-25 connection asks for a task (the
 * modern era has no such choice: the server decides). */
typedef enum mcp_task_mode {
  /* When the server allows tasks on tools/call and the tool's
   * execution.taskSupport is "required" (read from tools/list: on such
   * servers the call lists the tools first). */
  MCP_TASK_AUTO = 0,
  /* Also when it is "optional". */
  MCP_TASK_PREFER = 1,
  /* Never (a tool that requires a task then fails with the server's error). */
  MCP_TASK_NEVER = 2
} mcp_task_mode;
MCP_EXTERN void mcp_call_options_set_task_mode(mcp_call_options *o, mcp_task_mode mode);
/*
 * mcp_call_options_set_task_status(): |fn| hears of the task a call
 * follows (plain call or mcp_task_wait()): once when the wait begins,
 * then on each change of status or statusMessage; |status_message| may be
 * NULL.  It runs where the progress callback runs (the thread that waits
 * for the task), before it; the strings are valid during the call only.
 * A call answered directly never calls it.  NULL: none.
 */
typedef void (*mcp_task_status_fn)(void *user, const char *task_id, mcp_task_status status,
                                   const char *status_message);
MCP_EXTERN void mcp_call_options_set_task_status(mcp_call_options *o, mcp_task_status_fn fn,
                                                 void *user);

typedef struct mcp_task mcp_task;

/*
 * mcp_client_start_tool_task() calls tool |name| as a task and returns
 * without waiting for it: *out is the task, its id from mcp_task_id().
 * Legacy connections need the server's tasks.requests.tools.call
 * capability; modern ones the extension declared.  A modern server may
 * still answer directly: the task is then already completed with no id
 * (mcp_task_id() gives "").  |opts| bounds this request only.
 * Ownership: *out freed with mcp_task_free() (which does not cancel it).
 * Threads: a task is used by one thread at a time; its client must
 *   outlive it.
 * Returns: MCP_OK; MCP_ESTATE when the server (legacy) or the
 *   options (modern) allow no task; the errors of mcp_client_request().
 */
MCP_EXTERN mcp_status mcp_client_start_tool_task(mcp_client *c, const char *name,
                                                 const char *args_json,
                                                 const mcp_call_options *opts, mcp_task **out,
                                                 mcp_error *err);
/*
 * mcp_client_resume_task() takes up task |task_id| of this server again
 * (an id stored by the host, e.g. across a restart): one tasks/get.
 * Returns: MCP_OK with *out; MCP_ERPC when the server knows no such task.
 */
MCP_EXTERN mcp_status mcp_client_resume_task(mcp_client *c, const char *task_id,
                                             const mcp_call_options *opts, mcp_task **out,
                                             mcp_error *err);
/* The task's id (valid until free) and last known status and statusMessage
 * (NULL when none; valid until the next call on the task). */
MCP_EXTERN const char *mcp_task_id(const mcp_task *t);
MCP_EXTERN mcp_task_status mcp_task_get_status(const mcp_task *t);
MCP_EXTERN const char *mcp_task_status_message(const mcp_task *t);
/* One tasks/get: the status is refreshed. */
MCP_EXTERN mcp_status mcp_task_poll(mcp_task *t, const mcp_call_options *opts, mcp_error *err);
/*
 * A modern task in input_required: *requests_json (mcp_free) is its
 * inputRequests object not yet answered, or NULL when none.  Answer with
 * mcp_task_send_input(): |responses_json| is the inputResponses object
 * (tasks/update).  mcp_task_wait() answers them itself by the handlers.
 */
MCP_EXTERN mcp_status mcp_task_input_requests(const mcp_task *t, char **requests_json,
                                              mcp_error *err);
MCP_EXTERN mcp_status mcp_task_send_input(mcp_task *t, const char *responses_json,
                                          const mcp_call_options *opts, mcp_error *err);
/*
 * mcp_task_wait() polls until the task ends and returns its result as
 * mcp_client_call_tool() would (MCP_ETOOLERROR for isError; MCP_ERPC for a
 * failed task, with its error; MCP_ECANCELLED when it was cancelled),
 * with the timeout, cancel token and progress of |opts| as in the plain
 * call (timeout or cancel send tasks/cancel).
 */
MCP_EXTERN mcp_status mcp_task_wait(mcp_task *t, const mcp_call_options *opts, char **result_json,
                                    mcp_error *err);
/* Sends tasks/cancel (cooperative: the task may still complete). */
MCP_EXTERN mcp_status mcp_task_cancel(mcp_task *t, mcp_error *err);
MCP_EXTERN void mcp_task_free(mcp_task *t);

/*
 * mcp_tool_result_text() gives the text of a CallToolResult, ready for a
 * model: the "text" strings of the items of its "content" array whose
 * "type" is "text", in order, joined with "\n", escapes resolved (unpaired
 * surrogate escapes become U+FFFD).  Other items (image, audio, resource,
 * anything that is not an object) are skipped; a result without text items
 * gives "".  isError is not looked at (the call returned MCP_ETOOLERROR).
 * |result_json| is |len| bytes, or NUL-terminated when |len| is (size_t)-1:
 * usually what mcp_client_call_tool(), mcp_manager_call_tool() or an
 * mcp_result_fn returned.  The whole of it is checked: it must be valid
 * UTF-8 and one JSON value, parsed as the library parses messages.  It needs
 * no client and allocates no tree: most results are decoded in one pass.
 * Ownership: |result_json| borrowed.  On MCP_OK *text is a new
 *   NUL-terminated UTF-8 string freed with mcp_free(), and *text_len (NULL
 *   to ignore) its length, which counts any NUL a "\u0000" put inside; on
 *   error *text is NULL.
 * Threads: any; no shared state.
 * Returns: MCP_OK; MCP_EPROTO when |result_json| is not valid UTF-8 JSON,
 *   not an object, has no "content" array, or has a text item whose "text"
 *   is not a string (err->message says which); MCP_EINVAL when |result_json|
 *   or |text| is NULL; MCP_ENOMEM.
 */
MCP_EXTERN mcp_status mcp_tool_result_text(const char *result_json, size_t len, char **text,
                                           size_t *text_len, mcp_error *err);

/*
 * List calls follow nextCursor until the last page and return one JSON array
 * of every item (tools, resources, resource templates, prompts).  The
 * call's timeout bounds the whole list, every page included (with
 * mcp_call_options_set_reset_timeout_on_progress(), its max total does);
 * mcp_client_options_set_list_limits() bounds its pages, items and bytes.
 * Returns: MCP_OK; MCP_ETIMEDOUT; MCP_ETOOBIG past a list limit;
 *   MCP_EPROTO when a page has no array of items or the server repeats the
 *   cursor it was just given; the errors of mcp_client_request().
 */
MCP_EXTERN mcp_status mcp_client_list_tools(mcp_client *c, const mcp_call_options *opts,
                                            char **tools_json, mcp_error *err);
MCP_EXTERN mcp_status mcp_client_list_resources(mcp_client *c, const mcp_call_options *opts,
                                                char **resources_json, mcp_error *err);
MCP_EXTERN mcp_status mcp_client_list_resource_templates(mcp_client *c,
                                                         const mcp_call_options *opts,
                                                         char **templates_json, mcp_error *err);
MCP_EXTERN mcp_status mcp_client_list_prompts(mcp_client *c, const mcp_call_options *opts,
                                              char **prompts_json, mcp_error *err);
/* resources/read of |uri|; *result_json is the ReadResourceResult.  An
 * unknown resource is MCP_ENOTFOUND whichever code the server used for it
 * (-32002 before 2026-07-28, -32602 from it); err->rpc_code and
 * err->message are the server's. */
MCP_EXTERN mcp_status mcp_client_read_resource(mcp_client *c, const char *uri,
                                               const mcp_call_options *opts, char **result_json,
                                               mcp_error *err);
/*
 * Resource subscriptions: after mcp_client_subscribe_resource() the server
 * sends notifications/resources/updated {"uri": ...} when |uri| changes;
 * they reach the notification handler (which must be set:
 * mcp_client_options_set_notification_handler()).  On a 2025 connection
 * this is resources/subscribe (unsubscribe: resources/unsubscribe) and the
 * server's answer or error is returned.  On a 2026-07-28 connection the
 * URIs are carried by the client's subscriptions/listen: the call changes
 * the set and re-opens the listen with it at once (stdio: the old one is
 * cancelled; HTTP: its stream closes) and waits, within the call's
 * timeout, for the server to acknowledge the new listen, so that a change
 * made once the call has returned is reported (a listen the server refuses
 * or ends unacknowledged is logged, and the call returns MCP_OK as the
 * connection stays up).  Subscribing twice to a URI, or unsubscribing from one
 * not subscribed to, changes nothing (modern) or is up to the server
 * (legacy).  Subscriptions belong to the connection: a new connection
 * starts with none.
 * Ownership: |uri| borrowed.  Threads: any.
 * Returns: MCP_OK; MCP_ESTATE (no notification handler; a modern server
 *   that does not advertise capabilities.resources.subscribe); MCP_EINVAL;
 *   MCP_ECLOSED; MCP_ENOMEM; MCP_ETIMEDOUT (modern: no acknowledgement in
 *   time; the URI stays in the set); a legacy request's errors.
 */
MCP_EXTERN mcp_status mcp_client_subscribe_resource(mcp_client *c, const char *uri,
                                                    const mcp_call_options *opts, mcp_error *err);
MCP_EXTERN mcp_status mcp_client_unsubscribe_resource(mcp_client *c, const char *uri,
                                                      const mcp_call_options *opts, mcp_error *err);
/* prompts/get of |name| with |args_json| (object of strings, or NULL). */
MCP_EXTERN mcp_status mcp_client_get_prompt(mcp_client *c, const char *name, const char *args_json,
                                            const mcp_call_options *opts, char **result_json,
                                            mcp_error *err);
/*
 * Skills (the io.modelcontextprotocol/skills extension, SEP-2640): a server
 * serves Agent Skills, each a directory of resources whose SKILL.md starts
 * with YAML frontmatter.  The host opts in with
 * mcp_client_options_set_extension(o, MCP_SKILLS_EXTENSION, NULL) (or
 * mcp_manager_options_set_extension()), which declares the extension in
 * the client's capabilities (initialize, or every request's _meta on a
 * 2026-07-28 connection).
 *
 * mcp_client_list_skills() sends skills/list (every page, within the list
 * limits, as mcp_client_list_tools()) when the server declares the
 * extension, and keeps each entry that follows the extension's rules (an
 * entry that breaks one is left out with a warning naming the server, the
 * entry and the rule).  Nothing else is read: no skill file is fetched on
 * connect or on listing.
 * Ownership: on MCP_OK *out is a new immutable list freed with
 *   mcp_skill_list_free(); on error *out is NULL.
 * Threads: any; the list may be read from any number of threads at once.
 * Returns: MCP_OK; MCP_ENOTFOUND when the server does not declare the
 *   extension (nothing sent); the errors of mcp_client_list_tools().
 */
#define MCP_SKILLS_EXTENSION "io.modelcontextprotocol/skills"
typedef struct mcp_skill_list mcp_skill_list;
MCP_EXTERN mcp_status mcp_client_list_skills(mcp_client *c, const mcp_call_options *opts,
                                             mcp_skill_list **out, mcp_error *err);
MCP_EXTERN void mcp_skill_list_free(mcp_skill_list *l);
MCP_EXTERN size_t mcp_skill_list_count(const mcp_skill_list *l);
/* The i-th skill's server (the manager's name; NULL in a client's list),
 * the URI of its SKILL.md, frontmatter name and description, and the
 * whole skills/list entry as JSON text.  NULL when |i| is out of range;
 * valid while |l| is. */
MCP_EXTERN const char *mcp_skill_list_server(const mcp_skill_list *l, size_t i);
MCP_EXTERN const char *mcp_skill_list_uri(const mcp_skill_list *l, size_t i);
MCP_EXTERN const char *mcp_skill_list_name(const mcp_skill_list *l, size_t i);
MCP_EXTERN const char *mcp_skill_list_description(const mcp_skill_list *l, size_t i);
MCP_EXTERN const char *mcp_skill_list_json(const mcp_skill_list *l, size_t i);
/*
 * mcp_skill_list_find() finds the skill whose SKILL.md URI or name is
 * |key| among the skills of |server| (NULL: any server) in |l|.  Names are
 * labels, not identifiers: two skills may share one.
 * Returns: MCP_OK (*index set); MCP_ENOTFOUND; MCP_EINVAL when more than
 *   one skill has that name (err->message says to give the URI).
 */
MCP_EXTERN mcp_status mcp_skill_list_find(const mcp_skill_list *l, const char *server,
                                          const char *key, size_t *index, mcp_error *err);
/*
 * mcp_client_load_skill() loads the i-th skill of |l| (a list from this
 * client): resources/read of its SKILL.md and nothing else, then the
 * checks the extension requires before the content may be used: its byte
 * length against the entry's size, its SHA-256 against the entry's
 * "sha256:" digest (both skipped for a "dynamic" entry, which has none),
 * and its YAML frontmatter, field by field, against the entry's
 * frontmatter.  Only then is the text handed out.  The digests come from
 * the same server as the content: a match proves they agree, not that the
 * skill is trustworthy.
 * Ownership: |l| borrowed.  On MCP_OK *skill_md is the SKILL.md text (NUL
 *   terminated, *len bytes; |len| may be NULL), freed with mcp_free().
 * Threads: any.
 * Returns: MCP_OK; MCP_EPROTO when the content does not match the entry
 *   or the read result holds no content for the SKILL.md (err->message
 *   names the server, the skill and what did not match); MCP_EINVAL;
 *   the errors of mcp_client_read_resource().
 */
MCP_EXTERN mcp_status mcp_client_load_skill(mcp_client *c, const mcp_skill_list *l, size_t i,
                                            const mcp_call_options *opts, char **skill_md,
                                            size_t *len, mcp_error *err);
/*
 * mcp_client_read_skill_file() reads one supporting file of the i-th skill
 * of |l| (a list from this client), once the host has loaded the skill and
 * needs the file (the extension forbids fetching a skill's files ahead of
 * need: nothing here or anywhere in the library reads one on its own).
 * |file| is a path relative to the skill's root, as a SKILL.md refers to
 * its files ("references/GUIDE.md"), or the file's full URI; either must
 * stay within the skill's directory (no "." or ".." segments).  The file
 * must be listed in the entry's resources: an unlisted file is a
 * verification failure, so it is not read.  It is fetched with
 * resources/read and handed out only when its byte length and SHA-256
 * match the entry's.  The files of a "dynamic" skill (no manifest) are
 * read unverified.
 * Ownership: |l| and |file| borrowed.  On MCP_OK *data is the file's bytes
 *   (a text item as is, a blob decoded; NUL terminated after *len bytes;
 *   |len| may be NULL, but a binary file needs it), freed with mcp_free().
 * Threads: any.
 * Returns: MCP_OK; MCP_EINVAL (a path that leaves the skill, or bad
 *   arguments); MCP_ENOTFOUND when the entry does not list the file
 *   (nothing sent); MCP_EPROTO when the content does not match the entry
 *   or the result holds none for the file (err->message names the server,
 *   the skill, the file and what differed); the errors of
 *   mcp_client_read_resource().
 */
MCP_EXTERN mcp_status mcp_client_read_skill_file(mcp_client *c, const mcp_skill_list *l, size_t i,
                                                 const char *file, const mcp_call_options *opts,
                                                 char **data, size_t *len, mcp_error *err);
/* ping; MCP_OK when the server answered. */
MCP_EXTERN mcp_status mcp_client_ping(mcp_client *c, const mcp_call_options *opts, mcp_error *err);

/*
 * Counters for diagnostics; all monotonic since connect.
 *  unknown_responses  responses whose id matched no request in flight
 *  late_responses     responses to requests that had timed out or been cancelled
 *  protocol_errors    lines that were not valid JSON-RPC
 *  oversize_messages  messages dropped for exceeding the size limit
 *  inbound_dropped    server messages dropped, or requests answered -32000
 *                     "client busy", because too many already waited for
 *                     the host's callbacks (mcp_client_options_set_max_queued_messages)
 *  outbound_dropped   answers and notifications not sent because the server
 *                     did not read what was already queued for it
 */
typedef struct mcp_client_stats {
  uint64_t requests_sent;
  uint64_t responses_received;
  uint64_t unknown_responses;
  uint64_t late_responses;
  uint64_t protocol_errors;
  uint64_t oversize_messages;
  uint64_t notifications_received;
  uint64_t server_requests;
  uint64_t inbound_dropped;
  uint64_t outbound_dropped;
} mcp_client_stats;

MCP_EXTERN void mcp_client_get_stats(const mcp_client *c, mcp_client_stats *out);

/* ------------------------------------------------------------------------ */
/* Manager: many servers, one namespaced tool list                          */
/* ------------------------------------------------------------------------ */

/*
 * A manager finds the configured servers, connects them in parallel on its
 * own threads, keeps one sorted tool list named mcp__<server>_<tool> across
 * all of them, serves a slow server's tools from an on-disk cache until it
 * answers (deferred tools), and reconnects servers that close, with
 * backoff and a circuit breaker.  Every function is safe from any thread
 * unless its comment says otherwise.
 */
typedef struct mcp_manager mcp_manager;
typedef struct mcp_manager_options mcp_manager_options;
typedef struct mcp_tool_list mcp_tool_list;

/* Files of other MCP clients that discovery may import. */
#define MCP_IMPORT_CLAUDE 0x01u
#define MCP_IMPORT_CURSOR 0x02u
#define MCP_IMPORT_VSCODE 0x04u
#define MCP_IMPORT_WINDSURF 0x08u
#define MCP_IMPORT_GEMINI 0x10u
#define MCP_IMPORT_CLAUDE_DESKTOP 0x20u
#define MCP_IMPORT_CLINE 0x40u
#define MCP_IMPORT_ZED 0x80u
#define MCP_IMPORT_OPENCODE 0x100u
#define MCP_IMPORT_CODEX 0x200u
#define MCP_IMPORT_ALL 0x3ffu

typedef enum mcp_manager_event {
  /* A new tool list is published; |detail_json| is {"version":N,"count":M}. */
  MCP_MANAGER_EVENT_TOOLS_CHANGED = 1,
  /* A server changed state; |detail_json| is its status object (see
   * mcp_manager_servers()). */
  MCP_MANAGER_EVENT_SERVER_STATE = 2,
  /* A server notification; |detail_json| is {"method":...,"params":...}. */
  MCP_MANAGER_EVENT_NOTIFICATION = 3
} mcp_manager_event;

/* Runs on a worker thread; |server| and |detail_json| valid during the call. */
typedef void (*mcp_manager_event_fn)(void *user, mcp_manager_event event, const char *server,
                                     const char *detail_json);

/*
 * Options with defaults: discovery of the user file
 * ($XDG_CONFIG_HOME/mcpconn/mcp.json) but not of project files (see
 * mcp_manager_options_set_discovery), no imports, startup gate 250 ms,
 * request timeout 30000 ms, 4 worker threads, cache in
 * $XDG_CACHE_HOME/mcpconn.  Threads: one thread at a time per object.
 */
MCP_EXTERN mcp_manager_options *mcp_manager_options_new(void);
MCP_EXTERN void mcp_manager_options_free(mcp_manager_options *o);
/* Adds a config file read before every discovered one (first wins). */
MCP_EXTERN mcp_status mcp_manager_options_add_config_file(mcp_manager_options *o, const char *path);
/*
 * The format of every file added with mcp_manager_options_add_config_file(),
 * instead of the one its name or shape shows: "claude-code",
 * "claude-desktop", "cursor", "vscode", "windsurf", "gemini", "codex",
 * "opencode", "cline", "zed" or "mcpconn" (mcpconn's own, read strictly).
 * NULL: detect each file's format again (the default).
 * Ownership: |format| borrowed.  Threads: one thread at a time per object.
 * Returns: MCP_OK, MCP_EINVAL (NULL o, or another name: nothing changes).
 */
MCP_EXTERN mcp_status mcp_manager_options_set_config_format(mcp_manager_options *o,
                                                            const char *format);
/* Adds a server defined in code; it wins over every file. */
MCP_EXTERN mcp_status mcp_manager_options_add_server(mcp_manager_options *o, const char *name,
                                                     const mcp_client_options *co);
/*
 * Turns discovery of project and user files on or off (default: project
 * off, user on).  Project files (the nearest .mcp.json above the working
 * directory, and the project files of imported clients) come with the
 * directory, so a cloned repository could otherwise run its commands: with
 * |project| on, a project file is used only when the user approved its
 * path and content before (see mcp_project_trust_fn) or the host's trust
 * callback allows it; any other is left out with a diagnostic.
 */
MCP_EXTERN void mcp_manager_options_set_discovery(mcp_manager_options *o, bool project, bool user);
/*
 * What a host decides about a project file nobody approved yet.
 *  MCP_TRUST_DENY    leave its servers out (asked again next time)
 *  MCP_TRUST_ONCE    use it for this manager only
 *  MCP_TRUST_ALWAYS  use it, and remember the approval in the user's trust
 *                    store, $XDG_CONFIG_HOME/mcpconn/trusted-projects.json
 *                    (~/.config/mcpconn/...), keyed by the file's canonical
 *                    path and the SHA-256 of its content: a changed or
 *                    moved file is asked about again.
 */
typedef enum mcp_trust { MCP_TRUST_DENY = 0, MCP_TRUST_ONCE = 1, MCP_TRUST_ALWAYS = 2 } mcp_trust;

/*
 * Asked about each project file that discovery finds, that has servers, and
 * whose path and content the trust store does not hold.  |path| is the
 * file's canonical path (its directory resolved with realpath(3)),
 * |sha256| the lowercase hex SHA-256 of the bytes read (those bytes are
 * what gets used), |servers_json| a JSON array describing each server as
 * written, before any ${VAR} expansion: {"name", "type", "command", "args",
 * "cwd", "url", "commands"}, members present when the file has them;
 * "commands" lists the `!command` env and header values it would run.  All
 * three are valid during the call.  Nothing of the file has run when it is
 * called, and nothing runs if it returns MCP_TRUST_DENY.
 * Threads: runs on the thread that called mcp_manager_start() (or
 *   mcp_project_trust_review()), during that call, with no library lock
 *   held; it may block (to ask the user).
 */
typedef mcp_trust (*mcp_project_trust_fn)(void *user, const char *path, const char *sha256,
                                          const char *servers_json);

/* Sets the trust callback for project files (NULL: only approvals already
 * in the trust store count). */
MCP_EXTERN void mcp_manager_options_set_project_trust(mcp_manager_options *o,
                                                      mcp_project_trust_fn fn, void *user);

/*
 * mcp_project_trust_review() finds the project files that discovery from
 * |cwd| (NULL: the process's working directory) with |imports| would read,
 * and calls |fn| for each one the trust store does not approve, as
 * mcp_manager_start() would; MCP_TRUST_ALWAYS stores the approval.  Starts
 * no server and runs nothing from the files.  For a host's "trust this
 * project" command.
 * Ownership: arguments borrowed.  Threads: any; |fn| runs on the caller's.
 * Returns: MCP_OK (also when a file could not be read: that is a warning
 *   left out here), MCP_EINVAL (NULL fn, relative cwd), MCP_EIO (the
 *   approval could not be stored; |err| says why), MCP_ENOMEM.
 */
MCP_EXTERN mcp_status mcp_project_trust_review(const char *cwd, unsigned imports,
                                               mcp_project_trust_fn fn, void *user, mcp_error *err);

/*
 * The value of ${input:ID} in config files (VS Code's "inputs", which VS
 * Code asks the user for when a server starts).  A server whose entry
 * references an input with no value here is not used, with a diagnostic
 * naming the file, the server and the field; the reference is never sent
 * as text.  A later call for the same |id| replaces the value; |value|
 * NULL removes it.
 * Ownership: |id| and |value| copied (the copy is wiped when freed).
 * Threads: one thread at a time per object.
 * Returns: MCP_OK, MCP_EINVAL (NULL o or id, empty id), MCP_ENOMEM.
 */
MCP_EXTERN mcp_status mcp_manager_options_set_input(mcp_manager_options *o, const char *id,
                                                    const char *value);
/* Imports other clients' files (MCP_IMPORT_* bits; default none). */
MCP_EXTERN void mcp_manager_options_set_imports(mcp_manager_options *o, unsigned imports);
/* Directory discovery starts from (default: the process's). */
MCP_EXTERN mcp_status mcp_manager_options_set_cwd(mcp_manager_options *o, const char *dir);
/* Cache directory; NULL turns the deferred-tool cache off. */
MCP_EXTERN mcp_status mcp_manager_options_set_cache_dir(mcp_manager_options *o, const char *dir);
MCP_EXTERN void mcp_manager_options_set_startup_gate_ms(mcp_manager_options *o, int64_t ms);
/* Timeout for servers whose config gives none (0: none). */
MCP_EXTERN void mcp_manager_options_set_timeout_ms(mcp_manager_options *o, int64_t ms);
/*
 * Protocol mode, as mcp_client_options_set_protocol() takes it ("auto",
 * "modern", "legacy" or a revision), for the servers of config files whose
 * entry has no "protocol" (default "auto").  A server added with
 * mcp_manager_options_add_server() keeps its own options' mode.
 * Returns MCP_EINVAL for any other value (the options are unchanged).
 */
MCP_EXTERN mcp_status mcp_manager_options_set_protocol(mcp_manager_options *o,
                                                       const char *protocol);
/*
 * mcp_client_options_set_list_limits() for the servers of config files (a
 * server added with mcp_manager_options_add_server() keeps its own options'
 * limits): every tools/list, resources/list and prompts/list the manager
 * makes on connect and on list_changed.  0 keeps a limit at the client's
 * default.  A server whose tool list is past a limit fails to connect with
 * that reason (MCP_ETOOBIG in its lastError).
 */
MCP_EXTERN void mcp_manager_options_set_list_limits(mcp_manager_options *o, size_t max_pages,
                                                    size_t max_items, size_t max_bytes);
/*
 * Circuit breaker: a server that closes more than 5 times in 30 s is
 * stopped (state "failed") for |first_ms| (default 30000), then one connect
 * is tried; if that fails, or the server closes again within 30 s, it is
 * stopped again for twice as long, up to |max_ms| (default 600000).
 * |first_ms| 0: it stays stopped until mcp_manager_reconnect().
 */
MCP_EXTERN void mcp_manager_options_set_breaker_cooldown_ms(mcp_manager_options *o,
                                                            int64_t first_ms, int64_t max_ms);
MCP_EXTERN void mcp_manager_options_set_worker_threads(mcp_manager_options *o, size_t n);
/*
 * Resending after a failure (RFC 9110 9.2.2).  By default the manager sends
 * a failed call once more (after reconnecting) only when the server cannot
 * have run it: it provably never reached the server (no connection, no
 * byte written, HTTP/2 REFUSED_STREAM or a stream above GOAWAY's
 * last-stream-id, the connection already closed), or the server refused it
 * (HTTP 404 for an expired session); or when the request is idempotent: a
 * read by MCP's definition (ping, tools/list, resources/list,
 * resources/templates/list, resources/read, prompts/list, prompts/get) or
 * a tools/call of a tool the server annotates with idempotentHint or
 * readOnlyHint true.  Any other call that fails mid-flight (a stdio server
 * that crashed, a connection that dropped, HTTP 502/503) fails with that
 * error, since the server may have run it.  |on| true also resends those
 * (at most once), for hosts whose tools are all safe to repeat.
 * Threads: one thread at a time per object.
 */
MCP_EXTERN void mcp_manager_options_set_retry_non_idempotent(mcp_manager_options *o, bool on);
/*
 * The manager's log: its own lines and those of every client it runs.
 * mcp_manager_options_set_log() gets a line, "server: message" when it is
 * about one server; mcp_manager_options_set_log_record() gets the server as
 * a field (see mcp_log_record) and, when set, replaces the former.  Either
 * runs on a worker thread, one call at a time per server (and one for the
 * manager's own lines), never under a library lock.
 */
MCP_EXTERN void mcp_manager_options_set_log(mcp_manager_options *o, mcp_log_fn fn, void *user);
MCP_EXTERN void mcp_manager_options_set_log_record(mcp_manager_options *o, mcp_log_record_fn fn,
                                                   void *user);
MCP_EXTERN void mcp_manager_options_set_event_handler(mcp_manager_options *o,
                                                      mcp_manager_event_fn fn, void *user);
/* mcp_client_options_set_extension() for every server the manager connects. */
MCP_EXTERN mcp_status mcp_manager_options_set_extension(mcp_manager_options *o, const char *id,
                                                        const char *settings_json);
MCP_EXTERN mcp_status mcp_manager_options_set_client_info(mcp_manager_options *o, const char *name,
                                                          const char *version);
/*
 * Environment inheritance (see mcp_env_inherit) of the stdio servers whose
 * definition does not choose one (no "envInherit" in its config entry, or
 * client options left at MCP_ENV_INHERIT_UNSET): |project| for servers from
 * project-level files (the .mcp.json found from the working directory, and
 * imported project files such as .cursor/mcp.json), default
 * MCP_ENV_INHERIT_DEFAULT, since a repository is not the user's own;
 * |other| for servers from the user's files, explicit files
 * (mcp_manager_options_add_config_file()) and servers added in code,
 * default MCP_ENV_INHERIT_ALL.  MCP_ENV_INHERIT_UNSET keeps a default.
 * Threads: one thread at a time per object.
 * Returns: MCP_OK, MCP_EINVAL (|o| NULL or a policy out of range).
 */
MCP_EXTERN mcp_status mcp_manager_options_set_env_inherit(mcp_manager_options *o,
                                                          mcp_env_inherit project,
                                                          mcp_env_inherit other);

/*
 * mcp_manager_start() discovers the servers and connects them all in
 * parallel.  It returns once every server has settled or the startup gate
 * has passed, whichever is first; servers still connecting then serve
 * their cached tools as deferred, or none until they are up.
 * Ownership: |o| is copied.  On MCP_OK *out is freed with
 *   mcp_manager_free().  Config problems are not errors: they are logged and
 *   shown in mcp_manager_servers(); only a manager that cannot run fails.
 * Returns: MCP_OK, MCP_EINVAL, MCP_ENOMEM.
 */
MCP_EXTERN mcp_status mcp_manager_start(const mcp_manager_options *o, mcp_manager **out,
                                        mcp_error *err);

/*
 * mcp_manager_free() shuts down: no reconnect starts after it begins,
 * connects in progress are abandoned, calls in flight on other threads end
 * with MCP_ECLOSED and are waited for, every server is closed (in
 * parallel), every thread joined.  A call that starts after (or
 * concurrently with) it is undefined; not from a callback.
 */
MCP_EXTERN void mcp_manager_free(mcp_manager *m);

/*
 * mcp_manager_tools() returns the current tool list: immutable, sorted by
 * name, byte-stable across runs.  Never waits on the manager thread.
 * Ownership: a new reference, dropped with mcp_tool_list_unref().
 */
MCP_EXTERN mcp_tool_list *mcp_manager_tools(mcp_manager *m);
MCP_EXTERN mcp_tool_list *mcp_tool_list_ref(mcp_tool_list *l);
MCP_EXTERN void mcp_tool_list_unref(mcp_tool_list *l);
/* Increases with every published list. */
MCP_EXTERN uint64_t mcp_tool_list_version(const mcp_tool_list *l);
MCP_EXTERN size_t mcp_tool_list_count(const mcp_tool_list *l);
/* The i-th tool's public name (mcp__<server>_<tool>); valid while |l| is. */
MCP_EXTERN const char *mcp_tool_list_name(const mcp_tool_list *l, size_t i);
MCP_EXTERN const char *mcp_tool_list_server(const mcp_tool_list *l, size_t i);
/* The tool's name on its server. */
MCP_EXTERN const char *mcp_tool_list_tool(const mcp_tool_list *l, size_t i);
/* The tool object (name, description, inputSchema, ...) as JSON text. */
MCP_EXTERN const char *mcp_tool_list_json(const mcp_tool_list *l, size_t i);
/* True when the entry comes from the cache and its server is not up yet. */
MCP_EXTERN bool mcp_tool_list_deferred(const mcp_tool_list *l, size_t i);

/*
 * mcp_manager_call_tool() calls |name|: a public name from the tool list,
 * or "SERVER/TOOL".  A deferred tool waits for its server (up to the
 * timeout, or until the call's cancel token fires), and so does a name not
 * (yet) in the tool list while some server is still connecting: it fails
 * with MCP_ENOTFOUND once every server has settled without it; a call that fails
 * because the connection went away
 * (MCP_ECLOSED, MCP_EIO, HTTP 404/502/503) reconnects and retries once.
 * Ownership and results as mcp_client_call_tool().
 * Returns: as mcp_client_call_tool(), plus MCP_ENOTFOUND.
 */
MCP_EXTERN mcp_status mcp_manager_call_tool(mcp_manager *m, const char *name, const char *args_json,
                                            const mcp_call_options *opts, char **result_json,
                                            mcp_error *err);
/*
 * mcp_manager_wait_ready() waits, after mcp_manager_start(), until
 *  - |server| is NULL: every server has settled (its first connect
 *    finished, ready or not) and the tool list includes what they listed;
 *  - |server| names one: that server is ready and its tools are in the
 *    tool list, or its connect failed (the cause is returned at once while
 *    reconnects go on in the background).
 * |timeout_ms|: < 0 the manager's default timeout
 * (mcp_manager_options_set_timeout_ms), 0 no limit.
 * Threads: any, concurrently with calls.
 * Returns: MCP_OK; MCP_ETIMEDOUT (err->message names the servers still
 *   connecting); MCP_ENOTFOUND (no such server); a named server's connect
 *   error (MCP_EIO, MCP_ESPAWN, MCP_ETLS, MCP_EHTTP, MCP_ECONFIG, ...);
 *   MCP_ESTATE (it is disabled); MCP_ECLOSED (the manager is being freed).
 */
MCP_EXTERN mcp_status mcp_manager_wait_ready(mcp_manager *m, const char *server, int64_t timeout_ms,
                                             mcp_error *err);
/*
 * mcp_manager_call_tool_async() is mcp_manager_call_tool() without waiting:
 * it returns at once and |fn| runs exactly once on a worker thread with
 * the outcome (as mcp_result_fn says), after the same waiting for a
 * connecting server and the same one resend after a reconnect.  A call
 * still running when mcp_manager_free() starts ends with MCP_ECLOSED, and
 * mcp_manager_free() returns after its callback.  |fn| must not call
 * mcp_manager_free().
 * Ownership: |name|, |args_json| and |opts| are copied (the cancel token
 *   referenced); |user| is passed through.
 * Threads: any.
 * Returns: MCP_OK (|fn| will run); MCP_EINVAL; MCP_ECLOSED (the manager is
 *   being freed); MCP_ENOMEM.  Nothing runs |fn| after an error.
 */
MCP_EXTERN mcp_status mcp_manager_call_tool_async(mcp_manager *m, const char *name,
                                                  const char *args_json,
                                                  const mcp_call_options *opts, mcp_result_fn fn,
                                                  void *user, mcp_error *err);
/* Any request to one server by name (waits for it like a tool call). */
MCP_EXTERN mcp_status mcp_manager_request(mcp_manager *m, const char *server, const char *method,
                                          const char *params_json, const mcp_call_options *opts,
                                          char **result_json, mcp_error *err);
/*
 * Resource subscriptions of one server by name, kept by the manager: it
 * waits for the server like a tool call and subscribes on its connection
 * (mcp_client_subscribe_resource(): resources/subscribe on a 2025
 * connection, the listen's resourceSubscriptions on a 2026-07-28 one),
 * and subscribes again on every new connection (a reconnect, a stdio
 * server started again), so updates keep coming.  Updates reach the event
 * handler as MCP_MANAGER_EVENT_NOTIFICATION with method
 * notifications/resources/updated.  A subscribe that fails is not kept;
 * an unsubscribe is kept even when the server could not be told.
 * Ownership: |server| and |uri| borrowed.  Threads: any.
 * Returns: MCP_OK; MCP_ENOTFOUND (no such server); MCP_EINVAL; what
 *   mcp_client_subscribe_resource() returns; the errors of waiting for the
 *   server (MCP_ETIMEDOUT, MCP_ECLOSED...).
 */
MCP_EXTERN mcp_status mcp_manager_subscribe_resource(mcp_manager *m, const char *server,
                                                     const char *uri, const mcp_call_options *opts,
                                                     mcp_error *err);
MCP_EXTERN mcp_status mcp_manager_unsubscribe_resource(mcp_manager *m, const char *server,
                                                       const char *uri,
                                                       const mcp_call_options *opts,
                                                       mcp_error *err);
/*
 * mcp_manager_servers() describes every configured server as a JSON array
 * of {"name","type","source","state","lastError","protocolVersion",
 * "tools","deferred","reconnects"}; state is one of "connecting", "ready",
 * "deferred", "backoff", "failed", "closed".  A server whose name in its
 * file is no valid server name (spaces, slashes: "My Server") is listed
 * under the folded name ("My_Server") with "displayName" the original.
 * Servers hidden by "enabled": false or "disabledServers" are not listed.
 */
MCP_EXTERN mcp_status mcp_manager_servers(mcp_manager *m, char **json, mcp_error *err);
/*
 * mcp_manager_resources() and mcp_manager_prompts() return every ready
 * server's resources (resources/list) or prompts (prompts/list) as one JSON
 * array, each item with a "server" member added.  Fetched after connect when
 * the server declares the capability, and fetched again after its
 * notifications/resources/list_changed or notifications/prompts/list_changed.
 * Ownership: *json freed with mcp_free().  Threads: any.
 */
MCP_EXTERN mcp_status mcp_manager_resources(mcp_manager *m, char **json, mcp_error *err);
MCP_EXTERN mcp_status mcp_manager_prompts(mcp_manager *m, char **json, mcp_error *err);

/*
 * mcp_manager_list_skills() lists the skills (see mcp_client_list_skills())
 * of |server|, or with |server| NULL of every ready server that declares
 * the extension (a server whose listing fails is left out with a warning
 * in the log).  Each skill keeps its server (mcp_skill_list_server()).
 * mcp_manager_load_skill() loads the i-th skill of such a list from its own
 * server, as mcp_client_load_skill() does (and mcp_manager_read_skill_file()
 * reads one of its files).  Both wait for a connecting
 * server as mcp_manager_request() does.  The extension must be declared
 * with mcp_manager_options_set_extension().
 * Ownership and threads as the client calls.
 * Returns: as the client calls, plus MCP_ENOTFOUND (no such server).
 */
MCP_EXTERN mcp_status mcp_manager_list_skills(mcp_manager *m, const char *server,
                                              const mcp_call_options *opts, mcp_skill_list **out,
                                              mcp_error *err);
MCP_EXTERN mcp_status mcp_manager_load_skill(mcp_manager *m, const mcp_skill_list *l, size_t i,
                                             const mcp_call_options *opts, char **skill_md,
                                             size_t *len, mcp_error *err);
/* mcp_client_read_skill_file() on the i-th skill's own server. */
MCP_EXTERN mcp_status mcp_manager_read_skill_file(mcp_manager *m, const mcp_skill_list *l, size_t i,
                                                  const char *file, const mcp_call_options *opts,
                                                  char **data, size_t *len, mcp_error *err);

/*
 * Tasks through the manager (see "Tasks" above and docs/TASKS.md).  With a
 * cache directory (mcp_manager_options_set_cache_dir(), or the default
 * one), a task that mcp_manager_call_tool() or mcp_manager_wait_task()
 * follows is recorded in a file of that directory (server, task id, tool,
 * created and last-updated time, last status and statusMessage), updated
 * on each status change and kept with its final status when it ends, so
 * that a later process can list it and take it up again: the 2026-07-28
 * tasks extension has no tasks/list, and the spec asks clients to keep
 * their task ids.  Ended tasks are dropped after a week; a server keeps
 * at most 256 records.  A record that cannot be written is a warning in
 * the log, never a failed call.
 *
 * mcp_manager_list_tasks() lists |server|'s tasks as a JSON array of
 * {"server","taskId","tool","status","statusMessage","createdAt",
 * "lastUpdatedAt","recorded","listed"}: the records (their last known
 * status; times as "YYYY-MM-DDTHH:MM:SSZ"), merged with the server's own
 * tasks/list where a 2025-11-25 server offers it (capabilities.tasks.list;
 * its status wins; "listed" true).  It waits for the server like a call.
 * When the server's list cannot be read, *json still holds the records
 * and the status says why the list failed.
 * mcp_manager_get_task() sends one tasks/get: *json is the server's
 * answer (the task); the record, if any, is updated.
 * mcp_manager_cancel_task() sends tasks/cancel (cooperative: the task may
 * still complete; a 2025-11-25 answer updates the record).
 * mcp_manager_wait_task() takes task |task_id| up again (one tasks/get,
 * then as mcp_task_wait(): polls, answers input by the handlers, timeout
 * and cancel token send tasks/cancel) and returns its result as
 * mcp_manager_call_tool() would.
 * Ownership: *json and *result_json freed with mcp_free().  Threads: any.
 * Returns: MCP_OK; MCP_ENOTFOUND (no such server); MCP_ERPC (e.g. the
 *   server knows no such task); the errors of mcp_manager_request().
 */
MCP_EXTERN mcp_status mcp_manager_list_tasks(mcp_manager *m, const char *server,
                                             const mcp_call_options *opts, char **json,
                                             mcp_error *err);
MCP_EXTERN mcp_status mcp_manager_get_task(mcp_manager *m, const char *server, const char *task_id,
                                           const mcp_call_options *opts, char **json,
                                           mcp_error *err);
MCP_EXTERN mcp_status mcp_manager_cancel_task(mcp_manager *m, const char *server,
                                              const char *task_id, const mcp_call_options *opts,
                                              mcp_error *err);
MCP_EXTERN mcp_status mcp_manager_wait_task(mcp_manager *m, const char *server, const char *task_id,
                                            const mcp_call_options *opts, char **result_json,
                                            mcp_error *err);

/*
 * mcp_manager_diagnostics() returns what discovery had to say about the
 * config files, as a JSON array of {"level":"debug|info|warning|error",
 * "source","server","field","message","hidden"} (null where not applicable):
 * invalid entries, malformed files, hidden or disabled servers, shadowed
 * names.  "hidden" is true exactly on the note that "server" is left out
 * ("enabled": false or "disabledServers"; "source" is the file defining it),
 * so a program need not match the wording of "message".
 * Ownership: *json freed with mcp_free().  Threads: any.
 */
MCP_EXTERN mcp_status mcp_manager_diagnostics(mcp_manager *m, char **json, mcp_error *err);
/*
 * mcp_manager_config_files() returns the config files discovery read and
 * parsed, in priority order, as a JSON array of strings (a Claude Code
 * project entry as "~/.claude.json (project DIR)"); with the diagnostics,
 * a host can say which files it read when none of their servers is usable.
 * Ownership: *json freed with mcp_free().  Threads: any.
 */
MCP_EXTERN mcp_status mcp_manager_config_files(mcp_manager *m, char **json, mcp_error *err);

/*
 * mcp_manager_reconnect() closes |server| if it is open and connects it
 * again now, resetting its backoff and circuit breaker.
 * Returns: MCP_OK, MCP_ENOTFOUND, MCP_ESTATE (shutting down).
 */
MCP_EXTERN mcp_status mcp_manager_reconnect(mcp_manager *m, const char *server, mcp_error *err);

/* ------------------------------------------------------------------------ */
/* OAuth                                                                     */
/* ------------------------------------------------------------------------ */

/*
 * Authorization for Streamable HTTP servers (MCP 2025-11-25 authorization,
 * OAuth 2.1).  Attach an mcp_oauth_options to the client options with
 * mcp_client_options_set_oauth(); then a 401 from the server (or a 403
 * with error="insufficient_scope") makes the library discover the
 * authorization server (RFC 9728 protected resource metadata from the
 * WWW-Authenticate resource_metadata URL, else the well-known URLs; RFC
 * 8414 and OpenID discovery), register (pre-registered client id, else a
 * client ID metadata document URL when the server supports it, else
 * dynamic client registration), obtain a token (authorization code with
 * PKCE S256 and the RFC 8707 resource, client credentials, or the ID-JAG
 * exchange) and retry the request once with "Authorization: Bearer".  A
 * step-up (403 insufficient_scope) is tried at most twice per request.
 * Tokens are refreshed with a refresh token when one was issued, and kept
 * in the token store (none unless one is set).  Tokens never appear in log
 * lines or error messages.  An "Authorization" header added with
 * mcp_client_options_add_header() is sent until OAuth has a token, which
 * then replaces it.
 *
 * The flow runs on the transport's own auth thread, while the request that
 * met the 401 waits (its timeout keeps running: give connect a timeout
 * long enough for a person to log in).  Concurrent 401s share one flow.
 */
typedef struct mcp_oauth_options mcp_oauth_options;

typedef enum mcp_oauth_grant {
  MCP_OAUTH_GRANT_AUTHORIZATION_CODE = 0, /* a person logs in (default) */
  MCP_OAUTH_GRANT_CLIENT_CREDENTIALS = 1, /* machine to machine; needs a
                                             client id and a secret or key */
  MCP_OAUTH_GRANT_ID_JAG = 2,             /* SEP-990: IdP ID token exchanged
                                             for an ID-JAG, then a JWT bearer
                                             grant (mcp_oauth_options_set_id_jag) */
  MCP_OAUTH_GRANT_JWT_BEARER = 3          /* SEP-1933 workload identity: a
                                             host-supplied JWT as an RFC 7523
                                             grant (mcp_oauth_options_set_workload_jwt) */
} mcp_oauth_grant;

/* DPoP (RFC 9449, SEP-1932): sender-constrained tokens. */
typedef enum mcp_oauth_dpop {
  MCP_OAUTH_DPOP_AUTO = 0, /* when the authorization server lists ES256 in
                              dpop_signing_alg_values_supported (default) */
  MCP_OAUTH_DPOP_OFF = 1,  /* never: Bearer tokens only */
  MCP_OAUTH_DPOP_ON = 2    /* always send proofs to the token endpoint */
} mcp_oauth_dpop;

/*
 * A workload JWT source (SEP-1933): set *jwt to a malloc'ed JWT for the
 * authorization server |audience| (its issuer; the library frees it) and
 * return MCP_OK, or return an error (optionally filling |err|), which the
 * request fails with.  Called on the transport's auth thread, once per
 * token request; it may block (e.g. to ask a metadata service).
 */
typedef mcp_status (*mcp_oauth_jwt_fn)(void *user, const char *audience, char **jwt,
                                       mcp_error *err);

/*
 * The browser step of the authorization-code grant.  Open (or show)
 * |authorization_url|; when the authorization server redirects to
 * |redirect_uri|, return the whole URL it redirected to (with its code and
 * state) in *redirect_url, allocated with malloc (the library frees it).
 * Return a status other than MCP_OK (and optionally fill |err|) when the
 * person gave up; the request then fails with that status.
 * Runs on the transport's auth thread and may block; the client's close
 * waits for it to return.  While it runs, the timeouts of the requests
 * waiting for this authorization are stopped (a person may take minutes);
 * they get their whole timeout again when it returns.  Bound the wait
 * yourself (the CLI gives a person at most 10 minutes); cancelling a
 * waiting request's token still ends it at once.
 */
typedef mcp_status (*mcp_oauth_authorize_fn)(void *user, const char *authorization_url,
                                             const char *redirect_uri, char **redirect_url,
                                             mcp_error *err);

/*
 * Token store callbacks.  |key| names the MCP server (its canonical URL).
 * load: set *data to a malloc'ed copy of what save stored for |key| (the
 * library frees it) and return MCP_OK, or return MCP_ENOTFOUND.  save: keep
 * |data| (an opaque JSON text holding tokens and any dynamic registration:
 * secret material) for |key|.  Both run on the auth thread, or on the
 * thread connecting the client (load).
 */
typedef mcp_status (*mcp_oauth_store_load_fn)(void *user, const char *key, char **data);
typedef mcp_status (*mcp_oauth_store_save_fn)(void *user, const char *key, const char *data);

/*
 * mcp_oauth_options_new() / _free(): a new, empty set of OAuth options
 * (authorization-code grant, dynamic registration, redirect URI
 * http://127.0.0.1/callback, no store).  The setters copy their strings and
 * return MCP_OK, MCP_EINVAL (bad argument) or MCP_ENOMEM.
 * Threads: one thread at a time per options object.
 */
MCP_EXTERN mcp_oauth_options *mcp_oauth_options_new(void);
MCP_EXTERN void mcp_oauth_options_free(mcp_oauth_options *o);
/* A pre-registered client: |client_id| and optional |client_secret|. */
MCP_EXTERN mcp_status mcp_oauth_options_set_client(mcp_oauth_options *o, const char *client_id,
                                                   const char *client_secret);
/* The issuer (authorization server) the pre-registered client id belongs
 * to (SEP-2352): when the server's authorization server is another one,
 * the client id is not sent there and the request fails with MCP_ECONFIG
 * naming both issuers.  NULL (default): not checked. */
MCP_EXTERN mcp_status mcp_oauth_options_set_client_issuer(mcp_oauth_options *o, const char *issuer);
/* An https URL of this client's Client ID Metadata Document, used as the
 * client id when the authorization server advertises
 * client_id_metadata_document_supported. */
MCP_EXTERN mcp_status mcp_oauth_options_set_client_metadata_url(mcp_oauth_options *o,
                                                                const char *url);
/* client_name for dynamic registration (default "mcpconn"). */
MCP_EXTERN mcp_status mcp_oauth_options_set_client_name(mcp_oauth_options *o, const char *name);
MCP_EXTERN mcp_status mcp_oauth_options_set_redirect_uri(mcp_oauth_options *o, const char *uri);
/* Space-separated scopes asked for when the server's challenge names none
 * (the server's scopes_supported is used when this is unset). */
MCP_EXTERN mcp_status mcp_oauth_options_set_scopes(mcp_oauth_options *o, const char *scopes);
MCP_EXTERN mcp_status mcp_oauth_options_set_grant(mcp_oauth_options *o, mcp_oauth_grant grant);
/* private_key_jwt client authentication: a PEM private key and its JWS
 * algorithm ("ES256" default, "ES384", "RS256", "RS384", "RS512", "PS256",
 * "EdDSA"). */
MCP_EXTERN mcp_status mcp_oauth_options_set_private_key(mcp_oauth_options *o, const char *pem,
                                                        const char *alg);
/* For MCP_OAUTH_GRANT_ID_JAG: the IdP's token endpoint, the client id at the
 * IdP (may be NULL) and the person's ID token from the IdP. */
MCP_EXTERN mcp_status mcp_oauth_options_set_id_jag(mcp_oauth_options *o,
                                                   const char *idp_token_endpoint,
                                                   const char *idp_client_id, const char *id_token);
MCP_EXTERN void mcp_oauth_options_set_authorize(mcp_oauth_options *o, mcp_oauth_authorize_fn fn,
                                                void *user);
/*
 * DPoP (RFC 9449): with proofs, the token is bound to a P-256 key (ES256)
 * made for this client when it first needs one, and every request to the
 * token endpoint and to the MCP server carries a fresh proof (a
 * server-supplied DPoP-Nonce is honoured with one retry per request).  The
 * key is kept with the tokens, under the same protection: in the token
 * store when there is one (the file store's private 0600 file, or the
 * host's save callback), else in memory only.  Default MCP_OAUTH_DPOP_AUTO.
 */
MCP_EXTERN mcp_status mcp_oauth_options_set_dpop(mcp_oauth_options *o, mcp_oauth_dpop mode);
/*
 * Workload identity (SEP-1933, RFC 7523 section 2.1): the token comes from
 * a JWT the host's platform issued, exchanged at the token endpoint
 * (grant_type urn:ietf:params:oauth:grant-type:jwt-bearer).  Give the JWT
 * itself (|jwt|), or a file to read it from on every token request
 * (|jwt_file|, e.g. a projected service-account token; surrounding white
 * space is dropped), or with _callback() a function; the last one set
 * wins.  Each selects MCP_OAUTH_GRANT_JWT_BEARER.  A client id, when set,
 * goes with the request.  Before sending, an expired JWT (exp) or one whose
 * URL audience (aud) names neither the authorization server's issuer nor
 * its token endpoint fails with MCP_ECONFIG and a message naming the
 * cause; the JWT is never quoted in messages.
 * The callback's |user| must outlive every client using these options.
 */
MCP_EXTERN mcp_status mcp_oauth_options_set_workload_jwt(mcp_oauth_options *o, const char *jwt,
                                                         const char *jwt_file);
MCP_EXTERN void mcp_oauth_options_set_workload_jwt_callback(mcp_oauth_options *o,
                                                            mcp_oauth_jwt_fn fn, void *user);
/* Host token store (replaces a file store); |user| is passed to both. */
MCP_EXTERN void mcp_oauth_options_set_store(mcp_oauth_options *o, mcp_oauth_store_load_fn load,
                                            mcp_oauth_store_save_fn save, void *user);
/*
 * The default file store: one file per server (mode 0600, written
 * atomically) in |dir| (created 0700), or with |dir| NULL in
 * $XDG_DATA_HOME/mcpconn/oauth (default ~/.local/share/mcpconn/oauth).
 * An existing directory or token file that is not private (a symbolic
 * link, another owner, group- or other-writable; a file that is not a
 * regular file) is refused: connecting fails with MCP_EIO and a message
 * naming the path.
 */
MCP_EXTERN mcp_status mcp_oauth_options_set_file_store(mcp_oauth_options *o, const char *dir);

/*
 * mcp_client_options_set_oauth() enables OAuth for the HTTP server of |o|
 * with a copy of |oauth| (NULL turns it off).  Callback pointers are copied
 * as they are: their |user| data must outlive every client connected with
 * these options.  Returns MCP_OK, MCP_EINVAL, MCP_ENOMEM.
 * Threads: one thread at a time per options object.
 */
MCP_EXTERN mcp_status mcp_client_options_set_oauth(mcp_client_options *o,
                                                   const mcp_oauth_options *oauth);

/*
 * mcp_manager_options_set_oauth() gives every HTTP server of the manager
 * OAuth, with a copy of |defaults| (NULL: none) under what the server sets
 * itself (a configuration file's "oauth" object, or the client options of
 * mcp_manager_options_add_server()): typically the authorize callback and
 * the token store.  Returns MCP_OK, MCP_EINVAL, MCP_ENOMEM.
 * Threads: one thread at a time per options object.
 */
MCP_EXTERN mcp_status mcp_manager_options_set_oauth(mcp_manager_options *o,
                                                    const mcp_oauth_options *defaults);

#ifdef __cplusplus
}
#endif

#endif /* MCPCONN_H */
