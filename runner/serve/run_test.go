package serve

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/state"
)

func TestBaseURL(t *testing.T) {
	for _, tc := range []struct {
		listen string
		tls    bool
		want   string
	}{
		{"127.0.0.1:7777", false, "http://127.0.0.1:7777"},
		{"0.0.0.0:80", true, "https://localhost:80"},
		{":7777", false, "http://localhost:7777"},
		{"[::]:7777", false, "http://localhost:7777"},
		{"[::1]:7777", false, "http://[::1]:7777"},
		{"unix:/tmp/r.sock", true, "https://localhost"},
		{"example.org", false, "http://example.org"},
	} {
		if got := BaseURL(tc.listen, tc.tls); got != tc.want {
			t.Errorf("BaseURL(%q, %v) = %q, want %q", tc.listen, tc.tls, got, tc.want)
		}
	}
}

// TestLoginURL: the link is the base's /login with a code the server
// takes once, for the scope asked; the tokens exist after it.
func TestLoginURL(t *testing.T) {
	dir := t.TempDir()
	now := clock.Now()
	link, err := LoginURL(dir, "https://phone.example/", ScopeRead, time.Minute, now)
	if err != nil {
		t.Fatal(err)
	}
	code, ok := strings.CutPrefix(link, "https://phone.example/login?code=")
	if !ok {
		t.Fatalf("link %q", link)
	}
	if _, err := os.Stat(filepath.Join(dir, Dir)); err != nil {
		t.Errorf("no tokens made: %v", err)
	}
	if got := claimLogin(dir, code, now); got != ScopeRead {
		t.Errorf("claim = %v, want read", got)
	}
	if got := claimLogin(dir, code, now); got != ScopeNone {
		t.Errorf("second claim = %v, want none", got)
	}
	if _, err := LoginURL(dir, "http://x", ScopeNone, time.Minute, now); err == nil {
		t.Error("a link with no scope")
	}
}

// TestEventsLast: a state with no events has cursor 0, one with events
// the newest's.
func TestEventsLast(t *testing.T) {
	s, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if n, err := (Events{Store: s}).Last(ctx); err != nil || n != 0 {
		t.Errorf("Last = %d, %v; want 0", n, err)
	}
	if err := s.Update(ctx, func(st *state.State) error { st.EventSeq = 42; return nil }); err != nil {
		t.Fatal(err)
	}
	if n, err := (Events{Store: s}).Last(ctx); err != nil || n != 42 {
		t.Errorf("Last = %d, %v; want 42", n, err)
	}
}

// TestRun: requests are served until the context ends; then Run gives
// back the context's error. A listener that fails says so.
func TestRun(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := HTTPServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "hi") }))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, srv, ln, "", "") }()
	resp, err := http.Get("http://" + ln.Addr().String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "hi" {
		t.Errorf("body %q", b)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Run = %v, want context.Canceled", err)
	}

	ln2, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln2.Close()
	err = Run(context.Background(), HTTPServer(http.NotFoundHandler()), ln2, "", "")
	if err == nil || !strings.HasPrefix(err.Error(), "serve: ") {
		t.Errorf("Run on a closed listener = %v", err)
	}
}
