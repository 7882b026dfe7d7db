#!/bin/sh
# SPDX-License-Identifier: MIT
# fuzz/build.sh: builds the libFuzzer targets with clang, ASan and UBSan,
# straight from the library sources (no configure needed), and runs each
# for a while on a work copy of its committed corpus.
#
# usage: fuzz/build.sh [SECONDS [TARGET...]]
#   SECONDS   how long each target runs (default 60; 0 only builds)
#   TARGET    url sse h1 jsonl jsonrpc (default: these, one after another),
#             or the name X of any other fuzz/fuzz_X.c, which is linked with
#             the whole library; "all" means every fuzz/fuzz_*.c
# environment:
#   FUZZ_OUT    build and work directory (default /tmp/mcpconn-fuzz)
#   CC          a clang that has libFuzzer (default clang; on Debian 12 the
#               runtime comes with clang-14 / libclang-rt-14-dev)
#   FUZZ_JOBS   parallel fuzzing jobs per target (default 1)
#   FUZZ_MERGE  1: afterwards, merge what the run found into
#               fuzz/corpus/TARGET, minimised (review before committing)
#
# A crash leaves its input in $FUZZ_OUT/crash-TARGET-*; reproduce it with
# $FUZZ_OUT/fuzz_TARGET FILE, fix it, and add the file to
# fuzz/corpus/TARGET so that `make check` replays it from then on.
set -eu

src=$(cd "$(dirname "$0")/.." && pwd)
out=${FUZZ_OUT:-/tmp/mcpconn-fuzz}
cc=${CC:-clang}
secs=${1:-60}
[ $# -gt 0 ] && shift
targets=${*:-url sse h1 jsonl jsonrpc}
if [ "$targets" = all ]; then
  targets=$(cd "$src/fuzz" && ls fuzz_*.c | sed 's/^fuzz_//; s/\.c$//')
fi
jobs=${FUZZ_JOBS:-1}

mkdir -p "$out"
# What configure would generate, reduced to what these sources use.
cat > "$out/config.h" <<EOH
#define _GNU_SOURCE 1
#define PACKAGE_VERSION "fuzz"
EOH
sed -e 's/@PACKAGE_VERSION@/fuzz/' -e 's/@MCP_VERSION_NUM@/0/' \
  "$src/lib/include/mcpconn_version.h.in" > "$out/mcpconn_version.h"

cflags="-g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined \
 -fno-sanitize-recover=undefined -Wall -Wextra -Wno-unused-parameter \
 -I$out -I$src/lib/include -I$src/lib -I$src/fuzz"

status=0
for t in $targets; do
  case $t in
    url) srcs="lib/mcp_url.c" libs="" ;;
    sse) srcs="lib/mcp_sse.c" libs="" ;;
    h1) srcs="lib/mcp_h1.c" libs="" ;;
    jsonl) srcs="lib/mcp_jsonl.c" libs="" ;;
    jsonrpc)
      srcs="lib/mcp_jsonrpc.c lib/mcp_jscan.c"
      libs=$(pkg-config --cflags --libs json-c) ;;
    listen)
      srcs="lib/mcp_listen.c lib/mcp_jsonrpc.c lib/mcp_jscan.c"
      libs=$(pkg-config --cflags --libs json-c) ;;
    base64) srcs="lib/mcp_base64.c" libs="" ;;
    oauth)
      # The pure OAuth parts only: linking nothing else shows they need no
      # I/O module, no threads and no OpenSSL.
      srcs="lib/mcp_oauth_parse.c lib/mcp_url.c lib/mcp_sha256.c lib/mcp_base64.c lib/mcp_jsonrpc.c lib/mcp_jscan.c"
      libs=$(pkg-config --cflags --libs json-c) ;;
    toml)
      # The TOML-subset reader alone: it needs json-c and nothing else.
      srcs="lib/mcp_toml.c"
      libs=$(pkg-config --cflags --libs json-c) ;;
    *)
      [ -f "$src/fuzz/fuzz_$t.c" ] || { echo "unknown target: $t" >&2; exit 2; }
      srcs=$(cd "$src" && ls lib/mcp_*.c | grep -v '^lib/mcp_util\.c$' | tr '\n' ' ')
      libs="$(pkg-config --cflags --libs json-c libnghttp2 openssl) -pthread" ;;
  esac
  bin="$out/fuzz_$t"
  echo "== build $t"
  # shellcheck disable=SC2086
  (cd "$src" && $cc $cflags -o "$bin" "fuzz/fuzz_$t.c" lib/mcp_util.c $srcs $libs)
  [ "$secs" -gt 0 ] || continue

  work="$out/corpus/$t"
  mkdir -p "$work"
  dict=""
  [ -f "$src/fuzz/$t.dict" ] && dict="-dict=$src/fuzz/$t.dict"
  par=""
  [ "$jobs" -gt 1 ] && par="-jobs=$jobs -workers=$jobs"
  echo "== run $t for ${secs}s (log: $out/$t.log)"
  # shellcheck disable=SC2086
  if "$bin" -max_total_time="$secs" -print_final_stats=1 -timeout=10 \
      -rss_limit_mb=2048 -artifact_prefix="$out/crash-$t-" $dict $par \
      "$work" "$src/fuzz/corpus/$t" > "$out/$t.log" 2>&1; then
    grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|#[0-9]+ +DONE)' "$out/$t.log" || true
  else
    echo "!! $t failed; see $out/$t.log and $out/crash-$t-*" >&2
    tail -n 30 "$out/$t.log" >&2
    status=1
  fi
  if [ "${FUZZ_MERGE:-0}" = 1 ]; then
    "$bin" -merge=1 $dict "$src/fuzz/corpus/$t" "$work" > "$out/$t.merge.log" 2>&1
  fi
done
exit $status
