// Package atomicfile writes files by a rename, so that no reader ever sees
// half of one: the one way runner replaces a file (the state's own
// snapshot, which keeps the previous one between the write and the
// rename, is state's; git's index, replaced under index.lock as git does,
// is gitsnap's).
package atomicfile

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Write writes data to path with perm: to a new temporary file beside it
// (its directory made, 0700, when missing), renamed over path. With sync,
// the file is synced before the rename and its directory after, so the
// file is durable once Write returns. On error path is unchanged and no
// temporary file is left.
func Write(path string, data []byte, perm fs.FileMode, sync bool) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if perm != 0o600 { // CreateTemp's
		if err := f.Chmod(perm); err != nil {
			return err
		}
	}
	if _, err := f.Write(data); err != nil {
		return err
	}
	if sync {
		if err := f.Sync(); err != nil {
			return err
		}
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	if !sync {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}
