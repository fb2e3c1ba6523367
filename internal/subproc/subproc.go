// Package subproc starts runner's child processes, the one place that
// knows how: a child in a process group of its own (Group) is ended with
// one recipe, KillGroup (SIGTERM to the whole group, then SIGKILL to
// whatever of it is left after Grace); a child is waited for at most
// PipeWait after it was ended, so a grandchild that escaped with its
// pipes cannot hold the caller; and Run and Output collect the child's
// stderr into their error (*Error wraps the cause with %w and keeps the
// stderr's tail). What a child runs is the caller's business: tmux only
// through tmuxctl and git only through gitsnap (importcheck.ProgramOwner
// follows Command, Group, Detached and Interactive as it follows
// exec.Command), and no other package starts a process or signals a
// process group (importcheck.OneSubprocess: TestOneSubprocessHelper).
//
// It imports nothing of the module but internal/textutil, a leaf of the
// standard library's (TestImports).
package subproc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/runner-cli/runner/internal/textutil"
)

// Grace is how long a process group has between SIGTERM and SIGKILL
// (KillGroup): time for runner itself to record a cancelled task, for a
// shell to pass the signal on.
const Grace = 3 * time.Second

// PipeWait is how long Wait waits, after the child was ended, for the
// pipes a process outside its group may still hold open (exec.Cmd's
// WaitDelay).
const PipeWait = 2 * time.Second

// StderrMax is how much of a child's stderr an *Error keeps: its end.
const StderrMax = 8 << 10

// Command is exec.CommandContext for a child in this process's group:
// ctx's end kills the child (SIGKILL, the child alone), and Wait then
// waits at most PipeWait for its pipes.
func Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.WaitDelay = PipeWait
	return cmd
}

// Group is Command for a child in a process group of its own: ctx's end
// ends the whole group with KillGroup (SIGTERM, SIGKILL after Grace),
// the child and whatever it started that stayed in its group; Wait then
// waits at most PipeWait more for the pipes.
func Group(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	inGroup(cmd)
	return cmd
}

// inGroup makes cmd, not started, one that Group made: its own process
// group, ended with KillGroup when its context ends.
func inGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.Cancel = func() error { return KillGroup(cmd.Process.Pid) }
	cmd.WaitDelay = Grace + PipeWait
}

// Detached is a command for a process that outlives this one (a detached
// supervisor, the background gc): a session of its own, so that neither
// this process's end nor a signal to its group or terminal reaches it.
// No context ends it; start it and Release its Process.
func Detached(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	return cmd
}

// KillGroup ends process group pgid (a Group child's pid): SIGTERM to
// the whole group now, then, in the background, SIGKILL to what is left
// of it after Grace (nothing is sent once the group is gone). It returns
// os.ErrProcessDone when the group was gone already.
func KillGroup(pgid int) error {
	if pgid <= 1 {
		return fmt.Errorf("kill process group %d: not a group runner started", pgid)
	}
	if err := syscall.Kill(-pgid, syscall.SIGTERM); err != nil {
		if errors.Is(err, syscall.ESRCH) {
			return os.ErrProcessDone
		}
		return fmt.Errorf("kill process group %d: %w", pgid, err)
	}
	go escalate(pgid, Grace)
	return nil
}

// escalate sends SIGKILL to group pgid once grace has passed, unless the
// group is gone before: it looks every 50 ms, so it does not outlive the
// group by much, and a group id no longer in use is not signalled.
func escalate(pgid int, grace time.Duration) {
	const step = 50 * time.Millisecond
	for waited := time.Duration(0); waited < grace; waited += step {
		time.Sleep(step)
		if syscall.Kill(-pgid, 0) != nil {
			return
		}
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// Error is a child that failed: it did not start, exited non-zero, or
// was ended. It wraps the cause (an *exec.ExitError, exec.ErrNotFound, a
// context's error…) and keeps the end of the child's stderr.
type Error struct {
	// Program is the base name of the child's program.
	Program string
	// Stderr is the end of what the child wrote on stderr (StderrMax),
	// trimmed.
	Stderr string
	// Err is the cause.
	Err error
}

func (e *Error) Error() string {
	msg := e.Program + ": " + e.Err.Error()
	if e.Stderr != "" {
		msg += ": " + lastLine(e.Stderr)
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// Run runs cmd and waits for it. Its stderr is collected (beside
// cmd.Stderr, when the caller set one) into the error, an *Error.
func Run(cmd *exec.Cmd) error {
	tail := collect(cmd)
	return wrap(cmd, cmd.Run(), tail)
}

// Output runs cmd and returns its stdout; an error is an *Error with its
// stderr, as Run's.
func Output(cmd *exec.Cmd) ([]byte, error) {
	if cmd.Stdout != nil {
		return nil, errors.New("subproc: Output with Stdout already set")
	}
	var out bytes.Buffer
	cmd.Stdout = &out
	err := Run(cmd)
	return out.Bytes(), err
}

// ExitCode is the code a child that failed exited with by itself, and
// whether it did (false: it did not start, or a signal ended it).
func ExitCode(err error) (int, bool) {
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.Exited() {
		return ee.ExitCode(), true
	}
	return 0, false
}

// collect tees cmd's stderr into a tail it returns.
func collect(cmd *exec.Cmd) *textutil.TailWriter {
	tail := &textutil.TailWriter{Max: StderrMax}
	if cmd.Stderr == nil {
		cmd.Stderr = tail
	} else if cmd.Stderr != cmd.Stdout {
		cmd.Stderr = io.MultiWriter(cmd.Stderr, tail)
	} else {
		// One writer for both (a combined output): the tail holds both.
		w := io.MultiWriter(cmd.Stderr, tail)
		cmd.Stdout, cmd.Stderr = w, w
	}
	return tail
}

func wrap(cmd *exec.Cmd, err error, tail *textutil.TailWriter) error {
	if err == nil {
		return nil
	}
	return &Error{Program: filepath.Base(cmd.Path), Stderr: strings.TrimSpace(tail.String()), Err: err}
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[i+1:])
	}
	return s
}

// Interactive is a command for the user's terminal, run in the
// foreground (tmux attach from a view): in this process's group, so the
// terminal's signals reach it, and no context ends it.
func Interactive(name string, args ...string) *exec.Cmd {
	return exec.Command(name, args...)
}
