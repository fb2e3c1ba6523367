package tasks

import (
	"context"

	"github.com/runner-cli/runner/runner/messaging"
)

// Tree returns the task hierarchy of the reconciled state: the subtree of
// root (an id or prefix), or every root task (see messaging.BuildTree).
func Tree(ctx context.Context, d Deps, root string) ([]*messaging.TreeNode, error) {
	st, err := d.Reconcile(ctx)
	if err != nil {
		return nil, err
	}
	return messaging.BuildTree(st, root)
}

// Collect gathers the outcomes of a task's children from the reconciled
// state (see messaging.CollectChildren).
func Collect(ctx context.Context, d Deps, parent string) (*messaging.Collection, error) {
	st, err := d.Reconcile(ctx)
	if err != nil {
		return nil, err
	}
	return messaging.CollectChildren(st, parent, d.ExitOf)
}
