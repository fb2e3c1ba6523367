// Where a task's pane runs: this machine or a host. launch is one
// pipeline; a site supplies what differs (the pane's environment, where
// its files are, how its hook and sandbox are made, which tmux).

package runner

import (
	"context"
	"fmt"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/runner/hosts"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/remote"
	"github.com/runner-cli/runner/runner/settings"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// site is where a task's agent runs.
type site interface {
	// paneEnv is the pane's environment, before the hook's.
	paneEnv(t *state.Task, prof *profile.Profile) []string
	// hook makes the site ready for the task's files and, with use, its
	// turn-end hook, and returns what the hook adds to the agent's argv
	// and environment (none when the CLI would not read it, said).
	hook(ctx context.Context, t *state.Task, prof *profile.Profile, penv []string, use bool) (args, env []string, err error)
	// sandbox wraps argv in bubblewrap as sb says (the user's sandbox
	// paths, the home mode), and returns what the agent may write.
	sandbox(ctx context.Context, t *state.Task, prof *profile.Profile, penv, argv []string, sb *settings.Sandbox) ([]string, []string, error)
	// client is the site's tmux.
	client() *tmuxctl.Client
	// transcript and diedFile are the site's paths of the pane's
	// transcript and of the pane-died file its tmux hooks append to.
	transcript(t *state.Task) string
	diedFile(t *state.Task) string
	// stateDir is the state directory the pane is marked with ("" for
	// none: a host's panes belong to no state directory there).
	stateDir() string
	// where is "" here, " on host NAME" on a host (for messages).
	where() string
}

var (
	_ site = localSite{}
	_ site = hostSite{}
)

// siteOf is the site of task t: its host, or this machine.
func siteOf(ctx context.Context, env *Env, t *state.Task) (site, error) {
	if t.Tmux.Host == "" {
		return localSite{env}, nil
	}
	c, err := env.Hosts.Conn(ctx, t.Tmux.Host)
	if err != nil {
		return nil, err
	}
	dir, err := c.TaskPath(ctx, t.ID)
	if err != nil {
		return nil, err
	}
	return hostSite{env: env, c: c, files: remote.FilesIn(dir)}, nil
}

// localSite is this machine: the pane in env's tmux server, its files in
// the state directory.
type localSite struct{ env *Env }

func (s localSite) client() *tmuxctl.Client         { return s.env.TC }
func (s localSite) transcript(t *state.Task) string { return t.Transcript }
func (s localSite) diedFile(*state.Task) string     { return s.env.Store.PaneDiedFile() }
func (s localSite) stateDir() string                { return s.env.Store.Dir() }
func (s localSite) where() string                   { return "" }

// hostSite is a host: the pane in the host's tmux, its files there (which
// the supervisor streams back, package remote).
type hostSite struct {
	env   *Env
	c     *hosts.Conn
	files remote.Files
}

func (s hostSite) client() *tmuxctl.Client       { return s.c.TC() }
func (s hostSite) transcript(*state.Task) string { return s.files.Transcript }
func (s hostSite) diedFile(*state.Task) string   { return s.files.Died }
func (s hostSite) stateDir() string              { return "" }
func (s hostSite) where() string                 { return " on host " + s.c.Host().Name }

func (s hostSite) paneEnv(t *state.Task, prof *profile.Profile) []string {
	return remote.PaneEnv(t, prof, s.files)
}

// hook renders the hook for the host (remote.Hook) and makes the task's
// files there, writing the hook's settings file, in one round trip.
func (s hostSite) hook(ctx context.Context, t *state.Task, prof *profile.Profile, penv []string, use bool) ([]string, []string, error) {
	var hl *profile.HookLaunch
	var henv []string
	if use {
		var why string
		var err error
		if hl, henv, why, err = remote.Hook(t, s.c, prof, s.files, penv); err != nil {
			return nil, nil, err
		}
		if why != "" {
			s.env.Say("task %s: %s%s: no turn-end hook (%s); the screen ends each turn", t.ID, prof.Name, s.where(), why)
		}
	}
	if err := remote.Prepare(ctx, s.c, s.files, hl); err != nil {
		return nil, nil, fmt.Errorf("task %s: its files%s: %w", t.ID, s.where(), err)
	}
	if hl == nil {
		return nil, nil, nil
	}
	return hl.Args, henv, nil
}

func (s hostSite) sandbox(ctx context.Context, t *state.Task, prof *profile.Profile, penv, argv []string, sb *settings.Sandbox) ([]string, []string, error) {
	common := ""
	if gctx, err := s.env.Hosts.GitOn(ctx, t.Tmux.Host); err == nil {
		common, _ = gitsnap.CommonDir(gctx, t.Dir) // none: not a repository
	}
	return remote.SandboxArgv(ctx, t, s.c, prof, s.files, penv, argv, sb.Paths, common)
}
