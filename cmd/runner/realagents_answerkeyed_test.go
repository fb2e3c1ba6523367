//go:build realagents

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runner-cli/runner/internal/mockapi"
	"github.com/runner-cli/runner/runner/dialog"
	"github.com/runner-cli/runner/state"
)

// TestRealAgentsAnswerKeyed: runner answer on a real CLI's dialog that has
// no numbered menu (issue 52). Cline CLI (3.0.65, --auto-approve false)
// asks "Approve tool call?" with "[y] Approve   [n] Deny" before the mock
// model's shell command; runner status reads the options as keys through
// the profile's key_options, and runner answer presses y once the screen
// still shows the dialog's digest: the command runs, the turn ends done.
func TestRealAgentsAnswerKeyed(t *testing.T) {
	const cli = "cline"
	turn := mockapi.Turn{Match: "KEYED-TASK", Shell: "echo keyed > keyed.txt", Text: "KEYED-DONE"}
	r := newRealRig(t, cli, []mockapi.Turn{turn}, nil)
	out, errOut, code := r.run("dispatch", r.project, "--agent", cli, "--detach", "--permissions", "ask", "--timeout", "6m", "--ready-timeout", "3m",
		"please do the KEYED-TASK now")
	if code != 0 {
		t.Fatalf("dispatch: exit %d\n%s%s", code, out, errOut)
	}
	id := strings.TrimSpace(out)
	if _, errOut, code := r.run("wait", "--input", "--timeout", "5m", id); code != 4 {
		logTask(t, r.status(id))
		t.Fatalf("wait --input: exit %d, want 4 (the approval)\n%s", code, errOut)
	}
	out, _, _ = r.run("status", "--json", id)
	var st struct {
		Status string         `json:"status"`
		Dialog *dialog.Dialog `json:"dialog"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil || st.Dialog == nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	d := st.Dialog
	t.Logf("the dialog: %+v", d)
	if !d.Keyed || len(d.Options) != 2 || d.Options[0] != (dialog.Option{Key: "y", Label: "Approve"}) || d.Options[1] != (dialog.Option{Key: "n", Label: "Deny"}) {
		t.Fatalf("the approval's options: %+v, want keyed y Approve, n Deny", d)
	}
	if _, errOut, code := r.run("answer", id, "y", "--digest", "0123456789abcdef"); code != 5 {
		t.Errorf("a stale digest: exit %d, want 5\n%s", code, errOut)
	}
	out, errOut, code = r.run("answer", id, "y", "--digest", d.Digest, "--json")
	if code != 0 || !strings.Contains(out, `"result": "pressed"`) {
		t.Fatalf("answer y: exit %d\n%s%s", code, out, errOut)
	}
	if _, errOut, code := r.run("wait", "--timeout", "150s", id); code != 0 {
		task := r.status(id)
		logTask(t, task)
		t.Fatalf("after the answer: wait exit %d, status %s\n%s", code, task.Status, errOut)
	}
	if b, err := os.ReadFile(filepath.Join(r.project, "keyed.txt")); err != nil || strings.TrimSpace(string(b)) != "keyed" {
		t.Errorf("the approved command's file: %q, %v", b, err)
	}
	if task := r.status(id); task.Status != state.StatusDone {
		t.Errorf("status %s, want done", task.Status)
	}
}
