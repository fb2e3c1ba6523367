package mailbox

import (
	"context"
	"time"

	"github.com/runner-cli/runner/runner/record"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// Deps is what posting and reading messages use, built by cmd/runner from
// its Env: the store and the journal, the clock, and what they ask of
// package runner as functions. Every field is required.
type Deps struct {
	Store *state.Store
	// Record writes the journal (Env.Record).
	Record record.Book
	Now    func() time.Time
	// Reconcile reads the state after recording what became of the
	// tasks nothing supervises (runner.Reconcile); ReconcilePanes also
	// returns the live panes (runner.ReconcilePanes).
	Reconcile      func(ctx context.Context) (*state.State, error)
	ReconcilePanes func(ctx context.Context) (*state.State, []tmuxctl.PaneInfo, error)
	// CallerTask is the id of the task this process runs under, ""
	// outside any (runner.CallerTask; panes nil: listed if needed).
	CallerTask func(ctx context.Context, st *state.State, panes []tmuxctl.PaneInfo) string
	// RemotePaneAlive says whether a task's pane on a host is its own and
	// alive there (runner.RemotePaneAlive).
	RemotePaneAlive func(ctx context.Context, t *state.Task) bool
	// StartDeliveries starts the supervisors that deliver the queues of
	// idle tasks (runner.StartDeliveries).
	StartDeliveries func(ctx context.Context, ids []string) []error
	// TreeOnly refuses every recipient outside the sender's tree of
	// tasks: the sender is a sandboxed task that asked through its door
	// (messaging.ReachTree).
	TreeOnly bool
}
