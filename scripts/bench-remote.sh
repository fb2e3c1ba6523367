#!/usr/bin/env bash
# Benchmark of a dispatch on a host (issue 16): `runner dispatch --host H
# DIR --agent sim "say hi"` through a real sshd on loopback (a throw-away
# key, a high port, its own tmux server "there") against the same dispatch
# on this machine, interleaved in the same run (cmd/runner/bench_remote_test.go):
# the wall time and the done latency after the final frame, as ratios.
# Targets: wall <= 1.5x, done latency <= 2x.
#
# usage: scripts/bench-remote.sh          env: RUNNER_BENCH_N (10)
# Needs tmux, git and openssh-server (sshd).
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d /tmp/rbr.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/" ./cmd/runner ./cmd/runner/runner-ext
rc=0
RUNNER_BENCH_BIN="$tmp/runner" go test ./cmd/runner -run '^$' -bench '^BenchmarkRemoteDispatch$' -benchtime 1x -timeout 20m >"$tmp/out" 2>&1 || rc=$?
if [ "$rc" -ne 0 ]; then cat "$tmp/out"; exit "$rc"; fi
grep -E '^(#|Benchmark)' "$tmp/out"
