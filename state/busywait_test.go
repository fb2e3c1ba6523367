package state

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/filelock"
)

// TestBusyWaitItsTurn: writers in processes of their own, each with a
// BusyWait, find state.lock held for longer than their LockTimeout (each
// says it waits: its OnBusy line), and none fails: all record their task
// once the lock is let go (issue 51: 513 of 1 000 dispatches in a burst
// exited 5 on plain contention). No time is asserted: the lock is held
// until every writer has said it waits, that is past its timeout.
func TestBusyWaitItsTurn(t *testing.T) {
	s := openTemp(t)
	mustUpdate(t, s, func(st *State) error { return nil })
	release, err := filelock.Lock(t.Context(), s.path(LockFile), false, 0)
	if err != nil {
		t.Fatal(err)
	}
	const n = 12
	cmds := make([]*exec.Cmd, n)
	said := make(chan string, n)
	for i := range cmds {
		c := exec.Command(os.Args[0], s.Dir(), fmt.Sprintf("w%02d", i))
		c.Env = append(os.Environ(), "STATE_TEST_HELPER=patient")
		errOut, err := c.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = c
		go func() {
			sc := bufio.NewScanner(errOut)
			var lines []string
			for sc.Scan() {
				lines = append(lines, sc.Text())
				if strings.HasPrefix(sc.Text(), "waiting: ") {
					said <- sc.Text()
				}
			}
			if len(lines) > 0 && !strings.HasPrefix(lines[0], "waiting: ") {
				said <- "failed: " + strings.Join(lines, "; ")
			}
		}()
	}
	timeout := time.After(2 * time.Minute) // a hang, not a measure
	for range n {
		select {
		case line := <-said:
			if !strings.HasPrefix(line, "waiting: ") || !strings.Contains(line, "state is busy") {
				t.Fatalf("a writer said %q, want that it waits for the busy state", line)
			}
		case <-timeout:
			release()
			t.Fatal("not every writer said it waits")
		}
	}
	release()
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Errorf("writer %d: %v", i, err)
		}
	}
	st, err := s.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if st.Tasks[fmt.Sprintf("t_w%02d", i)] == nil {
			t.Errorf("task t_w%02d was not recorded", i)
		}
	}
}
