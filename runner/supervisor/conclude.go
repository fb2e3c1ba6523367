// The end of a supervised turn: the record, the commit, the notification,
// letting go of the task, and the error that sets the exit code.

package supervisor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/state"
)

// The errors a concluded turn wraps; commands map them to exit codes.
var (
	// ErrTaskFailed: the task ended failed or exited (exit 1).
	ErrTaskFailed = errors.New("task failed")
	// ErrTaskTimeout: the task timed out (exit 3).
	ErrTaskTimeout = errors.New("task timed out")
	// ErrCancelled: the task was cancelled.
	ErrCancelled = errors.New("task cancelled")
	// ErrMoreMessages: the turn ended done with messages waiting; the
	// supervisor delivers them as the next turn.
	ErrMoreMessages = errors.New("messages are waiting")
)

// LimitedTurn is the error of a turn that ended on the agent's usage or
// rate limit (recorded limited): the supervision waits it out or ends the
// task (--on-limit).
type LimitedTurn struct {
	Reason string
	// Reset is when the limit resets, as the CLI said; zero when it did
	// not.
	Reset time.Time
}

func (e *LimitedTurn) Error() string { return e.Reason }

// Ender records the end of a turn: what a Book needs beyond the task's own
// record, because the end of a turn also looks at the task's message queue
// and its project.
type Ender interface {
	Book
	// EndTurn records the outcome and the turn's text in one update with
	// a look at the queue: with takeQueue, a turn that ended done with
	// messages waiting makes the task ready for them instead (more > 0).
	// An end that ends the supervision lets go of the task in that same
	// update (its supervisor, the project lock): whoever reads the end
	// finds the task free. final is the task as recorded; nil when
	// another process ended it first (a cancel wins) or nothing was
	// recorded.
	EndTurn(ctx context.Context, o Outcome, tt TurnText, takeQueue bool) (more int, final *state.Task)
	// Commit runs the post-task commit protocol and records its outcome.
	Commit(ctx context.Context)
	// LookAtChanges looks at the files the task changed so far and
	// returns what records them, with the overlaps they make with other
	// tasks (telling the agents concerned). A failure is reported, never
	// fatal.
	LookAtChanges(ctx context.Context) (record func(context.Context))
	// TurnSpent records what the turn whose end EndTurn recorded used,
	// once its CLI wrote it (TurnText.SpendLater).
	TurnSpent(ctx context.Context, sp state.Spend)
}

// Conclude records how a turn ended and returns the error that sets the
// exit code: nil for done; ErrMoreMessages when messages wait for the next
// turn; else one that wraps fault.ErrNeedsInput, ErrTaskTimeout,
// ErrCancelled or ErrTaskFailed and says what to do. parent is the
// supervision's context: once it is done (SIGINT, SIGTERM), the queue is
// left for the next supervisor. A needs_input outcome was recorded as the
// question came (see needsInput): it is journaled, not recorded again.
func (s *Supervisor) Conclude(parent context.Context, e Ender, o Outcome) error {
	ctx := context.WithoutCancel(parent)
	if s.Snapshotted != nil {
		err := s.Snapshotted(ctx)
		s.Snapshotted = nil // once: the first turn's end
		if err != nil {
			s.Book.Say("task %s: no snapshot: its commit failed: %v", s.ID, err)
		}
	}
	tt := s.ReadTurnEnd(ctx, o)
	if o.Status == state.StatusNeedsInput {
		s.recordDelivered(ctx)
		e.Journal(ctx, "needs-input", o.Reason)
		return fmt.Errorf("task %s needs input: %s (answer with 'runner attach %s', then 'runner resume %s'): %w",
			s.ID, dialogLine(s.Profile, o.Reason), s.ID, s.ID, fault.ErrNeedsInput)
	}
	live := parent.Err() == nil
	takeQueue := live && !o.KeepQueue
	if o.Status == state.StatusDone && s.Settings.Commit && !endedElsewhere(ctx, e) && (!takeQueue || e.Pending(ctx) == 0) {
		// Committed before the end is recorded: once it is, the task is
		// free (a merge, a new turn), and the commit would race it. A
		// message waiting makes the next turn, committed at its end.
		s.recordDelivered(ctx)
		e.Commit(ctx)
	}
	tt.Delivered = s.takeDelivered()
	trackChanges, looked := lookAtChanges(ctx, e)
	defer looked() // never left running past the turn's end
	more, final := e.EndTurn(ctx, o, tt, takeQueue)
	if tt.SpendLater != nil {
		// The end is recorded (done is seen at once); what the turn used
		// follows as soon as the CLI wrote it.
		e.TurnSpent(ctx, s.turnSpend(ctx, *tt.SpendLater))
	}
	if more > 0 {
		trackChanges()
		e.Say("task %s: turn done; %d message(s) waiting", s.ID, more)
		return ErrMoreMessages
	}
	o = budgetOutcome(ctx, e, final, o)
	if final != nil {
		announceEnd(ctx, e, o, final, trackChanges)
	}
	return s.outcomeError(o, final)
}

// endedElsewhere reports whether another process ended the task (a
// cancel): its turn's work is not committed then.
func endedElsewhere(ctx context.Context, e Ender) bool {
	t, err := e.Task(ctx)
	return err == nil && t.Status.IsTerminal()
}

// lookAtChanges begins the look at the task's files (git, the longest
// part of a turn's end) beside the record of the end (after the commit's
// protocol, which moves HEAD and the index). track records what the look
// found, always after the record of the end; wait waits for a look still
// running, so that none is left running past the turn's end.
func lookAtChanges(ctx context.Context, e Ender) (track, wait func()) {
	var record func(context.Context)
	var looking sync.WaitGroup
	looking.Go(func() { record = e.LookAtChanges(ctx) })
	track = func() {
		looking.Wait()
		record(ctx)
	}
	return track, looking.Wait
}

// budgetOutcome is o, unless the turn's spend reached a budget (the
// record says failed, "budget: …"), or another task's did and ended this
// one: then the outcome is the record's. final is the task as EndTurn
// recorded it; nil, it is read again.
func budgetOutcome(ctx context.Context, e Ender, final *state.Task, o Outcome) Outcome {
	recorded := final
	if recorded == nil {
		recorded, _ = e.Task(ctx)
	}
	if recorded != nil && recorded.Status == state.StatusFailed && strings.HasPrefix(recorded.LastReason(), fault.BudgetReason) {
		o.Status, o.Reason = recorded.Status, recorded.LastReason()
	}
	return o
}

// announceEnd journals the turn's outcome and notifies; what
// trackChanges looks at is recorded before it returns (the overlaps it
// finds are runner's notices to the tasks concerned: they start no turn).
func announceEnd(ctx context.Context, e Ender, o Outcome, final *state.Task, trackChanges func()) {
	e.Journal(ctx, "status", string(o.Status)+": "+o.Reason)
	// The notification tells about this turn's end, whatever happens to
	// the task after; it runs beside the look at the task's files (both
	// wait on other programs: the user's notify command or tmux, and
	// git).
	var notified sync.WaitGroup
	notified.Go(func() { e.Notify(ctx, final) })
	trackChanges()
	notified.Wait()
}

// outcomeError is the error that sets the exit code for a concluded
// turn's outcome (see Conclude). final is nil when another process ended
// the task meanwhile.
func (s *Supervisor) outcomeError(o Outcome, final *state.Task) error {
	switch o.Status {
	case state.StatusDone:
		return nil
	case state.StatusLimited:
		if final == nil {
			// Another process ended the task meanwhile.
			return fmt.Errorf("task %s: %s: %w", s.ID, o.Reason, ErrTaskFailed)
		}
		return &LimitedTurn{Reason: o.Reason, Reset: o.Reset}
	case state.StatusTimeout:
		return fmt.Errorf("task %s: %s (the pane is left for inspection: runner attach %s): %w", s.ID, o.Reason, s.ID, ErrTaskTimeout)
	case state.StatusCancelled:
		return fmt.Errorf("task %s: %s: %w", s.ID, o.Reason, ErrCancelled)
	}
	if o.Status == state.StatusFailed && strings.HasPrefix(o.Reason, fault.BudgetReason) {
		return fmt.Errorf("task %s %s: %s: %w", s.ID, o.Status, o.Reason, fault.ErrBudget)
	}
	return fmt.Errorf("task %s %s: %s: %w", s.ID, o.Status, o.Reason, ErrTaskFailed)
}
