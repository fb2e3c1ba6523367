package main

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"github.com/runner-cli/runner/runner/confine"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/sandbox"
	"github.com/spf13/cobra"
)

// newSandboxExecCmd is the hidden command a sandbox whose paths an agent
// can change runs first, inside it (confine.Launch.Verify): it checks
// that every writable bind is the place runner checked before the sandbox
// was made (sandbox.VerifyInside) and only then becomes the agent's
// command (exec). A refusal ends the pane: the task fails with why.
func (a *app) newSandboxExecCmd() *cobra.Command {
	var expect []string
	cmd := &cobra.Command{
		Use:    confine.SandboxExec + " --expect DEV:INO:PATH... -- COMMAND [ARG...]",
		Short:  "Check a sandbox's writable binds from inside, then run the command (runner's own use)",
		Hidden: true,
		Args:   args(cobra.MinimumNArgs(1)),
		RunE: func(_ *cobra.Command, argv []string) error {
			exps := make([]sandbox.Expected, 0, len(expect))
			for _, s := range expect {
				e, err := sandbox.ParseExpected(s)
				if err != nil {
					return fault.Usagef("%v", err)
				}
				exps = append(exps, e)
			}
			info, err := sandbox.SelfMounts()
			if err != nil {
				return fmt.Errorf("sandbox: read the mounts: %w", err)
			}
			if err := sandbox.VerifyInside(exps, info, sandbox.StatID); err != nil {
				return fmt.Errorf("%w; the agent was not started", err)
			}
			path, err := exec.LookPath(argv[0])
			if err != nil {
				return fault.Usagef("sandbox: %v", err)
			}
			return syscall.Exec(path, argv, os.Environ())
		},
	}
	cmd.Flags().StringArrayVar(&expect, "expect", nil, "a writable bind as runner checked it: DEV:INO:PATH (repeatable)")
	return cmd
}
