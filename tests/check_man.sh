#!/bin/sh
# SPDX-License-Identifier: MIT
# check_man.sh: the man pages render without groff warnings, and they
# document exactly the options the programs' --help shows (and the demo
# server's tools), so a new flag cannot go undocumented and a removed one
# cannot linger.  Run by make check ($MCPCONN_BIN and $MCP_DEMO_SERVER come
# from AM_TESTS_ENVIRONMENT; srcdir from the test harness).
set -u
man=${srcdir:-.}/man
fail=0
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

for page in mcpconn.1 mcpconn-demo-server.1 libmcpconn.3; do
  if [ ! -f "$man/$page" ]; then
    echo "check_man: $man/$page is missing" >&2
    fail=1
  fi
done
[ "$fail" = 0 ] || exit 1

# 1. Rendering: any warning (-ww) fails.
if command -v groff >/dev/null 2>&1; then
  for page in mcpconn.1 mcpconn-demo-server.1 libmcpconn.3; do
    if ! LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$man/$page" >"$tmp/groff" 2>&1 ||
       [ -s "$tmp/groff" ]; then
      echo "check_man: $page does not render cleanly:" >&2
      cat "$tmp/groff" >&2
      fail=1
    fi
  done
else
  echo "check_man: groff not found; rendering not checked (apt-get install groff-base)"
fi

# The long and short options in a text, one a line, sorted.
options() {
  grep -o -E -- '(^|[^a-zA-Z0-9-])--?[a-zA-Z0-9][a-zA-Z0-9.-]*' "$1" |
    sed -E 's/^[^-]*//; s/[.]$//' | grep -v -E -- '^-[0-9]' | LC_ALL=C sort -u
}
# A man page's text with roff's \- turned into -, without the .nf/.fi
# blocks (examples run other programs, with options of their own).
unescape() { sed -e '/^\.nf/,/^\.fi/d' -e 's/\\-/-/g' "$1"; }

# compare WHAT HELP_FILE PAGE: both directions.
compare() {
  options "$2" >"$tmp/help.opts"
  unescape "$man/$3" >"$tmp/page.txt"
  options "$tmp/page.txt" >"$tmp/page.opts"
  for o in $(LC_ALL=C comm -23 "$tmp/help.opts" "$tmp/page.opts"); do
    echo "check_man: $1 --help shows $o, but man/$3 does not document it" >&2
    fail=1
  done
  for o in $(LC_ALL=C comm -13 "$tmp/help.opts" "$tmp/page.opts"); do
    echo "check_man: man/$3 documents $o, but $1 --help does not show it" >&2
    fail=1
  done
}

# 2. mcpconn: the main --help and bench --help together against mcpconn.1.
if [ -z "${MCPCONN_BIN:-}" ] || [ -z "${MCP_DEMO_SERVER:-}" ]; then
  echo "check_man: MCPCONN_BIN and MCP_DEMO_SERVER must name the built programs" >&2
  exit 1
fi
if ! "$MCPCONN_BIN" --help >"$tmp/help" || ! "$MCPCONN_BIN" bench --help >>"$tmp/help"; then
  echo "check_man: $MCPCONN_BIN --help failed" >&2
  exit 1
fi
compare mcpconn "$tmp/help" mcpconn.1

# 3. The demo server: its options and its tools.
if ! "$MCP_DEMO_SERVER" --help >"$tmp/demo"; then
  echo "check_man: $MCP_DEMO_SERVER --help failed" >&2
  exit 1
fi
compare mcpconn-demo-server "$tmp/demo" mcpconn-demo-server.1
unescape "$man/mcpconn-demo-server.1" >"$tmp/demo.txt"
tools=$(sed -n '/^Tools:/,$p' "$tmp/demo" | awk 'NR > 1 && /^  [a-z]/ {print $1}')
if [ -z "$tools" ]; then
  echo "check_man: no tools found in mcpconn-demo-server --help" >&2
  fail=1
fi
for t in $tools; do
  if ! grep -q -E "^\.BI? $t( |$)" "$tmp/demo.txt"; then
    echo "check_man: the demo server's tool '$t' is not in man/mcpconn-demo-server.1" >&2
    fail=1
  fi
done

# 4. libmcpconn.3 names only functions that exist in mcpconn.h.
hdr=${srcdir:-.}/lib/include/mcpconn.h
for f in $(grep -o -E 'mcp_[a-z0-9_]+ \(\)' "$man/libmcpconn.3" | sed 's/ ()//' | LC_ALL=C sort -u); do
  if ! grep -q -E "[ *]$f\(" "$hdr"; then
    echo "check_man: man/libmcpconn.3 names $f(), which mcpconn.h does not declare" >&2
    fail=1
  fi
done

if [ "$fail" = 0 ]; then
  echo "check_man: 3 pages render cleanly and match --help"
fi
exit "$fail"
