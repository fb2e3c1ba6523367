package fault

import (
	"os"
	"testing"

	"github.com/runner-cli/runner/internal/importcheck"
	"github.com/runner-cli/runner/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// TestImports holds the package to what its doc says: it imports nothing
// of the module, so every package can return its kinds.
func TestImports(t *testing.T) {
	importcheck.Only(t, ".")
}
