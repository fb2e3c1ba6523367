// A task on a host: the checks at dispatch, the launch of its agent in
// the host's tmux (its files and turn-end hook there), and gc of its
// window there.

package runner

import (
	"context"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/runner-cli/runner/runner/hosts"
	"github.com/runner-cli/runner/runner/projects"

	"github.com/runner-cli/runner/internal/transport"
	"github.com/runner-cli/runner/runner/exit"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// remoteArgv checks, in one round trip, that dir is a directory on host
// and that argv's program is installed there, and returns the argv to run
// there: "runner" (the sim agent) is the host's runner binary. A missing
// directory, program or runner binary is a usage error (exit 2); an
// unreachable host wraps hosts.ErrUnreachable (exit 1).
func (env *Env) remoteArgv(ctx context.Context, prof *profile.Profile, host, dir string, argv []string) ([]string, error) {
	c, err := env.HostConn(ctx, host)
	if err != nil {
		return nil, err
	}
	if len(argv) == 0 {
		return nil, exit.Usagef("agent %s: the profile has no command (set profiles.%s.command in the config)", prof.Name, prof.Name)
	}
	out := append([]string(nil), argv...)
	if out[0] == "runner" {
		if c.Host().Runner == "" {
			return nil, exit.Usagef("agent %s runs runner's own binary, and host %s names none: copy runner there, then 'runner host rm %s' and 'runner host add %s %s --runner /path/to/runner'",
				prof.Name, host, host, host, c.Host().Destination)
		}
		out[0] = c.Host().Runner
	}
	res, err := c.Run(ctx, "sh", "-c", `if [ ! -d "$1" ]; then echo nodir; elif ! command -v "$2" >/dev/null 2>&1; then echo noprog; else echo ok; fi`, "sh", dir, out[0])
	if err != nil {
		return nil, err
	}
	switch strings.TrimSpace(res) {
	case "ok":
		return out, nil
	case "nodir":
		return nil, exit.Usagef("directory %s does not exist on host %s (create it there, or fix the project)", dir, host)
	case "noprog":
		return nil, exit.Usagef("agent %s: %q is not installed on host %s, or not in the PATH of an ssh session there ('runner host check %s' lists what is)", prof.Name, out[0], host, host)
	}
	return nil, fmt.Errorf("host %s: unexpected answer %q while checking %s", host, res, dir)
}

// remoteFiles are a remote task's files on its host: the pane's
// transcript (pipe-pane), the pane-died file its tmux hooks append to,
// and under state/ what the host's runner binary keeps for it (`runner
// hook` appends its turn-end events to state/events/ID.jsonl).
type remoteFiles struct {
	transcript, died, state, events, hookDir string
}

// remoteFilesIn names the files of task id whose directory there is dir.
func remoteFilesIn(dir string) remoteFiles {
	id := path.Base(dir)
	st := path.Join(dir, "state")
	return remoteFiles{transcript: path.Join(dir, "log"), died: path.Join(dir, "pane-died"), state: st,
		events: path.Join(st, "events", id+".jsonl"), hookDir: path.Join(dir, "hook")}
}

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
	files := remoteFilesIn(dir)
	penv := remotePaneEnv(t, prof, files)
	argv := append([]string(nil), spec.Argv...)
	var settings *profile.HookLaunch
	if spec.UseHook && prof.Hook != nil {
		hl, henv, err := env.remoteHook(t, c, prof, files, penv)
		if err != nil {
			return err
		}
		if hl != nil {
			argv, penv, settings = append(argv, hl.Args...), append(penv, henv...), hl
		}
	}
	// One round trip makes the task's files there (and writes its hook's
	// settings file by a rename).
	if err := prepareTask(ctx, c, files, settings); err != nil {
		return fmt.Errorf("task %s: its files on host %s: %w", t.ID, t.Tmux.Host, err)
	}
	var writable []string
	if spec.Sandbox != nil {
		if argv, writable, err = env.remoteSandboxArgv(ctx, t, c, prof, files, penv, argv, spec.Sandbox); err != nil {
			return err
		}
	}
	size := spec.Size
	if size.Width == 0 {
		size = tmuxctl.Size{Width: 200, Height: 50}
	}
	pane, err := c.TC().Launch(ctx, tmuxctl.WindowSpec{Session: t.Tmux.Session, Name: t.ID, Cwd: t.Dir,
		Env: penv, Argv: argv, Size: size, RemainOnExit: true, PipeTo: files.transcript})
	if err != nil {
		return fmt.Errorf("start %s in tmux on host %s: %w", prof.Name, t.Tmux.Host, err)
	}
	err = c.TC().Batch(ctx, append(tmuxctl.PaneDiedHooks(pane, t.Tmux.Session, files.died),
		[]string{"set-option", "-p", "-t", pane, tmuxctl.TranscriptOption, files.transcript},
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

// remotePaneEnv is the environment of an agent pane on a host: the task's
// identity, where the host's runner keeps its files for it (for `runner
// hook`), and the profile's variables. Nothing of this machine's (PATH,
// HOME, the state directory) applies there.
func remotePaneEnv(t *state.Task, prof *profile.Profile, files remoteFiles) []string {
	kv := []string{
		"RUNNER_TASK_ID=" + t.ID,
		"RUNNER_PROJECT=" + projects.Label(t),
		"RUNNER_LEVEL=" + strconv.Itoa(t.Level),
		"RUNNER_PARENT=" + t.Parent,
		"RUNNER_HOST=" + t.Tmux.Host,
		"RUNNER_STATE_DIR=" + files.state,
		"RUNNER_EVENTS_FILE=" + files.events,
	}
	return append(kv, prof.EnvList()...)
}

// remoteHook renders the profile's turn-end hook for t on its host: the
// host's runner binary records the events there (streamed back with the
// transcript), with its settings file there (prepareTask writes it). None
// (nil, said: the screen ends each turn) without a runner binary there,
// for a hook that would replace the user's own program (which runner
// cannot read there), or for one whose settings must be root's.
func (env *Env) remoteHook(t *state.Task, c *hosts.Conn, prof *profile.Profile, files remoteFiles, penv []string) (*profile.HookLaunch, []string, error) {
	why := ""
	switch {
	case c.Host().Runner == "":
		why = "the host names no runner binary (runner host add … --runner PATH)"
	case prof.Hook.ChainUser != "":
		why = "it would replace your own program there, which runner cannot read from here"
	case prof.Hook.RootOwned:
		why = "its settings file must be root's there"
	}
	if why != "" {
		env.Say("task %s: %s on host %s: no turn-end hook (%s); the screen ends each turn", t.ID, prof.Name, t.Tmux.Host, why)
		return nil, nil, nil
	}
	hl, err := prof.Hook.Render(profile.HookPaths{Command: transport.Quote(c.Host().Runner) + " hook --task " + t.ID,
		Events: files.events, Dir: files.hookDir})
	if err != nil {
		return nil, nil, fmt.Errorf("agent %s: %w", prof.Name, err)
	}
	hookEnv := hl.Env
	if prof.Hook.EnvMergeJSON {
		if hookEnv, err = profile.MergeJSONEnv(penv, hookEnv); err != nil {
			return nil, nil, exit.Usagef("agent %s: runner's turn-end hook: %v (run without runner's hook: --no-hook)", prof.Name, err)
		}
	}
	return &hl, hookEnv, nil
}

// prepareTask makes a remote task's directory and files there (0700), and
// writes its hook's settings file (by a rename), in one round trip.
func prepareTask(ctx context.Context, c *hosts.Conn, files remoteFiles, hl *profile.HookLaunch) error {
	// umask 077: the task's files there (its transcript, its events, its
	// hook's settings) are the user's alone, whatever the login's umask.
	// $3, when given, is the settings file, written from stdin by a rename.
	const script = `umask 077 && mkdir -p "${2%/*}" && : >> "$1" && : >> "$2" &&
if [ -n "$3" ]; then mkdir -p "${3%/*}" && cat > "$3.tmp" && mv "$3.tmp" "$3"; fi`
	argv := []string{"sh", "-c", script, "sh", files.transcript, files.events}
	var in []byte
	if hl != nil && hl.Settings != nil {
		argv, in = append(argv, hl.SettingsPath), hl.Settings
	}
	_, stderr, code, err := c.Transport().Run(ctx, in, argv...)
	if err == nil && code != 0 {
		err = fmt.Errorf("exit status %d: %s", code, strings.TrimSpace(string(stderr)))
	}
	return err
}
