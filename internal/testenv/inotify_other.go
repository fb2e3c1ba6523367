//go:build !linux

package testenv

import "errors"

// InotifyInstances is Linux's count of a process's inotify instances:
// elsewhere there is none to count (the caller skips).
func InotifyInstances() (int, error) {
	return 0, errors.New("no inotify here")
}
