package spend

import (
	"testing"

	"github.com/runner-cli/runner/internal/importcheck"
)

// TestSpendImports keeps the package doc true: spend reads files through
// internal/tailfile, runs nothing and talks to no tmux.
func TestSpendImports(t *testing.T) {
	importcheck.Only(t, ".", "runner/profile", "internal/tailfile", "internal/textutil")
}
