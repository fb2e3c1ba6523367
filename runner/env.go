// Env, the settings a task runs with, and the task writes every part of
// runner shares.

package runner

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/runner-cli/runner/runner/hosts"
	"github.com/runner-cli/runner/runner/push"
	"github.com/runner-cli/runner/runner/reconcile"
	"github.com/runner-cli/runner/runner/record"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// Env is what the domain operations need from the outside world. cmd/runner
// builds one per command.
type Env struct {
	Store    *state.Store
	TC       *tmuxctl.Client
	Profiles []*profile.Profile
	Getenv   func(string) string
	// Environ lists the environment (for the profiles' pass_env); nil
	// means none is passed beyond the fixed variables.
	Environ func() []string
	// Exe is the absolute path of the runner binary (started as the
	// supervisor, used in hooks and for the sim profile's "runner").
	Exe string
	// Progress receives one-line progress messages (stderr in the
	// foreground; nil for none).
	Progress io.Writer
	// Log, when set, receives those messages instead, as records (the
	// supervisor's log, `runner supervise --log-level`).
	Log *slog.Logger
	// Now returns the time; nil means time.Now.
	Now func() time.Time

	// ExitOf is the exit code task t's outcome stands for: cmd/runner's
	// table, given to the notify command as RUNNER_EXIT (unset when
	// ExitOf is nil).
	ExitOf func(t *state.Task) int

	// Push is where a task's needs are pushed (package push).
	Push push.Config

	// Hosts holds the connections to hosts (made by the caller; one per
	// command or supervisor). Nil: no task or project on a host can be
	// reached.
	Hosts *hosts.Pool
}

func (e *Env) Time() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return clock.Now()
}

func (e *Env) Say(format string, args ...any) {
	if e.Log != nil {
		e.Log.Info(fmt.Sprintf(format, args...))
		return
	}
	if e.Progress != nil {
		fmt.Fprintf(e.Progress, "runner: "+format+"\n", args...)
	}
}

// GetenvOf is the lookup of env's environment: Env.Getenv, else the
// process's (os.Getenv).
func GetenvOf(env *Env) func(string) string {
	if env.Getenv != nil {
		return env.Getenv
	}
	return os.Getenv
}

// rec is the task record's writer (package record) over env's store,
// clock and warnings: a value, made when asked.
func (env *Env) Record() record.Book {
	return record.Book{Store: env.Store, Now: env.Time, Warn: env.Warn, Procs: reconcile.LiveProcs{}}
}

// TaskTitle is a task's first line, clipped for messages and labels.
func TaskTitle(s string) string { return textutil.Headline(s, 100) }

// warn says what went wrong on the progress writer, or on stderr when
// there is none (a --json run): a lost write is never silent.
func (env *Env) Warn(format string, args ...any) {
	if env.Log != nil {
		env.Log.Warn(fmt.Sprintf(format, args...))
		return
	}
	w := env.Progress
	if w == nil {
		w = os.Stderr
	}
	fmt.Fprintf(w, "runner: "+format+"\n", args...)
}
