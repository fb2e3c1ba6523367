package open

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/runner-cli/runner/runner"
	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/hosts"
	"github.com/runner-cli/runner/runner/push"
	"github.com/runner-cli/runner/runner/sandbox"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// Options are what every command opens with: the environment it reads
// (the RUNNER_* overrides, the XDG folders) and the --socket flag ("":
// $RUNNER_TMUX_SOCKET, else runner's private server).
type Options struct {
	Getenv func(string) string
	Socket string
}

// Env loads the config and opens the state and the tmux server: the
// runner.Env of a command (Exe is Self's path; the caller sets Progress
// and ExitOf), and the config it was made from.
func Env(o Options, arg0 string) (*runner.Env, *config.Config, error) {
	cfg, _, err := config.Load(o.Getenv)
	if err != nil {
		return nil, nil, err
	}
	store, err := config.OpenStore(o.Getenv, cfg)
	if err != nil {
		return nil, nil, err
	}
	profiles, err := cfg.Profiles()
	if err != nil {
		return nil, nil, err
	}
	return &runner.Env{Store: store, TC: Tmux(o, cfg), Hosts: hosts.NewPool(store),
		Profiles: profiles, Getenv: o.Getenv, Environ: os.Environ, Exe: Self(arg0),
		Push: push.Config{Targets: cfg.NotifyPush, ServeURL: cfg.ServeURL, Profiles: profiles}}, cfg, nil
}

// Tmux is the client of this machine's tmux server o names, running
// cfg's tmux_binary (cfg nil: "tmux"), refusing a socket a sandboxed task
// may write (SocketGuard).
func Tmux(o Options, cfg *config.Config) *tmuxctl.Client {
	var opts []tmuxctl.Option
	if cfg != nil && cfg.TmuxBinary != "" {
		opts = append(opts, tmuxctl.WithBinary(cfg.TmuxBinary))
	}
	opts = append(opts, tmuxctl.WithSocketGuard(SocketGuard(o, cfg)))
	return tmuxctl.New(tmuxctl.ResolveSocket(o.Socket, o.Getenv), opts...)
}

// HostTmux is the client of registered host name's tmux, through the
// host's shared ssh connection: its private server unless o.Socket names
// one there (tmux_binary is a path of this machine: there, "tmux" from
// its PATH).
func HostTmux(ctx context.Context, o Options, name string) (*tmuxctl.Client, error) {
	s, err := config.OpenStore(o.Getenv, nil)
	if err != nil {
		return nil, err
	}
	h, err := hosts.Get(ctx, s, name)
	if err != nil {
		return nil, err
	}
	tr := hosts.Transport(s, h)
	if err := tr.Prepare(); err != nil {
		return nil, fmt.Errorf("host %s: control socket directory: %w", h.Name, err)
	}
	socket := o.Socket
	if socket == "" {
		socket = tmuxctl.DefaultSocket
	}
	return tmuxctl.New(socket, tmuxctl.WithTransport(tr)), nil
}

// SocketGuard refuses a tmux socket path inside a folder that a sandboxed
// task may write (its folder, its git directory, its CLI's directories:
// the record's Sandbox): an agent there can bind a tmux server of its own,
// which could order runner's tmux client to run a program outside the
// sandbox. tmuxctl checks owner and mode (CheckSocket); only the state
// knows where agents write. No state to read is no sandboxed task. The
// state is read with the context of the client's first tmux call: its
// index, and the records of the tasks it lists as sandboxed
// (State.SandboxedTasks), not every task's.
func SocketGuard(o Options, cfg *config.Config) func(context.Context, string) error {
	return func(ctx context.Context, path string) error {
		store, err := config.OpenStore(o.Getenv, cfg)
		if err != nil {
			return nil // the command says what is wrong with the state
		}
		st, err := store.ReadIndex(ctx)
		if err != nil {
			return nil
		}
		return SandboxedPlace(st, path)
	}
}

// SandboxedPlace says which sandboxed task of st may write path, if one
// may (path's folder is taken with its links resolved too).
func SandboxedPlace(st *state.State, path string) error {
	real := path
	if r, err := filepath.EvalSymlinks(filepath.Dir(path)); err == nil {
		real = filepath.Join(r, filepath.Base(path))
	}
	for _, t := range st.SandboxedTasks() {
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

// Self is the absolute path of this runner binary as invoked by arg0
// (os.Args[0]): a name or link called runner is kept, so test harnesses
// that run the test binary under that name work too; else the
// executable's own path ("" when it cannot be found).
func Self(arg0 string) string {
	if filepath.Base(arg0) == "runner" {
		if strings.Contains(arg0, "/") {
			if abs, err := filepath.Abs(arg0); err == nil {
				return abs
			}
		} else if p, err := exec.LookPath(arg0); err == nil {
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
