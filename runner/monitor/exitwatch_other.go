//go:build !linux && !darwin && !freebsd

package monitor

// exitNotify has no pidfd outside Linux: ok is false and the caller checks
// liveness its own way (a slow poll).
func exitNotify(pid int) (exited <-chan struct{}, stop func(), ok bool) { return nil, nil, false }
