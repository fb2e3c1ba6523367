package tmuxctl

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// testServer starts nothing: it returns a client bound to a fresh socket in
// a short temp dir (socket paths are limited to ~104 bytes) with no config
// file, and kills that server when the test ends. The user's default tmux
// server is never touched.
func testServer(t *testing.T) *Client {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	dir, err := os.MkdirTemp("/tmp", "rtx")
	if err != nil {
		t.Fatal(err)
	}
	env := CleanEnv(os.Environ())
	env = append(env, "PS1=$ ", "HOME="+dir, "ENV=", "BASH_ENV=")
	c := New(filepath.Join(dir, "s"), WithConfig("/dev/null"), WithEnv(env))
	t.Cleanup(func() {
		if t.Failed() {
			if out, err := c.run(context.Background(), nil, "list-panes", "-a", "-F", "#{pane_id} #{session_name} #{pane_current_command} dead=#{pane_dead}"); err == nil {
				t.Logf("panes at failure:\n%s", out)
			}
		}
		_ = c.KillServer(context.Background())
		os.RemoveAll(dir)
	})
	return c
}

// shellPane launches a quiet POSIX shell (no rc files, prompt "$ ") and waits
// for its prompt.
func shellPane(t *testing.T, c *Client, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	pane, err := c.Launch(ctx, WindowSpec{Session: name, Size: Size{80, 24},
		Argv: []string{"bash", "--norc", "--noprofile"}, Env: []string{"PS1=$ ", "TERM=xterm-256color"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitShellPrompt(ctx, pane, 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	return pane
}

func dumpPane(t *testing.T, c *Client, pane string) {
	t.Helper()
	s, err := c.Capture(context.Background(), pane, CaptureOptions{Start: "-", End: "-"})
	t.Logf("pane %s (err %v):\n%s", pane, err, s)
}

// testCtx bounds a test's tmux work so a hang fails the test with a dump
// instead of blocking the whole run.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}
