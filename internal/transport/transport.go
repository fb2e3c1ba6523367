// Package transport runs a command on this machine or on another one
// through the system's OpenSSH client, so the user's ~/.ssh/config, agent,
// keys and known hosts apply as they do in their shell.
//
// An argv crosses to a remote machine as one string that its login shell
// splits again: Quote and Join are the one place where that string is
// made, every word single-quoted, so no byte of user text (a task, a
// path, a message) is ever read by that shell as syntax.
//
// SSH keeps one connection per host (OpenSSH ControlMaster with
// ControlPersist and a control socket in a directory of runner's), so a
// command costs a round trip, not a handshake; a master that dropped is
// replaced by the next command.
package transport

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"time"

	"github.com/runner-cli/runner/internal/privdir"
	"github.com/runner-cli/runner/internal/subproc"
)

// Transport makes the command that runs argv where it stands for.
type Transport interface {
	// Command returns the command that runs argv (argv[0] found in the
	// PATH there), not started.
	Command(ctx context.Context, argv ...string) *exec.Cmd
	// String names the place: "local" or the ssh destination.
	String() string
}

// Local runs commands on this machine.
type Local struct{}

// Command is subproc.Command.
func (Local) Command(ctx context.Context, argv ...string) *exec.Cmd {
	return subproc.Command(ctx, argv[0], argv[1:]...)
}

func (Local) String() string { return "local" }

// SSH runs commands on Destination with the system's ssh.
type SSH struct {
	// Destination is what ssh takes: user@host, host or a config alias.
	Destination string
	// Args are the user's ssh arguments, before the destination.
	Args []string
	// ControlDir is where the connection's control socket goes; "" means
	// no shared connection (each command its own).
	ControlDir string
	// Binary is the ssh program; "" means "ssh" from PATH.
	Binary string

	mu        sync.Mutex  // one command at a time in the session shell
	sess      *session    // the session shell (Run), once started
	noSession bool        // the host cannot keep one: each command its own
	idle      *time.Timer // closes the session shell after SessionIdle
}

// Command returns `ssh [control options] ARGS -- DESTINATION 'argv0'
// 'argv1' …`: the remote login shell runs argv exactly. BatchMode keeps
// ssh from ever prompting (a password or passphrase prompt would hang a
// supervisor): keys come from the agent or the config.
func (s *SSH) Command(ctx context.Context, argv ...string) *exec.Cmd {
	bin := s.Binary
	if bin == "" {
		bin = "ssh"
	}
	args := append(s.controlArgs(), "-o", "BatchMode=yes")
	args = append(args, s.Args...)
	args = append(args, liveArgs...) // after the user's: the first value of an option wins
	args = append(args, "--", s.Destination, Join(argv))
	// A master forked by this command (ControlPersist) must not keep the
	// caller waiting on a pipe it inherited (subproc.PipeWait).
	return subproc.Command(ctx, bin, args...)
}

func (s *SSH) String() string { return s.Destination }

// TerminalArgv is the command line (ssh first) that runs argv there on a
// terminal of its own (ssh -t), over the shared connection: a user's
// attach. No BatchMode: the user is there to answer a prompt.
func (s *SSH) TerminalArgv(argv ...string) []string {
	bin := s.Binary
	if bin == "" {
		bin = "ssh"
	}
	args := append([]string{bin}, s.controlArgs()...)
	args = append(append(args, "-t"), s.Args...)
	return append(args, "--", s.Destination, Join(argv))
}

// liveArgs find a host that stopped answering (a network cut, a machine
// off: no connection refused, only silence) within about 15 s, on the
// shared connection and on a new one, instead of TCP's minutes: a
// keepalive every 5 s, 2 missed end it; a connection not made in 10 s
// fails. The user's own -o options (given before) win.
var liveArgs = []string{"-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=2", "-o", "ConnectTimeout=10"}

// ForwardSocket makes the shared connection forward connections to the
// unix socket remote there to the socket local here (ssh -O forward -R
// REMOTE:LOCAL), replacing a forwarding of remote it held already. Neither
// path may hold a ':' (ssh's separator).
func (s *SSH) ForwardSocket(ctx context.Context, remote, local string) error {
	if strings.Contains(remote+local, ":") || s.ControlDir == "" || s.ControlPath() == "" {
		return fmt.Errorf("forward %s to %s: a path holds ':', or there is no shared connection", remote, local)
	}
	bin := cmp.Or(s.Binary, "ssh")
	fwd := []string{"-R", remote + ":" + local}
	ssh := func(op string) ([]byte, error) {
		args := append(append(s.controlArgs(), "-o", "BatchMode=yes"), s.Args...)
		args = append(append(args, "-O", op), fwd...)
		return subproc.Output(subproc.Command(ctx, bin, append(args, "--", s.Destination)...))
	}
	_, _ = ssh("cancel") // a forwarding of an earlier supervisor
	if _, err := ssh("forward"); err != nil {
		return fmt.Errorf("ssh -O forward %s: %w", fwd[1], err) // with ssh's stderr (subproc.Error)
	}
	return nil
}

// controlArgs share one master connection per destination and user
// arguments, kept 10 minutes after the last command; none when no private
// directory can hold its socket.
func (s *SSH) controlArgs() []string {
	if s.ControlDir == "" || s.ControlPath() == "" {
		return nil
	}
	return []string{"-o", "ControlMaster=auto", "-o", "ControlPersist=600", "-o", "ControlPath=" + s.ControlPath()}
}

// ControlPath is the control socket of this destination and arguments.
// A socket path must fit in 104 bytes (macOS; 108 on Linux), and ssh
// first binds a temporary name 17 bytes longer, so a long ControlDir
// gives way to a private directory of this user's (privdir: under
// $XDG_RUNTIME_DIR or $TMPDIR), or under /tmp when that is long too.
// OpenSSH does not check who owns a master socket: a directory another
// user made is never used, and "" (no shared connection) is returned when
// no private one can be had.
func (s *SSH) ControlPath() string {
	sum := sha256.Sum256([]byte(strings.Join(append([]string{s.Destination}, s.Args...), "\x00")))
	name := hex.EncodeToString(sum[:8])
	if p := filepath.Join(s.ControlDir, name); len(p)+17 <= 100 {
		return p
	}
	if d, err := privdir.Dir("ssh"); err == nil && len(d)+1+len(name)+17 <= 100 {
		return filepath.Join(d, name)
	}
	// $TMPDIR is long too (macOS's /var/folders/…): /tmp is short.
	d := filepath.Join("/tmp", "runner-ssh-"+strconv.Itoa(os.Getuid()))
	if privdir.Ensure(d) != nil {
		return ""
	}
	return filepath.Join(d, name)
}

// Prepare creates the directory of the control socket (0700). A fallback
// directory (see ControlPath) was made and checked there already.
func (s *SSH) Prepare() error {
	p := s.ControlPath()
	if s.ControlDir == "" || p == "" {
		return nil
	}
	return os.MkdirAll(filepath.Dir(p), 0o700)
}

// Quote makes s one word for a POSIX shell: single-quoted, each ' as '\”.
func Quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// QuoteIfNeeded is Quote for a command a user copies: s as it is when it
// holds only characters no shell treats specially, else Quote(s).
func QuoteIfNeeded(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+:@") == "" {
		return s
	}
	return Quote(s)
}

// Join quotes every word of argv and joins them with spaces: the command
// line a remote shell turns back into argv.
func Join(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = Quote(a)
	}
	return strings.Join(q, " ")
}
