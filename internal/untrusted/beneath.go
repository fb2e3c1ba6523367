package untrusted

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrOutside is wrapped when a path leaves the folder it must stay in:
// it names a place outside it ("..", another absolute path) or passes
// through a symbolic link on the way.
var ErrOutside = errors.New("outside the folder it must stay in")

// ErrTooLarge is wrapped when a file holds more than the reader takes.
var ErrTooLarge = errors.New("too large")

// OpenBeneath opens name (relative to root, or absolute and inside it)
// for reading by the package's rules, and only when it lies inside root
// as the folders really are: root is resolved once, and then every
// folder from "/" down and the file itself are opened one by one without
// following a link (openat with O_NOFOLLOW), so no link in the path,
// and none swapped in while it is opened, leads anywhere else.
func OpenBeneath(root, name string) (*os.File, error) {
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, fmt.Errorf("open %s: its folder %s: %w", name, root, err)
	}
	rel := name
	if filepath.IsAbs(name) {
		if rel, err = filepath.Rel(root, filepath.Clean(name)); err != nil || !local(rel) {
			// Named by its real folder instead?
			if rel, err = filepath.Rel(real, filepath.Clean(name)); err != nil || !local(rel) {
				return nil, fmt.Errorf("open %s: %w %s", name, ErrOutside, root)
			}
		}
	}
	rel = filepath.Clean(rel)
	if !local(rel) || rel == "." {
		return nil, fmt.Errorf("open %s: %w %s", name, ErrOutside, root)
	}
	parts := strings.Split(strings.TrimPrefix(real, "/"), "/")
	if real == "/" {
		parts = nil
	}
	parts = append(parts, strings.Split(rel, "/")...)
	fd, err := unix.Open("/", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open /: %w", err)
	}
	for i, p := range parts {
		last := i == len(parts)-1
		flags := unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_CLOEXEC
		if last {
			flags |= unix.O_NONBLOCK
		} else {
			flags |= unix.O_DIRECTORY
		}
		next, err := unix.Openat(fd, p, flags, 0)
		unix.Close(fd)
		if err != nil {
			switch {
			case errors.Is(err, unix.ELOOP), !last && errors.Is(err, unix.ENOTDIR):
				return nil, fmt.Errorf("open %s: %w %s (%s is a symbolic link or not a folder)", name, ErrOutside, root, "/"+strings.Join(parts[:i+1], "/"))
			case errors.Is(err, unix.ENXIO):
				return nil, fmt.Errorf("open %s: %w: a FIFO or a socket", name, ErrNotRegular)
			}
			return nil, fmt.Errorf("open %s: %w", name, &os.PathError{Op: "open", Path: "/" + strings.Join(parts[:i+1], "/"), Err: err})
		}
		fd = next
	}
	f := os.NewFile(uintptr(fd), filepath.Join(real, rel))
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("open %s: %w (%s)", name, ErrNotRegular, fi.Mode().Type())
	}
	return f, nil
}

// ReadBeneath reads name inside root (OpenBeneath), at most max bytes:
// a larger file is an error wrapping ErrTooLarge.
func ReadBeneath(root, name string, max int64) ([]byte, error) {
	f, err := OpenBeneath(root, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("read %s: %w: over %d bytes", name, ErrTooLarge, max)
	}
	return b, nil
}

// local reports whether rel (clean) stays below its folder.
func local(rel string) bool {
	return rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}
