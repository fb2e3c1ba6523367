package state

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzReadState: any state.json, with any record file beside it, reads as
// a state or fails with ErrCorrupt or ErrNewerVersion (or a missing
// record, also ErrCorrupt): never a panic, never another kind of error.
// A state that reads can be written back, and reads again.
func FuzzReadState(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("testdata", "v2-state.json")); err == nil {
		f.Add(b, []byte(`{}`))
	}
	// A current index and its record, as a real write leaves them.
	dir := f.TempDir()
	s, err := Open(dir)
	if err != nil {
		f.Fatal(err)
	}
	s.Now = func() time.Time { return time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC) }
	err = s.Update(context.Background(), func(st *State) error {
		tk := &Task{ID: "t_fuzz0001", Dir: "/p", Agent: "sim", Text: "say hi", Created: s.Now()}
		_ = tk.SetStatus(StatusRunning, s.Now(), "delivered")
		st.Tasks[tk.ID] = tk
		return nil
	})
	if err != nil {
		f.Fatal(err)
	}
	index, _ := os.ReadFile(s.Path())
	recs, _ := filepath.Glob(filepath.Join(dir, "tasks", "t_fuzz0001.*.json"))
	if len(recs) != 1 {
		f.Fatalf("records %v", recs)
	}
	rec, _ := os.ReadFile(recs[0])
	f.Add(index, rec)
	f.Add([]byte(`{"version":99}`), rec)
	f.Add([]byte(`{"version":3,"tasks":{"t_fuzz0001":{"id":"t_other","r":1}}}`), rec)
	recName := filepath.Base(recs[0])

	f.Fuzz(func(t *testing.T, index, record []byte) {
		s, err := Open(filepath.Join(t.TempDir(), "state"))
		if err != nil {
			t.Fatal(err)
		}
		s.Now = func() time.Time { return time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC) }
		os.MkdirAll(filepath.Join(s.Dir(), "tasks"), 0o700)
		if err := os.WriteFile(s.Path(), index, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(s.Dir(), "tasks", recName), record, 0o600); err != nil {
			t.Fatal(err)
		}
		defer records.forget(s.Dir())
		ctx := context.Background()
		if _, err := s.Read(ctx); err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrNewerVersion) {
				t.Fatalf("error %v is neither ErrCorrupt nor ErrNewerVersion", err)
			}
			return
		}
		if err := s.Update(ctx, func(*State) error { return nil }); err != nil {
			t.Fatalf("a state that reads cannot be written back: %v", err)
		}
		records.forget(s.Dir())
		if _, err := s.Read(ctx); err != nil {
			t.Fatalf("a state written back does not read: %v", err)
		}
	})
}
