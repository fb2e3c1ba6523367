package messaging

import (
	"fmt"
	"slices"
	"strings"

	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/state"
)

// Prompt is the prompt that carries a batch of messages: a header
// per message (id, sender, type) and its text, then how to answer. The
// first line names the first message's id, so the delivery check can tell
// this prompt from an earlier one. A header starts at the line's start;
// every line of a text is indented (Frame), so no text can end its
// message or forge the header of another.
func Prompt(batch []*state.Message) string {
	var b strings.Builder
	var senders []string
	for i, m := range batch {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "Message %s from %s (%s", m.ID, describeSender(m.From), m.Type)
		if len(batch) > 1 {
			fmt.Fprintf(&b, ", %d of %d", i+1, len(batch))
		}
		if m.Merged > 0 {
			fmt.Fprintf(&b, ", %d repeats merged", m.Merged)
		}
		b.WriteString("):\n")
		b.WriteString(Frame(m.Text))
		b.WriteString("\n")
		if m.From != state.SenderUser && m.From != state.SenderRunner && !slices.Contains(senders, m.From) {
			senders = append(senders, m.From)
		}
	}
	if len(senders) > 0 {
		fmt.Fprintf(&b, "\n(runner: answer a task with 'runner msg %s TEXT' if it needs an answer)\n", senders[0])
	}
	return strings.TrimRight(b.String(), "\n")
}

func describeSender(from string) string {
	switch from {
	case state.SenderUser:
		return "the user"
	case state.SenderRunner:
		return "runner"
	}
	return "task " + from
}

// FrameIndent is what each line of a message's text starts with in the
// prompt that carries it.
const FrameIndent = "  "

// Frame indents every line of text (textutil.Lines: CR, LF, VT, FF, NEL
// and the Unicode line and paragraph separators all end a line), so that
// none of it starts where a header does.
func Frame(text string) string {
	lines := textutil.Lines(strings.TrimRight(text, "\n"))
	for i, l := range lines {
		lines[i] = FrameIndent + l
	}
	return strings.Join(lines, "\n")
}
