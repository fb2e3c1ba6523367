package gc

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/record"
	"github.com/runner-cli/runner/runner/settings"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// groupStore is a state in a temporary folder holding tasks and group
// g_cancel1 of their ids (a missing id too), and the Deps cancel uses
// over it; notified collects the tasks Notify was told of.
func groupStore(t *testing.T, tasks ...*state.Task) (Deps, *[]string) {
	t.Helper()
	ctx := context.Background()
	s, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{}
	if err := s.Update(ctx, func(st *state.State) error {
		for _, tk := range tasks {
			st.Tasks[tk.ID] = tk
			ids = append(ids, tk.ID)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateGroups(ctx, func(gs map[string]*state.Group) error {
		gs["g_cancel1"] = &state.Group{ID: "g_cancel1", Tasks: append(ids, "t_missing1")}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	now := clock.Now // the store prunes a task that ended before its retention
	notified := &[]string{}
	return Deps{Store: s, Record: record.Book{Store: s, Now: now, Procs: noProcs{}}, Now: now, Warn: t.Logf,
		Core: &fakeCore{store: s, notified: notified},
	}, notified
}

// TestCancelGroup: the candidates still at work are cancelled (and the
// user told), the ended ones left as they are; a candidate that cannot
// be read is named in the error, the others cancelled all the same.
func TestCancelGroup(t *testing.T) {
	d, notified := groupStore(t,
		&state.Task{ID: "t_run00001", Status: state.StatusRunning, Agent: "shell"},
		&state.Task{ID: "t_done0001", Status: state.StatusDone, Agent: "shell"})
	out, err := CancelGroup(context.Background(), d, "g_cancel1", false)
	if err == nil || !strings.Contains(err.Error(), "t_missing1") {
		t.Errorf("err = %v, want one naming the missing candidate", err)
	}
	for _, e := range []string{"t_run00001", "t_done0001"} {
		if err != nil && strings.Contains(err.Error(), e) {
			t.Errorf("err = %v", err)
		}
	}
	if len(out) != 1 || out[0].ID != "t_run00001" || out[0].Status != state.StatusCancelled {
		t.Fatalf("cancelled %+v, want t_run00001 cancelled", out)
	}
	if strings.Join(*notified, " ") != "t_run00001" {
		t.Errorf("notified %q", *notified)
	}
	tk, err := d.Core.GetTask(context.Background(), "t_done0001")
	if err != nil || tk.Status != state.StatusDone {
		t.Errorf("the ended candidate: %+v, %v", tk, err)
	}
}

// TestCancelGroupNothingLeft: a group whose candidates all ended is a
// usage error, and nothing is cancelled.
func TestCancelGroupNothingLeft(t *testing.T) {
	d, notified := groupStore(t, &state.Task{ID: "t_done0001", Status: state.StatusDone})
	d.Core.(*fakeCore).waiting = true
	out, err := CancelGroup(context.Background(), d, "g_cancel1", false)
	if !errors.Is(err, fault.ErrUsage) || out != nil || len(*notified) != 0 {
		t.Errorf("CancelGroup = %v, %v (notified %q); want a usage error", out, err, *notified)
	}
	if _, err := CancelGroup(context.Background(), d, "g_nosuch1", false); err == nil {
		t.Error("no error for a group that does not exist")
	}
}

// noProcs is a process table where only this test lives.
type noProcs struct{}

func (noProcs) Self() (int, string)    { return 1, "" }
func (noProcs) Alive(int, string) bool { return false }

// fakeCore is package runner as gc asks it: the tasks of a store as they
// are (no reconciling, no panes), every notice collected in notified;
// waiting makes every task one waiting for input.
type fakeCore struct {
	store    *state.Store
	notified *[]string
	waiting  bool
}

func (f *fakeCore) GetTask(ctx context.Context, ref string) (*state.Task, error) {
	if f.waiting {
		return &state.Task{ID: ref, Status: state.StatusNeedsInput}, nil
	}
	st, err := f.store.Read(ctx)
	if err != nil {
		return nil, err
	}
	if tk := st.Tasks[ref]; tk != nil {
		return tk, nil
	}
	return nil, fmt.Errorf("no task %s", ref)
}

func (f *fakeCore) ReconcilePanes(ctx context.Context) (*state.State, []tmuxctl.PaneInfo, error) {
	st, err := f.store.Read(ctx)
	return st, nil, err
}

func (f *fakeCore) Notify(_ context.Context, t *state.Task, _ settings.Run) {
	*f.notified = append(*f.notified, t.ID)
}
