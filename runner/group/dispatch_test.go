package group

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/plan"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/state"
)

// fakeStarter is a Starter in memory: a fakeLauncher, a state given, a
// fixed clock, and the supervisor it starts (or fails to).
type fakeStarter struct {
	*fakeLauncher
	st       *state.State
	spawnErr error
	spawned  []string
	updated  map[string]*state.Group
}

func newStarter(st *state.State) *fakeStarter {
	return &fakeStarter{fakeLauncher: &fakeLauncher{}, st: st, updated: map[string]*state.Group{}}
}

func (s *fakeStarter) State(context.Context) (*state.State, error) { return s.st, nil }

func (s *fakeStarter) Now() time.Time { return starterNow }

// starterNow is the fake starter's clock: fixed for the run, taken from
// runner's clock (a date written here would age past what the code
// compares it with, on a later day or with the clock ahead).
var starterNow = clock.Now().Truncate(time.Second)

func (s *fakeStarter) StartSupervisor(id string) (int, error) {
	if s.spawnErr != nil {
		return 0, s.spawnErr
	}
	s.spawned = append(s.spawned, id)
	return 4242, nil
}

func (s *fakeStarter) UpdateGroup(_ context.Context, id string, fn func(*state.Group) error) error {
	g := s.updated[id]
	if g == nil {
		g = &state.Group{ID: id}
		s.updated[id] = g
	}
	return fn(g)
}

// twoSims is a group of two sim candidates in dir, checked by `make test`.
func twoSims(dir string) Request {
	return Request{Req: plan.Request{Project: dir, Text: "fix the parser\nand its tests"}, Flags: Flags{Agents: []string{"sim", " sim "}, Check: "make test"},
		Profiles: profile.Builtins()}
}

// TestDispatchForeground: the group is recorded with its project here,
// its title, its flags and the clock; its candidates dispatched here; no supervisor started.
func TestDispatchForeground(t *testing.T) {
	dir := t.TempDir()
	s := newStarter(&state.State{})
	a := twoSims(dir)
	a.Flags.CheckRetry, a.Flags.Vote, a.Flags.BudgetTokens = 2, true, 500
	g, err := Dispatch(t.Context(), s, a)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case !strings.HasPrefix(g.ID, "g_") || g.Dir != dir || g.Project != "" || g.Text != "fix the parser":
		t.Errorf("group %+v", g)
	case g.Check != "make test" || g.CheckRetry != 2 || !g.Vote || g.BudgetTokens != 500 || !g.Created.Equal(s.Now()):
		t.Errorf("group's flags %+v", g)
	case strings.Join(g.Tasks, ",") != "t_cand0000,t_cand0001":
		t.Errorf("tasks %v", g.Tasks)
	case len(s.spawned) != 0 || len(s.said) != 0:
		t.Errorf("a foreground group started a supervisor %v, said %v", s.spawned, s.said)
	}
	slices.Sort(s.dispatched) // dispatched a few at once
	for i, d := range s.dispatched {
		if want := fmt.Sprintf("%d sim  %s", i, g.ID); d != want {
			t.Errorf("dispatched %q, want %q (here)", d, want)
		}
	}
}

// TestDispatchDetach: a detached group's supervisor is started and
// recorded at once, and said; one that cannot start says the candidates
// run.
func TestDispatchDetach(t *testing.T) {
	s := newStarter(&state.State{})
	a := twoSims(t.TempDir())
	a.Detach = true
	g, err := Dispatch(t.Context(), s, a)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.spawned) != 1 || s.spawned[0] != g.ID || s.updated[g.ID].SupervisorPID != 4242 {
		t.Errorf("spawned %v, recorded %+v", s.spawned, s.updated[g.ID])
	}
	if len(s.said) != 1 || !strings.Contains(s.said[0], "supervisor 4242 started (runner wait "+g.ID) {
		t.Errorf("said %v", s.said)
	}

	s = newStarter(&state.State{})
	s.spawnErr = errors.New("fork: no memory")
	_, err = Dispatch(t.Context(), s, a)
	if err == nil || !strings.Contains(err.Error(), "start its supervisor: fork: no memory (its candidates run; see them with 'runner compare") {
		t.Errorf("spawn failed: %v", err)
	}
}

// TestDispatchRecordedSupervisor: a supervisor that recorded itself
// first, or a group that ended already, is not overwritten.
func TestDispatchRecordedSupervisor(t *testing.T) {
	s := newStarter(&state.State{})
	g := &state.Group{ID: "g_rec00001", SupervisorPID: 7}
	s.updated[g.ID] = g
	if err := detach(t.Context(), s, g); err != nil || g.SupervisorPID != 7 {
		t.Errorf("detach: %v, pid %d, want 7 kept", err, g.SupervisorPID)
	}
	g = &state.Group{ID: "g_rec00002", Ended: s.Now()}
	s.updated[g.ID] = g
	if err := detach(t.Context(), s, g); err != nil || g.SupervisorPID != 0 {
		t.Errorf("detach of an ended group: %v, pid %d", err, g.SupervisorPID)
	}
}

// TestDispatchPolicyCheck: without --check the project's policy gives
// it; a registered project is the group's project.
func TestDispatchPolicyCheck(t *testing.T) {
	dir := t.TempDir()
	st := &state.State{Projects: map[string]*state.Project{"api": {Name: "api", Dir: dir}}}
	a := twoSims("api")
	a.Flags.Check = ""
	asked := ""
	a.Req.Policy = func(p string) config.Policy { asked = p; return config.Policy{Check: "go test ./..."} }
	g, err := Dispatch(t.Context(), newStarter(st), a)
	if err != nil {
		t.Fatal(err)
	}
	if g.Check != "go test ./..." || g.Project != "api" || g.Dir != dir || asked != "api" {
		t.Errorf("group %+v, policy asked for %q", g, asked)
	}
}

// TestDispatchRefuses: bad input is a usage error found before anything
// is snapshotted or dispatched.
func TestDispatchRefuses(t *testing.T) {
	dir := t.TempDir()
	remote := &state.State{Projects: map[string]*state.Project{"far": {Name: "far", Dir: "/srv/far", Host: "b"}}}
	for _, tc := range []struct {
		name  string
		st    *state.State
		edit  func(*Request)
		words string
	}{
		{"confined", nil, func(a *Request) { a.Req.Confined = "t_parent01" }, "a sandboxed task cannot start a group"},
		{"agents and tries", nil, func(a *Request) { a.Flags.TriesSet, a.Flags.Tries = true, 2 }, "--agents and --tries exclude each other"},
		{"tries zero", nil, func(a *Request) { a.Flags = Flags{TriesSet: true}; a.Agent = "sim" }, "--tries 0: give 1 to 16"},
		{"tries too many", nil, func(a *Request) { a.Flags = Flags{TriesSet: true, Tries: 17} }, "--tries 17"},
		{"too many agents", nil, func(a *Request) { a.Flags.Agents = make([]string, 17) }, "--agents: 17 candidates; at most 16"},
		{"empty name", nil, func(a *Request) { a.Flags.Agents = []string{"sim", " "} }, `--agents "sim, ": an empty agent name`},
		{"unknown agent", nil, func(a *Request) { a.Flags.Agents = []string{"sim", "nosuch"} }, `--agents: unknown agent "nosuch"`},
		{"after", nil, func(a *Request) { a.Req.After = []string{"t_a"} }, "--after/--from: a group starts at once"},
		{"from", nil, func(a *Request) { a.Req.From = "t_a" }, "--after/--from"},
		{"exclusive", nil, func(a *Request) { a.Req.Exclusive = true }, "--exclusive: a group's candidates run at the same time"},
		{"no worktree", nil, func(a *Request) { a.Req.Worktree = new(false) }, "--worktree=false"},
		{"print answer", nil, func(a *Request) { a.PrintAnswer = true }, "--print-answer: a group has several answers"},
		{"negative", nil, func(a *Request) { a.Flags.CheckRetry = -1 }, "take positive values"},
		{"group flags alone", nil, func(a *Request) { a.Flags = Flags{Vote: true} }, "go with a group (--agents or --tries)"},
		{"path on a host", nil, func(a *Request) { a.Req.Project = "host:b:/srv/api" }, "project \"host:b:/srv/api\" is on host b: a group starts from your repository here; give the path here (the same path on the host: --host b /srv/api)"},
		{"project on a host", remote, func(a *Request) { a.Req.Project = "far" }, "(the same path on the host: --host b /srv/far)"},
		{"no such project", nil, func(a *Request) { a.Req.Project = "nosuch" }, "nosuch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := tc.st
			if st == nil {
				st = &state.State{}
			}
			s := newStarter(st)
			a := twoSims(dir)
			tc.edit(&a)
			_, err := Dispatch(t.Context(), s, a)
			if !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), tc.words) {
				t.Errorf("%v, want a usage error saying %q", err, tc.words)
			}
			if len(s.dispatched) != 0 || len(s.saved) != 0 {
				t.Errorf("dispatched %v, saved %d groups", s.dispatched, len(s.saved))
			}
		})
	}
}

// TestDispatchNoRepository: a folder that is no git repository is bad
// input; another failure of the start is the group's error.
func TestDispatchNoRepository(t *testing.T) {
	s := newStarter(&state.State{})
	s.snapErr = fmt.Errorf("snapshot: %w", ErrNotRepo)
	_, err := Dispatch(t.Context(), s, twoSims(t.TempDir()))
	if !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), "a group needs a git repository here") {
		t.Errorf("no repository: %v", err)
	}
	s = newStarter(&state.State{})
	s.failAgent = "sim"
	_, err = Dispatch(t.Context(), s, twoSims(t.TempDir()))
	if err == nil || errors.Is(err, fault.ErrUsage) || !strings.HasPrefix(err.Error(), "group: group: no candidate could be dispatched") {
		t.Errorf("none dispatched: %v", err)
	}
}

// TestTriesRepeatAgent: --tries N is N candidates of --agent.
func TestTriesRepeatAgent(t *testing.T) {
	got, err := Agents(Flags{TriesSet: true, Tries: 3}, "sim", profile.Builtins())
	if err != nil || strings.Join(got, ",") != "sim,sim,sim" {
		t.Errorf("agents %v, %v", got, err)
	}
	if Where("local") != "" || Where("") != "" || Where("label:gpu") != "label:gpu" {
		t.Error("Where: local is here, anything else is where it says")
	}
}

// TestSuperviseHereInterrupted: a foreground group whose dispatch is
// interrupted cancels its candidates still at work.
func TestSuperviseHereInterrupted(t *testing.T) {
	f := newFake(t, &state.Task{ID: "t_cand0001", Status: state.StatusRunning}, &state.Task{ID: "t_cand0002", Status: state.StatusDone})
	f.addGroup(&state.Group{ID: "g_intr0001", Tasks: []string{"t_cand0001", "t_cand0002"}})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, _, err := SuperviseHere(ctx, f.deps(), "g_intr0001"); err == nil {
		t.Fatal("an interrupted supervision returned no error")
	}
	if got := f.saw("cancel "); len(got) != 1 || got[0] != "cancel t_cand0001 the group's dispatch was interrupted" {
		t.Errorf("cancels %v", got)
	}
}
