package deps

import (
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
