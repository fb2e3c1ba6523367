package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
)

// recordFiles lists the record files of the store, sorted.
func recordFiles(t *testing.T, s *Store) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(s.Dir(), "tasks", "t_*.*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range m {
		m[i] = filepath.Base(m[i])
	}
	slices.Sort(m)
	return m
}

// finishedTask returns a done task whose window gc has closed.
func finishedTask(id string, at time.Time) *Task {
	code := 0
	return &Task{ID: id, Project: "api", Dir: "/src/api", Agent: "sim",
		Text: "task " + id + "\nwith a second line", Status: StatusDone, Created: at, Started: at,
		Ended: at.Add(time.Second), Reclaimed: at.Add(2 * time.Second), ExitCode: &code,
		History: []StatusChange{{Status: StatusDone, Time: at, Reason: "done"}},
		Turns:   []Turn{{Time: at, Summary: "did it", Answer: "the answer of " + id}},
		Tmux:    TmuxTarget{Socket: "runner", Session: "api", Window: id, Pane: "%1"}}
}

func TestRecordWrittenOnlyWhenBulkChanges(t *testing.T) {
	s := openTemp(t)
	mustUpdate(t, s, func(st *State) error {
		st.Tasks["t_aaaaaaaa"] = &Task{ID: "t_aaaaaaaa", Dir: "/d", Agent: "sim", Text: "hello", Status: StatusRunning, Created: clock.Now()}
		return nil
	})
	first := recordFiles(t, s)
	if len(first) != 1 {
		t.Fatalf("records after the first write: %v", first)
	}
	// A hot field alone: the index changes, the record stays.
	mustUpdate(t, s, func(st *State) error { st.Tasks["t_aaaaaaaa"].SupervisorPID = 42; return nil })
	if got := recordFiles(t, s); !slices.Equal(got, first) {
		t.Fatalf("a hot change wrote a record: %v → %v", first, got)
	}
	// Bulk: a new record, the old one removed once the index is durable.
	mustUpdate(t, s, func(st *State) error { st.Tasks["t_aaaaaaaa"].AddTurn(clock.Now(), "a turn"); return nil })
	second := recordFiles(t, s)
	if len(second) != 1 || second[0] == first[0] {
		t.Fatalf("records after a bulk change: %v (before %v)", second, first)
	}
	records.forget(s.Dir())
	st, err := s.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if x := st.Tasks["t_aaaaaaaa"]; x.SupervisorPID != 42 || x.LastTurn() != "a turn" || x.Text != "hello" {
		t.Fatalf("read back %+v", x)
	}
}

func TestArchiveLifecycle(t *testing.T) {
	s := openTemp(t)
	s.ArchiveAfter = 5
	base := clock.Now().Add(-time.Hour).UTC()
	var ids []string
	for i := range 40 {
		id := fmt.Sprintf("t_arch%04d", i)
		ids = append(ids, id)
		mustUpdate(t, s, func(st *State) error {
			st.Tasks[id] = finishedTask(id, base.Add(time.Duration(i)*time.Second))
			return nil
		})
	}
	mustUpdate(t, s, func(st *State) error {
		st.Tasks["t_running1"] = &Task{ID: "t_running1", Dir: "/d", Agent: "sim", Status: StatusRunning, Created: clock.Now()}
		return nil
	})
	records.forget(s.Dir())
	st, err := s.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if n := len(st.Tasks); n > 2*5+1 {
		t.Fatalf("the index holds %d tasks; want at most %d", n, 2*5+1)
	}
	if st.ArchivedCount()+len(st.Tasks) != 41 {
		t.Fatalf("index %d + archive %d != 41", len(st.Tasks), st.ArchivedCount())
	}
	all, err := st.AllTasks()
	if err != nil || len(all) != 41 {
		t.Fatalf("AllTasks: %d, %v", len(all), err)
	}
	if all[0].ID != ids[0] || !all[0].Archived || all[0].Text != "task "+ids[0] || all[0].ExitCode == nil {
		t.Fatalf("oldest listed: %+v", all[0])
	}
	// A read reaches an archived task whole, by id or prefix.
	got := st.Task(ids[3])
	if got == nil || got.Archived || got.Text != "task "+ids[3]+"\nwith a second line" || got.Turns[0].Answer != "the answer of "+ids[3] {
		t.Fatalf("Task(archived) = %+v", got)
	}
	if f, err := st.FindTask("arch0004"); err != nil || f.ID != ids[4] {
		t.Fatalf("FindTask(prefix) = %v, %v", f, err)
	}
	if _, err := st.FindTask("arch00"); err == nil || !strings.Contains(err.Error(), "ambiguous") {
		t.Fatalf("FindTask(ambiguous prefix) = %v", err)
	}
	// An update that changes an archived task brings it back whole, once.
	mustUpdate(t, s, func(st *State) error {
		x := st.Task(ids[1])
		x.SetStatus(StatusReady, clock.Now(), "a follow-up")
		x.Reclaimed, x.Ended = time.Time{}, time.Time{}
		return nil
	})
	records.forget(s.Dir())
	st, err = s.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	x := st.Tasks[ids[1]]
	if x == nil || x.Status != StatusReady || len(x.History) != 2 || x.Turns[0].Answer != "the answer of "+ids[1] {
		t.Fatalf("promoted task: %+v", x)
	}
	all, _ = st.AllTasks()
	seen := map[string]int{}
	for _, a := range all {
		seen[a.ID]++
	}
	if len(all) != 41 || seen[ids[1]] != 1 {
		t.Fatalf("after promotion: %d tasks, %s listed %d times", len(all), ids[1], seen[ids[1]])
	}
	// Every record file on disk is named by the index or a segment.
	if n := len(recordFiles(t, s)); n != 41 {
		t.Fatalf("%d record files for 41 tasks", n)
	}
}

func TestManySegmentsMerge(t *testing.T) {
	s := openTemp(t)
	s.ArchiveAfter = 1
	base := clock.Now().Add(-time.Hour).UTC()
	for i := range 60 {
		id := fmt.Sprintf("t_merg%04d", i)
		mustUpdate(t, s, func(st *State) error {
			st.Tasks[id] = finishedTask(id, base.Add(time.Duration(i)*time.Second))
			return nil
		})
	}
	st, err := s.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.arch.Tasks) > maxSegments {
		t.Fatalf("%d segments; want at most %d", len(st.arch.Tasks), maxSegments)
	}
	files, _ := os.ReadDir(filepath.Join(s.Dir(), archiveDir))
	if len(files) != len(st.arch.Tasks) {
		t.Fatalf("%d segment files for %d segments", len(files), len(st.arch.Tasks))
	}
	if all, _ := st.AllTasks(); len(all) != 60 {
		t.Fatalf("%d tasks listed, want 60", len(all))
	}
}

func TestPruneReachesTheArchive(t *testing.T) {
	s := openTemp(t)
	s.ArchiveAfter = 2
	s.Retention = 0 // until Prune
	old := clock.Now().Add(-48 * time.Hour).UTC()
	for i := range 20 {
		id := fmt.Sprintf("t_prun%04d", i)
		mustUpdate(t, s, func(st *State) error {
			st.Tasks[id] = finishedTask(id, old.Add(time.Duration(i)*time.Second))
			st.Messages = map[string]*Message{}
			return nil
		})
		if err := os.WriteFile(s.TaskFile(FileLog, id), []byte("log"), 0o600); err != nil && !os.IsNotExist(err) {
			os.MkdirAll(filepath.Dir(s.TaskFile(FileLog, id)), 0o700)
			os.WriteFile(s.TaskFile(FileLog, id), []byte("log"), 0o600)
		}
	}
	mustUpdate(t, s, func(st *State) error {
		st.Tasks["t_keepme01"] = finishedTask("t_keepme01", clock.Now().UTC())
		return nil
	})
	st, _ := s.Read(t.Context())
	if st.ArchivedCount() == 0 {
		t.Fatal("nothing was archived")
	}
	removed, err := s.Prune(t.Context(), 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 20 {
		t.Fatalf("pruned %d tasks, want 20: %v", len(removed), removed)
	}
	st, err = s.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	all, _ := st.AllTasks()
	if len(all) != 1 || all[0].ID != "t_keepme01" {
		t.Fatalf("after prune: %d tasks", len(all))
	}
	if got := recordFiles(t, s); len(got) != 1 {
		t.Fatalf("record files left: %v", got)
	}
	if _, err := os.Stat(s.TaskFile(FileLog, "t_prun0003")); !os.IsNotExist(err) {
		t.Fatalf("the transcript of a pruned archived task is still there: %v", err)
	}
}

func TestIndexEntrySize(t *testing.T) {
	at := time.Date(2026, 11, 24, 10, 0, 0, 123456789, time.UTC)
	x := finishedTask("t_k3j9x2ab", at)
	x.Text = "Fix the flaky test in the payment service and explain what was wrong, then open a pull request with the fix"
	x.SnapshotRef = "refs/runner/snapshots/t_k3j9x2ab"
	x.Dir = "/home/someone/src/payments-service"
	x.Project, x.Agent, x.Source, x.Level, x.SupervisorPID = "payments", "claude", SourceUser, 1, 123456
	x.Tmux = TmuxTarget{Socket: "runner", Session: "payments", Window: "t_k3j9x2ab", Pane: "%123"}
	b, err := json.Marshal(toEntry(x, 123456))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("entry: %d B: %s", len(b), b)
	if len(b) > 300 {
		t.Fatalf("an index entry takes %d B; the budget is 300", len(b))
	}
	// And it carries what it should.
	var e entry
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	var back Task
	e.applyHot(&back)
	if back.SnapshotRef != x.SnapshotRef || !back.Ended.Equal(x.Ended) || !back.Reclaimed.Equal(x.Reclaimed) || back.Tmux != x.Tmux || *back.ExitCode != 0 {
		t.Fatalf("hot fields did not round-trip: %+v", back)
	}
}

func TestEveryFieldIsHotOrBulk(t *testing.T) {
	known := map[string]bool{"Archived": true}
	for _, f := range append(slices.Clone(hotFields), bulkFields...) {
		if known[f] {
			t.Errorf("field %s is listed twice", f)
		}
		known[f] = true
	}
	typ := reflect.TypeFor[Task]()
	for i := range typ.NumField() {
		if f := typ.Field(i); !known[f.Name] {
			t.Errorf("Task.%s is neither hot (index.go hotFields, toEntry, applyHot) nor bulk (bulkFields, sameBulk)", f.Name)
		}
	}
	// sameBulk tells every bulk field apart.
	full := finishedTask("t_fieldsaa", clock.Now())
	full.TextFile, full.ResultTail, full.Delivery, full.Answer = "f", "r", "d", "a"
	full.AgentSession, full.Transcript, full.Question, full.Settings = "s", "t", "q", json.RawMessage(`{}`)
	full.Origin, full.Branch, full.Sandbox = "/src/api", "runner/t_fieldsaa", []string{"/src/api"}
	full.Changes = &Changes{Repo: "/src/api/.git", Files: []string{"a.go"}, Count: 1}
	full.Overlaps = []Overlap{{Task: "t_otheraaa", Files: []string{"a.go"}}}
	full.TurnCount = 2
	full.LimitReset = clock.Now().Add(time.Hour)
	full.Spend = Spend{Input: 1, Output: 2, Turns: 1, Unknown: 1}
	full.Live = Spend{Input: 3, Output: 4}
	full.HomeCopies = map[string]string{"/h/.claude": "/s/homes/t_fieldsaa/home/.claude"}
	full.Group, full.Check = "g_fieldsaa", &CheckResult{Command: "true", Runs: 1}
	full.TurnPrompt = &TurnPrompt{Signature: "say one", EventsFrom: 10}
	full.Answers = []AnswerReceipt{{Op: "op1", Option: "1", Label: "Yes", Digest: "0123456789abcdef", At: clock.Now(), Result: AnswerPressed}}
	for _, name := range bulkFields {
		c := full.clone()
		v := reflect.ValueOf(c).Elem().FieldByName(name)
		v.Set(reflect.Zero(v.Type()))
		if sameBulk(full, c) {
			t.Errorf("sameBulk does not see a change of %s", name)
		}
	}
	// applyHot sets every hot field.
	e := toEntry(full, 1)
	var back Task
	e.applyHot(&back)
	for _, name := range hotFields {
		if reflect.ValueOf(back).FieldByName(name).IsZero() && !reflect.ValueOf(*full).FieldByName(name).IsZero() {
			t.Errorf("hot field %s is lost by the index entry", name)
		}
	}
}

func TestMigrateVersion2(t *testing.T) {
	s := openTemp(t)
	// The fixture was written on 2026-11-24 at 21:46 UTC: convert it as of
	// a moment later, so the retention keeps its tasks whatever the date.
	fixtureTime := time.Date(2026, 11, 24, 22, 0, 0, 0, time.UTC)
	s.Now = func() time.Time { return fixtureTime }
	raw := readFileT(t, filepath.Join("testdata", "v2-state.json"))
	writeState(t, s, string(raw))
	st, err := s.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	before, _ := st.AllTasks()
	if len(before) != 3 || len(st.Messages) != 1 {
		t.Fatalf("a version 2 file reads as %d tasks, %d messages", len(before), len(st.Messages))
	}
	mustUpdate(t, s, func(st *State) error { return nil }) // the first write converts
	if b := readFileT(t, s.Path()+".v2-backup"); string(b) != string(raw) {
		t.Fatal("the version 2 file was not kept as state.json.v2-backup")
	}
	var probe struct{ Version int }
	json.Unmarshal(readFileT(t, s.Path()), &probe)
	if probe.Version != indexVersion {
		t.Fatalf("converted file has version %d, want %d (no host: the version older runners read)", probe.Version, indexVersion)
	}
	records.forget(s.Dir())
	st, err = s.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	after, _ := st.AllTasks()
	if len(after) != len(before) || len(st.Messages) != 1 {
		t.Fatalf("converted: %d tasks, %d messages", len(after), len(st.Messages))
	}
	for i := range before {
		a := st.Task(before[i].ID)
		b, _ := json.Marshal(a)
		c, _ := json.Marshal(before[i])
		if string(b) != string(c) {
			t.Errorf("task %s changed in the conversion:\n%s\n%s", a.ID, c, b)
		}
	}
}

func TestRepairFromRecords(t *testing.T) {
	s := openTemp(t)
	s.ArchiveAfter = 2
	base := clock.Now().Add(-time.Hour).UTC()
	for i := range 12 {
		id := fmt.Sprintf("t_repa%04d", i)
		mustUpdate(t, s, func(st *State) error {
			st.Tasks[id] = finishedTask(id, base.Add(time.Duration(i)*time.Second))
			return nil
		})
	}
	mustUpdate(t, s, func(st *State) error {
		st.Tasks["t_newest01"] = &Task{ID: "t_newest01", Dir: "/d", Agent: "sim", Text: "the newest", Status: StatusRunning, Created: clock.Now()}
		return nil
	})
	streamed := readStream(t, s, 0)
	// The index is lost, and its previous generation too.
	writeState(t, s, "{not json")
	os.Remove(filepath.Join(s.Dir(), prevFile))
	os.Remove(filepath.Join(s.Dir(), JournalFile))
	if _, err := s.Read(t.Context()); err == nil {
		t.Fatal("a corrupt index reads")
	}
	rep, err := s.Repair(t.Context(), false)
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	all, _ := st.AllTasks()
	if len(all) != 13 || st.Task("t_newest01") == nil || st.Task("t_newest01").Text != "the newest" {
		t.Fatalf("rebuilt %d tasks (%+v)", len(all), rep)
	}
	if rep.FromRecords == 0 {
		t.Fatalf("report: %+v", rep)
	}
	// The event stream goes on after its last cursor; the rebuild streamed
	// nothing again.
	before := readStream(t, s, 0)
	if len(streamed) == 0 || len(before) != len(streamed) {
		t.Fatalf("%d events before the repair, %d after it", len(streamed), len(before))
	}
	mustUpdate(t, s, func(st *State) error {
		return st.Task("t_newest01").SetStatus(StatusDone, clock.Now(), "after the repair")
	})
	after := readStream(t, s, 0)
	if len(after) != len(before)+1 || after[len(after)-1].Cursor != before[len(before)-1].Cursor+1 || after[len(after)-1].Reason != "after the repair" {
		t.Fatalf("the stream after the repair: %d events then %d: %+v", len(before), len(after), after[len(after)-1])
	}
}

func TestRepairAfterALostRecord(t *testing.T) {
	s := openTemp(t)
	mustUpdate(t, s, func(st *State) error {
		st.Tasks["t_lostrec1"] = &Task{ID: "t_lostrec1", Dir: "/d", Agent: "sim", Text: "v1", Status: StatusRunning, Created: clock.Now()}
		return nil
	})
	mustUpdate(t, s, func(st *State) error { st.Tasks["t_lostrec1"].Text = "v2"; return nil })
	for _, f := range recordFiles(t, s) {
		os.Remove(filepath.Join(s.Dir(), "tasks", f))
	}
	records.forget(s.Dir())
	_, err := s.Read(t.Context())
	if err == nil || !strings.Contains(err.Error(), "runner state repair") {
		t.Fatalf("a missing record reads as %v", err)
	}
	if _, err := s.Repair(t.Context(), false); err != nil {
		t.Fatal(err)
	}
	st, err := s.Read(t.Context())
	if err != nil || st.Tasks["t_lostrec1"] == nil {
		t.Fatalf("after repair: %v", err)
	}
}

func TestReadWhileWritersMoveOn(t *testing.T) {
	s := openTemp(t)
	mustUpdate(t, s, func(st *State) error {
		st.Tasks["t_movingon"] = &Task{ID: "t_movingon", Dir: "/d", Agent: "sim", Status: StatusRunning, Created: clock.Now()}
		return nil
	})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			mustUpdate(t, s, func(st *State) error { st.Tasks["t_movingon"].Answer = fmt.Sprint(i); return nil })
		}
	}()
	for range 300 {
		records.forget(s.Dir()) // as a new process would
		if _, err := s.Read(t.Context()); err != nil {
			close(stop)
			wg.Wait()
			t.Fatalf("a read while the writer moves on: %v", err)
		}
	}
	close(stop)
	wg.Wait()
}

func TestMessagesArchived(t *testing.T) {
	s := openTemp(t)
	now := clock.Now().UTC()
	mustUpdate(t, s, func(st *State) error {
		st.Tasks["t_msgroot1"] = &Task{ID: "t_msgroot1", Dir: "/d", Agent: "sim", Status: StatusRunning, Created: now}
		return nil
	})
	for i := range 3 * MessagesKept {
		mustUpdate(t, s, func(st *State) error {
			m := &Message{ID: fmt.Sprintf("m_msg%05d", i), From: "user", To: "t_msgroot1", Type: MessageUpdate,
				Text: "hi", Root: "t_msgroot1", Created: now.Add(time.Duration(i) * time.Millisecond)}
			m.SetMessageStatus(MessageDelivered, m.Created, "")
			st.AddMessage(m)
			return nil
		})
	}
	st, err := s.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if n := len(st.Messages); n > 2*MessagesKept {
		t.Fatalf("the index keeps %d messages", n)
	}
	hist, err := st.MessageHistory("t_msgroot1")
	if err != nil || len(hist) != 3*MessagesKept || hist[0].ID != "m_msg00000" {
		t.Fatalf("history: %d messages, %v", len(hist), err)
	}
	if n := st.RootMessages("t_msgroot1"); n != 3*MessagesKept {
		t.Fatalf("RootMessages = %d", n)
	}
}

func TestCountsReadsTheIndexOnly(t *testing.T) {
	s := openTemp(t)
	s.ArchiveAfter = 1
	now := clock.Now().UTC()
	mustUpdate(t, s, func(st *State) error {
		for i := range 5 {
			id := fmt.Sprintf("t_count%03d", i)
			st.Tasks[id] = finishedTask(id, now)
		}
		st.Tasks["t_countrun"] = &Task{ID: "t_countrun", Dir: "/d", Agent: "sim", Status: StatusRunning, Created: now}
		st.Tasks["t_countask"] = &Task{ID: "t_countask", Dir: "/d", Agent: "sim", Status: StatusNeedsInput, Created: now}
		return nil
	})
	for _, f := range recordFiles(t, s) { // records are not read
		os.Remove(filepath.Join(s.Dir(), "tasks", f))
	}
	c, err := s.Counts(t.Context())
	if err != nil || c[StatusRunning] != 1 || c[StatusNeedsInput] != 1 || c[StatusDone] > 2 {
		t.Fatalf("Counts = %v, %v", c, err)
	}
}

// BenchmarkCounts10k is the status line's read of a state retaining 10 000
// tasks (issue 15: ≤ 5 ms).
func BenchmarkCounts10k(b *testing.B) {
	s := retainedStore(b, 10000, false)
	for b.Loop() {
		if _, err := s.Counts(b.Context()); err != nil {
			b.Fatal(err)
		}
	}
}

// TestHostVersion: a state that names a host is written as version 4 (which
// runners without hosts refuse), one that names none as version 3; a task's
// host survives the round trip through the index.
func TestHostVersion(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	version := func() int {
		var probe struct{ Version int }
		if err := json.Unmarshal(readFileT(t, s.Path()), &probe); err != nil {
			t.Fatal(err)
		}
		return probe.Version
	}
	mustUpdate(t, s, func(st *State) error {
		st.Projects["api"] = &Project{Name: "api", Dir: "/srv/api"}
		return nil
	})
	if v := version(); v != indexVersion {
		t.Fatalf("no host: version %d, want %d", v, indexVersion)
	}
	now := clock.Now().UTC()
	mustUpdate(t, s, func(st *State) error {
		st.Tasks["t_remote"] = &Task{ID: "t_remote", Dir: "/srv/api", Agent: "sim", Status: StatusRunning, Created: now,
			Tmux: TmuxTarget{Socket: "runner", Session: "api", Window: "t_remote", Pane: "%3", Host: "gpu"}}
		return nil
	})
	if v := version(); v != Version {
		t.Fatalf("a task on a host: version %d, want %d", v, Version)
	}
	records.forget(s.Dir())
	st, err := s.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Task("t_remote").Tmux; got.Host != "gpu" || got.Pane != "%3" || got.Window != "t_remote" {
		t.Fatalf("tmux target after the round trip: %+v", got)
	}
	mustUpdate(t, s, func(st *State) error {
		delete(st.Tasks, "t_remote")
		st.Projects["api"].Host = "gpu"
		return nil
	})
	if v := version(); v != Version {
		t.Fatalf("a project on a host: version %d, want %d", v, Version)
	}
	mustUpdate(t, s, func(st *State) error {
		st.Projects["api"].Host = ""
		return nil
	})
	if v := version(); v != indexVersion {
		t.Fatalf("no host any more: version %d, want %d", v, indexVersion)
	}
}

// TestReadTask reads one task the short way: the same task as Read gives,
// from the index or the archive, without reading any other task's record
// (another record that does not parse is no concern of it; Read says so).
func TestReadTask(t *testing.T) {
	s := openTemp(t)
	s.ArchiveAfter = 2
	base := clock.Now().Add(-time.Hour).UTC()
	for i := range 8 {
		id := fmt.Sprintf("t_old%05d", i)
		mustUpdate(t, s, func(st *State) error {
			st.Tasks[id] = finishedTask(id, base.Add(time.Duration(i)*time.Second))
			return nil
		})
	}
	mustUpdate(t, s, func(st *State) error {
		for _, id := range []string{"t_aaaaaaaa", "t_bbbbbbbb"} {
			x := &Task{ID: id, Dir: "/d", Agent: "sim", Text: "text of " + id, Status: StatusStarting, Created: clock.Now()}
			x.SetStatus(StatusRunning, clock.Now(), "delivered")
			st.Tasks[id] = x
		}
		return nil
	})
	mustUpdate(t, s, func(st *State) error { st.Tasks["t_aaaaaaaa"].SupervisorPID = 7; return nil }) // a hot field only
	st, err := s.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, ours := range []bool{true, false} {
		if !ours {
			// As another process left the file: its bytes are checked.
			lastIndex.mu.Lock()
			lastIndex.ours = false
			lastIndex.mu.Unlock()
		}
		for _, id := range []string{"t_aaaaaaaa", "t_bbbbbbbb", "t_old00000"} {
			records.forget(s.Dir())
			got, err := s.ReadTask(t.Context(), id)
			if err != nil {
				t.Fatalf("ReadTask(%s): %v", id, err)
			}
			want := st.Task(id)
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want)
			if want == nil || string(g) != string(w) {
				t.Fatalf("ReadTask(%s) (written by this process: %v) = %s\nRead gives %s", id, ours, g, w)
			}
		}
	}
	// Another process's write of the same index, a hot field changed: it
	// is what the short way reads, not what this process wrote last.
	mustUpdate(t, s, func(st *State) error { st.Tasks["t_aaaaaaaa"].SupervisorPID = 8; return nil })
	raw := readFileT(t, s.Path())
	other := bytes.Replace(raw, []byte(`"pid":8,`), []byte(`"pid":9,`), 1)
	if bytes.Equal(other, raw) {
		t.Fatalf("no pid 8 in %s", raw)
	}
	if err := os.WriteFile(s.Path(), other, 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ReadTask(t.Context(), "t_aaaaaaaa"); err != nil || got.SupervisorPID != 9 {
		t.Fatalf("ReadTask after another process's write = %+v, %v; want its supervisor 9", got, err)
	}
	mustUpdate(t, s, func(st *State) error { st.Tasks["t_aaaaaaaa"].SupervisorPID = 7; return nil })
	if st.Tasks["t_old00000"] != nil {
		t.Fatal("the test wants t_old00000 archived")
	}
	if _, err := s.ReadTask(t.Context(), "t_zzzzzzzz"); !errors.Is(err, ErrTaskNotFound) {
		t.Fatalf("ReadTask(unknown) = %v, want ErrTaskNotFound", err)
	}
	// Break t_bbbbbbbb's record: t_aaaaaaaa is still read the short way.
	recs, _ := filepath.Glob(filepath.Join(s.Dir(), "tasks", "t_bbbbbbbb.*.json"))
	if len(recs) != 1 {
		t.Fatalf("records of t_bbbbbbbb: %v", recs)
	}
	if err := os.WriteFile(recs[0], []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	records.forget(s.Dir())
	if got, err := s.ReadTask(t.Context(), "t_aaaaaaaa"); err != nil || got.SupervisorPID != 7 || got.Text != "text of t_aaaaaaaa" {
		t.Fatalf("ReadTask beside a broken record = %+v, %v", got, err)
	}
	if _, err := s.ReadTask(t.Context(), "t_bbbbbbbb"); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("ReadTask(broken record) = %v, want ErrCorrupt", err)
	}
	if _, err := s.Read(t.Context()); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Read with a broken record = %v, want ErrCorrupt", err)
	}
}

// TestAnswerReceiptWritten: a receipt's result changed in place is a
// change of the record (clone copies the receipts), and it is kept.
func TestAnswerReceiptWritten(t *testing.T) {
	s := openTemp(t)
	ctx := t.Context()
	id := "t_answeraaa"
	if err := s.Update(ctx, func(st *State) error {
		st.Tasks[id] = finishedTask(id, clock.Now())
		st.Tasks[id].AddAnswer(AnswerReceipt{Op: "op1", Option: "1", Digest: "d", At: clock.Now(), Result: AnswerPending})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(ctx, func(st *State) error {
		r, ok := st.Task(id).AnswerOf("op1")
		if !ok {
			t.Fatal("op1 not found")
		}
		r.Result = AnswerPressed
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	x, err := s.ReadTask(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := x.AnswerOf("op1"); !ok || r.Result != AnswerPressed {
		t.Fatalf("the receipt reads %+v, %v; want pressed", r, ok)
	}
}
