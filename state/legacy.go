package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"time"
)

// legacyState is state.json of versions 1 and 2: every task whole, inline.
type legacyState struct {
	Version    int                 `json:"version"`
	Generation uint64              `json:"generation"`
	Updated    time.Time           `json:"updated,omitzero"`
	Projects   map[string]*Project `json:"projects"`
	Tasks      map[string]*Task    `json:"tasks"`
	Messages   map[string]*Message `json:"messages,omitempty"`
}

// parseLegacy reads a version 1 or 2 file. Its tasks have no record files
// yet, so the first write writes them all, archives the finished ones and
// keeps the old file (keepLegacy).
func parseLegacy(dir, path string, raw []byte) (*State, error) {
	var old legacyState
	if err := json.Unmarshal(raw, &old); err != nil {
		return nil, &CorruptError{Path: path, Err: err}
	}
	st := &State{
		Version: old.Version, Generation: old.Generation, Updated: old.Updated, Projects: old.Projects,
		Tasks: old.Tasks, Messages: old.Messages, dir: dir, legacy: old.Version,
	}
	for id, t := range st.Tasks {
		if t == nil || t.ID != id {
			return nil, &CorruptError{Path: path, Err: fmt.Errorf("bad task record %q", id)}
		}
		t.Archived = false
	}
	st.normalize()
	return st, nil
}

// keepLegacy keeps the version-v state.json, about to be replaced by its
// conversion, as state.json.v<v>-backup (a hard link; an existing backup
// is kept as it is).
func (s *Store) keepLegacy(v int) error {
	backup := s.Path() + ".v" + strconv.Itoa(v) + "-backup"
	if _, err := os.Lstat(backup); err == nil {
		return nil
	}
	if err := os.Link(s.Path(), backup); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("keep the version %d state as %s before converting it: %w", v, backup, err)
	}
	return nil
}
