// The end of a turn: what it ended on, what the agent answered, the
// record, the commit, the notification, and letting go of the task.

package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/runner/exit"
	"github.com/runner-cli/runner/runner/messaging"
	"github.com/runner-cli/runner/runner/monitor"
	"github.com/runner-cli/runner/runner/supervisor"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// conclude records the final outcome of a supervision and maps it to the
// error that sets the exit code.
func (s *supervision) conclude(parent, tctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	ctx := context.WithoutCancel(parent)
	eo, stop := s.outcomeOf(ctx, parent, err)
	if eo == nil {
		return stop
	}
	o := eo.Outcome
	end := s.ReadTurnEnd(ctx, o)
	if o.Status == state.StatusNeedsInput {
		if t, _ := s.env.task(ctx, s.ID); t != nil {
			s.env.journal(ctx, t, "needs-input", o.Reason)
		}
		return fmt.Errorf("task %s needs input: %s (answer with 'runner attach %s', then 'runner resume %s'): %w", s.ID, supervisor.DialogLine(s.Profile, o.Reason), s.ID, s.ID, exit.ErrNeedsInput)
	}
	more, final := s.recordTurnEnd(ctx, parent, o, end)
	if more > 0 {
		s.env.say("task %s: turn done; %d message(s) waiting", s.ID, more)
		return errMoreMessages
	}
	if final != nil {
		s.env.journal(ctx, final, "status", string(o.Status)+": "+o.Reason)
		if o.Status == state.StatusDone && s.set.Commit {
			s.commit(ctx)
		}
		// The notification tells about this turn's end, whatever happens
		// to the task after.
		s.env.notify(ctx, final, s.set)
		if o.Status == state.StatusDone && parent.Err() == nil && s.release(ctx, !o.KeepQueue) {
			return errMoreMessages
		}
	}
	switch o.Status {
	case state.StatusDone:
		return nil
	case state.StatusTimeout:
		return fmt.Errorf("task %s: %s (the pane is left for inspection: runner attach %s): %w", s.ID, o.Reason, s.ID, ErrTaskTimeout)
	case state.StatusCancelled:
		return fmt.Errorf("task %s: %s: %w", s.ID, o.Reason, ErrCancelled)
	}
	return fmt.Errorf("task %s %s: %s: %w", s.ID, o.Status, o.Reason, ErrTaskFailed)
}

// startClock starts the task's time (--timeout): ctx with that deadline,
// which outcomeOf tells from any other deadline (a tmux call's).
func (s *supervision) startClock(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	s.deadline = time.Now().Add(d)
	return context.WithDeadline(ctx, s.deadline)
}

// outcomeOf maps the error a supervision ended with to the outcome to
// record. An interruption (SIGINT/SIGTERM) is recorded here and returns
// no outcome, only the error to exit with.
func (s *supervision) outcomeOf(ctx, parent context.Context, err error) (*supervisor.Ended, error) {
	env := s.env
	var eo *supervisor.Ended
	switch {
	case errors.As(err, &eo):
		return eo, nil
	case errors.Is(err, context.DeadlineExceeded) && parent.Err() == nil && !s.deadline.IsZero() && !time.Now().Before(s.deadline):
		// The task's own time, not a tmux call's that ran out (that
		// one is a failure, with its words).
		return &supervisor.Ended{Outcome: supervisor.Outcome{Status: state.StatusTimeout, Reason: "the task did not finish before its --timeout"}}, nil
	case errors.Is(err, monitor.ErrPaneGone):
		return &supervisor.Ended{Outcome: supervisor.Outcome{Status: state.StatusFailed, Reason: err.Error()}}, nil
	case errors.Is(err, tmuxctl.ErrNotFound):
		// The pane or server vanished during a delivery or a key press.
		return &supervisor.Ended{Outcome: supervisor.Outcome{Status: state.StatusFailed, Reason: fmt.Sprintf("pane %s: %v (the window was closed or the tmux server stopped): %v", s.PaneID, monitor.ErrPaneGone, err)}}, nil
	case errors.Is(err, ErrHostLost):
		// Not failed: the agent may well be working on there.
		_ = env.setStatus(ctx, s.ID, state.StatusOrphaned, err.Error()+" (runner resume "+s.ID+" reconnects)", nil)
		return nil, fmt.Errorf("task %s: %w (the agent is left as it is there; 'runner resume %s' reconnects)", s.ID, err, s.ID)
	case parent.Err() == nil:
		return &supervisor.Ended{Outcome: supervisor.Outcome{Status: state.StatusFailed, Reason: err.Error()}}, nil
	}
	// Interrupted: the pane is left as it is.
	t, _ := env.task(ctx, s.ID)
	if t != nil && t.Status.IsTerminal() {
		// Ended by another process (runner cancel), which stopped us.
		return nil, fmt.Errorf("task %s ended while supervised: %s (%s): %w", s.ID, t.Status, lastReason(t), parent.Err())
	}
	if t != nil {
		if s.set.Detached {
			// A detached supervisor that is stopped leaves the task
			// to be resumed.
			_ = env.setStatus(ctx, s.ID, state.StatusOrphaned, "supervisor stopped", nil)
		} else {
			_ = env.finish(ctx, s.ID, state.StatusCancelled, "interrupted; the agent's pane is left running", nil)
		}
	}
	return nil, fmt.Errorf("task %s interrupted; the agent's pane is left running (runner attach %s): %w", s.ID, s.ID, parent.Err())
}

// recordTurnEnd records the end of the turn and looks at the queue in one
// update: a message that arrives while the agent works is either seen here
// (more > 0: delivered as the next turn) or waits in the queue, which this
// supervisor looks at again before it lets go of the task (release). final
// is the task as recorded; nil when another process ended it first (a
// cancel wins) or nothing was recorded.
func (s *supervision) recordTurnEnd(ctx, parent context.Context, o supervisor.Outcome, tt supervisor.TurnText) (more int, final *state.Task) {
	env := s.env
	var dropped []*state.Message
	_ = env.updateDurably(ctx, "task "+s.ID+": the end of the turn ("+string(o.Status)+")", func(st *state.State) error {
		more, final, dropped = 0, nil, nil
		t := st.Task(s.ID)
		if t == nil || t.Status.IsTerminal() {
			return nil // a cancel from another process wins
		}
		t.ResultTail = tt.ResultTail()
		t.ExitCode, t.Question, t.Answer = o.Code, "", tt.Answer
		if tt.Session != "" {
			t.AgentSession = tt.Session
		}
		if tt.Summary != "" || tt.Answer != "" {
			t.AddTurnAnswer(env.now(), tt.Summary, tt.Answer)
		}
		if o.Status == state.StatusDone && parent.Err() == nil && !o.KeepQueue {
			if more = len(st.MessagesFor(s.ID, state.MessagePending)); more > 0 {
				return t.SetStatus(state.StatusReady, env.now(), fmt.Sprintf("turn done (%s); %d message(s) to deliver", o.Reason, more))
			}
		}
		if o.Status != state.StatusDone {
			dropped = messaging.DropQueue(st, s.ID, env.now(), fmt.Sprintf("task %s ended %s before taking it", s.ID, o.Status))
		}
		err := t.SetStatus(o.Status, env.now(), o.Reason)
		c := *t
		final = &c
		return err
	})
	env.journalDropped(ctx, dropped)
	if more > 0 {
		final = nil
	}
	return more, final
}

func lastReason(t *state.Task) string {
	if len(t.History) == 0 {
		return ""
	}
	return t.History[len(t.History)-1].Reason
}

// commit runs the post-task commit protocol and records its outcome.
func (s *supervision) commit(ctx context.Context) {
	env := s.env
	t, err := env.task(ctx, s.ID)
	if err != nil {
		return
	}
	opts := gitsnap.CommitOptions{TaskID: t.ID, Task: t.Text, Project: t.Project, Agent: t.Agent,
		Branch: s.set.CommitBranch, All: s.set.CommitAll}
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
	case err != nil:
		note = "no commit: " + err.Error()
	case res.Outcome == gitsnap.NothingToCommit:
		note = "no commit: nothing changed"
	default:
		note = fmt.Sprintf("committed %s on %s", shortHash(res.Commit), res.Branch)
	}
	_ = env.update(ctx, s.ID, func(t *state.Task) {
		if res != nil {
			t.Commit = res.Commit
		}
		t.History = append(t.History, state.StatusChange{Status: t.Status, Time: env.now(), Reason: note})
	})
	env.journal(ctx, t, "commit", note)
	env.say("task %s: %s", s.ID, note)
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// notify runs the notification command, bounded in time, with the task in
// its environment; a failure is journaled, never fatal.
func (env *Env) notify(ctx context.Context, t *state.Task, set RunSettings) {
	env.tmuxMessage(ctx, t, set)
	if len(set.Notify) == 0 {
		return
	}
	d := set.NotifyTimeout
	if d <= 0 {
		d = 10 * time.Second
	}
	nctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	cmd := exec.CommandContext(nctx, set.Notify[0], set.Notify[1:]...)
	code := ""
	if t.ExitCode != nil {
		code = strconv.Itoa(*t.ExitCode)
	}
	cmd.Env = append(os.Environ(), "RUNNER_TASK_ID="+t.ID, "RUNNER_STATUS="+string(t.Status), "RUNNER_PROJECT="+t.Project,
		"RUNNER_EXIT="+strconv.Itoa(TaskExitCode(t))+"", "RUNNER_AGENT_EXIT="+code, "RUNNER_RESULT_FILE="+resultFile(env, t))
	cmd.WaitDelay = time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		env.journal(ctx, t, "notify-failed", fmt.Sprintf("%s: %v: %s", set.Notify[0], err, strings.TrimSpace(string(out))))
		env.say("task %s: notify command failed: %v", t.ID, err)
		return
	}
	env.journal(ctx, t, "notify", set.Notify[0]+" ran for status "+string(t.Status))
}

// resultFile writes the task's result tail to a file for hooks.
func resultFile(env *Env, t *state.Task) string {
	p := env.Store.TaskFile("log", t.ID) + ".result"
	_ = os.WriteFile(p, []byte(t.ResultTail), 0o600)
	return p
}

// TaskExitCode is the runner exit code a task's status stands for.
func TaskExitCode(t *state.Task) int {
	switch t.Status {
	case state.StatusDone:
		return exit.ExitOK
	case state.StatusTimeout:
		return exit.ExitTimeout
	case state.StatusNeedsInput:
		return exit.ExitNeedsInput
	}
	return exit.ExitFailed
}

// release lets go of a task whose turn ended done, after its commit and
// notification: under the lock, a message that arrived meanwhile (it was
// only queued: `runner msg` does not take a task whose supervisor lives)
// makes the task ready for the next turn and release reports true;
// otherwise the task is left without a supervisor, for the next message to
// take.
func (s *supervision) release(ctx context.Context, takeQueue bool) bool {
	env := s.env
	more := 0
	_ = env.updateDurably(ctx, "task "+s.ID+": letting go of the task", func(st *state.State) error {
		more = 0
		t := st.Task(s.ID)
		if t == nil || t.Status != state.StatusDone || t.SupervisorPID != os.Getpid() {
			return nil
		}
		if more = len(st.MessagesFor(s.ID, state.MessagePending)); more > 0 && takeQueue {
			t.Ended = time.Time{}
			return t.SetStatus(state.StatusReady, env.now(), fmt.Sprintf("%d message(s) arrived as the turn ended", more))
		}
		more = 0
		t.SupervisorPID = 0
		return nil
	})
	if more > 0 {
		env.say("task %s: %d message(s) arrived as the turn ended", s.ID, more)
	}
	return more > 0
}
