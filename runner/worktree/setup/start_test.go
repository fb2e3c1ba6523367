package setup

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/runner/hosts"
	"github.com/runner-cli/runner/state"
)

// TestStart: a task's worktree is made on its own branch at the snapshot
// (the user's uncommitted change in it), the project's subdirectory is
// where its agent starts, and the ignored files .worktreeinclude lists
// are copied and journaled.
func TestStart(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	repo := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main")
	writeFile(t, repo, "api/main.go", "package main\n")
	writeFile(t, repo, ".gitignore", ".env\n")
	writeFile(t, repo, ".worktreeinclude", ".env\n")
	git("add", ".")
	git("commit", "-qm", "first")
	writeFile(t, repo, "api/main.go", "package main // the user's change\n")
	writeFile(t, repo, ".env", "KEY=1\n")
	task := &state.Task{ID: "t_abcdefgh", Dir: filepath.Join(repo, "api")}
	snap, err := gitsnap.Take(t.Context(), repo, gitsnap.Options{ID: task.ID})
	if err != nil {
		t.Fatal(err)
	}
	var journal []string
	at := Where{Log: filepath.Join(t.TempDir(), "log"),
		Host:    func(context.Context) (*hosts.Conn, error) { t.Error("a task here asked for a host"); return nil, nil },
		Journal: func(_ context.Context, kind, text string) { journal = append(journal, kind+": "+text) }}
	made, err := Start(t.Context(), task, snap, nil, at)
	if err != nil {
		t.Fatal(err)
	}
	top := filepath.Dir(made.Dir)
	if made.Branch != "runner/t_abcdefgh" || filepath.Base(made.Dir) != "api" || filepath.Base(top) != task.ID {
		t.Errorf("made %+v; want the api folder of worktree %s on runner/%s", made, task.ID, task.ID)
	}
	if b, _ := os.ReadFile(filepath.Join(made.Dir, "main.go")); !strings.Contains(string(b), "the user's change") {
		t.Errorf("the worktree's main.go is %q; want the snapshot's, with the user's change", b)
	}
	if b, _ := os.ReadFile(filepath.Join(top, ".env")); string(b) != "KEY=1\n" {
		t.Errorf("the worktree's .env is %q; want it copied from the checkout", b)
	}
	if len(journal) != 1 || !strings.HasPrefix(journal[0], `worktree-include: 1 file(s), 6 bytes`) {
		t.Errorf("journaled %q", journal)
	}
	if _, err := Start(t.Context(), task, snap, nil, at); err == nil {
		t.Error("a second worktree of the same task was made")
	}
	onHost := *task
	onHost.ID, onHost.Tmux.Host = "t_onhost1", "box"
	down := errors.New("host box unreachable")
	at.Host = func(context.Context) (*hosts.Conn, error) { return nil, down }
	if _, err := Start(t.Context(), &onHost, snap, nil, at); !errors.Is(err, down) {
		t.Errorf("a host that cannot be reached: %v, want %v", err, down)
	}
}
