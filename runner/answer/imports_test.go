package answer

import (
	"testing"

	"github.com/runner-cli/runner/internal/importcheck"
)

// TestImports holds the package to what its doc says it imports: the dialog read off the screen (runner/dialog, runner/profile), the task's record (state), the kinds of error (runner/fault) and text helpers.
func TestImports(t *testing.T) {
	importcheck.Only(t, ".", "internal/textutil", "runner/dialog", "runner/fault", "runner/profile", "state")
}
