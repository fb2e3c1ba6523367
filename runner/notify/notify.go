// Package notify tells the user that a task ended or needs input
// (Teller): a line on the status line of the tmux clients attached to the
// task's session, then the user's notify command (config notify, dispatch
// --notify) run with the task in its environment, bounded in time. Neither
// ever fails a task: what went wrong is journaled and said. StatusLine is
// the line of counts `runner status-line` gives tmux's status bar.
package notify

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/subproc"
	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/settings"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// Display shows a message to the clients attached to a session, saying to
// how many (tmuxctl.Client.DisplayMessage).
type Display interface {
	DisplayMessage(ctx context.Context, session, text string, d time.Duration) (int, error)
}

// Teller is what telling needs of runner: the task's tmux, its journal,
// the user's progress line and where its result tail is kept.
type Teller struct {
	// Tmux is the tmux of the task's pane (this machine's or its host's).
	Tmux func(ctx context.Context, t *state.Task) (Display, error)
	// Journal records a line of the task's journal.
	Journal func(ctx context.Context, t *state.Task, kind, text string)
	// Say writes a progress line.
	Say func(format string, args ...any)
	// ResultFile is the file the task's result tail is written to, for
	// the notify command (RUNNER_RESULT_FILE).
	ResultFile func(t *state.Task) string
	// ExitOf is the exit code task t's outcome stands for (RUNNER_EXIT,
	// unset when nil): cmd/runner's table, which only cmd knows.
	ExitOf func(t *state.Task) int
}

// MessageTime is how long the message stays on the status line.
const MessageTime = 5 * time.Second

// Tell shows Message in the task's tmux session unless set says not to,
// then runs the notify command set names, if any.
func (n Teller) Tell(ctx context.Context, t *state.Task, set settings.Run) {
	n.tmuxMessage(ctx, t, set)
	if len(set.Notify) == 0 {
		return
	}
	d := set.NotifyTimeout
	if d <= 0 {
		d = config.DefaultNotifyTimeout
	}
	nctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	cmd := subproc.Command(nctx, set.Notify[0], set.Notify[1:]...)
	code := ""
	if t.ExitCode != nil {
		code = strconv.Itoa(*t.ExitCode)
	}
	vars := []string{"RUNNER_TASK_ID=" + t.ID, "RUNNER_STATUS=" + string(t.Status), "RUNNER_PROJECT=" + t.Project,
		"RUNNER_AGENT_EXIT=" + code, "RUNNER_RESULT_FILE=" + n.ResultFile(t)}
	if n.ExitOf != nil {
		vars = append(vars, "RUNNER_EXIT="+strconv.Itoa(n.ExitOf(t)))
	}
	cmd.Env = tmuxctl.ChildEnv(os.Environ(), vars...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		n.Journal(ctx, t, "notify-failed", fmt.Sprintf("%s: %v: %s", set.Notify[0], err, strings.TrimSpace(string(out))))
		n.Say("task %s: notify command failed: %v", t.ID, err)
		return
	}
	n.Journal(ctx, t, "notify", set.Notify[0]+" ran for status "+string(t.Status))
}

// Message is the line shown in the project's tmux session when a task
// ends or needs input, e.g. "runner: t_abc done: add a /health endpoint".
func Message(t *state.Task) string {
	status := string(t.Status)
	if t.Status == state.StatusNeedsInput {
		status = "needs input"
	}
	msg := "runner: " + t.ID + " " + status
	if t.ExitCode != nil && t.Status == state.StatusExited {
		msg += " (" + strconv.Itoa(*t.ExitCode) + ")"
	}
	if title := textutil.Headline(t.Text, 100); title != "" {
		msg += ": " + title
	}
	return msg
}

// tmuxMessage shows Message on the status line of the clients attached
// to the task's session. Nobody attached, no server, any error: nothing
// happens (a message never fails a task).
func (n Teller) tmuxMessage(ctx context.Context, t *state.Task, set settings.Run) {
	if set.NoTmuxMessage || t.Tmux.Session == "" {
		return
	}
	mctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	tc, err := n.Tmux(mctx, t)
	if err != nil {
		return
	}
	c, err := tc.DisplayMessage(mctx, t.Tmux.Session, Message(t), MessageTime)
	if err == nil && c > 0 {
		n.Journal(ctx, t, "tmux-message", fmt.Sprintf("shown to %d client(s) of session %s", c, t.Tmux.Session))
	}
}
