package extcmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/runner-cli/runner/cmd/runner/internal/cmdkit"
	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/push/send"
)

// NewPushSendCmd is the hidden push sender (package push): started
// detached by a supervisor that queued a push when no sender runs.
func (c *Cmds) NewPushSendCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "push-send",
		Short:  "Deliver the queued pushes (config notify_push), then exit",
		Hidden: true,
		Args:   cmdkit.Args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return c.runPushSend(cmd.Context())
		},
	}
}

func (c *Cmds) runPushSend(ctx context.Context) error {
	cfg, err := c.f.Config()
	if err != nil {
		return err
	}
	store, err := config.OpenStore(c.f.Getenv, cfg)
	if err != nil {
		return err
	}
	s := &send.Sender{Store: store, Targets: cfg.NotifyPush, Log: func(format string, args ...any) {
		fmt.Fprintf(c.f.ErrOut, "%s runner push-send: %s\n", clock.Now().UTC().Format("2006-01-02T15:04:05.000Z"), fmt.Sprintf(format, args...))
	}}
	return s.Run(ctx)
}
