package importcheck

import (
	"os"
	"testing"
)

// fakeT counts the errors it is given.
type fakeT struct {
	testing.TB
	errors int
}

func (f *fakeT) Errorf(format string, args ...any) { f.errors++; f.Logf(format, args...) }
func (f *fakeT) Helper()                           {}

func writeFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}
