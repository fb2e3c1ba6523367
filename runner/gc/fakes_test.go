package gc

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/statetest"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/record"
	"github.com/runner-cli/runner/runner/settings"
	"github.com/runner-cli/runner/runner/worktree"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// fakeTmux is a tmux server: its panes (pid 0: no process of this
// machine is ever picked), the clients showing windows, the state
// directory each pane's option names, and the screens. Killing a window
// drops its pane; with dieOnKeys a pane dies on the first key.
type fakeTmux struct {
	mu        sync.Mutex
	panes     []tmuxctl.PaneInfo
	clients   []tmuxctl.ClientInfo
	option    map[string]string
	screens   map[string]string
	killed    []string
	keys      []string
	killErr   error
	keysErr   error
	listErr   error
	dieOnKeys bool
}

func newTmux() *fakeTmux {
	return &fakeTmux{option: map[string]string{}, screens: map[string]string{}}
}

// add adds pane id of a window named name in session, window @id.
func (f *fakeTmux) add(id, session, name string) {
	f.panes = append(f.panes, tmuxctl.PaneInfo{ID: id, Session: session, WindowName: name, WindowID: "@" + id[1:]})
}

func (f *fakeTmux) ListPanes(ctx context.Context) ([]tmuxctl.PaneInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]tmuxctl.PaneInfo(nil), f.panes...), f.listErr
}

func (f *fakeTmux) Pane(ctx context.Context, pane string) (tmuxctl.PaneInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range f.panes {
		if p.ID == pane {
			return p, nil
		}
	}
	return tmuxctl.PaneInfo{}, tmuxctl.ErrNotFound
}

func (f *fakeTmux) Clients(ctx context.Context) ([]tmuxctl.ClientInfo, error) { return f.clients, nil }

func (f *fakeTmux) ShowOption(ctx context.Context, pane, name string) (string, error) {
	if v, ok := f.option[pane]; ok && name == stateDirOption {
		return v, nil
	}
	return "", errors.New("invalid option")
}

func (f *fakeTmux) ServerPID(ctx context.Context) (int, error) { return 0, nil }

func (f *fakeTmux) CaptureScreen(ctx context.Context, pane string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.screens[pane], nil
}

func (f *fakeTmux) Capture(ctx context.Context, pane string, opts tmuxctl.CaptureOptions) (string, error) {
	return f.CaptureScreen(ctx, pane)
}

func (f *fakeTmux) SendKeys(ctx context.Context, pane string, keys ...string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.keysErr != nil {
		return f.keysErr
	}
	f.keys = append(f.keys, pane+" "+strings.Join(keys, " "))
	for i := range f.panes {
		if f.panes[i].ID == pane && f.dieOnKeys {
			f.panes[i].Dead = true
		}
	}
	return nil
}

func (f *fakeTmux) KillWindow(ctx context.Context, pane string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.killErr != nil {
		return f.killErr
	}
	f.killed = append(f.killed, pane)
	for i, p := range f.panes {
		if p.ID == pane {
			f.panes = append(f.panes[:i], f.panes[i+1:]...)
			break
		}
	}
	return nil
}

// fakeHost is a registered host: its tmux server, and the commands run
// there.
type fakeHost struct {
	h   *state.Host
	tc  *fakeTmux
	mu  sync.Mutex
	ran []string
}

func (f *fakeHost) Host() *state.Host { return f.h }
func (f *fakeHost) Tmux() Tmux        { return f.tc }
func (f *fakeHost) TaskPath(ctx context.Context, id string) (string, error) {
	return "/home/u/.runner/" + id, nil
}

func (f *fakeHost) Run(ctx context.Context, argv ...string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ran = append(f.ran, strings.Join(argv, " "))
	return "", nil
}

// paneCore is package runner over a store and a tmux server: the state
// as stored with the server's panes; reconcileErr fails it.
type paneCore struct {
	store        *state.Store
	tc           *fakeTmux
	reconcileErr error
	notified     []string
}

func (c *paneCore) GetTask(ctx context.Context, ref string) (*state.Task, error) {
	st, err := c.store.Read(ctx)
	if err != nil {
		return nil, err
	}
	if t := st.Tasks[ref]; t != nil {
		return t, nil
	}
	return nil, fmt.Errorf("no task %s", ref)
}

func (c *paneCore) ReconcilePanes(ctx context.Context) (*state.State, []tmuxctl.PaneInfo, error) {
	if c.reconcileErr != nil {
		return nil, nil, c.reconcileErr
	}
	st, err := c.store.Read(ctx)
	if err != nil {
		return nil, nil, err
	}
	panes, err := c.tc.ListPanes(ctx)
	return st, panes, err
}

func (c *paneCore) Notify(_ context.Context, t *state.Task, _ settings.Run) {
	c.notified = append(c.notified, t.ID)
}

// world is gc's Deps over a real store, a fake tmux server here, fake
// hosts (a host not in hosts cannot be reached), an agent "fake" whose
// quit key prints its session id, and the warnings said.
type world struct {
	t     *testing.T
	store *state.Store
	tc    *fakeTmux
	core  *paneCore
	hosts map[string]*fakeHost
	// gitOn is Hosts.GitOn (nil: no git in the test).
	gitOn  func(ctx context.Context, host string) (context.Context, error)
	warned []string
	d      Deps
}

// worldHosts is the Hosts of a world: its fake hosts, and its gitOn.
type worldHosts struct{ w *world }

func (h worldHosts) Conn(ctx context.Context, name string) (Host, error) {
	if c := h.w.hosts[name]; c != nil {
		return c, nil
	}
	return nil, fmt.Errorf("host %s (u@%s): host unreachable", name, name)
}

func (h worldHosts) GitOn(ctx context.Context, host string) (context.Context, error) {
	if h.w.gitOn == nil {
		return nil, errors.New("no git in this test")
	}
	return h.w.gitOn(ctx, host)
}

func newWorld(t *testing.T) *world {
	t.Helper()
	s := statetest.Store(t)
	w := &world{t: t, store: s, tc: newTmux(), hosts: map[string]*fakeHost{}}
	w.core = &paneCore{store: s, tc: w.tc}
	prof := &profile.Profile{Name: "fake", Command: []string{"fake"}, QuitKeys: []string{"C-c"}, InterruptKeys: []string{"Escape"},
		SessionID: []string{`session: (\S+)`}, Resume: []string{"--resume", profile.SessionPlaceholder}}
	if err := prof.Compile(); err != nil {
		t.Fatal(err)
	}
	w.d = Deps{Store: s, Record: record.Book{Store: s, Now: clock.Now, Procs: noProcs{}}, TC: w.tc,
		Profiles: []*profile.Profile{prof}, Now: clock.Now,
		Warn:  func(format string, args ...any) { w.warned = append(w.warned, fmt.Sprintf(format, args...)) },
		Hosts: worldHosts{w},
		PaneClient: func(ctx context.Context, t *state.Task) (Tmux, error) {
			if t.Tmux.Host != "" {
				if h := w.hosts[t.Tmux.Host]; h != nil {
					return h.tc, nil
				}
				return nil, errors.New("host unreachable")
			}
			return w.tc, nil
		},
		Core:          w.core,
		ListWorktrees: func(ctx context.Context) ([]worktree.Info, error) { return nil, nil },
	}
	return w
}

// task records a task ended ago (running when ago is 0) in pane (its
// own window, named after it, in session api) of host ("" here).
func (w *world) task(id string, s state.Status, ago time.Duration, host, pane string) *state.Task {
	w.t.Helper()
	t := &state.Task{ID: id, Project: "api", Agent: "fake", Status: s, Created: clock.Now().Add(-3 * time.Hour),
		Tmux: state.TmuxTarget{Host: host, Session: "api", Pane: pane}}
	if s.IsTerminal() {
		t.Ended = clock.Now().Add(-ago)
	}
	if err := w.store.Update(w.t.Context(), func(st *state.State) error { st.Tasks[id] = t; return nil }); err != nil {
		w.t.Fatal(err)
	}
	return t
}

// read is task id as stored now.
func (w *world) read(id string) *state.Task {
	w.t.Helper()
	st := statetest.Read(w.t, w.store)
	return st.Tasks[id]
}
