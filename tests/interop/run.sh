#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/interop/run.sh: the pinned MCP reference server used by
# tests/check_interop.c (see package.json for the exact versions).
#   run.sh install   npm ci (what `npm ci --prefix tests/interop` does)
#   run.sh path      print the server's entry script (fails if not installed)
#   run.sh [stdio]   run server-everything over stdio in the foreground,
#                    for poking at it by hand, e.g. with `mcpconn`
set -eu
here=$(cd "$(dirname "$0")" && pwd)
entry="$here/node_modules/@modelcontextprotocol/server-everything/dist/index.js"

case "${1:-stdio}" in
  install)
    cd "$here" && exec npm ci --no-audit --no-fund ;;
  path)
    if [ ! -f "$entry" ]; then
      echo "not installed: run 'npm ci --prefix tests/interop'" >&2
      exit 1
    fi
    echo "$entry" ;;
  stdio)
    if [ ! -f "$entry" ]; then
      echo "not installed: run 'npm ci --prefix tests/interop'" >&2
      exit 1
    fi
    exec node "$entry" stdio ;;
  *)
    echo "usage: $0 [install|path|stdio]" >&2
    exit 2 ;;
esac
