package supervisor

import (
	"context"
	"time"

	"github.com/runner-cli/runner/runner/monitor"
	"github.com/runner-cli/runner/runner/profile"
)

// Watcher is how the supervisor learns what the agent does: a
// monitor.Monitor (see Watch), or in tests a recorded sequence.
type Watcher interface {
	// Wait returns the next observation that ends goal (monitor.Monitor.Wait).
	Wait(ctx context.Context, goal monitor.Goal, since time.Time) (monitor.Observation, error)
	// WaitHook waits up to d for the hook event that ends the turn.
	WaitHook(ctx context.Context, d time.Duration) *profile.HookEvent
	// HookNow is the hook event that ends the turn, if one came already.
	HookNow() *profile.HookEvent
	// Written receives when hook events or the pane's output are
	// written, until stop (nil: never).
	Written() (written <-chan struct{}, stop func())
	// Expect says which hook event ends the turn: set as a prompt is
	// delivered. Expecting is the current one.
	Expect(m profile.TurnMatch)
	Expecting() profile.TurnMatch
	// EventsOffset is where the hook events that come next will start.
	EventsOffset() int64
	// EventsFile is the task's hook events file ("" for none).
	EventsFile() string
	// Held is a watcher whose screens must hold, with no output at all,
	// at least d before they count (a profile's ready_hold).
	Held(d time.Duration) Watcher
}

// Watch makes m a Watcher.
func Watch(m *monitor.Monitor) Watcher { return monitorWatcher{m} }

type monitorWatcher struct{ *monitor.Monitor }

func (w monitorWatcher) Expect(m profile.TurnMatch)   { w.Match = m }
func (w monitorWatcher) Expecting() profile.TurnMatch { return w.Match }
func (w monitorWatcher) EventsOffset() int64          { return monitor.FileSize(w.Events) }
func (w monitorWatcher) EventsFile() string           { return w.Events }

func (w monitorWatcher) Held(d time.Duration) Watcher {
	if d <= w.Settle {
		return w
	}
	c := *w.Monitor
	c.Settle = d
	return monitorWatcher{&c}
}
