#!/usr/bin/env bash
# Benchmark runner's git snapshot (issue 4 §3): a generated repository of
# 20 000 committed files, 200 modified and 50 untracked. Take is measured
# against the bare plumbing sequence (temporary index: read-tree HEAD, add -A,
# write-tree, commit-tree) and `git stash create`, interleaved in the same run.
# The take/bare ratio is the one to watch (target ≤ 0.6).
#
# Usage: scripts/bench-snapshot.sh [ITERATIONS]   (default 10)
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-10}"
exec go test -run '^$' -bench '^BenchmarkSnapshot20k$' -benchtime "${n}x" -timeout 20m ./gitsnap/
