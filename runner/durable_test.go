package runner

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runner-cli/runner/state"
)

// TestUpdateDurably: an outcome written while another process holds the
// state lock past the lock timeout is not dropped: it is tried again and
// lands once the lock is free (a plain Update fails with ErrBusy); an
// error that cannot pass (a corrupt state file) is not retried, and is
// said.
func TestUpdateDurably(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	store, err := state.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	store.LockTimeout = 100 * time.Millisecond
	var said bytes.Buffer
	env := &Env{Store: store, Getenv: func(string) string { return "" }, Progress: &said}
	ctx := context.Background()
	if err := store.Update(ctx, func(st *state.State) error {
		st.Tasks["t_durable1"] = &state.Task{ID: "t_durable1", Status: state.StatusRunning}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	// Another process's hold on the lock: an open file description of
	// its own, released after 5 lock timeouts.
	f, err := os.OpenFile(filepath.Join(dir, state.LockFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	if err := store.Update(ctx, func(*state.State) error { return nil }); !errors.Is(err, state.ErrBusy) {
		t.Fatalf("plain update under a held lock: %v, want ErrBusy", err)
	}
	go func() {
		time.Sleep(5 * store.LockTimeout)
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	}()
	if err := env.updateDurably(ctx, "task t_durable1: the end of the turn", func(st *state.State) error {
		return st.Tasks["t_durable1"].SetStatus(state.StatusDone, time.Now(), "finished")
	}); err != nil {
		t.Fatalf("updateDurably: %v", err)
	}
	snap, err := store.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := snap.Tasks["t_durable1"].Status; got != state.StatusDone {
		t.Fatalf("status %s after the lock was freed, want done", got)
	}
	if !strings.Contains(said.String(), "trying again") {
		t.Errorf("the retry was not said: %q", said.String())
	}

	// Not transient: a corrupt state file is said once, not retried.
	said.Reset()
	if err := os.WriteFile(filepath.Join(dir, "state.json"), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = env.updateDurably(ctx, "task t_durable1: x", func(*state.State) error { return nil })
	if !errors.Is(err, state.ErrCorrupt) || time.Since(start) > durableGiveUp/2 {
		t.Fatalf("corrupt state: %v", err)
	}
	if !strings.Contains(said.String(), "not recorded after 1 tries") {
		t.Errorf("the lost write was not said: %q", said.String())
	}
}
