// Package textutil holds the few string helpers every package of the module
// needs, once: the first line of a text (whole, or clipped as a headline),
// the last lines of a text, clipping to a size (in runes or in bytes),
// wrapping (Wrap), an age and the dash that stands for an empty table cell;
// terminal escapes stripped from a screen (StripEscapes) or shown, not
// obeyed, in text a person reads (Visible, VisibleLine, VisibleWriter);
// and a writer that keeps only the head of a flood (HeadWriter). It
// imports only the standard library, so the leaves (gitsnap, state) can
// use it too.
package textutil

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// FirstLine returns the first non-blank line of s, trimmed.
func FirstLine(s string) string {
	for line := range strings.Lines(s) {
		if l := strings.TrimSpace(line); l != "" {
			return l
		}
	}
	return ""
}

// Headline is s's first non-blank line clipped to n runes: a text as one
// line of a table, a log line or a record's reason.
func Headline(s string, n int) string { return ClipRunes(FirstLine(s), n) }

// ClipRunes cuts s to at most n runes, ending in "…" when cut (white
// space the cut leaves before it is dropped).
func ClipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimRight(string(r[:max(n-1, 0)]), " \t") + "…"
}

// ClipBytes cuts s to at most n bytes at a rune boundary, ending in "…"
// when cut.
func ClipBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := max(n-len("…"), 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// LastLines returns the last n lines of s, blank lines at its end dropped.
func LastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return strings.Join(lines[max(len(lines)-n, 0):], "\n")
}

// OrDash returns s, or "-" when s is empty: a table cell never blank.
func OrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Age formats how long ago t was, for tables.
func Age(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(d.Seconds())) + "s"
	case d < time.Hour:
		return strconv.Itoa(int(d.Minutes())) + "m"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d.Hours())) + "h"
	}
	return strconv.Itoa(int(d.Hours()/24)) + "d"
}
