package push

import (
	"testing"

	"github.com/runner-cli/runner/internal/importcheck"
)

// TestImports holds the package to what its doc says it imports: the config (runner/config), the dialog a push names (runner/dialog, runner/profile), state's push outbox and text helpers; no HTTP client (package send has it).
func TestImports(t *testing.T) {
	importcheck.Only(t, ".", "internal/textutil", "runner/config", "runner/dialog", "runner/profile", "state")
}
