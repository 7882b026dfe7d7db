#!/bin/sh
# SPDX-License-Identifier: MIT
# check_exports.sh: the dynamic symbols of the built libmcpconn.so must be
# exactly the names in lib/mcpconn.exports, so that no public symbol is
# added or removed by accident.  Run by make check from the build directory
# (srcdir is set by the test harness); NM overrides the nm program.
set -u
list=${srcdir:-.}/lib/mcpconn.exports
lib=lib/.libs/libmcpconn.so
nm=${NM_PROG:-nm}

if [ ! -f "$list" ]; then
  echo "check_exports: $list is missing" >&2
  exit 1
fi
if [ ! -f "$lib" ]; then
  # A --disable-shared build has no dynamic symbol table to compare.
  echo "check_exports: $lib was not built (static-only build); skipped"
  exit 77
fi

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
# Defined functions and data, without the symbol version (name@@MCPCONN_0);
# the version node itself is an absolute symbol (A) and is not listed.
if ! "$nm" -D --defined-only "$lib" >"$tmp/nm"; then
  echo "check_exports: $nm -D --defined-only $lib failed" >&2
  exit 1
fi
awk '$2 ~ /^[BDGRSTVWiu]$/ { sub(/@.*/, "", $3); print $3 }' "$tmp/nm" |
  LC_ALL=C sort -u >"$tmp/built"
grep -v '^#' "$list" | grep -v '^$' >"$tmp/listed"
if ! LC_ALL=C sort -c "$tmp/listed" 2>/dev/null; then
  echo "check_exports: $list is not sorted (LC_ALL=C sort) or has duplicates" >&2
  exit 1
fi

added=$(LC_ALL=C comm -13 "$tmp/listed" "$tmp/built")
removed=$(LC_ALL=C comm -23 "$tmp/listed" "$tmp/built")
if [ -z "$added" ] && [ -z "$removed" ]; then
  echo "check_exports: $(wc -l <"$tmp/built") exported symbols match $list"
  exit 0
fi
for s in $added; do echo "check_exports: symbol ADDED to $lib: $s" >&2; done
for s in $removed; do echo "check_exports: symbol REMOVED from $lib: $s" >&2; done
cat >&2 <<MSG
check_exports: the library's exported symbols changed.  If that is intended,
  update lib/mcpconn.exports (one name a line, LC_ALL=C sorted) and think about
  the library version in configure.ac (LT_CURRENT/LT_REVISION/LT_AGE): an added
  symbol is a new interface (CURRENT++, REVISION=0, AGE++); a removed or changed
  one breaks users (CURRENT++, REVISION=0, AGE=0) and belongs in NEWS.
MSG
exit 1
