package extcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/cmd/runner/internal/cmdkit"
	"github.com/runner-cli/runner/internal/statetest"
	"github.com/runner-cli/runner/runner"
	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/door"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/tmuxctl"
)

// fake is a factory whose environment is a real state store in a
// temporary directory and a tmux client of a socket nobody runs.
type fake struct {
	f   *cmdkit.Factory
	b   *cmdkit.Buffers
	env *runner.Env
	c   *Cmds
}

func newFake(t *testing.T, socket string) *fake {
	t.Helper()
	s := statetest.Store(t)
	x := &fake{env: &runner.Env{Store: s, TC: tmuxctl.New(filepath.Join(t.TempDir(), "no.sock")), Exe: "/usr/bin/runner"}}
	x.f, x.b = cmdkit.Fake("", map[string]string{"RUNNER_STATE_DIR": s.Dir()})
	x.f.Env = func(bool) (*runner.Env, *config.Config, error) { return x.env, &config.Config{}, nil }
	x.f.Config = func() (*config.Config, error) { return &config.Config{}, nil }
	x.f.Socket = func() string { return socket }
	x.c = New(x.f, "v9.9.9")
	return x
}

func (x *fake) run(t *testing.T, name string, args ...string) error {
	t.Helper()
	return x.b.Run(t.Context(), x.c.Build(name), args...)
}

// Every name builds its command, and nothing else builds one.
func TestBuildNames(t *testing.T) {
	x := newFake(t, "")
	for _, name := range Names {
		if c := x.c.Build(name); c == nil || c.Name() != name {
			t.Errorf("Build(%q) = %v", name, c)
		}
	}
	if c := x.c.Build("dispatch"); c != nil {
		t.Errorf("Build(dispatch) = %s; runner-ext has no such command", c.Name())
	}
	if push := x.c.Build("push-send"); !push.Hidden {
		t.Error("push-send is listed in help")
	}
}

// serve --token makes the two tokens once and prints the same ones again;
// --rotate-token makes new ones.
func TestServeTokens(t *testing.T) {
	x := newFake(t, "")
	if err := x.run(t, "serve", "--token"); err != nil {
		t.Fatal(err)
	}
	first := x.b.Out.String()
	if !strings.HasPrefix(first, "read ") || !strings.Contains(first, "\nact  ") {
		t.Fatalf("serve --token printed %q", first)
	}
	if err := x.run(t, "serve", "--token"); err != nil || x.b.Out.String() != first {
		t.Errorf("serve --token again: %v %q; want %q", err, x.b.Out.String(), first)
	}
	if err := x.run(t, "serve", "--rotate-token"); err != nil || x.b.Out.String() == first {
		t.Errorf("serve --rotate-token: %v, the same tokens", err)
	}
}

// Bad flags of serve are usage errors, before anything listens.
func TestServeUsage(t *testing.T) {
	x := newFake(t, "")
	for _, args := range [][]string{
		{"--tls-cert", "c.pem"},
		{"--login-link", "--login-ttl", "0s"},
		{"--listen", "203.0.113.9:7777"}, // not loopback, no TLS, no --insecure
		{"extra"},
	} {
		err := x.run(t, "serve", args...)
		var fe *cmdkit.FlagError
		if !errors.Is(err, fault.ErrUsage) && !errors.As(err, &fe) {
			t.Errorf("serve %v: %v; want a usage error", args, err)
		}
	}
}

// serve --login-link prints a link to the page at --url that logs in once.
func TestServeLoginLink(t *testing.T) {
	x := newFake(t, "")
	if err := x.run(t, "serve", "--login-link", "--url", "https://box.example:7777"); err != nil {
		t.Fatal(err)
	}
	if link := strings.TrimSpace(x.b.Out.String()); !strings.HasPrefix(link, "https://box.example:7777/") || len(link) < 40 {
		t.Errorf("login link %q", link)
	}
}

// serve listens until its context ends: a request without a credential
// gets 401, one with the read token its answer.
func TestServeListens(t *testing.T) {
	x := newFake(t, "")
	sock := filepath.Join(t.TempDir(), "s.sock")
	if err := x.run(t, "serve", "--token"); err != nil {
		t.Fatal(err)
	}
	read := strings.Fields(strings.Split(x.b.Out.String(), "\n")[0])[1]
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	cmd := x.c.Build("serve")
	cmd.SetArgs([]string{"--listen", "unix:" + sock})
	cmd.SetOut(io.Discard)
	go func() { done <- cmd.ExecuteContext(ctx) }()
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}}
	get := func(token string) int {
		req, _ := http.NewRequestWithContext(t.Context(), "GET", "http://runner/api/v1/openapi.json", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err != nil {
			return -1
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	code := -1
	for range 200 { // until it listens
		if code = get(""); code != -1 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if code != http.StatusUnauthorized {
		t.Errorf("no credential: %d, want 401", code)
	}
	if code := get(read); code != http.StatusOK {
		t.Errorf("the read token: %d, want 200", code)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("serve ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not end with its context")
	}
}

// watch says it needs a terminal (the tests have none) and, with --popup,
// that it is not inside tmux.
func TestWatchUsage(t *testing.T) {
	x := newFake(t, "")
	if err := x.run(t, "watch"); !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), "needs a terminal") {
		t.Errorf("watch without a terminal: %v", err)
	}
	if err := x.run(t, "watch", "--popup"); !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), "not inside tmux") {
		t.Errorf("watch --popup outside tmux: %v", err)
	}
	if err := x.run(t, "watch", "--project", "nosuch"); err == nil {
		t.Error("watch --project of no project: no error")
	}
}

// mcp's tools run with --socket's server in their environment, said once.
func TestMCPOptionsSocket(t *testing.T) {
	t.Setenv("RUNNER_TMUX_SOCKET", "other")
	x := newFake(t, "mine")
	o := x.c.mcpOptions()
	var socks []string
	for _, kv := range o.Environ {
		if strings.HasPrefix(kv, "RUNNER_TMUX_SOCKET=") {
			socks = append(socks, kv)
		}
	}
	if !slices.Equal(socks, []string{"RUNNER_TMUX_SOCKET=mine"}) || o.Version != "v9.9.9" || o.Meaning == nil {
		t.Errorf("mcp options: sockets %v, version %q", socks, o.Version)
	}
}

// push-send with nothing queued ends at once, without error.
func TestPushSendEmpty(t *testing.T) {
	x := newFake(t, "")
	if err := x.run(t, "push-send"); err != nil {
		t.Errorf("push-send with an empty outbox: %v", err)
	}
}

// runMain runs Main with args and returns its exit code and streams.
func runMain(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(args, strings.NewReader(""), &out, &errOut, "v9.9.9")
	return code, out.String(), errOut.String()
}

// Main speaks as runner: its errors say "runner:", a usage error is 2 and
// points at --help, --json makes the error JSON, and an unknown command is
// one runner-ext does not run.
func TestMainErrors(t *testing.T) {
	t.Setenv("RUNNER_STATE_DIR", t.TempDir())
	if code, _, errOut := runMain(t, "serve", "--bogus"); code != 2 || !strings.Contains(errOut, "runner: unknown flag: --bogus") ||
		!strings.Contains(errOut, "runner --help") {
		t.Errorf("bad flag: %d %q", code, errOut)
	}
	code, _, errOut := runMain(t, "serve", "--bogus", "--json")
	var j struct {
		Error    string `json:"error"`
		ExitCode int    `json:"exit_code"`
	}
	if code != 2 || json.Unmarshal([]byte(errOut), &j) != nil || j.ExitCode != 2 {
		t.Errorf("bad flag with --json: %d %q", code, errOut)
	}
	if code, _, errOut := runMain(t, "dispatch", "p", "x"); code != 2 || !strings.Contains(errOut, "unknown command") {
		t.Errorf("a command runner-ext does not run: %d %q", code, errOut)
	}
	if code, out, _ := runMain(t, "watch", "--help"); code != 0 || !strings.Contains(out, "runner watch") || !strings.Contains(out, "--popup") {
		t.Errorf("watch --help: %d %q", code, out)
	}
}

// A process in a sandbox, or a request that came through a task's door,
// is refused every command (an attacker who finds runner-ext beside
// runner in a sandbox gets no server).
func TestMainRefusesSandboxed(t *testing.T) {
	t.Setenv("RUNNER_STATE_DIR", t.TempDir())
	for _, env := range []string{door.EnvDoor, door.EnvConfined} {
		t.Run(env, func(t *testing.T) {
			t.Setenv(env, "/x")
			for _, name := range Names {
				code, out, errOut := runMain(t, name)
				if code != 2 || out != "" || !strings.Contains(errOut, "not open to a sandboxed task") {
					t.Errorf("%s=/x runner-ext %s: %d %q %q", env, name, code, out, errOut)
				}
			}
		})
	}
}
