package untrusted

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	reg := filepath.Join(dir, "t.jsonl")
	os.WriteFile(reg, []byte("{}\n"), 0o600)
	if f, err := Open(reg); err != nil {
		t.Fatal(err)
	} else {
		f.Close()
	}
	link := filepath.Join(dir, "link")
	os.Symlink(reg, link)
	fifo := filepath.Join(dir, "fifo")
	syscall.Mkfifo(fifo, 0o600)
	for _, p := range []string{link, fifo, dir, "/dev/zero"} {
		done := make(chan error, 1)
		go func() {
			f, err := Open(p)
			if err == nil {
				f.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, ErrNotRegular) {
				t.Errorf("Open(%s): %v, want ErrNotRegular", p, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("Open(%s) blocked", p)
		}
	}
}

func TestName(t *testing.T) {
	for s, want := range map[string]bool{
		"3f2a-11": true, "session_1.2": true, "..": false, "a/../b": false, "../x": false, "a/b": false, "": false,
		"a..b": false, ".hidden": false, "x\n": false,
	} {
		if got := Name(s); got != want {
			t.Errorf("Name(%q) = %v", s, got)
		}
	}
}
