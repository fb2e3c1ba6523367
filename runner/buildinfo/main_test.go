package buildinfo

import (
	"os"
	"testing"

	"github.com/runner-cli/runner/internal/importcheck"
	"github.com/runner-cli/runner/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// TestImports: the build info and the stamp only.
func TestImports(t *testing.T) {
	importcheck.Only(t, ".")
}
