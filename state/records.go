package state

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// A task's record file, tasks/<id>.<generation>.json, holds the whole task
// as encoding/json writes a Task. It is written once per generation that
// changed the task's bulk (text, history, turns, answer, settings, …) and
// never modified after: a new generation is a new file, durable before the
// index that names it, and the superseded one is removed once that index
// is durable. A task whose hot fields alone changed keeps its record; the
// index entry is what says where it stands.

// recordPath returns the path of task id's record of generation gen.
func recordPath(dir, id string, gen uint64) string {
	return filepath.Join(dir, "tasks", id+"."+strconv.FormatUint(gen, 10)+".json")
}

// parseRecordName splits a record file's name into its task id and
// generation; ok is false for any other file.
func parseRecordName(name string) (id string, gen uint64, ok bool) {
	rest, found := strings.CutSuffix(name, ".json")
	if !found {
		return "", 0, false
	}
	i := strings.LastIndexByte(rest, '.')
	if i < 0 || !safeName(rest[:i]) || !strings.HasPrefix(rest, TaskIDPrefix) {
		return "", 0, false
	}
	id, g := rest[:i], rest[i+1:]
	if !found {
		return "", 0, false
	}
	gen, err := strconv.ParseUint(g, 10, 64)
	return id, gen, err == nil
}

// safeName reports whether a task id can name a file: not empty, no path
// separator, not a dot name. (Ids runner makes are ValidTaskID; older
// records and tests may have others.)
func safeName(id string) bool {
	return id != "" && id != "." && id != ".." && !strings.ContainsAny(id, "/\\\x00")
}

// records caches decoded record files for the whole process: a
// supervisor's updates then read only the records that changed since its
// last one. A record file's content never changes (a new generation is a
// new file), so an entry is valid as long as its generation is the one
// asked for. Per state directory, one entry per task; load keeps only the
// tasks of the index it read (keep), so a long-lived process does not
// gather every task it ever saw.
var records = &recordCache{} // its map is made on first use: a map literal here is built in every process's init

type recordCache struct {
	mu sync.Mutex
	m  map[string]map[string]cachedRecord // dir → task id → record
}

type cachedRecord struct {
	gen uint64
	t   *Task // never handed out to be changed: clone it
}

func (c *recordCache) get(dir, id string, gen uint64) *Task {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.m[dir][id]; ok && r.gen == gen {
		return r.t
	}
	return nil
}

func (c *recordCache) put(dir, id string, gen uint64, t *Task) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.m[dir]
	if d == nil {
		d = map[string]cachedRecord{}
		if c.m == nil {
			c.m = map[string]map[string]cachedRecord{}
		}
		c.m[dir] = d
	}
	d[id] = cachedRecord{gen: gen, t: t}
}

// keep drops the cached records of dir whose task is not in ids, once
// there are clearly more of them than ids (an archived task read back
// leaves its record cached until then).
func (c *recordCache) keep(dir string, ids map[string]*entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.m[dir]
	if len(d) <= 2*len(ids)+64 {
		return
	}
	n := make(map[string]cachedRecord, len(ids))
	for id := range ids {
		if r, ok := d[id]; ok {
			n[id] = r
		}
	}
	c.m[dir] = n
}

// forget drops the cached records of dir (a repair; tests that play a new
// process).
func (c *recordCache) forget(dir string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, dir)
}

// readRecord returns task id's record of generation gen, from the cache or
// the file. The result is shared: callers clone before changing it. A
// missing file is an error wrapping fs.ErrNotExist.
func readRecord(dir, id string, gen uint64) (*Task, error) {
	if t := records.get(dir, id, gen); t != nil {
		return t, nil
	}
	p := recordPath(dir, id, gen)
	b, err := readFile(p)
	if err != nil {
		return nil, err
	}
	t := new(Task)
	if err := json.Unmarshal(b, t); err != nil {
		return nil, &CorruptError{Path: p, Err: err}
	}
	if t.ID != id {
		return nil, &CorruptError{Path: p, Err: fmt.Errorf("the record is of task %q", t.ID)}
	}
	t.Archived = false
	records.put(dir, id, gen, t)
	return t, nil
}

// writeRecord writes t as its record of generation gen: the whole file,
// then fsync unless nosync (the caller then makes it durable with syncFS).
// The caller fsyncs the tasks directory before it writes an
// index that names the file. A file of that name left by a write that
// crashed before its index is simply replaced: no index names it.
func writeRecord(dir string, t *Task, gen uint64, nosync bool) (string, error) {
	c := t.clone()
	c.Archived = false
	b, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("encode the record of task %s: %w", t.ID, err)
	}
	p := recordPath(dir, t.ID, gen)
	if err := writeFileSync(p, append(b, '\n'), !nosync); err != nil {
		return "", fmt.Errorf("write the record of task %s: %w", t.ID, err)
	}
	records.put(dir, t.ID, gen, c)
	return p, nil
}

// writeSynced creates (or truncates) path, writes data and fsyncs it,
// creating the parent directory (0700) if needed. On failure the file is
// removed.
func writeSynced(path string, data []byte) error { return writeFileSync(path, data, true) }

// writeFileSync is writeSynced, with the fsync only if sync is set.
func writeFileSync(path string, data []byte, sync bool) (err error) {
	f, err := openFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if os.IsNotExist(err) {
		if err = os.MkdirAll(filepath.Dir(path), 0o700); err == nil {
			f, err = openFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		}
	}
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(path)
		}
	}()
	if err := writeData(f, data); err != nil {
		return err
	}
	if sync {
		if err := f.Sync(); err != nil {
			return err
		}
	}
	return f.Close()
}

// syncPath fsyncs a directory, making the names created in it durable.
func syncPath(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
