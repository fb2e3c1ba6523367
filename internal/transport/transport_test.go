package transport

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/privdir"
	"github.com/runner-cli/runner/internal/sshtest"
)

// hostile is text that must cross a shell as data: quotes, expansions,
// separators, globs, options, control characters, long lines.
var hostile = []string{
	"", " ", "'", `"`, `'\''`, `$(touch PWNED1)`, "`touch PWNED2`", "; touch PWNED3", "&& touch PWNED4 &",
	"| touch PWNED5", "$HOME ${PATH} $0 $@", "*", "~", "-n", "--", "a\nb\r\nc", "tab\there", `back\slash\`,
	"\x01\x02\x1b[31mred\x1b[0m", "ünïcödé ✓ 日本", "#not a comment", "!$", "{a,b}", "[x]", "\\'\"",
	strings.Repeat("long line of text ", 6000), // ~100 KB
}

// TestJoinLocalShell: sh -c on Join(argv) runs argv exactly (what the
// remote login shell does with the command line ssh sends).
func TestJoinLocalShell(t *testing.T) {
	dir := t.TempDir()
	argv := append([]string{"printf", `%s\0`}, hostile...)
	cmd := exec.Command("sh", "-c", Join(argv))
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	checkEcho(t, out, dir)
}

// TestSSHHostile: the same through a real sshd on loopback, twice (the
// second over the shared connection), byte-exact, nothing run.
func TestSSHHostile(t *testing.T) {
	_, s := loopSSH(t)
	dir := t.TempDir()
	for i := range 2 {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		argv := append([]string{"sh", "-c", `cd "$1" && shift && printf '%s\0' "$@"`, "sh", dir}, hostile...)
		var stderr bytes.Buffer
		cmd := s.Command(ctx, argv...)
		cmd.Stderr = &stderr
		start := clock.Now()
		out, err := cmd.Output()
		cancel()
		if err != nil {
			t.Fatalf("run %d: %v: %s", i, err, stderr.String())
		}
		t.Logf("run %d: %s", i, clock.Since(start))
		checkEcho(t, out, dir)
	}
	if _, err := exec.Command("ssh", append(append([]string{"-o", "ControlPath=" + s.ControlPath(), "-O", "check"}, s.Args...), s.Destination)...).CombinedOutput(); err != nil {
		t.Errorf("no shared connection after two commands: %v", err)
	}
}

func checkEcho(t *testing.T, out []byte, dir string) {
	t.Helper()
	got := strings.Split(string(out), "\x00")
	got = got[:len(got)-1]
	if len(got) != len(hostile) {
		t.Fatalf("%d words back, want %d", len(got), len(hostile))
	}
	for i := range hostile {
		if got[i] != hostile[i] {
			t.Errorf("word %d: got %q, want %q", i, clip(got[i]), clip(hostile[i]))
		}
	}
	if ents, _ := exec.Command("ls", "-A", dir).Output(); len(ents) != 0 {
		t.Errorf("the shell ran text from the words: %s", ents)
	}
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

func TestControlPathShort(t *testing.T) {
	s := &SSH{Destination: "u@h", ControlDir: "/" + strings.Repeat("d", 200)}
	if p := s.ControlPath(); len(p)+17 > 104 {
		t.Errorf("control path %d bytes: %s", len(p), p)
	}
	// A long $TMPDIR too (macOS's /var/folders/…, a test's work dir).
	t.Setenv("TMPDIR", "/"+strings.Repeat("t", 150))
	if p := s.ControlPath(); len(p)+17 > 104 || !strings.HasPrefix(p, "/tmp/runner-ssh-") {
		t.Errorf("with a long TMPDIR, control path %d bytes: %s", len(p), p)
	}
	a := (&SSH{Destination: "h", Args: []string{"-p", "1"}, ControlDir: "/x"}).ControlPath()
	b := (&SSH{Destination: "h", Args: []string{"-p", "2"}, ControlDir: "/x"}).ControlPath()
	if a == b {
		t.Errorf("two ports share control path %s", a)
	}
}

// loopSSH starts a real sshd on loopback and returns it with a prepared
// SSH transport to it, whose session and connection end with the test.
func loopSSH(t *testing.T) (*sshtest.Server, *SSH) {
	t.Helper()
	srv := sshtest.Start(t)
	s := &SSH{Destination: sshtest.Alias, Args: srv.SSHArgs(), ControlDir: t.TempDir()}
	if err := s.Prepare(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Close()
		_ = s.Exit()
	})
	return srv, s
}

// TestControlPathNeverInAnotherUsersDirectory: OpenSSH does not check who
// owns a master socket, so a fallback directory someone else made first
// in the shared temporary directory is never used.
func TestControlPathNeverInAnotherUsersDirectory(t *testing.T) {
	privdir.Warnings = io.Discard
	base, err := os.MkdirTemp("/tmp", "ctl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	t.Setenv("TMPDIR", base)
	t.Setenv("XDG_RUNTIME_DIR", "")
	planted := filepath.Join(base, "runner-ssh-"+strconv.Itoa(os.Getuid()))
	if err := os.Mkdir(planted, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(planted, 0o1777)
	s := &SSH{Destination: "u@h", ControlDir: "/" + strings.Repeat("d", 200)}
	if p := s.ControlPath(); strings.HasPrefix(p, planted) {
		t.Fatalf("control socket %s in a directory others may write", p)
	}
	os.Remove(planted)
	if p := s.ControlPath(); !strings.HasPrefix(p, planted+"/") {
		t.Fatalf("with the directory free, the socket is %s, want one in %s (made private)", p, planted)
	}
	if err := privdir.Check(planted); err != nil {
		t.Fatal(err)
	}
}
