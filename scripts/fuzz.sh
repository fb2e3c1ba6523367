#!/usr/bin/env bash
# fuzz.sh — run every native Go fuzz target for a short, fixed time each
# (default 10s; FUZZTIME=1m scripts/fuzz.sh for longer). The targets cover
# what comes into runner from outside: agent screens, hook events, the
# config file, agent files, the state index and records, Codex's notify TOML, a host's
# replies, and text shown to people. Each is seeded from real data in
# testdata; `go test` alone runs the seeds. A failing input is written to
# the package's testdata/fuzz/ (commit it: it becomes a regression seed).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"
fuzztime=${FUZZTIME:-10s}

targets=(
	"./runner/profile FuzzDetect"
	"./runner/profile FuzzParseHookEvent"
	"./runner/profile FuzzCodexNotify"
	"./runner/profile FuzzAgentFile"
	"./runner/config FuzzParseConfig"
	"./runner/hosts FuzzAgentPaths"
	"./state FuzzReadState"
	"./state FuzzIndexEntry"
	"./internal/transport FuzzParseReply"
	"./internal/textutil FuzzVisible"
	"./runner/door FuzzParseRequest"
)
# count DIR: how many inputs a target's corpus holds (0 when it has none).
count() { if [ -d "$1" ]; then ls "$1" | wc -l; else echo 0; fi; }
start=$(date +%s)
for t in "${targets[@]}"; do
	set -- $t
	echo "fuzz: $2 ($1) for $fuzztime"
	corpus="${1#./}/testdata/fuzz/$2"
	before=$(count "$corpus")
	for try in 1 2; do
		# Minimizing a large new input can stall the run for its whole
		# time: keep it short, the time goes to fuzzing.
		out=$(mktemp)
		if go test "$1" -run '^$' -fuzz "^$2\$" -fuzztime "$fuzztime" -fuzzminimizetime 2s 2>&1 | tee "$out"; then
			rm -f "$out"
			break
		fi
		if [ "$(count "$corpus")" != "$before" ]; then
			rm -f "$out"
			echo "fuzz: $2 found a failing input: $corpus (go test $1 -run $2 reproduces it)" >&2
			exit 1
		fi
		# No input written. Go's fuzzing coordinator (before Go 1.27) can
		# report its own -fuzztime deadline as a failure: a race between
		# the deadline and the check that is to pass it over
		# (go.dev/issue/75804). A finding always writes its input first,
		# so a bare "context deadline exceeded" at the end is the whole
		# time fuzzed and nothing found; the seeds and corpus are replayed
		# to be sure.
		if grep -qxE '[[:space:]]*context deadline exceeded' "$out" &&
			! grep -q 'Failing input written to' "$out"; then
			rm -f "$out"
			echo "fuzz: $2: Go's fuzzing coordinator reported its own deadline as a failure (go.dev/issue/75804), no input written; replaying the corpus" >&2
			if ! go test "$1" -count=1 -run "^$2\$"; then
				echo "fuzz: $2: the corpus replay failed" >&2
				exit 1
			fi
			break
		fi
		rm -f "$out"
		# Another failure with no input written: the fuzzing engine itself
		# failed (a worker that a loaded machine kept from answering).
		# Once more.
		[ "$try" = 2 ] && { echo "fuzz: $2: the fuzzing engine failed twice" >&2; exit 1; }
		echo "fuzz: $2: the engine failed without a failing input; again" >&2
	done
done
echo "fuzz: ${#targets[@]} targets in $(($(date +%s) - start)) s"
