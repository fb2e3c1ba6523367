#!/usr/bin/env bash
# Benchmarks of groups (dispatch --agents, issue 41) on the sim agent, in a
# repository of 2 000 committed files, on a private tmux socket and state dir:
#   start    wall time of `dispatch --agents sim,…(N) --detach` against N
#            `dispatch --worktree --detach` one after the other, same run,
#            interleaved, for N = 2, 4, 8 (median of REPS each): the ratio
#            group/singles (a group takes one snapshot, each single its own)
#   compare  `runner compare` of an ended group of 8, each candidate having
#            written a file (median of REPS)
#   vote     `runner vote` of that group, per candidate (sim's headless mode)
#
# usage: scripts/bench-group.sh [REPS]   (default 3)
# env:   RUNNER_BENCH_BIN (a runner binary to measure instead of building this tree)
#        RUNNER_BENCH_BASE (a second runner binary: its compare of the same group
#        is timed interleaved with RUNNER_BENCH_BIN's, and the ratio printed)
# Takes about 2 minutes. Needs tmux and git.
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-3}
tmp=$(mktemp -d /tmp/rbg.XXXXXX)
sock=$tmp/s
cleanup() { tmux -S "$sock" kill-server 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
bin=${RUNNER_BENCH_BIN:-$tmp/runner}
[ -n "${RUNNER_BENCH_BIN:-}" ] || go build -o "$tmp/" ./cmd/runner ./cmd/runner/runner-ext
unset TMUX
export HOME=$tmp/home XDG_CONFIG_HOME=$tmp/home/.config XDG_STATE_HOME=$tmp/home/.local/state
export RUNNER_TMUX_SOCKET=$sock GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
mkdir -p "$HOME" "$tmp/repo"
cd "$tmp/repo"
git init -q -b main .
for d in $(seq 1 40); do
	mkdir -p "src/d$d"
	for f in $(seq 1 50); do printf 'package d%d\n\nconst F%d = %d\n' "$d" "$f" "$f" >"src/d$d/f$f.go"; done
done
git add -A && git commit -q -m 'two thousand files'
r() { "$bin" "$@"; }
ms() { date +%s%N | cut -c1-13; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
flags=(--awareness off --ready-timeout 60s --timeout 120s)

waitgroup() {
	for _ in $(seq 1 600); do
		r compare "$1" --json | grep -q '"ended"' && return 0
		sleep 0.2
	done
	echo "bench-group: group $1 did not end" >&2
	return 1
}

echo "# bench-group: $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg), $(git ls-files | wc -l) files, $reps reps"
for n in 2 4 8; do
	agents=$(printf 'sim,%.0s' $(seq 1 "$n")); agents=${agents%,}
	: >"$tmp/singles" && : >"$tmp/group"
	for _ in $(seq 1 "$reps"); do
		t0=$(ms)
		for _ in $(seq 1 "$n"); do r dispatch . --worktree --detach --agent sim "${flags[@]}" 'say hi' >/dev/null 2>&1; done
		echo $(($(ms) - t0)) >>"$tmp/singles"
		r wait --all --timeout 120s >/dev/null 2>&1 || true
		t0=$(ms)
		g=$(r dispatch . --agents "$agents" --detach "${flags[@]}" 'say hi' 2>/dev/null)
		echo $(($(ms) - t0)) >>"$tmp/group"
		waitgroup "$g"
		r gc --older-than 0s --force-worktrees >/dev/null 2>&1 || true
	done
	s=$(median <"$tmp/singles") gm=$(median <"$tmp/group")
	echo "start N=$n: group ${gm} ms, $n singles ${s} ms, ratio $(awk -v a="$gm" -v b="$s" 'BEGIN {printf "%.2f", a/b}')"
done

g=$(r dispatch . --agents sim,sim,sim,sim,sim,sim,sim,sim --check true --detach "${flags[@]}" 'write notes/n.md a note' 2>/dev/null)
waitgroup "$g"
: >"$tmp/compare" && : >"$tmp/compare-base"
for _ in $(seq 1 "$reps"); do
	t0=$(ms); r compare "$g" >/dev/null; echo $(($(ms) - t0)) >>"$tmp/compare"
	if [ -n "${RUNNER_BENCH_BASE:-}" ]; then
		t0=$(ms); "$RUNNER_BENCH_BASE" compare "$g" >/dev/null; echo $(($(ms) - t0)) >>"$tmp/compare-base"
	fi
done
c=$(median <"$tmp/compare")
echo "compare, group of 8 in $(git ls-files | wc -l) files: $c ms"
if [ -n "${RUNNER_BENCH_BASE:-}" ]; then
	b=$(median <"$tmp/compare-base")
	echo "compare, base binary: $b ms; ratio $(awk -v a="$c" -v b="$b" 'BEGIN {printf "%.2f", a/b}')"
fi
t0=$(ms)
r vote "$g" >"$tmp/vote"
v=$(($(ms) - t0))
grep -q 'wins with\|a tie' "$tmp/vote" || { cat "$tmp/vote"; exit 1; }
echo "vote, group of 8: $v ms, $((v / 8)) ms per candidate ($(head -1 "$tmp/vote"))"
