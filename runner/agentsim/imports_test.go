package agentsim

import (
	"testing"

	"github.com/runner-cli/runner/internal/importcheck"
)

// TestImports holds the package to what its doc says it imports: internal/ctxtime and internal/textutil (internal/clock and internal/subproc, allowed everywhere), nothing of runner.
func TestImports(t *testing.T) {
	importcheck.Only(t, ".", "internal/ctxtime", "internal/textutil")
}
