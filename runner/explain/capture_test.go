package explain

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// fakePanes is a tmux server with one pane's facts and screen.
type fakePanes struct {
	name   string
	info   tmuxctl.PaneInfo
	screen string
	err    error
	asked  []string
}

func (f *fakePanes) Pane(_ context.Context, pane string) (tmuxctl.PaneInfo, error) {
	f.asked = append(f.asked, "pane "+pane)
	return f.info, f.err
}

func (f *fakePanes) CaptureScreen(_ context.Context, pane string) (string, error) {
	f.asked = append(f.asked, "capture "+pane)
	return f.screen, nil
}

// TestCapture: the screen comes with what tmux says of the pane, the
// cursor always known; a pane tmux does not know is an error, nothing
// captured.
func TestCapture(t *testing.T) {
	p := &fakePanes{info: tmuxctl.PaneInfo{Dead: true, DeadStatus: 3, CurrentCommand: "bash", AlternateOn: true, CursorY: 7}, screen: "$ "}
	screen, info, err := Capture(context.Background(), p, "%4")
	if err != nil || screen != "$ " {
		t.Fatalf("Capture: %q, %v", screen, err)
	}
	if !info.Dead || info.DeadStatus != 3 || info.CurrentCommand != "bash" || !info.AlternateOn || !info.CursorKnown || info.CursorY != 7 {
		t.Errorf("info %+v", info)
	}
	if strings.Join(p.asked, ",") != "pane %4,capture %4" {
		t.Errorf("asked %v", p.asked)
	}
	bad := &fakePanes{err: errors.New("no such pane")}
	if _, _, err := Capture(context.Background(), bad, "%9"); err == nil || len(bad.asked) != 1 {
		t.Errorf("unknown pane: %v, asked %v", err, bad.asked)
	}
}

// fakeTasks is a state of tasks, each pane on a server of its own.
type fakeTasks struct {
	st      *state.State
	servers map[string]*fakePanes // task id → its pane's server
	events  string                // the dir of events files
}

func (f *fakeTasks) GetTask(_ context.Context, ref string) (*state.Task, error) {
	return f.st.FindTask(ref)
}

func (f *fakeTasks) State(context.Context) (*state.State, error) { return f.st, nil }

func (f *fakeTasks) PaneClient(_ context.Context, t *state.Task) (Panes, error) {
	return f.servers[t.ID], nil
}

func (f *fakeTasks) EventsFile(id string) string { return filepath.Join(f.events, id+".events") }

func newFakeTasks(t *testing.T) *fakeTasks {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	st := &state.State{Tasks: map[string]*state.Task{
		"t_old00001": {ID: "t_old00001", Agent: "codex", Created: t0, Tmux: state.TmuxTarget{Pane: "%1", Socket: "runner"}},
		"t_new00001": {ID: "t_new00001", Agent: "claude", Created: t0.Add(time.Minute), Tmux: state.TmuxTarget{Pane: "%1", Socket: "runner"}},
		"t_far00001": {ID: "t_far00001", Agent: "pi", Created: t0.Add(time.Hour), Tmux: state.TmuxTarget{Pane: "%1", Socket: "runner", Host: "b1"}},
		"t_queued01": {ID: "t_queued01", Agent: "sim", Status: state.StatusQueued},
	}}
	dir := t.TempDir()
	line := `{"time":"2026-01-02T03:04:05Z","event":"Stop","data":{"hook_event_name":"Stop","session_id":"s9","last_assistant_message":"done"}}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "t_new00001.events"), []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	return &fakeTasks{st: st, events: dir, servers: map[string]*fakePanes{
		"t_new00001": {name: "here"}, "t_far00001": {name: "b1"},
	}}
}

// TestLocate: a task's pane is captured where it runs, with its agent and
// its last hook event; a bare pane finds its task on this machine's
// server; a pane of no task needs --agent.
func TestLocate(t *testing.T) {
	ctx := context.Background()
	ts := newFakeTasks(t)
	local := &fakePanes{name: "local"}

	tg, err := Locate(ctx, ts, local, "runner", "t_far", "", "", "agents explain")
	if err != nil || tg.Task != "t_far00001" || tg.Pane != "%1" || tg.Agent != "pi" || tg.Panes.(*fakePanes).name != "b1" || tg.LastHook != nil {
		t.Errorf("task on a host: %+v, %v", tg, err)
	}
	tg, err = Locate(ctx, ts, local, "runner", "", "%1", "", "agents explain")
	if err != nil || tg.Task != "t_new00001" || tg.Agent != "claude" || tg.Panes.(*fakePanes).name != "here" {
		t.Fatalf("bare pane: %+v, %v", tg, err)
	}
	if ev := tg.LastHook; ev == nil || ev.Name != "Stop" || !ev.Stop || ev.Session != "s9" || ev.Answer != "done" {
		t.Errorf("last hook %+v", tg.LastHook)
	}
	if tg, err = Locate(ctx, ts, local, "runner", "", "%1", "codex", "x"); err != nil || tg.Agent != "codex" {
		t.Errorf("--agent overrides the task's: %+v, %v", tg, err)
	}
	if tg, err = Locate(ctx, ts, local, "runner", "", "%7", "claude", "x"); err != nil || tg.Task != "" || tg.Panes != local || tg.Pane != "%7" {
		t.Errorf("a pane of no task: %+v, %v", tg, err)
	}
	for _, c := range []struct{ task, pane, want string }{
		{"", "%7", "pane %7 is no task's: give --agent NAME"},
		{"t_queued", "", "task t_queued01 has no pane yet (queued)"},
	} {
		_, err := Locate(ctx, ts, local, "runner", c.task, c.pane, "", "agents explain")
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, fault.ErrUsage) {
			t.Errorf("%s%s: %v, want %q (a usage error)", c.task, c.pane, err, c.want)
		}
	}
	if _, err := Locate(ctx, ts, local, "runner", "t_none", "", "", "x"); err == nil {
		t.Error("an unknown task was found")
	}
}

// TestTaskOfPane: the newest task on this machine's server of that
// socket; never a host's, never another server's.
func TestTaskOfPane(t *testing.T) {
	st := newFakeTasks(t).st
	if got := TaskOfPane(st, "runner", "%1"); got == nil || got.ID != "t_new00001" {
		t.Errorf("got %v", got)
	}
	if got := TaskOfPane(st, "other", "%1"); got != nil {
		t.Errorf("another server's: %v", got.ID)
	}
	if got := TaskOfPane(st, "runner", "%2"); got != nil {
		t.Errorf("no task's pane: %v", got.ID)
	}
}

// TestHookLine: each part of the line comes with what the event has.
func TestHookLine(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 5, 5, 0, time.UTC)
	for _, c := range []struct {
		ev   *HookEvent
		want string
	}{
		{nil, "none (the screen decides the turn's end)"},
		{&HookEvent{Name: "Notification"}, "Notification"},
		{&HookEvent{Name: "Stop", Stop: true, Time: now.Add(-time.Minute), Session: "s1"}, "Stop (a turn's end), 1m ago, session s1"},
	} {
		if got := HookLine(c.ev, now); got != c.want {
			t.Errorf("%+v: %q, want %q", c.ev, got, c.want)
		}
	}
	if LastHookEvent(filepath.Join(t.TempDir(), "none")) != nil {
		t.Error("an event read from no file")
	}
}
