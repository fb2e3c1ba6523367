package tmuxctl

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// MinVersion is the oldest tmux runner works with: pane options
// (set-option -p, used for wait marks) came in tmux 3.0.
const MinVersion = "3.0"

// Version runs `tmux -V` and returns the version it prints without the
// "tmux " prefix, e.g. "3.4", "3.3a" or "next-3.5". It needs no server.
func (c *Client) Version(ctx context.Context) (string, error) {
	out, err := c.run(ctx, nil, "-V")
	if err != nil {
		return "", fmt.Errorf("tmux version: %w", err)
	}
	line := strings.TrimSpace(out)
	v, ok := strings.CutPrefix(line, "tmux ")
	if !ok || v == "" {
		return "", fmt.Errorf("tmux version: unexpected output of %s -V: %q", c.bin, line)
	}
	return v, nil
}

// CheckVersion reports whether a version printed by Version is at least
// MinVersion. A version with no recognisable number (a build from source
// such as "master") is accepted.
func CheckVersion(v string) error {
	major, minor, ok := parseVersion(v)
	if !ok {
		return nil
	}
	wantMajor, wantMinor, _ := parseVersion(MinVersion)
	if major < wantMajor || major == wantMajor && minor < wantMinor {
		return fmt.Errorf("tmux %s is older than %s, the oldest runner works with (it needs pane options)", v, MinVersion)
	}
	return nil
}

// parseVersion reads MAJOR.MINOR from the first digit of v on ("3.3a",
// "next-3.5", "openbsd-7.4" is read as 7.4).
func parseVersion(v string) (major, minor int, ok bool) {
	i := strings.IndexAny(v, "0123456789")
	if i < 0 {
		return 0, 0, false
	}
	v = v[i:]
	maj, rest, _ := strings.Cut(v, ".")
	major, err := strconv.Atoi(maj)
	if err != nil {
		return 0, 0, false
	}
	j := 0
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	if j > 0 {
		minor, _ = strconv.Atoi(rest[:j])
	}
	return major, minor, true
}
