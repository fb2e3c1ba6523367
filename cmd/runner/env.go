package main

import (
	"context"
	"os"

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
	env.ExitOf = OfTask
	if progress {
		env.Progress = a.errOut
	}
	return env, cfg, nil
}

// tmuxClient returns a client for the server chosen by --socket or
// $RUNNER_TMUX_SOCKET (default: runner's private server "runner"), or,
// with --host, for that host's (open.HostTmux). It runs the config's
// tmux_binary; a config that cannot be read is an error (exit 2).
func (a *app) tmuxClient(ctx context.Context) (*tmuxctl.Client, error) {
	cfg, _, err := config.Load(a.getenv)
	if err != nil {
		return nil, err
	}
	if a.tmuxHost == "" {
		return a.tmuxClientFor(cfg), nil
	}
	return open.HostTmux(ctx, a.openOptions(), a.tmuxHost)
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

// jsonFlag adds --json and records it for error printing.
func (a *app) jsonFlag(cmd *cobra.Command, v *bool, usage ...string) {
	text := "print the result as JSON"
	if len(usage) > 0 {
		text = usage[0]
	}
	cmd.Flags().BoolVar(v, "json", false, text)
	prev := cmd.PreRunE
	cmd.PreRunE = func(c *cobra.Command, args []string) error {
		a.jsonErrors = *v
		if prev != nil {
			return prev(c, args)
		}
		return nil
	}
}
