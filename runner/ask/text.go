package ask

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// Writer is a Request.OnAnswer that writes each answer to w as it
// arrives, as runner ask prints it: a JSON object a line (asJSON), or a
// header line (the task, its agent, how it answered and how long it
// took) and the answer.
func Writer(w io.Writer, asJSON bool) func(Answer) {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		return func(ans Answer) { _ = enc.Encode(ans) }
	}
	return func(ans Answer) { writeText(w, ans) }
}

// writeText is Writer's text form of one answer.
func writeText(w io.Writer, ans Answer) {
	took := time.Duration(ans.ElapsedMS) * time.Millisecond
	if took >= time.Second {
		took = took.Round(100 * time.Millisecond)
	}
	switch {
	case ans.Mode == ModeMessage && ans.OK():
		fmt.Fprintf(w, "== %s (%s): no headless mode; the question was sent to it as a message\n", ans.Task, ans.Agent)
	case ans.Mode == ModeMessage:
		fmt.Fprintf(w, "== %s (%s): no headless mode, and the question could not be sent as a message: %s\n", ans.Task, ans.Agent, ans.Error)
	case ans.TimedOut:
		fmt.Fprintf(w, "== %s (%s) timed out after %s: %s\n", ans.Task, ans.Agent, took, ans.Error)
	case !ans.OK():
		fmt.Fprintf(w, "== %s (%s) failed after %s: %s\n", ans.Task, ans.Agent, took, ans.Error)
	default:
		fmt.Fprintf(w, "== %s (%s) answered in %s\n", ans.Task, ans.Agent, took)
	}
	if ans.Answer != "" {
		fmt.Fprintln(w, strings.TrimRight(ans.Answer, "\n"))
	}
	if ans.FYIError != "" {
		fmt.Fprintf(w, "   (FYI to %s not sent: %s)\n", ans.Task, ans.FYIError)
	}
}
