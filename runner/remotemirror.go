package runner

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/remote"
	"github.com/runner-cli/runner/state"
)

// startMirror starts streaming t's files from its host into their local
// copies (remote.Stream), from where those end (so a resumed supervisor
// neither loses nor repeats a byte). It returns a context that ends, with
// a cause wrapping remote.ErrHostLost, when the stream stays down for
// RUNNER_HOST_LOST_AFTER (default remote.DefaultHostLostAfter), and the
// function that stops the stream.
func startMirror(ctx context.Context, env *Env, t *state.Task) (context.Context, func(), error) {
	lostAfter := remote.DefaultHostLostAfter
	if v := env.Getenv("RUNNER_HOST_LOST_AFTER"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return nil, nil, fault.Usagef("RUNNER_HOST_LOST_AFTER=%q is not a positive duration (e.g. 20s)", v)
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
	local := remote.Local{Transcript: t.Transcript, Died: remoteDiedFile(env.Store, t.ID), Events: env.Store.TaskFile("events", t.ID)}
	ctx, stop, err := remote.Stream(ctx, c, remote.FilesIn(dir), local, lostAfter)
	if err != nil {
		return nil, nil, fmt.Errorf("task %s: %w", t.ID, err)
	}
	return ctx, stop, nil
}

// earlyMirror is the stream of a foreground remote task's files, started
// with its agent so that its supervisor sees the first screen at once.
type earlyMirror struct {
	runCtx context.Context
	stop   func()
	taken  bool
}

// startEarlyMirror starts streaming t's files now, for the supervisor this
// process runs next (nil when it cannot: the supervisor tries again, and
// says why).
func startEarlyMirror(ctx context.Context, env *Env, t *state.Task) *earlyMirror {
	runCtx, stop, err := startMirror(ctx, env, t)
	if err != nil {
		return nil
	}
	return &earlyMirror{runCtx: runCtx, stop: stop}
}

// take hands the stream to its supervisor (false: there is none).
func (e *earlyMirror) take() (context.Context, func(), bool) {
	if e == nil || e.taken {
		return nil, nil, false
	}
	e.taken = true
	return e.runCtx, e.stop, true
}

// release stops the stream unless its supervisor took it.
func (e *earlyMirror) release() {
	if e != nil && !e.taken {
		e.taken = true
		e.stop()
	}
}

// remoteDiedFile is the local copy of a remote task's pane-died lines.
func remoteDiedFile(store *state.Store, id string) string {
	return filepath.Join(filepath.Dir(store.TaskFile("events", id)), id+".panes-died")
}
