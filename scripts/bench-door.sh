#!/usr/bin/env bash
# bench-door.sh — what runner's door (runner/door) costs a sandboxed agent,
# against the same command run directly, in one run on this machine.
#
#   scripts/bench-door.sh [N]        (default 30 runs of each, interleaved)
#
# A sandboxed sim task sleeps in a private tmux server; then N times each,
# alternately: `runner status ID` and `runner msg ID TEXT` run directly (as
# the user would, or an unsandboxed agent), and the same through the task's
# door (RUNNER_DOOR set, as inside the sandbox: the supervisor runs runner
# for it). A hook event costs nothing more: the task's events file is
# bound into the sandbox and appended to as before. Prints the medians and
# the ratios.
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-30}"
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"
command -v bwrap >/dev/null 2>&1 || { echo "bench-door: bwrap is not installed (apt-get install bubblewrap)" >&2; exit 2; }

tmp="$(mktemp -d /tmp/bdoor.XXXXXX)"
export RUNNER_STATE_DIR="$tmp/state" RUNNER_TMUX_SOCKET="$tmp/sock"
unset TMUX RUNNER_DOOR RUNNER_TASK_ID RUNNER_CONFINED
cleanup() { tmux -S "$RUNNER_TMUX_SOCKET" kill-server 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
go build -o "$tmp/" ./cmd/runner ./cmd/runner/runner-ext
r="$tmp/runner"
mkdir -p "$tmp/proj"
git -C "$tmp/proj" init -q
id=$("$r" dispatch "$tmp/proj" --detach --agent sim --sandbox --awareness off --ready-timeout 30s --timeout 10m 'sleep 600s')
sleep 1
door="$RUNNER_STATE_DIR/doors/$id/door.sock"
for _ in $(seq 50); do [ -S "$door" ] && break; sleep 0.1; done
[ -S "$door" ] || { echo "bench-door: no door at $door" >&2; exit 1; }

# ms CMD...: one run's wall time in ms.
ms() { local s e; s=$(date +%s%N); "$@" >/dev/null 2>&1 || true; e=$(date +%s%N); echo $(((e - s) / 1000)); }
median() { sort -n | awk '{ a[NR] = $1 } END { printf "%.2f", (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) / 1000 }'; }
: >"$tmp/sd" >"$tmp/sw" >"$tmp/md" >"$tmp/mw"
for i in $(seq "$n"); do
	ms "$r" status "$id" >>"$tmp/sd"
	ms env RUNNER_DOOR="$door" "$r" status "$id" >>"$tmp/sw"
	ms "$r" msg "$id" "note $i" >>"$tmp/md"
	ms env RUNNER_DOOR="$door" "$r" msg "$id" "door note $i" >>"$tmp/mw"
done
sd=$(median <"$tmp/sd") sw=$(median <"$tmp/sw") md=$(median <"$tmp/md") mw=$(median <"$tmp/mw")
awk -v sd="$sd" -v sw="$sw" -v md="$md" -v mw="$mw" -v n="$n" 'BEGIN {
	printf "runner status   direct %7.2f ms   through the door %7.2f ms   %.2fx  (+%.2f ms, median of %d)\n", sd, sw, sw / sd, sw - sd, n
	printf "runner msg      direct %7.2f ms   through the door %7.2f ms   %.2fx  (+%.2f ms, median of %d)\n", md, mw, mw / md, mw - md, n
	printf "a hook event    the same append to the events file of the task, bound into the sandbox: no extra cost\n"
}'
"$r" cancel "$id" >/dev/null 2>&1 || true
