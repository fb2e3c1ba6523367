// Reading the state: the index and the records it names, without the
// lock.

package state

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"time"
)

// load reads state.json and the records of the tasks in it. It also
// returns the file's content (nil if there is no file), so write can tell
// whether anything changed. It takes no lock: a writer that supersedes a
// record between the reads of the index and of the record makes it read
// the index again.
func (s *Store) load() (*State, []byte, error) { return s.loadAs(false, true) }

// loadIndex is load without the records: every task of the index holds
// its hot fields only (its Text the entry's title) until State.Task asks
// for it (see UpdateIndex). A write's cost then does not grow with the
// tasks in the index.
func (s *Store) loadIndex() (*State, []byte, error) { return s.loadAs(true, true) }

// loadAs is load, or loadIndex when indexOnly. keep: the index decoded
// is kept for a later load of the same bytes (decodeIndex); a load for a
// write, whose write replaces the file, keeps none.
func (s *Store) loadAs(indexOnly, keep bool) (*State, []byte, error) {
	p := s.Path()
	for attempt := 0; ; attempt++ {
		raw, err := readFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			st := New()
			st.dir = s.dir
			return st, nil, nil
		}
		if err != nil {
			return nil, nil, fmt.Errorf("read state file %s: %w", p, err)
		}
		st, err := s.parse(p, raw, indexOnly, keep)
		var gone *recordGoneError
		if errors.As(err, &gone) && attempt < 50 {
			if now, rerr := readFile(p); rerr == nil && !bytes.Equal(now, raw) {
				continue // a writer moved on: read its index
			}
			if attempt < 3 {
				time.Sleep(time.Millisecond)
				continue
			}
		}
		if err != nil {
			return nil, nil, err
		}
		return st, raw, nil
	}
}

// leadingVersion is the schema version of a state file as runner writes
// it, {"version":N,... (ok false for any other spelling: the caller then
// decodes the file for it). Read so, a load decodes the index once, not
// twice: with a few hundred tasks in it, the second decode was a fifth of
// every load's time, and a dispatch loads it about ten times.
func leadingVersion(raw []byte) (int, bool) {
	const lead = `{"version":`
	if !bytes.HasPrefix(raw, []byte(lead)) {
		return 0, false
	}
	n, i := 0, len(lead)
	for ; i < len(raw) && raw[i] >= '0' && raw[i] <= '9' && i-len(lead) < 6; i++ {
		n = n*10 + int(raw[i]-'0')
	}
	if i == len(lead) || i >= len(raw) || raw[i] != ',' && raw[i] != '}' {
		return 0, false
	}
	return n, true
}

// recordGoneError says the index names a record file that is not there.
type recordGoneError struct {
	path string
	err  error
}

func (e *recordGoneError) Error() string {
	return fmt.Sprintf("the index names the record %s, which cannot be read: %v (run 'runner state repair')", e.path, e.err)
}

func (e *recordGoneError) Unwrap() error { return ErrCorrupt }

// parse decodes a state file and the records it names, checking its
// version. A version 1 or 2 file (whole tasks inline) is read as it is;
// the first write converts it. indexOnly leaves the records unread (see
// loadIndex).
func (s *Store) parse(path string, raw []byte, indexOnly, keep bool) (*State, error) {
	version, ok := leadingVersion(raw)
	if !ok {
		var probe struct {
			Version int `json:"version"`
		}
		if err := json.Unmarshal(raw, &probe); err != nil {
			if len(raw) == 0 {
				err = errors.New("the file is empty")
			}
			return nil, &CorruptError{Path: path, Err: err}
		}
		version = probe.Version
	}
	switch {
	case version > Version:
		return nil, &NewerVersionError{Path: path, Version: version}
	case version < 1:
		return nil, &CorruptError{Path: path, Err: fmt.Errorf("no valid schema version (got %d)", version)}
	case version < indexVersion:
		return parseLegacy(s.dir, path, raw)
	}
	ix, err := decodeIndex(s.dir, raw, keep)
	if err != nil {
		return nil, &CorruptError{Path: path, Err: err}
	}
	if ix.Version != version {
		return nil, &CorruptError{Path: path, Err: fmt.Errorf("two schema versions (%d, then %d)", version, ix.Version)}
	}
	st := &State{
		Version: ix.Version, Generation: ix.Generation, Updated: ix.Updated,
		Projects: ix.Projects, Tasks: make(map[string]*Task, len(ix.Tasks)), Messages: ix.Messages,
		dir: s.dir, arch: ix.Archive, retired: ix.Retired, applied: ix.Applied, base: make(map[string]baseOf, len(ix.Tasks)),
		EventSeq: ix.EventSeq, msgBase: make(map[string]MessageStatus, len(ix.Messages)),
	}
	if ix.SandboxedAt != 0 && ix.SandboxedAt == ix.Generation {
		st.sandboxed = make(map[string]bool, len(ix.Sandboxed))
		for _, id := range ix.Sandboxed {
			st.sandboxed[id] = true
		}
	}
	for id, m := range ix.Messages {
		if m != nil {
			st.msgBase[id] = m.Status
		}
	}
	for id, e := range ix.Tasks {
		if e == nil || e.ID != id || !safeName(id) {
			return nil, &CorruptError{Path: path, Err: fmt.Errorf("bad task entry %q", id)}
		}
	}
	if indexOnly {
		st.lazy = make(map[string]string, len(ix.Tasks))
		for id, e := range ix.Tasks {
			t := &Task{Text: e.Title}
			e.applyHot(t)
			st.Tasks[id] = t
			st.base[id] = baseOf{rec: t.clone(), gen: e.Record}
			st.lazy[id] = e.Title
		}
		st.normalize()
		return st, nil
	}
	recs, err := s.readRecords(ix.Tasks)
	if err != nil {
		return nil, err
	}
	for id, e := range ix.Tasks {
		rec := recs[id]
		t := rec.clone()
		e.applyHot(t)
		st.Tasks[id] = t
		st.base[id] = baseOf{rec: rec, gen: e.Record}
	}
	st.normalize()
	return st, nil
}

// readRecords reads the records the entries name, those not cached in
// parallel (two readers: the machine has few cores, and most reads are
// cached).
func (s *Store) readRecords(es map[string]*entry) (map[string]*Task, error) {
	records.keep(s.dir, es)
	out := make(map[string]*Task, len(es))
	var missing []*entry
	for id, e := range es {
		if t := records.get(s.dir, id, e.Record); t != nil {
			out[id] = t
		} else {
			missing = append(missing, e)
		}
	}
	got := make([]*Task, len(missing))
	errs := make([]error, len(missing))
	var wg sync.WaitGroup
	const readers = 2
	for r := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := r; i < len(missing); i += readers {
				got[i], errs[i] = readRecord(s.dir, missing[i].ID, missing[i].Record)
			}
		}()
	}
	wg.Wait()
	for i, e := range missing {
		if errors.Is(errs[i], fs.ErrNotExist) {
			return nil, &recordGoneError{path: recordPath(s.dir, e.ID, e.Record), err: errs[i]}
		}
		if errs[i] != nil {
			return nil, errs[i]
		}
		out[e.ID] = got[i]
	}
	return out, nil
}

// indexEntry is task id's entry in raw, the bytes of an index file, or nil
// when the file is not an index of a version this runner reads, does not
// parse, or has no such entry where runner writes it (then ReadTask takes
// the long way, which finds what is wrong, or the task in the archive).
// The entry is found as runner lays it out (compact JSON, the version
// first: "ID":{"id":"ID",… in the tasks object) and decoded alone; the
// file is checked for valid JSON but not decoded, a quarter of a decode's
// time with a few hundred tasks in it, and ReadTask runs several times a
// dispatch. Those bytes cannot occur elsewhere in a valid file: a
// string's own quotes are escaped, and no other object of the index is
// keyed by a task id and starts with that id. The last such entry is
// taken, as a decode keeps the last of a key given twice.
func indexEntry(dir string, raw []byte, id string) *entry {
	version, ok := leadingVersion(raw)
	if !ok || version < indexVersion || version > Version || !safeName(id) {
		return nil
	}
	// Bytes this process wrote are valid, and laid out as runner writes:
	// no key twice, none spelled otherwise. Any other bytes are checked.
	ours := lastIndex.isOurs(dir, raw)
	if !ours && !json.Valid(raw) {
		return nil
	}
	i := bytes.LastIndex(raw, []byte(`"`+id+`":{"id":"`+id+`"`))
	if i < 0 || !ours && !lastTaskKey(raw, i, id) {
		return nil
	}
	var e entry
	if json.NewDecoder(bytes.NewReader(raw[i+len(id)+3:])).Decode(&e) != nil || e.ID != id {
		return nil
	}
	return &e
}

// lastTaskKey reports whether raw[at] (raw: valid JSON) begins the key of
// the tasks object that a decode keeps for task id, so that indexEntry
// finds what a decode of the whole file finds: a key of the top-level
// "tasks" object, with no key for id after it (a decode keeps the last,
// whatever its spelling, and merges a second "tasks" object into the
// first). A file whose decode would fail or differ in a way the scan does
// not follow (a "tasks" that is no object, "version" given twice) is
// left to the decode: false.
func lastTaskKey(raw []byte, at int, id string) bool {
	depth, top, versions, found := 0, "", 0, false
	for j := 0; j < len(raw); j++ {
		switch raw[j] {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		case '"':
			end := j + 1 // the closing quote
			for end < len(raw) && raw[end] != '"' {
				if raw[end] == '\\' {
					end++
				}
				end++
			}
			colon := skipSpace(raw, end+1)
			if colon < len(raw) && raw[colon] == ':' {
				switch {
				case depth == 1:
					// A decode matches a field's name without regard to case.
					top = keyName(raw[j : end+1])
					if strings.EqualFold(top, "version") {
						versions++
					}
					if v := skipSpace(raw, colon+1); strings.EqualFold(top, "tasks") && (v >= len(raw) || raw[v] != '{') {
						return false
					}
				case depth != 2 || j < at || !strings.EqualFold(top, "tasks"):
				case j == at:
					found = true
				case keyName(raw[j:end+1]) == id:
					return false
				}
			}
			j = end
		}
	}
	return found && versions == 1
}

// skipSpace is the index of the first byte from i on that is no JSON
// white space (len(raw) if none).
func skipSpace(raw []byte, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\r' || raw[i] == '\n') {
		i++
	}
	return i
}

// keyName is the name a JSON string (quotes included) stands for.
func keyName(quoted []byte) string {
	if bytes.IndexByte(quoted, '\\') < 0 {
		return string(quoted[1 : len(quoted)-1]) // no copy when compared at once
	}
	var s string
	_ = json.Unmarshal(quoted, &s)
	return s
}

// ReadIndex is Read for a reader of the index's hot fields (status, tmux
// target, times, lineage, ports: those of an index entry): every task
// comes with those only, its Text the entry's title, until State.Task or
// FindTask asks for it, which reads its record then (a record that cannot
// be read then leaves the task as the index has it). It reads no other
// record, so its cost does not grow with the tasks the index carries: a
// dispatch's look at what is due for gc, and its plan, read it.
func (s *Store) ReadIndex(ctx context.Context) (*State, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	st, _, err := s.loadIndex()
	return st, err
}

// Counts reads only the index and counts its tasks by status: what a
// status line needs, without a task record (so its cost does not depend on
// how many tasks are retained, nor on their size). Archived tasks are all
// finished and are not counted.
func (s *Store) Counts(ctx context.Context) (map[Status]int, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	raw, err := readFile(s.Path())
	if errors.Is(err, fs.ErrNotExist) {
		return map[Status]int{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read state file %s: %w", s.Path(), err)
	}
	var ix struct {
		Version int `json:"version"`
		Tasks   map[string]struct {
			Status Status `json:"st"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal(raw, &ix); err != nil {
		return nil, &CorruptError{Path: s.Path(), Err: err}
	}
	if ix.Version < indexVersion || ix.Version > Version {
		// Another version: read it the long way (and refuse a newer one).
		st, err := s.Read(ctx)
		if err != nil {
			return nil, err
		}
		out := map[Status]int{}
		for _, t := range st.Tasks {
			out[t.Status]++
		}
		return out, nil
	}
	out := map[Status]int{}
	for _, t := range ix.Tasks {
		out[t.Status]++
	}
	return out, nil
}

// ReadTask returns task id as Read would (State.Task), reading only the
// index and that task's record: a supervisor that looks at its own task
// does not read every other task's record, so the cost does not grow with
// the number of tasks' records changed since its last look. A task the
// index does not carry (archived), an index of another version, or one
// that does not parse is read the long way (Read). An id no task has is
// an error wrapping ErrTaskNotFound.
func (s *Store) ReadTask(ctx context.Context, id string) (*Task, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if t := s.readIndexedTask(id); t != nil {
		return t, nil
	}
	st, err := s.Read(ctx)
	if err != nil {
		return nil, err
	}
	if t := st.Task(id); t != nil {
		return t, nil
	}
	return nil, &TaskNotFoundError{Ref: id}
}

// readIndexedTask is ReadTask's short way: the task from the index entry
// and its record, or nil when anything is not as expected (ReadTask then
// takes the long way, which reports what is wrong).
func (s *Store) readIndexedTask(id string) *Task {
	if !safeName(id) {
		return nil
	}
	for range 3 {
		raw, err := readFile(s.Path())
		if err != nil {
			return nil
		}
		e := indexEntry(s.dir, raw, id)
		if e == nil {
			return nil
		}
		rec, err := readRecord(s.dir, id, e.Record)
		if errors.Is(err, fs.ErrNotExist) {
			continue // superseded meanwhile: the index has moved on
		}
		if err != nil {
			return nil
		}
		t := rec.clone()
		e.applyHot(t)
		return t
	}
	return nil
}
