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

// TestInstallContextHook: the CLIs whose hook can add context to a
// running turn get runner's notices through it (`runner hook --task ID
// --context EVENT`, package notice): Claude Code's and Qwen Code's
// PostToolUse, runner's OpenCode plugin and pi extension in the files
// Install writes, Gemini CLI's AfterTool in its system-defaults file
// (rendered only: Install puts a root-owned file under /run).
func TestInstallContextHook(t *testing.T) {
	for _, c := range []struct{ agent, event string }{
		{"claude", "PostToolUse"}, {"qwen", "PostToolUse"}, {"opencode", "PostToolUse"}, {"pi", "PostToolUse"}, {"gemini", "AfterTool"},
	} {
		t.Run(c.agent, func(t *testing.T) {
			prof, err := profile.BuiltinProfile(c.agent)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			pl := Place{Exe: "/opt/runner", TaskID: "t_hook0002", Events: filepath.Join(dir, "events"), Dir: filepath.Join(dir, "hook"),
				Say: func(f string, a ...any) { t.Errorf("said "+f, a...) }}
			cmd := "'/opt/runner' hook --task t_hook0002"
			want := cmd + " --context " + c.event
			var all strings.Builder
			if prof.Hook.RootOwned {
				hl, err := prof.Hook.Render(profile.HookPaths{Command: cmd, Events: pl.Events, Dir: pl.Dir})
				if err != nil {
					t.Fatal(err)
				}
				all.Write(hl.Settings)
			} else {
				if _, _, err := Install(pl, prof, []string{"HOME=" + dir}); err != nil {
					t.Fatal(err)
				}
				ents, err := os.ReadDir(pl.Dir)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range ents {
					b, err := os.ReadFile(filepath.Join(pl.Dir, e.Name()))
					if err != nil {
						t.Fatal(err)
					}
					all.Write(b)
				}
			}
			// The command line as the file holds it: in a JSON string,
			// or (the plugins) a JSON string and the event beside it.
			got := all.String()
			if !strings.Contains(got, want) && !(strings.Contains(got, `"`+cmd+`"`) && strings.Contains(got, `" --context `+c.event+`"`)) {
				t.Errorf("%s's hook files do not run %q:\n%s", c.agent, want, got)
			}
		})
	}
}
