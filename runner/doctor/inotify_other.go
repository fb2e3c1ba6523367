//go:build !linux

package doctor

// systemInotifyCheck: inotify is Linux's; elsewhere fsnotify watches with
// kqueue, which has no per-user instance limit to check.
func systemInotifyCheck() (Check, bool) { return Check{}, false }
