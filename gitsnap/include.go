package gitsnap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/runner-cli/runner/internal/transport"
	"github.com/runner-cli/runner/internal/untrusted"
)

// IncludeFile is the name of the file, shared with Claude Code, Conductor,
// agent-deck and Orca, that lists (in .gitignore's syntax) the ignored files
// a new worktree gets a copy of.
const IncludeFile = ".worktreeinclude"

// Included lists the files the .worktreeinclude files of the repository
// containing dir select for a new worktree, as Claude Code's rule says: an
// untracked file that matches their patterns and that git ignores. The
// patterns are .gitignore's (comments, negation, anchors, a trailing slash
// for a directory, **), each file's relative to its own directory as a
// nested .gitignore's are, so a project that is a subdirectory of a larger
// repository may keep one of its own. Nothing is listed unless the file is
// at the top of the work tree or in dir (then one further down applies to
// its directory too, as a nested .gitignore does). A pattern with a ".." component is
// refused (an error naming the file and line): the list never names a path
// outside the work tree. The paths are slash-separated, relative to the
// top (returned too), and sorted; none is a directory.
func Included(ctx context.Context, dir string) (top string, paths []string, err error) {
	r, err := open(ctx, dir)
	if err != nil {
		return "", nil, err
	}
	files := []string{r.top + "/" + IncludeFile}
	if r.prefix != "" {
		files = append(files, r.top+"/"+r.prefix+"/"+IncludeFile)
	}
	there, err := r.fs.existing(ctx, files...)
	if err != nil {
		return r.top, nil, fmt.Errorf("look for %s in %s: %w", IncludeFile, r.top, err)
	}
	if !slicesAny(there) {
		return r.top, nil, nil
	}
	if err := r.checkIncludeFiles(ctx, files, there); err != nil {
		return r.top, nil, err
	}
	if err := r.checkNestedIncludeFiles(ctx); err != nil {
		return r.top, nil, err
	}
	out, err := r.git(ctx, "ls-files", "-z", "--others", "--ignored", "--exclude-per-directory="+IncludeFile)
	if err != nil {
		return r.top, nil, fmt.Errorf("list the files %s selects in %s: %w", IncludeFile, r.top, err)
	}
	matched := splitZ(out)
	if len(matched) == 0 {
		return r.top, nil, nil
	}
	in := []byte(strings.Join(matched, "\x00") + "\x00")
	out, err = run(ctx, call{via: r.via, dir: r.top, stdin: bytes.NewReader(in), args: []string{"check-ignore", "-z", "--stdin"}})
	var ge *GitError
	if errors.As(err, &ge) && len(out) == 0 && strings.TrimSpace(ge.Stderr) == "" {
		err = nil // exit 1: none of them is ignored
	}
	if err != nil {
		return r.top, nil, fmt.Errorf("check which files %s selects are ignored in %s: %w", IncludeFile, r.top, err)
	}
	for _, p := range splitZ(out) {
		if !strings.HasSuffix(p, "/") {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	return r.top, paths, nil
}

// checkIncludeFiles reads the include files that exist by the rules for
// what an agent wrote (a regular file, not a link, opened without
// blocking, at most maxIncludeFile bytes: a FIFO in its place would hold
// git, and runner, for good) and refuses a pattern that climbs out of its
// directory.
func (r *repo) checkIncludeFiles(ctx context.Context, files []string, there []bool) error {
	for i, f := range files {
		if !there[i] {
			continue
		}
		var b []byte
		var err error
		if r.via == nil {
			b, err = readLocal(f)
		} else {
			b, err = readThere(ctx, r.via, f)
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", f, err)
		}
		if err := CheckIncludePatterns(string(b)); err != nil {
			return fmt.Errorf("%s: %w (remove or fix the line)", f, err)
		}
	}
	return nil
}

// ErrIncludeFile is wrapped when a .worktreeinclude file is not read: a
// link, a FIFO, a device or a socket in its place, or a file over
// maxIncludeFile bytes.
var ErrIncludeFile = errors.New("not a .worktreeinclude runner reads")

// includeFix is what the user is told to do about a refused file.
const includeFix = "remove it, or make it a regular file of at most 1 MiB, then dispatch again"

// checkNestedIncludeFiles refuses a .worktreeinclude further down the
// work tree that is a FIFO, a socket or a device: git reads the one of
// each directory it walks (as it reads a .gitignore), and its open would
// wait on a FIFO for good. A link there git skips itself.
func (r *repo) checkNestedIncludeFiles(ctx context.Context) error {
	var bad string
	if r.via == nil {
		bad = findSpecialLocal(r.top)
	} else {
		const script = `find "$1" -name .git -prune -o -name "$2" ! -type f ! -type l ! -type d -print 2>/dev/null; exit 0`
		out, err := runVia(ctx, r.via, "sh", "-c", script, "sh", r.top, IncludeFile)
		if err != nil {
			return fmt.Errorf("look for %s files in %s: %w", IncludeFile, r.top, err)
		}
		bad, _, _ = strings.Cut(strings.TrimSpace(string(out)), "\n")
	}
	if bad != "" {
		return fmt.Errorf("%s: %w: not a regular file (a FIFO, socket or device, which git would wait on): %s", bad, ErrIncludeFile, includeFix)
	}
	return nil
}

// findSpecialLocal is the first file named IncludeFile below top that is
// neither a regular file, a link nor a directory ("" none); .git
// directories are not entered, links not followed.
func findSpecialLocal(top string) string {
	var bad string
	_ = filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d == nil {
			return nil
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Name() == IncludeFile && !d.Type().IsRegular() && d.Type()&fs.ModeSymlink == 0 {
			bad = p
			return filepath.SkipAll
		}
		return nil
	})
	return bad
}

// CheckIncludePatterns refuses a .worktreeinclude text whose pattern has
// a ".." component, naming its line.
func CheckIncludePatterns(text string) error {
	for n, line := range strings.Split(text, "\n") {
		p := strings.TrimSpace(line)
		if p == "" || strings.HasPrefix(p, "#") {
			continue
		}
		p = strings.TrimPrefix(p, "!")
		for _, c := range strings.Split(p, "/") {
			if c == ".." {
				return fmt.Errorf("line %d: %q leaves the repository", n+1, line)
			}
		}
	}
	return nil
}

// maxIncludeFile bounds a .worktreeinclude file: a larger one is refused
// (git would read past what was checked).
const maxIncludeFile = 1 << 20

// readLocal reads a .worktreeinclude file here by internal/untrusted's
// rules, refusing one over maxIncludeFile bytes.
func readLocal(name string) ([]byte, error) {
	f, err := untrusted.Open(name)
	if err != nil {
		return nil, fmt.Errorf("%w: %w: %s", ErrIncludeFile, err, includeFix)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxIncludeFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxIncludeFile {
		return nil, fmt.Errorf("%w: over %d bytes: %s", ErrIncludeFile, maxIncludeFile, includeFix)
	}
	return b, nil
}

// readThere is readLocal on another machine: the file is read only when
// it is a regular file and not a link ([ -f ] and [ -L ] there; a file
// swapped for a FIFO between the test and the read holds the read until
// the context ends).
func readThere(ctx context.Context, via transport.Transport, name string) ([]byte, error) {
	const script = `if [ -L "$1" ] || [ ! -f "$1" ]; then echo notregular; exit 0; fi; echo regular; head -c "$2" -- "$1"`
	out, err := runVia(ctx, via, "sh", "-c", script, "sh", name, fmt.Sprint(maxIncludeFile+1))
	if err != nil {
		return nil, err
	}
	kind, b, _ := bytes.Cut(out, []byte("\n"))
	switch {
	case string(kind) != "regular":
		return nil, fmt.Errorf("%w: a link, FIFO, socket or device: %s", ErrIncludeFile, includeFix)
	case len(b) > maxIncludeFile:
		return nil, fmt.Errorf("%w: over %d bytes: %s", ErrIncludeFile, maxIncludeFile, includeFix)
	}
	return b, nil
}

// splitZ splits git's -z output.
func splitZ(b []byte) []string {
	var out []string
	for _, s := range strings.Split(string(b), "\x00") {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

func slicesAny(b []bool) bool {
	for _, v := range b {
		if v {
			return true
		}
	}
	return false
}
