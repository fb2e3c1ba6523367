package tmuxctl

import (
	"os/exec"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
)

func TestClientsShowsTheWindowAClientSees(t *testing.T) {
	c := testServer(t)
	ctx := testCtx(t)
	pane, err := c.Launch(ctx, WindowSpec{Session: "s", Argv: []string{"sleep", "60"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Launch(ctx, WindowSpec{Session: "other", Argv: []string{"sleep", "60"}}); err != nil {
		t.Fatal(err)
	}
	info, err := c.Pane(ctx, pane)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c.Clients(ctx); err != nil || len(got) != 0 {
		t.Fatalf("Clients before attaching = %v, %v; want none", got, err)
	}
	// A control-mode client needs no terminal and counts as attached.
	attach := exec.Command(c.bin, append(c.ServerArgs(), "-C", "attach", "-t", "=s")...)
	attach.Env = c.env
	stdin, err := attach.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := attach.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); attach.Process.Kill(); attach.Wait() })
	for deadline := clock.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		got, err := c.Clients(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 1 {
			if got[0].Session != "s" || got[0].WindowID != info.WindowID {
				t.Fatalf("client = %+v, want session s, window %s", got[0], info.WindowID)
			}
			break
		}
		if clock.Now().After(deadline) {
			t.Fatalf("no client listed after attaching: %v", got)
		}
	}
}
