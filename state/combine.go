package state

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Updates of one state directory made at the same time inside one process
// are combined: the first caller leads, takes the lock once, applies every
// update queued by then in order, and writes the file once (one durable
// rename for the batch). Each update still sees the effect of the ones
// before it, and one that fails (or panics) leaves no trace: the state is
// rolled back to a copy taken after the last update that succeeded. Each caller gets its own update's result. A
// batch holds the updates queued when its leader takes over; a caller that
// arrives later waits for the next batch, led by the first of them.
//
// The registry is package-level on purpose (as are the inbox registry,
// the records and segments caches, the sequence of handed-over operations
// and the id source tests swap): the flock it fronts is shared by every
// Store of the directory in the process, so the queue must be as wide as
// the process. It is keyed by the store's directory and holds an entry only
// while someone updates, so it is empty between updates and tests cannot
// leak into each other through it. Correctness does not depend on it: the
// flock still serialises everyone.
var updateQueues = &combiners{} // its map is made on first use: a map literal here is built in every process's init

type combiners struct {
	mu sync.Mutex
	m  map[string]*combiner
}

type combiner struct {
	mu      sync.Mutex
	queue   []*updateReq
	leading bool
	refs    int
}

type updateReq struct {
	ctx      context.Context
	fn       func(*State) error
	done     chan updateResult // one result
	lead     chan struct{}     // closed when this caller must lead the next batch
	promoted bool              // under combiner.mu
	// indexOnly: fn needs the index, not every record (UpdateIndex).
	indexOnly bool
}

type updateResult struct {
	err      error
	panicked bool
	pval     any
}

func (c *combiners) get(dir string) *combiner {
	c.mu.Lock()
	defer c.mu.Unlock()
	q := c.m[dir]
	if q == nil {
		q = &combiner{}
		if c.m == nil {
			c.m = map[string]*combiner{}
		}
		c.m[dir] = q
	}
	q.refs++
	return q
}

func (c *combiners) put(dir string, q *combiner) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if q.refs--; q.refs == 0 {
		delete(c.m, dir)
	}
}

func (r updateResult) unwrap() error {
	if r.panicked {
		panic(r.pval)
	}
	return r.err
}

// combinedUpdate is Update: queue fn, lead a batch or wait for its result.
func (s *Store) combinedUpdate(ctx context.Context, fn func(*State) error) error {
	return s.combinedUpdateAs(ctx, fn, false)
}

// combinedUpdateAs is combinedUpdate, or UpdateIndex's when indexOnly.
func (s *Store) combinedUpdateAs(ctx context.Context, fn func(*State) error, indexOnly bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	// fn may change any task: what UpdateTask remembers of the tasks this
	// process wrote is stale after it, and a change handed over from a
	// stale base is a conflict, redone through the lock (under a burst,
	// seconds in the kernel's queue).
	defer s.known.reset()
	q := updateQueues.get(s.dir)
	defer updateQueues.put(s.dir, q)
	req := &updateReq{ctx: ctx, fn: fn, done: make(chan updateResult, 1), lead: make(chan struct{}), indexOnly: indexOnly}
	q.mu.Lock()
	q.queue = append(q.queue, req)
	if !q.leading {
		q.leading = true
		q.mu.Unlock()
		return s.leadBatch(q, req)
	}
	q.mu.Unlock()

	timeout := s.lockWait()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var gaveUp error
	select {
	case r := <-req.done:
		return r.unwrap()
	case <-req.lead:
		return s.leadBatch(q, req)
	case <-timer.C:
		gaveUp = &BusyError{Lock: s.path(LockFile), Timeout: timeout}
	case <-ctx.Done():
		gaveUp = fmt.Errorf("wait for lock %s: %w", s.path(LockFile), ctx.Err())
	}
	// Leave the queue if no batch took this update yet; otherwise its
	// result is coming (or this caller leads) and must be waited for.
	q.mu.Lock()
	if !req.promoted {
		for i, r := range q.queue {
			if r == req {
				q.queue = append(q.queue[:i:i], q.queue[i+1:]...)
				q.mu.Unlock()
				return gaveUp
			}
		}
	}
	q.mu.Unlock()
	select {
	case r := <-req.done:
		return r.unwrap()
	case <-req.lead:
		return s.leadBatch(q, req)
	}
}

// leadBatch applies the queued updates (me among them) as one batch, then
// hands the lead to the first caller queued meanwhile.
func (s *Store) leadBatch(q *combiner, me *updateReq) error {
	// The lock is taken for everyone in the batch, so no caller's context
	// may cancel it (each is checked before its fn runs). The batch is
	// what is queued once the lock is held: the callers that came while
	// the leader waited for it go along.
	unlock, err := s.lock(context.Background())
	q.mu.Lock()
	batch := q.queue
	q.queue = nil
	q.mu.Unlock()
	s.applyBatch(batch, unlock, err)
	q.mu.Lock()
	if len(q.queue) == 0 {
		q.leading = false
	} else {
		next := q.queue[0]
		next.promoted = true
		close(next.lead)
	}
	q.mu.Unlock()
	return (<-me.done).unwrap()
}

// applyBatch applies, under the lock, the changes other processes queued
// (see UpdateTask), then the batch's updates in order (rolling back each
// one that fails), prunes, writes once, releases the lock, and gives every
// caller and every queued change its result. lockErr is why the lock was
// not taken.
func (s *Store) applyBatch(batch []*updateReq, unlock func(), lockErr error) {
	results := make([]updateResult, len(batch))
	defer func() {
		for i, r := range batch {
			r.done <- results[i]
		}
	}()
	if err := lockErr; err != nil {
		for i := range results {
			results[i].err = err
		}
		return
	}
	ents := s.queued()
	if len(batch) == 0 && !waiting(ents) {
		unlock() // taken to serve the queue, which someone served already
		return
	}
	res, werr := func() (writeResult, error) {
		defer unlock()
		st, raw, err := s.loadAs(indexOnly(batch), false)
		if err != nil {
			claims, _ := s.takeOps(nil, ents)
			s.answerOps(claims, answerConflict)
			return writeResult{}, err
		}
		st.writable = true
		// The queued changes first: they waited longest, and a stale
		// claim is judged against the state as its holder left it.
		claims, took := s.takeOps(st, ents)
		applied := applyUpdates(batch, st, results)
		if applied+took == 0 {
			if len(claims) > 0 {
				// Stale claims answered as done: their holder's
				// write must be durable first.
				s.answerOps(claims, answerOr(s.syncDir(), answerFailed))
			}
			return writeResult{}, nil
		}
		res, err := s.write(st, raw, s.now())
		if err == nil && st.onPruned != nil {
			st.onPruned(res.pruned)
		}
		if len(claims) > 0 {
			// Handed-over changes are answered before the lock goes, so
			// that a claim a later holder finds is one whose holder died.
			res.synced = true
			switch {
			case err != nil:
				s.answerOps(claims, answerConflict)
			case res.renamed:
				err = s.syncDir()
				s.answerOps(claims, answerOr(err, answerFailed))
			default:
				s.answerOps(claims, 0)
			}
		}
		return res, err
	}()
	if werr == nil && res.renamed && !res.synced {
		// After the lock is released: the next writer's work overlaps
		// this fsync. The updates are acknowledged once it is durable.
		werr = s.syncDir()
	}
	if werr == nil && res.renamed {
		removeFiles(s.dir, res.remove)
		s.removeTaskFiles(res.pruned)
	}
	if werr != nil {
		for i := range results {
			if results[i].err == nil && !results[i].panicked {
				results[i].err = werr
			}
		}
	}
}

// indexOnly reports whether every update of batch needs the index only
// (UpdateIndex): the batch then reads no record it does not touch.
func indexOnly(batch []*updateReq) bool {
	for _, r := range batch {
		if !r.indexOnly {
			return false
		}
	}
	return true
}

// answerOr is the answer for claims after err: each claim's own (0) when
// err is nil, else a.
func answerOr(err error, a byte) byte {
	if err != nil {
		return a
	}
	return 0
}

// applyUpdates calls each update of the batch on st in order, rolling
// back each one that fails, and returns how many succeeded.
func applyUpdates(batch []*updateReq, st *State, results []updateResult) int {
	applied := 0
	var good *State // the state after the last update that succeeded
	for i, r := range batch {
		if err := r.ctx.Err(); err != nil {
			results[i].err = err
			continue
		}
		if len(batch) > 1 && good == nil {
			good = st.clone()
		}
		results[i] = callUpdate(r.fn, st)
		if results[i].err == nil && !results[i].panicked {
			applied++
			if i < len(batch)-1 && len(batch) > 1 {
				good = st.clone()
			}
			continue
		}
		// Roll back what the failed update did, in place: the
		// updates before it may hold on to st.
		if good != nil {
			*st = *good.clone()
		}
	}
	return applied
}

// callUpdate runs fn, turning a panic into a result the caller re-panics
// with.
func callUpdate(fn func(*State) error, st *State) (r updateResult) {
	defer func() {
		if v := recover(); v != nil {
			r = updateResult{panicked: true, pval: v}
		}
	}()
	return updateResult{err: fn(st)}
}
