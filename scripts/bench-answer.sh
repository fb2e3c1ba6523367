#!/usr/bin/env bash
# bench-answer.sh — from an answer posted to the key pressed in the pane
# (issue 52's "Measured"). A real `runner serve` on 127.0.0.1; N rounds
# (default 8) of three detached sim tasks stopped at the sim's ask dialog
# ("ask Proceed?" then "write mark-K yes"), each answered once: through the
# API with option 1 (the cursor is on it: Enter alone), through the API with
# option 2 (Down, the screen read again, Enter), and with `runner answer`
# on the command line (option 1). The key's arrival is the mtime of the
# file the sim writes right after it reads it; the figures are from just
# before the request to that mtime (key), and to the request's return
# (receipt: the press, the dialog seen gone, the receipt written). Medians,
# min and max, in ms. Its own HOME, state and tmux server; about a minute.
#
#   scripts/bench-answer.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-8}
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"
work=$(mktemp -d /tmp/runner-bench-answer.XXXXXX)
cleanup() {
	[ -n "${spid:-}" ] && kill "$spid" 2>/dev/null
	tmux -S "$work/s" kill-server 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
go build -o "$work/" ./cmd/runner ./cmd/runner/runner-ext
r="$work/runner"
export HOME="$work/h" RUNNER_TMUX_SOCKET="$work/s" GIT_CONFIG_GLOBAL=/dev/null
export XDG_CONFIG_HOME="$HOME/.config" XDG_STATE_HOME="$HOME/.local/state" XDG_CACHE_HOME="$HOME/.cache"
mkdir -p "$HOME" "$work/p"
port=$((20000 + RANDOM % 20000))
"$r" serve --listen "127.0.0.1:$port" >"$work/serve.log" 2>&1 &
spid=$!
for _ in $(seq 100); do grep -q listening "$work/serve.log" 2>/dev/null && break; sleep 0.1; done
act=$("$r" serve --token | awk '/^act/ {print $2}')
python3 - "$r" "$port" "$act" "$work/p" "$n" <<'PY'
import json, os, statistics, subprocess, sys, time, urllib.request
r, port, act, proj, n = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
base = "http://127.0.0.1:%s/api/v1" % port

def api(method, path, body=None):
    req = urllib.request.Request(base + path, method=method, data=None if body is None else json.dumps(body).encode(),
                                 headers={"Authorization": "Bearer " + act, "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as resp:
        return json.load(resp)

def run(*args, ok=(0,)):
    p = subprocess.run([r, *args], cwd=proj, capture_output=True, text=True)
    if p.returncode not in ok:
        sys.exit("runner %s: exit %d\n%s%s" % (" ".join(args), p.returncode, p.stdout, p.stderr))
    return p.stdout

k = 0
def sample(via, option):
    global k
    k += 1
    mark = os.path.join(proj, "mark-%d" % k)
    tf = os.path.join(proj, "task-%d" % k)
    with open(tf, "w") as f:
        f.write("ask Proceed %d?\nwrite mark-%d yes\n" % (k, k))
    tid = run("dispatch", proj, "--detach", "--agent", "sim", "--awareness", "off", "--ready-timeout", "30s", "--timeout", "2m", "--file", tf).strip()
    run("wait", "--input", "--timeout", "60s", tid, ok=(4,))
    digest = api("GET", "/tasks/" + tid)["dialog"]["digest"]
    t0 = time.time()
    if via == "api":
        rc = api("POST", "/tasks/%s/answer" % tid, {"digest": digest, "option": option, "op": "op-bench-%d" % k})
        assert rc["result"] == "pressed", rc
    else:
        run("answer", tid, option, "--digest", digest)
    t1 = time.time()
    for _ in range(600):
        if os.path.exists(mark):
            break
        time.sleep(0.01)
    key = os.stat(mark).st_mtime - t0
    run("wait", "--timeout", "60s", tid)
    return key * 1000, (t1 - t0) * 1000

res = {("api", "1"): [], ("api", "2"): [], ("cli", "1"): []}
for _ in range(n):
    for via, opt in res:
        res[(via, opt)].append(sample(via, opt))
for (via, opt), xs in res.items():
    keys, rcs = [x[0] for x in xs], [x[1] for x in xs]
    what = {"api": "POST …/answer", "cli": "runner answer"}[via]
    print("%-14s option %s: key %4.0f ms median (%.0f-%.0f), receipt %4.0f ms median (%.0f-%.0f), %d answers"
          % (what, opt, statistics.median(keys), min(keys), max(keys), statistics.median(rcs), min(rcs), max(rcs), len(xs)))
PY
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
