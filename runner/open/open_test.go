package open

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// env is an environment with a state and a config folder of its own.
func env(t *testing.T, kv ...string) func(string) string {
	dir := t.TempDir()
	m := map[string]string{"HOME": dir, "RUNNER_STATE_DIR": filepath.Join(dir, "state"),
		"XDG_CONFIG_HOME": filepath.Join(dir, "config")}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

// TestEnv: the Env is over the state RUNNER_STATE_DIR names and the tmux
// server --socket (else RUNNER_TMUX_SOCKET) names, with the built-in
// profiles and this binary.
func TestEnv(t *testing.T) {
	getenv := env(t, "RUNNER_TMUX_SOCKET", "from-env")
	e, cfg, err := Env(Options{Getenv: getenv}, "/usr/local/bin/runner")
	if err != nil {
		t.Fatal(err)
	}
	if cfg == nil || e.Store.Dir() != getenv("RUNNER_STATE_DIR") || e.TC.Socket() != "from-env" {
		t.Errorf("store %s, socket %s", e.Store.Dir(), e.TC.Socket())
	}
	if len(e.Profiles) == 0 || e.Hosts == nil || e.Exe != "/usr/local/bin/runner" || e.Progress != nil || e.ExitOf != nil {
		t.Errorf("env %+v", e)
	}
	e, _, err = Env(Options{Getenv: getenv, Socket: "flag"}, "/usr/local/bin/runner")
	if err != nil || e.TC.Socket() != "flag" {
		t.Errorf("--socket: %v, %v", e, err)
	}
}

// TestEnvBadConfig: a config that does not parse is an error naming it.
func TestEnvBadConfig(t *testing.T) {
	getenv := env(t)
	dir := filepath.Join(getenv("XDG_CONFIG_HOME"), "runner")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"close_after": [`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Env(Options{Getenv: getenv}, "runner"); err == nil || !strings.Contains(err.Error(), "config") {
		t.Errorf("err = %v", err)
	}
}

// TestSandboxedPlace: a socket path in a folder a sandboxed task may
// write, also through a link to it, is refused naming the task; one
// elsewhere, or a task's entry that is no absolute path, is not.
func TestSandboxedPlace(t *testing.T) {
	w := t.TempDir()
	other := t.TempDir()
	link := filepath.Join(other, "link")
	if err := os.Symlink(w, link); err != nil {
		t.Fatal(err)
	}
	st := state.New()
	st.Tasks["t_sandaaaa"] = &state.Task{ID: "t_sandaaaa", Sandbox: []string{w + " (the task's folder)", "relative/dir"}}
	for _, tc := range []struct {
		path string
		bad  bool
	}{
		{filepath.Join(w, "tmux.sock"), true},
		{filepath.Join(w, "sub", "tmux.sock"), true},
		{filepath.Join(link, "tmux.sock"), true},
		{filepath.Join(other, "tmux.sock"), false},
		{"relative/dir/tmux.sock", false},
	} {
		err := SandboxedPlace(st, tc.path)
		if (err != nil) != tc.bad {
			t.Errorf("SandboxedPlace(%s) = %v, want refused %v", tc.path, err, tc.bad)
		}
		if err != nil && !strings.Contains(err.Error(), "t_sandaaaa") {
			t.Errorf("error %v does not name the task", err)
		}
	}
}

// TestSocketGuard: the guard reads the state it opens; no state is no
// sandboxed task.
func TestSocketGuard(t *testing.T) {
	getenv := env(t)
	w := t.TempDir()
	guard := SocketGuard(Options{Getenv: getenv}, nil)
	if err := guard(t.Context(), filepath.Join(w, "s")); err != nil {
		t.Errorf("no state: %v", err)
	}
	s, err := state.Open(getenv("RUNNER_STATE_DIR"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Update(context.Background(), func(st *state.State) error {
		st.Tasks["t_sandaaaa"] = &state.Task{ID: "t_sandaaaa", Status: state.StatusRunning, Sandbox: []string{w}}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := guard(t.Context(), filepath.Join(w, "s")); err == nil {
		t.Error("a socket in a sandboxed task's folder passed")
	}
	if err := guard(t.Context(), filepath.Join(t.TempDir(), "s")); err != nil {
		t.Errorf("a socket elsewhere: %v", err)
	}
}

// TestHostTmuxUnknown: a host that is not registered is an error, and
// no client is made.
func TestHostTmuxUnknown(t *testing.T) {
	c, err := HostTmux(context.Background(), Options{Getenv: env(t)}, "nosuchhost")
	if err == nil || c != nil {
		t.Errorf("HostTmux = %v, %v", c, err)
	}
}

// TestTmux: the client's socket is the one asked for; Tmux makes
// no server.
func TestTmux(t *testing.T) {
	c := Tmux(Options{Getenv: env(t), Socket: "/tmp/x/none.sock"}, nil)
	if c.Socket() != "/tmp/x/none.sock" {
		t.Errorf("socket %s", c.Socket())
	}
	if c := Tmux(Options{Getenv: env(t)}, nil); c.Socket() != tmuxctl.DefaultSocket {
		t.Errorf("default socket %s", c.Socket())
	}
}

// TestSelf: a binary invoked by a path named runner is that path, made
// absolute; any other name is the executable's own path.
func TestSelf(t *testing.T) {
	if got := Self("/opt/bin/runner"); got != "/opt/bin/runner" {
		t.Errorf("Self(/opt/bin/runner) = %q", got)
	}
	wd, _ := os.Getwd()
	if got := Self("./runner"); got != filepath.Join(wd, "runner") {
		t.Errorf("Self(./runner) = %q", got)
	}
	exe, _ := os.Executable()
	if got := Self("something-else"); got != exe {
		t.Errorf("Self(something-else) = %q, want %q", got, exe)
	}
}
