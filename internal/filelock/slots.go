package filelock

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
)

// Slot takes one of n slots shared by every process of the machine: an
// flock on one of the files slot.0 … slot.N-1 in dir (which must exist).
// A free slot is taken at once; with all of them held it waits, for ctx
// only, in the kernel's queue of one of them (chosen at random, so the
// waiters spread over the slots). Release gives the slot back; a process
// that dies gives back its slots with its descriptors.
func Slot(ctx context.Context, dir string, n int) (release func(), err error) {
	first := rand.IntN(n)
	for i := range n {
		if release, ok := TryLock(slotPath(dir, (first+i)%n)); ok {
			return release, nil
		}
	}
	return Lock(ctx, slotPath(dir, first), false, 0)
}

func slotPath(dir string, i int) string { return filepath.Join(dir, fmt.Sprintf("slot.%d", i)) }
