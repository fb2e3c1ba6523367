package plan

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/runner-cli/runner/internal/importcheck"
	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/projects"
	"github.com/runner-cli/runner/runner/settings"
	"github.com/runner-cli/runner/state"
)

// TestImports: the plan reads no state file and reaches no host itself
// (the state and a Machine are given); git only through gitsnap.
func TestImports(t *testing.T) {
	importcheck.Only(t, ".", "gitsnap", "runner/breadth", "runner/budget", "runner/config", "runner/confine", "runner/deps", "runner/fault", "runner/messaging", "runner/profile", "runner/projects", "runner/sandbox", "runner/settings", "state", "tmuxctl")
}

// TestNewRefuses: a bad request is a usage error that names what to
// change, before anything is resolved.
func TestNewRefuses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		req   Request
		words string
	}{
		{"empty text", Request{Agent: "sim", Text: " \n"}, "the task is empty"},
		{"unknown agent", Request{Agent: "nope", Text: "x"}, "nope"},
		{"bad permissions", Request{Agent: "sim", Text: "x", Permissions: "sometimes"}, "sometimes"},
		{"bad approve rule", Request{Agent: "sim", Text: "x", Settings: settings.Run{ApproveRules: []string{"("}}}, "--approve-rule"},
		{"bad sandbox home", Request{Agent: "sim", Text: "x", SandboxHome: "mine"}, `--sandbox-home "mine": give shared or task`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.req, profile.Builtins())
			if err == nil || !strings.Contains(err.Error(), tc.words) {
				t.Fatalf("New: %v, want an error saying %q", err, tc.words)
			}
			if tc.name != "bad permissions" && !errors.Is(err, fault.ErrUsage) {
				t.Errorf("New: %v is no usage error", err)
			}
		})
	}
}

// TestResolve: the flags win; what they leave open the project's policy
// decides, asked once; --from means a worktree; a door's child stays
// sandboxed.
func TestResolve(t *testing.T) {
	pol := config.Policy{Isolation: "worktree", Sandbox: true, MaxTurns: 7, BudgetTokens: 1000, BudgetUSD: 2.5,
		Setup: &config.WorktreeSetup{}}
	asked := 0
	policy := func(project string) config.Policy {
		asked++
		if project != "api" {
			t.Errorf("policy asked for %q, want api", project)
		}
		return pol
	}
	for _, tc := range []struct {
		name               string
		req                Request
		from               string
		worktree, sandbox  bool
		maxTurns           int
		budgetTokens       int64
		setup              bool
		confined, copyHome bool
		home               string
	}{
		{name: "policy decides", req: Request{}, worktree: true, sandbox: true, maxTurns: 7, budgetTokens: 1000, setup: true},
		{name: "flags win", req: Request{Worktree: new(false), Sandbox: new(false),
			Settings: settings.Run{MaxTurns: 3, BudgetTokens: 5}}, maxTurns: 3, budgetTokens: 5, setup: true},
		{name: "from implies a worktree", req: Request{Worktree: new(false)}, from: "t_a", worktree: true, sandbox: true, maxTurns: 7, budgetTokens: 1000, setup: true},
		{name: "a door's child", req: Request{Sandbox: new(false), Confined: "t_p"}, confined: true, copyHome: true,
			worktree: true, sandbox: true, maxTurns: 7, budgetTokens: 1000, setup: true, home: settings.SandboxHomeTask},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asked = 0
			req := tc.req
			req.Agent, req.Text, req.Policy = "sim", "do it", policy
			p, err := New(req, profile.Builtins())
			if err != nil {
				t.Fatal(err)
			}
			p.Resolve(projects.Place{Project: "api", Dir: "/src/api"})
			if tc.confined {
				p.Confine("/src/api/sub", "/src/api", tc.copyHome)
			}
			p.Wait(nil, tc.from)
			if asked != 1 {
				t.Errorf("the policy was asked %d times, want once", asked)
			}
			if p.Worktree != tc.worktree || p.Sandbox != tc.sandbox || p.SandboxHome != tc.home {
				t.Errorf("worktree %v sandbox %v home %q; want %v %v %q", p.Worktree, p.Sandbox, p.SandboxHome, tc.worktree, tc.sandbox, tc.home)
			}
			if p.Settings.MaxTurns != tc.maxTurns || p.Settings.BudgetTokens != tc.budgetTokens || (p.Setup != nil) != tc.setup {
				t.Errorf("max turns %d, budget %d tokens, setup %v; want %d, %d, %v", p.Settings.MaxTurns, p.Settings.BudgetTokens, p.Setup != nil, tc.maxTurns, tc.budgetTokens, tc.setup)
			}
			if tc.confined && (p.Dir != "/src/api/sub" || p.Within != "/src/api") {
				t.Errorf("confined to %q within %q", p.Dir, p.Within)
			}
			p.Finish([]string{"/bin/agent"}, []string{"K=V"})
			s := p.Settings.Start
			if s == nil || s.Worktree != p.Worktree || (s.Sandbox != nil) != p.Sandbox || s.Argv[0] != "/bin/agent" || s.Env[0] != "K=V" {
				t.Fatalf("Start %+v does not say the plan", s)
			}
			if p.Worktree && (s.Setup != p.Setup || s.From != tc.from) {
				t.Errorf("Start's set-up %v from %q", s.Setup, s.From)
			}
			if p.Sandbox && s.Sandbox.Home != tc.home {
				t.Errorf("Start's sandbox home %q, want %q", s.Sandbox.Home, tc.home)
			}
		})
	}
}

// TestCheckSandboxHome: a copy of the CLI's directories is made here only.
func TestCheckSandboxHome(t *testing.T) {
	for _, tc := range []struct {
		place projects.Place
		home  string
		ok    bool
	}{
		{projects.Place{Dir: "/a"}, settings.SandboxHomeTask, true},
		{projects.Place{Dir: "/a", Host: "h"}, settings.SandboxHomeShared, true},
		{projects.Place{Dir: "/a", Host: "h"}, settings.SandboxHomeTask, false},
		{projects.Place{Dir: "/a", Pool: "any"}, settings.SandboxHomeTask, false},
	} {
		p := &Plan{Place: tc.place, Sandbox: true, SandboxHome: tc.home}
		err := p.CheckSandboxHome()
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, fault.ErrUsage)) {
			t.Errorf("%+v %s: %v", tc.place, tc.home, err)
		}
	}
}

// TestMakeRefuses: what the state decides is refused with a usage error
// naming the flag or the config key.
func TestMakeRefuses(t *testing.T) {
	st := &state.State{Tasks: map[string]*state.Task{
		"t_parent01": {ID: "t_parent01", Level: 2},
		"t_nobranch": {ID: "t_nobranch", Status: state.StatusDone},
		"t_branch01": {ID: "t_branch01", Status: state.StatusRunning, Branch: "runner/t_branch01"},
	}}
	dir := t.TempDir()
	for _, tc := range []struct {
		name   string
		req    Request
		caller string
		words  string
	}{
		{"past max_level", Request{MaxLevel: 2}, "t_parent01", "max_level is 2"},
		{"from without a worktree", Request{From: "t_nobranch", After: []string{"t_nobranch"}}, "", "no worktree of its own"},
		{"from not waited for", Request{From: "t_branch01"}, "", "give --after t_branch01 too"},
		{"budget the agent cannot keep", Request{Settings: settings.Run{BudgetUSD: 1}}, "", "--budget-usd"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := tc.req
			req.Agent, req.Text, req.Project = "shell", "x", dir
			_, err := Make(t.Context(), req, profile.Builtins(), st, &fakeMachine{caller: tc.caller, argv: []string{"/bin/sh"}})
			if !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), tc.words) {
				t.Fatalf("Make: %v, want a usage error saying %q", err, tc.words)
			}
		})
	}
	// A child one level under the limit is made, with its lineage, whole.
	p, err := Make(t.Context(), Request{Agent: "shell", Text: "x", Project: dir, MaxLevel: 3}, profile.Builtins(), st, &fakeMachine{caller: "t_parent01", argv: []string{"/bin/sh"}})
	if err != nil || p.Parent != "t_parent01" || p.Level != 3 || p.Source != "t_parent01" || p.Dir != dir || p.Settings.Start == nil {
		t.Fatalf("Make: %+v %v", p, err)
	}
}

// fakeMachine answers a plan's Check as told, and says what was asked.
type fakeMachine struct {
	caller     string
	argv       []string
	sandboxErr error
	asked      []string
}

func (f *fakeMachine) Caller(context.Context, *state.State) string { return f.caller }

func (f *fakeMachine) Pool(_ context.Context, spec string) error {
	f.asked = append(f.asked, "pool "+spec)
	return nil
}

func (f *fakeMachine) GitOn(ctx context.Context, host string) (context.Context, error) {
	f.asked = append(f.asked, "git "+host)
	return ctx, nil
}

func (f *fakeMachine) HostSandbox(_ context.Context, host string) error {
	f.asked = append(f.asked, "sandbox "+host)
	return f.sandboxErr
}

func (f *fakeMachine) Argv(_ context.Context, host, dir string, _ *profile.Profile, argv []string) ([]string, error) {
	f.asked = append(f.asked, "argv "+host+" "+dir)
	return append(slices.Clone(f.argv), argv[1:]...), nil
}

func (f *fakeMachine) CLIVersion(context.Context, string, string, []string) (string, error) {
	return "", errors.New("no version here")
}

// TestCheck: the plan is made whole where the task runs: the argv found
// there, a host's sandbox asked of the host, a worktree refused where
// there is no repository; its Start says it all.
func TestCheck(t *testing.T) {
	dir := t.TempDir() // no repository
	for _, tc := range []struct {
		name   string
		req    Request
		place  projects.Place
		words  string   // the usage error, if any
		asked  []string // of the machine
		argv0  string
		worked bool
	}{
		{name: "here", place: projects.Place{Dir: dir}, asked: []string{"argv  " + dir}, argv0: "/found/sh"},
		{name: "on a host, sandboxed", req: Request{Sandbox: new(true)}, place: projects.Place{Dir: "/src", Host: "h1"},
			asked: []string{"sandbox h1", "argv h1 /src"}, argv0: "/found/sh"},
		{name: "in a pool", place: projects.Place{Dir: "/src", Pool: "any"}, asked: []string{"pool any"}, argv0: "bash"},
		{name: "a worktree without a repository", req: Request{Worktree: new(true)}, place: projects.Place{Dir: dir},
			asked: []string{"git "}, words: "--worktree"},
		{name: "a task home on a host", req: Request{Sandbox: new(true), SandboxHome: "task"}, place: projects.Place{Dir: "/src", Host: "h1"},
			words: "--sandbox-home task: not on a host"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := tc.req
			req.Agent, req.Text = "shell", "echo hi"
			p, err := New(req, profile.Builtins())
			if err != nil {
				t.Fatal(err)
			}
			p.Resolve(tc.place)
			m := &fakeMachine{argv: []string{"/found/sh"}}
			err = p.Check(t.Context(), m, &state.State{})
			if !slices.Equal(m.asked, tc.asked) {
				t.Errorf("asked %q, want %q", m.asked, tc.asked)
			}
			if tc.words != "" {
				if !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), tc.words) {
					t.Fatalf("Check: %v, want a usage error saying %q", err, tc.words)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s := p.Settings.Start; s == nil || s.Argv[0] != tc.argv0 || (s.Sandbox != nil) != p.Sandbox {
				t.Fatalf("Start %+v, want argv[0] %s", s, tc.argv0)
			}
		})
	}
}

// TestRequestNoPairs holds issue 55's count of X/XSet pairs in a dispatch
// request at none: a flag that may be left to the config is a pointer
// (nil: not given), and the plan holds its value resolved.
func TestRequestNoPairs(t *testing.T) {
	rt := reflect.TypeFor[Request]()
	for i := range rt.NumField() {
		name := rt.Field(i).Name
		if base, ok := strings.CutSuffix(name, "Set"); ok {
			if _, pair := rt.FieldByName(base); pair {
				t.Errorf("Request.%s says whether Request.%s was given: make %s a pointer (nil: not given)", name, base, base)
			}
		}
	}
}
