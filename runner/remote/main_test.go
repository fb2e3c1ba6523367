package remote

import (
	"os"
	"testing"

	"github.com/runner-cli/runner/internal/importcheck"
	"github.com/runner-cli/runner/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// TestImports holds the package to what its doc says it uses: the hosts, ssh, the profiles and the sandbox's argv.
func TestImports(t *testing.T) {
	importcheck.Only(t, ".", "internal/textutil", "internal/transport", "gitsnap", "runner/doctor", "runner/door", "runner/fault", "runner/hosts", "runner/profile", "runner/projects", "runner/sandbox", "state", "tmuxctl")
}
