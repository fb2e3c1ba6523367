// Package setup makes a task's worktree at its snapshot (Start) and makes
// it ready before its agent starts (config worktree_setup): files the project keeps out of git (.env,
// node_modules, …) copied or linked in, then the ignored files the
// repository's .worktreeinclude lists copied where nothing is yet
// (CopyIncluded), and a set-up command run, here (Apply) or on the task's
// host (ApplyThere, through the little of the host's connection it
// declares: Conn). It sits below package runner, whose worktree launch
// calls it.
package setup

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/runner-cli/runner/internal/subproc"
	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/tmuxctl"
)

// Apply copies and links the files from the repository's top (from) into
// the worktree's top (to), then copies the ignored files .worktreeinclude
// lists (include, from gitsnap.Included) where nothing is yet, then runs
// the command in dir, appending its output to log: worktree_setup's files
// win over .worktreeinclude's, and the command sees both. w may be nil.
func Apply(ctx context.Context, w *config.WorktreeSetup, include []string, from, to, dir, log, id string) (Copied, error) {
	if w == nil {
		w = &config.WorktreeSetup{}
	}
	if err := applyFiles(w, from, to); err != nil {
		return Copied{}, err
	}
	copied, err := CopyIncluded(from, to, include)
	if err != nil {
		return copied, err
	}
	if len(include) > 0 {
		appendLog(log, "runner: worktree set-up: "+copied.Summary()+"\n")
	}
	return copied, run(ctx, w, to, dir, log, id)
}

// appendLog appends text to the task's log; a failure to is not the
// set-up's.
func appendLog(log, text string) {
	if os.MkdirAll(filepath.Dir(log), 0o700) != nil {
		return
	}
	if f, err := os.OpenFile(log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600); err == nil {
		f.WriteString(text)
		f.Close()
	}
}

// applyFiles is the config's copies and links.
func applyFiles(w *config.WorktreeSetup, from, to string) error {
	for _, p := range w.Copy {
		src, dst := filepath.Join(from, p), filepath.Join(to, p)
		fi, err := os.Stat(src)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("worktree set-up: copy %s: %w", p, err)
		}
		if err := copyPath(src, dst, fi); err != nil {
			return fmt.Errorf("worktree set-up: copy %s: %w", p, err)
		}
	}
	for _, p := range w.Symlink {
		src, dst := filepath.Join(from, p), filepath.Join(to, p)
		if _, err := os.Lstat(src); err != nil {
			continue
		}
		if _, err := os.Lstat(dst); err == nil {
			continue // the snapshot brought it already (it is tracked)
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return fmt.Errorf("worktree set-up: link %s: %w", p, err)
		}
		if err := os.Symlink(src, dst); err != nil {
			return fmt.Errorf("worktree set-up: link %s: %w", p, err)
		}
	}
	return nil
}

// run runs the config's command in dir, its output appended to log.
func run(ctx context.Context, w *config.WorktreeSetup, to, dir, log, id string) error {
	if len(w.Run) == 0 {
		return nil
	}
	timeout := w.RunTimeout.Duration
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	if err := os.MkdirAll(filepath.Dir(log), 0o700); err != nil {
		return err
	}
	out, err := os.OpenFile(log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("worktree set-up: %w", err)
	}
	defer out.Close()
	fmt.Fprintf(out, "runner: worktree set-up: %q in %s\n", w.Run, dir)
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := subproc.Group(rctx, w.Run[0], w.Run[1:]...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, out, out
	cmd.Env = tmuxctl.ChildEnv(os.Environ(), "RUNNER_TASK_ID="+id, "RUNNER_WORKTREE="+to)
	if err := cmd.Run(); err != nil {
		if rctx.Err() == context.DeadlineExceeded {
			err = fmt.Errorf("did not finish within %s", timeout)
		}
		return fmt.Errorf("worktree set-up command %q failed: %w (its output is in 'runner logs %s')", w.Run, err, id)
	}
	return nil
}

// copyPath copies a file (with its mode) or a directory tree.
func copyPath(src, dst string, fi fs.FileInfo) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if fi.IsDir() {
		return os.CopyFS(dst, os.DirFS(src))
	}
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, fi.Mode().Perm())
}

// ApplyThere is Apply for a worktree on a host: the copies (cp -a), the
// links (ln -s), the .worktreeinclude copies and the command run there,
// each paths-as-arguments script one round trip; the log is here.
func ApplyThere(ctx context.Context, w *config.WorktreeSetup, include []string, c Conn, from, to, dir, log, id string) (Copied, error) {
	if w == nil {
		w = &config.WorktreeSetup{}
	}
	if err := applyFilesThere(ctx, w, c, from, to); err != nil {
		return Copied{}, err
	}
	copied, err := CopyIncludedThere(ctx, c, from, to, include)
	if err != nil {
		return copied, err
	}
	if len(include) > 0 {
		appendLog(log, "runner: worktree set-up on host "+c.Host().Name+": "+copied.Summary()+"\n")
	}
	return copied, runThere(ctx, w, c, to, dir, log, id)
}

// applyFilesThere is applyFiles on a host.
func applyFilesThere(ctx context.Context, w *config.WorktreeSetup, c Conn, from, to string) error {
	if len(w.Copy) > 0 {
		const script = `from=$1 to=$2; shift 2; for p do s=$from/$p d=$to/$p
[ -e "$s" ] || continue
if [ -d "$s" ]; then mkdir -p "$d" && cp -a "$s/." "$d/" || exit 1
else mkdir -p "${d%/*}" && cp -p "$s" "$d" || exit 1; fi; done`
		if _, err := c.Run(ctx, append([]string{"sh", "-c", script, "sh", from, to}, w.Copy...)...); err != nil {
			return fmt.Errorf("worktree set-up: copy: %w", err)
		}
	}
	if len(w.Symlink) > 0 {
		const script = `from=$1 to=$2; shift 2; for p do s=$from/$p d=$to/$p
{ [ -e "$s" ] || [ -L "$s" ]; } || continue
{ [ -e "$d" ] || [ -L "$d" ]; } && continue
mkdir -p "${d%/*}" && ln -s "$s" "$d" || exit 1; done`
		if _, err := c.Run(ctx, append([]string{"sh", "-c", script, "sh", from, to}, w.Symlink...)...); err != nil {
			return fmt.Errorf("worktree set-up: link: %w", err)
		}
	}
	return nil
}

// runThere is run on a host; the output comes to log here.
func runThere(ctx context.Context, w *config.WorktreeSetup, c Conn, to, dir, log, id string) error {
	if len(w.Run) == 0 {
		return nil
	}
	timeout := w.RunTimeout.Duration
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	argv := append([]string{"env", "RUNNER_TASK_ID=" + id, "RUNNER_WORKTREE=" + to, "sh", "-c", `cd "$1" && shift && exec "$@"`, "sh", dir}, w.Run...)
	stdout, stderr, code, err := c.Transport().Run(rctx, nil, argv...)
	if f, ferr := os.OpenFile(log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600); ferr == nil {
		fmt.Fprintf(f, "runner: worktree set-up: %q in %s on host %s\n", w.Run, dir, c.Host().Name)
		f.Write(stdout)
		f.Write(stderr)
		f.Close()
	}
	switch {
	case rctx.Err() == context.DeadlineExceeded:
		err = fmt.Errorf("did not finish within %s", timeout)
	case err == nil && code != 0:
		err = fmt.Errorf("exit status %d", code)
	}
	if err != nil {
		return fmt.Errorf("worktree set-up command %q failed: %w (its output is in 'runner logs %s')", w.Run, err, id)
	}
	return nil
}
