#!/usr/bin/env bash
# Runs the state benchmarks and prints updates/s with 1, 8 and 64 writer
# goroutines (each with its own Store) and with 1, 8 and 64 writer processes (the
# test binary re-executed: the honest multi-process figure) as ratios to the
# bare durable write (temp file, fsync, rename, directory fsync) measured in
# the same run; the time to read and list 10 000 task records; one update of a
# state of 10 000 records; and the state codec against encoding/json on the
# same records.
#
# usage: scripts/bench-state.sh [BENCHTIME]   (default 3s)
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(go test -run '^$' -bench . -benchtime "${1:-3s}" ./state)
echo "$out" | grep '^Benchmark'
echo
echo "$out" | awk '
/^BenchmarkUpdate\// {
	split($1, n, "/"); name = n[2]; sub(/-[0-9]+$/, "", name)
	for (i = 2; i <= NF; i++) if ($(i+1) == "updates/s") rate[name] = $i
	order[++k] = name
}
/^BenchmarkReadList10k\// {
	split($1, n, "/"); name = n[2]; sub(/-[0-9]+$/, "", name)
	for (i = 2; i <= NF; i++) { if ($(i+1) == "ns/op") ms = $i / 1e6; if ($(i+1) == "file-MB") mb = $i }
	printf "read+list 10000 tasks (%s, %.1f MB): %.1f ms\n", name, mb, ms
}
/^BenchmarkUpdate10k/ {
	for (i = 2; i <= NF; i++) if ($(i+1) == "ns/op") printf "update of a 10000-task state: %.1f ms (%.1f updates/s)\n", $i / 1e6, 1e9 / $i
}
/^BenchmarkCodec\// {
	split($1, n, "/"); op = n[2]; name = n[3]; sub(/-[0-9]+$/, "", name)
	for (i = 2; i <= NF; i++) if ($(i+1) == "ns/op") codec[op "/" name] = $i
}
END {
	for (j = 1; j <= k; j++)
		printf "%-10s %8.0f updates/s  %.2fx baseline\n", order[j], rate[order[j]], rate[order[j]] / rate["baseline"]
	split("decode encode", ops, " ")
	for (j = 1; j <= 2; j++) if (codec[ops[j] "/json"] > 0)
		printf "%s 10000 tasks: fast %.1f ms, encoding/json %.1f ms (%.1fx)\n", ops[j], codec[ops[j] "/fast"] / 1e6, codec[ops[j] "/json"] / 1e6, codec[ops[j] "/json"] / codec[ops[j] "/fast"]
}'
