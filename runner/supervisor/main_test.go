package supervisor

import (
	"os"
	"testing"

	"github.com/runner-cli/runner/internal/importcheck"
	"github.com/runner-cli/runner/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// TestImports holds the package to what its doc says it uses: the monitor, the profile, spend, the pane (tmuxctl), the state.
func TestImports(t *testing.T) {
	importcheck.Only(t, ".", "internal/ctxtime", "internal/procinfo", "internal/textutil", "internal/untrusted", "runner/fault", "runner/monitor", "runner/profile", "runner/spend", "state", "tmuxctl")
}
