package main

import (
	"context"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/doctor"
	"github.com/runner-cli/runner/runner/push"

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
with how to get the Node it asks for, when not). Nothing is changed. Exits 1
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
	checks = append(checks, a.pushChecks()...)
	failed := doctor.Failed(checks)
	if opts.asJSON {
		if err := a.printJSON(doctorOutput{OK: !failed, Checks: checks}); err != nil {
			return err
		}
	} else {
		tw := tabwriter.NewWriter(a.out, 0, 4, 2, ' ', 0)
		for _, c := range checks {
			line := fmt.Sprintf("%s\t%s\t%s", c.Status, c.Name, c.Detail)
			if c.Fix != "" {
				line += "  (fix: " + c.Fix + ")"
			}
			fmt.Fprintln(tw, line)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if failed {
		return &ExitError{Code: ExitFailed}
	}
	return nil
}

// pushChecks is a line per notify_push target: ok, or a warning with its
// last failure when its last attempt failed (its secret never said).
func (a *app) pushChecks() []doctor.Check {
	cfg, _, err := config.Load(a.getenv)
	if err != nil || len(cfg.NotifyPush) == 0 {
		return nil
	}
	store, err := config.OpenStore(a.getenv, cfg)
	if err != nil {
		return nil
	}
	healths, queued, err := push.Healths(store, cfg.NotifyPush)
	var out []doctor.Check
	for _, h := range healths {
		c := doctor.Check{Name: "push", Status: doctor.CheckOK, Detail: h.Target + ": nothing pushed yet"}
		if !h.LastSent.IsZero() {
			c.Detail = h.Target + ": last pushed " + h.LastSent.Local().Format(time.DateTime)
		}
		if h.Failing {
			c.Status = doctor.CheckWarn
			c.Detail = fmt.Sprintf("%s: last failure %s (task %s): %s", h.Target, h.LastFailure.Local().Format(time.DateTime), h.Task, h.Error)
			c.Fix = "check the receiver is up and the URL right; runner events shows each push that gave up"
		}
		if queued > 0 {
			c.Detail += fmt.Sprintf("; %d push(es) queued", queued)
		}
		out = append(out, c)
	}
	if err != nil {
		out = append(out, doctor.Check{Name: "push", Status: doctor.CheckWarn, Detail: err.Error()})
	}
	return out
}
