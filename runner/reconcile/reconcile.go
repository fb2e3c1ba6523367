// Package reconcile finds the active tasks nothing supervises any more
// and records what became of them: orphaned (their pane alive, to be
// resumed), exited (the pane's agent exited), failed (the pane gone too),
// whoever reads the state next (Run; Stale finds them in a state). It
// also says whether a recorded process still is the one recorded
// (SupervisorAlive, LiveProcs), which the message queue's rules ask too.
package reconcile

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/runner-cli/runner/runner/messaging"
	"github.com/runner-cli/runner/runner/proctree"
	"github.com/runner-cli/runner/runner/record"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// SupervisorAlive reports whether t's supervisor runs: its pid is alive
// and is the process recorded (SupervisorStart), not one that got the pid
// after a reboot or once the supervisor was gone.
func SupervisorAlive(t *state.Task) bool { return proctree.AliveAs(t.SupervisorPID, t.SupervisorStart) }

// selfIdentity is this process's proctree.Identity, read once (a
// sync.Once and a string, not a package-level sync.OnceValue: that one
// allocates in the package's init, in every runner process).
func selfIdentity() string {
	self.once.Do(func() { self.id = proctree.Identity(os.Getpid()) })
	return self.id
}

var self struct {
	once sync.Once
	id   string
}

// SelfIdentity is this process's identity (proctree.Identity), read once:
// what a task records beside the pid of the process that owns it.
func SelfIdentity() string { return selfIdentity() }

// LiveProcs is messaging.Procs on this machine's processes.
type LiveProcs struct{}

var _ messaging.Procs = LiveProcs{}

// Self is this process and its identity.
func (LiveProcs) Self() (int, string) { return os.Getpid(), selfIdentity() }

// Alive reports whether pid is the live process ident names.
func (LiveProcs) Alive(pid int, ident string) bool { return proctree.AliveAs(pid, ident) }

// Deps is what a reconciliation reads and writes: the state, the tmux
// server's panes, the clock and the journal.
type Deps struct {
	Store     *state.Store
	ListPanes func(ctx context.Context) ([]tmuxctl.PaneInfo, error)
	Now       func() time.Time
	Book      record.Book
}

// Run compares the active tasks with the live panes and supervisors and
// records what became of those nothing supervises (Stale); tasks waiting
// for input keep their status: they wait for the user, who resumes them
// after answering. It returns the state after the change, and the live
// panes when wantPanes (listed anyway when a task is active, so a caller
// that needs them makes one tmux call, not two).
func Run(ctx context.Context, d Deps, wantPanes bool) (*state.State, []tmuxctl.PaneInfo, error) {
	st, err := d.Store.Read(ctx)
	if err != nil {
		return nil, nil, err
	}
	var list []tmuxctl.PaneInfo
	listed := false
	listPanes := func() error {
		if listed {
			return nil
		}
		l, err := d.ListPanes(ctx)
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
	changes, err := Stale(st, func() (map[string]tmuxctl.PaneInfo, error) {
		if err := listPanes(); err != nil {
			return nil, err
		}
		panes := map[string]tmuxctl.PaneInfo{}
		for _, p := range list {
			panes[p.ID] = p
		}
		return panes, nil
	})
	if err != nil || len(changes) == 0 {
		return st, list, err
	}
	st, err = d.record(ctx, st, changes)
	return st, list, err
}

// record records changes (each only if its task is still active and
// unsupervised), drops the queues of the tasks that ended, and journals
// both. It returns the state after the update (st, read before it, when
// the update failed).
func (d Deps) record(ctx context.Context, st *state.State, changes []Change) (*state.State, error) {
	var dropped []*state.Message
	err := d.Store.Update(ctx, func(s *state.State) error {
		dropped = nil
		for _, c := range changes {
			t := s.Task(c.ID)
			if t == nil || !t.Status.IsActive() || SupervisorAlive(t) {
				continue
			}
			_ = t.SetStatus(c.Status, d.Now(), c.Reason)
			if c.Status.IsTerminal() {
				dropped = append(dropped, messaging.DropQueue(s, c.ID, d.Now(), fmt.Sprintf("task %s ended %s before taking it", c.ID, c.Status), LiveProcs{})...)
			}
		}
		st = s
		return nil
	})
	d.Book.JournalDropped(ctx, dropped)
	for _, c := range changes {
		if t := st.Task(c.ID); t != nil {
			d.Book.Journal(ctx, t, "reconcile", string(c.Status)+": "+c.Reason)
		}
	}
	return st, err
}

// WaitingReason says what a queued task waits for: "waiting for t_a, t_b".
func WaitingReason(after []string) string {
	return "waiting for " + strings.Join(after, ", ")
}

// QueuedReason is what a queued task waits for: its dependencies, else a
// slot in its pool of hosts, else its start (on its host).
func QueuedReason(t *state.Task) string {
	switch {
	case len(t.After) > 0:
		return WaitingReason(t.After)
	case t.Tmux.Pool != "" && t.Tmux.Host == "":
		return "waiting to be placed in pool " + t.Tmux.Pool
	case t.Tmux.Host != "":
		return "waiting to start on host " + t.Tmux.Host
	}
	return "waiting to start"
}

// Change is a status reconciliation records for a task nothing
// supervises.
type Change struct {
	ID     string
	Status state.Status
	Reason string
}

// Stale finds the active tasks whose supervisor is gone: orphaned
// (pane alive), exited (pane dead) or failed (pane gone too); a queued one
// whose dispatcher is gone fails (or, waiting for others, is orphaned).
// listPanes is called once, only if a task has a pane to look at.
func Stale(st *state.State, listPanes func() (map[string]tmuxctl.PaneInfo, error)) ([]Change, error) {
	var changes []Change
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
					changes = append(changes, Change{t.ID, state.StatusOrphaned, fmt.Sprintf("supervisor %d is gone while %s (runner resume %s)", t.SupervisorPID, WaitingReason(t.After), t.ID)})
				} else {
					changes = append(changes, Change{t.ID, state.StatusFailed, fmt.Sprintf("the dispatching process %d is gone before the task started (dispatch it again)", t.SupervisorPID)})
				}
			}
			continue
		}
		if t.Tmux.Host != "" {
			// Its pane is on a host, which a listing does not contact:
			// with its supervisor gone it can be resumed (resume looks
			// there).
			if !SupervisorAlive(t) && t.Status != state.StatusNeedsInput {
				changes = append(changes, Change{t.ID, state.StatusOrphaned, fmt.Sprintf("supervisor %d is gone; its pane is on host %s (runner resume %s looks there)", t.SupervisorPID, t.Tmux.Host, t.ID)})
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
			if st, known, zombie := tmuxctl.ZombieExit(p.PID); zombie && known {
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
			changes = append(changes, Change{t.ID, state.StatusOrphaned, fmt.Sprintf("supervisor %d is gone; pane %s is alive (runner resume %s)", t.SupervisorPID, t.Tmux.Pane, t.ID)})
		case paneOK && p.Dead:
			changes = append(changes, Change{t.ID, state.StatusExited, fmt.Sprintf("supervisor %d is gone; the agent exited with status %d", t.SupervisorPID, p.DeadStatus)})
		default:
			changes = append(changes, Change{t.ID, state.StatusFailed, fmt.Sprintf("supervisor %d and pane %s are gone", t.SupervisorPID, t.Tmux.Pane)})
		}
	}
	return changes, nil
}
