package plan

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/state"
)

// TestReadState: a dispatch's plan reads the index alone (a task's record
// gone from the disk does not stop it, and State.Task reads it whole once
// it is back); a door's child reads the whole state.
func TestReadState(t *testing.T) {
	store, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	now := clock.Now().UTC()
	err = store.Update(t.Context(), func(s *state.State) error {
		tk := &state.Task{ID: "t_parent01", Project: "p", Dir: "/work/p", Agent: "sim", Text: "the parent", Created: now, Level: 1}
		s.Tasks[tk.ID] = tk
		return tk.SetStatus(state.StatusRunning, now, "started")
	})
	if err != nil {
		t.Fatal(err)
	}
	// The index alone in another folder: no record there, none cached.
	dir := t.TempDir()
	raw, err := os.ReadFile(store.Path())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "state.json"), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	fresh, err := state.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := Request{}.ReadState(t.Context(), fresh)
	if err != nil {
		t.Fatalf("the index alone: %v", err)
	}
	if tk := st.Tasks["t_parent01"]; tk == nil || tk.Status != state.StatusRunning || tk.Level != 1 {
		t.Fatalf("the task's hot fields: %+v", tk)
	}
	if _, err := (Request{Confined: "t_parent01"}).ReadState(t.Context(), fresh); err == nil {
		t.Fatal("a door's child read the state without the task's record: want the whole state (an error here)")
	}
	if err := os.Rename(filepath.Join(store.Dir(), "tasks"), filepath.Join(dir, "tasks")); err != nil {
		t.Fatal(err)
	}
	if tk := st.Task("t_parent01"); tk == nil || tk.Dir != "/work/p" || len(tk.History) == 0 {
		t.Fatalf("State.Task after the index alone: %+v, want the whole task", tk)
	}
}
