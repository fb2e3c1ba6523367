package open

import (
	"os"
	"testing"

	"github.com/runner-cli/runner/internal/importcheck"
	"github.com/runner-cli/runner/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// TestImports: open makes the Env from the config, the state, the hosts
// and tmux; it starts nothing and knows no command.
func TestImports(t *testing.T) {
	importcheck.Only(t, ".", "runner", "runner/config", "runner/hosts", "runner/profile", "runner/push", "runner/sandbox", "runner/settings", "state", "tmuxctl")
}
