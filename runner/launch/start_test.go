package launch

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/internal/importcheck"
	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/deps"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/reconcile"
	"github.com/runner-cli/runner/runner/record"
	"github.com/runner-cli/runner/runner/settings"
	wtsetup "github.com/runner-cli/runner/runner/worktree/setup"
	"github.com/runner-cli/runner/state"
)

func TestImports(t *testing.T) {
	importcheck.Only(t, ".", "gitsnap", "internal/clock", "internal/textutil", "runner/config", "runner/deps", "runner/fault",
		"runner/placement", "runner/profile", "runner/record", "runner/settings", "runner/worktree/setup", "state")
}

// fakeMachine launches a pane that is only a name, and says what was done.
type fakeMachine struct {
	did     []string
	paneErr error
}

func (f *fakeMachine) SnapshotDir(_ context.Context, t *state.Task, _ *settings.Start) (string, error) {
	return t.Dir, nil
}
func (f *fakeMachine) Git(ctx context.Context, _ *state.Task) (context.Context, error) {
	return ctx, nil
}
func (f *fakeMachine) Files(string) error {
	f.did = append(f.did, "files")
	return nil
}
func (f *fakeMachine) KeptIndex(string) string { return "" }
func (f *fakeMachine) Pane(context.Context, *state.Task, *profile.Profile, *settings.Start) (*Pane, error) {
	f.did = append(f.did, "pane")
	if f.paneErr != nil {
		return nil, f.paneErr
	}
	return &Pane{ID: "%9", Record: func(t *state.Task) { t.Tmux.Pane = "%9" },
		Close: func(context.Context) error { f.did = append(f.did, "close"); return nil }}, nil
}
func (f *fakeMachine) Worktree(context.Context, *state.Task, *gitsnap.Snapshot, *config.WorktreeSetup) (wtsetup.Made, error) {
	return wtsetup.Made{}, errors.New("no worktree here")
}

// queued records a queued task in a folder that is no repository.
func queued(t *testing.T, status state.Status) (record.Book, *state.Task) {
	t.Helper()
	st, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	book := record.Book{Store: st, Now: func() time.Time { return now }, Procs: reconcile.LiveProcs{}}
	task := &state.Task{ID: "t_start001", Dir: t.TempDir(), Text: "do it", Created: now}
	_ = task.SetStatus(status, now, "test")
	if err := book.UpdateDurably(t.Context(), "test", func(s *state.State) error { s.Tasks[task.ID] = task; return nil }); err != nil {
		t.Fatal(err)
	}
	return book, task
}

// TestStart: in a shared tree the pane starts beside the snapshot and is
// recorded with the task starting, in one write; a task that needs a
// snapshot and cannot have one fails with a usage error, its pane closed;
// a task cancelled meanwhile is left alone, its pane closed.
func TestStart(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status state.Status
		spec   settings.Start
		did    string
		want   state.Status
		reason string
		err    func(error) bool
	}{
		{name: "shared tree", status: state.StatusQueued, did: "files pane", want: state.StatusStarting, reason: "no snapshot: not a git repository"},
		{name: "snapshot required", status: state.StatusQueued, spec: settings.Start{RequireSnapshot: true}, did: "files pane close",
			want: state.StatusFailed, reason: "no snapshot", err: func(err error) bool { return errors.Is(err, fault.ErrUsage) }},
		{name: "cancelled meanwhile", status: state.StatusCancelled, did: "files pane close", want: state.StatusCancelled,
			err: func(err error) bool { var left *deps.LeftQueueError; return errors.As(err, &left) }},
		{name: "sandboxed: the pane after the snapshot", status: state.StatusQueued, spec: settings.Start{Sandbox: &settings.Sandbox{}},
			did: "files pane", want: state.StatusStarting, reason: "no snapshot"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			book, task := queued(t, tc.status)
			m := &fakeMachine{}
			spec := tc.spec
			err := Start(t.Context(), m, book, task, &profile.Profile{Name: "sim"}, &spec)
			if tc.err == nil && err != nil || tc.err != nil && !tc.err(err) {
				t.Fatalf("Start: %v", err)
			}
			if got := strings.Join(m.did, " "); got != tc.did {
				t.Errorf("did %q, want %q", got, tc.did)
			}
			rec, err := book.Task(t.Context(), task.ID)
			if err != nil {
				t.Fatal(err)
			}
			if rec.Status != tc.want || !strings.Contains(rec.LastReason(), tc.reason) {
				t.Errorf("recorded %s (%s), want %s (%s)", rec.Status, rec.LastReason(), tc.want, tc.reason)
			}
			if tc.want == state.StatusStarting && rec.Tmux.Pane != "%9" {
				t.Errorf("the pane %q was not recorded", rec.Tmux.Pane)
			}
		})
	}
}

// TestBegin: in a shared tree Begin returns with the pane launched and the
// task still queued, nothing of the pane recorded; Finish records it
// starting with its pane, once (a second Finish does nothing more); a
// start that fails in Finish is recorded failed, its pane closed, and a
// second Finish returns the same error.
func TestBegin(t *testing.T) {
	book, task := queued(t, state.StatusQueued)
	m := &fakeMachine{}
	st, err := Begin(t.Context(), m, book, task, &profile.Profile{Name: "sim"}, &settings.Start{})
	if err != nil {
		t.Fatal(err)
	}
	if st.PaneID != "%9" {
		t.Errorf("PaneID %q, want %%9", st.PaneID)
	}
	if rec, _ := book.Task(t.Context(), task.ID); rec.Status != state.StatusQueued || rec.Tmux.Pane != "" {
		t.Errorf("before Finish: recorded %s with pane %q, want queued without one", rec.Status, rec.Tmux.Pane)
	}
	for range 2 {
		if err := st.Finish(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	rec, _ := book.Task(t.Context(), task.ID)
	if rec.Status != state.StatusStarting || rec.Tmux.Pane != "%9" || len(rec.History) != 2 {
		t.Errorf("after Finish: %s, pane %q, %d changes; want starting, %%9, 2", rec.Status, rec.Tmux.Pane, len(rec.History))
	}

	book, task = queued(t, state.StatusQueued)
	m = &fakeMachine{}
	st, err = Begin(t.Context(), m, book, task, &profile.Profile{Name: "sim"}, &settings.Start{RequireSnapshot: true})
	if err != nil {
		t.Fatal(err)
	}
	first := st.Finish(t.Context())
	if !errors.Is(first, fault.ErrUsage) || st.Finish(t.Context()) != first {
		t.Errorf("Finish: %v, then %v; want the same usage error", first, st.Finish(t.Context()))
	}
	if got := strings.Join(m.did, " "); got != "files pane close" {
		t.Errorf("did %q, want the pane closed", got)
	}
	if rec, _ := book.Task(t.Context(), task.ID); rec.Status != state.StatusFailed {
		t.Errorf("recorded %s, want failed", rec.Status)
	}
}

// TestBeginChange: the record of the start, taken as a change (Change) and
// written by the caller (Recorded), is not written again by Finish.
func TestBeginChange(t *testing.T) {
	book, task := queued(t, state.StatusQueued)
	st, err := Begin(t.Context(), &fakeMachine{}, book, task, &profile.Profile{Name: "sim"}, &settings.Start{})
	if err != nil {
		t.Fatal(err)
	}
	<-st.Snapped()
	change, err := st.Change(t.Context())
	if err != nil || change == nil {
		t.Fatalf("Change: %v (change %v)", err, change != nil)
	}
	if err := book.UpdateTaskDurably(t.Context(), "test", task.ID, change); err != nil {
		t.Fatal(err)
	}
	st.Recorded()
	if err := st.Finish(t.Context()); err != nil {
		t.Fatal(err)
	}
	rec, _ := book.Task(t.Context(), task.ID)
	if rec.Status != state.StatusStarting || rec.Tmux.Pane != "%9" || len(rec.History) != 2 {
		t.Errorf("recorded %s, pane %q, %d changes; want starting once, with the pane", rec.Status, rec.Tmux.Pane, len(rec.History))
	}
}

// gitRepo makes a repository with one commit in a new folder.
func gitRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"commit", "-q", "--allow-empty", "-m", "init"}} {
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

// TestBeginCommitsBeside: in a shared tree the snapshot is captured before
// the start is recorded, and committed beside what follows (Committed):
// the snapshot holds the tree as it was at the capture, not a file
// written after it; the ref the record names exists once Committed
// returns. A commit that fails (its ref taken already) leaves the task
// without a snapshot: the record's ref is cleared, the failure journaled,
// and Committed says so, each time.
func TestBeginCommitsBeside(t *testing.T) {
	for _, taken := range []bool{false, true} {
		book, task := queued(t, state.StatusQueued)
		task.Dir = gitRepo(t)
		if err := os.WriteFile(filepath.Join(task.Dir, "before"), []byte("found\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		ref := gitsnap.RefPrefix + task.ID
		if taken {
			cmd := exec.Command("git", "-C", task.Dir, "update-ref", ref, "HEAD")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
		}
		st, err := Begin(t.Context(), &fakeMachine{}, book, task, &profile.Profile{Name: "sim"}, &settings.Start{})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Finish(t.Context()); err != nil {
			t.Fatal(err)
		}
		// Written after the capture (the start is recorded): not in the
		// snapshot, whenever its commit is written.
		if err := os.WriteFile(filepath.Join(task.Dir, "after"), []byte("the task's\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if rec, _ := book.Task(t.Context(), task.ID); rec.SnapshotRef != ref {
			t.Fatalf("taken %v: the start recorded snapshot %q, want %q", taken, rec.SnapshotRef, ref)
		}
		for range 2 {
			err = st.Committed(t.Context())
			if taken != (err != nil) {
				t.Fatalf("taken %v: Committed: %v", taken, err)
			}
		}
		rec, _ := book.Task(t.Context(), task.ID)
		if taken {
			if rec.SnapshotRef != "" || !errors.Is(err, gitsnap.ErrExists) {
				t.Errorf("a failed commit: the record names %q (want none), error %v", rec.SnapshotRef, err)
			}
			journal, _ := os.ReadFile(filepath.Join(book.Store.Dir(), "journal.jsonl"))
			if n := strings.Count(string(journal), "its commit failed after its capture"); n != 1 {
				t.Errorf("the failed commit is journaled %d times, want once:\n%s", n, journal)
			}
			continue
		}
		out, err := exec.Command("git", "-C", task.Dir, "ls-tree", "--name-only", ref).CombinedOutput()
		if err != nil {
			t.Fatalf("the snapshot's ref: %v: %s", err, out)
		}
		if got := strings.Fields(string(out)); !slices.Equal(got, []string{"before"}) {
			t.Errorf("the snapshot holds %v, want only the file found at the start", got)
		}
	}
}

// TestFailedStartLeavesNoHalfSnapshot: a start that fails after its
// snapshot was captured (the pane cannot be launched; the task cancelled
// before its start is recorded) returns only once the snapshot's commit
// is written: no private index is left in the temporary directory for a
// process about to exit, and the ref exists.
func TestFailedStartLeavesNoHalfSnapshot(t *testing.T) {
	for _, how := range []string{"pane", "cancelled"} {
		tmp := t.TempDir()
		t.Setenv("TMPDIR", tmp)
		status := state.StatusQueued
		if how == "cancelled" {
			status = state.StatusCancelled
		}
		book, task := queued(t, status)
		task.Dir = gitRepo(t)
		m := &fakeMachine{}
		if how == "pane" {
			m.paneErr = errors.New("no tmux")
		}
		st, err := Begin(t.Context(), m, book, task, &profile.Profile{Name: "sim"}, &settings.Start{})
		if err == nil {
			err = st.End(t.Context())
		}
		if err == nil {
			t.Fatalf("%s: the start did not fail", how)
		}
		if left, _ := filepath.Glob(filepath.Join(tmp, "gitsnap-*")); len(left) > 0 {
			t.Errorf("%s: the snapshot's private index is left behind: %v", how, left)
		}
		if out, err := exec.Command("git", "-C", task.Dir, "rev-parse", "--verify", "-q", gitsnap.RefPrefix+task.ID).CombinedOutput(); err != nil {
			t.Errorf("%s: no snapshot ref once the start returned: %v: %s", how, err, out)
		}
	}
}
