#!/usr/bin/env bash
# Benchmark the merge forecast (issue 30, item 4): 20 task branches, each in
# a worktree made as dispatch --worktree makes it, each with an uncommitted
# change, two pairs conflicting; `runner merge --check` / `worktree list`
# forecast all 20 merges into the target and the 190 pairs. Measured in the
# same run against one `git merge-tree --write-tree` call ("one") and
# against 210 separate merge-tree calls ("naive"), interleaved.
#
# Usage: scripts/bench-forecast.sh [ITERATIONS] [FILES]   (default 10, 2000)
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-10}"
FORECAST_FILES="${2:-2000}" exec go test -run '^$' -bench '^BenchmarkForecast20$' -benchtime "${n}x" -timeout 30m ./gitsnap/
