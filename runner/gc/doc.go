// Package gc reclaims what finished tasks leave behind, and ends tasks on
// request: `runner gc` (windows closed, agents quit with their resume hint
// read, process trees ended, worktrees of merged branches removed, the
// same on hosts), the background gc of close_after (StartAuto), and
// `runner cancel [--kill]` (Cancel), whose kill path is gc's.
//
// It sits above package runner: it reads the state through runner's
// Reconcile, resumes through runner.Resume and lists worktrees through
// package worktree; nothing below imports it. What it never touches:
// another user's processes, another tmux server's panes, the pane and
// supervisor of an active task (see taskPicker and protectedPIDs).
package gc
