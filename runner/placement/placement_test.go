package placement

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/transport"
	"github.com/runner-cli/runner/runner/hosts"
	"github.com/runner-cli/runner/runner/reconcile"
	"github.com/runner-cli/runner/runner/record"
	"github.com/runner-cli/runner/state"
)

func TestAheadIsFirstComeFirstServedWithinAPool(t *testing.T) {
	at := time.Unix(1000, 0)
	task := func(id string, sec int, pool, host string, st state.Status) *state.Task {
		return &state.Task{ID: id, Created: at.Add(time.Duration(sec) * time.Second), Status: st, Tmux: state.TmuxTarget{Pool: pool, Host: host}}
	}
	st := &state.State{Tasks: map[string]*state.Task{
		"a": task("a", 1, "any", "", state.StatusQueued),
		"b": task("b", 2, "any", "", state.StatusQueued),
		"c": task("c", 2, "any", "", state.StatusQueued),     // same time as b: by id
		"d": task("d", 0, "label:x", "", state.StatusQueued), // another pool
		"e": task("e", 0, "any", "h1", state.StatusQueued),   // placed already
		"f": task("f", 0, "any", "", state.StatusCancelled),  // no longer waiting
		"g": task("g", 3, "any", "", state.StatusQueued),
	}}
	for id, want := range map[string]int{"a": 0, "b": 1, "c": 2, "g": 3, "d": 0} {
		if got := Ahead(st, st.Tasks[id]); got != want {
			t.Errorf("Ahead(%s) = %d, want %d", id, got, want)
		}
	}
}

func TestFailStartPlacesAgainWhenItsHostIsGone(t *testing.T) {
	store, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	add := func(id, pool, pane string) *state.Task {
		task := &state.Task{ID: id, Agent: "sim", Status: state.StatusQueued, Created: time.Unix(1000, 0),
			Tmux: state.TmuxTarget{Pool: pool, Host: "h1", Socket: "/x/s", Pane: pane}}
		if err := store.Update(ctx, func(s *state.State) error { s.Tasks[id] = task; return nil }); err != nil {
			t.Fatal(err)
		}
		return task
	}
	b := record.Book{Store: store, Procs: reconcile.LiveProcs{}}
	gone := "host h1 (loop): " + hosts.ErrUnreachable.Error() + ": connection refused"
	dropped := "tmux pipe-pane: " + transport.ErrConnection.Error() + ": the session shell ended: EOF"
	for _, c := range []struct {
		id, pool, pane, reason string
		want                   state.Status
	}{
		{"t_aaaaaaaa", "any", "", gone, state.StatusQueued},                     // placed again
		{"t_bbbbbbbb", "any", "", "no snapshot: disk full", state.StatusFailed}, // not the host's fault
		{"t_cccccccc", "", "", gone, state.StatusFailed},                        // --host h1: no pool
		{"t_dddddddd", "any", "%3", gone, state.StatusOrphaned},                 // its agent had started: it may live there
		{"t_eeeeeeee", "any", "", dropped, state.StatusQueued},                  // the connection dropped under a tmux call
		{"t_ffffffff", "", "%4", dropped, state.StatusOrphaned},                 // --host h1, its pane made there
		{"t_gggggggg", "any", "", "", state.StatusFailed},                       // no reason: one is given
	} {
		FailStart(ctx, b, add(c.id, c.pool, c.pane), c.reason)
		got, err := b.Task(ctx, c.id)
		if err != nil {
			t.Fatal(err)
		}
		if got.LastReason() == "" {
			t.Errorf("%s: %s with no reason", c.id, got.Status)
		}
		if got.Status != c.want {
			t.Errorf("%s: %s (%s), want %s", c.id, got.Status, got.LastReason(), c.want)
		}
		again := Requeued(ctx, b, c.id)
		if (again != nil) != (c.want == state.StatusQueued) || again != nil && (again.Tmux.Host != "" || !strings.Contains(again.LastReason(), "placed again in pool any")) {
			t.Errorf("%s: Requeued = %+v", c.id, again)
		}
	}
}
