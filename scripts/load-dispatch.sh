#!/usr/bin/env bash
# N detached dispatches started at once on the simulated agent, spread over
# 3 projects, as a user's script or cron would (issue 13's load test): how
# many exit 0, how many end done, and whether any task is left queued,
# starting or running with nothing behind it.
#
#   scripts/load-dispatch.sh [N] [LOCK_TIMEOUT]   (defaults 200 and 10s)
#
# RUNNER_BENCH_BIN=/path/to/runner measures that binary instead of building
# this checkout (to compare with an older commit's, one after the other).
# With RUNNER_LOAD_EVENTS=1 a `runner events --follow --json` reader runs for
# the whole load, as a user's dashboard would (when the binary has events).
# It samples, every 0.2 s, the threads of all of runner's processes (each
# dispatch, supervisor and sim: /proc/PID/status of every process running
# this binary) and prints the peak, with the machine's own peak.
#
# Its own tmux server (private socket) and state directory; it kills both
# at the end. Exit 0 when every dispatch exited 0 and every task ended done.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-200}
lock_timeout=${2:-10s}
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"

work=$(mktemp -d /tmp/runner-load.XXXXXX)
sock="$work/tmux.sock"
cleanup() {
	[ -z "${events_pid:-}" ] || kill "$events_pid" 2>/dev/null || true
	[ -z "${sampler_pid:-}" ] || kill "$sampler_pid" 2>/dev/null || true
	tmux -S "$sock" kill-server 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
sampler_pid=
if [ -n "${RUNNER_BENCH_BIN:-}" ]; then
	cp "$RUNNER_BENCH_BIN" "$work/runner"
	ext="$(dirname "$RUNNER_BENCH_BIN")/runner-ext"
	[ ! -x "$ext" ] || cp "$ext" "$work/runner-ext"
else
	CGO_ENABLED=0 go build -trimpath -buildvcs=false -o "$work/" ./cmd/runner ./cmd/runner/runner-ext # as the release (and CI's other builds) build it
fi
unset TMUX
export RUNNER_STATE_DIR="$work/state" RUNNER_TMUX_SOCKET="$sock" RUNNER_LOCK_TIMEOUT="$lock_timeout"
export GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=load GIT_AUTHOR_EMAIL=load@example.com \
	GIT_COMMITTER_NAME=load GIT_COMMITTER_EMAIL=load@example.com
for p in 1 2 3; do
	mkdir -p "$work/p$p"
	git -C "$work/p$p" init -q
	echo "# p$p" >"$work/p$p/README.md"
	git -C "$work/p$p" add README.md
	git -C "$work/p$p" commit -qm init
	"$work/runner" project add "p$p" "$work/p$p" >/dev/null
done

events_pid=
if [ "${RUNNER_LOAD_EVENTS:-0}" = 1 ] && "$work/runner" events --help >/dev/null 2>&1; then
	"$work/runner" events --follow --json >"$work/events.jsonl" 2>"$work/events.err" &
	events_pid=$!
fi
cpu_all() { awk '/^cpu /{ print ($2+$3+$4+$7+$8) / 100 }' /proc/stat; } # user nice system irq softirq, in s (USER_HZ 100)
cpu0=$(cpu_all)
# Peak threads: runner's processes (their exe is this binary) and the machine's.
python3 - "$work/runner" "$work/threads.peak" <<'EOF' &
import os, sys, time
exe, out = os.path.realpath(sys.argv[1]), sys.argv[2]
peak = peakp = peakall = 0
while True:
    t = p = a = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/status") as f:
                n = next(int(l.split()[1]) for l in f if l.startswith("Threads:"))
            a += n
            if os.readlink(f"/proc/{pid}/exe") == exe:
                t, p = t + n, p + 1
        except (OSError, StopIteration, ValueError):
            continue
    if t > peak:
        peak, peakp = t, p
    peakall = max(peakall, a)
    with open(out, "w") as f:
        f.write(f"{peak} {peakp} {peakall}\n")
    time.sleep(0.2)
EOF
sampler_pid=$!
start=$(date +%s.%N)
pids=()
for i in $(seq 1 "$n"); do
	p=$((i % 3 + 1))
	( rc=0; "$work/runner" dispatch "p$p" "load task $i: say done" --agent sim --detach >"$work/out.$i" 2>"$work/err.$i" || rc=$?
	  echo $rc >"$work/rc.$i" ) &
	pids+=($!)
done
wait "${pids[@]}"
dispatched=$(date +%s.%N)

declare -A rcs=()
for i in $(seq 1 "$n"); do
	rc=$(cat "$work/rc.$i")
	rcs[$rc]=$(( ${rcs[$rc]:-0} + 1 ))
done
echo "dispatch exit codes: $(for k in "${!rcs[@]}"; do printf '%s×%s ' "${rcs[$k]}" "$k"; done)"
echo "dispatches that waited their turn for the busy state: $(cat "$work"/err.* | grep -c 'waits its turn' || true)"
for i in $(seq 1 "$n"); do
	if [ "$(cat "$work/rc.$i")" != 0 ]; then
		echo "first failed dispatch ($i): $(tail -c 300 "$work/err.$i")"
		break
	fi
done

# Wait for every task to end (runner wait --all), bounded.
wait_rc=0
"$work/runner" wait --all --timeout 10m >/dev/null 2>"$work/wait.err" || wait_rc=$?
ended=$(date +%s.%N)
cpu1=$(cpu_all)
server_cpu=?
if spid=$(tmux -S "$sock" display -p '#{pid}' 2>/dev/null) && [ -r "/proc/$spid/stat" ]; then
	server_cpu=$(awk '{ sub(/.*\) /, ""); printf "%.1f", ($12 + $13) / 100 }' "/proc/$spid/stat")
fi
if [ -n "$events_pid" ]; then
	kill "$events_pid" 2>/dev/null || true
	wait "$events_pid" 2>/dev/null || true
	echo "events follower: $(wc -l <"$work/events.jsonl") events"
fi
"$work/runner" ps --all --json >"$work/ps.json"
summary=$(python3 - "$work/ps.json" "$work/runner" <<'EOF'
import json, sys, collections, subprocess
tasks = json.load(open(sys.argv[1]))
if isinstance(tasks, dict):
    tasks = tasks.get("tasks", [])
c = collections.Counter(t.get("status") for t in tasks)
print(len(tasks), " ".join(f"{k}:{v}" for k, v in sorted(c.items())))
reasons = collections.Counter()
for t in tasks:
    if t.get("status") != "done":
        if t.get("archived"):  # listed from the archive: read its whole record
            t = json.loads(subprocess.run([sys.argv[2], "status", t["id"], "--json"], capture_output=True, text=True).stdout or "{}")
            t = t.get("task", t)
        h = t.get("history") or []
        reasons[(t.get("status"), (h[-1].get("reason", "") if h else "")[:90])] += 1
for (s, r), v in reasons.most_common(5):
    print(f"  {v} {s}: {r}")
EOF
)
total=$(echo "$summary" | head -1 | cut -d' ' -f1)
echo "tasks recorded: $summary"
awk -v a="$start" -v b="$dispatched" -v c="$ended" -v n="$n" 'BEGIN { printf "all %d dispatches returned in %.1f s; all tasks ended %.1f s after the start\n", n, b - a, c - a }'
echo "wait --all exit $wait_rc"
kill "$sampler_pid" 2>/dev/null || true
wait "$sampler_pid" 2>/dev/null || true
sampler_pid=
if read -r peak peakp peakall <"$work/threads.peak" 2>/dev/null; then
	echo "peak threads: $peak in $peakp runner processes at once (the machine: $peakall; kernel.pid_max $(cat /proc/sys/kernel/pid_max))"
fi
awk -v a="$cpu0" -v b="$cpu1" -v s="$server_cpu" 'BEGIN { printf "CPU used on the machine meanwhile: %.1f s (the tmux server: %s s)\n", b - a, s }'
ok=1
[ "${rcs[0]:-0}" -eq "$n" ] || ok=0
echo "$summary" | head -1 | grep -q "^$n done:$n$" || ok=0
[ "$total" -eq "$n" ] || ok=0
if [ $ok -eq 1 ]; then echo "load-dispatch: OK ($n)"; else echo "load-dispatch: FAILED ($n)"; exit 1; fi
