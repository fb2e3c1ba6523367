package runner

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/runner-cli/runner/runner/exit"
	"github.com/runner-cli/runner/runner/remote"
	"github.com/runner-cli/runner/state"
)

// startMirror starts streaming t's files from its host into their local
// copies (remote.Stream), from where those end (so a resumed supervisor
// neither loses nor repeats a byte). It returns a context that ends, with
// a cause wrapping remote.ErrHostLost, when the stream stays down for
// RUNNER_HOST_LOST_AFTER (default remote.DefaultHostLostAfter), and the
// function that stops the stream.
func (env *Env) startMirror(ctx context.Context, t *state.Task) (context.Context, func(), error) {
	lostAfter := remote.DefaultHostLostAfter
	if v := env.Getenv("RUNNER_HOST_LOST_AFTER"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return nil, nil, exit.Usagef("RUNNER_HOST_LOST_AFTER=%q is not a positive duration (e.g. 20s)", v)
		}
		lostAfter = d
	}
	c, err := env.HostConn(ctx, t.Tmux.Host)
	if err != nil {
		return nil, nil, err
	}
	dir, err := c.TaskPath(ctx, t.ID) // its script makes the directories
	if err != nil {
		return nil, nil, err
	}
	local := remote.Local{Transcript: t.Transcript, Died: env.remoteDiedFile(t.ID), Events: env.Store.TaskFile("events", t.ID)}
	ctx, stop, err := remote.Stream(ctx, c, remote.FilesIn(dir), local, lostAfter)
	if err != nil {
		return nil, nil, fmt.Errorf("task %s: %w", t.ID, err)
	}
	return ctx, stop, nil
}

// earlyMirror is a stream started before its supervisor (see Env.early).
type earlyMirror struct {
	id     string
	runCtx context.Context
	stop   func()
}

// startEarlyMirror starts streaming t's files now, for the supervisor this
// process runs next; the returned function stops it unless the
// supervisor took it.
func (env *Env) startEarlyMirror(ctx context.Context, t *state.Task) func() {
	runCtx, stop, err := env.startMirror(ctx, t)
	if err != nil {
		return func() {} // the supervisor tries again, and says why
	}
	env.early = &earlyMirror{id: t.ID, runCtx: runCtx, stop: stop}
	return func() {
		if e := env.early; e != nil && e.id == t.ID {
			env.early = nil
			e.stop()
		}
	}
}

// takeEarlyMirror returns the stream started early for task id, if any.
func (env *Env) takeEarlyMirror(id string) (context.Context, func(), bool) {
	e := env.early
	if e == nil || e.id != id {
		return nil, nil, false
	}
	env.early = nil
	return e.runCtx, e.stop, true
}

// remoteDiedFile is the local copy of a remote task's pane-died lines.
func (env *Env) remoteDiedFile(id string) string {
	return filepath.Join(filepath.Dir(env.Store.TaskFile("events", id)), id+".panes-died")
}
