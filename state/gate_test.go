package state

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Writers of one directory in one process pass the gate one at a time, all
// of them get through, and the registry is empty once they are done.
func TestGateSerialisesAndEmpties(t *testing.T) {
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
	if st.Generation != 160 || most != 1 {
		t.Fatalf("generation %d (want 160), at most %d writers inside at once (want 1)", st.Generation, most)
	}
	writerGates.mu.Lock()
	n := len(writerGates.m)
	writerGates.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d gates left in the registry after the writers finished", n)
	}
}

// A writer holding one directory does not hold up writers of another.
func TestGatesArePerDirectory(t *testing.T) {
	a, b := openTemp(t), openTemp(t)
	b.LockTimeout = time.Minute
	unlock, err := a.lock(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	mustUpdate(t, b, func(st *State) error { setCounter(st, "b", 1); return nil })
}

// While one writer holds the lock, the other writers of the process wait at
// the gate, not in flock(2): only the holder has an flock taken or pending.
func TestGateQueuesWaiters(t *testing.T) {
	s := openTemp(t)
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
	refs := func() int {
		writerGates.mu.Lock()
		defer writerGates.mu.Unlock()
		if g := writerGates.m[s.Dir()]; g != nil {
			return g.refs
		}
		return 0
	}
	for deadline := time.Now().Add(30 * time.Second); refs() != 4; {
		if time.Now().After(deadline) {
			t.Fatalf("gate refs = %d, want the holder and 3 waiters", refs())
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
	if err != nil || counter(st, "n") != 3 || refs() != 0 {
		t.Fatalf("counter %d, %v, gate refs %d; want 3, nil, 0", counter(st, "n"), err, refs())
	}
}
