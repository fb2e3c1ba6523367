#!/usr/bin/env bash
# test-real-agents.sh — run the tests tagged `realagents` against the real agent
# CLIs (Claude Code, Codex, Gemini CLI, opencode), offline: they talk to the
# mock model API of runner/mockapi on 127.0.0.1.
#
#   scripts/test-real-agents.sh [go test flags...]
#
# Installs the CLIs first (scripts/install-agents.sh, into
# $RUNNER_AGENTS_PREFIX, default ~/.cache/runner/agents), puts them first on
# PATH, and requires every one of them (a missing CLI fails instead of being
# skipped). Extra arguments go to `go test`.
set -euo pipefail
cd "$(dirname "$0")/.."

bindir="$(scripts/install-agents.sh | tail -n 1)"
export PATH="$bindir:$PATH"
export RUNNER_REAL_AGENTS_REQUIRED=1 DISABLE_AUTOUPDATER=1
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"

go test -count=1 -tags realagents -run RealAgents -v -timeout 30m "$@" ./...
