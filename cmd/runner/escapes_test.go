package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/state"
)

// TestHumanOutputShowsNoEscapes: a task text, a question, a reason, an
// answer and a message holding terminal control sequences (a clipboard
// write, a title, a clear screen, a C1 CSI) are printed by ps, status,
// tree, inbox and state show with the controls made visible; --json keeps
// the data exact (escaped as JSON).
func TestHumanOutputShowsNoEscapes(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{
		"RUNNER_STATE_DIR":   filepath.Join(dir, "state"),
		"RUNNER_TMUX_SOCKET": filepath.Join(dir, "no-server"),
		"HOME":               dir,
	}
	evil := "\x1b]52;c;ZXZpbA==\x07\x1b]0;pwned\x07\x1b[2J\u009b2J\r"
	s, err := state.Open(env["RUNNER_STATE_DIR"])
	if err != nil {
		t.Fatal(err)
	}
	now := clock.Now().UTC()
	err = s.Update(t.Context(), func(st *state.State) error {
		parent := &state.Task{ID: "t_evil0001", Dir: dir, Agent: "sim", Text: "task " + evil + "\nsecond line " + evil,
			Created: now.Add(-time.Minute), Question: "asks " + evil, Answer: "answer " + evil, ResultTail: "tail " + evil,
			Turns: []state.Turn{{Time: now, Summary: "summary " + evil, Answer: "answer " + evil}}}
		_ = parent.SetStatus(state.StatusDone, now, "reason "+evil)
		child := &state.Task{ID: "t_evil0002", Dir: dir, Agent: "sim", Text: "child " + evil, Parent: parent.ID, Level: 1, Created: now}
		_ = child.SetStatus(state.StatusDone, now, "child reason "+evil)
		st.Tasks[parent.ID], st.Tasks[child.ID] = parent, child
		if st.Messages == nil {
			st.Messages = map[string]*state.Message{}
		}
		st.Messages["m_evil0001"] = &state.Message{ID: "m_evil0001", From: state.SenderUser, To: child.ID, Type: "fyi",
			Text: "message " + evil, Status: state.MessageDelivered, Created: now, Delivered: now}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"ps", "--all"},
		{"status", "t_evil0001"},
		{"status", "t_evil0002"},
		{"tree", "t_evil0001"},
		{"inbox", "t_evil0002"},
		{"state", "show"},
	} {
		code, out, errOut := runStateCLI(t, env, args...)
		if code != 0 {
			t.Errorf("runner %s: exit %d: %s", strings.Join(args, " "), code, errOut)
			continue
		}
		if i := strings.IndexFunc(out+errOut, func(r rune) bool {
			return r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r < 0xa0
		}); i >= 0 {
			t.Errorf("runner %s prints a control character at %d:\n%q", strings.Join(args, " "), i, out+errOut)
		}
	}
	code, out, errOut := runStateCLI(t, env, "status", "--json", "t_evil0001")
	if code != 0 {
		t.Fatalf("status --json: %d %s", code, errOut)
	}
	var back state.Task
	if err := json.Unmarshal([]byte(out), &back); err != nil || back.Answer != "answer "+evil {
		t.Errorf("status --json does not keep the answer exact: %q (%v)", back.Answer, err)
	}
}
