package placement

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/statetest"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/hosts"
	"github.com/runner-cli/runner/runner/reconcile"
	"github.com/runner-cli/runner/runner/record"
	"github.com/runner-cli/runner/state"
)

// pool is a store with hosts h1 and h2 of one slot each, both answering
// (their probes cached, dated ahead so that no probe reaches for ssh
// however slow the test runs), and task t_new queued for pool any with
// its start settings.
func pool(t *testing.T) (*Placer, *state.Store) {
	t.Helper()
	ctx := t.Context()
	queued := &state.Task{ID: "t_new", Project: "api", Agent: "sim", Status: state.StatusQueued, Created: clock.Now(),
		Tmux: state.TmuxTarget{Pool: hosts.PoolAny}, Settings: []byte(`{"start":{"argv":["sim"]}}`)}
	store := statetest.WithTasks(t, queued)
	if err := store.UpdateHosts(ctx, func(m map[string]*state.Host) error {
		for _, n := range []string{"h1", "h2"} {
			m[n] = &state.Host{Name: n, Destination: "u@" + n + ".invalid", MaxAgents: 1, Socket: "/run/" + n}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"h1", "h2"} {
		if err := store.SaveHostProbe(state.HostProbe{Host: n, At: clock.Now().Add(time.Hour), OK: true, Cores: 4}); err != nil {
			t.Fatal(err)
		}
	}
	return &Placer{Book: record.Book{Store: store, Procs: reconcile.LiveProcs{}}, Hosts: hosts.NewPool(store), Poll: 20 * time.Millisecond}, store
}

// busy puts a running task on host.
func busy(t *testing.T, store *state.Store, id, host string) {
	t.Helper()
	x := statetest.Supervised(id, "", state.StatusRunning)
	x.Tmux.Host = host
	if err := store.Update(t.Context(), func(st *state.State) error { st.Tasks[id] = x; return nil }); err != nil {
		t.Fatal(err)
	}
}

// siteRefusing is a Site that runs on every host but those of refuse,
// recording the hosts asked.
func siteRefusing(asked *[]string, refuse ...string) Site {
	return func(_ context.Context, c *hosts.Conn) ([]string, error) {
		*asked = append(*asked, c.Host().Name)
		if slices.Contains(refuse, c.Host().Name) {
			return nil, fault.Usagef("directory /src/app does not exist on host %s", c.Host().Name)
		}
		return []string{"/opt/sim", "--on", c.Host().Name}, nil
	}
}

// TestPlaceClaimsAFreeSlot: the host with a free slot that can run the
// task is claimed in its record, with the argv there and the host's tmux
// socket; a host that cannot run it is passed over.
func TestPlaceClaimsAFreeSlot(t *testing.T) {
	for _, tc := range []struct {
		name   string
		busy   string // a host whose slot is taken
		refuse []string
		want   string
		asked  []string
	}{
		{name: "the free one", busy: "h1", want: "h2", asked: []string{"h2"}},
		{name: "the first that can run it", refuse: []string{"h1"}, want: "h2", asked: []string{"h1", "h2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, store := pool(t)
			if tc.busy != "" {
				busy(t, store, "t_busy", tc.busy)
			}
			var asked []string
			placed, start, err := p.PlaceTask(t.Context(), statetest.Read(t, store).Task("t_new"), siteRefusing(&asked, tc.refuse...), false)
			if err != nil {
				t.Fatal(err)
			}
			if placed.Tmux.Host != tc.want || placed.Tmux.Socket != "/run/"+tc.want || placed.Status != state.StatusQueued {
				t.Errorf("placed %+v (%s); want queued on %s with its socket", placed.Tmux, placed.Status, tc.want)
			}
			if want := []string{"/opt/sim", "--on", tc.want}; !slices.Equal(start.Argv, want) {
				t.Errorf("start argv %q, want %q", start.Argv, want)
			}
			if !slices.Equal(asked, tc.asked) {
				t.Errorf("asked %v, want %v", asked, tc.asked)
			}
			if !strings.Contains(placed.LastReason(), "placed on host "+tc.want+" (1/1 agents there)") {
				t.Errorf("reason %q", placed.LastReason())
			}
		})
	}
}

// TestPlaceNoHostCanRunIt: when every host of the pool refuses the task,
// the error names each one's reason and the task fails.
func TestPlaceNoHostCanRunIt(t *testing.T) {
	p, store := pool(t)
	var asked []string
	_, _, err := p.PlaceTask(t.Context(), statetest.Read(t, store).Task("t_new"), siteRefusing(&asked, "h1", "h2"), true)
	if !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), "no host of pool any can run the task: h1: cannot run it (directory") ||
		!strings.Contains(err.Error(), "; h2: cannot run it") {
		t.Fatalf("PlaceTask: %v; want a usage error with each host's reason", err)
	}
	if x := statetest.Read(t, store).Task("t_new"); x.Status != state.StatusFailed || !strings.HasPrefix(x.LastReason(), "could not be placed: no host of pool any") {
		t.Errorf("the task is %s (%s), want failed, not placed", x.Status, x.LastReason())
	}
}

// TestPlaceWaitsForASlot: a full pool keeps the task queued, saying why,
// until a slot is freed; then it is placed there.
func TestPlaceWaitsForASlot(t *testing.T) {
	p, store := pool(t)
	busy(t, store, "t_one", "h1")
	busy(t, store, "t_two", "h2")
	var asked []string
	type result struct {
		t   *state.Task
		err error
	}
	done := make(chan result, 1)
	go func() {
		x, err := p.Place(t.Context(), "t_new", siteRefusing(&asked))
		done <- result{x, err}
	}()
	waitReason(t, store, "t_new", "waiting for a free slot in pool any: h1 1/1, h2 1/1")
	if err := store.Update(t.Context(), func(st *state.State) error {
		return st.Task("t_two").SetStatus(state.StatusDone, clock.Now(), "turn done")
	}); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if r.err != nil || r.t.Tmux.Host != "h2" {
			t.Errorf("Place = %+v, %v; want it on h2, freed", r.t, r.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("not placed after the slot was freed")
	}
}

// TestPlaceInterrupted: a task that leaves the queue stops waiting as it
// is; one whose wait is interrupted is orphaned when detached (runner
// resume places it again), else cancelled.
func TestPlaceInterrupted(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cancel   bool // else the task is cancelled by another process
		detached bool
		want     state.Status
	}{
		{name: "left the queue", want: state.StatusCancelled},
		{name: "detached, interrupted", cancel: true, detached: true, want: state.StatusOrphaned},
		{name: "foreground, interrupted", cancel: true, want: state.StatusCancelled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, store := pool(t)
			busy(t, store, "t_one", "h1")
			busy(t, store, "t_two", "h2")
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			go func() {
				waitReason(t, store, "t_new", "waiting for a free slot")
				if tc.cancel {
					cancel()
					return
				}
				_ = store.Update(context.Background(), func(st *state.State) error {
					return st.Task("t_new").SetStatus(state.StatusCancelled, clock.Now(), "runner cancel")
				})
			}()
			var asked []string
			_, _, err := p.PlaceTask(ctx, statetest.Read(t, store).Task("t_new"), siteRefusing(&asked), tc.detached)
			if tc.cancel != errors.Is(err, context.Canceled) || tc.cancel == errors.Is(err, ErrLeftQueue) {
				t.Errorf("PlaceTask: %v", err)
			}
			if x := statetest.Read(t, store).Task("t_new"); x.Status != tc.want || len(asked) != 0 {
				t.Errorf("the task is %s (%s), %d hosts asked; want %s, none", x.Status, x.LastReason(), len(asked), tc.want)
			}
		})
	}
}

// waitReason waits until task id's last reason starts with why.
func waitReason(t *testing.T, store *state.Store, id, why string) {
	for deadline := clock.Now().Add(30 * time.Second); clock.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if x, err := store.ReadTask(context.Background(), id); err == nil && strings.HasPrefix(x.LastReason(), why) {
			return
		}
	}
	t.Errorf("task %s never said %q", id, why)
}
