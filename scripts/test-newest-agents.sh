#!/usr/bin/env bash
# test-newest-agents.sh — the real-agent suite against the NEWEST published
# version of each agent CLI (what users install today), not the pinned ones:
# drift caught before users hit it.
#
#   scripts/test-newest-agents.sh [go test -run REGEXP]
#
# Installs the newest versions (npm's "latest") into a prefix of their own,
# $RUNNER_AGENTS_NEWEST_PREFIX (default ~/.cache/runner/agents-newest), never
# the pinned prefix, with the Node they ask for when the one in PATH is older
# (Claude Code 2.1.332 and Qwen Code 0.24.4 need node >=22: npm's node@22 in
# the same prefix, see install-agents.sh), then runs `go test -tags realagents` with them first on
# PATH and prints one line per CLI and test: PASS or FAIL. Exit 1 when any
# failed. CI stays on the pinned versions (scripts/test-real-agents.sh);
# run this by hand, or from cron, and raise the pins (with new screens) when
# it passes.
set -euo pipefail
cd "$(dirname "$0")/.."
prefix="${RUNNER_AGENTS_NEWEST_PREFIX:-$HOME/.cache/runner/agents-newest}"
run="${1:-RealAgents}"
pkgs=(@anthropic-ai/claude-code@latest @openai/codex@latest @google/gemini-cli@latest opencode-ai@latest @qwen-code/qwen-code@latest
	@mariozechner/pi-coding-agent@latest @github/copilot@latest @factory/cli@latest cline@latest @kilocode/cli@7.7.7)
# Not @kilocode/cli@latest: 7.8.1 does not install here (its platform
# package @kilocode/cli-linux-x64@7.8.1 is not served; install-agents.sh
# says so and fails), which would stop every CLI's run; the pinned 7.7.7
# is its newest that installs, and it is installed here too (the run
# requires every CLI: without it kilo's tests failed "not on PATH").
bindir="$(RUNNER_AGENTS_PREFIX="$prefix" scripts/install-agents.sh "${pkgs[@]}" | tail -n 1)"
export PATH="$bindir:$PATH"
export RUNNER_REAL_AGENTS_REQUIRED=1 DISABLE_AUTOUPDATER=1
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"
# Their versions, read with a TMPDIR of their own, removed after: opencode
# and kilo (bun binaries) extract their native libraries (5-13 MB) to the
# temporary directory at every start, even --version's, and never remove
# them (the tests give them one inside each test's home likewise).
vtmp=$(mktemp -d)
for c in claude codex gemini opencode qwen pi copilot droid cline kilo; do
	printf 'newest: %-9s %s\n' "$c" "$(TMPDIR="$vtmp" "$c" --version 2>&1 | head -n 1)"
done
rm -rf "$vtmp"
printf 'newest: %-9s %s (%s)\n' node "$(node --version)" "$(command -v node)"
log=$(mktemp)
status=0
go test -count=1 -tags realagents -run "$run" -v -timeout 40m ./... >"$log" 2>&1 || status=$?
grep -E '^    --- (PASS|FAIL)' "$log" | sed -E 's/^    --- (PASS|FAIL): ([^ ]+).*/\1 \2/' | sort -k2 || true
echo "newest: full log in $log; exit $status"
exit $status
