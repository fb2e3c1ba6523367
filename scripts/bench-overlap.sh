#!/usr/bin/env bash
# Overlap radar, measured (issue 30): a repository of FILES files (default
# 20 000), tasks of the simulated agent in worktrees of their own.
#
# 1. Latency. Task A writes shared.txt and ends; task B, in the middle of a
#    long turn, writes shared.txt too. Printed: from B's write (the file's
#    mtime) to both overlap records, to the notice queued for A (idle: it
#    waits for A's next turn, issue 50), and to B's notice delivered (within
#    its turn, through the sim's context hook at its next tool call) —
#    target: the records within 5 s.
# 2. CPU. N tasks (default 20) working at once (the sim's spinner: their
#    panes show output all the time, so their changed files are looked at
#    every few seconds), without writing; the CPU of their supervisors over
#    20 s, against the same with the runner of BASE (default: the commit
#    before the tracking), which did not look, in the same run. Done (idle)
#    tasks have no supervisor: tracking them costs nothing.
#
# Usage: scripts/bench-overlap.sh [FILES] [N] [BASE]
set -euo pipefail
cd "$(dirname "$0")/.."
files=${1:-20000}
n=${2:-20}
base=${3:-85953a5^}
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"

work=$(mktemp -d /tmp/runner-overlap.XXXXXX)
sock="$work/tmux.sock"
cleanup() {
	tmux -S "$sock" kill-server 2>/dev/null || true
	git worktree remove --force "$work/base-src" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
go build -o "$work/" ./cmd/runner ./cmd/runner/runner-ext
git worktree add -q --detach "$work/base-src" "$base"
(cd "$work/base-src" && go build -o "$work/runner-base" ./cmd/runner)
unset TMUX
export RUNNER_TMUX_SOCKET="$sock"
export GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com \
	GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com

repo="$work/repo"
mkdir -p "$repo"
for ((i = 0; i < files; i++)); do
	d="$repo/d$((i / 100))"
	((i % 100 == 0)) && mkdir -p "$d"
	printf 'file %d\n' "$i" >"$d/f$i.txt"
done
git -C "$repo" init -q
git -C "$repo" add -A
git -C "$repo" commit -qm generated
echo "repository: $files files"

now() { date +%s.%N; }
sub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a - b }'; }

# 1. Latency
export RUNNER_STATE_DIR="$work/state"
r="$work/runner"
a=$("$r" dispatch "$repo" --worktree --detach --agent sim --awareness off 'write shared.txt one' 2>/dev/null)
"$r" wait --timeout 120s "$a" >/dev/null
printf 'sleep 2s\nwrite shared.txt two\nsleep 15s\nwrite b2.txt x\n' >"$work/b.task"
b=$("$r" dispatch "$repo" --worktree --detach --agent sim --awareness off --file "$work/b.task" 2>/dev/null)
bdir=$("$r" status --json "$b" | sed -n 's/^  "dir": "\(.*\)",$/\1/p')
while [ ! -e "$bdir/shared.txt" ]; do sleep 0.02; done
wrote=$(stat -c %.9Y "$bdir/shared.txt")
recorded="" amsg="" bmsg=""
deadline=$(($(date +%s) + 90))
while [ -z "$bmsg" ] && [ "$(date +%s)" -lt "$deadline" ]; do
	if [ -z "$recorded" ] && "$r" status --json "$a" | grep -q "\"task\": \"$b\"" && "$r" status --json "$b" | grep -q "\"task\": \"$a\""; then
		recorded=$(now)
	fi
	if [ -z "$amsg" ] && "$r" inbox --json "$a" | grep -q '"status": "pending"'; then amsg=$(now); fi
	if [ -z "$bmsg" ] && "$r" inbox --json "$b" | grep -q '"status": "delivered"'; then bmsg=$(now); fi
	sleep 0.05
done
[ -n "$recorded" ] || { echo "no overlap recorded within 90 s"; exit 1; }
echo "B's write → both overlap records: $(sub "$recorded" "$wrote") s (target ≤ 5 s)"
echo "B's write → notice queued for A (idle, not woken): $(sub "${amsg:-$wrote}" "$wrote") s"
echo "B's write → notice delivered to B (within its turn, at its tool call after 15 s): $(sub "${bmsg:-$wrote}" "$wrote") s"
"$r" wait --timeout 60s "$a" "$b" >/dev/null || true
tmux -S "$sock" kill-server 2>/dev/null || true

# 2. CPU of N working supervisors, this runner against BASE
cpu() { # "pid ticks" for each supervisor of the state dir $1 (its git children too)
	local p
	for p in $(pgrep -f "supervise" || true); do
		if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "RUNNER_STATE_DIR=$1"; then
			echo "$p $(awk '{ print $14 + $15 + $16 + $17 }' "/proc/$p/stat" 2>/dev/null || echo 0)"
		fi
	done
}
for which in new base; do
	bin="$work/runner"
	[ "$which" = base ] && bin="$work/runner-base"
	export RUNNER_STATE_DIR="$work/state-$which"
	ids=()
	for ((i = 0; i < n; i++)); do
		ids+=("$("$bin" dispatch "$repo" --worktree --detach --agent sim --awareness off 'sleep 150s' 2>/dev/null)")
	done
	sleep 10 # all started, their first looks done
	cpu "$RUNNER_STATE_DIR" >"$work/cpu0"
	sleep 20
	cpu "$RUNNER_STATE_DIR" >"$work/cpu1"
	# the supervisors alive at both samples
	got=$(awk -v t="$(getconf CLK_TCK)" 'NR == FNR { a[$1] = $2; next } ($1 in a) { s += $2 - a[$1]; k++ } END { printf "%.2f %d", s / t, k }' "$work/cpu0" "$work/cpu1")
	echo "$which: $got (CPU s over 20 s, supervisors)"
	eval "cpu_$which=${got% *}"
	"$bin" cancel --kill "${ids[@]}" >/dev/null 2>&1 || true
	tmux -S "$sock" kill-server 2>/dev/null || true
done
echo "$n working supervisors, CPU over 20 s: $cpu_new s with tracking, $cpu_base s without (base $base); ratio $(awk -v a="$cpu_new" -v b="$cpu_base" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }')"
