/* SPDX-License-Identifier: MIT */
/*
 * mcp_url.c: absolute http/https URLs: parse, validate, normalise, resolve.
 *
 * Owns: nothing beyond the mcp_url structs it returns.  Pure: strings in,
 * structs out; no DNS, no sockets.
 * Must not know about: TLS, HTTP messages, MCP.
 *
 * The parser is deliberately narrower than RFC 3986 and WHATWG: it accepts
 * what an MCP server URL can usefully be and says plainly why anything else
 * is refused, so a typo in a configuration file gives a readable error
 * rather than a strange connection attempt.  Resolution (RFC 3986 section
 * 5.2) builds the target as text and runs it through the same parser, so a
 * resolved URL obeys exactly the same rules as a configured one.
 */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "mcp_url.h"

/* A DNS name is at most 253 characters (255 octets on the wire); one more
 * allows the trailing dot of a fully qualified name. */
#define URL_MAX_HOST 254

static bool is_alpha(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

static bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

static int hex_val(unsigned char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static char to_lower(char c) { return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c; }

/* True when |c| may not appear raw in a request target and is sent as %XX:
 * non-ASCII bytes and the printable characters RFC 3986 excludes. */
static bool needs_escape(unsigned char c) {
  return c >= 0x80 || strchr("\"<>\\^`{|}", (char)c) != NULL;
}

/* Length of the scheme at the start of |s| including its ":", or 0 when
 * |s| does not start with one (RFC 3986: ALPHA *( ALPHA / DIGIT / "+" /
 * "-" / "." ) ":"). */
static size_t scheme_len(const char *s) {
  if (!is_alpha((unsigned char)s[0])) return 0;
  size_t i = 1;
  while (is_alpha((unsigned char)s[i]) || is_digit((unsigned char)s[i]) || s[i] == '+' ||
         s[i] == '-' || s[i] == '.')
    i++;
  return s[i] == ':' ? i + 1 : 0;
}

/* Rejects control characters and spaces, which no URL may contain raw. */
static mcp_status check_chars(const char *s, const char *what, mcp_error *err) {
  for (size_t i = 0; s[i]; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c <= 0x20 || c == 0x7f)
      return mcp__error_set(err, MCP_EINVAL, "%s contains a %s at offset %zu (percent-encode it)",
                            what, c == ' ' ? "space" : "control character", i);
  }
  return MCP_OK;
}

/* ---- hosts --------------------------------------------------------------- */

/* Parses a dotted-quad IPv4 address filling all of [s, s + n). */
static bool parse_ipv4(const char *s, size_t n, uint8_t out[4]) {
  size_t i = 0;
  for (int part = 0; part < 4; part++) {
    if (part > 0) {
      if (i >= n || s[i] != '.') return false;
      i++;
    }
    size_t start = i;
    unsigned v = 0;
    while (i < n && is_digit((unsigned char)s[i]) && i - start < 3)
      v = v * 10 + (unsigned)(s[i++] - '0');
    size_t len = i - start;
    /* A leading zero would read as octal to inet_aton(); refuse it. */
    if (len == 0 || v > 255 || (len > 1 && s[start] == '0')) return false;
    out[part] = (uint8_t)v;
  }
  return i == n;
}

/* Parses the text between the brackets of an IPv6 literal (RFC 4291 section
 * 2.2, including the IPv4-embedded form). */
static bool parse_ipv6(const char *s, size_t n, uint8_t out[16]) {
  uint16_t g[8];
  int ng = 0;
  int gap = -1; /* index in g[] where "::" stands, or -1 */
  size_t i = 0;

  if (n >= 2 && s[0] == ':' && s[1] == ':') {
    gap = 0;
    i = 2;
  } else if (n >= 1 && s[0] == ':') {
    return false;
  }
  while (i < n) {
    if (ng == 8) return false;
    size_t start = i;
    unsigned v = 0;
    while (i < n && hex_val((unsigned char)s[i]) >= 0 && i - start < 4)
      v = v * 16 + (unsigned)hex_val((unsigned char)s[i++]);
    if (i == start) return false;
    if (i < n && s[i] == '.') {
      /* An IPv4 tail takes the last two groups. */
      uint8_t v4[4];
      if (ng > 6 || !parse_ipv4(s + start, n - start, v4)) return false;
      g[ng++] = (uint16_t)(v4[0] << 8 | v4[1]);
      g[ng++] = (uint16_t)(v4[2] << 8 | v4[3]);
      i = n;
      break;
    }
    g[ng++] = (uint16_t)v;
    if (i == n) break;
    if (s[i] != ':') return false;
    i++;
    if (i < n && s[i] == ':') {
      if (gap >= 0) return false;
      gap = ng;
      i++;
    } else if (i == n) {
      return false; /* a single trailing ":" */
    }
  }
  if (gap >= 0) {
    if (ng == 8) return false; /* "::" must stand for at least one group */
    int tail = ng - gap;
    memmove(g + 8 - tail, g + gap, (size_t)tail * sizeof(g[0]));
    for (int k = gap; k < 8 - tail; k++) g[k] = 0;
  } else if (ng != 8) {
    return false;
  }
  for (int k = 0; k < 8; k++) {
    out[2 * k] = (uint8_t)(g[k] >> 8);
    out[2 * k + 1] = (uint8_t)(g[k] & 0xff);
  }
  return true;
}

/* Writes |a| in RFC 5952 form (lower case, no leading zeros, the longest
 * run of two or more zero groups, the first of equals, as "::") into |buf|,
 * which holds at least 40 bytes. */
static void format_ipv6(const uint8_t a[16], char *buf) {
  uint16_t g[8];
  for (int k = 0; k < 8; k++) g[k] = (uint16_t)(a[2 * k] << 8 | a[2 * k + 1]);
  int best = -1, best_len = 1;
  for (int k = 0; k < 8;) {
    if (g[k] != 0) {
      k++;
      continue;
    }
    int j = k;
    while (j < 8 && g[j] == 0) j++;
    if (j - k > best_len) {
      best = k;
      best_len = j - k;
    }
    k = j;
  }
  char *p = buf;
  for (int k = 0; k < 8; k++) {
    if (k == best) {
      *p++ = ':';
      *p++ = ':';
      k += best_len - 1;
      continue;
    }
    if (k > 0 && k != best + best_len) *p++ = ':';
    p += sprintf(p, "%x", g[k]);
  }
  *p = '\0';
}

/*
 * Validates and normalises the host [s, s + n) (brackets included for an
 * IPv6 literal) into a new string in *host.
 */
static mcp_status parse_host(const char *s, size_t n, char **host, bool *ipv6, mcp_error *err) {
  *host = NULL;
  *ipv6 = false;
  if (n == 0) return mcp__error_set(err, MCP_EINVAL, "URL has an empty host");

  if (s[0] == '[') {
    /* The caller found the "]" at s[n - 1]. */
    const char *in = s + 1;
    size_t len = n - 2;
    if (memchr(in, '%', len))
      return mcp__error_set(err, MCP_EINVAL,
                            "IPv6 zone identifiers (\"%%25...\") are not "
                            "supported in URLs");
    if (len > 0 && (in[0] == 'v' || in[0] == 'V'))
      return mcp__error_set(err, MCP_EINVAL, "IPvFuture addresses are not supported in URLs");
    uint8_t a[16];
    if (len > 45 || !parse_ipv6(in, len, a))
      return mcp__error_set(err, MCP_EINVAL, "bad IPv6 address \"[%.*s]\" in URL",
                            (int)(len > 45 ? 45 : len), in);
    char text[48];
    format_ipv6(a, text);
    *host = mcp__strdup(text);
    if (!*host) return MCP_ENOMEM;
    *ipv6 = true;
    return MCP_OK;
  }

  if (n > URL_MAX_HOST)
    return mcp__error_set(err, MCP_EINVAL, "URL host is longer than %d characters", URL_MAX_HOST);
  bool numeric = true;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c >= 0x80)
      return mcp__error_set(err, MCP_EINVAL,
                            "URL host is not ASCII (write international "
                            "names in their xn-- form)");
    if (!is_alpha(c) && !is_digit(c) && !strchr("-._~", (char)c))
      return mcp__error_set(err, MCP_EINVAL,
                            "URL host contains '%c', which is not allowed "
                            "in a host name",
                            (char)c);
    if (!is_digit(c) && c != '.') numeric = false;
  }
  /* "10.0.0.1" is an address; "10.0.1" or "010.0.0.1" would be read in
   * surprising ways by the resolver, so only the plain form is taken. */
  uint8_t v4[4];
  if (numeric && !parse_ipv4(s, n, v4))
    return mcp__error_set(err, MCP_EINVAL, "bad IPv4 address \"%.*s\" in URL", (int)n, s);
  char *h = mcp__strndup(s, n);
  if (!h) return MCP_ENOMEM;
  for (size_t i = 0; i < n; i++) h[i] = to_lower(h[i]);
  *host = h;
  return MCP_OK;
}

/* ---- paths --------------------------------------------------------------- */

/*
 * Appends [s, s + n) to |b| with characters that may not appear in a
 * request target percent-encoded.  A "%" must already start a %XX escape.
 */
static mcp_status append_escaped(mcp_buf *b, const char *s, size_t n, mcp_error *err) {
  static const char hex[] = "0123456789ABCDEF";
  size_t run = 0; /* bytes before s[i] not yet copied */
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '%') {
      if (i + 2 >= n || hex_val((unsigned char)s[i + 1]) < 0 ||
          hex_val((unsigned char)s[i + 2]) < 0)
        return mcp__error_set(err, MCP_EINVAL,
                              "URL has a '%%' that does not start a %%XX "
                              "escape (write %%25 for a literal '%%')");
      continue;
    }
    if (!needs_escape(c)) continue;
    if (mcp__buf_append(b, s + run, i - run) != MCP_OK) return MCP_ENOMEM;
    char e[3] = {'%', hex[c >> 4], hex[c & 15]};
    if (mcp__buf_append(b, e, 3) != MCP_OK) return MCP_ENOMEM;
    run = i + 1;
  }
  if (mcp__buf_append(b, s + run, n - run) != MCP_OK) return MCP_ENOMEM;
  return MCP_OK;
}

/*
 * Removes "." and ".." segments from the path in b->data[from, b->len)
 * (RFC 3986 section 5.2.4), in place: the output never outgrows the input,
 * so it is written over the part already read.
 */
static void remove_dot_segments(mcp_buf *b, size_t from) {
  char *in = b->data + from;
  size_t n = b->len - from;
  size_t i = 0; /* next unread byte of the input */
  size_t o = 0; /* length of the output, at in[0, o) */

  while (i < n) {
    const char *r = in + i;
    size_t left = n - i;
    if (left >= 3 && memcmp(r, "../", 3) == 0) {
      i += 3;
    } else if (left >= 2 && memcmp(r, "./", 2) == 0) {
      i += 2;
    } else if (left >= 3 && memcmp(r, "/./", 3) == 0) {
      i += 2;
    } else if (left == 2 && memcmp(r, "/.", 2) == 0) {
      in[i + 1] = '/'; /* the input becomes "/" */
      i += 1;
    } else if ((left >= 4 && memcmp(r, "/../", 4) == 0) ||
               (left == 3 && memcmp(r, "/..", 3) == 0)) {
      if (left == 3) in[i + 2] = '/';
      i += left == 3 ? 2 : 3;
      while (o > 0 && in[o - 1] != '/') o--;
      if (o > 0) o--; /* the segment's own "/" */
    } else if ((left == 1 && r[0] == '.') || (left == 2 && memcmp(r, "..", 2) == 0)) {
      i = n;
    } else {
      /* Move the first segment, with its leading "/" if any. */
      size_t k = 1;
      while (k < left && r[k] != '/') k++;
      memmove(in + o, r, k);
      o += k;
      i += k;
    }
  }
  b->len = from + o;
  b->data[b->len] = '\0';
}

/* ---- parse --------------------------------------------------------------- */

static char *make_authority(const mcp_url *u) {
  int def = u->is_tls ? 443 : 80;
  const char *lb = u->is_ipv6 ? "[" : "";
  const char *rb = u->is_ipv6 ? "]" : "";
  if (u->port == def) return mcp__asprintf("%s%s%s", lb, u->host, rb);
  return mcp__asprintf("%s%s%s:%d", lb, u->host, rb, u->port);
}

void mcp__url_free(mcp_url *u) {
  if (!u) return;
  mcp__free(u->scheme);
  mcp__free(u->host);
  mcp__free(u->path_and_query);
  mcp__free(u->authority);
  mcp__free(u);
}

mcp_status mcp__url_check(const char *s) {
  mcp_url *u = NULL;
  mcp_status st = mcp__url_parse(s, &u, NULL);
  mcp__url_free(u);
  return st == MCP_OK ? MCP_OK : st == MCP_ENOMEM ? MCP_ENOMEM : MCP_EINVAL;
}

mcp_status mcp__url_parse(const char *s, mcp_url **out, mcp_error *err) {
  mcp_url *u = NULL;
  mcp_buf pq;
  mcp_status rc;

  mcp__buf_init(&pq);
  if (out) *out = NULL;
  if (!s || !out) return mcp__error_set(err, MCP_EINVAL, "no URL given");
  if (!*s) return mcp__error_set(err, MCP_EINVAL, "the URL is empty");
  rc = check_chars(s, "URL", err);
  if (rc != MCP_OK) return rc;

  size_t sl = scheme_len(s);
  if (sl == 0)
    return mcp__error_set(err, MCP_EINVAL, "URL has no scheme (expected http:// or https://)");
  bool tls;
  if (sl == 5 && strncasecmp(s, "http:", 5) == 0) {
    tls = false;
  } else if (sl == 6 && strncasecmp(s, "https:", 6) == 0) {
    tls = true;
  } else {
    return mcp__error_set(err, MCP_EINVAL,
                          "unsupported URL scheme \"%.*s\" (only http and "
                          "https)",
                          (int)(sl - 1 > 32 ? 32 : sl - 1), s);
  }
  const char *p = s + sl;
  if (p[0] != '/' || p[1] != '/')
    return mcp__error_set(err, MCP_EINVAL, "URL needs \"//\" and a host after \"%s:\"",
                          tls ? "https" : "http");
  p += 2;

  /* The authority runs to the first "/", "?" or "#". */
  size_t alen = strcspn(p, "/?#");
  const char *a = p;
  const char *a_end = p + alen;
  if (memchr(a, '@', alen))
    return mcp__error_set(err, MCP_EINVAL,
                          "credentials in URLs (user:password@host) are not "
                          "supported; pass them as headers instead");

  const char *h_end; /* end of the host, brackets included */
  if (a < a_end && a[0] == '[') {
    const char *rb = memchr(a, ']', alen);
    if (!rb) return mcp__error_set(err, MCP_EINVAL, "bad IPv6 address in URL: no closing ']'");
    h_end = rb + 1;
    if (h_end < a_end && *h_end != ':')
      return mcp__error_set(err, MCP_EINVAL,
                            "bad IPv6 address in URL: unexpected text after "
                            "']'");
  } else {
    const char *colon = memchr(a, ':', alen);
    h_end = colon ? colon : a_end;
  }

  u = mcp__calloc(1, sizeof(*u));
  if (!u) return mcp__error_set(err, MCP_ENOMEM, "out of memory");
  u->is_tls = tls;
  u->port = tls ? 443 : 80;
  rc = parse_host(a, (size_t)(h_end - a), &u->host, &u->is_ipv6, err);
  if (rc != MCP_OK) goto fail;
  if (h_end < a_end) {
    /* h_end points at ":"; an empty port means the default (RFC 3986). */
    const char *d = h_end + 1;
    size_t dn = (size_t)(a_end - d);
    if (dn > 0) {
      long v = 0;
      for (size_t i = 0; i < dn; i++) {
        if (!is_digit((unsigned char)d[i]) || v > 65535) {
          v = -1;
          break;
        }
        v = v * 10 + (d[i] - '0');
      }
      if (v < 1 || v > 65535) {
        rc = mcp__error_set(err, MCP_EINVAL, "bad URL port \"%.*s\" (expected 1 to 65535)",
                            (int)(dn > 16 ? 16 : dn), d);
        goto fail;
      }
      u->port = (int)v;
    }
  }

  /* Path then query; the fragment is never sent, so it is dropped. */
  const char *path = a_end;
  size_t path_len = strcspn(path, "?#");
  const char *query = path + path_len; /* "?..." or "#..." or "" */
  size_t query_len = *query == '?' ? strcspn(query, "#") : 0;

  rc = MCP_ENOMEM;
  if (path_len == 0) {
    if (mcp__buf_append(&pq, "/", 1) != MCP_OK) goto fail;
  } else {
    rc = append_escaped(&pq, path, path_len, err);
    if (rc != MCP_OK) goto fail;
    remove_dot_segments(&pq, 0);
    if (pq.len == 0 && mcp__buf_append(&pq, "/", 1) != MCP_OK) {
      rc = MCP_ENOMEM;
      goto fail;
    }
  }
  if (query_len) {
    rc = append_escaped(&pq, query, query_len, err);
    if (rc != MCP_OK) goto fail;
  }

  rc = MCP_ENOMEM;
  u->scheme = mcp__strdup(tls ? "https" : "http");
  if (!u->scheme) goto fail;
  u->path_and_query = pq.data;
  mcp__buf_init(&pq);
  u->authority = make_authority(u);
  if (!u->authority) goto fail;
  *out = u;
  return MCP_OK;

fail:
  mcp__buf_free(&pq);
  mcp__url_free(u);
  if (rc == MCP_ENOMEM) mcp__error_set(err, MCP_ENOMEM, "out of memory");
  return rc;
}

const char *mcp__url_authority(const mcp_url *u) { return u->authority; }

char *mcp__url_to_string(const mcp_url *u) {
  return mcp__asprintf("%s://%s%s", u->scheme, u->authority, u->path_and_query);
}

bool mcp__url_origin_equal(const mcp_url *a, const mcp_url *b) {
  if (!a || !b) return false;
  return strcmp(a->scheme, b->scheme) == 0 && strcmp(a->host, b->host) == 0 && a->port == b->port;
}

/* ---- resolve -------------------------------------------------------------- */

mcp_status mcp__url_resolve(const mcp_url *base, const char *ref, mcp_url **out, mcp_error *err) {
  mcp_buf t;
  mcp_status rc;

  if (out) *out = NULL;
  if (!base || !ref || !out) return mcp__error_set(err, MCP_EINVAL, "no URL given");
  rc = check_chars(ref, "URL reference", err);
  if (rc != MCP_OK) return rc;

  /* A reference with a scheme stands alone (RFC 3986 5.2.2, strict). */
  if (scheme_len(ref) > 0) return mcp__url_parse(ref, out, err);

  size_t ref_len = strcspn(ref, "#");
  size_t rpath_len = strcspn(ref, "?#");
  const char *rquery = ref + rpath_len;
  size_t rquery_len = ref_len - rpath_len; /* with its "?", or 0 */
  const char *bpq = base->path_and_query;
  size_t bpath_len = strcspn(bpq, "?");

  mcp__buf_init(&t);
  rc = MCP_ENOMEM;
  if (rpath_len >= 2 && ref[0] == '/' && ref[1] == '/') {
    /* A network-path reference keeps only the scheme. */
    if (mcp__buf_append(&t, base->scheme, strlen(base->scheme)) != MCP_OK ||
        mcp__buf_append(&t, ":", 1) != MCP_OK || mcp__buf_append(&t, ref, ref_len) != MCP_OK)
      goto out;
  } else {
    if (mcp__buf_append(&t, base->scheme, strlen(base->scheme)) != MCP_OK ||
        mcp__buf_append(&t, "://", 3) != MCP_OK ||
        mcp__buf_append(&t, base->authority, strlen(base->authority)) != MCP_OK)
      goto out;
    if (rpath_len == 0) {
      /* Same document: the base path, and the base query unless the
       * reference brings its own. */
      if (mcp__buf_append(&t, bpq, rquery_len ? bpath_len : strlen(bpq)) != MCP_OK) goto out;
    } else if (ref[0] == '/') {
      if (mcp__buf_append(&t, ref, rpath_len) != MCP_OK) goto out;
    } else {
      /* Merge: the base path up to its last "/", then the reference. */
      size_t keep = bpath_len;
      while (keep > 0 && bpq[keep - 1] != '/') keep--;
      if (mcp__buf_append(&t, bpq, keep) != MCP_OK || mcp__buf_append(&t, ref, rpath_len) != MCP_OK)
        goto out;
    }
    if (mcp__buf_append(&t, rquery, rquery_len) != MCP_OK) goto out;
  }
  /* The parser removes the dot segments and validates the result. */
  rc = mcp__url_parse(t.data, out, err);

out:
  mcp__buf_free(&t);
  if (rc == MCP_ENOMEM) mcp__error_set(err, MCP_ENOMEM, "out of memory");
  return rc;
}
