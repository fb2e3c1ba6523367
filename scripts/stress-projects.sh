#!/usr/bin/env bash
# Many concurrent `runner project add` processes, some killed with SIGKILL
# mid-way, against one fresh state directory. Checks that the state still
# parses and that every add that exited 0 is in it.
#
# usage: scripts/stress-projects.sh [PROCS] [KILLS]   (defaults 64 and 16)
set -euo pipefail
cd "$(dirname "$0")/.."
procs=${1:-64}
kills=${2:-16}

work=$(mktemp -d /tmp/runner-stress.XXXXXX)
trap 'rm -rf "$work"' EXIT
go build -o "$work/" ./cmd/runner ./cmd/runner/runner-ext
export RUNNER_STATE_DIR="$work/state" RUNNER_LOCK_TIMEOUT=120s
mkdir -p "$work/dirs"

for i in $(seq 1 "$procs"); do
	mkdir -p "$work/dirs/p$i"
	( rc=0; "$work/runner" project add "p$i" "$work/dirs/p$i" >/dev/null 2>"$work/err.$i" || rc=$?; echo $rc >"$work/rc.$i" ) &
	# Kill about KILLS of the runner processes (not the subshells, which
	# record the exit status) at a random moment in their first 40 ms.
	if ((RANDOM % procs < kills)); then
		( sleep "0.0$((RANDOM % 40 + 10))"; pkill -KILL -P $! 2>/dev/null || true ) &
	fi
done
wait 2>/dev/null

ok=0 killed=0 failed=0
for i in $(seq 1 "$procs"); do
	rc=$(cat "$work/rc.$i")
	case $rc in
	0) ok=$((ok + 1)) ;;
	137) killed=$((killed + 1)) ;;
	*) failed=$((failed + 1)); echo "p$i exited $rc: $(cat "$work/err.$i")" >&2 ;;
	esac
done

"$work/runner" state show --json >"$work/state.out" || { echo "FAIL: state does not read" >&2; exit 1; }
missing=0
for i in $(seq 1 "$procs"); do
	if [ "$(cat "$work/rc.$i")" = 0 ] && ! grep -q "\"p$i\": {" "$work/state.out"; then
		echo "FAIL: p$i was acknowledged but is missing" >&2
		missing=$((missing + 1))
	fi
done
n=$(grep -c '"added":' "$work/state.out" || true)
echo "$procs adds: $ok acknowledged, $killed killed, $failed failed; $n projects in the state, $missing acknowledged ones missing"
[ "$missing" = 0 ] && [ "$failed" = 0 ]
