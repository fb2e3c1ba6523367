// A shell kept open on the host for the life of the process, so that a
// command costs a round trip over the shared connection, not a new ssh
// session and a login shell (whose rc files alone can take 100 ms).

package transport

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/runner-cli/runner/internal/subproc"
)

// Runner runs argv where it stands for and returns its output and exit
// status: what a command costs there without an *exec.Cmd (SSH runs it in
// its session shell). A failure to get the command there at all (the
// connection) is an error wrapping ErrConnection; a command that ran and
// failed is code != 0 with err nil.
type Runner interface {
	Run(ctx context.Context, stdin []byte, argv ...string) (stdout, stderr []byte, code int, err error)
}

// ErrConnection is wrapped when a command could not be run there: the
// shell or the connection behind it is gone.
var ErrConnection = errors.New("the connection to the host failed")

// sessionInit runs once in the shell: r runs one command, its input
// base64 on the line (empty for none), its output, error output and status
// written back on one line ("ID STATUS STDOUT64 STDERR64", an empty
// output as an empty field: no base64 to start), through two files made
// once. Nothing of a command's text is read as shell syntax:
// each word comes single-quoted (Join).
const sessionInit = `o=$(mktemp) && e=$(mktemp) || exit 1
trap 'rm -f "$o" "$e"' EXIT
r() {
  id=$1 in=$2; shift 2
  if [ -n "$in" ]; then printf '%s' "$in" | base64 -d | "$@" >"$o" 2>"$e"; else "$@" </dev/null >"$o" 2>"$e"; fi
  rc=$?
  printf '%s %s ' "$id" "$rc"; [ ! -s "$o" ] || base64 -w0 <"$o"; printf ' '; [ ! -s "$e" ] || base64 -w0 <"$e"; printf '\n'
}
printf 'ready %s\n' "$(printf ok | base64 -w0)"
`

// session is one shell on the host.
type session struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	out   *bufio.Reader
	next  int
	close func()
}

// Run runs argv in the host's session shell, started on first use and
// again after it died; a host whose shell lacks GNU base64 runs each
// command in its own ssh session instead (Command).
func (s *SSH) Run(ctx context.Context, stdin []byte, argv ...string) ([]byte, []byte, int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// A shell unused for SessionIdle goes: a long-lived process (a
	// supervisor waiting on an agent for an hour) does not hold one of
	// the connection's sessions (sshd's MaxSessions, 10 by default).
	if s.idle == nil {
		s.idle = time.AfterFunc(SessionIdle, s.Close)
	} else {
		s.idle.Reset(SessionIdle)
	}
	if s.noSession {
		return s.runCommand(ctx, stdin, argv)
	}
	for try := 0; ; try++ {
		if s.sess == nil {
			sess, err := s.startSession(ctx)
			if errors.Is(err, errNoBase64) {
				s.noSession = true
				return s.runCommand(ctx, stdin, argv)
			}
			if err != nil {
				return nil, nil, 0, err
			}
			s.sess = sess
		}
		stdout, stderr, code, err := s.sess.run(ctx, stdin, argv)
		if err == nil {
			return stdout, stderr, code, nil
		}
		s.sess.close()
		s.sess = nil
		// A session that died between two commands (a dropped
		// connection, ControlPersist ended): one more, on a new one.
		if try > 0 || ctx.Err() != nil || !errors.Is(err, errSessionDied) {
			return nil, nil, 0, err
		}
	}
}

// Exit ends the session shell and the shared connection (ssh -O exit):
// the next command makes a new one. No connection open is not an error.
func (s *SSH) Exit() error {
	s.Close()
	if s.ControlDir == "" {
		return nil
	}
	if _, err := os.Stat(s.ControlPath()); err != nil {
		return nil
	}
	bin := s.Binary
	if bin == "" {
		bin = "ssh"
	}
	args := append(append([]string{"-o", "ControlPath=" + s.ControlPath(), "-O", "exit"}, s.Args...), "--", s.Destination)
	if err := subproc.Run(subproc.Command(context.Background(), bin, args...)); err != nil {
		return fmt.Errorf("ssh -O exit %s: %w", s.Destination, err) // with ssh's stderr (subproc.Error)
	}
	return nil
}

// Close ends the session shell, if one runs.
func (s *SSH) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sess != nil {
		s.sess.close()
		s.sess = nil
	}
}

// SessionIdle is how long a session shell is kept with no command.
const SessionIdle = 30 * time.Second

var (
	errNoBase64    = errors.New("no GNU base64 there")
	errSessionDied = errors.New("the session shell ended")
)

// runCommand runs argv in an ssh session of its own.
func (s *SSH) runCommand(ctx context.Context, stdin []byte, argv []string) ([]byte, []byte, int, error) {
	cmd := s.Command(ctx, argv...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return stdout.Bytes(), stderr.Bytes(), 0, nil
	case errors.As(err, &ee) && ee.ExitCode() == 255:
		return nil, nil, 0, fmt.Errorf("%w: ssh %s: %v: %s", ErrConnection, s.Destination, err, strings.TrimSpace(stderr.String()))
	case errors.As(err, &ee) && ee.ExitCode() > 0:
		return stdout.Bytes(), stderr.Bytes(), ee.ExitCode(), nil
	}
	return nil, nil, 0, fmt.Errorf("%w: ssh %s: %v", ErrConnection, s.Destination, err)
}

// startSession starts `sh` there and waits for its first line.
func (s *SSH) startSession(ctx context.Context) (*session, error) {
	// Not tied to ctx: the shell outlives the command that started it.
	cmd := s.Command(context.Background(), "sh")
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &lockedBuffer{b: &stderr}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%w: ssh %s: %v", ErrConnection, s.Destination, err)
	}
	sess := &session{cmd: cmd, in: in, out: bufio.NewReaderSize(outPipe, 64<<10)}
	sess.close = sync.OnceFunc(func() {
		in.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	if _, err := io.WriteString(in, sessionInit); err != nil {
		sess.close()
		return nil, fmt.Errorf("%w: ssh %s: %v", ErrConnection, s.Destination, err)
	}
	line, err := sess.readLine(ctx)
	if err != nil {
		sess.close()
		return nil, fmt.Errorf("%w: ssh %s: %v: %s", ErrConnection, s.Destination, err, strings.TrimSpace(stderr.String()))
	}
	if line != "ready b2s=" {
		sess.close()
		return nil, errNoBase64
	}
	return sess, nil
}

// run sends one command and reads its line back.
func (se *session) run(ctx context.Context, stdin []byte, argv []string) ([]byte, []byte, int, error) {
	se.next++
	id := strconv.Itoa(se.next)
	in := base64.StdEncoding.EncodeToString(stdin) // "" for none: /dev/null
	line := "r " + id + " " + Quote(in) + " " + Join(argv) + "\n"
	if _, err := io.WriteString(se.in, line); err != nil {
		return nil, nil, 0, fmt.Errorf("%w: %w: %v", ErrConnection, errSessionDied, err)
	}
	for {
		got, err := se.readLine(ctx)
		if err != nil {
			return nil, nil, 0, err
		}
		stdout, stderr, code, ok, err := parseReply(got, id)
		if !ok {
			continue // a stray line (a command that wrote to the tty)
		}
		if err != nil {
			return nil, nil, 0, fmt.Errorf("%w: %w: a garbled answer: %v", ErrConnection, errSessionDied, err)
		}
		return stdout, stderr, code, nil
	}
}

// parseReply reads the shell's answer line to command id: "ID STATUS
// STDOUT64 STDERR64". ok is false for a line that is not that answer (a
// stray line); err is set for one that is, garbled.
func parseReply(line, id string) (stdout, stderr []byte, code int, ok bool, err error) {
	f := strings.Split(line, " ")
	if len(f) != 4 || f[0] != id {
		return nil, nil, 0, false, nil
	}
	code, err1 := strconv.Atoi(f[1])
	stdout, err2 := base64.StdEncoding.DecodeString(f[2])
	stderr, err3 := base64.StdEncoding.DecodeString(f[3])
	if err := errors.Join(err1, err2, err3); err != nil {
		return nil, nil, 0, true, err
	}
	if code < 0 || code > 255 {
		return nil, nil, 0, true, fmt.Errorf("exit status %d out of range", code)
	}
	return stdout, stderr, code, true, nil
}

// readLine reads one line, giving up (and the session with it) when ctx
// ends first.
func (se *session) readLine(ctx context.Context) (string, error) {
	type res struct {
		s   string
		err error
	}
	ch := make(chan res, 1)
	go func() {
		s, err := se.out.ReadString('\n')
		ch <- res{strings.TrimSuffix(s, "\n"), err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			return "", fmt.Errorf("%w: %w: %v", ErrConnection, errSessionDied, r.err)
		}
		return r.s, nil
	case <-ctx.Done():
		se.close() // the reader ends with the shell
		return "", ctx.Err()
	}
}

// lockedBuffer is a bytes.Buffer written by one goroutine and read by
// another.
type lockedBuffer struct {
	mu sync.Mutex
	b  *bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
