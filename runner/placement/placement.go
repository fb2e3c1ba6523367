// Package placement places a task dispatched to a pool of hosts (dispatch
// --host any, --host label:L): it waits, queued, until a host of the pool
// has a free slot, checks that the task can run there, and claims the
// slot in the task's record, so that no host takes more than its maximum
// whatever the number of runner processes placing at once.
//
// What it reads is cheap: the slots in use come from the local state
// (every task on a host was placed by this machine), the hosts' load and
// memory from their probes, cached for every process (hosts.Probes): a
// waiting task never opens an ssh connection per poll.
//
// Of the module it imports runner/hosts, runner/remote, runner/record,
// runner/settings, runner/profile, runner/fault, state and gitsnap
// (TestImports).
package placement

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/hosts"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/record"
	"github.com/runner-cli/runner/runner/remote"
	"github.com/runner-cli/runner/runner/settings"
	"github.com/runner-cli/runner/state"
)

// Site checks that the task can run on c's host (its folder, its agent,
// a sandbox, a git work tree) and returns the agent's argv there.
type Site func(ctx context.Context, c *hosts.Conn) ([]string, error)

// Placer places tasks on the hosts of their pools.
type Placer struct {
	Book  record.Book
	Hosts *hosts.Pool
	// Say reports progress (nil: nothing).
	Say func(format string, args ...any)
	// Poll is how often a waiting task looks again with no change of the
	// state (a host's load, a host undrained or back); 0 means 2 s.
	Poll time.Duration
	// Reconcile reads the state reconciled (a task ahead whose
	// supervisor is gone no longer waits), at each Poll; nil: Read.
	Reconcile func(ctx context.Context) (*state.State, error)
}

// ErrLeftQueue is wrapped when the task stopped waiting meanwhile (it was
// cancelled, or another process placed it).
var ErrLeftQueue = errors.New("the task left the queue")

// RemoteSite is the Site of a task run with spec in dir by prof: its
// folder and agent there (remote.Argv), bwrap there for a sandboxed task,
// a repository with a work tree there for a worktree task.
func RemoteSite(prof *profile.Profile, dir string, spec *settings.Start) Site {
	return func(ctx context.Context, c *hosts.Conn) ([]string, error) {
		argv, err := remote.Argv(ctx, c, prof, dir, spec.Argv)
		if err != nil {
			return nil, err
		}
		if spec.Sandbox != nil {
			if _, err := c.Sandbox(ctx); err != nil {
				return nil, err
			}
		}
		if spec.Worktree {
			if _, err := gitsnap.WorktreeHome(gitsnap.On(ctx, c.Transport()), dir); err != nil {
				return nil, fault.Usagef("--worktree: %v", err)
			}
		}
		return argv, nil
	}
}

// Place waits until a host of task id's pool has a free slot (the
// task's reason saying why it waits), checks the task's site there and
// claims the slot: the record then names the host and the argv there. A
// host the task cannot run on (no folder, no agent) is left for the
// next; when no host of the pool can, the error says why for each. It
// returns the task as placed.
func (p *Placer) Place(ctx context.Context, id string, site Site) (*state.Task, error) {
	poll := p.Poll
	if poll <= 0 {
		poll = 2 * time.Second
	}
	skip := map[string]string{} // hosts the task cannot run on, and why
	said, read, reconciled := "", p.Book.Store.Read, clock.Now()
	// Only the first in line wakes on each change of the state (a slot
	// freed is one); the others look every poll: a hundred waiting tasks
	// do not all read the state on every change, nor each hold a watch.
	var changes <-chan struct{}
	for {
		t, placed, why, ahead, err := p.try(ctx, read, id, site, skip)
		if err != nil || placed {
			return t, err
		}
		if why != said {
			said = why
			p.sayWhy(ctx, id, why)
			if p.Say != nil {
				p.Say("task %s: %s", id, why)
			}
		}
		if ahead == 0 && changes == nil {
			if changes, err = p.Book.Store.Watch(ctx); err != nil {
				return nil, err
			}
		}
		read = p.Book.Store.Read
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-changes:
		case <-time.After(poll):
			if p.Reconcile != nil && clock.Since(reconciled) >= 5*poll {
				read, reconciled = p.Reconcile, clock.Now()
			}
		}
	}
}

// PlaceTask is Place for task t, recording how it ends when it is not
// placed: a task no host of its pool can run fails; one interrupted while
// it waits is left orphaned (detached: its supervisor stopped, runner
// resume) or cancelled (a foreground dispatch).
func (p *Placer) PlaceTask(ctx context.Context, t *state.Task, site Site, detached bool) (*state.Task, *settings.Start, error) {
	placed, err := p.Place(ctx, t.ID, site)
	bg := context.WithoutCancel(ctx)
	var set settings.Run
	if err == nil {
		set, err = settings.Of(placed)
	}
	switch {
	case err == nil && set.Start == nil:
		err = fmt.Errorf("its record has no start settings (it was queued by an older runner); dispatch it again")
	case err == nil:
		if p.Say != nil {
			p.Say("task %s: placed on host %s", t.ID, placed.Tmux.Host)
		}
		return placed, set.Start, nil
	case errors.Is(err, ErrLeftQueue):
	case ctx.Err() != nil && detached:
		_ = p.Book.SetStatus(bg, t.ID, state.StatusOrphaned, "supervisor stopped while waiting for a slot in pool "+t.Tmux.Pool+" (runner resume "+t.ID+")", nil)
	case ctx.Err() != nil:
		_ = p.Book.Finish(bg, t.ID, state.StatusCancelled, "interrupted while waiting for a slot in pool "+t.Tmux.Pool, nil)
	default:
		_ = p.Book.Finish(bg, t.ID, state.StatusFailed, "could not be placed: "+err.Error(), nil)
	}
	return nil, nil, fmt.Errorf("task %s: %w", t.ID, err)
}

// FailStart records that task t could not be started (reason): failed,
// unless its host did not answer (remote.Unanswered: a host lost between
// its placement and its start). Then a task from a pool with no pane yet
// is queued again for another host of its pool (Requeued tells its
// supervisor so), and one whose pane was made there is left orphaned (its
// agent may be running there: runner resume reconnects), never failed.
func FailStart(ctx context.Context, b record.Book, t *state.Task, reason string) {
	if strings.TrimSpace(reason) == "" {
		reason = "no reason was given (a fault of runner's)"
	}
	moved := false
	if remote.Unanswered(reason) {
		now := clock.Now()
		if b.Now != nil {
			now = b.Now()
		}
		_ = b.UpdateTaskDurably(ctx, "task "+t.ID+": its host did not answer at its start", t.ID, func(x *state.Task) error {
			moved = false
			switch {
			case !x.Status.IsActive() || x.Tmux.Host == "":
			case x.Tmux.Pane != "":
				moved = true
				return x.SetStatus(state.StatusOrphaned, now, fmt.Sprintf("host %s did not answer as its agent started (%s); its pane may live there (runner resume %s reconnects)", x.Tmux.Host, reason, x.ID))
			case x.Tmux.Pool != "":
				moved = true
				why := fmt.Sprintf("host %s did not answer at its start (%s): placed again in pool %s", x.Tmux.Host, reason, x.Tmux.Pool)
				x.Tmux.Host, x.Tmux.Socket = "", ""
				return x.SetStatus(state.StatusQueued, now, why)
			}
			return nil
		})
	}
	if !moved {
		_ = b.Finish(ctx, t.ID, state.StatusFailed, reason, nil)
	}
}

// Requeued returns task id when FailStart queued it again for its pool
// (nil otherwise): its supervisor places it anew.
func Requeued(ctx context.Context, b record.Book, id string) *state.Task {
	t, err := b.Task(ctx, id)
	if err != nil || t.Status != state.StatusQueued || t.Tmux.Pool == "" || t.Tmux.Host != "" {
		return nil
	}
	return t
}

// sayWhy records why the queued task id waits (a queued entry of its
// history with the reason), unless it moved on meanwhile.
func (p *Placer) sayWhy(ctx context.Context, id, why string) {
	now := clock.Now()
	if p.Book.Now != nil {
		now = p.Book.Now()
	}
	_ = p.Book.UpdateTaskDurably(ctx, "task "+id+": "+why, id, func(t *state.Task) error {
		if t.Status != state.StatusQueued || t.Tmux.Host != "" || t.LastReason() == why {
			return nil
		}
		return t.SetStatus(state.StatusQueued, now, why)
	})
}

// try looks once: it places the task (placed) or says why it waits.
func (p *Placer) try(ctx context.Context, read func(context.Context) (*state.State, error), id string, site Site, skip map[string]string) (t *state.Task, placed bool, why string, ahead int, err error) {
	st, err := read(ctx)
	if err != nil {
		return nil, false, "", 0, err
	}
	if t = st.Task(id); t == nil {
		return nil, false, "", 0, fmt.Errorf("task %s: %w", id, state.ErrTaskNotFound)
	}
	if t.Status != state.StatusQueued {
		return t, false, "", 0, fmt.Errorf("task %s is %s: %w", id, t.Status, ErrLeftQueue)
	}
	if t.Tmux.Host != "" {
		return t, true, "", 0, nil // placed already (by a supervisor before this one)
	}
	all, err := p.Book.Store.Hosts(ctx)
	if err != nil {
		return nil, false, "", 0, err
	}
	members, err := hosts.Members(all, t.Tmux.Pool)
	if err != nil {
		return nil, false, "", 0, err
	}
	if len(skip) == len(members) {
		return nil, false, "", 0, noHost(t.Tmux.Pool, members, skip)
	}
	probes := p.Hosts.Probes(ctx, members, hosts.ProbeMaxAge)
	ranked, held := hosts.Rank(members, hosts.Use(st), probes, skip)
	var free int
	ahead = Ahead(st, t)
	for _, c := range ranked {
		free += c.Free
	}
	if len(ranked) == 0 || ahead >= free {
		why = "waiting for a free slot in pool " + t.Tmux.Pool
		if held != "" {
			why += ": " + held
		}
		if ahead > 0 {
			why += fmt.Sprintf(" (%d dispatched before it waiting too)", ahead)
		}
		return t, false, why, ahead, nil
	}
	for _, c := range ranked {
		conn, err := p.Hosts.Conn(ctx, c.Host.Name)
		if err != nil {
			return nil, false, "", 0, err
		}
		argv, err := site(ctx, conn)
		switch {
		case errors.Is(err, hosts.ErrUnreachable):
			hosts.Probe(ctx, p.Book.Store, conn) // others see it down too
			continue
		case err != nil && ctx.Err() != nil:
			return nil, false, "", 0, ctx.Err()
		case err != nil:
			skip[c.Host.Name] = "cannot run it (" + err.Error() + ")"
			continue
		}
		ok, err := p.claim(ctx, id, c.Host, conn.TC().Socket(), argv)
		if err != nil || ok {
			t, _ := p.Book.Task(ctx, id)
			return t, ok, "", 0, err
		}
		return t, false, "", 0, nil // another took the slot: look again
	}
	if len(skip) == len(members) {
		return nil, false, "", 0, noHost(t.Tmux.Pool, members, skip)
	}
	return t, false, "waiting for a host of pool " + t.Tmux.Pool + " to answer: " + held, ahead, nil
}

// claim records task id on host h, with argv there, if h still has a
// free slot; ok is false when it has none (another process took it).
func (p *Placer) claim(ctx context.Context, id string, h *state.Host, socket string, argv []string) (ok bool, err error) {
	now := clock.Now()
	if p.Book.Now != nil {
		now = p.Book.Now()
	}
	err = p.Book.UpdateDurably(ctx, "task "+id+": placed on host "+h.Name, func(s *state.State) error {
		t := s.Task(id)
		if t == nil || t.Status != state.StatusQueued || t.Tmux.Host != "" {
			return nil
		}
		use := hosts.Use(s)[h.Name]
		if use >= h.Capacity() {
			return nil
		}
		var run settings.Run
		if len(t.Settings) > 0 {
			if err := json.Unmarshal(t.Settings, &run); err != nil {
				return fmt.Errorf("task %s: its settings: %w", id, err)
			}
		}
		if run.Start != nil {
			run.Start.Argv = argv
		}
		b, err := json.Marshal(run)
		if err != nil {
			return err
		}
		t.Settings = b
		t.Tmux.Host, t.Tmux.Socket = h.Name, socket
		ok = true
		return t.SetStatus(state.StatusQueued, now, fmt.Sprintf("placed on host %s (%d/%d agents there)", h.Name, use+1, h.Capacity()))
	})
	return ok, err
}

// Ahead counts the tasks waiting for the same pool as t that were
// dispatched before it: a freed slot goes to the first in line.
func Ahead(st *state.State, t *state.Task) int {
	n := 0
	for _, o := range st.Tasks {
		if o.ID != t.ID && o.Status == state.StatusQueued && o.Tmux.Pool == t.Tmux.Pool && o.Tmux.Host == "" && len(o.After) == 0 &&
			(o.Created.Before(t.Created) || o.Created.Equal(t.Created) && o.ID < t.ID) {
			n++
		}
	}
	return n
}

// noHost is the error of a task no host of its pool can run.
func noHost(pool string, members []*state.Host, skip map[string]string) error {
	var why []string
	for _, h := range members {
		why = append(why, h.Name+": "+skip[h.Name])
	}
	return fault.Usagef("no host of pool %s can run the task: %s", pool, strings.Join(why, "; "))
}
