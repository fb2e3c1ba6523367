// The end of a supervision, around package supervisor's decision (Ending,
// Conclude): the notification a finished task sends (the command, the tmux
// message).

package runner

import (
	"context"
	"os"

	"github.com/runner-cli/runner/runner/notify"
	"github.com/runner-cli/runner/runner/settings"
	"github.com/runner-cli/runner/state"
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

// Notify tells the user that task t ended or needs input: a push queued
// (package push), its session's status line, then the notify command
// (package notify).
func Notify(ctx context.Context, env *Env, t *state.Task, set settings.Run) {
	env.Push.Queue(env.Store, t, func() error { _, err := env.SpawnRunner(env.Store.PushLog(), nil, "push-send"); return err }, env.Warn)
	notify.Teller{
		Tmux: func(ctx context.Context, t *state.Task) (notify.Display, error) {
			return env.PaneClient(ctx, t)
		},
		Journal: func(ctx context.Context, t *state.Task, kind, text string) { env.Record().Journal(ctx, t, kind, text) },
		Say:     env.Say,
		ExitOf:  env.ExitOf,
		ResultFile: func(t *state.Task) string {
			p := env.Store.TaskFile(state.FileLog, t.ID) + ".result"
			_ = os.WriteFile(p, []byte(t.ResultTail), 0o600)
			return p
		},
	}.Tell(ctx, t, set)
}
