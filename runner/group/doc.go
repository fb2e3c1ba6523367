// Package group runs one task through several agents and keeps the best
// result: a group (state.Group) is a set of candidate tasks, each in a
// worktree of its own from one snapshot (dispatch --agents, --tries).
// Start takes the snapshot here, carries it to the hosts its candidates
// may run on (dispatch --host NAME, any, label:L: a pool's placement
// spreads them) and dispatches them, through a Launcher. Its supervisor
// (Supervise: the foreground dispatch, or the hidden `runner
// group-supervise` for --detach; Await for `runner wait`, which sees a
// group whose supervisor is gone through itself) runs the group's check
// in each candidate's worktree when its turn ends (RunCheck here,
// RunCheckThere on a host; a failed check sent back to the agent up to
// --check-retry times), and, once every candidate ended, the vote (Vote:
// each candidate's agent, through a shadow as `runner ask` does, there
// for a candidate on a host, names the best candidate other than its
// own). Compare lays the candidates
// side by side, naming their hosts; Choose and Pick pick one and merge
// it, a candidate on a host first brought back into the repository here.
//
// Dispatch is a group's `runner dispatch`: its flags (Flags) and agents
// checked, its record made, Start, and with --detach its supervisor
// started and recorded, through a Starter; SuperviseHere sees a
// foreground group through, cancelling its candidates when interrupted.
//
// Like the other packages above the core it takes what it uses of
// runner as small interfaces it declares, in a Deps (Store: the state;
// Tasks: runner's reconcile, record and send, gc's cancels; Merges:
// worktree's, Worktrees; Hosts: the pool's, OnPool; Sandbox: the checks'
// sandbox) and the Launcher and Starter interfaces (built in cmd/runner
// over Setup, its snapshot, carries, record and hosts: runner's
// Dispatch, the state and the self-spawn), and imports nothing
// of package runner; of ask and plan it uses the types, of projects and
// hosts the resolution of a project. Its tests run it through fakes of
// them, with real git.
package group
