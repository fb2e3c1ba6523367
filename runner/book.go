package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/runner/budget"
	"github.com/runner-cli/runner/runner/messaging"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/reconcile"
	"github.com/runner-cli/runner/runner/settings"
	"github.com/runner-cli/runner/runner/supervisor"
	"github.com/runner-cli/runner/state"
)

// taskBook is a task's record in the state, as a supervisor.Book: what the
// supervisor reads and writes through while it drives the task's turns.
type taskBook struct {
	env  *Env
	id   string
	prof *profile.Profile
	set  settings.Run
}

func (b *taskBook) Task(ctx context.Context) (*state.Task, error) {
	return b.env.Record().Task(ctx, b.id)
}

func (b *taskBook) Update(ctx context.Context, fn func(*state.Task)) error {
	return b.env.Record().Update(ctx, b.id, fn)
}

func (b *taskBook) SetStatus(ctx context.Context, st state.Status, reason string, fn func(*state.Task)) error {
	return b.env.Record().SetStatus(ctx, b.id, st, reason, fn)
}

func (b *taskBook) Journal(ctx context.Context, kind, text string) {
	if t, err := b.env.Record().Task(ctx, b.id); err == nil {
		b.env.Record().Journal(ctx, t, kind, text)
	}
}

func (b *taskBook) Say(format string, args ...any) { b.env.Say(format, args...) }

func (b *taskBook) Notify(ctx context.Context, t *state.Task) { Notify(ctx, b.env, t, b.set) }

func (b *taskBook) Now() time.Time { return b.env.Time() }

// Prompt puts the awareness block (what the other tasks are doing) ahead
// of a first turn's text, unless the task's settings or its agent's
// profile turn it off.
func (b *taskBook) Prompt(ctx context.Context, text string, first bool) (string, *state.Task, error) {
	st, err := b.env.Store.Read(ctx)
	if err != nil {
		return "", nil, err
	}
	t := st.Task(b.id)
	if t == nil {
		return "", nil, fmt.Errorf("task %s: %w", b.id, state.ErrTaskNotFound)
	}
	if why, _ := budget.Over(st, b.id, settings.BudgetOf, false); why != "" {
		return "", nil, &supervisor.Ended{Outcome: supervisor.Outcome{Status: state.StatusFailed, Reason: why}}
	}
	payload := text
	if first && b.set.Awareness != messaging.AwarenessOff && !b.prof.NoAwareness {
		if block := messaging.RenderAwareness(st, t, messaging.AwarenessOptions{Mode: b.set.Awareness, MaxChars: b.set.AwarenessMax, Now: b.env.Time()}); block != "" {
			payload = block + "\n" + text
		}
	}
	return payload, t, nil
}

func (b *taskBook) Pending(ctx context.Context) int {
	st, err := b.env.Store.Read(ctx)
	if err != nil {
		return 0
	}
	return len(st.MessagesFor(b.id, state.MessagePending))
}

// EndTurn records the end of the turn and looks at the queue in one update:
// a message that arrives while the agent works is either seen here (more >
// 0: delivered as the next turn) or waits in the queue, which the
// supervisor looks at again before it lets go of the task (Release).
func (b *taskBook) EndTurn(ctx context.Context, o supervisor.Outcome, tt supervisor.TurnText, takeQueue bool) (more int, final *state.Task) {
	env := b.env
	var dropped []*state.Message
	var stop []budget.Stop
	turn := o
	_ = env.Record().UpdateDurably(ctx, "task "+b.id+": the end of the turn ("+string(o.Status)+")", func(st *state.State) error {
		more, final, dropped, stop, o = 0, nil, nil, nil, turn
		t := st.Task(b.id)
		if t == nil {
			return nil
		}
		if t.Status.IsTerminal() {
			// A cancel from another process (or a budget another task's
			// turn passed) wins; what the turn used is counted all the
			// same.
			t.EndLive(tt.Spend)
			return nil
		}
		t.ResultTail = tt.ResultTail()
		t.ExitCode, t.Question, t.Answer = o.Code, "", tt.Answer
		if tt.Session != "" {
			t.AgentSession = tt.Session
		}
		switch {
		case tt.SpendLater != nil && (tt.Summary != "" || tt.Answer != ""):
			t.AddTurnPending(env.Time(), tt.Summary, tt.Answer)
		case tt.SpendLater != nil:
			// counted by TurnSpent
		case tt.Summary != "" || tt.Answer != "":
			t.AddTurnSpent(env.Time(), tt.Summary, tt.Answer, tt.Spend)
		default:
			t.EndLive(tt.Spend)
		}
		if o.Status == state.StatusDone {
			// The turn's spend reached a budget of the task's tree: the
			// task ends, and so do the turns running in that tree.
			if why, root := budget.Over(st, b.id, settings.BudgetOf, true); why != "" {
				o.Status, o.Reason = state.StatusFailed, why
				stop = budget.LiveInTree(st, root, b.id)
			}
		}
		if o.Status == state.StatusDone && takeQueue {
			if more = len(st.MessagesFor(b.id, state.MessagePending)); more > 0 {
				return t.SetStatus(state.StatusReady, env.Time(), fmt.Sprintf("turn done (%s); %d message(s) to deliver", o.Reason, more))
			}
		}
		if o.Status == state.StatusLimited {
			// The task goes on after the reset (--on-limit wait), or ends
			// failed "limited: …" (--on-limit fail, which drops the queue
			// then): its messages wait.
			t.LimitReset = o.Reset
			reason := o.Reason
			if b.set.OnLimit == settings.OnLimitWait {
				reason += "; waiting it out (--on-limit wait)"
			}
			err := t.SetStatus(o.Status, env.Time(), reason)
			c := *t
			final = &c
			return err
		}
		if o.Status != state.StatusDone {
			dropped = messaging.DropQueue(st, b.id, env.Time(), fmt.Sprintf("task %s ended %s before taking it", b.id, o.Status), reconcile.LiveProcs{})
		}
		err := t.SetStatus(o.Status, env.Time(), o.Reason)
		c := *t
		final = &c
		return err
	})
	env.Record().JournalDropped(ctx, dropped)
	stopForBudget(ctx, env, stop)
	if more > 0 {
		final = nil
	}
	return more, final
}

// Commit runs the post-task commit protocol and records its outcome.
func (b *taskBook) Commit(ctx context.Context) {
	env := b.env
	t, err := env.Record().Task(ctx, b.id)
	if err != nil {
		return
	}
	opts := gitsnap.CommitOptions{TaskID: t.ID, Task: t.Text, Project: t.Project, Agent: t.Agent,
		Branch: b.set.CommitBranch, All: b.set.CommitAll}
	if t.Branch != "" {
		// A worktree task commits on its own branch, which started at the
		// snapshot (with the user's uncommitted work in it).
		opts.Branch, opts.All, opts.Snapshot = false, true, t.ID
	}
	var res *gitsnap.CommitResult
	gctx, err := env.GitContext(ctx, t)
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
	_ = env.Record().Update(ctx, b.id, func(t *state.Task) {
		if res != nil {
			t.Commit = res.Commit
		}
		t.History = append(t.History, state.StatusChange{Status: t.Status, Time: env.Time(), Reason: note})
	})
	env.Record().Journal(ctx, t, "commit", note)
	env.Say("task %s: %s", b.id, note)
}

// LookAtChanges looks at the files the task changed; what it returns
// records them and their overlaps.
func (b *taskBook) LookAtChanges(ctx context.Context) func(context.Context) {
	l, err := lookAtChanges(ctx, b.env, b.id)
	return func(ctx context.Context) {
		if err == nil {
			err = l.Record(ctx)
		}
		if err != nil {
			b.env.Say("task %s: %v", b.id, err)
		}
	}
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// Release lets go of a task whose turn ended done, after its commit and
// notification: under the lock, a message that arrived meanwhile (it was
// only queued: `runner msg` does not take a task whose supervisor lives)
// makes the task ready for the next turn, and their count is returned;
// otherwise the task is left without a supervisor, for the next message to
// take.
func (b *taskBook) Release(ctx context.Context, takeQueue bool) int {
	env := b.env
	more := 0
	_ = env.Record().UpdateDurably(ctx, "task "+b.id+": letting go of the task", func(st *state.State) error {
		more = 0
		t := st.Task(b.id)
		if t == nil || t.Status != state.StatusDone || t.SupervisorPID != os.Getpid() {
			return nil
		}
		if more = len(st.MessagesFor(b.id, state.MessagePending)); more > 0 && takeQueue {
			t.Ended = time.Time{}
			return t.SetStatus(state.StatusReady, env.Time(), fmt.Sprintf("%d message(s) arrived as the turn ended", more))
		}
		more = 0
		t.SupervisorPID, t.SupervisorStart = 0, ""
		return nil
	})
	return more
}

// TurnSpent records what the turn whose end was recorded without it used
// (see state.Task.SetTurnSpend): a small update of the task alone.
func (b *taskBook) TurnSpent(ctx context.Context, sp state.Spend) {
	err := b.env.Store.UpdateTask(ctx, b.id, func(t *state.Task) error {
		t.SetTurnSpend(sp)
		return nil
	})
	if err != nil {
		b.env.Say("task %s: recording the turn's spend: %v", b.id, err)
	}
}

// Budgeted reports whether the task or a task above it has a token or
// dollar budget.
func (b *taskBook) Budgeted(ctx context.Context) bool {
	// The task and its ancestors, each read alone (Store.ReadTask): the
	// look costs the same with one task or a thousand.
	seen := map[string]bool{}
	for id := b.id; id != "" && !seen[id]; {
		seen[id] = true
		t, err := b.env.Record().Task(ctx, id)
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
func (b *taskBook) LiveSpend(ctx context.Context, sp state.Spend, judge bool) {
	err := b.env.Store.UpdateTask(ctx, b.id, func(t *state.Task) error {
		if !t.Status.IsTerminal() {
			t.Live = sp
		}
		return nil
	})
	if err != nil {
		b.env.Say("task %s: recording the running turn's spend: %v", b.id, err)
		return
	}
	if !judge {
		return
	}
	st, err := b.env.Store.Read(ctx)
	if err != nil {
		return
	}
	if why, root := budget.Over(st, b.id, settings.BudgetOf, true); why != "" {
		stopForBudget(ctx, b.env, budget.LiveInTree(st, root, ""))
	}
}
