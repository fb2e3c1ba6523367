package explain

import (
	"os"
	"testing"

	"github.com/runner-cli/runner/internal/importcheck"
	"github.com/runner-cli/runner/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// TestImports holds the package to what its doc says it uses: the
// profiles, the hook events, the state's types and tmux's pane facts
// (through Panes, never a tmux call of its own).
func TestImports(t *testing.T) {
	importcheck.Only(t, ".", "internal/tailfile", "internal/textutil", "runner/fault", "runner/profile", "runner/spend", "state", "tmuxctl")
}
