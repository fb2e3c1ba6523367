package doctor

import (
	"os"
	"testing"

	"github.com/runner-cli/runner/internal/importcheck"
	"github.com/runner-cli/runner/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// TestImports holds the package to what its doc says it uses: the checks it runs: gitsnap, tmuxctl, the sandbox, the profiles, the config and the push targets' health.
func TestImports(t *testing.T) {
	importcheck.Only(t, ".", "gitsnap", "internal/atomicfile", "internal/textutil", "runner/config", "runner/profile", "runner/push", "runner/sandbox", "tmuxctl")
}
