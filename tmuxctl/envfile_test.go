package tmuxctl

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
)

// TestEnvNeverOnACommandLine: a pane's environment reaches its process
// byte for byte (quotes, newlines, shell syntax), yet no value is on any
// process's command line — not the tmux server's, which keeps the one it
// was started with, nor a later launch's — and the hand-over file is
// emptied once the pane has read it.
func TestEnvNeverOnACommandLine(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir()) // the hand-over files of this test alone
	t.Setenv("XDG_RUNTIME_DIR", "")
	// After the TMPDIR (cleanups run last first): the server is killed
	// while its slots' directory there still is.
	c := testServer(t)
	ctx := testCtx(t)
	out := t.TempDir()
	odd := "it's \"odd\"\n$HOME `id` $(id) \\ #{pane_id} ;"
	for i, launch := range []func(WindowSpec) (string, error){
		func(s WindowSpec) (string, error) { return c.NewSession(ctx, s) }, // starts the server
		func(s WindowSpec) (string, error) { return c.NewWindow(ctx, s) },
	} {
		secret := "sk-ant-secret-" + strings.Repeat(string(rune('a'+i)), 12)
		dir := filepath.Join(out, string(rune('a'+i)))
		os.Mkdir(dir, 0o700)
		_, err := launch(WindowSpec{Session: "envs", Name: "w" + string(rune('a'+i)), Size: Size{80, 24},
			Env:  []string{"RUNNER_TEST_SECRET=" + secret, "RUNNER_TEST_ODD=" + odd},
			Argv: []string{"sh", "-c", `printenv RUNNER_TEST_SECRET > "$0/s"; printenv RUNNER_TEST_ODD > "$0/o"; exec sleep 60`, dir}})
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, 10*time.Second, func() bool {
			b, err := os.ReadFile(filepath.Join(dir, "o"))
			return err == nil && len(b) > 0
		})
		if b, _ := os.ReadFile(filepath.Join(dir, "s")); string(b) != secret+"\n" {
			t.Errorf("launch %d: the pane's RUNNER_TEST_SECRET is %q, want %q", i, b, secret)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "o")); string(b) != odd+"\n" {
			t.Errorf("launch %d: the pane's RUNNER_TEST_ODD is %q, want %q", i, b, odd)
		}
		for _, p := range allCmdlines(t) {
			if strings.Contains(p, secret) {
				t.Errorf("launch %d: a command line shows the secret: %q", i, p)
			}
		}
	}
	// The panes emptied their files as they read them; a later launch
	// removes those emptied a while ago, never a file with text.
	files, _ := filepath.Glob(filepath.Join(os.TempDir(), "runner-env-*", "env-*"))
	if len(files) != 2 {
		t.Fatalf("hand-over files after two launches: %v, want the two emptied", files)
	}
	for _, f := range files {
		if b, err := os.ReadFile(f); err != nil || len(b) > 0 {
			t.Errorf("hand-over file %s after the pane read it: %q (%v), want it empty", f, b, err)
		}
	}
	old := clock.Real(clock.Now().Add(-2 * emptiedAge)) // an mtime: the system's clock
	if err := os.Chtimes(files[0], old, old); err != nil {
		t.Fatal(err)
	}
	// Within a minute of the last sweep, no launch sweeps again.
	if _, err := c.NewWindow(ctx, WindowSpec{Session: "envs", Name: "wb", Env: []string{"A=1"}, Argv: []string{"sleep", "60"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(files[0]); err != nil {
		t.Errorf("a launch within a minute of the last sweep swept: %v", err)
	}
	// A minute since the last sweep.
	if err := os.Chtimes(filepath.Join(filepath.Dir(files[0]), sweptMark), old, old); err != nil {
		t.Fatal(err)
	}
	inFlight := filepath.Join(filepath.Dir(files[0]), "env-inflight")
	if err := os.WriteFile(inFlight, []byte("A='1'\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(inFlight, old, old)
	if _, err := c.NewWindow(ctx, WindowSpec{Session: "envs", Name: "wc", Env: []string{"A=1"}, Argv: []string{"sleep", "60"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(files[0]); !os.IsNotExist(err) {
		t.Errorf("a file emptied long ago is still there after the next launch (%v)", err)
	}
	if _, err := os.Stat(files[1]); err != nil {
		t.Errorf("a file emptied just now was removed: %v", err)
	}
	if _, err := os.Stat(inFlight); err != nil {
		t.Errorf("a file with text was removed: %v", err)
	}
}

// allCmdlines returns every process's command line, arguments joined by
// spaces (what `ps -eo args` shows).
func allCmdlines(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil || len(paths) == 0 {
		t.Skip("no /proc to read command lines from")
	}
	var out []string
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err == nil && len(b) > 0 {
			out = append(out, string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})))
		}
	}
	return out
}

func TestEnvFileText(t *testing.T) {
	got, err := EnvFileText([]string{"A=1", "B_2=it's", "EMPTY=", "C=x=y"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "A='1'\nB_2='it'\\''s'\nEMPTY=''\nC='x=y'\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	for _, bad := range []string{"NOEQUALS", "=v", "1A=v", "A B=v", "A-B=v", "A;rm=v", "Ä=v"} {
		if _, err := EnvFileText([]string{bad}); err == nil {
			t.Errorf("EnvFileText accepted %q", bad)
		}
	}
}

// TestEnvSweepMarkNotFollowed: the sweep's mark is made anew, never
// written through: a link in its place leaves the file it names as it was.
func TestEnvSweepMarkNotFollowed(t *testing.T) {
	dir, other := t.TempDir(), filepath.Join(t.TempDir(), "precious")
	if err := os.WriteFile(other, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, filepath.Join(dir, sweptMark)); err != nil {
		t.Fatal(err)
	}
	sweepEmptied(dir)
	if b, err := os.ReadFile(other); err != nil || string(b) != "keep" {
		t.Errorf("the file a link in the mark's place names: %q, %v; want it as it was", b, err)
	}
	if fi, err := os.Lstat(filepath.Join(dir, sweptMark)); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("the mark after the sweep: %v, %v; want a file of its own", fi, err)
	}
}

// TestEnvBadKeyLeavesNothing: a launch refused for a bad variable name
// starts nothing and leaves no file.
func TestEnvBadKeyLeavesNothing(t *testing.T) {
	c := testServer(t)
	t.Setenv("TMPDIR", t.TempDir())
	t.Setenv("XDG_RUNTIME_DIR", "")
	_, err := c.NewSession(testCtx(t), WindowSpec{Session: "bad", Env: []string{"OK=1", "NOT OK=2"}, Argv: []string{"true"}})
	if err == nil || !strings.Contains(err.Error(), "NOT OK") {
		t.Fatalf("error %v, want one naming the bad entry", err)
	}
	if files, _ := filepath.Glob(filepath.Join(os.TempDir(), "runner-env-*", "*")); len(files) > 0 {
		t.Errorf("files left: %v", files)
	}
}
