/* SPDX-License-Identifier: MIT */
/*
 * check_url.c: URL parsing, normalisation and resolution.  Table-driven
 * good and bad URLs, IPv6 forms, ports, the RFC 3986 section 5.4 resolution
 * examples, round trips through mcp__url_to_string(), and allocation
 * failure at every allocation.
 */
#include "config.h"

#include <string.h>

#include "check_util.h"
#include "mcp_url.h"

/* ---- good URLs -------------------------------------------------------------- */

typedef struct good_case {
  const char *in;
  const char *scheme;
  const char *host;
  int port;
  const char *pq;
  const char *authority;
  int ipv6;
} good_case;

static const good_case goods[] = {
    {"http://example.com", "http", "example.com", 80, "/", "example.com", 0},
    {"HTTPS://Example.COM:8443/MCP?x=1#frag", "https", "example.com", 8443, "/MCP?x=1",
     "example.com:8443", 0},
    {"https://example.com:443/", "https", "example.com", 443, "/", "example.com", 0},
    {"https://example.com:80/", "https", "example.com", 80, "/", "example.com:80", 0},
    {"http://example.com:80", "http", "example.com", 80, "/", "example.com", 0},
    {"http://example.com:443", "http", "example.com", 443, "/", "example.com:443", 0},
    {"http://example.com:/", "http", "example.com", 80, "/", "example.com", 0},
    {"http://h:00080/", "http", "h", 80, "/", "h", 0},
    {"http://h:1", "http", "h", 1, "/", "h:1", 0},
    {"http://h:65535", "http", "h", 65535, "/", "h:65535", 0},
    {"http://127.0.0.1:3000/mcp", "http", "127.0.0.1", 3000, "/mcp", "127.0.0.1:3000", 0},
    {"http://0.0.0.0", "http", "0.0.0.0", 80, "/", "0.0.0.0", 0},
    {"http://255.255.255.255", "http", "255.255.255.255", 80, "/", "255.255.255.255", 0},
    {"http://my_host.local~/", "http", "my_host.local~", 80, "/", "my_host.local~", 0},
    {"http://xn--nxasmq6b.example.", "http", "xn--nxasmq6b.example.", 80, "/",
     "xn--nxasmq6b.example.", 0},
    {"http://1.2.3.4.example", "http", "1.2.3.4.example", 80, "/", "1.2.3.4.example", 0},
    /* IPv6, printed in RFC 5952 form. */
    {"http://[::1]:8080/mcp", "http", "::1", 8080, "/mcp", "[::1]:8080", 1},
    {"https://[::1]/", "https", "::1", 443, "/", "[::1]", 1},
    {"http://[::1]:/", "http", "::1", 80, "/", "[::1]", 1},
    {"http://[2001:DB8:0:0:0:0:0:1]/", "http", "2001:db8::1", 80, "/", "[2001:db8::1]", 1},
    {"http://[0:0:0:0:0:0:0:1]", "http", "::1", 80, "/", "[::1]", 1},
    {"http://[::]", "http", "::", 80, "/", "[::]", 1},
    {"http://[1::]", "http", "1::", 80, "/", "[1::]", 1},
    {"http://[1:2:3:4:5:6:7:8]", "http", "1:2:3:4:5:6:7:8", 80, "/", "[1:2:3:4:5:6:7:8]", 1},
    {"http://[1:0:2:3:4:5:6:7]", "http", "1:0:2:3:4:5:6:7", 80, "/", "[1:0:2:3:4:5:6:7]", 1},
    {"http://[1:0:0:2:0:0:0:3]", "http", "1:0:0:2::3", 80, "/", "[1:0:0:2::3]", 1},
    {"http://[1:0:0:2:0:0:3:4]", "http", "1::2:0:0:3:4", 80, "/", "[1::2:0:0:3:4]", 1},
    {"http://[0001:0db8::0:1]", "http", "1:db8::1", 80, "/", "[1:db8::1]", 1},
    {"http://[::ffff:192.0.2.1]/", "http", "::ffff:c000:201", 80, "/", "[::ffff:c000:201]", 1},
    {"http://[1:2:3:4:5:6:1.2.3.4]", "http", "1:2:3:4:5:6:102:304", 80, "/",
     "[1:2:3:4:5:6:102:304]", 1},
    {"http://[1::1.2.3.4]", "http", "1::102:304", 80, "/", "[1::102:304]", 1},
    /* Paths and queries. */
    {"http://h?x", "http", "h", 80, "/?x", "h", 0},
    {"http://h#f", "http", "h", 80, "/", "h", 0},
    {"http://h/p?", "http", "h", 80, "/p?", "h", 0},
    {"http://h/p?a=1&b=/../c#x?y", "http", "h", 80, "/p?a=1&b=/../c", "h", 0},
    {"http://h/a/./b/../c", "http", "h", 80, "/a/c", "h", 0},
    {"http://h/a/b/../../..", "http", "h", 80, "/", "h", 0},
    {"http://h/a/.", "http", "h", 80, "/a/", "h", 0},
    {"http://h/a/..", "http", "h", 80, "/", "h", 0},
    {"http://h//x//y", "http", "h", 80, "//x//y", "h", 0},
    {"http://h/%41%7e", "http", "h", 80, "/%41%7e", "h", 0},
    {"http://h/caf\xc3\xa9?q=\"x\"", "http", "h", 80, "/caf%C3%A9?q=%22x%22", "h", 0},
    {"http://h/<{|}>\\^`", "http", "h", 80, "/%3C%7B%7C%7D%3E%5C%5E%60", "h", 0},
    {"http://h/mcp;v=1!$&'()*+,=:@", "http", "h", 80, "/mcp;v=1!$&'()*+,=:@", "h", 0},
};

static void expect_good(const good_case *c, const mcp_url *u) {
  ck_assert_str_eq(u->scheme, c->scheme);
  ck_assert_str_eq(u->host, c->host);
  ck_assert_int_eq(u->port, c->port);
  ck_assert_str_eq(u->path_and_query, c->pq);
  ck_assert_str_eq(mcp__url_authority(u), c->authority);
  ck_assert_int_eq(u->is_ipv6, c->ipv6);
  ck_assert_int_eq(u->is_tls, strcmp(c->scheme, "https") == 0);
}

START_TEST(parse_good) {
  const good_case *c = &goods[_i];
  mcp_error err = MCP_ERROR_INIT;
  mcp_url *u = NULL;
  ck_assert_msg(mcp__url_parse(c->in, &u, &err) == MCP_OK, "%s: %s", c->in, err.message);
  expect_good(c, u);

  /* The formatted URL parses back into the same thing. */
  char *s = mcp__url_to_string(u);
  ck_assert_ptr_nonnull(s);
  mcp_url *v = NULL;
  ck_assert_int_eq(mcp__url_parse(s, &v, &err), MCP_OK);
  expect_good(c, v);
  ck_assert(mcp__url_origin_equal(u, v));
  char *s2 = mcp__url_to_string(v);
  ck_assert_str_eq(s, s2);
  mcp__free(s);
  mcp__free(s2);
  mcp__url_free(u);
  mcp__url_free(v);
  mcp_error_clear(&err);
}
END_TEST

/* ---- bad URLs --------------------------------------------------------------- */

typedef struct bad_case {
  const char *in;
  const char *msg; /* a substring of the error message */
} bad_case;

static const bad_case bads[] = {
    {"", "empty"},
    {"example.com/mcp", "no scheme"},
    {"//example.com", "no scheme"},
    {"/mcp", "no scheme"},
    {"1http://x", "no scheme"},
    {"localhost:3000", "unsupported URL scheme \"localhost\""},
    {"ftp://x", "unsupported URL scheme \"ftp\""},
    {"ws://x", "unsupported URL scheme \"ws\""},
    {"httpx://x", "unsupported URL scheme"},
    {"mailto:x", "unsupported URL scheme"},
    {"http:example.com", "\"//\""},
    {"http:/example.com", "\"//\""},
    {"https:", "\"//\""},
    {"http://", "empty host"},
    {"http:///mcp", "empty host"},
    {"http://?x", "empty host"},
    {"http://:80/", "empty host"},
    {"http://user:pw@host/", "credentials"},
    {"http://user@host", "credentials"},
    {"http://@host", "credentials"},
    {"http://h:0", "bad URL port"},
    {"http://h:65536", "bad URL port"},
    {"http://h:99999999999999999999", "bad URL port"},
    {"http://h:8a", "bad URL port"},
    {"http://h:-1", "bad URL port"},
    {"http://h:+1", "bad URL port"},
    {"http://h:80:81", "bad URL port"},
    {"http://[::1]:0", "bad URL port"},
    {"http://[::1", "no closing"},
    {"http://[::1]x", "after ']'"},
    {"http://[::1]]", "after ']'"},
    {"http://[::g]", "bad IPv6"},
    {"http://[]", "bad IPv6"},
    {"http://[:]", "bad IPv6"},
    {"http://[:::]", "bad IPv6"},
    {"http://[1:2:3:4:5:6:7:8:9]", "bad IPv6"},
    {"http://[1:2:3:4:5:6:7]", "bad IPv6"},
    {"http://[1:2:3:4:5:6:7::8]", "bad IPv6"},
    {"http://[1::2::3]", "bad IPv6"},
    {"http://[:1]", "bad IPv6"},
    {"http://[1:]", "bad IPv6"},
    {"http://[12345::]", "bad IPv6"},
    {"http://[::1.2.3]", "bad IPv6"},
    {"http://[::1.2.3.4.5]", "bad IPv6"},
    {"http://[::1.2.3.04]", "bad IPv6"},
    {"http://[1:2:3:4:5:6:7:1.2.3.4]", "bad IPv6"},
    {"http://[1.2.3.4]", "bad IPv6"},
    {"http://[::1.2.3.4:5]", "bad IPv6"},
    {"http://[fe80::1%25eth0]", "zone"},
    {"http://[fe80::1%eth0]", "zone"},
    {"http://[v1.x]", "IPvFuture"},
    {"http://a[::1]", "'['"},
    {"http://1.2.3", "bad IPv4"},
    {"http://1.2.3.256", "bad IPv4"},
    {"http://01.2.3.4", "bad IPv4"},
    {"http://1.2.3.4.", "bad IPv4"},
    {"http://1234", "bad IPv4"},
    {"http://ex ample.com", "space"},
    {" http://h", "space at offset 0"},
    {"http://h ", "space at offset 8"},
    {"http://h/a b", "space"},
    {"http://h/\x01", "control character"},
    {"http://h/\x7f", "control character"},
    {"http://h/\t", "control character"},
    {"http://h/\r\nHost: evil", "control character"},
    {"http://h/#\n", "control character"},
    {"http://ex%41mple.com", "'%'"},
    {"http://a,b", "','"},
    {"http://a\\b", "'\\'"},
    {"http://h\xc3\xa9.com", "not ASCII"},
    {"http://h/%zz", "%XX"},
    {"http://h/%4", "%XX"},
    {"http://h/a%", "%XX"},
    {"http://h/?a=%", "%XX"},
    {"http://h/%4?", "%XX"},
};

START_TEST(parse_bad) {
  const bad_case *c = &bads[_i];
  mcp_error err = MCP_ERROR_INIT;
  mcp_url *u = (mcp_url *)&err; /* must be reset to NULL */
  ck_assert_msg(mcp__url_parse(c->in, &u, &err) == MCP_EINVAL, "accepted %s", c->in);
  ck_assert_ptr_null(u);
  ck_assert_int_eq(err.status, MCP_EINVAL);
  ck_assert_ptr_nonnull(err.message);
  ck_assert_msg(strstr(err.message, c->msg) != NULL, "%s: message \"%s\" lacks \"%s\"", c->in,
                err.message, c->msg);
  mcp_error_clear(&err);
}
END_TEST

START_TEST(parse_long_host) {
  char buf[300];
  strcpy(buf, "http://");
  memset(buf + 7, 'a', 254);
  buf[7 + 254] = '\0';
  mcp_url *u = NULL;
  ck_assert_int_eq(mcp__url_parse(buf, &u, NULL), MCP_OK);
  mcp__url_free(u);
  strcat(buf, "a");
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp__url_parse(buf, &u, &err), MCP_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.message, "longer"));
  mcp_error_clear(&err);
}
END_TEST

START_TEST(parse_null_args) {
  mcp_url *u = NULL;
  ck_assert_int_eq(mcp__url_parse(NULL, &u, NULL), MCP_EINVAL);
  ck_assert_int_eq(mcp__url_parse("http://h", NULL, NULL), MCP_EINVAL);
  mcp__url_free(NULL);
  ck_assert(!mcp__url_origin_equal(NULL, NULL));
}
END_TEST

START_TEST(origin_equal) {
  static const struct {
    const char *a, *b;
    int eq;
  } cases[] = {
      {"http://a", "HTTP://A:80/x?y", 1},      {"http://a", "https://a", 0},
      {"http://a:8080", "http://a:8081", 0},   {"https://a", "https://a:443/", 1},
      {"http://a:443", "https://a", 0},        {"http://[::1]", "http://[0::1]/z", 1},
      {"http://[::1]", "http://127.0.0.1", 0}, {"http://a.example", "http://b.example", 0},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    mcp_url *a = NULL, *b = NULL;
    ck_assert_int_eq(mcp__url_parse(cases[i].a, &a, NULL), MCP_OK);
    ck_assert_int_eq(mcp__url_parse(cases[i].b, &b, NULL), MCP_OK);
    ck_assert_msg(mcp__url_origin_equal(a, b) == (cases[i].eq != 0), "%s %s", cases[i].a,
                  cases[i].b);
    ck_assert(mcp__url_origin_equal(b, a) == (cases[i].eq != 0));
    mcp__url_free(a);
    mcp__url_free(b);
  }
}
END_TEST

/* ---- resolution -------------------------------------------------------------- */

typedef struct res_case {
  const char *ref;
  const char *want; /* NULL: MCP_EINVAL */
} res_case;

/* RFC 3986 section 5.4.1 ("normal") and 5.4.2 ("abnormal") against
 * http://a/b/c/d;p?q.  Our URLs always have a path and never a fragment,
 * so "http://g" reads "http://g/" and fragments are gone; "g:h" and the
 * strict reading of "http:g" are not usable http URLs. */
static const res_case rfc_cases[] = {
    {"g:h", NULL},
    {"g", "http://a/b/c/g"},
    {"./g", "http://a/b/c/g"},
    {"g/", "http://a/b/c/g/"},
    {"/g", "http://a/g"},
    {"//g", "http://g/"},
    {"?y", "http://a/b/c/d;p?y"},
    {"g?y", "http://a/b/c/g?y"},
    {"#s", "http://a/b/c/d;p?q"},
    {"g#s", "http://a/b/c/g"},
    {"g?y#s", "http://a/b/c/g?y"},
    {";x", "http://a/b/c/;x"},
    {"g;x", "http://a/b/c/g;x"},
    {"g;x?y#s", "http://a/b/c/g;x?y"},
    {"", "http://a/b/c/d;p?q"},
    {".", "http://a/b/c/"},
    {"./", "http://a/b/c/"},
    {"..", "http://a/b/"},
    {"../", "http://a/b/"},
    {"../g", "http://a/b/g"},
    {"../..", "http://a/"},
    {"../../", "http://a/"},
    {"../../g", "http://a/g"},
    /* 5.4.2 */
    {"../../../g", "http://a/g"},
    {"../../../../g", "http://a/g"},
    {"/./g", "http://a/g"},
    {"/../g", "http://a/g"},
    {"g.", "http://a/b/c/g."},
    {".g", "http://a/b/c/.g"},
    {"g..", "http://a/b/c/g.."},
    {"..g", "http://a/b/c/..g"},
    {"./../g", "http://a/b/g"},
    {"./g/.", "http://a/b/c/g/"},
    {"g/./h", "http://a/b/c/g/h"},
    {"g/../h", "http://a/b/c/h"},
    {"g;x=1/./y", "http://a/b/c/g;x=1/y"},
    {"g;x=1/../y", "http://a/b/c/y"},
    {"g?y/./x", "http://a/b/c/g?y/./x"},
    {"g?y/../x", "http://a/b/c/g?y/../x"},
    {"g#s/./x", "http://a/b/c/g"},
    {"g#s/../x", "http://a/b/c/g"},
    {"http:g", NULL},
    /* Ours. */
    {"https://B.example:8443/x/../y", "https://b.example:8443/y"},
    {"//h2:81/p", "http://h2:81/p"},
    {"//", NULL},
    {"/ x", NULL},
    {"ftp://x/", NULL},
    {"%zz", NULL},
    {"g h", NULL},
};

static void expect_resolve(const char *base, const char *ref, const char *want) {
  mcp_url *b = NULL, *r = NULL;
  mcp_error err = MCP_ERROR_INIT;
  ck_assert_int_eq(mcp__url_parse(base, &b, NULL), MCP_OK);
  mcp_status rc = mcp__url_resolve(b, ref, &r, &err);
  if (!want) {
    ck_assert_msg(rc == MCP_EINVAL, "resolved %s", ref);
    ck_assert_ptr_null(r);
    ck_assert_ptr_nonnull(err.message);
  } else {
    ck_assert_msg(rc == MCP_OK, "%s: %s", ref, err.message);
    char *s = mcp__url_to_string(r);
    ck_assert_msg(strcmp(s, want) == 0, "%s + %s = %s, want %s", base, ref, s, want);
    mcp__free(s);
  }
  mcp__url_free(b);
  mcp__url_free(r);
  mcp_error_clear(&err);
}

START_TEST(resolve_rfc3986) {
  expect_resolve("http://a/b/c/d;p?q", rfc_cases[_i].ref, rfc_cases[_i].want);
}
END_TEST

START_TEST(resolve_endpoint_event) {
  /* What MCP servers send in the legacy SSE transport's endpoint event. */
  const char *base = "http://localhost:3000/sse";
  expect_resolve(base, "/messages?sessionId=abc-123",
                 "http://localhost:3000/messages?sessionId=abc-123");
  expect_resolve(base, "messages/?sessionId=1", "http://localhost:3000/messages/?sessionId=1");
  expect_resolve(base, "https://other.example/m?x=1", "https://other.example/m?x=1");
  expect_resolve("http://[::1]:3000/a/sse?k=v", "../messages?s=1",
                 "http://[::1]:3000/messages?s=1");
  expect_resolve("https://h/a/b/", "c", "https://h/a/b/c");
  expect_resolve("https://h", "c", "https://h/c");
  expect_resolve("https://h/x?q", "?", "https://h/x?");
  expect_resolve(base, "http://user@evil/", NULL);
  expect_resolve(base, "/m\r\nX-Injected: 1", NULL);
}
END_TEST

START_TEST(resolve_null_args) {
  mcp_url *b = NULL, *r = NULL;
  ck_assert_int_eq(mcp__url_parse("http://h/", &b, NULL), MCP_OK);
  ck_assert_int_eq(mcp__url_resolve(NULL, "x", &r, NULL), MCP_EINVAL);
  ck_assert_int_eq(mcp__url_resolve(b, NULL, &r, NULL), MCP_EINVAL);
  ck_assert_int_eq(mcp__url_resolve(b, "x", NULL, NULL), MCP_EINVAL);
  mcp__url_free(b);
}
END_TEST

/* ---- allocation failure --------------------------------------------------------- */

/* Fails the Nth allocation for N = 0, 1, ... until the call succeeds; every
 * failure must be MCP_ENOMEM with *out NULL (leaks show under valgrind and
 * ASan). */
START_TEST(alloc_failure_parse) {
  static const char *const inputs[] = {
      "HTTPS://Example.COM:8443/a/../MCP?x=\xc3\xa9#frag",
      "http://[2001:db8::1]:8080/",
      "http://h",
  };
  for (size_t k = 0; k < sizeof(inputs) / sizeof(inputs[0]); k++) {
    for (long n = 0;; n++) {
      mcp_url *u = NULL;
      mcp_error err = MCP_ERROR_INIT;
      mcp__alloc_fail_after(n);
      mcp_status rc = mcp__url_parse(inputs[k], &u, &err);
      mcp__alloc_fail_after(-1);
      mcp_error_clear(&err);
      if (rc == MCP_OK) {
        ck_assert_ptr_nonnull(u);
        ck_assert_int_gt(n, 0);
        mcp__url_free(u);
        break;
      }
      ck_assert_int_eq(rc, MCP_ENOMEM);
      ck_assert_ptr_null(u);
      ck_assert_int_lt(n, 100);
    }
  }
}
END_TEST

START_TEST(alloc_failure_resolve) {
  mcp_url *b = NULL;
  ck_assert_int_eq(mcp__url_parse("http://a/b/c/d;p?q", &b, NULL), MCP_OK);
  static const char *const refs[] = {"../g?y#s", "//g/x", "https://x/", "?z"};
  for (size_t k = 0; k < sizeof(refs) / sizeof(refs[0]); k++) {
    for (long n = 0;; n++) {
      mcp_url *r = NULL;
      mcp__alloc_fail_after(n);
      mcp_status rc = mcp__url_resolve(b, refs[k], &r, NULL);
      mcp__alloc_fail_after(-1);
      if (rc == MCP_OK) {
        mcp__url_free(r);
        break;
      }
      ck_assert_int_eq(rc, MCP_ENOMEM);
      ck_assert_ptr_null(r);
      ck_assert_int_lt(n, 100);
    }
  }
  for (long n = 0;; n++) {
    mcp__alloc_fail_after(n);
    char *s = mcp__url_to_string(b);
    mcp__alloc_fail_after(-1);
    if (s) {
      ck_assert_str_eq(s, "http://a/b/c/d;p?q");
      mcp__free(s);
      break;
    }
  }
  mcp__url_free(b);
}
END_TEST

static Suite *url_suite(void) {
  Suite *s = suite_create("url");
  TCase *tc = tcase_create("parse");
  tcase_add_loop_test(tc, parse_good, 0, (int)(sizeof(goods) / sizeof(goods[0])));
  tcase_add_loop_test(tc, parse_bad, 0, (int)(sizeof(bads) / sizeof(bads[0])));
  tcase_add_test(tc, parse_long_host);
  tcase_add_test(tc, parse_null_args);
  tcase_add_test(tc, origin_equal);
  suite_add_tcase(s, tc);
  tc = tcase_create("resolve");
  tcase_add_loop_test(tc, resolve_rfc3986, 0, (int)(sizeof(rfc_cases) / sizeof(rfc_cases[0])));
  tcase_add_test(tc, resolve_endpoint_event);
  tcase_add_test(tc, resolve_null_args);
  suite_add_tcase(s, tc);
  tc = tcase_create("alloc");
  tcase_add_test(tc, alloc_failure_parse);
  tcase_add_test(tc, alloc_failure_resolve);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(url_suite()); }
