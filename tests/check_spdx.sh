#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/check_spdx.sh: every source file carries the licence's SPDX line
# (SPDX-License-Identifier: MIT) in its first three lines: C sources and
# headers, shell and Node scripts, the autotools files and the man pages.
# Test data (fuzz corpora, the config corpus) and npm's node_modules are
# not sources.  Prints each file without it and fails.
srcdir=${srcdir:-.}
cd "$srcdir" || exit 1
missing=0
checked=0
for f in $(find lib bin tests fuzz bench examples man \
             \( -name node_modules -o -name corpus -o -name config-corpus \) -prune -o \
             -type f \( -name '*.c' -o -name '*.h' -o -name '*.h.in' -o -name '*.sh' \
                        -o -name '*.mjs' -o -name '*.1' -o -name '*.3' \) -print 2>/dev/null) \
         configure.ac Makefile.am; do
  [ -f "$f" ] || continue
  checked=$((checked + 1))
  if ! head -n 3 "$f" | grep -q 'SPDX-License-Identifier: MIT'; then
    echo "no SPDX-License-Identifier line: $f"
    missing=$((missing + 1))
  fi
done
echo "$checked files checked, $missing without an SPDX line"
[ "$checked" -gt 100 ] || { echo "too few files found under $srcdir"; exit 1; }
[ "$missing" -eq 0 ]
