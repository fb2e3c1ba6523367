package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/runner-cli/runner/cmd/runner/exitcode"
	"github.com/runner-cli/runner/runner/door"
	"github.com/spf13/cobra"
)

// confinedEnv is the environment of a request that came through task
// t_confined1's door, with a state directory of its own.
func confinedEnv(t *testing.T, dir string) map[string]string {
	home := t.TempDir()
	return map[string]string{door.EnvConfined: "t_confined1", door.EnvConfinedDir: dir, "HOME": home,
		"RUNNER_STATE_DIR": filepath.Join(home, "state"), "XDG_CONFIG_HOME": filepath.Join(home, "config"),
		"RUNNER_TMUX_SOCKET": filepath.Join(home, "no-server")}
}

// TestConfinedFlagsKnown: every command the door carries says which of
// its flags a sandboxed task may give, and each of them is a flag of that
// command (a renamed flag would silently close, or a typo never open).
func TestConfinedFlagsKnown(t *testing.T) {
	a, _ := newApp(strings.NewReader(""), os.Stdout, os.Stderr, func(string) string { return "" })
	root := a.newRootCmd()
	for _, name := range door.Commands {
		c, _, err := root.Find([]string{name})
		if err != nil || c == root {
			t.Fatalf("door command %s: %v", name, err)
		}
		flags, ok := door.ConfinedFlags(name)
		if !ok {
			t.Errorf("door command %s has no entry in confinedFlags", name)
		}
		for _, f := range flags {
			if c.Flags().Lookup(f) == nil {
				t.Errorf("confinedFlags[%s] names --%s, which runner %s does not have", name, f, name)
			}
		}
	}
	for _, name := range door.ConfinedCommands() {
		if !slices.Contains(door.Commands, name) {
			t.Errorf("confinedFlags names %s, which the door does not carry", name)
		}
	}
}

// TestConfinedFlagsRefused: through a door, a flag that selects runner's
// own resources (the tmux server, a host, a command to run, who asked) is
// refused with exit 2 before the command does anything, in every spelling
// the real flag set accepts; the flags the command allows pass.
func TestConfinedFlagsRefused(t *testing.T) {
	env := confinedEnv(t, t.TempDir())
	for _, args := range [][]string{
		{"status", "--socket", "./x.sock", "t_abcdefabcdef"},
		{"status", "--socket=./x.sock", "t_abcdefabcdef"},
		{"--socket", "./x.sock", "ps"},
		{"ps", "--all", "--socket", "evil"},
		{"wait", "--socket=/tmp/x/s", "t_abcdefabcdef"},
		{"msg", "t_abcdefabcdef", "hi", "--socket", "x"},
		{"inbox", "--socket", "x"},
		{"tree", "--socket", "x"},
		{"ask", "--socket", "x", "t_abcdefabcdef", "q"},
		{"version", "--socket", "./x.sock"},
		{"dispatch", ".", "--host", "h", "x"},
		{"dispatch", ".", "--notify", "touch /tmp/pwned", "x"},
		{"dispatch", ".", "--source=user", "x"},
		{"dispatch", ".", "--agents", "sim,sim", "x"},
		{"dispatch", ".", "--check", "true", "--tries", "2", "x"},
	} {
		code, _, errOut := runCLIEnv(t, env, args...)
		if code != 2 || !strings.Contains(errOut, "not open to a sandboxed task") {
			t.Errorf("runner %q through the door: exit %d, %q; want exit 2, refused", args, code, errOut)
		}
	}
	code, out, errOut := runCLIEnv(t, env, "version", "--json")
	if code != 0 || !strings.Contains(out, "version") {
		t.Errorf("version --json through the door: exit %d, %q %q", code, out, errOut)
	}
}

// TestConfinedCommandsRefused: every command and subcommand of runner but
// those the door carries is refused to a confined caller, also those with
// a hook of their own (snapshot's replaced the root's and its check).
func TestConfinedCommandsRefused(t *testing.T) {
	env := confinedEnv(t, t.TempDir())
	a, _ := newApp(strings.NewReader(""), os.Stdout, os.Stderr, func(string) string { return "" })
	var walk func(c *cobra.Command)
	checked := 0
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		path := strings.Fields(c.CommandPath())[1:]
		if len(path) == 0 || slices.Contains(ownCommands, path[0]) || strings.HasPrefix(path[0], "__") {
			return
		}
		if len(path) == 1 && slices.Contains(door.Commands, path[0]) {
			return
		}
		if !c.Runnable() {
			return
		}
		checked++
		// With as many arguments as it takes (cobra checks their count first).
		refused := false
		for n := 0; n <= 3 && !refused; n++ {
			args := append(slices.Clone(path), slices.Repeat([]string{"t_abcdefabcdef"}, n)...)
			code, _, errOut := runCLIEnv(t, env, args...)
			if code != 2 {
				t.Errorf("runner %s through the door: exit %d, %q; want exit 2, refused", strings.Join(args, " "), code, errOut)
			}
			refused = strings.Contains(errOut, "not open to a sandboxed task")
		}
		if !refused {
			t.Errorf("runner %s through the door: not refused", strings.Join(path, " "))
		}
	}
	walk(a.newRootCmd())
	if checked < 30 {
		t.Fatalf("checked only %d commands", checked)
	}
}

// TestConfinedFile: a --file given through the door is read only inside
// the task's folder, by the untrusted rules: runner's state file, a path
// outside, a link out of the folder and a FIFO are refused (exit 2) and
// their content never shows; a file of the folder is read.
func TestConfinedFile(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "task")
	os.MkdirAll(dir, 0o755)
	secret := filepath.Join(base, "state.json")
	os.WriteFile(secret, []byte("SECRET-STATE"), 0o600)
	os.Symlink(base, filepath.Join(dir, "up"))
	env := confinedEnv(t, dir)
	for _, f := range []string{secret, "up/state.json", filepath.Join(dir, "up", "state.json"), "../state.json", "/etc/passwd"} {
		a, _ := newApp(strings.NewReader(""), os.Stdout, os.Stderr, func(k string) string { return env[k] })
		text, err := a.readTextRaw(nil, f)
		if err == nil || exitcode.Of(err) != 2 || strings.Contains(text, "SECRET") {
			t.Errorf("--file %s through the door: %q, %v; want refused (exit 2)", f, text, err)
		}
	}
	os.WriteFile(filepath.Join(dir, "task.md"), []byte("do it"), 0o600)
	a, _ := newApp(strings.NewReader(""), os.Stdout, os.Stderr, func(k string) string { return env[k] })
	if text, err := a.readTextRaw(nil, filepath.Join(dir, "task.md")); err != nil || text != "do it" {
		t.Errorf("--file of the task's folder: %q, %v", text, err)
	}
	if text, err := a.readTextRaw(nil, "-"); err != nil || text != "" {
		t.Errorf("--file -: %q, %v", text, err)
	}
	delete(env, door.EnvConfinedDir)
	if _, err := a.readTextRaw(nil, filepath.Join(dir, "task.md")); err == nil {
		t.Errorf("--file with no folder known: read")
	}
}
