// What each task changed (package changes) on this Env, and the looks a
// supervisor takes while its agent works.

package runner

import (
	"context"
	"fmt"
	"os"

	"github.com/runner-cli/runner/runner/changes"
	"github.com/runner-cli/runner/runner/reconcile"
	"github.com/runner-cli/runner/state"
)

// TrackChanges looks at what task id changed since its snapshot and
// records it, with the overlaps it makes (package changes).
func TrackChanges(ctx context.Context, env *Env, id string) error {
	return env.changes().Track(ctx, id)
}

// changes is package changes on env.
func (env *Env) changes() changes.Deps {
	return changes.Deps{Store: env.Store, Book: env.Record(), Now: env.Time, Say: env.Say, Git: env.GitContext,
		PaneClient:      func(ctx context.Context, t *state.Task) (changes.Panes, error) { return env.PaneClient(ctx, t) },
		Procs:           reconcile.LiveProcs{},
		StartDeliveries: func(ctx context.Context, ids []string) []error { return StartDeliveries(ctx, env, ids) }}
}

// trackWhileWorking records what the task changed while its agent works
// (changes.WhileWorking), until stop is called.
func (s *supervision) trackWhileWorking(ctx context.Context, t *state.Task) (stop func()) {
	if t.SnapshotRef == "" || s.wrote == nil {
		return func() {}
	}
	return changes.WhileWorking(ctx, s.wrote, s.started.AfterCommit(func(ctx context.Context) {
		if err := TrackChanges(ctx, s.env, s.ID); err != nil {
			s.env.Say("task %s: %v", s.ID, err)
		}
	}))
}

// StartDeliveries starts a supervisor for each idle recipient this process
// claimed; one that cannot start puts its task back to done (the message
// stays queued) and is reported.
func StartDeliveries(ctx context.Context, env *Env, ids []string) []error {
	var errs []error
	for _, id := range ids {
		if _, err := env.StartSupervisor(id, nil); err != nil {
			reason := "could not start a supervisor to deliver messages: " + err.Error()
			_ = env.Record().UpdateDurably(context.WithoutCancel(ctx), "task "+id+": "+reason, func(st *state.State) error {
				if t := st.Task(id); t != nil && t.Status == state.StatusReady && t.SupervisorPID == os.Getpid() {
					_ = t.SetStatus(state.StatusDone, env.Time(), reason)
					t.SupervisorPID, t.SupervisorStart = 0, ""
				}
				return nil
			})
			errs = append(errs, fmt.Errorf("message to %s: %s (it stays queued; the next message or 'runner send' retries)", id, reason))
		}
	}
	return errs
}
