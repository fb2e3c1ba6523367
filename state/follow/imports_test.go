package follow

import (
	"testing"

	"github.com/runner-cli/runner/internal/importcheck"
)

// TestImports keeps the package doc true: the state's stream and the
// module's small file helpers, nothing of runner/.
func TestImports(t *testing.T) {
	importcheck.Only(t, ".", "state", "internal/atomicfile", "internal/filelock", "internal/untrusted")
}
