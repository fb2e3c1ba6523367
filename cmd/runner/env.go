package main

import (
	"context"
	"os"
	"time"

	"github.com/runner-cli/runner/cmd/runner/exitcode"
	"github.com/runner-cli/runner/cmd/runner/internal/cmdkit"

	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/open"

	"github.com/runner-cli/runner/runner"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
	"github.com/spf13/cobra"
)

// selfPath is the absolute path of this runner binary, as invoked
// (open.Self).
func selfPath() string { return open.Self(os.Args[0]) }

// openOptions are what every command opens with (package open): the
// environment and --socket.
func (a *app) openOptions() open.Options {
	return open.Options{Getenv: a.getenv, Socket: a.socket}
}

// envTask is the runner environment (no progress output) and the task
// that ref (an id or unique prefix) names, for the commands about one task.
func (a *app) envTask(ctx context.Context, ref string) (*runner.Env, *state.Task, error) {
	env, _, err := a.runnerEnv(false)
	if err != nil {
		return nil, nil, err
	}
	t, err := runner.GetTask(ctx, env, ref)
	return env, t, err
}

// runnerEnv loads the config and opens the state and the tmux server
// (open.Env); with progress, the progress lines go to stderr.
func (a *app) runnerEnv(progress bool) (*runner.Env, *config.Config, error) {
	env, cfg, err := open.Env(a.openOptions(), os.Args[0])
	if err != nil {
		return nil, nil, err
	}
	env.ExitOf = exitcode.OfTask
	if progress {
		env.Progress = a.errOut
	}
	return env, cfg, nil
}

// tmuxClient returns a client for the server chosen by --socket or
// $RUNNER_TMUX_SOCKET (default: runner's private server "runner"), or,
// with host (`runner tmux --host`), for that host's (open.HostTmux). It
// runs the config's tmux_binary; a config that cannot be read is an error
// (exit 2).
func (a *app) tmuxClient(ctx context.Context, host string) (*tmuxctl.Client, error) {
	cfg, _, err := config.Load(a.getenv)
	if err != nil {
		return nil, err
	}
	if host == "" {
		return a.tmuxClientFor(cfg), nil
	}
	return open.HostTmux(ctx, a.openOptions(), host)
}

// tmuxClientFor is the tmux client with cfg's tmux_binary (cfg nil: the
// default "tmux").
func (a *app) tmuxClientFor(cfg *config.Config) *tmuxctl.Client {
	return open.Tmux(a.openOptions(), cfg)
}

// openStore opens the state store with the config's settings (retention,
// lock_timeout) and the RUNNER_* overrides: every command opens it here.
func (a *app) openStore() (*state.Store, error) {
	return config.OpenStore(a.getenv, nil)
}

// jsonFlag adds --json and records it for error printing
// (cmdkit.Factory.JSONFlag).
func (a *app) jsonFlag(cmd *cobra.Command, v *bool, usage ...string) {
	a.factory().JSONFlag(cmd, v, usage...)
}

// factory is what the command families under cmd/runner/internal take
// of the app: its streams, its environment and what it opens, read when a
// command runs.
func (a *app) factory() *cmdkit.Factory {
	return &cmdkit.Factory{
		In: a.in, Out: a.out, ErrOut: a.errOut, RawOut: a.rawOut, RawErr: a.rawErr, Getenv: a.getenv,
		Config: func() (*config.Config, error) {
			cfg, _, err := config.Load(a.getenv)
			return cfg, err
		},
		Store: a.openStore, Env: a.runnerEnv, Tmux: a.tmuxClient, TmuxFor: a.tmuxClientFor,
		JSONErrors: func(v bool) { a.jsonErrors = v },
		Checks:     a.checks, IsTerminal: cmdkit.IsTerminal,
		Socket: func() string { return a.socket },
	}
}

// family is the build of a command family's command over the app's
// factory, for rootCommands.
func (a *app) family(build func(*cmdkit.Factory) *cobra.Command) func() *cobra.Command {
	return func() *cobra.Command { return build(a.factory()) }
}

// checks are the root's checks before a command runs: a sandboxed
// caller's commands and flags, no negative duration.
func (a *app) checks(c *cobra.Command) error {
	if err := a.checkConfined(c); err != nil {
		return err
	}
	return cmdkit.CheckDurations(c)
}

// readText returns the text argument, or the content of --file ('-' =
// stdin), warning about control characters (cmdkit.Factory.ReadText).
func (a *app) readText(argv []string, file string) (string, error) {
	return a.factory().ReadText(argv, file)
}

// readTextRaw is readText without the warning.
func (a *app) readTextRaw(argv []string, file string) (string, error) {
	return a.factory().ReadTextRaw(argv, file)
}

// withTimeout bounds ctx by d when d > 0 (cmdkit.WithTimeout).
func withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return cmdkit.WithTimeout(ctx, d)
}
