package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/runner/push"
	"github.com/runner-cli/runner/state"
)

// cmdPushRecv: pushrecv DIR SECRET starts a push receiver on 127.0.0.1
// for the rest of the script and sets $RECV to its URL. Each request to
// /PATH is written to DIR/PATH.N (N from 1): its headers, a line saying
// whether X-Runner-Signature verifies under SECRET, a blank line and the
// body; and DIR/latency gets a line per push, from the status's time in
// the body to the request's arrival. /hang never answers.
func cmdPushRecv(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: pushrecv DIR SECRET")
	}
	dir, secret := ts.MkAbs(args[0]), args[1]
	ts.Check(os.MkdirAll(dir, 0o755))
	var mu sync.Mutex
	count := map[string]int{}
	hang := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived := clock.Now()
		if r.URL.Path == "/hang" {
			<-hang
			return
		}
		body, _ := io.ReadAll(r.Body)
		name := strings.Trim(r.URL.Path, "/")
		mu.Lock()
		defer mu.Unlock()
		count[name]++
		var b strings.Builder
		for _, k := range []string{"Content-Type", "Title", "Priority", "Tags", "Click", "X-Runner-Event"} {
			fmt.Fprintf(&b, "%s: %s\n", k, r.Header.Get(k))
		}
		fmt.Fprintf(&b, "signature ok: %v\n\n%s\n", push.Verify(secret, body, r.Header.Get(push.SignatureHeader)), body)
		_ = os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s.%d", name, count[name])), []byte(b.String()), 0o644)
		var ev state.PushEvent
		if json.Unmarshal(body, &ev) == nil && !ev.Time.IsZero() {
			f, err := os.OpenFile(filepath.Join(dir, "latency"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
			if err == nil {
				fmt.Fprintf(f, "%s %s %s\n", ev.Task, ev.Status, arrived.Sub(ev.Time).Round(time.Millisecond))
				f.Close()
			}
		}
	}))
	ts.Defer(func() { close(hang); srv.Close() })
	ts.Setenv("RECV", srv.URL)
}

// cmdDeadURL: deadurl VAR sets VAR to an http URL on 127.0.0.1 where
// nothing listens.
func cmdDeadURL(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: deadurl VAR")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	ts.Setenv(args[0], "http://"+ln.Addr().String()+"/dead?token=hidden-token")
	ln.Close()
}
