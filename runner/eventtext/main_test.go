package eventtext

import (
	"os"
	"testing"

	"github.com/runner-cli/runner/internal/importcheck"
	"github.com/runner-cli/runner/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// TestImports: the state's events in, text out.
func TestImports(t *testing.T) {
	importcheck.Only(t, ".", "internal/textutil", "state")
}
