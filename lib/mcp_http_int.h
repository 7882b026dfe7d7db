/* SPDX-License-Identifier: MIT */
/*
 * mcp_http_int.h: the structures the HTTP connection layer's files share:
 * a request (mcp_http_req), a connection (mcp_http_conn), and the
 * functions mcp_http.c offers to its protocol glue (mcp_h2.c for HTTP/2,
 * mcp_h1_conn.c for HTTP/1.1) to hand response events to a request, to
 * queue bytes on a connection and to close or drop it.  Never installed;
 * not used outside mcp_http.c, mcp_h2.c, mcp_h1_conn.c and the tests.
 *
 * Threads: every field below that is not marked otherwise belongs to the
 * client's I/O thread.  Requests are built on the submitting thread and
 * handed over through the client's command queue; from then on only the
 * I/O thread touches them.
 */
#ifndef MCP_HTTP_INT_H
#define MCP_HTTP_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcp_h1.h"
#include "mcp_http.h"
#include "mcp_tls.h"

typedef struct mcp_http_req mcp_http_req;
typedef struct mcp_http_conn mcp_http_conn;
typedef struct mcp_h2 mcp_h2;

/* Where a request is. */
typedef enum mcp_http_req_state {
  MCP_HTTP_REQ_QUEUED = 0, /* in the command queue (submitting thread) */
  MCP_HTTP_REQ_PENDING,    /* waiting for a connection or a stream slot */
  MCP_HTTP_REQ_ACTIVE      /* sent (or being sent) on |conn| */
} mcp_http_req_state;

/* One response header field, both strings owned. */
typedef struct mcp_http_field {
  char *name;
  char *value;
} mcp_http_field;

struct mcp_http_req {
  /* Immutable after submit. */
  uint64_t id; /* 1, 2, ... per client, in submission order */
  mcp_http_client *client;
  char *method;
  char *path;               /* path and query */
  mcp_http_header *headers; /* names lower-cased; strings in |strings| */
  size_t nheaders;
  char *strings; /* one block holding every header string */
  char *body;    /* NULL when there is none */
  size_t body_len;
  mcp_http_callbacks cb;
  void *user;

  /* I/O thread only. */
  mcp_http_req_state state;
  mcp_http_req *prev, *next; /* in the pending list or |conn|'s list */
  mcp_http_conn *conn;       /* when ACTIVE */
  int32_t stream_id;         /* HTTP/2, when ACTIVE; 0 before */
  size_t body_off;           /* body bytes handed to the protocol so far */
  int retries;               /* times re-queued after a refusal */
  bool sent;                 /* the request head was serialised */
  bool early;                /* HTTP/2: opened before the server's SETTINGS */
  bool head_done;            /* on_headers has run: never retried after */
  bool got_bytes;            /* some response byte arrived */
  /* Did the server get it?  |on_wire|: some byte of this attempt may have
   * reached the server (HTTP/1.1: a write of it succeeded; HTTP/2: its
   * HEADERS frame was serialised).  |refused|: the server said it did not
   * process this attempt (REFUSED_STREAM, above GOAWAY's last-stream-id).
   * |maybe_delivered|: an earlier attempt may have been processed.  A
   * request that fails with none of the three is reported as not sent. */
  bool on_wire;
  bool refused;
  bool maybe_delivered;
  /* The response head being collected (HTTP/2; HTTP/1.1 uses mcp_h1). */
  mcp_http_field *rh;
  size_t nrh, caprh;
  size_t rh_bytes; /* names + values + 4 per field, against the cap */
  int status;
};

/* Connection states, in order. */
typedef enum mcp_http_conn_state {
  MCP_HTTP_CONN_RESOLVING = 0,
  MCP_HTTP_CONN_CONNECTING,
  MCP_HTTP_CONN_HANDSHAKE,
  MCP_HTTP_CONN_READY,
  MCP_HTTP_CONN_CLOSED
} mcp_http_conn_state;

typedef enum mcp_http_proto {
  MCP_HTTP_PROTO_NONE = 0,
  MCP_HTTP_PROTO_H1,
  MCP_HTTP_PROTO_H2
} mcp_http_proto;

struct mcp_http_resolver;

struct mcp_http_conn {
  mcp_http_client *client;
  mcp_http_conn *prev, *next; /* in the client's connection list */
  uint64_t serial;            /* 1, 2, ... per client, for logs and tests */
  mcp_http_conn_state state;
  mcp_http_proto proto; /* known once READY */
  int fd;               /* -1 before the socket exists */
  mcp_tls *tls;         /* NULL for cleartext */

  /* Connecting. */
  struct mcp_http_resolver *resolver; /* while RESOLVING */
  struct addrinfo *ai_list;           /* owned; the candidate addresses */
  struct addrinfo *ai_next;           /* the next one to try */
  int last_errno;                     /* of the last failed address */
  char last_addr[64];                 /* text of the last address tried */
  int64_t deadline;                   /* ms, CLOCK_MONOTONIC: TCP + TLS must finish by then */
  int64_t started;                    /* ms, CLOCK_MONOTONIC: when the attempt began */

  /* Output waiting for the socket: out[out_off .. out_len). */
  char *out;
  size_t out_off, out_len, out_cap;
  bool want_pollout;     /* a write is blocked until the socket drains */
  bool read_wants_write; /* TLS: a read must first write (poll POLLOUT) */
  bool read_again;       /* stopped reading early: poll with timeout 0 */

  /* Requests on this connection (ACTIVE), in submission order. */
  mcp_http_req *reqs_head, *reqs_tail;
  size_t nreqs;

  /* HTTP/2. */
  mcp_h2 *h2;

  /* HTTP/1.1. */
  mcp_h1 *h1;
  size_t h1_served;  /* responses completed on this connection */
  bool h1_keepalive; /* the last response allowed reuse */
};

/* ---- services of mcp_http.c to the protocol glue ---------------------- */
/*
 * Threads: every function below runs on the client's I/O thread only, with
 * no lock held; those that deliver to a request run the caller's callback
 * before they return.
 */

/*
 * mcp__http_conn_queue() appends |n| bytes to |c|'s output, to be written
 * when the socket allows.
 * Ownership: |data| is copied.
 * Returns: MCP_OK or MCP_ENOMEM (nothing appended).
 */
mcp_status mcp__http_conn_queue(mcp_http_conn *c, const void *data, size_t n);

/* mcp__http_conn_queued() returns the bytes of |c|'s output not yet
 * written. */
size_t mcp__http_conn_queued(const mcp_http_conn *c);

/* The client configuration the glue needs; the strings are borrowed from
 * the client and live as long as it does. */
size_t mcp__http_conn_max_header_bytes(const mcp_http_conn *c);
const char *mcp__http_conn_scheme(const mcp_http_conn *c);
const char *mcp__http_conn_authority(const mcp_http_conn *c);

/*
 * mcp__http_conn_attach() links |req| (taken off the pending list) to |c|
 * as ACTIVE, at the tail of its list.
 * Ownership: |c| holds |req| until it is finished or retried.
 */
void mcp__http_conn_attach(mcp_http_conn *c, mcp_http_req *req);

/*
 * mcp__http_req_head() delivers the final response head collected in |req|
 * (req->status and the fields added with mcp__http_req_add_field) to the
 * caller's on_headers, then drops the fields.
 * Ownership: the field strings are freed after on_headers returns.
 */
void mcp__http_req_head(mcp_http_req *req);

/*
 * mcp__http_req_deliver_head() delivers a final response head given as
 * |n| fields (names in lower case) to the caller's on_headers (HTTP/1.1
 * glue, whose parser collects the head itself).
 * Ownership: |hdrs| is borrowed for the call.
 */
void mcp__http_req_deliver_head(mcp_http_req *req, int status, const mcp_http_header *hdrs,
                                size_t n);

/*
 * mcp__http_req_data() delivers |n| body bytes to on_data.
 * Ownership: |data| is borrowed for the call.
 */
void mcp__http_req_data(mcp_http_req *req, const char *data, size_t n);

/*
 * mcp__http_req_finish() ends |req|: unlinks it from its connection (or the
 * pending list), runs on_done with |status| and |msg| (NULL: the status'
 * text) and frees it.
 * Ownership: |req| is freed on return; |msg| is borrowed for the call.
 */
void mcp__http_req_finish(mcp_http_req *req, mcp_status status, const char *msg);

/*
 * mcp__http_req_refused() records that the server provably did not process
 * |req| (REFUSED_STREAM, a stream above GOAWAY's last-stream-id), before
 * mcp__http_req_retry() or mcp__http_req_finish().
 */
void mcp__http_req_refused(mcp_http_req *req);

/*
 * mcp__http_req_retry() unlinks |req| from its connection and puts it back
 * into the pending list, in submission order, to be sent again (on the
 * first connection able to take it), provided it has a retry left, no
 * response head reached the caller, and either the server cannot have
 * processed it (not on the wire, or refused) or its method is idempotent
 * (RFC 9110 9.2.2); otherwise it finishes |req| with MCP_EIO and |msg|
 * (MCP_ECLOSED once the client is closing).  A request
 * has one retry; |free_retry| re-queues it without using that one (a
 * refusal caused by our own optimism, such as streams opened before the
 * server's SETTINGS said how many it takes).
 * Ownership: either way |req| no longer belongs to the connection.
 */
void mcp__http_req_retry(mcp_http_req *req, const char *msg, bool free_retry);

/*
 * mcp__http_req_add_field() adds one response field to the head being
 * collected in |req| (HTTP/2 glue), counting it against max_header_bytes.
 * Ownership: |name| and |value| are copied.
 * Returns: MCP_OK, MCP_EPROTO (the head exceeds the cap), MCP_ENOMEM.
 */
mcp_status mcp__http_req_add_field(mcp_http_req *req, const char *name, size_t namelen,
                                   const char *value, size_t valuelen);

/*
 * mcp__http_conn_drop() drops |c| (READY): it is marked CLOSED, its socket
 * closed, and its requests are failed with |status| and |msg| or retried
 * by the protocol's rules (mcp__h2_conn_lost, mcp__h1_conn_lost).  Does
 * nothing when |c| is already CLOSED.  The loop frees |c| later.
 */
void mcp__http_conn_drop(mcp_http_conn *c, mcp_status status, const char *msg);

/* mcp__http_conn_close_quiet() marks |c| CLOSED and closes its socket
 * without failing anything: for a connection no request is on. */
void mcp__http_conn_close_quiet(mcp_http_conn *c);

/* mcp__http_req_clear_fields() drops the collected fields (after a 1xx
 * head, or once delivered). */
void mcp__http_req_clear_fields(mcp_http_req *req);

#endif /* MCP_HTTP_INT_H */
