package runner

import (
	"context"

	"github.com/runner-cli/runner/runner/caller"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// CallerTask returns the id of the task this process runs under (package
// caller), "" outside any task; panes are the live panes when the caller
// listed them already (nil: they are listed if needed).
func CallerTask(ctx context.Context, env *Env, st *state.State, panes []tmuxctl.PaneInfo) string {
	return caller.Task(ctx, GetenvOf(env), env.TC.ListPanes, st, panes)
}
