package monitor

import (
	"os"
	"testing"

	"github.com/runner-cli/runner/internal/importcheck"
	"github.com/runner-cli/runner/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// TestImports holds the package to what its doc says it uses: the profile (a screen in, a state out), spend and the process tree.
func TestImports(t *testing.T) {
	importcheck.Only(t, ".", "internal/untrusted", "runner/proctree", "runner/profile", "runner/spend", "tmuxctl")
}
