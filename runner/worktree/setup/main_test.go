package setup

import (
	"os"
	"testing"

	"github.com/runner-cli/runner/internal/importcheck"
	"github.com/runner-cli/runner/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// TestImports holds the package to what its doc says it uses: git (gitsnap), tmuxctl for a child's environment, the config, the hosts and their ssh transport, the state.
func TestImports(t *testing.T) {
	importcheck.Only(t, ".", "gitsnap", "internal/transport", "runner/config", "runner/hosts", "state", "tmuxctl")
}
