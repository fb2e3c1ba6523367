package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/filelock"
)

// seedTasks makes tasks with these ids, running.
func seedTasks(t *testing.T, s *Store, ids ...string) {
	t.Helper()
	mustUpdate(t, s, func(st *State) error {
		for _, id := range ids {
			st.Tasks[id] = &Task{ID: id, Dir: "/d", Agent: "sim", Status: StatusRunning, Created: clock.Now().UTC()}
		}
		return nil
	})
}

// holdLock runs an Update of s that holds the lock until release is
// closed; it returns once the lock is held, and wait waits for the
// Update's end.
func holdLock(t *testing.T, s *Store, fn func(*State)) (release func(), wait func() error) {
	t.Helper()
	held, rel := make(chan struct{}), make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		errc <- s.Update(t.Context(), func(st *State) error {
			close(held)
			<-rel
			if fn != nil {
				fn(st)
			}
			return nil
		})
	}()
	<-held
	var once sync.Once
	return func() { once.Do(func() { close(rel) }) }, func() error { return <-errc }
}

// waitQueued waits until n changes wait in s's queue.
func waitQueued(t *testing.T, s *Store, n int) {
	t.Helper()
	for deadline := clock.Now().Add(10 * time.Second); clock.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if len(queueFiles(t, s, ".op")) == n {
			return
		}
	}
	t.Fatalf("%d changes never queued: %v", n, queueFiles(t, s, ""))
}

// queueFiles lists the queue's files ending in suffix.
func queueFiles(t *testing.T, s *Store, suffix string) []string {
	t.Helper()
	ents, err := os.ReadDir(s.path(opsDir))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), suffix) {
			names = append(names, e.Name())
		}
	}
	return names
}

// pending lists the queue's ops, claims and half-written ops (not the
// inboxes, which stay while their processes live).
func pending(t *testing.T, s *Store) []string {
	t.Helper()
	var names []string
	for _, suffix := range []string{".op", ".claim", ".tmp"} {
		names = append(names, queueFiles(t, s, suffix)...)
	}
	return names
}

func hops(t *testing.T, s *Store, id string) int {
	t.Helper()
	st, err := s.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return st.Tasks[id].HandlingHops
}

// handOverHop has owner add one to t_a's HandlingHops through UpdateTask
// while s holds the lock (so the change is handed over), lets the lock go
// and returns how many times the change's fn ran.
func handOverHop(t *testing.T, s, owner *Store) int {
	t.Helper()
	release, wait := holdLock(t, s, nil)
	runs := 0
	done := make(chan error, 1)
	go func() {
		done <- owner.UpdateTask(t.Context(), "t_a", func(x *Task) error { runs++; x.HandlingHops++; return nil })
	}()
	waitQueued(t, s, 1)
	release()
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	return runs
}

func TestUpdateTaskHandedToHolder(t *testing.T) {
	holder := openTemp(t)
	seedTasks(t, holder, "t_a", "t_b", "t_c")
	gen := func() uint64 {
		st, err := holder.Read(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return st.Generation
	}
	before := gen()
	release, wait := holdLock(t, holder, func(st *State) { st.Tasks["t_a"].Level = 7 })
	// Two other "processes" (stores with their own lock descriptors)
	// change their tasks while the lock is held: their changes queue.
	var wg sync.WaitGroup
	for _, id := range []string{"t_b", "t_c"} {
		other, err := Open(holder.Dir())
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			if err := other.UpdateTask(t.Context(), id, func(x *Task) error { x.HandlingHops += 3; return nil }); err != nil {
				t.Error(err)
			}
		})
	}
	waitQueued(t, holder, 2)
	release()
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	// The holder looked at the queue before its own update, when it was
	// still empty; letting go of the lock, it passed the lead to the
	// oldest change's owner, which applied both in one write.
	if g := gen(); g != before+2 {
		t.Errorf("generation %d, want %d", g, before+2)
	}
	st, err := holder.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.applied) != 2 {
		t.Errorf("the last write applied %v, want both changes", st.applied)
	}
	if st.Tasks["t_a"].Level != 7 || st.Tasks["t_b"].HandlingHops != 3 || st.Tasks["t_c"].HandlingHops != 3 {
		t.Errorf("after the batch: a.level=%d b.hops=%d c.hops=%d", st.Tasks["t_a"].Level, st.Tasks["t_b"].HandlingHops, st.Tasks["t_c"].HandlingHops)
	}
	if left := pending(t, holder); len(left) != 0 {
		t.Errorf("the queue keeps %v", left)
	}
}

// A change read from a task that moved on meanwhile is not applied over
// it: its owner makes it again under the lock, from the task as it is.
func TestUpdateTaskConflict(t *testing.T) {
	s := openTemp(t)
	seedTasks(t, s, "t_a")
	owner, err := Open(s.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if err := owner.UpdateTask(t.Context(), "t_a", func(x *Task) error { x.HandlingHops = 1; return nil }); err != nil {
		t.Fatal(err)
	}
	// Someone else changes the task: the owner's memory of it is stale.
	mustUpdate(t, s, func(st *State) error { st.Tasks["t_a"].HandlingHops = 10; return nil })
	runs := handOverHop(t, s, owner)
	if h := hops(t, s, "t_a"); h != 11 {
		t.Errorf("hops %d, want 11 (10 + 1: the stale change not applied)", h)
	}
	if runs != 2 {
		t.Errorf("fn ran %d times, want 2 (on the stale copy, then under the lock)", runs)
	}
}

// A process's own Update of a task (a supervisor's count of a turn)
// leaves what UpdateTask remembered of it stale: it is forgotten, so the
// next change handed over starts from the task as it is, and the holder
// applies it (fn once, no conflict redone through the lock).
func TestUpdateTaskAfterOwnUpdate(t *testing.T) {
	s := openTemp(t)
	seedTasks(t, s, "t_a")
	owner, err := Open(s.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if err := owner.UpdateTask(t.Context(), "t_a", func(x *Task) error { x.HandlingHops = 1; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := owner.Update(t.Context(), func(st *State) error { st.Task("t_a").HandlingHops = 10; return nil }); err != nil {
		t.Fatal(err)
	}
	runs := handOverHop(t, s, owner)
	if h := hops(t, s, "t_a"); h != 11 {
		t.Errorf("hops %d, want 11", h)
	}
	if runs != 1 {
		t.Errorf("fn ran %d times, want 1 (handed over from the task as its own Update left it, applied by the holder)", runs)
	}
}

// A change that waits past the LockTimeout is withdrawn: ErrBusy, and it
// is never applied later.
func TestUpdateTaskWithdrawnAfterTimeout(t *testing.T) {
	s := openTemp(t)
	seedTasks(t, s, "t_a")
	unlock, ok := filelock.TryLock(s.path(LockFile)) // a holder that never answers
	if !ok {
		t.Fatal("lock not free")
	}
	owner, err := Open(s.Dir())
	if err != nil {
		t.Fatal(err)
	}
	owner.LockTimeout = 300 * time.Millisecond
	err = owner.UpdateTask(t.Context(), "t_a", func(x *Task) error { x.HandlingHops = 5; return nil })
	unlock()
	if !errors.Is(err, ErrBusy) {
		t.Fatalf("err = %v, want ErrBusy", err)
	}
	mustUpdate(t, s, func(st *State) error { st.Tasks["t_a"].Level = 1; return nil })
	if h := hops(t, s, "t_a"); h != 0 {
		t.Errorf("the withdrawn change was applied: hops %d", h)
	}
	if left := pending(t, s); len(left) != 0 {
		t.Errorf("the queue keeps %v", left)
	}
}

// A claim left by a holder that died is settled by the next holder:
// never applied twice, answered as done only if that holder's write named
// it.
func TestUpdateTaskStaleClaims(t *testing.T) {
	s := openTemp(t)
	seedTasks(t, s, "t_a", "t_b")
	st, err := s.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(s.path(opsDir), 0o700); err != nil {
		t.Fatal(err)
	}
	box, err := openInbox(s.path(opsDir))
	if err != nil {
		t.Fatal(err)
	}
	claimOf := func(id string, applied bool) chan byte {
		base, _ := json.Marshal(st.Tasks[id])
		next := *st.Tasks[id]
		next.HandlingHops = 4
		nb, _ := json.Marshal(&next)
		name := fmt.Sprintf("%020d-%s-%s", 1, box.id, id)
		if applied { // the dead holder wrote it, and named it in the index
			mustUpdate(t, s, func(x *State) error {
				x.Tasks[id].HandlingHops = 4
				x.applied = []string{name}
				return nil
			})
		}
		data, _ := json.Marshal(taskOp{Task: id, Base: base, New: nb})
		if err := os.WriteFile(filepath.Join(s.path(opsDir), name+".claim"), data, 0o600); err != nil {
			t.Fatal(err)
		}
		return box.expect(name)
	}
	fa := claimOf("t_a", true)
	fb := claimOf("t_b", false)
	mustUpdate(t, s, func(x *State) error { x.Tasks["t_a"].Level = 2; return nil })
	for _, c := range []struct {
		ch   chan byte
		want byte
	}{{fa, answerApplied}, {fb, answerConflict}} {
		select {
		case got := <-c.ch:
			if got != c.want {
				t.Errorf("answer %q, want %q", got, c.want)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("no answer, want %q", c.want)
		}
	}
	if a, b := hops(t, s, "t_a"), hops(t, s, "t_b"); a != 4 || b != 0 {
		t.Errorf("hops a=%d b=%d, want 4 and 0 (nothing applied twice, nothing stale applied)", a, b)
	}
	if left := queueFiles(t, s, ".claim"); len(left) != 0 {
		t.Errorf("claims left: %v", left)
	}
}

// Writers through UpdateTask and through Update, in many processes at
// once: every change lands exactly once.
func TestConcurrentTaskProcesses(t *testing.T) {
	const taskProcs, closureProcs, each = 32, 8, 100
	s := openTemp(t)
	var wg sync.WaitGroup
	errs := make(chan error, taskProcs+closureProcs)
	start := func(mode, name string) {
		cmd := helper(t, mode, s.Dir(), name, strconv.Itoa(each))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			if err := cmd.Wait(); err != nil {
				errs <- fmt.Errorf("%s %s: %v: %s", mode, name, err, cmd.Stderr)
			}
		})
	}
	for i := range taskProcs {
		start("taskcount", fmt.Sprintf("w%02d", i))
	}
	for i := range closureProcs {
		start("count", fmt.Sprintf("c%02d", i))
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	st, err := s.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for i := range taskProcs {
		if tk := st.Tasks[fmt.Sprintf("t_w%02d", i)]; tk == nil || tk.HandlingHops != each {
			t.Errorf("task writer %d: %+v, want %d changes", i, tk, each)
		}
	}
	for i := range closureProcs {
		if c := counter(st, fmt.Sprintf("c%02d", i)); c != each {
			t.Errorf("closure writer %d: counter %d, want %d", i, c, each)
		}
	}
	writes := st.Generation
	t.Logf("%d changes in %d writes", (taskProcs+closureProcs)*each+taskProcs, writes)
	if left := pending(t, s); len(left) != 0 {
		t.Errorf("the queue keeps %v", left)
	}
}

// Writers killed at random moments (waiting in the queue, holding the
// lock with claims, answering): every acknowledged change survives, none
// is applied twice, and a writer beside them loses nothing.
func TestKilledTaskWriters(t *testing.T) {
	const kills, steady = 100, 400
	s := openTemp(t)
	rng := rand.New(rand.NewPCG(uint64(clock.Now().UnixNano()), 2))
	bg := helper(t, "taskcount", s.Dir(), "steady", strconv.Itoa(steady))
	if err := bg.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bg.Process.Kill() }) // if the test stops early
	acked := 0
	for i := range kills {
		acked = killAfterAcks(t, rng, helper(t, "taskack", s.Dir(), "k", "0"), acked)
		st, err := s.Read(t.Context())
		if err != nil {
			t.Fatalf("kill %d: state does not read: %v", i, err)
		}
		if k := st.Tasks["t_k"]; k != nil && k.HandlingHops < acked {
			t.Fatalf("kill %d: hops %d but %d was acknowledged", i, k.HandlingHops, acked)
		}
	}
	waited := make(chan error, 1)
	go func() { waited <- bg.Wait() }()
	select {
	case err := <-waited:
		if err != nil {
			t.Fatalf("the steady writer: %v: %s", err, bg.Stderr)
		}
	case <-time.After(time.Minute):
		bg.Process.Signal(syscall.SIGQUIT) // its goroutines, on its stderr
		<-waited
		t.Fatalf("the steady writer hangs: %s", bg.Stderr)
	}
	mustUpdate(t, s, func(st *State) error { return nil })
	if h := hops(t, s, "t_steady"); h != steady {
		t.Errorf("the steady writer's task: %d changes, want %d", h, steady)
	}
	if left := queueFiles(t, s, ".claim"); len(left) != 0 {
		t.Errorf("claims left after the next holder: %v", left)
	}
	t.Logf("%d kills, %d changes acknowledged", kills, acked)
}

// newQueued is a new task as a dispatch records it: queued, now.
func newQueued(id string) *Task {
	t := &Task{ID: id, Dir: "/d", Agent: "sim", Created: clock.Now().UTC()}
	_ = t.SetStatus(StatusQueued, t.Created, "dispatched")
	return t
}

// TestCreateTaskHandedToHolder: new tasks recorded while another process
// holds the lock go to it as data, and are written together, each given
// its own range of ports there; no caller's own admission runs.
func TestCreateTaskHandedToHolder(t *testing.T) {
	holder := openTemp(t)
	seedTasks(t, holder, "t_a")
	free := func(int) bool { return false }
	holder.PortBusy = free
	gen := func() uint64 {
		st, err := holder.Read(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return st.Generation
	}
	before := gen()
	release, wait := holdLock(t, holder, nil)
	ids := []string{"t_new1", "t_new2", "t_new3"}
	made := make([]*Task, len(ids))
	var wg sync.WaitGroup
	var directRuns sync.Map
	for i, id := range ids {
		other, err := Open(holder.Dir())
		if err != nil {
			t.Fatal(err)
		}
		other.PortBusy = free
		made[i] = newQueued(id)
		a := Admission{Now: clock.Now(), PortBase: 20000, PortCount: 10, Probe: true}
		wg.Go(func() {
			direct := func(st *State) error {
				directRuns.Store(id, true)
				return st.AllocatePorts(made[i], 20000, 10, free)
			}
			if err := other.CreateTask(t.Context(), made[i], a, direct); err != nil {
				t.Error(err)
			}
		})
	}
	waitQueued(t, holder, len(ids))
	release()
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	// The holder's own update changed nothing (no write); letting go of
	// the lock, it passed the lead to the oldest owner, which recorded the
	// three in one write.
	if g := gen(); g != before+1 {
		t.Errorf("generation %d, want %d: one write for the three new tasks", g, before+1)
	}
	directRuns.Range(func(k, _ any) bool { t.Errorf("%s was recorded by its own process, not handed over", k); return true })
	st, err := holder.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]string{}
	for i, id := range ids {
		rec := st.Tasks[id]
		if rec == nil || rec.Status != StatusQueued {
			t.Fatalf("%s recorded as %+v", id, rec)
		}
		if rec.Ports.IsZero() || rec.Ports != made[i].Ports {
			t.Errorf("%s: ports %v recorded, %v told its process", id, rec.Ports, made[i].Ports)
		}
		if other, ok := seen[rec.Ports.First]; ok {
			t.Errorf("%s and %s both got ports from %d", id, other, rec.Ports.First)
		}
		seen[rec.Ports.First] = id
	}
	// The owner that served the queue answers the others before it
	// removes their claims: they may return first.
	for deadline := clock.Now().Add(10 * time.Second); len(pending(t, holder)) != 0; time.Sleep(time.Millisecond) {
		if clock.Now().After(deadline) {
			t.Fatalf("the queue keeps %v", pending(t, holder))
		}
	}
}

// TestCreateTaskNotAdmitted: a new task the holder does not admit (its
// tree's bound reached; a range of ports to probe with no probe there; a
// holder that knows no Admission, which finds no such task) is recorded,
// or refused, by its own process's admission, which says why.
func TestCreateTaskNotAdmitted(t *testing.T) {
	s := openTemp(t)
	seedTasks(t, s, "t_root")
	refused := errors.New("refused: the tree is full")
	for _, tc := range []struct {
		name       string
		a          Admission
		holderBusy func(int) bool
		direct     error // what the process's own admission says
	}{
		{"tree full", Admission{Parent: "t_root", MaxTree: 1, Now: clock.Now()}, nil, refused},
		{"no probe at the holder", Admission{PortBase: 20000, PortCount: 10, Probe: true, Now: clock.Now()}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.PortBusy = tc.holderBusy
			release, wait := holdLock(t, s, nil)
			owner, err := Open(s.Dir())
			if err != nil {
				t.Fatal(err)
			}
			owner.PortBusy = tc.holderBusy
			id := "t_" + strings.ReplaceAll(tc.name, " ", "")
			task := newQueued(id)
			task.Parent = tc.a.Parent
			ran := false
			done := make(chan error, 1)
			go func() {
				done <- owner.CreateTask(t.Context(), task, tc.a, func(st *State) error {
					ran = true
					if tc.direct != nil {
						return tc.direct
					}
					st.Tasks[id] = task
					return nil
				})
			}()
			waitQueued(t, s, 1)
			release()
			if err := wait(); err != nil {
				t.Fatal(err)
			}
			err = <-done
			if !ran || !errors.Is(err, tc.direct) && err != tc.direct {
				t.Fatalf("own admission ran %v, error %v; want it run, and its error %v", ran, err, tc.direct)
			}
			st, _ := s.Read(t.Context())
			if got := st.Tasks[id] != nil; got != (tc.direct == nil) {
				t.Errorf("recorded %v, want %v", got, tc.direct == nil)
			}
		})
	}
	// A holder that knows no Admission reads the op as a change of a task
	// the index lacks: not applied.
	dir := t.TempDir()
	op, _ := json.Marshal(taskOp{Task: "t_x", New: json.RawMessage(`{"id":"t_x","status":"queued"}`)})
	path := filepath.Join(dir, "x.claim")
	if err := os.WriteFile(path, op, 0o600); err != nil {
		t.Fatal(err)
	}
	st := New()
	if applyOp(st, path, nil) || st.Tasks["t_x"] != nil {
		t.Error("a new task without its Admission was applied")
	}
}
