package runner

import (
	"context"
	"fmt"
	"os"

	"github.com/runner-cli/runner/state"
)

// updateDurably applies fn in a state update that must not be lost to
// contention (record.Book.UpdateDurably).
func (env *Env) updateDurably(ctx context.Context, what string, fn func(*state.State) error) error {
	return env.rec().UpdateDurably(ctx, what, fn)
}

// updateTaskDurably is updateDurably for a change of one task that depends
// on that task alone (record.Book.UpdateTaskDurably).
func (env *Env) updateTaskDurably(ctx context.Context, what, id string, fn func(*state.Task) error) error {
	return env.rec().UpdateTaskDurably(ctx, what, id, fn)
}

// warn says what went wrong on the progress writer, or on stderr when
// there is none (a --json run): a lost write is never silent.
func (env *Env) warn(format string, args ...any) {
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
