package send

import (
	"os"
	"testing"

	"github.com/runner-cli/runner/internal/importcheck"
	"github.com/runner-cli/runner/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// TestImports holds the package to its doc: the outbox (state, push), the
// targets (runner/config), the clock.
func TestImports(t *testing.T) {
	importcheck.Only(t, ".", "internal/clock", "runner/config", "runner/push", "state")
}
