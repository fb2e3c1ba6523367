package extcmd

import (
	"os"
	"testing"

	"github.com/runner-cli/runner/internal/importcheck"
	"github.com/runner-cli/runner/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// TestImports holds the package to its doc: the commands that link the
// big libraries (serve, mcpserver, watch, the push sender), over cmdkit's
// factory and the exit table of the edge.
func TestImports(t *testing.T) {
	importcheck.Only(t, ".", "cmd/runner/exitcode", "cmd/runner/internal/cmdkit", "internal/clock", "internal/textutil",
		"runner", "runner/config", "runner/door", "runner/fault", "runner/mcpserver", "runner/open", "runner/projects",
		"runner/push/send", "runner/serve", "runner/tasks", "runner/watch", "state", "tmuxctl")
}
