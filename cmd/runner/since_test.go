package main

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/runner/fault"
)

// TestParseSince: the one reading of --since for events and usage. A
// negative duration (a window reaching into the future, which matched
// nothing and exited 0 in events) is a usage error, as anything unreadable.
func TestParseSince(t *testing.T) {
	now := clock.Now()
	stamp := now.UTC().Add(-3 * time.Hour).Truncate(time.Second)
	for _, tc := range []struct {
		in      string
		want    time.Time // zero: an error
		errText string
	}{
		{in: "1h", want: now.Add(-time.Hour)},
		{in: "0s", want: now},
		{in: stamp.Format(time.RFC3339), want: stamp},
		{in: "-1h", errText: "not negative"},
		{in: "-5h", errText: "not negative"},
		{in: "yesterday", errText: "give a duration (1h)"},
		{in: "1d", errText: "give a duration"},
	} {
		got, err := parseSince(tc.in, "1h")
		if tc.errText != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errText) {
				t.Errorf("parseSince(%q) = %v, %v; want an error with %q", tc.in, got, err, tc.errText)
				continue
			}
			if !errors.Is(err, fault.ErrUsage) {
				t.Errorf("parseSince(%q): %v is no usage error (exit 2)", tc.in, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseSince(%q): %v", tc.in, err)
			continue
		}
		// clock.Now moves between the two readings: allow a minute.
		if d := got.Sub(tc.want); d < -time.Minute || d > time.Minute {
			t.Errorf("parseSince(%q) = %v, want about %v", tc.in, got, tc.want)
		}
	}
}
