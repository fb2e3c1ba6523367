package sandbox

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestWritable(t *testing.T) {
	got := Writable([]string{"/a/b", "relative", "", "/a", "/a/b/c", "/ab", "/x/", "/a"})
	if want := []string{"/a", "/ab", "/x"}; !slices.Equal(got, want) {
		t.Errorf("Writable = %v, want %v", got, want)
	}
}

func TestUnderTmp(t *testing.T) {
	got := UnderTmp([]string{"/usr/bin", "/tmp", "/tmp/a/bin", "/tmp/a", "/tmpx/b", "/tmp/../etc", "rel"})
	if want := []string{"/tmp/a"}; !slices.Equal(got, want) {
		t.Errorf("UnderTmp = %v, want %v", got, want)
	}
}

func TestExpand(t *testing.T) {
	env := []string{"CODEX_HOME=/h/codex", "XDG_CONFIG_HOME=/h/.config", "EMPTY="}
	for _, tc := range []struct{ in, want string }{
		{"~/.claude/", "/h/.claude/"},
		{"~/.claude.json", "/h/.claude.json"},
		{"$CODEX_HOME/", "/h/codex/"},
		{"${XDG_CONFIG_HOME}/opencode/", "/h/.config/opencode/"},
		{"$XDG_CONFIG_HOME/opencode", "/h/.config/opencode"},
		{"$UNSET/x", ""},
		{"$EMPTY/x", ""},
		{"relative/x", ""},
		{"/abs/../y", "/y"},
		{"${BROKEN", ""},
		{"${CODEX_HOME:-~/.codex}/", "/h/codex/"},
		{"${UNSET:-~/.codex}/", "/h/.codex/"},
		{"${EMPTY:-/d}/x", "/d/x"},
		{"${XDG_STATE_HOME:-~/.local/state}/runner-agent-sim/", "/h/.local/state/runner-agent-sim/"},
	} {
		if got := Expand(tc.in, "/h", env); got != tc.want {
			t.Errorf("Expand(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := Expand("~/.x", "", nil); got != "" {
		t.Errorf("no home: %q", got)
	}
}

func TestArgv(t *testing.T) {
	got := Argv("/usr/bin/bwrap", Spec{Readable: []string{"/tmp/bin"}, Writable: []string{"/p", "/s"}, Pinned: []string{"/p/.git"},
		Hidden: []string{"/state"}, Masked: []string{"/run/sock"}, ReadOnly: []string{"/p/.git/config"},
		Open: []string{"/state/events/t.jsonl"}, OpenRO: []string{"/state/doors/t"}}, []string{"claude", "--x"})
	want := []string{"/usr/bin/bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-pid", "--unshare-ipc", "--proc", "/proc", "--tmpfs", "/tmp",
		"--setenv", "TMPDIR", "/tmp", "--ro-bind-try", "/tmp/bin", "/tmp/bin", "--bind-try", "/p", "/p", "--bind-try", "/s", "/s", "--bind-try", "/p/.git", "/p/.git",
		"--tmpfs", "/state", "--ro-bind", "/dev/null", "/run/sock", "--ro-bind-try", "/p/.git/config", "/p/.git/config",
		"--bind-try", "/state/events/t.jsonl", "/state/events/t.jsonl", "--ro-bind-try", "/state/doors/t", "/state/doors/t",
		"--cap-drop", "ALL", "--die-with-parent", "--", "claude", "--x"}
	if !slices.Equal(got, want) {
		t.Errorf("Argv =\n%q\nwant\n%q", got, want)
	}
}

func TestCovered(t *testing.T) {
	spec := Spec{Readable: []string{"/tmp/home"}, Writable: []string{"/tmp/w"}, Hidden: []string{"/state"}}
	for p, want := range map[string]bool{
		"/tmp/tmux-0/runner": true, "/tmp/w/sock": false, "/tmp/home/x": false, "/state/events.sock": true,
		"/run/user/0/runner.sock": false, "/tmp": true,
	} {
		if got := Covered(p, spec); got != want {
			t.Errorf("Covered(%s) = %v, want %v", p, got, want)
		}
	}
}

// TestSandboxConfines runs a shell in a real sandbox: it writes in its
// folder and its private /tmp, not in HOME nor /var/tmp (read-only file
// system), and its /tmp is not the host's. A user's TMPDIR under HOME
// (read-only inside) is the private /tmp there: mktemp works.
func TestSandboxConfines(t *testing.T) {
	bwrap, err := Check(t.Context())
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err) // .ci/run installs bubblewrap
		}
		t.Skip(err)
	}
	dir := t.TempDir()
	home := t.TempDir()
	outside := filepath.Join(home, "outside.txt")
	argv := Argv(bwrap, Spec{Writable: []string{dir}}, []string{"sh", "-c",
		`echo in > "$1/in.txt" && echo tmp > /tmp/private.txt && ! echo out > "$2" 2>/dev/null && ! echo var > /var/tmp/runner-sandbox-test.txt 2>/dev/null && f=$(mktemp) && echo "$f" > "$1/mktemp.txt"`,
		"sh", dir, outside})
	userTmp := filepath.Join(home, "tmp")
	if err := os.Mkdir(userTmp, 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "TMPDIR="+userTmp)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %v\n%s", argv, err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "mktemp.txt")); !strings.HasPrefix(string(b), "/tmp/") {
		t.Errorf("mktemp inside made %q, want a file of the private /tmp", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "in.txt")); string(b) != "in\n" {
		t.Errorf("the write inside gave %q", b)
	}
	for _, p := range []string{outside, "/var/tmp/runner-sandbox-test.txt", "/tmp/private.txt"} {
		if _, err := os.Stat(p); err == nil {
			os.Remove(p)
			t.Errorf("%s was written from inside the sandbox", p)
		}
	}
}

// TestSandboxHolds is an agent that has read this package trying its
// doors, in a real sandbox shaped as a task's: each attempt must fail, and
// nothing outside may change.
func TestSandboxHolds(t *testing.T) {
	bwrap, err := Check(t.Context())
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	root := t.TempDir()
	mk := func(rel, data string) string {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if data != "" {
			if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return p
	}
	proj := filepath.Dir(mk("proj/a.txt", "a\n"))
	gitConfig := mk("proj/.git/config", "[core]\n")
	hooks := filepath.Dir(mk("proj/.git/hooks/x", "x"))
	state := filepath.Dir(mk("state/state.json", "{}"))
	events := mk("state/events/t_1.jsonl", "\n")
	door := filepath.Dir(mk("state/doors/t_1/x", "x"))
	sock := mk("run/s", "")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	spec := Spec{Writable: []string{proj}, Pinned: []string{filepath.Join(proj, ".git")}, Hidden: []string{state},
		Masked: []string{sock}, ReadOnly: []string{gitConfig, hooks}, Open: []string{events}, OpenRO: []string{door}, Root: os.Geteuid() == 0}
	attempts := map[string]string{
		// none, or CAP_SETFCAP alone in a user namespace of its own (Spec.Root)
		"a capability":                          `grep -Eq '^CapEff:[[:space:]]*00000000[08]0000000$' /proc/self/status || { grep CapEff /proc/self/status; exit 0; }; exit 1`,
		"a remount from a namespace of its own": `unshare -U -r -m sh -c 'mount -o remount,rw,bind "$PROJ/.git/config" && echo x >> "$PROJ/.git/config"'`,
		"remount read-write":                    `mount -o remount,rw,bind "$PROJ/.git/config" 2>/dev/null || mount -o remount,rw / 2>/dev/null`,
		"a process outside":                     `test -e /proc/$OUTER`,
		"a raw device":                          `ls /dev | grep -Eq '^(sd|nvme|vd|xvd|loop|mem$|kmem$|port$)'`,
		"git's config":                          `echo '[core] fsmonitor = touch /pwned' >> "$PROJ/.git/config"`,
		"a planted hook":                        `echo 'touch /pwned' > "$PROJ/.git/hooks/post-commit"`,
		"the git directory renamed":             `mv "$PROJ/.git" "$PROJ/.git-old"`,
		"runner's state":                        `echo x > "$STATE/state.json.new"; test -e "$STATE/state.json"`,
		"the tmux socket":                       `test -S "$SOCK"`,
		"the door replaced":                     `rm -f "$DOOR/x" || echo x > "$DOOR/y"`,
	}
	for name, script := range attempts {
		argv := Argv(bwrap, spec, []string{"sh", "-c", script})
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = append(os.Environ(), "PROJ="+proj, "STATE="+state, "SOCK="+sock, "DOOR="+door,
			"OUTER="+strconv.Itoa(os.Getpid()))
		if out, err := cmd.CombinedOutput(); err == nil {
			t.Errorf("%s: the attempt succeeded: %s\n%s", name, script, out)
		}
	}
	// What the task may do still works: write its folder and its events.
	argv := Argv(bwrap, spec, []string{"sh", "-c", `echo in > "$PROJ/b.txt" && echo '{}' >> "$EVENTS" && test -d "$DOOR" && unshare -U -r true`})
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "PROJ="+proj, "EVENTS="+events, "DOOR="+door)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the task's own writes: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(events); string(b) != "\n{}\n" {
		t.Errorf("the events file holds %q", b)
	}
	if b, _ := os.ReadFile(gitConfig); string(b) != "[core]\n" {
		t.Errorf("git's config changed: %q", b)
	}
	if ents, _ := os.ReadDir(hooks); len(ents) != 1 {
		t.Errorf("the hooks folder holds %d files", len(ents))
	}
	for _, p := range []string{filepath.Join(door, "y"), filepath.Join(state, "state.json.new"), "/pwned"} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was made from inside", p)
		}
	}
}
