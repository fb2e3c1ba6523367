package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/filelock"
)

// With every start slot of the machine held (by other processes, as far
// as the flocks go), a start-up waits; one given back lets it through.
func TestStartSlots(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	env := msgEnv(t)
	ctx := t.Context()
	release, err := startSlot(ctx, env, "t_first") // makes the directory
	if err != nil {
		t.Fatal(err)
	}
	release()
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("runner-start-%d", os.Getuid()))
	var held []func()
	for i := range StartSlots {
		r, err := filelock.Lock(ctx, filepath.Join(dir, fmt.Sprintf("slot.%d", i)), false, time.Second)
		if err != nil {
			t.Fatalf("slot %d: %v", i, err)
		}
		held = append(held, r)
	}
	wctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := startSlot(wctx, env, "t_waits"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("every slot held: %v, want a wait that ends with its context", err)
	}
	held[StartSlots-1]()
	r, err := startSlot(ctx, env, "t_next")
	if err != nil {
		t.Fatalf("a slot given back: %v", err)
	}
	r()
	for _, r := range held[:StartSlots-1] {
		r()
	}
}
