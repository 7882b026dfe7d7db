#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/era/exit-on-probe.sh MARK BEHAVIOUR SERVER...: a legacy stdio server
# that, when its first message is not initialize, exits (BEHAVIOUR "exit",
# as rmcp-based servers do) or never answers ("silent"); a start appends a
# line to MARK.  After initialize it is SERVER.
mark=$1 how=$2
shift 2
echo start >> "$mark"
IFS= read -r line
case "$line" in
*'"initialize"'*) ;;
*) if [ "$how" = exit ]; then exit 3; fi; exec sleep 1000 ;;
esac
{ printf '%s\n' "$line"; exec cat; } | "$@"
