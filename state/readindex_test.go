package state

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadIndex: ReadIndex reads no record (they are gone from the disk
// and it still reads the index), gives each task's hot fields, and
// State.Task reads a task whole once they are back.
func TestReadIndex(t *testing.T) {
	s, ids := lazyFixture(t, 3)
	tasks := filepath.Join(s.Dir(), "tasks")
	hidden := filepath.Join(t.TempDir(), "tasks")
	if err := os.Rename(tasks, hidden); err != nil {
		t.Fatal(err)
	}
	records.forget(s.Dir())
	st, err := s.ReadIndex(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Tasks) != 3 {
		t.Fatalf("%d tasks, want 3", len(st.Tasks))
	}
	got := st.Tasks[ids[1]]
	if got.Status != StatusRunning || got.Ports.First != 9010 || got.Project != "p" || len(got.History) != 0 || strings.HasSuffix(got.Text, "more") {
		t.Fatalf("task %s from the index: %+v, want its hot fields only", ids[1], got)
	}
	if err := os.Rename(hidden, tasks); err != nil {
		t.Fatal(err)
	}
	whole := st.Task(ids[1])
	if whole == nil || len(whole.History) == 0 || !strings.HasSuffix(whole.Text, "more") || whole.Dir != "/d" || whole.Ports.First != 9010 {
		t.Fatalf("State.Task after ReadIndex: %+v, want the whole task", whole)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.ReadIndex(ctx); err == nil {
		t.Fatal("ReadIndex with a cancelled context: no error")
	}
}
