package extcmd

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/runner-cli/runner/cmd/runner/exitcode"
	"github.com/runner-cli/runner/cmd/runner/internal/cmdkit"
	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/runner"
	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/door"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/open"
	"github.com/runner-cli/runner/state"
)

// Main runs runner-ext with args (runner's, as given to runner: --socket
// and one of Names with its flags) and returns the exit code, as runner's
// Main does: the same streams made visible, the same errors and codes
// (package exitcode), --json errors as JSON. version is the binary's.
func Main(args []string, in io.Reader, out, errOut io.Writer, version string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	vOut, vErr := textutil.NewVisibleWriter(out), textutil.NewVisibleWriter(errOut)
	defer func() { vOut.Flush(); vErr.Flush() }()
	jsonErrors := cmdkit.JSONArgs(args)
	var socket string
	f := &cmdkit.Factory{In: in, Out: vOut, ErrOut: vErr, RawOut: out, RawErr: errOut, Getenv: os.Getenv,
		Config: func() (*config.Config, error) {
			cfg, _, err := config.Load(os.Getenv)
			return cfg, err
		},
		Store: func() (*state.Store, error) { return config.OpenStore(os.Getenv, nil) },
		Env: func(progress bool) (*runner.Env, *config.Config, error) {
			env, cfg, err := open.Env(open.Options{Getenv: os.Getenv, Socket: socket}, os.Args[0])
			if err != nil {
				return nil, nil, err
			}
			env.Exe, env.ExitOf = self(), exitcode.OfTask
			if progress {
				env.Progress = vErr
			}
			return env, cfg, nil
		},
		JSONErrors: func(v bool) { jsonErrors = v },
		Checks:     cmdkit.CheckDurations,
		IsTerminal: cmdkit.IsTerminal,
		Socket:     func() string { return socket },
	}
	root := newRoot(f, &socket, version)
	root.SetArgs(args)
	root.SetIn(in)
	root.SetOut(vOut)
	root.SetErr(vErr)
	err := root.ExecuteContext(ctx)
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	code := exitcode.Of(err)
	if err != nil {
		exitcode.Print(err, code, jsonErrors, vErr, errOut)
	}
	return code
}

// newRoot is runner-ext's root: runner's name (its help and errors say
// "runner watch", as the user typed), --socket, and the commands of
// Names. A request from a sandboxed task's door, or a process inside a
// sandbox, is refused every one of them, as runner refuses them.
func newRoot(f *cmdkit.Factory, socket *string, version string) *cobra.Command {
	root := &cobra.Command{Use: "runner", SilenceErrors: true, SilenceUsage: true}
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &cmdkit.FlagError{Err: err} })
	root.PersistentFlags().StringVar(socket, "socket", "", cmdkit.SocketUsage)
	root.PersistentPreRunE = func(c *cobra.Command, _ []string) error {
		if f.Getenv(door.EnvConfined) != "" || f.Getenv(door.EnvDoor) != "" {
			return fault.Usagef("'runner %s' is not open to a sandboxed task", c.Name())
		}
		return f.Checks(c)
	}
	c := New(f, version)
	for _, name := range Names {
		root.AddCommand(c.Build(name))
	}
	return root
}
