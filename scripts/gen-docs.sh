#!/usr/bin/env bash
# Regenerate the command reference under docs/cli from the commands
# themselves (runner's hidden gen-docs: one markdown page per command).
# cmd/runner's TestCLIDocsCurrent (go test -tags gendocs, run by .ci/run)
# fails when docs/cli is stale: run this and commit what it changed.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -tags gendocs -o "$tmp/runner" ./cmd/runner
rm -rf docs/cli
"$tmp/runner" gen-docs docs/cli
echo "docs/cli: $(ls docs/cli | wc -l) pages"
