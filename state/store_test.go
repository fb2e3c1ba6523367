package state

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
)

func openTemp(t testing.TB) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// writeState puts content in the store's state.json, as another program
// would.
func writeState(t *testing.T, s *Store, content string) {
	t.Helper()
	if err := os.MkdirAll(s.Dir(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.Path(), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func mustUpdate(t testing.TB, s *Store, fn func(*State) error) {
	t.Helper()
	if err := s.Update(t.Context(), fn); err != nil {
		t.Fatal(err)
	}
}

func readFileT(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDefaultDir(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string
		err  bool
	}{
		{"override", map[string]string{"RUNNER_STATE_DIR": "/s", "XDG_STATE_HOME": "/x", "HOME": "/h"}, "/s", false},
		{"xdg", map[string]string{"XDG_STATE_HOME": "/x", "HOME": "/h"}, "/x/runner", false},
		{"relative xdg ignored", map[string]string{"XDG_STATE_HOME": "x", "HOME": "/h"}, "/h/.local/state/runner", false},
		{"home", map[string]string{"HOME": "/h"}, "/h/.local/state/runner", false},
		{"nothing", map[string]string{}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DefaultDir(func(k string) string { return tt.env[k] })
			if (err != nil) != tt.err || got != tt.want {
				t.Fatalf("DefaultDir = %q, %v; want %q, error %v", got, err, tt.want, tt.err)
			}
		})
	}
}

func TestReadMissingIsEmpty(t *testing.T) {
	s := openTemp(t)
	if _, err := os.Stat(s.Dir()); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Open created %s: %v", s.Dir(), err)
	}
	events, _, err := s.ReadJournal(t.Context())
	if err != nil || len(events) != 0 {
		t.Fatalf("ReadJournal on a missing directory = %v, %v", events, err)
	}
	st, err := s.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if st.Version != Version || len(st.Projects) != 0 || len(st.Tasks) != 0 || st.Generation != 0 {
		t.Fatalf("empty state = %+v", st)
	}
	if _, err := os.Stat(s.Dir()); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("reading created %s: %v", s.Dir(), err)
	}
}

func TestOpenRefusesAFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "file")
	os.WriteFile(p, nil, 0o600)
	if _, err := Open(p); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("Open(file) = %v", err)
	}
}

func TestUpdateWritesAndReads(t *testing.T) {
	s := openTemp(t)
	mustUpdate(t, s, func(st *State) error {
		st.Projects["api"] = &Project{Name: "api", Dir: "/src/api"}
		return nil
	})
	st, err := s.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if st.Projects["api"].Dir != "/src/api" || st.Generation != 1 || st.Updated.IsZero() {
		t.Fatalf("after update: %+v", st)
	}
	// An update that changes nothing writes nothing.
	before := readFileT(t, s.Path())
	mustUpdate(t, s, func(*State) error { return nil })
	if after := readFileT(t, s.Path()); !bytes.Equal(before, after) {
		t.Fatalf("a no-op update rewrote the file:\n%s\n%s", before, after)
	}
	// The previous generation is kept for Repair.
	mustUpdate(t, s, func(st *State) error { delete(st.Projects, "api"); return nil })
	prev, err := s.parse("prev", readFileT(t, filepath.Join(s.Dir(), prevFile)), false, false)
	if err != nil || prev.Projects["api"] == nil || prev.Generation != 1 {
		t.Fatalf("state.json.prev = %+v, %v; want generation 1 with api", prev, err)
	}
}

func TestUpdateErrorWritesNothing(t *testing.T) {
	s := openTemp(t)
	mustUpdate(t, s, func(st *State) error { setCounter(st, "a", 1); return nil })
	before := readFileT(t, s.Path())
	boom := errors.New("boom")
	err := s.Update(t.Context(), func(st *State) error { setCounter(st, "a", 2); return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("Update = %v, want boom", err)
	}
	if after := readFileT(t, s.Path()); !bytes.Equal(before, after) {
		t.Fatal("a failed update changed the file")
	}
}

func TestPermissions(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	s := openTemp(t)
	mustUpdate(t, s, func(st *State) error { setCounter(st, "a", 1); return nil })
	mustUpdate(t, s, func(st *State) error { setCounter(st, "a", 2); return nil })
	if err := s.Journal(t.Context(), Event{Kind: "test"}); err != nil {
		t.Fatal(err)
	}
	check := func(p string, want fs.FileMode) {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s: mode %v, want %v", filepath.Base(p), got, want)
		}
	}
	check(s.Dir(), 0o700)
	for _, f := range []string{StateFile, LockFile, JournalFile, prevFile, journalLock} {
		check(filepath.Join(s.Dir(), f), 0o600)
	}
}

func TestInjectedWriteFailureKeepsOldFile(t *testing.T) {
	s := openTemp(t)
	mustUpdate(t, s, func(st *State) error { setCounter(st, "a", 1); return nil })
	before := readFileT(t, s.Path())
	orig := writeData
	t.Cleanup(func() { writeData = orig })
	writeData = func(f *os.File, b []byte) error {
		f.Write(b[:len(b)/2]) // a partial write, then the disk is full
		return syscall.ENOSPC
	}
	err := s.Update(t.Context(), func(st *State) error { setCounter(st, "a", 2); return nil })
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), s.Path()) {
		t.Fatalf("Update = %v, want ENOSPC naming %s", err, s.Path())
	}
	if after := readFileT(t, s.Path()); !bytes.Equal(before, after) {
		t.Fatal("the failed write changed state.json")
	}
	if _, err := os.Stat(filepath.Join(s.Dir(), tmpFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("temp file left behind: %v", err)
	}
	writeData = orig
	mustUpdate(t, s, func(st *State) error { setCounter(st, "a", 2); return nil })
	st, err := s.Read(t.Context())
	if err != nil || counter(st, "a") != 2 {
		t.Fatalf("after recovery: %v, %v", st, err)
	}
}

func TestNewerVersionRefused(t *testing.T) {
	for name, content := range map[string]string{
		"same shape":      `{"version":99,"generation":3,"projects":{},"tasks":{}}`,
		"different shape": `{"version":99,"projects":["a","b"],"tasks":7}`,
		"spaced":          `{ "version" : 99, "tasks" : {} }`, // not as runner writes it: decoded for its version
	} {
		t.Run(name, func(t *testing.T) {
			s := openTemp(t)
			writeState(t, s, content)
			_, rerr := s.Read(t.Context())
			uerr := s.Update(t.Context(), func(st *State) error { setCounter(st, "a", 1); return nil })
			_, perr := s.Repair(t.Context(), false)
			for _, err := range []error{rerr, uerr, perr} {
				if !errors.Is(err, ErrNewerVersion) || !strings.Contains(err.Error(), s.Path()) || !strings.Contains(err.Error(), "upgrade runner") {
					t.Errorf("got %v, want ErrNewerVersion naming the file and the fix", err)
				}
			}
			if got := string(readFileT(t, s.Path())); got != content {
				t.Fatalf("the newer file was changed: %s", got)
			}
			// The newer runner's files: a record and an archive segment.
			newerFiles := map[string]string{
				filepath.Join(s.Dir(), "tasks", "t_newer001.7.json"): `{"id":"t_newer001","a_field_of_the_future":1}`,
				filepath.Join(s.Dir(), "archive", "tasks.9.jsonl"):   `{"future":true}`,
			}
			for p, c := range newerFiles {
				os.MkdirAll(filepath.Dir(p), 0o700)
				if err := os.WriteFile(p, []byte(c), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			// --force moves it aside and starts over, removing none of
			// the newer runner's files.
			rep, err := s.Repair(t.Context(), true)
			for p, c := range newerFiles {
				if got, _ := os.ReadFile(p); string(got) != c {
					t.Errorf("repair --force changed or removed the newer runner's %s: %q", p, got)
				}
			}
			if err != nil || !strings.Contains(rep.MovedTo, ".newer-") {
				t.Fatalf("Repair(force) = %+v, %v", rep, err)
			}
			if got := string(readFileT(t, rep.MovedTo)); got != content {
				t.Fatalf("moved file content %q", got)
			}
			if _, err := s.Read(t.Context()); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestLeadingVersion: the version is read from the start of a file as
// runner writes it, and anything else is left to a decode of the file.
func TestLeadingVersion(t *testing.T) {
	for raw, want := range map[string]int{
		`{"version":3,"generation":1}`: 3, `{"version":4}`: 4, `{"version":123456,"x":1}`: 123456,
		`{"version":1234567,"x":1}`: -1, `{ "version":3,`: -1, `{"version":,`: -1, `{"version":3`: -1,
		`{"version":3 ,`: -1, `{"generation":1,"version":3}`: -1, ``: -1, `{"version":"3",`: -1,
	} {
		got, ok := leadingVersion([]byte(raw))
		if !ok {
			got = -1
		}
		if got != want {
			t.Errorf("leadingVersion(%q) = %d, want %d", raw, got, want)
		}
	}
}

func TestCorruptReportedAndLeftInPlace(t *testing.T) {
	for name, content := range map[string]string{
		"garbage":    "{\"version\":1,\"projects\":{\"a\":{\"na",
		"empty":      "",
		"no version": `{"projects":{},"tasks":{}}`,
		"not json":   "hello\n",
		// The version read from the file's start, then another one.
		"two versions": `{"version":3,"generation":1,"projects":{},"tasks":{},"version":2}`,
		"cut short":    `{"version":3,"generation":1,"pro`,
	} {
		t.Run(name, func(t *testing.T) {
			s := openTemp(t)
			writeState(t, s, content)
			_, rerr := s.Read(t.Context())
			uerr := s.Update(t.Context(), func(st *State) error { setCounter(st, "a", 1); return nil })
			for _, err := range []error{rerr, uerr} {
				var ce *CorruptError
				if !errors.Is(err, ErrCorrupt) || !errors.As(err, &ce) || ce.Path != s.Path() ||
					!strings.Contains(err.Error(), s.Path()) || !strings.Contains(err.Error(), "runner state repair") {
					t.Errorf("got %v, want ErrCorrupt naming the file and 'runner state repair'", err)
				}
			}
			if got := string(readFileT(t, s.Path())); got != content {
				t.Fatalf("the corrupt file was changed: %q", got)
			}
		})
	}
}

func TestRepairRebuildsFromPreviousAndJournal(t *testing.T) {
	s := openTemp(t)
	ctx := t.Context()
	if rep, err := s.Repair(ctx, false); err != nil || !rep.Healthy {
		t.Fatalf("Repair on a missing file = %+v, %v; want healthy", rep, err)
	}
	// Each change is journalled after its update, as runner does.
	for _, name := range []string{"a", "b"} {
		p := &Project{Name: name, Dir: "/" + name}
		mustUpdate(t, s, func(st *State) error { st.Projects[name] = p; return nil })
		if err := s.Journal(ctx, Event{Kind: EventProjectAdded, Project: name, ProjectRecord: p}); err != nil {
			t.Fatal(err)
		}
	}
	// The journal knows of later changes than the previous generation.
	later := clock.Now().UTC().Add(time.Second)
	task := &Task{ID: "t_abcdefgh", Agent: "sim", Text: "x", Status: StatusRunning}
	for _, ev := range []Event{
		{Time: later, Kind: EventProjectAdded, ProjectRecord: &Project{Name: "c", Dir: "/c"}},
		{Time: later, Kind: EventProjectRemoved, Project: "a"},
		{Time: later, Kind: EventTask, Task: task.ID, TaskRecord: task},
		{Time: time.Unix(0, 0), Kind: EventProjectAdded, ProjectRecord: &Project{Name: "old", Dir: "/old"}},
	} {
		if err := s.Journal(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	garbage := []byte("{\"version\":1,\"proj")
	if err := os.WriteFile(s.Path(), garbage, 0o600); err != nil {
		t.Fatal(err)
	}
	rep, err := s.Repair(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.FromPrevious || rep.Replayed != 5 || rep.Projects != 2 || rep.Tasks != 1 || !strings.Contains(rep.MovedTo, StateFile+".corrupt-") {
		t.Fatalf("report %+v", rep)
	}
	if got := readFileT(t, rep.MovedTo); !bytes.Equal(got, garbage) {
		t.Fatalf("moved-aside file = %q", got)
	}
	st, err := s.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range st.ProjectList() {
		names = append(names, p.Name)
	}
	if strings.Join(names, ",") != "b,c" || st.Tasks[task.ID] == nil {
		t.Fatalf("rebuilt: projects %v, tasks %v", names, st.Tasks)
	}
}

func TestBusy(t *testing.T) {
	s := openTemp(t)
	s.LockTimeout = 50 * time.Millisecond
	unlock, err := s.lock(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	err = s.Update(t.Context(), func(*State) error { return nil })
	var be *BusyError
	if !errors.Is(err, ErrBusy) || !errors.As(err, &be) || !strings.Contains(err.Error(), LockFile) {
		t.Fatalf("Update with the lock held = %v, want ErrBusy", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	s.LockTimeout = time.Minute
	if err := s.Update(ctx, func(*State) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("Update with a cancelled context = %v", err)
	}
	unlock()
	// The abandoned waiters release the lock once they get it, so the next
	// update goes through.
	mustUpdate(t, s, func(st *State) error { setCounter(st, "a", 1); return nil })
}

func TestPrune(t *testing.T) {
	s := openTemp(t)
	now := clock.Now()
	mk := func(id string, status Status, ended time.Time) *Task {
		return &Task{ID: id, Status: status, Created: ended.Add(-time.Minute), Ended: ended}
	}
	mustUpdate(t, s, func(st *State) error {
		for _, tk := range []*Task{
			mk("t_old0done", StatusDone, now.Add(-48*time.Hour)),
			mk("t_old0fail", StatusFailed, now.Add(-30*time.Hour)),
			mk("t_new0done", StatusDone, now.Add(-time.Hour)),
			mk("t_old0orph", StatusOrphaned, now.Add(-48*time.Hour)),
			mk("t_running0", StatusRunning, time.Time{}),
		} {
			st.Tasks[tk.ID] = tk
		}
		return nil
	})
	// The update itself pruned past the default retention of 24 h.
	st, _ := s.Read(t.Context())
	if len(st.Tasks) != 3 || st.Tasks["t_old0done"] != nil || st.Tasks["t_old0fail"] != nil {
		t.Fatalf("after update with 24h retention: %v", st.Tasks)
	}
	// A pruned task's files go with its record; a kept task's stay.
	files := func(id string) []string {
		return []string{s.TaskFile(FileText, id), s.TaskFile(FileLog, id), s.TaskFile(FileSupervisorLog, id),
			s.TaskFile(FileEvents, id), filepath.Join(s.TaskFile(FileHookDir, id), "settings.json")}
	}
	for _, id := range []string{"t_new0done", "t_running0"} {
		for _, f := range files(id) {
			if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	removed, err := s.Prune(t.Context(), 30*time.Minute)
	if err != nil || strings.Join(removed, ",") != "t_new0done" {
		t.Fatalf("Prune = %v, %v", removed, err)
	}
	st, _ = s.Read(t.Context())
	if len(st.Tasks) != 2 || st.Tasks["t_old0orph"] == nil || st.Tasks["t_running0"] == nil {
		t.Fatalf("after prune: %v", st.Tasks)
	}
	for _, f := range files("t_new0done") {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("%s of a pruned task is still there (%v)", f, err)
		}
	}
	if _, err := os.Stat(s.TaskFile(FileHookDir, "t_new0done")); !os.IsNotExist(err) {
		t.Errorf("the hook directory of a pruned task is still there")
	}
	for _, f := range files("t_running0") {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("%s of a kept task: %v", f, err)
		}
	}
}

// helper starts the test binary as a helper process.
func helper(t testing.TB, mode string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "STATE_TEST_HELPER="+mode)
	cmd.Stderr = new(bytes.Buffer)
	return cmd
}

func TestConcurrentProcesses(t *testing.T) {
	procs, each := 64, 200
	s := openTemp(t)
	start := clock.Now()
	var wg sync.WaitGroup
	errs := make(chan error, procs)
	for i := range procs {
		cmd := helper(t, "count", s.Dir(), fmt.Sprintf("w%02d", i), strconv.Itoa(each))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			if err := cmd.Wait(); err != nil {
				errs <- fmt.Errorf("writer %d: %v: %s", i, err, cmd.Stderr)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	elapsed := clock.Since(start)
	st, err := s.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for i := range procs {
		c := counter(st, fmt.Sprintf("w%02d", i))
		if c != each {
			t.Errorf("writer %d: counter %d, want %d", i, c, each)
		}
		total += c
	}
	if total != procs*each || st.Generation != uint64(procs*each) {
		t.Fatalf("applied %d updates in generation %d, want %d", total, st.Generation, procs*each)
	}
	t.Logf("%d processes × %d updates: %v, %.0f updates/s", procs, each, elapsed.Round(time.Millisecond), float64(total)/elapsed.Seconds())
}

func TestKilledWriters(t *testing.T) {
	const kills = 200
	s := openTemp(t)
	ctx := t.Context()
	rng := rand.New(rand.NewPCG(uint64(clock.Now().UnixNano()), 1))
	acked, midWrite := 0, 0
	for i := range kills {
		acked = killAfterAcks(t, rng, helper(t, "ack", s.Dir(), "k"), acked)
		if _, err := os.Stat(filepath.Join(s.Dir(), tmpFile)); err == nil {
			midWrite++ // killed between creating the temp file and the rename
		}
		st, err := s.Read(ctx)
		if err != nil {
			t.Fatalf("kill %d: state does not read: %v", i, err)
		}
		got := counter(st, "k")
		if got < acked {
			t.Fatalf("kill %d: counter %d but %d was acknowledged", i, got, acked)
		}
		// The records and the archive agree with the index.
		if got > 0 {
			ct := st.Task(ackCounterTask)
			all, err := st.AllTasks()
			if err != nil || ct == nil || ct.Answer != strconv.Itoa(got) || len(all) != got+1 {
				t.Fatalf("kill %d: counter %d, but the counter task is %+v and %d tasks are listed (%v)", i, got, ct, len(all), err)
			}
		}
	}
	// The store still works: the lock died with its holders, leftovers are reused.
	mustUpdate(t, s, func(st *State) error { setCounter(st, "k", counter(st, "k")+1); return nil })
	st, err := s.Read(ctx)
	if err != nil || counter(st, "k") <= acked {
		t.Fatalf("after the kills: %v, %v", st, err)
	}
	t.Logf("%d kills (%d in the middle of a write), %d updates acknowledged", kills, midWrite, acked)
}

func TestUpdatePanicReleasesLock(t *testing.T) {
	s := openTemp(t)
	s.LockTimeout = 5 * time.Second
	func() {
		defer func() { recover() }()
		s.Update(t.Context(), func(*State) error { panic("boom") })
	}()
	mustUpdate(t, s, func(st *State) error { setCounter(st, "a", 1); return nil })
}

// Without inotify, Watch looks at the files: an update is still signalled.
func TestPollWatch(t *testing.T) {
	s := openTemp(t)
	mustUpdate(t, s, func(st *State) error { setCounter(st, "a", 1); return nil })
	ch := s.pollWatch(t.Context())
	mustUpdate(t, s, func(st *State) error { setCounter(st, "a", 2); return nil })
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("no signal for an update")
	}
}

// killAfterAcks starts cmd, a helper that prints each value it had
// acknowledged, lets it acknowledge 0 to 3, then kills it a random few
// hundred microseconds later (often in the middle of a write), and
// returns the last value it acknowledged (acked if none).
func killAfterAcks(t *testing.T, rng *rand.Rand, cmd *exec.Cmd, acked int) int {
	t.Helper()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	for range rng.IntN(4) {
		if !sc.Scan() {
			break
		}
		acked, _ = strconv.Atoi(sc.Text())
	}
	time.Sleep(time.Duration(rng.IntN(1500)) * time.Microsecond)
	cmd.Process.Signal(syscall.SIGKILL)
	for sc.Scan() {
		acked, _ = strconv.Atoi(sc.Text())
	}
	cmd.Wait()
	return acked
}
