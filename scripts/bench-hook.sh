#!/usr/bin/env bash
# bench-hook.sh — how soon runner records the end of a turn, against the
# real Claude Code and Codex CLIs answering through the mock model API
# (offline, 127.0.0.1), and what the turn-end hook command costs.
#
#   scripts/bench-hook.sh [TURNS]        (default 20 turns per CLI)
#
# 1. The hook commands alone, N runs each with a Claude-style Stop payload
#    on stdin: the appender runner installs for Claude Code, Codex, Gemini
#    CLI and Qwen Code (`{ cat; echo; } >> EVENTS`, run by sh), `runner
#    hook` (the sim's, and any profile that names {command}), and the
#    trivial user hook `date +%s.%N >> FILE` as the baseline.
# 2. TestRealAgentsHookBench: TURNS turns each of Claude Code, Codex, Cline
#    CLI, Kilo Code and Factory Droid (each against a trivial turn-end hook
#    of its own user: Cline's ~/.cline/hooks/TaskComplete.sh, a Kilo plugin
#    on session.idle, Droid's Stop hook in ~/.factory/settings.json); per
#    turn, the delay from the mock's final stream event to the `done` in
#    the record, and (Claude) to the line a trivial Stop hook in the
#    user's own ~/.claude/settings.json wrote — which must keep working.
#    It prints the medians and the ratio (target: at most 2×).
set -euo pipefail
cd "$(dirname "$0")/.."
turns="${1:-20}"
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/" ./cmd/runner ./cmd/runner/runner-ext
payload='{"session_id":"s","hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"I ran the command. The file hello.txt was created in the project directory."}'
printf '%s' "$payload" >"$tmp/payload.json"
export RUNNER_STATE_DIR="$tmp/state"
mkdir -p "$RUNNER_STATE_DIR/events"

# time_cmd NAME N CMD: the mean wall time of N runs of sh -c CMD (as the
# agents run their hooks), stdin the payload, in milliseconds.
time_cmd() {
	local name=$1 n=$2 cmd=$3 start end
	start=$(date +%s%N)
	for _ in $(seq "$n"); do sh -c "$cmd" <"$tmp/payload.json"; done
	end=$(date +%s%N)
	awk -v n="$n" -v d="$((end - start))" -v name="$name" 'BEGIN { printf "%-34s %7.2f ms per run (%d runs)\n", name, d / n / 1e6, n }'
}
echo "== hook command start-up (sh -c CMD, payload on stdin)"
n=200
time_cmd "baseline: date +%s.%N >> file" $n "date +%s.%N >> '$tmp/date.txt'"
time_cmd "appender: { cat; echo; } >> file" $n "{ cat; echo; } >> '$tmp/state/events/t_bench001.jsonl'"
time_cmd "runner hook --task ID" $n "'$tmp/runner' hook --task t_bench002"
time_cmd "baseline: true (sh alone)" $n "true"

echo
echo "== end of turn, real CLIs through the mock ($turns turns each)"
# Kilo Code's newest (7.8.1) does not install (its platform package is not
# served): the version the real-agent suite pins.
bindir="$(scripts/install-agents.sh @anthropic-ai/claude-code @openai/codex cline @kilocode/cli@7.7.7 @factory/cli@0.225.1 | tail -n 1)"
export PATH="$bindir:$PATH" RUNNER_REAL_AGENTS_REQUIRED=1 DISABLE_AUTOUPDATER=1 RUNNER_BENCH_TURNS="$turns"
unset RUNNER_STATE_DIR
go test -count=1 -tags realagents -run 'TestRealAgentsHookBench' -v -timeout 60m ./cmd/runner |
	grep -E 'final stream event|user.s trivial|ratio|FAIL|ok ' || true
