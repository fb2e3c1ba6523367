// The few file operations gitsnap does beside git itself (a temporary
// index, the index lock, the in-progress markers), on this machine or on
// the machine a repository is on, through a transport.

package gitsnap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/runner-cli/runner/internal/transport"
)

// fsys is the file system of the machine a repository is on.
type fsys interface {
	// existing reports which of paths exist (not following a last link).
	existing(ctx context.Context, paths ...string) ([]bool, error)
	// createExcl creates path if it does not exist; false if it did.
	createExcl(ctx context.Context, path string) (bool, error)
	// remove removes a file; a missing one is not an error.
	remove(ctx context.Context, path string) error
	// tempDir makes a private temporary directory; removeAll removes it.
	tempDir(ctx context.Context) (string, error)
	// tempIndex is tempDir, with copyIndex of from into its "index".
	tempIndex(ctx context.Context, from string) (dir string, copied bool, err error)
	removeAll(ctx context.Context, path string)
	// copyIndex copies src to dst with src's modification time (git's
	// racy-entry check then behaves as on the original); false when src
	// does not exist. src is only read.
	copyIndex(ctx context.Context, src, dst string) (bool, error)
	rename(ctx context.Context, from, to string) error
	// mkdirAll makes a directory and its parents (0700).
	mkdirAll(ctx context.Context, path string) error
	// removeFiles removes each top/path (slash-separated, safe) and then
	// its parent directories up to top while they are empty.
	removeFiles(ctx context.Context, top string, paths []string) error
}

// On returns ctx with the machine gitsnap's calls with it run on: via (an
// ssh transport) for a repository on another machine, nil for this one.
// There, git runs through env(1) and git -C, and gitsnap's few file
// operations are small sh scripts; every path must be absolute.
func On(ctx context.Context, via transport.Transport) context.Context {
	return context.WithValue(ctx, viaKey{}, via)
}

type viaKey struct{}

// viaOf is the machine On put in ctx (nil: this one).
func viaOf(ctx context.Context) transport.Transport {
	via, _ := ctx.Value(viaKey{}).(transport.Transport)
	return via
}

// fsOf is the file system of the machine via stands for (nil: this one).
func fsOf(via transport.Transport) fsys {
	if via == nil {
		return localFS{}
	}
	return remoteFS{via}
}

// localFS is this machine's.
type localFS struct{}

func (localFS) existing(_ context.Context, paths ...string) ([]bool, error) {
	out := make([]bool, len(paths))
	for i, p := range paths {
		_, err := os.Lstat(p)
		out[i] = err == nil
	}
	return out, nil
}

func (localFS) createExcl(_ context.Context, path string) (bool, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, f.Close()
}

func (localFS) remove(_ context.Context, path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

func (localFS) tempDir(context.Context) (string, error) { return os.MkdirTemp("", "gitsnap-") }

func (l localFS) tempIndex(ctx context.Context, from string) (string, bool, error) {
	dir, err := l.tempDir(ctx)
	if err != nil {
		return "", false, err
	}
	copied, err := l.copyIndex(ctx, from, dir+"/index")
	if err != nil {
		os.RemoveAll(dir)
		return "", false, err
	}
	return dir, copied, nil
}

func (localFS) removeAll(_ context.Context, path string) { os.RemoveAll(path) }

func (localFS) rename(_ context.Context, from, to string) error { return os.Rename(from, to) }

func (localFS) mkdirAll(_ context.Context, path string) error { return os.MkdirAll(path, 0o700) }

func (localFS) removeFiles(_ context.Context, top string, paths []string) error {
	for _, p := range paths {
		if err := removeFile(top, p); err != nil {
			return err
		}
	}
	return nil
}

func (localFS) copyIndex(_ context.Context, src, dst string) (bool, error) {
	in, err := os.Open(src)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read index: %w", err)
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return false, fmt.Errorf("read index: %w", err)
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return false, fmt.Errorf("copy index: %w", err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return false, fmt.Errorf("copy index %s to %s: %w", src, dst, err)
	}
	if err := out.Close(); err != nil {
		return false, fmt.Errorf("copy index %s to %s: %w", src, dst, err)
	}
	if err := os.Chtimes(dst, fi.ModTime(), fi.ModTime()); err != nil {
		return false, fmt.Errorf("copy index: %w", err)
	}
	return true, nil
}

// remoteFS is another machine's: each operation one small sh script
// there, its paths passed as arguments (data, never script text).
type remoteFS struct{ via transport.Transport }

func (f remoteFS) sh(ctx context.Context, script string, args ...string) (string, error) {
	out, err := runVia(ctx, f.via, append([]string{"sh", "-c", script, "sh"}, args...)...)
	return string(out), err
}

func (f remoteFS) existing(ctx context.Context, paths ...string) ([]bool, error) {
	out, err := f.sh(ctx, `for p do if [ -e "$p" ] || [ -L "$p" ]; then echo y; else echo n; fi; done`, paths...)
	if err != nil {
		return nil, err
	}
	lines := strings.Fields(out)
	if len(lines) != len(paths) {
		return nil, fmt.Errorf("check %d paths on %s: unexpected answer %q", len(paths), f.via, out)
	}
	res := make([]bool, len(paths))
	for i, l := range lines {
		res[i] = l == "y"
	}
	return res, nil
}

// createExclScript makes $1 if it does not exist: "made", or "exists".
const createExclScript = `set -C
for try in 1 2 3; do
	if ( : > "$1" ) 2>/dev/null; then echo made; exit 0; fi
	if [ -e "$1" ] || [ -L "$1" ]; then echo exists; exit 0; fi
done
( : > "$1" ) && echo made`

func (f remoteFS) createExcl(ctx context.Context, path string) (bool, error) {
	// noclobber: the shell opens with O_EXCL. In a subshell: a failed
	// redirection of a special built-in (:) ends a POSIX shell (dash:
	// exit 2), so an existing file would be an error, not "exists". A try
	// that failed with the file gone when it looks (its holder let it go
	// in between) tries again; only the last try's failure is an error,
	// with the shell's words. No try makes the file without saying "made"
	// (an else that made it for its error message left the lock behind,
	// held by no one).
	out, err := f.sh(ctx, createExclScript, path)
	if err != nil {
		return false, err
	}
	return strings.TrimSpace(out) == "made", nil
}

func (f remoteFS) remove(ctx context.Context, path string) error {
	_, err := f.sh(ctx, `rm -f -- "$1"`, path)
	return err
}

func (f remoteFS) tempDir(ctx context.Context) (string, error) {
	out, err := f.sh(ctx, `mktemp -d "${TMPDIR:-/tmp}/gitsnap-XXXXXXXX"`)
	if err != nil {
		return "", err
	}
	d := strings.TrimSpace(out)
	if !strings.HasPrefix(d, "/") {
		return "", fmt.Errorf("temporary directory on %s: unexpected answer %q", f.via, out)
	}
	return d, nil
}

// tempIndex is one round trip there.
func (f remoteFS) tempIndex(ctx context.Context, from string) (string, bool, error) {
	out, err := f.sh(ctx, `set -e; d=$(mktemp -d "${TMPDIR:-/tmp}/gitsnap-XXXXXXXX"); `+
		`if [ -f "$1" ]; then cp -p -- "$1" "$d/index"; echo "copied $d"; else echo "none $d"; fi`, from)
	if err != nil {
		return "", false, err
	}
	state, dir, ok := strings.Cut(strings.TrimSpace(out), " ")
	if !ok || !strings.HasPrefix(dir, "/") {
		return "", false, fmt.Errorf("temporary index on %s: unexpected answer %q", f.via, out)
	}
	return dir, state == "copied", nil
}

func (f remoteFS) removeAll(ctx context.Context, path string) {
	_, _ = f.sh(context.WithoutCancel(ctx), `rm -rf -- "$1"`, path)
}

// removeFiles is one round trip there.
func (f remoteFS) removeFiles(ctx context.Context, top string, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	const script = `top=$1; shift; for p do f=$top/$p
rm -f -- "$f" || exit 1
d=${f%/*}; while [ "$d" != "$top" ] && [ "${d#"$top"/}" != "$d" ] && rmdir -- "$d" 2>/dev/null; do d=${d%/*}; done
done`
	_, err := f.sh(ctx, script, append([]string{top}, paths...)...)
	return err
}

func (f remoteFS) mkdirAll(ctx context.Context, path string) error {
	_, err := f.sh(ctx, `mkdir -p -m 700 -- "$1"`, path)
	return err
}

func (f remoteFS) rename(ctx context.Context, from, to string) error {
	_, err := f.sh(ctx, `mv -f -- "$1" "$2"`, from, to)
	return err
}

func (f remoteFS) copyIndex(ctx context.Context, src, dst string) (bool, error) {
	out, err := f.sh(ctx, `if [ -f "$1" ]; then cp -p -- "$1" "$2" && echo copied; else echo none; fi`, src, dst)
	if err != nil {
		return false, fmt.Errorf("copy index %s to %s on %s: %w", src, dst, f.via, err)
	}
	return strings.TrimSpace(out) == "copied", nil
}
