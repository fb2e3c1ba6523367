package answer

import (
	"context"
	"errors"
	"strings"
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

// TestFollowing: a task still waiting with no supervisor is resumed;
// one that ended or is supervised meanwhile is not; a failed resume is
// an error only while the task still waits.
func TestFollowing(t *testing.T) {
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
		err := Following(f, supervised).Follow(context.Background(), &state.Task{ID: "t_answaaaa"})
		if f.resumed != tc.resumed || (err != nil) != tc.fails {
			t.Errorf("%s: resumed %d, err %v; want %d, fails %v", tc.name, f.resumed, err, tc.resumed, tc.fails)
		}
	}
}

// fakeSupervision is a Supervision whose supervisor is there or not,
// and whose Follow fails with err (when set); it counts the follows.
type fakeSupervision struct {
	supervised bool
	err        error
	followed   []string
}

func (s *fakeSupervision) Supervised(*state.Task) bool { return s.supervised }

func (s *fakeSupervision) Follow(_ context.Context, t *state.Task) error {
	s.followed = append(s.followed, t.ID)
	return s.err
}

// journalLog is a Journal that keeps its entries as "kind id: msg".
type journalLog []string

func (j *journalLog) Journal(_ context.Context, t *state.Task, kind, msg string) {
	*j = append(*j, kind+" "+t.ID+": "+msg)
}

// TestAnswerFollowsAndJournals: a press on a task nothing supervises
// starts a supervisor (its failure is the answer's error, the option
// pressed all the same); a supervised one, or a refused answer, starts
// none; each answer, pressed or refused, is one journal entry.
func TestAnswerFollowsAndJournals(t *testing.T) {
	for _, tc := range []struct {
		name       string
		supervised bool
		followErr  error
		followed   int
		fails      string
	}{
		{"nothing supervises it", false, nil, 1, ""},
		{"a supervisor follows", true, nil, 0, ""},
		{"the follow fails", false, errors.New("tmux gone"), 1, "no supervisor follows the task now ('runner resume t_answer0001'): tmux gone"},
	} {
		pane := &simPane{question: "Ship it?"}
		d, id, digest := setup(t, pane)
		sup, log := &fakeSupervision{supervised: tc.supervised, err: tc.followErr}, &journalLog{}
		d.Supervision, d.Journal = sup, log
		if _, err := Answer(t.Context(), d, Request{Task: id, Option: "1", Digest: "0123456789abcdef", Op: "op-stale"}); !errors.Is(err, ErrStale) {
			t.Fatalf("%s: a stale digest: %v", tc.name, err)
		}
		rc, err := Answer(t.Context(), d, Request{Task: id, Option: "2", Digest: digest, Op: "op-ok", By: "me"})
		if tc.fails == "" && err != nil || tc.fails != "" && (err == nil || !strings.Contains(err.Error(), tc.fails)) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.fails)
		}
		if rc.Result != state.AnswerPressed || pane.enters != 1 {
			t.Errorf("%s: receipt %+v, %d Enters; want pressed once", tc.name, rc, pane.enters)
		}
		if len(sup.followed) != tc.followed {
			t.Errorf("%s: followed %q, want %d", tc.name, sup.followed, tc.followed)
		}
		if len(*log) != 2 || !strings.HasPrefix((*log)[0], "answer "+id+": refused option 1 (op op-stale") ||
			!strings.HasPrefix((*log)[1], "answer "+id+`: pressed option 2 "No" (op op-ok, digest `+digest+", by me)") {
			t.Errorf("%s: journal %q", tc.name, *log)
		}
	}
}
