package notify

import (
	"fmt"
	"strings"

	"github.com/runner-cli/runner/state"
)

// statusLineOrder is the order of the status line's parts: what needs the
// user first.
var statusLineOrder = []struct {
	status state.Status
	label  string
}{
	{state.StatusNeedsInput, "needs input"},
	{state.StatusOrphaned, "orphaned"},
	{state.StatusRunning, "running"},
	{state.StatusReady, "ready"},
	{state.StatusStarting, "starting"},
	{state.StatusQueued, "queued"},
}

// StatusLine is `runner status-line`, for tmux's status bar: the counts
// of the active statuses, what needs the user first ("runner idle" when
// none is active).
func StatusLine(counts map[state.Status]int) string {
	var parts []string
	for _, p := range statusLineOrder {
		if n := counts[p.status]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, p.label))
		}
	}
	if len(parts) == 0 {
		return "runner idle"
	}
	return "runner " + strings.Join(parts, " · ")
}
