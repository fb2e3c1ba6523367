package state

import (
	"encoding/json"
	"testing"
	"time"
)

// TestEventLine: a hook event's line is what json.Marshal gives (with a
// newline), byte for byte, and fails where it fails.
func TestEventLine(t *testing.T) {
	at := time.Date(2026, 12, 2, 16, 9, 20, 49123456, time.FixedZone("x", 3600+1800))
	evs := []TaskEvent{
		{Time: at, Event: "Stop"},
		{Event: ""},
		{Time: at.UTC(), Event: "Sub<agent>&Stop \"x\"\u2028é\x00\xff", Data: json.RawMessage("{}")},
		{Time: at, Event: "Stop", Data: json.RawMessage(" {\n  \"hook_event_name\": \"Stop\",\n  \"last_assistant_message\": \"a <b> & c\u2028\u2029 \\u003c\xff\",\n  \"n\": [1, 2.5e3, true, null, {\"k\": \"v\"}]\n}\n")},
		{Time: at, Event: "Stop", Data: json.RawMessage("null")},
		{Time: at, Event: "Stop", Data: json.RawMessage("\"a string\"")},
		{Time: at, Event: "Stop", Data: json.RawMessage{}},
		{Time: at, Event: "Stop", Data: json.RawMessage("{not json")},
		{Time: at, Event: "Stop", Data: json.RawMessage("{} {}")},
		{Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), Event: "Stop"},
	}
	for i, ev := range evs {
		want, werr := json.Marshal(ev)
		got, gerr := ev.appendLine(nil)
		if (werr != nil) != (gerr != nil) {
			t.Errorf("event %d: error %v, json.Marshal's %v", i, gerr, werr)
			continue
		}
		if werr == nil && string(got) != string(want)+"\n" {
			t.Errorf("event %d:\n got %s\nwant %s", i, got, want)
		}
	}
}
