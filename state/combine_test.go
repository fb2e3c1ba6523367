package state

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
)

// Writers of one directory in one process apply their updates one at a
// time, all of them get through, and the registry is empty once they are
// done.
func TestUpdatesSerialiseAndEmpty(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	inside, most := 0, 0
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := range 16 {
		s, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			for range 10 {
				err := s.Update(t.Context(), func(st *State) error {
					mu.Lock()
					inside++
					most = max(most, inside)
					mu.Unlock()
					name := fmt.Sprintf("w%02d", w)
					setCounter(st, name, counter(st, name)+1)
					mu.Lock()
					inside--
					mu.Unlock()
					return nil
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	st, err := (&Store{dir: dir}).Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	sum := 0
	for w := range 16 {
		sum += counter(st, fmt.Sprintf("w%02d", w))
	}
	// Concurrent updates are combined: at most one write each.
	if sum != 160 || st.Generation < 1 || st.Generation > 160 || most != 1 {
		t.Fatalf("%d updates applied in %d writes (want 160 in 1..160), at most %d writers inside at once (want 1)", sum, st.Generation, most)
	}
	updateQueues.mu.Lock()
	n := len(updateQueues.m)
	updateQueues.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d queues left in the registry after the writers finished", n)
	}
}

// A writer holding one directory does not hold up writers of another.
func TestLocksArePerDirectory(t *testing.T) {
	a, b := openTemp(t), openTemp(t)
	b.LockTimeout = time.Minute
	unlock, err := a.lock(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	mustUpdate(t, b, func(st *State) error { setCounter(st, "b", 1); return nil })
}

// While one writer holds the lock, the updates of the process wait in the
// queue (one of them, the leader, in flock(2)), and the leader applies
// them all in one write.
func TestUpdatesQueueBehindTheLock(t *testing.T) {
	s := openTemp(t)
	mustUpdate(t, s, func(st *State) error { setCounter(st, "n", 0); return nil })
	unlock, err := s.lock(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 3)
	for range 3 {
		o, _ := Open(s.Dir())
		o.LockTimeout = time.Minute
		go func() {
			done <- o.Update(t.Context(), func(st *State) error { setCounter(st, "n", counter(st, "n")+1); return nil })
		}()
	}
	refs := func() (queued int) {
		updateQueues.mu.Lock()
		if q := updateQueues.m[s.Dir()]; q != nil {
			q.mu.Lock()
			queued = len(q.queue)
			q.mu.Unlock()
		}
		updateQueues.mu.Unlock()
		return
	}
	for deadline := clock.Now().Add(30 * time.Second); ; {
		q := refs()
		if q == 3 {
			break // all three queued, the leader waiting for the lock
		}
		if clock.Now().After(deadline) {
			t.Fatalf("queued %d; want 3", q)
		}
		time.Sleep(time.Millisecond)
	}
	unlock()
	for range 3 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	st, err := s.Read(t.Context())
	if q := refs(); err != nil || counter(st, "n") != 3 || st.Generation != 2 || q != 0 {
		t.Fatalf("counter %d in generation %d, %v, queued %d; want 3 in generation 2 (one write), nil, 0",
			counter(st, "n"), st.Generation, err, q)
	}
}

// In a combined batch an update that fails or panics leaves no trace and
// gets its own error (or panic); a caller whose context ended before its
// turn is not applied; the others are written together.
func TestCombinedBatchRollsBackFailures(t *testing.T) {
	s := openTemp(t)
	s.LockTimeout = time.Minute
	mustUpdate(t, s, func(st *State) error { setCounter(st, "a", 0); return nil })
	unlock, err := s.lock(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	errNo := errors.New("no")
	cctx, cancel := context.WithCancel(t.Context())
	type res struct {
		i   int
		err error
		pv  any
	}
	results := make(chan res, 6)
	fns := []func(*State) error{
		func(st *State) error { setCounter(st, "a", counter(st, "a")+1); return nil },
		func(st *State) error { setCounter(st, "b", 1); setCounter(st, "a", 100); return errNo },
		func(st *State) error { setCounter(st, "a", counter(st, "a")+1); return nil },
		func(st *State) error { setCounter(st, "c", 1); panic("boom") },
		func(st *State) error { setCounter(st, "a", counter(st, "a")+1); return nil },
		func(st *State) error { setCounter(st, "d", 1); return nil }, // its context ends first
	}
	queued := func() int {
		updateQueues.mu.Lock()
		defer updateQueues.mu.Unlock()
		if q := updateQueues.m[s.Dir()]; q != nil {
			q.mu.Lock()
			defer q.mu.Unlock()
			return len(q.queue)
		}
		return 0
	}
	for i, fn := range fns {
		ctx := t.Context()
		if i == 5 {
			ctx = cctx
		}
		go func() {
			defer func() {
				if v := recover(); v != nil {
					results <- res{i: i, pv: v}
				}
			}()
			err := s.Update(ctx, fn)
			results <- res{i: i, err: err}
		}()
		// Queue them in order.
		for deadline := clock.Now().Add(30 * time.Second); queued() != i+1; {
			if clock.Now().After(deadline) {
				t.Fatalf("update %d not queued (%d queued)", i, queued())
			}
			time.Sleep(time.Millisecond)
		}
	}
	cancel()
	r5 := <-results
	if r5.i != 5 || !errors.Is(r5.err, context.Canceled) {
		t.Fatalf("the cancelled caller got %+v; want its context's error at once", r5)
	}
	unlock()
	got := map[int]res{}
	for range 5 {
		r := <-results
		got[r.i] = r
	}
	if got[0].err != nil || got[2].err != nil || got[4].err != nil || !errors.Is(got[1].err, errNo) || got[3].pv != "boom" {
		t.Fatalf("results %+v; want nil for 0, 2, 4, errNo for 1, the panic for 3", got)
	}
	st, err := s.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if counter(st, "a") != 3 || counter(st, "b") != 0 || counter(st, "c") != 0 || counter(st, "d") != 0 || st.Generation != 2 {
		t.Fatalf("a=%d b=%d c=%d d=%d generation %d; want 3 0 0 0 and one write", counter(st, "a"), counter(st, "b"), counter(st, "c"), counter(st, "d"), st.Generation)
	}
}
