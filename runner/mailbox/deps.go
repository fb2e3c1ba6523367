package mailbox

import (
	"context"
	"time"

	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// Core is what posting and reading messages ask of package runner:
// Reconcile reads the state after recording what became of the tasks
// nothing supervises, ReconcilePanes also returns the live panes;
// CallerTask is the id of the task this process runs under, "" outside
// any (panes nil: listed if needed); RemotePaneAlive says whether a
// task's pane on a host is its own and alive there; StartDeliveries
// starts the supervisors that deliver the queues of idle tasks.
type Core interface {
	Reconcile(ctx context.Context) (*state.State, error)
	ReconcilePanes(ctx context.Context) (*state.State, []tmuxctl.PaneInfo, error)
	CallerTask(ctx context.Context, st *state.State, panes []tmuxctl.PaneInfo) string
	RemotePaneAlive(ctx context.Context, t *state.Task) bool
	StartDeliveries(ctx context.Context, ids []string) []error
}

// Store is the state as posting changes it: a *state.Store.
type Store interface {
	Update(ctx context.Context, fn func(*state.State) error) error
}

// Journal is where posting says what became of each message: a
// record.Book.
type Journal interface {
	JournalMessage(ctx context.Context, at time.Time, kind string, m *state.Message, reason string)
}

// Deps is what posting and reading messages use, built by cmd/runner from
// its Env: the store and the journal, the clock, and Core. Every field is
// required.
type Deps struct {
	Store Store
	// Record writes the journal (Env.Record).
	Record Journal
	Now    func() time.Time
	// Core is what they ask of package runner (open.Core).
	Core
	// TreeOnly refuses every recipient outside the sender's tree of
	// tasks: the sender is a sandboxed task that asked through its door
	// (messaging.ReachTree).
	TreeOnly bool
}
