package tailfile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/testenv"
	"github.com/runner-cli/runner/internal/untrusted"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

func write(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f.jsonl")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestBytes(t *testing.T) {
	p := write(t, "0123456789")
	for n, want := range map[int64]string{4: "6789", 10: "0123456789", 64: "0123456789"} {
		if got, err := Bytes(p, n); err != nil || string(got) != want {
			t.Errorf("Bytes(%d) = %q, %v; want %q", n, got, err, want)
		}
	}
	if _, err := Bytes(filepath.Join(t.TempDir(), "none"), 4); err == nil {
		t.Error("no error for a missing file")
	}
}

func TestLines(t *testing.T) {
	p := write(t, "first line\nsecond\r\n\nlast, being writ")
	type got struct {
		text       string
		off        int64
		cut, whole bool
	}
	read := func(n int64) (out []got) {
		err := Lines(p, n, func(l Line) bool {
			out = append(out, got{string(l.Text), l.Off, l.Cut, l.Whole})
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	whole := read(1 << 20)
	want := []got{{"first line", 0, false, true}, {"second", 11, false, true}, {"", 19, false, true}, {"last, being writ", 20, false, false}}
	if len(whole) != len(want) {
		t.Fatalf("lines %+v, want %+v", whole, want)
	}
	for i := range want {
		if whole[i] != want[i] {
			t.Errorf("line %d: %+v, want %+v", i, whole[i], want[i])
		}
	}
	// The last 30 bytes: the first line is cut.
	tail := read(30)
	if len(tail) != 4 || tail[0] != (got{"line", 6, true, true}) || tail[1] != want[1] {
		t.Errorf("the last 30 bytes: %+v", tail)
	}
	// yield's false stops the reading.
	n := 0
	_ = Lines(p, 1<<20, func(Line) bool { n++; return n < 2 })
	if n != 2 {
		t.Errorf("%d lines read after yield said stop", n)
	}
}

// TestUntrusted: a link, a FIFO, a directory are refused at once.
func TestUntrusted(t *testing.T) {
	dir := t.TempDir()
	reg := write(t, "x\n")
	link := filepath.Join(dir, "link")
	if err := os.Symlink(reg, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{link, fifo, dir} {
		done := make(chan error, 1)
		go func() {
			_, err := Bytes(p, 10)
			if err == nil {
				err = Lines(p, 10, func(Line) bool { return true })
			}
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, untrusted.ErrNotRegular) {
				t.Errorf("%s: %v, want ErrNotRegular", p, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: blocked", p)
		}
	}
}
