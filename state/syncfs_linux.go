package state

import (
	"os"

	"golang.org/x/sys/unix"
)

// syncFS flushes the whole file system that holds dir (syncfs(2)): one
// call instead of an fsync per file when a write creates many record
// files at once (a migration, a repair, a burst of dispatches).
func syncFS(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return unix.Syncfs(int(d.Fd()))
}

const haveSyncFS = true
