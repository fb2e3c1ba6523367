package gc

import (
	"context"
	"os"
	"time"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/runner/hosts"
	"github.com/runner-cli/runner/runner/profile"
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

// Store is the state gc reads and changes, and the lock that keeps two
// gcs apart: a *state.Store.
type Store interface {
	Dir() string
	Read(ctx context.Context) (*state.State, error)
	// ReadIndex is Read with the index's hot fields only (what AutoStart
	// looks at).
	ReadIndex(ctx context.Context) (*state.State, error)
	Update(ctx context.Context, fn func(*state.State) error) error
	LockProject(ctx context.Context, project string, wait bool) (*state.ProjectLock, error)
	// FindGroup is a group by id or unique prefix (cancel GROUP); Groups
	// are every group by id, UpdateGroup changes one (the refs a group
	// across hosts left, removed).
	FindGroup(ctx context.Context, ref string) (*state.Group, error)
	Groups(ctx context.Context) (map[string]*state.Group, error)
	UpdateGroup(ctx context.Context, id string, fn func(*state.Group) error) error
}

// Book is the task records and the journal as gc and cancel write them:
// a record.Book.
type Book interface {
	Task(ctx context.Context, ref string) (*state.Task, error)
	Update(ctx context.Context, id string, fn func(*state.Task)) error
	Finish(ctx context.Context, id string, s state.Status, reason string, fn func(*state.Task)) error
	Journal(ctx context.Context, t *state.Task, kind, msg string)
}

// Tmux is a tmux server as gc reads its panes and closes its windows
// (and cancel interrupts an agent): a *tmuxctl.Client, here or on a host.
type Tmux interface {
	ListPanes(ctx context.Context) ([]tmuxctl.PaneInfo, error)
	Pane(ctx context.Context, pane string) (tmuxctl.PaneInfo, error)
	Clients(ctx context.Context) ([]tmuxctl.ClientInfo, error)
	ShowOption(ctx context.Context, pane, name string) (string, error)
	ServerPID(ctx context.Context) (int, error)
	CaptureScreen(ctx context.Context, pane string) (string, error)
	Capture(ctx context.Context, pane string, opts tmuxctl.CaptureOptions) (string, error)
	SendKeys(ctx context.Context, pane string, keys ...string) error
	KillWindow(ctx context.Context, pane string) error
}

// Host is a registered host as gc reaches it: a *hosts.Conn (OnPool
// makes one of each).
type Host interface {
	Host() *state.Host
	// Tmux is the tmux server there.
	Tmux() Tmux
	// TaskPath is the folder of a task's files there.
	TaskPath(ctx context.Context, id string) (string, error)
	// Run runs a command there.
	Run(ctx context.Context, argv ...string) (string, error)
}

// Hosts are the registered hosts as gc reaches them: a *hosts.Pool
// (OnPool).
type Hosts interface {
	// Conn is the connection to host name.
	Conn(ctx context.Context, name string) (Host, error)
	// GitOn is ctx for gitsnap's calls on host ("": this machine).
	GitOn(ctx context.Context, host string) (context.Context, error)
}

// OnPool is the Hosts of pool.
func OnPool(pool *hosts.Pool) Hosts { return poolHosts{pool} }

// poolHosts is the Hosts of a pool.
type poolHosts struct{ p *hosts.Pool }

// Conn is the pool's connection to host name.
func (h poolHosts) Conn(ctx context.Context, name string) (Host, error) {
	c, err := h.p.Conn(ctx, name)
	if err != nil {
		return nil, err
	}
	return hostConn{c}, nil
}

// GitOn is the pool's ctx for gitsnap's calls on host.
func (h poolHosts) GitOn(ctx context.Context, host string) (context.Context, error) {
	return h.p.GitOn(ctx, host)
}

// hostConn is a Host over a connection of package hosts.
type hostConn struct{ *hosts.Conn }

// Tmux is the connection's tmux client.
func (c hostConn) Tmux() Tmux { return c.TC() }

// Panes is Deps.PaneClient over client (Env.PaneClient).
func Panes(client func(ctx context.Context, t *state.Task) (*tmuxctl.Client, error)) func(ctx context.Context, t *state.Task) (Tmux, error) {
	return func(ctx context.Context, t *state.Task) (Tmux, error) {
		c, err := client(ctx, t)
		if err != nil {
			return nil, err
		}
		return c, nil
	}
}

// Git is the git gc runs, on the machine ctx names (Hosts.GitOn):
// package gitsnap's functions (Gitsnap), a fake in the tests.
type Git interface {
	// WorktreeHome is the folder of runner's worktrees of dir's
	// repository; WorktreeRemove removes the worktree at path of it, and
	// DeleteBranch a branch.
	WorktreeHome(ctx context.Context, dir string) (string, error)
	WorktreeRemove(ctx context.Context, dir, path string) error
	DeleteBranch(ctx context.Context, dir, branch string) error
	// SameRepository says whether the repository at dir (ctx's machine)
	// is the one at thereDir on there's.
	SameRepository(ctx context.Context, dir string, there context.Context, thereDir string) (bool, error)
	// DropRefs removes refs of dir's repository and returns those it
	// removed; RefCommit is the commit of ref there.
	DropRefs(ctx context.Context, dir string, refs []string) ([]string, error)
	RefCommit(ctx context.Context, dir, ref string) (string, error)
}

// Gitsnap is the Git of package gitsnap.
type Gitsnap struct{}

var _ Git = Gitsnap{}

// WorktreeHome is gitsnap.WorktreeHome.
func (Gitsnap) WorktreeHome(ctx context.Context, dir string) (string, error) {
	return gitsnap.WorktreeHome(ctx, dir)
}

// WorktreeRemove is gitsnap.WorktreeRemove.
func (Gitsnap) WorktreeRemove(ctx context.Context, dir, path string) error {
	return gitsnap.WorktreeRemove(ctx, dir, path)
}

// DeleteBranch is gitsnap.DeleteBranch.
func (Gitsnap) DeleteBranch(ctx context.Context, dir, branch string) error {
	return gitsnap.DeleteBranch(ctx, dir, branch)
}

// SameRepository is gitsnap.SameRepository.
func (Gitsnap) SameRepository(ctx context.Context, dir string, there context.Context, thereDir string) (bool, error) {
	return gitsnap.SameRepository(ctx, dir, there, thereDir)
}

// DropRefs is gitsnap.DropRefs.
func (Gitsnap) DropRefs(ctx context.Context, dir string, refs []string) ([]string, error) {
	return gitsnap.DropRefs(ctx, dir, refs)
}

// RefCommit is gitsnap.RefCommit.
func (Gitsnap) RefCommit(ctx context.Context, dir, ref string) (string, error) {
	return gitsnap.RefCommit(ctx, dir, ref)
}

// Deps is what gc and cancel use, built by cmd/runner from its Env: the
// store and the task record, this machine's tmux server and the hosts',
// the profiles (quit keys, session ids, interrupt keys), the clock and
// warnings, the self-spawn, what they ask of package runner (Core) and
// of package worktree (a function), and git. Every field is required
// but Procs and Git (StartAuto needs only Store, Now, Exe and
// SpawnRunner).
type Deps struct {
	Store Store
	// Record writes the task records and the journal (Env.Record).
	Record   Book
	TC       Tmux
	Profiles []*profile.Profile
	Now      func() time.Time
	// Warn says what went wrong on the side (Env.Warn).
	Warn func(format string, args ...any)

	// Hosts reaches the registered hosts (OnPool over Env.Hosts);
	// PaneClient is the tmux server of a task's pane, here or on its
	// host (Panes over Env.PaneClient).
	Hosts      Hosts
	PaneClient func(ctx context.Context, t *state.Task) (Tmux, error)

	// Exe is the runner binary ("": the background gc is not started);
	// SpawnRunner starts it detached (Env.SpawnRunner).
	Exe         string
	SpawnRunner func(logPath string, extra []*os.File, args ...string) (int, error)

	// Core is what gc asks of package runner (open.Core).
	Core

	// Procs ends the processes picked (nil: the system's, Proctree).
	Procs Procs
	// Git removes worktrees, branches and the refs of groups (nil:
	// package gitsnap's, Gitsnap).
	Git Git

	// ListWorktrees lists the task worktrees (worktree.List).
	ListWorktrees func(ctx context.Context) ([]worktree.Info, error)
}

// procs is d.Procs, the system's when none is given.
func (d Deps) procs() Procs {
	if d.Procs == nil {
		return Proctree{}
	}
	return d.Procs
}

// git is d.Git, gitsnap's when none is given.
func (d Deps) git() Git {
	if d.Git == nil {
		return Gitsnap{}
	}
	return d.Git
}
