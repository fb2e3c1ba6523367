// Package changes looks at what each task changed since its snapshot and
// records it (Track: Look, then Look.Record) with the overlaps between
// tasks (package overlap's rule), telling the agents concerned with
// messages from runner, which the usual queue delivers at their next idle. It reaches git, tmux and the
// supervisors through Deps. A supervisor looks while its agent works
// (WhileWorking): at most every Every, and only after the agent printed
// something.
package changes

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/ctxtime"
	"github.com/runner-cli/runner/runner/messaging"
	"github.com/runner-cli/runner/runner/notice"
	"github.com/runner-cli/runner/runner/overlap"
	"github.com/runner-cli/runner/runner/record"
	"github.com/runner-cli/runner/runner/settings"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// Deps is what looking and recording need: the state and its record, the
// clock, the progress line, the task's git, its pane's tmux, whether a
// recorded process still lives, and a start for the supervisors of idle
// recipients.
type Deps struct {
	Store           *state.Store
	Book            record.Book
	Now             func() time.Time
	Say             func(format string, args ...any)
	Git             func(ctx context.Context, t *state.Task) (context.Context, error)
	PaneClient      func(ctx context.Context, t *state.Task) (Panes, error)
	Procs           messaging.Procs
	StartDeliveries func(ctx context.Context, ids []string) []error
}

// Panes is what PaneAlive asks of the tmux server of a task's pane: the
// pane and one of its options. A *tmuxctl.Client is one.
type Panes interface {
	Pane(ctx context.Context, pane string) (tmuxctl.PaneInfo, error)
	ShowOption(ctx context.Context, pane, name string) (string, error)
}

var _ Panes = (*tmuxctl.Client)(nil)

// changesTimeout bounds one look (a large repository, a slow host).
const changesTimeout = 30 * time.Second

// Track looks at what task id changed since its snapshot (in its work
// tree, on its host for a task there), records it when it changed, with
// the overlaps it makes with the other tasks of the repository, and tells
// the agents concerned. A task without a snapshot (not in git) has
// nothing to track.
func (d Deps) Track(ctx context.Context, id string) error {
	l, err := d.Look(ctx, id)
	if err != nil {
		return err
	}
	return l.Record(ctx)
}

// Look is what Deps.Look found: the task as it was read, and the files it
// changed (nil: nothing to track).
type Look struct {
	d  Deps
	t  *state.Task
	ch *state.Changes
}

// Look is Track's look, which records nothing: git, the long part, may
// run beside a write of the task's record.
func (d Deps) Look(ctx context.Context, id string) (*Look, error) {
	ctx, cancel := context.WithTimeout(ctx, changesTimeout)
	defer cancel()
	l := &Look{d: d}
	t, err := d.Book.Task(ctx, id)
	if err != nil {
		return nil, err
	}
	l.t = t
	if t.SnapshotRef == "" || t.Dir == "" {
		return l, nil
	}
	gctx, err := d.Git(ctx, t)
	if err != nil {
		return nil, err
	}
	keep := "" // a task on a host: a temporary index there
	if t.Tmux.Host == "" {
		keep = d.Store.TaskFile(state.FileChangesIndex, id)
	}
	cf, err := gitsnap.Changed(gctx, t.Dir, t.SnapshotRef, keep)
	if err != nil {
		return nil, fmt.Errorf("task %s: the files it changed: %w", id, err)
	}
	l.ch = &state.Changes{Repo: cf.CommonDir, Host: t.Tmux.Host, Files: cf.Paths[:min(len(cf.Paths), state.MaxChangedFiles)],
		Count: len(cf.Paths), Shared: t.Branch == "", Time: d.Now()}
	return l, nil
}

// Record records what l found, with the overlaps and the messages they
// make.
func (l *Look) Record(ctx context.Context) error {
	if l.ch == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, changesTimeout)
	defer cancel()
	d, t, ch, id := l.d, l.t, *l.ch, l.t.ID
	if c := t.Changes; c != nil && c.Repo == ch.Repo && c.Host == ch.Host && c.Count == ch.Count && c.Shared == ch.Shared && slices.Equal(c.Files, ch.Files) {
		return nil
	}
	if len(ch.Files) == 0 && len(t.Overlaps) == 0 {
		// Nothing changed and no overlap to undo: no other task is
		// concerned, so only this task's record changes (handed to the
		// lock's holder like any one-task change, without reading
		// every task).
		err := d.Store.UpdateTask(ctx, id, func(x *state.Task) error {
			if len(x.Overlaps) > 0 {
				return errOverlapsMoved
			}
			if x.Changes != nil {
				ch.Merged = x.Changes.Merged
			}
			x.Changes = &ch
			return nil
		})
		if !errors.Is(err, errOverlapsMoved) {
			if err != nil {
				return fmt.Errorf("task %s: record the files it changed: %w", id, err)
			}
			return nil
		}
		// Another task's look recorded an overlap meanwhile: the long way.
	}
	// Whether a done task's pane lives needs tmux, which must not run
	// under the lock: looked at first for each task these files may
	// meet, done or still working (it may be done by the update: this
	// task's own turn ends as its files are looked at). The overlaps, the
	// files told and the messages are then recorded in one update: a
	// message is never marked told and lost.
	alive := map[string]bool{}
	if pre, err := d.Store.Read(ctx); err == nil {
		for _, o := range mayBeTold(pre.TaskList(), id, ch) {
			alive[o.ID] = d.PaneAlive(ctx, o)
		}
	}
	now := d.Now()
	var tells []overlap.Tell
	var posts []*messaging.Posting
	var offers []offer
	if err := d.Store.Update(ctx, func(st *state.State) error {
		tells = overlap.Record(st, id, ch, overlap.Options{Now: now, Quiet: quietOverlaps})
		posts, offers = posts[:0], offers[:0]
		for _, tl := range tells {
			p := &messaging.Posting{Type: state.MessageUpdate, As: state.SenderRunner, Alive: alive, Now: now, Procs: d.Procs,
				Req: messaging.Request{To: tl.To, Type: state.MessageUpdate, Text: overlap.Text(tl, st.Task(tl.Other))}}
			if err := p.Post(st, []string{tl.To}); err != nil {
				return err
			}
			posts = append(posts, p)
			offers = append(offers, offersOf(st, p)...)
		}
		return nil
	}); err != nil {
		return fmt.Errorf("task %s: record the files it changed: %w", id, err)
	}
	for _, o := range offers {
		o.n.From = fileSize(d.Store.TaskFile(state.FileEvents, o.to))
		if err := notice.Offer(notice.Dir(d.Store.TaskFile(state.FileHookDir, o.to)), o.n); err != nil {
			d.Say("task %s: %v (it waits for the next turn)", o.to, err)
		}
	}
	return d.told(ctx, now, tells, posts)
}

// offer is a notice for a task whose turn runs.
type offer struct {
	to string
	n  notice.Notice
}

// offersOf lists the notices of posting p that can reach a turn running
// on this machine within that turn (package notice): its CLI's hook takes
// them, where it has a hook that adds context; else they wait.
func offersOf(st *state.State, p *messaging.Posting) []offer {
	var out []offer
	for _, o := range p.Outs {
		m, t := st.Messages[o.ID], st.Task(o.To)
		if m == nil || t == nil || m.Status != state.MessagePending || t.Tmux.Host != "" ||
			(t.Status != state.StatusRunning && t.Status != state.StatusNeedsInput) {
			continue
		}
		out = append(out, offer{to: t.ID, n: notice.Notice{Message: m.ID, Merged: m.Merged, Text: messaging.Prompt([]*state.Message{m})}})
	}
	return out
}

// fileSize is path's size, 0 when it cannot be read.
func fileSize(path string) int64 {
	if fi, err := os.Stat(path); err == nil {
		return fi.Size()
	}
	return 0
}

// errOverlapsMoved says Record's short way found overlaps recorded
// since it read the task.
var errOverlapsMoved = errors.New("overlaps recorded meanwhile")

// mayBeTold lists the tasks whose panes are looked at before the overlaps
// of task id's changes ch are recorded: id itself and the tasks whose
// changed files meet ch's, done or still working (any of them may be done
// when the overlaps are recorded, and a done task is told only if its
// pane lives).
func mayBeTold(tasks []*state.Task, id string, ch state.Changes) []*state.Task {
	var out []*state.Task
	for _, o := range tasks {
		if o.Status.IsTerminal() && o.Status != state.StatusDone {
			continue
		}
		if o.ID == id || (o.Changes != nil && o.Changes.Repo == ch.Repo && meets(o.Changes.Files, ch.Files)) {
			out = append(out, o)
		}
	}
	return out
}

// meets reports whether two sorted lists of paths share one.
func meets(a, b []string) bool {
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] == b[j]:
			return true
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return false
}

// quietOverlaps reports whether t's agent is not to be told of overlaps
// (dispatch --overlap-messages=false).
func quietOverlaps(t *state.Task) bool {
	set, err := settings.Of(t)
	return err == nil && set.NoOverlapMessages
}

// told journals the overlaps told and their messages (from runner,
// merged into one pending message per recipient, so an agent gets them in
// one turn), and starts a supervisor for each recipient whose agent was
// idle, which the posting claimed.
func (d Deps) told(ctx context.Context, now time.Time, tells []overlap.Tell, posts []*messaging.Posting) error {
	var start []string
	for i, p := range posts {
		tl := tells[i]
		d.Book.Journal(ctx, &state.Task{ID: tl.To}, "overlap", fmt.Sprintf("with %s: %s", tl.Other, strings.Join(tl.Files, ", ")))
		for _, o := range p.Outs {
			m := &state.Message{ID: o.ID, From: state.SenderRunner, To: o.To, Type: state.MessageUpdate}
			d.Book.JournalMessage(ctx, now, o.Result, m, o.Reason)
			if o.Result == messaging.Refused {
				d.Say("task %s: not told of its overlap with %s: %s", o.To, tl.Other, o.Reason)
			}
		}
		start = append(start, p.Start...)
	}
	if errs := d.StartDeliveries(ctx, start); len(errs) > 0 {
		return fmt.Errorf("tell the overlaps: %w", errs[0])
	}
	return nil
}

// PaneAlive reports whether t's pane lives and is still t's: its
// @runner_task option names t (the window's name may have been changed by
// the agent's title). Only tmux's word that the pane is gone, dead or
// another task's makes it false: a tmux call that fails otherwise (a
// server slow under load) is asked again, twice, and then the pane counts
// as alive — a message to a pane that is gone fails with its reason; one
// never posted is lost.
func (d Deps) PaneAlive(ctx context.Context, t *state.Task) bool {
	if t.Tmux.Pane == "" {
		return false
	}
	tc, err := d.PaneClient(ctx, t)
	if err != nil {
		return true // its server cannot be asked now: not known gone
	}
	gone := func(err error) bool {
		return errors.Is(err, tmuxctl.ErrNotFound) || errors.Is(err, tmuxctl.ErrPaneDead)
	}
	for try := 0; ; try++ {
		info, err := tc.Pane(ctx, t.Tmux.Pane)
		switch {
		case err == nil && info.Dead:
			return false
		case err == nil && info.WindowName == t.ID:
			return true
		case err == nil:
			v, oerr := tc.ShowOption(ctx, t.Tmux.Pane, "@runner_task")
			if oerr == nil {
				return v == t.ID
			}
			if gone(oerr) {
				return false
			}
		case gone(err):
			return false
		}
		if try >= 2 || ctxtime.Sleep(ctx, 100*time.Millisecond) != nil {
			return true
		}
	}
}

// Every is how often a supervisor looks at its task's files while the
// agent works: only when its pane showed output since the last look, so an
// agent that waits costs nothing.
const Every = 3 * time.Second

// WhileWorking calls look at most every Every while the agent's pane shows
// output (wrote is signalled as its transcript grows), and less often when
// a look is slow, until stop is called. A quiet agent wakes it not once:
// no timer runs meanwhile. A look under way finishes (stop waits for it):
// cut short, it could leave overlaps recorded and untold.
func WhileWorking(ctx context.Context, wrote <-chan struct{}, look func(context.Context)) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		looked := clock.Now() // the first look comes a pause after the start, not at the prompt's echo
		var due <-chan time.Time
		next := Every
		for {
			select {
			case <-ctx.Done():
				return
			case <-wrote:
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
			look(context.WithoutCancel(ctx))
			// A look costs at most a 20th of the time between looks (a
			// huge repository, a slow host).
			next = max(Every, 20*clock.Since(looked))
		}
	}()
	return func() { cancel(); <-done }
}
