// Package taskbook is a task's record in the state as the supervisor
// reads and writes it (supervisor.Book and supervisor.Ender): the turn's
// end with the queue looked at in the same update, the budgets judged on
// what a turn used, the commit, the release. What it needs of the rest of
// runner (the notification, git on the task's machine, the look at the
// files changed, stopping a tree over its budget) it is given as
// functions by package runner, which makes one per supervision.
package taskbook

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/runner/budget"
	"github.com/runner-cli/runner/runner/changes"
	"github.com/runner-cli/runner/runner/messaging"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/reconcile"
	"github.com/runner-cli/runner/runner/record"
	"github.com/runner-cli/runner/runner/settings"
	"github.com/runner-cli/runner/runner/supervisor"
	"github.com/runner-cli/runner/state"
)

// Book is task ID's record as a supervisor.Ender: what the supervisor
// reads and writes through while it drives the task's turns.
type Book struct {
	ID      string
	Profile *profile.Profile
	Set     settings.Run
	// Record writes the task record (its Store, its clock).
	Record record.Book
	// Log tells the user (the supervisor's log, or the terminal).
	Log func(format string, args ...any)
	// Tell runs the task's notification for its current status.
	Tell func(ctx context.Context, t *state.Task)
	// Git is ctx for gitsnap calls on t's work tree (on its host for a
	// task there).
	Git func(ctx context.Context, t *state.Task) (context.Context, error)
	// Look looks at what task id changed since its snapshot.
	Look func(ctx context.Context, id string) (*changes.Look, error)
	// StopForBudget ends the tasks a passed budget stops.
	StopForBudget func(ctx context.Context, stops []budget.Stop)
	// Free lets go of what the supervision holds besides the record (the
	// project lock of dispatch --exclusive); nil: nothing. Called by
	// LetGo, before the end it goes with is written; a second call does
	// nothing.
	Free func()
}

var _ supervisor.Ender = (*Book)(nil)

func (b *Book) now() time.Time {
	if b.Record.Now != nil {
		return b.Record.Now()
	}
	return clock.Now()
}

func (b *Book) Task(ctx context.Context) (*state.Task, error) {
	return b.Record.Task(ctx, b.ID)
}

func (b *Book) Update(ctx context.Context, fn func(*state.Task)) error {
	return b.Record.Update(ctx, b.ID, fn)
}

func (b *Book) SetStatus(ctx context.Context, st state.Status, reason string, fn func(*state.Task)) error {
	return b.Record.SetStatus(ctx, b.ID, st, reason, fn)
}

func (b *Book) Journal(ctx context.Context, kind, text string) {
	if t, err := b.Record.Task(ctx, b.ID); err == nil {
		b.Record.Journal(ctx, t, kind, text)
	}
}

func (b *Book) Say(format string, args ...any) { b.Log(format, args...) }

func (b *Book) Notify(ctx context.Context, t *state.Task) { b.Tell(ctx, t) }

func (b *Book) Now() time.Time { return b.now() }

// Prompt puts the awareness block (what the other tasks are doing) ahead
// of a first turn's text, unless the task's settings or its agent's
// profile turn it off, and counts the turn about to be delivered: in the
// state update that checks the budget (budget.Over), before the paste, so
// that what the turn itself does at once (a child it dispatches, whose
// first turn is checked against the same tree) sees it counted, and two
// deliveries in one tree cannot both take the last turn. A delivery that
// fails after this stays counted: the budget is never passed. ready (nil:
// none) is the ready status the supervisor found and left to this write
// (supervisor.Supervisor.FoldReady): recorded first, unless the task moved
// on meanwhile, even when the budget allows no turn; and ahead of it, when
// the ready status carries it, the record of the task starting. The
// update reads the index and only the records it needs (the task, its
// budget's tree, the tasks the block shows): its cost does not grow with
// the day's other tasks the index carries.
func (b *Book) Prompt(ctx context.Context, text string, first bool, ready *supervisor.Ready) (string, *state.Task, error) {
	var (
		t     *state.Task
		over  string
		block string
	)
	err := b.Record.Store.UpdateIndex(ctx, func(st *state.State) error {
		t = st.Task(b.ID)
		if t == nil {
			return fmt.Errorf("task %s: %w", b.ID, state.ErrTaskNotFound)
		}
		at := time.Time{}
		if ready != nil && ready.Start != nil {
			// The start, folded into this write: recorded first.
			if err := ready.Start(t); err != nil {
				return err
			}
			at = b.now()
		}
		readied := ready != nil && (t.Status == state.StatusStarting || t.Status == state.StatusQueued)
		if readied {
			if at.IsZero() {
				at = ready.At
			}
			_ = t.SetStatus(state.StatusReady, at, ready.Reason)
		}
		if over, _ = budget.Over(st, b.ID, settings.BudgetOf, false); over != "" {
			if readied {
				return nil // the ready status alone
			}
			return errNoTurn
		}
		t.TurnCount++
		if first && b.Set.Awareness != messaging.AwarenessOff && !b.Profile.NoAwareness {
			block = messaging.RenderAwareness(st, t, messaging.AwarenessOptions{Mode: b.Set.Awareness, MaxChars: b.Set.AwarenessMax, Now: b.now()})
		}
		c := *t
		t = &c
		return nil
	})
	if err == nil && ready != nil && ready.Recorded != nil {
		ready.Recorded()
	}
	if over != "" {
		return "", nil, &supervisor.Ended{Outcome: supervisor.Outcome{Status: state.StatusFailed, Reason: over}}
	}
	if err != nil {
		return "", nil, err
	}
	if block != "" {
		text = block + "\n" + text
	}
	return text, t, nil
}

// errNoTurn leaves Prompt's update unwritten: the budget allows no turn.
var errNoTurn = errors.New("no turn left in the budget")

func (b *Book) Pending(ctx context.Context) int {
	st, err := b.Record.Store.Read(ctx)
	if err != nil {
		return 0
	}
	return messaging.TurnMessages(st, b.ID)
}

// LetGo, inside the update that records t's end, lets go of the task: the
// project lock first (Free), then the record's supervisor (when it is this
// process), so that whoever reads the end finds the task free: `runner
// wait X && runner dispatch --exclusive`, `&& runner resume X`, `&& runner
// send X` never meet a busy task. A message posted after the end finds no
// supervisor and starts the next turn itself (messaging.Post).
func (b *Book) LetGo(t *state.Task) {
	if b.Free != nil {
		b.Free()
	}
	if t.SupervisorPID == os.Getpid() {
		t.SupervisorPID, t.SupervisorStart = 0, ""
	}
}

// EndTurn records the end of the turn and looks at the queue in one update:
// a message that arrives while the agent works is either seen here (more >
// 0: delivered as the next turn) or waits in the queue; else the task is
// let go of (LetGo) with the record of its end, and a message that comes
// after starts a turn of its own. Like Prompt's, the update reads only the
// records it needs, so the end is recorded as soon with a busy index as
// with an empty one.
func (b *Book) EndTurn(ctx context.Context, o supervisor.Outcome, tt supervisor.TurnText, takeQueue bool) (more int, final *state.Task) {
	SettleNotices(ctx, b.Record, b.ID)
	var dropped []*state.Message
	var stop []budget.Stop
	turn := o
	_ = b.Record.UpdateIndexDurably(ctx, "task "+b.ID+": the end of the turn ("+string(o.Status)+")", func(st *state.State) error {
		more, final, dropped, stop, o = 0, nil, nil, nil, turn
		t := st.Task(b.ID)
		if t == nil {
			return nil
		}
		if t.Status.IsTerminal() {
			// A cancel from another process (or a budget another task's
			// turn passed) wins; what the turn used is counted all the
			// same.
			t.EndLive(tt.Spend)
			b.LetGo(t)
			return nil
		}
		b.recordTurn(t, o, tt)
		if o.Status == state.StatusDone {
			// The turn's spend reached a budget of the task's tree: the
			// task ends, and so do the turns running in that tree.
			if why, root := budget.Over(st, b.ID, settings.BudgetOf, true); why != "" {
				o.Status, o.Reason = state.StatusFailed, why
				stop = budget.LiveInTree(st, root, b.ID)
			}
		}
		if o.Status == state.StatusDone && takeQueue {
			if more = messaging.TurnMessages(st, b.ID); more > 0 {
				return t.SetStatus(state.StatusReady, b.now(), fmt.Sprintf("turn done (%s); %d message(s) to deliver", o.Reason, more))
			}
		}
		if o.Status == state.StatusLimited {
			// The task goes on after the reset (--on-limit wait), or ends
			// failed "limited: …" (--on-limit fail, which drops the queue
			// then): its messages wait.
			t.LimitReset = o.Reset
			reason := o.Reason
			if b.Set.OnLimit == settings.OnLimitWait {
				reason += "; waiting it out (--on-limit wait)"
			}
			// else the supervision records it failed next (and lets go
			// then).
			err := t.SetStatus(o.Status, b.now(), reason)
			c := *t
			final = &c
			return err
		}
		if o.Status != state.StatusDone {
			dropped = messaging.DropQueue(st, b.ID, b.now(), fmt.Sprintf("task %s ended %s before taking it", b.ID, o.Status), reconcile.LiveProcs{})
		}
		b.LetGo(t)
		err := t.SetStatus(o.Status, b.now(), o.Reason)
		c := *t
		final = &c
		return err
	})
	b.Record.JournalDropped(ctx, dropped)
	b.StopForBudget(ctx, stop)
	if more > 0 {
		final = nil
	}
	return more, final
}

// recordTurn records in t what the turn that ended with o said and used
// (EndTurn's), after its delivery when that was left to this write
// (TurnText.Delivered).
func (b *Book) recordTurn(t *state.Task, o supervisor.Outcome, tt supervisor.TurnText) {
	if tt.Delivered != nil {
		tt.Delivered(t) // the turn's delivery, recorded first (Supervisor.FoldRunning)
	}
	t.ResultTail = tt.ResultTail()
	t.ExitCode, t.Question, t.Answer = o.Code, "", tt.Answer
	if tt.Session != "" {
		t.AgentSession = tt.Session
	}
	switch {
	case tt.SpendLater != nil && (tt.Summary != "" || tt.Answer != ""):
		t.AddTurnPending(b.now(), tt.Summary, tt.Answer)
	case tt.SpendLater != nil:
		// counted by TurnSpent
	case tt.Summary != "" || tt.Answer != "":
		t.AddTurnSpent(b.now(), tt.Summary, tt.Answer, tt.Spend)
	default:
		t.EndLive(tt.Spend)
	}
}

// Commit runs the post-task commit protocol and records its outcome.
func (b *Book) Commit(ctx context.Context) {
	t, err := b.Record.Task(ctx, b.ID)
	if err != nil {
		return
	}
	opts := gitsnap.CommitOptions{TaskID: t.ID, Task: t.Text, Project: t.Project, Agent: t.Agent,
		Branch: b.Set.CommitBranch, All: b.Set.CommitAll}
	if t.Branch != "" {
		// A worktree task commits on its own branch, which started at the
		// snapshot (with the user's uncommitted work in it).
		opts.Branch, opts.All, opts.Snapshot = false, true, t.ID
	}
	var res *gitsnap.CommitResult
	gctx, err := b.Git(ctx, t)
	if err == nil {
		res, err = gitsnap.Commit(gctx, t.Dir, opts)
	}
	note := ""
	switch {
	case errors.Is(err, gitsnap.ErrDirtyAtSnapshot):
		note = "no commit: " + err.Error() + " (dispatch --commit-all commits everything)"
	case errors.Is(err, gitsnap.ErrDetachedHead):
		note = "no commit: " + err.Error() + " (dispatch --commit-branch commits on runner/" + t.ID + ")"
	case err != nil:
		note = "no commit: " + err.Error()
	case res.Outcome == gitsnap.NothingToCommit:
		note = "no commit: nothing changed"
	default:
		note = fmt.Sprintf("committed %s on %s", shortHash(res.Commit), res.Branch)
	}
	_ = b.Record.Update(ctx, b.ID, func(t *state.Task) {
		if res != nil {
			t.Commit = res.Commit
		}
		t.History = append(t.History, state.StatusChange{Status: t.Status, Time: b.now(), Reason: note})
	})
	b.Record.Journal(ctx, t, "commit", note)
	b.Say("task %s: %s", b.ID, note)
}

// LookAtChanges looks at the files the task changed; what it returns
// records them and their overlaps.
func (b *Book) LookAtChanges(ctx context.Context) func(context.Context) {
	l, err := b.Look(ctx, b.ID)
	return func(ctx context.Context) {
		if err == nil {
			err = l.Record(ctx)
		}
		if err != nil {
			b.Say("task %s: %v", b.ID, err)
		}
	}
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// TurnSpent records what the turn whose end was recorded without it used
// (see state.Task.SetTurnSpend): a small update of the task alone.
func (b *Book) TurnSpent(ctx context.Context, sp state.Spend) {
	err := b.Record.Store.UpdateTask(ctx, b.ID, func(t *state.Task) error {
		t.SetTurnSpend(sp)
		return nil
	})
	if err != nil {
		b.Say("task %s: recording the turn's spend: %v", b.ID, err)
	}
}

// Budgeted reports whether the task or a task above it has a token or
// dollar budget.
func (b *Book) Budgeted(ctx context.Context) bool {
	// The task and its ancestors, each read alone (Store.ReadTask): the
	// look costs the same with one task or a thousand.
	seen := map[string]bool{}
	for id := b.ID; id != "" && !seen[id]; {
		seen[id] = true
		t, err := b.Record.Task(ctx, id)
		if err != nil {
			return false
		}
		if x := settings.BudgetOf(t); x.Tokens > 0 || x.USD > 0 {
			return true
		}
		id = t.Parent
	}
	return false
}

// LiveSpend records what the running turn used so far (Task.Live, which
// the tree's spend counts, and ps and watch show); with judge, when that
// reaches a budget of the task's tree, the turns running in that tree,
// this one too, end as a turn's end over it ends them (stopForBudget).
// The reading is one task's change, handed to the lock's holder like any
// (Store.UpdateTask), and the budget is judged on the state read after
// it: of two turns of a tree read at once, the later sees both. A reading
// that cannot be written is left out: the next one, or the turn's end,
// counts.
func (b *Book) LiveSpend(ctx context.Context, sp state.Spend, judge bool) {
	err := b.Record.Store.UpdateTask(ctx, b.ID, func(t *state.Task) error {
		if !t.Status.IsTerminal() {
			t.Live = sp
		}
		return nil
	})
	if err != nil {
		b.Say("task %s: recording the running turn's spend: %v", b.ID, err)
		return
	}
	if !judge {
		return
	}
	st, err := b.Record.Store.Read(ctx)
	if err != nil {
		return
	}
	if why, root := budget.Over(st, b.ID, settings.BudgetOf, true); why != "" {
		b.StopForBudget(ctx, budget.LiveInTree(st, root, ""))
	}
}
