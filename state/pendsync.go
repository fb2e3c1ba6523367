// Making a write's files durable together: the records a write creates
// and the temporary index are fsynced at once, not one after the other,
// so that the file system commits them in one journal transaction.

package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// pendingSync holds what a write created and has not made durable yet:
// files still open (so that a write-back error is reported to their
// fsync) and directories whose new names must be made durable. run
// fsyncs them all at once, with the temporary index; the index is
// renamed into place only after every one succeeded, so it never names a
// file that is not durable.
type pendingSync struct {
	files []*os.File
	dirs  []string
}

// run fsyncs every pending file and directory and calls also (the
// temporary index's fsync), all at once, and closes the files. It returns
// the first error.
func (p *pendingSync) run(also func() error) error {
	jobs := make([]func() error, 0, len(p.files)+len(p.dirs)+1)
	for _, f := range p.files {
		jobs = append(jobs, func() error {
			if err := f.Sync(); err != nil {
				return fmt.Errorf("fsync %s: %w", f.Name(), err)
			}
			return nil
		})
	}
	for _, d := range p.dirs {
		jobs = append(jobs, func() error {
			if err := syncPath(d); err != nil {
				return fmt.Errorf("fsync %s: %w", d, err)
			}
			return nil
		})
	}
	jobs = append(jobs, also)
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	for i, job := range jobs[1:] {
		wg.Go(func() { errs[i+1] = job() })
	}
	errs[0] = jobs[0]()
	wg.Wait()
	for _, f := range p.files {
		if err := f.Close(); err != nil && errs[0] == nil {
			errs[0] = fmt.Errorf("close %s: %w", f.Name(), err)
		}
	}
	p.files, p.dirs = nil, nil
	return errors.Join(errs...)
}

// abort closes the files run did not (a write that failed before its
// index): they are not named by any index.
func (p *pendingSync) abort() {
	for _, f := range p.files {
		f.Close()
	}
	p.files, p.dirs = nil, nil
}

// writeRecordPending writes t as its record of generation gen, as
// writeRecord does, but leaves the file open in p for run to fsync.
func writeRecordPending(dir string, t *Task, gen uint64, p *pendingSync) error {
	c := t.clone()
	c.Archived = false
	b, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("encode the record of task %s: %w", t.ID, err)
	}
	path := recordPath(dir, t.ID, gen)
	f, err := openFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if os.IsNotExist(err) {
		if err = os.MkdirAll(filepath.Dir(path), 0o700); err == nil {
			f, err = openFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		}
	}
	if err == nil {
		if err = writeData(f, append(b, '\n')); err != nil {
			f.Close()
			os.Remove(path)
		}
	}
	if err != nil {
		return fmt.Errorf("write the record of task %s: %w", t.ID, err)
	}
	p.files = append(p.files, f)
	records.put(dir, t.ID, gen, c)
	return nil
}
