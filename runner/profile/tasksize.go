package profile

import (
	"fmt"

	"github.com/runner-cli/runner/runner/fault"
)

// CheckTaskSize refuses a task text longer than the profile's MaxTaskBytes:
// past it, delivery through the agent's input is not known to be confirmed.
// The error is a usage error (exit 2) that says the limit and suggests
// handing the agent a file to read instead.
func (p *Profile) CheckTaskSize(text string) error {
	max := p.MaxTaskBytes()
	if len(text) <= max {
		return nil
	}
	return fault.Usagef("the task is %d bytes, more than the %s (%d bytes) agent %s takes as a prompt (its max_task): save the text in a file in the project "+
		"and dispatch a short task that tells the agent to read it, e.g. \"Read SPEC.md and do what it says\" (or raise profiles.%s.max_task in the config at your own risk)",
		len(text), byteSize(max), max, p.Name, p.Name)
}

// byteSize renders n bytes as "64 KiB", "1.5 MiB" or "300 bytes".
func byteSize(n int) string {
	switch {
	case n >= 1<<20:
		return trimZero(fmt.Sprintf("%.1f", float64(n)/(1<<20))) + " MiB"
	case n >= 1<<10:
		return trimZero(fmt.Sprintf("%.1f", float64(n)/(1<<10))) + " KiB"
	}
	return fmt.Sprintf("%d bytes", n)
}

func trimZero(s string) string {
	if len(s) > 2 && s[len(s)-2:] == ".0" {
		return s[:len(s)-2]
	}
	return s
}
