package config

import (
	"testing"

	"github.com/runner-cli/runner/internal/importcheck"
)

// TestConfigIsALeaf keeps config a leaf of the domain: it reads the file
// and the types it decodes into, and imports no monitor, supervisor or
// operation.
func TestConfigIsALeaf(t *testing.T) {
	importcheck.Only(t, ".", "internal/portprobe", "internal/textutil", "runner/fault", "runner/messaging", "runner/profile", "state")
}
