#!/usr/bin/env bash
# tests/conformance/run.sh: run the official MCP conformance suite
# (@modelcontextprotocol/conformance, pinned in package.json beside this
# script) against mcpconn's conformance client, one scenario at a time, the
# way CI does (.ci/run, phase "conformance").
#
#   run.sh --client PATH [--timeout MS] [--output DIR] [--summary FILE] [SCENARIO...]
#
#   --client PATH   the built tests/conformance/mcpconn-conformance-client
#                   (default: $MCP_CONFORMANCE_CLIENT)
#   --timeout MS    the suite's per-scenario client timeout (default 30000)
#   --output DIR    where the suite writes checks.json, stdout.txt and
#                   stderr.txt per scenario (default: a new temporary dir)
#   --summary FILE  also write "scenario<TAB>result<TAB>seconds" lines there
#   SCENARIO...     default: every client scenario the pinned suite lists
#
# Scenarios run one at a time: the timing-sensitive sse-retry is flaky when
# they all run in parallel on a 2-core machine.
#
# A scenario passes when the suite's verdict is "OVERALL: PASSED": no check
# FAILURE or WARNING, the client exited 0 and in time.  A scenario listed in
# expected-failures.yml must fail (the suite itself reports a listed scenario
# that passes as a stale baseline entry, which fails the run).  The baseline
# is empty: every scenario, OAuth included, must pass.
#
# Needs the suite installed: npm ci --prefix tests/conformance
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cli="$here/node_modules/@modelcontextprotocol/conformance/dist/index.js"
shim="$here/shim/node20-globsync.mjs"
baseline="$here/expected-failures.yml"
client=${MCP_CONFORMANCE_CLIENT:-}
timeout=30000
outdir=""
summary=""

usage() { sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

while [ $# -gt 0 ]; do
  case "$1" in
    --client) client=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --output) outdir=$2; shift 2 ;;
    --summary) summary=$2; shift 2 ;;
    -h|--help) usage ;;
    --) shift; break ;;
    -*) echo "run.sh: unknown option $1" >&2; usage ;;
    *) break ;;
  esac
done

if [ ! -f "$cli" ]; then
  echo "run.sh: the conformance suite is not installed: run 'npm ci --prefix tests/conformance'" >&2
  exit 2
fi
if [ -z "$client" ] || [ ! -x "$client" ]; then
  echo "run.sh: no conformance client: pass --client PATH to the built" \
       "tests/conformance/mcpconn-conformance-client (make check builds it)" >&2
  exit 2
fi
client=$(cd "$(dirname "$client")" && pwd)/$(basename "$client")
case "$client" in
  *" "*) echo "run.sh: the suite splits --command on spaces; '$client' has one" >&2; exit 2 ;;
esac
[ -n "$outdir" ] || outdir=$(mktemp -d "${TMPDIR:-/tmp}/mcpconn-conformance.XXXXXX")
mkdir -p "$outdir"

conformance() { node --import "$shim" "$cli" "$@"; }

# Every client scenario of the pinned suite, from its own list.
all_scenarios() {
  conformance list | awk '/^Client scenarios/ {on=1; next} /^[^ ]/ {on=0} on && /^  - / {print $2}'
}

baseline_names() { sed -n 's/^[[:space:]]*-[[:space:]]*\([^ #]*\).*/\1/p' "$baseline"; }
in_baseline() { baseline_names | grep -qxF -- "$1"; }

known=$(all_scenarios)
if [ -z "$known" ]; then
  echo "run.sh: the suite listed no client scenarios" >&2
  exit 1
fi
for name in $(baseline_names); do
  if ! grep -qxF -- "$name" <<<"$known"; then
    echo "run.sh: $baseline names '$name', which the suite does not have" >&2
    exit 1
  fi
done
if [ $# -gt 0 ]; then scenarios=("$@"); else mapfile -t scenarios <<<"$known"; fi

echo "conformance $(conformance --version), node $(node --version), client $client"
echo "results in $outdir"
failed=0
declare -a lines=()
for s in "${scenarios[@]}"; do
  log="$outdir/$(echo "$s" | tr '/' '_').log"
  t0=$(date +%s%N)
  set +e
  conformance client --command "$client" --scenario "$s" --timeout "$timeout" \
    --expected-failures "$baseline" -o "$outdir" >"$log" 2>&1 </dev/null
  rc=$?
  set -e
  dt=$(( ($(date +%s%N) - t0) / 100000000 ))
  dt="$((dt / 10)).$((dt % 10))"
  if in_baseline "$s"; then
    if [ "$rc" -eq 0 ] && grep -q 'OVERALL: FAILED' "$log"; then
      result="expected-failure"
    elif grep -q 'Stale baseline' "$log" || grep -q 'OVERALL: PASSED' "$log"; then
      result="STALE"   # passes now: take it out of expected-failures.yml
    else
      result="ERROR"
    fi
  else
    if [ "$rc" -eq 0 ] && grep -q 'OVERALL: PASSED' "$log"; then
      result="pass"
    else
      result="FAIL"
    fi
  fi
  case "$result" in pass|expected-failure) ;; *) failed=1 ;; esac
  printf '%-48s %-17s %6ss\n' "$s" "$result" "$dt"
  lines+=("$s	$result	$dt")
  if [ "$result" != pass ] && [ "$result" != expected-failure ]; then
    echo "---- $log"
    cat "$log"
    echo "----"
  fi
done
if [ -n "$summary" ]; then printf '%s\n' "${lines[@]}" >"$summary"; fi

npass=$(printf '%s\n' "${lines[@]}" | awk -F'\t' '$2=="pass"' | wc -l)
nxfail=$(printf '%s\n' "${lines[@]}" | awk -F'\t' '$2=="expected-failure"' | wc -l)
nbad=$(( ${#lines[@]} - npass - nxfail ))
echo "conformance: $npass passed, $nxfail expected failures (baseline), $nbad unexpected"
exit "$failed"
