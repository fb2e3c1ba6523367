// Usage limits: the CLI's word that its provider's usage or rate limit
// ended a turn, and when it resets.

package profile

import (
	"strconv"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/textutil"
)

// LimitLine returns the first line of text (a turn's answer from its hook)
// that one of p's Limited patterns matches.
func (p *Profile) LimitLine(text string) (string, bool) {
	c := p.patterns()
	if c == nil || len(c.limited) == 0 {
		return "", false
	}
	for _, l := range strings.Split(text, "\n") {
		for _, re := range c.limited {
			if re.MatchString(l) {
				return strings.TrimSpace(l), true
			}
		}
	}
	return "", false
}

// limitError matches an API error's words for a usage or rate limit.
var limitError = textutil.LazyRegexp(`(?i)\b429\b|quota|rate.?limit|usage limit|too many requests|RESOURCE_EXHAUSTED`)

// IsLimitError reports whether an error a turn ended on, as the CLI's
// hook gave it (not a screen line), is its provider's usage or rate limit.
func IsLimitError(text string) bool { return limitError.Re().MatchString(text) }

var (
	// "|1764244800": Claude Code's "Claude AI usage limit reached|<epoch>".
	resetEpoch = textutil.LazyRegexp(`\|(\d{10})\b`)
	// "in 20s", "in 5 minutes", "in 1h 30m", "in 2 days 3 hours 5 minutes".
	resetIn   = textutil.LazyRegexp(`(?i)\bin\s+((?:\d+\s*(?:days?|d|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)\b[\s,]*(?:and\s+)?)+)`)
	resetUnit = textutil.LazyRegexp(`(?i)(\d+)\s*(days?|d|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)\b`)
	// "at 3:04 PM", "resets 3am", "reset at 15:04", "until 9pm (Europe/Berlin)".
	resetClock = textutil.LazyRegexp(`(?i)\b(?:at|resets?|until)\s+(\d{1,2})(?::(\d{2}))?\s*([ap]\.?m\.?)?(?:\s*\(([A-Za-z_]+(?:/[A-Za-z_+-]+)+)\))?`)
)

// ParseReset reads when a usage limit resets from the CLI's words on line,
// as of now: a Unix time after "|" (Claude Code's record), a span ("try
// again in 20s", "in 1h 30m", "in 2 days 3 hours"), or a time of day
// ("resets 3am", "try again at 3:04 PM", "at 15:04", with an IANA zone in
// parentheses, else local time; the next such time after now). ok is
// false when the line gives none.
func ParseReset(line string, now time.Time) (time.Time, bool) {
	if m := resetEpoch.Re().FindStringSubmatch(line); m != nil {
		if sec, err := strconv.ParseInt(m[1], 10, 64); err == nil {
			return clock.Outside(time.Unix(sec, 0)), true
		}
	}
	if m := resetIn.Re().FindStringSubmatch(line); m != nil {
		var d time.Duration
		for _, u := range resetUnit.Re().FindAllStringSubmatch(m[1], -1) {
			n, err := strconv.Atoi(u[1])
			if err != nil {
				continue
			}
			switch unit := strings.ToLower(u[2]); {
			case strings.HasPrefix(unit, "d"):
				d += time.Duration(n) * 24 * time.Hour
			case strings.HasPrefix(unit, "h"):
				d += time.Duration(n) * time.Hour
			case strings.HasPrefix(unit, "m"):
				d += time.Duration(n) * time.Minute
			default:
				d += time.Duration(n) * time.Second
			}
		}
		if d > 0 {
			return now.Add(d), true
		}
	}
	for _, m := range resetClock.Re().FindAllStringSubmatch(line, -1) {
		h, _ := strconv.Atoi(m[1])
		min := 0
		if m[2] != "" {
			min, _ = strconv.Atoi(m[2])
		}
		ampm := strings.ToLower(strings.ReplaceAll(m[3], ".", ""))
		if m[2] == "" && ampm == "" {
			continue // "at 3": not a time of day
		}
		switch {
		case ampm != "" && (h < 1 || h > 12), h > 23, min > 59:
			continue
		case ampm == "pm" && h < 12:
			h += 12
		case ampm == "am" && h == 12:
			h = 0
		}
		loc := now.Location()
		if m[4] != "" {
			if l, err := time.LoadLocation(m[4]); err == nil {
				loc = l
			}
		}
		n := now.In(loc)
		at := time.Date(n.Year(), n.Month(), n.Day(), h, min, 0, 0, loc)
		switch {
		case m[2] != "" && !at.After(n) && n.Sub(at) < time.Minute:
			// A time to the minute (Codex's "try again at 8:13 AM" at
			// 8:13:12): the end of that minute, not tomorrow.
			at = at.Add(time.Minute)
		case !at.After(n):
			at = at.AddDate(0, 0, 1)
		}
		return at, true
	}
	return time.Time{}, false
}
