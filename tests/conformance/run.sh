#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/conformance/run.sh: run the official MCP conformance suite
# (@modelcontextprotocol/conformance, pinned in package.json beside this
# script) against mcpconn's conformance client, the way CI does (.ci/run,
# phase "conformance").
#
#   run.sh --client PATH [--timeout MS] [--output DIR] [--summary FILE]
#          [--requirements REV]... [SCENARIO[@VERSION]]...
#
#   --client PATH        the built tests/conformance/mcpconn-conformance-client
#                        (default: $MCP_CONFORMANCE_CLIENT)
#   --timeout MS         the suite's per-scenario client timeout for the
#                        --requirements runs (default 60000; the client's own
#                        request timeout is set 15 s below it); a scenario
#                        run alone gets the suite's default 30000
#   --output DIR         where the suite writes checks.json, stdout.txt and
#                        stderr.txt per scenario (default: a new temporary dir)
#   --summary FILE       also write "run<TAB>scenario<TAB>scored<TAB>result
#                        <TAB>ok<TAB>fail<TAB>warn" lines there
#   --requirements REV   run the frozen requirement set of revision REV
#                        (2025-11-25 or 2026-07-28): the suite runs all of its
#                        scenarios at once, at that revision's wire, and scores
#                        them
#   SCENARIO[@VERSION]   run one scenario alone (at --spec-version VERSION)
#
# With neither, it runs both requirement sets, then the client scenarios
# that are in neither set, one at a time (EXTRA below).
#
# Every scenario of a run is judged from the suite's checks.json by
# report.mjs (the table and counts at the end): "pass" (no FAILURE or
# WARNING), "expected-failure" (every failing check listed in
# expected-failures.yml), else FAIL; a listed entry that passes is STALE
# and fails the run.  The not-scored scenarios of a requirement set are
# judged the same way, so a regression there is seen although the suite's
# score ignores them.  The run fails when the suite's own verdict (its exit
# code with --expected-failures) or report.mjs says so.
#
# The suite runs with two `node --import` shims (shim/): node20-globsync.mjs
# (its CLI needs fs.globSync, which Node 20 lacks) and keepalive.mjs (its
# mock servers keep idle connections 60 s instead of 5 s, so that a stall
# of the parallel run does not reset a request in flight; see there).
#
# Needs the suite installed: npm ci --prefix tests/conformance
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cli="$here/node_modules/@modelcontextprotocol/conformance/dist/index.js"
shim="$here/shim/node20-globsync.mjs"
baseline="$here/expected-failures.yml"
client=${MCP_CONFORMANCE_CLIENT:-}
timeout=60000
outdir=""
summary=""
revisions=()
singles=()

# Client scenarios in neither frozen set that this client runs: the
# 2025-03-26 OAuth fallbacks, the legacy wire pinned at 2025-06-18, and
# the skills extension's client scenarios (io.modelcontextprotocol/skills).
EXTRA=(
  auth/2025-03-26-oauth-metadata-backcompat
  auth/2025-03-26-oauth-endpoint-fallback
  initialize@2025-06-18
  tools_call@2025-06-18
  sep-2640-client-no-prefetch
  sep-2640-client-verify-digest
  sep-2640-client-verify-size
  sep-2640-client-verify-frontmatter
)

usage() { sed -n '3,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }

while [ $# -gt 0 ]; do
  case "$1" in
    --client) client=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --output) outdir=$2; shift 2 ;;
    --summary) summary=$2; shift 2 ;;
    --requirements) revisions+=("$2"); shift 2 ;;
    -h|--help) usage ;;
    --) shift; singles+=("$@"); break ;;
    -*) echo "run.sh: unknown option $1" >&2; usage ;;
    *) singles+=("$1"); shift ;;
  esac
done
if [ ${#revisions[@]} -eq 0 ] && [ ${#singles[@]} -eq 0 ]; then
  revisions=(2025-11-25 2026-07-28)
  singles=("${EXTRA[@]}")
fi

if [ ! -f "$cli" ]; then
  echo "run.sh: the conformance suite is not installed: run 'npm ci --prefix tests/conformance'" >&2
  exit 2
fi
if [ -z "$client" ] || [ ! -x "$client" ]; then
  echo "run.sh: no conformance client: pass --client PATH to the built" \
       "tests/conformance/mcpconn-conformance-client (make check builds it)" >&2
  exit 2
fi
case "$timeout" in
  ''|*[!0-9]*) echo "run.sh: --timeout wants milliseconds, not '$timeout'" >&2; exit 2 ;;
esac
if [ "$timeout" -lt 20000 ]; then
  echo "run.sh: --timeout $timeout is too short: the client needs 15 s less than it" >&2
  exit 2
fi
client=$(cd "$(dirname "$client")" && pwd)/$(basename "$client")
case "$client" in
  *" "*) echo "run.sh: the suite splits --command on spaces; '$client' has one" >&2; exit 2 ;;
esac
[ -n "$outdir" ] || outdir=$(mktemp -d "${TMPDIR:-/tmp}/mcpconn-conformance.XXXXXX")
mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)
: >"$outdir/runs.tsv"

conformance() { node --import "$shim" --import "$here/shim/keepalive.mjs" "$cli" "$@"; }

echo "conformance $(conformance --version), node $(node --version), client $client"
echo "results in $outdir"
failed=0

# run_suite LABEL KIND WHAT DIR ARGS...: one suite invocation, logged to
# DIR.log; its exit code and time go to runs.tsv.
run_suite() {
  local label=$1 kind=$2 what=$3 dir=$4; shift 4
  local log="$dir.log" t0 rc dt
  mkdir -p "$dir"
  t0=$(date +%s%N)
  set +e
  conformance client --command "$client" --expected-failures "$baseline" -o "$dir" "$@" \
    >"$log" 2>&1 </dev/null
  rc=$?
  set -e
  dt=$(( ($(date +%s%N) - t0) / 100000000 ))
  dt="$((dt / 10)).$((dt % 10))"
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$label" "$kind" "$what" "$dir" "$rc" "$dt" >>"$outdir/runs.tsv"
  printf '%-18s %-42s exit %s, %6ss\n' "$label" "$what" "$rc" "$dt"
  if [ "$rc" -ne 0 ]; then
    failed=1
    echo "---- $log (the suite's verdict)"
    sed -n '/=== SUITE SUMMARY ===/,$p;/OVERALL/p;/Unexpected failures/,$p' "$log" | uniq
    echo "----"
  fi
}

for rev in "${revisions[@]}"; do
  # The client's requests wait up to 15 s less than the suite waits for it.
  MCPCONN_CONFORMANCE_TIMEOUT_MS=$((timeout - 15000)) \
    run_suite "$rev" requirements "$rev" "$outdir/requirements-$rev" \
    --requirements "$rev" --timeout "$timeout"
done
for s in "${singles[@]}"; do
  name=${s%@*}
  args=(--scenario "$name")
  [ "$name" = "$s" ] || args+=(--spec-version "${s#*@}")
  label=alone; [ "$name" = "$s" ] || label="alone@${s#*@}"
  run_suite "$label" scenario "$name" "$outdir/scenario-$(echo "$s" | tr '/@' '__')" "${args[@]}"
done

echo
if ! node "$here/report.mjs" "$baseline" "$outdir" ${summary:+"$summary"}; then
  failed=1
fi
if [ "$failed" -ne 0 ]; then
  echo "conformance: FAILED (see the table above and the logs in $outdir)"
  for f in "$outdir"/*.log; do
    if grep -q 'OVERALL: FAILED\|Unexpected failures\|Stale baseline' "$f"; then
      echo "---- $f"
      tail -n 60 "$f"
    fi
  done
fi
exit "$failed"
