package budget

import (
	"testing"

	"github.com/runner-cli/runner/internal/importcheck"
)

// TestImports keeps the package doc true: the rules read the state they
// are given; no tmux, no store, no process.
func TestImports(t *testing.T) {
	importcheck.Only(t, ".", "runner/settings", "runner/profile", "runner/fault", "state")
}
