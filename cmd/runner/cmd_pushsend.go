package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/push"
)

// newPushSendCmd is the hidden push sender (package push): started
// detached by a supervisor that queued a push when no sender runs.
func (a *app) newPushSendCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "push-send",
		Short:  "Deliver the queued pushes (config notify_push), then exit",
		Hidden: true,
		Args:   args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runPushSend(cmd.Context())
		},
	}
}

func (a *app) runPushSend(ctx context.Context) error {
	cfg, _, err := config.Load(a.getenv)
	if err != nil {
		return err
	}
	store, err := config.OpenStore(a.getenv, cfg)
	if err != nil {
		return err
	}
	s := &push.Sender{Store: store, Targets: cfg.NotifyPush, Log: func(format string, args ...any) {
		fmt.Fprintf(a.errOut, "%s runner push-send: %s\n", clock.Now().UTC().Format("2006-01-02T15:04:05.000Z"), fmt.Sprintf(format, args...))
	}}
	return s.Run(ctx)
}
