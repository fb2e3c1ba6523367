package record

import (
	"os"
	"testing"

	"github.com/runner-cli/runner/internal/importcheck"
	"github.com/runner-cli/runner/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// TestImports holds the package to what its doc says it uses: the state and the queue's rules.
func TestImports(t *testing.T) {
	importcheck.Only(t, ".", "runner/fault", "runner/messaging", "state")
}
