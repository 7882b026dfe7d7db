/* SPDX-License-Identifier: MIT */
/*
 * fuzz_url.c: libFuzzer target for mcp_url.
 *
 * Input: "<url>" or "<url>\n<reference>".  Whatever the parser accepts
 * must satisfy the promises of mcp_url.h (scheme, port range, a request
 * target of visible ASCII only, a lower-case host) and must round-trip:
 * formatting and parsing again gives the same URL.  The same holds for
 * every reference it resolves.  A second pass fails an allocation part way
 * through, which must give MCP_ENOMEM and leak nothing.
 */
#include "config.h"

#include <stdbool.h>

#include "fuzz_common.h"
#include "mcp_url.h"

static void check_url(const mcp_url *u);

static void check_same(const mcp_url *a, const mcp_url *b) {
  FUZZ_CHECK(strcmp(a->scheme, b->scheme) == 0);
  FUZZ_CHECK(strcmp(a->host, b->host) == 0);
  FUZZ_CHECK(a->port == b->port);
  FUZZ_CHECK(strcmp(a->path_and_query, b->path_and_query) == 0);
  FUZZ_CHECK(strcmp(a->authority, b->authority) == 0);
  FUZZ_CHECK(a->is_tls == b->is_tls && a->is_ipv6 == b->is_ipv6);
  FUZZ_CHECK(mcp__url_origin_equal(a, b));
}

static void check_fields(const mcp_url *u) {
  FUZZ_CHECK(strcmp(u->scheme, "http") == 0 || strcmp(u->scheme, "https") == 0);
  FUZZ_CHECK(u->is_tls == (strcmp(u->scheme, "https") == 0));
  FUZZ_CHECK(u->port >= 1 && u->port <= 65535);
  FUZZ_CHECK(u->host[0] != '\0');
  for (const char *h = u->host; *h; h++) {
    if (u->is_ipv6) FUZZ_CHECK((*h >= '0' && *h <= '9') || (*h >= 'a' && *h <= 'f') || *h == ':');
    else FUZZ_CHECK((*h >= 'a' && *h <= 'z') || (*h >= '0' && *h <= '9') || strchr("-._~", *h));
  }
  FUZZ_CHECK(u->path_and_query[0] == '/');
  for (const unsigned char *c = (const unsigned char *)u->path_and_query; *c; c++) {
    FUZZ_CHECK(*c > 0x20 && *c < 0x7f);
    FUZZ_CHECK(!strchr("#\"<>\\^`{|}", *c));
  }
  char want[512];
  bool def = u->port == (u->is_tls ? 443 : 80);
  if (def)
    snprintf(want, sizeof(want), "%s%s%s", u->is_ipv6 ? "[" : "", u->host, u->is_ipv6 ? "]" : "");
  else
    snprintf(want, sizeof(want), "%s%s%s:%d", u->is_ipv6 ? "[" : "", u->host, u->is_ipv6 ? "]" : "",
             u->port);
  FUZZ_CHECK(strcmp(mcp__url_authority(u), want) == 0);
}

static void check_url(const mcp_url *u) {
  check_fields(u);
  char *s = mcp__url_to_string(u);
  FUZZ_CHECK(s != NULL);
  mcp_url *v = NULL;
  mcp_error err = MCP_ERROR_INIT;
  if (mcp__url_parse(s, &v, &err) != MCP_OK) {
    fprintf(stderr, "round trip of \"%s\" failed: %s\n", s, err.message);
    abort();
  }
  check_same(u, v);
  char *s2 = mcp__url_to_string(v);
  FUZZ_CHECK(s2 && strcmp(s, s2) == 0);
  /* Resolving "" against a URL gives the URL itself. */
  mcp_url *w = NULL;
  FUZZ_CHECK(mcp__url_resolve(u, "", &w, NULL) == MCP_OK);
  check_same(u, w);
  mcp__url_free(w);
  mcp__free(s);
  mcp__free(s2);
  mcp__url_free(v);
  mcp_error_clear(&err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 8192) return 0;
  char *s = malloc(size + 1);
  FUZZ_CHECK(s != NULL);
  memcpy(s, data, size);
  s[size] = '\0';
  char *ref = NULL;
  char *nl = strchr(s, '\n');
  if (nl) {
    *nl = '\0';
    ref = nl + 1;
  }

  mcp_url *u = NULL;
  mcp_error err = MCP_ERROR_INIT;
  mcp_status rc = mcp__url_parse(s, &u, &err);
  if (rc == MCP_OK) {
    FUZZ_CHECK(u != NULL);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++)
      FUZZ_CHECK(*c > 0x20 && *c != 0x7f);
    check_url(u);
    if (ref) {
      mcp_url *r = NULL;
      mcp_error rerr = MCP_ERROR_INIT;
      mcp_status rrc = mcp__url_resolve(u, ref, &r, &rerr);
      if (rrc == MCP_OK) {
        check_url(r);
        /* Resolving the result's own text changes nothing. */
        char *t = mcp__url_to_string(r);
        mcp_url *r2 = NULL;
        FUZZ_CHECK(t && mcp__url_resolve(u, t, &r2, NULL) == MCP_OK);
        check_same(r, r2);
        mcp__url_free(r2);
        mcp__free(t);
      } else {
        FUZZ_CHECK(rrc == MCP_EINVAL && r == NULL && rerr.message);
      }
      mcp__url_free(r);
      mcp_error_clear(&rerr);
    }
  } else {
    FUZZ_CHECK(rc == MCP_EINVAL && u == NULL && err.message != NULL);
  }
  mcp__url_free(u);
  mcp_error_clear(&err);

  /* Allocation failure part way through. */
  mcp__alloc_fail_after((long)(size % 7));
  u = NULL;
  rc = mcp__url_parse(s, &u, NULL);
  mcp__alloc_fail_after(-1);
  FUZZ_CHECK(rc == MCP_OK || rc == MCP_EINVAL || rc == MCP_ENOMEM);
  FUZZ_CHECK((rc == MCP_OK) == (u != NULL));
  mcp__url_free(u);

  free(s);
  return 0;
}
