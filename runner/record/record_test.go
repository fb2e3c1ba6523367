package record

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
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
	b := Book{Store: store, Warn: func(format string, args ...any) { fmt.Fprintf(&said, format+"\n", args...) }}
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
	if err := b.UpdateDurably(ctx, "task t_durable1: the end of the turn", func(st *state.State) error {
		return st.Tasks["t_durable1"].SetStatus(state.StatusDone, clock.Now(), "finished")
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
	start := clock.Now()
	err = b.UpdateDurably(ctx, "task t_durable1: x", func(*state.State) error { return nil })
	if !errors.Is(err, state.ErrCorrupt) || clock.Since(start) > GiveUp/2 {
		t.Fatalf("corrupt state: %v", err)
	}
	if !strings.Contains(said.String(), "not recorded after 1 tries") {
		t.Errorf("the lost write was not said: %q", said.String())
	}
}

// fakeProcs: this process is 7; nothing else runs.
type fakeProcs struct{}

func (fakeProcs) Self() (int, string)          { return 7, "" }
func (fakeProcs) Alive(pid int, _ string) bool { return pid == 7 }

// TestSetStatus: a change to a task that already ended is no change (a
// cancel from another process wins over a late supervisor); a task that
// fails loses its queue, journaled; one that is done keeps it.
func TestSetStatus(t *testing.T) {
	store, err := state.Open(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	// A fixed date goes with the store's clock: the store prunes ended
	// tasks by it, not by the day the test runs.
	at := time.Date(2026, 11, 27, 1, 0, 0, 0, time.UTC)
	store.Now = func() time.Time { return at }
	b := Book{Store: store, Now: func() time.Time { return at }, Procs: fakeProcs{}}
	ctx := t.Context()
	err = store.Update(ctx, func(st *state.State) error {
		for _, id := range []string{"t_fails01", "t_done001", "t_ended01"} {
			st.Tasks[id] = &state.Task{ID: id, Status: state.StatusRunning, Created: at}
			st.AddMessage(&state.Message{ID: st.NewMessageID(), To: id, Text: "later", Status: state.MessagePending, Created: at})
		}
		return st.Tasks["t_ended01"].SetStatus(state.StatusCancelled, at, "cancelled by the user")
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Finish(ctx, "t_fails01", state.StatusFailed, "crashed", nil); err != nil {
		t.Fatal(err)
	}
	if err := b.SetStatus(ctx, "t_done001", state.StatusDone, "its turn ended", nil); err != nil {
		t.Fatal(err)
	}
	if err := b.SetStatus(ctx, "t_ended01", state.StatusDone, "a late supervisor", nil); err != nil {
		t.Fatal(err)
	}
	st, err := store.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Task("t_ended01").Status; got != state.StatusCancelled {
		t.Errorf("an ended task changed to %s", got)
	}
	if n := len(st.MessagesFor("t_fails01", state.MessagePending)); n != 0 {
		t.Errorf("the failed task kept %d pending messages", n)
	}
	if n := len(st.MessagesFor("t_done001", state.MessagePending)); n != 1 {
		t.Errorf("the done task has %d pending messages, want its 1", n)
	}
	events, _, err := store.ReadJournal(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range events {
		kinds = append(kinds, e.Kind+":"+e.Task)
	}
	if !slices.Contains(kinds, "status:t_fails01") || !slices.Contains(kinds, "msg-dropped:t_fails01") {
		t.Errorf("journal %v: want the failure and the dropped message", kinds)
	}
}
