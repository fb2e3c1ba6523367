package profile

import "testing"

// TestHookEventSessionStaysInItsFolder: a hook event (the agent's to
// write) whose session id climbs out of its folder has none: the id names
// files (a session's chat, a rollout). runner/spend's
// TestHookEventNamesAFIFO reads the transcript such an event names.
func TestHookEventSessionStaysInItsFolder(t *testing.T) {
	ev, ok := ParseHookEvent(`{"time":"2026-01-02T03:04:05Z","event":"Stop","data":{"hook_event_name":"Stop","transcript_path":"/tmp/t.jsonl","session_id":"../../../etc/passwd"}}`)
	if !ok {
		t.Fatal("the event did not parse")
	}
	if ev.Session != "" {
		t.Errorf("session id %q kept", ev.Session)
	}
}
