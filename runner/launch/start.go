// Package launch starts a queued task: its snapshot, its worktree, its
// agent's pane, and the record of it starting, in the order that keeps
// the snapshot true to the tree the task found. It asks the machine the
// task runs on through a Machine (package runner gives one on its Env:
// the pane on the task's site, git there) and writes through the task
// record (package record) it is given.
package launch

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/deps"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/placement"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/record"
	"github.com/runner-cli/runner/runner/settings"
	wtsetup "github.com/runner-cli/runner/runner/worktree/setup"
	"github.com/runner-cli/runner/state"
)

// Machine is what a start asks of the machine its task runs on.
type Machine interface {
	// SnapshotDir is the directory whose state t starts from: its own,
	// or with --from the other task's worktree (its leftovers committed).
	SnapshotDir(ctx context.Context, t *state.Task, spec *settings.Start) (string, error)
	// Git is ctx for gitsnap calls on t's machine.
	Git(ctx context.Context, t *state.Task) (context.Context, error)
	// Files makes the files of task id ready for its pane.
	Files(id string) error
	// KeptIndex is the index file on which the files task id changes are
	// looked at (runner/changes), which its snapshot seeds; "" for none.
	KeptIndex(id string) string
	// Pane launches t's agent in its pane, not yet recorded.
	Pane(ctx context.Context, t *state.Task, prof *profile.Profile, spec *settings.Start) (*Pane, error)
	// Worktree makes t's worktree at snap (package worktree/setup).
	Worktree(ctx context.Context, t *state.Task, snap *gitsnap.Snapshot, setup *config.WorktreeSetup) (wtsetup.Made, error)
}

// Pane is an agent's pane launched, not yet recorded.
type Pane struct {
	// ID is the pane's tmux id (%N).
	ID string
	// Record sets the pane on the task (and says where it runs, and that
	// it is sandboxed, in its last status's reason).
	Record func(*state.Task)
	// Close closes the pane's window (an agent not to run after all).
	Close func(context.Context) error
}

// Start takes the snapshot and launches the agent of queued task t: the
// task becomes starting with its pane. A task that is no longer queued (a
// user cancelled it meanwhile) is not started (a pane launched meanwhile
// is closed); a start that fails is recorded (placement.FailStart).
//
// In a shared tree the snapshot is taken while the agent starts: the task
// is delivered only after both, so the snapshot holds the tree as the task
// found it (what an agent's own start-up writes there, which none of the
// built-in CLIs does, may or may not be in it). Begin's caller may deliver
// once the snapshot is captured (the work tree's state fixed in a private
// index: gitsnap.Capture), its commit and ref written beside the first
// turn (Started.Committed); Start waits for them. A worktree is made from
// the snapshot, so the agent starts after it; so does a sandboxed agent:
// it is not trusted, and a file it wrote as it started would otherwise
// be in the snapshot, hidden from the task's diff and kept by a restore.
func Start(ctx context.Context, m Machine, book record.Book, t *state.Task, prof *profile.Profile, spec *settings.Start) error {
	st, err := Begin(ctx, m, book, t, prof, spec)
	if err != nil {
		return err
	}
	return st.End(ctx)
}

// Started is a start under way (Begin): in a shared tree, the agent's
// pane launched (PaneID) while its snapshot is still being taken; Finish
// waits for the snapshot and records the task starting.
type Started struct {
	// PaneID is the pane launched beside the snapshot; "" when the start
	// is whole already (a worktree, a sandbox: the agent starts after the
	// snapshot, and Begin did it all).
	PaneID string
	// SnapshotRef is the snapshot's ref, once the snapshot is taken ("":
	// none).
	SnapshotRef string
	// snapped is closed once the snapshot is taken.
	snapped chan struct{}
	// prepare waits for the snapshot and makes the change that records
	// the task starting; a snapshot the task cannot go without fails the
	// start (recorded, the pane closed) and is the error. Done once.
	prepare  func(context.Context) (func(*state.Task) error, error)
	prepOnce sync.Once
	change   func(*state.Task) error
	prepErr  error
	// commit is the commit of the snapshot captured for the start
	// (gitsnap.Captured), written beside it; nil: none follows the start.
	commit *commitment
	// write writes the change (closing the pane when it cannot be).
	write func(context.Context, func(*state.Task) error) error
	mu    sync.Mutex
	ended bool // recorded (or failed): by Finish, or by the caller (Recorded)
	err   error
}

// Snapped is closed once the snapshot of a start under way is taken (nil
// for a start Begin did whole).
func (s *Started) Snapped() <-chan struct{} { return s.snapped }

// Change waits for the snapshot and returns the change that records the
// task starting (its snapshot, its pane) for a caller that writes it with
// a change of its own, then says so (Recorded); a snapshot the task
// cannot go without fails the start as Finish does and is the error. Nil
// for a start Begin did whole.
func (s *Started) Change(ctx context.Context) (func(*state.Task) error, error) {
	if s.prepare == nil {
		return nil, nil
	}
	s.prepOnce.Do(func() { s.change, s.prepErr = s.prepare(ctx) })
	return s.change, s.prepErr
}

// Committed waits for the commit of the snapshot captured as the task
// started, which is written beside the agent's start and first turn (nil
// at once when none follows: a start Begin did whole, or a snapshot not
// taken). The snapshot is the tree the task found either way: it was
// fixed (captured) before anything was delivered. A commit that failed
// leaves the task without a snapshot: its record's ref is cleared and the
// failure journaled, once, and it is the error. A turn's end is recorded
// only after it (what the task changed is looked at from the snapshot).
func (s *Started) Committed(ctx context.Context) error {
	if s == nil || s.commit == nil {
		return nil
	}
	return s.commit.wait(ctx)
}

// End is Finish, then the wait for the snapshot's commit (Committed),
// whose failure, recorded, is no error of the start's: a supervision
// that ends, or a start that fails, leaves no commit behind.
func (s *Started) End(ctx context.Context) error {
	err := s.Finish(ctx)
	_ = s.Committed(context.WithoutCancel(ctx))
	return err
}

// AfterCommit is look, made to wait for the snapshot's commit first
// (Committed): a look at what the task changed starts from the snapshot.
// After a failed commit (recorded) there is none, and it looks at
// nothing.
func (s *Started) AfterCommit(look func(context.Context)) func(context.Context) {
	return func(ctx context.Context) {
		if s.Committed(ctx) == nil {
			look(ctx)
		}
	}
}

// commitment is a snapshot's commit under way (Captured.Commit).
type commitment struct {
	done chan struct{} // closed when the commit is written or failed
	err  error
	// unsnap records that the task has no snapshot after all (err), once.
	unsnap func(ctx context.Context, err error)
	once   sync.Once
}

// wait waits for the commit, and records its failure (once).
func (c *commitment) wait(ctx context.Context) error {
	select {
	case <-c.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	if c.err != nil {
		c.once.Do(func() { c.unsnap(context.WithoutCancel(ctx), c.err) })
	}
	return c.err
}

// Recorded says that the change Change returned was written: Finish has
// nothing left to do.
func (s *Started) Recorded() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ended = true
}

// Finish waits for the snapshot of a start Begin left under way and
// records the task starting, as Start does, unless that was recorded
// already (Recorded); a start that fails is recorded (placement.FailStart)
// and its pane closed. It is done once: a second call returns the first
// one's error.
func (s *Started) Finish(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended || s.prepare == nil {
		return s.err
	}
	change, err := s.Change(ctx)
	if err == nil {
		err = s.write(ctx, change)
	}
	s.ended, s.err = true, err
	return err
}

// Begin is Start up to the pane: in a shared tree without a sandbox, it
// returns as soon as the agent's pane is launched, the snapshot still
// being taken beside it, so that the caller can watch the agent start
// meanwhile; the task is recorded starting (with its snapshot and pane)
// only by Started.Finish, which the caller must call before it delivers
// anything to the agent or records anything else of the task. Elsewhere
// Begin does the whole start and Finish has nothing left to do.
func Begin(ctx context.Context, m Machine, book record.Book, t *state.Task, prof *profile.Profile, spec *settings.Start) (*Started, error) {
	fail := func(err error, why string) error {
		placement.FailStart(context.WithoutCancel(ctx), book, t, why+err.Error())
		return err
	}
	snapDir, err := m.SnapshotDir(ctx, t, spec)
	if err != nil {
		return nil, fail(err, "")
	}
	gctx, err := m.Git(ctx, t)
	if err != nil {
		return nil, fail(err, "")
	}
	snapOptions := func() gitsnap.Options {
		opts := gitsnap.Options{ID: t.ID, Label: "before " + textutil.Headline(t.Text, 100)}
		if !spec.Worktree && snapDir == t.Dir {
			// The task works in the tree snapshotted: the look at the
			// files it changed starts from the snapshot's index.
			opts.Keep = m.KeptIndex(t.ID)
		}
		return opts
	}
	take := func() (*gitsnap.Snapshot, error) {
		if spec.Snapshot != "" {
			return gitsnap.Alias(gctx, snapDir, spec.Snapshot, t.ID)
		}
		return gitsnap.Take(gctx, snapDir, snapOptions())
	}
	if spec.Worktree || spec.Sandbox != nil {
		snap, snapErr := take()
		return &Started{}, finishStart(ctx, m, book, t, prof, spec, gctx, snap, snapErr)
	}
	snapping := snapBeside(gctx, spec.Snapshot != "" || spec.RequireSnapshot, take,
		func() (*gitsnap.Captured, error) { return gitsnap.Capture(gctx, snapDir, snapOptions()) })
	snapping.commit.unsnap = func(ctx context.Context, err error) { unsnap(ctx, book, t.ID, refOf(t.ID), err) }
	done := snapping.done
	// A start that fails here leaves no snapshot half written (its
	// private index, its ref) to a process about to exit.
	if err := m.Files(t.ID); err != nil {
		<-snapping.commit.done
		return nil, fail(err, "")
	}
	pane, err := m.Pane(ctx, t, prof, spec)
	if err != nil {
		<-snapping.commit.done
		return nil, fail(fmt.Errorf("launch failed: %w", err), "")
	}
	st := &Started{PaneID: pane.ID, snapped: done, commit: snapping.commit}
	st.prepare = func(ctx context.Context) (func(*state.Task) error, error) {
		snapRef, snapNote, err := snapping.outcome(spec)
		if err != nil {
			_ = pane.Close(context.WithoutCancel(ctx))
			placement.FailStart(context.WithoutCancel(ctx), book, t, "no snapshot: "+snapping.err.Error())
			return nil, err
		}
		t.SnapshotRef, st.SnapshotRef = snapRef, snapRef
		return startingChange(book, snapRef, snapNote, wtsetup.Made{}, pane), nil
	}
	st.write = func(ctx context.Context, change func(*state.Task) error) error {
		err := book.UpdateTaskDurably(ctx, "task "+t.ID+": starting", t.ID, change)
		if err != nil {
			_ = pane.Close(context.WithoutCancel(ctx))
		}
		return err
	}
	return st, nil
}

// snapping is a snapshot under way beside a pane's launch (Begin).
type snapping struct {
	done     chan struct{}     // closed once captured (or taken whole), or failed
	snap     *gitsnap.Snapshot // taken whole
	captured *gitsnap.Captured // captured, its commit under way (commit)
	err      error             // the capture (or the whole take) failed
	commit   *commitment
}

// snapBeside starts a snapshot beside the pane's launch: its work tree is
// fixed (capture), and the task may be delivered after that; its commit
// follows beside the agent's start (Started.Committed). A snapshot the
// task needs (--require-snapshot) or one named (--snapshot) is taken
// whole first (whole, take).
func snapBeside(gctx context.Context, whole bool, take func() (*gitsnap.Snapshot, error), capture func() (*gitsnap.Captured, error)) *snapping {
	s := &snapping{done: make(chan struct{}), commit: &commitment{done: make(chan struct{})}}
	go func() {
		defer close(s.commit.done)
		if whole {
			s.snap, s.err = take()
			close(s.done)
			return
		}
		s.captured, s.err = capture()
		close(s.done)
		if s.captured != nil {
			_, s.commit.err = s.captured.Commit(context.WithoutCancel(gctx))
		}
	}()
	return s
}

// outcome waits for the snapshot's capture and is what the record says
// of it (snapshotOutcome).
func (s *snapping) outcome(spec *settings.Start) (ref, note string, err error) {
	<-s.done
	if s.captured != nil {
		ref = s.captured.Ref()
		return ref, fmt.Sprintf("snapshot %s (%s)", ref, s.captured.Took().Round(time.Millisecond)), nil
	}
	return snapshotOutcome(s.snap, s.err, spec)
}

// finishStart is the start of an agent that starts after its snapshot (a
// worktree, a sandbox), once the snapshot (snap, or snapErr) was taken:
// the worktree, the record of the task starting, and the agent's launch.
func finishStart(ctx context.Context, m Machine, book record.Book, t *state.Task, prof *profile.Profile, spec *settings.Start,
	gctx context.Context, snap *gitsnap.Snapshot, snapErr error) error {
	fail := func(err error, why string) error {
		placement.FailStart(context.WithoutCancel(ctx), book, t, why+err.Error())
		return err
	}
	snapRef, snapNote, err := snapshotOutcome(snap, snapErr, spec)
	if err != nil {
		placement.FailStart(context.WithoutCancel(ctx), book, t, "no snapshot: "+snapErr.Error())
		return err
	}
	var wt wtsetup.Made
	if spec.Worktree {
		if wt, err = m.Worktree(gctx, t, snap, spec.Setup); err != nil {
			return fail(err, "worktree: ")
		}
		snapNote += "; worktree " + wt.Dir + " on branch " + wt.Branch
	}
	if err := recordStarting(ctx, book, t.ID, snapRef, snapNote, wt, nil); err != nil {
		return err
	}
	if wt.Branch != "" {
		t.Origin, t.Dir, t.Branch = t.Dir, wt.Dir, wt.Branch
	}
	if err := m.Files(t.ID); err != nil {
		return err
	}
	if err := Launch(ctx, m, book, t, prof, spec); err != nil {
		return fail(err, "launch failed: ")
	}
	return nil
}

// Launch starts t's agent in its pane (Machine.Pane) and records the pane.
func Launch(ctx context.Context, m Machine, book record.Book, t *state.Task, prof *profile.Profile, spec *settings.Start) error {
	p, err := m.Pane(ctx, t, prof, spec)
	if err != nil {
		return err
	}
	return book.Update(ctx, t.ID, p.Record)
}

// unsnap records that task id has no snapshot after all: the commit of
// the snapshot captured for its start failed (err). The ref its record
// names is cleared, and the failure journaled (the supervision says it).
func unsnap(ctx context.Context, book record.Book, id, ref string, err error) {
	reason := "snapshot: its commit failed after its capture: " + err.Error() + "; the task has no snapshot"
	_ = book.Update(ctx, id, func(t *state.Task) {
		if t.SnapshotRef == ref {
			t.SnapshotRef = ""
		}
	})
	if t, terr := book.Task(ctx, id); terr == nil {
		book.Journal(ctx, t, "snapshot-failed", reason)
	}
}

// refOf is the ref of task id's snapshot, once taken.
func refOf(id string) string { return gitsnap.RefPrefix + id }

// snapshotOutcome is what the record says of the snapshot: its ref and a
// note, or, when the task needs one (--require-snapshot, --worktree), the
// usage error that ends it.
func snapshotOutcome(snap *gitsnap.Snapshot, snapErr error, spec *settings.Start) (ref, note string, err error) {
	switch {
	case snapErr == nil:
		return snap.Ref, fmt.Sprintf("snapshot %s (%s)", snap.Ref, snap.Duration.Round(time.Millisecond)), nil
	case spec.RequireSnapshot || spec.Worktree:
		flag := "--require-snapshot"
		if spec.Worktree {
			flag = "--worktree"
		}
		return "", "", fault.Usagef("%s: %v", flag, snapErr)
	}
	return "", "no snapshot: " + snapshotReason(snapErr), nil
}

// recordStarting records the task starting: its snapshot, its worktree,
// and the pane launched beside the snapshot (if one was), in one write;
// a task that left the queue meanwhile (cancelled) is an *deps.LeftQueueError.
func recordStarting(ctx context.Context, book record.Book, id, snapRef, snapNote string, wt wtsetup.Made, pane *Pane) error {
	return book.UpdateTaskDurably(ctx, "task "+id+": starting", id, startingChange(book, snapRef, snapNote, wt, pane))
}

// startingChange is the change that records a task starting (recordStarting).
func startingChange(book record.Book, snapRef, snapNote string, wt wtsetup.Made, pane *Pane) func(*state.Task) error {
	return func(t *state.Task) error {
		if t.Status != state.StatusQueued {
			return &deps.LeftQueueError{Task: t}
		}
		t.SnapshotRef = snapRef
		if wt.Branch != "" {
			t.Origin, t.Dir, t.Branch = t.Dir, wt.Dir, wt.Branch
		}
		now := clock.Now
		if book.Now != nil {
			now = book.Now
		}
		if err := t.SetStatus(state.StatusStarting, now(), snapNote); err != nil {
			return err
		}
		if pane != nil {
			pane.Record(t) // the pane, in the same write
		}
		return nil
	}
}

func snapshotReason(err error) string {
	switch {
	case errors.Is(err, gitsnap.ErrNotRepo):
		return "not a git repository"
	case errors.Is(err, gitsnap.ErrBareRepo):
		return "a bare repository"
	case errors.Is(err, gitsnap.ErrGitMissing):
		return "git is not installed"
	}
	return err.Error()
}
