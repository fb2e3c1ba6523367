// The end of a supervision, around package supervisor's decision (Ending,
// Conclude): the notification a finished task sends (the command, the tmux
// message).

package runner

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/exit"
	"github.com/runner-cli/runner/runner/settings"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// conclude records the final outcome of a supervision (the supervisor's
// Ending and Conclude) and maps it to the error that sets the exit code.
func (s *supervision) conclude(parent context.Context, err error) error {
	if err == nil {
		return nil
	}
	eo, stop := s.Ending(context.WithoutCancel(parent), parent, s.book, err)
	if eo == nil {
		return stop
	}
	return s.Conclude(parent, s.book, eo.Outcome)
}

// Notify runs the notification command, bounded in time, with the task in
// its environment; a failure is journaled, never fatal.
func Notify(ctx context.Context, env *Env, t *state.Task, set settings.Run) {
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
	cmd.Env = tmuxctl.ChildEnv(os.Environ(), "RUNNER_TASK_ID="+t.ID, "RUNNER_STATUS="+string(t.Status), "RUNNER_PROJECT="+t.Project,
		"RUNNER_EXIT="+strconv.Itoa(exit.OfTask(t))+"", "RUNNER_AGENT_EXIT="+code, "RUNNER_RESULT_FILE="+resultFile(env, t))
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
