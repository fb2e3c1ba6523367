package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/runner-cli/runner/tmuxctl"
)

// TestInterruptExits130 checks that SIGINT and SIGTERM cancel a waiting
// command's context and that it exits 130.
func TestInterruptExits130(t *testing.T) {
	bin := selfAsRunner(t)
	c := tmuxTestClient(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	pane, err := c.Launch(ctx, tmuxctl.WindowSpec{Session: "sig", Argv: []string{"sleep", "60"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		// A signal that lands before runner installed its handler kills
		// the process the default way; then try again, later.
		for delay := 100 * time.Millisecond; ; delay *= 2 {
			if delay > 10*time.Second {
				t.Fatalf("%v: runner never handled the signal", sig)
			}
			cmd := exec.Command(filepath.Join(bin, "runner"), "--socket", c.Socket(), "tmux", "wait-prompt",
				"--pane", pane, "--pattern", "never-printed", "--since", "now", "--timeout", "50s")
			cmd.Env = append(os.Environ(), "RUNNER_STATE_DIR="+t.TempDir())
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(delay)
			_ = cmd.Process.Signal(sig)
			err := cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("%v: got %v, want exit 130", sig, err)
			}
			if ee.ExitCode() == -1 {
				continue // killed before the handler was set up
			}
			if ee.ExitCode() != 130 {
				t.Fatalf("%v: exit %d, want 130", sig, ee.ExitCode())
			}
			break
		}
	}
}
