package worktree

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/state"
)

// commitWait bounds Diff's wait for the commit of a task's snapshot.
const commitWait = 5 * time.Second

// Diff is what task ref changed since its snapshot where it works (its
// own worktree, or its project's directory; on its host for a task
// there), as opts asks (`runner diff`), with the task. A task without a
// snapshot is bad input (exit 2).
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
	// A foreground task's record names its snapshot from its start; the
	// snapshot's commit is written beside its first turn, and before any
	// end is recorded (launch.Started.Committed): a task at work waits
	// for it, a moment.
	for until := clock.Now().Add(commitWait); errors.Is(err, gitsnap.ErrNotFound) && !t.Status.IsTerminal() && clock.Now().Before(until); {
		select {
		case <-ctx.Done():
			return t, nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		res, err = d.git().Diff(gctx, t.Dir, t.ID, opts)
	}
	if err != nil {
		return t, nil, fmt.Errorf("diff %s in %s: %w", t.ID, t.Dir, err)
	}
	return t, res, nil
}
