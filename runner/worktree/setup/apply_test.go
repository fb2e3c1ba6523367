package setup

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/sshtest"
	"github.com/runner-cli/runner/internal/transport"
	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/state"
)

// localHost is a host whose scripts run on this machine's sh (the paths
// there are this machine's), and whose transport, when given, is a real
// sshd's.
type localHost struct {
	tr  *transport.SSH
	ran int
}

var _ Conn = (*localHost)(nil)

func (h *localHost) Host() *state.Host         { return &state.Host{Name: "box"} }
func (h *localHost) Transport() *transport.SSH { return h.tr }

func (h *localHost) Run(ctx context.Context, argv ...string) (string, error) {
	h.ran++
	out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).Output()
	return string(out), err
}

// checkout is a project's top with what worktree_setup copies and links
// and an ignored file .worktreeinclude lists, and a worktree top with a
// tracked node_modules of its own.
func checkout(t *testing.T) (from, to string, w *config.WorktreeSetup) {
	from, to = t.TempDir(), t.TempDir()
	writeFile(t, from, ".env", "SECRET=1\n")
	writeFile(t, from, "conf/dev/a.json", "{}")
	writeFile(t, from, "cache/blob", "b")
	writeFile(t, from, "vendor/x", "from the checkout")
	writeFile(t, from, ".secret", "s")
	writeFile(t, to, "vendor/x", "tracked")
	return from, to, &config.WorktreeSetup{Copy: []string{".env", "conf", "missing"}, Symlink: []string{"cache", "vendor", "gone"}}
}

// checkApplied checks what Apply (here or there) made of checkout's files.
func checkApplied(t *testing.T, from, to string, copied Copied) {
	t.Helper()
	for name, want := range map[string]string{".env": "SECRET=1\n", "conf/dev/a.json": "{}", ".secret": "s", "vendor/x": "tracked"} {
		if b, err := os.ReadFile(filepath.Join(to, name)); err != nil || string(b) != want {
			t.Errorf("%s in the worktree: %q, %v; want %q", name, b, err, want)
		}
	}
	if l, err := os.Readlink(filepath.Join(to, "cache")); err != nil || l != filepath.Join(from, "cache") {
		t.Errorf("cache: a link to %q (%v); want the checkout's", l, err)
	}
	for _, name := range []string{"missing", "gone"} {
		if _, err := os.Lstat(filepath.Join(to, name)); err == nil {
			t.Errorf("%s made in the worktree, though the checkout has none", name)
		}
	}
	if !slices.Equal(copied.Files, []string{".secret"}) {
		t.Errorf(".worktreeinclude copied %q, want .secret", copied.Files)
	}
}

// TestApply: worktree_setup's copies and links (a file the worktree has
// is kept), then .worktreeinclude's files, then the command in the start
// directory with the task's variables, its output in the task's log.
func TestApply(t *testing.T) {
	from, to, w := checkout(t)
	log := filepath.Join(t.TempDir(), "logs", "t_x.log")
	w.Run = []string{"sh", "-c", `echo "$RUNNER_TASK_ID $RUNNER_WORKTREE $(pwd)"; echo warned >&2`}
	copied, err := Apply(t.Context(), w, []string{".secret"}, from, to, to, log, "t_x")
	if err != nil {
		t.Fatal(err)
	}
	checkApplied(t, from, to, copied)
	b, _ := os.ReadFile(log)
	for _, want := range []string{"runner: worktree set-up: 1 file(s)", `runner: worktree set-up: ["sh" "-c"`, "t_x " + to + " " + to + "\n", "warned\n"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the log lacks %q:\n%s", want, b)
		}
	}
}

// TestApplyCommandFails: a command that fails, or outlasts its bound,
// fails the set-up, saying where its output is.
func TestApplyCommandFails(t *testing.T) {
	for _, tc := range []struct {
		run     []string
		timeout time.Duration
		want    string
	}{
		{[]string{"sh", "-c", "exit 3"}, 0, "exit status 3"},
		{[]string{"sleep", "30"}, 100 * time.Millisecond, "did not finish within 100ms"},
		{[]string{"/no/such/program"}, 0, "/no/such/program"},
	} {
		w := &config.WorktreeSetup{Run: tc.run, RunTimeout: profile.Duration{Duration: tc.timeout}}
		dir := t.TempDir()
		_, err := Apply(t.Context(), w, nil, dir, dir, dir, filepath.Join(dir, "log"), "t_x")
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "'runner logs t_x'") {
			t.Errorf("%q: %v; want it failed with %q and where its output is", tc.run, err, tc.want)
		}
	}
}

// TestApplyThere: the same set-up through a host's scripts, each one
// round trip, and the command run there through ssh (a real sshd), its
// output brought to the log here.
func TestApplyThere(t *testing.T) {
	from, to, w := checkout(t)
	h := &localHost{}
	copied, err := ApplyThere(t.Context(), w, []string{".secret"}, h, from, to, to, filepath.Join(t.TempDir(), "log"), "t_x")
	if err != nil {
		t.Fatal(err)
	}
	checkApplied(t, from, to, copied)
	if h.ran != 3 {
		t.Errorf("%d round trips, want 3 (copies, links, .worktreeinclude)", h.ran)
	}

	srv := sshtest.Start(t)
	h.tr = &transport.SSH{Destination: sshtest.Alias, Args: srv.SSHArgs(), ControlDir: t.TempDir()}
	if err := h.tr.Prepare(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.tr.Exit() })
	log := filepath.Join(t.TempDir(), "log")
	w = &config.WorktreeSetup{Run: []string{"sh", "-c", `echo "$RUNNER_TASK_ID $RUNNER_WORKTREE $(pwd)"; echo warned >&2`}}
	if _, err := ApplyThere(t.Context(), w, nil, h, from, to, to, log, "t_x"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(log)
	for _, want := range []string{"on host box\n", "t_x " + to + " " + to + "\n", "warned\n"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the log lacks %q:\n%s", want, b)
		}
	}
	w.Run = []string{"sh", "-c", "exit 4"}
	if _, err := ApplyThere(t.Context(), w, nil, h, from, to, to, log, "t_x"); err == nil || !strings.Contains(err.Error(), "exit status 4") {
		t.Errorf("a command failing there: %v", err)
	}
}
