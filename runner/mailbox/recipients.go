package mailbox

import (
	"strings"

	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/projects"
	"github.com/runner-cli/runner/state"
)

// recipients turns TO into task ids: a task, @parent, @siblings
// or @project:NAME (where a message goes).
func recipients(st *state.State, sender, to string) ([]string, error) {
	needSender := func(what string) (*state.Task, error) {
		if sender == "" {
			return nil, fault.Usagef("%s: only a task can use it (run it from inside a runner pane, where RUNNER_TASK_ID is set)", what)
		}
		return st.Task(sender), nil
	}
	switch {
	case to == "@parent":
		s, err := needSender("@parent")
		if err != nil {
			return nil, err
		}
		if s.Parent == "" {
			return nil, fault.Usagef("@parent: task %s has no parent (it was not dispatched by a task)", s.ID)
		}
		return []string{s.Parent}, nil
	case to == "@siblings":
		s, err := needSender("@siblings")
		if err != nil {
			return nil, err
		}
		var ids []string
		for _, t := range st.TaskList() {
			if t.ID != s.ID && t.Parent == s.Parent && s.Parent != "" && reachable(t) {
				ids = append(ids, t.ID)
			}
		}
		if len(ids) == 0 {
			return nil, fault.Usagef("@siblings: task %s has no active or idle siblings", s.ID)
		}
		return ids, nil
	case strings.HasPrefix(to, "@project:"):
		name := strings.TrimPrefix(to, "@project:")
		ref, err := projects.Select(st, name)
		if err != nil {
			return nil, fault.Usagef("@project:%s: no such project: %v", name, err)
		}
		var ids []string
		for _, t := range st.TaskList() {
			if ref.Has(t) && t.ID != sender && t.Status.IsActive() {
				ids = append(ids, t.ID)
			}
		}
		if len(ids) == 0 {
			return nil, fault.Usagef("@project:%s: no active task to message", name)
		}
		return ids, nil
	case strings.HasPrefix(to, "@"):
		return nil, fault.Usagef("unknown recipient %q (want a task id, @parent, @siblings or @project:NAME)", to)
	}
	t, err := st.FindTask(to)
	if err != nil {
		return nil, fault.Usagef("%v (see 'runner ps --all')", err)
	}
	return []string{t.ID}, nil
}

// reachable says whether a task can still take messages: active, orphaned
// (delivered once resumed) or done (idle at its prompt).
func reachable(t *state.Task) bool {
	return !t.Status.IsTerminal() || t.Status == state.StatusDone
}
