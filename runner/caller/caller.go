// Package caller tells which task, if any, the calling process runs
// under (Task): the one its environment names, else the one whose pane's process
// is among its ancestors (an agent's sandbox may scrub the environment).
// Lineage limits and message hops depend on it, so a stripped environment
// must not turn an agent into "the user".
package caller

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/runner-cli/runner/internal/procinfo"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// Task returns the id of the task this process runs under: the one
// RUNNER_TASK_ID names (if it is a task in st), or, when that variable is
// missing or names no task (an agent's
// sandbox may run commands with a scrubbed environment), the task whose
// pane's process is an ancestor of this process. It returns "" outside any
// task. Lineage limits and message hops depend on it, so a stripped
// environment must not turn an agent into "the user".
//
// getenv reads this process's environment; panes are the live panes when
// the caller listed them already (nil: listPanes lists them if needed).
func Task(ctx context.Context, getenv func(string) string, listPanes func(context.Context) ([]tmuxctl.PaneInfo, error), st *state.State, panes []tmuxctl.PaneInfo) string {
	if id := getenv("RUNNER_TASK_ID"); state.ValidTaskID(id) {
		if st.Task(id) != nil {
			return id
		}
	}
	byPane := map[string]string{}
	for _, t := range st.Tasks {
		if t.Tmux.Pane != "" && (!t.Status.IsTerminal() || t.Status == state.StatusDone) {
			byPane[t.Tmux.Pane] = t.ID
		}
	}
	if len(byPane) == 0 {
		return ""
	}
	if panes == nil {
		if !maybeInPane(os.Getpid()) {
			return "" // no tmux server above this process: no pane holds it
		}
		var err error
		if panes, err = listPanes(ctx); err != nil {
			return ""
		}
	}
	byPID := map[int]string{}
	for _, p := range panes {
		if id, ok := byPane[p.ID]; ok && p.PID > 0 && p.Session == st.Task(id).Tmux.Session {
			byPID[p.PID] = id
		}
	}
	pid := os.Getppid()
	for range 64 {
		if pid <= 1 {
			return ""
		}
		if id, ok := byPID[pid]; ok {
			return id
		}
		pid = parentPID(pid)
	}
	return ""
}

// maybeInPane reports whether process pid may run inside a tmux pane: a
// process above it is a child of a program named tmux… (a server), or the
// chain cannot be read (an unsupported system, another user's process):
// then the panes are listed, as always. A dispatch from cron, a service or
// an ssh session outside tmux needs no tmux call to know it is no task's.
func maybeInPane(pid int) bool {
	for range 64 {
		ppid := parentPID(pid)
		switch {
		case ppid == 1:
			// init adopted or started the chain: no pane above, unless
			// init is a tmux server (a container's).
			exe, err := procinfo.Executable(1)
			return err == nil && strings.HasPrefix(filepath.Base(exe), "tmux")
		case ppid <= 0:
			return true // unknown
		}
		exe, err := procinfo.Executable(ppid)
		if err != nil || strings.HasPrefix(filepath.Base(exe), "tmux") {
			return true
		}
		pid = ppid
	}
	return true
}

// parentPID is a process's parent; 0 when unknown.
func parentPID(pid int) int {
	p, ok := procinfo.Get(pid)
	if !ok {
		return 0
	}
	return p.PPID
}
