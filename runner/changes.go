// What each task changed (package changes) on this Env, and the looks a
// supervisor takes while its agent works.

package runner

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/runner/changes"
	"github.com/runner-cli/runner/runner/reconcile"
	"github.com/runner-cli/runner/state"
)

// ChangesEvery is how often a supervisor looks at its task's files while
// the agent works: only when its pane showed output since the last look,
// so an agent that waits costs nothing.
const ChangesEvery = 3 * time.Second

// TrackChanges looks at what task id changed since its snapshot and
// records it, with the overlaps it makes (package changes).
func TrackChanges(ctx context.Context, env *Env, id string) error {
	return env.changes().Track(ctx, id)
}

// lookAtChanges is TrackChanges's look, which records nothing.
func lookAtChanges(ctx context.Context, env *Env, id string) (*changes.Look, error) {
	return env.changes().Look(ctx, id)
}

// changes is package changes on env.
func (env *Env) changes() changes.Deps {
	return changes.Deps{Store: env.Store, Book: env.Record(), Now: env.Time, Say: env.Say, Git: env.GitContext,
		PaneClient: env.PaneClient, Procs: reconcile.LiveProcs{},
		StartDeliveries: func(ctx context.Context, ids []string) []error { return StartDeliveries(ctx, env, ids) }}
}

// trackWhileWorking looks at the task's files at most every ChangesEvery
// while its pane shows output (the monitor signals s.wrote as the
// transcript grows), and less often when a look is slow, until stop is
// called. A quiet agent wakes it not once: no timer runs meanwhile.
func (s *supervision) trackWhileWorking(ctx context.Context, t *state.Task) (stop func()) {
	if t.SnapshotRef == "" || s.wrote == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		looked := clock.Now() // the first look comes a pause after the start, not at the prompt's echo
		var due <-chan time.Time
		next := ChangesEvery
		for {
			select {
			case <-ctx.Done():
				return
			case <-s.wrote:
				if due == nil {
					// The first write after a look: look once the
					// pause since the last look has passed.
					due = time.After(max(0, next-clock.Since(looked)))
				}
				continue
			case <-due:
				due = nil
			}
			looked = clock.Now()
			// A look under way finishes (stop waits for it): cut
			// short, it could leave overlaps recorded and untold.
			if err := TrackChanges(context.WithoutCancel(ctx), s.env, s.ID); err != nil {
				s.env.Say("task %s: %v", s.ID, err)
			}
			// A look costs at most a 20th of the time between looks (a
			// huge repository, a slow host).
			next = max(ChangesEvery, 20*clock.Since(looked))
		}
	}()
	return func() { cancel(); <-done }
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
