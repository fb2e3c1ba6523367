package watch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// fakeStore is a Store over a state in memory; set replaces it and
// signals the view.
type fakeStore struct {
	mu       sync.Mutex
	st       *state.State
	readErr  error
	watchErr error
	changes  chan struct{}
}

func (f *fakeStore) Read(ctx context.Context) (*state.State, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.st, f.readErr
}

func (f *fakeStore) Watch(ctx context.Context) (<-chan struct{}, error) {
	return f.changes, f.watchErr
}

// fakeTmux is this machine's tmux server: the panes selected and the
// commands run are recorded; socket is what display-message answers;
// dead panes cannot be selected.
type fakeTmux struct {
	mu       sync.Mutex
	socket   string
	dead     map[string]bool
	selected []string
	commands []string
}

func (f *fakeTmux) SelectPane(ctx context.Context, pane string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.dead[pane] {
		return errors.New("can't find pane: " + pane)
	}
	f.selected = append(f.selected, pane)
	return nil
}

func (f *fakeTmux) Command(ctx context.Context, args ...string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.commands = append(f.commands, strings.Join(args, " "))
	if args[0] == "display-message" {
		return f.socket + "\n", nil
	}
	return "", nil
}

func (f *fakeTmux) AttachArgv(target string, inside bool) []string {
	return []string{"tmux", "attach-session", "-t", target}
}

// fakeScreen is a pane's screen: text, or err (a dead pane, a host
// that does not answer).
type fakeScreen struct {
	text string
	err  error
	n    int
}

func (f *fakeScreen) Capture(ctx context.Context, pane string, opts tmuxctl.CaptureOptions) (string, error) {
	f.n++
	return f.text, f.err
}

// fixture is a view over a fake store (project api, t_run running in
// pane %1, t_ask needs_input in %2, t_done done without a pane), a
// fake tmux server and a runner binary that prints its arguments (and
// fails with exit 3 for `cancel`).
type fixture struct {
	store  *fakeStore
	tc     *fakeTmux
	screen *fakeScreen
	m      *Model
	now    time.Time
	bell   *strings.Builder
}

var t0 = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

func sampleState() *state.State {
	st := state.New()
	st.Projects["api"] = &state.Project{Name: "api", Dir: "/src/api"}
	add := func(id string, s state.Status, pane string, age time.Duration) *state.Task {
		t := &state.Task{ID: id, Project: "api", Dir: "/src/api", Agent: "sim", Text: "do " + id, Status: s,
			Created: t0.Add(-age), Tmux: state.TmuxTarget{Session: "api", Pane: pane},
			History: []state.StatusChange{{Status: s, Time: t0.Add(-age)}}}
		if s.IsTerminal() {
			t.Ended = t0.Add(-age)
		}
		st.Tasks[id] = t
		return t
	}
	add("t_run", state.StatusRunning, "%1", 3*time.Minute)
	add("t_ask", state.StatusNeedsInput, "%2", 2*time.Minute).Question = "which file?"
	add("t_done", state.StatusDone, "", time.Minute)
	return st
}

// fakePanes are the panes of a fixture: screen for a task here or on a
// host, but host "gone", which cannot be reached; attaching on a host
// cannot either.
type fakePanes struct{ screen *fakeScreen }

func (p fakePanes) Screen(ctx context.Context, x *state.Task) (Screen, error) {
	if x.Tmux.Host == "gone" {
		return nil, errors.New("host gone: unreachable")
	}
	return p.screen, nil
}

func (p fakePanes) AttachArgv(ctx context.Context, ref string) ([]string, error) {
	return nil, errors.New("host gone: unreachable")
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	exe := filepath.Join(t.TempDir(), "runner")
	script := "#!/bin/sh\nif [ \"$*\" = 'cancel t_run' ]; then echo 'warming up' >&2; echo 'task t_run is not yours' >&2; exit 3; fi\necho \"ran $*\"\necho second line\n"
	if err := os.WriteFile(exe, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	f := &fixture{store: &fakeStore{st: sampleState(), changes: make(chan struct{}, 1)},
		tc: &fakeTmux{socket: "/tmp/runner.sock", dead: map[string]bool{}}, screen: &fakeScreen{text: "agent screen"},
		now: t0, bell: &strings.Builder{}}
	d := Deps{Store: f.store, TC: f.tc, Reconcile: f.store.Read,
		Panes: fakePanes{f.screen}}
	m, err := New(t.Context(), Options{Deps: d, Exe: exe, Bell: f.bell, Now: func() time.Time { return f.now }})
	if err != nil {
		t.Fatal(err)
	}
	f.m = m
	f.load(t)
	return f
}

// load feeds the view a read of the store, as its feed would.
func (f *fixture) load(t *testing.T) tea.Cmd {
	t.Helper()
	msg := f.m.feed.load(t.Context(), false)()
	_, cmd := f.m.Update(msg)
	return cmd
}

// press sends keys (names as tea.Key.String gives them, or text) and
// returns the last command.
func (f *fixture) press(keys ...string) tea.Cmd {
	var cmd tea.Cmd
	for _, k := range keys {
		_, cmd = f.m.Update(keyMsg(k))
	}
	return cmd
}

func keyMsg(k string) tea.KeyPressMsg {
	switch k {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	}
	return tea.KeyPressMsg{Code: []rune(k)[0], Text: k}
}

// do runs cmd, which must be one command (an action, a capture), not
// a batch nor a tick, feeds its message to the view, and returns it.
func (f *fixture) do(t *testing.T, cmd tea.Cmd) tea.Msg {
	t.Helper()
	if cmd == nil {
		t.Fatal("no command")
	}
	msg := cmd()
	if _, ok := msg.(tea.BatchMsg); ok {
		t.Fatalf("a batch, not one command: %#v", msg)
	}
	f.m.Update(msg)
	return msg
}
