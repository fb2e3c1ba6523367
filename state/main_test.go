package state

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/testenv"
)

// The test binary doubles as the writer processes of the multi-process
// tests: with STATE_TEST_HELPER set it runs a helper instead of the tests.
func TestMain(m *testing.M) {
	switch os.Getenv("STATE_TEST_HELPER") {
	case "":
		// Every index a write keeps for the next load is checked
		// against a decode of its bytes.
		verifyDecoded = true
		os.Exit(testenv.Main(m))
	case "count":
		// count DIR NAME N: increment project NAME's counter N times.
		n, _ := strconv.Atoi(os.Args[3])
		helperCount(os.Args[1], os.Args[2], n, false)
	case "bench":
		// bench DIR NAME N: like count, but start only once stdin is
		// closed, so a benchmark can time the updates without the
		// process start-up.
		io.Copy(io.Discard, os.Stdin)
		n, _ := strconv.Atoi(os.Args[3])
		helperCount(os.Args[1], os.Args[2], n, false)
	case "newtask":
		// newtask DIR: once stdin is closed, record one new task through
		// an Update of its own, as a dispatch records its task.
		io.Copy(io.Discard, os.Stdin)
		helperNewTask(os.Args[1])
	case "newtaskkill":
		// newtaskkill DIR: record one new task as newtask does, print
		// its id once the write returned, and wait to be killed.
		helperNewTaskKill(os.Args[1])
	case "ack":
		// ack DIR NAME: increment forever, printing each acknowledged value.
		helperCount(os.Args[1], os.Args[2], -1, true)
	case "taskcount", "taskbench", "taskack":
		// taskcount DIR NAME N: increment task t_NAME's HandlingHops N
		// times through UpdateTask (creating the task first); taskbench
		// likewise once stdin is closed; taskack forever, printing each
		// acknowledged value.
		mode := os.Getenv("STATE_TEST_HELPER")
		n, _ := strconv.Atoi(os.Args[3])
		if mode == "taskack" {
			n = -1
		}
		helperTaskCount(os.Args[1], os.Args[2], n, mode)
	case "patient":
		// patient DIR NAME: record task t_NAME once, with a lock timeout
		// of 20ms and a BusyWait of 10 minutes, saying "waiting" on
		// stderr when it waits past the timeout.
		helperPatient(os.Args[1], os.Args[2])
	default:
		fmt.Fprintln(os.Stderr, "unknown STATE_TEST_HELPER")
		os.Exit(3)
	}
}

func helperNewTask(dir string) {
	s, err := Open(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	s.LockTimeout = 10 * time.Minute
	if err := createBurstTask(s, RandomTaskID()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// createBurstTask records new task id as a dispatch records its task
// (enqueue.Task: CreateTask, handed to the lock's holder when another
// process holds the lock); STATE_TEST_ALONE: each through an UpdateIndex
// of its own, as before CreateTask; STATE_TEST_FULL: through Update, the
// whole state read first, as before UpdateIndex.
func createBurstTask(s *Store, id string) error {
	add := func(st *State) error {
		st.Tasks[id] = &Task{ID: id, Project: "p", Dir: "/d", Agent: "sim", Text: "a task of a burst", Status: StatusQueued, Created: clock.Now().UTC()}
		return nil
	}
	switch {
	case os.Getenv("STATE_TEST_FULL") != "":
		return s.Update(context.Background(), add)
	case os.Getenv("STATE_TEST_ALONE") != "":
		return s.UpdateIndex(context.Background(), add)
	}
	t := &Task{ID: id, Project: "p", Dir: "/d", Agent: "sim", Text: "a task of a burst", Created: clock.Now().UTC()}
	_ = t.SetStatus(StatusQueued, t.Created, "a burst")
	return s.CreateTask(context.Background(), t, Admission{Now: t.Created}, add)
}

func helperNewTaskKill(dir string) {
	s, err := Open(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	s.LockTimeout = 10 * time.Minute
	id := RandomTaskID()
	if err := createBurstTask(s, id); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(id)
	select {}
}

func helperCount(dir, name string, n int, ack bool) {
	s, err := Open(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	s.LockTimeout = 5 * time.Minute
	s.ArchiveAfter = 3
	ctx := context.Background()
	for i := 0; n < 0 || i < n; i++ {
		var v int
		err := s.Update(ctx, func(st *State) error {
			v = counter(st, name) + 1
			setCounter(st, name, v)
			if ack {
				// Every acknowledged update also changes a record and
				// adds a finished task, so kills land in record and
				// archive writes too.
				ackTasks(st, v)
			}
			return nil
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if ack {
			fmt.Fprintf(os.Stdout, "%d\n", v)
		}
	}
	os.Exit(0)
}

func helperTaskCount(dir, name string, n int, mode string) {
	s, err := Open(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	s.LockTimeout = 5 * time.Minute
	ctx := context.Background()
	id := "t_" + name
	err = s.Update(ctx, func(st *State) error {
		if st.Task(id) == nil {
			st.Tasks[id] = &Task{ID: id, Dir: "/d", Agent: "sim", Status: StatusRunning, Created: clock.Now().UTC()}
		}
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if mode == "taskbench" {
		io.Copy(io.Discard, os.Stdin)
	}
	for i := 0; n < 0 || i < n; i++ {
		var v int
		err := s.UpdateTask(ctx, id, func(t *Task) error {
			t.HandlingHops++
			v = t.HandlingHops
			return nil
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if mode == "taskack" {
			fmt.Fprintf(os.Stdout, "%d\n", v)
		}
	}
	os.Exit(0)
}

// counter reads a test counter kept in a project record's Dir ("/n/<v>").
func counter(st *State, name string) int {
	p, ok := st.Projects[name]
	if !ok {
		return 0
	}
	v, _ := strconv.Atoi(p.Dir[len("/n/"):])
	return v
}

func setCounter(st *State, name string, v int) {
	st.Projects[name] = &Project{Name: name, Dir: "/n/" + strconv.Itoa(v)}
}

// ackCounterTask is the task whose Answer the ack helper sets to the
// counter on every update.
const ackCounterTask = "t_0counter"

func ackTasks(st *State, v int) {
	now := clock.Now().UTC()
	t := st.Task(ackCounterTask)
	if t == nil {
		t = &Task{ID: ackCounterTask, Dir: "/d", Agent: "sim", Status: StatusRunning, Created: now}
		st.Tasks[t.ID] = t
	}
	t.Answer = strconv.Itoa(v)
	id := fmt.Sprintf("t_%08d", v)
	st.Tasks[id] = &Task{ID: id, Dir: "/d", Agent: "sim", Text: "task " + strconv.Itoa(v) + "\nsecond line",
		Status: StatusDone, Created: now, Ended: now, Reclaimed: now}
}

func helperPatient(dir, name string) {
	s, err := Open(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	s.LockTimeout = 20 * time.Millisecond
	s.BusyWait = 10 * time.Minute
	s.OnBusy = func(err error) { fmt.Fprintf(os.Stderr, "waiting: %v\n", err) }
	err = s.Update(context.Background(), func(st *State) error {
		id := "t_" + name
		st.Tasks[id] = &Task{ID: id, Dir: "/d", Agent: "sim", Status: StatusQueued, Created: clock.Now().UTC()}
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}
