package cmdkit

import (
	"os"
	"testing"

	"github.com/runner-cli/runner/internal/importcheck"
	"github.com/runner-cli/runner/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// TestImports holds the package to what its doc says: what a command
// opens (config, state, the runner environment, tmux), the door's rule
// for a confined --file, the kinds of error.
func TestImports(t *testing.T) {
	importcheck.Only(t, ".", "runner", "runner/config", "runner/door", "runner/fault", "state", "tmuxctl")
}
