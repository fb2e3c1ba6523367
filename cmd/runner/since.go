package main

import (
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/runner/fault"
)

// parseSince reads a --since value, the one reading of every command that
// takes one (events, usage): how long ago (a duration, not negative) or a
// time in RFC 3339. Anything else is a usage error (exit 2); example is the
// duration the message suggests (1h for events, 24h for usage).
func parseSince(s, example string) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return time.Time{}, fault.Usagef("--since %q: a duration says how long ago and is not negative: give %s, or a time (2026-11-27T06:00:00Z)", s, example)
		}
		return clock.Now().Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Time{}, fault.Usagef("--since %q: give a duration (%s) or a time (2026-11-27T06:00:00Z)", s, example)
}
