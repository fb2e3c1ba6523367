package answer

import (
	"context"
	"errors"
	"testing"

	"github.com/runner-cli/runner/state"
)

// fakeFollower is a task whose status the test sets, before and after a
// resume (which fails with err, when set).
type fakeFollower struct {
	status, after state.Status
	err           error
	resumed       int
}

func (f *fakeFollower) GetTask(_ context.Context, ref string) (*state.Task, error) {
	return &state.Task{ID: ref, Status: f.status}, nil
}

func (f *fakeFollower) Resume(context.Context, string) error {
	f.resumed++
	f.status = f.after
	return f.err
}

// TestFollowWith: a task still waiting with no supervisor is resumed;
// one that ended or is supervised meanwhile is not; a failed resume is
// an error only while the task still waits.
func TestFollowWith(t *testing.T) {
	none := func(*state.Task) bool { return false }
	for _, tc := range []struct {
		name          string
		status, after state.Status
		supervised    bool
		err           error
		resumed       int
		fails         bool
	}{
		{"waiting: resumed", state.StatusNeedsInput, state.StatusRunning, false, nil, 1, false},
		{"orphaned: resumed", state.StatusOrphaned, state.StatusRunning, false, nil, 1, false},
		{"ended meanwhile", state.StatusDone, state.StatusDone, false, nil, 0, false},
		{"a supervisor follows", state.StatusNeedsInput, state.StatusNeedsInput, true, nil, 0, false},
		{"resume failed, still waiting", state.StatusNeedsInput, state.StatusNeedsInput, false, errors.New("no"), 1, true},
		{"resume failed, ended meanwhile", state.StatusNeedsInput, state.StatusDone, false, errors.New("no"), 1, false},
	} {
		f := &fakeFollower{status: tc.status, after: tc.after, err: tc.err}
		supervised := none
		if tc.supervised {
			supervised = func(*state.Task) bool { return true }
		}
		err := FollowWith(f, supervised)(context.Background(), &state.Task{ID: "t_answaaaa"})
		if f.resumed != tc.resumed || (err != nil) != tc.fails {
			t.Errorf("%s: resumed %d, err %v; want %d, fails %v", tc.name, f.resumed, err, tc.resumed, tc.fails)
		}
	}
}
