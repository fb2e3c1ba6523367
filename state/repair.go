package state

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"
)

// RepairReport says what Repair did.
type RepairReport struct {
	// Healthy is true when state.json parsed and nothing was done.
	Healthy bool `json:"healthy"`
	// MovedTo is where the bad file was moved (state.json.corrupt-<time> or
	// state.json.newer-<time>).
	MovedTo string `json:"moved_to,omitempty"`
	// Problem is the error that made the file bad.
	Problem string `json:"problem,omitempty"`
	// FromPrevious is true when the rebuild started from the previous
	// generation (state.json.prev) rather than from an empty state.
	FromPrevious bool `json:"from_previous"`
	// Replayed is how many journal events were applied on top.
	Replayed int `json:"replayed"`
	// Projects and Tasks count the records in the rebuilt state.
	Projects int `json:"projects"`
	Tasks    int `json:"tasks"`
}

// Repair fixes a state file that cannot be used. Under the lock, it moves a
// corrupt state.json aside to state.json.corrupt-<time> and rebuilds the
// state from the previous generation (state.json.prev) if that one parses,
// then replays the journal events written after it. A file from a newer
// runner is refused (ErrNewerVersion) unless force is set, in which case it
// is moved aside to state.json.newer-<time> the same way. A healthy file is
// left alone. Live panes are not this package's business: runner reconciles
// the rebuilt tasks against tmux afterwards.
func (s *Store) Repair(ctx context.Context, force bool) (*RepairReport, error) {
	unlock, err := s.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
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
	now := time.Now().UTC()
	rep.MovedTo = s.Path() + "." + suffix + "-" + now.Format("20060102T150405.000000000Z")
	if err := os.Rename(s.Path(), rep.MovedTo); err != nil {
		return nil, fmt.Errorf("move %s aside: %w", s.Path(), err)
	}

	st := New()
	if raw, err := readString(s.path(prevFile)); err == nil {
		if prev, err := parse(s.path(prevFile), raw); err == nil {
			st, rep.FromPrevious = prev, true
		}
	}
	events, _, err := s.ReadJournal(ctx)
	if err != nil {
		return nil, fmt.Errorf("rebuild state from the journal (%s was moved to %s): %w", StateFile, rep.MovedTo, err)
	}
	rep.Replayed = replay(st, events, st.Updated)
	if _, err := s.write(st, "", now); err != nil {
		return nil, fmt.Errorf("write rebuilt state (the bad file was moved to %s): %w", rep.MovedTo, err)
	}
	if err := s.syncDir(); err != nil {
		return nil, err
	}
	rep.Projects, rep.Tasks = len(st.Projects), len(st.Tasks)
	return rep, nil
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
			st.Tasks[t.ID] = &t
		default:
			continue
		}
		n++
	}
	return n
}
