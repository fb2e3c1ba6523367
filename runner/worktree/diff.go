package worktree

import (
	"context"
	"fmt"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/snapshots"
	"github.com/runner-cli/runner/state"
)

// Diff is what task ref changed since its snapshot where it works (its
// own worktree, or its project's directory; on its host for a task
// there), as opts asks (`runner diff`), with the task. A task without a
// snapshot is bad input (exit 2). A task at work whose snapshot's commit
// is under way is waited for (snapshots.Committing).
func Diff(ctx context.Context, d Deps, ref string, opts gitsnap.DiffOptions) (*state.Task, *gitsnap.DiffResult, error) {
	t, err := d.GetTask(ctx, ref)
	if err != nil {
		return nil, nil, err
	}
	if t.SnapshotRef == "" {
		return t, nil, fault.Usagef("task %s has no snapshot (its directory %s is not in a git repository, or the snapshot failed: see 'runner status %s')", t.ID, t.Dir, t.ID)
	}
	gctx, err := d.GitContext(ctx, t)
	if err != nil {
		return t, nil, err
	}
	res, err := d.git().Diff(gctx, t.Dir, t.ID, opts)
	err = snapshots.Committing(ctx, err, !t.Status.IsTerminal(), func() (err error) {
		res, err = d.git().Diff(gctx, t.Dir, t.ID, opts)
		return err
	})
	if err != nil {
		return t, nil, fmt.Errorf("diff %s in %s: %w", t.ID, t.Dir, err)
	}
	return t, res, nil
}
