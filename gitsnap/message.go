// A snapshot's commit message: what it says of the snapshot, and reading
// it back.

package gitsnap

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// oneLine turns s into a single trimmed line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// The snapshot commit message: a subject, then "Runner-*" lines that List
// parses back.
func formatMessage(s *Snapshot) string {
	var b strings.Builder
	fmt.Fprintf(&b, "runner snapshot %s", s.ID)
	if s.Label != "" {
		fmt.Fprintf(&b, ": %s", s.Label)
	}
	b.WriteString("\n\n")
	fmt.Fprintf(&b, "Runner-Snapshot: %s\n", s.ID)
	if s.Label != "" {
		fmt.Fprintf(&b, "Runner-Label: %s\n", s.Label)
	}
	fmt.Fprintf(&b, "Runner-Time: %s\n", s.Time.Format(time.RFC3339Nano))
	base := s.Base
	if base == "" {
		base = "none"
	}
	fmt.Fprintf(&b, "Runner-Base: %s\n", base)
	branch := s.Branch
	if branch == "" {
		branch = "(detached)"
	}
	fmt.Fprintf(&b, "Runner-Branch: %s\n", branch)
	fmt.Fprintf(&b, "Runner-Dirty: %t\n", s.Dirty)
	fmt.Fprintf(&b, "Runner-Changes: added=%d modified=%d deleted=%d\n", s.Counts.Added, s.Counts.Modified, s.Counts.Deleted)
	return b.String()
}

// parseMessage fills s from a snapshot commit message. It reports false when
// the message is not one of ours.
func parseMessage(msg string, s *Snapshot) bool {
	ok := false
	for _, line := range strings.Split(msg, "\n") {
		k, v, found := strings.Cut(line, ": ")
		if !found || !strings.HasPrefix(k, "Runner-") {
			continue
		}
		switch k {
		case "Runner-Snapshot":
			ok = v == s.ID
		case "Runner-Label":
			s.Label = v
		case "Runner-Time":
			if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
				s.Time = t
			}
		case "Runner-Base":
			if v != "none" {
				s.Base = v
			}
		case "Runner-Branch":
			if v != "(detached)" {
				s.Branch = v
			}
		case "Runner-Dirty":
			s.Dirty = v == "true"
		case "Runner-Changes":
			for _, kv := range strings.Fields(v) {
				name, num, _ := strings.Cut(kv, "=")
				n, _ := strconv.Atoi(num)
				switch name {
				case "added":
					s.Counts.Added = n
				case "modified":
					s.Counts.Modified = n
				case "deleted":
					s.Counts.Deleted = n
				}
			}
		}
	}
	return ok
}
