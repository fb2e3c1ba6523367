// What each task changed, and the overlaps between tasks (package
// overlap's rule): the files looked at as a task works and at each turn's
// end, recorded, and told to the agents concerned as messages from runner,
// which the usual queue delivers at their next idle.

package runner

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
	"github.com/runner-cli/runner/runner/overlap"
	"github.com/runner-cli/runner/runner/reconcile"
	"github.com/runner-cli/runner/runner/settings"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// ChangesEvery is how often a supervisor looks at its task's files while
// the agent works: only when its pane showed output since the last look,
// so an agent that waits costs nothing.
const ChangesEvery = 3 * time.Second

// changesTimeout bounds one look (a large repository, a slow host).
const changesTimeout = 30 * time.Second

// TrackChanges looks at what task id changed since its snapshot (in its
// work tree, on its host for a task there), records it when it changed,
// with the overlaps it makes with the other tasks of the repository, and
// tells the agents concerned. A task without a snapshot (not in git) has
// nothing to track.
func TrackChanges(ctx context.Context, env *Env, id string) error {
	l, err := lookAtChanges(ctx, env, id)
	if err != nil {
		return err
	}
	return l.record(ctx)
}

// changesLook is what lookAtChanges found: the task as it was read, and
// the files it changed (nil: nothing to track).
type changesLook struct {
	env *Env
	t   *state.Task
	ch  *state.Changes
}

// lookAtChanges is TrackChanges's look, which records nothing: git, the
// long part, may run beside a write of the task's record.
func lookAtChanges(ctx context.Context, env *Env, id string) (*changesLook, error) {
	ctx, cancel := context.WithTimeout(ctx, changesTimeout)
	defer cancel()
	l := &changesLook{env: env}
	t, err := env.Record().Task(ctx, id)
	if err != nil {
		return nil, err
	}
	l.t = t
	if t.SnapshotRef == "" || t.Dir == "" {
		return l, nil
	}
	gctx, err := env.GitContext(ctx, t)
	if err != nil {
		return nil, err
	}
	keep := "" // a task on a host: a temporary index there
	if t.Tmux.Host == "" {
		keep = env.Store.TaskFile("changes-index", id)
	}
	cf, err := gitsnap.Changed(gctx, t.Dir, t.SnapshotRef, keep)
	if err != nil {
		return nil, fmt.Errorf("task %s: the files it changed: %w", id, err)
	}
	l.ch = &state.Changes{Repo: cf.CommonDir, Host: t.Tmux.Host, Files: cf.Paths[:min(len(cf.Paths), state.MaxChangedFiles)],
		Count: len(cf.Paths), Shared: t.Branch == "", Time: env.Time()}
	return l, nil
}

// record records what l found, with the overlaps and the messages they
// make.
func (l *changesLook) record(ctx context.Context) error {
	if l.ch == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, changesTimeout)
	defer cancel()
	env, t, ch, id := l.env, l.t, *l.ch, l.t.ID
	if c := t.Changes; c != nil && c.Repo == ch.Repo && c.Host == ch.Host && c.Count == ch.Count && c.Shared == ch.Shared && slices.Equal(c.Files, ch.Files) {
		return nil
	}
	if len(ch.Files) == 0 && len(t.Overlaps) == 0 {
		// Nothing changed and no overlap to undo: no other task is
		// concerned, so only this task's record changes (handed to the
		// lock's holder like any one-task change, without reading
		// every task).
		err := env.Store.UpdateTask(ctx, id, func(x *state.Task) error {
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
	if pre, err := env.Store.Read(ctx); err == nil {
		for _, o := range mayBeTold(pre.TaskList(), id, ch) {
			alive[o.ID] = taskPaneAlive(ctx, env, o)
		}
	}
	now := env.Time()
	var tells []overlap.Tell
	var posts []*messaging.Posting
	if err := env.Store.Update(ctx, func(st *state.State) error {
		tells = overlap.Record(st, id, ch, overlap.Options{Now: now, Quiet: quietOverlaps})
		posts = posts[:0]
		for _, tl := range tells {
			p := &messaging.Posting{Type: state.MessageUpdate, As: state.SenderRunner, Alive: alive, Now: now, Procs: reconcile.LiveProcs{},
				Req: messaging.Request{To: tl.To, Type: state.MessageUpdate, Text: overlap.Text(tl, st.Task(tl.Other))}}
			if err := p.Post(st, []string{tl.To}); err != nil {
				return err
			}
			posts = append(posts, p)
		}
		return nil
	}); err != nil {
		return fmt.Errorf("task %s: record the files it changed: %w", id, err)
	}
	return toldOverlaps(ctx, env, now, tells, posts)
}

// errOverlapsMoved says TrackChanges's short way found overlaps recorded
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

// toldOverlaps journals the overlaps told and their messages (from runner,
// merged into one pending message per recipient, so an agent gets them in
// one turn), and starts a supervisor for each recipient whose agent was
// idle, which the posting claimed.
func toldOverlaps(ctx context.Context, env *Env, now time.Time, tells []overlap.Tell, posts []*messaging.Posting) error {
	var start []string
	for i, p := range posts {
		tl := tells[i]
		env.Record().Journal(ctx, &state.Task{ID: tl.To}, "overlap", fmt.Sprintf("with %s: %s", tl.Other, strings.Join(tl.Files, ", ")))
		for _, o := range p.Outs {
			m := &state.Message{ID: o.ID, From: state.SenderRunner, To: o.To, Type: state.MessageUpdate}
			env.Record().JournalMessage(ctx, now, o.Result, m, o.Reason)
			if o.Result == messaging.Refused {
				env.Say("task %s: not told of its overlap with %s: %s", o.To, tl.Other, o.Reason)
			}
		}
		start = append(start, p.Start...)
	}
	if errs := StartDeliveries(ctx, env, start); len(errs) > 0 {
		return fmt.Errorf("tell the overlaps: %w", errs[0])
	}
	return nil
}

// taskPaneAlive reports whether t's pane lives and is still t's: its
// @runner_task option names t (the window's name may have been changed by
// the agent's title). Only tmux's word that the pane is gone, dead or
// another task's makes it false: a tmux call that fails otherwise (a
// server slow under load) is asked again, twice, and then the pane counts
// as alive — a message to a pane that is gone fails with its reason; one
// never posted is lost.
func taskPaneAlive(ctx context.Context, env *Env, t *state.Task) bool {
	if t.Tmux.Pane == "" {
		return false
	}
	tc, err := env.PaneClient(ctx, t)
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
