package tasks

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/state"
)

var t0 = time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)

// sample is a state of project api (at /src/api) and a few tasks: t_run
// running here, t_done done here, t_gpu running on host gpu, t_web of
// project web waiting for a pool.
func sample() *state.State {
	st := state.New()
	st.Projects["api"] = &state.Project{Name: "api", Dir: "/src/api"}
	st.Projects["far"] = &state.Project{Name: "far", Dir: "/srv/far", Host: "gpu"}
	add := func(id, project string, s state.Status, age time.Duration) *state.Task {
		t := &state.Task{ID: id, Project: project, Dir: "/src/" + project, Agent: "sim", Status: s,
			Created: t0.Add(-age), Tmux: state.TmuxTarget{Session: project, Pane: "%" + id[2:]}}
		if s.IsTerminal() {
			t.Ended = t0
		}
		st.Tasks[id] = t
		return t
	}
	add("t_run", "api", state.StatusRunning, time.Minute)
	add("t_done", "api", state.StatusDone, 2*time.Minute)
	add("t_gpu", "api", state.StatusRunning, 3*time.Minute).Tmux.Host = "gpu"
	web := add("t_web", "web", state.StatusQueued, 4*time.Minute)
	web.Tmux = state.TmuxTarget{Pool: "any"}
	return st
}

func ids(ts []*state.Task) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.ID)
	}
	return out
}

func TestList(t *testing.T) {
	d := fakeDeps(newFakeStore(sample()), &fakeTmux{})
	for _, c := range []struct {
		name string
		opts ListOptions
		want []string
	}{
		{"active, newest first", ListOptions{}, []string{"t_run", "t_gpu", "t_web"}},
		{"all", ListOptions{All: true}, []string{"t_run", "t_done", "t_gpu", "t_web"}},
		{"one project", ListOptions{All: true, Project: "api"}, []string{"t_run", "t_done", "t_gpu"}},
		{"on a host", ListOptions{Host: "gpu"}, []string{"t_gpu"}},
		{"this machine: not a task waiting for a pool", ListOptions{Host: state.HostLocal}, []string{"t_run"}},
	} {
		got, err := List(t.Context(), d, c.opts)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !slices.Equal(ids(got), c.want) {
			t.Errorf("%s: List = %q, want %q", c.name, ids(got), c.want)
		}
	}
}

func TestListSameCreatedOrdersByID(t *testing.T) {
	st := state.New()
	for _, id := range []string{"t_b", "t_c", "t_a"} {
		st.Tasks[id] = &state.Task{ID: id, Status: state.StatusRunning, Created: t0}
	}
	got, err := List(t.Context(), fakeDeps(newFakeStore(st), &fakeTmux{}), ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"t_a", "t_b", "t_c"}; !slices.Equal(ids(got), want) {
		t.Errorf("List = %q, want %q", ids(got), want)
	}
}

func TestListErrors(t *testing.T) {
	store := newFakeStore(sample())
	d := fakeDeps(store, &fakeTmux{})
	if _, err := List(t.Context(), d, ListOptions{Project: "nosuch"}); !errors.Is(err, fault.ErrUsage) {
		t.Errorf("unknown project: err = %v, want a usage error", err)
	}
	store.readErr = errors.New("state.json: unexpected end of JSON input")
	if _, err := List(t.Context(), d, ListOptions{}); err == nil || !strings.Contains(err.Error(), "unexpected end") {
		t.Errorf("corrupt state: err = %v, want the read's error", err)
	}
}

func TestAttachTarget(t *testing.T) {
	st := sample()
	st.Tasks["t_new"] = &state.Task{ID: "t_new", Project: "api", Status: state.StatusQueued, Created: t0}
	st.Projects["idle"] = &state.Project{Name: "idle", Dir: "/src/idle"}
	d := fakeDeps(newFakeStore(st), &fakeTmux{})
	for _, c := range []struct {
		ref, want string
	}{
		{"t_run", "%run"},
		{"api", "=api"},   // the session of the project's tasks
		{"idle", "=idle"}, // a project without tasks: its session's name
	} {
		got, err := AttachTarget(t.Context(), d, c.ref)
		if err != nil || got != c.want {
			t.Errorf("AttachTarget(%q) = %q, %v; want %q", c.ref, got, err, c.want)
		}
	}
	for _, ref := range []string{"t_new", "nothing"} {
		if _, err := AttachTarget(t.Context(), d, ref); !errors.Is(err, fault.ErrUsage) {
			t.Errorf("AttachTarget(%q): err = %v, want a usage error", ref, err)
		}
	}
}

func TestAttachArgvLocal(t *testing.T) {
	tc := &fakeTmux{}
	d := fakeDeps(newFakeStore(sample()), tc)
	argv, err := AttachArgv(t.Context(), d, "t_run", false)
	if err != nil {
		t.Fatal(err)
	}
	if want := "tmux attach-session -t %run"; strings.Join(argv, " ") != want {
		t.Errorf("argv = %q, want %q", argv, want)
	}
	if !slices.Equal(tc.selected, []string{"%run"}) {
		t.Errorf("panes selected = %q, want the task's", tc.selected)
	}
	argv, err = AttachArgv(t.Context(), d, "api", true)
	if err != nil {
		t.Fatal(err)
	}
	if want := "tmux switch-client -t =api"; strings.Join(argv, " ") != want {
		t.Errorf("inside a client: argv = %q, want %q", argv, want)
	}
	if len(tc.selected) != 1 {
		t.Errorf("a session target selected a pane: %q", tc.selected)
	}
}

func TestAttachArgvDeadPane(t *testing.T) {
	tc := &fakeTmux{selectErr: errors.New("can't find pane: %run")}
	_, err := AttachArgv(t.Context(), fakeDeps(newFakeStore(sample()), tc), "t_run", false)
	if err == nil || !strings.Contains(err.Error(), "can't find pane") {
		t.Errorf("err = %v, want the select's error", err)
	}
}

func TestAttachArgvUnreachableHost(t *testing.T) {
	d := fakeDeps(newFakeStore(sample()), &fakeTmux{})
	for _, ref := range []string{"t_gpu", "far"} {
		_, err := AttachArgv(t.Context(), d, ref, false)
		if err == nil || !strings.Contains(err.Error(), "host gpu unreachable") {
			t.Errorf("%s: err = %v, want the host's error", ref, err)
		}
	}
}

// TestAttachArgvHost: a task or project on a host is attached there: its
// pane selected on the host's tmux server (never this machine's), the
// user's terminal put on it through the host's ssh; a task here asks no
// host.
func TestAttachArgvHost(t *testing.T) {
	here, there := &fakeTmux{}, &fakeTmux{}
	var asked []string
	d := withHosts(fakeDeps(newFakeStore(sample()), here), map[string]*fakeHost{"gpu": {name: "gpu", tc: there}}, &asked)
	for _, c := range []struct {
		ref, want string
		selected  []string
	}{
		{"t_gpu", "ssh -t gpu tmux -L remote attach-session -t %gpu", []string{"%gpu"}},
		{"far", "ssh -t gpu tmux -L remote attach-session -t =far", []string{"%gpu"}}, // a session: nothing more selected
	} {
		argv, err := AttachArgv(t.Context(), d, c.ref, true)
		if err != nil {
			t.Fatalf("%s: %v", c.ref, err)
		}
		if got := strings.Join(argv, " "); got != c.want {
			t.Errorf("%s: argv = %q, want %q", c.ref, got, c.want)
		}
		if !slices.Equal(there.selected, c.selected) {
			t.Errorf("%s: panes selected there = %q, want %q", c.ref, there.selected, c.selected)
		}
	}
	if !slices.Equal(asked, []string{"gpu", "gpu"}) {
		t.Errorf("hosts asked = %q, want gpu twice", asked)
	}
	if len(here.selected) != 0 {
		t.Errorf("a pane selected on this machine's server: %q", here.selected)
	}
	asked = nil
	if _, err := AttachArgv(t.Context(), d, "t_run", false); err != nil || len(asked) != 0 {
		t.Errorf("a task here: err %v, hosts asked %q; want none", err, asked)
	}
	there.selectErr = errors.New("can't find pane: %gpu")
	if _, err := AttachArgv(t.Context(), d, "t_gpu", false); err == nil || !strings.Contains(err.Error(), "can't find pane") {
		t.Errorf("a dead pane there: err = %v, want the select's error", err)
	}
}

// TestWaitReturnsSettledAtOnce: a task that ended already is answered
// with no watch set (a watch's inotify instance makes the process's exit
// wait for the kernel to tear it down: 8-23 ms on the machine of
// docs/benchmarks.md).
func TestWaitReturnsSettledAtOnce(t *testing.T) {
	store := newFakeStore(sample())
	got, err := Wait(t.Context(), fakeDeps(store, &fakeTmux{}), []string{"t_done"}, WaitOptions{})
	if err != nil || !slices.Equal(ids(got), []string{"t_done"}) {
		t.Errorf("Wait = %q, %v", ids(got), err)
	}
	select {
	case <-store.watching:
		t.Error("a wait for a task that ended already set a watch")
	default:
	}
}

// TestWaitSeesAnEndBeforeItsWatch: an end recorded between the wait's
// first read and its watch (which does not signal it) is seen by the read
// that follows the watch, not 5 s later by the safety reconcile.
func TestWaitSeesAnEndBeforeItsWatch(t *testing.T) {
	store := newFakeStore(sample())
	store.beforeWatch = func() {
		store.set("t_run", func(x *state.Task) { x.Status, x.Ended = state.StatusDone, t0 })
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	got, err := Wait(ctx, fakeDeps(store, &fakeTmux{}), []string{"t_run"}, WaitOptions{})
	if err != nil || len(got) != 1 || got[0].Status != state.StatusDone {
		t.Errorf("Wait = %v, %v; want t_run done, from the read after the watch", got, err)
	}
}

func TestWaitUnknownTask(t *testing.T) {
	_, err := Wait(t.Context(), fakeDeps(newFakeStore(sample()), &fakeTmux{}), []string{"t_nope"}, WaitOptions{})
	if !errors.Is(err, fault.ErrUsage) {
		t.Errorf("err = %v, want a usage error", err)
	}
}

func TestWaitFollowsChanges(t *testing.T) {
	store := newFakeStore(sample())
	d := fakeDeps(store, &fakeTmux{})
	done := make(chan []*state.Task)
	go func() {
		got, err := Wait(t.Context(), d, []string{"t_run", "t_gpu"}, WaitOptions{Any: true})
		if err != nil {
			t.Error(err)
		}
		done <- got
	}()
	<-store.watching
	store.set("t_done", func(x *state.Task) { x.Text = "unrelated" })
	store.set("t_gpu", func(x *state.Task) { x.Status, x.Ended = state.StatusFailed, t0 })
	got := <-done
	if len(got) != 2 || got[1].Status != state.StatusFailed {
		t.Errorf("Wait --any = %v, want both with t_gpu failed", got)
	}
}

func TestWaitUntilInput(t *testing.T) {
	store := newFakeStore(sample())
	d := fakeDeps(store, &fakeTmux{})
	done := make(chan error)
	go func() {
		_, err := Wait(t.Context(), d, []string{"t_run"}, WaitOptions{UntilInput: true})
		done <- err
	}()
	<-store.watching
	store.set("t_run", func(x *state.Task) { x.Status = state.StatusNeedsInput })
	if err := <-done; err != nil {
		t.Error(err)
	}
	if settled(&state.Task{Status: state.StatusNeedsInput}, false) {
		t.Error("needs_input settles a wait without UntilInput")
	}
	if !settled(&state.Task{Status: state.StatusOrphaned}, false) {
		t.Error("an orphaned task does not settle a wait")
	}
}

func TestWaitPruned(t *testing.T) {
	store := newFakeStore(sample())
	d := fakeDeps(store, &fakeTmux{})
	done := make(chan error)
	go func() {
		_, err := Wait(t.Context(), d, []string{"t_run"}, WaitOptions{})
		done <- err
	}()
	<-store.watching
	store.mu.Lock()
	pruned := state.New()
	store.st = pruned
	store.mu.Unlock()
	store.signal()
	if err := <-done; !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), "pruned") {
		t.Errorf("err = %v, want the task pruned", err)
	}
}

func TestWaitCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	got, err := Wait(ctx, fakeDeps(newFakeStore(sample()), &fakeTmux{}), []string{"t_run"}, WaitOptions{})
	if !errors.Is(err, context.Canceled) || len(got) != 1 {
		t.Errorf("Wait = %v, %v; want the task as it was and context.Canceled", got, err)
	}
}

func TestWaitStoreErrors(t *testing.T) {
	store := newFakeStore(sample())
	store.watchErr = errors.New("inotify: too many watches")
	if _, err := Wait(t.Context(), fakeDeps(store, &fakeTmux{}), []string{"t_run"}, WaitOptions{}); err == nil {
		t.Error("a watch that cannot start: no error")
	}
	store = newFakeStore(sample())
	d := fakeDeps(store, &fakeTmux{})
	done := make(chan error)
	go func() {
		_, err := Wait(t.Context(), d, []string{"t_run"}, WaitOptions{})
		done <- err
	}()
	<-store.watching
	store.mu.Lock()
	store.readErr = errors.New("state.json: corrupt")
	store.mu.Unlock()
	store.signal()
	if err := <-done; err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Errorf("err = %v, want the read's error", err)
	}
}

func TestAll(t *testing.T) {
	st := sample()
	for _, x := range st.Tasks {
		if x.Status.IsActive() {
			x.Status, x.Ended = state.StatusDone, t0
		}
	}
	var said []string
	d := fakeDeps(newFakeStore(st), &fakeTmux{})
	d.Say = func(format string, args ...any) { said = append(said, format) }
	got, err := All(t.Context(), d, "api")
	if err != nil || len(got) != 0 {
		t.Errorf("All with nothing active = %v, %v", got, err)
	}
	if len(said) != 1 {
		t.Errorf("said %q, want one line", said)
	}
	if _, err := All(t.Context(), d, "nosuch"); !errors.Is(err, fault.ErrUsage) {
		t.Errorf("unknown project: err = %v", err)
	}
}

func TestTreeAndCollectReconcileError(t *testing.T) {
	store := newFakeStore(sample())
	store.readErr = errors.New("state: locked")
	d := fakeDeps(store, &fakeTmux{})
	if _, err := Tree(t.Context(), d, ""); err == nil {
		t.Error("Tree: no error")
	}
	if _, err := Collect(t.Context(), d, "t_run"); err == nil {
		t.Error("Collect: no error")
	}
}

func TestTreeAndCollect(t *testing.T) {
	st := sample()
	st.Tasks["t_kid"] = &state.Task{ID: "t_kid", Parent: "t_run", Status: state.StatusDone, Created: t0, Ended: t0}
	d := fakeDeps(newFakeStore(st), &fakeTmux{})
	d.ExitOf = func(t *state.Task) int { return 7 }
	nodes, err := Tree(t.Context(), d, "t_run")
	if err != nil || len(nodes) != 1 || len(nodes[0].Children) != 1 {
		t.Fatalf("Tree(t_run) = %v, %v; want t_run with its child", nodes, err)
	}
	c, err := Collect(t.Context(), d, "t_run")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Children) != 1 || c.Children[0].ExitCode != 7 {
		t.Errorf("Collect = %+v, want t_kid with ExitOf's code", c)
	}
}
