// What a passed budget stops (its rules: package budget): the tasks of
// its tree whose agents work, recorded failed and interrupted.

package runner

import (
	"context"
	"errors"

	"github.com/runner-cli/runner/runner/budget"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// stopForBudget ends the tasks of a tree whose budget was passed while
// their agents work: each is recorded failed with its reason (its supervisor
// then records nothing over it and exits 6) and interrupted with its
// profile's interrupt keys, so the turn's spend stops growing.
func stopForBudget(ctx context.Context, env *Env, stops []budget.Stop) {
	for _, s := range stops {
		t := s.Task
		if err := env.Record().Finish(ctx, t.ID, state.StatusFailed, s.Reason, nil); err != nil {
			env.Say("task %s: %v", t.ID, err)
			continue
		}
		if t.Tmux.Pane == "" {
			continue
		}
		prof, err := profile.FindProfile(env.Profiles, t.Agent)
		if err != nil || len(prof.InterruptKeys) == 0 {
			continue
		}
		tc, err := env.PaneClient(ctx, t)
		if err == nil {
			err = tc.SendKeys(ctx, t.Tmux.Pane, prof.InterruptKeys...)
		}
		if err != nil && !errors.Is(err, tmuxctl.ErrNotFound) && !errors.Is(err, tmuxctl.ErrPaneDead) {
			env.Say("task %s: interrupting it past the budget: %v", t.ID, err)
		}
	}
}
