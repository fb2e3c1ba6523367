#!/usr/bin/env bash
# What `wait` said stays true (issue 50), soaked: the scenario of the issue
# run PAIR times and the four-task worktree scenario FOUR times, one after
# another, each in a fresh HOME, repository and tmux server, with the sim.
#
# pair: A and B, --worktree, write the same file (B after 4 s); wait A, wait
#   B, 3 s more (the old notice's turn began 3.5 s after A's end); then A and
#   B are done with one turn each and their own answers ("Wrote same.txt"),
#   `merge A` exits 0 and runner's overlap notice waits in A's inbox.
# four: four --worktree tasks write the same file; wait for all, then
#   `merge` of the first exits 0 right away and every task is done with one
#   turn and its own answer.
#
# Prints a line per failed run (why) and the counts; exits 1 if any run
# failed. Bounded: stops starting runs after LIMIT seconds (default 1800).
#
# Usage: scripts/soak-wait.sh [PAIR] [FOUR] [LIMIT]
set -uo pipefail
cd "$(dirname "$0")/.."
pair=${1:-50}
four=${2:-20}
limit=${3:-1800}
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"

work=$(mktemp -d /tmp/runner-soak.XXXXXX)
trap 'rm -rf "$work"' EXIT
go build -o "$work/" ./cmd/runner ./cmd/runner/runner-ext || exit 1
r="$work/runner"
unset TMUX
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null GIT_AUTHOR_NAME=soak GIT_AUTHOR_EMAIL=soak@example.com \
	GIT_COMMITTER_NAME=soak GIT_COMMITTER_EMAIL=soak@example.com

# fresh N: a new HOME, repository ($repo) and tmux server for run N.
fresh() {
	export HOME="$work/h$1" RUNNER_TMUX_SOCKET="$work/s$1"
	repo="$HOME/repo"
	mkdir -p "$repo" && git -C "$repo" init -q -b main && echo base >"$repo/base.txt" &&
		git -C "$repo" add base.txt && git -C "$repo" commit -q -m base
}
done_server() {
	tmux -S "$RUNNER_TMUX_SOCKET" kill-server 2>/dev/null
	case $HOME in "$work"/h*) rm -rf "$HOME" ;; esac # never a HOME this script did not make
}
field() { "$r" status --json "$1" | sed -n 's/^  "'"$2"'": "\{0,1\}\([^",]*\)"\{0,1\},\{0,1\}$/\1/p'; }

# own ID: done, one turn, its own answer; else says why.
own() {
	local s n a
	s=$(field "$1" status) n=$(field "$1" turn_count) a=$(field "$1" answer)
	[ "$s" = done ] && [ "$n" = 1 ] && [ "$a" = "Wrote same.txt" ] || echo "$1: $s, $n turn(s), answer '$a'"
}

run_pair() {
	local a b why
	cd "$repo" || return 1
	a=$("$r" dispatch . --worktree --detach --agent sim --awareness off 'write same.txt from task A' 2>/dev/null) || { echo "dispatch A"; return; }
	b=$("$r" dispatch . --worktree --detach --agent sim --awareness off "$(printf 'sleep 4s\nwrite same.txt from task B')" 2>/dev/null) || { echo "dispatch B"; return; }
	"$r" wait --timeout 60s "$a" >/dev/null || { echo "wait A exit $?"; return; }
	"$r" wait --timeout 60s "$b" >/dev/null || { echo "wait B exit $?"; return; }
	sleep 3
	why="$(own "$a")$(own "$b")"
	"$r" merge "$a" >"$work/merge" 2>&1 || why="$why merge A exit $?: $(cat "$work/merge")"
	"$r" inbox "$a" 2>/dev/null | grep -q "← runner .* pending .*$b" || why="$why no pending notice about $b in A's inbox"
	echo "$why"
}

run_four() {
	local ids=() i why=""
	cd "$repo" || return 1
	for i in 1 2 3 4; do
		ids+=("$("$r" dispatch . --worktree --detach --agent sim --awareness off "write same.txt from task $i" 2>/dev/null)") || { echo "dispatch $i"; return; }
	done
	"$r" wait --timeout 90s "${ids[@]}" >/dev/null || { echo "wait exit $?"; return; }
	"$r" merge "${ids[0]}" >"$work/merge" 2>&1 || why="merge exit $?: $(cat "$work/merge")"
	for i in "${ids[@]}"; do why="$why$(own "$i")"; done
	echo "$why"
}

start=$SECONDS
soak() { # soak NAME COUNT FUNC
	local ok=0 bad=0 n why
	for n in $(seq 1 "$2"); do
		if [ $((SECONDS - start)) -ge "$limit" ]; then
			echo "$1: stopped at the time limit ($limit s) before run $n"
			break
		fi
		fresh "$1$n" >/dev/null || { echo "$1 run $n: set-up failed"; bad=$((bad + 1)); continue; }
		why=$($3)
		if [ -z "$why" ]; then ok=$((ok + 1)); else bad=$((bad + 1)); echo "$1 run $n FAILED: $why"; fi
		done_server
	done
	echo "$1: $ok passed, $bad failed (load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null))"
	[ "$bad" -eq 0 ]
}
rc=0
soak pair "$pair" run_pair || rc=1
soak four "$four" run_four || rc=1
exit $rc
