// The holder's side of the hand-over: taking the queued changes, applying
// them, answering their owners, passing the lead on.

package state

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/runner-cli/runner/internal/clock"
)

// A claim is a queued op a holder took, and the answer it gets.
type claim struct {
	name   string
	answer byte
}

// takeOps claims every queued op (and any a holder that died left
// claimed) and applies to st those whose task is still as their owner read
// it, naming them in st.applied. Called with the lock held, before the
// holder's own updates. It returns the claims and how many changed st.
// With st nil (the state did not load) it claims them all as conflicts:
// their owners go through Update, which says why. ents is the queue as
// queued read it.
func (s *Store) takeOps(st *State, ents []fs.DirEntry) ([]claim, int) {
	dir := s.path(opsDir)
	var claims []claim
	var names []string
	applied := 0
	for _, e := range ents {
		name, kind, _ := strings.Cut(e.Name(), ".")
		switch kind {
		case "op":
			if os.Rename(filepath.Join(dir, e.Name()), filepath.Join(dir, name+".claim")) != nil {
				continue // withdrawn meanwhile
			}
		case "claim":
		case "tmp":
			removeStale(dir, e)
			continue
		default:
			continue
		}
		c := claim{name: name, answer: answerConflict}
		switch {
		case st == nil:
		case kind == "claim":
			// Its holder died: done if and only if its write named it.
			if slices.Contains(st.applied, name) {
				c.answer = answerApplied
				names = append(names, name)
			}
		case applyOp(st, filepath.Join(dir, name+".claim"), s.PortBusy):
			c.answer = answerApplied
			names = append(names, name)
			applied++
		}
		claims = append(claims, c)
	}
	if st != nil {
		st.applied = names
	}
	return claims, applied
}

// queued lists the queue's entries (none when there is no queue).
func (s *Store) queued() []fs.DirEntry {
	ents, _ := os.ReadDir(s.path(opsDir))
	return ents
}

// waiting reports whether ents hold an op or a claim.
func waiting(ents []fs.DirEntry) bool {
	for _, e := range ents {
		if _, kind, _ := strings.Cut(e.Name(), "."); kind == "op" || kind == "claim" {
			return true
		}
	}
	return false
}

// removeStale removes e, an op its owner began to write, once it is
// older than staleOps (its owner died writing it).
func removeStale(dir string, e fs.DirEntry) {
	if fi, err := e.Info(); err == nil && clock.Since(clock.Outside(fi.ModTime())) > staleOps {
		os.Remove(filepath.Join(dir, e.Name()))
	}
}

// applyOp applies the op in path to st if its task is still as the owner
// read it, or, for a new task, if it is admitted (busy: the probe of
// ports in use, Store.PortBusy).
func applyOp(st *State, path string, busy func(int) bool) bool {
	data, err := readFile(path)
	if err != nil {
		return false
	}
	var op taskOp
	if json.Unmarshal(data, &op) != nil {
		return false
	}
	if op.Admit != nil {
		return applyCreate(st, op, busy)
	}
	cur, ok := st.Tasks[op.Task]
	if !ok {
		return false
	}
	if st.fillTask(op.Task); st.lazyErr != nil {
		return false
	}
	now, err := json.Marshal(cur)
	if err != nil || !bytes.Equal(now, op.Base) {
		return false
	}
	t := new(Task)
	if json.Unmarshal(op.New, t) != nil || t.ID != op.Task {
		return false
	}
	st.Tasks[op.Task] = t
	return true
}

// answerOps tells each claim's owner its answer (or, if all is set, that
// one instead), one write per inbox, then removes the claims. Told first:
// a holder that dies in between leaves the claims for the next one, which
// answers again.
func (s *Store) answerOps(claims []claim, all byte) {
	if len(claims) == 0 {
		return
	}
	dir := s.path(opsDir)
	byBox := map[string][]answer{}
	for _, c := range claims {
		a := c.answer
		if all != 0 {
			a = all
		}
		id := inboxOf(c.name)
		byBox[id] = append(byBox[id], answer{c.name, a})
	}
	for id, as := range byBox {
		send(dir, id, as)
	}
	for _, c := range claims {
		os.Remove(filepath.Join(dir, c.name+".claim"))
	}
}

// passLead runs after the lock was let go: if ops wait in the queue (queued
// while this holder held the lock, after it had looked), the owner of the
// oldest is told to take the lock. One whose owner is gone is removed: it
// was never acknowledged. (One whose owner cannot be told takes the lock
// itself at its next tick.)
func (s *Store) passLead() {
	dir := s.path(opsDir)
	ents, err := os.ReadDir(dir) // sorted by name: oldest first
	if err != nil {
		return
	}
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".op")
		if !ok {
			continue
		}
		ok, gone := send(dir, inboxOf(name), []answer{{name, answerLead}})
		if ok {
			return
		}
		if gone {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
