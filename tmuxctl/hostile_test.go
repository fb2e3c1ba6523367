package tmuxctl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
	waitFor(t, 10*time.Second, func() bool {
		b, _ := os.ReadFile(died)
		return strings.Contains(string(b), pane+" 7")
	})
	if b, _ := os.ReadFile(transcript); !strings.Contains(string(b), "transcribed") {
		t.Errorf("transcript %q: the pipe did not reach the file", b)
	}
	if m, _ := filepath.Glob(filepath.Join(base, "pwned-*")); len(m) > 0 {
		t.Errorf("tmux ran commands from names: %v", m)
	}
}
