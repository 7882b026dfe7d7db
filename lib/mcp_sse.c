/* SPDX-License-Identifier: MIT */
/*
 * mcp_sse.c: incremental text/event-stream parser (WHATWG HTML, "server-sent
 * events", section "Interpreting an event stream").
 *
 * Owns: the buffers of the event being read (data, event type, the id being
 * read) and the two last-event-ID strings.  Pure: bytes in, events out.
 * Must not know about: HTTP, sockets, JSON, MCP.
 *
 * Lines are never buffered whole.  A small state machine reads the field
 * name (at most five bytes matter: "event", "data", "id", "retry"), then
 * streams the value straight into the buffer of its field, so a 16 MiB
 * `data` line costs 16 MiB once, and comments and unknown fields cost
 * nothing.  The only state carried between feeds besides that is
 * |cr_pending|: a CR ended the last line, so a LF that follows, even at the
 * start of the next feed, belongs to the same line ending.
 *
 * Limits.  Data above max_data, or an `event` or `id` value above
 * max_field, drops the event: the buffers are emptied at once and the
 * parser skips (state L_SKIP) to the blank line that ends the event, so
 * memory stays bounded by the caps however long the event goes on.
 * Allocation failure drops the event the same way.
 */
#include "config.h"

#include <stdbool.h>
#include <string.h>

#include "mcp_sse.h"

/* After dispatch, buffers that grew past this are freed rather than kept. */
#define SSE_KEEP_CAP ((size_t)64 * 1024)

/* Where in the current line the parser is. */
typedef enum line_state {
  L_NAME,        /* reading the field name (name_len bytes so far) */
  L_VALUE_START, /* just after the ":"; one space is dropped here */
  L_VALUE,       /* reading the value of |field| */
  L_IGNORE,      /* a comment or an unknown field: ignore to end of line */
  L_SKIP         /* a dropped event: ignore lines to the next blank one */
} line_state;

typedef enum field { F_NONE, F_EVENT, F_DATA, F_ID, F_RETRY } field;

struct mcp_sse {
  mcp_sse_callbacks cb;
  void *user;
  size_t max_data;  /* largest event data dispatched, bytes */
  size_t max_field; /* largest `event` or `id` value, bytes */

  /* Stream start: bytes of the BOM matched so far, until bom_done. */
  unsigned bom_seen;
  bool bom_done;
  /* The last line ended with CR: a LF next is part of that line ending. */
  bool cr_pending;

  line_state st;
  field fld;    /* the field of the current line, in value states */
  char name[5]; /* the field name read so far */
  size_t name_len;
  bool skip_line_empty; /* L_SKIP: nothing read since the last line end */
  bool in_event;        /* a field line was read since the last blank line */

  mcp_buf data;       /* data lines, each followed by "\n" */
  mcp_buf event;      /* the event type buffer */
  bool event_nul;     /* ...which contains NUL: the event is not reported */
  mcp_buf id_tmp;     /* the value of the `id` line being read */
  bool id_nul;        /* ...which contains NUL, so it will be ignored */
  bool id_long;       /* ...which is longer than max_field */
  uint64_t retry_val; /* the value of the `retry` line being read */
  size_t retry_digits;
  bool retry_ok; /* ...so far only digits */

  /* The last event ID buffer, and the stream's last event ID it is copied
   * to at every blank line.  NULL means "".  The two may be the same
   * allocation, so each is freed only when the other does not hold it. */
  char *id_buf;
  char *last_id;
  uint64_t retry_ms; /* ms; 0 when never set */

  size_t consumed; /* bytes used by the last feed */
  int err;         /* first error of the current feed */
};

static const unsigned char BOM[3] = {0xEF, 0xBB, 0xBF};

mcp_sse *mcp__sse_new(size_t max_event, const mcp_sse_callbacks *cb, void *user) {
  mcp_sse *p = mcp__calloc(1, sizeof(*p));
  if (!p) return NULL;
  if (cb) p->cb = *cb;
  p->user = user;
  p->max_data = max_event ? max_event : MCP_SSE_DEFAULT_MAX_EVENT;
  p->max_field = p->max_data < MCP_SSE_MAX_FIELD ? p->max_data : MCP_SSE_MAX_FIELD;
  p->st = L_NAME;
  mcp__buf_init(&p->data);
  mcp__buf_init(&p->event);
  mcp__buf_init(&p->id_tmp);
  return p;
}

void mcp__sse_free(mcp_sse *p) {
  if (!p) return;
  mcp__buf_free(&p->data);
  mcp__buf_free(&p->event);
  mcp__buf_free(&p->id_tmp);
  if (p->id_buf != p->last_id) mcp__free(p->id_buf);
  mcp__free(p->last_id);
  mcp__free(p);
}

size_t mcp__sse_consumed(const mcp_sse *p) { return p->consumed; }

const char *mcp__sse_last_event_id(const mcp_sse *p) { return p->last_id ? p->last_id : ""; }

uint64_t mcp__sse_retry_ms(const mcp_sse *p) { return p->retry_ms; }

/* Empties |b|, giving its memory back when an event made it large. */
static void buf_clear(mcp_buf *b) {
  if (b->cap > SSE_KEEP_CAP) {
    mcp__buf_free(b);
    return;
  }
  b->len = 0;
  if (b->data) b->data[0] = '\0';
}

/* Replaces the last event ID buffer with |v| (owned; NULL for ""). */
static void set_id_buf(mcp_sse *p, char *v) {
  if (p->id_buf != p->last_id) mcp__free(p->id_buf);
  p->id_buf = v;
}

/* The stream's last event ID takes the buffer's value (a blank line). */
static void commit_id(mcp_sse *p) {
  if (p->last_id == p->id_buf) return;
  mcp__free(p->last_id);
  p->last_id = p->id_buf;
}

/*
 * Forgets the event being read and skips to the blank line that ends it.
 * |at_line_start|: the current line has already ended.
 */
static void drop_event(mcp_sse *p, int status, bool at_line_start) {
  if (p->err == MCP_OK) p->err = status;
  buf_clear(&p->data);
  buf_clear(&p->event);
  p->event_nul = false;
  buf_clear(&p->id_tmp);
  p->st = L_SKIP;
  p->name_len = 0;
  p->skip_line_empty = at_line_start;
  p->in_event = true;
}

static field identify(const char *name, size_t n) {
  if (n == 4 && memcmp(name, "data", 4) == 0) return F_DATA;
  if (n == 5 && memcmp(name, "event", 5) == 0) return F_EVENT;
  if (n == 2 && memcmp(name, "id", 2) == 0) return F_ID;
  if (n == 5 && memcmp(name, "retry", 5) == 0) return F_RETRY;
  return F_NONE;
}

/* A line names a known field: get ready for its value. */
static void start_field(mcp_sse *p, field f) {
  p->fld = f;
  p->in_event = true;
  switch (f) {
  case F_EVENT:
    p->event.len = 0; /* the new type replaces the old one */
    if (p->event.data) p->event.data[0] = '\0';
    p->event_nul = false;
    break;
  case F_ID:
    p->id_tmp.len = 0;
    p->id_nul = false;
    p->id_long = false;
    break;
  case F_RETRY:
    p->retry_val = 0;
    p->retry_digits = 0;
    p->retry_ok = true;
    break;
  case F_DATA:
  case F_NONE: break;
  }
}

/* Appends |n| value bytes to |b| within |cap|, or drops the event. */
static void value_append(mcp_sse *p, mcp_buf *b, size_t cap, const char *s, size_t n) {
  if (b->len > cap || n > cap - b->len) {
    drop_event(p, MCP_ETOOBIG, false);
    return;
  }
  if (mcp__buf_append(b, s, n) != MCP_OK) drop_event(p, MCP_ENOMEM, false);
}

/* |n| bytes of the current field's value. */
static void value_bytes(mcp_sse *p, const char *s, size_t n) {
  switch (p->fld) {
  case F_DATA: value_append(p, &p->data, p->max_data, s, n); break;
  case F_EVENT:
    if (memchr(s, '\0', n)) p->event_nul = true;
    value_append(p, &p->event, p->max_field, s, n);
    break;
  case F_ID:
    if (p->id_nul) break;
    if (memchr(s, '\0', n)) {
      /* The standard ignores such an id; keep nothing of it. */
      p->id_nul = true;
      buf_clear(&p->id_tmp);
      break;
    }
    if (p->id_long) break;
    if (n > p->max_field - p->id_tmp.len) {
      /* Too long, unless a NUL later in the line makes it ignored: that
       * is decided at the end of the line, whatever the feeds' cuts. */
      p->id_long = true;
      buf_clear(&p->id_tmp);
      break;
    }
    if (mcp__buf_append(&p->id_tmp, s, n) != MCP_OK) drop_event(p, MCP_ENOMEM, false);
    break;
  case F_RETRY:
    for (size_t i = 0; i < n; i++) {
      unsigned d = (unsigned char)s[i] - '0';
      if (d > 9) {
        p->retry_ok = false;
        break;
      }
      p->retry_val = p->retry_val > (UINT64_MAX - d) / 10 ? UINT64_MAX : p->retry_val * 10 + d;
      p->retry_digits++;
    }
    break;
  case F_NONE: break;
  }
}

/* An `id` line ended: its value becomes the last event ID buffer.  The
 * value's buffer is taken rather than copied, so nothing can fail. */
static void take_id(mcp_sse *p) {
  char *v = p->id_tmp.data;
  if (p->id_tmp.len == 0) {
    mcp__free(v);
    v = NULL;
  }
  mcp__buf_init(&p->id_tmp);
  set_id_buf(p, v);
}

/* The current line, a known field, has ended: apply it. */
static void finish_field(mcp_sse *p) {
  switch (p->fld) {
  case F_DATA:
    /* The "\n" is dropped again if this is the last data line, so only
     * the data so far must fit. */
    if (p->data.len > p->max_data) {
      drop_event(p, MCP_ETOOBIG, true);
      return;
    }
    if (mcp__buf_append(&p->data, "\n", 1) != MCP_OK) drop_event(p, MCP_ENOMEM, true);
    break;
  case F_ID:
    if (p->id_nul) break;
    if (p->id_long) {
      drop_event(p, MCP_ETOOBIG, true);
      break;
    }
    take_id(p);
    break;
  case F_RETRY:
    if (p->retry_ok && p->retry_digits > 0) {
      p->retry_ms = p->retry_val;
      if (p->cb.on_retry) p->cb.on_retry(p->user, p->retry_ms);
    }
    break;
  case F_EVENT:
  case F_NONE: break;
  }
}

/* A blank line: dispatch the event.  Returns non-zero to stop. */
static int dispatch(mcp_sse *p) {
  commit_id(p);
  p->in_event = false;
  if (p->data.len == 0) {
    buf_clear(&p->event);
    p->event_nul = false;
    return 0;
  }
  p->data.len--; /* the "\n" after the last data line */
  p->data.data[p->data.len] = '\0';
  const char *type = p->event.len ? p->event.data : "message";
  int stop = 0;
  /* A type with a NUL byte cannot be passed as a C string without becoming
   * another type, and no caller could ask for it by name; as in a browser
   * with no listener for it, the event goes nowhere. */
  if (p->cb.on_event && !p->event_nul)
    stop = p->cb.on_event(p->user, type, p->data.data, p->data.len, mcp__sse_last_event_id(p));
  buf_clear(&p->data);
  buf_clear(&p->event);
  p->event_nul = false;
  return stop;
}

/* |n| bytes of the current line, none of them CR or LF. */
static void line_bytes(mcp_sse *p, const char *s, size_t n) {
  while (n > 0) {
    switch (p->st) {
    case L_SKIP: p->skip_line_empty = false; return;
    case L_IGNORE: return;
    case L_NAME: {
      const char *colon = memchr(s, ':', n);
      size_t k = colon ? (size_t)(colon - s) : n;
      if (p->name_len + k == 0) {
        p->st = L_IGNORE; /* a comment */
        return;
      }
      if (k > sizeof(p->name) - p->name_len) {
        p->st = L_IGNORE; /* longer than any field we know */
        p->name_len = 0;
        return;
      }
      memcpy(p->name + p->name_len, s, k);
      p->name_len += k;
      if (!colon) return;
      field f = identify(p->name, p->name_len);
      p->name_len = 0;
      if (f == F_NONE) {
        p->st = L_IGNORE;
        return;
      }
      start_field(p, f);
      p->st = L_VALUE_START;
      s += k + 1;
      n -= k + 1;
      break;
    }
    case L_VALUE_START:
      p->st = L_VALUE;
      if (s[0] == ' ') {
        s++;
        n--;
      }
      break;
    case L_VALUE: value_bytes(p, s, n); return;
    }
  }
}

/* The current line has ended.  Returns non-zero to stop. */
static int end_line(mcp_sse *p) {
  switch (p->st) {
  case L_SKIP:
    if (p->skip_line_empty) {
      /* The blank line that ends the dropped event. */
      commit_id(p);
      p->in_event = false;
      p->st = L_NAME;
    }
    p->skip_line_empty = true;
    return 0;
  case L_IGNORE: break;
  case L_NAME: {
    if (p->name_len == 0) return dispatch(p);
    /* A field name alone: the field with an empty value. */
    field f = identify(p->name, p->name_len);
    if (f != F_NONE) {
      start_field(p, f);
      finish_field(p);
    }
    break;
  }
  case L_VALUE_START:
  case L_VALUE: finish_field(p); break;
  }
  p->name_len = 0;
  if (p->st != L_SKIP) p->st = L_NAME;
  return 0;
}

/* Parses |n| bytes after the BOM check; *used says how many were taken.
 * Returns non-zero when on_event asked to stop. */
static int parse(mcp_sse *p, const char *s, size_t n, size_t *used) {
  size_t i = 0;
  while (i < n) {
    if (p->cr_pending) {
      p->cr_pending = false;
      if (s[i] == '\n') {
        i++;
        continue;
      }
    }
    size_t j = i;
    while (j < n && s[j] != '\n' && s[j] != '\r') j++;
    if (j > i) line_bytes(p, s + i, j - i);
    if (j == n) break;
    p->cr_pending = s[j] == '\r';
    i = j + 1;
    if (end_line(p)) {
      *used = i;
      return 1;
    }
  }
  *used = n;
  return 0;
}

int mcp__sse_feed(mcp_sse *p, const char *data, size_t n) {
  size_t off = 0;
  size_t used;

  p->err = MCP_OK;
  p->consumed = 0;
  if (n == 0) return MCP_OK; /* |data| may then be NULL */
  if (!p->bom_done) {
    /* One BOM may open the stream, possibly split across feeds. */
    while (off < n && p->bom_seen < 3 && (unsigned char)data[off] == BOM[p->bom_seen]) {
      p->bom_seen++;
      off++;
    }
    if (p->bom_seen == 3) {
      p->bom_done = true;
    } else if (off < n) {
      /* Not a BOM after all: what matched of it is content.  Those bytes
       * hold no line ending, so they cannot dispatch anything. */
      p->bom_done = true;
      parse(p, (const char *)BOM, p->bom_seen, &used);
    }
  }
  if (parse(p, data + off, n - off, &used)) {
    p->consumed = off + used;
    return MCP__EAGAIN;
  }
  p->consumed = n;
  return p->err;
}

int mcp__sse_finish(mcp_sse *p) {
  /* Cut inside an event: fields were read since the last blank line, or
   * a line that may be one is unfinished (a comment or an unknown field
   * is not). */
  bool cut = p->in_event || (p->st == L_NAME && p->name_len > 0) || p->st == L_VALUE_START ||
             p->st == L_VALUE || p->st == L_SKIP || (!p->bom_done && p->bom_seen > 0);
  /* Whatever the stream left unfinished is discarded. */
  buf_clear(&p->data);
  buf_clear(&p->event);
  buf_clear(&p->id_tmp);
  p->event_nul = false;
  p->bom_seen = 0;
  p->bom_done = false;
  p->cr_pending = false;
  p->st = L_NAME;
  p->name_len = 0;
  p->in_event = false;
  /* A new stream's last event ID buffer starts from the last event ID, as
   * browsers do, so an unfinished event's id is forgotten too. */
  if (p->id_buf != p->last_id) {
    mcp__free(p->id_buf);
    p->id_buf = p->last_id;
  }
  return cut ? MCP_ECLOSED : MCP_OK;
}
