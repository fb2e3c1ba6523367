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

	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/exit"
	"github.com/runner-cli/runner/runner/monitor"
	"github.com/runner-cli/runner/runner/remote"
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
	return s.Conclude(parent, s.book, eo.Outcome)
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
	case errors.Is(err, remote.ErrHostLost):
		// Not failed: the agent may well be working on there.
		_ = env.Record().SetStatus(ctx, s.ID, state.StatusOrphaned, err.Error()+" (runner resume "+s.ID+" reconnects)", nil)
		return nil, fmt.Errorf("task %s: %w (the agent is left as it is there; 'runner resume %s' reconnects)", s.ID, err, s.ID)
	case parent.Err() == nil:
		return &supervisor.Ended{Outcome: supervisor.Outcome{Status: state.StatusFailed, Reason: err.Error()}}, nil
	}
	// Interrupted: the pane is left as it is.
	t, _ := env.Record().Task(ctx, s.ID)
	if t != nil && t.Status.IsTerminal() {
		// Ended by another process (runner cancel), which stopped us.
		return nil, fmt.Errorf("task %s ended while supervised: %s (%s): %w", s.ID, t.Status, lastReason(t), parent.Err())
	}
	if t != nil {
		if s.set.Detached {
			// A detached supervisor that is stopped leaves the task
			// to be resumed.
			_ = env.Record().SetStatus(ctx, s.ID, state.StatusOrphaned, "supervisor stopped", nil)
		} else {
			_ = env.Record().Finish(ctx, s.ID, state.StatusCancelled, "interrupted; the agent's pane is left running", nil)
		}
	}
	return nil, fmt.Errorf("task %s interrupted; the agent's pane is left running (runner attach %s): %w", s.ID, s.ID, parent.Err())
}

func lastReason(t *state.Task) string {
	if len(t.History) == 0 {
		return ""
	}
	return t.History[len(t.History)-1].Reason
}

// Notify runs the notification command, bounded in time, with the task in
// its environment; a failure is journaled, never fatal.
func Notify(ctx context.Context, env *Env, t *state.Task, set RunSettings) {
	tmuxMessage(ctx, env, t, set)
	if len(set.Notify) == 0 {
		return
	}
	d := set.NotifyTimeout
	if d <= 0 {
		d = config.DefaultNotifyTimeout
	}
	nctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	cmd := exec.CommandContext(nctx, set.Notify[0], set.Notify[1:]...)
	code := ""
	if t.ExitCode != nil {
		code = strconv.Itoa(*t.ExitCode)
	}
	cmd.Env = append(os.Environ(), "RUNNER_TASK_ID="+t.ID, "RUNNER_STATUS="+string(t.Status), "RUNNER_PROJECT="+t.Project,
		"RUNNER_EXIT="+strconv.Itoa(exit.OfStatus(t.Status))+"", "RUNNER_AGENT_EXIT="+code, "RUNNER_RESULT_FILE="+resultFile(env, t))
	cmd.WaitDelay = time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		env.Record().Journal(ctx, t, "notify-failed", fmt.Sprintf("%s: %v: %s", set.Notify[0], err, strings.TrimSpace(string(out))))
		env.Say("task %s: notify command failed: %v", t.ID, err)
		return
	}
	env.Record().Journal(ctx, t, "notify", set.Notify[0]+" ran for status "+string(t.Status))
}

// resultFile writes the task's result tail to a file for hooks.
func resultFile(env *Env, t *state.Task) string {
	p := env.Store.TaskFile("log", t.ID) + ".result"
	_ = os.WriteFile(p, []byte(t.ResultTail), 0o600)
	return p
}
