package answer

import (
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/runner/dialog"
	"github.com/runner-cli/runner/state"
)

// TestWriteDialog: the question (escapes made visible), the options and
// the command to answer; a dialog with no options gives no command.
func TestWriteDialog(t *testing.T) {
	var b strings.Builder
	WriteDialog(&b, "t_a", &dialog.Dialog{Question: "Ship \x1b[1mit?", Digest: "0123abcd",
		Options: []dialog.Option{{Key: "1", Label: "Yes"}, {Key: "2", Label: "No"}}})
	lines := strings.Split(b.String(), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[0], "dialog    Ship ") || !strings.HasSuffix(lines[0], "it? (digest 0123abcd)") ||
		strings.Contains(lines[0], "\x1b") || lines[1] != "   1. Yes" || lines[2] != "   2. No" ||
		lines[3] != "          runner answer t_a KEY --digest 0123abcd" {
		t.Errorf("got %q", lines)
	}
	b.Reset()
	WriteDialog(&b, "t_a", &dialog.Dialog{Question: "Continue?", Digest: "ff"})
	if b.String() != "dialog    Continue? (digest ff)\n" {
		t.Errorf("got %q", b.String())
	}
}

// TestWriteReceipts: a line a receipt, "-" for no one.
func TestWriteReceipts(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.Local)
	var b strings.Builder
	WriteReceipts(&b, &state.Task{Answers: []state.AnswerReceipt{
		{Op: "op1", Option: "2", Label: "No", Digest: "ff", By: "ann", At: at, Result: state.AnswerPressed},
		{Op: "op2", Option: "1", Label: "Yes", Digest: "ee", At: at, Result: state.AnswerPressed}}})
	want := "answer    05:06:07.000  option 2 \"No\" pressed by ann (op op1, digest ff)\n" +
		"answer    05:06:07.000  option 1 \"Yes\" pressed by - (op op2, digest ee)\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

// TestWriteReceipt: what was pressed; for a duplicate, when it was.
func TestWriteReceipt(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.Local)
	rc := Receipt{Task: "t_a", AnswerReceipt: state.AnswerReceipt{Op: "op1", Option: "2", Label: "No", Digest: "ff", At: at, Result: state.AnswerPressed}}
	var b strings.Builder
	WriteReceipt(&b, rc)
	rc.Duplicate = true
	WriteReceipt(&b, rc)
	want := "t_a: option 2 \"No\" pressed (op op1, digest ff)\n" +
		"t_a: op op1 was answered at 2026-03-04 05:06:07: option 2 \"No\" pressed (nothing pressed now)\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}
