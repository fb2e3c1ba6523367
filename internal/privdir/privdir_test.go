package privdir

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

func TestDirIn(t *testing.T) {
	uid := strconv.Itoa(os.Getuid())
	t.Run("made private in a shared base", func(t *testing.T) {
		base := t.TempDir()
		d, err := dirIn(base, false, "tmux", "abc")
		if err != nil {
			t.Fatal(err)
		}
		if want := filepath.Join(base, "runner-tmux-"+uid, "abc"); d != want {
			t.Fatalf("dir %s, want %s", d, want)
		}
		for _, p := range []string{filepath.Dir(d), d} {
			fi, err := os.Stat(p)
			if err != nil || fi.Mode().Perm() != 0o700 {
				t.Fatalf("%s: %v %v, want mode 0700", p, fi.Mode(), err)
			}
		}
		if again, err := dirIn(base, false, "tmux", "abc"); err != nil || again != d {
			t.Fatalf("second call: %s %v", again, err)
		}
	})
	t.Run("runtime dir names carry no uid", func(t *testing.T) {
		base := t.TempDir()
		d, err := dirIn(base, true, "start")
		if err != nil || d != filepath.Join(base, "runner-start") {
			t.Fatalf("%s %v", d, err)
		}
	})
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, at string)
	}{
		{"a directory others may enter", func(t *testing.T, at string) {
			if err := os.Mkdir(at, 0o755); err != nil {
				t.Fatal(err)
			}
			os.Chmod(at, 0o755) // past the umask
		}},
		{"a world-writable directory", func(t *testing.T, at string) {
			os.Mkdir(at, 0o777)
			os.Chmod(at, 0o1777)
		}},
		{"a symlink to a private directory", func(t *testing.T, at string) {
			if err := os.Symlink(t.TempDir(), at); err != nil {
				t.Fatal(err)
			}
		}},
		{"a file", func(t *testing.T, at string) {
			if err := os.WriteFile(at, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"another user's directory", func(t *testing.T, at string) {
			if os.Getuid() != 0 {
				t.Skip("needs root to give a directory to another user")
			}
			if err := os.Mkdir(at, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(at, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run("refuses "+tc.name, func(t *testing.T) {
			base := t.TempDir()
			tc.plant(t, filepath.Join(base, "runner-tmux-"+uid))
			d, err := dirIn(base, false, "tmux", "abc")
			if err == nil {
				t.Fatalf("accepted %s as %s", tc.name, d)
			}
			if !errors.Is(err, ErrNotPrivate) {
				t.Fatalf("error %v does not wrap ErrNotPrivate", err)
			}
			if _, err := os.Lstat(filepath.Join(base, "runner-tmux-"+uid, "abc")); err == nil {
				t.Fatal("made a directory inside the planted one")
			}
		})
	}
}

func TestBase(t *testing.T) {
	private := t.TempDir()
	os.Chmod(private, 0o700)
	open := t.TempDir()
	os.Chmod(open, 0o755)
	for _, tc := range []struct {
		xdg     string
		runtime bool
	}{
		{private, true},
		{open, false},
		{"relative/dir", false},
		{"", false},
		{filepath.Join(private, "missing"), false},
	} {
		base, runtime := Base(func(k string) string {
			if k == "XDG_RUNTIME_DIR" {
				return tc.xdg
			}
			return ""
		})
		if runtime != tc.runtime || (runtime && base != tc.xdg) || (!runtime && base != os.TempDir()) {
			t.Errorf("XDG_RUNTIME_DIR=%q: base %s runtime %v", tc.xdg, base, runtime)
		}
	}
}

// TestDirMadeAgain: a directory Dir returned, removed meanwhile (a cleaner
// of /tmp under a process that lives for weeks), is made and checked again
// by the next Dir, not returned from memory as it was.
func TestDirMadeAgain(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", "")
	t.Setenv("TMPDIR", t.TempDir())
	d, err := Dir("again", "sub")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Dir(d)); err != nil {
		t.Fatal(err)
	}
	d2, err := Dir("again", "sub")
	if err != nil || d2 != d {
		t.Fatalf("Dir after removal: %q, %v; want %q made again", d2, err, d)
	}
	if err := Check(d2); err != nil {
		t.Fatalf("not made again: %v", err)
	}
}
