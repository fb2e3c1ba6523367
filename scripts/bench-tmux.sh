#!/usr/bin/env bash
# The tmux controller's benchmarks, each a ratio against a baseline measured
# in the same run (the machine is shared and noisy):
#   - capture and paste cost against the cheapest tmux round trip;
#   - idle-detection overhead beyond the quiet window, against naive
#     capture polling every 0.5 s;
#   - CPU to watch 50 quiet panes for RUNNER_BENCH_WATCH (default 60s),
#     against naive capture-pane polling every 0.5 s;
#   - CPU per minute of 50 quiet supervisors (runner's Monitor, each in its
#     own process) against the same naive poll and the 2 s liveness poll it
#     had before pidfds (RUNNER_BENCH_TASKS, RUNNER_BENCH_WATCH).
# Usage: scripts/bench-tmux.sh [go test flags]
set -euo pipefail
cd "$(dirname "$0")/.."
go test ./tmuxctl -run '^$' -bench 'CaptureAndSend|IdleOverhead|QuietPanesCPU' -benchtime 1x "$@"
go test ./runner -run '^$' -bench 'QuietSupervisorsCPU' -benchtime 1x -timeout 30m "$@"
