/* SPDX-License-Identifier: MIT */
/*
 * mcp_h1.c: HTTP/1.1 response parser (client side) and request serialiser.
 *
 * Owns: the head of the response being read (one buffer, with the fields
 * parsed in place) and the trailer line being read.  Pure: bytes in,
 * callbacks out.
 * Must not know about: sockets, TLS, SSE, JSON, MCP.
 *
 * States.  S_HEAD collects the status line and the field lines into |head|,
 * one line at a time; each line is checked as soon as its LF arrives, and
 * its name and value are cut out in place (NULs written over ":" and the
 * line ending) and remembered as offsets, since |head| may move while it
 * grows.  The blank line ends the head: interim 1xx responses are dropped
 * and the parser starts over; a final one picks its body framing and goes
 * to S_BODY_LENGTH, S_BODY_CLOSE or the chunked states.  A body of known
 * length 0 is S_BODY_LENGTH with nothing remaining, which completes the
 * response on the next turn of the feed loop even without input; that is
 * how a stop requested from on_headers can be resumed.  Errors move to
 * S_ERROR, which sticks: after a framing error nothing later on the
 * connection can be trusted.
 */
#include "config.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "mcp_h1.h"

/* The longest chunk-size line (size plus extensions) accepted. */
#define H1_MAX_CHUNK_LINE ((size_t)4096)

typedef enum h1_state {
  S_HEAD,          /* status line and fields, into |head| */
  S_BODY_LENGTH,   /* Content-Length body: |remaining| bytes to go */
  S_BODY_CLOSE,    /* body delimited by the end of the connection */
  S_CHUNK_SIZE,    /* hex digits of a chunk size */
  S_CHUNK_EXT,     /* a chunk extension, ignored to the end of the line */
  S_CHUNK_SIZE_LF, /* CR seen at the end of the chunk-size line */
  S_CHUNK_DATA,    /* |remaining| bytes of chunk data to go */
  S_CHUNK_DATA_CR, /* the CRLF after chunk data */
  S_CHUNK_DATA_LF,
  S_TRAILER, /* trailer lines, into |tline|; dropped */
  S_DONE,    /* the connection's last response has completed */
  S_ERROR    /* sticky; |err| and |errmsg| say why */
} h1_state;

/* A field of the head, as offsets into |head| (which may move). */
typedef struct field_off {
  size_t name;
  size_t value;
} field_off;

struct mcp_h1 {
  mcp_h1_callbacks cb;
  void *user;
  size_t max_head;    /* bytes of a head, and of a trailer section */
  size_t max_headers; /* fields of a head, and of a trailer section */

  h1_state st;
  bool head_req;  /* the response being read answers a HEAD request */
  bool expecting; /* mcp__h1_begin() was called; no response completed yet */

  /* S_HEAD.  |head| holds the lines read so far, the current one from
   * |line_start|; |head_bytes| counts every byte of the head, including
   * blank lines skipped before the status line. */
  mcp_buf head;
  size_t line_start;
  size_t head_bytes;
  bool have_status;
  int status;
  int minor;         /* HTTP/1.<minor> */
  size_t reason_off; /* offset of the reason phrase in |head| */
  field_off *offs;
  size_t noffs, cap_offs;
  mcp_h1_header *hdrs; /* built from |offs| when the head is complete */
  size_t cap_hdrs;

  bool keep_alive;    /* of the current response, decided from its head */
  uint64_t remaining; /* S_BODY_LENGTH, S_CHUNK_DATA: bytes to go */
  uint64_t chunk_size;
  size_t chunk_digits;
  size_t chunk_line; /* bytes of the chunk-size line so far */
  mcp_buf tline;     /* S_TRAILER: the current trailer line */
  size_t trailer_bytes;
  size_t ntrailers;

  size_t consumed;
  int err;
  char errmsg[128];
};

/* ---- character classes ---------------------------------------------------- */

/* tchar (RFC 9110 section 5.6.2). */
static bool is_tchar(unsigned char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return c != 0 && strchr("!#$%&'*+-.^_`|~", (char)c) != NULL;
}

/* field-vchar, SP or HTAB: what may appear inside a field value (and a
 * reason phrase). */
static bool is_field_char(unsigned char c) { return c == '\t' || (c >= 0x20 && c != 0x7f); }

static bool is_ows(char c) { return c == ' ' || c == '\t'; }

static int hex_val(unsigned char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* ---- lifecycle ----------------------------------------------------------------- */

static int fail(mcp_h1 *p, int status, const char *fmt, ...) MCP_PRINTF(3, 4);

static int fail(mcp_h1 *p, int status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(p->errmsg, sizeof(p->errmsg), fmt, ap);
  va_end(ap);
  p->err = status;
  p->st = S_ERROR;
  return status;
}

/* Forgets the head of the current response (keeping the buffers). */
static void clear_head(mcp_h1 *p) {
  p->head.len = 0;
  if (p->head.data) p->head.data[0] = '\0';
  p->line_start = 0;
  p->head_bytes = 0;
  p->have_status = false;
  p->status = 0;
  p->minor = 0;
  p->reason_off = 0;
  p->noffs = 0;
}

/* Returns to the start of a response, giving back memory that one unusual
 * response made large. */
static void clear_message(mcp_h1 *p) {
  clear_head(p);
  if (p->head.cap > 2 * MCP_H1_DEFAULT_MAX_HEAD) mcp__buf_free(&p->head);
  if (p->tline.cap > 4096) mcp__buf_free(&p->tline);
  p->tline.len = 0;
  p->keep_alive = false;
  p->remaining = 0;
  p->chunk_size = 0;
  p->chunk_digits = 0;
  p->chunk_line = 0;
  p->trailer_bytes = 0;
  p->ntrailers = 0;
}

mcp_h1 *mcp__h1_new(size_t max_head, size_t max_headers, const mcp_h1_callbacks *cb, void *user) {
  mcp_h1 *p = mcp__calloc(1, sizeof(*p));
  if (!p) return NULL;
  if (cb) p->cb = *cb;
  p->user = user;
  p->max_head = max_head ? max_head : MCP_H1_DEFAULT_MAX_HEAD;
  p->max_headers = max_headers ? max_headers : MCP_H1_DEFAULT_MAX_HEADERS;
  mcp__buf_init(&p->head);
  mcp__buf_init(&p->tline);
  p->st = S_HEAD;
  return p;
}

void mcp__h1_free(mcp_h1 *p) {
  if (!p) return;
  mcp__buf_free(&p->head);
  mcp__buf_free(&p->tline);
  mcp__free(p->offs);
  mcp__free(p->hdrs);
  mcp__free(p);
}

void mcp__h1_reset(mcp_h1 *p) {
  clear_message(p);
  p->st = S_HEAD;
  p->head_req = false;
  p->expecting = false;
  p->err = MCP_OK;
  p->errmsg[0] = '\0';
  p->consumed = 0;
}

void mcp__h1_begin(mcp_h1 *p, bool head_request) {
  p->head_req = head_request;
  p->expecting = true;
}

size_t mcp__h1_consumed(const mcp_h1 *p) { return p->consumed; }

const char *mcp__h1_error(const mcp_h1 *p) { return p->errmsg; }

const char *mcp__h1_reason(const mcp_h1 *p) {
  if (!p->have_status || !p->head.data) return "";
  return p->head.data + p->reason_off;
}

const char *mcp__h1_header_find(const mcp_h1_header *hdrs, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (strcasecmp(hdrs[i].name, name) == 0) return hdrs[i].value;
  return NULL;
}

/* ---- head ---------------------------------------------------------------------- */

/* Parses the status line |s| (NUL-terminated, without its line ending). */
static int parse_status_line(mcp_h1 *p, char *s, size_t len) {
  /* HTTP-version SP 3DIGIT [ SP reason-phrase ] (RFC 9112 section 4); the
   * SP before an empty reason is often missing, so it is optional. */
  if (len < 12 || memcmp(s, "HTTP/", 5) != 0 || s[6] != '.' || s[5] < '0' || s[5] > '9' ||
      s[7] < '0' || s[7] > '9' || s[8] != ' ')
    return fail(p, MCP_EPROTO, "malformed HTTP status line");
  if (s[5] != '1') return fail(p, MCP_EPROTO, "unsupported HTTP version %.8s", s);
  if (s[9] < '1' || s[9] > '5' || s[10] < '0' || s[10] > '9' || s[11] < '0' || s[11] > '9')
    return fail(p, MCP_EPROTO, "malformed HTTP status code");
  if (len > 12 && s[12] != ' ') return fail(p, MCP_EPROTO, "malformed HTTP status line");
  for (size_t i = 13; i < len; i++)
    if (!is_field_char((unsigned char)s[i]))
      return fail(p, MCP_EPROTO, "control character in HTTP reason phrase");
  p->minor = s[7] - '0';
  p->status = (s[9] - '0') * 100 + (s[10] - '0') * 10 + (s[11] - '0');
  p->reason_off = (size_t)(s - p->head.data) + (len > 12 ? 13 : 12);
  p->have_status = true;
  return MCP_OK;
}

/*
 * Checks the field line |s| (|len| bytes, no line ending; s[len] is
 * writable) and cuts it in place: NUL after the name and after the value.
 * Sets *name_len and *value_at (offset of the value from |s|).
 */
static int parse_field_line(mcp_h1 *p, char *s, size_t len, size_t *value_at, const char *what) {
  if (is_ows(s[0])) return fail(p, MCP_EPROTO, "obsolete line folding in %s", what);
  size_t i = 0;
  while (i < len && is_tchar((unsigned char)s[i])) i++;
  if (i == len || s[i] != ':') {
    if (i < len && is_ows(s[i])) return fail(p, MCP_EPROTO, "white space before ':' in %s", what);
    return fail(p, MCP_EPROTO, "malformed %s", what);
  }
  if (i == 0) return fail(p, MCP_EPROTO, "empty field name in %s", what);
  s[i] = '\0';
  size_t v = i + 1;
  while (v < len && is_ows(s[v])) v++;
  size_t e = len;
  while (e > v && is_ows(s[e - 1])) e--;
  for (size_t k = v; k < e; k++)
    if (!is_field_char((unsigned char)s[k]))
      return fail(p, MCP_EPROTO, "control character in %s value", what);
  s[e] = '\0';
  *value_at = v;
  return MCP_OK;
}

/* Calls |fn| for each non-empty member of the comma-separated list |v|,
 * trimmed of white space; stops at the first non-zero result. */
static int each_member(const char *v, int (*fn)(void *, const char *, size_t), void *arg) {
  while (*v) {
    size_t n = strcspn(v, ",");
    size_t a = 0, b = n;
    while (a < b && is_ows(v[a])) a++;
    while (b > a && is_ows(v[b - 1])) b--;
    if (b > a) {
      int rc = fn(arg, v + a, b - a);
      if (rc) return rc;
    }
    v += n;
    if (*v == ',') v++;
  }
  return 0;
}

typedef struct conn_opts {
  bool close;
  bool keep_alive;
} conn_opts;

static int connection_member(void *arg, const char *m, size_t n) {
  conn_opts *c = arg;
  if (n == 5 && strncasecmp(m, "close", 5) == 0) c->close = true;
  if (n == 10 && strncasecmp(m, "keep-alive", 10) == 0) c->keep_alive = true;
  return 0;
}

typedef struct te_state {
  int chunked;     /* times "chunked" was seen */
  const char *bad; /* the first other coding */
  size_t bad_len;
} te_state;

static int te_member(void *arg, const char *m, size_t n) {
  te_state *t = arg;
  if (n == 7 && strncasecmp(m, "chunked", 7) == 0) {
    t->chunked++;
    return 0;
  }
  t->bad = m;
  t->bad_len = n;
  return 1;
}

typedef struct cl_state {
  bool have;
  uint64_t value;
  bool bad;
  bool conflict;
} cl_state;

static int cl_member(void *arg, const char *m, size_t n) {
  cl_state *c = arg;
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    if (m[i] < '0' || m[i] > '9' || v > (UINT64_MAX - 9) / 10) {
      c->bad = true;
      return 1;
    }
    v = v * 10 + (uint64_t)(m[i] - '0');
  }
  if (c->have && c->value != v) {
    c->conflict = true;
    return 1;
  }
  c->have = true;
  c->value = v;
  return 0;
}

/* The blank line after the fields: decide the framing and report. */
static int head_done(mcp_h1 *p, bool *stop) {
  int status = p->status;

  if (status < 200) {
    if (status == 101) return fail(p, MCP_EPROTO, "unexpected 101 Switching Protocols");
    /* An interim response: its fields mean nothing to us. */
    clear_head(p);
    return MCP_OK;
  }

  if (p->cap_hdrs < p->noffs) {
    mcp_h1_header *h = mcp__reallocarray(p->hdrs, p->noffs, sizeof(*h));
    if (!h) return fail(p, MCP_ENOMEM, "out of memory");
    p->hdrs = h;
    p->cap_hdrs = p->noffs;
  }
  for (size_t i = 0; i < p->noffs; i++) {
    p->hdrs[i].name = p->head.data + p->offs[i].name;
    p->hdrs[i].value = p->head.data + p->offs[i].value;
  }

  conn_opts conn = {false, false};
  te_state te = {0, NULL, 0};
  cl_state cl = {false, 0, false, false};
  bool have_te = false, have_cl = false;
  for (size_t i = 0; i < p->noffs; i++) {
    const char *name = p->hdrs[i].name;
    const char *value = p->hdrs[i].value;
    if (strcasecmp(name, "connection") == 0) {
      each_member(value, connection_member, &conn);
    } else if (strcasecmp(name, "transfer-encoding") == 0) {
      have_te = true;
      if (!te.bad) each_member(value, te_member, &te);
    } else if (strcasecmp(name, "content-length") == 0) {
      have_cl = true;
      if (!*value) cl.bad = true;
      if (!cl.bad && !cl.conflict) each_member(value, cl_member, &cl);
    }
  }
  p->keep_alive = p->minor >= 1 ? !conn.close : conn.keep_alive && !conn.close;

  if (p->head_req || status == 204 || status == 304) {
    /* No body, whatever the fields say (RFC 9112 section 6.3, rule 1). */
    p->st = S_BODY_LENGTH;
    p->remaining = 0;
  } else if (have_te) {
    if (te.bad)
      return fail(p, MCP_EPROTO, "unsupported transfer coding \"%.*s\"",
                  (int)(te.bad_len > 32 ? 32 : te.bad_len), te.bad);
    if (te.chunked != 1)
      return fail(p, MCP_EPROTO, "%s Transfer-Encoding",
                  te.chunked ? "chunked applied twice in" : "empty");
    /* Transfer-Encoding wins over Content-Length, but such a message, or
     * one from an HTTP/1.0 peer, may be an attempt at request smuggling:
     * the connection is not reused (RFC 9112 section 6.1). */
    if (have_cl || p->minor == 0) p->keep_alive = false;
    p->st = S_CHUNK_SIZE;
  } else if (have_cl) {
    if (cl.bad) return fail(p, MCP_EPROTO, "malformed Content-Length");
    if (cl.conflict) return fail(p, MCP_EPROTO, "conflicting Content-Length values");
    p->st = S_BODY_LENGTH;
    p->remaining = cl.value;
  } else {
    p->st = S_BODY_CLOSE;
    p->keep_alive = false;
  }

  if (p->cb.on_headers && p->cb.on_headers(p->user, status, p->hdrs, p->noffs) != 0) *stop = true;
  return MCP_OK;
}

/* A complete line of the head at head.data[line_start, head.len), its LF
 * included. */
static int head_line(mcp_h1 *p, bool *stop) {
  char *s = p->head.data + p->line_start;
  size_t len = p->head.len - p->line_start - 1; /* without the LF */
  if (len > 0 && s[len - 1] == '\r') len--;
  s[len] = '\0';

  if (!p->have_status) {
    if (len == 0) {
      /* Blank lines before the status line are tolerated (RFC 9112
       * section 2.2); they are not kept. */
      p->head.len = p->line_start;
      return MCP_OK;
    }
    int rc = parse_status_line(p, s, len);
    p->line_start = p->head.len;
    return rc;
  }
  if (len == 0) return head_done(p, stop);

  if (p->noffs == p->max_headers)
    return fail(p, MCP_ETOOBIG, "more than %zu header fields", p->max_headers);
  size_t value_at;
  int rc = parse_field_line(p, s, len, &value_at, "header field");
  if (rc != MCP_OK) return rc;
  if (p->noffs == p->cap_offs) {
    size_t cap = p->cap_offs ? p->cap_offs * 2 : 16;
    if (cap > p->max_headers) cap = p->max_headers;
    field_off *o = mcp__reallocarray(p->offs, cap, sizeof(*o));
    if (!o) return fail(p, MCP_ENOMEM, "out of memory");
    p->offs = o;
    p->cap_offs = cap;
  }
  p->offs[p->noffs].name = p->line_start;
  p->offs[p->noffs].value = p->line_start + value_at;
  p->noffs++;
  p->line_start = p->head.len;
  return MCP_OK;
}

/* A complete trailer line in |tline| (LF included). */
static int trailer_line(mcp_h1 *p, bool *done) {
  char *s = p->tline.data;
  size_t len = p->tline.len - 1;
  if (len > 0 && s[len - 1] == '\r') len--;
  s[len] = '\0';
  p->tline.len = 0;
  if (len == 0) {
    *done = true;
    return MCP_OK;
  }
  if (++p->ntrailers > p->max_headers)
    return fail(p, MCP_ETOOBIG, "more than %zu trailer fields", p->max_headers);
  size_t value_at;
  return parse_field_line(p, s, len, &value_at, "trailer field");
}

/* ---- body ------------------------------------------------------------------ */

/* The response is complete.  Returns non-zero when on_complete asks to
 * stop. */
static int complete(mcp_h1 *p) {
  bool ka = p->keep_alive;
  p->st = ka ? S_HEAD : S_DONE;
  /* Cleared before the callback, which may already begin the next
   * request; the head stays readable until the callback returns. */
  p->head_req = false;
  p->expecting = false;
  int stop = p->cb.on_complete ? p->cb.on_complete(p->user, ka) : 0;
  clear_message(p);
  return stop;
}

static int body(mcp_h1 *p, const char *s, size_t n) {
  if (n == 0 || !p->cb.on_body) return 0;
  return p->cb.on_body(p->user, s, n);
}

/* A chunk-size line has ended. */
static void chunk_line_done(mcp_h1 *p) {
  if (p->chunk_size == 0) {
    p->st = S_TRAILER;
    p->tline.len = 0;
    p->trailer_bytes = 0;
    p->ntrailers = 0;
  } else {
    p->st = S_CHUNK_DATA;
    p->remaining = p->chunk_size;
  }
  p->chunk_size = 0;
  p->chunk_digits = 0;
  p->chunk_line = 0;
}

int mcp__h1_feed(mcp_h1 *p, const char *data, size_t n) {
  size_t i = 0;
  int rc = MCP_OK;
  bool stop = false;

  p->consumed = 0;
  if (p->st == S_ERROR) return p->err;

  for (;;) {
    if (p->st == S_BODY_LENGTH && p->remaining == 0) {
      if (complete(p)) {
        stop = true;
        break;
      }
      continue;
    }
    if (i == n) break;
    const char *s = data + i;
    size_t left = n - i;
    unsigned char c = (unsigned char)*s;

    switch (p->st) {
    case S_HEAD: {
      const char *lf = memchr(s, '\n', left);
      size_t take = lf ? (size_t)(lf - s) + 1 : left;
      if (take > p->max_head - p->head_bytes) {
        rc = fail(p, MCP_ETOOBIG, "response head larger than %zu bytes", p->max_head);
        break;
      }
      if (mcp__buf_append(&p->head, s, take) != MCP_OK) {
        rc = fail(p, MCP_ENOMEM, "out of memory");
        break;
      }
      p->head_bytes += take;
      i += take;
      if (lf) rc = head_line(p, &stop);
      break;
    }
    case S_BODY_LENGTH: {
      size_t take = left < p->remaining ? left : (size_t)p->remaining;
      p->remaining -= take;
      i += take;
      stop = body(p, s, take) != 0;
      break;
    }
    case S_BODY_CLOSE:
      i = n;
      stop = body(p, s, left) != 0;
      break;
    case S_CHUNK_SIZE: {
      int h = hex_val(c);
      if (++p->chunk_line > H1_MAX_CHUNK_LINE) {
        rc = fail(p, MCP_EPROTO, "chunk-size line too long");
        break;
      }
      i++;
      if (h >= 0) {
        if (p->chunk_size > (UINT64_MAX >> 4)) {
          rc = fail(p, MCP_EPROTO, "chunk size too large");
          break;
        }
        p->chunk_size = p->chunk_size << 4 | (uint64_t)h;
        p->chunk_digits++;
      } else if (p->chunk_digits == 0) {
        rc = fail(p, MCP_EPROTO, "malformed chunk size");
      } else if (c == ';' || c == ' ' || c == '\t') {
        /* Extensions (after optional white space) carry nothing we use. */
        p->st = S_CHUNK_EXT;
      } else if (c == '\r') {
        p->st = S_CHUNK_SIZE_LF;
      } else if (c == '\n') {
        chunk_line_done(p);
      } else {
        rc = fail(p, MCP_EPROTO, "malformed chunk size");
      }
      break;
    }
    case S_CHUNK_EXT: {
      /* Skip a run of extension bytes at once. */
      size_t k = 0;
      while (k < left && s[k] != '\r' && s[k] != '\n' && is_field_char((unsigned char)s[k])) k++;
      if (k > H1_MAX_CHUNK_LINE - p->chunk_line) {
        rc = fail(p, MCP_EPROTO, "chunk-size line too long");
        break;
      }
      p->chunk_line += k;
      i += k;
      if (k == left) break;
      c = (unsigned char)s[k];
      i++;
      if (c == '\r') {
        p->st = S_CHUNK_SIZE_LF;
      } else if (c == '\n') {
        chunk_line_done(p);
      } else {
        rc = fail(p, MCP_EPROTO, "control character in chunk extension");
      }
      break;
    }
    case S_CHUNK_SIZE_LF:
      i++;
      if (c == '\n') chunk_line_done(p);
      else rc = fail(p, MCP_EPROTO, "bare CR in chunk-size line");
      break;
    case S_CHUNK_DATA: {
      size_t take = left < p->remaining ? left : (size_t)p->remaining;
      p->remaining -= take;
      i += take;
      if (p->remaining == 0) p->st = S_CHUNK_DATA_CR;
      stop = body(p, s, take) != 0;
      break;
    }
    case S_CHUNK_DATA_CR:
      i++;
      if (c == '\r') p->st = S_CHUNK_DATA_LF;
      else if (c == '\n') p->st = S_CHUNK_SIZE;
      else rc = fail(p, MCP_EPROTO, "chunk data longer than its size");
      break;
    case S_CHUNK_DATA_LF:
      i++;
      if (c == '\n') p->st = S_CHUNK_SIZE;
      else rc = fail(p, MCP_EPROTO, "bare CR after chunk data");
      break;
    case S_TRAILER: {
      const char *lf = memchr(s, '\n', left);
      size_t take = lf ? (size_t)(lf - s) + 1 : left;
      if (take > p->max_head - p->trailer_bytes) {
        rc = fail(p, MCP_ETOOBIG, "trailer section larger than %zu bytes", p->max_head);
        break;
      }
      if (mcp__buf_append(&p->tline, s, take) != MCP_OK) {
        rc = fail(p, MCP_ENOMEM, "out of memory");
        break;
      }
      p->trailer_bytes += take;
      i += take;
      if (lf) {
        bool done = false;
        rc = trailer_line(p, &done);
        if (rc == MCP_OK && done && complete(p)) stop = true;
      }
      break;
    }
    case S_DONE:
      rc = fail(p, MCP_EPROTO, "data after the last response of a closing connection");
      break;
    case S_ERROR: rc = p->err; break;
    }
    if (rc != MCP_OK || stop) break;
  }
  p->consumed = i;
  if (rc != MCP_OK) return rc;
  return stop ? MCP__EAGAIN : MCP_OK;
}

int mcp__h1_eof(mcp_h1 *p) {
  switch (p->st) {
  case S_ERROR: return p->err;
  case S_DONE: return MCP_OK;
  case S_BODY_CLOSE:
    p->keep_alive = false;
    complete(p);
    p->st = S_DONE;
    return MCP_OK;
  case S_BODY_LENGTH:
    if (p->remaining == 0) {
      /* A bodiless response whose completion a stop held back. */
      p->keep_alive = false;
      complete(p);
      p->st = S_DONE;
      return MCP_OK;
    }
    return fail(p, MCP_ECLOSED, "connection closed %llu bytes before the end of the body",
                (unsigned long long)p->remaining);
  case S_HEAD:
    if (!p->have_status && p->head.len == 0) {
      if (!p->expecting) {
        p->st = S_DONE;
        return MCP_OK;
      }
      return fail(p, MCP_ECLOSED, "connection closed before a response");
    }
    return fail(p, MCP_ECLOSED, "connection closed in the middle of a response head");
  case S_CHUNK_SIZE:
  case S_CHUNK_EXT:
  case S_CHUNK_SIZE_LF:
  case S_CHUNK_DATA:
  case S_CHUNK_DATA_CR:
  case S_CHUNK_DATA_LF:
  case S_TRAILER: break;
  }
  return fail(p, MCP_ECLOSED, "connection closed in the middle of a chunked body");
}

/* ---- requests ----------------------------------------------------------------- */

static bool is_token(const char *s) {
  if (!*s) return false;
  for (; *s; s++)
    if (!is_tchar((unsigned char)*s)) return false;
  return true;
}

/* Visible ASCII, at least one character, none of |extra|. */
static bool is_visible(const char *s, const char *extra) {
  if (!*s) return false;
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c <= 0x20 || c >= 0x7f || strchr(extra, (char)c)) return false;
  }
  return true;
}

static bool is_field_value(const char *s) {
  for (; *s; s++)
    if (!is_field_char((unsigned char)*s)) return false;
  return true;
}

int mcp__h1_build_request(mcp_buf *out, const char *method, const char *path_and_query,
                          const char *authority, const mcp_h1_header *hdrs, size_t n,
                          const char *body_data, size_t body_len) {
  size_t mark = out->len;

  if (!method || !is_token(method) || !path_and_query || !is_visible(path_and_query, "#") ||
      !authority || !is_visible(authority, "/?#@") || (n && !hdrs) || (body_len && !body_data))
    return MCP_EINVAL;
  for (size_t i = 0; i < n; i++) {
    if (!hdrs[i].name || !hdrs[i].value || !is_token(hdrs[i].name) ||
        !is_field_value(hdrs[i].value))
      return MCP_EINVAL;
    if (strcasecmp(hdrs[i].name, "host") == 0 || strcasecmp(hdrs[i].name, "content-length") == 0 ||
        strcasecmp(hdrs[i].name, "transfer-encoding") == 0)
      return MCP_EINVAL;
  }

#define PUT(s, len) \
  do { \
    if (mcp__buf_append(out, (s), (len)) != MCP_OK) goto nomem; \
  } while (0)
#define PUTS(s) PUT((s), strlen(s))
  PUTS(method);
  PUT(" ", 1);
  PUTS(path_and_query);
  PUT(" HTTP/1.1\r\nHost: ", 17);
  PUTS(authority);
  PUT("\r\n", 2);
  for (size_t i = 0; i < n; i++) {
    PUTS(hdrs[i].name);
    PUT(": ", 2);
    PUTS(hdrs[i].value);
    PUT("\r\n", 2);
  }
  if (body_len > 0 || strcmp(method, "POST") == 0) {
    char cl[48];
    int k = snprintf(cl, sizeof(cl), "Content-Length: %zu\r\n", body_len);
    PUT(cl, (size_t)k);
  }
  PUT("\r\n", 2);
  if (body_len) PUT(body_data, body_len);
#undef PUTS
#undef PUT
  return MCP_OK;

nomem:
  out->len = mark;
  if (out->data) out->data[mark] = '\0';
  return MCP_ENOMEM;
}
