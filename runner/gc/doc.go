// Package gc reclaims what finished tasks leave behind, and ends tasks on
// request: `runner gc` (windows closed, agents quit with their resume hint
// read, process trees ended, worktrees of merged branches removed, the
// same on hosts), the background gc of close_after (StartAuto), and
// `runner cancel [--kill]` (Cancel), whose kill path is gc's.
//
// It sits above package runner and takes a Deps built by cmd/runner from
// its Env: the store and the task record, the tmux servers, the hosts
// (Hosts, an interface it declares), the profiles,
// runner's ReconcilePanes, GetTask and Notify through Core (an interface
// it declares) and worktree's List as a function; the git that removes
// worktrees, branches and a group's refs is Git (an interface it
// declares: Gitsnap, package gitsnap's). It imports nothing of package
// runner (the pane option that marks runner's windows is held equal to
// runner's by a test). Nothing
// below imports it. What it never touches: another user's processes,
// another tmux server's panes, the pane and supervisor of an active task
// (see picking.pick, a function of a process table, and protectedPIDs;
// what it picks is ended through Procs, an interface it declares).
package gc
