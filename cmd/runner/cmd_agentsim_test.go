package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/runner-cli/runner/internal/clock"
)

func runMain(t *testing.T, in string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Main(args, strings.NewReader(in), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestAgentSimHeadless(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	rec := filepath.Join(dir, "rec.jsonl")
	code, out, errOut := runMain(t, "", "agent-sim", "--record", rec, "-p", "say hi\nwrite f.txt x\nexit 3")
	if code != 3 || out != "hi\nWrote f.txt\n" || errOut != "" {
		t.Fatalf("agent-sim -p = %d, %q, %q; want 3, \"hi\\nWrote f.txt\\n\", \"\"", code, out, errOut)
	}
	b, err := os.ReadFile(rec)
	var r struct{ Prompt string }
	if err != nil || json.Unmarshal(b, &r) != nil || r.Prompt != "say hi\nwrite f.txt x\nexit 3" {
		t.Errorf("record = %q, %v", b, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "f.txt")); string(b) != "x\n" {
		t.Errorf("f.txt = %q", b)
	}
	if code, _, errOut := runMain(t, "", "agent-sim", "-p", "crash"); code != 2 || !strings.HasPrefix(errOut, "panic: simulated crash") {
		t.Errorf("crash: %d, %q", code, errOut)
	}
	if code, out, _ := runMain(t, "", "agent-sim", "-p", ""); code != 0 || out != "" {
		t.Errorf("empty -p: %d, %q", code, out)
	}
}

func TestAgentSimUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"not a terminal", []string{"agent-sim"}, "needs a terminal"},
		{"bad hook", []string{"agent-sim", "--hook", "'open", "-p", "x"}, "--hook"},
		{"empty hook", []string{"agent-sim", "--hook", " ", "-p", "x"}, "--hook"},
		{"stray argument", []string{"agent-sim", "extra"}, "unknown command"},
	}
	for _, tt := range tests {
		code, out, errOut := runMain(t, "", tt.args...)
		if code != 2 || out != "" || !strings.Contains(errOut, tt.want) {
			t.Errorf("%s: %d, %q, %q; want exit 2 mentioning %q", tt.name, code, out, errOut, tt.want)
		}
	}
}

func TestAgentSimHidden(t *testing.T) {
	_, out, _ := runMain(t, "", "--help")
	if strings.Contains(out, "agent-sim") {
		t.Errorf("agent-sim listed in --help:\n%s", out)
	}
	if code, out, _ := runMain(t, "", "agent-sim", "--help"); code != 0 || !strings.Contains(out, "--record") {
		t.Errorf("agent-sim --help: %d\n%s", code, out)
	}
}

// TestAgentSimOnTerminal runs the command on a pty through Main.
func TestAgentSimOnTerminal(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	defer tty.Close()
	pty.Setsize(ptmx, &pty.Winsize{Cols: 80, Rows: 24})
	t.Chdir(t.TempDir())
	var (
		mu  sync.Mutex
		buf []byte
	)
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := ptmx.Read(b)
			mu.Lock()
			buf = append(buf, b[:n]...)
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	waitFor := func(s string) {
		t.Helper()
		for deadline := clock.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			mu.Lock()
			ok := bytes.Contains(buf, []byte(s))
			mu.Unlock()
			if ok {
				return
			}
			if clock.Now().After(deadline) {
				t.Fatalf("no %q on the terminal", s)
			}
		}
	}
	done := make(chan int, 1)
	go func() { done <- Main([]string{"agent-sim", "--trust"}, tty, tty, tty) }()
	waitFor("❯ 1. Yes, proceed")
	ptmx.Write([]byte("1"))
	waitFor("╯")
	ptmx.Write([]byte("\x1b[200~say on a tty\nexit 4\x1b[201~\r"))
	waitFor("on a tty\r\n")
	if code := <-done; code != 4 {
		t.Errorf("exit code %d, want 4", code)
	}
}
