package agentscmd

import (
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runner-cli/runner/internal/statetest"
	"github.com/runner-cli/runner/runner"
	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/tmuxctl"
)

func TestExplainScreen(t *testing.T) {
	x := newFake(t, "", nil)
	if err := x.run(t, "explain", "--screen", simAsk, "--agent", "sim"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"needs_input\n", `  decided by: needs_input[0] '^❯ 1\. Yes' at agents/sim.toml:`, "(built in)",
		"    Create hello.txt?", "RULE"} {
		if !strings.Contains(x.b.Out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, x.b.Out.String())
		}
	}
	if strings.Contains(x.b.Out.String(), "last hook event") {
		t.Errorf("a screen file has no task, but the output names a hook event:\n%s", x.b.Out.String())
	}
}

// TestExplainUserRule: a rule of the user's agent file names that file
// and line.
func TestExplainUserRule(t *testing.T) {
	x := newFake(t, "", map[string]string{"sim.toml": "# mine\nneeds_input = [\n  'Create \\S+\\?',\n]\n"})
	if err := x.run(t, "explain", "--screen", simAsk, "--agent", "sim", "--json"); err != nil {
		t.Fatal(err)
	}
	var ex struct {
		State   string
		Decided struct {
			Rule   string
			Origin struct {
				File string
				Line int
			}
		}
		Sources []struct{ File string }
	}
	if err := json.Unmarshal(x.b.Out.Bytes(), &ex); err != nil || !x.b.JSON {
		t.Fatalf("not JSON: %v\n%s", err, x.b.Out.String())
	}
	if ex.State != "needs_input" || ex.Decided.Rule != "needs_input[0]" || ex.Decided.Origin.File != filepath.Join(x.agents, "sim.toml") ||
		ex.Decided.Origin.Line != 3 || len(ex.Sources) != 2 {
		t.Errorf("got %+v", ex)
	}
}

func TestExplainBadInput(t *testing.T) {
	x := newFake(t, "", nil)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"explain", "--agent", "sim"}, "give one of --screen"},
		{[]string{"explain", "--screen", simAsk, "--pane", "%1"}, "give one of --screen"},
		{[]string{"explain", "--screen", simAsk}, "--agent is required"},
		{[]string{"explain", "--screen", "/nonexistent/s.txt", "--agent", "sim"}, "agents explain: read screen /nonexistent/s.txt"},
	} {
		if err := x.run(t, tc.args...); !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want a usage error with %q", tc.args, err, tc.want)
		}
	}
	if err := x.run(t, "explain", "--screen", simAsk, "--agent", "nope"); err == nil || !strings.Contains(err.Error(), `unknown agent "nope"`) {
		t.Errorf("unknown agent: %v", err)
	}
}

// TestExplainPaneAndTask: --pane and --task open the runner environment
// (its error is the command's); a live pane is captured on its tmux
// server; an unknown task is the state's error.
func TestExplainPaneAndTask(t *testing.T) {
	x := newFake(t, "", nil)
	bad := errors.New("no state")
	x.f.Env = func(bool) (*runner.Env, *config.Config, error) { return nil, nil, bad }
	for _, args := range [][]string{{"explain", "--pane", "%1"}, {"explain", "--task", "t_1"}} {
		if err := x.run(t, args...); !errors.Is(err, bad) {
			t.Errorf("%v: %v, want the environment's error", args, err)
		}
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	tc := tmuxServer(t)
	store := statetest.Store(t)
	x.f.Env = func(bool) (*runner.Env, *config.Config, error) {
		cfg, err := x.f.Config()
		return &runner.Env{Store: store, TC: tc, Getenv: x.f.Getenv}, cfg, err
	}
	pane, err := tc.Launch(t.Context(), tmuxctl.WindowSpec{Session: "e", Argv: []string{"sh", "-c", "echo '$ '; exec sleep 30"}, RemainOnExit: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := x.run(t, "explain", "--pane", pane, "--agent", "shell", "--json"); err != nil {
		t.Fatalf("explain --pane: %v", err)
	}
	var ex struct{ State, Pane, Task string }
	if err := json.Unmarshal(x.b.Out.Bytes(), &ex); err != nil || ex.Pane != pane || ex.Task != "" || ex.State == "" {
		t.Errorf("explain --pane --json: %v %s", err, x.b.Out.String())
	}
	if err := x.run(t, "explain", "--task", "t_nope0001"); !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), "t_nope0001") {
		t.Errorf("explain --task of no task: %v, want a usage error naming it", err)
	}
}
