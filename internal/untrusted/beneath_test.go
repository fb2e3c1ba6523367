package untrusted

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestReadBeneath: a file inside the folder is read, by a relative or an
// absolute name; a name that leaves it, a link anywhere on the way (a
// folder or the file), a FIFO and a file over the bound are refused, and
// none of them blocks.
func TestReadBeneath(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "task")
	secret := filepath.Join(base, "secret")
	os.MkdirAll(filepath.Join(root, "sub"), 0o755)
	os.MkdirAll(secret, 0o700)
	os.WriteFile(filepath.Join(secret, "state.json"), []byte("hidden"), 0o600)
	os.WriteFile(filepath.Join(root, "sub", "task.md"), []byte("the task"), 0o600)
	os.WriteFile(filepath.Join(root, "big"), make([]byte, 100), 0o600)
	os.Symlink(secret, filepath.Join(root, "lnk"))
	os.Symlink(filepath.Join(secret, "state.json"), filepath.Join(root, "file-link"))
	syscall.Mkfifo(filepath.Join(root, "fifo"), 0o600)
	// root named through a link of the user's: allowed (resolved once).
	os.Symlink(root, filepath.Join(base, "root-link"))

	for _, name := range []string{"sub/task.md", filepath.Join(root, "sub/task.md"), "./sub/../sub/task.md"} {
		b, err := ReadBeneath(root, name, 1<<10)
		if err != nil || string(b) != "the task" {
			t.Errorf("ReadBeneath(%s) = %q, %v", name, b, err)
		}
	}
	if b, err := ReadBeneath(filepath.Join(base, "root-link"), "sub/task.md", 1<<10); err != nil || string(b) != "the task" {
		t.Errorf("through the root's own link: %q, %v", b, err)
	}
	for name, want := range map[string]error{
		"../secret/state.json":                   ErrOutside,
		filepath.Join(secret, "state.json"):      ErrOutside,
		"lnk/state.json":                         ErrOutside,
		filepath.Join(root, "lnk", "state.json"): ErrOutside,
		"file-link":                              ErrOutside,
		"fifo":                                   ErrNotRegular,
		"sub":                                    ErrNotRegular,
		"big":                                    ErrTooLarge,
		".":                                      ErrOutside,
	} {
		done := make(chan error, 1)
		go func() {
			_, err := ReadBeneath(root, name, 50)
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, want) {
				t.Errorf("ReadBeneath(%s): %v, want %v", name, err, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("ReadBeneath(%s) blocked", name)
		}
	}
}
