package sandbox

import (
	"errors"
	"strings"
	"testing"
)

// TestVerifyInside: what a sandbox shows is accepted only when every
// expected bind has the device and inode runner checked and no other
// place of a real file system is mounted writable; the sandbox's own
// file systems (tmpfs, proc, devpts) and read-only mounts do not count.
func TestVerifyInside(t *testing.T) {
	const base = `22 1 0:20 / / ro,nosuid - ext4 /dev/sda1 rw
23 22 0:21 / /dev rw,nosuid - tmpfs tmpfs rw
24 23 0:22 / /dev/pts rw - devpts devpts rw
25 22 0:23 / /proc rw - proc proc rw
26 22 0:24 / /tmp rw - tmpfs tmpfs rw
27 22 0:20 /home/u/proj /home/u/proj rw,relatime - ext4 /dev/sda1 rw
28 22 0:20 /home/u/my\040dir /home/u/my\040dir rw shared:1 - ext4 /dev/sda1 rw
29 22 0:20 /etc /etc ro - ext4 /dev/sda1 rw
`
	ids := map[string][2]uint64{"/home/u/proj": {2049, 100}, "/home/u/my dir": {2049, 101}, "/home/u": {2049, 7}}
	stat := func(p string) (uint64, uint64, error) {
		id, ok := ids[p]
		if !ok {
			return 0, 0, errors.New("no such file")
		}
		return id[0], id[1], nil
	}
	good := []Expected{{"/home/u/proj", 2049, 100}, {"/home/u/my dir", 2049, 101}}
	if err := VerifyInside(good, []byte(base), stat); err != nil {
		t.Fatalf("the binds as checked: %v", err)
	}
	for name, c := range map[string]struct {
		expect []Expected
		info   string
		want   string
	}{
		"another inode at the path": {[]Expected{{"/home/u/proj", 2049, 999}, good[1]}, base, "not the place runner checked"},
		"another device":            {[]Expected{{"/home/u/proj", 1, 100}, good[1]}, base, "not the place runner checked"},
		"missing":                   {[]Expected{{"/home/u/gone", 2049, 5}}, base, "not bound as runner checked"},
		"a writable mount unchecked": {good, base + "30 22 0:20 /home/u /home/u rw - ext4 /dev/sda1 rw\n",
			"/home/u is mounted writable"},
		"one not expected at all": {good[:1], base, "/home/u/my dir is mounted writable"},
	} {
		err := VerifyInside(c.expect, []byte(c.info), stat)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}

func TestParseExpected(t *testing.T) {
	e := Expected{Path: "/a b/c:d", Dev: 2049, Ino: 12345}
	got, err := ParseExpected(e.String())
	if err != nil || got != e {
		t.Errorf("round trip: %+v, %v", got, err)
	}
	for _, bad := range []string{"", "1:2", "1:2:rel", "x:2:/a", "1:-2:/a"} {
		if _, err := ParseExpected(bad); err == nil {
			t.Errorf("ParseExpected(%q) accepted", bad)
		}
	}
}
