package gc

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/runner-cli/runner/runner/worktree"
)

// WriteText writes res as runner gc prints it: a summary line, a line
// per task (its window, its processes, whether runner send can resume
// it), the windows skipped, the worktrees and the groups' refs removed. quiet is the background gc
// (--auto): nothing when there was nothing to do, the summary stamped
// with now, and the worktrees kept left out.
func WriteText(w io.Writer, res *Result, quiet bool, now time.Time) {
	if quiet && len(res.Tasks) == 0 && len(res.Skipped) == 0 && len(res.Refs) == 0 && !slices.ContainsFunc(res.Worktrees, func(w worktree.Info) bool { return w.Removed }) {
		return
	}
	verb := ""
	if res.DryRun {
		verb = "would "
	}
	windows := 0
	for _, t := range res.Tasks {
		if t.WindowClosed || (res.DryRun && t.Pane != "") {
			windows++
		}
	}
	if quiet {
		fmt.Fprintf(w, "%s ", now.Format(time.RFC3339))
	}
	fmt.Fprintf(w, "gc: %sclose %d window(s), %send %d process(es)", verb, windows, verb, res.Processes())
	if len(res.SessionsClosed) > 0 {
		fmt.Fprintf(w, "; session(s) left empty and closed: %s", strings.Join(res.SessionsClosed, " "))
	}
	fmt.Fprintln(w)
	for _, t := range res.Tasks {
		fmt.Fprintln(w, taskLine(t, res.DryRun))
	}
	for _, s := range res.Skipped {
		fmt.Fprintf(w, "  %s skipped: %s\n", s.ID, s.Reason)
	}
	for _, wt := range res.Worktrees {
		switch {
		case wt.Removed:
			fmt.Fprintf(w, "  worktree %s removed with branch %s\n", wt.Path, wt.Branch)
		case res.DryRun && wt.Kept == "":
			fmt.Fprintf(w, "  worktree %s would be removed with branch %s\n", wt.Path, wt.Branch)
		case !quiet:
			fmt.Fprintf(w, "  worktree %s (branch %s) kept: %s\n", wt.Path, wt.Branch, wt.Kept)
		}
	}
	for _, r := range res.Refs {
		fmt.Fprintln(w, refLine(r, res.DryRun))
	}
}

// taskLine is WriteText's line for task t.
func taskLine(t Task, dryRun bool) string {
	status := string(t.Status)
	if t.Pruned {
		status = "pruned"
	}
	var pids []string
	for _, p := range t.Processes {
		pids = append(pids, fmt.Sprintf("%d(%s)", p.PID, p.Comm))
	}
	line := fmt.Sprintf("  %s %-9s", t.ID, status)
	if t.Pane != "" {
		line += " window " + t.Pane
	}
	if t.AgentQuit {
		line += " (the agent quit)"
	}
	if len(pids) > 0 {
		line += " processes " + strings.Join(pids, " ")
	}
	switch {
	case t.Resumable:
		line += "; 'runner send " + t.ID + " TEXT' resumes agent session " + t.AgentSession
	case t.Status != "" && !dryRun:
		line += "; not resumable (no agent session id seen)"
	}
	return line
}
