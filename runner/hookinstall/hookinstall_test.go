package hookinstall

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runner-cli/runner/internal/importcheck"
	"github.com/runner-cli/runner/runner/profile"
)

// TestInstall: Claude Code's hook is a settings file in the task's hook
// folder, passed with --settings, whose command appends the turn's end to
// the task's events file.
func TestInstall(t *testing.T) {
	prof, err := profile.BuiltinProfile("claude")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var said []string
	pl := Place{Exe: "/opt/runner bin/runner", TaskID: "t_hook0001", Events: filepath.Join(dir, "events"), Dir: filepath.Join(dir, "hook"),
		Say: func(f string, a ...any) { said = append(said, f) }}
	args, _, err := Install(pl, prof, []string{"HOME=" + dir})
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(args, " ")
	if !strings.Contains(joined, "--settings") || !strings.Contains(joined, pl.Dir) {
		t.Fatalf("args %q: want --settings in the hook folder", args)
	}
	var settings []byte
	for _, a := range args {
		if strings.HasPrefix(a, pl.Dir) {
			if settings, err = os.ReadFile(a); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !strings.Contains(string(settings), pl.Events) || !strings.Contains(string(settings), `"Stop"`) {
		t.Errorf("the settings file does not append the turn's end to the task's events file:\n%s", settings)
	}
	if len(said) != 0 {
		t.Errorf("said %q", said)
	}
}

func TestHookUnusable(t *testing.T) {
	h := &profile.Hook{RootOwned: true}
	open := t.TempDir()
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	why := hookUnusable(h, filepath.Join(open, "settings.json"))
	if os.Geteuid() == 0 && !strings.Contains(why, "group or others may write") {
		t.Errorf("a file under a folder anyone may write: %q", why)
	}
	if os.Geteuid() != 0 && !strings.Contains(why, "does not run as root") {
		t.Errorf("not root: %q", why)
	}
	if why := hookUnusable(&profile.Hook{}, filepath.Join(open, "x")); why != "" {
		t.Errorf("a hook the CLI reads anywhere: %q", why)
	}
}

// TestImports keeps the package doc true.
func TestImports(t *testing.T) {
	importcheck.Only(t, ".", "internal/atomicfile", "runner/fault", "runner/profile", "tmuxctl")
}
