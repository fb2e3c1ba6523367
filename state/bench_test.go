package state

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
)

// BenchmarkUpdate measures updates per second with 1, 8 and 64 concurrent
// writers, each with its own Store (so its own lock file descriptor: the
// flock contention is the same as between processes). "baseline" is the
// bare durable write (temp file, fsync, rename, directory fsync) with no
// lock and no read, measured in the same run: the ratio to it is the cost of
// the locking and reading.
func BenchmarkUpdate(b *testing.B) {
	b.Run("baseline", func(b *testing.B) {
		s, err := Open(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		data := []byte(`{"version":1,"generation":1,"projects":{},"tasks":{}}` + "\n")
		b.ResetTimer()
		for b.Loop() {
			if err := s.writeFile(data, &pendingSync{}); err != nil {
				b.Fatal(err)
			}
			if err := s.syncDir(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "updates/s")
	})
	for _, writers := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			dir := b.TempDir()
			stores := make([]*Store, writers)
			for i := range stores {
				s, err := Open(dir)
				if err != nil {
					b.Fatal(err)
				}
				s.LockTimeout = 10 * time.Minute
				stores[i] = s
			}
			ctx := b.Context()
			b.ResetTimer()
			start := clock.Now()
			var wg sync.WaitGroup
			for w, s := range stores {
				n := b.N / writers
				if w < b.N%writers {
					n++
				}
				name := fmt.Sprintf("w%02d", w)
				wg.Go(func() {
					for range n {
						err := s.Update(ctx, func(st *State) error {
							setCounter(st, name, counter(st, name)+1)
							return nil
						})
						if err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/clock.Since(start).Seconds(), "updates/s")
		})
	}
	// The same with 1, 8 and 64 real processes (the test binary re-executed),
	// the way runner processes contend: here the gate in front of the flock
	// does not help, the kernel's flock queue does all the work. The
	// processes start first and wait on stdin, so the start-up is not
	// timed.
	for _, procs := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("procs=%d", procs), func(b *testing.B) { benchProcs(b, procs, "bench") })
	}
	// The same through UpdateTask, as runner's status and turn writes go:
	// each process changes its own task, and a change made while another
	// process holds the lock is handed to it (group commit).
	for _, procs := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("taskprocs=%d", procs), func(b *testing.B) { benchProcs(b, procs, "taskbench") })
	}
}

func benchProcs(b *testing.B, procs int, mode string) {
	{
		dir := b.TempDir()
		cmds := make([]*exec.Cmd, procs)
		gos := make([]io.Closer, procs)
		for i := range cmds {
			n := b.N / procs
			if i < b.N%procs {
				n++
			}
			cmd := helper(b, mode, dir, fmt.Sprintf("w%02d", i), strconv.Itoa(n))
			in, err := cmd.StdinPipe()
			if err != nil {
				b.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
			cmds[i], gos[i] = cmd, in
		}
		time.Sleep(100 * time.Millisecond) // let them reach the stdin read
		b.ResetTimer()
		start := clock.Now()
		for _, in := range gos {
			in.Close()
		}
		for i, cmd := range cmds {
			if err := cmd.Wait(); err != nil {
				b.Fatalf("writer %d: %v: %s", i, err, cmd.Stderr)
			}
		}
		elapsed := clock.Since(start)
		b.StopTimer()
		s, err := Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		st, err := s.Read(b.Context())
		if err != nil {
			b.Fatal(err)
		}
		if mode == "bench" && st.Generation != uint64(b.N) {
			b.Fatalf("generation %d after %d updates", st.Generation, b.N)
		}
		if mode == "taskbench" {
			total := 0
			for _, t := range st.Tasks {
				total += t.HandlingHops
			}
			if total != b.N {
				b.Fatalf("%d task updates applied, want %d", total, b.N)
			}
			b.ReportMetric(float64(b.N)/float64(st.Generation-uint64(procs)), "updates/write")
		}
		b.ReportMetric(float64(b.N)/elapsed.Seconds(), "updates/s")
	}
}

// BenchmarkNewTaskBurst: 50 processes, started first and released at once,
// each recording one new task through an Update of its own, as a burst of
// dispatches records theirs (runner's recordTask): all serialised on the
// lock, each a fresh process that reads the index and every record it
// names before it writes (4 fsyncs). ms/write is the burst's time over its
// 50 writes. With 500 running tasks in the index before, every writer
// reads 500 records more: the write's cost grows with the active tasks
// (docs/benchmarks.md, "The state's write path under a burst").
func BenchmarkNewTaskBurst(b *testing.B) {
	const procs = 50
	for _, before := range []int{0, 500} {
		b.Run(fmt.Sprintf("index=%d", before), func(b *testing.B) {
			var total time.Duration
			for range b.N {
				total += newTaskBurst(b, before, procs)
			}
			b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N*procs), "ms/write")
		})
	}
}

// newTaskBurst times one burst of procs newtask writers into a state that
// holds before running tasks, and checks that every task was recorded.
func newTaskBurst(b *testing.B, before, procs int) time.Duration {
	b.StopTimer()
	defer b.StartTimer()
	s, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Update(b.Context(), func(st *State) error {
		for i := range before {
			id := fmt.Sprintf("t_pre%05d", i)
			st.Tasks[id] = &Task{ID: id, Project: "p", Dir: "/d", Agent: "sim", Text: "a task before the burst", Status: StatusRunning, Created: clock.Now().UTC()}
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	settleDisk(b, s)
	cmds := make([]*exec.Cmd, procs)
	ins := make([]io.Closer, procs)
	for i := range cmds {
		cmds[i] = helper(b, "newtask", s.Dir())
		if ins[i], err = cmds[i].StdinPipe(); err != nil {
			b.Fatal(err)
		}
		if err := cmds[i].Start(); err != nil {
			b.Fatal(err)
		}
	}
	time.Sleep(100 * time.Millisecond) // let them reach the stdin read
	b.StartTimer()
	start := clock.Now()
	for _, in := range ins {
		in.Close()
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			b.Fatalf("writer %d: %v: %s", i, err, cmd.Stderr)
		}
	}
	elapsed := clock.Since(start)
	b.StopTimer()
	st, err := s.Read(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	if len(st.Tasks) != before+procs {
		b.Fatalf("%d tasks after a burst of %d into %d", len(st.Tasks), procs, before)
	}
	return elapsed
}

// BenchmarkReadList10k reads a state that retains 10 000 tasks (most of
// them finished, so archived) and lists them all in order, as
// `runner ps --all --json` does, in a fresh process: no record or segment
// cached. "full" tasks carry a status history, three turns and a result
// tail; "lean" ones only what a listing shows. B/task is what the index and
// the archive segments take per task.
func BenchmarkReadList10k(b *testing.B) {
	for _, lean := range []bool{false, true} {
		name := "full"
		if lean {
			name = "lean"
		}
		b.Run(name, func(b *testing.B) {
			s := retainedStore(b, 10000, lean)
			for b.Loop() {
				forgetCaches(s)
				st, err := s.Read(b.Context())
				if err != nil {
					b.Fatal(err)
				}
				all, err := st.AllTasks()
				if err != nil {
					b.Fatal(err)
				}
				active := 0
				for _, t := range all {
					if t.Status.IsActive() {
						active++
					}
				}
				if len(all) != 10000 || active == 0 {
					b.Fatalf("listed %d tasks, %d active", len(all), active)
				}
			}
			b.ReportMetric(float64(indexBytes(b, s))/10000, "B/task")
		})
	}
}

// forgetCaches drops the process's cached records and segments, as a
// new runner process starts.
func forgetCaches(s *Store) {
	records.forget(s.Dir())
	segments.mu.Lock()
	clear(segments.m)
	segments.mu.Unlock()
}

// indexBytes is the size of state.json and the archive segments.
func indexBytes(b *testing.B, s *Store) int64 {
	var n int64
	for _, p := range append([]string{s.Path()}, globOrFail(b, filepath.Join(s.Dir(), archiveDir, "*.json"))...) {
		fi, err := os.Stat(p)
		if err != nil {
			b.Fatal(err)
		}
		n += fi.Size()
	}
	return n
}

func globOrFail(b *testing.B, pattern string) []string {
	m, err := filepath.Glob(pattern)
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// retainedStore returns a store retaining n tasks as fill makes them,
// their windows closed (so the finished ones beyond the newest are
// archived), written as runner would: a few at a time.
func retainedStore(b *testing.B, n int, lean bool) *Store {
	s, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	s.Retention = 0
	st := New()
	fill(st, n, lean)
	list := st.TaskList()
	const batch = 500
	for i := 0; i < len(list); i += batch {
		part := list[i:min(i+batch, len(list))]
		if err := s.Update(b.Context(), func(st *State) error {
			for _, t := range part {
				if t.Status.IsTerminal() {
					t.Reclaimed = t.Ended.Add(time.Second)
				}
				st.Tasks[t.ID] = t
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
	settleDisk(b, s)
	return s
}

// settleDisk flushes what the set-up wrote (thousands of files) before the
// timing starts: their write-back would otherwise slow the measured fsyncs.
func settleDisk(b *testing.B, s *Store) {
	if err := syncFS(s.Dir()); err != nil {
		b.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
}

// fill adds n realistic task records: most finished, a few running, each
// with a status history, a few turns and a result tail.
func fill(st *State, n int, lean bool) {
	base := clock.Now().Add(-time.Hour)
	for i := range n {
		id := st.NewTaskID()
		at := base.Add(time.Duration(i) * time.Millisecond)
		code := 0
		t := &Task{
			ID: id, Project: fmt.Sprintf("proj%d", i%7), Dir: fmt.Sprintf("/home/me/src/proj%d", i%7),
			Agent: "claude", Text: "Fix the flaky test in the payment service and explain what was wrong.\n" + strings.Repeat("More detail. ", 8),
			Tmux:   TmuxTarget{Socket: "runner", Session: "proj", Window: id, Pane: fmt.Sprintf("%%%d", i)},
			Source: SourceUser, Created: at, SupervisorPID: 10000 + i,
			SnapshotRef: "refs/runner/snapshots/" + id, Delivery: "confirmed",
		}
		if lean {
			t.Text, t.Tmux, t.SnapshotRef, t.Delivery = "Fix the flaky test in the payment service", TmuxTarget{}, "", ""
			t.Status, t.Started = StatusRunning, at
			if i%50 != 0 {
				t.Status, t.Ended = StatusDone, at.Add(time.Minute)
			}
			st.Tasks[id] = t
			continue
		}
		for _, s := range []Status{StatusQueued, StatusStarting, StatusReady, StatusRunning} {
			t.SetStatus(s, at, "")
		}
		for k := range 3 {
			t.AddTurn(at, fmt.Sprintf("edited payment_test.go and ran go test (%d)", k))
		}
		if i%50 != 0 {
			t.SetStatus(StatusDone, at.Add(time.Minute), "ready marker, no busy marker")
			t.ExitCode = &code
			t.ResultTail = strings.Repeat("The test raced on a shared map; fixed with a mutex.\n", 3)
		}
		st.Tasks[id] = t
	}
}

// BenchmarkRetained is the cost of one update against how many finished
// tasks the state retains: 10 (the baseline) or 10 000, all else equal (five
// running tasks). "counter" changes a hot field only (the index is
// rewritten); "turn" adds a turn to a running task (its record is written
// too). "warm" is a supervisor's steady state (its process has the
// records cached); "cold" a fresh process for every update.
func BenchmarkRetained(b *testing.B) {
	for _, n := range []int{10, 10000} {
		for _, op := range []string{"counter", "turn"} {
			for _, cold := range []bool{false, true} {
				temp := "warm"
				if cold {
					temp = "cold"
				}
				b.Run(fmt.Sprintf("retained=%d/%s/%s", n, op, temp), func(b *testing.B) {
					s := retainedStore(b, 0, false)
					st := New()
					fill(st, n, false)
					if err := s.Update(b.Context(), func(x *State) error {
						for _, t := range st.Tasks {
							if t.Status.IsTerminal() {
								t.Reclaimed = t.Ended.Add(time.Second)
							} else {
								t.Status = StatusDone // only the five below run
								t.Ended, t.Reclaimed = t.Created, t.Created
							}
							x.Tasks[t.ID] = t
						}
						for i := range 5 {
							id := fmt.Sprintf("t_running%d", i)
							x.Tasks[id] = &Task{ID: id, Dir: "/d", Agent: "claude", Status: StatusRunning, Created: clock.Now()}
						}
						return nil
					}); err != nil {
						b.Fatal(err)
					}
					settleDisk(b, s)
					i := 0
					for b.Loop() {
						if cold {
							forgetCaches(s)
						}
						i++
						err := s.Update(b.Context(), func(st *State) error {
							if op == "counter" {
								setCounter(st, "w", counter(st, "w")+1)
							} else {
								st.Tasks["t_running1"].AddTurn(clock.Now(), fmt.Sprintf("turn %d", i))
							}
							return nil
						})
						if err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "updates/s")
				})
			}
		}
	}
}

// BenchmarkEventWrites measures updates that each change a task's status
// (so each appends an event line), in the directory RUNNER_BENCH_EVENTS_DIR
// names (scripts/bench-events.sh starts followers on it) or a fresh one.
func BenchmarkEventWrites(b *testing.B) {
	dir := os.Getenv("RUNNER_BENCH_EVENTS_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	s, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	ctx := b.Context()
	id := RandomTaskID()
	if err := s.Update(ctx, func(st *State) error {
		st.Tasks[id] = &Task{ID: id, Agent: "sim", Dir: "/tmp", Status: StatusRunning, Created: clock.Now()}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	// RUNNER_BENCH_EVENTS_PACE spaces the updates (for a reader to keep
	// up when latency is measured).
	pace, _ := time.ParseDuration(os.Getenv("RUNNER_BENCH_EVENTS_PACE"))
	b.ResetTimer()
	i := 0
	var busy time.Duration // the updates' own time, without the pace
	for b.Loop() {
		time.Sleep(pace)
		start := clock.Now()
		i++
		next := StatusRunning
		if i%2 == 0 {
			next = StatusNeedsInput
		}
		if err := s.Update(ctx, func(st *State) error {
			return st.Task(id).SetStatus(next, clock.Now(), fmt.Sprintf("step %d", i))
		}); err != nil {
			b.Fatal(err)
		}
		busy += clock.Since(start)
	}
	b.ReportMetric(float64(busy.Microseconds())/1000/float64(b.N), "ms/update")
}

// busyStore is a store whose index holds n tasks finished in the last
// hours, their windows not closed yet (so none is archived), and one
// running task: a user's state after a busy two hours of fan-outs.
func busyStore(b *testing.B, n int) *Store {
	s := openTemp(b)
	now := clock.Now().UTC()
	mustUpdate(b, s, func(st *State) error {
		for i := range n {
			id := fmt.Sprintf("t_bz%06d", i)
			at := now.Add(-time.Duration(n-i) * 10 * time.Second)
			tk := finishedTask(id, at)
			tk.Reclaimed = time.Time{}
			tk.Tmux = TmuxTarget{Socket: "/tmp/rbd123/s", Session: "dir-proj-019acfdb", Window: id, Pane: "%1234"}
			tk.SnapshotRef = "refs/runner/snapshots/" + id
			tk.Spend = Spend{Input: 100, Output: 10, Turns: 1}
			st.Tasks[id] = tk
		}
		st.Tasks["t_live0000"] = &Task{ID: "t_live0000", Dir: "/d", Agent: "sim", Text: "x", Status: StatusRunning, Created: now}
		return nil
	})
	return s
}

// BenchmarkBusyIndex: with 500 finished tasks in the index, an index-only
// update of one task (a delivery's, an end's) and a ReadIndex that
// decodes the file (a command's first look): what each of a dispatch's
// five writes and its first read cost when the day was busy.
func BenchmarkBusyIndex(b *testing.B) {
	s := busyStore(b, 500)
	ctx := context.Background()
	// As runner runs: the tests' check of each kept index against a
	// decode would cost a decode.
	verifyDecoded = false
	b.Cleanup(func() { verifyDecoded = true })
	b.Run("UpdateIndexOne", func(b *testing.B) {
		for b.Loop() {
			if err := s.UpdateIndex(ctx, func(st *State) error {
				t := st.Task("t_live0000")
				t.TurnCount++
				return nil
			}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ReadIndex", func(b *testing.B) {
		for b.Loop() {
			lastIndex.forget()
			if _, err := s.ReadIndex(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}
