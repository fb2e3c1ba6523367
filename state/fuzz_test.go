package state

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
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

// FuzzIndexEntry: the entry ReadTask finds in an index file's bytes
// without decoding the file (indexEntry) is the entry a decode of the
// whole file gives that task: whatever the file holds (a message or a
// title quoting an entry, a key given twice, bytes after the entry), it
// finds that one or none.
func FuzzIndexEntry(f *testing.F) {
	dir := f.TempDir()
	s, err := Open(dir)
	if err != nil {
		f.Fatal(err)
	}
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	s.Now = func() time.Time { return now }
	quoted := `"t_fuzz0001":{"id":"t_fuzz0001","ag":"x","r":99}`
	err = s.Update(context.Background(), func(st *State) error {
		for _, id := range []string{"t_fuzz0001", "t_fuzz0002"} {
			tk := &Task{ID: id, Dir: "/p", Agent: "sim", Text: quoted + "\n" + id, Created: now}
			_ = tk.SetStatus(StatusRunning, now, "delivered")
			st.Tasks[id] = tk
		}
		st.AddMessage(&Message{ID: "m_fuzz0001", From: SenderUser, To: "t_fuzz0001", Type: "info", Text: quoted, Status: MessagePending, Created: now})
		return nil
	})
	if err != nil {
		f.Fatal(err)
	}
	index, _ := os.ReadFile(s.Path())
	f.Add(index, "t_fuzz0001")
	f.Add(index, "t_fuzz0002")
	f.Add(index, "m_fuzz0001")
	f.Add([]byte(`{"version":3,"tasks":{"t_fuzz0001":{"id":"t_fuzz0001","ag":"a","r":1},"t_fuzz0001":{"id":"t_fuzz0001","ag":"b","r":2}}}`), "t_fuzz0001")
	f.Add([]byte(`{"version":3,"tasks":{"t_fuzz0001":{"id":"t_fuzz0001","ag":"a","r":1}},"x":"\"t_fuzz0001\":{\"id\":\"t_fuzz0001\",\"r\":3}"}`), "t_fuzz0001")
	f.Add([]byte(`{"version":3,"projects":{"t_fuzz0001":{"id":"t_fuzz0001","r":5}},"tasks":{}}`), "t_fuzz0001")
	f.Add([]byte(`{"version":3,"tasks":{"t_fuzz0001":{"id":"t_fuzz0001","r":1},"t\u005ffuzz0001":{"id":"t_fuzz0001","r":2}}}`), "t_fuzz0001")
	f.Add([]byte(`{"version":3,"tasks":{"t_fuzz0001":{"id":"t_fuzz0001","r":1}},"tasks":null}`), "t_fuzz0001")
	f.Add([]byte(`{"version":3,"tasks":{"t_fuzz0001":{"id":"t_fuzz0001","r":1}},"version":9}`), "t_fuzz0001")
	f.Add([]byte(`{"version":3,"tasks":{"t_fuzz0001":{"id":"t_fuzz0001","r":1},"t_fuzz0001":null}}`), "t_fuzz0001")
	f.Fuzz(func(t *testing.T, raw []byte, id string) {
		e := indexEntry("/no/state/dir/wrote/these", raw, id) // bytes no write of this process made
		if e == nil {
			return
		}
		// What ReadTask took before: the file decoded, the task's entry
		// then.
		var ix struct {
			Version int                        `json:"version"`
			Tasks   map[string]json.RawMessage `json:"tasks"`
		}
		if err := json.Unmarshal(raw, &ix); err != nil || ix.Version < indexVersion || ix.Version > Version {
			t.Fatalf("indexEntry found %+v in a file that does not decode as an index: %v (version %d)", e, err, ix.Version)
		}
		var want entry
		if ent, ok := ix.Tasks[id]; !ok || json.Unmarshal(ent, &want) != nil || !reflect.DeepEqual(*e, want) {
			t.Fatalf("indexEntry(%q) = %+v, a decode of the file gives %s", id, e, ix.Tasks[id])
		}
	})
}
