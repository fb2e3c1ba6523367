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
	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/runner/exit"
	"github.com/runner-cli/runner/runner/messaging"
	"github.com/runner-cli/runner/runner/monitor"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// conclude records the final outcome of a supervision and maps it to the
// error that sets the exit code.
func (s *supervisor) conclude(parent, tctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	ctx := context.WithoutCancel(parent)
	eo, stop := s.outcomeOf(ctx, parent, err)
	if eo == nil {
		return stop
	}
	o := eo.o
	end := s.turnEnd(ctx, o)
	if o.status == state.StatusNeedsInput {
		if t, _ := s.env.task(ctx, s.id); t != nil {
			s.env.journal(ctx, t, "needs-input", o.reason)
		}
		return fmt.Errorf("task %s needs input: %s (answer with 'runner attach %s', then 'runner resume %s'): %w", s.id, dialogLine(s.prof, o.reason), s.id, s.id, exit.ErrNeedsInput)
	}
	more, final := s.recordTurnEnd(ctx, parent, o, end)
	if more > 0 {
		s.env.say("task %s: turn done; %d message(s) waiting", s.id, more)
		return errMoreMessages
	}
	if final != nil {
		s.env.journal(ctx, final, "status", string(o.status)+": "+o.reason)
		if o.status == state.StatusDone && s.set.Commit {
			s.commit(ctx)
		}
		// The notification tells about this turn's end, whatever happens
		// to the task after.
		s.env.notify(ctx, final, s.set)
		if o.status == state.StatusDone && parent.Err() == nil && s.release(ctx, !o.keepQueue) {
			return errMoreMessages
		}
	}
	switch o.status {
	case state.StatusDone:
		return nil
	case state.StatusTimeout:
		return fmt.Errorf("task %s: %s (the pane is left for inspection: runner attach %s): %w", s.id, o.reason, s.id, ErrTaskTimeout)
	case state.StatusCancelled:
		return fmt.Errorf("task %s: %s: %w", s.id, o.reason, ErrCancelled)
	}
	return fmt.Errorf("task %s %s: %s: %w", s.id, o.status, o.reason, ErrTaskFailed)
}

// startClock starts the task's time (--timeout): ctx with that deadline,
// which outcomeOf tells from any other deadline (a tmux call's).
func (s *supervisor) startClock(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	s.deadline = time.Now().Add(d)
	return context.WithDeadline(ctx, s.deadline)
}

// outcomeOf maps the error a supervision ended with to the outcome to
// record. An interruption (SIGINT/SIGTERM) is recorded here and returns
// no outcome, only the error to exit with.
func (s *supervisor) outcomeOf(ctx, parent context.Context, err error) (*errOutcome, error) {
	env := s.env
	var eo *errOutcome
	switch {
	case errors.As(err, &eo):
		return eo, nil
	case errors.Is(err, context.DeadlineExceeded) && parent.Err() == nil && !s.deadline.IsZero() && !time.Now().Before(s.deadline):
		// The task's own time, not a tmux call's that ran out (that
		// one is a failure, with its words).
		return &errOutcome{outcome{status: state.StatusTimeout, reason: "the task did not finish before its --timeout"}}, nil
	case errors.Is(err, monitor.ErrPaneGone):
		return &errOutcome{outcome{status: state.StatusFailed, reason: err.Error()}}, nil
	case errors.Is(err, tmuxctl.ErrNotFound):
		// The pane or server vanished during a delivery or a key press.
		return &errOutcome{outcome{status: state.StatusFailed, reason: fmt.Sprintf("pane %s: %v (the window was closed or the tmux server stopped): %v", s.pane, monitor.ErrPaneGone, err)}}, nil
	case errors.Is(err, ErrHostLost):
		// Not failed: the agent may well be working on there.
		_ = env.setStatus(ctx, s.id, state.StatusOrphaned, err.Error()+" (runner resume "+s.id+" reconnects)", nil)
		return nil, fmt.Errorf("task %s: %w (the agent is left as it is there; 'runner resume %s' reconnects)", s.id, err, s.id)
	case parent.Err() == nil:
		return &errOutcome{outcome{status: state.StatusFailed, reason: err.Error()}}, nil
	}
	// Interrupted: the pane is left as it is.
	t, _ := env.task(ctx, s.id)
	if t != nil && t.Status.IsTerminal() {
		// Ended by another process (runner cancel), which stopped us.
		return nil, fmt.Errorf("task %s ended while supervised: %s (%s): %w", s.id, t.Status, lastReason(t), parent.Err())
	}
	if t != nil {
		if s.set.Detached {
			// A detached supervisor that is stopped leaves the task
			// to be resumed.
			_ = env.setStatus(ctx, s.id, state.StatusOrphaned, "supervisor stopped", nil)
		} else {
			_ = env.finish(ctx, s.id, state.StatusCancelled, "interrupted; the agent's pane is left running", nil)
		}
	}
	return nil, fmt.Errorf("task %s interrupted; the agent's pane is left running (runner attach %s): %w", s.id, s.id, parent.Err())
}

// turnText is what a turn's end records: the agent's answer (its hook's,
// else the screen's), its session, the screen (or history) it was read
// from, and a one-line summary.
type turnText struct {
	answer, session, screen, summary string
	byHook                           bool
}

// turnEnd reads the end of the turn: from the hook's event when it has the
// answer (no capture needed: the record is written at once), else from the
// last 200 lines of history plus the screen (an agent that died leaves its
// last words above tmux's "Pane is dead" line, which scrolls the screen).
func (s *supervisor) turnEnd(ctx context.Context, o outcome) turnText {
	tt := turnText{screen: o.obs.Screen}
	if h := o.obs.Hook; h != nil {
		tt.answer, tt.session = strings.TrimSpace(h.Answer), h.Session
		tt.byHook = h.Answer != ""
	}
	if tt.answer == "" {
		if hist, err := s.tc.Capture(ctx, s.pane, tmuxctl.CaptureOptions{Start: "-200", End: "-"}); err == nil {
			tt.screen = hist
		}
		if o.status == state.StatusDone || o.status == state.StatusFailed {
			tt.answer = profile.ScreenAnswer(s.prof, tt.screen)
		}
	}
	tt.summary = textutil.FirstLine(tt.answer)
	if tt.summary == "" {
		t, _ := s.env.task(ctx, s.id)
		tt.summary = turnSummary(s.prof, tt.screen, t)
	}
	tt.summary = textutil.ClipRunes(tt.summary, 160)
	return tt
}

// recordTurnEnd records the end of the turn and looks at the queue in one
// update: a message that arrives while the agent works is either seen here
// (more > 0: delivered as the next turn) or waits in the queue, which this
// supervisor looks at again before it lets go of the task (release). final
// is the task as recorded; nil when another process ended it first (a
// cancel wins) or nothing was recorded.
func (s *supervisor) recordTurnEnd(ctx, parent context.Context, o outcome, tt turnText) (more int, final *state.Task) {
	env := s.env
	var dropped []*state.Message
	_ = env.updateDurably(ctx, "task "+s.id+": the end of the turn ("+string(o.status)+")", func(st *state.State) error {
		more, final, dropped = 0, nil, nil
		t := st.Task(s.id)
		if t == nil || t.Status.IsTerminal() {
			return nil // a cancel from another process wins
		}
		if tt.byHook {
			t.ResultTail = tailLines(tt.answer, 20)
		} else {
			t.ResultTail = tailLines(tt.screen, 20)
		}
		t.ExitCode, t.Question, t.Answer = o.code, "", tt.answer
		if tt.session != "" {
			t.AgentSession = tt.session
		}
		if tt.summary != "" || tt.answer != "" {
			t.AddTurnAnswer(env.now(), tt.summary, tt.answer)
		}
		if o.status == state.StatusDone && parent.Err() == nil && !o.keepQueue {
			if more = len(st.MessagesFor(s.id, state.MessagePending)); more > 0 {
				return t.SetStatus(state.StatusReady, env.now(), fmt.Sprintf("turn done (%s); %d message(s) to deliver", o.reason, more))
			}
		}
		if o.status != state.StatusDone {
			dropped = messaging.DropQueue(st, s.id, env.now(), fmt.Sprintf("task %s ended %s before taking it", s.id, o.status))
		}
		err := t.SetStatus(o.status, env.now(), o.reason)
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
func (s *supervisor) commit(ctx context.Context) {
	env := s.env
	t, err := env.task(ctx, s.id)
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
	_ = env.update(ctx, s.id, func(t *state.Task) {
		if res != nil {
			t.Commit = res.Commit
		}
		t.History = append(t.History, state.StatusChange{Status: t.Status, Time: env.now(), Reason: note})
	})
	env.journal(ctx, t, "commit", note)
	env.say("task %s: %s", s.id, note)
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

// tailLines returns the last n non-blank lines of s.
func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	var out []string
	for i := len(lines) - 1; i >= 0 && len(out) < n; i-- {
		l := strings.TrimRight(lines[i], " ")
		if strings.Trim(l, "╭╮╰╯─━│┃ ") == "" {
			continue // blank, or a box border
		}
		// A box row padded to the terminal width: drop the padding.
		if strings.HasSuffix(l, "│") {
			l = strings.TrimRight(strings.TrimSuffix(l, "│"), " ") + " │"
		}
		out = append(out, textutil.ClipRunes(l, 300))
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return strings.Join(out, "\n")
}

// turnSummary is a one-line summary of the turn: the last line of the
// screen that is neither UI chrome (box borders, prompts, spinners,
// footers) nor blank.
func turnSummary(p *profile.Profile, screen string, t *state.Task) string {
	lines := strings.Split(tmuxctl.StripEscapes(screen), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(strings.Trim(lines[i], "│┃|╭╮╰╯─━ "))
		if l == "" || strings.HasPrefix(l, ">") || strings.HasPrefix(l, "❯") || strings.HasPrefix(l, "? for") ||
			strings.Contains(l, "esc to interrupt") || strings.HasPrefix(l, "Pane is dead") {
			continue
		}
		if strings.HasPrefix(l, "runner[") {
			continue
		}
		return textutil.ClipRunes(l, 120)
	}
	return ""
}

// release lets go of a task whose turn ended done, after its commit and
// notification: under the lock, a message that arrived meanwhile (it was
// only queued: `runner msg` does not take a task whose supervisor lives)
// makes the task ready for the next turn and release reports true;
// otherwise the task is left without a supervisor, for the next message to
// take.
func (s *supervisor) release(ctx context.Context, takeQueue bool) bool {
	env := s.env
	more := 0
	_ = env.updateDurably(ctx, "task "+s.id+": letting go of the task", func(st *state.State) error {
		more = 0
		t := st.Task(s.id)
		if t == nil || t.Status != state.StatusDone || t.SupervisorPID != os.Getpid() {
			return nil
		}
		if more = len(st.MessagesFor(s.id, state.MessagePending)); more > 0 && takeQueue {
			t.Ended = time.Time{}
			return t.SetStatus(state.StatusReady, env.now(), fmt.Sprintf("%d message(s) arrived as the turn ended", more))
		}
		more = 0
		t.SupervisorPID = 0
		return nil
	})
	if more > 0 {
		env.say("task %s: %d message(s) arrived as the turn ended", s.id, more)
	}
	return more > 0
}
