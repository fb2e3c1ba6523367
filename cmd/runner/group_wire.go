package main

import (
	"context"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/runner"
	"github.com/runner-cli/runner/runner/ask"
	"github.com/runner-cli/runner/runner/gc"
	"github.com/runner-cli/runner/runner/group"
	"github.com/runner-cli/runner/runner/hosts"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/remote"
	"github.com/runner-cli/runner/state"
)

// groupDeps is what package group takes (dispatch --agents, compare,
// vote, pick).
func groupDeps(env *runner.Env) group.Deps {
	return group.Deps{Store: env.Store, Tasks: groupTasks{env}, Merges: group.Worktrees(worktreeDeps(env)),
		Hosts: group.OnPool(env.Hosts), Sandbox: groupSandbox{env}, Say: env.Say, Now: env.Time,
		Ask: func(ctx context.Context, req ask.Request) ([]ask.Answer, error) {
			return ask.Run(ctx, askDeps(env), req)
		}}
}

// groupTasks are env's tasks as a group's operations ask for its
// candidates (group.Tasks): runner's reconcile, record and send, gc's
// cancels.
type groupTasks struct{ env *runner.Env }

func (c groupTasks) Reconcile(ctx context.Context) (*state.State, error) {
	return runner.Reconcile(ctx, c.env)
}

func (c groupTasks) Task(ctx context.Context, id string) (*state.Task, error) {
	return c.env.Record().Task(ctx, id)
}

func (c groupTasks) Send(ctx context.Context, id, text string) error {
	_, err := runner.Send(ctx, c.env, runner.SendRequest{Ref: id, Text: text, Detach: true})
	return err
}

func (c groupTasks) Cancel(ctx context.Context, id, reason string) error {
	_, err := gc.CancelBecause(ctx, gcDeps(c.env), id, false, reason)
	return err
}

func (c groupTasks) Close(ctx context.Context, id string) error {
	_, err := gc.Cancel(ctx, gcDeps(c.env), id, true)
	return err
}

// groupSandbox wraps a sandboxed candidate's check (group.Sandbox): here
// as runner.CheckSandbox does; there in a sandbox like its agent's
// (remote.SandboxArgv: the folder and the repository's git directory
// written, as the agent may; none of the agent CLI's own directories):
// the check can do nothing there that its agent could not.
type groupSandbox struct{ env *runner.Env }

func (s groupSandbox) Wrap(ctx context.Context, t *state.Task, argv []string) ([]string, error) {
	return runner.CheckSandbox(ctx, s.env, t, argv)
}

func (s groupSandbox) WrapThere(ctx context.Context, t *state.Task, argv []string) ([]string, error) {
	c, err := s.env.Hosts.Conn(ctx, t.Tmux.Host)
	if err != nil {
		return nil, err
	}
	return sandboxThere(ctx, s.env, c, t, &profile.Profile{Name: t.Agent}, argv)
}

// sandboxThere wraps argv, run for task t beside its agent on its host
// (c), in a sandbox like its agent's there (remote.SandboxArgv): its
// folder and its repository's git directory, and prof's own directories.
func sandboxThere(ctx context.Context, env *runner.Env, c *hosts.Conn, t *state.Task, prof *profile.Profile, argv []string) ([]string, error) {
	dir, err := c.TaskPath(ctx, t.ID)
	if err != nil {
		return nil, err
	}
	common := ""
	if gctx, err := env.Hosts.GitOn(ctx, t.Tmux.Host); err == nil {
		common, _ = gitsnap.CommonDir(gctx, t.Dir) // none: not a repository
	}
	out, _, err := remote.SandboxArgv(ctx, t, c, prof, remote.FilesIn(dir), prof.EnvList(), argv, nil, common)
	return out, err
}

// groupLauncher is what group.Start takes: the group's snapshot, record
// and hosts (group.Setup), and runner's dispatch of its candidates,
// planned by cand.
type groupLauncher struct {
	group.Setup
	env  *runner.Env
	cand group.Candidates
}

// Dispatch dispatches one candidate, detached, in a worktree of its own
// from the group's snapshot.
func (l groupLauncher) Dispatch(ctx context.Context, g *state.Group, _ int, agent, where string) (*state.Task, error) {
	return runner.Dispatch(ctx, l.env, l.cand.For(g, agent, where))
}

// Say writes one line of progress.
func (l groupLauncher) Say(format string, args ...any) { l.env.Say(format, args...) }
