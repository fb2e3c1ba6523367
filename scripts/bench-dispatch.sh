#!/usr/bin/env bash
# Benchmarks of `runner dispatch` on the sim agent, each against a baseline
# measured in the same run, on a private tmux socket and state dir
# (cmd/runner/bench_dispatch_test.go):
#   latency   done-detection latency after the sim's last output, runner with
#             and without the sim's hook, vs naive hash polling (tmux-cli) and
#             #{window_activity} reading; false and missed "done" counted
#   overhead  wall time of `runner dispatch . --agent sim "say hi"` minus the
#             sim driven directly, with a breakdown from the status history
#   cpu       CPU of N detached idle tasks' supervisors + tmux server + pipes
#             over a watch, vs naive 0.5 s capture polling of the same panes
#
# usage: scripts/bench-dispatch.sh [latency|overhead|cpu|all]   (default all)
# env:   RUNNER_BENCH_TURNS (32)  RUNNER_BENCH_N (20)
#        RUNNER_BENCH_TASKS (50)  RUNNER_BENCH_WATCH (60s)
#        RUNNER_BENCH_CONFIG (a config.json for the runner under test, for what-ifs)
#        RUNNER_BENCH_BIN (a runner binary to measure instead of building this tree)
# Takes about 3 + 0.5 + 3.5 minutes. Needs tmux and git.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
case $what in
latency) re=DoneLatency ;;
overhead) re=DispatchOverhead ;;
cpu) re=IdleTasksCPU ;;
all) re='DoneLatency|DispatchOverhead|IdleTasksCPU' ;;
*) echo "usage: $0 [latency|overhead|cpu|all]" >&2; exit 2 ;;
esac
tmp=$(mktemp -d /tmp/rbb.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
bin=${RUNNER_BENCH_BIN:-$tmp/runner}
[ -n "${RUNNER_BENCH_BIN:-}" ] || go build -o "$tmp/" ./cmd/runner ./cmd/runner/runner-ext
rc=0
RUNNER_BENCH_BIN="$bin" go test ./cmd/runner -run '^$' -bench "^Benchmark($re)\$" -benchtime 1x -timeout 30m >"$tmp/out" 2>&1 || rc=$?
if [ "$rc" -ne 0 ]; then cat "$tmp/out"; exit "$rc"; fi
grep -E '^(#|Benchmark|\s+bench_)' "$tmp/out"
