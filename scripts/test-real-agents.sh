#!/usr/bin/env bash
# test-real-agents.sh — run the tests tagged `realagents` against the real agent
# CLIs (Claude Code, Codex, Gemini CLI, opencode, Qwen Code), offline: they talk
# to the mock model API of internal/mockapi on 127.0.0.1.
#
#   scripts/test-real-agents.sh [go test flags...]
#
# Installs the pinned versions below first (scripts/install-agents.sh, into
# $RUNNER_AGENTS_PREFIX, default ~/.cache/runner/agents; nothing is
# reinstalled when the exact version is there), with a Node their package.json
# engines allow (npm's node@MAJOR in the same prefix when the node in PATH is
# older; today's pins run on Node 20), puts them first on PATH, and
# requires every one of them (a missing CLI fails instead of being skipped).
# Extra arguments go to `go test`. .ci/run runs this after the unit tests.
#
# The pins are the versions whose screens the profiles were built from
# (runner/profile/testdata/screens-real): raise them together with new captures.
set -euo pipefail
cd "$(dirname "$0")/.."

pins=(
	@anthropic-ai/claude-code@2.1.197
	@openai/codex@0.169.0
	@google/gemini-cli@0.61.0
	opencode-ai@1.18.33
	@qwen-code/qwen-code@0.15.10
	@mariozechner/pi-coding-agent@0.73.1
	@github/copilot@1.0.102
	@factory/cli@0.225.1
	cline@3.0.65
	@kilocode/cli@7.7.7
)
bindir="$(scripts/install-agents.sh "${pins[@]}" | tail -n 1)"
export PATH="$bindir:$PATH"
export RUNNER_REAL_AGENTS_REQUIRED=1 DISABLE_AUTOUPDATER=1
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"
echo "test-real-agents: node $(node --version) ($(command -v node))" >&2

start=$(date +%s)
status=0
if [ $# -gt 0 ]; then
	go test -count=1 -tags realagents -run RealAgents -v -timeout 45m "$@" ./... || status=$?
else
	# Two halves side by side: the CLIs wait on the model mock and their
	# own start far more than they compute, and one after the other they
	# passed half an hour once Cline, Kilo and Droid joined. The halves are
	# about even (Limit alone took 10 of 27 minutes in CI). The first
	# half's output is printed after the second's.
	half='^TestRealAgents(Limit|Overlap|Spend|Group)$'
	out=$(mktemp /tmp/runner-real-agents.XXXXXX)
	go test -count=1 -tags realagents -run "$half" -v -timeout 45m ./cmd/runner >"$out" 2>&1 &
	first=$!
	go test -count=1 -tags realagents -run RealAgents -skip "$half" -v -timeout 45m ./... || status=$?
	wait "$first" || status=$?
	echo "test-real-agents: the first half (${half}):" >&2
	cat "$out"
	rm -f "$out"
fi
echo "test-real-agents: $(($(date +%s) - start)) s, exit $status" >&2
exit $status
