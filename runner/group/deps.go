package group

import (
	"context"
	"time"

	"github.com/runner-cli/runner/internal/transport"
	"github.com/runner-cli/runner/runner/ask"
	"github.com/runner-cli/runner/runner/worktree"
	"github.com/runner-cli/runner/state"
)

// Deps is what a group's operations use of runner, built by cmd/runner.
type Deps struct {
	Store *state.Store
	// Reconcile reads the state after recording what became of the tasks
	// nothing supervises (runner.Reconcile).
	Reconcile func(ctx context.Context) (*state.State, error)
	// Task reads one task's whole record.
	Task func(ctx context.Context, id string) (*state.Task, error)
	// Send delivers a follow-up turn to a candidate, supervised by a
	// process of its own (runner.Send, detached).
	Send func(ctx context.Context, id, text string) error
	// Ask runs shadows (ask.Run).
	Ask func(ctx context.Context, req ask.Request) ([]ask.Answer, error)
	// Forecast forecasts merging the candidates' branches into branch
	// into of their repository ("": its current branch), in one look at
	// it (worktree.CheckMergesInto).
	Forecast func(ctx context.Context, ids []string, into string) (map[string]*worktree.Check, error)
	// Merge merges a candidate's branch (worktree.Merge).
	Merge func(ctx context.Context, req worktree.MergeRequest) error
	// MergeHere merges a candidate brought back from its host, as Merge
	// does, with t its record as here (its worktree here, no host).
	MergeHere func(ctx context.Context, req worktree.MergeRequest, t *state.Task) error
	// Cancel cancels a candidate still at work, with the reason given
	// (gc.CancelBecause).
	Cancel func(ctx context.Context, id, reason string) error
	// Close closes a candidate's window, ending it if it still runs
	// (gc.Cancel with kill).
	Close func(ctx context.Context, id string) error
	// Drop removes a candidate's worktree and branch (nil: where it
	// runs, through gitsnap).
	Drop func(ctx context.Context, t *state.Task) error
	// GitOn is ctx for gitsnap's calls on a registered host ("": this
	// machine; hosts.Pool.GitOn).
	GitOn func(ctx context.Context, host string) (context.Context, error)
	// Via is the transport to a registered host (a candidate's check
	// there).
	Via func(ctx context.Context, host string) (transport.Transport, error)
	// WrapCheck wraps the check of a sandboxed candidate in its sandbox.
	WrapCheck func(ctx context.Context, t *state.Task, argv []string) ([]string, error)
	// WrapCheckThere wraps the check of a sandboxed candidate on a host
	// in a sandbox like its agent's there (nil: such a check is not run,
	// and its result says so).
	WrapCheckThere func(ctx context.Context, t *state.Task, argv []string) ([]string, error)
	// Alive reports whether the process pid, of identity start, still
	// runs (nil: proctree.AliveAs).
	Alive func(pid int, start string) bool
	// Say writes one line of progress.
	Say func(format string, args ...any)
	// Now is the clock.
	Now func() time.Time
}
