// Reconciliation: active tasks whose supervisor is gone become orphaned,
// exited or failed, whoever reads the state next.

package runner

import (
	"context"
	"fmt"
	"os"
	"sync"

	"github.com/runner-cli/runner/runner/messaging"
	"github.com/runner-cli/runner/runner/proctree"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// processAlive reports whether pid is a live process (a zombie is dead).
func processAlive(pid int) bool { return proctree.Alive(pid) }

// supervisorAlive reports whether t's supervisor runs: its pid is alive
// and is the process recorded (SupervisorStart), not one that got the pid
// after a reboot or once the supervisor was gone.
func SupervisorAlive(t *state.Task) bool { return proctree.AliveAs(t.SupervisorPID, t.SupervisorStart) }

// selfIdentity is this process's proctree.Identity, read once.
var selfIdentity = sync.OnceValue(func() string { return proctree.Identity(os.Getpid()) })

// zombieExit reports whether pid is a zombie and its exit status (see
// tmuxctl.ZombieExit, which owns the /proc reading).
func zombieExit(pid int) (status int, known, ok bool) { return tmuxctl.ZombieExit(pid) }

// Reconcile compares the active tasks with the live panes and supervisors:
// a task whose supervisor is gone becomes orphaned (its pane alive: it can
// be resumed) or failed (its pane gone too). Tasks waiting for input keep
// their status: they wait for the user, who resumes them after answering.
// It returns the tasks after the change.
func Reconcile(ctx context.Context, env *Env) (*state.State, error) {
	st, _, err := reconcile(ctx, env, false)
	return st, err
}

// ReconcilePanes is Reconcile that also returns the live panes (listed
// anyway when a task is active), so callers that need them make one tmux
// call, not two.
func ReconcilePanes(ctx context.Context, env *Env) (*state.State, []tmuxctl.PaneInfo, error) {
	return reconcile(ctx, env, true)
}

func reconcile(ctx context.Context, env *Env, wantPanes bool) (*state.State, []tmuxctl.PaneInfo, error) {
	st, err := env.Store.Read(ctx)
	if err != nil {
		return nil, nil, err
	}
	var list []tmuxctl.PaneInfo
	listed := false
	listPanes := func() error {
		if listed {
			return nil
		}
		l, err := env.TC.ListPanes(ctx)
		if err != nil {
			return err
		}
		list, listed = l, true
		return nil
	}
	if wantPanes {
		if err := listPanes(); err != nil {
			return nil, nil, err
		}
	}
	changes, err := staleTasks(st, func() (map[string]tmuxctl.PaneInfo, error) {
		if err := listPanes(); err != nil {
			return nil, err
		}
		panes := map[string]tmuxctl.PaneInfo{}
		for _, p := range list {
			panes[p.ID] = p
		}
		return panes, nil
	})
	if err != nil {
		return nil, nil, err
	}
	if len(changes) == 0 {
		return st, list, nil
	}
	var dropped []*state.Message
	err = env.Store.Update(ctx, func(s *state.State) error {
		dropped = nil
		for _, c := range changes {
			t := s.Task(c.id)
			if t == nil || !t.Status.IsActive() || SupervisorAlive(t) {
				continue
			}
			_ = t.SetStatus(c.status, env.Time(), c.reason)
			if c.status.IsTerminal() {
				dropped = append(dropped, messaging.DropQueue(s, c.id, env.Time(), fmt.Sprintf("task %s ended %s before taking it", c.id, c.status), LiveProcs{})...)
			}
		}
		st = s
		return nil
	})
	env.Record().JournalDropped(ctx, dropped)
	for _, c := range changes {
		if t := st.Task(c.id); t != nil {
			env.Record().Journal(ctx, t, "reconcile", string(c.status)+": "+c.reason)
		}
	}
	return st, list, err
}

// change is a status reconcile records for a task nothing supervises.
type change struct {
	id     string
	status state.Status
	reason string
}

// staleTasks finds the active tasks whose supervisor is gone: orphaned
// (pane alive), exited (pane dead) or failed (pane gone too); a queued one
// whose dispatcher is gone fails (or, waiting for others, is orphaned).
// listPanes is called once, only if a task has a pane to look at.
func staleTasks(st *state.State, listPanes func() (map[string]tmuxctl.PaneInfo, error)) ([]change, error) {
	var changes []change
	var panes map[string]tmuxctl.PaneInfo
	for _, t := range st.Tasks {
		if !t.Status.IsActive() {
			continue
		}
		if t.Status == state.StatusQueued {
			// A queued task has the process that dispatched it or waits
			// for its dependencies, and no pane yet. Gone, a task that
			// waits for others can be resumed; one that was about to start
			// failed. (A record of an older runner without a process is
			// left alone.)
			if t.Tmux.Pane == "" && t.SupervisorPID > 0 && !SupervisorAlive(t) {
				if len(t.After) > 0 {
					changes = append(changes, change{t.ID, state.StatusOrphaned, fmt.Sprintf("supervisor %d is gone while %s (runner resume %s)", t.SupervisorPID, waitingReason(t.After), t.ID)})
				} else {
					changes = append(changes, change{t.ID, state.StatusFailed, fmt.Sprintf("the dispatching process %d is gone before the task started (dispatch it again)", t.SupervisorPID)})
				}
			}
			continue
		}
		if t.Tmux.Host != "" {
			// Its pane is on a host, which a listing does not contact:
			// with its supervisor gone it can be resumed (resume looks
			// there).
			if !SupervisorAlive(t) && t.Status != state.StatusNeedsInput {
				changes = append(changes, change{t.ID, state.StatusOrphaned, fmt.Sprintf("supervisor %d is gone; its pane is on host %s (runner resume %s looks there)", t.SupervisorPID, t.Tmux.Host, t.ID)})
			}
			continue
		}
		if panes == nil {
			var err error
			if panes, err = listPanes(); err != nil {
				return nil, err
			}
		}
		p, paneOK := panes[t.Tmux.Pane]
		paneOK = paneOK && p.Session == t.Tmux.Session
		if paneOK && !p.Dead && p.PID > 0 {
			// An agent tmux has not reaped yet (see Monitor.Wait).
			if st, known, zombie := zombieExit(p.PID); zombie && known {
				p.Dead, p.DeadStatus = true, st
			}
		}
		supOK := SupervisorAlive(t)
		switch {
		case supOK:
			continue
		case t.Status == state.StatusNeedsInput && paneOK:
			continue
		case paneOK && !p.Dead:
			changes = append(changes, change{t.ID, state.StatusOrphaned, fmt.Sprintf("supervisor %d is gone; pane %s is alive (runner resume %s)", t.SupervisorPID, t.Tmux.Pane, t.ID)})
		case paneOK && p.Dead:
			changes = append(changes, change{t.ID, state.StatusExited, fmt.Sprintf("supervisor %d is gone; the agent exited with status %d", t.SupervisorPID, p.DeadStatus)})
		default:
			changes = append(changes, change{t.ID, state.StatusFailed, fmt.Sprintf("supervisor %d and pane %s are gone", t.SupervisorPID, t.Tmux.Pane)})
		}
	}
	return changes, nil
}
