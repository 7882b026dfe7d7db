#!/bin/sh
# SPDX-License-Identifier: MIT
# check_layers.sh: no file in lib/ includes a header of a module in a
# higher layer than its own.  The layers are docs/layers.txt (described in
# docs/ARCHITECTURE.md); every file of lib/ must be in one of them and every
# module named there must exist.  Run by make check (srcdir is set by the
# test harness); `tests/check_layers.sh [SRCDIR]` runs it by hand.
set -u
src=${1:-${srcdir:-.}}
table=$src/docs/layers.txt

if [ ! -f "$table" ]; then
  echo "check_layers: $table is missing" >&2
  exit 1
fi

# One awk program: the table first, then every source file of lib/.
files=$(ls "$src"/lib/*.c "$src"/lib/*.h "$src"/lib/include/*.h 2>/dev/null)
if [ -z "$files" ]; then
  echo "check_layers: no sources under $src/lib" >&2
  exit 1
fi
# Headers configure makes from lib/include/*.h.in count as files of lib/.
inlib=$(for f in $files "$src"/lib/include/*.h.in; do [ -f "$f" ] && basename "$f" .in; done)

# shellcheck disable=SC2086 # $files is a list of paths without spaces
awk -v table="$table" -v inlib="$inlib" '
function modname(path,   b) {
  b = path; sub(/.*\//, "", b); sub(/\.(c|h)$/, "", b); return b
}
function where(m) { return "layer " level[m] ", " lname[level[m]] }
BEGIN {
  bad = 0; n = split(inlib, libfiles, "\n")
  for (i = 1; i <= n; i++) exists[libfiles[i]] = 1
  cur = ""
  while ((getline line < table) > 0) {
    sub(/#.*/, "", line)
    if (line ~ /^[ \t]*$/) continue
    if (line ~ /^[0-9]+[ \t]/) {
      split(line, w, /[ \t]+/); cur = w[1] + 0
      nm = line; sub(/^[0-9]+[ \t]+/, "", nm); sub(/:.*/, "", nm); lname[cur] = nm
      sub(/^[^:]*:/, "", line)
    } else if (line !~ /^[ \t]/ || cur == "") {
      printf "check_layers: %s: cannot read \"%s\"\n", table, line; bad = 1; continue
    }
    k = split(line, w, /[ \t]+/)
    for (i = 1; i <= k; i++) {
      if (w[i] == "") continue
      if (w[i] in level) {
        printf "check_layers: %s: %s is in layer %d and layer %d\n", table, w[i], level[w[i]], cur
        bad = 1
      }
      level[w[i]] = cur
    }
  }
  close(table)
  for (i = 1; i <= n; i++) {
    m = modname(libfiles[i])
    if (!(m in level)) {
      printf "check_layers: lib/%s is in no layer of docs/layers.txt\n", libfiles[i]; bad = 1
    }
  }
  for (m in level)
    if (!((m ".c") in exists) && !((m ".h") in exists)) {
      printf "check_layers: %s: %s names no file lib/%s.c or lib/%s.h\n", table, m, m, m
      bad = 1
    }
}
FNR == 1 {
  file = FILENAME; short = file; sub(/.*\/lib\//, "lib/", short); me = modname(file)
  nfiles++
}
/^[ \t]*#[ \t]*include[ \t]*"/ {
  hdr = $0; sub(/^[^"]*"/, "", hdr); sub(/".*/, "", hdr)
  b = hdr; sub(/.*\//, "", b)
  if (!(b in exists)) next          # config.h, system or generated headers
  them = modname(b); nincludes++
  if (!(them in level) || !(me in level)) next   # reported above
  if (level[them] > level[me]) {
    printf "%s:%d: %s (%s) includes %s (%s)\n", short, FNR, me, where(me), hdr, where(them)
    violations++; bad = 1
  }
}
END {
  if (violations)
    printf "check_layers: %d include(s) of a higher layer; see docs/layers.txt\n", violations
  if (!bad)
    printf "check_layers: %d files, %d includes of lib/ headers, none upward\n", nfiles, nincludes
  exit bad
}' $files
