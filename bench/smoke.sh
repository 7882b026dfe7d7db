#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/smoke.sh: a `make check` smoke test of `mcpconn bench` (not a
# measurement): 200 calls against the demo server, sequential and with 8 in
# flight from 2 threads, and in each MCP era (--protocol: the demo server
# speaks both; auto ends modern); asserts the exit status, the shape of the
# one JSON line (with the revision negotiated) and ok == calls.  Then the same over HTTP against bench/run's HTTP
# server (tests/mcp-h2-test-server): HTTP/1.1 with SSE answers (--mcp-sse)
# and h2c with JSON answers, 8 in flight.
#
# Environment (set by AM_TESTS_ENVIRONMENT): MCPCONN_BIN, MCP_DEMO_SERVER,
# MCP_H2_TEST_SERVER (the HTTP part is skipped without it).
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
shape="^{\"client\":\"mcpconn/[^\"]*\",\"transport\":\"stdio\",\"protocol\":\"PROTO\",\"calls\":200,\"concurrency\":[0-9]*,\"threads\":[0-9]*,\"ok\":200,\"errors\":0,\"wall_s\":$num,\"calls_per_s\":$num,\"lat_us\":{\"mean\":$num,\"p50\":$num,\"p90\":$num,\"p99\":$num,\"max\":$num},\"init_ms\":$num,\"rss_peak_kb\":[0-9]*,\"cpu_s\":$num}\$"
passed=0
for spec in "2026-07-28|" "2026-07-28|--concurrency 8 --threads 2" \
  "2025-11-25|--protocol legacy" "2026-07-28|--protocol modern --concurrency 8 --threads 2" \
  "2025-06-18|--protocol 2025-06-18"; do
  want=${spec%%|*} opts=${spec#*|}
  # shellcheck disable=SC2086
  out=$("$@" --stdio "$MCP_DEMO_SERVER" --calls 200 --warmup 10 --timeout-ms 10000 --max-seconds 60 $opts) ||
    fail "bench $opts exited $?: $out"
  [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] || fail "bench $opts printed more than one line: $out"
  printf '%s\n' "$out" | grep -q "$(printf '%s' "$shape" | sed "s/PROTO/$want/")" ||
    fail "bench $opts: unexpected output (want protocol $want): $out"
  passed=$((passed + 1))
done
out=$("$@" --stdio "$MCP_DEMO_SERVER" --protocol newest --calls 1 2>&1) && fail "--protocol newest was taken: $out"
printf '%s\n' "$out" | grep -q "'newest'" || fail "--protocol newest: unexpected message: $out"

if [ -n "${MCP_H2_TEST_SERVER:-}" ]; then
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-smoke.XXXXXX") || fail "mktemp"
  srv_pid=
  trap 'exec 3>&-; [ -z "$srv_pid" ] || wait "$srv_pid"; rm -rf "$tmp"' EXIT
  for spec in "http1.1|--allow-http1 --mcp-sse|" "h2c|--max-streams 4096|--h2c"; do
    transport=${spec%%|*}; rest=${spec#*|}; srv_opts=${rest%%|*}; cli_opts=${rest#*|}
    # The server runs until its stdin (our fd 3) closes; its first line is
    # "PORT <n>".
    mkfifo "$tmp/in" "$tmp/out" || fail "mkfifo"
    # shellcheck disable=SC2086
    "$MCP_H2_TEST_SERVER" $srv_opts <"$tmp/in" >"$tmp/out" &
    srv_pid=$!
    exec 3>"$tmp/in"
    read -r word port <"$tmp/out" || fail "$MCP_H2_TEST_SERVER $srv_opts did not start"
    [ "$word" = PORT ] || fail "$MCP_H2_TEST_SERVER $srv_opts printed '$word $port'"
    rm -f "$tmp/in" "$tmp/out"
    hshape=$(printf '%s' "$shape" | sed 's/"transport":"stdio"/"transport":"'"$transport"'"/; s/PROTO/[^"]*/')
    # shellcheck disable=SC2086
    out=$("$@" --url "http://127.0.0.1:$port/mcp" $cli_opts --calls 200 --warmup 10 --concurrency 8 \
      --timeout-ms 10000 --max-seconds 60) || fail "bench $transport ($srv_opts) exited $?: $out"
    printf '%s\n' "$out" | grep -q "$hshape" || fail "bench $transport ($srv_opts): unexpected output: $out"
    exec 3>&-
    wait "$srv_pid" || fail "$MCP_H2_TEST_SERVER $srv_opts exited $?"
    srv_pid=
    passed=$((passed + 1))
  done
fi
echo "$passed passed, 0 failed"
