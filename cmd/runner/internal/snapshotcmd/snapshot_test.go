package snapshotcmd

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runner-cli/runner/cmd/runner/internal/cmdkit"
	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/runner"
	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/spf13/cobra"
)

// repo makes a hermetic git repository with one commit.
func repo(t *testing.T) string {
	t.Helper()
	for k, v := range map[string]string{
		"HOME": t.TempDir(), "GIT_CONFIG_GLOBAL": os.DevNull, "GIT_CONFIG_NOSYSTEM": "1",
		"GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com",
		"GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.com",
		"GIT_CEILING_DIRECTORIES": filepath.Dir(os.TempDir()),
	} {
		t.Setenv(k, v)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, argv := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "init"}} {
		cmd := exec.Command("git", argv...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", argv, err, out)
		}
	}
	return dir
}

// fake is a factory recording the root's checks and the environments
// opened (for --host), with a terminal or not.
type fake struct {
	f              *cmdkit.Factory
	b              *cmdkit.Buffers
	checks, envs   int
	terminal       bool
	checkErr, envE error
}

func newFake(stdin string) *fake {
	x := &fake{}
	x.f, x.b = cmdkit.Fake(stdin, nil)
	x.f.Checks = func(*cobra.Command) error { x.checks++; return x.checkErr }
	x.f.Env = func(bool) (*runner.Env, *config.Config, error) { x.envs++; return nil, nil, x.envE }
	x.f.IsTerminal = func(io.Reader) bool { return x.terminal }
	return x
}

func (x *fake) run(t *testing.T, args ...string) error {
	t.Helper()
	return x.b.Run(t.Context(), NewCmd(x.f), args...)
}

// TestSnapshotLife takes, lists, shows, diffs, restores and prunes
// snapshots of a real repository, in words and JSON.
func TestSnapshotLife(t *testing.T) {
	dir := repo(t)
	x := newFake("")
	if err := x.run(t, "take", dir, "--label", "before", "--id", "s_life0001", "--json"); err != nil {
		t.Fatalf("take: %v", err)
	}
	var s gitsnap.Snapshot
	if err := json.Unmarshal(x.b.Out.Bytes(), &s); err != nil || s.ID != "s_life0001" || s.Label != "before" || !x.b.JSON {
		t.Fatalf("take --json: %v %q", err, x.b.Out.String())
	}
	if x.checks != 1 || x.envs != 0 {
		t.Errorf("the root's checks ran %d times, environments opened %d; want 1 and 0", x.checks, x.envs)
	}
	if err := os.WriteFile(filepath.Join(dir, "b.txt"), []byte("b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := x.run(t, "take", "-C", dir, "--id", "s_life0002"); err != nil || !strings.Contains(x.b.Out.String(), "s_life0002") {
		t.Errorf("take -C: %v %q", err, x.b.Out.String())
	}
	if err := x.run(t, "list", dir); err != nil || !strings.Contains(x.b.Out.String(), "s_life0001") || !strings.Contains(x.b.Out.String(), "before") {
		t.Errorf("list: %v %q", err, x.b.Out.String())
	}
	var list []gitsnap.Snapshot
	if err := x.run(t, "list", "-C", dir, "--json"); err != nil || json.Unmarshal(x.b.Out.Bytes(), &list) != nil || len(list) != 2 {
		t.Errorf("list --json: %v %q", err, x.b.Out.String())
	}
	if err := x.run(t, "show", "-C", dir, "s_life0001"); err != nil || !strings.Contains(x.b.Out.String(), "s_life0001") {
		t.Errorf("show: %v %q", err, x.b.Out.String())
	}
	if err := x.run(t, "show", "-C", dir, "s_life0001", "--json"); err != nil || !strings.Contains(x.b.Out.String(), `"label": "before"`) {
		t.Errorf("show --json: %v %q", err, x.b.Out.String())
	}
	if err := x.run(t, "diff", "-C", dir, "s_life0001"); err != nil || !strings.Contains(x.b.Out.String(), "+b") {
		t.Errorf("diff: %v %q", err, x.b.Out.String())
	}
	if err := x.run(t, "diff", "-C", dir, "s_life0001", "--stat"); err != nil || !strings.Contains(x.b.Out.String(), "b.txt") || strings.Contains(x.b.Out.String(), "+b") {
		t.Errorf("diff --stat: %v %q", err, x.b.Out.String())
	}
	if err := x.run(t, "diff", "-C", dir, "s_life0001", "--against", "s_life0002", "--json"); err != nil || !strings.Contains(x.b.Out.String(), "b.txt") {
		t.Errorf("diff --against --json: %v %q", err, x.b.Out.String())
	}
	if err := x.run(t, "restore", "-C", dir, "s_life0001", "--yes"); err != nil || !strings.Contains(x.b.Out.String(), "s_life0001") {
		t.Errorf("restore --yes: %v %q", err, x.b.Out.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "b.txt")); !os.IsNotExist(err) {
		t.Errorf("b.txt after the restore: %v", err)
	}
	if err := x.run(t, "prune", "-C", dir, "--older-than", "0d", "--json"); err != nil || !strings.Contains(x.b.Out.String(), "s_life0001") {
		t.Errorf("prune --json: %v %q", err, x.b.Out.String())
	}
	if err := x.run(t, "prune", "-C", dir); err != nil || x.b.Out.Len() == 0 {
		t.Errorf("prune: %v %q", err, x.b.Out.String())
	}
	if err := x.run(t, "list", dir, "--json"); err != nil || strings.TrimSpace(x.b.Out.String()) != "[]" {
		t.Errorf("list --json of none: %v %q", err, x.b.Out.String())
	}
}

// TestRestoreConfirm: without --yes a restore asks on the terminal and
// does nothing but on yes; with no terminal it refuses (a usage error).
func TestRestoreConfirm(t *testing.T) {
	dir := repo(t)
	x := newFake("")
	if err := x.run(t, "take", dir, "--id", "s_confirm1"); err != nil {
		t.Fatal(err)
	}
	later := filepath.Join(dir, "later.txt")
	if err := os.WriteFile(later, []byte("later\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := x.run(t, "restore", "-C", dir, "s_confirm1"); !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), "pass --yes") {
		t.Errorf("no terminal: %v, want a usage error saying --yes", err)
	}
	for _, answer := range []string{"n\n", "", "whatever\n"} {
		x := newFake(answer)
		x.terminal = true
		err := x.run(t, "restore", "-C", dir, "s_confirm1")
		if err == nil || errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), "nothing done") || !strings.Contains(x.b.ErrOut.String(), "[y/N]") {
			t.Errorf("answer %q: %v, asked %q; want a plain error, nothing done", answer, err, x.b.ErrOut.String())
		}
		if _, err := os.Stat(later); err != nil {
			t.Fatalf("answer %q restored anyway", answer)
		}
	}
	x = newFake("y\n")
	x.terminal = true
	if err := x.run(t, "restore", "-C", dir, "s_confirm1"); err != nil {
		t.Fatalf("answer y: %v", err)
	}
	if _, err := os.Stat(later); err == nil {
		t.Error("answer y restored nothing")
	}
}

func TestSnapshotErrors(t *testing.T) {
	dir := repo(t)
	notRepo := t.TempDir()
	x := newFake("")
	var fe *cmdkit.FlagError
	for _, tc := range []struct {
		args []string
		is   error
		want string
	}{
		{[]string{"take", notRepo}, gitsnap.ErrNotRepo, "git init"},
		{[]string{"show", "-C", dir, "s_nope0001"}, gitsnap.ErrNotFound, "no such snapshot"},
		{[]string{"take", dir, "--id", "bad/id"}, gitsnap.ErrBadID, "invalid snapshot ID"},
		{[]string{"prune", "-C", dir, "--older-than", "soon"}, fault.ErrUsage, "--older-than"},
	} {
		if err := x.run(t, tc.args...); !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %v with %q", tc.args, err, tc.is, tc.want)
		}
	}
	for _, args := range [][]string{{"show"}, {"take", "a", "b"}, {"prune", "x"}} {
		if err := x.run(t, args...); !errors.As(err, &fe) {
			t.Errorf("%v: %v, want a FlagError", args, err)
		}
	}
}

// TestSnapshotChecksAndHost: the root's checks are the family's hook's
// first word (an error stops the command), and --host opens the runner
// environment (its error is the command's).
func TestSnapshotChecksAndHost(t *testing.T) {
	dir := repo(t)
	x := newFake("")
	x.checkErr = fault.Usagef("not open to a sandboxed task")
	if err := x.run(t, "list", dir); !errors.Is(err, x.checkErr) || x.envs != 0 {
		t.Errorf("a failed check: %v (environments opened %d)", err, x.envs)
	}
	x = newFake("")
	x.envE = errors.New("no config")
	if err := x.run(t, "list", "--host", "b1", "/srv/repo"); !errors.Is(err, x.envE) || x.envs != 1 {
		t.Errorf("--host: %v (environments opened %d), want the environment's error", err, x.envs)
	}
}
