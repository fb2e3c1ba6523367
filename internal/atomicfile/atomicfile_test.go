package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "sub", "f.json")
	for _, sync := range []bool{true, false} {
		for _, data := range []string{"first", "second, longer than the first"} {
			if err := Write(p, []byte(data), 0o600, sync); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(p)
			if err != nil || string(b) != data {
				t.Fatalf("read %q, %v; want %q", b, err, data)
			}
		}
	}
	fi, err := os.Stat(p)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, %v; want 0600", fi.Mode(), err)
	}
	if ents, _ := os.ReadDir(filepath.Dir(p)); len(ents) != 1 {
		t.Errorf("%d entries beside the file, want none (temporary files left)", len(ents)-1)
	}
}

func TestWriteFailsLeavingNothing(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "target")
	if err := os.Mkdir(p, 0o700); err != nil { // a directory cannot be renamed over
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p, "keep"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(p, []byte("x"), 0o600, true); err == nil {
		t.Fatal("Write over a non-empty directory succeeded")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d entries, want only the directory (a temporary file left)", len(ents))
	}
}
