package main

import (
	"context"
	"errors"
	"os"
	"strings"

	"github.com/runner-cli/runner/cmd/runner/exitcode"
	"github.com/runner-cli/runner/runner/doctor"

	"github.com/runner-cli/runner/tmuxctl"
	"github.com/spf13/cobra"
)

type doctorOutput struct {
	OK     bool           `json:"ok"`
	Checks []doctor.Check `json:"checks"`
}

func (a *app) newDoctorCmd() *cobra.Command {
	var opts doctorOptions
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check tmux, git, the state dir, the config, the agent CLIs and the tmux server",
		Long: `Check what runner needs and say what to fix, one line per check:

  ok|warn|fail  NAME  DETAIL  (fix: ...)

Checks: the config file parses; tmux is installed and recent enough; the
runner's tmux server (--socket, $RUNNER_TMUX_SOCKET or "runner") is running or
not, with its sessions, panes and dead panes; git is in PATH; the state dir
exists or can be created, mode 0700 with files 0600; which agent CLIs are
installed (and their versions) and whether the default agent is; for each
installed CLI that node runs (a script whose shebang names node), which node
runs it and whether its package's engines.node allows that node (a warning,
with how to get the Node it asks for, when not); runner-ext is installed
beside runner (serve, mcp and watch run there: a warning when it is not).
Nothing is changed. Exits 1
if any check fails, 0 otherwise (warnings included).`,
		Example: `  runner doctor
  runner doctor --json --no-version`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runDoctor(cmd.Context(), opts)
		},
	}
	a.jsonFlag(cmd, &opts.asJSON)
	cmd.Flags().BoolVar(&opts.noVersion, "no-version", false, "do not run the agent CLIs to read their versions")
	return cmd
}

// doctorOptions are the arguments and flags of `runner doctor`.
type doctorOptions struct {
	asJSON    bool
	noVersion bool
}

func (a *app) runDoctor(ctx context.Context, opts doctorOptions) error {
	self, _ := os.Executable()
	checks := doctor.Run(ctx, doctor.Options{
		Getenv:        a.getenv,
		Socket:        tmuxctl.ResolveSocket(a.socket, a.getenv),
		Self:          self,
		AgentVersions: !opts.noVersion,
	})
	checks = append(checks, doctor.PushChecks(a.getenv)...)
	checks = append(checks, extCheck(extPath()))
	failed := doctor.Failed(checks)
	if opts.asJSON {
		if err := a.printJSON(doctorOutput{OK: !failed, Checks: checks}); err != nil {
			return err
		}
	} else {
		if err := doctor.WriteChecks(a.out, checks); err != nil {
			return err
		}
	}
	if failed {
		return &exitcode.Error{Code: exitcode.ExitFailed}
	}
	return nil
}

// extCheck is doctor's line for runner-ext (extPath's answer): a warning,
// not a failure, when it is missing: every command but serve, mcp, watch
// and the push sender works without it.
func extCheck(path string, err error) doctor.Check {
	var missing *extMissing
	switch {
	case errors.As(err, &missing):
		return doctor.Check{Name: extName, Status: doctor.CheckWarn, Fix: extInstall,
			Detail: "not beside runner (looked for " + strings.Join(missing.looked, ", ") + "): serve, mcp and watch cannot run"}
	case err != nil:
		return doctor.Check{Name: extName, Status: doctor.CheckWarn, Detail: err.Error(), Fix: extInstall}
	}
	return doctor.Check{Name: extName, Status: doctor.CheckOK, Detail: path + " (serve, mcp, watch, push-send)"}
}
