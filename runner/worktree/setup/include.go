package setup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
)

// The bounds on what .worktreeinclude copies into one worktree; a file past
// them is skipped and said. Variables so tests can lower them.
var (
	// MaxIncludeFiles bounds how many files are copied.
	MaxIncludeFiles = 10000
	// MaxIncludeFileBytes bounds one file.
	MaxIncludeFileBytes int64 = 64 << 20
	// MaxIncludeBytes bounds all of them together.
	MaxIncludeBytes int64 = 512 << 20
)

// Copied is what copying the .worktreeinclude files did.
type Copied struct {
	Files   []string // copied, relative to the repository's top
	Bytes   int64    // their size together
	Skipped []Skip   // listed but not copied, with why
}

// Skip is a listed file that was not copied.
type Skip struct {
	Path string
	Why  string
}

// Why a listed file is skipped.
const (
	whyNotRegular = "not a regular file (a symlink is never followed)"
	whyExists     = "already in the worktree (tracked there, or put there by worktree_setup, which wins)"
	whyTooBig     = "larger than the bound of one file"
	whyTooMany    = "past the bound of the files or bytes copied into one worktree"
	whyOutside    = "its place in the worktree is under a symlink"
)

// Summary is one line for the task's log and the journal: what was copied
// (the first names) and what was skipped, with why.
func (c Copied) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d file(s), %d bytes, copied from the checkout as .worktreeinclude lists", len(c.Files), c.Bytes)
	if len(c.Files) > 0 {
		b.WriteString(": " + names(c.Files, 20))
	}
	if len(c.Skipped) > 0 {
		fmt.Fprintf(&b, "; %d skipped:", len(c.Skipped))
		for i, s := range c.Skipped {
			if i == 20 {
				fmt.Fprintf(&b, " … %d more", len(c.Skipped)-i)
				break
			}
			fmt.Fprintf(&b, " %s (%s)", strconv.Quote(s.Path), s.Why)
		}
	}
	return b.String()
}

// names is up to n of paths, quoted, and how many more.
func names(paths []string, n int) string {
	q := make([]string, 0, min(n, len(paths)))
	for i, p := range paths {
		if i == n {
			return strings.Join(q, " ") + fmt.Sprintf(" … %d more", len(paths)-n)
		}
		q = append(q, strconv.Quote(p))
	}
	return strings.Join(q, " ")
}

// CopyIncluded copies each of paths (relative to the repository's top,
// from gitsnap.Included) from the checkout's top (from) to the same place
// in the worktree's top (to): regular files only, with their permissions,
// never through a symlink out of either tree, never over a file the
// worktree already has, within the bounds. A file that cannot be copied is
// skipped and said; only a tree that cannot be opened is an error.
func CopyIncluded(from, to string, paths []string) (Copied, error) {
	var c Copied
	if len(paths) == 0 {
		return c, nil
	}
	src, err := os.OpenRoot(from)
	if err != nil {
		return c, fmt.Errorf(".worktreeinclude: open the checkout %s: %w", from, err)
	}
	defer src.Close()
	dst, err := os.OpenRoot(to)
	if err != nil {
		return c, fmt.Errorf(".worktreeinclude: open the worktree %s: %w", to, err)
	}
	defer dst.Close()
	for _, p := range paths {
		if why := c.copyOne(src, dst, p); why != "" {
			c.Skipped = append(c.Skipped, Skip{p, why})
		}
	}
	return c, nil
}

// copyOne copies p, or says why not.
func (c *Copied) copyOne(src, dst *os.Root, p string) string {
	fi, err := src.Lstat(p)
	switch {
	case err != nil:
		return err.Error()
	case !fi.Mode().IsRegular():
		return whyNotRegular
	case fi.Size() > MaxIncludeFileBytes:
		return fmt.Sprintf("%s (%d bytes)", whyTooBig, MaxIncludeFileBytes)
	case len(c.Files) >= MaxIncludeFiles || c.Bytes+fi.Size() > MaxIncludeBytes:
		return fmt.Sprintf("%s (%d files, %d bytes)", whyTooMany, MaxIncludeFiles, MaxIncludeBytes)
	}
	if _, err := dst.Lstat(p); err == nil {
		return whyExists
	} else if !errors.Is(err, fs.ErrNotExist) {
		return whyOutside
	}
	in, err := src.Open(p)
	if err != nil {
		return err.Error()
	}
	defer in.Close()
	if ofi, err := in.Stat(); err != nil || !os.SameFile(fi, ofi) {
		return whyNotRegular // changed between the look and the open
	}
	if d := path.Dir(p); d != "." {
		if err := dst.MkdirAll(d, 0o755); err != nil {
			return whyOutside
		}
	}
	out, err := dst.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm())
	if err != nil {
		return whyOutside
	}
	n, err := io.Copy(out, io.LimitReader(in, MaxIncludeFileBytes))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = dst.Remove(p)
		return "copy: " + err.Error()
	}
	c.Files = append(c.Files, p)
	c.Bytes += n
	return ""
}

// includeThereScript copies on a host what CopyIncluded copies here: its
// arguments are the two tops, the bounds and the paths; it prints one line
// per path, "N copied SIZE" or "N skip WHY" (N counts from 1), so no path
// is ever parsed back.
const includeThereScript = `from=$1 to=$2 maxf=$3 maxb=$4 maxn=$5; shift 5; i=0 n=0 tot=0
for p do i=$((i+1)) s=$from/$p d=$to/$p
if [ -L "$s" ] || [ ! -f "$s" ]; then echo "$i skip notregular"; continue; fi
sz=$(wc -c < "$s" | tr -d ' ') || { echo "$i skip unreadable"; continue; }
if [ "$sz" -gt "$maxf" ]; then echo "$i skip toobig"; continue; fi
if [ "$n" -ge "$maxn" ] || [ $((tot+sz)) -gt "$maxb" ]; then echo "$i skip toomany"; continue; fi
q=$to rest=$p bad=
while :; do case $rest in */*) c=${rest%%/*} rest=${rest#*/};; *) break;; esac
q=$q/$c; if [ -L "$q" ] || { [ -e "$q" ] && [ ! -d "$q" ]; }; then bad=1; break; fi; done
if [ -n "$bad" ]; then echo "$i skip outside"; continue; fi
if [ -e "$d" ] || [ -L "$d" ]; then echo "$i skip exists"; continue; fi
mkdir -p "${d%/*}" && cp -p "$s" "$d" || { echo "$i skip cpfailed"; continue; }
n=$((n+1)) tot=$((tot+sz)); echo "$i copied $sz"; done`

// CopyIncludedThere is CopyIncluded for a worktree on a host: one sh
// script, the paths as its arguments, run there.
func CopyIncludedThere(ctx context.Context, c Conn, from, to string, paths []string) (Copied, error) {
	cp, err := copyThere(ctx, c.Run, from, to, paths)
	if err != nil {
		err = fmt.Errorf(".worktreeinclude: copy on %s: %w", c.Host().Name, err)
	}
	return cp, err
}

// copyThere is CopyIncludedThere with run running an argv there.
func copyThere(ctx context.Context, run func(context.Context, ...string) (string, error), from, to string, paths []string) (Copied, error) {
	var cp Copied
	if len(paths) == 0 {
		return cp, nil
	}
	argv := append([]string{"sh", "-c", includeThereScript, "sh", from, to,
		strconv.FormatInt(MaxIncludeFileBytes, 10), strconv.FormatInt(MaxIncludeBytes, 10), strconv.Itoa(MaxIncludeFiles)}, paths...)
	out, err := run(ctx, argv...)
	if err != nil {
		return cp, err
	}
	whys := map[string]string{"notregular": whyNotRegular, "exists": whyExists, "toobig": whyTooBig,
		"toomany": whyTooMany, "outside": whyOutside, "unreadable": "cannot be read", "cpfailed": "cp failed"}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			continue
		}
		i, err := strconv.Atoi(f[0])
		if err != nil || i < 1 || i > len(paths) {
			continue
		}
		if f[1] == "copied" {
			n, _ := strconv.ParseInt(f[2], 10, 64)
			cp.Files, cp.Bytes = append(cp.Files, paths[i-1]), cp.Bytes+n
			continue
		}
		cp.Skipped = append(cp.Skipped, Skip{paths[i-1], whys[f[2]]})
	}
	return cp, nil
}
