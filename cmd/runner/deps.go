// The small structs the packages above the core take (docs/architecture.md,
// Seams), one constructor each, built from the command's Env: what the
// package uses of it, and what it asks of package runner: open.Core where
// the package declares a Core interface (gc, mailbox, ask), functions
// elsewhere.

package main

import (
	"context"
	"os/exec"

	"github.com/runner-cli/runner/cmd/runner/exitcode"
	"github.com/runner-cli/runner/runner"
	"github.com/runner-cli/runner/runner/ask"
	"github.com/runner-cli/runner/runner/gc"
	"github.com/runner-cli/runner/runner/hosts"
	"github.com/runner-cli/runner/runner/mailbox"
	"github.com/runner-cli/runner/runner/monitor"
	"github.com/runner-cli/runner/runner/open"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/remote"
	"github.com/runner-cli/runner/runner/tasks"
	"github.com/runner-cli/runner/runner/worktree"
	"github.com/runner-cli/runner/state"
)

// reconcileOn is runner.Reconcile on env.
func reconcileOn(env *runner.Env) func(context.Context) (*state.State, error) {
	return open.Core{Env: env}.Reconcile
}

// tasksDeps is what package tasks takes (ps, wait, attach, tree, usage).
func tasksDeps(env *runner.Env) tasks.Deps {
	return tasks.Deps{Store: foregroundStore{env.Store}, TC: env.TC, Reconcile: reconcileOn(env), HostConn: tasks.Hosts(env.Hosts.Conn), Say: env.Say, ExitOf: exitcode.OfTask}
}

// foregroundStore is a state store watched by a command whose caller waits
// for its exit (runner wait, for tasks or a group): its watches look at
// the files themselves first, as a foreground dispatch's
// (state.Store.WatchFor).
type foregroundStore struct{ *state.Store }

// Watch is state.Store.WatchFor for monitor.ForegroundPoll.
func (s foregroundStore) Watch(ctx context.Context) (<-chan struct{}, error) {
	return s.WatchFor(ctx, monitor.ForegroundPoll)
}

// worktreeDeps is what package worktree takes (merge, worktree list).
func worktreeDeps(env *runner.Env) worktree.Deps {
	return worktree.Deps{Store: env.Store, Record: env.Record(), Now: env.Time, Warn: env.Warn,
		Core: open.Core{Env: env}, Git: worktree.Gitsnap{}, GitContext: env.GitContext, GitOn: env.Hosts.GitOn}
}

// gcDeps is what package gc takes (gc, cancel, the background gc).
func gcDeps(env *runner.Env) gc.Deps {
	return gc.Deps{Store: env.Store, Record: env.Record(), TC: env.TC, Profiles: env.Profiles, Now: env.Time, Warn: env.Warn,
		Hosts: gc.OnPool(env.Hosts), PaneClient: gc.Panes(env.PaneClient), Exe: env.Exe, SpawnRunner: env.SpawnRunner,
		Core: open.Core{Env: env}, Procs: gc.Proctree{}, Git: gc.Gitsnap{},
		ListWorktrees: func(ctx context.Context) ([]worktree.Info, error) { return worktree.List(ctx, worktreeDeps(env)) },
	}
}

// mailboxDeps is what package mailbox takes (msg, inbox, queue).
func mailboxDeps(env *runner.Env) mailbox.Deps {
	return mailbox.Deps{Store: env.Store, Record: env.Record(), Now: env.Time, Core: open.Core{Env: env}}
}

// askDeps is what package ask takes.
func askDeps(env *runner.Env) ask.Deps {
	return ask.Deps{Store: env.Store, Profiles: env.Profiles, Env: open.Core{Env: env}, Core: open.Core{Env: env},
		Hosts: func(ctx context.Context, name string) (ask.Host, error) {
			c, err := env.Hosts.Conn(ctx, name)
			if err != nil {
				return nil, err
			}
			return shadowHost{env, c}, nil
		}}
}

// shadowHost is a host's connection as a shadow there uses it.
type shadowHost struct {
	env *runner.Env
	c   *hosts.Conn
}

func (h shadowHost) Argv(ctx context.Context, prof *profile.Profile, dir string, argv []string) ([]string, error) {
	return remote.Argv(ctx, h.c, prof, dir, argv)
}

func (h shadowHost) Command(ctx context.Context, argv ...string) *exec.Cmd {
	return h.c.Transport().Command(ctx, argv...)
}

// Sandbox wraps the argv of a shadow of t in a sandbox like its agent's
// there (its folder and git directory, the CLI's own directories).
func (h shadowHost) Sandbox(ctx context.Context, t *state.Task, prof *profile.Profile, argv []string) ([]string, error) {
	return sandboxThere(ctx, h.env, h.c, t, prof, argv)
}

func (h shadowHost) String() string { return h.c.Transport().String() }
