package state

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// hideRecords moves the record files of every task but keep out of the
// store's tasks folder (and out of the process's cache), and returns how
// to put them back.
func hideRecords(t *testing.T, s *Store, keep string) func() {
	t.Helper()
	dir := filepath.Join(s.Dir(), "tasks")
	hidden := t.TempDir()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var moved []string
	for _, e := range ents {
		if id, _, ok := parseRecordName(e.Name()); !ok || id == keep {
			continue
		}
		if err := os.Rename(filepath.Join(dir, e.Name()), filepath.Join(hidden, e.Name())); err != nil {
			t.Fatal(err)
		}
		moved = append(moved, e.Name())
	}
	records.forget(s.Dir())
	return func() {
		for _, n := range moved {
			if err := os.Rename(filepath.Join(hidden, n), filepath.Join(dir, n)); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// sandboxedIDs is what a reader of the index finds sandboxed, with each
// such task's Sandbox as recorded, and whether it tried a record that was
// not there.
func sandboxedIDs(t *testing.T, s *Store) ([]string, bool) {
	t.Helper()
	records.forget(s.Dir())
	st, err := s.ReadIndex(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, tk := range st.SandboxedTasks() {
		if !slices.Equal(tk.Sandbox, []string{"/w/" + tk.ID}) {
			t.Errorf("task %s: Sandbox %q, want its record's", tk.ID, tk.Sandbox)
		}
		ids = append(ids, tk.ID)
	}
	return ids, st.lazyErr != nil
}

// rewriteIndex changes state.json as a process that is not this runner
// would: edit gets the file decoded as a map.
func rewriteIndex(t *testing.T, s *Store, edit func(map[string]any)) {
	t.Helper()
	raw, err := os.ReadFile(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	b, _ := json.Marshal(m)
	if err := os.WriteFile(s.Path(), append(b, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestSandboxedTasks: a reader of the index finds the sandboxed tasks by
// the index's list, reading their records only (the others' are gone
// and it still finds them; a whole Read fails then); the list is kept by
// a write that did not read the sandboxed task's record; a file an older
// runner rewrote (no list, or one of another generation) has every
// record read, so a sandboxed task is never missed, and an index-only
// write then makes no list it cannot vouch for.
func TestSandboxedTasks(t *testing.T) {
	s := openTemp(t)
	const whole, indexOnly = false, true
	add := func(lazy bool, id string, sandboxed bool) {
		t.Helper()
		fn := func(st *State) error {
			tk := &Task{ID: id, Project: "p", Dir: "/d", Agent: "sim", Status: StatusRunning, Text: "x"}
			if sandboxed {
				tk.Sandbox = []string{"/w/" + id}
			}
			st.Tasks[id] = tk
			return nil
		}
		update := s.Update
		if lazy {
			update = s.UpdateIndex
		}
		if err := update(t.Context(), fn); err != nil {
			t.Fatal(err)
		}
	}
	add(whole, "t_sbxaaaaa", true)
	add(whole, "t_plainbbb", false)
	add(whole, "t_plainccc", false)

	back := hideRecords(t, s, "t_sbxaaaaa")
	if got, missed := sandboxedIDs(t, s); !slices.Equal(got, []string{"t_sbxaaaaa"}) || missed {
		t.Fatalf("sandboxed %v (a missing record tried: %v), want [t_sbxaaaaa] from its record alone", got, missed)
	}
	if _, err := s.Read(t.Context()); err == nil {
		t.Fatal("Read with the other records gone: no error (the test would prove nothing)")
	}
	back()

	// An index-only write (a dispatch recording its task) keeps the list
	// for the sandboxed task whose record it did not read.
	add(indexOnly, "t_plainddd", false)
	add(indexOnly, "t_sbxeeeee", true)
	back = hideRecords(t, s, "t_sbxaaaaa")
	if got, _ := sandboxedIDs(t, s); !slices.Equal(got, []string{"t_sbxaaaaa"}) {
		t.Fatalf("after index-only writes, the other records gone: sandboxed %v, want [t_sbxaaaaa] by the list", got)
	}
	back()
	if got, _ := sandboxedIDs(t, s); !slices.Equal(got, []string{"t_sbxaaaaa", "t_sbxeeeee"}) {
		t.Fatalf("after index-only writes: sandboxed %v, want both", got)
	}

	for name, edit := range map[string]func(map[string]any){
		"no list (an older runner's write)": func(m map[string]any) {
			delete(m, "sandboxed")
			delete(m, "sandboxed_at")
			m["generation"] = m["generation"].(float64) + 1
		},
		"an empty list of another generation": func(m map[string]any) {
			m["sandboxed"] = []string{}
			m["generation"] = m["generation"].(float64) + 1
		},
	} {
		rewriteIndex(t, s, edit)
		if got, _ := sandboxedIDs(t, s); !slices.Equal(got, []string{"t_sbxaaaaa", "t_sbxeeeee"}) {
			t.Errorf("%s: sandboxed %v, want both, from every record", name, got)
		}
	}
	// The file has no list it can trust: an index-only write makes none.
	add(indexOnly, "t_plainfff", false)
	raw, _ := os.ReadFile(s.Path())
	var ix indexFile
	if err := json.Unmarshal(raw, &ix); err != nil {
		t.Fatal(err)
	}
	if ix.SandboxedAt != 0 || len(ix.Sandboxed) != 0 {
		t.Fatalf("an index-only write over a file without a list wrote %v at %d", ix.Sandboxed, ix.SandboxedAt)
	}
	// A write that reads every record makes it again.
	add(whole, "t_plainggg", false)
	raw, _ = os.ReadFile(s.Path())
	if err := json.Unmarshal(raw, &ix); err != nil {
		t.Fatal(err)
	}
	if ix.SandboxedAt != ix.Generation || !slices.Equal(ix.Sandboxed, []string{"t_sbxaaaaa", "t_sbxeeeee"}) {
		t.Fatalf("a whole write: list %v at %d (generation %d)", ix.Sandboxed, ix.SandboxedAt, ix.Generation)
	}
	back = hideRecords(t, s, "t_sbxaaaaa")
	defer back()
	if got, _ := sandboxedIDs(t, s); !slices.Contains(got, "t_sbxaaaaa") {
		t.Fatalf("sandboxed %v from the list again, want t_sbxaaaaa", got)
	}
}
