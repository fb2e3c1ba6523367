package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runner-cli/runner/cmd/runner/exitcode"
	"github.com/runner-cli/runner/internal/clock"

	"github.com/runner-cli/runner/state"
)

// run runs the CLI in-process with the given environment and returns the
// exit code, stdout and stderr.
func runStateCLI(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	a, _ := newApp(strings.NewReader(""), &out, &errOut, func(k string) string { return env[k] })
	code := a.run(t.Context(), args)
	return code, out.String(), errOut.String()
}

func TestProjectCommands(t *testing.T) {
	env := map[string]string{"RUNNER_STATE_DIR": filepath.Join(t.TempDir(), "state")}
	dir := t.TempDir()

	steps := []struct {
		args     []string
		code     int
		out, err string
	}{
		{[]string{"project", "list"}, 0, "no projects", ""},
		{[]string{"project", "add", "Bad", dir}, 2, "", "invalid project name"},
		{[]string{"project", "add", "api", filepath.Join(dir, "missing")}, 2, "", "does not exist"},
		{[]string{"project", "add", "api"}, 2, "", "accepts 2 arg"},
		{[]string{"project", "add", "api", dir}, 0, "added project api: " + dir, ""},
		{[]string{"project", "add", "api", dir}, 2, "", "already exists"},
		{[]string{"project", "list"}, 0, "api  " + dir, ""},
		{[]string{"project", "rm", "nope"}, 2, "", "no project named"},
		{[]string{"state", "path"}, 0, filepath.Join(env["RUNNER_STATE_DIR"], "state.json"), ""},
		{[]string{"state", "show"}, 0, "Projects: 1", ""},
		{[]string{"state", "repair"}, 0, "healthy", ""},
		{[]string{"prune", "--older-than", "-1s"}, 2, "", "must not be negative"},
		{[]string{"prune", "--older-than", "soon"}, 2, "", "invalid argument"},
		{[]string{"prune"}, 0, "pruned 0 finished task(s)", ""},
		{[]string{"project", "rm", "api"}, 0, "removed project api", ""},
		{[]string{"project", "list"}, 0, "no projects", ""},
	}
	for _, s := range steps {
		code, out, errOut := runStateCLI(t, env, s.args...)
		if code != s.code || !strings.Contains(out, s.out) || !strings.Contains(errOut, s.err) {
			t.Errorf("runner %s: exit %d\nstdout: %s\nstderr: %s\nwant exit %d, stdout with %q, stderr with %q",
				strings.Join(s.args, " "), code, out, errOut, s.code, s.out, s.err)
		}
	}
}

func TestStateJSONOutputs(t *testing.T) {
	env := map[string]string{"RUNNER_STATE_DIR": filepath.Join(t.TempDir(), "state")}
	dir := t.TempDir()
	if code, _, errOut := runStateCLI(t, env, "project", "add", "api", dir); code != 0 {
		t.Fatal(errOut)
	}
	var ps []state.Project
	decode(t, env, &ps, "project", "list", "--json")
	if len(ps) != 1 || ps[0].Name != "api" || ps[0].Dir != dir {
		t.Fatalf("project list --json = %+v", ps)
	}
	var st state.State
	decode(t, env, &st, "state", "show", "--json")
	if st.Version < 3 || st.Version > state.Version || st.Projects["api"] == nil {
		t.Fatalf("state show --json = %+v", st)
	}
	var paths map[string]string
	decode(t, env, &paths, "state", "path", "--json")
	if paths["dir"] != env["RUNNER_STATE_DIR"] || !strings.HasSuffix(paths["journal"], "journal.jsonl") {
		t.Fatalf("state path --json = %v", paths)
	}
	var pruned map[string][]string
	decode(t, env, &pruned, "prune", "--json")
	if pruned["pruned"] == nil {
		t.Fatalf("prune --json = %v", pruned)
	}
}

func decode(t *testing.T, env map[string]string, v any, args ...string) {
	t.Helper()
	code, out, errOut := runStateCLI(t, env, args...)
	if code != 0 {
		t.Fatalf("runner %v: exit %d: %s", args, code, errOut)
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("runner %v: %v\n%s", args, err, out)
	}
}

func TestCorruptAndNewerStateExit1AndUntouched(t *testing.T) {
	for name, content := range map[string]string{
		"corrupt": "{not json",
		"newer":   `{"version":999,"projects":{},"tasks":{}}`,
	} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "state")
			env := map[string]string{"RUNNER_STATE_DIR": dir}
			os.MkdirAll(dir, 0o700)
			p := filepath.Join(dir, "state.json")
			os.WriteFile(p, []byte(content), 0o600)
			for _, args := range [][]string{{"project", "list"}, {"project", "add", "x", t.TempDir()}, {"state", "show", "--json"}, {"prune"}} {
				code, _, errOut := runStateCLI(t, env, args...)
				if code != 1 || !strings.Contains(errOut, p) {
					t.Errorf("runner %v: exit %d, stderr %s", args, code, errOut)
				}
			}
			if got, _ := os.ReadFile(p); string(got) != content {
				t.Fatalf("state file changed to %q", got)
			}
		})
	}
}

func TestBusyExits5(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	env := map[string]string{"RUNNER_STATE_DIR": dir, "RUNNER_LOCK_TIMEOUT": "100ms"}
	os.MkdirAll(dir, 0o700)
	f, err := os.OpenFile(filepath.Join(dir, state.LockFile), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runStateCLI(t, env, "project", "add", "api", t.TempDir())
	if code != exitcode.ExitBusy || !strings.Contains(errOut, "busy") {
		t.Fatalf("exit %d, stderr %s; want 5", code, errOut)
	}
	// Reading does not need the lock.
	if code, _, errOut := runStateCLI(t, env, "project", "list"); code != 0 {
		t.Fatalf("list while locked: exit %d: %s", code, errOut)
	}
}

func TestStateExitCodes(t *testing.T) {
	tests := []struct {
		err  error
		want int
	}{
		{fmt.Errorf("add: %w", &state.BusyError{Lock: "/x"}), exitcode.ExitBusy},
		{&state.TaskNotFoundError{Ref: "x"}, exitcode.ExitUsage},
		{&state.AmbiguousTaskError{Ref: "x", Matches: []string{"t_a", "t_b"}}, exitcode.ExitUsage},
		{&state.CorruptError{Path: "/x"}, exitcode.ExitFailed},
		{&state.NewerVersionError{Path: "/x", Version: 9}, exitcode.ExitFailed},
		{fmt.Errorf("wait for lock: %w", context.Canceled), exitcode.ExitInterrupted},
	}
	for _, tt := range tests {
		if got := exitcode.Of(tt.err); got != tt.want {
			t.Errorf("exitcode.Of(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
}

// TestConfigRetentionEveryCommand: the config's retention holds for every
// command that opens the store. A task that ended 3 days ago survives a
// "retention": "168h" through all of them; one that ended 10 days ago is
// pruned by the first command that writes (so the retention is applied, not
// pruning switched off).
func TestConfigRetentionEveryCommand(t *testing.T) {
	root := t.TempDir()
	env := map[string]string{
		"RUNNER_STATE_DIR":   filepath.Join(root, "state"),
		"XDG_CONFIG_HOME":    filepath.Join(root, "config"),
		"HOME":               root,
		"RUNNER_TMUX_SOCKET": filepath.Join(root, "no-server"),
	}
	cfgDir := filepath.Join(root, "config", "runner")
	if err := os.MkdirAll(cfgDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfgDir, "config.json"), []byte(`{"retention": "168h", "lock_timeout": "2s"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	proj := t.TempDir()
	s, err := state.Open(env["RUNNER_STATE_DIR"])
	if err != nil {
		t.Fatal(err)
	}
	s.Retention = 0
	now := clock.Now()
	add := func(id string, ago time.Duration) {
		err := s.Update(t.Context(), func(st *state.State) error {
			tk := &state.Task{ID: id, Dir: proj, Agent: "sim", Text: "say hi " + id, Created: now.Add(-ago - time.Minute)}
			_ = tk.SetStatus(state.StatusDone, now.Add(-ago), "done")
			st.Tasks[id] = tk
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	add("t_days0003", 72*time.Hour)
	add("t_days0010", 240*time.Hour)

	cmds := [][]string{
		{"project", "add", "api", proj}, // writes: prunes t_days0010 only
		{"project", "list"},
		{"state", "path"},
		{"state", "show"},
		{"state", "repair"},
		{"prune"},
		{"ps", "--all"},
		{"status", "t_days0003"},
		{"tree"},
		{"collect", "t_days0003"},
		{"queue"},
		{"inbox", "t_days0003"},
		{"wait", "t_days0003", "--timeout", "1s"},
		{"logs", "t_days0003"},
		{"hook", "--task", "t_days0003", "Stop"},
		{"project", "rm", "api"},
	}
	for _, c := range cmds {
		code, out, errOut := runStateCLI(t, env, c...)
		st, err := s.Read(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := st.Tasks["t_days0003"]; !ok {
			t.Fatalf("runner %s (exit %d, stdout %q, stderr %q) pruned a task that ended 3 days ago under a 168h retention",
				strings.Join(c, " "), code, out, errOut)
		}
		if c[0] == "project" && c[1] == "add" {
			if code != 0 {
				t.Fatalf("project add: exit %d: %s", code, errOut)
			}
			if _, ok := st.Tasks["t_days0010"]; ok {
				t.Fatalf("project add kept a task that ended 10 days ago under a 168h retention")
			}
		}
	}
}
