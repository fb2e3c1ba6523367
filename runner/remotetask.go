// A task on a host: the checks at dispatch, the launch of its agent in
// the host's tmux (its files and turn-end hook there), and gc of its
// window there.

package runner

import (
	"context"
	"fmt"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/remote"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// launchRemote starts t's agent in a new window of its session on its
// host, with remain-on-exit, the pane's transcript and pane-died hooks
// writing to files there (which the supervisor streams back), and no
// turn-end hook: the screen ends each turn.
func (env *Env) launchRemote(ctx context.Context, t *state.Task, prof *profile.Profile, spec *StartSpec) error {
	c, err := env.HostConn(ctx, t.Tmux.Host)
	if err != nil {
		return err
	}
	dir, err := c.TaskPath(ctx, t.ID)
	if err != nil {
		return err
	}
	files := remote.FilesIn(dir)
	penv := remote.PaneEnv(t, prof, files)
	argv := append([]string(nil), spec.Argv...)
	var settings *profile.HookLaunch
	if spec.UseHook && prof.Hook != nil {
		hl, henv, why, err := remote.Hook(t, c, prof, files, penv)
		if err != nil {
			return err
		}
		if why != "" {
			env.Say("task %s: %s on host %s: no turn-end hook (%s); the screen ends each turn", t.ID, prof.Name, t.Tmux.Host, why)
		}
		if hl != nil {
			argv, penv, settings = append(argv, hl.Args...), append(penv, henv...), hl
		}
	}
	// One round trip makes the task's files there (and writes its hook's
	// settings file by a rename).
	if err := remote.Prepare(ctx, c, files, settings); err != nil {
		return fmt.Errorf("task %s: its files on host %s: %w", t.ID, t.Tmux.Host, err)
	}
	var writable []string
	if spec.Sandbox != nil {
		common := ""
		if gctx, err := env.GitOn(ctx, t.Tmux.Host); err == nil {
			common, _ = gitsnap.CommonDir(gctx, t.Dir) // none: not a repository
		}
		if argv, writable, err = remote.SandboxArgv(ctx, t, c, prof, files, penv, argv, spec.Sandbox.Paths, common); err != nil {
			return err
		}
	}
	size := spec.Size
	if size.Width == 0 {
		size = tmuxctl.Size{Width: 200, Height: 50}
	}
	pane, err := c.TC().Launch(ctx, tmuxctl.WindowSpec{Session: t.Tmux.Session, Name: t.ID, Cwd: t.Dir,
		Env: penv, Argv: argv, Size: size, RemainOnExit: true, PipeTo: files.Transcript})
	if err != nil {
		return fmt.Errorf("start %s in tmux on host %s: %w", prof.Name, t.Tmux.Host, err)
	}
	err = c.TC().Batch(ctx, append(tmuxctl.PaneDiedHooks(pane, t.Tmux.Session, files.Died),
		[]string{"set-option", "-p", "-t", pane, tmuxctl.TranscriptOption, files.Transcript},
		[]string{"set-option", "-p", "-t", pane, "@runner_task", t.ID},
	)...)
	if err != nil {
		return err
	}
	return env.Record().Update(ctx, t.ID, func(x *state.Task) {
		x.Tmux.Pane = pane
		x.History[len(x.History)-1].Reason += "; pane " + pane + " on host " + t.Tmux.Host
		if writable != nil {
			x.Sandbox = writable
			x.History[len(x.History)-1].Reason += "; sandboxed (bwrap)"
		}
	})
}
