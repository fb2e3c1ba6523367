#!/usr/bin/env bash
# Measures `runner watch` with TASKS idle sim tasks (default 50) for
# SECONDS (default 60) against a TUI that polls every pane every 2 s, in
# the same run: CPU-s per minute (runner + the tmux work it causes) and
# the latency from a state write to the screen. Targets (issue 15): watch
# <= 0.3 CPU-s/min with 50 idle tasks; a change on screen <= 100 ms.
#
# usage: scripts/bench-watch.sh [TASKS [SECONDS]]
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/" ./cmd/runner ./cmd/runner/runner-ext
go run ./scripts/benchwatch -runner "$tmp/runner" -tasks "${1:-50}" -seconds "${2:-60}"
