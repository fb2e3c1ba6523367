package subproc

import (
	"testing"

	"github.com/runner-cli/runner/internal/importcheck"
)

// TestOneSubprocessHelper: no code of the module but this package starts
// a process or ends a process group (importcheck.OneSubprocess, whose
// TestOneSubprocessCatches proves it): one recipe, one place.
func TestOneSubprocessHelper(t *testing.T) {
	if n := importcheck.OneSubprocess(t, "../..", "internal/subproc"); n < 100 {
		t.Fatalf("only %d files checked: not the module's root?", n)
	}
}

// TestImports holds the package to its doc: nothing of the module but
// internal/textutil (which imports only the standard library).
func TestImports(t *testing.T) {
	importcheck.Only(t, ".", "internal/textutil")
}
