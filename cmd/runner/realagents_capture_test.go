//go:build realagents

package main

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/runner/sandbox"
	"github.com/runner-cli/runner/state"
)

// logAgent logs, for a failed test, what it takes to see why task id's
// agent did what it did: its record (status, exit code, history), its pane
// as tmux has it now (alive or dead, with the status it exited with, and
// its screen), the end of its transcript (what it printed, also when its
// window is gone) and the end of the CLI's own log files under its state
// directories (the profile's sandbox_paths: Qwen Code's ~/.qwen/debug).
// Call it before the task's window is closed (cancel --kill, gc).
func (h *realHarness) logAgent(t *testing.T, id string) {
	t.Helper()
	if id == "" {
		return
	}
	// Not h.status: this runs in a deferred call, maybe after a Fatal.
	out, errOut, code, _ := h.run("status", id, "--json")
	var task state.Task
	if err := json.Unmarshal([]byte(out), &task); code != 0 || err != nil {
		t.Logf("agent of %s: runner status: exit %d, %v\n%s", id, code, err, errOut)
		return
	}
	exit := "none recorded"
	if task.ExitCode != nil {
		exit = strconv.Itoa(*task.ExitCode)
	}
	t.Logf("agent of %s: status %s, exit code %s", id, task.Status, exit)
	logTask(t, &task)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if pane := task.Tmux.Pane; pane == "" {
		t.Logf("agent of %s: no pane recorded", id)
	} else if p, screen, err := h.tc0.PaneScreen(ctx, pane); err != nil {
		t.Logf("agent of %s: pane %s: %v", id, pane, err)
	} else {
		t.Logf("agent of %s: pane %s: dead %v (exit status %d), command %q; its screen:\n%s",
			id, pane, p.Dead, p.DeadStatus, p.CurrentCommand, trimLines(screen))
	}
	logs, errOut, code, _ := h.run("logs", id)
	t.Logf("agent of %s: runner logs: exit %d%s; the transcript's last 60 lines:\n%s", id, code,
		textutil.Headline(" "+errOut, 200), trimLines(textutil.LastLines(logs, 60)))
	for _, f := range h.cliLogs() {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Logf("agent of %s: %s: %v", id, f, err)
			continue
		}
		t.Logf("agent of %s: the last 40 lines of %s:\n%s", id, f, trimLines(textutil.LastLines(string(b), 40)))
	}
}

// cliLogs returns the newest few log files the harness's CLI wrote under
// its state directories in HOME: files in a folder named debug or logs, or
// named *.log.
func (h *realHarness) cliLogs() []string {
	type file struct {
		path string
		mod  time.Time
	}
	var files []file
	for _, p := range h.prof.SandboxPaths {
		dir := strings.TrimSuffix(sandbox.Expand(p, h.home, nil), "/")
		if dir == "" {
			continue
		}
		_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return nil
			}
			parent := filepath.Base(filepath.Dir(path))
			if parent != "debug" && parent != "logs" && !strings.HasSuffix(path, ".log") {
				return nil
			}
			if fi, err := d.Info(); err == nil {
				files = append(files, file{path, fi.ModTime()})
			}
			return nil
		})
	}
	slices.SortFunc(files, func(a, b file) int { return b.mod.Compare(a.mod) })
	var out []string
	for i := 0; i < len(files) && i < 3; i++ {
		out = append(out, files[i].path)
	}
	return out
}

// trimLines drops the spaces at the end of each line of s (a wide pane's).
func trimLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

// agentAlive fails the test when task id's agent no longer runs in its
// pane: it quit after its last turn, which the next send would hide (it
// starts the agent again on its session, in a new window). What the pane
// showed as the agent ended is logged (logAgent).
func (h *realHarness) agentAlive(t *testing.T, id string) {
	t.Helper()
	task := h.status(id)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p, err := h.tc0.Pane(ctx, task.Tmux.Pane)
	if err == nil && !p.Dead {
		return
	}
	t.Errorf("task %s is %s but its agent quit after the turn: pane %q dead %v, exit status %d (%v)",
		id, task.Status, task.Tmux.Pane, p.Dead, p.DeadStatus, err)
	h.logAgent(t, id)
}
