// The small structs the packages above the core take (docs/architecture.md,
// Seams), one constructor each, built from the command's Env: what the
// package uses of it, and what it asks of package runner as functions.

package main

import (
	"context"

	"github.com/runner-cli/runner/runner"
	"github.com/runner-cli/runner/runner/ask"
	"github.com/runner-cli/runner/runner/gc"
	"github.com/runner-cli/runner/runner/mailbox"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/settings"
	"github.com/runner-cli/runner/runner/tasks"
	"github.com/runner-cli/runner/runner/watch"
	"github.com/runner-cli/runner/runner/worktree"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// reconcileOn is runner.Reconcile on env.
func reconcileOn(env *runner.Env) func(context.Context) (*state.State, error) {
	return func(ctx context.Context) (*state.State, error) { return runner.Reconcile(ctx, env) }
}

// reconcilePanesOn is runner.ReconcilePanes on env.
func reconcilePanesOn(env *runner.Env) func(context.Context) (*state.State, []tmuxctl.PaneInfo, error) {
	return func(ctx context.Context) (*state.State, []tmuxctl.PaneInfo, error) {
		return runner.ReconcilePanes(ctx, env)
	}
}

// callerTaskOn is runner.CallerTask on env.
func callerTaskOn(env *runner.Env) func(context.Context, *state.State, []tmuxctl.PaneInfo) string {
	return func(ctx context.Context, st *state.State, panes []tmuxctl.PaneInfo) string {
		return runner.CallerTask(ctx, env, st, panes)
	}
}

// getTaskOn is runner.GetTask on env.
func getTaskOn(env *runner.Env) func(context.Context, string) (*state.Task, error) {
	return func(ctx context.Context, ref string) (*state.Task, error) { return runner.GetTask(ctx, env, ref) }
}

// tasksDeps is what package tasks takes (ps, wait, attach, tree, usage).
func tasksDeps(env *runner.Env) tasks.Deps {
	return tasks.Deps{Store: env.Store, TC: env.TC, Reconcile: reconcileOn(env), HostConn: env.HostConn, Say: env.Say, ExitOf: OfTask}
}

// worktreeDeps is what package worktree takes (merge, worktree list).
func worktreeDeps(env *runner.Env) worktree.Deps {
	return worktree.Deps{Store: env.Store, Record: env.Record(), Now: env.Time, Warn: env.Warn,
		Reconcile: reconcileOn(env), GetTask: getTaskOn(env), GitContext: env.GitContext, GitOn: env.GitOn}
}

// gcDeps is what package gc takes (gc, cancel, the background gc).
func gcDeps(env *runner.Env) gc.Deps {
	return gc.Deps{Store: env.Store, Record: env.Record(), TC: env.TC, Profiles: env.Profiles, Now: env.Time, Warn: env.Warn,
		HostConn: env.HostConn, PaneClient: env.PaneClient, GitOn: env.GitOn, Exe: env.Exe, SpawnRunner: env.SpawnRunner,
		GetTask: getTaskOn(env), ReconcilePanes: reconcilePanesOn(env),
		Notify:        func(ctx context.Context, t *state.Task, set settings.Run) { runner.Notify(ctx, env, t, set) },
		ListWorktrees: func(ctx context.Context) ([]worktree.Info, error) { return worktree.List(ctx, worktreeDeps(env)) },
	}
}

// mailboxDeps is what package mailbox takes (msg, inbox, queue).
func mailboxDeps(env *runner.Env) mailbox.Deps {
	return mailbox.Deps{Store: env.Store, Record: env.Record(), Now: env.Time,
		Reconcile: reconcileOn(env), ReconcilePanes: reconcilePanesOn(env), CallerTask: callerTaskOn(env),
		RemotePaneAlive: func(ctx context.Context, t *state.Task) bool { return runner.RemotePaneAlive(ctx, env, t) },
		StartDeliveries: func(ctx context.Context, ids []string) []error { return runner.StartDeliveries(ctx, env, ids) },
	}
}

// askDeps is what package ask takes.
func askDeps(env *runner.Env) ask.Deps {
	return ask.Deps{Store: env.Store, Profiles: env.Profiles, Getenv: runner.GetenvOf(env), Environ: env.Environ,
		Reconcile: reconcileOn(env), CallerTask: callerTaskOn(env),
		ResolveArgv: func(prof *profile.Profile, argv []string) ([]string, error) {
			return runner.ResolveArgv(env, prof, argv)
		},
		ShadowSandbox: func(t *state.Task, prof *profile.Profile, argv []string) ([]string, error) {
			return runner.ShadowSandbox(env, t, prof, argv)
		},
	}
}

// watchDeps is what package watch takes.
func watchDeps(env *runner.Env) watch.Deps {
	return watch.Deps{Store: env.Store, TC: env.TC, Reconcile: reconcileOn(env), PaneClient: env.PaneClient,
		AttachArgv: func(ctx context.Context, ref string) ([]string, error) {
			return tasks.AttachArgv(ctx, tasksDeps(env), ref, false)
		},
	}
}
