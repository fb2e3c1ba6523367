package answer

import (
	"fmt"
	"io"
	"time"

	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/runner/dialog"
	"github.com/runner-cli/runner/state"
)

// WriteDialog writes the dialog d task id waits on as runner status
// prints it: the question and digest, an option a line, and the answer
// command to run.
func WriteDialog(w io.Writer, id string, d *dialog.Dialog) {
	fmt.Fprintf(w, "dialog    %s (digest %s)\n", textutil.VisibleLine(d.Question), d.Digest)
	for _, o := range d.Options {
		fmt.Fprintf(w, "  %2s. %s\n", o.Key, textutil.VisibleLine(o.Label))
	}
	if len(d.Options) > 0 {
		fmt.Fprintf(w, "          runner answer %s KEY --digest %s\n", id, d.Digest)
	}
}

// WriteReceipts writes the receipts of t's answers as runner status
// prints them, a line each, in local time.
func WriteReceipts(w io.Writer, t *state.Task) {
	for _, r := range t.Answers {
		by := r.By
		if by == "" {
			by = "-"
		}
		fmt.Fprintf(w, "answer    %s  option %s %q %s by %s (op %s, digest %s)\n", r.At.Local().Format("15:04:05.000"),
			r.Option, textutil.VisibleLine(r.Label), r.Result, textutil.VisibleLine(by), r.Op, r.Digest)
	}
}

// WriteReceipt writes an answer's receipt as runner answer prints it:
// what was pressed, or, for an operation answered before, when and what.
func WriteReceipt(w io.Writer, rc Receipt) {
	if rc.Duplicate {
		fmt.Fprintf(w, "%s: op %s was answered at %s: option %s %q %s (nothing pressed now)\n", rc.Task, rc.Op,
			rc.At.Local().Format(time.DateTime), rc.Option, rc.Label, rc.Result)
		return
	}
	fmt.Fprintf(w, "%s: option %s %q %s (op %s, digest %s)\n", rc.Task, rc.Option, rc.Label, rc.Result, rc.Op, rc.Digest)
}
