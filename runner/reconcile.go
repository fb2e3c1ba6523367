// Reconciliation (package reconcile) on this Env.

package runner

import (
	"context"

	"github.com/runner-cli/runner/runner/reconcile"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// Reconcile records what became of the active tasks nothing supervises
// (reconcile.Run) and returns the tasks after the change.
func Reconcile(ctx context.Context, env *Env) (*state.State, error) {
	st, _, err := reconcile.Run(ctx, reconcileDeps(env), false)
	return st, err
}

// ReconcilePanes is Reconcile that also returns the live panes (listed
// anyway when a task is active), so callers that need them make one tmux
// call, not two.
func ReconcilePanes(ctx context.Context, env *Env) (*state.State, []tmuxctl.PaneInfo, error) {
	return reconcile.Run(ctx, reconcileDeps(env), true)
}

// reconcileDeps is package reconcile on env.
func reconcileDeps(env *Env) reconcile.Deps {
	return reconcile.Deps{Store: env.Store, ListPanes: env.TC.ListPanes, Now: env.Time, Book: env.Record()}
}
