package watch

import (
	"testing"

	"github.com/runner-cli/runner/internal/importcheck"
)

// TestTakesDepsNotEnv keeps the package doc true: what it uses comes in
// Deps, not through package runner.
func TestTakesDepsNotEnv(t *testing.T) {
	importcheck.None(t, ".", importcheck.Module+"runner")
}
