package hookevent

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestRecordName: the event's name and data are those of the CLI's JSON
// decoded whole (the decode before issue 51), for members of any kind, a
// name escaped, twice or in other case, input that is no object, and JSON
// over several lines (recorded on one).
func TestRecordName(t *testing.T) {
	dir, getenv := stateDir(t, "")
	ins := []string{
		`{"hook_event_name":"SubagentStop","x":{"y":[1,2,"z"]}}`,
		`{"hook_event_name":null}`, `{"hook_event_name":5}`, `{"hook_event_name":""}`,
		`{"HOOK_EVENT_NAME":"Upper"}`, `{"hook_event_name":"A","hook_event_name":"B"}`,
		`{"hook_event_name":"Sub\u0041gent \ud83d\ude00 \u2028"}`, `{"hook_event_name":"bad \xff utf-8"}`,
		`[1,2]`, `null`, `"Stop"`, "{\n  \"hook_event_name\": \"Stop\",\n  \"text\": \"a <b> & c\"\n}\n", `{} {}`, ``,
	}
	for _, in := range ins {
		if err := Record(getenv, strings.NewReader(in), "t_name0001", ""); err != nil {
			t.Fatalf("%q: %v", in, err)
		}
	}
	evs := events(t, dir, "t_name0001")
	if len(evs) != len(ins) {
		t.Fatalf("%d events for %d inputs", len(evs), len(ins))
	}
	for i, in := range ins {
		// The decode before: the whole JSON into a map of any.
		name, data := "Stop", json.RawMessage(nil)
		var obj map[string]any
		if json.Unmarshal([]byte(in), &obj) == nil {
			if n, ok := obj["hook_event_name"].(string); ok {
				name = n
			}
			var err error
			if data, err = json.Marshal(json.RawMessage(in)); err != nil {
				t.Fatal(err)
			}
		}
		if evs[i].Event != name || !bytes.Equal(evs[i].Data, data) {
			t.Errorf("%q: event %q, data %s; want %q, %s", in, evs[i].Event, evs[i].Data, name, data)
		}
	}
}
