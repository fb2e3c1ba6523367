package doctor

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/tmuxctl"
)

func TestStateDirCheck(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "state")
	env := mapEnv(map[string]string{"RUNNER_STATE_DIR": dir})

	c := stateDirCheck(env)
	if c.Status != CheckOK || !strings.Contains(c.Detail, "does not exist yet") {
		t.Errorf("missing dir: %+v", c)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Error("doctor created the state dir")
	}

	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "state.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if c := stateDirCheck(env); c.Status != CheckOK || c.Fix != "" {
		t.Errorf("strict dir: %+v", c)
	}

	if err := os.Chmod(filepath.Join(dir, "state.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	c = stateDirCheck(env)
	if c.Status != CheckWarn || c.Fix != "chmod -R go-rwx "+dir ||
		!strings.Contains(c.Detail, ". 0755") || !strings.Contains(c.Detail, "state.json 0644") {
		t.Errorf("loose modes: %+v", c)
	}

	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if c := stateDirCheck(mapEnv(map[string]string{"RUNNER_STATE_DIR": file})); c.Status != CheckFail || !strings.Contains(c.Detail, "is not a directory") {
		t.Errorf("a file: %+v", c)
	}
	if c := stateDirCheck(mapEnv(nil)); c.Status != CheckFail || !strings.Contains(c.Detail, "HOME is not set") {
		t.Errorf("no HOME: %+v", c)
	}

	if os.Geteuid() == 0 {
		// root: Access always succeeds, but ownership can be tested.
		other := filepath.Join(base, "other")
		if err := os.Mkdir(other, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(other, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		c := stateDirCheck(mapEnv(map[string]string{"RUNNER_STATE_DIR": other}))
		if c.Status != CheckFail || !strings.Contains(c.Detail, "belongs to uid 65534") || !strings.HasPrefix(c.Fix, "chown -R 0 ") {
			t.Errorf("someone else's dir: %+v", c)
		}
	} else {
		locked := filepath.Join(base, "locked")
		if err := os.Mkdir(locked, 0o500); err != nil {
			t.Fatal(err)
		}
		c := stateDirCheck(mapEnv(map[string]string{"RUNNER_STATE_DIR": filepath.Join(locked, "a", "b")}))
		if c.Status != CheckFail || !strings.Contains(c.Detail, "cannot be created: "+locked+" is not writable") {
			t.Errorf("unwritable parent: %+v", c)
		}
	}
}

func TestConfigCheck(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	for _, tc := range []struct {
		name     string
		file     string // "" means no file
		explicit bool
		status   CheckStatus
		detail   string
	}{
		{"no file", "", false, CheckOK, "does not exist: built-in defaults"},
		{"RUNNER_CONFIG names a missing file", "", true, CheckWarn, "RUNNER_CONFIG names " + path + ", which does not exist"},
		{"good file", `{"idle": "1s"}`, true, CheckOK, path},
		{"bad file", `{"idle": 1}`, true, CheckFail, "config " + path + `: idle: want a duration string`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(path)
			if tc.file != "" {
				if err := os.WriteFile(path, []byte(tc.file), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			env := map[string]string{"XDG_CONFIG_HOME": t.TempDir()}
			if tc.explicit {
				env["RUNNER_CONFIG"] = path
			} else {
				env["XDG_CONFIG_HOME"] = filepath.Dir(dir)
				env["RUNNER_CONFIG"] = "" // the XDG path, which has no file
			}
			_, p, err := config.Load(mapEnv(env))
			c := configCheck(mapEnv(env), p, err)
			if c.Status != tc.status || !strings.Contains(c.Detail, tc.detail) {
				t.Errorf("got %+v\nwant %s with %q", c, tc.status, tc.detail)
			}
			if c.Status != CheckOK && c.Fix == "" {
				t.Errorf("no fix: %+v", c)
			}
		})
	}
}

func TestDoctor(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	sockDir, err := os.MkdirTemp("/tmp", "rdoc")
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(sockDir, "s")
	tm := tmuxctl.New(sock, tmuxctl.WithConfig("/dev/null"))
	t.Cleanup(func() {
		_ = tm.KillServer(context.Background())
		os.RemoveAll(sockDir)
	})
	home := t.TempDir()
	cfgDir := filepath.Join(home, ".config", "runner")
	if err := os.MkdirAll(cfgDir, 0o700); err != nil {
		t.Fatal(err)
	}
	// The default agent is a profile whose CLI does not exist.
	if err := os.WriteFile(filepath.Join(cfgDir, "config.json"), []byte(`{"default_agent": "ghost",
		"profiles": {"ghost": {"command": ["runner-no-such-agent"], "description": "Ghost CLI"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	opts := Options{Getenv: mapEnv(map[string]string{"HOME": home}), Socket: sock, Self: "/opt/runner"}
	byName := func(cs []Check) map[string]Check {
		m := map[string]Check{}
		for _, c := range cs {
			m[c.Name] = c
		}
		return m
	}

	checks := Run(ctx, opts)
	m := byName(checks)
	for _, name := range []string{"config", "tmux", "tmux-server", "git", "state-dir", "agent:sim", "default-agent"} {
		if _, ok := m[name]; !ok {
			t.Errorf("no %s check in %+v", name, checks)
		}
	}
	if c := m["tmux"]; c.Status != CheckOK || !strings.Contains(c.Detail, "tmux") {
		t.Errorf("tmux: %+v", c)
	}
	if c := m["tmux-server"]; c.Status != CheckOK || !strings.Contains(c.Detail, "not running") {
		t.Errorf("server before: %+v", c)
	}
	if c := m["agent:sim"]; c.Status != CheckOK || c.Detail != "/opt/runner" {
		t.Errorf("sim: %+v", c)
	}
	if c := m["default-agent"]; c.Status != CheckWarn || !strings.Contains(c.Detail, `"ghost" is not installed`) || !strings.Contains(c.Fix, "install Ghost CLI") {
		t.Errorf("default agent: %+v", c)
	}
	if strings.Contains(m["agents"].Detail, "ghost") {
		t.Errorf("the default agent is listed as optional: %+v", m["agents"])
	}
	if Failed(checks) {
		t.Errorf("failed: %+v", checks)
	}

	// A running server with a live and a dead pane.
	if _, err := tm.Launch(ctx, tmuxctl.WindowSpec{Session: "a", Argv: []string{"sleep", "30"}}); err != nil {
		t.Fatal(err)
	}
	dead, err := tm.Launch(ctx, tmuxctl.WindowSpec{Session: "b", Argv: []string{"true"}, RemainOnExit: true})
	if err != nil {
		t.Fatal(err)
	}
	for deadline := clock.Now().Add(10 * time.Second); ; {
		p, err := tm.Pane(ctx, dead)
		if err == nil && p.Dead {
			break
		}
		if clock.Now().After(deadline) {
			t.Fatalf("pane %s did not die: %+v %v", dead, p, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	m = byName(Run(ctx, opts))
	if c := m["tmux-server"]; c.Status != CheckOK || !strings.Contains(c.Detail, "running, 2 sessions, 2 panes (1 dead)") {
		t.Errorf("server running: %+v", c)
	}

	// A tmux that does not exist fails, and so does the doctor.
	if err := os.WriteFile(filepath.Join(cfgDir, "config.json"), []byte(`{"tmux_binary": "/nonexistent/tmux"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	checks = Run(ctx, opts)
	m = byName(checks)
	if c := m["tmux"]; c.Status != CheckFail || !strings.Contains(c.Fix, "install tmux 3.0 or later") {
		t.Errorf("no tmux: %+v", c)
	}
	if c := m["tmux-server"]; c.Status != CheckWarn {
		t.Errorf("server without tmux: %+v", c)
	}
	if !Failed(checks) {
		t.Error("DoctorFailed = false with tmux missing")
	}
}

func TestInotifyCheck(t *testing.T) {
	proc := t.TempDir()
	if err := os.MkdirAll(filepath.Join(proc, "sys", "fs", "inotify"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proc, "sys", "fs", "inotify", "max_user_instances"), []byte("10\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Two processes of this user: three inotify instances and a file.
	for pid, links := range map[string][]string{"101": {"anon_inode:inotify", "/x"}, "202": {"anon_inode:inotify", "anon_inode:inotify"}} {
		fd := filepath.Join(proc, pid, "fd")
		if err := os.MkdirAll(fd, 0o700); err != nil {
			t.Fatal(err)
		}
		for i, l := range links {
			if err := os.Symlink(l, filepath.Join(fd, strconv.Itoa(i))); err != nil {
				t.Fatal(err)
			}
		}
	}
	c, ok := inotifyCheck(proc)
	if !ok || c.Status != CheckOK || !strings.HasPrefix(c.Detail, "3 of 10 ") {
		t.Fatalf("3 of 10: %+v", c)
	}
	if err := os.WriteFile(filepath.Join(proc, "sys", "fs", "inotify", "max_user_instances"), []byte("3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if c, _ := inotifyCheck(proc); c.Status != CheckWarn || !strings.Contains(c.Fix, "max_user_instances=1024") {
		t.Fatalf("3 of 3: %+v", c)
	}
	if _, ok := inotifyCheck(t.TempDir()); ok {
		t.Error("a check without a limit to read")
	}
}

func mapEnv(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}
