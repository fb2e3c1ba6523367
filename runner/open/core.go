package open

import (
	"context"
	"os"

	"github.com/runner-cli/runner/runner"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/settings"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// Core is package runner over one Env, as the packages above the core
// ask for it: each declares the few of these methods it uses as an
// interface of its own (gc.Core, mailbox.Core, ask.Core, worktree.Core,
// answer.Follower; ask.Environment, the Env's environment) and its tests
// give a fake.
type Core struct {
	Env *runner.Env
}

// Reconcile is runner.Reconcile.
func (c Core) Reconcile(ctx context.Context) (*state.State, error) {
	return runner.Reconcile(ctx, c.Env)
}

// ReconcilePanes is runner.ReconcilePanes.
func (c Core) ReconcilePanes(ctx context.Context) (*state.State, []tmuxctl.PaneInfo, error) {
	return runner.ReconcilePanes(ctx, c.Env)
}

// CallerTask is runner.CallerTask.
func (c Core) CallerTask(ctx context.Context, st *state.State, panes []tmuxctl.PaneInfo) string {
	return runner.CallerTask(ctx, c.Env, st, panes)
}

// GetTask is runner.GetTask.
func (c Core) GetTask(ctx context.Context, ref string) (*state.Task, error) {
	return runner.GetTask(ctx, c.Env, ref)
}

// RemotePaneAlive is runner.RemotePaneAlive.
func (c Core) RemotePaneAlive(ctx context.Context, t *state.Task) bool {
	return runner.RemotePaneAlive(ctx, c.Env, t)
}

// StartDeliveries is runner.StartDeliveries.
func (c Core) StartDeliveries(ctx context.Context, ids []string) []error {
	return runner.StartDeliveries(ctx, c.Env, ids)
}

// Notify is runner.Notify.
func (c Core) Notify(ctx context.Context, t *state.Task, set settings.Run) {
	runner.Notify(ctx, c.Env, t, set)
}

// ResolveArgv is runner.ResolveArgv.
func (c Core) ResolveArgv(prof *profile.Profile, argv []string) ([]string, error) {
	return runner.ResolveArgv(c.Env, prof, argv)
}

// ShadowSandbox is runner.ShadowSandbox.
func (c Core) ShadowSandbox(t *state.Task, prof *profile.Profile, argv []string) ([]string, error) {
	return runner.ShadowSandbox(c.Env, t, prof, argv)
}

// Resume is runner.Resume: a supervisor for a task nothing follows.
func (c Core) Resume(ctx context.Context, ref string) error {
	_, _, err := runner.Resume(ctx, c.Env, ref)
	return err
}

// Getenv is a variable of the environment the Env was given (the
// process's when it was given none: runner.GetenvOf).
func (c Core) Getenv(name string) string { return runner.GetenvOf(c.Env)(name) }

// Environ is the environment the Env was given (the process's when it was
// given none).
func (c Core) Environ() []string {
	if c.Env.Environ != nil {
		return c.Env.Environ()
	}
	return os.Environ()
}
