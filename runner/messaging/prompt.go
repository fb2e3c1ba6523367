package messaging

import (
	"fmt"
	"slices"
	"strings"

	"github.com/runner-cli/runner/state"
)

// Prompt is the prompt that carries a batch of messages: a header
// per message (id, sender, type) and its text, then how to answer. The
// first line names the first message's id, so the delivery check can tell
// this prompt from an earlier one.
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
		b.WriteString(strings.TrimRight(m.Text, "\n"))
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
