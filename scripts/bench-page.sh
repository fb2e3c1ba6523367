#!/usr/bin/env bash
# bench-page.sh — runner serve's page in headless Chromium (issue 52's
# "Measured"): a real server on 127.0.0.1 over N finished tasks (default
# 20; the shell agent's `true`), the page loaded L times (default 10) after
# a login, and per load, from the navigation's start: the first contentful
# paint (fcp-ms), the task list rendered with every task (list-ms), the event
# stream open (live-ms); medians, and each load's figures in the log. Needs
# chromium (Debian's) and tmux; its own HOME, state and tmux server.
#
#   scripts/bench-page.sh [N] [L]
set -euo pipefail
cd "$(dirname "$0")/.."
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"
RUNNER_BENCH_TASKS=${1:-20} exec go test ./cmd/runner -run '^$' -bench '^BenchmarkServePageFirstPaint$' -benchtime "${2:-10}x" -count 1
