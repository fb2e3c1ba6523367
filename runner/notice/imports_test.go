package notice

import (
	"testing"

	"github.com/runner-cli/runner/internal/importcheck"
)

// TestImports holds the package to what its doc says it imports: files only: internal/atomicfile, internal/filelock and internal/untrusted, nothing of runner or state.
func TestImports(t *testing.T) {
	importcheck.Only(t, ".", "internal/atomicfile", "internal/filelock", "internal/untrusted")
}
