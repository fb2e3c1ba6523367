#!/usr/bin/env bash
# Runs the state benchmarks and prints updates/s with 1, 8 and 64 writers as
# ratios to the bare durable write (temp file, fsync, rename, directory
# fsync) measured in the same run, and the time to read and list 10 000
# task records.
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
END {
	for (j = 1; j <= k; j++)
		printf "%-10s %8.0f updates/s  %.2fx baseline\n", order[j], rate[order[j]], rate[order[j]] / rate["baseline"]
}'
