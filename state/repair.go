package state

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/runner-cli/runner/internal/clock"
)

// RepairReport says what Repair did.
type RepairReport struct {
	// Healthy is true when state.json and the records it names read
	// well and nothing was done.
	Healthy bool `json:"healthy"`
	// MovedTo is where the bad file was moved (state.json.corrupt-<time> or
	// state.json.newer-<time>).
	MovedTo string `json:"moved_to,omitempty"`
	// Problem is the error that made the file bad.
	Problem string `json:"problem,omitempty"`
	// FromPrevious is true when the rebuild started from the previous
	// generation (state.json.prev) rather than from an empty state.
	FromPrevious bool `json:"from_previous"`
	// FromRecords counts the tasks taken from their newest record file.
	FromRecords int `json:"from_records"`
	// Replayed is how many journal events were applied on top.
	Replayed int `json:"replayed"`
	// DroppedSegments lists archive segments that could not be read.
	DroppedSegments []string `json:"dropped_segments,omitempty"`
	// KeptNewer is set when the state came from a newer runner (force):
	// its record files and archive segments were all left in place.
	KeptNewer bool `json:"kept_newer_files,omitempty"`
	// Projects and Tasks count the records in the rebuilt state (Tasks
	// those of the index; Archived those of the archive).
	Projects int `json:"projects"`
	Tasks    int `json:"tasks"`
	Archived int `json:"archived"`
}

// Repair fixes a state that cannot be used: a state.json that does not
// parse or names a record file that is gone. Under the lock, it moves
// state.json aside to state.json.corrupt-<time> and rebuilds from what is
// on disk: the previous generation (state.json.prev) if it parses, the
// newest record file of each task (tasks/<id>.<gen>.json), the archive
// segments that read, then the journal events written after the previous
// generation. Record files that the rebuilt state does not name are
// removed. A file from a newer runner is refused (ErrNewerVersion) unless
// force is set, in which case it is moved aside to state.json.newer-<time>
// the same way, and no file of the newer runner's is removed. A healthy state is left alone. Live panes are not this
// package's business: runner reconciles the rebuilt tasks against tmux
// afterwards.
func (s *Store) Repair(ctx context.Context, force bool) (*RepairReport, error) {
	unlock, err := s.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	records.forget(s.dir)
	_, _, loadErr := s.load()
	if loadErr == nil {
		return &RepairReport{Healthy: true}, nil
	}
	var suffix string
	switch {
	case errors.Is(loadErr, ErrCorrupt):
		suffix = "corrupt"
	case errors.Is(loadErr, ErrNewerVersion) && force:
		suffix = "newer"
	default:
		return nil, loadErr
	}
	rep := &RepairReport{Problem: loadErr.Error()}
	now := clock.Now().UTC()
	rep.MovedTo = s.Path() + "." + suffix + "-" + now.Format("20060102T150405.000000000Z")
	if err := os.Rename(s.Path(), rep.MovedTo); err != nil {
		return nil, fmt.Errorf("move %s aside: %w", s.Path(), err)
	}
	st, since := s.rebuildBase(rep)
	if err := s.rebuildFromRecords(st, rep); err != nil {
		return nil, fmt.Errorf("rebuild state from the record files (%s was moved to %s): %w", StateFile, rep.MovedTo, err)
	}
	events, _, err := s.ReadJournal(ctx)
	if err != nil {
		return nil, fmt.Errorf("rebuild state from the journal (%s was moved to %s): %w", StateFile, rep.MovedTo, err)
	}
	rep.Replayed = replay(st, events, since)
	// The event stream goes on from its last cursor, and the rebuilt
	// tasks' histories, streamed already, are not streamed again.
	st.EventSeq, st.quietEvents = s.lastEventCursor(), true
	res, err := s.write(st, nil, now)
	if err != nil {
		return nil, fmt.Errorf("write rebuilt state (the bad file was moved to %s): %w", rep.MovedTo, err)
	}
	if err := s.syncDir(); err != nil {
		return nil, err
	}
	if suffix == "newer" {
		// The files of a newer runner (its records, its archive) are not
		// this one's to judge: none is removed, so that runner, or the
		// user, still has them all.
		rep.KeptNewer = true
	} else {
		removeFiles(s.dir, res.remove)
		s.sweepRecords(st)
	}
	rep.Projects, rep.Tasks, rep.Archived = len(st.Projects), len(st.Tasks), st.ArchivedCount()
	return rep, nil
}

// rebuildBase starts a rebuild from state.json.prev when it parses (its
// tasks as their entries show them, its messages, the archive segments
// that read), else from an empty state. It returns the state and the time
// from which the journal is replayed.
func (s *Store) rebuildBase(rep *RepairReport) (*State, time.Time) {
	st := New()
	st.dir = s.dir
	raw, err := readFile(s.path(prevFile))
	if err != nil {
		return st, time.Time{}
	}
	var probe struct {
		Version int `json:"version"`
	}
	if json.Unmarshal(raw, &probe) != nil || probe.Version > Version {
		return st, time.Time{}
	}
	if probe.Version < indexVersion {
		old, err := parseLegacy(s.dir, s.path(prevFile), raw)
		if err != nil {
			return st, time.Time{}
		}
		rep.FromPrevious = true
		return old, old.Updated
	}
	var ix indexFile
	if json.Unmarshal(raw, &ix) != nil {
		return st, time.Time{}
	}
	rep.FromPrevious = true
	if ix.Projects != nil {
		st.Projects = ix.Projects
	}
	st.Messages, st.Generation = ix.Messages, ix.Generation
	for id, e := range ix.Tasks {
		if e == nil || e.ID != id || !safeName(id) {
			continue
		}
		t := e.task()
		t.Archived = false
		if rec, err := readRecord(s.dir, id, e.Record); err == nil {
			t = rec.clone()
			e.applyHot(t)
		}
		st.Tasks[id] = t
		st.base[id] = baseOf{gen: e.Record} // rec nil: written anew
	}
	st.arch = ix.Archive
	st.arch.Tasks, st.arch.Messages = nil, nil
	for _, ref := range ix.Archive.Tasks {
		if _, err := readSegment[segment[*entry]](s.dir, ref.File); err != nil {
			rep.DroppedSegments = append(rep.DroppedSegments, ref.File)
			continue
		}
		st.arch.Tasks = append(st.arch.Tasks, ref)
	}
	for _, ref := range ix.Archive.Messages {
		if _, err := readSegment[segment[*Message]](s.dir, ref.File); err != nil {
			rep.DroppedSegments = append(rep.DroppedSegments, ref.File)
			continue
		}
		st.arch.Messages = append(st.arch.Messages, ref)
	}
	return st, ix.Updated
}

// rebuildFromRecords takes each task's newest record file when it is
// newer than what the rebuild has: a task the previous index did not have
// yet, or one whose bulk changed since.
func (s *Store) rebuildFromRecords(st *State, rep *RepairReport) error {
	newest, err := s.newestRecords()
	if err != nil {
		return err
	}
	archived := map[string]uint64{}
	if es, _, err := st.archivedEntries(); err == nil {
		for _, e := range es {
			archived[e.ID] = e.Record
		}
	}
	for id, gen := range newest {
		if b, ok := st.base[id]; ok && b.gen >= gen {
			continue
		}
		if g, ok := archived[id]; ok && g >= gen {
			continue
		}
		rec, err := readRecord(s.dir, id, gen)
		if err != nil {
			continue // torn by a crash before its index: nothing named it
		}
		if _, ok := archived[id]; ok {
			w := &segmentWriter{dir: s.dir, gen: st.Generation + 1, tag: "r"}
			all := func(segmentRef) bool { return true }
			if st.arch.Tasks, err = rewriteSegments(w, taskKind, st.arch.Tasks, all, func(e *entry) bool { return e.ID != id }); err != nil {
				return err
			}
		}
		st.Tasks[id] = rec.clone()
		st.base[id] = baseOf{gen: gen}
		rep.FromRecords++
	}
	for id, b := range st.base {
		if b.rec == nil {
			delete(st.base, id) // every rebuilt task gets a new record
		}
	}
	return nil
}

// newestRecords returns the newest record generation of each task on disk.
func (s *Store) newestRecords() (map[string]uint64, error) {
	ents, err := os.ReadDir(filepath.Join(s.dir, "tasks"))
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	newest := map[string]uint64{}
	for _, de := range ents {
		if id, gen, ok := parseRecordName(de.Name()); ok && gen > newest[id] {
			newest[id] = gen
		}
	}
	return newest, nil
}

// sweepRecords removes the record files that st does not name (left by a
// crash, or superseded before a rebuild).
func (s *Store) sweepRecords(st *State) {
	keep := map[string]bool{}
	for id, b := range st.base {
		keep[recordRel(id, b.gen)] = true
	}
	if es, _, err := st.archivedEntries(); err == nil {
		for _, e := range es {
			keep[recordRel(e.ID, e.Record)] = true
		}
	} else {
		return // keep everything rather than lose an archived record
	}
	ents, _ := os.ReadDir(filepath.Join(s.dir, "tasks"))
	for _, de := range ents {
		if id, gen, ok := parseRecordName(de.Name()); ok && !keep[recordRel(id, gen)] {
			os.Remove(filepath.Join(s.dir, "tasks", de.Name()))
		}
	}
}

// replay applies the journal events newer than since to st and returns how
// many it applied.
func replay(st *State, events []Event, since time.Time) int {
	n := 0
	for _, ev := range events {
		if !since.IsZero() && !ev.Time.After(since) {
			continue
		}
		switch {
		case ev.Kind == EventProjectAdded && ev.ProjectRecord != nil && ev.ProjectRecord.Name != "":
			p := *ev.ProjectRecord
			st.Projects[p.Name] = &p
		case ev.Kind == EventProjectRemoved && ev.Project != "":
			delete(st.Projects, ev.Project)
		case ev.TaskRecord != nil && ValidTaskID(ev.TaskRecord.ID):
			t := *ev.TaskRecord
			t.Archived = false
			st.Tasks[t.ID] = &t
			delete(st.base, t.ID)
		default:
			continue
		}
		n++
	}
	return n
}
