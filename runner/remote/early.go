package remote

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/transport"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/hosts"
	"github.com/runner-cli/runner/state"
)

// LostAfterVar names the variable that sets how long a task's stream may
// stay down before its host counts as lost (default DefaultHostLostAfter).
const LostAfterVar = "RUNNER_HOST_LOST_AFTER"

// Mirror starts streaming task id's files from its host (c) into their
// local copies in store (Stream), from where those end (so a resumed
// supervisor neither loses nor repeats a byte). lostAfter is
// LostAfterVar's value ("" for the default). It returns a context that
// ends, with a cause wrapping ErrHostLost, when the stream stays down that
// long, and the function that stops the stream.
func Mirror(ctx context.Context, c *hosts.Conn, store *state.Store, t *state.Task, lostAfter string) (context.Context, func(), error) {
	after := DefaultHostLostAfter
	if lostAfter != "" {
		d, err := time.ParseDuration(lostAfter)
		if err != nil || d <= 0 {
			return nil, nil, fault.Usagef("%s=%q is not a positive duration (e.g. 20s)", LostAfterVar, lostAfter)
		}
		after = d
	}
	dir, err := c.TaskPath(ctx, t.ID) // its script makes the directories
	if err != nil {
		return nil, nil, err
	}
	local := Local{Transcript: t.Transcript, Died: DiedFile(store, t.ID), Events: store.TaskFile(state.FileEvents, t.ID)}
	ctx, stop, err := Stream(ctx, c, FilesIn(dir), local, after)
	if err != nil {
		return nil, nil, fmt.Errorf("task %s: %w", t.ID, err)
	}
	return ctx, stop, nil
}

// DiedFile is the local copy of remote task id's pane-died lines.
func DiedFile(store *state.Store, id string) string {
	return filepath.Join(filepath.Dir(store.TaskFile(state.FileEvents, id)), id+".panes-died")
}

// Early is the stream of a foreground remote task's files, started with
// its agent so that its supervisor sees the first screen at once. A nil
// Early (the stream could not start: the supervisor tries again, and says
// why) is safe to use.
type Early struct {
	runCtx context.Context
	stop   func()
	taken  bool
}

// NewEarly is the early stream of a Mirror's context and stop.
func NewEarly(runCtx context.Context, stop func()) *Early {
	return &Early{runCtx: runCtx, stop: stop}
}

// Take hands the stream to its supervisor (false: there is none).
func (e *Early) Take() (context.Context, func(), bool) {
	if e == nil || e.taken {
		return nil, nil, false
	}
	e.taken = true
	return e.runCtx, e.stop, true
}

// Release stops the stream unless its supervisor took it.
func (e *Early) Release() {
	if e != nil && !e.taken {
		e.taken = true
		e.stop()
	}
}

// Unanswered reports whether the words of a failure (a reason kept as
// text) say that the host did not answer: a connection that could not be
// made (hosts.ErrUnreachable) or one that dropped under a command
// (transport.ErrConnection, in a tmux call's words there).
func Unanswered(reason string) bool {
	return strings.Contains(reason, hosts.ErrUnreachable.Error()) || strings.Contains(reason, transport.ErrConnection.Error())
}
