#!/bin/bash
# bench-push.sh: from a dialog appearing to its push arriving (issue 52 §2).
# N (default 5) detached sim tasks stop at the sim's ask dialog, one after another, with
# notify_push naming a signed webhook on a receiver on 127.0.0.1 (python3); a line per push: the
# task, its status and the time from its needs_input status (the body's "time") to the POST's
# arrival. A throw-away HOME and tmux server; RUNNER is the binary (default: runner in PATH).
set -e
RUNNER=${RUNNER:-runner}
N=${N:-5}
W=$(mktemp -d /tmp/bp.XXXX)
export HOME=$W/home XDG_CONFIG_HOME=$W/home/.config XDG_STATE_HOME=$W/home/.local/state RUNNER_TMUX_SOCKET=$W/s
mkdir -p $XDG_CONFIG_HOME/runner $W/proj
python3 -c '
import http.server,json,sys,datetime,threading
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        now=datetime.datetime.now(datetime.timezone.utc)
        b=self.rfile.read(int(self.headers["Content-Length"]))
        ev=json.loads(b); t=ev["time"]
        t=t[:26].rstrip("Z")+"+00:00" if "." in t else t.replace("Z","+00:00")
        st=datetime.datetime.fromisoformat(t)
        print(ev["task"], ev["status"], "%.0f ms" % ((now-st).total_seconds()*1000), flush=True)
        self.send_response(200); self.end_headers()
    def log_message(self,*a): pass
s=http.server.ThreadingHTTPServer(("127.0.0.1",0),H)
open(sys.argv[1],"w").write(str(s.server_address[1]))
s.serve_forever()' $W/port > $W/lat &
RP=$!
for j in $(seq 100); do [ -s $W/port ] && break; sleep 0.1; done
PORT=$(cat $W/port)
echo '{"notify_push":[{"kind":"webhook","url":"http://127.0.0.1:'$PORT'/hook","secret":"x"}]}' > $XDG_CONFIG_HOME/runner/config.json
cd $W/proj
for i in $(seq $N); do
  "$RUNNER" dispatch . --detach --agent sim --awareness off --ready-timeout 20s --timeout 60s "ask Proceed $i?" >/dev/null 2>&1
  for j in $(seq 100); do [ $(wc -l < $W/lat) -ge $i ] && break; sleep 0.1; done
done
cat $W/lat
tmux -S $W/s kill-server 2>/dev/null || true
kill $RP
rm -rf $W
