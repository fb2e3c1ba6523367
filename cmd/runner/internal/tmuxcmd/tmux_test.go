package tmuxcmd

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/cmd/runner/internal/cmdkit"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/tmuxctl"
)

// fake is a factory whose tmux is a real server on a socket of its own
// (none started until a command needs one), recording each host asked.
type fake struct {
	f     *cmdkit.Factory
	b     *cmdkit.Buffers
	tc    *tmuxctl.Client
	hosts []string
}

func newFake(t *testing.T, stdin string) *fake {
	t.Helper()
	dir, err := os.MkdirTemp("/tmp", "rtc")
	if err != nil {
		t.Fatal(err)
	}
	x := &fake{tc: tmuxctl.New(filepath.Join(dir, "s"), tmuxctl.WithConfig("/dev/null"))}
	t.Cleanup(func() {
		_ = x.tc.KillServer(context.Background())
		os.RemoveAll(dir)
	})
	x.f, x.b = cmdkit.Fake(stdin, map[string]string{})
	x.f.Tmux = func(_ context.Context, host string) (*tmuxctl.Client, error) {
		x.hosts = append(x.hosts, host)
		if host != "" {
			return nil, fault.Usagef("no host named %q", host)
		}
		return x.tc, nil
	}
	return x
}

// run runs `runner tmux ARGS` over the fake and returns its error.
func (x *fake) run(t *testing.T, args ...string) error {
	t.Helper()
	return x.b.Run(t.Context(), NewCmd(x.f), args...)
}

func needTmux(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
}

// TestBadInputTouchesNoTmux: each usage error is said before a tmux
// client is asked for, and is of the usage kind (exit 2 in main).
func TestBadInputTouchesNoTmux(t *testing.T) {
	x := newFake(t, "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"launch", "--name", "s", "bash"}, "put the program after --"},
		{[]string{"launch", "--name", "a:b", "--", "bash"}, "--name"},
		{[]string{"launch", "--name", "s", "--size", "big", "--", "bash"}, "--size"},
		{[]string{"launch", "--name", "s", "--cwd", "/no/such/dir", "--", "bash"}, "does not exist"},
		{[]string{"launch", "--name", "s", "--env", "=x", "--", "bash"}, "want KEY=VALUE"},
		{[]string{"capture", "--pane", "%1", "--lines", "-1"}, "--lines"},
		{[]string{"keys", "--pane", "%1", "hello"}, "not a key name"},
		{[]string{"send", "--pane", "%1"}, "no text"},
		{[]string{"send", "--pane", "%1", "--file", "/no/such/file"}, "--file"},
		{[]string{"send", "--pane", "%1", "--file", "-", "text"}, "not both"},
		{[]string{"wait-prompt", "--pane", "%1", "--pattern", "("}, "--pattern"},
		{[]string{"wait-prompt", "--pane", "%1", "--pattern", "x", "--since", "then"}, "--since"},
		{[]string{"wait-idle", "--pane", "%1", "--mask", "("}, "--mask"},
		{[]string{"wait-idle", "--pane", "%1", "--quiet", "0s"}, "--quiet"},
	} {
		err := x.run(t, tc.args...)
		if !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want a usage error with %q", tc.args, err, tc.want)
		}
	}
	if len(x.hosts) != 0 {
		t.Errorf("bad input asked for a tmux client %d times", len(x.hosts))
	}
}

// TestArgsAreFlagErrors: a wrong number of arguments is a FlagError
// (main points at --help), a missing required flag cobra's own error.
func TestArgsAreFlagErrors(t *testing.T) {
	x := newFake(t, "")
	var fe *cmdkit.FlagError
	for _, args := range [][]string{{"list", "extra"}, {"launch", "--name", "s"}, {"capture", "--pane", "%1", "x"}, {"kill", "x"}} {
		if err := x.run(t, args...); !errors.As(err, &fe) {
			t.Errorf("%v: %v, want a FlagError", args, err)
		}
	}
	if err := x.run(t, "capture"); err == nil || !strings.Contains(err.Error(), `required flag(s) "pane"`) {
		t.Errorf("capture without --pane: %v", err)
	}
}

// TestHostFlag: --host asks the factory for that host's tmux, and its
// error is the command's.
func TestHostFlag(t *testing.T) {
	x := newFake(t, "")
	err := x.run(t, "--host", "b1", "list")
	if !errors.Is(err, fault.ErrUsage) || strings.Join(x.hosts, ",") != "b1" {
		t.Errorf("list --host b1: %v, hosts asked %v", err, x.hosts)
	}
}

// TestKillNeedsOne: kill takes exactly one of --pane and --name.
func TestKillNeedsOne(t *testing.T) {
	x := newFake(t, "")
	for _, args := range [][]string{{"kill"}, {"kill", "--pane", "%1", "--name", "s"}} {
		if err := x.run(t, args...); !errors.Is(err, fault.ErrUsage) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}

// TestPaneLife drives one shell pane on a real tmux server through every
// command: launch, list, send, wait-prompt, exec, capture, keys,
// wait-idle, kill; text and JSON.
func TestPaneLife(t *testing.T) {
	needTmux(t)
	x := newFake(t, "echo from-stdin\n")
	if err := x.run(t, "list", "--json"); err == nil && strings.TrimSpace(x.b.Out.String()) != "[]" {
		t.Errorf("list --json of no server: %q", x.b.Out.String())
	}
	if err := x.run(t, "launch", "--name", "work", "--env", "PS1=$ ", "--json", "--", "sh"); err != nil {
		t.Fatalf("launch: %v", err)
	}
	var launched struct {
		Pane   string `json:"pane_id"`
		Socket string `json:"socket"`
		Attach string `json:"attach"`
	}
	if err := json.Unmarshal(x.b.Out.Bytes(), &launched); err != nil || !strings.HasPrefix(launched.Pane, "%") ||
		launched.Socket != x.tc.Socket() || !strings.Contains(launched.Attach, "attach") || !x.b.JSON {
		t.Fatalf("launch --json: %v %q (json recorded: %v)", err, x.b.Out.String(), x.b.JSON)
	}
	pane := launched.Pane
	if err := x.run(t, "list"); err != nil || !strings.Contains(x.b.Out.String(), pane) {
		t.Errorf("list: %v %q", err, x.b.Out.String())
	}
	if err := x.run(t, "wait-idle", "--pane", pane, "--quiet", "200ms", "--timeout", "10s"); err != nil || !strings.HasPrefix(x.b.Out.String(), "idle after") {
		t.Errorf("wait-idle: %v %q", err, x.b.Out.String())
	}
	if err := x.run(t, "send", "--pane", pane, "--file", "-", "--json"); err != nil || !strings.Contains(x.b.Out.String(), `"enter": true`) {
		t.Fatalf("send --file -: %v %q", err, x.b.Out.String())
	}
	if err := x.run(t, "wait-prompt", "--pane", pane, "--pattern", "^from-stdin$", "--timeout", "10s"); err != nil || strings.TrimSpace(x.b.Out.String()) != "from-stdin" {
		t.Errorf("wait-prompt: %v %q", err, x.b.Out.String())
	}
	if err := x.run(t, "send", "--pane", pane, "--no-enter", "--json", "partial"); err != nil || !strings.Contains(x.b.Out.String(), `"enter": false`) {
		t.Errorf("send --no-enter: %v %q", err, x.b.Out.String())
	}
	if err := x.run(t, "keys", "--pane", pane, "C-u"); err != nil {
		t.Errorf("keys: %v", err)
	}
	if err := x.run(t, "exec", "--pane", pane, "--", "echo", "out;", "exit_code_3() { return 3; };", "exit_code_3"); err != nil {
		var pe *cmdkit.ProgramExit
		if !errors.As(err, &pe) || pe.Status != 3 || !strings.Contains(x.b.Out.String(), "out") {
			t.Errorf("exec of a command ending 3: %v %q, want ProgramExit 3", err, x.b.Out.String())
		}
	} else {
		t.Errorf("exec of a command ending 3 gave no error: %q", x.b.Out.String())
	}
	if err := x.run(t, "exec", "--pane", pane, "--json", "--", "false"); err != nil || !strings.Contains(x.b.Out.String(), `"exit_code": 1`) {
		t.Errorf("exec --json: %v %q", err, x.b.Out.String())
	}
	if err := x.run(t, "capture", "--pane", pane, "--lines", "50"); err != nil || !strings.Contains(x.b.Out.String(), "from-stdin") {
		t.Errorf("capture: %v %q", err, x.b.Out.String())
	}
	if err := x.run(t, "capture", "--pane", pane, "--json"); err != nil || !strings.Contains(x.b.Out.String(), `"text"`) {
		t.Errorf("capture --json: %v %q", err, x.b.Out.String())
	}
	if err := x.run(t, "kill", "--pane", pane); err != nil {
		t.Errorf("kill --pane: %v", err)
	}
	if err := x.run(t, "capture", "--pane", pane); !errors.Is(err, tmuxctl.ErrNotFound) && !errors.Is(err, tmuxctl.ErrBadTarget) {
		t.Errorf("capture of a killed pane: %v, want not found", err)
	}
}

// TestWaitPromptTimeout: a pattern that never comes ends in tmuxctl's
// timeout (exit 3 in main).
func TestWaitPromptTimeout(t *testing.T) {
	needTmux(t)
	x := newFake(t, "")
	if err := x.run(t, "launch", "--name", "quiet", "--", "sleep", "30"); err != nil {
		t.Fatal(err)
	}
	pane := strings.TrimSpace(x.b.Out.String())
	err := x.run(t, "wait-prompt", "--pane", pane, "--pattern", "never", "--since", "now", "--timeout", "300ms")
	if !errors.Is(err, tmuxctl.ErrTimeout) && !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("wait-prompt: %v, want a timeout", err)
	}
	if err := x.run(t, "exec", "--pane", pane, "--", "true"); !errors.Is(err, fault.ErrUsage) {
		t.Errorf("exec in a pane not at a shell: %v, want a usage error", err)
	}
	if err := x.run(t, "kill", "--name", "quiet"); err != nil {
		t.Errorf("kill --name: %v", err)
	}
}

func TestDelayOrNone(t *testing.T) {
	for in, want := range map[time.Duration]time.Duration{0: -1, -time.Second: -1, time.Second: time.Second} {
		if got := delayOrNone(in); got != want {
			t.Errorf("delayOrNone(%v) = %v, want %v", in, got, want)
		}
	}
}

// TestCaptureStreams: a plain capture is for people (Out, where main
// makes control characters visible); --escapes asks for the pane's
// escapes as they are (RawOut), and launch prints the pane id alone.
func TestCaptureStreams(t *testing.T) {
	needTmux(t)
	x := newFake(t, "")
	var raw strings.Builder
	x.f.RawOut = &raw
	if err := x.run(t, "launch", "--name", "colour", "--size", "80x10", "--cwd", t.TempDir(), "--env", "A=b",
		"--", "sh", "-c", `stty -echo; printf '\033[31mred\033[0m\n'; exec sleep 30`); err != nil {
		t.Fatal(err)
	}
	pane := strings.TrimSpace(x.b.Out.String())
	if !strings.HasPrefix(pane, "%") || strings.Contains(pane, "\n") {
		t.Fatalf("launch printed %q, want the pane id alone", x.b.Out.String())
	}
	if err := x.run(t, "wait-idle", "--pane", pane, "--quiet", "200ms", "--timeout", "10s"); err != nil {
		t.Fatal(err)
	}
	if err := x.run(t, "capture", "--pane", pane, "--escapes"); err != nil || x.b.Out.Len() != 0 || !strings.Contains(raw.String(), "\x1b[31mred") {
		t.Errorf("capture --escapes: %v, Out %q, RawOut %q; want the escapes on RawOut only", err, x.b.Out.String(), raw.String())
	}
	raw.Reset()
	if err := x.run(t, "capture", "--pane", pane); err != nil || !strings.Contains(x.b.Out.String(), "red") || strings.Contains(x.b.Out.String(), "\x1b") || raw.Len() != 0 {
		t.Errorf("capture: %v, Out %q, RawOut %q; want the text on Out, no escape", err, x.b.Out.String(), raw.String())
	}
	if err := x.run(t, "send", "--pane", pane, "--nudges", "1", "--delay-enter", "0s", "text"); err == nil || !strings.Contains(err.Error(), "send to "+pane) {
		t.Errorf("send with nudges to a pane whose screen Enter does not change (no echo, sleep reads nothing): %v, want an error naming the pane", err)
	}
}
