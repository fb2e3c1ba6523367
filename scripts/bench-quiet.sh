#!/usr/bin/env bash
# bench-quiet.sh — what quiet agents cost runner: N detached sim tasks in
# the middle of a turn that prints nothing (`silent`), each with its own
# supervisor (change tracking on: a git project, a snapshot per task), and
# the CPU time of all their supervisors over a window, per minute, against
# N idle `sleep` processes read the same way in the same run.
#
#   scripts/bench-quiet.sh [N [WINDOW]]        (default 50 tasks, 60 s)
#   RUNNER_BENCH_BIN=/path/to/runner           (default: built from here)
#
# Goal (issue "what was measured stays true"): at most 0.02 CPU-s a minute
# for 50 quiet tasks on the 2-core machine. Prints "quiet: N tasks X CPU-s/min".
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-50}"
window="${2:-60}"
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"
tmp="$(mktemp -d /tmp/bquiet.XXXXXX)"
export RUNNER_STATE_DIR="$tmp/state" RUNNER_TMUX_SOCKET="$tmp/sock"
unset TMUX RUNNER_TASK_ID RUNNER_DOOR RUNNER_CONFINED
cleanup() {
	"$r" cancel --all --kill >/dev/null 2>&1 || true
	tmux -S "$RUNNER_TMUX_SOCKET" kill-server 2>/dev/null || true
	kill $(cat "$tmp/sleeps" 2>/dev/null) 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
r="${RUNNER_BENCH_BIN:-}"
if [ -z "$r" ]; then
	go build -o "$tmp/" ./cmd/runner ./cmd/runner/runner-ext
	r="$tmp/runner"
fi
mkdir -p "$tmp/proj"
git -C "$tmp/proj" init -q
echo a >"$tmp/proj/a.txt"
git -C "$tmp/proj" add -A
git -C "$tmp/proj" -c user.name=b -c user.email=b@x commit -qm init
for i in $(seq "$n"); do
	"$r" dispatch "$tmp/proj" --detach --agent sim --awareness off --ready-timeout 120s --timeout 30m "silent 30m" >/dev/null 2>&1
done
# all running (their turns begun), then a settle
for _ in $(seq 240); do
	running=$("$r" ps --json 2>/dev/null | grep -c '"status": "running"' || true)
	[ "$running" -ge "$n" ] && break
	sleep 0.5
done
sleep 5
pids=$("$r" ps --json | sed -n 's/.*"supervisor_pid": \([0-9]*\).*/\1/p' | sort -u)
: >"$tmp/sleeps"
for _ in $(seq "$n"); do
	sleep 100000 &
	echo $! >>"$tmp/sleeps"
done
# ticks: the CPU time of the given pids, all their threads, in ns
# (schedstat: exact, where utime/stime count 10 ms ticks).
ticks() { cat $(for p in "$@"; do ls -d /proc/$p/task/*/schedstat 2>/dev/null; done) 2>/dev/null | awk '{ t += $1 } END { printf "%d", t }'; }
hz=1000000000
s0=$(ticks $pids) b0=$(ticks $(cat "$tmp/sleeps"))
sleep "$window"
s1=$(ticks $pids) b1=$(ticks $(cat "$tmp/sleeps"))
awk -v n="$n" -v s=$((s1 - s0)) -v b=$((b1 - b0)) -v hz="$hz" -v w="$window" -v np="$(echo $pids | wc -w)" 'BEGIN {
	printf "quiet: %d tasks (%d supervisors) %.4f CPU-s/min; %d idle sleeps %.4f CPU-s/min (window %ds)\n", n, np, s / hz * 60 / w, n, b / hz * 60 / w, w
}'
