package changes

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/statetest"
	"github.com/runner-cli/runner/runner/notice"
	"github.com/runner-cli/runner/runner/record"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// livePanes is a tmux server on which every pane lives and is its
// window's task.
type livePanes struct{}

func (livePanes) Pane(_ context.Context, pane string) (tmuxctl.PaneInfo, error) {
	return tmuxctl.PaneInfo{ID: pane}, nil
}

func (livePanes) ShowOption(context.Context, string, string) (string, error) {
	return "", tmuxctl.ErrNotFound
}

// gitIn runs git in dir for a test's set-up.
func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// worktreeTask makes a work tree of repo on a branch of its own for task
// id, running, with its snapshot taken.
func worktreeTask(t *testing.T, repo, id string) *state.Task {
	t.Helper()
	dir := filepath.Join(filepath.Dir(repo), id)
	gitIn(t, repo, "worktree", "add", "-q", "-b", "runner/"+id, dir)
	snap, err := gitsnap.Take(t.Context(), dir, gitsnap.Options{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	x := statetest.Supervised(id, "", state.StatusRunning)
	x.Dir, x.Branch, x.SnapshotRef = dir, "runner/"+id, snap.Ref
	return x
}

// TestTrackTellsAnOverlap: two tasks in work trees of one repository
// that change the same file are told of it once each, as a message from
// runner, offered to their running turns; what did not change records
// nothing more, and a file one alone changed is not told.
func TestTrackTellsAnOverlap(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	repo := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	gitIn(t, repo, "init", "-q", "-b", "main")
	for _, f := range []string{"a.go", "b.go"} {
		if err := os.WriteFile(filepath.Join(repo, f), []byte("package a\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitIn(t, repo, "add", ".")
	gitIn(t, repo, "commit", "-qm", "first")
	a, b := worktreeTask(t, repo, "t_aaaaaaaa"), worktreeTask(t, repo, "t_bbbbbbbb")
	store := statetest.WithTasks(t, a, b)
	var said, started []string
	d := Deps{Store: store, Book: record.Book{Store: store, Now: clock.Now}, Now: clock.Now,
		Say:        func(f string, args ...any) { said = append(said, fmt.Sprintf(f, args...)) },
		Git:        func(ctx context.Context, _ *state.Task) (context.Context, error) { return ctx, nil },
		PaneClient: func(context.Context, *state.Task) (Panes, error) { return livePanes{}, nil },
		StartDeliveries: func(_ context.Context, ids []string) []error {
			started = append(started, ids...)
			return nil
		}}
	change := func(x *state.Task, files ...string) {
		for _, f := range files {
			if err := os.WriteFile(filepath.Join(x.Dir, f), []byte("package a // "+x.ID+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	change(a, "a.go")
	change(b, "a.go", "b.go")
	for _, id := range []string{a.ID, b.ID, b.ID, a.ID} {
		if err := d.Track(t.Context(), id); err != nil {
			t.Fatalf("Track(%s): %v", id, err)
		}
	}
	st := statetest.Read(t, store)
	if got := st.Task(b.ID).Changes; got == nil || !slices.Equal(got.Files, []string{"a.go", "b.go"}) || got.Count != 2 || got.Shared {
		t.Errorf("b's changes %+v; want a.go and b.go on its own branch", got)
	}
	var msgs []string
	for _, m := range st.Messages {
		if m.From != state.SenderRunner || m.Type != state.MessageUpdate || m.Status != state.MessagePending || !strings.Contains(m.Text, "a.go") || strings.Contains(m.Text, "b.go") {
			t.Errorf("message %+v; want a pending update from runner about a.go alone", m)
		}
		msgs = append(msgs, m.To)
	}
	slices.Sort(msgs)
	if !slices.Equal(msgs, []string{a.ID, b.ID}) {
		t.Errorf("told %v; want each task once", msgs)
	}
	for _, x := range []*state.Task{a, b} {
		if ov := st.Task(x.ID).Overlaps; len(ov) != 1 || !slices.Equal(ov[0].Files, []string{"a.go"}) {
			t.Errorf("%s's overlaps %+v; want a.go with the other", x.ID, ov)
		}
		if ns := notice.List(notice.Dir(store.TaskFile(state.FileHookDir, x.ID))); len(ns) != 1 {
			t.Errorf("%s's running turn was offered %d notices, want 1", x.ID, len(ns))
		}
	}
	if len(started) != 0 || len(said) != 0 {
		t.Errorf("started %v, said %q; want nothing for two running tasks", started, said)
	}
}

// TestLookWithoutASnapshot: a task outside git has nothing to track; a
// task whose git cannot be reached, or that is gone, is an error.
func TestLookWithoutASnapshot(t *testing.T) {
	x := statetest.Supervised("t_aaaaaaaa", "", state.StatusRunning)
	y := statetest.Supervised("t_bbbbbbbb", "", state.StatusRunning)
	y.Dir, y.SnapshotRef = "/src/app", "refs/runner/snapshots/t_bbbbbbbb"
	store := statetest.WithTasks(t, x, y)
	down := errors.New("host h1 unreachable")
	d := Deps{Store: store, Book: record.Book{Store: store, Now: clock.Now}, Now: clock.Now,
		Git: func(context.Context, *state.Task) (context.Context, error) { return nil, down }}
	if err := d.Track(t.Context(), x.ID); err != nil {
		t.Errorf("Track of a task outside git: %v", err)
	}
	if c := statetest.Read(t, store).Task(x.ID).Changes; c != nil {
		t.Errorf("changes recorded for a task outside git: %+v", c)
	}
	if err := d.Track(t.Context(), y.ID); !errors.Is(err, down) {
		t.Errorf("Track with git unreachable: %v, want %v", err, down)
	}
	if _, err := d.Look(t.Context(), "t_gone"); err == nil {
		t.Error("Look of a task that is not there: no error")
	}
}

func TestMeets(t *testing.T) {
	for _, tc := range []struct {
		a, b []string
		want bool
	}{
		{nil, nil, false},
		{[]string{"a"}, nil, false},
		{[]string{"a", "c"}, []string{"b", "c"}, true},
		{[]string{"a", "c"}, []string{"b", "d"}, false},
		{[]string{"z"}, []string{"a", "b", "z"}, true},
		{[]string{"dir/a"}, []string{"dir"}, false},
	} {
		if got := meets(tc.a, tc.b); got != tc.want || meets(tc.b, tc.a) != tc.want {
			t.Errorf("meets(%q, %q) = %v, want %v both ways", tc.a, tc.b, got, tc.want)
		}
	}
}
