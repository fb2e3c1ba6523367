package state

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
)

// lazyFixture records n running tasks (long texts, a history) and returns
// the store and the ids.
func lazyFixture(t *testing.T, n int) (*Store, []string) {
	t.Helper()
	s := openTemp(t)
	now := clock.Now().UTC()
	var ids []string
	mustUpdate(t, s, func(st *State) error {
		for i := range n {
			id := fmt.Sprintf("t_lazy%06d", i)
			ids = append(ids, id)
			tk := &Task{ID: id, Project: "p", Dir: "/d", Agent: "sim", Created: now, Parent: "",
				Text:  strings.Repeat("a long first line of a task, past the title's bound ", 3) + "\nmore",
				Ports: PortRange{First: 9000 + 10*i, Count: 10}}
			if err := tk.SetStatus(StatusRunning, now, "started"); err != nil {
				return err
			}
			st.Tasks[id] = tk
		}
		return nil
	})
	return s, ids
}

// readJSON returns every task of the state, whole, as JSON by id.
func readJSON(t *testing.T, s *Store) map[string]string {
	t.Helper()
	records.forget(s.Dir())
	st, err := s.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for id, tk := range st.Tasks {
		b, _ := json.Marshal(tk)
		out[id] = string(b)
	}
	return out
}

// TestUpdateIndexReadsNoRecord: a new task recorded through UpdateIndex
// reads no record of the tasks before it (they are gone from the disk
// while it writes, and it still succeeds), sees their hot fields (ports,
// status), and leaves them exactly as they were, long titles included.
func TestUpdateIndexReadsNoRecord(t *testing.T) {
	s, ids := lazyFixture(t, 3)
	before := readJSON(t, s)
	entries0 := indexEntries(t, s)
	st0, _, _ := s.load()
	hidden := filepath.Join(t.TempDir(), "tasks")
	if err := os.Rename(filepath.Join(s.Dir(), "tasks"), hidden); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(s.Dir(), "tasks"), 0o700); err != nil {
		t.Fatal(err)
	}
	records.forget(s.Dir())
	newID := "t_lazynew0001"
	err := s.UpdateIndex(t.Context(), func(st *State) error {
		if got := st.Tasks[ids[1]]; got.Status != StatusRunning || got.Ports.First != 9010 {
			return fmt.Errorf("hot fields of %s: %+v", ids[1], got)
		}
		tk := &Task{ID: newID, Project: "p", Dir: "/d", Agent: "sim", Text: "new", Created: clock.Now().UTC()}
		if err := st.AllocatePorts(tk, 9000, 10, nil); err != nil {
			return err
		}
		if tk.Ports.First != 9030 {
			return fmt.Errorf("ports %+v, want the range after the 3 held", tk.Ports)
		}
		st.Tasks[newID] = tk
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Put the old records back beside the new one.
	ents, _ := os.ReadDir(hidden)
	for _, e := range ents {
		if err := os.Rename(filepath.Join(hidden, e.Name()), filepath.Join(s.Dir(), "tasks", e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	after := readJSON(t, s)
	for _, id := range ids {
		if after[id] != before[id] {
			t.Fatalf("task %s changed:\n%s\n%s", id, before[id], after[id])
		}
	}
	if _, ok := after[newID]; !ok || len(after) != 4 {
		t.Fatalf("new task not recorded: %d tasks", len(after))
	}
	entries1 := indexEntries(t, s)
	for _, id := range ids {
		if entries1[id] != entries0[id] {
			t.Fatalf("the index entry of %s changed:\n%s\n%s", id, entries0[id], entries1[id])
		}
	}
	st1, _, _ := s.load()
	for _, id := range ids {
		if st1.Tasks[id].Text != st0.Tasks[id].Text {
			t.Fatalf("task %s's text changed", id)
		}
	}
}

// TestUpdateIndexTaskIsWhole: a task asked for with State.Task is read
// whole and its changes (history included) are written; a change to a
// record field of a task not asked for fails the write and writes
// nothing; a hot field changed directly is written.
func TestUpdateIndexTaskIsWhole(t *testing.T) {
	s, ids := lazyFixture(t, 3)
	now := clock.Now().UTC()
	err := s.UpdateIndex(t.Context(), func(st *State) error {
		tk := st.Task(ids[0])
		if len(tk.History) == 0 || !strings.HasSuffix(tk.Text, "more") {
			return fmt.Errorf("State.Task gave %+v, not the whole task", tk)
		}
		st.Tasks[ids[2]].Commit = "abc" // hot
		return tk.SetStatus(StatusDone, now, "finished")
	})
	if err != nil {
		t.Fatal(err)
	}
	records.forget(s.Dir())
	st, err := s.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if tk := st.Tasks[ids[0]]; tk.Status != StatusDone || tk.LastReason() != "finished" || !strings.HasSuffix(tk.Text, "more") {
		t.Fatalf("task %s after: %s %q", ids[0], tk.Status, tk.LastReason())
	}
	if st.Tasks[ids[2]].Commit != "abc" || len(st.Tasks[ids[2]].History) != 1 {
		t.Fatalf("hot change of %s: %+v", ids[2], st.Tasks[ids[2]])
	}
	raw := readFileT(t, s.Path())
	err = s.UpdateIndex(t.Context(), func(st *State) error {
		st.Tasks[ids[1]].Answer = "lost" // a record field of a task not read
		return nil
	})
	if !errors.Is(err, errLazyBulk) {
		t.Fatalf("a record field changed unread: %v, want errLazyBulk", err)
	}
	if string(readFileT(t, s.Path())) != string(raw) {
		t.Fatal("the failed update wrote the index")
	}
}

// TestUpdateIndexArchives: finished tasks an index-only write moves to the
// archive keep their titles and records, and read back whole.
func TestUpdateIndexArchives(t *testing.T) {
	s, ids := lazyFixture(t, 6)
	s.ArchiveAfter = 1
	now := clock.Now().UTC()
	mustUpdate(t, s, func(st *State) error {
		for _, id := range ids {
			if err := st.Tasks[id].SetStatus(StatusDone, now, "done"); err != nil {
				return err
			}
		}
		return nil
	})
	before := readJSON(t, s)
	records.forget(s.Dir())
	if err := s.UpdateIndex(t.Context(), func(st *State) error {
		st.Tasks["t_lazynew0001"] = &Task{ID: "t_lazynew0001", Project: "p", Dir: "/d", Agent: "sim", Text: "new", Created: now}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	records.forget(s.Dir())
	st, err := s.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	all, err := st.AllTasks()
	if err != nil || len(all) != 7 {
		t.Fatalf("%d tasks, %v", len(all), err)
	}
	if len(st.Tasks) == 7 {
		t.Fatal("nothing was archived")
	}
	for _, id := range ids {
		b, _ := json.Marshal(st.Task(id))
		var a, c Task
		json.Unmarshal(b, &a)
		json.Unmarshal([]byte(before[id]), &c)
		a.Archived, c.Archived = false, false
		if !sameBulk(&a, &c) || a.Status != c.Status {
			t.Fatalf("task %s after archiving:\n%s\n%s", id, b, before[id])
		}
	}
}

// TestUpdateIndexOldIndex: an index written before UpdateIndex (version
// 2, every task inline) loads and is converted by an index-only write; no
// field was added to the index entry, so a version 3 index of the old
// code is the same file.
func TestUpdateIndexOldIndex(t *testing.T) {
	s := openTemp(t)
	fixtureTime := time.Date(2026, 11, 24, 22, 0, 0, 0, time.UTC)
	s.Now = func() time.Time { return fixtureTime }
	writeState(t, s, string(readFileT(t, filepath.Join("testdata", "v2-state.json"))))
	st, err := s.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	before, _ := st.AllTasks()
	if err := s.UpdateIndex(t.Context(), func(st *State) error {
		st.Tasks["t_lazynew0001"] = &Task{ID: "t_lazynew0001", Project: "p", Dir: "/d", Agent: "sim", Text: "new", Created: fixtureTime}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	records.forget(s.Dir())
	st, err = s.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	after, _ := st.AllTasks()
	if len(after) != len(before)+1 {
		t.Fatalf("%d tasks after, %d before", len(after), len(before))
	}
	for _, b := range before {
		x, _ := json.Marshal(b)
		y, _ := json.Marshal(st.Task(b.ID))
		if string(x) != string(y) {
			t.Fatalf("task %s:\n%s\n%s", b.ID, x, y)
		}
	}
}

// indexEntries returns the index's entries as JSON by id.
func indexEntries(t *testing.T, s *Store) map[string]string {
	t.Helper()
	var ix struct {
		Tasks map[string]json.RawMessage `json:"tasks"`
	}
	if err := json.Unmarshal(readFileT(t, s.Path()), &ix); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for id, e := range ix.Tasks {
		out[id] = string(e)
	}
	return out
}

// BenchmarkUpdateIndexNewTask: one process records a new task through
// UpdateIndex (records cache cleared first, as a fresh process has it)
// into an index of 500 running tasks, and through Update for comparison.
func BenchmarkUpdateIndexNewTask(b *testing.B) {
	for _, full := range []bool{false, true} {
		b.Run(fmt.Sprintf("full=%v", full), func(b *testing.B) {
			s, err := Open(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			if err := s.Update(b.Context(), func(st *State) error {
				for i := range 500 {
					id := fmt.Sprintf("t_pre%05d", i)
					st.Tasks[id] = &Task{ID: id, Project: "p", Dir: "/d", Agent: "sim", Text: "a task before", Status: StatusRunning, Created: clock.Now().UTC()}
				}
				return nil
			}); err != nil {
				b.Fatal(err)
			}
			update := s.UpdateIndex
			if full {
				update = s.Update
			}
			b.ResetTimer()
			for i := range b.N {
				records.forget(s.Dir())
				id := fmt.Sprintf("t_new%07d", i)
				if err := update(b.Context(), func(st *State) error {
					st.Tasks[id] = &Task{ID: id, Project: "p", Dir: "/d", Agent: "sim", Text: "new", Status: StatusQueued, Created: clock.Now().UTC()}
					return nil
				}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestNewTaskKilledAfterWrite: writers that record a new task as a
// dispatch does (CreateTask: handed to the lock's holder when another
// holds it), each killed (SIGKILL) as soon as it says its task's id,
// as a dispatch that returned an id and died: every task said is in the
// state, whole, and the state reads clean.
func TestNewTaskKilledAfterWrite(t *testing.T) {
	const procs = 12
	s, _ := lazyFixture(t, 20)
	ids := make(chan string, procs)
	var wg sync.WaitGroup
	for range procs {
		cmd := helper(t, "newtaskkill", s.Dir())
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			line, err := bufio.NewReader(out).ReadString('\n')
			cmd.Process.Signal(syscall.SIGKILL)
			cmd.Wait()
			if err != nil {
				t.Errorf("a writer said no id: %v: %s", err, cmd.Stderr)
				return
			}
			ids <- strings.TrimSpace(line)
		})
	}
	wg.Wait()
	close(ids)
	records.forget(s.Dir())
	st, err := s.Read(t.Context())
	if err != nil {
		t.Fatalf("the state after the kills: %v", err)
	}
	n := 0
	for id := range ids {
		n++
		if tk := st.Tasks[id]; tk == nil || tk.Text != "a task of a burst" || tk.Status != StatusQueued {
			t.Fatalf("task %s, whose write returned, is not in the state whole: %+v", id, tk)
		}
	}
	if n != procs || len(st.Tasks) != 20+procs {
		t.Fatalf("%d ids said, %d tasks in the state", n, len(st.Tasks))
	}
}
