// Package clock is the module's one wall clock: every time runner records,
// prunes by, or compares with a recorded time is read here, never from
// time.Now, so that the whole test suite can run with the clock shifted
// (go test -tags runner_clockahead ./...: a year and a day ahead). A test
// that fixes a date then fails today, not on the day the date goes stale.
//
// Times that come from outside runner's process tree (a file's mtime, a
// CLI's transcript, tmux, git) are on the real clock: Outside brings one
// onto this clock before it is compared with Now. Times handed back to the
// system (a deadline for a context or a connection, a file's mtime) go
// through Real. Durations (timers, tickers, sleeps) need neither.
package clock

import "time"

// Offset is how far this build's clock runs ahead of the system's: zero,
// unless the build has the runner_clockahead tag.
const Offset = offset

// Now is the current time on runner's clock.
func Now() time.Time { return time.Now().Add(offset) }

// Since is the time elapsed since t, a time on runner's clock.
func Since(t time.Time) time.Duration { return Now().Sub(t) }

// Until is the duration until t, a time on runner's clock.
func Until(t time.Time) time.Duration { return t.Sub(Now()) }

// Outside brings a time read from outside (the system's clock: an mtime, a
// timestamp a CLI or tmux wrote) onto runner's clock.
func Outside(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.Add(offset)
}

// Real takes a time on runner's clock back to the system's, for a deadline
// or an mtime handed to the system.
func Real(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.Add(-offset)
}

// Deadline is the time d from now on the system's clock: a deadline for a
// connection or a file, which the system compares with its own clock.
func Deadline(d time.Duration) time.Time { return time.Now().Add(d) }
