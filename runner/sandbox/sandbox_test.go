package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
	got := Argv("/usr/bin/bwrap", []string{"/tmp/bin"}, []string{"/p", "/s"}, []string{"claude", "--x"})
	want := []string{"/usr/bin/bwrap", "--ro-bind", "/", "/", "--dev-bind", "/dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
		"--ro-bind-try", "/tmp/bin", "/tmp/bin", "--bind-try", "/p", "/p", "--bind-try", "/s", "/s", "--die-with-parent", "--", "claude", "--x"}
	if !slices.Equal(got, want) {
		t.Errorf("Argv =\n%q\nwant\n%q", got, want)
	}
}

// TestSandboxConfines runs a shell in a real sandbox: it writes in its
// folder and its private /tmp, not in HOME nor /var/tmp (read-only file
// system), and its /tmp is not the host's.
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
	argv := Argv(bwrap, nil, []string{dir}, []string{"sh", "-c",
		`echo in > "$1/in.txt" && echo tmp > /tmp/private.txt && ! echo out > "$2" 2>/dev/null && ! echo var > /var/tmp/runner-sandbox-test.txt 2>/dev/null`,
		"sh", dir, outside})
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %v\n%s", argv, err, out)
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
