#!/usr/bin/env bash
# First run on a fresh machine: install tmux and git if missing, build and
# install runner, then run a real dispatch on the built-in simulated agent
# in a throw-away project and show the result.
#
#   ./scripts/setup.sh
#
# It uses its own tmux server (-L runner-demo) and state directory, so it
# never touches your sessions or tasks.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v tmux >/dev/null 2>&1 || need+=(tmux)
command -v git >/dev/null 2>&1 || need+=(git)
if ((${#need[@]})); then
	echo "setup: installing ${need[*]}"
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}"
fi
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"

echo "setup: building runner"
# Linked statically, as the releases are: each start skips the dynamic
# loader (issue 51: a fifth of `runner version`'s CPU).
CGO_ENABLED=0 go install ./cmd/runner/... # runner and runner-ext, side by side
bin="$(go env GOPATH)/bin/runner"
"$bin" version

demo="$(mktemp -d /tmp/runner-demo.XXXXXX)"
export RUNNER_STATE_DIR="$demo/state"
export RUNNER_TMUX_SOCKET=runner-demo
proj="$demo/hello-project"
mkdir -p "$proj"
git -C "$proj" init -q
echo "# hello" >"$proj/README.md"
git -C "$proj" add README.md
git -C "$proj" -c user.name=demo -c user.email=demo@example.com commit -qm "first commit"

"$bin" project add hello "$proj"
echo
task=$'say Working on it\nsleep 1s\nwrite hello.txt Hello from runner'
printf '$ runner dispatch hello --agent sim --commit %q\n' "$task"
"$bin" dispatch hello --agent sim --commit "$task"
echo
echo "\$ cat $proj/hello.txt"
cat "$proj/hello.txt"
echo
echo "\$ runner ps --all"
"$bin" ps --all
echo
echo "\$ git -C $proj log --oneline"
git -C "$proj" log --oneline
cat <<EOT

The agent is still in its tmux pane. To look at it:
  RUNNER_STATE_DIR=$RUNNER_STATE_DIR $bin --socket runner-demo attach hello
(detach again with C-b d). When done:  tmux -L runner-demo kill-server; rm -rf $demo
Add $(dirname "$bin") to your PATH to run 'runner' directly.
EOT
