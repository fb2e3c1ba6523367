package snapshots

import (
	"os"
	"testing"

	"github.com/runner-cli/runner/internal/importcheck"
	"github.com/runner-cli/runner/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// TestImports holds the package to what its doc says: gitsnap's answers
// in, words out (the shell quoting of the commands it suggests).
func TestImports(t *testing.T) {
	importcheck.Only(t, ".", "gitsnap", "internal/transport", "runner/fault")
}
