#!/usr/bin/env bash
# bench-serve.sh — runner serve at rest (issue 52's "Measured"): with N
# tasks in the state (default 100: the shell agent's `true`, detached) and
# F event followers (default 20: SSE streams held open), the server's
# resident memory and its CPU over 20 s with nothing happening. Its own
# HOME, state and tmux server; loopback only; about a minute.
#
#   scripts/bench-serve.sh [N] [F]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-100} f=${2:-20}
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"
work=$(mktemp -d /tmp/runner-bench-serve.XXXXXX)
cleanup() {
	[ -n "${spid:-}" ] && kill "$spid" 2>/dev/null
	jobs -p | xargs -r kill 2>/dev/null
	tmux -S "$work/s" kill-server 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
go build -o "$work/" ./cmd/runner ./cmd/runner/runner-ext
r="$work/runner"
export HOME="$work/h" RUNNER_TMUX_SOCKET="$work/s" GIT_CONFIG_GLOBAL=/dev/null
mkdir -p "$HOME" "$work/p"
git -C "$work/p" init -q
for _ in $(seq "$n"); do "$r" dispatch "$work/p" --detach --agent shell --awareness off 'true' >/dev/null 2>&1; done
"$r" wait --all --timeout 5m >/dev/null 2>&1 || true
port=$((20000 + RANDOM % 20000))
"$r" serve --listen "127.0.0.1:$port" >"$work/serve.log" 2>&1 &
spid=$!
for _ in $(seq 100); do grep -q listening "$work/serve.log" 2>/dev/null && break; sleep 0.1; done
act=$("$r" serve --token | awk '/^act/ {print $2}')
for _ in $(seq "$f"); do
	curl -sN -H "Authorization: Bearer $act" "http://127.0.0.1:$port/api/v1/events" >/dev/null 2>&1 &
done
sleep 5 # the followers caught up with the stream
cpu() { awk '{print $14 + $15}' "/proc/$spid/stat"; }
c0=$(cpu)
sleep 20
c1=$(cpu)
rss=$(awk '/^VmRSS/ {print $2}' "/proc/$spid/status")
tasks=$(curl -s -H "Authorization: Bearer $act" "http://127.0.0.1:$port/api/v1/tasks" | grep -c '"id": "t_' || true)
echo "serve: $tasks tasks, $f followers: RSS $((rss / 1024)) MiB; CPU over 20 s idle: $(((c1 - c0) * 10)) ms"
