package projlock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/runner-cli/runner/internal/importcheck"
	"github.com/runner-cli/runner/runner/settings"
	"github.com/runner-cli/runner/state"
)

func TestImports(t *testing.T) {
	importcheck.Only(t, ".", "runner/projects", "runner/settings", "state")
}

// fakeStore refuses the lock without wait (busy) and records whether it
// was then waited for.
type fakeStore struct {
	st     *state.State
	waited bool
}

func (f *fakeStore) LockProject(ctx context.Context, key string, wait bool) (*state.ProjectLock, error) {
	if !wait {
		return nil, fmt.Errorf("project %q: %w", key, state.ErrProjectLocked)
	}
	f.waited = true
	return &state.ProjectLock{}, nil
}

func (f *fakeStore) Read(context.Context) (*state.State, error) { return f.st, nil }

func task(t *testing.T, id string, status state.Status, exclusive bool) *state.Task {
	raw, err := json.Marshal(settings.Run{Start: &settings.Start{Exclusive: exclusive}})
	if err != nil {
		t.Fatal(err)
	}
	return &state.Task{ID: id, Project: "api", Status: status, Settings: raw}
}

func TestTake(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tasks []*state.Task
		wait  bool // waited for the lock being let go
	}{
		{"the exclusive task ended: let go", []*state.Task{task(t, "t_a", state.StatusCancelled, true)}, true},
		{"no task at all: let go", nil, true},
		{"an active exclusive task: busy", []*state.Task{task(t, "t_a", state.StatusRunning, true)}, false},
		{"a queued exclusive task: busy", []*state.Task{task(t, "t_a", state.StatusQueued, true)}, false},
		{"an active task not exclusive: let go", []*state.Task{task(t, "t_a", state.StatusRunning, false)}, true},
		{"an active exclusive task of another project: let go", []*state.Task{func() *state.Task {
			x := task(t, "t_a", state.StatusRunning, true)
			x.Project = "web"
			return x
		}()}, true},
		{"settings that do not decode: busy", []*state.Task{{ID: "t_a", Project: "api", Status: state.StatusRunning, Settings: []byte("{")}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &state.State{Tasks: map[string]*state.Task{}}
			for _, x := range tc.tasks {
				st.Tasks[x.ID] = x
			}
			f := &fakeStore{st: st}
			lock, err := Take(t.Context(), f, "api", false)
			if tc.wait {
				if err != nil || lock == nil || !f.waited {
					t.Fatalf("Take: %v, %v (waited %v): want the lock being let go waited for", lock, err, f.waited)
				}
				return
			}
			if !errors.Is(err, state.ErrProjectLocked) || f.waited {
				t.Fatalf("Take: %v (waited %v): want busy at once", err, f.waited)
			}
		})
	}
}

// With wait (--wait-lock), the store waits itself: Take adds nothing.
func TestTakeWait(t *testing.T) {
	f := &fakeStore{st: &state.State{}}
	if _, err := Take(t.Context(), f, "api", true); err != nil || !f.waited {
		t.Fatalf("Take with wait: %v (waited %v)", err, f.waited)
	}
}
