package agentsim

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/creack/pty"
)

func setSize(ptmx *os.File, cols, rows uint16) error {
	return pty.Setsize(ptmx, &pty.Winsize{Cols: cols, Rows: rows})
}

// TestRunInProcessRestoresTerminal runs Run on the tty end of a pty in this
// process and compares the terminal attributes before and after.
func TestRunInProcessRestoresTerminal(t *testing.T) {
	tm := newTerm(t, 80, 24)
	before := tm.termios()
	type result struct {
		code int
		err  error
	}
	done := make(chan result, 1)
	go func() {
		code, err := Run(t.Context(), Options{Dir: t.TempDir()}, tm.tty, nil)
		done <- result{code, err}
	}()
	tm.waitFor(enterModes)
	tm.waitFor(readyBottom)
	if raw := tm.termios(); raw.Lflag&0o2 != 0 { // ICANON
		t.Errorf("terminal not in raw mode while running: lflag %#o", raw.Lflag)
	}
	tm.send("say in-process\r")
	tm.waitFor("in-process\r\n")
	tm.waitFor(readyBottom)
	tm.send("\x04")
	r := <-done
	if r.code != 0 || r.err != nil {
		t.Fatalf("Run = %d, %v; want 0, nil", r.code, r.err)
	}
	if after := tm.termios(); after != before {
		t.Errorf("terminal not restored:\n got %+v\nwant %+v", after, before)
	}
	tm.waitFor(leaveModes)
}

func TestRunContextCancelRestores(t *testing.T) {
	tm := newTerm(t, 80, 24)
	before := tm.termios()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan int, 1)
	go func() {
		code, _ := Run(ctx, Options{}, tm.tty, nil)
		done <- code
	}()
	tm.waitFor(readyBottom)
	cancel()
	if code := <-done; code != 130 {
		t.Errorf("code %d after cancel, want 130", code)
	}
	if after := tm.termios(); after != before {
		t.Errorf("terminal not restored after cancel")
	}
}

func TestRunNotATerminal(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "plain"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	code, err := Run(t.Context(), Options{}, f, nil)
	if !errors.Is(err, ErrNotTerminal) || code == 0 {
		t.Fatalf("Run on a plain file = %d, %v; want ErrNotTerminal", code, err)
	}
}

func TestHeadless(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "rec.jsonl")
	hookOut := filepath.Join(dir, "hook.json")
	hook := []string{"env", "AGENTSIM_TEST_ROLE=hook", "HOOK_OUT=" + hookOut, os.Args[0]}
	tests := []struct {
		prompt, stdout, stderr string
		code                   int
		hooked                 bool
	}{
		{"say hi\nwrite x.txt data\nhello world\nask Sure?\nsilent 1ms\nsleep 1ms", "hi\nWrote x.txt\nDone: hello world\nSure?\nanswered: no\n", "", 0, true},
		{"say a\nexit 5\nsay b", "a\n", "", 5, false},
		{"crash", "", "panic: simulated crash\n", 2, false},
		{"run sh -c 'exit 4'", "exit status 4\n", "", 0, true},
	}
	for _, tt := range tests {
		os.Remove(hookOut)
		var stdout, stderr bytes.Buffer
		code, err := RunHeadless(t.Context(), Options{Dir: dir, Record: rec, Hook: hook}, tt.prompt, &stdout, &stderr)
		if err != nil || code != tt.code {
			t.Errorf("RunHeadless(%q) = %d, %v; want %d", tt.prompt, code, err, tt.code)
		}
		if stdout.String() != tt.stdout || !strings.HasPrefix(stderr.String(), tt.stderr) {
			t.Errorf("RunHeadless(%q): stdout %q stderr %q; want %q, %q…", tt.prompt, stdout.String(), stderr.String(), tt.stdout, tt.stderr)
		}
		if _, err := os.Stat(hookOut); (err == nil) != tt.hooked {
			t.Errorf("RunHeadless(%q): hook ran = %v, want %v", tt.prompt, err == nil, tt.hooked)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "x.txt")); string(b) != "data\n" {
		t.Errorf("x.txt = %q", b)
	}
	if got := records(t, rec); len(got) != len(tests) || got[0] != tests[0].prompt {
		t.Errorf("records = %q", got)
	}
}

func TestRecordFileMustBeWritable(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "missing-dir", "rec.jsonl")
	var stdout, stderr bytes.Buffer
	code, err := RunHeadless(t.Context(), Options{Record: bad}, "say x", &stdout, &stderr)
	if err == nil || code == 0 || stdout.Len() != 0 {
		t.Fatalf("RunHeadless with unwritable record = %d, %v, %q; want an error and no answer", code, err, stdout.String())
	}
	tm := newTerm(t, 80, 24)
	if code, err := Run(t.Context(), Options{Record: bad}, tm.tty, nil); err == nil || code == 0 {
		t.Fatalf("Run with unwritable record = %d, %v; want an error", code, err)
	}
}

// TestPanicInTurnRestoresTerminal injects a panic into a turn: it must reach
// Run's caller with the terminal already given back.
func TestPanicInTurnRestoresTerminal(t *testing.T) {
	turnStartHook = func(p string) {
		if p == "boom" {
			panic("injected")
		}
	}
	t.Cleanup(func() { turnStartHook = nil })
	tm := newTerm(t, 80, 24)
	before := tm.termios()
	recovered := make(chan any, 1)
	go func() {
		defer func() { recovered <- recover() }()
		Run(t.Context(), Options{}, tm.tty, nil)
	}()
	tm.waitFor(readyBottom)
	tm.send("boom\r")
	if p := <-recovered; p != "injected" {
		t.Fatalf("recovered %v, want the injected panic", p)
	}
	if after := tm.termios(); after != before {
		t.Errorf("terminal not restored after a panic")
	}
	tm.waitFor(leaveModes)
}
