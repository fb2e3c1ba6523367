#!/usr/bin/env bash
# The tmux controller's benchmarks, each a ratio against a baseline measured
# in the same run (the machine is shared and noisy):
#   - capture and paste cost against the cheapest tmux round trip;
#   - idle-detection overhead beyond the quiet window, against naive
#     capture polling every 0.5 s;
#   - CPU to watch 50 quiet panes for RUNNER_BENCH_WATCH (default 60s),
#     against naive capture-pane polling every 0.5 s.
# Usage: scripts/bench-tmux.sh [go test flags]
set -euo pipefail
cd "$(dirname "$0")/.."
go test ./tmuxctl -run '^$' -bench 'CaptureAndSend|IdleOverhead|QuietPanesCPU' -benchtime 1x "$@"
