package procinfo

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"testing"
)

// TestReadProc: readProc reads what os.ReadFile reads, a file past its
// first buffer too, and fails as it does on a file that is not there.
func TestReadProc(t *testing.T) {
	for _, p := range []string{"/proc/self/environ", "/proc/self/maps", "/proc/sys/kernel/random/boot_id", "/proc/1/cmdline"} {
		want, werr := os.ReadFile(p)
		got, err := readProc(p)
		if (err != nil) != (werr != nil) {
			t.Fatalf("%s: error %v, os.ReadFile's %v", p, err, werr)
		}
		if p == "/proc/self/maps" {
			// Its own mappings differ a little between two reads; the
			// length shows a file past readProc's first buffer was read whole.
			if len(got) < 1024 || !bytes.HasSuffix(got, []byte("\n")) {
				t.Errorf("%s: %d bytes, want more than a buffer, whole", p, len(got))
			}
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: %q, want %q", p, got, want)
		}
	}
	_, err := readProc("/proc/self/no-such-file")
	var pe *os.PathError
	if !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) || pe.Op != "open" {
		t.Errorf("a missing file: %v, want an *os.PathError of open wrapping fs.ErrNotExist", err)
	}
}
