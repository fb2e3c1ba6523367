package serve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"

	"github.com/runner-cli/runner/internal/subproc"
	"github.com/runner-cli/runner/internal/textutil"
)

// Result is what one runner process gave: its exit code, its standard
// output (the command's --json) and its standard error.
type Result struct {
	Code           int
	Stdout, Stderr []byte
	// Truncated: the output passed MaxOutput and was cut.
	Truncated bool
}

// Runner runs runner with args and stdin. Exec is the real one; tests
// give a fake.
type Runner interface {
	Run(ctx context.Context, args []string, stdin []byte) Result
}

// MaxOutput bounds what a runner process may print that a handler reads.
const MaxOutput = 64 << 20

// Exec runs the runner binary Exe with Environ (the server's, with its
// state directory and tmux server set) in Dir, in a process group of its
// own (subproc.Group), ended with subproc.KillGroup when the request
// goes away.
type Exec struct {
	Exe     string
	Dir     string
	Environ []string
}

var _ Runner = Exec{}

// Run runs runner with args (no shell) and stdin.
func (e Exec) Run(ctx context.Context, args []string, stdin []byte) Result {
	cmd := subproc.Group(ctx, e.Exe, args...)
	cmd.Dir = e.Dir
	cmd.Env = e.Environ
	cmd.Stdin = bytes.NewReader(stdin)
	out, errOut := &textutil.HeadWriter{Max: MaxOutput}, &textutil.HeadWriter{Max: 64 << 10}
	cmd.Stdout, cmd.Stderr = out, errOut
	err := cmd.Run()
	res := Result{Stdout: out.Bytes(), Stderr: errOut.Bytes()}
	res.Truncated = len(res.Stdout) >= MaxOutput
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		res.Code = ee.ExitCode()
	default:
		res.Code = -1
		res.Stderr = append(res.Stderr, fmt.Sprintf("runner serve could not run runner: %v\n", err)...)
	}
	return res
}
