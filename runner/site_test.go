package runner

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/runner-cli/runner/internal/statetest"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/remote"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// Both sites name the task the same way in its pane; each adds its own
// places; neither passes the caller's RUNNER_ variables on (a dispatch
// from inside a pane must not hand its own identity to the new task).
func TestSitePaneEnv(t *testing.T) {
	store := statetest.Store(t)
	env := &Env{Store: store, TC: tmuxctl.New(filepath.Join(t.TempDir(), "sock")),
		Getenv: func(k string) string { return map[string]string{"PATH": "/bin", "HOME": "/h"}[k] },
		Environ: func() []string {
			return []string{"RUNNER_TASK_ID=t_parent00", "ANTHROPIC_API_KEY=k", "OTHER=x"}
		}}
	prof := &profile.Profile{Name: "p", PassEnv: []string{"ANTHROPIC_*", "RUNNER_*"}, Env: map[string]string{"P": "1"}}
	task := &state.Task{ID: "t_child000", Project: "api", Level: 2, Parent: "t_parent00", Tmux: state.TmuxTarget{Host: "box"}}
	ident := []string{"RUNNER_TASK_ID=t_child000", "RUNNER_PROJECT=api", "RUNNER_LEVEL=2", "RUNNER_PARENT=t_parent00"}

	local := localSite{env}.paneEnv(task, prof)
	files := remote.FilesIn("/r/t_child000")
	host := hostSite{env: env, files: files}.paneEnv(task, prof)
	for name, kv := range map[string][]string{"local": local, "host": host} {
		if !slices.Equal(kv[:4], ident) {
			t.Errorf("%s: starts %q, want %q", name, kv[:4], ident)
		}
		if n := strings.Count(strings.Join(kv, "\n"), "RUNNER_TASK_ID="); n != 1 {
			t.Errorf("%s: RUNNER_TASK_ID %d times: %q", name, n, kv)
		}
		if !slices.Contains(kv, "P=1") {
			t.Errorf("%s: no profile variable: %q", name, kv)
		}
	}
	for _, want := range []string{"RUNNER_STATE_DIR=" + store.Dir(), "PATH=/bin", "ANTHROPIC_API_KEY=k"} {
		if !slices.Contains(local, want) {
			t.Errorf("local: no %s: %q", want, local)
		}
	}
	for _, want := range []string{"RUNNER_HOST=box", "RUNNER_STATE_DIR=" + files.State, "RUNNER_EVENTS_FILE=" + files.Events} {
		if !slices.Contains(host, want) {
			t.Errorf("host: no %s: %q", want, host)
		}
	}
	if slices.Contains(host, "PATH=/bin") || slices.Contains(host, "ANTHROPIC_API_KEY=k") {
		t.Errorf("host: this machine's variables passed there: %q", host)
	}
}
