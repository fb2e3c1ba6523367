package mailbox

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/statetest"
	"github.com/runner-cli/runner/runner/record"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// fakeCore is package runner as mailbox asks it: the state as it is,
// panes, a caller and hosts' panes given by the test; what it was asked
// is kept.
type fakeCore struct {
	store      *state.Store
	panes      []tmuxctl.PaneInfo
	caller     string
	remoteLive bool
	askedHost  []string // the tasks whose host was asked about their pane
	started    []string // the deliveries started
}

func (f *fakeCore) Reconcile(ctx context.Context) (*state.State, error) { return f.store.Read(ctx) }

func (f *fakeCore) ReconcilePanes(ctx context.Context) (*state.State, []tmuxctl.PaneInfo, error) {
	st, err := f.store.Read(ctx)
	return st, f.panes, err
}

func (f *fakeCore) CallerTask(context.Context, *state.State, []tmuxctl.PaneInfo) string {
	return f.caller
}

func (f *fakeCore) RemotePaneAlive(_ context.Context, t *state.Task) bool {
	f.askedHost = append(f.askedHost, t.ID)
	return f.remoteLive
}

func (f *fakeCore) StartDeliveries(_ context.Context, ids []string) []error {
	f.started = append(f.started, ids...)
	return nil
}

// fakeDeps is the Deps of a store holding tasks, over a fakeCore.
func fakeDeps(t *testing.T, tasks ...*state.Task) (Deps, *fakeCore) {
	s := statetest.WithTasks(t, tasks...)
	f := &fakeCore{store: s}
	return Deps{Store: s, Record: record.Book{Store: s}, Now: func() time.Time { return clock.Now() }, Core: f}, f
}

// idle is a done task of project api that nothing supervises, its pane
// pane (here, or on host when given).
func idle(id, pane, host string) *state.Task {
	return &state.Task{ID: id, Project: "api", Agent: "sim", Status: state.StatusDone, Created: clock.Now(),
		Tmux: state.TmuxTarget{Pane: pane, Host: host}}
}

// TestPostStartsDeliveries: a message to an idle task whose pane lives
// starts its delivery at once; one to a task whose pane is gone is
// refused; a task on a host is asked about there, and only then. The
// sender is the caller's task.
func TestPostStartsDeliveries(t *testing.T) {
	d, f := fakeDeps(t,
		statetest.Supervised("t_from0000", "", state.StatusRunning),
		idle("t_live0000", "%1", ""), idle("t_gone0000", "%2", ""), idle("t_host0000", "%3", "box"))
	f.panes = []tmuxctl.PaneInfo{{ID: "%1"}, {ID: "%2", Dead: true}}
	f.caller, f.remoteLive = "t_from0000", true
	for _, to := range []string{"t_live0000", "t_gone0000", "t_host0000"} {
		outs, err := Post(context.Background(), d, Request{To: to, Text: "hi", Type: state.MessageRequest, MaxHops: 8, MaxPerRoot: 200})
		var refused *RefusedError
		if len(outs) != 1 || (to == "t_gone0000") != errors.As(err, &refused) {
			t.Fatalf("Post to %s: %v, %v", to, outs, err)
		}
	}
	if want := []string{"t_live0000", "t_host0000"}; !slices.Equal(f.started, want) {
		t.Errorf("deliveries started %q, want %q", f.started, want)
	}
	if want := []string{"t_host0000"}; !slices.Equal(f.askedHost, want) {
		t.Errorf("hosts asked about %q, want %q", f.askedHost, want)
	}
	_, entries, err := Inbox(context.Background(), d, "t_live0000")
	if err != nil || len(entries) != 1 || entries[0].From != "t_from0000" || entries[0].Direction != "in" {
		t.Errorf("t_live0000's inbox: %+v, %v", entries, err)
	}
}

// TestInboxOfCaller: with no task named, the inbox is the caller's; with
// no caller either, it is bad input.
func TestInboxOfCaller(t *testing.T) {
	d, f := fakeDeps(t, statetest.Supervised("t_from0000", "", state.StatusRunning))
	f.caller = "t_from0000"
	tk, entries, err := Inbox(context.Background(), d, "")
	if err != nil || tk.ID != "t_from0000" || len(entries) != 0 {
		t.Errorf("Inbox = %v, %v, %v", tk, entries, err)
	}
	f.caller = ""
	if _, _, err := Inbox(context.Background(), d, ""); err == nil {
		t.Error("no task and no caller: no error")
	}
}

// TestPostTo: the function ask posts with sends one message of the type
// given, from the caller, held to the limits given: a second message
// past MaxPerRoot is refused.
func TestPostTo(t *testing.T) {
	d, f := fakeDeps(t, statetest.Supervised("t_from0000", "", state.StatusRunning), idle("t_live0000", "%1", ""))
	f.panes = []tmuxctl.PaneInfo{{ID: "%1"}}
	f.caller = "t_from0000"
	to := &state.Task{ID: "t_live0000"}
	post := PostTo(d, Request{MaxHops: 8, MaxPerRoot: 1})
	if err := post(context.Background(), to, string(state.MessageUpdate), "fyi"); err != nil {
		t.Fatal(err)
	}
	var refused *RefusedError
	if err := post(context.Background(), to, string(state.MessageUpdate), "again"); !errors.As(err, &refused) {
		t.Errorf("past MaxPerRoot: %v, want a refusal", err)
	}
	_, entries, err := Inbox(context.Background(), d, "t_live0000")
	if err != nil || len(entries) != 1 || entries[0].Type != state.MessageUpdate || entries[0].Text != "fyi" {
		t.Errorf("inbox %+v, %v", entries, err)
	}
}
