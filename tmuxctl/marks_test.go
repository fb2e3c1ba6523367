package tmuxctl

import (
	"context"
	"errors"
	"regexp"
	"testing"
	"time"
)

// TestWaitPromptAfterSend: after MarkForSend, output from before the mark
// never matches and output after it does, also for a later wait; a wait
// from now ignores what came before it; a pane with no mark waits from
// now.
func TestWaitPromptAfterSend(t *testing.T) {
	c := testServer(t)
	ctx := testCtx(t)
	pane := shellPane(t, c, "wpa")
	re := regexp.MustCompile(`^DONE-\d$`)
	short := func() context.Context {
		sctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		t.Cleanup(cancel)
		return sctx
	}
	// No mark yet: from now, so nothing on the screen matches.
	if _, err := c.Exec(ctx, pane, "echo DONE-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitPromptAfter(short(), pane, re, true, time.Second); !errors.Is(err, ErrTimeout) {
		t.Fatalf("no mark: %v, want a timeout", err)
	}
	if err := c.MarkForSend(ctx, pane); err != nil {
		t.Fatal(err)
	}
	if err := c.Send(ctx, pane, "echo DONE-$((1+1))", SendOptions{Enter: true, EnterDelay: -1}); err != nil {
		t.Fatal(err)
	}
	m, err := c.WaitPromptAfter(ctx, pane, re, true, time.Minute)
	if err != nil || m.Match != "DONE-2" {
		t.Fatalf("since the send: %+v, %v", m, err)
	}
	if _, err := c.WaitPromptAfter(short(), pane, re, false, time.Second); !errors.Is(err, ErrTimeout) {
		t.Fatalf("since now: %v, want a timeout", err)
	}
}

// TestWaitPromptAfterGone: a pane that is not there is an error, not a
// timeout; a first look cut short by the wait's own deadline is a
// timeout naming the wait's time.
func TestWaitPromptAfterGone(t *testing.T) {
	c := testServer(t)
	ctx := testCtx(t)
	shellPane(t, c, "gone")
	re := regexp.MustCompile(`x`)
	if _, err := c.WaitPromptAfter(ctx, "%999", re, true, time.Second); err == nil || errors.Is(err, ErrTimeout) {
		t.Errorf("a missing pane: %v", err)
	}
	done, cancel := context.WithTimeout(ctx, time.Nanosecond)
	defer cancel()
	<-done.Done()
	var te *TimeoutError
	if _, err := c.WaitPromptAfter(done, "%0", re, true, 7*time.Second); !errors.As(err, &te) || te.After != 7*time.Second {
		t.Errorf("deadline during the first look: %v", err)
	}
}
