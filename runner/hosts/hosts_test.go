package hosts

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/statetest"
	"github.com/runner-cli/runner/internal/transport"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/state"
)

// wellHost answers every question of Check as a host with all installed.
func wellHost() map[string]answer {
	return map[string]answer{
		"true":                {},
		"base64":              {},
		"tmux -V":             {out: "tmux 3.4\n"},
		"git --version":       {out: "git version 2.43.0\n"},
		"command -v bwrap":    {out: "/usr/bin/bwrap"},
		"for c do":            {out: "claude /usr/bin/claude\n"},
		"/opt/runner version": {out: "runner 1.2.3\n"},
	}
}

func TestCheckAllThere(t *testing.T) {
	h := &state.Host{Name: "box", Destination: "u@box", Runner: "/opt/runner"}
	sh := &fakeShell{answers: wellHost()}
	rep, err := check(t.Context(), sh, h, []string{"claude", "codex"}, Report{Agents: map[string]string{}})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Reachable || rep.Tmux != "tmux 3.4" || rep.Git != "git version 2.43.0" || rep.Sandbox != "/usr/bin/bwrap" || rep.Runner != "runner 1.2.3" {
		t.Errorf("report = %+v", rep)
	}
	if rep.Agents["claude"] != "/usr/bin/claude" || rep.Agents["codex"] != "" || len(rep.Agents) != 2 {
		t.Errorf("agents = %v, want claude's path and codex missing", rep.Agents)
	}
	if len(rep.Problems) != 0 {
		t.Errorf("problems on a host with everything: %q", rep.Problems)
	}
	if sh.closed != 1 {
		t.Errorf("the session shell was closed %d times, want once", sh.closed)
	}
}

func TestCheckUnreachable(t *testing.T) {
	h := &state.Host{Name: "box", Destination: "u@box", SSHArgs: []string{"-p", "2222"}}
	sh := &fakeShell{answers: map[string]answer{"true": {err: errors.New("ssh: connect to host box: No route to host")}}}
	rep, err := check(t.Context(), sh, h, []string{"claude"}, Report{Agents: map[string]string{}})
	if !errors.Is(err, ErrUnreachable) || rep.Reachable {
		t.Fatalf("check = %+v, %v; want unreachable", rep, err)
	}
	if !strings.Contains(rep.Error, "No route to host") || len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0], "'ssh -p 2222 u@box true'") {
		t.Errorf("report = %+v, want ssh's error and how to try it by hand", rep)
	}
	if len(sh.ran) != 1 {
		t.Errorf("an unreachable host was asked more: %q", sh.ran)
	}
}

func TestCheckProblems(t *testing.T) {
	answers := wellHost()
	for _, gone := range []string{"base64", "tmux -V", "git --version", "command -v bwrap", "/opt/runner version"} {
		delete(answers, gone)
	}
	h := &state.Host{Name: "box", Destination: "u@box", Runner: "/opt/runner"}
	sh := &fakeShell{answers: answers}
	rep, err := check(t.Context(), sh, h, nil, Report{Agents: map[string]string{}})
	if err != nil || !rep.Reachable {
		t.Fatalf("check = %+v, %v", rep, err)
	}
	all := strings.Join(rep.Problems, "\n")
	for _, want := range []string{"no GNU base64", "tmux is not installed", "git is not installed", "bwrap does not make a sandbox", "runner /opt/runner does not run there"} {
		if !strings.Contains(all, want) {
			t.Errorf("problems lack %q:\n%s", want, all)
		}
	}
	if rep.Session != 0 || sh.closed != 0 {
		t.Errorf("without base64 a session shell was used: %v, closed %d", rep.Session, sh.closed)
	}
	if sh.count("for c do") != 0 {
		t.Error("no agents asked for, yet the host was asked where they are")
	}

	h.Runner = ""
	rep, _ = check(t.Context(), &fakeShell{answers: wellHost()}, h, nil, Report{Agents: map[string]string{}})
	if len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0], "no runner binary named") {
		t.Errorf("no runner named: problems %q", rep.Problems)
	}
}

func TestAddRefusesBadInput(t *testing.T) {
	s := statetest.Store(t)
	for _, c := range []struct {
		h    state.Host
		want string
	}{
		{state.Host{Name: "Bad Name", Destination: "x"}, "invalid host name"},
		{state.Host{Name: PoolAny, Destination: "x"}, "taken by the pool"},
		{state.Host{Name: "b", Destination: "x", MaxAgents: -1}, "--max-agents -1"},
		{state.Host{Name: "b", Destination: "x", Labels: []string{"GPU!"}}, "invalid label"},
		{state.Host{Name: "b"}, "no destination given"},
		{state.Host{Name: "b", Destination: "-oProxyCommand=x"}, "starts with '-'"},
		{state.Host{Name: "b", Destination: "u@b c"}, "white space"},
		{state.Host{Name: "b", Destination: "x", Runner: "bin/runner"}, "--runner"},
		{state.Host{Name: "b", Destination: "x", Dir: "runner"}, "--dir"},
		{state.Host{Name: "b", Destination: "x", Socket: "a\nb"}, "newline"},
	} {
		_, err := Add(t.Context(), s, c.h)
		if !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Add(%+v): err = %v, want a usage error saying %q", c.h, err, c.want)
		}
	}
	if hs, _ := List(t.Context(), s); len(hs) != 0 {
		t.Errorf("refused hosts were registered: %v", hs)
	}
}

func TestAddGetListRemove(t *testing.T) {
	s := statetest.Store(t)
	ctx := t.Context()
	for _, name := range []string{"zeta", "alpha"} {
		h, err := Add(ctx, s, state.Host{Name: name, Destination: "u@" + name})
		if err != nil || h.Added.IsZero() {
			t.Fatalf("Add(%s) = %+v, %v", name, h, err)
		}
	}
	if _, err := Add(ctx, s, state.Host{Name: "alpha", Destination: "other"}); !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), "already exists (u@alpha)") {
		t.Errorf("a second alpha: err = %v", err)
	}
	list, err := List(ctx, s)
	if err != nil || len(list) != 2 || list[0].Name != "alpha" || list[1].Name != "zeta" {
		t.Errorf("List = %v, %v; want alpha, zeta", list, err)
	}
	if h, err := Get(ctx, s, "zeta"); err != nil || h.Destination != "u@zeta" {
		t.Errorf("Get(zeta) = %+v, %v", h, err)
	}
	_, err = Get(ctx, s, "nope")
	if !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), "known: alpha, zeta") {
		t.Errorf("Get(nope): err = %v, want the known hosts named", err)
	}
	if h, err := SetDrained(ctx, s, "zeta", true); err != nil || !h.Drained {
		t.Errorf("SetDrained = %+v, %v", h, err)
	}
	if _, err := SetDrained(ctx, s, "nope", true); !errors.Is(err, fault.ErrUsage) {
		t.Errorf("SetDrained(nope): err = %v", err)
	}
	if gone, err := Remove(ctx, s, "zeta"); err != nil || gone.Name != "zeta" || !gone.Drained {
		t.Errorf("Remove(zeta) = %+v, %v", gone, err)
	}
	if _, err := Remove(ctx, s, "zeta"); !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), "known: alpha") {
		t.Errorf("Remove(zeta) again: err = %v", err)
	}
}

func TestRemoveInUse(t *testing.T) {
	s := statetest.Store(t)
	ctx := t.Context()
	if _, err := Add(ctx, s, state.Host{Name: "box", Destination: "u@box"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(ctx, func(st *state.State) error {
		st.Projects["far"] = &state.Project{Name: "far", Dir: "/srv", Host: "box"}
		st.Tasks["t_run"] = &state.Task{ID: "t_run", Status: state.StatusRunning, Created: clock.Now(), Tmux: state.TmuxTarget{Host: "box"}}
		st.Tasks["t_old"] = &state.Task{ID: "t_old", Status: state.StatusDone, Created: clock.Now(), Ended: clock.Now(), Tmux: state.TmuxTarget{Host: "box"}}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	_, err := Remove(ctx, s, "box")
	if !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), "project far, task t_run") || strings.Contains(err.Error(), "t_old") {
		t.Errorf("err = %v, want the project and the active task named", err)
	}
	if _, err := Get(ctx, s, "box"); err != nil {
		t.Errorf("a host in use was removed: %v", err)
	}
}

func TestPoolConn(t *testing.T) {
	s := statetest.Store(t)
	ctx := t.Context()
	if _, err := Add(ctx, s, state.Host{Name: "box", Destination: "u@box", Socket: "/tmp/x.sock"}); err != nil {
		t.Fatal(err)
	}
	p := NewPool(s)
	if _, err := p.Conn(ctx, "nope"); !errors.Is(err, fault.ErrUsage) {
		t.Errorf("an unknown host: err = %v", err)
	}
	a, err := p.Conn(ctx, "box")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := p.Conn(ctx, "box")
	if a != b {
		t.Error("two connections to one host")
	}
	if a.Host().Name != "box" || a.TC().Socket() != "/tmp/x.sock" || a.Transport().Destination != "u@box" {
		t.Errorf("conn = %+v", a)
	}
}

func TestProbesCachedAndDrained(t *testing.T) {
	s := statetest.Store(t)
	if _, err := Add(t.Context(), s, state.Host{Name: "a", Destination: "u@a"}); err != nil {
		t.Fatal(err)
	}
	fresh := state.HostProbe{Host: "a", At: clock.Now().UTC(), OK: true, Cores: 2}
	if err := s.SaveHostProbe(fresh); err != nil {
		t.Fatal(err)
	}
	// Neither is asked: a's probe is fresh, b is drained (and unknown,
	// which a connection would fail on).
	got := NewPool(s).Probes(t.Context(), []*state.Host{{Name: "a"}, {Name: "b", Drained: true}}, time.Hour)
	if len(got) != 1 || got["a"].Cores != 2 {
		t.Errorf("Probes = %v, want a's cached probe alone", got)
	}
}

func TestPathLocationMachine(t *testing.T) {
	for _, c := range []struct {
		in, host, dir string
		ok            bool
	}{
		{"host:gpu:/srv/x", "gpu", "/srv/x", true},
		{"host:gpu", "", "host:gpu", false},
		{"/src/api", "", "/src/api", false},
		{"host:gpu:/a:b", "gpu", "/a:b", true},
	} {
		h, d, ok := Path(c.in)
		if h != c.host || d != c.dir || ok != c.ok {
			t.Errorf("Path(%q) = %q, %q, %v", c.in, h, d, ok)
		}
	}
	if got := Location(state.Project{Dir: "/srv/x", Host: "gpu"}); got != "host:gpu:/srv/x" {
		t.Errorf("Location = %q", got)
	}
	if got := Location(state.Project{Dir: "/src"}); got != "/src" {
		t.Errorf("Location = %q", got)
	}
	if Machine("") != "this machine" || Machine("gpu") != "host gpu" {
		t.Error("Machine")
	}
	st := state.New()
	st.Tasks["t_a"] = &state.Task{ID: "t_a", Status: state.StatusRunning, Tmux: state.TmuxTarget{Host: "gpu"}}
	st.Tasks["t_b"] = &state.Task{ID: "t_b", Status: state.StatusQueued, Tmux: state.TmuxTarget{Host: "gpu"}}
	st.Tasks["t_c"] = &state.Task{ID: "t_c", Status: state.StatusDone, Tmux: state.TmuxTarget{Host: "gpu"}}
	st.Tasks["t_d"] = &state.Task{ID: "t_d", Status: state.StatusRunning}
	if u := Use(st); u["gpu"] != 2 || len(u) != 1 {
		t.Errorf("Use = %v, want gpu 2", u)
	}
}

func TestSSHCheckerOutput(t *testing.T) {
	// The real Checker runs the transport's command: a binary that is
	// not there fails with what it said.
	c := sshChecker{&transport.SSH{Destination: "u@box", Binary: "/nonexistent/ssh"}}
	if _, err := c.Output(t.Context(), "true"); err == nil {
		t.Error("no error from a missing ssh")
	}
}
