// Package group runs one task through several agents and keeps the best
// result: a group (state.Group) is a set of candidate tasks, each in a
// worktree of its own from one snapshot (dispatch --agents, --tries). Its
// supervisor (Supervise: the foreground dispatch, or the hidden `runner
// group-supervise` for --detach) runs the group's check in each candidate's
// worktree when its turn ends (RunCheck; a failed check sent back to the
// agent up to --check-retry times), and, once every candidate ended, the
// vote (Vote: each candidate's agent, through a shadow as `runner ask`
// does, names the best candidate other than its own). Compare lays the
// candidates side by side; Choose and Pick pick one and merge it.
//
// Like the other packages above the core it takes a Deps of what it uses
// (built in cmd/runner: runner's Send, ask's Run, worktree's merges, gc's
// cancels as functions) and imports nothing of package runner; of ask and
// worktree it uses the types.
package group
