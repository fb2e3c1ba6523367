package messaging

import (
	"strings"
	"testing"

	"github.com/runner-cli/runner/state"
)

func TestPrompt(t *testing.T) {
	batch := []*state.Message{
		{ID: "m_aaaa1111", From: "t_kid10000", Type: state.MessageResult, Text: "tests pass\n"},
		{ID: "m_bbbb2222", From: "user", Type: state.MessageRequest, Text: "also check lint", Merged: 2},
	}
	got := Prompt(batch)
	want := `Message m_aaaa1111 from task t_kid10000 (result, 1 of 2):
tests pass

Message m_bbbb2222 from the user (request, 2 of 2, 2 repeats merged):
also check lint

(runner: answer a task with 'runner msg t_kid10000 TEXT' if it needs an answer)`
	if got != want {
		t.Errorf("Prompt:\n%s\nwant:\n%s", got, want)
	}
	if got := Prompt(batch[1:]); !strings.HasPrefix(got, "Message m_bbbb2222 from the user (request, 2 repeats merged):\n") || strings.Contains(got, "runner msg") {
		t.Errorf("single user message:\n%s", got)
	}
}
