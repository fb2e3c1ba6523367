// Killing, options, pipes, attaching and batches of tmux commands.

package tmuxctl

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"github.com/runner-cli/runner/internal/subproc"
	"github.com/runner-cli/runner/internal/transport"
)

// KillPane kills one pane.
func (c *Client) KillPane(ctx context.Context, pane string) error {
	if err := validatePaneID(pane); err != nil {
		return err
	}
	if _, err := c.run(ctx, nil, "kill-pane", "-t", pane); err != nil {
		return fmt.Errorf("kill pane %s: %w", pane, err)
	}
	return nil
}

// KillWindow kills the window that holds pane.
func (c *Client) KillWindow(ctx context.Context, pane string) error {
	if err := validatePaneID(pane); err != nil {
		return err
	}
	if _, err := c.run(ctx, nil, "kill-window", "-t", pane); err != nil {
		return fmt.Errorf("kill window of %s: %w", pane, err)
	}
	return nil
}

// KillSession kills the session with exactly this name.
func (c *Client) KillSession(ctx context.Context, name string) error {
	if _, err := c.run(ctx, nil, "kill-session", "-t", Arg(SessionTarget(name))); err != nil {
		return fmt.Errorf("kill session %q: %w", name, err)
	}
	return nil
}

// KillServer stops the server. A server that is not running is not an error.
func (c *Client) KillServer(ctx context.Context) error {
	if _, err := c.run(ctx, nil, "kill-server"); err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("kill server: %w", err)
	}
	return nil
}

// OptionScope says where an option is set.
type OptionScope string

// SetOption sets a tmux option on target (ignored for server and global scope).
func (c *Client) SetOption(ctx context.Context, scope OptionScope, target, name, value string) error {
	args := []string{"set-option", "-q"}
	if scope != "" {
		args = append(args, string(scope))
	}
	if target != "" && scope != ScopeServer && scope != ScopeGlobal {
		args = append(args, "-t", Arg(target))
	}
	args = append(args, "--", Arg(name), Arg(value))
	if _, err := c.run(ctx, nil, args...); err != nil {
		return fmt.Errorf("set option %s on %s: %w", name, target, err)
	}
	return nil
}

// ShowOption returns the value of a pane option (e.g. a user option "@x"); an
// unset option is "" with no error.
func (c *Client) ShowOption(ctx context.Context, pane, name string) (string, error) {
	if err := validatePaneID(pane); err != nil {
		return "", err
	}
	out, err := c.run(ctx, nil, "show-options", "-p", "-q", "-v", "-t", pane, "--", Arg(name))
	if err != nil {
		return "", fmt.Errorf("show option %s on %s: %w", name, pane, err)
	}
	return strings.TrimRight(out, "\n"), nil
}

// PipePane starts copying the pane's output to file (appending), unless a
// pipe is already open. The path is quoted for the shell tmux runs the pipe
// command with; it never contains user text beyond the path itself.
func (c *Client) PipePane(ctx context.Context, pane, file string) error {
	if err := validatePaneID(pane); err != nil {
		return err
	}
	if _, err := c.run(ctx, nil, "pipe-pane", "-o", "-t", pane, Arg(EscapeFormat("exec cat >> "+ShellQuote(file)))); err != nil {
		return fmt.Errorf("pipe pane %s to %s: %w", pane, file, err)
	}
	return nil
}

// StopPipe closes the pane's pipe-pane, if any.
func (c *Client) StopPipe(ctx context.Context, pane string) error {
	if err := validatePaneID(pane); err != nil {
		return err
	}
	if _, err := c.run(ctx, nil, "pipe-pane", "-t", pane); err != nil {
		return fmt.Errorf("stop pipe of pane %s: %w", pane, err)
	}
	return nil
}

// ShellQuote quotes s as one POSIX shell word (transport.Quote: one
// implementation for local and remote shells).
func ShellQuote(s string) string { return transport.Quote(s) }

// AttachArgv returns the command that attaches the user's terminal to
// target (a session "=name" or a pane "%N"): attach-session, or
// switch-client when the caller already runs inside tmux.
func (c *Client) AttachArgv(target string, insideTmux bool) []string {
	verb := "attach-session"
	if insideTmux {
		verb = "switch-client"
	}
	return append(append([]string{c.bin}, SocketArgs(c.socket)...), verb, "-t", Arg(target))
}

// HostArgv is the start of a tmux command on a host (its tmux, from the
// PATH there) for the server at socket: a script run there gets it as
// its arguments ("$@") and runs nothing named tmux itself.
func HostArgv(socket string) []string {
	return append([]string{"tmux"}, SocketArgs(socket)...)
}

// HostAttachArgv is AttachArgv on a host (HostArgv): the tmux command a
// terminal there runs to attach to target.
func (c *Client) HostAttachArgv(target string) []string {
	return append(HostArgv(c.socket), "attach-session", "-t", Arg(target))
}

// VersionArgv is the command that prints tmux's version, for a host's
// transport to run there (Version here).
func VersionArgv() []string { return []string{"tmux", "-V"} }

// AttachCommand is the command that runs an attach argv (AttachArgv, or
// a terminal's argv to a host that runs HostAttachArgv) in this
// terminal, with the tmux variables unset (CleanEnv) so it works from
// inside another tmux too: for the caller to run in the foreground (a
// view's ExecProcess).
func AttachCommand(argv []string) *exec.Cmd {
	cmd := subproc.Interactive(argv[0], argv[1:]...)
	cmd.Env = CleanEnv(os.Environ())
	return cmd
}

// SelectPane makes pane the active pane of its window and its window the
// current one of its session, so an attach lands on it.
func (c *Client) SelectPane(ctx context.Context, pane string) error {
	if err := validatePaneID(pane); err != nil {
		return err
	}
	if _, err := c.run(ctx, nil, "select-window", "-t", pane, ";", "select-pane", "-t", pane); err != nil {
		return fmt.Errorf("select pane %s: %w", pane, err)
	}
	return nil
}

// Exec replaces the current process with argv (from AttachArgv), keeping
// the caller's environment (TMUX too, so switch-client works).
func Exec(argv []string) error {
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNoTmux, err)
	}
	return syscall.Exec(path, argv, os.Environ())
}

// ServerPID returns the pid of the tmux server, so a watcher can notice the
// server's death with kill(pid, 0) instead of running tmux. After a launch
// it is the pid of the server the client launched on, without asking
// again: if that server died meanwhile, so did every pane made on it,
// and a watcher of those panes is right to see it gone.
func (c *Client) ServerPID(ctx context.Context) (int, error) {
	if pid := c.launchedOn.Load(); pid > 0 {
		return int(pid), nil
	}
	out, err := c.run(ctx, nil, "display-message", "-p", "#{pid}")
	if err != nil {
		return 0, fmt.Errorf("server pid: %w", err)
	}
	return strconv.Atoi(strings.TrimSpace(out))
}

// Batch runs several tmux commands in one invocation (joined with ';'), each
// argument escaped with Arg. The commands are the caller's own; user text
// belongs in buffers (Paste), never here.
func (c *Client) Batch(ctx context.Context, cmds ...[]string) error {
	var args []string
	for i, cmd := range cmds {
		if i > 0 {
			args = append(args, ";")
		}
		for _, a := range cmd {
			args = append(args, Arg(a))
		}
	}
	if len(args) == 0 {
		return nil
	}
	if _, err := c.run(ctx, nil, args...); err != nil {
		return fmt.Errorf("tmux %s: %w", cmds[0][0], err)
	}
	return nil
}

// Option scopes.
const (
	ScopeServer  OptionScope = "-s"
	ScopeGlobal  OptionScope = "-g"
	ScopeSession OptionScope = ""
	ScopeWindow  OptionScope = "-w"
	ScopePane    OptionScope = "-p"
)
