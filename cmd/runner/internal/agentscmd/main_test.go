package agentscmd

import (
	"os"
	"testing"

	"github.com/runner-cli/runner/internal/importcheck"
	"github.com/runner-cli/runner/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// TestImports holds the package to what its doc says.
func TestImports(t *testing.T) {
	importcheck.Only(t, ".", "cmd/runner/internal/cmdkit", "runner", "runner/config", "runner/doctor", "runner/explain",
		"runner/fault", "runner/profile", "state")
}
