package mailbox

import (
	"testing"

	"github.com/runner-cli/runner/internal/importcheck"
)

// TestTakesDepsNotEnv keeps the package doc true: what it uses comes in
// Deps, not through package runner.
func TestTakesDepsNotEnv(t *testing.T) {
	importcheck.None(t, ".", importcheck.Module+"runner")
}

// TestImports holds the package to the imports its doc names.
func TestImports(t *testing.T) {
	importcheck.Only(t, ".", "internal/textutil", "runner/fault", "runner/messaging", "runner/projects", "runner/reconcile", "state", "tmuxctl")
}
