package spend

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/runner-cli/runner/runner/profile"
)

// TestHookEventNamesAFIFO: a hook event (the agent's to write) that names
// a FIFO as its transcript, or a session id that climbs out of its
// folder, neither hangs the reading nor leads out.
func TestHookEventNamesAFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "transcript.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	line := `{"time":"2026-01-02T03:04:05Z","event":"Stop","data":{"hook_event_name":"AfterAgent","transcript_path":"` + fifo + `","session_id":"../../../etc/passwd","prompt_response":"hi"}}`
	done := make(chan struct{})
	go func() {
		defer close(done)
		ev, ok := ReadHookEvent(line)
		if !ok {
			t.Error("the event did not parse")
		}
		if ev.Session != "" {
			t.Errorf("session id %q kept", ev.Session)
		}
		for _, name := range []string{"claude", "gemini", "qwen"} {
			p, err := profile.FindProfile(profile.Builtins(), name)
			if err != nil {
				t.Error(err)
				continue
			}
			TurnUsage(p, ev, "", os.Getenv)
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("reading the turn's spend from a FIFO hung")
	}
}
