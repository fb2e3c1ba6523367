// Package hookevent is `runner hook` inside the agent's process tree: the
// event an agent CLI's hook hands runner, recorded in its task's events
// file (Record), and runner's notices for the running turn given as that
// hook's output (Context, through package notice).
//
// Both run once per turn or per tool call while the agent waits on them:
// they open no store and take no lock of the state, and read the CLI's
// input with a bound (a hook without input never hangs the agent). The
// files are the state directory's layout (state.AppendTaskEventIn, the
// task's hook directory), which a sandboxed agent sees there too.
//
// Of the module it imports only internal/clock, runner/notice and state
// (TestImports).
package hookevent

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/runner/notice"
	"github.com/runner-cli/runner/state"
)

// maxInput bounds what is read of the CLI's event.
const maxInput = 16 << 20

// inputWait is how long Record waits for the CLI's event on its input.
var inputWait = 2 * time.Second

// Record appends the agent's event to task's events file in the state
// directory getenv names: its JSON read from in (the event's name is
// name, else the JSON's hook_event_name, else Stop). task "" is the
// pane's RUNNER_TASK_ID.
func Record(getenv func(string) string, in io.Reader, task, name string) error {
	if task == "" {
		task = getenv("RUNNER_TASK_ID")
	}
	if task == "" {
		return errors.New("no task: pass --task ID (or run it in a task's pane, where RUNNER_TASK_ID is set)")
	}
	dir, err := state.DefaultDir(getenv)
	if err != nil {
		return err
	}
	// In UTC: the local zone's file is not read for the line's time (the
	// same instant; issue 51).
	ev := state.TaskEvent{Time: clock.Now().UTC(), Event: "Stop"}
	if name != "" {
		ev.Event = name
	}
	data := make(chan []byte, 1)
	go func() { b, _ := io.ReadAll(io.LimitReader(in, maxInput)); data <- b }()
	select {
	case b := <-data:
		var obj map[string]any
		if json.Unmarshal(b, &obj) == nil {
			if n, ok := obj["hook_event_name"].(string); ok && name == "" {
				ev.Event = n
			}
			ev.Data = json.RawMessage(b)
		}
	case <-time.After(inputWait):
	}
	return state.AppendTaskEventIn(dir, task, ev)
}

// Context is runner's notices for task's running turn (package notice)
// as the output of the CLI's hook event (nil: none to give): from the
// task's hook directory and events file in the state directory getenv
// names. task "" is the pane's RUNNER_TASK_ID. Its input, the CLI's
// event, is read (bounded) and not used.
func Context(getenv func(string) string, in io.Reader, task, event string) ([]byte, error) {
	if task == "" {
		task = getenv("RUNNER_TASK_ID")
	}
	if !state.ValidTaskID(task) {
		return nil, fmt.Errorf("task id %q: pass --task ID (or run it in a task's pane, where RUNNER_TASK_ID is set)", task)
	}
	dir, err := state.DefaultDir(getenv)
	if err != nil {
		return nil, err
	}
	go func() { _, _ = io.Copy(io.Discard, io.LimitReader(in, maxInput)) }()
	return notice.Take(notice.Dir(filepath.Join(dir, "hooks", task)), filepath.Join(dir, "events", task+".jsonl"), event)
}
