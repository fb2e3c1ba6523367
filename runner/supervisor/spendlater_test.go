package supervisor

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/runner-cli/runner/runner/monitor"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/state"
)

// TestConcludeSpendLater: Claude Code runs its Stop hook before it writes
// the turn's end to its transcript. The turn's end (done, the answer) is
// recorded at once, without the spend; the spend follows as soon as the
// transcript has it, recorded by TurnSpent.
func TestConcludeSpendLater(t *testing.T) {
	s, _, _, _ := newSupervisor(t, "claude", Settings{})
	s.sig, s.AgentEnv = "SIG-42", os.Getenv
	transcript := filepath.Join(t.TempDir(), "session.jsonl")
	prompt := `{"type":"user","message":{"role":"user","content":"SIG-42 do it"},"timestamp":"2026-01-02T03:04:05.000Z"}` + "\n"
	if err := os.WriteFile(transcript, []byte(prompt), 0o600); err != nil {
		t.Fatal(err)
	}
	answer := `{"type":"assistant","message":{"id":"msg_1","content":[{"type":"text","text":"all done"}],"stop_reason":"end_turn","usage":{"input_tokens":120,"output_tokens":30}},"timestamp":"2026-01-02T03:04:06.000Z"}` + "\n"
	var atEnd TurnText
	e := ender{onEnd: func(tt TurnText) {
		atEnd = tt
		// The CLI writes what the turn used only now, after its hook.
		f, err := os.OpenFile(transcript, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Error(err)
			return
		}
		f.WriteString(answer)
		f.Close()
	}}
	hook := &profile.HookEvent{Name: "Stop", Stop: true, Answer: "all done", HasAnswer: true, Transcript: transcript}
	err := s.Conclude(t.Context(), &e, Outcome{Status: state.StatusDone, Reason: "hook", Obs: monitor.Observation{Hook: hook}})
	if err != nil {
		t.Fatal(err)
	}
	if atEnd.SpendLater == nil || atEnd.Answer != "all done" {
		t.Errorf("the end was recorded with answer %q and SpendLater %v: want the answer, the spend to follow", atEnd.Answer, atEnd.SpendLater)
	}
	if len(e.spent) != 1 || e.spent[0].Input != 120 || e.spent[0].Output != 30 || e.spent[0].Turns != 1 {
		t.Errorf("TurnSpent got %+v, want one spend of 120 in, 30 out", e.spent)
	}
}
