package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/runner-cli/runner/runner/config"

	"github.com/runner-cli/runner/runner/hosts"
	"github.com/runner-cli/runner/runner/push"
	"github.com/runner-cli/runner/runner/sandbox"

	"github.com/runner-cli/runner/runner"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
	"github.com/spf13/cobra"
)

// selfPath is the absolute path of this runner binary, as invoked (a
// symlink named runner is kept, so test harnesses that run the test binary
// under that name work too).
func selfPath() string {
	if a0 := os.Args[0]; filepath.Base(a0) == "runner" {
		if strings.Contains(a0, "/") {
			if abs, err := filepath.Abs(a0); err == nil {
				return abs
			}
		} else if p, err := exec.LookPath(a0); err == nil {
			if abs, err := filepath.Abs(p); err == nil {
				return abs
			}
		}
	}
	p, err := os.Executable()
	if err != nil {
		return ""
	}
	return p
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

// runnerEnv loads the config and opens the state and the tmux server.
func (a *app) runnerEnv(progress bool) (*runner.Env, *config.Config, error) {
	cfg, _, err := config.Load(a.getenv)
	if err != nil {
		return nil, nil, err
	}
	store, err := config.OpenStore(a.getenv, cfg)
	if err != nil {
		return nil, nil, err
	}
	profiles, err := cfg.Profiles()
	if err != nil {
		return nil, nil, err
	}
	env := &runner.Env{Store: store, TC: a.tmuxClientFor(cfg), Hosts: hosts.NewPool(store),
		Profiles: profiles, Getenv: a.getenv, Environ: os.Environ, Exe: selfPath(), ExitOf: OfTask,
		Push: push.Config{Targets: cfg.NotifyPush, ServeURL: cfg.ServeURL, Profiles: profiles}}
	if progress {
		env.Progress = a.errOut
	}
	return env, cfg, nil
}

// tmuxClient returns a client for the server chosen by --socket or
// $RUNNER_TMUX_SOCKET (default: runner's private server "runner").
// It runs the config's tmux_binary; a config that cannot be read is an
// error (exit 2).
func (a *app) tmuxClient() (*tmuxctl.Client, error) {
	cfg, _, err := config.Load(a.getenv)
	if err != nil {
		return nil, err
	}
	if a.tmuxHost == "" {
		return a.tmuxClientFor(cfg), nil
	}
	// Another machine's tmux, through the host's shared ssh connection:
	// its own private server unless --socket names one there.
	s, err := a.openStore()
	if err != nil {
		return nil, err
	}
	h, err := hosts.Get(context.Background(), s, a.tmuxHost)
	if err != nil {
		return nil, err
	}
	tr := hosts.Transport(s, h)
	if err := tr.Prepare(); err != nil {
		return nil, fmt.Errorf("host %s: control socket directory: %w", h.Name, err)
	}
	socket := a.socket
	if socket == "" {
		socket = tmuxctl.DefaultSocket
	}
	// tmux_binary is a path of this machine: there, "tmux" from its PATH.
	return tmuxctl.New(socket, tmuxctl.WithTransport(tr)), nil
}

// tmuxClientFor is the tmux client with cfg's tmux_binary (cfg nil: the
// default "tmux").
func (a *app) tmuxClientFor(cfg *config.Config) *tmuxctl.Client {
	var opts []tmuxctl.Option
	if cfg != nil && cfg.TmuxBinary != "" {
		opts = append(opts, tmuxctl.WithBinary(cfg.TmuxBinary))
	}
	opts = append(opts, tmuxctl.WithSocketGuard(a.socketGuard(cfg)))
	return tmuxctl.New(tmuxctl.ResolveSocket(a.socket, a.getenv), opts...)
}

// socketGuard refuses a tmux socket path inside a folder that a sandboxed
// task may write (its folder, its git directory, its CLI's directories:
// the record's Sandbox): an agent there can bind a tmux server of its own,
// which could order runner's tmux client to run a program outside the
// sandbox. tmuxctl checks owner and mode (CheckSocket); only the state
// knows where agents write.
func (a *app) socketGuard(cfg *config.Config) func(string) error {
	return func(path string) error {
		store, err := config.OpenStore(a.getenv, cfg)
		if err != nil {
			return nil // no state: no sandboxed task either (the command says what is wrong with it)
		}
		st, err := store.Read(context.Background())
		if err != nil {
			return nil
		}
		return sandboxedPlace(st, path)
	}
}

// sandboxedPlace says which sandboxed task of st may write path, if one
// may.
func sandboxedPlace(st *state.State, path string) error {
	real := path
	if r, err := filepath.EvalSymlinks(filepath.Dir(path)); err == nil {
		real = filepath.Join(r, filepath.Base(path))
	}
	for _, t := range st.TaskList() {
		for _, w := range t.Sandbox {
			w, _, _ = strings.Cut(w, " (")
			if !filepath.IsAbs(w) {
				continue
			}
			if sandbox.Within(path, filepath.Clean(w)) || sandbox.Within(real, filepath.Clean(w)) {
				return fmt.Errorf("it lies in %s, which sandboxed task %s may write", w, t.ID)
			}
		}
	}
	return nil
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
