package tmuxctl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/runner-cli/runner/internal/subproc"
	"github.com/runner-cli/runner/internal/transport"
)

// DefaultSocket is the name of runner's private tmux server (tmux -L runner).
const DefaultSocket = "runner"

// DefaultTimeout bounds a single tmux invocation when the context has no
// earlier deadline.
const DefaultTimeout = 10 * time.Second

// ResolveSocket picks the server a command talks to: the --socket flag value
// if set, else $RUNNER_TMUX_SOCKET, else DefaultSocket.
func ResolveSocket(flag string, getenv func(string) string) string {
	if flag != "" {
		return flag
	}
	if getenv != nil {
		if v := getenv("RUNNER_TMUX_SOCKET"); v != "" {
			return v
		}
	}
	return DefaultSocket
}

// SocketArgs returns the tmux arguments that select the server: -S PATH when
// socket contains a '/', else -L NAME.
func SocketArgs(socket string) []string {
	if strings.Contains(socket, "/") {
		return []string{"-S", socket}
	}
	return []string{"-L", socket}
}

// Client talks to one tmux server. It is safe for concurrent use.
type Client struct {
	socket  string
	config  string
	bin     string
	timeout time.Duration
	env     []string
	seq     atomic.Uint64

	sem chan struct{}

	slotsOnce sync.Once
	slotsName string // the slots' directory under privdir's "tmux": the socket's hash (see slot)

	snapMu  sync.Mutex
	snapAt  time.Time
	snap    map[string]PaneInfo
	snapErr error
	tr      transport.Transport // nil: tmux on this machine

	// launchedOn is the pid of the server this client last made a pane
	// on (0: none yet): see ServerPID.
	launchedOn atomic.Int64

	// The socket path's checks (checkSocket): the caller's guard, and
	// whether they passed.
	guard   func(ctx context.Context, path string) error
	checkMu sync.Mutex
	checked bool
}

// Option configures a Client.
type Option func(*Client)

// WithConfig makes every tmux invocation pass -f FILE (use "/dev/null" for a
// server that ignores the user's ~/.tmux.conf).
func WithConfig(file string) Option { return func(c *Client) { c.config = file } }

// WithBinary sets the tmux executable (default "tmux", looked up in PATH).
func WithBinary(path string) Option { return func(c *Client) { c.bin = path } }

// WithTimeout sets the bound on a single tmux invocation.
func WithTimeout(d time.Duration) Option { return func(c *Client) { c.timeout = d } }

// WithTransport runs every tmux invocation through t (an ssh transport:
// the tmux server of another machine). Files there (transcripts, pipes)
// are not this machine's: waits poll the screen, exec reads the
// scrollback.
func WithTransport(t transport.Transport) Option { return func(c *Client) { c.tr = t } }

// WithEnv sets the base environment of tmux invocations (default os.Environ()).
// TMUX and TMUX_PANE are always removed.
func WithEnv(env []string) Option { return func(c *Client) { c.env = env } }

// New returns a client for the server named (or located, if it contains a
// '/') by socket. An empty socket means DefaultSocket.
func New(socket string, opts ...Option) *Client {
	if socket == "" {
		socket = DefaultSocket
	}
	c := &Client{socket: socket, bin: "tmux", timeout: DefaultTimeout, sem: make(chan struct{}, 8)}
	for _, o := range opts {
		o(c)
	}
	if c.env == nil {
		c.env = os.Environ()
	}
	c.env = CleanEnv(c.env)
	return c
}

// Remote reports whether the client drives another machine's tmux.
func (c *Client) Remote() bool { return c.tr != nil }

// Socket returns the socket name or path the client is bound to.
func (c *Client) Socket() string { return c.socket }

// SocketPath returns the path of the server's socket: the socket itself
// when it was given as a path, else tmux's own rule for -L NAME:
// $TMUX_TMPDIR (or /tmp) / tmux-UID / NAME.
func (c *Client) SocketPath() string {
	if strings.Contains(c.socket, "/") {
		return c.socket
	}
	dir := "/tmp"
	for _, kv := range c.env {
		if v, ok := strings.CutPrefix(kv, "TMUX_TMPDIR="); ok && v != "" {
			dir = v
		}
	}
	return filepath.Join(dir, fmt.Sprintf("tmux-%d", os.Getuid()), c.socket)
}

// ServerArgs returns the global tmux arguments that reach this client's
// server (-L/-S and -f), e.g. to print an attach command for the user.
//
// -u is always passed: without a UTF-8 locale (cron, env -i) tmux would
// otherwise print every non-ASCII character and control character of names
// and captured screens as '_'.
func (c *Client) ServerArgs() []string {
	args := append([]string{"-u"}, SocketArgs(c.socket)...)
	if c.config != "" {
		args = append(args, "-f", c.config)
	}
	return args
}

// AttachCommand returns the argv a user runs to attach to target.
func (c *Client) AttachCommand(target string) []string {
	return append(append([]string{c.bin}, SocketArgs(c.socket)...), "attach-session", "-t", target)
}

// CleanEnv returns env without TMUX and TMUX_PANE, so a tmux client
// started with it talks to the server its flags name (and may attach
// from inside another tmux) rather than to the one it runs in; and without
// the variables that say which task a process belongs to (TaskIdentityVars):
// a tmux server started from a task's pane would hand them to every pane
// it runs, and gc would take that server and other tasks' agents for the
// first task's.
func CleanEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if k == "TMUX" || k == "TMUX_PANE" || slices.Contains(TaskIdentityVars, k) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// ChildEnv is the environment of a process runner starts that is not an
// agent's pane (a supervisor, the background gc, a shadow, a worktree's
// set-up command): environ without TaskIdentityVars (a process started
// from a task's pane must not pass for that task), with set's KEY=VALUE
// entries replacing any of the same name. It is the one such builder.
func ChildEnv(environ []string, set ...string) []string {
	drop := map[string]bool{}
	for _, k := range TaskIdentityVars {
		drop[k] = true
	}
	for _, kv := range set {
		k, _, _ := strings.Cut(kv, "=")
		drop[k] = true
	}
	out := make([]string, 0, len(environ)+len(set))
	for _, kv := range environ {
		if k, _, _ := strings.Cut(kv, "="); !drop[k] {
			out = append(out, kv)
		}
	}
	return append(out, set...)
}

// TaskIdentityVars are the variables runner sets in an agent's pane that
// name its task (and where its turn-end events go, and its ports). Only
// that pane's processes may carry them.
var TaskIdentityVars = []string{"RUNNER_TASK_ID", "RUNNER_PARENT", "RUNNER_LEVEL", "RUNNER_PROJECT", "RUNNER_EVENTS_FILE", "RUNNER_DOOR", "RUNNER_CONFINED",
	"RUNNER_PORT", "RUNNER_PORT_COUNT"}

// Error is returned when tmux fails. It keeps tmux's arguments and stderr.
type Error struct {
	Args   []string // tmux arguments after the server selection
	Stderr string
	Err    error // the exec error (exit status, not found, context)
}

func (e *Error) Error() string {
	verb := "tmux"
	if len(e.Args) > 0 {
		verb = "tmux " + e.Args[0]
	}
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		return fmt.Sprintf("%s: %v", verb, e.Err)
	}
	return fmt.Sprintf("%s: %s (%v)", verb, msg, e.Err)
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether the failure means a missing server, session, window or
// pane (ErrNotFound).
func (e *Error) Is(target error) bool {
	if target != ErrNotFound {
		return false
	}
	return isNotFound(e.Stderr)
}

func isNotFound(stderr string) bool {
	for _, s := range []string{"can't find", "no server running", "error connecting to", "session not found", "no such", "no current", "server exited unexpectedly"} {
		if strings.Contains(stderr, s) {
			return true
		}
	}
	return false
}

// ErrNoTmux is wrapped when the tmux binary cannot be found.
var ErrNoTmux = errors.New("tmux is not installed or not in PATH (install it, e.g. 'apt-get install tmux')")

// run executes tmux with args against the client's server, feeding stdin if
// not nil, and returns its stdout. Every tmux invocation in runner goes
// through here.
func (c *Client) run(ctx context.Context, stdin io.Reader, args ...string) (string, error) {
	if err := c.checkSocket(ctx); err != nil {
		return "", &Error{Args: args, Err: err}
	}
	if c.tr == nil {
		// Waiting for a slot does not count against the call's timeout.
		release, err := c.slot(ctx)
		if err != nil {
			return "", &Error{Args: args, Err: err}
		}
		defer release()
	}
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	// Bound the number of tmux clients in flight: fifty goroutines each
	// forking tmux at once only queue up in the server anyway.
	select {
	case c.sem <- struct{}{}:
		defer func() { <-c.sem }()
	case <-ctx.Done():
		return "", &Error{Args: args, Err: ctx.Err()}
	}
	full := append(c.ServerArgs(), args...)
	if r, ok := c.tr.(transport.Runner); ok {
		return c.runThere(ctx, r, stdin, args, full)
	}
	var cmd *exec.Cmd
	if c.tr != nil {
		// ssh's own environment (its agent socket, its config) is this
		// process's; tmux there gets the remote login's.
		cmd = c.tr.Command(ctx, append([]string{c.bin}, full...)...)
	} else {
		cmd = subproc.Command(ctx, c.bin, full...)
		cmd.Env = c.env
	}
	// Longer than subproc.PipeWait: a server this client starts holds
	// its pipes until it has daemonized, slow on a loaded machine.
	cmd.WaitDelay = 5 * time.Second
	cmd.Stdin = stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	err := cmd.Run()
	if err != nil {
		// ErrNotFound: not in PATH; ErrNotExist: a configured path that
		// does not exist (the process never started).
		if errors.Is(err, exec.ErrNotFound) || cmd.Process == nil && errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%w: %v", ErrNoTmux, err)
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			err = fmt.Errorf("%w (%v)", ctxErr, err)
		}
		return stdout.String(), &Error{Args: args, Stderr: stderr.String(), Err: err}
	}
	return stdout.String(), nil
}

// runThere is run through a transport that keeps a shell on the host: the
// same command, one round trip.
func (c *Client) runThere(ctx context.Context, r transport.Runner, stdin io.Reader, args, full []string) (string, error) {
	var in []byte
	if stdin != nil {
		b, err := io.ReadAll(stdin)
		if err != nil {
			return "", &Error{Args: args, Err: err}
		}
		in = b
	}
	stdout, stderr, code, err := r.Run(ctx, in, append([]string{c.bin}, full...)...)
	switch {
	case err != nil:
		if ctxErr := ctx.Err(); ctxErr != nil {
			err = fmt.Errorf("%w (%v)", ctxErr, err)
		}
		return "", &Error{Args: args, Stderr: err.Error(), Err: err}
	case code != 0:
		return string(stdout), &Error{Args: args, Stderr: string(stderr), Err: fmt.Errorf("exit status %d", code)}
	}
	return string(stdout), nil
}

// Command runs an arbitrary tmux command on the client's server and returns
// its output. Arguments are escaped with Arg. It exists for rare verbs that
// have no method here.
func (c *Client) Command(ctx context.Context, args ...string) (string, error) {
	esc := make([]string, len(args))
	for i, a := range args {
		esc[i] = Arg(a)
	}
	return c.run(ctx, nil, esc...)
}

// Arg escapes one tmux command-line argument. tmux treats an argument that
// ends in ';' as a command separator (and drops the ';'); Arg rewrites a
// trailing ';' as "\;", which tmux turns back into ';'. Use it on every
// argument that may carry user text (names, paths, environment values, argv).
func Arg(s string) string {
	if strings.HasSuffix(s, ";") {
		return s[:len(s)-1] + `\;`
	}
	return s
}

// nextBufferName returns a buffer name unique to this process and call.
func (c *Client) nextBufferName() string {
	return fmt.Sprintf("runner-%d-%d", os.Getpid(), c.seq.Add(1))
}
