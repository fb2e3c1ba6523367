package testenv

import (
	"os"
	"path/filepath"
	"strings"
)

// InotifyInstances counts this process's open inotify instances, from
// /proc/self/fd (an error where there is none: the caller skips). A test
// holds with it that a watch took none, whose teardown the process's exit
// would wait for.
func InotifyInstances() (int, error) {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && strings.Contains(l, "inotify") {
			n++
		}
	}
	return n, nil
}
