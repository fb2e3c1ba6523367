// Package projlock takes the per-project lock of `dispatch --exclusive`
// (state.Store.LockProject) with one rule beside it: a lock held while no
// exclusive task of the project is active is being let go, not busy.
//
// A task's end can be recorded by another process than the supervisor
// that holds the project lock: `runner cancel` records `cancelled`, then
// stops the supervisor, whose lock goes only when it has exited. A script's
// `runner wait ID && runner dispatch --exclusive …` ran in that moment and
// was refused as busy (exit 5). Such a lock is waited for, for LetGo at
// most; a lock held by an active exclusive task is refused at once, as
// before (or waited for with --wait-lock).
package projlock

import (
	"context"
	"errors"
	"time"

	"github.com/runner-cli/runner/runner/projects"
	"github.com/runner-cli/runner/runner/settings"
	"github.com/runner-cli/runner/state"
)

// LetGo bounds the wait for a lock whose holder's task has ended: its
// supervisor's exit (a stopped supervisor exits within a second; a
// loaded machine may take longer).
var LetGo = 30 * time.Second

// Store is what Take needs of the state.
type Store interface {
	LockProject(ctx context.Context, project string, wait bool) (*state.ProjectLock, error)
	Read(ctx context.Context) (*state.State, error)
}

// Take takes the project lock named key (projects.LockKey). With wait it
// waits for ctx; without, a lock held by an active exclusive task of the
// same key is state.ErrProjectLocked at once, and one held while none is
// active is waited for, for LetGo at most (then the same error).
func Take(ctx context.Context, s Store, key string, wait bool) (*state.ProjectLock, error) {
	lock, err := s.LockProject(ctx, key, wait)
	if err == nil || wait || !errors.Is(err, state.ErrProjectLocked) {
		return lock, err
	}
	st, rerr := s.Read(ctx)
	if rerr != nil || ActiveHolder(st, key) != "" {
		return nil, err
	}
	wctx, cancel := context.WithTimeout(ctx, LetGo)
	defer cancel()
	if lock, werr := s.LockProject(wctx, key, true); werr == nil {
		return lock, nil
	}
	return nil, err
}

// ActiveHolder returns an active (not ended) exclusive task of the
// project lock key: one that holds the lock or may take it (queued);
// empty when there is none.
func ActiveHolder(st *state.State, key string) string {
	for _, t := range st.Tasks {
		if t.Status.IsTerminal() || projects.LockKey(t.Project, t.Dir, t.Tmux.Host) != key {
			continue
		}
		if set, err := settings.Of(t); err != nil || set.Start == nil || set.Start.Exclusive {
			// A record whose settings do not decode counts as holding:
			// busy is the safe answer.
			return t.ID
		}
	}
	return ""
}
