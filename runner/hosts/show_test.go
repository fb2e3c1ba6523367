package hosts

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/statetest"
	"github.com/runner-cli/runner/state"
)

// fakeProber answers each host's probe from a table, and notes what it
// was asked.
type fakeProber struct {
	probes map[string]*state.HostProbe
	asked  []string
	maxAge time.Duration
}

func (f *fakeProber) Probes(_ context.Context, members []*state.Host, maxAge time.Duration) map[string]*state.HostProbe {
	for _, h := range members {
		f.asked = append(f.asked, h.Name)
	}
	f.maxAge = maxAge
	return f.probes
}

// TestTable: every registered host, its running tasks counted, its
// health from the prober, asked at most ProbeMaxAge old.
func TestTable(t *testing.T) {
	ctx := context.Background()
	s := statetest.WithTasks(t,
		&state.Task{ID: "t_a", Status: state.StatusRunning, Tmux: state.TmuxTarget{Host: "b1"}},
		&state.Task{ID: "t_b", Status: state.StatusDone, Tmux: state.TmuxTarget{Host: "b1"}})
	for _, h := range []state.Host{{Name: "b1", Destination: "me@b1", MaxAgents: 2}, {Name: "b2", Destination: "b2", SSHArgs: []string{"-p", "2222"}, Labels: []string{"gpu"}}} {
		if _, err := Add(ctx, s, h); err != nil {
			t.Fatal(err)
		}
	}
	p := &fakeProber{probes: map[string]*state.HostProbe{"b1": {OK: true, Load1: 1, Cores: 4, MemAvailKB: 2048 * 1024}}}
	rows, err := Table(ctx, s, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Name != "b1" || rows[0].Use != 1 || rows[0].Capacity != 2 || rows[0].Health != "ok" || rows[1].Health != "unknown" {
		t.Fatalf("rows %+v", rows)
	}
	if strings.Join(p.asked, ",") != "b1,b2" || p.maxAge != ProbeMaxAge {
		t.Errorf("asked %v, %v", p.asked, p.maxAge)
	}
	var b bytes.Buffer
	if err := WriteTable(&b, rows); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if got := strings.Join(strings.Fields(lines[1]), " "); got != "b1 1/2 0.25 2048 MiB ok - ssh me@b1 -" {
		t.Errorf("b1: %q", got)
	}
	if got := strings.Join(strings.Fields(lines[2]), " "); !strings.HasSuffix(got, "- - unknown gpu ssh -p 2222 b2 -") {
		t.Errorf("b2: %q", got)
	}
}

// TestHealth: drained before anything, then not asked, down, ok.
func TestHealth(t *testing.T) {
	down := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, c := range []struct {
		h    state.Host
		p    *state.HostProbe
		want string
	}{
		{state.Host{Drained: true}, &state.HostProbe{OK: true}, "drained"},
		{state.Host{}, nil, "unknown"},
		{state.Host{}, &state.HostProbe{DownSince: down}, "unreachable since " + down.Local().Format(time.TimeOnly)},
		{state.Host{}, &state.HostProbe{OK: true}, "ok"},
	} {
		if got := Health(&c.h, c.p); got != c.want {
			t.Errorf("%+v %+v: %q, want %q", c.h, c.p, got, c.want)
		}
	}
}

// TestAgentCommands: each CLI once, never runner itself nor a path.
func TestAgentCommands(t *testing.T) {
	got := AgentCommands([][]string{{"claude", "--x"}, {"runner", "agent-sim"}, {"/opt/bin/x"}, {}, {"codex"}, {"claude"}})
	if strings.Join(got, ",") != "claude,codex" {
		t.Errorf("got %v", got)
	}
}

// TestWriteReport: a reachable host's times, tools and agents (sorted),
// an unreachable one's ssh error, and the problems of both.
func TestWriteReport(t *testing.T) {
	var b bytes.Buffer
	WriteReport(&b, &Report{Host: "b1", Destination: "me@b1", Reachable: true, Connect: 120 * time.Millisecond, Tmux: "tmux 3.4", Git: "git version 2.43",
		Agents: map[string]string{"codex": "", "claude": "/usr/bin/claude", "aider": "/bin/aider"}, Problems: []string{"bwrap is missing"}})
	for _, want := range []string{"host b1 (me@b1): reachable, first command 120ms", "  tmux:   tmux 3.4\n", "  runner: -\n",
		"  agents: aider (/bin/aider), claude (/usr/bin/claude); not installed: codex\n", "  problem: bwrap is missing\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}
	b.Reset()
	WriteReport(&b, &Report{Host: "b2", Destination: "b2", Error: "Connection refused"})
	if b.String() != "host b2 (b2): unreachable\n  ssh: Connection refused\n" {
		t.Errorf("unreachable: %q", b.String())
	}
}
