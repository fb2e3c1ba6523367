package filelock

import (
	"testing"

	"github.com/runner-cli/runner/internal/importcheck"
)

// TestOneFlock: no code of the module but this package takes a flock
// (importcheck.OneFlock; TestOneFlockCatches proves it): the project
// lock polled a raw flock beside it (issue 55).
func TestOneFlock(t *testing.T) {
	if n := importcheck.OneFlock(t, "../..", "internal/filelock"); n < 100 {
		t.Fatalf("only %d files checked: not the module's root?", n)
	}
}
