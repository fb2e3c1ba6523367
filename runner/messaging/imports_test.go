package messaging

import (
	"testing"

	"github.com/runner-cli/runner/internal/importcheck"
)

// TestMessagingImportsOnlyLeaves keeps the package doc true: no tmux, no
// process table; only the state's types, exit and textutil.
func TestMessagingImportsOnlyLeaves(t *testing.T) {
	importcheck.Only(t, ".", "state", "runner/fault", "internal/textutil")
}
