package serve

import (
	"testing"

	"github.com/runner-cli/runner/internal/importcheck"
)

// TestImports holds the package to what its doc says it imports: state (tokens, the events' cursor), state/follow (the event stream) and text helpers; everything else it does by running runner.
func TestImports(t *testing.T) {
	importcheck.Only(t, ".", "internal/textutil", "state", "state/follow")
}
