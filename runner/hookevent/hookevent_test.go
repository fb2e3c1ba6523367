package hookevent

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/importcheck"
	"github.com/runner-cli/runner/runner/notice"
	"github.com/runner-cli/runner/state"
)

func TestImports(t *testing.T) {
	importcheck.Only(t, ".", "internal/clock", "runner/notice", "state")
}

// stateDir is a state directory for a test, and the getenv naming it
// (and task, the pane's RUNNER_TASK_ID, when not "").
func stateDir(t *testing.T, task string) (string, func(string) string) {
	dir := t.TempDir()
	return dir, func(k string) string {
		switch k {
		case "RUNNER_STATE_DIR":
			return dir
		case "RUNNER_TASK_ID":
			return task
		}
		return ""
	}
}

// events are the events recorded for task in dir.
func events(t *testing.T, dir, task string) []state.TaskEvent {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "events", task+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []state.TaskEvent
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var ev state.TaskEvent
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		out = append(out, ev)
	}
	return out
}

// TestRecord: the event's name is the one given, else the JSON's
// hook_event_name, else Stop; the JSON is kept as the event's data, and
// input that is no JSON is dropped; the task is --task, else the pane's.
func TestRecord(t *testing.T) {
	dir, getenv := stateDir(t, "t_pane0001")
	for _, tc := range []struct{ task, name, in string }{
		{"t_flag0001", "", `{"hook_event_name":"SubagentStop","x":1}`},
		{"t_flag0001", "AfterAgent", `{"hook_event_name":"SubagentStop"}`},
		{"t_flag0001", "", `not json`},
		{"", "", `{}`},
	} {
		if err := Record(getenv, strings.NewReader(tc.in), tc.task, tc.name); err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
	}
	evs := events(t, dir, "t_flag0001")
	if len(evs) != 3 || evs[0].Event != "SubagentStop" || evs[1].Event != "AfterAgent" || evs[2].Event != "Stop" {
		t.Fatalf("events %+v", evs)
	}
	if string(evs[0].Data) != `{"hook_event_name":"SubagentStop","x":1}` || evs[2].Data != nil || evs[0].Time.IsZero() {
		t.Errorf("data %s, %s; time %v", evs[0].Data, evs[2].Data, evs[0].Time)
	}
	if pane := events(t, dir, "t_pane0001"); len(pane) != 1 || pane[0].Event != "Stop" {
		t.Errorf("the pane's task's events %+v", pane)
	}
}

// TestRecordRefuses: no task, or no task id, is an error that says what
// to pass, and writes nothing.
func TestRecordRefuses(t *testing.T) {
	dir, getenv := stateDir(t, "")
	if err := Record(getenv, strings.NewReader("{}"), "", ""); err == nil || !strings.Contains(err.Error(), "pass --task ID") {
		t.Errorf("no task: %v", err)
	}
	if err := Record(getenv, strings.NewReader("{}"), "../x", ""); err == nil {
		t.Error("a task id with a path in it was recorded")
	}
	if _, err := os.Stat(filepath.Join(dir, "events")); err == nil {
		t.Error("an events directory was made for nothing")
	}
}

// TestRecordNoInput: a hook whose input never ends is recorded after
// the bound, without its data.
func TestRecordNoInput(t *testing.T) {
	defer func(w time.Duration) { inputWait = w }(inputWait)
	inputWait = 10 * time.Millisecond
	dir, getenv := stateDir(t, "")
	r, w := io.Pipe()
	defer w.Close()
	if err := Record(getenv, r, "t_wait0001", ""); err != nil {
		t.Fatal(err)
	}
	if evs := events(t, dir, "t_wait0001"); len(evs) != 1 || evs[0].Event != "Stop" || evs[0].Data != nil {
		t.Errorf("events %+v", evs)
	}
}

// TestContext: the notices offered to the task are its hook's output,
// once; none offered is nil; a bad task id is an error.
func TestContext(t *testing.T) {
	dir, getenv := stateDir(t, "t_ctx00001")
	if out, err := Context(getenv, strings.NewReader("{}"), "", "PostToolUse"); out != nil || err != nil {
		t.Fatalf("nothing offered: %q, %v", out, err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "events"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "events", "t_ctx00001.jsonl"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	hooks := notice.Dir(filepath.Join(dir, "hooks", "t_ctx00001"))
	if err := notice.Offer(hooks, notice.Notice{Message: "m_one", Merged: 1, Text: "Message m_one from runner: shared.txt"}); err != nil {
		t.Fatal(err)
	}
	out, err := Context(getenv, strings.NewReader("{}"), "", "PostToolUse")
	if err != nil || !strings.Contains(string(out), "shared.txt") || !strings.Contains(string(out), "PostToolUse") {
		t.Fatalf("context %s, %v", out, err)
	}
	if again, err := Context(getenv, strings.NewReader("{}"), "t_ctx00001", "PostToolUse"); again != nil || err != nil {
		t.Errorf("taken twice: %s, %v", again, err)
	}
	if _, err := Context(getenv, strings.NewReader(""), "nope", "PostToolUse"); err == nil || !strings.Contains(err.Error(), `task id "nope"`) {
		t.Errorf("bad id: %v", err)
	}
}
