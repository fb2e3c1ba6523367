package tmuxctl

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
)

// TestHostileNamesRunNothing: every string runner hands tmux where tmux
// expands formats — a session name (-s), a window name (-n), a start
// directory (-c), the transcript of pipe-pane, the file a pane-died hook's
// run-shell appends to — may hold "#(cmd)" and "#{…}" (a folder cloned from
// anywhere, a project named by an agent): each is taken literally and runs
// nothing.
func TestHostileNamesRunNothing(t *testing.T) {
	c := testServer(t)
	ctx := testCtx(t)
	base := t.TempDir()
	pwned := func(what string) string { return "#(touch " + filepath.Join(base, "pwned-"+what) + ")" }
	session := "s" + pwned("session") + "#{pane_id}"
	name := "w" + pwned("window") + "#{pane_id}"
	cwd := filepath.Join(base, "p"+pwned("cwd")+"$HOME `id` it's")
	if err := os.MkdirAll(cwd, 0o700); err != nil {
		t.Fatal(err)
	}
	logs := filepath.Join(base, "l"+pwned("pipe")+"#{pane_id} it's $HOME")
	if err := os.MkdirAll(logs, 0o700); err != nil {
		t.Fatal(err)
	}
	transcript, died := filepath.Join(logs, "t.log"), filepath.Join(logs, "died")
	pane, err := c.NewSession(ctx, WindowSpec{Session: session, Name: name, Cwd: cwd, Size: Size{80, 24},
		// It exits once the hooks are set (the file go exists), loaded
		// machine or not.
		Argv:         []string{"sh", "-c", `echo transcribed; while [ ! -e "$0" ]; do sleep 0.05; done; exit 7`, filepath.Join(base, "go")},
		RemainOnExit: true, PipeTo: transcript})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Batch(ctx, PaneDiedHooks(pane, session, died)...); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	info, err := c.run(ctx, nil, "display-message", "-p", "-t", pane, "#{session_name}|#{window_name}|#{pane_start_path}")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSuffix(info, "\n"), session+"|"+name+"|"+cwd; got != want {
		t.Errorf("tmux has\n %q\nwant\n %q", got, want)
	}
	// tmux 3.3a misses a pane-died hook for about 1 death in 5 (19 of 93
	// here, with the hook's old quoting too; the monitor's pidfd on the
	// agent covers those). A death whose line never came
	// is tried again in a new window of the same session: what is under
	// test is that the line lands in the hostile path, and nothing runs.
	seen := func(p string) bool {
		deadline := clock.Now().Add(3 * time.Second)
		for clock.Now().Before(deadline) {
			if b, _ := os.ReadFile(died); strings.Contains(string(b), p+" 7") {
				return true
			}
			time.Sleep(20 * time.Millisecond)
		}
		return false
	}
	ok := seen(pane)
	for try := 0; !ok && try < 4; try++ {
		again := filepath.Join(base, fmt.Sprintf("go%d", try))
		p, err := c.NewWindow(ctx, WindowSpec{Session: session, Name: name, Cwd: cwd, RemainOnExit: true,
			Argv: []string{"sh", "-c", `while [ ! -e "$0" ]; do sleep 0.05; done; exit 7`, again}})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Batch(ctx, PaneDiedHooks(p, session, died)...); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(again, nil, 0o600)
		ok = seen(p)
	}
	if !ok {
		b, err := os.ReadFile(died)
		t.Errorf("no pane-died line in five deaths; the file holds %q (%v)", b, err)
	}
	if b, _ := os.ReadFile(transcript); !strings.Contains(string(b), "transcribed") {
		t.Errorf("transcript %q: the pipe did not reach the file", b)
	}
	if m, _ := filepath.Glob(filepath.Join(base, "pwned-*")); len(m) > 0 {
		t.Errorf("tmux ran commands from names: %v", m)
	}
}
