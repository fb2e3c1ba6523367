package deps

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/runner-cli/runner/internal/importcheck"
	"github.com/runner-cli/runner/internal/statetest"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/supervisor"
	"github.com/runner-cli/runner/state"
)

func TestResolveAfter(t *testing.T) {
	t.Parallel()
	st := statetest.Plan("t_abc11111:running", "t_abc22222:done", "t_xyz33333:failed")
	for _, tc := range []struct {
		refs    []string
		want    []string
		wantErr string
	}{
		{refs: nil, want: nil},
		{refs: []string{"t_abc11111"}, want: []string{"t_abc11111"}},
		{refs: []string{"t_abc1,xyz"}, want: []string{"t_abc11111", "t_xyz33333"}},
		{refs: []string{"abc2", " t_abc11111 ", "t_abc22222"}, want: []string{"t_abc22222", "t_abc11111"}},
		{refs: []string{"t_abc"}, wantErr: `--after t_abc: task reference "t_abc" is ambiguous`},
		{refs: []string{"t_abc11111,t_nope"}, wantErr: `--after t_nope: no task matches "t_nope"`},
		{refs: []string{"t_abc11111,"}, wantErr: `--after "t_abc11111,": an empty task reference`},
		{refs: []string{""}, wantErr: `an empty task reference`},
		{refs: []string{"t_"}, wantErr: `--after t_: no task matches`},
	} {
		got, err := Resolve(st, tc.refs)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, fault.ErrUsage) {
				t.Errorf("Resolve(%q): err %v, want usage error with %q", tc.refs, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("Resolve(%q) = %q, %v; want %q", tc.refs, got, err, tc.want)
		}
	}
}

func TestCheckDependencies(t *testing.T) {
	t.Parallel()
	st := statetest.Plan("t_done:done", "t_done2:done", "t_run:running", "t_q:queued", "t_input:needs_input",
		"t_orph:orphaned", "t_fail:failed", "t_time:timeout", "t_canc:cancelled", "t_exit:exited")
	for _, tc := range []struct {
		after     []string
		ready     bool
		errDep    string
		errStatus state.Status
		msg       string
	}{
		{after: nil, ready: true},
		{after: []string{"t_done", "t_done2"}, ready: true},
		{after: []string{"t_done", "t_run"}, ready: false},
		{after: []string{"t_q"}, ready: false},
		{after: []string{"t_input"}, ready: false},
		// orphaned can be resumed: not finished, keep waiting
		{after: []string{"t_orph", "t_done"}, ready: false},
		{after: []string{"t_fail"}, errDep: "t_fail", errStatus: state.StatusFailed, msg: "dependency t_fail failed"},
		{after: []string{"t_time"}, errDep: "t_time", errStatus: state.StatusTimeout, msg: "dependency t_time timed out"},
		{after: []string{"t_canc"}, errDep: "t_canc", errStatus: state.StatusCancelled, msg: "dependency t_canc was cancelled"},
		{after: []string{"t_exit"}, errDep: "t_exit", errStatus: state.StatusExited, msg: "dependency t_exit exited"},
		// a failure decides even while another dependency still runs
		{after: []string{"t_run", "t_fail"}, errDep: "t_fail", errStatus: state.StatusFailed, msg: "dependency t_fail failed"},
		// the first failure in the given order is named
		{after: []string{"t_canc", "t_fail"}, errDep: "t_canc", errStatus: state.StatusCancelled, msg: "dependency t_canc was cancelled"},
		{after: []string{"t_pruned"}, errDep: "t_pruned", msg: "dependency t_pruned is no longer in the state (pruned)"},
	} {
		ready, err := Check(st, tc.after)
		if tc.errDep == "" {
			if err != nil || ready != tc.ready {
				t.Errorf("Check(%q) = %v, %v; want %v, nil", tc.after, ready, err, tc.ready)
			}
			continue
		}
		var de *DependencyError
		if ready || !errors.As(err, &de) || de.Task != tc.errDep || de.Status != tc.errStatus || err.Error() != tc.msg {
			t.Errorf("Check(%q) = %v, %v; want a DependencyError %q", tc.after, ready, err, tc.msg)
			continue
		}
		if !errors.Is(err, supervisor.ErrCancelled) {
			t.Errorf("%v does not wrap ErrCancelled", err)
		}
	}
}

// TestImports keeps the package doc true: rules on the state given.
func TestImports(t *testing.T) {
	importcheck.Only(t, ".", "runner/fault", "runner/supervisor", "state")
}

// TestWait: Wait reads the state again on each change, returns nil once
// the dependency is done, a *DependencyError when it fails, and a
// *LeftQueueError when the waiting task itself is cancelled.
func TestWait(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		then  []string // the dependency's and the task's statuses after the change
		check func(error) bool
	}{
		{"done", []string{"t_dep:done", "t_q:queued"}, func(err error) bool { return err == nil }},
		{"failed", []string{"t_dep:failed", "t_q:queued"}, func(err error) bool {
			var d *DependencyError
			return errors.As(err, &d) && errors.Is(err, supervisor.ErrCancelled)
		}},
		{"cancelled", []string{"t_dep:running", "t_q:cancelled"}, func(err error) bool {
			var l *LeftQueueError
			return errors.As(err, &l) && l.Task.ID == "t_q" && errors.Is(err, supervisor.ErrCancelled)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := statetest.Plan("t_dep:running", "t_q:queued")
			before.Task("t_q").After = []string{"t_dep"}
			after := statetest.Plan(tc.then...)
			after.Task("t_q").After = []string{"t_dep"}
			changes := make(chan struct{}, 1)
			reads := 0
			w := Watcher{
				Watch: func(context.Context) (<-chan struct{}, error) { return changes, nil },
				Read: func(context.Context) (*state.State, error) {
					reads++
					if reads == 1 {
						changes <- struct{}{}
						return before, nil
					}
					return after, nil
				},
				Reconcile: func(context.Context) (*state.State, error) { return after, nil },
			}
			if err := Wait(t.Context(), w, "t_q"); !tc.check(err) || reads != 2 {
				t.Errorf("Wait = %v after %d reads", err, reads)
			}
		})
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	st := statetest.Plan("t_dep:running", "t_q:queued")
	st.Task("t_q").After = []string{"t_dep"}
	w := Watcher{Watch: func(context.Context) (<-chan struct{}, error) { return make(chan struct{}), nil },
		Read: func(context.Context) (*state.State, error) { return st, nil }}
	if err := Wait(ctx, w, "t_q"); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait with ctx ended = %v", err)
	}
}
