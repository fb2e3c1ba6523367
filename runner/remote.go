// Tasks on other machines: the connection to a host (its ssh transport and
// tmux client), the commands runner runs there, and where a remote task's
// files are kept there.

package runner

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/internal/transport"
	"github.com/runner-cli/runner/runner/exit"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// hostConn is what runner drives a host with: its record, its ssh
// transport (one shared connection) and a tmux client of its server.
type hostConn struct {
	host *state.Host
	tr   *transport.SSH
	tc   *tmuxctl.Client

	mu   sync.Mutex
	base string // the directory of runner's task files there, once known
}

// hostConns caches an Env's connections by host name: one Env (one
// command, one supervisor) asks for the same host many times.
type hostConns struct {
	sync.Mutex
	m map[string]*hostConn
}

// connsInit guards the creation of an Env's cache.
var connsInit sync.Mutex

func (env *Env) hostConns() *hostConns {
	connsInit.Lock()
	defer connsInit.Unlock()
	if env.conns == nil {
		env.conns = &hostConns{m: map[string]*hostConn{}}
	}
	return env.conns
}

// hostConn returns the connection to the registered host name. An unknown
// host is a usage error (exit 2); nothing is contacted yet.
func (env *Env) hostConn(ctx context.Context, name string) (*hostConn, error) {
	cache := env.hostConns()
	cache.Lock()
	c := cache.m[name]
	cache.Unlock()
	if c != nil {
		return c, nil
	}
	h, err := GetHost(ctx, env.Store, name)
	if err != nil {
		return nil, err
	}
	tr := HostTransport(env.Store, h)
	if err := tr.Prepare(); err != nil {
		return nil, fmt.Errorf("host %s: control socket directory: %w", h.Name, err)
	}
	socket := h.Socket
	if socket == "" {
		socket = tmuxctl.DefaultSocket
	}
	c = &hostConn{host: h, tr: tr, tc: tmuxctl.New(socket, tmuxctl.WithTransport(tr))}
	cache.Lock()
	defer cache.Unlock()
	if old := cache.m[name]; old != nil {
		return old, nil
	}
	cache.m[name] = c
	return c, nil
}

// PaneClient is the tmux client of t's pane: this machine's server, or
// its host's over ssh (an unknown host is a usage error).
func (env *Env) PaneClient(ctx context.Context, t *state.Task) (*tmuxctl.Client, error) {
	if t.Tmux.Host == "" {
		return env.TC, nil
	}
	c, err := env.hostConn(ctx, t.Tmux.Host)
	if err != nil {
		return nil, fmt.Errorf("task %s: %w", t.ID, err)
	}
	return c.tc, nil
}

// remotePaneAlive reports whether the pane of t, a task on a host, is its
// own and alive there (false when the host does not answer).
func (env *Env) remotePaneAlive(ctx context.Context, t *state.Task) bool {
	tc, err := env.PaneClient(ctx, t)
	if err != nil || t.Tmux.Pane == "" {
		return false
	}
	info, err := tc.Pane(ctx, t.Tmux.Pane)
	return err == nil && !info.Dead && info.WindowName == t.ID
}

// GitContext is ctx for gitsnap calls on t's work tree: on its host
// (gitsnap.On) for a task there.
func (env *Env) GitContext(ctx context.Context, t *state.Task) (context.Context, error) {
	return env.GitOn(ctx, t.Tmux.Host)
}

// GitOn is ctx for gitsnap calls on a registered host ("" for this
// machine); an unknown host is a usage error.
func (env *Env) GitOn(ctx context.Context, host string) (context.Context, error) {
	if host == "" {
		return ctx, nil
	}
	c, err := env.hostConn(ctx, host)
	if err != nil {
		return nil, err
	}
	return gitsnap.On(ctx, c.tr), nil
}

// run runs argv on the host (in its session shell: one round trip) and
// returns its stdout. A failure carries the command's stderr; one of the
// connection (refused, unknown host, no key) wraps ErrHostUnreachable.
func (c *hostConn) run(ctx context.Context, argv ...string) (string, error) {
	stdout, stderr, code, err := c.tr.Run(ctx, nil, argv...)
	switch {
	case err != nil && errors.Is(err, transport.ErrConnection):
		return "", fmt.Errorf("host %s (%s): %w: %v", c.host.Name, c.host.Destination, ErrHostUnreachable, err)
	case err != nil:
		return "", fmt.Errorf("host %s: %s: %w", c.host.Name, argv[0], err)
	case code != 0:
		msg := strings.TrimSpace(textutil.LastLines(strings.TrimSpace(string(stderr)), 3))
		return string(stdout), fmt.Errorf("host %s: %s: exit status %d: %s", c.host.Name, argv[0], code, msg)
	}
	return string(stdout), nil
}

// taskPath is the directory of task id's files on the host: Host.Dir, or
// RemoteDirDefault under the home directory there (asked once).
func (c *hostConn) taskPath(ctx context.Context, id string) (string, error) {
	c.mu.Lock()
	base := c.base
	c.mu.Unlock()
	if base == "" {
		base = c.host.Dir
		if base == "" {
			home, err := c.run(ctx, "sh", "-c", `printf '%s' "$HOME"`)
			if err != nil {
				return "", err
			}
			if !strings.HasPrefix(home, "/") {
				return "", fmt.Errorf("host %s: the home directory there is %q, not an absolute path (give one with 'runner host add … --dir /abs/path')", c.host.Name, home)
			}
			base = path.Join(home, state.RemoteDirDefault)
		}
		c.mu.Lock()
		c.base = base
		c.mu.Unlock()
	}
	return path.Join(base, id), nil
}

// checkRemoteDir makes sure dir is a directory on the host: a missing one
// is a usage error (exit 2), an unreachable host an error wrapping
// ErrHostUnreachable (exit 1).
func (c *hostConn) checkRemoteDir(ctx context.Context, what, dir string) error {
	if !strings.HasPrefix(dir, "/") {
		return exit.Usagef("%s: %q is not an absolute path on host %s (give it as host:%s:/abs/path)", what, dir, c.host.Name, c.host.Name)
	}
	out, err := c.run(ctx, "sh", "-c", `if [ -d "$1" ]; then echo dir; elif [ -e "$1" ]; then echo other; else echo none; fi`, "sh", dir)
	if err != nil {
		return err
	}
	switch strings.TrimSpace(out) {
	case "dir":
		return nil
	case "other":
		return exit.Usagef("%s: %s on host %s is not a directory", what, dir, c.host.Name)
	}
	return exit.Usagef("%s: directory %s does not exist on host %s (create it there first)", what, dir, c.host.Name)
}

// HostPath splits a project location "host:NAME:/path" into its host and
// path; ok is false for a local path.
func HostPath(s string) (host, dir string, ok bool) {
	rest, found := strings.CutPrefix(s, "host:")
	if !found {
		return "", s, false
	}
	host, dir, found = strings.Cut(rest, ":")
	if !found {
		return "", s, false
	}
	return host, dir, true
}

// ProjectLocation is how a project's place reads: its directory, or
// "host:NAME:/dir" for one on a host.
func ProjectLocation(p state.Project) string {
	if p.Host == "" {
		return p.Dir
	}
	return "host:" + p.Host + ":" + p.Dir
}
