package explain

import (
	"context"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/tailfile"
	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/spend"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// Panes is the tmux server a pane is captured on (a *tmuxctl.Client).
type Panes interface {
	Pane(ctx context.Context, pane string) (tmuxctl.PaneInfo, error)
	CaptureScreen(ctx context.Context, pane string) (string, error)
}

// Capture captures pane's screen on p's server, with what tmux says about
// the pane besides the text.
func Capture(ctx context.Context, p Panes, pane string) (string, profile.PaneInfo, error) {
	pi, err := p.Pane(ctx, pane)
	if err != nil {
		return "", profile.PaneInfo{}, err
	}
	screen, err := p.CaptureScreen(ctx, pane)
	if err != nil {
		return "", profile.PaneInfo{}, err
	}
	return screen, profile.PaneInfo{Dead: pi.Dead, DeadStatus: pi.DeadStatus, CurrentCommand: pi.CurrentCommand,
		AlternateOn: pi.AlternateOn, CursorKnown: true, CursorY: pi.CursorY}, nil
}

// Tasks is what Locate reads of the tasks: one by id or prefix, the
// state, the tmux server of a task's pane and its events file.
type Tasks interface {
	// GetTask is the task ref names (an id or a unique prefix).
	GetTask(ctx context.Context, ref string) (*state.Task, error)
	// State reads the state.
	State(ctx context.Context) (*state.State, error)
	// PaneClient is the tmux server t's pane is on (here or on its host).
	PaneClient(ctx context.Context, t *state.Task) (Panes, error)
	// EventsFile is the path of task id's hook events file.
	EventsFile(id string) string
}

// Target is what Locate found: the pane to capture and where, its task
// (if any) with that task's last hook event, and the agent to read it
// with.
type Target struct {
	Panes    Panes
	Pane     string
	Task     string
	Agent    string
	LastHook *HookEvent
}

// Locate finds the pane to explain: the pane of task taskRef when given,
// else pane on the local server, whose task (if any) it finds in the
// state. agent, when given, overrides the task's agent; cmdName names the
// command in errors.
func Locate(ctx context.Context, ts Tasks, local Panes, socket, taskRef, pane, agent, cmdName string) (Target, error) {
	var t *state.Task
	var err error
	if taskRef != "" {
		if t, err = ts.GetTask(ctx, taskRef); err != nil {
			return Target{}, err
		}
		if t.Tmux.Pane == "" {
			return Target{}, fault.Usagef("%s: task %s has no pane yet (%s)", cmdName, t.ID, t.Status)
		}
	} else if st, err := ts.State(ctx); err == nil {
		t = TaskOfPane(st, socket, pane)
	}
	tg := Target{Panes: local, Pane: pane, Agent: agent}
	if t != nil {
		if tg.Panes, err = ts.PaneClient(ctx, t); err != nil {
			return Target{}, err
		}
		tg.Task, tg.Pane = t.ID, t.Tmux.Pane
		if tg.Agent == "" {
			tg.Agent = t.Agent
		}
		tg.LastHook = LastHookEvent(ts.EventsFile(t.ID))
	}
	if tg.Agent == "" {
		return Target{}, fault.Usagef("%s: pane %s is no task's: give --agent NAME", cmdName, pane)
	}
	return tg, nil
}

// TaskOfPane is the task whose pane on this machine's server socket is
// pane (the newest, a pane id being reused after a server restart), or
// nil.
func TaskOfPane(st *state.State, socket, pane string) *state.Task {
	var found *state.Task
	for _, t := range st.Tasks {
		if t.Tmux.Pane == pane && t.Tmux.Host == "" && t.Tmux.Socket == socket && (found == nil || t.Created.After(found.Created)) {
			found = t
		}
	}
	return found
}

// HookEvent is a task's last hook event, as explain shows it.
type HookEvent struct {
	Name    string    `json:"name"`
	Time    time.Time `json:"time,omitzero"`
	Stop    bool      `json:"stop"`
	Session string    `json:"session,omitempty"`
	Answer  string    `json:"answer,omitempty"`
}

// LastHookEvent is the last event line of a task's events file (nil:
// none, or no file).
func LastHookEvent(path string) *HookEvent {
	tail, _ := tailfile.Bytes(path, 64<<10)
	lines := strings.Split(textutil.LastLines(string(tail), 20), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if ev, ok := spend.ReadHookEvent(lines[i]); ok {
			return &HookEvent{Name: ev.Name, Time: ev.Time, Stop: ev.Stop, Session: ev.Session, Answer: textutil.Headline(ev.Answer, 120)}
		}
	}
	return nil
}

// HookLine says ev in a line: its name, whether it ends a turn, and
// when.
func HookLine(ev *HookEvent, now time.Time) string {
	if ev == nil {
		return "none (the screen decides the turn's end)"
	}
	s := ev.Name
	if ev.Stop {
		s += " (a turn's end)"
	}
	if !ev.Time.IsZero() {
		s += ", " + textutil.Age(now, ev.Time) + " ago"
	}
	if ev.Session != "" {
		s += ", session " + ev.Session
	}
	return s
}
