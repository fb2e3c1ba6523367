package hosts

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
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/sandbox"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// Shell runs a command on a host and returns its stdout, stderr and exit
// status: the ssh transport's session shell (a *transport.SSH). An error
// is one of the connection (wrapping transport.ErrConnection) or of the
// command that could not run.
type Shell interface {
	Run(ctx context.Context, stdin []byte, argv ...string) (stdout, stderr []byte, code int, err error)
}

// Conn is what runner drives a host with: its record, its ssh transport
// (one shared connection, one session shell) and a tmux client of its
// server there.
type Conn struct {
	host *state.Host
	tr   *transport.SSH
	tc   *tmuxctl.Client
	// sh runs Run's commands: tr, or a fake in tests.
	sh Shell

	mu   sync.Mutex
	base string // the directory of runner's task files there, once known
}

// Host is the host's record.
func (c *Conn) Host() *state.Host { return c.host }

// TC is the tmux client of the host's server.
func (c *Conn) TC() *tmuxctl.Client { return c.tc }

// Transport is the ssh transport to the host.
func (c *Conn) Transport() *transport.SSH { return c.tr }

// Pool holds one Conn per host for the life of a command or a supervisor,
// which asks for the same host many times. Make one with NewPool and pass
// it to what needs hosts; it is safe for concurrent use.
type Pool struct {
	store *state.Store
	mu    sync.Mutex
	m     map[string]*Conn
}

// NewPool returns an empty pool over the hosts registered in store.
func NewPool(store *state.Store) *Pool {
	return &Pool{store: store, m: map[string]*Conn{}}
}

// Conn returns the connection to the registered host name, made on first
// use. An unknown host is a usage error (exit 2); nothing is contacted yet.
// A nil pool (a command given none) reaches no host: an error.
func (p *Pool) Conn(ctx context.Context, name string) (*Conn, error) {
	if p == nil {
		return nil, fmt.Errorf("host %s: this command was given no host pool (runner.Env.Hosts)", name)
	}
	p.mu.Lock()
	c := p.m[name]
	p.mu.Unlock()
	if c != nil {
		return c, nil
	}
	h, err := Get(ctx, p.store, name)
	if err != nil {
		return nil, err
	}
	tr := Transport(p.store, h)
	if err := tr.Prepare(); err != nil {
		return nil, fmt.Errorf("host %s: control socket directory: %w", h.Name, err)
	}
	socket := h.Socket
	if socket == "" {
		socket = tmuxctl.DefaultSocket
	}
	c = &Conn{host: h, tr: tr, sh: tr, tc: tmuxctl.New(socket, tmuxctl.WithTransport(tr))}
	p.mu.Lock()
	defer p.mu.Unlock()
	if old := p.m[name]; old != nil {
		return old, nil
	}
	p.m[name] = c
	return c, nil
}

// Run runs argv on the host (in its session shell: one round trip) and
// returns its stdout. A failure carries the command's stderr; one of the
// connection (refused, unknown host, no key) wraps ErrUnreachable.
func (c *Conn) Run(ctx context.Context, argv ...string) (string, error) {
	stdout, stderr, code, err := c.sh.Run(ctx, nil, argv...)
	switch {
	case err != nil && errors.Is(err, transport.ErrConnection):
		return "", fmt.Errorf("host %s (%s): %w: %v", c.host.Name, c.host.Destination, ErrUnreachable, err)
	case err != nil:
		return "", fmt.Errorf("host %s: %s: %w", c.host.Name, argv[0], err)
	case code != 0:
		msg := strings.TrimSpace(textutil.LastLines(strings.TrimSpace(string(stderr)), 3))
		return string(stdout), fmt.Errorf("host %s: %s: exit status %d: %s", c.host.Name, argv[0], code, msg)
	}
	return string(stdout), nil
}

// TaskPath is the directory of task id's files on the host: Host.Dir, or
// state.RemoteDirDefault under the home directory there (asked once).
func (c *Conn) TaskPath(ctx context.Context, id string) (string, error) {
	c.mu.Lock()
	base := c.base
	c.mu.Unlock()
	if base == "" {
		base = c.host.Dir
		if base == "" {
			home, err := c.Run(ctx, "sh", "-c", `printf '%s' "$HOME"`)
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

// CheckDir makes sure dir is a directory on the host: a missing one is a
// usage error (exit 2), an unreachable host an error wrapping
// ErrUnreachable (exit 1). what names the caller's subject in errors.
func (c *Conn) CheckDir(ctx context.Context, what, dir string) error {
	if !strings.HasPrefix(dir, "/") {
		return fault.Usagef("%s: %q is not an absolute path on host %s (give it as host:%s:/abs/path)", what, dir, c.host.Name, c.host.Name)
	}
	out, err := c.Run(ctx, "sh", "-c", `if [ -d "$1" ]; then echo dir; elif [ -e "$1" ]; then echo other; else echo none; fi`, "sh", dir)
	if err != nil {
		return err
	}
	switch strings.TrimSpace(out) {
	case "dir":
		return nil
	case "other":
		return fault.Usagef("%s: %s on host %s is not a directory", what, dir, c.host.Name)
	}
	return fault.Usagef("%s: directory %s does not exist on host %s (create it there first)", what, dir, c.host.Name)
}

// sandboxCheckScript makes a sandbox once on a host, as sandbox.Check does
// here, and prints where bwrap is; it exits 3 when bwrap is missing, 4
// when it cannot make a sandbox there.
const sandboxCheckScript = `b=$(command -v bwrap) || exit 3
"$b" --ro-bind / / --dev-bind /dev /dev --proc /proc --tmpfs /tmp -- true 2>&1 >/dev/null || exit 4
printf '%s' "$b"`

// Sandbox checks that bwrap makes a sandbox on the host and returns its
// path there; a failure is a usage error saying what to install.
func (c *Conn) Sandbox(ctx context.Context) (string, error) {
	out, err := c.Run(ctx, "sh", "-c", sandboxCheckScript)
	if err != nil {
		if strings.Contains(err.Error(), "exit status 3") {
			return "", fault.Usagef("--sandbox: bwrap is not installed on host %s (%s there)", c.host.Name, sandbox.InstallHint)
		}
		if strings.Contains(err.Error(), "exit status 4") {
			return "", fault.Usagef("--sandbox: bwrap cannot make a sandbox on host %s: %v", c.host.Name, err)
		}
		return "", err
	}
	if !strings.HasPrefix(out, "/") {
		return "", fmt.Errorf("host %s: where bwrap is: unexpected answer %q", c.host.Name, out)
	}
	return out, nil
}

// Path splits a project location "host:NAME:/path" into its host and
// path; ok is false for a local path.
func Path(s string) (host, dir string, ok bool) {
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

// Location is how a project's place reads: its directory, or
// "host:NAME:/dir" for one on a host.
func Location(p state.Project) string {
	if p.Host == "" {
		return p.Dir
	}
	return "host:" + p.Host + ":" + p.Dir
}

// Machine names a machine: its host, or "this machine".
func Machine(host string) string {
	if host == "" {
		return "this machine"
	}
	return "host " + host
}

// GitOn is ctx for gitsnap calls on the registered host ("" for this
// machine: ctx itself), over its connection (gitsnap.On); an unknown host
// is a usage error.
func (p *Pool) GitOn(ctx context.Context, host string) (context.Context, error) {
	if host == "" {
		return ctx, nil
	}
	c, err := p.Conn(ctx, host)
	if err != nil {
		return nil, err
	}
	return gitsnap.On(ctx, c.Transport()), nil
}
