//go:build !linux

package state

// syncFS is not available here: records are fsynced one by one.
func syncFS(dir string) error { return nil }

const haveSyncFS = false
