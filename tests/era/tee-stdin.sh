#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/era/tee-stdin.sh LOG MARK CMD...: runs CMD with its stdin copied to
# LOG (every line the client sent) and one line appended to MARK per start.
log=$1 mark=$2
shift 2
echo start >> "$mark"
tee -a "$log" | exec "$@"
