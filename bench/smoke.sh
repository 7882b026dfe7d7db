#!/bin/sh
# bench/smoke.sh: a `make check` smoke test of `mcpconn bench` (not a
# measurement): 200 calls against the demo server, sequential and with 8 in
# flight from 2 threads; asserts the exit status, the shape of the one JSON
# line and ok == calls.
#
# Environment (set by AM_TESTS_ENVIRONMENT): MCPCONN_BIN, MCP_DEMO_SERVER.
# Uses `$MCPCONN_BIN bench`, or bench/mcpconn-bench-dev next to it until the
# CLI dispatches to the subcommand.
set -u
fail() { echo "FAIL: $*"; exit 1; }
[ -n "${MCPCONN_BIN:-}" ] && [ -n "${MCP_DEMO_SERVER:-}" ] || fail "MCPCONN_BIN and MCP_DEMO_SERVER must be set"

if "$MCPCONN_BIN" bench --help >/dev/null 2>&1; then
  set -- "$MCPCONN_BIN" bench
else
  set -- "$(dirname "$MCPCONN_BIN")/../bench/mcpconn-bench-dev"
fi

num='[0-9][0-9.]*'
shape="^{\"client\":\"mcpconn/[^\"]*\",\"transport\":\"stdio\",\"calls\":200,\"concurrency\":[0-9]*,\"threads\":[0-9]*,\"ok\":200,\"errors\":0,\"wall_s\":$num,\"calls_per_s\":$num,\"lat_us\":{\"mean\":$num,\"p50\":$num,\"p90\":$num,\"p99\":$num,\"max\":$num},\"init_ms\":$num,\"rss_peak_kb\":[0-9]*,\"cpu_s\":$num}\$"
passed=0
for opts in "" "--concurrency 8 --threads 2"; do
  # shellcheck disable=SC2086
  out=$("$@" --stdio "$MCP_DEMO_SERVER" --calls 200 --warmup 10 --timeout-ms 10000 --max-seconds 60 $opts) ||
    fail "bench $opts exited $?: $out"
  [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] || fail "bench $opts printed more than one line: $out"
  printf '%s\n' "$out" | grep -q "$shape" || fail "bench $opts: unexpected output: $out"
  passed=$((passed + 1))
done
echo "$passed passed, 0 failed"
