package worktree

import (
	"context"
	"time"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/state"
)

// Store is the state listing and merging read and change: a
// *state.Store.
type Store interface {
	// TaskText is the task's whole text (its record's may be cut).
	TaskText(t *state.Task) (string, error)
	Update(ctx context.Context, fn func(*state.State) error) error
}

// Journal records an event about a task: a record.Book.
type Journal interface {
	Journal(ctx context.Context, t *state.Task, kind, msg string)
}

// Core is what listing and merging ask of package runner (open.Core):
// Reconcile reads the state after recording what became of the tasks
// nothing supervises; GetTask is one task of it by id or unique prefix.
type Core interface {
	Reconcile(ctx context.Context) (*state.State, error)
	GetTask(ctx context.Context, ref string) (*state.Task, error)
}

// Git is the git that listing, merging and forecasting run, on the
// machine ctx names (Deps.GitContext, Deps.GitOn): package gitsnap's
// functions (Gitsnap), a fake in the tests.
type Git interface {
	// Worktrees are the worktrees of dir's repository on branches
	// starting with prefix.
	Worktrees(ctx context.Context, dir, prefix string) ([]gitsnap.Worktree, error)
	// Snapshot is task id's snapshot in dir's repository.
	Snapshot(ctx context.Context, dir, id string) (*gitsnap.Snapshot, error)
	// BranchMerged says whether branch's commits since base are in dir's
	// current branch; Dirty whether the work tree at dir has changes.
	BranchMerged(ctx context.Context, dir, branch, base string) (bool, error)
	Dirty(ctx context.Context, dir string) (bool, error)
	// Commit commits what is left in the work tree at dir.
	Commit(ctx context.Context, dir string, opts gitsnap.CommitOptions) (*gitsnap.CommitResult, error)
	// Merge merges branch (checked out at wt) into dir's branch.
	Merge(ctx context.Context, dir, wt, branch string, opts gitsnap.MergeOptions) (*gitsnap.MergeResult, error)
	// MergeForecast forecasts merging branches into into.
	MergeForecast(ctx context.Context, dir, into string, branches []gitsnap.ForecastBranch) (*gitsnap.Forecast, error)
	// Diff compares task id's snapshot with the work tree at dir.
	Diff(ctx context.Context, dir, id string, opts gitsnap.DiffOptions) (*gitsnap.DiffResult, error)
}

// Gitsnap is the Git of package gitsnap.
type Gitsnap struct{}

var _ Git = Gitsnap{}

// Worktrees is gitsnap.Worktrees.
func (Gitsnap) Worktrees(ctx context.Context, dir, prefix string) ([]gitsnap.Worktree, error) {
	return gitsnap.Worktrees(ctx, dir, prefix)
}

// Snapshot is gitsnap.Get.
func (Gitsnap) Snapshot(ctx context.Context, dir, id string) (*gitsnap.Snapshot, error) {
	return gitsnap.Get(ctx, dir, id)
}

// BranchMerged is gitsnap.BranchMerged.
func (Gitsnap) BranchMerged(ctx context.Context, dir, branch, base string) (bool, error) {
	return gitsnap.BranchMerged(ctx, dir, branch, base)
}

// Dirty is gitsnap.Dirty.
func (Gitsnap) Dirty(ctx context.Context, dir string) (bool, error) { return gitsnap.Dirty(ctx, dir) }

// Commit is gitsnap.Commit.
func (Gitsnap) Commit(ctx context.Context, dir string, opts gitsnap.CommitOptions) (*gitsnap.CommitResult, error) {
	return gitsnap.Commit(ctx, dir, opts)
}

// Merge is gitsnap.Merge.
func (Gitsnap) Merge(ctx context.Context, dir, wt, branch string, opts gitsnap.MergeOptions) (*gitsnap.MergeResult, error) {
	return gitsnap.Merge(ctx, dir, wt, branch, opts)
}

// MergeForecast is gitsnap.MergeForecast.
func (Gitsnap) MergeForecast(ctx context.Context, dir, into string, branches []gitsnap.ForecastBranch) (*gitsnap.Forecast, error) {
	return gitsnap.MergeForecast(ctx, dir, into, branches)
}

// Deps is what listing and merging worktrees use, built by cmd/runner
// from its Env: the store and the task record, the clock and warnings,
// git and its place for a task or a host, and what they ask of package
// runner (Core). Every field is required but Git.
type Deps struct {
	Store Store
	// Record writes the journal (Env.Record).
	Record Journal
	Now    func() time.Time
	// Warn says what went wrong on the side (Env.Warn).
	Warn func(format string, args ...any)
	// Core is what they ask of package runner (open.Core).
	Core
	// Git runs git (nil: package gitsnap's, Gitsnap).
	Git Git
	// GitContext and GitOn are ctx for gitsnap calls on a task's work
	// tree, and on a registered host ("" for this machine)
	// (Env.GitContext, hosts.Pool.GitOn).
	GitContext func(ctx context.Context, t *state.Task) (context.Context, error)
	GitOn      func(ctx context.Context, host string) (context.Context, error)
}

// git is d.Git, gitsnap's when none is given.
func (d Deps) git() Git {
	if d.Git == nil {
		return Gitsnap{}
	}
	return d.Git
}

// Diff is gitsnap.Diff.
func (Gitsnap) Diff(ctx context.Context, dir, id string, opts gitsnap.DiffOptions) (*gitsnap.DiffResult, error) {
	return gitsnap.Diff(ctx, dir, id, opts)
}
