package sandbox

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// bwrap binds by name, following every link in a name, and it is started
// by the tmux server, so no descriptor of a place runner checked can be
// handed to it: between runner's check of a path (confine.CheckPlace) and
// bwrap's bind, an agent that can change a part of the path (a child's
// folder lies in its parent's) could have another place bound. So a
// sandbox whose paths an agent can change starts runner first, inside it
// (runner sandbox-exec): it looks at what was really bound (VerifyInside)
// before it runs the agent, and refuses to run it when a writable bind is
// not the place runner checked.

// Expected is a writable bind as runner checked it: the path the agent
// sees and the device and inode of what must be bound there.
type Expected struct {
	Path     string
	Dev, Ino uint64
}

// String is the form of ParseExpected: DEV:INO:PATH.
func (e Expected) String() string { return fmt.Sprintf("%d:%d:%s", e.Dev, e.Ino, e.Path) }

// ParseExpected reads DEV:INO:PATH.
func ParseExpected(s string) (Expected, error) {
	parts := strings.SplitN(s, ":", 3)
	if len(parts) != 3 || !strings.HasPrefix(parts[2], "/") {
		return Expected{}, fmt.Errorf("expected bind %q: want DEV:INO:/PATH", s)
	}
	dev, err1 := strconv.ParseUint(parts[0], 10, 64)
	ino, err2 := strconv.ParseUint(parts[1], 10, 64)
	if err1 != nil || err2 != nil {
		return Expected{}, fmt.Errorf("expected bind %q: want DEV:INO:/PATH", s)
	}
	return Expected{Path: parts[2], Dev: dev, Ino: ino}, nil
}

// StatID returns the device and inode of what path names (links
// followed).
func StatID(path string) (dev, ino uint64, err error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, 0, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, fmt.Errorf("stat %s: no device and inode on this system", path)
	}
	return uint64(st.Dev), uint64(st.Ino), nil
}

// Expect returns what each of spec's writable binds (Writable, Pinned,
// Open, and Binds by their copies) must show inside, as they are now:
// call it right after the places were checked. Paths that do not exist
// are left out (bwrap's --bind-try binds nothing there).
func Expect(spec Spec) ([]Expected, error) {
	type bind struct{ src, dst string }
	var binds []bind
	for _, p := range slices.Concat(spec.Writable, spec.Pinned, spec.Open) {
		binds = append(binds, bind{p, p})
	}
	for _, b := range spec.Binds {
		binds = append(binds, bind{b[0], b[1]})
	}
	var out []Expected
	for _, b := range binds {
		dev, ino, err := StatID(b.src)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
		out = append(out, Expected{Path: b.dst, Dev: dev, Ino: ino})
	}
	return out, nil
}

// virtualFS are the file systems a sandbox mounts writable of its own
// (its /tmp, /dev, the hidden folders' empty file systems): no place of
// the machine's.
var virtualFS = []string{"tmpfs", "proc", "devpts", "mqueue", "sysfs", "devtmpfs", "cgroup", "cgroup2"}

// VerifyInside checks, inside the sandbox, that each expected bind shows
// the device and inode runner checked (stat, links followed) and that
// every writable mount of a real file system (mountinfo: the mount table,
// SelfMounts) is one of them: a bind that followed a link
// swapped in after runner's check lands elsewhere, and is refused.
func VerifyInside(expect []Expected, mountinfo []byte, stat func(string) (dev, ino uint64, err error)) error {
	want := map[string]bool{}
	for _, e := range expect {
		dev, ino, err := stat(e.Path)
		if err != nil {
			return fmt.Errorf("sandbox: %s is not bound as runner checked it: %w", e.Path, err)
		}
		if dev != e.Dev || ino != e.Ino {
			return fmt.Errorf("sandbox: %s is not the place runner checked (device %d inode %d, want %d %d): was a part of its path swapped for a link?", e.Path, dev, ino, e.Dev, e.Ino)
		}
		want[e.Path] = true
	}
	sc := bufio.NewScanner(bytes.NewReader(mountinfo))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		m, ok := parseMountLine(sc.Text())
		if !ok || !m.rw || slices.Contains(virtualFS, m.fstype) {
			continue
		}
		if slices.ContainsFunc(kernelMounts, func(k string) bool { return Within(m.point, k) }) {
			continue
		}
		if !want[m.point] {
			return fmt.Errorf("sandbox: %s is mounted writable, and runner did not check it (was a part of a bound path swapped for a link?)", m.point)
		}
	}
	return sc.Err()
}

type mountLine struct {
	point, fstype string
	rw            bool
}

// parseMountLine reads one line of /proc/self/mountinfo: ID PARENT
// MAJ:MIN ROOT POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTS.
func parseMountLine(l string) (mountLine, bool) {
	f := strings.Fields(l)
	sep := slices.Index(f, "-")
	if len(f) < 6 || sep < 6 || sep+1 >= len(f) {
		return mountLine{}, false
	}
	return mountLine{point: unescapeMount(f[4]), fstype: f[sep+1], rw: slices.Contains(strings.Split(f[5], ","), "rw")}, true
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
