package gitsnap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/subproc"
	"github.com/runner-cli/runner/internal/transport"
)

// gitProgram is the git executable looked up in PATH. Tests may swap it.
var gitProgram = "git"

// lockWait bounds how long a command waits for a lock (index.lock or a ref
// lock) held by another git process before it gives up with ErrLocked.
// Tests shorten it.
var lockWait = 5 * time.Second

// lockBackoff is the first pause between two attempts; it doubles up to
// maxLockBackoff.
var lockBackoff = 20 * time.Millisecond

// beforeLockRetry is called before each pause for a held lock; tests use it
// to release the lock at a known moment.
var beforeLockRetry = func() {}

const maxLockBackoff = 500 * time.Millisecond

// droppedEnv are variables that would point git at another repository,
// index or object store than the one we run in (they are set, for example,
// when runner is called from a git hook). Everything else, including
// GIT_CONFIG_* and the author/committer variables, is passed through.
var droppedEnv = []string{
	"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
	"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_NAMESPACE",
	"GIT_PREFIX", "GIT_QUARANTINE_PATH", "GIT_INTERNAL_SUPER_PREFIX",
	"GIT_REPLACE_REF_BASE", "GIT_SHALLOW_FILE", "GIT_GRAFT_FILE",
	"GIT_LITERAL_PATHSPECS", "GIT_GLOB_PATHSPECS", "GIT_NOGLOB_PATHSPECS", "GIT_ICASE_PATHSPECS",
	"GIT_TRACE", "GIT_TRACE2", "GIT_TRACE2_EVENT", "GIT_TRACE2_PERF", "GIT_TRACE_PERFORMANCE",
	"GIT_OPTIONAL_LOCKS", "GIT_TERMINAL_PROMPT", "GIT_NO_REPLACE_OBJECTS",
	"LC_ALL", "LANGUAGE",
}

// fixedEnv is appended to every git environment: no optional locks (so no
// command of ours ever refreshes the user's index), no prompts, no replace
// objects, and untranslated messages so stderr can be matched.
var fixedEnv = []string{
	"GIT_OPTIONAL_LOCKS=0",
	"GIT_TERMINAL_PROMPT=0",
	"GIT_NO_REPLACE_OBJECTS=1",
	"LC_ALL=C",
}

// fixedConfig is passed as -c to every git command. No hook runs (the
// plumbing we use runs none but reference-transaction, and core.hooksPath
// pointing at /dev/null stops that one); signing is off for commit-tree;
// no fsmonitor runs (core.fsmonitor names a program to run), nor does any
// filter, diff or merge driver the repository's config defines (see
// drivers: they are named per driver, so each call that may run one gets
// them as well).
var fixedConfig = []string{
	"-c", "core.hooksPath=/dev/null",
	"-c", "core.fsmonitor=false",
	"-c", "core.splitIndex=false",
	"-c", "advice.addEmbeddedRepo=false",
	"-c", "commit.gpgSign=false",
	"-c", "core.quotePath=false",
	"-c", "color.ui=false",
}

// fallbackIdentity is used for commit-tree when the user has no usable
// identity configured.
var fallbackIdentity = []string{
	"GIT_AUTHOR_NAME=runner", "GIT_AUTHOR_EMAIL=runner@localhost",
	"GIT_COMMITTER_NAME=runner", "GIT_COMMITTER_EMAIL=runner@localhost",
}

// gitEnv builds the child environment from the parent's.
func gitEnv(extra []string) []string {
	env := make([]string, 0, len(os.Environ())+len(fixedEnv)+len(extra))
next:
	for _, kv := range os.Environ() {
		for _, d := range droppedEnv {
			if strings.HasPrefix(kv, d+"=") {
				continue next
			}
		}
		env = append(env, kv)
	}
	env = append(env, fixedEnv...)
	return append(env, extra...)
}

// call is one git invocation.
type call struct {
	via   transport.Transport // where git runs: nil for this machine
	dir   string              // working directory
	env   []string            // extra environment (KEY=VALUE), e.g. GIT_INDEX_FILE
	stdin io.Reader           // nil means no input
	args  []string            // after "git" and the fixed -c options
	cfg   []string            // more -c options, before args (drivers turned off)
	// locks marks a command that may fail because another git process holds
	// a lock; it is retried with backoff for up to lockWait.
	locks bool
}

// GitError is a failed git command: its arguments, directory, exit error and
// standard error, so the message says what failed and why.
type GitError struct {
	Args   []string
	Dir    string
	Stderr string
	Err    error
}

func (e *GitError) Error() string {
	msg := fmt.Sprintf("git %s in %s: %v", strings.Join(e.Args, " "), e.Dir, e.Err)
	if s := strings.TrimSpace(e.Stderr); s != "" {
		msg += ": " + s
	}
	return msg
}

// Unwrap returns the exec error.
func (e *GitError) Unwrap() error { return e.Err }

// run executes git and returns its standard output. A missing git gives an
// error wrapping ErrGitMissing; a lock held by someone else, after retries, an
// error wrapping ErrLocked.
func run(ctx context.Context, c call) ([]byte, error) {
	var stdinData []byte
	if c.stdin != nil && c.locks {
		// A retried command needs its input again.
		b, err := io.ReadAll(c.stdin)
		if err != nil {
			return nil, fmt.Errorf("read input for git %s: %w", c.args[0], err)
		}
		stdinData = b
	}
	// The wait counts from the lock found held, not from the first try:
	// a slow first try (a loaded machine) is no time waited for it.
	var deadline time.Time
	pause := lockBackoff
	for {
		in := c.stdin
		if c.locks && c.stdin != nil {
			in = bytes.NewReader(stdinData)
		}
		out, err := runOnce(ctx, c, in)
		if err == nil || !c.locks || !isLockError(err) {
			return out, err
		}
		if deadline.IsZero() {
			deadline = clock.Now().Add(lockWait)
		}
		if clock.Now().Add(pause).After(deadline) {
			return nil, fmt.Errorf("%w (waited %v; another git process, perhaps an agent, is working in this repository; if none is, remove the stale .lock file named above): %w",
				ErrLocked, lockWait, err)
		}
		beforeLockRetry()
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("git %s in %s: %w", c.args[0], c.dir, ctx.Err())
		case <-t.C:
		}
		pause = min(pause*2, maxLockBackoff)
	}
}

func runOnce(ctx context.Context, c call, in io.Reader) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("git %s in %s: %w", c.args[0], c.dir, err)
	}
	if r, ok := c.via.(transport.Runner); ok {
		return c.runThere(ctx, r, in)
	}
	cmd, err := c.command(ctx)
	if err != nil {
		return nil, err
	}
	cmd.Stdin = in
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("git %s in %s: %w", c.args[0], c.dir, ctx.Err())
		}
		var ee *exec.ExitError
		if c.via != nil && errors.As(err, &ee) && ee.ExitCode() == 127 && strings.Contains(stderr.String(), "git") {
			return nil, fmt.Errorf("%w on %s: %s (install git there)", ErrGitMissing, c.via, strings.TrimSpace(stderr.String()))
		}
		return stdout.Bytes(), &GitError{Args: c.args, Dir: c.dir, Stderr: stderr.String(), Err: err}
	}
	return stdout.Bytes(), nil
}

// runThere runs c through a transport that keeps a shell on the host.
func (c call) runThere(ctx context.Context, r transport.Runner, in io.Reader) ([]byte, error) {
	var stdin []byte
	if in != nil {
		b, err := io.ReadAll(in)
		if err != nil {
			return nil, fmt.Errorf("read input for git %s: %w", c.args[0], err)
		}
		stdin = b
	}
	stdout, stderr, code, err := r.Run(ctx, stdin, c.remoteArgv()...)
	switch {
	case err != nil:
		if ctx.Err() != nil {
			return nil, fmt.Errorf("git %s in %s: %w", c.args[0], c.dir, ctx.Err())
		}
		return nil, &GitError{Args: c.args, Dir: c.dir, Err: err}
	case code == 127 && strings.Contains(string(stderr), "git"):
		return nil, fmt.Errorf("%w on %s: %s (install git there)", ErrGitMissing, c.via, strings.TrimSpace(string(stderr)))
	case code != 0:
		return stdout, &GitError{Args: c.args, Dir: c.dir, Stderr: string(stderr), Err: fmt.Errorf("exit status %d", code)}
	}
	return stdout, nil
}

// remoteArgv is c's git command for another machine: through env(1)
// (the variables that would redirect git unset, the fixed ones and c.env
// set) and git -C.
func (c call) remoteArgv() []string {
	remote := []string{"env"}
	for _, k := range droppedEnv {
		remote = append(remote, "-u", k)
	}
	remote = append(append(append(remote, fixedEnv...), c.env...), "git", "-C", c.dir)
	return append(append(append(remote, fixedConfig...), c.cfg...), c.args...)
}

// command makes the git command of c: here, git from PATH in c.dir with
// the environment of gitEnv; through a transport, the same through env(1)
// and git -C there (the variables that would redirect git unset, the
// fixed ones and c.env set).
func (c call) command(ctx context.Context) (*exec.Cmd, error) {
	argv := append(append(append([]string{}, fixedConfig...), c.cfg...), c.args...)
	if c.via != nil {
		cmd := c.via.Command(ctx, c.remoteArgv()...)
		cmd.WaitDelay = subproc.PipeWait
		return cmd, nil
	}
	path, err := exec.LookPath(gitProgram)
	if err != nil {
		return nil, fmt.Errorf("%w: %v (install git, or put it in PATH)", ErrGitMissing, err)
	}
	cmd := subproc.Command(ctx, path, argv...)
	cmd.Dir = c.dir
	cmd.Env = gitEnv(c.env)
	return cmd, nil
}

// isLockError reports whether git failed because a lock file exists.
func isLockError(err error) bool {
	var ge *GitError
	if !errors.As(err, &ge) {
		return false
	}
	s := ge.Stderr
	return strings.Contains(s, ".lock': File exists") ||
		(strings.Contains(s, "cannot lock ref") && strings.Contains(s, "File exists")) ||
		strings.Contains(s, "Unable to create") && strings.Contains(s, ".lock")
}

// isIdentityError reports whether commit-tree failed for want of a usable
// author or committer identity.
func isIdentityError(err error) bool {
	var ge *GitError
	if !errors.As(err, &ge) {
		return false
	}
	s := ge.Stderr
	return strings.Contains(s, "Please tell me who you are") ||
		strings.Contains(s, "unable to auto-detect email address") ||
		strings.Contains(s, "empty ident name") ||
		strings.Contains(s, "no email was given")
}

// trimOut returns git's output as one trimmed string.
func trimOut(b []byte) string { return strings.TrimSpace(string(b)) }

// Version returns git's version string, e.g. "git version 2.39.5"; a missing
// git gives an error wrapping ErrGitMissing.
func Version(ctx context.Context) (string, error) {
	out, err := run(ctx, call{dir: os.TempDir(), args: []string{"--version"}})
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// VersionArgv is the command that prints git's version, for a host's
// transport to run there (Version here).
func VersionArgv() []string { return []string{"git", "--version"} }
