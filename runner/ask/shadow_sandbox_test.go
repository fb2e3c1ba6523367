package ask

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/runner"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// TestShadowOfASandboxedTask: the shadow of a sandboxed task (its folder
// the agent's to write, agent files and their hooks included) runs
// sandboxed too: it answers, and its write outside is refused. The Env has
// no Getenv (as a test's or a library user's): the process's environment
// is looked at.
func TestShadowOfASandboxedTask(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("bwrap not on PATH (.ci/run installs bubblewrap)")
		}
		t.Skip("bwrap not on PATH")
	}
	store, err := state.Open(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "outside.txt") // under /tmp: the sandbox's own
	home, err := os.MkdirTemp(os.Getenv("HOME"), ".runner-shadow-test")
	if err != nil {
		t.Skip(err)
	}
	defer os.RemoveAll(home)
	escape := filepath.Join(home, "escaped.txt")
	prof := &profile.Profile{Name: "shellshadow", Command: []string{"sh"},
		Headless: []string{"sh", "-c", `echo "answered: $1"; echo x > "$2" 2>/dev/null; echo x > "$3" 2>/dev/null; true`, "sh", "{prompt}", outside, escape}}
	env := &runner.Env{Store: store, TC: tmuxctl.New(filepath.Join(t.TempDir(), "s"))}
	task := &state.Task{ID: "t_shadowsb", Agent: "shellshadow", Dir: t.TempDir(), Text: "x", Sandbox: []string{"/somewhere"}}
	res := runShadow(t.Context(), depsOf(env), task, prof, "the question", time.Minute)
	if res.err != nil || !strings.Contains(res.answer, "answered:") {
		t.Fatalf("err %v, answer %q, stderr %q", res.err, res.answer, res.stderr)
	}
	if _, err := os.Stat(escape); err == nil {
		t.Errorf("the shadow of a sandboxed task wrote %s", escape)
	}
}
