package profile

import (
	"testing"

	"github.com/runner-cli/runner/internal/importcheck"
)

// TestProfileImportsOnlyLeaves keeps the package doc true: profile talks
// to no tmux and runs nothing; it imports no package of the module but
// these leaves.
func TestProfileImportsOnlyLeaves(t *testing.T) {
	importcheck.Only(t, ".", "internal/textutil", "internal/transport", "internal/untrusted", "runner/exit")
}
