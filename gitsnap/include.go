package gitsnap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
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

// checkIncludeFiles refuses a pattern that climbs out of its directory
// in the include files that exist.
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
			b, err = runVia(ctx, r.via, "head", "-c", fmt.Sprint(maxIncludeFile), f)
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

// maxIncludeFile bounds what is read of a .worktreeinclude file.
const maxIncludeFile = 1 << 20

// readLocal reads the first maxIncludeFile bytes of a file here.
func readLocal(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxIncludeFile))
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
