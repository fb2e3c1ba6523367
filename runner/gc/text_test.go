package gc

import (
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/runner/proctree"
	"github.com/runner-cli/runner/runner/worktree"
	"github.com/runner-cli/runner/state"
)

var textNow = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// TestWriteText: the summary, a line per task (resumable or not, its
// processes, a pruned one), the skipped windows and the worktrees.
func TestWriteText(t *testing.T) {
	res := &Result{
		Tasks: []Task{
			{ID: "t_aaaaaaaa", Status: state.StatusDone, Pane: "%1", WindowClosed: true, AgentQuit: true, Resumable: true, AgentSession: "s1",
				Processes: []proctree.Ended{{PID: 12, Comm: "node"}, {PID: 13, Comm: "sh"}}},
			{ID: "t_bbbbbbbb", Status: state.StatusFailed, Pane: "%2", WindowClosed: true},
			{ID: "t_cccccccc", Pruned: true, Processes: []proctree.Ended{{PID: 14, Comm: "sleep"}}},
		},
		Skipped:        []Skip{{ID: "t_dddddddd", Pane: "%4", Reason: "a tmux client (/dev/pts/3) is showing its window"}},
		SessionsClosed: []string{"api"},
		Worktrees: []worktree.Info{{Path: "/w/a", Branch: "runner/t_aaaaaaaa", Removed: true},
			{Path: "/w/b", Branch: "runner/t_bbbbbbbb", Kept: "unmerged"}},
	}
	var b strings.Builder
	WriteText(&b, res, false, textNow)
	want := `gc: close 2 window(s), end 3 process(es); session(s) left empty and closed: api
  t_aaaaaaaa done      window %1 (the agent quit) processes 12(node) 13(sh); 'runner send t_aaaaaaaa TEXT' resumes agent session s1
  t_bbbbbbbb failed    window %2; not resumable (no agent session id seen)
  t_cccccccc pruned    processes 14(sleep)
  t_dddddddd skipped: a tmux client (/dev/pts/3) is showing its window
  worktree /w/a removed with branch runner/t_aaaaaaaa
  worktree /w/b (branch runner/t_bbbbbbbb) kept: unmerged
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// TestWriteTextDryRun: a dry run says what would be done, counts the
// windows it would close, and names the worktrees it would remove.
func TestWriteTextDryRun(t *testing.T) {
	res := &Result{DryRun: true, Tasks: []Task{{ID: "t_aaaaaaaa", Status: state.StatusDone, Pane: "%1"}},
		Worktrees: []worktree.Info{{Path: "/w/a", Branch: "runner/t_aaaaaaaa"}}}
	var b strings.Builder
	WriteText(&b, res, false, textNow)
	want := "gc: would close 1 window(s), would end 0 process(es)\n  t_aaaaaaaa done      window %1\n  worktree /w/a would be removed with branch runner/t_aaaaaaaa\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

// TestWriteTextQuiet: the background gc prints nothing when nothing was
// done, and stamps its summary; the worktrees it keeps are not listed.
func TestWriteTextQuiet(t *testing.T) {
	var b strings.Builder
	WriteText(&b, &Result{Worktrees: []worktree.Info{{Path: "/w/b", Kept: "unmerged"}}}, true, textNow)
	if b.Len() != 0 {
		t.Errorf("nothing done, printed %q", b.String())
	}
	WriteText(&b, &Result{Tasks: []Task{{ID: "t_aaaaaaaa", Status: state.StatusDone, Pane: "%1", WindowClosed: true}},
		Worktrees: []worktree.Info{{Path: "/w/b", Kept: "unmerged"}}}, true, textNow)
	want := "2026-03-04T05:06:07Z gc: close 1 window(s), end 0 process(es)\n  t_aaaaaaaa done      window %1; not resumable (no agent session id seen)\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}
