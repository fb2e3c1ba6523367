package tasks

import (
	"context"
	"errors"
	"sync"

	"github.com/runner-cli/runner/state"
)

// fakeStore is a Store over a state in memory: set replaces it and
// signals the watchers.
type fakeStore struct {
	mu       sync.Mutex
	st       *state.State
	readErr  error
	watchErr error
	reads    int
	changes  chan struct{}
	// watching is closed when a wait started watching (its first read
	// done).
	watching chan struct{}
	once     sync.Once
	// beforeWatch, when set, runs as a watch starts: a change made
	// between a wait's first read and its watch, which the watch does
	// not signal.
	beforeWatch func()
}

func newFakeStore(st *state.State) *fakeStore {
	return &fakeStore{st: st, changes: make(chan struct{}, 1), watching: make(chan struct{})}
}

func (f *fakeStore) Read(ctx context.Context) (*state.State, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	if f.readErr != nil {
		return nil, f.readErr
	}
	return f.st, nil
}

func (f *fakeStore) Watch(ctx context.Context) (<-chan struct{}, error) {
	if f.watchErr != nil {
		return nil, f.watchErr
	}
	if f.beforeWatch != nil {
		f.beforeWatch()
		f.beforeWatch = nil
		<-f.changes // the change is not signalled: made before the watch
	}
	f.once.Do(func() { close(f.watching) })
	return f.changes, nil
}

// set changes the task id (a copy: a state already read stays as it
// was) and signals the change.
func (f *fakeStore) set(id string, fn func(*state.Task)) {
	f.mu.Lock()
	next := state.New()
	for k, v := range f.st.Tasks {
		c := *v
		next.Tasks[k] = &c
	}
	next.Projects = f.st.Projects
	if t := next.Tasks[id]; t != nil {
		fn(t)
	}
	f.st = next
	f.mu.Unlock()
	f.signal()
}

// signal says the state changed; signals not yet taken are one, as the
// store's own watch coalesces them.
func (f *fakeStore) signal() {
	select {
	case f.changes <- struct{}{}:
	default:
	}
}

// fakeTmux is a Tmux that records the panes selected.
type fakeTmux struct {
	selected  []string
	selectErr error
}

func (f *fakeTmux) SelectPane(ctx context.Context, pane string) error {
	f.selected = append(f.selected, pane)
	return f.selectErr
}

func (f *fakeTmux) AttachArgv(target string, inside bool) []string {
	if inside {
		return []string{"tmux", "switch-client", "-t", target}
	}
	return []string{"tmux", "attach-session", "-t", target}
}

func (f *fakeTmux) HostAttachArgv(target string) []string {
	return []string{"tmux", "-L", "remote", "attach-session", "-t", target}
}

// fakeDeps is Deps over store and tc, reconciling by reading the store.
func fakeDeps(store *fakeStore, tc *fakeTmux) Deps {
	return Deps{
		Store:     store,
		TC:        tc,
		Reconcile: store.Read,
		HostConn: func(ctx context.Context, name string) (Host, error) {
			return nil, errors.New("host " + name + " unreachable")
		},
		Say:    func(string, ...any) {},
		ExitOf: func(t *state.Task) int { return 0 },
	}
}

// fakeHost is a Host whose tmux server is tc, reached by "ssh -t NAME".
type fakeHost struct {
	name string
	tc   *fakeTmux
}

func (h *fakeHost) Tmux() Tmux { return h.tc }

func (h *fakeHost) TerminalArgv(argv ...string) []string {
	return append([]string{"ssh", "-t", h.name}, argv...)
}

// withHosts makes d reach the hosts of byName (any other is unreachable)
// and records the names asked for in asked.
func withHosts(d Deps, byName map[string]*fakeHost, asked *[]string) Deps {
	d.HostConn = func(ctx context.Context, name string) (Host, error) {
		*asked = append(*asked, name)
		if h, ok := byName[name]; ok {
			return h, nil
		}
		return nil, errors.New("host " + name + " unreachable")
	}
	return d
}
