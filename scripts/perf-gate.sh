#!/usr/bin/env bash
# perf-gate.sh — the performance gate .ci/run runs: the figures that were
# met once and then undone by a later feature, each measured on the sim
# agent against a baseline in the same run (cmd/runner BenchmarkGate: the
# turn's end after the hook when the spend comes late, quiet tasks' CPU,
# dispatch overhead, a dispatch's CPU with 1000 finished tasks in the index
# against the plain rig's, `runner version`'s start against a hello-world
# Go binary built in the same run, a burst of dispatches). It prints the
# figures and exits 1 on a clear regression. About 75 s; needs tmux, git
# and go.
#
#   scripts/perf-gate.sh [RUNS]            (default 1; RUNS > 1 shows it does not flake)
#   RUNNER_GATE_REPORT=1                   print, never fail
#   RUNNER_BENCH_BIN=/path/to/runner       gate another binary (e.g. an older one)
#   RUNNER_GATE_BASELINE_BIN / _REV        the baseline binary (default: built from d07a4d7)
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-1}"
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"
start=$(date +%s)
# The baseline binary some figures are held against in the same sitting
# (quiet tasks): the last landed main of issue 51's round, built from this
# clone's history (skipped where it has not that commit). Built as the
# release is (CGO_ENABLED=0), like the binary under test (goBuildStatic).
base_rev="${RUNNER_GATE_BASELINE_REV:-d07a4d7}"
if [ -z "${RUNNER_GATE_BASELINE_BIN:-}" ] && git cat-file -e "$base_rev^{commit}" 2>/dev/null; then
	bt=$(mktemp -d /tmp/runner-gate-base.XXXXXX)
	trap 'git worktree remove --force "$bt/src" >/dev/null 2>&1; rm -rf "$bt"' EXIT
	if git worktree add -q --detach "$bt/src" "$base_rev" && (cd "$bt/src" && CGO_ENABLED=0 go build -trimpath -buildvcs=false -o "$bt/runner" ./cmd/runner); then
		export RUNNER_GATE_BASELINE_BIN="$bt/runner"
		echo "perf-gate: baseline binary of $base_rev" >&2
	fi
fi
status=0
for i in $(seq "$runs"); do
	[ "$runs" -gt 1 ] && echo "perf-gate: run $i of $runs"
	# pipefail: a failed go test fails the pipeline
	if ! go test -count=1 -run '^$' -bench '^BenchmarkGate$' -benchtime 1x ./cmd/runner 2>&1 | grep -E '^gate:|FAIL|^ok|the performance gate'; then
		status=1
	fi
done
echo "perf-gate: $(($(date +%s) - start)) s, exit $status" >&2
exit $status
