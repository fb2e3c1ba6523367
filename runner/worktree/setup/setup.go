// Package setup makes a task's new worktree ready before its agent starts
// (config worktree_setup): files the project keeps out of git (.env,
// node_modules, …) copied or linked in, and a set-up command run, here
// (Apply) or on the task's host (ApplyThere). It sits below package
// runner, whose worktree launch calls it.
package setup

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/hosts"
	"github.com/runner-cli/runner/tmuxctl"
)

// Apply copies and links the files from the repository's top (from) into
// the worktree's top (to), then runs the command in dir, appending its
// output to log.
func Apply(ctx context.Context, w *config.WorktreeSetup, from, to, dir, log, id string) error {
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
	cmd := exec.CommandContext(rctx, w.Run[0], w.Run[1:]...)
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
// links (ln -s) and the command run there, each paths-as-arguments script
// one round trip; the command's output goes to log here.
func ApplyThere(ctx context.Context, w *config.WorktreeSetup, c *hosts.Conn, from, to, dir, log, id string) error {
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
