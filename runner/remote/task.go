package remote

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/runner-cli/runner/internal/transport"
	"github.com/runner-cli/runner/runner/doctor"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/hosts"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/projects"
	"github.com/runner-cli/runner/state"
)

// Argv checks, in one round trip, that dir is a directory on c's host
// and that argv's program is installed there, and returns the argv to run
// there: "runner" (the sim agent) is the host's runner binary. A missing
// directory, program or runner binary is a usage error (exit 2); an
// unreachable host wraps hosts.ErrUnreachable (exit 1).
func Argv(ctx context.Context, c Conn, prof *profile.Profile, dir string, argv []string) ([]string, error) {
	host := c.Host().Name
	if len(argv) == 0 {
		return nil, fault.Usagef("agent %s: the profile has no command (set profiles.%s.command in the config)", prof.Name, prof.Name)
	}
	out := append([]string(nil), argv...)
	if out[0] == "runner" {
		if c.Host().Runner == "" {
			return nil, fault.Usagef("agent %s runs runner's own binary, and host %s names none: copy runner there, then 'runner host rm %s' and 'runner host add %s %s --runner /path/to/runner'",
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
		return nil, fault.Usagef("directory %s does not exist on host %s (create it there, or fix the project)", dir, host)
	case "noprog":
		return nil, fault.Usagef("agent %s: %q is not installed on host %s, or not in the PATH of an ssh session there ('runner host check %s' lists what is)", prof.Name, out[0], host, host)
	}
	return nil, fmt.Errorf("host %s: unexpected answer %q while checking %s", host, res, dir)
}

// CLIVersion reads the version of the CLI at path on c's host (its
// version_args), within twice doctor.VersionTimeout.
func CLIVersion(ctx context.Context, c Conn, path string, versionArgs []string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*doctor.VersionTimeout)
	defer cancel()
	out, err := c.Run(ctx, append([]string{path}, versionArgs...)...)
	if err != nil {
		return "", err // names the host
	}
	return doctor.ParseVersion(out), nil
}

// PaneEnv is the environment of an agent pane on a host: the task's
// identity, where the host's runner keeps its files for it (for `runner
// hook`), and the profile's variables. Nothing of this machine's (PATH,
// HOME, the state directory) applies there.
func PaneEnv(t *state.Task, prof *profile.Profile, files Files) []string {
	kv := append(projects.TaskEnv(t),
		"RUNNER_HOST="+t.Tmux.Host,
		"RUNNER_STATE_DIR="+files.State,
		"RUNNER_EVENTS_FILE="+files.Events,
	)
	return append(kv, prof.EnvList()...)
}

// Hook renders the profile's turn-end hook for t on its host: the host's
// runner binary records the events there (streamed back with the
// transcript), with its settings file there (Prepare writes it). None
// (nil, and why, for the caller to say: the screen ends each turn) without
// a runner binary there, for a hook that would replace the user's own
// program (which runner cannot read there), or for one whose settings must
// be root's.
func Hook(t *state.Task, c Conn, prof *profile.Profile, files Files, penv []string) (hl *profile.HookLaunch, env []string, why string, err error) {
	switch {
	case c.Host().Runner == "":
		why = "the host names no runner binary (runner host add … --runner PATH)"
	case prof.Hook.ChainUser != "":
		why = "it would replace your own program there, which runner cannot read from here"
	case prof.Hook.RootOwned:
		why = "its settings file must be root's there"
	}
	if why != "" {
		return nil, nil, why, nil
	}
	h, err := prof.Hook.Render(profile.HookPaths{Command: transport.Quote(c.Host().Runner) + " hook --task " + t.ID,
		Events: files.Events, Dir: files.HookDir})
	if err != nil {
		return nil, nil, "", fmt.Errorf("agent %s: %w", prof.Name, err)
	}
	hookEnv, err := prof.HookEnv(penv, h)
	if err != nil {
		return nil, nil, "", err
	}
	return &h, hookEnv, "", nil
}

// Prepare makes a remote task's directory and files there (0700), and
// writes its hook's files (the settings file and any other: a plugin's
// manifest, an extension), each by a rename, in one round trip.
func Prepare(ctx context.Context, c *hosts.Conn, files Files, hl *profile.HookLaunch) error {
	return prepare(ctx, c.Transport(), files, hl)
}

// prepare is Prepare through the host's transport.
func prepare(ctx context.Context, tr *transport.SSH, files Files, hl *profile.HookLaunch) error {
	// umask 077: the task's files there (its transcript, its events, its
	// hook's files) are the user's alone, whatever the login's umask.
	// After $1 and $2, each pair is a hook file's path and its length in
	// bytes: its content comes next on stdin (never on a command line),
	// read to the byte (dd bs=1: a pipe's reads may be short, and a
	// buffered reader would take the next file's bytes).
	const script = `umask 077 && mkdir -p "${2%/*}" && : >> "$1" && : >> "$2" && shift 2 &&
while [ $# -ge 2 ]; do mkdir -p "${1%/*}" && dd bs=1 count="$2" of="$1.tmp" 2>/dev/null && mv "$1.tmp" "$1" || exit 1; shift 2; done`
	argv := []string{"sh", "-c", script, "sh", files.Transcript, files.Events}
	var in []byte
	add := func(path string, data []byte) {
		argv = append(argv, path, strconv.Itoa(len(data)))
		in = append(in, data...)
	}
	if hl != nil {
		if hl.Settings != nil {
			add(hl.SettingsPath, hl.Settings)
		}
		for _, f := range hl.Files {
			add(f.Path, f.Data)
		}
	}
	_, stderr, code, err := tr.Run(ctx, in, argv...)
	if err == nil && code != 0 {
		err = fmt.Errorf("exit status %d: %s", code, strings.TrimSpace(string(stderr)))
	}
	return err
}
