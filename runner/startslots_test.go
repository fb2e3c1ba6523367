package runner

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/filelock"
	"github.com/runner-cli/runner/internal/privdir"
)

// With all but one start slot of the machine held (by other processes, as
// far as the flocks go), a start-up takes the free one at once; with every
// slot held, it waits, for its context only.
//
// The order matters: a wait that ended with its context leaves its flock
// request in the kernel's queue of one slot (filelock.Lock gives the slot
// back as soon as it gets it), so after it a slot given back may be taken
// and given back by that request first; a start-up that found none free
// then waits in the queue of a slot still held (by this test: for ever).
func TestStartSlots(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	t.Setenv("XDG_RUNTIME_DIR", "")
	env := msgEnv(t)
	ctx := t.Context()
	release, err := startSlot(ctx, env, "t_first") // makes the directory
	if err != nil {
		t.Fatal(err)
	}
	release()
	dir, err := privdir.Dir("start")
	if err != nil {
		t.Fatal(err)
	}
	var held []func()
	for i := range StartSlots - 1 {
		r, err := filelock.Lock(ctx, filepath.Join(dir, fmt.Sprintf("slot.%d", i)), false, time.Second)
		if err != nil {
			t.Fatalf("slot %d: %v", i, err)
		}
		held = append(held, r)
	}
	defer func() {
		for _, r := range held {
			r()
		}
	}()
	r, err := startSlot(ctx, env, "t_free")
	if err != nil {
		t.Fatalf("one slot free: %v", err)
	}
	held = append(held, r)
	wctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := startSlot(wctx, env, "t_waits"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("every slot held: %v, want a wait that ends with its context", err)
	}
}
