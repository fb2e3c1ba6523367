package serve

import (
	"bufio"
	"context"
	"fmt"
	"github.com/runner-cli/runner/internal/clock"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// lines is a fake event stream: events with cursors 1..n, then, following,
// whatever comes on more until ctx ends.
type lines struct {
	n      int
	more   chan string
	mu     sync.Mutex
	afters []uint64
}

func (l *lines) follow(ctx context.Context, after uint64, line func([]byte), lost func(uint64)) error {
	l.mu.Lock()
	l.afters = append(l.afters, after)
	l.mu.Unlock()
	if after == 1 {
		lost(2)
	}
	for c := after + 1; c <= uint64(l.n); c++ {
		line(fmt.Appendf(nil, `{"cursor":%d,"v":1,"type":"status","task":"t_abcd2345","status":"running"}`+"\n", c))
	}
	for {
		select {
		case s := <-l.more:
			line([]byte(s))
		case <-ctx.Done():
			return nil
		}
	}
}

// readEvents reads the stream of resp until it has n events (id lines)
// and returns what it read.
func readEvents(t *testing.T, resp *http.Response, n int) string {
	t.Helper()
	var b strings.Builder
	sc := bufio.NewScanner(resp.Body)
	ids := 0
	for sc.Scan() {
		b.WriteString(sc.Text() + "\n")
		if strings.HasPrefix(sc.Text(), "id: ") {
			ids++
		}
		if ids == n && sc.Text() == "" {
			break
		}
	}
	return b.String()
}

func TestEvents(t *testing.T) {
	l := &lines{n: 3, more: make(chan string, 1)}
	f := newFixture(t, Options{Follow: l.follow, MaxFollowers: 1, Heartbeat: time.Millisecond})
	get := func(path string, hdr ...string) *http.Response {
		req, _ := http.NewRequest("GET", f.ts.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+f.tokens.Read)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := get("/api/v1/events?after=1")
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q", ct)
	}
	l.more <- `{"cursor":4,"v":1,"type":"turn","task":"t_abcd2345","answer":"ok"}` + "\n"
	got := readEvents(t, resp, 3)
	for _, want := range []string{"event: lost\ndata: {\"first\":2}\n", "id: 2\ndata: {\"cursor\":2,", "id: 3\n", "id: 4\ndata: {\"cursor\":4,\"v\":1,\"type\":\"turn\"", ": heartbeat\n"} {
		if want == ": heartbeat\n" {
			continue // timing: checked below
		}
		if !strings.Contains(got, want) {
			t.Errorf("stream lacks %q:\n%s", want, got)
		}
	}
	// One follower at most: a second stream is 503 while the first is open.
	if r2 := get("/api/v1/events"); r2.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("a second follower: %d, want 503", r2.StatusCode)
		r2.Body.Close()
	}
	// Heartbeats come while nothing happens.
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() && sc.Text() != ": heartbeat" {
	}
	resp.Body.Close()
	// A reconnect's Last-Event-ID wins over ?after.
	deadline := clock.Now().Add(10 * time.Second)
	var r3 *http.Response
	for {
		r3 = get("/api/v1/events?after=0", "Last-Event-ID", "2")
		if r3.StatusCode == 200 || clock.Now().After(deadline) {
			break
		}
		r3.Body.Close()
		time.Sleep(10 * time.Millisecond) // the first stream's slot is freed as its handler returns
	}
	got = readEvents(t, r3, 1)
	r3.Body.Close()
	if !strings.Contains(got, "id: 3\n") || strings.Contains(got, "id: 2\n") {
		t.Errorf("after Last-Event-ID 2:\n%s", got)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if last := l.afters[len(l.afters)-1]; last != 2 {
		t.Errorf("followed after %d, want 2", last)
	}
}

// TestEventsFromNow: ?after=now follows from the newest event, replaying
// none of the history: the stream opens with an id line holding the
// newest cursor (a browser reconnecting goes on from it), then the events
// written after.
func TestEventsFromNow(t *testing.T) {
	l := &lines{n: 3, more: make(chan string, 1)}
	f := newFixture(t, Options{Follow: l.follow, Last: func(context.Context) (uint64, error) { return 3, nil }})
	req, _ := http.NewRequest("GET", f.ts.URL+"/api/v1/events?after=now", nil)
	req.Header.Set("Authorization", "Bearer "+f.tokens.Read)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	l.more <- `{"cursor":4,"v":1,"type":"turn","task":"t_abcd2345","answer":"ok"}` + "\n"
	got := readEvents(t, resp, 2)
	if !strings.HasPrefix(got, "retry: 3000\nid: 3\n") {
		t.Errorf("the stream does not open with the newest cursor:\n%s", got)
	}
	if strings.Contains(got, `"cursor":1,`) || strings.Contains(got, `"cursor":3,`) || !strings.Contains(got, "id: 4\ndata: {\"cursor\":4,") {
		t.Errorf("from now: want event 4 alone:\n%s", got)
	}
	l.mu.Lock()
	if l.afters[0] != 3 {
		t.Errorf("followed after %d, want 3", l.afters[0])
	}
	l.mu.Unlock()
	// now is only a query's word: a Last-Event-ID is a number.
	req, _ = http.NewRequest("GET", f.ts.URL+"/api/v1/events", nil)
	req.Header.Set("Authorization", "Bearer "+f.tokens.Read)
	req.Header.Set("Last-Event-ID", "now")
	r2, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r2.Body.Close()
	if r2.StatusCode != http.StatusBadRequest {
		t.Errorf("Last-Event-ID: now: %d, want 400", r2.StatusCode)
	}
}
