package ask

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/runner-cli/runner/internal/statetest"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// fakeCore is package runner as asking uses it: the state as it is, a
// caller the test names; a shadow's argv is never made (the agents have
// no headless mode), and saying so fails the test.
type fakeCore struct {
	t      *testing.T
	store  *state.Store
	caller string
}

func (f *fakeCore) Reconcile(ctx context.Context) (*state.State, error) { return f.store.Read(ctx) }
func (f *fakeCore) CallerTask(context.Context, *state.State, []tmuxctl.PaneInfo) string {
	return f.caller
}
func (f *fakeCore) ResolveArgv(*profile.Profile, []string) ([]string, error) {
	f.t.Error("a shadow's argv was made for an agent with no headless mode")
	return nil, errors.New("no")
}
func (f *fakeCore) ShadowSandbox(*state.Task, *profile.Profile, []string) ([]string, error) {
	f.t.Error("a shadow was sandboxed for an agent with no headless mode")
	return nil, errors.New("no")
}

// TestRunSiblingsAsMessages: @siblings are the caller's parent's other
// children; an agent with no headless mode gets the question as a
// message, posted once, and asked by the caller.
func TestRunSiblingsAsMessages(t *testing.T) {
	s := statetest.WithTasks(t,
		statetest.Supervised("t_root0000", "", state.StatusRunning),
		statetest.Supervised("t_kida0000", "t_root0000", state.StatusRunning),
		statetest.Supervised("t_kidb0000", "t_root0000", state.StatusRunning))
	d := Deps{Store: s, Profiles: []*profile.Profile{{Name: "sim"}}, Env: fakeEnv{},
		Core: &fakeCore{t: t, store: s, caller: "t_kida0000"}}
	var posted []string
	req := Request{Targets: []string{"@siblings"}, Question: "who edits handler.go?",
		Post: func(_ context.Context, to *state.Task, typ, text string) error {
			posted = append(posted, to.ID)
			return nil
		}}
	answers, err := Run(context.Background(), d, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(answers) != 1 || answers[0].Task != "t_kidb0000" || answers[0].Mode != ModeMessage || !answers[0].OK() {
		t.Errorf("answers %+v", answers)
	}
	if len(posted) != 1 || posted[0] != "t_kidb0000" {
		t.Errorf("posted to %q", posted)
	}
}

// TestRunBadTargets: @siblings outside any task, and an empty question,
// are bad input, and nothing is asked.
func TestRunBadTargets(t *testing.T) {
	s := statetest.WithTasks(t, statetest.Supervised("t_root0000", "", state.StatusRunning))
	d := Deps{Store: s, Profiles: []*profile.Profile{{Name: "sim"}}, Env: fakeEnv{},
		Core: &fakeCore{t: t, store: s}}
	post := func(context.Context, *state.Task, string, string) error {
		t.Error("a question was posted")
		return nil
	}
	for _, req := range []Request{
		{Targets: []string{"@siblings"}, Question: "q", Post: post},
		{Targets: []string{"t_root0000"}, Question: " ", Post: post},
	} {
		if _, err := Run(context.Background(), d, req); !errors.Is(err, fault.ErrUsage) {
			t.Errorf("Run(%q, %q) = %v, want a usage error", req.Targets, req.Question, err)
		}
	}
}

// fakeEnv is an Environment of these variables only.
type fakeEnv map[string]string

func (e fakeEnv) Getenv(name string) string { return e[name] }

func (e fakeEnv) Environ() []string {
	var out []string
	for k, v := range e {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

// TestShadowEnv: a shadow's environment is the one runner was given (not
// the process's), without the variables that say which task a process
// belongs to, with RUNNER_SHADOW_OF and the profile's Env.
func TestShadowEnv(t *testing.T) {
	d := Deps{Env: fakeEnv{"PATH": "/given/bin", "RUNNER_TASK_ID": "t_caller00", "KEEP": "1"}}
	prof := &profile.Profile{Name: "sim", Env: map[string]string{"AGENT_X": "y"}}
	got := shadowEnv(d, &state.Task{ID: "t_target0"}, prof)
	for _, want := range []string{"PATH=/given/bin", "KEEP=1", "RUNNER_SHADOW_OF=t_target0", "AGENT_X=y"} {
		if !slices.Contains(got, want) {
			t.Errorf("shadow env %q lacks %s", got, want)
		}
	}
	for _, kv := range got {
		if strings.HasPrefix(kv, "RUNNER_TASK_ID=") {
			t.Errorf("shadow env passes for the caller's task: %s", kv)
		}
	}
	if len(got) != 4 {
		t.Errorf("shadow env %q: want the given environment's two kept and two set, nothing of the process's", got)
	}
}
