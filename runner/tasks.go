package runner

import (
	"context"

	"github.com/runner-cli/runner/runner/fault"

	"github.com/runner-cli/runner/state"
)

// GetTask reconciles and returns one task by id or unique prefix.
func GetTask(ctx context.Context, env *Env, ref string) (*state.Task, error) {
	st, err := Reconcile(ctx, env)
	if err != nil {
		return nil, err
	}
	t, err := st.FindTask(ref)
	if err != nil {
		return nil, fault.Usagef("%v (see 'runner ps --all')", err)
	}
	return t, nil
}
