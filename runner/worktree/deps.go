package worktree

import (
	"context"
	"time"

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

// Deps is what listing and merging worktrees use, built by cmd/runner
// from its Env: the store and the task record, the clock and warnings,
// git's place for a task or a host, and package runner's reconciliation
// as functions. Every field is required.
type Deps struct {
	Store Store
	// Record writes the journal (Env.Record).
	Record Journal
	Now    func() time.Time
	// Warn says what went wrong on the side (Env.Warn).
	Warn func(format string, args ...any)
	// Reconcile reads the state after recording what became of the
	// tasks nothing supervises (runner.Reconcile); GetTask is one task of
	// it by id or unique prefix (runner.GetTask).
	Reconcile func(ctx context.Context) (*state.State, error)
	GetTask   func(ctx context.Context, ref string) (*state.Task, error)
	// GitContext and GitOn are ctx for gitsnap calls on a task's work
	// tree, and on a registered host ("" for this machine)
	// (Env.GitContext, hosts.Pool.GitOn).
	GitContext func(ctx context.Context, t *state.Task) (context.Context, error)
	GitOn      func(ctx context.Context, host string) (context.Context, error)
}
