package hosts

import (
	"os"
	"testing"

	"github.com/runner-cli/runner/internal/importcheck"
	"github.com/runner-cli/runner/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// TestImports holds the package to what its doc says it uses: ssh (internal/transport), tmuxctl, the state and the sandbox's argv.
func TestImports(t *testing.T) {
	importcheck.Only(t, ".", "gitsnap", "internal/textutil", "internal/transport", "runner/fault", "runner/sandbox", "state", "tmuxctl")
}
