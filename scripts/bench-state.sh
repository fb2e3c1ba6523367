#!/usr/bin/env bash
# Runs the state benchmarks COUNT times (default 3) and reports the best run
# of each (the machine is shared: the best is the least disturbed), as
# ratios to baselines measured in the same run:
#   - updates/s with 1, 8 and 64 writer goroutines (each with its own Store),
#     1, 8 and 64 writer processes (the test binary re-executed) through
#     Update, and the same through UpdateTask (taskprocs: a change made while
#     another process holds the lock is handed to it: group commit), against
#     the bare durable write (temp file, fsync, rename, directory fsync);
#   - one update with 10 000 retained finished tasks against the same update
#     with 10 retained (a hot-field change and a turn that writes a record;
#     warm = a supervisor with its cache, cold = a fresh process);
#   - read + list of 10 000 retained tasks in a fresh process (the
#     `runner ps --all --json` path), and the index size per task.
# Targets (issue 13): 10 000 retained ≤ 2× 10 retained; 64 processes ≥ 0.9×
# the bare write (taskprocs=64: runner's status and turn writes go through
# UpdateTask); read + list ≤ 50 ms; ≤ 300 B per task.
#
# usage: scripts/bench-state.sh [BENCHTIME [COUNT]]   (default 1s 3)
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(go test -run '^$' -bench . -benchtime "${1:-1s}" -count "${2:-3}" ./state)
echo "$out" | grep '^Benchmark'
echo
echo "$out" | awk '
function best(name, v, hi) { if (!(name in val) || (hi ? v > val[name] : v < val[name])) val[name] = v }
/^Benchmark/ {
	name = $1; sub(/-[0-9]+$/, "", name); sub(/^Benchmark/, "", name)
	for (i = 2; i <= NF; i++) {
		if ($(i+1) == "updates/s") best(name " ups", $i, 1)
		if ($(i+1) == "ns/op") best(name " ns", $i, 0)
		if ($(i+1) == "B/task") val[name " B"] = $i
	}
	if (!(name in seen)) { seen[name] = 1; order[++k] = name }
}
END {
	for (j = 1; j <= k; j++) {
		n = order[j]
		if (n ~ /^Update\//) {
			b = val["Update/baseline ups"]
			printf "%-28s %8.0f updates/s  %.2fx the bare durable write\n", n, val[n " ups"], val[n " ups"] / b
		}
	}
	split("counter/warm counter/cold turn/warm turn/cold", ops, " ")
	for (j = 1; j <= 4; j++) {
		a = val["Retained/retained=10/" ops[j] " ns"]; z = val["Retained/retained=10000/" ops[j] " ns"]
		if (a > 0) printf "update, %-13s 10 retained %6.2f ms, 10000 retained %6.2f ms: %.2fx (target <= 2x)\n", ops[j] ":", a / 1e6, z / 1e6, z / a
	}
	for (j = 1; j <= k; j++) if (order[j] ~ /^ReadList10k/) {
		n = order[j]
		printf "read+list 10000 tasks (%s): %.1f ms (target <= 50), %.0f B per task in index+archive (target <= 300)\n", n, val[n " ns"] / 1e6, val[n " B"]
	}
}'
