#!/usr/bin/env bash
# Benchmark making a task's worktree (issue 14): a generated repository of
# 20 000 committed files, 200 modified and 50 untracked. runner's way (a
# snapshot of the user's work tree, then `git worktree add` of a new branch
# at it: the uncommitted and untracked files come along) is measured against
# a bare `git worktree add` of HEAD (which leaves them behind), interleaved in
# the same run. Target: task/bare ≤ 1.3.
#
# Usage: scripts/bench-worktree.sh [ITERATIONS]   (default 10)
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-10}"
exec go test -run '^$' -bench '^BenchmarkWorktree20k$' -benchtime "${n}x" -timeout 20m ./gitsnap/
