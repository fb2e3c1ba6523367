package hostcmd

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/cmd/runner/internal/cmdkit"
	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/statetest"
	"github.com/runner-cli/runner/runner"
	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/hosts"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/state"
)

// fake is a factory over a real state store, with the hosts' answers
// faked: the probes list shows, and the report check gives.
type fake struct {
	f       *cmdkit.Factory
	b       *cmdkit.Buffers
	s       *state.Store
	probes  map[string]*state.HostProbe
	report  hosts.Report
	checkE  error
	checked []string // the agents' commands check was asked about
}

func newFake(t *testing.T) *fake {
	t.Helper()
	x := &fake{s: statetest.Store(t), probes: map[string]*state.HostProbe{}}
	x.f, x.b = cmdkit.Fake("", nil)
	x.f.Store = func() (*state.Store, error) { return x.s, nil }
	x.f.Env = func(bool) (*runner.Env, *config.Config, error) {
		return &runner.Env{Store: x.s, Profiles: []*profile.Profile{{Name: "claude", Command: []string{"claude"}}, {Name: "sh", Command: []string{"/bin/sh", "-i"}}}}, nil, nil
	}
	return x
}

// Probes is the fake's hosts.Prober.
func (x *fake) Probes(context.Context, []*state.Host, time.Duration) map[string]*state.HostProbe {
	return x.probes
}

func (x *fake) run(t *testing.T, args ...string) error {
	t.Helper()
	return x.b.Run(t.Context(), newCmd(&cmds{f: x.f, probes: func(*runner.Env) hosts.Prober { return x }, check: func(_ context.Context, _ *state.Store, h *state.Host, agents []string) (hosts.Report, error) {
		x.checked = agents
		rep := x.report
		rep.Host = h.Name
		return rep, x.checkE
	}}), args...)
}

// TestHostLife adds, lists, drains, undrains and removes a host, in words
// and JSON.
func TestHostLife(t *testing.T) {
	x := newFake(t)
	if err := x.run(t, "list"); err != nil || !strings.Contains(x.b.Out.String(), "no hosts") {
		t.Errorf("list of none: %v %q", err, x.b.Out.String())
	}
	if err := x.run(t, "add", "b1", "me@build1", "--ssh-arg", "-p", "--ssh-arg", "2222", "--max-agents", "4", "--label", "build", "--json"); err != nil {
		t.Fatalf("add: %v", err)
	}
	var h state.Host
	if err := json.Unmarshal(x.b.Out.Bytes(), &h); err != nil || h.Name != "b1" || h.MaxAgents != 4 || len(h.SSHArgs) != 2 || !x.b.JSON {
		t.Errorf("add --json: %v %q", err, x.b.Out.String())
	}
	if err := x.run(t, "add", "b2", "me@build2"); err != nil || !strings.Contains(x.b.Out.String(), "added host b2") || !strings.Contains(x.b.Out.String(), "runner host check b2") {
		t.Errorf("add: %v %q", err, x.b.Out.String())
	}
	x.probes["b1"] = &state.HostProbe{Host: "b1", At: clock.Now(), OK: true}
	if err := x.run(t, "ls"); err != nil || !strings.Contains(x.b.Out.String(), "b1") || !strings.Contains(x.b.Out.String(), "b2") {
		t.Errorf("ls: %v %q", err, x.b.Out.String())
	}
	if err := x.run(t, "list", "--json"); err != nil || !strings.Contains(x.b.Out.String(), `"me@build1"`) {
		t.Errorf("list --json: %v %q", err, x.b.Out.String())
	}
	if err := x.run(t, "drain", "b1"); err != nil || !strings.Contains(x.b.Out.String(), "host b1 drained") {
		t.Errorf("drain: %v %q", err, x.b.Out.String())
	}
	if got, _ := hosts.Get(t.Context(), x.s, "b1"); got == nil || !got.Drained {
		t.Errorf("b1 after drain: %+v", got)
	}
	if err := x.run(t, "undrain", "b1"); err != nil || !strings.Contains(x.b.Out.String(), "takes tasks again") {
		t.Errorf("undrain: %v %q", err, x.b.Out.String())
	}
	if err := x.run(t, "rm", "b2"); err != nil || !strings.Contains(x.b.Out.String(), "removed host b2 (me@build2)") {
		t.Errorf("rm: %v %q", err, x.b.Out.String())
	}
	if _, err := hosts.Get(t.Context(), x.s, "b2"); err == nil {
		t.Error("b2 is still registered")
	}
}

func TestHostBadInput(t *testing.T) {
	x := newFake(t)
	for _, args := range [][]string{{"add", "Bad Name", "me@x"}, {"add", "any", "me@x"}, {"add", "b1", "me@x", "--max-agents", "-1"}} {
		if err := x.run(t, args...); !errors.Is(err, fault.ErrUsage) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
	var fe *cmdkit.FlagError
	for _, args := range [][]string{{"add", "b1"}, {"rm"}, {"check"}, {"drain"}, {"list", "x"}} {
		if err := x.run(t, args...); !errors.As(err, &fe) {
			t.Errorf("%v: %v, want a FlagError", args, err)
		}
	}
	for _, args := range [][]string{{"rm", "nope"}, {"check", "nope"}, {"drain", "nope"}} {
		if err := x.run(t, args...); err == nil || !strings.Contains(err.Error(), "nope") {
			t.Errorf("%v: %v, want an unknown host", args, err)
		}
	}
}

// TestHostCheck: the report is printed (words or JSON) before the
// check's verdict; the agents asked about are the profiles' commands; an
// unreachable host, or one without tmux or git, is an error.
func TestHostCheck(t *testing.T) {
	x := newFake(t)
	if err := x.run(t, "add", "b1", "me@build1"); err != nil {
		t.Fatal(err)
	}
	x.report = hosts.Report{Destination: "me@build1", Reachable: true, Tmux: "tmux 3.4", Git: "git version 2.43.0", Agents: map[string]string{"claude": "/usr/bin/claude"}}
	if err := x.run(t, "check", "b1"); err != nil || !strings.Contains(x.b.Out.String(), "tmux 3.4") {
		t.Errorf("check of a good host: %v %q", err, x.b.Out.String())
	}
	if !strings.Contains(strings.Join(x.checked, ","), "claude") {
		t.Errorf("agents asked about: %v", x.checked)
	}
	x.report.Git = ""
	err := x.run(t, "check", "b1", "--json")
	if err == nil || !strings.Contains(err.Error(), "cannot run tasks") || !strings.Contains(x.b.Out.String(), `"reachable": true`) {
		t.Errorf("check of a host without git: %v %q", err, x.b.Out.String())
	}
	x.report = hosts.Report{Destination: "me@build1", Error: "connection refused"}
	x.checkE = hosts.ErrUnreachable
	if err := x.run(t, "check", "b1"); !errors.Is(err, hosts.ErrUnreachable) || x.b.Out.Len() == 0 {
		t.Errorf("check of an unreachable host: %v %q, want the report and ErrUnreachable", err, x.b.Out.String())
	}
	x.checkE = errors.New("control socket directory: permission denied")
	if err := x.run(t, "check", "b1"); !errors.Is(err, x.checkE) || x.b.Out.Len() != 0 {
		t.Errorf("a check that could not start: %v %q, want its error and no report", err, x.b.Out.String())
	}
}

// TestOpenErrors: a store or environment that cannot be opened is the
// command's error.
func TestOpenErrors(t *testing.T) {
	x := newFake(t)
	bad := errors.New("no state")
	x.f.Store = func() (*state.Store, error) { return nil, bad }
	x.f.Env = func(bool) (*runner.Env, *config.Config, error) { return nil, nil, bad }
	for _, args := range [][]string{{"add", "b1", "me@x"}, {"list"}, {"rm", "b1"}, {"check", "b1"}, {"drain", "b1"}} {
		if err := x.run(t, args...); !errors.Is(err, bad) {
			t.Errorf("%v: %v", args, err)
		}
	}
}
