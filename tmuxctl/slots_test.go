package tmuxctl

import (
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/filelock"
)

// With every slot of the server taken (by other processes, as far as the
// flocks go), a call waits for one without its timeout running, then runs.
func TestCallsWaitForASlot(t *testing.T) {
	c := testServer(t)
	ctx := t.Context()
	shellPane(t, c, "w")
	c.timeout = 100 * time.Millisecond
	release, err := c.slot(ctx) // makes the directory
	if err != nil {
		t.Fatal(err)
	}
	release()
	var releases []func()
	for i := range MaxClients {
		// A separate open file each: held as another process would.
		release, err := filelock.Lock(ctx, filepath.Join(c.slotsDir, fmt.Sprintf("slot.%d", i)), false, time.Second)
		if err != nil {
			t.Fatalf("slot %d: %v", i, err)
		}
		releases = append(releases, release)
	}
	var freed atomic.Bool
	go func() {
		time.Sleep(3 * c.timeout)
		freed.Store(true)
		for _, r := range releases {
			r()
		}
	}()
	out, err := c.run(ctx, nil, "display-message", "-p", "ok")
	if err != nil {
		t.Fatalf("the call failed while it waited for a slot: %v", err)
	}
	if !freed.Load() {
		t.Fatal("the call ran while every slot was held")
	}
	if out != "ok\n" && out != "ok" {
		t.Errorf("output %q", out)
	}
}
