package hosts

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/transport"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/state"
)

// answer is what a fake host answers to one command.
type answer struct {
	out, errOut string
	code        int
	err         error
}

// fakeShell is a host that answers each command by the first entry of
// answers whose key its argv (joined by spaces) contains; a command none
// matches exits 127. It counts and records the commands.
type fakeShell struct {
	mu      sync.Mutex
	answers map[string]answer
	ran     []string
	closed  int
}

func (f *fakeShell) answer(argv []string) answer {
	f.mu.Lock()
	defer f.mu.Unlock()
	line := strings.Join(argv, " ")
	f.ran = append(f.ran, line)
	best := ""
	for k := range f.answers {
		if strings.Contains(line, k) && len(k) > len(best) {
			best = k
		}
	}
	if a, ok := f.answers[best]; ok {
		return a
	}
	return answer{errOut: "sh: " + argv[0] + ": not found", code: 127}
}

func (f *fakeShell) Run(ctx context.Context, stdin []byte, argv ...string) ([]byte, []byte, int, error) {
	a := f.answer(argv)
	return []byte(a.out), []byte(a.errOut), a.code, a.err
}

// Output is the command in a session of its own, as Check runs them.
func (f *fakeShell) Output(ctx context.Context, argv ...string) (string, error) {
	a := f.answer(argv)
	switch {
	case a.err != nil:
		return a.out, a.err
	case a.code != 0:
		return a.out, fmt.Errorf("exit status %d: %s", a.code, a.errOut)
	}
	return a.out, nil
}

func (f *fakeShell) Close() { f.mu.Lock(); f.closed++; f.mu.Unlock() }

func (f *fakeShell) count(sub string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, l := range f.ran {
		if strings.Contains(l, sub) {
			n++
		}
	}
	return n
}

func fakeConn(h *state.Host, answers map[string]answer) (*Conn, *fakeShell) {
	sh := &fakeShell{answers: answers}
	return &Conn{host: h, sh: sh}, sh
}

var box = &state.Host{Name: "box", Destination: "u@box"}

func TestConnRun(t *testing.T) {
	c, _ := fakeConn(box, map[string]answer{
		"echo hi": {out: "hi\n"},
		"false":   {errOut: "one\ntwo\nthree\nfour\n", code: 1},
		"refused": {err: fmt.Errorf("ssh: connect to host box port 22: Connection refused: %w", transport.ErrConnection)},
		"broken":  {err: errors.New("session shell died")},
	})
	ctx := t.Context()
	if out, err := c.Run(ctx, "echo", "hi"); out != "hi\n" || err != nil {
		t.Errorf("Run(echo hi) = %q, %v", out, err)
	}
	_, err := c.Run(ctx, "false")
	if err == nil || !strings.Contains(err.Error(), "exit status 1: two\nthree\nfour") || strings.Contains(err.Error(), "one") {
		t.Errorf("a command that failed: err = %v, want its exit status and the last 3 lines of its stderr", err)
	}
	_, err = c.Run(ctx, "refused")
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "u@box") {
		t.Errorf("a connection that failed: err = %v, want ErrUnreachable naming the destination", err)
	}
	_, err = c.Run(ctx, "broken")
	if err == nil || errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "host box: broken") {
		t.Errorf("a command that could not run: err = %v", err)
	}
}

func TestTaskPath(t *testing.T) {
	c, sh := fakeConn(box, map[string]answer{"$HOME": {out: "/home/u"}})
	for range 2 {
		p, err := c.TaskPath(t.Context(), "t_abc")
		if want := "/home/u/" + state.RemoteDirDefault + "/t_abc"; p != want || err != nil {
			t.Errorf("TaskPath = %q, %v; want %q", p, err, want)
		}
	}
	if n := sh.count("$HOME"); n != 1 {
		t.Errorf("the home directory was asked %d times, want once", n)
	}

	c, sh = fakeConn(&state.Host{Name: "box", Dir: "/data/runner"}, nil)
	if p, err := c.TaskPath(t.Context(), "t_abc"); p != "/data/runner/t_abc" || err != nil {
		t.Errorf("with Host.Dir: TaskPath = %q, %v", p, err)
	}
	if len(sh.ran) != 0 {
		t.Errorf("with Host.Dir the host was asked %q", sh.ran)
	}

	c, _ = fakeConn(box, map[string]answer{"$HOME": {out: "~"}})
	if _, err := c.TaskPath(t.Context(), "t_abc"); err == nil || !strings.Contains(err.Error(), "--dir") {
		t.Errorf("a home that is not absolute: err = %v, want one saying --dir", err)
	}
	c, _ = fakeConn(box, map[string]answer{"$HOME": {err: transport.ErrConnection}})
	if _, err := c.TaskPath(t.Context(), "t_abc"); !errors.Is(err, ErrUnreachable) {
		t.Errorf("an unreachable host: err = %v", err)
	}
}

func TestCheckDir(t *testing.T) {
	ctx := t.Context()
	for _, c := range []struct {
		answer answer
		dir    string
		usage  bool
		want   string
	}{
		{answer{out: "dir\n"}, "/src", false, ""},
		{answer{out: "other\n"}, "/src", true, "is not a directory"},
		{answer{out: "none\n"}, "/src", true, "does not exist on host box"},
		{answer{}, "src", true, "not an absolute path"},
		{answer{err: transport.ErrConnection}, "/src", false, "host unreachable"},
	} {
		conn, _ := fakeConn(box, map[string]answer{"if [ -d": c.answer})
		err := conn.CheckDir(ctx, "dispatch", c.dir)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: %v", c.answer, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%+v: err = %v, want %q", c.answer, err, c.want)
		case err != nil && errors.Is(err, fault.ErrUsage) != c.usage:
			t.Errorf("%+v: err = %v, usage error %v, want %v", c.answer, err, !c.usage, c.usage)
		}
	}
}

func TestSandbox(t *testing.T) {
	for _, c := range []struct {
		answer answer
		path   string
		want   string
		usage  bool
	}{
		{answer{out: "/usr/bin/bwrap"}, "/usr/bin/bwrap", "", false},
		{answer{code: 3}, "", "bwrap is not installed on host box", true},
		{answer{code: 4, errOut: "bwrap: No permissions to creating new namespace"}, "", "cannot make a sandbox", true},
		{answer{out: "bwrap"}, "", "unexpected answer", false},
		{answer{err: transport.ErrConnection}, "", "unreachable", false},
	} {
		conn, _ := fakeConn(box, map[string]answer{"command -v bwrap": c.answer})
		p, err := conn.Sandbox(t.Context())
		if p != c.path || (c.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: Sandbox = %q, %v; want %q, %q", c.answer, p, err, c.path, c.want)
		}
		if err != nil && errors.Is(err, fault.ErrUsage) != c.usage {
			t.Errorf("%+v: usage error %v, want %v", c.answer, !c.usage, c.usage)
		}
	}
}

// memProbes keeps probes in memory.
type memProbes map[string]state.HostProbe

func (m memProbes) HostProbe(name string) *state.HostProbe {
	if p, ok := m[name]; ok {
		return &p
	}
	return nil
}

func (m memProbes) SaveHostProbe(p state.HostProbe) error { m[p.Host] = p; return nil }

func TestProbe(t *testing.T) {
	probes := memProbes{}
	c, _ := fakeConn(box, map[string]answer{"loadavg": {out: "0.50 4 1024 4096\n"}})
	p := Probe(t.Context(), probes, c)
	if !p.OK || p.Load1 != 0.5 || p.Cores != 4 || p.MemAvailKB != 1024 || p.MemTotalKB != 4096 {
		t.Errorf("probe = %+v", p)
	}
	if probes["box"].Cores != 4 {
		t.Errorf("the probe was not saved: %+v", probes)
	}

	// A host that stops answering: down since the first failed probe.
	down := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	probes["box"] = state.HostProbe{Host: "box", OK: false, DownSince: down}
	c, _ = fakeConn(box, map[string]answer{"loadavg": {err: transport.ErrConnection}})
	p = Probe(t.Context(), probes, c)
	if p.OK || !p.DownSince.Equal(down) || !strings.Contains(p.Error, "unreachable") {
		t.Errorf("a host still down: %+v, want down since %v", p, down)
	}

	// A garbled answer counts as no answer, down from now.
	delete(probes, "box")
	c, _ = fakeConn(box, map[string]answer{"loadavg": {out: "garbage\n"}})
	p = Probe(t.Context(), probes, c)
	if p.OK || p.DownSince.IsZero() || !strings.Contains(p.Error, `unexpected answer "garbage"`) {
		t.Errorf("a garbled answer: %+v", p)
	}
}
