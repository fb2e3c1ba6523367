package worktree

import (
	"errors"
	"strings"
	"testing"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/state"
)

// TestDiffThroughGit: a task's diff is its snapshot against where it
// works, on its machine, as asked; a task without a snapshot is bad
// input and asks git nothing; an unknown task, a host gone and git's
// failure are errors that name what failed.
func TestDiffThroughGit(t *testing.T) {
	st := state.New()
	wt := doneTask("t_aaaa0001")
	wt.SnapshotRef = gitsnap.RefPrefix + wt.ID
	there := doneTask("t_aaaa0002")
	there.SnapshotRef, there.Tmux.Host = gitsnap.RefPrefix+there.ID, "gone"
	bare := doneTask("t_aaaa0003")
	st.Tasks[wt.ID], st.Tasks[there.ID], st.Tasks[bare.ID] = wt, there, bare
	git := &fakeGit{diff: &gitsnap.DiffResult{Stat: " a.txt | 1 +\n"}}
	d, _, _ := fakeGitDeps(t, st, git)
	ctx := t.Context()

	got, res, err := Diff(ctx, d, "t_aaaa0001", gitsnap.DiffOptions{Patch: true})
	if err != nil || got != wt || res != git.diff || strings.Join(git.calls, ";") != "diff /wt/t_aaaa0001 t_aaaa0001 patch=true" {
		t.Errorf("Diff = %v, %+v, %v; calls %q", got, res, err, git.calls)
	}
	git.calls = nil
	if _, _, err := Diff(ctx, d, "t_aaaa0003", gitsnap.DiffOptions{}); !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), "task t_aaaa0003 has no snapshot") || len(git.calls) != 0 {
		t.Errorf("no snapshot: %v; calls %q", err, git.calls)
	}
	if _, _, err := Diff(ctx, d, "t_aaaa0002", gitsnap.DiffOptions{}); err == nil || !strings.Contains(err.Error(), "host gone") || len(git.calls) != 0 {
		t.Errorf("a host gone: %v; calls %q", err, git.calls)
	}
	if _, _, err := Diff(ctx, d, "t_nothing", gitsnap.DiffOptions{}); err == nil {
		t.Error("an unknown task's diff")
	}
	git.diffErr = gitsnap.ErrNotRepo
	if _, _, err := Diff(ctx, d, "t_aaaa0001", gitsnap.DiffOptions{}); !errors.Is(err, gitsnap.ErrNotRepo) || !strings.HasPrefix(err.Error(), "diff t_aaaa0001 in /wt/t_aaaa0001: ") {
		t.Errorf("git fails: %v", err)
	}
}

// TestDiffWaitsForTheSnapshotsCommit: a task at work whose snapshot's
// commit is still being written (a foreground task's record names it
// from its start) gets its diff once the commit is there; a task that
// ended has its snapshot committed, and one not found is an error at
// once.
func TestDiffWaitsForTheSnapshotsCommit(t *testing.T) {
	st := state.New()
	running := doneTask("t_aaaa0001")
	running.Status, running.SnapshotRef = state.StatusRunning, gitsnap.RefPrefix+running.ID
	ended := doneTask("t_aaaa0002")
	ended.SnapshotRef = gitsnap.RefPrefix + ended.ID
	st.Tasks[running.ID], st.Tasks[ended.ID] = running, ended
	git := &fakeGit{diff: &gitsnap.DiffResult{Stat: " a.txt | 1 +\n"}, diffMissing: 3}
	d, _, _ := fakeGitDeps(t, st, git)
	if _, res, err := Diff(t.Context(), d, running.ID, gitsnap.DiffOptions{}); err != nil || res != git.diff || len(git.calls) != 4 {
		t.Errorf("a task at work, its snapshot committed on the fourth look: %+v, %v; calls %q", res, err, git.calls)
	}
	git.calls, git.diffMissing = nil, 3
	if _, _, err := Diff(t.Context(), d, ended.ID, gitsnap.DiffOptions{}); !errors.Is(err, gitsnap.ErrNotFound) || len(git.calls) != 1 {
		t.Errorf("an ended task without its snapshot: %v; calls %q", err, git.calls)
	}
}
