package reconcile

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/statetest"
	"github.com/runner-cli/runner/runner/record"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// goneIdent is the identity of a process of another boot: a supervisor
// recorded with it is gone, whatever holds its pid now.
const goneIdent = "00000000-0000-0000-0000-000000000000:12345"

// orphan is an active task in session s whose supervisor is gone.
func orphan(id string, status state.Status, pane string) *state.Task {
	return &state.Task{ID: id, Status: status, SupervisorPID: os.Getpid(), SupervisorStart: goneIdent,
		Tmux: state.TmuxTarget{Session: "s", Window: id, Pane: pane}}
}

// TestStale: what became of each active task nothing supervises, read
// from its pane; tasks supervised, ended, or waiting for the user with
// their pane are left as they are.
func TestStale(t *testing.T) {
	onHost := orphan("t_host", state.StatusRunning, "%7")
	onHost.Tmux.Host = "h1"
	askingOnHost := orphan("t_askhost", state.StatusNeedsInput, "%8")
	askingOnHost.Tmux.Host = "h1"
	waiting := orphan("t_waits", state.StatusQueued, "")
	waiting.After = []string{"t_first"}
	older := orphan("t_older", state.StatusQueued, "")
	older.SupervisorPID = 0
	supervised := orphan("t_sup", state.StatusRunning, "%1")
	supervised.SupervisorStart = ""
	tasks := []*state.Task{
		orphan("t_alive", state.StatusRunning, "%1"), orphan("t_exited", state.StatusRunning, "%2"),
		orphan("t_gone", state.StatusStarting, "%3"), orphan("t_moved", state.StatusRunning, "%4"),
		orphan("t_asking", state.StatusNeedsInput, "%1"), orphan("t_askgone", state.StatusNeedsInput, "%9"),
		orphan("t_done", state.StatusDone, "%3"), orphan("t_queued", state.StatusQueued, ""),
		onHost, askingOnHost, waiting, older, supervised,
	}
	st := &state.State{Tasks: map[string]*state.Task{}}
	for _, x := range tasks {
		st.Tasks[x.ID] = x
	}
	listed := 0
	changes, err := Stale(st, func() (map[string]tmuxctl.PaneInfo, error) {
		listed++
		return map[string]tmuxctl.PaneInfo{
			"%1": {ID: "%1", Session: "s"},
			"%2": {ID: "%2", Session: "s", Dead: true, DeadStatus: 3},
			"%4": {ID: "%4", Session: "another"},
		}, nil
	})
	if err != nil || listed != 1 {
		t.Fatalf("Stale: %v after %d listings; want one", err, listed)
	}
	got := map[string]string{}
	for _, c := range changes {
		got[c.ID] = string(c.Status) + ": " + c.Reason
	}
	want := map[string]string{
		"t_alive":   "orphaned: supervisor %d is gone; pane %1 is alive (runner resume t_alive)",
		"t_exited":  "exited: supervisor %d is gone; the agent exited with status 3",
		"t_gone":    "failed: supervisor %d and pane %3 are gone",
		"t_moved":   "failed: supervisor %d and pane %4 are gone",
		"t_askgone": "failed: supervisor %d and pane %9 are gone",
		"t_queued":  "failed: the dispatching process %d is gone before the task started (dispatch it again)",
		"t_host":    "orphaned: supervisor %d is gone; its pane is on host h1 (runner resume t_host looks there)",
		"t_waits":   "orphaned: supervisor %d is gone while waiting for t_first (runner resume t_waits)",
	}
	for id, w := range want {
		w = strings.ReplaceAll(w, "%d", strconv.Itoa(os.Getpid()))
		if got[id] != w {
			t.Errorf("%s: %q\nwant %q", id, got[id], w)
		}
	}
	for id := range got {
		if _, ok := want[id]; !ok {
			t.Errorf("%s changed (%s); want it left as it is", id, got[id])
		}
	}
}

// TestStaleListsNoPanesForHostsAndQueues: tasks on hosts and queued ones
// are judged without tmux here.
func TestStaleListsNoPanesForHostsAndQueues(t *testing.T) {
	onHost := orphan("t_host", state.StatusRunning, "%7")
	onHost.Tmux.Host = "h1"
	st := &state.State{Tasks: map[string]*state.Task{"t_host": onHost, "t_q": orphan("t_q", state.StatusQueued, "")}}
	changes, err := Stale(st, func() (map[string]tmuxctl.PaneInfo, error) { return nil, errors.New("no tmux here") })
	if err != nil || len(changes) != 2 {
		t.Errorf("Stale = %+v, %v; want both judged, tmux not asked", changes, err)
	}
}

// TestRun: the changes are recorded and journalled, the queue of a task
// that ended is dropped, and the panes listed are returned; a listing
// that fails is the error.
func TestRun(t *testing.T) {
	ctx := t.Context()
	store := statetest.WithTasks(t, orphan("t_alive", state.StatusRunning, "%1"), orphan("t_gone", state.StatusRunning, "%3"))
	if err := store.Update(ctx, func(st *state.State) error {
		st.AddMessage(&state.Message{ID: "m_aaaaaaaa", From: state.SenderUser, To: "t_gone", Type: "info", Text: "hi", Status: state.MessagePending, Created: clock.Now()})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	panes := []tmuxctl.PaneInfo{{ID: "%1", Session: "s"}}
	d := Deps{Store: store, Now: clock.Now, Book: record.Book{Store: store, Now: clock.Now, Procs: LiveProcs{}},
		ListPanes: func(context.Context) ([]tmuxctl.PaneInfo, error) { return panes, nil }}
	st, list, err := Run(ctx, d, true)
	if err != nil || len(list) != 1 {
		t.Fatalf("Run = %v, %d panes; want the one pane", err, len(list))
	}
	if a, g := st.Task("t_alive").Status, st.Task("t_gone").Status; a != state.StatusOrphaned || g != state.StatusFailed {
		t.Errorf("returned state: %s and %s; want orphaned and failed", a, g)
	}
	disk := statetest.Read(t, store)
	if g := disk.Task("t_gone"); g.Status != state.StatusFailed || disk.Messages["m_aaaaaaaa"].Status == state.MessagePending {
		t.Errorf("recorded: %s, its message %s; want failed and the queue dropped", g.Status, disk.Messages["m_aaaaaaaa"].Status)
	}
	if _, list, err := Run(ctx, d, false); err != nil || list != nil {
		t.Errorf("a second Run: %d panes, %v; want none listed (no active task left to look at)", len(list), err)
	}
	d.ListPanes = func(context.Context) ([]tmuxctl.PaneInfo, error) { return nil, errors.New("tmux: no server") }
	if _, _, err := Run(ctx, d, true); err == nil || !strings.Contains(err.Error(), "no server") {
		t.Errorf("Run with tmux failing: %v", err)
	}
}

func TestQueuedReason(t *testing.T) {
	for _, tc := range []struct {
		t    *state.Task
		want string
	}{
		{&state.Task{After: []string{"t_a", "t_b"}}, "waiting for t_a, t_b"},
		{&state.Task{Tmux: state.TmuxTarget{Pool: "label:gpu"}}, "waiting to be placed in pool label:gpu"},
		{&state.Task{After: []string{"t_a"}, Tmux: state.TmuxTarget{Pool: "any"}}, "waiting for t_a"},
		{&state.Task{Tmux: state.TmuxTarget{Pool: "any", Host: "h1"}}, "waiting to start on host h1"},
		{&state.Task{}, "waiting to start"},
	} {
		if got := QueuedReason(tc.t); got != tc.want {
			t.Errorf("QueuedReason(%+v) = %q, want %q", tc.t, got, tc.want)
		}
	}
}
