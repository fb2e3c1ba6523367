package gc

import (
	"context"
	"os"
	"time"

	"github.com/runner-cli/runner/runner/hosts"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/record"
	"github.com/runner-cli/runner/runner/settings"
	"github.com/runner-cli/runner/runner/worktree"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// Core is what gc and cancel ask of package runner: GetTask is one task
// of the reconciled state by id or unique prefix; ReconcilePanes the
// reconciled state with the live panes; Notify tells the user a task
// ended.
type Core interface {
	GetTask(ctx context.Context, ref string) (*state.Task, error)
	ReconcilePanes(ctx context.Context) (*state.State, []tmuxctl.PaneInfo, error)
	Notify(ctx context.Context, t *state.Task, set settings.Run)
}

// Deps is what gc and cancel use, built by cmd/runner from its Env: the
// store and the task record, this machine's tmux server and the hosts',
// the profiles (quit keys, session ids, interrupt keys), the clock and
// warnings, the self-spawn, what they ask of package runner (Core) and
// of package worktree (a function). Every field is required (StartAuto
// needs only Store, Now, Exe and SpawnRunner).
type Deps struct {
	Store *state.Store
	// Record writes the task records and the journal (Env.Record).
	Record   record.Book
	TC       *tmuxctl.Client
	Profiles []*profile.Profile
	Now      func() time.Time
	// Warn says what went wrong on the side (Env.Warn).
	Warn func(format string, args ...any)

	// HostConn is the connection to a registered host (Env.HostConn);
	// PaneClient the tmux client of a task's pane, here or on its host
	// (Env.PaneClient); GitOn ctx for gitsnap calls on a host, "" for
	// this machine (Env.GitOn).
	HostConn   func(ctx context.Context, name string) (*hosts.Conn, error)
	PaneClient func(ctx context.Context, t *state.Task) (*tmuxctl.Client, error)
	GitOn      func(ctx context.Context, host string) (context.Context, error)

	// Exe is the runner binary ("": the background gc is not started);
	// SpawnRunner starts it detached (Env.SpawnRunner).
	Exe         string
	SpawnRunner func(logPath string, extra []*os.File, args ...string) (int, error)

	// Core is what gc asks of package runner (open.Core).
	Core

	// ListWorktrees lists the task worktrees (worktree.List).
	ListWorktrees func(ctx context.Context) ([]worktree.Info, error)
}
