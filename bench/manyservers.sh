#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/manyservers.sh: the many-servers curve.  Runs bench/manyservers
# (one manager, N demo stdio servers) for each N and prints a table of
# time to the full tool list, RSS per server and threads.  Run it from the
# build directory (or pass it as the first argument); not part of make
# check or bench/run.
#
#   bench/manyservers.sh [BUILD_DIR] [N ...]     (default N: 10 100 300 1000)
set -eu
BUILD=${1:-.}
[ $# -gt 0 ] && shift
[ -x "$BUILD/bench/manyservers" ] || { echo "no $BUILD/bench/manyservers: run make" >&2; exit 1; }
[ $# -gt 0 ] || set -- 10 100 300 1000
printf '%6s %10s %12s %14s %8s\n' servers list_ms rss_kB/server threads_peak ready
for n in "$@"; do
  line=$("$BUILD/bench/manyservers" --servers "$n" --server "$BUILD/bin/mcpconn-demo-server") || true
  echo "$line" >&2
  get() { printf '%s' "$line" | sed -n "s/.*\"$1\":\([^,}]*\).*/\1/p"; }
  printf '%6s %10s %12s %14s %8s\n' "$n" "$(get list_ms)" "$(get rss_per_server_kb)" \
    "$(get threads_peak)" "$(get servers_ready)"
done
